/*
 * act_shot_mask.c — a screenshot never shows a secret field's value: the
 * fields are masked for the capture by an opaque DevTools overlay, or the
 * screenshot is refused (issue 13, red team s11 S1).
 *
 * Before a capture, in every frame of the tab (out-of-process frames
 * too), cdpgate's isolated world lists the secret fields with a value and
 * a box: those the snapshot's rules name (SHOT_SECRET_SEL) in the open
 * trees, every node cdpgate noted secret in that document
 * (snap_secret_note: a password the page turned into text), and every
 * element a DOM snapshot of the frame's process taken now names secret
 * by the same rules (red team s12, W2: closed shadow roots, which no
 * script can search; each such element must be found in some frame's
 * document, or the screenshot is refused). A field whose paint the
 * overlay cannot cover (no box of its own, content outside its box, a
 * text shadow, a reflection or drop-shadow filter) refuses the
 * screenshot. Each frame process (CDP session) then gets one
 * Overlay.highlightNode: its node one of the fields, its selector
 * SHOT_SECRET_SEL (every field the rules name in that node's document or
 * shadow root), drawn opaque over content, padding and border. The
 * browser paints the overlay into Page.captureScreenshot above the page:
 * no page style (!important, inline, ::selection, -webkit-text-security)
 * reaches it, and the page's scripts can neither see nor remove it. It is
 * hidden right after the capture. Each frame process paints it in its
 * own next frame, so the capture waits until every masked frame that can
 * show in the image has drawn (mask_drawn): for a capture in the
 * viewport, not a frame whose iframe lies out of it (act_shot_view.c:
 * the browser does not draw a cross-site frame far out of view).
 *
 * One highlight per session can mask one node plus the selector's matches
 * in one document or shadow root: when the fields of a session are in two
 * documents or shadow roots, or two of them match no rule, or a frame
 * cannot be read, the screenshot is refused (fail closed). A plain form
 * control repeating a secret value is a field to mask (one matching no
 * rule); rendered text repeating one refuses (red team s12, W5).
 *
 * The browser evaluates the selector again when it paints, so the set
 * masked must be the set found (W6): each frame's search is kept in its
 * isolated world and watched (MutationObserver) until
 * snap_shot_mask_check, after the capture, searches again; the caller
 * discards an image taken while anything watched changed. The overlay
 * covers only the viewport: the caller refuses a capture beyond it while
 * any field is masked (act_page.c, W4).
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#include "snapshot/act_int.h"
#include "snapshot/page_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one secret-field rule (SNAP_JS_SECRET_KIND, page_js.h), as a CSS
 * selector: type=password on an input, the autocomplete hints on any
 * element (a textarea, a select, a contenteditable). */
#define SHOT_SECRET_SEL                                                                      \
    "input[type*=password i],[autocomplete*=password i],"                                    \
    "[autocomplete*=one-time-code i],[autocomplete*=cc- i]"

/* The secret fields with a value in the frame's document, and whether
 * the mask can cover all they paint.
 * Runs: in cdpgate's isolated world of a frame (executionContextId);
 * arguments: m (0 search, 1 anchor, 2 check, 3 stop), k, then k fields
 * noted secret in the document, then the session's secret elements from
 * a DOM snapshot (closed shadow roots included; those of other documents
 * of the session are skipped).
 * A field is one to mask when it has a value and paints it: a box of its
 * own, or for an element that is not a form control (a contenteditable),
 * any rendered descendant. A plain form control (open trees) whose value
 * is a secret field's (3 characters or more, white space and dashes
 * aside) is one to mask too (red team s12, W5: a "confirm your card"
 * mirror). bad (why the mask cannot cover them) when:
 * they are in several documents or shadow roots, two match no rule (two
 * mirrors), one paints without a box of its own (display:contents), one's
 * content paints outside its border box (overflow, a transformed or
 * positioned child, a negative indent: Range client rects; a text field
 * with overflow visible whose content is bigger than its box), a text
 * shadow in one (not a form control: those clip), an ancestor (flat tree)
 * reflects or filters it elsewhere (-webkit-box-reflect, a drop-shadow or
 * url() filter), a CSS animation or transition runs on one, in it or on
 * an ancestor (a style that changes with no DOM mutation), or rendered
 * text of the open trees holds a secret value of 6 characters or more
 * (W5).
 * m 0 also keeps the search (arguments, fields) in the world
 * (__cdpgateShot, unseen by the page) and watches, until m 2 or 3, every
 * open tree and the fields' roots (red team s12, W6): a change of any
 * type or autocomplete attribute, of an attribute of a field, of what is
 * in one, of an attribute of an ancestor, or a removal of a field or an
 * ancestor.
 * Returns: m 0 {n, bad ("" or why), names (at most 4 labels, page text),
 * own (the indices, among the snapshot's, of the elements of this
 * document)}; m 1 the element the highlight is anchored on (one matching
 * no rule if any), null if none or bad; m 2 true when nothing watched
 * changed and the same search finds the same fields (then stops
 * watching); m 3 stops watching. */
