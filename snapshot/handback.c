/*
 * handback.c — the hand-back after a live-view takeover (issue 15, point
 * 4): whether the agent's current tab is logged in, by the gate's own rule
 * (snap_tab_auth: the tab's context is privileged for the page's origin and
 * holds a session: auth=yes), and the capture of a session the person
 * logged into during the takeover, with the rules of `cdpgate login`
 * (session.c): only on an origin the task grant names an identity for,
 * only off the login wall (no visible password field, not a login path),
 * never replacing a named identity's session by "default"; the service
 * host's cookies and the origin's localStorage sealed into the vault
 * under that identity; no form value, ever.
 *
 * A session the person made in the agent's untrusted context (the open
 * web's) does not stay there: it moves into a privileged context of its
 * own, created as a restored one is (the grant's network rule), the page
 * is opened again there, and the service's cookies are deleted from the
 * untrusted context and its tab closed. A tab already authenticated (the
 * person answered a one-time code on a restored session) has its session
 * saved again from its own context.
 *
 * Values are read as secrets (snap_cdp_call_secret) and wiped; what is
 * returned and audited names counts, names and the identity only.
 */
#include "snapshot/session_int.h"
#include "snapshot/agent_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "gate/gate.h"
#include "vault/vault.h"

/* Delete the cookies of host from the context of tab t (names, domains
 * and paths from Storage.getCookies; the values are read as secrets and
 * wiped), through t's own session: Network.deleteCookies acts on its
 * context only. */
static void hb_forget_cookies(snap_agent *a, const snap_tab *t, const char *host)
{
    const char *ctx = t->ctx < a->nctxs ? a->ctxs[t->ctx].id : "";
    char params[SNAP_ID_MAX + 40] = "{}", session[SNAP_ID_MAX];
    if (*ctx)
        snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", ctx);
    snap_session_copyid(session, t->session);
    cdp_reply ck = {0};
    if (snap_cdp_call_secret(a, NULL, "Storage.getCookies", params, a->o.timeout_ms, &ck,
                             NULL) != 0)
        return;
    for (const json_val *k = json_first(json_get(ck.result, "cookies")); k; k = json_next(k)) {
        const char *dom = json_get_str(k, "domain");
        if (!json_get_str(k, "name") || !snap_session_cookie_for_host(dom, host))
            continue;
        json_w w;
        json_w_init(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, "name");
        json_w_str(&w, json_get_str(k, "name"));
        json_w_key(&w, "domain");
        json_w_str(&w, dom);
        json_w_key(&w, "path");
        json_w_str(&w, json_get_str(k, "path") ? json_get_str(k, "path") : "/");
        json_w_obj_end(&w);
        char *p = json_w_take(&w, NULL);
        json_w_free(&w);
        if (p)
            snap_cdp_call(a, session, "Network.deleteCookies", p, a->o.timeout_ms, NULL, NULL);
        free(p);
    }
    cdp_reply_free(&ck);
}

/* Seal the session of tab tab_id's context ci into the vault under ident.
 * 0 with the counts in h, else a snap_fail code with r saying why. */
static int hb_seal(snap_agent *a, size_t ci, int tab_id, const char *ident, snap_handback *h,
                   char **state, snap_result *r)
{
    int64_t expiry = 0;
    cdp_err e = {0};
    /* the context as the service's: its id, the origin's cookies (the
     * untrusted context has no origin of its own) */
    snap_ctx c = a->ctxs[ci];
    snprintf(c.origin, sizeof c.origin, "%s", h->origin);
    if (snap_session_capture(a, &c, tab_id, state, &h->ncookies, &h->nls, &expiry, &e))
        return snap_fail(r, SNAP_EBROWSER, "its session could not be read (%s), so nothing "
                         "was saved", e.msg);
    if (!h->ncookies && !h->nls)
        return snap_fail(r, SNAP_ELOGIN, "the browser holds no cookie or localStorage item "
                         "of %s, so there is no session to save", h->origin);
    int rc = snap_session_keeps_named(a, h->origin, "saved", r);
    if (rc)
        return rc;
    char verr[400] = "";
    if (vault_put(a->o.vault, h->origin, ident, (const uint8_t *)*state, strlen(*state),
                  expiry, verr, sizeof verr))
        return snap_fail(r, SNAP_EBROWSER, "the session could not be saved in the vault: %s",
                         verr);
    h->saved = true;
    char line[300];
    snprintf(line, sizeof line, "hand-back: the session of %.120s (%zu cookies, %zu "
             "localStorage items) saved in the vault under identity %.60s", h->origin,
             h->ncookies, h->nls, ident);
    gate_audit_live(a->gate, true, line);
    return 0;
}

/* The page of the untrusted tab t, on its origin and whole (not redacted),
 * else the origin's root (new; NULL when out of memory). */
static char *hb_landing(const snap_tab *t, const char *origin)
{
    bool whole = t->frames[0].url && !strstr(t->frames[0].url, "[redacted]");
    size_t n = (whole ? strlen(t->frames[0].url) : strlen(origin)) + 2;
    char *u = malloc(n);
    if (u)
        snprintf(u, n, "%s%s", whole ? t->frames[0].url : origin, whole ? "" : "/");
    return u;
}

/* Move the session (state) of the untrusted tab tab_id into a privileged
 * context of its own, open its page there, and take it out of the
 * untrusted context (its cookies deleted, the tab closed). 0, or a
 * snap_fail code (the session is in the vault all the same). */
