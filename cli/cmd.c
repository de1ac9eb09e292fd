/*
 * cmd.c — the subcommands eval, version, snapshot, screenshot and doctor.
 */
#include "cli/cli.h"
#include "cli/evid.h"
#include "cli/record.h"
#include "base/base.h"
#include "gate/gate.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

cdp_browser *cli_browser_open(const cli_opts *o, cdp_err *err)
{
    if (o->connect)
        return cdp_browser_connect(o->connect, NULL, o->timeout_ms, err);
    cdp_launch_opts lo = {0};
    lo.browser = o->browser;
    lo.use_port = o->use_port;
    lo.headed = o->headed;
    lo.args = o->args;
    lo.many_contexts = o->many_contexts;
    lo.timeout_ms = o->timeout_ms < 20000 ? 20000 : o->timeout_ms;
    return cdp_browser_launch(&lo, err);
}

cdp_browser *cli_browser(const cli_opts *o, const char *cmd)
{
    cdp_err e = {0};
    cdp_browser *b = cli_browser_open(o, &e);
    if (!b) {
        fprintf(stderr, "cdpgate %s: %s\n", cmd, e.msg);
        return NULL;
    }
    if (o->timing)
        fprintf(stderr, "timing: first_response_ns=%lld\n", (long long)base_now_ns());
    return b;
}

/* Report an error of a step, adding the browser's death if that is why. */
static int step_failed(cdp_browser *b, const char *cmd, const cdp_err *e)
{
    const char *death = cdp_browser_death(b);
    if (*death) {
        fprintf(stderr, "cdpgate %s: %s (%s)\n", cmd, e->msg, death);
        return EXIT_BROWSER;
    }
    fprintf(stderr, "cdpgate %s: %s\n", cmd, e->msg);
    if (e->code == CDP_EDISCONNECTED)
        return EXIT_BROWSER;
    return EXIT_FAIL;
}

/* What open_url sets up for a command; close_url frees it. */
typedef struct {
    cdp_browser *b;
    snap_agent *a;
    vault *v;
    gate *g;
    cli_evid ev;            /* --evidence (cli/evid.c) */
    const char *cmd;
} opened;

static int open_url(const cli_opts *o, const char *cmd, const char *url, opened *u);

/* Free what open_url set up (what it did not is NULL). */
static void close_url(opened *u)
{
    cli_evid_stop(&u->ev, u->cmd);
    snap_agent_free(u->a);
    gate_free(u->g);
    cdp_browser_free(u->b);
    vault_close(u->v);
}

/* A snapshot/ call of cmd failed with code (r's text says why): print it;
 * the exit code says whether the browser is gone. */
static int snap_failed(const opened *u, const char *cmd, const snap_result *r, int code)
{
    fprintf(stderr, "cdpgate %s: %s\n", cmd, r->text ? r->text : snap_strerror(code));
    return cdp_conn_dead(cdp_browser_conn(u->b)) ? EXIT_BROWSER : EXIT_FAIL;
}

/* `eval` under --grant: the expression runs as the agent's would, through
 * the gate (the grant must name "eval" and the URL's origin), and the human
 * confirms it at the terminal (or through --confirm). */
static int eval_gated(const cli_opts *o, const char *url, const char *expr)
{
    opened u;
    int rc = open_url(o, "eval", url, &u);
    if (rc == 0) {
        snap_result r;
        memset(&r, 0, sizeof r);
        cli_evid_before(&u.ev, u.a);
        int er = snap_eval(u.a, expr, &r);
        mcp_args ma = {0};
        ma.expression = expr;
        cli_evid_after(&u.ev, u.a, MCP_T_EVAL, &ma, er, &r);
        json_doc *d = er == 0 && r.structured
                          ? json_parse(r.structured, strlen(r.structured), NULL, NULL) : NULL;
        const json_val *val = d ? json_get(json_doc_root(d), "value") : NULL;
        char *js = val ? json_write(val, NULL) : NULL;
        if (js) {
            printf("%s\n", js);
        } else {
            rc = snap_failed(&u, "eval", &r, er);
        }
        free(js);
        json_doc_free(d);
        snap_result_free(&r);
    }
    close_url(&u);
    return rc;
}

