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

/* element i: its bytes as 8-byte little-endian words w_j (the last one zero-padded), each mixed once with its
 * position (one mix per word: the checksum runs on the CPU beside the bounce path's writes, so its speed
 * bounds theirs) */
static inline uint64_t elem_hash(uint64_t i, const unsigned char *e, size_t bytes)
{
    uint64_t key = i * 0x9E3779B97F4A7C15ull, h = 0;
    for (size_t j = 0, o = 0; o < bytes; j++, o += 8) {
        uint64_t w = 0;
        memcpy(&w, e + o, bytes - o < 8 ? bytes - o : 8);
        h += mix(w ^ (key + j * 0xD1B54A32D192ED03ull));
    }
    return h;
}

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
        for (size_t x = lo[last]; x < hi[last]; x++) {
            size_t gx = p->g[last] ? p->g[last][x] : p->g0[last] + x;
            size_t m = last == 0 ? (x - r0) * mS[0] : mbase + x * mS[last];
            h += elem_hash(gbase + gx, (const unsigned char *)mem + m * el, el);
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