const char snap_js_shot_secrets_fn[] =
    "function(m,k){var R='" SHOT_SECRET_SEL "',g=globalThis,s=g.__cdpgateShot,"
    "A=[].slice.call(arguments,2),Q=document,L=[],S=[],U=[],nm=[],o=[],V=[],C=[],T=[],bad='',h=0;"
    "if(m>1){if(!s||s.d!==Q)return m>2;h=s.h||hit(s.o.takeRecords());"
    "s.o.disconnect();g.__cdpgateShot=null;if(m>2)return true;A=s.a;k=s.k}"
    "function hit(rs){for(var i=0;i<rs.length;i++){var x=rs[i],t=x.target,"
    "at=x.type==='attributes';if(at&&/^(type|autocomplete)$/.test(x.attributeName))return 1;"
    "for(var j=0;j<s.L.length;j++){var e=s.L[j];if(e.contains(t)||at&&t.contains(e))return 1;"
    "for(var q=0;q<x.removedNodes.length;q++)if(x.removedNodes[q].contains(e))return 1}}"
    "return 0}"
    "function ink(e){var c=/^(INPUT|TEXTAREA|SELECT)$/.test(e.tagName),G=getComputedStyle,"
    "O='the content of one paints outside its box',b=e.getClientRects().length,"
    "g=Q.createRange();g.selectNodeContents(e);"
    "var q=c?[]:g.getClientRects();if(!b&&!q.length)return '';"
    "for(var p=e;p;p=p.assignedSlot||p.parentElement||(p.parentNode&&p.parentNode.host)){"
    "var s=G(p);if(s.webkitBoxReflect&&s.webkitBoxReflect!=='none'||"
    "/drop-shadow|url\\(/.test(s.filter))return 'a page style paints a copy of one elsewhere';"
    "if(p.getAnimations({subtree:p===e}).some(function(a){return a.playState==='running'}))"
    "return 'a page animation runs on one or around it'}"
    "if(c){var o=G(e);return e.tagName!=='SELECT'&&(o.overflowX==='visible'||"
    "o.overflowY==='visible')&&(e.scrollWidth>e.clientWidth+1||e.scrollHeight>e.clientHeight+1)"
    "?O:''}if(!b)return 'one paints with no box of its own to cover';"
    "var B=e.getBoundingClientRect();"
    "for(var i=0;i<q.length;i++){var r=q[i];if(r.width&&r.height&&(r.left<B.left-1||"
    "r.top<B.top-1||r.right>B.right+1||r.bottom>B.bottom+1))return O}"
    "var D=e.querySelectorAll('*');if(D.length>500)return 'one holds too many elements';"
    "for(var j=-1;j<D.length;j++)if(G(j<0?e:D[j]).textShadow!=='none')"
    "return 'a text shadow paints one outside its box';return ''}"
    "function val(e){return e.tagName==='SELECT'?(e.selectedIndex>=0&&"
    "e.options[e.selectedIndex]?e.options[e.selectedIndex].text:''):"
    "typeof e.value==='string'?e.value:e.textContent}"
    "function nz(v){return String(v).replace(/[\\s-]+/g,'')}"
    "function add(e,u){if(!e||e.nodeType!==1||e.ownerDocument!==Q||L.indexOf(e)>=0)"
    "return;var v=val(e);if(!v)return;var w=ink(e);if(w)bad=bad||w;"
    "else if(!e.getClientRects().length)return;"
    "L.push(e);if(!u&&nz(v).length>2)V.push(nz(v));var r=e.getRootNode();"
    "if(S.indexOf(r)<0)S.push(r);if(u||!e.matches(R))U.push(e);if(nm.length<4){"
    "var l=e.labels&&e.labels.length?e.labels[0].innerText:"
    "(e.getAttribute('aria-label')||e.name||e.tagName.toLowerCase());"
    "nm.push(String(l||'').trim().slice(0,40))}}"
    "function walk(r,d){T.push(r);r.querySelectorAll(R).forEach(function(e){add(e)});"
    "r.querySelectorAll('input,textarea,select').forEach(function(x){C.push(x)});if(d<16)"
    "r.querySelectorAll('*').forEach(function(x){if(x.shadowRoot)walk(x.shadowRoot,d+1)})}"
    "function eq(a,b){return a.length===b.length&&a.every(function(x,i){return x===b[i]})}"
    "for(var i=0;i<A.length;i++){var x=A[i];"
    "if(i>=k&&x&&x.nodeType===1&&x.ownerDocument===Q)o.push(i-k);add(x)}"
    "walk(Q,0);if(V.length){C.forEach(function(x){if(V.indexOf(nz(val(x)))>=0)add(x,1)});"
    "for(var i=0;i<T.length&&!bad;i++){var tw=Q.createTreeWalker(T[i],4),n,p,d;"
    "while(!bad&&(n=tw.nextNode())){p=n.parentElement;d=nz(n.data);"
    "if(d.length>5&&p&&V.some(function(v){return v.length>5&&d.indexOf(v)>=0})&&"
    "!L.some(function(e){return e.contains(n)})&&p.getClientRects().length)"
    "bad='a secret value is repeated in the page\\'s text'}}}"
    "bad=bad||(S.length>1?'in several documents or shadow roots of one frame':"
    "U.length>1?'a secret value is repeated in plain fields, or several fields turned plain'"
    ":'');"
    "if(m>1)return !h&&bad===s.bad&&eq(L,s.L)&&eq(U,s.U);"
    "if(m)return L.length&&!bad?(U[0]||L[0]):null;if(s)s.o.disconnect();"
    "s={d:Q,a:A,k:k,L:L,U:U,bad:bad,h:0};"
    "s.o=new MutationObserver(function(rs){if(hit(rs))s.h=1});"
    "T.concat(S).forEach(function(r){s.o.observe(r,{subtree:true,childList:true,"
    "attributes:true,characterData:true})});g.__cdpgateShot=s;"
    "return{n:L.length,bad:bad,names:nm,own:o}}";