int cli_eval(const cli_opts *o, int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cdpgate eval URL EXPR\n");
        return EXIT_USAGE;
    }
    const char *url = argv[1], *expr = argv[2];
    if (o->grant)
        return eval_gated(o, url, expr);
    if (o->evidence) {
        /* Without a grant, eval is a plain DevTools evaluate: no agent, no
         * gate, nothing to record through (docs/evidence.md). */
        fprintf(stderr, "cdpgate eval: --evidence needs --grant (the grant must name the "
                "eval tool): without one, eval runs outside the agent and its gate\n");
        return EXIT_USAGE;
    }
    cdp_browser *b = cli_browser(o, "eval");
    if (!b)
        return EXIT_BROWSER;
    cdp_err e = {0};
    int rc = EXIT_OK;
    char *out = NULL;
    cdp_page *p = cdp_page_open(b, o->timeout_ms, &e);
    if (!p) {
        rc = step_failed(b, "eval", &e);
        goto done;
    }
    if (cdp_page_navigate(p, url, o->timeout_ms, &e)) {
        rc = step_failed(b, "eval", &e);
        goto done;
    }
    if (cdp_page_eval(p, expr, o->timeout_ms, &out, &e)) {
        if (e.code == CDP_EEVAL) {
            fprintf(stderr, "cdpgate eval: the expression threw: %s\n", e.msg);
            rc = EXIT_FAIL;
        } else {
            rc = step_failed(b, "eval", &e);
        }
        goto done;
    }
    printf("%s\n", out);
done:
    free(out);
    cdp_page_free(p);
    cdp_browser_free(b);
    return rc;
}

int cli_version(const cli_opts *o, int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: cdpgate version\n");
        return EXIT_USAGE;
    }
    cdp_browser *b = cli_browser(o, "version");
    if (!b)
        return EXIT_BROWSER;
    cdp_reply r;
    cdp_err e;
    int rc = EXIT_OK;
    if (cdp_call(cdp_browser_conn(b), NULL, "Browser.getVersion", NULL, o->timeout_ms, &r,
                 &e)) {
        rc = step_failed(b, "version", &e);
    } else {
        char *s = json_write(r.result, NULL);
        printf("%s\n", s ? s : "null");
        free(s);
        cdp_reply_free(&r);
    }
    cdp_browser_free(b);
    return rc;
}

/* ---- snapshot and screenshot ---- */

/* Launch, make an agent (restoring stored sessions from the vault, if there
 * is one: u->v, closed after the agent) and open url. On failure prints why
 * and returns the exit code; on success 0 with u->b and u->a set. Either
 * way, close_url(u) afterwards. */
static int open_url(const cli_opts *o, const char *cmd, const char *url, opened *u)
{
    memset(u, 0, sizeof *u);
    u->cmd = cmd;
    u->g = cli_gate_open(o, true, cmd);
    if (!u->g)
        return EXIT_USAGE;
    if (o->evidence && cli_evid_start(&u->ev, o->evidence, u->g, cmd) != 0)
        return EXIT_USAGE;
    /* --record FILE: the command's open is a step of the trail. */
    cli_rec rec = {0};
    rec.param_typed = o->param_typed;
    rec.task = gate_grant_get(u->g) ? gate_grant_get(u->g)->task : NULL;
    if (o->record && cli_rec_start(&rec, o->record, cmd) != 0)
        return EXIT_USAGE;
    u->v = cli_vault_existing(cmd);
    u->b = cli_browser(o, cmd);
    if (!u->b)
        return EXIT_BROWSER;
    cdp_err e = {0};
    snap_opts so = {0};
    so.allow_local = true;  /* the operator's own command line, not a model */
    so.timeout_ms = o->timeout_ms;
    so.timing = o->timing;
    so.ax_tree = o->ax_tree;
    so.vault = u->v;
    so.gate = u->g;
    cli_evid_opts(&u->ev, &so);
    u->a = snap_agent_new(u->b, &so, &e);
    if (!u->a) {
        cli_rec_stop(&rec);
        return step_failed(u->b, cmd, &e);
    }
    cli_evid_attach(&u->ev, u->b, u->a);
    snap_result r;
    memset(&r, 0, sizeof r);
    cli_rec_before(&rec, u->a, NULL);
    cli_evid_before(&u->ev, u->a);
    int rc = snap_open(u->a, url, false, &r);
    mcp_args ma = {0};
    ma.url = url;
    cli_evid_after(&u->ev, u->a, MCP_T_OPEN, &ma, rc < 0 ? rc : 0, &r);
    if (rc < 0) {
        rc = snap_failed(u, cmd, &r, rc);
        snap_result_free(&r);
        cli_rec_stop(&rec);
        return rc;
    }
    char note[700];
    cli_rec_after(&rec, u->a, MCP_T_OPEN, &ma, r.structured, note, sizeof note);
    snap_result_free(&r);
    cli_rec_stop(&rec);
    return note[0] ? EXIT_FAIL : 0;   /* a step asked for and not written */
}

