/* ky_himeno's options and process grid: the original's sizes (XS .. XL) or any --grid IxJxK, the
 * decompositions (the seed's i, j and i-j, plus k and 3-D) or an explicit --dims, and the checks that turn a
 * grid too small for the decomposition or dims that do not multiply to the rank count into a clear error. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "himeno.h"

void hg_usage(FILE *out)
{
    fprintf(
        out,
        "usage: kyrun -n R ky_himeno [SIZE] [options]\n"
        "  SIZE                XS (32x32x64), S (64x64x128), M (128x128x256), L (256x256x512),\n"
        "                      XL (512x512x1024) points, boundaries included (default S)\n"
        "  --grid IxJxK        any grid of at least 3 points per dimension instead of SIZE\n"
        "  --decomp D          i, j, k, ij (the seed's i-j) or 3d (default ij)\n"
        "  --dims AxBxC        the process grid itself (A*B*C = R); overrides --decomp\n"
        "  --weak              SIZE / --grid is each rank's share: the grid is multiplied by the process "
        "grid\n"
        "  --iters N           timed iterations (default 100)\n"
        "  --warmup W          untimed iterations before them; the fields start again after (default 2)\n"
        "  --target SEC        the original's procedure: 3 rehearsal iterations size the loop to SEC s\n"
        "  --mem host|gpu      CPU (OpenMP) or GPU (CUDA) kernels and segments (default host)\n"
        "  --gosa am|allreduce|both  residual by active messages to rank 0 and back (the seed's),\n"
        "                      by ky_allreduce, or both, checked equal (default am)\n"
        "  --pack none|all|DIMS  the dimensions (i, j, k: e.g. jk) whose faces are packed into one ky_put;\n"
        "                      the others go by ky_put / ky_put_strided of the box (default none)\n"
        "  --overlap 0|1       Kyoyu variant: the face slabs the neighbours need first, their halos sent\n"
        "                      while the interior is computed (GPU: on the GPU meanwhile; CPU: after the\n"
        "                      exchange, no concurrency) (default 1 on GPUs with several ranks and k not "
        "split, else 0)\n"
        "  --gosa-defer 0|1    Kyoyu variant: every iteration's gosa kept (GPU: on the GPU) and summed over\n"
        "                      the ranks after the loop, the same sums as per iteration, instead of\n"
        "                      summing (and waiting) after every iteration (default: 1 on GPUs of several "
        "ranks)\n"
        "  --variant ky|mpi|ky,mpi  Kyoyu's one-sided halos and/or the hand-written MPI baseline\n"
        "                      (host staging of GPU faces); both: ratios in the same run (default ky)\n"
        "  --check             rank 0 runs the original algorithm serially; gosa must agree to 1e-6\n"
        "  --bcoef X           b[0..2] = X instead of 0 (makes the diagonal terms and edge halos count)\n"
        "  --threads N         OpenMP threads per rank (default OMP_NUM_THREADS)\n"
        "  --block BXxBYxBZxN[v]  GPU kernel: threads per block along k, j, i, points per thread along i;\n"
        "                      v: four k per thread with 16-byte loads and stores\n"
        "                      (default: a few shapes timed at start-up, the fastest kept)\n"
        "  --chain MODE        one rank on a GPU: the iterations' kernels back to back with gosa kept on\n"
        "                      the GPU (read after the loop): plain, pdl (Programmatic Dependent Launch),\n"
        "                      graph, graph-pdl; or sync (gosa read after every kernel, as with several\n"
        "                      ranks) (default pdl); with --overlap, pdl and graph-pdl also launch the\n"
        "                      overlapped iterations' kernels with PDL\n"
        "  --sweep fixed|alternate  GPU: odd iterations take the i planes in reverse order, so that each\n"
        "                      starts on what the previous one left in L2 (with --overlap: the interior)\n"
        "                      (default alternate)\n"
        "  --tb K              one rank on a GPU, chained: the temporally blocked kernel, K = 2 or 3\n"
        "                      iterations per pass through memory, gosa of every one (default 1: the\n"
        "                      single-step kernels); with --check also compared with the single-step\n"
        "                      kernel: the field bit for bit, gosa of every iteration\n"
        "  --tb-tile 32x16|64x16|32x16x2  its thread block along k x j; x2: in 64 registers, so that\n"
        "                      two blocks share an SM (default 32x16)\n"
        "  --tb-chunk N        its i planes per block (default 64)\n"
        "  --json FILE         append one JSON record per variant (docs/benchmarks.md)\n"
        "  -q                  no per-rank phase table\n"
        "  --diag-nogosa       GPU: the kernel without its gosa reduction, to measure what it costs\n"
        "                      (gosa is 0; not a benchmark run)\n"
        "  -h, --help          this text\n"
        "Exit status: 0; 1 if a check failed; 2 on bad arguments; 77 with --mem gpu and no GPU.\n");
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_triple(const char *s, int v[3])
{
    char tail;
    return sscanf(s, "%dx%dx%d%c", &v[0], &v[1], &v[2], &tail) == 3 ? 0 : -1;
}

static int set_size(const char *s, int g[3])
{
    static const struct {
        const char *name;
        int i, j, k;
    } sizes[] = {{"XS", 32, 32, 64},
                 {"S", 64, 64, 128},
                 {"M", 128, 128, 256},
                 {"L", 256, 256, 512},
                 {"XL", 512, 512, 1024}};
    for (size_t n = 0; n < sizeof sizes / sizeof sizes[0]; n++)
        if (strcasecmp(s, sizes[n].name) == 0) {
            g[0] = sizes[n].i, g[1] = sizes[n].j, g[2] = sizes[n].k;
            return 0;
        }
    return -1;
}

/* The most square split of n into a x b (a >= b): the seed's i-j decomposition. */
static void split2(int n, int *a, int *b)
{
    int best = 1;
    for (int f = 1; f * f <= n; f++)
        if (n % f == 0) best = f;
    *a = n / best, *b = best;
}

