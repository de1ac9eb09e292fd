/*
 * act_page.c — page-level actions: eval (granted and confirmed only), history, tabs,
 * dialogs and screenshots.
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#define _XOPEN_SOURCE 700     /* realpath (POSIX.1-2008 XSI) */
#include "snapshot/act_int.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* ---- screenshot ---- */

#define SHOT_MAX_HEIGHT 16384   /* full-page captures are cut here (and say so) */
#define SHOT_MAX_WIDTH 4096     /* and here: a page can be made arbitrarily wide */

/* One capture as asked: format "png" or "jpeg" (quality q), clip in page
 * CSS px with its scale (clip NULL: the viewport as it is). */
typedef struct {
    double x, y, w, h;
} shot_rect;

typedef struct {
    uint8_t *img;
    size_t len;
    uint32_t width, height;
    bool jpeg;
} shot_img;

/* Width and height of a PNG or a JPEG (its first SOF marker); false when
 * the bytes are neither. */
static bool shot_dims(const uint8_t *p, size_t n, bool *jpeg, uint32_t *w, uint32_t *h)
{
    static const uint8_t SIG[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n >= 24 && memcmp(p, SIG, 8) == 0) {
        *jpeg = false;
        *w = (uint32_t)p[16] << 24 | (uint32_t)p[17] << 16 | (uint32_t)p[18] << 8 | p[19];
        *h = (uint32_t)p[20] << 24 | (uint32_t)p[21] << 16 | (uint32_t)p[22] << 8 | p[23];
        return true;
    }
    if (n < 4 || p[0] != 0xff || p[1] != 0xd8 || p[2] != 0xff)
        return false;
    *jpeg = true;
    for (size_t i = 2; i + 9 < n;) {
        if (p[i] != 0xff)
            return false;
        uint8_t m = p[i + 1];
        size_t len = (size_t)p[i + 2] << 8 | p[i + 3];
        if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
            *h = (uint32_t)p[i + 5] << 8 | p[i + 6];
            *w = (uint32_t)p[i + 7] << 8 | p[i + 8];
            return true;
        }
        i += 2 + len;
    }
    return false;
}

static int shot_take(snap_agent *a, const char *session, const shot_rect *clip, double scale,
                     bool beyond, int quality, shot_img *out, snap_result *r)
{
    memset(out, 0, sizeof *out);
    char *cl = NULL;
    if (clip) {
        json_w w;
        json_w_init(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, "x");
        json_w_num(&w, clip->x);
        json_w_key(&w, "y");
        json_w_num(&w, clip->y);
        json_w_key(&w, "width");
        json_w_num(&w, clip->w);
        json_w_key(&w, "height");
        json_w_num(&w, clip->h);
        json_w_key(&w, "scale");
        json_w_num(&w, scale);
        json_w_obj_end(&w);
        if (!(cl = json_w_take(&w, NULL)))
            return snap_act_fail(r, SNAP_ENOMEM, "out of memory");
    }
    char *prm = quality ? clip ? snap_act_params("sirb", "format", "jpeg", "quality", quality,
                                                 "clip", cl, "captureBeyondViewport", beyond)
                               : snap_act_params("si", "format", "jpeg", "quality", quality)
                        : clip ? snap_act_params("srb", "format", "png", "clip", cl,
                                                 "captureBeyondViewport", beyond)
                               : snap_act_params("s", "format", "png");
    free(cl);
    pcall pc;
    int rc = snap_act_call(a, session, "Page.captureScreenshot", prm, &pc);
    size_t blen = 0;
    const char *b64 = rc ? NULL : json_str(json_get(pc.rep.result, "data"), &blen);
    if (!b64) {
        rc = snap_act_fail(r, SNAP_EBROWSER, "screenshot: %s", rc ? pc.e.msg : "no data");
        snap_act_pfree(&pc);
        return rc;
    }
    size_t cap = blen / 4 * 3 + 3;
    uint8_t *img = malloc(cap ? cap : 1);
    ssize_t n = img ? base_b64_decode(b64, blen, img, cap) : -1;
    snap_act_pfree(&pc);
    if (n < 0 || !shot_dims(img, (size_t)n, &out->jpeg, &out->width, &out->height) ||
        out->jpeg != (quality != 0)) {
        bool oom = !img;
        free(img);
        return snap_act_fail(r, oom ? SNAP_ENOMEM : SNAP_EBROWSER, "screenshot: %s",
                             oom ? "out of memory" : quality ? "the browser sent no JPEG"
                                                            : "the browser sent no PNG");
    }
    out->img = img;
    out->len = (size_t)n;
    return 0;
}