int cli_snapshot(const cli_opts *o, int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cdpgate snapshot URL\n");
        return EXIT_USAGE;
    }
    opened u;
    int rc = open_url(o, "snapshot", argv[1], &u);
    if (rc == 0) {
        snap_result r;
        memset(&r, 0, sizeof r);
        snap_query q = {0};
        int sr = snap_observe(u.a, &q, &r);
        if (sr < 0) {
            rc = snap_failed(&u, "snapshot", &r, sr);
        } else {
            cli_evid_text(&u.ev, "snapshot", r.text ? r.text : "", r.obs);
            fputs(r.text ? r.text : "", stdout);
            if (r.text && *r.text && r.text[strlen(r.text) - 1] != '\n')
                putchar('\n');
        }
        snap_result_free(&r);
    }
    close_url(&u);
    return rc;
}

int cli_screenshot(const cli_opts *o, int argc, char **argv)
{
    if (argc != 2 || !o->output) {
        fprintf(stderr, "usage: cdpgate screenshot URL -o FILE [--full-page] "
                "[--max-bytes N]\n");
        return EXIT_USAGE;
    }
    opened u;
    int rc = open_url(o, "screenshot", argv[1], &u);
    if (rc == 0) {
        snap_result r;
        memset(&r, 0, sizeof r);
        snap_shot_opts so = {0};
        so.full_page = o->full_page;
        so.max_bytes = o->max_bytes;
        int sr = snap_screenshot_with(u.a, &so, &r);
        if (sr < 0 || !r.image) {
            rc = snap_failed(&u, "screenshot", &r, sr < 0 ? sr : SNAP_EBROWSER);
        } else {
            cli_evid_image(&u.ev, r.image, r.image_len, "the screenshot command's image");
            int fd = open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0 || base_write_all(fd, r.image, r.image_len, BASE_NO_DEADLINE, 0, NULL) ||
                close(fd) != 0) {
                fprintf(stderr, "cdpgate screenshot: cannot write %s: %s\n", o->output,
                        strerror(errno));
                rc = EXIT_FAIL;
            } else {
                printf("%s: %zu bytes, %s\n", o->output, r.image_len,
                       r.image_len > 2 && r.image[0] == 0xff && r.image[1] == 0xd8 ? "JPEG"
                                                                                  : "PNG");
            }
        }
        snap_result_free(&r);
    }
    close_url(&u);
    return rc;
}

/* ---- doctor ---- */

typedef struct {
    int ok, failed;
} tally;

static void report(tally *t, bool ok, const char *what, const char *detail)
{
    printf("  [%s] %s%s%s\n", ok ? " ok " : "FAIL", what, detail && *detail ? ": " : "",
           detail ? detail : "");
    if (ok)
        t->ok++;
    else
        t->failed++;
}

/* Open a page on b, evaluate 6*7 on a data: URL and check the answer. */
static void check_page(tally *t, cdp_browser *b, const char *label, int timeout_ms)
{
    cdp_err e = {0};
    char what[128], detail[600];
    snprintf(what, sizeof what, "%s: open a page, navigate, evaluate", label);
    long long t0 = base_now_ns();
    cdp_page *p = cdp_page_open(b, timeout_ms, &e);
    char *out = NULL;
    if (p && cdp_page_navigate(p, "data:text/html,<title>doctor</title><p>ok</p>", timeout_ms,
                               &e) == 0 &&
        cdp_page_eval(p, "document.title + ':' + 6*7", timeout_ms, &out, &e) == 0) {
        bool good = strcmp(out, "\"doctor:42\"") == 0;
        snprintf(detail, sizeof detail, "%s in %.1f ms%s", out, (base_now_ns() - t0) / 1e6,
                 cdp_page_adopted(p) ? " (adopted an existing page)" : "");
        report(t, good, what, detail);
    } else {
        report(t, false, what, e.msg);
    }
    free(out);
    cdp_page_free(p);
}

