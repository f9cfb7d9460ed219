/* Locks for `atomlab verify`'s riscv64 and x86-64 tests
 * (tests/verify_arch.rs). Two must be refused, each doing one thing verify
 * cannot follow in the machine code of the architecture it is built for:
 * a system call instruction (`syscall`, `ecall`) while it waits, and an
 * instruction outside the supported set (a time-counter read: `rdtsc`,
 * `rdtime`); each must be REFUSED naming the instruction and its address,
 * never checked as if the instruction were not there. The third, `racy`,
 * is deliberately broken under every model: it tests and then sets with
 * two separate accesses, so two threads can both see the lock free; it
 * shows that x86-64 code, whose relaxed locks pass under x86tso, can
 * FAIL. `fenced` is a relaxed TAS made correct by seq_cst fences, and
 * `exported` calls an exported function of the file through the PLT:
 * both must PASS. None is ever run. */
#include <stdatomic.h>
#include <stdlib.h>
#include "atomlab.h"

static void *bool_new(void) { return calloc(1, sizeof(_Atomic int)); }

/* Thread-local storage no lock uses: its `.tbss` is laid out at the
 * addresses of the `.data.rel.ro` after it, where the description is;
 * verify must read the description's bytes there, not the TLS block's
 * zeros. */
_Thread_local int verify_arch_tls[16];

/* ORDERING: acquire on taking the lock pairs with the release in
 * release_unlock, as verify_locks.c's tas. */
static void syscall_lock(void *p) {
    _Atomic int *l = p;
    while (atomic_exchange_explicit(l, 1, memory_order_acquire)) {
#if defined(__x86_64__)
        long nr = 24; /* sched_yield(2) */
        __asm__ volatile("syscall" : "+a"(nr) : : "rcx", "r11", "memory");
#elif defined(__riscv)
        register long nr __asm__("a7") = 124; /* sched_yield(2) */
        register long ret __asm__("a0");
        __asm__ volatile("ecall" : "=r"(ret) : "r"(nr) : "memory");
#else
#error "verify_arch.c is built for x86-64 or riscv64"
#endif
    }
}

static void counter_lock(void *p) {
    _Atomic int *l = p;
#if defined(__x86_64__)
    unsigned lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
#elif defined(__riscv)
    unsigned long t;
    __asm__ volatile("rdtime %0" : "=r"(t));
#endif
    while (atomic_exchange_explicit(l, 1, memory_order_acquire))
        ;
}

/* BROKEN on purpose: the peek and the store are two accesses, not one
 * atomic read-modify-write (the orderings are right; atomicity is not). */
static void racy_lock(void *p) {
    _Atomic int *l = p;
    while (atomic_load_explicit(l, memory_order_acquire))
        ;
    atomic_store_explicit(l, 1, memory_order_relaxed);
}

/* ORDERING: the exchange and the store are relaxed; seq_cst fences after
 * taking and before freeing the lock give the order instead (gcc: `fence
 * rw,rw` on riscv64, `lock orq $0,(%rsp)` on x86-64). */
static void fenced_lock(void *p) {
    _Atomic int *l = p;
    while (atomic_exchange_explicit(l, 1, memory_order_relaxed))
        ;
    atomic_thread_fence(memory_order_seq_cst);
}

static void fenced_unlock(void *p) {
    atomic_thread_fence(memory_order_seq_cst);
    atomic_store_explicit((_Atomic int *)p, 0, memory_order_relaxed);
}

/* An exported function: `-fPIC` code calls it through the PLT (or, with
 * -fno-plt, a GOT slot), as it would a function of another library; the
 * file defines it, so verify follows this definition. ORDERING: acquire,
 * as syscall_lock. */
void verify_arch_acquire(_Atomic int *l) {
    while (atomic_exchange_explicit(l, 1, memory_order_acquire))
        ;
}

static void exported_lock(void *p) { verify_arch_acquire(p); }

/* ORDERING: release, pairing with the acquire exchanges above. */
static void release_unlock(void *p) {
    atomic_store_explicit((_Atomic int *)p, 0, memory_order_release);
}

static const struct atomlab_variant variants[] = {
    {.name = "syscall", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = bool_new, .lock = syscall_lock,
                .unlock = release_unlock, .free_ = free}},
    {.name = "counter", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = bool_new, .lock = counter_lock,
                .unlock = release_unlock, .free_ = free}},
    {.name = "fenced", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = bool_new, .lock = fenced_lock,
                .unlock = fenced_unlock, .free_ = free}},
    {.name = "exported", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = bool_new, .lock = exported_lock,
                .unlock = release_unlock, .free_ = free}},
    {.name = "racy", .kind = ATOMLAB_KIND_LOCK,
     .u.lock = {.new_ = bool_new, .lock = racy_lock,
                .unlock = release_unlock, .free_ = free}},
};

static const struct atomlab_plugin plugin = {
    .abi_version = ATOMLAB_PLUGIN_ABI_VERSION,
    .name = "verify-arch",
    .n_variants = sizeof variants / sizeof variants[0],
    .variants = variants,
};

const struct atomlab_plugin *atomlab_plugin(void) { return &plugin; }
