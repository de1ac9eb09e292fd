/*
 * record.c — what replay/ records of an action (issue 14, point 1): the
 * facts of each action that passed the gate, read at the gate's
 * chokepoint BEFORE the action is sent (snap_gate_ask calls
 * snap_rec_capture right after the allow), so an element that vanishes
 * when clicked is still described: its role and name as the gate judged
 * them, its row, its frame's origin, and stable attributes read by one
 * page script (snap_js_record_fn) in cdpgate's isolated world.
 *
 * Off unless the host asks (snap_record_facts): the page read costs one
 * round trip per action on an element. Nothing typed is kept here, and a
 * secret field is only flagged (the host records no value for it).
 * Strings are page text, cut at RECORD_MAX bytes on a character boundary.
 */
#include "snapshot/snap_int.h"
#include "snapshot/page_js.h"
#include "snapshot/observe_int.h"
#include "snapshot/act_int.h"

#include "gate/gate.h"

#include <stdlib.h>
#include <string.h>

#define RECORD_MAX 1024

/* Stable attributes of the element an action acts on (a label's control
 * for a label): id, name attribute (nm), placeholder (ph), test id (tid:
 * data-testid, data-test, data-qa, data-cy), its label's text or
 * aria-label (lb), its row or list item's text (row, as the facts give
 * it; at most 300 characters: the recorder cuts it, replay/record.c), and
 * the name of the nearest section, form, dialog or
 * region around it (sec: its aria-label, else its first legend or
 * heading). Never a value.
 * Runs: on a node, in cdpgate's isolated world (record.c). Returns: that
 * object of strings, or {}. */
