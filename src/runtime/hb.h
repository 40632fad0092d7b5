/* Internal: happens-before annotations for ThreadSanitizer builds (KY_SANITIZE=thread); nothing otherwise.
 * Threads of one rank are often ordered only through MPI messages: the progress thread serves a put into
 * this rank, its reply lets the initiator enter the barrier, and the barrier's completion lets this rank's
 * program read the data. Open MPI is not instrumented, so TSan cannot see such an order and reports a race
 * where the documented semantics promise none. The comm layer states those orders here, on one token per
 * promise (kyi_hb_release where the order starts, kyi_hb_acquire where it is relied on), and nowhere else. */
#ifndef KYI_RUNTIME_HB_H
#define KYI_RUNTIME_HB_H

#if defined(__SANITIZE_THREAD__)
#define KYI_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KYI_TSAN 1
#endif
#endif

#ifdef KYI_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
static inline void kyi_hb_release(void *token)
{
    __tsan_release(token);
}
static inline void kyi_hb_acquire(void *token)
{
    __tsan_acquire(token);
}
/* Page contents (the DSM's data, twins and snapshots, and what the application reads and writes through
 * them) are ordered by page protections and faults, which TSan does not model: the code that moves them
 * runs between these, and only the bookkeeping around it (states, lists, locks) is checked. */
static inline void kyi_hb_ignore_begin(void)
{
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
}
static inline void kyi_hb_ignore_end(void)
{
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
}
#else
static inline void kyi_hb_release(void *token)
{
    (void)token;
}
static inline void kyi_hb_acquire(void *token)
{
    (void)token;
}
static inline void kyi_hb_ignore_begin(void) {}
static inline void kyi_hb_ignore_end(void) {}
#endif

#endif
