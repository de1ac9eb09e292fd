/*
 * axe_run.c — the accessibility scan's page side (issue 16): axe-core, as
 * the user installed it, run in every frame of the current tab through the
 * sink (snapshot.h, "the accessibility scan's page side").
 *
 * First, in every frame of the tab at once (pre_all: each step sent to
 * all frames before any answer is waited for, so out-of-process frames
 * load axe in parallel with the top frame):
 *   1. Page.createIsolatedWorld "cdpgate-axe" on the frame's session (a new
 *      world per scan: a run that timed out in an old one cannot block it);
 *   2. Runtime.evaluate of the axe-core source in that world (sink.c lets
 *      it out under the a11y_scan permit only, byte for byte as given),
 *      and the probe (the version, the rules the tags select) right after.
 * Then, from the top frame down the frame tree as axe sees it
 * (axe.utils.getFrameContexts, which also gives each child frame its
 * include/exclude context): each child frame's element is selected in the
 * parent's world (axe.utils.shadowSelect) and DOM.describeNode gives its
 * frame id, which names the session (the tab's or the OOPIF's) it runs in;
 * a frame not set up in the first step (it came or changed since) is set
 * up then.
 * Then every frame runs axe.runPartial twice, all frames at once per phase
 * (out-of-process frames run in parallel): every rule but the slow ones,
 * then the slow ones, each phase raced in the world against frame_ms. A
 * phase that timed out or failed leaves its rules "not evaluated" in that
 * frame (snap_axe_skipped); a frame whose first phase failed is null in
 * axe.finishRun's input with nothing under it (as axe and
 * @axe-core/playwright expect). axe.finishRun runs in the top frame's world.
 * The scripts below are the only ones that call axe (SNAP_JS_A11Y: the sink
 * refuses them outside a scan).
 */
#include "snapshot/snap_int.h"
#include "snapshot/act_int.h"
#include "snapshot/agent_int.h"
#include "snapshot/page_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AXE_WORLD "cdpgate-axe"
#define AXE_GROUP "cdpgate-axe"
#define AXE_FRAMES_MAX 64           /* frames scanned per tab */
#define AXE_KIDS_MAX 128            /* child frames followed per frame */
#define AXE_FRAME_MS 30000
#define AXE_CAP_MS 120000
#define AXE_FINISH_MIN_MS 10000     /* finishRun's time even past the cap (or the
                                       frame timeout when longer: a finishRun cut
                                       loses every frame's results) */
#define AXE_ANSWER_MS 10000         /* a frame's answer after its phase's race ended */
#define AXE_PARTIALS_MAX ((size_t)48 << 20)

/* Rules that take most of a scan's time on big pages: run in a phase of
 * their own, so that when they time out the others still count. */
static const char *const SLOW[] = {"color-contrast", "color-contrast-enhanced",
                                   "link-in-text-block", "target-size"};
#define NSLOW (sizeof SLOW / sizeof SLOW[0])

/* ---- the scripts (Runtime.callFunctionOn in the frame's axe world, one
 * argument: data) ---- */

/* Whether axe loaded; its version and the ids of the rules c.tags select. */
static const char FN_PROBE[] =
    "function(c){if(typeof axe!=='object'||!axe||typeof axe.runPartial!=='function'||"
    "typeof axe.finishRun!=='function')return {error:'no axe.runPartial after the file ran "
    "(axe-core 4.3 or later is needed)'};return {version:String(axe.version),"
    "rules:axe.getRules(c.tags).map(function(r){return r.ruleId;})};}";
/* The child frames axe will test, with their contexts. */
static const char FN_FRAMES[] =
    "function(c){return axe.utils.getFrameContexts(c.context,c.options);}";
/* The element a selector of axe's names (by reference), or null. */
static const char FN_SELECT[] =
    "function(s){try{return axe.utils.shadowSelect(s);}catch(e){return null;}}";
/* The page side of the secret-field rule for axe's results (red team s16,
 * R6-1, R6-3): run in the frame's world on runPartial's result before it
 * leaves the frame. Every element spec's "source" (axe's html snippet) is
 * rebuilt from the element it names, in an inert copy (a document with no
 * browsing context: nothing loads or runs): every input's value attribute
 * (buttons and boxes aside), every textarea's text and every secret
 * field's (SNAP_JS_SECRET_KIND: a contenteditable too) text and value
 * "[scrubbed]", all text under a secret field "[scrubbed]"; cut as axe cuts
 * (outerHTML up to 300 characters, else the start tag, properly quoted).
 * An element not found again is "[scrubbed]" whole. Then the values of the
 * frame's secret fields (4 characters or more; a password the page also
 * shows as text) are "[secret]" in every string of the result. */
