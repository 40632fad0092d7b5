/* Active messages: registration, short with 0..16 arguments, medium payloads 0..max, long into segments,
 * replies (short, medium, long) from handlers, ky_am_source, handler counts and the am_sent / am_handled
 * statistics. Arguments and payload bytes are verified inside the handlers; waits loop on ky_poll() so the
 * tests also hold with KY_PROGRESS_THREAD=0. Passive progress (the target computes without calling Kyoyu)
 * is tested only with a progress thread. */
#include <chrono>
#include <mutex>

#include "kyt.h"

namespace {

enum {
    H_SHORT = 1,
    H_MEDIUM,
    H_LONG,
    H_ASK_SHORT,
    H_ANS_SHORT,
    H_ASK_MEDIUM,
    H_ANS_MEDIUM,
    H_ASK_LONG,
    H_ANS_LONG,
    H_FLAG,
    H_LAST = 199 /* highest application index */
};

std::atomic<long> g_count[256];
std::atomic<long> g_bad{0};
std::atomic<int> g_flag{0};
int g_kind = KY_MEM_HOST; /* memory kind of the segment long messages go to */
ky_seg_t g_seg = nullptr; /* segment of the current long-message test */
size_t g_slot = 0;
std::mutex g_msg_lock;
std::string g_first_bad;

void bad(const std::string &why)
{
    if (g_bad++ == 0) {
        std::lock_guard<std::mutex> l(g_msg_lock);
        g_first_bad = why;
    }
}

/* Arguments of a message from src: arg i = mix(src, tag, i). */
uint64_t arg_of(int src, uint64_t tag, int i)
{
    return kyt::mix(src, tag, i);
}

void check_args(const char *h, ky_am_token_t tok, const uint64_t *args, int nargs, int want_nargs,
                uint64_t tag, int first = 0)
{
    int src = ky_am_source(tok);
    if (src < 0 || src >= ky_nranks()) bad(std::string(h) + ": ky_am_source out of range");
    if (nargs != want_nargs) bad(std::string(h) + ": nargs " + std::to_string(nargs));
    for (int i = first; i < nargs && i < want_nargs; i++)
        if (args[i] != arg_of(src, tag, i)) bad(std::string(h) + ": arg " + std::to_string(i) + " wrong");
}

/* short: args[0] = nargs-tag; args i>=1 follow arg_of(src, 100 + nargs, i) */
void h_short(ky_am_token_t tok, void *payload, size_t n, const uint64_t *args, int nargs)
{
    if (payload != nullptr || n != 0) bad("short: payload not NULL/0");
    if (nargs < 0 || nargs > KY_AM_MAX_ARGS)
        bad("short: nargs out of range");
    else if (nargs > 0 && (args == nullptr))
        bad("short: args NULL");
    else
        check_args("short", tok, args, nargs, nargs, 100 + nargs);
    g_count[H_SHORT]++;
}

/* medium: args = {salt, n, src}; payload is pattern(salt) */
void h_medium(ky_am_token_t tok, void *payload, size_t n, const uint64_t *args, int nargs)
{
    if (nargs != 3)
        bad("medium: nargs");
    else {
        if (args[1] != n) bad("medium: nbytes " + std::to_string(n) + " want " + std::to_string(args[1]));
        if ((int)args[2] != ky_am_source(tok)) bad("medium: ky_am_source");
        if (n && !payload)
            bad("medium: NULL payload");
        else if (n && kyt::check_pattern(payload, n, args[0]) != n)
            bad("medium: payload bytes wrong, n=" + std::to_string(n));
    }
    g_count[H_MEDIUM]++;
}

/* long: args = {salt, n, off, src}; payload is the segment address off of this rank's piece */
void h_long(ky_am_token_t tok, void *payload, size_t n, const uint64_t *args, int nargs)
{
    if (nargs != 4)
        bad("long: nargs");
    else {
        void *base = nullptr;
        size_t bytes = 0;
        ky_seg_local(g_seg, &base, &bytes);
        if ((int)args[3] != ky_am_source(tok)) bad("long: ky_am_source");
        if (args[1] != n) bad("long: nbytes");
        if (payload != (uint8_t *)base + args[2])
            bad("long: payload is not the segment address");
        else if (n) {
            std::vector<uint8_t> h(n);
            kyt::mem_read(g_kind, h.data(), payload, n);
            if (kyt::check_pattern(h.data(), n, args[0]) != n) bad("long: bytes in the segment wrong");
        }
    }
    g_count[H_LONG]++;
}

/* ask short: reply short with args + 1 */
void h_ask_short(ky_am_token_t tok, void *, size_t, const uint64_t *args, int nargs)
{
    uint64_t r[KY_AM_MAX_ARGS];
    for (int i = 0; i < nargs; i++) r[i] = args[i] + 1;
    int st = ky_am_reply_short(tok, H_ANS_SHORT, r, nargs);
    if (st != KY_OK) bad(std::string("reply_short: ") + ky_last_error());
    g_count[H_ASK_SHORT]++;
}
void h_ans_short(ky_am_token_t tok, void *, size_t, const uint64_t *args, int nargs)
{
    /* the asker sent arg_of(me, 7, i) to rank args[0]-1... we check ranks through ky_am_source */
    int src = ky_am_source(tok);
    for (int i = 1; i < nargs; i++)
        if (args[i] != arg_of(ky_rank(), 7 + src, i) + 1) bad("answer short: arg wrong");
    if (nargs < 1 || (int)(args[0] - 1) != src) bad("answer short: came from the wrong rank");
    g_count[H_ANS_SHORT]++;
}

/* ask medium: echo the payload back, args {salt, n} */
void h_ask_medium(ky_am_token_t tok, void *payload, size_t n, const uint64_t *args, int nargs)
{
    int st = ky_am_reply_medium(tok, H_ANS_MEDIUM, payload, n, args, nargs);
    if (st != KY_OK) bad(std::string("reply_medium: ") + ky_last_error());
    g_count[H_ASK_MEDIUM]++;
}
void h_ans_medium(ky_am_token_t, void *payload, size_t n, const uint64_t *args, int nargs)
{
    if (nargs != 2 || args[1] != n)
        bad("answer medium: args");
    else if (n && kyt::check_pattern(payload, n, args[0]) != n)
        bad("answer medium: payload wrong");
    g_count[H_ANS_MEDIUM]++;
}

/* ask long: args {salt, n, off}: reply long with pattern(salt+1) into the asker's segment at off */
void h_ask_long(ky_am_token_t tok, void *, size_t, const uint64_t *args, int nargs)
{
    if (nargs != 3) {
        bad("ask long: nargs");
        return;
    }
    std::vector<uint8_t> h(args[1]);
    kyt::fill_pattern(h.data(), h.size(), args[0] + 1);
    uint64_t r[3] = {args[0] + 1, args[1], args[2]};
    int st = ky_am_reply_long(tok, H_ANS_LONG, h.data(), h.size(), g_seg, args[2], r, 3);
    if (st != KY_OK) bad(std::string("reply_long: ") + ky_last_error());
    g_count[H_ASK_LONG]++;
}
void h_ans_long(ky_am_token_t, void *payload, size_t n, const uint64_t *args, int nargs)
{
    void *base = nullptr;
    size_t bytes = 0;
    ky_seg_local(g_seg, &base, &bytes);
    if (nargs != 3 || args[1] != n)
        bad("answer long: args");
    else if (payload != (uint8_t *)base + args[2])
        bad("answer long: payload is not the segment address");
    else if (n) {
        std::vector<uint8_t> h(n);
        kyt::mem_read(g_kind, h.data(), payload, n);
        if (kyt::check_pattern(h.data(), n, args[0]) != n) bad("answer long: bytes wrong");
    }
    g_count[H_ANS_LONG]++;
}

void h_flag(ky_am_token_t, void *, size_t, const uint64_t *args, int nargs)
{
    if (nargs == 1) g_flag.store((int)args[0]);
    g_count[H_FLAG]++;
}

/* Poll until g_count[idx] reaches want (bounded: 60 s, then a failure). Returns whether it did. */
bool await(int idx, long want)
{
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (g_count[idx].load() < want) {
        if (ky_poll() < 0) {
            ADD_FAILURE() << "ky_poll: " << ky_last_error();
            return false;
        }
        if (std::chrono::steady_clock::now() > end) {
            ADD_FAILURE() << "handler " << idx << " ran " << g_count[idx].load() << " times, want " << want;
            return false;
        }
        std::this_thread::yield();
    }
    return true;
}

class Am : public kyt::MemkindTest {
  protected:
    void SetUp() override
    {
        kyt::MemkindTest::SetUp();
        if (IsSkipped()) return;
        g_kind = kind;
        KYT_EXPECT_OK(ky_am_register(H_SHORT, h_short));
        KYT_EXPECT_OK(ky_am_register(H_MEDIUM, h_medium));
        KYT_EXPECT_OK(ky_am_register(H_LONG, h_long));
        KYT_EXPECT_OK(ky_am_register(H_ASK_SHORT, h_ask_short));
        KYT_EXPECT_OK(ky_am_register(H_ANS_SHORT, h_ans_short));
        KYT_EXPECT_OK(ky_am_register(H_ASK_MEDIUM, h_ask_medium));
        KYT_EXPECT_OK(ky_am_register(H_ANS_MEDIUM, h_ans_medium));
        KYT_EXPECT_OK(ky_am_register(H_ASK_LONG, h_ask_long));
        KYT_EXPECT_OK(ky_am_register(H_ANS_LONG, h_ans_long));
        KYT_EXPECT_OK(ky_am_register(H_FLAG, h_flag));
        for (auto &c : g_count) c = 0;
        g_bad = 0;
        g_flag = 0;
        stats0 = kyt::stats(); /* before the barrier: no message of this test has arrived yet */
        KYT_EXPECT_OK(ky_comm_barrier());
    }
    ky_comm_stats_t stats0;
    void TearDown() override
    {
        if (IsSkipped()) return;
        KYT_EXPECT_OK(ky_comm_barrier());
        EXPECT_EQ(0, g_bad.load()) << "first problem seen in a handler: " << g_first_bad;
    }
};

TEST_P(Am, ShortAllArgCounts)
{
    int me = ky_rank(), n = ky_nranks();
    ky_comm_stats_t a = stats0;
    for (int i = 0; i < n; i++) {
        int t = (me + i) % n;
        for (int nargs = 0; nargs <= KY_AM_MAX_ARGS; nargs++) {
            uint64_t args[KY_AM_MAX_ARGS];
            for (int k = 0; k < nargs; k++) args[k] = arg_of(me, 100 + nargs, k);
            KYT_EXPECT_OK(ky_am_short(t, H_SHORT, nargs ? args : nullptr, nargs));
        }
    }
    const uint64_t want = (uint64_t)n * (KY_AM_MAX_ARGS + 1);
    EXPECT_TRUE(kyt::all(await(H_SHORT, (long)want)));
    /* am_handled is counted after a handler returns: poll a little until it catches up */
    ky_comm_stats_t b = kyt::stats();
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (b.am_handled - a.am_handled < want && std::chrono::steady_clock::now() < end) {
        ky_poll();
        std::this_thread::yield();
        b = kyt::stats();
    }
    EXPECT_GE(b.am_sent - a.am_sent, want);
    EXPECT_GE(b.am_handled - a.am_handled, want);
    KYT_EXPECT_OK(ky_comm_barrier());
    EXPECT_EQ((long)n * (KY_AM_MAX_ARGS + 1), g_count[H_SHORT].load()) << "a handler ran too often";
}

TEST_P(Am, MediumPayloadSizes)
{
    int me = ky_rank(), n = ky_nranks();
    size_t mx = ky_am_max_medium();
    ASSERT_GE(mx, (size_t)1024);
    std::vector<size_t> sizes = {0, 1, 7, 8, 100, 4096, 16383, 16384, 16385, mx / 2 + 1, mx - 1, mx};
    std::mt19937_64 g(kyt::mix(kyt::seed(), me));
    for (int i = 0; i < kyt::scaled(4); i++) sizes.push_back(kyt::log_uniform(g, 1, mx));
    std::vector<uint8_t> buf(mx);
    for (int i = 0; i < n; i++) {
        int t = (me + i) % n;
        for (size_t sz : sizes) {
            uint64_t salt = kyt::mix(me, t, sz);
            kyt::fill_pattern(buf.data(), sz, salt);
            uint64_t args[3] = {salt, sz, (uint64_t)me};
            KYT_EXPECT_OK(ky_am_medium(t, H_MEDIUM, buf.data(), sz, args, 3));
            /* the caller may reuse the payload at once */
            memset(buf.data(), 0xCC, sz);
        }
    }
    EXPECT_TRUE(kyt::all(await(H_MEDIUM, (long)(n * sizes.size()))));
}

TEST_P(Am, LongIntoSegment)
{
    int me = ky_rank(), n = ky_nranks();
    std::vector<size_t> sizes = {0, 1, 9, 16384, 16385, 65535, 65536, 100000, (1u << 20) + 3};
    g_slot = (1u << 20) + 64;
    KYT_EXPECT_OK(ky_seg_create(nullptr, g_slot * n, kind, device(), &g_seg));
    KYT_EXPECT_OK(ky_comm_barrier()); /* every rank's g_seg is set before its handlers can run */
    long sent_per_target = 0;
    for (size_t k = 0; k < sizes.size(); k++) {
        /* each round writes different bytes; wait for all before the next overwrites them */
        for (int i = 0; i < n; i++) {
            int t = (me + i) % n;
            size_t sz = sizes[k], off = me * g_slot + (k * 13) % 61;
            uint64_t salt = kyt::mix(me, t, sz, 5);
            std::vector<uint8_t> h(sz);
            kyt::fill_pattern(h.data(), sz, salt);
            void *src = kyt::mem_alloc(k % 2 ? kind : KY_MEM_HOST, sz);
            kyt::mem_write(k % 2 ? kind : KY_MEM_HOST, src, h.data(), sz);
            uint64_t args[4] = {salt, sz, off, (uint64_t)me};
            KYT_EXPECT_OK(ky_am_long(t, H_LONG, src, sz, g_seg, off, args, 4));
            kyt::mem_free(k % 2 ? kind : KY_MEM_HOST, src);
        }
        sent_per_target++;
        EXPECT_TRUE(kyt::all(await(H_LONG, sent_per_target * n)));
        KYT_EXPECT_OK(ky_comm_barrier());
    }
    /* the bytes stay in the segment after the handler: check the last round in the local view */
    KYT_EXPECT_OK(ky_comm_barrier());
    size_t k = sizes.size() - 1, sz = sizes[k];
    for (int s = 0; s < n; s++) {
        std::vector<uint8_t> v = kyt::local_view(g_seg, kind, s * g_slot + (k * 13) % 61, sz);
        EXPECT_EQ(sz, kyt::check_pattern(v.data(), sz, kyt::mix(s, me, sz, 5))) << "long from " << s;
    }
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(g_seg));
    g_seg = nullptr;
}