/* n over three dimensions as evenly as possible, larger factors first (MPI_Dims_create's rule). */
static void split3(int n, int d[3])
{
    d[0] = d[1] = d[2] = 1;
    int m = n;
    for (int f = 2; m > 1;) {
        if (m % f) {
            f++;
            continue;
        }
        m /= f;
        int lo = 0;
        for (int x = 1; x < 3; x++)
            if (d[x] < d[lo]) lo = x;
        d[lo] *= f;
    }
    /* larger factors first: i gets the most ranks, k (contiguous) the fewest */
    for (int x = 0; x < 3; x++)
        for (int y = x + 1; y < 3; y++)
            if (d[y] > d[x]) {
                int t = d[x];
                d[x] = d[y], d[y] = t;
            }
}

int hg_parse(int argc, char **argv, int nranks, hg_opts_t *o, char *err, size_t len)
{
    memset(o, 0, sizeof *o);
    set_size("S", o->grid);
    strcpy(o->size, "S");
    strcpy(o->decomp, "ij");
    o->iters = 100, o->warmup = 2, o->gosa = HG_GOSA_AM, o->variants = HG_VAR_KY;
    /* no face packed: on an H200, two ranks sharing it, every face direction moved faster as the strided put
     * of the box (i 0.41, j 0.43, k 0.38 ms per exchange at M) than packed (0.85-0.86), and so over MPI
     * (KY_NODE_SPLIT=rank: 0.20-0.50 against 0.63-0.67): docs/performance.md, "Himeno" */
    o->pack = 0;
    int have_dims = 0;
    o->tune = 1;
    o->chain = HG_CHAIN_PDL, o->sweep = 1;
    o->tb = 1, o->tb_tile = 0, o->tb_chunk = 64;
    o->overlap = o->defer = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
        if (!strcmp(a, "-q")) {
            o->quiet = 1;
            continue;
        }
        if (!strcmp(a, "--diag-nogosa")) {
            o->nogosa = 1;
            continue;
        }
        if (!strcmp(a, "--weak")) {
            o->weak = 1;
            continue;
        }
        if (!strcmp(a, "--check")) {
            o->check = 1;
            continue;
        }
        if (a[0] != '-') {
            if (set_size(a, o->grid)) return fail(err, len, "unknown size '%s' (XS, S, M, L or XL)", a);
            snprintf(o->size, sizeof o->size, "%s", a);
            for (char *c = o->size; *c; c++) *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
            continue;
        }
        if (!v) return fail(err, len, "%s needs a value", a);
        i++;
        if (!strcmp(a, "--grid")) {
            if (parse_triple(v, o->grid))
                return fail(err, len, "--grid %s: expected IxJxK, e.g. 65x65x129", v);
            strcpy(o->size, "grid");
        } else if (!strcmp(a, "--dims")) {
            if (parse_triple(v, o->dims)) return fail(err, len, "--dims %s: expected AxBxC, e.g. 2x2x1", v);
            have_dims = 1;
        } else if (!strcmp(a, "--block")) {
            char tail = 0, more;
            int *x = o->block, nf = sscanf(v, "%dx%dx%dx%d%c%c", &x[0], &x[1], &x[2], &x[3], &tail, &more);
            if ((nf != 4 && !(nf == 5 && tail == 'v')) || x[0] < 32 || x[0] % 32 || x[1] < 1 || x[2] < 1 ||
                x[3] < 1 || x[0] * x[1] * x[2] > (tail == 'v' ? 256 : 512))
                return fail(err, len,
                            "--block %s: expected BXxBYxBZxN[v], BX a multiple of 32, at most 512 threads "
                            "(256 with v)",
                            v);
            x[4] = tail == 'v';
            o->tune = 0;
        } else if (!strcmp(a, "--decomp")) {
            if (strcmp(v, "i") && strcmp(v, "j") && strcmp(v, "k") && strcmp(v, "ij") && strcmp(v, "3d"))
                return fail(err, len, "--decomp %s: expected i, j, k, ij or 3d", v);
            snprintf(o->decomp, sizeof o->decomp, "%s", v);
        } else if (!strcmp(a, "--iters") || !strcmp(a, "--warmup") || !strcmp(a, "--threads")) {
            long n = strtol(v, &end, 10);
            int min = strcmp(a, "--iters") ? 0 : 1;
            if (*end || n < min || n > 100000000)
                return fail(err, len, "%s %s: expected an integer >= %d", a, v, min);
            *(!strcmp(a, "--iters") ? &o->iters : !strcmp(a, "--warmup") ? &o->warmup : &o->threads) = (int)n;
        } else if (!strcmp(a, "--target")) {
            o->target = strtod(v, &end);
            if (*end || !(o->target > 0)) return fail(err, len, "--target %s: expected seconds > 0", v);
        } else if (!strcmp(a, "--bcoef")) {
            o->bcoef = strtof(v, &end);
            if (*end) return fail(err, len, "--bcoef %s: expected a number", v);
        } else if (!strcmp(a, "--mem")) {
            if (strcmp(v, "host") && strcmp(v, "gpu"))
                return fail(err, len, "--mem %s: expected host or gpu", v);
            o->gpu = !strcmp(v, "gpu");
        } else if (!strcmp(a, "--gosa")) {
            if (!strcmp(v, "am"))
                o->gosa = HG_GOSA_AM;
            else if (!strcmp(v, "allreduce"))
                o->gosa = HG_GOSA_ALLREDUCE;
            else if (!strcmp(v, "both"))
                o->gosa = HG_GOSA_BOTH;
            else
                return fail(err, len, "--gosa %s: expected am, allreduce or both", v);
        } else if (!strcmp(a, "--pack")) {
            o->pack = 0;
            if (!strcmp(v, "all"))
                o->pack = 7;
            else if (strcmp(v, "none"))
                for (const char *c = v; *c; c++) {
                    if (*c != 'i' && *c != 'j' && *c != 'k')
                        return fail(err, len,
                                    "--pack %s: expected none, all, or the dimensions (i, j, k, ik, ...)", v);
                    o->pack |= 1 << (*c - 'i');
                }
        } else if (!strcmp(a, "--chain")) {
            static const char *names[] = {"sync", "plain", "pdl", "graph", "graph-pdl"};
            o->chain = -1;
            for (int c = 0; c < 5; c++)
                if (!strcmp(v, names[c])) o->chain = c;
            if (o->chain < 0)
                return fail(err, len, "--chain %s: expected sync, plain, pdl, graph or graph-pdl", v);
        } else if (!strcmp(a, "--overlap") || !strcmp(a, "--gosa-defer")) {
            if (strcmp(v, "0") && strcmp(v, "1")) return fail(err, len, "%s %s: expected 0 or 1", a, v);
            *(!strcmp(a, "--overlap") ? &o->overlap : &o->defer) = v[0] == '1';
        } else if (!strcmp(a, "--tb")) {
            o->tb = (int)strtol(v, &end, 10);
            if (*end || o->tb < 1 || o->tb > 3) return fail(err, len, "--tb %s: expected 1, 2 or 3", v);
        } else if (!strcmp(a, "--tb-tile")) {
            static const char *tiles[] = {"32x16", "64x16", "32x16x2"};
            o->tb_tile = -1;
            for (int t = 0; t < 3; t++)
                if (!strcmp(v, tiles[t])) o->tb_tile = t;
            if (o->tb_tile < 0) return fail(err, len, "--tb-tile %s: expected 32x16, 64x16 or 32x16x2", v);
        } else if (!strcmp(a, "--tb-chunk")) {
            o->tb_chunk = (int)strtol(v, &end, 10);
            if (*end || o->tb_chunk < 1)
                return fail(err, len, "--tb-chunk %s: expected a plane count >= 1", v);
        } else if (!strcmp(a, "--sweep")) {
            if (strcmp(v, "fixed") && strcmp(v, "alternate"))
                return fail(err, len, "--sweep %s: expected fixed or alternate", v);
            o->sweep = !strcmp(v, "alternate");
        } else if (!strcmp(a, "--variant")) {
            o->variants = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (!strcmp(t, "ky"))
                    o->variants |= HG_VAR_KY;
                else if (!strcmp(t, "mpi"))
                    o->variants |= HG_VAR_MPI;
                else
                    return fail(err, len, "--variant %s: expected ky, mpi or ky,mpi", v);
            }
        } else if (!strcmp(a, "--json")) {
            o->json = v;
        } else {
            return fail(err, len, "unknown option %s (--help lists them)", a);
        }
    }
    for (int d = 0; d < 3; d++)
        if (o->grid[d] < 3 || o->grid[d] > 1 << 20)
            return fail(err, len, "grid %dx%dx%d: every dimension needs 3 .. 2^20 points", o->grid[0],
                        o->grid[1], o->grid[2]);
    if (have_dims) {
        if (o->dims[0] < 1 || o->dims[1] < 1 || o->dims[2] < 1 ||
            (long)o->dims[0] * o->dims[1] * o->dims[2] != nranks)
            return fail(err, len,
                        "--dims %dx%dx%d: the factors must be >= 1 and multiply to the rank count %d",
                        o->dims[0], o->dims[1], o->dims[2], nranks);
        strcpy(o->decomp, "dims");
    } else if (!strcmp(o->decomp, "i") || !strcmp(o->decomp, "j") || !strcmp(o->decomp, "k")) {
        o->dims[0] = o->dims[1] = o->dims[2] = 1;
        o->dims[o->decomp[0] - 'i'] = nranks;
    } else if (!strcmp(o->decomp, "ij")) {
        split2(nranks, &o->dims[0], &o->dims[1]);
        o->dims[2] = 1;
    } else {
        split3(nranks, o->dims);
    }
    /* weak scaling: SIZE / --grid is one rank's share; the global grid grows with the process grid */
    if (o->weak)
        for (int d = 0; d < 3; d++) {
            if ((long)o->grid[d] * o->dims[d] > 1 << 20)
                return fail(err, len, "--weak: %d points x %d ranks along %c is over 2^20", o->grid[d],
                            o->dims[d], "ijk"[d]);
            o->grid[d] *= o->dims[d];
        }
    /* overlapped by default where it hides the halo behind a kernel that runs on its own (GPUs, several
     * ranks), except where k is split: k faces are single floats moved by a copy kernel that queues behind
     * the interior (L over 4 H100s, k: 0.282 ms per iteration overlapped against 0.256 without, 2026-11-28);
     * the per-iteration gosa deferred on GPUs of several ranks (it no longer waits for every kernel: L over 4
     * H100s, ij, 0.228 -> 0.197 ms alone), else summed every iteration as before */
    if (o->overlap < 0) o->overlap = o->gpu && nranks > 1 && o->dims[2] == 1;
    if (o->defer < 0) o->defer = o->gpu && nranks > 1;
    /* the blocked kernel has no halo exchange between its passes and keeps gosa on the GPU */
    if (o->tb > 1 && (!o->gpu || nranks != 1 || o->chain == HG_CHAIN_SYNC ||
                      ((o->variants & HG_VAR_KY) && o->gosa != HG_GOSA_AM) || o->nogosa))
        return fail(
            err, len,
            "--tb %d: one rank, --mem gpu, a chained loop (--chain other than sync, --gosa am) and gosa "
            "computed",
            o->tb);
    /* every rank needs two points along each split dimension: one it sends, one beside the ghost layer */
    static const char axis[] = "ijk";
    for (int d = 0; d < 3; d++)
        if (o->grid[d] / o->dims[d] < 2)
            return fail(
                err, len,
                "grid %dx%dx%d is too small for %dx%dx%d ranks: %d points along %c cannot be split %d ways "
                "(each rank needs at least 2)",
                o->grid[0], o->grid[1], o->grid[2], o->dims[0], o->dims[1], o->dims[2], o->grid[d], axis[d],
                o->dims[d]);
    return 0;
}

