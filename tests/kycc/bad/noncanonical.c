/* kycc must fail: the loop of an omp for is not in canonical form (line 7). */
int a[10];
int main(void)
{
    int i = 0;
#pragma omp parallel
#pragma omp for
    for (; i < 10; i++) a[i] = i;
    return 0;
}
