/* Internal: what the files of the io layer share (docs/io.md). file.c owns files (temporary name, commit by
 * rename, the agreement of all ranks on a status), dataset.c the public dataset calls (checks, attributes),
 * xfer.c the moves between memory and a dataset (the path of each dataset chosen once for all ranks; host
 * memory straight to HDF5, GPU memory through the bounce pipeline or cuFile), table.c the measured table
 * behind KY_IO_PATH=auto, checksum.c the distribution-independent checksum, cufile.c (cufile_none.c in builds
 * without cuFile) the GPUDirect Storage path, runs.c a piece's contiguous runs, checksum_gpu.cu the checksum
 * on the GPU (checksum_gpu_none.c without CUDA), raw.c the raw path (serial HDF5: rank 0 alone keeps the
 * metadata, every rank moves its bytes with pwrite/pread at the dataset's offset).
 *
 * io sits above array: it uses array's public API, the runtime's GPU service (runtime/gpu.h), settings and
 * errors, and MPI only for the communicator HDF5's MPI-IO driver needs, the agreement of the ranks on a
 * status and a checksum, and (raw path) rank 0's dataset offsets (HDF5 itself is MPI underneath). */
#ifndef KYI_IO_IO_H
#define KYI_IO_IO_H

#include <hdf5.h>
#include <limits.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "io/checksum_gpu.h"
#include "kyoyu.h"
#include "kyoyu/io.h"

#define KYI_IO_MAXD (KY_ARRAY_MAX_DIMS + 1) /* + the component dimension */
#define KYI_IO_PATH_MAX 4096

struct kyi_io_file {
    hid_t fid;     /* -1 on ranks without the file's HDF5 handle (raw path, writing: rank 0 has it) */
    int raw;       /* the raw path (KY_IO_RAW): data as raw bytes at each dataset's offset */
    int raw_fd;    /* this rank's descriptor of the raw path (-1: not opened yet) */
    int raw_dfd;   /* the same file with O_DIRECT for whole pages of runs (-1: none, or refused) */
    int writing;   /* from ky_io_create: committed by rename at close */
    int failed;    /* a write failed on some rank: close discards the file */
    MPI_Comm comm; /* private duplicate of the job's ranks, handed to MPI-IO */
    char path[KYI_IO_PATH_MAX]; /* the name the user asked for */
    char tmp[KYI_IO_PATH_MAX];  /* the name written to until close */
    void *pin[2];               /* the bounce path's pinned buffers, kept for the file's life */
    size_t pin_bytes;
    int pin_malloc;     /* plain malloc (host pieces forced to bounce without CUDA), not pinned */
    void *cufile;       /* cufile.c's descriptors and registered handle of this file (NULL: none yet) */
    int cufile_refused; /* cuFile failed on this file on some rank: auto keeps it on bounce */
};

/* One dataset as the transfers see it. `off` is set where the dataset is one allocated contiguous extent of
 * this machine's number types (its bytes can be moved raw: cuFile, the raw path), else KYI_IO_NO_EXTENT. */
typedef struct {
    hid_t id;     /* -1 on ranks without the file's HDF5 handle */
    uint64_t off; /* byte offset of the extent in the file */
} kyi_io_dset_t;
#define KYI_IO_NO_EXTENT UINT64_MAX

/* Paths of one piece (xfer.c) */
enum { KYI_IO_HOST, KYI_IO_BOUNCE, KYI_IO_CUFILE };

/* The paths of one dataset's pieces, chosen once for all ranks (kyi_io_plan) */
typedef struct {
    int gpu;       /* KYI_IO_BOUNCE or KYI_IO_CUFILE for pieces in GPU memory */
    int host;      /* KYI_IO_HOST or KYI_IO_BOUNCE for pieces in host memory */
    int automatic; /* auto chose cufile: a cuFile failure redoes the transfer through bounce */
} kyi_io_plan_t;

/* The shape of a dataset as Kyoyu sees it: ndim dimensions of elements, each `comp` values of `type`. */
typedef struct {
    int ndim;
    size_t dims[KY_ARRAY_MAX_DIMS];
    ky_io_type_t type;
    int comp;
    size_t elem; /* comp * type size */
} kyi_io_shape_t;

/* One piece of this rank's memory and where its elements go in the dataset: an array's local block or a
 * caller's dense buffer. Local index l along d is global index g[d][l] (g[d] NULL: g0[d] + l). */
typedef struct {
    char *origin;                  /* local index (0, ..., 0) */
    size_t n[KY_ARRAY_MAX_DIMS];   /* owned counts */
    size_t S[KY_ARRAY_MAX_DIMS];   /* element strides in memory */
    size_t E[KY_ARRAY_MAX_DIMS];   /* padded extents (n + 2 halo) */
    size_t off[KY_ARRAY_MAX_DIMS]; /* origin's index inside E (the halo width) */
    size_t g0[KY_ARRAY_MAX_DIMS];
    size_t *g[KY_ARRAY_MAX_DIMS];
    int dev; /* CUDA device, -1 host memory */
} kyi_io_piece_t;

