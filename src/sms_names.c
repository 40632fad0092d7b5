/* The mSMS rank variables of include/sms.h: sms_rank, sms_nprocs and sms_nproc are plain global ints, as in
 * mSMS, so programs can name them in OpenMP data clauses (the seed's firstprivate(..., sms_rank, sms_nprocs,
 * ...)). ky_init fills them in once the runtime knows the rank; nothing else writes them. */
#include "sms.h"

int sms_rank = 0;
int sms_nprocs = 0;
int sms_nproc = 0;

void kyi_sms_names_set(int rank, int nranks);

void kyi_sms_names_set(int rank, int nranks)
{
    sms_rank = rank;
    sms_nprocs = nranks;
    sms_nproc = nranks;
}