TEST_P(Am, RepliesShortMediumLong)
{
    int me = ky_rank(), n = ky_nranks();
    g_slot = 200000;
    KYT_EXPECT_OK(ky_seg_create(nullptr, g_slot * n, kind, device(), &g_seg));
    KYT_EXPECT_OK(ky_comm_barrier());
    /* short: args[0] = target + 1, args[i] = arg_of(me, 7 + target, i) */
    for (int t = 0; t < n; t++)
        for (int nargs = 1; nargs <= KY_AM_MAX_ARGS; nargs += 5) {
            uint64_t args[KY_AM_MAX_ARGS];
            args[0] = (uint64_t)t; /* the reply adds one */
            for (int k = 1; k < nargs; k++) args[k] = arg_of(me, 7 + t, k);
            KYT_EXPECT_OK(ky_am_short(t, H_ASK_SHORT, args, nargs));
        }
    /* medium echo */
    size_t mx = ky_am_max_medium();
    std::vector<uint8_t> buf(mx);
    const size_t msizes[] = {0, 3, 20000, mx};
    for (int t = 0; t < n; t++)
        for (size_t sz : msizes) {
            uint64_t salt = kyt::mix(me, t, sz, 11);
            kyt::fill_pattern(buf.data(), sz, salt);
            uint64_t args[2] = {salt, sz};
            KYT_EXPECT_OK(ky_am_medium(t, H_ASK_MEDIUM, buf.data(), sz, args, 2));
        }
    /* long reply into my segment, slot of the replier */
    const size_t lsizes[] = {5, 150000};
    int nl = 0;
    for (int t = 0; t < n; t++) {
        size_t sz = lsizes[t % 2];
        uint64_t args[3] = {kyt::mix(me, t, 13), sz, t * g_slot + 1};
        KYT_EXPECT_OK(ky_am_short(t, H_ASK_LONG, args, 3));
        nl++;
    }
    bool ok = await(H_ANS_SHORT, (long)n * 4) && await(H_ANS_MEDIUM, (long)n * 4) && await(H_ANS_LONG, nl);
    EXPECT_TRUE(kyt::all(ok));
    EXPECT_EQ((long)n * 4, g_count[H_ASK_SHORT].load());
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(g_seg));
    g_seg = nullptr;
}

