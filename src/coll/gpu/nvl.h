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
 * LL (low latency, NCCL's LL protocol): one-shot allreduce and allgather of at most KY_NVL_LL_MAX bytes
 * skip the copy-in, the barrier and the remote reads. Every member stores its data straight into every
 * member's LL area as 16-byte lines {data 4 B, flag, data 4 B, flag} (8 payload bytes per line; a 16-byte
 * store lands as a whole 8-byte pair at least, so a receiver that sees both flags sees both words), then
 * spins on its own LL area, local memory, until every member's lines carry this call's flag. One NVLink
 * crossing, no round trip. The flag is the LL epoch: one counter per LL block (every LL launch runs all
 * KYI_NVL_LLB blocks and advances every counter, so they are always equal and line u's flag is the same
 * whichever block handles it). Lines alternate between two areas by epoch parity; a member rewrites the
 * area of epoch e at e+2, when it has received every member's lines of e+1, so every member has finished
 * its kernel of e (kernels of a context run in stream order). No closing barrier, any size on any call.
 *
 * Layout of a member's buffer: header (flags, epochs, LL epochs) | LL area (kyi_nvl_ll_area(p) bytes:
 * [parity 2][sender p][KY_NVL_LL_MAX * 2]) | scratch (from the launch's `scr` offset).
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
    KYI_NVL_MAXP = 8,   /* members of an NVLink team */
    KYI_NVL_MAXB = 128, /* blocks of one kernel (flags and epochs per block) */
    KYI_NVL_LLB = 8,    /* blocks of every LL kernel */
    KYI_NVL_MAXT = 512, /* threads per block at most (the kernels are compiled for it) */
    KYI_NVL_HDR = 8192, /* flags [MAXB][MAXP] u32, epochs [MAXB] u32, LL epochs [LLB] u32, padding */
    KYI_NVL_EPOCHS = KYI_NVL_MAXB * KYI_NVL_MAXP * 4,
    KYI_NVL_LLEPOCHS = KYI_NVL_EPOCHS + KYI_NVL_MAXB * 4,
};

enum { KYI_NVL_ONESHOT = 0, KYI_NVL_TWOSHOT = 1, KYI_NVL_ALLGATHER = 2, KYI_NVL_BCAST = 3 };

/* One launch, passed by value. */
typedef struct {
    char *buf[KYI_NVL_MAXP]; /* every member's registered buffer as this member sees it */
    const char *src;         /* this member's input (GPU memory of this device) */
    char *dst;               /* this member's output; NULL: none (ky_reduce off the root) */
    size_t bytes;            /* allreduce/bcast: the vector; allgather: one member's block */
    size_t slot;             /* bytes between the two scratch slots (one-shot kinds) */
    unsigned long long timeout_ns;
    int *err;     /* host-mapped word: the member a timed-out wait was waiting for */
    size_t scr;   /* offset of the scratch in every member's buffer (after the LL area) */
    size_t llmax; /* KY_NVL_LL_MAX: bytes of one sender's data an LL area holds */
    int p, me, root, kind, dtype, op, nblocks, threads, end;
    int ll; /* 1: the LL protocol (set by kyi_nvl_shape) */
} kyi_nvl_args_t;

/* Scratch bytes a launch of `kind` needs (beyond the header and the LL area). */
size_t kyi_nvl_scratch(int kind, size_t bytes, int p);
/* KY_NVL_LL_MAX (0: no LL) and the bytes of the LL area of a context of p members. */
size_t kyi_nvl_ll_max(void);
size_t kyi_nvl_ll_area(int p);
/* Blocks and threads for a launch (a function of its arguments and the settings only, so the same on
 * every member). */
void kyi_nvl_shape(kyi_nvl_args_t *a);
/* Enqueue the kernel on `stream` (a cudaStream_t). KY_OK or KY_ERR_CUDA recorded for `call`. */
int kyi_nvl_launch(const kyi_nvl_args_t *a, void *stream, const char *call);

#ifdef __cplusplus
}
#endif

#endif
