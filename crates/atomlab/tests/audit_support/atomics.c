/* Fixture for tests/audit_fixtures.rs: every __atomic builtin and C11 fence
   the audit classifies, one per noinline function. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdbool.h>
uint8_t  b8;  uint16_t h16; uint32_t w32; uint64_t x64; __int128 q128;
/* __sync builtins: the _sync outline helpers on aarch64. */
__attribute__((noinline)) uint32_t sync_add(uint32_t v) { return __sync_fetch_and_add(&w32, v); }
#if defined(__x86_64__) && defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16)
__attribute__((noinline)) bool cas16(__int128 e, __int128 d) { return __sync_bool_compare_and_swap(&q128, e, d); }
__attribute__((noinline)) void x86_fences(void) { __builtin_ia32_mfence(); __builtin_ia32_lfence(); __builtin_ia32_sfence(); }
#endif
__attribute__((noinline)) uint32_t add_relaxed(uint32_t v) { return __atomic_fetch_add(&w32, v, __ATOMIC_RELAXED); }
__attribute__((noinline)) uint64_t add_seq(uint64_t v) { return __atomic_fetch_add(&x64, v, __ATOMIC_SEQ_CST); }
__attribute__((noinline)) uint8_t or_acq(uint8_t v) { return __atomic_fetch_or(&b8, v, __ATOMIC_ACQUIRE); }
__attribute__((noinline)) uint16_t and_rel(uint16_t v) { return __atomic_fetch_and(&h16, v, __ATOMIC_RELEASE); }
__attribute__((noinline)) uint32_t xor_acqrel(uint32_t v) { return __atomic_fetch_xor(&w32, v, __ATOMIC_ACQ_REL); }
__attribute__((noinline)) uint64_t swap_seq(uint64_t v) { return __atomic_exchange_n(&x64, v, __ATOMIC_SEQ_CST); }
__attribute__((noinline)) bool cas_seq(uint32_t e, uint32_t d) { return __atomic_compare_exchange_n(&w32, &e, d, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
__attribute__((noinline)) bool cas_acq64(uint64_t e, uint64_t d) { return __atomic_compare_exchange_n(&x64, &e, d, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE); }
__attribute__((noinline)) void add_nofetch(uint32_t v) { __atomic_add_fetch(&w32, v, __ATOMIC_RELAXED); }
__attribute__((noinline)) uint32_t load_acq(void) { return __atomic_load_n(&w32, __ATOMIC_ACQUIRE); }
__attribute__((noinline)) uint64_t load_seq(void) { return __atomic_load_n(&x64, __ATOMIC_SEQ_CST); }
__attribute__((noinline)) void store_rel(uint32_t v) { __atomic_store_n(&w32, v, __ATOMIC_RELEASE); }
__attribute__((noinline)) void store_seq8(uint8_t v) { __atomic_store_n(&b8, v, __ATOMIC_SEQ_CST); }
__attribute__((noinline)) void fence_seq(void) { atomic_thread_fence(memory_order_seq_cst); }
__attribute__((noinline)) void fence_acq(void) { atomic_thread_fence(memory_order_acquire); }
__attribute__((noinline)) void fence_rel(void) { atomic_thread_fence(memory_order_release); }
int main(int argc, char **argv) {
  (void)argv;
  sync_add(argc);
#if defined(__x86_64__) && defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16)
  cas16(argc, 4);
  x86_fences();
#endif
  add_relaxed(argc); add_seq(argc); or_acq(argc); and_rel(argc); xor_acqrel(argc); swap_seq(argc);
  cas_seq(argc, 1); cas_acq64(argc, 2); 
  add_nofetch(argc);
  store_rel(load_acq()); store_seq8((uint8_t)load_seq()); fence_seq(); fence_acq(); fence_rel();
  return (int)w32;
}
