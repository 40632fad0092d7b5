/* The raw path (KY_IO_RAW; the only path with a serial HDF5): HDF5 keeps the file's metadata on rank 0 alone,
 * and every rank moves its own bytes with pwrite and pread at the offset of the dataset's one extent.
 * Datasets are contiguous, allocated when created and never filled (dataset.c), so HDF5 writes none of their
 * bytes; rank 0 flushes the new dataset's metadata and sends its offset to every rank before any rank
 * writes (kyi_io_dset_extent), and sets the completion mark only after every rank's bytes were synced
 * (file.c). The file stays plain HDF5: only rank 0's library ever writes its structure.
 *
 * A piece's rows are cut into runs contiguous in both memory and the file (runs.c): host memory moves
 * straight from the block (halos left out, one call per run), the bounce pipeline's dense buffers of whole
 * rows in runs as long as the file allows. Whole 4 KiB pages of a written run whose memory lines up with the
 * file (the bounce buffers are placed so: kyi_io_raw_shift) go with O_DIRECT, past the page cache: a buffered
 * write and the fsync after it ran 15-30% slower (one H200 machine, 2026-11-27); the
 * unaligned head and tail of each run (pages that other ranks' runs or HDF5's metadata share) go through the
 * page cache, which merges writes of different bytes of one page. Reads of a file opened with ky_io_open take
 * the same way where the dataset has an extent; every rank has its own read-only HDF5 handle there, so
 * datasets of other writers (chunked, compressed) go through H5Dread instead (xfer.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

#define MAX_IO ((size_t)1 << 30) /* bytes per system call (Linux moves at most 2 GiB - 4 KiB) */

int kyi_io_raw_wanted(const char *call, int *raw)
{
#ifdef H5_HAVE_PARALLEL
    (void)call;
    *raw = kyi_setting_is(KYI_SET_IO_RAW, "1");
#else
    if (kyi_setting_is(KYI_SET_IO_RAW, "0"))
        return kyi_fail(KY_ERR_UNSUPPORTED, call,
                        "KY_IO_RAW=0 asks for parallel HDF5 (MPI-IO), and this Kyoyu was built with a serial "
                        "HDF5: use KY_IO_RAW=auto or 1 (docs/io.md)");
    *raw = 1;
#endif
    return KY_OK;
}

int kyi_io_dset_extent(const char *call, ky_io_file_t f, hid_t d, ky_io_type_t t, kyi_io_dset_t *ds)
{
    int st = KY_OK;
    ds->id = d;
    ds->off = KYI_IO_NO_EXTENT;
    if (d >= 0) {
        hid_t ft = H5Dget_type(d), h = kyi_io_h5type(t);
        haddr_t a = H5Dget_offset(d); /* HADDR_UNDEF: chunked, compact, or never allocated */
        if (a != HADDR_UNDEF && ft >= 0 && h >= 0 && H5Tequal(ft, h) > 0) ds->off = (uint64_t)a;
        if (ft >= 0) H5Tclose(ft);
    }
    if (f->raw && f->writing) {
        /* the dataset's object header on disk before any rank's bytes go in beside it: the file is valid
         * HDF5 whenever a rank writes */
        char why[256];
        if (d >= 0 && H5Fflush(f->fid, H5F_SCOPE_LOCAL) < 0)
            st =
                kyi_fail(KY_ERR_IO, call, "flushing %s failed: %s", f->tmp, kyi_io_h5_cause(why, sizeof why));
        if (MPI_Bcast(&ds->off, 1, MPI_UINT64_T, 0, f->comm) != MPI_SUCCESS && st == KY_OK)
            st = kyi_fail(KY_ERR_MPI, call, "sending the dataset's offset in %s failed", f->tmp);
    }
    return st;
}

static int raw_fd(const char *call, ky_io_file_t f)
{
    if (f->raw_fd >= 0) return KY_OK;
    const char *name = f->writing ? f->tmp : f->path;
    f->raw_fd = open(name, f->writing ? O_RDWR : O_RDONLY);
    if (f->raw_fd < 0)
        return kyi_fail(KY_ERR_IO, call, "opening %s for its raw bytes failed: %s", name, strerror(errno));
    /* writes only: reads through the page cache and its read-ahead were faster (0.92 against 0.64 GB/s with
     * O_DIRECT, 360 MB in 8 MiB pieces, one H200 machine, 2026-11-27; writes 0.78 against 0.92). Not an
     * error where refused (tmpfs, some overlays): everything through the page cache then. */
    if (f->writing && !kyi_setting_is(KYI_SET_IO_DIRECT, "0")) {
        f->raw_dfd = open(name, O_RDWR | O_DIRECT);
        if (f->raw_dfd < 0)
            KYI_INFO(KYI_SUB_IO, "%s: %s refuses O_DIRECT (%s): the raw path goes through the page cache",
                     call, name, strerror(errno));
    }
    return KY_OK;
}

