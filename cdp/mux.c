/*
 * mux.c — one browser shared by the processes of a sweep (cdp.h, "one
 * browser shared by several processes: the router"). The router holds the
 * browser's connection; each client (a forked process at the far end of a
 * socketpair) speaks CDP to it as to a browser. The router forwards a
 * client's command under a new id (cdp_send_secret: every reply is zeroed
 * once routed), on the client's own browser session when it names none,
 * after checking that everything the command names is the client's own; it
 * routes events to their owner only, and replies in the order the browser
 * sent them relative to events (a reply that is ready goes out before the
 * next event). What a client owns is learnt from what passes: the contexts
 * its Target.createBrowserContext made, targets created in them (discovery
 * events name the context), sessions attached to those, their frames
 * (Page.frameAttached/frameNavigated, Page.getFrameTree's replies, OOPIF
 * targets), the targets of its contexts (the router discovers every
 * target on its own session: a worker's, a shared or service worker's
 * requests name that target as their frame), downloads begun in its
 * frames. A request paused by a client's interception (Fetch on its
 * browser session sees every context's requests) goes to the client only
 * when the frame is its own; another client's is continued for it; one
 * whose owner is not known yet is held (never delivered) until the owner
 * is learnt, and failed when it is not within MUX_HOLD_MS (fail closed,
 * shared with no one).
 */
#include "cdp/cdp_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MUX_ID 80                   /* CDP ids are 32-36 characters */
#define MUX_SET_MAX 65536           /* ids kept per kind per client */
#define MUX_QUEUE_MAX ((size_t)64 << 20)    /* queued for a client that does not read */
#define MUX_MSG_MAX ((size_t)256 << 20)
#define MUX_BURST 64                /* a client's messages handled per round */
#define MUX_HOLD_MAX 256            /* paused requests of unknown owner held per client */
#define MUX_HOLD_MS 10000           /* held that long at most, then failed */
#define MUX_TREE_DEPTH 64           /* Page.getFrameTree levels read */

typedef struct {
    char (*v)[MUX_ID];
    size_t n, cap;
} idset;

enum { MS_CTX, MS_TGT, MS_SES, MS_FRM, MS_DL, MS_N };

typedef struct {
    ws_transport *t;                /* NULL: no client */
    int fd;                         /* the socket (t reads it; the queue is written here) */
    char bs[MUX_ID];                /* its browser session */
    idset own[MS_N];
    char *q;                        /* messages not yet written to it, NUL after each */
    size_t qoff, qlen, qcap;
    bool dead;
    bool held;                      /* dropped while the host still names the slot */
} mux_client;

enum { K_PLAIN, K_CTX_NEW, K_CTX_GONE, K_TARGET_NEW, K_SESSION_NEW, K_TARGETS, K_FRAMES };

typedef struct {
    uint64_t gid;                   /* the id on the browser's connection */
    int64_t cid;                    /* the client's id */
    int cl;
    int kind;
    char sess[MUX_ID];              /* the session the client named ("": none) */
    char arg[MUX_ID];
} mux_fwd;

/* A paused request whose frame no client is known to own yet: the event
 * as it would go to client cl (text, zeroed when freed). */
typedef struct {
    int cl;
    bool auth;                      /* Fetch.authRequired */
    int64_t until;                  /* failed at this time (base_now_ms) */
    char rid[MUX_ID];
    char frame[MUX_ID];
    char *text;
    size_t n;
} mux_held;

struct cdp_mux {
    cdp_conn *c;
    mux_client cl[CDP_MUX_MAX];
    mux_fwd *fwd;
    size_t nfwd, capfwd;
    mux_held *held;
    size_t nheld, capheld;
    size_t refused;
};

/* ---- id sets ---- */

static bool ids_has(const idset *s, const char *id)
{
    for (size_t i = 0; id && *id && i < s->n; i++)
        if (strcmp(s->v[i], id) == 0)
            return true;
    return false;
}

static void ids_add(idset *s, const char *id)
{
    if (!id || !*id || strlen(id) >= MUX_ID || ids_has(s, id) || s->n >= MUX_SET_MAX)
        return;
    void *v = base_grow(s->v, s->n + 1, &s->cap, MUX_ID, 16);
    if (!v)
        return;
    s->v = v;
    snprintf(s->v[s->n++], MUX_ID, "%s", id);
}

static void ids_del(idset *s, const char *id)
{
    for (size_t i = 0; id && i < s->n; i++)
        if (strcmp(s->v[i], id) == 0) {
            memmove(s->v[i], s->v[s->n - 1], MUX_ID);
            s->n--;
            return;
        }
}

