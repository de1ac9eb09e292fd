/*
 * sink.c — the one path from the agent to the browser.
 *
 * Every CDP command the snapshot module sends leaves through snap_cdp_send
 * (or its call/sink variants) here; no other file of snapshot/ or cli/
 * calls cdp_send or cdp_call (tests/checksink.sh fails the build
 * otherwise). Each method is looked up in METHODS:
 *   - reading and setup methods go out as they are;
 *   - state-changing methods (Input.*, navigation, dialogs, tabs, cookies,
 *     request continuations) go out only under a permit naming one of the
 *     tools the table allows for that method. Permits are set by
 *     snap_permit_begin after the gate allowed the action (policy.c) and by
 *     the agent's own housekeeping (restoring a granted session, closing
 *     its tabs at the end);
 *   - Runtime.evaluate and Runtime.callFunctionOn run only scripts compiled
 *     into the binary: the expression or function must be one of the
 *     registered scripts (snap_act_scripts and the others), a template's
 *     middle must be a JSON value (data, never code), and a script that
 *     changes the page needs a permit like any state change;
 *   - any other method is refused (fail closed).
 * A refused command fails like a protocol error with "refused at the sink"
 * in the message; it never reaches the browser.
 *
 * The page's own network requests: when a grant is in force, the browser
 * session intercepts every request of every resource type (Fetch.enable at
 * the browser level sees the navigations, redirects, popups, frames, form
 * posts, subresources, reports and prefetches of every target before they
 * leave); each paused request is classified by its type (request_kind),
 * attributed to a context (privileged or not) and judged by gate_check_net,
 * and continued or failed from inside the event listener, so nothing
 * waits on the agent. A privileged context is also created with a network
 * rule (snap_sink_context_params: a proxy that cannot work, bypassed only
 * for the grant's hosts), which stops in the browser what Fetch cannot
 * pause (WebSockets, <link rel=prefetch>); its WebSockets are audited from
 * Network.webSocketCreated (snap_sink_socket). Refusals are audited by the
 * gate and kept per tab for the next result to report.
 */
#include "snapshot/snap_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate.h"

/* Tool sets for permits (bit per tool name in PERMIT_TOOLS). */
enum {
    P_OPEN = 1 << 0,
    P_CLICK = 1 << 1,
    P_TYPE = 1 << 2,
    P_SELECT = 1 << 3,
    P_PRESS = 1 << 4,
    P_SCROLL = 1 << 5,
    P_BACK = 1 << 6,
    P_TABS = 1 << 7,
    P_DIALOG = 1 << 8,
    P_LOGIN = 1 << 9,
    P_RESTORE = 1 << 10,    /* restoring a granted session into its context */
    P_TEARDOWN = 1 << 11,   /* closing the agent's own tabs and contexts */
    P_EVAL = 1 << 12,
    P_UPLOAD = 1 << 13,
    P_SCREENSHOT = 1 << 14,
    P_HOVER = 1 << 15,
};
#define P_INPUT (P_CLICK | P_TYPE | P_SELECT | P_PRESS | P_SCROLL | P_HOVER)
#define P_ANY 0xffff

static const struct {
    const char *name;
    unsigned bit;
} PERMIT_TOOLS[] = {
    {"open", P_OPEN}, {"click", P_CLICK}, {"type", P_TYPE}, {"select", P_SELECT},
    {"press", P_PRESS}, {"scroll", P_SCROLL}, {"back", P_BACK}, {"tabs", P_TABS},
    {"dialog", P_DIALOG}, {"login", P_LOGIN}, {"restore", P_RESTORE},
    {"teardown", P_TEARDOWN}, {"eval", P_EVAL}, {"upload", P_UPLOAD},
    {"screenshot", P_SCREENSHOT}, {"hover", P_HOVER},
};