#define AXE_JS_MASK \
    "(function(r){var K=" SNAP_JS_SECRET_KIND ",D=document.implementation." \
    "createHTMLDocument(''),V=[],M=new Map(),B={button:1,submit:1,reset:1,image:1," \
    "checkbox:1,radio:1,range:1,color:1},G=Element.prototype.getAttribute;" \
    "function note(x){if(typeof x==='string'){x=x.trim();if(x.length>=4&&V.indexOf(x)<0)" \
    "V.push(x);}}" \
    "(function w(n){var a=n.querySelectorAll('*');for(var i=0;i<a.length;i++){var e=a[i];" \
    "if(K(e)){note(e.value);note(e.textContent);note(G.call(e,'value'));}" \
    "if(e.shadowRoot)w(e.shadowRoot);}})(document);" \
    "var X=V.sort(function(a,b){return b.length-a.length;}).map(function(v){return new " \
    "RegExp(v.replace(/[.*+?^${}()|[\\]\\\\]/g,'\\\\$&'),'gi');});" \
    "function hide(s){for(var i=0;i<X.length;i++)s=s.replace(X[i],'[secret]');return s;}" \
    "function mk(c,all){var l=[c].concat(Array.prototype.slice.call(c.querySelectorAll('*')));" \
    "l.forEach(function(y){var n=y.localName,t=String(y.getAttribute('type')||'')." \
    "toLowerCase();if(n==='input'&&!B[t]&&y.hasAttribute('value'))y.setAttribute('value'," \
    "'[scrubbed]');if(n==='textarea'||K(y)){if(y.hasAttribute('value'))y.setAttribute(" \
    "'value','[scrubbed]');if(y.textContent)y.textContent='[scrubbed]';}});" \
    "if(all&&c.textContent)c.textContent='[scrubbed]';}" \
    "function src(e){try{if(!e||e.nodeType!==1)return '[scrubbed]';var all=false;" \
    "for(var p=e.parentNode;p;p=p.parentNode||p.host)if(p.nodeType===1&&K(p))all=true;" \
    "var c,h;if((e.outerHTML||'').length<=600){c=D.importNode(e,true);mk(c,all);" \
    "h=c.outerHTML;if(h.length<=300)return h;}c=D.importNode(e,false);mk(c,all);" \
    "h=c.outerHTML;var z='</'+c.localName+'>';if(h.slice(-z.length)===z)" \
    "h=h.slice(0,-z.length);return h.length<=300?h:h.slice(0,295)+' ...>';}" \
    "catch(x){return '[scrubbed]';}}" \
    "function fix(o){if(typeof o==='string')return X.length?hide(o):o;" \
    "if(Array.isArray(o)){for(var i=0;i<o.length;i++)o[i]=fix(o[i]);return o;}" \
    "if(o&&typeof o==='object'){if(typeof o.source==='string'&&Array.isArray(o.selector)){" \
    "var s=o.selector[o.selector.length-1],q=JSON.stringify(s);if(!M.has(q)){var e=null;" \
    "try{e=axe.utils.shadowSelect(s);}catch(x){}M.set(q,src(e));}o.source=M.get(q);}" \
    "for(var k in o)if(Object.prototype.hasOwnProperty.call(o,k))o[k]=fix(o[k]);}" \
    "return o;}return fix(r);})"

/* One phase: axe.runPartial with c.off rules disabled, or only c.only's,
 * raced against c.ms: {partial}, {timeout:true} or {error}. */
static const char FN_PARTIAL[] =
    "async function(c){var o=JSON.parse(JSON.stringify(c.options));o.rules={};"
    "if(c.only)axe.getRules().forEach(function(r){if(c.only.indexOf(r.ruleId)<0)"
    "o.rules[r.ruleId]={enabled:false};});else c.off.forEach(function(id){"
    "o.rules[id]={enabled:false};});var h,x=await Promise.race([axe.runPartial(c.context,o)"
    ".then(function(r){return {partial:" AXE_JS_MASK "(r)};},function(e){return {error:"
    "String(e&&e.message"
    "||e)};}),new Promise(function(res){h=setTimeout(function(){res({timeout:true});},"
    "c.ms);})]);clearTimeout(h);return x;}";
/* axe.finishRun over every frame's partial results. */
static const char FN_FINISH[] =
    "function(c){return axe.finishRun(c.partials,c.options);}";

const snap_js snap_axe_scripts[] = {
    {FN_PROBE, NULL, SNAP_JS_A11Y},
    {FN_FRAMES, NULL, SNAP_JS_A11Y},
    {FN_SELECT, NULL, SNAP_JS_A11Y},
    {FN_PARTIAL, NULL, SNAP_JS_A11Y},
    {FN_FINISH, NULL, SNAP_JS_A11Y},
    {NULL, NULL, 0},
};

/* ---- the scan's state ---- */

typedef struct {
    char id[SNAP_ID_MAX], session[SNAP_ID_MAX], loader[SNAP_ID_MAX];
    char *url;                  /* as the tab's frame list has it (redacted) */
    int64_t world;
    char *context;              /* axe context for this frame (JSON, new) */
    char *path;                 /* frame selectors from the top (JSON array, new) */
    int kid[AXE_KIDS_MAX];      /* child entries in axe's order; -1 not reached */
    size_t nkids;
    char *fast, *slow;          /* the phases' partial results (JSON, new) */
    bool ready;                 /* axe loaded, contexts read */
    bool lost;                  /* not in finishRun's input (it or a parent failed) */
} axe_fr;

/* A frame's world with axe-core loaded in it (set up for all the tab's
 * frames at once before axe names them: see pre_all). */
typedef struct {
    char id[SNAP_ID_MAX], session[SNAP_ID_MAX], loader[SNAP_ID_MAX];
    int64_t world;
    int64_t until;              /* its own end: frame_ms (the top frame: the scan's) */
    bool top;
    int rc;                     /* 0 ready, -1 failed: why */
    char why[240];
} axe_pre;

#define AXE_PRE_MAX (2 * AXE_FRAMES_MAX)

struct snap_axe_scan {
    int tab;
    axe_pre pre[AXE_PRE_MAX];
    size_t npre;
    axe_fr f[AXE_FRAMES_MAX];
    size_t n;
    size_t found;               /* frames axe named (reached or not) */
    char version[32];
    json_doc *rules;            /* the probe's rule ids (top frame) */
    char *options;              /* {"runOnly":{"type":"tag","values":TAGS}} */
    char *results;
    char *skipped;
    json_w skip;                /* the skipped list being written */
    int64_t deadline;
    int64_t fr_deadline;        /* the frame being set up: its own end (0: none) */
    int frame_ms;
};

/* The time left (at least min_ms): the scan's, or less while a child
 * frame is set up (fr_deadline: frame_ms of its own, so a frame that never
 * answers cannot take the others' time). */
static int remain(const snap_axe_scan *S, int min_ms)
{
    int64_t end = S->fr_deadline && S->fr_deadline < S->deadline ? S->fr_deadline
                                                                 : S->deadline;
    int64_t left = end - base_now_ms();
    return left < min_ms ? min_ms : left > 3600000 ? 3600000 : (int)left;
}

