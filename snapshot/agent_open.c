/*
 * agent_open.c — snap_open: opening a URL in a tab (the scheme check, the
 * context a URL belongs to, the navigation, its settle and its result,
 * and a URL answered as a download).
 *
 * Part of snapshot/ (see agent_int.h for what the agent* files share).
 */
#include "snapshot/agent_int.h"

/* The scheme as a browser reads it: leading C0/space skipped, tab and
 * newlines inside ignored, lower-cased; "" when there is none. */
static void url_scheme(const char *url, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)url;
    size_t k = 0;
    while (*p && *p <= 0x20)
        p++;
    for (; *p && *p != ':' && k + 1 < cap; p++) {
        if (*p == '\t' || *p == '\n' || *p == '\r')
            continue;
        out[k++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    }
    out[*p == ':' ? k : 0] = 0;
}

bool snap_is_load(void *ud, const json_val *p)
{
    snap_load_match *m = ud;
    const char *name = json_get_str(p, "name");
    const char *frame = json_get_str(p, "frameId");
    return name && frame && strcmp(name, "load") == 0 && strcmp(frame, m->frame) == 0;
}

/* The way on after a navigation error (net::ERR_...), "" if none; never
 * a way around a safeguard (ERR_CERT_: not http; issue 13 review F4). */
const char *snap_agent_nav_hint(const char *etext)
{
    static const struct { const char *err, *hint; } H[] = {
        {"ERR_NAME_NOT_RESOLVED", "; the host name does not resolve: check its spelling"},
        {"ERR_CONNECTION_REFUSED", "; nothing listens at that address: is the server running, "
                                   "on that port?"},
        {"ERR_CONNECTION_TIMED_OUT", "; the server did not answer: try again later"},
        {"ERR_CERT_", "; the certificate is not trusted (maybe intercepted); cdpgate will not "
                      "bypass it: do not retry over http or another host, tell the user"},
        {"ERR_BLOCKED_BY_CLIENT", "; the task's grant does not allow that request (the "
                                  "grant names the origins open may visit)"},
        {"ERR_INVALID_URL", "; write a whole URL such as https://example.org/"},
        {"ERR_TOO_MANY_REDIRECTS", "; the site redirects in a loop"},
        {"ERR_INTERNET_DISCONNECTED", "; the machine has no network"},
    };
    for (size_t i = 0; i < sizeof H / sizeof H[0]; i++)
        if (strstr(etext, H[i].err))
            return H[i].hint;
    return "";
}

/* Refuse what open never navigates to. 0, or SNAP_EINVAL with r filled. */
static int check_scheme(snap_agent *a, const char *url, snap_result *r)
{
    if (!url || !*url)
        return snap_fail(r, SNAP_EINVAL, "open needs a URL (an http or https one)");
    char scheme[24];
    url_scheme(url, scheme, sizeof scheme);
    int rc = 0;
    if (strcmp(scheme, "javascript") == 0)
        rc = snap_fail(r, SNAP_EINVAL, "javascript: URLs are not opened: they would run "
                       "code in the current page; open an http(s) URL");
    else if (!a->o.allow_local && strcmp(scheme, "file") == 0)
        rc = snap_fail(r, SNAP_EINVAL, "cdpgate mcp never opens file: URLs (a file: page can "
                       "read other local files); if the user wants that page opened, ask them to "
                       "serve only its folder, on loopback only (e.g. python3 -m http.server 8000 "
                       "--bind 127.0.0.1 --directory FOLDER) and open "
                       "http://127.0.0.1:8000/ and the file's name (under a task grant, the "
                       "grant must name that origin)");
    else if (!a->o.allow_local && strcmp(scheme, "view-source") == 0)
        rc = snap_fail(r, SNAP_EINVAL, "view-source: URLs are never opened here; open the "
                       "page's own http(s) URL and read it with a snapshot (text mode shows "
                       "its text)");
    else if (!a->o.allow_local && (strcmp(scheme, "chrome") == 0 ||
                                   strcmp(scheme, "devtools") == 0 ||
                                   strcmp(scheme, "chrome-extension") == 0))
        rc = snap_fail(r, SNAP_EINVAL, "%s: URLs are never opened here: the browser's own "
                       "pages and settings are off for an agent; ask the user to do it in "
                       "their own browser", scheme);
    if (rc && a->gate) {
        /* Refused before the gate's own decision: audited all the same,
         * the URL redacted (a javascript: URL is only named by its scheme:
         * it is the model's code). */
        char *red = strcmp(scheme, "javascript") == 0 ? NULL
                  : snap_url_redact(url, true, NULL);
        char *shown = red ? snap_scrub_url(a, red) : NULL;
        free(red);
        char what[40];
        snprintf(what, sizeof what, "%s:", scheme);
        gate_note_refusal(a->gate, "open", shown ? shown : what, r->text ? r->text : "");
        free(shown);
    }
    return rc;
}

