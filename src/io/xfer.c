/* Moving one piece of this rank's memory (an array block or a caller's box) to or from its hyperslab of a
 * dataset. The paths are chosen once per dataset for all ranks (kyi_io_plan: the call's hint, KY_IO_PATH, or
 * for auto the measured table, table.c); then each piece in one line (move): host memory goes to HDF5
 * directly (HDF5 walks the block's strides, halos left out); GPU memory takes the bounce path (rows of the
 * piece in KY_IO_CHUNK pieces through two pinned buffers: the device-to-host copy of the next piece runs
 * while HDF5 writes this one, and on reads the host-to-device copy of this piece while HDF5 reads the next)
 * or the cuFile path (cufile.c). Writes are independent MPI-IO (ranks make different numbers of calls); the
 * file selection of a piece is one hyperslab for block distributions and a union of runs for cyclic ones.
 * On a raw file (KY_IO_RAW, serial HDF5) the same pieces go to raw.c's pwrite/pread at the dataset's offset
 * instead of H5Dwrite/H5Dread (datasets without an extent, from other writers, are read through HDF5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "runtime/config.h"
#include "runtime/gpu.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

/* The setting or the call's hint as one of ky_io_path_t's values */
static ky_io_path_t mode_of(const ky_io_opts_t *opts)
{
    if (opts && opts->path != KY_IO_PATH_DEFAULT) return opts->path;
    if (kyi_setting_is(KYI_SET_IO_PATH, "bounce")) return KY_IO_PATH_BOUNCE;
    if (kyi_setting_is(KYI_SET_IO_PATH, "cufile")) return KY_IO_PATH_CUFILE;
    return KY_IO_PATH_AUTO;
}

size_t kyi_io_piece_run_bytes(const kyi_io_shape_t *sh, const kyi_io_piece_t *p)
{
    size_t r = sh->elem;
    for (int d = sh->ndim - 1; d >= 0; d--) {
        if (p->g[d]) return r; /* cyclic: runs of one block at most; counted as one element's run */
        r *= p->n[d];
        if (p->n[d] != sh->dims[d] || (d > 0 && p->S[d - 1] != p->S[d] * p->n[d])) break;
    }
    return r;
}

/* Elements of a piece (0: it moves nothing). */
static size_t piece_elems(const kyi_io_shape_t *sh, const kyi_io_piece_t *p)
{
    size_t n = 1;
    for (int d = 0; d < sh->ndim; d++) n *= p->n[d];
    return n;
}

