/* Hiding the halo exchange behind computation: a 2-D Jacobi sweep on an array split into row blocks over
 * every rank, one halo row on each side. Per step:
 *   ky_array_halo_exchange_begin(u)   the exchange starts (after the work queued so far)
 *   rows 1 .. n-2 of the block        need no halo: computed while the halo rows move
 *   ky_array_halo_exchange_end(u)     the halo rows are in
 *   rows 0 and n-1                    need the neighbours' rows
 * Between begin and end the program reads u's owned rows and writes only v: the rule is that nobody writes
 * the boundary rows the neighbours receive, nor touches the halo rows. The result is checked against a
 * serial run on rank 0. Host placement; the same calls work on GPU arrays with a stream
 * (apps/stencil_gpu/overlap.cu does it with temporal blocking). Run with several ranks, and with
 * KY_NODE_SPLIT=rank to send the halos as messages between "nodes". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <kyoyu.h>

#define CHECK(call)                                              \
    do {                                                         \
        int s_ = (call);                                         \
        if (s_ != KY_OK) {                                       \
            fprintf(stderr, "%s: %s\n", #call, ky_last_error()); \
            return 1;                                            \
        }                                                        \
    } while (0)

enum { NY = 29, NX = 17, STEPS = 20 }; /* 29 rows: uneven blocks on 2, 3 and 4 ranks */

static double init(size_t y, size_t x)
{
    return (double)((y * 31 + x * 17) % 23);
}

/* One Jacobi update of row i (global row g) of v from u; both address local row 0, rows `stride` apart. The
 * outer rows and columns are fixed (boundary values), so they are copied. */
static void row(double *v, const double *u, long i, size_t g, size_t stride)
{
    const double *c = u + i * (long)stride;
    double *o = v + i * (long)stride;
    if (g == 0 || g == NY - 1) {
        memcpy(o, c, NX * sizeof(double));
        return;
    }
    o[0] = c[0], o[NX - 1] = c[NX - 1];
    for (size_t x = 1; x < NX - 1; x++)
        o[x] = 0.25 * (c[x - 1] + c[x + 1] + c[x - (long)stride] + c[x + stride]);
}

int main(int argc, char **argv)
{
    CHECK(ky_init(&argc, &argv));
    int me = ky_rank();
    size_t dims[2] = {NY, NX}, lo[2], hi[2], ext[2], stride[2];
    int halo[2] = {1, 0};
    ky_array_t a[2];
    for (int k = 0; k < 2; k++)
        CHECK(ky_array_create(2, dims, sizeof(double), NULL, KY_PLACE_HOST, halo, &a[k]));
    double *blk[2];
    for (int k = 0; k < 2; k++) blk[k] = ky_array_local(a[k], lo, hi);
    CHECK(ky_array_layout(a[0], 0, ext, stride));
    long n = (long)(hi[0] - lo[0]);
    for (long i = 0; i < n; i++)
        for (size_t x = 0; x < NX; x++)
            blk[0][i * (long)stride[0] + x] = blk[1][i * (long)stride[0] + x] = init(lo[0] + i, x);

    int cur = 0;
    for (int t = 0; t < STEPS; t++) {
        double *u = blk[cur], *v = blk[1 - cur];
        CHECK(ky_array_halo_exchange_begin(a[cur], NULL));
        for (long i = 1; i < n - 1; i++) row(v, u, i, lo[0] + i, stride[0]); /* no halo needed */
        CHECK(ky_array_halo_exchange_end(a[cur]));
        row(v, u, 0, lo[0], stride[0]);
        if (n > 1) row(v, u, n - 1, lo[0] + n - 1, stride[0]);
        cur = 1 - cur;
    }

    CHECK(ky_comm_barrier()); /* every rank's last rows are written before rank 0 reads them */
    int ok = 1;
    if (me == 0) { /* the whole grid by one region get, against the same sweeps on one rank */
        double *all = malloc(sizeof(double) * NY * NX), *s = malloc(sizeof(double) * NY * NX * 2),
               *r = s + NY * NX;
        size_t zero[2] = {0, 0};
        CHECK(ky_array_get(a[cur], zero, dims, all));
        for (size_t y = 0; y < NY; y++)
            for (size_t x = 0; x < NX; x++) s[y * NX + x] = init(y, x);
        for (int t = 0; t < STEPS; t++) {
            for (size_t y = 0; y < NY; y++) row(r, s, (long)y, y, NX);
            memcpy(s, r, sizeof(double) * NY * NX);
        }
        for (size_t i = 0; i < NY * NX; i++) ok &= all[i] == s[i];
        printf("array_overlap: %d ranks, %d x %d, %d steps, exchange behind the interior rows: %s\n",
               ky_nranks(), NY, NX, STEPS, ok ? "OK" : "WRONG");
        free(all), free(s);
    }
    CHECK(ky_comm_barrier());
    for (int k = 0; k < 2; k++) CHECK(ky_array_free(a[k]));
    CHECK(ky_finalize());
    return ok ? 0 : 1;
}