/* Whether the element is a secret field by the rules. Runs: on a node
 * (the element of a screenshot's ref). Returns: true or false. */
const char snap_js_shot_is_secret_fn[] =
    "function(){return this.nodeType===1&&this.matches('" SHOT_SECRET_SEL "');}";

#define SHOT_MASK_CONFIG                                                                     \
    "{\"showInfo\":false,\"showStyles\":false,\"showRulers\":false,"                         \
    "\"showExtensionLines\":false,\"contentColor\":{\"r\":128,\"g\":128,\"b\":128,\"a\":1},"  \
    "\"paddingColor\":{\"r\":128,\"g\":128,\"b\":128,\"a\":1},"                              \
    "\"borderColor\":{\"r\":128,\"g\":128,\"b\":128,\"a\":1}}"

#define SHOT_FRAMES_MAX SNAP_SHOT_FRAMES_MAX
#define SHOT_KNOWN_MAX 32       /* remembered secrets looked at per frame */
#define SHOT_DOM_MAX 256        /* secret elements of one session's DOM snapshot */

typedef struct {
    char id[SNAP_ID_MAX];
    char session[SNAP_ID_MAX];
    char loader[SNAP_ID_MAX];
    char origin[256];
} shot_frame;

/* The fields of one frame's search: those noted secret in its document
 * (be) and every secret element of its session's DOM snapshot (ds, own:
 * set for those some frame's search found in its document). */
typedef struct {
    int be[SHOT_KNOWN_MAX];
    size_t nb;
    const int *ds;
    size_t nd;
} shot_ids;

typedef struct {
    char session[SNAP_ID_MAX];
    int *ids;
    size_t n;
    unsigned char *own;
} shot_sess;

static void arg_int(json_w *w, int v)
{
    json_w_obj_begin(w);
    json_w_key(w, "value");
    json_w_int(w, v);
    json_w_obj_end(w);
}

/* Call snap_js_shot_secrets_fn (mode m) in world with the fields of ids
 * resolved into it. 0 and pc filled, or -1. */
static int mask_call(snap_agent *a, const shot_frame *f, int64_t world, const shot_ids *ids,
                     int m, bool by_value, pcall *pc)
{
    size_t n = ids->nb + ids->nd;
    pcall *rs = calloc(n ? n : 1, sizeof *rs);
    if (!rs)
        return -1;
    for (size_t i = 0; i < n; i++)
        snap_act_psend_p(a, f->session, "DOM.resolveNode",
                         snap_act_params("isi", "backendNodeId",
                                         i < ids->nb ? ids->be[i] : ids->ds[i - ids->nb],
                                         "objectGroup", ACT_GROUP,
                                         "executionContextId", (int)world),
                         &rs[i]);
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    arg_int(&w, m);
    arg_int(&w, (int)ids->nb);
    /* A node gone, or of another frame's document, is passed as null. */
    snap_act_args_resolved(a, rs, n, &w);
    json_w_arr_end(&w);
    free(rs);
    char *args = json_w_take(&w, NULL);
    if (!args)
        return -1;
    int rc = snap_act_call(a, f->session, "Runtime.callFunctionOn",
                           snap_act_params("sirbs", "functionDeclaration", snap_js_shot_secrets_fn,
                                           "executionContextId", (int)world, "arguments", args,
                                           "returnByValue", by_value, "objectGroup", ACT_GROUP),
                           pc);
    free(args);
    if (rc || json_get(pc->rep.result, "exceptionDetails")) {
        snap_act_pfree(pc);
        return -1;
    }
    return 0;
}

static bool mask_has(const snap_shot_mask *m, const char *session)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->s[i], session) == 0)
            return true;
    return false;
}

/* Highlight the anchor (and SHOT_SECRET_SEL's matches) opaque in
 * f->session. 0, or -1 (the caller refuses). */
