/*
 * agent_refs.c — refs (issued per node and document), fields that were ever secret,
 * and observation ids.
 *
 * Part of snapshot/ (see agent_int.h for what the agent* files share).
 */
#include "snapshot/agent_int.h"
#include "snapshot/page_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- refs ---- */

static uint64_t hash_key(uint32_t doc, int backend)
{
    uint64_t h = ((uint64_t)doc << 32) ^ (uint32_t)backend;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

int snap_ref_tab(const snap_agent *a, const snap_ref *rf)
{
    return a->refdocs[rf->doc].tab;
}

const char *snap_ref_frame(const snap_agent *a, const snap_ref *rf)
{
    return a->refdocs[rf->doc].frame;
}

const char *snap_ref_role(const snap_agent *a, const snap_ref *rf)
{
    return a->ref_roles[rf->role];
}

void snap_ref_clear(snap_ref *rf)
{
    free(rf->name);
    free(rf->gate_name);
    rf->name = rf->gate_name = NULL;
}

const char *snap_ref_gate_role(const snap_agent *a, const snap_ref *rf)
{
    if (rf->backend > 0)
        return snap_ref_role(a, rf);
    return rf->gate_name ? a->ref_roles[rf->gate_role] : "";
}

const char *snap_ref_gate_name(const snap_ref *rf)
{
    const char *s = rf->backend > 0 ? rf->name : rf->gate_name;
    return s ? s : "";
}

/* The index of document (tab, frame, loader) in a->refdocs, or -1. Refs
 * are issued a document at a time: the last one found is tried first. */
static long refdoc_find(const snap_agent *a, int tab, const char *frame, const char *loader)
{
    for (size_t k = 0; k < a->nrefdocs; k++) {
        size_t i = (a->refdoc_last + a->nrefdocs - k) % a->nrefdocs;
        const snap_refdoc *d = &a->refdocs[i];
        if (d->tab == tab && strcmp(d->frame, frame) == 0 && strcmp(d->loader, loader) == 0)
            return (long)i;
    }
    return -1;
}

/* The index of document (tab, frame, loader) in a->refdocs, adding it;
 * -1 when out of memory. */
static long refdoc_ix(snap_agent *a, int tab, const char *frame, const char *loader)
{
    long found = refdoc_find(a, tab, frame, loader);
    if (found >= 0) {
        a->refdoc_last = (size_t)found;
        return found;
    }
    if (a->nrefdocs >= UINT32_MAX)
        return -1;
    if (a->nrefdocs == a->caprefdocs) {
        size_t n = a->caprefdocs ? a->caprefdocs * 2 : 8;
        snap_refdoc *nd = realloc(a->refdocs, n * sizeof *nd);
        if (!nd)
            return -1;
        a->refdocs = nd;
        a->caprefdocs = n;
    }
    snap_refdoc *d = &a->refdocs[a->nrefdocs];
    d->tab = tab;
    snap_agent_copyid(d->frame, frame);
    snap_agent_copyid(d->loader, loader);
    a->refdoc_last = a->nrefdocs;
    return (long)a->nrefdocs++;
}

long snap_refdoc_ix(snap_agent *a, int tab, const char *frame, const char *loader, bool add)
{
    frame = frame ? frame : "";
    loader = loader ? loader : "";
    return add ? refdoc_ix(a, tab, frame, loader) : refdoc_find(a, tab, frame, loader);
}

/* The index of role in a->ref_roles (cut at 31 bytes), adding it; -1 when
 * out of memory. */
static long refrole_ix(snap_agent *a, const char *role)
{
    char r[32];
    snprintf(r, sizeof r, "%s", role ? role : "");
    for (size_t i = 0; i < a->nref_roles; i++)
        if (strcmp(a->ref_roles[i], r) == 0)
            return (long)i;
    if (a->nref_roles > UINT16_MAX)
        return -1;
    if (a->nref_roles == a->capref_roles) {
        size_t n = a->capref_roles ? a->capref_roles * 2 : 16;
        char (*nr)[32] = realloc(a->ref_roles, n * sizeof *nr);
        if (!nr)
            return -1;
        a->ref_roles = nr;
        a->capref_roles = n;
    }
    memcpy(a->ref_roles[a->nref_roles], r, sizeof r);
    return (long)a->nref_roles++;
}

static int ref_hash_grow(snap_agent *a)
{
    size_t cap = a->ref_hash_cap ? a->ref_hash_cap * 2 : 1024;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < a->nrefs; i++) {
        snap_ref *rf = &a->refs[i];
        size_t k = hash_key(rf->doc, rf->backend) & (cap - 1);
        while (h[k])
            k = (k + 1) & (cap - 1);
        h[k] = rf->n;
    }
    free(a->ref_hash);
    a->ref_hash = h;
    a->ref_hash_cap = cap;
    return 0;
}

uint32_t snap_ref_for(snap_agent *a, int tab, const char *frame, const char *loader,
                      int backend, const char *role, const char *name)
{
    if (backend == 0)
        return 0;   /* no node to resolve (text; a walker line without an id) */
    if (!frame)
        frame = "";
    if (!loader)
        loader = "";
    long doc = refdoc_ix(a, tab, frame, loader);
    if (doc < 0)
        return 0;
    if (a->ref_hash_cap) {
        size_t mask = a->ref_hash_cap - 1;
        for (size_t k = hash_key((uint32_t)doc, backend) & mask; a->ref_hash[k];
             k = (k + 1) & mask) {
            snap_ref *rf = &a->refs[a->ref_hash[k] - 1];
            if (rf->doc == (uint32_t)doc && rf->backend == backend) {
                if (name && (!rf->name || strcmp(rf->name, name) != 0))
                    snap_agent_setstr(&rf->name, name);
                return rf->n;
            }
        }
    }
    long ri = refrole_ix(a, role);
    if (ri < 0)
        return 0;
    if ((a->nrefs + 1) * 2 > a->ref_hash_cap && ref_hash_grow(a))
        return 0;
    if (a->nrefs == a->caprefs) {
        size_t n = a->caprefs ? a->caprefs * 2 : 256;
        snap_ref *nr = realloc(a->refs, n * sizeof *nr);
        if (!nr)
            return 0;
        a->refs = nr;
        a->caprefs = n;
    }
    snap_ref *rf = &a->refs[a->nrefs];
    memset(rf, 0, sizeof *rf);
    rf->n = (uint32_t)(a->nrefs + 1);
    rf->doc = (uint32_t)doc;
    rf->backend = backend;
    rf->role = (uint16_t)ri;
    rf->name = base_strdup(name);
    a->nrefs++;
    size_t mask = a->ref_hash_cap - 1;
    size_t k = hash_key(rf->doc, backend) & mask;
    while (a->ref_hash[k])
        k = (k + 1) & mask;
    a->ref_hash[k] = rf->n;
    return rf->n;
}

