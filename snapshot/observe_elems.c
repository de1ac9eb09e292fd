/*
 * observe_elems.c — the actionable elements of the current tab, listed for
 * replay (issue 14, point 4): each line of the tab's observation that gets
 * a ref, with what a recorded semantic target is checked against (role,
 * name, row context, the heading above it, its frame's origin) and, on
 * request, its element's stable attributes (id, name, aria-label,
 * placeholder, test id).
 *
 * The lines are the snapshot's own (snap_cache_fresh: the cached snapshot
 * while nothing may have changed, else the page read again), so replay
 * finds exactly what a snapshot shows and a live action could name: text
 * the accessibility tree leaves out is never a candidate. Each element is
 * issued its ref as a snapshot would (snap_cache_line_ref), so the action
 * replay takes on it is the live action on that ref, resolved and
 * re-validated the same way.
 *
 * The attributes are read with DOM.describeNode on the element's backend
 * node, in its frame's session: a read the page's scripts neither see nor
 * can answer (no page script runs). Only the five attribute kinds are kept,
 * never a value attribute (a field's value may be a secret).
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"

#include <stdlib.h>
#include <string.h>

#define ELEMS_ATTR_MAX 200       /* bytes of an attribute kept */

void snap_elements_free(snap_elems *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        snap_elem *e = &s->v[i];
        free((char *)e->role), free((char *)e->name), free((char *)e->row);
        free((char *)e->rowtext);
        free((char *)e->section), free((char *)e->frame), free((char *)e->id);
        free((char *)e->aname), free((char *)e->label), free((char *)e->placeholder);
        free((char *)e->testid);
    }
    free(s->v);
    free(s->url);
    free(s->title);
    memset(s, 0, sizeof *s);
}

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        if (n)
            memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static char *dups(const char *s)
{
    return dupn(s ? s : "", s ? strlen(s) : 0);
}

/* The text of the row, list item or article line k is in: the lines under
 * it joined by single spaces, an element's name only where no text line of
 * its own follows it (as page text reads); new, "" when none. */
static char *row_text(const struct snap_cache *C, size_t k)
{
    int p = snap_cache_parent(C, k);
    for (; p >= 0; p = snap_cache_parent(C, (size_t)p)) {
        const char *role = snap_cache_role(C, snap_cache_line_vnode(C, (size_t)p));
        if (strcmp(role, "row") == 0 || strcmp(role, "listitem") == 0 ||
            strcmp(role, "article") == 0)
            break;
    }
    base_buf b = {0};
    size_t n = snap_cache_nlines(C);
    int32_t depth = p >= 0 ? snap_cache_line_vnode(C, (size_t)p)->end : 0;
    for (size_t j = (size_t)p + 1; p >= 0 && j < n; j++) {
        const vnode *x = snap_cache_line_vnode(C, j);
        if (x->end <= depth)
            break;
        const char *hay, *fid, *loader;
        size_t hn = 0;
        snap_cache_line(C, j, &hay, &hn, &fid, &loader);
        if (x->kind == V_ELEM && !hay) {
            hay = snap_obs_vname_in(C->fr[x->frame].str, x);
            hn = hay ? strlen(hay) : 0;
        }
        bool own = j + 1 < n && snap_cache_parent(C, j + 1) == (int)j &&
                   snap_cache_line_vnode(C, j + 1)->kind == V_TEXT;
        if (!hay || !hn || (x->kind == V_ELEM && own))
            continue;
        if (b.len)
            base_buf_putc(&b, ' ');
        base_buf_put(&b, hay, hn);
    }
    if (b.oom) {
        base_buf_free(&b);
        return NULL;
    }
    return b.s ? b.s : dups("");
}

/* Fill e from line k of C (section[0, sn): the heading above it). */
static int elem_fill(snap_agent *a, int tab, const struct snap_cache *C, size_t k,
                     const char *section, size_t sn, snap_elem *e)
{
    const char *hay, *fid, *loader;
    size_t hn;
    const vnode *x = snap_cache_line(C, k, &hay, &hn, &fid, &loader);
    uint32_t n = snap_cache_line_ref(a, tab, C, k);
    if (n)
        snprintf(e->ref, sizeof e->ref, "e%u", n);
    e->role = dups(snap_cache_role(C, x));
    e->name = dupn(hay ? hay : "", hay ? hn : 0);
    if (x->vf & VF_CTX) {
        uint16_t cn;
        memcpy(&cn, C->arena + x->aux, sizeof cn);
        e->row = dupn(C->arena + x->aux + 2, cn);
    } else {
        e->row = dups("");
    }
    e->section = dupn(section ? section : "", section ? sn : 0);
    e->rowtext = row_text(C, k);
    e->frame = dups(x->frame ? C->fr[x->frame].origin : "");
    e->disabled = (x->st & ST_DISABLED) != 0;
    e->id = dups(""), e->aname = dups(""), e->label = dups("");
    e->placeholder = dups(""), e->testid = dups("");
    bool ok = n && e->role && e->name && e->row && e->rowtext && e->section && e->frame && e->id &&
              e->aname && e->label && e->placeholder && e->testid;
    return ok ? 0 : SNAP_ENOMEM;
}

/* The text of heading line k: its name, else the text line under it (a
 * heading's own text is printed as its child); *len its length. */
