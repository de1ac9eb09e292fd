/*
 * agent_wait.c — waiting for the consequences of an action (snap_settle): navigations,
 * network quiet, dialogs and popups, event-driven and bounded.
 *
 * Part of snapshot/ (see agent_int.h for what the agent* files share).
 */
#include "snapshot/agent_int.h"
#include "snapshot/page_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- waiting for consequences ---- */

/* Quiet window: how long nothing must happen (no navigation, no request,
 * no new tab) before an action is taken to have settled. It is a window
 * measured from the last event, not a fixed sleep: a click with no effect
 * costs one window; a click that navigates waits for the load, then one
 * window (which is what catches script and meta redirects). */
#define QUIET_MS 30
/* After a click whose page reported its next frame, with nothing else
 * seen: what a click's consequences (a navigation, a request, a popup)
 * start within is taken by then. */
#define QUICK_QUIET_MS 8

/* ---- the requests in flight on a tab ---- */

/* An answered request whose body still loads holds a settle while it was
 * heard of this recently; one not heard of for ANSWERED_KEEP_MS is
 * forgotten (a fetch whose body the page never reads is never reported
 * finished). */
#define ANSWERED_QUIET_MS 200
#define ANSWERED_KEEP_MS 2000
/* A request with no answer after this long (a long poll, a request the
 * server holds; every settle is over by then) is forgotten: it is no
 * longer named as pending. */
#define UNANSWERED_KEEP_MS 60000

/* Implementation notes. A page that polls its server every fraction of a
 * second, holds a long poll or streams analytics is never network-quiet:
 * waiting for quiet would wait out every deadline. So a settle waits only
 * for the action's own requests (snap_req.own: started while the main
 * frame loaded, right after a state-changing command, or chained right
 * after another own request's end), and at most SNAP_SETTLE_CAP_MS after
 * the input or the load; what is still out when it ends is named in the
 * result. The gate's interception (sink.c, Fetch) sees every request
 * whatever this table says: settling decides only how long to wait. */

static snap_req *req_find(snap_tab *t, const char *id)
{
    for (size_t i = 0; i < t->nreqs; i++)
        if (strcmp(t->reqs[i].id, id) == 0)
            return &t->reqs[i];
    return NULL;
}

/* url up to its query or fragment (new; NULL when out of memory). */
static char *url_cut(const char *url)
{
    size_t n = strcspn(url, "?#");
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, url, n);
        c[n] = 0;
    }
    return c;
}

static void req_drop(snap_tab *t, size_t i)
{
    free(t->reqs[i].url);
    t->reqs[i] = t->reqs[--t->nreqs];
}

/* Forget answered requests not heard of for ANSWERED_KEEP_MS (a response
 * whose body the page never reads), requests of an earlier document (a
 * keepalive fetch outlives its page: issue 13 review F2) and unanswered
 * ones after UNANSWERED_KEEP_MS. */
static void req_sweep(snap_tab *t, int64_t now)
{
    for (size_t i = t->nreqs; i > 0; i--) {
        const snap_req *q = &t->reqs[i - 1];
        if ((q->answered && now - q->last_ms > ANSWERED_KEEP_MS) || q->nav != t->nav ||
            now - q->start_ms > UNANSWERED_KEEP_MS)
            req_drop(t, i - 1);
    }
}

/* Room for one more request: when the table is full, the oldest request
 * that no settle waits for (not own, or own but older than any settle
 * lasts) makes way, so a page's pile of requests never keeps the action's
 * out; false when every one may still be waited for. */
static bool req_room(snap_tab *t, int64_t now)
{
    if (t->nreqs < SNAP_REQ_MAX)
        return true;
    size_t old = SNAP_REQ_MAX;
    for (size_t i = 0; i < t->nreqs; i++) {
        const snap_req *q = &t->reqs[i];
        if ((!q->own || now - q->start_ms > SNAP_SETTLE_CAP_MS) &&
            (old == SNAP_REQ_MAX || q->start_ms < t->reqs[old].start_ms))
            old = i;
    }
    if (old == SNAP_REQ_MAX)
        return false;
    req_drop(t, old);
    return true;
}

