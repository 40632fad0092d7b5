/* Tests of the device API (include/kyoyu/device.cuh): puts with signals from kernels around a ring and all
 * to all, signal/wait ordering (and its stress: odd sizes and alignments, many rounds), gets, non-blocking
 * puts completed by ky_dev_quiet, and the statuses of bad calls. Results are checked against the formula
 * every rank evaluates for every other. Every body runs over whatever path the peers take: loads and stores
 * (same GPU, CUDA IPC), or the host proxy (other nodes, KY_NODE_SPLIT=rank). CTest runs the program three
 * ways, and KY_TEST_DEV_PATH=direct|proxy|proxied makes Device.Path check that the run took the path it was
 * registered for (proxied: the view of ky_dev_seg_proxied, every peer through the proxy although this node
 * maps them). Kernels run on a non-blocking stream, as the proxy requires. Skips (every rank alike) without a
 * GPU. Not yet run on a GPU: see device.cuh's STATUS. */
#include <climits>
#include <cstring>
#include <vector>

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

/* Layout of each rank's piece: nranks blocks of n longs, then 8 signal words (64 bytes). */
struct layout {
    size_t n;
    int nranks;
    size_t data_bytes() const { return n * sizeof(long) * (size_t)nranks; }
    size_t sig_off(int k = 0) const { return (data_bytes() + 63) / 64 * 64 + 8 * (size_t)k; }
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
    if (st != KY_OK) status[0] = st;
    ky_dev_wait_until(s, sig_off, KY_DEV_CMP_GE, expect);
}

/* One thread: a signal-carrying put to every rank (itself included), then wait for all of theirs. */
__global__ void all_to_all(ky_dev_seg_t s, const long *src, size_t n, size_t sig_off, uint64_t expect,
                           int nbi, int *status)
{
    if (blockIdx.x || threadIdx.x) return;
    for (int k = 0; k < s.nranks; k++) {
        int r = (s.rank + k) % s.nranks; /* staggered, so not every rank hits rank 0 first */
        size_t off = (size_t)s.rank * n * sizeof(long);
        int st = nbi ? ky_dev_put_signal_nbi(s, r, off, src, n * sizeof(long), sig_off, 1, 1)
                     : ky_dev_put_signal(s, r, off, src, n * sizeof(long), sig_off, 1, 1);
        if (st != KY_OK) status[0] = st;
    }
    int st = ky_dev_quiet(s);
    if (st != KY_OK) status[1] = st;
    ky_dev_wait_until(s, sig_off, KY_DEV_CMP_GE, expect);
}

/* Signal/wait ordering: `rounds` rounds of put then set-signal(round) to the right; the left neighbour's
 * data must be complete whenever its signal reads `round`: the kernel checks every element itself right
 * after the wait, before acknowledging on a second word so the sender may overwrite. */
__global__ void ordered_rounds(ky_dev_seg_t s, long *src, size_t n, int rounds, size_t sig_data,
                               size_t sig_ack, int *status, unsigned long long *bad)
{
    if (blockIdx.x || threadIdx.x) return;
    int right = (s.rank + 1) % s.nranks, left = (s.rank + s.nranks - 1) % s.nranks;
    const volatile long *mine = (const volatile long *)s.base[s.rank];
    for (int round = 1; round <= rounds; round++) {
        for (size_t i = 0; i < n; i++) src[i] = dval(s.rank, i, round);
        if (round > 1) ky_dev_wait_until(s, sig_ack, KY_DEV_CMP_GE, (uint64_t)round - 1);
        int st = ky_dev_put_signal(s, right, 0, src, n * sizeof(long), sig_data, (uint64_t)round, 0);
        if (st != KY_OK) status[0] = st;
        ky_dev_wait_until(s, sig_data, KY_DEV_CMP_GE, (uint64_t)round);
        for (size_t i = 0; i < n; i++) *bad += mine[i] != dval(left, i, round);
        /* acknowledge to the left (a signal with no data): "your round is read, overwrite it" */
        st = ky_dev_put_signal(s, left, 0, src, 0, sig_ack, (uint64_t)round, 0);
        if (st != KY_OK) status[1] = st;
    }
}

__host__ __device__ char bval(int r, size_t i, int round)
{
    return (char)(r * 31 + (long)i * 7 + round * 13 + 1);
}

