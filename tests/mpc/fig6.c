#include <stdio.h>
#include <mpc.h>
#include <omp.h>
#define NZ 2048 // for 4 nodes
#define NY 2048
#define NX 2048
#define NT 128
#define BT 4
// 大域配列 分散マップ
shared double A[NZ][NY][NX]::[NPROCS][1][1](0,NPROCS);
shared double B[NZ][NY][NX]::[NPROCS][1][1](0,NPROCS);

int main(int argc, char **argv)
{ int z,y,x,bt=BT;
int size,st,ed;
mpc_init(&argc, &argv); //マルチノード並列開始

//各ノードの担当領域の設定(Z方向分割)
size = NZ / NPROCS; st = size * MYPID; ed = size * (MYPID + 1);

for(z=st; z<ed; z++) for(y=0; y<NY; y++) for(x=0; x<NX; x++) A[z][y][x] = B[z][y][x] = (z * 7 + y * 3 + x) % 11 * 0.1;
mpc_barrier();

double (*src)[NY][NX] = A; // 2次元配列へのポインタ src[NZ][NY][NX]としてアクセス可能
double (*dst)[NY][NX] = B; // 2次元配列へのポインタ dst[NZ][NY][NX]としてアクセス可能
double (*tmp)[NY][NX];
int t, tt;
int stz, edz; // テンポラルブロッキングのための時間ステップ毎の計算範囲

for(t=0; t<NT; t+=bt){ // time step loop

for(tt=bt-1; tt>=0; tt--){ // bt step loop 冗長計算ありテンポラルブロッキング
stz = MAX(st-tt, 1);
edz = MIN(ed+tt, NZ-1);

#pragma omp parallel for
for(z=stz; z<edz; z++){
for(y=1; y<NY-1; y++){
for(x=1; x<NX-1; x++){ // 7点ステンシルの例
dst[z][y][x] = 0.4*src[z][y][x] + 0.1*(src[z-1][y][x] + src[z+1][y][x]
+ src[z][y-1][x] + src[z][y+1][x] + src[z][y][x-1] + src[z][y][x+1]);
}}}
tmp = src; src = dst; dst = tmp; //src dst 交換
} //bt step loop end
sms_sync_drop(); //隣接ノードからの袖領域データのキャッシュを廃棄

} //time step loop end
{ double s = 0; for(z=st; z<ed; z++) for(y=0; y<NY; y++) for(x=0; x<NX; x++) s += src[z][y][x] * (1 + (z + y + x) % 5);
  printf("fig6 rank %d sum %.17g\n", MYPID, s); }
mpc_exit(); //マルチノード並列終了
}
