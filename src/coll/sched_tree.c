/* Rooted and synchronising schedules: binomial-tree broadcast and reduce, dissemination barrier. Members
 * are renumbered relative to the root (v = me - root mod p) so any root works for any p. */
#include "coll/coll.h"

void kyi_sched_bcast(kyi_sched_t *s, int p, int me, int root, int buf, size_t bytes)
{
    int v = (me - root + p) % p, mask = 1;
    while (mask < p) {
        if (v & mask) {
            kyi_sched_xchg(s, -1, buf, 0, 0, (v - mask + root) % p, buf, 0, bytes);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < p) kyi_sched_xchg(s, (v + mask + root) % p, buf, 0, bytes, -1, buf, 0, 0);
}

void kyi_sched_reduce_tree(kyi_sched_t *s, int p, int me, int root, int acc, size_t bytes)
{
    int v = (me - root + p) % p;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (v & mask) {
            kyi_sched_xchg(s, ((v & ~mask) + root) % p, acc, 0, bytes, -1, acc, 0, 0);
            break;
        }
        if ((v | mask) < p)
            kyi_sched_xchg_reduce(s, -1, acc, 0, 0, ((v | mask) + root) % p, KYI_B_T, 0, bytes, acc, 0);
    }
}

void kyi_sched_barrier(kyi_sched_t *s, int p, int me)
{
    for (int dist = 1; dist < p; dist <<= 1)
        kyi_sched_xchg(s, (me + dist) % p, KYI_B_T, 0, 0, (me - dist + p) % p, KYI_B_T, 0, 0);
}
