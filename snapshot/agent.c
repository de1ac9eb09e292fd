/*
 * agent.c — the agent's browser state: tabs, frames and their sessions,
 * event bookkeeping (navigations, dialogs, popups, network in flight), the
 * ref table, observation ids, results (snap_open is in agent_open.c).
 *
 * Implementation notes
 *  - Events are recorded by a listener (which must not wait), so work that
 *    needs round trips — adopting a popup, initialising an out-of-process
 *    iframe's session — is queued and done by snap_sync() at the start of
 *    every call and while waiting for consequences.
 *  - A document is identified by its frame id and loaderId; a new main-frame
 *    document bumps tab->nav, which invalidates the tab's observations.
 *  - Refs live in an array indexed by number and a hash of
 *    (tab, frame, loader, backend node) -> number; nothing is ever removed,
 *    so a number is never reused.
 */
#include "snapshot/agent_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PENDING (sizeof ((snap_agent *)0)->work / sizeof ((snap_agent *)0)->work[0])

typedef struct snap_work pending_work;

void snap_agent_setstr(char **dst, const char *s)
{
    char *d = base_strdup(s);
    if (d) {
        free(*dst);
        *dst = d;
    }
}

/* Frame URLs are stored with credentials and secret-looking query values
 * already hidden (snap_url_redact), and the session values the agent
 * restored or captured scrubbed (snap_scrub_url), so no later output can
 * show them. */
static void set_url(const snap_agent *a, char **dst, const char *url)
{
    char *red = snap_url_redact(url ? url : "", false, NULL);
    char *sc = red ? snap_scrub_url(a, red) : NULL;
    free(red);
    if (sc) {
        free(*dst);
        *dst = sc;
    }
}

/* While an action's form had secret fields, a URL the page reaches (a GET
 * form's submission) also hides their values (act.c). */
static void act_secret_url(const snap_agent *a, snap_frame *f)
{
    if (!a->nact_secret || !f || !f->url)
        return;
    char *red = snap_url_redact_act(a, f->url);
    if (red) {
        free(f->url);
        f->url = red;
    }
}

void snap_agent_copyid(char dst[SNAP_ID_MAX], const char *s)
{
    snprintf(dst, SNAP_ID_MAX, "%s", s ? s : "");
}

/* ---- results ---- */

const char *snap_strerror(int code)
{
    switch (code) {
    case SNAP_OK: return "ok";
    case SNAP_ENOMEM: return "out_of_memory";
    case SNAP_EBROWSER: return "browser_error";
    case SNAP_ENOREF: return "unknown_ref";
    case SNAP_ESTALE: return "stale";
    case SNAP_EDISABLED: return "disabled";
    case SNAP_ECOVERED: return "covered";
    case SNAP_ENOTVISIBLE: return "not_visible";
    case SNAP_EINVAL: return "invalid_argument";
    case SNAP_ENAVIGATE: return "navigation_failed";
    case SNAP_ENOTAB: return "no_tab";
    case SNAP_EDIALOG: return "dialog";
    case SNAP_ETIMEOUT: return "timeout_outcome_unknown";
    case SNAP_ELOGIN: return "login_required";
    case SNAP_EBLOCKED: return "waiting_for_login";
    case SNAP_EDENIED: return "denied";
    case SNAP_ESTOP: return "unbound_stop";
    case SNAP_ETAKEOVER: return "human_takeover";
    case SNAP_EUNKNOWN: return "outcome_unknown";
    }
    return "error";
}

void snap_result_free(snap_result *r)
{
    if (!r)
        return;
    free(r->text);
    free(r->structured);
    free(r->image);
    memset(r, 0, sizeof *r);
}

int snap_fail(snap_result *r, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (len >= (int)sizeof msg) {
        /* Cut on a character boundary: the text must stay valid UTF-8. */
        size_t n = sizeof msg - 1;
        while (n > 0 && ((unsigned char)msg[n] & 0xC0) == 0x80)
            n--;
        msg[n] = 0;
    }
    return snap_fail_text(r, code, msg);
}

int snap_fail_text(snap_result *r, int code, const char *text)
{
    if (!r)
        return code;
    free(r->text);
    free(r->structured);
    r->code = code;
    r->text = base_strdup(text);
    json_w w;
    snap_result_begin(&w, code);
    json_w_key(&w, "message");
    snap_json_page(&w, text);
    if (r->obs[0]) {
        json_w_key(&w, "obs");
        json_w_str(&w, r->obs);
    }
    json_w_obj_end(&w);
    r->structured = json_w_take(&w, NULL);
    return code;
}

