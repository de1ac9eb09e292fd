/*
 * act_result.c — what every action shares: the prologue (sync, dialog, observation
 * id, ref, gate) and the result, the re-check after a confirmation, and
 * "what changed" near the element.
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#define _XOPEN_SOURCE 700     /* realpath (POSIX.1-2008 XSI) */
#include "snapshot/act_int.h"
#include "snapshot/page_js.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- prologue and results ---- */

/* Refuse an action while tab t has a JS dialog open. */
/* The dialog's message between the content markers, escaped and cut. */
static void sb_dialog_message(snap_agent *a, base_buf *b, const snap_tab *t)
{
    base_buf_printf(b, "<<<page-content nonce=%s>>>", a->nonce);
    snap_act_sb_page(b, t->dialog_message ? t->dialog_message : "", 300, PAGE_KEEP_NL);
    base_buf_printf(b, "<<<end page-content nonce=%s>>>", a->nonce);
}

int snap_act_refuse_dialog(snap_agent *a, snap_tab *t, snap_result *r)
{
    base_buf b = {0};
    sb_dialog_message(a, &b, t);
    int rc = snap_act_fail(r, SNAP_EDIALOG, "tab t%d has a %s dialog open saying %s; answer it "
                           "first with dialog accept or dismiss", t->id, t->dialog_type,
                           b.s ? b.s : "");
    free(b.s);
    return rc;
}

/* Common start of every action but dialog: clear r, process what arrived,
 * find the current tab, refuse while it has a dialog, check obs. */
int snap_act_begin(snap_agent *a, const char *obs, snap_tab **out, snap_result *r)
{
    memset(r, 0, sizeof *r);
    *out = NULL;
    if (snap_sync(a))
        return snap_act_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return snap_act_fail(r, SNAP_ENOTAB, "no open tab: open a page first");
    if (t->dialog_open)
        return snap_act_refuse_dialog(a, t, r);
    int rc = snap_obs_check(a, obs, r);
    if (rc)
        return rc;
    snap_nav_note(a, snap_tab_current(a), a->nav_note, sizeof a->nav_note);
    for (size_t i = 0; i < a->ntabs; i++)      /* moves within a page from here on */
        a->tabs[i].inpage_mark = a->tabs[i].inpage;
    a->nact_secret = 0;                 /* the last action's form is done with */
    *out = snap_tab_current(a);         /* the check synced: tabs may have moved */
    return *out ? 0 : snap_act_fail(r, SNAP_ENOTAB, "the tab closed; open a page first");
}

void snap_act_release_object(snap_agent *a, const char *session, char oid[SNAP_ID_MAX])
{
    if (!oid[0])
        return;
    snap_act_send_forget(a, session, "Runtime.releaseObject",
                         snap_act_params("s", "objectId", oid));
    oid[0] = 0;
}

/* "e5 (button "Save")": role and name escaped as page text. */
static void describe_ref(uint32_t n, const char *role, const char *name, char *out,
                         size_t cap)
{
    base_buf b = {0};
    base_buf_printf(&b, "e%u (", n);
    snap_act_sb_page(&b, role && *role ? role : "element", 32, 0);
    if (name && *name) {
        base_buf_put(&b, " ", 1);
        snap_act_sb_quoted(&b, name, 60);
    }
    base_buf_put(&b, ")", 1);
    snprintf(out, cap, "%s", b.s && !b.oom ? b.s : "");
    snap_act_utf8_repair(out);
    free(b.s);
}

/* Resolve a ref for acting (snap_ref_resolve: fails closed with what
 * changed). The ref's tab becomes the current tab (acting on it is the
 * agent's choice) and must not have a dialog open. */
int snap_act_resolve(snap_agent *a, const char *ref, target *tg, snap_result *r)
{
    int rc = snap_act_resolve_start(a, ref, tg, r);
    return rc ? rc : snap_act_resolve_check(a, tg, r);
}

int snap_act_resolve_check(snap_agent *a, target *tg, snap_result *r)
{
    snap_resolved res = {0};
    res.n = tg->n;
    res.tab_id = tg->tab;
    res.conn_id = tg->conn_id;
    snprintf(res.session, sizeof res.session, "%s", tg->session);
    snprintf(res.object_id, sizeof res.object_id, "%s", tg->oid);
    res.ax_pending = tg->ax_pending;
    res.ax_ids[0] = tg->ax_ids[0];
    res.ax_ids[1] = tg->ax_ids[1];
    res.kind = tg->kind;
    res.world = tg->world;
    res.backend = tg->backend;
    tg->conn_id = 0;
    tg->ax_pending = false;
    tg->ax_ids[0] = tg->ax_ids[1] = 0;
    int rc = snap_ref_resolve_check(a, &res, r);
    if (rc) {
        tg->oid[0] = 0;         /* released */
    } else {
        a->cur = tg->tab;
        tg->backend = res.backend;  /* a walker ref's: read by the check */
    }
    return rc;
}

