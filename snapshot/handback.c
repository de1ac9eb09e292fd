/*
 * handback.c — the person's sign-in for a takeover and the hand-back after
 * it (issue 15, point 4; red team s15, R5-1, R5-4, R5-5).
 *
 * The sign-in (snap_human_signin): when the gate stops the agent at a
 * password, one-time code or CAPTCHA, a person is asked only on an origin
 * the task grant names an identity for (any other granted page could pose
 * as a bank's sign-in). On such an origin the person signs in in a fresh,
 * empty browser context of its own, bound to that origin, as `cdpgate
 * login` does (session.c, the login handoff: the human's context, no
 * network rule, its requests theirs): the agent's current tab there, where
 * the live view shows it. Nothing of the agent's untrusted context (the
 * open web's, whose cookies any page can set or replace: a planted cookie,
 * a login CSRF into an attacker's account) reaches that context. A tab
 * already authenticated for the origin (a one-time code asked on a restored
 * session) is answered in place.
 *
 * The hand-back (snap_human_handback): whether the agent's current tab is
 * logged in, by the gate's own rule (snap_tab_auth: auth=yes). After a
 * sign-in: only when a person held control, the sign-in's tab is on its
 * origin and off the login wall (no visible password field, not a login
 * path), only that context's cookies of the service and the origin's
 * localStorage are sealed into the vault under the grant's identity (the
 * login handoff's own code and rules: never replacing a named identity's
 * session by "default", never a form value), the session is moved into a
 * privileged context with the grant's network rule, the sign-in's context
 * is closed with its tabs, and the agent goes on at the service's root in
 * the new context (never the page the person ended on: its address may be
 * a one-time link, R5-4). Otherwise the sign-in's context is closed and
 * the agent is back on its own tab. A tab already authenticated has its
 * session saved again from its own context, off the login wall. A
 * takeover in the agent's untrusted context (browser_takeover: a CAPTCHA
 * on the current page) saves nothing, ever.
 *
 * Values are read as secrets and wiped; what is returned and audited names
 * counts, names and the identity only.
 */
#include "snapshot/session_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "gate/gate.h"
#include "url/url.h"
#include "vault/vault.h"

/* Seal the session of tab tab_id's context ci into the vault under ident
 * (an authenticated tab saved again). 0 with the counts in h, else a
 * snap_fail code with r saying why. */
static int hb_seal(snap_agent *a, size_t ci, int tab_id, const char *ident, snap_handback *h,
                   snap_result *r)
{
    int64_t expiry = 0;
    cdp_err e = {0};
    char *state = NULL;
    if (snap_session_capture(a, &a->ctxs[ci], tab_id, &state, &h->ncookies, &h->nls, &expiry,
                             &e))
        return snap_fail(r, SNAP_EBROWSER, "its session could not be read (%s), so nothing "
                         "was saved", e.msg);
    int rc = 0;
    char verr[400] = "";
    if (!h->ncookies && !h->nls)
        rc = snap_fail(r, SNAP_ELOGIN, "the browser holds no cookie or localStorage item "
                       "of %s, so there is no session to save", h->origin);
    else if ((rc = snap_session_keeps_named(a, h->origin, "saved", r)) == 0 &&
             vault_put(a->o.vault, h->origin, ident, (const uint8_t *)state, strlen(state),
                       expiry, verr, sizeof verr))
        rc = snap_fail(r, SNAP_EBROWSER, "the session could not be saved in the vault: %s",
                       verr);
    base_memzero(state, strlen(state));
    free(state);
    if (!rc)
        h->saved = true;
    return rc;
}

/* The audit line of a saved session: counts, origin and identity only. */
static void hb_audit_saved(snap_agent *a, const snap_handback *h)
{
    char line[300];
    snprintf(line, sizeof line, "hand-back: the session of %.120s (%zu cookies, %zu "
             "localStorage items) saved in the vault under identity %.60s", h->origin,
             h->ncookies, h->nls, h->identity);
    gate_audit_live(a->gate, true, line);
}

/* ---- the person's sign-in ---- */

/* Where the sign-in starts: the stop page's path when it is a login
 * path with nothing redacted in it, else the origin's root; never its
 * query or fragment, and never a path that may be a one-time link (R5-4). */
