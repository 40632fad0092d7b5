/* The runs of a piece: its elements cut where they stop being contiguous in the dataset (row-major global
 * order) or in memory (halos, cyclic dimensions). The cuFile path moves each run with one call at its byte
 * offset in the dataset; the GPU checksum (checksum_gpu.cu) takes them as its work list. */
#include <stdlib.h>

#include "io/io.h"
#include "runtime/log.h"

int kyi_io_piece_runs(const char *call, const kyi_io_shape_t *sh, const kyi_io_piece_t *p, kyi_io_run_t **out,
                      size_t *nout)
{
    int nd = sh->ndim, last = nd - 1;
    size_t GS[KY_ARRAY_MAX_DIMS], l[KY_ARRAY_MAX_DIMS] = {0}, el = sh->elem, cap = 16, n = 0;
    GS[last] = 1;
    for (int d = last - 1; d >= 0; d--) GS[d] = GS[d + 1] * sh->dims[d + 1];
    for (int d = 0; d < nd; d++)
        if (p->n[d] == 0) {
            *out = NULL;
            *nout = 0;
            return KY_OK;
        }
    kyi_io_run_t *r = malloc(cap * sizeof *r);
    if (!r) return kyi_fail(KY_ERR_NOMEM, call, "no memory for a piece's runs");
    for (;;) {
        size_t gbase = 0, mbase = 0;
        for (int d = 0; d < last; d++) {
            gbase += (p->g[d] ? p->g[d][l[d]] : p->g0[d] + l[d]) * GS[d];
            mbase += l[d] * p->S[d];
        }
        /* a block dimension stored densely is one stretch of the row (contiguous both ways); otherwise
         * element by element. Walking elements one at a time cost ~2 ns each: 10^7-element datasets took
         * tens of ms per walk, and the bounce path walks every piece twice (GPU checksum, file calls). */
        int dense = !p->g[last] && p->S[last] == 1;
        for (size_t x = 0, len; x < p->n[last]; x += len) {
            len = dense ? p->n[last] : 1;
            uint64_t g = gbase + (p->g[last] ? p->g[last][x] : p->g0[last] + x);
            const char *m = p->origin + (mbase + x * p->S[last]) * el;
            if (n && r[n - 1].g + r[n - 1].n == g && r[n - 1].mem + r[n - 1].n * el == m) {
                r[n - 1].n += len;
                continue;
            }
            if (n == cap) {
                kyi_io_run_t *b = realloc(r, 2 * cap * sizeof *r);
                if (!b) {
                    free(r);
                    return kyi_fail(KY_ERR_NOMEM, call, "no memory for a piece's runs");
                }
                r = b;
                cap *= 2;
            }
            r[n++] = (kyi_io_run_t){m, g, len};
        }
        int d = last - 1;
        while (d >= 0 && ++l[d] == p->n[d]) l[d--] = 0;
        if (d < 0) break;
    }
    *out = r;
    *nout = n;
    return KY_OK;
}
