/* Exchange plans of the SpMV: built once per matrix and kind, replayed every iteration.
 *
 * allgather (the seed's scheme): the extended vector is every rank's piece padded to the largest one, so the
 *   gather is one in-place ky_allgather (a persistent coll plan, the seed's four algorithms selectable) and
 *   no unpacking; columns point into the padded layout.
 * halo: the extended vector is [this rank's piece | ghosts sorted by global index]. At planning every rank
 *   tells each owner which of its entries it needs (one-sided puts of index lists); from then on an owner
 *   packs exactly those entries and puts them straight into the ghost slots of the receiver, then puts its
 *   epoch into the receiver's flag word. Peers are made symmetric (a peer that sends nothing still sends
 *   its flag) so that a rank two exchanges ahead of a neighbour has heard from it after the neighbour's
 *   last SpMV: with two extended vectors used alternately no ghost is overwritten while it is read.
 * solo (a matrix one rank holds whole, agglom.c): either kind is two plain vectors of n entries, columns as
 *   they are, nothing to exchange and nothing collective. */
#include <stdlib.h>
#include <string.h>

#include "runtime/log.h"
#include "runtime/runtime.h"
#include "sparse/sparse.h"

static int owner_of(const kyi_csr_t *A, int64_t g)
{
    int lo = 0, hi = kyi_rt.nranks - 1;
    while (lo < hi) { /* last rank whose start <= g (empty ranks skipped) */
        int mid = (lo + hi + 1) / 2;
        if (A->starts[mid] <= g)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int vec_alloc(kyi_csr_t *A, int64_t n, double **out)
{
    size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1);
    if (A->memkind == KY_MEM_GPU) return kyi_sp_gpu_alloc(A, bytes, (void **)out);
    *out = calloc(1, bytes);
    return *out ? KY_OK : kyi_fail(KY_ERR_NOMEM, "ky_cg", "%zu bytes for an exchange vector", bytes);
}

static void vec_free(kyi_csr_t *A, void *p)
{
    if (!p) return;
    if (A->memkind == KY_MEM_GPU)
        kyi_sp_gpu_free(p);
    else
        free(p);
}

void kyi_sp_plan_free(kyi_csr_t *A, kyi_sp_plan_t *P)
{
    if (!P) return;
    for (int b = 0; b < 2; b++) {
        if (P->ag[b]) ky_coll_free(P->ag[b]);
        if (P->seg[b])
            ky_seg_destroy(P->seg[b]);
        else
            vec_free(A, P->ext[b]);
    }
    if (P->flagseg) ky_seg_destroy(P->flagseg);
    vec_free(A, P->sendbuf);
    if (P->d_col) kyi_sp_gpu_free(P->d_col);
    if (P->d_send_idx) kyi_sp_gpu_free(P->d_send_idx);
    kyi_sp_gpu_free(P->d_bptr);
    kyi_sp_gpu_free(P->d_bcol);
    kyi_sp_gpu_free(P->d_bval);
    free(P->col);
    free(P->send_peer);
    free(P->send_off);
    free(P->send_dst);
    free(P->send_idx);
    free(P->recv_peer);
    free(P->epoch_src);
    free(P);
    for (int k = 0; k < KYI_XCH_COUNT; k++)
        if (A->plan[k] == P) A->plan[k] = NULL;
}

static int plan_allgather(kyi_csr_t *A, kyi_sp_plan_t *P, const char *call)
{
    int p = kyi_rt.nranks, me = kyi_rt.rank, st = KY_OK;
    int64_t maxloc = 1;
    for (int r = 0; r < p; r++)
        if (A->starts[r + 1] - A->starts[r] > maxloc) maxloc = A->starts[r + 1] - A->starts[r];
    P->maxloc = maxloc;
    P->next = maxloc * p;
    P->loc_off = maxloc * me;
    P->nbuf = 1;
    if (P->next > INT32_MAX)
        st = kyi_fail(KY_ERR_ARG, call, "gathered vector of %lld entries exceeds 2^31", (long long)P->next);
    P->col = malloc(sizeof(int) * (size_t)(A->lnnz > 0 ? A->lnnz : 1));
    if (st == KY_OK && !P->col) st = kyi_fail(KY_ERR_NOMEM, call, "column map");
    for (int64_t k = 0; st == KY_OK && k < A->lnnz; k++) {
        int64_t g = A->gcol[k];
        int o = owner_of(A, g);
        P->col[k] = (int)(o * maxloc + (g - A->starts[o]));
    }
    if (st == KY_OK) st = vec_alloc(A, P->next, &P->ext[0]);
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) return st;
    KYI_CHECK(ky_coll_set_algo(KY_COLL_ALLGATHER, (ky_coll_algo_t)P->algo));
    st = ky_allgather_init(KY_IN_PLACE, sizeof(double) * (size_t)maxloc, P->ext[0], KY_TEAM_WORLD, &P->ag[0]);
    ky_coll_set_algo(KY_COLL_ALLGATHER, KY_ALGO_AUTO);
    return st;
}

