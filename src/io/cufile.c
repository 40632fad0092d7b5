/* The GPUDirect Storage path (KY_IO_PATH=cufile, or auto's choice): GPU memory written to and read from the
 * dataset's bytes in the file with cuFile, HDF5 keeping only the metadata. Datasets are created contiguous
 * and allocated at creation, objects of 4 KiB or more 4 KiB-aligned (dataset.c, file.c), so a dataset is one
 * extent at H5Dget_offset (kyi_io_dset_t.off: on the raw path rank 0 found it and sent it); each run of this
 * rank's piece that is contiguous in the file (a row, or whole rows where the piece spans the trailing
 * dimensions without halos) is one write at offset + the run's byte offset, straight from GPU memory. HDF5
 * never writes that extent (no fill values), so HDF5's own writes and these never meet.
 *
 * Descriptors: each rank opens the file itself, once per file: O_DIRECT (with the kernel driver nvidia-fs the
 * DMA goes GPU to disk; without it cuFile's compatibility mode stages through its own pinned buffers) where
 * the file system takes it, registered with cuFileHandleRegister; and a page-cache descriptor for the edges.
 * With O_DIRECT only whole 4 KiB pages go through cuFile: the unaligned head and tail of each run (a page
 * that another rank's run or HDF5's metadata shares) are copied through a small host buffer and written
 * through the page cache, which merges writes of different bytes of one page; a read-modify-write of a shared
 * page under O_DIRECT would lose the other writer's bytes. Where the file system refuses O_DIRECT (tmpfs,
 * some overlays) the whole run goes through cuFile on the plain descriptor (a note says so once).
 *
 * The checksum is computed on the GPU (checksum_gpu.cu): on this path the data never passes through host
 * memory, and a device-to-host copy only for the checksum would double the PCIe traffic the path saves.
 * cuFile's driver is opened once, when first needed, and closed at exit. Buffers are not registered with
 * cuFileBufRegister (the user's arrays change from call to call and registration costs more than it saves
 * for one write). Errors name the cuFile status (CU_FILE_* code and text) or errno. */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <cufile.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"
#include "runtime/log.h"

#define PAGE ((uint64_t)4096)
#define MAX_IO ((size_t)1 << 30) /* bytes per cuFile call */

typedef struct {
    int fd_direct; /* registered with cuFile: O_DIRECT where the file system allows it */
    int fd_buf;    /* through the page cache: the unaligned edges of runs */
    int direct;
    CUfileHandle_t h;
    char *edge; /* host staging for edges (< 2 pages) */
} cf_t;

static pthread_mutex_t drv_lock = PTHREAD_MUTEX_INITIALIZER;
static int drv_state; /* 0 not tried, 1 open, -1 failed */
static char drv_err[256];
static int noted_no_direct;
/* File systems (st_dev) where a file's cuFile registration failed: auto does not try them again */
#define REFUSED_MAX 16
static dev_t refused[REFUSED_MAX];
static int nrefused;

static const char *cf_text(CUfileError_t e, char *buf, size_t len)
{
    if (e.err == CU_FILE_CUDA_DRIVER_ERROR)
        snprintf(buf, len, "CU_FILE status %d (%s), CUDA driver error %d", (int)e.err,
                 cufileop_status_error(e.err), (int)e.cu_err);
    else
        snprintf(buf, len, "CU_FILE status %d (%s)", (int)e.err, cufileop_status_error(e.err));
    return buf;
}

/* cuFileRead/cuFileWrite's negative return: -1 with errno, a negative errno, or a negative CU_FILE status */
static const char *ret_text(ssize_t r, int err_no, char *buf, size_t len)
{
    int code = r < -1000000 ? -1000000 : (int)r; /* the status macros take an int */
    if (r == -1)
        snprintf(buf, len, "%s", strerror(err_no));
    else if (IS_CUFILE_ERR(code))
        snprintf(buf, len, "CU_FILE status %d (%s)", -code, CUFILE_ERRSTR(code));
    else
        snprintf(buf, len, "%s", strerror(-code));
    return buf;
}

static void driver_close(void)
{
    cuFileDriverClose();
}

