/* kycc must fail: an undeclared variable (line 6). */
int main(void)
{
    int i;
#pragma omp parallel for
    for (i = 0; i < 10; i++) undeclared_var += i;
    return 0;
}
