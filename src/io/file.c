/* Files of the io layer: ky_io_create writes under a temporary name, ky_io_close makes the file appear at
 * its path by one rename after everything is on disk (so a failed or killed job never leaves a file there
 * that looks complete), ky_io_abort discards it, ky_io_open refuses what is not HDF5 or was never finished.
 * Every collective step ends with kyi_io_agree, so all ranks return the same status and name the cause.
 * A file on the raw path (KY_IO_RAW, the only path with a serial HDF5; raw.c) is created, given its
 * attributes, flushed and closed by rank 0 alone through HDF5's default (POSIX) driver, every rank writing
 * its bytes with pwrite; a file opened for reading is opened read-only by every rank. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"
#include "runtime/config.h"
#include "runtime/gpu.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

#define FORMAT_ATTR "kyoyu_format"
#define FORMAT_NAME "kyoyu-io 1"
#define COMPLETE_ATTR "kyoyu_complete"

/* HDF5's reason for the last failure, kept before cleanup calls clear its stack (kyi_io_h5_keep) */
static __thread char kept[256];

int kyi_io_agree(const char *call, MPI_Comm comm, int st)
{
    int me[2] = {st < 0 ? st : 0, kyi_rt.rank}, all[2];
    if (MPI_Allreduce(me, all, 1, MPI_2INT, MPI_MINLOC, comm) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, call, "agreeing on the status of the ranks failed");
    if (all[0] == 0) return KY_OK;
    char msg[512];
    if (kyi_rt.rank == all[1]) snprintf(msg, sizeof msg, "%s", ky_last_error());
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, all[1], comm);
    if (kyi_rt.rank != all[1]) kyi_fail(all[0], call, "failed on another rank: %s", msg);
    return all[0];
}

void kyi_io_quiet_begin(kyi_io_quiet_t *q)
{
    kept[0] = 0;
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void kyi_io_quiet_end(const kyi_io_quiet_t *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

typedef struct {
    char *buf;
    size_t len;
    int found;
} cause_t;

static herr_t take_first(unsigned n, const H5E_error2_t *e, void *data)
{
    cause_t *c = data;
    (void)n;
    if (!c->found && e->desc && *e->desc) {
        snprintf(c->buf, c->len, "%s (%s)", e->desc, e->func_name ? e->func_name : "?");
        c->found = 1;
    }
    return 0;
}

/* HDF5 clears its error stack on entry to every API call, so a helper that must close things after a
 * failure keeps the reason first (kyi_io_h5_keep); the next kyi_io_h5_cause returns it if the stack is empty.
 */

const char *kyi_io_h5_cause(char *buf, size_t len)
{
    cause_t c = {buf, len, 0};
    snprintf(buf, len, "HDF5 gave no reason");
    /* upward: the first entry is where HDF5 detected the error, the most specific (errno text of the
     * file driver, "no space", "file signature not found") */
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_first, &c);
    H5Eclear2(H5E_DEFAULT);
    if (!c.found && kept[0]) snprintf(buf, len, "%s", kept);
    kept[0] = 0;
    return buf;
}

void kyi_io_h5_keep(void)
{
    char b[sizeof kept];
    cause_t c = {b, sizeof b, 0};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_first, &c);
    if (c.found) snprintf(kept, sizeof kept, "%s", b);
}

int kyi_io_check_file(const char *call, ky_io_file_t f, int writing)
{
    KYI_CHECK(kyi_require_init(call));
    if (!f) return kyi_fail(KY_ERR_ARG, call, "file is NULL");
    if (writing && !f->writing)
        return kyi_fail(KY_ERR_ARG, call, "%s was opened for reading (ky_io_open): write with ky_io_create",
                        f->path);
    return KY_OK;
}

static int attr_int(hid_t obj, const char *name, int v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Aexists(obj, name) > 0 ? H5Aopen(obj, name, H5P_DEFAULT)
                                       : H5Acreate2(obj, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_INT, &v);
    if (r < 0) kyi_io_h5_keep();
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    return r < 0 ? -1 : 0;
}

