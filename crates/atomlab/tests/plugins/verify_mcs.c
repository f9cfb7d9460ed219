/* MCS queue locks for `atomlab verify`'s tests (tests/verify_mcs.rs),
 * after Mellor-Crummey and Scott, "Algorithms for Scalable Synchronization
 * on Shared-Memory Multiprocessors" (ACM TOCS 9(1), 1991), Figure 5, with
 * the orderings of GenMC's tests/correct/data-structures/mcs_spinlock
 * (the Linux kernel's mcs_spinlock.h).
 *
 * include/atomlab.h's lock(void*)/unlock(void*) carry no queue node, so
 * each lock() takes a fresh node from malloc and records it in the lock
 * (`holder`, written and read only by the thread holding the lock), and
 * unlock() frees it after handing the lock over.
 *
 * `mcs-tls` and `mcs-tls-relaxed-handover` are the same lock with the
 * node a `_Thread_local` variable instead (one per thread, which suffices
 * for a thread holding one MCS lock at a time, as the client does): with
 * -fPIC its address comes from a TLS descriptor call plus TPIDR_EL0.
 *
 * `mcs` hands over with release/acquire; `mcs-relaxed-handover` hands
 * over relaxed: the next holder can read the critical section's data
 * before the previous holder's writes reach it (aarch64 and riscv allow
 * it, x86-TSO does not). `mcs-use-after-free` reads its node after
 * freeing it, `mcs-double-free` frees it twice: heap misuse verify must
 * report. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "atomlab.h"

struct mcs_node {
    _Atomic(struct mcs_node *) next;
    _Atomic int locked;
    /* Written only through a pointer loaded from the queue (by the
     * predecessor of `mcs-counted`), never through the node's own. */
    _Atomic int handed;
};

struct mcs {
    _Atomic(struct mcs_node *) tail;
    struct mcs_node *holder;
};

static void *mcs_new(void) { return calloc(1, sizeof(struct mcs)); }

#define MCS(NAME, PASS_ORDER, WAIT_ORDER, AFTER_FREE, BEFORE_PASS)                      \
    static void NAME##_lock(void *p) {                                       \
        struct mcs *l = p;                                                   \
        struct mcs_node *me = malloc(sizeof *me);                            \
        /* ORDERING: relaxed: published by the release of the exchange    \
         * (uncontended) or of the store to prev->next (contended). */      \
        atomic_store_explicit(&me->next, NULL, memory_order_relaxed);        \
        atomic_store_explicit(&me->locked, 1, memory_order_relaxed);         \
        /* ORDERING: acq_rel: release publishes me's fields to the next    \
         * thread that swaps the tail; acquire takes the previous          \
         * holder's critical section when the queue was empty (it freed    \
         * the lock with a release CAS of the tail). */                     \
        struct mcs_node *prev =                                              \
            atomic_exchange_explicit(&l->tail, me, memory_order_acq_rel);    \
        if (prev) {                                                          \
            /* ORDERING: release: me->locked = 1 is visible before prev's  \
             * holder can see me and clear it. */                           \
            atomic_store_explicit(&prev->next, me, memory_order_release);    \
            /* ORDERING: the handover's acquire side (WAIT_ORDER). */      \
            while (atomic_load_explicit(&me->locked, WAIT_ORDER))            \
                ;                                                            \
        }                                                                    \
        l->holder = me;                                                      \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        struct mcs *l = p;                                                   \
        struct mcs_node *me = l->holder;                                     \
        /* ORDERING: acquire: pairs with the successor's release store of  \
         * me; its node's fields are then visible. */                       \
        struct mcs_node *next =                                              \
            atomic_load_explicit(&me->next, memory_order_acquire);           \
        if (!next) {                                                         \
            struct mcs_node *expected = me;                                  \
            /* ORDERING: release on success: the critical section before  \
             * the lock looks free to the next exchange of the tail. */     \
            if (atomic_compare_exchange_strong_explicit(                     \
                    &l->tail, &expected, NULL, memory_order_release,         \
                    memory_order_relaxed)) {                                 \
                free(me);                                                    \
                AFTER_FREE;                                                  \
                return;                                                      \
            }                                                                \
            /* ORDERING: acquire, as above: a successor is linking in. */  \
            while (!(next = atomic_load_explicit(&me->next,                  \
                                                 memory_order_acquire)))     \
                ;                                                            \
        }                                                                    \
        BEFORE_PASS;                                                         \
        /* ORDERING: the handover's release side (PASS_ORDER). */          \
        atomic_store_explicit(&next->locked, 0, PASS_ORDER);                 \
        free(me);                                                            \
        AFTER_FREE;                                                          \
    }

/* ORDERING: release/acquire handover: the correct MCS lock. */
MCS(mcs, memory_order_release, memory_order_acquire, (void)0, (void)0)
/* ORDERING: relaxed handover: the bug under test. */
MCS(mcs_relaxed, memory_order_relaxed, memory_order_relaxed, (void)0, (void)0)
/* Reads its node after freeing it (the read's value is unused but the
 * access is the bug). */
MCS(mcs_uaf, memory_order_release, memory_order_acquire,
    (void)atomic_load_explicit(&me->locked, memory_order_relaxed), (void)0)
MCS(mcs_double, memory_order_release, memory_order_acquire, free(me),
    (void)0)
