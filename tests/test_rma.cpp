/* Contiguous put/get: blocking and non-blocking (wait, test, wait_all, quiet), fence, put_val/get_val,
 * memset. Random sizes (log-uniform, seeded alike on every rank) at random unaligned offsets, from every rank
 * to every rank including itself; checked three ways: the target's local view after a barrier, the bytes
 * around the written range (unchanged), and a get back. ky_comm_stats confirms the path each went by. */
#include "kyt.h"

namespace {

constexpr size_t kMaxOff = 64; /* random offsets 0..63 at both ends */

size_t eager_size()
{
    const char *v = nullptr;
    if (ky_config_get("KY_EAGER_SIZE", &v) != KY_OK || !v) return 16384;
    char *end;
    double d = strtod(v, &end);
    if (*end == 'K' || *end == 'k') d *= 1024;
    if (*end == 'M' || *end == 'm') d *= 1024 * 1024;
    return (size_t)d;
}

/* One transfer of a round: src rank writes n bytes at off of its slot in dst rank's piece. */
struct Op {
    size_t off, n;
    uint64_t salt;
};

/* How a round issues and completes its operations. */
enum Mode { BLOCKING, NB_WAIT_ALL, NB_QUIET, NB_TEST, NMODES };

class Rma : public kyt::MemkindTest {
  protected:
    /* Runs one all-to-all round: every rank puts op(src=me, dst=t) into slot `me` of every t, then the
     * targets check their local views, then every rank gets its bytes back. Returns local ok. */
    bool round(ky_seg_t seg, size_t slot, int rnd, Mode mode, bool gpu_local,
               const std::function<Op(int src, int dst)> &op_of)
    {
        int me = ky_rank(), n = ky_nranks();
        int lkind = gpu_local ? KY_MEM_GPU : KY_MEM_HOST;
        bool ok = true;
        uint8_t fill = (uint8_t)(rnd * 37 + 11);
        void *base = nullptr;
        size_t bytes = 0;
        ky_seg_local(seg, &base, &bytes);
        kyt::mem_set(kind, base, fill, bytes);
        KYT_EXPECT_OK(ky_comm_barrier());

        /* puts */
        std::vector<void *> src(n, nullptr);
        std::vector<ky_handle_t> hs(n, nullptr);
        for (int i = 0; i < n; i++) {
            int t = (me + i) % n; /* everyone starts with a different target */
            Op op = op_of(me, t);
            std::vector<uint8_t> h(op.n);
            kyt::fill_pattern(h.data(), op.n, op.salt);
            src[t] = kyt::mem_alloc(lkind, op.n);
            kyt::mem_write(lkind, src[t], h.data(), op.n);
            size_t off = (size_t)me * slot + op.off;
            int st;
            if (mode == BLOCKING)
                st = ky_put(t, seg, off, src[t], op.n);
            else
                st = ky_put_nb(t, seg, off, src[t], op.n, &hs[t]);
            if (st != KY_OK) {
                ok = false;
                ADD_FAILURE() << "put to " << t << " n=" << op.n << " off=" << off << ": " << ky_last_error();
                hs[t] = nullptr;
            }
        }
        switch (mode) {
            case BLOCKING:
                break;
            case NB_WAIT_ALL:
                KYT_EXPECT_OK(ky_wait_all(hs.data(), hs.size()));
                break;
            case NB_QUIET:
                KYT_EXPECT_OK(ky_quiet());
                /* after quiet the handles are complete: test succeeds at once and frees them */
                for (auto h : hs) KYT_EXPECT_OK(ky_test(h));
                break;
            case NB_TEST:
                for (auto h : hs) {
                    int st;
                    long spins = 0;
                    while ((st = ky_test(h)) == KY_PENDING) {
                        ky_poll();
                        spins++;
                    }
                    EXPECT_EQ(KY_OK, st) << ky_last_error();
                }
                break;
            default:
                break;
        }
        for (int t = 0; t < n; t++) kyt::mem_free(lkind, src[t]);
        KYT_EXPECT_OK(ky_comm_barrier());

        /* target's local view: pattern inside, fill around */
        std::vector<uint8_t> view = kyt::local_view(seg, kind, 0, bytes);
        for (int s = 0; s < n; s++) {
            Op op = op_of(s, me);
            const uint8_t *p = view.data() + (size_t)s * slot;
            size_t bad = kyt::check_byte(p, op.off, fill);
            if (bad != op.off) {
                ok = false;
                ADD_FAILURE() << "round " << rnd << ": byte " << bad << " before the put from " << s
                              << " changed (off " << op.off << ", n " << op.n << ")";
            }
            bad = kyt::check_pattern(p + op.off, op.n, op.salt);
            if (bad != op.n) {
                ok = false;
                ADD_FAILURE() << "round " << rnd << " mode " << mode << ": put from rank " << s << " to "
                              << me << " of " << op.n << " bytes at off " << op.off << " wrong at byte "
                              << bad;
            }
            size_t rest = slot - op.off - op.n;
            bad = kyt::check_byte(p + op.off + op.n, rest, fill);
            if (bad != rest) {
                ok = false;
                ADD_FAILURE() << "round " << rnd << ": byte " << bad << " after the put from " << s
                              << " changed (off " << op.off << ", n " << op.n << ")";
            }
        }

        /* get back, into a buffer with guards (and an unaligned start on odd rounds) */
        const size_t lead = (rnd & 1) ? 3 : 8, guard = 8;
        std::vector<void *> dst(n, nullptr);
        for (int i = 0; i < n; i++) {
            int t = (me + n - i) % n;
            Op op = op_of(me, t);
            dst[t] = kyt::mem_alloc(lkind, lead + op.n + guard);
            kyt::mem_set(lkind, dst[t], 0xEE, lead + op.n + guard);
            size_t off = (size_t)me * slot + op.off;
            int st = mode == BLOCKING ? ky_get((uint8_t *)dst[t] + lead, t, seg, off, op.n)
                                      : ky_get_nb((uint8_t *)dst[t] + lead, t, seg, off, op.n, &hs[t]);
            if (st != KY_OK) {
                ok = false;
                ADD_FAILURE() << "get from " << t << ": " << ky_last_error();
                hs[t] = nullptr;
            }
        }
        if (mode == NB_TEST || mode == NB_QUIET) {
            for (auto h : hs) KYT_EXPECT_OK(ky_wait(h));
        } else if (mode != BLOCKING) {
            KYT_EXPECT_OK(ky_wait_all(hs.data(), hs.size()));
        }
        for (int t = 0; t < n; t++) {
            Op op = op_of(me, t);
            std::vector<uint8_t> h(lead + op.n + guard);
            kyt::mem_read(lkind, h.data(), dst[t], h.size());
            kyt::mem_free(lkind, dst[t]);
            size_t bad = kyt::check_pattern(h.data() + lead, op.n, op.salt);
            if (bad != op.n) {
                ok = false;
                ADD_FAILURE() << "round " << rnd << " mode " << mode << ": get from rank " << t << " of "
                              << op.n << " bytes wrong at byte " << bad;
            }
            if (kyt::check_byte(h.data(), lead, 0xEE) != lead ||
                kyt::check_byte(h.data() + lead + op.n, guard, 0xEE) != guard) {
                ok = false;
                ADD_FAILURE() << "get from rank " << t << " of " << op.n << " bytes wrote outside its buffer";
            }
        }
        KYT_EXPECT_OK(ky_comm_barrier());
        return ok;
    }

