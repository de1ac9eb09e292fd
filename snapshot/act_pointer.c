/*
 * act_pointer.c — pointer actions: click and scroll.
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

/* ---- click ---- */

snap_tab *snap_act_gate_begin(snap_agent *a, snap_gated *g, snap_result *r)
{
    memset(g, 0, sizeof *g);
    memset(r, 0, sizeof *r);
    snap_sync(a);
    return snap_tab_current(a);
}

/* Ask the gate about a page-level action on the current tab. With no open
 * tab there is nothing to act on: the action fails by itself, before
 * sending anything. */
int snap_act_gate_page(snap_agent *a, const char *tool, bool state_change, bool submit,
                       const act_dialog *dialog, const char *obs, snap_gated *g,
                       snap_result *r)
{
    snap_tab *t = snap_act_gate_begin(a, g, r);
    if (!t)
        return 0;
    snap_gate_in gi = {.tool = tool, .tab = t->id, .state_change = state_change,
                       .submit = submit, .dialog = dialog ? dialog->message : NULL,
                       .dialog_url = dialog ? dialog->url : NULL, .obs = obs,
                       .text = dialog ? dialog->text : NULL};
    return snap_gate_ask(a, &gi, g, r);
}

/* A hover names the controls it brought into view, and so does a click
 * whose recorder saw nodes added or shown (a menu, a panel): at most this
 * many, on pages whose last snapshot had at most HOVER_REPORT_LINES lines. */
#define HOVER_REPORT_MAX 8
#define HOVER_REPORT_LINES 4000

enum { PT_CLICK, PT_HOVER, PT_DBLCLICK };

/* Input for an out-of-process frame is routed by the browser from the
 * frame's last composited layout: wait until tg's frame, if it is one, has
 * produced two animation frames, so a frame that just loaded or moved
 * takes the input where the checks found its element. */
static void oopif_drawn(snap_agent *a, const target *tg)
{
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    snap_frame *tf = t ? snap_frame_find(t, tg->frame) : NULL;
    if (!tf || !tf->oopif)
        return;
    pcall pr;
    snap_act_call(a, tg->session, "Runtime.evaluate",
                  snap_act_params("sbb", "expression", snap_js_raf2_expr, "awaitPromise", true,
                                  "returnByValue", true),
                  &pr);
    snap_act_pfree(&pr);
}

/* After a scroll, or a click that moved within the page (an anchor): the
 * heading of the section now in view, as page text, into rp ("now in
 * view: h2 "String Methods""; structured in_view {tag, text}), or, when
 * that section's heading is above the view and no other is on screen, "in
 * the section under h2 "..." (its heading is above the view)" (structured
 * section {tag, text}): a heading out of view is never said to be in it.
 * Read in cdpgate's isolated world of the main frame; nothing when it
 * cannot be. */
static void report_in_view(snap_agent *a, int tab_id, act_report *rp)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || !t->nframes)
        return;
    char session[SNAP_ID_MAX], fid[SNAP_ID_MAX];
    snprintf(session, sizeof session, "%s", t->session);
    snprintf(fid, sizeof fid, "%s", t->frames[0].id);
    int64_t world = snap_frame_world(a, tab_id, fid);
    if (world <= 0)
        return;
    pcall pc;
    if (snap_act_call(a, session, "Runtime.evaluate",
                      snap_act_params("sbi", "expression", snap_js_in_view_expr, "returnByValue",
                                      true, "contextId", (int)world),
                      &pc) == 0) {
        const json_val *v = snap_act_fn_value(&pc);
        const char *tag = json_get_str(v, "tag"), *text = json_get_str(v, "text");
        bool above = json_bool(json_get(v, "above"));
        if (tag && text && *text) {
            base_buf_printf(&rp->page, "%s%s", rp->page.len ? "\n" : "",
                            above ? "in the section under " : "now in view: ");
            snap_act_sb_page(&rp->page, tag, 8, 0);
            base_buf_put(&rp->page, " ", 1);
            snap_act_sb_quoted(&rp->page, text, 120);
            if (above)
                base_buf_puts(&rp->page, " (its heading is above the view)");
            json_w_key(&rp->extra, above ? "section" : "in_view");
            json_w_obj_begin(&rp->extra);
            json_w_key(&rp->extra, "tag");
            snap_json_page(&rp->extra, tag);
            json_w_key(&rp->extra, "text");
            snap_json_page(&rp->extra, text);
            json_w_obj_end(&rp->extra);
            rp->has_extra = true;
        }
    }
    snap_act_pfree(&pc);
}

