/* shmem layer: contexts, and the waits on several variables. A PE has one stream of operations: every
 * context (SHMEM_CTX_DEFAULT and any made by shmem_ctx_create) forwards to the calls without one, and a quiet
 * or fence on a context completes or orders everything the PE issued. That is stronger than the standard
 * asks, never weaker, and keeps one completion path. A context made on a team names PEs by their team
 * numbers (translated here). */
#include <stdlib.h>

#include "shmem/internal.h"

struct shmemi_ctx {
    long options;
    shmem_team_t team;
};

/* The world PE behind pe of the context's team (-1 when none: the call then reports it out of range). */
static int ctx_pe(shmem_ctx_t ctx, int pe)
{
    if (ctx == SHMEM_CTX_DEFAULT || ctx->team == SHMEM_TEAM_WORLD) return pe;
    return kyi_shmem_team_world_pe(ctx->team, pe);
}

static int ctx_ok(const char *call, shmem_ctx_t ctx)
{
    KYI_CHECK(kyi_shmem_ready(call));
    if (ctx == SHMEM_CTX_INVALID) return kyi_shmem_fail(KY_ERR_ARG, call, "the context is SHMEM_CTX_INVALID");
    return KY_OK;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    if (kyi_shmem_ready("shmem_ctx_create") || !ctx) return -1;
    struct shmemi_ctx *c = malloc(sizeof *c);
    if (!c) return -1;
    c->options = options;
    c->team = SHMEM_TEAM_WORLD;
    *ctx = c;
    return 0;
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    if (team == SHMEM_TEAM_INVALID || shmem_ctx_create(options, ctx)) {
        if (ctx) *ctx = SHMEM_CTX_INVALID;
        return -1;
    }
    (*ctx)->team = team;
    return 0;
}

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_DEFAULT || ctx == SHMEM_CTX_INVALID) return;
    kyi_shmem_quiet("shmem_ctx_destroy");
    free(ctx);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    if (!team) return -1;
    if (ctx == SHMEM_CTX_INVALID) {
        *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    *team = ctx == SHMEM_CTX_DEFAULT ? SHMEM_TEAM_WORLD : ctx->team;
    return 0;
}

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    if (!ctx_ok("shmem_ctx_quiet", ctx)) shmem_quiet();
}
void shmem_ctx_fence(shmem_ctx_t ctx)
{
    if (!ctx_ok("shmem_ctx_fence", ctx)) shmem_fence();
}

/* ---- forwarders
 * --------------------------------------------------------------------------------------------- */