/* need 0: free (reading, setup). Anything not listed is refused. */
static const struct {
    const char *method;
    unsigned need;
} METHODS[] = {
    {"Accessibility.getFullAXTree", 0},
    {"Accessibility.getPartialAXTree", 0},
    {"DOM.describeNode", 0},
    {"DOM.getBoxModel", 0},
    {"DOM.getContentQuads", 0},
    {"DOM.getFrameOwner", 0},
    {"DOM.getNodeForLocation", 0},
    {"DOM.resolveNode", 0},
    {"DOMSnapshot.captureSnapshot", 0},
    {"Network.enable", 0},
    {"Page.captureScreenshot", 0},
    {"Page.enable", 0},
    {"Page.getFrameTree", 0},
    {"Page.getLayoutMetrics", 0},
    {"Page.getNavigationHistory", 0},
    {"Page.setLifecycleEventsEnabled", 0},
    {"Runtime.getProperties", 0},
    {"Runtime.releaseObject", 0},
    {"Runtime.releaseObjectGroup", 0},
    {"Storage.getCookies", 0},
    {"Target.attachToTarget", 0},
    {"Target.createBrowserContext", 0},
    {"Target.getTargets", 0},
    {"Target.setAutoAttach", 0},
    {"Target.setDiscoverTargets", 0},
    /* state changes */
    {"DOM.scrollIntoViewIfNeeded", 0},     /* scrolling is reading (class read) */
    {"DOM.setFileInputFiles", P_UPLOAD},
    {"Fetch.disable", P_RESTORE},
    {"Fetch.enable", P_RESTORE},
    {"Fetch.fulfillRequest", P_RESTORE},
    {"Input.dispatchKeyEvent", P_INPUT},
    {"Input.dispatchMouseEvent", P_INPUT},
    {"Input.insertText", P_TYPE | P_SELECT},
    {"Page.handleJavaScriptDialog", P_DIALOG | P_TEARDOWN},
    {"Page.navigate", P_OPEN | P_RESTORE | P_LOGIN},
    {"Page.navigateToHistoryEntry", P_BACK},
    {"Page.resetNavigationHistory", P_OPEN | P_LOGIN},
    {"Storage.setCookies", P_RESTORE},
    {"Target.activateTarget", P_TABS},
    {"Target.closeTarget", P_TABS | P_TEARDOWN},
    {"Target.createTarget", P_OPEN | P_LOGIN},
    {"Target.disposeBrowserContext", P_TEARDOWN | P_LOGIN},
};

#define M_RUNTIME_EVAL "Runtime.evaluate"
#define M_RUNTIME_CALL "Runtime.callFunctionOn"

static unsigned permit_bit(const char *tool)
{
    for (size_t i = 0; tool && i < sizeof PERMIT_TOOLS / sizeof PERMIT_TOOLS[0]; i++)
        if (strcmp(PERMIT_TOOLS[i].name, tool) == 0)
            return PERMIT_TOOLS[i].bit;
    return 0;
}

void snap_permit_begin(snap_agent *a, const char *tool)
{
    snprintf(a->permit, sizeof a->permit, "%s", tool ? tool : "");
}

void snap_permit_end(snap_agent *a)
{
    a->permit[0] = 0;
}

static int refuse(cdp_err *e, const char *fmt, const char *what, const char *permit)
{
    if (e) {
        e->code = CDP_EPROTOCOL;
        e->protocol_code = 0;
        snprintf(e->msg, sizeof e->msg, fmt, what, *permit ? permit : "none");
    }
    return CDP_EPROTOCOL;
}

/* The script tables of the files that run page scripts. */
static const snap_js *const *script_tables(void)
{
    static const snap_js *const T[] = {snap_act_scripts, snap_agent_scripts,
                                       snap_session_scripts, snap_policy_scripts, NULL};
    return T;
}

/* The registered script src is (template: prefix + JSON value + suffix;
 * secret: that value holds session data, wiped after the check). */
