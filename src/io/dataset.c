/* The public dataset calls of the io layer: arguments checked, the dataset created (contiguous, allocated at
 * once: the layout a GPUDirect Storage write needs, docs/io.md) or opened and checked against what the caller
 * asked for, this rank's pieces moved by xfer.c, the checksum agreed by all ranks and written or verified,
 * the attributes written. Every rank ends each call with the same status (kyi_io_agree). On a raw file being
 * written only rank 0 holds the HDF5 handle (f->fid >= 0): it alone makes the HDF5 calls, and the ranks
 * learn the dataset's offset from it (kyi_io_dset_extent). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "runtime/gpu.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

static const char *type_names[] = {"auto",  "uint8",  "int8",  "uint16",  "int16",  "uint32",
                                   "int32", "uint64", "int64", "float32", "float64"};

size_t ky_io_type_size(ky_io_type_t t)
{
    static const size_t sz[] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return (unsigned)t < sizeof sz / sizeof sz[0] ? sz[t] : 0;
}

hid_t kyi_io_h5type(ky_io_type_t t)
{
    switch (t) {
        case KY_IO_U8:
            return H5T_NATIVE_UINT8;
        case KY_IO_I8:
            return H5T_NATIVE_INT8;
        case KY_IO_U16:
            return H5T_NATIVE_UINT16;
        case KY_IO_I16:
            return H5T_NATIVE_INT16;
        case KY_IO_U32:
            return H5T_NATIVE_UINT32;
        case KY_IO_I32:
            return H5T_NATIVE_INT32;
        case KY_IO_U64:
            return H5T_NATIVE_UINT64;
        case KY_IO_I64:
            return H5T_NATIVE_INT64;
        case KY_IO_F32:
            return H5T_NATIVE_FLOAT;
        case KY_IO_F64:
            return H5T_NATIVE_DOUBLE;
        default:
            return -1;
    }
}

/* The file's number type as ours, or KY_IO_AUTO if it is none of them. */
static ky_io_type_t from_h5(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    size_t s = H5Tget_size(t);
    if (c == H5T_FLOAT) return s == 4 ? KY_IO_F32 : s == 8 ? KY_IO_F64 : KY_IO_AUTO;
    if (c != H5T_INTEGER) return KY_IO_AUTO;
    int sgn = H5Tget_sign(t) == H5T_SGN_2;
    switch (s) {
        case 1:
            return sgn ? KY_IO_I8 : KY_IO_U8;
        case 2:
            return sgn ? KY_IO_I16 : KY_IO_U16;
        case 4:
            return sgn ? KY_IO_I32 : KY_IO_U32;
        case 8:
            return sgn ? KY_IO_I64 : KY_IO_U64;
        default:
            return KY_IO_AUTO;
    }
}

static void shape_text(char *buf, size_t len, int n, const size_t d[])
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < n && o < len; i++) o += snprintf(buf + o, len - o, i ? "x%zu" : "%zu", d[i]);
    if (n == 0) snprintf(buf, len, "scalar");
}

/* ---- attributes (collective in parallel HDF5: every rank writes the same values) --------------------- */
static int attr_u64(hid_t obj, const char *name, int n, const uint64_t *v)
{
    hsize_t hn = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &hn, NULL);
    hid_t a = H5Acreate2(obj, name, H5T_NATIVE_UINT64, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_UINT64, v);
    if (r < 0) kyi_io_h5_keep();
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    return r < 0 ? -1 : 0;
}

static int attr_str(hid_t obj, const char *name, const char *s)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(s) + 1);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Awrite(a, t, s);
    if (r < 0) kyi_io_h5_keep();
    if (a >= 0) H5Aclose(a);
    H5Tclose(t);
    H5Sclose(sp);
    return r < 0 ? -1 : 0;
}

static int read_u64(hid_t obj, const char *name, uint64_t *v)
{
    if (H5Aexists(obj, name) <= 0) return 0;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return 0;
    hid_t sp = H5Aget_space(a);
    int ok = H5Sget_simple_extent_npoints(sp) == 1 && H5Aread(a, H5T_NATIVE_UINT64, v) >= 0;
    H5Sclose(sp);
    H5Aclose(a);
    return ok;
}

