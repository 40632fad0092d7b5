/* ky_stencil_offload's device side: seed 000 Figs. 9-11 and Appendix 1 with include/kyoyu/offload.h's
 * macros, so one source is OpenACC, OpenMP target, host OpenMP or serial by KY_OFFLOAD_BACKEND.
 *
 * A rank's slab [st, ed) is cut into one block of planes per device thread [own0, own1); the thread holds
 * planes [lo, hi) = [own0 - bt, own1 + bt) clipped to the grid and computes, at step tt of a block counting
 * down, planes [own0 - tt, own1 + tt) (ky_stencil's temporal blocking). Where a device is the rank's alone,
 * its data region maps the global arrays themselves, as the seed does; where two threads share a device
 * (the host on the CPU back ends, or more threads than GPUs), their held planes overlap, so each maps
 * private copies and the updates also copy between them and the global space.
 *
 * DSM intervals (Appendix 1 with the promises of docs/dsm.md): the rank's remote halos of both arrays are
 * preloaded read-write once; computing and KY_UPDATE_HOST of own planes happen after ky_sync_nofetch (no
 * fetches), overload and KY_UPDATE_DEVICE after ky_sync_nostore (no home stores). */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <kyoyu/offload.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if KY_OFFLOAD_BACKEND_ID <= 2
#include <openacc.h>
#endif

#include "offload_stencil.h"

typedef struct {
    int own0, own1, lo, hi; /* planes owned; planes held */
    int dev;                /* device number, -1: the host */
    size_t zoff;            /* plane z of array k is img[k] + (z - zoff) * plane */
    double *img[2];         /* what the data region maps: A and B, or private copies of [lo, hi) */
    double *dptr[2];        /* device addresses of plane lo of img (p2p) */
} so_dev_t;

/* What the device threads share in one run. */
typedef struct {
    const st_params_t *p;
    const so_devs_t *dv;
    so_dev_t *devs;
    double *glob[2]; /* A and B */
    int direct;      /* p2p between this rank's devices */
    int dblock;      /* planes per device (the last may have fewer, or none) */
    int status;      /* the first failure */
    int cur;         /* the array holding the result */
    double t0, t1;
} so_ctx_t;

/* The seed's all-threads, all-ranks synchronisation (Appendix 2): barrier, thread 0 calls, barrier. */
static void collective(so_ctx_t *c, int (*call)(void))
{
    so_team_barrier();
    if (so_team_me() == 0) {
        int s = call();
        if (s != KY_OK && c->status == KY_OK) c->status = s;
    }
    so_team_barrier();
}

/* the loop shape (--shape): flat, one collapsed loop over the planes' points; or the z-y rows in parallel
 * and x on the lanes (KY_OFFLOAD_INNER) with the compiler's levels (rows), one warp per row (warps: OpenACC
 * gang worker, 32 lanes, 8 workers; the default) or one block per row (gang: 128 lanes); or one block per
 * row with x on its threads (team: KY_OFFLOAD_TEAMS, KY_OFFLOAD_THREADS); or the y-x columns on the threads,
 * each walking its planes with the column's values below, at and above in registers (zstream), as
 * examples/offload's kernels (docs/offload.md) */
static const char *const shape_names[] = {"flat", "rows", "warps", "gang", "team", "zstream"};
enum { SO_FLAT, SO_ROWS, SO_WARPS, SO_GANG, SO_TEAM, SO_ZSTREAM, SO_NSHAPES };
static int shape = SO_WARPS;
int so_set_shape(const char *name)
{
    for (int i = 0; i < SO_NSHAPES; i++)
        if (!strcmp(name, shape_names[i])) return shape = i, 0;
    return -1;
}
const char *so_shape(void)
{
    return shape_names[shape];
}

const char *so_backend(void)
{
    return KY_OFFLOAD_BACKEND_NAME;
}