static const snap_js *script_find(const char *src, bool secret)
{
    size_t n = strlen(src);
    for (const snap_js *const *t = script_tables(); *t; t++) {
        for (const snap_js *s = *t; s->src; s++) {
            if (!s->suffix) {
                if (strcmp(s->src, src) == 0)
                    return s;
                continue;
            }
            size_t pl = strlen(s->src), sl = strlen(s->suffix);
            if (n < pl + sl || memcmp(src, s->src, pl) != 0 ||
                memcmp(src + n - sl, s->suffix, sl) != 0)
                continue;
            json_opts po = {0};
            po.flags = secret ? JSON_SECRET : 0;
            json_doc *d = json_parse(src + pl, n - pl - sl, &po, NULL);
            bool data = d != NULL;
            json_doc_free(d);
            if (data)
                return s;
        }
    }
    return NULL;
}

/* 0 when method may go out now, else CDP_EPROTOCOL with e filled. secret:
 * params carry session values (the copy parsed here is wiped). */
static int sink_check(snap_agent *a, const char *method, const char *params, bool secret,
                      cdp_err *e)
{
    unsigned have = permit_bit(a->permit);
    bool rt_eval = strcmp(method, M_RUNTIME_EVAL) == 0;
    if (rt_eval || strcmp(method, M_RUNTIME_CALL) == 0) {
        json_opts po = {0};
        po.flags = secret ? JSON_SECRET : 0;
        json_doc *d = params ? json_parse(params, strlen(params), &po, NULL) : NULL;
        const char *src = d ? json_get_str(json_doc_root(d),
                                           rt_eval ? "expression" : "functionDeclaration")
                            : NULL;
        const snap_js *s = src ? script_find(src, secret) : NULL;
        unsigned flags = s ? s->flags : 0;
        json_doc_free(d);
        /* The one exception: the eval tool, which the grant must name and
         * the human confirms every time (policy.c asked the gate). */
        if (!s && rt_eval && (have & P_EVAL))
            return 0;
        if (!s)
            return refuse(e, "%s refused at the sink: the script is not one compiled "
                          "into cdpgate (permit: %s)", method, a->permit);
        if ((flags & SNAP_JS_WRITE) && !have)
            return refuse(e, "%s refused at the sink: the script changes the page and "
                          "no action is permitted (permit: %s)", method, a->permit);
        return 0;
    }
    for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++) {
        if (strcmp(METHODS[i].method, method) != 0)
            continue;
        if (METHODS[i].need == 0 || (METHODS[i].need & have))
            return 0;
        return refuse(e, "%s refused at the sink: it changes state and the action in "
                      "progress does not permit it (permit: %s)", method, a->permit);
    }
    return refuse(e, "%s refused at the sink: not a method cdpgate sends (permit: %s)",
                  method, a->permit);
}

int snap_cdp_send(snap_agent *a, const char *session, const char *method, const char *params,
                  uint64_t *id, cdp_err *e)
{
    int rc = sink_check(a, method, params, false, e);
    if (rc) {
        *id = 0;
        return rc;
    }
    return cdp_send(a->c, session, method, params, id, e);
}

int snap_cdp_send_sink(snap_agent *a, const char *session, const char *method,
                       const char *params, cdp_sink_fn fn, void *ud, uint64_t *id, cdp_err *e)
{
    int rc = sink_check(a, method, params, false, e);
    if (rc) {
        *id = 0;
        return rc;
    }
    return cdp_send_sink(a->c, session, method, params, fn, ud, id, e);
}

int snap_cdp_call_secret(snap_agent *a, const char *session, const char *method,
                         const char *params, int timeout_ms, cdp_reply *out, cdp_err *e)
{
    if (out)
        memset(out, 0, sizeof *out);
    int rc = sink_check(a, method, params, true, e);
    if (rc)
        return rc;
    return cdp_call_secret(a->c, session, method, params, timeout_ms, out, e);
}