int kyi_io_raw_close(const char *call, ky_io_file_t f, int sync)
{
    if (f->raw_dfd >= 0) close(f->raw_dfd);
    f->raw_dfd = -1;
    if (f->raw_fd < 0) return KY_OK;
    int st = KY_OK;
    /* one fsync covers the file whichever descriptor wrote (O_DIRECT bytes may still sit in the disk's cache)
     */
    if (sync && fsync(f->raw_fd) != 0)
        st = kyi_fail(KY_ERR_IO, call, "fsync of %s (raw path) failed: %s", f->tmp, strerror(errno));
    close(f->raw_fd);
    f->raw_fd = -1;
    return st;
}

size_t kyi_io_raw_shift(uint64_t off, const kyi_io_shape_t *sh, const kyi_io_piece_t *p, size_t r0)
{
    if (off == KYI_IO_NO_EXTENT) return 0;
    uint64_t lin = 0;
    for (int d = 0; d < sh->ndim; d++) {
        if (p->g[d]) return 0;
        lin = lin * sh->dims[d] + p->g0[d] + (d == 0 ? r0 : 0);
    }
    return (size_t)((off + lin * sh->elem) & (KYI_IO_PAGE - 1));
}

/* Rows [r0, r1) of p as a piece of their own: in the block, or in a dense buffer of just those rows. */
static void sub_piece(const kyi_io_shape_t *sh, const kyi_io_piece_t *p, size_t r0, size_t r1, void *mem,
                      int dense, kyi_io_piece_t *q)
{
    *q = *p;
    q->n[0] = r1 - r0;
    q->g0[0] = p->g0[0] + r0;
    if (p->g[0]) q->g[0] = p->g[0] + r0;
    if (!dense) {
        q->origin = p->origin + r0 * p->S[0] * sh->elem;
        return;
    }
    q->origin = mem;
    q->S[sh->ndim - 1] = 1;
    for (int d = sh->ndim - 2; d >= 0; d--) q->S[d] = q->S[d + 1] * q->n[d + 1];
}

/* len bytes at file offset fo from (into) mem through fd, in calls of at most MAX_IO: 0, or the errno of
 * the first failed call (*at: its offset; EIO standing for an early end of file). Touches nothing shared, so
 * several threads may run it on parts of one span. */
static int span_calls(int fd, uint64_t fo, size_t len, char *mem, int put, uint64_t *at)
{
    for (size_t done = 0; done < len;) {
        size_t k = len - done < MAX_IO ? len - done : MAX_IO;
        ssize_t r = put ? pwrite(fd, mem + done, k, (off_t)(fo + done))
                        : pread(fd, mem + done, k, (off_t)(fo + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            *at = fo + done;
            return r < 0 ? errno : EIO;
        }
        done += (size_t)r;
    }
    return 0;
}

typedef struct {
    int fd, put, err;
    uint64_t fo, at;
    size_t len;
    char *mem;
} part_t;

static void *part_main(void *arg)
{
    part_t *q = arg;
    q->err = span_calls(q->fd, q->fo, q->len, q->mem, q->put, &q->at);
    return NULL;
}

#define KYI_IO_PART_MIN ((size_t)1 << 20) /* a thread's part is at least 1 MiB */
#define KYI_IO_MAX_THREADS 64

/* span_calls over KY_IO_THREADS threads (this one among them), each a page-aligned part: a virtual or
 * network disk serves several requests in flight faster than one after the other. The parts start at
 * page-aligned offsets of the span, so O_DIRECT parts stay aligned where the span is. */
static int span_parallel(int fd, uint64_t fo, size_t len, char *mem, int put, uint64_t *at)
{
    long t = kyi_setting_long(KYI_SET_IO_THREADS);
    if (t > KYI_IO_MAX_THREADS) t = KYI_IO_MAX_THREADS;
    if ((size_t)t > len / KYI_IO_PART_MIN) t = (long)(len / KYI_IO_PART_MIN);
    if (t < 2) return span_calls(fd, fo, len, mem, put, at);
    size_t each = (len / (size_t)t + KYI_IO_PAGE - 1) & ~(size_t)(KYI_IO_PAGE - 1);
    part_t q[KYI_IO_MAX_THREADS];
    pthread_t th[KYI_IO_MAX_THREADS];
    int started[KYI_IO_MAX_THREADS] = {0}, n = 0;
    for (size_t o = 0; o < len; o += each, n++)
        q[n] = (part_t){
            .fd = fd, .put = put, .fo = fo + o, .len = len - o < each ? len - o : each, .mem = mem + o};
    for (int i = 1; i < n; i++) started[i] = pthread_create(&th[i], NULL, part_main, &q[i]) == 0;
    for (int i = 0; i < n; i++)
        if (!started[i]) part_main(&q[i]); /* this thread's part, and any whose thread did not start */
    for (int i = 1; i < n; i++)
        if (started[i]) pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++)
        if (q[i].err) {
            *at = q[i].at;
            return q[i].err;
        }
    return 0;
}