static void req_start(snap_agent *a, snap_tab *t, const char *id, const json_val *p,
                      int64_t now)
{
    const json_val *rq = json_get(p, "request");
    const char *url = json_get_str(rq, "url");
    snap_req *q = req_find(t, id);
    if (q) {                     /* a redirect: the same request, a new URL */
        free(q->url);
        q->url = url ? url_cut(url) : NULL;
        return;
    }
    bool own = t->loading || now <= a->own_until;
    if (own) {
        t->own_seq++;
        t->settle_evt++;
    }
    if (!t->reqs)
        t->reqs = calloc(SNAP_REQ_MAX, sizeof *t->reqs);
    req_sweep(t, now);
    if (!t->reqs || !req_room(t, now)) {
        t->reqs_lost++;
        return;
    }
    q = &t->reqs[t->nreqs++];
    memset(q, 0, sizeof *q);
    snap_agent_copyid(q->id, id);
    const char *m = json_get_str(rq, "method"), *type = json_get_str(p, "type");
    snprintf(q->method, sizeof q->method, "%s", m ? m : "GET");
    for (char *c = q->method; *c; c++)      /* an HTTP token, shown as is */
        if (!strchr("!#$%&'*+-.^_`|~", *c) && !(*c >= '0' && *c <= '9') &&
            !(*c >= 'A' && *c <= 'Z') && !(*c >= 'a' && *c <= 'z'))
            *c = '?';
    snprintf(q->type, sizeof q->type, "%s", type ? type : "");
    /* While the human has control the model is told a request's origin
     * alone (docs/gate.md "What is shown of a page's request"). */
    q->human = a->gate && gate_mode(a->gate) == GATE_MODE_HUMAN;
    q->url = !url ? NULL : q->human ? snap_request_origin_shown(a, url) : url_cut(url);
    q->start_ms = q->last_ms = now;
    q->nav = t->nav;
    q->own = own;
}

void snap_net_event(snap_agent *a, snap_tab *t, const char *method, const json_val *p)
{
    const char *id = json_get_str(p, "requestId");
    if (!id)
        return;
    int64_t now = base_now_ms();
    if (strcmp(method, "Network.requestWillBeSent") == 0) {
        const json_val *rr = json_get(p, "redirectResponse");
        if (rr)                  /* the action's link or form answered elsewhere */
            snap_dl_redirect(a, t->id, json_get_str(rr, "url"),
                             json_get_str(json_get(p, "request"), "url"));
        req_start(a, t, id, p, now);
        return;
    }
    snap_req *q = req_find(t, id);
    if (!q)
        return;
    bool done = strcmp(method, "Network.loadingFinished") == 0 ||
                strcmp(method, "Network.loadingFailed") == 0;
    bool answer = done || strcmp(method, "Network.responseReceived") == 0;
    q->last_ms = now;
    if (!done && !(answer && !q->answered))
        return;
    q->answered = true;
    if (q->own && !done)         /* an attachment: the browser will start a download */
        snap_dl_response(a, t->id, json_get(p, "response"));
    if (q->own) {
        /* What the answer's handler sends next is the action's too. */
        if (a->own_until < now + SNAP_CHAIN_MS)
            a->own_until = now + SNAP_CHAIN_MS;
        t->settle_evt++;
    }
    if (done)
        req_drop(t, (size_t)(q - t->reqs));
}

void snap_net_clear(snap_tab *t)
{
    for (size_t i = 0; i < t->nreqs; i++)
        free(t->reqs[i].url);
    free(t->reqs);
    t->reqs = NULL;
    t->nreqs = 0;
}

/* Own requests of t started since since_ms and still out: not answered,
 * or answered and still loading with news in the last ANSWERED_QUIET_MS. */
static size_t own_out(const snap_tab *t, int64_t since_ms, int64_t now)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nreqs; i++) {
        const snap_req *q = &t->reqs[i];
        n += q->own && q->start_ms >= since_ms &&
             (!q->answered || now - q->last_ms < ANSWERED_QUIET_MS);
    }
    return n;
}

