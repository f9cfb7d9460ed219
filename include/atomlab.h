/*
 * atomlab.h: the plugin ABI of atomlab, version 1.
 *
 * A plugin is a shared library (ELF, built for the machine atomlab runs on)
 * that exports one function:
 *
 *     const struct atomlab_plugin *atomlab_plugin(void);
 *
 * It returns a pointer to a description that lives as long as the library
 * is loaded: the ABI version it was built against, and the variants it
 * provides, each a name, a kind and the function pointers of that kind.
 * atomlab loads the library with dlopen(3) (RTLD_NOW | RTLD_LOCAL), finds
 * the entry point with dlsym(3), checks the description before anything
 * runs, and calls the functions from as many threads as the benchmark or
 * stress test asks for.
 *
 * Versioning: ATOMLAB_PLUGIN_ABI_VERSION is raised whenever a struct below
 * changes shape. atomlab refuses a plugin whose version is higher than its
 * own (a plugin from the future) and runs any version it knows. All four
 * kinds below have been part of version 1 since it was first published,
 * so a version-1 plugin of any kind loads as it is.
 *
 * Kinds, what a variant of each provides, and what runs it (`--plugin
 * PATH` on these subcommands; a plugin with no variant of the kind a
 * subcommand takes is refused, naming the file and its kinds):
 *   lock      new_/lock/unlock/free_, optional try_lock:
 *             `atomlab bench lock`, `atomlab stress mutex`
 *   spsc      new_(capacity)/push/pop/free_: one producer, one consumer:
 *             `atomlab bench spsc` (flat out and --rate: items/s, each
 *             side's CPU, latency), `atomlab stress spsc` (lost,
 *             duplicated, reordered or torn items)
 *   refcount  new_/get/put (returns nonzero when that put was the last)/
 *             free_: `atomlab bench refcount` (a get and a put per
 *             operation), `atomlab stress refcount` (no use after the last
 *             put, no early "last", none missing)
 *   op        new_/op/free_, optional read: one operation on shared state
 *             (a counter, a fence sequence): `atomlab bench counter`
 * Every function is called with the object its kind's new_ returned, from
 * as many threads as the kind allows. atomlab calls free_ once per object,
 * after every thread is done with it.
 *
 * Examples of every kind, built by atomlab's tests:
 * crates/atomlab/tests/plugins/ticket.c (lock), ring.c (spsc),
 * refcount.c (refcount), op.c (op).
 *
 * Example (a ticket lock in C11):
 *
 *     #include <stdatomic.h>
 *     #include <stdlib.h>
 *     #include "atomlab.h"
 *     struct t { _Atomic unsigned next, serving; };
 *     static void *t_new(void) { return calloc(1, sizeof(struct t)); }
 *     static void t_lock(void *p) {
 *         struct t *l = p;
 *         unsigned me = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
 *         while (atomic_load_explicit(&l->serving, memory_order_acquire) != me) ;
 *     }
 *     static void t_unlock(void *p) {
 *         struct t *l = p;
 *         unsigned s = atomic_load_explicit(&l->serving, memory_order_relaxed);
 *         atomic_store_explicit(&l->serving, s + 1, memory_order_release);
 *     }
 *     static const struct atomlab_variant vs[] = {{
 *         .name = "my-ticket", .kind = ATOMLAB_KIND_LOCK,
 *         .u.lock = { .new_ = t_new, .lock = t_lock, .unlock = t_unlock, .free_ = free },
 *     }};
 *     static const struct atomlab_plugin p = {
 *         .abi_version = ATOMLAB_PLUGIN_ABI_VERSION, .name = "my-locks",
 *         .n_variants = 1, .variants = vs,
 *     };
 *     const struct atomlab_plugin *atomlab_plugin(void) { return &p; }
 *
 *     cc -O2 -shared -fPIC -o mylock.so mylock.c -I include
 *     atomlab bench lock --plugin ./mylock.so
 *     atomlab stress mutex --plugin ./mylock.so
 *
 * In Rust: crates/atomlab-plugin-abi (this ABI's types, Lock, Spsc,
 * Refcount and Op traits, and export_plugin! for a cdylib; examples in its
 * examples/rust_locks.rs, rust_spsc.rs and rust_refcount.rs).
 */
