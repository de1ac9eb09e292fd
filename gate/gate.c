/*
 * gate.c — the gate object: the decision order of gate.h, the confirmation
 * hook, outcomes, control modes and epochs, page-started requests, and the
 * grant queries (tools, origins, identities).
 *
 * Invariants: a decision is computed from the request, the grant and the
 * gate's mode/epoch only (no state carried between decisions: a confirm is
 * asked every time); gate_check never returns an allow it could not audit;
 * reasons and target summaries are valid UTF-8, bounded, and built only
 * from what the request carries (it carries no typed text).
 */
#include "gate/gate_int.h"
#include "url/url.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define N(t) (sizeof(t) / sizeof((t)[0]))

/* ---- lifecycle ---- */

gate *gate_new(const gate_grant *g, const gate_opts *o, gate_err *err)
{
    gate *gt = calloc(1, sizeof *gt);
    if (!gt) {
        if (err)
            snprintf(err->msg, sizeof err->msg, "gate: out of memory");
        return NULL;
    }
    gt->fd = -1;
    gt->epoch = 1;
    gt->mode = GATE_MODE_AGENT;
    if (g && gate_grant_pack(g, &gt->grant, err)) {
        free(gt);
        return NULL;
    }
    if (o) {
        gt->confirm = o->confirm;
        gt->confirm_ud = o->confirm_ud;
        gt->now = o->now;
        gt->now_ud = o->now_ud;
    }
    const char *path = o && o->audit ? o->audit : gt->grant ? gt->grant->audit : NULL;
    if (path && gate_audit_open(gt, path, err)) {
        gate_free(gt);
        return NULL;
    }
    return gt;
}

void gate_free(gate *gt)
{
    if (!gt)
        return;
    gate_audit_close(gt);
    gate_grant_free(gt->grant);
    free(gt);
}

void gate_set_tap(gate *gt, gate_tap_fn fn, void *ud)
{
    gt->tap = fn;
    gt->tap_ud = ud;
}

void gate_set_confirm(gate *gt, gate_confirm_fn fn, void *ud)
{
    gt->confirm = fn;
    gt->confirm_ud = ud;
}

const gate_grant *gate_grant_get(const gate *gt) { return gt ? gt->grant : NULL; }

/* ---- grant queries ---- */

bool gate_tool_allowed(const gate *gt, const char *tool)
{
    if (!gate_tool_known(tool))
        return false;
    const gate_grant *g = gt ? gt->grant : NULL;
    if (!g || !g->ntools)
        return strcmp(tool, "eval") != 0 && strcmp(tool, "upload") != 0 &&
               strcmp(tool, "replay") != 0;
    for (size_t i = 0; i < g->ntools; i++)
        if (strcmp(g->tools[i], tool) == 0)
            return true;
    return false;
}

static bool origin_granted(const gate *gt, const char *norm)
{
    const gate_grant *g = gt ? gt->grant : NULL;
    if (!g)
        return true;
    for (size_t i = 0; i < g->norigins; i++)
        if (gate_origin_match(g->origins[i], norm))
            return true;
    return false;
}

bool gate_origin_allowed(const gate *gt, const char *origin)
{
    char o[GATE_ORIGIN_MAX];
    if (gate_origin_parse(origin, o, sizeof o, ORIGIN_LENIENT, NULL))
        return false;
    return origin_granted(gt, o);
}

static bool about_blank(const char *url)
{
    return strncmp(url, "about:blank", 11) == 0 && (!url[11] || url[11] == '#' || url[11] == '?');
}

bool gate_url_allowed(const gate *gt, const char *url)
{
    if (!url)
        return false;
    return about_blank(url) || gate_origin_allowed(gt, url);
}

const char *gate_identity_for(const gate *gt, const char *origin)
{
    const gate_grant *g = gt ? gt->grant : NULL;
    char o[GATE_ORIGIN_MAX];
    if (!g || gate_origin_parse(origin, o, sizeof o, ORIGIN_LENIENT, NULL))
        return NULL;
    for (size_t i = 0; i < g->nidentities; i++)
        if (strcmp(g->identities[i].service, o) == 0)
            return g->identities[i].identity;
    return NULL;
}

/* ---- deciding ---- */

int gate_verdict(gate_decision *d, int decision, const char *fmt, ...)
{
    /* Whatever a caller formatted in, the reason never holds a character
     * gate_char_escape shows escaped (it reaches the model, the audit log
     * and a --confirm program): gate_text_copy writes those as escapes. */
    char raw[sizeof d->reason];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    gate_text_clean(raw);
    gate_text_copy(d->reason, sizeof d->reason, raw, sizeof d->reason - 1);
    d->decision = decision;
    return 0;
}

/* role "name" (text: ...) (row: ...), at most 200 bytes. */
static void target_summary(const gate_request *req, char *out, size_t cap)
{
    const gate_target *t = req->target;
    char nm[208], tx[208], row[208], via[280], buf[1000];
    /* Page text, escaped (gate_text_escape): a name cannot close its quotes
     * or hide characters in the reason the model, the audit and the human
     * read. */
    if (t) {
        const char *name = t->name && *t->name ? t->name : t->text;
        gate_text_quote(nm, sizeof nm, name, 200);
        gate_text_quote(tx, sizeof tx, t->text, 200);
        gate_text_quote(row, sizeof row, t->row, 200);
        const char *role = t->role && *t->role ? t->role : t->tag && *t->tag ? t->tag : "element";
        bool show_text = *tx && name != t->text && strcmp(tx, nm) != 0;
        /* The node the action named, when it acts on this element. */
        via[0] = 0;
        if (t->via_name) {
            char vr[48], vn[208];
            gate_text_quote(vr, sizeof vr, t->via_role && *t->via_role ? t->via_role : "node",
                            40);
            gate_text_quote(vn, sizeof vn, t->via_name, 60);
            snprintf(via, sizeof via, " (via %s \"%s\")", vr, vn);
        }
        snprintf(buf, sizeof buf, "%.40s \"%s\"%s%s%s%s%s%s%s", role, nm, via,
                 show_text ? " (text: " : "", show_text ? tx : "", show_text ? ")" : "",
                 *row ? " (row: " : "", row, *row ? ")" : "");
    } else if (req->dialog) {
        gate_text_quote(nm, sizeof nm, req->dialog, 200);
        snprintf(buf, sizeof buf, "dialog \"%s\"", nm);
    } else if (req->script) {
        gate_text_quote(nm, sizeof nm, req->script, 180);
        snprintf(buf, sizeof buf, "script \"%s\"", nm);
    } else {
        buf[0] = 0;
    }
    gate_text_copy(out, cap, buf, 200);
}