static void ids_free(idset *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* The client owning id in set k; -1 when none. */
static int owner(const cdp_mux *m, int k, const char *id)
{
    for (int i = 0; id && *id && i < CDP_MUX_MAX; i++)
        if (m->cl[i].t && ids_has(&m->cl[i].own[k], id))
            return i;
    return -1;
}

/* ---- to a client ---- */

/* Write what is queued for the client without blocking: a client that
 * is not reading (busy, stopped, hung) never holds up the others; past
 * MUX_QUEUE_MAX queued it is dropped. Bytes written are zeroed. */
static void flush(mux_client *cl)
{
    while (cl->t && !cl->dead && cl->qoff < cl->qlen) {
        ssize_t w = send(cl->fd, cl->q + cl->qoff, cl->qlen - cl->qoff,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w <= 0) {
            cl->dead = true;
            break;
        }
        base_memzero(cl->q + cl->qoff, (size_t)w);
        cl->qoff += (size_t)w;
    }
    if (cl->qoff == cl->qlen)
        cl->qoff = cl->qlen = 0;
}

/* Room for need bytes in the queue: a new buffer, the old one zeroed
 * (it may hold messages with secrets not written yet). */
static int queue_room(mux_client *cl, size_t need)
{
    if (need <= cl->qcap)
        return 0;
    size_t cap = cl->qcap ? cl->qcap : 65536;
    while (cap < need)
        cap *= 2;
    char *q = malloc(cap);
    if (!q)
        return -1;
    if (cl->q) {
        memcpy(q, cl->q, cl->qlen);
        base_memzero(cl->q, cl->qcap);
        free(cl->q);
    }
    cl->q = q;
    cl->qcap = cap;
    return 0;
}

static void send_text(cdp_mux *m, int k, char *s, size_t n)
{
    mux_client *cl = &m->cl[k];
    if (!s || !cl->t || cl->dead) {
        if (s)
            base_memzero(s, n);
        free(s);
        return;
    }
    if (cl->qoff && cl->qlen + n + 1 > cl->qcap) {     /* room at the front first */
        memmove(cl->q, cl->q + cl->qoff, cl->qlen - cl->qoff);
        cl->qlen -= cl->qoff;
        cl->qoff = 0;
    }
    if (cl->qlen + n + 1 > MUX_QUEUE_MAX || queue_room(cl, cl->qlen + n + 1)) {
        cl->dead = true;
    } else {
        memcpy(cl->q + cl->qlen, s, n);
        cl->q[cl->qlen + n] = 0;
        cl->qlen += n + 1;
        flush(cl);
    }
    base_memzero(s, n);
    free(s);
}

static void send_error(cdp_mux *m, int k, int64_t cid, const char *sess, int code,
                       const char *msg)
{
    json_w w;
    json_w_init_secret(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "id");
    json_w_int(&w, cid);
    json_w_key(&w, "error");
    json_w_obj_begin(&w);
    json_w_key(&w, "code");
    json_w_int(&w, code);
    json_w_key(&w, "message");
    json_w_str(&w, msg);
    json_w_obj_end(&w);
    if (sess && *sess) {
        json_w_key(&w, "sessionId");
        json_w_str(&w, sess);
    }
    json_w_obj_end(&w);
    size_t n = 0;
    char *s = json_w_take(&w, &n);
    json_w_free(&w);
    send_text(m, k, s, n);
}

/* A target info of the client's own: its target or its context. */
static bool info_own(const mux_client *cl, const json_val *info)
{
    return ids_has(&cl->own[MS_TGT], json_get_str(info, "targetId")) ||
           ids_has(&cl->own[MS_CTX], json_get_str(info, "browserContextId"));
}

/* Target.getTargets' reply: the client's own targets only. */
static void write_targets(json_w *w, const mux_client *cl, const json_val *res)
{
    json_w_obj_begin(w);
    json_w_key(w, "targetInfos");
    json_w_arr_begin(w);
    for (const json_val *x = json_first(json_get(res, "targetInfos")); x; x = json_next(x))
        if (info_own(cl, x))
            json_w_val(w, x);
    json_w_arr_end(w);
    json_w_obj_end(w);
}

/* Every frame of a Page.getFrameTree reply's tree (a frame attached
 * before the client's Page.enable sent no event). */
static void learn_tree(mux_client *cl, const json_val *tree, int depth)
{
    if (!tree || depth > MUX_TREE_DEPTH)
        return;
    ids_add(&cl->own[MS_FRM], json_get_str(json_get(tree, "frame"), "id"));
    for (const json_val *x = json_first(json_get(tree, "childFrames")); x; x = json_next(x))
        learn_tree(cl, x, depth + 1);
}

/* What a reply tells of ownership, before it goes out. */
static void learn_reply(mux_client *cl, const mux_fwd *f, const json_val *res)
{
    if (f->kind == K_FRAMES)
        learn_tree(cl, json_get(res, "frameTree"), 0);
    else if (f->kind == K_CTX_NEW)
        ids_add(&cl->own[MS_CTX], json_get_str(res, "browserContextId"));
    else if (f->kind == K_CTX_GONE)
        ids_del(&cl->own[MS_CTX], f->arg);
    else if (f->kind == K_TARGET_NEW) {
        ids_add(&cl->own[MS_TGT], json_get_str(res, "targetId"));
        ids_add(&cl->own[MS_FRM], json_get_str(res, "targetId"));   /* its main frame */
    } else if (f->kind == K_SESSION_NEW)
        ids_add(&cl->own[MS_SES], json_get_str(res, "sessionId"));
}

static void send_result(cdp_mux *m, const mux_fwd *f, const json_val *res)
{
    mux_client *cl = &m->cl[f->cl];
    learn_reply(cl, f, res);
    json_w w;
    json_w_init_secret(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "id");
    json_w_int(&w, f->cid);
    json_w_key(&w, "result");
    if (f->kind == K_TARGETS)
        write_targets(&w, cl, res);
    else if (res)
        json_w_val(&w, res);
    else
        json_w_raw(&w, "{}", 2, false);
    if (f->sess[0]) {
        json_w_key(&w, "sessionId");
        json_w_str(&w, f->sess);
    }
    json_w_obj_end(&w);
    size_t n = 0;
    char *s = json_w_take(&w, &n);
    json_w_free(&w);
    send_text(m, f->cl, s, n);
}

/* The browser's error message without what cdp_wait added around it
 * ("Method: " before, " (code)" after). */
static void send_failure(cdp_mux *m, const mux_fwd *f, int rc, const cdp_err *e)
{
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    int code = -32000;
    if (rc == CDP_EPROTOCOL) {
        code = e->protocol_code;
        char *colon = strstr(msg, ": ");
        if (colon)
            memmove(msg, colon + 2, strlen(colon + 2) + 1);
        char *paren = strrchr(msg, '(');
        if (paren && paren > msg && paren[-1] == ' ')
            paren[-1] = 0;
    }
    send_error(m, f->cl, f->cid, f->sess, code, msg);
}

/* Every reply the browser has given: to its client, in order. */
static void replies(cdp_mux *m)
{
    size_t keep = 0;
    for (size_t i = 0; i < m->nfwd; i++) {
        mux_fwd f = m->fwd[i];
        if (!cdp_reply_ready(m->c, f.gid)) {
            m->fwd[keep++] = f;
            continue;
        }
        cdp_reply rep = {0};
        cdp_err e = {0};
        int rc = cdp_wait(m->c, f.gid, 1, &rep, &e);
        if (rc == 0)
            send_result(m, &f, rep.result);
        else if (rc != CDP_EINVAL)
            send_failure(m, &f, rc, &e);
        cdp_reply_free(&rep);
    }
    m->nfwd = keep;
}

/* ---- events ---- */

/* An event as it goes to a client (new, NUL-terminated); NULL. */
static char *event_text(const char *session, const char *method, const json_val *p,
                        size_t *n)
{
    json_w w;
    json_w_init_secret(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "method");
    json_w_str(&w, method);
    if (p) {
        json_w_key(&w, "params");
        json_w_val(&w, p);
    }
    if (session && *session) {
        json_w_key(&w, "sessionId");
        json_w_str(&w, session);
    }
    json_w_obj_end(&w);
    char *s = json_w_take(&w, n);
    json_w_free(&w);
    return s;
}

static void send_event(cdp_mux *m, int k, const char *session, const char *method,
                       const json_val *p)
{
    size_t n = 0;
    char *s = event_text(session, method, p, &n);
    send_text(m, k, s, n);
}

/* A command of the router's own, its reply not waited for. */
static void send_own(cdp_mux *m, const char *session, const char *method, const char *key,
                     const char *val)
{
    char params[300];
    snprintf(params, sizeof params, "{\"%s\":\"%s\"}", key, val);
    uint64_t id = 0;
    if (cdp_send(m->c, session, method, params, &id, NULL) == 0)
        cdp_forget(m->c, id);
}

/* Answer a request client k's interception paused, for it: let it go on
 * (another client's: the owner's own interception judges it) or fail it
 * (an owner never known). rid is checked by the caller (< MUX_ID). */
static void answer_paused(cdp_mux *m, int k, bool auth, const char *rid, bool pass)
{
    char params[300];
    if (auth)
        snprintf(params, sizeof params, "{\"requestId\":\"%s\",\"authChallengeResponse\":"
                 "{\"response\":\"%s\"}}", rid, pass ? "Default" : "CancelAuth");
    else if (pass)
        snprintf(params, sizeof params, "{\"requestId\":\"%s\"}", rid);
    else
        snprintf(params, sizeof params, "{\"requestId\":\"%s\",\"errorReason\":"
                 "\"BlockedByClient\"}", rid);
    const char *method = auth ? "Fetch.continueWithAuth"
                       : pass ? "Fetch.continueRequest" : "Fetch.failRequest";
    uint64_t id = 0;
    if (cdp_send(m->c, m->cl[k].bs, method, params, &id, NULL) == 0)
        cdp_forget(m->c, id);
}

static void held_free(mux_held *h)
{
    if (h->text)
        base_memzero(h->text, h->n);
    free(h->text);
    h->text = NULL;
}

/* Hold a paused request of unknown owner for client k; failed at once
 * when it cannot be held. */
static void hold(cdp_mux *m, int k, bool auth, const char *rid, const char *frame,
                 const char *method, const json_val *p)
{
    size_t mine = 0;
    for (size_t i = 0; i < m->nheld; i++)
        mine += m->held[i].cl == k;
    void *v = mine < MUX_HOLD_MAX ? base_grow(m->held, m->nheld + 1, &m->capheld,
                                              sizeof *m->held, 16) : NULL;
    size_t n = 0;
    char *text = v ? event_text(NULL, method, p, &n) : NULL;
    if (v)
        m->held = v;
    if (!text) {
        answer_paused(m, k, auth, rid, false);
        return;
    }
    mux_held *h = &m->held[m->nheld++];
    memset(h, 0, sizeof *h);
    h->cl = k;
    h->auth = auth;
    h->until = base_now_ms() + MUX_HOLD_MS;
    snprintf(h->rid, sizeof h->rid, "%s", rid);
    snprintf(h->frame, sizeof h->frame, "%s", frame ? frame : "");
    h->text = text;
    h->n = n;
}

/* Held requests whose owner is now known go to it, or are continued for
 * their client; those held past their time, or of a client gone, are
 * failed (all: at the router's end). */
static void held_settle(cdp_mux *m, bool all)
{
    int64_t now = base_now_ms();
    size_t keep = 0;
    for (size_t i = 0; i < m->nheld; i++) {
        mux_held h = m->held[i];
        int o = owner(m, MS_FRM, h.frame);
        bool gone = !m->cl[h.cl].t || m->cl[h.cl].dead;
        if (gone || all || (o < 0 && now >= h.until)) {
            if (!gone)
                answer_paused(m, h.cl, h.auth, h.rid, false);
        } else if (o == h.cl) {
            send_text(m, h.cl, h.text, h.n);
            h.text = NULL;
        } else if (o >= 0) {
            answer_paused(m, h.cl, h.auth, h.rid, true);
        } else {
            m->held[keep++] = h;
            continue;
        }
        held_free(&h);
    }
    m->nheld = keep;
}

/* A paused request: to the client when the frame is its own; another
 * client's: continued here for this client (the owner's own interception
 * judges it); nobody's known yet: held (held_settle). */
static bool paused(cdp_mux *m, int k, const char *method, const json_val *p)
{
    const char *frame = json_get_str(p, "frameId");
    int o = owner(m, MS_FRM, frame);
    if (o == k)
        return true;
    const char *rid = json_get_str(p, "requestId");
    if (!rid || strlen(rid) >= MUX_ID)
        return false;
    bool auth = strcmp(method, "Fetch.authRequired") == 0;
    if (o >= 0)
        answer_paused(m, k, auth, rid, true);
    else if (!frame || strlen(frame) >= MUX_ID)
        answer_paused(m, k, auth, rid, false);
    else
        hold(m, k, auth, rid, frame, method, p);
    return false;
}

/* A target event on the router's own session (it discovers every target):
 * a target of a client's context is a frame of the client's (a worker's
 * requests name its target as their frame). */
static void root_event(cdp_mux *m, const char *method, const json_val *p)
{
    if (strcmp(method, "Target.targetCreated") != 0 &&
        strcmp(method, "Target.targetInfoChanged") != 0)
        return;
    const json_val *info = json_get(p, "targetInfo");
    int o = owner(m, MS_CTX, json_get_str(info, "browserContextId"));
    if (o >= 0)
        ids_add(&m->cl[o].own[MS_FRM], json_get_str(info, "targetId"));
}

/* A target event on the client's browser session: its own only. */
static bool target_event(cdp_mux *m, int k, const char *ev, const json_val *p)
{
    mux_client *cl = &m->cl[k];
    const json_val *info = json_get(p, "targetInfo");
    const char *tid = info ? json_get_str(info, "targetId") : json_get_str(p, "targetId");
    if (strcmp(ev, "targetCreated") == 0 || strcmp(ev, "targetInfoChanged") == 0 ||
        strcmp(ev, "attachedToTarget") == 0) {
        if (!info_own(cl, info)) {
            if (strcmp(ev, "attachedToTarget") == 0 && json_get_str(p, "sessionId"))
                send_own(m, cl->bs, "Target.detachFromTarget", "sessionId",
                         json_get_str(p, "sessionId"));
            return false;
        }
        ids_add(&cl->own[MS_TGT], tid);
        const char *type = json_get_str(info, "type");
        if (type && (strcmp(type, "page") == 0 || strcmp(type, "iframe") == 0))
            ids_add(&cl->own[MS_FRM], tid);
        if (strcmp(ev, "attachedToTarget") == 0)
            ids_add(&cl->own[MS_SES], json_get_str(p, "sessionId"));
        return true;
    }
    if (strcmp(ev, "detachedFromTarget") == 0) {
        const char *sid = json_get_str(p, "sessionId");
        bool mine = ids_has(&cl->own[MS_SES], sid);
        ids_del(&cl->own[MS_SES], sid);
        return mine;
    }
    bool mine = ids_has(&cl->own[MS_TGT], tid);
    if (strcmp(ev, "targetDestroyed") == 0)
        ids_del(&cl->own[MS_TGT], tid);
    return mine;     /* targetDestroyed, targetCrashed, receivedMessageFromTarget */
}

/* An event on the client's browser session: whether it goes to it. */
static bool browser_event(cdp_mux *m, int k, const char *method, const json_val *p)
{
    mux_client *cl = &m->cl[k];
    if (strncmp(method, "Target.", 7) == 0)
        return target_event(m, k, method + 7, p);
    if (strcmp(method, "Fetch.requestPaused") == 0 || strcmp(method, "Fetch.authRequired") == 0)
        return paused(m, k, method, p);
    if (strcmp(method, "Browser.downloadWillBegin") == 0) {
        if (!ids_has(&cl->own[MS_FRM], json_get_str(p, "frameId")))
            return false;
        ids_add(&cl->own[MS_DL], json_get_str(p, "guid"));
        return true;
    }
    if (strncmp(method, "Browser.download", 16) == 0)
        return ids_has(&cl->own[MS_DL], json_get_str(p, "guid"));
    return true;
}

/* What an event on one of the client's target sessions tells of ownership. */
static void learn_event(mux_client *cl, const char *method, const json_val *p)
{
    if (strcmp(method, "Target.attachedToTarget") == 0) {
        const json_val *info = json_get(p, "targetInfo");
        ids_add(&cl->own[MS_SES], json_get_str(p, "sessionId"));
        ids_add(&cl->own[MS_TGT], json_get_str(info, "targetId"));
        ids_add(&cl->own[MS_FRM], json_get_str(info, "targetId"));
    } else if (strcmp(method, "Target.detachedFromTarget") == 0) {
        ids_del(&cl->own[MS_SES], json_get_str(p, "sessionId"));
    } else if (strcmp(method, "Page.frameAttached") == 0) {
        ids_add(&cl->own[MS_FRM], json_get_str(p, "frameId"));
    } else if (strcmp(method, "Page.frameNavigated") == 0) {
        ids_add(&cl->own[MS_FRM], json_get_str(json_get(p, "frame"), "id"));
    }
}

static void on_event(void *ud, cdp_conn *c, const char *session, const char *method,
                     const json_val *p)
{
    cdp_mux *m = ud;
    cdp_event_consume(c);       /* no late waiters here: nothing kept */
    replies(m);                 /* what came before this event goes first */
    if (!session || !*session)
        root_event(m, method, p);
    for (int k = 0; session && *session && k < CDP_MUX_MAX; k++) {
        mux_client *cl = &m->cl[k];
        if (!cl->t || cl->dead)
            continue;
        if (strcmp(cl->bs, session) == 0) {
            if (browser_event(m, k, method, p))
                send_event(m, k, NULL, method, p);
            break;
        }
        if (ids_has(&cl->own[MS_SES], session)) {
            learn_event(cl, method, p);
            send_event(m, k, session, method, p);
            break;
        }
    }
    /* the router's own session, or nobody's: dropped */
    if (m->nheld)
        held_settle(m, false);     /* after the event that told the owner */
}

/* ---- a client's command ---- */

/* Browser-wide commands a client may send, and what they must name. */
enum { N_NONE, N_CTX, N_TGT, N_SES, N_DL };
static const struct {
    const char *method;
    int needs;
    int kind;
} BROWSER_CMDS[] = {
    {"Browser.getVersion", N_NONE, K_PLAIN},
    {"Browser.setDownloadBehavior", N_CTX, K_PLAIN},
    {"Browser.cancelDownload", N_DL, K_PLAIN},
    {"Target.createBrowserContext", N_NONE, K_CTX_NEW},
    {"Target.disposeBrowserContext", N_CTX, K_CTX_GONE},
    {"Target.createTarget", N_CTX, K_TARGET_NEW},
    {"Target.closeTarget", N_TGT, K_PLAIN},
    {"Target.activateTarget", N_TGT, K_PLAIN},
    {"Target.getTargetInfo", N_TGT, K_PLAIN},
    {"Target.attachToTarget", N_TGT, K_SESSION_NEW},
    {"Target.detachFromTarget", N_SES, K_PLAIN},
    {"Target.getTargets", N_NONE, K_TARGETS},
    {"Target.setDiscoverTargets", N_NONE, K_PLAIN},
    {"Storage.getCookies", N_CTX, K_PLAIN},
    {"Storage.setCookies", N_CTX, K_PLAIN},
    {"Storage.clearCookies", N_CTX, K_PLAIN},
    /* its browser session's own interception */
    {"Fetch.enable", N_NONE, K_PLAIN},
    {"Fetch.disable", N_NONE, K_PLAIN},
    {"Fetch.continueRequest", N_NONE, K_PLAIN},
    {"Fetch.continueWithAuth", N_NONE, K_PLAIN},
    {"Fetch.failRequest", N_NONE, K_PLAIN},
    {"Fetch.fulfillRequest", N_NONE, K_PLAIN},
};

/* Whatever the params name (a context, target, session) must be the
 * client's own. NULL when so, else why not. */
static const char *named_own(const mux_client *cl, const json_val *p)
{
    static const struct { const char *key; int set; const char *what; } K[] = {
        {"browserContextId", MS_CTX, "a browser context that is not this client's"},
        {"targetId", MS_TGT, "a target that is not this client's"},
        {"sessionId", MS_SES, "a session that is not this client's"},
    };
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
        const json_val *v = json_get(p, K[i].key);
        if (v && (!json_str(v, NULL) || !ids_has(&cl->own[K[i].set], json_str(v, NULL))))
            return K[i].what;
    }
    return NULL;
}

