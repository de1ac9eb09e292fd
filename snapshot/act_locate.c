/*
 * act_locate.c — locating an element for input: scrolling it into view, its box in
 * the top-level viewport across frames, and actionability (visible,
 * enabled, not covered, stable).
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

/* Hit-test (x, y) in session viewport coordinates: the topmost node's
 * backend id and frame. DOM.getNodeForLocation takes document coordinates,
 * so the session's scroll offset (sx, sy: cssLayoutViewport pageX/pageY) is
 * added. 0 or a CDP error. */
static int hit_test(snap_agent *a, const char *session, int x, int y, double sx, double sy,
                    int *backend, char frame[SNAP_ID_MAX])
{
    pcall pc;
    int dx = (int)snap_act_dfloor(x + sx), dy = (int)snap_act_dfloor(y + sy);
    int rc = snap_act_call(
        a, session, "DOM.getNodeForLocation",
        snap_act_params("iib", "x", dx, "y", dy, "includeUserAgentShadowDOM", false), &pc);
    *backend = rc ? 0 : (int)json_get_int(pc.rep.result, "backendNodeId", 0);
    snprintf(frame, SNAP_ID_MAX, "%s", rc ? "" : (json_get_str(pc.rep.result, "frameId")
                                                   ? json_get_str(pc.rep.result, "frameId")
                                                   : ""));
    snap_act_pfree(&pc);
    return rc;
}

/* Role and name of a node as the accessibility tree has them; role falls
 * back to the tag name for generic containers. */
void snap_act_ax_role_name(const json_val *ax, const json_val *desc, char *role, size_t rcap,
                           char *name, size_t ncap)
{
    const json_val *n0 = json_at(json_get(ax, "nodes"), 0);
    const char *ro = json_get_str(json_get(n0, "role"), "value");
    const char *nm = json_get_str(json_get(n0, "name"), "value");
    const char *tag = json_get_str(json_get(desc, "node"), "localName");
    if (!ro || !*ro || strcmp(ro, "generic") == 0 || strcmp(ro, "none") == 0 ||
        strcmp(ro, "GenericContainer") == 0 || json_bool(json_get(n0, "ignored")))
        ro = tag && *tag ? tag : "element";
    snprintf(role, rcap, "%s", ro);
    snprintf(name, ncap, "%s", nm ? nm : "");
}

/* What covers an element: the covering node, the open dialog and controls
 * in it, each with a ref (n, 0 when it could not be given one). */
typedef struct {
    uint32_t n;
    char role[32], name[200];
} covered_item;

/* One covered_item as {"ref","role","name"}. */
static void covered_item_put(json_w *w, const covered_item *it)
{
    char ref[16];
    snprintf(ref, sizeof ref, "e%u", it->n);
    json_w_obj_begin(w);
    json_w_key(w, "ref");
    json_w_str(w, ref);
    json_w_key(w, "role");
    snap_json_page(w, it->role);
    json_w_key(w, "name");
    snap_json_page(w, it->name);
    json_w_obj_end(w);
}

/* The structured result of SNAP_ECOVERED: the covering element and the
 * controls, each with a ref; r->text is its message. */
static void covered_structured(const covered_item *found, int count, snap_result *r)
{
    json_w w;
    snap_result_begin(&w, SNAP_ECOVERED);
    json_w_key(&w, "message");
    snap_json_page(&w, r->text ? r->text : "");
    for (int i = 0; i < count && i < 2; i++) {
        if (!found[i].n)
            continue;
        json_w_key(&w, i == 0 ? "covered_by" : "open_dialog");
        covered_item_put(&w, &found[i]);
    }
    json_w_key(&w, "controls");
    json_w_arr_begin(&w);
    for (int i = 2; i < count; i++) {
        if (!found[i].n)
            continue;
        covered_item_put(&w, &found[i]);
    }
    json_w_arr_end(&w);
    snap_result_set(&w, r);
}

/* Fail r with SNAP_ECOVERED, naming what covers `what` (found[0]), the open
 * dialog (found[1]) and the controls in it, as page content. */
