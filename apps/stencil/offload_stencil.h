/* ky_stencil_offload: seed 000's GPU stencil (Figs. 8-11, Appendix 1) on the global space, its device code
 * written once with include/kyoyu/offload.h (offload_device.c) and built per back end (apps/stencil's
 * CMakeLists.txt). One OpenMP thread per device; each device holds its planes of the two ky_mapalloc
 * arrays, plus bt halo planes on each side, in a data region; every bt steps the boundary planes go to the
 * global space (KY_UPDATE_HOST), the ranks synchronise, the remote halos are overloaded (preloaded once)
 * and the halo planes go back to the devices (KY_UPDATE_DEVICE). Variant p2p (Fig. 11) moves the halos
 * between devices of one rank device to device, through KY_USE_DEVICE_PTR addresses. */
#ifndef KY_STENCIL_OFFLOAD_H
#define KY_STENCIL_OFFLOAD_H

#include "stencil.h"

enum { SO_HOST, SO_P2P, SO_NVARIANTS };

typedef struct {
    int devices; /* device threads per rank */
    int ndev;    /* devices the back end's runtime offers (0: the regions run on the host) */
    int first;   /* device of thread 0 (local rank x devices, modulo ndev) */
    int shared;  /* threads of this rank share a device: each computes on private copies */
} so_devs_t;

/* The back end's name; the devices found and how `want` threads (0: one per device) map onto them. */
const char *so_backend(void);
/* the kernels' loop nest by name: flat (one collapsed loop over every point), or the z-y rows collapsed and
 * each row's x on the lanes (KY_OFFLOAD_INNER): rows, warps (the default), gang; or on the threads of the
 * row's block (KY_OFFLOAD_THREADS): team; -1 if unknown */
int so_set_shape(const char *name);
const char *so_shape(void);
void so_devices(int want, so_devs_t *dv);
/* One run of p->nt steps on the global arrays A and B (own slabs filled, synchronised): collective over
 * ranks, starts the device threads. Returns KY_OK or the first failure; *time_s this rank's time of the
 * time loop, *result the array holding the result (own slab valid, halos dropped). */
int so_run(int variant, const st_params_t *p, const so_devs_t *dv, double *A, double *B, double *time_s,
           double **result);

/* offload_team.c: the device threads (host OpenMP, compiled without the directive back end's flag) */
int so_team_max(void); /* threads a rank may start: 1 without OpenMP */
/* body on n threads, or on none when OpenMP gives fewer (OMP_DYNAMIC, nesting): the threads it gave */
int so_team_run(int n, void (*body)(void *), void *arg);
int so_team_me(void);
void so_team_barrier(void);

#endif
