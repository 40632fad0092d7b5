/* kycc must refuse: shared data declared inside a function (line 8) */
#include <stdio.h>
#include <mpc.h>

int main(int argc, char **argv)
{
    mpc_init(&argc, &argv);
    shared double A[64]::[NPROCS](0, NPROCS);
    A[0] = 1;
    mpc_exit();
    return 0;
}
