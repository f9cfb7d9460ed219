/* GenMC client for verify_genmc.c's seqlock-ticket (same algorithm, same
 * orderings): N writers, each write_seqlock (ticket lock, then sequence + 1
 * and an acq_rel fence), a relaxed read-increment-write of data,
 * write_sequnlock (fence, sequence + 1, ticket unlock); then
 * assert(data == N). GenMC's own seqlock test locks a pthread mutex
 * instead, which verify_genmc.c's seqlock variant models; this one gives
 * the ticket-lock variant a GenMC side of its own. Built outside the
 * repository, for BENCHMARKS.md's side-by-side only. */
#include <stdatomic.h>
#include <pthread.h>
#include <assert.h>
#ifndef N
#define N 2
#endif
atomic_uint sequence, next, owner;
atomic_int data;
static void ticket_lock(void) {
    /* ORDERING: the ticket is relaxed; the wait on owner acquires. */
    unsigned t = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
    while (atomic_load_explicit(&owner, memory_order_acquire) != t)
        ;
}
static void ticket_unlock(void) {
    /* ORDERING: relaxed read (only the holder writes owner), release store. */
    unsigned o = atomic_load_explicit(&owner, memory_order_relaxed);
    atomic_store_explicit(&owner, o + 1, memory_order_release);
}
static void *writer(void *arg) {
    (void)arg;
    ticket_lock();
    unsigned s = atomic_load_explicit(&sequence, memory_order_relaxed);
    atomic_store_explicit(&sequence, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_acq_rel);
    int d = atomic_load_explicit(&data, memory_order_relaxed);
    atomic_store_explicit(&data, d + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_acq_rel);
    s = atomic_load_explicit(&sequence, memory_order_relaxed);
    atomic_store_explicit(&sequence, s + 1, memory_order_relaxed);
    ticket_unlock();
    return NULL;
}
int main(void) {
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        pthread_create(&t[i], NULL, writer, NULL);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    assert(atomic_load_explicit(&data, memory_order_relaxed) == N);
    return 0;
}
