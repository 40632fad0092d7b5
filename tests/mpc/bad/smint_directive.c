/* kycc must refuse: an unknown smint directive (line 9) */
#include <stdio.h>
#define N 1000
static double a[N];

int main(void)
{
    int i;
#pragma smint parallel
    for (i = 0; i < N; i++) a[i] = i;
    printf("%g\n", a[N - 1]);
    return 0;
}