/* len bytes at file offset fo from (into) mem through descriptor fd */
static int span(const char *call, ky_io_file_t f, int fd, uint64_t fo, size_t len, char *mem, int put)
{
    const char *name = f->writing ? f->tmp : f->path;
    uint64_t at = fo;
    int e = span_parallel(fd, fo, len, mem, put, &at);
    if (e == EINVAL && fd == f->raw_dfd) {
        /* the file system took O_DIRECT at open but not these requests: the page cache from now on (the whole
         * span again: what went in before the refusal is written once more, the same bytes) */
        KYI_INFO(KYI_SUB_IO, "%s: O_DIRECT %s of %s refused (%s): the raw path goes through the page cache",
                 call, put ? "write" : "read", name, strerror(e));
        close(f->raw_dfd);
        f->raw_dfd = -1;
        return span(call, f, f->raw_fd, fo, len, mem, put);
    }
    if (e)
        return kyi_fail(KY_ERR_IO, call, "%s %zu bytes at offset %llu of %s failed: %s",
                        put ? "writing" : "reading", len - (size_t)(at - fo), (unsigned long long)at, name,
                        e == EIO && !put ? "end of file or I/O error (is the file shorter than its datasets?)"
                                         : strerror(e));
    return KY_OK;
}

/* One run: its whole pages with O_DIRECT where memory and file line up, the edges through the page cache. */
static int one_run(const char *call, ky_io_file_t f, uint64_t fo, size_t len, char *mem, int put)
{
    const uint64_t pg = KYI_IO_PAGE;
    uint64_t a = (fo + pg - 1) & ~(pg - 1), b = (fo + len) & ~(pg - 1);
    if (!put || f->raw_dfd < 0 || (((uintptr_t)mem - fo) & (pg - 1)) != 0 || b <= a)
        return span(call, f, f->raw_fd, fo, len, mem, put);
    KYI_CHECK(span(call, f, f->raw_fd, fo, (size_t)(a - fo), mem, put));
    KYI_CHECK(span(call, f, f->raw_dfd, a, (size_t)(b - a), mem + (a - fo), put)); /* falls back itself */
    return span(call, f, f->raw_fd, b, (size_t)(fo + len - b), mem + (b - fo), put);
}

int kyi_io_raw_rows(const char *call, ky_io_file_t f, uint64_t off, const kyi_io_shape_t *sh,
                    const kyi_io_piece_t *p, size_t r0, size_t r1, void *mem, int dense, int put)
{
    if (off == KYI_IO_NO_EXTENT) return kyi_fail(KY_ERR_INTERNAL, call, "raw path without a dataset extent");
    KYI_CHECK(raw_fd(call, f));
    kyi_io_piece_t q;
    sub_piece(sh, p, r0, r1, mem, dense, &q);
    kyi_io_run_t *runs = NULL;
    size_t nr = 0;
    int st = kyi_io_piece_runs(call, sh, &q, &runs, &nr);
    for (size_t i = 0; i < nr && st == KY_OK; i++)
        st = one_run(call, f, off + runs[i].g * sh->elem, runs[i].n * sh->elem, (char *)runs[i].mem, put);
    free(runs);
    return st;
}
