/*
 * conn.c — one CDP connection: command/response matching, event dispatch,
 * flattened sessions, deadlines, failure of pending calls on detach and
 * disconnect.
 *
 * Two files: this one has the lifecycle, the table of pending calls and
 * the outgoing side (sending, waiting for a reply); conn_recv.c the
 * receive side (failing pending calls, the target table, routing each
 * message, messages read in pieces, pumping, listeners and the event
 * ring). What they share (the connection's struct) is conn_int.h.
 *
 * Implementation notes
 *  - Pending calls live in a small array (linear search: a driver has a
 *    handful outstanding; the limit is max_pending). A reply for an id no one
 *    waits for any more (a call that timed out) is dropped.
 *  - Every message is parsed into its own json_doc. A reply's doc is handed
 *    to the waiter; an event's doc goes to the listeners and then into a
 *    bounded ring (count and bytes) so a waiter that starts late still sees
 *    it. Old events are dropped first.
 *  - Anything from the browser that is not a JSON object with an integer id
 *    or a string method is fatal for the connection: we cannot know which
 *    call it answered, and guessing could attach a wrong result to a call.
 *    Every pending call then fails with the reason; nothing hangs.
 *  - Secrets (see cdp.h): a secret call's pending entry carries the flag;
 *    its reply document is marked secret as soon as the id matches it, and
 *    after handling such a message (or a Network.* or Fetch.* event) the
 *    transport is told to zero what it handed out (wipe_in). The writer
 *    is a secret json_w, reset (so zeroed) after every send; the buffer of
 *    messages read in pieces is zeroed after each message.
 */
#include "cdp/conn_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- small helpers shared by cdp/ ---- */

int cdp_seterr(cdp_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        err->protocol_code = 0;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int64_t cdp_deadline(int timeout_ms, int dflt)
{
    if (timeout_ms == 0)
        timeout_ms = dflt;
    if (timeout_ms < 0)
        return -1;
    return base_now_ms() + timeout_ms;
}

int cdp_remaining(int64_t deadline)
{
    if (deadline < 0)
        return -1;
    int64_t r = deadline - base_now_ms();
    return r < 0 ? 0 : (r > 0x7fffffff ? 0x7fffffff : (int)r);
}

const char *cdp_strerror(int code)
{
    switch (code) {
    case CDP_OK: return "ok";
    case CDP_ENOMEM: return "out of memory";
    case CDP_ETIMEOUT: return "timed out";
    case CDP_EPROTOCOL: return "protocol error";
    case CDP_EDISCONNECTED: return "browser disconnected";
    case CDP_EDETACHED: return "target detached";
    case CDP_EBADMSG: return "malformed message from the browser";
    case CDP_ELIMIT: return "limit exceeded";
    case CDP_ELAUNCH: return "browser launch failed";
    case CDP_ENOTFOUND: return "browser not found";
    case CDP_ECONNECT: return "cannot connect";
    case CDP_EINVAL: return "invalid argument";
    case CDP_EEVAL: return "script threw";
    case CDP_ENAVIGATE: return "navigation failed";
    case CDP_EHELD: return "held: the target will not answer for now";
    }
    return "unknown error";
}

/* ---- lifecycle ---- */

cdp_conn *cdp_conn_new(ws_transport *t, const cdp_opts *opts)
{
    cdp_conn *c = calloc(1, sizeof *c);
    if (!c) {
        ws_transport_free(t);
        return NULL;
    }
    if (opts)
        c->o = *opts;
    if (!c->o.max_pending)
        c->o.max_pending = 4096;
    if (!c->o.event_ring)
        c->o.event_ring = 256;
    if (!c->o.event_ring_bytes)
        c->o.event_ring_bytes = (size_t)4 << 20;
    if (!c->o.default_timeout_ms)
        c->o.default_timeout_ms = 30000;
    c->ring = calloc(c->o.event_ring, sizeof *c->ring);
    if (!c->ring) {
        free(c);
        ws_transport_free(t);
        return NULL;
    }
    c->t = t;
    c->next_id = 1;
    json_w_init_secret(&c->w);
    return c;
}

static void pending_clear(pending *p)
{
    free(p->method);
    free(p->session);
    free(p->msg);
    json_doc_free(p->doc);
    memset(p, 0, sizeof *p);
}

void cdp_target_clear(target_rec *r)
{
    free(r->session_id);
    free(r->target_id);
    free(r->type);
    free(r->url);
    free(r->context_id);
    free(r->parent_session);
}

void cdp_conn_free(cdp_conn *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->npend; i++)
        pending_clear(&c->pend[i]);
    free(c->pend);
    for (size_t i = 0; i < c->ring_count; i++) {
        ring_event *e = &c->ring[(c->ring_head + i) % c->o.event_ring];
        free(e->session);
        free(e->method);
        json_doc_free(e->doc);
    }
    free(c->ring);
    for (size_t i = 0; i < c->ntg; i++)
        cdp_target_clear(&c->tg[i]);
    free(c->tg);
    json_w_free(&c->w);
    json_stream_free(c->in.js);
    base_memzero(c->in.raw, c->in.rlen);
    free(c->in.raw);
    ws_transport_free(c->t);
    free(c);
}

