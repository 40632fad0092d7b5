/* Distributed arrays (layer 5): block, cyclic and block-cyclic distributions, halos of width 1..4 (faces,
 * edges, corners), region get/put across owners, owner, affinity ranges, several blocks per rank, a rank
 * subset, stream-ordered GPU exchanges and bad input. Every value is checked against a serial reference
 * written here: a cell's value is a function of its global index, and ownership is recomputed from the
 * distribution's definition (not from Kyoyu's arithmetic). Placement: host, or GPU with KY_TEST_MEMKIND=gpu.
 */
#include <climits>
#include <string>

#include "kyt.h"

namespace {

typedef int64_t val_t;

/* The value a cell with global index g holds after phase `salt`. */
val_t f(const size_t g[], const size_t dims[], int ndim, int salt)
{
    val_t lin = 0;
    for (int d = 0; d < ndim; d++) lin = lin * (val_t)dims[d] + (val_t)g[d];
    return 1 + lin + (val_t)salt * 1000000007;
}

/* Reference ownership along one dimension, straight from the definitions in array.h. */
int ref_part(int kind, size_t bsize, int P, size_t n, size_t g)
{
    if (kind == KY_DIST_CYCLIC) return (int)(g / (bsize ? bsize : 1) % (size_t)P);
    for (int i = 0; i < P; i++)
        if ((size_t)i * n / P <= g && g < (size_t)(i + 1) * n / P) return i;
    return -1;
}

struct Config {
    const char *name;
    int ndim;
    size_t dims[4];
    ky_dist_t dist;
    int halo[4];
};

ky_place_t placement()
{
    return kyt::memkinds()[0] == KY_MEM_GPU ? KY_PLACE_GPU : KY_PLACE_HOST;
}

/* The configurations every rank count runs (parts derived from the rank count). */
std::vector<Config> configs(int n, int bpr_gpu)
{
    std::vector<Config> v;
    auto add = [&](const char *name, int ndim, std::vector<size_t> dims, std::vector<int> kind,
                   std::vector<size_t> bs, std::vector<int> parts, std::vector<int> halo, int first = 0,
                   int count = 0, int bpr = 1) {
        Config c;
        memset(&c, 0, sizeof c);
        c.name = name;
        c.ndim = ndim;
        for (int d = 0; d < ndim; d++) {
            c.dims[d] = dims[d];
            c.dist.kind[d] = kind[d];
            c.dist.bsize[d] = bs[d];
            c.dist.parts[d] = parts[d];
            c.halo[d] = halo[d];
        }
        c.dist.first = first;
        c.dist.count = count;
        c.dist.blocks_per_rank = bpr;
        v.push_back(c);
    };
    const int B = KY_DIST_BLOCK, C = KY_DIST_CYCLIC;
    for (int w = 1; w <= 4; w++) /* z-distributed 3-D, halo width w on every side (the stencil's layout) */
        add("z3d", 3, {(size_t)(4 * n + 3 + w), 5, 6}, {B, B, B}, {0, 0, 0}, {n, 1, 1},
            {w, 1, w > 2 ? 2 : 0});
    /* whole 40 x 40 planes: with KY_STAGE_CHUNK=4K a GPU halo goes to another node in 13 chunks */
    add("z3d_planes", 3, {(size_t)(4 * n + 9), 40, 40}, {B, B, B}, {0, 0, 0}, {n, 1, 1}, {4, 0, 0});
    add("1d", 1, {37}, {B}, {0}, {n}, {2});
    if (n == 4)
        add("2x2", 2, {13, 11}, {B, B}, {0, 0}, {2, 2}, {2, 3}); /* corners from diagonal neighbours */
    else
        add("nx1x1", 3, {(size_t)(3 * n + 2), 7, 5}, {B, B, B}, {0, 0, 0}, {n, 1, 1}, {3, 2, 1});
    add("3d_grid", 3, {9, 8, 10}, {B, B, B}, {0, 0, 0}, {1, n, 1}, {1, 1, 1});
    add("cyclic", 2, {23, 7}, {C, B}, {1, 0}, {n, 1}, {0, 1});
    add("blockcyclic", 2, {6, 29}, {B, C}, {0, 3}, {1, n}, {2, 0});
    add("4d", 4, {3, (size_t)(2 * n + 1), 4, 5}, {B, B, B, B}, {0, 0, 0, 0}, {1, n, 1, 1}, {1, 2, 1, 1});
    if (n >= 3) add("subset", 2, {17, 6}, {B, B}, {0, 0}, {n - 1, 1}, {2, 1}, 1, n - 1);
    int bpr = placement() == KY_PLACE_GPU ? bpr_gpu : 2;
    if (bpr >= 2)
        add("blocks_per_rank", 3, {(size_t)(5 * n * bpr), 4, 6}, {B, B, B}, {0, 0, 0}, {n * bpr, 1, 1},
            {2, 0, 1}, 0, 0, bpr);
    return v;
}

/* Host image of block k: padded extents, strides, and the offset of local index 0. */
struct Block {
    std::vector<val_t> v;
    size_t E[4], S[4], lo[4], hi[4], origin = 0, total = 1;
    void *ptr = nullptr;
    int dev = -1;
};

Block read_block(ky_array_t a, int ndim, const int halo[], int k)
{
    Block b;
    ky_array_local_n(a, k, &b.ptr, b.lo, b.hi);
    ky_array_layout(a, k, b.E, b.S);
    ky_array_device(a, k, &b.dev);
    for (int d = 0; d < ndim; d++) {
        b.total *= b.E[d];
        b.origin += (size_t)halo[d] * b.S[d];
    }
    b.v.assign(b.total, 0);
    const val_t *base = (const val_t *)b.ptr - b.origin;
#ifdef KY_TEST_HAVE_CUDA
    if (b.dev >= 0) {
        cudaSetDevice(b.dev);
        cudaMemcpy(b.v.data(), base, b.total * sizeof(val_t), cudaMemcpyDeviceToHost);
        return b;
    }
#endif
    memcpy(b.v.data(), base, b.total * sizeof(val_t));
    return b;
}

/* Write the host image back (halos included). */
void write_block(const Block &b)
{
    val_t *base = (val_t *)b.ptr - b.origin;
#ifdef KY_TEST_HAVE_CUDA
    if (b.dev >= 0) {
        cudaSetDevice(b.dev);
        cudaMemcpy(base, b.v.data(), b.total * sizeof(val_t), cudaMemcpyHostToDevice);
        /* from pageable memory cudaMemcpy may return before the data lands; other ranks read it next */
        cudaDeviceSynchronize();
        return;
    }
#endif
    memcpy(base, b.v.data(), b.total * sizeof(val_t));
}

/* Visit every padded cell of a block: f(linear index in the image, global index, inside the domain, owned).
 */
void for_cells(const Config &c, ky_array_t a, int k, const Block &b,
               const std::function<void(size_t, const size_t *, bool, bool)> &fn)
{
    long idx[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < b.total; i++) {
        size_t rem = i, g[4] = {0, 0, 0, 0};
        bool inside = true, owned = true;
        for (int d = 0; d < c.ndim; d++) {
            idx[d] = (long)(rem / b.S[d]) - c.halo[d];
            rem %= b.S[d];
            long n = (long)(b.hi[d] - b.lo[d]);
            if (idx[d] < 0 || idx[d] >= n) owned = false;
            if (c.dist.kind[d] == KY_DIST_CYCLIC) {
                if (idx[d] < 0 || idx[d] >= n) {
                    inside = false;
                    continue;
                }
                ky_array_global_index(a, k, d, (size_t)idx[d], &g[d]);
            } else {
                long gg = (long)b.lo[d] + idx[d];
                if (gg < 0 || gg >= (long)c.dims[d]) inside = false;
                g[d] = gg < 0 ? 0 : (size_t)gg;
            }
        }
        fn(i, g, inside, owned);
    }
}

void fill_owned(const Config &c, ky_array_t a, int salt)
{
    int nl = ky_array_nlocal(a);
    for (int k = 0; k < nl; k++) {
        Block b = read_block(a, c.ndim, c.halo, k);
        for_cells(c, a, k, b, [&](size_t i, const size_t *g, bool inside, bool owned) {
            if (owned && inside) b.v[i] = f(g, c.dims, c.ndim, salt);
        });
        write_block(b);
    }
}

/* Every owned cell holds f(salt) and every halo cell inside the domain holds the neighbour's f(salt); halo
 * cells outside the domain still hold 0. Returns the number of wrong cells (first printed). */
size_t check_block_values(const Config &c, ky_array_t a, int salt, bool halos)
{
    size_t bad = 0;
    for (int k = 0; k < ky_array_nlocal(a); k++) {
        Block b = read_block(a, c.ndim, c.halo, k);
        for_cells(c, a, k, b, [&](size_t i, const size_t *g, bool inside, bool owned) {
            if (!owned && !halos) return;
            val_t want = inside ? f(g, c.dims, c.ndim, salt) : 0;
            if (b.v[i] != want && bad++ == 0)
                ADD_FAILURE() << c.name << " rank " << ky_rank() << " block " << k << " cell " << i
                              << (owned ? " (owned)" : " (halo)") << ": " << b.v[i] << " != " << want;
        });
    }
    return bad;
}

class Array : public ::testing::Test {
  protected:
    ky_place_t place = KY_PLACE_HOST;
    int bpr_gpu = 1;
    void SetUp() override
    {
        place = placement();
        if (place == KY_PLACE_GPU && !kyt::gpu_everywhere())
            GTEST_SKIP() << "GPU placement: no GPU on some rank or tests built without CUDA";
        int g = ky_ngpus();
        int mn = 1000 - (int)kyt::max((uint64_t)(1000 - g)); /* fewest GPUs of any rank */
        bpr_gpu = mn >= 2 ? 2 : 1;
    }
};

TEST_F(Array, HaloExchange)
{
    int n = ky_nranks();
    for (const Config &c : configs(n, bpr_gpu)) {
        ky_array_t a = nullptr;
        int st = ky_array_create(c.ndim, c.dims, sizeof(val_t), &c.dist, place, c.halo, &a);
        EXPECT_EQ(KY_OK, st) << c.name << ": " << ky_last_error();
        if (!kyt::all(st == KY_OK)) continue;
        fill_owned(c, a, 1);
        KYT_EXPECT_OK(ky_array_halo_exchange_n(a, nullptr));
        bool ok = check_block_values(c, a, 1, true) == 0;
        /* a second exchange replays the plan with new values */
        fill_owned(c, a, 2);
        KYT_EXPECT_OK(ky_array_halo_exchange_n(a, nullptr));
        ok &= check_block_values(c, a, 2, true) == 0;
        EXPECT_TRUE(kyt::all(ok)) << c.name;
        KYT_EXPECT_OK(ky_array_free(a));
    }
}

/* Which way the halos to other nodes go (KY_HALO_SENDRECV, docs/api.md): one-sided puts (counted on the
 * transport's path) under 0, and under auto where UCX carries them; matched messages (no put counted) under
 * 1, and under auto on the MPI transport. Counted on a replay (the plan's own agreements are behind it), host
 * placement (GPU segments go to UCX only where it moves CUDA memory). */
TEST_F(Array, HaloPathFollowsTransport)
{
    if (place != KY_PLACE_HOST) GTEST_SKIP() << "host placement only";
    if (ky_nnodes() < 2) GTEST_SKIP() << "one node: every halo is a same-node put";
    const char *tp = getenv("KY_TRANSPORT"), *hs = getenv("KY_HALO_SENDRECV");
    bool ucx = tp && !strcmp(tp, "ucx");
    std::string mode = hs && *hs ? hs : "auto";
    bool puts = mode == "0" || (mode == "auto" && ucx);
    ky_path_t path = ucx ? KY_PATH_UCX : KY_PATH_MPI;
    int n = ky_nranks();
    Config c = configs(n, bpr_gpu)[0]; /* z3d: every rank has a neighbour on another node */
    ky_array_t a = nullptr;
    int st = ky_array_create(c.ndim, c.dims, sizeof(val_t), &c.dist, place, c.halo, &a);
    ASSERT_TRUE(kyt::all(st == KY_OK)) << ky_last_error();
    fill_owned(c, a, 7);
    KYT_EXPECT_OK(ky_array_halo_exchange_n(a, nullptr));
    fill_owned(c, a, 8);
    KYT_EXPECT_OK(ky_comm_stats_reset());
    KYT_EXPECT_OK(ky_array_halo_exchange_n(a, nullptr));
    ky_comm_stats_t s;
    KYT_EXPECT_OK(ky_comm_stats(&s));
    if (puts)
        EXPECT_GT(s.ops[path], 0u) << "KY_HALO_SENDRECV=" << mode << ", " << (ucx ? "UCX" : "MPI")
                                   << ": the halos should go as puts";
    else
        EXPECT_EQ(0u, s.ops[path]) << "KY_HALO_SENDRECV=" << mode << ", " << (ucx ? "UCX" : "MPI")
                                   << ": the halos should go as messages";
    EXPECT_TRUE(kyt::all(check_block_values(c, a, 8, true) == 0));
    KYT_EXPECT_OK(ky_array_free(a));
}

/* The split form: two arrays' exchanges in flight at once, ended in the other order, then one again with
 * the _n form; misuse (end without begin, begin twice) is an error and leaves the array usable. */
TEST_F(Array, HaloExchangeBeginEnd)
{
    int n = ky_nranks();
    for (const Config &c : configs(n, bpr_gpu)) {
        ky_array_t a = nullptr, b = nullptr;
        int st = ky_array_create(c.ndim, c.dims, sizeof(val_t), &c.dist, place, c.halo, &a);
        if (!st) st = ky_array_create(c.ndim, c.dims, sizeof(val_t), &c.dist, place, c.halo, &b);
        if (!kyt::all(st == KY_OK)) {
            ADD_FAILURE() << c.name << ": " << ky_last_error();
            continue;
        }
        fill_owned(c, a, 4);
        fill_owned(c, b, 5);
        KYT_EXPECT_OK(ky_array_halo_exchange_begin_n(a, nullptr));
        KYT_EXPECT_OK(ky_array_halo_exchange_begin_n(b, nullptr));
        KYT_EXPECT_OK(ky_array_halo_exchange_end(b));
        KYT_EXPECT_OK(ky_array_halo_exchange_end(a));
        bool ok = check_block_values(c, a, 4, true) == 0 && check_block_values(c, b, 5, true) == 0;
        if (ky_array_nlocal(a) > 0) {
            EXPECT_EQ(KY_ERR_ARG, ky_array_halo_exchange_end(a)) << c.name << ": end without begin";
            EXPECT_NE(nullptr, strstr(ky_last_error(), "no halo exchange of this array is in flight"));
        }
        fill_owned(c, a, 6);
        if (ky_array_nlocal(a) == 1) {
            KYT_EXPECT_OK(ky_array_halo_exchange_begin(a, nullptr));
            EXPECT_EQ(KY_ERR_ARG, ky_array_halo_exchange_begin(a, nullptr)) << c.name << ": begun twice";
        } else
            KYT_EXPECT_OK(ky_array_halo_exchange_begin_n(a, nullptr));
        KYT_EXPECT_OK(ky_array_halo_exchange_end(a));
        ok &= check_block_values(c, a, 6, true) == 0;
        EXPECT_TRUE(kyt::all(ok)) << c.name;
        KYT_EXPECT_OK(ky_array_free(a));
        KYT_EXPECT_OK(ky_array_free(b));
    }
}

TEST_F(Array, RegionGetPut)
{
    int n = ky_nranks(), me = ky_rank();
    for (const Config &c : configs(n, bpr_gpu)) {
        ky_array_t a = nullptr;
        int st = ky_array_create(c.ndim, c.dims, sizeof(val_t), &c.dist, place, c.halo, &a);
        if (!kyt::all(st == KY_OK)) {
            ADD_FAILURE() << c.name << ": " << ky_last_error();
            continue;
        }
        fill_owned(c, a, 3);
        kyt::all(true);
        std::mt19937_64 gen(kyt::mix(kyt::seed(), (uint64_t)me, (uint64_t)c.ndim));
        bool ok = true;
        size_t lo[4], hi[4], ext[4];
        auto random_box = [&]() {
            size_t tot = 1;
            for (int d = 0; d < c.ndim; d++) {
                lo[d] = gen() % c.dims[d];
                hi[d] = lo[d] + 1 + gen() % (c.dims[d] - lo[d]);
                ext[d] = hi[d] - lo[d];
                tot *= ext[d];
            }
            return tot;
        };
        auto box_index = [&](size_t i, size_t *g) {
            for (int d = c.ndim - 1; d >= 0; d--) {
                g[d] = lo[d] + i % ext[d];
                i /= ext[d];
            }
        };
        for (int t = 0; t < 6; t++) { /* gets of random boxes, and the whole array */
            size_t tot = random_box();
            if (t == 0) {
                tot = 1;
                for (int d = 0; d < c.ndim; d++) {
                    lo[d] = 0;
                    hi[d] = ext[d] = c.dims[d];
                    tot *= ext[d];
                }
            }
            std::vector<val_t> buf(tot, -1);
            st = ky_array_get(a, lo, hi, buf.data());
            if (st) {
                ok = false;
                ADD_FAILURE() << ky_last_error();
                break;
            }
            for (size_t i = 0; i < tot; i++) {
                size_t g[4];
                box_index(i, g);
                if (buf[i] != f(g, c.dims, c.ndim, 3)) {
                    ok = false;
                    ADD_FAILURE() << c.name << " get box " << t << " elem " << i << " got " << buf[i]
                                  << " want " << f(g, c.dims, c.ndim, 3) << " lo " << lo[0] << "," << lo[1]
                                  << "," << lo[2] << " hi " << hi[0] << "," << hi[1] << "," << hi[2];
                    break;
                }
            }
        }
        /* rank (n-1) puts one box of salt 4 values; everybody then checks its owned cells and gets it back */
        std::mt19937_64 shared(kyt::mix(kyt::seed(), 99, (uint64_t)c.ndim));
        std::swap(gen, shared);
        size_t tot = random_box();
        std::vector<val_t> src(tot);
        for (size_t i = 0; i < tot; i++) {
            size_t g[4];
            box_index(i, g);
            src[i] = f(g, c.dims, c.ndim, 4);
        }
        kyt::all(true); /* every rank's gets are done before the put changes the values */
        if (me == n - 1) KYT_EXPECT_OK(ky_array_put(a, lo, hi, src.data()));
        kyt::all(true);
        for (int k = 0; k < ky_array_nlocal(a); k++) {
            Block b = read_block(a, c.ndim, c.halo, k);
            for_cells(c, a, k, b, [&](size_t i, const size_t *g, bool inside, bool owned) {
                if (!owned || !inside) return;
                bool in = true;
                for (int d = 0; d < c.ndim; d++) in &= g[d] >= lo[d] && g[d] < hi[d];
                if (b.v[i] != f(g, c.dims, c.ndim, in ? 4 : 3)) ok = false;
            });
        }
        std::vector<val_t> back(tot, 0);
        KYT_EXPECT_OK(ky_array_get(a, lo, hi, back.data()));
        ok &= back == src;
        EXPECT_TRUE(kyt::all(ok)) << c.name;
        KYT_EXPECT_OK(ky_array_free(a));
    }
}

/* A put issued the moment ky_array_create returns must survive: create returned on a fast rank while the
 * owner was still zeroing its block, and the late memset wiped the put (io.h5py's flaky file). Blocks of
 * 4 MiB make the owner's memset long, and the put goes to the last element, which the memset reaches last;
 * every rank then gets the whole array back and compares. */
TEST_F(Array, PutRightAfterCreate)
{
    int n = ky_nranks();
    size_t dims[1] = {(size_t)n * (512 * 1024) + 3}, lo[1] = {0}, last[1] = {dims[0] - 1};
    std::vector<val_t> back(dims[0]);
    val_t v = 12345;
    size_t bad = 0;
    for (int rep = 0; rep < 5; rep++) {
        ky_array_t a = nullptr;
        ky_dist_t dist = ky_dist_block1();
        KYT_EXPECT_OK(ky_array_create(1, dims, sizeof(val_t), &dist, place, nullptr, &a));
        if (ky_rank() == 0) KYT_EXPECT_OK(ky_array_put(a, last, dims, &v));
        ky_comm_barrier();
        KYT_EXPECT_OK(ky_array_get(a, lo, dims, back.data()));
        for (size_t i = 0; i < dims[0]; i++) bad += back[i] != (i == last[0] ? v : 0);
        ky_comm_barrier();
        KYT_EXPECT_OK(ky_array_free(a));
    }
    EXPECT_TRUE(kyt::all(bad == 0)) << bad << " wrong values (the put lost) on rank " << ky_rank();
}

TEST_F(Array, OwnerAndAffinity)
{
    int n = ky_nranks(), me = ky_rank();
    for (const Config &c : configs(n, bpr_gpu)) {
        ky_array_t a = nullptr;
        int st = ky_array_create(c.ndim, c.dims, sizeof(val_t), &c.dist, place, c.halo, &a);
        if (!kyt::all(st == KY_OK)) {
            ADD_FAILURE() << c.name << ": " << ky_last_error();
            continue;
        }
        int count = c.dist.count ? c.dist.count : n - c.dist.first,
            bpr = c.dist.blocks_per_rank ? c.dist.blocks_per_rank : 1;
        bool member = me >= c.dist.first && me < c.dist.first + count;
        bool ok = ky_array_nlocal(a) == (member ? bpr : 0);
        std::mt19937_64 gen(kyt::mix(kyt::seed(), (uint64_t)me, 7));
        for (int t = 0; t < 50; t++) {
            size_t g[4];
            int coord[4], part = 0;
            for (int d = 0; d < c.ndim; d++) {
                g[d] = gen() % c.dims[d];
                coord[d] = ref_part(c.dist.kind[d], c.dist.bsize[d], c.dist.parts[d], c.dims[d], g[d]);
                part = part * c.dist.parts[d] + coord[d];
            }
            int r = -1, k = -1;
            KYT_EXPECT_OK(ky_array_owner(a, g, &r, &k));
            if (r != c.dist.first + part / bpr || k != part % bpr) {
                ok = false;
                ADD_FAILURE() << c.name << ": owner " << r << "/" << k << ", reference "
                              << c.dist.first + part / bpr << "/" << part % bpr;
            }
        }
        /* affinity: for random ranges along every dimension, the indices block k gets are exactly those of
         * the range it owns (by the reference ownership) */
        for (int k = 0; k < ky_array_nlocal(a) || (k == 0 && !member); k++) {
            size_t blo[4] = {0}, bhi[4] = {0};
            if (member) ky_array_local_n(a, k, nullptr, blo, bhi);
            int mypart = member ? (me - c.dist.first) * bpr + k : -1, mc[4] = {0};
            for (int d = c.ndim - 1, p = mypart; d >= 0 && member; d--) {
                mc[d] = p % c.dist.parts[d];
                p /= c.dist.parts[d];
            }
            for (int d = 0; d < c.ndim; d++)
                for (int t = 0; t < 5; t++) {
                    size_t lo = gen() % c.dims[d], hi = lo + gen() % (c.dims[d] - lo + 1), ml = 7, mh = 7;
                    KYT_EXPECT_OK(ky_array_affinity_range_n(a, k, d, lo, hi, &ml, &mh));
                    std::vector<size_t> want, got;
                    for (size_t g = lo; g < hi && member; g++)
                        if (ref_part(c.dist.kind[d], c.dist.bsize[d], c.dist.parts[d], c.dims[d], g) == mc[d])
                            want.push_back(g);
                    for (size_t x = ml; x < mh; x++) {
                        size_t g = x;
                        if (c.dist.kind[d] == KY_DIST_CYCLIC) ky_array_global_index(a, k, d, x, &g);
                        got.push_back(g);
                    }
                    if (want != got) {
                        ok = false;
                        ADD_FAILURE() << c.name << " affinity dim " << d << " [" << lo << "," << hi
                                      << ") -> [" << ml << "," << mh << ")";
                    }
                }
        }
        EXPECT_TRUE(kyt::all(ok)) << c.name;
        KYT_EXPECT_OK(ky_array_free(a));
    }
}

#ifdef KY_TEST_HAVE_CUDA
/* GPU placement: the exchange is ordered after copies queued (not yet finished) on the caller's stream. */
TEST_F(Array, StreamOrdered)
{
    if (place != KY_PLACE_GPU) GTEST_SKIP() << "GPU placement only";
    int n = ky_nranks();
    Config c = configs(n, 1)[3]; /* z3d, halo 4 */
    ky_array_t a = nullptr;
    int st = ky_array_create(c.ndim, c.dims, sizeof(val_t), &c.dist, place, c.halo, &a);
    ASSERT_TRUE(kyt::all(st == KY_OK)) << ky_last_error();
    int dev = -1;
    ky_array_device(a, 0, &dev);
    cudaSetDevice(dev);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    bool ok = true;
    for (int salt = 5; salt < 8; salt++) {
        Block b = read_block(a, c.ndim, c.halo, 0);
        for_cells(c, a, 0, b, [&](size_t i, const size_t *g, bool inside, bool owned) {
            if (owned && inside) b.v[i] = f(g, c.dims, c.ndim, salt);
        });
        val_t *pin = nullptr;
        cudaMallocHost((void **)&pin, b.total * sizeof(val_t));
        memcpy(pin, b.v.data(), b.total * sizeof(val_t));
        val_t *base = (val_t *)b.ptr - b.origin;
        for (int i = 0; i < 16; i++) /* queued work the exchange must wait for */
            cudaMemcpyAsync(base, pin, b.total * sizeof(val_t), cudaMemcpyHostToDevice, s);
        KYT_EXPECT_OK(ky_array_halo_exchange(a, s));
        ok &= check_block_values(c, a, salt, true) == 0;
        cudaFreeHost(pin);
    }
    EXPECT_TRUE(kyt::all(ok));
    cudaStreamDestroy(s);
    KYT_EXPECT_OK(ky_array_free(a));
}
#endif

/* The DSM view: the blocks published into one global allocation that every rank reads through a plain
 * pointer; writes through the view by every rank (interleaved elements, so pages are written by several
 * ranks at once) collected back into the blocks; blocks changed and published again. The reference is f()
 * of the global index, as everywhere in this file. */
TEST_F(Array, DsmView)
{
    void *gb;
    size_t gn;
    if (!kyt::all(ky_gas_range(&gb, &gn) == KY_OK))
        GTEST_SKIP() << "no global address space (KY_PROGRESS_THREAD=0)";
    int n = ky_nranks(), me = ky_rank();
    for (const Config &c : configs(n, bpr_gpu)) {
        ky_array_t a = nullptr;
        int st = ky_array_create(c.ndim, c.dims, sizeof(val_t), &c.dist, place, c.halo, &a);
        if (!kyt::all(st == KY_OK)) {
            ADD_FAILURE() << c.name << ": " << ky_last_error();
            continue;
        }
        size_t total = 1;
        for (int d = 0; d < c.ndim; d++) total *= c.dims[d];
        auto gidx = [&](size_t lin, size_t *g) {
            for (int d = c.ndim - 1; d >= 0; d--) {
                g[d] = lin % c.dims[d];
                lin /= c.dims[d];
            }
        };
        auto check_view = [&](const val_t *v, int salt) {
            for (size_t i = 0; i < total; i++) {
                size_t g[4];
                gidx(i, g);
                if (v[i] != f(g, c.dims, c.ndim, salt)) {
                    ADD_FAILURE() << c.name << " rank " << me << " view element " << i << ": " << v[i]
                                  << " != " << f(g, c.dims, c.ndim, salt) << " (salt " << salt << ")";
                    return false;
                }
            }
            return true;
        };
        fill_owned(c, a, 5);
        void *base = nullptr;
        KYT_EXPECT_OK(ky_array_dsm_view(a, &base));
        ASSERT_TRUE(ky_is_global(base)) << c.name;
        const val_t *v = (const val_t *)base;
        bool ok = check_view(v, 5);
        /* a second call returns the same view */
        void *again = nullptr;
        KYT_EXPECT_OK(ky_array_dsm_view(a, &again));
        ok &= again == base;
        /* every rank writes every n-th element through the view, then collect */
        for (size_t i = (size_t)me; i < total; i += (size_t)n) {
            size_t g[4];
            gidx(i, g);
            ((val_t *)base)[i] = f(g, c.dims, c.ndim, 6);
        }
        KYT_EXPECT_OK(ky_array_dsm_collect(a));
        ok &= check_block_values(c, a, 6, false) == 0;
        ok &= check_view(v, 6);
        /* the blocks change; publish shows the new values to every rank */
        kyt::all(true); /* everybody has read the view before the blocks change (not needed, but clearer) */
        fill_owned(c, a, 7);
        KYT_EXPECT_OK(ky_array_dsm_publish(a));
        ok &= check_view(v, 7);
        EXPECT_TRUE(kyt::all(ok)) << c.name;
        KYT_EXPECT_OK(ky_array_free(a));
    }
}

/* The view's homes are the blocks: a 3-D array of 24-byte elements (so elements straddle page boundaries)
 * over many pages, block-distributed along z with halos and cyclic along y. Checked: every rank reads the
 * whole array through the view; ky_home_of of every element is its owner by the distribution's definition;
 * interleaved writes of every rank (several ranks per page, straddling elements too) reach the blocks at a
 * barrier (read back with ky_array_get); a preloaded box reads with no fault; a counter element updated under
 * a lock by every rank and its threads; fetch_add and push refused. */
struct Elem3 {
    int64_t v[3];
};

TEST_F(Array, DsmViewHomesAreBlocks)
{
    void *gb;
    size_t gn;
    if (!kyt::all(ky_gas_range(&gb, &gn) == KY_OK))
        GTEST_SKIP() << "no global address space (KY_PROGRESS_THREAD=0)";
    int n = ky_nranks(), me = ky_rank();
    const size_t dims[3] = {(size_t)(3 * n + 2), 37, 29};
    const size_t total = dims[0] * dims[1] * dims[2];
    ky_dist_t dist;
    memset(&dist, 0, sizeof dist);
    const int kinds[2][3] = {{KY_DIST_BLOCK, KY_DIST_BLOCK, KY_DIST_BLOCK},
                             {KY_DIST_BLOCK, KY_DIST_CYCLIC, KY_DIST_BLOCK}};
    for (int variant = 0; variant < 2; variant++) {
        for (int d = 0; d < 3; d++) {
            dist.kind[d] = kinds[variant][d];
            dist.bsize[d] = d == 1 && variant == 1 ? 2 : 0;
            dist.parts[d] = d == variant ? n : 1; /* z blocks, or y cyclic blocks of 2 rows */
        }
        dist.blocks_per_rank = 1;
        const int halo[3] = {variant == 0 ? 2 : 0, 0, 1};
        std::string name = variant == 0 ? "z-blocks" : "y-cyclic";
        ky_array_t a = nullptr;
        ASSERT_TRUE(kyt::all(ky_array_create(3, dims, sizeof(Elem3), &dist, place, halo, &a) == KY_OK))
            << ky_last_error();
        auto val = [&](size_t e, int salt) {
            Elem3 x;
            for (int c = 0; c < 3; c++) x.v[c] = (int64_t)(e * 3 + (size_t)c) + (int64_t)salt * 1000003;
            return x;
        };
        /* each owner fills its block through ky_array_put of its own box */
        size_t lo[3], hi[3];
        void *ptr = nullptr;
        KYT_EXPECT_OK(ky_array_local_n(a, 0, &ptr, lo, hi));
        std::vector<Elem3> box;
        for (size_t z = lo[0]; z < hi[0]; z++)
            for (size_t y = lo[1]; y < hi[1]; y++)
                for (size_t x = lo[2]; x < hi[2]; x++) box.push_back(val((z * dims[1] + y) * dims[2] + x, 1));
        if (variant == 0)
            KYT_EXPECT_OK(ky_array_put(a, lo, hi, box.data()));
        else { /* cyclic: the owner's rows are not one box; one row at a time */
            for (size_t y = 0; y < dims[1]; y++) {
                if ((int)(y / 2 % (size_t)n) != me) continue;
                for (size_t z = 0; z < dims[0]; z++) {
                    std::vector<Elem3> row;
                    for (size_t x = 0; x < dims[2]; x++)
                        row.push_back(val((z * dims[1] + y) * dims[2] + x, 1));
                    size_t l[3] = {z, y, 0}, h[3] = {z + 1, y + 1, dims[2]};
                    KYT_EXPECT_OK(ky_array_put(a, l, h, row.data()));
                }
            }
        }
        Elem3 *v = nullptr;
        KYT_EXPECT_OK(ky_array_dsm_view(a, (void **)&v));
        ASSERT_TRUE(kyt::all(v != nullptr)) << name;
        long bad = 0, bad_home = 0;
        for (size_t e = 0; e < total; e++) {
            Elem3 w = val(e, 1);
            if (memcmp(&v[e], &w, sizeof w)) bad++;
            size_t z = e / (dims[1] * dims[2]), y = e / dims[2] % dims[1];
            int owner = variant == 0 ? ref_part(KY_DIST_BLOCK, 0, n, dims[0], z) : (int)(y / 2 % (size_t)n);
            if (ky_home_of(&v[e]) != owner) bad_home++;
        }
        EXPECT_EQ(0, bad) << name << ": rank " << me << " read wrong elements through the view";
        EXPECT_EQ(0, bad_home) << name << ": rank " << me << " ky_home_of differs from the distribution";
        /* interleaved writes: element e by rank e % n */
        for (size_t e = (size_t)me; e < total; e += (size_t)n) v[e] = val(e, 2);
        KYT_EXPECT_OK(ky_array_dsm_collect(a));
        std::vector<Elem3> all(total);
        size_t zero[3] = {0, 0, 0};
        KYT_EXPECT_OK(ky_array_get(a, zero, dims, all.data()));
        bad = 0;
        for (size_t e = 0; e < total; e++) {
            Elem3 w = val(e, 2);
            if (memcmp(&all[e], &w, sizeof w)) bad++;
        }
        EXPECT_EQ(0, bad) << name << ": rank " << me
                          << " found elements written through the view missing in the blocks";
        /* 4 threads of every rank fault on the same and on different pages at once, after a publish */
        KYT_EXPECT_OK(ky_array_dsm_publish(a));
        std::atomic<long> tbad{0};
        std::vector<std::thread> readers;
        for (int t = 0; t < 4; t++)
            readers.emplace_back([&, t] {
                for (size_t i = 0; i < total; i++) {
                    size_t e = (i + (size_t)t * total / 4) % total; /* each starts a quarter further on */
                    Elem3 w = val(e, 2);
                    if (memcmp(&v[e], &w, sizeof w)) tbad++;
                }
            });
        for (auto &t : readers) t.join();
        EXPECT_EQ(0, tbad.load()) << name << ": rank " << me
                                  << " threads read wrong elements through the view";
        /* a preloaded box (two planes in the middle) reads without a fault */
        size_t glb[3] = {dims[0], dims[1], dims[2]}, reg[3] = {2, dims[1], dims[2]};
        Elem3 *corner = v + (dims[0] / 2 - 1) * dims[1] * dims[2];
        KYT_EXPECT_OK(ky_preload_array(corner, glb, reg, 3, sizeof(Elem3), 0));
        ky_dsm_stats_t s0, s1;
        KYT_EXPECT_OK(ky_dsm_stats(&s0));
        bad = 0;
        for (size_t i = 0; i < 2 * dims[1] * dims[2]; i++) {
            size_t e = (size_t)(corner - v) + i;
            Elem3 w = val(e, 2);
            if (memcmp(&corner[i], &w, sizeof w)) bad++;
        }
        KYT_EXPECT_OK(ky_dsm_stats(&s1));
        EXPECT_EQ(0, bad) << name;
        EXPECT_EQ(s0.read_faults, s1.read_faults) << name << ": reading a preloaded box of the view faulted";
        /* a counter in the view, incremented under a lock by every rank's 3 threads */
        KYT_EXPECT_OK(ky_barrier());
        int64_t *counter = &v[total / 2].v[1];
        std::vector<std::thread> th;
        for (int t = 0; t < 3; t++)
            th.emplace_back([&] {
                for (int i = 0; i < 4; i++) {
                    EXPECT_EQ(KY_OK, ky_lock(3));
                    *counter += 1;
                    EXPECT_EQ(KY_OK, ky_unlock(3));
                }
            });
        for (auto &t : th) t.join();
        KYT_EXPECT_OK(ky_barrier());
        Elem3 c;
        size_t cl[3] = {total / 2 / (dims[1] * dims[2]), total / 2 / dims[2] % dims[1], total / 2 % dims[2]};
        size_t ch[3] = {cl[0] + 1, cl[1] + 1, cl[2] + 1};
        KYT_EXPECT_OK(ky_array_get(a, cl, ch, &c));
        EXPECT_EQ(val(total / 2, 2).v[1] + 12 * n, c.v[1])
            << name << ": locked increments through the view lost";
        EXPECT_EQ(val(total / 2, 2).v[1] + 12 * n, *counter) << name;
        /* what a view cannot do */
        EXPECT_EQ(LONG_MIN, kyt::fadd((long *)&v[0].v[0], 1));
        EXPECT_NE(std::string::npos, std::string(ky_last_error()).find("DSM view")) << ky_last_error();
        size_t one[3] = {1, 1, 1};
        KYT_EXPECT_STATUS(KY_ERR_UNSUPPORTED, ky_push_array(v, glb, one, 3, sizeof(Elem3), (me + 1) % n));
        EXPECT_TRUE(kyt::all(!HasFailure())) << name;
        KYT_EXPECT_OK(ky_array_free(a));
    }
}

/* The view over rows of one page each, block-distributed, 4 per rank (ky_bench_dsm's view case): in host or
 * GPU memory (KY_TEST_MEMKIND=gpu; on a machine of one GPU all ranks' blocks are on that device, so the
 * view's gets and puts are CUDA IPC copies within one GPU, or staged through the owner with KY_PATH_GPU=mpi).
 * Three rounds of: the owner writes its block directly (a device copy with GPU placement) and publishes;
 * every rank reads the next rank's rows through the view, a fault per page into the DSM's host page, and
 * compares them with ky_array_get; every rank rewrites the next rank's rows through the view (whole pages of
 * diffs) and collects; the owner finds them in its block (read back by a device copy, never a host load of a
 * GPU block); the owner rewrites its rows with ky_array_put, publishes, and every rank reads the whole array.
 */
TEST_F(Array, DsmViewPageRows)
{
    void *gb;
    size_t gn;
    if (!kyt::all(ky_gas_range(&gb, &gn) == KY_OK))
        GTEST_SKIP() << "no global address space (KY_PROGRESS_THREAD=0)";
    const int n = ky_nranks(), me = ky_rank(), next = (me + 1) % n;
    const size_t R = 4, cols = ky_page_size() / sizeof(val_t);
    Config c;
    memset(&c, 0, sizeof c);
    c.name = "page_rows";
    c.ndim = 2;
    c.dims[0] = (size_t)n * R;
    c.dims[1] = cols;
    c.dist.kind[0] = c.dist.kind[1] = KY_DIST_BLOCK;
    c.dist.parts[0] = n;
    c.dist.parts[1] = 1;
    c.dist.blocks_per_rank = 1;
    ky_array_t a = nullptr;
    ASSERT_TRUE(kyt::all(ky_array_create(2, c.dims, sizeof(val_t), &c.dist, place, c.halo, &a) == KY_OK))
        << ky_last_error();
    size_t lo[2], hi[2];
    void *blk = nullptr;
    KYT_EXPECT_OK(ky_array_local_n(a, 0, &blk, lo, hi));
    EXPECT_EQ((size_t)me * R, lo[0]);
    EXPECT_EQ(R, hi[0] - lo[0]);
    int dev = -2;
    KYT_EXPECT_OK(ky_array_device(a, 0, &dev));
    EXPECT_EQ(place == KY_PLACE_GPU, dev >= 0) << "block 0 on device " << dev;
    val_t *v = nullptr;
    KYT_EXPECT_OK(ky_array_dsm_view(a, (void **)&v));
    ASSERT_TRUE(kyt::all(v != nullptr));
    auto want = [&](size_t row, size_t col, int salt) {
        size_t g[2] = {row, col};
        return f(g, c.dims, 2, salt);
    };
    std::vector<val_t> buf(cols);
    long bad_read = 0, bad_get = 0, bad_all = 0;
    size_t bad_block = 0;
    for (int round = 0; round < 3; round++) {
        const int salt = 20 + 3 * round;
        kyt::all(true); /* nobody reads the view of the last round any more: the owners change their blocks */
        fill_owned(c, a, salt);
        KYT_EXPECT_OK(ky_array_dsm_publish(a));
        /* one element of each of the next rank's rows (a fault per page), then the rows whole */
        for (size_t i = 0; i < R; i++) {
            size_t row = (size_t)next * R + i;
            if (((volatile val_t *)v)[row * cols + 8] != want(row, 8, salt)) bad_read++;
        }
        for (size_t i = 0; i < R; i++) {
            size_t row = (size_t)next * R + i, l[2] = {row, 0}, h[2] = {row + 1, cols};
            KYT_EXPECT_OK(ky_array_get(a, l, h, buf.data()));
            for (size_t j = 0; j < cols; j++)
                if (buf[j] != v[row * cols + j] || buf[j] != want(row, j, salt)) bad_get++;
        }
        /* the next rank's rows rewritten through the view: every element, so every page is a whole diff */
        for (size_t i = 0; i < R; i++)
            for (size_t j = 0; j < cols; j++) {
                size_t row = (size_t)next * R + i;
                v[row * cols + j] = want(row, j, salt + 1);
            }
        KYT_EXPECT_OK(ky_array_dsm_collect(a));
        bad_block += check_block_values(c, a, salt + 1, false);
        /* the owner's own rows through ky_array_put; after publish everybody reads them */
        std::vector<val_t> mine(R * cols);
        for (size_t i = 0; i < R; i++)
            for (size_t j = 0; j < cols; j++) mine[i * cols + j] = want(lo[0] + i, j, salt + 2);
        KYT_EXPECT_OK(ky_array_put(a, lo, hi, mine.data()));
        KYT_EXPECT_OK(ky_array_dsm_publish(a));
        for (size_t e = 0; e < c.dims[0] * cols; e++)
            if (v[e] != want(e / cols, e % cols, salt + 2)) bad_all++;
    }
    EXPECT_EQ(0, bad_read) << "rank " << me << ": wrong elements read through the view";
    EXPECT_EQ(0, bad_get) << "rank " << me << ": view and ky_array_get disagree";
    EXPECT_EQ(0u, bad_block) << "rank " << me << ": rows written through the view missing in the block";
    EXPECT_EQ(0, bad_all) << "rank " << me << ": rows put by their owners not seen through the view";
    EXPECT_TRUE(kyt::all(!HasFailure()));
    KYT_EXPECT_OK(ky_array_free(a));
}

TEST_F(Array, DsmViewBadInput)
{
    void *base = (void *)1;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_dsm_view(nullptr, &base));
    size_t dims[2] = {8, 3};
    ky_array_t a = nullptr;
    ASSERT_TRUE(kyt::all(ky_array_create(2, dims, 8, nullptr, place, nullptr, &a) == KY_OK))
        << ky_last_error();
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_dsm_view(a, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_STATE, ky_array_dsm_publish(a));
    EXPECT_NE(std::string::npos, std::string(ky_last_error()).find("ky_array_dsm_view first"))
        << ky_last_error();
    KYT_EXPECT_STATUS(KY_ERR_STATE, ky_array_dsm_collect(a));
    KYT_EXPECT_OK(ky_array_free(a));
}

