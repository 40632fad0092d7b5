/* ky_init / ky_finalize: every layer's set-up in layer order (runtime, comm, dsm) and teardown in reverse.
 * The collectives need no set-up of their own (teams and plans are made on demand). ky_init also fills in
 * the mSMS rank variables of sms.h (sms_names.c). */
#include "kyoyu.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

int kyi_rt_init(int *argc, char ***argv);
int kyi_rt_finalize(void);
int kyi_comm_init(void);
int kyi_comm_finalize(void);
int kyi_dsm_init(void);
int kyi_dsm_finalize(void);
void kyi_sms_names_set(int rank, int nranks);

int ky_init(int *argc, char ***argv)
{
    KYI_CHECK(kyi_rt_init(argc, argv));
    kyi_sms_names_set(kyi_rt.rank, kyi_rt.nranks);
    int st = kyi_comm_init();
    if (st) kyi_fatal("rank %d: ky_init: the comm layer failed to start: %s", kyi_rt.rank, ky_last_error());
    st = kyi_dsm_init();
    if (st)
        kyi_fatal("rank %d: ky_init: the global address space failed to start: %s", kyi_rt.rank,
                  ky_last_error());
    return KY_OK;
}

int ky_finalize(void)
{
    KYI_CHECK(kyi_require_init("ky_finalize"));
    kyi_dsm_finalize();
    kyi_comm_finalize();
    return kyi_rt_finalize();
}