/* The ordering stress: as ordered_rounds, with n bytes at byte offset `off` (any size, any alignment), the
 * source rewritten every round, and every byte checked right after the signal; `line`: the signal word is
 * the 8 bytes right after the data (a layout a one-line store could exploit: it must stay ordered). */
__global__ void ordered_bytes(ky_dev_seg_t s, char *src, size_t n, size_t off, int rounds, size_t sig_data,
                              size_t sig_ack, int nbi, int *status, unsigned long long *bad)
{
    if (blockIdx.x || threadIdx.x) return;
    int right = (s.rank + 1) % s.nranks, left = (s.rank + s.nranks - 1) % s.nranks;
    const volatile char *mine = (const volatile char *)s.base[s.rank] + off;
    for (int round = 1; round <= rounds; round++) {
        /* the right neighbour has read the last round: its bytes, and (nbi, proxy) src, may be rewritten */
        if (round > 1) ky_dev_wait_until(s, sig_ack, KY_DEV_CMP_GE, (uint64_t)round - 1);
        for (size_t i = 0; i < n; i++) src[i] = bval(s.rank, i, round);
        int st = nbi ? ky_dev_put_signal_nbi(s, right, off, src, n, sig_data, (uint64_t)round, 0)
                     : ky_dev_put_signal(s, right, off, src, n, sig_data, (uint64_t)round, 0);
        if (st != KY_OK) status[0] = st;
        ky_dev_wait_until(s, sig_data, KY_DEV_CMP_GE, (uint64_t)round);
        for (size_t i = 0; i < n; i++) *bad += mine[i] != bval(left, i, round);
        st = ky_dev_put_signal(s, left, 0, src, 0, sig_ack, (uint64_t)round, 0);
        if (st != KY_OK) status[1] = st;
    }
    int st = ky_dev_quiet(s); /* the nbi puts' source stays unchanged until here (the last round's) */
    if (st != KY_OK) status[2] = st;
}

/* One thread: get every rank's first block into dst (rank r at block r). */
__global__ void get_all(ky_dev_seg_t s, long *dst, size_t n, int *status)
{
    if (blockIdx.x || threadIdx.x) return;
    for (int k = 0; k < s.nranks; k++) {
        int r = (s.rank + k) % s.nranks;
        int st = ky_dev_get(dst + (size_t)r * n, s, r, 0, n * sizeof(long));
        if (st != KY_OK) status[0] = st;
    }
}

__global__ void bad_calls(ky_dev_seg_t s, int *status)
{
    if (blockIdx.x || threadIdx.x) return;
    long x = 1;
    int peer = (s.rank + 1) % s.nranks;
    status[0] = ky_dev_put(s, s.nranks, 0, &x, 8);                        /* no such rank */
    status[1] = ky_dev_put(s, s.rank, s.size[s.rank], &x, 8);             /* past the end of the piece */
    status[2] = ky_dev_get(&x, s, peer, s.size[peer] - 4, 8);             /* past the end of a peer's */
    status[3] = ky_dev_put_signal(s, peer, 0, &x, 8, 4, 1, 1);            /* unaligned signal */
    status[4] = ky_dev_put_signal(s, peer, 0, &x, 8, s.size[peer], 1, 1); /* signal past the end */
}

/* KY_TEST_DEV_PATH: the path this CTest entry was registered for ("" : either). */
std::string wanted_path()
{
    const char *p = getenv("KY_TEST_DEV_PATH");
    return p ? p : "";
}

/* KY_TEST_DEV_PATH=proxied: every peer through the proxy although comm maps them (ky_dev_seg_proxied). */
bool proxied()
{
    return wanted_path() == "proxied";
}

bool all_mapped(const ky_dev_seg_t &d)
{
    for (int r = 0; r < d.nranks; r++)
        if (!d.base[r]) return false;
    return true;
}

