/* Owners of bytes, as opposed to homes of pages. A page's home is the owner of its first byte; when a
 * ky_mapalloc block does not end on a page boundary the page also holds elements of another owner (a
 * "mixed" page). The synchronisations that discard writes (ky_sync_drop, ky_overload_array) keep every
 * rank's writes to its own elements, so they need the owner of each byte: the mapping for ky_mapalloc,
 * store.home_of for an array's view, the home for everything else.
 *
 * A mapping's owner is constant over runs of elements: along the innermost dimension that is cut into
 * several blocks, up to the end of the current block, times everything inside it (the dimensions inside
 * are not cut). A page is a handful of runs for slabs and blocks; only the innermost cut dimension's block
 * length limits them. */
#include <stdlib.h>
#include <string.h>

#include "dsm/dsm.h"

kyi_map_t *kyi_map_new(const int *dims, const int *divs, int nd, size_t elem, int first, int count)
{
    kyi_map_t *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->nd = nd, m->elem = elem, m->first = first, m->count = count;
    m->inner_dim = -1;
    m->inner = 1;
    for (int d = 0; d < nd; d++) m->dims[d] = dims[d], m->divs[d] = divs[d];
    for (int d = nd - 1; d >= 0; d--) {
        if (divs[d] > 1) {
            m->inner_dim = d;
            break;
        }
        m->inner *= (size_t)dims[d];
    }
    return m;
}

int kyi_map_owner(const kyi_map_t *m, size_t e)
{
    size_t rest = e, linear = 0, scale = 1;
    for (int d = m->nd - 1; d >= 0; d--) {
        size_t idx = rest % (size_t)m->dims[d];
        rest /= (size_t)m->dims[d];
        size_t bs = ((size_t)m->dims[d] + (size_t)m->divs[d] - 1) / (size_t)m->divs[d];
        linear += (idx / bs) * scale;
        scale *= (size_t)m->divs[d];
    }
    return m->first + (int)(linear % (size_t)m->count);
}

/* Elements [e, e + run) all have e's owner (run >= 1; the next element may have it too). */
static size_t map_run(const kyi_map_t *m, size_t e)
{
    if (m->inner_dim < 0 || m->count == 1) return (size_t)-1 / 2;
    int k = m->inner_dim;
    size_t dk = (size_t)m->dims[k], bs = (dk + (size_t)m->divs[k] - 1) / (size_t)m->divs[k];
    size_t idx = (e / m->inner) % dk, bend = (idx / bs + 1) * bs;
    if (bend > dk) bend = dk;
    return (bend - idx) * m->inner - e % m->inner;
}

/* Runs of one owner over allocation bytes [lo, hi), in allocation coordinates. */
static int map_runs(const kyi_map_t *m, size_t lo, size_t hi, size_t base, kyi_owner_fn fn, void *ctx)
{
    size_t at = lo, rs = lo;
    int cur = -1;
    while (at < hi) {
        size_t e = at / m->elem;
        int o = kyi_map_owner(m, e);
        size_t r = map_run(m, e), end = r > (hi / m->elem + 1) - e ? hi : (e + r) * m->elem;
        if (end > hi) end = hi;
        if (o != cur) {
            if (cur >= 0) {
                int st = fn(ctx, rs - base, at - rs, cur);
                if (st) return st;
            }
            cur = o, rs = at;
        }
        at = end;
    }
    return cur >= 0 ? fn(ctx, rs - base, hi - rs, cur) : 0;
}

int kyi_owner_runs(size_t pg, kyi_owner_fn fn, void *ctx)
{
    const kyi_alloc_t *a = NULL;
    int home = kyi_page_home(pg, &a);
    size_t off = pg << kyi_dsm.page_shift, page = kyi_dsm.page;
    if (!a || (!a->map && !a->store.read)) return fn(ctx, 0, page, home);
    size_t lo = off - a->off, hi = lo + page, user = a->user_bytes < hi ? a->user_bytes : hi;
    int st = 0;
    if (user > lo) {
        if (a->map) {
            st = map_runs(a->map, lo, user, lo, fn, ctx);
        } else { /* an array's view: the store says, element by element */
            size_t g = a->store.grain, rs = lo;
            int cur = a->store.home_of(a->store.ctx, lo);
            for (size_t at = (lo / g + 1) * g; at < user && !st; at += g) {
                int o = a->store.home_of(a->store.ctx, at);
                if (o == cur) continue;
                st = fn(ctx, rs - lo, at - rs, cur);
                cur = o, rs = at;
            }
            if (!st) st = fn(ctx, rs - lo, user - rs, cur);
        }
    }
    if (!st && user < hi) st = fn(ctx, (user > lo ? user : lo) - lo, hi - (user > lo ? user : lo), home);
    return st;
}

size_t kyi_owner_grain(size_t pg)
{
    const kyi_alloc_t *a = NULL;
    kyi_page_home(pg, &a);
    if (a && a->map) return a->map->elem;
    if (a && a->store.read) return a->store.grain;
    return 1;
}

typedef struct {
    size_t pg0, last_pg;
    int last_owner;
} mark_t;

static int mark_run(void *ctx, size_t off, size_t len, int owner)
{
    mark_t *k = ctx;
    size_t first = off >> kyi_dsm.page_shift, last = (off + len - 1) >> kyi_dsm.page_shift;
    /* a run beginning inside a page that an earlier run of another owner touched makes that page mixed */
    if (k->last_owner >= 0 && first == k->last_pg && owner != k->last_owner)
        kyi_dsm.mixed[k->pg0 + first] = 1;
    k->last_pg = last, k->last_owner = owner;
    return 0;
}

void kyi_map_mark_mixed(const kyi_map_t *m, size_t pg0, size_t user_bytes)
{
    mark_t k = {pg0, 0, -1};
    if (user_bytes) map_runs(m, 0, user_bytes, 0, mark_run, &k);
    /* the tail of the last page past the array belongs to the page's home: no second owner */
}