const char snap_js_record_fn[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;if(!e)return{};"
    "if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "var N=function(s){return String(s||'').replace(/\\s+/g,' ').trim().slice(0,300);};"
    "var A=function(k){return N(e.getAttribute(k));};"
    "var r={id:N(e.id),nm:A('name'),ph:A('placeholder'),"
    "tid:A('data-testid')||A('data-test')||A('data-qa')||A('data-cy'),"
    "lb:e.labels&&e.labels.length?N(e.labels[0].innerText):A('aria-label')};"
    "var w=e.closest('tr,li,[role=row],[role=listitem],article');"
    "if(w)r.row=N(w.innerText);"
    "var s=e.closest('section,article,aside,nav,main,form,fieldset,dialog,"
    "[role=region],[role=dialog],[role=form],[role=navigation]');"
    "if(s){var h=s.querySelector('legend,h1,h2,h3,h4,h5,h6');"
    "r.sec=N(s.getAttribute('aria-label')||(h?h.innerText:''));}"
    "return r;}";

enum {
    S_TOOL, S_CLS, S_ORIGIN, S_URL, S_TITLE, S_IDENTITY, S_ROLE, S_NAME, S_ROW,
    S_SECTION, S_LABEL, S_ID, S_NAME_ATTR, S_PLACEHOLDER, S_TESTID, S_FRAME,
    S_COUNT
};

struct snap_rec {
    bool valid;
    snap_step_facts f;
    char *s[S_COUNT];           /* what f's strings point at (new) */
    const char *egress[4];      /* f.egress's names, NULL-terminated */
};

static void rec_clear(snap_rec *rc)
{
    for (int i = 0; i < S_COUNT; i++) {
        free(rc->s[i]);
        rc->s[i] = NULL;
    }
    memset(&rc->f, 0, sizeof rc->f);
    rc->valid = false;
}

void snap_rec_free(snap_rec *rc)
{
    if (!rc)
        return;
    rec_clear(rc);
    free(rc);
}

void snap_record_facts(snap_agent *a, bool on)
{
    if (!on) {
        snap_rec_free(a->rec);
        a->rec = NULL;
    } else if (!a->rec) {
        a->rec = calloc(1, sizeof *a->rec);
    }
}

void snap_step_forget(snap_agent *a)
{
    if (a->rec)
        rec_clear(a->rec);
}

const snap_step_facts *snap_step_last(const snap_agent *a)
{
    return a->rec && a->rec->valid ? &a->rec->f : NULL;
}

bool snap_step_text_kept(const snap_step_facts *f)
{
    return f && f->has_target && !f->secret;
}

bool snap_step_key_kept(const snap_step_facts *f)
{
    return f && !f->secret;
}

/* Keep a copy of s (NULL or "" keeps nothing) in slot i, cut at
 * RECORD_MAX bytes on a UTF-8 character boundary; returns it. */
static const char *keep(snap_rec *rc, int i, const char *s)
{
    free(rc->s[i]);
    rc->s[i] = NULL;
    if (!s || !*s)
        return NULL;
    size_t n = strlen(s);
    if (n > RECORD_MAX) {
        n = RECORD_MAX;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    char *c = malloc(n + 1);
    if (!c)
        return NULL;
    memcpy(c, s, n);
    c[n] = '\0';
    rc->s[i] = c;
    return c;
}

/* The stable attributes of the element oid (in session) into rc. */
static void read_stable(snap_agent *a, snap_rec *rc, const char *session, const char *oid)
{
    if (!session || !*session || !oid || !*oid)
        return;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, oid);
    json_w_key(&w, "functionDeclaration");
    json_w_str(&w, snap_js_record_fn);
    json_w_key(&w, "returnByValue");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    char *p = json_w_take(&w, NULL);
    cdp_reply rep = {0};
    if (p && snap_cdp_call(a, session, "Runtime.callFunctionOn", p, a->o.timeout_ms, &rep,
                           NULL) == 0) {
        const json_val *v = json_get(json_get(rep.result, "result"), "value");
        rc->f.id = keep(rc, S_ID, json_get_str(v, "id"));
        rc->f.name_attr = keep(rc, S_NAME_ATTR, json_get_str(v, "nm"));
        rc->f.placeholder = keep(rc, S_PLACEHOLDER, json_get_str(v, "ph"));
        rc->f.testid = keep(rc, S_TESTID, json_get_str(v, "tid"));
        rc->f.label = keep(rc, S_LABEL, json_get_str(v, "lb"));
        rc->f.section = keep(rc, S_SECTION, json_get_str(v, "sec"));
        if (!rc->f.row)
            rc->f.row = keep(rc, S_ROW, json_get_str(v, "row"));
    }
    free(p);
    cdp_reply_free(&rep);
}

/* The accessible role and name of the element oid (in session) into rc,
 * when the gate judged it by no ref (a key pressed on the focused
 * element): the semantic target replay re-finds it by (B-1). */
static void read_role_name(snap_agent *a, snap_rec *rc, const char *session, const char *oid)
{
    if (!session || !*session || !oid || !*oid)
        return;
    pcall d, x;
    snap_act_psend_p(a, session, "DOM.describeNode", snap_act_params("s", "objectId", oid), &d);
    snap_act_psend_p(a, session, "Accessibility.getPartialAXTree",
                     snap_act_params("sb", "objectId", oid, "fetchRelatives", false), &x);
    snap_act_pwait(a, &d);
    snap_act_pwait(a, &x);
    char role[32] = "", name[200] = "";
    if (d.rep.result && x.rep.result)
        snap_act_ax_role_name(x.rep.result, d.rep.result, role, sizeof role, name,
                              sizeof name);
    rc->f.role = keep(rc, S_ROLE, role);
    rc->f.name = keep(rc, S_NAME, name);
    snap_act_pfree(&d);
    snap_act_pfree(&x);
}

static void set_egress(snap_rec *rc, unsigned bits)
{
    size_t n = 0;
    if (bits & GATE_EGRESS_FETCH)
        rc->egress[n++] = "approved_origin_fetch";
    if (bits & GATE_EGRESS_SEND)
        rc->egress[n++] = "structured_send";
    if (bits & GATE_EGRESS_FILE)
        rc->egress[n++] = "file_transfer";
    rc->egress[n] = NULL;
    rc->f.egress = rc->egress;
}

/* The state part: origin, URL, title, authentication and identity. */
static void set_state(snap_agent *a, snap_rec *rc, const char *origin, const char *url,
                      const snap_tab *t, bool authenticated, const char *service)
{
    rc->f.origin = keep(rc, S_ORIGIN, origin);
    rc->f.url = keep(rc, S_URL, url);
    /* The title the last snapshot read (the target's title may still be
     * its URL when the page set none yet). */
    rc->f.title = keep(rc, S_TITLE, t && t->cache && t->cache->title ? t->cache->title
                                    : t ? t->title : NULL);
    rc->f.authenticated = authenticated;
    const char *id = authenticated ? gate_identity_for(a->gate, service && *service ? service
                                                                                   : origin)
                                   : NULL;
    rc->f.identity = keep(rc, S_IDENTITY, id);
}

void snap_rec_capture(snap_agent *a, const snap_rec_in *in)
{
    snap_rec *rc = a->rec;
    if (!rc)
        return;
    rec_clear(rc);
    rc->f.tool = keep(rc, S_TOOL, in->tool);
    rc->f.cls = keep(rc, S_CLS, gate_class_name(in->cls));
    set_egress(rc, in->egress);
    set_state(a, rc, in->origin, in->url, in->tab, in->authenticated, in->service);
    if (in->target) {
        rc->f.has_target = true;
        rc->f.role = keep(rc, S_ROLE, in->target->role);
        rc->f.name = keep(rc, S_NAME, in->target->name);
        rc->f.row = keep(rc, S_ROW, in->target->row);
        rc->f.secret = in->secret;
        const char *fo = in->frame_origin;
        char buf[256];
        snap_frame *f = !fo && in->frame && *in->frame && in->tab
                            ? snap_frame_find(in->tab, in->frame) : NULL;
        if (f && f != &in->tab->frames[0] && f->url &&
            snap_url_origin(f->url, buf, sizeof buf) == 0)
            fo = buf;
        rc->f.frame_origin = keep(rc, S_FRAME, fo);
        if (!rc->f.role && !rc->f.name)
            read_role_name(a, rc, in->session, in->oid);
        read_stable(a, rc, in->session, in->oid);
    }
    rc->valid = true;
}

int snap_step_describe(snap_agent *a, const char *ref, snap_result *r)
{
    if (!a->rec)
        return snap_fail(r, SNAP_EINVAL, "recording is off");
    snap_resolved res;
    int rc = snap_ref_resolve(a, ref, &res, r);
    if (rc)
        return rc;
    snap_rec_in in = {0};
    gate_target tg = {0};
    char origin[256] = "", forigin[256] = "";
    snap_frame *top = res.tab && res.tab->nframes ? &res.tab->frames[0] : NULL;
    if (top && top->url && snap_url_origin(top->url, origin, sizeof origin) != 0)
        origin[0] = 0;
    if (res.frame && res.frame != top && res.frame->url &&
        snap_url_origin(res.frame->url, forigin, sizeof forigin) != 0)
        forigin[0] = 0;
    tg.role = snap_ref_gate_role(a, res.ref);
    tg.name = snap_ref_gate_name(res.ref);
    in.tool = "text";
    in.cls = GATE_CLASS_READ;
    in.origin = origin;
    in.url = top ? top->url : NULL;
    in.tab = res.tab;
    in.authenticated = snap_tab_auth(a, res.tab);
    in.service = snap_tab_service(a, res.tab);
    in.target = &tg;
    in.secret = snap_secret_of_ref(a, res.ref) != 0;
    in.frame_origin = forigin;
    in.session = res.session;
    in.oid = res.object_id;
    char *red = in.url ? snap_url_redact(in.url, false, NULL) : NULL;
    char *url = red ? snap_scrub_url(a, red) : NULL;
    free(red);
    in.url = url;
    snap_rec_capture(a, &in);
    free(url);
    snap_resolved_release(a, &res);
    return 0;
}
