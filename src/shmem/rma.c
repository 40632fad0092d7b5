/* shmem layer: put, get, p, g, iput, iget, their _nbi forms, put-with-signal, quiet and fence. Each call
 * translates the symmetric address to (segment, offset) and hands the transfer to comm (ky_put, ky_get,
 * ky_put_strided ...), which picks the path: a copy into the mapped heap of a same-node PE, or the MPI path.
 * _nbi transfers keep their comm handles here until shmem_quiet completes and frees them. */
#include <stdlib.h>
#include <string.h>

#include "shmem/internal.h"

/* ---- the _nbi handles --------------------------------------------------------------------------------- */

static pthread_mutex_t nbi_lock = PTHREAD_MUTEX_INITIALIZER;
static ky_handle_t *nbi;
static size_t nnbi, nbi_cap;
static atomic_size_t nbi_any; /* nnbi, read without the lock: a quiet with nothing in flight takes no lock */
/* An _nbi put copied straight into a mapped heap owes the fence a blocking one makes at once; the next quiet
 * or fence pays it (one fence for a window of puts). */
static atomic_int fence_owed;

/* This thread's _nbi copies into mapped heaps, added to comm's statistics (ky_comm_stats) by its next quiet
 * or fence rather than one by one: two locked additions per put were a fifth of an 8-byte _nbi put's time.
 * Initial-exec: a thread-local of a shared library is otherwise reached through a call on every access. */
typedef struct {
    size_t ops, bytes;
} tally_t;
static __thread __attribute__((tls_model("initial-exec"))) tally_t nbi_tally[2]; /* [pe == me] */

static void tally_flush(void)
{
    for (int self = 0; self < 2; self++)
        if (nbi_tally[self].ops) {
            kyi_count_paths(self ? KY_PATH_SELF : KY_PATH_SHM, nbi_tally[self].ops, nbi_tally[self].bytes);
            nbi_tally[self] = (tally_t){0, 0};
        }
}

/* Past this many in flight, finished ones are freed at the next issue (a loop of _nbi puts without a quiet
 * must not grow without bound). */
#define NBI_REAP 1024

static int track(const char *call, ky_handle_t h)
{
    pthread_mutex_lock(&nbi_lock);
    if (nnbi >= NBI_REAP && nnbi % NBI_REAP == 0) {
        size_t k = 0;
        for (size_t i = 0; i < nnbi; i++) {
            int st = ky_test(nbi[i]);
            if (st == KY_PENDING)
                nbi[k++] = nbi[i];
            else if (st < 0) {
                nnbi = k;
                atomic_store(&nbi_any, nnbi);
                pthread_mutex_unlock(&nbi_lock);
                return kyi_shmem_failed(st, call);
            }
        }
        nnbi = k;
        atomic_store(&nbi_any, nnbi);
    }
    if (nnbi == nbi_cap) {
        size_t ncap = nbi_cap ? 2 * nbi_cap : 256;
        ky_handle_t *n = realloc(nbi, ncap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&nbi_lock);
            ky_wait(h);
            return kyi_shmem_fail(KY_ERR_NOMEM, call, "no memory to track a non-blocking transfer");
        }
        nbi = n;
        nbi_cap = ncap;
    }
    nbi[nnbi++] = h;
    atomic_store(&nbi_any, nnbi);
    pthread_mutex_unlock(&nbi_lock);
    return KY_OK;
}

/* Every shmem transfer that can be in flight is an _nbi one with its handle here (blocking puts and atomics
 * are complete when they return), so completing these is the whole quiet: no ky_quiet, which would also
 * wait for the program's own ky_*_nb transfers. */
