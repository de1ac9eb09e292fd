/*
 * play.c — replaying a trail (issue 14, points 4-5): with no model, each
 * step of the trail again, through the same library calls as a live
 * action, stopping where the page changed with an explained divergence.
 *
 * Order, per run:
 *   1. Up front, before the browser is touched: what the trail needs
 *      (its header's needs, folded with what the steps imply) against the
 *      gate's grant (origins, identities, tools, egress classes, and each
 *      consequential operation as a `bound` rule), and every parameter
 *      {{name}} of the steps given a value. Anything missing: refused,
 *      with the whole list, nothing run.
 *   2. Each active step (the last revision of its number), in order:
 *      the state it started from (origin, logged in) against the tab's
 *      now; its target re-found (match.c: one element or a divergence);
 *      the action through snap_* exactly as a live one (the gate judges
 *      it there: confirmations run the host's hook again, a consequential
 *      step stops unless the grant pre-approves it, origins are contained,
 *      sessions come from the vault by the grant's identity); the waits
 *      are the action's own, event-driven (no recorded delay, no sleep);
 *      then the recorded effect (navigated to, text that appeared) checked
 *      on a fresh read of the page.
 *   3. The result: one JSON object (replay_run's *out).
 *
 * A step the gate refused or stopped ends the run ("stopped"); a step
 * whose outcome is unknown (SNAP_EUNKNOWN, SNAP_ETIMEOUT: sent, then the
 * browser or the wait failed) ends it too ("unknown") and is never tried
 * again: a second click on "Pay" is not a retry anyone asked for.
 * Anything else that differs is a divergence: which step, what was
 * expected, what was found (closest candidates and why each was
 * rejected), whether the step had acted, and a fresh observation of the
 * page, so the agent can do that one step itself and go on from the next.
 */
#include "replay/replay_int.h"

#include "base/base.h"
#include "gate/gate.h"
#include "json/json.h"
#include "snapshot/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBS_BUDGET 6000          /* characters of the fresh observation */
#define VAR_NAME_MAX 64

typedef struct {
    snap_agent *a;
    gate *g;
    const replay_opts *o;
    json_w *w;                   /* the result, open at the top object */
    json_w outs;                 /* outputs: "name": text, ... */
    size_t nouts;
    json_w norm;                 /* values matched once normalised: [...] */
    size_t nnorm;
    unsigned done;
    replay_key key;              /* the trail key (loaded when the trail names one) */
    const replay_key *kp;        /* &key when it is the trail's, else NULL */
    char key_why[600];           /* why not, for a step that needs it */
} run;

static const char *nz(const char *s)
{
    return s ? s : "";
}

/* ---- parameters ---- */

/* The value --var gave name[0, n), or NULL. */
const char *replay_var(const replay_opts *o, const char *name, size_t n)
{
    for (size_t i = 0; o && i < o->nvars; i++) {
        const char *eq = strchr(o->vars[i], '=');
        if (eq && (size_t)(eq - o->vars[i]) == n && memcmp(o->vars[i], name, n) == 0)
            return eq + 1;
    }
    return NULL;
}

/* v escaped for a JSON string, without its quotes, into b. */
static void put_json_inner(base_buf *b, const char *v)
{
    json_w w;
    json_w_init(&w);
    json_w_str(&w, v);
    char *js = json_w_take(&w, NULL);
    json_w_free(&w);
    if (js && strlen(js) >= 2)
        base_buf_put(b, js + 1, strlen(js) - 2);
    else
        b->oom = true;
    free(js);
}

char *replay_subst(const char *args, const replay_opts *o, const char **missing, size_t *mlen)
{
    base_buf b = {0};
    const char *p = nz(args);
    *missing = NULL;
    while (*p) {
        size_t nl = 0;
        int k = replay_ph_at(p, &nl);
        if (k == REPLAY_PH_ESC) {
            base_buf_puts(&b, "{{");
            p += 4;
            continue;
        }
        if (k != REPLAY_PH_NAME) {
            base_buf_putc(&b, *p++);
            continue;
        }
        const char *v = replay_var(o, p + 2, nl);
        if (!v) {
            *missing = p + 2;
            *mlen = nl;
            base_buf_free(&b);
            return NULL;
        }
        put_json_inner(&b, v);
        p += nl + 4;
    }
    return base_buf_take(&b, NULL);
}

/* ---- 1. what the trail needs against the grant ---- */

static void missing_one(json_w *w, size_t *n, const char *kind, const char *value,
                        const char *detail)
{
    json_w_obj_begin(w);
    json_w_key(w, "need");
    json_w_str(w, kind);
    json_w_key(w, "value");
    json_w_str(w, value);
    if (detail) {
        json_w_key(w, "detail");
        json_w_str(w, detail);
    }
    json_w_obj_end(w);
    (*n)++;
}

static unsigned egress_bit(const char *name)
{
    static const struct {
        const char *name;
        unsigned bit;
    } E[] = {
        {"approved_origin_fetch", GATE_EGRESS_FETCH},
        {"structured_send", GATE_EGRESS_SEND},
        {"file_transfer", GATE_EGRESS_FILE},
    };
    for (size_t i = 0; i < sizeof E / sizeof E[0]; i++)
        if (strcmp(E[i].name, name) == 0)
            return E[i].bit;
    return 0;
}

