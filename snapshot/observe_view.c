/*
 * observe_view.c — a snapshot from the viewport or from a ref (issue 13,
 * point 3a): which lines of the cached snapshot a `from` keeps.
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 *
 * The viewport: every line of the main frame carries the rows of the page
 * it covers, in document coordinates (the DOM snapshot's layout bounds,
 * observe_dom.c), and the node it took them from, kept with the cache. The
 * rows are read again for every viewport view (snap_obs_view_relayout: a
 * page's layout moves without a mutation, R5), so a warm cache serves the
 * lines and the view is of the layout now; the scroll position is read
 * fresh after that (Page.getLayoutMetrics: the browser's own figures, not
 * the page's script). A line is in view when its rows
 * meet the viewport's; fixed and sticky elements and what is inside them
 * are always in view; a line with no layout box of its own (a wrapper
 * with display:contents) takes its nearest ancestor's. The lines of a
 * frame are in view when the frame's line is (the whole frame: its own
 * scroll is not read). Printed
 * ancestors of the lines kept are shown above them as on any page.
 *
 * A ref: the ref's line and the lines under it (its subtree), its
 * ancestors above them.
 */
#include "snapshot/observe_int.h"
#include "snapshot/page_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rows [y0, y1) each line of L covers in the main frame's page: its
 * vnode's layout box (a text line's: its first text node's), or its
 * nearest ancestor's (a wrapper with display:contents); a line of
 * another frame gets none (it follows its frame's line), and a line
 * with no box up to the root counts as everywhere. New (2 per line), and
 * in *boxb the node each line took its box from (0: none; new, one per
 * line, NULL when out of memory); NULL when the main frame's DOM snapshot
 * was not read or out of memory. */
int32_t *snap_obs_line_boxes(const build *B, const lines *L, int **boxb)
{
    *boxb = NULL;
    /* A walker view's boxes are read when a view asks (snap_obs_walk_boxes). */
    if (!B->nfr || !B->ss[B->fr[0].sess].dom_ok || B->fr[0].walked)
        return NULL;
    const sess_st *S = &B->ss[B->fr[0].sess];
    int32_t *bx = malloc((L->n ? L->n : 1) * 2 * sizeof *bx);
    int *bb = calloc(L->n ? L->n : 1, sizeof *bb);
    if (!bx || !bb) {
        free(bx);
        free(bb);
        return NULL;
    }
    for (size_t k = 0; k < L->n; k++) {
        const nbox *b = NULL;
        for (int v = L->l[k].v; v >= 0 && !b && B->v[v].frame == 0; v = B->v[v].parent)
            b = snap_obs_box(S, B->v[v].backend);
        bx[2 * k] = b ? b->y0 : INT32_MIN;
        bx[2 * k + 1] = b ? b->y1 : INT32_MAX;
        bb[k] = b ? b->backend : 0;
    }
    *boxb = bb;
    return bx;
}

/* Which nodes of a session have a layout object (S's boxes), as one
 * number: a page that showed or hid content without a DOM mutation (a
 * CSSOM rule's display) changes it. */
uint64_t snap_obs_lay_sig(const sess_st *S)
{
    uint64_t h = 1469598103934665603ULL ^ S->nbox;
    for (size_t i = 0; i < S->nbox; i++)
        h = (h ^ (uint32_t)S->box[i].backend) * 1099511628211ULL;
    return h;
}

/* R5 (review s10): the layout of a page moves without a DOM mutation (a
 * CSS animation or transition, a CSSOM rule edited by a script or by the
 * page's scroll listener, a scroll-driven animation, :target, a font), so
 * the boxes C kept from its build never serve a viewport view: the main
 * frame's session's DOM snapshot is read again (layout only is wanted,
 * but the method has no such option) and each line of the main frame
 * takes its box now from the node it took it from at the build. 0: C's
 * boxes are now; 1: the nodes with a layout object are not the same set
 * (content shown or hidden without a mutation: the caller builds again);
 * -1: the layout could not be read (the caller builds again). */
int snap_obs_view_relayout(snap_agent *a, snap_tab *t, struct snap_cache *C)
{
    if (C->walked)
        return snap_obs_walk_boxes(a, t, C);
    if (!C->box || !C->boxb || !t->nframes || !t->frames[0].session[0])
        return -1;
    char session[SNAP_ID_MAX];
    snprintf(session, sizeof session, "%s", t->frames[0].session);
    int tmo = snap_read_timeout(a);
    domsink *DS = calloc(1, sizeof *DS);
    sess_st S = {.id = session};
    uint64_t id = 0;
    int rc = DS ? snap_cdp_send_sink(a, session, "DOMSnapshot.captureSnapshot",
                                     "{\"computedStyles\":[\"position\"]}", snap_obs_ds_event,
                                     DS, &id, NULL)
                : -1;
    if (rc == 0) {
        cdp_reply rep = {0};
        cdp_err e = {0};
        rc = cdp_wait(a->c, id, tmo, &rep, &e);
        cdp_reply_free(&rep);
        if (rc == 0 && !DS->oom)
            snap_obs_ds_finish(&S, DS);    /* the reply went through ds_event as it came */
    }
    if (DS)
        snap_obs_ds_free(DS);
    free(DS);
    int ret = -1;
    if (rc == 0 && S.dom_ok && S.box)
        ret = snap_obs_lay_sig(&S) == C->lay_sig ? 0 : 1;
    for (size_t k = 0; ret == 0 && k < C->n; k++) {
        if (!C->boxb[k])
            continue;        /* no box up to the root at the build: everywhere */
        const nbox *b = snap_obs_box(&S, C->boxb[k]);
        if (!b) {
            ret = 1;         /* cannot happen with the same set; be safe */
            break;
        }
        C->box[2 * k] = b->y0;
        C->box[2 * k + 1] = b->y1;
    }
    if (ret == 0)
        C->doc_h = S.doc_h;
    free(S.secret.v);
    free(S.pw.v);
    free(S.otc.v);
    free(S.click.v);
    free(S.inl.v);
    free(S.box);
    return ret;
}

/* ---- a walker view's boxes ---- */

typedef struct {
    int32_t id, y0, y1;
    char kind;                   /* 'b' a box, 'f' everywhere, '-' none */
} wbox;

static int cmp_wbox(const void *x, const void *y)
{
    const wbox *p = x, *q = y;
    return p->id < q->id ? -1 : p->id > q->id;
}

static int32_t clamp32(long long v)
{
    return v < INT32_MIN + 1LL ? INT32_MIN + 1 : v > INT32_MAX - 1LL ? INT32_MAX - 1 : (int32_t)v;
}

/* One line "id y0 y1", "id f" or "id -" of snap_js_walk_box_expr into b;
 * false when it is not one. */
static bool wbox_parse(const char *l, const char *end, wbox *b)
{
    char tmp[64];
    size_t n = (size_t)(end - l);
    if (n == 0 || n >= sizeof tmp)
        return false;
    memcpy(tmp, l, n);
    tmp[n] = 0;
    char *e = NULL;
    long long id = strtoll(tmp, &e, 10);
    if (e == tmp || *e != ' ' || id < 1 || id > INT32_MAX)
        return false;
    b->id = (int32_t)id;
    if (strcmp(e, " f") == 0 || strcmp(e, " -") == 0) {
        b->kind = e[1] == 'f' ? 'f' : '-';
        return true;
    }
    char *e2 = NULL;
    long long y0 = strtoll(e + 1, &e2, 10);
    if (e2 == e + 1 || *e2 != ' ')
        return false;
    char *e3 = NULL;
    long long y1 = strtoll(e2 + 1, &e3, 10);
    if (e3 == e2 + 1 || *e3)
        return false;
    b->kind = 'b';
    b->y0 = clamp32(y0);
    b->y1 = clamp32(y1);
    return true;
}

/* C's lines' boxes from the answer s (n bytes): each line its node's (by
 * walker id), a fixed one's everywhere, one without (display:contents, a
 * text record's list) its printed parent's, the root's everywhere. 0, or
 * -1 (a malformed answer, out of memory). */
static int walk_boxes_fill(struct snap_cache *C, const char *s, size_t n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++)
        cnt += s[i] == '\n';
    wbox *v = malloc((cnt ? cnt : 1) * sizeof *v);
    int32_t *bx = C->box ? C->box : malloc((C->n ? C->n : 1) * 2 * sizeof *bx);
    if (!v || !bx) {
        free(v);
        if (bx != C->box)
            free(bx);
        return -1;
    }
    C->box = bx;
    size_t m = 0;
    const char *p = memchr(s, '\n', n), *end = s + n;
    while (p && p < end) {
        const char *l = p + 1, *e = memchr(l, '\n', (size_t)(end - l));
        if (!e)
            e = end;
        if (l < e && (m == cnt || !wbox_parse(l, e, &v[m++]))) {
            free(v);
            return -1;
        }
        p = e < end ? e : NULL;
    }
    qsort(v, m, sizeof *v, cmp_wbox);
    for (size_t k = 0; k < C->n; k++) {
        const vnode *x = &C->l[k];
        wbox key = {.id = x->backend < 0 ? -x->backend : 0};
        const wbox *b = key.id ? bsearch(&key, v, m, sizeof *v, cmp_wbox) : NULL;
        int par = x->parent;
        if (b && b->kind == 'b') {
            bx[2 * k] = b->y0;
            bx[2 * k + 1] = b->y1;
        } else if (!(b && b->kind == 'f') && par >= 0 && (size_t)par < k) {
            bx[2 * k] = bx[2 * par];
            bx[2 * k + 1] = bx[2 * par + 1];
        } else {
            bx[2 * k] = INT32_MIN;
            bx[2 * k + 1] = INT32_MAX;
        }
    }
    free(v);
    return 0;
}