void snap_result_begin(json_w *w, int code)
{
    json_w_init(w);
    json_w_obj_begin(w);
    json_w_key(w, "ok");
    json_w_bool(w, code == 0);
    if (code) {
        json_w_key(w, "error");
        json_w_str(w, snap_strerror(code));
    }
}

void snap_result_set(json_w *w, snap_result *r)
{
    json_w_obj_end(w);
    char *js = json_w_take(w, NULL);
    if (js) {
        free(r->structured);
        r->structured = js;
    }
}

/* ---- tabs and frames ---- */

snap_tab *snap_tab_by_id(snap_agent *a, int id)
{
    for (size_t i = 0; i < a->ntabs; i++)
        if (a->tabs[i].id == id)
            return &a->tabs[i];
    return NULL;
}

snap_tab *snap_tab_current(snap_agent *a)
{
    snap_tab *t = snap_tab_by_id(a, a->cur);
    return t && !t->closed ? t : NULL;
}

static snap_tab *tab_by_target(snap_agent *a, const char *target)
{
    for (size_t i = 0; i < a->ntabs; i++)
        if (strcmp(a->tabs[i].target, target) == 0)
            return &a->tabs[i];
    return NULL;
}

snap_tab *snap_tab_by_session(snap_agent *a, const char *session)
{
    if (!session || !*session)
        return NULL;
    for (size_t i = 0; i < a->ntabs; i++) {
        snap_tab *t = &a->tabs[i];
        if (strcmp(t->session, session) == 0)
            return t;
        for (size_t k = 0; k < t->nframes; k++)
            if (strcmp(t->frames[k].session, session) == 0)
                return t;
    }
    return NULL;
}

snap_frame *snap_frame_find(snap_tab *t, const char *frame_id)
{
    for (size_t i = 0; t && i < t->nframes; i++)
        if (strcmp(t->frames[i].id, frame_id) == 0)
            return &t->frames[i];
    return NULL;
}

static snap_frame *frame_add(snap_tab *t, const char *id, const char *parent,
                             const char *session)
{
    snap_frame *f = snap_frame_find(t, id);
    if (f) {
        f->gone = false;
        if (parent && *parent)
            snap_agent_copyid(f->parent, parent);
        return f;
    }
    snap_frame *nf = base_grow(t->frames, t->nframes + 1, &t->capframes, sizeof *nf, 4);
    if (!nf)
        return NULL;
    t->frames = nf;
    f = &t->frames[t->nframes++];
    memset(f, 0, sizeof *f);
    snap_agent_copyid(f->id, id);
    snap_agent_copyid(f->parent, parent);
    snap_agent_copyid(f->session, session);
    return f;
}

static void frame_update(const snap_agent *a, snap_tab *t, const char *session,
                         const json_val *fr)
{
    const char *id = json_get_str(fr, "id");
    if (!id)
        return;
    const char *parent = json_get_str(fr, "parentId");
    snap_frame *f = frame_add(t, id, parent, session);
    if (!f)
        return;
    /* The main frame of an out-of-process iframe's session is that iframe:
     * its document belongs to this session now. */
    snap_agent_copyid(f->session, session);
    const char *loader = json_get_str(fr, "loaderId");
    if (loader)
        snap_agent_copyid(f->loader, loader);
    set_url(a, &f->url, json_get_str(fr, "url"));
    const char *origin = json_get_str(fr, "securityOrigin");
    snprintf(f->origin, sizeof f->origin, "%s", origin ? origin : "");
    f->gone = false;
    if (f == &t->frames[0] && strcmp(session, t->session) == 0)
        t->nav++;
}

/* Fill frames from a Page.getFrameTree reply, recursively. */
static void frames_from_tree(const snap_agent *a, snap_tab *t, const char *session,
                             const json_val *node, bool count_nav)
{
    const json_val *fr = json_get(node, "frame");
    uint64_t nav = t->nav;
    frame_update(a, t, session, fr);
    if (!count_nav)
        t->nav = nav;
    for (const json_val *c = json_first(json_get(node, "childFrames")); c; c = json_next(c))
        frames_from_tree(a, t, session, c, false);
}

static void tab_clear(snap_tab *t)
{
    snap_cache_free(t->cache);
    snap_net_clear(t);
    snap_problems_clear(t);
    for (size_t i = 0; i < t->nframes; i++)
        free(t->frames[i].url);
    free(t->frames);
    free(t->title);
    free(t->dialog_message);
    free(t->dialog_default);
    free(t->dialog_url);
    memset(t, 0, sizeof *t);
}

/* ---- events (listener: records only, never waits) ---- */

