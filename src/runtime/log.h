/* Internal: errors and logging. Every failing call goes through kyi_fail(), which records the thread-local
 * message "rank R: call: cause" returned by ky_last_error(), logs it at warn level, and returns the status.
 * Log lines start with "host:pid:rank". KY_DEBUG=warn|info|trace, KY_DEBUG_SUBSYS, KY_DEBUG_FILE. */
#ifndef KYI_RUNTIME_LOG_H
#define KYI_RUNTIME_LOG_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { KYI_LOG_NONE = 0, KYI_LOG_WARN = 1, KYI_LOG_INFO = 2, KYI_LOG_TRACE = 3 };
enum {
    KYI_SUB_RUNTIME = 1,
    KYI_SUB_COMM = 2,
    KYI_SUB_COLL = 4,
    KYI_SUB_DSM = 8,
    KYI_SUB_ARRAY = 16,
    KYI_SUB_IO = 32,
    KYI_SUB_GPU = 64
};

/* Record and log an error; returns status so callers write `return kyi_fail(KY_ERR_ARG, "ky_put", ...)`. */
int kyi_fail(int status, const char *call, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void kyi_log(int level, int subsys, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kyi_log_enabled(int level, int subsys);
/* Print "host:pid:rank: Kyoyu fatal: ..." to stderr and abort the whole job (MPI_Abort). Only for a dead
 * peer or a timeout, where returning would leave other ranks waiting forever. */
void kyi_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* (Re)read KY_DEBUG*; called by config at init. */
void kyi_log_setup(void);

#define KYI_WARN(sub, ...) kyi_log(KYI_LOG_WARN, (sub), __VA_ARGS__)
#define KYI_INFO(sub, ...)                                                                   \
    do {                                                                                     \
        if (kyi_log_enabled(KYI_LOG_INFO, (sub))) kyi_log(KYI_LOG_INFO, (sub), __VA_ARGS__); \
    } while (0)
#define KYI_TRACE(sub, ...)                                                                    \
    do {                                                                                       \
        if (kyi_log_enabled(KYI_LOG_TRACE, (sub))) kyi_log(KYI_LOG_TRACE, (sub), __VA_ARGS__); \
    } while (0)

/* The source file's name without its folders, for the trail below. */
#ifdef __FILE_NAME__
#define KYI_FILE __FILE_NAME__
#else
#define KYI_FILE __FILE__
#endif

/* Note "file:line -> status" at info level (NCCL's trail): with KY_DEBUG=info a failure reads as the line
 * kyi_fail wrote where it was detected followed by every KYI_CHECK it passed on its way out. Called only on
 * the failure path, so it costs nothing when calls succeed. */
void kyi_trail(const char *file, int line, int status);

/* Propagate a negative status; the message was recorded where the error was detected. */
#define KYI_CHECK(expr)                            \
    do {                                           \
        int kyi_s_ = (expr);                       \
        if (kyi_s_ < 0) {                          \
            kyi_trail(KYI_FILE, __LINE__, kyi_s_); \
            return kyi_s_;                         \
        }                                          \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
