/* device_bench: the device API's latency (include/kyoyu/device.cuh). Two ranks play ping-pong from inside a
 * kernel: one thread of one block loops N times over put_signal(peer) then wait_until(own signal); the time
 * per round trip comes from the GPU's global timer around the timed iterations. Cases: direct (loads and
 * stores through the view of ky_dev_seg, where this node maps the peer), proxy (ky_dev_seg_proxied: every
 * request through the host proxy and comm's path underneath, IPC on one node, MPI with KY_NODE_SPLIT=rank),
 * and NVSHMEM (nvshmem_putmem_signal_nbi + nvshmem_signal_wait_until, bench/device_bench_nvshmem.cu) when
 * the build found it. NVSHMEM runs last, after Kyoyu's rows are printed and written, and is skipped where
 * both ranks share a GPU unless --nvshmem-shared-gpu (NVSHMEM may refuse, or end the job, there). Beside
 * them, where the peer is mapped, the floors: the same 8-byte ping-pong by plain loads and stores to the
 * peer's piece with no library (floor_pingpong: a bare flag; a data word and a flag by release/acquire, two
 * spellings; data and flag in one 16-byte store), so the table says how far put_signal is from the hardware.
 *
 *   kyrun -n 2 --gpus-per-rank 1 build/bin/device_bench [-b 8 -e 8 -n 10000 -w 100] [--json FILE]
 *
 * Table and JSON lines (bench "device", the pingpong shape of docs/benchmarks.md): op put_signal_pp,
 * path direct|proxy_<comm path>, lat_us the round trip, baseline nvshmem, floor_us (direct) the raw_flag_pp
 * round trip; and one record per floor, op raw_flag_pp | raw_data_flag_pp | raw_data_fence_pp | raw_ll16_pp
 * | raw_data_flag_gpu_pp (ranks sharing one GPU),
 * path direct, bytes 8, baseline none. Exit 77 without a GPU per rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "device_bench.h"
#include "kyoyu/device.cuh"

namespace {

__device__ inline void note(int *st, int s)
{
    if (s != KY_OK && *st == KY_OK) *st = s;
}

/* out[0]: ns of the timed round trips, out[1]: first status. Signals count from 1 (the word starts at 0). */
__global__ void pingpong(ky_dev_seg_t s, const char *src, size_t bytes, int iters, int warmup, size_t sig_off,
                         long long *out)
{
    if (blockIdx.x || threadIdx.x) return;
    int me = s.rank, peer = 1 - me, st = KY_OK;
    unsigned long long t0 = ky_dev_now_ns();
    for (int i = 1; i <= warmup + iters; i++) {
        if (i == warmup + 1) t0 = ky_dev_now_ns();
        if (me == 0) {
            note(&st, ky_dev_put_signal_nbi(s, peer, 0, src, bytes, sig_off, (uint64_t)i, 0));
            ky_dev_wait_until(s, sig_off, KY_DEV_CMP_GE, (uint64_t)i);
        } else {
            ky_dev_wait_until(s, sig_off, KY_DEV_CMP_GE, (uint64_t)i);
            note(&st, ky_dev_put_signal_nbi(s, peer, 0, src, bytes, sig_off, (uint64_t)i, 0));
        }
    }
    unsigned long long t1 = ky_dev_now_ns();
    note(&st, ky_dev_quiet(s));
    out[0] = (long long)(t1 - t0);
    out[1] = st;
}

/* ---- the floor: the same ping-pong with no library ------------------------------------------------ */

enum { FLOOR_FLAG, FLOOR_DATA_FLAG, FLOOR_DATA_FENCE, FLOOR_LL16, FLOOR_DATA_FLAG_GPU, NFLOORS };
/* op names (table and JSON), and what each is */
const char *const floor_op[NFLOORS] = {"raw_flag_pp", "raw_data_flag_pp", "raw_data_fence_pp", "raw_ll16_pp",
                                       "raw_data_flag_gpu_pp"};

/* The 8-byte word peer sends in round i, and the 16-byte line of FLOOR_LL16: {data, flag}. */
__host__ __device__ inline unsigned long long floor_word(int rank, int i)
{
    return ((unsigned long long)i << 8) | (unsigned)rank;
}