/* ---- fields that were ever secret ---- */

static struct snap_secret *secret_find(const snap_agent *a, uint32_t doc, int backend)
{
    for (size_t i = 0; i < a->nsecrets; i++)
        if (a->secrets[i].doc == doc && a->secrets[i].backend == backend)
            return &a->secrets[i];
    return NULL;
}

void snap_secret_note(snap_agent *a, int tab, const char *frame, const char *loader,
                      int backend, unsigned kind)
{
    if (!kind || backend == 0)
        return;   /* backend < 0: a walker ref's element (snap_ref_resolve) */
    long doc = refdoc_ix(a, tab, frame ? frame : "", loader ? loader : "");
    if (doc < 0)
        return;
    struct snap_secret *s = secret_find(a, (uint32_t)doc, backend);
    if (s) {
        s->kind |= kind;
        return;
    }
    if (!a->secrets) {
        a->secrets = calloc(SNAP_SECRETS_MAX, sizeof *a->secrets);
        if (!a->secrets)
            return;
    }
    /* A ring: past the bound the oldest is forgotten. */
    s = &a->secrets[a->next_secret];
    a->next_secret = (a->next_secret + 1) % SNAP_SECRETS_MAX;
    if (a->nsecrets < SNAP_SECRETS_MAX)
        a->nsecrets++;
    s->doc = (uint32_t)doc;
    s->backend = backend;
    s->kind = kind;
}

unsigned snap_secret_kind(const snap_agent *a, int tab, const char *frame, const char *loader,
                          int backend)
{
    if (!a->nsecrets || backend <= 0)
        return 0;
    long doc = refdoc_find(a, tab, frame ? frame : "", loader ? loader : "");
    const struct snap_secret *s = doc >= 0 ? secret_find(a, (uint32_t)doc, backend) : NULL;
    return s ? s->kind : 0;
}

size_t snap_secret_list(const snap_agent *a, int tab, const char *frame, const char *loader,
                        int *out, size_t max)
{
    if (!a->nsecrets)
        return 0;
    long doc = refdoc_find(a, tab, frame ? frame : "", loader ? loader : "");
    size_t n = 0;
    for (size_t i = 0; doc >= 0 && i < a->nsecrets && n < max; i++)
        if (a->secrets[i].doc == (uint32_t)doc)
            out[n++] = a->secrets[i].backend;
    return n;
}

unsigned snap_secret_of_ref(const snap_agent *a, const snap_ref *rf)
{
    const struct snap_secret *s = rf ? secret_find(a, rf->doc, rf->backend) : NULL;
    return s ? s->kind : 0;
}

/* Parse "e12" (also "[e12]" and "ref=e12"); 0 when malformed. */
static uint32_t parse_ref(const char *s)
{
    if (!s)
        return 0;
    if (*s == '[')
        s++;
    if (strncmp(s, "ref=", 4) == 0)
        s += 4;
    if (*s != 'e')
        return 0;
    s++;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || (*end && *end != ']') || v == 0 || v > 0xffffffffUL)
        return 0;
    return (uint32_t)v;
}

/* role "name" for error texts: role and name are page text, written by the
 * page-text writer (snap_obs_put_page: quotes, controls, marker brackets,
 * bidi, invisible, tag and C1 characters shown escaped; the name cut at 60
 * bytes on a character boundary). buf holds at most role 32 and name 60
 * bytes of input, escaped (SHORT_NAME_MAX). */
#define SHORT_NAME_MAX 512
static const char *short_name(const snap_agent *a, const snap_ref *rf, char *buf, size_t cap)
{
    const char *role = snap_ref_role(a, rf);
    base_buf b = {0};
    snap_obs_put_page(&b, role, strlen(role), 32, 0);
    if (rf->name && *rf->name) {
        base_buf_put(&b, " \"", 2);
        snap_obs_put_page(&b, rf->name, strlen(rf->name), 60, PAGE_QUOTED);
        base_buf_put(&b, "\"", 1);
    }
    /* Out of memory, or (never at these bounds) too long: no page text. */
    snprintf(buf, cap, "%s", b.s && !b.oom && b.len < cap ? b.s : "element");
    base_buf_free(&b);
    return buf;
}

/* ---- cdpgate's isolated world ---- */

static snap_frame *world_frame(snap_agent *a, int tab_id, const char *frame_id)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    snap_frame *f = t && !t->closed && frame_id ? snap_frame_find(t, frame_id) : NULL;
    return f && !f->gone ? f : NULL;
}

int64_t snap_frame_world(snap_agent *a, int tab_id, const char *frame_id_in)
{
    /* A copy: the caller's may point into the frame array, which moves. */
    char frame_id[SNAP_ID_MAX];
    snap_agent_copyid(frame_id, frame_id_in ? frame_id_in : "");
    snap_frame *f = world_frame(a, tab_id, frame_id);
    if (!f || f->mute)
        return 0;       /* (a frame whose process does not answer: not asked) */
    if (f->world > 0 && strcmp(f->world_loader, f->loader) == 0 &&
        strcmp(f->world_session, f->session) == 0)
        return f->world;
    char session[SNAP_ID_MAX], loader[SNAP_ID_MAX];
    snap_agent_copyid(session, f->session);
    snap_agent_copyid(loader, f->loader);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "frameId");
    json_w_str(&w, f->id);
    json_w_key(&w, "worldName");
    json_w_str(&w, "cdpgate");
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    cdp_reply rep = {0};
    int rc = params ? snap_cdp_call(a, session, "Page.createIsolatedWorld", params,
                                    a->o.timeout_ms, &rep, NULL) : CDP_ENOMEM;
    free(params);
    int64_t world = rc ? 0 : json_get_int(rep.result, "executionContextId", 0);
    cdp_reply_free(&rep);
    /* Looked up again (the frame array may have moved); a frame that
     * navigated meanwhile has another document: no world for it. */
    f = world_frame(a, tab_id, frame_id);
    if (!f || world <= 0 || strcmp(f->loader, loader) != 0 || strcmp(f->session, session) != 0)
        return 0;
    f->world = world;
    snap_agent_copyid(f->world_loader, loader);
    snap_agent_copyid(f->world_session, session);
    return world;
}