/* A command on the browser (no session): its kind, or NULL and why not. */
static const char *check_browser(const mux_client *cl, const char *method, const json_val *p,
                                 int *kind, char *arg)
{
    for (size_t i = 0; i < sizeof BROWSER_CMDS / sizeof BROWSER_CMDS[0]; i++) {
        if (strcmp(BROWSER_CMDS[i].method, method) != 0)
            continue;
        int nd = BROWSER_CMDS[i].needs;
        if ((nd == N_CTX && !json_get_str(p, "browserContextId")) ||
            (nd == N_TGT && !json_get_str(p, "targetId")) ||
            (nd == N_SES && !json_get_str(p, "sessionId")))
            return "it must name a browser context, target or session of this client's";
        if (nd == N_DL && !ids_has(&cl->own[MS_DL], json_get_str(p, "guid")))
            return "a download that is not this client's";
        *kind = BROWSER_CMDS[i].kind;
        if (*kind == K_CTX_GONE)
            snprintf(arg, MUX_ID, "%s", json_get_str(p, "browserContextId"));
        return NULL;
    }
    return "not a command a client of the shared browser may send";
}

/* A command on one of the client's target sessions. */
static const char *check_session(const mux_client *cl, const char *sess, const char *method)
{
    if (!ids_has(&cl->own[MS_SES], sess))
        return "a session that is not this client's";
    if (strncmp(method, "Browser.", 8) == 0)
        return "a browser-wide command";
    if (strncmp(method, "Target.", 7) == 0 && strcmp(method, "Target.setAutoAttach") != 0 &&
        strcmp(method, "Target.detachFromTarget") != 0 &&
        strcmp(method, "Target.getTargetInfo") != 0)
        return "a browser-wide command";
    return NULL;
}