/* After a pointer action on tab tab_id: the controls that appeared since
 * the last snapshot (before, nbefore: its controls), for a hover always and
 * for a click only when its recorder saw something appear (one build);
 * after a click that moved within the page, the section now in view. */
static void report_appeared(snap_agent *a, int tab_id, const snap_settled *st, bool hover,
                            const uint64_t *before, size_t nbefore, act_report *rp)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (before && t && snap_act_page_usable(a, tab_id, st) && !st->nnew && (hover || rp->added)) {
        char *shown = snap_controls_new(a, t, before, nbefore, HOVER_REPORT_MAX);
        if (shown) {
            base_buf_printf(&rp->page, "%s%s\n", rp->page.len ? "\n" : "",
                            hover ? "now shown:" : "new controls:");
            base_buf_put(&rp->page, shown, strlen(shown));
            free(shown);
        }
    }
    t = snap_tab_by_id(a, tab_id);
    if (!hover && t && t->inpage != t->inpage_mark && snap_act_page_usable(a, tab_id, st))
        report_in_view(a, tab_id, rp);
}

/* Click the ref's element, double-click it, or (hover) move the mouse over
 * it. A double click is a click to the gate (tool "click": the same checks
 * and the same decision), shown to the human and audited as "dblclick"; its
 * second click goes only where the first went (snap_act_dbl_click). */
