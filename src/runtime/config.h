/* Internal: the one table of KY_* settings (config.c). Values are read from the environment once at
 * ky_init (or at the first query before it). */
#ifndef KYI_RUNTIME_CONFIG_H
#define KYI_RUNTIME_CONFIG_H

#include <limits.h>

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

void kyi_config_load(void);
/* Typed getters; the name must be in the table (a missing name is a bug and aborts in debug builds). The value
 * is always one the table allows: words and ranges need no second check at the caller. */
long kyi_config_long(const char *name);
/* kyi_config_long read once into *slot (initialised to KYI_CONFIG_UNREAD), for settings consulted on hot
 * paths (wait loops, faults), where the table lookup would cost more than the work; threads racing to read
 * it first all store the same value. */
#define KYI_CONFIG_UNREAD LONG_MIN
long kyi_config_long_once(const char *name, long *slot);
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
