/* Doorbells: how a rank wakes another rank's idle progress thread on the same host, so that the thread can
 * sleep long between polls without making requests wait.
 *
 * An idle engine polls MPI with sleeps of up to KY_POLL_SLEEP_MAX_US (200 us). On a host whose cores the
 * program's threads fill, 16 engines waking 5 000 times a second each preempt the ranks, and a program of
 * back-to-back barriers waits for whichever rank was preempted: NPB SP class A on 16 ranks of 16 cores took
 * 41.9 s, 25.5 s with 5 ms sleeps (plain OpenMP: 24.2 s; nvidia-h200's host, 2026-11-28). When every rank
 * runs on this host (one logical node, no UCX), every request an engine serves comes from a rank that can
 * ring it: each rank's bell is a cache line in one shared mapping, the sender increments the count after
 * its MPI_Isend on the request communicator and issues FUTEX_WAKE only when the engine said it sleeps. The
 * engine then sleeps up to KY_PROGRESS_IDLE_MAX_US in FUTEX_WAIT on its count, after ~2 ms without work.
 *
 * No lost wake-up: the engine reads the count, says it sleeps, polls MPI once more, and waits only while the
 * count is still what it read. A ring before the read belongs to a message sent before it, which that last
 * poll sees; a ring after it changes the count, so FUTEX_WAIT returns at once. A message MPI delivers late
 * (a full queue) is found by the short polls that follow every wake-up, or after the timeout at worst. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "comm/comm.h"
#include "comm/transport.h"
#include "runtime/config.h"

typedef struct {
    _Atomic uint32_t count;  /* rings so far (the futex word) */
    _Atomic uint32_t asleep; /* the engine waits on count: a ring must wake it */
    char pad[56];
} bell_t;
_Static_assert(sizeof(bell_t) == 64, "a bell per cache line");

static bell_t *bells; /* [nranks], shared by every rank of the host; NULL: bells off */
static size_t map_bytes;
static long idle_us;

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

int kyi_bell_open(void)
{
    bells = NULL;
    idle_us = kyi_setting_long(KYI_SET_PROGRESS_IDLE_MAX_US);
    long cap = kyi_setting_long(KYI_SET_POLL_SLEEP_MAX_US);
    /* every rank decides alone, then all agree: a rank without bells would not ring the others */
    int want = kyi_comm.progress_thread && kyi_rt.nnodes == 1 && !kyi_tp_extra && idle_us > cap;
    size_t bytes = (size_t)kyi_rt.nranks * sizeof(bell_t);
    bytes = (bytes + 4095) & ~(size_t)4095;
    int fd = -1;
    void *m = MAP_FAILED;
    if (want && kyi_rt.rank == 0) {
        fd = (int)memfd_create("kyoyu-bells", MFD_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, (off_t)bytes) != 0) close(fd), fd = -1;
        if (fd < 0) want = 0;
    }
    int mine[3] = {want, (int)getpid(), fd}, all3[3];
    /* rank 0's memfd, opened through /proc by the others (as the DSM's node copy is) */
    int *all = malloc((size_t)kyi_rt.nranks * sizeof mine);
    if (!all) return kyi_fail(KY_ERR_NOMEM, "ky_init", "rank %d: no memory for the bells", kyi_rt.rank);
    int st = kyi_rt_allgather(mine, sizeof mine, all);
    int ok = !st;
    for (int r = 0; r < kyi_rt.nranks && ok; r++) ok = all[3 * r];
    memcpy(all3, all, sizeof all3);
    if (ok && kyi_rt.rank != 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", all3[1], all3[2]);
        fd = open(path, O_RDWR | O_CLOEXEC);
    }
    if (ok && fd >= 0) m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int mapped = m != MAP_FAILED;
    /* the second round: everybody mapped, so rank 0 may close its descriptor and everybody may ring */
    int st2 = ok ? kyi_rt_allgather(&mapped, sizeof mapped, all) : KY_OK;
    for (int r = 0; r < kyi_rt.nranks && ok; r++) ok = !st2 && all[r];
    free(all);
    if (fd >= 0) close(fd);
    if (!ok) {
        if (mapped) munmap(m, bytes);
        if (want)
            KYI_INFO(KYI_SUB_COMM, "rank %d: no doorbells: the idle progress thread polls", kyi_rt.rank);
        return st ? st : st2;
    }
    map_bytes = bytes;
    bells = m;
    return KY_OK;
}

void kyi_bell_close(void)
{
    if (bells) munmap(bells, map_bytes);
    bells = NULL;
}

int kyi_bell_ready(void)
{
    return bells != NULL;
}

void kyi_bell_ring(int rank)
{
    if (!bells || rank < 0 || rank >= kyi_rt.nranks) return;
    bell_t *b = &bells[rank];
    atomic_fetch_add_explicit(&b->count, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&b->asleep, memory_order_seq_cst)) futex(&b->count, FUTEX_WAKE, 1, NULL);
}

uint32_t kyi_bell_arm(void)
{
    bell_t *b = &bells[kyi_rt.rank];
    uint32_t seen = atomic_load_explicit(&b->count, memory_order_seq_cst);
    atomic_store_explicit(&b->asleep, 1, memory_order_seq_cst);
    return seen;
}

void kyi_bell_disarm(void)
{
    atomic_store_explicit(&bells[kyi_rt.rank].asleep, 0, memory_order_seq_cst);
}

int kyi_bell_wait(uint32_t seen)
{
    bell_t *b = &bells[kyi_rt.rank];
    struct timespec ts = {idle_us / 1000000, (idle_us % 1000000) * 1000L};
    atomic_fetch_add_explicit(&kyi_stats.engine_idle_sleeps, 1, memory_order_relaxed);
    futex(&b->count, FUTEX_WAIT, seen, &ts);
    int rung = atomic_load_explicit(&b->count, memory_order_seq_cst) != seen;
    if (rung) atomic_fetch_add_explicit(&kyi_stats.engine_rung, 1, memory_order_relaxed);
    kyi_bell_disarm();
    return rung;
}
