/* kycc must refuse: the map of a 2-D array has one dimension (line 5) */
#include <stdio.h>
#include <mpc.h>

shared double A[64][64]::[NPROCS](0, NPROCS);

int main(int argc, char **argv)
{
    mpc_init(&argc, &argv);
    A[0][0] = 1;
    mpc_exit();
    return 0;
}