static void covered_fail(snap_agent *a, const char *what, const covered_item *found, int count,
                         snap_result *r)
{
    base_buf txt = {0};
    int nctl = 0;
    for (int i = 0; i < count; i++) {
        if (!found[i].n)
            continue;
        const char *lead = i == 0 ? "covered by: " : i == 1 ? "\nopen dialog: "
                         : nctl++ ? ", " : "\ncontrols: ";
        base_buf_printf(&txt, "%s", lead);
        snap_act_sb_page(&txt, found[i].role, 32, 0);
        if (found[i].name[0]) {
            base_buf_put(&txt, " ", 1);
            snap_act_sb_quoted(&txt, found[i].name, 80);
        }
        base_buf_printf(&txt, " [e%u]", found[i].n);
    }
    snap_act_fail(r, SNAP_ECOVERED, "%s is covered by another element, so a click would land on "
                  "that instead; close or answer it first, then try again.\n<<<page-content "
                  "nonce=%s>>>\n%s\n<<<end page-content nonce=%s>>>", what, a->nonce,
                  txt.s ? txt.s : "", a->nonce);
    free(txt.s);
    covered_structured(found, count, r);
}

/* Fail with SNAP_ECOVERED: the element `what` (objectId target_oid in
 * session, may be NULL when the covered thing is an iframe) is covered by
 * the node hit_backend in frame hit_frame; name it and the controls in it
 * with refs of their own. world: cdpgate's isolated world the hit node is
 * resolved into (target_oid's, so the two meet in one script). */
static int report_covered(snap_agent *a, int tab_id, const char *session, int64_t world,
                          int hit_backend, const char *hit_frame, const char *target_oid,
                          const char *what, session_set *ss, snap_result *r)
{
    snap_act_sessions_note(ss, session);
    snap_tab *t = snap_tab_by_id(a, tab_id);
    snap_frame *hf = t ? snap_frame_find(t, hit_frame) : NULL;
    for (size_t i = 0; t && !hf && i < t->nframes; i++)
        if (strcmp(t->frames[i].session, session) == 0 && !t->frames[i].gone)
            hf = &t->frames[i];
    /* Copies: the frame array may move during the calls below. */
    char hf_id[SNAP_ID_MAX] = "", hf_loader[SNAP_ID_MAX] = "";
    if (hf) {
        snprintf(hf_id, sizeof hf_id, "%s", hf->id);
        snprintf(hf_loader, sizeof hf_loader, "%s", hf->loader);
    }
    pcall pc;
    memset(&pc, 0, sizeof pc);
    int rc = world <= 0 ? -1 : snap_act_call(
        a, session, "DOM.resolveNode",
        snap_act_params("isi", "backendNodeId", hit_backend, "objectGroup", ACT_GROUP,
                        "executionContextId", (int)world), &pc);
    char hit_oid[SNAP_ID_MAX] = "";
    if (rc == 0)
        snprintf(hit_oid, sizeof hit_oid, "%s",
                 json_get_str(json_get(pc.rep.result, "object"), "objectId")
                 ? json_get_str(json_get(pc.rep.result, "object"), "objectId") : "");
    snap_act_pfree(&pc);
    enum { NMAX = 6 };
    char oids[NMAX][SNAP_ID_MAX];
    int count = 0;
    if (*hit_oid) {
        char *args = target_oid ? snap_act_arg_obj(target_oid) : NULL;
        rc = snap_act_call(
            a, session, "Runtime.callFunctionOn",
            snap_act_fn_params(hit_oid, snap_js_cover_fn, args ? args : "[]", false, false), &pc);
        free(args);
        const char *arr = snap_act_fn_object(&pc);
        pcall props;
        memset(&props, 0, sizeof props);
        if (arr &&
            snap_act_call(a, session, "Runtime.getProperties",
                          snap_act_params("sb", "objectId", arr, "ownProperties", true),
                          &props) == 0) {
            for (int i = 0; i < NMAX; i++) {
                char idx[8];
                snprintf(idx, sizeof idx, "%d", i);
                oids[i][0] = 0;
                for (const json_val *pr = json_first(json_get(props.rep.result, "result")); pr;
                     pr = json_next(pr)) {
                    const char *nm = json_get_str(pr, "name");
                    const char *o = json_get_str(json_get(pr, "value"), "objectId");
                    if (nm && strcmp(nm, idx) == 0 && o && strlen(o) < SNAP_ID_MAX)
                        snprintf(oids[i], SNAP_ID_MAX, "%s", o);
                }
                count = i + 1;
            }
        }
        snap_act_pfree(&props);
        snap_act_pfree(&pc);
    }
    /* Backend ids, roles and names of what was found, in one round trip. */
    pcall d[NMAX], x[NMAX];
    for (int i = 0; i < count; i++) {
        if (!oids[i][0])
            continue;
        snap_act_psend_p(a, session, "DOM.describeNode", snap_act_params("s", "objectId", oids[i]),
                         &d[i]);
        snap_act_psend_p(a, session, "Accessibility.getPartialAXTree",
                         snap_act_params("sb", "objectId", oids[i], "fetchRelatives", false),
                         &x[i]);
    }
    covered_item found[NMAX];
    memset(found, 0, sizeof found);
    for (int i = 0; i < count; i++) {
        if (!oids[i][0])
            continue;
        snap_act_pwait(a, &d[i]);
        snap_act_pwait(a, &x[i]);
        int be = (int)json_get_int(json_get(d[i].rep.result, "node"), "backendNodeId", 0);
        snap_act_ax_role_name(x[i].rep.result, d[i].rep.result, found[i].role, sizeof found[i].role,
                              found[i].name, sizeof found[i].name);
        snap_act_pfree(&d[i]);
        snap_act_pfree(&x[i]);
        if (be && hf_id[0])
            found[i].n = snap_ref_for(a, tab_id, hf_id, hf_loader, be, found[i].role,
                                      found[i].name);
    }
    if (!found[0].n)
        return snap_act_fail(r, SNAP_ECOVERED, "%s is covered by another element at the click "
                             "point (it could not be described); close what is on top, take a "
                             "snapshot and try again", what);
    covered_fail(a, what, found, count, r);
    return SNAP_ECOVERED;
}