bool cdp_conn_dead(const cdp_conn *c) { return c->dead; }
const char *cdp_conn_error(const cdp_conn *c) { return c->error; }
const char *cdp_conn_transport(const cdp_conn *c) { return ws_transport_kind(c->t); }

int cdp_conn_share(cdp_conn *c, int delta)
{
    c->users += delta;
    if (c->users < 0)
        c->users = 0;
    return c->users;
}

int cdp_conn_fd(const cdp_conn *c)
{
    return c && !c->dead ? ws_transport_fd(c->t) : -1;
}

void cdp_reply_free(cdp_reply *r)
{
    if (!r)
        return;
    json_doc_free(r->doc);
    r->doc = NULL;
    r->result = NULL;
}

/* ---- the table of pending calls ---- */

pending *cdp_pending_find(cdp_conn *c, uint64_t id)
{
    for (size_t i = 0; i < c->npend; i++)
        if (c->pend[i].id == id && c->pend[i].method)
            return &c->pend[i];
    return NULL;
}

void cdp_pending_remove(cdp_conn *c, pending *p)
{
    pending_clear(p);
    *p = c->pend[--c->npend];
}


/* ---- outgoing ---- */

/* Is a call in flight (sent, not answered, not forgotten)? */
static bool call_in_flight(const cdp_conn *c)
{
    for (size_t i = 0; i < c->npend; i++)
        if (c->pend[i].state == 0 && !c->pend[i].discard)
            return true;
    return false;
}

static int send_call(cdp_conn *c, const char *session, const char *method,
                     const char *params, cdp_sink_fn sink, void *sink_ud, bool secret,
                     uint64_t *id_out, cdp_err *err);

int cdp_send(cdp_conn *c, const char *session, const char *method,
             const char *params, uint64_t *id_out, cdp_err *err)
{
    return send_call(c, session, method, params, NULL, NULL, false, id_out, err);
}

int cdp_send_secret(cdp_conn *c, const char *session, const char *method,
                    const char *params, uint64_t *id_out, cdp_err *err)
{
    return send_call(c, session, method, params, NULL, NULL, true, id_out, err);
}

int cdp_send_sink(cdp_conn *c, const char *session, const char *method,
                  const char *params, cdp_sink_fn fn, void *ud, uint64_t *id,
                  cdp_err *err)
{
    if (!fn)
        return cdp_seterr(err, CDP_EINVAL, "%s: no sink", method ? method : "");
    return send_call(c, session, method, params, fn, ud, false, id, err);
}

