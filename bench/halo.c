/* Kyoyu benchmark: halo exchange of the three faces of an N^3 double array (seed 004's evaluation).
 *
 * Each of 2 ranks holds a[i][j][k] (k fastest, N^3 doubles) in a Kyoyu segment (GPU memory with --mem gpu,
 * else host) and exchanges one face with the other rank: its plane at index N-1 goes into the partner's
 * plane at index 0, in both directions at once. The faces of seed 004:
 *   jk  (i fixed)  one contiguous block of N*N doubles                        (block)
 *   ik  (j fixed)  N blocks of N contiguous doubles, stride N*N               (block-stride)
 *   ij  (k fixed)  N*N single doubles, stride N                               (element stride)
 * Kyoyu: ky_put_strided() of the face (the same transfer every iteration, so it is planned once and then
 * replayed from the plan cache; plan hits are reported) followed by ky_am_short() to tell the partner; each
 * rank waits for the partner's notification (seed 004: put()/puts() + AM_Short()).
 * Baseline, written the way an MPI user would: host memory: MPI_Sendrecv with an MPI datatype describing
 * the face (MPI_Type_contiguous / MPI_Type_vector) straight on the array. GPU memory: cudaMemcpy of the
 * bounding slab of the face to a pinned host mirror of the array, MPI_Sendrecv with the datatype on the
 * mirror, cudaMemcpy of the bounding slab of the received face back to the GPU.
 * Time per exchange = median over iterations of the per-rank times, the larger of the two ranks. Every
 * size verifies once, for Kyoyu and the baseline, that the received face holds the partner's values (the
 * destination is poisoned first). Sizes that do not fit in memory are skipped. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "bench_util.h"

#define H_HALO 3
enum { F_JK, F_IK, F_IJ, F_COUNT };
static const char *face_names[F_COUNT] = {"jk", "ik", "ij"};

static int me, peer, use_gpu, dev = -1;
static volatile uint64_t halo_got; /* notifications received (bumped by the handler) */
static uint64_t halo_total;        /* exchanges done, counted the same on both ranks */

typedef struct {
    size_t N;
    size_t src_off, dst_off; /* element offsets of the face's first element */
    size_t count[3];         /* GASNet VIS: count[0] bytes, count[1..levels] blocks */
    size_t stride[2];        /* bytes */
    int levels;
    size_t span; /* elements from the first to one past the last element of the face */
    MPI_Datatype type;
} face_t;

static void face_setup(face_t *f, int face, size_t N)
{
    memset(f, 0, sizeof *f);
    f->N = N;
    const size_t e = sizeof(double);
    switch (face) {
        case F_JK:
            f->src_off = (N - 1) * N * N;
            f->count[0] = N * N * e;
            f->levels = 0;
            f->span = N * N;
            MPI_Type_contiguous((int)(N * N), MPI_DOUBLE, &f->type);
            break;
        case F_IK:
            f->src_off = (N - 1) * N;
            f->count[0] = N * e;
            f->count[1] = N;
            f->stride[0] = N * N * e;
            f->levels = 1;
            f->span = (N - 1) * N * N + N;
            MPI_Type_vector((int)N, (int)N, (int)(N * N), MPI_DOUBLE, &f->type);
            break;
        default:
            f->src_off = N - 1;
            f->count[0] = e;
            f->count[1] = N;
            f->count[2] = N;
            f->stride[0] = N * e;
            f->stride[1] = N * N * e;
            f->levels = 2;
            f->span = (N * N - 1) * N + 1;
            MPI_Type_vector((int)(N * N), 1, (int)N, MPI_DOUBLE, &f->type);
            break;
    }
    f->dst_off = 0;
    MPI_Type_commit(&f->type);
}

/* Element index of the m-th element of the face (m < N*N), relative to the face's first element. */
static size_t face_elem(const face_t *f, size_t m)
{
    size_t N = f->N;
    if (f->levels == 0) return m;
    if (f->levels == 1) return (m / N) * N * N + (m % N);
    return m * N;
}

static double value_of(int rank, size_t idx)
{
    return (double)rank * 1e12 + (double)idx;
}

