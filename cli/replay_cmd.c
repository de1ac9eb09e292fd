/*
 * replay_cmd.c — `cdpgate replay TRAIL [--var name=value]...` (issue 14,
 * points 4-5): play a recorded trail again with no model, through the
 * gate, and print the result as one JSON object on stdout
 * (docs/replay.md "Replaying", "Exit statuses").
 *
 * The trail is read and what it needs checked against --grant and the
 * --var values before any browser starts: a replay the grant cannot
 * allow is refused up front (exit 5) with the list of what is missing.
 * Then the browser starts, an agent on the gate (sessions from the vault
 * by the grant's identities, as for every command; the confirmation hook
 * of --confirm or the terminal, as for every command) plays the steps.
 * Open steps take http(s) URLs only: a trail is a file that may have been
 * edited, not the operator's own command line.
 *
 * --from N plays from step N on, on a fresh browser (the operator did the
 * steps before it); --dry-run prints the plan (each step with the gate's
 * decision on what the trail recorded) and starts no browser at all.
 * --update N STEPFILE heals step N: the last step of STEPFILE (a trail the
 * substitute action was recorded into, --record) becomes step N's next
 * revision, the old one kept; the trail is written, nothing replayed.
 */
#include "cli/cli.h"
#include "cli/evid.h"
#include "base/base.h"
#include "gate/gate.h"
#include "replay/replay.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLAY_VARS_MAX 64

static const char USAGE_REPLAY[] =
    "usage: cdpgate [options] replay TRAIL [--var name=value]... [--from N] [--dry-run] "
    "[--grant FILE] [--audit FILE] [--confirm CMD] [--timeout MS]\n"
    "       cdpgate replay TRAIL --update N STEPFILE   (step N healed by STEPFILE's last "
    "step)\n";

/* --update N STEPFILE (upd.n 0: not asked). */
typedef struct {
    unsigned n;
    const char *file;
} update_req;

/* The exit status of a run's status. */
static int exit_of(int st)
{
    switch (st) {
    case REPLAY_RUN_DONE: return EXIT_OK;
    case REPLAY_RUN_DIVERGED: return EXIT_DIVERGED;
    case REPLAY_RUN_REFUSED: return EXIT_REFUSED;
    case REPLAY_RUN_STOPPED: return EXIT_STOPPED;
    case REPLAY_RUN_UNKNOWN: return EXIT_UNKNOWN;
    default: return EXIT_FAIL;
    }
}

/* Parse argv (after "replay") into o2, the trail path and the vars. 0, or
 * EXIT_USAGE with the reason on stderr. */
/* --update's step number (argv[i]) and file (argv[i + 1]) into u. 0 or
 * EXIT_USAGE. */
static int parse_update(int argc, char **argv, int i, update_req *u)
{
    char *end;
    long n = i + 1 < argc ? strtol(argv[i], &end, 10) : 0;
    if (i + 1 >= argc || *end || n < 1 || n > (long)REPLAY_MAX_STEPS) {
        fprintf(stderr, "cdpgate replay: --update wants a step number and a file\n%s",
                USAGE_REPLAY);
        return EXIT_USAGE;
    }
    u->n = (unsigned)n;
    u->file = argv[i + 1];
    return 0;
}

static int parse(int argc, char **argv, cli_opts *o2, const char **trail, const char **vars,
                 replay_opts *ro, update_req *upd)
{
    *trail = NULL;
    size_t *nvars = &ro->nvars;
    *nvars = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool val = strcmp(a, "--var") == 0 || strcmp(a, "--grant") == 0 ||
                   strcmp(a, "--audit") == 0 || strcmp(a, "--confirm") == 0 ||
                   strcmp(a, "--timeout") == 0 || strcmp(a, "--from") == 0;
        if (val && i + 1 >= argc) {
            fprintf(stderr, "cdpgate replay: %s wants a value\n%s", a, USAGE_REPLAY);
            return EXIT_USAGE;
        }
        if (strcmp(a, "--update") == 0) {
            if (parse_update(argc, argv, i + 1, upd))
                return EXIT_USAGE;
            i += 2;
        } else if (strcmp(a, "--var") == 0) {
            const char *v = argv[++i];
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || *nvars == REPLAY_VARS_MAX) {
                fprintf(stderr, "cdpgate replay: --var wants name=value (at most %d), not "
                        "'%.64s'\n", REPLAY_VARS_MAX, v);
                return EXIT_USAGE;
            }
            vars[(*nvars)++] = v;
        } else if (strcmp(a, "--dry-run") == 0) {
            ro->dry_run = true;
        } else if (strcmp(a, "--from") == 0) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > (long)REPLAY_MAX_STEPS) {
                fprintf(stderr, "cdpgate replay: --from wants a step number\n");
                return EXIT_USAGE;
            }
            ro->from = (unsigned)n;
        } else if (strcmp(a, "--grant") == 0) {
            o2->grant = argv[++i];
        } else if (strcmp(a, "--audit") == 0) {
            o2->audit = argv[++i];
        } else if (strcmp(a, "--confirm") == 0) {
            o2->confirm = argv[++i];
        } else if (strcmp(a, "--timeout") == 0) {
            char *end;
            long ms = strtol(argv[++i], &end, 10);
            if (*end || ms < 1 || ms > 3600000) {
                fprintf(stderr, "cdpgate replay: --timeout wants milliseconds\n");
                return EXIT_USAGE;
            }
            o2->timeout_ms = (int)ms;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "cdpgate replay: unknown option %s\n%s", a, USAGE_REPLAY);
            return EXIT_USAGE;
        } else if (*trail) {
            fprintf(stderr, "cdpgate replay: one trail at a time\n%s", USAGE_REPLAY);
            return EXIT_USAGE;
        } else {
            *trail = a;
        }
    }
    if (!*trail) {
        fputs(USAGE_REPLAY, stderr);
        return EXIT_USAGE;
    }
    return 0;
}

