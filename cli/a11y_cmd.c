/*
 * a11y_cmd.c — `cdpgate a11y URL... -o DIR`: an accessibility scan of each
 * URL (a11y/a11y.h), one after the other in one browser, each page opened
 * as `cdpgate snapshot` opens it (the gate on --grant, sessions from the
 * vault), and browser_a11y_scan's part of `cdpgate mcp` (cli_a11y_tool).
 * A URL that fails is said on stderr and the others go on; the exit code
 * is then 1. With --sweep TARGETS, cli/sweep.c runs the targets instead.
 */
#include "cli/cli.h"
#include "cli/a11y_cmd.h"

#include "a11y/a11y.h"
#include "base/base.h"
#include "gate/gate.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The scan's options from the command line. */
a11y_opts cli_a11y_opts(const cli_opts *o, const char *dir, const char *stem)
{
    a11y_opts ao = {0};
    ao.tags = o->a11y_tags;
    ao.include = o->a11y_include;
    ao.ninclude = o->a11y_ninclude;
    ao.exclude = o->a11y_exclude;
    ao.nexclude = o->a11y_nexclude;
    ao.frame_ms = o->a11y_frame_ms;
    ao.cap_ms = o->a11y_cap_ms;
    ao.dir = dir;
    ao.stem = stem;
    return ao;
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0700) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    }
    fprintf(stderr, "cdpgate a11y: cannot make the directory %s: %s\n", dir,
            strerror(errno ? errno : ENOTDIR));
    return -1;
}

/* Open url in a and scan it (with ev recording, the open is an action
 * record and the scan an a11y record); prints the summary. 0, or
 * EXIT_FAIL. */
static int scan_one(const cli_opts *o, snap_agent *a, cli_evid *ev, const a11y_axe *ax,
                    const char *url, const char *stem)
{
    snap_result r;
    memset(&r, 0, sizeof r);
    cli_evid_before(ev, a);
    int64_t t0 = base_now_ms();
    int rc = snap_open(a, url, false, &r);
    if (o->timing)
        fprintf(stderr, "timing: a11y open_ms=%lld\n", (long long)(base_now_ms() - t0));
    mcp_args ma = {0};
    ma.url = url;
    cli_evid_after(ev, a, MCP_T_OPEN, &ma, rc < 0 ? rc : 0, &r);
    if (rc < 0) {
        fprintf(stderr, "cdpgate a11y: %s: %s\n", url, r.text ? r.text : snap_strerror(rc));
        snap_result_free(&r);
        return EXIT_FAIL;
    }
    snap_result_free(&r);
    a11y_opts ao = cli_a11y_opts(o, o->output, stem);
    ao.keep = ev->e != NULL;
    ao.axe = ax;
    a11y_report rep;
    rc = a11y_scan(a, ax->src, ax->len, &ao, &rep, &r);
    if (rc < 0) {
        fprintf(stderr, "cdpgate a11y: %s: %s\n", url, r.text ? r.text : snap_strerror(rc));
        snap_result_free(&r);
        return EXIT_FAIL;
    }
    cli_evid_a11y(ev, &rep);
    if (o->timing)      /* bench/a11y_bench.mjs reads it */
        fprintf(stderr, "timing: a11y axe_ms=%.1f refs_ms=%.1f crops_ms=%.1f files_ms=%.1f "
                "violations=%zu elements=%zu\n", rep.axe_ms, rep.refs_ms, rep.crops_ms,
                rep.files_ms, rep.violations, rep.elements);
    printf("== %s\n%s", url, rep.text);
    fflush(stdout);
    a11y_report_free(&rep);
    snap_result_free(&r);
    return 0;
}

static int scan_all(const cli_opts *o, gate *g, vault *v, cli_evid *ev, int argc,
                    char **argv, const a11y_axe *ax)
{
    cdp_browser *b = cli_browser(o, "a11y");
    if (!b)
        return EXIT_BROWSER;
    cdp_err e = {0};
    snap_opts so = {0};
    so.allow_local = true;  /* the operator's own command line, not a model */
    so.timeout_ms = o->timeout_ms;
    so.ax_tree = o->ax_tree;
    so.timing = o->timing;
    so.vault = v;
    so.gate = g;
    cli_evid_opts(ev, &so);
    snap_agent *a = snap_agent_new(b, &so, &e);
    if (!a) {
        fprintf(stderr, "cdpgate a11y: %s\n", e.msg);
        cdp_browser_free(b);
        return EXIT_BROWSER;
    }
    cli_evid_attach(ev, b, a);
    int rc = EXIT_OK;
    for (int i = 1; i < argc; i++) {
        char stem[32];
        snprintf(stem, sizeof stem, argc > 2 ? "a11y-%d" : "a11y", i);
        if (scan_one(o, a, ev, ax, argv[i], stem))
            rc = EXIT_FAIL;
        if (cdp_conn_dead(cdp_browser_conn(b))) {
            fprintf(stderr, "cdpgate a11y: the browser died\n");
            rc = EXIT_BROWSER;
            break;
        }
    }
    cli_evid_detach(ev);
    snap_agent_free(a);
    cdp_browser_free(b);
    return rc;
}

