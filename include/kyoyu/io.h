/* Kyoyu io: distributed arrays and plain buffers (host or GPU memory) to and from plain HDF5 files
 * (docs/io.md; seed 002's HDF5 from GPU memory).
 *
 * One file per job, written by every rank through parallel HDF5 (MPI-IO), or with a serial HDF5 on the raw
 * path (KY_IO_RAW: rank 0 keeps the metadata, every rank writes its bytes at the dataset's offset; a file
 * being written cannot be read before ky_io_close there): each dataset is one contiguous
 * HDF5 dataset in C order over the global index space, and every rank writes its own hyperslab of it (its
 * owned elements: halos are never written). h5py, h5dump and ParaView read the files as they are.
 *
 * Element types: an element of `elem` bytes is stored as `components` values of one HDF5 number type
 * (ky_io_type_t): a float4 position+mass is KY_IO_F32 with 4 components, and the dataset then has one more
 * trailing dimension of 4. KY_IO_AUTO stores an array's elements as bytes (KY_IO_U8, elem components).
 *
 * Safety: ky_io_create writes to a temporary name in the same directory ("<path>.kytmp-<pid>"); only
 * ky_io_close renames it to `path` after every rank's data and the file's metadata are on disk, so a job
 * that fails or is killed before that leaves any older `path` untouched, and the temporary file is marked
 * incomplete (ky_io_open refuses it). Every dataset carries a checksum of its elements that does not
 * depend on how the writers or readers are distributed; a read that covers the dataset exactly once
 * verifies it (datasets written by other programs have none and are read unchecked).
 *
 * Paths for GPU memory (KY_IO_PATH, docs/api.md, or ky_io_opts_t.path per dataset): bounce (pinned host
 * buffers of KY_IO_CHUNK bytes, the device-to-host copy of the next piece overlapping the HDF5 write of this
 * one), cufile (GPUDirect Storage into the dataset's contiguous extent, HDF5 keeping the metadata;
 * KY_ERR_UNSUPPORTED in a build without cuFile), auto (per size, direction and file-system type from the
 * table `kybench io-tune` measured, KY_IO_TABLE; without one, cufile from 10 MiB per rank where it works).
 * Host memory goes to HDF5 directly (bounce sends it through the same pipeline, for tests and
 * measurements).
 *
 * All calls except the queries are collective over all ranks of the job, in the same order everywhere.
 * A build without HDF5 has the calls, and they return KY_ERR_UNSUPPORTED. Errors: KY_ERR_ARG for
 * bad arguments, KY_ERR_IO for files (unwritable directory, not HDF5, missing dataset, shape or type not
 * the asked one, checksum mismatch, no space left), each message naming rank, call, file and cause. */
#ifndef KYOYU_IO_H
#define KYOYU_IO_H

#include <stddef.h>
#include "kyoyu/export.h"
#include "kyoyu/status.h"
#include "kyoyu/array.h"

KY_EXTERN_C_BEGIN

typedef enum {
    KY_IO_AUTO = 0, /* arrays: bytes (KY_IO_U8 x elem); reads: whatever the file has, if the size fits */
    KY_IO_U8,
    KY_IO_I8,
    KY_IO_U16,
    KY_IO_I16,
    KY_IO_U32,
    KY_IO_I32,
    KY_IO_U64,
    KY_IO_I64,
    KY_IO_F32,
    KY_IO_F64
} ky_io_type_t;

/* How GPU memory moves for one dataset (seed 002's hint): KY_IO_PATH_DEFAULT takes the KY_IO_PATH setting;
 * the others override it for this call. The same on every rank. */
typedef enum {
    KY_IO_PATH_DEFAULT = 0, /* the KY_IO_PATH setting */
    KY_IO_PATH_AUTO,        /* the measured table (KY_IO_TABLE), else the built-in threshold (docs/io.md) */
    KY_IO_PATH_BOUNCE,      /* pinned host buffers; host memory through the same pipeline */
    KY_IO_PATH_CUFILE       /* GPUDirect Storage (cuFile) into the dataset's contiguous extent */
} ky_io_path_t;