/* Send method and wait up to ms for its reply (params freed). 0, or a
 * CDP_E* code with why. A reply not come in time is forgotten. */
static int axe_call(snap_agent *a, const char *session, const char *method, char *params,
                    int ms, cdp_reply *rep, char *why, size_t cap)
{
    uint64_t id = 0;
    cdp_err e = {0};
    memset(rep, 0, sizeof *rep);
    int rc = params ? snap_cdp_send(a, session, method, params, &id, &e) : CDP_ENOMEM;
    free(params);
    if (rc == 0) {
        rc = cdp_wait(a->c, id, ms, rep, &e);
        if (rc == CDP_ETIMEOUT)
            cdp_forget(a->c, id);
    }
    if (rc && why)
        snprintf(why, cap, "%.150s", rc == CDP_ENOMEM ? "out of memory"
                                 : rc == CDP_ETIMEOUT ? "timed out" : e.msg);
    return rc;
}

/* Runtime.callFunctionOn params: fn in world with one argument (JSON text,
 * our own serialisation), by value or by reference. */
static char *fn_params(int64_t world, const char *fn, const char *arg, bool by_value,
                       bool await)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "functionDeclaration");
    json_w_str(&w, fn);
    json_w_key(&w, "executionContextId");
    json_w_int(&w, world);
    json_w_key(&w, "arguments");
    json_w_arr_begin(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "value");
    json_w_raw(&w, arg, strlen(arg), false);
    json_w_obj_end(&w);
    json_w_arr_end(&w);
    json_w_key(&w, "returnByValue");
    json_w_bool(&w, by_value);
    json_w_key(&w, "awaitPromise");
    json_w_bool(&w, await);
    json_w_key(&w, "objectGroup");
    json_w_str(&w, AXE_GROUP);
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

/* The value a callFunctionOn returned by value, or NULL (a thrown
 * exception: why says so, the text cut). */
static const json_val *fn_value(const cdp_reply *rep, char *why, size_t cap)
{
    const json_val *ex = json_get(rep->result, "exceptionDetails");
    if (ex) {
        const char *d = json_get_str(json_get(ex, "exception"), "description");
        snprintf(why, cap, "axe threw: %.150s", d ? d : json_get_str(ex, "text"));
        return NULL;
    }
    return json_get(json_get(rep->result, "result"), "value");
}

/* ---- the skipped list ---- */

/* Add {"frame","rules","reason"}: rules are the rule ids of the probe, the
 * slow ones only (phase 1), all but them (phase 0) or all (phase -1). */
static void skip_add(snap_axe_scan *S, const char *frame, int phase, const char *reason)
{
    json_w *w = &S->skip;
    json_w_obj_begin(w);
    json_w_key(w, "frame");
    json_w_str(w, frame ? frame : "");
    json_w_key(w, "rules");
    json_w_arr_begin(w);
    for (const json_val *r = json_first(json_doc_root(S->rules)); r; r = json_next(r)) {
        const char *id = json_str(r, NULL);
        bool slow = false;
        for (size_t i = 0; id && i < NSLOW; i++)
            slow |= strcmp(id, SLOW[i]) == 0;
        if (id && (phase < 0 || (phase == 1) == slow))
            json_w_str(w, id);
    }
    json_w_arr_end(w);
    json_w_key(w, "reason");
    json_w_str(w, reason);
    json_w_obj_end(w);
}

/* The frame and every frame under it are not in finishRun's input. */
static void lose(snap_axe_scan *S, size_t i, const char *reason)
{
    axe_fr *f = &S->f[i];
    if (f->lost)
        return;
    f->lost = true;
    skip_add(S, f->url, -1, reason);
    for (size_t k = 0; k < f->nkids; k++)
        if (f->kid[k] >= 0)
            lose(S, (size_t)f->kid[k], "inside a frame that was not scanned");
}

/* ---- setting up the frames: world, axe, probe (all frames at once) ---- */

/* Send method for p; its id in *id, or p failed (why). */
static void pre_send(snap_agent *a, axe_pre *p, const char *method, char *params, uint64_t *id)
{
    cdp_err e = {0};
    *id = 0;
    int rc = params ? snap_cdp_send(a, p->session, method, params, id, &e) : CDP_ENOMEM;
    free(params);
    if (rc && !p->rc) {
        p->rc = -1;
        snprintf(p->why, sizeof p->why, "%.150s", rc == CDP_ENOMEM ? "out of memory" : e.msg);
    }
}

/* The reply to id, waited for up to p's own end; 0 or -1 (p failed: why).
 * A reply not come in time is forgotten. */
static int pre_wait(snap_agent *a, axe_pre *p, uint64_t id, cdp_reply *rep)
{
    memset(rep, 0, sizeof *rep);
    if (!id)
        return -1;
    int64_t left = p->until - base_now_ms();
    cdp_err e = {0};
    int rc = cdp_wait(a->c, id, left < 1 ? 1 : left > 3600000 ? 3600000 : (int)left, rep, &e);
    if (rc == CDP_ETIMEOUT)
        cdp_forget(a->c, id);
    if (rc && !p->rc) {
        p->rc = -1;
        snprintf(p->why, sizeof p->why, "%.150s", rc == CDP_ETIMEOUT ? "timed out" : e.msg);
    }
    return rc ? -1 : 0;
}

/* Runtime.evaluate of the axe source in world. */
static char *inject_params(const snap_axe_opts *o, int64_t world)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "expression");
    json_w_strn(&w, o->src, o->len);
    json_w_key(&w, "contextId");
    json_w_int(&w, world);
    json_w_key(&w, "objectGroup");
    json_w_str(&w, AXE_GROUP);
    json_w_key(&w, "silent");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