static void hs_start_url(const char *page, const char *origin, char *out, size_t cap)
{
    char path[1024] = "/";
    if (!page || url_path(page, path, sizeof path) != 0 || strstr(page, "[redacted]") ||
        !snap_session_login_path(path))
        snprintf(path, sizeof path, "/");
    snprintf(out, cap, "%s%s", origin, path);
}

static int hs_run(snap_agent *a, bool *fresh, snap_result *r)
{
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    if (!t || t->closed || !t->nframes || !*t->frames[0].origin)
        return snap_fail(r, SNAP_ENOTAB, "no page of a web origin is open");
    char origin[256], url[1400];
    snprintf(origin, sizeof origin, "%s", t->frames[0].origin);
    const char *ident = gate_identity_for(a->gate, origin);
    if (!ident)
        return snap_fail(r, SNAP_EDENIED, "No person was asked: the task grant names no "
                         "identity for %s, so cdpgate does not ask a person to enter a "
                         "password, one-time code or CAPTCHA answer there (a page of any "
                         "granted origin can pose as another site's sign-in). A sign-in is "
                         "only for an origin the grant names an identity for (\"identities\").",
                         origin);
    if (t->ctx != 0 && snap_tab_auth(a, t))
        return 0;       /* answered in the authenticated tab itself */
    if (!a->o.vault)
        return snap_fail(r, SNAP_EINVAL, "No person was asked: no session vault is open, so "
                         "a sign-in at %s could not be kept", origin);
    int from = t->id;
    hs_start_url(t->frames[0].url, origin, url, sizeof url);
    int rc = snap_session_login_start(a, url, r);
    if (rc)
        return rc;
    snap_result_free(r);
    a->login.takeover = true;
    a->login.from_tab = from;
    *fresh = true;
    char line[400];
    snprintf(line, sizeof line, "sign-in: the person signs in to %.200s (identity %.60s) in a "
             "fresh browser context of its own (tab t%d)", origin, ident, a->login.tab);
    gate_audit_live(a->gate, true, line);
    return 0;
}

int snap_human_signin(snap_agent *a, bool *fresh, snap_result *r)
{
    memset(r, 0, sizeof *r);
    *fresh = false;
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "login", saved);
    int rc = hs_run(a, fresh, r);
    snap_permit_begin(a, saved);
    return rc;
}

/* ---- the hand-back ---- */

/* Why the sign-in's tab t gives no session to save (NULL: it may). */
static const char *hb_signin_refusal(snap_agent *a, bool person, const char *ident,
                                     const snap_tab *t, const char *origin)
{
    if (!person)
        return "nobody took control, so nothing was saved";
    if (!ident || !a->o.vault)
        return "the task grant names no identity for it, so nothing was saved";
    if (!t || t->closed)
        return "the sign-in's tab was closed, so nothing was saved";
    if (!t->nframes || strcmp(t->frames[0].origin, origin) != 0)
        return "the sign-in's tab is on another origin, so nothing was saved (a session is "
               "only taken from the origin the sign-in was for)";
    if (snap_session_login_wall(a, t->id) != 0)
        return "the page still shows a login (a password field or a login path), so nothing "
               "was saved";
    return NULL;
}

/* The sign-in ended without a session: its context closed with its tabs,
 * the agent back on the tab it was on. */
static void hb_signin_drop(snap_agent *a, size_t ci, int from)
{
    char why[300] = "";
    snap_session_login_close(a, ci, why, sizeof why);
    snap_sync(a);
    snap_tab *f = snap_tab_by_id(a, from);
    if (f && !f->closed)
        a->cur = from;
}

static void hb_signin(snap_agent *a, bool person, snap_handback *h, snap_result *r)
{
    size_t ci = a->login.ctx;
    int from = a->login.from_tab;
    snprintf(h->origin, sizeof h->origin, "%s", a->ctxs[ci].origin);
    const char *ident = gate_identity_for(a->gate, h->origin);
    const char *why = hb_signin_refusal(a, person, ident,
                                        snap_tab_by_id(a, a->login.tab), h->origin);
    if (why) {
        snprintf(h->note, sizeof h->note, "%s", why);
        hb_signin_drop(a, ci, from);
        return;
    }
    snprintf(h->identity, sizeof h->identity, "%s", ident);
    /* the login handoff's own capture, seal, move and close */
    int rc = snap_login_poll(a, true, r);
    /* Saved is what the vault holds: a move or close that failed after the
     * save ("is saved in the vault, but ...") still saved the session. */
    h->saved = snap_login_saved(a);
    if (h->saved) {
        h->ncookies = a->login.ncookies;
        h->nls = a->login.nls;
        hb_audit_saved(a, h);
    }
    if (rc != 0) {
        snprintf(h->note, sizeof h->note, "%s", r->text ? r->text : "nothing was saved");
        hb_signin_drop(a, ci, from);
        return;
    }
    snprintf(h->obs, sizeof h->obs, "%s", r->obs);
}

