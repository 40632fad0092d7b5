/* Bulk data on the MPI path: n bytes as ceil(n / chunk) messages. Host memory is sent and received in
 * place; GPU memory is staged through pinned host buffers, `KY_STAGE_DEPTH` chunks in flight, so the copy
 * of one chunk overlaps the network transfer of the previous ones. */
#include <stdlib.h>
#include <string.h>

#include "comm/mpi/bulk.h"
#include "comm/mpi/mpi.h"

/* Pool of pinned staging buffers of kyi_comm.stage_chunk bytes each. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static void **pool;
static int pool_n, pool_cap;

static int stage_get(const char *call, void **buf)
{
    pthread_mutex_lock(&pool_lock);
    if (pool_n > 0) {
        *buf = pool[--pool_n];
        pthread_mutex_unlock(&pool_lock);
        return KY_OK;
    }
    pthread_mutex_unlock(&pool_lock);
    int st = kyi_gpu_host_alloc(kyi_comm.stage_chunk, buf);
    if (st) return kyi_fail(st, call, "no pinned staging buffer of %zu bytes", kyi_comm.stage_chunk);
    return KY_OK;
}

static void stage_put(void *buf)
{
    pthread_mutex_lock(&pool_lock);
    if (pool_n == pool_cap) {
        int cap = pool_cap ? 2 * pool_cap : 16;
        void **p = realloc(pool, sizeof(void *) * cap);
        if (!p) {
            pthread_mutex_unlock(&pool_lock);
            kyi_gpu_host_free(buf);
            return;
        }
        pool = p;
        pool_cap = cap;
    }
    pool[pool_n++] = buf;
    pthread_mutex_unlock(&pool_lock);
}

void kyi_bulk_pool_free(void)
{
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < pool_n; i++) kyi_gpu_host_free(pool[i]);
    free(pool);
    pool = NULL;
    pool_n = pool_cap = 0;
    pthread_mutex_unlock(&pool_lock);
}

size_t kyi_bulk_chunk(int local_dev, int remote_is_gpu)
{
    /* Host to host: as few messages as MPI's int count allows. */
    if (local_dev < 0 && !remote_is_gpu) return (size_t)1 << 30;
    return kyi_comm.stage_chunk;
}

size_t kyi_bulk_nchunks(size_t n, size_t chunk)
{
    return n == 0 ? 0 : (n + chunk - 1) / chunk;
}

int kyi_bulk_post_host(int send, void *buf, size_t n, size_t chunk, int peer, int tag, MPI_Comm c,
                       MPI_Request *reqs)
{
    size_t k = kyi_bulk_nchunks(n, chunk);
    for (size_t i = 0; i < k; i++) {
        size_t len = (i + 1 == k) ? n - i * chunk : chunk;
        int rc = send ? MPI_Isend((char *)buf + i * chunk, (int)len, MPI_BYTE, peer, tag, c, &reqs[i])
                      : MPI_Irecv((char *)buf + i * chunk, (int)len, MPI_BYTE, peer, tag, c, &reqs[i]);
        if (rc != MPI_SUCCESS) return KY_ERR_MPI;
    }
    return KY_OK;
}

static int bulk_host(const char *call, int send, void *buf, size_t n, size_t chunk, int peer, int tag,
                     MPI_Comm c)
{
    size_t k = kyi_bulk_nchunks(n, chunk);
    if (!k) return KY_OK;
    MPI_Request one, *reqs = k == 1 ? &one : malloc(sizeof(MPI_Request) * k);
    if (!reqs) return kyi_fail(KY_ERR_NOMEM, call, "no memory for %zu requests", k);
    int st = kyi_bulk_post_host(send, buf, n, chunk, peer, tag, c, reqs);
    if (st)
        st = kyi_fail(st, call, "posting %zu bulk messages to rank %d failed", k, peer);
    else
        st = kyi_wait_reqs(call, peer, (int)k, reqs);
    if (reqs != &one) free(reqs);
    return st;
}

/* The pipeline of a staged transfer of k chunks: min(KY_STAGE_DEPTH, 64, k) pinned buffers, requests
 * null. *got says how many buffers to give back, even on failure. */
static int stage_setup(const char *call, size_t k, void **bufs, MPI_Request *reqs, int *depth, int *got)
{
    int d = kyi_comm.stage_depth;
    if (d > 64) d = 64;
    if ((size_t)d > k) d = (int)k;
    *depth = d;
    for (*got = 0; *got < d; (*got)++) {
        KYI_CHECK(stage_get(call, &bufs[*got]));
        reqs[*got] = MPI_REQUEST_NULL;
    }
    return KY_OK;
}