/* Page.javascriptDialogOpening (params p) on tab t. */
static void dialog_opening(const snap_agent *a, snap_tab *t, const json_val *p)
{
    t->dialog_open = true;
    snprintf(t->dialog_type, sizeof t->dialog_type, "%s",
             json_get_str(p, "type") ? json_get_str(p, "type") : "alert");
    snap_agent_setstr(&t->dialog_message, json_get_str(p, "message"));
    snap_agent_setstr(&t->dialog_default, json_get_str(p, "defaultPrompt"));
    /* Which frame's script opened it, at which URL: a confirmed accept
     * answers only the dialog the human was shown (act_page.c). */
    snap_agent_copyid(t->dialog_frame, json_get_str(p, "frameId"));
    free(t->dialog_url);
    t->dialog_url = NULL;
    if (json_get_str(p, "url"))
        set_url(a, &t->dialog_url, json_get_str(p, "url"));
}

static void queue_work(snap_agent *a, int kind, const char *target, const char *session,
                       const char *opener, int tab)
{
    if (a->nwork == MAX_PENDING)
        return;
    pending_work *w = &a->work[a->nwork++];
    memset(w, 0, sizeof *w);
    w->kind = kind;
    snap_agent_copyid(w->target, target);
    snap_agent_copyid(w->session, session);
    snap_agent_copyid(w->opener, opener);
    w->tab = tab;
}

/* A target no tab accounts for (a shared or service worker, a worklet):
 * its browser context, for sink.c (snap_other_ctx). */
static void other_add(snap_agent *a, const char *target, const char *ctx)
{
    struct snap_other *o = &a->others[a->nothers++ % (sizeof a->others / sizeof a->others[0])];
    snap_agent_copyid(o->target, target);
    snap_agent_copyid(o->ctx, ctx ? ctx : "");
}

const char *snap_other_ctx(const snap_agent *a, const char *target)
{
    size_t n = sizeof a->others / sizeof a->others[0];
    for (size_t i = 0; target && *target && i < n && i < a->nothers; i++)
        if (strcmp(a->others[i].target, target) == 0)
            return a->others[i].ctx;
    return NULL;
}

/* Frames inside a frame that is gone are gone too: the browser does not
 * always say so (a cross-site frame inside another one: its session's
 * detach is sent on its parent's session, detached first), and a frame
 * left listed made every later screenshot of the tab refuse (its
 * Page.getFrameTree fails: act_shot_mask.c live_frames). */
static void frames_drop_orphans(snap_tab *t)
{
    for (bool more = true; more;) {
        more = false;
        for (size_t k = 0; k < t->nframes; k++) {
            snap_frame *f = &t->frames[k];
            snap_frame *p = f->parent[0] && !f->gone ? snap_frame_find(t, f->parent) : NULL;
            if (p && p->gone) {
                f->gone = true;
                more = true;
            }
        }
    }
}

/* A session is gone: its tab closed (the tab's own session) or its
 * frame (an out-of-process frame's). Told twice when a page closes: first
 * Inspector.detached on the session itself, which already fails the calls
 * pending on it (cdp/), then Target.detachedFromTarget on the browser's;
 * under load the second can come reads later, so the first counts: an
 * input whose reply a window.close() cut off finds its tab closed, not a
 * browser error. */
static void session_detached(snap_agent *a, const char *sid)
{
    for (size_t i = 0; sid && *sid && i < a->ntabs; i++) {
        snap_tab *t = &a->tabs[i];
        if (strcmp(t->session, sid) == 0)
            t->closed = true;
        for (size_t k = 0; k < t->nframes; k++)
            if (strcmp(t->frames[k].session, sid) == 0)
                t->frames[k].gone = true;
        frames_drop_orphans(t);
    }
}

