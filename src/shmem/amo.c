/* shmem layer: atomics, locks and the waits on local memory. An atomic on a heap word of a PE this node
 * maps is a processor atomic on the mapping; any other (another node, KY_NODE_SPLIT=rank, a global variable
 * of another PE) is an active message that the target's progress engine runs as the same processor atomic
 * on its own memory, answering with the old value. Both kinds are hardware atomics on one memory word, so
 * they mix safely. Every atomic is complete when the call returns (the _nbi forms too). */
#include <string.h>

#include "shmem/internal.h"

/* Active-message handler indices of the shmem layer (200..255 belong to Kyoyu's upper layers; dsm uses
 * 200..207). */
enum { KYI_AM_SHMEM_AMO = 240, KYI_AM_SHMEM_AMO_REPLY = 241 };

typedef struct {
    int done;
    int status;
    uint64_t old;
} amo_wait_t;

static uint64_t amo_local(int op, void *p, size_t size, uint64_t v, uint64_t cond)
{
    if (size == 4) {
        uint32_t *q = p, x = (uint32_t)v, c = (uint32_t)cond;
        switch (op) {
            case KYI_AMO_FETCH:
                return __atomic_load_n(q, __ATOMIC_SEQ_CST);
            case KYI_AMO_SET:
                __atomic_store_n(q, x, __ATOMIC_SEQ_CST);
                return 0;
            case KYI_AMO_SWAP:
                return __atomic_exchange_n(q, x, __ATOMIC_SEQ_CST);
            case KYI_AMO_CSWAP:
                __atomic_compare_exchange_n(q, &c, x, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
                return c;
            case KYI_AMO_ADD:
                return __atomic_fetch_add(q, x, __ATOMIC_SEQ_CST);
            case KYI_AMO_AND:
                return __atomic_fetch_and(q, x, __ATOMIC_SEQ_CST);
            case KYI_AMO_OR:
                return __atomic_fetch_or(q, x, __ATOMIC_SEQ_CST);
            default:
                return __atomic_fetch_xor(q, x, __ATOMIC_SEQ_CST);
        }
    }
    uint64_t *q = p;
    switch (op) {
        case KYI_AMO_FETCH:
            return __atomic_load_n(q, __ATOMIC_SEQ_CST);
        case KYI_AMO_SET:
            __atomic_store_n(q, v, __ATOMIC_SEQ_CST);
            return 0;
        case KYI_AMO_SWAP:
            return __atomic_exchange_n(q, v, __ATOMIC_SEQ_CST);
        case KYI_AMO_CSWAP:
            __atomic_compare_exchange_n(q, &cond, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            return cond;
        case KYI_AMO_ADD:
            return __atomic_fetch_add(q, v, __ATOMIC_SEQ_CST);
        case KYI_AMO_AND:
            return __atomic_fetch_and(q, v, __ATOMIC_SEQ_CST);
        case KYI_AMO_OR:
            return __atomic_fetch_or(q, v, __ATOMIC_SEQ_CST);
        default:
            return __atomic_fetch_xor(q, v, __ATOMIC_SEQ_CST);
    }
}

/* Target side: args = {which, off, op | size << 8, value, cond, waiter}. Checked again here: the
 * initiator's view of this PE's segments could be wrong only through a bug, never silently applied. */
static void on_amo(ky_am_token_t t, void *payload, size_t n, const uint64_t *a, int nargs)
{
    (void)payload, (void)n, (void)nargs;
    int which = (int)a[0], op = (int)(a[2] & 0xff);
    size_t off = a[1], size = a[2] >> 8;
    uint64_t old = 0, st = KY_OK;
    if (which < 0 || which >= KYI_SHM_NSEGS || !kyi_shmem.base[which] || off > kyi_shmem.size[which] ||
        size > kyi_shmem.size[which] - off)
        st = (uint64_t)(int64_t)KY_ERR_RANGE;
    else
        old = amo_local(op, kyi_shmem.base[which] + off, size, a[3], a[4]);
    uint64_t r[3] = {a[5], old, st};
    ky_am_reply_short(t, KYI_AM_SHMEM_AMO_REPLY, r, 3);
}

static void on_amo_reply(ky_am_token_t t, void *payload, size_t n, const uint64_t *a, int nargs)
{
    (void)t, (void)payload, (void)n, (void)nargs;
    amo_wait_t *w = (amo_wait_t *)(uintptr_t)a[0];
    w->old = a[1];
    w->status = (int)(int64_t)a[2];
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

int kyi_shmem_amo_init(void)
{
    KYI_CHECK(ky_am_register(KYI_AM_SHMEM_AMO, on_amo));
    return ky_am_register(KYI_AM_SHMEM_AMO_REPLY, on_amo_reply);
}

/* Spin, yield, sleep (runtime waiters, bounded by KY_TIMEOUT) until *flag; serves requests meanwhile when
 * there is no progress thread. */
static void wait_flag(const char *call, const char *what, int peer, int *flag)
{
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, what, peer);
    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
        if (!kyi_progress_threaded() && ky_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
}

int kyi_shmem_amo(const char *call, int op, void *dest, size_t size, uint64_t value, uint64_t cond, int pe,
                  uint64_t *old)
{
    int which;
    size_t off;
    KYI_CHECK(kyi_shmem_xlate(call, "dest", dest, size, pe, &which, &off));
    if ((uintptr_t)dest % size)
        return kyi_shmem_fail(KY_ERR_ARG, call, "dest %p is not aligned to its %zu-byte type", dest, size);
    void *p = kyi_shmem_peer_addr(which, off, pe);
    uint64_t r;
    if (p) {
        r = amo_local(op, p, size, value, cond);
        /* Without a progress thread this PE serves others only inside Kyoyu calls: a loop of local atomics
         * must not starve the PEs waiting on it (SHMEM programs expect progress from any call). */
        if (!kyi_progress_threaded()) ky_poll();
    } else {
        amo_wait_t w = {0, KY_OK, 0};
        uint64_t a[6] = {(uint64_t)which, off,  (uint64_t)op | (uint64_t)size << 8,
                         value,           cond, (uint64_t)(uintptr_t)&w};
        int st = ky_am_short(pe, KYI_AM_SHMEM_AMO, a, 6);
        if (st) return kyi_shmem_failed(st, call);
        wait_flag(call, "the answer to an atomic", pe, &w.done);
        if (w.status)
            return kyi_shmem_fail(w.status, call, "PE %d refused the atomic at offset %zu of its %s", pe, off,
                                  which == KYI_SHM_HEAP ? "heap" : "data segment");
        r = w.old;
    }
    if (old) *old = r;
    return KY_OK;
}

/* ---- typed atomics ----------------------------------------------------------------------------------------
 */

/* T <-> the 64-bit word the core moves (float and double by their bits, integers zero-extended). */
#define TO_U64(T, x)                 \
    ({                               \
        T x_ = (x);                  \
        uint64_t u_ = 0;             \
        memcpy(&u_, &x_, sizeof x_); \
        u_;                          \
    })
#define FROM_U64(T, u)               \
    ({                               \
        uint64_t u_ = (u);           \
        T x_;                        \
        memcpy(&x_, &u_, sizeof x_); \
        x_;                          \
    })

#define AMO_CALL(NAME, T, OPNAME, OP, dest, v, c)                                                 \
    ({                                                                                            \
        uint64_t o_ = 0;                                                                          \
        if (!kyi_shmem_ready("shmem_" #NAME "_" OPNAME))                                          \
            kyi_shmem_amo("shmem_" #NAME "_" OPNAME, OP, (void *)(dest), sizeof(T), TO_U64(T, v), \
                          TO_U64(T, c), pe, &o_);                                                 \
        FROM_U64(T, o_);                                                                          \
    })

#define DEF_AMO(NAME, T)                                                                         \
    T shmem_##NAME##_atomic_compare_swap(T *dest, T cond, T value, int pe)                       \
    {                                                                                            \
        return AMO_CALL(NAME, T, "atomic_compare_swap", KYI_AMO_CSWAP, dest, value, cond);       \
    }                                                                                            \
    T shmem_##NAME##_atomic_fetch_inc(T *dest, int pe)                                           \
    {                                                                                            \
        return AMO_CALL(NAME, T, "atomic_fetch_inc", KYI_AMO_ADD, dest, (T)1, (T)0);             \
    }                                                                                            \
    void shmem_##NAME##_atomic_inc(T *dest, int pe)                                              \
    {                                                                                            \
        AMO_CALL(NAME, T, "atomic_inc", KYI_AMO_ADD, dest, (T)1, (T)0);                          \
    }                                                                                            \
    T shmem_##NAME##_atomic_fetch_add(T *dest, T value, int pe)                                  \
    {                                                                                            \
        return AMO_CALL(NAME, T, "atomic_fetch_add", KYI_AMO_ADD, dest, value, (T)0);            \
    }                                                                                            \
    void shmem_##NAME##_atomic_add(T *dest, T value, int pe)                                     \
    {                                                                                            \
        AMO_CALL(NAME, T, "atomic_add", KYI_AMO_ADD, dest, value, (T)0);                         \
    }                                                                                            \
    void shmem_##NAME##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe)      \
    {                                                                                            \
        *fetch = AMO_CALL(NAME, T, "atomic_compare_swap_nbi", KYI_AMO_CSWAP, dest, value, cond); \
    }                                                                                            \
    void shmem_##NAME##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)                          \
    {                                                                                            \
        *fetch = AMO_CALL(NAME, T, "atomic_fetch_inc_nbi", KYI_AMO_ADD, dest, (T)1, (T)0);       \
    }                                                                                            \
    void shmem_##NAME##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe)                 \
    {                                                                                            \
        *fetch = AMO_CALL(NAME, T, "atomic_fetch_add_nbi", KYI_AMO_ADD, dest, value, (T)0);      \
    }
SHMEMI_AMO_TYPES(DEF_AMO)

#define DEF_AMO_EXT(NAME, T)                                                               \
    T shmem_##NAME##_atomic_fetch(const T *source, int pe)                                 \
    {                                                                                      \
        return AMO_CALL(NAME, T, "atomic_fetch", KYI_AMO_FETCH, source, (T)0, (T)0);       \
    }                                                                                      \
    void shmem_##NAME##_atomic_set(T *dest, T value, int pe)                               \
    {                                                                                      \
        AMO_CALL(NAME, T, "atomic_set", KYI_AMO_SET, dest, value, (T)0);                   \
    }                                                                                      \
    T shmem_##NAME##_atomic_swap(T *dest, T value, int pe)                                 \
    {                                                                                      \
        return AMO_CALL(NAME, T, "atomic_swap", KYI_AMO_SWAP, dest, value, (T)0);          \
    }                                                                                      \
    void shmem_##NAME##_atomic_fetch_nbi(T *fetch, const T *source, int pe)                \
    {                                                                                      \
        *fetch = AMO_CALL(NAME, T, "atomic_fetch_nbi", KYI_AMO_FETCH, source, (T)0, (T)0); \
    }                                                                                      \
    void shmem_##NAME##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)                \
    {                                                                                      \
        *fetch = AMO_CALL(NAME, T, "atomic_swap_nbi", KYI_AMO_SWAP, dest, value, (T)0);    \
    }
SHMEMI_AMO_EXT_TYPES(DEF_AMO_EXT)

#define DEF_AMO_BIT1(NAME, T, OPN, OP)                                                  \
    T shmem_##NAME##_atomic_fetch_##OPN(T *dest, T value, int pe)                       \
    {                                                                                   \
        return AMO_CALL(NAME, T, "atomic_fetch_" #OPN, OP, dest, value, (T)0);          \
    }                                                                                   \
    void shmem_##NAME##_atomic_##OPN(T *dest, T value, int pe)                          \
    {                                                                                   \
        AMO_CALL(NAME, T, "atomic_" #OPN, OP, dest, value, (T)0);                       \
    }                                                                                   \
    void shmem_##NAME##_atomic_fetch_##OPN##_nbi(T *fetch, T *dest, T value, int pe)    \
    {                                                                                   \
        *fetch = AMO_CALL(NAME, T, "atomic_fetch_" #OPN "_nbi", OP, dest, value, (T)0); \
    }
#define DEF_AMO_BIT(NAME, T)                \
    DEF_AMO_BIT1(NAME, T, and, KYI_AMO_AND) \
    DEF_AMO_BIT1(NAME, T, or, KYI_AMO_OR) DEF_AMO_BIT1(NAME, T, xor, KYI_AMO_XOR)
SHMEMI_AMO_BIT_TYPES(DEF_AMO_BIT)

#define DEF_AMO_OLD(NAME, T)                                                 \
    T shmem_##NAME##_cswap(T *dest, T cond, T value, int pe)                 \
    {                                                                        \
        return AMO_CALL(NAME, T, "cswap", KYI_AMO_CSWAP, dest, value, cond); \
    }                                                                        \
    T shmem_##NAME##_finc(T *dest, int pe)                                   \
    {                                                                        \
        return AMO_CALL(NAME, T, "finc", KYI_AMO_ADD, dest, (T)1, (T)0);     \
    }                                                                        \
    void shmem_##NAME##_inc(T *dest, int pe)                                 \
    {                                                                        \
        AMO_CALL(NAME, T, "inc", KYI_AMO_ADD, dest, (T)1, (T)0);             \
    }                                                                        \
    T shmem_##NAME##_fadd(T *dest, T value, int pe)                          \
    {                                                                        \
        return AMO_CALL(NAME, T, "fadd", KYI_AMO_ADD, dest, value, (T)0);    \
    }                                                                        \
    void shmem_##NAME##_add(T *dest, T value, int pe)                        \
    {                                                                        \
        AMO_CALL(NAME, T, "add", KYI_AMO_ADD, dest, value, (T)0);            \
    }
#define DEF_AMO_OLD_EXT(NAME, T)                                              \
    T shmem_##NAME##_swap(T *dest, T value, int pe)                           \
    {                                                                         \
        return AMO_CALL(NAME, T, "swap", KYI_AMO_SWAP, dest, value, (T)0);    \
    }                                                                         \
    T shmem_##NAME##_fetch(const T *source, int pe)                           \
    {                                                                         \
        return AMO_CALL(NAME, T, "fetch", KYI_AMO_FETCH, source, (T)0, (T)0); \
    }                                                                         \
    void shmem_##NAME##_set(T *dest, T value, int pe)                         \
    {                                                                         \
        AMO_CALL(NAME, T, "set", KYI_AMO_SET, dest, value, (T)0);             \
    }
DEF_AMO_OLD(int, int)
DEF_AMO_OLD(long, long)
DEF_AMO_OLD(longlong, long long)
DEF_AMO_OLD_EXT(int, int)
DEF_AMO_OLD_EXT(long, long)
DEF_AMO_OLD_EXT(longlong, long long)
DEF_AMO_OLD_EXT(float, float)
DEF_AMO_OLD_EXT(double, double)

long(shmem_swap)(long *dest, long value, int pe) /* (parenthesised: C11 makes shmem_swap a generic macro) */
{
    return AMO_CALL(long, long, "swap", KYI_AMO_SWAP, dest, value, 0L);
}

/* ---- locks: a compare-and-swap on the lock word of PE 0 (holder's PE + 1 while held) ------------------- */

void shmem_set_lock(long *lock)
{
    static const char *call = "shmem_set_lock";
    if (kyi_shmem_ready(call)) return;
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "a lock held by another PE", 0);
    for (;;) {
        uint64_t old = 1;
        if (kyi_shmem_amo(call, KYI_AMO_CSWAP, lock, sizeof(long), (uint64_t)kyi_shmem.me + 1, 0, 0, &old))
            return;
        if (old == 0) return;
        if (!kyi_progress_threaded()) ky_poll();
        kyi_waiter_pause(&w);
    }
}

int shmem_test_lock(long *lock)
{
    static const char *call = "shmem_test_lock";
    if (kyi_shmem_ready(call)) return 1;
    uint64_t old = 1;
    if (kyi_shmem_amo(call, KYI_AMO_CSWAP, lock, sizeof(long), (uint64_t)kyi_shmem.me + 1, 0, 0, &old))
        return 1;
    return old != 0;
}

void shmem_clear_lock(long *lock)
{
    static const char *call = "shmem_clear_lock";
    if (kyi_shmem_ready(call)) return;
    /* What the holder wrote under the lock is complete before the next holder can get it. */
    if (kyi_shmem_quiet(call)) return;
    uint64_t old = 0;
    if (kyi_shmem_amo(call, KYI_AMO_CSWAP, lock, sizeof(long), 0, (uint64_t)kyi_shmem.me + 1, 0, &old))
        return;
    if (old != (uint64_t)kyi_shmem.me + 1)
        kyi_shmem_fail(KY_ERR_STATE, call, "lock %p is not held by this PE (holder: %s)", (void *)lock,
                       old ? "another PE" : "none");
}

/* ---- waits on local memory ------------------------------------------------------------------------------
 */

int kyi_shmem_cmp(const void *ivar, size_t size, int is_signed, int cmp, uint64_t value, int *holds)
{
    uint64_t u;
    switch (size) {
        case 1:
            u = __atomic_load_n((const uint8_t *)ivar, __ATOMIC_ACQUIRE);
            break;
        case 2:
            u = __atomic_load_n((const uint16_t *)ivar, __ATOMIC_ACQUIRE);
            break;
        case 4:
            u = __atomic_load_n((const uint32_t *)ivar, __ATOMIC_ACQUIRE);
            break;
        default:
            u = __atomic_load_n((const uint64_t *)ivar, __ATOMIC_ACQUIRE);
            break;
    }
    int c;
    if (is_signed) {
        int sh = 64 - 8 * (int)size;
        int64_t a = sh ? (int64_t)(u << sh) >> sh : (int64_t)u,
                b = sh ? (int64_t)(value << sh) >> sh : (int64_t)value;
        c = a < b ? -1 : a > b;
    } else {
        uint64_t m = size == 8 ? ~0ULL : ((1ULL << (8 * size)) - 1), b = value & m;
        c = u < b ? -1 : u > b;
    }
    switch (cmp) {
        case SHMEM_CMP_EQ:
            *holds = c == 0;
            return KY_OK;
        case SHMEM_CMP_NE:
            *holds = c != 0;
            return KY_OK;
        case SHMEM_CMP_GT:
            *holds = c > 0;
            return KY_OK;
        case SHMEM_CMP_LE:
            *holds = c <= 0;
            return KY_OK;
        case SHMEM_CMP_LT:
            *holds = c < 0;
            return KY_OK;
        case SHMEM_CMP_GE:
            *holds = c >= 0;
            return KY_OK;
        default:
            return KY_ERR_ARG;
    }
}

int kyi_shmem_wait(const char *call, const void *ivar, size_t size, int is_signed, int cmp, uint64_t value)
{
    KYI_CHECK(kyi_shmem_ready(call));
    if (!ivar) return kyi_shmem_fail(KY_ERR_ARG, call, "ivar is NULL");
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "a symmetric variable to change", -1);
    for (;;) {
        int holds;
        if (kyi_shmem_cmp(ivar, size, is_signed, cmp, value, &holds))
            return kyi_shmem_fail(KY_ERR_ARG, call, "comparison %d is not one of the SHMEM_CMP_* values",
                                  cmp);
        if (holds) return KY_OK;
        if (!kyi_progress_threaded() && ky_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
}

#define IS_SIGNED(T) (!((T)-1 > (T)0)) /* without -Wtype-limits noise for unsigned T */
#define DEF_P2P(NAME, T)                                                                                   \
    void shmem_##NAME##_wait_until(T *ivar, int cmp, T cmp_value)                                          \
    {                                                                                                      \
        kyi_shmem_wait("shmem_" #NAME "_wait_until", ivar, sizeof(T), IS_SIGNED(T), cmp,                   \
                       (uint64_t)(int64_t)cmp_value);                                                      \
    }                                                                                                      \
    int shmem_##NAME##_test(T *ivar, int cmp, T cmp_value)                                                 \
    {                                                                                                      \
        int holds = 0;                                                                                     \
        if (kyi_shmem_ready("shmem_" #NAME "_test")) return 0;                                             \
        if (kyi_shmem_cmp(ivar, sizeof(T), IS_SIGNED(T), cmp, (uint64_t)(int64_t)cmp_value, &holds))       \
            kyi_shmem_fail(KY_ERR_ARG, "shmem_" #NAME "_test", "comparison %d is not a SHMEM_CMP_* value", \
                           cmp);                                                                           \
        if (!holds && !kyi_progress_threaded()) ky_poll();                                                 \
        return holds;                                                                                      \
    }                                                                                                      \
    void shmem_##NAME##_wait(T *ivar, T cmp_value)                                                         \
    {                                                                                                      \
        kyi_shmem_wait("shmem_" #NAME "_wait", ivar, sizeof(T), IS_SIGNED(T), SHMEM_CMP_NE,                \
                       (uint64_t)(int64_t)cmp_value);                                                      \
    }
SHMEMI_P2P_TYPES(DEF_P2P)

void shmem_wait(long *ivar, long cmp_value)
{
    kyi_shmem_wait("shmem_wait", ivar, sizeof(long), 1, SHMEM_CMP_NE, (uint64_t)cmp_value);
}

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    if (kyi_shmem_wait("shmem_signal_wait_until", sig_addr, 8, 0, cmp, cmp_value)) return 0;
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}