__device__ inline void st_relaxed_sys(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ inline unsigned long long ld_relaxed_sys(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* One direction of a floor ping-pong: send round i to the peer's words. */
__device__ inline void floor_send(int mode, unsigned long long *pd, unsigned long long *pf,
                                  unsigned long long *pl, int me, int i)
{
    unsigned long long w = floor_word(me, i);
    switch (mode) {
        case FLOOR_FLAG: /* (a) the flag alone, relaxed (a volatile store): NVLink's one-way store latency */
            st_relaxed_sys(pf, (unsigned long long)i);
            break;
        case FLOOR_DATA_FLAG: /* (b) the data word, then the flag as a release store (the library's means) */
            *(volatile unsigned long long *)pd = w;
            asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(pf), "l"((unsigned long long)i)
                         : "memory");
            break;
        case FLOOR_DATA_FLAG_GPU: /* (d) as (b) with a .gpu release: both ranks on one GPU */
            *(volatile unsigned long long *)pd = w;
            asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(pf), "l"((unsigned long long)i)
                         : "memory");
            break;
        case FLOOR_DATA_FENCE: /* (b') the data word, a release fence, a relaxed flag store (sm_90's
                                  fence.release) */
            *(volatile unsigned long long *)pd = w;
#if __CUDA_ARCH__ >= 900
            asm volatile("fence.release.sys;" ::: "memory");
#else
            asm volatile("fence.acq_rel.sys;" ::: "memory");
#endif
            st_relaxed_sys(pf, (unsigned long long)i);
            break;
        default: /* (c) data and flag in one 16-byte store (sm_90's .b128; see below) */
#if __CUDA_ARCH__ >= 900
            asm volatile(
                "{ .reg .b128 t; mov.b128 t, {%1, %2}; st.relaxed.sys.global.b128 [%0], t; }" ::"l"(pl),
                "l"(w), "l"((unsigned long long)i)
                : "memory");
#endif
            break;
    }
}

/* Wait for round i in this rank's own words; returns 1 when the data that came with it is wrong. */
__device__ inline int floor_wait(int mode, const unsigned long long *md, const unsigned long long *mf,
                                 const unsigned long long *ml, int peer, int i)
{
    unsigned long long want = (unsigned long long)i, v;
    switch (mode) {
        case FLOOR_FLAG:
            while (ld_relaxed_sys(mf) < want) {
            }
            return 0;
        case FLOOR_DATA_FLAG:
        case FLOOR_DATA_FLAG_GPU: /* the library's wait either way: a .sys acquire (the writer may be on
                                     another GPU) */
            do {
                asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(mf) : "memory");
            } while (v < want);
            return *(const volatile unsigned long long *)md != floor_word(peer, i);
        case FLOOR_DATA_FENCE:
            while (ld_relaxed_sys(mf) < want) {
            }
#if __CUDA_ARCH__ >= 900
            asm volatile("fence.acquire.sys;" ::: "memory");
#else
            asm volatile("fence.acq_rel.sys;" ::: "memory");
#endif
            return *(const volatile unsigned long long *)md != floor_word(peer, i);
        default: {
#if __CUDA_ARCH__ >= 900
            unsigned long long d, f;
            do {
                asm volatile("{ .reg .b128 t; ld.relaxed.sys.global.b128 t, [%2]; mov.b128 {%0, %1}, t; }"
                             : "=l"(d), "=l"(f)
                             : "l"(ml)
                             : "memory");
            } while (f < want);
            return d != floor_word(peer, i);
#else
            return 1;
#endif
        }
    }
}