static int mask_paint(snap_agent *a, const shot_frame *f, int64_t world, const shot_ids *ids,
                      snap_shot_mask *m)
{
    pcall pc;
    if (mask_call(a, f, world, ids, 1, false, &pc))
        return -1;
    const char *oid = snap_act_fn_object(&pc);
    char anchor[SNAP_ID_MAX];
    snprintf(anchor, sizeof anchor, "%s", oid ? oid : "");
    snap_act_pfree(&pc);
    if (!*anchor || m->n >= SNAP_SHOT_MASK_MAX)
        return -1;
    m->sw[m->n] = world;
    snprintf(m->f[m->n], SNAP_ID_MAX, "%s", f->id);
    m->nf[m->n] = 0;
    snprintf(m->s[m->n++], SNAP_ID_MAX, "%s", f->session);
    int rc = snap_act_call0(a, f->session, "DOM.enable", &pc);
    snap_act_pfree(&pc);
    if (!rc) {
        rc = snap_act_call0(a, f->session, "Overlay.enable", &pc);
        snap_act_pfree(&pc);
    }
    if (!rc) {
        rc = snap_act_call(a, f->session, "Overlay.highlightNode",
                           snap_act_params("rss", "highlightConfig", SHOT_MASK_CONFIG,
                                           "objectId", anchor, "selector", SHOT_SECRET_SEL),
                           &pc);
        snap_act_pfree(&pc);
    }
    return rc ? -1 : 0;
}

static int mask_refuse(snap_agent *a, snap_shot_mask *m, snap_result *r, const shot_frame *f,
                       const json_val *names, const char *why)
{
    snap_shot_mask_off(a, m);
    base_buf b = {0};
    base_buf_printf(&b, "screenshot refused: ");
    if (names) {
        base_buf_printf(&b, "secret fields with a value are on the page (");
        size_t k = 0;
        for (const json_val *x = json_first(names); x; x = json_next(x), k++) {
            if (k)
                base_buf_printf(&b, ", ");
            snap_act_sb_quoted(&b, json_str(x, NULL), 40);
        }
        base_buf_printf(&b, ") in the frame of ");
        snap_act_sb_url(&b, f->origin, 120);
        base_buf_printf(&b, " and cannot all be masked (%s): a screenshot would show "
                        "their values; the snapshot shows the page without them", why);
    } else {
        base_buf_printf(&b, "the frame of ");
        snap_act_sb_url(&b, f->origin, 120);
        base_buf_printf(&b, " could not be searched for secret fields (%s), so a "
                        "screenshot could show their values", why);
    }
    int rc = snap_act_fail(r, SNAP_EDENIED, "%s", b.s ? b.s : "screenshot refused");
    free(b.s);
    return rc;
}

/* One frame: nothing to mask, masked, or refused (the masks so far off). */
static int mask_frame(snap_agent *a, int tab_id, const shot_frame *f, snap_shot_mask *m,
                      session_set *ss, shot_sess *sd, snap_result *r)
{
    shot_ids ids = {.ds = sd->ids, .nd = sd->n};
    int be[SHOT_KNOWN_MAX + 1];
    ids.nb = snap_secret_list(a, tab_id, f->id, f->loader, be, SHOT_KNOWN_MAX + 1);
    if (ids.nb > SHOT_KNOWN_MAX)
        return mask_refuse(a, m, r, f, NULL, "too many fields were noted secret");
    memcpy(ids.be, be, ids.nb * sizeof *be);
    pcall pc;
    int64_t world = 0;
    int tries = 0;
    snap_act_sessions_note(ss, f->session);
    do {
        /* A world found gone (its document replaced) is made again, once. */
        if (tries)
            snap_frame_world_forget(a, tab_id, f->id);
        world = snap_frame_world(a, tab_id, f->id);
        if (world <= 0)
            return mask_refuse(a, m, r, f, NULL, "no isolated world");
    } while (mask_call(a, f, world, &ids, 0, true, &pc) && ++tries < 2);
    if (tries == 2)
        return mask_refuse(a, m, r, f, NULL, "the search failed");
    if (m->nw < SNAP_SHOT_FRAMES_MAX) {
        snprintf(m->w[m->nw].session, SNAP_ID_MAX, "%s", f->session);
        m->w[m->nw++].world = world;
    }
    const json_val *v = snap_act_fn_value(&pc);
    int64_t cnt = 0;
    json_int(json_get(v, "n"), &cnt);
    const char *bad = json_get_str(v, "bad");
    for (const json_val *x = json_first(json_get(v, "own")); x; x = json_next(x)) {
        int64_t j = -1;
        if (json_int(x, &j) && j >= 0 && (size_t)j < sd->n)
            sd->own[j] = 1;
    }
    int rc = 0;
    if (!v || cnt < 0 || !bad)
        rc = mask_refuse(a, m, r, f, NULL, "no answer");
    else if (cnt && *bad)
        rc = mask_refuse(a, m, r, f, json_get(v, "names"), bad);
    else if (cnt && mask_has(m, f->session))
        rc = mask_refuse(a, m, r, f, json_get(v, "names"),
                         "another frame of the same process has some too");
    else if (cnt && mask_paint(a, f, world, &ids, m))
        rc = mask_refuse(a, m, r, f, json_get(v, "names"), "the mask could not be set");
    else if (cnt) {
        m->fields += (int)cnt;
        m->nf[m->n - 1] = (int)cnt;
    }
    snap_act_pfree(&pc);
    return rc;
}