int snap_act_resolve_start(snap_agent *a, const char *ref, target *tg, snap_result *r)
{
    memset(tg, 0, sizeof *tg);
    snap_resolved res;
    /* "text:Buy milk": the element of the current tab's observation with
     * that text, given a ref first (observe_find.c). */
    char tref[16];
    if (ref && strncmp(ref, "text:", 5) == 0) {
        snap_sync(a);
        snap_tab *ct = snap_tab_current(a);
        int trc = ct ? snap_text_target(a, ct->id, ref + 5, tref, r)
                     : snap_fail(r, SNAP_ENOTAB, "no open tab; open a URL first");
        if (trc)
            return trc;
        ref = tref;
    }
    int rc = snap_ref_resolve_start(a, ref, &res, r);
    if (rc)
        return rc;
    tg->conn_id = res.conn_id;
    tg->ax_pending = res.ax_pending;
    tg->ax_ids[0] = res.ax_ids[0];
    tg->ax_ids[1] = res.ax_ids[1];
    tg->kind = res.kind;
    tg->world = res.world;
    const snap_ref *rf = &a->refs[res.n - 1];
    tg->n = rf->n;
    tg->tab = snap_ref_tab(a, rf);
    tg->backend = res.backend;
    snprintf(tg->frame, sizeof tg->frame, "%s", snap_ref_frame(a, rf));
    snprintf(tg->oid, sizeof tg->oid, "%s", res.object_id);
    snprintf(tg->ref, sizeof tg->ref, "e%u", rf->n);
    describe_ref(rf->n, snap_ref_role(a, rf), rf->name, tg->what, sizeof tg->what);
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    snap_frame *f = t ? snap_frame_find(t, tg->frame) : NULL;
    if (!f || t->dialog_open) {
        /* The check is not read: its reply is dropped whenever it comes. */
        if (tg->conn_id)
            cdp_forget(a->c, tg->conn_id);
        for (int i = 0; i < 2; i++)
            if (tg->ax_ids[i])
                cdp_forget(a->c, tg->ax_ids[i]);
        tg->conn_id = tg->ax_ids[0] = tg->ax_ids[1] = 0;
        tg->ax_pending = false;
    }
    if (!f)
        return snap_act_fail(r, SNAP_ESTALE, "%s: its frame is gone; take a new snapshot",
                             tg->what);
    snprintf(tg->session, sizeof tg->session, "%s", f->session);
    if (t->dialog_open) {
        tg->oid[0] = 0;         /* the renderer would not answer a release now */
        return snap_act_refuse_dialog(a, t, r);
    }
    return 0;
}

/* Note the "sf" member of a page check's answer. */
void snap_act_secret_form_note(secret_form *sf, const json_val *v)
{
    const json_val *a = json_get(v, "sf");
    if (!json_is(a, JSON_ARRAY))
        return;
    sf->on = true;
    for (const json_val *n = json_first(a); n && sf->n < 8; n = json_next(n)) {
        const char *s = json_str(n, NULL);
        if (s && *s && strlen(s) < sizeof sf->names[0])
            snprintf(sf->names[sf->n++], sizeof sf->names[0], "%s", s);
    }
}

#define SF_KNOWN_MAX 32         /* remembered secrets looked at per action */

/* Add those fields (snap_js_sf_known_fn) to sf; nothing to do (no round trip) when
 * none was ever noted in the document. The names are for hiding values in
 * URLs, not for deciding; when the fields cannot be read (no cdpgate world,
 * no answer) sf gets the name "*": every query and fragment value of the
 * URLs the action leads to is hidden (fail closed). */
static void secret_form_all(secret_form *sf)
{
    sf->on = true;
    if (sf->n < 8)
        snprintf(sf->names[sf->n++], sizeof sf->names[0], "*");
    else
        snprintf(sf->names[7], sizeof sf->names[0], "*");
}

void snap_act_secret_form_known(snap_agent *a, int tab_id, const char *frame_id,
                                const char *session, const char *oid, secret_form *sf)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    snap_frame *f = t ? (frame_id && *frame_id ? snap_frame_find(t, frame_id)
                                               : t->nframes ? &t->frames[0] : NULL) : NULL;
    int be[SF_KNOWN_MAX];
    size_t n = f ? snap_secret_list(a, tab_id, f->id, f->loader, be, SF_KNOWN_MAX) : 0;
    if (!n || !oid || !*oid)
        return;
    /* Resolved into oid's world (cdpgate's isolated world of the frame):
     * a function takes only arguments of its own world. */
    int64_t world = snap_frame_world(a, tab_id, f->id);
    if (world <= 0) {
        secret_form_all(sf);
        return;
    }
    pcall rs[SF_KNOWN_MAX];
    for (size_t i = 0; i < n; i++) {
        snap_act_psend_p(a, session, "DOM.resolveNode",
                         snap_act_params("isi", "backendNodeId", be[i], "objectGroup", ACT_GROUP,
                                         "executionContextId", (int)world),
                         &rs[i]);
    }
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    snap_act_args_resolved(a, rs, n, &w);
    json_w_arr_end(&w);
    char *args = json_w_take(&w, NULL);
    pcall pc;
    if (args &&
        snap_act_call(a, session, "Runtime.callFunctionOn",
                      snap_act_fn_params(oid, snap_js_sf_known_fn, args, true, false), &pc) == 0) {
        const json_val *v = snap_act_fn_value(&pc);
        if (json_is(v, JSON_ARRAY) && json_first(v))
            sf->on = true;
        for (const json_val *x = json_first(v); x && sf->n < 8; x = json_next(x)) {
            const char *s = json_str(x, NULL);
            bool dup = false;
            for (size_t i = 0; s && i < sf->n; i++)
                dup |= strcmp(sf->names[i], s) == 0;
            if (s && *s && !dup && strlen(s) < sizeof sf->names[0])
                snprintf(sf->names[sf->n++], sizeof sf->names[0], "%s", s);
        }
        snap_act_pfree(&pc);
    } else {
        secret_form_all(sf);
    }
    free(args);
}

/* The action is about to send its input: URLs reached meanwhile hide the
 * values of sf's fields (a->act_secret, snap_url_redact_act). */
void snap_act_secret_form_arm(snap_agent *a, const secret_form *sf)
{
    for (size_t i = 0; i < sf->n && a->nact_secret < 8; i++)
        snprintf(a->act_secret[a->nact_secret++], sizeof a->act_secret[0], "%s",
                 sf->names[i]);
}

