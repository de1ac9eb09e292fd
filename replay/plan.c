/*
 * plan.c — the plan of a replay (issue 14, point 5: --dry-run): each step
 * the replay would play, with the gate's decision on it, without a
 * browser: nothing is opened, read or acted on.
 *
 * The decision is gate_decide's (no confirmation hook runs, no audit line
 * is written) on what the trail recorded of the step: its tool, the
 * origin it started from (for an open, the origin it opens), whether that
 * origin was logged in (for an open, whether the grant names an identity
 * for it: the session would be restored), its target's role, name, row,
 * label and name attribute (its name and row with parameters filled; the
 * row of a bound rule that pre-approves the step), the text it types
 * (parameters filled), its
 * key, options and egress classes. It is a forecast: a live replay judges
 * the page as it is then, so a page that changed can still make a step
 * confirm or stop where the plan said allow (never the other way round
 * for a step recorded as a credential: the plan says stop for it).
 *
 * Words: allow, confirm (the host's hook asks the human), stop (the human
 * completes it: an unbound consequential step, a credential, a takeover),
 * refused (denied, stale).
 */
#include "replay/replay_int.h"

#include "gate/gate.h"
#include "json/json.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_OPTS_MAX 16

static const char *nz(const char *s)
{
    return s ? s : "";
}

static bool is(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

static const char *plan_word(int decision)
{
    switch (decision) {
    case GATE_ALLOW: return "allow";
    case GATE_CONFIRM: return "confirm";
    case GATE_STOP:
    case GATE_TAKEOVER: return "stop";
    default: return "refused";
    }
}

static unsigned egress_bits(const replay_list *l)
{
    unsigned b = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (is(l->v[i], "approved_origin_fetch"))
            b |= GATE_EGRESS_FETCH;
        else if (is(l->v[i], "structured_send"))
            b |= GATE_EGRESS_SEND;
        else if (is(l->v[i], "file_transfer"))
            b |= GATE_EGRESS_FILE;
    }
    return b;
}

/* The target, for a person: role "name" (row: ...). */
static void target_text(const replay_step *s, char *out, size_t cap)
{
    const replay_target *t = &s->target;
    snprintf(out, cap, "%s \"%.200s\"%s%.200s%s", nz(t->role), nz(t->name),
             t->row ? " (row: " : "", nz(t->row), t->row ? ")" : "");
}

/* The target's name and row as the gate would read them on the page (new
 * strings into *name, *row; NULL when not recorded): {{name}} filled from
 * o; the row, when a bound rule of the grant pre-approves the step (its
 * row matching as replay_bound_eq says), that rule's row: the page's row
 * it names (the recorded one may say {{#}} or be cut). */
static void target_filled(gate *g, const replay_step *s, const char *tool,
                          const replay_opts *o, const replay_key *key, char **name, char **row)
{
    const gate_grant *gg = gate_grant_get(g);
    *name = s->target.name ? replay_fill(s->target.name, o, false) : NULL;
    *row = NULL;
    for (size_t i = 0; gg && s->target.row && !*row && i < gg->nbound; i++)
        if (gg->bound[i].row && replay_bound_eq(&gg->bound[i], s->state.origin, tool,
                                                s->target.name, s->target.row, o, key))
            *row = base_strdup(gg->bound[i].row);
    if (s->target.row && !*row)
        *row = replay_fill(s->target.row, o, false);
}

