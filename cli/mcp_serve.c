/*
 * mcp_serve.c — `cdpgate mcp`: the MCP server's stdio loop and its tools,
 * run on snapshot/ over a browser launched (or attached) on the first tool
 * call, so that initialize is answered without waiting for a browser.
 *
 * stdout carries protocol messages only, one per line; diagnostics go to
 * stderr. stdin is read in chunks and split into lines (cli/mcp.c); lines
 * wait in a FIFO queue and are handled one at a time. While a tool runs,
 * the protocol layer polls between steps (mcp_cancelled): queued lines are
 * offered to mcp_handle_line, which acts at once on ping and
 * notifications/cancelled and defers everything else (it stays queued).
 *
 * The browser lives as long as the server. If it dies, the tool result says
 * so and the next call launches a new one (with new refs and tabs).
 *
 * Sessions and login: the agent restores stored sessions from the vault
 * (when its directory exists) into privileged browser contexts.
 * browser_login (cli/mcp_login.c) hands a login to the human in a window,
 * or with no display through the live view: until the login finishes,
 * every tool call (browser_login too) is refused with "waiting for the
 * human to finish logging in".
 * End of input ends the server: the browser is closed and the profile
 * removed.
 */
#include "cli/cli.h"
#include "base/base.h"
#include "gate/gate.h"
#include "json/json.h"
#include "cli/mcp.h"
#include "cli/record.h"
#include "cli/evid.h"
#include "cli/a11y_cmd.h"
#include "cli/takeover.h"
#include "cli/mcp_int.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"

#include <errno.h>
#include <poll.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct qline {
    struct qline *next;
    bool too_long;
    unsigned gen;           /* the tool call that last deferred it */
    size_t len;
    char data[];
} qline;

typedef struct cli_mcp_serve serve;

/* Whether the grant lists tool by name (not merely the default set). */
static bool grant_names(const gate *g, const char *tool)
{
    const gate_grant *gr = gate_grant_get(g);
    for (size_t i = 0; gr && i < gr->ntools; i++)
        if (strcmp(gr->tools[i], tool) == 0)
            return true;
    return false;
}

/* ---- I/O ---- */

static void out_write(serve *S, const char *p, size_t n)
{
    if (!S->out_dead && base_write_all(1, p, n, BASE_NO_DEADLINE, 0, NULL) != 0)
        S->out_dead = true;
}

static void on_write(void *ud, const char *msg, size_t len)
{
    serve *S = ud;
    out_write(S, msg, len);
    out_write(S, "\n", 1);
}

static void enqueue(serve *S, const char *line, size_t len, bool too_long)
{
    qline *q = malloc(sizeof *q + len + 1);
    if (!q) {
        fprintf(stderr, "cdpgate mcp: out of memory; a message was dropped\n");
        return;
    }
    q->next = NULL;
    q->too_long = too_long;
    q->gen = 0;
    q->len = len;
    if (len)
        memcpy(q->data, line, len);
    q->data[len] = 0;
    if (S->tail)
        S->tail->next = q;
    else
        S->head = q;
    S->tail = q;
}

static void on_line(void *ud, const char *line, size_t len, bool too_long)
{
    enqueue(ud, line, len, too_long);
}

/* The human had control (--control-fd) and gave it back logged in: one
 * trail step "identity X, human logged in" on the tab's origin (never what
 * they did: issue 14, point 2); replay restores that identity's session
 * from the vault or diverges 'login' at it. Not logged in: no step. */
static void rec_takeover(serve *S)
{
    if (!S->agent || (!S->rec.rec && !S->rec.mine))
        return;
    snap_elems E = {0};
    snap_result r = {0};
    if (snap_elements(S->agent, &E, &r) == 0 && E.auth && *E.origin)
        cli_rec_takeover(&S->rec, E.origin, gate_identity_for(S->gate, E.origin));
    snap_result_free(&r);
    snap_elements_free(&E);
}

/* One line of the host's control channel. */
/* "watch" on the control channel: a read-only watch link of the live
 * view that runs (a takeover's or a login's), out of band like the
 * person's (cli_takeover_watch): the host's own command, never the model's. */
static void control_watch(serve *S)
{
    cli_takeover *tk = S->tk ? S->tk : S->ltk;
    char link[300], why[200];
    if (!tk) {
        fprintf(stderr, "cdpgate mcp: control: watch: no live view runs\n");
        return;
    }
    if (cli_takeover_watch(tk, link, sizeof link, why, sizeof why) != 0) {
        fprintf(stderr, "cdpgate mcp: control: watch: %s\n", why);
        return;
    }
    cli_takeover_deliver(S->o, "mcp", link, true, "cdpgate: a read-only watch link of the "
                         "live view (it shows the browser as the person works; it never "
                         "controls it)");
    memset(link, 0, sizeof link);
}

