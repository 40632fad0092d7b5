/* kycc must refuse: an initialiser on shared data (line 5) */
#include <stdio.h>
#include <mpc.h>

shared int flags[4] = {1, 2, 3, 4};

int main(int argc, char **argv)
{
    mpc_init(&argc, &argv);
    printf("%d\n", flags[0]);
    mpc_exit();
    return 0;
}