/* Runtime.evaluate's parameters for expr in the isolated world, by value
 * (malloc'd; NULL when out of memory). */
char *snap_world_eval_params(int64_t world, const char *expr)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "expression");
    json_w_str(&w, expr);
    json_w_key(&w, "contextId");
    json_w_int(&w, world);
    json_w_key(&w, "returnByValue");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    char *pj = json_w_take(&w, NULL);
    return pj;
}

int snap_world_eval(snap_agent *a, const char *session, int64_t world, const char *expr,
                    uint64_t *id)
{
    *id = 0;
    char *pj = snap_world_eval_params(world, expr);
    int rc = pj ? snap_cdp_send(a, session, "Runtime.evaluate", pj, id, NULL) : SNAP_ENOMEM;
    free(pj);
    return rc;
}

int snap_frame_mut_read(snap_agent *a, int tab_id, size_t n, const char (*ids)[SNAP_ID_MAX],
                        int64_t *out)
{
    enum { MAX = 64 };
    uint64_t call[MAX];
    int bad = 0;
    if (n > MAX)
        return -1;
    for (size_t i = 0; i < n; i++) {
        out[i] = -2;
        call[i] = 0;
        int64_t world = snap_frame_world(a, tab_id, ids[i]);
        snap_tab *t = snap_tab_by_id(a, tab_id);
        snap_frame *f = t ? snap_frame_find(t, ids[i]) : NULL;
        if (world <= 0 || !f) {
            bad = -1;
            continue;
        }
        if (snap_world_eval(a, f->session, world, snap_js_mut_expr, &call[i]))
            bad = -1;
    }
    /* Pipelined: every frame's read is out before the first answer. */
    for (size_t i = 0; i < n; i++) {
        if (!call[i])
            continue;
        cdp_reply rep = {0};
        int rc = cdp_wait(a->c, call[i], a->o.timeout_ms, &rep, NULL);
        const json_val *res = rc ? NULL : json_get(rep.result, "result");
        if (res && !json_get(rep.result, "exceptionDetails") &&
            json_is(json_get(res, "value"), JSON_NUMBER))
            out[i] = (int64_t)json_num(json_get(res, "value"));
        else
            bad = -1;
        cdp_reply_free(&rep);
    }
    return bad;
}

/* Forget the frame's world (its context was found gone). */
static void frame_world_drop(snap_agent *a, int tab_id, const char *frame_id)
{
    snap_frame *f = world_frame(a, tab_id, frame_id);
    if (f)
        f->world = 0;
}

/* The ref's document checks (see snap_int.h): 0 with *out, or a failure
 * with what changed; what[] gets the short name for later messages. */
static int ref_doc(snap_agent *a, const char *ref, snap_ref **out, snap_tab **tp,
                   snap_frame **fp, char *what, size_t cap, snap_result *r)
{
    uint32_t n = parse_ref(ref);
    if (!n)
        return snap_fail(r, SNAP_EINVAL, "'%s' is not a ref: refs look like e12, as shown "
                         "in [e12] in a snapshot", ref ? ref : "");
    if (n > a->nrefs)
        return snap_fail(r, SNAP_ENOREF, "no element e%u was ever issued; take a snapshot "
                         "and use a ref from it", n);
    snap_ref *rf = &a->refs[n - 1];
    short_name(a, rf, what, cap);
    int rtab = snap_ref_tab(a, rf);
    snap_tab *t = snap_tab_by_id(a, rtab);
    if (!t || t->closed)
        return snap_fail(r, SNAP_ESTALE, "e%u (%s) was in tab t%d, which is closed", n, what,
                         rtab);
    snap_frame *f = snap_frame_find(t, snap_ref_frame(a, rf));
    if (!f || f->gone)
        return snap_fail(r, SNAP_ESTALE, "e%u (%s) was in a frame that is gone from the "
                         "page; take a new snapshot", n, what);
    if (strcmp(f->loader, a->refdocs[rf->doc].loader) != 0)
        return snap_fail(r, SNAP_ESTALE, "e%u (%s) belonged to an earlier document: the %s "
                         "navigated since (now %s); take a new snapshot", n, what,
                         f == &t->frames[0] ? "page" : "frame", f->url ? f->url : "");
    *out = rf;
    *tp = t;
    *fp = f;
    return 0;
}

int snap_ref_doc(snap_agent *a, const char *ref, snap_ref **out, snap_result *r)
{
    char what[SHORT_NAME_MAX];
    snap_tab *t;
    snap_frame *f;
    return ref_doc(a, ref, out, &t, &f, what, sizeof what, r);
}

void snap_ref_what(const snap_agent *a, const snap_ref *rf, char *buf, size_t cap)
{
    short_name(a, rf, buf, cap);
}

/* Runtime.callFunctionOn params of fn (a compiled-in walker function) in
 * isolated world `world` with one argument: walker_params_begin writes up
 * to the argument's value, which the caller writes next, and
 * walker_params_end closes them (new; NULL when out of memory). */
static void walker_params_begin(json_w *w, const char *fn, int64_t world)
{
    json_w_init(w);
    json_w_obj_begin(w);
    json_w_key(w, "functionDeclaration");
    json_w_str(w, fn);
    json_w_key(w, "executionContextId");
    json_w_int(w, world);
    json_w_key(w, "arguments");
    json_w_arr_begin(w);
    json_w_obj_begin(w);
    json_w_key(w, "value");
}