/* The rows each line of walker view C covers now, read in cdpgate's
 * isolated world of the main frame (snap_js_walk_box_expr: the layout of
 * the nodes of the last walk), into C->box: a view from the viewport of
 * a walker view is of the layout now, as an AX view's (R5). 0: C->box is
 * now; 1: the layout is not the walk's (a node gained or lost its box,
 * content hidden at the walk is shown: the caller walks again); -1: it
 * could not be read (C->box freed: the view says the layout is unknown). */
int snap_obs_walk_boxes(snap_agent *a, snap_tab *t, struct snap_cache *C)
{
    char session[SNAP_ID_MAX], fid[SNAP_ID_MAX];
    if (!t->nframes || !t->frames[0].session[0])
        return -1;
    snprintf(session, sizeof session, "%s", t->frames[0].session);
    snprintf(fid, sizeof fid, "%s", t->frames[0].id);
    int64_t world = snap_frame_world(a, t->id, fid);   /* t may move: not read after */
    uint64_t id = 0;
    int ret = -1;
    if (world > 0 && snap_world_eval(a, session, world, snap_js_walk_box_expr, &id) == 0) {
        cdp_reply rep = {0};
        int tmo = a->o.timeout_ms > 0 ? a->o.timeout_ms : 15000;
        size_t n = 0;
        const char *s = cdp_wait(a->c, id, tmo, &rep, NULL) == 0 &&
                        !json_get(rep.result, "exceptionDetails")
                        ? json_str(json_get(json_get(rep.result, "result"), "value"), &n) : NULL;
        if (s && n >= 1 && (s[0] == '0' || s[0] == '1') && (n == 1 || s[1] == '\n') &&
            walk_boxes_fill(C, s, n) == 0)
            ret = s[0] == '1';
        cdp_reply_free(&rep);
    }
    if (ret < 0) {
        free(C->box);
        C->box = NULL;
    }
    return ret;
}

