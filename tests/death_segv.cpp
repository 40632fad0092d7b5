/* Faults the global space must not swallow. Modes (argv[1]):
 *   outside   a load from address 8: the program dies by SIGSEGV after Kyoyu's message
 *   inside    a load from a page of the global space that is in no allocation: dies with the address
 *   apphandler the application installed its own SIGSEGV handler before ky_init: it still runs */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kyoyu.h"

static void app_handler(int sig)
{
    (void)sig;
    const char msg[] = "application handler ran\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    _exit(0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "outside";
    if (!strcmp(mode, "apphandler")) signal(SIGSEGV, app_handler);
    ky_init(&argc, &argv);
    void *base;
    size_t size;
    ky_gas_range(&base, &size);
    volatile long *p = (volatile long *)8;
    if (!strcmp(mode, "inside")) p = (volatile long *)((char *)base + size / 4);
    fprintf(stderr, "rank %d: touching %p\n", ky_rank(), (void *)p);
    long v = *p;
    printf("survived a bad load (%ld): this is a bug\n", v);
    ky_finalize();
    return 0;
}
