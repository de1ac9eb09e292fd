/*
 * session_check.c — whether a context still holds its session: the login
 * wall, the session's credentials still in the browser (snap_ctx_check,
 * after each open), and the tab's authentication (snap_tab_auth).
 *
 * Part of snapshot/ (see session.c for the invariants, session_int.h for
 * what the session files share).
 */
#include "snapshot/session_int.h"
#include "snapshot/page_js.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the login wall ---- */

/* A path that looks like a login page: a segment naming login or sign-in,
 * or an auth/SSO/second-factor step. */
static bool login_path(const char *path)
{
    static const char *const PART[] = {"login", "log-in", "log_in", "logon", "signin",
                                       "sign-in", "sign_in", NULL};
    static const char *const WHOLE[] = {"auth", "authenticate", "sso", "2fa", "mfa", "otp",
                                        "challenge", "verify", NULL};
    char seg[128];
    const char *p = path ? path : "";
    char prev[128] = "";
    while (*p) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (!n)
            break;
        size_t m = n < sizeof seg - 1 ? n : sizeof seg - 1;
        for (size_t i = 0; i < m; i++)
            seg[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] + 32 : p[i]);
        seg[m] = 0;
        for (const char *const *w = PART; *w; w++)
            if (strstr(seg, *w))
                return true;
        char base[128];
        snprintf(base, sizeof base, "%.*s", (int)strcspn(seg, "."), seg);
        for (const char *const *w = WHOLE; *w; w++)
            if (strcmp(base, *w) == 0)
                return true;
        if (strcmp(base, "new") == 0 && (strcmp(prev, "session") == 0 ||
                                         strcmp(prev, "sessions") == 0))
            return true;
        snprintf(prev, sizeof prev, "%s", base);
        p += n;
    }
    return false;
}

bool snap_session_login_path(const char *path)
{
    return login_path(path);
}

/* 1 when tab's page shows a login wall, 0 when not, -1 when unknown. */
int snap_session_login_wall(snap_agent *a, int tab_id)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed || !t->nframes)
        return -1;
    char session[SNAP_ID_MAX];
    snap_session_copyid(session, t->session);
    /* Read in cdpgate's isolated world: the page's scripts cannot redefine
     * what the check calls there. */
    int64_t world = snap_frame_world(a, tab_id, t->frames[0].id);
    if (world <= 0)
        return -1;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "expression");
    json_w_str(&w, snap_js_wall);
    json_w_key(&w, "returnByValue");
    json_w_bool(&w, true);
    json_w_key(&w, "contextId");
    json_w_int(&w, world);
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    cdp_reply rep = {0};
    int rc = params ? snap_cdp_call(a, session, "Runtime.evaluate", params, a->o.timeout_ms,
                               &rep, NULL) : CDP_ENOMEM;
    free(params);
    int wall = -1;
    const json_val *v = json_get(json_get(rep.result, "result"), "value");
    if (rc == 0 && json_is(v, JSON_OBJECT))
        wall = json_bool(json_get(v, "pw")) || login_path(json_get_str(v, "path"));
    cdp_reply_free(&rep);
    return wall;
}

/* The path of an http(s) URL as the browser reads it, "/" when it has
 * none or cannot be parsed (out: cap bytes; url/url.h). */
static void page_path(const char *url, char *out, size_t cap)
{
    if (url_path(url, out, cap))
        snprintf(out, cap, "/");
}

/* 1 while context ci still holds some of its session's credentials (a
 * cookie of the service under one of the session's cookie names, or one of
 * its localStorage keys on its origin, read in tab tab_id), 0 when the
 * service dropped them all, -1 when that cannot be told (counts as held). */
static int creds_held(snap_agent *a, size_t ci, int tab_id)
{
    snap_ctx *c = &a->ctxs[ci];
    if (c->names_lost || (!c->ck_names && !c->ls_keys) || !*c->id)
        return -1;
    char origin[256];
    snprintf(origin, sizeof origin, "%s", c->origin);
    if (c->ck_names) {
        char params[SNAP_ID_MAX + 40];
        snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", c->id);
        cdp_reply ck = {0};
        /* The reply carries values: a secret call, its reply wiped. */
        if (snap_cdp_call_secret(a, NULL, "Storage.getCookies", params, a->o.timeout_ms, &ck,
                                 NULL))
            return -1;
        const json_val *list = json_get(ck.result, "cookies");
        if (!json_is(list, JSON_ARRAY)) {
            cdp_reply_free(&ck);
            return -1;
        }
        c = &a->ctxs[ci];
        char host[200];
        snap_session_origin_host(origin, host, sizeof host);
        bool left = false;
        for (const json_val *k = json_first(list); k && !left; k = json_next(k))
            left = snap_session_cookie_for_host(json_get_str(k, "domain"), host) &&
                   snap_session_names_has(c->ck_names, json_get_str(k, "name"));
        cdp_reply_free(&ck);
        if (left)
            return 1;
    }
    if (!c->ls_keys)
        return 0;
    /* localStorage: only a document of the origin can read it. */
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed || t->ctx != ci || !t->nframes ||
        strcmp(t->frames[0].origin, origin) != 0)
        return -1;
    char session[SNAP_ID_MAX], params[SNAP_ID_MAX + 120];
    snap_session_copyid(session, t->session);
    /* Read in an isolated world of cdpgate's own: the page's scripts cannot
     * redefine Object.keys or localStorage there to hide the keys. */
    int64_t world = snap_frame_world(a, tab_id, t->frames[0].id);
    if (world <= 0)
        return -1;
    cdp_reply rep = {0};
    snprintf(params, sizeof params, "{\"expression\":\"%s\",\"returnByValue\":"
             "true,\"contextId\":%lld}", snap_js_ls_keys, (long long)world);
    int rc = snap_cdp_call(a, session, "Runtime.evaluate", params, a->o.timeout_ms, &rep, NULL);
    const json_val *keys = json_get(json_get(rep.result, "result"), "value");
    int held = -1;
    if (rc == 0 && !json_get(rep.result, "exceptionDetails") && json_is(keys, JSON_ARRAY)) {
        c = &a->ctxs[ci];
        held = 0;
        for (const json_val *k = json_first(keys); k && !held; k = json_next(k))
            held = snap_session_names_has(c->ls_keys, json_str(k, NULL));
    }
    cdp_reply_free(&rep);
    return held;
}

