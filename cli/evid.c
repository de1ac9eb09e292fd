/*
 * evid.c — `--evidence DIR`: a task's session as evidence (issue 16,
 * point 3; docs/evidence.md). The glue between the sources and the
 * writer (evidence/):
 *
 *   - the gate's audit tap (gate_set_tap): every decision, mode change,
 *     outcome and judged page request as a record of kind "gate", and a
 *     mode change to or from the human as "takeover" (start/end, never
 *     what the person did);
 *   - the browser's events (a listener on the connection, read only): the
 *     main frames' navigations, console errors and uncaught exceptions
 *     (snap_opts.console), the browser's own error log, and each
 *     response's metadata (method, URL, status, type; never a header or a
 *     body);
 *   - each tool call that is an action: its target (ref, role, name), the
 *     gate's decision, the result, then a screenshot of the viewport
 *     through the agent's own screenshot path (secret fields masked, or
 *     the capture refused), not taken while control is with the human.
 *
 * Secrets: the agent hands over each session value it restores or
 * captures (snap_opts.secret_fn) and the writer scrubs them byte-exact
 * from every record; every URL (a field, or a word of a text: a reason,
 * a target, an expression, console text) is shown as the agent shows it
 * (snap_url_shown: parameters named like secrets, session values) and
 * through the recorder's bearer rule (replay_url_scrub). A typed text or a
 * pressed key is recorded only by the trail's rule (snap_step_*_kept).
 * The person's session (a takeover, until the agent's next call) is
 * recorded by origin only, without console text, and the pages they
 * opened become secrets of the session (red team s16, R6-6).
 */
#include "cli/evid.h"

#include "gate/gate.h"
#include "json/json.h"
#include "replay/replay.h"
#include "url/url.h"
#include "vault/vault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Say once that evidence could not be written, then go on (the session is
 * not stopped for it; the verifier shows what is missing). */
static void rec_done(cli_evid *v)
{
    evidence_err err = {0};
    if (evidence_rec_end(v->e, &err) != 0 && !v->failed) {
        v->failed = true;
        fprintf(stderr, "cdpgate: evidence: %s\n", err.msg);
    }
}

/* url as it may be recorded (new; NULL when out of memory). */
static char *url_shown(cli_evid *v, const char *url)
{
    char *s = v->agent ? snap_url_shown(v->agent, url) : base_strdup(url);
    char *b = s ? replay_url_scrub(s) : NULL;
    free(s);
    return b;
}

static void rec_url(cli_evid *v, const char *key, const char *url)
{
    char *s = url ? url_shown(v, url) : NULL;
    evidence_rec_str(v->e, key, s ? s : url ? "[withheld]" : NULL);
    free(s);
}

/* A URL of the person's session (a takeover): its origin only, as the
 * hand-back's account and the audit show what a person opens (a reset or
 * magic-login link, a code in a query: R6-6); marked as theirs. */
static void rec_url_human(cli_evid *v, const char *key, const char *url)
{
    char *s = url && v->agent ? snap_human_url_shown(v->agent, url) : NULL;
    evidence_rec_str(v->e, key, s ? s : url ? "(withheld)" : NULL);
    evidence_rec_bool(v->e, "during_takeover", true);
    free(s);
}

/* What follows the origin in u (path, query, fragment), and its query and
 * fragment alone, as secrets of the session. */
static void rest_secret(cli_evid *v, const char *u)
{
    url_parts up;
    if (!u || url_parse(u, &up, NULL) != 0 || !*up.host || up.rest > up.rest_end)
        return;
    evidence_secret_add(v->e, u + up.rest, up.rest_end - up.rest);
    const char *q = strpbrk(u + up.rest, "?#");
    if (q && q < u + up.rest_end)
        evidence_secret_add(v->e, q, (size_t)(u + up.rest_end - q));
}

/* A page the person opened during a takeover: its path, query and
 * fragment (raw, and as the agent and the audit show them) are never
 * written in any later record either: the agent's first read of the page
 * it was handed back audits its URL (a reset or verification link's code:
 * R6-6). */
static void human_page_secret(cli_evid *v, const char *url)
{
    if (!url)
        return;
    rest_secret(v, url);
    char *s = v->agent ? snap_url_shown(v->agent, url) : NULL;
    char *t = url_shown(v, url);
    rest_secret(v, s);
    rest_secret(v, t);
    free(s);
    free(t);
}