int kyi_bulk_send(const char *call, const void *src, int src_dev, size_t n, size_t chunk, int peer, int tag,
                  MPI_Comm c)
{
    if (src_dev < 0) return bulk_host(call, 1, (void *)src, n, chunk, peer, tag, c);
    size_t k = kyi_bulk_nchunks(n, chunk);
    void *bufs[64];
    MPI_Request reqs[64];
    int depth, got;
    int st = stage_setup(call, k, bufs, reqs, &depth, &got);
    if (st) goto out;
    for (size_t i = 0; i < k; i++) {
        int slot = (int)(i % depth);
        size_t len = (i + 1 == k) ? n - i * chunk : chunk;
        if ((st = kyi_wait_reqs(call, peer, 1, &reqs[slot]))) goto out;
        if ((st = kyi_gpu_copy(src_dev, bufs[slot], (const char *)src + i * chunk, len))) {
            st = kyi_fail(st, call, "staging %zu bytes from GPU %d: %s", len, src_dev, kyi_gpu_last_error());
            goto out;
        }
        if (MPI_Isend(bufs[slot], (int)len, MPI_BYTE, peer, tag, c, &reqs[slot]) != MPI_SUCCESS) {
            st = kyi_fail(KY_ERR_MPI, call, "MPI_Isend of a staged chunk to rank %d failed", peer);
            goto out;
        }
        atomic_fetch_add_explicit(&kyi_stats.staged_chunks, 1, memory_order_relaxed);
    }
    st = kyi_wait_reqs(call, peer, depth, reqs);
out:
    for (int i = 0; i < got; i++) stage_put(bufs[i]);
    return st;
}

int kyi_bulk_recv(const char *call, void *dst, int dst_dev, size_t n, size_t chunk, int peer, int tag,
                  MPI_Comm c)
{
    if (dst_dev < 0) return bulk_host(call, 0, dst, n, chunk, peer, tag, c);
    size_t k = kyi_bulk_nchunks(n, chunk);
    void *bufs[64];
    MPI_Request reqs[64];
    int depth, got;
    int st = stage_setup(call, k, bufs, reqs, &depth, &got);
    if (st) goto out;
    for (size_t i = 0; i < (size_t)depth; i++) {
        size_t len = (i + 1 == k) ? n - i * chunk : chunk;
        MPI_Irecv(bufs[i], (int)len, MPI_BYTE, peer, tag, c, &reqs[i]);
    }
    for (size_t i = 0; i < k; i++) {
        int slot = (int)(i % depth);
        size_t len = (i + 1 == k) ? n - i * chunk : chunk;
        if ((st = kyi_wait_reqs(call, peer, 1, &reqs[slot]))) goto out;
        if ((st = kyi_gpu_copy(dst_dev, (char *)dst + i * chunk, bufs[slot], len))) {
            st = kyi_fail(st, call, "unstaging %zu bytes to GPU %d: %s", len, dst_dev, kyi_gpu_last_error());
            goto out;
        }
        atomic_fetch_add_explicit(&kyi_stats.staged_chunks, 1, memory_order_relaxed);
        size_t next = i + depth;
        if (next < k) {
            size_t nlen = (next + 1 == k) ? n - next * chunk : chunk;
            MPI_Irecv(bufs[slot], (int)nlen, MPI_BYTE, peer, tag, c, &reqs[slot]);
        }
    }
out:
    for (int i = 0; i < got; i++) stage_put(bufs[i]);
    return st;
}

int kyi_bulk_discard(const char *call, size_t n, size_t chunk, int peer, int tag, MPI_Comm c)
{
    size_t k = kyi_bulk_nchunks(n, chunk);
    void *tmp = malloc(chunk < n ? chunk : (n ? n : 1));
    if (!tmp) return kyi_fail(KY_ERR_NOMEM, call, "no memory to drain %zu bytes", n);
    int st = KY_OK;
    for (size_t i = 0; i < k && !st; i++) {
        size_t len = (i + 1 == k) ? n - i * chunk : chunk;
        MPI_Request r;
        MPI_Irecv(tmp, (int)len, MPI_BYTE, peer, tag, c, &r);
        st = kyi_wait_reqs(call, peer, 1, &r);
    }
    free(tmp);
    return st;
}