TEST_P(Am, ReregisterAndUnregister)
{
    /* re-registering replaces the handler; it is local and takes effect for later messages */
    KYT_EXPECT_OK(ky_am_register(H_LAST, h_flag));
    KYT_EXPECT_OK(ky_comm_barrier());
    int t = (ky_rank() + 1) % ky_nranks();
    uint64_t v = 5;
    KYT_EXPECT_OK(ky_am_short(t, H_LAST, &v, 1));
    EXPECT_TRUE(kyt::all(await(H_FLAG, 1)));
    EXPECT_EQ(5, g_flag.load());
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_am_register(H_LAST, nullptr));
    KYT_EXPECT_OK(ky_am_register(0, h_flag)); /* index 0 is the application's too */
    KYT_EXPECT_OK(ky_comm_barrier());
    v = 6;
    KYT_EXPECT_OK(ky_am_short(t, 0, &v, 1));
    EXPECT_TRUE(kyt::all(await(H_FLAG, 2)));
    EXPECT_EQ(6, g_flag.load());
    KYT_EXPECT_OK(ky_am_register(0, nullptr));
}

TEST_P(Am, HandlerRunsWhileTargetComputes)
{
    if (!kyt::progress_thread()) GTEST_SKIP() << "needs a progress thread (KY_PROGRESS_THREAD=0)";
    int me = ky_rank(), n = ky_nranks();
    uint64_t v = 1000 + me;
    KYT_EXPECT_OK(ky_am_short((me + 1) % n, H_FLAG, &v, 1));
    /* compute: no Kyoyu call until the handler has run here */
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    volatile double x = 0;
    while (g_flag.load() == 0 && std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 1000; i++) x = x + 1.0;
    EXPECT_EQ(1000 + (me + n - 1) % n, g_flag.load()) << "the handler did not run while this rank computed";
}