/* The first 60 bytes of url for a reason, secrets hidden by the one URL
 * rule (url_redact: named and token-shaped values, userinfo), as page
 * text in quotes (gate_text_quote) when quote: a reason reaches the audit,
 * the result and the evidence. Only the origin when out of memory. */
static void url_for_reason(char *q, size_t cap, const char *url, bool quote)
{
    char *red = url_redact(url, URL_REDACT_STRICT | URL_REDACT_TOKENS, NULL);
    char origin[GATE_ORIGIN_MAX];
    const char *s = red ? red : "(an address)";
    if (!red && gate_origin_parse(url, origin, sizeof origin, ORIGIN_LENIENT, NULL) == 0)
        s = origin;
    if (quote)
        gate_text_quote(q, cap, s, 60);
    else
        gate_text_copy(q, cap, s, 60);
    free(red);
}

/* Step 5: the page origin. No origin: only reads (tabs, takeover). An
 * opaque origin ("null", about:blank): reads only. */
static bool check_origin(const gate *gt, const gate_request *req, bool change,
                         gate_decision *d, char *norm)
{
    const char *o = req->origin, *why;
    char q[160];    /* quoted: gate_text_quote */
    /* Under a grant, open goes to an http(s) URL of a granted origin (or
     * about:blank): a data:, blob:, file: or javascript: page has no origin
     * to check and could load anything from anywhere. */
    if (gt->grant && req->tool && strcmp(req->tool, "open") == 0 &&
        !(req->url && gate_url_allowed(gt, req->url))) {
        char on[GATE_ORIGIN_MAX];
        url_for_reason(q, sizeof q, req->url ? req->url : "", true);
        if (req->url && gate_origin_parse(req->url, on, sizeof on, ORIGIN_LENIENT, NULL) == 0)
            gate_verdict(d, GATE_DENY, "origin %s is not in the grant", on);
        else
            gate_verdict(d, GATE_DENY, "open: \"%s\" is not an http(s) URL (under a grant "
                         "only granted http(s) origins open)", q);
        return false;
    }
    if (!o || !*o || strcmp(o, "null") == 0 || about_blank(o)) {
        if (!change)
            return true;
        gate_verdict(d, GATE_DENY, "a state change needs a granted page origin (origin %s)",
                     o && *o ? o : "not given");
        return false;
    }
    gate_text_quote(q, sizeof q, o, 60);
    if (gate_origin_parse(o, norm, GATE_ORIGIN_MAX, ORIGIN_LENIENT, &why)) {
        gate_verdict(d, GATE_DENY, "origin \"%s\" is not granted (%s)", q, why);
        return false;
    }
    if (!origin_granted(gt, norm)) {
        gate_verdict(d, GATE_DENY, "origin %s is not in the grant", norm);
        return false;
    }
    return true;
}

/* A recipient given explicitly (payee: a value without '@' is compared as
 * text), then every value the request gives a recipient field (not a
 * credential field: what is typed there is a secret), then the recipients
 * read back from the form of a consequential action. */
static bool check_recipient(const gate_grant *g, const gate_request *req, gate_decision *d)
{
    char why[400];
    if (req->recipient && gate_recipient_check(g, req->recipient, GATE_RFIELD_NONE, why,
                                               sizeof why)) {
        gate_verdict(d, GATE_DENY, "%s", why);
        return false;
    }
    if (d->cls == GATE_CLASS_CREDENTIAL)
        return true;
    int kind;
    const char *v;
    for (size_t i = 0; (v = gate_recipient_value(req, i, &kind)) != NULL; i++)
        if (gate_recipient_check(g, v, kind, why, sizeof why)) {
            gate_verdict(d, GATE_DENY, "%s", why);
            return false;
        }
    /* What the form of a consequential action holds, read back: a
     * suggestion accepted with a key or by the page itself ends up there. */
    if (d->cls == GATE_CLASS_CONSEQUENTIAL &&
        gate_recipient_present(g, req, d->conseq, why, sizeof why)) {
        gate_verdict(d, GATE_DENY, "%s", why);
        return false;
    }
    return true;
}

/* The file, made absolute (cwd) and normalised lexically ("..": the
 * caller resolved symlinks with realpath before asking). */
static bool check_file(const gate_grant *g, unsigned egress, const char *f, const char *given,
                       gate_decision *d)
{
    char abs[GATE_STR_MAX + 4096 + 2], norm[sizeof abs], q[72];
    const char *why;
    gate_text_copy(q, sizeof q, given ? given : f, 60);
    if (!(egress & GATE_EGRESS_FILE)) {
        gate_verdict(d, GATE_DENY, "file %s: file transfer needs the file_transfer egress class",
                     q);
        return false;
    }
    if (f[0] == '/') {
        snprintf(abs, sizeof abs, "%s", f);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd) || strlen(f) > GATE_STR_MAX) {
            gate_verdict(d, GATE_DENY, "file %s: cannot make the path absolute", q);
            return false;
        }
        snprintf(abs, sizeof abs, "%s/%s", cwd, f);
    }
    if (gate_path_norm(abs, true, norm, sizeof norm, &why)) {
        gate_verdict(d, GATE_DENY, "file %s: %s", q, why);
        return false;
    }
    for (size_t i = 0; g && i < g->nfile_scopes; i++)
        if (gate_path_inside(g->file_scopes[i], norm))
            return true;
    if (!given)
        gate_text_copy(q, sizeof q, norm, 60);
    gate_verdict(d, GATE_DENY, "file %s is outside the grant's file scopes", q);
    return false;
}

static const char *egress_name(unsigned bit)
{
    return bit == GATE_EGRESS_FETCH ? "approved_origin_fetch"
         : bit == GATE_EGRESS_SEND ? "structured_send"
         : bit == GATE_EGRESS_FILE ? "file_transfer" : "unknown";
}

/* Step 6: recipient, file, egress classes. */
/* A form the action submits: where it sends and how. GET leaves with a
 * navigation to the action's origin, which must be granted; POST (or any
 * method but GET and dialog) carries data out: approved_origin_fetch too. */
