/* kycc must fail: copyprivate is not supported (line 6). */
int main(void)
{
    int v = 0;
#pragma omp parallel
#pragma omp single copyprivate(v)
    v = 3;
    return v;
}