static char *walker_params_end(json_w *w, bool by_value)
{
    json_w_obj_end(w);
    json_w_arr_end(w);
    json_w_key(w, "returnByValue");
    json_w_bool(w, by_value);
    if (!by_value) {
        json_w_key(w, "objectGroup");
        json_w_str(w, "cdpgate");
    }
    json_w_obj_end(w);
    return json_w_take(w, NULL);
}

/* Those params with the walker id `id` as the argument. */
static char *walker_fn_params(const char *fn, int64_t world, int id, bool by_value)
{
    json_w w;
    walker_params_begin(&w, fn, world);
    json_w_int(&w, id);
    return walker_params_end(&w, by_value);
}

/* Send method with params on session; 0 or an error (*id = 0). */
static int send_owned(snap_agent *a, const char *session, const char *method, char *params,
                      uint64_t *id)
{
    *id = 0;
    int rc = params ? snap_cdp_send(a, session, method, params, id, NULL) : SNAP_ENOMEM;
    free(params);
    return rc;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *ws_skip(const char *s)
{
    while (is_ws(*s))
        s++;
    return s;
}

/* Two names the same but for white space (a run of it is one space; none
 * at the ends)? */
static bool same_name(const char *x, const char *y)
{
    x = ws_skip(x);
    y = ws_skip(y);
    while (*x && *y) {
        bool wx = is_ws(*x), wy = is_ws(*y);
        if (wx != wy)
            return false;
        if (wx) {
            x = ws_skip(x);
            y = ws_skip(y);
        } else if (*x++ != *y++) {
            return false;
        }
    }
    return !*ws_skip(x) && !*ws_skip(y);
}

/* Step 1 of walker_resolve: the element (objectId into out) and the secret
 * kinds the walker ever saw on it, pipelined. 0, or a failure in r. */
static int walker_element(snap_agent *a, snap_resolved *out, uint32_t n, int id,
                          const char *what, unsigned *kind, snap_result *r)
{
    uint64_t call[2];
    int rc = send_owned(a, out->session, "Runtime.callFunctionOn",
                        walker_fn_params(snap_js_walk_ref_fn, out->world, id, false), &call[0]);
    int rc2 = send_owned(a, out->session, "Runtime.callFunctionOn",
                         walker_fn_params(snap_js_walk_sec_fn, out->world, id, true), &call[1]);
    cdp_reply rep = {0}, sec = {0};
    cdp_err e = {0};
    rc = rc ? rc : cdp_wait(a->c, call[0], a->o.timeout_ms, &rep, &e);
    rc2 = rc2 ? rc2 : cdp_wait(a->c, call[1], a->o.timeout_ms, &sec, NULL);
    const char *oid = rc || json_get(rep.result, "exceptionDetails") ? NULL
                      : json_get_str(json_get(rep.result, "result"), "objectId");
    if (oid && strlen(oid) < SNAP_ID_MAX)
        snap_agent_copyid(out->object_id, oid);
    const json_val *kv = rc2 || json_get(sec.result, "exceptionDetails") ? NULL
                         : json_get(json_get(sec.result, "result"), "value");
    *kind = json_is(kv, JSON_NUMBER) ? (unsigned)json_num(kv) & 7u : 0;
    cdp_reply_free(&rep);
    cdp_reply_free(&sec);
    if (rc)
        return snap_fail(r, SNAP_EBROWSER, "e%u: %s", n, e.msg[0] ? e.msg : "no answer");
    if (!out->object_id[0])
        return snap_fail(r, SNAP_ESTALE, "e%u (%s) was removed from the page; take a new "
                         "snapshot", n, what);
    if (rc2) {
        /* Not known whether it was ever secret: never act on it unknowing. */
        snap_resolved_release(a, out);
        return snap_fail(r, SNAP_EBROWSER, "e%u (%s): cdpgate could not read what it knows "
                         "of the element; take a new snapshot and try again", n, what);
    }
    return 0;
}

/* The AX name s masked in the isolated world of the ref's frame with the
 * secret values the last walk noted (snap_js_walk_mask_fn): new, or NULL
 * (none noted, no answer: the names then differ, and the action is
 * refused). */
static char *walker_masked(snap_agent *a, const snap_resolved *res, const char *s)
{
    json_w w;
    walker_params_begin(&w, snap_js_walk_mask_fn, res->world);
    json_w_str(&w, s);
    uint64_t id = 0;
    cdp_reply rep = {0};
    char *out = NULL;
    if (send_owned(a, res->session, "Runtime.callFunctionOn", walker_params_end(&w, true),
                   &id) == 0 &&
        cdp_wait(a->c, id, a->o.timeout_ms, &rep, NULL) == 0 &&
        !json_get(rep.result, "exceptionDetails")) {
        const char *v = json_get_str(json_get(rep.result, "result"), "value");
        out = v ? base_strdup(v) : NULL;
    }
    cdp_reply_free(&rep);
    return out;
}

/* A walker ref's element (docs/snapshot.md, phase 2): the walker's id
 * looked up in cdpgate's isolated world of its frame (its objectId; none
 * when the element left the document: stale, as an AX ref's node would
 * be), then in one round trip its backend node (DOM.describeNode) and its
 * AX node (Accessibility.getPartialAXTree, no relatives). The gate
 * classifies the element by that node's role and name, never by the
 * walker's; the AX name must be the walker's (but for white space): when
 * it is not, the agent was shown another name than the gate would judge
 * (and the AX name may hold what the walker withheld, a secret field's
 * value), so it is refused. The secret kinds the walker saw on the element
 * are noted (snap_secret_note) under the ref and the backend node, as the
 * AX build notes them. Fails closed: without all of it, nothing acts.
 * walker_resolve sends the two AX calls (out->ax_ids) and walker_ax_check,
 * called by snap_ref_resolve_check, reads them: the caller's read-only
 * calls go out in the same round trip (issue 13, point 9). */
static int walker_resolve(snap_agent *a, snap_resolved *out, uint32_t n, int id,
                          const char *what, snap_result *r)
{
    int rc = walker_element(a, out, n, id, what, &out->kind, r);
    if (rc)
        return rc;
    char q[SNAP_ID_MAX + 64];
    snprintf(q, sizeof q, "{\"objectId\":\"%s\"}", out->object_id);
    if (snap_cdp_send(a, out->session, "DOM.describeNode", q, &out->ax_ids[0], NULL))
        out->ax_ids[0] = 0;
    snprintf(q, sizeof q, "{\"objectId\":\"%s\",\"fetchRelatives\":false}", out->object_id);
    if (snap_cdp_send(a, out->session, "Accessibility.getPartialAXTree", q, &out->ax_ids[1], NULL))
        out->ax_ids[1] = 0;
    out->ax_pending = true;
    return 0;
}

/* Drop a walker ref's AX calls unread (their replies are dropped whenever
 * they come). */
static void walker_ax_forget(snap_agent *a, snap_resolved *out)
{
    for (int i = 0; i < 2; i++)
        if (out->ax_ids[i])
            cdp_forget(a->c, out->ax_ids[i]);
    out->ax_ids[0] = out->ax_ids[1] = 0;
    out->ax_pending = false;
}

/* The replies walker_resolve asked for, judged (see above): 0, or a
 * failure with out released. */
static int walker_ax_check(snap_agent *a, snap_resolved *out, snap_result *r)
{
    uint32_t n = out->n;
    unsigned kind = out->kind;
    uint64_t call[2] = {out->ax_ids[0], out->ax_ids[1]};
    out->ax_ids[0] = out->ax_ids[1] = 0;
    out->ax_pending = false;
    char what[SHORT_NAME_MAX];
    short_name(a, &a->refs[n - 1], what, sizeof what);
    cdp_reply dn = {0}, ax = {0};
    bool ok = call[0] && !cdp_wait(a->c, call[0], a->o.timeout_ms, &dn, NULL);
    ok = call[1] && !cdp_wait(a->c, call[1], a->o.timeout_ms, &ax, NULL) && ok;
    int backend = ok ? (int)json_get_int(json_get(dn.result, "node"), "backendNodeId", 0) : 0;
    const json_val *node = NULL;
    for (const json_val *x = ok ? json_first(json_get(ax.result, "nodes")) : NULL; x && !node;
         x = json_next(x))
        if (json_get_int(x, "backendDOMNodeId", 0) == backend)
            node = x;
    const char *role = node && !json_bool(json_get(node, "ignored"))
                       ? json_get_str(json_get(node, "role"), "value") : NULL;
    const char *name = node ? json_get_str(json_get(node, "name"), "value") : NULL;
    snap_ref *rf = &a->refs[n - 1];
    /* A text line's ref (a text target) is named by the line's first
     * bytes and gated as the text it is, as an AX text ref is: its node
     * must be the text's (StaticText); the name is not compared (the line
     * may join several text nodes). */
    bool text = strcmp(snap_ref_role(a, rf), "text") == 0;
    if (text && role && strcmp(role, "StaticText") != 0)
        role = NULL;
    bool same = text || same_name(name ? name : "", rf->name ? rf->name : "");
    /* The walker's name shows "[secret]" where the AX name holds a secret
     * field's value: the AX name masked as the walk masked it. */
    char *masked = !same && name && rf->name && strstr(rf->name, "[secret]")
                   ? walker_masked(a, out, name) : NULL;
    same = same || (masked && same_name(masked, rf->name));
    free(masked);
    long ri = backend > 0 && role && *role && same ? refrole_ix(a, role) : -1;
    bool other_name = role && *role && !same;   /* read before the replies are freed */
    if (ri >= 0) {
        snap_agent_setstr(&rf->gate_name, rf->name ? rf->name : "");
        rf->gate_role = text ? rf->role : (uint16_t)ri;
        out->backend = backend;
        /* Copies: noting may grow a->refdocs. */
        char fr[SNAP_ID_MAX], ld[SNAP_ID_MAX];
        int tab = a->refdocs[rf->doc].tab;
        snap_agent_copyid(fr, a->refdocs[rf->doc].frame);
        snap_agent_copyid(ld, a->refdocs[rf->doc].loader);
        snap_secret_note(a, tab, fr, ld, rf->backend, kind);
        snap_secret_note(a, tab, fr, ld, backend, kind);
    }
    cdp_reply_free(&dn);
    cdp_reply_free(&ax);
    if (ri < 0 || !rf->gate_name) {
        snap_resolved_release(a, out);
        if (other_name)
            return snap_fail(r, SNAP_EBROWSER, "e%u (%s): the browser's accessibility tree "
                             "names this element differently from the walker's view, so the "
                             "gate cannot judge what you were shown; take a snapshot without "
                             "CDPGATE_WALKER and use a ref from it", n, what);
        return snap_fail(r, SNAP_EBROWSER, "e%u (%s): its node in the accessibility tree "
                         "could not be read, so the gate cannot classify it; take a new "
                         "snapshot and try again", n, what);
    }
    return 0;
}

int snap_walk_secrets(snap_agent *a, int tab_id, const char *frame_id, const int *ids,
                      size_t n)
{
    enum { MAX = 64 };
    char fid[SNAP_ID_MAX], session[SNAP_ID_MAX], loader[SNAP_ID_MAX];
    snap_agent_copyid(fid, frame_id);
    int64_t world = snap_frame_world(a, tab_id, fid);
    snap_frame *f = world > 0 ? world_frame(a, tab_id, fid) : NULL;
    if (!f || n > MAX)
        return -1;
    snap_agent_copyid(session, f->session);
    snap_agent_copyid(loader, f->loader);
    uint64_t el[MAX], kc[MAX], dc[MAX];
    char oid[MAX][SNAP_ID_MAX];
    unsigned kind[MAX];
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad |= send_owned(a, session, "Runtime.callFunctionOn",
                          walker_fn_params(snap_js_walk_ref_fn, world, ids[i], false), &el[i]);
        bad |= send_owned(a, session, "Runtime.callFunctionOn",
                          walker_fn_params(snap_js_walk_sec_fn, world, ids[i], true), &kc[i]);
    }
    for (size_t i = 0; i < n; i++) {
        cdp_reply rep = {0}, sec = {0};
        oid[i][0] = 0;
        bool ok = el[i] && !cdp_wait(a->c, el[i], a->o.timeout_ms, &rep, NULL);
        const char *o = ok ? json_get_str(json_get(rep.result, "result"), "objectId") : NULL;
        if (o && strlen(o) < SNAP_ID_MAX)
            snap_agent_copyid(oid[i], o);
        ok = kc[i] && !cdp_wait(a->c, kc[i], a->o.timeout_ms, &sec, NULL);
        const json_val *kv = ok ? json_get(json_get(sec.result, "result"), "value") : NULL;
        kind[i] = json_is(kv, JSON_NUMBER) ? (unsigned)json_num(kv) & 7u : 0;
        if (!kind[i])
            kind[i] = SNAP_SECRET_CC;   /* secret, of a kind not known: as observe_dom.c */
        /* Gone meanwhile: nothing to note (its value is not in the page). */
        cdp_reply_free(&rep);
        cdp_reply_free(&sec);
        char q[SNAP_ID_MAX + 32];
        snprintf(q, sizeof q, "{\"objectId\":\"%.*s\"}", SNAP_ID_MAX - 1, oid[i]);
        dc[i] = 0;
        if (oid[i][0])
            bad |= snap_cdp_send(a, session, "DOM.describeNode", q, &dc[i], NULL);
    }
    for (size_t i = 0; i < n; i++) {
        cdp_reply rep = {0};
        int backend = dc[i] && !cdp_wait(a->c, dc[i], a->o.timeout_ms, &rep, NULL)
                      ? (int)json_get_int(json_get(rep.result, "node"), "backendNodeId", 0) : 0;
        cdp_reply_free(&rep);
        if (oid[i][0] && backend <= 0)
            bad = -1;
        if (backend > 0)
            snap_secret_note(a, tab_id, fid, loader, backend, kind[i]);
        snap_secret_note(a, tab_id, fid, loader, -ids[i], kind[i]);
        snap_resolved r = {0};
        snap_agent_copyid(r.session, session);
        snap_agent_copyid(r.object_id, oid[i]);
        snap_resolved_release(a, &r);
    }
    return bad ? -1 : 0;
}

