/* Helpers shared by Kyoyu's multi-rank GoogleTest programs (tests/test_*.cpp, run by tests/mpi_main.cpp).
 *
 * Rules every multi-rank test follows: all ranks run the same tests in the same order; a test never returns
 * early on one rank while others enter a collective (no ASSERT_* between collectives: compute a local ok,
 * combine it with kyt::all(), then EXPECT); waits for remote effects loop on ky_poll() so they also work
 * with KY_PROGRESS_THREAD=0.
 *
 * Test knobs (environment): KY_TEST_SCALE (float, default 1: multiplies iteration counts and caps sizes),
 * KY_TEST_SEED (random seed, the same on every rank), KY_TEST_MEMKIND=host|gpu|all (which memory kinds the
 * parametrized tests instantiate; `ctest -L gpu` sets gpu). */
#ifndef KYT_H
#define KYT_H

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kyoyu.h"

#ifdef KY_TEST_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* EXPECT a Kyoyu call to return KY_OK, printing the status and ky_last_error() otherwise. */
#define KYT_EXPECT_OK(call)                                                                  \
    do {                                                                                     \
        int kyt_s_ = (call);                                                                 \
        EXPECT_EQ(KY_OK, kyt_s_) << #call << " -> " << kyt_s_ << " (" << ky_strerror(kyt_s_) \
                                 << "): " << ky_last_error();                                \
    } while (0)

/* EXPECT a Kyoyu call to return a given status. */
#define KYT_EXPECT_STATUS(want, call)                                                                \
    do {                                                                                             \
        int kyt_s_ = (call);                                                                         \
        EXPECT_EQ((int)(want), kyt_s_)                                                               \
            << #call << " -> " << kyt_s_ << " (" << ky_strerror(kyt_s_) << "): " << ky_last_error(); \
    } while (0)

namespace kyt {

inline int rank()
{
    return ky_rank();
}
inline int nranks()
{
    return ky_nranks();
}

/* ky_alloc and ky_fetch_add as expressions, for tests that use them in many places: NULL / LONG_MIN on
 * failure, with the reason in ky_last_error(). Dsm.BadInput checks the statuses themselves. */
inline void *galloc(size_t bytes, int home)
{
    void *p = nullptr;
    return ky_alloc(bytes, home, &p) == KY_OK ? p : nullptr;
}
inline long fadd(long *p, long v)
{
    long old = 0;
    return ky_fetch_add(p, v, &old) == KY_OK ? old : LONG_MIN;
}

/* Collective: true on every rank iff `ok` on every rank. Enters ky_comm_barrier first: an MPI collective
 * does not serve Kyoyu requests, so without a progress thread a rank must not block in one while another
 * still waits for it to serve a put, get or active message. */
inline bool all(bool ok)
{
    if (ky_comm_barrier() != KY_OK) ok = false;
    int in = ok ? 1 : 0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return out != 0;
}

/* Collective sum / max of a 64-bit value. */
inline uint64_t sum(uint64_t v)
{
    ky_comm_barrier();
    unsigned long long in = v, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return out;
}
inline uint64_t max(uint64_t v)
{
    ky_comm_barrier();
    unsigned long long in = v, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

/* T threads of this rank running body(t) once each, joined. */
inline void run_threads(int T, const std::function<void(int)> &body)
{
    std::vector<std::thread> th;
    for (int t = 0; t < T; t++) th.emplace_back(body, t);
    for (auto &x : th) x.join();
}

inline void mpi_barrier()
{
    MPI_Barrier(MPI_COMM_WORLD);
}

inline double scale()
{
    const char *s = getenv("KY_TEST_SCALE");
    double v = s && *s ? atof(s) : 1.0;
    return v > 0 ? v : 1.0;
}
/* n scaled by KY_TEST_SCALE, at least lo. */
inline int scaled(int n, int lo = 1)
{
    int v = (int)std::lround(n * scale());
    return v < lo ? lo : v;
}

inline uint64_t seed()
{
    const char *s = getenv("KY_TEST_SEED");
    return s && *s ? strtoull(s, nullptr, 0) : 20240611ull;
}

/* splitmix64: a hash of one value, for deterministic per-operation parameters. */
inline uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
inline uint64_t mix(uint64_t a, uint64_t b)
{
    return mix(mix(a) ^ b);
}
inline uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
    return mix(mix(a, b) ^ c);
}
inline uint64_t mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix(mix(a, b, c) ^ d);
}

