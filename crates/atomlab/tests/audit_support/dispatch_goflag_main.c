/* Fixture for tests/audit_dispatch.rs: sets the flag dispatch_goflag.S
   tests, as Go's runtime sets internal/cpu.ARM64.HasATOMICS at start-up. */
#include <sys/auxv.h>
#include <stdint.h>
#ifndef HWCAP_ATOMICS
#define HWCAP_ATOMICS (1 << 8)
#endif
uint8_t has_atomics;
uint32_t counter;
uint32_t xadd(uint32_t *p, uint32_t v);
uint32_t cas(uint32_t *p, uint32_t old, uint32_t new);
int main(int argc, char **argv) {
  (void)argv;
  has_atomics = (getauxval(AT_HWCAP) & HWCAP_ATOMICS) != 0;
  xadd(&counter, 40);
  if (!cas(&counter, 40, 41)) return 1;
  return xadd(&counter, (uint32_t)argc) == 42 && counter == 42 ? 0 : 1;
}
