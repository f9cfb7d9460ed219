/* Fixture for tests/audit_dispatch.rs: an LSE instruction in a function
   that nothing calls or points to (kept by `used`), as in Debian 12's
   libatomic, whose ifunc resolvers never return its LSE variants. Built
   for ARMv8.0 (no -march) as a PIE: never run, so never SIGILL. */
#include <stdint.h>
uint32_t counter;
__attribute__((used, noinline)) static uint32_t fetch_add_lse(uint32_t *p, uint32_t v) {
  uint32_t old;
  __asm__ volatile(".arch_extension lse\n\tldaddal %w2, %w0, %1"
                   : "=&r"(old), "+Q"(*p) : "r"(v) : "memory");
  return old;
}
int main(int argc, char **argv) {
  (void)argv;
  __atomic_store_n(&counter, (uint32_t)argc + 41, __ATOMIC_RELEASE);
  return __atomic_load_n(&counter, __ATOMIC_ACQUIRE) == 42 ? 0 : 1;
}