/* An authenticated tab t: its session saved again, off the login wall
 * only (a person who signed out never replaces the stored session with
 * what is left). */
static void hb_authenticated(snap_agent *a, snap_tab *t, snap_handback *h, snap_result *r)
{
    const char *ident = gate_identity_for(a->gate, h->origin);
    if (!ident || !a->o.vault)
        return;
    if (snap_session_login_wall(a, t->id) != 0) {
        snprintf(h->note, sizeof h->note, "the page shows a login, so the stored session "
                 "was not replaced");
        return;
    }
    snprintf(h->identity, sizeof h->identity, "%s", ident);
    if (hb_seal(a, t->ctx, t->id, ident, h, r))
        snprintf(h->note, sizeof h->note, "%s", r->text ? r->text : "");
    else
        hb_audit_saved(a, h);
}

/* A person held control in the agent's untrusted context (no sign-in
 * context of its own): a sign-in there stays live in it, so from now on its
 * tabs count as holding a session (snap_tab_auth, the sink's
 * holds_session): state changes confirmed, consequential acts stopped
 * unless bound, the courier rule (red team s18, R8-6; fail closed). */
static void hb_mark(snap_agent *a, bool person, const snap_tab *t)
{
    if (person && !(a->login.active && a->login.takeover) && (!t || t->ctx == 0) &&
        a->nctxs)
        a->ctxs[0].person = true;
}

static void hb_run(snap_agent *a, bool person, snap_handback *h)
{
    snap_result r;
    memset(&r, 0, sizeof r);
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    hb_mark(a, person, t);
    if (a->login.active && a->login.takeover) {
        hb_signin(a, person, h, &r);
    } else if (!t || t->closed || !t->nframes || !*t->frames[0].origin) {
        snprintf(h->note, sizeof h->note, "no page of a web origin is open");
    } else if (!person) {
        /* nobody held control: nothing of theirs to save */
        snprintf(h->origin, sizeof h->origin, "%s", t->frames[0].origin);
        snprintf(h->note, sizeof h->note, "nobody took control, so nothing was saved");
    } else if (t->ctx != 0 && snap_tab_auth(a, t)) {
        snprintf(h->origin, sizeof h->origin, "%s", t->frames[0].origin);
        hb_authenticated(a, t, h, &r);
    } else {
        /* The open web's context: any page can set the service's cookies
         * there (R5-1), so nothing of it is ever sealed. A sign-in the
         * person made there is live all the same: from now on each page of
         * that context counts as signed in (red team s18, R8-6: hb_mark). */
        snprintf(h->origin, sizeof h->origin, "%s", t->frames[0].origin);
        snprintf(h->note, sizeof h->note, "the takeover ran in the agent's own browser "
                 "context, where any page can set a site's cookies, so nothing was saved (a "
                 "session is saved only from a sign-in in a context of its own). A sign-in "
                 "in the agent's context is not kept, and its pages are now treated as "
                 "signed in (state changes confirmed, consequential acts stopped); use "
                 "browser_login to keep one");
    }
    snap_result_free(&r);
    t = snap_tab_current(a);
    h->logged_in = t && t->ctx != 0 && snap_tab_auth(a, t);
    if (!*h->obs)
        snap_obs_issue(a, t, h->obs);
    /* the origin as results show a page's (the page may have chosen its
     * host: red team s17, R7-4's check of the account) */
    char *sh = *h->origin ? snap_origin_shown_strict(a, h->origin) : NULL;
    snprintf(h->shown, sizeof h->shown, "%s", sh ? sh : "");
    free(sh);
}

void snap_human_handback(snap_agent *a, bool person, snap_handback *h)
{
    memset(h, 0, sizeof *h);
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "login", saved);
    hb_run(a, person, h);
    snap_permit_begin(a, saved);
}