#ifndef ATOMLAB_H
#define ATOMLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes. */
#define ATOMLAB_PLUGIN_ABI_VERSION 1u

/* The name of the entry point atomlab looks up with dlsym(3). */
#define ATOMLAB_PLUGIN_ENTRY "atomlab_plugin"

/* What a variant is. */
enum atomlab_kind {
    ATOMLAB_KIND_LOCK = 1,
    ATOMLAB_KIND_SPSC = 2,
    ATOMLAB_KIND_REFCOUNT = 3,
    ATOMLAB_KIND_OP = 4,
};

/* A mutual-exclusion lock. `new_` returns an unlocked lock (NULL: out of
 * memory); `lock` blocks until the calling thread holds it; `unlock` is
 * called by the holder; `try_lock` (may be NULL) returns nonzero when it
 * took the lock. `free_` is called once, on an unlocked lock, when no
 * thread uses it any more. */
struct atomlab_lock {
    void *(*new_)(void);
    void (*lock)(void *lock);
    void (*unlock)(void *lock);
    int (*try_lock)(void *lock);
    void (*free_)(void *lock);
};

/* A single-producer single-consumer queue of nonzero 64-bit items.
 * `new_(capacity)` returns an empty queue holding at least `capacity`
 * items (NULL: out of memory); `push` (producer thread only) returns
 * nonzero when the item was enqueued, 0 when full; `pop` (consumer thread
 * only) stores the oldest item in `*item` and returns nonzero, or returns
 * 0 when empty. One thread pushes and one other pops, at the same time;
 * `free_` is called once, when neither does any more. An item must come
 * out of `pop` exactly once, in the order pushed, with the bits pushed:
 * `stress spsc` checks every one. */
struct atomlab_spsc {
    void *(*new_)(size_t capacity);
    int (*push)(void *queue, uint64_t item);
    int (*pop)(void *queue, uint64_t *item);
    void (*free_)(void *queue);
};

/* A reference count. `new_` returns an object with one reference (NULL:
 * out of memory); `get` adds one; `put` drops one and returns nonzero
 * exactly when that was the last. Any thread may call `get` and `put`, at
 * the same time as the others, while it holds a reference. atomlab calls
 * `free_` once per object, when no thread uses it any more: after the
 * last `put`, or, for a count that a bug left above zero or that said
 * "last" too early, at the end of the test (so that a broken count is
 * reported, not a crash on freed memory). */
struct atomlab_refcount {
    void *(*new_)(void);
    void (*get)(void *obj);
    int (*put)(void *obj);
    void (*free_)(void *obj);
};

/* One operation on shared state: `new_` returns the state (NULL: out of
 * memory), `op` is called by every thread on it at the same time (the
 * operation under test; `bench counter --contention private` gives each
 * thread a state of its own). `read` may be NULL; if not, it returns how
 * many times `op` has been called on the state since `new_` (a counter's
 * total), which atomlab checks after every run: a lost update is reported,
 * not timed. The operation fixes its own orderings: `--ordering` does not
 * apply to it. */
struct atomlab_op {
    void *(*new_)(void);
    void (*op)(void *state);
    uint64_t (*read)(void *state);
    void (*free_)(void *state);
};

/* One variant: its name on atomlab's command line and in its records
 * (letters, digits, '-', '_', '.'; at most 64 bytes), its kind, and the
 * member of `u` that kind names. */
struct atomlab_variant {
    const char *name;
    uint32_t kind; /* enum atomlab_kind */
    union {
        struct atomlab_lock lock;
        struct atomlab_spsc spsc;
        struct atomlab_refcount refcount;
        struct atomlab_op op;
    } u;
};

/* What a plugin provides. */
struct atomlab_plugin {
    uint32_t abi_version; /* ATOMLAB_PLUGIN_ABI_VERSION */
    const char *name;     /* the library's name, for people */
    size_t n_variants;
    const struct atomlab_variant *variants;
};

/* The one exported entry point. */
const struct atomlab_plugin *atomlab_plugin(void);

#ifdef __cplusplus
}
#endif

#endif /* ATOMLAB_H */