/* The floors of put_signal's round trip, by plain loads and stores to the peer's piece (mode FLOOR_*):
 *  (a) FLOOR_FLAG: a relaxed system-scope 8-byte store (what a volatile store is) to the peer's flag, polling
 *      one's own with relaxed loads; no data, no fences: two NVLink store-to-load crossings.
 *  (b) FLOOR_DATA_FLAG: an 8-byte data word, then the flag by st.release.sys; the poll by ld.acquire.sys,
 * then the data word is checked. The PTX memory model's cheapest correct means between GPUs: a release
 *      pattern on the writer and an acquire pattern on the reader, morally strong with each other only at
 * .sys scope (a thread of another GPU is outside the writer's .gpu scope), so the data happens before the
 *      read that follows the acquire. (b') the same by fence.release.sys + st.relaxed.sys and a relaxed poll
 *      + fence.acquire.sys (PTX ISA 8.6's one-way fences, sm_90): the other spelling, in case it costs less.
 *  (c) FLOOR_LL16: NCCL's LL idea on sm_90: data and flag in one 16-byte aligned line written by one strong
 *      st.relaxed.sys.b128 and read by one ld.relaxed.sys.b128 (the same location on both sides, so they
 *      overlap completely and are morally strong); no fence on either side. Correct as long as a strong
 *      .b128 access is single-copy atomic, which libcu++ relies on for cuda::atomic of 16-byte types on sm_90
 *      (ld/st.{relaxed,acquire,release}.b128), and NVLink carries the aligned 16 bytes as one write. Not
 *      run before sm_90 (the row's data check then fails).
 *  (d) FLOOR_DATA_FLAG_GPU, only where both ranks share one GPU: (b) with st.release.gpu (MEMBAR.GPU) and the
 *      same .sys acquire poll, what put_signal does to a peer on its own GPU (device.cuh's same_gpu).
 * The verification counts rounds whose data word was not the peer's round-i word: (b), (b'), (c) only. */
__global__ void floor_pingpong(ky_dev_seg_t s, int mode, size_t fl_off, int iters, int warmup, long long *out)
{
    if (blockIdx.x || threadIdx.x) return;
    int me = s.rank, peer = 1 - me;
    /* the words: data at 0 of the piece (where put_signal's data goes), flags and the line at fl_off */
    char *mine = (char *)s.base[me], *theirs = (char *)s.base[peer];
    size_t fo = fl_off + 8 * (size_t)mode, lo = fl_off + 64;
    unsigned long long *pd = (unsigned long long *)theirs, *pf = (unsigned long long *)(theirs + fo),
                       *pl = (unsigned long long *)(theirs + lo);
    const unsigned long long *md = (unsigned long long *)mine, *mf = (unsigned long long *)(mine + fo),
                             *ml = (unsigned long long *)(mine + lo);
    long long bad = 0;
    unsigned long long t0 = ky_dev_now_ns();
    for (int i = 1; i <= warmup + iters; i++) {
        if (i == warmup + 1) t0 = ky_dev_now_ns();
        if (me == 0) {
            floor_send(mode, pd, pf, pl, me, i);
            bad += floor_wait(mode, md, mf, ml, peer, i);
        } else {
            bad += floor_wait(mode, md, mf, ml, peer, i);
            floor_send(mode, pd, pf, pl, me, i);
        }
    }
    unsigned long long t1 = ky_dev_now_ns();
    out[0] = (long long)(t1 - t0);
    out[1] = bad;
}

__global__ void pattern(char *p, size_t n, int rank)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (char)(i * 7 + rank * 13 + 1);
}

struct run_t {
    double lat_us; /* < 0: not run */
    int verified;  /* 1, 0, -1 not checked */
    int status;
};

/* The cases: the direct view and the proxied one. */
enum { CASE_DIRECT, CASE_PROXY, NCASES };

/* The case's name in the table and its JSON op and path. */
void case_names(int c, ky_path_t path, char *name, size_t len, const char **op, char *jpath, size_t plen)
{
    snprintf(name, len, "%s%s", c == CASE_PROXY ? "proxy_" : "direct",
             c == CASE_PROXY ? bu_path_name(path) : "");
    *op = "put_signal_pp";
    snprintf(jpath, plen, "%s%s", c == CASE_PROXY ? "proxy_" : "direct",
             c == CASE_PROXY ? bu_path_name(path) : "");
}

/* One case (CASE_*) on a fresh segment; returns lat_us < 0 when the view is not what the case needs (direct
 * where a peer is not mapped). */