/* Read the probe's answer (the top frame's: axe's version and rules). */
static void probe_read(snap_axe_scan *S, axe_pre *p, const cdp_reply *rep)
{
    char why[300] = "";
    const json_val *v = fn_value(rep, why, sizeof why);
    const char *err = json_get_str(v, "error");
    if (v && !err && p->top) {
        snprintf(S->version, sizeof S->version, "%s", json_get_str(v, "version"));
        char *ids = json_write(json_get(v, "rules"), NULL);
        json_doc_free(S->rules);
        S->rules = ids ? json_parse(ids, strlen(ids), NULL, NULL) : NULL;
        free(ids);
    }
    if (!v || err || (p->top && !S->rules)) {
        p->rc = -1;
        snprintf(p->why, sizeof p->why, "%.200s", err ? err : why[0] ? why : "no axe");
    }
}

/* The worlds of pre[0..n): made at once, then waited for. */
static void pre_worlds(snap_agent *a, axe_pre *pre, size_t n)
{
    uint64_t ids[AXE_FRAMES_MAX];
    for (size_t i = 0; i < n; i++)
        pre_send(a, &pre[i], "Page.createIsolatedWorld",
                 snap_act_params("ss", "frameId", pre[i].id, "worldName", AXE_WORLD), &ids[i]);
    for (size_t i = 0; i < n; i++) {
        cdp_reply rep;
        if (pre_wait(a, &pre[i], ids[i], &rep) == 0)
            pre[i].world = json_get_int(rep.result, "executionContextId", 0);
        cdp_reply_free(&rep);
        if (!pre[i].rc && pre[i].world <= 0) {
            pre[i].rc = -1;
            snprintf(pre[i].why, sizeof pre[i].why, "no isolated world");
        }
    }
}

/* axe-core's file, then the probe, into every world of pre[0..n): sent
 * together (frames in other processes load it at the same time), then
 * waited for. */
static void pre_inject(snap_agent *a, snap_axe_scan *S, axe_pre *pre, size_t n,
                       const snap_axe_opts *o)
{
    uint64_t ev[AXE_FRAMES_MAX] = {0}, pr[AXE_FRAMES_MAX] = {0};
    base_buf arg = {0};
    base_buf_printf(&arg, "{\"tags\":%s}", o->tags);
    for (size_t i = 0; i < n; i++) {
        if (pre[i].rc)
            continue;
        pre_send(a, &pre[i], "Runtime.evaluate", inject_params(o, pre[i].world), &ev[i]);
        if (!pre[i].rc)
            pre_send(a, &pre[i], "Runtime.callFunctionOn", arg.oom ? NULL :
                     fn_params(pre[i].world, FN_PROBE, arg.s, true, false), &pr[i]);
    }
    base_buf_free(&arg);
    for (size_t i = 0; i < n; i++) {
        cdp_reply rep;
        char why[300] = "";
        if (ev[i] && pre_wait(a, &pre[i], ev[i], &rep) == 0 && !fn_value(&rep, why, sizeof why) &&
            json_get(rep.result, "exceptionDetails") && !pre[i].rc) {
            pre[i].rc = -1;
            snprintf(pre[i].why, sizeof pre[i].why, "%.200s", why);
        }
        cdp_reply_free(&rep);
        if (!pr[i])
            continue;
        if (pre[i].rc) {
            cdp_forget(a->c, pr[i]);
            continue;
        }
        if (pre_wait(a, &pre[i], pr[i], &rep) == 0)
            probe_read(S, &pre[i], &rep);
        cdp_reply_free(&rep);
    }
}

/* Every frame of the tab (up to AXE_FRAMES_MAX), set up at once. */
static void pre_all(snap_agent *a, snap_axe_scan *S, const snap_axe_opts *o)
{
    snap_tab *t = snap_tab_by_id(a, S->tab);
    int64_t now = base_now_ms();
    for (size_t i = 0; t && i < t->nframes && S->npre < AXE_FRAMES_MAX; i++) {
        const snap_frame *sf = &t->frames[i];
        if (sf->gone)
            continue;
        axe_pre *p = &S->pre[S->npre++];
        memset(p, 0, sizeof *p);
        snap_agent_copyid(p->id, sf->id);
        snap_agent_copyid(p->session, sf->session);
        snap_agent_copyid(p->loader, sf->loader);
        p->top = i == 0;
        /* frame_ms of its own after the frames queued before it on its
         * session (one process answers them one after another), as when
         * the frames were set up one after another. */
        int64_t k = 1;
        for (size_t j = 0; j + 1 < S->npre; j++)
            k += strcmp(S->pre[j].session, p->session) == 0;
        int64_t end = now + k * S->frame_ms;
        p->until = p->top || end > S->deadline ? S->deadline : end;
    }
    pre_worlds(a, S->pre, S->npre);
    pre_inject(a, S, S->pre, S->npre, o);
}

/* Entry f's set-up: the one pre_all made for its document, else one made
 * now (a frame that came or changed since); NULL past AXE_PRE_MAX. */
static axe_pre *pre_for(snap_agent *a, snap_axe_scan *S, const axe_fr *f, bool top,
                        const snap_axe_opts *o)
{
    for (size_t i = 0; i < S->npre; i++) {
        axe_pre *p = &S->pre[i];
        if (strcmp(p->id, f->id) == 0 && strcmp(p->session, f->session) == 0 &&
            strcmp(p->loader, f->loader) == 0)
            return p;
    }
    if (S->npre == AXE_PRE_MAX)
        return NULL;
    axe_pre *p = &S->pre[S->npre++];
    memset(p, 0, sizeof *p);
    snap_agent_copyid(p->id, f->id);
    snap_agent_copyid(p->session, f->session);
    snap_agent_copyid(p->loader, f->loader);
    p->top = top;
    int64_t now = base_now_ms();
    p->until = top || now + S->frame_ms > S->deadline ? S->deadline : now + S->frame_ms;
    pre_worlds(a, p, 1);
    pre_inject(a, S, p, 1, o);
    return p;
}

