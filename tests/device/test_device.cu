/* Tests of the device API (include/kyoyu/device.cuh): puts with signals from kernels around a ring and all
 * to all, signal/wait ordering, and the statuses for a peer out of range and one this GPU cannot reach.
 * Results are checked against the formula every rank evaluates for every other. Skips (every rank alike)
 * without a GPU, and where the peers' pieces are not mapped here (other nodes, KY_NODE_SPLIT=rank: no host
 * proxy yet). Not yet run on a GPU: see device.cuh's STATUS. */
#include <climits>

#include "kyt.h"

#include "kyoyu/device.cuh"

namespace {

__host__ __device__ long dval(int r, size_t i, long round)
{
    return (long)(r * 1000003L + (long)i * 7919L + round * 31L);
}

#define CUDA_OK(call)                                                          \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        EXPECT_EQ(cudaSuccess, e_) << #call << ": " << cudaGetErrorString(e_); \
    } while (0)

/* Layout of each rank's piece: nranks blocks of n longs, then one 8-byte signal word per round slot. */
struct layout {
    size_t n;
    int nranks;
    size_t data_bytes() const { return n * sizeof(long) * (size_t)nranks; }
    size_t sig_off() const { return (data_bytes() + 63) / 64 * 64; }
    size_t bytes() const { return sig_off() + 64; }
};

__global__ void fill(long *src, size_t n, int me, long round)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        src[i] = dval(me, i, round);
}

/* One thread: put n longs to `to` at block `slot`, add 1 to its signal; then wait for `expect` arrivals. */
__global__ void put_and_wait(ky_dev_seg_t s, const long *src, size_t n, int to, int slot, size_t sig_off,
                             uint64_t expect, int *status)
{
    if (blockIdx.x || threadIdx.x) return;
    int st = ky_dev_put_signal(s, to, (size_t)slot * n * sizeof(long), src, n * sizeof(long), sig_off, 1, 1);
    if (st != KY_OK) *status = st;
    ky_dev_wait_until(s, sig_off, KY_DEV_CMP_GE, expect);
}

__global__ void all_to_all(ky_dev_seg_t s, const long *src, size_t n, size_t sig_off, uint64_t expect,
                           int *status)
{
    if (blockIdx.x || threadIdx.x) return;
    for (int r = 0; r < s.nranks; r++) {
        int st =
            ky_dev_put_signal(s, r, (size_t)s.rank * n * sizeof(long), src, n * sizeof(long), sig_off, 1, 1);
        if (st != KY_OK) *status = st;
    }
    ky_dev_wait_until(s, sig_off, KY_DEV_CMP_GE, expect);
}

__global__ void bad_calls(ky_dev_seg_t s, int *status)
{
    if (blockIdx.x || threadIdx.x) return;
    long x = 1;
    status[0] = ky_dev_put(s, s.nranks, 0, &x, 8);            /* no such rank */
    status[1] = ky_dev_put(s, s.rank, s.size[s.rank], &x, 8); /* past the end of the piece */
}

/* Every rank has a GPU and maps every peer's piece: else every rank skips (the reason in *why). */
bool usable(const ky_dev_seg_t *d, std::string *why)
{
    bool ok = ky_ngpus() > 0;
    if (!ok) *why = "no GPU on this machine";
    for (int r = 0; ok && d && r < d->nranks; r++)
        if (!d->base[r]) {
            ok = false;
            *why = "rank " + std::to_string(r) +
                   "'s piece is not mapped here (another node or KY_NODE_SPLIT=rank: no host proxy yet)";
        }
    return kyt::all(ok);
}

struct DevSeg {
    ky_seg_t seg = nullptr;
    ky_dev_seg_t d{};
    long *src = nullptr;
    int *status = nullptr;
    bool ok = false;
    explicit DevSeg(const layout &L)
    {
        int dev = -1;
        if (ky_ngpus() > 0) ky_gpu_device(0, &dev);
        ok =
            ky_seg_create(nullptr, L.bytes(), KY_MEM_GPU, dev, &seg) == KY_OK && ky_dev_seg(seg, &d) == KY_OK;
        if (ok) {
            ok = cudaMalloc(&src, L.n * sizeof(long)) == cudaSuccess &&
                 cudaMalloc(&status, 2 * sizeof(int)) == cudaSuccess &&
                 cudaMemset(status, 0, 2 * sizeof(int)) == cudaSuccess;
            void *base;
            size_t sz;
            ky_seg_local(seg, &base, &sz);
            ok = ok && cudaMemset(base, 0, sz) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
        }
    }
    ~DevSeg()
    {
        if (src) cudaFree(src);
        if (status) cudaFree(status);
        if (seg) ky_seg_destroy(seg);
    }
};

