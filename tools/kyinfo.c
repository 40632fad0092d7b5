/* kyinfo: prints every KY_* setting with its value in effect, default and doc
 * (what `kyrun --info` shows). Runs without ky_init, so it needs no MPI launcher. */
#include <stdio.h>

#include "kyoyu.h"

int main(void)
{
    int st = ky_config_print(stdout);
    if (st != KY_OK) {
        fprintf(stderr, "kyinfo: ky_config_print failed: %s\n", ky_strerror(st));
        return 1;
    }
    return 0;
}
