/* Queues, reference counts and operations for `atomlab verify`'s tests
 * (tests/verify_kinds.rs), one correct and one broken of each kind, the
 * broken one weakened where the kind's contract needs ordering:
 *
 *   ring               Lamport's single-producer single-consumer ring
 *                      (L. Lamport, "Specifying Concurrent Program
 *                      Modules", TOPLAS 1983), two slots: the producer
 *                      publishes `head` with release, the consumer frees
 *                      slots through `tail` with release, each reads the
 *                      other's index with acquire;
 *   ring-relaxed-head  the producer's publish of `head` relaxed: the
 *                      consumer can see the new head before the item in
 *                      its slot (aarch64 reorders the two stores);
 *   refcount           the Linux kernel's refcount_t orderings
 *                      (Documentation/core-api/refcount-vs-atomic.rst):
 *                      increment relaxed, decrement release, an acquire
 *                      fence when it was the last;
 *   refcount-relaxed-put  the decrement relaxed: a holder's last uses of
 *                      the object can reach memory after the put that lets
 *                      another thread free it;
 *   op-fetch-add       an atomic relaxed increment, `read` its total;
 *   op-racy-add        the increment a plain read, add and write: two
 *                      threads read the same count under every model,
 *                      sequential consistency included;
 *   op-no-read         op-fetch-add without `read`: nothing says what the
 *                      count should be, so only that every execution
 *                      runs to its end is checked.
 *
 * -DVERIFY_RING3 adds ring3-wrap, a correct ring of three slots whose
 * producer and consumer keep their slot numbers in the object, wrapped by
 * a compare (not a mask): the index is loaded from memory, so verify
 * cannot bound it and must refuse the slot's access, naming the
 * instruction, never PASS it unchecked.
 *
 * -DVERIFY_RING_ASM (aarch64 only) adds ring-computed and
 * ring-computed-relaxed-head: the ring's push and pop as clang 14 -O2
 * compiles them, which computes the slot's address into a register
 * (`add x9, x0, x9, lsl #3; str x1, [x9, #16]`) where gcc indexes the
 * store (`str x1, [x0, x3, lsl #3]`); kept as assembly so that the
 * gcc-built zoo covers both forms.
 *
 * -DVERIFY_BAD_NEW adds two whose `new_` verify must refuse, saying why:
 *   op-malloc-uninit   `new_` mallocs the count and never sets it;
 *   op-from-arg        `new_` stores a value it computed before its
 *                      allocation call (verify does not follow that code);
 *   op-offset-new      `new_` returns a pointer into its allocation, not
 *                      the allocation (a header before the state).
 *
 * Each `new_` allocates with calloc and sets only what is not zero, as
 * `verify` reads it. -DNAME_PREFIX='"c-"' renames them, as in
 * verify_locks.c. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "atomlab.h"

#ifndef NAME_PREFIX
#define NAME_PREFIX ""
#endif

/* --- spsc: Lamport's ring ------------------------------------------- */

#define RING_SLOTS 2 /* a power of two: `% RING_SLOTS` is a mask */

struct ring {
    _Atomic uint64_t head; /* items pushed: written by the producer */
    _Atomic uint64_t tail; /* items popped: written by the consumer */
    uint64_t slot[RING_SLOTS];
};

static void *ring_new(size_t capacity) {
    if (capacity > RING_SLOTS)
        return NULL;
    return calloc(1, sizeof(struct ring));
}

#define RING(NAME, PUBLISH_ORDER)                                            \
    static int NAME##_push(void *p, uint64_t item) {                         \
        struct ring *r = p;                                                  \
        /* ORDERING: relaxed: only this thread writes head. */               \
        uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);   \
        /* ORDERING: acquire: pairs with the consumer's release of tail,   \
         * so the slot it freed was read before it is overwritten. */        \
        if (h - atomic_load_explicit(&r->tail, memory_order_acquire) ==      \
            RING_SLOTS)                                                      \
            return 0;                                                        \
        r->slot[h % RING_SLOTS] = item;                                      \
        /* ORDERING: PUBLISH_ORDER: release publishes the slot to the       \
         * consumer's acquire of head; relaxed (ring-relaxed-head) is the   \
         * bug under test. */                                                \
        atomic_store_explicit(&r->head, h + 1, PUBLISH_ORDER);               \
        return 1;                                                            \
    }                                                                        \
    static int NAME##_pop(void *p, uint64_t *item) {                         \
        struct ring *r = p;                                                  \
        /* ORDERING: relaxed: only this thread writes tail. */               \
        uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);   \
        /* ORDERING: acquire: pairs with the producer's publish of head. */  \
        if (t == atomic_load_explicit(&r->head, memory_order_acquire))       \
            return 0;                                                        \
        *item = r->slot[t % RING_SLOTS];                                     \
        /* ORDERING: release: the slot's read happens before the producer \
         * reuses it (its acquire of tail). */                               \
        atomic_store_explicit(&r->tail, t + 1, memory_order_release);        \
        return 1;                                                            \
    }