    /* Every path this rank should use to the segment's pieces, and counts of ops per path. */
    void expect_paths(const ky_comm_stats_t &before, const ky_comm_stats_t &after, uint64_t ops_per_target,
                      bool user_base = false)
    {
        uint64_t want[KY_PATH_COUNT] = {};
        for (int t = 0; t < ky_nranks(); t++) want[kyt::expected_path(t, kind, user_base)] += ops_per_target;
        for (int p = 0; p < KY_PATH_COUNT; p++) {
            uint64_t got = after.ops[p] - before.ops[p];
            if (want[p] == 0)
                EXPECT_EQ(0u, got) << "path " << p << " was used but should not have been";
            else
                EXPECT_GE(got, want[p]) << "path " << p << " used fewer times than expected";
        }
    }
};

TEST_P(Rma, RandomSizesAllToAll)
{
    const size_t maxn = std::min<size_t>((size_t)64 << 20, (size_t)((4u << 20) * kyt::scale()));
    const size_t slot = maxn + 2 * kMaxOff;
    const int rounds = kyt::scaled(2 * NMODES, NMODES);
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * ky_nranks(), kind, device(), &seg));
    uint64_t sd = kyt::seed();
    ky_comm_stats_t before = kyt::stats();
    bool ok = true;
    for (int r = 0; r < rounds; r++) {
        auto op_of = [&](int s, int d) {
            std::mt19937_64 g(kyt::mix(sd, r, s, d));
            Op op;
            op.n = kyt::log_uniform(g, 1, maxn);
            op.off = g() % kMaxOff;
            op.salt = g();
            return op;
        };
        ok &= round(seg, slot, r, (Mode)(r % NMODES), kind == KY_MEM_GPU && (r / NMODES) % 2 == 1, op_of);
    }
    ky_comm_stats_t after = kyt::stats();
    expect_paths(before, after, 2 * rounds);
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, EdgeSizes)
{
    /* sizes around the protocol thresholds: eager inline, medium, staging chunk */
    size_t E = eager_size(), M = 64 * 1024, C = 2u << 20;
    std::vector<size_t> sizes = {0,         1,     2,    3,     7,     8,     9,     15,
                                 16,        17,    4095, 4096,  4097,  E - 1, E,     E + 1,
                                 2 * E + 1, M - 1, M,    M + 1, C - 1, C,     C + 1, 2 * C + 3};
    size_t maxn = *std::max_element(sizes.begin(), sizes.end());
    const size_t slot = maxn + 2 * kMaxOff;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * ky_nranks(), kind, device(), &seg));
    bool ok = true;
    for (size_t i = 0; i < sizes.size(); i++) {
        auto op_of = [&](int s, int d) {
            Op op;
            op.n = sizes[i];
            op.off = kyt::mix(i, s, d) % kMaxOff;
            op.salt = kyt::mix(i, s, d, 99);
            return op;
        };
        ok &= round(seg, slot, (int)i, (Mode)(i % NMODES), kind == KY_MEM_GPU && (i & 1), op_of);
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, Large64MiB)
{
    /* one 64 MiB put to the right neighbour (unaligned), checked at the target and by a get back */
    const size_t n = kyt::scale() >= 1 ? (size_t)64 << 20 : (size_t)16 << 20;
    const size_t off = 3;
    int me = ky_rank(), nr = ky_nranks(), right = (me + 1) % nr, left = (me + nr - 1) % nr;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, n + 8, kind, device(), &seg));
    std::vector<uint8_t> h(n);
    kyt::fill_pattern(h.data(), n, kyt::mix(me, 64));
    void *src = kyt::mem_alloc(kind, n);
    kyt::mem_write(kind, src, h.data(), n);
    KYT_EXPECT_OK(ky_put(right, seg, off, src, n));
    KYT_EXPECT_OK(ky_comm_barrier());
    std::vector<uint8_t> view = kyt::local_view(seg, kind, off, n);
    size_t bad = kyt::check_pattern(view.data(), n, kyt::mix(left, 64));
    EXPECT_EQ(n, bad) << "64 MiB put from " << left << " wrong at byte " << bad;
    std::fill(h.begin(), h.end(), 0);
    kyt::mem_set(kind, src, 0, n);
    KYT_EXPECT_OK(ky_get(src, right, seg, off, n));
    kyt::mem_read(kind, h.data(), src, n);
    bad = kyt::check_pattern(h.data(), n, kyt::mix(me, 64));
    EXPECT_EQ(n, bad) << "64 MiB get from " << right << " wrong at byte " << bad;
    kyt::mem_free(kind, src);
    EXPECT_TRUE(kyt::all(!HasFailure()));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, UserBaseSegmentGoesThroughMpi)
{
    if (kind == KY_MEM_GPU) GTEST_SKIP() << "host rule only: user host memory is reached through MPI";
    const size_t slot = 70000 + 2 * kMaxOff;
    std::vector<uint8_t> mine(slot * ky_nranks());
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(mine.data(), mine.size(), kind, 0, &seg));
    ky_comm_stats_t before = kyt::stats();
    bool ok = true;
    for (int r = 0; r < 2; r++) {
        auto op_of = [&](int s, int d) {
            Op op;
            op.n = r ? 70000 : 100;
            op.off = kyt::mix(r, s, d) % kMaxOff;
            op.salt = kyt::mix(r, s, d, 5);
            return op;
        };
        ok &= round(seg, slot, r, (Mode)r, false, op_of);
    }
    expect_paths(before, kyt::stats(), 4, true);
    for (int t = 0; t < ky_nranks(); t++) {
        ky_path_t p = KY_PATH_COUNT;
        KYT_EXPECT_OK(ky_comm_path(t, seg, mine.data(), &p));
        EXPECT_EQ(kyt::expected_path(t, kind, true), p) << "rank " << t;
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, CommPathMatchesSettings)
{
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 64, kind, device(), &seg));
    uint8_t buf[8];
    for (int t = 0; t < ky_nranks(); t++) {
        ky_path_t p = KY_PATH_COUNT;
        KYT_EXPECT_OK(ky_comm_path(t, seg, buf, &p));
        EXPECT_EQ(kyt::expected_path(t, kind), p) << "to rank " << t;
    }
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, PutValGetVal)
{
    int me = ky_rank(), n = ky_nranks();
    const size_t slot = 64;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * n, kind, device(), &seg));
    void *base;
    size_t bytes;
    ky_seg_local(seg, &base, &bytes);
    kyt::mem_set(kind, base, 0, bytes);
    KYT_EXPECT_OK(ky_comm_barrier());
    /* in my slot of every rank: 1 byte at 1, 2 at 3, 4 at 5, 8 at 9 (all unaligned) */
    const size_t widths[] = {1, 2, 4, 8}, offs[] = {1, 3, 5, 9};
    auto value = [](int s, int d, size_t w) { return kyt::mix(s, d, w); };
    for (int t = 0; t < n; t++)
        for (int i = 0; i < 4; i++)
            KYT_EXPECT_OK(ky_put_val(t, seg, me * slot + offs[i], value(me, t, widths[i]), widths[i]));
    KYT_EXPECT_OK(ky_comm_barrier());
    std::vector<uint8_t> view = kyt::local_view(seg, kind, 0, bytes);
    for (int s = 0; s < n; s++) {
        uint8_t want[64] = {0};
        for (int i = 0; i < 4; i++) {
            uint64_t v = value(s, me, widths[i]);
            memcpy(want + offs[i], &v, widths[i]); /* the low bytes, in this host's byte order */
        }
        EXPECT_EQ(0, memcmp(want, view.data() + s * slot, slot)) << "put_val from rank " << s;
    }
    for (int t = 0; t < n; t++)
        for (int i = 0; i < 4; i++) {
            uint64_t got = 0xDEADBEEFDEADBEEFull;
            KYT_EXPECT_OK(ky_get_val(t, seg, me * slot + offs[i], widths[i], &got));
            uint64_t v = value(me, t, widths[i]);
            uint64_t mask = widths[i] == 8 ? ~0ull : ((1ull << (8 * widths[i])) - 1);
            EXPECT_EQ(v & mask, got) << "get_val width " << widths[i] << " from rank " << t;
        }
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, Memset)
{
    int me = ky_rank(), n = ky_nranks();
    const size_t slot = 200000;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, slot * n, kind, device(), &seg));
    void *base;
    size_t bytes;
    ky_seg_local(seg, &base, &bytes);
    kyt::mem_set(kind, base, 0x5A, bytes);
    KYT_EXPECT_OK(ky_comm_barrier());
    auto range = [&](int s, int d, size_t &off, size_t &len, int &byte) {
        std::mt19937_64 g(kyt::mix(kyt::seed(), s, d, 77));
        len = kyt::log_uniform(g, 1, slot - 100);
        off = g() % 64;
        byte = (int)(g() & 0xff);
        if (byte == 0x5A) byte = 0;
    };
    for (int t = 0; t < n; t++) {
        size_t off, len;
        int byte;
        range(me, t, off, len, byte);
        KYT_EXPECT_OK(ky_memset(t, seg, me * slot + off, byte, len));
    }
    KYT_EXPECT_OK(ky_comm_barrier());
    std::vector<uint8_t> view = kyt::local_view(seg, kind, 0, bytes);
    for (int s = 0; s < n; s++) {
        size_t off, len;
        int byte;
        range(s, me, off, len, byte);
        const uint8_t *p = view.data() + s * slot;
        EXPECT_EQ(off, kyt::check_byte(p, off, 0x5A)) << "from " << s;
        EXPECT_EQ(len, kyt::check_byte(p + off, len, (uint8_t)byte)) << "memset from " << s << " len " << len;
        EXPECT_EQ(slot - off - len, kyt::check_byte(p + off + len, slot - off - len, 0x5A)) << "from " << s;
    }
    KYT_EXPECT_OK(ky_memset(me, seg, 0, 0, 0)); /* zero bytes */
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, HandlesNullAndWaitAll)
{
    KYT_EXPECT_OK(ky_wait(nullptr));
    KYT_EXPECT_OK(ky_test(nullptr));
    ky_handle_t none[3] = {nullptr, nullptr, nullptr};
    KYT_EXPECT_OK(ky_wait_all(none, 3));
    KYT_EXPECT_OK(ky_wait_all(nullptr, 0));
    KYT_EXPECT_OK(ky_quiet());
}

