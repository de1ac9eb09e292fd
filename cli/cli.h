/*
 * cli.h — the cdpgate command line: option parsing shared by subcommands,
 * the subcommands themselves, and the embedded demo site.
 */
#ifndef CDPGATE_CLI_H
#define CDPGATE_CLI_H

#include "base/base.h"
#include "cdp/cdp.h"

#define CDPGATE_VERSION "0.1.0"

/* Exit codes (documented in --help and docs/cli.md). */
enum {
    EXIT_OK = 0,
    EXIT_FAIL = 1,      /* the task failed: script threw, navigation failed */
    EXIT_USAGE = 2,     /* bad command line */
    EXIT_BROWSER = 3,   /* no browser, launch or attach failed, browser died */
    /* `cdpgate replay` (cli/replay_cmd.c, docs/replay.md "Exit statuses"): */
    EXIT_DIVERGED = 4,  /* the page changed: the divergence says where and why */
    EXIT_REFUSED = 5,   /* the grant or --var lacks what the trail needs: nothing run */
    EXIT_STOPPED = 6,   /* the gate refused or stopped a step */
    EXIT_UNKNOWN = 7,   /* a step's outcome is unknown: not retried */
};

typedef struct {
    const char *browser;
    const char *connect;
    bool use_port;
    bool headed;
    int timeout_ms;
    const char *args[32];
    int nargs;
    bool timing;        /* CDPGATE_TIMING=1: print timestamps on stderr */
    bool ax_tree;       /* CDPGATE_WALKER=0: snapshots from the AX tree only (the walker off) */
    const char *output; /* -o FILE (screenshot) */
    bool full_page;     /* --full-page (screenshot) */
    size_t max_bytes;   /* --max-bytes N (screenshot): cap, downscale/JPEG past it; 0 none */
    size_t max_message; /* --max-message BYTES (mcp); 0 = 4 MiB */
    int login_done_fd;  /* --login-done-fd N (mcp): the host's "the human is done
                           logging in" signal; -1 = none */
    const char *grant;  /* --grant FILE: the task grant (docs/gate.md) */
    const char *audit;  /* --audit FILE: the audit log (overrides the grant's) */
    const char *confirm;/* --confirm CMD: the confirmation program */
    int control_fd;     /* --control-fd N (mcp): the host's control lines
                           "takeover", "pause", "release"; -1 = none */
    const char *record;     /* --record FILE: append each gated action as a trail
                               step (docs/replay.md) */
    const char *record_dir; /* --record-dir DIR (mcp): browser_record's trails */
    bool param_typed;       /* --param-typed: typed texts recorded as {{name}} */
    const char *evidence;   /* --evidence DIR: the session recorded as evidence
                               (docs/evidence.md) */
    bool takeover_headless; /* --takeover-headless (mcp): browser_takeover may hand
                               a headless browser to a person (the host shows the
                               page another way); else refused there */
    /* The accessibility scan (cli/a11y_cmd.c, docs/a11y.md). */
    const char *axe;        /* --axe FILE: axe-core's axe.min.js */
    const char *a11y_tags;  /* --tags LIST (comma-separated) */
    const char *a11y_include[32], *a11y_exclude[32];  /* --include/--exclude SEL */
    size_t a11y_ninclude, a11y_nexclude;
    int a11y_frame_ms;      /* --frame-timeout MS */
    int a11y_cap_ms;        /* --scan-timeout MS */
    const char *a11y_dir;   /* --a11y-dir DIR (mcp): browser_a11y_scan's reports */
    const char *a11y_sweep; /* --sweep TARGETS (a11y): the sweep's targets file */
    int a11y_jobs;          /* --jobs N (a11y --sweep): targets at once; 0 = 2 */
    bool many_contexts;     /* the browser gets a context per task (the sweep's
                               shared browser: cdp_launch_opts.many_contexts) */
    bool live;              /* --live (mcp): a takeover opens the live view (issue 15) */
    const char *live_notify;/* --live-notify PROG: gets the live view's link on stdin */
    int live_ttl_s;         /* --live-ttl SECONDS: the link's lifetime; 0 = 600 */
    const char *live_bind;  /* --live-bind ADDR: an IP literal; NULL = 127.0.0.1 */
    const char *live_host;  /* --live-host NAME: the host the link names */
    bool live_insecure;     /* --live-insecure: ADDR beyond loopback, clear text */
} cli_opts;

