/* Tests of the io layer (kyoyu/io.h, docs/io.md): arrays and buffers written and read back with other
 * distributions and boxes (odd sizes, cyclic dimensions, halos that must not be written or touched),
 * attributes checked with HDF5's own serial API, bad input with the messages it must give, a damaged file
 * found by the checksum. Every value is a function of its global index, computed here, not by Kyoyu.
 * GPU placement (KY_TEST_MEMKIND=gpu, label gpu): the same round trips through the path KY_IO_PATH names
 * (bounce, cufile), cufile against bounce on the same files (Io.CufileCross), auto from a table
 * (Io.AutoTable). */
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kyoyu/io.h"
#include "kyt.h"

#ifndef KY_TEST_HDF5_PARALLEL /* set by tests/io/CMakeLists.txt: the build's HDF5 is parallel */
#define KY_TEST_HDF5_PARALLEL 1
#endif

namespace {

bool gpu_run()
{
    const char *m = getenv("KY_TEST_MEMKIND");
    return m && std::string(m) == "gpu";
}

ky_place_t place()
{
    return gpu_run() ? KY_PLACE_GPU : KY_PLACE_HOST;
}

#define SKIP_IF_NO_IO()                                                                          \
    do {                                                                                         \
        ky_io_file_t f_;                                                                         \
        int s_ = ky_io_open("/nonexistent-kyoyu-probe.h5", &f_);                                 \
        if (s_ == KY_ERR_UNSUPPORTED) GTEST_SKIP() << "io layer not built: " << ky_last_error(); \
        if (gpu_run() && !kyt::gpu_everywhere()) GTEST_SKIP() << "GPU run: no GPU on some rank"; \
    } while (0)

bool cufile_built();
bool cufile_refused();

bool forced_cufile()
{
    const char *p = getenv("KY_IO_PATH");
    return p && std::string(p) == "cufile";
}

/* KY_IO_PATH=cufile on GPU memory where cuFile cannot register files (the probe's forced write failed with
 * the cause): every write of GPU memory would fail; Io.CufileForced checks that error instead. Collective. */
#define SKIP_IF_CUFILE_REFUSED()                                                                       \
    do {                                                                                               \
        if (gpu_run() && forced_cufile() && cufile_refused())                                          \
            GTEST_SKIP()                                                                               \
                << "KY_IO_PATH=cufile: cuFile cannot register files here (Io.CufileForced checks the " \
                   "error on every rank)";                                                             \
    } while (0)

/* A directory for this test program's files, the same on every rank (from rank 0's pid). */
std::string dir()
{
    static std::string d;
    if (d.empty()) {
        long pid = (long)getpid();
        MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        const char *b = getenv("KY_TEST_TMPDIR");
        d = std::string(b ? b : "/tmp") + "/kyoyu-io-" + std::to_string(pid);
        if (kyt::rank() == 0) mkdir(d.c_str(), 0755);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return d;
}

double val(size_t g)
{
    return 0.5 + (double)((g * 2654435761u) % 1000003u);
}

struct Layout {
    int ndim;
    size_t dims[4];
    ky_dist_t dist;
    int halo[4];
};

/* Distributions over all ranks: block along 0; block along 0 and 1; cyclic along the last; cyclic blocks. */
std::vector<Layout> layouts(int which_shape)
{
    int P = kyt::nranks();
    std::vector<Layout> v;
    Layout L{};
    if (which_shape == 0) {
        L.ndim = 1;
        L.dims[0] = 37;
    } else if (which_shape == 1) {
        L.ndim = 2;
        L.dims[0] = 13;
        L.dims[1] = 7;
    } else {
        L.ndim = 3;
        L.dims[0] = 5;
        L.dims[1] = 11;
        L.dims[2] = 3;
    }
    Layout a = L; /* block along 0 with halos */
    a.dist = ky_dist_block1();
    for (int d = 0; d < L.ndim; d++) a.halo[d] = 1 + d % 2;
    v.push_back(a);
    if (L.ndim >= 2 && P % 2 == 0) { /* a 2-D grid of parts */
        Layout b = L;
        b.dist = ky_dist_block1();
        b.dist.parts[0] = P / 2;
        b.dist.parts[1] = 2;
        for (int d = 2; d < L.ndim; d++) b.dist.parts[d] = 1;
        b.halo[0] = 2;
        v.push_back(b);
    }
    Layout c = L; /* the last dimension cyclic, block size 2 (runs that are not multiples of anything) */
    c.dist = ky_dist_block1();
    for (int d = 0; d < L.ndim; d++) c.dist.parts[d] = d == L.ndim - 1 ? P : 1;
    c.dist.kind[L.ndim - 1] = KY_DIST_CYCLIC;
    c.dist.bsize[L.ndim - 1] = 2;
    if (L.dims[L.ndim - 1] >= (size_t)P) v.push_back(c);
    return v;
}

size_t global_linear(const Layout &L, const size_t g[])
{
    size_t x = 0;
    for (int d = 0; d < L.ndim; d++) x = x * L.dims[d] + g[d];
    return x;
}

/* Fill the array's blocks: owned element = val(global index) + shift, halo cells = `halo_val`, through a
 * host image of each block (copied to the GPU for GPU placement). */
void fill(ky_array_t a, const Layout &L, double shift, double halo_val)
{
    for (int k = 0; k < ky_array_nlocal(a); k++) {
        void *p;
        size_t lo[4], hi[4], E[4], S[4];
        ky_array_local_n(a, k, &p, lo, hi);
        ky_array_layout(a, k, E, S);
        size_t tot = 1, off = 0;
        for (int d = 0; d < L.ndim; d++) tot *= E[d], off += (size_t)L.halo[d] * S[d];
        std::vector<double> img(tot, halo_val);
        size_t n[4], l[4] = {0, 0, 0, 0};
        size_t cnt = 1;
        for (int d = 0; d < L.ndim; d++) n[d] = hi[d] - lo[d], cnt *= n[d];
        for (size_t e = 0; e < cnt; e++) {
            size_t r = e, g[4], m = off;
            for (int d = L.ndim - 1; d >= 0; d--) l[d] = r % n[d], r /= n[d];
            for (int d = 0; d < L.ndim; d++) {
                ky_array_global_index(a, k, d, l[d], &g[d]);
                m += l[d] * S[d];
            }
            img[m] = val(global_linear(L, g)) + shift;
        }
        char *base = (char *)p - off * sizeof(double);
        if (place() == KY_PLACE_GPU) {
#ifdef KY_TEST_HAVE_CUDA
            cudaMemcpy(base, img.data(), tot * sizeof(double), cudaMemcpyHostToDevice);
#endif
        } else {
            memcpy(base, img.data(), tot * sizeof(double));
        }
    }
}

/* Check every owned element and every halo cell of this rank's blocks; count the wrong ones. */
long check(ky_array_t a, const Layout &L, double shift, double halo_val)
{
    long bad = 0;
    for (int k = 0; k < ky_array_nlocal(a); k++) {
        void *p;
        size_t lo[4], hi[4], E[4], S[4];
        ky_array_local_n(a, k, &p, lo, hi);
        ky_array_layout(a, k, E, S);
        size_t tot = 1, off = 0;
        for (int d = 0; d < L.ndim; d++) tot *= E[d], off += (size_t)L.halo[d] * S[d];
        std::vector<double> img(tot);
        char *base = (char *)p - off * sizeof(double);
        if (place() == KY_PLACE_GPU) {
#ifdef KY_TEST_HAVE_CUDA
            cudaMemcpy(img.data(), base, tot * sizeof(double), cudaMemcpyDeviceToHost);
#endif
        } else {
            memcpy(img.data(), base, tot * sizeof(double));
        }
        std::vector<char> owned(tot, 0);
        size_t n[4], l[4] = {0, 0, 0, 0}, cnt = 1;
        for (int d = 0; d < L.ndim; d++) n[d] = hi[d] - lo[d], cnt *= n[d];
        for (size_t e = 0; e < cnt; e++) {
            size_t r = e, g[4], m = off;
            for (int d = L.ndim - 1; d >= 0; d--) l[d] = r % n[d], r /= n[d];
            for (int d = 0; d < L.ndim; d++) {
                ky_array_global_index(a, k, d, l[d], &g[d]);
                m += l[d] * S[d];
            }
            owned[m] = 1;
            if (img[m] != val(global_linear(L, g)) + shift) bad++;
        }
        for (size_t m = 0; m < tot; m++)
            if (!owned[m] && img[m] != halo_val) bad++;
    }
    return bad;
}

}  // namespace

/* Every layout written, then read back into every other layout of the same shape (other halos, other
 * distributions); halos are neither written (the file holds only owned values: the whole dataset read as
 * one buffer) nor touched by reads. */
TEST(Io, ArrayRoundTrip)
{
    SKIP_IF_NO_IO();
    SKIP_IF_CUFILE_REFUSED();
    for (int shape = 0; shape < 3; shape++) {
        std::vector<Layout> ls = layouts(shape);
        for (size_t w = 0; w < ls.size(); w++) {
            const Layout &W = ls[w];
            ky_array_t a;
            KYT_EXPECT_OK(ky_array_create(W.ndim, W.dims, sizeof(double), &W.dist, place(), W.halo, &a));
            fill(a, W, 0, -1.0);
            std::string path = dir() + "/rt" + std::to_string(shape) + "_" + std::to_string(w) + ".h5";
            ky_io_file_t f;
            ky_io_opts_t o{KY_IO_F64, 0, "m/s"};
            KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
            KYT_EXPECT_OK(ky_io_write(f, "field", a, &o));
            KYT_EXPECT_OK(ky_io_close(f));
            for (size_t r = 0; r < ls.size(); r++) {
                Layout R = ls[r];
                for (int d = 0; d < R.ndim; d++)
                    R.halo[d] = R.dist.kind[d] == KY_DIST_CYCLIC ? 0 : (r + d) % 3;
                ky_array_t b;
                KYT_EXPECT_OK(ky_array_create(R.ndim, R.dims, sizeof(double), &R.dist, place(), R.halo, &b));
                fill(b, R, 100.0, -7.0);
                KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
                KYT_EXPECT_OK(ky_io_read(f, "field", b, NULL));
                /* the whole dataset as one host buffer on every rank (overlapping boxes: no checksum) */
                size_t lo[4] = {0, 0, 0, 0}, tot = 1;
                for (int d = 0; d < R.ndim; d++) tot *= R.dims[d];
                std::vector<double> all(tot, -3.0);
                KYT_EXPECT_OK(ky_io_read_buffer(f, "field", R.ndim, lo, R.dims, all.data(), NULL));
                KYT_EXPECT_OK(ky_io_close(f));
                long bad = check(b, R, 0.0, -7.0);
                for (size_t e = 0; e < tot; e++) bad += all[e] != val(e);
                EXPECT_TRUE(kyt::all(bad == 0))
                    << "shape " << shape << " written by layout " << w << ", read by " << r << ": " << bad
                    << " wrong on rank " << kyt::rank();
                ky_array_free(b);
            }
            ky_array_free(a);
        }
    }
}

/* float4 elements: one more trailing dimension of 4 float32, found again by ky_io_info and KY_IO_AUTO. */
TEST(Io, Components)
{
    SKIP_IF_NO_IO();
    SKIP_IF_CUFILE_REFUSED();
    size_t dims[1] = {29};
    ky_array_t a, b;
    KYT_EXPECT_OK(ky_array_create(1, dims, 4 * sizeof(float), NULL, place(), NULL, &a));
    KYT_EXPECT_OK(ky_array_create(1, dims, 4 * sizeof(float), NULL, place(), NULL, &b));
    std::vector<float> src(29 * 4), got(29 * 4, 0);
    for (size_t i = 0; i < src.size(); i++) src[i] = (float)i * 0.25f;
    size_t lo[1] = {0};
    if (kyt::rank() == 0) KYT_EXPECT_OK(ky_array_put(a, lo, dims, src.data()));
    ky_comm_barrier();
    std::string path = dir() + "/comp.h5";
    ky_io_file_t f;
    ky_io_opts_t o{KY_IO_F32, 4, NULL};
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write(f, "pos_mass", a, &o));
    KYT_EXPECT_OK(ky_io_close(f));
    KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
    int nd = 0, comp = 0;
    size_t fd[4];
    ky_io_type_t t;
    KYT_EXPECT_OK(ky_io_info(f, "pos_mass", &nd, fd, &t, &comp));
    EXPECT_EQ(1, nd);
    EXPECT_EQ(29u, fd[0]);
    EXPECT_EQ(KY_IO_F32, t);
    EXPECT_EQ(4, comp);
    KYT_EXPECT_OK(ky_io_read(f, "pos_mass", b, NULL));
    KYT_EXPECT_OK(ky_io_close(f));
    ky_comm_barrier();
    KYT_EXPECT_OK(ky_array_get(b, lo, dims, got.data()));
    EXPECT_TRUE(kyt::all(got == src));
    ky_array_free(a);
    ky_array_free(b);
}