/* The correct lock, whose holder also marks the successor's node before
 * handing over, through the pointer loaded from me->next: a field no
 * access through the node's own pointer names. A release store, so that
 * aarch64 computes its address into a register first (STLR has no
 * offset: add x0, x0, #12; stlr w1, [x0]).
 * ORDERING: release: the mark is published with the handover anyway; the
 * order here only shapes the code. */
MCS(mcs_counted, memory_order_release, memory_order_acquire, (void)0,
    atomic_store_explicit(&next->handed, 1, memory_order_release))

/* The MCS lock with a thread-local node: no allocation, no holder. */
static _Thread_local struct mcs_node tls_node;

#define MCS_TLS(NAME, PASS_ORDER, WAIT_ORDER)                                \
    static void NAME##_lock(void *p) {                                       \
        struct mcs *l = p;                                                   \
        struct mcs_node *me = &tls_node;                                     \
        /* ORDERING: as mcs's lock above. */                                \
        atomic_store_explicit(&me->next, NULL, memory_order_relaxed);        \
        atomic_store_explicit(&me->locked, 1, memory_order_relaxed);         \
        struct mcs_node *prev =                                              \
            atomic_exchange_explicit(&l->tail, me, memory_order_acq_rel);    \
        if (prev) {                                                          \
            atomic_store_explicit(&prev->next, me, memory_order_release);    \
            while (atomic_load_explicit(&me->locked, WAIT_ORDER))            \
                ;                                                            \
        }                                                                    \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        struct mcs *l = p;                                                   \
        struct mcs_node *me = &tls_node;                                     \
        /* ORDERING: as mcs's unlock above. */                              \
        struct mcs_node *next =                                              \
            atomic_load_explicit(&me->next, memory_order_acquire);           \
        if (!next) {                                                         \
            struct mcs_node *expected = me;                                  \
            if (atomic_compare_exchange_strong_explicit(                     \
                    &l->tail, &expected, NULL, memory_order_release,         \
                    memory_order_relaxed))                                   \
                return;                                                      \
            while (!(next = atomic_load_explicit(&me->next,                  \
                                                 memory_order_acquire)))     \
                ;                                                            \
        }                                                                    \
        atomic_store_explicit(&next->locked, 0, PASS_ORDER);                 \
    }

/* ORDERING: release/acquire handover: correct. */
MCS_TLS(mcs_tls, memory_order_release, memory_order_acquire)
/* ORDERING: relaxed handover: the bug under test. */
MCS_TLS(mcs_tls_relaxed, memory_order_relaxed, memory_order_relaxed)

/* A TAS lock that takes the value it swaps in from a thread-local
 * variable initialised to 1 (in .tdata): it excludes only if verify reads
 * each thread's block from the file's TLS template (exported, so that
 * the compiler cannot fold it to its initial value). */
_Thread_local int verify_mcs_tls_one = 1;

static void tas_tdata_lock(void *p) {
    /* ORDERING: acquire on taking the lock, as tas in verify_locks.c. */
    while (atomic_exchange_explicit((_Atomic int *)p, verify_mcs_tls_one,
                                    memory_order_acquire))
        ;
}

static void tas_tdata_unlock(void *p) {
    /* ORDERING: release: pairs with the acquire above. */
    atomic_store_explicit((_Atomic int *)p, 0, memory_order_release);
}

/* free_ of the file's own: the client runs it at the end (as the ABI
 * says: once, when no thread uses the lock). `mcs-own-free` frees the
 * lock; `mcs-noisy-free` also prints, a call verify cannot follow, which
 * must be REFUSED (never ignored because it runs last). */
static void own_free(void *p) {
    struct mcs *l = p;
    /* ORDERING: relaxed: free_ runs after every thread is joined. */
    if (atomic_load_explicit(&l->tail, memory_order_relaxed))
        return; /* still queued: leak rather than free a held lock */
    free(p);
}

static void noisy_free(void *p) {
    puts("mcs: freed");
    free(p);
}

#define LOCK(NAME, FN)                                                       \
    {.name = NAME, .kind = ATOMLAB_KIND_LOCK,                                \
     .u.lock = {.new_ = mcs_new, .lock = FN##_lock, .unlock = FN##_unlock,   \
                .free_ = free}}

static const struct atomlab_variant variants[] = {
    LOCK("mcs", mcs),
    LOCK("mcs-relaxed-handover", mcs_relaxed),
    LOCK("mcs-counted", mcs_counted),
    LOCK("mcs-use-after-free", mcs_uaf),
    LOCK("mcs-double-free", mcs_double),
    LOCK("mcs-tls", mcs_tls),
    LOCK("mcs-tls-relaxed-handover", mcs_tls_relaxed),
    {.name = "mcs-own-free", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = mcs_new, .lock = mcs_tls_lock,
                .unlock = mcs_tls_unlock, .free_ = own_free}},
    {.name = "mcs-noisy-free", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = mcs_new, .lock = mcs_tls_lock,
                .unlock = mcs_tls_unlock, .free_ = noisy_free}},
    {.name = "tas-tdata", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = mcs_new, .lock = tas_tdata_lock,
                .unlock = tas_tdata_unlock, .free_ = free}},
};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "verify-mcs",
    .n_variants = sizeof variants / sizeof variants[0],
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