/* The first content quad with an area, clipped to the viewport (vw x vh);
 * its centre in *x, *y. False when there is none. */
static bool quad_point(const json_val *quads, double vw, double vh, int *x, int *y)
{
    for (const json_val *q = json_first(quads); q; q = json_next(q)) {
        if (json_len(q) != 8)
            continue;
        double p[8];
        int i = 0;
        for (const json_val *v = json_first(q); v && i < 8; v = json_next(v))
            p[i++] = json_num(v);
        double area = 0;
        for (int k = 0; k < 4; k++) {
            int n = (k + 1) % 4;
            area += p[2 * k] * p[2 * n + 1] - p[2 * n] * p[2 * k + 1];
        }
        if ((area < 0 ? -area : area) / 2 < 1)
            continue;
        double x0 = p[0], x1 = p[0], y0 = p[1], y1 = p[1];
        for (int k = 1; k < 4; k++) {
            x0 = snap_act_dmin(x0, p[2 * k]);
            x1 = snap_act_dmax(x1, p[2 * k]);
            y0 = snap_act_dmin(y0, p[2 * k + 1]);
            y1 = snap_act_dmax(y1, p[2 * k + 1]);
        }
        if (vw > 0 && vh > 0) {
            x0 = snap_act_dmax(x0, 0);
            y0 = snap_act_dmax(y0, 0);
            x1 = snap_act_dmin(x1, vw);
            y1 = snap_act_dmin(y1, vh);
            if (x1 - x0 < 1 || y1 - y0 < 1)
                continue;
        }
        *x = (int)snap_act_dfloor((x0 + x1) / 2);
        *y = (int)snap_act_dfloor((y0 + y1) / 2);
        return true;
    }
    return false;
}

