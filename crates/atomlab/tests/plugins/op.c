/* Two operations for `atomlab bench counter --plugin`, as an example of
 * include/atomlab.h's `op` kind:
 *   c-fetch-add  a relaxed atomic increment, with read() returning the
 *                count so atomlab checks that no increment was lost;
 *   c-fence      a sequentially consistent fence alone (no read());
 * and with -DRACY
 *   c-racy-add   a plain `++` of the count (x86-64: `addq $1, (%rdi)`
 *                without lock), which loses updates between CPUs. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "atomlab.h"

/* One state per 64-byte line. */
static void *state_new(void) {
    _Atomic uint64_t *c = aligned_alloc(64, 64);
    if (c)
        atomic_init(c, 0);
    return c;
}

static void fetch_add(void *p) {
    /* ORDERING: relaxed: a statistics counter; only the total matters. */
    atomic_fetch_add_explicit((_Atomic uint64_t *)p, 1, memory_order_relaxed);
}

static uint64_t total(void *p) {
    /* ORDERING: relaxed: read after atomlab's threads have stopped. */
    return atomic_load_explicit((_Atomic uint64_t *)p, memory_order_relaxed);
}

static void fence(void *p) {
    (void)p;
    /* ORDERING: seq_cst: the fence is the operation measured. */
    atomic_thread_fence(memory_order_seq_cst);
}

#ifdef RACY
static void racy_add(void *p) {
    /* Not atomic on purpose: the read-modify-write the audit must call
     * what it is. */
    ++*(uint64_t *)p;
}
#endif

static const struct atomlab_variant variants[] = {
    {
        .name = "c-fetch-add",
        .kind = ATOMLAB_KIND_OP,
        .u.op = {.new_ = state_new, .op = fetch_add, .read = total, .free_ = free},
    },
    {
        .name = "c-fence",
        .kind = ATOMLAB_KIND_OP,
        .u.op = {.new_ = state_new, .op = fence, .free_ = free},
    },
#ifdef RACY
    {
        .name = "c-racy-add",
        .kind = ATOMLAB_KIND_OP,
        .u.op = {.new_ = state_new, .op = racy_add, .read = total, .free_ = free},
    },
#endif
};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "example-ops",
    .n_variants = sizeof variants / sizeof variants[0],
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