static int plan_halo(kyi_csr_t *A, kyi_sp_plan_t *P, const char *call)
{
    int p = kyi_rt.nranks, me = kyi_rt.rank, st = KY_OK;
    int64_t *ghosts = NULL, *cnt = NULL, *C = NULL, *req = NULL;
    ky_seg_t reqseg = NULL;
    P->nbuf = 2;
    P->loc_off = 0;
    /* unique non-local columns, sorted: grouped by owner in rank order */
    int64_t ng = 0;
    ghosts = malloc(sizeof(int64_t) * (size_t)(A->lnnz > 0 ? A->lnnz : 1));
    cnt = calloc((size_t)p, sizeof *cnt);
    C = calloc((size_t)p * (size_t)p, sizeof *C);
    P->col = malloc(sizeof(int) * (size_t)(A->lnnz > 0 ? A->lnnz : 1));
    if (!ghosts || !cnt || !C || !P->col)
        st = kyi_fail(KY_ERR_NOMEM, call, "halo plan of %lld nonzeros", (long long)A->lnnz);
    if (st == KY_OK) {
        for (int64_t k = 0; k < A->lnnz; k++)
            if (A->gcol[k] < A->row_lo || A->gcol[k] >= A->row_hi) ghosts[ng++] = A->gcol[k];
        qsort(ghosts, (size_t)ng, sizeof *ghosts, cmp_i64);
        int64_t u = 0;
        for (int64_t i = 0; i < ng; i++)
            if (u == 0 || ghosts[i] != ghosts[u - 1]) ghosts[u++] = ghosts[i];
        ng = u;
        P->nghost = ng;
        P->next = A->nloc + ng;
        if (P->next > INT32_MAX) st = kyi_fail(KY_ERR_ARG, call, "extended vector exceeds 2^31 entries");
        for (int64_t k = 0; st == KY_OK && k < A->lnnz; k++) {
            int64_t g = A->gcol[k];
            if (g >= A->row_lo && g < A->row_hi)
                P->col[k] = (int)(g - A->row_lo);
            else {
                int64_t *f = bsearch(&g, ghosts, (size_t)ng, sizeof *ghosts, cmp_i64);
                P->col[k] = (int)(A->nloc + (f - ghosts));
            }
        }
        for (int64_t i = 0; i < ng; i++) cnt[owner_of(A, ghosts[i])]++;
    }
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) goto out;
    /* C[r * p + s]: entries rank r receives from rank s */
    KYI_CHECK(ky_allgather(cnt, sizeof(int64_t) * (size_t)p, C, KY_TEAM_WORLD));
    int64_t nreq = 0;
    for (int r = 0; r < p; r++) nreq += C[(size_t)r * p + me];
    st = ky_seg_create(NULL, sizeof(int64_t) * (size_t)(nreq > 0 ? nreq : 1), KY_MEM_HOST, 0, &reqseg);
    if (st != KY_OK) goto out;
    { /* my ghost lists into their owners' request segments, at my place among the owner's receivers */
        int64_t pos = 0;
        for (int s = 0; s < p && st == KY_OK; s++) {
            int64_t c = C[(size_t)me * p + s], off = 0;
            for (int r = 0; r < me; r++) off += C[(size_t)r * p + s];
            if (c > 0)
                st = ky_put(s, reqseg, sizeof(int64_t) * (size_t)off, ghosts + pos,
                            sizeof(int64_t) * (size_t)c);
            pos += c;
        }
    }
    int st2 = ky_comm_barrier();
    if (st == KY_OK) st = st2;
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) goto out;
    KYI_CHECK(ky_seg_local(reqseg, (void **)&req, NULL));
    int npeer = 0;
    for (int s = 0; s < p; s++)
        if (s != me && (C[(size_t)me * p + s] > 0 || C[(size_t)s * p + me] > 0)) npeer++;
    P->nsend = P->nrecv = npeer;
    P->send_peer = malloc(sizeof(int) * (size_t)(npeer + 1));
    P->recv_peer = malloc(sizeof(int) * (size_t)(npeer + 1));
    P->send_off = calloc((size_t)npeer + 1, sizeof(int64_t));
    P->send_dst = calloc((size_t)npeer + 1, sizeof(uint64_t));
    P->send_idx = malloc(sizeof(int) * (size_t)(nreq > 0 ? nreq : 1));
    P->epoch_src = calloc(1, sizeof(uint64_t));
    if (!P->send_peer || !P->recv_peer || !P->send_off || !P->send_dst || !P->send_idx || !P->epoch_src)
        st = kyi_fail(KY_ERR_NOMEM, call, "halo plan peers");
    if (st == KY_OK) {
        int i = 0;
        int64_t roff = 0;
        for (int r = 0; r < p; r++) {
            int64_t c = C[(size_t)r * p + me];
            if (r != me && (c > 0 || C[(size_t)me * p + r] > 0)) {
                P->send_peer[i] = P->recv_peer[i] = r;
                P->send_off[i + 1] = P->send_off[i] + c;
                int64_t dst = A->starts[r + 1] - A->starts[r]; /* receiver's ghosts start after its piece */
                for (int s = 0; s < me; s++) dst += C[(size_t)r * p + s];
                P->send_dst[i] = sizeof(double) * (uint64_t)dst;
                for (int64_t k = 0; k < c; k++)
                    P->send_idx[P->send_off[i] + k] = (int)(req[roff + k] - A->row_lo);
                i++;
            }
            roff += c;
        }
    }
    if (st == KY_OK) st = vec_alloc(A, P->send_off[npeer], &P->sendbuf);
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) goto out;
    for (int b = 0; b < 2 && st == KY_OK; b++) {
        st = ky_seg_create(NULL, sizeof(double) * (size_t)(P->next > 0 ? P->next : 1),
                           A->memkind == KY_MEM_GPU ? KY_MEM_GPU : KY_MEM_HOST, A->device < 0 ? 0 : A->device,
                           &P->seg[b]);
        if (st == KY_OK) st = ky_seg_local(P->seg[b], (void **)&P->ext[b], NULL);
    }
    if (st == KY_OK) st = ky_seg_create(NULL, sizeof(uint64_t) * (size_t)p, KY_MEM_HOST, 0, &P->flagseg);
    if (st == KY_OK) {
        void *f;
        st = ky_seg_local(P->flagseg, &f, NULL);
        if (st == KY_OK) {
            memset(f, 0, sizeof(uint64_t) * (size_t)p);
            P->flags = f;
        }
    }
    if (st == KY_OK) st = ky_comm_barrier(); /* flags zeroed everywhere before anyone's first exchange */
