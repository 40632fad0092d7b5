/* sms_stencil7: seed 000's Fig. 7 (7-point stencil with temporal blocking on the mSMS API, include/sms.h)
 * with its elided parts filled in and nothing else changed. What was added or fixed is marked [filled in]
 * or [fixed]:
 *  - line 1's "...": headers, MAX/MIN, and NZ..BT overridable with -D (defaults small for CI; any NY, NX:
 *    sms_sync_drop keeps every rank's writes to its own planes even on a page homed at its neighbour, and
 *    the test example_sms_stencil7_unaligned runs it on planes of 36 x 40 doubles);
 *  - "データ初期化 or 入力" (initialise or read the data): each rank fills its own z slab of A and B;
 *  - the figure's missing braces and semicolon, and private(y, x) on the omp loop (y and x are declared at
 *    the top of main, so without it the threads would share them);
 *  - at the end, a check: after sms_barrier rank 0 reads the whole global array and compares it with a
 *    serial run of the same stencil; prints OK or FAIL and exits nonzero on a mismatch.
 * Run: kyrun -n 4 build/bin/sms_stencil7 (NZ must be a multiple of the rank count). */
/* [filled in] line 1 "..." */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#ifndef NZ
#define NZ 48
#endif
#ifndef NY
#define NY 64
#endif
#ifndef NX
#define NX 128
#endif
#ifndef NT
#define NT 8
#endif
#ifndef BT
#define BT 4
#endif
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
/* [filled in] initial value of A[z][y][x] and B[z][y][x] (the boundary never changes) */
static double init_value(int z, int y, int x)
{
    return (double)((z * 31 + y * 17 + x * 7) % 101) / 101.0;
}
static int check_serial(double (*result)[NY][NX]);
/* [end of line 1] */
#include <omp.h>
#include <sms.h>
#if 0            /* the figure's defaults (2048^3 per 4 nodes), made overridable above */
#define NZ 2048  // for 4 nodes
#define NY 2048
#define NX 2048
#define NT 128
#define BT 4
#endif
double (*A)[NY][NX];  // 2次元配列へのポインタ, A[NZ][NY][NX]としてアクセス可
double (*B)[NY][NX];  // 2次元配列へのポインタ, B[NZ][NY][NX]としてアクセス可