/* Runtime.callFunctionOn params: snap_js_walk_leak_fn in world on the
 * names of the n nodes (new; NULL when out of memory). */
static char *leak_params(int64_t world, const json_val *const *node, size_t n)
{
    json_w w;
    walker_params_begin(&w, snap_js_walk_leak_fn, world);
    json_w_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        const char *nm = json_get_str(json_get(node[i], "name"), "value");
        json_w_str(&w, nm ? nm : "");
    }
    json_w_arr_end(&w);
    return walker_params_end(&w, true);
}

int snap_walk_ax_nodes(snap_agent *a, int tab_id, const char *frame_id, const int *ids,
                       size_t n, snap_walk_ax_fn fn, void *ud)
{
    enum { MAX = SNAP_WALK_AX_MAX };
    char fid[SNAP_ID_MAX], session[SNAP_ID_MAX];
    snap_agent_copyid(fid, frame_id);
    int64_t world = snap_frame_world(a, tab_id, fid);
    snap_frame *f = world > 0 ? world_frame(a, tab_id, fid) : NULL;
    if (!f || n > MAX || !n)
        return -1;
    snap_agent_copyid(session, f->session);
    uint64_t el[MAX], dc[MAX], xc[MAX];
    char oid[MAX][SNAP_ID_MAX];
    cdp_reply ax[MAX];
    const json_val *node[MAX];
    int bad = 0;
    memset(ax, 0, sizeof ax);
    for (size_t i = 0; i < n; i++)
        bad |= send_owned(a, session, "Runtime.callFunctionOn",
                          walker_fn_params(snap_js_walk_ref_fn, world, ids[i], false), &el[i]);
    /* Each element's backend node and AX node, pipelined. */
    for (size_t i = 0; i < n; i++) {
        cdp_reply rep = {0};
        oid[i][0] = 0;
        dc[i] = xc[i] = 0;
        bool ok = el[i] && !cdp_wait(a->c, el[i], a->o.timeout_ms, &rep, NULL);
        const char *o = ok ? json_get_str(json_get(rep.result, "result"), "objectId") : NULL;
        if (o && strlen(o) < SNAP_ID_MAX)
            snap_agent_copyid(oid[i], o);
        cdp_reply_free(&rep);
        if (!oid[i][0]) {
            bad = -1;
            continue;
        }
        char q[SNAP_ID_MAX + 48];
        snprintf(q, sizeof q, "{\"objectId\":\"%.*s\"}", SNAP_ID_MAX - 1, oid[i]);
        bad |= snap_cdp_send(a, session, "DOM.describeNode", q, &dc[i], NULL);
        snprintf(q, sizeof q, "{\"objectId\":\"%.*s\",\"fetchRelatives\":false}",
                 SNAP_ID_MAX - 1, oid[i]);
        bad |= snap_cdp_send(a, session, "Accessibility.getPartialAXTree", q, &xc[i], NULL);
    }
    for (size_t i = 0; i < n; i++) {
        cdp_reply rep = {0};
        int backend = dc[i] && !cdp_wait(a->c, dc[i], a->o.timeout_ms, &rep, NULL)
                      ? (int)json_get_int(json_get(rep.result, "node"), "backendNodeId", 0) : 0;
        cdp_reply_free(&rep);
        node[i] = NULL;
        if (xc[i] && !cdp_wait(a->c, xc[i], a->o.timeout_ms, &ax[i], NULL))
            for (const json_val *x = json_first(json_get(ax[i].result, "nodes"));
                 x && !node[i] && backend > 0; x = json_next(x))
                if (json_get_int(x, "backendDOMNodeId", 0) == backend)
                    node[i] = x;
        /* Ignored in the AX tree: the walker printed what the browser
         * does not show; the whole tree decides. */
        if (!node[i] || json_bool(json_get(node[i], "ignored")))
            bad = -1;
        snap_resolved r = {0};
        snap_agent_copyid(r.session, session);
        snap_agent_copyid(r.object_id, oid[i]);
        if (oid[i][0])
            snap_resolved_release(a, &r);
    }
    /* The names may be shown only when none holds a secret field's value. */
    if (!bad) {
        cdp_reply rep = {0};
        uint64_t lc = 0;
        bad |= send_owned(a, session, "Runtime.callFunctionOn",
                          leak_params(world, node, n), &lc);
        const json_val *v = lc && !cdp_wait(a->c, lc, a->o.timeout_ms, &rep, NULL) &&
                            !json_get(rep.result, "exceptionDetails")
                            ? json_get(json_get(rep.result, "result"), "value") : NULL;
        if (!json_is(v, JSON_FALSE))
            bad = -1;
        cdp_reply_free(&rep);
    }
    for (size_t i = 0; i < n && !bad; i++)
        bad = fn(ud, i, node[i]) ? -1 : 0;
    for (size_t i = 0; i < n; i++)
        cdp_reply_free(&ax[i]);
    a->walk_ax_nodes += bad ? 0 : n;
    return bad ? -1 : 0;
}