/* A page the person opened: its navigation is theirs even when the
 * browser sends it after control came back (the agent's next call has
 * begun: seen, the navigation after the 'end' record). */
static void human_nav_note(cli_evid *v, const char *url)
{
    if (url)
        vault_sha256(url, strlen(url), v->human_nav[v->nhuman_nav++ % CLI_EVID_HUMAN_NAV]);
}

/* url one of the person's pages awaiting its navigation? Consumed. */
static bool human_nav_take(cli_evid *v, const char *url)
{
    unsigned n = v->nhuman_nav < CLI_EVID_HUMAN_NAV ? v->nhuman_nav : CLI_EVID_HUMAN_NAV;
    unsigned char d[32];
    if (!url || n == 0)
        return false;
    vault_sha256(url, strlen(url), d);
    for (unsigned i = 0; i < n; i++)
        if (memcmp(v->human_nav[i], d, sizeof d) == 0) {
            memset(v->human_nav[i], 0, sizeof d);
            return true;
        }
    return false;
}

/* url into key by the rule of the moment: the person's or the agent's. */
static void rec_url_now(cli_evid *v, const char *key, const char *url)
{
    if (v->human)
        rec_url_human(v, key, url);
    else
        rec_url(v, key, url);
}

/* text with every word that holds "://" shown as a URL is (new). */
static char *text_shown(cli_evid *v, const char *text, size_t n)
{
    base_buf b = {0};
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && text[j] != ' ' && text[j] != '\n' && text[j] != '\t' &&
               text[j] != '(' && text[j] != ')' && text[j] != '"' && text[j] != '\'')
            j++;
        if (j == i) {
            base_buf_putc(&b, text[i++]);
            continue;
        }
        char *w = malloc(j - i + 1);
        if (w) {
            memcpy(w, text + i, j - i);
            w[j - i] = '\0';
        }
        char *u = w && strstr(w, "://") ? url_shown(v, w) : NULL;
        base_buf_puts(&b, u ? u : w ? w : "");
        free(u);
        free(w);
        i = j;
    }
    if (!b.s && !b.oom)
        base_buf_puts(&b, "");
    return base_buf_take(&b, NULL);
}

/* A text field with every URL in it shown as a URL is. */
static void rec_text(cli_evid *v, const char *key, const char *text)
{
    char *t = text ? text_shown(v, text, strlen(text)) : NULL;
    evidence_rec_str(v->e, key, t ? t : text ? "[withheld]" : NULL);
    free(t);
}

/* ---- the gate's audit tap ---- */

static void copy_field(char *out, size_t cap, const json_val *root, const char *key)
{
    const char *s = json_get_str(root, key);
    snprintf(out, cap, "%s", s ? s : "");
}

static void on_audit(void *ud, const char *line, size_t len)
{
    cli_evid *v = ud;
    if (!v->e)
        return;
    json_doc *d = json_parse(line, len, NULL, NULL);
    const json_val *root = json_doc_root(d);
    const char *event = json_get_str(root, "event");
    if (event && strcmp(event, "decision") == 0) {
        copy_field(v->decision, sizeof v->decision, root, "decision");
        copy_field(v->reason, sizeof v->reason, root, "reason");
        copy_field(v->target, sizeof v->target, root, "target");
        v->seq = (uint64_t)json_get_int(root, "seq", 0);
    }
    if (evidence_rec_begin(v->e, "gate") == 0) {
        evidence_rec_json(v->e, "audit", line, len);
        rec_done(v);
    }
    const char *mode = json_get_str(root, "mode"), *from = json_get_str(root, "from");
    if (event && strcmp(event, "mode") == 0 && mode && strcmp(mode, "human") == 0)
        v->human = true;  /* until the agent's next tool call (cli_evid_before) */
    if (event && strcmp(event, "mode") == 0 && mode && from &&
        (strcmp(mode, "human") == 0 || strcmp(from, "human") == 0) &&
        evidence_rec_begin(v->e, "takeover") == 0) {
        evidence_rec_str(v->e, "event", strcmp(mode, "human") == 0 ? "start" : "end");
        evidence_rec_str(v->e, "mode", mode);
        evidence_rec_str(v->e, "who", json_get_str(root, "who"));
        evidence_rec_int(v->e, "epoch", json_get_int(root, "epoch", 0));
        rec_done(v);
    }
    json_doc_free(d);
}