/* Name what is still out (not answered) in *out: own requests first. */
static void pending_fill(const snap_tab *t, int64_t since_ms, snap_settled *out)
{
    for (size_t i = 0; i < t->nreqs; i++)
        out->npending += !t->reqs[i].answered && t->reqs[i].nav == t->nav;
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < t->nreqs && k < 4; i++) {
            const snap_req *q = &t->reqs[i];
            if (q->answered || q->nav != t->nav)
                continue;
            bool own = q->own && q->start_ms >= since_ms;
            if (own != (pass == 0))
                continue;
            snprintf(out->pending[k].method, sizeof out->pending[k].method, "%s", q->method);
            snprintf(out->pending[k].type, sizeof out->pending[k].type, "%s", q->type);
            /* Cut on a character boundary: the URL is shown. */
            size_t n = q->url ? strlen(q->url) : 0, cap = sizeof out->pending[k].url - 1;
            if (n > cap) {
                n = cap;
                while (n > 0 && ((unsigned char)q->url[n] & 0xc0) == 0x80)
                    n--;
            }
            if (n)
                memcpy(out->pending[k].url, q->url, n);
            out->pending[k].url[n] = 0;
            out->pending[k].own = own;
            k++;
        }
    }
}

/* Does the page say it will navigate shortly by itself? */
static bool redirect_pending(snap_agent *a, snap_tab *t)
{
    if (!t->nframes || !t->frames[0].url || (strncmp(t->frames[0].url, "http:", 5) != 0 &&
                                              strncmp(t->frames[0].url, "https:", 6) != 0))
        return false;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "expression");
    json_w_str(&w, snap_js_redirect_expr);
    json_w_key(&w, "returnByValue");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    cdp_reply rep = {0};
    int rc = params ? snap_cdp_call(a, t->session, "Runtime.evaluate", params, 2000, &rep,
                                    NULL) : CDP_ENOMEM;
    free(params);
    bool pending = false;
    if (rc == 0) {
        const json_val *v = json_get(json_get(rep.result, "result"), "value");
        double delay = json_num(json_first(v));
        bool small = json_bool(json_next(json_first(v)));
        bool words = json_bool(json_next(json_next(json_first(v))));
        pending = (delay > 0 && delay * 1000 <= REDIRECT_WINDOW_MS) || (small && words);
    }
    cdp_reply_free(&rep);
    return pending;
}

static int settle_once(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                       int64_t deadline_ms, uint64_t frame_call, snap_settled *out);

int snap_settle(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                int64_t deadline_ms, snap_settled *out)
{
    return snap_settle_frame(a, t, since_nav, tabs_before, deadline_ms, 0, out);
}

int snap_settle_frame(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                      int64_t deadline_ms, uint64_t frame_call, snap_settled *out)
{
    int tab_id = t->id;
    int rc = settle_once(a, t, since_nav, tabs_before, deadline_ms, frame_call, out);
    for (int hop = 0; rc == 0 && hop < REDIRECT_HOPS; hop++) {
        t = snap_tab_by_id(a, tab_id);
        if (!t || !out->navigated || out->dialog || out->closed || out->timed_out)
            break;
        uint64_t nav = t->nav;
        if (!redirect_pending(a, t))
            break;
        /* Wait for the navigation the page scheduled to start. */
        int64_t until = base_now_ms() + REDIRECT_WINDOW_MS;
        if (until > deadline_ms)
            until = deadline_ms;
        bool started = false;
        for (;;) {
            if (snap_sync(a))
                return SNAP_EBROWSER;
            t = snap_tab_by_id(a, tab_id);
            if (!t || t->closed || t->dialog_open || t->loading || t->nav != nav) {
                started = true;
                break;
            }
            int64_t now = base_now_ms();
            if (now >= until)
                break;
            cdp_err e;
            int prc = cdp_pump_one(a->c, (int)(until - now), &e);
            if (prc && prc != CDP_ETIMEOUT)
                return SNAP_EBROWSER;
        }
        if (!started || !t)
            break;
        snap_settled more;
        rc = settle_once(a, t, since_nav, tabs_before, deadline_ms, 0, &more);
        if (rc == 0)
            *out = more;
    }
    return rc;
}

