/* device_bench: the device API's latency (include/kyoyu/device.cuh). Two ranks play ping-pong from inside a
 * kernel: one thread of one block loops N times over put_signal(peer) then wait_until(own signal); the time
 * per round trip comes from the GPU's global timer around the timed iterations. Cases: direct (loads and
 * stores through the view of ky_dev_seg, where this node maps the peer), proxy (ky_dev_seg_proxied: every
 * request through the host proxy and comm's path underneath, IPC on one node, MPI with KY_NODE_SPLIT=rank),
 * and NVSHMEM (nvshmem_putmem_signal_nbi + nvshmem_signal_wait_until, bench/device_bench_nvshmem.cu) when
 * the build found it. NVSHMEM runs last, after Kyoyu's rows are printed and written, and is skipped where
 * both ranks share a GPU unless --nvshmem-shared-gpu (NVSHMEM may refuse, or end the job, there).
 *
 *   kyrun -n 2 --gpus-per-rank 1 build/bin/device_bench [-b 8 -e 8 -n 10000 -w 100] [--json FILE]
 *
 * Table and JSON lines (bench "device", the pingpong shape of docs/benchmarks.md): op put_signal_pp,
 * path direct|proxy_<comm path>, lat_us the round trip, baseline nvshmem. Exit 77 without a GPU per rank. */
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

/* One case on a fresh segment: the view `proxied` or not; returns lat_us < 0 when the view is not what the
 * case needs (direct where a peer is not mapped). */
run_t run_case(int proxied, size_t bytes, int iters, int warmup, int check, cudaStream_t stream,
               ky_path_t *path)
{
    run_t r = {-1, -1, KY_OK};
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
    run_t res[2][64];
    ky_path_t paths[2][64];
    for (int i = 0; i < nsizes; i++)
        for (int c = 0; c < 2; c++)
            res[c][i] = run_case(c, sizes[i], o.iters, o.warmup, o.check, stream, &paths[c][i]);

    /* NVSHMEM, where allowed: two PEs on one GPU only on request. */
    const char *nv_note = NULL;
    double nv[64];
    for (int i = 0; i < 64; i++) nv[i] = -1;
#ifdef KY_BENCH_HAVE_NVSHMEM
    int same_gpu = 0;
    {
        char id[64] = {0}, other[64] = {0};
        BU_CUDA(cudaDeviceGetPCIBusId(id, sizeof id, dev));
        MPI_Sendrecv(id, 64, MPI_CHAR, 1 - me, 0, other, 64, MPI_CHAR, 1 - me, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        same_gpu = !strcmp(id, other);
    }
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
            "# device_bench: put_signal ping-pong from a kernel (1 block, 1 thread), 2 ranks, GPU %d; "
            "round trip time\n",
            dev);
        printf("%12s %8s %22s %12s\n", "bytes", "iters", "case", "rtt_us");
        for (int i = 0; i < nsizes; i++)
            for (int c = 0; c < 2; c++) {
                char name[32];
                snprintf(name, sizeof name, "%s%s", c ? "proxy_" : "direct",
                         c ? bu_path_name(paths[c][i]) : "");
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
        for (int c = 0; c < 2; c++) {
            failed |= res[c][i].verified == 0 || res[c][i].status != KY_OK;
            if (res[c][i].lat_us < 0) continue;
            bu_point_t p;
            bu_point_init(&p);
            char kcase[48], path[32];
            snprintf(path, sizeof path, "%s%s", c ? "proxy_" : "direct", c ? bu_path_name(paths[c][i]) : "");
            snprintf(kcase, sizeof kcase, "put_signal_pp_%s", path);
            p.bench = "device";
            p.kcase = kcase;
            p.op = "put_signal_pp";
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
            p.verified = res[c][i].verified;
            bu_json_write(&o, &p);
        }
    BU_CUDA(cudaStreamDestroy(stream));
    ky_finalize();
    return failed ? 1 : 0;
}