int kyi_io_plan(const char *call, ky_io_file_t f, const kyi_io_dset_t *ds, const kyi_io_shape_t *sh,
                const kyi_io_piece_t *pc, int np, const ky_io_opts_t *opts, int put, kyi_io_plan_t *plan)
{
    ky_io_path_t mode = mode_of(opts);
    if ((unsigned)mode > KY_IO_PATH_CUFILE)
        return kyi_fail(KY_ERR_ARG, call, "opts->path %d is not a ky_io_path_t", (int)mode);
    /* Host memory: straight to HDF5, unless bounce is forced (then host pieces run the same pipeline with
     * plain copies: the pipeline is tested without a GPU and its cost measured against the direct path). */
    plan->host = mode == KY_IO_PATH_BOUNCE ? KYI_IO_BOUNCE : KYI_IO_HOST;
    plan->gpu = mode == KY_IO_PATH_CUFILE ? KYI_IO_CUFILE : KYI_IO_BOUNCE;
    plan->automatic = 0;
    const char *file = f->writing ? f->tmp : f->path;
    int gpu_data = 0; /* this rank moves GPU memory: it needs the file's cuFile handle */
    for (int i = 0; i < np; i++)
        if (piece_elems(sh, &pc[i]) && pc[i].dev >= 0) gpu_data = 1;
    /* forced cufile: the handle registered before any byte moves, so a file cuFile cannot take fails here
     * on every rank (the caller agrees) rather than after other ranks wrote (a dataset without an extent
     * is refused with its own reason by cufile.c) */
    if (mode == KY_IO_PATH_CUFILE)
        return gpu_data && ds->off != KYI_IO_NO_EXTENT ? kyi_io_cufile_open(call, f) : KY_OK;
    if (mode != KY_IO_PATH_AUTO) return KY_OK;
    /* auto: the size every rank moves on average, the same number everywhere */
    size_t total = sh->elem;
    for (int d = 0; d < sh->ndim; d++) total *= sh->dims[d];
    size_t per_rank = total / (size_t)(kyi_rt.nranks > 0 ? kyi_rt.nranks : 1);
    char fs[64], why[256];
    ky_io_fs_type(file, fs, sizeof fs);
    int want = kyi_io_table_choose(fs, put, per_rank, why, sizeof why);
    if (want < 0) {
        want = per_rank >= KYI_IO_AUTO_CUFILE_MIN ? KYI_IO_CUFILE : KYI_IO_BOUNCE;
        snprintf(why + strlen(why), sizeof why - strlen(why), "; built-in: cufile from %zu MiB per rank",
                 KYI_IO_AUTO_CUFILE_MIN >> 20);
    }
    /* cufile only where every rank can take it: the raw bytes of a contiguous dataset of the native type
     * (an extent), every piece in GPU memory, runs long enough, the driver working, the file registered */
    int ok = want == KYI_IO_CUFILE && ds->off != KYI_IO_NO_EXTENT;
    for (int i = 0; ok && i < np; i++)
        if (piece_elems(sh, &pc[i]) &&
            (pc[i].dev < 0 || kyi_io_piece_run_bytes(sh, &pc[i]) < KYI_IO_AUTO_RUN_MIN))
            ok = 0;
    int known = ok && (f->cufile_refused || kyi_io_cufile_fs_refused(f)); /* failed before: not tried again */
    if (known) ok = 0;
    if (ok) ok = kyi_io_cufile_available();
    int refused = 0;
    char cause[512] = "";
    if (ok && gpu_data && kyi_io_cufile_open(call, f) != KY_OK) {
        ok = 0;
        refused = 1;
        snprintf(cause, sizeof cause, "%s", ky_last_error());
    }
    int in[2] = {ok, !(refused || known)}, out[2] = {0, 0};
    if (MPI_Allreduce(in, out, 2, MPI_INT, MPI_MIN, f->comm) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, call, "agreeing on the io path failed");
    int all = out[0];
    if (!out[1]) { /* some rank's cuFile cannot take this file: every rank remembers it */
        f->cufile_refused = 1;
        kyi_io_cufile_refuse_fs(f);
    }
    if (refused)
        KYI_WARN(KYI_SUB_IO,
                 "%s: auto: cuFile cannot take %s on rank %d (%s): bounce used instead, on every "
                 "rank, for this file and later ones on its file system",
                 call, file, kyi_rt.rank, cause);
    plan->gpu = all ? KYI_IO_CUFILE : KYI_IO_BOUNCE;
    plan->automatic = all;
    KYI_INFO(KYI_SUB_IO, "%s: auto: %s for %zu bytes per rank on %s (%s%s)", call, all ? "cufile" : "bounce",
             per_rank, fs, why,
             want == KYI_IO_CUFILE && !all ? (!out[1] ? "; cuFile cannot register the file on some rank"
                                                      : "; cufile not possible on every rank")
                                           : "");
    return KY_OK;
}