int kyi_shmem_quiet(const char *call)
{
    tally_flush();
    if (atomic_load_explicit(&fence_owed, memory_order_relaxed)) {
        atomic_store_explicit(&fence_owed, 0, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
    }
    if (!atomic_load(&nbi_any)) return KY_OK;
    pthread_mutex_lock(&nbi_lock);
    int st = nnbi ? ky_wait_all(nbi, nnbi) : KY_OK;
    nnbi = 0;
    atomic_store(&nbi_any, 0);
    pthread_mutex_unlock(&nbi_lock);
    return st ? kyi_shmem_failed(st, call) : KY_OK;
}

void shmem_quiet(void)
{
    /* the common case, nothing in flight, in a few loads */
    if (kyi_shmem.initialized && !atomic_load_explicit(&nbi_any, memory_order_acquire) &&
        !atomic_load_explicit(&fence_owed, memory_order_relaxed) && !nbi_tally[0].ops && !nbi_tally[1].ops)
        return;
    if (!kyi_shmem_ready("shmem_quiet")) kyi_shmem_quiet("shmem_quiet");
}

/* Ordering of puts to each PE: comm's fence completes the earlier ones first. Blocking puts are complete
 * already; the _nbi ones are what it orders. */
void shmem_fence(void)
{
    if (kyi_shmem_ready("shmem_fence")) return;
    tally_flush();
    atomic_store_explicit(&fence_owed, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&nbi_lock);
    int st = nnbi ? ky_wait_all(nbi, nnbi) : KY_OK;
    nnbi = 0;
    atomic_store(&nbi_any, 0);
    pthread_mutex_unlock(&nbi_lock);
    if (!st) st = ky_fence(-1);
    if (st) kyi_shmem_failed(st, "shmem_fence");
}

/* ---- contiguous -----------------------------------------------------------------------------------------
 */

/* Where [remote, remote + n) of pe's symmetric heap is mapped in this process, or NULL: not mapped here,
 * not in the heap, n == 0, before shmem_init or after shmem_finalize (size 0), or an error; the full path
 * (rma_full) sorts those out. One subtraction and two comparisons check the range: the common case of every
 * put and get costs no function call. */
static inline char *heap_direct(const void *remote, size_t n, int pe)
{
    size_t size = kyi_shmem.size[KYI_SHM_HEAP];
    size_t o = (size_t)((uintptr_t)remote - (uintptr_t)kyi_shmem.base[KYI_SHM_HEAP]);
    if (o >= size || n - 1 >= size - o || (unsigned)pe >= (unsigned)kyi_shmem.npes) return NULL;
    char *peer = kyi_shmem.heap_peer[pe];
    return peer ? peer + o : NULL;
}

/* A heap this process maps (same node, or this PE) and a host buffer: the copy is the whole transfer,
 * complete at once (the _nbi forms too), as comm's own shared-memory path does it, without its segment and
 * range checks or a handle. */
static inline void copy_direct(int put, char *p, void *local, size_t n, int pe, int nb)
{
    if (put) {
        memcpy(p, local, n);
        if (!nb)
            atomic_thread_fence(memory_order_seq_cst); /* before any later flag write, as comm's puts */
        else if (!atomic_load_explicit(&fence_owed, memory_order_relaxed))
            atomic_store_explicit(&fence_owed, 1, memory_order_relaxed);
    } else {
        atomic_thread_fence(memory_order_seq_cst); /* after any earlier flag read, as comm's gets */
        memcpy(local, p, n);
    }
    int self = pe == kyi_shmem.me;
    if (nb) {
        nbi_tally[self].ops++;
        nbi_tally[self].bytes += n;
    } else {
        kyi_count_path(self ? KY_PATH_SELF : KY_PATH_SHM, n);
    }
    if (kyi_shmem.poll) ky_poll(); /* serve the others (amo.c says why) */
}

/* Everything but the direct copy into the heap: the checks with their messages, the data segment, other
 * nodes, GPU buffers, n == 0. */
static __attribute__((noinline)) int rma_full(const char *call, int put, void *remote, void *local, size_t n,
                                              int pe, int nb)
{
    int which;
    size_t off;
    if (KYI_SIZE_LOOKS_NEGATIVE(n))
        return kyi_shmem_fail(KY_ERR_ARG, call, "%zu bytes looks like a negative count", n);
    if (!n) { /* nothing moves: any address will do (the standard allows NULL), the PE must still exist */
        KYI_CHECK(kyi_shmem_ready(call));
        if (pe < 0 || pe >= kyi_shmem.npes)
            return kyi_shmem_fail(KY_ERR_ARG, call, "target PE %d is out of range 0..%d", pe,
                                  kyi_shmem.npes - 1);
        return KY_OK;
    }
    KYI_CHECK(kyi_shmem_xlate(call, put ? "dest" : "source", remote, n, pe, &which, &off));
    if (!local) return kyi_shmem_fail(KY_ERR_ARG, call, "the local %s is NULL", put ? "source" : "dest");
    void *p = kyi_shmem_peer_addr(which, off, pe);
    if (p && kyi_ptr_dev(local) < 0) {
        copy_direct(put, p, local, n, pe, nb);
        return KY_OK;
    }
    ky_seg_t s = kyi_shmem.seg[which];
    int st;
    if (!nb) {
        st = put ? ky_put(pe, s, off, local, n) : ky_get(local, pe, s, off, n);
    } else {
        ky_handle_t h = NULL;
        st = put ? ky_put_nb(pe, s, off, local, n, &h) : ky_get_nb(local, pe, s, off, n, &h);
        if (!st) return track(call, h);
    }
    return st ? kyi_shmem_failed(st, call) : KY_OK;
}

/* Whether local is host memory. Without a GPU always; with GPUs comm asks CUDA once per page and remembers
 * host pages per thread (kyi_ptr_dev, which says why that is safe), behind two calls and a thread-local
 * lookup; the page of this thread's last host buffer is remembered here too, one load for a window of puts
 * from one buffer. */
static __thread __attribute__((tls_model("initial-exec"))) uintptr_t last_host_page; /* page + 1; 0: none */

static inline int local_is_host(const void *local)
{
    if (kyi_shmem.host_only) return 1;
    uintptr_t page = ((uintptr_t)local >> 12) + 1;
    if (page == last_host_page) return 1;
    if (kyi_ptr_dev(local) >= 0) return 0;
    last_host_page = page;
    return 1;
}

static inline int rma(const char *call, int put, void *remote, void *local, size_t n, int pe, int nb)
{
    char *p = heap_direct(remote, n, pe);
    if (p && local && local_is_host(local)) {
        copy_direct(put, p, local, n, pe, nb);
        return KY_OK;
    }
    return rma_full(call, put, remote, local, n, pe, nb);
}

int kyi_shmem_rma(const char *call, int put, void *remote, void *local, size_t n, int pe, int nb)
{
    return rma(call, put, remote, local, n, pe, nb);
}

static inline void rma_n(const char *call, int put, void *remote, const void *local, size_t nelems,
                         size_t size, int pe, int nb)
{
    size_t bytes;
    if (__builtin_mul_overflow(nelems, size, &bytes)) {
        kyi_shmem_bytes(call, nelems, size, &bytes); /* reports it */
        return;
    }
    rma(call, put, remote, (void *)local, bytes, pe, nb);
}

/* ---- strided ------------------------------------------------------------------------------------------- */

static void strided(const char *call, int put, void *remote, ptrdiff_t rstride, void *local,
                    ptrdiff_t lstride, size_t nelems, size_t size, int pe)
{
    kyi_shmem_strided(call, put, remote, rstride, local, lstride, nelems, size, pe);
}

int kyi_shmem_strided(const char *call, int put, void *remote, ptrdiff_t rstride, void *local,
                      ptrdiff_t lstride, size_t nelems, size_t size, int pe)
{
    KYI_CHECK(kyi_shmem_ready(call));
    if (!nelems) return KY_OK;
    if (rstride <= 0 || lstride <= 0) { /* comm's strides are distances forward: element by element */
        for (size_t i = 0; i < nelems; i++)
            KYI_CHECK(kyi_shmem_rma(call, put, (char *)remote + (ptrdiff_t)i * rstride * (ptrdiff_t)size,
                                    (char *)local + (ptrdiff_t)i * lstride * (ptrdiff_t)size, size, pe, 0));
        return KY_OK;
    }
    size_t span;
    KYI_CHECK(kyi_shmem_bytes(call, nelems - 1, (size_t)rstride * size, &span));
    KYI_CHECK(kyi_shmem_bytes(call, 1, span + size, &span));
    int which;
    size_t off;
    KYI_CHECK(kyi_shmem_xlate(call, put ? "dest" : "source", remote, span, pe, &which, &off));
    if (!local) return kyi_shmem_fail(KY_ERR_ARG, call, "the local %s is NULL", put ? "source" : "dest");
    size_t rs[1] = {(size_t)rstride * size}, ls[1] = {(size_t)lstride * size}, count[2] = {size, nelems};
    ky_seg_t s = kyi_shmem.seg[which];
    int st = put ? ky_put_strided(pe, s, off, rs, local, ls, count, 1)
                 : ky_get_strided(local, ls, pe, s, off, rs, count, 1);
    return st ? kyi_shmem_failed(st, call) : KY_OK;
}

/* ---- put with signal ------------------------------------------------------------------------------------
 */

static void put_signal(const char *call, void *dest, const void *source, size_t nelems, size_t size,
                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    if (kyi_shmem_ready(call)) return;
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD) {
        kyi_shmem_fail(KY_ERR_ARG, call, "sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD",
                       sig_op);
        return;
    }
    size_t bytes;
    if (kyi_shmem_bytes(call, nelems, size, &bytes)) return;
    /* The blocking put is in the target's memory when it returns, so the signal cannot overtake it. */
    if (kyi_shmem_rma(call, 1, dest, (void *)source, bytes, pe, 0)) return;
    kyi_shmem_amo(call, sig_op == SHMEM_SIGNAL_SET ? KYI_AMO_SET : KYI_AMO_ADD, sig_addr, 8, signal, 0, pe,
                  NULL);
}

uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

/* ---- the typed and sized names ------------------------------------------------------------------------- */

#define DEF_RMA(NAME, T)                                                                                    \
    void shmem_##NAME##_put(T *dest, const T *source, size_t nelems, int pe)                                \
    {                                                                                                       \
        rma_n("shmem_" #NAME "_put", 1, dest, source, nelems, sizeof(T), pe, 0);                            \
    }                                                                                                       \
    void shmem_##NAME##_get(T *dest, const T *source, size_t nelems, int pe)                                \
    {                                                                                                       \
        rma_n("shmem_" #NAME "_get", 0, (void *)source, dest, nelems, sizeof(T), pe, 0);                    \
    }                                                                                                       \
    void shmem_##NAME##_put_nbi(T *dest, const T *source, size_t nelems, int pe)                            \
    {                                                                                                       \
        rma_n("shmem_" #NAME "_put_nbi", 1, dest, source, nelems, sizeof(T), pe, 1);                        \
    }                                                                                                       \
    void shmem_##NAME##_get_nbi(T *dest, const T *source, size_t nelems, int pe)                            \
    {                                                                                                       \
        rma_n("shmem_" #NAME "_get_nbi", 0, (void *)source, dest, nelems, sizeof(T), pe, 1);                \
    }                                                                                                       \
    void shmem_##NAME##_p(T *dest, T value, int pe)                                                         \
    {                                                                                                       \
        rma_n("shmem_" #NAME "_p", 1, dest, &value, 1, sizeof(T), pe, 0);                                   \
    }                                                                                                       \
    T shmem_##NAME##_g(const T *source, int pe)                                                             \
    {                                                                                                       \
        T v;                                                                                                \
        memset(&v, 0, sizeof v);                                                                            \
        rma_n("shmem_" #NAME "_g", 0, (void *)source, &v, 1, sizeof(T), pe, 0);                             \
        return v;                                                                                           \
    }                                                                                                       \
    void shmem_##NAME##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                       \
        strided("shmem_" #NAME "_iput", 1, dest, dst, (void *)source, sst, nelems, sizeof(T), pe);          \
    }                                                                                                       \
    void shmem_##NAME##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                       \
        strided("shmem_" #NAME "_iget", 0, (void *)source, sst, dest, dst, nelems, sizeof(T), pe);          \
    }                                                                                                       \
    void shmem_##NAME##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,             \
                                   uint64_t signal, int sig_op, int pe)                                     \
    {                                                                                                       \
        put_signal("shmem_" #NAME "_put_signal", dest, source, nelems, sizeof(T), sig_addr, signal, sig_op, \
                   pe);                                                                                     \
    }                                                                                                       \
    void shmem_##NAME##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,         \
                                       uint64_t signal, int sig_op, int pe)                                 \
    {                                                                                                       \
        put_signal("shmem_" #NAME "_put_signal_nbi", dest, source, nelems, sizeof(T), sig_addr, signal,     \
                   sig_op, pe);                                                                             \
    }
SHMEMI_RMA_TYPES(DEF_RMA)

#define DEF_SIZED(BITS, BYTES)                                                                              \
    void shmem_put##BITS(void *dest, const void *source, size_t nelems, int pe)                             \
    {                                                                                                       \
        rma_n("shmem_put" #BITS, 1, dest, source, nelems, BYTES, pe, 0);                                    \
    }                                                                                                       \
    void shmem_get##BITS(void *dest, const void *source, size_t nelems, int pe)                             \
    {                                                                                                       \
        rma_n("shmem_get" #BITS, 0, (void *)source, dest, nelems, BYTES, pe, 0);                            \
    }                                                                                                       \
    void shmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)                       \
    {                                                                                                       \
        rma_n("shmem_put" #BITS "_nbi", 1, dest, source, nelems, BYTES, pe, 1);                             \
    }                                                                                                       \
    void shmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)                       \
    {                                                                                                       \
        rma_n("shmem_get" #BITS "_nbi", 0, (void *)source, dest, nelems, BYTES, pe, 1);                     \
    }                                                                                                       \
    void shmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,      \
                          int pe)                                                                           \
    {                                                                                                       \
        strided("shmem_iput" #BITS, 1, dest, dst, (void *)source, sst, nelems, BYTES, pe);                  \
    }                                                                                                       \
    void shmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,      \
                          int pe)                                                                           \
    {                                                                                                       \
        strided("shmem_iget" #BITS, 0, (void *)source, sst, dest, dst, nelems, BYTES, pe);                  \
    }                                                                                                       \
    void shmem_put##BITS##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,        \
                                  uint64_t signal, int sig_op, int pe)                                      \
    {                                                                                                       \
        put_signal("shmem_put" #BITS "_signal", dest, source, nelems, BYTES, sig_addr, signal, sig_op, pe); \
    }                                                                                                       \
    void shmem_put##BITS##_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,    \
                                      uint64_t signal, int sig_op, int pe)                                  \
    {                                                                                                       \
        put_signal("shmem_put" #BITS "_signal_nbi", dest, source, nelems, BYTES, sig_addr, signal, sig_op,  \
                   pe);                                                                                     \
    }
SHMEMI_SIZES(DEF_SIZED)

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    rma_n("shmem_putmem", 1, dest, source, nelems, 1, pe, 0);
}
void shmem_getmem(void *dest, const void *source, size_t nelems, int pe)
{
    rma_n("shmem_getmem", 0, (void *)source, dest, nelems, 1, pe, 0);
}
void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    rma_n("shmem_putmem_nbi", 1, dest, source, nelems, 1, pe, 1);
}
void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    rma_n("shmem_getmem_nbi", 0, (void *)source, dest, nelems, 1, pe, 1);
}
void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                         int sig_op, int pe)
{
    put_signal("shmem_putmem_signal", dest, source, nelems, 1, sig_addr, signal, sig_op, pe);
}
void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe)
{
    put_signal("shmem_putmem_signal_nbi", dest, source, nelems, 1, sig_addr, signal, sig_op, pe);
}
