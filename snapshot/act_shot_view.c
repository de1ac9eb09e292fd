/*
 * act_shot_view.c — which masked frames can show in a screenshot of the
 * viewport (act_shot_mask.c waits only for those to draw their mask).
 *
 * A masked frame's overlay is painted by the frame's own renderer; the
 * capture takes an out-of-process frame as it last drew, so the capture
 * waits until each masked frame drew (mask_drawn). The browser does not
 * draw a cross-site frame far out of view at all: its mask never draws,
 * and the screenshot was refused (session 16). A frame whose iframe, or
 * the iframe of a frame around it, lies wholly outside the viewport
 * cannot show in a capture of the viewport (or of any part of it: a clip
 * or an element in view), so its mask need not draw.
 *
 * Whether an iframe lies outside the viewport is the browser's own
 * answer: an IntersectionObserver (implicit root: the top-level viewport,
 * grown by 16 px; inside a frame, the browser cuts the box by the frames
 * around it) in cdpgate's isolated world of the document that holds the
 * iframe, so CSS transforms, position:fixed, scrolled boxes and the outer
 * frames' clips count as the browser lays them out for each frame it
 * draws. The frames around a masked frame are asked from the outermost
 * in: the first iframe out of view makes the frame out of view (nothing
 * inside it can show); an iframe in view (or one whose document did not
 * answer within 3 s) passes to the next one in; a masked frame all of
 * whose iframes are in view must draw its mask (fail closed). An iframe
 * with a running animation on it or around it is taken as in view (it
 * may move between the frames the observer sees).
 *
 * The observer watches from before the mask is waited for until after
 * the capture (snap_shot_view_check, two animation frames of the parent
 * after the capture): an iframe that came into the viewport in any frame
 * the browser drew meanwhile, or a watch that cannot be read, makes the
 * caller discard the image (act_page.c takes it once more, then refuses).
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#include "snapshot/act_int.h"
#include "snapshot/page_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEW_DEPTH_MAX 16   /* frames around a masked frame looked at */

/* Watch an iframe's intersection with the top-level viewport, and what
 * could paint a copy of it elsewhere.
 * Runs: in cdpgate's isolated world of the document holding the iframe;
 * m 0 on the iframe element (this), awaited; m 1 and 2 with the index
 * (i) m 0 gave. cp(e): the iframe left the document, or on it or an
 * ancestor (flat tree) a reflection or a drop-shadow or url() filter
 * (they paint a copy of it elsewhere) or a running animation (it may move
 * between the frames the observer sees). m 0 starts an
 * IntersectionObserver (rootMargin 16px) and resolves on its first entry
 * (or after 3 s without) with {i, out, stop}: out true when the iframe
 * does not intersect the viewport, stop cp. m 1 (k: it must have stayed
 * out) resolves after two animation frames (3 s at most: false) true when
 * cp is not and (k) no entry since the start intersected, then stops
 * watching; m 2 stops watching. Kept in the world (__cdpgateView), unseen
 * by the page. */
const char snap_js_shot_view_fn[] =
    "function(m,i,k){var g=globalThis,V=g.__cdpgateView||(g.__cdpgateView=[]),"
    "v=m?V[i]:{h:0,n:0};"
    "function see(es){for(var j=0;j<es.length;j++){v.n++;if(es[j].isIntersecting)v.h=1}}"
    "function cp(e){if(!e.isConnected)return 1;for(var p=e;p;p=p.assignedSlot||"
    "p.parentElement||(p.parentNode&&p.parentNode.host)){var s=getComputedStyle(p);"
    "if(s.webkitBoxReflect&&s.webkitBoxReflect!=='none'||/drop-shadow|url\\(/.test(s.filter)"
    "||p.getAnimations().some(function(a){return a.playState==='running'}))return 1}return 0}"
    "if(m===2){if(v&&v.o)v.o.disconnect();V[i]=null;return true}"
    "if(m===1){if(!v||!v.o)return false;return new Promise(function(r){"
    "setTimeout(function(){v.o.disconnect();V[i]=null;r(false)},3000);"
    "requestAnimationFrame(function(){requestAnimationFrame(function(){"
    "see(v.o.takeRecords());v.o.disconnect();V[i]=null;r(!cp(v.e)&&(!k||v.n>0&&!v.h))})})})}"
    "var e=this;v.e=e;v.o=new IntersectionObserver(see,{rootMargin:'16px'});i=V.length;"
    "V.push(v);v.o.observe(e);return new Promise(function(r){var t=Date.now();(function w(){"
    "if(v.n||Date.now()-t>3000)r({i:i,out:v.n>0&&!v.h,stop:!!cp(e)});"
    "else setTimeout(w,16)})()})}";

/* One frame of the chain around a masked frame: its id, and its parent's
 * id and session (where its iframe element is). */
typedef struct {
    char id[SNAP_ID_MAX];
    char parent[SNAP_ID_MAX];
    char psession[SNAP_ID_MAX];
} view_link;

/* The chain from frame_id (ch[0]) up to the child of the tab's top frame,
 * copied out (the frame array moves during calls). Its length, 0 when
 * frame_id is the top frame, or -1 (a frame of it is not known, or it is
 * deeper than VIEW_DEPTH_MAX). */
static int view_chain(snap_agent *a, int tab_id, const char *frame_id, view_link *ch)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    snap_frame *f = t ? snap_frame_find(t, frame_id) : NULL;
    int n = 0;
    while (f && f->parent[0]) {
        snap_frame *p = snap_frame_find(t, f->parent);
        if (!p || p->gone || n == VIEW_DEPTH_MAX)
            return -1;
        snprintf(ch[n].id, SNAP_ID_MAX, "%s", f->id);
        snprintf(ch[n].parent, SNAP_ID_MAX, "%s", p->id);
        snprintf(ch[n].psession, SNAP_ID_MAX, "%s", p->session);
        n++;
        f = p;
    }
    return f ? n : -1;
}