/* The account of what followed: navigation, new tabs, dialog, timeout (an
 * action's result and browser_open's dialog refusal: one writer). */
void snap_settled_describe(snap_agent *a, snap_tab *t, const snap_settled *st, base_buf *b)
{
    size_t start = b->len;
    if (st->closed)
        base_buf_printf(b, "the tab closed");
    if (st->navigated && t && !t->closed && t->nframes) {
        base_buf_printf(b, "%snavigated to ", b->len > start ? "; " : "");
        snap_act_sb_nav_url(a, b, t->frames[0].url, 300);
    } else if (st->in_page && t && !t->closed && t->nframes) {
        base_buf_printf(b, "%smoved within the page to ", b->len > start ? "; " : "");
        snap_act_sb_nav_url(a, b, t->frames[0].url, 300);
    }
    for (int i = 0; i < st->nnew; i++) {
        snap_tab *nt = snap_tab_by_id(a, st->new_tabs[i]);
        base_buf_printf(b, "%sopened tab t%d", b->len > start ? "; " : "", st->new_tabs[i]);
        if (nt && nt->nframes && nt->frames[0].url) {
            base_buf_printf(b, " at ");
            snap_act_sb_nav_url(a, b, nt->frames[0].url, 300);
        }
    }
    if (st->dialog && t) {
        base_buf_printf(b, "%s%s %s dialog is open (answer it with dialog accept/dismiss) saying: ",
                        b->len > start ? "; " : "", strchr("aeiou", t->dialog_type[0]) ? "an" : "a",
                        t->dialog_type);
        sb_dialog_message(a, b, t);
    }
    snap_dl_describe(a, st, b, start);
    if (st->timed_out)
        base_buf_printf(b, "%sstill busy when the wait ended (outcome unknown)",
                        b->len > start ? "; " : "");
    if (b->len == start)
        base_buf_printf(b, "no navigation, dialog or new tab");
    snap_settled_pending(a, t, st, b);
}

/* A pending request's URL as shown (st->pending[i].url: no query or
 * fragment was kept): the path alone on the page's own origin; session
 * values scrubbed, redacted, one token, the page's path inside the
 * page-content markers (snap_act_sb_nav_url). */
static void sb_pending_url(snap_agent *a, snap_tab *t, const char *url, base_buf *b)
{
    const char *o = t && t->nframes ? t->frames[0].origin : "";
    size_t ol = strlen(o);
    if (ol && strncmp(url, o, ol) == 0 && url[ol] == '/')
        url += ol;
    char *sc = snap_scrub_url(a, url);
    snap_act_sb_nav_url(a, b, sc ? sc : "", 120);
    free(sc);
}

void snap_settled_pending(snap_agent *a, snap_tab *t, const snap_settled *st, base_buf *b)
{
    if (!st->npending) {
        if (st->capped)
            base_buf_printf(b, "; the wait ended at the %d s settle cap",
                            SNAP_SETTLE_CAP_MS / 1000);
        return;
    }
    base_buf_printf(b, "; still pending%s: %zu request%s (",
                    st->capped ? " at the settle cap" : "", st->npending,
                    st->npending == 1 ? "" : "s");
    size_t shown = st->npending < 4 ? st->npending : 4;
    for (size_t i = 0; i < shown; i++) {
        base_buf_printf(b, "%s%s ", i ? ", " : "", st->pending[i].method);
        sb_pending_url(a, t, st->pending[i].url, b);
        if (st->pending[i].own)
            base_buf_puts(b, " [this action's]");
    }
    if (st->npending > shown)
        base_buf_printf(b, ", %zu more", st->npending - shown);
    base_buf_puts(b, ")");
}

void snap_settled_json(snap_agent *a, snap_tab *t, const snap_settled *st, json_w *w)
{
    snap_dl_json(a, st, w);
    if (st->capped) {
        json_w_key(w, "settle_capped");
        json_w_bool(w, true);
    }
    if (!st->npending)
        return;
    json_w_key(w, "pending_count");
    json_w_int(w, (int64_t)st->npending);
    json_w_key(w, "pending");
    json_w_arr_begin(w);
    for (size_t i = 0; i < st->npending && i < 4; i++) {
        json_w_obj_begin(w);
        json_w_key(w, "method");
        snap_json_page(w, st->pending[i].method);
        json_w_key(w, "url");
        base_buf u = {0};
        sb_pending_url(a, t, st->pending[i].url, &u);
        snap_json_page(w, u.s && !u.oom ? u.s : "");
        base_buf_free(&u);
        json_w_key(w, "type");
        snap_json_page(w, st->pending[i].type);
        json_w_key(w, "own");
        json_w_bool(w, st->pending[i].own);
        json_w_obj_end(w);
    }
    json_w_arr_end(w);
}

/* Whether anything snap_settled_describe reports followed. */
static bool settled_any(const snap_settled *st)
{
    return st->closed || st->navigated || st->in_page || st->nnew || st->dialog ||
           st->timed_out || st->ndls;
}

/* A URL redacted for structured results (new), "" when absent. */
/* End a result whose text is b: the structured result w (an open object)
 * gets "obs" and "message" (b through the page-text writer) and is closed;
 * r takes both. 0, or SNAP_ENOMEM with r failed. */
int snap_act_result_end(json_w *w, base_buf *b, snap_result *r)
{
    json_w_key(w, "obs");
    json_w_str(w, r->obs);
    json_w_key(w, "message");
    snap_json_page(w, b->s ? b->s : "");
    json_w_obj_end(w);
    r->text = b->s;
    b->s = NULL;
    r->structured = json_w_take(w, NULL);
    if (b->oom || !r->text || !r->structured)
        return snap_act_fail(r, SNAP_ENOMEM, "out of memory");
    return 0;
}

