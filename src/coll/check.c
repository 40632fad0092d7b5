/* KY_CHECK=1: before a collective, the members agree on its arguments. One allreduce (recursive doubling,
 * run by the executor itself) of the signature and its negation under KY_MIN gives every member the
 * minimum and maximum of each field; any difference, or a member that found its own arguments invalid,
 * makes the collective return KY_ERR_ARG on every member with a message naming the field, instead of
 * leaving some members waiting forever. */
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "runtime/config.h"
#include "runtime/log.h"

int kyi_check_enabled(void)
{
    static int cached = -1;
    if (cached < 0) cached = kyi_setting_long(KYI_SET_CHECK) != 0;
    return cached;
}

static const char *field[KYI_CK_N] = {"the collective called",
                                      "the count (elements or bytes)",
                                      "the data type",
                                      "the reduction operation",
                                      "the root",
                                      "the forced algorithm",
                                      "valid arguments"};

int kyi_check_agree(const char *call, struct kyi_team *t, const int64_t sig[KYI_CK_N])
{
    int64_t v[2 * KYI_CK_N];
    for (int i = 0; i < KYI_CK_N; i++) {
        v[i] = sig[i];
        v[KYI_CK_N + i] = -sig[i];
    }
    KYI_CHECK(kyi_allreduce_min_i64(t, v, 2 * KYI_CK_N, call));
    if (-v[KYI_CK_N + KYI_CK_BAD] > 0) {
        /* this member's own complaint was recorded just before: keep it in the message that replaces it */
        char own[512] = "";
        if (sig[KYI_CK_BAD]) snprintf(own, sizeof own, " (this one: %s)", ky_last_error());
        return kyi_fail(KY_ERR_ARG, call,
                        "KY_CHECK: a member of the team (size %d) passed invalid arguments%s", t->size, own);
    }
    for (int i = 0; i < KYI_CK_N; i++) {
        int64_t lo = v[i], hi = -v[KYI_CK_N + i];
        if (lo != hi)
            return kyi_fail(KY_ERR_ARG, call,
                            "KY_CHECK: members of the team (size %d) disagree on %s: from %lld to %lld (this "
                            "member: %lld)",
                            t->size, field[i], (long long)lo, (long long)hi, (long long)sig[i]);
    }
    return KY_OK;
}
