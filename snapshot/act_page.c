/*
 * act_page.c — page-level actions: eval (granted and confirmed only), history, tabs
 * and dialogs (screenshots: act_shot.c).
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#include "snapshot/act_int.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- eval (granted and confirmed only) ---- */

static int eval_run(snap_agent *a, const char *expression, snap_result *r)
{
    snap_tab *t;
    int rc = snap_act_begin(a, NULL, &t, r);
    if (rc)
        return rc;
    if (!expression || !*expression ||
        !json_utf8_valid((const uint8_t *)expression, strlen(expression)))
        return snap_act_fail(r, SNAP_EINVAL, "eval needs an expression (UTF-8)");
    pcall pc;
    rc = snap_act_call(a, t->session, "Runtime.evaluate",
                       snap_act_params("sbb", "expression", expression, "returnByValue", true,
                                       "awaitPromise", true),
                       &pc);
    if (rc) {
        rc = snap_act_fail(r, SNAP_EBROWSER, "eval: %s", pc.e.msg);
        snap_act_pfree(&pc);
        return rc;
    }
    const json_val *ex = json_get(pc.rep.result, "exceptionDetails");
    const json_val *v = json_get(json_get(pc.rep.result, "result"), "value");
    char *js = v ? json_write(v, NULL) : NULL;
    base_buf b = {0};
    base_buf_printf(&b, "%s; value:\n<<<page-content nonce=%s>>>\n", ex ? "the expression threw"
                                                             : "evaluated", a->nonce);
    snap_act_sb_page(&b, js ? js : "undefined", 4000, PAGE_KEEP_NL);
    base_buf_printf(&b, "\n<<<end page-content nonce=%s>>>", a->nonce);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, !ex);
    json_w_key(&w, "value");
    if (v)
        snap_json_page_val(&w, v);
    else
        json_w_null(&w);
    json_w_obj_end(&w);
    free(js);
    snap_act_pfree(&pc);
    memset(r, 0, sizeof *r);
    r->code = ex ? SNAP_EINVAL : 0;
    r->text = b.s;
    r->structured = json_w_take(&w, NULL);
    snap_obs_issue(a, t, r->obs);
    return r->code;
}