/* Buffers: boxes of both dimensions that are no multiple of anything, an empty box, read back through other
 * boxes; uint16 and int64. */
TEST(Io, Buffers)
{
    SKIP_IF_NO_IO();
    int P = kyt::nranks(), r = kyt::rank();
    const size_t dims[2] = {23, 9};
    /* write: rows split unevenly, the last rank's box empty when there are 3 or more ranks */
    int W = P >= 3 ? P - 1 : P;
    size_t wlo[2] = {0, 0}, whi[2] = {0, 9};
    if (r < W) wlo[0] = 23 * r / W + (r > 0), whi[0] = r == W - 1 ? 23 : 23 * (r + 1) / W + 1;
    if (r >= W) wlo[0] = whi[0] = 0, whi[1] = 0;
    std::vector<uint16_t> w16;
    std::vector<int64_t> w64;
    for (size_t i = wlo[0]; i < whi[0]; i++)
        for (size_t j = wlo[1]; j < whi[1]; j++) {
            w16.push_back((uint16_t)(i * 9 + j + 3));
            w64.push_back(-(int64_t)(i * 9 + j) * 1000003);
        }
    std::string path = dir() + "/buf.h5";
    ky_io_file_t f;
    ky_io_opts_t o16{KY_IO_U16, 0, "counts"}, o64{KY_IO_I64, 0, NULL};
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write_buffer(f, "u16", 2, dims, wlo, whi, w16.data(), &o16));
    KYT_EXPECT_OK(ky_io_write_buffer(f, "i64", 2, dims, wlo, whi, w64.data(), &o64));
    KYT_EXPECT_OK(ky_io_close(f));
    /* read: columns split at 4 and rows split the other way (each element once: checksum verified) */
    int half = P / 2 ? P / 2 : 1;
    size_t rlo[2], rhi[2];
    int rr = r % half;
    rlo[0] = 23 * rr / half;
    rhi[0] = 23 * (rr + 1) / half;
    rlo[1] = P == 1 ? 0 : (r < half ? 0 : 4);
    rhi[1] = P == 1 ? 9 : (r < half ? 4 : 9);
    if (P % 2 && r == P - 1) rlo[0] = rhi[0] = 0; /* odd rank count: the last reads nothing */
    size_t n = (rhi[0] - rlo[0]) * (rhi[1] - rlo[1]);
    std::vector<uint16_t> g16(n);
    std::vector<int64_t> g64(n);
    KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_read_buffer(f, "u16", 2, rlo, rhi, g16.data(), &o16));
    KYT_EXPECT_OK(ky_io_read_buffer(f, "i64", 2, rlo, rhi, g64.data(), NULL));
    KYT_EXPECT_OK(ky_io_close(f));
    long bad = 0;
    size_t e = 0;
    for (size_t i = rlo[0]; i < rhi[0]; i++)
        for (size_t j = rlo[1]; j < rhi[1]; j++, e++) {
            bad += g16[e] != (uint16_t)(i * 9 + j + 3);
            bad += g64[e] != -(int64_t)(i * 9 + j) * 1000003;
        }
    EXPECT_TRUE(kyt::all(bad == 0)) << bad << " wrong on rank " << r;
}

