/* Kyoyu: status codes. Every call returns one: KY_OK (0), KY_PENDING (1, "not yet", never an error) or a
 * negative error. The message of the last failure of the calling thread, naming rank, call and cause, is
 * kept in thread-local storage and returned by ky_last_error(). */
#ifndef KYOYU_STATUS_H
#define KYOYU_STATUS_H

#include "kyoyu/export.h"

KY_EXTERN_C_BEGIN

typedef enum {
    KY_OK = 0,
    KY_PENDING = 1,         /* ky_test / ky_barrier_try: the operation has not completed yet */
    KY_ERR_ARG = -1,        /* invalid argument: null pointer, size that looks negative, bad rank */
    KY_ERR_RANGE = -2,      /* access outside a registered segment; the target is left untouched */
    KY_ERR_NOT_INIT = -3,   /* called before ky_init or after ky_finalize */
    KY_ERR_NOMEM = -4,      /* out of host or GPU memory */
    KY_ERR_MPI = -5,        /* an MPI call failed */
    KY_ERR_CUDA = -6,       /* a CUDA call failed */
    KY_ERR_NO_HANDLER = -7, /* active message to an index with no registered handler */
    KY_ERR_TIMEOUT = -8,    /* waited longer than KY_TIMEOUT */
    KY_ERR_UNSUPPORTED =
        -9,                /* not available in this build or on this machine (e.g. GPU memory without CUDA) */
    KY_ERR_STATE = -10,    /* call not allowed now (e.g. ky_init twice, nested split-phase barrier) */
    KY_ERR_SYSTEM = -11,   /* an operating-system call failed (shm_open, mmap, ...) */
    KY_ERR_INTERNAL = -12, /* a bug in Kyoyu: please report it with KY_DEBUG=trace output */
    KY_ERR_IO = -13        /* a file could not be written or read, or its content is not what was asked
                            * for (kyoyu/io.h: not HDF5, missing dataset, wrong shape, checksum mismatch) */
} ky_status_t;

/* Short fixed description of a status code ("invalid argument"). Never NULL. */
KY_API const char *ky_strerror(int status);

/* Full message of the last failed call on this thread: "rank 3: ky_put: offset 4096 + 16 bytes outside
 * segment 2 of rank 1 (4096 bytes)". Empty string if nothing failed yet. */
KY_API const char *ky_last_error(void);

KY_EXTERN_C_END

#endif