static void control_line(serve *S, const char *line)
{
    if (strcmp(line, "watch") == 0) {
        control_watch(S);
        return;
    }
    int mode = strcmp(line, "takeover") == 0 ? GATE_MODE_HUMAN
             : strcmp(line, "pause") == 0 ? GATE_MODE_PAUSED
             : strcmp(line, "release") == 0 ? GATE_MODE_AGENT : -1;
    if (mode < 0) {
        fprintf(stderr, "cdpgate mcp: control: unknown command (takeover, pause, release, "
                "watch)\n");
        return;
    }
    bool was_human = gate_mode(S->gate) == GATE_MODE_HUMAN;
    uint64_t e = gate_set_mode(S->gate, mode, "host (--control-fd)");
    if (was_human && mode == GATE_MODE_AGENT)
        rec_takeover(S);
    fprintf(stderr, "cdpgate mcp: control is with the %s now (epoch %llu)\n",
            gate_mode_name(mode), (unsigned long long)e);
}

/* Read what the control channel has (without waiting). */
static void control_step(serve *S)
{
    if (!S->control_open)
        return;
    struct pollfd pfd = {S->o->control_fd, POLLIN, 0};
    while (poll(&pfd, 1, 0) > 0) {
        char buf[256];
        ssize_t n = read(S->o->control_fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            S->control_open = false;
            return;
        }
        for (ssize_t i = 0; i < n; i++) {
            char c = buf[i];
            if (c == '\n' || c == '\r') {
                S->control[S->ncontrol] = 0;
                if (S->ncontrol)
                    control_line(S, S->control);
                S->ncontrol = 0;
            } else if (S->ncontrol + 1 < sizeof S->control) {
                S->control[S->ncontrol++] = c;
            }
        }
    }
}

/* Read what stdin has, waiting up to timeout_ms (-1: until something);
 * the control channel is read whenever it has something. */
static void read_input(serve *S, int timeout_ms)
{
    if (S->eof)
        return;
    /* Also the browser connection: under a grant the page's requests wait
     * for the gate, which must answer them while no tool runs too. */
    cdp_conn *bc = S->b && S->agent ? cdp_browser_conn(S->b) : NULL;
    int bfd = bc ? cdp_conn_fd(bc) : -1;
    /* a headless login's browser: its screencast frames */
    cdp_conn *lc = S->ltk && S->lb ? cdp_browser_conn(S->lb) : NULL;
    struct pollfd pfd[4 + CLI_TAKEOVER_FDS] = {{0, POLLIN, 0},
                                              {S->control_open ? S->o->control_fd : -1, POLLIN, 0},
                                              {bfd, POLLIN, 0},
                                              {lc ? cdp_conn_fd(lc) : -1, POLLIN, 0}};
    /* and the live view's sockets (a takeover's or a login's: never both,
     * every tool is refused while either runs): the person's input and the
     * frame acknowledgements wake the loop (live_step runs after this) */
    int live[CLI_TAKEOVER_FDS];
    int nl = cli_takeover_fds(S->tk ? S->tk : S->ltk, live, CLI_TAKEOVER_FDS);
    for (int k = 0; k < nl; k++)
        pfd[4 + k] = (struct pollfd){live[k], POLLIN, 0};
    int r = poll(pfd, (nfds_t)(4 + nl), timeout_ms);
    if (r < 0 && errno != EINTR && errno != EAGAIN)
        S->eof = true;
    if (r > 0 && S->control_open && pfd[1].revents)
        control_step(S);
    cdp_err pe;
    if (r > 0 && bfd >= 0 && pfd[2].revents)
        cdp_pump(bc, 0, &pe);
    if (r > 0 && lc && pfd[3].revents)
        cdp_pump(lc, 0, &pe);
    if (r <= 0 || !pfd[0].revents)
        return;
    char buf[65536];
    ssize_t n = read(0, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        S->eof = true;
        mcp_lines_finish(&S->lines, on_line, S);
        return;
    }
    if (mcp_lines_feed(&S->lines, buf, (size_t)n, on_line, S))
        fprintf(stderr, "cdpgate mcp: out of memory; a message was dropped\n");
}

/* While a tool runs: read what arrived, then offer each queued line the
 * running call has not seen to the server, which acts at once on ping and
 * cancellation and defers the rest (they stay queued, in order). */
static void on_poll(void *ud)
{
    serve *S = ud;
    read_input(S, 0);
    qline **pp = &S->head, *prev = NULL;
    while (*pp) {
        qline *q = *pp;
        if (q->gen != S->gen) {
            q->gen = S->gen;
            int r = MCP_DONE;
            if (q->too_long)
                mcp_line_too_long(S->srv);
            else
                r = mcp_handle_line(S->srv, q->data, q->len);
            if (r == MCP_DONE) {
                *pp = q->next;
                if (S->tail == q)
                    S->tail = prev;
                free(q);
                continue;
            }
        }
        prev = q;
        pp = &q->next;
    }
}


/* ---- the confirmation hook ---- */

#define CONFIRM_WAIT_MS 120000

static const char CONFIRM_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"approve\":{\"type\":\"boolean\","
    "\"title\":\"Allow this one action\",\"description\":\"Nothing is remembered: the "
    "next such action asks again.\"}},\"required\":[\"approve\"]}";

/* The agent's takeover is a mode switch, not an action (review F7). */
static const char TAKEOVER_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"approve\":{\"type\":\"boolean\","
    "\"title\":\"A person takes over the browser now\",\"description\":\"Say yes only if "
    "you are at the browser: while you have control cdpgate does not judge the page's "
    "requests.\"}},\"required\":[\"approve\"]}";

/* The gate's message for the human (gate_prompt_message: its verdict
 * first, page text escaped after a separator); new, NULL when the request
 * has none (then nothing is asked: a deny). */