static snap_frame *frame_parent(snap_tab *t, snap_frame *f)
{
    return f->parent[0] ? snap_frame_find(t, f->parent) : NULL;
}

/* The out-of-process frame above gid's session: the topmost ancestor of
 * gid in the same session (its root, into gid) and that root's parent's
 * session (into ps); false when gid's session is the tab's own. */
static bool frame_hop(snap_tab *t, char gid[SNAP_ID_MAX], char ps[SNAP_ID_MAX], bool *lost)
{
    snap_frame *g = snap_frame_find(t, gid);
    *lost = !g;
    if (!g || strcmp(g->session, t->session) == 0)
        return false;
    snap_frame *p = frame_parent(t, g);
    while (p && strcmp(p->session, g->session) == 0) {
        g = p;
        p = frame_parent(t, g);
    }
    *lost = !p || p->gone;
    if (*lost)
        return false;
    snprintf(gid, SNAP_ID_MAX, "%s", g->id);
    snprintf(ps, SNAP_ID_MAX, "%s", p->session);
    return true;
}

int snap_act_frame_origin(snap_agent *a, int tab_id, const char *frame_id, const char *what,
                          double *ox, double *oy, double clip[4], snap_result *r)
{
    char gid[SNAP_ID_MAX], ps[SNAP_ID_MAX];
    snprintf(gid, sizeof gid, "%s", frame_id);
    *ox = *oy = 0;
    clip[0] = clip[1] = -1e18;
    clip[2] = clip[3] = 1e18;
    for (int depth = 0; depth <= 32; depth++) {
        /* Looked up again every round: the frame array moves during calls. */
        snap_tab *t = snap_tab_by_id(a, tab_id);
        bool lost = !t;
        if (t && !frame_hop(t, gid, ps, &lost) && !lost)
            return 0;
        if (lost)
            break;
        snap_frame *root = snap_frame_find(t, gid);
        snap_frame *p = root ? frame_parent(t, root) : NULL;
        if (!p)
            break;
        char pid[SNAP_ID_MAX];
        snprintf(pid, sizeof pid, "%s", p->id);
        pcall fo, bm;
        int be = 0;
        if (snap_act_call(a, ps, "DOM.getFrameOwner", snap_act_params("s", "frameId", gid),
                          &fo) == 0)
            be = (int)json_get_int(fo.rep.result, "backendNodeId", 0);
        snap_act_pfree(&fo);
        const json_val *q = NULL;
        if (be && snap_act_call(a, ps, "DOM.getBoxModel",
                                snap_act_params("i", "backendNodeId", be), &bm) == 0)
            q = json_get(json_get(bm.rep.result, "model"), "content");
        double x0 = json_num(json_at(q, 0)), y0 = json_num(json_at(q, 1));
        double x1 = json_num(json_at(q, 4)), y1 = json_num(json_at(q, 5));
        size_t nq = json_len(q);
        if (be)
            snap_act_pfree(&bm);
        if (nq < 8)
            return snap_act_fail(r, SNAP_ENOTVISIBLE, "%s: the frame it is in has no box in its "
                                 "parent page", what);
        /* Into the parent's coordinates, cut to the iframe's content box. */
        *ox += x0;
        *oy += y0;
        clip[0] = snap_act_dmax(clip[0] + x0, x0);
        clip[1] = snap_act_dmax(clip[1] + y0, y0);
        clip[2] = snap_act_dmin(clip[2] + x0, x1);
        clip[3] = snap_act_dmin(clip[3] + y0, y1);
        snprintf(gid, sizeof gid, "%s", pid);
    }
    return snap_act_fail(r, SNAP_ESTALE, "%s: its frame is no longer in the page", what);
}

/* Whether the node hit (backend id hb, in session s) is the element oid,
 * inside it, its label, or labelled by it (snap_js_contains_fn). Both are
 * in cdpgate's isolated world (world, oid's): the page cannot redefine the
 * parentNode, closest or control the script walks. False (covered: fail
 * closed) when the world is missing. */
