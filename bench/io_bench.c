/* ky_bench_io: seed 002's N-body snapshot (float4 position+mass, float3 velocity, uint64 id: 36 bytes per
 * particle, in GPU memory) written to and read from one HDF5 file, by each of Kyoyu's paths (bounce, cufile,
 * auto: ky_io_opts_t.path) beside the user's baseline, plain HDF5 after cudaMemcpy (H5Dwrite by hand,
 * pageable host buffers, HDF5's default file driver), and the disk's raw sequential bandwidth for the same
 * bytes (O_DIRECT from an aligned host buffer: the floor). All in one run, on the directory --dir.
 * bench/io_bench.py (kybench run io) runs it and adds h5py after a device-to-host copy (the copy times are
 * measured here).
 *
 * Every write is timed from create to a file on disk: Kyoyu's ky_io_close fsyncs and renames, so the
 * baselines fsync too; before every read the file's pages are dropped from the page cache
 * (posix_fadvise DONTNEED after fsync), so reads come from the disk. Best of --reps.
 *
 * --table FILE: the table KY_IO_PATH=auto reads (docs/io.md, "Tuning"): bounce and cufile, write and read,
 * sizes
 * --tmin..--tmax (x4) of one 1-D float32 dataset on --dir, rows "fs write|read bytes bounce_GBs cufile_GBs"
 * appended to --table. kybench io-tune runs it.
 *
 * --mem host runs everything from host memory (no GPU needed; cufile skipped): for machines without GPUs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "kyoyu/io.h"

#define NFIELD 3
static const struct {
    const char *name;
    int comp;
    ky_io_type_t type;
    size_t esz;
} F[NFIELD] = {{"pos_mass", 4, KY_IO_F32, 16}, {"vel", 3, KY_IO_F32, 12}, {"id", 1, KY_IO_U64, 8}};

enum { I_RAW, I_HDF5, I_BOUNCE, I_CUFILE, I_AUTO, NIMPL };
static const char *impl_name[NIMPL] = {"raw", "hdf5", "bounce", "cufile", "auto"};
static const ky_io_path_t impl_path[NIMPL] = {0, 0, KY_IO_PATH_BOUNCE, KY_IO_PATH_CUFILE, KY_IO_PATH_AUTO};

static struct {
    double nmin, nmax, budget;
    const char *dir, *json, *table;
    int reps, gpu, tune, rank, nranks, reps_now;
    size_t tmin, tmax;
    char fs[64];
} o = {1e3, 1e8, 0, "/tmp", NULL, NULL, 3, 1, 0, 0, 1, 3, 4096, (size_t)1 << 30, ""};

/* ---- memory: GPU through the CUDA runtime, or host (--mem host) ---------------------------------------- */
static void *dalloc(size_t n)
{
    void *p = NULL;
#ifdef KY_BENCH_HAVE_CUDA
    if (o.gpu) {
        BU_CUDA(cudaMalloc(&p, n ? n : 1));
        return p;
    }
#endif
    if (!(p = malloc(n ? n : 1))) bu_die(__FILE__, __LINE__, "no memory for %zu bytes", n);
    return p;
}

