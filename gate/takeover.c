/*
 * takeover.c — the agent hands control to a person (browser_takeover;
 * issue 11, point 15b(a)). While the human has control the page's own
 * requests are not judged (they are the human's, and audited), so handing
 * over switches judging off: the gate gives control to the human only
 * when the host's confirmation channel says a person is at the browser
 * now, and never for a browser that has no window for one.
 *
 * The host's own control channel (gate_set_mode) is the human already and
 * needs no question.
 */
#include "gate/gate_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The question (new, free(); NULL when out of memory): cdpgate's words
 * first, the agent's reason escaped after them. */
static char *takeover_message(const char *said)
{
    char s[1200];
    gate_text_quote(s, sizeof s, said ? said : "", 1000);
    size_t cap = 1200 + strlen(s);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    snprintf(out, cap, "cdpgate: the agent asks to hand the browser to a person now. While a "
             "person has control, cdpgate does not judge the page's own requests (each one "
             "is written to the audit log) and refuses every tool of the agent until control "
             "is given back. Allow it only if you are at the browser and take over now; if "
             "nobody is at the browser, say no.\n\nWhat the agent supplied (escaped: \\\" is "
             "a quote, \\n a line break, \\uXXXX an invisible or control character):\n  its "
             "reason: %s%s%s\n\nA person takes over the browser now?", *s ? "\"" : "",
             *s ? s : "(none)", *s ? "\"" : "");
    return out;
}

static char *takeover_prompt(const gate *gt, const char *said, const gate_decision *d)
{
    char *msg = takeover_message(said);
    if (!msg)
        return NULL;
    json_w w;
    gate_prompt_begin(&w, msg);
    gate_w_text(&w, "action", "takeover", 16);
    gate_w_text(&w, "origin", NULL, 0);
    gate_w_text(&w, "url", NULL, 0);
    json_w_key(&w, "target");
    json_w_obj_begin(&w);
    gate_w_text(&w, "role", NULL, 0);
    gate_w_text(&w, "name", NULL, 0);
    gate_w_text(&w, "row", NULL, 0);
    json_w_obj_end(&w);
    json_w_key(&w, "class");
    json_w_str(&w, gate_class_name(d->cls));
    gate_w_text(&w, "kind", NULL, 0);
    gate_w_text(&w, "observation", NULL, 0);
    char s[1200];
    gate_text_quote(s, sizeof s, said ? said : "", 1000);
    gate_w_text(&w, "text", s, sizeof s);
    json_w_key(&w, "epoch");
    json_w_uint(&w, gate_epoch(gt));
    gate_w_text(&w, "reason", d->reason, sizeof d->reason);
    gate_w_text(&w, "task", gt->grant ? gt->grant->task : NULL, GATE_STR_MAX);
    return gate_prompt_end(&w);
}

/* The person said yes: before control passes, the host answers what the
 * page sent meanwhile under the agent's rules (t->settle), then control
 * must still be the agent's at epoch0. */
static void takeover_settle(gate *gt, const gate_takeover_req *t, uint64_t epoch0,
                            const char *why, gate_decision *d)
{
    if (t->settle && t->settle(t->settle_ud) != 0)
        gate_verdict(d, GATE_DENY, "takeover: the page's requests sent while the agent had "
                     "control could not be answered first, so control stays with the agent "
                     "(fail closed)");
    else if (gt->epoch != epoch0 || gt->mode != GATE_MODE_AGENT)
        gate_verdict(d, GATE_STALE, "stale: control changed while the takeover was settled "
                     "(epoch %llu, now %llu, %s); nothing was done", (unsigned long long)epoch0,
                     (unsigned long long)gt->epoch, gate_mode_name(gt->mode));
    else
        gate_verdict(d, GATE_ALLOW, "takeover confirmed: a person is at the browser%s%s",
                     *why ? ": " : "", why);
}