static int pointer_run(snap_agent *a, const char *ref, const char *obs, int kind,
                       snap_result *r)
{
    bool hover = kind == PT_HOVER;
    const char *tool = hover ? "hover" : "click";
    uint64_t *before = NULL;     /* the controls of the last snapshot */
    size_t nbefore = 0;
    snap_tab *t;
    int rc = snap_act_begin(a, obs, &t, r);
    if (rc)
        return rc;
    int64_t deadline = base_now_ms() + a->o.timeout_ms;
    target tg;
    if ((rc = snap_act_resolve(a, ref, &tg, r)))
        return rc;
    snap_gated gg = {0};
    session_set ss = {0};
    snap_act_sessions_note(&ss, tg.session);
    /* The recorder and what the gate needs of the element are read in the
     * same round trip as the checks. */
    pcall ob, fc;
    snap_act_psend_p(a, tg.session, "Runtime.callFunctionOn",
                     snap_act_fn_params(tg.oid, snap_js_observe_fn, NULL, false, false), &ob);
    snap_act_psend_p(a, tg.session, "Runtime.callFunctionOn", snap_gate_facts_params(tg.oid), &fc);
    located loc;
    /* A disabled control can be hovered (its tooltip may say why). */
    rc = snap_act_locate(a, tg.tab, tg.frame, tg.oid, tg.backend, tg.what, !hover, &ss, &loc, r);
    snap_act_pwait(a, &ob);
    snap_act_pwait(a, &fc);
    char obs_oid[SNAP_ID_MAX] = "";
    if (snap_act_fn_object(&ob) && strlen(snap_act_fn_object(&ob)) < SNAP_ID_MAX)
        snprintf(obs_oid, sizeof obs_oid, "%s", snap_act_fn_object(&ob));
    snap_act_pfree(&ob);
    if (rc) {
        snap_act_pfree(&fc);
        goto done;
    }
    if (hover && loc.option) {
        snap_act_pfree(&fc);
        rc = snap_act_fail(r, SNAP_EINVAL, "%s is an option of a closed select: hover the select "
                           "itself, or choose with browser_select", tg.what);
        goto done;
    }
    /* Hovering reads (like scrolling): the page's own hover handlers run,
     * as they do whenever a pointer passes. */
    snap_gate_in gi = {
        .tool = tool,
        .tab = tg.tab,
        .frame = tg.frame,
        .session = tg.session,
        .oid = tg.oid,
        .ref_n = tg.n,
        .facts = json_is(snap_act_fn_value(&fc), JSON_OBJECT) ? snap_act_fn_value(&fc) : NULL,
        .state_change = !hover,
        .dbl = kind == PT_DBLCLICK,
        .obs = obs};
    rc = snap_gate_ask(a, &gi, &gg, r);
    snap_act_pfree(&fc);
    if (rc || (rc = snap_act_recheck_target(a, &gg, tool, &tg, &ss, &loc, r)))
        goto done;
    if (!hover) {
        snap_act_secret_form_known(a, tg.tab, tg.frame, tg.session, tg.oid, &loc.sf);
        snap_act_secret_form_arm(a, &loc.sf);
    }
    t = snap_tab_by_id(a, tg.tab);
    uint64_t nav0 = t ? t->nav : 0;
    size_t tabs0 = a->ntabs;
    bool dialog = false;
    char second[600] = "";      /* a double click's second click not sent: why */
    /* A hover is for what it shows, and a click may open a menu: the
     * controls of the last snapshot are noted (from the cache, no round
     * trip), to name the ones that appear (not on huge pages, where the
     * rebuild would cost more than the agent's own next snapshot). */
    if (t)
        before = snap_controls_now(t, HOVER_REPORT_LINES, &nbefore);
    if (!loc.option)
        oopif_drawn(a, &tg);
    if (loc.option) {
        pcall po;
        rc = snap_act_call(a, tg.session, "Runtime.callFunctionOn",
                           snap_act_fn_params(tg.oid, snap_js_pick_option_fn, NULL, true, false),
                           &po);
        snap_act_pfree(&po);
        if (rc) {
            rc = snap_act_fail(r, SNAP_EBROWSER, "%s: %s", tg.what, po.e.msg);
            goto done;
        }
    } else if ((rc = hover ? snap_act_mouse_move(a, tg.tab, loc.x, loc.y, &dialog, r)
                : kind == PT_DBLCLICK ? snap_act_dbl_click(a, &gg, &tg, &loc, nav0, &ss, &dialog,
                                                           second, sizeof second, r)
                : gg.d.confirmed ? snap_act_judged_click(a, &tg, &loc, &ss, &dialog, r)
                : snap_act_mouse_click(a, tg.tab, loc.x, loc.y, false, &dialog, r))) {
        goto done;
    }
    /* The page reports its next frame: with nothing else happening, the
     * click has settled once that frame is in (see snap_settle_frame). */
    uint64_t frame_call = 0;
    if (!dialog) {
        pcall pf;
        snap_act_psend_p(a, tg.session, "Runtime.evaluate",
                         snap_act_params("sbb", "expression", snap_js_frame_expr, "awaitPromise",
                                         true, "returnByValue", true),
                         &pf);
        frame_call = pf.sent ? pf.id : 0;
    }
    char did[1200];
    snprintf(did, sizeof did, "%s %s", hover ? "hovered over" :
             kind == PT_DBLCLICK && !*second ? "double-clicked" : "clicked", tg.what);
    snap_settled st;
    if ((rc = snap_act_settle_after(a, tg.tab, nav0, tabs0, deadline, frame_call, did, &st, r)))
        goto done;
    act_report rp;
    snap_act_report_init(&rp, kind == PT_DBLCLICK ? "dblclick" : tool, tg.ref);
    rp.sf = loc.sf;
    /* The states are the element's the click acts on (a label's text:
     * its control's), as the gate judged it. */
    if (snap_act_page_usable(a, tg.tab, &st))
        snap_act_collect_changes(a, tg.session, obs_oid,
                                 gg.acted_oid[0] && strcmp(gg.acted_session, tg.session) == 0
                                     ? gg.acted_oid : tg.oid, &rp);
    report_appeared(a, tg.tab, &st, hover, before, nbefore, &rp);
    free(before);
    before = NULL;
    /* The element's states after a click (a hover changes none of its own
     * that the agent asked for: what appeared is in the page detail). */
    char states[160];
    snap_act_states_line(&rp, states, sizeof states);
    if (states[0] && !hover)
        snprintf(did + strlen(did), sizeof did - strlen(did), " (%s)", states);
    snap_act_dbl_note(&rp, did, sizeof did, second);
    rc = snap_act_finish(a, tg.tab, did, &st, &rp, r);
    snap_act_report_free(&rp);
done:
    free(before);
    snap_gate_done(a, &gg, rc, r);
    snap_act_release_all(a, &tg, &ss);
    return rc;
}