static bool check_form(const gate *gt, const gate_request *req, unsigned allowed,
                       gate_decision *d)
{
    const gate_target *t = req->target;
    if (!gt->grant || !t || !t->submits || !t->form_action || !*t->form_action)
        return true;
    const char *m = t->form_method && *t->form_method ? t->form_method : "get";
    if (strcmp(m, "dialog") == 0)
        return true;
    char q[160];
    url_for_reason(q, sizeof q, t->form_action, true);
    if (!gate_url_allowed(gt, t->form_action)) {
        gate_verdict(d, GATE_DENY, "the form sends to \"%s\", whose origin is not in the grant",
                     q);
        return false;
    }
    if (strcmp(m, "get") != 0 && !(allowed & GATE_EGRESS_FETCH)) {
        gate_verdict(d, GATE_DENY, "the form posts data (%s to \"%s\"): egress "
                     "approved_origin_fetch is not in the grant", m, q);
        return false;
    }
    return true;
}

static bool check_scope(const gate *gt, const gate_request *req, gate_decision *d)
{
    const gate_grant *g = gt->grant;
    unsigned allowed = g ? g->egress : GATE_EGRESS_FETCH;
    if (!check_recipient(g, req, d))
        return false;
    if (req->file && !check_file(g, allowed, req->file, req->file_given, d))
        return false;
    if (req->state_change && !check_form(gt, req, allowed, d))
        return false;
    unsigned missing = req->egress & ~allowed;
    if (missing) {
        unsigned bit = missing & (~missing + 1);
        gate_verdict(d, GATE_DENY, "egress %s is not in the grant", egress_name(bit));
        return false;
    }
    return true;
}

static const gate_bound *find_bound(const gate_grant *g, const gate_request *req,
                                    const char *origin)
{
    const gate_target *t = req->target;
    const char *name = t ? t->name : req->dialog;
    const char *row = t ? t->row : NULL;
    for (size_t i = 0; g && name && i < g->nbound; i++) {
        const gate_bound *b = &g->bound[i];
        if (strcmp(b->origin, origin) == 0 && strcmp(b->tool, req->tool) == 0 &&
            strcmp(b->name, name) == 0 && (!b->row || (row && strcmp(b->row, row) == 0)))
            return b;
    }
    return NULL;
}

static bool http_url(const char *u)
{
    return u && (strncasecmp(u, "http://", 7) == 0 || strncasecmp(u, "https://", 8) == 0);
}

/* url, on the service whose session the context holds, names an
 * account-security act (gate_classify_get_class). */
static bool account_act(const gate_request *req, const char *url)
{
    return req->service && *req->service && url && *url && url_same_site(req->service, url) &&
           gate_classify_get_class(url, false, NULL, NULL, 0) == GATE_CLASS_AUTH_CHANGE;
}

/* On an authenticated origin, a navigation that only reads is not a state
 * change to confirm: a click on a plain link (no download) to a granted
 * http(s) origin, or a click on a GET form's submit button and typing into
 * a GET form, the form's action on a granted http(s) origin. Whatever the
 * page's own handlers send meanwhile carries data only in a request, and
 * such a request of an authenticated context is confirmed or stopped when
 * it leaves (gate_check_auth_request), whatever started it. The words of
 * the target were read first: a link named "Delete" is still consequential. */
static bool nav_read(const gate *gt, const gate_request *req, gate_decision *d)
{
    const gate_target *t = req->target;
    if (!t || !req->tool)
        return false;
    bool click = strcmp(req->tool, "click") == 0, type = strcmp(req->tool, "type") == 0;
    char q[72];
    /* Not when the address changes the account's security (red team s17,
     * R7-7: "/settings/disable-2fa"): confirmed, as an open of it is. */
    if (click && t->href && account_act(req, t->href))
        return false;
    if (click && t->href && *t->href && !t->download && http_url(t->href) &&
        gate_url_allowed(gt, t->href)) {
        url_for_reason(q, sizeof q, t->href, false);
        gate_verdict(d, GATE_ALLOW, "read: a link to %s on an authenticated origin is a "
                     "navigation that only reads (what the page sends is confirmed when it "
                     "leaves)", q);
        return true;
    }
    bool get_form = t->form_action && http_url(t->form_action) && t->form_method &&
                    strcmp(t->form_method, "get") == 0 && gate_url_allowed(gt, t->form_action);
    if (get_form && ((click && t->submits) || type) && !account_act(req, t->form_action)) {
        url_for_reason(q, sizeof q, t->form_action, false);
        gate_verdict(d, GATE_ALLOW, "read: a GET form to %s on an authenticated origin only "
                     "navigates (what the page sends is confirmed when it leaves)", q);
        return true;
    }
    return false;
}

/* A page of another origin in the browser context that holds a service's
 * session: its requests to the service carry the session's cookies, so
 * its actions are judged as on the service (issue 13 red team, S2). The
 * words naming both, for the reason ("" when the page is the service's). */
static void ctx_words(const gate_request *req, const char *origin, char *out, size_t cap)
{
    char svc[GATE_ORIGIN_MAX];
    out[0] = 0;
    if (!req->service || !*req->service ||
        gate_origin_parse(req->service, svc, sizeof svc, ORIGIN_LENIENT, NULL) ||
        strcmp(svc, origin) == 0)
        return;
    snprintf(out, cap, " (a page of %s in the browser context that holds the session of %s: "
             "what it sends to %s carries that session)", origin, svc, svc);
}