/* The text told before an open's snapshot: note, then (when the settle
 * after the load ended with requests out: a polling page, a long poll) a
 * line naming what is still pending. 0 or SNAP_ENOMEM. */
static int open_pending(snap_agent *a, snap_tab *t, const snap_settled *st, const char *note,
                        snap_result *r)
{
    base_buf b = {0};
    base_buf_puts(&b, note);
    if (st->npending || st->capped) {
        if (b.len && b.s[b.len - 1] != '\n')
            base_buf_putc(&b, '\n');
        size_t at = b.len;
        snap_settled_pending(a, t, st, &b);
        /* "; still pending: ..." begins a line of its own here. */
        if (b.len >= at + 2 && !b.oom) {
            memmove(b.s + at, b.s + at + 2, b.len - at - 2 + 1);
            b.len -= 2;
        }
    }
    if (b.oom) {
        base_buf_free(&b);
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    }
    free(r->text);
    r->text = b.len ? b.s : NULL;
    if (!b.len)
        base_buf_free(&b);
    return 0;
}

/* Add the pending requests to an open's structured result (a snapshot's
 * JSON object, rewritten with them at its end). 0 or SNAP_ENOMEM. */
static int open_pending_json(snap_agent *a, snap_tab *t, const snap_settled *st,
                             snap_result *r)
{
    if ((!st->npending && !st->capped) || !r->structured)
        return 0;
    json_doc *d = json_parse(r->structured, strlen(r->structured), NULL, NULL);
    if (!d)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_members(&w, json_doc_root(d));
    json_doc_free(d);
    snap_settled_json(a, t, st, &w);
    json_w_obj_end(&w);
    char *js = json_w_take(&w, NULL);
    if (!js)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    free(r->structured);
    r->structured = js;
    return 0;
}

/* The result of an open that left a dialog open on tab t: what is open
 * and what it says (st->dialog set), as SNAP_EDIALOG. */
static int open_dialog(snap_agent *a, snap_tab *t, snap_settled *st, const char *url,
                       snap_result *r)
{
    base_buf msg = {0};
    /* It may have opened after the settle ended (while a redirect was
     * looked for, or while the page was read): the text says what is open
     * and what it says. */
    st->dialog = true;
    snap_settled_describe(a, t, st, &msg);
    snap_obs_issue(a, t, r->obs);
    int rc = msg.oom ? snap_fail(r, SNAP_ENOMEM, "out of memory")
                     : snap_fail(r, SNAP_EDIALOG, "opened %s: %s", url, msg.s ? msg.s : "");
    base_buf_free(&msg);
    return rc;
}

/* Navigate in the current tab when it is in context ctx (and !new_tab),
 * else in a new tab there; restore pending localStorage first; after the
 * load, the login-wall check of a restored session. note (may be "") is
 * told before the snapshot; a note_code (SNAP_ELOGIN) becomes the result's
 * code, with the snapshot still in the text. */
