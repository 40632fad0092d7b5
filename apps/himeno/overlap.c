/* ky_himeno --overlap: one rank's update range in parts. The face slabs, the points a neighbour's ghost layer
 * needs, are computed first and their halos sent while the interior, whose stencil reads no ghost, is
 * computed; the parts are disjoint and cover the range, so the field and every point's ss are those of the
 * whole kernel (gosa adds the same values, in another order). */
#include "himeno.h"

static int box_empty(const hg_box_t *x)
{
    return x->hi[0] <= x->lo[0] || x->hi[1] <= x->lo[1] || x->hi[2] <= x->lo[2];
}

int hg_split_update(const hg_block_t *b, hg_box_t slab[6], int thin[6], hg_box_t *interior)
{
    hg_box_t rest;
    int ns = 0;
    for (int d = 0; d < 3; d++) rest.lo[d] = b->ub[d], rest.hi[d] = b->ue[d];
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            if (b->nbr[d][s] < 0 || box_empty(&rest)) continue;
            hg_box_t x = rest;
            if (s == 0)
                x.hi[d] = x.lo[d] + 1, rest.lo[d]++;
            else
                x.lo[d] = x.hi[d] - 1, rest.hi[d]--;
            slab[ns] = x, thin[ns] = d;
            ns++;
        }
    *interior = rest;
    return ns;
}

void hg_block_part(const hg_block_t *b, const hg_box_t *x, hg_block_t *part)
{
    *part = *b;
    for (int d = 0; d < 3; d++) {
        part->ub[d] = x->lo[d];
        part->ue[d] = x->hi[d] > x->lo[d] ? x->hi[d] : x->lo[d];
    }
}