int snap_eval(snap_agent *a, const char *expression, snap_result *r)
{
    snap_gated gg;
    memset(&gg, 0, sizeof gg);
    memset(r, 0, sizeof *r);
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    int rc = 0;
    if (t) {
        /* The human who confirms sees the script itself. */
        int tab_id = t->id;
        uint64_t nav0 = t->nav;
        snap_gate_in gi = {.tool = "eval", .tab = t->id, .state_change = true,
                           .script = expression ? expression : ""};
        rc = snap_gate_ask(a, &gi, &gg, r);
        if (rc == 0 && (rc = snap_act_recheck_page(a, &gg, "eval", tab_id, nav0, NULL, r)))
            snap_gate_done(a, &gg, rc, r);
    }
    if (rc)
        return rc;
    rc = eval_run(a, expression, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

/* ---- history ---- */

typedef struct {
    snap_agent *a;
    int tab;
    bool same_doc;              /* navigatedWithinDocument on the main frame */
} nav_watch;

static void on_nav_event(void *ud, cdp_conn *c, const char *session, const char *method,
                         const json_val *p)
{
    (void)c;
    nav_watch *w = ud;
    if (strcmp(method, "Page.navigatedWithinDocument") != 0)
        return;
    snap_tab *t = snap_tab_by_session(w->a, session);
    const char *fid = json_get_str(p, "frameId");
    const char *url = json_get_str(p, "url");
    if (!t || t->id != w->tab || !fid || !t->nframes || strcmp(fid, t->frames[0].id) != 0)
        return;
    w->same_doc = true;
    /* agent.c keeps the URL of cross-document navigations; keep this one,
     * as agent.c would (redacted, session values scrubbed). */
    char *red = url ? snap_url_redact(url, false, NULL) : NULL;
    char *u = red ? snap_scrub_url(w->a, red) : NULL;
    free(red);
    if (u) {
        free(t->frames[0].url);
        t->frames[0].url = u;
    }
}

static int history_run(snap_agent *a, int delta, snap_result *r)
{
    snap_tab *t;
    int rc = snap_act_begin(a, NULL, &t, r);
    if (rc)
        return rc;
    if (delta == 0)
        return snap_act_fail(r, SNAP_EINVAL, "history needs -1 (back) or +1 (forward)");
    int64_t deadline = base_now_ms() + a->o.timeout_ms;
    pcall h;
    if (snap_act_call0(a, t->session, "Page.getNavigationHistory", &h)) {
        rc = snap_act_fail(r, SNAP_EBROWSER, "history: %s", h.e.msg);
        snap_act_pfree(&h);
        return rc;
    }
    int64_t cur = json_get_int(h.rep.result, "currentIndex", 0);
    const json_val *entries = json_get(h.rep.result, "entries");
    int64_t want = cur + delta;
    if (want < 0 || want >= (int64_t)json_len(entries)) {
        snap_act_pfree(&h);
        if (delta < 0)
            return snap_act_fail(r, SNAP_EINVAL, "tab t%d has no earlier page to go back to "
                                 "(this is the first page of its history)", t->id);
        return snap_act_fail(r, SNAP_EINVAL, "tab t%d has no later page to go forward to "
                             "(this is the last page of its history)", t->id);
    }
    const json_val *entry = json_at(entries, (size_t)want);
    int entry_id = (int)json_get_int(entry, "id", 0);
    char url[600];
    snprintf(url, sizeof url, "%s", json_get_str(entry, "url") ? json_get_str(entry, "url")
                                                                 : "");
    snap_act_pfree(&h);
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    size_t tabs0 = a->ntabs;
    nav_watch w = {a, tab_id, false};
    if (cdp_listen(a->c, on_nav_event, &w))
        return snap_act_fail(r, SNAP_EBROWSER, "too many listeners on the connection");
    pcall ne;
    rc = snap_act_call(a, t->session, "Page.navigateToHistoryEntry",
                       snap_act_params("i", "entryId", entry_id), &ne);
    snap_act_pfree(&ne);
    if (rc) {
        cdp_unlisten(a->c, on_nav_event, &w);
        return snap_act_fail(r, SNAP_EBROWSER, "history: %s", ne.e.msg);
    }
    /* The new document (or same-document entry) first, then its consequences. */
    for (;;) {
        if (snap_sync(a))
            break;
        t = snap_tab_by_id(a, tab_id);
        if (!t || t->closed || t->dialog_open || t->nav != nav0 || w.same_doc)
            break;
        int64_t left = deadline - base_now_ms();
        if (left <= 0)
            break;
        cdp_err e;
        if (cdp_pump(a->c, left < 10 ? (int)left : 10, &e))
            break;
    }
    cdp_unlisten(a->c, on_nav_event, &w);
    char did[700];
    /* A new document is reported by the settle line ("navigated to ..."). */
    if (w.same_doc) {
        base_buf ub = {0};
        char *sc = snap_scrub_url(a, url);
        snap_act_sb_nav_url(a, &ub, sc ? sc : "", 300);
        free(sc);
        snprintf(did, sizeof did, "went %s to %s (same document)",
                 delta < 0 ? "back" : "forward", ub.s && !ub.oom ? ub.s : "");
        snap_act_utf8_repair(did);
        free(ub.s);
    } else
        snprintf(did, sizeof did, "went %s", delta < 0 ? "back" : "forward");
    snap_settled st;
    if ((rc = snap_act_settle(a, tab_id, nav0, tabs0, deadline, did, &st, r)))
        return rc;
    act_report rp;
    snap_act_report_init(&rp, delta < 0 ? "back" : "forward", NULL);
    if (w.same_doc) {
        json_w_key(&rp.extra, "same_document");
        json_w_bool(&rp.extra, true);
        rp.has_extra = true;
    }
    rc = snap_act_finish(a, tab_id, did, &st, &rp, r);
    snap_act_report_free(&rp);
    return rc;
}

int snap_history(snap_agent *a, int delta, snap_result *r)
{
    snap_gated gg;
    int rc = snap_act_gate_page(a, "back", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    rc = history_run(a, delta, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

/* ---- tabs ---- */

static int parse_tab(const char *s)
{
    if (!s)
        return 0;
    if (*s == 't' || *s == 'T')
        s++;
    char *end;
    long v = strtol(s, &end, 10);
    return end == s || *end || v <= 0 || v > 1000000 ? 0 : (int)v;
}

static const char *tab_url(const snap_tab *t)
{
    return t->nframes && t->frames[0].url ? t->frames[0].url : "";
}

/* Titles arrive with Target.targetInfoChanged, which may lag a load: read
 * them fresh (one round trip) before showing tabs. */
void snap_tab_titles(snap_agent *a)
{
    pcall pc;
    if (snap_act_call0(a, NULL, "Target.getTargets", &pc) == 0) {
        for (const json_val *ti = json_first(json_get(pc.rep.result, "targetInfos")); ti;
             ti = json_next(ti)) {
            const char *id = json_get_str(ti, "targetId");
            const char *title = json_get_str(ti, "title");
            for (size_t i = 0; id && title && i < a->ntabs; i++) {
                snap_tab *t = &a->tabs[i];
                if (t->closed || strcmp(t->target, id) != 0)
                    continue;
                size_t n = strlen(title);
                char *d = malloc(n + 1);
                if (d) {
                    memcpy(d, title, n + 1);
                    free(t->title);
                    t->title = d;
                }
            }
        }
    }
    snap_act_pfree(&pc);
}

static int tabs_list(snap_agent *a, snap_result *r)
{
    snap_tab_titles(a);
    base_buf b = {0};
    json_w w;
    snap_result_begin(&w, 0);
    json_w_key(&w, "tabs");
    json_w_arr_begin(&w);
    size_t open = 0;
    for (size_t i = 0; i < a->ntabs; i++) {
        snap_tab *t = &a->tabs[i];
        if (t->closed)
            continue;
        open++;
        bool cur = t->id == a->cur;
        base_buf_printf(&b, "%st%d%s ", open > 1 ? "\n" : "", t->id, cur ? " (current)" : "");
        snap_act_sb_quoted(&b, t->title ? t->title : "", 80);
        base_buf_put(&b, " ", 1);
        snap_act_sb_url(&b, tab_url(t), 300);
        if (t->opener)
            base_buf_printf(&b, " (opened by t%d)", t->opener);
        if (t->dialog_open)
            base_buf_printf(&b, " [%s dialog open]", t->dialog_type);
        json_w_obj_begin(&w);
        json_w_key(&w, "tab");
        json_w_int(&w, t->id);
        json_w_key(&w, "url");
        snap_act_json_url(&w, tab_url(t));
        json_w_key(&w, "title");
        snap_json_page(&w, t->title ? t->title : "");
        json_w_key(&w, "current");
        json_w_bool(&w, cur);
        if (t->opener) {
            json_w_key(&w, "opener");
            json_w_int(&w, t->opener);
        }
        if (t->dialog_open) {
            json_w_key(&w, "dialog");
            json_w_str(&w, t->dialog_type);
        }
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    json_w_key(&w, "closed");
    json_w_arr_begin(&w);
    size_t nclosed = 0;
    for (size_t i = 0; i < a->ntabs; i++) {
        if (!a->tabs[i].closed || a->tabs[i].discarded)
            continue;
        json_w_int(&w, a->tabs[i].id);
        nclosed++;
    }
    json_w_arr_end(&w);
    if (!open)
        base_buf_printf(&b, "no open tabs");
    if (nclosed)
        base_buf_printf(&b, "\n%zu closed tab%s (ids are never reused)", nclosed,
                        nclosed > 1 ? "s" : "");
    /* Titles and URLs come from the pages: mark them. */
    base_buf out = {0};
    base_buf_printf(&out, "%zu open tab%s\n<<<page-content nonce=%s>>>\n%s\n<<<end page-content "
                    "nonce=%s>>>", open, open == 1 ? "" : "s", a->nonce, b.s ? b.s : "", a->nonce);
    free(b.s);
    json_w_key(&w, "message");
    snap_json_page(&w, out.s ? out.s : "");
    json_w_obj_end(&w);
    r->code = 0;
    r->text = out.s;
    r->structured = json_w_take(&w, NULL);
    if (!r->text || !r->structured)
        return snap_act_fail(r, SNAP_ENOMEM, "out of memory listing tabs");
    return 0;
}

static void problem_line(void *ud, const char *text)
{
    base_buf *b = ud;
    base_buf_puts(b, "\n- ");
    snap_act_sb_page(b, text, 220, 0);
}

/* tabs problems: the browser's errors on the tab's page since it loaded
 * (issue 13, point 6c). */
static int tabs_problems(snap_agent *a, snap_tab *t, snap_result *r)
{
    size_t n = snap_problems_count(t);
    base_buf b = {0};
    base_buf_printf(&b, "tab t%d: %zu problem%s reported by the browser since the page loaded",
                    t->id, n, n == 1 ? "" : "s");
    if (n > SNAP_PROBLEMS_MAX)
        base_buf_printf(&b, " (the last %d)", SNAP_PROBLEMS_MAX);
    if (n) {
        base_buf_printf(&b, "\n<<<page-content nonce=%s>>>", a->nonce);
        snap_problems_each(t, problem_line, &b);
        base_buf_printf(&b, "\n<<<end page-content nonce=%s>>>", a->nonce);
    } else {
        base_buf_puts(&b, " (failed requests, answers >= 400, refused content; console "
                          "messages are not read)");
    }
    snap_obs_issue(a, t, r->obs);
    json_w w;
    snap_result_begin(&w, 0);
    json_w_key(&w, "tab");
    json_w_int(&w, t->id);
    json_w_key(&w, "problems");
    json_w_uint(&w, n);
    return snap_act_result_end(&w, &b, r);
}

static int tabs_run(snap_agent *a, const char *action, const char *tab, snap_result *r)
{
    memset(r, 0, sizeof *r);
    if (snap_sync(a))
        return snap_act_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    if (!action || !*action || strcmp(action, "list") == 0)
        return tabs_list(a, r);
    bool sw = strcmp(action, "switch") == 0, cl = strcmp(action, "close") == 0;
    bool pr = strcmp(action, "problems") == 0;
    if (!sw && !cl && !pr)
        return snap_act_fail(r, SNAP_EINVAL, "tabs action '%.20s' is not list, switch, close "
                             "or problems", action);
    snap_tab *cur = snap_tab_current(a);
    if (pr && !(tab && *tab)) {
        if (!cur)
            return snap_act_fail(r, SNAP_ENOTAB, "no open tab: open a page first");
        return tabs_problems(a, cur, r);
    }
    if (cur && cur->dialog_open)
        return snap_act_refuse_dialog(a, cur, r);
    int id = tab && *tab ? parse_tab(tab) : (cl && cur ? cur->id : 0);
    if (!id)
        return snap_act_fail(r, SNAP_EINVAL, "'%.20s' is not a tab id (they look like t2; tabs "
                             "list shows them)", tab ? tab : "");
    snap_tab *t = snap_tab_by_id(a, id);
    if (!t)
        return snap_act_fail(r, SNAP_ENOTAB, "there is no tab t%d", id);
    if (t->closed)
        return snap_act_fail(r, SNAP_ENOTAB, "tab t%d is closed (closed tabs never come back; "
                             "tabs list shows the open ones)", id);
    if (pr)
        return tabs_problems(a, t, r);
    char *prm = snap_act_params("s", "targetId", t->target);
    pcall pc;
    int rc = snap_act_call(a, NULL, sw ? "Target.activateTarget" : "Target.closeTarget", prm, &pc);
    snap_act_pfree(&pc);
    if (rc && !(cl && rc == CDP_EPROTOCOL))
        return snap_act_fail(r, SNAP_EBROWSER, "tabs %s: %s", action, pc.e.msg);
    t = snap_tab_by_id(a, id);
    if (!t)
        return snap_act_fail(r, SNAP_ENOTAB, "tab t%d is gone (tabs list shows the open ones)", id);
    char did[800];
    if (sw) {
        a->cur = id;
        snprintf(did, sizeof did, "switched to t%d", id);
    } else {
        t->closed = true;
        snprintf(did, sizeof did, "closed t%d", id);
        if (a->cur == id) {
            snap_tab *op = t->opener ? snap_tab_by_id(a, t->opener) : NULL;
            a->cur = op && !op->closed ? op->id : 0;
            for (size_t i = a->ntabs; !a->cur && i > 0; i--)
                if (!a->tabs[i - 1].closed)
                    a->cur = a->tabs[i - 1].id;
        }
        snap_sync(a);
    }
    snap_tab_titles(a);
    snap_tab *now = snap_tab_current(a);
    snap_obs_issue(a, now, r->obs);
    base_buf b = {0};
    if (now) {
        base_buf_printf(&b, "%s; current tab t%d [obs %s]\n<<<page-content nonce=%s>>>\n", did,
                        now->id, r->obs, a->nonce);
        snap_act_sb_quoted(&b, now->title ? now->title : "", 80);
        base_buf_put(&b, " ", 1);
        snap_act_sb_url(&b, tab_url(now), 300);
        base_buf_printf(&b, "%s\n<<<end page-content nonce=%s>>>",
                        now->dialog_open ? " (a dialog is open)" : "", a->nonce);
    } else
        base_buf_printf(&b, "%s; no tab is open now (open a page)", did);
    json_w w;
    snap_result_begin(&w, 0);
    json_w_key(&w, "action");
    json_w_str(&w, action);
    json_w_key(&w, "tab");
    json_w_int(&w, id);
    json_w_key(&w, "current");
    json_w_int(&w, now ? now->id : 0);
    if (now) {
        json_w_key(&w, "url");
        snap_act_json_url(&w, tab_url(now));
    }
    r->code = 0;
    return snap_act_result_end(&w, &b, r);
}

int snap_tabs(snap_agent *a, const char *action, const char *tab, snap_result *r)
{
    snap_gated gg;
    int rc = snap_act_gate_page(a, "tabs", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    rc = tabs_run(a, action, tab, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

/* ---- dialogs ---- */

static int dialog_run(snap_agent *a, bool accept, const char *prompt_text, snap_result *r)
{
    memset(r, 0, sizeof *r);
    if (snap_sync(a))
        return snap_act_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return snap_act_fail(r, SNAP_ENOTAB, "no open tab: open a page first");
    if (!t->dialog_open) {
        for (size_t i = 0; i < a->ntabs; i++)
            if (!a->tabs[i].closed && a->tabs[i].dialog_open)
                return snap_act_fail(r, SNAP_EDIALOG, "no dialog is open in the current tab t%d; "
                                     "tab t%d has a %s dialog (tabs switch t%d first)", t->id,
                                     a->tabs[i].id, a->tabs[i].dialog_type, a->tabs[i].id);
        return snap_act_fail(r, SNAP_EDIALOG, "no dialog is open in tab t%d", t->id);
    }
    if (prompt_text && !json_utf8_valid((const uint8_t *)prompt_text, strlen(prompt_text)))
        return snap_act_fail(r, SNAP_EINVAL, "the prompt text is not valid UTF-8");
    int64_t deadline = base_now_ms() + a->o.timeout_ms;
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    size_t tabs0 = a->ntabs;
    char type[16];
    snprintf(type, sizeof type, "%s", t->dialog_type);
    bool prompt = strcmp(type, "prompt") == 0;
    uint64_t since = cdp_event_seq(a->c);
    /* The dialog belongs to the session of the frame that opened it: the
     * page's, or an out-of-process iframe's. */
    char sessions[MAX_SESSIONS][SNAP_ID_MAX];
    size_t ns = 0;
    snprintf(sessions[ns++], SNAP_ID_MAX, "%s", t->session);
    for (size_t i = 1; i < t->nframes && ns < MAX_SESSIONS; i++)
        if (t->frames[i].oopif && !t->frames[i].gone)
            snprintf(sessions[ns++], SNAP_ID_MAX, "%s", t->frames[i].session);
    const char *text = prompt && accept ? (prompt_text ? prompt_text : "") : NULL;
    pcall pc;
    int rc = CDP_EPROTOCOL;
    for (size_t i = 0; rc == CDP_EPROTOCOL && i < ns; i++) {
        rc = snap_act_call(a, sessions[i], "Page.handleJavaScriptDialog",
                           snap_act_params("bs", "accept", accept, "promptText", text), &pc);
        snap_act_pfree(&pc);
    }
    if (rc)
        return snap_act_fail(r, SNAP_EBROWSER, "dialog: %s", pc.e.msg);
    cdp_reply ev;
    cdp_err e;
    if (cdp_wait_event(a->c, since, NULL, "Page.javascriptDialogClosed", NULL, NULL, 3000, &ev,
                       NULL, &e) == 0)
        cdp_reply_free(&ev);
    t = snap_tab_by_id(a, tab_id);
    if (t)
        t->dialog_open = false;
    char did[120];
    snprintf(did, sizeof did, "%s the %s dialog%s", accept ? "accepted" : "dismissed", type,
             prompt && accept ? " with the given text" : "");
    snap_settled st;
    if ((rc = snap_act_settle(a, tab_id, nav0, tabs0, deadline, did, &st, r)))
        return rc;
    act_report rp;
    snap_act_report_init(&rp, "dialog", NULL);
    json_w_key(&rp.extra, "answered");
    json_w_str(&rp.extra, type);
    json_w_key(&rp.extra, "accepted");
    json_w_bool(&rp.extra, accept);
    rp.has_extra = true;
    rc = snap_act_finish(a, tab_id, did, &st, &rp, r);
    snap_act_report_free(&rp);
    return rc;
}

int snap_dialog(snap_agent *a, bool accept, const char *prompt_text, snap_result *r)
{
    snap_gated gg;
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    bool approve = accept && t && t->dialog_open;
    /* The dialog approved, kept: the tab's copy goes when the dialog does. */
    act_dialog dl = {0};
    int tab_id = t ? t->id : 0;
    uint64_t nav0 = t ? t->nav : 0;
    if (approve) {
        snprintf(dl.type, sizeof dl.type, "%s", t->dialog_type);
        snprintf(dl.frame, sizeof dl.frame, "%s", t->dialog_frame);
        dl.message = strdup(t->dialog_message ? t->dialog_message : "");
        dl.url = t->dialog_url ? strdup(t->dialog_url) : NULL;
        dl.text = prompt_text && *prompt_text ? prompt_text : NULL;   /* S7: shown, judged */
        if (!dl.message || (t->dialog_url && !dl.url)) {
            free(dl.message);
            free(dl.url);
            memset(r, 0, sizeof *r);
            return snap_fail(r, SNAP_ENOMEM, "dialog: out of memory");
        }
    }
    int rc = snap_act_gate_page(a, "dialog", accept, false, approve ? &dl : NULL, NULL, &gg, r);
    if (rc == 0 &&
        (rc = snap_act_recheck_page(a, &gg, "dialog", tab_id, nav0, approve ? &dl : NULL, r)))
        snap_gate_done(a, &gg, rc, r);
    free(dl.message);
    free(dl.url);
    if (rc)
        return rc;
    rc = dialog_run(a, accept, prompt_text, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}
