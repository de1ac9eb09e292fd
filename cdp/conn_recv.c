/*
 * conn_recv.c — the receive side of a CDP connection (conn.c has its
 * lifecycle and the outgoing side; the implementation notes are there):
 * failing pending calls, the target table, routing each message to its
 * waiter or to the listeners and the event ring, messages read in pieces
 * for a sink call, pumping, and waiting for events.
 */
#include "cdp/conn_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- failure of pending calls ---- */

static void fail_pending(pending *p, int code, const char *fmt, const char *why)
{
    char buf[512];
    if (p->state != 0)
        return;
    snprintf(buf, sizeof buf, fmt, p->method, why);
    p->state = 2;
    p->code = code;
    p->msg = base_strdup(buf);
}

/* The connection is finished: record why and fail every pending call. */
int cdp_conn_die(cdp_conn *c, const char *why)
{
    if (!c->dead) {
        c->dead = true;
        snprintf(c->error, sizeof c->error, "%s", why);
    }
    for (size_t i = 0; i < c->npend; i++)
        fail_pending(&c->pend[i], CDP_EDISCONNECTED,
                     "browser disconnected while waiting for %s: %s", c->error);
    return CDP_EDISCONNECTED;
}

/* A session ended: fail calls pending on it. */
static void session_gone(cdp_conn *c, const char *session, const char *why)
{
    for (size_t i = 0; i < c->npend; i++) {
        pending *p = &c->pend[i];
        if (p->session && strcmp(p->session, session) == 0)
            fail_pending(p, CDP_EDETACHED, "%s: %s", why);
    }
}

/* ---- targets ---- */

target_rec *cdp_target_find(cdp_conn *c, const char *session)
{
    for (size_t i = 0; i < c->ntg; i++)
        if (strcmp(c->tg[i].session_id, session) == 0)
            return &c->tg[i];
    return NULL;
}

static void target_add(cdp_conn *c, const char *parent, const json_val *params)
{
    const char *sid = json_get_str(params, "sessionId");
    const json_val *info = json_get(params, "targetInfo");
    if (!sid || cdp_target_find(c, sid))
        return;
    if (c->ntg == c->captg) {
        size_t n = c->captg ? c->captg * 2 : 8;
        target_rec *nt = realloc(c->tg, n * sizeof *nt);
        if (!nt)
            return;     /* the session still works; it is just not listed */
        c->tg = nt;
        c->captg = n;
    }
    target_rec r = {
        base_strdup(sid), base_strdup(json_get_str(info, "targetId")),
        base_strdup(json_get_str(info, "type")), base_strdup(json_get_str(info, "url")),
        base_strdup(json_get_str(info, "browserContextId")), base_strdup(parent),
    };
    if (!r.session_id || !r.target_id || !r.type || !r.url || !r.context_id ||
        !r.parent_session) {
        cdp_target_clear(&r);
        return;
    }
    c->tg[c->ntg++] = r;
}

static void target_remove(cdp_conn *c, const char *session, const char *why)
{
    char sid[256];
    snprintf(sid, sizeof sid, "%s", session);
    session_gone(c, sid, why);
    for (size_t i = 0; i < c->ntg; i++) {
        if (strcmp(c->tg[i].session_id, sid) == 0) {
            cdp_target_clear(&c->tg[i]);
            c->tg[i] = c->tg[--c->ntg];
            break;
        }
    }
    /* Children of a detached session go with it. */
    for (size_t i = 0; i < c->ntg;) {
        if (strcmp(c->tg[i].parent_session, sid) == 0) {
            char child[256];
            snprintf(child, sizeof child, "%s", c->tg[i].session_id);
            target_remove(c, child, why);
            i = 0;
            continue;
        }
        i++;
    }
}

