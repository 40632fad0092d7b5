/* Internal: the NVLink engine of GPU collectives (members of one node whose GPUs reach each other). Every
 * member owns one registered GPU buffer (an "nvl context"): a header of flags and epoch counters, then
 * scratch. The buffers are exchanged by CUDA IPC once, when the context is made (per plan, or per team for
 * blocking calls), so a collective is one kernel launch on a stream: each block copies its range of the
 * input into its scratch slot, signals every peer by a store into the peer's flag word, waits for the
 * peers' stores into its own flags (GPU spin with system-scope acquire, bounded by KY_TIMEOUT), then reads
 * the peers' slots over NVLink.
 *
 * Flags and epochs. Block b of member i writes flags[b][i] of every member; the value is block b's barrier
 * count, kept in this member's own epochs[b] and advanced by the kernel itself, so a plan restarts or
 * replays inside a CUDA graph without any reset. Counters only grow; a waiter wants >= its own count.
 * Every member runs the same launch configuration for the same call, so block b covers the same ranges
 * everywhere and the flags of block b alone order the data of block b.
 *
 * Slots. One-shot kernels use two slots by epoch parity and no closing barrier: a member overwrites a
 * slot only after a later barrier of the same block, which its peers enter after they finished reading.
 * That argument needs the same ranges every call: it holds in a plan (fixed size), not in the team's shared
 * context, whose kernels therefore close with a barrier (end = 1). Two-shot always closes with one.
 *
 * C and CUDA C++ include this file. */
#ifndef KYI_COLL_GPU_NVL_H
#define KYI_COLL_GPU_NVL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    KYI_NVL_MAXP = 8,      /* members of an NVLink team */
    KYI_NVL_MAXB = 64,     /* blocks of one kernel (flags and epochs per block) */
    KYI_NVL_HDR = 4096,    /* flags [MAXB][MAXP] u32, epochs [MAXB] u32, padding; scratch starts here */
    KYI_NVL_EPOCHS = KYI_NVL_MAXB * KYI_NVL_MAXP * 4,
};

enum { KYI_NVL_ONESHOT = 0, KYI_NVL_TWOSHOT = 1, KYI_NVL_ALLGATHER = 2, KYI_NVL_BCAST = 3 };

/* One launch, passed by value. */
typedef struct {
    char *buf[KYI_NVL_MAXP];      /* every member's registered buffer as this member sees it */
    const char *src;              /* this member's input (GPU memory of this device) */
    char *dst;                    /* this member's output; NULL: none (ky_reduce off the root) */
    size_t bytes;                 /* allreduce/bcast: the vector; allgather: one member's block */
    size_t slot;                  /* bytes between the two scratch slots (one-shot kinds) */
    unsigned long long timeout_ns;
    int *err;                     /* host-mapped word: the member a timed-out wait was waiting for */
    int p, me, root, kind, dtype, op, nblocks, threads, end;
} kyi_nvl_args_t;

/* Scratch bytes a launch of `kind` needs. */
size_t kyi_nvl_scratch(int kind, size_t bytes, int p);
/* Blocks and threads for a launch (a function of its arguments and the settings only, so the same on
 * every member). */
void kyi_nvl_shape(kyi_nvl_args_t *a);
/* Enqueue the kernel on `stream` (a cudaStream_t). KY_OK or KY_ERR_CUDA recorded for `call`. */
int kyi_nvl_launch(const kyi_nvl_args_t *a, void *stream, const char *call);

#ifdef __cplusplus
}
#endif

#endif