void snap_act_json_url(json_w *w, const char *url)
{
    char *red = snap_url_redact(url ? url : "", false, NULL);
    if (red)
        snap_act_utf8_repair(red);
    snap_json_page(w, red ? red : "");
    free(red);
}

void snap_act_report_init(act_report *rp, const char *action, const char *ref)
{
    memset(rp, 0, sizeof *rp);
    rp->action = action;
    rp->ref = ref;
    json_w_init(&rp->extra);
    json_w_obj_begin(&rp->extra);
}

void snap_act_report_free(act_report *rp)
{
    free(rp->page.s);
    json_w_free(&rp->extra);
}

/* Wait for the consequences of input on tab tab_id (snap_settle); when a
 * dialog is already open, take stock without waiting. 0 or SNAP_EBROWSER
 * with r filled. */
int snap_act_settle_after(snap_agent *a, int tab_id, uint64_t nav0, size_t tabs0,
                          int64_t deadline, uint64_t frame_call, const char *did,
                          snap_settled *st, snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    memset(st, 0, sizeof *st);
    if (t && !t->closed && !t->dialog_open) {
        if (snap_settle_frame(a, t, nav0, tabs0, deadline, frame_call, st))
            return snap_act_fail(r, SNAP_EBROWSER, "%s, then the browser went away: %s", did,
                                 cdp_conn_error(a->c));
    } else if (t && !t->closed) {
        st->dialog = true;
        st->navigated = t->nav != nav0;
        for (size_t i = tabs0; i < a->ntabs && st->nnew < 8; i++)
            if (!a->tabs[i].closed)
                st->new_tabs[st->nnew++] = a->tabs[i].id;
    } else {
        st->closed = true;
    }
    return 0;
}

int snap_act_settle(snap_agent *a, int tab_id, uint64_t nav0, size_t tabs0, int64_t deadline,
                    const char *did, snap_settled *st, snap_result *r)
{
    return snap_act_settle_after(a, tab_id, nav0, tabs0, deadline, 0, did, st, r);
}

/* After input that seldom has consequences (typing without submit): if
 * nothing started on the tab (no navigation, no request of its own since
 * own_seq0 = t->own_seq before the input, no popup, no dialog) by the time
 * the page answered a later call, skip the quiet window (*quiet set);
 * otherwise settle as usual. (A polling page's requests do not count.) */
int snap_act_settle_light(snap_agent *a, int tab_id, uint64_t nav0, size_t tabs0,
                          uint64_t own_seq0, int64_t deadline, const char *did,
                          snap_settled *st, bool *quiet, snap_result *r)
{
    *quiet = false;
    if (snap_sync(a))
        return snap_act_fail(r, SNAP_EBROWSER, "%s, then the browser went away: %s", did,
                             cdp_conn_error(a->c));
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (t && !t->closed && !t->dialog_open && !t->loading && t->own_seq == own_seq0 &&
        t->nav == nav0 && a->ntabs == tabs0) {
        memset(st, 0, sizeof *st);
        *quiet = true;
        return 0;
    }
    return snap_act_settle(a, tab_id, nav0, tabs0, deadline, did, st, r);
}

/* True when page calls on tab tab_id can be answered now: the tab is open,
 * no dialog blocks its renderer and it did not navigate away. */
bool snap_act_page_usable(snap_agent *a, int tab_id, const snap_settled *st)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    return t && !t->closed && !t->dialog_open && !st->navigated && !st->closed;
}

/* Fill r for a successful action: the first line says what the action did
 * (did) and what followed (st0); page-derived detail from rp follows between
 * the session's content markers; r->structured has the same as JSON. */