static int new_file(const char *call, ky_io_file_t *out, const char *path)
{
    if (!path || !*path) return kyi_fail(KY_ERR_ARG, call, "path is NULL or empty");
    if (strlen(path) + 40 >= KYI_IO_PATH_MAX)
        return kyi_fail(KY_ERR_ARG, call, "path of %zu characters is too long", strlen(path));
    ky_io_file_t f = calloc(1, sizeof *f);
    if (!f) return kyi_fail(KY_ERR_NOMEM, call, "no memory for a file object");
    f->fid = -1;
    f->raw_fd = -1;
    f->raw_dfd = -1;
    f->comm = MPI_COMM_NULL;
    snprintf(f->path, sizeof f->path, "%s", path);
    if (MPI_Comm_dup(kyi_rt.world, &f->comm) != MPI_SUCCESS) {
        free(f);
        return kyi_fail(KY_ERR_MPI, call, "MPI_Comm_dup failed");
    }
    *out = f;
    return KY_OK;
}

static void free_file(ky_io_file_t f)
{
    kyi_io_cufile_close("ky_io_close", f, 0); /* a read file's handle, or what a failed write left */
    kyi_io_raw_close("ky_io_close", f, 0);
    kyi_io_pin_free(f);
    if (f->comm != MPI_COMM_NULL) MPI_Comm_free(&f->comm);
    free(f);
}

/* MPI-IO for every rank, or HDF5's default POSIX driver for the raw path (serial HDF5 has nothing else) */
static hid_t file_fapl(ky_io_file_t f)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
#ifdef H5_HAVE_PARALLEL
    if (!f->raw) H5Pset_fapl_mpio(fapl, f->comm, MPI_INFO_NULL);
#else
    (void)f;
#endif
    return fapl;
}

/* The root's format name and completion mark (0 until ky_io_close) */
static int root_attrs(hid_t fid)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, sizeof FORMAT_NAME);
    hid_t a = H5Acreate2(fid, FORMAT_ATTR, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    int bad = a < 0 || H5Awrite(a, t, FORMAT_NAME) < 0;
    if (bad) kyi_io_h5_keep();
    if (a >= 0) H5Aclose(a);
    H5Tclose(t);
    H5Sclose(sp);
    bad |= attr_int(fid, COMPLETE_ATTR, 0) < 0;
    return bad ? -1 : 0;
}