int snap_ref_node_as(snap_agent *a, uint32_t n, bool walker)
{
    char ref[16];
    snprintf(ref, sizeof ref, "e%u", n);
    snap_resolved res;
    snap_result r = {0};
    int rc = snap_ref_resolve(a, ref, &res, &r);
    snap_result_free(&r);
    if (rc)
        return 0;
    int node = walker ? 0 : res.backend;
    if (walker) {
        json_w w;
        json_w_init(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, "objectId");
        json_w_str(&w, res.object_id);
        json_w_key(&w, "functionDeclaration");
        json_w_str(&w, snap_js_walk_id_fn);
        json_w_key(&w, "returnByValue");
        json_w_bool(&w, true);
        json_w_obj_end(&w);
        uint64_t id = 0;
        cdp_reply rep = {0};
        if (send_owned(a, res.session, "Runtime.callFunctionOn", json_w_take(&w, NULL), &id) == 0 &&
            cdp_wait(a->c, id, a->o.timeout_ms, &rep, NULL) == 0) {
            const json_val *v = json_get(json_get(rep.result, "result"), "value");
            double d = json_is(v, JSON_NUMBER) ? json_num(v) : 0;
            node = d >= 1 && d <= INT32_MAX ? -(int)d : 0;
        }
        cdp_reply_free(&rep);
    }
    snap_resolved_release(a, &res);
    return node;
}

