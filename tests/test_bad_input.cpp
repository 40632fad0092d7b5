/* Bad input: out-of-segment accesses fail with KY_ERR_RANGE on the initiator and leave the target's bytes
 * untouched; offset+size overflow; unregistered or out-of-range handler indices; null pointers; sizes that
 * look negative; bad ranks; too many strided levels. Every call here fails locally or is refused by the
 * target; no rank is left waiting. */
#include "kyt.h"

namespace {

void h_noop(ky_am_token_t, void *, size_t, const uint64_t *, int) {}

class BadInput : public kyt::MemkindTest {
  protected:
    ky_seg_t seg = nullptr;
    const size_t kBytes = 4096;
    void SetUp() override
    {
        kyt::MemkindTest::SetUp();
        if (IsSkipped()) return;
        KYT_EXPECT_OK(ky_seg_create(nullptr, kBytes, kind, device(), &seg));
        void *base;
        size_t bytes;
        ky_seg_local(seg, &base, &bytes);
        kyt::mem_set(kind, base, 0x3C, bytes);
        KYT_EXPECT_OK(ky_comm_barrier());
    }
    void TearDown() override
    {
        if (IsSkipped()) return;
        KYT_EXPECT_OK(ky_comm_barrier());
        /* nobody's bytes changed */
        std::vector<uint8_t> v = kyt::local_view(seg, kind, 0, kBytes);
        EXPECT_EQ(kBytes, kyt::check_byte(v.data(), kBytes, 0x3C)) << "a refused access changed the target";
        KYT_EXPECT_OK(ky_comm_barrier());
        KYT_EXPECT_OK(ky_seg_destroy(seg));
    }
};

TEST_P(BadInput, OutOfSegmentRange)
{
    std::vector<uint8_t> buf(2 * kBytes, 0x11);
    for (int t = 0; t < ky_nranks(); t++) {
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_put(t, seg, kBytes - 10, buf.data(), 11));
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_put(t, seg, kBytes, buf.data(), 1));
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_put(t, seg, 0, buf.data(), kBytes + 1));
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_get(buf.data(), t, seg, kBytes - 1, 2));
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_memset(t, seg, kBytes - 3, 0, 4));
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_put_val(t, seg, kBytes - 4, 1, 8));
        uint64_t v;
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_get_val(t, seg, kBytes - 7, 8, &v));
        /* non-blocking: the error comes from the call or from the wait */
        ky_handle_t h = nullptr;
        int st = ky_put_nb(t, seg, kBytes - 1, buf.data(), 2, &h);
        if (st == KY_OK) st = ky_wait(h);
        EXPECT_EQ(KY_ERR_RANGE, st) << ky_last_error();
        h = nullptr;
        st = ky_get_nb(buf.data(), t, seg, kBytes + 100, 1, &h);
        if (st == KY_OK) st = ky_wait(h);
        EXPECT_EQ(KY_ERR_RANGE, st) << ky_last_error();
        /* strided whose last block sticks out */
        size_t count[2] = {100, 5}, stride[1] = {1000};
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_put_strided(t, seg, 0, stride, buf.data(), stride, count, 1));
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_get_strided(buf.data(), stride, t, seg, 0, stride, count, 1));
        /* vector with one bad piece among good ones: refused as a whole */
        size_t offs[3] = {0, 100, kBytes - 1}, lens[3] = {10, 10, 2};
        const void *srcs[3] = {buf.data(), buf.data(), buf.data()};
        void *dsts[3] = {buf.data(), buf.data() + 100, buf.data() + 200};
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_putv(t, seg, 3, offs, srcs, lens));
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_getv(dsts, t, seg, 3, offs, lens));
        /* the message names the call */
        ky_put(t, seg, kBytes, buf.data(), 1);
        EXPECT_NE(std::string::npos, std::string(ky_last_error()).find("ky_put")) << ky_last_error();
    }
}

TEST_P(BadInput, OffsetPlusSizeOverflows)
{
    uint8_t b[16] = {0};
    int t = (ky_rank() + 1) % ky_nranks();
    size_t huge = SIZE_MAX - 4;
    int st = ky_put(t, seg, huge, b, 8);
    EXPECT_TRUE(st == KY_ERR_RANGE || st == KY_ERR_ARG) << st << " " << ky_last_error();
    st = ky_get(b, t, seg, 8, SIZE_MAX - 4);
    EXPECT_TRUE(st == KY_ERR_RANGE || st == KY_ERR_ARG) << st << " " << ky_last_error();
    st = ky_put(t, seg, (size_t)1 << 62, b, (size_t)1 << 62);
    EXPECT_TRUE(st == KY_ERR_RANGE || st == KY_ERR_ARG) << st << " " << ky_last_error();
    /* off + n wraps to a small number */
    st = ky_put(t, seg, SIZE_MAX - 2, b, 8);
    EXPECT_TRUE(st == KY_ERR_RANGE || st == KY_ERR_ARG) << st << " " << ky_last_error();
    st = ky_memset(t, seg, 16, 0, SIZE_MAX - 10);
    EXPECT_TRUE(st == KY_ERR_RANGE || st == KY_ERR_ARG) << st << " " << ky_last_error();
}

TEST_P(BadInput, SizeThatLooksNegative)
{
    uint8_t b[16] = {0};
    int t = (ky_rank() + 1) % ky_nranks();
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put(t, seg, 0, b, (size_t)-5));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get(b, t, seg, 0, (size_t)-5));
    ky_handle_t h = nullptr;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_nb(t, seg, 0, b, (size_t)-1, &h));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_memset(t, seg, 0, 0, (size_t)-5));
    KYT_EXPECT_OK(ky_am_register(44, h_noop));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_medium(t, 44, b, (size_t)-5, nullptr, 0));
    KYT_EXPECT_OK(ky_am_register(44, nullptr));
}