/* Bad input: every rank passes the same bad arguments; the collective create fails everywhere with a
 * message naming the rank, the call and the cause. */
TEST_F(Array, BadInput)
{
    int n = ky_nranks();
    size_t dims[4] = {16, 4, 4, 4};
    int halo[4] = {1, 0, 0, 0};
    ky_array_t a = nullptr;
    std::string prefix = "rank " + std::to_string(ky_rank()) + ": ky_array_create: ";
    auto expect_fail = [&](int want, int ndim, const size_t *d, size_t elem, const ky_dist_t *dist, int pl,
                           const int *h, ky_array_t *out, const char *cause) {
        int s = ky_array_create(ndim, d, elem, dist, (ky_place_t)pl, h, out);
        EXPECT_EQ(want, s) << cause;
        std::string msg = ky_last_error();
        EXPECT_EQ(0u, msg.find(prefix)) << msg;
        EXPECT_NE(std::string::npos, msg.find(cause)) << msg;
    };
    expect_fail(KY_ERR_ARG, 0, dims, 8, nullptr, place, halo, &a, "ndim 0");
    expect_fail(KY_ERR_ARG, 5, dims, 8, nullptr, place, halo, &a, "ndim 5");
    expect_fail(KY_ERR_ARG, 2, nullptr, 8, nullptr, place, halo, &a, "dims is NULL");
    expect_fail(KY_ERR_ARG, 2, dims, 0, nullptr, place, halo, &a, "element size 0");
    expect_fail(KY_ERR_ARG, 2, dims, 8, nullptr, 7, halo, &a, "placement 7");
    expect_fail(KY_ERR_ARG, 2, dims, 8, nullptr, place, halo, nullptr, "out is NULL");
    size_t zero[2] = {0, 4};
    expect_fail(KY_ERR_ARG, 2, zero, 8, nullptr, place, halo, &a, "dims[0] = 0");
    int neg[2] = {-1, 0};
    expect_fail(KY_ERR_ARG, 2, dims, 8, nullptr, place, neg, &a, "halo[0] = -1");
    int wide[2] = {16 / n + 1, 0};
    expect_fail(KY_ERR_ARG, 2, dims, 8, nullptr, place, wide, &a, "wider than part");
    ky_dist_t cyc = ky_dist_block1();
    cyc.kind[0] = KY_DIST_CYCLIC;
    if (n > 1)
        expect_fail(KY_ERR_ARG, 2, dims, 8, &cyc, place, halo, &a, "cyclic over"); /* one rank: valid */
    ky_dist_t grid = ky_dist_block1();
    grid.parts[0] = n + 1;
    grid.parts[1] = 1;
    expect_fail(KY_ERR_ARG, 2, dims, 8, &grid, place, halo, &a, "grid of parts has");
    ky_dist_t range = ky_dist_block1();
    range.first = n;
    range.count = 1;
    expect_fail(KY_ERR_ARG, 2, dims, 8, &range, place, halo, &a, "rank range");
    ky_dist_t kind = ky_dist_block1();
    kind.kind[1] = 9;
    expect_fail(KY_ERR_ARG, 2, dims, 8, &kind, place, halo, &a, "distribution 9");
    if (!kyt::have_cuda() || ky_ngpus() == 0) /* (collective agreement: all ranks alike in CI) */
        if (kyt::all(ky_ngpus() == 0))
            expect_fail(KY_ERR_UNSUPPORTED, 2, dims, 8, nullptr, KY_PLACE_GPU, halo, &a, "GPU placement");
    /* ranks passing different shapes are caught */
    size_t mine[2] = {16, (size_t)(4 + (ky_rank() == 0))};
    if (n > 1) EXPECT_EQ(KY_ERR_ARG, ky_array_create(2, mine, 8, nullptr, place, halo, &a));

    /* calls on a valid array */
    ASSERT_TRUE(kyt::all(ky_array_create(2, dims, 8, nullptr, place, halo, &a) == KY_OK)) << ky_last_error();
    size_t lo[2] = {0, 0}, hi[2] = {17, 4}, idx[2] = {16, 0}, ml, mh;
    std::vector<val_t> buf(17 * 4);
    int r;
    KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_array_get(a, lo, hi, buf.data()));
    EXPECT_NE(std::string::npos, std::string(ky_last_error()).find("ky_array_get: box")) << ky_last_error();
    hi[0] = 16;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_put(a, lo, hi, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_get(nullptr, lo, hi, buf.data()));
    KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_array_owner(a, idx, &r, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_owner(a, nullptr, &r, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_affinity_range(a, 2, 0, 1, &ml, &mh));
    KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_array_affinity_range(a, 0, 3, 17, &ml, &mh));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_affinity_range(a, 0, 0, 1, nullptr, &mh));
    void *p = (void *)1;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_local_n(a, 1, &p, nullptr, nullptr));
    EXPECT_EQ(nullptr, p);
    EXPECT_EQ(nullptr, ky_array_local(nullptr, nullptr, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_layout(a, -1, nullptr, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_halo_exchange(nullptr, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_array_nlocal(nullptr));
    size_t g;
    KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_array_global_index(a, 0, 0, 1000, &g));
    KYT_EXPECT_OK(ky_array_free(a));
    KYT_EXPECT_OK(ky_array_free(nullptr));
}

}  // namespace