/* The file as HDF5 itself sees it (serial API, rank 0): attributes, no temporary name left, complete. */
TEST(Io, Attributes)
{
    SKIP_IF_NO_IO();
    SKIP_IF_CUFILE_REFUSED();
    size_t dims[2] = {10, 3};
    ky_array_t a;
    KYT_EXPECT_OK(ky_array_create(2, dims, sizeof(double), NULL, place(), NULL, &a));
    std::string path = dir() + "/attr.h5";
    ky_io_file_t f;
    ky_io_opts_t o{KY_IO_F64, 0, "kelvin"};
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write(f, "T", a, &o));
    KYT_EXPECT_OK(ky_io_close(f));
    bool ok = true;
    if (kyt::rank() == 0) {
        hid_t fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        ok = fid >= 0;
        hid_t d = ok ? H5Dopen2(fid, "T", H5P_DEFAULT) : -1;
        ok = ok && d >= 0;
        auto str = [&](hid_t o, const char *name) {
            std::string s;
            if (H5Aexists(o, name) <= 0) return s;
            hid_t at = H5Aopen(o, name, H5P_DEFAULT), t = H5Aget_type(at);
            std::vector<char> b(H5Tget_size(t) + 1, 0);
            H5Aread(at, t, b.data());
            H5Tclose(t);
            H5Aclose(at);
            return std::string(b.data());
        };
        auto u64 = [&](hid_t o, const char *name, uint64_t *v, int n) {
            if (H5Aexists(o, name) <= 0) return false;
            hid_t at = H5Aopen(o, name, H5P_DEFAULT);
            hid_t sp = H5Aget_space(at);
            bool r = H5Sget_simple_extent_npoints(sp) == n && H5Aread(at, H5T_NATIVE_UINT64, v) >= 0;
            H5Sclose(sp);
            H5Aclose(at);
            return r;
        };
        if (ok) {
            uint64_t shape[2] = {0, 0}, es = 0, cks = 0;
            EXPECT_TRUE(u64(d, "shape", shape, 2));
            EXPECT_EQ(10u, shape[0]);
            EXPECT_EQ(3u, shape[1]);
            EXPECT_TRUE(u64(d, "element_size", &es, 1));
            EXPECT_EQ(8u, es);
            EXPECT_TRUE(u64(d, "kyoyu_checksum", &cks, 1));
            EXPECT_EQ("float64", str(d, "element_type"));
            EXPECT_EQ("kelvin", str(d, "units"));
            EXPECT_NE(std::string::npos,
                      str(d, "distribution").find("block(" + std::to_string(kyt::nranks()) + " parts)"));
            int done = 0;
            hid_t at = H5Aopen(fid, "kyoyu_complete", H5P_DEFAULT);
            EXPECT_GE(at, 0);
            if (at >= 0) H5Aread(at, H5T_NATIVE_INT, &done), H5Aclose(at);
            EXPECT_EQ(1, done);
            H5Dclose(d);
        }
        if (fid >= 0) H5Fclose(fid);
        std::string ls = "ls " + dir() + " | grep -c kytmp > /dev/null";
        EXPECT_NE(0, system(ls.c_str())) << "a temporary file was left in " << dir();
    }
    EXPECT_TRUE(kyt::all(ok));
    ky_array_free(a);
}

/* Bad input: each error is KY_ERR_ARG or KY_ERR_IO with a message naming rank, call, file and cause; no
 * file is left where a failed write was aimed, and an older file there survives. */