/* ---- starting ---- */

/* The task's name as a folder name: [A-Za-z0-9_-], at most 40. */
static void task_name(const char *task, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; task && task[i] && k + 1 < cap && k < 40; i++) {
        char c = task[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
        out[k++] = ok ? c : '_';
    }
    if (!k)
        k = (size_t)snprintf(out, cap, "task");
    out[k] = '\0';
}

int cli_evid_start(cli_evid *v, const char *dir, struct gate *gt, const char *cmd)
{
    const gate_grant *g = gate_grant_get(gt);
    char name[48], stamp[32], path[4096];
    task_name(g ? g->task : NULL, name, sizeof name);
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm))
        snprintf(stamp, sizeof stamp, "0");
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "cdpgate %s: --evidence %s: %s\n", cmd, dir, strerror(errno));
        return -1;
    }
    if ((size_t)snprintf(path, sizeof path, "%s/%s-%s-%ld", dir, name, stamp, (long)getpid()) >=
        sizeof path) {
        fprintf(stderr, "cdpgate %s: --evidence %s: the path is too long\n", cmd, dir);
        return -1;
    }
    evidence_err err = {0};
    v->e = evidence_open(path, g ? g->task : NULL, &err);
    if (!v->e) {
        fprintf(stderr, "cdpgate %s: --evidence: %s\n", cmd, err.msg);
        return -1;
    }
    v->gt = gt;
    evidence_meta_set(v->e, "cdpgate", CDPGATE_VERSION);
    gate_set_tap(gt, on_audit, v);
    fprintf(stderr, "cdpgate %s: evidence: recording into %s\n", cmd, path);
    if (evidence_rec_begin(v->e, "session") == 0) {
        evidence_rec_str(v->e, "event", "start");
        evidence_rec_str(v->e, "command", cmd);
        evidence_rec_str(v->e, "cdpgate", CDPGATE_VERSION);
        evidence_rec_str(v->e, "task", g ? g->task : NULL);
        rec_done(v);
    }
    return 0;
}

static void on_secret(void *ud, const char *val, size_t n)
{
    cli_evid *v = ud;
    if (v->e)
        evidence_secret_add(v->e, val, n);
}

void cli_evid_opts(cli_evid *v, snap_opts *so)
{
    if (!v->e)
        return;
    so->secret_fn = on_secret;
    so->secret_ud = v;
    so->console = true;
}

/* ---- the browser's events ---- */

static bool main_frame_known(cli_evid *v, const char *id)
{
    for (unsigned i = 0; id && i < v->nframes && i < CLI_EVID_FRAMES; i++)
        if (strcmp(v->main_frame[i], id) == 0)
            return true;
    return false;
}

static void on_navigated(cli_evid *v, const json_val *p, bool within)
{
    const json_val *f = json_get(p, "frame");
    const char *id = within ? json_get_str(p, "frameId") : json_get_str(f, "id");
    const char *url = within ? json_get_str(p, "url") : json_get_str(f, "url");
    if (!id || !url || (within ? !main_frame_known(v, id) : json_get(f, "parentId") != NULL))
        return;
    if (!within && !main_frame_known(v, id) && strlen(id) < sizeof v->main_frame[0])
        snprintf(v->main_frame[v->nframes++ % CLI_EVID_FRAMES], sizeof v->main_frame[0], "%s",
                 id);
    if (v->human)
        human_page_secret(v, url);
    bool theirs = v->human || human_nav_take(v, url);
    if (evidence_rec_begin(v->e, "navigation") != 0)
        return;
    if (theirs)
        rec_url_human(v, "url", url);
    else
        rec_url(v, "url", url);
    if (within)
        evidence_rec_bool(v->e, "within_document", true);
    rec_done(v);
}