static void target_update(cdp_conn *c, const json_val *params)
{
    const json_val *info = json_get(params, "targetInfo");
    const char *tid = json_get_str(info, "targetId");
    const char *url = json_get_str(info, "url");
    if (!tid || !url)
        return;
    for (size_t i = 0; i < c->ntg; i++) {
        if (strcmp(c->tg[i].target_id, tid) == 0) {
            char *u = base_strdup(url);
            if (u) {
                free(c->tg[i].url);
                c->tg[i].url = u;
            }
        }
    }
}

static void target_crashed(cdp_conn *c, const char *tid)
{
    for (size_t i = 0; i < c->ntg; i++)
        if (strcmp(c->tg[i].target_id, tid) == 0)
            session_gone(c, c->tg[i].session_id, "target crashed while waiting for the reply");
}

size_t cdp_target_count(const cdp_conn *c) { return c->ntg; }

static const cdp_target *target_view(const cdp_conn *cc, const target_rec *r)
{
    cdp_conn *c = (cdp_conn *)cc;
    c->view.session_id = r->session_id;
    c->view.target_id = r->target_id;
    c->view.type = r->type;
    c->view.url = r->url;
    c->view.context_id = r->context_id;
    c->view.parent_session = r->parent_session;
    return &c->view;
}

const cdp_target *cdp_target_at(const cdp_conn *c, size_t i)
{
    return i < c->ntg ? target_view(c, &c->tg[i]) : NULL;
}

const cdp_target *cdp_target_by_session(const cdp_conn *c, const char *session)
{
    for (size_t i = 0; i < c->ntg; i++)
        if (strcmp(c->tg[i].session_id, session) == 0)
            return target_view(c, &c->tg[i]);
    return NULL;
}

/* ---- incoming messages ---- */

static void ring_push(cdp_conn *c, const char *session, const char *method,
                      json_doc *doc)
{
    size_t bytes = json_doc_memsize(doc);
    while (c->ring_count &&
           (c->ring_count == c->o.event_ring || c->ring_bytes + bytes > c->o.event_ring_bytes)) {
        ring_event *old = &c->ring[c->ring_head];
        free(old->session);
        free(old->method);
        json_doc_free(old->doc);
        c->ring_bytes -= old->bytes;
        memset(old, 0, sizeof *old);
        c->ring_head = (c->ring_head + 1) % c->o.event_ring;
        c->ring_count--;
    }
    if (bytes > c->o.event_ring_bytes) {
        json_doc_free(doc);     /* too big to keep; listeners saw it */
        return;
    }
    ring_event *e = &c->ring[(c->ring_head + c->ring_count) % c->o.event_ring];
    e->seq = c->seq;
    e->session = base_strdup(session);
    e->method = base_strdup(method);
    e->doc = doc;
    e->bytes = bytes;
    if (!e->session || !e->method) {
        free(e->session);
        free(e->method);
        json_doc_free(doc);
        memset(e, 0, sizeof *e);
        return;
    }
    c->ring_bytes += bytes;
    c->ring_count++;
}

/* Events that may carry secrets: 2 for those never kept in the ring
 * (Network.*: headers with cookies, post data; Fetch.* on the browser
 * session: the gate's interception, answered by its listener, nobody waits
 * for them), 1 for those kept but zeroed when freed (Fetch.* on a page
 * session: intercepted requests, which session restore waits for), else 0. */
static int event_secret(const char *session, const char *method)
{
    if (strncmp(method, "Network.", 8) == 0)
        return 2;
    if (strncmp(method, "Fetch.", 6) == 0)
        return session && *session ? 1 : 2;
    return 0;
}