TEST(Io, BadInput)
{
    SKIP_IF_NO_IO();
    SKIP_IF_CUFILE_REFUSED();
    ky_io_file_t f = NULL;
    std::string msg;
    auto has = [&](const std::vector<std::string> &words) {
        msg = ky_last_error();
        for (const std::string &w : words)
            if (msg.find(w) == std::string::npos) return false;
        return true;
    };
    std::string rk = "rank " + std::to_string(kyt::rank()) + ":";
    /* a directory that does not exist; a "directory" that is a file */
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_create("/nonexistent-kyoyu-dir/x.h5", &f));
    EXPECT_TRUE(has({rk, "ky_io_create", "/nonexistent-kyoyu-dir", "No such file"})) << msg;
    EXPECT_EQ(nullptr, f);
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_create("/etc/hostname/x.h5", &f));
    EXPECT_TRUE(has({rk, "ky_io_create", "Not a directory"})) << msg;
    /* an unwritable directory (root writes anywhere: then only the checks above run) */
    std::string ro = dir() + "/readonly";
    if (kyt::rank() == 0) mkdir(ro.c_str(), 0500);
    MPI_Barrier(MPI_COMM_WORLD);
    if (geteuid() != 0) {
        KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_create((ro + "/x.h5").c_str(), &f));
        EXPECT_TRUE(has({rk, "ky_io_create", ro, "Permission denied"})) << msg;
    } else if (kyt::rank() == 0) {
        printf("[ note ] running as root: the unwritable-directory case is not checked\n");
    }
    /* the directory is writable but the temporary name is taken by a directory: HDF5's create fails, and the
     * message carries HDF5's reason (the temporary name is <path>.kytmp-<pid of rank 0>) */
    long pid0 = (long)getpid();
    MPI_Bcast(&pid0, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    std::string taken = dir() + "/taken.h5";
    if (kyt::rank() == 0) mkdir((taken + ".kytmp-" + std::to_string(pid0)).c_str(), 0755);
    MPI_Barrier(MPI_COMM_WORLD);
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_create(taken.c_str(), &f));
    EXPECT_TRUE(has({rk, "ky_io_create", "taken.h5.kytmp-", "failed: "})) << msg;
    EXPECT_EQ(std::string::npos, msg.find("HDF5 gave no reason")) << msg;
    if (kyt::rank() == 0) {
        printf("[ note ] HDF5's reason, as reported: %s\n", msg.c_str());
        EXPECT_EQ(0, rmdir((taken + ".kytmp-" + std::to_string(pid0)).c_str()))
            << "the taken name was removed";
    }
    /* not HDF5; missing */
    std::string text = dir() + "/not.h5";
    if (kyt::rank() == 0) {
        FILE *t = fopen(text.c_str(), "w");
        fputs("this is not HDF5\n", t);
        fclose(t);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_open(text.c_str(), &f));
    EXPECT_TRUE(has({rk, "ky_io_open", text, "not an HDF5 file"})) << msg;
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_open((dir() + "/missing.h5").c_str(), &f));
    EXPECT_TRUE(has({rk, "ky_io_open", "missing.h5", "No such file"})) << msg;

    /* a good file to damage */
    size_t dims[2] = {12, 5};
    ky_array_t a, wrong;
    KYT_EXPECT_OK(ky_array_create(2, dims, sizeof(double), NULL, place(), NULL, &a));
    Layout L{2, {12, 5, 0, 0}, ky_dist_block1(), {0, 0, 0, 0}};
    fill(a, L, 0, 0);
    std::string path = dir() + "/bad.h5";
    ky_io_opts_t o{KY_IO_F64, 0, NULL};
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write(f, "x", a, &o));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_io_write(f, "x", a, &o)); /* exists already */
    EXPECT_TRUE(has({rk, "ky_io_write", "'x' already exists"})) << msg;
    ky_io_opts_t o3{KY_IO_F32, 3, NULL};
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_io_write(f, "y", a, &o3)); /* 3 floats are not 8 bytes */
    /* buffers that overlap, or do not cover */
    size_t lo[2] = {0, 0}, hi[2] = {12, 5};
    std::vector<double> buf(60, 1.0);
    ky_io_opts_t od{KY_IO_F64, 0, NULL};
    if (kyt::nranks() > 1) {
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_io_write_buffer(f, "b", 2, dims, lo, hi, buf.data(), &od));
        EXPECT_TRUE(has({"ky_io_write_buffer", "overlap"})) << msg;
    }
    size_t hi2[2] = {kyt::rank() == 0 ? 11u : 0u, 5};
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_io_write_buffer(f, "b", 2, dims, lo, hi2, buf.data(), &od));
    EXPECT_TRUE(has({"ky_io_write_buffer", "do not cover", "12x5"})) << msg;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_io_write_buffer(f, "b", 2, dims, lo, hi, buf.data(), NULL));
    KYT_EXPECT_OK(ky_io_close(f)); /* bad arguments wrote nothing: the file is good */

    /* reading: missing dataset, wrong shape, wrong type */
    size_t dims2[2] = {12, 6};
    KYT_EXPECT_OK(ky_array_create(2, dims2, sizeof(double), NULL, place(), NULL, &wrong));
    KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_read(f, "nope", a, NULL));
    EXPECT_TRUE(has({rk, "ky_io_read", "no dataset 'nope'", path})) << msg;
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_read(f, "x", wrong, NULL));
    EXPECT_TRUE(has({rk, "ky_io_read", "shape 12x5", "12x6", path})) << msg;
    ky_io_opts_t oi{KY_IO_I64, 0, NULL};
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_read(f, "x", a, &oi));
    EXPECT_TRUE(has({"float64", "int64"})) << msg;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_io_write(f, "z", a, &o)); /* opened for reading */
    KYT_EXPECT_OK(ky_io_read(f, "x", a, NULL));
    KYT_EXPECT_OK(ky_io_close(f));

    /* damage one element behind Kyoyu's back (serial HDF5 on rank 0): the checksum finds it */
    if (kyt::rank() == 0) {
        hid_t fid = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t d = H5Dopen2(fid, "x", H5P_DEFAULT), sp = H5Dget_space(d);
        hsize_t s[2] = {7, 3}, c[2] = {1, 1};
        H5Sselect_hyperslab(sp, H5S_SELECT_SET, s, NULL, c, NULL);
        hid_t m = H5Screate_simple(1, c, NULL);
        double v = 12345.0;
        H5Dwrite(d, H5T_NATIVE_DOUBLE, m, sp, H5P_DEFAULT, &v);
        H5Sclose(m), H5Sclose(sp), H5Dclose(d), H5Fclose(fid);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_read(f, "x", a, NULL));
    EXPECT_TRUE(has({rk, "ky_io_read", "checksum", path})) << msg;
    KYT_EXPECT_OK(ky_io_close(f));

    /* a write that fails in HDF5 (a group that does not exist) marks the file: close discards it */
    std::string gone = dir() + "/discarded.h5";
    KYT_EXPECT_OK(ky_io_create(gone.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write(f, "x", a, &o));
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_write(f, "no_group/y", a, &o));
    EXPECT_TRUE(has({rk, "ky_io_write", "'no_group/y'", "discarded.h5"})) << msg;
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_close(f));
    EXPECT_TRUE(has({rk, "ky_io_close", "discarded"})) << msg;
    EXPECT_NE(0, access(gone.c_str(), F_OK)) << gone << " exists after a failed write";

    /* abort: the older file at the path stays as it was, no temporary name is left */
    struct stat before {
    }, after{};
    stat(path.c_str(), &before);
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write(f, "new", a, &o));
    KYT_EXPECT_OK(ky_io_abort(f));
    EXPECT_EQ(0, stat(path.c_str(), &after));
    EXPECT_EQ(before.st_ino, after.st_ino);
    EXPECT_EQ(before.st_mtime, after.st_mtime);
    KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
    int nd;
    KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_info(f, "new", &nd, NULL, NULL, NULL));
    KYT_EXPECT_OK(ky_io_close(f));
    if (kyt::rank() == 0) {
        std::string ls = "ls " + dir() + " | grep -c kytmp > /dev/null";
        EXPECT_NE(0, system(ls.c_str())) << "a temporary file was left in " << dir();
    }
    ky_array_free(a);
    ky_array_free(wrong);
}