/* Decide (asking the human when it comes to that) into d. */
static void takeover_decide(gate *gt, const gate_takeover_req *t, gate_decision *d)
{
    const gate_grant *g = gt->grant;
    char tm[40];
    if (gt->mode == GATE_MODE_HUMAN) {
        gate_verdict(d, GATE_ALLOW, "control is with the human already (epoch %llu)",
                     (unsigned long long)gt->epoch);
        return;
    }
    if (gt->mode != GATE_MODE_AGENT) {
        gate_verdict(d, GATE_DENY, "control is paused (pause at epoch %llu)",
                     (unsigned long long)gt->epoch);
        return;
    }
    if (g && g->expires && gate_now(gt) >= g->expires) {
        gate_time_format(g->expires, tm, sizeof tm);
        gate_verdict(d, GATE_DENY, "the grant expired at %s", tm);
        return;
    }
    if (t->no_window) {
        gate_verdict(d, GATE_DENY, "takeover: the browser is headless, so no person can drive it; "
                     "the host allows a takeover of a headless browser only with "
                     "--takeover-headless (it shows the page another way)");
        return;
    }
    gate_verdict(d, GATE_CONFIRM, "takeover: while a person has control the page's requests are "
                 "not judged, so a person at the browser must say they take over now");
    if (!gt->confirm) {
        gate_verdict(d, GATE_DENY, "takeover: no way to ask whether a person is at the browser (no "
                     "confirmation hook), so control stays with the agent (fail closed)");
        return;
    }
    char *p = takeover_prompt(gt, t->said, d);
    if (!p) {
        gate_verdict(d, GATE_DENY, "out of memory building the takeover question");
        return;
    }
    uint64_t epoch0 = gt->epoch;
    char why[256] = "";
    int ans = gt->confirm(gt->confirm_ud, p, why, sizeof why);
    free(p);
    why[sizeof why - 1] = 0;
    gate_text_clean(why);
    if (gt->epoch != epoch0 && gt->mode == GATE_MODE_HUMAN)
        gate_verdict(d, GATE_ALLOW, "the host gave control to the human while asked (epoch %llu)",
                     (unsigned long long)gt->epoch);
    else if (gt->epoch != epoch0)
        gate_verdict(d, GATE_STALE, "stale: control changed while the takeover was asked (epoch "
                     "%llu, now %llu, %s); nothing was done", (unsigned long long)epoch0,
                     (unsigned long long)gt->epoch, gate_mode_name(gt->mode));
    else if (ans == GATE_ALLOW)
        takeover_settle(gt, t, epoch0, why, d);
    else
        gate_verdict(d, GATE_DENY, "takeover declined: the human did not confirm that a person is "
                     "at the browser%s%s", *why ? ": " : "", why);
}

int gate_takeover(gate *gt, const gate_takeover_req *t, gate_decision *d)
{
    memset(d, 0, sizeof *d);
    d->decision = GATE_DENY;
    /* A class of its own: a --confirm program that answers by class must
     * not hand control over as it would an ordinary action. */
    d->cls = GATE_CLASS_TAKEOVER;
    if (!gt || !t) {
        gate_verdict(d, GATE_DENY, "invalid request");
        return GATE_EINVAL;
    }
    snprintf(d->target, sizeof d->target, "hand the browser to a person");
    bool human0 = gt->mode == GATE_MODE_HUMAN;
    takeover_decide(gt, t, d);
    gate_request r = {0};
    r.tool = "takeover";
    r.origin = "";
    int arc = gate_audit_decision(gt, &r, d, false);
    if (arc || d->decision != GATE_ALLOW || human0 || gt->mode == GATE_MODE_HUMAN)
        return arc;
    gate_set_mode(gt, GATE_MODE_HUMAN, "agent (browser_takeover), a person confirmed");
    return 0;
}

/* ---- the last stop (red team s17, R7-10) ---- */

void gate_stop_note(gate *gt, const gate_request *req, const gate_decision *d)
{
    if (!gt || !req || !d || (d->decision != GATE_STOP &&
                               !(d->decision == GATE_DENY && d->cls == GATE_CLASS_CONSEQUENTIAL)))
        return;
    char o[220];
    gate_text_quote(o, sizeof o, req->origin ? req->origin : "", 200);
    snprintf(gt->last_stop, sizeof gt->last_stop, "%s %s%s%s", gate_conseq_name(d->conseq),
             *d->target ? d->target : "an action", *o ? " on " : "", o);
    gt->last_stop_epoch = gt->epoch;
}

size_t gate_last_stop(const gate *gt, char *out, size_t cap)
{
    if (!cap)
        return 0;
    out[0] = 0;
    if (gt && *gt->last_stop && gt->last_stop_epoch == gt->epoch)
        snprintf(out, cap, "%s", gt->last_stop);
    return strlen(out);
}

/* ---- the live view's access lines (issue 15) ---- */

typedef struct {
    bool allowed;
    const char *what;
} live_line;

static void build_live(gate *gt, json_w *w, uint64_t seq, void *ud)
{
    const live_line *l = ud;
    const gate_grant *g = gt->grant;
    char tm[40];
    gate_time_format(gate_now(gt), tm, sizeof tm);
    json_w_obj_begin(w);
    json_w_key(w, "time");
    json_w_str(w, tm);
    json_w_key(w, "seq");
    json_w_uint(w, seq);
    json_w_key(w, "event");
    json_w_str(w, "live");
    gate_w_text(w, "task", g ? g->task : NULL, GATE_STR_MAX);
    json_w_key(w, "epoch");
    json_w_uint(w, gt->epoch);
    json_w_key(w, "mode");
    json_w_str(w, gate_mode_name(gt->mode));
    json_w_key(w, "decision");
    json_w_str(w, l->allowed ? "allow" : "deny");
    gate_w_text(w, "reason", l->what, 256);
    json_w_key(w, "pid");
    json_w_int(w, (int64_t)getpid());
    json_w_obj_end(w);
}

int gate_audit_live(gate *gt, bool allowed, const char *what)
{
    live_line l = {allowed, what};
    uint64_t seq;
    return gate_audit_line(gt, build_live, &l, false, &seq);
}