/* Add the frame ids of a Page.getFrameTree node to live[] (at most max). */
static void live_add(const json_val *node, char (*live)[SNAP_ID_MAX], size_t *n, size_t max,
                     int depth)
{
    const char *id = json_get_str(json_get(node, "frame"), "id");
    if (id && *n < max)
        snprintf(live[(*n)++], SNAP_ID_MAX, "%s", id);
    for (const json_val *c = json_first(json_get(node, "childFrames")); c && depth < 32;
         c = json_next(c))
        live_add(c, live, n, max, depth + 1);
}

/* The frames of fr[nf] the browser has in the page now (each session's
 * frame tree): the others are gone (a child of a replaced document that
 * the frame table still lists) and cannot be painted. 0 with fr[] cut to
 * those, or -1 (a tree could not be read, or a frame is not in fr[]). */
static int live_frames(snap_agent *a, shot_frame *fr, size_t *nf)
{
    session_set ss = {0};
    for (size_t i = 0; i < *nf; i++) {
        snap_act_sessions_note(&ss, fr[i].session);
        if (strcmp(ss.s[ss.n - 1], fr[i].session) != 0 && ss.n == MAX_SESSIONS) {
            bool in = false;    /* the set is full: this session was not added */
            for (size_t j = 0; j < ss.n && !in; j++)
                in = strcmp(ss.s[j], fr[i].session) == 0;
            if (!in)
                return -1;
        }
    }
    pcall pc[MAX_SESSIONS];
    for (size_t i = 0; i < ss.n; i++)
        snap_act_psend_p(a, ss.s[i], "Page.getFrameTree", snap_act_params(""), &pc[i]);
    char (*live)[SNAP_ID_MAX] = calloc(SHOT_FRAMES_MAX * 2, sizeof *live);
    size_t nl = 0;
    int rc = live ? 0 : -1;
    for (size_t i = 0; i < ss.n; i++) {
        if (snap_act_pwait(a, &pc[i]))
            rc = -1;
        else if (live)
            live_add(json_get(pc[i].rep.result, "frameTree"), live, &nl, SHOT_FRAMES_MAX * 2, 0);
        snap_act_pfree(&pc[i]);
    }
    size_t k = 0;
    for (size_t i = 0; !rc && i < *nf; i++) {
        bool on = false;
        for (size_t j = 0; j < nl && !on; j++)
            on = strcmp(live[j], fr[i].id) == 0;
        if (on)
            fr[k++] = fr[i];
    }
    /* Every frame in the page is one cdpgate knows (a new one not yet seen
     * could hold secret fields: fail closed). */
    for (size_t j = 0; !rc && j < nl; j++) {
        bool known = false;
        for (size_t i = 0; i < k && !known; i++)
            known = strcmp(live[j], fr[i].id) == 0;
        if (!known)
            rc = -1;
    }
    free(live);
    if (!rc)
        *nf = k;
    return rc;
}

/* The secret elements of each session of the frames fr[nf], from a DOM
 * snapshot of each (red team s12, W2: a field in a closed shadow root is
 * not in any tree the page's scripts, or cdpgate's isolated world, can
 * search). sd[] gets one entry per session, *nsd their number. 0, or a
 * refusal in r. */
static int sess_read(snap_agent *a, const shot_frame *fr, size_t nf, shot_sess *sd,
                     size_t *nsd, snap_result *r)
{
    for (size_t i = 0; i < nf; i++) {
        size_t k = 0;
        while (k < *nsd && strcmp(sd[k].session, fr[i].session) != 0)
            k++;
        if (k < *nsd)
            continue;
        shot_sess *x = &sd[(*nsd)++];
        snprintf(x->session, sizeof x->session, "%s", fr[i].session);
        if (snap_dom_secret_ids(a, x->session, &x->ids, &x->n))
            return snap_act_fail(r, SNAP_EDENIED, "screenshot refused: the DOM of the frame "
                                 "of %s could not be read to find its secret fields",
                                 fr[i].origin);
        if (x->n > SHOT_DOM_MAX)
            return snap_act_fail(r, SNAP_EDENIED, "screenshot refused: the page has more "
                                 "than %d secret fields, too many to mask", SHOT_DOM_MAX);
        x->own = calloc(x->n ? x->n : 1, 1);
        if (!x->own)
            return snap_act_fail(r, SNAP_ENOMEM, "out of memory");
    }
    return 0;
}

static shot_sess *sess_of(shot_sess *sd, size_t nsd, const char *session)
{
    for (size_t k = 0; k < nsd; k++)
        if (strcmp(sd[k].session, session) == 0)
            return &sd[k];
    return NULL;
}

/* Every secret element of the DOM snapshots was found in a frame's
 * document: one that was not (its document is not a frame cdpgate
 * searched, or it could not be resolved) refuses. 0 or the refusal. */