/* Whether this run takes the raw path (KY_IO_RAW=1, or a build with a serial HDF5 unless KY_IO_RAW=0). */
bool raw_run()
{
    const char *r = getenv("KY_IO_RAW");
    std::string v = r ? r : "auto";
    return v == "1" || (v == "auto" && !KY_TEST_HDF5_PARALLEL);
}

/* The raw path's own rules: a file being written is rank 0's alone until ky_io_close (reads and queries are
 * refused with the reason and leave the file good; with MPI-IO they work), and the committed file is plain
 * HDF5: contiguous datasets, a large one on a 4 KiB boundary, values and attributes read by serial HDF5. */
/* Values of dataset n (count doubles, read by HDF5 itself) that differ from val(): -1 if it cannot be read.
 */
long h5_mismatches(hid_t fid, const char *n, size_t count)
{
    hid_t d = H5Dopen2(fid, n, H5P_DEFAULT);
    std::vector<double> v(count);
    long bad = d >= 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0 ? 0 : -1;
    for (size_t e = 0; bad >= 0 && e < v.size(); e++) bad += v[e] != val(e);
    if (d >= 0) H5Dclose(d);
    return bad;
}

TEST(Io, RawPath)
{
    SKIP_IF_NO_IO();
    SKIP_IF_CUFILE_REFUSED();
    size_t dims[2] = {333, 7}; /* 18 KiB: at least 4 KiB, so aligned */
    Layout L{2, {333, 7, 0, 0}, ky_dist_block1(), {1, 2, 0, 0}};
    ky_array_t a, b;
    KYT_EXPECT_OK(ky_array_create(2, dims, sizeof(double), NULL, place(), L.halo, &a));
    KYT_EXPECT_OK(ky_array_create(2, dims, sizeof(double), NULL, place(), L.halo, &b));
    fill(a, L, 0, -1);
    fill(b, L, 3, -4);
    std::string path = dir() + "/raw.h5";
    ky_io_file_t f;
    ky_io_opts_t o{KY_IO_F64, 0, "m"};
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write(f, "x", a, &o));
    int st = ky_io_read(f, "x", b, NULL), nd = 0;
    if (raw_run()) {
        KYT_EXPECT_STATUS(KY_ERR_UNSUPPORTED, st);
        EXPECT_NE(std::string::npos, std::string(ky_last_error()).find("raw path")) << ky_last_error();
        KYT_EXPECT_STATUS(KY_ERR_UNSUPPORTED, ky_io_info(f, "x", &nd, NULL, NULL, NULL));
    } else {
        KYT_EXPECT_OK(st);
    }
    KYT_EXPECT_OK(ky_io_write(f, "y", a, &o)); /* the refused read left the file good */
    KYT_EXPECT_OK(ky_io_close(f));
    KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_read(f, "y", b, NULL));
    KYT_EXPECT_OK(ky_io_close(f));
    EXPECT_TRUE(kyt::all(check(b, L, 0, -4) == 0));
    if (kyt::rank() == 0) {
        hid_t fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        ASSERT_GE(fid, 0);
        for (const char *n : {"x", "y"}) {
            hid_t d = H5Dopen2(fid, n, H5P_DEFAULT), p = H5Dget_create_plist(d);
            EXPECT_EQ(H5D_CONTIGUOUS, H5Pget_layout(p));
            haddr_t off = H5Dget_offset(d);
            EXPECT_NE(HADDR_UNDEF, off);
            EXPECT_EQ(0u, off % 4096) << n << " at offset " << off;
            EXPECT_EQ(0, h5_mismatches(fid, n, 333 * 7)) << n;
            H5Pclose(p);
            H5Dclose(d);
        }
        H5Fclose(fid);
    }
    ky_array_free(a);
    ky_array_free(b);
}

/* The raw path's O_DIRECT pages (KY_IO_DIRECT): 24-byte rows split unevenly, so every rank's run starts and
 * ends inside a page another rank or HDF5's metadata shares; written through the bounce pipeline (buffers
 * placed to line up with the file: head and tail through the page cache, the pages between with O_DIRECT)
 * and straight from the halo'd block (one short run per row: the page cache), read back both ways and by
 * HDF5 itself. A page written whole with O_DIRECT where another writer's bytes lie would show up here as
 * wrong values in a neighbour's rows. */
/* Written through the bounce pipeline and straight from the block, read back both ways and by HDF5 itself:
 * rows x cols doubles, rows split unevenly over the ranks, a halo of 2 rows. */
void raw_round_trip(size_t rows, size_t cols, const char *file, int reps)
{
    size_t dims[2] = {rows, cols};
    Layout L{2, {rows, cols, 0, 0}, ky_dist_block1(), {2, 0, 0, 0}};
    ky_array_t a, b;
    KYT_EXPECT_OK(ky_array_create(2, dims, sizeof(double), NULL, place(), L.halo, &a));
    KYT_EXPECT_OK(ky_array_create(2, dims, sizeof(double), NULL, place(), L.halo, &b));
    fill(a, L, 0, -1);
    std::string path = dir() + "/" + file;
    for (int rep = 0; rep < reps; rep++) { /* the second time over a file that exists: replaced */
        ky_io_file_t f;
        ky_io_opts_t bounce{KY_IO_F64, 0, nullptr, KY_IO_PATH_BOUNCE},
            plain{KY_IO_F64, 0, nullptr, KY_IO_PATH_DEFAULT};
        KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
        KYT_EXPECT_OK(ky_io_write(f, "bounced", a, &bounce));
        KYT_EXPECT_OK(ky_io_write(f, "plain", a, &plain));
        KYT_EXPECT_OK(ky_io_write(f, "after", a, &bounce));
        KYT_EXPECT_OK(ky_io_close(f));
        KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
        for (const char *n : {"bounced", "plain", "after"})
            for (const ky_io_opts_t *o : {&bounce, &plain}) {
                fill(b, L, 5, -7);
                KYT_EXPECT_OK(ky_io_read(f, n, b, o));
                EXPECT_TRUE(kyt::all(check(b, L, 0, -7) == 0))
                    << n << " read " << (o == &bounce ? "bounce" : "plain");
            }
        KYT_EXPECT_OK(ky_io_close(f));
    }
    if (kyt::rank() == 0) {
        hid_t fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        ASSERT_GE(fid, 0);
        for (const char *n : {"bounced", "plain", "after"})
            EXPECT_EQ(0, h5_mismatches(fid, n, rows * cols)) << n;
        H5Fclose(fid);
    }
    ky_array_free(a);
    ky_array_free(b);
}

TEST(Io, RawDirect)
{
    SKIP_IF_NO_IO();
    SKIP_IF_CUFILE_REFUSED(); /* "plain" takes KY_IO_PATH, which the cufile variants set */
    raw_round_trip(2053, 3, "raw_direct.h5", 2);
}

