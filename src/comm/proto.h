/* Internal: the wire protocol of the MPI path. A request is one message on kyi_mpi.req: a header followed,
 * for small payloads, by the payload itself ("eager"). Larger payloads follow as chunk messages on
 * kyi_mpi.data with the request's tag; answers (status, data) come back on kyi_mpi.rep with that tag.
 * Chunks are at most hdr.chunk bytes so both sides agree where messages begin and end. The header is also
 * every transport's active-message header (ucx/ucx_am.c sends it as UCP's). */
#ifndef KYI_COMM_PROTO_H
#define KYI_COMM_PROTO_H

#include <stdint.h>
#include "kyoyu/comm.h"

enum {
    KYI_OP_PUT = 1,     /* write n bytes at off; ack */
    KYI_OP_GET,         /* read n bytes at off; status then data */
    KYI_OP_MEMSET,      /* aux = byte; ack */
    KYI_OP_PUT_STRIDED, /* packed payload unpacked at off with args = dst strides, counts; ack */
    KYI_OP_GET_STRIDED, /* packed at the target with args = src strides, counts; status then data */
    KYI_OP_AM,          /* active message: handler, args, payload (medium or long) */
    KYI_OP_STOP         /* progress thread: leave (sent by a rank to itself at finalize) */
};

enum {
    KYI_F_EAGER = 1,   /* payload follows the header in the same message */
    KYI_F_REPLY = 2,   /* AM: this is a reply */
    KYI_F_LONG = 4,    /* AM: payload goes into segment `seg` at `off` */
    KYI_F_PLACED = 8,  /* AM long: payload already written by the initiator (shm/IPC) */
    KYI_F_MEDIUM = 16, /* AM: payload delivered in a temporary buffer */
    KYI_F_ACK = 32     /* send a status back on rep/tag */
};

typedef struct {
    uint16_t op;
    uint8_t flags;
    uint8_t nargs;
    uint16_t handler;
    uint16_t levels;
    uint32_t seg;
    uint32_t tag;
    uint64_t off;
    uint64_t n;     /* payload bytes */
    uint64_t chunk; /* bulk chunk size */
    uint64_t aux;
    uint64_t args[KY_AM_MAX_ARGS];
} kyi_hdr_t;

/* Strided descriptors travel in args: [0..2] strides, [3..6] counts. */
#define KYI_ARG_STRIDE 0
#define KYI_ARG_COUNT 3

#endif
