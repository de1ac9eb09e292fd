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
 *     its tabs at the end); the 'human' permit (human.c: the person's input
 *     from the live view) permits the Input methods only while the gate's
 *     control mode is human, nothing otherwise; the 'human_tab' permit (the
 *     person's tab choice in the view) permits Target.activateTarget of an
 *     open tab of the current tab's browser context only, under the same
 *     mode rule;
 *   - Runtime.evaluate and Runtime.callFunctionOn run only scripts compiled
 *     into the binary: the expression or function must be one of the
 *     registered scripts (snap_page_scripts, page_js.c), a template's
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
 * waits on the agent. While the human holds control only the person's own
 * context goes unjudged (person_request); the agent's untrusted context is
 * judged as ever (red team s15, R5-5). A privileged context is also created with a network
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
#include <strings.h>

#include "gate/gate.h"
#include "url/url.h"

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
    P_HUMAN = 1 << 16,      /* the person's input from the live view (human.c): counts
                               only while the gate's control mode is human */
    P_A11Y = 1 << 17,       /* the accessibility scan (axe_run.c) */
    P_HUMAN_TAB = 1 << 18,  /* the person's tab choice in the live view (human.c): only
                               while the gate's control mode is human, only a tab of
                               the context the person controls (human_tab_ok) */
};
#define P_INPUT (P_CLICK | P_TYPE | P_SELECT | P_PRESS | P_SCROLL | P_HOVER)
#define P_ANY 0x7ffff

static const struct {
    const char *name;
    unsigned bit;
} PERMIT_TOOLS[] = {
    {"open", P_OPEN}, {"click", P_CLICK}, {"type", P_TYPE}, {"select", P_SELECT},
    {"press", P_PRESS}, {"scroll", P_SCROLL}, {"back", P_BACK}, {"tabs", P_TABS},
    {"dialog", P_DIALOG}, {"login", P_LOGIN}, {"restore", P_RESTORE}, {"human", P_HUMAN},
    {"teardown", P_TEARDOWN}, {"eval", P_EVAL}, {"upload", P_UPLOAD},
    {"screenshot", P_SCREENSHOT}, {"hover", P_HOVER}, {"a11y_scan", P_A11Y},
    {"human_tab", P_HUMAN_TAB},
};