run_t run_case(int c, size_t bytes, int iters, int warmup, int check, cudaStream_t stream, ky_path_t *path)
{
    run_t r = {-1, -1, KY_OK};
    int proxied = c == CASE_PROXY;
    /* the signal on a line of its own after the data */
    size_t sig_off = (bytes + 63) / 64 * 64, seg_bytes = sig_off + 64;
    ky_seg_t seg;
    BU_KY(ky_seg_create(NULL, seg_bytes, KY_MEM_GPU, -1, &seg));
    ky_dev_seg_t d;
    BU_KY(proxied ? ky_dev_seg_proxied(seg, &d) : ky_dev_seg(seg, &d));
    int me = ky_rank(), peer = 1 - me;
    int ok = proxied || d.base[peer] != NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    char *src = NULL;
    long long *out = NULL;
    BU_CUDA(cudaMalloc(&src, bytes ? bytes : 1));
    BU_CUDA(cudaMalloc(&out, 2 * sizeof(long long)));
    BU_KY(ky_comm_path(peer, seg, src, path));
    if (all) {
        void *base;
        size_t sz;
        BU_KY(ky_seg_local(seg, &base, &sz));
        BU_CUDA(cudaMemset(base, 0, sz));
        pattern<<<16, 256>>>(src, bytes, me);
        BU_CUDA(cudaDeviceSynchronize());
        ky_comm_barrier();
        pingpong<<<1, 1, 0, stream>>>(d, src, bytes, iters, warmup, sig_off, out);
        BU_CUDA(cudaStreamSynchronize(stream));
        ky_comm_barrier();
        long long h[2];
        BU_CUDA(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
        r.status = (int)h[1];
        r.lat_us = (double)h[0] / 1e3 / iters;
        if (check) {
            char *got = (char *)malloc(bytes ? bytes : 1);
            BU_CUDA(cudaMemcpy(got, base, bytes, cudaMemcpyDeviceToHost));
            int good = 1;
            for (size_t i = 0; i < bytes; i++) good &= got[i] == (char)(i * 7 + peer * 13 + 1);
            free(got);
            MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            r.verified = good;
        }
        /* rank 0's clock times the round trips it started */
        MPI_Bcast(&r.lat_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &r.status, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    BU_CUDA(cudaFree(src));
    BU_CUDA(cudaFree(out));
    BU_KY(ky_seg_destroy(seg));
    return r;
}

/* The floors (floor_pingpong), each on the same fresh segment of the direct view; lat_us < 0 for all when a
 * peer is not mapped here. verified: the data words all arrived with their flags (1), or not (0); -1 for (a).
 */
void run_floors(int iters, int warmup, cudaStream_t stream, run_t *r)
{
    for (int m = 0; m < NFLOORS; m++) r[m] = run_t{-1, -1, KY_OK};
    size_t fl_off = 64,
           seg_bytes = fl_off + 128; /* data word at 0; flags at 64 + 8 m; the 16-byte line at 128 */
    ky_seg_t seg;
    BU_KY(ky_seg_create(NULL, seg_bytes, KY_MEM_GPU, -1, &seg));
    ky_dev_seg_t d;
    BU_KY(ky_dev_seg(seg, &d));
    int me = ky_rank(), peer = 1 - me;
    int ok = d.base[peer] != NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    long long *out = NULL;
    BU_CUDA(cudaMalloc(&out, 2 * sizeof(long long)));
    void *base;
    size_t sz;
    BU_KY(ky_seg_local(seg, &base, &sz));
    int dev, major = 0;
    BU_CUDA(cudaGetDevice(&dev));
    BU_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    MPI_Allreduce(MPI_IN_PLACE, &major, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int same = d.same_gpu[peer];
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    for (int m = 0; all && m < NFLOORS; m++) {
        if (m == FLOOR_LL16 && major < 9) continue;      /* .b128 accesses: sm_90 on */
        if (m == FLOOR_DATA_FLAG_GPU && !same) continue; /* a .gpu release orders nothing for another GPU */
        BU_CUDA(cudaMemset(base, 0, sz));
        BU_CUDA(cudaDeviceSynchronize());
        ky_comm_barrier();
        floor_pingpong<<<1, 1, 0, stream>>>(d, m, fl_off, iters, warmup, out);
        BU_CUDA(cudaStreamSynchronize(stream));
        ky_comm_barrier();
        long long h[2];
        BU_CUDA(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
        r[m].lat_us = (double)h[0] / 1e3 / iters;
        int good = h[1] == 0;
        MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        r[m].verified = m == FLOOR_FLAG ? -1 : good;
        MPI_Bcast(&r[m].lat_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    BU_CUDA(cudaFree(out));
    BU_KY(ky_seg_destroy(seg));
}

int has_flag(int argc, char **argv, const char *f)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], f)) return 1;
    return 0;
}

/* argv without our own flags (bu_parse knows only the common ones). */
int strip_flag(int argc, char **argv, const char *f)
{
    int j = 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], f)) argv[j++] = argv[i];
    return j;
}

}  // namespace

