/* ky_stencil_gpu: the Kyoyu variant's block of bt steps with the halo exchange hidden behind the interior.
 *
 * With temporal blocking the planes next to a halo cannot simply be computed "after the halo arrived":
 * by then the interior's steps have overwritten the older time levels they need (the two buffers take
 * turns). So each side keeps its own copy. Per block, with A the buffer at time T and h = bt:
 *   stream s2:  snapshot A's planes [h, 4h) and [nz-2h, nz+h) into the edge buffers (time T), then the
 *               interior: step s computes [2h+s, nz-s), ending with [3h, nz-h) at T+bt. It never writes
 *               a halo plane or a boundary plane the exchange sends ([h, 2h), [nz, nz+h)), and reads none
 *               of the halos, so it runs while ky_array_halo_exchange_begin/_end move them.
 *   stream s:   after _end: A's fresh halo planes into the edge buffers, then each side's cone in its own
 *               pair of edge buffers: step s computes [s, 4h-s) (low) or [nz-2h+s, nz+2h-s) (high), ending
 *               with [h, 3h) and [nz-h, nz+h); once the interior is done they are copied into the buffer of
 *               time T+bt. Every point goes through the same kernel with the same inputs as in
 *               sg_block_steps, so the result is bit for bit the same.
 * The fixed faces (never written by a kernel) are read from whichever edge buffer a step uses, so both of
 * a pair start as copies of the initial planes. Needs nz >= 4h (the two cones must not meet). With --tb
 * every range sequence runs in passes of tb steps (sg_launch_tb): the ranges shrink by one plane per step
 * as the blocked kernels need, and a pair of buffers swaps once per pass. */
#include "stencil_gpu.h"

int sg_overlap_ok(const sg_prob_t *p, const sg_sub_t *d)
{
    return d->nz >= 4 * p->bt;
}

void sg_edges_alloc(const sg_prob_t *p, const sg_sub_t *d, sg_edges_t *e)
{
    size_t n = 4 * (size_t)p->bt * sg_plane(p) * sizeof(double);
    SG_CUDA(cudaSetDevice(d->dev));
    for (int i = 0; i < 2; i++) {
        SG_CUDA(cudaMalloc((void **)&e->lo[i], n));
        SG_CUDA(cudaMalloc((void **)&e->hi[i], n));
    }
    /* The kernels never write the fixed faces (x, y and the global z faces), and the steps read them from
     * whichever buffer of a pair they use: both start as copies of the initial planes (d->src is ready). */
    size_t P = sg_plane(p), off = (size_t)(d->nz - 2 * p->bt) * P;
    for (int i = 0; i < 2; i++) {
        SG_CUDA(cudaMemcpy(e->lo[i], d->src, n, cudaMemcpyDeviceToDevice));
        SG_CUDA(cudaMemcpy(e->hi[i], d->src + off, n, cudaMemcpyDeviceToDevice));
    }
    SG_CUDA(cudaStreamCreateWithFlags(&e->s2, cudaStreamNonBlocking));
    SG_CUDA(cudaEventCreateWithFlags(&e->ready, cudaEventDisableTiming));
    SG_CUDA(cudaEventCreateWithFlags(&e->snap, cudaEventDisableTiming));
    SG_CUDA(cudaEventCreateWithFlags(&e->inner, cudaEventDisableTiming));
}

void sg_edges_free(sg_edges_t *e)
{
    for (int i = 0; i < 2; i++) {
        cudaFree(e->lo[i]);
        cudaFree(e->hi[i]);
    }
    cudaStreamDestroy(e->s2);
    cudaEventDestroy(e->ready);
    cudaEventDestroy(e->snap);
    cudaEventDestroy(e->inner);
}

/* Copy planes [a, b) of local plane numbering from src to dst (both addressed by local plane index). */
static void planes(const sg_prob_t *p, cudaStream_t s, double *dst, const double *src, int a, int b)
{
    if (b <= a) return;
    size_t P = sg_plane(p);
    SG_CUDA(cudaMemcpyAsync(dst + (size_t)a * P, src + (size_t)a * P, (size_t)(b - a) * P * sizeof(double),
                            cudaMemcpyDeviceToDevice, s));
}