static int settle_once(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                       int64_t deadline_ms, uint64_t frame_call, snap_settled *out)
{
    memset(out, 0, sizeof *out);
    int tab_id = t->id;
    uint64_t last_evt = t->settle_evt;
    size_t last_tabs = a->ntabs;
    int64_t quiet_from = base_now_ms();
    /* The cap counts from the start, and again from the end of a load. */
    int64_t cap_from = quiet_from;
    bool was_loading = t->loading;
    /* The action's own requests are those since its last input. */
    int64_t since_ms = a->input_ms > 0 && a->input_ms <= quiet_from ? a->input_ms : quiet_from;
    /* The short window holds while the tab has shown no consequence. */
    bool quick = frame_call != 0;
    for (;;) {
        /* The time a human took to answer a request's confirmation is not
         * the action's: the wait is extended by it. */
        int64_t asked0 = a->asked_ms;
        if (snap_sync(a))
            return SNAP_EBROWSER;
        deadline_ms += a->asked_ms - asked0;
        cap_from += a->asked_ms - asked0;
        t = snap_tab_by_id(a, tab_id);      /* adoption may move the array */
        if (!t || t->closed) {
            out->closed = true;
            break;
        }
        if (t->dialog_open) {
            out->dialog = true;
            break;
        }
        int64_t now = base_now_ms();
        if (t->settle_evt != last_evt || a->ntabs != last_tabs) {
            last_evt = t->settle_evt;
            last_tabs = a->ntabs;
            quiet_from = now;
            quick = false;
        }
        if (t->loading)
            was_loading = true;
        else if (was_loading) {
            was_loading = false;
            cap_from = now;
        }
        /* A download the action started is its consequence too. */
        bool own = own_out(t, since_ms, now) > 0 || snap_dl_busy(a, tab_id, since_ms);
        if (t->loading || own)
            quick = false;
        bool framed = quick && cdp_reply_ready(a->c, frame_call);
        int quiet = framed ? QUICK_QUIET_MS : QUIET_MS;
        if (!t->loading && !own && now - quiet_from >= quiet)
            break;
        if (now >= deadline_ms) {
            out->timed_out = true;
            break;
        }
        int64_t cap = cap_from + SNAP_SETTLE_CAP_MS;
        if (!t->loading && now >= cap) {
            out->capped = true;
            break;
        }
        /* Sleep in the read until the next message, the end of the quiet
         * window or of the cap, or (while loading) a re-check. */
        int64_t wake = quiet_from + quiet;
        if (quick && !framed && wake > now + 1)
            wake = now + 1 + (wake - now - 1) / 2;   /* look for the frame sooner */
        if (own)
            wake = now + 50 < cap ? now + 50 : cap;   /* answered ones go quiet */
        if (t->loading)
            wake = now + 50;
        if (wake > deadline_ms)
            wake = deadline_ms;
        cdp_err e;
        int rc = cdp_pump_one(a->c, wake > now ? (int)(wake - now) : 1, &e);
        if (rc && rc != CDP_ETIMEOUT)
            return SNAP_EBROWSER;
    }
    t = snap_tab_by_id(a, tab_id);
    if (t)
        pending_fill(t, since_ms, out);
    snap_dl_settled(a, tab_id, since_ms, out);
    if (frame_call)
        cdp_forget(a->c, frame_call);    /* answered or not, nobody reads it */
    t = snap_tab_by_id(a, tab_id);
    out->navigated = t && t->nav != since_nav;
    for (size_t i = tabs_before; i < a->ntabs && out->nnew < 8; i++)
        if (!a->tabs[i].closed)
            out->new_tabs[out->nnew++] = a->tabs[i].id;
    return 0;
}