/* Does the grant's bound rule x pre-approve the trail's bound b? Origin
 * and tool equal; the name equal once b's {{name}} are filled from o (and
 * "{{{{" read as "{{"); a rule without a row any row; a rule with one: b's
 * row, filled, matches it as replay matches a row (replay_row_eq: its
 * {{#}} any one number, a row it cut by its start), so a rule that names
 * the row as the page shows it ("Desk lamp $24.00 Buy now") pre-approves
 * the trail's "Desk lamp ${{#}} Buy now". The rule's own row must still be
 * the live row when the step runs (the gate's find_bound compares it with
 * the page's): a rule more specific than the trail holds only there. */
bool replay_bound_eq(const gate_bound *x, const char *origin, const char *tool,
                     const char *name, const char *row, const replay_opts *o,
                     const replay_key *key)
{
    if (strcmp(x->origin, nz(origin)) != 0 || strcmp(x->tool, nz(tool)) != 0)
        return false;
    char *n = replay_fill(nz(name), o, false);
    bool ok = n && strcmp(x->name, n) == 0;
    free(n);
    if (ok && x->row) {
        char *r = row ? replay_fill(row, o, true) : NULL;
        ok = r && replay_row_eq(r, x->row, key);
        free(r);
    }
    return ok;
}

static bool bound_granted(const gate_grant *gg, const replay_bound *b, const replay_opts *o,
                          const replay_key *key)
{
    for (size_t i = 0; gg && i < gg->nbound; i++)
        if (replay_bound_eq(&gg->bound[i], b->origin, b->tool, b->name, b->row, o, key))
            return true;
    return false;
}

/* Write the needs h lists that g's grant lacks into w (an array open);
 * their number. */
static size_t needs_missing(const replay_header *h, gate *g, const replay_opts *o,
                            const replay_key *key, json_w *w)
{
    size_t n = 0;
    const gate_grant *gg = gate_grant_get(g);
    for (size_t i = 0; i < h->origins.n; i++)
        if (!gate_origin_allowed(g, h->origins.v[i]))
            missing_one(w, &n, "origin", h->origins.v[i], NULL);
    for (size_t i = 0; i < h->nidentities; i++) {
        const replay_identity *id = &h->identities[i];
        const char *have = gate_identity_for(g, id->origin);
        if (!have || strcmp(have, nz(id->label)) != 0)
            missing_one(w, &n, "identity", nz(id->label), id->origin);
    }
    for (size_t i = 0; i < h->tools.n; i++)
        if (!gate_tool_allowed(g, h->tools.v[i]))
            missing_one(w, &n, "tool", h->tools.v[i], NULL);
    for (size_t i = 0; i < h->egress.n; i++) {
        unsigned bit = egress_bit(h->egress.v[i]);
        if (!bit || !gg || !(gg->egress & bit))
            missing_one(w, &n, "egress", h->egress.v[i], NULL);
    }
    for (size_t i = 0; i < h->nconsequential; i++) {
        const replay_bound *b = &h->consequential[i];
        if (bound_granted(gg, b, o, key))
            continue;
        char what[600];
        snprintf(what, sizeof what, "%s \"%.200s\" on %.200s%s%.100s%s", nz(b->tool),
                 nz(b->name), nz(b->origin), b->row ? " (row " : "", nz(b->row),
                 b->row ? ")" : "");
        missing_one(w, &n, "consequential", what,
                    "no bound rule of the grant pre-approves it: it would stop");
    }
    return n;
}

/* The first step number played. */
static unsigned first_step(const replay_opts *o)
{
    return o && o->from > 1 ? o->from : 1;
}

/* Every parameter of the active steps without a value, into w; number. */
/* The first {{name}} of the target's page texts (name, row, section,
 * label, placeholder: filled at replay, replay_fill) that o gives no
 * value for, into *m and *ml; false when none. */
static bool target_var_missing(const replay_target *t, const replay_opts *o, const char **m,
                               size_t *ml)
{
    const char *f[] = {t->name, t->row, t->section, t->label, t->placeholder};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        for (const char *p = f[i]; p && *p; p++) {
            size_t nl = 0;
            int k = replay_ph_at(p, &nl);
            if (k == REPLAY_PH_ESC) {
                p += 3;
            } else if (k == REPLAY_PH_NAME && !replay_var(o, p + 2, nl)) {
                *m = p + 2;
                *ml = nl;
                return true;
            }
        }
    return false;
}

static size_t vars_missing(const replay_trail *t, const replay_opts *o, json_w *w)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nsteps; i++) {
        const replay_step *s = &t->steps[i];
        const char *m;
        size_t ml;
        if (s->n < first_step(o))
            continue;
        char *x = s->superseded ? NULL : replay_subst(s->args, o, &m, &ml);
        if (x && s->has_target && target_var_missing(&s->target, o, &m, &ml)) {
            free(x);
            x = NULL;
        }
        if (!s->superseded && !x && m) {
            char name[VAR_NAME_MAX + 1];
            snprintf(name, sizeof name, "%.*s", (int)ml, m);
            char detail[160];
            snprintf(detail, sizeof detail, "step %u: give it with --var %s=VALUE", s->n, name);
            missing_one(w, &n, "variable", name, detail);
        }
        free(x);
    }
    return n;
}

/* Steps the model wrote (red team s14, R4-4) when the run may not play
 * them: the whole trail when the agent made it, else each step "by":
 * "agent", in one need "agent_steps". Their number (0 or 1). */
