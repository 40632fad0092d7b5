/* Kyoyu array: distributed N-d arrays in host or GPU memory (docs/architecture.md; the seeds' mapalloc,
 * SCASH's mapping and affinity scheduling, the multi-GPU stencil's halo exchange).
 *
 * The global index space dims[0] x ... x dims[ndim-1] (C order: the last dimension is contiguous) is cut by
 * a grid of parts, parts[d] along dimension d. Along a KY_DIST_BLOCK dimension part i owns the contiguous
 * range [i*n/P, (i+1)*n/P); along a KY_DIST_CYCLIC dimension with block size b, global index g belongs to
 * part (g / b) % P (b = 1: plain cyclic). Parts are numbered row-major over the grid (the last dimension's
 * part index varies fastest); part p lives on rank first + p / blocks_per_rank as that rank's local block
 * k = p % blocks_per_rank. blocks_per_rank > 1 is the seed's "one rank per node, one OpenMP thread per GPU"
 * model: with GPU placement block k of a rank is on that rank's GPU k (ky_gpu_device(k)).
 *
 * Each local block is stored with halo cells: halo[d] cells on both sides of dimension d (block dimensions
 * only). Layout of a block: padded extents E[d] = n[d] + 2*halo[d], C order, element strides
 * S[ndim-1] = 1, S[d] = S[d+1]*E[d+1]. The owned element with local index (i0, ..., i{ndim-1}) (0 <= i < n)
 * is at  base + sum_d (i[d] + halo[d]) * S[d]  elements from the allocation's start; ky_array_local returns
 * the address of local index (0, ..., 0), so owned element i is at local + sum_d i[d]*S[d] and halo cells
 * are at negative / past-the-end indices (-halo[d] .. n[d]+halo[d]-1). ky_array_layout gives E and S.
 * Blocks live in comm segments (one per local block index k), so neighbours reach them by shared memory,
 * CUDA IPC or MPI as the comm layer decides (KY_PATH_HOST / KY_PATH_GPU / KY_NODE_SPLIT apply).
 *
 * Halos: ky_array_halo_exchange fills every halo cell that has a neighbour part (faces, edges and corners:
 * all 3^ndim - 1 directions, so 27-point stencils work) with that neighbour's owned values. The global
 * boundary is not periodic: halo cells outside the index space are left to the program (boundary values).
 *
 * Collective calls (create, halo_exchange, free) are made by every rank of the job for create and free
 * (segments are world-collective), and by the array's ranks for halo_exchange. Ranks outside the array's
 * rank range own nothing (ky_array_nlocal = 0) but may get/put.
 *
 * DSM view: ky_array_dsm_view gives the whole array as one allocation of the global address space (DSM
 * layer, kyoyu/dsm.h), C order over the global index space, readable and writable by every rank through
 * plain pointers. Its homes are the blocks themselves, in host or GPU memory: a page is read from its
 * elements' owners when first touched, and the elements a rank changed through the view are written into
 * the owners' blocks at the next ky_barrier (ky_array_dsm_collect) or ky_unlock; there is no second copy. */
#ifndef KYOYU_ARRAY_H
#define KYOYU_ARRAY_H

#include <stddef.h>
#include "kyoyu/export.h"
#include "kyoyu/status.h"

KY_EXTERN_C_BEGIN

#define KY_ARRAY_MAX_DIMS 4  /* a halo face is at most a 4-D box: 3 strided levels of the comm layer */
#define KY_ARRAY_MAX_HALO 64 /* sanity bound on halo widths */

typedef enum { KY_DIST_BLOCK = 0, KY_DIST_CYCLIC = 1 } ky_dist_kind_t;
typedef enum { KY_PLACE_HOST = 0, KY_PLACE_GPU = 1 } ky_place_t;

typedef struct {
    int kind[KY_ARRAY_MAX_DIMS];     /* ky_dist_kind_t per dimension */
    size_t bsize[KY_ARRAY_MAX_DIMS]; /* cyclic block size (0 means 1); ignored for block dimensions */
    int parts[KY_ARRAY_MAX_DIMS];    /* parts along each dimension; the product must be count*blocks_per_rank.
                                      * All 0: every part along dimension 0 */
    int first, count;                /* the array's ranks: [first, first+count); count 0 means all ranks */
    int blocks_per_rank;             /* local blocks per rank (0 means 1); GPU placement: <= ky_ngpus() */
} ky_dist_t;

typedef struct kyi_array *ky_array_t;

/* The default distribution (all fields zero): block along dimension 0 over every rank, one block per rank
 * (the z-distributed stencil); other dimensions whole. */
KY_API ky_dist_t ky_dist_block1(void);

/* Collective over all ranks. elem: element size in bytes (1..256). dist NULL: ky_dist_block1(). halo NULL:
 * no halos. place: KY_PLACE_HOST or KY_PLACE_GPU. Blocks start zeroed, halos included. */
KY_API int ky_array_create(int ndim, const size_t dims[], size_t elem, const ky_dist_t *dist,
                           ky_place_t place, const int halo[], ky_array_t *out);
/* Collective over all ranks. NULL is ignored. */
KY_API int ky_array_free(ky_array_t a);

/* Local blocks of this rank (0 for ranks outside the array's range). */
KY_API int ky_array_nlocal(ky_array_t a);
/* Block 0 / block k of this rank: the address of its local index (0,...,0) (inside the halo'd allocation,
 * host or device memory by placement), and its owned bounds. lo/hi (may be NULL): for a block dimension the
 * global range [lo, hi) it owns; for a cyclic dimension the local index range [0, n) (ky_array_global_index
 * converts). A rank with no block k gets NULL with KY_ERR_ARG. */
