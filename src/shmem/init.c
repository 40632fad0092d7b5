/* shmem layer: start-up and teardown, the PE queries, symmetric address translation and the error path
 * every call shares. shmem_init starts Kyoyu (unless the program did), creates the heap segment and
 * registers the program's writable data and bss as the data segment, so global and static variables are
 * symmetric too (same executable on every PE: same offsets from the segment's start, whatever ASLR did). */
#define _GNU_SOURCE
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/config.h"
#include "runtime/gpu.h"
#include "shmem/internal.h"

kyi_shmem_t kyi_shmem;

/* The last failure of a shmem call on this thread, for shmemx_last_error (cleared by reading it). */
static __thread int last_status;
static __thread int returning; /* inside a call that returns its status (kyi_shmem_returning) */

void kyi_shmem_returning(int on)
{
    returning += on ? 1 : -1;
}
static char abort_msg[512];

int kyi_shmem_failed(int status, const char *call)
{
    (void)call; /* named in ky_last_error() already */
    last_status = status;
    if (kyi_shmem.error_mode == SHMEMX_ERRORS_RETURN) return status;
    if (returning) {
        KYI_WARN(KYI_SUB_COMM, "%s", ky_last_error());
        return status;
    }
    snprintf(abort_msg, sizeof abort_msg, "%s", ky_last_error());
    kyi_fatal("%s (the OpenSHMEM call has no status to return: the job ends)", abort_msg);
}

int kyi_shmem_fail(int status, const char *call, const char *fmt, ...)
{
    char cause[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    kyi_fail(status, call, "%s", cause);
    return kyi_shmem_failed(status, call);
}

int kyi_shmem_ready(const char *call)
{
    if (kyi_shmem.initialized) return KY_OK; /* cleared by shmem_finalize, before Kyoyu's own teardown */
    kyi_fail(KY_ERR_NOT_INIT, call, "called before shmem_init or after shmem_finalize");
    /* Before init there is no job to end cleanly: say it and stop this process. */
    if (kyi_shmem.error_mode == SHMEMX_ERRORS_RETURN) return (last_status = KY_ERR_NOT_INIT);
    fprintf(stderr, "Kyoyu shmem: %s\n", ky_last_error());
    abort();
}

int kyi_shmem_bytes(const char *call, size_t n, size_t size, size_t *bytes)
{
    if (__builtin_mul_overflow(n, size, bytes)) /* (no division on the path of every put) */
        return kyi_shmem_fail(KY_ERR_ARG, call, "%zu elements of %zu bytes overflow size_t", n, size);
    if (KYI_SIZE_LOOKS_NEGATIVE(*bytes))
        return kyi_shmem_fail(KY_ERR_ARG, call, "%zu bytes looks like a negative count", *bytes);
    return KY_OK;
}

int kyi_shmem_xlate(const char *call, const char *what, const void *addr, size_t n, int pe, int *which,
                    size_t *off)
{
    *which = -1;
    *off = 0;
    KYI_CHECK(kyi_shmem_ready(call));
    if (pe < 0 || pe >= kyi_shmem.npes)
        return kyi_shmem_fail(KY_ERR_ARG, call, "target PE %d is out of range 0..%d", pe, kyi_shmem.npes - 1);
    const char *a = addr;
    for (int w = 0; w < KYI_SHM_NSEGS; w++) {
        const char *b = kyi_shmem.base[w];
        if (!b || a < b || a >= b + kyi_shmem.size[w]) continue;
        size_t o = (size_t)(a - b);
        if (n > kyi_shmem.size[w] - o)
            return kyi_shmem_fail(KY_ERR_RANGE, call,
                                  "%s %p + %zu bytes runs past the end of the %s (%zu bytes)", what, addr, n,
                                  w == KYI_SHM_HEAP ? "symmetric heap" : "data segment", kyi_shmem.size[w]);
        *which = w;
        *off = o;
        return KY_OK;
    }
    return kyi_shmem_fail(
        KY_ERR_ARG, call,
        "%s %p (for PE %d) is not symmetric: neither in the symmetric heap [%p, %p) nor in the "
        "program's global data [%p, %p)",
        what, addr, pe, (void *)kyi_shmem.base[0], (void *)(kyi_shmem.base[0] + kyi_shmem.size[0]),
        (void *)kyi_shmem.base[1], (void *)(kyi_shmem.base[1] + kyi_shmem.size[1]));
}

void *kyi_shmem_peer_addr(int which, size_t off, int pe)
{
    if (pe == kyi_shmem.me) return kyi_shmem.base[which] + off;
    char *peer = which == KYI_SHM_HEAP ? kyi_seg_peer_base(kyi_shmem.seg[which], pe) : NULL;
    return peer ? peer + off : NULL;
}

/* The main program's writable PT_LOAD segment (.data, .bss; the first object dl_iterate_phdr reports), less
 * its RELRO head (.got and friends, read-only after relocation: not the program's variables). */
static int find_data(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    char **range = arg, *relro_end = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) relro_end = (char *)(info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
        char *lo = (char *)(info->dlpi_addr + ph->p_vaddr), *hi = lo + ph->p_memsz;
        if (!range[0] || lo < range[0]) range[0] = lo;
        if (hi > range[1]) range[1] = hi;
    }
    if (relro_end && relro_end > range[0] && relro_end < range[1]) range[0] = relro_end;
    return 1; /* the main program only */
}