int kyi_io_plan_fallback(const char *call, ky_io_file_t f, kyi_io_plan_t *plan, int st)
{
    if (!plan->automatic) return 0;
    /* bad arguments are not cuFile's: they fail again through bounce and are reported as they are */
    int me[2] = {st < 0 && st != KY_ERR_ARG ? 1 : 0, kyi_rt.rank}, all[2]; /* MAXLOC: the lowest such rank */
    if (MPI_Allreduce(me, all, 1, MPI_2INT, MPI_MAXLOC, f->comm) != MPI_SUCCESS || !all[0]) return 0;
    plan->gpu = KYI_IO_BOUNCE;
    plan->automatic = 0;
    f->cufile_refused = 1;
    const char *file = f->writing ? f->tmp : f->path;
    if (me[0])
        KYI_WARN(KYI_SUB_IO,
                 "%s: auto: cuFile failed on %s on rank %d (%s): the whole transfer is redone "
                 "through bounce on every rank",
                 call, file, kyi_rt.rank, ky_last_error());
    else
        KYI_INFO(KYI_SUB_IO,
                 "%s: auto: cuFile failed on %s on rank %d: the whole transfer is redone through "
                 "bounce",
                 call, file, all[1]);
    return 1;
}

/* The bounce path's copy for a host piece: rows of the box between the strided block and the dense buffer. */
static void host_rows(const kyi_io_shape_t *sh, const kyi_io_piece_t *p, const size_t c[], char *blk,
                      char *dense, int to_dense)
{
    int nd = sh->ndim;
    size_t el = sh->elem, line = c[nd - 1] * el, lines = 1, l[KY_ARRAY_MAX_DIMS] = {0};
    for (int d = 0; d < nd - 1; d++) lines *= c[d];
    for (size_t k = 0; k < lines; k++) {
        size_t off = 0;
        for (int d = 0; d < nd - 1; d++) off += l[d] * p->S[d];
        if (to_dense)
            memcpy(dense + k * line, blk + off * el, line);
        else
            memcpy(blk + off * el, dense + k * line, line);
        for (int d = nd - 2; d >= 0 && ++l[d] == c[d]; d--) l[d] = 0;
    }
}

/* Runs of consecutive global indices of local range [a, b) along d: starts and lengths. */
static size_t runs(const kyi_io_piece_t *p, int d, size_t a, size_t b, hsize_t *st, hsize_t *len)
{
    if (!p->g[d]) {
        st[0] = p->g0[d] + a;
        len[0] = b - a;
        return 1;
    }
    size_t n = 0;
    for (size_t l = a; l < b; l++) {
        if (n && p->g[d][l] == st[n - 1] + len[n - 1]) {
            len[n - 1]++;
        } else {
            st[n] = p->g[d][l];
            len[n++] = 1;
        }
    }
    return n;
}

/* Select rows [r0, r1) of piece p in the file space. */
static int select_file(hid_t fsp, const kyi_io_shape_t *sh, const kyi_io_piece_t *p, size_t r0, size_t r1)
{
    int nd = sh->ndim, hn = nd + (sh->comp > 1);
    hsize_t *st[KY_ARRAY_MAX_DIMS] = {0}, *len[KY_ARRAY_MAX_DIMS] = {0};
    size_t nr[KY_ARRAY_MAX_DIMS], idx[KY_ARRAY_MAX_DIMS] = {0};
    int bad = 0;
    for (int d = 0; d < nd && !bad; d++) {
        size_t a = d == 0 ? r0 : 0, b = d == 0 ? r1 : p->n[d];
        st[d] = malloc(sizeof(hsize_t) * (b - a + 1));
        len[d] = malloc(sizeof(hsize_t) * (b - a + 1));
        bad = !st[d] || !len[d];
        if (!bad) nr[d] = runs(p, d, a, b, st[d], len[d]);
    }
    H5Sselect_none(fsp);
    for (int first = 1; !bad;) {
        hsize_t s[KYI_IO_MAXD], c[KYI_IO_MAXD], b[KYI_IO_MAXD];
        for (int d = 0; d < nd; d++) s[d] = st[d][idx[d]], c[d] = 1, b[d] = len[d][idx[d]];
        if (hn > nd) s[nd] = 0, c[nd] = 1, b[nd] = (hsize_t)sh->comp;
        if (H5Sselect_hyperslab(fsp, first ? H5S_SELECT_SET : H5S_SELECT_OR, s, NULL, c, b) < 0) bad = 1;
        first = 0;
        int d = nd - 1;
        while (d >= 0 && ++idx[d] == nr[d]) idx[d--] = 0;
        if (d < 0) break;
    }
    for (int d = 0; d < nd; d++) free(st[d]), free(len[d]);
    return bad ? -1 : 0;
}