/* Step 7: by class. */
static void decide_class(const gate *gt, const gate_request *req, const char *origin,
                         const char *why, gate_decision *d)
{
    const gate_grant *g = gt->grant;
    const char *kind = gate_conseq_name(d->conseq);
    char cw[GATE_ORIGIN_MAX * 3 + 160];
    ctx_words(req, origin, cw, sizeof cw);
    if (d->cls != GATE_CLASS_CREDENTIAL && gate_courier(gt, req, origin, d))
        return;
    switch (d->cls) {
    case GATE_CLASS_CREDENTIAL:
        gate_verdict(d, GATE_TAKEOVER, "takeover: %s; the human completes it (the agent never "
                     "enters credentials or solves challenges)", why);
        return;
    case GATE_CLASS_CONSEQUENTIAL:
        if (d->conseq == GATE_CONSEQ_SEND && g && !(g->egress & GATE_EGRESS_SEND)) {
            gate_verdict(d, GATE_DENY, "a send needs the structured_send egress class (%s)", why);
            return;
        }
        if (!req->authenticated) {
            gate_verdict(d, GATE_ALLOW, "interact: %s, on an unauthenticated origin", why);
            return;
        }
        if (find_bound(g, req, origin)) {
            gate_verdict(d, GATE_CONFIRM, "bound rule: %s %s on %s%s is named by the grant (%s)",
                         kind, d->target, origin, cw, why);
            return;
        }
        gate_verdict(d, GATE_STOP, "unbound_stop: %s %s on authenticated origin %s%s; the "
                     "human completes it, no bound rule names it (%s)", kind, d->target, origin,
                     cw, why);
        return;
    case GATE_CLASS_AUTH_CHANGE:
        if (nav_read(gt, req, d)) {
            d->cls = GATE_CLASS_READ;
            return;
        }
        gate_verdict(d, GATE_CONFIRM, "auth_change: %s %s on authenticated origin %s%s is "
                     "confirmed every time", gate_action_name(req), d->target, origin, cw);
        return;
    default:
        if (strcmp(req->tool, "eval") == 0)
            gate_verdict(d, GATE_CONFIRM, "eval: running a script is confirmed every time");
        else if (req->page_download)
            gate_verdict(d, GATE_CONFIRM, "page download: the page started it during the "
                         "action (not the target's file): confirmed every time");
        else
            gate_verdict(d, GATE_ALLOW, "%s", why);
    }
}

int gate_decide(gate *gt, const gate_request *req, gate_decision *d)
{
    memset(d, 0, sizeof *d);
    d->decision = GATE_DENY;
    if (!gt || !req || !req->tool || !*req->tool) {
        gate_verdict(d, GATE_DENY, "invalid request: no tool");
        return GATE_EINVAL;
    }
    target_summary(req, d->target, sizeof d->target);
    char why[256], origin[GATE_ORIGIN_MAX] = "", tm[40];
    d->cls = gate_classify(req, &d->conseq, why, sizeof why);
    bool change = gate_is_state_change(req);
    const gate_grant *g = gt->grant;
    if (g && g->expires && gate_now(gt) >= g->expires) {
        gate_time_format(g->expires, tm, sizeof tm);
        return gate_verdict(d, GATE_DENY, "the grant expired at %s", tm);
    }
    if (gt->mode == GATE_MODE_HUMAN)
        return gate_verdict(d, GATE_DENY, "control is with the human (takeover at epoch %llu)",
                            (unsigned long long)gt->epoch);
    if (gt->mode != GATE_MODE_AGENT)
        return gate_verdict(d, GATE_DENY, "control is paused (pause at epoch %llu)",
                            (unsigned long long)gt->epoch);
    if (req->epoch && req->epoch != gt->epoch)
        return gate_verdict(d, GATE_STALE, "stale: stamped with epoch %llu, control epoch is "
                            "now %llu", (unsigned long long)req->epoch,
                            (unsigned long long)gt->epoch);
    if (gt->need_fresh && change)
        return gate_verdict(d, GATE_STALE, "take a fresh snapshot: control returned to the agent "
                            "at epoch %llu", (unsigned long long)gt->epoch);
    /* "download" is no tool a grant lists: what governs it is the egress
     * class file_transfer and the file scopes (step 6, req->file). */
    if (strcmp(req->tool, "download") != 0 && !gate_tool_allowed(gt, req->tool)) {
        char q[72];
        gate_text_copy(q, sizeof q, req->tool, 60);
        return gate_verdict(d, GATE_DENY, "tool %s is not in the grant%s", q,
                            !g || !g->ntools ? " (eval and upload must be named)" : "");
    }
    if (!check_origin(gt, req, change, d, origin) || !check_scope(gt, req, d))
        return 0;
    /* The human sees the whole script or it does not run: never a cut. */
    if (req->script && strlen(req->script) > GATE_SCRIPT_SHOWN)
        return gate_verdict(d, GATE_DENY, "eval: the script is %zu bytes, longer than the %d a "
                            "confirmation can show in full; it is refused, not cut: run it in "
                            "shorter pieces", strlen(req->script), GATE_SCRIPT_SHOWN);
    decide_class(gt, req, origin, why, d);
    return 0;
}

/* ---- checking: hook and audit ---- */

static void w_common(const gate *gt, json_w *w)
{
    const gate_grant *g = gt->grant;
    gate_w_text(w, "task", g ? g->task : NULL, GATE_STR_MAX);
    gate_w_text(w, "principal", g ? g->principal : NULL, GATE_STR_MAX);
    json_w_key(w, "epoch");
    json_w_uint(w, gt->epoch);
    json_w_key(w, "mode");
    json_w_str(w, gate_mode_name(gt->mode));
}

static void w_head(const gate *gt, json_w *w, uint64_t seq, const char *event)
{
    char tm[40];
    gate_time_format(gate_now(gt), tm, sizeof tm);
    json_w_obj_begin(w);
    json_w_key(w, "time");
    json_w_str(w, tm);
    json_w_key(w, "seq");
    json_w_uint(w, seq);
    json_w_key(w, "event");
    json_w_str(w, event);
}

static void w_tail(json_w *w)
{
    json_w_key(w, "pid");
    json_w_int(w, (int64_t)getpid());
    json_w_obj_end(w);
}

typedef struct {
    const gate_request *req;
    const gate_decision *d;
    bool pending;
} decision_line;

static void build_decision(gate *gt, json_w *w, uint64_t seq, void *ud)
{
    const decision_line *l = ud;
    const gate_request *r = l->req;
    const gate_decision *d = l->d;
    w_head(gt, w, seq, "decision");
    w_common(gt, w);
    gate_w_text(w, "action", gate_action_name(r), 64);
    gate_w_text(w, "origin", r ? r->origin : NULL, GATE_ORIGIN_MAX);
    gate_w_text(w, "url", r ? r->url : NULL, GATE_AUDIT_URL_MAX);
    gate_w_text(w, "target", d->target, sizeof d->target);
    json_w_key(w, "class");
    json_w_str(w, gate_class_name(d->cls));
    gate_w_text(w, "kind", d->conseq ? gate_conseq_name(d->conseq) : NULL, 32);
    json_w_key(w, "decision");
    json_w_str(w, gate_decision_name(d->decision));
    gate_w_text(w, "reason", d->reason, sizeof d->reason);
    gate_w_text(w, "obs", r ? r->obs : NULL, 256);
    int kind;
    const char *rv = !r ? NULL : r->recipient ? r->recipient
                   : d->cls == GATE_CLASS_CREDENTIAL ? NULL : gate_recipient_value(r, 0, &kind);
    /* A value given to a To-like field is audited when it is an address. */
    if (rv && (r->recipient || kind == GATE_RFIELD_PAYEE || strchr(rv, '@') ||
               strstr(rv, "\xef\xbc\xa0") || strstr(rv, "\xef\xb9\xab")))
        gate_w_text(w, "recipient", rv, GATE_STR_MAX);
    if (r && r->file)
        gate_w_text(w, "file", r->file, GATE_STR_MAX);
    if (l->pending) {
        json_w_key(w, "pending");
        json_w_bool(w, true);
    }
    w_tail(w);
}

