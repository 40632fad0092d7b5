/* Internal: the plan cache (plan.c). */
#ifndef KYI_COMM_PLAN_H
#define KYI_COMM_PLAN_H

#include "comm/comm.h"
#include "runtime/config.h"

#define KYI_PLAN_KEY_MAX 16

typedef struct {
    ky_path_t path;
    int local_dev; /* device of the caller's buffer, -1 host */
    size_t bytes;  /* payload */
} kyi_plan_info_t;

/* 1 and *out filled if the key is cached. Counts hits and misses in the statistics. */
int kyi_plan_find(struct kyi_seg *s, const uint64_t *key, int nkey, kyi_plan_info_t *out);
void kyi_plan_add(struct kyi_seg *s, const uint64_t *key, int nkey, const kyi_plan_info_t *info);

#endif