TEST_P(BadInput, BadRank)
{
    uint8_t b[16] = {0};
    uint64_t v;
    ky_handle_t h = nullptr;
    for (int r : {-1, ky_nranks(), 1 << 20}) {
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put(r, seg, 0, b, 1));
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get(b, r, seg, 0, 1));
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_nb(r, seg, 0, b, 1, &h));
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get_nb(b, r, seg, 0, 1, &h));
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_val(r, seg, 0, 1, 1));
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get_val(r, seg, 0, 1, &v));
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_memset(r, seg, 0, 0, 1));
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_short(r, 1, nullptr, 0));
        ky_path_t p;
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_comm_path(r, seg, b, &p));
    }
    /* fence takes -1 (all ranks) but nothing else out of range */
    KYT_EXPECT_OK(ky_fence(-1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_fence(-2));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_fence(ky_nranks()));
}

TEST_P(BadInput, NullPointers)
{
    uint8_t b[16] = {0};
    int t = (ky_rank() + 1) % ky_nranks();
    ky_handle_t h;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put(t, seg, 0, nullptr, 8));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get(nullptr, t, seg, 0, 8));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put(t, nullptr, 0, b, 8));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get(b, t, nullptr, 0, 8));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_nb(t, seg, 0, b, 8, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get_nb(b, t, seg, 0, 8, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_nb(t, seg, 0, nullptr, 8, &h));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get_val(t, seg, 0, 8, nullptr));
    size_t count[2] = {4, 2}, stride[1] = {8};
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_strided(t, seg, 0, nullptr, b, stride, count, 1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_strided(t, seg, 0, stride, nullptr, stride, count, 1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_strided(t, seg, 0, stride, b, stride, nullptr, 1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get_strided(nullptr, stride, t, seg, 0, stride, count, 1));
    size_t off[1] = {0}, len[1] = {4};
    const void *srcs[1] = {nullptr};
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_putv(t, seg, 1, nullptr, srcs, len));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_putv(t, seg, 1, off, srcs, len));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_getv(nullptr, t, seg, 1, off, len));
    KYT_EXPECT_OK(ky_am_register(44, h_noop));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_medium(t, 44, nullptr, 8, nullptr, 0));
    KYT_EXPECT_OK(ky_am_register(44, nullptr));
    uint64_t a[2] = {1, 2};
    (void)a;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_source(nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_reply_short(nullptr, 1, nullptr, 0));
    KYT_EXPECT_OK(ky_wait(nullptr)); /* a NULL handle is complete */
    KYT_EXPECT_OK(ky_test(nullptr));
}

TEST_P(BadInput, Handlers)
{
    int t = (ky_rank() + 1) % ky_nranks();
    uint8_t b[8] = {0};
    KYT_EXPECT_OK(ky_am_register(42, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_NO_HANDLER, ky_am_short(t, 42, nullptr, 0));
    KYT_EXPECT_STATUS(KY_ERR_NO_HANDLER, ky_am_medium(t, 42, b, 8, nullptr, 0));
    KYT_EXPECT_STATUS(KY_ERR_NO_HANDLER, ky_am_long(t, 42, b, 8, seg, 0, nullptr, 0));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_short(t, KY_AM_MAX_HANDLERS, nullptr, 0));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_short(t, -1, nullptr, 0));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_register(KY_AM_MAX_HANDLERS, h_noop));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_register(-1, h_noop));
    /* argument counts */
    KYT_EXPECT_OK(ky_am_register(43, h_noop));
    uint64_t args[KY_AM_MAX_ARGS + 1] = {0};
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_short(t, 43, args, KY_AM_MAX_ARGS + 1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_short(t, 43, args, -1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_short(t, 43, nullptr, 2));
    /* medium over the limit; long outside the segment */
    std::vector<uint8_t> big(ky_am_max_medium() + 1);
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_medium(t, 43, big.data(), big.size(), nullptr, 0));
    KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_am_long(t, 43, b, 8, seg, kBytes - 4, nullptr, 0));
    /* replies outside a handler */
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_reply_medium(nullptr, 43, b, 8, nullptr, 0));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_am_reply_long(nullptr, 43, b, 8, seg, 0, nullptr, 0));
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_am_register(43, nullptr));
}

TEST_P(BadInput, StridedLevelsAndValues)
{
    uint8_t b[64] = {0};
    int t = (ky_rank() + 1) % ky_nranks();
    size_t count[5] = {1, 1, 1, 1, 1}, stride[4] = {1, 1, 1, 1};
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_strided(t, seg, 0, stride, b, stride, count, 4));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get_strided(b, stride, t, seg, 0, stride, count, 4));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_strided(t, seg, 0, stride, b, stride, count, -1));
    ky_handle_t h;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_strided_nb(t, seg, 0, stride, b, stride, count, 4, &h));
    /* put_val / get_val widths */
    uint64_t v;
    for (size_t w : {0, 3, 5, 16}) {
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_put_val(t, seg, 0, 1, w));
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get_val(t, seg, 0, w, &v));
    }
}

INSTANTIATE_TEST_SUITE_P(Mem, BadInput, ::testing::ValuesIn(kyt::memkinds()), kyt::MemkindName());

}  // namespace
