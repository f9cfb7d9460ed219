/* GenMC client for the locks of atomlab's verify_locks.c (same algorithms,
 * same orderings): N threads x K critical sections of a relaxed
 * read-increment-write of x, then assert(x == N*K). Built outside the
 * repository, for BENCHMARKS.md's side-by-side only. */
#include <stdatomic.h>
#include <pthread.h>
#include <assert.h>
#ifndef N
#define N 2
#endif
#ifndef K
#define K 1
#endif
atomic_int x;
#if defined(TAS) || defined(TTAS)
atomic_int l;
static void lock(void) {
#ifdef TTAS
    for (;;) {
        while (atomic_load_explicit(&l, memory_order_relaxed))
            ;
        if (!atomic_exchange_explicit(&l, 1, LOCK_ORDER))
            return;
    }
#else
    while (atomic_exchange_explicit(&l, 1, LOCK_ORDER))
        ;
#endif
}
static void unlock(void) { atomic_store_explicit(&l, 0, UNLOCK_ORDER); }
#else
atomic_uint next, serving;
static void lock(void) {
    unsigned me = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
    while (atomic_load_explicit(&serving, LOCK_ORDER) != me)
        ;
}
static void unlock(void) {
    unsigned s = atomic_load_explicit(&serving, memory_order_relaxed);
    atomic_store_explicit(&serving, s + 1, UNLOCK_ORDER);
}
#endif
static void *thread(void *arg) {
    (void)arg;
    for (int k = 0; k < K; k++) {
        lock();
        int r = atomic_load_explicit(&x, memory_order_relaxed);
        atomic_store_explicit(&x, r + 1, memory_order_relaxed);
        unlock();
    }
    return NULL;
}
int main(void) {
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        pthread_create(&t[i], NULL, thread, NULL);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    assert(atomic_load_explicit(&x, memory_order_relaxed) == N * K);
    return 0;
}