static int sess_check(snap_agent *a, snap_shot_mask *m, const shot_sess *sd, size_t nsd,
                      snap_result *r)
{
    for (size_t k = 0; k < nsd; k++)
        for (size_t j = 0; j < sd[k].n; j++)
            if (!sd[k].own[j]) {
                snap_shot_mask_off(a, m);
                return snap_act_fail(r, SNAP_EDENIED, "screenshot refused: a secret field of "
                                     "the page is in no document that could be searched, so "
                                     "it could not be masked; try again");
            }
    return 0;
}

/* Resolves 1 once the frame has begun three animation frames after its
 * mask was set (the frame that painted it committed and drawn), 0 after
 * 3 s without (a frame that does not draw).
 * Runs: in cdpgate's isolated world of a masked frame, awaited. */
const char snap_js_shot_drawn_expr[] =
    "new Promise(function(r){setTimeout(function(){r(0)},3000);"
    "requestAnimationFrame(function(){requestAnimationFrame(function(){"
    "requestAnimationFrame(function(){r(1)})})})})";

/* Each masked frame that can show drew its mask before the capture. The
 * overlay is painted by the frame's own renderer in its next frame; the
 * capture redraws the tab's top frame only and takes an out-of-process
 * frame as it last drew: a frame whose renderer was busy when the mask
 * was set was captured with its secret values painted (test_gate_accept
 * red_shot_secret_regression, a cross-site frame with long tasks). For a
 * capture in the viewport (in_view), a frame whose iframe (or an outer
 * one) lies out of the viewport need not draw: it is watched until after
 * the capture instead (act_shot_view.c). 0, or the refusal (the masks
 * off). */
static int mask_drawn(snap_agent *a, int tab_id, bool in_view, snap_shot_mask *m,
                      session_set *ss, snap_result *r)
{
    pcall pc[SNAP_SHOT_MASK_MAX];
    bool wait[SNAP_SHOT_MASK_MAX];
    for (size_t i = 0; i < m->n; i++) {
        /* Read again each round: the tab array moves during calls. */
        snap_tab *t = snap_tab_by_id(a, tab_id);
        snap_frame *f = t ? snap_frame_find(t, m->f[i]) : NULL;
        wait[i] = !(in_view && f && f->parent[0] &&
                    snap_shot_view_out(a, tab_id, m->f[i], m, ss));
        if (!wait[i])
            m->out += m->nf[i];
    }
    for (size_t i = 0; i < m->n; i++)
        if (wait[i])
            snap_act_psend_p(a, m->s[i], "Runtime.evaluate",
                             snap_act_params("sbbi", "expression", snap_js_shot_drawn_expr,
                                             "awaitPromise", true, "returnByValue", true,
                                             "contextId", (int)m->sw[i]),
                             &pc[i]);
    bool drawn = true;
    for (size_t i = 0; i < m->n; i++) {
        if (!wait[i])
            continue;
        const json_val *v = snap_act_pwait(a, &pc[i]) ? NULL : snap_act_fn_value(&pc[i]);
        int64_t one = 0;
        if (!v || !json_int(v, &one) || one != 1)
            drawn = false;
        snap_act_pfree(&pc[i]);
    }
    if (drawn)
        return 0;
    snap_shot_mask_off(a, m);
    return snap_act_fail(r, SNAP_EDENIED, "screenshot refused: a frame with secret fields "
                         "that can show in the image did not draw the mask over them within "
                         "3 s (it is too busy, or does not render), so the image could show "
                         "their values; try again, or take the viewport (or a part of it) "
                         "with the frame wholly out of view (a full page or a capture beyond "
                         "the viewport cannot leave it out)");
}

int snap_shot_mask_on(snap_agent *a, int tab_id, bool in_view, snap_shot_mask *m,
                      snap_result *r)
{
    memset(m, 0, sizeof *m);
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t)
        return snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
    /* Copied out: the frame array moves when a frame appears meanwhile. */
    shot_frame *fr = calloc(SHOT_FRAMES_MAX, sizeof *fr);
    if (!fr)
        return snap_act_fail(r, SNAP_ENOMEM, "out of memory");
    size_t nf = 0;
    bool over = false;
    for (size_t i = 0; i < t->nframes; i++) {
        if (t->frames[i].gone)
            continue;
        if (nf == SHOT_FRAMES_MAX) {
            over = true;
            break;
        }
        snprintf(fr[nf].id, sizeof fr[nf].id, "%s", t->frames[i].id);
        snprintf(fr[nf].session, sizeof fr[nf].session, "%s", t->frames[i].session);
        snprintf(fr[nf].loader, sizeof fr[nf].loader, "%s", t->frames[i].loader);
        snprintf(fr[nf].origin, sizeof fr[nf].origin, "%s", t->frames[i].origin);
        nf++;
    }
    int rc = over ? snap_act_fail(r, SNAP_EDENIED, "screenshot refused: the page has more "
                                  "than %d frames, too many to search for secret fields",
                                  SHOT_FRAMES_MAX)
                  : 0;
    if (!rc && live_frames(a, fr, &nf))
        rc = snap_act_fail(r, SNAP_EDENIED, "screenshot refused: the frames of the page could "
                           "not all be read (one is new or its process does not answer), so "
                           "secret fields in them could not be masked; try again");
    m->tab_id = tab_id;
    for (size_t i = 0; !rc && i < nf; i++)
        snprintf(m->fid[m->nfid++], SNAP_ID_MAX, "%s", fr[i].id);
    shot_sess *sd = calloc(SHOT_FRAMES_MAX, sizeof *sd);
    size_t nsd = 0;
    if (!rc && !sd)
        rc = snap_act_fail(r, SNAP_ENOMEM, "out of memory");
    if (!rc)
        rc = sess_read(a, fr, nf, sd, &nsd, r);
    session_set ss = {0};
    for (size_t i = 0; !rc && i < nf; i++)
        rc = mask_frame(a, tab_id, &fr[i], m, &ss, sess_of(sd, nsd, fr[i].session), r);
    if (!rc)
        rc = sess_check(a, m, sd, nsd, r);
    if (!rc && m->n)
        rc = mask_drawn(a, tab_id, in_view, m, &ss, r);
    snap_act_sessions_release(a, &ss);
    for (size_t k = 0; sd && k < nsd; k++) {
        free(sd[k].ids);
        free(sd[k].own);
    }
    free(sd);
    free(fr);
    return rc;
}

