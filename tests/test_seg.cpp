/* Segments: collective create/destroy of host (and GPU) segments allocated by Kyoyu or given by the user,
 * sizes that differ per rank (0 included), seg_local / seg_size, and many segments alive at once. */
#include <unistd.h>

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

/* The file behind the mapping that holds p in this process, from the kernel's list of mappings (not from
 * Kyoyu): "" for anonymous memory, "(none)" if no mapping holds it. */
static std::string mapping_of(const void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return "(no /proc/self/maps)";
    char line[4096];
    std::string where = "(none)";
    while (fgets(line, sizeof line, f)) {
        unsigned long lo = 0, hi = 0;
        int used = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &used) < 2) continue;
        if ((uintptr_t)p < lo || (uintptr_t)p >= hi) continue;
        where = line + used;
        while (!where.empty() && (where.back() == '\n' || where.back() == ' ')) where.pop_back();
        break;
    }
    fclose(f);
    return where;
}

/* Host pieces Kyoyu allocates, of odd sizes that differ per rank: page-aligned, zero-filled, reachable by
 * every other rank's put and get to their last byte and not one byte further (UCX rounds its allocations up
 * to pages), whoever allocated them. And who did: where UCX carries them and no same-node rank maps them
 * (every rank its own node, or KY_PATH_HOST=mpi) UCX's own shared memory, not Kyoyu's POSIX shared memory
 * (/dev/shm/kyoyu-*), unless KY_SEG_ALLOC=shm asks for the latter (the seg.n2.ucx_shm variant); Kyoyu's
 * everywhere else. */
TEST(SegHost, OddSizesReachableWhoeverAllocated)
{
    const size_t sizes[] = {777, (1u << 20) + 3, 1, 4096 + 1};
    const int me = ky_rank(), n = ky_nranks(), right = (me + 1) % n, left = (me + n - 1) % n;
    const char *alloc = getenv("KY_SEG_ALLOC");
    const bool shm_forced = alloc && !strcmp(alloc, "shm");
    const char *host_path = getenv("KY_PATH_HOST");
    /* no rank of this node maps the piece: alone on the node, or host paths forced through the transport */
    const bool unmapped = ky_local_nranks() == 1 || (host_path && !strcmp(host_path, "mpi"));
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        auto size_of = [&](int r) { return sizes[k] + 2 * (size_t)r; };
        auto salt = [&](int from) { return (uint64_t)(1000 * k + 10 + from); };
        const size_t mine = size_of(me), theirs = size_of(right);
        ky_seg_t seg = nullptr;
        KYT_EXPECT_OK(ky_seg_create(nullptr, mine, KY_MEM_HOST, 0, &seg));
        uint8_t *base = nullptr;
        KYT_EXPECT_OK(ky_seg_local(seg, (void **)&base, nullptr));
        ASSERT_NE(nullptr, base);
        EXPECT_EQ(0u, (uintptr_t)base % page) << mine << " bytes";
        EXPECT_EQ(mine, kyt::check_byte(base, mine, 0))
            << "a fresh piece of " << mine << " bytes is not zero";
        KYT_EXPECT_OK(ky_comm_barrier()); /* checked before the left neighbour writes it */

        std::vector<uint8_t> out(theirs), back(theirs);
        kyt::fill_pattern(out.data(), theirs, salt(me));
        ky_path_t path = KY_PATH_SELF;
        KYT_EXPECT_OK(ky_comm_path(right, seg, out.data(), &path));
        const std::string where = mapping_of(base);
        const bool kyoyu_shm = where.find("/kyoyu-") != std::string::npos;
        if (path == KY_PATH_UCX && unmapped && !shm_forced)
            EXPECT_FALSE(kyoyu_shm) << "UCX should have allocated this piece; it is in " << where;
        else if (right != me)
            EXPECT_TRUE(kyoyu_shm) << "path " << path << ": the piece should be Kyoyu's shared memory, not "
                                   << where;

        /* every byte of the right neighbour's piece, then its last byte alone, then one byte past it */
        KYT_EXPECT_OK(ky_put(right, seg, 0, out.data(), theirs));
        uint8_t last = (uint8_t)(0x5A ^ me);
        out[theirs - 1] = last;
        KYT_EXPECT_OK(ky_put(right, seg, theirs - 1, &last, 1));
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_put(right, seg, theirs, &last, 1));
        KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_get(back.data(), right, seg, 1, theirs));
        KYT_EXPECT_OK(ky_comm_barrier());

        /* the left neighbour's pattern landed here, checked in place */
        std::vector<uint8_t> want(mine);
        kyt::fill_pattern(want.data(), mine, salt(left));
        want[mine - 1] = (uint8_t)(0x5A ^ left);
        EXPECT_TRUE(memcmp(want.data(), base, mine) == 0)
            << "piece of " << mine << " bytes from rank " << left << " differs at "
            << (std::mismatch(want.begin(), want.end(), base).first - want.begin());
        /* and reads back whole from the right neighbour */
        KYT_EXPECT_OK(ky_get(back.data(), right, seg, 0, theirs));
        EXPECT_TRUE(out == back) << "read back " << theirs << " bytes from rank " << right;
        uint64_t v = 0;
        KYT_EXPECT_OK(ky_get_val(right, seg, theirs - 1, 1, &v));
        EXPECT_EQ((uint64_t)last, v);
        KYT_EXPECT_OK(ky_comm_barrier());
        KYT_EXPECT_OK(ky_seg_destroy(seg));
    }
}
