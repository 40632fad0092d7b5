/* Data types and the element-wise reductions every reducing schedule ends in. min/max use plain
 * comparisons (a NaN in the input gives an unspecified one of the operands, as in most MPIs). */
#include "coll/coll.h"

size_t kyi_dtype_size(ky_dtype_t t)
{
    switch (t) {
        case KY_INT32:
            return 4;
        case KY_INT64:
            return 8;
        case KY_FLOAT:
            return 4;
        case KY_DOUBLE:
            return 8;
        default:
            return 0;
    }
}

const char *kyi_dtype_name(int t)
{
    static const char *n[] = {"KY_INT32", "KY_INT64", "KY_FLOAT", "KY_DOUBLE"};
    return t >= 0 && t < KY_DTYPE_COUNT ? n[t] : "(unknown type)";
}

const char *kyi_op_name(int op)
{
    static const char *n[] = {"KY_SUM", "KY_PROD", "KY_MIN", "KY_MAX"};
    return op >= 0 && op < KY_OP_COUNT ? n[op] : "(unknown op)";
}

/* One loop per (type, op): the compiler vectorises each. d[i] = a[i] op b[i]. */
#define KYI_REDUCE_LOOPS(T, A)                                                   \
    do {                                                                         \
        T *d = dst;                                                              \
        const T *a = A, *s = src;                                                \
        switch (op) {                                                            \
            case KY_SUM:                                                         \
                for (size_t i = 0; i < n; i++) d[i] = a[i] + s[i];               \
                break;                                                           \
            case KY_PROD:                                                        \
                for (size_t i = 0; i < n; i++) d[i] = a[i] * s[i];               \
                break;                                                           \
            case KY_MIN:                                                         \
                for (size_t i = 0; i < n; i++) d[i] = s[i] < a[i] ? s[i] : a[i]; \
                break;                                                           \
            case KY_MAX:                                                         \
                for (size_t i = 0; i < n; i++) d[i] = s[i] > a[i] ? s[i] : a[i]; \
                break;                                                           \
            default:                                                             \
                break;                                                           \
        }                                                                        \
    } while (0)

void kyi_reduce_local(void *restrict dst, const void *restrict src, size_t n, ky_dtype_t t, ky_op_t op)
{
    switch (t) {
        case KY_INT32:
            KYI_REDUCE_LOOPS(int32_t, dst);
            break;
        case KY_INT64:
            KYI_REDUCE_LOOPS(int64_t, dst);
            break;
        case KY_FLOAT:
            KYI_REDUCE_LOOPS(float, dst);
            break;
        case KY_DOUBLE:
            KYI_REDUCE_LOOPS(double, dst);
            break;
        default:
            break;
    }
}

void kyi_reduce_local3(void *restrict dst, const void *restrict first, const void *restrict src, size_t n,
                       ky_dtype_t t, ky_op_t op)
{
    switch (t) {
        case KY_INT32:
            KYI_REDUCE_LOOPS(int32_t, first);
            break;
        case KY_INT64:
            KYI_REDUCE_LOOPS(int64_t, first);
            break;
        case KY_FLOAT:
            KYI_REDUCE_LOOPS(float, first);
            break;
        case KY_DOUBLE:
            KYI_REDUCE_LOOPS(double, first);
            break;
        default:
            break;
    }
}