KY_API void *ky_array_local(ky_array_t a, size_t lo[], size_t hi[]);
KY_API int ky_array_local_n(ky_array_t a, int k, void **ptr, size_t lo[], size_t hi[]);
/* Block k's storage: padded extents E[d] (owned + 2*halo) and element strides S[d] (see top of file). */
KY_API int ky_array_layout(ky_array_t a, int k, size_t extent[], size_t stride[]);
/* CUDA device of block k (-1 for host placement). */
KY_API int ky_array_device(ky_array_t a, int k, int *device);
/* Global index along `dim` of local index `l` of block k (identity + lo for block dimensions). */
KY_API int ky_array_global_index(ky_array_t a, int k, int dim, size_t l, size_t *g);

/* Which rank (and which of its local blocks; k may be NULL) owns global element idx. */
KY_API int ky_array_owner(ky_array_t a, const size_t idx[], int *rank, int *k);

/* SCASH affinity scheduling: the part of the loop range [lo, hi) along `dim` that block 0 / block k of
 * this rank owns. Block dimension: *mylo, *myhi are global indices (empty range: *mylo == *myhi).
 * Cyclic dimension: the owned indices of [lo, hi) are not contiguous in global space but are in local
 * space, so *mylo, *myhi are local indices (use ky_array_global_index). A rank owning nothing gets an
 * empty range. */
KY_API int ky_array_affinity_range(ky_array_t a, int dim, size_t lo, size_t hi, size_t *mylo, size_t *myhi);
KY_API int ky_array_affinity_range_n(ky_array_t a, int k, int dim, size_t lo, size_t hi, size_t *mylo,
                                     size_t *myhi);

/* Collective over the array's ranks: fill every halo cell with the neighbour's values (see top of file).
 * Planned at the first call: one strided put per neighbour direction on the same node (replayed from the
 * comm plan cache), matched MPI messages to neighbours on other nodes (KY_HALO_SENDRECV, docs/api.md).
 * Host placement: stream is ignored. GPU placement: the exchange starts after all work queued before the
 * call on `stream` (a cudaStream_t of block 0's device; NULL: that device's legacy default stream) and
 * completes before the call returns, so any work queued afterwards on any stream sees the halos.
 * ky_array_halo_exchange_n takes one stream per local block (streams may be NULL: all NULL). */
KY_API int ky_array_halo_exchange(ky_array_t a, void *stream);
KY_API int ky_array_halo_exchange_n(ky_array_t a, void *const streams[]);
/* The same in two halves, so that work which needs no halo runs while the halos move. _begin starts the
 * exchange (after the work queued on the stream(s), as above) and returns; _end returns when every halo
 * cell is filled (any work queued afterwards on any stream sees them). In between the program may compute
 * on anything except the boundary cells that neighbours receive (the owned cells within halo[d] of a side
 * with a neighbour) and the halo cells, and must not start another exchange of the same array; ending
 * without beginning, or beginning twice, is an error (KY_ERR_ARG). Every rank that began must end, in the
 * same order as the others when several arrays are in flight. */
KY_API int ky_array_halo_exchange_begin(ky_array_t a, void *stream);
KY_API int ky_array_halo_exchange_begin_n(ky_array_t a, void *const streams[]);
KY_API int ky_array_halo_exchange_end(ky_array_t a);

/* Region get / put: the global box [lo, hi) to / from `buf`, a dense C-order array of extents hi - lo
 * (host or GPU memory of the caller). Moves only owned values (never halos), split across owners with one
 * strided transfer per owner (per cyclic block run on cyclic dimensions). Not collective: the caller
 * orders it against other ranks' accesses (e.g. with ky_comm_barrier). */
KY_API int ky_array_get(ky_array_t a, const size_t lo[], const size_t hi[], void *buf);
KY_API int ky_array_put(ky_array_t a, const size_t lo[], const size_t hi[], const void *buf);

/* DSM view (collective over all ranks, like create and free). ky_array_dsm_view makes the view at the first
 * call (later calls return the same pointer) and ends with ky_barrier: *base + elem * (row-major global
 * index) is then the element on every rank. After the blocks change (every rank's writes done, GPU streams
 * synchronised): ky_array_dsm_publish (a ky_barrier: pages cached before are dropped, the next touch reads
 * the blocks again). After writes through the view: ky_array_dsm_collect (a ky_barrier: the changed elements
 * are in their owners' blocks on return). Within one interval the owner must not change elements that other
 * ranks read through the view (a fault reads the block as it is then), and two ranks must not write the same
 * element (writes are element-granular). Halos are not touched: exchange them afterwards. ky_fetch_add and
 * ky_push_array on the view: KY_ERR_UNSUPPORTED. ky_array_free frees the view. */
KY_API int ky_array_dsm_view(ky_array_t a, void **base);
KY_API int ky_array_dsm_publish(ky_array_t a);
KY_API int ky_array_dsm_collect(ky_array_t a);

/* Shape queries. */
KY_API int ky_array_ndim(ky_array_t a);
KY_API int ky_array_dims(ky_array_t a, size_t dims[], size_t *elem);
/* The distribution as created, defaults filled in (parts, count, blocks_per_rank, bsize of cyclic
 * dimensions), the halo widths (may be NULL) and the placement (may be NULL): what a file records about the
 * array (kyoyu/io.h). */
KY_API int ky_array_dist(ky_array_t a, ky_dist_t *dist, int halo[], ky_place_t *place);

KY_EXTERN_C_END

#endif