/* Log-uniform integer in [lo, hi]. */
inline size_t log_uniform(std::mt19937_64 &g, size_t lo, size_t hi)
{
    std::uniform_real_distribution<double> d(std::log((double)lo), std::log((double)hi + 1.0));
    size_t v = (size_t)std::exp(d(g));
    return std::min(std::max(v, lo), hi);
}

/* The test pattern: byte i of a buffer salted with `salt`. Depends on i, so misplaced bytes show. */
inline uint8_t pat(size_t i, uint64_t salt)
{
    uint64_t x = (i + salt) * 0x9E3779B97F4A7C15ull;
    return (uint8_t)((x >> 56) ^ (x >> 29) ^ (salt & 0xff));
}
inline void fill_pattern(void *p, size_t n, uint64_t salt)
{
    uint8_t *b = (uint8_t *)p;
    for (size_t i = 0; i < n; i++) b[i] = pat(i, salt);
}
/* Index of the first byte that differs from the pattern, or n. */
inline size_t check_pattern(const void *p, size_t n, uint64_t salt)
{
    const uint8_t *b = (const uint8_t *)p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(i, salt)) return i;
    return n;
}
/* Index of the first byte != v, or n. */
inline size_t check_byte(const void *p, size_t n, uint8_t v)
{
    const uint8_t *b = (const uint8_t *)p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != v) return i;
    return n;
}

/* ---- memory kinds ---------------------------------------------------------------------------------- */

inline const char *memkind_name(int k)
{
    return k == KY_MEM_GPU ? "gpu" : "host";
}

/* Memory kinds selected by KY_TEST_MEMKIND (default host). */
inline std::vector<int> memkinds()
{
    const char *s = getenv("KY_TEST_MEMKIND");
    std::string v = s ? s : "host";
    if (v == "gpu") return {KY_MEM_GPU};
    if (v == "all") return {KY_MEM_HOST, KY_MEM_GPU};
    return {KY_MEM_HOST};
}

struct MemkindName {
    std::string operator()(const ::testing::TestParamInfo<int> &i) const { return memkind_name(i.param); }
};

inline bool have_cuda()
{
#ifdef KY_TEST_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

/* Collective: every rank drives a GPU (and this test program can use CUDA). */
inline bool gpu_everywhere()
{
    int n = ky_ngpus();
    return all(have_cuda() && n > 0);
}

inline int my_device()
{
    int d = 0;
    if (ky_ngpus() > 0) ky_gpu_device(0, &d);
    return d;
}

/* Memory of a kind in this process: host (malloc) or GPU (cudaMalloc on this rank's device). */
inline void *mem_alloc(int kind, size_t n)
{
    if (n == 0) n = 1;
    if (kind == KY_MEM_HOST) return malloc(n);
#ifdef KY_TEST_HAVE_CUDA
    void *p = nullptr;
    cudaSetDevice(my_device());
    if (cudaMalloc(&p, n) != cudaSuccess) return nullptr;
    return p;
#else
    return nullptr;
#endif
}
inline void mem_free(int kind, void *p)
{
    if (!p) return;
    if (kind == KY_MEM_HOST) {
        free(p);
        return;
    }
#ifdef KY_TEST_HAVE_CUDA
    cudaFree(p);
#endif
}
/* Copy n bytes from host `src` into `dst` of kind `kind`. */
inline void mem_write(int kind, void *dst, const void *src, size_t n)
{
    if (n == 0) return;
    if (kind == KY_MEM_HOST) {
        memcpy(dst, src, n);
        return;
    }
#ifdef KY_TEST_HAVE_CUDA
    cudaSetDevice(my_device());
    cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice);
#endif
}
/* Copy n bytes from `src` of kind `kind` into host `dst`. */
inline void mem_read(int kind, void *dst, const void *src, size_t n)
{
    if (n == 0) return;
    if (kind == KY_MEM_HOST) {
        memcpy(dst, src, n);
        return;
    }
#ifdef KY_TEST_HAVE_CUDA
    cudaSetDevice(my_device());
    cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost);