#define CTX_V(NAME, PARAMS, ARGS)                    \
    void shmem_ctx_##NAME PARAMS                     \
    {                                                \
        if (ctx_ok("shmem_ctx_" #NAME, ctx)) return; \
        pe = ctx_pe(ctx, pe);                        \
        shmem_##NAME ARGS;                           \
    }
#define CTX_R(T, NAME, PARAMS, ARGS)                   \
    T shmem_ctx_##NAME PARAMS                          \
    {                                                  \
        if (ctx_ok("shmem_ctx_" #NAME, ctx)) {         \
            T zero_;                                   \
            __builtin_memset(&zero_, 0, sizeof zero_); \
            return zero_;                              \
        }                                              \
        pe = ctx_pe(ctx, pe);                          \
        return shmem_##NAME ARGS;                      \
    }

#define CTX_RMA(N, T)                                                                                        \
    CTX_V(N##_put, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, int pe),                      \
          (dest, source, nelems, pe))                                                                        \
    CTX_V(N##_get, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, int pe),                      \
          (dest, source, nelems, pe))                                                                        \
    CTX_V(N##_put_nbi, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, int pe),                  \
          (dest, source, nelems, pe))                                                                        \
    CTX_V(N##_get_nbi, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, int pe),                  \
          (dest, source, nelems, pe))                                                                        \
    CTX_V(N##_p, (shmem_ctx_t ctx, T * dest, T value, int pe), (dest, value, pe))                            \
    CTX_R(T, N##_g, (shmem_ctx_t ctx, const T *source, int pe), (source, pe))                                \
    CTX_V(N##_iput,                                                                                          \
          (shmem_ctx_t ctx, T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
          (dest, source, dst, sst, nelems, pe))                                                              \
    CTX_V(N##_iget,                                                                                          \
          (shmem_ctx_t ctx, T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
          (dest, source, dst, sst, nelems, pe))                                                              \
    CTX_V(N##_put_signal,                                                                                    \
          (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,   \
           int sig_op, int pe),                                                                              \
          (dest, source, nelems, sig_addr, signal, sig_op, pe))                                              \
    CTX_V(N##_put_signal_nbi,                                                                                \
          (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,   \
           int sig_op, int pe),                                                                              \
          (dest, source, nelems, sig_addr, signal, sig_op, pe))
SHMEMI_RMA_TYPES(CTX_RMA)

#define CTX_SIZED(BITS, BYTES)                                                                           \
    CTX_V(put##BITS, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe),           \
          (dest, source, nelems, pe))                                                                    \
    CTX_V(get##BITS, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe),           \
          (dest, source, nelems, pe))                                                                    \
    CTX_V(put##BITS##_nbi, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe),     \
          (dest, source, nelems, pe))                                                                    \
    CTX_V(get##BITS##_nbi, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe),     \
          (dest, source, nelems, pe))                                                                    \
    CTX_V(iput##BITS,                                                                                    \
          (shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
           int pe),                                                                                      \
          (dest, source, dst, sst, nelems, pe))                                                          \
    CTX_V(iget##BITS,                                                                                    \
          (shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
           int pe),                                                                                      \
          (dest, source, dst, sst, nelems, pe))                                                          \
    CTX_V(put##BITS##_signal,                                                                            \
          (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,           \
           uint64_t signal, int sig_op, int pe),                                                         \
          (dest, source, nelems, sig_addr, signal, sig_op, pe))                                          \
    CTX_V(put##BITS##_signal_nbi,                                                                        \
          (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,           \
           uint64_t signal, int sig_op, int pe),                                                         \
          (dest, source, nelems, sig_addr, signal, sig_op, pe))
SHMEMI_SIZES(CTX_SIZED)

CTX_V(putmem, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe),
      (dest, source, nelems, pe))
CTX_V(getmem, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe),
      (dest, source, nelems, pe))
CTX_V(putmem_nbi, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe),
      (dest, source, nelems, pe))
CTX_V(getmem_nbi, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe),
      (dest, source, nelems, pe))
CTX_V(putmem_signal,
      (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
       int sig_op, int pe),
      (dest, source, nelems, sig_addr, signal, sig_op, pe))
CTX_V(putmem_signal_nbi,
      (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
       int sig_op, int pe),
      (dest, source, nelems, sig_addr, signal, sig_op, pe))

#define CTX_AMO(N, T)                                                                                   \
    CTX_R(T, N##_atomic_compare_swap, (shmem_ctx_t ctx, T * dest, T cond, T value, int pe),             \
          (dest, cond, value, pe))                                                                      \
    CTX_R(T, N##_atomic_fetch_inc, (shmem_ctx_t ctx, T * dest, int pe), (dest, pe))                     \
    CTX_V(N##_atomic_inc, (shmem_ctx_t ctx, T * dest, int pe), (dest, pe))                              \
    CTX_R(T, N##_atomic_fetch_add, (shmem_ctx_t ctx, T * dest, T value, int pe), (dest, value, pe))     \
    CTX_V(N##_atomic_add, (shmem_ctx_t ctx, T * dest, T value, int pe), (dest, value, pe))              \
    CTX_V(N##_atomic_compare_swap_nbi, (shmem_ctx_t ctx, T * fetch, T * dest, T cond, T value, int pe), \
          (fetch, dest, cond, value, pe))                                                               \
    CTX_V(N##_atomic_fetch_inc_nbi, (shmem_ctx_t ctx, T * fetch, T * dest, int pe), (fetch, dest, pe))  \
    CTX_V(N##_atomic_fetch_add_nbi, (shmem_ctx_t ctx, T * fetch, T * dest, T value, int pe),            \
          (fetch, dest, value, pe))
SHMEMI_AMO_TYPES(CTX_AMO)

#define CTX_AMO_EXT(N, T)                                                                                   \
    CTX_R(T, N##_atomic_fetch, (shmem_ctx_t ctx, const T *source, int pe), (source, pe))                    \
    CTX_V(N##_atomic_set, (shmem_ctx_t ctx, T * dest, T value, int pe), (dest, value, pe))                  \
    CTX_R(T, N##_atomic_swap, (shmem_ctx_t ctx, T * dest, T value, int pe), (dest, value, pe))              \
    CTX_V(N##_atomic_fetch_nbi, (shmem_ctx_t ctx, T * fetch, const T *source, int pe), (fetch, source, pe)) \
    CTX_V(N##_atomic_swap_nbi, (shmem_ctx_t ctx, T * fetch, T * dest, T value, int pe),                     \
          (fetch, dest, value, pe))
SHMEMI_AMO_EXT_TYPES(CTX_AMO_EXT)

#define CTX_AMO_BIT1(N, T, OP)                                                                       \
    CTX_R(T, N##_atomic_fetch_##OP, (shmem_ctx_t ctx, T * dest, T value, int pe), (dest, value, pe)) \
    CTX_V(N##_atomic_##OP, (shmem_ctx_t ctx, T * dest, T value, int pe), (dest, value, pe))          \
    CTX_V(N##_atomic_fetch_##OP##_nbi, (shmem_ctx_t ctx, T * fetch, T * dest, T value, int pe),      \
          (fetch, dest, value, pe))
#define CTX_AMO_BIT(N, T) CTX_AMO_BIT1(N, T, and) CTX_AMO_BIT1(N, T, or) CTX_AMO_BIT1(N, T, xor)
SHMEMI_AMO_BIT_TYPES(CTX_AMO_BIT)

/* ---- waits on several variables
 * ------------------------------------------------------------------------------- */

/* Which of the ivars not excluded by status satisfy their comparison: 1 each in hit[] (may be NULL); returns
 * how many, or -1 for a bad comparison. */
static long scan(const void *ivars, size_t n, size_t size, int is_signed, const int *status, int cmp,
                 const uint64_t *vals, uint64_t val, size_t *first, size_t *indices)
{
    long hits = 0;
    for (size_t i = 0; i < n; i++) {
        if (status && status[i]) continue;
        int holds;
        if (kyi_shmem_cmp((const char *)ivars + i * size, size, is_signed, cmp, vals ? vals[i] : val, &holds))
            return -1;
        if (!holds) continue;
        if (!hits && first) *first = i;
        if (indices) indices[hits] = i;
        hits++;
    }
    return hits;
}

static size_t active(size_t n, const int *status)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += !(status && status[i]);
    return k;
}

/* mode: 0 all, 1 any, 2 some. Returns the test's answer: all: 1/0; any: the index or SIZE_MAX; some: count.
 */
static size_t wait_many(const char *call, int block, int mode, const void *ivars, size_t n, size_t size,
                        int is_signed, size_t *indices, const int *status, int cmp, const uint64_t *vals,
                        uint64_t val)
{
    if (kyi_shmem_ready(call)) return mode == 1 ? SIZE_MAX : 0;
    size_t want = active(n, status);
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "symmetric variables to change", -1);
    for (;;) {
        size_t first = SIZE_MAX;
        long hits =
            scan(ivars, n, size, is_signed, status, cmp, vals, val, &first, mode == 2 ? indices : NULL);
        if (hits < 0) {
            kyi_shmem_fail(KY_ERR_ARG, call, "comparison %d is not one of the SHMEM_CMP_* values", cmp);
            return mode == 1 ? SIZE_MAX : 0;
        }
        if (mode == 0 && (size_t)hits == want) return 1;
        if (mode == 1 && (hits > 0 || !want)) return first;
        if (mode == 2 && (hits > 0 || !want)) return (size_t)hits;
        if (!block) return mode == 1 ? SIZE_MAX : 0;
        if (!kyi_progress_threaded() && ky_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
}

#define IS_SIGNED(T) (!((T)-1 > (T)0))
/* The _vector forms' values widened once, as the scalar forms widen theirs. */
#define WIDEN(T, vals, n)                                \
    uint64_t *w_ = malloc(((n) ? (n) : 1) * sizeof *w_); \
    if (w_)                                              \
        for (size_t i_ = 0; i_ < (n); i_++) w_[i_] = (uint64_t)(int64_t)(vals)[i_];

#define DEF_MANY(N, T)                                                                                       \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)        \
    {                                                                                                        \
        wait_many("shmem_" #N "_wait_until_all", 1, 0, ivars, nelems, sizeof(T), IS_SIGNED(T), NULL, status, \
                  cmp, NULL, (uint64_t)(int64_t)cmp_value);                                                  \
    }                                                                                                        \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)      \
    {                                                                                                        \
        return wait_many("shmem_" #N "_wait_until_any", 1, 1, ivars, nelems, sizeof(T), IS_SIGNED(T), NULL,  \
                         status, cmp, NULL, (uint64_t)(int64_t)cmp_value);                                   \
    }                                                                                                        \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
                                       T cmp_value)                                                          \
    {                                                                                                        \
        return wait_many("shmem_" #N "_wait_until_some", 1, 2, ivars, nelems, sizeof(T), IS_SIGNED(T),       \
                         indices, status, cmp, NULL, (uint64_t)(int64_t)cmp_value);                          \
    }                                                                                                        \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)               \
    {                                                                                                        \
        return (int)wait_many("shmem_" #N "_test_all", 0, 0, ivars, nelems, sizeof(T), IS_SIGNED(T), NULL,   \
                              status, cmp, NULL, (uint64_t)(int64_t)cmp_value);                              \
    }                                                                                                        \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)            \
    {                                                                                                        \
        return wait_many("shmem_" #N "_test_any", 0, 1, ivars, nelems, sizeof(T), IS_SIGNED(T), NULL,        \
                         status, cmp, NULL, (uint64_t)(int64_t)cmp_value);                                   \
    }                                                                                                        \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,       \
                                 T cmp_value)                                                                \
    {                                                                                                        \
        return wait_many("shmem_" #N "_test_some", 0, 2, ivars, nelems, sizeof(T), IS_SIGNED(T), indices,    \
                         status, cmp, NULL, (uint64_t)(int64_t)cmp_value);                                   \
    }                                                                                                        \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,              \
                                           T *cmp_values)                                                    \
    {                                                                                                        \
        WIDEN(T, cmp_values, nelems)                                                                         \
        if (w_)                                                                                              \
            wait_many("shmem_" #N "_wait_until_all_vector", 1, 0, ivars, nelems, sizeof(T), IS_SIGNED(T),    \
                      NULL, status, cmp, w_, 0);                                                             \
        free(w_);                                                                                            \
    }                                                                                                        \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,            \
                                             T *cmp_values)                                                  \
    {                                                                                                        \
        WIDEN(T, cmp_values, nelems)                                                                         \
        size_t r_ = w_ ? wait_many("shmem_" #N "_wait_until_any_vector", 1, 1, ivars, nelems, sizeof(T),     \
                                   IS_SIGNED(T), NULL, status, cmp, w_, 0)                                   \
                       : SIZE_MAX;                                                                           \
        free(w_);                                                                                            \
        return r_;                                                                                           \
    }                                                                                                        \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status,   \
                                              int cmp, T *cmp_values)                                        \
    {                                                                                                        \
        WIDEN(T, cmp_values, nelems)                                                                         \
        size_t r_ = w_ ? wait_many("shmem_" #N "_wait_until_some_vector", 1, 2, ivars, nelems, sizeof(T),    \
                                   IS_SIGNED(T), indices, status, cmp, w_, 0)                                \
                       : 0;                                                                                  \
        free(w_);                                                                                            \
        return r_;                                                                                           \
    }                                                                                                        \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)      \
    {                                                                                                        \
        WIDEN(T, cmp_values, nelems)                                                                         \
        int r_ = w_ ? (int)wait_many("shmem_" #N "_test_all_vector", 0, 0, ivars, nelems, sizeof(T),         \
                                     IS_SIGNED(T), NULL, status, cmp, w_, 0)                                 \
                    : 0;                                                                                     \
        free(w_);                                                                                            \
        return r_;                                                                                           \
    }                                                                                                        \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)   \
    {                                                                                                        \
        WIDEN(T, cmp_values, nelems)                                                                         \
        size_t r_ = w_ ? wait_many("shmem_" #N "_test_any_vector", 0, 1, ivars, nelems, sizeof(T),           \
                                   IS_SIGNED(T), NULL, status, cmp, w_, 0)                                   \
                       : SIZE_MAX;                                                                           \
        free(w_);                                                                                            \
        return r_;                                                                                           \
    }                                                                                                        \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status,         \
                                        int cmp, T *cmp_values)                                              \
    {                                                                                                        \
        WIDEN(T, cmp_values, nelems)                                                                         \
        size_t r_ = w_ ? wait_many("shmem_" #N "_test_some_vector", 0, 2, ivars, nelems, sizeof(T),          \
                                   IS_SIGNED(T), indices, status, cmp, w_, 0)                                \
                       : 0;                                                                                  \
        free(w_);                                                                                            \
        return r_;                                                                                           \
    }
SHMEMI_P2P_TYPES(DEF_MANY)
