/* kycc must fail: omp for followed by a while loop (line 6). */
int a[10];
int main(void)
{
    int i = 0;
#pragma omp parallel for
    while (i < 10) a[i++] = 1;
    return 0;
}