/* The frame id of the element selector sel (JSON) names in f's world, or "". */
static void fr_child_id(snap_agent *a, snap_axe_scan *S, axe_fr *f, const char *sel,
                        char out[SNAP_ID_MAX])
{
    out[0] = 0;
    cdp_reply rep;
    char why[200];
    if (axe_call(a, f->session, "Runtime.callFunctionOn",
                 fn_params(f->world, FN_SELECT, sel, false, false), remain(S, 1000), &rep,
                 why, sizeof why))
        return;
    const char *oid = json_get_str(json_get(rep.result, "result"), "objectId");
    char *p = oid ? snap_act_params("s", "objectId", oid) : NULL;
    cdp_reply_free(&rep);
    if (!p)
        return;
    if (axe_call(a, f->session, "DOM.describeNode", p, remain(S, 1000), &rep, why, sizeof why))
        return;
    const char *fid = json_get_str(json_get(rep.result, "node"), "frameId");
    snprintf(out, SNAP_ID_MAX, "%s", fid ? fid : "");
    cdp_reply_free(&rep);
}

/* Add an entry for frame fid of the tab (context: JSON); its index or -1. */
static int fr_add(snap_agent *a, snap_axe_scan *S, const char *fid, const char *context)
{
    snap_tab *t = snap_tab_by_id(a, S->tab);
    snap_frame *sf = t && *fid ? snap_frame_find(t, fid) : NULL;
    if (!sf || sf->gone || S->n == AXE_FRAMES_MAX)
        return -1;
    for (size_t i = 0; i < S->n; i++)
        if (strcmp(S->f[i].id, fid) == 0)
            return -1;      /* axe named a frame twice: once is enough */
    axe_fr *f = &S->f[S->n];
    memset(f, 0, sizeof *f);
    snap_agent_copyid(f->id, sf->id);
    snap_agent_copyid(f->session, sf->session);
    snap_agent_copyid(f->loader, sf->loader);
    f->url = base_strdup(sf->url ? sf->url : "");
    f->context = base_strdup(context);
    if (!f->url || !f->context) {
        free(f->url);
        free(f->context);
        return -1;
    }
    return (int)S->n++;
}

/* The child frames of entry i (axe's frame contexts), added to the scan. */
static int fr_children(snap_agent *a, snap_axe_scan *S, size_t i, char *why, size_t cap)
{
    base_buf arg = {0};
    base_buf_printf(&arg, "{\"context\":%s,\"options\":%s}", S->f[i].context, S->options);
    cdp_reply rep;
    int rc = arg.oom ? -1 : axe_call(a, S->f[i].session, "Runtime.callFunctionOn",
                                     fn_params(S->f[i].world, FN_FRAMES, arg.s, true, false),
                                     remain(S, 1000), &rep, why, cap);
    base_buf_free(&arg);
    const json_val *v = rc ? NULL : fn_value(&rep, why, cap);
    if (!json_is(v, JSON_ARRAY)) {
        cdp_reply_free(&rep);
        return -1;
    }
    for (const json_val *c = json_first(v); c; c = json_next(c)) {
        S->found++;
        if (S->f[i].nkids == AXE_KIDS_MAX)
            break;
        char *sel = json_write(json_get(c, "frameSelector"), NULL);
        char *ctx = json_write(json_get(c, "frameContext"), NULL);
        char fid[SNAP_ID_MAX] = "";
        if (sel && ctx)
            fr_child_id(a, S, &S->f[i], sel, fid);
        int k = sel && ctx ? fr_add(a, S, fid, ctx) : -1;
        if (k < 0) {
            char what[300];
            snprintf(what, sizeof what, "a frame at %.200s", sel ? sel : "?");
            skip_add(S, what, -1, "its frame could not be reached");
        }
        S->f[i].kid[S->f[i].nkids++] = k;
        free(sel);
        free(ctx);
    }
    cdp_reply_free(&rep);
    return 0;
}

/* Set up entry i and find its children; a failure is noted (not fatal but
 * for the top frame). */
static int fr_setup(snap_agent *a, snap_axe_scan *S, size_t i, const snap_axe_opts *o)
{
    char why[300] = "";
    axe_fr *f = &S->f[i];
    const axe_pre *p = pre_for(a, S, f, i == 0, o);
    int rc = p && !p->rc ? 0 : -1;
    if (rc)
        snprintf(why, sizeof why, "%s", p ? p->why : "past the frames a scan sets up");
    f->world = rc ? 0 : p->world;
    S->fr_deadline = i ? base_now_ms() + S->frame_ms : 0;
    if (!rc)
        rc = fr_children(a, S, i, why, sizeof why);
    S->fr_deadline = 0;
    S->f[i].ready = rc == 0;
    if (rc && i) {
        char reason[400];
        snprintf(reason, sizeof reason, "axe could not run in it: %s", why);
        lose(S, i, reason);
    }
    return rc ? -1 : 0;
}

/* ---- the phases ---- */

static char *phase_arg(const snap_axe_scan *S, const axe_fr *f, int phase, int ms)
{
    base_buf b = {0};
    base_buf_printf(&b, "{\"context\":%s,\"options\":%s,\"ms\":%d,\"%s\":[", f->context,
                    S->options, ms, phase ? "only" : "off");
    for (size_t i = 0; i < NSLOW; i++)
        base_buf_printf(&b, "%s\"%s\"", i ? "," : "", SLOW[i]);
    base_buf_puts(&b, "]}");
    return base_buf_take(&b, NULL);
}

/* Whether the tags select any slow rule (else no second phase). */
static bool any_slow(const snap_axe_scan *S)
{
    for (const json_val *r = json_first(json_doc_root(S->rules)); r; r = json_next(r))
        for (size_t i = 0; i < NSLOW; i++)
            if (strcmp(json_str(r, NULL) ? json_str(r, NULL) : "", SLOW[i]) == 0)
                return true;
    return false;
}

