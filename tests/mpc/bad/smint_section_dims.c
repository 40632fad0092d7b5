/* kycc must refuse: a section with two subscripts on a 1-D array (line 9) */
#include <stdio.h>
#define N 1000
static double a[N], b[N];

int main(void)
{
    int i;
#pragma smint parallel for copyin(a[i - 1:3][0:2]) copyout(b[i])
    for (i = 1; i < N - 1; i++) b[i] = a[i - 1] + a[i + 1];
    printf("%g\n", b[N - 2]);
    return 0;
}