int main(int argc, char **argv)
{
    const char *prog = "device_bench";
    int shared_ok = has_flag(argc, argv, "--nvshmem-shared-gpu");
    int no_nvshmem = has_flag(argc, argv, "--no-nvshmem");
    argc = strip_flag(argc, argv, "--nvshmem-shared-gpu");
    argc = strip_flag(argc, argv, "--no-nvshmem");
    /* NVLink multicast stays off on the lent machines: before anything could initialise NVSHMEM */
    setenv("NVSHMEM_DISABLE_NVLS", "1", 0);
    bu_opts_t o;
    if (bu_parse(argc, argv, &o, prog,
                 "  --nvshmem-shared-gpu  run NVSHMEM even where both ranks share one GPU\n"
                 "  --no-nvshmem          leave the NVSHMEM column out\n"
                 "Defaults here: -b 8 -e 8 -n 10000 -w 100.\n"))
        return 2;
    if (!has_flag(argc, argv, "-b")) o.minbytes = 8;
    if (!has_flag(argc, argv, "-e")) o.maxbytes = o.minbytes > 8 ? o.minbytes : 8;
    if (!has_flag(argc, argv, "-n")) o.iters = 10000;
    if (!has_flag(argc, argv, "-w")) o.warmup = 100;
    BU_KY(ky_init(&argc, &argv));
    int dev, rc = bu_two_ranks(prog, 1, &dev);
    if (rc == 0) return 77; /* no GPU for every rank: the skip code kybench and CTest know */
    if (rc > 0) return rc;
    int me = ky_rank();
    cudaStream_t stream; /* the proxy needs the kernel off the legacy default stream */
    BU_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    size_t sizes[64];
    int nsizes = 0;
    for (double b = (double)o.minbytes; b <= (double)o.maxbytes && nsizes < 64; b *= o.factor)
        sizes[nsizes++] = (size_t)b;
    run_t res[NCASES][64];
    ky_path_t paths[NCASES][64];
    for (int i = 0; i < nsizes; i++)
        for (int c = 0; c < NCASES; c++) {
            res[c][i] = run_t{-1, -1, KY_OK};
            paths[c][i] = KY_PATH_IPC;
            res[c][i] = run_case(c, sizes[i], o.iters, o.warmup, o.check, stream, &paths[c][i]);
        }

    int shares_gpu = 0; /* both ranks' GPU is one physical GPU */
    {
        char id[64] = {0}, other[64] = {0};
        BU_CUDA(cudaDeviceGetPCIBusId(id, sizeof id, dev));
        MPI_Sendrecv(id, 64, MPI_CHAR, 1 - me, 0, other, 64, MPI_CHAR, 1 - me, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        shares_gpu = !strcmp(id, other);
    }
    run_t floors[NFLOORS];
    run_floors(o.iters, o.warmup, stream, floors);

    /* NVSHMEM, where allowed: two PEs on one GPU only on request. */
    const char *nv_note = NULL;
    double nv[64];
    for (int i = 0; i < 64; i++) nv[i] = -1;
#ifdef KY_BENCH_HAVE_NVSHMEM
    int same_gpu = shares_gpu;
    if (no_nvshmem)
        nv_note = "NVSHMEM: left out (--no-nvshmem)";
    else if (same_gpu && !shared_ok)
        nv_note =
            "NVSHMEM: skipped: both ranks share one GPU, which NVSHMEM may refuse (--nvshmem-shared-gpu "
            "tries anyway); give each rank its own GPU";
#else
    (void)shared_ok;
    (void)no_nvshmem;
    nv_note = "NVSHMEM: not found when this build was configured (NVSHMEM_HOME): no NVSHMEM column";
#endif

    /* Kyoyu's rows first, so that they are out even if NVSHMEM later ends the job. */
    char sz[32];
    if (me == 0) {
        printf(
            "# device_bench: put_signal ping-pong from a kernel (1 block, 1 thread), 2 ranks, GPU %d%s%s; "
            "round trip time\n",
            dev, shares_gpu ? ", both ranks on it" : "",
            shares_gpu ? (getenv("CUDA_MPS_PIPE_DIRECTORY") ? " (MPS)" : " (no MPS: they take turns)") : "");
        printf("%12s %8s %22s %12s\n", "bytes", "iters", "case", "rtt_us");
        for (int i = 0; i < nsizes; i++)
            for (int c = 0; c < NCASES; c++) {
                char name[32], jpath[32];
                const char *op;
                case_names(c, paths[c][i], name, sizeof name, &op, jpath, sizeof jpath);
                if (res[c][i].lat_us < 0)
                    printf(
                        "%12s %8d %22s %12s  (the peer is not mapped here: another node or KY_NODE_SPLIT)\n",
                        bu_fmt_size(sizes[i], sz, sizeof sz), o.iters, name, "-");
                else
                    printf("%12s %8d %22s %12.3f%s%s\n", bu_fmt_size(sizes[i], sz, sizeof sz), o.iters, name,
                           res[c][i].lat_us, res[c][i].status ? "  STATUS " : "",
                           res[c][i].status ? ky_strerror(res[c][i].status) : "");
                if (res[c][i].verified == 0) printf("VERIFY FAILED: %s, %zu bytes\n", name, sizes[i]);
            }
        /* the floors: 8 bytes (the flag alone for raw_flag), whatever -b / -e say */
        for (int m = 0; m < NFLOORS; m++) {
            if (floors[m].lat_us < 0) continue;
            printf("%12s %8d %22s %12.3f\n", "8 B", o.iters, floor_op[m], floors[m].lat_us);
            if (floors[m].verified == 0) printf("VERIFY FAILED: %s, 8 bytes\n", floor_op[m]);
        }
        fflush(stdout);
    }

#ifdef KY_BENCH_HAVE_NVSHMEM
    if (!nv_note) {
        char why[256] = "";
        int st = dbn_nvshmem_pingpong(sizes, nsizes, o.iters, o.warmup, nv, why, sizeof why);
        if (st) nv_note = why;
        if (me == 0 && !st)
            for (int i = 0; i < nsizes; i++)
                printf("%12s %8d %22s %12.3f\n", bu_fmt_size(sizes[i], sz, sizeof sz), o.iters, "nvshmem",
                       nv[i]);
    }
#endif
    if (me == 0 && nv_note) printf("# %s\n", nv_note);

    int failed = 0;
    for (int i = 0; i < nsizes; i++)
        for (int c = 0; c < NCASES; c++) {
            failed |= res[c][i].verified == 0 || res[c][i].status != KY_OK;
            if (res[c][i].lat_us < 0) continue;
            bu_point_t p;
            bu_point_init(&p);
            char kcase[48], name[32], path[32];
            const char *op;
            case_names(c, paths[c][i], name, sizeof name, &op, path, sizeof path);
            snprintf(kcase, sizeof kcase, "%s_%s", op, path);
            p.bench = "device";
            p.kcase = kcase;
            p.op = op;
            p.mem = "gpu";
            p.path = path;
            p.ranks = 2;
            p.bytes = sizes[i];
            p.iters = o.iters;
            p.lat_us = res[c][i].lat_us;
            p.bw_GBs = res[c][i].lat_us > 0 ? 2.0 * sizes[i] / (res[c][i].lat_us * 1e3) : 0;
            p.baseline = nv[i] >= 0 ? "nvshmem" : "none";
            if (nv[i] >= 0) {
                p.base_lat_us = nv[i];
                p.ratio = nv[i] / res[c][i].lat_us;
            }
            if (c != CASE_PROXY && floors[FLOOR_FLAG].lat_us > 0) p.floor_us = floors[FLOOR_FLAG].lat_us;
            p.verified = res[c][i].verified;
            bu_json_write(&o, &p);
        }
    for (int m = 0; m < NFLOORS; m++) {
        failed |= floors[m].verified == 0;
        if (floors[m].lat_us < 0) continue;
        bu_point_t p;
        bu_point_init(&p);
        char kcase[48];
        snprintf(kcase, sizeof kcase, "%s_direct", floor_op[m]);
        p.bench = "device";
        p.kcase = kcase;
        p.op = floor_op[m];
        p.mem = "gpu";
        p.path = "direct";
        p.ranks = 2;
        p.bytes = 8;
        p.iters = o.iters;
        p.lat_us = floors[m].lat_us;
        p.bw_GBs = 2.0 * 8 / (floors[m].lat_us * 1e3);
        p.baseline = "none";
        p.verified = floors[m].verified;
        bu_json_write(&o, &p);
    }
    BU_CUDA(cudaStreamDestroy(stream));
    ky_finalize();
    return failed ? 1 : 0;
}