int snap_ref_resolve(snap_agent *a, const char *ref, snap_resolved *out, snap_result *r)
{
    int rc = snap_ref_resolve_start(a, ref, out, r);
    return rc ? rc : snap_ref_resolve_check(a, out, r);
}

int snap_ref_resolve_start(snap_agent *a, const char *ref, snap_resolved *out, snap_result *r)
{
    memset(out, 0, sizeof *out);
    snap_sync(a);
    char what[SHORT_NAME_MAX];
    snap_ref *rf;
    snap_tab *t;
    snap_frame *f;
    int frc = ref_doc(a, ref, &rf, &t, &f, what, sizeof what, r);
    if (frc)
        return frc;
    uint32_t n = rf->n;
    /* Resolved into cdpgate's isolated world of the frame: every script run
     * on the node (the gate's facts, actionability) sees the browser's own
     * prototypes, not what the page redefined in its main world. */
    cdp_reply rep = {0};
    cdp_err e = {0};
    out->tab_id = t->id;
    snap_agent_copyid(out->session, f->session);
    char fid[SNAP_ID_MAX];
    snap_agent_copyid(fid, f->id);
    int backend = rf->backend;
    int rc = backend > 0 ? CDP_EPROTOCOL : 0;
    if (backend < 0) {
        out->world = snap_frame_world(a, out->tab_id, fid);
        rc = out->world > 0 ? walker_resolve(a, out, n, -backend, what, r)
                            : snap_fail(r, SNAP_ESTALE, "e%u (%s) was in a document cdpgate "
                                        "can no longer reach; take a new snapshot", n, what);
        if (rc)
            return rc;
    }
    out->backend = backend > 0 ? backend : out->backend;
    for (int attempt = 0; attempt < 2 && rc == CDP_EPROTOCOL; attempt++) {
        if (attempt) {
            frame_world_drop(a, out->tab_id, fid); /* its context may be gone */
            cdp_reply_free(&rep);
        }
        out->world = snap_frame_world(a, out->tab_id, fid);
        if (out->world <= 0)
            return snap_fail(r, SNAP_EBROWSER, "e%u (%s): cdpgate's own script context "
                             "could not be made in its frame, so the page cannot be checked "
                             "safely; take a new snapshot and try again", n, what);
        char params[160];
        snprintf(params, sizeof params, "{\"backendNodeId\":%d,\"objectGroup\":\"cdpgate\","
                 "\"executionContextId\":%lld}", backend, (long long)out->world);
        memset(&e, 0, sizeof e);
        rc = snap_cdp_call(a, out->session, "DOM.resolveNode", params, a->o.timeout_ms, &rep,
                           &e);
    }
    if (rc == CDP_EPROTOCOL)
        return snap_fail(r, SNAP_ESTALE, "e%u (%s) was removed from the page; take a new "
                         "snapshot", n, what);
    if (rc)
        return snap_fail(r, SNAP_EBROWSER, "e%u: %s", n, e.msg);
    if (backend > 0) {
        const char *oid = json_get_str(json_get(rep.result, "object"), "objectId");
        if (!oid || strlen(oid) >= SNAP_ID_MAX) {
            cdp_reply_free(&rep);
            return snap_fail(r, SNAP_ESTALE, "e%u (%s) was removed from the page", n, what);
        }
        snap_agent_copyid(out->object_id, oid);
        cdp_reply_free(&rep);
    }
    /* A node kept alive by a reference but taken out of the document is gone
     * for the agent: never act on a detached look-alike. Sent here, read by
     * snap_ref_resolve_check (the caller may send read-only calls between). */
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, out->object_id);
    json_w_key(&w, "functionDeclaration");
    json_w_str(&w, snap_js_connected_fn);
    json_w_key(&w, "returnByValue");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    char *cparams = json_w_take(&w, NULL);
    out->n = n;
    out->conn_id = 0;
    if (cparams &&
        snap_cdp_send(a, out->session, "Runtime.callFunctionOn", cparams, &out->conn_id, &e) != 0)
        out->conn_id = 0;
    free(cparams);
    return 0;
}