static void h_halo(ky_am_token_t tok, void *payload, size_t nbytes, const uint64_t *args, int nargs)
{
    (void)tok, (void)payload, (void)nbytes, (void)args, (void)nargs;
    __atomic_add_fetch(&halo_got, 1, __ATOMIC_RELEASE);
}

/* ---- the two exchanges -------------------------------------------------------------------------- */

static void ky_exchange(ky_seg_t seg, double *a, const face_t *f)
{
    uint64_t id = ++halo_total;
    BU_KY(ky_put_strided(peer, seg, f->dst_off * sizeof(double), f->stride, a + f->src_off, f->stride,
                         f->count, f->levels));
    BU_KY(ky_am_short(peer, H_HALO, &id, 1));
    bu_wait_u64(&halo_got, id, "halo notification");
}

static void mpi_exchange(double *a, double *mirror, const face_t *f)
{
    if (!use_gpu) {
        BU_MPI(MPI_Sendrecv(a + f->src_off, 1, f->type, peer, 7, a + f->dst_off, 1, f->type, peer, 7,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        return;
    }
#ifdef KY_BENCH_HAVE_CUDA
    BU_CUDA(
        cudaMemcpy(mirror + f->src_off, a + f->src_off, f->span * sizeof(double), cudaMemcpyDeviceToHost));
    BU_MPI(MPI_Sendrecv(mirror + f->src_off, 1, f->type, peer, 7, mirror + f->dst_off, 1, f->type, peer, 7,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    BU_CUDA(
        cudaMemcpy(a + f->dst_off, mirror + f->dst_off, f->span * sizeof(double), cudaMemcpyHostToDevice));
#else
    (void)mirror;
#endif
}

/* ---- verification ------------------------------------------------------------------------------- */

/* Set the destination face to -1 (restore = 0) or back to this rank's initial values (restore = 1), so the
 * next face, whose source plane crosses this destination plane along an edge, starts from known values.
 * The host mirror is kept equal to the GPU array. */
static void set_dst(double *a, double *mirror, const face_t *f, int restore)
{
    double *h = use_gpu ? mirror : a;
    for (size_t m = 0; m < f->N * f->N; m++) {
        size_t d = f->dst_off + face_elem(f, m);
        h[d] = restore ? value_of(me, d) : -1;
    }
#ifdef KY_BENCH_HAVE_CUDA
    if (use_gpu)
        BU_CUDA(cudaMemcpy(a + f->dst_off, mirror + f->dst_off, f->span * sizeof(double),
                           cudaMemcpyHostToDevice));
#endif
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 1 on every rank if both ranks' destination faces hold the partner's source face. */
static int check(double *a, double *mirror, const face_t *f, const char *who)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double *h = use_gpu ? mirror : a;
#ifdef KY_BENCH_HAVE_CUDA
    if (use_gpu)
        BU_CUDA(cudaMemcpy(mirror + f->dst_off, a + f->dst_off, f->span * sizeof(double),
                           cudaMemcpyDeviceToHost));
#endif
    int ok = 1;
    for (size_t m = 0; m < f->N * f->N && ok; m++) {
        size_t d = f->dst_off + face_elem(f, m), s = f->src_off + face_elem(f, m);
        if (h[d] != value_of(peer, s)) {
            fprintf(stderr, "halo: rank %d: %s N=%zu face element %zu: got %.17g, expected %.17g\n", me, who,
                    f->N, m, h[d], value_of(peer, s));
            ok = 0;
        }
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* ---- timing ------------------------------------------------------------------------------------- */

/* Median per-exchange time, the larger of the two ranks' medians. */
static double time_exchanges(int kyoyu, ky_seg_t seg, double *a, double *mirror, const face_t *f, int it,
                             int warm, double *scratch)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < warm + it; r++) {
        double t0 = bu_now();
        if (kyoyu)
            ky_exchange(seg, a, f);
        else
            mpi_exchange(a, mirror, f);
        if (r >= warm) scratch[r - warm] = bu_now() - t0;
    }
    double med = bu_median(scratch, it), mx = 0;
    MPI_Allreduce(&med, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return mx;
}

/* Whether an N^3 array (plus its mirror for GPU runs) fits on every rank. */
static int fits(size_t N)
{
    size_t bytes = N * N * N * sizeof(double);
    int ok = 1;
    size_t avail = bu_host_avail();
    /* Ranks sharing this host's memory (with KY_NODE_SPLIT=rank ky_local_nranks() would say 1). */
    MPI_Comm host;
    int local = 1;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_size(host, &local);
    MPI_Comm_free(&host);
    size_t host_need = (size_t)((double)bytes * 1.15) * (size_t)(local > 0 ? local : 1);
    if (avail && host_need > avail) ok = 0;
    if (!use_gpu) {
        struct statvfs sv;
        if (statvfs("/dev/shm", &sv) == 0 && (size_t)sv.f_bavail * sv.f_frsize < host_need) ok = 0;
    }
#ifdef KY_BENCH_HAVE_CUDA
    if (use_gpu) {
        size_t fr = 0, tot = 0;
        if (cudaMemGetInfo(&fr, &tot) != cudaSuccess || fr < (size_t)((double)bytes * 1.1) + (256u << 20))
            ok = 0;
    }
#endif
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    BU_KY(ky_init(&argc, &argv));
    me = ky_rank();
    bu_opts_t o;
    if (bu_parse(argc, argv, &o, "halo",
                 "halo uses -N, -n, -w, -c, --mem, --json (-b/-e/-f are ignored).\n")) {
        ky_finalize();
        return 2;
    }
    use_gpu = o.mem == KY_MEM_GPU;
    int rc = bu_two_ranks("halo", use_gpu, &dev);
    if (rc >= 0) return rc;
    peer = 1 - me;
    BU_KY(ky_am_register(H_HALO, h_halo));
    MPI_Barrier(MPI_COMM_WORLD);

    /* Floor: face bytes / link bandwidth (per direction). */
    double link_GBs = -1;
    const char *floor_note;
#ifdef KY_BENCH_HAVE_CUDA
    if (use_gpu) {
        link_GBs = bu_gpu_peer_GBs(64u << 20);
        floor_note =
            "face bytes / measured 64 MiB cudaMemcpy-over-IPC bandwidth (H200 NV18: ~450 GB/s nominal)";
    } else
#endif
    {
        if (me == 0) link_GBs = bu_memcpy_GBs(64u << 20);
        MPI_Bcast(&link_GBs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        floor_note = "face bytes / single-thread memcpy bandwidth (64 MiB)";
    }

    bu_point_t pts[F_COUNT][BU_MAX_SIZES];
    int npts = 0;
    const char *path_name = "unknown";
    char cases[F_COUNT][64];
    if (me == 0)
        printf("# Kyoyu %s halo: kind %s, date %s, 2 ranks, %s memory, link %.2f GB/s\n", ky_version(),
               bu_machine(), bu_date(), bu_mem_name(o.mem), link_GBs);

    for (int ni = 0; ni < o.nhalo; ni++) {
        size_t N = (size_t)o.halo_n[ni];
        size_t elems = N * N * N, bytes = elems * sizeof(double);
        if (!fits(N)) {
            if (me == 0) printf("# N=%zu: %zu MiB per rank does not fit: skipped\n", N, bytes >> 20);
            continue;
        }
        ky_seg_t seg;
        BU_KY(ky_seg_create(NULL, bytes, o.mem, dev, &seg));
        void *base = NULL;
        size_t got = 0;
        BU_KY(ky_seg_local(seg, &base, &got));
        double *a = base, *mirror = NULL, *init = NULL;
        if (use_gpu) {
#ifdef KY_BENCH_HAVE_CUDA
            BU_CUDA(cudaMallocHost((void **)&mirror, bytes));
#endif
            init = mirror;
        } else {
            init = a;
        }
        for (size_t x = 0; x < elems; x++) init[x] = value_of(me, x);
#ifdef KY_BENCH_HAVE_CUDA
        if (use_gpu) BU_CUDA(cudaMemcpy(a, mirror, bytes, cudaMemcpyHostToDevice));
#endif
        ky_path_t path;
        BU_KY(ky_comm_path(peer, seg, a, &path));
        path_name = bu_path_name(path);
        int it = bu_iters_for(&o, N * N * sizeof(double), 5);
        int warm = o.warmup < it ? o.warmup : it;
        if (warm < 1) warm = 1;
        double *scratch = malloc(sizeof(double) * (size_t)it);
        if (!scratch) bu_die(__FILE__, __LINE__, "no memory");

        for (int fc = 0; fc < F_COUNT; fc++) {
            face_t f;
            face_setup(&f, fc, N);
            int ok = 1;
            if (o.check) {
                set_dst(a, mirror, &f, 0);
                ky_exchange(seg, a, &f);
                ok = check(a, mirror, &f, "kyoyu");
                set_dst(a, mirror, &f, 0);
                mpi_exchange(a, mirror, &f);
                ok = check(a, mirror, &f, "mpi") && ok;
            }
            ky_comm_stats_t s0, s1;
            BU_KY(ky_comm_stats(&s0));
            double tk = time_exchanges(1, seg, a, mirror, &f, it, warm, scratch);
            BU_KY(ky_comm_stats(&s1));
            double tb = time_exchanges(0, seg, a, mirror, &f, it, warm, scratch);

            bu_point_t *p = &pts[fc][npts];
            bu_point_init(p);
            snprintf(cases[fc], sizeof cases[fc], "%s_%s_%s", face_names[fc], bu_mem_name(o.mem), path_name);
            p->bench = "halo";
            p->kcase = cases[fc];
            p->op = "put_strided";
            p->mem = bu_mem_name(o.mem);
            p->path = path_name;
            p->ranks = 2;
            p->bytes = N * N * sizeof(double);
            p->iters = it;
            p->lat_us = tk * 1e6;
            p->bw_GBs = (double)p->bytes / tk / 1e9;
            p->baseline = use_gpu ? "mpi_type_vector_staged" : "mpi_type_vector";
            p->base_lat_us = tb * 1e6;
            p->base_bw_GBs = (double)p->bytes / tb / 1e9;
            p->ratio = tb / tk;
            if (link_GBs > 0) {
                p->floor_GBs = link_GBs;
                p->floor_us = (double)p->bytes / link_GBs / 1e3;
            }
            p->n = (int)N;
            p->face = face_names[fc];
            p->plan_hits = (long)(s1.plan_hits - s0.plan_hits);
            p->plan_misses = (long)(s1.plan_misses - s0.plan_misses);
            p->verified = o.check ? ok : -1;
            bu_json_write(&o, p);
            if (me == 0) {
                printf("#   N=%zu %s: kyoyu %.2f us, %s %.2f us, ratio %.2f, plan hits %ld misses %ld%s\n", N,
                       face_names[fc], p->lat_us, p->baseline, p->base_lat_us, p->ratio, p->plan_hits,
                       p->plan_misses, ok ? "" : ", VERIFY FAILED");
                fflush(stdout);
            }
            set_dst(a, mirror, &f, 1);
            MPI_Type_free(&f.type);
        }
        npts++;
        free(scratch);
        BU_KY(ky_seg_destroy(seg));
#ifdef KY_BENCH_HAVE_CUDA
        if (mirror) BU_CUDA(cudaFreeHost(mirror));
#endif
    }

    for (int fc = 0; fc < F_COUNT && npts; fc++) {
        char title[256];
        static const char *what[F_COUNT] = {"block: one run of N*N doubles",
                                            "block-stride: N runs of N doubles, stride N*N",
                                            "stride: N*N single doubles, stride N"};
        snprintf(title, sizeof title, "halo %s (%s; us = median time per two-way exchange)", cases[fc],
                 what[fc]);
        bu_table_header(title,
                        use_gpu
                            ? "mpi_type_vector_staged: cudaMemcpy slab D2H, MPI_Sendrecv(datatype), slab H2D"
                            : "mpi_type_vector: MPI_Sendrecv with the face datatype",
                        floor_note);
        for (int i = 0; i < npts; i++) bu_table_row(&pts[fc][i]);
    }
    BU_KY(ky_finalize());
    return 0;
}