int snap_act_finish(snap_agent *a, int tab_id, const char *did, const snap_settled *st0,
                    act_report *rp, snap_result *r)
{
    snap_settled st = *st0;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (t && t->closed)
        st.closed = true;
    st.in_page = t && !st.navigated && t->inpage != t->inpage_mark;
    if (st.closed && a->cur == tab_id) {
        /* The tab closed itself (window.close): continue in its opener, or
         * in the most recent open tab. */
        snap_tab *op = t && t->opener ? snap_tab_by_id(a, t->opener) : NULL;
        a->cur = op && !op->closed ? op->id : 0;
        for (size_t i = a->ntabs; !a->cur && i > 0; i--)
            if (!a->tabs[i - 1].closed)
                a->cur = a->tabs[i - 1].id;
    }
    /* Secrets in the URLs the action led to are hidden before anything
     * shows them (this result, later snapshots, tabs). */
    const char *names[9] = {0};
    for (size_t i = 0; i < rp->sf.n; i++)
        names[i] = rp->sf.names[i];
    for (size_t i = 0; i < a->ntabs; i++) {
        bool mine = a->tabs[i].id == tab_id;
        for (int k = 0; k < st.nnew; k++)
            mine |= a->tabs[i].id == st.new_tabs[k];
        snap_act_redact_tab_urls(a, a->tabs[i].id, mine && rp->sf.on, names);
    }
    t = snap_tab_by_id(a, tab_id);
    snap_tab *cur = snap_tab_current(a);
    snap_obs_issue(a, cur ? cur : t, r->obs);
    base_buf text = {0};
    if (a->nav_note[0])          /* the page moved on by itself before this action */
        base_buf_printf(&text, "%s\n", a->nav_note);
    a->nav_note[0] = 0;
    char signin[1500] = "";      /* a sign-in made in the untrusted context (R8-6 b) */
    snap_signin_sync(a);
    snap_signin_note(a, signin, sizeof signin);
    base_buf_puts(&text, signin);
    base_buf_printf(&text, "%s: ", did);
    /* The recorder watched the page and saw nothing: say so, rather than
     * only what did not happen (which read as "nothing happened" also when
     * a filter hid half a list), and never claim more than it watched
     * (review F3): what it cannot see is named. */
    if (rp->watched && !rp->changed && !rp->page.len && rp->restyled && !settled_any(&st)) {
        base_buf_printf(&text, "the page changed in place: the class or style of %d element%s "
                        "changed (what that shows or hides was not read)", rp->restyled,
                        rp->restyled == 1 ? "" : "s");
        snap_settled_pending(a, t, &st, &text);
    } else if (rp->watched && !rp->changed && !rp->page.len && !settled_any(&st)) {
        base_buf_printf(&text, "no %schange seen on the page (not watched: closed shadow roots, "
                        "other sites' frames, changes made by CSS alone)",
                        rp->states ? "other " : "");
        snap_settled_pending(a, t, &st, &text);
    } else if (rp->watched && !settled_any(&st)) {
        base_buf_printf(&text, "the page changed in place (no navigation, dialog or new tab)");
        snap_settled_pending(a, t, &st, &text);
    } else {
        snap_settled_describe(a, t, &st, &text);
    }
    if (st.nnew)
        base_buf_printf(&text, " (still on t%d; tabs switch t%d to go there)", cur ? cur->id : 0,
                        st.new_tabs[0]);
    if (st.closed && cur)
        base_buf_printf(&text, "; now on t%d", cur->id);
    base_buf_printf(&text, " [obs %s]", r->obs);
    if (rp->page.len && !rp->page.oom)
        base_buf_printf(&text, "\n<<<page-content nonce=%s>>>\n%s\n<<<end page-content nonce=%s>>>",
                        a->nonce, rp->page.s, a->nonce);
    if (text.s)
        snap_act_utf8_repair(text.s);
    json_w w;
    snap_result_begin(&w, 0);
    json_w_key(&w, "action");
    json_w_str(&w, rp->action);
    if (rp->ref) {
        json_w_key(&w, "ref");
        json_w_str(&w, rp->ref);
    }
    json_w_key(&w, "obs");
    json_w_str(&w, r->obs);
    json_w_key(&w, "tab");
    json_w_int(&w, tab_id);
    json_w_key(&w, "navigated");
    json_w_bool(&w, st.navigated);
    if (st.in_page) {
        json_w_key(&w, "in_page");
        json_w_bool(&w, true);
    }
    if (t && t->nframes && t->frames[0].url) {
        json_w_key(&w, "url");
        snap_act_json_url(&w, t->frames[0].url);
    }
    json_w_key(&w, "new_tabs");
    json_w_arr_begin(&w);
    for (int i = 0; i < st.nnew; i++) {
        snap_tab *nt = snap_tab_by_id(a, st.new_tabs[i]);
        json_w_obj_begin(&w);
        json_w_key(&w, "tab");
        json_w_int(&w, st.new_tabs[i]);
        if (nt && nt->nframes && nt->frames[0].url) {
            json_w_key(&w, "url");
            snap_act_json_url(&w, nt->frames[0].url);
        }
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    if (st.dialog && t) {
        json_w_key(&w, "dialog");
        json_w_obj_begin(&w);
        json_w_key(&w, "type");
        json_w_str(&w, t->dialog_type);
        json_w_key(&w, "message");
        snap_json_page(&w, t->dialog_message ? t->dialog_message : "");
        json_w_obj_end(&w);
    }
    if (st.closed) {
        json_w_key(&w, "tab_closed");
        json_w_bool(&w, true);
    }
    if (st.timed_out) {
        json_w_key(&w, "timed_out");
        json_w_bool(&w, true);
    }
    snap_settled_json(a, t, &st, &w);
    if (rp->has_extra) {
        json_w_obj_end(&rp->extra);
        char *ex = json_w_take(&rp->extra, NULL);
        json_doc *d = ex ? json_parse(ex, strlen(ex), NULL, NULL) : NULL;
        json_w_members(&w, json_doc_root(d));
        json_doc_free(d);
        free(ex);
    }
    json_w_key(&w, "message");
    snap_json_page(&w, text.s ? text.s : "");
    json_w_obj_end(&w);
    free(r->text);
    free(r->structured);
    r->code = 0;
    r->text = text.oom ? NULL : text.s;
    if (text.oom)
        free(text.s);
    r->structured = json_w_take(&w, NULL);
    if (!r->text || !r->structured)
        return snap_act_fail(r, SNAP_ENOMEM, "%s, but the result ran out of memory", did);
    return 0;
}

/* ---- after a confirmation ----
 *
 * A confirmation can take minutes, and the page runs meanwhile: it can move
 * another control under the approved one, disable, replace or rewrite it,
 * move the focus, or navigate. What the human approved must be what runs,
 * so after a decision that went through the hook (d.confirmed; a plain
 * allow costs no extra round trip) the target is resolved again and
 * checked as it was the first time, and any difference calls the action
 * off before anything is sent. What is left between these checks and the
 * input itself is a few milliseconds (docs/threat-model.md). */

/* Call a confirmed action off: r (filled by the check that failed, or
 * empty) becomes a SNAP_ESTALE result that says what changed, with the
 * failed check's own result under "detail"; the audit gets change (a fixed
 * phrase, no page text) as the outcome's detail. */
int snap_act_call_off(snap_gated *g, const char *tool, const char *what, const char *change,
                      snap_result *r)
{
    snprintf(g->changed, sizeof g->changed, "the page changed while the human was asked: "
             "%s; nothing was done", change);
    char *detail = r->text;
    char *was = r->structured;
    r->text = NULL;
    r->structured = NULL;
    snap_act_fail(r, SNAP_ESTALE, "%s%s%s was not done: the page changed while you were asked to "
                  "confirm it (%s), so what was approved is not what would run. Nothing was "
                  "sent. Take a new snapshot; trying again asks the human again.%s%s", tool,
                  what && *what ? " " : "", what ? what : "", change, detail && *detail ? "\n" : "",
                  detail ? detail : "");
    json_w w;
    snap_result_begin(&w, SNAP_ESTALE);
    json_w_key(&w, "action");
    json_w_str(&w, tool);
    json_w_key(&w, "changed_while_confirming");
    json_w_str(&w, change);
    json_w_key(&w, "done");
    json_w_bool(&w, false);
    json_w_key(&w, "message");
    snap_json_page(&w, r->text ? r->text : "");
    if (was && *was == '{') {
        json_w_key(&w, "detail");
        json_w_raw(&w, was, strlen(was), true);
    }
    snap_result_set(&w, r);
    free(detail);
    free(was);
    return SNAP_ESTALE;
}

/* The fixed phrase for a failed check of locate or resolve. */
/* The keys would not go to the element named: the page moved the focus
 * (to: what has it, page-derived tag and type). Confirmed or not, nothing
 * is typed or pressed. */
int snap_act_focus_lost(snap_gated *g, const char *tool, const char *what, const char *to,
                        snap_result *r)
{
    char where[96];
    snap_act_pg(where, sizeof where, to && *to ? to : "another element");
    char change[160];
    snprintf(change, sizeof change, "the focus did not stay on the element (it went to %s)",
             where);
    if (g->d.confirmed)
        return snap_act_call_off(g, tool, what, change, r);
    return snap_act_fail(r, SNAP_ESTALE, "%s%s%s was not done: the page moved the focus away from "
                         "the element named (to %s), so the keys would have gone there. Nothing "
                         "was typed or pressed. Take a new snapshot; a page that keeps moving the "
                         "focus away cannot be typed into with this element.", tool,
                         what && *what ? " " : "", what ? what : "", where);
}

/* Where the keys of the page go, for the element oid (session): 0 when
 * to it, else SNAP_ESTALE with to (cap bytes) saying where. */
int snap_act_focus_where(snap_agent *a, const char *session, const char *oid, char *to,
                         size_t cap)
{
    pcall pc;
    int rc = snap_act_call(a, session, "Runtime.callFunctionOn",
                           snap_act_fn_params(oid, snap_js_focus_on_fn, NULL, true, false), &pc);
    const char *s = rc ? NULL : json_str(snap_act_fn_value(&pc), NULL);
    bool on = s && !*s;
    snprintf(to, cap, "%s", s ? s : "an element the check could not read");
    snap_act_pfree(&pc);
    return on ? 0 : SNAP_ESTALE;
}

const char *snap_act_change_phrase(int code)
{
    switch (code) {
    case SNAP_ECOVERED: return "another element is now at the click point";
    case SNAP_EDISABLED: return "the element is disabled now";
    case SNAP_ENOTVISIBLE: return "the element is hidden or has no box on screen now";
    case SNAP_EDIALOG: return "a dialog opened";
    case SNAP_ENOTAB: return "the tab closed";
    case SNAP_EBROWSER: return "the page could not be read again";
    case SNAP_ETIMEOUT: return "the page did not answer the checks";
    default: return "the element was removed or replaced, or the page navigated";
    }
}

/* After a confirmed decision on tg: the ref resolves to the same node in
 * the same document, attached, no dialog is open, and the element's facts
 * are what the human was shown; with loc (click) it is located again
 * (visible, enabled, and the node at the exact point to click is the
 * element or inside it) and loc gets that point. 0, or call_off. */
int snap_act_recheck_target(snap_agent *a, snap_gated *g, const char *tool, const target *tg,
                            session_set *ss, located *loc, snap_result *r)
{
    if (!g->d.confirmed)
        return 0;
    /* A dialog first: the renderer answers no script while one is open. */
    snap_sync(a);
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    if (!t || t->closed)
        return snap_act_call_off(g, tool, tg->what, snap_act_change_phrase(SNAP_ENOTAB), r);
    if (t->dialog_open)
        return snap_act_call_off(g, tool, tg->what, snap_act_change_phrase(SNAP_EDIALOG), r);
    snap_resolved res;
    snap_result rr = {0};
    int rc = snap_ref_resolve(a, tg->ref, &res, &rr);
    if (rc) {
        snap_result_free(r);
        *r = rr;
        return snap_act_call_off(g, tool, tg->what, snap_act_change_phrase(rc), r);
    }
    snap_resolved_release(a, &res);
    snap_result_free(&rr);
    char why[200];
    if (snap_gate_facts_same(a, g, tg->session, tg->oid, why, sizeof why))
        return snap_act_call_off(g, tool, tg->what, why, r);
    if (loc &&
        (rc = snap_act_locate(a, tg->tab, tg->frame, tg->oid, tg->backend, tg->what, true, ss, loc,
                              r)))
        return snap_act_call_off(g, tool, tg->what, snap_act_change_phrase(rc), r);
    return 0;
}

/* After a confirmed page-level decision: the tab is still open, on the
 * document it was on (nav0) and, when a dialog was approved (dialog, else
 * NULL), the same dialog is open: same type and message, opened by the
 * same frame at the same URL (a page can close the approved dialog and
 * open an identical one from another frame, another origin's script).
 * 0, or call_off. */
int snap_act_recheck_page(snap_agent *a, snap_gated *g, const char *tool, int tab_id,
                          uint64_t nav0, const act_dialog *dialog, snap_result *r)
{
    if (!g->d.confirmed)
        return 0;
    snap_sync(a);
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed)
        return snap_act_call_off(g, tool, NULL, snap_act_change_phrase(SNAP_ENOTAB), r);
    if (t->nav != nav0)
        return snap_act_call_off(g, tool, NULL, "the page navigated to another document", r);
    if (!dialog)
        return 0;
    if (!t->dialog_open ||
        strcmp(dialog->message ? dialog->message : "",
               t->dialog_message ? t->dialog_message : "") != 0 ||
        strcmp(dialog->type, t->dialog_type) != 0)
        return snap_act_call_off(g, tool, NULL, "the dialog that was approved is no longer the one "
                                 "open", r);
    if (strcmp(dialog->frame, t->dialog_frame) != 0 ||
        strcmp(dialog->url ? dialog->url : "", t->dialog_url ? t->dialog_url : "") != 0)
        return snap_act_call_off(g, tool, NULL, "the dialog that was approved is no longer the one "
                                 "open (the one open now was opened by another frame)", r);
    return 0;
}

