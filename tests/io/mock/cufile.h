/* A stand-in for cuFile (GPUDirect Storage), for tests/io/cufile_mock.c only: the calls src/io/cufile.c
 * makes, with the public API's names and types, done with pread/pwrite through an aligned buffer. On a
 * descriptor opened with O_DIRECT it ends the test when an offset or a size is not a multiple of 4 KiB: the
 * cuFile path must hand cuFile whole pages only (its edges go through the page cache). Counts the calls and
 * bytes. cuFileHandleRegister fails with status 5027 (what a machine whose file system cuFile cannot take
 * answered) on the ranks mock_cufile_refuse() names (KY_TEST_CUFILE_MOCK_FAIL, cufile_mock.c). */
#ifndef KYT_MOCK_CUFILE_H
#define KYT_MOCK_CUFILE_H
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define CUFILEOP_BASE_ERR 5000
typedef enum CUfileOpError {
    CU_FILE_SUCCESS = 0,
    CU_FILE_CUDA_DRIVER_ERROR = CUFILEOP_BASE_ERR + 11,
    CU_FILE_INVALID_VALUE = CUFILEOP_BASE_ERR + 22,
    CU_FILE_HANDLE_NOT_REGISTERED = CUFILEOP_BASE_ERR + 27
} CUfileOpError;
static inline const char *cufileop_status_error(CUfileOpError s)
{
    if (s == CU_FILE_HANDLE_NOT_REGISTERED) return "file descriptor is not registered";
    return s == CU_FILE_SUCCESS ? "cufile success" : "mock cufile error";
}
typedef struct CUfileError {
    CUfileOpError err;
    int cu_err;
} CUfileError_t;
#define IS_CUFILE_ERR(err) (abs((err)) > CUFILEOP_BASE_ERR)
#define CUFILE_ERRSTR(err) cufileop_status_error((CUfileOpError)abs((err)))
enum CUfileFileHandleType { CU_FILE_HANDLE_TYPE_OPAQUE_FD = 1 };
typedef struct CUfileDescr_t {
    enum CUfileFileHandleType type;
    union {
        int fd;
        void *handle;
    } handle;
    const void *fs_ops;
} CUfileDescr_t;
typedef void *CUfileHandle_t;

extern long mock_cufile_calls, mock_cufile_bytes, mock_cufile_registers;
/* 1 where this rank's cuFileHandleRegister is to fail (cufile_mock.c) */
int mock_cufile_refuse(void);

static inline CUfileError_t mock_cufile_ok(void)
{
    CUfileError_t e = {CU_FILE_SUCCESS, 0};
    return e;
}
static inline CUfileError_t cuFileDriverOpen(void)
{
    return mock_cufile_ok();
}
static inline CUfileError_t cuFileDriverClose(void)
{
    return mock_cufile_ok();
}
static inline CUfileError_t cuFileHandleRegister(CUfileHandle_t *fh, CUfileDescr_t *d)
{
    mock_cufile_registers++;
    if (mock_cufile_refuse()) {
        CUfileError_t e = {CU_FILE_HANDLE_NOT_REGISTERED, 0};
        return e;
    }
    *fh = (void *)(long)(d->handle.fd + 1);
    return mock_cufile_ok();
}
static inline void cuFileHandleDeregister(CUfileHandle_t fh)
{
    (void)fh;
}
static inline ssize_t mock_cufile_io(CUfileHandle_t fh, void *buf, size_t size, off_t off, int put)
{
    int fd = (int)(long)fh - 1;
    if ((fcntl(fd, F_GETFL) & O_DIRECT) && (off % 4096 || size % 4096)) {
        fprintf(stderr, "mock cuFile: unaligned O_DIRECT %s at offset %ld of %zu bytes\n",
                put ? "write" : "read", (long)off, size);
        abort();
    }
    void *b;
    if (posix_memalign(&b, 4096, size ? size : 4096)) return -1;
    if (put) memcpy(b, buf, size);
    ssize_t r = put ? pwrite(fd, b, size, off) : pread(fd, b, size, off);
    if (!put && r > 0) memcpy(buf, b, (size_t)r);
    free(b);
    mock_cufile_calls++;
    mock_cufile_bytes += (long)size;
    return r;
}
static inline ssize_t cuFileWrite(CUfileHandle_t fh, const void *b, size_t s, off_t o, off_t bo)
{
    return mock_cufile_io(fh, (char *)b + bo, s, o, 1);
}
static inline ssize_t cuFileRead(CUfileHandle_t fh, void *b, size_t s, off_t o, off_t bo)
{
    return mock_cufile_io(fh, (char *)b + bo, s, o, 0);
}
#endif
