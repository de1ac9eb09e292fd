/*
 * act_shot_mask.c — a screenshot never shows a secret field's value: the
 * fields are masked for the capture by an opaque DevTools overlay, or the
 * screenshot is refused (issue 13, red team s11 S1).
 *
 * Before a capture, in every frame of the tab (out-of-process frames
 * too), cdpgate's isolated world lists the secret fields with a value and
 * a box: those the snapshot's rules name (SHOT_SECRET_SEL) and every node
 * cdpgate noted secret in that document (snap_secret_note: a password the
 * page turned into text). Each frame process (CDP session) then gets one
 * Overlay.highlightNode: its node one of the fields, its selector
 * SHOT_SECRET_SEL (every field the rules name in that node's document or
 * shadow root), drawn opaque over content, padding and border. The
 * browser paints the overlay into Page.captureScreenshot above the page:
 * no page style (!important, inline, ::selection, -webkit-text-security)
 * reaches it, and the page's scripts can neither see nor remove it. It is
 * hidden right after the capture.
 *
 * One highlight per session can mask one node plus the selector's matches
 * in one document or shadow root: when the fields of a session are in two
 * documents or shadow roots, or two of them match no rule, or a frame
 * cannot be read, the screenshot is refused (fail closed).
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#include "snapshot/act_int.h"
#include "snapshot/page_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The snapshot's DOM rules for a secret field (observe_dom.c), as a CSS
 * selector: type=password on an input, the autocomplete hints on any
 * element (a textarea, a select, a contenteditable). */
#define SHOT_SECRET_SEL                                                                      \
    "input[type*=password i],[autocomplete*=one-time-code i],"                               \
    "[autocomplete*=current-password i],[autocomplete*=new-password i],"                     \
    "[autocomplete*=cc- i]"

/* The secret fields with a value and a box in the frame's document.
 * Runs: in cdpgate's isolated world of a frame (executionContextId);
 * arguments: m (0 or 1), then the fields noted secret in the document.
 * Returns: m 0 {n, bad ("" or why they cannot be masked), names (at most
 * 4 labels, page text)}; m 1 the element the highlight is anchored on
 * (one matching no rule if any), null if none or bad. */
const char snap_js_shot_secrets_fn[] =
    "function(m){var R='" SHOT_SECRET_SEL "',L=[],S=[],U=[],nm=[];"
    "function add(e){if(!e||e.nodeType!==1||L.indexOf(e)>=0)return;"
    "var v=e.tagName==='SELECT'?(e.selectedIndex>=0&&e.options[e.selectedIndex]?"
    "e.options[e.selectedIndex].text:''):(typeof e.value==='string'?e.value:e.textContent);"
    "if(!v||!e.getClientRects().length)return;L.push(e);var r=e.getRootNode();"
    "if(S.indexOf(r)<0)S.push(r);if(!e.matches(R))U.push(e);if(nm.length<4){"
    "var l=e.labels&&e.labels.length?e.labels[0].innerText:"
    "(e.getAttribute('aria-label')||e.name||e.tagName.toLowerCase());"
    "nm.push(String(l||'').trim().slice(0,40));}}"
    "function walk(r,d){r.querySelectorAll(R).forEach(add);if(d<16)"
    "r.querySelectorAll('*').forEach(function(x){if(x.shadowRoot)walk(x.shadowRoot,d+1);});}"
    "for(var i=1;i<arguments.length;i++)add(arguments[i]);walk(document,0);"
    "var bad=S.length>1?'in several documents or shadow roots of one frame':"
    "U.length>1?'several were turned from secret fields into plain ones':'';"
    "if(m)return L.length&&!bad?(U[0]||L[0]):null;return{n:L.length,bad:bad,names:nm};}";

/* Whether the element is a secret field by the rules. Runs: on a node
 * (the element of a screenshot's ref). Returns: true or false. */
const char snap_js_shot_is_secret_fn[] =
    "function(){return this.nodeType===1&&this.matches('" SHOT_SECRET_SEL "');}";

