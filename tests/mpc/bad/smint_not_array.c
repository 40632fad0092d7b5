/* kycc must refuse: a data clause on a scalar (line 10) */
#include <stdio.h>
#define N 1000
static double a[N];

int main(void)
{
    double s = 0;
    int i;
#pragma smint parallel for copyin(s)
    for (i = 0; i < N; i++) a[i] = s + i;
    printf("%g\n", a[N - 1]);
    return 0;
}