static void on_event(void *ud, cdp_conn *c, const char *session, const char *method,
                     const json_val *p)
{
    (void)c;
    snap_agent *a = ud;
    if ((!session || !*session) && strcmp(method, "Fetch.requestPaused") == 0) {
        snap_sink_paused(a, p);
        return;
    }
    if (strcmp(method, "Network.webSocketCreated") == 0)
        snap_sink_socket(a, session, p);
    if ((!session || !*session) && strncmp(method, "Browser.download", 16) == 0) {
        snap_dl_event(a, method, p);
        return;
    }
    if (strncmp(method, "Target.", 7) == 0) {
        const char *m = method + 7;
        const json_val *info = json_get(p, "targetInfo");
        if (strcmp(m, "targetCreated") == 0) {
            const char *type = json_get_str(info, "type");
            const char *opener = json_get_str(info, "openerId");
            const char *tid = json_get_str(info, "targetId");
            if (type && strcmp(type, "page") == 0 && opener && tid &&
                tab_by_target(a, opener) && !tab_by_target(a, tid))
                queue_work(a, 1, tid, "", opener, 0);
            else if (type && tid && strcmp(type, "page") && strcmp(type, "iframe") &&
                     strcmp(type, "browser") && strcmp(type, "tab"))
                other_add(a, tid, json_get_str(info, "browserContextId"));
        } else if (strcmp(m, "attachedToTarget") == 0) {
            snap_tab *t = snap_tab_by_session(a, session);
            const char *type = json_get_str(info, "type");
            const char *sid = json_get_str(p, "sessionId");
            const char *tid = json_get_str(info, "targetId");
            if (t && type && sid && tid && strcmp(type, "iframe") == 0) {
                /* An out-of-process iframe: its target id is its frame id. */
                snap_frame *f = snap_frame_find(t, tid);
                if (!f)
                    f = frame_add(t, tid, "", sid);
                if (f) {
                    snap_agent_copyid(f->session, sid);
                    f->oopif = true;
                    f->gone = false;
                    f->mute = false;    /* a new session: asked afresh */
                }
                queue_work(a, 2, tid, sid, "", t->id);
            } else if (t && type && sid && strcmp(type, "worker") == 0 &&
                       snap_sink_privileged(a, t)) {
                /* A worker of a privileged tab: its WebSockets are audited
                 * (sink.c) from its own Network events. */
                uint64_t id = 0;
                if (snap_cdp_send(a, sid, "Network.enable", "{\"maxTotalBufferSize\":0}",
                                  &id, NULL) == 0)
                    cdp_forget(a->c, id);
            }
        } else if (strcmp(m, "detachedFromTarget") == 0) {
            session_detached(a, json_get_str(p, "sessionId"));
        } else if (strcmp(m, "targetDestroyed") == 0 || strcmp(m, "targetCrashed") == 0) {
            const char *tid = json_get_str(p, "targetId");
            snap_tab *t = tid ? tab_by_target(a, tid) : NULL;
            if (t)
                t->closed = true;
        } else if (strcmp(m, "targetInfoChanged") == 0) {
            const char *tid = json_get_str(info, "targetId");
            snap_tab *t = tid ? tab_by_target(a, tid) : NULL;
            if (t)
                snap_agent_setstr(&t->title, json_get_str(info, "title"));
        }
        return;
    }
    if (strcmp(method, "Inspector.detached") == 0) {
        session_detached(a, session);
        return;
    }
    snap_tab *t = snap_tab_by_session(a, session);
    if (!t)
        return;
    /* Only what can be a consequence of an action counts for settling:
     * DOM mutation events of an animated page must not keep a wait from
     * settling (requests: agent_wait.c). */
    if (strncmp(method, "Page.", 5) == 0 && strcmp(method, "Page.lifecycleEvent") != 0)
        t->settle_evt++;
    if (strcmp(method, "Page.navigatedWithinDocument") == 0) {
        const char *id = json_get_str(p, "frameId");
        snap_frame *f = id ? snap_frame_find(t, id) : NULL;
        if (f)
            set_url(a, &f->url, json_get_str(p, "url"));
        if (f && f == &t->frames[0])
            t->inpage++;         /* a hash route or pushState: reported by actions */
        act_secret_url(a, f);
    } else if (strcmp(method, "Page.frameNavigated") == 0) {
        frame_update(a, t, session, json_get(p, "frame"));
        const char *id = json_get_str(json_get(p, "frame"), "id");
        act_secret_url(a, id ? snap_frame_find(t, id) : NULL);
    } else if (strcmp(method, "Page.frameStartedLoading") == 0 ||
               strcmp(method, "Page.frameRequestedNavigation") == 0 ||
               strcmp(method, "Page.frameStartedNavigating") == 0) {
        const char *id = json_get_str(p, "frameId");
        if (id && t->nframes && strcmp(id, t->frames[0].id) == 0)
            t->loading = true;
    } else if (strcmp(method, "Page.lifecycleEvent") == 0) {
        const char *id = json_get_str(p, "frameId");
        const char *name = json_get_str(p, "name");
        if (id && name && strcmp(name, "load") == 0 && t->nframes &&
            strcmp(id, t->frames[0].id) == 0)
            t->loading = false;
    } else if (strcmp(method, "Page.frameStoppedLoading") == 0) {
        const char *id = json_get_str(p, "frameId");
        if (id && t->nframes && strcmp(id, t->frames[0].id) == 0)
            t->loading = false;
    } else if (strcmp(method, "Page.frameAttached") == 0) {
        const char *id = json_get_str(p, "frameId");
        if (id)
            frame_add(t, id, json_get_str(p, "parentFrameId"), session);
    } else if (strcmp(method, "Page.frameDetached") == 0) {
        const char *id = json_get_str(p, "frameId");
        const char *why = json_get_str(p, "reason");
        snap_frame *f = id ? snap_frame_find(t, id) : NULL;
        /* "swap": the frame moves to another process; it lives on there. */
        if (f && !(why && strcmp(why, "swap") == 0)) {
            f->gone = true;
            frames_drop_orphans(t);
        }
    } else if (strcmp(method, "Page.javascriptDialogOpening") == 0) {
        dialog_opening(a, t, p);
    } else if (strcmp(method, "Page.javascriptDialogClosed") == 0) {
        t->dialog_open = false;
    } else if (strcmp(method, "Network.responseReceived") == 0) {
        /* The main frame's document: its HTTP status (session.c reads a
         * 401/403 as the service's answer to the session). */
        const char *id = json_get_str(p, "frameId");
        const char *type = json_get_str(p, "type");
        const char *loader = json_get_str(p, "loaderId");
        if (id && type && loader && strcmp(type, "Document") == 0 && t->nframes &&
            strcmp(id, t->frames[0].id) == 0) {
            t->doc_status = (int)json_get_int(json_get(p, "response"), "status", 0);
            snap_agent_copyid(t->doc_loader, loader);
        }
    }
    if (strncmp(method, "Network.", 8) == 0) {
        snap_net_event(a, t, method, p);
        snap_signin_net(a, method, p);
    }
    else if (strncmp(method, "Log.", 4) == 0)
        snap_problem_event(a, t, method, p);
}