/* Print the run's JSON (one line) and give its exit status. */
static int print_result(int st, char *json)
{
    if (!json) {
        fprintf(stderr, "cdpgate replay: out of memory\n");
        return EXIT_FAIL;
    }
    printf("%s\n", json);
    /* The host reads the result now, not after the browser's teardown. */
    fflush(stdout);
    free(json);
    return exit_of(st);
}

/* --update: step u->n of t (read from path) healed by the last active step
 * of u->file, t written back (all or nothing, 0600); one JSON line says
 * what became of it. The exit status. */
static int update(const char *path, replay_trail *t, const update_req *u)
{
    replay_err err = {0};
    replay_trail *sub = replay_trail_load(u->file, &err);
    if (!sub) {
        fprintf(stderr, "cdpgate replay: --update %s: %s\n", u->file, err.msg);
        return EXIT_FAIL;
    }
    const replay_step *last = NULL;
    for (size_t i = 0; i < sub->nsteps; i++)
        if (!sub->steps[i].superseded)
            last = &sub->steps[i];
    int rc = last ? replay_trail_heal(t, u->n, last, &err) : REPLAY_EARG;
    if (!rc)
        rc = replay_trail_needs(t, &err);
    if (!rc)
        rc = replay_trail_save(t, path, &err);
    unsigned rev = 0;
    for (size_t i = 0; !rc && i < t->nsteps; i++)
        if (t->steps[i].n == u->n && !t->steps[i].superseded)
            rev = t->steps[i].rev;
    if (rc)
        fprintf(stderr, "cdpgate replay: --update %u %s: %s\n", u->n, u->file,
                last ? err.msg : "it holds no step");
    else
        printf("{\"status\":\"updated\",\"step\":%u,\"rev\":%u,\"from_step\":%u}\n", u->n,
               rev, last->n);
    replay_trail_free(sub);
    return rc ? EXIT_FAIL : EXIT_OK;
}

/* Launch, make the agent on g and play t (with --evidence, recorded). */
static int play(const cli_opts *o, gate *g, const replay_trail *t, const replay_opts *ro)
{
    cli_evid ev;
    memset(&ev, 0, sizeof ev);
    if (o->evidence && cli_evid_start(&ev, o->evidence, g, "replay") != 0)
        return EXIT_USAGE;
    vault *v = cli_vault_existing("replay");
    cdp_browser *b = cli_browser(o, "replay");
    if (!b) {
        cli_evid_stop(&ev, "replay");
        vault_close(v);
        return EXIT_BROWSER;
    }
    cdp_err e = {0};
    snap_opts so = {0};
    so.timeout_ms = o->timeout_ms;
    so.timing = o->timing;
    so.ax_tree = o->ax_tree;
    so.vault = v;
    so.gate = g;
    cli_evid_opts(&ev, &so);
    snap_agent *a = snap_agent_new(b, &so, &e);
    int rc;
    if (!a) {
        fprintf(stderr, "cdpgate replay: %s\n", e.msg);
        rc = EXIT_BROWSER;
    } else {
        cli_evid_attach(&ev, b, a);
        char *json = NULL;
        int st = replay_run(a, g, t, ro, &json);
        cli_evid_result(&ev, a, "replay", json);
        rc = print_result(st, json);
        if (st == REPLAY_RUN_FAILED && cdp_conn_dead(cdp_browser_conn(b)))
            rc = EXIT_BROWSER;
    }
    cli_evid_stop(&ev, "replay");
    snap_agent_free(a);
    cdp_browser_free(b);
    vault_close(v);
    return rc;
}

int cli_replay(const cli_opts *o, int argc, char **argv)
{
    cli_opts o2 = *o;
    const char *path, *vars[REPLAY_VARS_MAX];
    replay_opts ro = {.vars = vars};
    update_req upd = {0};
    int rc = parse(argc, argv, &o2, &path, vars, &ro, &upd);
    if (rc)
        return rc;
    replay_err err = {0};
    replay_trail *t = replay_trail_load(path, &err);
    if (!t) {
        fprintf(stderr, "cdpgate replay: %s: %s\n", path, err.msg);
        return EXIT_FAIL;
    }
    if (t->warning[0])
        fprintf(stderr, "cdpgate replay: %s: %s\n", path, t->warning);
    if (upd.n) {
        rc = update(path, t, &upd);
        replay_trail_free(t);
        return rc;
    }
    gate *g = cli_gate_open(&o2, true, "replay");
    if (!g) {
        replay_trail_free(t);
        return EXIT_USAGE;
    }
    /* Up front, before a browser starts (a dry run: all of it). */
    ro.check_only = !ro.dry_run;
    char *json = NULL;
    int st = replay_run(NULL, g, t, &ro, &json);
    if (st != REPLAY_RUN_DONE || ro.dry_run) {
        rc = print_result(st, json);
    } else {
        free(json);
        ro.check_only = false;
        rc = play(&o2, g, t, &ro);
    }
    gate_free(g);
    replay_trail_free(t);
    return rc;
}