/* Large enough that every rank's file calls are split over KY_IO_THREADS threads (parts of at least 1 MiB, so
 * at least 2 MiB per call: 200003 x 5 doubles, 8 MB): a part written or read at the wrong offset, or one left
 * out, shows up as wrong values. Only where KY_IO_THREADS asks for threads (io.n2.raw.threads): elsewhere it
 * would repeat RawDirect at 400 times the size. */
TEST(Io, RawLarge)
{
    SKIP_IF_NO_IO();
    SKIP_IF_CUFILE_REFUSED();
    const char *t = getenv("KY_IO_THREADS");
    if (!t || atoi(t) < 2) GTEST_SKIP() << "KY_IO_THREADS is not set above 1 (io.n2.raw.threads sets it)";
    raw_round_trip(200003, 5, "raw_large.h5", 1);
}

/* GPU memory only (label gpu): the bounce path with pieces of one row and of many, GPU buffers, and the
 * cufile path refusing with its reason. */
TEST(Io, GpuPaths)
{
    SKIP_IF_NO_IO();
    SKIP_IF_CUFILE_REFUSED();
    if (!gpu_run()) GTEST_SKIP() << "GPU run only (KY_TEST_MEMKIND=gpu)";
    size_t dims[3] = {17, 6, 5};
    int halo[3] = {1, 0, 2};
    Layout L{3, {17, 6, 5, 0}, ky_dist_block1(), {1, 0, 2, 0}};
    ky_array_t a, b;
    KYT_EXPECT_OK(ky_array_create(3, dims, sizeof(double), NULL, KY_PLACE_GPU, halo, &a));
    KYT_EXPECT_OK(ky_array_create(3, dims, sizeof(double), NULL, KY_PLACE_GPU, halo, &b));
    fill(a, L, 0, -1);
    fill(b, L, 9, -5);
    std::string path = dir() + "/gpu.h5";
    ky_io_file_t f;
    ky_io_opts_t o{KY_IO_F64, 0, NULL};
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write(f, "g", a, &o));
    /* a GPU buffer: block 0 of an array without halos is a dense device box */
    ky_array_t c;
    size_t lo[3], hi[3];
    KYT_EXPECT_OK(ky_array_create(3, dims, sizeof(double), NULL, KY_PLACE_GPU, NULL, &c));
    Layout Lc{3, {17, 6, 5, 0}, ky_dist_block1(), {0, 0, 0, 0}};
    fill(c, Lc, 0, 0);
    void *dev = ky_array_local(c, lo, hi);
    KYT_EXPECT_OK(ky_io_write_buffer(f, "gbuf", 3, dims, lo, hi, dev, &o));
    KYT_EXPECT_OK(ky_io_close(f));
    KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_read(f, "g", b, NULL));
    KYT_EXPECT_OK(ky_io_read(f, "gbuf", a, NULL));
    KYT_EXPECT_OK(ky_io_close(f));
    EXPECT_TRUE(kyt::all(check(b, L, 0, -5) == 0));
    EXPECT_TRUE(kyt::all(check(a, L, 0, -1) == 0));
    ky_array_free(a);
    ky_array_free(b);
    ky_array_free(c);
}

/* Whether this build has the cuFile path: a probe write forced onto it (a build without it refuses with
 * KY_ERR_UNSUPPORTED naming the missing build, and the file is discarded). Collective. */
namespace {

int cufile_refused_ = 0; /* the probe failed with another cause than a missing build */
bool cufile_refused()
{
    cufile_built();
    return cufile_refused_ != 0;
}

bool cufile_built()
{
    static int built = -1;
    if (built >= 0) return built == 1;
    size_t dims[1] = {64};
    ky_array_t a;
    ky_array_create(1, dims, sizeof(double), NULL, KY_PLACE_GPU, NULL, &a);
    ky_io_file_t f;
    ky_io_opts_t o{KY_IO_F64, 0, NULL, KY_IO_PATH_CUFILE};
    std::string path = dir() + "/probe.h5";
    built = 0;
    if (ky_io_create(path.c_str(), &f) == KY_OK) {
        int st = ky_io_write(f, "x", a, &o);
        std::string msg = ky_last_error();
        ky_io_close(f);
        built = st == KY_OK ? 1 : 0;
        cufile_refused_ = st != KY_OK && msg.find("built without") == std::string::npos;
        if (cufile_refused_ && kyt::rank() == 0)
            printf("cuFile probe failed (not a missing build): %s\n", msg.c_str());
    }
    ky_array_free(a);
    return built == 1;
}

}  // namespace

/* KY_IO_PATH=cufile: a build without cuFile refuses with its reason and discards the file; a build with it
 * writes and reads back. */
TEST(Io, CufileForced)
{
    SKIP_IF_NO_IO();
    const char *p = getenv("KY_IO_PATH");
    if (!gpu_run() || !p || std::string(p) != "cufile") GTEST_SKIP() << "GPU run with KY_IO_PATH=cufile only";
    size_t dims[1] = {64};
    Layout L{1, {64, 0, 0, 0}, ky_dist_block1(), {0, 0, 0, 0}};
    ky_array_t a;
    KYT_EXPECT_OK(ky_array_create(1, dims, sizeof(double), NULL, KY_PLACE_GPU, NULL, &a));
    fill(a, L, 0, 0);
    ky_io_file_t f;
    ky_io_opts_t o{KY_IO_F64, 0, NULL};
    std::string path = dir() + "/cufile.h5";
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    bool refused = cufile_refused();
    int st = ky_io_write(f, "x", a, &o);
    if (st != KY_OK && refused) {
        /* cuFile cannot register files here: the error on every rank, with rank, call and cause, no hang */
        std::string m = ky_last_error();
        KYT_EXPECT_STATUS(KY_ERR_IO, st);
        EXPECT_NE(std::string::npos, m.find("rank " + std::to_string(kyt::rank()) + ": ky_io_write")) << m;
        EXPECT_NE(std::string::npos, m.find("cuFile")) << m;
        KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_close(f)); /* the failed write discards the file */
        EXPECT_NE(0, access(path.c_str(), F_OK));
    } else if (st == KY_ERR_UNSUPPORTED) {
        EXPECT_NE(std::string::npos, std::string(ky_last_error()).find("cuFile")) << ky_last_error();
        KYT_EXPECT_STATUS(KY_ERR_IO, ky_io_close(f)); /* the failed write discards the file */
        EXPECT_NE(0, access(path.c_str(), F_OK));
    } else {
        KYT_EXPECT_OK(st);
        KYT_EXPECT_OK(ky_io_close(f));
        ky_array_t b;
        KYT_EXPECT_OK(ky_array_create(1, dims, sizeof(double), NULL, KY_PLACE_GPU, NULL, &b));
        fill(b, L, 5, 0);
        KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
        KYT_EXPECT_OK(ky_io_read(f, "x", b, NULL));
        KYT_EXPECT_OK(ky_io_close(f));
        EXPECT_TRUE(kyt::all(check(b, L, 0, 0) == 0));
        ky_array_free(b);
    }
    ky_array_free(a);
}