static const char *heading_text(const struct snap_cache *C, size_t k, size_t *len)
{
    const vnode *x = snap_cache_line_vnode(C, k);
    const char *nm = snap_obs_vname_in(C->fr[x->frame].str, x);
    if (nm && *nm) {
        *len = strlen(nm);
        return nm;
    }
    const char *hay, *fid, *loader;
    size_t hn = 0;
    if (k + 1 < snap_cache_nlines(C) && snap_cache_parent(C, k + 1) == (int)k &&
        snap_cache_line(C, k + 1, &hay, &hn, &fid, &loader)->kind == V_TEXT && hay) {
        *len = hn;
        return hay;
    }
    *len = 0;
    return NULL;
}

int snap_elements(snap_agent *a, snap_elems *out, snap_result *r)
{
    memset(out, 0, sizeof *out);
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return snap_fail(r, SNAP_ENOTAB, "no open tab");
    int tab = t->id;
    const struct snap_cache *C = snap_cache_fresh(a, tab, r);
    if (!C)
        return r->code ? r->code : SNAP_ENOTAB;
    t = snap_tab_by_id(a, tab);  /* the build may have grown the tables */
    if (!t)
        return snap_fail(r, SNAP_ENOTAB, "the tab closed");
    size_t n = snap_cache_nlines(C), m = 0;
    for (size_t k = 0; k < n; k++)
        m += snap_cache_act(snap_cache_line_vnode(C, k));
    out->v = calloc(m ? m : 1, sizeof *out->v);
    snprintf(out->origin, sizeof out->origin, "%s", t->frames[0].origin);
    out->url = dups(t->frames[0].url);
    out->title = dups(C->title ? C->title : t->title);
    out->auth = snap_tab_auth(a, t);
    if (!out->v || !out->url || !out->title)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    const char *section = NULL;
    size_t sn = 0;
    for (size_t k = 0; k < n; k++) {
        const vnode *x = snap_cache_line_vnode(C, k);
        const char *role = x->kind == V_ELEM ? snap_cache_role(C, x) : "";
        if (strcmp(role, "heading") == 0 ||
            (role[0] == 'h' && role[1] >= '1' && role[1] <= '6' && !role[2]))
            section = heading_text(C, k, &sn);
        if (!snap_cache_act(x))
            continue;
        if (elem_fill(a, tab, C, k, section, sn, &out->v[out->n++]))
            return snap_fail(r, SNAP_ENOMEM, "out of memory");
    }
    return 0;
}

/* The attribute of node (DOM.Node) named key; NULL when absent. */
static const char *node_attr(const json_val *node, const char *key)
{
    const json_val *at = json_get(node, "attributes");
    for (const json_val *c = json_first(at); c; c = json_next(c)) {
        const json_val *v = json_next(c);
        if (!v)
            break;
        const char *k = json_str(c, NULL);
        if (k && strcmp(k, key) == 0)
            return json_str(v, NULL);
        c = v;
    }
    return NULL;
}

static int attr_set(const char **slot, const char *v)
{
    if (!v)
        return 0;
    size_t n = strlen(v);
    if (n > ELEMS_ATTR_MAX) {
        n = ELEMS_ATTR_MAX;
        while (n > 0 && ((unsigned char)v[n] & 0xC0) == 0x80)
            n--;
    }
    char *d = dupn(v, n);
    if (!d)
        return -1;
    free((char *)*slot);
    *slot = d;
    return 0;
}

static int elem_attrs(snap_elem *e, const json_val *node)
{
    const char *tid = node_attr(node, "data-testid");
    if (!tid)
        tid = node_attr(node, "data-test");
    if (!tid)
        tid = node_attr(node, "data-test-id");
    if (!tid)
        tid = node_attr(node, "data-qa");
    int bad = attr_set(&e->id, node_attr(node, "id"));
    bad |= attr_set(&e->aname, node_attr(node, "name"));
    bad |= attr_set(&e->label, node_attr(node, "aria-label"));
    bad |= attr_set(&e->placeholder, node_attr(node, "placeholder"));
    bad |= attr_set(&e->testid, tid);
    e->attrs = !bad;
    return bad;
}

int snap_elements_attrs(snap_agent *a, snap_elems *s, const bool *want, snap_result *r)
{
    uint64_t *ids = calloc(s->n ? s->n : 1, sizeof *ids);
    if (!ids)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->n; i++) {
        snap_ref *rf;
        snap_result tmp = {0};
        if ((want && !want[i]) || snap_ref_doc(a, s->v[i].ref, &rf, &tmp) || rf->backend == 0) {
            snap_result_free(&tmp);
            continue;
        }
        int backend = rf->backend;
        snap_tab *t = snap_tab_by_id(a, snap_ref_tab(a, rf));
        snap_frame *f = t ? snap_frame_find(t, snap_ref_frame(a, rf)) : NULL;
        if (backend < 0) {
            /* A walker ref (the default build): its element's backend node
             * is found by resolving it (agent_refs.c), one at a time. */
            snap_resolved res;
            backend = snap_ref_resolve(a, s->v[i].ref, &res, &tmp) ? 0 : res.backend;
            snap_resolved_release(a, &res);
            snap_result_free(&tmp);
            if (backend <= 0)
                continue;
        }
        char q[48];
        snprintf(q, sizeof q, "{\"backendNodeId\":%d}", backend);
        if (f)
            snap_cdp_send(a, f->session, "DOM.describeNode", q, &ids[i], NULL);
    }
    int rc = 0;
    for (size_t i = 0; i < s->n; i++) {
        cdp_reply rep = {0};
        if (ids[i] && !cdp_wait(a->c, ids[i], a->o.timeout_ms, &rep, NULL) &&
            elem_attrs(&s->v[i], json_get(rep.result, "node")))
            rc = SNAP_ENOMEM;
        cdp_reply_free(&rep);
    }
    free(ids);
    return rc ? snap_fail(r, rc, "out of memory") : 0;
}
