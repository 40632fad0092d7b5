/* The cuFile path's own logic without a GPU (label cpu): src/io/cufile.c compiled here against stand-ins for
 * the CUDA runtime and cuFile (tests/io/mock: "device" memory is host memory; cuFile is pread/pwrite that
 * ends the test on an O_DIRECT request not made of whole 4 KiB pages). Each case writes a piece per rank, all
 * ranks at once, into one dataset (contiguous, allocated at creation, as dataset.c makes them) with
 * kyi_io_cufile_put, then reads it back into another distribution with kyi_io_cufile_get: the runs found in
 * the pieces (uneven splits at unaligned offsets, halos: a run per row, whole rows merged, cyclic rows), the
 * unaligned edges through the page cache beside other ranks' edges of the same page, the checksums against
 * checksum.c's, the file read back by serial HDF5, halos never touched. The GPU checksum is replaced by the
 * same formula on the host (the kernel itself runs in the gpu tests). Prints "CUFILE MOCK OK".
 *
 * With argument "fallback" or "forced" (CPU builds only: KYT_MOCK_GPU, the GPU service below) it runs the
 * public calls instead, on buffers the GPU service calls GPU memory, while cuFileHandleRegister fails on the
 * ranks KY_TEST_CUFILE_MOCK_FAIL names ("register": all, "register:R": rank R only): auto falls back to
 * bounce on every rank before any byte moved, and the data round-trips; KY_IO_PATH=cufile fails with the
 * cause on every rank, without a hang. */
#include "io/cufile.c"
#include "runtime/runtime.h"

long mock_cufile_calls, mock_cufile_bytes, mock_cufile_registers;

int mock_cufile_refuse(void)
{
    const char *e = getenv("KY_TEST_CUFILE_MOCK_FAIL");
    if (!e || strncmp(e, "register", 8) != 0) return 0;
    return e[8] != ':' || atoi(e + 9) == kyi_rt.rank;
}

#ifdef KYT_MOCK_GPU
/* The GPU service of the fallback cases, over the CPU build's stubs (gpu_none.c, whose other calls stay):
 * "GPU" memory is host memory allocated by gpu_alloc (device 0 for kyi_gpu_ptr_device), pinned memory is
 * malloc'ed, strided copies are done at once (no op to wait for). */
#define kyi_gpu_ptr_device none_gpu_ptr_device
#define kyi_gpu_host_alloc none_gpu_host_alloc
#define kyi_gpu_host_free none_gpu_host_free
#define kyi_gpu_copy_strided_async none_gpu_copy_strided_async
#include "runtime/gpu/gpu_none.c"
#undef kyi_gpu_ptr_device
#undef kyi_gpu_host_alloc
#undef kyi_gpu_host_free
#undef kyi_gpu_copy_strided_async
int kyi_gpu_ptr_device(const void *p);
int kyi_gpu_host_alloc(size_t n, void **p);
int kyi_gpu_host_free(void *p);
int kyi_gpu_copy_strided_async(int dev, void *dst, const size_t dst_stride[], const void *src,
                               const size_t src_stride[], const size_t count[], int levels,
                               kyi_gpu_op_t **op);

static struct {
    char *p;
    size_t n;
} gmem[8];

static void *gpu_alloc(size_t n)
{
    for (int i = 0; i < 8; i++)
        if (!gmem[i].p) {
            gmem[i].p = malloc(n);
            gmem[i].n = n;
            return gmem[i].p;
        }
    return NULL;
}

static void gpu_free(void *p)
{
    for (int i = 0; i < 8; i++)
        if (gmem[i].p == p) gmem[i].p = NULL;
    free(p);
}

int kyi_gpu_ptr_device(const void *p)
{
    for (int i = 0; i < 8; i++)
        if (gmem[i].p && (const char *)p >= gmem[i].p && (const char *)p < gmem[i].p + gmem[i].n) return 0;
    return -1;
}

int kyi_gpu_host_alloc(size_t n, void **p)
{
    *p = malloc(n ? n : 1);
    return *p ? KY_OK : KY_ERR_NOMEM;
}

