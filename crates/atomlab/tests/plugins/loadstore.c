/* A "lock" made of a plain load and a store: two threads can both read 0
 * and both store 1, so it loses updates. atomlab stress mutex must say so. */
#include <stdatomic.h>
#include <stdlib.h>
#include "atomlab.h"

static void *ls_new(void) { return calloc(1, sizeof(_Atomic int)); }

static void ls_lock(void *p) {
    _Atomic int *f = p;
    /* ORDERING: deliberately broken: the load and the store are two steps. */
    while (atomic_load_explicit(f, memory_order_acquire) != 0)
        ;
    atomic_store_explicit(f, 1, memory_order_relaxed);
}

static void ls_unlock(void *p) {
    /* ORDERING: release, as a lock's unlock would. */
    atomic_store_explicit((_Atomic int *)p, 0, memory_order_release);
}

static const struct atomlab_variant variants[] = {{
    .name = "c-load-store",
    .kind = ATOMLAB_KIND_LOCK,
    .u.lock = {.new_ = ls_new, .lock = ls_lock, .unlock = ls_unlock, .free_ = free},
}};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "load-store",
    .n_variants = 1,
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