static int write_attrs(hid_t d, const kyi_io_shape_t *sh, const char *dist, const char *units, uint64_t cks)
{
    uint64_t shape[KY_ARRAY_MAX_DIMS], e = sh->elem, c = (uint64_t)sh->comp;
    for (int i = 0; i < sh->ndim; i++) shape[i] = sh->dims[i];
    int bad = attr_u64(d, "shape", sh->ndim, shape) < 0;
    bad |= attr_str(d, "element_type", type_names[sh->type]) < 0;
    bad |= attr_u64(d, "element_size", 1, &e) < 0;
    bad |= attr_u64(d, "components", 1, &c) < 0;
    bad |= attr_str(d, "distribution", dist) < 0;
    if (units) bad |= attr_str(d, "units", units) < 0;
    bad |= attr_u64(d, "kyoyu_checksum", 1, &cks) < 0;
    bad |= attr_str(d, "kyoyu_checksum_algo", KYI_IO_CHECKSUM_ALGO) < 0;
    return bad ? -1 : 0;
}

/* HDF5 dimensions of a shape: the element dimensions, then the components when more than one. */
static int h5dims(const kyi_io_shape_t *sh, hsize_t hd[])
{
    for (int i = 0; i < sh->ndim; i++) hd[i] = sh->dims[i];
    if (sh->comp > 1) hd[sh->ndim] = (hsize_t)sh->comp;
    return sh->ndim + (sh->comp > 1);
}

/* ---- the shared core ------------------------------------------------------------------------------------
 */
static int check_name(const char *call, ky_io_file_t f, const char *name)
{
    KYI_CHECK(kyi_io_check_file(call, f, 0));
    if (!name || !*name) return kyi_fail(KY_ERR_ARG, call, "dataset name is NULL or empty");
    return KY_OK;
}