static bool hit_belongs(snap_agent *a, const char *s, int64_t world, const char *oid, int hb)
{
    pcall hr, in;
    int ok = 0;
    memset(&hr, 0, sizeof hr);
    if (world > 0 &&
        snap_act_call(a, s, "DOM.resolveNode",
                      snap_act_params("isi", "backendNodeId", hb, "objectGroup", ACT_GROUP,
                                      "executionContextId", (int)world),
                      &hr) == 0) {
        const char *hoid = json_get_str(json_get(hr.rep.result, "object"), "objectId");
        char *args = hoid ? snap_act_arg_obj(hoid) : NULL;
        if (args) {
            if (snap_act_call(a, s, "Runtime.callFunctionOn",
                              snap_act_fn_params(oid, snap_js_contains_fn, args, true, false),
                              &in) == 0)
                ok = (int)json_num(snap_act_fn_value(&in));
            snap_act_pfree(&in);
            free(args);
        }
    }
    snap_act_pfree(&hr);
    return ok != 0;
}

/* Up the chain of out-of-process frames from frame_id: add each iframe's
 * content-box origin in its parent to (*ox, *oy), and check nothing in the
 * parent covers it. 0 or a SNAP_E* code with r filled. */
static int locate_up_frames(snap_agent *a, int tab_id, const char *frame_id, const char *what,
                            session_set *ss, double *ox, double *oy, snap_result *r)
{
    char gid[SNAP_ID_MAX];
    snprintf(gid, sizeof gid, "%s", frame_id);
    for (int depth = 0;; depth++) {
        /* Looked up again every round: the frame array moves during calls. */
        snap_tab *t = snap_tab_by_id(a, tab_id);
        snap_frame *g = t ? snap_frame_find(t, gid) : NULL;
        if (!g || depth > 32)
            return snap_act_fail(r, SNAP_ESTALE, "%s: its frame is no longer in the page", what);
        if (strcmp(g->session, t->session) == 0)
            break;
        snap_frame *p = frame_parent(t, g);
        while (p && strcmp(p->session, g->session) == 0) {
            g = p;
            p = frame_parent(t, g);
        }
        if (!p || p->gone)
            return snap_act_fail(r, SNAP_ESTALE, "%s: its frame is no longer in the page", what);
        char ps[SNAP_ID_MAX], lroot[SNAP_ID_MAX];
        snprintf(ps, sizeof ps, "%s", p->session);
        snprintf(lroot, sizeof lroot, "%s", g->id);
        snprintf(gid, sizeof gid, "%s", p->id);
        pcall fo, bm, plm;
        int be = 0;
        snap_act_psend_p(a, ps, "DOM.getFrameOwner", snap_act_params("s", "frameId", lroot), &fo);
        snap_act_psend(a, ps, "Page.getLayoutMetrics", NULL, &plm);
        if (snap_act_pwait(a, &fo) == 0)
            be = (int)json_get_int(fo.rep.result, "backendNodeId", 0);
        snap_act_pfree(&fo);
        double psx = 0, psy = 0;
        if (snap_act_pwait(a, &plm) == 0) {
            const json_val *pvp = json_get(plm.rep.result, "cssLayoutViewport");
            psx = json_num(json_get(pvp, "pageX"));
            psy = json_num(json_get(pvp, "pageY"));
        }
        snap_act_pfree(&plm);
        const json_val *content = NULL;
        if (be &&
            snap_act_call(a, ps, "DOM.getBoxModel", snap_act_params("i", "backendNodeId", be),
                          &bm) == 0)
            content = json_get(json_get(bm.rep.result, "model"), "content");
        if (!content) {
            if (be)
                snap_act_pfree(&bm);
            return snap_act_fail(r, SNAP_ENOTVISIBLE, "%s: the frame it is in has no box in its "
                                 "parent page", what);
        }
        *ox += json_num(json_at(content, 0));
        *oy += json_num(json_at(content, 1));
        snap_act_pfree(&bm);
        int phb;
        char phf[SNAP_ID_MAX];
        int px = (int)snap_act_dfloor(*ox), py = (int)snap_act_dfloor(*oy);
        if (hit_test(a, ps, px, py, psx, psy, &phb, phf) || !phb) {
            return snap_act_fail(r, SNAP_ENOTVISIBLE, "%s: its frame is outside the visible part "
                                 "of the page", what);
        }
        if (phb != be)
            return report_covered(a, tab_id, ps, snap_frame_world(a, tab_id, gid), phb, phf,
                                  NULL, what, ss, r);
    }
    return 0;
}