static int64_t message_id(const json_val *root, bool *ok)
{
    int64_t id = 0;
    *ok = json_int(json_get(root, "id"), &id);
    return id;
}

/* Forward an accepted command; an error reply when it cannot be sent. */
static void forward(cdp_mux *m, int k, int64_t cid, const char *sess, const char *method,
                    const json_val *p, int kind, const char *arg)
{
    size_t n = 0;
    char *params = p ? json_write(p, &n) : NULL;
    uint64_t gid = 0;
    cdp_err e = {0};
    void *v = base_grow(m->fwd, m->nfwd + 1, &m->capfwd, sizeof *m->fwd, 64);
    int rc = !v || (p && !params) ? CDP_ENOMEM
             : cdp_send_secret(m->c, sess && *sess ? sess : m->cl[k].bs, method, params, &gid,
                               &e);
    if (params)
        base_memzero(params, n);
    free(params);
    if (v)
        m->fwd = v;
    if (rc) {
        send_error(m, k, cid, sess, -32000, rc == CDP_ENOMEM ? "out of memory" : e.msg);
        return;
    }
    mux_fwd *f = &m->fwd[m->nfwd++];
    memset(f, 0, sizeof *f);
    f->gid = gid;
    f->cid = cid;
    f->cl = k;
    f->kind = kind;
    snprintf(f->sess, sizeof f->sess, "%s", sess ? sess : "");
    snprintf(f->arg, sizeof f->arg, "%s", arg);
}