/* The parameters of snap_js_shot_secrets_fn in mode md (2 check, 3 stop)
 * in world: no fields (the world kept the search's). */
static char *mask_mode_params(int md, int64_t world)
{
    char args[64];
    snprintf(args, sizeof args, "[{\"value\":%d},{\"value\":0}]", md);
    return snap_act_params("sirbs", "functionDeclaration", snap_js_shot_secrets_fn,
                           "executionContextId", (int)world, "arguments", args,
                           "returnByValue", true, "objectGroup", ACT_GROUP);
}

/* Whether the tab's frames now are all ones the search looked in: a frame
 * that first loaded after it (a loading=lazy iframe loads when a crop
 * scrolls it into view; a frame the page's scroll handler adds) holds
 * fields nobody searched, a prefilled password field of its own page
 * (gate21). 0, or 1 (a new frame, or it could not be told). */
static int frames_new(snap_agent *a, const snap_shot_mask *m)
{
    snap_tab *t = snap_tab_by_id(a, m->tab_id);
    shot_frame *fr = t ? calloc(SHOT_FRAMES_MAX, sizeof *fr) : NULL;
    if (!fr)
        return 1;
    size_t nf = 0;
    int rc = 0;
    for (size_t i = 0; i < t->nframes && !rc; i++) {
        if (t->frames[i].gone)
            continue;
        if (nf == SHOT_FRAMES_MAX)
            rc = 1;
        else {
            snprintf(fr[nf].id, sizeof fr[nf].id, "%s", t->frames[i].id);
            snprintf(fr[nf].session, sizeof fr[nf].session, "%s", t->frames[i].session);
            nf++;
        }
    }
    if (!rc && live_frames(a, fr, &nf))
        rc = 1;     /* a frame the table does not list yet, or a tree not read */
    for (size_t i = 0; i < nf && !rc; i++) {
        bool searched = false;
        for (size_t j = 0; j < m->nfid && !searched; j++)
            searched = strcmp(m->fid[j], fr[i].id) == 0;
        if (!searched)
            rc = 1;
    }
    free(fr);
    return rc;
}

int snap_shot_mask_check(snap_agent *a, snap_shot_mask *m)
{
    pcall pc[SNAP_SHOT_FRAMES_MAX];
    for (size_t i = 0; i < m->nw; i++)
        snap_act_psend_p(a, m->w[i].session, "Runtime.callFunctionOn",
                         mask_mode_params(2, m->w[i].world), &pc[i]);
    int changed = 0;
    for (size_t i = 0; i < m->nw; i++) {
        if (snap_act_pwait(a, &pc[i]) || json_get(pc[i].rep.result, "exceptionDetails") ||
            !json_is(snap_act_fn_value(&pc[i]), JSON_TRUE))
            changed = 1;
        snap_act_pfree(&pc[i]);
    }
    m->nw = 0;      /* each world stopped watching */
    if (frames_new(a, m))
        changed = 1;
    return snap_shot_view_check(a, m) || changed;
}

void snap_shot_mask_off(snap_agent *a, snap_shot_mask *m)
{
    snap_shot_view_off(a, m);
    for (size_t i = 0; i < m->nw; i++)
        snap_act_send_forget(a, m->w[i].session, "Runtime.callFunctionOn",
                             mask_mode_params(3, m->w[i].world));
    m->nw = 0;
    for (size_t i = 0; i < m->n; i++) {
        snap_act_send_forget(a, m->s[i], "Overlay.hideHighlight", snap_act_params(""));
        snap_act_send_forget(a, m->s[i], "Overlay.disable", snap_act_params(""));
        snap_act_send_forget(a, m->s[i], "DOM.disable", snap_act_params(""));
    }
    m->n = 0;
}

/* The i-th secret field a frame's search keeps (its world's
 * __cdpgateShot), null past the last or when the search is gone.
 * Runs: in cdpgate's isolated world of a masked frame; argument i. */
