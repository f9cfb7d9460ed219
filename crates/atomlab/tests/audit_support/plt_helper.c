/* A shared library exporting an outline helper by libgcc's name, so that a
   program linked against it calls the helper through the PLT. */
#include <stdint.h>
uint32_t __aarch64_ldadd4_acq_rel(uint32_t v, uint32_t *p) {
  return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