/* Memory space of rows [r0, r1): inside the padded block (direct) or a dense buffer of those rows. */
static hid_t mem_space(const kyi_io_shape_t *sh, const kyi_io_piece_t *p, size_t r0, size_t r1, int dense)
{
    int nd = sh->ndim, hn = nd + (sh->comp > 1);
    hsize_t dims[KYI_IO_MAXD], s[KYI_IO_MAXD], c[KYI_IO_MAXD];
    for (int d = 0; d < nd; d++) {
        dims[d] = dense ? (d == 0 ? r1 - r0 : p->n[d]) : p->E[d];
        s[d] = dense ? 0 : p->off[d] + (d == 0 ? r0 : 0);
        c[d] = d == 0 ? r1 - r0 : p->n[d];
    }
    if (hn > nd) dims[nd] = c[nd] = (hsize_t)sh->comp, s[nd] = 0;
    hid_t m = H5Screate_simple(hn, dims, NULL);
    if (m >= 0 && !dense && H5Sselect_hyperslab(m, H5S_SELECT_SET, s, NULL, c, NULL) < 0) {
        H5Sclose(m);
        return -1;
    }
    return m;
}

/* One transfer of rows [r0, r1) between `mem` (block origin's allocation start when direct, else a
 * dense buffer) and the file: through HDF5, or raw at the dataset's offset on a raw file. */
static int h5xfer(const char *call, ky_io_file_t f, const kyi_io_dset_t *ds, hid_t fsp,
                  const kyi_io_shape_t *sh, const kyi_io_piece_t *p, size_t r0, size_t r1, void *mem,
                  int dense, int put)
{
    if (f->raw && ds->off != KYI_IO_NO_EXTENT)
        return kyi_io_raw_rows(call, f, ds->off, sh, p, r0, r1, mem, dense, put);
    hid_t dset = ds->id;
    char why[256];
    const char *file = f->writing ? f->tmp : f->path;
    if (dset < 0) /* a raw file being written: its datasets always have an extent */
        return kyi_fail(KY_ERR_INTERNAL, call,
                        "no HDF5 handle of %s on this rank for a dataset without extent", file);
    hid_t m = mem_space(sh, p, r0, r1, dense);
    hid_t x = H5Pcreate(H5P_DATASET_XFER);
#ifdef H5_HAVE_PARALLEL
    if (!f->raw) H5Pset_dxpl_mpio(x, H5FD_MPIO_INDEPENDENT);
#endif
    int st = KY_OK;
    if (m < 0 || select_file(fsp, sh, p, r0, r1) < 0)
        st = kyi_fail(KY_ERR_IO, call, "selecting rows %zu..%zu of a piece in %s failed: %s", r0, r1, file,
                      kyi_io_h5_cause(why, sizeof why));
    else if ((put ? H5Dwrite(dset, kyi_io_h5type(sh->type), m, fsp, x, mem)
                  : H5Dread(dset, kyi_io_h5type(sh->type), m, fsp, x, mem)) < 0)
        st = kyi_fail(KY_ERR_IO, call, "%s %s failed: %s", put ? "writing to" : "reading from", file,
                      kyi_io_h5_cause(why, sizeof why));
    if (m >= 0) H5Sclose(m);
    H5Pclose(x);
    return st;
}

static size_t rows_total(const kyi_io_piece_t *p, int nd, size_t *rowelems)
{
    size_t r = 1;
    for (int d = 1; d < nd; d++) r *= p->n[d];
    *rowelems = r;
    return r ? p->n[0] : 0;
}