TEST(Device, RingPutSignal)
{
    std::string why;
    if (!usable(nullptr, &why)) GTEST_SKIP() << why;
    layout L{(size_t)kyt::scaled(1 << 14, 64), kyt::nranks()};
    DevSeg S(L);
    if (!usable(S.ok ? &S.d : nullptr, &why)) GTEST_SKIP() << why;
    int me = kyt::rank(), np = kyt::nranks(), right = (me + 1) % np, left = (me + np - 1) % np;
    for (long round = 1; round <= 3; round++) {
        fill<<<64, 256>>>(S.src, L.n, me, round);
        CUDA_OK(cudaDeviceSynchronize());
        ky_comm_barrier();
        put_and_wait<<<1, 1>>>(S.d, S.src, L.n, right, 0, L.sig_off(), (uint64_t)round, S.status);
        CUDA_OK(cudaDeviceSynchronize());
        std::vector<long> got(L.n);
        CUDA_OK(cudaMemcpy(got.data(), S.d.base[me], L.n * sizeof(long), cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < L.n; i++) bad += got[i] != dval(left, i, round);
        EXPECT_EQ(0u, bad) << "round " << round << ": data from rank " << left;
        int st[2];
        CUDA_OK(cudaMemcpy(st, S.status, sizeof st, cudaMemcpyDeviceToHost));
        EXPECT_EQ(KY_OK, st[0]);
        ky_comm_barrier();
    }
}

TEST(Device, AllToAllPutSignal)
{
    std::string why;
    if (!usable(nullptr, &why)) GTEST_SKIP() << why;
    layout L{(size_t)kyt::scaled(4096, 16), kyt::nranks()};
    DevSeg S(L);
    if (!usable(S.ok ? &S.d : nullptr, &why)) GTEST_SKIP() << why;
    int me = kyt::rank(), np = kyt::nranks();
    fill<<<64, 256>>>(S.src, L.n, me, 9);
    CUDA_OK(cudaDeviceSynchronize());
    ky_comm_barrier();
    all_to_all<<<1, 1>>>(S.d, S.src, L.n, L.sig_off(), (uint64_t)np, S.status);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<long> got(L.n * np);
    CUDA_OK(cudaMemcpy(got.data(), S.d.base[me], got.size() * sizeof(long), cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (int r = 0; r < np; r++)
        for (size_t i = 0; i < L.n; i++) bad += got[r * L.n + i] != dval(r, i, 9);
    EXPECT_EQ(0u, bad);
    ky_comm_barrier();
}

TEST(Device, BadCallsReturnStatus)
{
    std::string why;
    if (!usable(nullptr, &why)) GTEST_SKIP() << why;
    layout L{64, kyt::nranks()};
    DevSeg S(L);
    if (!usable(S.ok ? &S.d : nullptr, &why)) GTEST_SKIP() << why;
    bad_calls<<<1, 1>>>(S.d, S.status);
    CUDA_OK(cudaDeviceSynchronize());
    int st[2];
    CUDA_OK(cudaMemcpy(st, S.status, sizeof st, cudaMemcpyDeviceToHost));
    EXPECT_EQ(KY_ERR_ARG, st[0]);
    EXPECT_EQ(KY_ERR_RANGE, st[1]);
    /* a host segment has no device view */
    ky_seg_t h;
    ky_dev_seg_t d;
    ASSERT_EQ(KY_OK, ky_seg_create(nullptr, 64, KY_MEM_HOST, -1, &h));
    EXPECT_EQ(KY_ERR_ARG, ky_dev_seg(h, &d));
    EXPECT_NE(std::string::npos, std::string(ky_last_error()).find("ky_dev_seg: segment")) << ky_last_error();
    ky_seg_destroy(h);
}

}  // namespace
