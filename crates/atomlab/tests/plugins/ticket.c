/* Two correct locks for atomlab's plugin tests and as an example of
 * include/atomlab.h: a ticket lock (Mellor-Crummey and Scott 1991) and a
 * test-and-test-and-set lock with exponential backoff, the algorithm of
 * atomlab's built-in `ttas` (to measure the cost of the plugin call).
 * Built with -DSLOW_TICKET, `c-ticket` waits 200 pauses after taking its
 * ticket: a second, slower build of the same variant, for the A/B test of
 * two builds (tests/plugin_cli.rs). */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "atomlab.h"

struct ticket {
    _Atomic unsigned next;
    _Atomic unsigned serving;
};

static void *ticket_new(void) { return calloc(1, sizeof(struct ticket)); }

static void pause_(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("isb");
#else
    __asm__ volatile("" ::: "memory"); /* a loop of these is not removed */
#endif
}

static void ticket_lock(void *p) {
    struct ticket *l = p;
    /* ORDERING: relaxed: taking a ticket orders nothing; the acquire load
     * of `serving` below is what synchronises with the previous holder. */
    unsigned me = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
#ifdef SLOW_TICKET
    for (unsigned i = 0; i < 200; i++)
        pause_();
#endif
    /* ORDERING: acquire: pairs with the release store in ticket_unlock. */
    while (atomic_load_explicit(&l->serving, memory_order_acquire) != me)
        ;
}

static void ticket_unlock(void *p) {
    struct ticket *l = p;
    /* ORDERING: relaxed: only the holder writes `serving`. */
    unsigned s = atomic_load_explicit(&l->serving, memory_order_relaxed);
    /* ORDERING: release: publishes the critical section to the next holder. */
    atomic_store_explicit(&l->serving, s + 1, memory_order_release);
}

static void *ttas_new(void) { return calloc(1, sizeof(_Atomic _Bool)); }

/* One try at the lock: the fast path, and each retry of the slow one. */
static inline int ttas_try(_Atomic _Bool *l) {
    /* ORDERING: relaxed peek: only a hint; the CAS below acquires. */
    if (atomic_load_explicit(l, memory_order_relaxed))
        return 0;
    _Bool expected = 0;
    /* ORDERING: acquire on success pairs with ttas_unlock's release. */
    return atomic_compare_exchange_weak_explicit(l, &expected, 1, memory_order_acquire,
                                                 memory_order_relaxed);
}

/* The wait, out of line: with the backoff loop in ttas_lock itself, gcc
 * -O2 saves four registers and sets up a frame before the first try, which
 * an uncontended lock pays on every call (7.85 against 7.15-7.25 ns/op in
 * `bench lock --threads 1` on this 2-vCPU EPYC guest; BENCHMARKS.md). */
static __attribute__((noinline, cold)) void ttas_wait(_Atomic _Bool *l) {
    /* Backoff as atomlab's: 1, 2, 4 .. 64 pauses, then yield. */
    for (unsigned step = 0;; step += step <= 10) {
        if (step <= 6)
            for (unsigned i = 0; i < 1u << step; i++)
                pause_();
        else
            sched_yield();
        if (ttas_try(l))
            return;
    }
}

static void ttas_lock(void *p) {
    if (!ttas_try(p))
        ttas_wait(p);
}

static void ttas_unlock(void *p) {
    /* ORDERING: release publishes the critical section to the next acquirer. */
    atomic_store_explicit((_Atomic _Bool *)p, 0, memory_order_release);
}

static int ttas_try_lock(void *p) {
#ifdef LYING_TRY_LOCK
    /* Says it took the lock without taking it: atomlab must catch it. */
    (void)p;
    return 1;
#endif
    _Bool expected = 0;
    /* ORDERING: acquire on success, as ttas_lock. */
    return atomic_compare_exchange_strong_explicit((_Atomic _Bool *)p, &expected, 1,
                                                   memory_order_acquire, memory_order_relaxed);
}

static const struct atomlab_variant variants[] = {
    {
        .name = "c-ticket",
        .kind = ATOMLAB_KIND_LOCK,
        .u.lock = {.new_ = ticket_new, .lock = ticket_lock, .unlock = ticket_unlock, .free_ = free},
    },
    {
        .name = "c-ttas",
        .kind = ATOMLAB_KIND_LOCK,
        .u.lock = {.new_ = ttas_new,
                   .lock = ttas_lock,
                   .unlock = ttas_unlock,
                   .try_lock = ttas_try_lock,
                   .free_ = free},
    },
};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "example-locks",
    .n_variants = sizeof variants / sizeof variants[0],
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
