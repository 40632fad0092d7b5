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

/* Every setting's index: KYI_SET_<name without KY_>, one per row of runtime/settings.def. */
typedef enum {
#define KYI_SETTING(id, ...) KYI_SET_##id,
#include "runtime/settings.def"
#undef KYI_SETTING
    KYI_SET_COUNT
} kyi_setting_t;

void kyi_config_load(void);
/* Typed getters. The value is always one the table allows: words and ranges need no second check at the
 * caller. */
long kyi_setting_long(kyi_setting_t id);
/* kyi_setting_long read once into *slot (initialised to KYI_CONFIG_UNREAD), for settings consulted on hot
 * paths (wait loops, faults), where even the table's parse would cost more than the work; threads racing to
 * read it first all store the same value. */
#define KYI_CONFIG_UNREAD LONG_MIN
long kyi_setting_long_once(kyi_setting_t id, long *slot);
double kyi_setting_double(kyi_setting_t id);
size_t kyi_setting_size(kyi_setting_t id); /* accepts 4096, 64K, 8M, 1G */
const char *kyi_setting_str(kyi_setting_t id);
/* 1 if the setting's value is `word`; the word must be one the table allows for it (a word it does not
 * allow is a bug in the caller and ends the job), so a misspelt comparison cannot silently be false. */
int kyi_setting_is(kyi_setting_t id, const char *word);
/* The setting's name ("KY_PATH_HOST"), for messages. */
const char *kyi_setting_name(kyi_setting_t id);
/* Warn (once, rank 0 only when rank >= 0) about KY_* variables in the environment that are not in the table,
 * and about values the table does not allow (the default is in effect for those). */
void kyi_config_warn_unknown(int rank);

#ifdef __cplusplus
}
#endif

#endif