/* ---- what changed ---- */

/* The states keys[0..3] (checked, expanded, pressed, selected) of the
 * element's accessibility node (a getPartialAXTree result), as the
 * snapshot reads them: "true", "false" or "mixed" into out[i], "" when
 * the node has no such property. False when the node is ignored or has
 * none of them (then the DOM's reading stands: a label's control). */
static bool ax_node_states(const json_val *result, const char *const *keys, char out[4][8])
{
    const json_val *n0 = json_at(json_get(result, "nodes"), 0);
    if (!n0 || json_bool(json_get(n0, "ignored")))
        return false;
    bool any = false;
    for (const json_val *p = json_first(json_get(n0, "properties")); p; p = json_next(p)) {
        const char *k = json_get_str(p, "name");
        const json_val *v = json_get(json_get(p, "value"), "value");
        for (size_t i = 0; k && i < 4; i++) {
            if (strcmp(k, keys[i]) != 0)
                continue;
            const char *s = json_str(v, NULL);
            snprintf(out[i], sizeof out[i], "%s", s && strcmp(s, "mixed") == 0 ? "mixed" :
                     json_bool(v) || (s && strcmp(s, "true") == 0) ? "true" : "false");
            any = true;
        }
    }
    return any;
}

/* Read what changed (text added near the element, its states) into rp:
 * text for the page block, members for structured. obs_oid is the recorder
 * from snap_js_observe_fn (may be ""), elem_oid the element. */