/* The heap's address in this process for every PE that has one here, looked up once: a put or get then
 * finds its target with one load (rma.c). Segments stay where ky_seg_create mapped them until shmem_finalize.
 */
static int map_heap(void)
{
    kyi_shmem.heap_peer = calloc((size_t)kyi_shmem.npes, sizeof *kyi_shmem.heap_peer);
    if (!kyi_shmem.heap_peer)
        return kyi_fail(KY_ERR_NOMEM, "shmem_init", "no memory for the heap's peer table");
    for (int pe = 0; pe < kyi_shmem.npes; pe++)
        kyi_shmem.heap_peer[pe] = kyi_shmem_peer_addr(KYI_SHM_HEAP, 0, pe);
    kyi_shmem.host_only = kyi_gpu_count() <= 0;
    kyi_shmem.poll = !kyi_progress_threaded();
    return KY_OK;
}

static int start(const char *call)
{
    if (kyi_shmem.initialized) return KY_OK; /* a second shmem_init is allowed and does nothing */
    if (!ky_initialized()) {
        int st = ky_init(NULL, NULL);
        if (st) {
            fprintf(stderr, "Kyoyu shmem: %s: ky_init failed: %s\n", call, ky_last_error());
            return st;
        }
        kyi_shmem.own_ky = 1;
    }
    kyi_shmem.me = ky_rank();
    kyi_shmem.npes = ky_nranks();
    size_t heap = kyi_setting_size(KYI_SET_SHMEM_HEAP_SIZE);
    int st = ky_seg_create(NULL, heap, KY_MEM_HOST, -1, &kyi_shmem.seg[KYI_SHM_HEAP]);
    if (!st)
        st = ky_seg_local(kyi_shmem.seg[KYI_SHM_HEAP], (void **)&kyi_shmem.base[KYI_SHM_HEAP],
                          &kyi_shmem.size[KYI_SHM_HEAP]);
    char *range[2] = {NULL, NULL};
    dl_iterate_phdr(find_data, range);
    if (!st)
        st = ky_seg_create(range[0], (size_t)(range[1] - range[0]), KY_MEM_HOST, -1,
                           &kyi_shmem.seg[KYI_SHM_DATA]);
    if (!st) {
        kyi_shmem.base[KYI_SHM_DATA] = range[0];
        kyi_shmem.size[KYI_SHM_DATA] = (size_t)(range[1] - range[0]);
    }
    if (!st) st = map_heap();
    if (!st) st = kyi_shmem_heap_init();
    if (!st) st = kyi_shmem_team_init();
    if (!st) st = kyi_shmem_amo_init();
    if (st) {
        fprintf(stderr, "Kyoyu shmem: %s: %s\n", call, ky_last_error());
        return st;
    }
    kyi_shmem.initialized = 1;
    /* Every PE has its segments and handlers before any PE's first access. */
    return ky_team_barrier(KY_TEAM_WORLD);
}