/* A console message's text: its arguments' values or descriptions. */
static void console_text(const json_val *args, base_buf *b)
{
    for (const json_val *x = json_first(args); x && b->len < 4096; x = json_next(x)) {
        const json_val *val = json_get(x, "value");
        size_t n = 0;
        const char *s = json_str(val, &n);
        if (b->len)
            base_buf_putc(b, ' ');
        if (s)
            base_buf_put(b, s, n);
        else if ((s = json_get_str(x, "description")) || (s = json_get_str(x,
                                                                          "unserializableValue")))
            base_buf_puts(b, s);
        else if (json_is(val, JSON_NUMBER))
            base_buf_printf(b, "%g", json_num(val));
        else
            base_buf_puts(b, json_get_str(x, "type") ? json_get_str(x, "type") : "?");
    }
}

static void rec_console(cli_evid *v, const char *source, const char *level, const char *text,
                        size_t n)
{
    /* The person's session: its page text is theirs (R6-6). */
    char *t = v->human ? NULL : text_shown(v, text, n);
    if (evidence_rec_begin(v->e, "console") == 0) {
        evidence_rec_str(v->e, "source", source);
        evidence_rec_str(v->e, "level", level);
        evidence_rec_str(v->e, "text", t ? t : v->human ? "[withheld: the person's session]"
                                                        : "[withheld]");
        if (v->human)
            evidence_rec_bool(v->e, "during_takeover", true);
        rec_done(v);
    }
    free(t);
}

static void on_console(cli_evid *v, const char *method, const json_val *p)
{
    base_buf b = {0};
    if (strcmp(method, "Runtime.consoleAPICalled") == 0) {
        const char *type = json_get_str(p, "type");
        if (!type || (strcmp(type, "error") != 0 && strcmp(type, "assert") != 0 &&
                      strcmp(type, "warning") != 0))
            return;
        console_text(json_get(p, "args"), &b);
        rec_console(v, "console", type, b.s ? b.s : "", b.len);
    } else if (strcmp(method, "Runtime.exceptionThrown") == 0) {
        const json_val *d = json_get(p, "exceptionDetails");
        const char *s = json_get_str(json_get(d, "exception"), "description");
        base_buf_puts(&b, s ? s : json_get_str(d, "text") ? json_get_str(d, "text") : "");
        rec_console(v, "exception", "error", b.s ? b.s : "", b.len);
    } else {
        const json_val *en = json_get(p, "entry");
        const char *level = json_get_str(en, "level");
        if (!level || strcmp(level, "error") != 0)
            return;
        base_buf_puts(&b, json_get_str(en, "text") ? json_get_str(en, "text") : "");
        if (json_get_str(en, "url")) {
            base_buf_puts(&b, " ");
            base_buf_puts(&b, json_get_str(en, "url"));
        }
        rec_console(v, "browser", level, b.s ? b.s : "", b.len);
    }
    base_buf_free(&b);
}

static const char *req_method(cli_evid *v, const char *id)
{
    for (unsigned i = 0; id && i < CLI_EVID_REQS && i < v->nreq; i++)
        if (strcmp(v->req[i].id, id) == 0)
            return v->req[i].method;
    return NULL;
}

static void on_network(cli_evid *v, const char *method, const json_val *p)
{
    const char *id = json_get_str(p, "requestId");
    if (strcmp(method, "Network.requestWillBeSent") == 0) {
        const char *m = json_get_str(json_get(p, "request"), "method");
        const char *ty = json_get_str(p, "type");
        if (v->human && ty && strcmp(ty, "Document") == 0)
            human_nav_note(v, json_get_str(json_get(p, "request"), "url"));
        if (id && m && strlen(id) < sizeof v->req[0].id && strlen(m) < sizeof v->req[0].method) {
            unsigned k = v->nreq++ % CLI_EVID_REQS;
            snprintf(v->req[k].id, sizeof v->req[k].id, "%s", id);
            snprintf(v->req[k].method, sizeof v->req[k].method, "%s", m);
        }
        return;
    }
    bool failed = strcmp(method, "Network.loadingFailed") == 0;
    if (!failed && strcmp(method, "Network.responseReceived") != 0)
        return;
    const json_val *resp = json_get(p, "response");
    const char *type = json_get_str(p, "type");
    if (v->human && !failed && type && strcmp(type, "Document") == 0) {
        human_page_secret(v, json_get_str(resp, "url"));
        human_nav_note(v, json_get_str(resp, "url"));
    }
    if (++v->nnet > CLI_EVID_NET_MAX) {
        if (v->nnet == CLI_EVID_NET_MAX + 1 && evidence_rec_begin(v->e, "note") == 0) {
            evidence_rec_str(v->e, "text", "network records stop here (5000 recorded)");
            rec_done(v);
        }
        return;
    }
    if (evidence_rec_begin(v->e, "network") != 0)
        return;
    const char *m = req_method(v, id);
    evidence_rec_str(v->e, "method", m ? m : "?");
    if (!failed) {
        rec_url_now(v, "url", json_get_str(resp, "url"));
        evidence_rec_int(v->e, "status", json_get_int(resp, "status", 0));
        evidence_rec_str(v->e, "mime", json_get_str(resp, "mimeType"));
    } else {
        evidence_rec_str(v->e, "failed", json_get_str(p, "errorText"));
        if (v->human)
            evidence_rec_bool(v->e, "during_takeover", true);
    }
    evidence_rec_str(v->e, "type", type);
    rec_done(v);
}