/* Read one phase's reply for entry i. */
static void phase_read(snap_axe_scan *S, size_t i, int phase, int rc, cdp_reply *rep,
                       const char *cdp_why, int ms)
{
    axe_fr *f = &S->f[i];
    char why[300] = "";
    const json_val *v = rc ? NULL : fn_value(rep, why, sizeof why);
    const json_val *p = json_get(v, "partial");
    char *text = json_is(p, JSON_OBJECT) ? json_write(p, NULL) : NULL;
    if (text) {
        if (phase)
            f->slow = text;
        else
            f->fast = text;
        return;
    }
    char reason[400];
    if (rc)
        snprintf(reason, sizeof reason, "%.200s", cdp_why);
    else if (json_bool(json_get(v, "timeout")))
        snprintf(reason, sizeof reason, "timed out after %d ms%s", ms,
                 ms < S->frame_ms ? " (the scan's time left)" : "");
    else
        snprintf(reason, sizeof reason, "axe failed: %.200s",
                 json_get_str(v, "error") ? json_get_str(v, "error") : why);
    if (phase)
        skip_add(S, f->url, 1, reason);
    else if (i)
        lose(S, i, reason);
}

/* Run phase (0: all but the slow rules, 1: the slow ones) in every ready
 * frame at once; wait for each up to the cap. */
static void phase_run(snap_agent *a, snap_axe_scan *S, int phase)
{
    uint64_t ids[AXE_FRAMES_MAX] = {0};
    bool tried[AXE_FRAMES_MAX] = {0};
    int64_t until[AXE_FRAMES_MAX] = {0};
    int used[AXE_FRAMES_MAX] = {0};
    bool stopped[AXE_FRAMES_MAX] = {0};
    int rcs[AXE_FRAMES_MAX];
    char why[AXE_FRAMES_MAX][160];
    for (size_t i = 0; i < S->n; i++) {
        axe_fr *f = &S->f[i];
        rcs[i] = 0;
        why[i][0] = 0;
        if (!f->ready || f->lost || (phase && !f->fast))
            continue;
        tried[i] = true;
        int ms = remain(S, 1);
        if (ms > S->frame_ms)
            ms = S->frame_ms;
        /* Its race ends after ms; a frame whose process does not answer
         * (busy, hung) is given up AXE_ANSWER_MS later, not at the cap. */
        until[i] = base_now_ms() + ms + AXE_ANSWER_MS;
        used[i] = ms;
        char *arg = phase_arg(S, f, phase, ms);
        char *prm = arg ? fn_params(f->world, FN_PARTIAL, arg, true, true) : NULL;
        free(arg);
        cdp_err e = {0};
        rcs[i] = prm ? snap_cdp_send(a, f->session, "Runtime.callFunctionOn", prm, &ids[i], &e)
                     : CDP_ENOMEM;
        free(prm);
        if (rcs[i])
            snprintf(why[i], sizeof why[i], "%.150s", e.msg);
    }
    for (size_t i = 0; i < S->n; i++) {
        if (!tried[i])
            continue;
        cdp_reply rep = {0};
        if (ids[i]) {
            cdp_err e = {0};
            int64_t left = until[i] - base_now_ms();
            int ms = remain(S, 1);
            bool own = left < ms;
            rcs[i] = cdp_wait(a->c, ids[i], own ? (left > 1 ? (int)left : 1) : ms, &rep, &e);
            if (rcs[i] == CDP_ETIMEOUT) {
                cdp_forget(a->c, ids[i]);
                /* Its process is busy with axe's run (one long task: a slow
                 * rule on a huge page): stopped, else finishRun (the top
                 * frame's) would wait behind it and fail. */
                bool done = false;
                for (size_t k = 0; k < i && !done; k++)
                    done = stopped[k] && strcmp(S->f[k].session, S->f[i].session) == 0;
                if (!done)
                    snap_act_send_forget(a, S->f[i].session, "Runtime.terminateExecution",
                                         snap_act_params(""));
                stopped[i] = true;
                snprintf(why[i], sizeof why[i], own ? "timed out: its process did not answer"
                                                    : "the scan's time ran out");
            } else if (rcs[i]) {
                snprintf(why[i], sizeof why[i], "%.150s", e.msg);
            }
        }
        phase_read(S, i, phase, rcs[i], &rep, why[i], used[i]);
        cdp_reply_free(&rep);
    }
}

/* ---- finishRun ---- */

/* Append src's items (JSON array text) to w. */
static void items_put(json_w *w, const json_val *arr)
{
    for (const json_val *v = json_first(arr); v; v = json_next(v))
        json_w_val(w, v);
}

/* Entry i's partial (the phases merged) and then its children's, in axe's
 * order, into w; each frame's path (frame selectors from the top) set. */
static void emit(snap_axe_scan *S, size_t i, json_w *w)
{
    axe_fr *f = &S->f[i];
    json_doc *fd = f->fast && !f->lost ? json_parse(f->fast, strlen(f->fast), NULL, NULL)
                                       : NULL;
    if (!fd) {
        json_w_null(w);
        return;
    }
    json_doc *sd = f->slow ? json_parse(f->slow, strlen(f->slow), NULL, NULL) : NULL;
    const json_val *root = json_doc_root(fd);
    json_w_obj_begin(w);
    for (const json_val *m = json_first(root); m; m = json_next(m)) {
        size_t kl;
        const char *k = json_key(m, &kl);
        json_w_keyn(w, k, kl);
        if (strcmp(k, "results") != 0) {
            json_w_val(w, m);
            continue;
        }
        json_w_arr_begin(w);
        items_put(w, m);
        items_put(w, json_get(json_doc_root(sd), "results"));
        json_w_arr_end(w);
    }
    json_w_obj_end(w);
    const json_val *frames = json_get(root, "frames");
    size_t nf = json_len(frames);
    for (size_t k = 0; k < nf; k++) {
        int c = k < f->nkids && nf == f->nkids ? f->kid[k] : -1;
        if (c < 0) {
            json_w_null(w);
            continue;
        }
        /* The child's path: ours, then its frame spec's selector items. */
        json_w pw;
        json_w_init(&pw);
        json_w_arr_begin(&pw);
        json_doc *pd = json_parse(f->path, strlen(f->path), NULL, NULL);
        items_put(&pw, json_doc_root(pd));
        json_doc_free(pd);
        items_put(&pw, json_get(json_at(frames, k), "selector"));
        json_w_arr_end(&pw);
        free(S->f[c].path);
        S->f[c].path = json_w_take(&pw, NULL);
        emit(S, (size_t)c, w);
    }
    if (nf != f->nkids)
        for (size_t k = 0; k < f->nkids; k++)
            if (f->kid[k] >= 0)
                lose(S, (size_t)f->kid[k], "the page's frames changed during the scan");
    json_doc_free(sd);
    json_doc_free(fd);
}

