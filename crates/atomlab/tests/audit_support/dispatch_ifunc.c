/* Fixture for tests/audit_dispatch.rs: a GNU ifunc whose resolver picks an
   LSE or an LL/SC implementation by HWCAP_ATOMICS at load time, as
   libatomic does. Built for ARMv8.0 (no -march). */
#include <stdint.h>
#ifndef HWCAP_ATOMICS
#define HWCAP_ATOMICS (1 << 8)
#endif
uint32_t counter;
static uint32_t fetch_add_lse(uint32_t *p, uint32_t v) {
  uint32_t old;
  __asm__ volatile(".arch_extension lse\n\tldaddal %w2, %w0, %1"
                   : "=&r"(old), "+Q"(*p) : "r"(v) : "memory");
  return old;
}
static uint32_t fetch_add_llsc(uint32_t *p, uint32_t v) {
  uint32_t old, tmp, fail;
  __asm__ volatile("1: ldaxr %w0, %3\n\tadd %w1, %w0, %w4\n\tstlxr %w2, %w1, %3\n\tcbnz %w2, 1b"
                   : "=&r"(old), "=&r"(tmp), "=&r"(fail), "+Q"(*p) : "r"(v) : "memory");
  return old;
}
/* The resolver gets AT_HWCAP in x0 (glibc on aarch64). */
static void *resolve_fetch_add(uint64_t hwcap) {
  return (hwcap & HWCAP_ATOMICS) ? (void *)fetch_add_lse : (void *)fetch_add_llsc;
}
uint32_t fetch_add(uint32_t *p, uint32_t v) __attribute__((ifunc("resolve_fetch_add")));
int main(int argc, char **argv) {
  (void)argv;
  fetch_add(&counter, 41);
  return fetch_add(&counter, (uint32_t)argc) == 41 && counter == 42 ? 0 : 1;
}