static void dfree(void *p)
{
#ifdef KY_BENCH_HAVE_CUDA
    if (o.gpu) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

/* the user's copies: cudaMemcpy to and from pageable host memory */
static void copy(void *dst, const void *src, size_t n, int to_host)
{
#ifdef KY_BENCH_HAVE_CUDA
    if (o.gpu) {
        BU_CUDA(cudaMemcpy(dst, src, n, to_host ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice));
        return;
    }
#endif
    (void)to_host;
    memcpy(dst, src, n);
}

/* ---- files ----------------------------------------------------------------------------------------------
 */
static void sync_file(const char *p)
{
    int fd = open(p, O_RDONLY);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

/* its pages out of the page cache (clean after fsync), so the next read comes from the disk */
static void evict(const char *p)
{
    int fd = open(p, O_RDONLY);
    if (fd < 0) return;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

static double max_all(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* ---- Kyoyu: one dataset per field, each rank its share of the particles -------------------------------- */
static int snap_put(const char *file, void *dev[], size_t N, ky_io_path_t path, double *t)
{
    size_t lo = N * o.rank / o.nranks, hi = N * (o.rank + 1) / o.nranks;
    ky_io_file_t f = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bu_now();
    int st = ky_io_create(file, &f);
    for (int i = 0; i < NFIELD && st == KY_OK; i++) {
        ky_io_opts_t op = {F[i].type, F[i].comp, NULL, path};
        st = ky_io_write_buffer(f, F[i].name, 1, &N, &lo, &hi, dev[i], &op);
    }
    if (st == KY_OK)
        st = ky_io_close(f);
    else if (f)
        ky_io_close(f); /* discards the file */
    *t = max_all(bu_now() - t0);
    return st;
}

static int snap_get(const char *file, void *dev[], size_t N, ky_io_path_t path, double *t)
{
    size_t lo = N * o.rank / o.nranks, hi = N * (o.rank + 1) / o.nranks;
    ky_io_file_t f = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bu_now();
    int st = ky_io_open(file, &f);
    for (int i = 0; i < NFIELD && st == KY_OK; i++) {
        ky_io_opts_t op = {F[i].type, F[i].comp, NULL, path};
        st = ky_io_read_buffer(f, F[i].name, 1, &lo, &hi, dev[i], &op); /* boxes cover: checksum verified */
    }
    if (f) {
        int s = ky_io_close(f);
        if (st == KY_OK) st = s;
    }
    *t = max_all(bu_now() - t0);
    return st;
}

/* ---- the user's baseline: cudaMemcpy, then plain serial HDF5 (rank 0, the whole snapshot) ------------- */
static hid_t h5type(int i)
{
    return F[i].type == KY_IO_U64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_FLOAT;
}

static int h5_put(const char *file, void *dev[], void *host[], size_t N, double *t)
{
    double t0 = bu_now();
    int bad = 0;
    hid_t fid = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    bad |= fid < 0;
    for (int i = 0; i < NFIELD && !bad; i++) {
        copy(host[i], dev[i], N * F[i].esz, 1);
        hsize_t d[2] = {N, (hsize_t)F[i].comp};
        hid_t sp = H5Screate_simple(F[i].comp > 1 ? 2 : 1, d, NULL);
        hid_t ds = H5Dcreate2(fid, F[i].name, h5type(i), sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        bad |= ds < 0 || H5Dwrite(ds, h5type(i), H5S_ALL, H5S_ALL, H5P_DEFAULT, host[i]) < 0;
        if (ds >= 0) H5Dclose(ds);
        H5Sclose(sp);
    }
    if (fid >= 0) bad |= H5Fclose(fid) < 0;
    sync_file(file);
    *t = bu_now() - t0;
    return bad ? -1 : 0;
}

static int h5_get(const char *file, void *dev[], void *host[], size_t N, double *t)
{
    double t0 = bu_now();
    int bad = 0;
    hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    bad |= fid < 0;
    for (int i = 0; i < NFIELD && !bad; i++) {
        hid_t ds = H5Dopen2(fid, F[i].name, H5P_DEFAULT);
        bad |= ds < 0 || H5Dread(ds, h5type(i), H5S_ALL, H5S_ALL, H5P_DEFAULT, host[i]) < 0;
        if (ds >= 0) H5Dclose(ds);
        if (!bad) copy(dev[i], host[i], N * F[i].esz, 0);
    }
    if (fid >= 0) H5Fclose(fid);
    *t = bu_now() - t0;
    return bad ? -1 : 0;
}

/* ---- the floor: the same bytes written and read sequentially with O_DIRECT (dd-like) --------------------
 */
static int raw_io(const char *file, size_t bytes, double *tw, double *tr, int *direct)
{
    const size_t chunk = (size_t)64 << 20;
    void *buf;
    if (posix_memalign(&buf, 4096, chunk)) return -1;
    memset(buf, 0x5a, chunk);
    *direct = 1;
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
    if (fd < 0 && errno == EINVAL) {
        *direct = 0; /* tmpfs and some overlays refuse O_DIRECT: buffered + fsync, flagged in the record */
        fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
    if (fd < 0) {
        free(buf);
        return -1;
    }
    size_t whole = (bytes + 4095) / 4096 * 4096; /* O_DIRECT moves whole pages */
    double t0 = bu_now();
    int bad = 0;
    for (size_t off = 0; off < whole && !bad; off += chunk) {
        size_t k = whole - off < chunk ? whole - off : chunk;
        bad = pwrite(fd, buf, k, (off_t)off) != (ssize_t)k;
    }
    bad |= fsync(fd) != 0;
    *tw = bu_now() - t0;
    close(fd);
    evict(file);
    fd = open(file, O_RDONLY | (*direct ? O_DIRECT : 0));
    t0 = bu_now();
    for (size_t off = 0; fd >= 0 && off < whole && !bad; off += chunk) {
        size_t k = whole - off < chunk ? whole - off : chunk;
        bad = pread(fd, buf, k, (off_t)off) != (ssize_t)k;
    }
    *tr = bu_now() - t0;
    if (fd >= 0) close(fd);
    unlink(file);
    free(buf);
    return bad || fd < 0 ? -1 : 0;
}

/* ---- records ----------------------------------------------------------------------------------------- */
static void record(FILE *js, const char *impl, const char *dir, size_t N, size_t bytes, double t,
                   int verified, double base_t, double raw_GBs, int direct, double copy_s)
{
    if (!js || o.rank != 0 || t <= 0) return;
    double bw = bytes / t / 1e9;
    fprintf(
        js,
        "{\"bench\":\"io\",\"case\":\"nbody_%s_%s\",\"kind\":\"%s\",\"date\":\"%s\",\"version\":\"%s\","
        "\"ranks\":%d,\"impl\":\"%s\",\"dir\":\"%s\",\"mem\":\"%s\",\"fs\":\"%s\",\"N\":%zu,\"bytes\":%zu,"
        "\"reps\":%d,\"time_s\":%.6g,\"bw_GBs\":%.6g",
        impl, dir, bu_machine(), bu_date(), ky_version(), o.nranks, impl, dir, o.gpu ? "gpu" : "host", o.fs,
        N, bytes, o.reps_now, t, bw);
    if (base_t > 0)
        fprintf(js, ",\"baseline\":\"hdf5\",\"base_time_s\":%.6g,\"ratio\":%.4g", base_t, base_t / t);
    if (raw_GBs > 0)
        fprintf(js, ",\"floor_GBs\":%.6g,\"raw_frac\":%.4g,\"raw_direct\":%s", raw_GBs, bw / raw_GBs,
                direct ? "true" : "false");
    if (copy_s >= 0) fprintf(js, ",\"copy_s\":%.6g", copy_s);
    if (verified >= 0) fprintf(js, ",\"verified\":%s", verified ? "true" : "false");
    fprintf(js, "}\n");
    fflush(js);
}

static double best(double a, double b)
{
    return a <= 0 ? b : b < a ? b : a;
}

/* ---- the N-body snapshot ------------------------------------------------------------------------------ */
static void nbody(FILE *js)
{
    char file[4096], rawf[4200];
    snprintf(file, sizeof file, "%s/ky_bench_io_%d.h5", o.dir, (int)getpid());
    MPI_Bcast(file, sizeof file, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(rawf, sizeof rawf, "%s.raw", file);
    int have_cufile = o.gpu; /* host memory never takes cuFile */
    if (o.rank == 0) {
        printf(
            "# ky_bench_io: N-body snapshot (float4 pos+mass, float3 vel, uint64 id = 36 B/particle) on %s "
            "(%s), "
            "%d rank(s), %s memory, best of %d; GB/s, write = create..file on disk (fsync), read from disk\n",
            o.dir, o.fs, o.nranks, o.gpu ? "GPU" : "host", o.reps);
        printf("%11s %9s | %6s %6s | %6s %6s | %6s %6s | %6s %6s | %6s %6s | %6s %6s %6s %6s\n", "N", "MB",
               "rawW", "rawR", "h5W", "h5R", "bncW", "bncR", "cufW", "cufR", "autoW", "autoR", "a/h5W",
               "a/h5R", "a/rawW", "a/rawR");
    }
    double t_start = bu_now(), t_last = 0;
    int reps_last = 1;
    for (double Nd = o.nmin; Nd <= o.nmax * 1.0001; Nd *= 10) {
        size_t N = (size_t)(Nd + 0.5), bytes = 36 * N;
        /* --budget: the next N takes about ten times the last one; stop before it would overrun (the same
         * decision on every rank: rank 0's clock) */
        int stop = 0;
        int reps_next = bytes >= ((size_t)1 << 30) ? 1 : o.reps;
        double projected = t_last * 10.0 * reps_next / reps_last;
        if (o.rank == 0 && o.budget > 0 && t_last > 0 && bu_now() - t_start + projected > o.budget) {
            printf("# N = %zu and above skipped: about %.0f s more would pass --budget %.0f s\n", N,
                   projected, o.budget);
            stop = 1;
        }
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (stop) break;
        double t_n = bu_now();
        size_t lo = N * o.rank / o.nranks, hi = N * (o.rank + 1) / o.nranks, n = hi - lo;
        void *dev[NFIELD], *host[NFIELD] = {NULL, NULL, NULL};
        for (int i = 0; i < NFIELD; i++) {
            /* every rank holds its share; rank 0 also the whole snapshot for the single-process baselines */
            size_t cnt = o.rank == 0 ? N : n;
            dev[i] = dalloc(cnt * F[i].esz);
            void *img = malloc(cnt * F[i].esz);
            if (!img) bu_die(__FILE__, __LINE__, "no host memory for %zu bytes", cnt * F[i].esz);
            for (size_t k = 0, first = o.rank == 0 ? 0 : lo; k < cnt; k++) {
                if (F[i].type == KY_IO_U64)
                    ((uint64_t *)img)[k] = first + k;
                else
                    for (int c = 0; c < F[i].comp; c++)
                        ((float *)img)[k * F[i].comp + c] = (float)((first + k) % 100003) * 0.5f + (float)c;
            }
            copy(dev[i], img, cnt * F[i].esz, 0);
            free(img);
            if (o.rank == 0 && !(host[i] = malloc(N * F[i].esz)))
                bu_die(__FILE__, __LINE__, "no host memory for %zu bytes", N * F[i].esz);
        }
        /* Kyoyu's rank 0 writes its share from the start of its (whole-snapshot) buffers */
        double tw[NIMPL] = {0}, tr[NIMPL] = {0}, copy_d2h = 0, copy_h2d = 0;
        int ok[NIMPL] = {1, 1, 1, 1, 1}, direct = 0;
        int reps =
            bytes >= ((size_t)1 << 30) ? 1 : o.reps; /* the largest snapshots once: a few seconds each */
        o.reps_now = reps;
        for (int r = 0; r < reps; r++) {
            double a, b;
            if (o.rank == 0) {
                if (raw_io(rawf, bytes, &a, &b, &direct) == 0)
                    tw[I_RAW] = best(tw[I_RAW], a), tr[I_RAW] = best(tr[I_RAW], b);
                else
                    ok[I_RAW] = 0;
                if (h5_put(file, dev, host, N, &a) == 0) {
                    evict(file);
                    if (h5_get(file, dev, host, N, &b) == 0) tr[I_HDF5] = best(tr[I_HDF5], b);
                    tw[I_HDF5] = best(tw[I_HDF5], a);
                } else {
                    ok[I_HDF5] = 0;
                }
                unlink(file);
                /* the copies alone, for h5py's baseline (bench/io_bench.py adds them) */
                double t0 = bu_now();
                for (int i = 0; i < NFIELD; i++) copy(host[i], dev[i], N * F[i].esz, 1);
                copy_d2h = best(copy_d2h, bu_now() - t0);
                t0 = bu_now();
                for (int i = 0; i < NFIELD; i++) copy(dev[i], host[i], N * F[i].esz, 0);
                copy_h2d = best(copy_h2d, bu_now() - t0);
            }
            for (int m = I_BOUNCE; m < NIMPL; m++) {
                if (m == I_CUFILE && !have_cufile) continue;
                int st = snap_put(file, dev, N, impl_path[m], &a);
                if (m == I_CUFILE && st == KY_ERR_UNSUPPORTED) {
                    if (o.rank == 0) printf("# cufile: %s\n", ky_last_error());
                    have_cufile = 0;
                    continue;
                }
                if (st != KY_OK) {
                    if (o.rank == 0) printf("# %s write failed: %s\n", impl_name[m], ky_last_error());
                    ok[m] = 0;
                    continue;
                }
                tw[m] = best(tw[m], a);
                if (o.rank == 0) evict(file);
                st = snap_get(file, dev, N, impl_path[m], &b);
                if (st != KY_OK) {
                    if (o.rank == 0) printf("# %s read failed: %s\n", impl_name[m], ky_last_error());
                    ok[m] = 0;
                } else {
                    tr[m] = best(tr[m], b);
                }
                if (o.rank == 0) unlink(file);
            }
        }
        if (!have_cufile) ok[I_CUFILE] = 0, tw[I_CUFILE] = tr[I_CUFILE] = 0;
        if (o.rank == 0) {
            double rawW = tw[I_RAW] > 0 ? bytes / tw[I_RAW] / 1e9 : 0,
                   rawR = tr[I_RAW] > 0 ? bytes / tr[I_RAW] / 1e9 : 0;
            for (int m = 0; m < NIMPL; m++) {
                if (m == I_CUFILE && !have_cufile) continue;
                double bw = m == I_RAW ? 0 : rawW, br = m == I_RAW ? 0 : rawR;
                double bw0 = m >= I_BOUNCE ? tw[I_HDF5] : 0, br0 = m >= I_BOUNCE ? tr[I_HDF5] : 0;
                int v = m >= I_BOUNCE ? ok[m] : -1;
                record(js, impl_name[m], "write", N, bytes, tw[m], v, bw0, bw, direct,
                       m == I_HDF5 ? copy_d2h : -1);
                record(js, impl_name[m], "read", N, bytes, tr[m], v, br0, br, direct,
                       m == I_HDF5 ? copy_h2d : -1);
            }
            /* the copies alone (h5py's baseline adds them to its own times) */
            record(js, "copy", "write", N, bytes, copy_d2h, -1, 0, 0, direct, -1);
            record(js, "copy", "read", N, bytes, copy_h2d, -1, 0, 0, direct, -1);
            double g[NIMPL][2];
            for (int m = 0; m < NIMPL; m++) {
                g[m][0] = tw[m] > 0 ? bytes / tw[m] / 1e9 : 0;
                g[m][1] = tr[m] > 0 ? bytes / tr[m] / 1e9 : 0;
            }
#define RATIO(a, b) ((b) > 0 ? (a) / (b) : 0)
            printf(
                "%11zu %9.1f | %6.2f %6.2f | %6.2f %6.2f | %6.2f %6.2f | %6.2f %6.2f | %6.2f %6.2f | %6.2f "
                "%6.2f "
                "%6.2f %6.2f\n",
                N, bytes / 1e6, g[I_RAW][0], g[I_RAW][1], g[I_HDF5][0], g[I_HDF5][1], g[I_BOUNCE][0],
                g[I_BOUNCE][1], g[I_CUFILE][0], g[I_CUFILE][1], g[I_AUTO][0], g[I_AUTO][1],
                RATIO(g[I_AUTO][0], g[I_HDF5][0]), RATIO(g[I_AUTO][1], g[I_HDF5][1]),
                RATIO(g[I_AUTO][0], g[I_RAW][0]), RATIO(g[I_AUTO][1], g[I_RAW][1]));
            fflush(stdout);
        }
        for (int i = 0; i < NFIELD; i++) {
            dfree(dev[i]);
            free(host[i]);
        }
        t_last = bu_now() - t_n;
        reps_last = reps;
    }
}

/* ---- --table: the table of KY_IO_PATH=auto ---------------------------------------------------------------
 */
static void tune(void)
{
    char file[4096];
    snprintf(file, sizeof file, "%s/ky_io_tune_%d.h5", o.dir, (int)getpid());
    MPI_Bcast(file, sizeof file, MPI_CHAR, 0, MPI_COMM_WORLD);
    FILE *t = NULL;
    if (o.rank == 0) {
        t = fopen(o.table, "a");
        if (!t) bu_die(__FILE__, __LINE__, "cannot append to %s: %s", o.table, strerror(errno));
        fprintf(
            t,
            "# kyoyu-io-table 1: %s %s, %s on %s, %d rank(s), best of %d; fs dir bytes_per_rank bounce_GBs "
            "cufile_GBs\n",
            bu_machine(), bu_date(), o.dir, o.fs, o.nranks, o.reps);
        printf("# ky_bench_io --table on %s (%s): GB/s per path\n%12s %9s %9s %9s %9s\n", o.dir, o.fs,
               "bytes", "bncW", "cufW", "bncR", "cufR");
    }
    int have_cufile = o.gpu;
    void *warm[NFIELD];
    for (int i = 0; i < NFIELD; i++) warm[i] = dalloc(1024 * F[i].esz);
    double dummy;
    /* the cuFile driver's opening (once per process) is not any size's cost */
    if (have_cufile && snap_put(file, warm, 1024, KY_IO_PATH_CUFILE, &dummy) != KY_OK) {
        have_cufile = 0;
        if (o.rank == 0) printf("# cufile: %s\n", ky_last_error());
    }
    if (o.rank == 0) unlink(file);
    for (int i = 0; i < NFIELD; i++) dfree(warm[i]);
    for (size_t sz = o.tmin; sz <= o.tmax; sz *= 4) {
        size_t N = sz * o.nranks / 4; /* float32 elements: sz bytes per rank */
        size_t lo = N * o.rank / o.nranks, hi = N * (o.rank + 1) / o.nranks;
        void *dev = dalloc((hi - lo) * 4);
        double g[2][2] = {{-1, -1}, {-1, -1}}; /* [path][write, read] */
        int reps = sz >= ((size_t)256 << 20) ? 1 : o.reps;
        for (int p = 0; p < 2; p++) {
            if (p == 1 && !have_cufile) continue;
            ky_io_path_t path = p ? KY_IO_PATH_CUFILE : KY_IO_PATH_BOUNCE;
            double tw = 0, tr = 0;
            for (int r = 0; r < reps; r++) {
                ky_io_file_t f = NULL;
                ky_io_opts_t op = {KY_IO_F32, 1, NULL, path};
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = bu_now();
                int st = ky_io_create(file, &f);
                if (st == KY_OK) st = ky_io_write_buffer(f, "x", 1, &N, &lo, &hi, dev, &op);
                if (f) {
                    int s = ky_io_close(f);
                    if (st == KY_OK) st = s;
                }
                double a = max_all(bu_now() - t0);
                if (o.rank == 0) evict(file);
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = bu_now();
                if (st == KY_OK) st = ky_io_open(file, &f);
                if (st == KY_OK) {
                    st = ky_io_read_buffer(f, "x", 1, &lo, &hi, dev, &op);
                    int s = ky_io_close(f);
                    if (st == KY_OK) st = s;
                }
                double b = max_all(bu_now() - t0);
                if (o.rank == 0) unlink(file);
                if (st != KY_OK) {
                    if (o.rank == 0)
                        printf("# %s at %zu bytes failed: %s\n", p ? "cufile" : "bounce", sz,
                               ky_last_error());
                    tw = tr = 0;
                    break;
                }
                tw = best(tw, a);
                tr = best(tr, b);
            }
            if (tw > 0) g[p][0] = (double)sz / tw / 1e9, g[p][1] = (double)sz / tr / 1e9;
        }
        if (o.rank == 0) {
            char b0[32], c0[32], b1[32], c1[32];
#define RATE(buf, v) (v < 0 ? snprintf(buf, sizeof buf, "-") : snprintf(buf, sizeof buf, "%.4f", v), buf)
            fprintf(t, "%s write %zu %s %s\n", o.fs, sz, RATE(b0, g[0][0]), RATE(c0, g[1][0]));
            fprintf(t, "%s read %zu %s %s\n", o.fs, sz, RATE(b1, g[0][1]), RATE(c1, g[1][1]));
            printf("%12zu %9s %9s %9s %9s\n", sz, b0, c0, b1, c1);
            fflush(stdout);
        }
        dfree(dev);
    }
    if (t) fclose(t);
}

static int usage(const char *prog, FILE *to)
{
    fprintf(
        to,
        "usage: %s [--dir DIR] [--nmin N] [--nmax N] [--reps R] [--budget S] [--mem gpu|host] [--json FILE]\n"
        "       %s --table FILE [--dir DIR] [--tmin BYTES] [--tmax BYTES] [--reps R]\n"
        "  N-body snapshot (36 B/particle) written and read by Kyoyu's paths (bounce, cufile, auto) beside\n"
        "  plain HDF5 after cudaMemcpy and the disk's raw O_DIRECT bandwidth; N = nmin, 10 nmin, .. nmax\n"
        "  (default 1e3..1e8, best of 3; --budget: no larger N once the next would end after S seconds).\n"
        "  --table appends the KY_IO_TABLE rows of this file system to FILE\n"
        "  (sizes tmin..tmax x4, default 4K..1G). --quick: N = 1e3, 1e4, one repetition.\n",
        prog, prog);
    return 1;
}

int main(int argc, char **argv)
{
    const char *mem = "gpu";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(argv[0], stdout) - 1;
        if (!strcmp(a, "--dir") && v)
            o.dir = v, i++;
        else if (!strcmp(a, "--nmin") && v)
            o.nmin = atof(v), i++;
        else if (!strcmp(a, "--nmax") && v)
            o.nmax = atof(v), i++;
        else if (!strcmp(a, "--budget") && v)
            o.budget = atof(v), i++;
        else if (!strcmp(a, "--reps") && v)
            o.reps = atoi(v), i++;
        else if (!strcmp(a, "--json") && v)
            o.json = v, i++;
        else if (!strcmp(a, "--mem") && v)
            mem = v, i++;
        else if (!strcmp(a, "--table") && v)
            o.table = v, o.tune = 1, i++;
        else if (!strcmp(a, "--tmin") && v && bu_parse_size(v, &o.tmin) == 0)
            i++;
        else if (!strcmp(a, "--tmax") && v && bu_parse_size(v, &o.tmax) == 0)
            i++;
        else if (!strcmp(a, "--quick"))
            o.nmin = 1e3, o.nmax = 1e4, o.reps = 1;
        else
            return usage(argv[0], stderr);
    }
    if (o.reps < 1 || o.nmin < 1 || o.nmax < o.nmin || (o.tune && !o.table) || o.tmin < 4)
        return usage(argv[0], stderr);
    o.gpu = strcmp(mem, "host") != 0;
    BU_KY(ky_init(&argc, &argv));
    o.rank = ky_rank();
    o.nranks = ky_nranks();
#ifdef KY_BENCH_HAVE_CUDA
    int ndev = 0;
    if (o.gpu && (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)) {
        if (o.rank == 0) printf("ky_bench_io: no GPU (--mem host runs from host memory)\n");
        ky_finalize();
        return 77;
    }
    if (o.gpu) BU_CUDA(cudaSetDevice(ky_local_rank() % ndev));
#else
    if (o.gpu) {
        if (o.rank == 0) printf("ky_bench_io: built without CUDA (--mem host runs from host memory)\n");
        ky_finalize();
        return 77;
    }
#endif
    ky_io_fs_type(o.dir, o.fs, sizeof o.fs); /* the name the auto table uses */
    FILE *js = NULL;
    if (o.json && o.rank == 0 && !(js = fopen(o.json, "a")))
        bu_die(__FILE__, __LINE__, "cannot append to %s: %s", o.json, strerror(errno));
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (o.tune)
        tune();
    else
        nbody(js);
    if (js) fclose(js);
    ky_finalize();
    return 0;
}