/* ---- file.c ------------------------------------------------------------------------------------------ */
/* Every rank passes its own status; all return the lowest one (the first failing rank's), and ranks that did
 * not fail record that rank's message as theirs, so each rank's ky_last_error names the cause. */
int kyi_io_agree(const char *call, MPI_Comm comm, int st);
/* HDF5's own error printing off for the duration of one call (saved and restored: the program may use
 * HDF5 itself). */
typedef struct {
    H5E_auto2_t func;
    void *data;
} kyi_io_quiet_t;
void kyi_io_quiet_begin(kyi_io_quiet_t *q);
void kyi_io_quiet_end(const kyi_io_quiet_t *q);
/* The most specific message on HDF5's error stack (e.g. "No space left on device"), for messages. */
const char *kyi_io_h5_cause(char *buf, size_t len);
/* Keep the reason on the stack now, before cleanup calls clear it (kyi_io_h5_cause returns it). */
void kyi_io_h5_keep(void);
int kyi_io_check_file(const char *call, ky_io_file_t f, int writing);

/* ---- dataset.c ----------------------------------------------------------------------------------------- */
hid_t kyi_io_h5type(ky_io_type_t t);

/* ---- xfer.c ------------------------------------------------------------------------------------------- */
/* Collective: the paths of dataset `dset` for this call (the opts' hint, else KY_IO_PATH; auto asks the table
 * with the dataset's bytes per rank, and takes cufile only where every rank can: all pieces in GPU memory,
 * cuFile working, the dataset contiguous in the file, long runs), the same on every rank so that no rank's
 * HDF5 write (MPI-IO read-modify-write of a strided selection) races another's cuFile write. */
/* Wherever cufile is taken, every rank that moves GPU memory registers the file with cuFile here, before any
 * byte moves: forced cufile fails now (the caller agrees, so every rank returns the cause), auto falls back
 * to bounce on every rank when some rank cannot register (a warning names rank, file and cuFile status) and
 * remembers the file and its file system, so later transfers do not try again. */
int kyi_io_plan(const char *call, ky_io_file_t f, const kyi_io_dset_t *ds, const kyi_io_shape_t *sh,
                const kyi_io_piece_t *pc, int np, const ky_io_opts_t *opts, int put, kyi_io_plan_t *plan);
/* Collective where plan->automatic, else 0 at once: after the pieces moved with this rank's status st,
 * whether some rank's cuFile transfer failed, so that every rank redoes the whole transfer through bounce
 * (plan switched to it, the file remembered). */
int kyi_io_plan_fallback(const char *call, ky_io_file_t f, kyi_io_plan_t *plan, int st);
/* Bytes of one run of piece p contiguous in the file (a row, or rows that cover whole trailing dimensions).
 */
size_t kyi_io_piece_run_bytes(const kyi_io_shape_t *sh, const kyi_io_piece_t *p);
/* Move one piece between memory and the dataset (file space `fspace`), adding its elements' checksum to
 * *cks. Returns this rank's status (not agreed). */
int kyi_io_put_piece(const char *call, ky_io_file_t f, const kyi_io_dset_t *ds, hid_t fspace,
                     const kyi_io_shape_t *sh, const kyi_io_piece_t *p, const kyi_io_plan_t *plan,
                     uint64_t *cks);
/* The bounce buffers freed (ky_io_close, ky_io_abort). */
void kyi_io_pin_free(ky_io_file_t f);
int kyi_io_get_piece(const char *call, ky_io_file_t f, const kyi_io_dset_t *ds, hid_t fspace,
                     const kyi_io_shape_t *sh, const kyi_io_piece_t *p, const kyi_io_plan_t *plan,
                     uint64_t *cks);

/* ---- table.c ------------------------------------------------------------------------------------------ */
/* ky_io_fs_type (kyoyu/io.h) names a path's file system for the table. */
/* The path KY_IO_TABLE's table measured fastest for `bytes` per rank on file system `fs` in one direction:
 * KYI_IO_BOUNCE or KYI_IO_CUFILE, or -1 when there is no table or no row for that file system (*why says
 * which row decided, or why none). */
int kyi_io_table_choose(const char *fs, int put, size_t bytes, char *why, size_t len);
/* Without a table: cufile from this many bytes per rank (seed 002: GDS wins above about 10 MB). */
#define KYI_IO_AUTO_CUFILE_MIN ((size_t)10 << 20)
/* auto takes cufile only when every rank's runs contiguous in the file are at least this long (shorter
 * runs are mostly unaligned edges, written through the page cache). */
#define KYI_IO_AUTO_RUN_MIN ((size_t)256 << 10)