/* The params of snap_js_shot_view_fn in mode md (1 check, 2 stop) on
 * watch idx in world; need: it must have stayed out of view. */
static char *view_mode_params(int md, int64_t world, int idx, bool need)
{
    char args[96];
    snprintf(args, sizeof args, "[{\"value\":%d},{\"value\":%d},{\"value\":%s}]", md, idx,
             need ? "true" : "false");
    return snap_act_params("sirbbs", "functionDeclaration", snap_js_shot_view_fn,
                           "executionContextId", (int)world, "arguments", args,
                           "returnByValue", true, "awaitPromise", true, "objectGroup",
                           ACT_GROUP);
}

/* The iframe of link l, resolved in its parent's world: its object id
 * into oid ("" when it cannot be). */
static void view_owner(snap_agent *a, const view_link *l, int64_t world, char oid[SNAP_ID_MAX])
{
    pcall fo, rn;
    int be = 0;
    *oid = 0;
    if (snap_act_call(a, l->psession, "DOM.getFrameOwner", snap_act_params("s", "frameId", l->id),
                      &fo) == 0)
        be = (int)json_get_int(fo.rep.result, "backendNodeId", 0);
    snap_act_pfree(&fo);
    if (!be)
        return;
    if (snap_act_call(a, l->psession, "DOM.resolveNode",
                      snap_act_params("isi", "backendNodeId", be, "objectGroup", ACT_GROUP,
                                      "executionContextId", (int)world),
                      &rn) == 0) {
        const char *o = json_get_str(json_get(rn.rep.result, "object"), "objectId");
        snprintf(oid, SNAP_ID_MAX, "%s", o ? o : "");
    }
    snap_act_pfree(&rn);
}

/* Start watching the iframe of link l in its parent's world (kept in m):
 * 1 when it is out of view, 0 in view, -1 when the frames in it cannot
 * be left out (a copy of it could be painted, or it cannot be told). */
static int view_link_start(snap_agent *a, int tab_id, const view_link *l, snap_shot_mask *m,
                           session_set *ss)
{
    int64_t world = snap_frame_world(a, tab_id, l->parent);
    if (world <= 0 || m->nv >= SNAP_SHOT_VIEW_MAX)
        return -1;
    snap_act_sessions_note(ss, l->psession);
    char oid[SNAP_ID_MAX];
    view_owner(a, l, world, oid);
    if (!*oid)
        return -1;
    pcall fn;
    int rc = -1;
    if (snap_act_call(a, l->psession, "Runtime.callFunctionOn",
                      snap_act_fn_params(oid, snap_js_shot_view_fn, "[{\"value\":0}]", true,
                                         true),
                      &fn) == 0 &&
        !json_get(fn.rep.result, "exceptionDetails")) {
        const json_val *v = snap_act_fn_value(&fn);
        int64_t idx = -1;
        if (json_int(json_get(v, "i"), &idx) && idx >= 0 && idx < 1 << 30) {
            snprintf(m->v[m->nv].session, SNAP_ID_MAX, "%s", l->psession);
            m->v[m->nv].world = world;
            m->v[m->nv].need = false;
            m->v[m->nv++].idx = (int)idx;
            rc = json_is(json_get(v, "stop"), JSON_FALSE)
                     ? json_is(json_get(v, "out"), JSON_TRUE) : -1;
        }
    }
    snap_act_pfree(&fn);
    return rc;
}

/* Stop the watches m->v[from..] (the frame is not left out). */
static void view_drop(snap_agent *a, snap_shot_mask *m, size_t from)
{
    for (size_t i = from; i < m->nv; i++)
        snap_act_send_forget(a, m->v[i].session, "Runtime.callFunctionOn",
                             view_mode_params(2, m->v[i].world, m->v[i].idx, false));
    m->nv = from;
}

bool snap_shot_view_out(snap_agent *a, int tab_id, const char *frame_id, snap_shot_mask *m,
                        session_set *ss)
{
    view_link *ch = calloc(VIEW_DEPTH_MAX, sizeof *ch);
    int n = ch ? view_chain(a, tab_id, frame_id, ch) : -1;
    size_t from = m->nv;
    int st = 0;
    /* From the outermost iframe in: each one passed is in view, and is
     * watched too (a copy of it painted would show what is in it). */
    for (int j = n - 1; j >= 0 && st == 0; j--)
        st = view_link_start(a, tab_id, &ch[j], m, ss);
    free(ch);
    if (st == 1) {
        m->v[m->nv - 1].need = true;
        return true;
    }
    view_drop(a, m, from);
    return false;
}

int snap_shot_view_check(snap_agent *a, snap_shot_mask *m)
{
    pcall pc[SNAP_SHOT_VIEW_MAX];
    for (size_t i = 0; i < m->nv; i++)
        snap_act_psend_p(a, m->v[i].session, "Runtime.callFunctionOn",
                         view_mode_params(1, m->v[i].world, m->v[i].idx, m->v[i].need), &pc[i]);
    int changed = 0;
    for (size_t i = 0; i < m->nv; i++) {
        if (snap_act_pwait(a, &pc[i]) || json_get(pc[i].rep.result, "exceptionDetails") ||
            !json_is(snap_act_fn_value(&pc[i]), JSON_TRUE))
            changed = 1;
        snap_act_pfree(&pc[i]);
    }
    m->nv = 0;      /* each watch stopped */
    return changed;
}

void snap_shot_view_off(snap_agent *a, snap_shot_mask *m)
{
    view_drop(a, m, 0);
}
