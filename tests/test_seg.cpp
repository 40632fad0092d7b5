/* Segments: collective create/destroy of host (and GPU) segments allocated by Kyoyu or given by the user,
 * sizes that differ per rank (0 included), seg_local / seg_size, and many segments alive at once. */
#include "kyt.h"

class Seg : public kyt::MemkindTest {};

TEST_P(Seg, CreateDestroyKyoyuAllocated)
{
    ky_seg_t seg = nullptr;
    size_t n = 4096 + 17;
    KYT_EXPECT_OK(ky_seg_create(nullptr, n, kind, device(), &seg));
    EXPECT_NE(nullptr, seg);
    void *base = nullptr;
    size_t bytes = 0;
    KYT_EXPECT_OK(ky_seg_local(seg, &base, &bytes));
    EXPECT_NE(nullptr, base);
    EXPECT_EQ(n, bytes);
    for (int r = 0; r < ky_nranks(); r++) {
        size_t b = 0;
        KYT_EXPECT_OK(ky_seg_size(seg, r, &b));
        EXPECT_EQ(n, b);
    }
    /* the local piece is usable memory */
    std::vector<uint8_t> pat(n), back(n);
    kyt::fill_pattern(pat.data(), n, 7);
    kyt::mem_write(kind, base, pat.data(), n);
    kyt::mem_read(kind, back.data(), base, n);
    EXPECT_EQ(pat, back);
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Seg, UserBase)
{
    size_t n = 1000 + 8 * ky_rank();
    void *mine = kyt::mem_alloc(kind, n);
    ASSERT_NE(nullptr, mine);
    ky_seg_t seg = nullptr;
    KYT_EXPECT_OK(ky_seg_create(mine, n, kind, device(), &seg));
    void *base = nullptr;
    size_t bytes = 0;
    KYT_EXPECT_OK(ky_seg_local(seg, &base, &bytes));
    EXPECT_EQ(mine, base);
    EXPECT_EQ(n, bytes);
    for (int r = 0; r < ky_nranks(); r++) {
        size_t b = 0;
        KYT_EXPECT_OK(ky_seg_size(seg, r, &b));
        EXPECT_EQ(1000 + 8 * (size_t)r, b);
    }
    /* a put from every rank lands in the user's memory */
    uint64_t v = 0x1122334455667700ull | (uint64_t)ky_rank();
    for (int r = 0; r < ky_nranks(); r++) KYT_EXPECT_OK(ky_put_val(r, seg, 8 * (size_t)ky_rank(), v, 8));
    KYT_EXPECT_OK(ky_comm_barrier());
    std::vector<uint64_t> got(ky_nranks());
    kyt::mem_read(kind, got.data(), mine, 8 * got.size());
    for (int r = 0; r < ky_nranks(); r++)
        EXPECT_EQ(0x1122334455667700ull | (uint64_t)r, got[r]) << "from " << r;
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
    /* the user's memory survives destroy */
    kyt::mem_read(kind, got.data(), mine, 8);
    EXPECT_EQ(0x1122334455667700ull, got[0]);
    kyt::mem_free(kind, mine);
}