int cli_doctor(const cli_opts *o, int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: cdpgate doctor\n");
        return EXIT_USAGE;
    }
    tally t = {0, 0};
    char detail[1200];
    cdp_err e = {0};
    printf("cdpgate %s doctor\n", CDPGATE_VERSION);
    if (o->connect) {
        long long t0 = base_now_ns();
        cdp_browser *b = cdp_browser_connect(o->connect, NULL, o->timeout_ms, &e);
        if (b) {
            snprintf(detail, sizeof detail, "%s in %.1f ms", cdp_browser_product(b),
                     (base_now_ns() - t0) / 1e6);
            report(&t, true, "attach", detail);
            check_page(&t, b, "attach", o->timeout_ms);
            cdp_browser_free(b);
        } else {
            report(&t, false, "attach", e.msg);
        }
        printf("%d ok, %d failed\n", t.ok, t.failed);
        return t.failed ? EXIT_BROWSER : EXIT_OK;
    }
    char path[1024];
    if (cdp_browser_find(o->browser, path, sizeof path, &e)) {
        report(&t, false, "find the browser", e.msg);
        printf("%d ok, %d failed\n", t.ok, t.failed);
        return EXIT_BROWSER;
    }
    report(&t, true, "find the browser", path);
    if (geteuid() == 0)
        printf("  [info] running as root: the browser gets --no-sandbox\n");

    cdp_launch_opts lo = {0};
    lo.browser = path;
    lo.headed = o->headed;
    lo.args = o->args;
    lo.many_contexts = o->many_contexts;
    lo.timeout_ms = o->timeout_ms < 20000 ? 20000 : o->timeout_ms;

    /* 1. pipe */
    long long t0 = base_now_ns();
    cdp_browser *b = cdp_browser_launch(&lo, &e);
    if (b) {
        snprintf(detail, sizeof detail, "%s, ready in %.0f ms", cdp_browser_product(b),
                 (base_now_ns() - t0) / 1e6);
        report(&t, true, "launch over the pipe (--remote-debugging-pipe)", detail);
        check_page(&t, b, "pipe", o->timeout_ms);
        cdp_browser_free(b);
    } else {
        report(&t, false, "launch over the pipe (--remote-debugging-pipe)", e.msg);
    }

    /* 2. port, then 3. attach to that browser through http:// and ws:// */
    lo.use_port = true;
    t0 = base_now_ns();
    b = cdp_browser_launch(&lo, &e);
    if (b) {
        snprintf(detail, sizeof detail, "%s at %s, ready in %.0f ms", cdp_browser_product(b),
                 cdp_browser_ws_url(b), (base_now_ns() - t0) / 1e6);
        report(&t, true, "launch over a port (--remote-debugging-port=0)", detail);
        check_page(&t, b, "port", o->timeout_ms);
        /* The same browser, attached as a second client. */
        char http[600];
        const char *ws = cdp_browser_ws_url(b);
        const char *hp = strstr(ws, "://");
        const char *slash = hp ? strchr(hp + 3, '/') : NULL;
        if (hp && slash) {
            snprintf(http, sizeof http, "http://%.*s", (int)(slash - hp - 3), hp + 3);
            cdp_browser *a = cdp_browser_connect(http, NULL, o->timeout_ms, &e);
            if (a) {
                snprintf(detail, sizeof detail, "%s resolved through /json/version", http);
                report(&t, true, "attach with --connect http://", detail);
                check_page(&t, a, "attach", o->timeout_ms);
                cdp_browser_free(a);
            } else {
                report(&t, false, "attach with --connect http://", e.msg);
            }
            a = cdp_browser_connect(ws, NULL, o->timeout_ms, &e);
            report(&t, a != NULL, "attach with --connect ws://", a ? ws : e.msg);
            cdp_browser_free(a);
        }
        cdp_browser_free(b);
    } else {
        report(&t, false, "launch over a port (--remote-debugging-port=0)", e.msg);
    }
#if defined(CDPGATE_OPENSSL)
    printf("  [info] built with OpenSSL: wss:// is available\n");
#else
    printf("  [info] built without OpenSSL: wss:// needs `make OPENSSL=1`\n");
#endif
    printf("%d ok, %d failed\n", t.ok, t.failed);
    return t.failed ? EXIT_BROWSER : EXIT_OK;
}
