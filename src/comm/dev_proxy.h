/* Internal: the host proxy of the device API (dev_proxy.c). seg.c registers its signal handlers when a GPU
 * segment is created and stops a segment's proxy before the segment goes away; dev.c starts it. */
#ifndef KYI_COMM_DEV_PROXY_H
#define KYI_COMM_DEV_PROXY_H

#include "comm/comm.h"
#include "kyoyu/device.cuh"

/* The signal handlers on this rank (idempotent; called by every rank inside a collective call). */
int kyi_dev_proxy_register(void);
/* s's ring (started on the first call) into *out. */
int kyi_dev_proxy_ring(struct kyi_seg *s, ky_dev_ring_t *out);
/* Serve what kernels queued, stop the proxy thread and free the ring (nothing if s has none). */
void kyi_dev_proxy_stop(struct kyi_seg *s);

#endif