/* ---- session setup ---- */

/* Enable what the agent tracks on a page or OOPIF session, pipelined, and
 * read its frame tree. */
static int session_init(snap_agent *a, snap_tab *t, const char *session, bool main,
                        snap_result *r)
{
    static const struct { const char *m, *p; } CMDS[] = {
        {"Page.enable", NULL},
        {"Page.setLifecycleEventsEnabled", "{\"enabled\":true}"},
        {"Network.enable", "{\"maxTotalBufferSize\":0,\"maxResourceBufferSize\":0}"},
        {"Log.enable", NULL},
        {"Target.setAutoAttach",
         "{\"autoAttach\":true,\"waitForDebuggerOnStart\":false,\"flatten\":true}"},
        {"Page.getFrameTree", NULL},
    };
    enum { N = sizeof CMDS / sizeof CMDS[0] };
    uint64_t ids[N];
    cdp_err e = {0};
    int rc = 0;
    size_t sent = 0;
    for (; sent < N; sent++)
        if ((rc = snap_cdp_send(a, session, CMDS[sent].m, CMDS[sent].p, &ids[sent], &e)))
            break;
    /* The host reads console errors (snap_opts.console): not waited on. */
    uint64_t rid = 0;
    if (!rc && a->o.console && snap_cdp_send(a, session, "Runtime.enable", NULL, &rid, NULL) == 0)
        cdp_forget(a->c, rid);
    /* One deadline for all (a frame whose process does not answer cost
     * each call the whole timeout in turn: 90 s). */
    int64_t deadline = base_now_ms() + (a->o.timeout_ms > 0 ? a->o.timeout_ms : 15000);
    for (size_t i = 0; i < sent; i++) {
        cdp_reply rep = {0};
        int64_t left = deadline - base_now_ms();
        int rc2 = cdp_wait(a->c, ids[i], left > 1 ? (int)left : 1, &rep, &e);
        if (rc2 && !rc)
            rc = rc2;
        if (rc2 == 0 && i == N - 1) {
            const json_val *tree = json_get(rep.result, "frameTree");
            frames_from_tree(a, t, session, tree, main);
            /* frames[0] is the main frame, whatever events came first. */
            snap_frame *root = snap_frame_find(t, json_get_str(json_get(tree, "frame"), "id")
                                                      ? json_get_str(json_get(tree, "frame"),
                                                                     "id") : "");
            if (main && root && root != &t->frames[0]) {
                snap_frame tmp = t->frames[0];
                t->frames[0] = *root;
                *root = tmp;
            }
        }
        cdp_reply_free(&rep);
    }
    if (rc)
        return snap_fail(r, SNAP_EBROWSER, "cannot set up the page: %s", e.msg);
    if (main)
        snap_dl_page_deny(a, session);  /* the context's behaviour was refused (R2) */
    return 0;
}