int snap_cdp_call(snap_agent *a, const char *session, const char *method, const char *params,
                  int timeout_ms, cdp_reply *out, cdp_err *e)
{
    if (out)
        memset(out, 0, sizeof *out);
    int rc = sink_check(a, method, params, false, e);
    if (rc)
        return rc;
    return cdp_call(a->c, session, method, params, timeout_ms, out, e);
}

/* ---- the page's own requests ---- */

/* Start intercepting every request of the browser (only with a grant):
 * every resource type (no resourceType in the pattern): documents,
 * subresources, XHR/fetch, beacons, EventSource, prefetches, CSP reports,
 * preflights, and whatever type a later Chromium adds. */
int snap_sink_intercept(snap_agent *a, cdp_err *e)
{
    if (!gate_grant_get(a->gate))
        return 0;
    static const char P[] =
        "{\"patterns\":[{\"urlPattern\":\"*\",\"requestStage\":\"Request\"}]}";
    return cdp_call(a->c, NULL, "Fetch.enable", P, a->o.timeout_ms, NULL, e);
}

/* What a paused request is, for the gate, from the browser's resource type
 * (Network.ResourceType). A type this list does not know is judged by its
 * method and body alone, like XHR. */
typedef struct {
    bool document;       /* a navigation or one prepared for later */
    bool data;           /* carries data whatever its method */
    bool subresource;    /* a read-only load a page shows or runs */
} req_kind;

static req_kind request_kind(const char *type)
{
    static const struct {
        const char *type;
        req_kind k;
    } T[] = {
        {"Document", {true, false, false}},
        {"Prefetch", {true, false, false}},         /* speculation rules, <link rel=prefetch> */
        {"SignedExchange", {true, false, false}},
        {"Stylesheet", {false, false, true}},
        {"Image", {false, false, true}},
        {"Media", {false, false, true}},
        {"Font", {false, false, true}},
        {"Script", {false, false, true}},
        {"TextTrack", {false, false, true}},
        {"Manifest", {false, false, true}},
        {"Ping", {false, true, false}},             /* sendBeacon, <a ping> */
        {"CSPViolationReport", {false, true, false}},
        {"WebSocket", {false, true, false}},
        {"FedCM", {false, true, false}},
    };
    req_kind none = {false, false, false};
    for (size_t i = 0; type && i < sizeof T / sizeof T[0]; i++)
        if (strcmp(T[i].type, type) == 0)
            return T[i].k;
    return none;
}

/* A context whose cookies are a service's: restored, captured, or once so
 * (rejected, stale). A login handoff's context is the human's. */
static bool ctx_privileged(const snap_ctx *c)
{
    return c->state == SNAP_CTX_AUTH || c->state == SNAP_CTX_REJECTED ||
           c->state == SNAP_CTX_STALE;
}

/* Whether a paused request comes from a privileged context: its tab's
 * context; a request no tab of ours accounts for (a worker, a frame not
 * known yet, a popup not adopted yet) counts as privileged while the
 * agent holds any privileged context (fail closed). */
static bool paused_privileged(const snap_agent *a, const snap_tab *t)
{
    if (t)
        return t->ctx < a->nctxs && ctx_privileged(&a->ctxs[t->ctx]);
    for (size_t i = 0; i < a->nctxs; i++)
        if (ctx_privileged(&a->ctxs[i]))
            return true;
    return false;
}

/* The tab whose frame frame_id is (main frames: the target id too). */
static snap_tab *tab_by_frame(snap_agent *a, const char *frame_id)
{
    for (size_t i = 0; i < a->ntabs; i++) {
        snap_tab *t = &a->tabs[i];
        if (strcmp(t->target, frame_id) == 0)
            return t;
        for (size_t k = 0; k < t->nframes; k++)
            if (strcmp(t->frames[k].id, frame_id) == 0)
                return t;
    }
    return NULL;
}

static void note_blocked(snap_agent *a, snap_tab *t, const char *url, const char *reason)
{
    snap_blocked *b = &a->blocked[a->nblocked % SNAP_BLOCKED_MAX];
    a->nblocked++;
    b->tab = t ? t->id : 0;
    char *red = snap_url_redact(url, true, NULL);
    snprintf(b->text, sizeof b->text, "%s (%s)", red ? red : "a request", reason);
    free(red);
    if (t)
        t->activity++;
}