/* Turn a confirm into allow or deny. Returns true when the human allowed.
 * aq: a paused request of an authenticated context (its own prompt), else
 * NULL (req's prompt). */
static bool run_confirm(gate *gt, const gate_request *req, const gate_auth_request *aq,
                        gate_decision *d)
{
    char prior[sizeof d->reason], why[256] = "";
    memcpy(prior, d->reason, sizeof prior);
    if (!gt->confirm) {
        gate_verdict(d, GATE_DENY, "no confirmation hook, so a confirm is a deny (%s)", prior);
        return false;
    }
    char *p = aq ? gate_request_prompt(gt, aq, d) : gate_prompt_json(gt, req, d);
    if (!p) {
        gate_verdict(d, GATE_DENY, "out of memory building the confirmation request (%s)", prior);
        return false;
    }
    int ans = gt->confirm(gt->confirm_ud, p, why, sizeof why);
    free(p);
    why[sizeof why - 1] = 0;
    gate_text_clean(why);
    if (ans == GATE_ALLOW) {
        if (*why)
            gate_verdict(d, GATE_ALLOW, "confirmed (%s): %s", why, prior);
        else
            gate_verdict(d, GATE_ALLOW, "confirmed: %s", prior);
        return true;
    }
    if (ans == GATE_DENY)
        gate_verdict(d, GATE_DENY, "declined by the human%s%s (%s)", *why ? ": " : "", why, prior);
    else
        gate_verdict(d, GATE_DENY, "the confirmation hook answered %d, taken as a deny (%s)", ans,
                     prior);
    return false;
}

/* When d is a confirm, ask the human (run_confirm) and judge the answer
 * against control. Control may change hands while the human is asked (a
 * takeover from the host during the wait): an answer for an older epoch
 * is stale, and so is a question the host called off for that reason; d
 * then becomes GATE_STALE, its reason ending with undone (what was not
 * done). Returns true when the human allowed and control did not change. */
static bool confirm_fresh(gate *gt, const gate_request *req, const gate_auth_request *aq,
                          gate_decision *d, const char *undone)
{
    if (d->decision != GATE_CONFIRM)
        return false;
    uint64_t epoch0 = gt->epoch;
    bool confirmed = run_confirm(gt, req, aq, d);
    /* The human may answer long after the question (the hook waits up to
     * its own timeout): a grant that expired meanwhile allows nothing. */
    const gate_grant *g = gt->grant;
    if (confirmed && g && g->expires && gate_now(gt) >= g->expires) {
        char tm[40];
        gate_time_format(g->expires, tm, sizeof tm);
        gate_verdict(d, GATE_DENY, "the grant expired at %s while the human was asked; %s", tm,
                     undone);
        return false;
    }
    if (gt->epoch == epoch0 && gt->mode == GATE_MODE_AGENT)
        return confirmed;
    gate_verdict(d, GATE_STALE, "stale: control changed while the confirmation was pending "
                 "(epoch %llu, now %llu, %s); %s", (unsigned long long)epoch0,
                 (unsigned long long)gt->epoch, gate_mode_name(gt->mode), undone);
    return false;
}

/* Write the audit line of decision d on req; when it cannot be written the
 * decision becomes a deny (fail closed). 0, or the audit log's error. */
int gate_audit_decision(gate *gt, const gate_request *req, gate_decision *d, bool pending)
{
    decision_line l = {req, d, pending};
    gate_stop_note(gt, req, d);
    int arc = gate_audit_line(gt, build_decision, &l, pending, &d->seq);
    if (arc) {
        char prior[sizeof d->reason];
        memcpy(prior, d->reason, sizeof prior);
        gate_verdict(d, GATE_DENY, "the audit log could not be written, so nothing is allowed "
                     "(fail closed; was: %s)", prior);
    }
    return arc;
}

int gate_check(gate *gt, const gate_request *req, gate_decision *d)
{
    int rc = gate_decide(gt, req, d);
    if (!gt)
        return rc;
    bool confirmed = confirm_fresh(gt, req, NULL, d, "nothing was done");
    gate_courier_note(gt, req, d);
    bool pending = d->decision == GATE_ALLOW &&
                   (d->cls == GATE_CLASS_CONSEQUENTIAL || confirmed);
    d->pending = pending;
    d->confirmed = confirmed && d->decision == GATE_ALLOW;
    int arc = gate_audit_decision(gt, req, d, pending);
    return arc ? arc : rc;
}

typedef struct {
    uint64_t ref;
    const char *outcome, *detail;
} outcome_line;

static void build_outcome(gate *gt, json_w *w, uint64_t seq, void *ud)
{
    const outcome_line *l = ud;
    w_head(gt, w, seq, "outcome");
    gate_w_text(w, "task", gt->grant ? gt->grant->task : NULL, GATE_STR_MAX);
    json_w_key(w, "ref");
    json_w_uint(w, l->ref);
    json_w_key(w, "outcome");
    json_w_str(w, l->outcome);
    gate_w_text(w, "detail", l->detail, 512);
    w_tail(w);
}

int gate_outcome(gate *gt, const gate_decision *d, const char *outcome, const char *detail)
{
    if (!gt || !d || !d->seq || !outcome ||
        (strcmp(outcome, "done") != 0 && strcmp(outcome, "failed") != 0 &&
         strcmp(outcome, "unknown") != 0))
        return GATE_EINVAL;
    outcome_line l = {d->seq, outcome, detail};
    uint64_t seq;
    return gate_audit_line(gt, build_outcome, &l, false, &seq);
}

static int pending_cmp(const void *a, const void *b)
{
    uint64_t x = ((const gate_pending *)a)->seq, y = ((const gate_pending *)b)->seq;
    return x < y ? -1 : x > y;
}