static char *confirm_message(const char *prompt, bool *takeover)
{
    json_doc *d = json_parse(prompt, strlen(prompt), NULL, NULL);
    const char *m = json_get_str(d ? json_doc_root(d) : NULL, "message");
    const char *cls = json_get_str(d ? json_doc_root(d) : NULL, "class");
    *takeover = cls && strcmp(cls, "takeover") == 0;
    char *out = m ? strdup(m) : NULL;
    json_doc_free(d);
    return out;
}

static int confirm_elicit(serve *S, const char *prompt, char *why, size_t cap)
{
    bool takeover = false;
    char *msg = confirm_message(prompt, &takeover);
    if (!msg || mcp_elicit_begin(S->call, msg, takeover ? TAKEOVER_SCHEMA : CONFIRM_SCHEMA)) {
        free(msg);
        snprintf(why, cap, "could not ask the client");
        return GATE_DENY;
    }
    free(msg);
    long long deadline = base_now_ns() / 1000000 + CONFIRM_WAIT_MS;
    for (;;) {
        on_poll(S);
        char *res = NULL;
        int st = mcp_elicit_poll(S->srv, &res);
        if (st == 1) {
            json_doc *d = json_parse(res, strlen(res), NULL, NULL);
            const json_val *r = d ? json_doc_root(d) : NULL;
            const char *action = json_get_str(r, "action");
            bool ok = action && strcmp(action, "accept") == 0 &&
                      json_is(json_get(json_get(r, "content"), "approve"), JSON_TRUE);
            snprintf(why, cap, "%s", ok ? "allowed by the user"
                     : action && strcmp(action, "accept") == 0 ? "not approved by the user"
                     : action && strcmp(action, "decline") == 0 ? "declined by the user"
                     : action && strcmp(action, "cancel") == 0 ? "cancelled by the user"
                     : "the client's answer was not understood");
            json_doc_free(d);
            free(res);
            return ok ? GATE_ALLOW : GATE_DENY;
        }
        if (st < 0) {
            snprintf(why, cap, "the client answered the confirmation with an error");
            return GATE_DENY;
        }
        if (S->eof || S->out_dead) {
            snprintf(why, cap, "the client went away before answering");
            return GATE_DENY;
        }
        if (mcp_cancelled(S->call)) {
            snprintf(why, cap, "the request was cancelled while waiting for confirmation");
            return GATE_DENY;
        }
        long long left = deadline - base_now_ns() / 1000000;
        if (left <= 0) {
            snprintf(why, cap, "no answer to the confirmation within %d s",
                     CONFIRM_WAIT_MS / 1000);
            return GATE_DENY;
        }
        read_input(S, left > 250 ? 250 : (int)left);
    }
}

/* While the --confirm program runs: read the control channel (a takeover
 * calls the question off) and answer the page's paused requests. */
static bool confirm_tick(void *ud)
{
    serve *S = ud;
    control_step(S);
    cdp_conn *bc = S->b ? cdp_browser_conn(S->b) : NULL;
    if (bc && !cdp_conn_dead(bc)) {
        cdp_err pe;
        cdp_pump(bc, 0, &pe);
    }
    return gate_epoch(S->gate) != S->confirm_epoch;
}

/* Elicitation when the client can, else --confirm CMD, else deny. */
static int confirm_hook(void *ud, const char *prompt, char *why, size_t cap)
{
    serve *S = ud;
    if (S->call && mcp_client_can_elicit(S->srv))
        return confirm_elicit(S, prompt, why, cap);
    if (S->o->confirm) {
        S->confirm_epoch = gate_epoch(S->gate);
        return cli_confirm_program_tick(S->o->confirm, prompt, CONFIRM_WAIT_MS, confirm_tick,
                                        S, why, cap);
    }
    snprintf(why, cap, "no way to ask the human: the client does not support elicitation "
             "and no --confirm program is set");
    return GATE_DENY;
}

/* ---- tools ---- */

static void drop_browser(serve *S)
{
    cli_evid_detach(&S->ev);
    snap_agent_free(S->agent);
    S->agent = NULL;
    cdp_browser_free(S->b);
    S->b = NULL;
}

/* Why the browser is gone, for the model: the cause without the tail of
 * the browser's stderr (that goes to our stderr). */
static void gone_reason(serve *S, char *out, size_t cap)
{
    cdp_conn *c = cdp_browser_conn(S->b);
    const char *death = cdp_browser_death(S->b);
    if (*death)
        fprintf(stderr, "cdpgate mcp: browser: %s\n", death);
    const char *why = *death ? death : cdp_conn_error(c);
    const char *cut = strstr(why, "; its stderr");
    int n = cut ? (int)(cut - why) : (int)strlen(why);
    snprintf(out, cap, "%.*s", n, why);
}

