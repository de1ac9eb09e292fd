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
 * session intercepts every document request (Fetch.enable at the browser
 * level sees the navigations, redirects, popups, frames and form posts of
 * every target before they leave; subresources are not paused, so pages
 * never wait on the agent for them); each paused request is judged by
 * gate_check_request
 * and continued or failed with BlockedByClient from inside the event
 * listener, so nothing waits on the agent. Refusals are kept per tab for
 * the next result to report.
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

/* Start intercepting the document requests of the browser (only with a
 * grant). */
int snap_sink_intercept(snap_agent *a, cdp_err *e)
{
    if (!gate_grant_get(a->gate))
        return 0;
    /* Documents, and the requests a page script can send data with.
     * Images, scripts, styles and fonts are not paused. */
    static const char P[] =
        "{\"patterns\":["
        "{\"urlPattern\":\"*\",\"resourceType\":\"Document\",\"requestStage\":\"Request\"},"
        "{\"urlPattern\":\"*\",\"resourceType\":\"XHR\",\"requestStage\":\"Request\"},"
        "{\"urlPattern\":\"*\",\"resourceType\":\"Fetch\",\"requestStage\":\"Request\"},"
        "{\"urlPattern\":\"*\",\"resourceType\":\"Ping\",\"requestStage\":\"Request\"},"
        "{\"urlPattern\":\"*\",\"resourceType\":\"EventSource\",\"requestStage\":\"Request\"},"
        "{\"urlPattern\":\"*\",\"resourceType\":\"Other\",\"requestStage\":\"Request\"}]}";
    return cdp_call(a->c, NULL, "Fetch.enable", P, a->o.timeout_ms, NULL, e);
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
    bool document = type && strcmp(type, "Document") == 0;
    bool body = json_bool(json_get(req, "hasPostData")) || json_get(req, "postDataEntries");
    char reason[300] = "";
    int d = GATE_ALLOW;
    /* The gate audits refused requests: it gets the URL with its secrets
     * hidden (strictly: query values named like codes, PINs, keys too). */
    char *shown = snap_url_redact(url ? url : "", true, NULL);
    if (!login)     /* the human drives a login: its requests are the human's */
        d = gate_check_request(a->gate, method ? method : "GET", shown ? shown : "",
                               document, body, 0, reason, sizeof reason);
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