static void handle_event(cdp_conn *c, json_doc *doc, const char *session,
                         const char *method, const json_val *params)
{
    int secret = event_secret(session, method);
    if (secret) {
        json_doc_set_secret(doc);
        c->wipe_in = true;
    }
    /* Bookkeeping first, so listeners see a consistent target table. */
    if (strcmp(method, "Target.attachedToTarget") == 0) {
        target_add(c, session, params);
    } else if (strcmp(method, "Target.detachedFromTarget") == 0) {
        const char *sid = json_get_str(params, "sessionId");
        if (sid)
            target_remove(c, sid, "target detached while waiting for the reply");
    } else if (strcmp(method, "Target.targetCrashed") == 0) {
        const char *tid = json_get_str(params, "targetId");
        if (tid)
            target_crashed(c, tid);
    } else if (strcmp(method, "Target.targetInfoChanged") == 0) {
        target_update(c, params);
    } else if (strcmp(method, "Inspector.targetCrashed") == 0 && *session) {
        session_gone(c, session, "target crashed while waiting for the reply");
    } else if (strcmp(method, "Inspector.detached") == 0 && *session) {
        session_gone(c, session, "target detached while waiting for the reply");
    }
    c->seq++;
    c->claimed = c->consumed = false;
    for (size_t i = 0; i < c->nlis; i++)
        c->lis[i].fn(c->lis[i].ud, c, session, method, params);
    c->claimed = false;
    if (secret == 2 || c->consumed)
        json_doc_free(doc);     /* zeroed when secret; nobody may wait for it */
    else
        ring_push(c, session, method, doc);
}

/* Hand a parsed value to a sink as the events json_stream would give
 * (strings whole; JSON_STREAM_SKIP honoured as the stream does). Returns 0
 * or what the sink returned. */
static int replay(const json_val *v, unsigned depth, cdp_sink_fn fn, void *ud)
{
    json_event ev;
    memset(&ev, 0, sizeof ev);
    ev.depth = depth;
    switch (json_type_of(v)) {
    case JSON_NULL: ev.type = JSON_EV_NULL; break;
    case JSON_TRUE: ev.type = JSON_EV_TRUE; break;
    case JSON_FALSE: ev.type = JSON_EV_FALSE; break;
    case JSON_NUMBER:
        ev.type = JSON_EV_NUM;
        ev.num = json_num(v);
        ev.is_int = json_int(v, &ev.i);
        break;
    case JSON_STRING:
        ev.type = JSON_EV_STR;
        ev.str = json_str(v, &ev.len);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT: {
        bool obj = json_is(v, JSON_OBJECT);
        ev.type = obj ? JSON_EV_OBJ_BEGIN : JSON_EV_ARR_BEGIN;
        int r = fn(ud, &ev);
        if (r && r != JSON_STREAM_SKIP)
            return r;
        for (const json_val *m = r ? NULL : json_first(v); m; m = json_next(m)) {
            if (obj) {
                json_event k;
                memset(&k, 0, sizeof k);
                k.type = JSON_EV_KEY;
                k.depth = depth + 1;
                k.str = json_key(m, &k.len);
                if ((r = fn(ud, &k)) == JSON_STREAM_SKIP)
                    continue;
                if (r)
                    return r;
            }
            if ((r = replay(m, depth + 1, fn, ud)) != 0)
                return r;
        }
        ev.type = obj ? JSON_EV_OBJ_END : JSON_EV_ARR_END;
        break;
    }
    }
    int r = fn(ud, &ev);
    return r == JSON_STREAM_SKIP ? 0 : r;
}

/* The sink of p stopped with code r: the call fails with it. */
static void sink_failed(pending *p, int r)
{
    char buf[512];
    if (r >= 0 || r < CDP_ENAVIGATE)
        r = CDP_EINVAL;
    snprintf(buf, sizeof buf, "%s: the reply's consumer stopped (%s)", p->method,
             cdp_strerror(r));
    p->state = 2;
    p->code = r;
    p->msg = base_strdup(buf);
}

