/* Fixture for tests/audit_fixtures.rs: 16-byte atomics, which GCC 12 turns
   into calls to libatomic on aarch64, x86-64 and riscv64. */
#include <stdbool.h>
__int128 q;
__attribute__((noinline)) bool cas128(__int128 e, __int128 d) { return __atomic_compare_exchange_n(&q, &e, d, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
__attribute__((noinline)) __int128 load128(void) { return __atomic_load_n(&q, __ATOMIC_ACQUIRE); }
int main(int argc, char **argv) { (void)argv; return cas128(argc, 1) + (int)load128(); }