int snap_click(snap_agent *a, const char *ref, const char *obs, snap_result *r)
{
    return pointer_run(a, ref, obs, PT_CLICK, r);
}

int snap_dblclick(snap_agent *a, const char *ref, const char *obs, snap_result *r)
{
    return pointer_run(a, ref, obs, PT_DBLCLICK, r);
}

int snap_hover(snap_agent *a, const char *ref, const char *obs, snap_result *r)
{
    return pointer_run(a, ref, obs, PT_HOVER, r);
}

/* ---- scroll ---- */

static int scroll_eval(snap_agent *a, int tab_id, int d, pcall *pc)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t) {
        memset(pc, 0, sizeof *pc);
        snprintf(pc->e.msg, sizeof pc->e.msg, "the tab closed");
        return pc->rc = CDP_EDETACHED;
    }
    char expr[SNAP_JS_SCROLL_CAP];
    snprintf(expr, sizeof expr, "%s(%d)", snap_js_scroll_expr, d);
    return snap_act_call(a, t->session, "Runtime.evaluate",
                         snap_act_params("sb", "expression", expr, "returnByValue", true), pc);
}

static int scroll_run(snap_agent *a, const char *ref, const char *direction, snap_result *r)
{
    snap_tab *t;
    int rc = snap_act_begin(a, NULL, &t, r);
    if (rc)
        return rc;
    int64_t deadline = base_now_ms() + a->o.timeout_ms;
    int d = 0;
    target tg;
    memset(&tg, 0, sizeof tg);
    char did[900];
    session_set ss = {0};
    if (ref && *ref) {
        if ((rc = snap_act_resolve(a, ref, &tg, r)))
            return rc;
        t = snap_tab_by_id(a, tg.tab);
        const char *what = tg.what;
        pcall sc;
        rc = snap_act_call(a, tg.session, "DOM.scrollIntoViewIfNeeded",
                           snap_act_params("s", "objectId", tg.oid), &sc);
        if (rc) {
            rc = snap_act_fail(r, rc == CDP_EPROTOCOL ? SNAP_ENOTVISIBLE : SNAP_EBROWSER,
                               "%s cannot be scrolled into view: %s", what, sc.e.msg);
            snap_act_pfree(&sc);
            snap_act_release_all(a, &tg, &ss);
            return rc;
        }
        snap_act_pfree(&sc);
        /* It may have scrolled a box inside the page: the cached snapshot's
         * layout boxes moved (a scroll of the page keeps them). */
        a->changes++;
        snprintf(did, sizeof did, "scrolled %s into view", what);
    } else {
        static const char *const DIRS[] = {"down", "up", "top", "bottom"};
        const char *dir = direction && *direction ? direction : "down";
        for (int i = 0; i < 4; i++)
            if (snap_act_name_eq(dir, strlen(dir), DIRS[i]))
                d = i + 1;
        if (!d)
            return snap_act_fail(r, SNAP_EINVAL, "scroll direction '%.20s' is not one of down, up, "
                                 "top, bottom (or give a ref to scroll it into view)", dir);
        snprintf(did, sizeof did, "scrolled %s", DIRS[d - 1]);
    }
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    size_t tabs0 = a->ntabs;
    pcall sv;
    rc = scroll_eval(a, tab_id, d, &sv);
    const json_val *v = snap_act_fn_value(&sv);
    int64_t h0 = json_get_int(v, "h", 0), y0 = json_get_int(v, "y0", 0);
    int64_t y1 = json_get_int(v, "y", 0);
    const char *in0 = json_get_str(v, "inner");
    if (in0 && *in0)
        a->changes++;       /* a box inside the page scrolled: its layout moved */
    snap_act_pfree(&sv);
    if (rc) {
        rc = snap_act_fail(r, SNAP_EBROWSER, "scroll: %s", sv.e.msg);
        snap_act_release_all(a, &tg, &ss);
        return rc;
    }
    /* The page's scroll handlers run in its next frame (an infinite list
     * starts its fetch there): the quiet window starts after that frame,
     * not after the scroll call, or a busy machine settles first. */
    t = snap_tab_by_id(a, tab_id);
    if (t && !t->closed && !t->dialog_open) {
        pcall fw;
        snap_act_call(a, t->session, "Runtime.evaluate",
                      snap_act_params("sbb", "expression", snap_js_scroll_frame_expr,
                                      "awaitPromise", true, "returnByValue", true),
                      &fw);
        snap_act_pfree(&fw);
    }
    snap_settled st;
    if ((rc = snap_act_settle(a, tab_id, nav0, tabs0, deadline, did, &st, r))) {
        snap_act_release_all(a, &tg, &ss);
        return rc;
    }
    act_report rp;
    bool in_view = false;
    snap_act_report_init(&rp, "scroll", ref && *ref ? ref : NULL);
    t = snap_tab_by_id(a, tab_id);
    if (snap_act_page_usable(a, tab_id, &st) && scroll_eval(a, tab_id, 0, &sv) == 0) {
        v = snap_act_fn_value(&sv);
        int64_t y = json_get_int(v, "y", 0), h = json_get_int(v, "h", 0);
        int64_t vh = json_get_int(v, "vh", 0);
        char inner[128];
        snap_act_pg(inner, sizeof inner, json_get_str(v, "inner") ? json_get_str(v, "inner") : "");
        size_t len = strlen(did);
        snprintf(did + len, sizeof did - len, "%s, now at %lld of %lld px (viewport %lld px%s%s)"
                 "%s", d && y == y0 && y1 == y0 ? " (it was already there)" : "",
                 (long long)y, (long long)h, (long long)vh, *inner ? ", in " : "", inner,
                 y + vh >= h - 1 ? " at the bottom" : y <= 0 ? " at the top" : "");
        if (h != h0 && h0) {
            len = strlen(did);
            snprintf(did + len, sizeof did - len, "; the page grew from %lld to %lld px",
                     (long long)h0, (long long)h);
        }
        json_w_key(&rp.extra, "y");
        json_w_int(&rp.extra, y);
        json_w_key(&rp.extra, "height");
        json_w_int(&rp.extra, h);
        json_w_key(&rp.extra, "viewport");
        json_w_int(&rp.extra, vh);
        rp.has_extra = true;
        in_view = !*inner;      /* the page scrolled, not an inner box */
    }
    snap_act_pfree(&sv);
    if (in_view)
        report_in_view(a, tab_id, &rp);
    rc = snap_act_finish(a, tab_id, did, &st, &rp, r);
    snap_act_report_free(&rp);
    snap_act_release_all(a, &tg, &ss);
    return rc;
}

int snap_scroll(snap_agent *a, const char *ref, const char *direction, snap_result *r)
{
    snap_gated gg;
    int rc = snap_act_gate_page(a, "scroll", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    rc = scroll_run(a, ref, direction, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}