static int start_browser(serve *S, char *why, size_t cap)
{
    cdp_err e = {0};
    long long t0 = base_now_ns();
    S->b = cli_browser_open(S->o, &e);
    if (!S->b) {
        snprintf(why, cap, "cannot start the browser: %s", e.msg);
        return -1;
    }
    snap_opts so = {0};
    so.timeout_ms = S->o->timeout_ms;
    so.timing = S->o->timing;
    so.ax_tree = S->o->ax_tree;
    so.vault = S->v;
    so.gate = S->gate;
    cli_evid_opts(&S->ev, &so);
    S->agent = snap_agent_new(S->b, &so, &e);
    if (!S->agent) {
        snprintf(why, cap, "cannot attach to the browser: %s", e.msg);
        drop_browser(S);
        return -1;
    }
    cli_evid_attach(&S->ev, S->b, S->agent);
    fprintf(stderr, "cdpgate mcp: %s over the %s, ready in %.0f ms\n",
            cdp_browser_product(S->b), cdp_conn_transport(cdp_browser_conn(S->b)),
            (base_now_ns() - t0) / 1e6);
    return 0;
}

/* Append a line to out->text (best effort). */
static void append_text(mcp_result *out, const char *more)
{
    size_t a = out->text ? strlen(out->text) : 0, b = strlen(more);
    char *t = realloc(out->text, a + b + 2);
    if (!t)
        return;
    if (a)
        t[a++] = '\n';
    memcpy(t + a, more, b + 1);
    out->text = t;
}

/* True when url is a javascript: URL as the browser's URL parser reads it
 * (leading C0 controls and spaces dropped, tabs and newlines removed
 * anywhere, scheme case-insensitive). Navigating to one runs the model's
 * script in the current page, with that page's origin and session. */
static bool javascript_url(const char *url)
{
    static const char JS[] = "javascript:";
    const unsigned char *p = (const unsigned char *)url;
    while (*p && *p <= 0x20)
        p++;
    size_t k = 0;
    for (; *p && k < sizeof JS - 1; p++) {
        if (*p == '\t' || *p == '\n' || *p == '\r')
            continue;
        unsigned char c = *p >= 'A' && *p <= 'Z' ? (unsigned char)(*p + 32) : *p;
        if (c != (unsigned char)JS[k])
            return false;
        k++;
    }
    return k == sizeof JS - 1;
}

/* browser_screenshot: capped at MCP_SHOT_MAX_BYTES (a tool result the
 * model can take; base64 adds a third), clipped to a ref or a region. */
#define MCP_SHOT_MAX_BYTES (800u * 1024u)

static int screenshot(snap_agent *g, const mcp_args *a, snap_result *r)
{
    snap_shot_opts o = {0};
    o.full_page = a->full_page;
    o.max_bytes = MCP_SHOT_MAX_BYTES;
    o.ref = a->ref;
    if (a->region) {
        char tail = 0;
        if (sscanf(a->region, "%lf,%lf,%lf,%lf%c", &o.x, &o.y, &o.w, &o.h, &tail) != 4 ||
            !(o.w >= 1 && o.h >= 1 && o.x >= 0 && o.y >= 0 && o.w <= 1e6 && o.h <= 1e6 &&
              o.x <= 1e7 && o.y <= 1e7)) {
            memset(r, 0, sizeof *r);
            r->text = base_strdup("region is x,y,width,height in page CSS px, e.g. 0,1200,800,600 "
                                  "(width and height at least 1)");
            r->structured = base_strdup("{\"ok\":false,\"error\":\"invalid_argument\","
                                        "\"message\":\"region is x,y,width,height\"}");
            return SNAP_EINVAL;
        }
    }
    if (o.ref && a->region) {
        memset(r, 0, sizeof *r);
        r->text = base_strdup("give a ref or a region, not both");
        r->structured = base_strdup("{\"ok\":false,\"error\":\"invalid_argument\","
                                    "\"message\":\"give a ref or a region, not both\"}");
        return SNAP_EINVAL;
    }
    return snap_screenshot_with(g, &o, r);
}

static int call_snap(serve *S, mcp_tool tool, const mcp_args *a, snap_result *r)
{
    snap_agent *g = S->agent;
    switch (tool) {
    case MCP_T_OPEN:
        if (javascript_url(a->url)) {
            memset(r, 0, sizeof *r);
            r->text = base_strdup("browser_open does not run JavaScript: javascript: URLs are "
                                  "refused; open an http(s) URL");
            r->structured = base_strdup("{\"ok\":false,\"error\":\"invalid_argument\","
                                        "\"message\":\"javascript: URLs are refused\"}");
            return SNAP_EINVAL;
        }
        return snap_open(g, a->url, a->new_tab, r);
    case MCP_T_SNAPSHOT: {
        snap_query q = {0};
        q.offset = (size_t)a->offset;
        q.query = a->query;
        q.text = a->text_mode;
        q.text_offset = (size_t)a->text_offset;
        q.from = a->from;
        return snap_observe(g, &q, r);
    }
    case MCP_T_CLICK:
        return a->dbl ? snap_dblclick(g, a->ref, a->obs, r) : snap_click(g, a->ref, a->obs, r);
    case MCP_T_HOVER:
        return snap_hover(g, a->ref, a->obs, r);
    case MCP_T_TYPE:
        return snap_type(g, a->ref, a->text, a->submit, a->obs, r);
    case MCP_T_SELECT:
        return snap_select(g, a->ref, a->values, a->nvalues, a->obs, r);
    case MCP_T_PRESS:
        return snap_press(g, a->key, NULL, r);
    case MCP_T_SCROLL:
        return snap_scroll(g, a->ref, a->direction, r);
    case MCP_T_BACK:
        return snap_history(g, a->forward ? 1 : -1, r);
    case MCP_T_SCREENSHOT:
        return screenshot(g, a, r);
    case MCP_T_TABS:
        return snap_tabs(g, a->action, a->tab, r);
    case MCP_T_DIALOG:
        return snap_dialog(g, a->accept, a->text, r);
    case MCP_T_UPLOAD:
        return snap_upload(g, a->ref, a->path, a->obs, r);
    case MCP_T_EVAL:
        return snap_eval(g, a->expression, r);
    case MCP_T_A11Y:
        cli_a11y_tool(&S->a11y, S->o, g, &S->ev, a->tags, a->include, a->exclude, r);
        return r->code < 0 ? r->code : 0;
    case MCP_T_LOGIN:       /* run_tool handles these */
    case MCP_T_TAKEOVER:
    case MCP_T_READ:
    case MCP_T_RECORD:
    case MCP_T_REPLAY:
    case MCP_T_COUNT:
        break;
    }
    return SNAP_EINVAL;
}