RING(ring, memory_order_release)
RING(ring_relaxed_head, memory_order_relaxed)

#ifdef VERIFY_RING3
struct ring3 {
    _Atomic uint64_t head;
    _Atomic uint64_t tail;
    uint64_t put_at; /* the producer's next slot: only it uses this */
    uint64_t take_at; /* the consumer's next slot: only it uses this */
    uint64_t slot[3];
};

static void *ring3_new(size_t capacity) {
    if (capacity > 3)
        return NULL;
    return calloc(1, sizeof(struct ring3));
}

static int ring3_push(void *p, uint64_t item) {
    struct ring3 *r = p;
    /* ORDERING: relaxed: only this thread writes head. */
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    /* ORDERING: acquire: pairs with the consumer's release of tail. */
    if (h - atomic_load_explicit(&r->tail, memory_order_acquire) == 3)
        return 0;
    uint64_t i = r->put_at;
    r->slot[i] = item;
    r->put_at = i + 1 == 3 ? 0 : i + 1;
    /* ORDERING: release: publishes the slot to the consumer's acquire. */
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return 1;
}

static int ring3_pop(void *p, uint64_t *item) {
    struct ring3 *r = p;
    /* ORDERING: relaxed: only this thread writes tail. */
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    /* ORDERING: acquire: pairs with the producer's publish of head. */
    if (t == atomic_load_explicit(&r->head, memory_order_acquire))
        return 0;
    uint64_t i = r->take_at;
    *item = r->slot[i];
    r->take_at = i + 1 == 3 ? 0 : i + 1;
    /* ORDERING: release: the slot's read happens before its reuse. */
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return 1;
}
#endif

#if defined(VERIFY_RING_ASM) && defined(__aarch64__)
/* clang 14 -O2's ring_push and ring_pop (the ORDERING comments of RING
 * above hold: ldar = acquire, stlr = release; the relaxed variant's publish
 * of head is a plain str). */
#define RING_ASM(NAME, PUBLISH)                                              \
    __asm__(".text\n.p2align 2\n.type " #NAME "_push, %function\n"          \
            #NAME "_push:\n"                                                 \
            "  add x9, x0, #0x8\n"                                           \
            "  ldr x8, [x0]\n"                                               \
            "  ldar x9, [x9]\n"                                              \
            "  sub x9, x8, x9\n"                                             \
            "  cmp x9, #0x2\n"                                               \
            "  b.ne 1f\n"                                                    \
            "  mov w0, wzr\n"                                                \
            "  ret\n"                                                        \
            "1: and x9, x8, #0x1\n"                                          \
            "  add x10, x8, #0x1\n"                                          \
            "  mov w8, #0x1\n"                                               \
            "  add x9, x0, x9, lsl #3\n"                                     \
            "  str x1, [x9, #16]\n"                                          \
            "  " PUBLISH " x10, [x0]\n"                                      \
            "  mov w0, w8\n"                                                 \
            "  ret\n"                                                        \
            ".size " #NAME "_push, .-" #NAME "_push\n"                        \
            ".type " #NAME "_pop, %function\n"                               \
            #NAME "_pop:\n"                                                  \
            "  ldr x8, [x0, #8]\n"                                           \
            "  ldar x9, [x0]\n"                                              \
            "  cmp x8, x9\n"                                                 \
            "  b.ne 1f\n"                                                    \
            "  mov w0, wzr\n"                                                \
            "  ret\n"                                                        \
            "1: and x9, x8, #0x1\n"                                          \
            "  add x8, x8, #0x1\n"                                           \
            "  add x10, x0, #0x8\n"                                          \
            "  add x9, x0, x9, lsl #3\n"                                     \
            "  mov w0, #0x1\n"                                               \
            "  ldr x9, [x9, #16]\n"                                          \
            "  str x9, [x1]\n"                                               \
            "  stlr x8, [x10]\n"                                             \
            "  ret\n"                                                        \
            ".size " #NAME "_pop, .-" #NAME "_pop\n");                       \
    int NAME##_push(void *p, uint64_t item);                                 \
    int NAME##_pop(void *p, uint64_t *item);
RING_ASM(ring_computed, "stlr")
RING_ASM(ring_computed_relaxed_head, "str")
#endif

/* --- refcount --------------------------------------------------------- */

static void *count_new(void) {
    _Atomic long *c = calloc(1, sizeof *c);
    /* ORDERING: relaxed (atomic_init): no other thread has the object
     * yet; handing it over orders it. */
    if (c)
        atomic_init(c, 1);
    return c;
}

static void count_get(void *p) {
    /* ORDERING: relaxed: a new reference is taken through one already
     * held, which orders the object (refcount_inc). */
    atomic_fetch_add_explicit((_Atomic long *)p, 1, memory_order_relaxed);
}

#define PUT(NAME, DEC_ORDER)                                                 \
    static int NAME##_put(void *p) {                                         \
        /* ORDERING: DEC_ORDER: release makes this holder's uses happen    \
         * before the last put; relaxed (refcount-relaxed-put) is the bug   \
         * under test. */                                                    \
        if (atomic_fetch_sub_explicit((_Atomic long *)p, 1, DEC_ORDER) != 1) \
            return 0;                                                        \
        /* ORDERING: acquire: the last holder sees every other holder's     \
         * uses, pairing with their release decrements                     \
         * (refcount_dec_and_test). */                                       \
        atomic_thread_fence(memory_order_acquire);                           \
        return 1;                                                            \
    }

