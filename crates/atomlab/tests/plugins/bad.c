/* Plugins atomlab must refuse before running anything, chosen with -D:
 * NO_ENTRY (no atomlab_plugin), FUTURE (ABI version 99), SPSC (a queue
 * given to a lock subcommand), SPSC_NO_POP (a queue without pop). Also
 * CRASH (a lock that dereferences NULL), HANG (a lock that never returns),
 * SPSC_CRASH (a queue whose push dereferences NULL) and REFCOUNT_HANG (a
 * count whose put never returns), which atomlab must contain, and
 * REFCOUNT_EARLY (a count whose every put says it was the last), which
 * atomlab must catch, and SPSC_FULL (a queue that is always full), which
 * must time out undecided, not be accused of losing items, and
 * SPSC_GARBAGE (a queue whose pop always returns a word nobody pushed),
 * which must be caught within the time limit, not reported hung. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "atomlab.h"

__attribute__((unused)) static void *obj_new(void) { return calloc(1, 64); }
__attribute__((unused)) static void nop(void *p) { (void)p; }
__attribute__((unused)) static void *q_new(size_t c) { (void)c; return calloc(1, 64); }
__attribute__((unused)) static int q_push(void *q, uint64_t i) { (void)q; (void)i; return 1; }
__attribute__((unused)) static int q_full(void *q, uint64_t i) { (void)q; (void)i; return 0; }
__attribute__((unused)) static int q_pop(void *q, uint64_t *i) { (void)q; (void)i; return 0; }

/* A pop that always "succeeds" with a word nobody pushed. */
__attribute__((unused)) static int q_garbage(void *q, uint64_t *i) {
    (void)q;
    *i = 0x1234;
    return 1;
}

__attribute__((unused)) static int crash_push(void *q, uint64_t i) {
    (void)q;
    volatile uint64_t *null = 0;
    *null = i;
    return 1;
}

__attribute__((unused)) static int hang_put(void *p) {
    /* ORDERING: relaxed: nothing is ever published; this only spins. */
    while (atomic_load_explicit((_Atomic int *)p, memory_order_relaxed) == 0)
        ;
    return 0;
}

__attribute__((unused)) static int early_put(void *p) {
    (void)p;
    return 1;
}

__attribute__((unused)) static void crash_lock(void *p) {
    (void)p;
    volatile int *null = 0;
    *null = 1;
}

__attribute__((unused)) static void hang_lock(void *p) {
    /* ORDERING: relaxed: nothing is ever published; this only spins. */
    while (atomic_load_explicit((_Atomic int *)p, memory_order_relaxed) == 0)
        ;
}

static const struct atomlab_variant variants[] = {{
#if defined(SPSC)
    .name = "c-queue",
    .kind = ATOMLAB_KIND_SPSC,
    .u.spsc = {.new_ = q_new, .push = q_push, .pop = q_pop, .free_ = free},
#elif defined(SPSC_FULL)
    .name = "c-full-queue",
    .kind = ATOMLAB_KIND_SPSC,
    .u.spsc = {.new_ = q_new, .push = q_full, .pop = q_pop, .free_ = free},
#elif defined(SPSC_GARBAGE)
    .name = "c-garbage-queue",
    .kind = ATOMLAB_KIND_SPSC,
    .u.spsc = {.new_ = q_new, .push = q_push, .pop = q_garbage, .free_ = free},
#elif defined(SPSC_NO_POP)
    .name = "c-queue",
    .kind = ATOMLAB_KIND_SPSC,
    .u.spsc = {.new_ = q_new, .push = q_push, .free_ = free},
#elif defined(SPSC_CRASH)
    .name = "c-null-queue",
    .kind = ATOMLAB_KIND_SPSC,
    .u.spsc = {.new_ = q_new, .push = crash_push, .pop = q_pop, .free_ = free},
#elif defined(REFCOUNT_EARLY)
    .name = "c-early-last",
    .kind = ATOMLAB_KIND_REFCOUNT,
    .u.refcount = {.new_ = obj_new, .get = nop, .put = early_put, .free_ = free},
#elif defined(REFCOUNT_HANG)
    .name = "c-forever-count",
    .kind = ATOMLAB_KIND_REFCOUNT,
    .u.refcount = {.new_ = obj_new, .get = nop, .put = hang_put, .free_ = free},
#elif defined(CRASH)
    .name = "c-null",
    .kind = ATOMLAB_KIND_LOCK,
    .u.lock = {.new_ = obj_new, .lock = crash_lock, .unlock = nop, .free_ = free},
#elif defined(HANG)
    .name = "c-forever",
    .kind = ATOMLAB_KIND_LOCK,
    .u.lock = {.new_ = obj_new, .lock = hang_lock, .unlock = nop, .free_ = free},
#else
    .name = "c-nop",
    .kind = ATOMLAB_KIND_LOCK,
    .u.lock = {.new_ = obj_new, .lock = nop, .unlock = nop, .free_ = free},
#endif
}};

static const struct atomlab_plugin plugin = {
#ifdef FUTURE
    .abi_version = 99,
#else
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
#endif
    .name = "bad",
    .n_variants = 1,
    .variants = variants,
};

#ifndef NO_ENTRY
const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
#else
const struct atomlab_plugin *not_the_entry(void) { return &plugin; }
#endif