/* The visual viewport vv (Page.getLayoutMetrics' cssVisualViewport) as a
 * page rectangle. */
static void shot_view(const json_val *vv, shot_rect *view)
{
    *view = (shot_rect){json_num(json_get(vv, "pageX")), json_num(json_get(vv, "pageY")),
                        snap_act_dfloor(json_num(json_get(vv, "clientWidth"))),
                        snap_act_dfloor(json_num(json_get(vv, "clientHeight")))};
}

/* Whether area lies in view (1 px of rounding aside): then it is taken as
 * the browser shows it, with the mask; else beyond the viewport. */
static bool shot_in_view(const shot_rect *area, const shot_rect *view)
{
    return view->w >= 1 && view->h >= 1 && area->x >= view->x - 1 && area->y >= view->y - 1 &&
           area->x + area->w <= view->x + view->w + 1 && area->y + area->h <= view->y + view->h + 1;
}

/* The page box of the element behind ref, in page CSS px (its border box
 * plus the scroll offset; inside out-of-process frames, plus their
 * iframes' offsets and cut to what they show): 0, or the failure. */
static int shot_ref_box(snap_agent *a, const char *ref, int *tab_id, shot_rect *box,
                        shot_rect *view, snap_result *r)
{
    target tg;
    memset(&tg, 0, sizeof tg);
    int rc = snap_act_resolve(a, ref, &tg, r);
    if (rc)
        return rc;
    session_set ss = {0};
    snap_tab *t = snap_tab_by_id(a, tg.tab);
    if (tg.tab != *tab_id) {
        /* The gate judged (and the audit names) the current tab: a ref of
         * another tab is refused, and the current tab stays as it was. */
        int cur = *tab_id;
        a->cur = cur;
        snap_act_release_all(a, &tg, &ss);
        return snap_act_fail(r, SNAP_EINVAL, "%s is in tab t%d, not the current tab t%d: "
                             "switch to it first (browser_tabs)", tg.what, tg.tab, cur);
    }
    /* An element in an out-of-process frame (another site's): its box is in
     * its frame's viewport, moved by the iframes' offsets in the page and
     * cut to what they show. */
    double ox = 0, oy = 0, clip[4] = {-1e18, -1e18, 1e18, 1e18};
    char top[SNAP_ID_MAX];
    snprintf(top, sizeof top, "%s", t ? t->session : "");
    if (!t || (strcmp(top, tg.session) != 0 &&
               (rc = snap_act_frame_origin(a, tg.tab, tg.frame, tg.what, &ox, &oy, clip, r)))) {
        snap_act_release_all(a, &tg, &ss);
        return t ? rc : snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
    }
    if (snap_shot_ref_secret(a, tg.tab, tg.frame, tg.backend, tg.session, tg.oid)) {
        /* Its box is the value: refused outright, never only masked. */
        rc = snap_act_fail(r, SNAP_EDENIED, "%s is a secret field: a screenshot of it would "
                           "show its value (the snapshot shows it without)", tg.what);
        snap_act_release_all(a, &tg, &ss);
        return rc;
    }
    pcall bm, lm;
    rc = snap_act_call(a, tg.session, "DOM.getBoxModel", snap_act_params("s", "objectId", tg.oid),
                       &bm);
    const json_val *q = rc ? NULL : json_get(json_get(bm.rep.result, "model"), "border");
    double x0 = 1e18, y0 = 1e18, x1 = -1e18, y1 = -1e18;
    size_t k = 0;
    for (const json_val *v = json_first(q); v; v = json_next(v), k++) {
        double d = json_num(v);
        if (k % 2 == 0) {
            x0 = snap_act_dmin(x0, d);
            x1 = snap_act_dmax(x1, d);
        } else {
            y0 = snap_act_dmin(y0, d);
            y1 = snap_act_dmax(y1, d);
        }
    }
    snap_act_pfree(&bm);
    x0 = snap_act_dmax(x0 + ox, clip[0]);
    y0 = snap_act_dmax(y0 + oy, clip[1]);
    x1 = snap_act_dmin(x1 + ox, clip[2]);
    y1 = snap_act_dmin(y1 + oy, clip[3]);
    if (k < 8 || x1 - x0 < 1 || y1 - y0 < 1) {
        rc = snap_act_fail(r, SNAP_ENOTVISIBLE, "%s has no box on the page to clip to "
                           "(hidden or zero size)", tg.what);
        snap_act_release_all(a, &tg, &ss);
        return rc;
    }
    double px = 0, py = 0;
    *view = (shot_rect){0, 0, 0, 0};    /* unknown: taken beyond the viewport */
    if (snap_act_call0(a, top, "Page.getLayoutMetrics", &lm) == 0) {
        const json_val *vv = json_get(lm.rep.result, "cssVisualViewport");
        px = json_num(json_get(vv, "pageX"));
        py = json_num(json_get(vv, "pageY"));
        shot_view(vv, view);
    }
    snap_act_pfree(&lm);
    snap_act_release_all(a, &tg, &ss);
    *box = (shot_rect){x0 + px, y0 + py, x1 - x0, y1 - y0};
    return 0;
}