/* Parse and route one message. Returns 0 or a fatal error. */
static int handle_message(cdp_conn *c, const char *msg, size_t len)
{
    json_err je;
    json_doc *doc = json_parse(msg, len, NULL, &je);
    char why[300];
    if (!doc) {
        if (je.code == JSON_ENOMEM)
            return cdp_conn_die(c, "out of memory reading a message");
        snprintf(why, sizeof why, "browser sent malformed JSON (%s at byte %zu)",
                 je.msg ? je.msg : json_strerror(je.code), je.offset);
        return cdp_conn_die(c, why);
    }
    const json_val *root = json_doc_root(doc);
    const json_val *idv = json_get(root, "id");
    int64_t id;
    if (idv) {
        if (!json_int(idv, &id) || id <= 0) {
            json_doc_free(doc);
            return cdp_conn_die(c, "browser sent a reply with an invalid id");
        }
        pending *p = cdp_pending_find(c, (uint64_t)id);
        if (p && p->secret) {
            json_doc_set_secret(doc);
            c->wipe_in = true;
        }
        if (!p || p->state != 0) {
            json_doc_free(doc);     /* a call that timed out; drop */
            return 0;
        }
        if (p->discard) {
            json_doc_free(doc);
            cdp_pending_remove(c, p);
            return 0;
        }
        const json_val *e = json_get(root, "error");
        if (e) {
            const char *m = json_get_str(e, "message");
            char buf[512];
            p->protocol_code = (int)json_get_int(e, "code", 0);
            snprintf(buf, sizeof buf, "%s: %s (%d)", p->method, m ? m : "error",
                     p->protocol_code);
            p->state = 2;
            p->code = CDP_EPROTOCOL;
            p->msg = base_strdup(buf);
            json_doc_free(doc);
            return 0;
        }
        if (p->sink) {
            /* A sink reply that was gathered whole: replay it. */
            int sr = replay(json_get(root, "result"), 0, p->sink, p->sink_ud);
            json_doc_free(doc);
            if (sr) {
                sink_failed(p, sr);
                return 0;
            }
            p->state = 1;
            return 0;
        }
        p->state = 1;
        p->doc = doc;
        return 0;
    }
    const char *method = json_get_str(root, "method");
    if (!method) {
        json_doc_free(doc);
        return cdp_conn_die(c, "browser sent a message with neither id nor method");
    }
    const char *session = json_get_str(root, "sessionId");
    handle_event(c, doc, session ? session : "", method, json_get(root, "params"));
    return 0;
}

/* ---- messages in pieces ----
 *
 * While a sink call is pending, messages are read in pieces and fed to a
 * json_stream. Each starts in IN_PREFIX: its bytes are kept and its
 * top-level members watched. An "id" naming the sink call switches it to
 * IN_SINK: the kept bytes are dropped and the events under "result" go to
 * the sink as they come ("error" is collected instead). Any other "id", a
 * "method", or a "result"/"error"/"params" before any "id" switches it to
 * IN_BUFFER: the bytes are gathered and the whole message goes through
 * handle_message like any other (events and other replies are small; a
 * sink reply gathered this way is replayed to its sink there). IN_SKIP
 * reads and drops the rest of a sink reply nobody wants any more (the call
 * was forgotten or timed out, or the sink stopped). */

#define IN_STOP 1               /* the callback's "stop tokenizing" */

