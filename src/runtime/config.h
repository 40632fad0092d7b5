/* Internal: the one table of KY_* settings (config.c). Values are read from the environment once at
 * ky_init (or at the first query before it). */
#ifndef KYI_RUNTIME_CONFIG_H
#define KYI_RUNTIME_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

void kyi_config_load(void);
/* Typed getters; the name must be in the table (a missing name is a bug and aborts in debug builds). The value
 * is always one the table allows: words and ranges need no second check at the caller. */
long kyi_config_long(const char *name);
double kyi_config_double(const char *name);
size_t kyi_config_size(const char *name);   /* accepts 4096, 64K, 8M, 1G */
const char *kyi_config_str(const char *name);
/* Warn (once, rank 0 only when rank >= 0) about KY_* variables in the environment that are not in the table,
 * and about values the table does not allow (the default is in effect for those). */
void kyi_config_warn_unknown(int rank);

#ifdef __cplusplus
}
#endif

#endif