static void on_event(void *ud, cdp_conn *c, const char *session, const char *method,
                     const json_val *params)
{
    (void)c;
    (void)session;
    cli_evid *v = ud;
    if (!v->e || !method)
        return;
    if (strcmp(method, "Page.frameNavigated") == 0)
        on_navigated(v, params, false);
    else if (strcmp(method, "Page.navigatedWithinDocument") == 0)
        on_navigated(v, params, true);
    else if (strncmp(method, "Runtime.", 8) == 0 || strcmp(method, "Log.entryAdded") == 0)
        on_console(v, method, params);
    else if (strncmp(method, "Network.", 8) == 0)
        on_network(v, method, params);
}

void cli_evid_attach(cli_evid *v, cdp_browser *b, snap_agent *g)
{
    if (!v->e)
        return;
    v->agent = g;
    v->conn = cdp_browser_conn(b);
    if (cdp_listen(v->conn, on_event, v) != 0) {
        fprintf(stderr, "cdpgate: evidence: cannot listen to the browser's events\n");
        v->conn = NULL;
    }
    evidence_meta_set(v->e, "browser", cdp_browser_product(b));
    if (evidence_rec_begin(v->e, "browser") == 0) {
        evidence_rec_str(v->e, "event", "start");
        evidence_rec_str(v->e, "product", cdp_browser_product(b));
        rec_done(v);
    }
}

void cli_evid_detach(cli_evid *v)
{
    if (v->conn)
        cdp_unlisten(v->conn, on_event, v);
    v->conn = NULL;
    v->agent = NULL;
}

/* ---- tool calls ---- */

void cli_evid_before(cli_evid *v, snap_agent *g)
{
    if (!v->e)
        return;
    v->decision[0] = v->reason[0] = v->target[0] = '\0';
    v->seq = 0;
    if (v->human && gate_mode(v->gt) != GATE_MODE_HUMAN) {
        /* What the browser sent before this call is the person's session
         * (their last navigation may still be unread): read it as theirs,
         * then the agent's events are recorded as the agent's again. */
        cdp_err pe = {0};
        if (v->conn)
            cdp_pump(v->conn, 0, &pe);
        v->human = false;
    }
    if (g) {
        snap_record_facts(g, true);
        snap_step_forget(g);  /* no facts of an earlier step stand for this one */
    }
}

/* The tool's name when the call is an action, else NULL. */
static const char *action_name(mcp_tool tool)
{
    switch (tool) {
    case MCP_T_OPEN: return "open";
    case MCP_T_CLICK: return "click";
    case MCP_T_HOVER: return "hover";
    case MCP_T_TYPE: return "type";
    case MCP_T_SELECT: return "select";
    case MCP_T_PRESS: return "press";
    case MCP_T_SCROLL: return "scroll";
    case MCP_T_BACK: return "back";
    case MCP_T_TABS: return "tabs";
    case MCP_T_DIALOG: return "dialog";
    case MCP_T_UPLOAD: return "upload";
    case MCP_T_EVAL: return "eval";
    default: return NULL;
    }
}

/* The target as the gate's chokepoint read it (allowed actions), else as
 * the decision named it. */