TEST_P(Rma, QuietCompletesWithoutWaiting)
{
    /* many small and medium non-blocking puts; after ky_quiet a get sees all of them, before any wait */
    int me = ky_rank(), n = ky_nranks(), right = (me + 1) % n;
    const int k = 64;
    const size_t each = 3000;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, k * each, kind, device(), &seg));
    std::vector<uint8_t> h(k * each);
    kyt::fill_pattern(h.data(), h.size(), kyt::mix(me, 3));
    void *src = kyt::mem_alloc(kind, h.size());
    kyt::mem_write(kind, src, h.data(), h.size());
    std::vector<ky_handle_t> hs(k);
    for (int i = 0; i < k; i++)
        KYT_EXPECT_OK(ky_put_nb(right, seg, i * each, (uint8_t *)src + i * each, each, &hs[i]));
    KYT_EXPECT_OK(ky_quiet());
    std::vector<uint8_t> back(h.size());
    KYT_EXPECT_OK(ky_get(back.data(), right, seg, 0, back.size()));
    EXPECT_EQ(back.size(), kyt::check_pattern(back.data(), back.size(), kyt::mix(me, 3)));
    for (auto x : hs) KYT_EXPECT_OK(ky_test(x));
    kyt::mem_free(kind, src);
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, WaitsInAnyOrder)
{
    /* Non-blocking puts to both neighbours, issued while earlier ones are tested, then waited for in a
     * shuffled order (the UCX transport completes several with one endpoint flush: a handle issued after a
     * flush started must not complete with it); each put's bytes are read back right after its wait. */
    int me = ky_rank(), n = ky_nranks();
    int peers[2] = {(me + 1) % n, (me + n - 1) % n};
    const int k = kyt::scaled(48, 16);
    const size_t each = 777;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, (size_t)n * k * each, kind, device(), &seg));
    std::vector<uint8_t> h((size_t)k * each);
    kyt::fill_pattern(h.data(), h.size(), kyt::mix(me, 11));
    void *src = kyt::mem_alloc(kind, h.size());
    kyt::mem_write(kind, src, h.data(), h.size());
    std::vector<ky_handle_t> hs(k);
    std::mt19937 rng(1234 + me);
    for (int i = 0; i < k; i++) {
        size_t off = ((size_t)me * k + i) * each;
        KYT_EXPECT_OK(ky_put_nb(peers[i % 2], seg, off, (uint8_t *)src + i * each, each, &hs[i]));
        int j = (int)(rng() % (unsigned)(i + 1)); /* test an earlier one: it may complete now or later */
        if (hs[j]) {
            int t = ky_test(hs[j]);
            if (t == KY_OK)
                hs[j] = nullptr;
            else
                EXPECT_EQ(KY_PENDING, t) << ky_last_error();
        }
    }
    std::vector<int> order(k);
    for (int i = 0; i < k; i++) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    bool ok = true;
    std::vector<uint8_t> back(each);
    for (int i : order) {
        KYT_EXPECT_OK(ky_wait(hs[i]));
        size_t off = ((size_t)me * k + i) * each;
        KYT_EXPECT_OK(ky_get(back.data(), peers[i % 2], seg, off, each));
        if (memcmp(back.data(), h.data() + (size_t)i * each, each) != 0 && ok) {
            ok = false;
            ADD_FAILURE() << "put " << i << " to rank " << peers[i % 2] << " not there after its wait";
        }
    }
    EXPECT_TRUE(kyt::all(ok));
    kyt::mem_free(kind, src);
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, FenceOrdersPuts)
{
    /* put A then fence then put B to the same bytes: B must win, every time, for sizes on both sides of the
     * eager threshold (different protocols may overtake each other without the fence) */
    int me = ky_rank(), n = ky_nranks(), right = (me + 1) % n;
    const size_t sizes[] = {8, eager_size() + 100, 100000};
    const int reps = kyt::scaled(8, 2);
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 100000 * (size_t)n, kind, device(), &seg));
    bool ok = true;
    for (size_t sz : sizes) {
        std::vector<uint8_t> a(sz), b(sz);
        for (int rep = 0; rep < reps; rep++) {
            /* A: big first (slow protocol), B: small (fast) — B covers A's first bytes */
            size_t bsz = std::max<size_t>(1, sz / 2);
            kyt::fill_pattern(a.data(), sz, kyt::mix(rep, 1));
            kyt::fill_pattern(b.data(), bsz, kyt::mix(rep, 2));
            ky_handle_t ha, hb;
            size_t off = (size_t)me * 100000;
            KYT_EXPECT_OK(ky_put_nb(right, seg, off, a.data(), sz, &ha));
            KYT_EXPECT_OK(ky_fence(rep % 2 ? right : -1));
            KYT_EXPECT_OK(ky_put_nb(right, seg, off, b.data(), bsz, &hb));
            KYT_EXPECT_OK(ky_wait(hb));
            KYT_EXPECT_OK(ky_wait(ha));
            std::vector<uint8_t> back(sz);
            KYT_EXPECT_OK(ky_get(back.data(), right, seg, off, sz));
            if (kyt::check_pattern(back.data(), bsz, kyt::mix(rep, 2)) != bsz ||
                memcmp(back.data() + bsz, a.data() + bsz, sz - bsz) != 0) {
                ok = false;
                ADD_FAILURE() << "fence did not order two puts of " << sz << " and " << bsz << " bytes, rep "
                              << rep;
            }
        }
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST_P(Rma, StatsCountBytes)
{
    /* only rank 0 moves data, so no served request of another rank's can blur the counts */
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 4096, kind, device(), &seg));
    KYT_EXPECT_OK(ky_comm_barrier());
    if (ky_rank() == 0) {
        for (int t = 0; t < ky_nranks(); t++) {
            std::vector<uint8_t> buf(1000, 1);
            ky_comm_stats_t a = kyt::stats();
            KYT_EXPECT_OK(ky_put(t, seg, 100, buf.data(), 1000));
            KYT_EXPECT_OK(ky_get(buf.data(), t, seg, 100, 1000));
            ky_comm_stats_t b = kyt::stats();
            ky_path_t p = kyt::expected_path(t, kind);
            EXPECT_EQ(2u, b.ops[p] - a.ops[p]) << "to rank " << t << " path " << p;
            EXPECT_EQ(2000u, b.bytes[p] - a.bytes[p]) << "to rank " << t << " path " << p;
        }
    }
    KYT_EXPECT_OK(ky_comm_barrier());
    /* reset is per rank; after it our counters restart */
    KYT_EXPECT_OK(ky_comm_stats_reset());
    ky_comm_stats_t c = kyt::stats();
    for (int i = 0; i < KY_PATH_COUNT; i++) EXPECT_EQ(0u, c.ops[i]);
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_comm_stats(nullptr));
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

INSTANTIATE_TEST_SUITE_P(Mem, Rma, ::testing::ValuesIn(kyt::memkinds()), kyt::MemkindName());

}  // namespace