static int finish(snap_agent *a, snap_axe_scan *S, snap_result *r)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "partials");
    json_w_arr_begin(&w);
    free(S->f[0].path);
    S->f[0].path = base_strdup("[]");
    emit(S, 0, &w);
    json_w_arr_end(&w);
    json_w_key(&w, "options");
    json_w_raw(&w, S->options, strlen(S->options), false);
    json_w_obj_end(&w);
    size_t len = 0;
    char *arg = json_w_take(&w, &len);
    if (!arg || len > AXE_PARTIALS_MAX) {
        free(arg);
        return snap_fail(r, SNAP_ENOMEM, "a11y scan: the frames' results are %s",
                         arg ? "over 48 MiB" : "too big for memory");
    }
    char why[300] = "";
    /* Twice at most: a run stopped by terminateExecution (phase_run) can
     * stop the next script instead when it had just ended. */
    for (int k = 0; k < 2 && !S->results; k++) {
        cdp_reply rep;
        int rc = axe_call(a, S->f[0].session, "Runtime.callFunctionOn",
                          fn_params(S->f[0].world, FN_FINISH, arg, true, true),
                          remain(S, S->frame_ms > AXE_FINISH_MIN_MS ? S->frame_ms
                                                                    : AXE_FINISH_MIN_MS),
                          &rep, why, sizeof why);
        const json_val *v = rc ? NULL : fn_value(&rep, why, sizeof why);
        S->results = json_is(v, JSON_OBJECT) ? json_write(v, NULL) : NULL;
        cdp_reply_free(&rep);
        if (rc == CDP_ETIMEOUT)
            break;
    }
    free(arg);
    if (!S->results)
        return snap_fail(r, SNAP_EBROWSER, "a11y scan: axe.finishRun failed: %s",
                         *why ? why : "no results");
    return 0;
}

/* ---- the scan ---- */

static int scan_top(snap_agent *a, snap_axe_scan *S, const snap_axe_opts *o, snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, S->tab);
    if (!t || !t->nframes)
        return snap_fail(r, SNAP_ENOTAB, "a11y scan: no page is open");
    if (fr_add(a, S, t->frames[0].id, o->context) != 0)
        return snap_fail(r, SNAP_ENOMEM, "a11y scan: out of memory");
    pre_all(a, S, o);
    if (fr_setup(a, S, 0, o) != 0)
        return snap_fail(r, SNAP_EBROWSER, "a11y scan: axe-core did not run in the page "
                         "(%s)", S->version[0] ? "its frames could not be read"
                                               : "the file is not axe-core, or it failed");
    for (size_t i = 1; i < S->n; i++)
        fr_setup(a, S, i, o);
    return 0;
}

static int scan(snap_agent *a, const snap_axe_opts *o, snap_axe_scan *S, snap_result *r)
{
    base_buf b = {0};
    base_buf_printf(&b, "{\"runOnly\":{\"type\":\"tag\",\"values\":%s}}", o->tags);
    S->options = base_buf_take(&b, NULL);
    if (!S->options)
        return snap_fail(r, SNAP_ENOMEM, "a11y scan: out of memory");
    int64_t ph[5] = {base_now_ns()};
    int rc = scan_top(a, S, o, r);
    if (rc)
        return rc;
    ph[1] = base_now_ns();
    phase_run(a, S, 0);
    ph[2] = base_now_ns();
    if (!S->f[0].fast)
        return snap_fail(r, SNAP_ETIMEOUT, "a11y scan: the top frame was not scanned in time "
                         "(%d ms per frame, %d ms in all)", S->frame_ms,
                         o->cap_ms > 0 ? o->cap_ms : AXE_CAP_MS);
    if (any_slow(S))
        phase_run(a, S, 1);
    ph[3] = base_now_ns();
    rc = finish(a, S, r);
    ph[4] = base_now_ns();
    if (a->o.timing)        /* CDPGATE_TIMING=1 */
        fprintf(stderr, "timing: axe setup=%.1f fast=%.1f slow=%.1f finish=%.1f frames=%zu\n",
                (double)(ph[1] - ph[0]) / 1e6, (double)(ph[2] - ph[1]) / 1e6,
                (double)(ph[3] - ph[2]) / 1e6, (double)(ph[4] - ph[3]) / 1e6, S->n);
    return rc;
}

static void release_worlds(snap_agent *a, snap_axe_scan *S)
{
    for (size_t i = 0; i < S->npre; i++) {
        bool seen = false;
        for (size_t k = 0; k < i; k++)
            seen |= S->pre[k].world && strcmp(S->pre[k].session, S->pre[i].session) == 0;
        if (!seen && S->pre[i].world)
            snap_act_send_forget(a, S->pre[i].session, "Runtime.releaseObjectGroup",
                                 snap_act_params("s", "objectGroup", AXE_GROUP));
    }
}