/* ---- checksum.c ---------------------------------------------------------------------------------------- */
/* Sum over the elements of rows [r0, r1) (along dimension 0) of piece p of mix(global row-major index,
 * element bytes); `mem` holds row r0 at its start, with element strides mS. */
uint64_t kyi_io_checksum(const kyi_io_shape_t *sh, const kyi_io_piece_t *p, size_t r0, size_t r1,
                         const char *mem, const size_t mS[]);
#define KYI_IO_CHECKSUM_ALGO "kyoyu-sum-splitmix64-v1"

/* ---- runs.c ------------------------------------------------------------------------------------------- */
/* The runs of piece p contiguous both in the dataset and in memory, in file order along each row (*out
 * malloc'ed, NULL for an empty piece). */
int kyi_io_piece_runs(const char *call, const kyi_io_shape_t *sh, const kyi_io_piece_t *p, kyi_io_run_t **out,
                      size_t *nout);
/* GPU pieces of at least this many bytes have their checksum computed on the GPU on the bounce path too (the
 * CPU's 1-2 GB/s per core beside each HDF5 write would bound the pipeline); smaller ones on the CPU. */
#define KYI_IO_GPU_CKS_MIN ((size_t)1 << 20)

/* Seconds on a monotonic clock: the phase times KY_DEBUG=trace logs per dataset, piece and file (where a
 * write's time goes: dataset creation, transfer split into checksum, copy waits and file calls, the close's
 * fsync and rename). */
static inline double kyi_io_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- raw.c --------------------------------------------------------------------------------------------- */
/* Whether files take the raw path: KY_IO_RAW=1, or auto in a build without parallel HDF5; KY_IO_RAW=0 there
 * is KY_ERR_UNSUPPORTED. */
int kyi_io_raw_wanted(const char *call, int *raw);
/* Collective: ds for dataset d (-1 on ranks without the handle) of number type t; on a raw file being written
 * rank 0 flushes the new dataset's metadata and sends its offset to every rank. Returns this rank's status.
 */
int kyi_io_dset_extent(const char *call, ky_io_file_t f, hid_t d, ky_io_type_t t, kyi_io_dset_t *ds);
/* Rows [r0, r1) of piece p written (read) as raw bytes at the extent's offset `off` with pwrite (pread):
 * from (into) the piece itself, or (dense) from a dense buffer `mem` of those rows. */
int kyi_io_raw_rows(const char *call, ky_io_file_t f, uint64_t off, const kyi_io_shape_t *sh,
                    const kyi_io_piece_t *p, size_t r0, size_t r1, void *mem, int dense, int put);
/* Where in a dense buffer rows [r0, ...) of p should start (0..4095) so that the bytes line up with their
 * place in the file modulo the 4 KiB page: the raw path then moves whole pages with O_DIRECT. 0 where the
 * piece's rows are not laid out by global index (cyclic) or the dataset has no extent. */
size_t kyi_io_raw_shift(uint64_t off, const kyi_io_shape_t *sh, const kyi_io_piece_t *p, size_t r0);
#define KYI_IO_PAGE ((size_t)4096)
/* The raw descriptor closed; `sync`: fsync first (a written file about to be committed). */
int kyi_io_raw_close(const char *call, ky_io_file_t f, int sync);

/* ---- cufile.c (cufile_none.c) ------------------------------------------------------------------------- */
/* GPUDirect Storage: piece p's runs contiguous in the file written (read) with cuFileWrite (cuFileRead) at
 * `off` (the dataset's extent: kyi_io_dset_t.off; KYI_IO_NO_EXTENT is refused) + the run's byte offset
 * while HDF5 keeps the metadata; the checksum computed on the GPU. */
int kyi_io_cufile_put(const char *call, ky_io_file_t f, uint64_t off, const kyi_io_shape_t *sh,
                      const kyi_io_piece_t *p, uint64_t *cks);
int kyi_io_cufile_get(const char *call, ky_io_file_t f, uint64_t off, const kyi_io_shape_t *sh,
                      const kyi_io_piece_t *p, uint64_t *cks);
/* The file's cuFile handle registered now (kept until close): errors name the cuFile status. A failed
 * registration marks the file system, for kyi_io_cufile_fs_refused. */
int kyi_io_cufile_open(const char *call, ky_io_file_t f);
/* 1 if a registration failed on the file's file system in this process (or kyi_io_cufile_refuse_fs named it)
 */
int kyi_io_cufile_fs_refused(ky_io_file_t f);
void kyi_io_cufile_refuse_fs(ky_io_file_t f);
/* 1 if this build has the cuFile path and its driver opens (opened once, lazily; closed at exit). */
int kyi_io_cufile_available(void);
/* The file's cuFile handle and descriptors released; `sync`: fsync first (a written file about to be
 * committed). Returns KY_OK or KY_ERR_IO (fsync failed). */
int kyi_io_cufile_close(const char *call, ky_io_file_t f, int sync);

#endif