namespace {

/* Write layout W with path `wp`, read it into layout R with path `rp`; every value and halo checked. */
long cross(const Layout &W, const Layout &R, ky_io_path_t wp, ky_io_path_t rp, const std::string &path)
{
    ky_array_t a, b;
    KYT_EXPECT_OK(ky_array_create(W.ndim, W.dims, sizeof(double), &W.dist, KY_PLACE_GPU, W.halo, &a));
    KYT_EXPECT_OK(ky_array_create(R.ndim, R.dims, sizeof(double), &R.dist, KY_PLACE_GPU, R.halo, &b));
    fill(a, W, 0, -1.0);
    fill(b, R, 50.0, -2.0);
    ky_io_file_t f;
    ky_io_opts_t ow{KY_IO_F64, 0, NULL, wp}, orr{KY_IO_F64, 0, NULL, rp};
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write(f, "d", a, &ow));
    KYT_EXPECT_OK(ky_io_close(f));
    KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_read(f, "d", b, &orr)); /* the checksum verified across the two paths */
    KYT_EXPECT_OK(ky_io_close(f));
    long bad = check(b, R, 0.0, -2.0) + check(a, W, 0.0, -1.0);
    ky_array_free(a);
    ky_array_free(b);
    return bad;
}

}  // namespace

/* The cuFile path against the bounce path on the same files: cufile reads what bounce wrote and the other
 * way round, odd sizes so that every rank's part starts and ends inside a 4 KiB page (the pages' unaligned
 * edges go through the page cache, the rest through cuFile), halos (one run per row), other distributions
 * reading (a grid of parts, a cyclic dimension), GPU buffers with overlapping boxes. */
TEST(Io, CufileCross)
{
    SKIP_IF_NO_IO();
    if (!gpu_run()) GTEST_SKIP() << "GPU run only (KY_TEST_MEMKIND=gpu)";
    if (!cufile_built()) GTEST_SKIP() << "no cuFile path in this build (or cuFile does not work here)";
    int P = kyt::nranks();
    const ky_io_path_t B = KY_IO_PATH_BOUNCE, C = KY_IO_PATH_CUFILE;
    /* 1-D, 1.5 M doubles (12 MB): long runs, rank boundaries at unaligned offsets */
    Layout W1{1, {1500007, 0, 0, 0}, ky_dist_block1(), {0, 0, 0, 0}};
    Layout R1 = W1;
    R1.halo[0] = 3;
    Layout R1c = W1; /* cyclic, blocks of 10007 elements */
    R1c.dist.kind[0] = KY_DIST_CYCLIC;
    R1c.dist.bsize[0] = 10007;
    /* 2-D with halos: a run per row of 517 doubles; read by a grid of parts */
    Layout W2{2, {301, 517, 0, 0}, ky_dist_block1(), {2, 1, 0, 0}};
    Layout R2 = W2;
    if (P % 2 == 0) {
        R2.dist.parts[0] = P / 2;
        R2.dist.parts[1] = 2;
    }
    R2.halo[0] = 1;
    R2.halo[1] = 0;
    /* 3-D odd shape without halos along the trailing dimensions: whole planes contiguous */
    Layout W3{3, {37, 29, 131, 0}, ky_dist_block1(), {1, 0, 0, 0}};
    Layout R3 = W3;
    R3.halo[0] = 0;
    struct {
        const Layout *w, *r;
        ky_io_path_t wp, rp;
    } cases[] = {{&W1, &R1, B, C}, {&W1, &R1, C, B}, {&W1, &R1c, C, C}, {&W2, &R2, B, C},
                 {&W2, &R2, C, B}, {&W2, &R2, C, C}, {&W3, &R3, C, C},  {&W3, &R3, B, C}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long bad = cross(*cases[i].w, *cases[i].r, cases[i].wp, cases[i].rp,
                         dir() + "/cross" + std::to_string(i) + ".h5");
        EXPECT_TRUE(kyt::all(bad == 0)) << "case " << i << ": " << bad << " wrong on rank " << kyt::rank();
    }
    /* GPU buffers: each rank's box of rows written with cuFile, the whole dataset read back by every rank */
    size_t dims[2] = {1001, 333}, lo[2] = {0, 0}, hi[2] = {1001, 333};
    size_t r0 = dims[0] * kyt::rank() / P, r1 = dims[0] * (kyt::rank() + 1) / P;
    std::vector<double> img((r1 - r0) * dims[1]), all(dims[0] * dims[1], -1), back(all.size());
    for (size_t e = 0; e < img.size(); e++) img[e] = val(r0 * dims[1] + e);
    void *dev = kyt::mem_alloc(KY_MEM_GPU, all.size() * sizeof(double));
    kyt::mem_write(KY_MEM_GPU, dev, img.data(), img.size() * sizeof(double));
    size_t blo[2] = {r0, 0}, bhi[2] = {r1, dims[1]};
    ky_io_file_t f;
    ky_io_opts_t oc{KY_IO_F64, 0, NULL, C};
    std::string path = dir() + "/crossbuf.h5";
    KYT_EXPECT_OK(ky_io_create(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_write_buffer(f, "b", 2, dims, blo, bhi, dev, &oc));
    KYT_EXPECT_OK(ky_io_close(f));
    KYT_EXPECT_OK(ky_io_open(path.c_str(), &f));
    KYT_EXPECT_OK(ky_io_read_buffer(f, "b", 2, lo, hi, dev, &oc));
    KYT_EXPECT_OK(ky_io_close(f));
    kyt::mem_read(KY_MEM_GPU, back.data(), dev, back.size() * sizeof(double));
    long bad = 0;
    for (size_t e = 0; e < back.size(); e++) bad += back[e] != val(e);
    EXPECT_TRUE(kyt::all(bad == 0)) << bad << " wrong in the buffer read on rank " << kyt::rank();
    kyt::mem_free(KY_MEM_GPU, dev);
}

/* KY_IO_PATH=auto with a table (KY_IO_TABLE, written here before the first auto call: the test runs alone in
 * its process) that makes cufile the faster path everywhere: a large dataset with long runs takes cufile, one
 * whose rows are short (halos) stays on bounce; the choice read back from the io log (KY_DEBUG=info,
 * KY_DEBUG_FILE). Both round trips checked. */
TEST(Io, AutoTable)
{
    SKIP_IF_NO_IO();
    const char *table = getenv("KY_IO_TABLE"), *logf = getenv("KY_DEBUG_FILE");
    if (!gpu_run() || !table || !logf) GTEST_SKIP() << "run by gpu.io.*.auto (KY_IO_TABLE, KY_DEBUG_FILE)";
    bool have = cufile_built();
    if (kyt::rank() == 0) {
        FILE *t = fopen(table, "w");
        EXPECT_NE(nullptr, t) << table;
        if (t) { /* "*": every file system */
            fprintf(t, "# kyoyu-io-table 1 (tests/io: cufile faster everywhere)\n");
            for (const char *d : {"write", "read"}) fprintf(t, "* %s 4096 1.0 2.0\n", d);
            fclose(t);
        }
    }
    kyt::mpi_barrier();
    int P = kyt::nranks();
    Layout big{1, {(size_t)P * 400000, 0, 0, 0}, ky_dist_block1(), {0, 0, 0, 0}}; /* 3.2 MB per rank */
    Layout bigr = big;
    bigr.halo[0] = 1;
    Layout small{2, {64, 100, 0, 0}, ky_dist_block1(), {1, 1, 0, 0}}; /* rows of 800 bytes */
    const ky_io_path_t A = KY_IO_PATH_AUTO;
    EXPECT_TRUE(kyt::all(cross(big, bigr, A, A, dir() + "/auto_big.h5") == 0));
    EXPECT_TRUE(kyt::all(cross(small, small, A, A, dir() + "/auto_small.h5") == 0));
    /* the log of this rank: its name with %p replaced by the pid (and %h by the host) */
    std::string name = logf;
    char host[256] = "";
    gethostname(host, sizeof host);
    for (size_t at; (at = name.find("%p")) != std::string::npos;)
        name.replace(at, 2, std::to_string(getpid()));
    for (size_t at; (at = name.find("%h")) != std::string::npos;) name.replace(at, 2, host);
    std::string text;
    if (FILE *l = fopen(name.c_str(), "r")) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, l)) > 0) text.append(buf, n);
        fclose(l);
    }
    size_t cuf = 0, bou = 0;
    for (size_t at = 0; (at = text.find("auto: cufile", at)) != std::string::npos; at++) cuf++;
    for (size_t at = 0; (at = text.find("auto: bounce", at)) != std::string::npos; at++) bou++;
    if (have)
        EXPECT_EQ(2u, cuf) << "the large dataset's write and read should take cufile; log " << name << ":\n"
                           << text;
    else
        EXPECT_EQ(0u, cuf) << "no cuFile path here, yet auto chose it; log " << name;
    if (cufile_refused()) /* the large dataset: bounce because cuFile cannot register the file */
        EXPECT_NE(std::string::npos, text.find("cannot register the file on some rank"))
            << "auto's reason for bounce; log " << name << ":\n"
            << text;
    EXPECT_EQ(have ? 2u : 4u, bou) << "log " << name << ":\n" << text;
}

