/* Serial reference for fig6.c: the same 7-point stencil, NT plain steps on the whole grid (no blocking, no
 * ranks), and the same weighted sum over all planes. Sizes from -DNZ -DNY -DNX -DNT. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    size_t n = (size_t)NZ * NY * NX;
    double *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v), *t, s = 0;
#define AT(a, z, y, x) a[((size_t)(z) * NY + (y)) * NX + (x)]
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) AT(u, z, y, x) = AT(v, z, y, x) = (z * 7 + y * 3 + x) % 11 * 0.1;
    for (int step = 0; step < NT; step++) {
        for (int z = 1; z < NZ - 1; z++)
            for (int y = 1; y < NY - 1; y++)
                for (int x = 1; x < NX - 1; x++)
                    AT(v, z, y, x) = 0.4 * AT(u, z, y, x) + 0.1 * (AT(u, z - 1, y, x) + AT(u, z + 1, y, x) +
                                     AT(u, z, y - 1, x) + AT(u, z, y + 1, x) + AT(u, z, y, x - 1) + AT(u, z, y, x + 1));
        t = u, u = v, v = t;
    }
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) s += AT(u, z, y, x) * (1 + (z + y + x) % 5);
    printf("%.17g\n", s);
    free(u);
    free(v);
    return 0;
}
