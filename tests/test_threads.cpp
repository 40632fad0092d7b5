/* Thread safety: 4 threads per rank issue puts, gets (blocking and non-blocking) and active messages to
 * random ranks at once; afterwards every byte and every message is verified. Each (rank, thread) owns its
 * own region of every target, so the expected contents are known. */
#include <chrono>

#include "kyt.h"

namespace {

constexpr int kThreads = 4;
constexpr size_t kRegion = 64 * 1024; /* per (source rank, thread) in every target */
std::atomic<long> g_am_count{0};
std::atomic<long> g_am_bad{0};

void h_count(ky_am_token_t tok, void *payload, size_t n, const uint64_t *args, int nargs)
{
    if (nargs != 2 || (int)args[0] != ky_am_source(tok))
        g_am_bad++;
    else if (n && kyt::check_pattern(payload, n, args[1]) != n)
        g_am_bad++;
    g_am_count++;
}

class Threads : public kyt::MemkindTest {};

TEST_P(Threads, ConcurrentPutGetAm)
{
    int me = ky_rank(), n = ky_nranks();
    KYT_EXPECT_OK(ky_am_register(7, h_count));
    g_am_count = 0;
    g_am_bad = 0;
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, kRegion * kThreads * n, kind, device(), &seg));
    void *base;
    size_t bytes;
    ky_seg_local(seg, &base, &bytes);
    kyt::mem_set(kind, base, 0, bytes);
    /* created now: a collective after the threads would not serve ranks whose threads still send to us */
    ky_seg_t cnt;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 8 * (size_t)n, KY_MEM_HOST, 0, &cnt));
    KYT_EXPECT_OK(ky_comm_barrier());

    const int iters = kyt::scaled(60, 10);
    /* AMs sent by each thread of each rank to each target: counted so targets know what to expect */
    std::vector<std::vector<long>> am_to(kThreads, std::vector<long>(n, 0));
    /* final content: each thread writes its region of target t in pieces; last writer of each piece wins, and
     * pieces are disjoint per thread, so the final image is the last salt written per piece */
    const size_t piece = kRegion / 16;
    std::atomic<int> errors{0};
    std::vector<std::string> first_error(kThreads);
    auto worker = [&](int th) {
        std::mt19937_64 g(kyt::mix(kyt::seed(), me, th));
        std::vector<uint8_t> buf(piece), back(piece);
        for (int it = 0; it < iters; it++) {
            int t = (int)(g() % n);
            size_t p = g() % 16, len = 1 + g() % piece;
            size_t off = ((size_t)me * kThreads + th) * kRegion + p * piece;
            /* the piece's bytes are a function of (me, th, t, p) so the final image is known */
            uint64_t salt = kyt::mix(me, th, t, p);
            kyt::fill_pattern(buf.data(), piece, salt);
            int st;
            switch (g() % 4) {
                case 0:
                    st = ky_put(t, seg, off, buf.data(), len);
                    break;
                case 1: {
                    ky_handle_t h;
                    st = ky_put_nb(t, seg, off, buf.data(), len, &h);
                    if (!st) st = ky_wait(h);
                    break;
                }
                case 2: {
                    uint64_t args[2] = {(uint64_t)me, salt};
                    st = ky_am_medium(t, 7, buf.data(), std::min(len, ky_am_max_medium()), args, 2);
                    if (!st) am_to[th][t]++;
                    break;
                }
                default: {
                    /* put then get back: our own bytes, no one else writes them */
                    st = ky_put(t, seg, off, buf.data(), len);
                    ky_handle_t h;
                    if (!st) st = ky_get_nb(back.data(), t, seg, off, len, &h);
                    if (!st) st = ky_wait(h);
                    if (!st && memcmp(back.data(), buf.data(), len) != 0) {
                        if (errors++ == 0) first_error[th] = "get after put returned other bytes";
                    }
                    break;
                }
            }
            if (st != KY_OK && errors++ == 0) first_error[th] = ky_last_error();
        }
    };
    std::vector<std::thread> ts;
    for (int th = 0; th < kThreads; th++) ts.emplace_back(worker, th);
    for (auto &t : ts) t.join();
    for (auto &e : first_error)
        if (!e.empty()) ADD_FAILURE() << e;
    EXPECT_EQ(0, errors.load());

    /* every rank learns how many AMs to expect */
    /* (through Kyoyu, not MPI_Allreduce: without a progress thread a rank must keep serving until every
     * other rank's threads are done sending to it) */
    std::vector<long> mine(n, 0), total(n, 0);
    for (int th = 0; th < kThreads; th++)
        for (int t = 0; t < n; t++) mine[t] += am_to[th][t];
    for (int t = 0; t < n; t++) KYT_EXPECT_OK(ky_put_val(t, cnt, 8 * (size_t)me, (uint64_t)mine[t], 8));
    KYT_EXPECT_OK(ky_comm_barrier());
    {
        std::vector<uint8_t> cv = kyt::local_view(cnt, KY_MEM_HOST, 0, 8 * (size_t)n);
        long sum = 0;
        for (int s = 0; s < n; s++) {
            uint64_t x;
            memcpy(&x, &cv[8 * s], 8);
            sum += (long)x;
        }
        total[me] = sum;
    }
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (g_am_count.load() < total[me] && std::chrono::steady_clock::now() < end) {
        ky_poll();
        std::this_thread::yield();
    }
    EXPECT_EQ(total[me], g_am_count.load());
    EXPECT_EQ(0, g_am_bad.load());
    KYT_EXPECT_OK(ky_comm_barrier());

    /* check every region of my piece: each byte is 0 or the pattern of its piece (puts of random prefix
     * lengths; a longer earlier put may survive beyond a later short one, but all carry the same salt) */
    std::vector<uint8_t> view = kyt::local_view(seg, kind, 0, bytes);
    bool ok = true;
    for (int s = 0; s < n && ok; s++)
        for (int th = 0; th < kThreads && ok; th++)
            for (size_t p = 0; p < 16 && ok; p++) {
                const uint8_t *q = view.data() + ((size_t)s * kThreads + th) * kRegion + p * piece;
                uint64_t salt = kyt::mix(s, th, me, p);
                size_t i = 0;
                while (i < piece && q[i] == kyt::pat(i, salt)) i++;
                /* after the written prefix: zeros only */
                if (kyt::check_byte(q + i, piece - i, 0) != piece - i) {
                    ok = false;
                    ADD_FAILURE() << "region of rank " << s << " thread " << th << " piece " << p
                                  << " holds bytes no put wrote, at " << i;
                }
            }
    EXPECT_TRUE(kyt::all(ok && !HasFailure()));
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
    KYT_EXPECT_OK(ky_seg_destroy(cnt));
    KYT_EXPECT_OK(ky_am_register(7, nullptr));
}

TEST_P(Threads, ConcurrentSegmentLookupAndStats)
{
    /* stats, path queries and topology from many threads while others transfer */
    int n = ky_nranks();
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 4096, kind, device(), &seg));
    KYT_EXPECT_OK(ky_comm_barrier());
    std::atomic<int> bad{0};
    std::vector<std::thread> ts;
    for (int th = 0; th < kThreads; th++)
        ts.emplace_back([&, th] {
            for (int i = 0; i < kyt::scaled(200, 20); i++) {
                int t = (ky_rank() + i + th) % n;
                uint64_t v = 0;
                if (th % 2) {
                    if (ky_get_val(t, seg, 8 * th, 8, &v) != KY_OK) bad++;
                } else {
                    ky_comm_stats_t s;
                    ky_path_t p;
                    if (ky_comm_stats(&s) != KY_OK || ky_comm_path(t, seg, &v, &p) != KY_OK) bad++;
                }
            }
        });
    for (auto &t : ts) t.join();
    EXPECT_EQ(0, bad.load());
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

INSTANTIATE_TEST_SUITE_P(Mem, Threads, ::testing::ValuesIn(kyt::memkinds()), kyt::MemkindName());

}  // namespace