/* Launch or attach according to opts; prints the error and returns NULL. */
cdp_browser *cli_browser(const cli_opts *o, const char *cmd);
/* The same, silent: the error goes to *err. */
cdp_browser *cli_browser_open(const cli_opts *o, cdp_err *err);

int cli_doctor(const cli_opts *o, int argc, char **argv);
int cli_eval(const cli_opts *o, int argc, char **argv);
int cli_version(const cli_opts *o, int argc, char **argv);
int cli_demo(const cli_opts *o, int argc, char **argv);
int cli_snapshot(const cli_opts *o, int argc, char **argv);
int cli_screenshot(const cli_opts *o, int argc, char **argv);
/* `cdpgate replay TRAIL [--var k=v]...` (cli/replay_cmd.c): argv[0] is
 * "replay"; it parses its own options after it. */
int cli_replay(const cli_opts *o, int argc, char **argv);
/* `cdpgate evidence verify DIR` (cli/evidence_cmd.c, docs/evidence.md). */
int cli_evidence(const cli_opts *o, int argc, char **argv);
/* `cdpgate a11y URL... -o DIR` (cli/a11y_cmd.c): an accessibility scan of
 * each URL, reports into DIR. */
int cli_a11y(const cli_opts *o, int argc, char **argv);
/* `cdpgate mcp`: the MCP server on stdin/stdout (cli/mcp_serve.c). */
int cli_mcp(const cli_opts *o, int argc, char **argv);

/* The embedded demo site: serve it on 127.0.0.1 in a child process.
 * Returns the port (> 0) and the child's pid, or -1. */
int cli_site_start(pid_t *pid);
void cli_site_stop(pid_t pid);

/* ---- `cdpgate vault` (cli/vault_cmd.c, origins and the state format in
 * cli/vault_state.c; docs/vault.md "Commands") ---- */
/* argv[0] is "vault"; the vault commands parse their own options. */
int cli_vault(const cli_opts *o, int argc, char **argv);
/* Canonical origin of a URL or origin (url/url.h: lower-case
 * scheme://host[:port] as the browser writes it, default port dropped,
 * path ignored; http and https only; user:pass@ refused): the key sessions
 * are stored under. 0, or -1 when url is none. */
int cli_vault_origin(const char *url, char *out, size_t cap);
/* Validate len bytes as session state format v1 (docs/vault.md). 0, or -1
 * with a reason in err that names fields, never values. */
int cli_session_check(const char *buf, size_t len, char *err, size_t errlen);

/* ---- `cdpgate login` and sessions (cli/login.c) ---- */
struct vault;
int cli_login(const cli_opts *o, int argc, char **argv);
/* True when a visible window can be shown: $DISPLAY or $WAYLAND_DISPLAY. */
bool cli_has_display(void);
/* The session vault when its directory exists already (so a plain snapshot
 * never creates a key); NULL otherwise, or with a warning on stderr naming
 * cmd when it cannot be opened. Close with vault_close. */
struct vault *cli_vault_existing(const char *cmd);

/* ---- the gate (cli/policy.c) ---- */
struct gate;
/* The gate for a command: --grant, --audit, and the confirmation hook
 * (--confirm CMD, else the TTY prompt when interactive and stderr is a
 * terminal, else none: every confirm is a deny). Prints the error naming
 * cmd and returns NULL on a bad grant or an audit log that cannot be
 * opened. Free with gate_free. */
struct gate *cli_gate_open(const cli_opts *o, bool interactive, const char *cmd);
/* Run the confirmation program cmd with prompt (JSON) on stdin; GATE_ALLOW
 * only for {"decision":"allow"} on stdout within wait_ms and exit 0. */
int cli_confirm_program(const char *cmd, const char *prompt, int wait_ms, char *why,
                        size_t cap);
/* The same, calling tick(tick_ud) about every 100 ms while waiting: when it
 * returns true the program is killed and the answer is a deny. */
int cli_confirm_program_tick(const char *cmd, const char *prompt, int wait_ms,
                             bool (*tick)(void *ud), void *tick_ud, char *why, size_t cap);
/* The same, with env ("NAME=VALUE", or NULL) added to the program's
 * environment (replacing NAME's value): the live view's --live-notify
 * program learns the link's kind (CDPGATE_LIVE_KIND) this way. */
int cli_program_run(const char *cmd, const char *prompt, const char *env, int wait_ms,
                    bool (*tick)(void *ud), void *tick_ud, char *why, size_t cap);
/* `cdpgate policy`: the grant in force, what is enforced, the exclusions. */
int cli_policy(const cli_opts *o, int argc, char **argv);

#endif
