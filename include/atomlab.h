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
 * own (a plugin from the future) and runs any version it knows.
 *
 * Kinds (this version of atomlab runs `lock`; the others are defined so
 * that plugins can be written against the final shape of the ABI):
 *   lock      new/lock/unlock/free, optional try_lock:
 *             `atomlab bench lock --plugin`, `atomlab stress mutex --plugin`
 *   spsc      new(capacity)/push/pop/free: one producer, one consumer
 *   refcount  new/get/put (returns nonzero when that put was the last)/free
 *   op        one operation on shared state (a counter, a fence sequence)
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
 * In Rust: crates/atomlab-plugin-abi (this ABI's types, a Lock trait and
 * export_locks! for a cdylib; example in its examples/rust_locks.rs).
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
 * items; `push` (producer thread only) returns nonzero when the item was
 * enqueued, 0 when full; `pop` (consumer thread only) stores the oldest
 * item in `*item` and returns nonzero, or returns 0 when empty. */
struct atomlab_spsc {
    void *(*new_)(size_t capacity);
    int (*push)(void *queue, uint64_t item);
    int (*pop)(void *queue, uint64_t *item);
    void (*free_)(void *queue);
};

/* A reference count. `new_` returns an object with one reference; `get`
 * adds one; `put` drops one and returns nonzero exactly when that was the
 * last (the caller then calls `free_`). */
struct atomlab_refcount {
    void *(*new_)(void);
    void (*get)(void *obj);
    int (*put)(void *obj);
    void (*free_)(void *obj);
};

/* One operation on shared state: `new_` returns the state, `op` is called
 * by every thread on it (the operation under test), `read` returns a value
 * the harness can check (e.g. a counter's total; may be NULL). */
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