/* Fetch.requestPaused on the browser session: judge and answer at once. */
void snap_sink_paused(snap_agent *a, const json_val *p)
{
    const char *rid = json_get_str(p, "requestId");
    const json_val *req = json_get(p, "request");
    const char *url = json_get_str(req, "url");
    const char *method = json_get_str(req, "method");
    const char *type = json_get_str(p, "resourceType");
    const char *frame = json_get_str(p, "frameId");
    if (!rid)
        return;
    snap_tab *t = frame ? tab_by_frame(a, frame) : NULL;
    /* Ours: a frame of one of our tabs, or a popup of ours not adopted yet.
     * Another agent on this connection answers for its own; with none, the
     * agent answers for every request of the browser (fail closed). */
    bool ours = t != NULL;
    for (size_t i = 0; !ours && frame && i < a->nwork; i++)
        ours = a->work[i].kind == 1 && strcmp(a->work[i].target, frame) == 0;
    /* Several agents on one connection: the owner answers (and claims the
     * request); one that owns nobody's request is answered by the agent
     * that sees it last, under its grant (fail closed). */
    if (cdp_event_claimed(a->c))
        return;
    if (!ours && cdp_conn_share(a->c, 0) > 1 && !snap_listener_last(a))
        return;
    cdp_event_claim(a->c);
    bool login = t && a->login.active && t->ctx == a->login.ctx;
    bool privileged = !login && paused_privileged(a, t);
    req_kind k = request_kind(type);
    bool document = k.document;
    bool body = json_bool(json_get(req, "hasPostData")) || json_get(req, "postDataEntries");
    char reason[300] = "";
    int d = GATE_ALLOW;
    /* The gate audits refused requests: it gets the URL with its secrets
     * hidden (strictly: query values named like codes, PINs, keys too). */
    char *shown = snap_url_redact(url ? url : "", true, NULL);
    if (!login) {   /* the human drives a login: its requests are the human's */
        gate_net n = {0};
        n.method = method ? method : "GET";
        n.url = shown ? shown : "";
        n.type = type;
        n.document = document;
        n.has_body = body;
        n.data = k.data;
        n.subresource = k.subresource;
        n.privileged = privileged;
        d = gate_check_net(a->gate, &n, reason, sizeof reason);
    }
    free(shown);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "requestId");
    json_w_str(&w, rid);
    if (d != GATE_ALLOW) {
        /* A refused navigation is cancelled (the page stays where it was,
         * no error page replaces it); other requests fail as blocked. */
        json_w_key(&w, "errorReason");
        json_w_str(&w, document ? "Aborted" : "BlockedByClient");
    }
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    uint64_t id = 0;
    if (params && cdp_send(a->c, NULL, d == GATE_ALLOW ? "Fetch.continueRequest"
                                                       : "Fetch.failRequest",
                           params, &id, NULL) == 0)
        cdp_forget(a->c, id);
    free(params);
    if (d != GATE_ALLOW)
        note_blocked(a, t, url ? url : "", reason);
}

/* Network.webSocketCreated on a tab's (or its worker's) session. Fetch
 * cannot pause a WebSocket: in a privileged context the context's proxy
 * rule (below) refuses one to a host outside the grant in the browser's
 * network stack; here it is audited and reported. */