static void run_snap_tool(serve *S, mcp_call *call, mcp_tool tool, const mcp_args *a,
                          mcp_result *out);

/* ---- for the login handoff (cli/mcp_login.c) ---- */

void cli_mcp_append(mcp_result *out, const char *more)
{
    append_text(out, more);
}

int cli_mcp_browser(serve *S, char *why, size_t cap)
{
    return start_browser(S, why, cap);
}

static void live_deliver(serve *S, const char *link, const char *what, const char *said);

void cli_mcp_deliver(serve *S, const char *link, const char *what)
{
    live_deliver(S, link, what, NULL);
}

/* ---- the live view (--live; cli/takeover.c) ---- */

/* The link to the person, out of band: a URL elicitation when the client
 * supports it, else --live-notify, else --confirm's program, else stderr.
 * Never in a tool result, never in the audit. The message: cdpgate's
 * sentence (what: cdpgate's words), what the gate stopped last, then the
 * agent's words (said) quoted and labelled as the agent's (red team s17,
 * R7-10: cli_takeover_message). */
static void live_deliver(serve *S, const char *link, const char *what, const char *said)
{
    char msg[1600];
    cli_takeover_message(msg, sizeof msg, what, said, S->gate, S->o);
    if (S->call && mcp_client_can_elicit_url(S->srv) &&
        mcp_elicit_url_begin(S->call, msg, link) == 0) {
        fprintf(stderr, "cdpgate mcp: live view: the link went to the client (URL "
                "elicitation)\n");
        return;
    }
    cli_takeover_deliver(S->o, "mcp", link, false, msg);
}

/* Serve the live view; when it ended, give control back to the agent and
 * keep the account for the agent's next result. True while it runs. */
static bool live_step(serve *S)
{
    if (!S->tk)
        return false;
    if (cli_takeover_step(S->tk))
        return true;
    const char *how = cli_takeover_handed_back(S->tk) && cli_takeover_seen(S->tk)
                      ? "handed control back from the live view"
                      : cli_takeover_seen(S->tk) ? "lost control: the host moved it"
                      : "never opened the live view (the link expired)";
    if (gate_mode(S->gate) == GATE_MODE_HUMAN)
        gate_set_mode(S->gate, GATE_MODE_AGENT, "person (live view hand-back)");
    bool seen = cli_takeover_seen(S->tk);
    cli_takeover_login lg = {0};
    char *note = cli_takeover_end(S->tk, how, &lg);
    /* The person logged in by hand: one trail step by identity (issue 14,
     * point 2), never what they typed. */
    if (seen && lg.logged_in && *lg.origin)
        cli_rec_takeover(&S->rec, lg.origin, *lg.identity ? lg.identity : NULL);
    S->tk = NULL;
    fprintf(stderr, "cdpgate mcp: live view ended: the person %s; control is with the %s "
            "(epoch %llu)\n", how, gate_mode_name(gate_mode(S->gate)),
            (unsigned long long)gate_epoch(S->gate));
    if (note && S->login_note) {
        size_t a = strlen(S->login_note), b = strlen(note);
        char *t = realloc(S->login_note, a + b + 2);
        if (t) {
            t[a] = '\n';
            memcpy(t + a + 1, note, b + 1);
            S->login_note = t;
        }
        free(note);
    } else if (note) {
        S->login_note = note;
    }
    return false;
}

/* A session the person signs into is saved at the hand-back under the
 * grant's identity (snap_human_handback): the vault is opened for it. */
static void live_vault(serve *S)
{
    const gate_grant *gr = gate_grant_get(S->gate);
    if (S->v || !gr || !gr->nidentities)
        return;
    char err[400] = "";
    S->v = vault_open(NULL, NULL, err, sizeof err);
    if (S->v)
        snap_agent_set_vault(S->agent, S->v);
    else
        fprintf(stderr, "cdpgate mcp: live view: the session vault cannot be opened (%s): "
                "a sign-in during a takeover is not possible\n", err);
}

/* A takeover through the live view: control passes when the person opens
 * the link (cli/takeover.c), which is the sign that a person is at the
 * browser; until then and while they hold it, every tool is refused. */
