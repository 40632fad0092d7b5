// Tests of the CUDA service layer (src/runtime/gpu/) alone: one process, no MPI, no ky_init. Pointer
// kinds, contiguous copies in every direction (random sizes 1 B .. 64 MiB, unaligned offsets, poisoned
// destinations), strided copies of 0..3 levels through both the copy-engine and the kernel path against a
// host packing written here, memset, operations, threads, bad arguments, and peer copies with 2+ GPUs.
// Every test skips when no GPU is visible. IPC needs two processes and is covered by the comm tests.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kyoyu/status.h"
#include "runtime/config.h"
#include "runtime/gpu.h"

namespace {

#define SKIP_WITHOUT_GPU()                                                     \
    do {                                                                       \
        if (kyi_gpu_count() == 0) GTEST_SKIP() << "no CUDA device is visible"; \
    } while (0)

#define CUDA_OK(x) ASSERT_EQ((x), cudaSuccess) << #x << ": " << cudaGetErrorString(x)

constexpr unsigned char kPoison = 0xA5;

void fill_random(std::vector<unsigned char> &v, std::mt19937_64 &rng)
{
    size_t i = 0;
    for (; i + 8 <= v.size(); i += 8) {
        uint64_t r = rng();
        std::memcpy(&v[i], &r, 8);
    }
    for (; i < v.size(); i++) v[i] = (unsigned char)rng();
}

// Log-uniform size in [1, max].
size_t random_size(std::mt19937_64 &rng, size_t max)
{
    std::uniform_real_distribution<double> u(0.0, std::log2((double)max));
    size_t n = (size_t)std::exp2(u(rng));
    return n < 1 ? 1 : (n > max ? max : n);
}

// A buffer of some memory kind, with host-side helpers to fill and read it.
enum Kind { kDevice, kPageable, kPinned };
const char *kind_name(Kind k)
{
    return k == kDevice ? "device" : k == kPageable ? "pageable" : "pinned";
}

struct Buf {
    Kind kind;
    int dev;
    size_t n;
    void *p = nullptr;
    Buf(Kind k, size_t bytes, int d = 0) : kind(k), dev(d), n(bytes)
    {
        int st = KY_OK;
        if (k == kDevice)
            st = kyi_gpu_malloc(d, n, &p);
        else if (k == kPinned)
            st = kyi_gpu_host_alloc(n, &p);
        else
            p = std::malloc(n ? n : 1);
        if (st != KY_OK || !p)
            ADD_FAILURE() << "allocation of " << n << " bytes failed: " << kyi_gpu_last_error();
    }
    ~Buf()
    {
        if (!p) return;
        if (kind == kDevice)
            kyi_gpu_free(p);
        else if (kind == kPinned)
            kyi_gpu_host_free(p);
        else
            std::free(p);
    }
    Buf(const Buf &) = delete;
    Buf &operator=(const Buf &) = delete;
    char *c() const { return (char *)p; }
    void put(const std::vector<unsigned char> &v) const
    {
        if (kind == kDevice) {
            ASSERT_EQ(cudaMemcpy(p, v.data(), v.size(), cudaMemcpyDefault), cudaSuccess);
            // cudaMemcpy from pageable memory may return before its DMA lands, and the layer's streams are
            // non-blocking (they do not wait for the legacy default stream): finish it first.
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        } else {
            std::memcpy(p, v.data(), v.size());
        }
    }
    std::vector<unsigned char> get() const
    {
        std::vector<unsigned char> v(n);
        if (kind == kDevice)
            EXPECT_EQ(cudaMemcpy(v.data(), p, n, cudaMemcpyDefault), cudaSuccess);
        else
            std::memcpy(v.data(), p, n);
        return v;
    }
};

::testing::AssertionResult same_bytes(const std::vector<unsigned char> &got,
                                      const std::vector<unsigned char> &want)
{
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
    for (size_t i = 0; i < got.size(); i++)
        if (got[i] != want[i])
            return ::testing::AssertionFailure() << "first difference at byte " << i << " of " << got.size()
                                                 << ": got " << (int)got[i] << ", want " << (int)want[i];
    return ::testing::AssertionSuccess();
}

// Host reference of the strided convention: count[0] contiguous bytes, count[1..levels] blocks,
// stride[i] bytes between blocks of level i+1. Written independently of the library.
void ref_strided(unsigned char *dst, const size_t ds[], const unsigned char *src, const size_t ss[],
                 const size_t count[], int levels)
{
    size_t c[4] = {count[0], 1, 1, 1}, d[3] = {0, 0, 0}, s[3] = {0, 0, 0};
    for (int l = 1; l <= levels; l++) c[l] = count[l];
    for (int l = 0; l < levels; l++) d[l] = ds[l], s[l] = ss[l];
    for (size_t k = 0; k < c[3]; k++)
        for (size_t j = 0; j < c[2]; j++)
            for (size_t i = 0; i < c[1]; i++)
                std::memmove(dst + k * d[2] + j * d[1] + i * d[0], src + k * s[2] + j * s[1] + i * s[0],
                             c[0]);
}

size_t span_of(const size_t stride[], const size_t count[], int levels)
{
    for (int l = 0; l <= levels; l++)
        if (count[l] == 0) return 0;
    size_t e = count[0];
    for (int l = 0; l < levels; l++) e += (count[l + 1] - 1) * stride[l];
    return e;
}

int wait_free(kyi_gpu_op_t *op)
{
    int st = kyi_gpu_op_wait(op);
    kyi_gpu_op_free(op);
    return st;
}

// ---- pointer kinds ----------------------------------------------------------------------------------------
TEST(GpuService, BuiltAndCount)
{
    EXPECT_EQ(kyi_gpu_built(), 1);
    SKIP_WITHOUT_GPU();
    EXPECT_GT(kyi_gpu_count(), 0);
    char pci[64] = {0};
    ASSERT_EQ(kyi_gpu_pci_id(0, pci, sizeof pci), KY_OK) << kyi_gpu_last_error();
    EXPECT_GT(std::strlen(pci), 4u) << pci;
    EXPECT_EQ(kyi_gpu_pci_id(kyi_gpu_count(), pci, sizeof pci), KY_ERR_ARG);
    EXPECT_EQ(kyi_gpu_can_access_peer(0, 0), 1);
    EXPECT_EQ(kyi_gpu_enable_peer(0, 0), KY_OK);
}

TEST(GpuService, PointerKinds)
{
    SKIP_WITHOUT_GPU();
    EXPECT_EQ(kyi_gpu_ptr_device(nullptr), -1);
    int on_stack = 0;
    EXPECT_EQ(kyi_gpu_ptr_device(&on_stack), -1);
    for (int d = 0; d < kyi_gpu_count() && d < 4; d++) {
        Buf dev(kDevice, 1 << 20, d);
        EXPECT_EQ(kyi_gpu_ptr_device(dev.p), d);
        EXPECT_EQ(kyi_gpu_ptr_device(dev.c() + 12345), d) << "interior pointer";
    }
    Buf pageable(kPageable, 1 << 20), pinned(kPinned, 1 << 20);
    EXPECT_EQ(kyi_gpu_ptr_device(pageable.p), -1);
    EXPECT_EQ(kyi_gpu_ptr_device(pinned.p), -1);
    // registered host memory reads as host memory, and registering twice is harmless
    ASSERT_EQ(kyi_gpu_host_register(pageable.p, pageable.n), KY_OK) << kyi_gpu_last_error();
    EXPECT_EQ(kyi_gpu_host_register(pageable.p, pageable.n), KY_OK) << kyi_gpu_last_error();
    EXPECT_EQ(kyi_gpu_ptr_device(pageable.p), -1);
    EXPECT_EQ(kyi_gpu_host_unregister(pageable.p), KY_OK) << kyi_gpu_last_error();
    // no error left behind for code that checks CUDA's last error
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// ---- contiguous copies
// --------------------------------------------------------------------------------------
void copy_case(Kind dk, Kind sk, int dev, int ddev, int sdev, size_t n, size_t doff, size_t soff,
               std::mt19937_64 &rng)
{
    SCOPED_TRACE(std::string(kind_name(sk)) + " -> " + kind_name(dk) + ", " + std::to_string(n) +
                 " bytes, offsets " + std::to_string(soff) + "/" + std::to_string(doff) + ", on GPU " +
                 std::to_string(dev));
    const size_t guard = 64;
    Buf src(sk, soff + n, sdev), dst(dk, doff + n + guard, ddev);
    std::vector<unsigned char> sv(src.n), dv(dst.n, kPoison);
    fill_random(sv, rng);
    src.put(sv);
    dst.put(dv);
    kyi_gpu_op_t *op = nullptr;
    ASSERT_EQ(kyi_gpu_copy_async(dev, dst.c() + doff, src.c() + soff, n, &op), KY_OK) << kyi_gpu_last_error();
    ASSERT_NE(op, nullptr);
    int t = kyi_gpu_op_test(op);
    EXPECT_TRUE(t == 0 || t == 1) << t;
    ASSERT_EQ(wait_free(op), KY_OK) << kyi_gpu_last_error();
    std::memcpy(&dv[doff], &sv[soff], n);
    EXPECT_TRUE(same_bytes(dst.get(), dv));
}

TEST(GpuService, CopyAllDirections)
{
    SKIP_WITHOUT_GPU();
    std::mt19937_64 rng(12345);
    const Kind kinds[] = {kDevice, kPageable, kPinned};
    for (Kind dk : kinds)
        for (Kind sk : kinds) {
            if (dk != kDevice && sk != kDevice && !(dk == kPinned && sk == kPinned)) continue;
            for (int it = 0; it < 6; it++) {
                size_t n = random_size(rng, (size_t)64 << 20);
                copy_case(dk, sk, 0, 0, 0, n, rng() % 64, rng() % 64, rng);
            }
        }
}

TEST(GpuService, CopySplitAcrossStreams)
{
    SKIP_WITHOUT_GPU();
    std::mt19937_64 rng(7);
    size_t split = kyi_setting_size(KYI_SET_GPU_SPLIT_MIN);
    // exactly the split threshold, just below, and 64 MiB + odd bytes at odd offsets
    copy_case(kDevice, kDevice, 0, 0, 0, split, 0, 0, rng);
    copy_case(kDevice, kDevice, 0, 0, 0, split - 1, 3, 1, rng);
    copy_case(kDevice, kDevice, 0, 0, 0, ((size_t)64 << 20) + 13, 7, 5, rng);
    copy_case(kPinned, kDevice, 0, 0, 0, ((size_t)64 << 20) - 3, 1, 9, rng);
    copy_case(kDevice, kPageable, 0, 0, 0, ((size_t)32 << 20) + 1, 2, 63, rng);
}

TEST(GpuService, ZeroBytesAndBlockingCopy)
{
    SKIP_WITHOUT_GPU();
    kyi_gpu_op_t *op = nullptr;
    ASSERT_EQ(kyi_gpu_copy_async(0, nullptr, nullptr, 0, &op), KY_OK) << kyi_gpu_last_error();
    EXPECT_EQ(kyi_gpu_op_test(op), 0);
    EXPECT_EQ(wait_free(op), KY_OK);
    Buf d(kDevice, 4096);
    std::vector<unsigned char> h(4096), back(4096);
    for (size_t i = 0; i < h.size(); i++) h[i] = (unsigned char)(i * 7 + 1);
    ASSERT_EQ(kyi_gpu_copy(0, d.p, h.data(), h.size()), KY_OK) << kyi_gpu_last_error();
    ASSERT_EQ(kyi_gpu_copy(0, back.data(), d.p, back.size()), KY_OK) << kyi_gpu_last_error();
    EXPECT_TRUE(same_bytes(back, h));
}

// ---- strided copies
// -----------------------------------------------------------------------------------------
struct StridedShape {
    int levels;
    size_t count[4];
    size_t ds[3], ss[3];
};

// A shape of `levels` levels with blocks of `block` bytes of elements of `elem` bytes; strides are whole
// elements with random odd gaps, so the widest element the kernel can use is `elem`.
StridedShape make_shape(int levels, size_t block, size_t elem, std::mt19937_64 &rng)
{
    StridedShape s{};
    s.levels = levels;
    s.count[0] = block;
    const size_t maxc[4] = {0, 37, 11, 5};
    for (int l = 1; l <= levels; l++) s.count[l] = 1 + rng() % maxc[l];
    for (int side = 0; side < 2; side++) {
        size_t *st = side ? s.ss : s.ds;
        size_t unit = block;
        for (int l = 0; l < levels; l++) {
            size_t gap = elem * (2 * (rng() % 3) + 1);  // odd number of elements
            st[l] = unit + gap;
            unit = st[l] * s.count[l + 1];
        }
    }
    return s;
}

void strided_case(const StridedShape &s, Kind dk, Kind sk, int dev, int ddev, int sdev, size_t doff,
                  size_t soff, std::mt19937_64 &rng)
{
    std::string desc = std::string(kind_name(sk)) + " -> " + kind_name(dk) + ", levels " +
                       std::to_string(s.levels) + ", count";
    for (int l = 0; l <= s.levels; l++) desc += " " + std::to_string(s.count[l]);
    desc += ", dst strides";
    for (int l = 0; l < s.levels; l++) desc += " " + std::to_string(s.ds[l]);
    desc += ", src strides";
    for (int l = 0; l < s.levels; l++) desc += " " + std::to_string(s.ss[l]);
    desc += ", offsets " + std::to_string(soff) + "/" + std::to_string(doff);
    SCOPED_TRACE(desc);
    const size_t guard = 32;
    Buf src(sk, soff + span_of(s.ss, s.count, s.levels), sdev);
    Buf dst(dk, doff + span_of(s.ds, s.count, s.levels) + guard, ddev);
    std::vector<unsigned char> sv(src.n), dv(dst.n, kPoison);
    fill_random(sv, rng);
    src.put(sv);
    dst.put(dv);
    kyi_gpu_op_t *op = nullptr;
    ASSERT_EQ(
        kyi_gpu_copy_strided_async(dev, dst.c() + doff, s.ds, src.c() + soff, s.ss, s.count, s.levels, &op),
        KY_OK)
        << kyi_gpu_last_error();
    ASSERT_EQ(wait_free(op), KY_OK) << kyi_gpu_last_error();
    ref_strided(&dv[doff], s.ds, &sv[soff], s.ss, s.count, s.levels);
    EXPECT_TRUE(same_bytes(dst.get(), dv));
}

// Kernel path: short blocks between GPU-accessible buffers (device and mapped pinned host memory).
TEST(GpuService, StridedKernelPath)
{
    SKIP_WITHOUT_GPU();
    std::mt19937_64 rng(99);
    size_t kmax = kyi_setting_size(KYI_SET_GPU_KERNEL_MAX_BLOCK);
    if (kmax < 8) GTEST_SKIP() << "KY_GPU_KERNEL_MAX_BLOCK=" << kmax << " leaves no room for the kernel path";
    if (kmax > 4096) kmax = 4096;  // keep the buffers small when the setting is raised
    const size_t elems[] = {1, 2, 4, 8};
    const std::pair<Kind, Kind> dirs[] = {{kDevice, kDevice}, {kDevice, kPinned}, {kPinned, kDevice}};
    for (int levels = 0; levels <= 3; levels++)
        for (size_t e : elems)
            for (auto dir : dirs)
                for (int it = 0; it < 3; it++) {
                    size_t nel = 1 + rng() % (kmax / e);
                    StridedShape s = make_shape(levels, nel * e, e, rng);
                    size_t doff = e * (rng() % 5), soff = e * (rng() % 5);
                    strided_case(s, dir.first, dir.second, 0, 0, 0, doff, soff, rng);
                }
}

// Copy-engine path: long blocks, and short blocks to or from pageable host memory.
TEST(GpuService, StridedCopyEnginePath)
{
    SKIP_WITHOUT_GPU();
    std::mt19937_64 rng(2024);
    size_t kmax = kyi_setting_size(KYI_SET_GPU_KERNEL_MAX_BLOCK);
    const size_t elems[] = {1, 2, 4, 8};
    const std::pair<Kind, Kind> dirs[] = {{kDevice, kDevice},
                                          {kDevice, kPageable},
                                          {kPageable, kDevice},
                                          {kPinned, kDevice},
                                          {kDevice, kPinned}};
    for (int levels = 0; levels <= 3; levels++)
        for (size_t e : elems)
            for (auto dir : dirs)
                for (int it = 0; it < 2; it++) {
                    size_t nel = kmax / e + 1 + rng() % 300;
                    StridedShape s = make_shape(levels, nel * e, e, rng);
                    strided_case(s, dir.first, dir.second, 0, 0, 0, rng() % 9, rng() % 9, rng);
                }
    // short blocks with a pageable side cannot use the kernel
    for (int levels = 1; levels <= 3; levels++) {
        StridedShape s = make_shape(levels, 3, 1, rng);
        strided_case(s, kDevice, kPageable, 0, 0, 0, 1, 2, rng);
        strided_case(s, kPageable, kDevice, 0, 0, 0, 3, 0, rng);
    }
}

// Shapes the implementation rewrites or treats specially.
TEST(GpuService, StridedSpecialShapes)
{
    SKIP_WITHOUT_GPU();
    std::mt19937_64 rng(5);
    size_t kmax = kyi_setting_size(KYI_SET_GPU_KERNEL_MAX_BLOCK);
    std::vector<StridedShape> shapes;
    // contiguous on both sides at every level: one plain copy
    shapes.push_back({2, {16, 4, 3, 1}, {16, 64, 0}, {16, 64, 0}});
    // contiguous on one side only (pack and unpack)
    shapes.push_back({2, {24, 5, 7, 1}, {24, 120, 0}, {40, 400, 0}});
    shapes.push_back({2, {24, 5, 7, 1}, {40, 400, 0}, {24, 120, 0}});
    // plane strides that are whole multiples of the row stride (3-D copy), long rows
    shapes.push_back(
        {2, {kmax + 64, 9, 6, 1}, {kmax + 128, (kmax + 128) * 11, 0}, {kmax + 96, (kmax + 96) * 9, 0}});
    shapes.push_back({3,
                      {kmax + 8, 3, 4, 5},
                      {kmax + 24, (kmax + 24) * 4, (kmax + 24) * 4 * 5},
                      {kmax + 8, (kmax + 8) * 3, (kmax + 8) * 3 * 4 + 5}});
    // levels of one block in the middle and at the top
    shapes.push_back({3, {8, 1, 6, 1}, {100, 30, 7}, {12, 13, 17}});
    shapes.push_back(
        {3, {kmax + 1, 7, 1, 3}, {kmax + 5, 999, (kmax + 5) * 7 + 3}, {kmax + 1, 1, (kmax + 1) * 7}});
    // overlapping source blocks (source stride smaller than the block): read the same bytes twice
    shapes.push_back({1, {kmax + 40, 6, 1, 1}, {kmax + 40, 0, 0}, {17, 0, 0}});
    shapes.push_back({1, {12, 6, 1, 1}, {12, 0, 0}, {5, 0, 0}});
    // zero blocks: nothing moves
    shapes.push_back({2, {8, 0, 3, 1}, {8, 8, 0}, {8, 8, 0}});
    const std::pair<Kind, Kind> dirs[] = {{kDevice, kDevice}, {kPageable, kDevice}, {kDevice, kPageable}};
    for (const auto &s : shapes)
        for (auto dir : dirs) strided_case(s, dir.first, dir.second, 0, 0, 0, 1, 3, rng);
}

// Large strided copies spread over the streams.
TEST(GpuService, StridedLarge)
{
    SKIP_WITHOUT_GPU();
    std::mt19937_64 rng(77);
    // a 256^3 double array: i-j face (8-byte blocks), i-k face (2 KiB blocks), and a 3-level sub-block
    const size_t N = 256, E = 8;
    StridedShape ij{1, {E, N * N, 1, 1}, {E, 0, 0}, {N * E, 0, 0}};
    StridedShape ik{1, {N * E, N, 1, 1}, {N * E, 0, 0}, {N * N * E, 0, 0}};
    StridedShape sub{3, {100 * E, 100, 50, 1}, {100 * E, 100 * 100 * E, 0}, {N * E, N * N * E, 0}};
    StridedShape big{2, {4096, 64, 64, 1}, {4096 + 512, (4096 + 512) * 64, 0}, {4096, 4096 * 64 + 4096, 0}};
    for (const auto &s : {ij, ik, sub, big}) {
        strided_case(s, kDevice, kDevice, 0, 0, 0, 0, 0, rng);
        strided_case(s, kPinned, kDevice, 0, 0, 0, 0, 8, rng);
    }
}

// ---- memset ---------------------------------------------------------------------------------------------
TEST(GpuService, Memset)
{
    SKIP_WITHOUT_GPU();
    std::mt19937_64 rng(3);
    for (Kind k : {kDevice, kPinned, kPageable})
        for (int it = 0; it < 8; it++) {
            size_t n = random_size(rng, (size_t)16 << 20), off = rng() % 64;
            SCOPED_TRACE(std::string(kind_name(k)) + ", " + std::to_string(n) + " bytes at " +
                         std::to_string(off));
            Buf b(k, off + n + 64);
            std::vector<unsigned char> v(b.n, kPoison);
            b.put(v);
            int byte = (int)(rng() % 256);
            kyi_gpu_op_t *op = nullptr;
            ASSERT_EQ(kyi_gpu_memset_async(0, b.c() + off, byte, n, &op), KY_OK) << kyi_gpu_last_error();
            ASSERT_EQ(wait_free(op), KY_OK) << kyi_gpu_last_error();
            std::memset(&v[off], byte, n);
            EXPECT_TRUE(same_bytes(b.get(), v));
        }
}

// ---- operations, threads, bad input ---------------------------------------------------------------------
TEST(GpuService, TestPollsToCompletion)
{
    SKIP_WITHOUT_GPU();
    Buf a(kDevice, (size_t)128 << 20), b(kDevice, (size_t)128 << 20);
    kyi_gpu_op_t *op = nullptr;
    ASSERT_EQ(kyi_gpu_copy_async(0, b.p, a.p, a.n, &op), KY_OK) << kyi_gpu_last_error();
    int t;
    long polls = 0;
    while ((t = kyi_gpu_op_test(op)) == 1) polls++;
    EXPECT_EQ(t, 0) << kyi_gpu_last_error();
    EXPECT_EQ(kyi_gpu_op_test(op), 0);
    EXPECT_EQ(kyi_gpu_op_wait(op), 0);
    kyi_gpu_op_free(op);
}

TEST(GpuService, ManyThreads)
{
    SKIP_WITHOUT_GPU();
    const int nthreads = 8;
    std::vector<std::thread> th;
    std::vector<int> failures(nthreads, 0);
    for (int t = 0; t < nthreads; t++)
        th.emplace_back([t, &failures] {
            std::mt19937_64 rng(1000 + t);
            for (int it = 0; it < 20; it++) {
                size_t n = random_size(rng, (size_t)4 << 20);
                std::vector<unsigned char> h(n), back(n);
                fill_random(h, rng);
                void *d = nullptr;
                if (kyi_gpu_malloc(0, n, &d)) {
                    failures[t]++;
                    continue;
                }
                kyi_gpu_op_t *op = nullptr;
                if (kyi_gpu_copy_async(0, d, h.data(), n, &op) || wait_free(op)) failures[t]++;
                size_t cnt[2] = {1, n}, one[1] = {1};
                if (kyi_gpu_copy_strided_async(0, back.data(), one, d, one, cnt, 1, &op) || wait_free(op))
                    failures[t]++;
                if (back != h) failures[t]++;
                kyi_gpu_free(d);
            }
        });
    for (auto &x : th) x.join();
    for (int t = 0; t < nthreads; t++) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(GpuService, BadArguments)
{
    SKIP_WITHOUT_GPU();
    Buf d(kDevice, 1024);
    kyi_gpu_op_t *op = nullptr;
    size_t cnt[5] = {8, 2, 2, 2, 2}, st[4] = {16, 64, 256, 1024};
    EXPECT_EQ(kyi_gpu_copy_strided_async(0, d.p, st, d.p, st, cnt, 4, &op), KY_ERR_ARG);
    EXPECT_EQ(kyi_gpu_copy_strided_async(0, d.p, st, d.p, st, cnt, -1, &op), KY_ERR_ARG);
    EXPECT_EQ(op, nullptr);
    EXPECT_EQ(kyi_gpu_copy_async(kyi_gpu_count(), d.p, d.p, 8, &op), KY_ERR_ARG);
    EXPECT_EQ(kyi_gpu_copy_async(-1, d.p, d.p, 8, &op), KY_ERR_ARG);
    EXPECT_EQ(kyi_gpu_copy_async(0, nullptr, d.p, 8, &op), KY_ERR_ARG);
    EXPECT_NE(std::string(kyi_gpu_last_error()), "");
    void *p = nullptr;
    EXPECT_EQ(kyi_gpu_malloc(kyi_gpu_count(), 16, &p), KY_ERR_ARG);
    // far more memory than any GPU has: out of memory, not a crash, and the context stays usable
    EXPECT_EQ(kyi_gpu_malloc(0, (size_t)1 << 50, &p), KY_ERR_NOMEM);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(kyi_gpu_memset_async(0, d.p, 1, d.n, &op), KY_OK);
    EXPECT_EQ(wait_free(op), KY_OK);
    EXPECT_EQ(kyi_gpu_ipc_close(d.p), KY_ERR_ARG);  // never opened
}

// ---- peers ----------------------------------------------------------------------------------------------
TEST(GpuService, PeerCopies)
{
    SKIP_WITHOUT_GPU();
    if (kyi_gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs, " << kyi_gpu_count() << " visible";
    std::mt19937_64 rng(11);
    bool peer = kyi_gpu_can_access_peer(0, 1) && kyi_gpu_can_access_peer(1, 0);
    if (peer) {
        EXPECT_EQ(kyi_gpu_enable_peer(0, 1), KY_OK) << kyi_gpu_last_error();
        EXPECT_EQ(kyi_gpu_enable_peer(0, 1), KY_OK) << "idempotent";
    }
    for (int dev = 0; dev < 2; dev++)
        for (int it = 0; it < 4; it++) {
            size_t n = random_size(rng, (size_t)64 << 20);
            copy_case(kDevice, kDevice, dev, 1, 0, n, rng() % 64, rng() % 64, rng);
            copy_case(kDevice, kDevice, dev, 0, 1, n, rng() % 64, rng() % 64, rng);
        }
    size_t kmax = kyi_setting_size(KYI_SET_GPU_KERNEL_MAX_BLOCK);
    for (int levels = 1; levels <= 3; levels++)
        for (size_t e : {1, 8}) {
            StridedShape shortb = make_shape(levels, e * 3, e, rng);  // kernel writing into the peer
            StridedShape longb = make_shape(levels, kmax + e * 5, e, rng);
            for (int dev = 0; dev < 2; dev++) {
                strided_case(shortb, kDevice, kDevice, dev, 1, 0, 0, e, rng);
                strided_case(longb, kDevice, kDevice, dev, 0, 1, e, 0, rng);
            }
        }
    // memset of a peer's memory from the other device
    Buf b(kDevice, 1 << 20, 1);
    kyi_gpu_op_t *op = nullptr;
    ASSERT_EQ(kyi_gpu_memset_async(0, b.p, 0x3C, b.n, &op), KY_OK) << kyi_gpu_last_error();
    ASSERT_EQ(wait_free(op), KY_OK);
    EXPECT_TRUE(same_bytes(b.get(), std::vector<unsigned char>(b.n, 0x3C)));
}

}  // namespace
