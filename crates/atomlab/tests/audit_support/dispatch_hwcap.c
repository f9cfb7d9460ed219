/* Fixture for tests/audit_dispatch.rs: LSE chosen at run time by
   getauxval(AT_HWCAP), with an LL/SC fallback, as hand-written C does it.
   Built for ARMv8.0 (no -march): runs on any ARMv8 CPU. */
#include <sys/auxv.h>
#include <stdint.h>
#ifndef HWCAP_ATOMICS
#define HWCAP_ATOMICS (1 << 8)
#endif
uint32_t counter;
__attribute__((noinline)) uint32_t fetch_add(uint32_t *p, uint32_t v) {
  uint32_t old, tmp, fail;
  if (getauxval(AT_HWCAP) & HWCAP_ATOMICS) {
    __asm__ volatile(".arch_extension lse\n\tldaddal %w2, %w0, %1"
                     : "=&r"(old), "+Q"(*p) : "r"(v) : "memory");
  } else {
    __asm__ volatile("1: ldaxr %w0, %3\n\tadd %w1, %w0, %w4\n\tstlxr %w2, %w1, %3\n\tcbnz %w2, 1b"
                     : "=&r"(old), "=&r"(tmp), "=&r"(fail), "+Q"(*p) : "r"(v) : "memory");
  }
  return old;
}
int main(int argc, char **argv) {
  (void)argv;
  fetch_add(&counter, 41);
  return fetch_add(&counter, (uint32_t)argc) == 41 && counter == 42 ? 0 : 1;
}
