/* The locks of GenMC v0.10.3's own test clients
 * (tests/correct/data-structures/{ticketlock,ttaslock,spinlock,
 * mcs_spinlock,seqlock}), with their orderings, behind include/atomlab.h, for
 * tests/verify_genmc.rs: atomlab's verdicts on their aarch64 builds are
 * compared with GenMC's on the C sources, recorded in
 * verify_genmc.expected. Each comes as GenMC has it and with its
 * handover relaxed (GENMC_RELAXED in the commands of verify_genmc.expected:
 * the release that frees the lock and the acquire that takes it both
 * relaxed), which GenMC reports as a data race on the critical section.
 *
 * mcs_spinlock is the Linux kernel's (locked = 1 passes the lock); its
 * node is per thread (GenMC: nodes[i]; here a _Thread_local node). */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include "atomlab.h"

static void *zeroed(void) { return calloc(1, 16); }

#define ACQ memory_order_acquire
#define REL memory_order_release
#define RLX memory_order_relaxed

/* ticketlock.c: ORDERING: the ticket is relaxed (it orders nothing); the
 * wait on owner acquires what the release of owner published. */
#define TICKET(NAME, A, R)                                                   \
    static void NAME##_lock(void *p) {                                       \
        atomic_int *l = p; /* l[0] next, l[1] owner */                      \
        int t = atomic_fetch_add_explicit(&l[0], 1, RLX);                    \
        while (atomic_load_explicit(&l[1], A) != t)                          \
            ;                                                                \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        atomic_int *l = p;                                                   \
        /* ORDERING: relaxed: only the holder writes owner. */              \
        int o = atomic_load_explicit(&l[1], RLX);                            \
        atomic_store_explicit(&l[1], o + 1, R);                              \
    }
TICKET(ticket, ACQ, REL)
TICKET(ticket_relaxed, RLX, RLX)

/* ttaslock.c: ORDERING: the peek is relaxed; the exchange acquires. */
#define TTAS(NAME, A, R)                                                     \
    static void NAME##_lock(void *p) {                                       \
        atomic_int *l = p;                                                   \
        for (;;) {                                                           \
            while (atomic_load_explicit(l, RLX) != 0)                        \
                ;                                                            \
            if (!atomic_exchange_explicit(l, 1, A))                          \
                return;                                                      \
        }                                                                    \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        atomic_store_explicit((atomic_int *)p, 0, R);                        \
    }
TTAS(ttas, ACQ, REL)
TTAS(ttas_relaxed, RLX, RLX)

/* spinlock.c: ORDERING: a CAS 0 -> 1 that acquires (acquire on failure
 * too, as GenMC's), after a relaxed peek. */
#define SPIN(NAME, A, R)                                                     \
    static void NAME##_lock(void *p) {                                       \
        atomic_int *l = p;                                                   \
        int v;                                                               \
        do {                                                                 \
            while (atomic_load_explicit(l, RLX) != 0)                        \
                ;                                                            \
            v = 0;                                                           \
        } while (!atomic_compare_exchange_strong_explicit(l, &v, 1, A, A));  \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        atomic_store_explicit((atomic_int *)p, 0, R);                        \
    }
SPIN(spin, ACQ, REL)
SPIN(spin_relaxed, RLX, RLX)

/* mcs_spinlock.h (the kernel's). */
struct mcs_spinlock {
    _Atomic(struct mcs_spinlock *) next;
    atomic_int locked;
    atomic_int count;
};
static _Thread_local struct mcs_spinlock node;

#define MCS(NAME, A, R)                                                      \
    static void NAME##_lock(void *p) {                                       \
        _Atomic(struct mcs_spinlock *) *lock = p;                            \
        /* ORDERING: relaxed init, ordered by the xchg's release. */        \
        atomic_store_explicit(&node.locked, 0, RLX);                         \
        atomic_store_explicit(&node.next, NULL, RLX);                        \
        /* ORDERING: xchg() is acq_rel in GenMC's fake.h. */               \
        struct mcs_spinlock *prev =                                          \
            atomic_exchange_explicit(lock, &node, memory_order_acq_rel);     \
        if (prev == NULL)                                                    \
            return;                                                          \
        /* ORDERING: WRITE_ONCE: relaxed. */                                \
        atomic_store_explicit(&prev->next, &node, RLX);                      \
        /* ORDERING: smp_load_acquire (A). */                               \
        while (!atomic_load_explicit(&node.locked, A))                       \
            ;                                                                \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        _Atomic(struct mcs_spinlock *) *lock = p;                            \
        /* ORDERING: READ_ONCE: relaxed. */                                 \
        struct mcs_spinlock *next = atomic_load_explicit(&node.next, RLX);   \
        if (!next) {                                                         \
            struct mcs_spinlock *old = &node;                                \
            /* ORDERING: cmpxchg_release (relaxed on failure: C forbids a  \
             * release failure order, GenMC's fake.h passes it). */      \
            if (atomic_compare_exchange_strong_explicit(lock, &old, NULL,    \
                                                        REL, RLX))           \
                return;                                                      \
            while (!(next = atomic_load_explicit(&node.next, RLX)))          \
                ;                                                            \
        }                                                                    \
        /* ORDERING: smp_store_release (R): passes the lock. */             \
        atomic_store_explicit(&next->locked, 1, R);                          \
    }