/* Options of one dataset (NULL: all zero). */
typedef struct {
    ky_io_type_t type; /* number type of one component */
    int components;    /* values per element (0: elem / size of type for arrays, 1 for buffers) */
    const char *units; /* written as the dataset's "units" attribute (NULL: none) */
    ky_io_path_t path; /* KY_IO_PATH_DEFAULT (0): the KY_IO_PATH setting */
} ky_io_opts_t;

typedef struct kyi_io_file *ky_io_file_t;

/* Collective. A new file at `path` (written under a temporary name until ky_io_close). An unwritable
 * directory is KY_ERR_IO, reported by every rank. */
KY_API int ky_io_create(const char *path, ky_io_file_t *out);
/* Collective. An existing file, read only. Not HDF5, or a Kyoyu file whose writer did not finish:
 * KY_ERR_IO. */
KY_API int ky_io_open(const char *path, ky_io_file_t *out);
/* Collective. A file from ky_io_create: flushed, marked complete and renamed to its path (replacing an
 * older file there); if any rank failed a write before, the file is discarded instead and the call returns
 * KY_ERR_IO. A file from ky_io_open: closed. NULL is ignored. */
KY_API int ky_io_close(ky_io_file_t f);
/* Collective. A file from ky_io_create is discarded (the temporary name removed, `path` untouched). */
KY_API int ky_io_abort(ky_io_file_t f);

/* Collective over all ranks. Writes the array's owned elements as dataset `name` (a new one; names may
 * contain '/' groups that exist). Attributes: shape, element_type, element_size, components,
 * distribution, units, kyoyu_checksum. */
KY_API int ky_io_write(ky_io_file_t f, const char *name, ky_array_t a, const ky_io_opts_t *opts);
/* Collective. Reads dataset `name` into the array's owned elements (halos untouched); the dataset's
 * shape must be the array's (with the trailing component dimension when components > 1) and its element
 * size the array's. Any distribution reads any file. */
KY_API int ky_io_read(ky_io_file_t f, const char *name, ky_array_t a, const ky_io_opts_t *opts);

/* Collective. Dataset `name` of global shape dims[ndim] (1..4 dimensions); this rank's part is the box
 * [lo, hi) in `buf`, a dense C-order array in host or GPU memory. The boxes of all ranks must not overlap
 * and must cover the dataset (an empty box, lo == hi, is allowed). opts->type is required. */
KY_API int ky_io_write_buffer(ky_io_file_t f, const char *name, int ndim, const size_t dims[],
                              const size_t lo[], const size_t hi[], const void *buf,
                              const ky_io_opts_t *opts);
/* Collective. The box [lo, hi) of dataset `name` into `buf` (host or GPU). Boxes may overlap; the
 * checksum is verified when the boxes of all ranks cover the dataset exactly once. opts NULL or type
 * KY_IO_AUTO: any type whose element size is what the caller's buffer holds is not checked (the caller
 * learns it from ky_io_info first). */
KY_API int ky_io_read_buffer(ky_io_file_t f, const char *name, int ndim, const size_t lo[], const size_t hi[],
                             void *buf, const ky_io_opts_t *opts);

/* Not collective. Shape of dataset `name` without the component dimension (*ndim, dims[] of up to 4),
 * its component type and count (any output may be NULL). A dataset of more than 5 dimensions, or one whose
 * type is not a plain number, is KY_ERR_IO. */
KY_API int ky_io_info(ky_io_file_t f, const char *name, int *ndim, size_t dims[], ky_io_type_t *type,
                      int *components);

/* Bytes of one component of `type` (0 for KY_IO_AUTO). */
KY_API size_t ky_io_type_size(ky_io_type_t type);

/* The file system `path` is on (its directory's while path does not exist yet) as the automatic path's table
 * names it (the table's first column): ext4, xfs, tmpfs, overlay, nfs, lustre, ..., 0x<magic> for others,
 * "unknown" where statfs fails. Written into buf (len bytes), which is returned. */
KY_API const char *ky_io_fs_type(const char *path, char *buf, size_t len);

KY_EXTERN_C_END

#endif
