/* kycc test: work-sharing loops on global arrays (static, chunked, descending, nowait), private,
 * firstprivate, lastprivate and reductions of every operator, and a global line buffer private to an
 * orphaned loop over the outer index (NPB SP's lhsy under kycc's affinity variant); output compared with
 * plain gcc -fopenmp. */
#include <stdio.h>
#include <omp.h>

#define N 1000
static double a[N], b[N];
int flags[N];
long total;
/* a line buffer shared by the program, private to the loop in lines(): each thread fills its own copy for
 * a row and reads its neighbours' entries */
#define R 37
#define C 29
double line[C + 2], grid[R][C];

static void lines(void)
{
    int r, c;
#pragma omp for private(line)
    for (r = 0; r < R; r++) {
        for (c = 0; c < C + 2; c++) line[c] = r * 100.0 + c * c;
        for (c = 0; c < C; c++) grid[r][c] = line[c] - 2 * line[c + 1] + line[c + 2];
    }
}

static double dot(void)
{
    double s = 0;
    int i;
#pragma omp parallel for reduction(+:s)
    for (i = 0; i < N; i++)
        s += a[i] * b[i];
    return s;
}

int main(void)
{
    int i, last = -1, off = 7;
    double scale = 0.5;
    for (i = 0; i < N; i++) b[i] = i % 17;
#pragma omp parallel firstprivate(off) private(i)
    {
#pragma omp for nowait
        for (i = 0; i < N; i++) a[i] = (i + off) * scale;
#pragma omp for schedule(static, 7) lastprivate(last)
        for (i = N - 1; i >= 0; i -= 1) { flags[i] = i % 3 == 0; last = i; }
    }
    printf("dot %.1f last %d\n", dot(), last);

    int sum = 0, prod = 1, diff = 0, band = ~0, bor = 0, bxor = 0, land = 1, lor = 0, mx = -1000, mn = 1000;
    double dmax = -1e300, dmin = 1e300, dprod = 1;
#pragma omp parallel for reduction(+:sum) reduction(*:prod) reduction(-:diff) reduction(&:band) \
    reduction(|:bor) reduction(^:bxor) reduction(&&:land) reduction(||:lor) reduction(max:mx, dmax) \
    reduction(min:mn, dmin) reduction(*:dprod)
    for (i = 1; i <= 20; i++) {
        sum += i; prod *= (i % 3) + 1; diff -= i; band &= ~(1 << (i % 8)) | 0x100; bor |= 1 << (i % 12);
        bxor ^= i * 37; land = land && (i < 100); lor = lor || (i == 13);
        if (i * 7 % 23 > mx) mx = i * 7 % 23;
        if (i * 5 % 19 < mn) mn = i * 5 % 19;
        if (a[i] > dmax) dmax = a[i];
        if (a[i] < dmin) dmin = a[i];
        dprod *= 1.0 + i / 100.0;
    }
    printf("sum %d prod %d diff %d and %x or %x xor %x land %d lor %d max %d min %d\n", sum, prod, diff, band, bor,
           bxor, land, lor, mx, mn);
    printf("dmax %.2f dmin %.2f dprod %.6f\n", dmax, dmin, dprod);

    total = 0;
#pragma omp parallel
    {
        long mine = 0;
        int j;
#pragma omp for reduction(+:total)
        for (j = 0; j < N; j++) total += flags[j];
#pragma omp for
        for (j = 0; j < N; j++) mine += flags[j];
        (void)mine;
    }
    printf("flags %ld\n", total);

#pragma omp parallel
    lines();
    double g = 0;
    for (i = 0; i < R; i++)
        for (int c = 0; c < C; c++) g += grid[i][c] * (i + 1) * (c + 3);
    printf("lines %.1f line[0] %.1f\n", g, line[0]);
    return 0;
}