out:
    if (reqseg) ky_seg_destroy(reqseg);
    free(ghosts);
    free(cnt);
    free(C);
    return st;
}

static int plan_solo(kyi_csr_t *A, kyi_sp_plan_t *P, const char *call)
{
    P->next = A->nloc;
    P->loc_off = 0;
    P->maxloc = A->nloc;
    P->nbuf = 2;
    if (P->next > INT32_MAX)
        return kyi_fail(KY_ERR_ARG, call, "vector of %lld entries exceeds 2^31", (long long)P->next);
    P->col = malloc(sizeof(int) * (size_t)(A->lnnz > 0 ? A->lnnz : 1));
    P->send_off = calloc(1, sizeof *P->send_off); /* no peers: the empty send list, send_off[0] = 0 */
    if (!P->col || !P->send_off) return kyi_fail(KY_ERR_NOMEM, call, "column map and send list");
    for (int64_t k = 0; k < A->lnnz; k++) P->col[k] = (int)A->gcol[k];
    KYI_CHECK(vec_alloc(A, P->next, &P->ext[0]));
    return vec_alloc(A, P->next, &P->ext[1]);
}

int kyi_sp_plan_get(kyi_csr_t *A, int kind, kyi_sp_plan_t **out)
{
    const char *call = "ky_cg";
    kyi_sp_plan_t *P = A->plan[kind];
    if (P) {
        *out = P;
        return KY_OK;
    }
    P = calloc(1, sizeof *P);
    if (!P) return kyi_fail(KY_ERR_NOMEM, call, "exchange plan");
    P->kind = kind;
    P->algo = A->ag_algo;
    int st = A->solo                     ? plan_solo(A, P, call)
             : kind == KYI_XCH_ALLGATHER ? plan_allgather(A, P, call)
                                         : plan_halo(A, P, call);
    if (st == KY_OK && A->memkind == KY_MEM_GPU) st = kyi_sp_gpu_plan_upload(A, P);
    st = kyi_sp_agree_on(A, call, st);
    A->plan[kind] = P; /* even on failure: destroy frees what was made, collectively */
    if (st != KY_OK) return st;
    *out = P;
    return KY_OK;
}

