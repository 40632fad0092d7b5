/* The comm layer's set-up and teardown (called by ky_init / ky_finalize in src/init.c) and its
 * statistics. */
#include <stdlib.h>
#include <string.h>

#include "comm/chan_impl.h"
#include "comm/comm.h"
#include "comm/pack.h"
#include "comm/transport.h"
#include "runtime/config.h"

int kyi_am_init(void);
int kyi_am_drain(void);

kyi_comm_t kyi_comm;
kyi_stats_t kyi_stats;
const kyi_transport_t *kyi_tp_extra;

/* KY_TRANSPORT: auto takes UCX where it was built in and the ranks run on more than one host (one host:
 * shared memory and MPI's own are as fast, and the test variants that split one host keep the MPI path). */
static int open_transport(void)
{
    kyi_tp_extra = NULL;
    int want = kyi_setting_is(KYI_SET_TRANSPORT, "ucx");
    if (!want && kyi_setting_is(KYI_SET_TRANSPORT, "auto") && kyi_ucx_built()) {
        for (int r = 1; r < kyi_rt.nranks && !want; r++) want = kyi_rt.hw_node_of[r] != kyi_rt.hw_node_of[0];
    }
    if (!want) return KY_OK;
    if (!kyi_ucx_built())
        return kyi_fail(KY_ERR_UNSUPPORTED, "ky_init",
                        "rank %d: KY_TRANSPORT=ucx but Kyoyu was built without UCX (install libucx-dev and "
                        "configure again)",
                        kyi_rt.rank);
    return kyi_ucx_open(&kyi_tp_extra);
}

void kyi_tp_background(void)
{
    if (kyi_tp_extra && kyi_tp_extra->background) kyi_tp_extra->background();
}

int kyi_comm_init(void)
{
    kyi_mpi_open();
    kyi_chan_init();
    kyi_comm.progress_thread = kyi_setting_long(KYI_SET_PROGRESS_THREAD) != 0;
    kyi_comm.eager = kyi_setting_size(KYI_SET_EAGER_SIZE);
    kyi_comm.am_medium_max = kyi_setting_size(KYI_SET_AM_MEDIUM_MAX);
    kyi_comm.stage_chunk = kyi_setting_size(KYI_SET_STAGE_CHUNK);
    if (kyi_comm.stage_chunk < 4096) kyi_comm.stage_chunk = 4096;
    kyi_comm.stage_depth = (int)kyi_setting_long(KYI_SET_STAGE_DEPTH);
    if (kyi_comm.stage_depth < 1) kyi_comm.stage_depth = 1;
    /* auto, shm/ipc or mpi: the settings table warns about anything else and gives auto */
    kyi_comm.force_host_mpi = kyi_setting_is(KYI_SET_PATH_HOST, "mpi");
    kyi_comm.force_gpu_mpi = kyi_setting_is(KYI_SET_PATH_GPU, "mpi");
    kyi_comm.seg_alloc_tp = !kyi_setting_is(KYI_SET_SEG_ALLOC, "shm");
    pthread_rwlock_init(&kyi_comm.seg_lock, NULL);
    kyi_comm.seg_next = 0;
    memset(kyi_comm.segs, 0, sizeof kyi_comm.segs);
    memset(&kyi_stats, 0, sizeof kyi_stats);
    kyi_seg_init();
    KYI_CHECK(kyi_am_init());
    KYI_CHECK(open_transport());
    KYI_CHECK(kyi_bell_open());
    return kyi_progress_start();
}

int kyi_comm_finalize(void)
{
    ky_quiet();
    kyi_am_drain();
    kyi_seg_destroy_all();
    kyi_rt_barrier(); /* nobody sends requests any more */
    kyi_progress_stop();
    kyi_bell_close();
    if (kyi_tp_extra) kyi_tp_extra->fini();
    kyi_tp_extra = NULL;
    kyi_mpi_close();
    pthread_rwlock_destroy(&kyi_comm.seg_lock);
    return KY_OK;
}

size_t kyi_stage_chunk(void)
{
    return kyi_comm.stage_chunk;
}

int ky_poll(void)
{
    KYI_CHECK(kyi_require_init("ky_poll"));
    return kyi_progress_poll();
}

int ky_comm_stats(ky_comm_stats_t *o)
{
    KYI_CHECK(kyi_require_init("ky_comm_stats"));
    if (!o) return kyi_fail(KY_ERR_ARG, "ky_comm_stats", "out is NULL");
    for (int p = 0; p < KY_PATH_COUNT; p++) {
        o->ops[p] = atomic_load(&kyi_stats.ops[p]);
        o->bytes[p] = atomic_load(&kyi_stats.bytes[p]);
    }
    o->am_sent = atomic_load(&kyi_stats.am_sent);
    o->am_handled = atomic_load(&kyi_stats.am_handled);
    o->plan_hits = atomic_load(&kyi_stats.plan_hits);
    o->plan_misses = atomic_load(&kyi_stats.plan_misses);
    o->staged_chunks = atomic_load(&kyi_stats.staged_chunks);
    o->engine_idle_sleeps = atomic_load(&kyi_stats.engine_idle_sleeps);
    o->engine_rung = atomic_load(&kyi_stats.engine_rung);
    return KY_OK;
}

int ky_comm_stats_reset(void)
{
    KYI_CHECK(kyi_require_init("ky_comm_stats_reset"));
    for (int p = 0; p < KY_PATH_COUNT; p++) {
        atomic_store(&kyi_stats.ops[p], 0);
        atomic_store(&kyi_stats.bytes[p], 0);
    }
    atomic_store(&kyi_stats.am_sent, 0);
    atomic_store(&kyi_stats.am_handled, 0);
    atomic_store(&kyi_stats.plan_hits, 0);
    atomic_store(&kyi_stats.plan_misses, 0);
    atomic_store(&kyi_stats.staged_chunks, 0);
    atomic_store(&kyi_stats.engine_idle_sleeps, 0);
    atomic_store(&kyi_stats.engine_rung, 0);
    return KY_OK;
}
