/* Allreduce schedules for any member count p; the result is bitwise the same on every member (each element
 * is reduced in one fixed order, and two-operand sum/prod/min/max are commutative).
 *   ring          reduce-scatter then allgather, both around the ring, in p chunks (sizes differ by at most
 *                 one element): 2(p-1) steps moving 2(p-1)/p of the vector; the large-vector choice.
 *   rd            recursive doubling on whole vectors over the largest power of two p2 <= p; the extra
 *                 members fold their vector into an even partner first and get the result last.
 *   bruck         dissemination allgather of every member's vector (ceil(log2 p) steps, messages up to
 *                 p/2 vectors), then a local reduction in rank order: the seed's fastest small allreduce,
 *                 here valid for any p (no double counting).
 *   neighbor      the same with the neighbor-exchange allgather (even p; odd p runs ring).
 *   reduce_bcast  binomial reduce to member 0, binomial broadcast (2 ceil(log2 p) steps).
 * Input: S, or R when in place; scratch: T (one chunk / vector), U (gathered vectors, Bruck rotation). */
#include "coll/coll.h"

static void ring(kyi_sched_t *s, int p, int me, size_t n, size_t es)
{
    size_t q = n / (size_t)p, rem = n % (size_t)p;
#define CNT(c) (q + ((size_t)(c) < rem))
#define OFF(c) ((size_t)(c)*q + ((size_t)(c) < rem ? (size_t)(c) : rem))
    int nx = (me + 1) % p, pv = (me - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        int cs = ((me - k) % p + p) % p, cr = ((me - k - 1) % p + p) % p;
        kyi_sched_xchg_reduce(s, nx, KYI_B_R, OFF(cs) * es, CNT(cs) * es, pv, KYI_B_T, 0, CNT(cr) * es,
                              KYI_B_R, OFF(cr) * es);
    }
    for (int k = 0; k < p - 1; k++) {
        int cs = ((me + 1 - k) % p + p) % p, cr = ((me - k) % p + p) % p;
        kyi_sched_xchg(s, nx, KYI_B_R, OFF(cs) * es, CNT(cs) * es, pv, KYI_B_R, OFF(cr) * es, CNT(cr) * es);
    }
#undef CNT
#undef OFF
}

static void rd(kyi_sched_t *s, int p, int me, size_t bytes)
{
    int p2 = 1;
    while (p2 * 2 <= p) p2 *= 2;
    int extra = p - p2, v;
    if (me < 2 * extra) {
        if (me % 2) {
            kyi_sched_xchg(s, me - 1, KYI_B_R, 0, bytes, -1, KYI_B_R, 0, 0);
            kyi_sched_xchg(s, -1, KYI_B_R, 0, 0, me - 1, KYI_B_R, 0, bytes);
            return;
        }
        kyi_sched_xchg_reduce(s, -1, KYI_B_R, 0, 0, me + 1, KYI_B_T, 0, bytes, KYI_B_R, 0);
        v = me / 2;
    } else {
        v = me - extra;
    }
    for (int mask = 1; mask < p2; mask <<= 1) {
        int pv = v ^ mask;
        int peer = pv < extra ? 2 * pv : pv + extra;
        kyi_sched_xchg_reduce(s, peer, KYI_B_R, 0, bytes, peer, KYI_B_T, 0, bytes, KYI_B_R, 0);
    }
    if (me < 2 * extra) kyi_sched_xchg(s, me + 1, KYI_B_R, 0, bytes, -1, KYI_B_R, 0, 0);
}

/* Gather every vector into T (p * bytes), then R = T[0] op T[1] op ... in rank order. */
static int gathered(kyi_sched_t *s, int algo, int p, int me, size_t bytes)
{
    algo = kyi_sched_allgather(s, algo, p, me, bytes, KYI_B_R, 0, KYI_B_T, 0);
    kyi_sched_need(s, KYI_B_T, (size_t)p * bytes);
    kyi_sched_copy(s, KYI_B_T, 0, KYI_B_R, 0, bytes);
    for (int i = 1; i < p; i++) kyi_sched_reduce(s, KYI_B_T, (size_t)i * bytes, KYI_B_R, 0, bytes);
    return algo;
}

int kyi_sched_allreduce(kyi_sched_t *s, int algo, int p, int me, size_t n, size_t es, int in_place)
{
    size_t bytes = n * es;
    if (!in_place) kyi_sched_copy(s, KYI_B_S, 0, KYI_B_R, 0, bytes);
    if (p == 1 || n == 0) return algo;
    if (algo == KY_ALGO_NEIGHBOR && p % 2) algo = KY_ALGO_RING;
    switch (algo) {
        case KY_ALGO_RD:
            rd(s, p, me, bytes);
            break;
        case KY_ALGO_BRUCK:
        case KY_ALGO_NEIGHBOR:
            algo = gathered(s, algo, p, me, bytes);
            break;
        case KY_ALGO_REDUCE_BCAST:
            kyi_sched_reduce_tree(s, p, me, 0, KYI_B_R, bytes);
            kyi_sched_bcast(s, p, me, 0, KYI_B_R, bytes);
            break;
        default:
            ring(s, p, me, n, es);
            algo = KY_ALGO_RING;
            break;
    }
    return algo;
}