void so_devices(int want, so_devs_t *dv)
{
    memset(dv, 0, sizeof *dv);
#if KY_OFFLOAD_BACKEND_ID <= 2
    dv->ndev = acc_get_num_devices(acc_device_not_host);
#elif KY_OFFLOAD_BACKEND_ID <= 4
    dv->ndev = omp_get_num_devices();
#endif
    int per = dv->ndev / ST_MAX(ky_local_nranks(), 1);
    dv->devices = want > 0 ? want : ST_MAX(per, 1);
    dv->devices = ST_MIN(dv->devices, so_team_max());
    dv->first = dv->ndev > 0 ? ky_local_rank() * dv->devices % dv->ndev : 0;
    dv->shared = dv->devices > ST_MAX(dv->ndev, 1);
}

static int select_device(const so_devs_t *dv, int tid)
{
    if (dv->ndev <= 0) return -1;
    int dev = (dv->first + tid) % dv->ndev;
#if KY_OFFLOAD_BACKEND_ID <= 2
    acc_set_device_num(dev, acc_device_not_host);
#elif KY_OFFLOAD_BACKEND_ID <= 4
    omp_set_default_device(dev);
#endif
    return dev;
}

/* the rank's remote halos (bt planes each side, clipped) of u: preload (read-write) or overload */
static int halos(int overload, double *u, const st_params_t *p)
{
    size_t glb[3] = {(size_t)p->nz, (size_t)p->ny, (size_t)p->nx};
    int lo = ST_MAX(p->st - p->bt, 0), hi = ST_MIN(p->ed + p->bt, p->nz), s = KY_OK;
    int z0[2] = {lo, p->ed}, n[2] = {p->st - lo, hi - p->ed};
    for (int i = 0; i < 2 && s == KY_OK; i++) {
        if (p->st >= p->ed || n[i] <= 0) continue;
        size_t reg[3] = {(size_t)n[i], (size_t)p->ny, (size_t)p->nx};
        double *b = u + (size_t)z0[i] * p->plane;
        s = overload ? ky_overload_array(b, glb, reg, 3, sizeof(double), 1)
                     : ky_preload_array(b, glb, reg, 3, sizeof(double), 1);
    }
    return s;
}

/* clang-format would write the array sections a[o:n] as "a [o:n]" */
/* clang-format off */
/* planes [z0, z1) of array k: device -> host image, then into the global array g if the image is private */
static void to_host(const st_params_t *p, const so_dev_t *d, double *g, int k, int z0, int z1)
{
    if (z0 >= z1) return;
    double *s = d->img[k];
    size_t o = ((size_t)z0 - d->zoff) * p->plane, n = (size_t)(z1 - z0) * p->plane;
    KY_UPDATE_HOST(s[o:n])
    if (s != g) memcpy(g + (size_t)z0 * p->plane, s + o, n * sizeof *s);
}

static void to_device(const st_params_t *p, const so_dev_t *d, const double *g, int k, int z0, int z1)
{
    if (z0 >= z1) return;
    double *s = d->img[k];
    size_t o = ((size_t)z0 - d->zoff) * p->plane, n = (size_t)(z1 - z0) * p->plane;
    if (s != g) memcpy(s + o, g + (size_t)z0 * p->plane, n * sizeof *s);
    KY_UPDATE_DEVICE(s[o:n])
}

static void data_enter(const st_params_t *p, so_dev_t *d)
{
    size_t o = ((size_t)d->lo - d->zoff) * p->plane, n = (size_t)(d->hi - d->lo) * p->plane;
    double *a = d->img[0], *b = d->img[1];
    KY_DATA_ENTER(KY_OPT_COPYIN(a[o:n], b[o:n]))
    (void)n;
    a += o, b += o;
    KY_USE_DEVICE_PTR(a, b)
    {
        d->dptr[0] = a, d->dptr[1] = b;
    }
}

static void data_exit(const st_params_t *p, so_dev_t *d)
{
    size_t o = ((size_t)d->lo - d->zoff) * p->plane, n = (size_t)(d->hi - d->lo) * p->plane;
    double *a = d->img[0], *b = d->img[1];
    KY_DATA_EXIT(KY_OPT_DELETE(a[o:n], b[o:n]))
    (void)o, (void)n, (void)a, (void)b; /* named in the directive only (none on host back ends) */
}

