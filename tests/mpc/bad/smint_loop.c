/* kycc must refuse: a data clause on a loop that counts down (line 9) */
#include <stdio.h>
#define N 1000
static double a[N], b[N];

int main(void)
{
    int i;
#pragma smint parallel for copyin(a[i:1]) copyout(b[i:1])
    for (i = N - 1; i >= 0; i--) b[i] = 2 * a[i];
    printf("%g\n", b[0]);
    return 0;
}