/* The scroll position, the viewport's and the page's height, into v. */
int snap_obs_view_metrics(snap_agent *a, int tab_id, snap_view *v, snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t)
        return snap_fail(r, SNAP_ENOTAB, "the tab closed");
    cdp_reply rep = {0};
    cdp_err e = {0};
    int rc = snap_cdp_call(a, t->session, "Page.getLayoutMetrics", NULL, a->o.timeout_ms, &rep,
                           &e);
    if (rc) {
        cdp_reply_free(&rep);
        return snap_fail(r, SNAP_EBROWSER, "cannot read where the page is scrolled to: %s",
                         e.msg);
    }
    const json_val *vv = json_get(rep.result, "cssVisualViewport");
    double y = json_num(json_get(vv, "pageY")), h = json_num(json_get(vv, "clientHeight"));
    double ph = json_num(json_get(json_get(rep.result, "cssContentSize"), "height"));
    cdp_reply_free(&rep);
    v->y = y > 0 && y < 2e9 ? (int32_t)y : 0;
    v->h = h > 0 && h < 2e9 ? (int32_t)(h + 0.5) : 0;
    v->page_h = ph > 0 && ph < 2e9 ? (int32_t)(ph + 0.5) : 0;
    snprintf(v->head, sizeof v->head, " view=viewport y=%ld-%ld of %ld", (long)v->y,
             (long)v->y + v->h, (long)v->page_h);
    return 0;
}