/* One message of client k. A message that is not a command ends it. */
static void command(cdp_mux *m, int k, const char *msg, size_t len)
{
    json_opts po = {.max_size = MUX_MSG_MAX, .max_depth = 256};
    json_doc *d = json_parse(msg, len, &po, NULL);
    if (d)
        json_doc_set_secret(d);
    const json_val *root = json_doc_root(d);
    bool ok = false;
    int64_t cid = message_id(root, &ok);
    const char *method = json_get_str(root, "method");
    const char *sess = json_get_str(root, "sessionId");
    const json_val *p = json_get(root, "params");
    if (!d || !ok || !method || (p && !json_is(p, JSON_OBJECT)) ||
        (sess && strlen(sess) >= MUX_ID)) {
        m->cl[k].dead = true;
        json_doc_free(d);
        return;
    }
    int kind = K_PLAIN;
    char arg[MUX_ID] = "";
    const char *no = named_own(&m->cl[k], p);
    if (!no)
        no = sess && *sess ? check_session(&m->cl[k], sess, method)
                           : check_browser(&m->cl[k], method, p, &kind, arg);
    if (!no && sess && *sess && strcmp(method, "Page.getFrameTree") == 0)
        kind = K_FRAMES;
    if (no) {
        char why[400];
        snprintf(why, sizeof why, "cdpgate: %.100s refused on the shared browser: %s", method,
                 no);
        m->refused++;
        send_error(m, k, cid, sess, -32000, why);
    } else {
        forward(m, k, cid, sess, method, p, kind, arg);
    }
    json_doc_free(d);
}

