/* Strided (levels 0..3, random shapes and strides) and vector (putv/getv) transfers, every rank to every
 * rank, checked against a reference packing routine written here, independently of Kyoyu's. */
#include "kyt.h"

namespace {

/* A strided shape on both sides: count[0..levels], remote and local strides (GASNet VIS convention). */
struct Shape {
    int levels = 0;
    size_t count[4] = {1, 1, 1, 1};
    size_t rstride[3] = {0, 0, 0};  /* remote (segment) side */
    size_t lstride[3] = {0, 0, 0};  /* local side of the put */
    size_t lstride2[3] = {0, 0, 0}; /* local side of the get back */
    size_t off = 0;
    uint64_t salt = 0;
};

size_t extent(const size_t stride[], const size_t count[], int levels)
{
    size_t e = count[0];
    for (int i = 0; i < levels; i++) e += stride[i] * (count[i + 1] - 1);
    return e;
}

/* Reference: visit every contiguous block in order, calling f(byte offset of the block, index of its first
 * byte in the packed stream). */
void for_blocks(const size_t stride[], const size_t count[], int levels,
                const std::function<void(size_t, size_t)> &f)
{
    size_t c1 = levels >= 1 ? count[1] : 1, c2 = levels >= 2 ? count[2] : 1, c3 = levels >= 3 ? count[3] : 1;
    size_t s0 = levels >= 1 ? stride[0] : 0, s1 = levels >= 2 ? stride[1] : 0,
           s2 = levels >= 3 ? stride[2] : 0;
    size_t packed = 0;
    for (size_t k = 0; k < c3; k++)
        for (size_t j = 0; j < c2; j++)
            for (size_t i = 0; i < c1; i++) {
                f(k * s2 + j * s1 + i * s0, packed);
                packed += count[0];
            }
}
std::vector<uint8_t> pack(const uint8_t *base, const size_t stride[], const size_t count[], int levels)
{
    size_t total = count[0];
    for (int i = 1; i <= levels; i++) total *= count[i];
    std::vector<uint8_t> out(total);
    for_blocks(stride, count, levels, [&](size_t o, size_t p) { memcpy(&out[p], base + o, count[0]); });
    return out;
}
void unpack(uint8_t *base, const size_t stride[], const size_t count[], int levels,
            const std::vector<uint8_t> &in)
{
    for_blocks(stride, count, levels, [&](size_t o, size_t p) { memcpy(base + o, &in[p], count[0]); });
}

/* Random non-overlapping strides: each level's stride covers the level below plus a random gap. */
void random_strides(std::mt19937_64 &g, const size_t count[], int levels, size_t out[])
{
    size_t below = count[0];
    for (int i = 0; i < levels; i++) {
        out[i] = below + g() % 24;
        below = out[i] * count[i + 1];
    }
}

Shape random_shape(uint64_t key, int levels)
{
    std::mt19937_64 g(key);
    Shape s;
    s.levels = levels;
    /* blocks from 1 byte to 4 KiB, small level counts so the total stays modest */
    s.count[0] = kyt::log_uniform(g, 1, levels == 0 ? 100000 : (levels == 3 ? 256 : 4096));
    for (int i = 1; i <= levels; i++) s.count[i] = 1 + g() % (levels == 3 ? 5 : (levels == 2 ? 9 : 33));
    random_strides(g, s.count, levels, s.rstride);
    random_strides(g, s.count, levels, s.lstride);
    random_strides(g, s.count, levels, s.lstride2);
    s.off = g() % 61;
    s.salt = g();
    return s;
}

class Strided : public kyt::MemkindTest {
  protected:
    const size_t slot = 1200000;