/* Cut area at SHOT_MAX_* (a page can make a page or an element arbitrarily
 * large, and the browser fails on a huge capture): true if it was cut. */
static bool shot_cap(shot_rect *area)
{
    bool cut = false;
    if (area->h > SHOT_MAX_HEIGHT) {
        area->h = SHOT_MAX_HEIGHT;
        cut = true;
    }
    if (area->w > SHOT_MAX_WIDTH) {
        area->w = SHOT_MAX_WIDTH;
        cut = true;
    }
    return cut;
}

/* The area to take: the full page (cut at SHOT_MAX_*), the viewport (at its
 * scroll offset), or o's region; *page_h the page's height. */
static int shot_area(snap_agent *a, snap_tab *t, const snap_shot_opts *o, shot_rect *area,
                     shot_rect *view, bool *cut, double *page_h, snap_result *r)
{
    pcall lm;
    if (snap_act_call0(a, t->session, "Page.getLayoutMetrics", &lm)) {
        int rc = snap_act_fail(r, SNAP_EBROWSER, "screenshot: %s", lm.e.msg);
        snap_act_pfree(&lm);
        return rc;
    }
    const json_val *cs = json_get(lm.rep.result, "cssContentSize");
    const json_val *vv = json_get(lm.rep.result, "cssVisualViewport");
    double cw = snap_act_dceil(json_num(json_get(cs, "width")));
    double ch = snap_act_dceil(json_num(json_get(cs, "height")));
    *page_h = ch;
    shot_view(vv, view);
    if (o->w > 0 && o->h > 0)
        *area = (shot_rect){snap_act_dmax(o->x, 0), snap_act_dmax(o->y, 0), o->w, o->h};
    else if (o->full_page && cw >= 1 && ch >= 1)
        *area = (shot_rect){0, 0, cw, ch};
    else
        *area = *view;
    snap_act_pfree(&lm);
    *cut = shot_cap(area);
    if (area->w < 1 || area->h < 1)
        return snap_act_fail(r, SNAP_EINVAL, "the region to take is empty");
    return 0;
}