PUT(count, memory_order_release)
PUT(count_relaxed, memory_order_relaxed)

/* --- op --------------------------------------------------------------- */

static void *total_new(void) { return calloc(1, sizeof(_Atomic uint64_t)); }

static void fetch_add_op(void *p) {
    /* ORDERING: relaxed: a counter; only its total matters, and the
     * reader joins every thread first. */
    atomic_fetch_add_explicit((_Atomic uint64_t *)p, 1, memory_order_relaxed);
}

static void racy_add_op(void *p) {
    /* ORDERING: relaxed load and store, deliberately two steps (the bug
     * under test): another thread's increment between them is lost. */
    _Atomic uint64_t *c = p;
    uint64_t v = atomic_load_explicit(c, memory_order_relaxed);
    atomic_store_explicit(c, v + 1, memory_order_relaxed);
}

static uint64_t total_read(void *p) {
    /* ORDERING: relaxed: called after every thread was joined. */
    return atomic_load_explicit((_Atomic uint64_t *)p, memory_order_relaxed);
}

#ifdef VERIFY_BAD_NEW
static void *uninit_new(void) { return malloc(sizeof(_Atomic uint64_t)); }

/* A start value computed before the allocation and kept in a
 * callee-saved register across the call, as a mask computed from an spsc
 * new_'s capacity argument would be. */
__attribute__((noipa)) static uint64_t start_value(void) { return 7; }
static void *from_arg_new(void) {
    uint64_t start = start_value();
    _Atomic uint64_t *c = calloc(1, sizeof *c);
    if (c)
        atomic_init(c, start);
    return c;
}

static void *offset_new(void) {
    char *p = calloc(1, 128);
    return p ? p + 64 : NULL;
}
#endif

/* --- the description ---------------------------------------------------- */

#define SPSC(NAME, FN)                                                       \
    {.name = NAME_PREFIX NAME, .kind = ATOMLAB_KIND_SPSC,                    \
     .u.spsc = {.new_ = ring_new, .push = FN##_push, .pop = FN##_pop,        \
                .free_ = free}}
#define REFCOUNT(NAME, FN)                                                   \
    {.name = NAME_PREFIX NAME, .kind = ATOMLAB_KIND_REFCOUNT,                \
     .u.refcount = {.new_ = count_new, .get = count_get, .put = FN##_put,    \
                    .free_ = free}}
#define OP(NAME, FN, NEW, READ)                                              \
    {.name = NAME_PREFIX NAME, .kind = ATOMLAB_KIND_OP,                      \
     .u.op = {.new_ = NEW, .op = FN, .read = READ, .free_ = free}}

static const struct atomlab_variant variants[] = {
    SPSC("ring", ring),
    SPSC("ring-relaxed-head", ring_relaxed_head),
    REFCOUNT("refcount", count),
    REFCOUNT("refcount-relaxed-put", count_relaxed),
    OP("op-fetch-add", fetch_add_op, total_new, total_read),
    OP("op-racy-add", racy_add_op, total_new, total_read),
    OP("op-no-read", fetch_add_op, total_new, NULL),
#ifdef VERIFY_RING3
    {.name = NAME_PREFIX "ring3-wrap", .kind = ATOMLAB_KIND_SPSC,
     .u.spsc = {.new_ = ring3_new, .push = ring3_push, .pop = ring3_pop,
                .free_ = free}},
#endif
#if defined(VERIFY_RING_ASM) && defined(__aarch64__)
    SPSC("ring-computed", ring_computed),
    SPSC("ring-computed-relaxed-head", ring_computed_relaxed_head),
#endif
#ifdef VERIFY_BAD_NEW
    OP("op-malloc-uninit", fetch_add_op, uninit_new, total_read),
    OP("op-from-arg", fetch_add_op, from_arg_new, total_read),
    OP("op-offset-new", fetch_add_op, offset_new, total_read),
#endif
};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "verify-kinds",
    .n_variants = sizeof variants / sizeof variants[0],
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