void snap_act_collect_changes(snap_agent *a, const char *session, const char *obs_oid,
                              const char *elem_oid, act_report *rp)
{
    pcall co, af, ax;
    memset(&co, 0, sizeof co);
    if (*obs_oid)
        snap_act_psend_p(a, session, "Runtime.callFunctionOn",
                         snap_act_fn_params(obs_oid, snap_js_collect_fn, NULL, true, false), &co);
    snap_act_psend_p(a, session, "Runtime.callFunctionOn",
                     snap_act_fn_params(elem_oid, snap_js_after_fn, NULL, true, false), &af);
    /* The states from the accessibility tree, the snapshot's own source,
     * in the same round trip (issue 13, point 5d). */
    snap_act_psend_p(a, session, "Accessibility.getPartialAXTree",
                     snap_act_params("sb", "objectId", elem_oid, "fetchRelatives", false), &ax);
    if (*obs_oid)
        snap_act_pwait(a, &co);
    snap_act_pwait(a, &af);
    bool ax_ok = snap_act_pwait(a, &ax) == 0;
    const json_val *sv = *obs_oid ? snap_act_fn_value(&co) : NULL;
    const json_val *av = snap_act_fn_value(&af);
    static const char *const KEYS[] = {"checked", "expanded", "pressed", "selected"};
    char axv[4][8] = {"", "", "", ""};
    bool from_ax = ax_ok && ax_node_states(ax.rep.result, KEYS, axv);
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        const char *v = from_ax ? (axv[i][0] ? axv[i] : NULL) : json_get_str(av, KEYS[i]);
        if (!v)
            continue;
        json_w_key(&rp->extra, KEYS[i]);
        snap_json_page(&rp->extra, v);
        rp->has_extra = true;
        rp->states = true;
    }
    if (json_get(av, "gone")) {
        json_w_key(&rp->extra, "element_removed");
        json_w_bool(&rp->extra, true);
        rp->has_extra = true;
    }
    if (json_is(sv, JSON_OBJECT))
        snap_act_report_recorded(sv, NULL, false, true, rp);
    snap_act_pfree(&co);
    snap_act_pfree(&af);
    snap_act_pfree(&ax);
}

/* "label: a | b" on a line of its own, the texts of the array v as page text. */
static void page_texts(base_buf *b, const char *label, const json_val *v)
{
    base_buf_printf(b, "%s%s", b->len ? "\n" : "", label);
    int i = 0;
    for (const json_val *x = json_first(v); x; x = json_next(x), i++) {
        if (i)
            base_buf_put(b, " | ", 3);
        snap_act_sb_page(b, json_str(x, NULL), 100, 0);
    }
}

/* "hidden: 2 items: a | b" (the count may exceed the texts shown). */
static void page_counted(act_report *rp, const json_val *v, const char *what,
                         const char *arr, const char *cnt)
{
    int64_t n = json_get_int(v, cnt, 0);
    if (n <= 0)
        return;
    char label[64];
    snprintf(label, sizeof label, "%s: %lld item%s%s", what, (long long)n, n == 1 ? "" : "s",
             json_first(json_get(v, arr)) ? ": " : "");
    page_texts(&rp->page, label, json_get(v, arr));
    char key[32];
    snprintf(key, sizeof key, "%s_count", what);
    json_w_key(&rp->extra, key);
    json_w_int(&rp->extra, n);
    snprintf(key, sizeof key, "%s_text", what);
    json_w_key(&rp->extra, key);
    json_w_arr_begin(&rp->extra);
    for (const json_val *x = json_first(json_get(v, arr)); x; x = json_next(x))
        snap_json_page(&rp->extra, json_str(x, NULL) ? json_str(x, NULL) : "");
    json_w_arr_end(&rp->extra);
    rp->has_extra = true;
    rp->changed = true;
}