void snap_sink_socket(snap_agent *a, const char *session, const json_val *p)
{
    const char *url = json_get_str(p, "url");
    snap_tab *t = session ? snap_tab_by_session(a, session) : NULL;
    if (!url || !gate_grant_get(a->gate) || !paused_privileged(a, t) ||
        (t && a->login.active && t->ctx == a->login.ctx))
        return;
    char http[1200];
    const char *judged = url;
    if (strncmp(url, "ws://", 5) == 0 || strncmp(url, "wss://", 6) == 0) {
        snprintf(http, sizeof http, "http%s", url + 2);
        judged = http;
    }
    char o[300];
    if (gate_url_allowed(a->gate, judged) ||
        (snap_url_origin(judged, o, sizeof o) == 0 && gate_asset_allowed(a->gate, o)))
        return;
    char *shown = snap_url_redact(url, true, NULL);
    static const char R[] = "from a privileged context, a WebSocket outside the grant: "
                            "refused by the context's network rule";
    gate_net n = {0};
    n.method = "GET";
    n.url = shown ? shown : "";
    n.type = "WebSocket";
    n.data = true;
    n.privileged = true;
    gate_note_request(a->gate, &n, R);
    free(shown);
    note_blocked(a, t, url, R);
}

/* Append the refusals noted since *seen for tab tab_id (0: any) to buf. */
void snap_blocked_describe(snap_agent *a, uint64_t since, int tab_id, char *buf, size_t cap)
{
    uint64_t from = a->nblocked > SNAP_BLOCKED_MAX ? a->nblocked - SNAP_BLOCKED_MAX : 0;
    if (since > from)
        from = since;
    for (uint64_t i = from; i < a->nblocked; i++) {
        const snap_blocked *b = &a->blocked[i % SNAP_BLOCKED_MAX];
        if (tab_id && b->tab && b->tab != tab_id)
            continue;
        size_t used = strlen(buf);
        if (used + 8 >= cap)
            return;
        snprintf(buf + used, cap - used, "%sblocked before it left: %s",
                 used ? "; " : "", b->text);
    }
}

bool snap_sink_privileged(const snap_agent *a, const snap_tab *t)
{
    return t && paused_privileged(a, t);
}

/* Where a privileged context's requests to hosts outside the grant go: a
 * proxy that cannot exist (.invalid never resolves, RFC 6761), so they
 * fail in the browser's network stack, WebSockets included. */
#define REFUSING_PROXY "http://127.0.0.1:1"

static void bypass_add(char *buf, size_t cap, const char *o)
{
    size_t used = strlen(buf);
    char host[300];
    int w;
    if (strncmp(o, "*.", 2) == 0) {
        w = snprintf(buf + used, cap - used, "%s,*.%s,", o + 2, o + 2);
    } else {
        bool tls = strncmp(o, "https://", 8) == 0;
        const char *h = strstr(o, "://");
        snprintf(host, sizeof host, "%s", h ? h + 3 : o);
        bool port = strrchr(host, ':') && strrchr(host, ':') > strrchr(host, ']');
        w = snprintf(buf + used, cap - used, "%s%s,", host, port ? "" : tls ? ":443" : ":80");
    }
    if (w < 0 || (size_t)w >= cap - used)
        buf[used] = 0;          /* cut: fewer hosts bypass, a stricter rule */
}

char *snap_sink_context_params(const snap_agent *a)
{
    const gate_grant *g = gate_grant_get(a->gate);
    size_t n = g ? g->norigins + g->nassets : 0;
    size_t cap = 64 + n * 600;
    char *list = malloc(cap);
    if (!list)
        return NULL;
    list[0] = 0;
    for (size_t i = 0; g && i < g->norigins; i++)
        bypass_add(list, cap, g->origins[i]);
    for (size_t i = 0; g && i < g->nassets; i++)
        bypass_add(list, cap, g->assets[i]);
    /* Loopback is not bypassed either (Chromium bypasses it by default). */
    size_t used = strlen(list);
    snprintf(list + used, cap - used, "<-loopback>");
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "disposeOnDetach");
    json_w_bool(&w, true);
    json_w_key(&w, "proxyServer");
    json_w_str(&w, REFUSING_PROXY);
    json_w_key(&w, "proxyBypassList");
    json_w_str(&w, list);
    json_w_obj_end(&w);
    free(list);
    return json_w_take(&w, NULL);
}