    /* One all-to-all round: put strided into slot `me` of every rank, check the targets' views against
     * the reference, get strided back and check. Returns local ok. */
    bool round(ky_seg_t seg, int rnd, int levels, bool nb, bool gpu_local)
    {
        int me = ky_rank(), n = ky_nranks();
        int lkind = gpu_local ? KY_MEM_GPU : KY_MEM_HOST;
        bool ok = true;
        uint8_t fill = (uint8_t)(0x31 + rnd);
        uint64_t sd = kyt::seed();
        auto shape_of = [&](int s, int d) { return random_shape(kyt::mix(sd, rnd, s, d), levels); };
        void *base;
        size_t bytes;
        ky_seg_local(seg, &base, &bytes);
        kyt::mem_set(kind, base, fill, bytes);
        KYT_EXPECT_OK(ky_comm_barrier());

        std::vector<void *> bufs(n);
        std::vector<ky_handle_t> hs(n, nullptr);
        for (int i = 0; i < n; i++) {
            int t = (me + i) % n;
            Shape s = shape_of(me, t);
            size_t le = extent(s.lstride, s.count, levels);
            std::vector<uint8_t> h(le);
            kyt::fill_pattern(h.data(), le, s.salt);
            bufs[t] = kyt::mem_alloc(lkind, le);
            kyt::mem_write(lkind, bufs[t], h.data(), le);
            size_t off = (size_t)me * slot + s.off;
            int st =
                nb ? ky_put_strided_nb(t, seg, off, s.rstride, bufs[t], s.lstride, s.count, levels, &hs[t])
                   : ky_put_strided(t, seg, off, s.rstride, bufs[t], s.lstride, s.count, levels);
            if (st != KY_OK) {
                ok = false;
                ADD_FAILURE() << "put_strided levels " << levels << " to " << t << ": " << ky_last_error();
            }
        }
        if (nb) KYT_EXPECT_OK(ky_wait_all(hs.data(), hs.size()));
        for (auto p : bufs) kyt::mem_free(lkind, p);
        KYT_EXPECT_OK(ky_comm_barrier());

        /* the target's view against the reference */
        std::vector<uint8_t> view = kyt::local_view(seg, kind, 0, bytes);
        for (int src = 0; src < n; src++) {
            Shape s = shape_of(src, me);
            size_t le = extent(s.lstride, s.count, levels);
            std::vector<uint8_t> h(le);
            kyt::fill_pattern(h.data(), le, s.salt);
            std::vector<uint8_t> want(slot, fill);
            unpack(want.data() + s.off, s.rstride, s.count, levels,
                   pack(h.data(), s.lstride, s.count, levels));
            if (memcmp(want.data(), view.data() + (size_t)src * slot, slot) != 0) {
                size_t i = 0;
                while (want[i] == view[(size_t)src * slot + i]) i++;
                ok = false;
                ADD_FAILURE() << "round " << rnd << " levels " << levels << ": strided put from " << src
                              << " to " << me << " differs from the reference at slot byte " << i
                              << " (count " << s.count[0] << "," << s.count[1] << "," << s.count[2] << ","
                              << s.count[3] << " rstride " << s.rstride[0] << "," << s.rstride[1] << ","
                              << s.rstride[2] << ")";
            }
        }

        /* get back with other local strides */
        for (int i = 0; i < n; i++) {
            int t = (me + n - i) % n;
            Shape s = shape_of(me, t);
            size_t le2 = extent(s.lstride2, s.count, levels);
            bufs[t] = kyt::mem_alloc(lkind, le2);
            kyt::mem_set(lkind, bufs[t], 0xEE, le2);
            size_t off = (size_t)me * slot + s.off;
            int st =
                nb ? ky_get_strided_nb(bufs[t], s.lstride2, t, seg, off, s.rstride, s.count, levels, &hs[t])
                   : ky_get_strided(bufs[t], s.lstride2, t, seg, off, s.rstride, s.count, levels);
            if (st != KY_OK) {
                ok = false;
                ADD_FAILURE() << "get_strided levels " << levels << " from " << t << ": " << ky_last_error();
            }
        }
        if (nb) KYT_EXPECT_OK(ky_wait_all(hs.data(), hs.size()));
        for (int t = 0; t < n; t++) {
            Shape s = shape_of(me, t);
            size_t le = extent(s.lstride, s.count, levels), le2 = extent(s.lstride2, s.count, levels);
            std::vector<uint8_t> h(le), want(le2, 0xEE), got(le2);
            kyt::fill_pattern(h.data(), le, s.salt);
            unpack(want.data(), s.lstride2, s.count, levels, pack(h.data(), s.lstride, s.count, levels));
            kyt::mem_read(lkind, got.data(), bufs[t], le2);
            kyt::mem_free(lkind, bufs[t]);
            if (want != got) {
                ok = false;
                ADD_FAILURE() << "round " << rnd << " levels " << levels << ": strided get from " << t
                              << " differs from the reference";
            }
        }
        KYT_EXPECT_OK(ky_comm_barrier());
        return ok;
    }
};

TEST_P(Strided, ReferenceSelfCheck)
{
    /* the reference itself: a 2x3 block of 4 bytes out of rows of 10 */
    size_t count[3] = {4, 3, 2}, stride[2] = {10, 40};
    std::vector<uint8_t> src(80);
    for (size_t i = 0; i < src.size(); i++) src[i] = (uint8_t)i;
    std::vector<uint8_t> p = pack(src.data(), stride, count, 2);
    std::vector<uint8_t> want = {0,  1,  2,  3,  10, 11, 12, 13, 20, 21, 22, 23,
                                 40, 41, 42, 43, 50, 51, 52, 53, 60, 61, 62, 63};
    EXPECT_EQ(want, p);
    EXPECT_EQ(64u, extent(stride, count, 2));
}

TEST_P(Strided, RandomShapesAllLevels)
{
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * ky_nranks(), kind, device(), &seg));
    const int per_level = kyt::scaled(3, 2);
    bool ok = true;
    int rnd = 0;
    for (int levels = 0; levels <= KY_STRIDED_MAX_LEVELS; levels++)
        for (int k = 0; k < per_level; k++, rnd++)
            ok &= round(seg, rnd, levels, k % 2 == 1, kind == KY_MEM_GPU && (k / 2) % 2 == 0);
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Strided, Vector)
{
    int me = ky_rank(), n = ky_nranks();
    const size_t vslot = 300000;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, vslot * n, kind, device(), &seg));
    const int rounds = kyt::scaled(4, 2);
    bool ok = true;
    for (int rnd = 0; rnd < rounds; rnd++) {
        int lkind = kind == KY_MEM_GPU && rnd % 2 ? KY_MEM_GPU : KY_MEM_HOST;
        /* pieces: random lengths, disjoint random places in the slot, packed in a random order locally */
        struct Vec {
            std::vector<size_t> roff, len, loff;
            size_t ltotal = 0;
            uint64_t salt;
        };
        auto vec_of = [&](int s, int d) {
            std::mt19937_64 g(kyt::mix(kyt::seed(), rnd, s, d + 1000));
            Vec v;
            v.salt = g();
            size_t npieces = 1 + g() % 40, pos = 0;
            for (size_t i = 0; i < npieces; i++) {
                size_t gap = g() % 100, l = kyt::log_uniform(g, 1, 6000);
                if (pos + gap + l > vslot) break;
                v.roff.push_back(pos + gap);
                v.len.push_back(l);
                pos += gap + l;
            }
            /* remote order shuffled, so pieces are not sorted by offset */
            std::vector<size_t> idx(v.roff.size());
            for (size_t i = 0; i < idx.size(); i++) idx[i] = i;
            std::shuffle(idx.begin(), idx.end(), g);
            std::vector<size_t> r2, l2;
            for (size_t i : idx) {
                r2.push_back(v.roff[i]);
                l2.push_back(v.len[i]);
            }
            v.roff = r2;
            v.len = l2;
            for (size_t i = 0; i < v.len.size(); i++) {
                v.ltotal += g() % 7;
                v.loff.push_back(v.ltotal);
                v.ltotal += v.len[i];
            }
            return v;
        };
        void *base;
        size_t bytes;
        ky_seg_local(seg, &base, &bytes);
        kyt::mem_set(kind, base, 0x77, bytes);
        KYT_EXPECT_OK(ky_comm_barrier());
        for (int i = 0; i < n; i++) {
            int t = (me + i) % n;
            Vec v = vec_of(me, t);
            std::vector<uint8_t> h(v.ltotal + 1);
            kyt::fill_pattern(h.data(), h.size(), v.salt);
            void *buf = kyt::mem_alloc(lkind, h.size());
            kyt::mem_write(lkind, buf, h.data(), h.size());
            std::vector<const void *> srcs;
            std::vector<size_t> roff;
            for (size_t k = 0; k < v.len.size(); k++) {
                srcs.push_back((uint8_t *)buf + v.loff[k]);
                roff.push_back((size_t)me * vslot + v.roff[k]);
            }
            int st = ky_putv(t, seg, v.len.size(), roff.data(), srcs.data(), v.len.data());
            if (st != KY_OK) {
                ok = false;
                ADD_FAILURE() << "putv to " << t << ": " << ky_last_error();
            }
            kyt::mem_free(lkind, buf);
        }
        KYT_EXPECT_OK(ky_comm_barrier());
        std::vector<uint8_t> view = kyt::local_view(seg, kind, 0, bytes);
        for (int s = 0; s < n; s++) {
            Vec v = vec_of(s, me);
            std::vector<uint8_t> h(v.ltotal + 1), want(vslot, 0x77);
            kyt::fill_pattern(h.data(), h.size(), v.salt);
            for (size_t k = 0; k < v.len.size(); k++) memcpy(&want[v.roff[k]], &h[v.loff[k]], v.len[k]);
            if (memcmp(want.data(), view.data() + (size_t)s * vslot, vslot) != 0) {
                ok = false;
                ADD_FAILURE() << "round " << rnd << ": putv from " << s << " to " << me << " wrong";
            }
        }
        for (int t = 0; t < n; t++) {
            Vec v = vec_of(me, t);
            std::vector<uint8_t> h(v.ltotal + 1), want(v.ltotal + 1, 0xEE), got(v.ltotal + 1);
            kyt::fill_pattern(h.data(), h.size(), v.salt);
            for (size_t k = 0; k < v.len.size(); k++) memcpy(&want[v.loff[k]], &h[v.loff[k]], v.len[k]);
            void *buf = kyt::mem_alloc(lkind, got.size());
            kyt::mem_set(lkind, buf, 0xEE, got.size());
            std::vector<void *> dsts;
            std::vector<size_t> roff;
            for (size_t k = 0; k < v.len.size(); k++) {
                dsts.push_back((uint8_t *)buf + v.loff[k]);
                roff.push_back((size_t)me * vslot + v.roff[k]);
            }
            int st = ky_getv(dsts.data(), t, seg, v.len.size(), roff.data(), v.len.data());
            if (st != KY_OK) {
                ok = false;
                ADD_FAILURE() << "getv from " << t << ": " << ky_last_error();
            }
            kyt::mem_read(lkind, got.data(), buf, got.size());
            kyt::mem_free(lkind, buf);
            if (got != want) {
                ok = false;
                ADD_FAILURE() << "round " << rnd << ": getv from " << t << " wrong";
            }
        }
        KYT_EXPECT_OK(ky_comm_barrier());
    }
    /* zero pieces is a no-op */
    KYT_EXPECT_OK(ky_putv(me, seg, 0, nullptr, nullptr, nullptr));
    KYT_EXPECT_OK(ky_getv(nullptr, me, seg, 0, nullptr, nullptr));
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

INSTANTIATE_TEST_SUITE_P(Mem, Strided, ::testing::ValuesIn(kyt::memkinds()), kyt::MemkindName());

}  // namespace