static int in_event(void *ud, const json_event *ev)
{
    cdp_conn *c = ud;
    inmsg *m = &c->in;
    if (ev->depth == 0) {
        if (ev->type == JSON_EV_OBJ_BEGIN || ev->type == JSON_EV_OBJ_END)
            return 0;
        m->mode = IN_BUFFER;    /* not an object: handle_message says why */
        return IN_STOP;
    }
    if (m->mode == IN_PREFIX) {
        if (ev->depth != 1)
            return 0;
        if (ev->type == JSON_EV_KEY) {
            if (strcmp(ev->str, "id") == 0) {
                m->key = K_ID;
                return 0;
            }
            if (strcmp(ev->str, "method") == 0 || strcmp(ev->str, "result") == 0 ||
                strcmp(ev->str, "error") == 0 || strcmp(ev->str, "params") == 0) {
                m->mode = IN_BUFFER;
                return IN_STOP;
            }
            m->key = K_OTHER;
            return 0;
        }
        if (m->key == K_ID) {
            pending *p = NULL;
            if (ev->type == JSON_EV_NUM && ev->is_int && ev->i > 0)
                p = cdp_pending_find(c, (uint64_t)ev->i);
            if (p && p->sink && p->state == 0) {    /* forgotten: skipped later */
                m->mode = IN_SINK;
                m->id = (uint64_t)ev->i;
                m->key = K_OTHER;
                return 0;
            }
            m->mode = IN_BUFFER;
            return IN_STOP;
        }
        return 0;
    }
    /* IN_SINK */
    if (ev->depth == 1 && ev->type == JSON_EV_KEY) {
        m->key = K_OTHER;
        if (strcmp(ev->str, "result") == 0 && !m->result_seen) {
            m->key = K_RESULT;
            m->result_seen = true;
        } else if (strcmp(ev->str, "error") == 0 && !m->error_seen) {
            m->key = K_ERROR;
            m->error_seen = true;
        }
        return 0;
    }
    if (m->key == K_RESULT) {
        pending *p = cdp_pending_find(c, m->id);
        json_event e = *ev;
        e.depth--;
        int r = p && p->sink && p->state == 0 && !p->discard ? p->sink(p->sink_ud, &e) : 0;
        if (r == JSON_STREAM_SKIP)
            return r;           /* the stream skips what the sink does not read */
        if (r) {
            m->sink_rc = r;
            m->mode = IN_SKIP;
            return IN_STOP;
        }
    } else if (m->key == K_ERROR && ev->depth == 2) {
        if (ev->type == JSON_EV_KEY) {
            m->ekey = strcmp(ev->str, "message") == 0 ? 1 : strcmp(ev->str, "code") == 0 ? 2 : 0;
            return 0;
        }
        if (m->ekey == 1 && (ev->type == JSON_EV_STR || ev->type == JSON_EV_STR_PART)) {
            size_t room = sizeof m->emsg - 1 - m->emsg_len;
            size_t k = ev->len < room ? ev->len : room;
            memcpy(m->emsg + m->emsg_len, ev->str, k);
            m->emsg_len += k;
            m->emsg[m->emsg_len] = 0;
            if (ev->type == JSON_EV_STR)
                m->ekey = 0;
        } else if (m->ekey == 2 && ev->type == JSON_EV_NUM) {
            m->ecode = ev->is_int ? ev->i : 0;
            m->ekey = 0;
        }
    }
    return 0;
}

/* Forget the bytes kept of a message, zeroing them. */
static void raw_clear(inmsg *m)
{
    base_memzero(m->raw, m->rlen);
    m->rlen = 0;
}

static bool raw_add(inmsg *m, const char *p, size_t n)
{
    if (m->rlen + n + 1 > m->rcap) {
        size_t cap = m->rcap ? m->rcap : 4096;
        while (cap < m->rlen + n + 1)
            cap *= 2;
        char *nr = malloc(cap);     /* not realloc: it could leave a copy */
        if (!nr)
            return false;
        if (m->rlen)
            memcpy(nr, m->raw, m->rlen);
        base_memzero(m->raw, m->rlen);
        free(m->raw);
        m->raw = nr;
        m->rcap = cap;
    }
    memcpy(m->raw + m->rlen, p, n);
    m->rlen += n;
    return true;
}

/* The sink reply is complete (or was skipped): settle its call. */
static void sink_done(cdp_conn *c)
{
    inmsg *m = &c->in;
    pending *p = cdp_pending_find(c, m->id);
    if (!p || p->state != 0)
        return;
    if (p->discard) {
        cdp_pending_remove(c, p);
        return;
    }
    if (m->sink_rc) {
        sink_failed(p, m->sink_rc);
    } else if (m->error_seen) {
        char buf[512];
        p->protocol_code = (int)m->ecode;
        snprintf(buf, sizeof buf, "%s: %s (%d)", p->method,
                 m->emsg_len ? m->emsg : "error", p->protocol_code);
        p->state = 2;
        p->code = CDP_EPROTOCOL;
        p->msg = base_strdup(buf);
    } else {
        p->state = 1;
    }
}