/* need 0: free (reading, setup). Anything not listed is refused. */
static const struct {
    const char *method;
    unsigned need;
} METHODS[] = {
    {"Accessibility.getFullAXTree", 0},
    {"Accessibility.getPartialAXTree", 0},
    {"DOM.describeNode", 0},
    {"DOM.disable", 0},
    {"DOM.enable", 0},                     /* Overlay.enable needs it (a screenshot's mask) */
    {"DOM.getBoxModel", 0},
    {"DOM.getContentQuads", 0},
    {"DOM.getFrameOwner", 0},
    {"DOM.getNodeForLocation", 0},
    {"DOM.resolveNode", 0},
    {"Browser.cancelDownload", 0},         /* a download the gate refused, or one the
                                              page started on its own (download.c) */
    {"Browser.setDownloadBehavior", 0},    /* a new context's downloads: into a file
                                              scope under file_transfer, else denied */
    {"Page.setDownloadBehavior", 0},       /* deny, when the above was refused (R2) */
    {"DOMSnapshot.captureSnapshot", 0},
    {"Log.enable", 0},                     /* the browser's own errors (agent_problems.c) */
    {"Network.enable", 0},
    {"Overlay.disable", 0},
    {"Overlay.enable", 0},
    /* A screenshot's mask over secret fields (act_shot_mask.c): painted by
     * the browser above the page, which cannot see it. */
    {"Overlay.hideHighlight", 0},
    {"Overlay.highlightNode", 0},
    {"Page.captureScreenshot", 0},
    /* The live view's frames (cast.c): for the person only, never the model. */
    {"Page.screencastFrameAck", 0},
    {"Page.startScreencast", 0},
    {"Page.stopScreencast", 0},
    {"Page.enable", 0},
    {"Page.getFrameTree", 0},
    {"Page.getLayoutMetrics", 0},
    {"Page.createIsolatedWorld", 0},       /* cdpgate's own world: unseen by the page */
    {"Page.getNavigationHistory", 0},
    {"Page.setLifecycleEventsEnabled", 0},
    {"Runtime.enable", 0},                 /* snap_opts.console: the host's console errors */
    {"Runtime.getProperties", 0},
    {"Runtime.releaseObject", 0},
    {"Runtime.releaseObjectGroup", 0},
    /* A scan phase whose frame did not answer in time: axe's run there
     * stopped, so finishRun and the page are not held behind it (axe_run.c). */
    {"Runtime.terminateExecution", P_A11Y},
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
    {"Input.dispatchKeyEvent", P_INPUT | P_HUMAN},
    {"Input.dispatchMouseEvent", P_INPUT | P_HUMAN},
    {"Input.imeSetComposition", P_HUMAN},
    {"Network.deleteCookies", P_LOGIN},    /* a session moved out of the untrusted context
                                              at the hand-back (handback.c) */
    {"Input.insertText", P_TYPE | P_SELECT | P_HUMAN},
    {"Page.handleJavaScriptDialog", P_DIALOG | P_TEARDOWN},
    {"Page.navigate", P_OPEN | P_RESTORE | P_LOGIN},
    {"Page.navigateToHistoryEntry", P_BACK},
    {"Page.resetNavigationHistory", P_OPEN | P_LOGIN},
    {"Storage.setCookies", P_RESTORE},
    {"Target.activateTarget", P_TABS | P_HUMAN_TAB},
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

void snap_permit_push(snap_agent *a, const char *tool, char saved[SNAP_PERMIT_MAX])
{
    memcpy(saved, a->permit, SNAP_PERMIT_MAX);
    snap_permit_begin(a, tool);
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

/* The script tables (page_js.c holds every page script). */
static const snap_js *const *script_tables(void)
{
    static const snap_js *const T[] = {snap_page_scripts, snap_axe_scripts, NULL};
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

/* A state-changing command or page script goes out: the requests that
 * start in the next SNAP_OWN_MS are its consequences (snap_req.own), and
 * settling waits for those only; a cached snapshot is not reused, unless
 * the script only scrolls (SNAP_JS_SCROLL: issue 13, point 3a). */
static void input_out(snap_agent *a, bool change)
{
    int64_t now = base_now_ms();
    a->input_ms = now;
    a->own_until = now + SNAP_OWN_MS;
    if (change)
        a->changes++;
}

/* Whether src is the axe-core source the running scan registered. */
static bool axe_src_is(const snap_agent *a, const char *src)
{
    return src && a->axe_src && strlen(src) == a->axe_len &&
           memcmp(src, a->axe_src, a->axe_len) == 0;
}

/* The 'human_tab' permit's command: Target.activateTarget of an open tab
 * of the agent's in the current tab's browser context (the person's). */
static bool human_tab_ok(snap_agent *a, const char *method, const char *params)
{
    if (strcmp(method, "Target.activateTarget") != 0)
        return true;            /* the table refuses every other method */
    json_doc *d = params ? json_parse(params, strlen(params), NULL, NULL) : NULL;
    const char *id = d ? json_get_str(json_doc_root(d), "targetId") : NULL;
    snap_tab *cur = snap_tab_by_id(a, a->cur);
    bool ok = false;
    for (size_t i = 0; id && cur && i < a->ntabs; i++) {
        const snap_tab *t = &a->tabs[i];
        ok = ok || (strcmp(t->target, id) == 0 && !t->closed && t->ctx == cur->ctx);
    }
    json_doc_free(d);
    return ok;
}

/* 0 when method may go out now, else CDP_EPROTOCOL with e filled. secret:
 * params carry session values (the copy parsed here is wiped). */
static int sink_check(snap_agent *a, const char *method, const char *params, bool secret,
                      cdp_err *e)
{
    unsigned have = permit_bit(a->permit);
    /* The 'human' and 'human_tab' permits are the person's, and only while
     * they hold control: under any other mode they permit nothing (fail
     * closed). */
    if ((have & (P_HUMAN | P_HUMAN_TAB)) &&
        !(a->gate && gate_mode(a->gate) == GATE_MODE_HUMAN))
        have = 0;
    if ((have & P_HUMAN_TAB) && !human_tab_ok(a, method, params))
        return refuse(e, "%s refused at the sink: not an open tab of the browser context the "
                      "person controls (permit: %s)", method, a->permit);
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
        /* The one exception: the eval tool, which the grant must name and
         * the human confirms every time (policy.c asked the gate). */
        if (!s && rt_eval && (have & P_EVAL)) {
            json_doc_free(d);
            input_out(a, true);
            return 0;
        }
        /* The accessibility scan's deliberate path: the axe-core file the
         * user installed, byte for byte as snap_axe_run was given it, and
         * only under its permit (axe_run.c runs it in an isolated world of
         * its own; it reads the DOM and changes nothing). */
        if (!s && rt_eval && (have & P_A11Y) && axe_src_is(a, src)) {
            json_doc_free(d);
            return 0;
        }
        json_doc_free(d);
        if (s && (flags & SNAP_JS_A11Y) && !(have & P_A11Y))
            return refuse(e, "%s refused at the sink: an accessibility scan's script outside "
                          "a scan (permit: %s)", method, a->permit);
        if (!s)
            return refuse(e, "%s refused at the sink: the script is not one compiled "
                          "into cdpgate (permit: %s)", method, a->permit);
        /* The scan's permit is read-only: no script that changes the page;
         * nor the person's permits (their input and tab choice are CDP
         * Input and Target commands, never a page script of cdpgate's). */
        if ((flags & SNAP_JS_WRITE) && !(have & ~(unsigned)(P_A11Y | P_HUMAN | P_HUMAN_TAB)))
            return refuse(e, "%s refused at the sink: the script changes the page and "
                          "no action is permitted (permit: %s)", method, a->permit);
        if (flags & SNAP_JS_WRITE)
            input_out(a, !(flags & SNAP_JS_SCROLL));
        return 0;
    }
    for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++) {
        if (strcmp(METHODS[i].method, method) != 0)
            continue;
        if (METHODS[i].need == 0)
            return 0;
        if (METHODS[i].need & have) {
            input_out(a, true);
            return 0;
        }
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

int snap_cdp_send_secret(snap_agent *a, const char *session, const char *method,
                         const char *params, uint64_t *id, cdp_err *e)
{
    int rc = sink_check(a, method, params, true, e);
    if (rc) {
        *id = 0;
        return rc;
    }
    return cdp_send_secret(a->c, session, method, params, id, e);
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

/* Keep a refusal for the next result: the request as snap_request_shown
 * gives it (no path, no query, no page-chosen host label, no session
 * value) and the gate's reason (which names it the same way). */
static void note_blocked(snap_agent *a, snap_tab *t, const char *method, const char *url,
                         const char *type, const char *reason)
{
    snap_blocked *b = &a->blocked[a->nblocked % SNAP_BLOCKED_MAX];
    a->nblocked++;
    b->tab = t ? t->id : 0;
    char *shown = snap_request_shown(a, method, url, type);
    char *why = snap_scrub_str(a, reason);
    snprintf(b->text, sizeof b->text, "%s (%s)", shown ? shown : "a request",
             why ? why : "refused");
    free(shown);
    free(why);
    if (t)
        t->settle_evt++;
}

/* Continue or fail a paused request (a refused document is cancelled:
 * the page stays where it was, no error page replaces it). */
static void answer(snap_agent *a, const char *rid, bool allow, bool document)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "requestId");
    json_w_str(&w, rid);
    if (!allow) {
        json_w_key(&w, "errorReason");
        json_w_str(&w, document ? "Aborted" : "BlockedByClient");
    }
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    uint64_t id = 0;
    if (params && cdp_send(a->c, NULL, allow ? "Fetch.continueRequest" : "Fetch.failRequest",
                           params, &id, NULL) == 0)
        cdp_forget(a->c, id);
    free(params);
}

/* ---- data-carrying requests of authenticated contexts ---- */

/* Whether a paused request carries data: a body, or a method other than
 * GET and HEAD. */
static bool carries_data(const json_val *req)
{
    const char *m = json_get_str(req, "method");
    return json_bool(json_get(req, "hasPostData")) || json_get(req, "postDataEntries") ||
           (m && strcasecmp(m, "GET") != 0 && strcasecmp(m, "HEAD") != 0);
}

/* Whether a GET of type (the browser's resource type) leaves out a static
 * file's name (gate_classify_get): anything but a document; unknown: no. */
static bool get_statics(const char *type)
{
    return type && *type && strcmp(type, "Document") != 0;
}

const char *snap_request_header(const json_val *req, const char *name)
{
    for (const json_val *h = json_first(json_get(req, "headers")); h; h = json_next(h)) {
        const char *k = json_key(h, NULL);
        if (k && strcasecmp(k, name) == 0)
            return json_str(h, NULL);
    }
    return NULL;
}

/* A privileged context that holds a service's session: restored or
 * captured (auth), forgotten for a newer one (stale), or one the site
 * turned away (rejected: its cookies are still there). Fail closed. The
 * untrusted context once a person held control in it (a sign-in there is
 * live: red team s18, R8-6). */
static bool holds_session(const snap_agent *a, const snap_ctx *c)
{
    if (c == &a->ctxs[0] && a->ctx_shared)
        return true;    /* the browser's own default context (R8-6 c) */
    return c->person || (c->origin[0] && (c->state == SNAP_CTX_AUTH ||
                                          c->state == SNAP_CTX_STALE ||
                                          c->state == SNAP_CTX_REJECTED));
}

/* The service a request of context c (tab t, or NULL) is judged for: the
 * context's origin; for the untrusted context a person held control in,
 * the tab's page origin, else a name of that context (no URL: a path or
 * query may carry a secret). */
static const char *session_origin(const snap_ctx *c, const snap_tab *t)
{
    if (c->origin[0])
        return c->origin;
    if (t && t->nframes && t->frames[0].origin[0])
        return t->frames[0].origin;
    return "(the agent's context: a person held control there, or it is the browser's own)";
}

/* The authenticated service origin a paused request of frame (tab t, or a
 * popup of a tab not adopted yet) is sent from, or NULL: its browser
 * context holds a session restored from the vault or captured by a login.
 * *tab gets the tab whose confirmation covers it (the popup's opener). A
 * request whose frame is no tab of the agent's is judged by its target's
 * browser context when the agent saw the target created (a shared or
 * service worker: its requests carry its target id as their frame); one of
 * no known context, while a context holds a session, counts as sent from
 * it: fail closed (before, a shared worker of the bank posted to another
 * granted origin unasked). Either way, one that goes to the site of an
 * authenticated context (its origin's host, or a host its cookies reach:
 * url_same_site) counts as authenticated. */
static const char *auth_origin(snap_agent *a, snap_tab *t, const char *frame, const char *url,
                               int *tab)
{
    *tab = t ? t->id : 0;
    for (size_t i = 0; !t && frame && i < a->nwork; i++)
        if (a->work[i].kind == 1 && strcmp(a->work[i].target, frame) == 0) {
            t = tab_by_frame(a, a->work[i].opener);
            *tab = t ? t->id : 0;
        }
    /* A site signed in in the untrusted context (R8-6 b, signin.c): what
     * goes to it, and what its pages there send. */
    const char *signed_to = snap_signin_site(a, url);
    if (t) {
        if (t->ctx < a->nctxs && holds_session(a, &a->ctxs[t->ctx]))
            return session_origin(&a->ctxs[t->ctx], t);
        if (t->ctx != 0)
            return NULL;
        if (signed_to)
            return signed_to;
        return t->nframes ? snap_signin_site(a, t->frames[0].origin) : NULL;
    }
    for (size_t i = 0; i < a->nctxs; i++)
        if (holds_session(a, &a->ctxs[i]) &&
            url_same_site(session_origin(&a->ctxs[i], NULL), url))
            return session_origin(&a->ctxs[i], NULL);
    if (signed_to)
        return signed_to;
    const char *bctx = frame ? snap_other_ctx(a, frame) : NULL;
    for (size_t i = 0; i < a->nctxs; i++) {
        const snap_ctx *c = &a->ctxs[i];
        if (bctx && *bctx && strcmp(c->id, bctx) == 0)
            return holds_session(a, c) ? session_origin(c, NULL)
                 : i == 0 ? snap_signin_any(a) : NULL;
    }
    /* Unknown: any context holding a session may have sent it. */
    for (size_t i = 0; i < a->nctxs; i++)
        if (holds_session(a, &a->ctxs[i]))
            return session_origin(&a->ctxs[i], NULL);
    return snap_signin_any(a);
}

static void ask_clear(snap_ask *k)
{
    free(k->method);
    free(k->url);
    free(k->fields);
    free(k->values);
    memset(k, 0, sizeof *k);
}

static char *dup0(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s ? s : "", n);
    return d;
}

/* A data-carrying request of an authenticated context: judged at once when
 * no human is needed (covered by a confirmed action, stopped); else queued
 * for snap_sink_asks (the hook may take minutes: never in the listener).
 * Returns GATE_ALLOW or a refusal with reason, or -1 when queued. */
static int auth_request(snap_agent *a, const json_val *p, const char *svc, int tab,
                        const char *shown, bool document, char *reason, size_t cap)
{
    const json_val *req = json_get(p, "request");
    const char *raw_url = json_get_str(req, "url");
    const char *rid = json_get_str(p, "requestId");
    const char *method = json_get_str(req, "method");
    const char *type = json_get_str(p, "resourceType");
    char fields[600];
    snap_body_fields(req, fields, sizeof fields);
    /* Field names are the page's: a session value there is scrubbed too. */
    char *sf = snap_scrub_str(a, fields);
    snprintf(fields, sizeof fields, "%s", sf ? sf : "");
    free(sf);
    gate_auth_request q = {0};
    q.method = method ? method : "GET";
    q.url = shown;
    q.origin = svc;
    q.fields = fields;
    /* Its recipients and amounts, as values (R4-13 residual): a session
     * value there is scrubbed too. */
    char values[1200] = "";
    if (carries_data(req)) {
        char *v = snap_sent_values(a, req, raw_url);
        char *sv = v ? snap_scrub_str(a, v) : NULL;
        size_t n = sv ? strlen(sv) : 0;
        if (n >= sizeof values) {        /* whole values only, then "..." */
            n = sizeof values - 6;
            while (n && sv[n - 1] != '\x1e')
                n--;
        }
        memcpy(values, sv ? sv : "", n);
        snprintf(values + n, sizeof values - n, "%s",
                 sv && n < strlen(sv) ? "...\x1f\x1e" : "");
        free(sv);
        free(v);
    }
    q.values = values;
    q.resource = type ? type : "";
    q.document = document;
    q.get = !carries_data(req);
    bool cover_on = a->covered_tab && a->covered_tab == tab &&
                    (!a->covered_until || base_now_ms() < a->covered_until);
    q.covered = cover_on ? a->covered_cls : -1;
    /* The address the human was shown, or a redirect hop of a request the
     * cover let through: only these GETs pass it (red team s12, G9b). */
    q.shown_url = cover_on && snap_cover_shown_url(a, raw_url,
                                                    json_get_str(p, "redirectedRequestId"));
    /* Data sent elsewhere than the address the human was shown, or a form
     * the page submits after an action that showed none: not what they
     * said yes to (red team s19, s20: R9-1; snap_cover_data_other). */
    q.shown_other = cover_on && !q.get && snap_cover_data_other(a, q.method, raw_url, document);
    /* Under a cover: what the browser really sends is what the human
     * allowed (sink_body.c; red team s13 P1-P3), before the cover lets it
     * through. Outside one: a recipient in it is granted, or it is refused
     * before the human is asked (red team s14, R4-13). */
    if (cover_on ? snap_cover_check(a, req, raw_url, reason, cap)
                 : !q.get && snap_sent_recipients(a, req, raw_url, reason, cap)) {
        gate_net n = {0};
        n.method = q.method;
        n.url = shown;
        n.shown = shown;
        n.type = type;
        n.document = document;
        n.has_body = true;
        n.data = true;
        n.privileged = true;
        gate_note_request(a->gate, &n, reason);
        return GATE_DENY;
    }
    gate_decision d;
    gate_decide_auth_request(a->gate, &q, &d);
    if (d.decision == GATE_CONFIRM) {
        snap_ask *k = a->nasks < SNAP_ASK_MAX ? &a->asks[a->nasks] : NULL;
        if (k && strlen(rid) < sizeof k->rid) {
            memset(k, 0, sizeof *k);
            snprintf(k->rid, sizeof k->rid, "%s", rid);
            k->method = dup0(q.method);
            k->url = dup0(shown);
            k->fields = dup0(fields);
            k->values = dup0(values);
            snprintf(k->origin, sizeof k->origin, "%s", svc);
            snprintf(k->resource, sizeof k->resource, "%s", q.resource);
            k->document = document;
            k->get = q.get;
            k->covered = q.covered;
            k->shown_other = q.shown_other;
            k->tab = tab;
            k->epoch = gate_epoch(a->gate);
            if (k->method && k->url && k->fields && k->values) {
                a->nasks++;
                return -1;
            }
            ask_clear(k);
        }
        snprintf(reason, cap, "%.120s waits for the human with %d others already: refused "
                 "(fail closed)", d.target, SNAP_ASK_MAX);
        return GATE_DENY;
    }
    gate_check_auth_request(a->gate, &q, &d);
    if (cover_on && d.decision == GATE_ALLOW)
        snap_cover_passed(a, rid);
    size_t n = strlen(d.reason);
    n = n < cap ? n : cap - 1;
    memcpy(reason, d.reason, n);
    reason[n] = 0;
    return d.decision == GATE_ALLOW ? GATE_ALLOW : GATE_DENY;
}

void snap_sink_asks(snap_agent *a)
{
    if (a->asking || !a->nasks)
        return;
    a->asking = true;
    int64_t t0 = base_now_ms();
    /* One pass answers what was queued when it began: a page that posts
     * fast refills the queue while the human is asked, and the idle loop
     * of `cdpgate mcp` must get back to its input (the rest waits for the
     * next pass, still paused at the browser). */
    size_t todo = a->nasks;
    while (todo-- && a->nasks) {
        snap_ask k = a->asks[0];
        memmove(a->asks, a->asks + 1, (a->nasks - 1) * sizeof a->asks[0]);
        a->nasks--;
        gate_auth_request q = {0};
        q.method = k.method;
        q.url = k.url;
        q.origin = k.origin;
        q.fields = k.fields;
        q.values = k.values;
        q.resource = k.resource;
        q.document = k.document;
        q.get = k.get;
        q.covered = k.covered;  /* a GET under a cover to another address */
        q.shown_other = k.shown_other;  /* data sent elsewhere (R9-1) */
        q.epoch = k.epoch;      /* control changed since it was sent: refused */
        gate_decision d;
        gate_check_auth_request(a->gate, &q, &d);
        bool ok = d.decision == GATE_ALLOW;
        answer(a, k.rid, ok, k.document);
        if (!ok)
            note_blocked(a, k.tab ? snap_tab_by_id(a, k.tab) : NULL, k.method, k.url,
                         k.resource, d.reason);
        ask_clear(&k);
    }
    a->asked_ms += base_now_ms() - t0;
    a->asking = false;
}

void snap_sink_free(snap_agent *a)
{
    for (size_t i = 0; i < a->nasks; i++) {
        answer(a, a->asks[i].rid, false, a->asks[i].document);
        ask_clear(&a->asks[i]);
    }
    a->nasks = 0;
}

int snap_idle(snap_agent *a)
{
    cdp_err e;
    int rc = cdp_pump(a->c, 0, &e);
    snap_sink_asks(a);
    return rc ? SNAP_EBROWSER : 0;
}

int snap_handover(snap_agent *a)
{
    if (!a || !gate_grant_get(a->gate))
        return 0;       /* nothing is intercepted */
    /* A round trip on the browser session: every Fetch.requestPaused the
     * browser sent before its reply is read (and judged) on the way. */
    cdp_err e;
    return snap_cdp_call(a, NULL, "Target.getTargets", NULL, a->o.timeout_ms, NULL, &e)
         ? SNAP_EBROWSER : 0;
}

/* The person's own request while the human holds control (red team s15,
 * R5-5): one of their sign-in's context (login), or of the privileged
 * context of the tab they took over (the current one). A page of the
 * agent's untrusted context (the open web's) is never the person's: it is
 * judged by the agent's rules whoever holds control, so what the person
 * types there never leaves for an origin the grant does not name. */
static bool person_request(snap_agent *a, const snap_tab *t, bool login)
{
    if (!a->gate || gate_mode(a->gate) != GATE_MODE_HUMAN)
        return false;
    if (login)
        return true;
    const snap_tab *cur = snap_tab_current(a);
    return t && cur && t->ctx == cur->ctx && t->ctx < a->nctxs &&
           ctx_privileged(&a->ctxs[t->ctx]);
}

/* The opener's tab of a popup not adopted yet (snap_sync adopts it), by
 * its target id (its main frame's id), else NULL. A popup shares its
 * opener's browser context: a request of the sign-in's popup (an identity
 * provider's window) is the person's from its first request, not only
 * after the adoption (before, it was judged as the agent's and refused
 * outside the grant). */
static snap_tab *pending_popup_opener(snap_agent *a, const char *frame)
{
    for (size_t i = 0; frame && i < a->nwork; i++)
        if (a->work[i].kind == 1 && strcmp(a->work[i].target, frame) == 0)
            return tab_by_frame(a, a->work[i].opener);
    return NULL;
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
    /* whose request: a popup not adopted yet is its opener's */
    const snap_tab *whose = t ? t : pending_popup_opener(a, frame);
    bool login = whose && a->login.active && whose->ctx == a->login.ctx;
    bool privileged = !login && paused_privileged(a, t);
    bool human = person_request(a, whose, login);
    req_kind k = request_kind(type);
    bool document = k.document;
    bool body = json_bool(json_get(req, "hasPostData")) || json_get(req, "postDataEntries");
    char reason[300] = "";
    int d = GATE_ALLOW;
    /* The gate audits refused requests: it gets the URL with its secrets
     * hidden (strictly: query values named like codes, PINs, keys too). */
    char *shown = snap_url_redact_act(a, url ? url : "");
    /* What is shown of it (audit, reasons): session values scrubbed, a host
     * outside the grant cut to its last labels (scrub.c). While the human
     * has control every request is audited, and a person opens what
     * carries a bearer secret in its path or in a query value of any name
     * (a password-reset or magic-login link): shown as a refusal is, with
     * no path and no query (review F3). */
    char *audit_url = !shown ? NULL
                    : gate_mode(a->gate) == GATE_MODE_HUMAN
                    ? snap_request_shown(a, method, url ? url : "", type)
                    : snap_request_audit_url(a, shown);
    char *origin_shown = snap_request_origin_shown(a, url ? url : "");
    if (!login) {   /* the human drives a login: its requests are the human's */
        gate_net n = {0};
        n.method = method ? method : "GET";
        n.url = shown ? shown : "";
        n.shown = audit_url ? audit_url : "(withheld: out of memory)";
        n.shown_origin = origin_shown ? origin_shown : "(withheld: out of memory)";
        n.type = type;
        n.document = document;
        n.has_body = body;
        n.data = k.data;
        n.subresource = k.subresource;
        n.privileged = privileged;
        n.human = human;
        d = gate_check_net(a->gate, &n, reason, sizeof reason);
    }
    /* Data to an authenticated origin's session is a state change there:
     * confirmed or stopped now, whatever made the page send it. */
    bool data_out = carries_data(req);
    /* A GET of a context holding a session, to the service: a navigation
     * (a link, a form, a page script, back/forward, reload, each redirect
     * hop; red team s12, G9, G6, S2) and every other resource type (a
     * prefetch, an image, a script, a GET fetch(); red team s13, N3):
     * judged by the URL the browser really sends when its words are
     * consequential. */
    char nw[8];
    bool get = !data_out && shown && gate_classify_get(shown, get_statics(type), nw, sizeof nw);
    /* While a confirmed action covers a tab, any navigation to the service
     * (a GET form, a link) is checked against what the human was shown,
     * its query read as fields, whatever its words (red team s14, R4-11). */
    get = get || (document && !data_out && a->covered_tab);
    int tab = 0;
    const char *svc = d == GATE_ALLOW && !login && (data_out || get) && !human
                    ? auth_origin(a, t, frame, url ? url : "", &tab) : NULL;
    /* A GET away from the service carries no session there: its cookies
     * reach the service's site and its subdomains (a Domain= cookie: red
     * team s13, N2), not other hosts. */
    if (svc && !data_out && !url_same_site(svc, url ? url : ""))
        svc = NULL;
    if (svc) {
        /* To the authenticated service (a granted host): its path is shown
         * to the human who confirms, with session values scrubbed. */
        char *sc = shown ? snap_scrub_url(a, shown) : NULL;
        d = sc ? auth_request(a, p, svc, tab, sc, document, reason, sizeof reason)
               : GATE_DENY;
        if (!sc)
            snprintf(reason, sizeof reason, "out of memory");
        free(sc);
    }
    free(shown);
    free(audit_url);
    free(origin_shown);
    /* A sign-in in the untrusted context (R8-6 b): seen before it goes on. */
    if ((d == GATE_ALLOW || d == -1) && !login)
        snap_signin_seen(a, whose, p, document, k.subresource, data_out);
    if (d == -1)
        return;         /* queued: snap_sink_asks answers it */
    answer(a, rid, d == GATE_ALLOW, document);
    if (d != GATE_ALLOW)
        note_blocked(a, t, method, url ? url : "", type, reason);
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
    char *shown = snap_url_redact_act(a, url);
    char *audit_url = shown ? snap_request_audit_url(a, shown) : NULL;
    static const char R[] = "from a privileged context, a WebSocket outside the grant: "
                            "refused by the context's network rule";
    gate_net n = {0};
    n.method = "GET";
    n.url = shown ? shown : "";
    n.shown = audit_url ? audit_url : "(withheld: out of memory)";
    n.type = "WebSocket";
    n.data = true;
    n.privileged = true;
    gate_note_request(a->gate, &n, R);
    free(shown);
    free(audit_url);
    note_blocked(a, t, "GET", url, "WebSocket", R);
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
 * proxy nothing listens on (port 1 of loopback, which only root could
 * bind), so they fail in the browser's network stack, WebSockets
 * included. */
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
    /* Loopback is not bypassed either (Chromium bypasses localhost,
     * 127.0.0.0/8, [::1] and link-local by default): "<-loopback>" first,
     * because Chromium lets the later of two matching rules win, so a
     * granted loopback origin (127.0.0.1:PORT, localhost:PORT) listed after
     * it is bypassed while every other loopback host and port still goes
     * to the refusing proxy. */
    snprintf(list, cap, "<-loopback>,");
    for (size_t i = 0; g && i < g->norigins; i++)
        bypass_add(list, cap, g->origins[i]);
    for (size_t i = 0; g && i < g->nassets; i++)
        bypass_add(list, cap, g->assets[i]);
    list[strlen(list) - 1] = 0;     /* the last comma */
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
