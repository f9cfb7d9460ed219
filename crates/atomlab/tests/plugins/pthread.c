/* A plugin whose lock is the C library's own: `lock` and `unlock` point
 * straight at pthread_mutex_lock and pthread_mutex_unlock (the lock
 * argument is the mutex), so the audit line must read them from the C
 * library's file, not from this one. */
#include <pthread.h>
#include <stdlib.h>
#include "atomlab.h"

static void *pm_new(void) {
    pthread_mutex_t *m = malloc(sizeof *m);
    if (m)
        pthread_mutex_init(m, NULL);
    return m;
}

static const struct atomlab_variant variants[] = {{
    .name = "c-pthread",
    .kind = ATOMLAB_KIND_LOCK,
    .u.lock = {.new_ = pm_new,
               .lock = (void (*)(void *))pthread_mutex_lock,
               .unlock = (void (*)(void *))pthread_mutex_unlock,
               .free_ = free},
}};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "pthread",
    .n_variants = 1,
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
