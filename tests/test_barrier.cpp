/* Split-phase barrier: notify / try / wait semantics, KY_ERR_STATE on a second notify, ky_comm_barrier,
 * and the barrier ordering puts (and completing non-blocking ones, since notify runs ky_quiet). */
#include <chrono>

#include "kyt.h"

TEST(Barrier, NotifyWait)
{
    for (int i = 0; i < kyt::scaled(20, 5); i++) {
        KYT_EXPECT_OK(ky_barrier_notify());
        KYT_EXPECT_OK(ky_barrier_wait());
    }
}

TEST(Barrier, DoubleNotifyIsStateError)
{
    KYT_EXPECT_OK(ky_barrier_notify());
    KYT_EXPECT_STATUS(KY_ERR_STATE, ky_barrier_notify());
    KYT_EXPECT_OK(ky_barrier_wait());
    /* wait and try without a notify are state errors too */
    int st = ky_barrier_wait();
    EXPECT_EQ(KY_ERR_STATE, st) << ky_last_error();
    st = ky_barrier_try();
    EXPECT_EQ(KY_ERR_STATE, st) << ky_last_error();
    KYT_EXPECT_OK(ky_comm_barrier());
}

TEST(Barrier, TryIsPendingUntilTheLastRankNotifies)
{
    /* the last rank holds back its notify until every other rank has seen KY_PENDING at least once
     * (it learns that through an MPI reduction the others enter after their first try) */
    int me = ky_rank(), n = ky_nranks(), last = n - 1;
    if (me != last) {
        KYT_EXPECT_OK(ky_barrier_notify());
        int st = ky_barrier_try();
        EXPECT_EQ(KY_PENDING, st) << "try succeeded before rank " << last << " notified";
        int one = 1, sum = 0;
        MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, last, MPI_COMM_WORLD);
        auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while ((st = ky_barrier_try()) == KY_PENDING && std::chrono::steady_clock::now() < end)
            std::this_thread::yield();
        EXPECT_EQ(KY_OK, st);
    } else {
        int one = 1, sum = 0;
        MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, last, MPI_COMM_WORLD);
        KYT_EXPECT_OK(ky_barrier_notify());
        KYT_EXPECT_OK(ky_barrier_wait());
    }
    /* after try returned OK the barrier is over: a new one can start */
    KYT_EXPECT_OK(ky_comm_barrier());
}

TEST(Barrier, WorkBetweenNotifyAndWait)
{
    /* split phase: communication between notify and wait is allowed */
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 8 * ky_nranks(), KY_MEM_HOST, 0, &seg));
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_barrier_notify());
    for (int t = 0; t < ky_nranks(); t++) KYT_EXPECT_OK(ky_put_val(t, seg, 8 * ky_rank(), 42, 8));
    KYT_EXPECT_OK(ky_barrier_wait());
    KYT_EXPECT_OK(ky_comm_barrier());
    std::vector<uint8_t> v = kyt::local_view(seg, KY_MEM_HOST, 0, 8 * ky_nranks());
    for (int s = 0; s < ky_nranks(); s++) {
        uint64_t x;
        memcpy(&x, &v[8 * s], 8);
        EXPECT_EQ(42u, x) << "from " << s;
    }
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST(Barrier, OrdersPutsAndCompletesNonBlocking)
{
    /* rounds: everyone puts (blocking and non-blocking, not waited) a round number into every rank, barrier,
     * everyone reads its local view: every value must be this round's */
    int me = ky_rank(), n = ky_nranks();
    const size_t each = 20000; /* above the eager size: a separate data message */
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, each * n, KY_MEM_HOST, 0, &seg));
    KYT_EXPECT_OK(ky_comm_barrier());
    bool ok = true;
    std::vector<uint8_t> buf(each);
    for (int r = 1; r <= kyt::scaled(10, 3); r++) {
        std::fill(buf.begin(), buf.end(), (uint8_t)r);
        std::vector<ky_handle_t> hs;
        for (int t = 0; t < n; t++) {
            if ((t + r) % 2) {
                KYT_EXPECT_OK(ky_put(t, seg, me * each, buf.data(), each));
            } else {
                ky_handle_t h;
                KYT_EXPECT_OK(ky_put_nb(t, seg, me * each, buf.data(), each, &h));
                hs.push_back(h);
            }
        }
        KYT_EXPECT_OK(ky_comm_barrier()); /* notify runs ky_quiet: the nb puts are complete */
        for (auto h : hs) EXPECT_EQ(KY_OK, ky_test(h)) << "handle not complete after the barrier";
        std::vector<uint8_t> v = kyt::local_view(seg, KY_MEM_HOST, 0, each * n);
        if (kyt::check_byte(v.data(), v.size(), (uint8_t)r) != v.size()) {
            ok = false;
            ADD_FAILURE() << "round " << r << ": a put made before the barrier is not visible after it";
        }
        KYT_EXPECT_OK(ky_comm_barrier());
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST(Barrier, ManyFromOneThreadWhileOthersCommunicate)
{
    /* barriers on the main thread while a second thread keeps doing gets */
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 64, KY_MEM_HOST, 0, &seg));
    KYT_EXPECT_OK(ky_comm_barrier());
    std::atomic<bool> stop{false};
    std::atomic<int> bad{0};
    std::thread t([&] {
        uint64_t v;
        int i = 0;
        while (!stop.load())
            if (ky_get_val((ky_rank() + ++i) % ky_nranks(), seg, 0, 8, &v) != KY_OK) bad++;
    });
    for (int i = 0; i < kyt::scaled(20, 5); i++) KYT_EXPECT_OK(ky_comm_barrier());
    stop = true;
    t.join();
    EXPECT_EQ(0, bad.load());
    KYT_EXPECT_OK(ky_comm_barrier());
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}