int snap_ref_resolve_check(snap_agent *a, snap_resolved *out, snap_result *r)
{
    if (!out->n || out->n > a->nrefs) {
        if (out->conn_id)
            cdp_forget(a->c, out->conn_id);
        out->conn_id = 0;
        walker_ax_forget(a, out);
        snap_resolved_release(a, out);
        return snap_fail(r, SNAP_ENOREF, "no element e%u was ever issued", out->n);
    }
    /* A walker ref: its AX node first (the gate's role and name). */
    int wrc = out->ax_pending ? walker_ax_check(a, out, r) : 0;
    if (wrc) {
        if (out->conn_id)
            cdp_forget(a->c, out->conn_id);
        out->conn_id = 0;
        return wrc;
    }
    snap_ref *rf = &a->refs[out->n - 1];
    cdp_reply rep = {0};
    cdp_err e = {0};
    int rc = out->conn_id ? cdp_wait(a->c, out->conn_id, a->o.timeout_ms, &rep, &e)
                          : CDP_ENOMEM;
    out->conn_id = 0;
    bool connected = rc == 0 && !json_get(rep.result, "exceptionDetails") &&
                     json_bool(json_get(json_get(rep.result, "result"), "value"));
    cdp_reply_free(&rep);
    /* The calls above may have grown the arrays: look the pointers up again. */
    snap_tab *t = snap_tab_by_id(a, out->tab_id);
    out->ref = rf;
    out->tab = t;
    out->frame = t ? snap_frame_find(t, snap_ref_frame(a, rf)) : NULL;
    if (!connected || !out->frame) {
        char what[SHORT_NAME_MAX];
        short_name(a, rf, what, sizeof what);
        snap_resolved_release(a, out);
        return snap_fail(r, SNAP_ESTALE, "e%u (%s) was removed from the page; take a new "
                         "snapshot", out->n, what);
    }
    return 0;
}

void snap_resolved_release(snap_agent *a, snap_resolved *res)
{
    if (!res || !res->session[0] || !res->object_id[0])
        return;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, res->object_id);
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    uint64_t id;
    /* Not waited for: the reply would not come while a dialog is open. */
    if (params && snap_cdp_send(a, res->session, "Runtime.releaseObject", params, &id, NULL) == 0)
        cdp_forget(a->c, id);
    free(params);
    res->object_id[0] = 0;
}

/* ---- observations ---- */

void snap_obs_issue(snap_agent *a, snap_tab *t, char out[16])
{
    if (a->capobs == 0) {
        a->obs = calloc(256, sizeof *a->obs);
        a->capobs = a->obs ? 256 : 0;
    }
    uint32_t n = ++a->next_obs;
    if (a->capobs) {
        snap_obs_rec *o = &a->obs[(n - 1) % a->capobs];
        o->n = n;
        o->tab = t ? t->id : 0;
        o->nav = t ? t->nav : 0;
        o->epoch = gate_epoch(a->gate);
        if (a->nobs < a->capobs)
            a->nobs++;
    }
    snprintf(out, 16, "o%u", n);
    if (t) {
        t->seen_nav = t->nav;
        t->seen_obs = n;
    }
    gate_observed(a->gate);
}

void snap_nav_note(snap_agent *a, snap_tab *t, char *buf, size_t cap)
{
    (void)a;
    if (!cap)
        return;
    buf[0] = 0;
    if (!t || !t->seen_obs || t->nav == t->seen_nav || !t->nframes)
        return;
    const char *url = t->frames[0].url ? t->frames[0].url : "";
    snprintf(buf, cap, "[navigated] since observation o%u, tab t%d went to another page by "
             "itself (a timer, script or refresh of the page): now %.300s; refs and "
             "observations from before are stale.", t->seen_obs, t->id, url);
}

int snap_obs_check(snap_agent *a, const char *obs, snap_result *r)
{
    if (!obs || !*obs)
        return 0;
    snap_sync(a);
    char *end;
    unsigned long n = obs[0] == 'o' ? strtoul(obs + 1, &end, 10) : 0;
    if (!n || *end)
        return snap_fail(r, SNAP_EINVAL, "'%s' is not an observation id (they look like o7)",
                         obs);
    if (n > a->next_obs)
        return snap_fail(r, SNAP_EINVAL, "observation %s was never issued", obs);
    snap_obs_rec *o = a->capobs ? &a->obs[(n - 1) % a->capobs] : NULL;
    if (!o || o->n != n)
        return snap_fail(r, SNAP_ESTALE, "observation %s is too old; take a new snapshot", obs);
    if (o->epoch != gate_epoch(a->gate))
        return snap_fail(r, SNAP_ESTALE, "observation %s was taken at control epoch %llu; "
                         "control changed since (epoch %llu): take a new snapshot", obs,
                         (unsigned long long)o->epoch,
                         (unsigned long long)gate_epoch(a->gate));
    snap_tab *t = snap_tab_by_id(a, o->tab);
    if (!t || t->closed)
        return snap_fail(r, SNAP_ESTALE, "observation %s was of tab t%d, which is closed", obs,
                         o->tab);
    if (t->nav != o->nav) {
        snap_frame *f = t->nframes ? &t->frames[0] : NULL;
        return snap_fail(r, SNAP_ESTALE, "observation %s is stale: tab t%d navigated since "
                         "(now %s); take a new snapshot", obs, t->id,
                         f && f->url ? f->url : "");
    }
    return 0;
}

void snap_frame_world_forget(snap_agent *a, int tab_id, const char *frame_id)
{
    frame_world_drop(a, tab_id, frame_id);
}