static void live_begin(serve *S, const char *what, const char *said, mcp_result *out)
{
    char why[700], link[256];
    if (gate_mode(S->gate) != GATE_MODE_AGENT) {
        snprintf(why, sizeof why, "takeover refused: control is not the agent's (%s)",
                 gate_mode_name(gate_mode(S->gate)));
        out->text = base_strdup(why);
        out->is_error = true;
        return;
    }
    if (!S->agent && start_browser(S, why, sizeof why)) {
        out->text = base_strdup(why);
        out->is_error = true;
        return;
    }
    live_vault(S);
    S->tk = cli_takeover_start(S->agent, S->gate, S->o, link,
                               sizeof link, why, sizeof why);
    if (!S->tk) {
        char m[800];
        snprintf(m, sizeof m, "takeover refused: %s. Control stays with the agent.", why);
        out->text = base_strdup(m);
        out->is_error = true;
        return;
    }
    live_deliver(S, link, what, said);
    memset(link, 0, sizeof link);
    fprintf(stderr, "cdpgate mcp: live view: waiting for the person (%s)\n",
            what ? what : "browser_takeover; the agent's words went with the link, quoted");
    snprintf(why, sizeof why, "A person was asked, out of band, to take over the browser in "
             "cdpgate's live view (for: %s). Every tool is refused while the human is in "
             "control; once they hand back, the next result says what changed. Wait, then "
             "take a new snapshot.", what ? what : "browser_takeover; your text went to them "
             "quoted as the agent's words");
    out->text = base_strdup(why);
}

/* The gate's takeover stop (a password, one-time code or CAPTCHA met by
 * the agent's action) under --live: only on an origin the task grant names
 * an identity for (red team s15, R5-5: any other granted page could pose
 * as a bank's sign-in), and there the person signs in in a fresh browser
 * context of its own (snap_human_signin; R5-1: nothing of the agent's
 * untrusted context is ever sealed), or answers in the tab when it is
 * already authenticated; the live view starts as for browser_takeover, the
 * link out of band; the model's result says that the action was not done
 * and that a person was asked, and what for (issue 15, point 2), or why
 * nobody was. */
static void live_from_stop(serve *S, mcp_result *out)
{
    char origin[256] = "", url[2048], what[600];
    if (snap_human_url(S->agent, url, sizeof url) == 0)
        snap_url_origin(url, origin, sizeof origin);
    snprintf(what, sizeof what, "a password, one-time code or CAPTCHA%s%s stopped the agent "
             "(cdpgate never enters them: the person does)", *origin ? " at " : "", origin);
    mcp_result lr;
    memset(&lr, 0, sizeof lr);
    snap_result sr;
    bool fresh = false;
    if (gate_mode(S->gate) == GATE_MODE_AGENT) {
        live_vault(S);
        if (snap_human_signin(S->agent, &fresh, &sr) != 0) {
            append_text(out, sr.text ? sr.text : "no person was asked");
            snap_result_free(&sr);
            return;
        }
        snap_result_free(&sr);
    }
    live_begin(S, what, NULL, &lr);
    if (lr.is_error && fresh) {
        snap_handback h;        /* the sign-in's context closed, nothing saved */
        snap_human_handback(S->agent, false, &h);
    }
    if (lr.is_error) {
        append_text(out, lr.text ? lr.text : "the live view did not start");
    } else {
        free(out->text);
        out->text = base_strdup("The action was not done: it needs a person (the gate's "
                                "human_takeover stop).");
        append_text(out, lr.text ? lr.text : "");
        if (fresh)
            append_text(out, "The person signs in in a new tab of a browser context of its "
                        "own (nothing of the agent's tabs goes with it); after the hand-back "
                        "the agent goes on in that session, at the service's root page.");
    }
    free(lr.text);
}

/* browser_takeover: control goes to the human only when a person at the
 * browser confirms it (gate_takeover asks through confirm_hook), and never
 * for a headless browser cdpgate launched unless the host passed
 * --takeover-headless (issue 11, point 15b(a)). */
static int take_over_settle(void *ud)
{
    serve *S = ud;
    return S->agent ? snap_handover(S->agent) : 0;
}

static void take_over(serve *S, const mcp_args *a, mcp_result *out)
{
    char why[700];
    if (S->o->live) {
        live_begin(S, NULL, a->text, out);
        return;
    }
    gate_takeover_req t = {0};
    t.said = a->text;
    t.no_window = !S->o->connect && !S->o->headed && !S->o->takeover_headless;
    t.settle = take_over_settle;
    t.settle_ud = S;
    gate_decision d;
    gate_takeover(S->gate, &t, &d);
    bool ok = d.decision == GATE_ALLOW;
    /* What the page sent while the agent had control and still waits for
     * the human: refused now (stale), not left paused for the human's. */
    if (ok && S->agent)
        snap_idle(S->agent);
    uint64_t e = gate_epoch(S->gate);
    /* The model's words, escaped for the operator's terminal: no
     * control sequence, no line of cdpgate's own, no bidi reordering. */
    char said[1200] = "";
    if (a->text && gate_text_escape(said, sizeof said - 12, a->text, strlen(a->text), 0) >=
                       sizeof said - 12)
        memcpy(said + strlen(said), " (... cut)", 11);
    if (ok)
        fprintf(stderr, "cdpgate mcp: the agent handed control to the human (epoch %llu)",
                (unsigned long long)e);
    else
        fprintf(stderr, "cdpgate mcp: the agent asked to hand control to the human: refused "
                "(%s)", d.reason);
    fprintf(stderr, "%s%s%s\n", a->text ? ": \"" : "", said, a->text ? "\"" : "");
    if (ok)
        snprintf(why, sizeof why, "Control is with the human now (epoch %llu). Every tool is "
                 "refused until the human gives control back; then take a new snapshot.",
                 (unsigned long long)e);
    else
        snprintf(why, sizeof why, "browser_takeover refused: %s. Control stays with the agent "
                 "(epoch %llu). Tell the user what they should do in the browser instead.",
                 d.reason, (unsigned long long)e);
    out->text = base_strdup(why);
    out->is_error = !ok;
}