/* Start of the allocation whose index off[] is the origin: what HDF5's memory space describes. */
static char *alloc_start(const kyi_io_shape_t *sh, const kyi_io_piece_t *p)
{
    size_t o = 0;
    for (int d = 0; d < sh->ndim; d++) o += p->off[d] * p->S[d];
    return p->origin - o * sh->elem;
}

/* Rows [r0, r1) of a GPU piece to (d2h) or from a dense host buffer, queued on the piece's device. */
static int gpu_rows(const char *call, const kyi_io_shape_t *sh, const kyi_io_piece_t *p, size_t r0, size_t r1,
                    void *host, int d2h, kyi_gpu_op_t **op)
{
    int nd = sh->ndim, lv = nd - 1;
    size_t el = sh->elem, cnt[4], ds[3], hs[3], dn[KY_ARRAY_MAX_DIMS];
    size_t c[KY_ARRAY_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) c[d] = d == 0 ? r1 - r0 : p->n[d];
    dn[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--) dn[d] = dn[d + 1] * c[d + 1];
    cnt[0] = c[nd - 1] * el;
    for (int i = 1; i <= lv; i++) {
        cnt[i] = c[nd - 1 - i];
        ds[i - 1] = p->S[nd - 1 - i] * el;
        hs[i - 1] = dn[nd - 1 - i] * el;
    }
    char *dev = p->origin + r0 * p->S[0] * el;
    if (p->dev < 0) { /* a host piece on the forced bounce path: done now, nothing to wait for */
        host_rows(sh, p, c, dev, host, d2h);
        *op = NULL;
        return KY_OK;
    }
    int st = d2h ? kyi_gpu_copy_strided_async(p->dev, host, hs, dev, ds, cnt, lv, op)
                 : kyi_gpu_copy_strided_async(p->dev, dev, ds, host, hs, cnt, lv, op);
    if (st < 0)
        return kyi_fail(st, call, "copy of rows %zu..%zu %s GPU %d failed: %s", r0, r1, d2h ? "from" : "to",
                        p->dev, kyi_gpu_last_error());
    return KY_OK;
}

static int finish(const char *call, kyi_gpu_op_t **op)
{
    if (!*op) return KY_OK;
    int st = kyi_gpu_op_wait(*op);
    kyi_gpu_op_free(*op);
    *op = NULL;
    return st < 0 ? kyi_fail(st, call, "GPU copy failed: %s", kyi_gpu_last_error()) : KY_OK;
}

/* The two pinned buffers, each of at least `bytes`, kept by the file for its later calls. */
void kyi_io_pin_free(ky_io_file_t f)
{
    for (int i = 0; i < 2; i++) {
        if (f->pin[i]) f->pin_malloc ? free(f->pin[i]) : (void)kyi_gpu_host_free(f->pin[i]);
        f->pin[i] = NULL;
    }
    f->pin_bytes = 0;
    f->pin_malloc = 0;
}

static int pinned(const char *call, ky_io_file_t f, size_t bytes, int host)
{
    if (f->pin_bytes >= bytes && (host || !f->pin_malloc)) return KY_OK;
    kyi_io_pin_free(f);
    f->pin_bytes = 0;
    for (int i = 0; i < 2; i++) {
        /* pinned where CUDA is (copies at full speed, asynchronous); plain memory for host pieces without it
         */
        if (f->pin_malloc || kyi_gpu_host_alloc(bytes, &f->pin[i]) < 0) {
            if (!host)
                return kyi_fail(KY_ERR_NOMEM, call,
                                "no pinned host memory for two buffers of %zu bytes (KY_IO_CHUNK)", bytes);
            f->pin_malloc = 1; /* page-aligned as pinned memory is: the raw path's O_DIRECT pages line up */
            if (posix_memalign(&f->pin[i], KYI_IO_PAGE, bytes) != 0) {
                f->pin[i] = NULL;
                return kyi_fail(KY_ERR_NOMEM, call, "no memory for two buffers of %zu bytes (KY_IO_CHUNK)",
                                bytes);
            }
        }
    }
    f->pin_bytes = bytes;
    return KY_OK;
}

