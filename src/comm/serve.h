/* Internal: the target side of the MPI path (serve.c for RMA, am.c for active messages). */
#ifndef KYI_COMM_SERVE_H
#define KYI_COMM_SERVE_H

#include <stddef.h>
#include "comm/pack.h"
#include "comm/proto.h"

/* Handle one request from `src`; payload/np is what followed the header in its message. */
void kyi_serve(const kyi_hdr_t *h, void *payload, size_t np, int src);
void kyi_serve_am(const kyi_hdr_t *h, void *payload, size_t np, int src);

/* Strided helpers shared by the initiator and the target (strided.c; pack.h has the rest). */
size_t kyi_strided_extent(const size_t stride[], const size_t count[], int levels);
/* Host strided-to-strided copy (both sides strided). */
void kyi_copy_strided_host(char *dst, const size_t ds[], const char *src, const size_t ss[],
                           const size_t count[], int levels);
/* Pack/unpack where the strided side may be GPU memory on `dev` (-1 host). */
int kyi_pack(const char *call, void *dst, const void *src, int src_dev, const size_t src_stride[],
             const size_t count[], int levels);
int kyi_unpack(const char *call, void *dst, int dst_dev, const size_t dst_stride[], const void *src,
               const size_t count[], int levels);

#endif