/* The high edge buffers hold local planes [nz-2h, nz+2h): this is where their plane 0 would be. */
static double *hi_base(const sg_prob_t *p, const sg_sub_t *d, double *buf)
{
    return buf - (size_t)(d->nz - 2 * p->bt) * sg_plane(p);
}

/* Steps s0 .. s0 + n - 1 (n = 1 or tb) of a sequence whose step s computes [lo(s), hi(s)): one launch. */
static void pass(const sg_prob_t *p, const sg_sub_t *d, cudaStream_t st, const double *src, double *dst,
                 int n, const int *lo, const int *hi)
{
    int l[4], h[4];
    for (int k = 0; k < n; k++) {
        l[k] = lo[k];
        h[k] = hi[k];
        sg_clip(p, d, &l[k], &h[k]);
    }
    if (n > 1 || sg_tb_staged(p))
        sg_launch_tb(p, d, st, src, dst, l, h);
    else
        sg_launch(p, d, st, src, dst, l[0], h[0]);
}

void sg_inner_steps(const sg_prob_t *p, sg_sub_t *d, sg_edges_t *e)
{
    int h = p->bt, nz = d->nz;
    SG_CUDA(cudaSetDevice(d->dev));
    SG_CUDA(cudaEventRecord(e->ready, d->s)); /* the previous block, edges included, is done */
    SG_CUDA(cudaStreamWaitEvent(e->s2, e->ready, 0));
    planes(p, e->s2, e->lo[0], d->src, h, 4 * h);
    planes(p, e->s2, hi_base(p, d, e->hi[0]), d->src, nz - 2 * h, nz + h);
    SG_CUDA(cudaEventRecord(e->snap, e->s2));
    int tb = p->tb > 1 ? p->tb : 1;
    for (int s = 1; s <= h; s += tb) {
        int lo[4], hi[4];
        for (int k = 0; k < tb; k++) lo[k] = 2 * h + s + k, hi[k] = nz - s - k;
        pass(p, d, e->s2, d->src, d->dst, tb, lo, hi);
        double *t = d->src;
        d->src = d->dst;
        d->dst = t;
    }
    SG_CUDA(cudaEventRecord(e->inner, e->s2));
}

void sg_edge_steps(const sg_prob_t *p, sg_sub_t *d, sg_edges_t *e, const double *A)
{
    int h = p->bt, nz = d->nz;
    SG_CUDA(cudaSetDevice(d->dev));
    SG_CUDA(cudaStreamWaitEvent(d->s, e->snap, 0));
    double *H[2] = {hi_base(p, d, e->hi[0]), hi_base(p, d, e->hi[1])};
    if (d->has_lo) planes(p, d->s, e->lo[0], A, 0, h);
    if (d->has_hi) planes(p, d->s, H[0], A, nz + h, nz + 2 * h);
    int tb = p->tb > 1 ? p->tb : 1, npass = 0;
    for (int s = 1; s <= h; s += tb, npass++) { /* a pass reads buffer b of each pair, writes a */
        int a = (npass + 1) & 1, b = npass & 1, llo[4], lhi[4], hlo[4], hhi[4];
        for (int k = 0; k < tb; k++) {
            int t = s + k;
            llo[k] = d->has_lo ? t : h, lhi[k] = 4 * h - t;
            hlo[k] = nz - 2 * h + t, hhi[k] = d->has_hi ? nz + 2 * h - t : nz + h;
        }
        pass(p, d, d->s, e->lo[b], e->lo[a], tb, llo, lhi);
        pass(p, d, d->s, H[b], H[a], tb, hlo, hhi);
    }
    SG_CUDA(cudaStreamWaitEvent(d->s, e->inner, 0)); /* the interior wrote older levels over these planes */
    /* the planes the last step computed (a fixed face is not computed: the buffer keeps its own copy) */
    int f = npass & 1, l0 = h, l1 = 3 * h, h0 = nz - h, h1 = nz + h;
    sg_clip(p, d, &l0, &l1);
    sg_clip(p, d, &h0, &h1);
    planes(p, d->s, d->src, e->lo[f], l0, l1);
    planes(p, d->s, d->src, H[f], h0, h1);
}