static int send_call(cdp_conn *c, const char *session, const char *method,
                     const char *params, cdp_sink_fn sink, void *sink_ud, bool secret,
                     uint64_t *id_out, cdp_err *err)
{
    if (!method || !*method)
        return cdp_seterr(err, CDP_EINVAL, "no method");
    if (c->dead)
        return cdp_seterr(err, CDP_EDISCONNECTED, "%s: browser disconnected: %s",
                          method, c->error);
    if (session && *session && !cdp_target_find(c, session))
        return cdp_seterr(err, CDP_EDETACHED, "%s: session %s is not attached "
                          "(target closed or detached)", method, session);
    if (c->npend >= c->o.max_pending)
        return cdp_seterr(err, CDP_ELIMIT, "%s: %zu calls already pending", method,
                          c->npend);
    if (c->npend == c->cappend) {
        size_t n = c->cappend ? c->cappend * 2 : 16;
        pending *np = realloc(c->pend, n * sizeof *np);
        if (!np)
            return cdp_seterr(err, CDP_ENOMEM, "%s: out of memory", method);
        c->pend = np;
        c->cappend = n;
    }
    uint64_t id = c->next_id++;
    json_w *w = &c->w;
    json_w_reset(w);
    json_w_obj_begin(w);
    json_w_key(w, "id");
    json_w_uint(w, id);
    if (session && *session) {
        json_w_key(w, "sessionId");
        json_w_str(w, session);
    }
    json_w_key(w, "method");
    json_w_str(w, method);
    if (params) {
        json_w_key(w, "params");
        json_w_raw(w, params, strlen(params), false);
    }
    json_w_obj_end(w);
    if (json_w_error(w)) {
        int we = json_w_error(w);
        json_w_reset(w);
        return cdp_seterr(err, we == JSON_ENOMEM ? CDP_ENOMEM : CDP_EINVAL,
                          "%s: cannot build the message (%s)", method, json_strerror(we));
    }
    pending *p = &c->pend[c->npend];
    memset(p, 0, sizeof *p);
    p->rt = !call_in_flight(c);
    p->id = id;
    p->sink = sink;
    p->sink_ud = sink_ud;
    p->secret = secret;
    p->method = base_strdup(method);
    p->session = session && *session ? base_strdup(session) : NULL;
    if (!p->method || (session && *session && !p->session)) {
        pending_clear(p);
        json_w_reset(w);
        return cdp_seterr(err, CDP_ENOMEM, "%s: out of memory", method);
    }
    c->npend++;
    int r = ws_transport_send(c->t, w->buf, w->len, c->o.default_timeout_ms);
    json_w_reset(w);            /* a secret writer: zeroes the message */
    if (r != WS_OK) {
        char why[400];
        snprintf(why, sizeof why, "sending %s: %s", method, ws_transport_error(c->t));
        cdp_conn_die(c, why);
        cdp_pending_remove(c, cdp_pending_find(c, id));
        return cdp_seterr(err, CDP_EDISCONNECTED, "%s", why);
    }
    if (p->rt)
        c->round_trips++;
    if (id_out)
        *id_out = id;
    return 0;
}

/* The reason a hold gives for the call p, or NULL: wait for its reply. */
static const char *call_held(cdp_conn *c, const pending *p)
{
    for (size_t i = 0; p->session && i < c->nhold; i++) {
        const char *why = c->hold[i].fn(c->hold[i].ud, p->session, p->method);
        if (why)
            return why;
    }
    return NULL;
}

int cdp_hold_add(cdp_conn *c, cdp_hold_fn fn, void *ud)
{
    if (c->nhold == sizeof c->hold / sizeof c->hold[0])
        return CDP_ELIMIT;
    c->hold[c->nhold].fn = fn;
    c->hold[c->nhold].ud = ud;
    c->nhold++;
    return 0;
}

void cdp_hold_remove(cdp_conn *c, cdp_hold_fn fn, void *ud)
{
    for (size_t i = 0; i < c->nhold; i++) {
        if (c->hold[i].fn == fn && c->hold[i].ud == ud) {
            memmove(&c->hold[i], &c->hold[i + 1], (c->nhold - i - 1) * sizeof c->hold[0]);
            c->nhold--;
            return;
        }
    }
}

