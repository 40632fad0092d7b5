/* kycc test, second file of data.c: globals defined here, used there. */
double other[100];
int other_count;

void fill_other(double v)
{
    int i;
#pragma omp parallel for
    for (i = 0; i < 100; i++) other[i] = v * i;
#pragma omp parallel
    {
#pragma omp atomic
        other_count++;
    }
}