struct DevSeg {
    ky_seg_t seg = nullptr;
    ky_dev_seg_t d{};
    long *src = nullptr, *dst = nullptr;
    int *status = nullptr;
    unsigned long long *bad = nullptr;
    cudaStream_t st = nullptr;
    bool ok = false;
    explicit DevSeg(const layout &L)
    {
        int dev = -1;
        if (ky_ngpus() > 0) ky_gpu_device(0, &dev);
        ok = ky_seg_create(nullptr, L.bytes(), KY_MEM_GPU, dev, &seg) == KY_OK &&
             (proxied() ? ky_dev_seg_proxied(seg, &d) : ky_dev_seg(seg, &d)) == KY_OK;
        if (ok) {
            ok = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess &&
                 cudaMalloc(&src, L.n * sizeof(long)) == cudaSuccess &&
                 cudaMalloc(&dst, L.n * sizeof(long) * L.nranks) == cudaSuccess &&
                 cudaMalloc(&status, 8 * sizeof(int)) == cudaSuccess &&
                 cudaMalloc(&bad, sizeof *bad) == cudaSuccess &&
                 cudaMemset(status, 0, 8 * sizeof(int)) == cudaSuccess &&
                 cudaMemset(bad, 0, sizeof *bad) == cudaSuccess;
            void *base;
            size_t sz;
            ky_seg_local(seg, &base, &sz);
            ok = ok && cudaMemset(base, 0, sz) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
        }
        ok = kyt::all(ok);
    }
    /* Wait for this rank's kernel; every rank then synchronises (the proxy may still serve a peer). */
    void sync()
    {
        CUDA_OK(cudaStreamSynchronize(st));
        ky_comm_barrier();
    }
    void statuses(int *out, int n)
    {
        CUDA_OK(cudaMemcpy(out, status, n * sizeof(int), cudaMemcpyDeviceToHost));
    }
    ~DevSeg()
    {
        if (st) cudaStreamSynchronize(st);
        for (void *p : {(void *)src, (void *)dst, (void *)status, (void *)bad})
            if (p) cudaFree(p);
        if (st) cudaStreamDestroy(st);
        if (seg) ky_seg_destroy(seg);
    }
};

#define DEV_SETUP(L, S)                                            \
    if (ky_ngpus() <= 0) GTEST_SKIP() << "no GPU on this machine"; \
    DevSeg S(L);                                                   \
    ASSERT_TRUE(S.ok) << "ky_seg_create / ky_dev_seg failed on some rank: " << ky_last_error();

TEST(Device, Path)
{
    layout L{64, kyt::nranks()};
    DEV_SETUP(L, S);
    std::string want = wanted_path();
    bool direct = all_mapped(S.d);
    EXPECT_EQ(direct, S.d.ring.head == nullptr) << "a proxy exactly where some peer is not mapped";
    if (want == "direct") EXPECT_TRUE(direct) << "every peer's piece should be mapped on this node";
    if (want == "proxy") EXPECT_FALSE(direct) << "KY_NODE_SPLIT=rank: the peers should go through the proxy";
    if (want == "proxied")
        for (int r = 0; r < S.d.nranks; r++) EXPECT_EQ(r == S.d.rank, S.d.base[r] != nullptr) << "rank " << r;
    if (!direct) EXPECT_TRUE(S.d.ring.req && S.d.ring.done && S.d.ring.cap > 0);
    /* same_gpu (the GPU-scope signals) exactly for the mapped pieces on this rank's physical GPU, by the
     * PCI addresses every rank reads of its own device */
    int dev = -1;
    ASSERT_EQ(cudaSuccess, cudaGetDevice(&dev));
    char id[32] = {0};
    ASSERT_EQ(cudaSuccess, cudaDeviceGetPCIBusId(id, sizeof id, dev));
    std::vector<char> ids(32 * (size_t)S.d.nranks);
    MPI_Allgather(id, 32, MPI_CHAR, ids.data(), 32, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < S.d.nranks; r++) {
        bool same = S.d.base[r] && !strcmp(&ids[32 * (size_t)r], id);
        EXPECT_EQ(same, S.d.same_gpu[r] != 0)
            << "rank " << r << " (" << &ids[32 * (size_t)r] << ", mine " << id << ")";
    }
    ky_comm_barrier();
}