/* Parse from ("viewport" or a ref of tab t) into v; for the viewport, read
 * where the page is now. 0, or a failure in r (a ref that is stale says
 * what changed, as for any ref). */
int snap_obs_view_begin(snap_agent *a, snap_tab *t, const char *from, snap_view *v,
                        snap_result *r)
{
    memset(v, 0, sizeof *v);
    if (!from || !*from)
        return 0;
    if (strcmp(from, "viewport") == 0) {
        v->kind = VIEW_PORT;
        return snap_obs_view_metrics(a, t->id, v, r);
    }
    snap_ref *rf = NULL;
    int tab = t->id;
    int rc = snap_ref_doc(a, from, &rf, r);
    if (rc == SNAP_EINVAL)
        return snap_fail(r, SNAP_EINVAL, "from must be \"viewport\" or a ref like e12 (as "
                         "shown in [e12] in a snapshot), not '%.40s'", from);
    if (rc)
        return rc;
    if (snap_ref_tab(a, rf) != tab)
        return snap_fail(r, SNAP_EINVAL, "e%u is in tab t%d, not in the current tab t%d; "
                         "switch to it first (tabs switch)", rf->n, snap_ref_tab(a, rf), tab);
    v->kind = VIEW_REF;
    v->ref = rf->n;
    v->backend = rf->backend;
    snprintf(v->frame, sizeof v->frame, "%s", snap_ref_frame(a, rf));
    snprintf(v->loader, sizeof v->loader, "%s", a->refdocs[rf->doc].loader);
    snprintf(v->head, sizeof v->head, " view=e%u", rf->n);
    return 0;
}

/* Which lines of C the view keeps: new, one byte per line (free it); NULL
 * for the whole page (*rc 0) or on a failure (*rc and r filled). */
unsigned char *snap_obs_view_mask(snap_agent *a, const struct snap_cache *C, snap_view *v,
                                  snap_result *r, int *rc)
{
    *rc = 0;
    if (v->kind == VIEW_ALL)
        return NULL;
    if (v->kind == VIEW_PORT && !C->box) {
        *rc = snap_fail(r, SNAP_EBROWSER, "the page's layout could not be read (its DOM "
                        "snapshot failed), so what is in view is not known; take a snapshot "
                        "without from, or with a query");
        return NULL;
    }
    size_t at = C->n;
    for (size_t k = 0; v->kind == VIEW_REF && v->backend && k < C->n && at == C->n; k++) {
        const vnode *x = &C->l[k];
        const cframe *F = &C->fr[x->frame];
        if (x->backend == v->backend && strcmp(F->id, v->frame) == 0 &&
            strcmp(F->loader, v->loader) == 0)
            at = k;
    }
    if (v->kind == VIEW_REF && at == C->n) {
        char what[512];
        snap_ref_what(a, &a->refs[v->ref - 1], what, sizeof what);
        *rc = snap_fail(r, SNAP_ESTALE, "e%u (%s) is no longer on the page (removed or "
                        "hidden); take a new snapshot", v->ref, what);
        return NULL;
    }
    unsigned char *m = calloc(C->n ? C->n : 1, 1);
    if (!m) {
        *rc = snap_fail(r, SNAP_ENOMEM, "out of memory building the snapshot");
        return NULL;
    }
    if (v->kind == VIEW_REF) {
        m[at] = 1;
        for (size_t k = at + 1; k < C->n && C->l[k].end > C->l[at].end; k++)
            m[k] = 1;
        return m;
    }
    int64_t top = v->y, bottom = (int64_t)v->y + v->h;
    for (size_t k = 0; k < C->n; k++) {
        const vnode *x = &C->l[k];
        if (x->frame != 0 && x->parent >= 0) {
            m[k] = m[x->parent];     /* a frame's lines follow its frame line */
            continue;
        }
        int64_t y0 = C->box[2 * k], y1 = C->box[2 * k + 1];
        if (y1 <= y0)
            y1 = y0 + 1;             /* an empty box is a point */
        m[k] = y0 < bottom && y1 > top;
    }
    return m;
}