/* One piece of a message (end: its last). Returns 0 or a fatal error. */
static int in_piece(cdp_conn *c, const char *p, size_t n, bool end)
{
    inmsg *m = &c->in;
    if (!m->active) {
        if (!m->js && !(m->js = json_stream_new(NULL, in_event, c)))
            return cdp_conn_die(c, "out of memory reading a message");
        json_stream_reset(m->js);
        raw_clear(m);
        if (m->rcap > ((size_t)1 << 16)) {     /* one big reply: not kept */
            free(m->raw);
            m->raw = NULL;
            m->rcap = 0;
        }
        m->active = true;
        m->mode = IN_PREFIX;
        m->id = 0;
        m->key = K_NONE;
        m->id_seen = m->result_seen = m->error_seen = false;
        m->ekey = 0;
        m->emsg_len = 0;
        m->emsg[0] = 0;
        m->ecode = 0;
        m->sink_rc = 0;
    }
    if (m->mode == IN_SINK) {
        pending *q = cdp_pending_find(c, m->id);
        if (!q || q->state != 0 || q->discard)
            m->mode = IN_SKIP;
    }
    if ((m->mode == IN_PREFIX || m->mode == IN_BUFFER) && !raw_add(m, p, n)) {
        m->active = false;
        return cdp_conn_die(c, "out of memory reading a message");
    }
    if (m->mode == IN_PREFIX || m->mode == IN_SINK) {
        int r = json_stream_feed(m->js, p, n);
        if (r < 0) {
            if (m->mode == IN_PREFIX) {
                m->mode = IN_BUFFER;    /* handle_message reports it */
            } else {
                const json_err *je = json_stream_error(m->js);
                char why[300];
                m->active = false;
                if (je->code == JSON_ENOMEM)
                    return cdp_conn_die(c, "out of memory reading a message");
                snprintf(why, sizeof why, "browser sent malformed JSON (%s at byte %zu)",
                         je->msg ? je->msg : json_strerror(je->code), je->offset);
                return cdp_conn_die(c, why);
            }
        }
        if (m->mode == IN_SINK || m->mode == IN_SKIP)
            raw_clear(m);
    }
    if (!end)
        return 0;
    m->active = false;
    if (m->mode == IN_SINK && json_stream_end(m->js) != 0) {
        const json_err *je = json_stream_error(m->js);
        char why[300];
        snprintf(why, sizeof why, "browser sent malformed JSON (%s at byte %zu)",
                 je->msg ? je->msg : json_strerror(je->code), je->offset);
        return cdp_conn_die(c, je->code == JSON_ENOMEM ? "out of memory reading a message" : why);
    }
    if (m->mode == IN_SINK || m->mode == IN_SKIP) {
        sink_done(c);
        return 0;
    }
    /* IN_BUFFER, or IN_PREFIX when nothing decided it (no id, no method). */
    int r = handle_message(c, m->raw ? m->raw : "", m->rlen);
    raw_clear(m);
    return r;
}

/* Is a sink call waiting (or a message already being read in pieces)? */
static bool want_pieces(const cdp_conn *c)
{
    if (c->in.active)
        return true;
    for (size_t i = 0; i < c->npend; i++)
        if (c->pend[i].sink && c->pend[i].state == 0 && !c->pend[i].discard)
            return true;
    return false;
}

static int transport_failed(cdp_conn *c, int r);

/* A message was handled: if it carried secrets, have the transport zero
 * what it handed out. */
static int after_message(cdp_conn *c, int r)
{
    if (c->wipe_in) {
        ws_transport_wipe(c->t);
        c->wipe_in = false;
    }
    return r;
}

/* Read one message in pieces, waiting up to timeout_ms for each. */
static int pump_pieces(cdp_conn *c, int timeout_ms)
{
    int64_t dl = timeout_ms < 0 ? -1 : base_now_ms() + timeout_ms;
    for (;;) {
        const char *p;
        size_t n;
        bool end;
        int r = ws_transport_recv_chunk(c->t, &p, &n, &end, cdp_remaining(dl));
        if (r == WS_ETIMEOUT)
            return CDP_ETIMEOUT;
        if (r != WS_OK)
            return transport_failed(c, r);
        r = in_piece(c, p, n, end);
        if (r || end)
            return after_message(c, r);
    }
}

