/* Allgather schedules: the seed's four algorithms for any member count p (seed 001, section 3; the seed
 * itself only ran powers of two).
 *   ring       p-1 steps, block (me-k) goes to me+1; no contention, bandwidth-optimal.
 *   neighbor   Chen et al.'s neighbor exchange: one block with one neighbor, then p/2-1 steps of two blocks,
 *              alternating neighbors. Needs an even p; an odd p runs ring.
 *   rd         recursive doubling over the largest power of two p2 <= p: the first 2*(p-p2) members pair up,
 *              odd ones hand their block to their even partner, sit out, and get the whole result at the end.
 *              With the block ranges of the remaining "virtual" members contiguous, every step is one
 *              contiguous exchange.
 *   bruck      dissemination: ceil(log2 p) steps, all sending the same way (to me-dist) into a rotated
 *              buffer, then the final local shift that puts block i at i. */
#include "coll/coll.h"

static void ring(kyi_sched_t *s, int p, int me, size_t b, int rbuf, size_t roff)
{
    for (int k = 0; k < p - 1; k++) {
        int sb = ((me - k) % p + p) % p, rb = ((me - k - 1) % p + p) % p;
        kyi_sched_xchg(s, (me + 1) % p, rbuf, roff + (size_t)sb * b, b, (me - 1 + p) % p, rbuf,
                       roff + (size_t)rb * b, b);
    }
}

static void neighbor(kyi_sched_t *s, int p, int me, size_t b, int rbuf, size_t roff)
{
    int nb[2], from[2], step[2];
    if (me % 2 == 0) {
        nb[0] = (me + 1) % p, nb[1] = (me - 1 + p) % p;
        from[0] = from[1] = me;
        step[0] = 2, step[1] = -2;
    } else {
        nb[0] = (me - 1 + p) % p, nb[1] = (me + 1) % p;
        from[0] = from[1] = nb[0];
        step[0] = -2, step[1] = 2;
    }
    kyi_sched_xchg(s, nb[0], rbuf, roff + (size_t)me * b, b, nb[0], rbuf, roff + (size_t)nb[0] * b, b);
    int send_from = me % 2 == 0 ? me : from[0]; /* the first block of the even-odd pair now held */
    for (int i = 1; i < p / 2; i++) {
        int par = i % 2;
        from[par] = (from[par] + step[par] + p) % p;
        kyi_sched_xchg(s, nb[par], rbuf, roff + (size_t)send_from * b, 2 * b, nb[par], rbuf,
                       roff + (size_t)from[par] * b, 2 * b);
        send_from = from[par];
    }
}

/* rd: virtual member v (0..p2-1) holds real blocks [lo(v), lo(v+1)) and is played by real rank lo(v). */
static int lo(int v, int extra)
{
    return v < extra ? 2 * v : v + extra;
}

static void rd(kyi_sched_t *s, int p, int me, size_t b, int rbuf, size_t roff)
{
    int p2 = 1;
    while (p2 * 2 <= p) p2 *= 2;
    int extra = p - p2, v;
    if (me < 2 * extra) {
        if (me % 2) { /* hand over the block, wait for the result */
            kyi_sched_xchg(s, me - 1, rbuf, roff + (size_t)me * b, b, -1, rbuf, 0, 0);
            kyi_sched_xchg(s, -1, rbuf, 0, 0, me - 1, rbuf, roff, (size_t)p * b);
            return;
        }
        kyi_sched_xchg(s, -1, rbuf, 0, 0, me + 1, rbuf, roff + (size_t)(me + 1) * b, b);
        v = me / 2;
    } else {
        v = me - extra;
    }
    for (int mask = 1; mask < p2; mask <<= 1) {
        int pv = v ^ mask, g = v & ~(mask - 1), pg = pv & ~(mask - 1);
        size_t s0 = (size_t)lo(g, extra), s1 = (size_t)lo(g + mask, extra);
        size_t r0 = (size_t)lo(pg, extra), r1 = (size_t)lo(pg + mask, extra);
        kyi_sched_xchg(s, lo(pv, extra), rbuf, roff + s0 * b, (s1 - s0) * b, lo(pv, extra), rbuf,
                       roff + r0 * b, (r1 - r0) * b);
    }
    if (me < 2 * extra) kyi_sched_xchg(s, me + 1, rbuf, roff, (size_t)p * b, -1, rbuf, 0, 0);
}

static void bruck(kyi_sched_t *s, int p, int me, size_t b, int sbuf, size_t soff, int rbuf, size_t roff)
{
    kyi_sched_need(s, KYI_B_U, (size_t)p * b);
    kyi_sched_copy(s, sbuf, soff, KYI_B_U, 0, b);
    for (int dist = 1; dist < p; dist <<= 1) {
        int cnt = dist < p - dist ? dist : p - dist;
        kyi_sched_xchg(s, (me - dist + p) % p, KYI_B_U, 0, (size_t)cnt * b, (me + dist) % p, KYI_B_U,
                       (size_t)dist * b, (size_t)cnt * b);
    }
    /* U[i] is block (me + i) % p */
    kyi_sched_copy(s, KYI_B_U, 0, rbuf, roff + (size_t)me * b, (size_t)(p - me) * b);
    kyi_sched_copy(s, KYI_B_U, (size_t)(p - me) * b, rbuf, roff, (size_t)me * b);
}

int kyi_sched_allgather(kyi_sched_t *s, int algo, int p, int me, size_t b, int sbuf, size_t soff, int rbuf,
                        size_t roff)
{
    if (algo == KY_ALGO_NEIGHBOR && p % 2) algo = KY_ALGO_RING;
    if (algo == KY_ALGO_BRUCK) {
        bruck(s, p, me, b, sbuf, soff, rbuf, roff);
        return algo;
    }
    kyi_sched_copy(s, sbuf, soff, rbuf, roff + (size_t)me * b, b);
    kyi_sched_need(s, rbuf, roff + (size_t)p * b);
    if (p == 1) return algo;
    if (algo == KY_ALGO_NEIGHBOR)
        neighbor(s, p, me, b, rbuf, roff);
    else if (algo == KY_ALGO_RD)
        rd(s, p, me, b, rbuf, roff);
    else
        ring(s, p, me, b, rbuf, roff), algo = KY_ALGO_RING;
    return algo;
}