static snap_tab *tab_new(snap_agent *a, const char *target, const char *session)
{
    snap_tab *nt = base_grow(a->tabs, a->ntabs + 1, &a->captabs, sizeof *nt, 4);
    if (!nt)
        return NULL;
    a->tabs = nt;
    snap_tab *t = &a->tabs[a->ntabs++];
    memset(t, 0, sizeof *t);
    t->id = ++a->next_tab;
    snap_agent_copyid(t->target, target);
    snap_agent_copyid(t->session, session);
    return t;
}

static int attach(snap_agent *a, const char *target, char session[SNAP_ID_MAX],
                  snap_result *r)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "targetId");
    json_w_str(&w, target);
    json_w_key(&w, "flatten");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    if (!params)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    cdp_reply rep;
    cdp_err e = {0};
    int rc = snap_cdp_call(a, NULL, "Target.attachToTarget", params, a->o.timeout_ms, &rep, &e);
    free(params);
    if (rc)
        return snap_fail(r, SNAP_EBROWSER, "cannot attach to the page: %s", e.msg);
    snap_agent_copyid(session, json_get_str(rep.result, "sessionId"));
    cdp_reply_free(&rep);
    return *session ? 0 : snap_fail(r, SNAP_EBROWSER, "attach: no session id");
}

/* Adopt a popup or initialise an OOPIF session queued by the listener. */
static void do_work(snap_agent *a, pending_work *w)
{
    snap_result scratch = {0};
    if (w->kind == 1) {
        if (tab_by_target(a, w->target))
            return;
        char session[SNAP_ID_MAX];
        if (attach(a, w->target, session, &scratch) == 0) {
            snap_tab *t = tab_new(a, w->target, session);
            if (t) {
                snap_tab *op = tab_by_target(a, w->opener);
                t->opener = op ? op->id : 0;
                t->ctx = op ? op->ctx : 0;      /* popups share the opener's context */
                t->created = true;
                session_init(a, t, session, true, &scratch);
            }
        }
    } else if (w->kind == 2) {
        snap_tab *t = snap_tab_by_id(a, w->tab);
        /* A frame whose process did not answer its set-up in time is not
         * read until it answers (observe_render.c probes it). */
        if (t && !t->closed)
            snap_session_mute(a, w->tab, w->session,
                              session_init(a, t, w->session, false, &scratch) != 0);
    }
    snap_result_free(&scratch);
}

void snap_session_mute(snap_agent *a, int tab_id, const char *session, bool on)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    bool was = false;
    for (size_t k = 0; t && session && *session && k < t->nframes; k++)
        if (strcmp(t->frames[k].session, session) == 0) {
            was = was || t->frames[k].mute;
            t->frames[k].mute = on;
        }
    if (t && was && !on && strcmp(session, t->session) != 0)
        queue_work(a, 2, "", session, "", tab_id);
}

int snap_read_timeout(const snap_agent *a)
{
    int t = a->o.timeout_ms > 0 ? a->o.timeout_ms : 15000;
    return t > INT_MAX / SNAP_READ_FACTOR ? INT_MAX : t * SNAP_READ_FACTOR;
}

int snap_sync(snap_agent *a)
{
    cdp_err e;
    int rc = cdp_pump(a->c, 0, &e);
    /* Work may queue more work (a popup's iframes): loop until drained. */
    for (int rounds = 0; a->nwork && rounds < 8; rounds++) {
        pending_work batch[MAX_PENDING];
        size_t n = a->nwork;
        memcpy(batch, a->work, n * sizeof batch[0]);
        a->nwork = 0;
        for (size_t i = 0; i < n; i++)
            do_work(a, &batch[i]);
    }
    snap_dl_sync(a);                 /* downloads: cancel the page's, decide the agent's */
    snap_sink_asks(a);
    snap_signin_sync(a);             /* a sign-in in the untrusted context (R8-6 b) */
    return rc ? SNAP_EBROWSER : 0;
}

/* Open a new tab in context ctxs[ctx] (Target.createTarget there, attach,
 * enable Page/Network/Runtime/lifecycle, auto-attach to OOPIFs). */