/* Create dataset `name` and write every piece; `local` is this rank's status from the argument checks. */
static int write_core(const char *call, ky_io_file_t f, const char *name, const kyi_io_shape_t *sh,
                      const kyi_io_piece_t *pc, int np, const char *dist, const ky_io_opts_t *opts, int local)
{
    const char *units = opts ? opts->units : NULL;
    kyi_io_quiet_t q;
    kyi_io_quiet_begin(&q);
    char why[256];
    double t[5];
    t[0] = kyi_io_now();
    int st = kyi_io_agree(call, f->comm, local);
    hid_t d = -1, fsp = -1, dcpl = -1;
    int h5 = f->fid >= 0; /* this rank makes the HDF5 calls (every rank, or rank 0 of a raw file) */
    if (st == KY_OK) {
        if (h5 && H5Lexists(f->fid, name, H5P_DEFAULT) > 0)
            st = kyi_fail(KY_ERR_ARG, call, "dataset '%s' already exists in %s", name, f->path);
        st = kyi_io_agree(call, f->comm, st);
    }
    if (st == KY_OK) {
        hsize_t hd[KYI_IO_MAXD];
        int hn = h5dims(sh, hd);
        fsp = H5Screate_simple(hn, hd, NULL);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        /* contiguous and allocated now: one extent whose offset (H5Dget_offset) a cuFile write can target */
        H5Pset_layout(dcpl, H5D_CONTIGUOUS);
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
        if (h5) d = H5Dcreate2(f->fid, name, kyi_io_h5type(sh->type), fsp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (h5 && d < 0)
            st = kyi_fail(KY_ERR_IO, call, "creating dataset '%s' in %s failed: %s", name, f->tmp,
                          kyi_io_h5_cause(why, sizeof why));
        st = kyi_io_agree(call, f->comm, st);
    }
    uint64_t cks = 0, all = 0;
    kyi_io_plan_t plan;
    kyi_io_dset_t ds;
    if (st == KY_OK) st = kyi_io_agree(call, f->comm, kyi_io_dset_extent(call, f, d, sh->type, &ds));
    t[1] = kyi_io_now();
    if (st == KY_OK) st = kyi_io_agree(call, f->comm, kyi_io_plan(call, f, &ds, sh, pc, np, opts, 1, &plan));
    t[2] = kyi_io_now();
    if (st == KY_OK) {
        do { /* once, or again through bounce where auto's cuFile failed on some rank */
            cks = 0;
            st = KY_OK;
            for (int i = 0; i < np && st == KY_OK; i++)
                st = kyi_io_put_piece(call, f, &ds, fsp, sh, &pc[i], &plan, &cks);
        } while (kyi_io_plan_fallback(call, f, &plan, st));
        st = kyi_io_agree(call, f->comm, st);
    }
    t[3] = kyi_io_now();
    if (st == KY_OK) {
        MPI_Allreduce(&cks, &all, 1, MPI_UINT64_T, MPI_SUM, f->comm);
        if (h5 && write_attrs(d, sh, dist, units, all) < 0)
            st = kyi_fail(KY_ERR_IO, call, "writing the attributes of '%s' in %s failed: %s", name, f->tmp,
                          kyi_io_h5_cause(why, sizeof why));
        st = kyi_io_agree(call, f->comm, st);
    }
    if (d >= 0) H5Dclose(d);
    t[4] = kyi_io_now();
    KYI_TRACE(KYI_SUB_IO,
              "%s '%s': create+extent %.3f ms, plan %.3f, transfer %.3f, checksum+attributes %.3f", call,
              name, 1e3 * (t[1] - t[0]), 1e3 * (t[2] - t[1]), 1e3 * (t[3] - t[2]), 1e3 * (t[4] - t[3]));
    if (fsp >= 0) H5Sclose(fsp);
    if (dcpl >= 0) H5Pclose(dcpl);
    kyi_io_quiet_end(&q);
    if (st != KY_OK && st != KY_ERR_ARG) f->failed = 1; /* bad arguments wrote nothing: the file stays good */
    return st;
}

/* Open dataset `name`, check it against *want (dims of ndim, type, comp; elem for arrays), read the pieces,
 * verify the checksum when `cover` (the pieces of all ranks cover the dataset once). */
static int read_core(const char *call, ky_io_file_t f, const char *name, kyi_io_shape_t *want, int check_dims,
                     const kyi_io_piece_t *pc, int np, int cover, const ky_io_opts_t *opts, int local)
{
    kyi_io_quiet_t q;
    kyi_io_quiet_begin(&q);
    char a[96], b[96];
    int st = kyi_io_agree(call, f->comm, local);
    hid_t d = -1, fsp = -1, ft = -1;
    const char *file = f->writing ? f->tmp : f->path;
    if (st == KY_OK && f->raw && f->writing) /* the same answer on every rank */
        st = kyi_fail(KY_ERR_UNSUPPORTED, call,
                      "reading %s before ky_io_close: on the raw path (KY_IO_RAW) only rank 0 holds a file "
                      "being written; close it and open it again",
                      f->path);
    st = kyi_io_agree(call, f->comm, st);
    if (st == KY_OK) {
        if (H5Lexists(f->fid, name, H5P_DEFAULT) <= 0 || (d = H5Dopen2(f->fid, name, H5P_DEFAULT)) < 0)
            st = kyi_fail(KY_ERR_IO, call, "no dataset '%s' in %s", name, file);
        st = kyi_io_agree(call, f->comm, st);
    }
    if (st == KY_OK) {
        fsp = H5Dget_space(d);
        ft = H5Dget_type(d);
        hsize_t hd[KYI_IO_MAXD + 3];
        int hn = H5Sget_simple_extent_ndims(fsp);
        ky_io_type_t t = from_h5(ft);
        size_t fd[KYI_IO_MAXD + 3];
        if (hn >= 0 && hn <= KYI_IO_MAXD) H5Sget_simple_extent_dims(fsp, hd, NULL);
        for (int i = 0; i < hn && i <= KYI_IO_MAXD; i++) fd[i] = hd[i];
        int comp = want->comp;
        if (comp ==
            0) { /* KY_IO_AUTO: the file says (a Kyoyu file), or a trailing dimension makes the element */
            uint64_t c = 0;
            if (read_u64(d, "components", &c) && c >= 1)
                comp = (int)c;
            else if (hn == want->ndim + 1 && hn <= KYI_IO_MAXD)
                comp = (int)fd[hn - 1];
            else
                comp = 1;
        }
        int wn = want->ndim + (comp > 1);
        size_t wd[KYI_IO_MAXD];
        for (int i = 0; i < want->ndim; i++) wd[i] = want->dims[i];
        if (comp > 1) wd[want->ndim] = (size_t)comp;
        if (t == KY_IO_AUTO)
            st = kyi_fail(KY_ERR_IO, call, "dataset '%s' in %s is not of a plain number type", name, file);
        else if (hn < 0 || hn > KYI_IO_MAXD)
            st = kyi_fail(KY_ERR_IO, call, "dataset '%s' in %s has %d dimensions", name, file, hn);
        else if (want->type != KY_IO_AUTO && want->type != t)
            st = kyi_fail(KY_ERR_IO, call, "dataset '%s' in %s holds %s, the caller asked for %s", name, file,
                          type_names[t], type_names[want->type]);
        else if (want->elem && ky_io_type_size(t) * (size_t)comp != want->elem)
            st = kyi_fail(KY_ERR_IO, call,
                          "dataset '%s' in %s holds elements of %d x %s (%zu bytes), the array's "
                          "are %zu bytes",
                          name, file, comp, type_names[t], ky_io_type_size(t) * comp, want->elem);
        else {
            int same = hn == (check_dims ? wn : hn);
            for (int i = 0; same && check_dims && i < wn; i++) same = fd[i] == wd[i];
            if (!check_dims) { /* buffers: the file's shape, the box checked against it below */
                same = hn == wn || (comp == 1 && hn == want->ndim);
                if (same && comp > 1) same = fd[want->ndim] == (size_t)comp;
                for (int i = 0; same && i < want->ndim; i++) want->dims[i] = fd[i];
            }
            if (!same) {
                shape_text(a, sizeof a, hn, fd);
                shape_text(b, sizeof b, wn, wd);
                st = kyi_fail(KY_ERR_IO, call, "dataset '%s' in %s has shape %s, the caller's is %s%s", name,
                              file, a, check_dims ? b : "of another rank", "");
            }
        }
        if (st == KY_OK) {
            want->type = t;
            want->comp = comp;
            want->elem = ky_io_type_size(t) * comp;
        }
        st = kyi_io_agree(call, f->comm, st);
    }
    uint64_t cks = 0, all = 0, stored = 0;
    kyi_io_plan_t plan;
    kyi_io_dset_t ds;
    if (st == KY_OK) st = kyi_io_agree(call, f->comm, kyi_io_dset_extent(call, f, d, want->type, &ds));
    if (st == KY_OK)
        st = kyi_io_agree(call, f->comm, kyi_io_plan(call, f, &ds, want, pc, np, opts, 0, &plan));
    if (st == KY_OK) {
        do { /* once, or again through bounce where auto's cuFile failed on some rank */
            cks = 0;
            st = KY_OK;
            for (int i = 0; i < np && st == KY_OK; i++) {
                int out = 0;
                for (int k = 0; k < want->ndim; k++)
                    for (size_t l = 0; l < pc[i].n[k] && !out; l++) {
                        size_t g = pc[i].g[k] ? pc[i].g[k][l] : pc[i].g0[k] + l;
                        out = g >= want->dims[k];
                    }
                if (out) {
                    shape_text(a, sizeof a, want->ndim, want->dims);
                    st = kyi_fail(KY_ERR_ARG, call, "box outside dataset '%s' of shape %s in %s", name, a,
                                  file);
                } else
                    st = kyi_io_get_piece(call, f, &ds, fsp, want, &pc[i], &plan, &cks);
            }
        } while (kyi_io_plan_fallback(call, f, &plan, st));
        st = kyi_io_agree(call, f->comm, st);
    }
    if (st == KY_OK && cover && read_u64(d, "kyoyu_checksum", &stored)) {
        MPI_Allreduce(&cks, &all, 1, MPI_UINT64_T, MPI_SUM, f->comm);
        if (all != stored)
            st = kyi_fail(KY_ERR_IO, call,
                          "dataset '%s' in %s: checksum of the data read 0x%016llx, written "
                          "0x%016llx: the file was changed or damaged",
                          name, file, (unsigned long long)all, (unsigned long long)stored);
        st = kyi_io_agree(call, f->comm, st);
    }
    if (ft >= 0) H5Tclose(ft);
    if (fsp >= 0) H5Sclose(fsp);
    if (d >= 0) H5Dclose(d);
    kyi_io_quiet_end(&q);
    return st;
}

/* ---- arrays ------------------------------------------------------------------------------------------- */
/* This rank's blocks as pieces; g[] arrays for the cyclic dimensions (freed by free_pieces). */
static int array_pieces(const char *call, ky_array_t a, const kyi_io_shape_t *sh, kyi_io_piece_t *pc, int *np)
{
    int nl = ky_array_nlocal(a);
    *np = 0;
    if (nl < 0) return nl;
    ky_dist_t dist;
    int halo[KY_ARRAY_MAX_DIMS];
    KYI_CHECK(ky_array_dist(a, &dist, halo, NULL));
    for (int k = 0; k < nl; k++) {
        kyi_io_piece_t *p = &pc[k];
        memset(p, 0, sizeof *p);
        void *loc;
        size_t lo[KY_ARRAY_MAX_DIMS], hi[KY_ARRAY_MAX_DIMS];
        KYI_CHECK(ky_array_local_n(a, k, &loc, lo, hi));
        KYI_CHECK(ky_array_layout(a, k, p->E, p->S));
        KYI_CHECK(ky_array_device(a, k, &p->dev));
        p->origin = loc;
        *np = k + 1;
        for (int d = 0; d < sh->ndim; d++) {
            p->n[d] = hi[d] - lo[d];
            p->off[d] = (size_t)halo[d];
            if (dist.kind[d] == KY_DIST_BLOCK) {
                p->g0[d] = lo[d];
                continue;
            }
            p->g[d] = malloc(sizeof(size_t) * (p->n[d] ? p->n[d] : 1));
            if (!p->g[d]) return kyi_fail(KY_ERR_NOMEM, call, "no memory for %zu indices", p->n[d]);
            for (size_t l = 0; l < p->n[d]; l++) KYI_CHECK(ky_array_global_index(a, k, d, l, &p->g[d][l]));
        }
    }
    return KY_OK;
}

static void free_pieces(kyi_io_piece_t *pc, int np)
{
    for (int i = 0; i < np; i++)
        for (int d = 0; d < KY_ARRAY_MAX_DIMS; d++) free(pc[i].g[d]);
}

static int array_shape(const char *call, ky_array_t a, const ky_io_opts_t *o, kyi_io_shape_t *sh, int reading)
{
    memset(sh, 0, sizeof *sh);
    sh->ndim = ky_array_ndim(a);
    if (sh->ndim < 0) return sh->ndim;
    KYI_CHECK(ky_array_dims(a, sh->dims, &sh->elem));
    sh->type = o ? o->type : KY_IO_AUTO;
    if ((unsigned)sh->type > KY_IO_F64)
        return kyi_fail(KY_ERR_ARG, call, "type %d is not a ky_io_type_t", (int)sh->type);
    if (sh->type == KY_IO_AUTO && !reading) sh->type = KY_IO_U8;
    size_t ts = ky_io_type_size(sh->type);
    if (ts && sh->elem % ts)
        return kyi_fail(KY_ERR_ARG, call, "elements of %zu bytes are not made of %s values", sh->elem,
                        type_names[sh->type]);
    sh->comp = o && o->components ? o->components : ts ? (int)(sh->elem / ts) : 0;
    if (ts && (size_t)sh->comp * ts != sh->elem)
        return kyi_fail(KY_ERR_ARG, call, "%d components of %s are not an element of %zu bytes", sh->comp,
                        type_names[sh->type], sh->elem);
    return KY_OK;
}

static void dist_text(ky_array_t a, char *buf, size_t len)
{
    ky_dist_t d;
    int nd = ky_array_ndim(a);
    size_t o = 0;
    if (ky_array_dist(a, &d, NULL, NULL) != KY_OK) {
        snprintf(buf, len, "unknown");
        return;
    }
    for (int i = 0; i < nd && o < len; i++) {
        if (d.kind[i] == KY_DIST_CYCLIC)
            o += snprintf(buf + o, len - o, "%scyclic(%d parts, block %zu)", i ? " x " : "", d.parts[i],
                          d.bsize[i]);
        else
            o += snprintf(buf + o, len - o, "%sblock(%d parts)", i ? " x " : "", d.parts[i]);
    }
    if (o < len)
        snprintf(buf + o, len - o, "; ranks %d..%d, %d block(s) per rank", d.first, d.first + d.count - 1,
                 d.blocks_per_rank);
}

int ky_io_write(ky_io_file_t f, const char *name, ky_array_t a, const ky_io_opts_t *opts)
{
    static const char *call = "ky_io_write";
    KYI_CHECK(check_name(call, f, name));
    KYI_CHECK(kyi_io_check_file(call, f, 1));
    kyi_io_shape_t sh;
    kyi_io_piece_t pc[KYI_MAX_GPUS_PER_RANK];
    int np = 0;
    int st = array_shape(call, a, opts, &sh, 0);
    if (st == KY_OK) st = array_pieces(call, a, &sh, pc, &np);
    char dist[256];
    if (st == KY_OK) dist_text(a, dist, sizeof dist);
    st = write_core(call, f, name, &sh, pc, np, dist, opts, st);
    free_pieces(pc, np);
    return st;
}

int ky_io_read(ky_io_file_t f, const char *name, ky_array_t a, const ky_io_opts_t *opts)
{
    static const char *call = "ky_io_read";
    KYI_CHECK(check_name(call, f, name));
    kyi_io_shape_t sh;
    kyi_io_piece_t pc[KYI_MAX_GPUS_PER_RANK];
    int np = 0;
    int st = array_shape(call, a, opts, &sh, 1);
    if (st == KY_OK) st = array_pieces(call, a, &sh, pc, &np);
    if (st == KY_OK && sh.comp == 0) sh.comp = 0; /* resolved from the file below */
    st = read_core(call, f, name, &sh, 1, pc, np, 1, opts, st);
    free_pieces(pc, np);
    return st;
}

/* ---- buffers ------------------------------------------------------------------------------------------ */
static int buffer_piece(const char *call, int ndim, const size_t lo[], const size_t hi[], const void *buf,
                        kyi_io_piece_t *p, int *np)
{
    memset(p, 0, sizeof *p);
    *np = 0;
    if (ndim < 1 || ndim > KY_ARRAY_MAX_DIMS)
        return kyi_fail(KY_ERR_ARG, call, "ndim %d is not 1..%d", ndim, KY_ARRAY_MAX_DIMS);
    if (!lo || !hi) return kyi_fail(KY_ERR_ARG, call, "lo or hi is NULL");
    size_t vol = 1;
    for (int d = 0; d < ndim; d++) {
        if (hi[d] < lo[d])
            return kyi_fail(KY_ERR_ARG, call, "dimension %d: hi %zu < lo %zu", d, hi[d], lo[d]);
        vol *= hi[d] - lo[d];
    }
    if (vol == 0) return KY_OK; /* an empty box: nothing of this rank */
    if (!buf) return kyi_fail(KY_ERR_ARG, call, "buf is NULL for a box of %zu elements", vol);
    p->origin = (char *)buf;
    p->dev = kyi_gpu_ptr_device(buf);
    for (int d = ndim - 1; d >= 0; d--) {
        p->n[d] = p->E[d] = hi[d] - lo[d];
        p->g0[d] = lo[d];
        p->S[d] = d == ndim - 1 ? 1 : p->S[d + 1] * p->E[d + 1];
    }
    *np = 1;
    return KY_OK;
}

/* Whether the boxes of all ranks are disjoint and cover dims exactly (*cover), allgathered. */
static int boxes_cover(MPI_Comm comm, int ndim, const size_t dims[], const size_t lo[], const size_t hi[],
                       int *cover, int *overlap_a, int *overlap_b)
{
    int n = kyi_rt.nranks;
    unsigned long long mine[2 * KY_ARRAY_MAX_DIMS] = {0};
    for (int d = 0; d < ndim; d++) mine[d] = lo[d], mine[KY_ARRAY_MAX_DIMS + d] = hi[d];
    unsigned long long *all = malloc(sizeof mine * n);
    if (!all) return KY_ERR_NOMEM;
    MPI_Allgather(mine, 2 * KY_ARRAY_MAX_DIMS, MPI_UNSIGNED_LONG_LONG, all, 2 * KY_ARRAY_MAX_DIMS,
                  MPI_UNSIGNED_LONG_LONG, comm);
    unsigned long long total = 1, sum = 0;
    for (int d = 0; d < ndim; d++) total *= dims[d];
    *overlap_a = *overlap_b = -1;
    for (int r = 0; r < n; r++) {
        const unsigned long long *x = all + r * 2 * KY_ARRAY_MAX_DIMS;
        unsigned long long v = 1;
        int inside = 1;
        for (int d = 0; d < ndim; d++) {
            v *= x[KY_ARRAY_MAX_DIMS + d] - x[d];
            inside &= x[KY_ARRAY_MAX_DIMS + d] <= dims[d];
        }
        if (!inside) v = 0;
        sum += v;
        for (int s = 0; s < r && v && *overlap_a < 0; s++) {
            const unsigned long long *y = all + s * 2 * KY_ARRAY_MAX_DIMS;
            int ov = 1;
            for (int d = 0; d < ndim; d++)
                ov &= x[d] < y[KY_ARRAY_MAX_DIMS + d] && y[d] < x[KY_ARRAY_MAX_DIMS + d];
            if (ov) *overlap_a = s, *overlap_b = r;
        }
    }
    *cover = *overlap_a < 0 && sum == total;
    free(all);
    return KY_OK;
}

int ky_io_write_buffer(ky_io_file_t f, const char *name, int ndim, const size_t dims[], const size_t lo[],
                       const size_t hi[], const void *buf, const ky_io_opts_t *opts)
{
    static const char *call = "ky_io_write_buffer";
    KYI_CHECK(check_name(call, f, name));
    KYI_CHECK(kyi_io_check_file(call, f, 1));
    kyi_io_shape_t sh;
    memset(&sh, 0, sizeof sh);
    kyi_io_piece_t p;
    int np = 0, st = buffer_piece(call, ndim, lo, hi, buf, &p, &np);
    if (st == KY_OK && !dims) st = kyi_fail(KY_ERR_ARG, call, "dims is NULL");
    if (st == KY_OK && (!opts || opts->type == KY_IO_AUTO || (unsigned)opts->type > KY_IO_F64))
        st = kyi_fail(KY_ERR_ARG, call, "opts->type must name a number type (KY_IO_U8 .. KY_IO_F64)");
    if (st == KY_OK && opts->components < 0)
        st = kyi_fail(KY_ERR_ARG, call, "components %d < 0", opts->components);
    if (st == KY_OK) {
        sh.ndim = ndim;
        for (int d = 0; d < ndim; d++) sh.dims[d] = dims[d];
        sh.type = opts->type;
        sh.comp = opts->components ? opts->components : 1;
        sh.elem = ky_io_type_size(sh.type) * sh.comp;
    }
    /* the boxes must tile the dataset: every element written once, so the checksum means something */
    st = kyi_io_agree(call, f->comm, st);
    if (st == KY_OK) {
        int cover, oa, ob;
        KYI_CHECK(boxes_cover(f->comm, ndim, dims, lo, hi, &cover, &oa, &ob));
        char a[96];
        shape_text(a, sizeof a, ndim, dims);
        if (oa >= 0)
            st = kyi_fail(KY_ERR_ARG, call, "the boxes of ranks %d and %d overlap", oa, ob);
        else if (!cover)
            st = kyi_fail(KY_ERR_ARG, call, "the ranks' boxes do not cover the dataset's shape %s", a);
    }
    return write_core(call, f, name, &sh, &p, np, "buffer: one box per rank", opts, st);
}

int ky_io_read_buffer(ky_io_file_t f, const char *name, int ndim, const size_t lo[], const size_t hi[],
                      void *buf, const ky_io_opts_t *opts)
{
    static const char *call = "ky_io_read_buffer";
    KYI_CHECK(check_name(call, f, name));
    kyi_io_shape_t sh;
    memset(&sh, 0, sizeof sh);
    kyi_io_piece_t p;
    int np = 0, st = buffer_piece(call, ndim, lo, hi, buf, &p, &np);
    if (st == KY_OK && opts && (unsigned)opts->type > KY_IO_F64)
        st = kyi_fail(KY_ERR_ARG, call, "type %d is not a ky_io_type_t", (int)opts->type);
    sh.ndim = ndim;
    sh.type = opts ? opts->type : KY_IO_AUTO;
    sh.comp = opts && opts->components ? opts->components : 1;
    int cover = 0;
    if (kyi_io_agree(call, f->comm, st) == KY_OK) {
        /* dims are the file's: learnt in read_core; coverage needs them first */
        int ndim_f, comp_f;
        size_t fd[KY_ARRAY_MAX_DIMS];
        if (ky_io_info(f, name, &ndim_f, fd, NULL, &comp_f) == KY_OK && ndim_f == ndim) {
            int oa, ob;
            if (boxes_cover(f->comm, ndim, fd, lo, hi, &cover, &oa, &ob) != KY_OK) cover = 0;
        } else {
            int dummy, oa, ob;
            size_t zero[KY_ARRAY_MAX_DIMS] = {0};
            boxes_cover(f->comm, ndim, zero, lo, hi, &dummy, &oa, &ob); /* collective either way */
        }
    }
    return read_core(call, f, name, &sh, 0, &p, np, cover, opts, st);
}

int ky_io_info(ky_io_file_t f, const char *name, int *ndim, size_t dims[], ky_io_type_t *type,
               int *components)
{
    static const char *call = "ky_io_info";
    KYI_CHECK(check_name(call, f, name));
    kyi_io_quiet_t q;
    kyi_io_quiet_begin(&q);
    const char *file = f->writing ? f->tmp : f->path;
    int st = KY_OK;
    hid_t d = -1;
    if (f->raw && f->writing) {
        st = kyi_fail(
            KY_ERR_UNSUPPORTED, call,
            "%s is being written on the raw path (KY_IO_RAW): only rank 0 holds it until ky_io_close",
            f->path);
    } else if (H5Lexists(f->fid, name, H5P_DEFAULT) <= 0 || (d = H5Dopen2(f->fid, name, H5P_DEFAULT)) < 0) {
        st = kyi_fail(KY_ERR_IO, call, "no dataset '%s' in %s", name, file);
    } else {
        hid_t sp = H5Dget_space(d), t = H5Dget_type(d);
        int hn = H5Sget_simple_extent_ndims(sp);
        hsize_t hd[KYI_IO_MAXD];
        uint64_t comp = 1;
        if (!read_u64(d, "components", &comp) || comp < 1) comp = 1;
        ky_io_type_t kt = from_h5(t);
        int en = hn - (comp > 1);
        if (kt == KY_IO_AUTO)
            st = kyi_fail(KY_ERR_IO, call, "dataset '%s' in %s is not of a plain number type", name, file);
        else if (hn < 1 || hn > KYI_IO_MAXD || en < 1 || en > KY_ARRAY_MAX_DIMS)
            st = kyi_fail(KY_ERR_IO, call, "dataset '%s' in %s has %d dimensions (Kyoyu reads 1..%d)", name,
                          file, hn, KY_ARRAY_MAX_DIMS);
        else {
            H5Sget_simple_extent_dims(sp, hd, NULL);
            if (ndim) *ndim = en;
            for (int i = 0; dims && i < en; i++) dims[i] = hd[i];
            if (type) *type = kt;
            if (components) *components = (int)comp;
        }
        H5Tclose(t);
        H5Sclose(sp);
        H5Dclose(d);
    }
    kyi_io_quiet_end(&q);
    return st;
}