static void rec_target(cli_evid *v, snap_agent *g, const mcp_args *a, mcp_tool tool)
{
    const snap_step_facts *f = g ? snap_step_last(g) : NULL;
    evidence_rec_str(v->e, "ref", a->ref);
    if (f && f->has_target) {
        evidence_rec_str(v->e, "role", f->role);
        evidence_rec_str(v->e, "name", f->name);
        if (f->frame_origin)
            evidence_rec_str(v->e, "frame", f->frame_origin);
        if (f->secret)
            evidence_rec_bool(v->e, "secret_field", true);
    } else if (v->target[0]) {
        rec_text(v, "target", v->target);
    }
    if (f && f->url)
        rec_url(v, "page", f->url);
    if (tool == MCP_T_OPEN)
        rec_url(v, "url", a->url);
    /* The trail's rule (snapshot.h): no text typed, no key pressed into
     * a secret field, nor when the chokepoint read nothing (R6-4). */
    if (tool == MCP_T_TYPE)
        evidence_rec_str(v->e, "text", a->text && snap_step_text_kept(f) ? a->text
                                                                          : "[not recorded]");
    if (tool == MCP_T_PRESS)
        evidence_rec_str(v->e, "key", snap_step_key_kept(f) ? a->key : "[not recorded]");
    if (tool == MCP_T_TABS)
        evidence_rec_str(v->e, "action", a->action);
    if (tool == MCP_T_EVAL)
        rec_text(v, "expression", a->expression);
}

/* The PNG's size from its header, into the manifest once. */
static void note_viewport(cli_evid *v, const uint8_t *img, size_t n)
{
    if (v->viewport || n < 24 || memcmp(img, "\x89PNG", 4) != 0)
        return;
    uint32_t w = (uint32_t)img[16] << 24 | (uint32_t)img[17] << 16 | (uint32_t)img[18] << 8 |
                 img[19];
    uint32_t h = (uint32_t)img[20] << 24 | (uint32_t)img[21] << 16 | (uint32_t)img[22] << 8 |
                 img[23];
    char s[64];
    snprintf(s, sizeof s, "%ux%u px (the first screenshot)", w, h);
    evidence_meta_set(v->e, "viewport", s);
    v->viewport = true;
}

/* A screenshot after a step, unless control is with the human. */
static void shot_after(cli_evid *v, snap_agent *g, const char *what)
{
    const char *skip = gate_mode(v->gt) == GATE_MODE_HUMAN ? "control is with the human"
                     : gate_mode(v->gt) == GATE_MODE_PAUSED ? "control is paused" : NULL;
    snap_result r;
    memset(&r, 0, sizeof r);
    int rc = skip || !g ? -1 : snap_screenshot(g, false, &r);
    if (rc == 0 && r.image) {
        evidence_err err = {0};
        note_viewport(v, r.image, r.image_len);
        json_doc *d = r.structured ? json_parse(r.structured, strlen(r.structured), NULL, NULL)
                                   : NULL;
        char note[128];
        snprintf(note, sizeof note, "%s; secret fields masked: %lld", what,
                 (long long)json_get_int(json_doc_root(d), "masked", 0));
        json_doc_free(d);
        if (evidence_shot(v->e, r.image, r.image_len, note, &err) != 0 && !v->failed) {
            v->failed = true;
            fprintf(stderr, "cdpgate: evidence: %s\n", err.msg);
        }
    } else if (evidence_rec_begin(v->e, "shot_skipped") == 0) {
        v->shots_skipped++;
        evidence_rec_str(v->e, "after", what);
        evidence_rec_str(v->e, "why", skip ? skip : r.text ? r.text : "no browser");
        rec_done(v);
    }
    snap_result_free(&r);
}

void cli_evid_after(cli_evid *v, snap_agent *g, mcp_tool tool, const mcp_args *a, int rc,
                    const snap_result *r)
{
    const char *name = action_name(tool);
    if (v->e && !v->human) {
        /* The call that followed the takeover has ended: what the person
         * opened was read by now; an agent's later visit to the same page
         * is the agent's. */
        memset(v->human_nav, 0, sizeof v->human_nav);
        v->nhuman_nav = 0;
    }
    if (!v->e || !name)
        return;
    if (evidence_rec_begin(v->e, "action") != 0)
        return;
    uint64_t n = evidence_count(v->e) + 1;
    evidence_rec_str(v->e, "tool", name);
    rec_target(v, g, a, tool);
    evidence_rec_str(v->e, "decision", v->decision[0] ? v->decision : "none");
    if (v->reason[0])
        rec_text(v, "reason", v->reason);
    if (v->seq)
        evidence_rec_int(v->e, "gate_seq", (int64_t)v->seq);
    evidence_rec_bool(v->e, "ok", rc == 0);
    if (rc != 0)
        evidence_rec_str(v->e, "error", snap_strerror(rc));
    if (r && r->obs[0])
        evidence_rec_str(v->e, "obs", r->obs);
    if (tool == MCP_T_EVAL && rc == 0 && r && r->structured)
        evidence_rec_json(v->e, "result", r->structured, strlen(r->structured));
    rec_done(v);
    char what[64];
    snprintf(what, sizeof what, "after record %llu (%s)", (unsigned long long)n, name);
    shot_after(v, g, what);
}