static void run_tool(void *ud, mcp_call *call, mcp_tool tool, const mcp_args *a,
                     mcp_result *out)
{
    serve *S = ud;
    char why[700];
    S->gen++;
    S->call = call;
    control_step(S);
    /* While the live view waits for the person or they hold control: the
     * lock (issue 15, point 4). */
    if (live_step(S)) {
        out->text = base_strdup("the human is in control (live view): every tool is refused "
                                "until the person hands control back. Try again later.");
        out->is_error = true;
        return;
    }
    /* While the human logs in, the agent is blocked: every tool is refused. */
    if (cli_mcp_login_step(S)) {
        snprintf(why, sizeof why, "waiting for the human to finish logging in at %s; "
                 "every tool is refused until then. Try again later.",
                 snap_login_origin(S->la));
        out->text = base_strdup(why);
        out->is_error = true;
        return;
    }
    char *note = S->login_note;
    S->login_note = NULL;
    if (tool == MCP_T_TAKEOVER) {
        take_over(S, a, out);
        if (note)
            append_text(out, note);
        free(note);
        return;
    }
    if (tool == MCP_T_RECORD) {
        cli_rec_tool(&S->rec, S->agent, a, out);
        if (note)
            append_text(out, note);
        free(note);
        return;
    }
    if (tool == MCP_T_LOGIN) {
        cli_mcp_login_start(S, a, out);
        if (note)
            append_text(out, note);
        free(note);
        return;
    }
    run_snap_tool(S, call, tool, a, out);
    if (note)
        append_text(out, note);
    free(note);
}

static void run_snap_tool(serve *S, mcp_call *call, mcp_tool tool, const mcp_args *a,
                          mcp_result *out)
{
    char why[700];
    bool nav = tool == MCP_T_OPEN || tool == MCP_T_BACK;
    /* A browser that died since the last call is noticed now, not in the
     * middle of an action: say so, and start a new one. */
    char died[700] = "";
    if (S->agent) {
        cdp_err pe;
        cdp_conn *c = cdp_browser_conn(S->b);
        cdp_pump(c, 0, &pe);
        if (cdp_conn_dead(c)) {
            char reason[300];
            gone_reason(S, reason, sizeof reason);
            snprintf(died, sizeof died, "The browser had died (%s); a new one was started: "
                     "its tabs and refs are gone.", reason);
            fprintf(stderr, "cdpgate mcp: %s\n", died);
            drop_browser(S);
        }
    }
    double step = 0, total = (S->agent ? 0 : 1) + (nav ? 1 : 0);
    if (!S->agent) {
        mcp_progress(call, step++, total, "starting the browser");
        if (start_browser(S, why, sizeof why)) {
            fprintf(stderr, "cdpgate mcp: %s\n", why);
            out->text = base_strdup(why);
            out->is_error = true;
            return;
        }
    }
    if (*died && tool != MCP_T_OPEN && tool != MCP_T_REPLAY) {
        snprintf(why, sizeof why, "%s Open a page with browser_open.", died);
        out->text = base_strdup(why);
        out->is_error = true;
        return;
    }
    if (mcp_cancelled(call))
        return;
    if (nav)
        mcp_progress(call, step++, total, tool == MCP_T_OPEN ? "loading the page"
                                                            : "going through history");
    if (tool == MCP_T_READ) {
        cli_rec_read(&S->rec, S->agent, a, out);
        return;
    }
    if (tool == MCP_T_REPLAY) {
        cli_rec_before(&S->rec, S->agent, NULL);
        cli_replay_tool(&S->rec, S->agent, S->gate, a, out);
        return;
    }
    snap_result r;
    memset(&r, 0, sizeof r);
    long long t0 = base_now_ns();
    cli_rec_before(&S->rec, S->agent, a->ref);
    cli_evid_before(&S->ev, S->agent);
    int rc = call_snap(S, tool, a, &r);
    char rnote[700] = "";
    if (rc == 0)
        cli_rec_after(&S->rec, S->agent, tool, a, r.structured, rnote, sizeof rnote);
    cli_evid_after(&S->ev, S->agent, tool, a, rc, &r);
    if (S->o->timing)
        fprintf(stderr, "timing: tool=%d rc=%d ms=%.2f\n", (int)tool, rc,
                (base_now_ns() - t0) / 1e6);
    out->text = r.text;
    out->structured = r.structured;
    out->image = r.image;
    out->image_len = r.image_len;
    r.text = r.structured = NULL;
    r.image = NULL;
    snap_result_free(&r);
    out->is_error = rc < 0;
    if (rc < 0 && !out->text)
        out->text = base_strdup(snap_strerror(rc));
    if (rc == SNAP_ETAKEOVER && S->o->live && !S->tk)
        live_from_stop(S, out);
    if (*died)
        append_text(out, died);
    if (*rnote)
        append_text(out, rnote);
    if (cdp_conn_dead(cdp_browser_conn(S->b))) {
        char reason[300];
        gone_reason(S, reason, sizeof reason);
        snprintf(why, sizeof why, "The browser is gone (%s); the next call starts a new "
                 "one, with new tabs and refs.", reason);
        fprintf(stderr, "cdpgate mcp: %s\n", why);
        append_text(out, why);
        out->is_error = true;
        drop_browser(S);
    }
}