int snap_tab_open(snap_agent *a, size_t ctx, snap_tab **out, snap_result *r)
{
    *out = NULL;
    cdp_reply rep;
    cdp_err e = {0};
    char target[SNAP_ID_MAX] = "";
    bool created = false;
    int rc = snap_ctx_untrusted(a, r);
    if (rc)
        return rc;
    if (ctx >= a->nctxs)
        return snap_fail(r, SNAP_EINVAL, "no such browser context");
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "url");
    json_w_str(&w, "about:blank");
    if (a->ctxs[ctx].id[0]) {
        json_w_key(&w, "browserContextId");
        json_w_str(&w, a->ctxs[ctx].id);
    }
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    if (!params)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    rc = snap_cdp_call(a, NULL, "Target.createTarget", params, a->o.timeout_ms, &rep, &e);
    free(params);
    if (rc == CDP_EPROTOCOL && ctx != 0)
        return snap_fail(r, SNAP_EBROWSER, "the browser refused a new tab in the context of "
                         "%s: %s", a->ctxs[ctx].origin, e.msg);
    if (rc == 0) {
        snap_agent_copyid(target, json_get_str(rep.result, "targetId"));
        created = true;
        cdp_reply_free(&rep);
    } else if (rc == CDP_EPROTOCOL) {
        /* Electron apps refuse new targets: work in an existing page that
         * is not already one of our tabs. It lives in the default context,
         * which the open web then shares (snap_open says so once). */
        a->ctx_shared = true;
        snap_dl_context(a, NULL);    /* the default context's downloads (R2) */
        if (snap_cdp_call(a, NULL, "Target.getTargets", NULL, a->o.timeout_ms, &rep, &e) == 0) {
            for (const json_val *ti = json_first(json_get(rep.result, "targetInfos")); ti;
                 ti = json_next(ti)) {
                const char *type = json_get_str(ti, "type");
                const char *id = json_get_str(ti, "targetId");
                if (type && id && strcmp(type, "page") == 0 && !tab_by_target(a, id)) {
                    snap_agent_copyid(target, id);
                    break;
                }
            }
            cdp_reply_free(&rep);
        }
        if (!*target)
            return snap_fail(r, SNAP_EBROWSER, "the browser refused a new tab (%s) and has "
                             "no other page to use", e.msg);
    } else {
        return snap_fail(r, SNAP_EBROWSER, "cannot open a tab: %s", e.msg);
    }
    char session[SNAP_ID_MAX];
    if ((rc = attach(a, target, session, r)))
        return rc;
    snap_tab *t = tab_new(a, target, session);
    if (!t)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    t->created = created;
    t->ctx = ctx;
    if ((rc = session_init(a, t, session, true, r))) {
        t->closed = true;
        return rc;
    }
    a->cur = t->id;
    *out = t;
    return 0;
}

/* ---- agent ---- */

bool snap_listener_last(const snap_agent *a)
{
    return cdp_listener_last(a->c, on_event, (void *)a);
}


/* What a page's session answers while a JavaScript dialog of the tab is
 * open: the browser's own methods. Measured on Chromium 156 (session 21):
 * every other method tried waited until the dialog was answered, among
 * them Runtime.*, DOM.*, DOMSnapshot.*, Accessibility.*, CSS.*,
 * Emulation.*, Overlay.*, Log.enable, Page.createIsolatedWorld,
 * getFrameTree, getLayoutMetrics, captureScreenshot, setBypassCSP,
 * addScriptToEvaluateOnNewDocument, Network.enable, getResponseBody,
 * setExtraHTTPHeaders, setCacheDisabled, Target.setAutoAttach and
 * Input.insertText; these answered: the ones below, and Page.reload,
 * close, stopLoading, bringToFront, Network.getCookies, Target.getTargetInfo,
 * Browser.getVersion, which the agent never sends (not in sink.c's
 * METHODS: tests/checksink.sh keeps every method named here in that
 * table). The input events are the browser's (act_input.c waits for them
 * and a dialog itself). */