const char snap_js_shot_field_fn[] =
    "function(i){var s=globalThis.__cdpgateShot;return s&&s.d===document&&s.L[i]||null}";

/* Whether the border box of field i of masked frame k (in the tab's
 * top-level viewport px, its frames' offsets added) meets the rectangle
 * x0, y0, x1, y1 there. 1 meets, 0 does not, 2 no such field, -1 cannot
 * be told. */
static int field_meets(snap_agent *a, const snap_shot_mask *m, size_t k, int i, double ox,
                       double oy, const double q[4])
{
    char args[64];
    snprintf(args, sizeof args, "[{\"value\":%d}]", i);
    pcall pc, bm;
    if (snap_act_call(a, m->s[k], "Runtime.callFunctionOn",
                      snap_act_params("sirbs", "functionDeclaration", snap_js_shot_field_fn,
                                      "executionContextId", (int)m->sw[k], "arguments", args,
                                      "returnByValue", false, "objectGroup", ACT_GROUP),
                      &pc)) {
        snap_act_pfree(&pc);
        return -1;
    }
    const json_val *res = json_get(pc.rep.result, "result");
    if (json_get(pc.rep.result, "exceptionDetails")) {
        snap_act_pfree(&pc);
        return -1;
    }
    const char *o = json_get_str(res, "objectId");
    char oid[SNAP_ID_MAX];
    snprintf(oid, sizeof oid, "%s", o && strlen(o) < SNAP_ID_MAX ? o : "");
    bool none = !o && json_is(json_get(res, "value"), JSON_NULL);
    snap_act_pfree(&pc);
    if (!*oid)
        return none ? 2 : -1;
    int rc = snap_act_call(a, m->s[k], "DOM.getBoxModel", snap_act_params("s", "objectId", oid),
                           &bm);
    const json_val *b = rc ? NULL : json_get(json_get(bm.rep.result, "model"), "border");
    double x0 = 1e18, y0 = 1e18, x1 = -1e18, y1 = -1e18;
    size_t n = 0;
    for (const json_val *v = json_first(b); v; v = json_next(v), n++) {
        double d = json_num(v) + (n % 2 ? oy : ox);
        if (n % 2 == 0)
            x0 = snap_act_dmin(x0, d), x1 = snap_act_dmax(x1, d);
        else
            y0 = snap_act_dmin(y0, d), y1 = snap_act_dmax(y1, d);
    }
    snap_act_pfree(&bm);
    snap_act_release_object(a, m->s[k], oid);
    /* The browser's "no box": not rendered (display:none since), cannot
     * show. Any other failure (no answer in time, a dialog holds the page,
     * the frame went): it cannot be told: it meets (review s21, S4). */
    if (rc)
        return rc == CDP_EPROTOCOL ? 0 : -1;
    if (n < 8)
        return -1;
    return x0 < q[2] && x1 > q[0] && y0 < q[3] && y1 > q[1];
}

bool snap_shot_mask_meets(snap_agent *a, const snap_shot_mask *m, double x, double y, double w,
                          double h)
{
    snap_tab *t = snap_tab_by_id(a, m->tab_id);
    if (!t)
        return true;
    char top[SNAP_ID_MAX];
    snprintf(top, sizeof top, "%s", t->session);
    /* A margin: the capture's pixels round outwards. */
    const double q[4] = {x - 2, y - 2, x + w + 2, y + h + 2};
    for (size_t k = 0; k < m->n; k++) {
        double ox = 0, oy = 0, clip[4];
        if (strcmp(m->s[k], top) != 0) {
            snap_result r;
            memset(&r, 0, sizeof r);
            int rc = snap_act_frame_origin(a, m->tab_id, m->f[k], "a secret field", &ox, &oy,
                                           clip, &r);
            snap_result_free(&r);
            if (rc)
                return true;
        }
        for (int i = 0;; i++) {
            if (i == 64)
                return true;
            int got = field_meets(a, m, k, i, ox, oy, q);
            if (got == 2)
                break;
            if (got)
                return true;
        }
    }
    return false;
}

/* Whether the element behind a screenshot's ref is a secret field: noted
 * secret in its document, or by the rules now. true when it cannot be
 * told (fail closed). */
bool snap_shot_ref_secret(snap_agent *a, int tab_id, const char *frame_id, int backend,
                          const char *session, const char *oid)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    snap_frame *f = t ? snap_frame_find(t, frame_id) : NULL;
    if (!f)
        return true;
    if (snap_secret_kind(a, tab_id, f->id, f->loader, backend))
        return true;
    pcall pc;
    if (snap_act_call(a, session, "Runtime.callFunctionOn",
                      snap_act_fn_params(oid, snap_js_shot_is_secret_fn, NULL, true, false), &pc))
    {
        snap_act_pfree(&pc);
        return true;
    }
    const json_val *v = snap_act_fn_value(&pc);
    bool secret = !v || !json_is(v, JSON_FALSE);
    snap_act_pfree(&pc);
    return secret;
}