TEST(Device, RingPutSignal)
{
    layout L{(size_t)kyt::scaled(1 << 14, 64), kyt::nranks()};
    DEV_SETUP(L, S);
    int me = kyt::rank(), np = kyt::nranks(), right = (me + 1) % np, left = (me + np - 1) % np;
    for (long round = 1; round <= 3; round++) {
        fill<<<64, 256, 0, S.st>>>(S.src, L.n, me, round);
        CUDA_OK(cudaStreamSynchronize(S.st));
        ky_comm_barrier();
        put_and_wait<<<1, 1, 0, S.st>>>(S.d, S.src, L.n, right, 0, L.sig_off(), (uint64_t)round, S.status);
        S.sync();
        std::vector<long> got(L.n);
        CUDA_OK(cudaMemcpy(got.data(), S.d.base[me], L.n * sizeof(long), cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < L.n; i++) bad += got[i] != dval(left, i, round);
        EXPECT_EQ(0u, bad) << "round " << round << ": data from rank " << left;
        int st[1];
        S.statuses(st, 1);
        EXPECT_EQ(KY_OK, st[0]);
        ky_comm_barrier();
    }
}

class DeviceA2A : public ::testing::TestWithParam<int> {};

TEST_P(DeviceA2A, PutSignal)
{
    int nbi = GetParam();
    layout L{(size_t)kyt::scaled(4096, 16), kyt::nranks()};
    DEV_SETUP(L, S);
    int me = kyt::rank(), np = kyt::nranks();
    fill<<<64, 256, 0, S.st>>>(S.src, L.n, me, 9);
    CUDA_OK(cudaStreamSynchronize(S.st));
    ky_comm_barrier();
    all_to_all<<<1, 1, 0, S.st>>>(S.d, S.src, L.n, L.sig_off(), (uint64_t)np, nbi, S.status);
    S.sync();
    std::vector<long> got(L.n * np);
    CUDA_OK(cudaMemcpy(got.data(), S.d.base[me], got.size() * sizeof(long), cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (int r = 0; r < np; r++)
        for (size_t i = 0; i < L.n; i++) bad += got[r * L.n + i] != dval(r, i, 9);
    EXPECT_EQ(0u, bad);
    int st[2];
    S.statuses(st, 2);
    EXPECT_EQ(KY_OK, st[0]) << "a put_signal";
    EXPECT_EQ(KY_OK, st[1]) << "ky_dev_quiet";
    ky_comm_barrier();
}

INSTANTIATE_TEST_SUITE_P(Device, DeviceA2A, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int> &i) { return i.param ? "nbi" : "blocking"; });

TEST(Device, SignalOrdersData)
{
    layout L{(size_t)kyt::scaled(2048, 16), kyt::nranks()};
    DEV_SETUP(L, S);
    int rounds = kyt::scaled(20, 3);
    ky_comm_barrier();
    ordered_rounds<<<1, 1, 0, S.st>>>(S.d, S.src, L.n, rounds, L.sig_off(0), L.sig_off(1), S.status, S.bad);
    S.sync();
    unsigned long long bad = 1;
    CUDA_OK(cudaMemcpy(&bad, S.bad, sizeof bad, cudaMemcpyDeviceToHost));
    EXPECT_EQ(0u, bad) << "elements seen stale after their round's signal";
    int st[2];
    S.statuses(st, 2);
    EXPECT_EQ(KY_OK, st[0]) << "data put_signal";
    EXPECT_EQ(KY_OK, st[1]) << "acknowledgement";
    ky_comm_barrier();
}

/* Signal/data ordering under stress: many rounds of odd sizes and alignments, each round's bytes checked by
 * the kernel right after its signal. Param: bytes, byte offset of the data, signal placement (1: the word
 * right after the data, in its 16-byte line), nbi. */
struct OddCase {
    size_t n, off;
    int line, nbi;
};

std::ostream &operator<<(std::ostream &o, const OddCase &c)
{
    return o << c.n << " B at offset " << c.off << (c.line ? ", signal in the line" : "")
             << (c.nbi ? ", nbi" : "");
}

class DeviceOrder : public ::testing::TestWithParam<OddCase> {};

TEST_P(DeviceOrder, SignalOrdersData)
{
    OddCase c = GetParam();
    /* the signals: right after the data (line), else on a line of their own after it */
    size_t end = c.off + c.n, sig_data = c.line ? end : (end + 63) / 64 * 64,
           sig_ack = (sig_data + 8 + 63) / 64 * 64;
    layout L{(sig_ack + 64) / sizeof(long) + 1, 1}; /* one block of longs covers data and both signals */
    DEV_SETUP(L, S);
    /* proxied rounds take a host round trip each: fewer there */
    int rounds = S.d.ring.head ? kyt::scaled(200, 20) : kyt::scaled(2000, 100);
    ky_comm_barrier();
    ordered_bytes<<<1, 1, 0, S.st>>>(S.d, (char *)S.src, c.n, c.off, rounds, sig_data, sig_ack, c.nbi,
                                     S.status, S.bad);
    S.sync();
    unsigned long long bad = 1;
    CUDA_OK(cudaMemcpy(&bad, S.bad, sizeof bad, cudaMemcpyDeviceToHost));
    EXPECT_EQ(0u, bad) << "bytes seen stale after their round's signal (" << rounds << " rounds)";
    int st[3];
    S.statuses(st, 3);
    EXPECT_EQ(KY_OK, st[0]) << "data put_signal";
    EXPECT_EQ(KY_OK, st[1]) << "acknowledgement";
    EXPECT_EQ(KY_OK, st[2]) << "ky_dev_quiet";
    ky_comm_barrier();
}

INSTANTIATE_TEST_SUITE_P(Device, DeviceOrder,
                         ::testing::Values(OddCase{1, 0, 0, 0}, OddCase{7, 0, 0, 0}, OddCase{8, 0, 0, 0},
                                           OddCase{9, 0, 0, 0}, OddCase{4097, 0, 0, 0}, OddCase{9, 3, 0, 0},
                                           OddCase{4097, 5, 0, 1}, OddCase{8, 0, 1, 0}, OddCase{8, 16, 1, 1},
                                           OddCase{7, 1, 1, 0}),
                         [](const ::testing::TestParamInfo<OddCase> &i) {
                             return std::to_string(i.param.n) + "B_off" + std::to_string(i.param.off) +
                                    (i.param.line ? "_line" : "") + (i.param.nbi ? "_nbi" : "");
                         });

TEST(Device, GetFromEveryRank)
{
    layout L{(size_t)kyt::scaled(4096, 16), kyt::nranks()};
    DEV_SETUP(L, S);
    int me = kyt::rank(), np = kyt::nranks();
    void *base;
    size_t sz;
    ky_seg_local(S.seg, &base, &sz);
    fill<<<64, 256, 0, S.st>>>((long *)base, L.n, me, 5);
    CUDA_OK(cudaStreamSynchronize(S.st));
    ky_comm_barrier();
    get_all<<<1, 1, 0, S.st>>>(S.d, S.dst, L.n, S.status);
    S.sync();
    std::vector<long> got(L.n * np);
    CUDA_OK(cudaMemcpy(got.data(), S.dst, got.size() * sizeof(long), cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (int r = 0; r < np; r++)
        for (size_t i = 0; i < L.n; i++) bad += got[r * L.n + i] != dval(r, i, 5);
    EXPECT_EQ(0u, bad);
    int st[1];
    S.statuses(st, 1);
    EXPECT_EQ(KY_OK, st[0]);
    ky_comm_barrier();
}

TEST(Device, BadCallsReturnStatus)
{
    layout L{64, kyt::nranks()};
    DEV_SETUP(L, S);
    bad_calls<<<1, 1, 0, S.st>>>(S.d, S.status);
    S.sync();
    int st[5];
    S.statuses(st, 5);
    EXPECT_EQ(KY_ERR_ARG, st[0]);
    EXPECT_EQ(KY_ERR_RANGE, st[1]);
    EXPECT_EQ(KY_ERR_RANGE, st[2]);
    EXPECT_EQ(KY_ERR_RANGE, st[3]);
    EXPECT_EQ(KY_ERR_RANGE, st[4]);
    /* a host segment has no device view */
    ky_seg_t h;
    ky_dev_seg_t d;
    ASSERT_EQ(KY_OK, ky_seg_create(nullptr, 64, KY_MEM_HOST, -1, &h));
    EXPECT_EQ(KY_ERR_ARG, ky_dev_seg(h, &d));
    EXPECT_NE(std::string::npos, std::string(ky_last_error()).find("ky_dev_seg: segment")) << ky_last_error();
    ky_seg_destroy(h);
}

}  // namespace
