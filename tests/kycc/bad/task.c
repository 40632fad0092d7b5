/* kycc must fail: tasks (line 7). */
int x;
int main(void)
{
#pragma omp parallel
    {
#pragma omp task
        x++;
    }
    return 0;
}
