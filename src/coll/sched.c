/* Schedule building blocks: a growing array of steps and the scratch sizes they need (coll.h). */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

void kyi_sched_free(kyi_sched_t *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

static kyi_step_t *add(kyi_sched_t *s)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        kyi_step_t *v = realloc(s->v, sizeof *v * (size_t)cap);
        if (!v) {
            s->nomem = 1;
            return NULL;
        }
        s->v = v;
        s->cap = cap;
    }
    kyi_step_t *st = &s->v[s->n++];
    memset(st, 0, sizeof *st);
    st->to = st->from = -1;
    return st;
}

void kyi_sched_need(kyi_sched_t *s, int buf, size_t bytes)
{
    if (buf == KYI_B_T && bytes > s->scratch[0]) s->scratch[0] = bytes;
    if (buf == KYI_B_U && bytes > s->scratch[1]) s->scratch[1] = bytes;
}

void kyi_sched_xchg(kyi_sched_t *s, int to, int sbuf, size_t soff, size_t slen, int from, int rbuf,
                    size_t roff, size_t rlen)
{
    kyi_step_t *st = add(s);
    if (!st) return;
    st->kind = KYI_STEP_XCHG;
    st->to = to;
    st->sbuf = (uint8_t)sbuf;
    st->soff = soff;
    st->slen = to >= 0 ? slen : 0;
    st->from = from;
    st->rbuf = (uint8_t)rbuf;
    st->roff = roff;
    st->rlen = from >= 0 ? rlen : 0;
    if (to >= 0) kyi_sched_need(s, sbuf, soff + slen);
    if (from >= 0) kyi_sched_need(s, rbuf, roff + rlen);
}

void kyi_sched_xchg_reduce(kyi_sched_t *s, int to, int sbuf, size_t soff, size_t slen, int from, int rbuf,
                           size_t roff, size_t rlen, int dbuf, size_t doff)
{
    kyi_sched_xchg(s, to, sbuf, soff, slen, from, rbuf, roff, rlen);
    if (s->nomem) return;
    kyi_step_t *st = &s->v[s->n - 1];
    st->reduce = 1;
    st->dbuf = (uint8_t)dbuf;
    st->doff = doff;
    kyi_sched_need(s, dbuf, doff + rlen);
}

void kyi_sched_copy(kyi_sched_t *s, int sbuf, size_t soff, int rbuf, size_t roff, size_t n)
{
    if (n == 0 || (sbuf == rbuf && soff == roff)) return;
    kyi_step_t *st = add(s);
    if (!st) return;
    st->kind = KYI_STEP_COPY;
    st->sbuf = (uint8_t)sbuf;
    st->soff = soff;
    st->slen = n;
    st->rbuf = (uint8_t)rbuf;
    st->roff = roff;
    kyi_sched_need(s, sbuf, soff + n);
    kyi_sched_need(s, rbuf, roff + n);
}

void kyi_sched_reduce(kyi_sched_t *s, int sbuf, size_t soff, int dbuf, size_t doff, size_t n)
{
    if (n == 0) return;
    kyi_step_t *st = add(s);
    if (!st) return;
    st->kind = KYI_STEP_REDUCE;
    st->sbuf = (uint8_t)sbuf;
    st->soff = soff;
    st->slen = n;
    st->dbuf = (uint8_t)dbuf;
    st->doff = doff;
    kyi_sched_need(s, sbuf, soff + n);
    kyi_sched_need(s, dbuf, doff + n);
}