static size_t agent_missing(const replay_trail *t, const replay_opts *o, json_w *w)
{
    if (o && o->agent_steps)
        return 0;
    base_buf b = {0};
    size_t n = 0;
    for (size_t i = 0; i < t->nsteps; i++) {
        const replay_step *s = &t->steps[i];
        if (s->superseded || s->n < first_step(o) || !(s->by_agent || t->h.by_agent))
            continue;
        if (n++ < 20)
            base_buf_printf(&b, "%s%u", b.len ? ", " : "steps ", s->n);
    }
    if (n > 20)
        base_buf_printf(&b, " and %zu more", n - 20);
    size_t m = 0;
    if (n && !b.oom)
        missing_one(w, &m, "agent_steps", b.s, t->h.by_agent
                    ? "the trail was made by the model (\"by\":\"agent\" in its header): "
                      "a person reviews it and deletes that \"by\", or replays with "
                      "--accept-agent-steps"
                    : "the model wrote these steps into the trail (\"by\":\"agent\"): a "
                      "person reviews them and deletes their \"by\", or replays with "
                      "--accept-agent-steps");
    else if (n)
        missing_one(w, &m, "agent_steps", "(out of memory)", NULL);
    base_buf_free(&b);
    return m;
}

/* Two active steps producing the same output: the later would hide the
 * earlier's (red team s14, R4-4). One need "output" per name. */
static size_t outputs_missing(const replay_trail *t, json_w *w)
{
    size_t m = 0;
    char a[REPLAY_MAX_STR + 1], b[REPLAY_MAX_STR + 1];
    for (size_t i = 0; i < t->nsteps; i++) {
        const replay_step *s = &t->steps[i];
        if (s->superseded || !replay_step_output(s, a, sizeof a))
            continue;
        for (size_t k = 0; k < i; k++) {
            const replay_step *p = &t->steps[k];
            if (p->superseded || !replay_step_output(p, b, sizeof b) || strcmp(a, b) != 0)
                continue;
            char detail[120];
            snprintf(detail, sizeof detail, "steps %u and %u both produce it: an output has "
                     "one step", p->n, s->n);
            missing_one(w, &m, "output", a, detail);
            break;
        }
    }
    return m;
}

/* ---- 2. the steps ---- */

/* A fresh observation of the page (within OBS_BUDGET) as a member. */
static void observation(run *R)
{
    snap_query q = {.budget_chars = OBS_BUDGET};
    snap_result r = {0};
    snap_observe(R->a, &q, &r);
    json_w_key(R->w, "observation");
    json_w_str(R->w, r.text ? r.text : snap_strerror(r.code));
    snap_result_free(&r);
}

/* Open the divergence object: step, op, reason, acted. The caller adds
 * expected/found and closes it with div_end. */
static void div_begin(run *R, const replay_step *s, const char *reason, bool acted)
{
    json_w_key(R->w, "divergence");
    json_w_obj_begin(R->w);
    json_w_key(R->w, "step");
    json_w_uint(R->w, s->n);
    json_w_key(R->w, "op");
    json_w_str(R->w, nz(s->op));
    json_w_key(R->w, "reason");
    json_w_str(R->w, reason);
    json_w_key(R->w, "acted");
    json_w_bool(R->w, acted);
}

static int div_end(run *R)
{
    observation(R);
    json_w_obj_end(R->w);
    return REPLAY_RUN_DIVERGED;
}

/* A divergence with plain expected / found texts. */
static int diverge(run *R, const replay_step *s, const char *reason, bool acted,
                   const char *expected, const char *found)
{
    div_begin(R, s, reason, acted);
    json_w_key(R->w, "expected");
    snap_json_page(R->w, expected);
    json_w_key(R->w, "found");
    snap_json_page(R->w, found);
    return div_end(R);
}

/* The state the step started from against the page now. 0 or a status. */
static int check_state(run *R, const replay_step *s, const snap_elems *E)
{
    const replay_state *st = &s->state;
    if (st->origin && *st->origin && strcmp(st->origin, E->origin) != 0)
        return diverge(R, s, "origin", false, st->origin, E->origin);
    if (st->authenticated && !E->auth) {
        char want[600];
        snprintf(want, sizeof want, "logged in on %.200s as identity %.100s (a session from "
                 "the vault); it is not: the session expired or was not restored. Log in "
                 "(cdpgate login %.200s, or browser_login), then replay from this step",
                 nz(st->origin), st->identity ? st->identity : "(none)", nz(st->origin));
        return diverge(R, s, "login", false, want, "not logged in (auth=no)");
    }
    return 0;
}

/* The target of s re-found: its ref into ref, or a divergence. */

/* Does t hold a hidden identifier hashed under a trail key? */
static bool target_keyed(const replay_target *t)
{
    const char *f[] = {t->name, t->row, t->section, t->label, t->placeholder};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i] && strstr(f[i], REPLAY_ID_KEYED))
            return true;
    return false;
}

/* The trail key t's hidden identifiers were hashed under, into R (never
 * made here: another key could match none of them): R->kp set when this
 * machine's key is the one the header names, else R->key_why says why
 * not (its id and the trail's: never the key). */
