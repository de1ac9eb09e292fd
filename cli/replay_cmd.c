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
 *
 * Parameter values: --var name=value is on the command line, which other
 * local users read (ps, /proc/PID/cmdline) while the replay runs; a value
 * that is anyone's business is given by --var-file FILE (name=value
 * lines; the file the user's own, mode 0600, as the vault's files) or
 * --var-stdin (the same lines on stdin). A malformed one is named by its
 * place, never echoed.
 */
#include "cli/cli.h"
#include "cli/evid.h"
#include "base/base.h"
#include "gate/gate.h"
#include "replay/replay.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPLAY_VARS_MAX 64
#define VARS_BYTES_MAX 65536     /* of --var-file's file, of --var-stdin's input */

static const char USAGE_REPLAY[] =
    "usage: cdpgate [options] replay TRAIL [--var name=value]... [--var-file FILE] "
    "[--var-stdin] [--from N] [--dry-run] [--accept-agent-steps] [--grant FILE] "
    "[--audit FILE] [--confirm CMD] [--timeout MS]\n"
    "       (--var is visible to other local users in ps; --var-file FILE (mode 0600) and "
    "--var-stdin read name=value lines)\n"
    "       cdpgate replay TRAIL --update N STEPFILE   (step N healed by STEPFILE's last "
    "step)\n";

/* --update N STEPFILE (upd.n 0: not asked); where else values come from
 * (--var-file, --var-stdin) and what holds them once read. */
typedef struct {
    unsigned n;
    const char *file;
    const char *var_file;
    bool var_stdin;
    char *held[2];               /* the lines read (wiped and freed at the end) */
    size_t nheld[2];
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
        bool val = strcmp(a, "--var") == 0 || strcmp(a, "--var-file") == 0 ||
                   strcmp(a, "--grant") == 0 ||
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
                fprintf(stderr, "cdpgate replay: --var wants name=value (at most %d): the "
                        "%zu%s --var is not\n", REPLAY_VARS_MAX, *nvars + 1,
                        *nvars ? "th" : "st");
                return EXIT_USAGE;
            }
            vars[(*nvars)++] = v;
        } else if (strcmp(a, "--var-file") == 0) {
            upd->var_file = argv[++i];
        } else if (strcmp(a, "--var-stdin") == 0) {
            upd->var_stdin = true;
        } else if (strcmp(a, "--dry-run") == 0) {
            ro->dry_run = true;
        } else if (strcmp(a, "--accept-agent-steps") == 0) {
            ro->agent_steps = true;
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

/* All of fd (at most VARS_BYTES_MAX bytes) into *out (new, NUL-ended).
 * 0, or -1 with the reason in why. */
static int read_all(int fd, char **out, size_t *len, char *why, size_t cap)
{
    char *b = malloc(VARS_BYTES_MAX + 1);
    size_t n = 0;
    while (b && n <= VARS_BYTES_MAX) {
        ssize_t r = read(fd, b + n, VARS_BYTES_MAX + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r < 0)
                snprintf(why, cap, "%s", strerror(errno));
            break;
        }
        n += (size_t)r;
    }
    if (b && !why[0] && n > VARS_BYTES_MAX)
        snprintf(why, cap, "more than %d bytes", VARS_BYTES_MAX);
    if (b && !why[0] && memchr(b, '\0', n))
        snprintf(why, cap, "a NUL byte");
    if (!b || why[0]) {
        if (b)
            base_memzero(b, n);
        free(b);
        if (!why[0])
            snprintf(why, cap, "out of memory");
        return -1;
    }
    b[n] = '\0';
    *out = b;
    *len = n;
    return 0;
}

/* The file's own checks (as the vault's files): a regular file of this
 * user, no group or world bits. 0, or -1 with the reason in why. */
