/* Internal: what the files of the array layer share. dist.c holds the distribution arithmetic (which part
 * owns an index, a part's extent, local <-> global index), array.c creation and queries, region.c region
 * get/put, halo.c the halo exchange and its plan, dsm_view.c the DSM view. */
#ifndef KYI_ARRAY_ARRAY_H
#define KYI_ARRAY_ARRAY_H

#include <stddef.h>

#include "kyoyu.h"
#include "runtime/runtime.h"

#define KYI_ARRAY_MAX_BLOCKS KYI_MAX_GPUS_PER_RANK
#define KYI_ARRAY_MAX_ELEM 256

/* One of this rank's local blocks. */
typedef struct {
    int part;                     /* part number in the grid of parts */
    int coord[KY_ARRAY_MAX_DIMS]; /* its coordinates in the grid */
    size_t n[KY_ARRAY_MAX_DIMS];  /* owned extent per dimension */
    size_t E[KY_ARRAY_MAX_DIMS];  /* padded extent n + 2*halo */
    size_t S[KY_ARRAY_MAX_DIMS];  /* element strides */
    size_t bytes;
    char *base;   /* allocation start (segment piece) */
    char *origin; /* local index (0,...,0) */
    int dev;      /* CUDA device, -1 host */
} kyi_ablock_t;

/* One strided put of the halo plan. */
typedef struct {
    int rank;
    ky_seg_t seg;
    size_t off;
    const void *src;
    size_t count[4], ss[3], ds[3];
    int levels;
} kyi_halo_op_t;

struct kyi_array {
    int ndim;
    size_t dims[KY_ARRAY_MAX_DIMS];
    size_t elem;
    int place;
    int kind[KY_ARRAY_MAX_DIMS];
    size_t bsize[KY_ARRAY_MAX_DIMS];
    int parts[KY_ARRAY_MAX_DIMS];
    int halo[KY_ARRAY_MAX_DIMS];
    int first, count, bpr, nparts;
    int nlocal;
    kyi_ablock_t blk[KYI_ARRAY_MAX_BLOCKS];
    ky_seg_t seg[KYI_ARRAY_MAX_BLOCKS]; /* segment k holds every rank's block k */
    ky_team_t team;                     /* the array's ranks (KY_TEAM_WORLD when all) */
    int planned;
    int nops;
    kyi_halo_op_t *ops;
    int puts_anywhere;       /* some member of the team has puts: the exchange needs barriers */
    struct kyi_halo_mpi *hm; /* messages to other nodes (halo_mpi.c), NULL when off */
    int inflight, nhs, st;   /* an exchange begun and not ended: its puts and status so far */
    ky_handle_t *hs;
    void *view; /* the DSM view (dsm_view.c), NULL until ky_array_dsm_view */
};

/* ---- dist.c ---------------------------------------------------------------------------------------- */
/* Extent of part i along dimension d. */
size_t kyi_adist_extent(const struct kyi_array *a, int d, int i);
/* First global index of part i along a block dimension d. */
size_t kyi_adist_lo(const struct kyi_array *a, int d, int i);
/* Part along d that owns global index g, and g's local index in it. */
int kyi_adist_part(const struct kyi_array *a, int d, size_t g, size_t *local);
/* Global index of local index l of part i along d. */
size_t kyi_adist_global(const struct kyi_array *a, int d, int i, size_t l);
/* Part number <-> grid coordinates (row-major), and the part's rank and local block. */
int kyi_adist_part_of(const struct kyi_array *a, const int coord[]);
void kyi_adist_coord(const struct kyi_array *a, int part, int coord[]);
void kyi_adist_home(const struct kyi_array *a, int part, int *rank, int *k);
/* Storage geometry of any part (extents, padded extents, strides). */
void kyi_adist_geom(const struct kyi_array *a, int part, size_t n[], size_t E[], size_t S[]);
/* A box of counts[ndim] elements between two C-order layouts with element strides sS / dS, as a comm
 * strided transfer of at most 3 levels (dimensions merged where contiguous on both sides, count-1
 * dimensions dropped). Returns the levels, or -1 if more than 3 are needed. */
int kyi_abox_strided(int ndim, const size_t counts[], const size_t sS[], const size_t dS[], size_t elem,
                     size_t count[4], size_t ss[3], size_t ds[3]);

/* ---- halo.c, halo_mpi.c ------------------------------------------------------------------------------ */
/* The part next to local block k in direction dir (entries -1, 0, 1), or -1 (global boundary, no halo). */
int kyi_halo_part(const struct kyi_array *a, int k, const int dir[]);
/* Messages to the neighbours reached over MPI (and UCX under KY_HALO_SENDRECV=1): planned once (none when
 * KY_HALO_SENDRECV=0), then started
 * (receives posted, boundary copies begun) and finished (every message and copy complete; `st` is passed
 * through unless it is KY_OK and something failed) by every exchange. */
int kyi_halo_mpi_plan(const char *call, struct kyi_array *a);
int kyi_halo_mpi_start(const char *call, struct kyi_array *a);
int kyi_halo_mpi_finish(const char *call, struct kyi_array *a, int st);
void kyi_halo_mpi_free(struct kyi_array *a);
/* 1 if the halo of a block of `seg` on `rank` goes by message rather than by put. */
int kyi_halo_by_msg(const struct kyi_array *a, int rank, ky_seg_t seg);

/* ---- region.c ---------------------------------------------------------------------------------------- */
/* ky_array_get (put = 0) / ky_array_put (1) of box [lo, hi), errors naming `call`. */
int kyi_array_region(const char *call, ky_array_t a, const size_t lo[], const size_t hi[], void *buf,
                     int put);
/* Row-major elements [e0, e1) of the global index space, moved between buf (dense) and the blocks. */
int kyi_array_linear(const char *call, ky_array_t a, size_t e0, size_t e1, void *buf, int put);
/* Bytes [b, b+n) of row-major element e (b + n <= elem), moved between buf and the owner's block. */
int kyi_array_elem_bytes(ky_array_t a, size_t e, size_t b, size_t n, void *buf, int put);
/* The rank that owns row-major element e. */
int kyi_array_elem_owner(const struct kyi_array *a, size_t e);

/* ---- checks shared by the calls ----------------------------------------------------------------------- */
int kyi_array_check(const char *call, const struct kyi_array *a);
int kyi_array_check_block(const char *call, const struct kyi_array *a, int k);

#endif