/* one point c of s into t, terms added as kernel.c and st_reference do; yn and zn the row and plane strides */
#define SO_POINT7(s, t, c_)                                                                                  \
    do {                                                                                                     \
        const size_t c = (c_);                                                                               \
        t[c] = 0.4 * s[c] + 0.1 * (s[c - zn] + s[c + zn] + s[c - yn] + s[c + yn] + s[c - 1] + s[c + 1]);    \
    } while (0)
#define SO_POINT27(s, t, c_)                                                                                 \
    do {                                                                                                     \
        const size_t c = (c_), m = c - zn, q = c + zn;                                                       \
        double f = s[c - 1] + s[c + 1] + s[c - yn] + s[c + yn] + s[m] + s[q];                                \
        double e = s[c - yn - 1] + s[c - yn + 1] + s[c + yn - 1] + s[c + yn + 1] + s[m - 1] + s[m + 1] +     \
                   s[q - 1] + s[q + 1] + s[m - yn] + s[m + yn] + s[q - yn] + s[q + yn];                      \
        double kk = s[m - yn - 1] + s[m - yn + 1] + s[m + yn - 1] + s[m + yn + 1] + s[q - yn - 1] +          \
                    s[q - yn + 1] + s[q + yn - 1] + s[q + yn + 1];                                           \
        t[c] = 0.3 * s[c] + 0.05 * f + 0.025 * e + 0.0125 * kk;                                              \
    } while (0)

/* the row shapes: the z-y rows of planes [z0, z1) in parallel as the clauses say, x on the lanes (OUTER,
 * INNER: KY_OFFLOAD, KY_OFFLOAD_INNER) or on the threads of the row's block (KY_OFFLOAD_TEAMS, _THREADS) */
#define SO_ROWS_LOOP(POINT, OUTER, INNER, ...)                                                              \
    OUTER(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_PRESENT(s[o:n], t[o:n]), __VA_ARGS__)             \
    for (int z = z0; z < z1; z++)                                                                          \
        for (int y = 1; y < ny - 1; y++) {                                                                 \
            INNER()                                                                                        \
            for (int x = 1; x < nx - 1; x++) POINT(s, t, ((size_t)z - zoff) * zn + (size_t)y * yn + (size_t)x); \
        }

/* zstream: the y-x columns on the threads, each walking planes [z0, z1) with its column's values of the
 * planes below, at and above in registers (zm, zc, zp); POINT writes t[c] from them and s, the terms in
 * SO_POINT7's / SO_POINT27's order */
#define SO_ZSTREAM_LOOP(POINT)                                                                                  \
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_PRESENT(s[o:n], t[o:n]), KY_OPT_NUM(128))    \
    for (int y = 1; y < ny - 1; y++)                                                                       \
        for (int x = 1; x < nx - 1; x++) {                                                                 \
            size_t c = ((size_t)z0 - zoff) * zn + (size_t)y * yn + (size_t)x;                              \
            double zm = s[c - zn], zc = s[c];                                                              \
            for (int z = z0; z < z1; z++, c += zn) {                                                       \
                double zp = s[c + zn];                                                                     \
                POINT;                                                                                     \
                zm = zc;                                                                                   \
                zc = zp;                                                                                   \
            }                                                                                              \
        }