int cli_a11y(const cli_opts *o, int argc, char **argv)
{
    if ((o->a11y_sweep ? argc != 1 : argc < 2) || !o->output) {
        fprintf(stderr, "usage: cdpgate a11y URL... -o DIR [--axe FILE] [--tags LIST] "
                "[--include SEL]... [--exclude SEL]... [--frame-timeout MS] "
                "[--scan-timeout MS]\n       cdpgate a11y --sweep TARGETS -o DIR "
                "[--jobs N] [the same options]\n");
        return EXIT_USAGE;
    }
    char why[1200];
    a11y_axe ax;
    if (a11y_axe_load(o->axe, &ax, why, sizeof why)) {
        fprintf(stderr, "cdpgate a11y: %s\n", why);
        return EXIT_FAIL;
    }
    char *tags = NULL;
    if (a11y_tags_json(o->a11y_tags, &tags, why, sizeof why)) {
        fprintf(stderr, "cdpgate a11y: --%s\n", why);
        a11y_axe_free(&ax);
        return EXIT_USAGE;
    }
    free(tags);
    if (make_dir(o->output)) {
        a11y_axe_free(&ax);
        return EXIT_FAIL;
    }
    gate *g = cli_gate_open(o, true, "a11y");
    if (!g) {
        a11y_axe_free(&ax);
        return EXIT_USAGE;
    }
    if (o->a11y_sweep) {        /* cli/sweep.c: each target opens its own */
        gate_free(g);
        int rc = cli_a11y_sweep(o, &ax);
        a11y_axe_free(&ax);
        return rc;
    }
    cli_evid ev;
    memset(&ev, 0, sizeof ev);
    if (o->evidence && cli_evid_start(&ev, o->evidence, g, "a11y") != 0) {
        gate_free(g);
        a11y_axe_free(&ax);
        return EXIT_USAGE;
    }
    vault *v = cli_vault_existing("a11y");
    int rc = scan_all(o, g, v, &ev, argc, argv, &ax);
    cli_evid_stop(&ev, "a11y");
    vault_close(v);
    gate_free(g);
    a11y_axe_free(&ax);
    return rc;
}

/* ---- browser_a11y_scan (cdpgate mcp) ---- */

void cli_a11y_tool(cli_a11y_state *st, const cli_opts *o, snap_agent *a, cli_evid *ev,
                   const char *tags, const char *include, const char *exclude,
                   snap_result *r)
{
    memset(r, 0, sizeof *r);
    char why[1200];
    if (!st->axe.src) {
        if (a11y_axe_load(o->axe, &st->axe, why, sizeof why)) {
            r->code = SNAP_EINVAL;
            r->text = base_strdup(why);
            return;
        }
    }
    const char *dir = o->a11y_dir;
    if (dir && make_dir(dir))
        dir = NULL;
    char stem[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    /* The process id too: two servers sharing one --a11y-dir never write
     * over each other's reports within a second. */
    snprintf(stem, sizeof stem, "a11y-%04d%02d%02d-%02d%02d%02d-%ld-%u", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)getpid(),
             ++st->seq);
    a11y_opts ao = cli_a11y_opts(o, dir, stem);
    if (tags)
        ao.tags = tags;
    if (include) {
        ao.include = &include;
        ao.ninclude = 1;
    }
    if (exclude) {
        ao.exclude = &exclude;
        ao.nexclude = 1;
    }
    ao.keep = ev->e != NULL;
    ao.axe = &st->axe;
    ao.files_by_name = true;
    a11y_report rep;
    int rc = a11y_scan(a, st->axe.src, st->axe.len, &ao, &rep, r);
    if (rc < 0)
        return;
    cli_evid_a11y(ev, &rep);
    base_buf b = {0};
    base_buf_puts(&b, rep.text);
    if (!dir)
        base_buf_puts(&b, "No report files: the host gave no --a11y-dir.\n");
    snap_result_free(r);
    memset(r, 0, sizeof *r);
    r->text = base_buf_take(&b, NULL);
    r->structured = rep.structured;
    rep.structured = NULL;
    a11y_report_free(&rep);
}

void cli_a11y_free(cli_a11y_state *st)
{
    a11y_axe_free(&st->axe);
    memset(st, 0, sizeof *st);
}
