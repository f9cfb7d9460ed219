/* Two reference counts for atomlab's plugin tests and as an example of
 * include/atomlab.h's `refcount` kind:
 *   c-refcount       an atomic count as the kernel's refcount_t orders it
 *                    (relaxed increment; release decrement, acquire fence
 *                    on the last);
 *   c-refcount-racy  put decrements with a plain load and a separate store,
 *                    so two puts can both read 2 and both store 1 (a lost
 *                    decrement), or a put can report "last" while another
 *                    holder still uses the object. `atomlab stress
 *                    refcount` must catch it. */
#include <stdatomic.h>
#include <stdlib.h>
#include "atomlab.h"

/* One object per 64-byte line: no false sharing between objects. */
static void *count_new(void) {
    _Atomic long *c = aligned_alloc(64, 64);
    if (c)
        atomic_init(c, 1);
    return c;
}

static void count_get(void *p) {
    /* ORDERING: relaxed: a new reference comes from an existing one, which
     * already orders the object (refcount_inc). */
    atomic_fetch_add_explicit((_Atomic long *)p, 1, memory_order_relaxed);
}

static int count_put(void *p) {
    /* ORDERING: release: this holder's uses happen before the last put. */
    if (atomic_fetch_sub_explicit((_Atomic long *)p, 1, memory_order_release) != 1)
        return 0;
    /* ORDERING: acquire: the freer sees every holder's uses (pairs with the
     * release decrements), as refcount_dec_and_test. */
    atomic_thread_fence(memory_order_acquire);
    return 1;
}

static int racy_put(void *p) {
    _Atomic long *c = p;
    /* ORDERING: deliberately broken: the read and the write are two steps,
     * so a concurrent put's decrement can be overwritten. */
    long v = atomic_load_explicit(c, memory_order_relaxed);
    atomic_store_explicit(c, v - 1, memory_order_release);
    return v == 1;
}

static const struct atomlab_variant variants[] = {
    {
        .name = "c-refcount",
        .kind = ATOMLAB_KIND_REFCOUNT,
        .u.refcount = {.new_ = count_new, .get = count_get, .put = count_put, .free_ = free},
    },
    {
        .name = "c-refcount-racy",
        .kind = ATOMLAB_KIND_REFCOUNT,
        .u.refcount = {.new_ = count_new, .get = count_get, .put = racy_put, .free_ = free},
    },
};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "example-refcounts",
    .n_variants = sizeof variants / sizeof variants[0],
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