char *gate_unknown_outcomes(gate *gt)
{
    if (!gt || (!gt->npend && !gt->pend_dropped))
        return NULL;
    qsort(gt->pend, gt->npend, sizeof *gt->pend, pending_cmp);
    size_t len = 128;
    for (size_t i = 0; i < gt->npend; i++)
        len += strlen(gt->pend[i].text) + 1;
    char *out = malloc(len), *p = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < gt->npend; i++) {
        size_t n = strlen(gt->pend[i].text);
        memcpy(p, gt->pend[i].text, n);
        p[n] = '\n';
        p += n + 1;
    }
    if (gt->pend_dropped)
        p += snprintf(p, 128, "outcome unknown: %zu more actions (see the audit log)\n",
                      gt->pend_dropped);
    *p = 0;
    size_t keep = 0;
    for (size_t i = 0; i < gt->npend; i++) {
        outcome_line l = {gt->pend[i].seq, "unknown",
                          "the process that allowed it ended before recording its outcome"};
        uint64_t seq;
        if (gate_audit_line(gt, build_outcome, &l, false, &seq) == 0)
            free(gt->pend[i].text);
        else
            gt->pend[keep++] = gt->pend[i];
    }
    gt->npend = keep;
    gt->pend_dropped = 0;
    return out;
}

/* ---- page-started requests ---- */

typedef struct {
    const gate_net *n;
    const char *reason;
    const char *decision;       /* "deny", or "allow" (the human's, audited) */
} request_line;

static void build_request(gate *gt, json_w *w, uint64_t seq, void *ud)
{
    const request_line *l = ud;
    const gate_net *n = l->n;
    w_head(gt, w, seq, "request");
    w_common(gt, w);
    gate_w_text(w, "method", n->method ? n->method : "GET", 32);
    gate_w_text(w, "url", n->shown ? n->shown : n->url, GATE_AUDIT_URL_MAX);
    if (n->type)
        gate_w_text(w, "type", n->type, 32);
    json_w_key(w, "document");
    json_w_bool(w, n->document);
    json_w_key(w, "body");
    json_w_bool(w, n->has_body);
    if (n->privileged) {
        json_w_key(w, "privileged");
        json_w_bool(w, true);
    }
    json_w_key(w, "decision");
    json_w_str(w, l->decision);
    gate_w_text(w, "reason", l->reason, 512);
    w_tail(w);
}

static int req_deny(char *r, size_t cap, const char *fmt, const char *a, const char *b)
{
    char qa[72], qb[72];
    gate_text_copy(qa, sizeof qa, a, 60);
    gate_text_copy(qb, sizeof qb, b, 60);
    snprintf(r, cap, fmt, qa, qb);
    gate_text_clean(r);
    return GATE_DENY;
}

static bool asset_granted(const gate *gt, const char *norm)
{
    const gate_grant *g = gt ? gt->grant : NULL;
    for (size_t i = 0; g && i < g->nassets; i++)
        if (gate_origin_match(g->assets[i], norm))
            return true;
    return false;
}

bool gate_asset_allowed(const gate *gt, const char *origin)
{
    char o[GATE_ORIGIN_MAX];
    if (!origin || gate_origin_parse(origin, o, sizeof o, ORIGIN_LENIENT, NULL))
        return false;
    return asset_granted(gt, o);
}

static int judge_request(gate *gt, const gate_net *n, char *r, size_t cap)
{
    const gate_grant *g = gt->grant;
    const char *method = n->method, *url = n->url;
    bool document = n->document;
    bool data_out = n->has_body || n->data || (method && strcasecmp(method, "GET") != 0 &&
                                                strcasecmp(method, "HEAD") != 0);
    char o[GATE_ORIGIN_MAX], wsurl[GATE_AUDIT_URL_MAX + 8], tm[40];
    /* Only the person's own context is theirs; a page of any other (the
     * open web's) is judged as under the agent: what the person types
     * there never leaves for an origin the grant does not name (R5-5). */
    if (gt->mode == GATE_MODE_HUMAN && n->human) {
        snprintf(r, cap, "control is with the human: the request is theirs");
        return GATE_ALLOW;
    }
    if (g && g->expires && gate_now(gt) >= g->expires) {
        gate_time_format(g->expires, tm, sizeof tm);
        return req_deny(r, cap, "the grant expired at %s%s", tm, "");
    }
    if (n->epoch && n->epoch != gt->epoch)
        return req_deny(r, cap, "stale: the request belongs to an earlier control epoch%s%s",
                        "", "");
    if (strncmp(url, "about:", 6) == 0) {
        if (about_blank(url) || strcmp(url, "about:srcdoc") == 0)
            return snprintf(r, cap, "about:blank"), GATE_ALLOW;
        return req_deny(r, cap, "%s is not granted%s", n->shown_origin ? n->shown_origin : url,
                        "");
    }
    if (strncmp(url, "data:", 5) == 0) {
        if (document)
            return req_deny(r, cap, "a data: document is not granted%s%s", "", "");
        return snprintf(r, cap, "data: (no network)"), GATE_ALLOW;
    }
    if (strncmp(url, "blob:", 5) == 0)
        url += 5;
    if (strncmp(url, "ws://", 5) == 0 || strncmp(url, "wss://", 6) == 0) {
        snprintf(wsurl, sizeof wsurl, "http%s", url + 2);
        url = wsurl;
        data_out = true;
    }
    if (gate_origin_parse(url, o, sizeof o, ORIGIN_LENIENT, NULL))
        return req_deny(r, cap, "%s: scheme not granted%s",
                        n->shown_origin ? n->shown_origin : url, "");
    bool granted = origin_granted(gt, o);
    /* What a refusal names: the caller's shown form (no page-chosen host
     * labels, no session values), else the origin. */
    const char *so = n->shown_origin ? n->shown_origin : o;
    if (document && !granted)
        return req_deny(r, cap, "document request to %s: origin not in the grant%s", so, "");
    if (data_out && !granted)
        return req_deny(r, cap, "a request carrying data to %s: origin not in the grant%s", so,
                        "");
    if (data_out && g && !(g->egress & GATE_EGRESS_FETCH))
        return req_deny(r, cap, "a request carrying data to %s needs the "
                        "approved_origin_fetch egress class%s", so, "");
    /* While the person holds control, a page of a context that is not
     * theirs (the open web's) may be reading what they type: nothing of it
     * leaves for an origin outside the grant, whatever its type (the
     * privileged context's rule; red team s15, R5-5). */
    if (!granted && (n->privileged || gt->mode == GATE_MODE_HUMAN)) {
        if (n->subresource && asset_granted(gt, o))
            return snprintf(r, cap, "asset origin"), GATE_ALLOW;
        return req_deny(r, cap, n->privileged ? "from a privileged context, a request to %s: "
                        "origin not in the grant%s" : "while the person has control, a "
                        "request to %s from a page they do not control: origin not in the "
                        "grant%s", so, n->subresource && g && g->nassets
                        ? " nor an asset origin" : "");
    }
    snprintf(r, cap, "%s", granted ? "granted origin" : "read-only subresource");
    return GATE_ALLOW;
}