/* ---- the loop ---- */

int cli_mcp(const cli_opts *o, int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: cdpgate [options] mcp\n");
        return EXIT_USAGE;
    }
    serve S;
    memset(&S, 0, sizeof S);
    S.o = o;
    /* A bad grant or an audit log that cannot be opened stops the server
     * at start, before it answers anything. */
    S.gate = cli_gate_open(o, false, "mcp");
    if (!S.gate)
        return EXIT_USAGE;
    gate_set_confirm(S.gate, confirm_hook, &S);
    /* Actions a previous server left without an outcome (it died right
     * after sending them): said once, in the first result, never retried. */
    S.login_note = gate_unknown_outcomes(S.gate);
    if (S.login_note)
        fprintf(stderr, "cdpgate mcp: %s\n", S.login_note);
    S.lines.max = o->max_message ? o->max_message : MCP_DEFAULT_MAX_LINE;
    mcp_opts mo = {0};
    mo.write = on_write;
    mo.poll = on_poll;
    mo.tool = run_tool;
    mo.ud = &S;
    mo.max_line = S.lines.max;
    /* Tools the grant must name are not even listed without it. */
    if (!gate_tool_allowed(S.gate, "upload"))
        mo.hidden |= 1u << MCP_T_UPLOAD;
    if (!gate_tool_allowed(S.gate, "eval"))
        mo.hidden |= 1u << MCP_T_EVAL;
    /* The accessibility scan (issue 16): only when the grant names it. */
    if (!grant_names(S.gate, "a11y_scan"))
        mo.hidden |= 1u << MCP_T_A11Y;
    /* Recording (issue 14): browser_record where the host gave a place
     * for trails and the grant lets the task record. */
    S.rec.dir = o->record_dir;
    S.rec.param_typed = o->param_typed;
    S.rec.task = gate_grant_get(S.gate) ? gate_grant_get(S.gate)->task : NULL;
    if (!o->record_dir || !gate_tool_allowed(S.gate, "record"))
        mo.hidden |= 1u << MCP_T_RECORD;
    if (!o->record_dir || !gate_tool_allowed(S.gate, "replay"))
        mo.hidden |= 1u << MCP_T_REPLAY;
    if (o->record && cli_rec_start(&S.rec, o->record, "mcp") != 0) {
        gate_free(S.gate);
        return EXIT_USAGE;
    }
    if (o->evidence && cli_evid_start(&S.ev, o->evidence, S.gate, "mcp") != 0) {
        cli_rec_stop(&S.rec);
        gate_free(S.gate);
        return EXIT_USAGE;
    }
    S.srv = mcp_server_new(&mo);
    if (!S.srv) {
        fprintf(stderr, "cdpgate mcp: out of memory\n");
        cli_evid_stop(&S.ev, "mcp");
        gate_free(S.gate);
        return EXIT_FAIL;
    }
    S.v = cli_vault_existing("mcp");
    S.done_fd_open = o->login_done_fd >= 0;
    S.control_open = o->control_fd >= 0;
    while (!S.out_dead) {
        qline *q = S.head;
        if (q) {
            S.head = q->next;
            if (!S.head)
                S.tail = NULL;
            if (q->too_long)
                mcp_line_too_long(S.srv);
            else
                mcp_handle_line(S.srv, q->data, q->len);
            free(q);
            continue;
        }
        if (S.eof)
            break;
#if defined(__GLIBC__)
        /* Idle: hand the free pages inside glibc's heap back to the system,
         * so that the next snapshot starts from what is in use only. */
        malloc_trim(0);
#endif
        /* A running login is watched while idle, so it is captured even if
         * the human closes the window before the agent's next call. */
        bool waiting = cli_mcp_login_step(&S);
        read_input(&S, S.tk || S.ltk ? 20 : waiting ? 250 : -1);
        live_step(&S);
        /* No tool runs (a confirmation asked now cannot be an elicitation
         * of a call): the page's requests that wait for the human are
         * asked of the --confirm program, else refused. */
        S.call = NULL;
        if (S.agent)
            snap_idle(S.agent);
    }
    if (S.la && snap_login_active(S.la))
        snap_login_cancel(S.la);
    cli_mcp_login_end(&S);
    cli_takeover_free(S.tk);
    free(S.login_note);
    while (S.head) {
        qline *q = S.head;
        S.head = q->next;
        free(q);
    }
    drop_browser(&S);
    cli_evid_stop(&S.ev, "mcp");
    cli_rec_stop(&S.rec);
    cli_a11y_free(&S.a11y);
    vault_close(S.v);
    mcp_lines_free(&S.lines);
    mcp_server_free(S.srv);
    gate_free(S.gate);
    return EXIT_OK;
}