static int driver(void)
{
    pthread_mutex_lock(&drv_lock);
    if (drv_state == 0) {
        cudaFree(0); /* the current device's primary context exists before cuFile looks for it */
        CUfileError_t e = cuFileDriverOpen();
        if (e.err == CU_FILE_SUCCESS) {
            drv_state = 1;
            atexit(driver_close); /* registered after CUDA's own exit handler, so it runs before it */
        } else {
            drv_state = -1;
            cf_text(e, drv_err, sizeof drv_err);
            KYI_INFO(KYI_SUB_IO, "cuFileDriverOpen failed: %s; the io layer's auto path stays on bounce",
                     drv_err);
        }
    }
    int s = drv_state;
    pthread_mutex_unlock(&drv_lock);
    return s;
}

int kyi_io_cufile_available(void)
{
    return driver() == 1;
}

static void cf_free(cf_t *c)
{
    if (c->fd_direct >= 0) close(c->fd_direct);
    if (c->fd_buf >= 0) close(c->fd_buf);
    free(c->edge);
    free(c);
}

int kyi_io_cufile_close(const char *call, ky_io_file_t f, int sync)
{
    cf_t *c = f->cufile;
    if (!c) return KY_OK;
    f->cufile = NULL;
    cuFileHandleDeregister(c->h);
    int st = KY_OK;
    if (sync && (fsync(c->fd_direct) != 0 || fsync(c->fd_buf) != 0))
        st = kyi_fail(KY_ERR_IO, call, "fsync of %s (cuFile path) failed: %s", f->tmp, strerror(errno));
    cf_free(c);
    return st;
}

static void fs_refuse(dev_t d)
{
    pthread_mutex_lock(&drv_lock);
    int known = 0;
    for (int i = 0; i < nrefused; i++) known |= refused[i] == d;
    if (!known && nrefused < REFUSED_MAX) refused[nrefused++] = d;
    pthread_mutex_unlock(&drv_lock);
}

static const char *file_name(ky_io_file_t f)
{
    return f->writing ? f->tmp : f->path;
}

void kyi_io_cufile_refuse_fs(ky_io_file_t f)
{
    struct stat sb;
    if (stat(file_name(f), &sb) == 0) fs_refuse(sb.st_dev);
}

int kyi_io_cufile_fs_refused(ky_io_file_t f)
{
    struct stat sb;
    if (stat(file_name(f), &sb) != 0) return 0;
    pthread_mutex_lock(&drv_lock);
    int known = 0;
    for (int i = 0; i < nrefused; i++) known |= refused[i] == sb.st_dev;
    pthread_mutex_unlock(&drv_lock);
    return known;
}

/* The file's cuFile state, opened on first use. */
static int cf_open(const char *call, ky_io_file_t f, cf_t **out)
{
    if (f->cufile) {
        *out = f->cufile;
        return KY_OK;
    }
    if (driver() != 1)
        return kyi_fail(KY_ERR_UNSUPPORTED, call, "KY_IO_PATH=cufile: cuFileDriverOpen failed: %s", drv_err);
    const char *name = f->writing ? f->tmp : f->path;
    int flags = f->writing ? O_RDWR : O_RDONLY;
    cf_t *c = calloc(1, sizeof *c);
    if (!c) return kyi_fail(KY_ERR_NOMEM, call, "no memory for the cuFile state of %s", name);
    c->fd_buf = -1;
    c->fd_direct = open(name, flags | O_DIRECT);
    c->direct = c->fd_direct >= 0;
    if (c->fd_direct < 0 && errno == EINVAL) {
        if (!noted_no_direct++)
            KYI_INFO(KYI_SUB_IO,
                     "%s: the file system refuses O_DIRECT (tmpfs, overlay?): cuFile works on a plain "
                     "descriptor there (through the page cache)",
                     name);
        c->fd_direct = open(name, flags);
    }
    int st = KY_OK;
    char why[256];
    if (c->fd_direct < 0 || (c->fd_buf = open(name, flags)) < 0)
        st = kyi_fail(KY_ERR_IO, call, "opening %s for the cuFile path failed: %s", name, strerror(errno));
    else if (!(c->edge = malloc(2 * PAGE)))
        st = kyi_fail(KY_ERR_NOMEM, call, "no memory for the cuFile path's edge buffer");
    if (st == KY_OK) {
        CUfileDescr_t d;
        memset(&d, 0, sizeof d);
        d.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
        d.handle.fd = c->fd_direct;
        CUfileError_t e = cuFileHandleRegister(&c->h, &d);
        struct stat sb;
        if (e.err != CU_FILE_SUCCESS && fstat(c->fd_direct, &sb) == 0) fs_refuse(sb.st_dev);
        if (e.err != CU_FILE_SUCCESS)
            st = kyi_fail(KY_ERR_IO, call, "cuFileHandleRegister of %s failed: %s%s", name,
                          cf_text(e, why, sizeof why), c->direct ? "" : " (opened without O_DIRECT)");
    }
    if (st != KY_OK) {
        cf_free(c);
        return st;
    }
    KYI_INFO(KYI_SUB_IO, "%s: cuFile handle registered (%s)", name, c->direct ? "O_DIRECT" : "no O_DIRECT");
    f->cufile = c;
    *out = c;
    return KY_OK;
}

