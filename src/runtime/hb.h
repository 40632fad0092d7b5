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
static inline void kyi_hb_release(void *token) { __tsan_release(token); }
static inline void kyi_hb_acquire(void *token) { __tsan_acquire(token); }
#else
static inline void kyi_hb_release(void *token) { (void)token; }
static inline void kyi_hb_acquire(void *token) { (void)token; }
#endif

#endif