static void key_for(run *R, const replay_trail *t)
{
    bool keyed = t->h.trail_key != NULL;
    for (size_t i = 0; !keyed && i < t->nsteps; i++)
        keyed = !t->steps[i].superseded && target_keyed(&t->steps[i].target);
    if (!keyed)
        return;
    replay_err err = {0};
    const char *tid = t->h.trail_key;
    if (replay_key_load(R->o ? R->o->trail_key : NULL, false, &R->key, &err) != 0)
        snprintf(R->key_why, sizeof R->key_why, "%s; the trail's identifiers were hashed "
                 "under trail key %s, which cannot match here: replay where that key is "
                 "(--trail-key FILE) or record the trail again", err.msg,
                 tid ? tid : "(none named)");
    else if (!tid || strcmp(tid, R->key.id) != 0)
        snprintf(R->key_why, sizeof R->key_why, "the trail's identifiers were hashed under "
                 "trail key %s, this machine's trail key is %s: none of them can match here; "
                 "replay where that key is (--trail-key FILE) or record the trail again",
                 tid ? tid : "(none named)", R->key.id);
    else
        R->kp = &R->key;
}

/* s's target with its page texts filled (replay_fill, "{{{{" kept: match.c
 * reads them with their markers; the strings into own[5], new); false
 * when out of memory. */
static bool target_filled(const replay_step *s, const replay_opts *o, replay_target *t,
                          char *own[5])
{
    *t = s->target;
    char **f[] = {&t->name, &t->row, &t->section, &t->label, &t->placeholder};
    bool ok = true;
    for (size_t i = 0; i < 5; i++) {
        own[i] = *f[i] ? replay_fill(*f[i], o, true) : NULL;
        ok = ok && (!*f[i] || own[i]);
        *f[i] = own[i];
    }
    return ok;
}

static int refind(run *R, const replay_step *s, snap_elems *E, char ref[16])
{
    /* A hidden identifier hashed under a trail key this machine does not
     * have (session 21): said plainly, nothing matched (never any word) */
    if (!R->kp && target_keyed(&s->target))
        return diverge(R, s, "trail_key", false, "the target's hidden identifiers "
                       "({{*k:...}}) compared under the trail key they were hashed with",
                       R->key_why);
    replay_match m;
    snap_result r = {0};
    snap_elements_free(E);
    replay_target t;
    char *own[5];
    bool ok = target_filled(s, R->o, &t, own);
    int rc = ok ? replay_find(R->a, &t, R->kp, E, &m, &r) : SNAP_ENOMEM;
    for (size_t i = 0; i < 5; i++)
        free(own[i]);
    if (rc) {
        int st = diverge(R, s, "observe", false, "a fresh observation",
                         r.text ? r.text : snap_strerror(rc));
        snap_result_free(&r);
        return st;
    }
    snap_result_free(&r);
    if (m.verdict == REPLAY_FOUND) {
        snprintf(ref, 16, "%s", m.ref);
        return 0;
    }
    div_begin(R, s, m.verdict == REPLAY_AMBIGUOUS ? "ambiguous" : "missing", false);
    json_w_key(R->w, "match");
    replay_match_json(R->w, &s->target, E, &m, R->a);
    return div_end(R);
}

/* ---- the actions ---- */

static const char *arg_str(const json_val *args, const char *k)
{
    return json_get_str(args, k);
}