#define SO_ZPOINT7 t[c] = 0.4 * zc + 0.1 * (zm + zp + s[c - yn] + s[c + yn] + s[c - 1] + s[c + 1])
#define SO_ZPOINT27                                                                                        \
    do {                                                                                                   \
        const size_t m = c - zn, q = c + zn;                                                               \
        double f = s[c - 1] + s[c + 1] + s[c - yn] + s[c + yn] + zm + zp;                                  \
        double e = s[c - yn - 1] + s[c - yn + 1] + s[c + yn - 1] + s[c + yn + 1] + s[m - 1] + s[m + 1] +   \
                   s[q - 1] + s[q + 1] + s[m - yn] + s[m + yn] + s[q - yn] + s[q + yn];                    \
        double kk = s[m - yn - 1] + s[m - yn + 1] + s[m + yn - 1] + s[m + yn + 1] + s[q - yn - 1] +        \
                    s[q - yn + 1] + s[q + yn - 1] + s[q + yn + 1];                                         \
        t[c] = 0.3 * zc + 0.05 * f + 0.025 * e + 0.0125 * kk;                                              \
    } while (0)

/* one step on planes [z0, z1) from array k into 1 - k, terms added as kernel.c and st_reference do */
static void step(const st_params_t *p, const so_dev_t *d, int k, int z0, int z1)
{
    const double *s = d->img[k];
    double *t = d->img[1 - k];
    size_t o = ((size_t)d->lo - d->zoff) * p->plane, n = (size_t)(d->hi - d->lo) * p->plane;
    const size_t yn = (size_t)p->nx, zn = p->plane, zoff = d->zoff;
    const int ny = p->ny, nx = p->nx;
    (void)o, (void)n;
    if (z0 >= z1) return; /* (zstream loads the plane below z0 before its loop) */
    if (p->points == 27) {
        switch (shape) {
        case SO_ROWS: SO_ROWS_LOOP(SO_POINT27, KY_OFFLOAD, KY_OFFLOAD_INNER, KY_OPT_NUM(128)) return;
        case SO_WARPS: SO_ROWS_LOOP(SO_POINT27, KY_OFFLOAD, KY_OFFLOAD_INNER, KY_OPT_GANG, KY_OPT_WORKER, KY_OPT_NUM(32), KY_OPT_NUM_WORKERS(8)) return;
        case SO_GANG: SO_ROWS_LOOP(SO_POINT27, KY_OFFLOAD, KY_OFFLOAD_INNER, KY_OPT_GANG, KY_OPT_NUM(128)) return;
        case SO_TEAM: SO_ROWS_LOOP(SO_POINT27, KY_OFFLOAD_TEAMS, KY_OFFLOAD_THREADS, KY_OPT_NUM(128)) return;
        case SO_ZSTREAM: SO_ZSTREAM_LOOP(SO_ZPOINT27) return;
        }
        KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(3), KY_OPT_PRESENT(s[o:n], t[o:n]), KY_OPT_NUM(128))
        for (int z = z0; z < z1; z++)
            for (int y = 1; y < ny - 1; y++)
                for (int x = 1; x < nx - 1; x++) SO_POINT27(s, t, ((size_t)z - zoff) * zn + (size_t)y * yn + (size_t)x);
        return;
    }
    switch (shape) {
    case SO_ROWS: SO_ROWS_LOOP(SO_POINT7, KY_OFFLOAD, KY_OFFLOAD_INNER, KY_OPT_NUM(128)) return;
    case SO_WARPS: SO_ROWS_LOOP(SO_POINT7, KY_OFFLOAD, KY_OFFLOAD_INNER, KY_OPT_GANG, KY_OPT_WORKER, KY_OPT_NUM(32), KY_OPT_NUM_WORKERS(8)) return;
    case SO_GANG: SO_ROWS_LOOP(SO_POINT7, KY_OFFLOAD, KY_OFFLOAD_INNER, KY_OPT_GANG, KY_OPT_NUM(128)) return;
    case SO_TEAM: SO_ROWS_LOOP(SO_POINT7, KY_OFFLOAD_TEAMS, KY_OFFLOAD_THREADS, KY_OPT_NUM(128)) return;
    case SO_ZSTREAM: SO_ZSTREAM_LOOP(SO_ZPOINT7) return;
    }
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(3), KY_OPT_PRESENT(s[o:n], t[o:n]), KY_OPT_NUM(128))
    for (int z = z0; z < z1; z++)
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++) SO_POINT7(s, t, ((size_t)z - zoff) * zn + (size_t)y * yn + (size_t)x);
}