MCS(mcs, ACQ, REL)
MCS(mcs_relaxed, RLX, RLX)

/* seqlock's writer side (tests/correct/data-structures/seqlock, which
 * GenMC compiles with seqlock-atomic's seqlock.h and fake.h; its readers
 * take the lock too, read_seqlock_excl, so every thread of the client is
 * a writer: CONFIG_SEQ_READERS=0). write_seqlock is spin_lock, then
 * sequence + 1 and smp_wmb; write_sequnlock is smp_wmb, sequence + 1,
 * spin_unlock. GenMC's fake.h makes spin_lock a pthread mutex, which a
 * plugin cannot call where verify reads it (an unknown external function
 * is refused). GenMC does not run glibc's mutex either: it models
 * pthread_mutex_lock as one CAS of the lock word from 0 to 1 that
 * acquires, the thread blocked while the CAS reads 1, and
 * pthread_mutex_unlock as a release store of 0 (src/Runtime/Execution.cpp,
 * handleLock and handleUnlock, v0.10.3). `mutex_lock` below is that
 * model written in C: its failing CAS only reads, so verify spin-assumes
 * it as GenMC blocks the thread, and both explore one execution per order
 * of the writers. seqlock-ticket is the same writer over ticketlock.c's
 * lock instead (a fetch_add and a wait on owner), the stand-in of earlier
 * rounds: a costlier lock than the one GenMC checks. */
static void mutex_lock(atomic_int *l) {
    int v;
    do {
        v = 0;
        /* ORDERING: acquire, as GenMC's lock CAS (failure too). */
    } while (!atomic_compare_exchange_strong_explicit(l, &v, 1, ACQ, ACQ));
}

static void mutex_unlock(atomic_int *l) {
    /* ORDERING: release, as GenMC's unlock store. */
    atomic_store_explicit(l, 0, REL);
}

struct seqlock {
    atomic_uint sequence;
    atomic_int lock[2]; /* mutex: lock[0]; ticket: next, owner */
};

static void *seqlock_new(void) { return calloc(1, sizeof(struct seqlock)); }

/* write_seqlock and write_sequnlock over the spin_lock given. */
#define SEQLOCK(NAME, LOCK, UNLOCK)                                          \
    static void NAME##_lock(void *p) {                                       \
        struct seqlock *sl = p;                                              \
        LOCK(sl->lock);                                                      \
        /* ORDERING: WRITE_ONCE(s->sequence, READ_ONCE(s->sequence) + 1):  \
         * relaxed, under the lock. */                                      \
        unsigned s = atomic_load_explicit(&sl->sequence, RLX);               \
        atomic_store_explicit(&sl->sequence, s + 1, RLX);                    \
        /* ORDERING: smp_wmb, an acq_rel fence in GenMC's fake.h. */       \
        atomic_thread_fence(memory_order_acq_rel);                           \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        struct seqlock *sl = p;                                              \
        /* ORDERING: smp_wmb, then the relaxed increment, as in lock. */   \
        atomic_thread_fence(memory_order_acq_rel);                           \
        unsigned s = atomic_load_explicit(&sl->sequence, RLX);               \
        atomic_store_explicit(&sl->sequence, s + 1, RLX);                    \
        UNLOCK(sl->lock);                                                    \
    }
SEQLOCK(seq, mutex_lock, mutex_unlock)
SEQLOCK(seq_ticket, ticket_lock, ticket_unlock)

#define LOCK(NAME, FN)                                                       \
    {.name = NAME, .kind = ATOMLAB_KIND_LOCK,                                \
     .u.lock = {.new_ = zeroed, .lock = FN##_lock, .unlock = FN##_unlock,    \
                .free_ = free}}

static const struct atomlab_variant variants[] = {
    LOCK("ticketlock", ticket),
    LOCK("ticketlock-relaxed", ticket_relaxed),
    LOCK("ttaslock", ttas),
    LOCK("ttaslock-relaxed", ttas_relaxed),
    LOCK("spinlock", spin),
    LOCK("spinlock-relaxed", spin_relaxed),
    LOCK("mcs_spinlock", mcs),
    LOCK("mcs_spinlock-relaxed", mcs_relaxed),
    {.name = "seqlock", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = seqlock_new, .lock = seq_lock, .unlock = seq_unlock,
                .free_ = free}},
    {.name = "seqlock-ticket", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = seqlock_new, .lock = seq_ticket_lock,
                .unlock = seq_ticket_unlock, .free_ = free}},
};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "verify-genmc",
    .n_variants = sizeof variants / sizeof variants[0],
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