/* Square root by Newton's method (no libm in the link), for v > 0. */
static double shot_sqrt(double v)
{
    double x = v > 1 ? v : 1;
    for (int i = 0; i < 60; i++)
        x = (x + v / x) / 2;
    return x;
}

/* Take area at scale 1 as PNG; while over o->max_bytes, downscale (PNG
 * while the scale stays >= 0.5), then JPEG at quality 80, then 60 with
 * smaller scales. *first_len is the size of the first capture. */
static int shot_fit(snap_agent *a, snap_tab *t, const snap_shot_opts *o, const shot_rect *area,
                    bool beyond, shot_img *im, size_t *first_len, double *scale, int *quality,
                    snap_result *r)
{
    *scale = 1;
    *quality = 0;
    int rc = shot_take(a, t->session, area, 1, beyond, 0, im, r);
    if (rc)
        return rc;
    *first_len = im->len;
    for (int step = 0; o->max_bytes && im->len > o->max_bytes && step < 6; step++) {
        double s = *scale * shot_sqrt((double)o->max_bytes / (double)im->len) * 0.92;
        if (step == 0 && s >= 0.5) {
            *scale = s;
        } else if (*quality == 0) {
            *quality = 80;
        } else if (*quality == 80) {
            *quality = 60;
        } else {
            *scale = snap_act_dmax(s, 0.02);
        }
        free(im->img);
        if ((rc = shot_take(a, t->session, area, *scale, beyond, *quality, im, r)))
            return rc;
    }
    return 0;
}

/* Take area with the secret fields masked (act_shot_mask.c). Beyond the
 * viewport the overlay covers nothing out of view (and the page is laid
 * out again for the capture), so a page with a secret field with a value
 * is refused then (red team s12, W4). The fields are watched from the
 * search to after the capture, and so are the iframes of masked frames
 * found out of view: a change discards the image, taken once more, then
 * refused (W6). 0 with *im, fields[0] (masked) and fields[1] (of those,
 * in frames out of view), or the failure. */
static int shot_masked(snap_agent *a, int tab_id, const snap_shot_opts *o, const shot_rect *area,
                       bool beyond, shot_img *im, size_t *first, double *scale, int *quality,
                       int fields[2], snap_result *r)
{
    for (int tries = 0;; tries++) {
        snap_shot_mask m;
        int rc = snap_shot_mask_on(a, tab_id, !beyond, &m, r);
        if (rc)
            return rc;
        snap_tab *t = snap_tab_by_id(a, tab_id);
        if (!t)
            rc = snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
        else if (beyond && m.fields)
            rc = snap_act_fail(r, SNAP_EDENIED, "screenshot refused: the page has %d secret "
                               "field%s with a value, and a capture beyond the viewport (a full "
                               "page, or a region or element not wholly in view) cannot mask "
                               "them: the mask covers only what is in view. Take the viewport "
                               "(scrolled to the part you need) or a region inside it; the "
                               "snapshot shows the page without their values", m.fields,
                               m.fields == 1 ? "" : "s");
        else
            rc = shot_fit(a, t, o, area, beyond, im, first, scale, quality, r);
        int changed = rc ? 0 : snap_shot_mask_check(a, &m);
        snap_shot_mask_off(a, &m);
        if (rc)
            return rc;
        if (!changed) {
            fields[0] = m.fields;
            fields[1] = m.out;
            return 0;
        }
        free(im->img);
        im->img = NULL;
        if (tries)
            return snap_act_fail(r, SNAP_EDENIED, "screenshot refused: the page changed its "
                                 "secret fields (or what holds them) while the screenshot was "
                                 "taken, twice, so an image could show their values; the "
                                 "snapshot shows the page without them");
    }
}