void hg_block_of(const hg_opts_t *o, int rank, hg_block_t *b)
{
    memset(b, 0, sizeof *b);
    b->rank = rank;
    b->coord[0] = rank / (o->dims[1] * o->dims[2]);
    b->coord[1] = rank / o->dims[2] % o->dims[1];
    b->coord[2] = rank % o->dims[2];
    for (int d = 0; d < 3; d++) {
        int N = o->grid[d], P = o->dims[d], c = b->coord[d];
        b->lo[d] = (int)((long)N * c / P);
        b->n[d] = (int)((long)N * (c + 1) / P) - b->lo[d];
        /* rows (k) padded, never read and never updated: on GPUs to 32 floats, so that every row starts on a
         * 128-byte line and a warp's loads along k (16-byte ones in the float4 kernel) are aligned; on CPUs
         * to 8 floats only (32-byte vectors aligned): the host kernel streams 14 arrays from memory, and rows
         * of 288 floats for M's 258 cost it 20-30% on the development machine (rows of 258-264 did not), the
         * gap to the original C+MPI Himeno, whose rows are unpadded */
        int pad = o->gpu ? 32 : 8;
        b->ext[d] = d == 2 ? (b->n[d] + 2 + pad - 1) / pad * pad : b->n[d] + 2;
        /* global interior points 1 .. N-2 only */
        int g0 = b->lo[d] > 1 ? b->lo[d] : 1, g1 = b->lo[d] + b->n[d] < N - 1 ? b->lo[d] + b->n[d] : N - 1;
        b->ub[d] = g0 - b->lo[d] + 1;
        b->ue[d] = g1 - b->lo[d] + 1;
        if (b->ue[d] < b->ub[d]) b->ue[d] = b->ub[d];
        for (int s = 0; s < 2; s++) {
            int cc = c + (s ? 1 : -1);
            if (cc < 0 || cc >= P) {
                b->nbr[d][s] = -1;
                continue;
            }
            int co[3] = {b->coord[0], b->coord[1], b->coord[2]};
            co[d] = cc;
            b->nbr[d][s] = (co[0] * o->dims[1] + co[1]) * o->dims[2] + co[2];
        }
    }
    b->vol = (size_t)b->ext[0] * b->ext[1] * b->ext[2];
    size_t f0 = (size_t)b->ext[1] * b->ext[2], f1 = (size_t)b->ext[0] * b->ext[2],
           f2 = (size_t)b->ext[0] * b->ext[1];
    b->slot = f0 > f1 ? f0 : f1;
    if (f2 > b->slot) b->slot = f2;
}

const char *hg_variant_name(int v)
{
    return v == HG_VAR_MPI ? "mpi" : "ky";
}
