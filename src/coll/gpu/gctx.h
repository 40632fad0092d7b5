/* Internal to src/coll/gpu/: the contexts GPU collectives run in (gctx.c) and the small host collectives
 * their set-up uses. */
#ifndef KYI_COLL_GPU_GCTX_H
#define KYI_COLL_GPU_GCTX_H

#include <cuda_runtime_api.h>

#include "coll/coll.h"
#include "coll/gpu/gcoll.h"
#include "coll/gpu/nvl.h"

/* Every member's registered buffer, exchanged by CUDA IPC (nvl.h). */
typedef struct {
    int dev;
    char *buf[KYI_NVL_MAXP]; /* [me] is this member's own allocation */
    size_t scratch;          /* bytes after the header */
    struct kyi_team *team;
} kyi_nvl_t;

struct kyi_gteam {
    int dev;             /* this member's GPU */
    int path;            /* KYI_GPATH_NVL or KYI_GPATH_STAGED, the same on every member */
    cudaStream_t stream; /* blocking stream for calls without one */
    kyi_nvl_t *nvl;      /* context of blocking calls (NVL path), grown on demand */
    char *pinned;        /* staging of blocking calls, grown on demand */
    size_t pinned_bytes;
};

/* Host collectives over a team on host memory (set-up only). */
int kyi_gx_allgather(struct kyi_team *t, const void *mine, size_t b, void *all, const char *call);
int kyi_gx_barrier(struct kyi_team *t, const char *call);

/* Collective over t: allocate this member's buffer with `scratch` bytes, exchange and open the others'.
 * *out is NULL (and KY_OK) when some member could not take part: the caller stages instead. */
int kyi_nvl_create(struct kyi_team *t, int dev, size_t scratch, kyi_nvl_t **out, const char *call);
/* Collective: every member stopped using it (barrier), then unmapped and freed. */
void kyi_nvl_destroy(kyi_nvl_t *c, const char *call);

/* The team's GPU context, made at first use (collective). dev: the device of the call's buffers. */
int kyi_gteam_get(const char *call, struct kyi_team *t, int dev, struct kyi_gteam **out);

/* CUDA error in `call`: ends the job when the context is gone (a trapped kernel: a timed-out wait names
 * the member in the error word), else records KY_ERR_CUDA. */
int kyi_gx_cuda(cudaError_t e, const char *call, const char *what);
/* Host-mapped error word the kernels write before trapping; KY_TIMEOUT in ns. */
int *kyi_gx_err_word(void);
unsigned long long kyi_gx_timeout_ns(void);

/* Make dev current; returns the previous device to restore with kyi_gx_dev_leave. */
int kyi_gx_dev_enter(int dev, int *prev, const char *call);
void kyi_gx_dev_leave(int prev);

#endif