/* n doubles between device addresses of one device (Fig. 11's GPU-to-GPU copy; the seed's is CUDA) */
static void dev_copy(double *dst, const double *src, size_t n, int dev)
{
#if KY_OFFLOAD_BACKEND_ID <= 2
    /* GCC 12 has no acc_memcpy_device: a copy loop on the device addresses (scalars: passed by value) */
    (void)dev;
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_NUM(128))
    for (size_t i = 0; i < n; i++) dst[i] = src[i];
#elif KY_OFFLOAD_BACKEND_ID <= 4
    int on = dev >= 0 ? dev : omp_get_initial_device();
    omp_target_memcpy(dst, (void *)src, n * sizeof *src, 0, 0, on, on);
#else
    (void)dev;
    memcpy(dst, src, n * sizeof *src);
#endif
}
/* clang-format on */

/* Own planes others read through the global space: those within bt of a boundary that other devices (direct:
 * other ranks) read across; up to two ranges, merged where they meet. */
static void boundary_to_host(const st_params_t *p, const so_dev_t *d, double *g, int k, int direct)
{
    int b0 = direct ? p->st : d->own0, b1 = direct ? p->ed : d->own1;
    int l0 = ST_MAX(b0, d->own0), l1 = b0 > 0 ? ST_MIN(b0 + p->bt, d->own1) : l0;
    int h1 = ST_MIN(b1, d->own1), h0 = b1 < p->nz ? ST_MAX(b1 - p->bt, d->own0) : h1;
    if (l0 < l1 && h0 < h1 && l1 >= h0) {
        to_host(p, d, g, k, ST_MIN(l0, h0), ST_MAX(l1, h1));
    } else {
        to_host(p, d, g, k, l0, l1);
        to_host(p, d, g, k, h0, h1);
    }
}

/* Halo planes [z0, z1) of thread me: the part inside this rank's slab from the devices that own it (direct),
 * the rest from the global space. */
static void halo_to_device(const st_params_t *p, const so_dev_t *devs, int me, int dblock, const double *g,
                           int k, int z0, int z1, int direct)
{
    const so_dev_t *d = &devs[me];
    int r0 = z1, r1 = z1; /* the part that comes device to device */
    if (direct && ST_MAX(z0, p->st) < ST_MIN(z1, p->ed)) r0 = ST_MAX(z0, p->st), r1 = ST_MIN(z1, p->ed);
    to_device(p, d, g, k, z0, r0);
    for (int z = r0; z < r1;) {
        const so_dev_t *h = &devs[(z - p->st) / dblock];
        int e = ST_MIN(r1, h->own1);
        dev_copy(d->dptr[k] + (size_t)(z - d->lo) * p->plane, h->dptr[k] + (size_t)(z - h->lo) * p->plane,
                 (size_t)(e - z) * p->plane, d->dev);
        z = e;
    }
    to_device(p, d, g, k, r1, z1);
}

