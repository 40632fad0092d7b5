/* kycc must refuse: a distribution map on a scalar (line 5) */
#include <stdio.h>
#include <mpc.h>

shared int count::[NPROCS](0, NPROCS);

int main(int argc, char **argv)
{
    mpc_init(&argc, &argv);
    count = 1;
    mpc_exit();
    return 0;
}
