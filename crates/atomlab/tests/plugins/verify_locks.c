/* Locks for `atomlab verify`'s tests (tests/verify_cli.rs): a
 * test-and-set lock (TAS: an exchange until it returns 0), a
 * test-and-test-and-set lock (TTAS: a plain peek before each exchange) and
 * a ticket lock, each with the orderings that make it correct and with one
 * of them weakened to relaxed, which the aarch64 model must catch and
 * x86-TSO and SC must not.
 *
 * -DVERIFY_USLEEP adds `tas-usleep`, whose wait calls usleep(3): a call
 * `verify` cannot follow, which it must refuse by name. */
#include <stdatomic.h>
#include <stdlib.h>
#ifdef VERIFY_USLEEP
#include <unistd.h>
#endif
#include "atomlab.h"

static void *bool_new(void) { return calloc(1, sizeof(_Atomic int)); }

/* TAS: exchange 1 in until the old value was 0. */
#define TAS(NAME, LOCK_ORDER, UNLOCK_ORDER)                                  \
    static void NAME##_lock(void *p) {                                       \
        _Atomic int *l = p;                                                  \
        while (atomic_exchange_explicit(l, 1, LOCK_ORDER))                   \
            ;                                                                \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        atomic_store_explicit((_Atomic int *)p, 0, UNLOCK_ORDER);            \
    }

/* TTAS: wait until the lock looks free, then try the exchange. */
#define TTAS(NAME, LOCK_ORDER, UNLOCK_ORDER)                                 \
    static void NAME##_lock(void *p) {                                       \
        _Atomic int *l = p;                                                  \
        for (;;) {                                                           \
            while (atomic_load_explicit(l, memory_order_relaxed))            \
                ;                                                            \
            if (!atomic_exchange_explicit(l, 1, LOCK_ORDER))                 \
                return;                                                      \
        }                                                                    \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        atomic_store_explicit((_Atomic int *)p, 0, UNLOCK_ORDER);            \
    }

/* ORDERING: acquire on taking the lock pairs with the release that frees
 * it: the correct pair. The relaxed ones are the bugs under test. */
TAS(tas, memory_order_acquire, memory_order_release)
TAS(tas_relaxed_lock, memory_order_relaxed, memory_order_release)
TAS(tas_relaxed_unlock, memory_order_acquire, memory_order_relaxed)
TTAS(ttas, memory_order_acquire, memory_order_release)
TTAS(ttas_relaxed_lock, memory_order_relaxed, memory_order_release)
TTAS(ttas_relaxed_unlock, memory_order_acquire, memory_order_relaxed)

struct ticket {
    _Atomic unsigned next;
    _Atomic unsigned serving;
};

static void *ticket_new(void) { return calloc(1, sizeof(struct ticket)); }

#define TICKET(NAME, WAIT_ORDER, UNLOCK_ORDER)                               \
    static void NAME##_lock(void *p) {                                       \
        struct ticket *l = p;                                                \
        unsigned me = atomic_fetch_add_explicit(&l->next, 1,                 \
                                                memory_order_relaxed);       \
        while (atomic_load_explicit(&l->serving, WAIT_ORDER) != me)          \
            ;                                                                \
    }                                                                        \
    static void NAME##_unlock(void *p) {                                     \
        struct ticket *l = p;                                                \
        unsigned s = atomic_load_explicit(&l->serving, memory_order_relaxed);\
        atomic_store_explicit(&l->serving, s + 1, UNLOCK_ORDER);             \
    }

/* ORDERING: the ticket itself is relaxed (it orders nothing); the acquire
 * wait pairs with the release hand-over. */
TICKET(ticket, memory_order_acquire, memory_order_release)
TICKET(ticket_relaxed, memory_order_relaxed, memory_order_relaxed)

#ifdef VERIFY_USLEEP
static void tas_usleep_lock(void *p) {
    _Atomic int *l = p;
    /* ORDERING: acquire, as tas. */
    while (atomic_exchange_explicit(l, 1, memory_order_acquire))
        usleep(1);
}
#endif

/* -DNAME_PREFIX='"c-"' names them apart from `bench` and `stress`'s
 * built-in tas, ttas and ticket, to run the same build there. */
#ifndef NAME_PREFIX
#define NAME_PREFIX ""
#endif

#define LOCK(NAME, FN, NEW)                                                  \
    {.name = NAME_PREFIX NAME, .kind = ATOMLAB_KIND_LOCK,                    \
     .u.lock = {.new_ = NEW, .lock = FN##_lock, .unlock = FN##_unlock,       \
                .free_ = free}}

static const struct atomlab_variant variants[] = {
    LOCK("tas", tas, bool_new),
    LOCK("tas-relaxed-lock", tas_relaxed_lock, bool_new),
    LOCK("tas-relaxed-unlock", tas_relaxed_unlock, bool_new),
    LOCK("ttas", ttas, bool_new),
    LOCK("ttas-relaxed-lock", ttas_relaxed_lock, bool_new),
    LOCK("ttas-relaxed-unlock", ttas_relaxed_unlock, bool_new),
    LOCK("ticket", ticket, ticket_new),
    LOCK("ticket-relaxed", ticket_relaxed, ticket_new),
#ifdef VERIFY_USLEEP
    {.name = "tas-usleep", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = bool_new, .lock = tas_usleep_lock,
                .unlock = tas_unlock, .free_ = free}},
#endif
};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "verify-locks",
    .n_variants = sizeof variants / sizeof variants[0],
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