int kyi_gpu_host_free(void *p)
{
    free(p);
    return KY_OK;
}

int kyi_gpu_copy_strided_async(int dev, void *dst, const size_t dst_stride[], const void *src,
                               const size_t src_stride[], const size_t count[], int levels, kyi_gpu_op_t **op)
{
    (void)dev;
    size_t c[4] = {count[0], 1, 1, 1}, ds[3] = {0, 0, 0}, ss[3] = {0, 0, 0};
    for (int l = 1; l <= levels; l++)
        c[l] = count[l], ds[l - 1] = dst_stride[l - 1], ss[l - 1] = src_stride[l - 1];
    for (size_t k = 0; k < c[3]; k++)
        for (size_t j = 0; j < c[2]; j++)
            for (size_t i = 0; i < c[1]; i++)
                memcpy((char *)dst + k * ds[2] + j * ds[1] + i * ds[0],
                       (const char *)src + k * ss[2] + j * ss[1] + i * ss[0], c[0]);
    *op = NULL;
    return KY_OK;
}
#endif

static inline uint64_t mixh(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
int kyi_io_gpu_checksum(int dev, const kyi_io_run_t *runs, size_t nruns, size_t elem, uint64_t *sum,
                        char *err, size_t len)
{
    (void)dev, (void)err, (void)len;
    for (size_t r = 0; r < nruns; r++)
        for (uint64_t i = 0; i < runs[r].n; i++) {
            const unsigned char *e = (const unsigned char *)runs[r].mem + i * elem;
            uint64_t key = (runs[r].g + i) * 0x9E3779B97F4A7C15ull;
            for (size_t j = 0, o = 0; o < elem; j++, o += 8) {
                uint64_t w = 0;
                memcpy(&w, e + o, elem - o < 8 ? elem - o : 8);
                *sum += mixh(w ^ (key + j * 0xD1B54A32D192ED03ull));
            }
        }
    return 0;
}

static double V(size_t g, int c)
{
    return (double)(g % 7919) * 0.5 + c;
}
static int bad_total;
#define CHECK(c, ...)                                                                  \
    do {                                                                               \
        if (!(c)) {                                                                    \
            bad_total++;                                                               \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", kyi_rt.rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                              \
            fprintf(stderr, "\n");                                                     \
        }                                                                              \
    } while (0)
static const char *tmpdir;

/* a piece: box [lo, hi) of a dims dataset (nd dims), halos h[], element = comp doubles; cyclic dim cyc (-1
 * none) */
typedef struct {
    kyi_io_piece_t p;
    char *mem;
    size_t tot;
} pc_t;

static void make(pc_t *x, const kyi_io_shape_t *sh, const size_t lo[], const size_t hi[], const int h[],
                 size_t **g)
{
    memset(x, 0, sizeof *x);
    int nd = sh->ndim;
    size_t tot = 1;
    for (int d = 0; d < nd; d++) {
        x->p.n[d] = hi[d] - lo[d];
        x->p.E[d] = x->p.n[d] + 2 * h[d];
        x->p.off[d] = h[d];
        x->p.g0[d] = lo[d];
        x->p.g[d] = g ? g[d] : NULL;
        tot *= x->p.E[d];
    }
    for (int d = nd - 1; d >= 0; d--) x->p.S[d] = d == nd - 1 ? 1 : x->p.S[d + 1] * x->p.E[d + 1];
    x->tot = tot;
    x->mem = malloc(tot * sh->elem);
    for (size_t i = 0; i < tot * sh->elem / 8; i++) ((double *)x->mem)[i] = -1.0;
    size_t o = 0;
    for (int d = 0; d < nd; d++) o += h[d] * x->p.S[d];
    x->p.origin = x->mem + o * sh->elem;
    x->p.dev = 0;
}

/* visit owned elements: fill (set) or check against V */
static long visit(pc_t *x, const kyi_io_shape_t *sh, int set)
{
    int nd = sh->ndim, comp = (int)(sh->elem / 8);
    size_t l[4] = {0}, cnt = 1, GS[4];
    GS[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--) GS[d] = GS[d + 1] * sh->dims[d + 1];
    for (int d = 0; d < nd; d++) cnt *= x->p.n[d];
    long bad = 0;
    char *owned = calloc(x->tot, 1);
    for (size_t e = 0; e < cnt; e++) {
        size_t r = e, m = 0, g = 0;
        for (int d = nd - 1; d >= 0; d--) l[d] = r % x->p.n[d], r /= x->p.n[d];
        for (int d = 0; d < nd; d++) {
            m += l[d] * x->p.S[d];
            g += (x->p.g[d] ? x->p.g[d][l[d]] : x->p.g0[d] + l[d]) * GS[d];
        }
        double *v = (double *)(x->p.origin + m * sh->elem);
        size_t moff = (size_t)((char *)v - x->mem) / sh->elem;
        owned[moff] = 1;
        for (int c = 0; c < comp; c++) {
            if (set)
                v[c] = V(g, c);
            else
                bad += v[c] != V(g, c);
        }
    }
    if (!set)
        for (size_t i = 0; i < x->tot; i++)
            if (!owned[i])
                for (int c = 0; c < comp; c++) bad += ((double *)(x->mem + i * sh->elem))[c] != -1.0;
    free(owned);
    return bad;
}

static void run_case(const char *name, const kyi_io_shape_t *sh, pc_t *w, pc_t *r)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/cufile_mock_%s.h5", tmpdir, name);
    ky_io_file_t f;
    CHECK(ky_io_create(path, &f) == KY_OK, "create %s", ky_last_error());
    hsize_t hd[5];
    int hn = sh->ndim;
    for (int d = 0; d < sh->ndim; d++) hd[d] = sh->dims[d];
    if (sh->comp > 1) hd[hn++] = sh->comp;
    hid_t sp = H5Screate_simple(hn, hd, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_layout(dcpl, H5D_CONTIGUOUS);
    H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    /* every rank with parallel HDF5; rank 0 alone on the raw path (KY_IO_RAW, serial HDF5), which sends the
     * offset */
    hid_t d =
        f->fid >= 0 ? H5Dcreate2(f->fid, "x", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
    kyi_io_dset_t ds;
    CHECK(kyi_io_dset_extent("put", f, d, KY_IO_F64, &ds) == KY_OK, "extent %s", ky_last_error());
    visit(w, sh, 1);
    uint64_t cks = 0;
    long c0 = mock_cufile_calls;
    CHECK(kyi_io_cufile_put("put", f, ds.off, sh, &w->p, &cks) == KY_OK, "put %s", ky_last_error());
    size_t n0 = 1;
    for (int k = 0; k < sh->ndim; k++) n0 *= w->p.n[k];
    uint64_t ref = kyi_io_checksum(sh, &w->p, 0, w->p.n[0], w->p.origin, w->p.S);
    CHECK(cks == ref, "%s: write checksum %llx, checksum.c %llx", name, (unsigned long long)cks,
          (unsigned long long)ref);
    printf("rank %d %s: offset %llu, %ld cuFile calls\n", kyi_rt.rank, name, (unsigned long long)ds.off,
           mock_cufile_calls - c0);
    uint64_t all = 0;
    MPI_Allreduce(&cks, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (d >= 0) H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    CHECK(ky_io_close(f) == KY_OK, "close %s", ky_last_error());
    if (kyi_rt.rank == 0) { /* serial HDF5 reads what cuFile wrote */
        hid_t fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        hid_t ds = H5Dopen2(fid, "x", H5P_DEFAULT);
        size_t tot = sh->elem / 8;
        for (int k = 0; k < sh->ndim; k++) tot *= sh->dims[k];
        double *a = malloc(tot * 8);
        H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a);
        long bad = 0;
        int comp = (int)(sh->elem / 8);
        for (size_t i = 0; i < tot; i++) bad += a[i] != V(i / comp, (int)(i % comp));
        CHECK(bad == 0, "%s: %ld wrong values in the file", name, bad);
        free(a);
        H5Dclose(ds);
        H5Fclose(fid);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(ky_io_open(path, &f) == KY_OK, "open %s", ky_last_error());
    d = H5Dopen2(f->fid, "x", H5P_DEFAULT);
    CHECK(kyi_io_dset_extent("get", f, d, KY_IO_F64, &ds) == KY_OK, "extent %s", ky_last_error());
    uint64_t rc = 0;
    CHECK(kyi_io_cufile_get("get", f, ds.off, sh, &r->p, &rc) == KY_OK, "get %s", ky_last_error());
    long bad = visit(r, sh, 0);
    CHECK(bad == 0, "%s: %ld wrong after the read", name, bad);
    ref = kyi_io_checksum(sh, &r->p, 0, r->p.n[0], r->p.origin, r->p.S);
    CHECK(rc == ref, "%s: read checksum differs", name);
    H5Dclose(d);
    ky_io_close(f);
    MPI_Barrier(MPI_COMM_WORLD);
    if (kyi_rt.rank == 0) unlink(path);
    free(w->mem);
    free(r->mem);
}

#ifdef KYT_MOCK_GPU
static int contains(const char *msg, const char *w)
{
    return strstr(msg, w) != NULL;
}

/* The status and message every rank must give when rank `bad` (-1: every rank) could not register. */
static void check_refusal(const char *what, int st, const char *call, int bad)
{
    const char *m = ky_last_error();
    char me[64], cause[64];
    snprintf(me, sizeof me, "rank %d: %s: ", kyi_rt.rank, call);
    /* the lowest failing rank's cause is the one every rank reports */
    snprintf(cause, sizeof cause, "rank %d: %s: cuFileHandleRegister", bad < 0 ? 0 : bad, call);
    CHECK(st == KY_ERR_IO, "%s: status %d, not KY_ERR_IO: %s", what, st, m);
    CHECK(contains(m, me) && contains(m, cause) && contains(m, "5027"),
          "%s: the message does not name rank, "
          "call and cause: %s",
          what, m);
}

/* One "GPU" buffer per rank of rows [r0, r1) of a rows x cols dataset of doubles, `shift` added. */
static double *rows_buf(size_t r0, size_t r1, size_t cols, double shift)
{
    double *b = gpu_alloc((r1 - r0) * cols * sizeof(double) + 1);
    for (size_t i = 0; i < (r1 - r0) * cols; i++) b[i] = V(r0 * cols + i, 0) + shift;
    return b;
}

/* auto ("fallback") or KY_IO_PATH=cufile ("forced") while cuFile cannot register the files on some rank */
static void public_cases(int forced)
{
    int R = kyi_rt.rank, P = kyi_rt.nranks;
    const char *fe = getenv("KY_TEST_CUFILE_MOCK_FAIL");
    int bad = fe && fe[8] == ':' ? atoi(fe + 9) : -1;
    const char *table = getenv("KY_IO_TABLE");
    if (!forced && R == 0) { /* cufile faster everywhere: without the refusal auto would take it */
        FILE *t = table ? fopen(table, "w") : NULL;
        CHECK(t != NULL, "KY_IO_TABLE not set or not writable");
        if (t) {
            fprintf(
                t,
                "# kyoyu-io-table 1 (tests/io/cufile_mock.c)\n* write 4096 1.0 2.0\n* read 4096 1.0 2.0\n");
            fclose(t);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* 64 rows of 1024 doubles per rank: 512 KiB runs, long enough for auto's cufile */
    size_t cols = 1024, rows = 64 * (size_t)P, dims[2] = {rows, cols};
    size_t lo[2] = {64 * (size_t)R, 0}, hi[2] = {64 * (size_t)R + 64, cols};
    double *w = rows_buf(lo[0], hi[0], cols, 0), *w2 = rows_buf(lo[0], hi[0], cols, 0.25);
    ky_io_opts_t o = {KY_IO_F64, 0, NULL, KY_IO_PATH_DEFAULT};
    char path[4200];
    snprintf(path, sizeof path, "%s/cufile_mock_%s_n%d.h5", tmpdir, forced ? "forced" : "fallback", P);
    if (R == 0) unlink(path); /* a file an earlier run left */
    MPI_Barrier(MPI_COMM_WORLD);
    ky_io_file_t f = NULL;
    CHECK(ky_io_create(path, &f) == KY_OK, "create %s", ky_last_error());
    int st = ky_io_write_buffer(f, "a", 2, dims, lo, hi, w, &o);
    if (forced) {
        check_refusal("forced write", st, "ky_io_write_buffer", bad);
        st = ky_io_close(f);
        CHECK(st == KY_ERR_IO && contains(ky_last_error(), "discarded"),
              "close after the refused write: %d %s", st, ky_last_error());
        CHECK(access(path, F_OK) != 0, "%s exists after a refused write", path);
        /* a file written through bounce, read with cuFile forced */
        ky_io_opts_t ob = {KY_IO_F64, 0, NULL, KY_IO_PATH_BOUNCE};
        CHECK(ky_io_create(path, &f) == KY_OK, "create %s", ky_last_error());
        CHECK(ky_io_write_buffer(f, "a", 2, dims, lo, hi, w, &ob) == KY_OK, "bounce write: %s",
              ky_last_error());
        CHECK(ky_io_close(f) == KY_OK, "close %s", ky_last_error());
        CHECK(ky_io_open(path, &f) == KY_OK, "open %s", ky_last_error());
        st = ky_io_read_buffer(f, "a", 2, lo, hi, w2, &o);
        check_refusal("forced read", st, "ky_io_read_buffer", bad);
        CHECK(ky_io_close(f) == KY_OK, "close after the refused read: %s", ky_last_error());
        CHECK(mock_cufile_calls == 0, "%ld cuFile reads or writes", mock_cufile_calls);
    } else {
        CHECK(st == KY_OK, "auto write: %s", ky_last_error());
        CHECK(ky_io_write_buffer(f, "b", 2, dims, lo, hi, w2, &o) == KY_OK, "second auto write: %s",
              ky_last_error());
        CHECK(ky_io_close(f) == KY_OK, "close %s", ky_last_error());
        if (R == 0) { /* every value, as serial HDF5 reads the file */
            hid_t fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
            CHECK(fid >= 0, "%s was not written", path);
            double *all = malloc(rows * cols * sizeof(double));
            for (int k = 0; k < 2; k++) {
                hid_t d = H5Dopen2(fid, k ? "b" : "a", H5P_DEFAULT);
                long nb = d < 0 || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) < 0;
                for (size_t i = 0; i < rows * cols && !nb; i++) nb += all[i] != V(i, 0) + (k ? 0.25 : 0);
                CHECK(nb == 0, "dataset %s: %ld wrong values in the file", k ? "b" : "a", nb);
                if (d >= 0) H5Dclose(d);
            }
            free(all);
            H5Fclose(fid);
        }
        /* read back into another rank's rows ("GPU" buffers again): the checksum verified, every value */
        size_t rr = (size_t)(P - 1 - R), rlo[2] = {64 * rr, 0}, rhi[2] = {64 * rr + 64, cols};
        double *r = rows_buf(rlo[0], rhi[0], cols, 100);
        CHECK(ky_io_open(path, &f) == KY_OK, "open %s", ky_last_error());
        CHECK(ky_io_read_buffer(f, "b", 2, rlo, rhi, r, &o) == KY_OK, "auto read: %s", ky_last_error());
        CHECK(ky_io_close(f) == KY_OK, "close %s", ky_last_error());
        long nb = 0;
        for (size_t i = 0; i < 64 * cols; i++) nb += r[i] != V(rlo[0] * cols + i, 0) + 0.25;
        CHECK(nb == 0, "%ld wrong values read back", nb);
        gpu_free(r);
        /* bounce on every rank: no byte through cuFile; a refusing rank tried once (remembered) */
        long calls = 0;
        MPI_Allreduce(&mock_cufile_calls, &calls, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        CHECK(calls == 0, "%ld cuFile reads or writes although a rank could not register", calls);
        if (mock_cufile_refuse())
            CHECK(mock_cufile_registers == 1, "cuFileHandleRegister tried %ld times on the refusing rank",
                  mock_cufile_registers);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (R == 0) unlink(path);
    gpu_free(w);
    gpu_free(w2);
    printf("rank %d %s: %ld cuFileHandleRegister calls, %ld cuFile reads and writes\n", R,
           forced ? "forced" : "fallback", mock_cufile_registers, mock_cufile_calls);
}
#endif

int main(int argc, char **argv)
{
    ky_init(&argc, &argv);
    int R = kyi_rt.rank, P = kyi_rt.nranks;
    tmpdir = getenv("KY_TEST_TMPDIR") ? getenv("KY_TEST_TMPDIR") : "/tmp";
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "fallback") || !strcmp(mode, "forced")) {
#ifdef KYT_MOCK_GPU
        public_cases(!strcmp(mode, "forced"));
#else
        CHECK(0, "%s: only in a CPU build (the GPU service stand-in)", mode);
#endif
        goto done;
    }
    int h0[4] = {0}, h2[4] = {2, 1, 0, 0}, h1[4] = {1, 0, 0, 0};
    /* A: 1-D float3-like elements of 3 doubles, uneven split, halo 2 writer, other split + halo 1 reader */
    {
        kyi_io_shape_t sh = {1, {100003}, KY_IO_F64, 3, 24};
        size_t lo[1] = {sh.dims[0] * R / P}, hi[1] = {sh.dims[0] * (R + 1) / P};
        size_t lo2[1] = {sh.dims[0] * R / (P + 1)},
               hi2[1] = {R == P - 1 ? sh.dims[0] : sh.dims[0] * (R + 1) / (P + 1)};
        pc_t w, r;
        make(&w, &sh, lo, hi, h2, NULL);
        make(&r, &sh, lo2, hi2, h1, NULL);
        run_case("A", &sh, &w, &r);
    }
    /* B: 2-D 37 x 1030 doubles, halos (a run per row: head edge, pages, tail edge), read by column halves */
    {
        kyi_io_shape_t sh = {2, {37, 1030}, KY_IO_F64, 1, 8};
        size_t lo[2] = {37 * R / P, 0}, hi[2] = {37 * (R + 1) / P, 1030};
        size_t lo2[2] = {0, 1030 * R / P}, hi2[2] = {37, 1030 * (R + 1) / P};
        pc_t w, r;
        make(&w, &sh, lo, hi, h2, NULL);
        make(&r, &sh, lo2, hi2, h1, NULL);
        run_case("B", &sh, &w, &r);
    }
    /* C: 64 x 512 without halos: one run per rank, whole pages */
    {
        kyi_io_shape_t sh = {2, {64, 512}, KY_IO_F64, 1, 8};
        size_t lo[2] = {64 * R / P, 0}, hi[2] = {64 * (R + 1) / P, 512};
        pc_t w, r;
        make(&w, &sh, lo, hi, h0, NULL);
        make(&r, &sh, lo, hi, h0, NULL);
        run_case("C", &sh, &w, &r);
    }
    /* D: cyclic rows (blocks of 3) of 50 x 300 doubles, read back by block rows */
    {
        kyi_io_shape_t sh = {2, {50, 300}, KY_IO_F64, 1, 8};
        size_t n = 0, *g0 = malloc(50 * sizeof(size_t));
        for (size_t i = 0; i < 50; i++)
            if ((i / 3) % P == (size_t)R) g0[n++] = i;
        size_t *g[2] = {g0, NULL};
        size_t lo[2] = {0, 0}, hi[2] = {n, 300};
        size_t lo2[2] = {50 * R / P, 0}, hi2[2] = {50 * (R + 1) / P, 300};
        pc_t w, r;
        make(&w, &sh, lo, hi, h0, g);
        make(&r, &sh, lo2, hi2, h2, NULL);
        run_case("D", &sh, &w, &r);
        free(g0);
    }
done:;
    int all = 0;
    MPI_Allreduce(&bad_total, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (R == 0)
        printf("CUFILE MOCK %s (%d failures), %ld cuFile calls of %ld bytes on rank 0\n",
               all ? "FAILED" : "OK", all, mock_cufile_calls, mock_cufile_bytes);
    ky_finalize();
    return all != 0;
}