void shmem_init(void)
{
    if (start("shmem_init")) {
        fprintf(stderr, "Kyoyu shmem: shmem_init failed; the job ends\n");
        abort();
    }
}

int shmem_init_thread(int requested, int *provided)
{
    (void)requested;
    int st = start("shmem_init_thread");
    if (provided) *provided = SHMEM_THREAD_MULTIPLE;
    return st ? -1 : 0;
}

void shmem_query_thread(int *provided)
{
    if (provided) *provided = SHMEM_THREAD_MULTIPLE;
}

void start_pes(int npes)
{
    (void)npes;
    shmem_init();
}

void shmem_finalize(void)
{
    static const char *call = "shmem_finalize";
    if (!kyi_shmem.initialized) return;
    shmem_barrier_all();
    kyi_shmem_team_finalize();
    kyi_shmem_heap_finalize();
    for (int w = KYI_SHM_NSEGS - 1; w >= 0; w--) {
        int st = ky_seg_destroy(kyi_shmem.seg[w]);
        if (st) kyi_shmem_failed(st, call);
        kyi_shmem.seg[w] = NULL;
        kyi_shmem.base[w] = NULL;
        kyi_shmem.size[w] = 0;
    }
    kyi_shmem.initialized = 0;
    free(kyi_shmem.heap_peer); /* after the sizes: a put sees an empty heap first (rma.c) */
    kyi_shmem.heap_peer = NULL;
    if (kyi_shmem.own_ky) {
        kyi_shmem.own_ky = 0;
        ky_finalize();
    }
}

void shmem_global_exit(int status)
{
    fflush(stdout);
    fflush(stderr);
    /* The runtime's own abort (kyi_fatal) has a fixed exit code; the program asked for this one, which
     * mpirun passes on as the job's status. */
    kyi_rt_abort(status);
}

int shmem_my_pe(void)
{
    return kyi_shmem_ready("shmem_my_pe") ? -1 : kyi_shmem.me;
}
int shmem_n_pes(void)
{
    return kyi_shmem_ready("shmem_n_pes") ? -1 : kyi_shmem.npes;
}
int _my_pe(void)
{
    return shmem_my_pe();
}
int _num_pes(void)
{
    return shmem_n_pes();
}

int shmem_pe_accessible(int pe)
{
    return kyi_shmem.initialized && pe >= 0 && pe < kyi_shmem.npes;
}

int shmem_addr_accessible(const void *addr, int pe)
{
    if (!shmem_pe_accessible(pe)) return 0;
    for (int w = 0; w < KYI_SHM_NSEGS; w++) {
        const char *b = kyi_shmem.base[w];
        if (b && (const char *)addr >= b && (const char *)addr < b + kyi_shmem.size[w]) return 1;
    }
    return 0;
}

void *shmem_ptr(const void *dest, int pe)
{
    int which;
    size_t off;
    if (kyi_shmem_xlate("shmem_ptr", "dest", dest, 0, pe, &which, &off)) return NULL;
    return kyi_shmem_peer_addr(which, off, pe);
}

void shmem_info_get_version(int *major, int *minor)
{
    if (major) *major = SHMEM_MAJOR_VERSION;
    if (minor) *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
    if (name) snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

void shmem_pcontrol(const int level, ...)
{
    (void)level;
}

int shmemx_error_mode(int mode)
{
    int old = kyi_shmem.error_mode;
    kyi_shmem.error_mode = mode == SHMEMX_ERRORS_RETURN ? SHMEMX_ERRORS_RETURN : SHMEMX_ERRORS_ABORT;
    return old;
}

int shmemx_last_error(const char **msg)
{
    int st = last_status;
    last_status = 0;
    if (msg) *msg = st ? ky_last_error() : "";
    return st;
}