/* The gate's decision on step s as recorded, into d. */
static void decide(gate *g, const replay_step *s, const json_val *args, const replay_opts *o,
                   const replay_key *key, gate_decision *d)
{
    const char *op = nz(s->op);
    char origin[512] = "";
    gate_request q;
    memset(&q, 0, sizeof q);
    q.tool = is(op, "read") ? "text" : op;
    q.origin = s->state.origin;
    q.url = s->state.url;
    q.authenticated = s->state.authenticated;
    if (is(op, "open")) {
        const char *why = NULL;
        q.url = json_get_str(args, "url");
        if (!q.url || url_origin(q.url, origin, sizeof origin, &why) != 0)
            origin[0] = '\0';
        q.origin = origin;
        q.authenticated = gate_identity_for(g, origin) != NULL;
    }
    q.service = q.authenticated ? q.origin : NULL;
    q.state_change = is(op, "click") || is(op, "type") || is(op, "select") || is(op, "press") ||
                     is(op, "upload") || (is(op, "dialog") && json_bool(json_get(args, "accept")));
    gate_target tg;
    memset(&tg, 0, sizeof tg);
    char *name, *row;
    target_filled(g, s, q.tool, o, key, &name, &row);
    tg.role = s->target.role;
    tg.name = name;
    tg.row = row;
    tg.label = s->target.label;
    tg.field = s->target.name_attr ? s->target.name_attr : s->target.id;
    if (s->has_target)
        q.target = &tg;
    q.text = json_get_str(args, "text");
    q.text_withheld = s->secret;
    q.key = json_get_str(args, "key");
    q.dbl = json_bool(json_get(args, "double"));
    const char *opts[PLAN_OPTS_MAX];
    for (const json_val *v = json_first(json_get(args, "values"));
         v && q.noptions < PLAN_OPTS_MAX; v = json_next(v))
        if (json_str(v, NULL))
            opts[q.noptions++] = json_str(v, NULL);
    q.options = q.noptions ? opts : NULL;
    q.egress = egress_bits(&s->egress);
    gate_decide(g, &q, d);
    free(name);
    free(row);
    /* Recorded as a credential step: the human types it, whatever the
     * recorded facts alone would say. */
    if (is(s->cls, "credential") && d->decision == GATE_ALLOW) {
        d->decision = GATE_TAKEOVER;
        snprintf(d->reason, sizeof d->reason, "recorded as a credential step: the human "
                 "completes it");
    }
}

/* One step of the plan, as an object; by_agent: the model wrote it (its
 * provenance shown: red team s14, R4-4). */
static void plan_step(gate *g, const replay_step *s, bool by_agent, const replay_opts *o,
                      const replay_key *key, json_w *w)
{
    json_w_obj_begin(w);
    json_w_key(w, "step");
    json_w_uint(w, s->n);
    json_w_key(w, "op");
    json_w_str(w, nz(s->op));
    if (by_agent) {
        json_w_key(w, "by");
        json_w_str(w, "agent");
    }
    if (s->has_target) {
        char t[600];
        target_text(s, t, sizeof t);
        json_w_key(w, "target");
        json_w_str(w, t);
    }
    if (s->state.origin) {
        json_w_key(w, "origin");
        json_w_str(w, s->state.origin);
    }
    if (is(s->op, "login") || is(s->op, "takeover")) {
        /* No action: the session comes from the vault by identity. */
        char why[700];
        snprintf(why, sizeof why, "identity %.200s on %.200s: the session is restored from "
                 "the vault; without one there the replay diverges at this step (login)",
                 s->state.identity ? s->state.identity : "(none)", nz(s->state.origin));
        json_w_key(w, "decision");
        json_w_str(w, "allow");
        json_w_key(w, "reason");
        json_w_str(w, why);
        json_w_obj_end(w);
        return;
    }
    const char *m;
    size_t ml;
    char *args = replay_subst(s->args, o, &m, &ml);
    json_doc *d = args ? json_parse(args, strlen(args), NULL, NULL) : NULL;
    gate_decision dec;
    decide(g, s, json_doc_root(d), o, key, &dec);
    json_doc_free(d);
    if (args)
        base_memzero(args, strlen(args));   /* a --var value may be private */
    free(args);
    json_w_key(w, "decision");
    json_w_str(w, plan_word(dec.decision));
    json_w_key(w, "class");
    json_w_str(w, gate_class_name(dec.cls));
    if (dec.reason[0]) {
        json_w_key(w, "reason");
        json_w_str(w, dec.reason);
    }
    json_w_obj_end(w);
}

void replay_plan(gate *g, const replay_trail *t, const replay_opts *o, const replay_key *key,
                 json_w *w)
{
    json_w_key(w, "plan");
    json_w_arr_begin(w);
    for (size_t i = 0; i < t->nsteps; i++) {
        const replay_step *s = &t->steps[i];
        if (!s->superseded && s->n >= (o && o->from ? o->from : 1))
            plan_step(g, s, s->by_agent || t->h.by_agent, o, key, w);
    }
    json_w_arr_end(w);
}
