/* Plugins that misbehave while they are loaded, chosen with -D, which
 * atomlab must refuse (exit 2, the file named) without dying, hanging,
 * exiting 0 or printing into its --json (issue 33): CTOR_CRASH (a
 * constructor that dereferences NULL), ENTRY_CRASH (atomlab_plugin()
 * does), BAD_VARIANTS (a garbage variants pointer), NULL_VARIANTS
 * (variants NULL with n_variants 2), CTOR_EXIT (a constructor calling
 * exit(0)), CTOR_SLEEP (a constructor that never returns), CTOR_PRINT (a
 * constructor and entry point that print to stdout, which is loaded and
 * runs). Also CELL_EXIT: a lock whose lock() calls exit(0), a bench cell
 * that ends without a result. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "atomlab.h"

/* Through a volatile pointer: the compiler cannot see the NULL and drop
 * the store (or the whole constructor) as undefined behaviour. */
static int *volatile nowhere = 0;

static void *obj_new(void) { return calloc(1, 64); }
static void nop(void *p) { (void)p; }

static void tas_lock(void *p) {
    /* ORDERING: acquire: the critical section stays after the exchange. */
    while (atomic_exchange_explicit((_Atomic int *)p, 1, memory_order_acquire))
        ;
}

static void tas_unlock(void *p) {
    /* ORDERING: release: the critical section stays before the store. */
    atomic_store_explicit((_Atomic int *)p, 0, memory_order_release);
}

__attribute__((unused)) static void exit_lock(void *p) {
    (void)p;
    exit(0);
}

#if defined(CTOR_CRASH) || defined(CTOR_EXIT) || defined(CTOR_SLEEP) || defined(CTOR_PRINT)
__attribute__((constructor)) static void at_load(void) {
#if defined(CTOR_CRASH)
    *nowhere = 1;
#elif defined(CTOR_EXIT)
    exit(0);
#elif defined(CTOR_SLEEP)
    for (;;)
        sleep(3600);
#else
    printf("{\"printed by\": \"a constructor\"}\n");
#endif
}
#endif

static const struct atomlab_variant variants[] = {{
#ifdef CELL_EXIT
    .name = "c-exits",
    .kind = ATOMLAB_KIND_LOCK,
    .u.lock = {.new_ = obj_new, .lock = exit_lock, .unlock = nop, .free_ = free},
#else
    .name = "c-hostile-tas",
    .kind = ATOMLAB_KIND_LOCK,
    .u.lock = {.new_ = obj_new, .lock = tas_lock, .unlock = tas_unlock, .free_ = free},
#endif
}};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "hostile",
#if defined(BAD_VARIANTS) || defined(NULL_VARIANTS)
    .n_variants = 2,
#else
    .n_variants = 1,
#endif
#if defined(BAD_VARIANTS)
    .variants = (const struct atomlab_variant *)(uintptr_t)0x10,
#elif defined(NULL_VARIANTS)
    .variants = 0,
#else
    .variants = variants,
#endif
};

const struct atomlab_plugin *atomlab_plugin(void) {
#ifdef ENTRY_CRASH
    *nowhere = 1;
#endif
#ifdef CTOR_PRINT
    printf("{\"printed by\": \"atomlab_plugin()\"}\n");
#endif
    return &plugin;
}
