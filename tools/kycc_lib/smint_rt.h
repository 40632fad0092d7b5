/* smint_rt.h: run-time calls of SMint programs translated by kycc (smint.py emits them; docs/mpc.md). A user
 * never includes it. Prototypes only: the translator copies this text into every SMint unit. */
#ifndef KYCC_SMINT_RT_H
#define KYCC_SMINT_RT_H
/* This rank's contiguous block [*lo, *hi) of iterations 0 .. n-1 under the default static schedule of the
 * global team (kycc_for_static's blocks of this rank's threads). Called by every thread of the region. */
void smint_rank_block(long n, long *lo, long *hi);
/* One section of an array at base (extents ext[], -1: a pointer's unknown first extent), index ranges
 * [lo[d], hi[d]) clipped to the extents: ky_preload_array, read-only (rw 0) or read-write (rw 1). */
void smint_load(void *base, const long ext[], const long lo[], const long hi[], int ndim, int elem, int rw,
                const char *where);
void smint_rank_sync(void); /* the rank's threads meet (not the other ranks) */
void smint_drop(void);      /* the rank's threads meet, ky_sync_drop, meet again (create's end) */
void smint_barrier(void);   /* #pragma smint barrier: ky_barrier in the serial part, the team's in a region */
/* Every unit kycc translates votes from a constructor: 1 (an SMint unit whose serial part writes no global
 * data) or 0 (any other). With only 1s, and KY_DSM_SNAPSHOT unset by the user, KY_DSM_SNAPSHOT=2 (the DSM's
 * default) is set before kycc's main would set 1: the guard on every home page is for serial in-place
 * updates. */
void smint_vote_(int serial_part_writes_nothing);
/* 1 if the votes set KY_DSM_SNAPSHOT=2 (every unit's serial part writes no global data) */
int smint_set_snapshot_(void);
int kycc_is_rank_master(void);
#endif