/* What client k sent, up to a burst. */
static void client_read(cdp_mux *m, int k)
{
    mux_client *cl = &m->cl[k];
    for (int i = 0; i < MUX_BURST && cl->t && !cl->dead; i++) {
        const char *msg = NULL;
        size_t len = 0;
        int r = ws_transport_recv(cl->t, &msg, &len, 0);
        if (r == WS_ETIMEOUT)
            return;
        if (r != WS_OK) {
            cl->dead = true;
            return;
        }
        command(m, k, msg, len);
        if (cl->t)
            ws_transport_wipe(cl->t);
    }
}

/* ---- the router ---- */

cdp_mux *cdp_mux_new(cdp_conn *c, cdp_err *err)
{
    cdp_mux *m = calloc(1, sizeof *m);
    if (!m) {
        cdp_seterr(err, CDP_ENOMEM, "out of memory");
        return NULL;
    }
    m->c = c;
    if (cdp_listen(c, on_event, m)) {
        free(m);
        cdp_seterr(err, CDP_ELIMIT, "too many listeners on the connection");
        return NULL;
    }
    /* Every target's creation, with its context, on the router's session
     * (root_event): the owner of a worker's requests. */
    if (cdp_call(c, NULL, "Target.setDiscoverTargets", "{\"discover\":true}", 20000, NULL,
                 err)) {
        cdp_unlisten(c, on_event, m);
        free(m);
        return NULL;
    }
    return m;
}

