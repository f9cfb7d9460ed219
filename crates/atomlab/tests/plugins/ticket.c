/* A correct ticket lock (Mellor-Crummey and Scott 1991) for atomlab's
 * plugin tests and as an example of include/atomlab.h. */
#include <stdatomic.h>
#include <stdlib.h>
#include "atomlab.h"

struct ticket {
    _Atomic unsigned next;
    _Atomic unsigned serving;
};

static void *ticket_new(void) { return calloc(1, sizeof(struct ticket)); }

static void ticket_lock(void *p) {
    struct ticket *l = p;
    /* ORDERING: relaxed: taking a ticket orders nothing; the acquire load
     * of `serving` below is what synchronises with the previous holder. */
    unsigned me = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
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

static const struct atomlab_variant variants[] = {{
    .name = "c-ticket",
    .kind = ATOMLAB_KIND_LOCK,
    .u.lock = {.new_ = ticket_new, .lock = ticket_lock, .unlock = ticket_unlock, .free_ = free},
}};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "ticket",
    .n_variants = 1,
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
