/* The checksum every dataset carries (attribute kyoyu_checksum, docs/io.md gives the formula so any program
 * can check it): a sum over elements, each hashed with its global row-major index, so it does not depend on
 * which rank wrote or reads which element, or in what order; ranks add their parts with one allreduce. */
#include <string.h>

#include "io/io.h"

/* splitmix64's output function (Steele, Lea, Flood 2014) */
static inline uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define KEY_STEP 0x9E3779B97F4A7C15ull  /* element i's key: i * KEY_STEP */
#define WORD_STEP 0xD1B54A32D192ED03ull /* word j of an element: key + j * WORD_STEP */

/* element with key `key`: its bytes as 8-byte little-endian words w_j (the last one zero-padded), each mixed
 * once with its position (one mix per word: the checksum runs on the CPU beside the bounce path's writes, so
 * its speed bounds theirs). Fixed-size loads: a memcpy of a variable length per word was a library call,
 * 0.9-1.4 GB/s for 8- and 12-byte elements. */
static inline uint64_t elem_hash(uint64_t key, const unsigned char *e, size_t bytes)
{
    uint64_t h = 0, k = key;
    size_t o = 0;
    for (; o + 8 <= bytes; o += 8, k += WORD_STEP) {
        uint64_t w;
        memcpy(&w, e + o, 8);
        h += mix(w ^ k);
    }
    if (o < bytes) {
        uint64_t w = 0;
        if (bytes - o == 4) {
            uint32_t t;
            memcpy(&t, e + o, 4);
            w = t;
        } else {
            memcpy(&w, e + o, bytes - o);
        }
        h += mix(w ^ k);
    }
    return h;
}

/* n elements from global index g (consecutive), `step` bytes apart in memory; `bytes` a constant where the
 * callers below pass one, so the word loop unrolls */
static inline uint64_t run_hash(uint64_t g, const unsigned char *m, size_t n, size_t step, size_t bytes)
{
    uint64_t h = 0, key = g * KEY_STEP;
    for (size_t x = 0; x < n; x++, key += KEY_STEP, m += step) h += elem_hash(key, m, bytes);
    return h;
}

/* the common element sizes with a constant size (the word loop unrolled), any other in general */
#define KYI_RUN_CASE(b) \
    case b:             \
        return run_hash(g, m, n, step, b);
static uint64_t run_any(uint64_t g, const unsigned char *m, size_t n, size_t step, size_t bytes)
{
    /* clang-format off */ /* one case per size, as the macro spells it */
    switch (bytes) {
        KYI_RUN_CASE(4)
        KYI_RUN_CASE(8)
        KYI_RUN_CASE(12)
        KYI_RUN_CASE(16)
        KYI_RUN_CASE(24)
        KYI_RUN_CASE(32)
        default:
            return run_hash(g, m, n, step, bytes);
    }
    /* clang-format on */
}
#undef KYI_RUN_CASE

uint64_t kyi_io_checksum(const kyi_io_shape_t *sh, const kyi_io_piece_t *p, size_t r0, size_t r1,
                         const char *mem, const size_t mS[])
{
    int nd = sh->ndim;
    size_t GS[KY_ARRAY_MAX_DIMS], lo[KY_ARRAY_MAX_DIMS] = {0}, hi[KY_ARRAY_MAX_DIMS], l[KY_ARRAY_MAX_DIMS];
    GS[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--) GS[d] = GS[d + 1] * sh->dims[d + 1];
    for (int d = 0; d < nd; d++) hi[d] = p->n[d];
    lo[0] = r0;
    hi[0] = r1;
    for (int d = 0; d < nd; d++)
        if (lo[d] >= hi[d]) return 0;
    memcpy(l, lo, sizeof l);
    uint64_t h = 0;
    const size_t el = sh->elem;
    const int last = nd - 1;
    for (;;) {
        size_t gbase = 0, mbase = (l[0] - r0) * mS[0];
        for (int d = 0; d < last; d++) {
            gbase += (p->g[d] ? p->g[d][l[d]] : p->g0[d] + l[d]) * GS[d];
            if (d > 0) mbase += l[d] * mS[d];
        }
        if (last == 0) mbase = 0;
        const unsigned char *row = (const unsigned char *)mem;
        size_t m0 = last == 0 ? 0 : mbase + lo[last] * mS[last]; /* memory index of the row's first element */
        if (!p->g[last]) { /* block: global indices consecutive along the row */
            h += run_any(gbase + p->g0[last] + lo[last], row + m0 * el, hi[last] - lo[last], mS[last] * el,
                         el);
        } else {
            for (size_t x = lo[last]; x < hi[last]; x++) {
                size_t m = last == 0 ? (x - r0) * mS[0] : mbase + x * mS[last];
                h += elem_hash((gbase + p->g[last][x]) * KEY_STEP, row + m * el, el);
            }
        }
        int d = last - 1;
        while (d >= 0 && ++l[d] == hi[d]) {
            l[d] = lo[d];
            d--;
        }
        if (d < 0) break;
    }
    return h;
}
