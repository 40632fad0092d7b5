/* GPU collectives, CPU-only build: no buffer is GPU memory, so coll_api.c never builds a GPU plan; these
 * exist for the linker and say why if reached. */
#include "coll/gpu/gcoll.h"
#include "runtime/log.h"

static int none(struct kyi_coll_plan *pl)
{
    return kyi_fail(KY_ERR_UNSUPPORTED, pl ? pl->call : "coll",
                    "GPU collectives: Kyoyu was built without CUDA");
}

int kyi_gcoll_is_gpu(const void *p)
{
    (void)p;
    return 0;
}
int kyi_gcoll_path(const char *call, struct kyi_team *t, int *path)
{
    (void)t;
    *path = KYI_GPATH_STAGED;
    return kyi_fail(KY_ERR_UNSUPPORTED, call, "GPU collectives: Kyoyu was built without CUDA");
}
int kyi_gcoll_allreduce(struct kyi_coll_plan *pl, const void *s, void *r, size_t n, int in_place, int root,
                        int persistent)
{
    (void)s;
    (void)r;
    (void)n;
    (void)in_place;
    (void)root;
    (void)persistent;
    return none(pl);
}
int kyi_gcoll_allgather(struct kyi_coll_plan *pl, const void *s, size_t b, void *r, int in_place,
                        int persistent)
{
    (void)s;
    (void)b;
    (void)r;
    (void)in_place;
    (void)persistent;
    return none(pl);
}
int kyi_gcoll_bcast(struct kyi_coll_plan *pl, void *buf, size_t bytes, int root)
{
    (void)buf;
    (void)bytes;
    (void)root;
    return none(pl);
}
int kyi_gcoll_start(struct kyi_coll_plan *pl, void *stream)
{
    (void)stream;
    return none(pl);
}
int kyi_gcoll_wait(struct kyi_coll_plan *pl)
{
    return none(pl);
}
int kyi_gcoll_release(struct kyi_coll_plan *pl)
{
    (void)pl;
    return KY_OK;
}
void kyi_gcoll_team_free(struct kyi_team *t)
{
    (void)t;
}