int main(int argc, char **argv)
{
    int z, y, x, bt = BT;
    int size, st, ed;
    sms_startup(&argc, &argv);  //マルチノード並列開始

    int dim[4] = {NZ, NY, NX, -1};  // 配列の次元
    int div[4] = {sms_nprocs, 1, 1, -1};  //データ配列のマルチノード分散マッピング、次元毎の分割数
    // 大域配列 A[NZ][NY][NX], B[NZ][NY][NX] の確保と分散マップ
    A = (double(*)[NY][NX])sms_mapalloc(dim, div, sizeof(double), 0, sms_nprocs);
    B = (double(*)[NY][NX])sms_mapalloc(dim, div, sizeof(double), 0, sms_nprocs);

    //各ノードの担当領域の設定(Z方向分割)
    size = NZ / sms_nprocs;
    st = size * sms_rank;
    ed = size * (sms_rank + 1);

    /* [filled in] データ初期化 or 入力 (initialise the data): each rank its own z slab of A and B */
    if (NZ % sms_nprocs != 0 || NT % BT != 0) {
        if (sms_rank == 0)
            fprintf(
                stderr,
                "sms_stencil7: NZ (%d) must be a multiple of the rank count (%d) and NT (%d) of BT (%d)\n",
                NZ, sms_nprocs, NT, BT);
        sms_shutdown();
        return 2;
    }
    for (z = st; z < ed; z++)
        for (y = 0; y < NY; y++)
            for (x = 0; x < NX; x++) A[z][y][x] = B[z][y][x] = init_value(z, y, x);
    /* [end of filled in] */
    sms_barrier();

    double(*src)[NY][NX] = A;  // 2次元配列へのポインタ src[NZ][NY][NX]としてアクセス可能
    double(*dst)[NY][NX] = B;  // 2次元配列へのポインタ dst[NZ][NY][NX]としてアクセス可能
    double(*tmp)[NY][NX];
    int t, tt;
    int stz, edz;  // テンポラルブロッキングのための時間ステップ毎の計算範囲

    for (t = 0; t < NT; t += bt) {  // time step loop   [fixed: '{']

        for (tt = bt - 1; tt >= 0; tt--) {  // bt step loop 冗長計算ありテンポラルブロッキング
            stz = MAX(st - tt, 1);
            edz = MIN(ed + tt, NZ - 1);  // [fixed: ';']

#pragma omp parallel for private(y, x) /* [fixed: private(y, x)] */
            for (z = stz; z < edz; z++) {
                for (y = 1; y < NY - 1; y++) {
                    for (x = 1; x < NX - 1; x++) {  // 7点ステンシルの例
                        dst[z][y][x] = 0.4 * src[z][y][x] +
                                       0.1 * (src[z - 1][y][x] + src[z + 1][y][x] + src[z][y - 1][x] +
                                              src[z][y + 1][x] + src[z][y][x - 1] + src[z][y][x + 1]);
                    }
                }
            }  // [fixed: the y and z loops' closing braces]
            tmp = src;
            src = dst;
            dst = tmp;    // src dst 交換
        }                 // bt step loop end
        sms_sync_drop();  //隣接ノードからの袖領域データのキャッシュを廃棄

    }  // time step loop end
    /* [filled in] the check: every rank's writes are at their homes after sms_barrier; rank 0 reads them all
     */
    sms_barrier();
    int bad = sms_rank == 0 ? check_serial(src) : 0;
    /* [end of filled in] */
    sms_shutdown();  //マルチノード並列終了
    return bad;      /* [filled in] */
}

/* [filled in] the serial reference: the same stencil, step by step over the whole grid, no blocking */
static int check_serial(double (*result)[NY][NX])
{
    size_t n = (size_t)NZ * NY * NX;
    double(*s)[NY][NX] = malloc(n * sizeof(double));
    double(*d)[NY][NX] = malloc(n * sizeof(double));
    if (s == NULL || d == NULL) {
        fprintf(stderr, "sms_stencil7: FAIL (out of memory for the check)\n");
        return 1;
    }
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) s[z][y][x] = d[z][y][x] = init_value(z, y, x);
    for (int t = 0; t < NT; t++) {
        for (int z = 1; z < NZ - 1; z++)
            for (int y = 1; y < NY - 1; y++)
                for (int x = 1; x < NX - 1; x++)
                    d[z][y][x] = 0.4 * s[z][y][x] + 0.1 * (s[z - 1][y][x] + s[z + 1][y][x] + s[z][y - 1][x] +
                                                           s[z][y + 1][x] + s[z][y][x - 1] + s[z][y][x + 1]);
        double(*tm)[NY][NX] = s;
        s = d;
        d = tm;
    }
    long wrong = 0;
    double worst = 0.0;
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                double e = fabs(result[z][y][x] - s[z][y][x]) / MAX(fabs(s[z][y][x]), 1e-300);
                if (e > 1e-12) {
                    if (wrong++ < 5)
                        fprintf(stderr, "sms_stencil7: [%d][%d][%d] = %.17g, serial %.17g\n", z, y, x,
                                result[z][y][x], s[z][y][x]);
                }
                worst = MAX(worst, e);
            }
    printf(
        "sms_stencil7: %dx%dx%d, %d steps, bt %d, %d ranks: %s (%ld of %zu points differ, max rel. error "
        "%.3g)\n",
        NZ, NY, NX, NT, BT, sms_nprocs, wrong ? "FAIL" : "OK", wrong, n, worst);
    free(s);
    free(d);
    return wrong ? 1 : 0;
}
