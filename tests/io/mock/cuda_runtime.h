/* A stand-in for the CUDA runtime, for tests/io/cufile_mock.c only: "device" memory is host memory, so the
 * cuFile path's own logic (src/io/cufile.c) runs on a machine without a GPU. Only what cufile.c calls. */
#ifndef KYT_MOCK_CUDA_RUNTIME_H
#define KYT_MOCK_CUDA_RUNTIME_H
#include <string.h>

typedef int cudaError_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };

static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k)
{
    (void)k;
    memcpy(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaSetDevice(int d)
{
    (void)d;
    return cudaSuccess;
}
static inline cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceSynchronize(void)
{
    return cudaSuccess;
}
static inline cudaError_t cudaFree(void *p)
{
    (void)p;
    return cudaSuccess;
}
static inline const char *cudaGetErrorString(cudaError_t e)
{
    (void)e;
    return "mock CUDA error";
}
#endif