static bool arg_bool(const json_val *args, const char *k)
{
    return json_bool(json_get(args, k));
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

/* Does line s[0, n) contain q (ASCII case folded)? */
static bool line_has(const char *s, size_t n, const char *q)
{
    size_t m = strlen(q);
    for (size_t i = 0; m && i + m <= n; i++) {
        size_t k = 0;
        while (k < m && lower(s[i + k]) == lower(q[k]))
            k++;
        if (k == m)
            return true;
    }
    return false;
}

/* The text of a read, as browser_read returns it: the page text between
 * the content markers of text, the markers kept around it (page text in
 * the result is always framed: red team s14, R4-6); with a query, only
 * its lines that hold the query (the "[match ...]" line left out). */
static void put_read_text(json_w *w, const char *text, const char *query)
{
    const char *o = text ? strstr(text, "<<<page-content nonce=") : NULL;
    const char *s = o ? strstr(o, ">>>\n") : NULL;
    const char *e = s ? strstr(s, "\n<<<end page-content nonce=") : NULL;
    const char *close = e ? strstr(e + 1, ">>>") : NULL;
    if (!close) {
        json_w_str(w, "");
        return;
    }
    s += 4;
    base_buf b = {0};
    base_buf_put(&b, o, (size_t)(s - o));
    size_t at = b.len;
    while (s < e) {
        const char *nl = memchr(s, '\n', (size_t)(e - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(e - s);
        if (!query || (n && strncmp(s, "[match ", 7) != 0 && line_has(s, n, query))) {
            if (b.len > at)
                base_buf_putc(&b, '\n');
            base_buf_put(&b, s, n);
        }
        s += n + 1;
    }
    base_buf_put(&b, e, (size_t)(close + 3 - e));
    json_w_strn(w, b.s && !b.oom ? b.s : "", b.s && !b.oom ? b.len : 0);
    base_buf_free(&b);
}

/* browser_read again: the element's text (ref) or the lines matching a
 * query, kept as output `name`. */
static int act_read(run *R, const json_val *args, const char *ref, snap_result *r)
{
    snap_query q = {.text = true, .from = ref, .query = ref ? NULL : arg_str(args, "query")};
    int rc = snap_observe(R->a, &q, r);
    const char *name = arg_str(args, "name");
    if (rc == 0 && name) {
        json_w_key(&R->outs, name);
        put_read_text(&R->outs, r->text, q.query);
        R->nouts++;
    }
    return rc;
}

/* Run op with its args (parameters filled) on ref (NULL: none). */
static int act(run *R, const replay_step *s, const json_val *args, const char *ref,
               snap_result *r)
{
    const char *op = nz(s->op);
    if (strcmp(op, "open") == 0)
        return snap_open(R->a, nz(arg_str(args, "url")), arg_bool(args, "new_tab"), r);
    if (strcmp(op, "click") == 0)
        return arg_bool(args, "double") ? snap_dblclick(R->a, ref, NULL, r)
                                        : snap_click(R->a, ref, NULL, r);
    if (strcmp(op, "hover") == 0)
        return snap_hover(R->a, ref, NULL, r);
    if (strcmp(op, "type") == 0)
        return snap_type(R->a, ref, nz(arg_str(args, "text")), arg_bool(args, "submit"),
                         NULL, r);
    if (strcmp(op, "select") == 0) {
        const json_val *vs = json_get(args, "values");
        size_t n = json_len(vs), k = 0;
        const char **v = calloc(n ? n : 1, sizeof *v);
        if (!v)
            return SNAP_ENOMEM;
        for (const json_val *c = json_first(vs); c; c = json_next(c))
            if (json_str(c, NULL))
                v[k++] = json_str(c, NULL);
        int rc = snap_select(R->a, ref, v, k, NULL, r);
        free(v);
        return rc;
    }
    if (strcmp(op, "press") == 0)   /* on its re-found target, focused (B-1) */
        return snap_press_on(R->a, ref, nz(arg_str(args, "key")), NULL, r);
    if (strcmp(op, "scroll") == 0)
        return snap_scroll(R->a, ref, arg_str(args, "direction"), r);
    if (strcmp(op, "back") == 0)
        return snap_history(R->a, arg_bool(args, "forward") ? 1 : -1, r);
    if (strcmp(op, "dialog") == 0)
        return snap_dialog(R->a, arg_bool(args, "accept"), arg_str(args, "text"), r);
    if (strcmp(op, "tabs") == 0)
        return snap_tabs(R->a, nz(arg_str(args, "action")), arg_str(args, "tab"), r);
    if (strcmp(op, "read") == 0)
        return act_read(R, args, ref, r);
    return SNAP_EINVAL;   /* login and takeover: login_step */
}

static bool is_login(const char *op);

/* What the action's code means for the run: 0 go on, else a status (the
 * result's member written). */
static int act_outcome(run *R, const replay_step *s, int rc, const snap_result *r)
{
    const char *text = r->text ? r->text : snap_strerror(rc);
    if (rc == 0)
        return 0;
    if (rc == SNAP_EDENIED || rc == SNAP_ESTOP || rc == SNAP_ETAKEOVER) {
        json_w_key(R->w, "stopped");
        json_w_obj_begin(R->w);
        json_w_key(R->w, "step");
        json_w_uint(R->w, s->n);
        json_w_key(R->w, "op");
        json_w_str(R->w, nz(s->op));
        json_w_key(R->w, "gate");
        json_w_str(R->w, text);
        json_w_obj_end(R->w);
        return REPLAY_RUN_STOPPED;
    }
    /* The browser failed during an action that may have been sent (a
     * click whose page then died): what it did is not known either, and
     * it is not tried again (issue 14, point 4). A read sends nothing. */
    bool sent = strcmp(nz(s->op), "read") != 0 && !is_login(s->op);
    if (rc == SNAP_EUNKNOWN || rc == SNAP_ETIMEOUT || (rc == SNAP_EBROWSER && sent)) {
        json_w_key(R->w, "unknown");
        json_w_obj_begin(R->w);
        json_w_key(R->w, "step");
        json_w_uint(R->w, s->n);
        json_w_key(R->w, "op");
        json_w_str(R->w, nz(s->op));
        json_w_key(R->w, "detail");
        json_w_str(R->w, text);
        json_w_key(R->w, "retried");
        json_w_bool(R->w, false);
        json_w_obj_end(R->w);
        return REPLAY_RUN_UNKNOWN;
    }
    if (rc == SNAP_EBROWSER || rc == SNAP_ENOMEM) {
        json_w_key(R->w, "error");
        json_w_str(R->w, text);
        return REPLAY_RUN_FAILED;
    }
    const char *why = rc == SNAP_ECOVERED ? "cover" : rc == SNAP_EDIALOG ? "dialog"
                      : rc == SNAP_ELOGIN ? "login" : rc == SNAP_EBLOCKED ? "login"
                      : "action";
    return diverge(R, s, why, false, "the action to succeed", text);
}

/* scheme://host/path of a URL (no query, no fragment) into out. */
static void url_base(const char *u, char *out, size_t cap)
{
    snprintf(out, cap, "%.*s", (int)strcspn(nz(u), "?#"), nz(u));
}

/* A recorded text with each {{name}} given by --var written as its value
 * (new; as it is when a name has none): a page that echoes a parameter
 * was recorded as "Results for {{query}}", a button as "Remove {{who}}".
 * A literal "{{" ("{{{{") as "{{", or kept "{{{{" for a row (replay_row_eq
 * reads it). NULL: out of memory. */
char *replay_fill(const char *s, const replay_opts *o, bool keep_esc)
{
    base_buf b = {0};
    const char *p = nz(s);
    while (*p) {
        size_t nl = 0;
        int k = replay_ph_at(p, &nl);
        const char *v = k == REPLAY_PH_NAME ? replay_var(o, p + 2, nl) : NULL;
        if (k == REPLAY_PH_ESC)
            base_buf_puts(&b, keep_esc ? "{{{{" : "{{");
        else if (v)
            base_buf_puts(&b, v);
        else
            base_buf_put(&b, p, k == REPLAY_PH_NAME ? nl + 4 : 1);
        p += k == REPLAY_PH_ESC ? 4 : k == REPLAY_PH_NAME ? nl + 4 : 1;
    }
    return base_buf_take(&b, NULL);
}

static char *effect_text(const char *s, const replay_opts *o)
{
    return replay_fill(s, o, false);
}

/* The recorded effect against the page after the step. 0 or a status. */
static int check_effect(run *R, const replay_step *s)
{
    const replay_effect *ef = &s->effect;
    if (!ef->navigated && !ef->appeared.n)
        return 0;
    snap_query q = {.text = true};
    snap_result r = {0};
    int rc = snap_observe(R->a, &q, &r);
    if (rc) {
        int st = diverge(R, s, "effect", true, "a page to check the effect on",
                         r.text ? r.text : snap_strerror(rc));
        snap_result_free(&r);
        return st;
    }
    int st = 0;
    if (ef->navigated) {
        char want[2048], now[2048];
        url_base(ef->navigated, want, sizeof want);
        const char *u = r.text ? strstr(r.text, " url=") : NULL;
        snprintf(now, sizeof now, "%.*s", u ? (int)strcspn(u + 5, " ") : 0, u ? u + 5 : "");
        now[strcspn(now, "?#")] = 0;
        if (strcmp(want, now) != 0)
            st = diverge(R, s, "effect", true, ef->navigated, now);
    }
    for (size_t i = 0; !st && i < ef->appeared.n; i++) {
        char *at = effect_text(ef->appeared.v[i], R->o);
        if (!at || !replay_text_match(ef->appeared.v[i], r.text, R->o, false, R->a)) {
            char want[600];
            snprintf(want, sizeof want, "the text \"%.500s\" on the page",
                     at ? at : ef->appeared.v[i]);
            st = diverge(R, s, "effect", true, want, "not on the page");
        }
        free(at);
    }
    snap_result_free(&r);
    return st;
}

/* The recorded value with its parameters filled (new), NULL when it
 * cannot be (out of memory, a name without a value). */
static char *value_filled(const char *value, const replay_opts *o)
{
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    json_w_str(&w, value);
    json_w_arr_end(&w);
    char *js = json_w_take(&w, NULL);
    json_w_free(&w);
    const char *m;
    size_t ml;
    char *f = js ? replay_subst(js, o, &m, &ml) : NULL;
    free(js);
    json_doc *d = f ? json_parse(f, strlen(f), NULL, NULL) : NULL;
    free(f);
    const char *v = json_str(json_first(json_doc_root(d)), NULL);
    char *out = v ? base_strdup(v) : NULL;
    json_doc_free(d);
    return out;
}

/* How a value read back compares with the recorded one (docs/replay.md,
 * "The value check"): exactly, once whitespace is folded (runs one space,
 * the ends trimmed; case kept), or by its digits when both are
 * numeric-ish (a field that formats "1234" as "1,234", a phone number). */
enum { VAL_DIFF, VAL_EXACT, VAL_SPACE, VAL_DIGITS };

/* s with whitespace runs one space and the ends trimmed, into b. */
static void fold_space(const char *s, base_buf *b)
{
    bool sp = false;
    for (const char *p = s; *p; p++) {
        if (*p == ' ' || (*p >= '\t' && *p <= '\r')) {
            sp = b->len > 0;
            continue;
        }
        if (sp)
            base_buf_putc(b, ' ');
        sp = false;
        base_buf_putc(b, *p);
    }
}

/* Numeric-ish: digits and the separators a field's formatting adds
 * (space, comma, '-', '(', ')', '+', '/'), at least one digit; its digits
 * into b. A '.' is no separator: "12.34" is not "1234". */
static bool digits_of(const char *s, base_buf *b)
{
    for (const char *p = s; *p; p++) {
        if (*p >= '0' && *p <= '9')
            base_buf_putc(b, *p);
        else if (!strchr(" ,-()+/\t", *p))
            return false;
    }
    return b->len > 0;
}

static bool buf_eq(const base_buf *x, const base_buf *y)
{
    return !x->oom && !y->oom && x->len == y->len && (!x->len || memcmp(x->s, y->s, x->len) == 0);
}

static int value_cmp(const char *want, const char *got)
{
    if (strcmp(want, got) == 0)
        return VAL_EXACT;
    base_buf a = {0}, b = {0};
    fold_space(want, &a);
    fold_space(got, &b);
    int how = buf_eq(&a, &b) ? VAL_SPACE : VAL_DIFF;
    base_buf_free(&a);
    base_buf_free(&b);
    if (how == VAL_DIFF && digits_of(want, &a) && digits_of(got, &b) && buf_eq(&a, &b))
        how = VAL_DIGITS;
    base_buf_free(&a);
    base_buf_free(&b);
    return how;
}

/* A value that matched only once normalised, kept for the result. */
static void note_normalised(run *R, const replay_step *s, int how, const char *want,
                            const char *got)
{
    json_w_obj_begin(&R->norm);
    json_w_key(&R->norm, "step");
    json_w_uint(&R->norm, s->n);
    json_w_key(&R->norm, "rule");
    json_w_str(&R->norm, how == VAL_DIGITS ? "digits" : "whitespace");
    json_w_key(&R->norm, "expected");
    snap_json_page(&R->norm, want);
    json_w_key(&R->norm, "found");
    snap_json_page(&R->norm, got);
    json_w_obj_end(&R->norm);
    R->nnorm++;
}

/* The effects the action's own result shows against the recorded ones:
 * the new tab it opened (its URL without query and fragment), the dialog
 * (type and message, folded), the value read back (parameters filled). A
 * read's value is the text read when recording: it is no check. 0 or a
 * status. */
static int check_result(run *R, const replay_step *s, const char *structured)
{
    const replay_effect *ef = &s->effect;
    bool value = ef->value && strcmp(nz(s->op), "read") != 0;
    if (!ef->new_tab && !ef->dialog && !value)
        return 0;
    json_doc *d = structured ? json_parse(structured, strlen(structured), NULL, NULL) : NULL;
    const json_val *res = json_doc_root(d);
    char want[2048], now[2048];
    int st = 0;
    if (ef->new_tab) {
        const char *u = json_get_str(json_first(json_get(res, "new_tabs")), "url");
        url_base(ef->new_tab, want, sizeof want);
        url_base(u, now, sizeof now);
        if (!u || strcmp(want, now) != 0)
            st = diverge(R, s, "effect", true, ef->new_tab, u ? now : "no new tab");
    }
    const json_val *dg = json_get(res, "dialog");
    if (!st && ef->dialog) {
        snprintf(now, sizeof now, "%s: %s", nz(json_get_str(dg, "type")),
                 nz(json_get_str(dg, "message")));
        if (!dg || !replay_text_match(ef->dialog, now, R->o, true, R->a))
            st = diverge(R, s, "effect", true, ef->dialog, dg ? now : "no dialog");
    }
    if (!st && value) {
        char *v = value_filled(ef->value, R->o);
        const char *got = json_get_str(res, "value");
        int how = v && got ? value_cmp(v, got) : VAL_DIFF;
        /* A word the recorder hid (REPLAY_TEXT_HIDDEN, REPLAY_TEXT_REST,
         * a hash) stands for a word, the rest for any words. */
        if (how == VAL_DIFF && got && strstr(ef->value, "{{*") &&
            replay_text_match(ef->value, got, R->o, true, R->a))
            how = VAL_EXACT;
        if (how > VAL_EXACT)
            note_normalised(R, s, how, v, got);
        if (how == VAL_DIFF) {
            snprintf(want, sizeof want, "the field reads \"%.1900s\"", v ? v : ef->value);
            snprintf(now, sizeof now, got ? "it reads \"%.1900s\"" : "no value read back%s",
                     got ? got : "");
            st = diverge(R, s, "effect", true, want, now);
        }
        free(v);
    }
    json_doc_free(d);
    return st;
}

static bool is_login(const char *op)
{
    return strcmp(nz(op), "login") == 0 || strcmp(nz(op), "takeover") == 0;
}

/* After a login step restored the session: a tab on its origin that is
 * not authenticated is opened again, in the session's context (as a live
 * login reopens the page the human ended on). 0 or a status. */
static int login_reopen(run *R, const replay_step *s, const char *origin)
{
    snap_elems E = {0};
    snap_result r = {0};
    int rc = snap_elements(R->a, &E, &r);
    snap_result_free(&r);
    int st = 0;
    if (!rc && !E.auth && strcmp(E.origin, origin) == 0 && E.url) {
        memset(&r, 0, sizeof r);
        rc = snap_open(R->a, E.url, false, &r);
        st = act_outcome(R, s, rc, &r);
        snap_result_free(&r);
    }
    snap_elements_free(&E);
    return st;
}

/* A login or takeover step, recorded by identity (never keystrokes): the
 * session of its origin restored from the vault by the grant's identity
 * (snap_session_restore, the path an open takes), or a login divergence
 * AT this step with the way back: a person logs in, then the replay goes
 * on from the next step. 0 or a status. */
static int login_step(run *R, const replay_step *s, const json_val *args)
{
    const char *origin = arg_str(args, "origin");
    if (!origin || !*origin)
        origin = s->state.origin;
    snap_result r = {0};
    int rc = origin && *origin ? snap_session_restore(R->a, origin, &r) : SNAP_EINVAL;
    if (rc == 0) {
        snap_result_free(&r);
        return login_reopen(R, s, origin);
    }
    if (rc == SNAP_EBROWSER || rc == SNAP_ENOMEM) {
        int st = act_outcome(R, s, rc, &r);
        snap_result_free(&r);
        return st;
    }
    char want[900], found[1600];
    snprintf(want, sizeof want, "a session of %.200s as identity %.100s, restored from the "
             "vault (recorded: %.300s)", origin ? origin : "(no origin recorded)",
             s->state.identity ? s->state.identity : "(none)", s->note ? s->note : nz(s->op));
    snprintf(found, sizeof found, "%.900s. A person logs in (cdpgate login %.200s, or "
             "browser_login, or browser_takeover and logs in by hand), then replay from step "
             "%u", r.text ? r.text : snap_strerror(rc), origin ? origin : "ORIGIN", s->n + 1);
    snap_result_free(&r);
    return diverge(R, s, "login", false, want, found);
}

/* One step: state, target, action, effect. 0 or a status. */
static int play_step(run *R, const replay_step *s, snap_elems *E)
{
    const char *m;
    size_t ml;
    char *args = replay_subst(s->args, R->o, &m, &ml);
    json_doc *d = args ? json_parse(args, strlen(args), NULL, NULL) : NULL;
    free(args);
    if (!d) {
        json_w_key(R->w, "error");
        json_w_str(R->w, "a step's arguments could not be read");
        return REPLAY_RUN_FAILED;
    }
    const json_val *av = json_doc_root(d);
    if (is_login(s->op)) {
        int ls = login_step(R, s, av);
        json_doc_free(d);
        return ls;
    }
    bool first_open = strcmp(nz(s->op), "open") == 0;
    int st = 0;
    char ref[16] = "";
    if (!first_open) {
        snap_result r = {0};
        snap_elements_free(E);
        int rc = snap_elements(R->a, E, &r);
        st = rc ? diverge(R, s, "observe", false, "a page", r.text ? r.text : "") :
             check_state(R, s, E);
        snap_result_free(&r);
    }
    /* An address whose secret the trail did not keep (a bearer token in
     * its path or fragment, written "[redacted]"): never opened as such. */
    if (!st && first_open && strstr(nz(arg_str(av, "url")), "[redacted]"))
        st = diverge(R, s, "secret", false, "an address holding a secret (a bearer token: a "
                     "password-reset, magic-login or invitation link) that the trail does not "
                     "keep", "open it yourself (the agent, or a person), then replay from the "
                     "next step");
    /* A value the trail did not keep (typed, pressed or chosen in a
     * secret field: red team s14, R4-2): never entered as an empty one. */
    if (!st && s->secret)
        st = diverge(R, s, "secret", false, "a value typed, pressed or chosen in a secret "
                     "field, which the trail does not keep", "enter it yourself (browser_login "
                     "or a person), then replay from the next step");
    if (!st && s->has_target)
        st = refind(R, s, E, ref);
    if (!st) {
        snap_result r = {0};
        int rc = act(R, s, av, s->has_target ? ref : NULL, &r);
        st = act_outcome(R, s, rc, &r);
        if (!st)
            st = check_result(R, s, r.structured);
        snap_result_free(&r);
    }
    if (!st)
        st = check_effect(R, s);
    json_doc_free(d);
    return st;
}

static const char *status_name(int st)
{
    static const char *N[] = {"done", "diverged", "refused", "stopped", "unknown", "failed"};
    return st >= 0 && st <= REPLAY_RUN_FAILED ? N[st] : "failed";
}

int replay_run(snap_agent *a, gate *g, const replay_trail *t, const replay_opts *o,
               char **out)
{
    json_w w;
    json_w_init(&w);
    run R = {.a = a, .g = g, .o = o, .w = &w};
    json_w_init(&R.outs);
    json_w_obj_begin(&R.outs);
    json_w_init(&R.norm);
    json_w_arr_begin(&R.norm);
    json_w_obj_begin(&w);
    key_for(&R, t);
    if (R.key_why[0]) {
        json_w_key(&w, "trail_key");
        json_w_str(&w, R.key_why);
    }
    size_t total = 0;
    for (size_t i = 0; i < t->nsteps; i++)
        total += !t->steps[i].superseded;
    json_w_key(&w, "steps");
    json_w_uint(&w, total);
    /* 1. Up front: needs and parameters, nothing run when one lacks. */
    json_w_key(&w, "missing");
    json_w_arr_begin(&w);
    size_t nmiss = needs_missing(&t->h, g, o, R.kp, &w) + vars_missing(t, o, &w) +
                   agent_missing(t, o, &w) + outputs_missing(t, &w);
    json_w_arr_end(&w);
    int st = nmiss ? REPLAY_RUN_REFUSED : 0;
    bool dry = o && o->dry_run;
    bool ready = !st && o && (o->check_only || dry);
    if (first_step(o) > 1) {
        json_w_key(&w, "from");
        json_w_uint(&w, first_step(o));
    }
    if (dry)
        replay_plan(g, t, o, R.kp, &w);
    snap_elems E = {0};
    for (size_t i = 0; !st && !ready && i < t->nsteps; i++) {
        if (t->steps[i].superseded || t->steps[i].n < first_step(o))
            continue;
        st = play_step(&R, &t->steps[i], &E);
        if (!st)
            R.done++;
    }
    snap_elements_free(&E);
    json_w_key(&w, "done");
    json_w_uint(&w, R.done);
    json_w_obj_end(&R.outs);
    char *outs = json_w_take(&R.outs, NULL);
    json_w_key(&w, "outputs");
    json_w_raw(&w, outs ? outs : "{}", outs ? strlen(outs) : 2, false);
    free(outs);
    json_w_arr_end(&R.norm);
    char *norm = R.nnorm ? json_w_take(&R.norm, NULL) : NULL;
    if (norm) {
        json_w_key(&w, "normalised");
        json_w_raw(&w, norm, strlen(norm), false);
    }
    free(norm);
    json_w_free(&R.norm);
    json_w_key(&w, "status");
    json_w_str(&w, ready ? (dry ? "planned" : "ready") : status_name(st));
    json_w_obj_end(&w);
    json_w_free(&R.outs);
    replay_key_wipe(&R.key);
    *out = json_w_take(&w, NULL);
    json_w_free(&w);
    return *out ? st : REPLAY_RUN_FAILED;
}