int snap_axe_run(snap_agent *a, const snap_axe_opts *o, snap_axe_scan **out, snap_result *r)
{
    *out = NULL;
    snap_gated gg;
    int rc = snap_act_gate_page(a, "a11y_scan", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    snap_tab *t = snap_tab_current(a);
    snap_axe_scan *S = t ? calloc(1, sizeof *S) : NULL;
    if (!S) {
        rc = snap_fail(r, t ? SNAP_ENOMEM : SNAP_ENOTAB, "a11y scan: %s",
                       t ? "out of memory" : "no page is open: open one first");
        snap_gate_done(a, &gg, rc, r);
        return rc;
    }
    S->tab = t->id;
    S->frame_ms = o->frame_ms > 0 ? o->frame_ms : AXE_FRAME_MS;
    S->deadline = base_now_ms() + (o->cap_ms > 0 ? o->cap_ms : AXE_CAP_MS);
    json_w_init(&S->skip);
    json_w_arr_begin(&S->skip);
    a->axe_src = o->src;
    a->axe_len = o->len;
    rc = scan(a, o, S, r);
    release_worlds(a, S);
    a->axe_src = NULL;
    a->axe_len = 0;
    json_w_arr_end(&S->skip);
    S->skipped = json_w_take(&S->skip, NULL);
    if (rc == 0 && !S->skipped)
        rc = snap_fail(r, SNAP_ENOMEM, "a11y scan: out of memory");
    snap_gate_done(a, &gg, rc, r);
    if (rc) {
        snap_axe_free(S);
        return rc;
    }
    *out = S;
    return 0;
}

const char *snap_axe_results(const snap_axe_scan *s) { return s->results; }
const char *snap_axe_skipped(const snap_axe_scan *s) { return s->skipped; }
const char *snap_axe_version(const snap_axe_scan *s) { return s->version; }

size_t snap_axe_frames(const snap_axe_scan *s, size_t *found)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->f[i].fast && !s->f[i].lost;
    if (found)
        *found = s->found + 1;
    return n;
}

void snap_axe_free(snap_axe_scan *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->f[i].url);
        free(s->f[i].context);
        free(s->f[i].path);
        free(s->f[i].fast);
        free(s->f[i].slow);
    }
    json_doc_free(s->rules);
    free(s->options);
    free(s->results);
    free(s->skipped);
    json_w_free(&s->skip);
    free(s);
}

/* ---- a finding's element as a ref ---- */

/* The role and name of backend's AX node on session into role/name. */
static int ax_of(snap_agent *a, const char *session, int backend, char *role, size_t rcap,
                 char *name, size_t ncap)
{
    cdp_reply rep;
    char why[200];
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "backendNodeId");
    json_w_int(&w, backend);
    json_w_key(&w, "fetchRelatives");
    json_w_bool(&w, false);
    json_w_obj_end(&w);
    if (axe_call(a, session, "Accessibility.getPartialAXTree", json_w_take(&w, NULL),
                 a->o.timeout_ms, &rep, why, sizeof why))
        return -1;
    int rc = -1;
    for (const json_val *n = json_first(json_get(rep.result, "nodes")); n; n = json_next(n)) {
        if (json_get_int(n, "backendDOMNodeId", 0) != backend)
            continue;
        const char *ro = json_get_str(json_get(n, "role"), "value");
        const char *na = json_get_str(json_get(n, "name"), "value");
        snprintf(role, rcap, "%s", ro ? ro : "generic");
        snprintf(name, ncap, "%s", na ? na : "");
        rc = 0;
        break;
    }
    cdp_reply_free(&rep);
    return rc;
}

/* The backend node of the element sel (JSON) names in f's world; 0 none. */
static int node_of(snap_agent *a, const axe_fr *f, const char *sel)
{
    cdp_reply rep;
    char why[200];
    if (axe_call(a, f->session, "Runtime.callFunctionOn",
                 fn_params(f->world, FN_SELECT, sel, false, false), a->o.timeout_ms, &rep,
                 why, sizeof why))
        return 0;
    const char *oid = json_get_str(json_get(rep.result, "result"), "objectId");
    char *p = oid ? snap_act_params("s", "objectId", oid) : NULL;
    cdp_reply_free(&rep);
    if (!p || axe_call(a, f->session, "DOM.describeNode", p, a->o.timeout_ms, &rep, why,
                       sizeof why))
        return 0;
    int be = (int)json_get_int(json_get(rep.result, "node"), "backendNodeId", 0);
    cdp_reply_free(&rep);
    return be;
}

/* The entry whose path is target's items but the last, or NULL. */
static axe_fr *frame_of(snap_axe_scan *s, const json_val *tgt)
{
    size_t n = json_len(tgt);
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    for (size_t i = 0; i + 1 < n; i++)
        json_w_val(&w, json_at(tgt, i));
    json_w_arr_end(&w);
    char *path = json_w_take(&w, NULL);
    axe_fr *hit = NULL;
    for (size_t i = 0; path && i < s->n && !hit; i++)
        if (s->f[i].path && s->f[i].fast && !s->f[i].lost && strcmp(s->f[i].path, path) == 0)
            hit = &s->f[i];
    free(path);
    return hit;
}

int snap_axe_ref(snap_agent *a, snap_axe_scan *s, const char *tgt, char ref[16])
{
    ref[0] = 0;
    json_doc *d = json_parse(tgt, strlen(tgt), NULL, NULL);
    const json_val *tv = json_doc_root(d);
    axe_fr *f = json_len(tv) ? frame_of(s, tv) : NULL;
    snap_tab *t = f ? snap_tab_by_id(a, s->tab) : NULL;
    snap_frame *sf = t ? snap_frame_find(t, f->id) : NULL;
    /* The frame must still hold the document the scan read. */
    char *sel = sf && !sf->gone && strcmp(sf->loader, f->loader) == 0
                    ? json_write(json_at(tv, json_len(tv) - 1), NULL) : NULL;
    json_doc_free(d);
    if (!sel)
        return d ? 0 : SNAP_ENOMEM;
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "a11y_scan", saved);
    int be = node_of(a, f, sel);
    snap_permit_begin(a, saved);
    free(sel);
    char role[64], name[512];
    if (be <= 0 || ax_of(a, f->session, be, role, sizeof role, name, sizeof name))
        return 0;
    uint32_t n = snap_ref_for(a, s->tab, f->id, f->loader, be, role, name);
    if (n)
        snprintf(ref, 16, "e%u", n);
    return 0;
}
