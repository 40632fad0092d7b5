/* kycc must fail: sections are not translated (line 6). */
int a, b;
int main(void)
{
#pragma omp parallel
#pragma omp sections
    {
#pragma omp section
        a = 1;
#pragma omp section
        b = 2;
    }
    return 0;
}