/* An element in an out-of-process frame: the browser routes input by what
 * the frames last drew (viz's hit-test data), not by the DOM. A frame that
 * has not drawn yet (it just loaded), or a page that has not drawn since
 * the scroll that moved the iframe, sends a click to the iframe element,
 * where it is lost (seen under load: test_actions click_in_oopif). Waits
 * for the next frame of both, in cdpgate's worlds (the page's own
 * requestAnimationFrame may be replaced), 1 s at most each. */
static void locate_drawn(snap_agent *a, int tab_id, const char *frame_id, const char *s)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed || t->dialog_open || !t->nframes || strcmp(t->session, s) == 0)
        return;
    char top[SNAP_ID_MAX], topf[SNAP_ID_MAX];
    snprintf(top, sizeof top, "%s", t->session);
    snprintf(topf, sizeof topf, "%s", t->frames[0].id);
    int64_t w[2] = {snap_frame_world(a, tab_id, topf), snap_frame_world(a, tab_id, frame_id)};
    const char *ses[2] = {top, s};
    pcall pc[2];
    for (int i = 0; i < 2; i++)
        if (w[i])
            snap_act_psend(a, ses[i], "Runtime.evaluate",
                           snap_act_params("sibb", "expression", snap_js_scroll_frame_expr,
                                           "contextId", (int)w[i], "awaitPromise", true,
                                           "returnByValue", true),
                           &pc[i]);
    for (int i = 0; i < 2; i++)
        if (w[i]) {
            snap_act_pwait(a, &pc[i]);
            snap_act_pfree(&pc[i]);
        }
}

/* Scroll the element into view and check that it can take input: attached
 * (resolve did that), visible, enabled, not covered. Fills *loc with the
 * click point in the tab's top-level coordinates. The element is oid (its
 * backend node id: backend) in frame frame_id of tab tab_id; what names it
 * in messages. With check_enabled false a disabled element is located
 * anyway. 0 or a SNAP_E* code with r filled. */