/* The piece's checksum on its GPU (runs.c's runs, checksum_gpu.cu); `quiet`: a failure only noted (the caller
 * falls back to the CPU). */
static int gpu_checksum(const char *call, const kyi_io_shape_t *sh, const kyi_io_piece_t *p, uint64_t *cks,
                        int quiet)
{
    kyi_io_run_t *runs = NULL;
    size_t nr = 0;
    uint64_t sum = 0;
    char why[256];
    int st = kyi_io_piece_runs(call, sh, p, &runs, &nr);
    if (st == KY_OK && kyi_io_gpu_checksum(p->dev, runs, nr, sh->elem, &sum, why, sizeof why) != 0) {
        if (quiet)
            KYI_INFO(KYI_SUB_IO, "%s: checksum on GPU %d failed (%s): computed on the CPU", call, p->dev,
                     why);
        st = quiet ? KY_ERR_CUDA : kyi_fail(KY_ERR_CUDA, call, "checksum on GPU %d failed: %s", p->dev, why);
    }
    free(runs);
    if (st == KY_OK) *cks += sum;
    return st;
}

static int bounce(const char *call, ky_io_file_t f, const kyi_io_dset_t *ds, hid_t fsp,
                  const kyi_io_shape_t *sh, const kyi_io_piece_t *p, uint64_t *cks, int put)
{
    size_t re, n0 = rows_total(p, sh->ndim, &re), rowb = re * sh->elem;
    size_t chunk = kyi_setting_size(KYI_SET_IO_CHUNK);
    size_t R = chunk / rowb ? chunk / rowb : 1;
    if (R > n0) R = n0;
    /* on the raw path each piece of rows starts at its file offset's place in a page (kyi_io_raw_shift), so
     * that raw.c moves its whole pages with O_DIRECT: one page more per buffer */
    size_t slack = f->raw ? KYI_IO_PAGE : 0;
    KYI_CHECK(pinned(call, f, R * rowb + slack, p->dev < 0));
    char *buf[2];
    size_t dS[KY_ARRAY_MAX_DIMS];
    dS[sh->ndim - 1] = 1;
    for (int d = sh->ndim - 2; d >= 0; d--) dS[d] = dS[d + 1] * p->n[d + 1];
    kyi_gpu_op_t *op[2] = {NULL, NULL};
    int st = KY_OK;
    /* large GPU pieces: the checksum in one pass on the GPU (writes: before the copies, falling back to the
     * CPU if it fails; reads: after the last copy), not on the CPU beside each HDF5 transfer */
    int gpu_cks = p->dev >= 0 && n0 * rowb >= KYI_IO_GPU_CKS_MIN;
    /* trace: checksum, waits for copies, issuing copies, file calls (with the CPU checksum where taken) */
    double tm[4] = {0, 0, 0, 0}, t0 = kyi_io_now(), t1;
#define LAP(i) (t1 = kyi_io_now(), tm[i] += t1 - t0, t0 = t1)
    if (gpu_cks && put) gpu_cks = gpu_checksum(call, sh, p, cks, 1) == KY_OK;
    LAP(0);
#define PLACE(b, r0) (buf[b] = (char *)f->pin[b] + (slack ? kyi_io_raw_shift(ds->off, sh, p, r0) : 0))
    if (put) {
        st = gpu_rows(call, sh, p, 0, R, PLACE(0, 0), 1, &op[0]);
        LAP(2);
        for (size_t k = 0, r0 = 0; r0 < n0 && st == KY_OK; k++, r0 += R) {
            size_t r1 = r0 + R < n0 ? r0 + R : n0, b = k & 1;
            st = finish(call, &op[b]);
            LAP(1);
            if (st == KY_OK && r1 < n0)
                st = gpu_rows(call, sh, p, r1, r1 + R < n0 ? r1 + R : n0, PLACE(b ^ 1, r1), 1, &op[b ^ 1]);
            LAP(2);
            if (st == KY_OK) {
                if (!gpu_cks) *cks += kyi_io_checksum(sh, p, r0, r1, buf[b], dS);
                st = h5xfer(call, f, ds, fsp, sh, p, r0, r1, buf[b], 1, 1);
            }
            LAP(3);
        }
    } else {
        for (size_t k = 0, r0 = 0; r0 < n0 && st == KY_OK; k++, r0 += R) {
            size_t r1 = r0 + R < n0 ? r0 + R : n0, b = k & 1;
            st = finish(call, &op[b]); /* the copy out of this buffer two pieces ago */
            LAP(1);
            if (st == KY_OK) st = h5xfer(call, f, ds, fsp, sh, p, r0, r1, PLACE(b, r0), 1, 0);
            if (st == KY_OK && !gpu_cks) *cks += kyi_io_checksum(sh, p, r0, r1, buf[b], dS);
            LAP(3);
            if (st == KY_OK) st = gpu_rows(call, sh, p, r0, r1, buf[b], 0, &op[b]);
            LAP(2);
        }
    }
#undef PLACE
    /* never return while a copy still uses the buffers */
    for (int b = 0; b < 2; b++) {
        int s = finish(call, &op[b]);
        if (st == KY_OK) st = s;
    }
    LAP(1);
    if (st == KY_OK && gpu_cks && !put) st = gpu_checksum(call, sh, p, cks, 0);
    LAP(0);
#undef LAP
    KYI_TRACE(
        KYI_SUB_IO,
        "%s: bounce %s of %zu bytes in pieces of %zu rows: GPU checksum %.3f ms, copy waits %.3f, copies "
        "issued %.3f, file %.3f",
        call, put ? "write" : "read", n0 * rowb, R, 1e3 * tm[0], 1e3 * tm[1], 1e3 * tm[2], 1e3 * tm[3]);
    return st;
}