/* Files of another writer (tests/io/h5py_interop.py write: h5py, no Kyoyu attributes, so no checksum) read
 * into arrays, and a file for h5py to check (h5py_interop.py check: values, attributes, the checksum
 * recomputed from docs/io.md's formula). Run only by the io.h5py tests, which name the files. */
TEST(IoH5py, Exchange)
{
    SKIP_IF_NO_IO();
    const char *in = getenv("KY_TEST_IO_H5PY_IN"), *out = getenv("KY_TEST_IO_H5PY_OUT");
    if (!in || !out) GTEST_SKIP() << "run by the io.h5py tests (KY_TEST_IO_H5PY_IN, KY_TEST_IO_H5PY_OUT)";
    if (access(in, R_OK) != 0) GTEST_SKIP() << in << " not written (python3-h5py missing?)";
    ky_io_file_t f;
    size_t d2[2] = {11, 6}, d1[1] = {50};
    ky_array_t t, tz, ids, vel;
    int halo[2] = {1, 1};
    KYT_EXPECT_OK(ky_array_create(2, d2, sizeof(double), NULL, place(), halo, &t));
    KYT_EXPECT_OK(ky_array_create(2, d2, sizeof(double), NULL, place(), NULL, &tz));
    KYT_EXPECT_OK(ky_array_create(1, d1, sizeof(uint64_t), NULL, place(), NULL, &ids));
    KYT_EXPECT_OK(ky_array_create(1, d1, 3 * sizeof(float), NULL, place(), NULL, &vel));
    KYT_EXPECT_OK(ky_io_open(in, &f));
    KYT_EXPECT_OK(ky_io_read(f, "temps", t, NULL));
    KYT_EXPECT_OK(ky_io_read(f, "temps_z", tz, NULL)); /* chunked, gzip: read through HDF5 on every path */
    ky_io_opts_t ou{KY_IO_U64, 0, NULL};
    KYT_EXPECT_OK(ky_io_read(f, "ids", ids, &ou));
    KYT_EXPECT_OK(ky_io_read(f, "vel", vel, NULL));
    KYT_EXPECT_OK(ky_io_close(f));
    ky_comm_barrier();
    std::vector<double> tv(66), tzv(66);
    std::vector<uint64_t> iv(50);
    std::vector<float> vv(150);
    size_t lo[2] = {0, 0};
    KYT_EXPECT_OK(ky_array_get(t, lo, d2, tv.data()));
    KYT_EXPECT_OK(ky_array_get(tz, lo, d2, tzv.data()));
    KYT_EXPECT_OK(ky_array_get(ids, lo, d1, iv.data()));
    KYT_EXPECT_OK(ky_array_get(vel, lo, d1, vv.data()));
    long bad = 0;
    for (size_t g = 0; g < 66; g++) bad += (tv[g] != val(g)) + (tzv[g] != val(g));
    for (size_t g = 0; g < 50; g++) bad += iv[g] != g * 3 + 1;
    for (size_t g = 0; g < 150; g++) bad += vv[g] != (float)g * 0.5f;
    EXPECT_TRUE(kyt::all(bad == 0)) << bad << " wrong values read from h5py's file on rank " << kyt::rank();
    /* the file h5py checks: field 9x4 float64 val(g), pm 29 x float32x4 (i * 0.25) */
    size_t df[2] = {9, 4}, dp[1] = {29};
    ky_array_t fa, pm;
    Layout L{2, {9, 4, 0, 0}, ky_dist_block1(), {2, 0, 0, 0}};
    int h2[2] = {2, 0};
    KYT_EXPECT_OK(ky_array_create(2, df, sizeof(double), NULL, place(), h2, &fa));
    fill(fa, L, 0, -1);
    KYT_EXPECT_OK(ky_array_create(1, dp, 4 * sizeof(float), NULL, place(), NULL, &pm));
    std::vector<float> p4(29 * 4);
    for (size_t i = 0; i < p4.size(); i++) p4[i] = (float)i * 0.25f;
    if (kyt::rank() == 0) KYT_EXPECT_OK(ky_array_put(pm, lo, dp, p4.data()));
    ky_comm_barrier();
    ky_io_opts_t of{KY_IO_F64, 0, "m"}, op{KY_IO_F32, 4, NULL};
    KYT_EXPECT_OK(ky_io_create(out, &f));
    KYT_EXPECT_OK(ky_io_write(f, "field", fa, &of));
    KYT_EXPECT_OK(ky_io_write(f, "pm", pm, &op));
    KYT_EXPECT_OK(ky_io_close(f));
    ky_array_free(t), ky_array_free(tz), ky_array_free(ids), ky_array_free(vel), ky_array_free(fa),
        ky_array_free(pm);
}