static void shot_size(base_buf *b, size_t n)
{
    if (n >= 10 * 1024)
        base_buf_printf(b, "%zu KB", (n + 512) / 1024);
    else
        base_buf_printf(b, "%zu bytes", n);
}

static int screenshot_run(snap_agent *a, const snap_shot_opts *o, snap_result *r)
{
    snap_tab *t;
    int rc = snap_act_begin(a, NULL, &t, r);
    if (rc)
        return rc;
    shot_rect area, view;
    bool cut = false, clipped = (o->ref && *o->ref) || (o->w > 0 && o->h > 0);
    double page_h = 0;
    if (o->ref && *o->ref) {
        int tab_id = t->id;
        if ((rc = shot_ref_box(a, o->ref, &tab_id, &area, &view, r)))
            return rc;
        t = snap_tab_by_id(a, tab_id);
        if (!t)
            return snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
        cut = shot_cap(&area);
    } else if ((rc = shot_area(a, t, o, &area, &view, &cut, &page_h, r))) {
        return rc;
    }
    bool full = o->full_page && !clipped;
    shot_img im;
    size_t first = 0;
    double scale = 1;
    int quality = 0, fields[2] = {0, 0};
    /* The secret fields with a value are masked for the capture only. */
    int tab_id = t->id;
    rc = shot_masked(a, tab_id, o, &area, !shot_in_view(&area, &view), &im, &first, &scale,
                     &quality, fields, r);
    if (rc)
        return rc;
    if (!(t = snap_tab_by_id(a, tab_id))) {
        free(im.img);
        return snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
    }
    r->image = im.img;
    r->image_len = im.len;
    snap_obs_issue(a, t, r->obs);
    base_buf b = {0};
    base_buf_printf(&b, "screenshot of tab t%d (%s): %ux%u %s", t->id,
                    o->ref && *o->ref ? "element" : clipped ? "region" : full ? "full page"
                                                                             : "viewport",
                    im.width, im.height, im.jpeg ? "JPEG" : "PNG");
    if (quality)
        base_buf_printf(&b, " q%d", quality);
    base_buf_printf(&b, ", ");
    shot_size(&b, im.len);
    if (o->max_bytes && (scale < 1 || quality)) {
        base_buf_printf(&b, " (cap ");
        shot_size(&b, o->max_bytes);
        base_buf_printf(&b, "; the %.0fx%.0f PNG was ", area.w, area.h);
        shot_size(&b, first);
        if (scale < 1)
            base_buf_printf(&b, "; downscaled %.2fx", scale);
        base_buf_printf(&b, ")");
    }
    if (o->max_bytes && im.len > o->max_bytes)
        base_buf_printf(&b, "; still over the cap: take a region or an element (ref)");
    if (cut && o->ref && *o->ref)
        base_buf_printf(&b, "; the element is larger, cut to its top left 4096x16384 px "
                        "(a region shows the rest)");
    else if (cut)
        base_buf_printf(&b, "; the page is larger, cut at 4096x16384 px (it is %.0f px high: "
                        "a region from y=16384 shows the rest)", page_h);
    if (fields[0])
        base_buf_printf(&b, "; %d secret field%s masked (grey: values never shown)", fields[0],
                        fields[0] == 1 ? "" : "s");
    if (fields[1])
        base_buf_printf(&b, "; %d of them in frames out of view", fields[1]);
    base_buf_printf(&b, " [obs %s]", r->obs);
    json_w w;
    snap_result_begin(&w, 0);
    json_w_key(&w, "tab");
    json_w_int(&w, t->id);
    json_w_key(&w, "full_page");
    json_w_bool(&w, full);
    json_w_key(&w, "width");
    json_w_uint(&w, im.width);
    json_w_key(&w, "height");
    json_w_uint(&w, im.height);
    json_w_key(&w, "format");
    json_w_str(&w, im.jpeg ? "jpeg" : "png");
    json_w_key(&w, "bytes");
    json_w_uint(&w, (uint64_t)im.len);
    if (o->max_bytes) {
        json_w_key(&w, "original_bytes");
        json_w_uint(&w, (uint64_t)first);
        json_w_key(&w, "scale");
        json_w_num(&w, scale);
        if (quality) {
            json_w_key(&w, "quality");
            json_w_int(&w, quality);
        }
    }
    json_w_key(&w, "masked");
    json_w_int(&w, fields[0]);
    if (cut) {
        json_w_key(&w, "cut");
        json_w_bool(&w, true);
    }
    return snap_act_result_end(&w, &b, r);
}

