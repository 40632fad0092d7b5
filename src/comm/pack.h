/* Internal, for the layers above comm (with chan.h): the strided layout helpers comm's own transfers use,
 * for layers that move strided boxes through a channel themselves (the halo exchange), and the chunk size
 * comm stages GPU memory in. Nothing here depends on a transport. */
#ifndef KYI_COMM_PACK_H
#define KYI_COMM_PACK_H

#include <stddef.h>

/* Bytes described by count[0..levels] (strided.c). */
size_t kyi_strided_bytes(const size_t count[], int levels);
/* Host-only pack (strided -> contiguous) and unpack (contiguous -> strided). */
void kyi_pack_host(void *dst, const void *src, const size_t src_stride[], const size_t count[], int levels);
void kyi_unpack_host(void *dst, const size_t dst_stride[], const void *src, const size_t count[], int levels);
/* The bytes strided transfers may touch from their start (strided_pack.c). */
size_t kyi_strided_extent(const size_t stride[], const size_t count[], int levels);
/* Host strided-to-strided copy (both sides strided). */
void kyi_copy_strided_host(char *dst, const size_t ds[], const char *src, const size_t ss[],
                           const size_t count[], int levels);
/* Pack/unpack where the strided side may be GPU memory on `dev` (-1 host); errors recorded under call. */
int kyi_pack(const char *call, void *dst, const void *src, int src_dev, const size_t src_stride[],
             const size_t count[], int levels);
int kyi_unpack(const char *call, void *dst, int dst_dev, const size_t dst_stride[], const void *src,
               const size_t count[], int levels);
/* KY_STAGE_CHUNK as comm uses it: GPU data moves through pinned host memory in pieces of this size. */
size_t kyi_stage_chunk(void);

#endif