/* Receive and handle one message, waiting up to timeout_ms. Returns 0 (one
 * handled), CDP_ETIMEOUT, or a fatal error. */
int cdp_conn_recv(cdp_conn *c, int timeout_ms)
{
    if (c->dead)
        return CDP_EDISCONNECTED;
    if (want_pieces(c))
        return pump_pieces(c, timeout_ms);
    const char *msg;
    size_t len;
    int r = ws_transport_recv(c->t, &msg, &len, timeout_ms);
    if (r == WS_ETIMEOUT)
        return CDP_ETIMEOUT;
    if (r != WS_OK)
        return transport_failed(c, r);
    return after_message(c, handle_message(c, msg, len));
}

/* The transport failed with r: the connection dies saying why. */
static int transport_failed(cdp_conn *c, int r)
{
    {
        char why[400];
        const char *te = ws_transport_error(c->t);
        if (r == WS_ECLOSED)
            snprintf(why, sizeof why, "the %s closed%s%s", ws_transport_kind(c->t),
                     te && *te ? ": " : "", te ? te : "");
        else if (r == WS_ETOOBIG)
            snprintf(why, sizeof why, "message from the browser too large (%s)",
                     te && *te ? te : ws_strerror(r));
        else
            snprintf(why, sizeof why, "%s: %s", ws_transport_kind(c->t),
                     te && *te ? te : ws_strerror(r));
        return cdp_conn_die(c, why);
    }
}

int cdp_pump_one(cdp_conn *c, int timeout_ms, cdp_err *err)
{
    int r = cdp_conn_recv(c, timeout_ms < 0 ? 0 : timeout_ms);
    if (r == CDP_ETIMEOUT)
        return cdp_seterr(err, CDP_ETIMEOUT, "no message within %d ms", timeout_ms);
    return r ? cdp_seterr(err, r, "%s", c->error) : 0;
}

int cdp_conn_inject(cdp_conn *c, const char *msg, size_t len, cdp_err *err)
{
    if (c->dead)
        return cdp_seterr(err, CDP_EDISCONNECTED, "%s", c->error);
    int r = want_pieces(c) ? in_piece(c, msg, len, true) : handle_message(c, msg, len);
    after_message(c, r);
    return r ? cdp_seterr(err, r, "%s", c->error) : 0;
}

int cdp_conn_inject_piece(cdp_conn *c, const char *p, size_t n, bool end, cdp_err *err)
{
    if (c->dead)
        return cdp_seterr(err, CDP_EDISCONNECTED, "%s", c->error);
    int r = in_piece(c, p, n, end);
    if (end)
        after_message(c, r);
    return r ? cdp_seterr(err, r, "%s", c->error) : 0;
}

int cdp_pump(cdp_conn *c, int timeout_ms, cdp_err *err)
{
    int64_t dl = cdp_deadline(timeout_ms == 0 ? 1 : timeout_ms, 0);
    for (;;) {
        int rem = timeout_ms == 0 ? 0 : cdp_remaining(dl);
        int r = cdp_conn_recv(c, rem);
        if (r == CDP_ETIMEOUT)
            return 0;
        if (r)
            return cdp_seterr(err, r, "%s", c->error);
        if (timeout_ms != 0 && rem == 0 && !ws_transport_ready(c->t))
            return 0;
    }
}


/* ---- events ---- */

int cdp_listen(cdp_conn *c, cdp_event_fn fn, void *ud)
{
    if (c->nlis == MAX_LISTENERS)
        return CDP_ELIMIT;
    c->lis[c->nlis].fn = fn;
    c->lis[c->nlis].ud = ud;
    c->nlis++;
    return 0;
}