int snap_screenshot_with(snap_agent *a, const snap_shot_opts *o, snap_result *r)
{
    snap_gated gg;
    int rc = snap_act_gate_page(a, "screenshot", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    rc = screenshot_run(a, o, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

int snap_screenshot(snap_agent *a, bool full_page, snap_result *r)
{
    snap_shot_opts o = {0};
    o.full_page = full_page;
    return snap_screenshot_with(a, &o, r);
}

/* ---- crops of many elements under one secret-field search ---- */

static void crops_free(snap_shot_crop *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(out[i].img);
        out[i].img = NULL;
        out[i].len = 0;
    }
}

/* One element's crop while the mask m is on (screenshot_run's rules: a
 * capture beyond the viewport is refused when the page has a secret field
 * with a value). 0 with *im, or the code. */
static int crop_one(snap_agent *a, int tab_id, const char *ref, size_t max_bytes,
                    const snap_shot_mask *m, shot_img *im)
{
    snap_result r;
    memset(&r, 0, sizeof r);
    shot_rect area, view;
    int tid = tab_id;
    int rc = shot_ref_box(a, ref, &tid, &area, &view, &r);
    snap_tab *t = rc ? NULL : snap_tab_by_id(a, tid);
    if (!rc && !t)
        rc = SNAP_ENOTAB;
    if (!rc) {
        shot_cap(&area);
        bool beyond = !shot_in_view(&area, &view);
        snap_shot_opts o = {0};
        o.max_bytes = max_bytes;
        size_t first = 0;
        double scale = 1;
        int quality = 0;
        rc = beyond && m->fields ? SNAP_EDENIED
                                 : shot_fit(a, t, &o, &area, beyond, im, &first, &scale,
                                            &quality, &r);
    }
    snap_result_free(&r);
    return rc;
}

int snap_screenshot_refs(snap_agent *a, const char *const *refs, size_t n, size_t max_bytes,
                         snap_shot_crop *out, snap_result *r)
{
    memset(out, 0, n * sizeof *out);
    snap_gated gg;
    int rc = snap_act_gate_page(a, "screenshot", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    snap_tab *t = NULL;
    rc = snap_act_begin(a, NULL, &t, r);
    int tab_id = t ? t->id : 0;
    for (int tries = 0; !rc; tries++) {
        snap_shot_mask m;
        /* Crops with a secret field on the page are taken in view only. */
        if ((rc = snap_shot_mask_on(a, tab_id, true, &m, r)))
            break;
        for (size_t i = 0; i < n; i++) {
            shot_img im;
            memset(&im, 0, sizeof im);
            out[i].code = crop_one(a, tab_id, refs[i], max_bytes, &m, &im);
            out[i].img = out[i].code ? NULL : im.img;
            out[i].len = out[i].code ? 0 : im.len;
            if (out[i].code)
                free(im.img);
        }
        int changed = snap_shot_mask_check(a, &m);
        snap_shot_mask_off(a, &m);
        if (!changed)
            break;
        crops_free(out, n);
        if (tries)
            rc = snap_act_fail(r, SNAP_EDENIED, "screenshots refused: the page changed its "
                               "secret fields (or what holds them) while the crops were taken, "
                               "twice, so an image could show their values");
    }
    if (rc)
        crops_free(out, n);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}