/* The client's browser session (Target.attachToBrowserTarget). */
static int browser_session(cdp_mux *m, mux_client *cl, cdp_err *err)
{
    cdp_reply r = {0};
    int rc = cdp_call(m->c, NULL, "Target.attachToBrowserTarget", NULL, 20000, &r, err);
    const char *sid = rc ? NULL : json_get_str(r.result, "sessionId");
    if (!rc && (!sid || strlen(sid) >= MUX_ID))
        rc = cdp_seterr(err, CDP_EBADMSG, "Target.attachToBrowserTarget: no session");
    if (!rc)
        snprintf(cl->bs, sizeof cl->bs, "%s", sid);
    cdp_reply_free(&r);
    if (!rc && !cdp_target_by_session(m->c, cl->bs)) {
        /* The browser says nothing of this session: made known to the
         * connection as the browser would (commands on it are then sent). */
        char ev[400];
        int n = snprintf(ev, sizeof ev, "{\"method\":\"Target.attachedToTarget\",\"params\":"
                         "{\"sessionId\":\"%s\",\"targetInfo\":{\"targetId\":\"browser\","
                         "\"type\":\"browser\",\"url\":\"\",\"browserContextId\":\"\"}}}",
                         cl->bs);
        rc = cdp_conn_inject(m->c, ev, (size_t)n, err);
    }
    return rc;
}