TEST_P(Seg, DifferentSizesIncludingZero)
{
    /* rank r contributes r * 1000 + (r % 2) bytes: rank 0 contributes nothing */
    auto size_of = [](int r) { return (size_t)r * 1000 + (size_t)(r % 2); };
    ky_seg_t seg = nullptr;
    KYT_EXPECT_OK(ky_seg_create(nullptr, size_of(ky_rank()), kind, device(), &seg));
    void *base = nullptr;
    size_t bytes = 12345;
    KYT_EXPECT_OK(ky_seg_local(seg, &base, &bytes));
    EXPECT_EQ(size_of(ky_rank()), bytes);
    for (int r = 0; r < ky_nranks(); r++) {
        size_t b = 0;
        KYT_EXPECT_OK(ky_seg_size(seg, r, &b));
        EXPECT_EQ(size_of(r), b) << "rank " << r;
    }
    /* write the last byte of every non-empty piece; a zero-size piece takes nothing */
    for (int r = 0; r < ky_nranks(); r++) {
        size_t sz = size_of(r);
        if (sz == 0) {
            uint8_t x = 1;
            KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_put(r, seg, 0, &x, 1));
            KYT_EXPECT_OK(ky_put(r, seg, 0, &x, 0)); /* zero bytes at offset 0 of an empty piece */
            continue;
        }
        if (r == ky_rank()) KYT_EXPECT_OK(ky_put_val(r, seg, sz - 1, 0xA0 + r, 1));
    }
    KYT_EXPECT_OK(ky_comm_barrier());
    for (int r = 0; r < ky_nranks(); r++) {
        size_t sz = size_of(r);
        if (!sz) continue;
        uint64_t v = 0;
        KYT_EXPECT_OK(ky_get_val(r, seg, sz - 1, 1, &v));
        EXPECT_EQ((uint64_t)(0xA0 + r), v) << "rank " << r;
    }
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Seg, ZeroEverywhere)
{
    ky_seg_t seg = nullptr;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 0, kind, device(), &seg));
    size_t b = 1;
    KYT_EXPECT_OK(ky_seg_size(seg, 0, &b));
    EXPECT_EQ(0u, b);
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Seg, ManySegments)
{
    const int nseg = kind == KY_MEM_GPU ? 16 : kyt::scaled(64, 8);
    std::vector<ky_seg_t> segs(nseg, nullptr);
    for (int i = 0; i < nseg; i++)
        KYT_EXPECT_OK(ky_seg_create(nullptr, 64 + 8 * i, kind, device(), &segs[i]));
    /* handles are distinct */
    std::vector<ky_seg_t> sorted = segs;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted.end(), std::adjacent_find(sorted.begin(), sorted.end()));
    /* every segment reachable from every rank; each rank writes its slot in segment i of rank (me+i)%n */
    int me = ky_rank(), n = ky_nranks();
    for (int i = 0; i < nseg; i++)
        KYT_EXPECT_OK(ky_put_val((me + i) % n, segs[i], 8 * (size_t)(me % 8), kyt::mix(i, me), 8));
    KYT_EXPECT_OK(ky_comm_barrier());
    for (int i = 0; i < nseg; i++) {
        int writer = ((me - i) % n + n) % n;
        uint64_t v = 0;
        std::vector<uint8_t> lv = kyt::local_view(segs[i], kind, 8 * (size_t)(writer % 8), 8);
        memcpy(&v, lv.data(), 8);
        EXPECT_EQ(kyt::mix(i, writer), v) << "segment " << i << " writer " << writer;
    }
    KYT_EXPECT_OK(ky_comm_barrier());
    /* destroy in a different order than created: odd first, then even */
    for (int i = 1; i < nseg; i += 2) KYT_EXPECT_OK(ky_seg_destroy(segs[i]));
    for (int i = 0; i < nseg; i += 2) KYT_EXPECT_OK(ky_seg_destroy(segs[i]));
}

TEST_P(Seg, CreateDestroyRepeatedly)
{
    /* ids and shared-memory names are recycled correctly */
    int rounds = kyt::scaled(50, 10);
    bool ok = true;
    for (int i = 0; i < rounds; i++) {
        ky_seg_t seg = nullptr;
        int st = ky_seg_create(nullptr, 128, kind, device(), &seg);
        if (st != KY_OK) {
            ok = false;
            ADD_FAILURE() << "round " << i << ": " << ky_last_error();
            break;
        }
        int peer = (ky_rank() + 1) % ky_nranks();
        ky_put_val(peer, seg, 0, (uint64_t)i, 8);
        ky_comm_barrier();
        uint64_t v = ~0ull;
        std::vector<uint8_t> lv = kyt::local_view(seg, kind, 0, 8);
        memcpy(&v, lv.data(), 8);
        if (v != (uint64_t)i) {
            ok = false;
            ADD_FAILURE() << "round " << i << ": read " << v;
        }
        ky_seg_destroy(seg);
    }
    EXPECT_TRUE(kyt::all(ok));
}

TEST_P(Seg, BadArgs)
{
    ky_seg_t seg = nullptr;
    /* these fail locally without entering the collective; same on every rank */
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_seg_create(nullptr, 64, kind, device(), nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_seg_create(nullptr, 64, (ky_memkind_t)7, 0, &seg));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_seg_create(nullptr, (size_t)-5, kind, device(), &seg));
    KYT_EXPECT_OK(ky_seg_create(nullptr, 64, kind, device(), &seg));
    void *b;
    size_t n;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_seg_local(nullptr, &b, &n));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_seg_size(seg, -1, &n));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_seg_size(seg, ky_nranks(), &n));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_seg_size(seg, 0, nullptr));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_seg_destroy(nullptr));
}

INSTANTIATE_TEST_SUITE_P(Mem, Seg, ::testing::ValuesIn(kyt::memkinds()), kyt::MemkindName());

TEST(SegHost, CreateWithoutCudaForGpuIsUnsupported)
{
    if (ky_ngpus() > 0) GTEST_SKIP() << "this rank has GPUs";
    /* all ranks agree on ky_ngpus()==0 on a CPU machine, so all take the same branch */
    ky_seg_t seg = nullptr;
    int st = ky_seg_create(nullptr, 64, KY_MEM_GPU, 0, &seg);
    EXPECT_TRUE(st == KY_ERR_UNSUPPORTED || st == KY_ERR_CUDA || st == KY_ERR_ARG)
        << st << " " << ky_last_error();
    EXPECT_TRUE(kyt::all(st != KY_OK));
}