int cdp_wait(cdp_conn *c, uint64_t id, int timeout_ms, cdp_reply *out, cdp_err *err)
{
    if (out) {
        out->doc = NULL;
        out->result = NULL;
    }
    int64_t dl = cdp_deadline(timeout_ms, c->o.default_timeout_ms);
    for (;;) {
        pending *p = cdp_pending_find(c, id);
        if (!p)
            return cdp_seterr(err, CDP_EINVAL, "no pending call with id %llu",
                              (unsigned long long)id);
        if (p->state == 1) {
            if (out) {
                out->doc = p->doc;
                out->result = json_get(json_doc_root(p->doc), "result");
                p->doc = NULL;
            }
            cdp_pending_remove(c, p);
            return 0;
        }
        if (p->state == 2) {
            int code = p->code;
            cdp_seterr(err, code, "%s", p->msg ? p->msg : cdp_strerror(code));
            if (err)
                err->protocol_code = p->protocol_code;
            cdp_pending_remove(c, p);
            return code;
        }
        const char *held = call_held(c, p);
        if (held) {
            cdp_seterr(err, CDP_EHELD, "%s: %s", p->method, held);
            if (p->secret)
                p->discard = true;      /* its late reply is still zeroed */
            else
                cdp_pending_remove(c, p);
            return CDP_EHELD;
        }
        int rem = cdp_remaining(dl);
        int r = rem == 0 ? CDP_ETIMEOUT : cdp_conn_recv(c, rem);
        if (r == CDP_ETIMEOUT) {
            p = cdp_pending_find(c, id);
            if (p && p->state == 0) {
                int ms = timeout_ms == 0 ? c->o.default_timeout_ms : timeout_ms;
                cdp_seterr(err, CDP_ETIMEOUT, "%s: no reply within %d ms", p->method, ms);
                if (p->secret)
                    p->discard = true;  /* its late reply is still zeroed */
                else
                    cdp_pending_remove(c, p);
                return CDP_ETIMEOUT;
            }
        }
        /* Fatal errors were recorded in the pending entry; loop to report. */
    }
}

uint64_t cdp_last_id(const cdp_conn *c)
{
    return c->next_id - 1;
}

bool cdp_reply_ready(const cdp_conn *c, uint64_t id)
{
    for (size_t i = 0; i < c->npend; i++)
        if (c->pend[i].id == id && c->pend[i].method)
            return c->pend[i].state != 0;
    return true;
}

uint64_t cdp_round_trips(const cdp_conn *c)
{
    return c->round_trips;
}

void cdp_forget(cdp_conn *c, uint64_t id)
{
    pending *p = cdp_pending_find(c, id);
    if (!p)
        return;
    if (p->rt && p->state == 0) {
        /* Nobody waits for it: the round trip it started belongs to the
         * first call sent after it that is still in flight, or to none. */
        pending *next = NULL;
        for (size_t i = 0; i < c->npend; i++) {
            pending *q = &c->pend[i];
            if (q->id > id && q->state == 0 && !q->discard && (!next || q->id < next->id))
                next = q;
        }
        if (next)
            next->rt = true;
        else
            c->round_trips--;
        p->rt = false;
    }
    if (p->state != 0)
        cdp_pending_remove(c, p);
    else
        p->discard = true;
}

/* cdp_send (or cdp_send_secret) + cdp_wait. */
static int call_with(cdp_conn *c, bool secret, const char *session, const char *method,
                     const char *params, int timeout_ms, cdp_reply *out, cdp_err *err)
{
    uint64_t id;
    if (out) {
        out->doc = NULL;
        out->result = NULL;
    }
    int r = secret ? cdp_send_secret(c, session, method, params, &id, err)
                   : cdp_send(c, session, method, params, &id, err);
    if (r)
        return r;
    cdp_reply tmp = {0};
    r = cdp_wait(c, id, timeout_ms, out ? out : &tmp, err);
    cdp_reply_free(&tmp);
    return r;
}

int cdp_call(cdp_conn *c, const char *session, const char *method,
             const char *params, int timeout_ms, cdp_reply *out, cdp_err *err)
{
    return call_with(c, false, session, method, params, timeout_ms, out, err);
}

int cdp_call_secret(cdp_conn *c, const char *session, const char *method,
                    const char *params, int timeout_ms, cdp_reply *out, cdp_err *err)
{
    return call_with(c, true, session, method, params, timeout_ms, out, err);
}