void cli_evid_result(cli_evid *v, snap_agent *g, const char *kind, const char *json)
{
    if (!v->e || evidence_rec_begin(v->e, kind) != 0)
        return;
    uint64_t n = evidence_count(v->e) + 1;
    evidence_rec_json(v->e, "result", json, json ? strlen(json) : 0);
    rec_done(v);
    char what[64];
    snprintf(what, sizeof what, "after record %llu (%s)", (unsigned long long)n, kind);
    shot_after(v, g, what);
}

/* s in form f (new; NULL when out of memory): 0 as it is, 1 inside a
 * JSON string, 2 HTML-escaped. */
static char *url_form(const char *s, int f)
{
    if (f == 0)
        return base_strdup(s);
    base_buf b = {0};
    if (f == 2) {
        base_buf_put_html(&b, s);
    } else {
        json_w w;
        json_w_init(&w);
        json_w_str(&w, s);
        size_t n = 0;
        char *j = json_w_error(&w) ? NULL : json_w_take(&w, &n);
        json_w_free(&w);
        if (j && n >= 2)
            base_buf_put(&b, j + 1, n - 2);
        free(j);
    }
    if (!b.s && !b.oom)
        base_buf_puts(&b, "");
    return base_buf_take(&b, NULL);
}

/* data (*n bytes) with each occurrence of the page's URL as axe read it
 * (raw, JSON-escaped, HTML-escaped) replaced with its shown form in the
 * same encoding (new, *n its length; NULL when out of memory). A report
 * holds the URL in its JSON "url" and in its HTML's title and Page: line
 * (red team s16, R6-2: a token in its query or fragment). */
static char *report_url_shown(cli_evid *v, const char *data, size_t *n, const char *url)
{
    char *shown = url ? url_shown(v, url) : NULL;
    base_buf b = {0};
    base_buf_put(&b, data, *n);
    for (int f = 0; shown && url && *url && strcmp(shown, url) != 0 && f < 3 && !b.oom; f++) {
        char *from = url_form(url, f), *to = url_form(shown, f);
        size_t fl = from ? strlen(from) : 0;
        base_buf o = {0};
        for (size_t i = 0; from && to && fl && i < b.len;) {
            if (i + fl <= b.len && memcmp(b.s + i, from, fl) == 0) {
                base_buf_puts(&o, to);
                i += fl;
            } else {
                base_buf_putc(&o, b.s[i++]);
            }
        }
        bool ok = from && to && !o.oom;
        free(from);
        free(to);
        if (ok && fl && o.s) {
            base_buf_free(&b);
            b = o;
        } else {
            base_buf_free(&o);
            b.oom = b.oom || !ok;
        }
    }
    if (!b.s && !b.oom)
        base_buf_puts(&b, "");
    bool ok = (shown || !url) && !b.oom;
    free(shown);
    char *out = ok ? base_buf_take(&b, n) : NULL;
    base_buf_free(&b);
    return out;
}

/* One report file into the folder (scrubbed of the secrets) and its item
 * of the record's "files"; false (said once) when it could not be. */
static bool a11y_file(cli_evid *v, const char *name, const char *data, size_t n, json_w *w,
                      const char *url)
{
    char hex[EVIDENCE_HEX_LEN + 1];
    evidence_err err = {0};
    char *d = report_url_shown(v, data, &n, url);
    int rc = d ? evidence_put(v->e, name, d, n, true, hex, &err) : EVIDENCE_ENOMEM;
    if (!d)
        snprintf(err.msg, sizeof err.msg, "evidence: %s: out of memory", name);
    free(d);
    if (rc != 0) {
        if (!v->failed)
            fprintf(stderr, "cdpgate: evidence: %s\n", err.msg);
        v->failed = true;
        return false;
    }
    json_w_obj_begin(w);
    json_w_key(w, "file");
    json_w_str(w, name);
    json_w_key(w, "sha256");
    json_w_str(w, hex);
    json_w_obj_end(w);
    return true;
}

