/* CUDA service layer: errors. Every failing call of the layer records a short text for
 * kyi_gpu_last_error() ("cudaMemcpyAsync: invalid argument") and returns its status through kyi_fail().
 * Errors that poison the CUDA context end the job with a message (STYLE: abort on unrecoverable CUDA
 * errors, return the rest). */
#include <stdarg.h>
#include <stdio.h>

#include "runtime/gpu/gpu_impl.h"

static __thread char last_text[320];

const char *kyi_gpu_last_error(void)
{
    return last_text[0] ? last_text : "no GPU error";
}

int kyi_gpu_fail(int status, const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_text, sizeof last_text, fmt, ap);
    va_end(ap);
    return kyi_fail(status, call, "%s", last_text);
}

int kyi_gpu_err_is_sticky(cudaError_t err)
{
    switch (err) {
        case cudaErrorECCUncorrectable:
        case cudaErrorContained:
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchTimeout:
        case cudaErrorAssert:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorLaunchFailure:
        case cudaErrorTensorMemoryLeak:
        case cudaErrorMpsClientTerminated:
        case cudaErrorExternalDevice:
            return 1;
        default:
            return 0;
    }
}

int kyi_gpu_cuda_fail(cudaError_t err, const char *call, const char *cuda_call)
{
    if (kyi_gpu_err_is_sticky(err))
        kyi_fatal("%s: %s failed: %s (%s); the CUDA context is unusable", call, cuda_call,
                  cudaGetErrorString(err), cudaGetErrorName(err));
    (void)cudaGetLastError(); /* a returned, non-sticky error stays as the thread's last error: clear it */
    return kyi_gpu_fail(KY_ERR_CUDA, call, "%s: %s (%s)", cuda_call, cudaGetErrorString(err),
                        cudaGetErrorName(err));
}