int gate_check_net(gate *gt, const gate_net *n, char *reason, size_t cap)
{
    char r[512];
    if (!gt || !n || !n->url) {
        if (reason && cap)
            snprintf(reason, cap, "invalid request: no URL");
        return GATE_DENY;
    }
    int dec = judge_request(gt, n, r, sizeof r);
    /* Refusals are audited, and while the human has control every request
     * (the person's own unjudged, issue 11, point 15b(a); any other judged
     * as under the agent, R5-5). */
    if (dec != GATE_ALLOW || gt->mode == GATE_MODE_HUMAN) {
        request_line l = {n, r, dec == GATE_ALLOW ? "allow" : "deny"};
        uint64_t seq;
        gate_audit_line(gt, build_request, &l, false, &seq);
    }
    if (reason && cap)
        gate_text_copy(reason, cap, r, cap - 1);
    return dec;
}

int gate_check_request(gate *gt, const char *method, const char *url, bool document,
                       bool has_body, uint64_t epoch, char *reason, size_t cap)
{
    gate_net n = {0};
    n.method = method;
    n.url = url;
    n.document = document;
    n.has_body = has_body;
    n.epoch = epoch;
    return gate_check_net(gt, &n, reason, cap);
}

int gate_note_request(gate *gt, const gate_net *n, const char *reason)
{
    if (!gt || !n || !n->url)
        return GATE_EINVAL;
    request_line l = {n, reason ? reason : "", "deny"};
    uint64_t seq;
    return gate_audit_line(gt, build_request, &l, false, &seq);
}

int gate_note_refusal(gate *gt, const char *tool, const char *url, const char *reason)
{
    return gate_note_decided(gt, tool, url, GATE_DENY, reason);
}

int gate_note_decided(gate *gt, const char *tool, const char *url, int decision,
                      const char *reason)
{
    if (!gt || (decision != GATE_ALLOW && decision != GATE_DENY))
        return GATE_EINVAL;
    gate_request q = {0};
    q.tool = tool;
    q.origin = "";
    q.url = url;
    gate_decision d;
    memset(&d, 0, sizeof d);
    d.decision = decision;
    d.cls = GATE_CLASS_READ;
    gate_text_copy(d.reason, sizeof d.reason, reason, sizeof d.reason - 1);
    decision_line l = {&q, &d, false};
    return gate_audit_line(gt, build_decision, &l, false, &d.seq);
}

/* ---- data-carrying requests of authenticated contexts ---- */

/* "POST http://bank.test/api/x (fields: a, b)" into out. */
static void auth_request_summary(const gate_auth_request *q, char *out, size_t cap)
{
    char m[24], u[208], f[208], buf[520];
    gate_text_copy(m, sizeof m, q->method && *q->method ? q->method : "GET", 16);
    gate_text_copy(u, sizeof u, q->url, 200);
    gate_text_copy(f, sizeof f, q->fields, 200);
    snprintf(buf, sizeof buf, "%s %s%s%s%s", m, u, *f ? " (fields: " : "", f, *f ? ")" : "");
    gate_text_copy(out, cap, buf, 240);
}

/* What a covered request that carries data is compared with (R9-1). */
#define DATA_SHOWN " (data: only to a POST form shown)"