static int move(const char *call, ky_io_file_t f, const kyi_io_dset_t *ds, hid_t fsp,
                const kyi_io_shape_t *sh, const kyi_io_piece_t *p, const kyi_io_plan_t *plan, uint64_t *cks,
                int put)
{
    size_t re, n0 = rows_total(p, sh->ndim, &re);
    if (n0 == 0) return KY_OK;
    switch (p->dev < 0 ? plan->host : plan->gpu) {
        case KYI_IO_HOST: {
            int st = h5xfer(call, f, ds, fsp, sh, p, 0, n0, alloc_start(sh, p), 0, put);
            if (st == KY_OK) *cks += kyi_io_checksum(sh, p, 0, n0, p->origin, p->S);
            return st;
        }
        case KYI_IO_CUFILE:
            return put ? kyi_io_cufile_put(call, f, ds->off, sh, p, cks)
                       : kyi_io_cufile_get(call, f, ds->off, sh, p, cks);
        default:
            return bounce(call, f, ds, fsp, sh, p, cks, put);
    }
}

int kyi_io_put_piece(const char *call, ky_io_file_t f, const kyi_io_dset_t *ds, hid_t fspace,
                     const kyi_io_shape_t *sh, const kyi_io_piece_t *p, const kyi_io_plan_t *plan,
                     uint64_t *cks)
{
    return move(call, f, ds, fspace, sh, p, plan, cks, 1);
}

int kyi_io_get_piece(const char *call, ky_io_file_t f, const kyi_io_dset_t *ds, hid_t fspace,
                     const kyi_io_shape_t *sh, const kyi_io_piece_t *p, const kyi_io_plan_t *plan,
                     uint64_t *cks)
{
    return move(call, f, ds, fspace, sh, p, plan, cks, 0);
}