void cdp_unlisten(cdp_conn *c, cdp_event_fn fn, void *ud)
{
    for (size_t i = 0; i < c->nlis; i++) {
        if (c->lis[i].fn == fn && c->lis[i].ud == ud) {
            memmove(&c->lis[i], &c->lis[i + 1], (c->nlis - i - 1) * sizeof c->lis[0]);
            c->nlis--;
            return;
        }
    }
}

uint64_t cdp_event_seq(const cdp_conn *c) { return c->seq; }

void cdp_event_claim(cdp_conn *c) { c->claimed = true; }

void cdp_event_consume(cdp_conn *c) { c->consumed = true; }

bool cdp_event_claimed(const cdp_conn *c) { return c->claimed; }

bool cdp_listener_last(const cdp_conn *c, cdp_event_fn fn, void *ud)
{
    for (size_t i = c->nlis; i-- > 0;)
        if (c->lis[i].fn == fn)
            return c->lis[i].ud == ud;
    return false;
}

/* Look in the ring for the first event after `since` that matches; take it. */
static bool ring_take(cdp_conn *c, uint64_t since, const char *session,
                      const char *method, cdp_match_fn match, void *ud,
                      cdp_reply *out, uint64_t *seq_out)
{
    for (size_t i = 0; i < c->ring_count; i++) {
        ring_event *e = &c->ring[(c->ring_head + i) % c->o.event_ring];
        if (e->seq <= since || !e->doc || strcmp(e->method, method) != 0)
            continue;
        if (session && strcmp(e->session, session) != 0)
            continue;
        const json_val *params = json_get(json_doc_root(e->doc), "params");
        if (match && !match(ud, params))
            continue;
        out->doc = e->doc;
        out->result = params;
        e->doc = NULL;
        c->ring_bytes -= e->bytes;
        e->bytes = 0;
        if (seq_out)
            *seq_out = e->seq;
        return true;
    }
    return false;
}

size_t cdp_events_discard(cdp_conn *c, const char *session, const char *prefix)
{
    size_t n = 0, k = prefix ? strlen(prefix) : 0;
    for (size_t i = 0; c && i < c->ring_count; i++) {
        ring_event *e = &c->ring[(c->ring_head + i) % c->o.event_ring];
        if (!e->doc || strncmp(e->method, prefix ? prefix : "", k) != 0)
            continue;
        if (session && strcmp(e->session, session) != 0)
            continue;
        json_doc_free(e->doc);      /* secret documents are zeroed */
        e->doc = NULL;
        c->ring_bytes -= e->bytes;
        e->bytes = 0;
        n++;
    }
    return n;
}

int cdp_wait_event(cdp_conn *c, uint64_t since, const char *session, const char *method,
                   cdp_match_fn match, void *ud, int timeout_ms,
                   cdp_reply *out, uint64_t *seq_out, cdp_err *err)
{
    cdp_reply tmp = {0};
    if (!out)
        out = &tmp;
    out->doc = NULL;
    out->result = NULL;
    int64_t dl = cdp_deadline(timeout_ms, c->o.default_timeout_ms);
    for (;;) {
        if (ring_take(c, since, session, method, match, ud, out, seq_out)) {
            cdp_reply_free(&tmp);
            return 0;
        }
        if (c->dead)
            return cdp_seterr(err, CDP_EDISCONNECTED,
                              "browser disconnected while waiting for %s: %s", method,
                              c->error);
        if (session && *session && !cdp_target_find(c, session))
            return cdp_seterr(err, CDP_EDETACHED,
                              "target detached while waiting for %s", method);
        int rem = cdp_remaining(dl);
        int r = rem == 0 ? CDP_ETIMEOUT : cdp_conn_recv(c, rem);
        if (r == CDP_ETIMEOUT) {
            if (ring_take(c, since, session, method, match, ud, out, seq_out))
                return 0;
            int ms = timeout_ms == 0 ? c->o.default_timeout_ms : timeout_ms;
            return cdp_seterr(err, CDP_ETIMEOUT, "no %s event within %d ms", method, ms);
        }
    }
}