int snap_act_locate(snap_agent *a, int tab_id, const char *frame_id, const char *oid,
                    int backend, const char *what, bool check_enabled, session_set *ss,
                    located *loc, snap_result *r)
{
    memset(loc, 0, sizeof *loc);
    snap_tab *t0 = snap_tab_by_id(a, tab_id);
    snap_frame *f0 = t0 ? snap_frame_find(t0, frame_id) : NULL;
    if (!f0 || f0->gone || t0->closed)
        return snap_act_fail(r, SNAP_ESTALE, "%s: its frame is no longer in the page", what);
    char s[SNAP_ID_MAX];
    snprintf(s, sizeof s, "%s", f0->session);
    snap_act_sessions_note(ss, s);
    pcall sc, st, qu, lm;
    snap_act_psend_p(a, s, "DOM.scrollIntoViewIfNeeded", snap_act_params("s", "objectId", oid),
                     &sc);
    snap_act_psend_p(a, s, "Runtime.callFunctionOn",
                     snap_act_fn_params(oid, snap_js_state_fn, NULL, true, false), &st);
    snap_act_psend_p(a, s, "DOM.getContentQuads", snap_act_params("s", "objectId", oid), &qu);
    snap_act_psend(a, s, "Page.getLayoutMetrics", NULL, &lm);
    int rsc = snap_act_pwait(a, &sc), rst = snap_act_pwait(a, &st), rqu = snap_act_pwait(a, &qu),
        rlm = snap_act_pwait(a, &lm);
    locate_drawn(a, tab_id, frame_id, s);
    int rc = 0;
    const json_val *v = snap_act_fn_value(&st);
    if (rst && rst != CDP_EPROTOCOL) {
        rc = snap_act_fail(r, SNAP_EBROWSER, "%s: %s", what, st.e.msg);
        goto out;
    }
    if (!v || json_get(v, "gone")) {
        rc = snap_act_fail(r, SNAP_ESTALE, "%s was removed from the page; take a new snapshot",
                           what);
        goto out;
    }
    const char *tag = json_get_str(v, "tag");
    snprintf(loc->tag, sizeof loc->tag, "%s", tag ? tag : "");
    loc->option = json_get(v, "option") != NULL;
    snap_act_secret_form_note(&loc->sf, v);
    const char *dis = json_get_str(v, "disabled");
    char pb[256];
    if (check_enabled && dis) {
        rc = snap_act_fail(r, SNAP_EDISABLED, "%s is disabled (%s); it cannot be used until the "
                           "page enables it", what, snap_act_pg(pb, sizeof pb, dis));
        goto out;
    }
    if (loc->option) {
        rc = 0;                 /* options of a <select> are chosen, not clicked */
        goto out;
    }
    const char *hidden = json_get_str(v, "hidden");
    if (hidden) {
        rc = snap_act_fail(r, SNAP_ENOTVISIBLE, "%s is hidden (%s); it cannot be clicked", what,
                           snap_act_pg(pb, sizeof pb, hidden));
        goto out;
    }
    (void)rsc;
    const json_val *vp = json_get(lm.rep.result, "cssLayoutViewport");
    double vw = rlm ? 0 : json_num(json_get(vp, "clientWidth"));
    double vh = rlm ? 0 : json_num(json_get(vp, "clientHeight"));
    double sx = rlm ? 0 : json_num(json_get(vp, "pageX"));
    double sy = rlm ? 0 : json_num(json_get(vp, "pageY"));
    int x, y;
    if (rqu || !quad_point(json_get(qu.rep.result, "quads"), vw, vh, &x, &y)) {
        rc = snap_act_fail(r, SNAP_ENOTVISIBLE, "%s has no visible box on screen (zero size, "
                           "clipped, or outside the viewport even after scrolling)", what);
        goto out;
    }
    /* Hit test where the click will land. */
    int hb;
    char hframe[SNAP_ID_MAX];
    if (hit_test(a, s, x, y, sx, sy, &hb, hframe) || !hb) {
        rc = snap_act_fail(r, SNAP_ENOTVISIBLE, "%s: nothing can be hit at its centre (%d,%d)",
                           what, x, y);
        goto out;
    }
    int64_t world = hb != backend ? snap_frame_world(a, tab_id, frame_id) : 0;
    if (hb != backend && !hit_belongs(a, s, world, oid, hb)) {
        rc = report_covered(a, tab_id, s, world, hb, hframe, oid, what, ss, r);
        goto out;
    }
    double ox = x, oy = y;
    if ((rc = locate_up_frames(a, tab_id, frame_id, what, ss, &ox, &oy, r)))
        goto out;
    loc->x = (int)snap_act_dfloor(ox);
    loc->y = (int)snap_act_dfloor(oy);
    loc->lx = x;
    loc->ly = y;
out:
    snap_act_pfree(&sc);
    snap_act_pfree(&st);
    snap_act_pfree(&qu);
    snap_act_pfree(&lm);
    return rc;
}

/* What the node hb (in session s, frame hframe of tab tab_id) is, for a
 * message: its role, name (page text, escaped) and a ref of its own. */
