/* The plan cache (seed 004's descriptor cache): a repeated identical strided or vector transfer is replayed
 * from a plan (plan_hits grows, plan_misses does not), stays correct when the data changes, and plans die
 * with their segment: a new segment (which may reuse the old one's id and addresses) gets fresh plans and
 * correct results. */
#include "kyt.h"

namespace {

class Plan : public kyt::MemkindTest {
  protected:
    /* a 2-level strided put of a 4x5 block of 24 bytes from a 64-byte-pitch local array */
    size_t count[3] = {24, 5, 4};
    size_t rstride[2] = {40, 40 * 5 + 16};
    size_t lstride[2] = {64, 64 * 5};

    size_t rextent() const { return count[0] + rstride[0] * (count[1] - 1) + rstride[1] * (count[2] - 1); }
    void *lb = nullptr;
    void TearDown() override { kyt::mem_free(kind, lb); }
    size_t lextent() const { return count[0] + lstride[0] * (count[1] - 1) + lstride[1] * (count[2] - 1); }

    /* put from rank me into slot me of every rank with fill value v; returns local ok after checking the
     * targets' views */
    bool put_round(ky_seg_t seg, size_t slot, uint8_t v)
    {
        int me = ky_rank(), n = ky_nranks();
        std::vector<uint8_t> src(lextent(), 0);
        for (size_t k = 0; k < count[2]; k++)
            for (size_t j = 0; j < count[1]; j++) memset(&src[k * lstride[1] + j * lstride[0]], v, count[0]);
        /* the same local buffer every time: a plan is keyed on peers, shape and buffers */
        if (!lb) lb = kyt::mem_alloc(kind, src.size());
        kyt::mem_write(kind, lb, src.data(), src.size());
        bool ok = true;
        for (int t = 0; t < n; t++) {
            int st = ky_put_strided(t, seg, me * slot + 8, rstride, lb, lstride, count, 2);
            if (st != KY_OK) {
                ok = false;
                ADD_FAILURE() << ky_last_error();
            }
        }
        KYT_EXPECT_OK(ky_comm_barrier());
        void *base;
        size_t bytes;
        ky_seg_local(seg, &base, &bytes);
        std::vector<uint8_t> view = kyt::local_view(seg, kind, 0, bytes);
        for (int s = 0; s < n; s++)
            for (size_t k = 0; k < count[2]; k++)
                for (size_t j = 0; j < count[1]; j++) {
                    const uint8_t *p = &view[s * slot + 8 + k * rstride[1] + j * rstride[0]];
                    if (kyt::check_byte(p, count[0], v) != count[0]) ok = false;
                }
        if (!ok) ADD_FAILURE() << "strided put with value " << (int)v << " wrong";
        KYT_EXPECT_OK(ky_comm_barrier());
        return ok;
    }
};

TEST_P(Plan, RepeatedStridedPutHitsTheCache)
{
    if (kyt::config("KY_PLAN_CACHE") == "0") GTEST_SKIP() << "KY_PLAN_CACHE=0";
    const size_t slot = 4096;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * ky_nranks(), kind, device(), &seg));
    KYT_EXPECT_OK(ky_comm_barrier());
    bool ok = put_round(seg, slot, 1);
    ky_comm_stats_t a = kyt::stats();
    const int reps = 5;
    for (int r = 0; r < reps; r++) ok &= put_round(seg, slot, (uint8_t)(2 + r));
    ky_comm_stats_t b = kyt::stats();
    /* every one of the reps * nranks repeats is a hit (local ones too, or at least the remote ones) */
    int remote = 0;
    for (int t = 0; t < ky_nranks(); t++)
        if (t != ky_rank()) remote++;
    EXPECT_GE(b.plan_hits - a.plan_hits, (uint64_t)reps * remote)
        << "repeated strided put did not hit the plan cache";
    EXPECT_EQ(0u, b.plan_misses - a.plan_misses) << "a repeat was planned again";
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(seg));

    /* a new segment of the same size (likely the same id and even the same addresses): the first transfer
     * is a miss, not a stale hit, and the result is right */
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * ky_nranks(), kind, device(), &seg));
    void *base;
    size_t bytes;
    ky_seg_local(seg, &base, &bytes);
    kyt::mem_set(kind, base, 0, bytes);
    KYT_EXPECT_OK(ky_comm_barrier());
    ky_comm_stats_t c = kyt::stats();
    ok = put_round(seg, slot, 0x77);
    ky_comm_stats_t d = kyt::stats();
    EXPECT_GE(d.plan_misses - c.plan_misses, (uint64_t)remote)
        << "the new segment reused plans of the old one";
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Plan, DifferentSegmentSameShapeDoesNotShareAPlan)
{
    if (kyt::config("KY_PLAN_CACHE") == "0") GTEST_SKIP() << "KY_PLAN_CACHE=0";
    const size_t slot = 4096;
    ky_seg_t s1, s2;
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * ky_nranks(), kind, device(), &s1));
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * ky_nranks() + 64, kind, device(), &s2));
    KYT_EXPECT_OK(ky_comm_barrier());
    bool ok =
        put_round(s1, slot, 5) && put_round(s2, slot, 6) && put_round(s1, slot, 7) && put_round(s2, slot, 8);
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(s1));
    KYT_EXPECT_OK(ky_seg_destroy(s2));
}

TEST_P(Plan, RepeatedVectorStaysCorrect)
{
    int me = ky_rank(), n = ky_nranks();
    const size_t slot = 8192;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * n, kind, device(), &seg));
    KYT_EXPECT_OK(ky_comm_barrier());
    size_t offs[3], lens[3] = {100, 1, 3000};
    std::vector<uint8_t> buf(4000);
    const void *srcs[3] = {buf.data(), buf.data() + 500, buf.data() + 900};
    bool ok = true;
    for (int r = 0; r < 6; r++) {
        std::fill(buf.begin(), buf.end(), (uint8_t)(r + 1));
        for (int t = 0; t < n; t++) {
            offs[0] = me * slot + 3;
            offs[1] = me * slot + 200;
            offs[2] = me * slot + 1000;
            KYT_EXPECT_OK(ky_putv(t, seg, 3, offs, srcs, lens));
        }
        KYT_EXPECT_OK(ky_comm_barrier());
        for (int s = 0; s < n; s++) {
            std::vector<uint8_t> v = kyt::local_view(seg, kind, s * slot, slot);
            if (kyt::check_byte(&v[3], 100, (uint8_t)(r + 1)) != 100 || v[200] != (uint8_t)(r + 1) ||
                kyt::check_byte(&v[1000], 3000, (uint8_t)(r + 1)) != 3000)
                ok = false;
        }
        KYT_EXPECT_OK(ky_comm_barrier());
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

INSTANTIATE_TEST_SUITE_P(Mem, Plan, ::testing::ValuesIn(kyt::memkinds()), kyt::MemkindName());

}  // namespace