void cli_evid_a11y(cli_evid *v, const a11y_report *rep)
{
    if (!v->e || !rep->structured)
        return;
    char jn[32], hn[32];
    unsigned k = ++v->a11y;
    snprintf(jn, sizeof jn, "a11y-%04u.json", k);
    snprintf(hn, sizeof hn, "a11y-%04u.html", k);
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    bool ok = rep->json && a11y_file(v, jn, rep->json, rep->json_len, &w, rep->url);
    ok = rep->html && a11y_file(v, hn, rep->html, rep->html_len, &w, rep->url) && ok;
    json_w_arr_end(&w);
    size_t fl = 0;
    char *files = json_w_take(&w, &fl);
    json_doc *d = json_parse(rep->structured, strlen(rep->structured), NULL, NULL);
    const char *axe = json_get_str(json_doc_root(d), "axe");
    if (axe)
        evidence_meta_set(v->e, "axe", axe);
    if (evidence_rec_begin(v->e, "a11y") == 0) {
        rec_url(v, "url", rep->url);
        evidence_rec_str(v->e, "axe", axe);
        evidence_rec_str(v->e, "tags", json_get_str(json_doc_root(d), "tags"));
        evidence_rec_json(v->e, "summary", rep->structured, strlen(rep->structured));
        if (files)
            evidence_rec_json(v->e, "files", files, fl);
        if (!ok)
            evidence_rec_str(v->e, "note", "a report file could not be written");
        rec_done(v);
    }
    json_doc_free(d);
    free(files);
}

void cli_evid_text(cli_evid *v, const char *kind, const char *text, const char *obs)
{
    if (!v->e || !text)
        return;
    char name[48], hex[EVIDENCE_HEX_LEN + 1];
    snprintf(name, sizeof name, "%s-%04u.txt", kind, ++v->texts);
    evidence_err err = {0};
    size_t n = strlen(text);
    if (evidence_put(v->e, name, text, n, true, hex, &err) != 0) {
        if (!v->failed)
            fprintf(stderr, "cdpgate: evidence: %s\n", err.msg);
        v->failed = true;
        return;
    }
    if (evidence_rec_begin(v->e, kind) != 0)
        return;
    evidence_rec_str(v->e, "file", name);
    evidence_rec_str(v->e, "sha256", hex);
    if (obs && *obs)
        evidence_rec_str(v->e, "obs", obs);
    rec_done(v);
}

void cli_evid_image(cli_evid *v, const uint8_t *img, size_t n, const char *note)
{
    evidence_err err = {0};
    if (v->e && evidence_shot(v->e, img, n, note, &err) != 0 && !v->failed) {
        v->failed = true;
        fprintf(stderr, "cdpgate: evidence: %s\n", err.msg);
    }
}

void cli_evid_note(cli_evid *v, const char *kind, const char *event, const char *what)
{
    if (!v->e || evidence_rec_begin(v->e, kind) != 0)
        return;
    evidence_rec_str(v->e, "event", event);
    if (what)
        evidence_rec_str(v->e, "what", what);
    rec_done(v);
}

void cli_evid_stop(cli_evid *v, const char *cmd)
{
    if (!v->e)
        return;
    cli_evid_detach(v);
    if (v->gt)
        gate_set_tap(v->gt, NULL, NULL);
    cli_evid_note(v, "session", "end", NULL);
    char dir[4096], fin[EVIDENCE_HEX_LEN + 1];
    snprintf(dir, sizeof dir, "%s", evidence_dir(v->e));
    uint64_t n = evidence_count(v->e);
    evidence_err err = {0};
    if (evidence_close(v->e, fin, &err) != 0)
        fprintf(stderr, "cdpgate %s: evidence: %s\n", cmd, err.msg);
    else
        fprintf(stderr, "cdpgate %s: evidence: %s: %llu records, final digest %s\n", cmd, dir,
                (unsigned long long)n, fin);
    v->e = NULL;
}
