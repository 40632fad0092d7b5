/* Internal: chunked bulk transfers of the MPI path (bulk.c). */
#ifndef KYI_COMM_MPI_BULK_H
#define KYI_COMM_MPI_BULK_H

#include <mpi.h>
#include <stddef.h>

/* Chunk size for a transfer whose local side is on local_dev (-1 host) and remote side is GPU or not. */
size_t kyi_bulk_chunk(int local_dev, int remote_is_gpu);
size_t kyi_bulk_nchunks(size_t n, size_t chunk);
/* Blocking, pipelined through pinned buffers when the local side is GPU memory. */
int kyi_bulk_send(const char *call, const void *src, int src_dev, size_t n, size_t chunk, int peer, int tag,
                  MPI_Comm c);
int kyi_bulk_recv(const char *call, void *dst, int dst_dev, size_t n, size_t chunk, int peer, int tag,
                  MPI_Comm c);
/* Receive and drop a bulk transfer (target side of a request that failed its checks). */
int kyi_bulk_discard(const char *call, size_t n, size_t chunk, int peer, int tag, MPI_Comm c);
/* Post the chunk messages of a host buffer without waiting (reqs has nchunks entries). */
int kyi_bulk_post_host(int send, void *buf, size_t n, size_t chunk, int peer, int tag, MPI_Comm c,
                       MPI_Request *reqs);
void kyi_bulk_pool_free(void);

#endif
