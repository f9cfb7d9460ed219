/* Fixture for tests/audit_dispatch.rs: an LSE instruction with no test of
   the CPU before it. SIGILL on ARMv8.0 (cortex-a53). */
#include <stdint.h>
uint32_t counter;
__attribute__((noinline)) uint32_t fetch_add(uint32_t *p, uint32_t v) {
  uint32_t old;
  __asm__ volatile(".arch_extension lse\n\tldaddal %w2, %w0, %1"
                   : "=&r"(old), "+Q"(*p) : "r"(v) : "memory");
  return old;
}
int main(int argc, char **argv) {
  (void)argv;
  fetch_add(&counter, 41);
  return fetch_add(&counter, (uint32_t)argc) == 41 && counter == 42 ? 0 : 1;
}
