/* The hand-written loop atomlab's harness is compared against
 * (BENCHMARKS.md, "harness overhead"): N threads, each pinned, each doing
 * seq_cst fetch_adds (`lock add` on x86-64) on a shared line or on its own
 * padded line for SECONDS, in blocks of 1024 between checks of a stop flag
 * (a fixed iteration count would let the last thread finish alone,
 * uncontended, and flatter the contended figure). Timed with clock_gettime
 * around each thread's loop. Prints the mean ns per operation per thread.
 *
 * Build: gcc -O2 -pthread -o fetch_add bench/baseline/fetch_add.c
 * Run:   ./fetch_add THREADS SECONDS shared|private
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct line { _Alignas(128) uint64_t v; };

static struct line lines[64];
static int shared;
static double seconds;
static int stop;
static double ns_per_op[64];
static pthread_barrier_t start;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg) {
    long t = (long)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)t % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    uint64_t *c = &lines[shared ? 0 : t].v;
    pthread_barrier_wait(&start);
    uint64_t t0 = now_ns(), ops = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        for (int i = 0; i < 1024; i++)
            __atomic_fetch_add(c, 1, __ATOMIC_SEQ_CST);
        ops += 1024;
    }
    uint64_t t1 = now_ns();
    ns_per_op[t] = (double)(t1 - t0) / (double)ops;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s THREADS SECONDS shared|private\n", argv[0]);
        return 2;
    }
    long threads = atol(argv[1]);
    seconds = atof(argv[2]);
    shared = strcmp(argv[3], "shared") == 0;
    if (threads < 1 || threads > 64 || !(seconds > 0)) {
        fprintf(stderr, "THREADS must be 1..64 and SECONDS > 0\n");
        return 2;
    }
    pthread_t tid[64];
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (long t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, worker, (void *)t);
    pthread_barrier_wait(&start);
    struct timespec d = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&d, NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    double sum = 0;
    for (long t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        sum += ns_per_op[t];
    }
    printf("%.4f\n", sum / (double)threads);
    return 0;
}
