/* sms_names_peer: the second translation unit of the sms_names test; reads sms.h's rank variables, which
 * must be the same objects main's file sees (defined once, in libkyoyu). Always compiled as C. */
#include "sms.h"

int sms_names_peer_rank(void);
int sms_names_peer_nprocs(void);

int sms_names_peer_rank(void)
{
    return sms_rank;
}
int sms_names_peer_nprocs(void)
{
    return sms_nproc == sms_nprocs ? sms_nprocs : -1;
}