static int open_nav_in(snap_agent *a, const char *url, size_t ctx, bool new_tab, char *note,
                       size_t note_cap, int note_code, bool *navigated, snap_result *r)
{
    if (snap_sync(a))
        return snap_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    int64_t deadline = base_now_ms() + a->o.timeout_ms;
    snap_tab *t = new_tab ? NULL : snap_tab_current(a);
    if (t && t->ctx != ctx)
        t = NULL;
    int rc;
    if (!t && (rc = snap_tab_open(a, ctx, &t, r)))
        return rc;
    a->cur = t->id;
    if (t->dialog_open)
        return snap_fail(r, SNAP_EDIALOG, "tab t%d has a %s dialog open; answer it first",
                         t->id, t->dialog_type);
    int tab_id = t->id;
    bool primed = a->ctxs[t->ctx].pending_ls != NULL;
    if ((rc = snap_ctx_prime(a, tab_id, r)))
        return rc;
    t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed)
        return snap_fail(r, SNAP_ENOTAB, "the tab closed while restoring its session");
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "url");
    json_w_str(&w, url);
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    if (!params)
        return snap_fail(r, SNAP_EINVAL, "the URL is not valid UTF-8");
    uint64_t since = cdp_event_seq(a->c);
    uint64_t nav0 = t->nav;
    size_t tabs0 = a->ntabs;
    snap_dl_act(a, tab_id);     /* a download the URL answers with is the open's own */
    snap_dl_want(a, url, false);
    cdp_reply rep;
    cdp_err e = {0};
    rc = snap_cdp_call(a, t->session, "Page.navigate", params, a->o.timeout_ms, &rep, &e);
    free(params);
    if (rc)
        return snap_fail(r, SNAP_EBROWSER, "navigate: %s", e.msg);
    if (json_bool(json_get(rep.result, "isDownload")))   /* no page: download.c reports */
        return snap_dl_open(a, tab_id, deadline - a->o.timeout_ms, deadline, url, &rep, r);
    snap_dl_act_end(a);         /* a page: its scripts' downloads are not the open's */
    const char *etext = json_get_str(rep.result, "errorText");
    if (etext && *etext) {
        snap_fail(r, SNAP_ENAVIGATE, "navigation to %s failed: %s%s", url, etext,
                  snap_agent_nav_hint(etext));
        cdp_reply_free(&rep);
        return SNAP_ENAVIGATE;
    }
    *navigated = true;
    const char *loader = json_get_str(rep.result, "loaderId");
    bool cross_doc = loader && *loader;
    cdp_reply_free(&rep);
    t = snap_tab_by_id(a, tab_id);
    if (cross_doc && t && t->nframes) {
        char fid[SNAP_ID_MAX];
        snap_agent_copyid(fid, t->frames[0].id);   /* t->frames may grow while we wait */
        snap_load_match m = {fid};
        cdp_reply ev;
        /* A page whose load waits on one of its requests that waits for
         * the human (a synchronous XHR POST of an authenticated page): the
         * human is asked meanwhile, and the time they take is not the
         * load's. */
        for (;;) {
            int64_t left = deadline - base_now_ms();
            rc = cdp_wait_event(a->c, since, t->session, "Page.lifecycleEvent", snap_is_load, &m,
                                left > 200 ? 200 : left > 0 ? (int)left : 1, &ev, NULL, &e);
            if (rc != CDP_ETIMEOUT || left <= 200)
                break;
            int64_t asked0 = a->asked_ms;
            snap_sink_asks(a);
            deadline += a->asked_ms - asked0;
        }
        cdp_reply_free(&ev);
        if (rc == CDP_ETIMEOUT)
            return snap_fail(r, SNAP_ETIMEOUT, "%s did not finish loading within %d ms; "
                             "what did load stays open in tab t%d: a snapshot shows it",
                             url, a->o.timeout_ms, tab_id);
        if (rc)
            return snap_fail(r, SNAP_EBROWSER, "navigate: %s", e.msg);
    }
    t = snap_tab_by_id(a, tab_id);
    if (t)
        t->loading = false;     /* the load we waited for; redirects set it again */
    snap_settled st;
    if (t && (rc = snap_settle(a, t, nav0, tabs0, deadline, &st)))
        return snap_fail(r, rc, "the browser is gone: %s", cdp_conn_error(a->c));
    t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed)
        return snap_fail(r, SNAP_ENOTAB, "the tab closed while loading %s", url);
    if (primed)     /* the blank page that carried localStorage leaves no history */
        snap_cdp_call(a, t->session, "Page.resetNavigationHistory", NULL, a->o.timeout_ms,
                 NULL, NULL);
    if (t->dialog_open)
        return open_dialog(a, t, &st, url, r);
    size_t used = strlen(note);
    snap_ctx_check(a, tab_id, url, note + used, note_cap - used);
    snap_signin_sync(a);        /* a sign-in the open made (R8-6 b) is told here */
    snap_signin_note(a, note, note_cap);
    t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed)
        return snap_fail(r, SNAP_ENOTAB, "the tab closed while loading %s", url);
    if ((rc = open_pending(a, t, &st, note, r)))
        return rc;
    snap_query q = {0};
    rc = snap_build(a, t, &q, r);
    /* A dialog that opened while the page was read (a timer's alert just
     * after the load): the reads it stopped failed at once (the agent's
     * hold): the result is the dialog, as above. */
    t = snap_tab_by_id(a, tab_id);
    if (rc && t && !t->closed && t->dialog_open)
        return open_dialog(a, t, &st, url, r);
    if (rc == 0)
        rc = open_pending_json(a, t, &st, r);
    if (rc || !note_code)
        return rc;
    /* The page is open, but the session could not be used: say so as the
     * result's error, keeping the snapshot in the text. */
    snap_result_begin(&w, note_code);
    json_w_key(&w, "message");
    snap_json_page(&w, note);
    json_w_key(&w, "obs");
    json_w_str(&w, r->obs);
    json_w_obj_end(&w);
    free(r->structured);
    r->structured = json_w_take(&w, NULL);
    r->code = note_code;
    return note_code;
}

