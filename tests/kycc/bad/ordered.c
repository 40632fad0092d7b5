/* kycc must fail: an ordered loop would run serially across ranks (line 7). */
int a[10];
int main(void)
{
    int i;
#pragma omp parallel for ordered
    for (i = 0; i < 10; i++) {
#pragma omp ordered
        a[i] = i;
    }
    return 0;
}
