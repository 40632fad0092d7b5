/* The UCX transport when Kyoyu is built without UCX (CMake builds this file instead of the rest of ucx/):
 * KY_TRANSPORT=ucx is refused at ky_init, auto means MPI. */
#include "comm/chan_impl.h"
#include "comm/transport.h"

int kyi_ucx_built(void)
{
    return 0;
}

int kyi_ucx_open(const kyi_transport_t **out)
{
    *out = NULL;
    return kyi_fail(KY_ERR_UNSUPPORTED, "ky_init", "rank %d: Kyoyu was built without UCX", kyi_rt.rank);
}

/* the channel on UCX: never chosen without UCX (kyi_chan_on_ucx stays 0) */
static int no_ucx(const char *call)
{
    return kyi_fail(KY_ERR_UNSUPPORTED, call, "Kyoyu was built without UCX");
}
int kyi_ucx_chan_group(const char *call, int n, const int *world, kyi_chan_t **out)
{
    (void)n, (void)world;
    *out = NULL;
    return no_ucx(call);
}
void kyi_ucx_chan_free(kyi_chan_t *c)
{
    (void)c;
}
int kyi_ucx_chan_irecv(const char *call, kyi_chan_t *c, int peer, int tag, void *buf, size_t cap,
                       kyi_chan_req_t *r)
{
    (void)c, (void)peer, (void)tag, (void)buf, (void)cap, (void)r;
    return no_ucx(call);
}
int kyi_ucx_chan_isend(const char *call, kyi_chan_t *c, int peer, int tag, const void *buf, size_t n,
                       kyi_chan_req_t *r)
{
    (void)c, (void)peer, (void)tag, (void)buf, (void)n, (void)r;
    return no_ucx(call);
}
int kyi_ucx_chan_test(const char *call, kyi_chan_req_t *r, int *done)
{
    (void)r;
    *done = 1;
    return no_ucx(call);
}
void kyi_ucx_chan_cancel(kyi_chan_req_t *r)
{
    (void)r;
}
int kyi_ucx_chan_reply(int dest, int tag, const void *buf, size_t n, void (*release)(void *), void *ctx)
{
    (void)dest, (void)tag, (void)buf, (void)n, (void)release, (void)ctx;
    return no_ucx("kyi_chan_reply");
}
int kyi_ucx_chan_flush(void)
{
    return 0;
}
