/* The 5-point 2-D stencil of seed 000 Table 1 with Kyoyu arrays (kyoyu/array.h): row blocks with one halo row
 * on each side, filled by ky_array_halo_exchange every step; the checksum by ky_allreduce. */
#include <stdio.h>
#include <omp.h>
#include <kyoyu.h>
#include <kyoyu/array.h>
#include <kyoyu/coll.h>
#ifndef N
#define N 4096
#endif
#ifndef NT
#define NT 100
#endif

int main(int argc, char **argv)
{
    ky_array_t as, ad, at;
    size_t dims[2] = {N, N}, lo[2], hi[2], ext[2], str[2];
    int halo[2] = {1, 0}, i, j, t;
    ky_init(&argc, &argv);
    ky_array_create(2, dims, sizeof(double), NULL, KY_PLACE_HOST, halo, &as);
    ky_array_create(2, dims, sizeof(double), NULL, KY_PLACE_HOST, halo, &ad);
    double *src = ky_array_local(as, lo, hi), *dst = ky_array_local(ad, NULL, NULL), s = 0, w = 0, t0, v[2], r[2];
    ky_array_layout(as, 0, ext, str);
    long S = (long)str[0], n = (long)(hi[0] - lo[0]), l0 = (long)lo[0];
#pragma omp parallel for private(j)
    for (i = 0; i < n; i++)
        for (j = 0; j < N; j++)
            src[i * S + j] = dst[i * S + j] = ((l0 + i) * 7 + j * 13) % 17 * 0.1;
    ky_team_barrier(KY_TEAM_WORLD);
    t0 = omp_get_wtime();
    for (t = 0; t < NT; t++) {
        ky_array_halo_exchange(as, NULL);
        src = ky_array_local(as, NULL, NULL), dst = ky_array_local(ad, NULL, NULL);
#pragma omp parallel for private(j)
        for (i = l0 == 0 ? 1 : 0; i < (l0 + n == N ? n - 1 : n); i++)
            for (j = 1; j < N - 1; j++)
                dst[i * S + j] = 0.2 * (src[i * S + j] + src[(i - 1) * S + j] + src[(i + 1) * S + j] +
                                        src[i * S + j - 1] + src[i * S + j + 1]);
        at = as, as = ad, ad = at;
    }
    t0 = omp_get_wtime() - t0;
    src = ky_array_local(as, NULL, NULL);
#pragma omp parallel for private(j) reduction(+ : s, w)
    for (i = 0; i < n; i++)
        for (j = 0; j < N; j++)
            s += src[i * S + j], w += src[i * S + j] * ((l0 + i) % 13 + j % 7);
    v[0] = s, v[1] = w;
    ky_allreduce(v, r, 2, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD);
    if (ky_rank() == 0) printf("checksum %.15e %.15e time %.6f\n", r[0], r[1], t0);
    ky_array_free(as);
    ky_array_free(ad);
    ky_finalize();
    return 0;
}