int kyi_io_cufile_open(const char *call, ky_io_file_t f)
{
    cf_t *c = NULL;
    return cf_open(call, f, &c);
}

/* Whole pages through cuFile: [off, off + len) of the file from or to GPU address mem. */
static int direct_io(const char *call, cf_t *c, const char *name, uint64_t off, uint64_t len, char *mem,
                     int put)
{
    char why[160];
    for (uint64_t done = 0; done < len;) {
        size_t k = len - done < MAX_IO ? (size_t)(len - done) : MAX_IO;
        errno = 0;
        ssize_t r = put ? cuFileWrite(c->h, mem + done, k, (off_t)(off + done), 0)
                        : cuFileRead(c->h, mem + done, k, (off_t)(off + done), 0);
        if (r < 0)
            return kyi_fail(KY_ERR_IO, call, "%s %zu bytes at offset %llu of %s failed: %s",
                            put ? "cuFileWrite of" : "cuFileRead of", k, (unsigned long long)(off + done),
                            name, ret_text(r, errno, why, sizeof why));
        if (r == 0)
            return kyi_fail(KY_ERR_IO, call, "%s at offset %llu of %s moved nothing (end of file?)",
                            put ? "cuFileWrite" : "cuFileRead", (unsigned long long)(off + done), name);
        done += (uint64_t)r;
    }
    return KY_OK;
}

/* An unaligned edge (< 2 pages) through the page cache and the host buffer. */
static int edge_io(const char *call, cf_t *c, const char *name, uint64_t off, uint64_t len, char *mem,
                   int put)
{
    cudaError_t e;
    if (put && (e = cudaMemcpy(c->edge, mem, len, cudaMemcpyDeviceToHost)) != cudaSuccess)
        return kyi_fail(KY_ERR_CUDA, call, "copying %llu edge bytes from the GPU: %s",
                        (unsigned long long)len, cudaGetErrorString(e));
    for (uint64_t done = 0; done < len;) {
        ssize_t r = put ? pwrite(c->fd_buf, c->edge + done, len - done, (off_t)(off + done))
                        : pread(c->fd_buf, c->edge + done, len - done, (off_t)(off + done));
        if (r <= 0)
            return kyi_fail(KY_ERR_IO, call, "%s %llu bytes at offset %llu of %s failed: %s",
                            put ? "writing" : "reading", (unsigned long long)(len - done),
                            (unsigned long long)(off + done), name, r < 0 ? strerror(errno) : "end of file");
        done += (uint64_t)r;
    }
    if (!put && (e = cudaMemcpy(mem, c->edge, len, cudaMemcpyHostToDevice)) != cudaSuccess)
        return kyi_fail(KY_ERR_CUDA, call, "copying %llu edge bytes to the GPU: %s", (unsigned long long)len,
                        cudaGetErrorString(e));
    return KY_OK;
}

/* One run: the whole pages inside it through cuFile (O_DIRECT), its unaligned head and tail through the page
 * cache; without O_DIRECT all of it through cuFile. */