static bool dialog_free(const char *method)
{
    static const char *const FREE[] = {
        "Page.handleJavaScriptDialog", "Page.navigate", "Page.getNavigationHistory",
        "Page.navigateToHistoryEntry", "Page.resetNavigationHistory",
        "Page.setDownloadBehavior", "Target.closeTarget", "Target.activateTarget",
        "Input.dispatchMouseEvent", "Input.dispatchKeyEvent",
    };
    static const char *const DOMAINS[] = {"Fetch.", "Storage.", "Security."};
    for (size_t i = 0; i < sizeof FREE / sizeof FREE[0]; i++)
        if (strcmp(method, FREE[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof DOMAINS / sizeof DOMAINS[0]; i++)
        if (strncmp(method, DOMAINS[i], strlen(DOMAINS[i])) == 0)
            return true;
    return false;
}

/* The connection's hold (cdp_hold_add): a call to a session of a tab whose
 * page shows a dialog is not waited for. Without it a dialog that opens
 * while the agent reads the page (an alert a timer raises just after the
 * load) made every following call wait its whole timeout: browser_open
 * did not answer for minutes (session 21). */
static const char *dialog_hold(void *ud, const char *session, const char *method)
{
    snap_agent *a = ud;
    snap_tab *t = snap_tab_by_session(a, session);
    if (!t || !t->dialog_open || dialog_free(method))
        return NULL;
    return "a JavaScript dialog is open on the page: the page answers nothing more until the "
           "dialog is answered";
}

snap_agent *snap_agent_new(cdp_browser *b, const snap_opts *o, cdp_err *err)
{
    snap_agent *a = calloc(1, sizeof *a);
    if (!a) {
        if (err) {
            err->code = CDP_ENOMEM;
            snprintf(err->msg, sizeof err->msg, "out of memory");
        }
        return NULL;
    }
    a->b = b;
    a->c = cdp_browser_conn(b);
    if (o)
        a->o = *o;
    if (!a->o.budget_chars)
        a->o.budget_chars = 12000;
    if (!a->o.timeout_ms)
        a->o.timeout_ms = 15000;
    if (a->o.gate) {
        a->gate = a->o.gate;
    } else {
        gate_err ge;
        a->gate = gate_new(NULL, NULL, &ge);
        a->gate_owned = true;
        if (!a->gate) {
            free(a);
            if (err) {
                err->code = CDP_ENOMEM;
                snprintf(err->msg, sizeof err->msg, "gate: %s", ge.msg);
            }
            return NULL;
        }
    }
    uint8_t rnd[8];
    if (base_random(rnd, sizeof rnd) != 0) {
        free(a);
        if (err) {
            err->code = CDP_EINVAL;
            snprintf(err->msg, sizeof err->msg, "no randomness for the content nonce");
        }
        return NULL;
    }
    for (int i = 0; i < 8; i++)
        snprintf(a->nonce + 2 * i, 3, "%02x", rnd[i]);
    cdp_conn_share(a->c, +1);
    if (cdp_listen(a->c, on_event, a) || cdp_hold_add(a->c, dialog_hold, a)) {
        cdp_unlisten(a->c, on_event, a);
        cdp_conn_share(a->c, -1);
        if (a->gate_owned)
            gate_free(a->gate);
        free(a);
        if (err) {
            err->code = CDP_ELIMIT;
            snprintf(err->msg, sizeof err->msg, "too many listeners or holds on the connection");
        }
        return NULL;
    }
    /* Popups: learn about new page targets opened by our tabs. Without it
     * popups would silently never become tabs: fail instead. */
    if (snap_cdp_call(a, NULL, "Target.setDiscoverTargets", "{\"discover\":true}",
                      a->o.timeout_ms, NULL, err) ||
        snap_sink_intercept(a, err)) {
        cdp_unlisten(a->c, on_event, a);
        cdp_hold_remove(a->c, dialog_hold, a);
        cdp_conn_share(a->c, -1);
        if (a->gate_owned)
            gate_free(a->gate);
        free(a);
        return NULL;
    }
    return a;
}

/* Target.closeTarget for t, under the permit the caller holds; the answer
 * is not waited on beyond 3 s and its failure changes nothing here. */
void snap_tab_close_target(snap_agent *a, const snap_tab *t)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "targetId");
    json_w_str(&w, t->target);
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    if (params)
        snap_cdp_call(a, NULL, "Target.closeTarget", params, 3000, NULL, NULL);
    free(params);
}

void snap_agent_free(snap_agent *a)
{
    if (!a)
        return;
    cdp_unlisten(a->c, on_event, a);
    cdp_hold_remove(a->c, dialog_hold, a);
    cdp_conn_share(a->c, -1);
    snap_sink_free(a);
    snap_signin_free(a);
    snap_cover_drop(a);
    snap_permit_begin(a, "teardown");
    for (size_t i = 0; i < a->ntabs; i++) {
        snap_tab *t = &a->tabs[i];
        if (t->created && !t->closed && !cdp_conn_dead(a->c))
            snap_tab_close_target(a, t);
        tab_clear(t);
    }
    snap_ctx_free_all(a);
    free(a->tabs);
    for (size_t i = 0; i < a->nrefs; i++)
        snap_ref_clear(&a->refs[i]);
    free(a->refs);
    free(a->ref_hash);
    free(a->refdocs);
    free(a->secrets);
    free(a->ref_roles);
    free(a->obs);
    if (a->gate_owned)
        gate_free(a->gate);
    snap_scrub_free(a);
    snap_secval_free(a);
    snap_dl_free(a);
    snap_rec_free(a->rec);
    free(a);
}
