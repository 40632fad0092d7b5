/* Status codes, the thread-local last-error message, and kyi_fail() which every error path goes through. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kyoyu/status.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

static __thread char kyi_last_msg[512];

const char *ky_strerror(int status)
{
    switch (status) {
        case KY_OK:
            return "success";
        case KY_PENDING:
            return "operation not yet complete";
        case KY_ERR_ARG:
            return "invalid argument";
        case KY_ERR_RANGE:
            return "access outside a registered segment";
        case KY_ERR_NOT_INIT:
            return "Kyoyu is not initialised";
        case KY_ERR_NOMEM:
            return "out of memory";
        case KY_ERR_MPI:
            return "MPI call failed";
        case KY_ERR_CUDA:
            return "CUDA call failed";
        case KY_ERR_NO_HANDLER:
            return "no active-message handler registered at that index";
        case KY_ERR_TIMEOUT:
            return "timed out (KY_TIMEOUT)";
        case KY_ERR_UNSUPPORTED:
            return "not supported in this build or on this machine";
        case KY_ERR_STATE:
            return "call not allowed in the current state";
        case KY_ERR_SYSTEM:
            return "operating-system call failed";
        case KY_ERR_INTERNAL:
            return "internal error in Kyoyu";
        case KY_ERR_IO:
            return "file input/output failed";
        default:
            return "unknown status code";
    }
}

const char *ky_last_error(void)
{
    return kyi_last_msg;
}

int kyi_fail(int status, const char *call, const char *fmt, ...)
{
    char cause[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    if (kyi_rt.initialized)
        snprintf(kyi_last_msg, sizeof kyi_last_msg, "rank %d: %s: %s (%s)", kyi_rt.rank, call, cause,
                 ky_strerror(status));
    else
        snprintf(kyi_last_msg, sizeof kyi_last_msg, "rank ?: %s: %s (%s)", call, cause, ky_strerror(status));
    /* Expected outcomes of probing calls (bad input the caller handles) are info, not warnings. */
    kyi_log(KYI_LOG_INFO, KYI_SUB_RUNTIME, "%s", kyi_last_msg);
    return status;
}

void kyi_trail(const char *file, int line, int status)
{
    if (kyi_log_enabled(KYI_LOG_INFO, KYI_SUB_RUNTIME))
        kyi_log(KYI_LOG_INFO, KYI_SUB_RUNTIME, "%s:%d -> %d (%s)", file, line, status, ky_strerror(status));
}
