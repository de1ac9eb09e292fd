/*
 * mcp_int.h — what cli/mcp_serve.c (the MCP server's loop and tools) shares
 * with cli/mcp_login.c (browser_login, the login handoff): the server's
 * state and a few of its helpers. Internal to cli/.
 */
#ifndef CDPGATE_CLI_MCP_INT_H
#define CDPGATE_CLI_MCP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/a11y_cmd.h"
#include "cli/cli.h"
#include "cli/evid.h"
#include "cli/mcp.h"
#include "cli/record.h"
#include "cli/takeover.h"
#include "gate/gate.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"

struct qline;

typedef struct cli_mcp_serve {
    const cli_opts *o;
    mcp_server *srv;
    mcp_lines lines;
    struct qline *head, *tail;
    bool eof;
    bool out_dead;          /* stdout closed: stop */
    unsigned gen;           /* counts tool calls */
    cdp_browser *b;
    snap_agent *agent;
    /* login handoff */
    vault *v;               /* the session store, or NULL */
    cdp_browser *lb;        /* the headed login browser (NULL with --connect) */
    snap_agent *la;         /* the login's agent (S->agent with --connect) */
    char *login_note;       /* how the last login ended, for the next result */
    bool done_fd_open;
    gate *gate;             /* the policy gate (--grant, --audit, --confirm) */
    mcp_call *call;         /* the tool call running now (for elicitation) */
    bool control_open;      /* --control-fd still readable */
    uint64_t confirm_epoch; /* the epoch a --confirm question was asked at */
    char control[128];      /* a partial control line */
    size_t ncontrol;
    cli_rec rec;            /* recording (cli/record.c) */
    cli_evid ev;            /* --evidence (cli/evid.c) */
    cli_a11y_state a11y;    /* browser_a11y_scan (cli/a11y_cmd.c) */
    cli_takeover *tk;       /* the live view while a takeover runs (--live) */
    cli_takeover *ltk;      /* the live view of a login's headless browser (no display) */
    int64_t lpoll_ms;       /* when that login was last polled */
} cli_mcp_serve;

/* mcp_serve.c: append a line to out->text (best effort); start the
 * agent's browser (0, or why filled); deliver the live view's link to the
 * person out of band (a URL elicitation, --live-notify, --confirm's
 * program, stderr), never in a result. */
void cli_mcp_append(mcp_result *out, const char *more);
int cli_mcp_browser(cli_mcp_serve *S, char *why, size_t cap);
void cli_mcp_deliver(cli_mcp_serve *S, const char *link, const char *what);

/* mcp_login.c: browser_login. Start a login (the result into out); advance
 * a running one (true while it waits for the human: every other tool is
 * refused then); close its browser, agent and live view. */
void cli_mcp_login_start(cli_mcp_serve *S, const mcp_args *a, mcp_result *out);
bool cli_mcp_login_step(cli_mcp_serve *S);
void cli_mcp_login_end(cli_mcp_serve *S);

#endif
