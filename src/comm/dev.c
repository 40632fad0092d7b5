/* The device view of a GPU segment (include/kyoyu/device.cuh): for every rank, the address at which this
 * rank's GPU reaches its piece (its own piece; peers' pieces comm mapped by CUDA IPC), NULL elsewhere. The
 * device calls are loads and stores through these; the peers left NULL are served by the segment's host
 * proxy (dev_proxy.c), started here the first time a view has any. Nothing here needs CUDA. */
#include <string.h>

#include "comm/dev_proxy.h"

/* proxy_all: every peer through the proxy, reachable or not (ky_dev_seg_proxied). */
static int dev_seg(const char *call, ky_seg_t seg, ky_dev_seg_t *out, int proxy_all)
{
    KYI_CHECK(kyi_check_target(call, kyi_rt.rank, seg));
    if (!out) return kyi_fail(KY_ERR_ARG, call, "out is NULL");
    if (seg->memkind != KY_MEM_GPU)
        return kyi_fail(KY_ERR_ARG, call, "segment %u is host memory: the device calls need a GPU segment",
                        seg->id);
    if (kyi_rt.nranks > KY_DEV_MAX_RANKS)
        return kyi_fail(KY_ERR_ARG, call, "%d ranks: the device view holds at most %d", kyi_rt.nranks,
                        KY_DEV_MAX_RANKS);
    memset(out, 0, sizeof *out);
    out->rank = kyi_rt.rank;
    out->nranks = kyi_rt.nranks;
    int unreachable = 0;
    for (int r = 0; r < kyi_rt.nranks; r++) {
        out->size[r] = seg->size_of[r];
        out->base[r] = r == kyi_rt.rank ? seg->base : proxy_all ? NULL : seg->mapped[r];
        int32_t key = seg->gpu_key_of[r];
        out->same_gpu[r] = out->base[r] && key >= 0 && key == seg->gpu_key_of[kyi_rt.rank];
        unreachable |= !out->base[r];
    }
    return unreachable ? kyi_dev_proxy_ring(seg, &out->ring) : KY_OK;
}

int ky_dev_seg(ky_seg_t seg, ky_dev_seg_t *out)
{
    return dev_seg("ky_dev_seg", seg, out, 0);
}

int ky_dev_seg_proxied(ky_seg_t seg, ky_dev_seg_t *out)
{
    return dev_seg("ky_dev_seg_proxied", seg, out, 1);
}