/* open_nav_in; when it fails before the page navigated, in a tab it made
 * (a name that does not resolve, a refused connection), that empty tab is
 * closed and the tab that was current before is current again: a failed
 * open leaves the tabs as they were (issue 13, point 6e). A page that
 * navigated but did not finish loading stays: it has what did load. */
static int open_nav(snap_agent *a, const char *url, size_t ctx, bool new_tab, char *note,
                    size_t note_cap, int note_code, snap_result *r)
{
    int cur0 = a->cur;
    size_t ntabs0 = a->ntabs;
    bool navigated = false;
    int rc = open_nav_in(a, url, ctx, new_tab, note, note_cap, note_code, &navigated, r);
    if (!rc || navigated || a->cur == cur0)
        return rc;
    snap_tab *t = snap_tab_by_id(a, a->cur);
    if (!t || (size_t)(t - a->tabs) < ntabs0 || !t->created)
        return rc;
    if (!t->closed && !cdp_conn_dead(a->c)) {
        char saved[SNAP_PERMIT_MAX];
        snap_permit_push(a, "teardown", saved);
        snap_tab_close_target(a, t);
        snap_permit_begin(a, saved);
    }
    t = snap_tab_by_id(a, a->cur);
    if (t) {
        t->closed = true;
        t->discarded = true;
    }
    snap_tab *prev = cur0 ? snap_tab_by_id(a, cur0) : NULL;
    a->cur = prev && !prev->closed ? cur0 : 0;
    return rc;
}

int snap_open_in(snap_agent *a, const char *url, size_t ctx, bool new_tab, snap_result *r)
{
    memset(r, 0, sizeof *r);
    int rc = check_scheme(a, url, r);
    if (rc)
        return rc;
    char note[1] = "";
    return open_nav(a, url, ctx, new_tab, note, sizeof note, 0, r);
}

static int open_run(snap_agent *a, const char *url, bool new_tab, snap_result *r);

int snap_open(snap_agent *a, const char *url, bool new_tab, snap_result *r)
{
    memset(r, 0, sizeof *r);
    int rc = check_scheme(a, url, r);
    if (rc)
        return rc;
    if (a->login.active)
        return snap_fail(r, SNAP_EBLOCKED, "waiting for the human to finish logging in at %s",
                         snap_login_origin(a));
    if (snap_sync(a))
        return snap_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    snap_gated gg;
    /* It lands in the untrusted context unless a service's own: a sign-in a
     * person made there may be live (R8-6), or one made for url's site
     * there (R8-6 b). */
    snap_gate_in gi = {.tool = "open", .open_url = url,
                       .authenticated = snap_open_person(a) || snap_signin_site(a, url)};
    if ((rc = snap_gate_ask(a, &gi, &gg, r)))
        return rc;
    rc = open_run(a, url, new_tab, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

static int open_run(snap_agent *a, const char *url, bool new_tab, snap_result *r)
{
    int rc;
    size_t ctx;
    char note[2400];
    int note_code;
    if ((rc = snap_ctx_pick(a, url, &ctx, note, sizeof note, &note_code, r)))
        return rc;
    size_t used = strlen(note);
    if (a->ctx_shared && !a->ctx_shared_told) {
        a->ctx_shared_told = true;
        snprintf(note + used, sizeof note - used, "%sNote: this browser refused a separate "
                 "browser context, so pages share its default context (and its cookies, "
                 "the user's own sign-ins among them); stored sessions are not restored "
                 "here, and every page counts as signed in: state changes are confirmed "
                 "and consequential acts stopped unless the grant binds them.\n", used ? "\n" : "");
        used = strlen(note);
    } else if (used) {
        snprintf(note + used, sizeof note - used, "\n");
        used++;
    }
    snap_tab *cur = snap_tab_current(a);
    if (!new_tab && cur && cur->ctx != ctx) {
        new_tab = true;
        snprintf(note + used, sizeof note - used, "Opened in a new tab: tab t%d stays in %s "
                 "browser context (a tab never changes context).\n", cur->id,
                 cur->ctx ? "its service's" : "the untrusted");
        used = strlen(note);
    }
    if (ctx && a->ctxs[ctx].check && used + 1 < sizeof note)
        snprintf(note + used, sizeof note - used, "Session for %s restored from the vault "
                 "into its own browser context.\n", a->ctxs[ctx].origin);
    return open_nav(a, url, ctx, new_tab, note, sizeof note, note_code, r);
}