static void device_thread(void *arg)
{
    so_ctx_t *c = arg;
    const st_params_t *p = c->p;
    int me = so_team_me(), mine = KY_OK, k = 0;
    so_dev_t *d = &c->devs[me];
    double **glob = c->glob;
    d->own0 = ST_MIN(p->st + me * c->dblock, p->ed), d->own1 = ST_MIN(d->own0 + c->dblock, p->ed);
    d->lo = d->own0 < d->own1 ? ST_MAX(d->own0 - p->bt, 0) : d->own0;
    d->hi = d->own0 < d->own1 ? ST_MIN(d->own1 + p->bt, p->nz) : d->own0;
    d->dev = select_device(c->dv, me);
    size_t held = (size_t)(d->hi - d->lo) * p->plane;
    /* App. 1 (1): the remote halos of both arrays, read-write, before any device copies them in */
    if (me == 0) {
        int s = halos(0, glob[0], p);
        if (s == KY_OK) s = halos(0, glob[1], p);
        if (s != KY_OK) c->status = s;
    }
    so_team_barrier();
    for (int i = 0; i < 2 && mine == KY_OK; i++) {
        d->img[i] = glob[i], d->zoff = 0;
        if (c->dv->shared && held > 0) {
            d->img[i] = malloc(held * sizeof(double));
            d->zoff = (size_t)d->lo;
            if (d->img[i] == NULL)
                mine = KY_ERR_NOMEM;
            else
                memcpy(d->img[i], glob[i] + (size_t)d->lo * p->plane, held * sizeof(double));
        }
    }
    if (mine != KY_OK) __atomic_store_n(&c->status, mine, __ATOMIC_RELAXED);
    int entered = held > 0 && mine == KY_OK;
    if (entered) data_enter(p, d);
    collective(c, ky_sync_nofetch); /* all data on the devices; computing fetches nothing */
    if (me == 0) c->t0 = MPI_Wtime();
    for (int t = 0; t < p->nt && c->status == KY_OK; t += p->bt) {
        int nb = ST_MIN(p->bt, p->nt - t);
        for (int tt = nb - 1; tt >= 0; tt--) {
            int z0 = ST_MAX(d->own0 - tt, 1), z1 = ST_MIN(d->own1 + tt, p->nz - 1);
            if (entered && z0 < z1) step(p, d, k, z0, z1);
            k = 1 - k;
        }
        if (t + nb >= p->nt) break;
        /* Fig. 10 <2>: boundary planes to the global space; everyone done; remote halos overloaded; halo
         * planes to the devices (or device to device, Fig. 11); everyone done */
        if (entered) boundary_to_host(p, d, glob[k], k, c->direct);
        collective(c, ky_sync_nostore);
        if (me == 0) {
            int s = halos(1, glob[k], p);
            if (s != KY_OK) c->status = s;
        }
        so_team_barrier();
        if (entered) {
            halo_to_device(p, c->devs, me, c->dblock, glob[k], k, d->lo, d->own0, c->direct);
            halo_to_device(p, c->devs, me, c->dblock, glob[k], k, d->own1, d->hi, c->direct);
        }
        collective(c, ky_sync_nofetch);
    }
    so_team_barrier(); /* the loops wait for their kernels (no async): all steps are done */
    if (me == 0) c->t1 = MPI_Wtime(), c->cur = k; /* untimed from here, as ky_stencil_gpu's runs */
    if (entered) to_host(p, d, glob[k], k, d->own0, d->own1); /* the result's planes (Fig. 10 line 63) */
    if (entered) data_exit(p, d);
    for (int i = 0; i < 2; i++)
        if (d->img[i] != glob[i]) free(d->img[i]);
    /* the cached halos, with the redundant writes, go before anyone reads the result */
    collective(c, ky_sync_drop);
}

int so_run(int variant, const st_params_t *p, const so_devs_t *dv, double *A, double *B, double *time_s,
           double **result)
{
    so_ctx_t c = {p, dv, calloc((size_t)dv->devices, sizeof(so_dev_t)), {A, B}, 0, 0, KY_OK, 0, 0, 0};
    if (c.devs == NULL) return KY_ERR_NOMEM;
    c.direct = variant == SO_P2P && dv->ndev <= 1; /* one device per rank: its threads' copies are there */
    c.dblock = (p->ed - p->st + dv->devices - 1) / dv->devices;
    int got = so_team_run(dv->devices, device_thread, &c);
    free(c.devs);
    if (got != dv->devices) {
        /* a device thread missing would leave its planes undone (wrong results, then a crash) */
        fprintf(
            stderr,
            "ky_stencil_offload: rank %d: %d device threads needed, OpenMP started %d (OMP_DYNAMIC, nested "
            "regions?): not run\n",
            p->rank, dv->devices, got);
        return KY_ERR_UNSUPPORTED;
    }
    *time_s = c.t1 - c.t0;
    *result = c.glob[c.cur];
    return c.status;
}