TEST_P(Am, PutLandsWhileTargetComputes)
{
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP()
        << "spins on memory a remote put writes: a data race by design, which ThreadSanitizer reports";
#endif
    if (!kyt::progress_thread()) GTEST_SKIP() << "needs a progress thread (KY_PROGRESS_THREAD=0)";
    if (kind != KY_MEM_HOST) GTEST_SKIP() << "spins on host memory";
    int me = ky_rank(), n = ky_nranks();
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 64, KY_MEM_HOST, 0, &seg));
    void *base;
    size_t bytes;
    ky_seg_local(seg, &base, &bytes);
    volatile uint64_t *flag = (volatile uint64_t *)base;
    *flag = 0;
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_put_val((me + 1) % n, seg, 0, 77 + me, 8));
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (*flag == 0 && std::chrono::steady_clock::now() < end) {
    }
    EXPECT_EQ((uint64_t)(77 + (me + n - 1) % n), *flag);
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

/* An idle progress thread sleeps long where every rank runs on one host (comm/bell.c:
 * KY_PROGRESS_IDLE_MAX_US, woken by the sender's doorbell): after 300 ms of silence a question and its answer
 * (each served by the other rank's sleeping engine) must still take well under a second. The am.*.bell
 * variants set the idle sleep to 20 s, so a request that does not ring shows as a 20 s answer, and
 * KYT_EXPECT_BELL says whether the engines must have slept on their bells (1: one node, no UCX) or never (0:
 * every rank its own node). */
