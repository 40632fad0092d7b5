/* Internal: what comm's API files (rma.c, strided.c, am.c) ask of a transport, the one table of function
 * pointers each transport folder fills (mpi/ always, ucx/ when built with UCX). The API files check
 * arguments, take the direct paths (self, shared memory, CUDA IPC) themselves and hand everything else to
 * the transport that reaches the target's piece (kyi_tp_for). A transport never calls back into the API
 * files except through kyi_tp_am_deliver, the target-side callback for active messages.
 *
 * The MPI transport is always up: it carries the bootstrap, the channel (chan.h) and every segment no
 * other transport registered (GPU memory). Its requests live in the handle's MPI_Request array; another
 * transport keeps its own in h->xreq and completes them through its test function. */
#ifndef KYI_COMM_TRANSPORT_H
#define KYI_COMM_TRANSPORT_H

#include "comm/comm.h"
#include "comm/proto.h"

typedef struct kyi_transport {
    const char *name;
    ky_path_t path; /* what ky_comm_path and the statistics report for it */
    /* Initiator side: the hdr is filled (op, seg, off, n; strided descriptors in args) and copied by the
     * callee. Strided calls move hdr->n packed host bytes; get_strided with dst NULL asks for the reply in
     * h->tmp as [status][data] (MPI only: strided.c uses it where eager_get says so). */
    int (*put)(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, const void *src, int src_dev);
    int (*get)(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, void *dst, int dst_dev);
    int (*put_strided)(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, const void *packed);
    int (*get_strided)(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, void *packed);
    /* Strided transfers straight between the caller's buffer (its strides ls, on GPU ldev or the host: -1)
     * and the target, row by row, with no packed copy (NULL: the transport takes packed bytes only). A
     * transport that cannot move this memory in place returns KY_ERR_UNSUPPORTED having issued nothing, and
     * strided.c packs instead. */
    int (*put_rows)(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, const void *src, const size_t ls[],
                    int ldev);
    int (*get_rows)(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, void *dst, const size_t ls[],
                    int ldev);
    int (*memset)(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr);
    /* The address at which rank's host piece of s is mapped here by the transport (UCX: its shared memory,
     * ucp_rkey_ptr), NULL where it is not (NULL: never). A blocking contiguous transfer of host bytes then
     * copies through it like the direct path (rma.c): no handle, no dispatch, complete at issue. */
    char *(*mapped)(const struct kyi_seg *s, int rank);
    /* Whether a get of n bytes should come back in one reply message (get_strided with packed NULL). */
    int (*eager_get)(size_t n);
    /* One active message (hdr filled by am.c) with its payload; s is the target segment of a long one.
     * reply: sent from a handler, so it must not block the engine. */
    int (*am_send)(const char *call, int rank, kyi_hdr_t *hdr, const void *payload, int pdev,
                   struct kyi_seg *s, int reply);
    /* Completion of h's requests in h->xreq (NULL: the transport uses only the MPI requests). */
    int (*test)(kyi_handle_t *h, int *done);
    /* Serve what arrived (the progress engine, one thread at a time): requests handled, -1 on STOP. */
    int (*progress)(void);
    /* Move bytes without serving anything (any thread, handlers included; NULL: nothing to do). */
    void (*background)(void);
    /* This rank's host piece of s (s->bytes > 0 bytes, zero-filled, page-aligned) allocated by the transport
     * in memory its peers reach best (UCX: shared memory a peer of the same host writes with stores, which
     * memory UCX only registered is not): KY_OK with s->base and s->xmem set; anything else leaves s as it
     * was, and seg.c allocates the piece itself (NULL: never). Not collective; seg_free releases it after
     * seg_detach. */
    int (*seg_alloc)(struct kyi_seg *s);
    void (*seg_free)(struct kyi_seg *s);
    /* Collective, after every rank's piece exists: make s reachable (0 and s->xseg NULL: not this one). */
    int (*seg_attach)(struct kyi_seg *s);
    void (*seg_detach)(struct kyi_seg *s);
    void (*fini)(void);
} kyi_transport_t;

extern const kyi_transport_t kyi_tp_mpi;
/* The MPI transport's communicators and channel (mpi/init_mpi.c): opened first, closed last. */
void kyi_mpi_open(void);
void kyi_mpi_close(void);
/* The split-phase barrier's network part, whatever the transport (mpi/barrier_mpi.c): start one, test it. */
int kyi_mpi_barrier_start(const char *call);
int kyi_mpi_barrier_test(const char *call, int *done);

/* The transport other than MPI that this job uses (KY_TRANSPORT), or NULL. */
extern const kyi_transport_t *kyi_tp_extra;

/* Transport reaching rank's piece of s when no direct path does. */
static inline const kyi_transport_t *kyi_tp_for(const struct kyi_seg *s)
{
    return s->xseg ? kyi_tp_extra : &kyi_tp_mpi;
}
/* Transport every active message travels on (same-node ones too; only a long payload to a mapped piece is
 * written directly). */
static inline const kyi_transport_t *kyi_tp_am(void)
{
    return kyi_tp_extra ? kyi_tp_extra : &kyi_tp_mpi;
}

/* Target side: run active message h from src. A long message's payload is already in its segment
 * (KYI_F_PLACED) or follows the header (KYI_F_EAGER); a medium one's is `payload`. am.c defines it;
 * transports call it and nothing else of the API files. */
typedef void (*kyi_am_deliver_fn)(const kyi_hdr_t *h, void *payload, int src);
extern kyi_am_deliver_fn kyi_am_deliver;

/* ucx/: open the UCX transport (collective; KY_ERR_UNSUPPORTED when Kyoyu was built without UCX). */
int kyi_ucx_open(const kyi_transport_t **out);
/* Whether this build has UCX (ucx/ucx_none.c says no). */
int kyi_ucx_built(void);
/* Background progress of the extra transport from any thread, serving nothing (waits inside handlers). */
void kyi_tp_background(void);

#endif