int ky_io_create(const char *path, ky_io_file_t *out)
{
    static const char *call = "ky_io_create";
    KYI_CHECK(kyi_require_init(call));
    if (!out) return kyi_fail(KY_ERR_ARG, call, "out is NULL");
    *out = NULL;
    ky_io_file_t f;
    KYI_CHECK(new_file(call, &f, path));
    kyi_io_quiet_t q;
    kyi_io_quiet_begin(&q);
    int st = kyi_io_raw_wanted(call, &f->raw);
    long pid = (long)getpid();
    if (kyi_rt.rank == 0 && st == KY_OK) {
        /* the directory checked once, by one rank, so the message names the cause rather than HDF5's stack */
        char dir[KYI_IO_PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        const char *d = dirname(dir);
        struct stat sb, db;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            st = kyi_fail(KY_ERR_IO, call, "%s is a directory", path);
        else if (stat(d, &db) != 0)
            st = kyi_fail(KY_ERR_IO, call, "cannot write %s: directory %s: %s", path, d, strerror(errno));
        else if (!S_ISDIR(db.st_mode))
            st = kyi_fail(KY_ERR_IO, call, "cannot write %s: %s: %s", path, d, strerror(ENOTDIR));
        else if (access(d, W_OK | X_OK) != 0)
            st = kyi_fail(KY_ERR_IO, call, "cannot write %s: directory %s: %s", path, d, strerror(errno));
    }
    MPI_Bcast(&pid, 1, MPI_LONG, 0, f->comm);
    st = kyi_io_agree(call, f->comm, st);
    if (st == KY_OK) {
        snprintf(f->tmp, sizeof f->tmp, "%s.kytmp-%ld", path, pid);
        hid_t fapl = file_fapl(f);
        /* datasets (and other objects) of 4 KiB or more start on a 4 KiB boundary: the cuFile path writes
         * whole pages with O_DIRECT, and only the unaligned edges of each run go through the page cache */
        H5Pset_alignment(fapl, 4096, 4096);
        if (!f->raw || kyi_rt.rank == 0) f->fid = H5Fcreate(f->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        char why[256];
        if (f->fid < 0 && (!f->raw || kyi_rt.rank == 0))
            st = kyi_fail(KY_ERR_IO, call, "creating %s (temporary name of %s) failed: %s", f->tmp, path,
                          kyi_io_h5_cause(why, sizeof why));
        H5Pclose(fapl); /* after the reason was read: every HDF5 call clears the error stack */
        st = kyi_io_agree(call, f->comm, st);
    }
    if (st == KY_OK) {
        /* marked incomplete until close: a temporary file left by a killed job is refused by ky_io_open */
        char why[256];
        if (f->fid >= 0 && root_attrs(f->fid) < 0)
            st = kyi_fail(KY_ERR_IO, call, "writing the root attributes of %s failed: %s", f->tmp,
                          kyi_io_h5_cause(why, sizeof why));
        st = kyi_io_agree(call, f->comm, st);
    }
    f->writing = 1;
    kyi_io_quiet_end(&q);
    if (st != KY_OK) {
        ky_io_abort(f);
        return st;
    }
    KYI_INFO(KYI_SUB_IO, "%s: writing %s as %s (%s)", call, path, f->tmp,
             f->raw ? "raw path: HDF5 on rank 0, pwrite on every rank" : "parallel HDF5, MPI-IO");
    *out = f;
    return KY_OK;
}

int ky_io_open(const char *path, ky_io_file_t *out)
{
    static const char *call = "ky_io_open";
    KYI_CHECK(kyi_require_init(call));
    if (!out) return kyi_fail(KY_ERR_ARG, call, "out is NULL");
    *out = NULL;
    ky_io_file_t f;
    KYI_CHECK(new_file(call, &f, path));
    kyi_io_quiet_t q;
    kyi_io_quiet_begin(&q);
    int st = kyi_io_raw_wanted(call, &f->raw);
    if (kyi_rt.rank == 0 && st == KY_OK) {
        struct stat sb;
        if (stat(path, &sb) != 0)
            st = kyi_fail(KY_ERR_IO, call, "cannot open %s: %s", path, strerror(errno));
        else if (H5Fis_hdf5(path) <= 0)
            st = kyi_fail(KY_ERR_IO, call, "%s is not an HDF5 file", path);
    }
    st = kyi_io_agree(call, f->comm, st);
    if (st == KY_OK) {
        hid_t fapl = file_fapl(f); /* raw path: every rank opens the file read-only itself */
        f->fid = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        char why[256];
        if (f->fid < 0)
            st = kyi_fail(KY_ERR_IO, call, "opening %s failed: %s", path, kyi_io_h5_cause(why, sizeof why));
        H5Pclose(fapl);
        st = kyi_io_agree(call, f->comm, st);
    }
    if (st == KY_OK && H5Aexists(f->fid, FORMAT_ATTR) > 0) {
        /* a Kyoyu file: only one whose writer reached ky_io_close counts */
        int done = 0;
        hid_t a = H5Aexists(f->fid, COMPLETE_ATTR) > 0 ? H5Aopen(f->fid, COMPLETE_ATTR, H5P_DEFAULT) : -1;
        if (a >= 0) {
            if (H5Aread(a, H5T_NATIVE_INT, &done) < 0) done = 0;
            H5Aclose(a);
        }
        if (done != 1)
            st = kyi_fail(KY_ERR_IO, call,
                          "%s is a Kyoyu file whose writer did not finish (no ky_io_close): its "
                          "data may be partial",
                          path);
        st = kyi_io_agree(call, f->comm, st);
    }
    kyi_io_quiet_end(&q);
    if (st != KY_OK) {
        if (f->fid >= 0) H5Fclose(f->fid);
        free_file(f);
        return st;
    }
    *out = f;
    return KY_OK;
}

/* fsync of a file or directory by name: the rename must not reach the disk before the data. */
static int sync_path(const char *p, int dir)
{
    int fd = open(p, dir ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd < 0) return -1;
    int r = fsync(fd);
    close(fd);
    return r;
}

int ky_io_close(ky_io_file_t f)
{
    static const char *call = "ky_io_close";
    if (!f) return KY_OK;
    KYI_CHECK(kyi_require_init(call));
    kyi_io_quiet_t q;
    kyi_io_quiet_begin(&q);
    int st = KY_OK;
    char why[256];
    double t[4] = {kyi_io_now(), 0, 0, 0};
    if (f->writing && f->failed) {
        kyi_io_quiet_end(&q);
        /* the message names the file after ky_io_abort freed f */
        char msg[2 * KYI_IO_PATH_MAX + 80];
        snprintf(msg, sizeof msg, "a write to %s failed before: the file was discarded (%s left as it was)",
                 f->tmp, f->path);
        ky_io_abort(f);
        return kyi_fail(KY_ERR_IO, call, "%s", msg);
    }
    if (f->writing) {
        /* the cuFile path's own descriptors synced and closed first: their data is on disk before the rename
         */
        int s = kyi_io_cufile_close(call, f, 1), r = kyi_io_raw_close(call, f, 1);
        st = kyi_io_agree(call, f->comm, s != KY_OK ? s : r);
    }
    t[1] = kyi_io_now();
    /* every rank's bytes are on disk (agreed above) before the file is marked complete */
    if (f->writing && st == KY_OK) {
        if (f->fid >= 0 && (attr_int(f->fid, COMPLETE_ATTR, 1) < 0 || H5Fflush(f->fid, H5F_SCOPE_GLOBAL) < 0))
            st = kyi_fail(KY_ERR_IO, call, "finishing %s failed: %s", f->tmp,
                          kyi_io_h5_cause(why, sizeof why));
        st = kyi_io_agree(call, f->comm, st);
    }
    if (f->fid >= 0 && H5Fclose(f->fid) < 0 && st == KY_OK)
        st = kyi_fail(KY_ERR_IO, call, "closing %s failed: %s", f->writing ? f->tmp : f->path,
                      kyi_io_h5_cause(why, sizeof why));
    f->fid = -1;
    t[2] = kyi_io_now();
    if (f->writing) {
        st = kyi_io_agree(call, f->comm, st);
        if (kyi_rt.rank == 0) {
            if (st == KY_OK) {
                char dir[KYI_IO_PATH_MAX];
                snprintf(dir, sizeof dir, "%s", f->path);
                if (sync_path(f->tmp, 0) != 0)
                    st = kyi_fail(KY_ERR_IO, call, "fsync of %s failed: %s", f->tmp, strerror(errno));
                else if (rename(f->tmp, f->path) != 0)
                    st = kyi_fail(KY_ERR_IO, call, "renaming %s to %s failed: %s", f->tmp, f->path,
                                  strerror(errno));
                else
                    sync_path(dirname(dir),
                              1); /* best effort: some file systems refuse fsync on directories */
            }
            if (st != KY_OK) unlink(f->tmp);
        }
        st = kyi_io_agree(call, f->comm, st);
        t[3] = kyi_io_now();
        KYI_TRACE(KYI_SUB_IO, "%s %s: data fsync %.3f ms, HDF5 finish and close %.3f, fsync and rename %.3f",
                  call, f->path, 1e3 * (t[1] - t[0]), 1e3 * (t[2] - t[1]), 1e3 * (t[3] - t[2]));
    } else /* every rank's handle closed before any rank returns: a raw path reader holds a file lock */
        st = kyi_io_agree(call, f->comm, st);
    kyi_io_quiet_end(&q);
    free_file(f);
    return st;
}

int ky_io_abort(ky_io_file_t f)
{
    static const char *call = "ky_io_abort";
    if (!f) return KY_OK;
    KYI_CHECK(kyi_require_init(call));
    kyi_io_quiet_t q;
    kyi_io_quiet_begin(&q);
    if (f->fid >= 0) H5Fclose(f->fid);
    kyi_io_quiet_end(&q);
    MPI_Barrier(f->comm); /* every rank's handle closed before the name goes */
    if (f->writing && kyi_rt.rank == 0 && f->tmp[0]) unlink(f->tmp);
    free_file(f);
    return KY_OK;
}