#endif
}
inline void mem_set(int kind, void *dst, int byte, size_t n)
{
    if (n == 0) return;
    if (kind == KY_MEM_HOST) {
        memset(dst, byte, n);
        return;
    }
#ifdef KY_TEST_HAVE_CUDA
    cudaSetDevice(my_device());
    cudaMemset(dst, byte, n);
    cudaDeviceSynchronize();
#endif
}

/* Fixture base for tests parametrized on the memory kind of the segments. GPU cases skip (on every rank
 * alike) when a rank has no GPU or the test was built without CUDA. */
class MemkindTest : public ::testing::TestWithParam<int> {
  protected:
    ky_memkind_t kind = KY_MEM_HOST;
    void SetUp() override
    {
        kind = (ky_memkind_t)GetParam();
        if (kind == KY_MEM_GPU && !gpu_everywhere())
            GTEST_SKIP() << "GPU segments: no GPU on some rank (ky_ngpus()==0) or tests built without CUDA";
    }
    int device() const { return kind == KY_MEM_GPU ? my_device() : 0; }
};

/* Read this rank's view of [off, off+n) of its own piece of `seg` into a host vector. */
inline std::vector<uint8_t> local_view(ky_seg_t seg, int kind, size_t off, size_t n)
{
    std::vector<uint8_t> v(n);
    void *base = nullptr;
    size_t bytes = 0;
    ky_seg_local(seg, &base, &bytes);
    if (base && off + n <= bytes) mem_read(kind, v.data(), (uint8_t *)base + off, n);
    return v;
}

/* Value of a KY_* setting in effect (empty if unknown). */
inline std::string config(const char *name)
{
    const char *v = nullptr;
    if (ky_config_get(name, &v) != KY_OK || !v) return "";
    return v;
}
inline bool progress_thread()
{
    return config("KY_PROGRESS_THREAD") != "0";
}
inline bool node_split_rank()
{
    return config("KY_NODE_SPLIT") == "rank";
}
inline bool host_forced_mpi()
{
    return config("KY_PATH_HOST") == "mpi";
}
inline bool gpu_forced_mpi()
{
    return config("KY_PATH_GPU") == "mpi";
}
/* The path of host segments on other nodes (and of same-node pieces a direct copy may not reach): UCX where
 * KY_TRANSPORT=ucx. */
inline ky_path_t host_remote_path()
{
    return config("KY_TRANSPORT") == "ucx" ? KY_PATH_UCX : KY_PATH_MPI;
}
/* The same for GPU segments: UCX only where it moves CUDA memory, which the test is told (KY_TEST_UCX_CUDA=1:
 * tools/device-run's ucx step sets it from ucx_info), else the MPI path's staging. A test's own variable, not
 * a Kyoyu setting: read from the environment (ky_config_get knows only KY_* settings of the table). */
inline ky_path_t gpu_remote_path()
{
    const char *ucx_cuda = getenv("KY_TEST_UCX_CUDA");
    bool cuda = ucx_cuda && strcmp(ucx_cuda, "1") == 0;
    return config("KY_TRANSPORT") == "ucx" && cuda ? KY_PATH_UCX : KY_PATH_MPI;
}

/* Path expected for a put/get from this rank to `target`'s piece of a segment of `kind` created with base
 * NULL (user_base: created with a user pointer), given the forcing variables. */
inline ky_path_t expected_path(int target, int kind, bool user_base = false)
{
    if (target == ky_rank()) return KY_PATH_SELF;
    bool same_node = ky_node_of(target) == ky_node();
    if (kind == KY_MEM_HOST) {
        if (!same_node || user_base || host_forced_mpi()) return host_remote_path();
        return KY_PATH_SHM;
    }
    if (!same_node || gpu_forced_mpi()) return gpu_remote_path();
    return KY_PATH_IPC;
}

inline ky_comm_stats_t stats()
{
    ky_comm_stats_t s;
    memset(&s, 0, sizeof s);
    ky_comm_stats(&s);
    return s;
}

}  // namespace kyt

#endif