/* Rebuild the allgather's coll plan for another algorithm (collective; every rank asks the same). */
int kyi_sp_plan_set_algo(kyi_csr_t *A, kyi_sp_plan_t *P, int algo)
{
    if (P->kind != KYI_XCH_ALLGATHER || P->algo == algo || A->solo) return KY_OK;
    if (P->ag[0]) ky_coll_free(P->ag[0]);
    P->ag[0] = NULL;
    P->algo = algo;
    KYI_CHECK(ky_coll_set_algo(KY_COLL_ALLGATHER, (ky_coll_algo_t)algo));
    int st = ky_allgather_init(KY_IN_PLACE, sizeof(double) * (size_t)P->maxloc, P->ext[0], KY_TEAM_WORLD,
                               &P->ag[0]);
    ky_coll_set_algo(KY_COLL_ALLGATHER, KY_ALGO_AUTO);
    return st;
}

static int halo_exchange(kyi_csr_t *A, kyi_sp_plan_t *P, int buf, void *stream)
{
    const char *call = "ky_cg";
    uint64_t epoch = ++P->epoch;
    int me = kyi_rt.rank;
    int64_t nsendv = P->send_off[P->nsend];
    if (nsendv > 0) {
        if (A->memkind == KY_MEM_GPU) {
            KYI_CHECK(kyi_sp_gpu_pack(A, P, P->ext[buf] + P->loc_off, stream));
            KYI_CHECK(kyi_sp_gpu_sync(stream));
        } else {
            const double *src = P->ext[buf] + P->loc_off;
            for (int64_t k = 0; k < nsendv; k++) P->sendbuf[k] = src[P->send_idx[k]];
        }
    }
    ky_handle_t hs[64];
    int nh = 0, st = KY_OK;
    for (int i = 0; i < P->nsend && st == KY_OK; i++) {
        int64_t c = P->send_off[i + 1] - P->send_off[i];
        if (c == 0) continue;
        if (nh == 64) {
            st = ky_wait_all(hs, (size_t)nh);
            nh = 0;
        }
        if (st == KY_OK)
            st = ky_put_nb(P->send_peer[i], P->seg[buf], P->send_dst[i], P->sendbuf + P->send_off[i],
                           sizeof(double) * (size_t)c, &hs[nh++]);
    }
    if (nh) {
        int s2 = ky_wait_all(hs, (size_t)nh);
        if (st == KY_OK) st = s2;
    }
    for (int i = 0; i < P->nsend && st == KY_OK; i++)
        st = ky_put_val(P->send_peer[i], P->flagseg, sizeof(uint64_t) * (size_t)me, epoch, sizeof(uint64_t));
    if (st != KY_OK) return st;
    for (int i = 0; i < P->nrecv; i++) {
        int s = P->recv_peer[i];
        if (__atomic_load_n(&P->flags[s], __ATOMIC_ACQUIRE) >= epoch) continue;
        kyi_waiter_t w;
        kyi_waiter_init(&w, call, "a neighbour's halo entries", s);
        while (__atomic_load_n(&P->flags[s], __ATOMIC_ACQUIRE) < epoch) {
            ky_poll();
            kyi_waiter_pause(&w);
        }
    }
    return KY_OK;
}

int kyi_sp_exchange(kyi_csr_t *A, kyi_sp_plan_t *P, int buf, void *stream)
{
    if (!kyi_sp_multi(A)) return KY_OK;
    if (P->kind == KYI_XCH_HALO) return halo_exchange(A, P, buf, stream);
    KYI_CHECK(ky_coll_start(P->ag[0], A->memkind == KY_MEM_GPU ? stream : NULL));
    if (A->memkind == KY_MEM_GPU) return KY_OK; /* stream-ordered: the SpMV kernel follows on the stream */
    return ky_coll_wait(P->ag[0]);
}
