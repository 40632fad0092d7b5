/* ky_stencil_gpu: the three exchanges written by hand. (a) the seed's host-staged exchange (Fig. 10): bt
 * boundary planes GPU -> pinned host, MPI between ranks, host -> GPU halo. (b) the seed's GPUDirect P2P
 * exchange (Fig. 11): same-node neighbours' buffers are opened by CUDA IPC and written by peer copies,
 * neighbours on other nodes go through the host as in (a); zero-byte MPI handshakes order the writes.
 * (d) the baseline a user writes today: NCCL send/recv on the compute stream when NCCL was found at build
 * time, else MPI with host staging (Open MPI on the GPU machine is not CUDA-aware). "Node" is Kyoyu's
 * logical node (ky_node_of), so KY_NODE_SPLIT=rank sends (b) across the host path too; for NCCL it sets
 * NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 (unless already set) so NCCL uses its network transport. */
#include <string.h>

#include <kyoyu.h>

#include "stencil_gpu.h"

#ifdef SG_HAVE_NCCL
#include <nccl.h>
#include <unistd.h>
static ncclComm_t nccl;
#endif
/* NCCL refuses two ranks on one GPU (a 1-GPU machine running several ranks): the baseline then stages
 * through the host like a user without NCCL would. */
#ifdef SG_HAVE_NCCL
static int use_nccl = 1; /* decided in sg_variants_setup */
#else
static int use_nccl = 0;
#endif

static int me, nr;
static double *hsend[2], *hrecv[2]; /* pinned: [0] low side, [1] high side */
static double *peer_buf[2][2];      /* [side][buffer A/B] of same-node neighbours, IPC-mapped */
static double *bufA;                /* this rank's buffer A (to know which buffer is src) */

static int z0_of(const sg_prob_t *p, int r)
{
    return (int)((long)r * p->nz / nr);
}
static int nz_of(const sg_prob_t *p, int r)
{
    return z0_of(p, r + 1) - z0_of(p, r);
}
static int nb(int side)
{
    return side == 0 ? me - 1 : me + 1;
}
static int has(const sg_sub_t *d, int side)
{
    return side == 0 ? d->has_lo : d->has_hi;
}
static size_t slab(const sg_prob_t *p)
{
    return (size_t)p->bt * sg_plane(p);
}
/* plane offsets (doubles) in a buffer of a sub-domain with nz owned planes */
static size_t own_off(const sg_prob_t *p, int side, int nz)
{
    return (size_t)(side == 0 ? p->bt : nz) * sg_plane(p);
}
static size_t halo_off(const sg_prob_t *p, int side, int nz)
{
    return (size_t)(side == 0 ? 0 : p->bt + nz) * sg_plane(p);
}