static int hb_move(snap_agent *a, int tab_id, const char *state, snap_handback *h,
                   snap_result *r)
{
    json_opts po = {0};
    po.max_size = SNAP_STATE_MAX;
    po.max_depth = 16;
    po.flags = JSON_SECRET;
    json_doc *d = json_parse(state, strlen(state), &po, NULL);
    size_t ni = 0;
    int rc = d ? snap_session_ctx_from_state(a, h->origin, json_doc_root(d),
                                             gate_grant_get(a->gate) != NULL, &ni, r)
               : snap_fail(r, SNAP_ENOMEM, "out of memory");
    json_doc_free(d);
    snap_tab *t = snap_tab_by_id(a, tab_id);
    char *landing = !rc && t ? hb_landing(t, h->origin) : NULL;
    if (rc || !landing) {
        free(landing);
        return rc ? rc : snap_fail(r, SNAP_ENOMEM, "out of memory");
    }
    a->ctxs[ni].captured = (int64_t)time(NULL);
    a->ctxs[ni].check = false;
    snap_result o;
    int orc = snap_open_in(a, landing, ni, true, &o);
    free(landing);
    snprintf(h->obs, sizeof h->obs, "%s", o.obs);
    snap_result_free(&o);
    char host[200];
    snap_session_origin_host(h->origin, host, sizeof host);
    t = snap_tab_by_id(a, tab_id);
    if (t && !t->closed) {
        hb_forget_cookies(a, t, host);
        char saved[SNAP_PERMIT_MAX];
        snap_permit_push(a, "teardown", saved);
        snap_tab_close_target(a, t);
        snap_permit_begin(a, saved);
        snap_sync(a);
    }
    if (orc && orc != SNAP_EDIALOG)
        return snap_fail(r, orc, "the page could not be opened again in the session's own "
                         "context (%s): open a page of %s", snap_strerror(orc), h->origin);
    return 0;
}

/* Decide and capture for the current tab t (not authenticated): 0 when
 * saved and moved, else a code with r saying why not. */
static int hb_untrusted(snap_agent *a, snap_tab *t, snap_handback *h, snap_result *r)
{
    if (t->ctx >= a->nctxs || a->ctxs[t->ctx].state != SNAP_CTX_UNTRUSTED)
        return snap_fail(r, SNAP_ELOGIN, "the tab's session was ended by the site");
    const char *ident = gate_identity_for(a->gate, h->origin);
    if (!a->o.vault || !ident)
        return snap_fail(r, SNAP_ELOGIN, "%s, so no session of %s is saved",
                         a->o.vault ? "the task grant names no identity for it"
                                    : "no session vault is open", h->origin);
    snprintf(h->identity, sizeof h->identity, "%s", ident);
    int tab_id = t->id;
    if (snap_session_login_wall(a, tab_id) != 0)
        return snap_fail(r, SNAP_ELOGIN, "the page still shows a login (a password field or a "
                         "login path), so nothing was saved");
    char *state = NULL;
    int rc = hb_seal(a, t->ctx, tab_id, ident, h, &state, r);
    if (!rc)
        rc = hb_move(a, tab_id, state, h, r);
    if (state)
        base_memzero(state, strlen(state));
    free(state);
    return rc;
}

static void hb_run(snap_agent *a, bool person, snap_handback *h)
{
    snap_result r;
    memset(&r, 0, sizeof r);
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    if (!t || t->closed || !t->nframes || !*t->frames[0].origin) {
        snprintf(h->note, sizeof h->note, "no page of a web origin is open");
    } else if (!person) {
        /* nobody held control: nothing of theirs to save */
        snprintf(h->origin, sizeof h->origin, "%s", t->frames[0].origin);
        snprintf(h->note, sizeof h->note, "nobody took control, so nothing was saved");
    } else if (snap_tab_auth(a, t)) {
        snprintf(h->origin, sizeof h->origin, "%s", t->frames[0].origin);
        const char *ident = gate_identity_for(a->gate, h->origin);
        char *state = NULL;
        /* saved again only off the login wall: a person who signed out
         * never replaces the stored session with what is left */
        if (ident && a->o.vault && snap_session_login_wall(a, t->id) != 0) {
            snprintf(h->note, sizeof h->note, "the page shows a login, so the stored "
                     "session was not replaced");
        } else if (ident && a->o.vault) {
            snprintf(h->identity, sizeof h->identity, "%s", ident);
            if (hb_seal(a, t->ctx, t->id, ident, h, &state, &r))
                snprintf(h->note, sizeof h->note, "%s", r.text ? r.text : "");
        }
        if (state)
            base_memzero(state, strlen(state));
        free(state);
    } else {
        snprintf(h->origin, sizeof h->origin, "%s", t->frames[0].origin);
        if (hb_untrusted(a, t, h, &r))
            snprintf(h->note, sizeof h->note, "%s", r.text ? r.text : "");
    }
    snap_result_free(&r);
    t = snap_tab_current(a);
    h->logged_in = t && snap_tab_auth(a, t);
    if (!*h->obs)
        snap_obs_issue(a, t, h->obs);
}

void snap_human_handback(snap_agent *a, bool person, snap_handback *h)
{
    memset(h, 0, sizeof *h);
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "login", saved);
    hb_run(a, person, h);
    snap_permit_begin(a, saved);
}