TEST_P(Am, IdleEngineAnswersAtOnce)
{
    int me = ky_rank(), n = ky_nranks(), t = (me + 1) % n;
    const char *expect = getenv("KYT_EXPECT_BELL");
    KYT_EXPECT_OK(ky_comm_stats_reset());
    double worst = 0;
    for (int round = 0; round < 3; round++) {
        KYT_EXPECT_OK(ky_comm_barrier());
        /* every engine idle: asleep on its bell after ~5 ms of short polls (~40 ms on 2 loaded cores) */
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        long before = g_count[H_ANS_SHORT].load();
        uint64_t a[1] = {(uint64_t)t}; /* answered as t + 1: h_ans_short checks it came from t */
        auto t0 = std::chrono::steady_clock::now();
        KYT_EXPECT_OK(ky_am_short(t, H_ASK_SHORT, a, 1));
        bool got = await(H_ANS_SHORT, before + 1);
        double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_TRUE(got);
        worst = std::max(worst, dt);
    }
    EXPECT_LT(worst, 1.0) << "rank " << me << ": a question to rank " << t
                          << " and its answer took that long after the engines idled (a doorbell not rung?)";
    KYT_EXPECT_OK(ky_comm_barrier());
    ky_comm_stats_t s = kyt::stats();
    if (expect && strcmp(expect, "1") == 0) {
        EXPECT_GE(s.engine_idle_sleeps, 2u) << "rank " << me << ": the idle engine never slept on its bell";
        EXPECT_GE(s.engine_rung, 1u) << "rank " << me << ": no request woke the engine early";
    } else if (expect && strcmp(expect, "0") == 0) {
        EXPECT_EQ(0u, s.engine_idle_sleeps) << "rank " << me << ": long idle sleeps where nobody rings";
    }
}

INSTANTIATE_TEST_SUITE_P(Mem, Am, ::testing::ValuesIn(kyt::memkinds()), kyt::MemkindName());

}  // namespace