void sg_variants_setup(const sg_prob_t *p, sg_sub_t *d)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nr);
    bufA = d->src;
    for (int s = 0; s < 2; s++) {
        SG_CUDA(cudaMallocHost((void **)&hsend[s], slab(p) * sizeof(double)));
        SG_CUDA(cudaMallocHost((void **)&hrecv[s], slab(p) * sizeof(double)));
    }
    /* IPC handles of both buffers, exchanged with each neighbour; opened where the neighbour is on this node
     */
    cudaIpcMemHandle_t mine[2], theirs[2];
    SG_CUDA(cudaIpcGetMemHandle(&mine[0], d->src));
    SG_CUDA(cudaIpcGetMemHandle(&mine[1], d->dst));
    for (int side = 0; side < 2; side++) {
        if (!has(d, side)) continue;
        MPI_Sendrecv(mine, sizeof mine, MPI_BYTE, nb(side), 7, theirs, sizeof theirs, MPI_BYTE, nb(side), 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (ky_node_of(nb(side)) != ky_node()) continue;
        for (int b = 0; b < 2; b++)
            SG_CUDA(
                cudaIpcOpenMemHandle((void **)&peer_buf[side][b], theirs[b], cudaIpcMemLazyEnablePeerAccess));
    }
#ifdef SG_HAVE_NCCL
    int dev = -1, shared = 0;
    cudaGetDevice(&dev);
    {
        /* the physical host, not ky_node(): under KY_NODE_SPLIT=rank ranks on one GPU are still one GPU */
        char host[256] = {0};
        gethostname(host, sizeof host - 1);
        unsigned h = 2166136261u;
        for (const char *c = host; *c; c++) h = (h ^ (unsigned char)*c) * 16777619u;
        int key[2] = {(int)h, dev}, *all = (int *)malloc(sizeof(int) * 2 * (size_t)nr);
        MPI_Allgather(key, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < nr; r++)
            if (r != me && all[2 * r] == key[0] && all[2 * r + 1] == key[1]) shared = 1;
        int any = 0;
        MPI_Allreduce(&shared, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        shared = any;
        free(all);
    }
    use_nccl = !shared;
    if (use_nccl && ky_nnodes() == ky_nranks() &&
        ky_nranks() > 1) { /* KY_NODE_SPLIT=rank: keep NCCL off NVLink/shm */
        setenv("NCCL_P2P_DISABLE", "1", 0);
        setenv("NCCL_SHM_DISABLE", "1", 0);
    }
    ncclUniqueId id;
    if (me == 0 && use_nccl) ncclGetUniqueId(&id);
    if (use_nccl) MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (use_nccl && ncclCommInitRank(&nccl, nr, id, me) != ncclSuccess) sg_die("ncclCommInitRank failed");
#endif
}

void sg_variants_teardown(void)
{
    for (int s = 0; s < 2; s++) {
        cudaFreeHost(hsend[s]);
        cudaFreeHost(hrecv[s]);
        for (int b = 0; b < 2; b++)
            if (peer_buf[s][b]) cudaIpcCloseMemHandle(peer_buf[s][b]);
    }
#ifdef SG_HAVE_NCCL
    if (use_nccl) ncclCommDestroy(nccl);
#endif
}

const char *sg_baseline_name(void)
{
    return use_nccl ? "nccl_sendrecv" : "mpi_host_staged";
}

/* Host-staged exchange of the sides in `mask` (bit 0 low, bit 1 high). */
static void staged(const sg_prob_t *p, sg_sub_t *d, unsigned mask, sg_phase_t *ph)
{
    size_t n = slab(p);
    double t0 = sg_now();
    for (int side = 0; side < 2; side++)
        if ((mask >> side) & 1u)
            SG_CUDA(cudaMemcpyAsync(hsend[side], d->src + own_off(p, side, d->nz), n * sizeof(double),
                                    cudaMemcpyDeviceToHost, d->s));
    SG_CUDA(cudaStreamSynchronize(d->s));
    double t1 = sg_now();
    MPI_Request rq[4];
    int nq = 0;
    for (int side = 0; side < 2; side++)
        if ((mask >> side) & 1u) {
            MPI_Irecv(hrecv[side], (int)n, MPI_DOUBLE, nb(side), 1 - side, MPI_COMM_WORLD, &rq[nq++]);
            MPI_Isend(hsend[side], (int)n, MPI_DOUBLE, nb(side), side, MPI_COMM_WORLD, &rq[nq++]);
        }
    MPI_Waitall(nq, rq, MPI_STATUSES_IGNORE);
    double t2 = sg_now();
    for (int side = 0; side < 2; side++)
        if ((mask >> side) & 1u)
            SG_CUDA(cudaMemcpyAsync(d->src + halo_off(p, side, d->nz), hrecv[side], n * sizeof(double),
                                    cudaMemcpyHostToDevice, d->s));
    SG_CUDA(cudaStreamSynchronize(d->s));
    double t3 = sg_now();
    ph->host_xfer += (t1 - t0) + (t3 - t2);
    ph->mpi += t2 - t1;
}

/* Wait for the compute of the bt block; returns the time. */
static void compute_done(sg_sub_t *d, double t_launch, sg_phase_t *ph)
{
    SG_CUDA(cudaStreamSynchronize(d->s));
    ph->compute += sg_now() - t_launch;
}

static unsigned sides(const sg_sub_t *d)
{
    return (d->has_lo ? 1u : 0u) | (d->has_hi ? 2u : 0u);
}

void sg_run_staged(const sg_prob_t *p, sg_sub_t *d, int phased, sg_phase_t *ph)
{
    (void)phased; /* the staged exchange synchronises anyway */
    for (int t = 0; t < p->steps; t += p->bt) {
        double t0 = sg_now();
        sg_block_steps(p, d);
        compute_done(d, t0, ph);
        staged(p, d, sides(d), ph);
    }
}

/* Zero-byte messages with every neighbour: "this side is ready". */
static void handshake(const sg_sub_t *d, int tag, sg_phase_t *ph)
{
    double t0 = sg_now();
    MPI_Request rq[4];
    int nq = 0;
    char dummy[2];
    for (int side = 0; side < 2; side++)
        if (has(d, side)) {
            MPI_Irecv(&dummy[side], 0, MPI_CHAR, nb(side), tag, MPI_COMM_WORLD, &rq[nq++]);
            MPI_Isend(NULL, 0, MPI_CHAR, nb(side), tag, MPI_COMM_WORLD, &rq[nq++]);
        }
    MPI_Waitall(nq, rq, MPI_STATUSES_IGNORE);
    ph->sync += sg_now() - t0;
}

void sg_run_p2p(const sg_prob_t *p, sg_sub_t *d, int phased, sg_phase_t *ph)
{
    (void)phased;
    size_t n = slab(p);
    for (int t = 0; t < p->steps; t += p->bt) {
        double t0 = sg_now();
        sg_block_steps(p, d);
        compute_done(d, t0, ph);
        handshake(d, 11, ph);           /* neighbours finished reading their halos: they may be written */
        int b = d->src == bufA ? 0 : 1; /* every rank swapped as often: the neighbour's src is its buffer b */
        unsigned host_sides = 0;
        double t1 = sg_now();
        for (int side = 0; side < 2; side++) {
            if (!has(d, side)) continue;
            if (!peer_buf[side][b]) {
                host_sides |= 1u << side;
                continue;
            }
            /* my boundary planes into the neighbour's opposite halo */
            size_t dst = halo_off(p, 1 - side, nz_of(p, nb(side)));
            SG_CUDA(cudaMemcpyAsync(peer_buf[side][b] + dst, d->src + own_off(p, side, d->nz),
                                    n * sizeof(double), cudaMemcpyDeviceToDevice, d->s));
        }
        SG_CUDA(cudaStreamSynchronize(d->s));
        ph->gpu_halo += sg_now() - t1;
        if (host_sides) staged(p, d, host_sides, ph);
        handshake(d, 12, ph); /* my writes into the neighbours' halos are complete */
    }
}

void sg_run_baseline(const sg_prob_t *p, sg_sub_t *d, int phased, sg_phase_t *ph)
{
#ifdef SG_HAVE_NCCL
    size_t n = slab(p);
    if (!use_nccl) {
        for (int t = 0; t < p->steps; t += p->bt) {
            double t0 = sg_now();
            sg_block_steps(p, d);
            compute_done(d, t0, ph);
            staged(p, d, sides(d), ph);
        }
        return;
    }
    for (int t = 0; t < p->steps; t += p->bt) {
        double t0 = sg_now();
        sg_block_steps(p, d);
        if (phased) compute_done(d, t0, ph);
        double t1 = sg_now();
        if (ncclGroupStart() != ncclSuccess) sg_die("ncclGroupStart");
        for (int side = 0; side < 2; side++) {
            if (!has(d, side)) continue;
            ncclSend(d->src + own_off(p, side, d->nz), n, ncclDouble, nb(side), nccl, d->s);
            ncclRecv(d->src + halo_off(p, side, d->nz), n, ncclDouble, nb(side), nccl, d->s);
        }
        if (ncclGroupEnd() != ncclSuccess) sg_die("ncclGroupEnd");
        if (phased) {
            SG_CUDA(cudaStreamSynchronize(d->s));
            ph->gpu_halo += sg_now() - t1;
        }
    }
#else
    (void)phased;
    for (int t = 0; t < p->steps; t += p->bt) {
        double t0 = sg_now();
        sg_block_steps(p, d);
        compute_done(d, t0, ph);
        staged(p, d, sides(d), ph);
    }
#endif
}