int gate_decide_auth_request(gate *gt, const gate_auth_request *q, gate_decision *d)
{
    memset(d, 0, sizeof *d);
    d->decision = GATE_DENY;
    d->cls = GATE_CLASS_AUTH_CHANGE;
    if (!gt || !q || !q->url) {
        gate_verdict(d, GATE_DENY, "invalid request: no URL");
        return GATE_EINVAL;
    }
    auth_request_summary(q, d->target, sizeof d->target);
    const gate_grant *g = gt->grant;
    char why[256], o[72], tm[40];
    gate_text_copy(o, sizeof o, q->origin, 60);
    /* Sent under another control (queued while the agent had it, answered
     * after a takeover): never judged under a mode it was not sent in. */
    if (q->epoch && q->epoch != gt->epoch)
        return gate_verdict(d, GATE_STALE, "stale: the page sent it at control epoch %llu; "
                            "control has changed since (epoch %llu, %s), so it is refused (a "
                            "request is never answered under another control than the one it "
                            "was sent under)", (unsigned long long)q->epoch,
                            (unsigned long long)gt->epoch, gate_mode_name(gt->mode));
    if (gt->mode == GATE_MODE_HUMAN && q->human)
        return gate_verdict(d, GATE_ALLOW, "control is with the human: the request is theirs");
    if (gt->mode == GATE_MODE_HUMAN)
        return gate_verdict(d, GATE_DENY, "control is with the human, and the request comes "
                            "from a tab the person does not control: refused, not asked "
                            "(the agent's tabs act only under the agent's control)");
    if (gt->mode != GATE_MODE_AGENT)
        return gate_verdict(d, GATE_DENY, "control is paused (pause at epoch %llu)",
                            (unsigned long long)gt->epoch);
    if (g && g->expires && gate_now(gt) >= g->expires) {
        gate_time_format(g->expires, tm, sizeof tm);
        return gate_verdict(d, GATE_DENY, "the grant expired at %s", tm);
    }
    /* A navigation (a document GET) is judged by the words of the URL the
     * browser really sends, as an open's (red team s12, G9/G6), and so is
     * every GET the page sends there (red team s13, N3: an image, a
     * fetch(), a prefetch), a static file's name left out but for a
     * document's. */
    bool get = (!q->method || strcasecmp(q->method, "GET") == 0 ||
                strcasecmp(q->method, "HEAD") == 0);
    bool nav = get && (q->document || q->get);
    bool statics = q->resource && *q->resource && strcmp(q->resource, "Document") != 0;
    int kind = nav ? gate_classify_get(q->url, statics, why, sizeof why)
                   : gate_classify_request(q->method, q->url, why, sizeof why);
    if (kind) {
        d->cls = GATE_CLASS_CONSEQUENTIAL;
        d->conseq = kind;
        if (q->covered == GATE_CLASS_CONSEQUENTIAL && (nav ? q->shown_url : !q->shown_other))
            return gate_verdict(d, GATE_ALLOW, "covered: the consequential action the human "
                                "confirmed (a bound rule) is in progress on its tab (%s)", why);
        /* Under the cover, a GET to another address than the one the human
         * was shown is not what they said yes to (red team s12, G9b). */
        if (q->covered == GATE_CLASS_CONSEQUENTIAL)
            return gate_verdict(d, GATE_CONFIRM, "%s: the page sends %s to authenticated "
                                "origin %s while the action the human confirmed runs, but to "
                                "another address than the one they were shown%s: asked on its "
                                "own (%s)", gate_conseq_name(kind), d->target, o,
                                nav ? "" : DATA_SHOWN, why);
        return gate_verdict(d, GATE_STOP, "unbound_stop: the page sends a %s request %s to "
                            "authenticated origin %s; the human completes it (%s)",
                            gate_conseq_name(kind), d->target, o, why);
    }
    if (nav)
        return gate_verdict(d, GATE_ALLOW, "a %s whose URL words are not consequential: a "
                            "read", q->document ? "navigation" : "GET");
    /* Under the cover, data sent to another address than the one the
     * human was shown (a key's keydown moved the focus into another form;
     * a handler posted elsewhere; a 307 sent it on; a link's, a plain
     * button's: a form the page submits) is not what they said yes to (red
     * team s19, s20: R9-1): asked on its own. */
    if (q->covered >= 0 && q->shown_other)
        return gate_verdict(d, GATE_CONFIRM, "auth_change: the page sends %s to authenticated "
                            "origin %s while the action the human confirmed runs, but to "
                            "another address than the one they were shown%s: asked on its own",
                            d->target, o, DATA_SHOWN);
    if (q->covered >= 0)
        return gate_verdict(d, GATE_ALLOW, "covered: the human confirmed the %s action in "
                            "progress on its tab", gate_class_name(q->covered));
    return gate_verdict(d, GATE_CONFIRM, "auth_change: the page sends %s (%s request) to "
                        "authenticated origin %s; a request that carries data there is "
                        "confirmed every time, whatever started it", d->target,
                        q->resource && *q->resource ? q->resource : "a", o);
}

int gate_check_auth_request(gate *gt, const gate_auth_request *q, gate_decision *d)
{
    int rc = gate_decide_auth_request(gt, q, d);
    if (rc)
        return rc;
    /* While the human has control: allowed, and audited like every request
     * then (one paused before the takeover and answered after it too). */
    bool confirmed = confirm_fresh(gt, NULL, q, d, "the request was not sent");
    d->confirmed = confirmed && d->decision == GATE_ALLOW;
    gate_request r = {0};
    r.tool = "request";
    r.origin = q->origin;
    r.url = q->url;
    return gate_audit_decision(gt, &r, d, false);
}

/* ---- control epochs ---- */

typedef struct {
    int from;
    const char *who;
} mode_line;

static void build_mode(gate *gt, json_w *w, uint64_t seq, void *ud)
{
    const mode_line *l = ud;
    w_head(gt, w, seq, "mode");
    w_common(gt, w);
    json_w_key(w, "from");
    json_w_str(w, gate_mode_name(l->from));
    gate_w_text(w, "who", l->who, 256);
    w_tail(w);
}

int gate_mode(const gate *gt) { return gt->mode; }
uint64_t gate_epoch(const gate *gt) { return gt->epoch; }

uint64_t gate_set_mode(gate *gt, int mode, const char *who)
{
    if ((mode != GATE_MODE_AGENT && mode != GATE_MODE_HUMAN && mode != GATE_MODE_PAUSED) ||
        mode == gt->mode)
        return gt->epoch;
    mode_line l = {gt->mode, who};
    gt->mode = mode;
    gt->epoch++;
    gt->need_fresh = mode == GATE_MODE_AGENT;
    uint64_t seq;
    gate_audit_line(gt, build_mode, &l, false, &seq);
    return gt->epoch;
}

void gate_observed(gate *gt)
{
    if (gt->mode == GATE_MODE_AGENT)
        gt->need_fresh = false;
}

/* ---- names ---- */

const char *gate_decision_name(int d)
{
    static const char *const NAMES[] = {"allow", "deny", "confirm", "stop", "takeover", "stale"};
    return d >= 0 && (size_t)d < N(NAMES) ? NAMES[d] : "unknown";
}

const char *gate_mode_name(int mode)
{
    static const char *const NAMES[] = {"agent", "human", "paused"};
    return mode >= 0 && (size_t)mode < N(NAMES) ? NAMES[mode] : "unknown";
}

static const char *const EXCLUSIONS[] = {
    "snapshot_cookie_integrity: the gate trusts that the cookies a restored or captured "
    "session holds are the service's own; cookies planted or swapped inside a context by "
    "the page or another local program are not detected in v1.",
    "bot_to_bot_channel_injection: text one agent leaves for another (through a page, a "
    "message or a shared document) is page data like any other; the gate does not "
    "authenticate agent-to-agent channels.",
    "approval_fatigue: every confirm is asked again and never remembered, but the gate does "
    "not limit or measure how often a human is asked, nor notice approvals given without "
    "reading.",
    "prompt_data_separation_as_boundary: page text is marked as untrusted data for the "
    "model, but that marking is a hint, not a boundary; no decision of the gate relies on "
    "the model keeping instructions and data apart.",
    "generic_browser_click_binding: a bound rule names an operation by origin, tool and "
    "accessible name, and the gate cannot prove that clicking that element performs that "
    "operation, since the page controls both.",
    "local_device_execution_isolation: cdpgate, the browser and the agent host run with the "
    "user's privileges; isolating them from the rest of the device (sandboxes, VMs, "
    "separate users) is left to the platform.",
    "bot_as_security_boundary: the agent is assumed misled or compromised at any time; only "
    "the grant, the gate and the human decide, and nothing relies on the model refusing.",
    NULL,
};

const char *const *gate_exclusions(void) { return EXCLUSIONS; }
