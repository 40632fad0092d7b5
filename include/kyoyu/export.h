/* Kyoyu: export macro. The library is built with hidden visibility; only KY_API symbols are exported. */
#ifndef KYOYU_EXPORT_H
#define KYOYU_EXPORT_H

#if defined(KY_BUILDING_LIBRARY) && defined(__GNUC__)
#define KY_API __attribute__((visibility("default")))
#else
#define KY_API
#endif

#ifdef __cplusplus
#define KY_EXTERN_C_BEGIN extern "C" {
#define KY_EXTERN_C_END }
#else
#define KY_EXTERN_C_BEGIN
#define KY_EXTERN_C_END
#endif

#endif
