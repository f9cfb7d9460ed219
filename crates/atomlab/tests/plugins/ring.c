/* Two single-producer single-consumer queues for atomlab's plugin tests
 * and as an example of include/atomlab.h's `spsc` kind:
 *   c-ring        Lamport's bounded ring (1983) with C11 acquire/release
 *                 indices, as atomlab's built-in `c11-acq-rel` ring;
 *   c-ring-lossy  the same ring with a bug: the item that would wrap the
 *                 ring back to slot 0 is dropped, though push says it was
 *                 enqueued. `atomlab stress spsc` must catch it. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "atomlab.h"

struct ring {
    /* Each index on its own cache line: the producer writes tail, the
     * consumer head. */
    _Alignas(64) _Atomic size_t head;
    _Alignas(64) _Atomic size_t tail;
    size_t pushed; /* the producer's count of pushes (c-ring-lossy) */
    _Alignas(64) size_t mask;
    uint64_t *slots;
};

static void *ring_new(size_t capacity) {
    size_t cap = 1;
    while (cap < capacity)
        cap <<= 1;
    struct ring *r = aligned_alloc(64, sizeof *r);
    if (!r)
        return NULL;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    r->pushed = 0;
    r->mask = cap - 1;
    r->slots = calloc(cap, sizeof(uint64_t));
    if (!r->slots) {
        free(r);
        return NULL;
    }
    return r;
}

static void ring_free(void *p) {
    struct ring *r = p;
    free(r->slots);
    free(r);
}

static int ring_push(void *p, uint64_t item) {
    struct ring *r = p;
    /* ORDERING: relaxed: only the producer writes tail. */
    size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    /* ORDERING: acquire: pairs with the consumer's release of head, so the
     * slot it freed is not overwritten before it was read. */
    if (t - atomic_load_explicit(&r->head, memory_order_acquire) > r->mask)
        return 0;
    r->slots[t & r->mask] = item;
    /* ORDERING: release: publishes the slot to the consumer. */
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return 1;
}

static int lossy_push(void *p, uint64_t item) {
    struct ring *r = p;
    /* ORDERING: as ring_push. */
    size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (t - atomic_load_explicit(&r->head, memory_order_acquire) > r->mask)
        return 0;
    /* The bug: wrapping back to slot 0, the item is forgotten. */
    if (++r->pushed % (r->mask + 1) == 0)
        return 1;
    r->slots[t & r->mask] = item;
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return 1;
}

static int ring_pop(void *p, uint64_t *item) {
    struct ring *r = p;
    /* ORDERING: relaxed: only the consumer writes head. */
    size_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    /* ORDERING: acquire: pairs with the producer's release of tail. */
    if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
        return 0;
    *item = r->slots[h & r->mask];
    /* ORDERING: release: the slot's read happens before the producer
     * reuses it. */
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return 1;
}

static const struct atomlab_variant variants[] = {
    {
        .name = "c-ring",
        .kind = ATOMLAB_KIND_SPSC,
        .u.spsc = {.new_ = ring_new, .push = ring_push, .pop = ring_pop, .free_ = ring_free},
    },
    {
        .name = "c-ring-lossy",
        .kind = ATOMLAB_KIND_SPSC,
        .u.spsc = {.new_ = ring_new, .push = lossy_push, .pop = ring_pop, .free_ = ring_free},
    },
};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "example-queues",
    .n_variants = sizeof variants / sizeof variants[0],
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