static int var_file_open(const char *path, char *why, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        snprintf(why, cap, "%s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        snprintf(why, cap, "not a regular file");
    else if (st.st_uid != geteuid())
        snprintf(why, cap, "owned by uid %ld, not by this user; refusing it", (long)st.st_uid);
    else if (st.st_mode & 077)
        snprintf(why, cap, "mode %04o gives group/world access; expected 0600 (chmod 600 %s)",
                 (unsigned)(st.st_mode & 07777), path);
    if (why[0] && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Whether vars[0..n) already has a value for v's name. */
static bool var_given(const char *const *vars, size_t n, const char *v)
{
    size_t k = strcspn(v, "=");
    for (size_t i = 0; i < n; i++)
        if (strncmp(vars[i], v, k) == 0 && vars[i][k] == '=')
            return true;
    return false;
}

/* Each line of buf (name=value; blank lines and lines starting with '#'
 * skipped, a trailing CR dropped) into vars. 0 or EXIT_USAGE, naming the
 * line, never its value. */
static int var_lines(char *buf, size_t len, const char *what, const char **vars,
                     size_t *nvars)
{
    char *p = buf, *end = buf + len;
    for (size_t line = 1; p < end; line++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *e = nl ? nl : end;
        *e = '\0';
        if (e > p && e[-1] == '\r')
            e[-1] = '\0';
        const char *eq = strchr(p, '=');
        bool skip = !*p || *p == '#';
        const char *bad = skip ? NULL : !eq || eq == p ? "not name=value"
                        : *nvars == REPLAY_VARS_MAX ? "more than 64 values"
                        : var_given(vars, *nvars, p) ? "a name given twice" : NULL;
        if (bad) {
            fprintf(stderr, "cdpgate replay: %s line %zu: %s\n", what, line, bad);
            return EXIT_USAGE;
        }
        if (!skip)
            vars[(*nvars)++] = p;
        p = e + 1;
    }
    return 0;
}

/* --var-file's and --var-stdin's lines into ro's vars (their text kept in
 * u->held). 0 or EXIT_USAGE. */
static int vars_read(update_req *u, const char **vars, replay_opts *ro)
{
    const char *what[2] = {u->var_file, u->var_stdin ? "--var-stdin" : NULL};
    for (int k = 0; k < 2; k++) {
        if (!what[k])
            continue;
        char why[300] = "";
        int fd = k == 0 ? var_file_open(what[k], why, sizeof why) : 0;
        if (fd >= 0 && read_all(fd, &u->held[k], &u->nheld[k], why, sizeof why) != 0)
            u->held[k] = NULL;
        if (k == 0 && fd >= 0)
            close(fd);
        if (why[0]) {
            fprintf(stderr, "cdpgate replay: %s%s: %s\n", k == 0 ? "--var-file " : "", what[k],
                    why);
            return EXIT_USAGE;
        }
        if (var_lines(u->held[k], u->nheld[k], what[k], vars, &ro->nvars))
            return EXIT_USAGE;
    }
    return 0;
}

static void vars_wipe(update_req *u)
{
    for (int k = 0; k < 2; k++) {
        if (u->held[k])
            base_memzero(u->held[k], u->nheld[k]);
        free(u->held[k]);
        u->held[k] = NULL;
    }
}

/* The trail at path: healed (--update), checked, then played. */
static int replay_file(const cli_opts *o, const char *path, replay_opts *ro, update_req *upd)
{
    cli_opts o2 = *o;
    int rc;
    replay_err err = {0};
    replay_trail *t = replay_trail_load(path, &err);
    if (!t) {
        fprintf(stderr, "cdpgate replay: %s: %s\n", path, err.msg);
        return EXIT_FAIL;
    }
    if (t->warning[0])
        fprintf(stderr, "cdpgate replay: %s: %s\n", path, t->warning);
    if (upd->n) {
        rc = update(path, t, upd);
        replay_trail_free(t);
        return rc;
    }
    gate *g = cli_gate_open(&o2, true, "replay");
    if (!g) {
        replay_trail_free(t);
        return EXIT_USAGE;
    }
    /* Up front, before a browser starts (a dry run: all of it). */
    ro->check_only = !ro->dry_run;
    char *json = NULL;
    int st = replay_run(NULL, g, t, ro, &json);
    if (st != REPLAY_RUN_DONE || ro->dry_run) {
        rc = print_result(st, json);
    } else {
        free(json);
        ro->check_only = false;
        rc = play(&o2, g, t, ro);
    }
    gate_free(g);
    replay_trail_free(t);
    return rc;
}

int cli_replay(const cli_opts *o, int argc, char **argv)
{
    cli_opts o2 = *o;
    const char *path, *vars[REPLAY_VARS_MAX];
    replay_opts ro = {.vars = vars};
    update_req upd = {0};
    int rc = parse(argc, argv, &o2, &path, vars, &ro, &upd);
    if (!rc)
        rc = vars_read(&upd, vars, &ro);
    if (!rc)
        rc = replay_file(&o2, path, &ro, &upd);
    vars_wipe(&upd);
    return rc;
}