/* Write what the recorder saw (snap_js_collect_fn's object v) into rp:
 * lines for the page block ("new text: ...", "removed: ...", "hidden: 2
 * items: ...", "shown: ...", "list 3 -> 1 items", "focus moved to textbox
 * "Edit""), the same as structured members. All of it is page text,
 * escaped by the page-text writer. No new text when secret (typing into a
 * secret field), nor when it is skip (the text typed); no focus line
 * unless focus (press reports the focus itself). Values of fields are
 * never in it: the recorder reads DOM text and labels only. */
void snap_act_report_recorded(const json_val *v, const char *skip, bool secret, bool focus,
                              act_report *rp)
{
    rp->watched = true;
    rp->added |= json_bool(json_get(v, "any"));
    rp->restyled = (int)json_get_int(v, "cu", 0);
    const char *added = json_get_str(v, "t");
    if (added && *added && !secret && !(skip && strcmp(added, skip) == 0)) {
        base_buf_printf(&rp->page, "%snew text: ", rp->page.len ? "\n" : "");
        snap_act_sb_page(&rp->page, added, 300, 0);
        json_w_key(&rp->extra, "new_text");
        snap_json_page(&rp->extra, added);
        rp->has_extra = true;
        rp->changed = true;
    } else if (added && *added) {
        rp->changed = true;     /* the field's own text: the page did change */
    }
    const json_val *rm = json_get(v, "rm");
    if (json_first(rm)) {
        page_texts(&rp->page, "removed: ", rm);
        json_w_key(&rp->extra, "removed_text");
        json_w_arr_begin(&rp->extra);
        for (const json_val *x = json_first(rm); x; x = json_next(x))
            snap_json_page(&rp->extra, json_str(x, NULL) ? json_str(x, NULL) : "");
        json_w_arr_end(&rp->extra);
        rp->has_extra = true;
        rp->changed = true;
    }
    page_counted(rp, v, "hidden", "hid", "nh");
    page_counted(rp, v, "shown", "shn", "ns");
    const json_val *l = json_first(json_get(v, "lists"));
    for (int i = 0; l; l = json_next(l), i++) {
        int64_t b, after;
        if (!json_int(json_first(l), &b) || !json_int(json_next(json_first(l)), &after))
            continue;
        base_buf_printf(&rp->page, "%slist %lld -> %lld items", rp->page.len ? "\n" : "",
                        (long long)b, (long long)after);
        if (!i) {
            json_w_key(&rp->extra, "count_before");
            json_w_int(&rp->extra, b);
            json_w_key(&rp->extra, "count_after");
            json_w_int(&rp->extra, after);
        }
        rp->has_extra = true;
        rp->changed = true;
    }
    const json_val *f = json_get(v, "focus");
    const char *role = json_get_str(f, "role");
    if (focus && role && *role) {
        const char *name = json_get_str(f, "name");
        base_buf_printf(&rp->page, "%sfocus moved to ", rp->page.len ? "\n" : "");
        snap_act_sb_page(&rp->page, role, 32, 0);
        if (name && *name) {
            base_buf_put(&rp->page, " ", 1);
            snap_act_sb_quoted(&rp->page, name, 80);
        }
        json_w_key(&rp->extra, "focus");
        json_w_obj_begin(&rp->extra);
        json_w_key(&rp->extra, "role");
        snap_json_page(&rp->extra, role);
        json_w_key(&rp->extra, "name");
        snap_json_page(&rp->extra, name ? name : "");
        json_w_obj_end(&rp->extra);
        rp->has_extra = true;
        rp->changed = true;
    }
}

/* One line of states for the result text: "now checked", "expanded". */
void snap_act_states_line(const act_report *rp, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!rp->has_extra || rp->extra.err)
        return;
    /* The writer holds "{...members"; read it back as an object. */
    size_t n = rp->extra.len;
    char *tmp = malloc(n + 2);
    if (!tmp)
        return;
    memcpy(tmp, rp->extra.buf, n);
    tmp[n] = '}';
    tmp[n + 1] = 0;
    json_doc *d = json_parse(tmp, n + 1, NULL, NULL);
    free(tmp);
    const json_val *o = json_doc_root(d);
    size_t len = 0;
    const char *c = json_get_str(o, "checked");
    if (c)
        len += (size_t)snprintf(buf + len, cap - len, "now %s",
                                strcmp(c, "true") == 0 ? "checked" :
                                strcmp(c, "false") == 0 ? "unchecked" : "mixed");
    static const char *const K[] = {"expanded", "pressed", "selected"};
    for (size_t i = 0; i < 3 && len < cap; i++) {
        const char *v = json_get_str(o, K[i]);
        char pb[64];
        if (v)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s=%s", len ? ", " : "", K[i],
                                    snap_act_pg(pb, sizeof pb, v));
    }
    if (len < cap && json_get(o, "element_removed"))
        snprintf(buf + len, cap - len, "%sthe element is gone from the page",
                 len ? ", " : "");
    json_doc_free(d);
}

/* Release what an action took, unless a dialog blocks the page (then the
 * renderer would not answer; the objects go with the document). */
void snap_act_release_all(snap_agent *a, target *tg, session_set *ss)
{
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    if (!t || t->closed || t->dialog_open) {
        ss->n = 0;
        tg->oid[0] = 0;
        return;
    }
    snap_act_sessions_release(a, ss);
    snap_act_release_object(a, tg->session, tg->oid);
}
