/*
 * conn_int.h — what the two files of the CDP connection share (cdp/ only):
 * conn.c (lifecycle, pending calls, outgoing) and conn_recv.c (receiving,
 * targets, events). Not for other modules or tests: cdp/cdp.h is the API.
 */
#ifndef CDPGATE_CONN_INT_H
#define CDPGATE_CONN_INT_H

#include "cdp/cdp_int.h"

#define MAX_LISTENERS 16

typedef struct {
    uint64_t id;
    char *method;
    char *session;
    int state;                  /* 0 waiting, 1 replied, 2 failed */
    bool discard;               /* forgotten: drop the reply when it comes */
    bool secret;                /* cdp_send_secret: the reply is zeroed */
    bool rt;                    /* it started a round trip (cdp_round_trips) */
    cdp_sink_fn sink;           /* the reply's result goes here, not into doc */
    void *sink_ud;
    json_doc *doc;
    int code;
    int protocol_code;
    char *msg;
} pending;

typedef struct {
    uint64_t seq;
    char *session;
    char *method;
    json_doc *doc;              /* NULL once taken by a waiter */
    size_t bytes;
} ring_event;

typedef struct {
    char *session_id, *target_id, *type, *url, *context_id, *parent_session;
} target_rec;

/* A message being received in pieces (see "messages in pieces" below). */
enum { IN_PREFIX, IN_SINK, IN_BUFFER, IN_SKIP };
enum { K_NONE, K_ID, K_RESULT, K_ERROR, K_OTHER };

typedef struct {
    bool active;                /* between the first and the last piece */
    int mode;                   /* IN_* */
    json_stream *js;            /* created on first use, reset per message */
    char *raw;                  /* the message's bytes, while they may be needed */
    size_t rlen, rcap;
    uint64_t id;                /* IN_SINK/IN_SKIP: the sink call */
    int key;                    /* K_*: the top-level member being read */
    bool id_seen, result_seen, error_seen;
    int ekey;                   /* in "error": 1 message, 2 code */
    char emsg[300];
    size_t emsg_len;
    int64_t ecode;
    int sink_rc;                /* what the sink returned when it stopped */
} inmsg;

struct cdp_conn {
    ws_transport *t;
    cdp_opts o;
    uint64_t next_id;
    uint64_t round_trips;       /* cdp_round_trips */
    pending *pend;
    size_t npend, cappend;
    ring_event *ring;           /* circular, o.event_ring slots */
    size_t ring_head, ring_count, ring_bytes;
    uint64_t seq;
    struct { cdp_event_fn fn; void *ud; } lis[MAX_LISTENERS];
    size_t nlis;
    struct { cdp_hold_fn fn; void *ud; } hold[MAX_LISTENERS];   /* cdp_hold_add */
    size_t nhold;
    int users;              /* cdp_conn_share: agents sharing this connection */
    bool claimed;           /* cdp_event_claim: a listener took the event */
    bool consumed;          /* cdp_event_consume: not kept in the ring */
    target_rec *tg;
    size_t ntg, captg;
    cdp_target view;            /* returned by cdp_target_* */
    bool dead;
    char error[512];
    json_w w;                   /* reused for outgoing messages (secret mode) */
    inmsg in;
    bool wipe_in;               /* the message just handled held secrets */
};

/* conn.c */
/* The pending call with this id, or NULL. */
pending *cdp_pending_find(cdp_conn *c, uint64_t id);
/* Drop p from the table (frees what it holds). */
void cdp_pending_remove(cdp_conn *c, pending *p);
/* Free what a target record holds. */
void cdp_target_clear(target_rec *r);

/* conn_recv.c */
/* The connection is finished: record why and fail every pending call.
 * Returns CDP_EDISCONNECTED. */
int cdp_conn_die(cdp_conn *c, const char *why);
/* The target attached under session, or NULL. */
target_rec *cdp_target_find(cdp_conn *c, const char *session);
/* Receive and handle one message, waiting up to timeout_ms. Returns 0 (one
 * handled), CDP_ETIMEOUT, or a fatal error. */
int cdp_conn_recv(cdp_conn *c, int timeout_ms);

#endif