int cdp_mux_add(cdp_mux *m, int fd, cdp_err *err)
{
    int k = 0;
    while (k < CDP_MUX_MAX && (m->cl[k].t || m->cl[k].held))
        k++;
    int fd2 = k < CDP_MUX_MAX && fd >= 0 ? dup(fd) : -1;
    ws_transport *t = fd2 >= 0 ? ws_transport_pipe(fd, fd2, MUX_MSG_MAX) : NULL;
    if (!t) {
        if (fd2 >= 0)
            close(fd2);
        if (fd >= 0)
            close(fd);
        return cdp_seterr(err, CDP_ELIMIT, "no room for another client (%d at most)",
                          CDP_MUX_MAX);
    }
    int buf = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    mux_client *cl = &m->cl[k];
    memset(cl, 0, sizeof *cl);
    int rc = browser_session(m, cl, err);
    if (rc) {
        ws_transport_free(t);
        return rc;
    }
    cl->t = t;
    cl->fd = fd;
    return k;
}

/* Client k's end: its contexts disposed (their pages close), its
 * session detached, its pending calls forgotten, its queue zeroed. The
 * slot stays held until the host drops it (cdp_mux_drop), so a new client
 * never takes the slot of one the host has not seen end. */
static void client_end(cdp_mux *m, int k)
{
    mux_client *cl = &m->cl[k];
    if (!cl->t)
        return;
    if (!cdp_conn_dead(m->c)) {
        for (size_t i = 0; i < cl->own[MS_CTX].n; i++)
            send_own(m, NULL, "Target.disposeBrowserContext", "browserContextId",
                     cl->own[MS_CTX].v[i]);
        send_own(m, NULL, "Target.detachFromTarget", "sessionId", cl->bs);
    }
    size_t keep = 0;
    for (size_t i = 0; i < m->nfwd; i++) {
        if (m->fwd[i].cl == k)
            cdp_forget(m->c, m->fwd[i].gid);
        else
            m->fwd[keep++] = m->fwd[i];
    }
    m->nfwd = keep;
    cl->dead = true;
    held_settle(m, false);      /* its held requests: dropped (its session goes) */
    ws_transport_free(cl->t);
    for (int s = 0; s < MS_N; s++)
        ids_free(&cl->own[s]);
    if (cl->q)
        base_memzero(cl->q, cl->qcap);
    free(cl->q);
    memset(cl, 0, sizeof *cl);
    cl->held = true;
}

void cdp_mux_drop(cdp_mux *m, int k)
{
    if (!m || k < 0 || k >= CDP_MUX_MAX)
        return;
    client_end(m, k);
    m->cl[k].held = false;
}

static void drop_dead(cdp_mux *m, bool all)
{
    for (int k = 0; k < CDP_MUX_MAX; k++)
        if (m->cl[k].t && (all || m->cl[k].dead))
            client_end(m, k);
}

int cdp_mux_run(cdp_mux *m, int timeout_ms, cdp_err *err)
{
    struct pollfd pf[CDP_MUX_MAX + 1];
    int slot[CDP_MUX_MAX + 1];
    nfds_t n = 0;
    pf[n++] = (struct pollfd){.fd = cdp_conn_fd(m->c), .events = POLLIN};
    for (int k = 0; k < CDP_MUX_MAX; k++)
        if (m->cl[k].t) {
            if (ws_transport_ready(m->cl[k].t))
                timeout_ms = 0;
            slot[n] = k;
            short ev = POLLIN | (m->cl[k].qoff < m->cl[k].qlen ? POLLOUT : 0);
            pf[n++] = (struct pollfd){.fd = m->cl[k].fd, .events = ev};
        }
    if (poll(pf, n, timeout_ms) < 0 && errno != EINTR)
        return cdp_seterr(err, CDP_EDISCONNECTED, "poll: %s", strerror(errno));
    int rc = 0;
    if (pf[0].revents && (rc = cdp_pump(m->c, 0, err)) != 0) {
        drop_dead(m, true);
        return rc;
    }
    replies(m);
    if (m->nheld)
        held_settle(m, false);  /* learnt from a reply; or held too long */
    for (nfds_t i = 1; i < n; i++) {
        mux_client *cl = &m->cl[slot[i]];
        if (cl->t && (pf[i].revents & POLLOUT))
            flush(cl);
        if (cl->t && ((pf[i].revents & ~POLLOUT) || ws_transport_ready(cl->t)))
            client_read(m, slot[i]);
    }
    drop_dead(m, false);
    if (cdp_conn_dead(m->c)) {
        drop_dead(m, true);
        return cdp_seterr(err, CDP_EDISCONNECTED, "%s", cdp_conn_error(m->c));
    }
    return 0;
}

size_t cdp_mux_refused(const cdp_mux *m) { return m ? m->refused : 0; }

void cdp_mux_free(cdp_mux *m)
{
    if (!m)
        return;
    for (int k = 0; k < CDP_MUX_MAX; k++)
        cdp_mux_drop(m, k);
    held_settle(m, true);
    free(m->held);
    cdp_unlisten(m->c, on_event, m);
    free(m->fwd);
    free(m);
}