#define SHOT_MASK_CONFIG                                                                     \
    "{\"showInfo\":false,\"showStyles\":false,\"showRulers\":false,"                         \
    "\"showExtensionLines\":false,\"contentColor\":{\"r\":128,\"g\":128,\"b\":128,\"a\":1},"  \
    "\"paddingColor\":{\"r\":128,\"g\":128,\"b\":128,\"a\":1},"                              \
    "\"borderColor\":{\"r\":128,\"g\":128,\"b\":128,\"a\":1}}"

#define SHOT_FRAMES_MAX 64
#define SHOT_KNOWN_MAX 32       /* remembered secrets looked at per frame */

typedef struct {
    char id[SNAP_ID_MAX];
    char session[SNAP_ID_MAX];
    char loader[SNAP_ID_MAX];
    char origin[256];
} shot_frame;

/* Call snap_js_shot_secrets_fn (mode m) in world with the remembered
 * fields be[n] resolved into it. 0 and pc filled, or -1. */
static int mask_call(snap_agent *a, const shot_frame *f, int64_t world, const int *be,
                     size_t n, int m, bool by_value, pcall *pc)
{
    pcall rs[SHOT_KNOWN_MAX];
    for (size_t i = 0; i < n; i++)
        snap_act_psend_p(a, f->session, "DOM.resolveNode",
                         snap_act_params("isi", "backendNodeId", be[i], "objectGroup", ACT_GROUP,
                                         "executionContextId", (int)world),
                         &rs[i]);
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "value");
    json_w_int(&w, m);
    json_w_obj_end(&w);
    snap_act_args_resolved(a, rs, n, &w); /* a node gone is no field to mask */
    json_w_arr_end(&w);
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
static int mask_paint(snap_agent *a, const shot_frame *f, int64_t world, const int *be,
                      size_t n, snap_shot_mask *m)
{
    pcall pc;
    if (mask_call(a, f, world, be, n, 1, false, &pc))
        return -1;
    const char *oid = snap_act_fn_object(&pc);
    char anchor[SNAP_ID_MAX];
    snprintf(anchor, sizeof anchor, "%s", oid ? oid : "");
    snap_act_pfree(&pc);
    if (!*anchor || m->n >= SNAP_SHOT_MASK_MAX)
        return -1;
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
                      session_set *ss, snap_result *r)
{
    int be[SHOT_KNOWN_MAX];
    size_t n = snap_secret_list(a, tab_id, f->id, f->loader, be, SHOT_KNOWN_MAX);
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
    } while (mask_call(a, f, world, be, n, 0, true, &pc) && ++tries < 2);
    if (tries == 2)
        return mask_refuse(a, m, r, f, NULL, "the search failed");
    const json_val *v = snap_act_fn_value(&pc);
    int64_t cnt = 0;
    json_int(json_get(v, "n"), &cnt);
    const char *bad = json_get_str(v, "bad");
    int rc = 0;
    if (!v || cnt < 0 || !bad)
        rc = mask_refuse(a, m, r, f, NULL, "no answer");
    else if (cnt && *bad)
        rc = mask_refuse(a, m, r, f, json_get(v, "names"), bad);
    else if (cnt && mask_has(m, f->session))
        rc = mask_refuse(a, m, r, f, json_get(v, "names"),
                         "another frame of the same process has some too");
    else if (cnt && mask_paint(a, f, world, be, n, m))
        rc = mask_refuse(a, m, r, f, json_get(v, "names"), "the mask could not be set");
    else
        m->fields += (int)cnt;
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

int snap_shot_mask_on(snap_agent *a, int tab_id, snap_shot_mask *m, snap_result *r)
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
    session_set ss = {0};
    for (size_t i = 0; !rc && i < nf; i++)
        rc = mask_frame(a, tab_id, &fr[i], m, &ss, r);
    snap_act_sessions_release(a, &ss);
    free(fr);
    return rc;
}

void snap_shot_mask_off(snap_agent *a, snap_shot_mask *m)
{
    for (size_t i = 0; i < m->n; i++) {
        snap_act_send_forget(a, m->s[i], "Overlay.hideHighlight", snap_act_params(""));
        snap_act_send_forget(a, m->s[i], "Overlay.disable", snap_act_params(""));
        snap_act_send_forget(a, m->s[i], "DOM.disable", snap_act_params(""));
    }
    m->n = 0;
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