static void hit_describe(snap_agent *a, int tab_id, const char *s, const char *hframe, int hb,
                         char *what, size_t cap)
{
    pcall d, x;
    snap_act_psend_p(a, s, "DOM.describeNode", snap_act_params("i", "backendNodeId", hb), &d);
    snap_act_psend_p(a, s, "Accessibility.getPartialAXTree",
                     snap_act_params("ib", "backendNodeId", hb, "fetchRelatives", false), &x);
    snap_act_pwait(a, &d);
    snap_act_pwait(a, &x);
    char role[32], name[200];
    snap_act_ax_role_name(x.rep.result, d.rep.result, role, sizeof role, name, sizeof name);
    snap_act_pfree(&d);
    snap_act_pfree(&x);
    snap_tab *t = snap_tab_by_id(a, tab_id);
    snap_frame *hf = t ? snap_frame_find(t, hframe) : NULL;
    uint32_t n = hf ? snap_ref_for(a, tab_id, hf->id, hf->loader, hb, role, name) : 0;
    base_buf b = {0};
    snap_act_sb_page(&b, role, 32, 0);
    if (name[0]) {
        base_buf_put(&b, " ", 1);
        snap_act_sb_quoted(&b, name, 80);
    }
    if (n)
        base_buf_printf(&b, " [e%u]", n);
    snprintf(what, cap, "%s", b.s && !b.oom ? b.s : "another element");
    free(b.s);
    snap_act_utf8_repair(what);
}

/* After a double click's first click, in the element's frame, once the
 * page has run its next frame: is the node at the click point (loc, as
 * snap_act_locate found it) still tg's element or inside it (hit_belongs,
 * in cdpgate's isolated world), and its frame still where it was? False
 * when it is not or cannot be told (fail closed), with what (cap) saying
 * what is there now (page text escaped). */
bool snap_act_hit_still(snap_agent *a, const target *tg, const located *loc, session_set *ss,
                        char *what, size_t cap)
{
    snprintf(what, cap, "the element could not be found at the click point again");
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    snap_frame *f = t && !t->closed ? snap_frame_find(t, tg->frame) : NULL;
    if (!f || f->gone)
        return false;
    char s[SNAP_ID_MAX];
    snprintf(s, sizeof s, "%s", f->session);
    int64_t world = snap_frame_world(a, tg->tab, tg->frame);
    if (world <= 0)
        return false;
    /* What the click set going by its next frame is in (the page's own
     * requestAnimationFrame cannot hold this up: it runs in cdpgate's world). */
    pcall fw, lm;
    snap_act_call(a, s, "Runtime.evaluate",
                  snap_act_params("sbbi", "expression", snap_js_frame_expr, "awaitPromise", true,
                                  "returnByValue", true, "contextId", (int)world),
                  &fw);
    snap_act_pfree(&fw);
    int rc = snap_act_call0(a, s, "Page.getLayoutMetrics", &lm);
    const json_val *vp = json_get(lm.rep.result, "cssLayoutViewport");
    double sx = json_num(json_get(vp, "pageX")), sy = json_num(json_get(vp, "pageY"));
    snap_act_pfree(&lm);
    if (rc)
        return false;
    int hb;
    char hframe[SNAP_ID_MAX];
    if (hit_test(a, s, loc->lx, loc->ly, sx, sy, &hb, hframe) || !hb) {
        snprintf(what, cap, "nothing that can be hit");
        return false;
    }
    if (hb != tg->backend && !hit_belongs(a, s, world, tg->oid, hb)) {
        hit_describe(a, tg->tab, s, hframe, hb, what, cap);
        return false;
    }
    /* In an out-of-process frame: nothing of a parent page covers it now,
     * and it has not moved. */
    double ox = loc->lx, oy = loc->ly;
    snap_result scratch = {0};
    rc = locate_up_frames(a, tg->tab, tg->frame, tg->what, ss, &ox, &oy, &scratch);
    snap_result_free(&scratch);
    if (rc || (int)snap_act_dfloor(ox) != loc->x || (int)snap_act_dfloor(oy) != loc->y) {
        snprintf(what, cap, "something else over the frame the element is in");
        return false;
    }
    return true;
}