static int run_io(const char *call, cf_t *c, const char *name, uint64_t fo, uint64_t len, char *mem, int put)
{
    if (!c->direct) return direct_io(call, c, name, fo, len, mem, put);
    uint64_t a = (fo + PAGE - 1) / PAGE * PAGE, b = (fo + len) / PAGE * PAGE;
    if (a >= b) return edge_io(call, c, name, fo, len, mem, put);
    if (a > fo) KYI_CHECK(edge_io(call, c, name, fo, a - fo, mem, put));
    KYI_CHECK(direct_io(call, c, name, a, b - a, mem + (a - fo), put));
    if (fo + len > b) KYI_CHECK(edge_io(call, c, name, b, fo + len - b, mem + (b - fo), put));
    return KY_OK;
}

static int move(const char *call, ky_io_file_t f, uint64_t off, const kyi_io_shape_t *sh,
                const kyi_io_piece_t *p, uint64_t *cks, int put)
{
    const char *name = f->writing ? f->tmp : f->path;
    if (p->dev < 0) return kyi_fail(KY_ERR_INTERNAL, call, "the cuFile path was given host memory");
    if (off == KYI_IO_NO_EXTENT)
        return kyi_fail(KY_ERR_UNSUPPORTED, call,
                        "KY_IO_PATH=cufile: a dataset of %s has no single allocated extent of this machine's "
                        "number type (chunked, compact, never written, or another byte order); the cuFile "
                        "path moves raw bytes into one: use KY_IO_PATH=bounce",
                        name);
    cf_t *c = NULL;
    KYI_CHECK(cf_open(call, f, &c));
    int prev = -1;
    cudaGetDevice(&prev); /* the caller's current device, given back at the end */
    cudaError_t e = cudaSetDevice(p->dev);
    /* the application's kernels that wrote (or will read) the data are ordered before the file's bytes:
     * cuFile does not join any stream */
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    int st = KY_OK;
    kyi_io_run_t *runs = NULL;
    size_t nr = 0;
    if (e != cudaSuccess)
        st = kyi_fail(KY_ERR_CUDA, call, "GPU %d before cuFile I/O: %s", p->dev, cudaGetErrorString(e));
    if (st == KY_OK) st = kyi_io_piece_runs(call, sh, p, &runs, &nr);
    char why[256];
    uint64_t bytes = 0;
    if (st == KY_OK && put && kyi_io_gpu_checksum(p->dev, runs, nr, sh->elem, cks, why, sizeof why) != 0)
        st = kyi_fail(KY_ERR_CUDA, call, "checksum on GPU %d failed: %s", p->dev, why);
    for (size_t i = 0; i < nr && st == KY_OK; i++) {
        st = run_io(call, c, name, (uint64_t)off + runs[i].g * sh->elem, runs[i].n * sh->elem,
                    (char *)runs[i].mem, put);
        bytes += runs[i].n * sh->elem;
    }
    if (st == KY_OK && !put && kyi_io_gpu_checksum(p->dev, runs, nr, sh->elem, cks, why, sizeof why) != 0)
        st = kyi_fail(KY_ERR_CUDA, call, "checksum on GPU %d failed: %s", p->dev, why);
    KYI_TRACE(KYI_SUB_IO, "%s: cuFile %s %llu bytes in %zu runs at dataset offset %llu of %s", call,
              put ? "wrote" : "read", (unsigned long long)bytes, nr, (unsigned long long)off, name);
    free(runs);
    if (prev >= 0 && prev != p->dev) cudaSetDevice(prev);
    return st;
}

int kyi_io_cufile_put(const char *call, ky_io_file_t f, uint64_t off, const kyi_io_shape_t *sh,
                      const kyi_io_piece_t *p, uint64_t *cks)
{
    return move(call, f, off, sh, p, cks, 1);
}

int kyi_io_cufile_get(const char *call, ky_io_file_t f, uint64_t off, const kyi_io_shape_t *sh,
                      const kyi_io_piece_t *p, uint64_t *cks)
{
    return move(call, f, off, sh, p, cks, 0);
}