/* Whether the open of url (the agent's choice) in tab tab_id was sent by
 * the service to its login page: url's path is not a login path, the page
 * is now elsewhere (another origin or path), and what it shows is a login
 * page (a login path or a visible password field). path gets the page's
 * path. */
static bool sent_to_login(snap_agent *a, int tab_id, const char *url, char *path,
                          size_t cap)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    char asked_origin[256], asked[1024];
    if (!t || t->closed || !t->nframes || !url ||
        snap_url_origin(url, asked_origin, sizeof asked_origin))
        return false;
    page_path(url, asked, sizeof asked);
    page_path(t->frames[0].url, path, cap);
    if (login_path(asked) ||
        (strcmp(asked_origin, t->frames[0].origin) == 0 && strcmp(asked, path) == 0))
        return false;
    return snap_session_login_wall(a, tab_id) == 1;
}

void snap_ctx_check(snap_agent *a, int tab_id, const char *url, char *note, size_t cap)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->ctx == 0 || t->ctx >= a->nctxs || !t->nframes)
        return;
    size_t ci = t->ctx;
    snap_ctx *c = &a->ctxs[ci];
    if (!c->creds || c->state == SNAP_CTX_LOGIN)
        return;
    c->check = false;
    char origin[256];
    snprintf(origin, sizeof origin, "%s", c->origin);
    /* Dropped credentials are the one thing that ends authentication. */
    int held = creds_held(a, ci, tab_id);
    c = &a->ctxs[ci];
    if (held == 0) {
        c->creds = false;
        if (c->state == SNAP_CTX_AUTH)
            c->state = SNAP_CTX_REJECTED;
        snprintf(note, cap, "The site ended the session of %s: none of the session's "
                 "cookies%s is left in its browser context (the site cleared or expired "
                 "them), so %s is not authenticated here any more (auth=no). If the task "
                 "needs the session, ask the user to log in again: cdpgate login %s",
                 origin, c->ls_keys ? " or localStorage items" : "", origin, origin);
        return;
    }
    /* Evidence the service rejected the session: only a note. */
    t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed || !t->nframes)
        return;
    char why[400] = "", path[200];
    const snap_frame *f = &t->frames[0];
    if ((t->doc_status == 401 || t->doc_status == 403) && *t->doc_loader &&
        strcmp(t->doc_loader, f->loader) == 0 && strcmp(f->origin, origin) == 0)
        snprintf(why, sizeof why, "it answered this page with HTTP %d", t->doc_status);
    else if (sent_to_login(a, tab_id, url, path, sizeof path))
        snprintf(why, sizeof why, "it sent the page asked for to a login page (%.150s)",
                 path);
    if (!why[0])
        return;
    snprintf(note, cap, "Note: the site may have rejected the session of %s: %s. The "
             "session is kept: pages of %s stay authenticated (auth=yes) while its browser "
             "context holds the session's cookies, so state changes there are still "
             "confirmed or stopped. If the task needs the session, ask the user to log in "
             "again: cdpgate login %s", origin, why, origin, origin);
}

bool snap_tab_auth(const snap_agent *a, const snap_tab *t)
{
    /* A person held control in the untrusted context (a takeover): a
     * sign-in there is live in it though never kept, so each of its pages
     * counts as signed in (red team s18, R8-6; fail closed). So does the
     * default context of a browser that refused one of our own (Electron
     * over --connect): it holds the user's own sign-ins (R8-6 c). */
    if (t && t->ctx == 0 && snap_open_person(a) && t->nframes)
        return true;
    /* A sign-in made there for the page's site (a magic link, a sign-in
     * form; R8-6 b, signin.c). */
    if (t && t->ctx == 0 && t->nframes && snap_signin_site(a, t->frames[0].origin))
        return true;
    if (!t || t->ctx == 0 || t->ctx >= a->nctxs || !t->nframes)
        return false;
    const snap_ctx *c = &a->ctxs[t->ctx];
    return c->creds && strcmp(t->frames[0].origin, c->origin) == 0;
}

bool snap_open_person(const snap_agent *a)
{
    return a->ctx_shared || (a->nctxs && a->ctxs[0].person);
}

const char *snap_tab_service(const snap_agent *a, const snap_tab *t)
{
    if (!t || t->ctx == 0 || t->ctx >= a->nctxs)
        return NULL;
    const snap_ctx *c = &a->ctxs[t->ctx];
    return c->creds && c->origin[0] ? c->origin : NULL;
}

bool snap_origin_service(const snap_agent *a, const char *origin)
{
    if (!origin || !*origin)
        return false;
    for (size_t i = 1; i < a->nctxs; i++)
        if (a->ctxs[i].creds && strcmp(a->ctxs[i].origin, origin) == 0)
            return true;
    return a->o.vault && gate_identity_for(a->gate, origin) != NULL;
}
