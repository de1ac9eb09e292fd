/*
 * sweep.c — `cdpgate a11y --sweep TARGETS -o DIR [--jobs N]` (issue 16,
 * point 4; docs/a11y.md "A sweep"): an accessibility scan of each target
 * of a TARGETS file (a11y_targets_parse), each in a fresh session of its
 * own: a child process per target, at most N at once, with browser
 * contexts of its own on the sweep's one browser (launched here over the
 * pipe and routed to the children by cdp_mux, cdp/mux.c: each child may
 * touch only what it created; a browser that dies is launched again for
 * the targets after), and its own identity lease. With --connect or
 * --port each child starts or attaches a browser of its own. A target
 * restores its vault identity's session as every command does (the grant
 * must name that identity for its origin), may play a replay trail through
 * the gate to reach the page under test, and is scanned as `cdpgate a11y`
 * scans a URL.
 *
 * Files: DIR/ID/a11y.json and a11y.html (the scan's report), DIR/ID/
 * summary.txt (the summary), DIR/ID/log.txt (the child's stderr) and, last,
 * DIR/ID/status.json (state done, partial or failed, the reason, the time):
 * every one written all or nothing (base_file_put), so an interrupted
 * sweep leaves no torn file. DIR/index.json and DIR/index.html are made
 * again after each target. A rerun with the same DIR skips the targets
 * whose status.json says done for the same url, identity and trail (the
 * trail file's bytes unchanged: its SHA-256), and runs the others
 * again. A target that names no identity runs with no vault: signed out.
 * A target that fails (load error, login diverged, replay diverged or
 * refused, the scan failed) is recorded with its reason and the sweep
 * goes on; a timeout in the scan leaves a report whose rules
 * were not all evaluated: partial, run again by the next sweep.
 * Progress goes to stderr: "[i/n] ID: state".
 */
#include "cli/cli.h"
#include "cli/a11y_cmd.h"
#include "cli/evid.h"

#include "a11y/a11y.h"
#include "base/base.h"
#include "cdp/cdp.h"
#include "gate/gate.h"
#include "json/json.h"
#include "replay/replay.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#define JOBS_MAX 16

/* The sweep as a whole (the parent's). */
typedef struct {
    const cli_opts *o;
    const a11y_axe *ax;         /* axe-core as read (its source, digest, release) */
    a11y_targets t;
    char base[1024];            /* the TARGETS file's directory */
    bool *done;                 /* done[i]: nothing to do for target i */
    /* The shared browser (launched over the pipe): one for the sweep, a
     * context per target (docs/a11y.md "A sweep"); NULL when each target
     * starts its own (--connect, --port) or before the first start. */
    cdp_browser *b;
    cdp_mux *mux;
    unsigned gen;               /* browsers launched: a slot names its own */
} sweep;

/* One target's run (the child's). */
typedef struct {
    const cli_opts *o;
    const a11y_target *t;
    int fd;                     /* the shared browser's router, or -1 */
    char dir[1200];             /* DIR/ID */
    int64_t t0;
    char started[32];
    gate *g;
    snap_agent *a;
    char reason[600];
    char trail_sum[2 * VAULT_SHA256_LEN + 1];   /* the trail file's SHA-256 ("": none) */
    char *replay;               /* the replay's result JSON (new), or NULL */
    a11y_report rep;
    bool scanned;
} job;

/* ---- files ---- */

static int put(const char *dir, const char *name, const char *data, size_t len)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return base_file_put(AT_FDCWD, path, data, len, BASE_PUT_REPLACE, NULL);
}

/* The text of path (new, NUL-terminated), at most max bytes; NULL. */
static char *slurp(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    base_buf b = {0};
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 && b.len <= max)
        base_buf_put(&b, buf, (size_t)n);
    close(fd);
    if (n < 0 || b.len > max || b.oom) {
        base_buf_free(&b);
        return NULL;
    }
    if (!b.s)
        base_buf_puts(&b, "");
    return base_buf_take(&b, len);
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* A target's status.json, parsed (NULL: none or unreadable). */
static json_doc *status_read(const char *out, const char *id)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/%s/status.json", out, id);
    size_t len = 0;
    char *s = slurp(path, 1 << 20, &len);
    json_doc *d = s ? json_parse(s, len, NULL, NULL) : NULL;
    free(s);
    return d;
}

/* The path of a target's trail: as written, or relative to base (the
 * TARGETS file's directory). */
static void trail_path(const char *base, const char *trail, char *out, size_t cap)
{
    if (trail[0] == '/')
        snprintf(out, cap, "%s", trail);
    else
        snprintf(out, cap, "%s/%s", base, trail);
}

/* The SHA-256 (hex) of the trail file's bytes into out; "" and -1 when it
 * cannot be read. A rerun compares it: a trail edited since is played
 * again (red team s16, seen minor: only the trail's name was compared). */
static int trail_digest(const char *base, const char *trail, char out[2 * VAULT_SHA256_LEN + 1])
{
    char path[2200];
    out[0] = 0;
    trail_path(base, trail, path, sizeof path);
    size_t len = 0;
    char *s = slurp(path, REPLAY_MAX_TRAIL, &len);
    if (!s)
        return -1;
    uint8_t d[VAULT_SHA256_LEN];
    vault_sha256(s, len, d);
    free(s);
    for (size_t i = 0; i < VAULT_SHA256_LEN; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
    return 0;
}

/* The status says done for this very target: its url, identity and trail,
 * the trail's bytes unchanged (base: the TARGETS file's directory). */
static bool status_done(const json_val *st, const a11y_target *t, const char *base)
{
    const char *s = json_get_str(st, "state");
    if (!s || strcmp(s, "done") != 0 || !same(json_get_str(st, "url"), t->url) ||
        !same(json_get_str(st, "identity"), t->identity) ||
        !same(json_get_str(st, "trail"), t->trail))
        return false;
    if (!t->trail)
        return true;
    char sum[2 * VAULT_SHA256_LEN + 1];
    return trail_digest(base, t->trail, sum) == 0 && same(json_get_str(st, "trail_sha256"), sum);
}

/* ---- the child: one target ---- */

static void status_write(job *j, const char *state)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    const char *k[] = {"id", "url", "identity", "trail", "state", "started"};
    const char *v[] = {j->t->id, j->t->url, j->t->identity, j->t->trail, state, j->started};
    for (size_t i = 0; i < 6; i++) {
        json_w_key(&w, k[i]);
        json_w_str(&w, v[i]);
    }
    if (j->trail_sum[0]) {
        json_w_key(&w, "trail_sha256");
        json_w_str(&w, j->trail_sum);
    }
    json_w_key(&w, "reason");
    json_w_str(&w, j->reason[0] ? j->reason : NULL);
    json_w_key(&w, "seconds");
    json_w_num(&w, (double)(base_now_ms() - j->t0) / 1000.0);
    if (j->scanned) {
        json_w_key(&w, "violations");
        json_w_uint(&w, j->rep.violations);
        json_w_key(&w, "elements");
        json_w_uint(&w, j->rep.elements);
        json_w_key(&w, "needs_review");
        json_w_uint(&w, j->rep.review);
        json_w_key(&w, "not_evaluated");
        json_w_uint(&w, j->rep.not_evaluated);
    }
    if (j->replay) {
        json_w_key(&w, "replay");
        json_w_raw(&w, j->replay, strlen(j->replay), true);
    }
    json_w_obj_end(&w);
    size_t n = 0;
    char *s = json_w_take(&w, &n);
    json_w_free(&w);
    if (!s || put(j->dir, "status.json", s, n) != 0)
        fprintf(stderr, "cdpgate a11y: cannot write %s/status.json: %s\n", j->dir,
                strerror(errno));
    free(s);
}

static int why(job *j, const char *fmt, const char *what, const snap_result *r, int rc)
{
    snprintf(j->reason, sizeof j->reason, fmt, what,
             r && r->text ? r->text : snap_strerror(rc));
    /* One line: a result's text may run on. */
    for (char *p = j->reason; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return -1;
}

/* The trail: loaded (relative to the TARGETS file) and checked against
 * the grant before any browser starts. */
static replay_trail *trail_load(job *j, const char *base)
{
    char path[2200];
    trail_path(base, j->t->trail, path, sizeof path);
    /* Its bytes' digest first (status.json keeps it): a trail changed
     * while it loads is then played again by the next run, never skipped. */
    trail_digest(base, j->t->trail, j->trail_sum);
    replay_err err = {0};
    replay_trail *tr = replay_trail_load(path, &err);
    if (!tr) {
        snprintf(j->reason, sizeof j->reason, "replay: the trail %s: %s", j->t->trail,
                 err.msg);
        return NULL;
    }
    replay_opts ro = {.check_only = true};
    char *json = NULL;
    int st = replay_run(NULL, j->g, tr, &ro, &json);
    if (st != REPLAY_RUN_DONE) {
        snprintf(j->reason, sizeof j->reason, "replay refused: the grant lacks what the "
                 "trail %s needs (see \"replay\")", j->t->trail);
        j->replay = json;
        replay_trail_free(tr);
        return NULL;
    }
    free(json);
    return tr;
}

/* The target's identity must be the one the grant names for its origin
 * (before any browser starts). */
static int identity_named(job *j)
{
    char origin[300];
    if (snap_url_origin(j->t->url, origin, sizeof origin))
        return why(j, "login: %s: %s", "not an http(s) URL", NULL, SNAP_EINVAL);
    const char *named = gate_identity_for(j->g, origin);
    if (!named || strcmp(named, j->t->identity) != 0) {
        snprintf(j->reason, sizeof j->reason, "login: the grant names %s%s%s for %s, not "
                 "the target's identity \"%s\"", named ? "\"" : "no identity",
                 named ? named : "", named ? "\"" : "", origin, j->t->identity);
        return -1;
    }
    return 0;
}

/* Its session restored from the vault (snap_open's path). */
static int identity_restore(job *j)
{
    char origin[300];
    if (snap_url_origin(j->t->url, origin, sizeof origin))
        return why(j, "login: %s: %s", "not an http(s) URL", NULL, SNAP_EINVAL);
    snap_result r = {0};
    int rc = snap_session_restore(j->a, origin, &r);
    if (rc)
        why(j, "login: %s: %s", "the session was not restored", &r, rc);
    snap_result_free(&r);
    return rc ? -1 : 0;
}

/* After the open (and the trail): the page under test must be signed in
 * when the target names an identity. */
static int identity_check(job *j)
{
    snap_elems s;
    memset(&s, 0, sizeof s);
    snap_result r = {0};
    int rc = snap_elements(j->a, &s, &r);
    if (rc == 0 && !s.auth) {
        char *u = snap_url_shown(j->a, s.url ? s.url : "");
        snprintf(j->reason, sizeof j->reason, "login diverged: the page %s is not signed in "
                 "as \"%s\" (the site rejected or ended the session)", u ? u : "",
                 j->t->identity);
        free(u);
        rc = -1;
    } else if (rc) {
        why(j, "login: %s: %s", "the page could not be read", &r, rc);
    }
    snap_elements_free(&s);
    snap_result_free(&r);
    return rc ? -1 : 0;
}

static int open_target(job *j)
{
    snap_result r = {0};
    int64_t t0 = base_now_ms();
    int rc = snap_open(j->a, j->t->url, false, &r);
    if (j->o->timing)
        fprintf(stderr, "timing: a11y open_ms=%lld\n", (long long)(base_now_ms() - t0));
    if (rc)
        why(j, "load error: %s: %s", j->t->url, &r, rc);
    snap_result_free(&r);
    return rc ? -1 : 0;
}

static int play_trail(job *j, const replay_trail *tr)
{
    replay_opts ro = {0};
    char *json = NULL;
    int st = replay_run(j->a, j->g, tr, &ro, &json);
    j->replay = json;
    if (st == REPLAY_RUN_DONE)
        return 0;
    static const char *const WHAT[] = {"done", "diverged", "refused", "stopped by the gate",
                                       "outcome unknown", "failed"};
    snprintf(j->reason, sizeof j->reason, "replay %s: the trail %s did not reach the page "
             "under test (see \"replay\")", st >= 0 && st <= 5 ? WHAT[st] : "failed",
             j->t->trail);
    return -1;
}

/* A scan that timed out somewhere: partial (its rules not evaluated). */
static bool timed_out(const job *j)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/a11y.json", j->dir);
    size_t len = 0;
    char *s = slurp(path, A11Y_RESULTS_MAX, &len);
    json_opts po = {.max_size = A11Y_RESULTS_MAX, .max_depth = 256};
    json_doc *d = s ? json_parse(s, len, &po, NULL) : NULL;
    free(s);
    bool t = false;
    for (const json_val *x = json_first(json_get(json_doc_root(d), "notEvaluated")); x;
         x = json_next(x)) {
        const char *r = json_get_str(x, "reason");
        t = t || (r && (strstr(r, "timed out") || strstr(r, "time ran out")));
    }
    json_doc_free(d);
    return t;
}

static int scan(job *j, const a11y_axe *ax)
{
    a11y_opts ao = cli_a11y_opts(j->o, j->dir, "a11y");
    ao.keep = j->o->evidence != NULL;    /* the reports into the evidence too */
    ao.axe = ax;
    snap_result r = {0};
    int rc = a11y_scan(j->a, ax->src, ax->len, &ao, &j->rep, &r);
    if (rc) {
        bool late = r.text && (strstr(r.text, "in time") || strstr(r.text, "timed out"));
        why(j, late ? "axe timeout: %s: %s" : "scan: %s: %s", "axe-core did not finish", &r,
            rc);
        snap_result_free(&r);
        return -1;
    }
    snap_result_free(&r);
    j->scanned = true;
    if (j->o->timing)
        fprintf(stderr, "timing: a11y axe_ms=%.1f refs_ms=%.1f crops_ms=%.1f files_ms=%.1f\n",
                j->rep.axe_ms, j->rep.refs_ms, j->rep.crops_ms, j->rep.files_ms);
    put(j->dir, "summary.txt", j->rep.text, strlen(j->rep.text));
    if (j->rep.not_evaluated) {     /* never "done": some rules were not evaluated */
        bool late = timed_out(j);
        snprintf(j->reason, sizeof j->reason, "%s%zu rules not evaluated somewhere (%s); the "
                 "report holds the rest", late ? "axe timeout: " : "", j->rep.not_evaluated,
                 late ? "--frame-timeout, --scan-timeout" : "a frame not scanned: see "
                 "notEvaluated");
        return 1;
    }
    return 0;
}

/* The sweep's shared browser, through the parent's router: this target's
 * contexts are its own (the router refuses anything else). */
static cdp_browser *adopt(job *j)
{
    cdp_err e = {0};
    int fd = j->fd;
    j->fd = -1;
    cdp_browser *b = cdp_browser_adopt(fd, NULL, j->o->timeout_ms, &e);
    if (!b)
        fprintf(stderr, "cdpgate a11y: the sweep's browser: %s\n", e.msg);
    return b;
}

/* The browser, the agent (sessions from the vault), the evidence. */
static int run_browser(job *j, const a11y_axe *ax, const replay_trail *tr, cli_evid *ev)
{
    /* A target that names no identity is scanned signed out: no vault, so
     * no session is restored for it, whatever the grant names for its
     * origin (red team s16, R6-8: it was scanned as the grant's identity,
     * outside the one-lease-at-a-time rule, its status saying null). */
    vault *v = j->t->identity ? cli_vault_existing("a11y") : NULL;
    cdp_browser *b = j->fd >= 0 ? adopt(j) : cli_browser(j->o, "a11y");
    if (!b) {
        cli_evid_stop(ev, "a11y");
        vault_close(v);
        snprintf(j->reason, sizeof j->reason, "the browser did not start (see log.txt)");
        return -1;
    }
    cdp_err e = {0};
    snap_opts so = {0};
    so.allow_local = true;  /* the operator's own TARGETS file, as its command line */
    so.timeout_ms = j->o->timeout_ms;
    so.ax_tree = j->o->ax_tree;
    so.timing = j->o->timing;   /* CDPGATE_TIMING=1: the parts' times in log.txt */
    so.vault = v;
    so.gate = j->g;
    cli_evid_opts(ev, &so);
    j->a = snap_agent_new(b, &so, &e);
    int rc = -1;
    if (!j->a) {
        snprintf(j->reason, sizeof j->reason, "the browser: %s", e.msg);
    } else {
        cli_evid_attach(ev, b, j->a);
        rc = j->t->identity ? identity_restore(j) : 0;
        rc = rc ? rc : open_target(j);
        rc = rc ? rc : tr ? play_trail(j, tr) : 0;
        rc = rc ? rc : j->t->identity ? identity_check(j) : 0;
        rc = rc ? rc : scan(j, ax);
        if (j->scanned)
            cli_evid_a11y(ev, &j->rep);
    }
    cli_evid_stop(ev, "a11y");
    snap_agent_free(j->a);
    j->a = NULL;
    cdp_browser_free(b);
    vault_close(v);
    return rc;
}

/* The evidence folder of this target: EVID/ID/<task>-<time>-<pid>. */
static int evid_start(job *j, cli_evid *ev)
{
    if (!j->o->evidence)
        return 0;
    char d[1200];
    snprintf(d, sizeof d, "%s/%s", j->o->evidence, j->t->id);
    if (cli_evid_start(ev, d, j->g, "a11y") == 0)
        return 0;
    snprintf(j->reason, sizeof j->reason, "--evidence %.400s: cannot record (see log.txt)", d);
    return -1;
}

static void stamp(char *out, size_t cap)
{
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, cap, "?");
}

/* The child's work: 0 done, 1 partial, 2 failed (status.json says). */
static int job_run(job *j, const sweep *S)
{
    j->t0 = base_now_ms();
    stamp(j->started, sizeof j->started);
    j->g = cli_gate_open(j->o, false, "a11y");
    if (!j->g) {
        snprintf(j->reason, sizeof j->reason, "the grant cannot be used (see log.txt)");
        status_write(j, "failed");
        return 2;
    }
    replay_trail *tr = NULL;
    cli_evid ev;
    memset(&ev, 0, sizeof ev);
    int rc = j->t->identity ? identity_named(j) : 0;
    rc = rc ? rc : j->t->trail && !(tr = trail_load(j, S->base)) ? -1 : 0;
    rc = rc ? rc : evid_start(j, &ev);
    rc = rc ? rc : run_browser(j, S->ax, tr, &ev);
    status_write(j, rc == 0 ? "done" : rc > 0 ? "partial" : "failed");
    replay_trail_free(tr);
    gate_free(j->g);
    free(j->replay);
    if (j->scanned)
        a11y_report_free(&j->rep);
    return rc == 0 ? 0 : rc > 0 ? 1 : 2;
}

/* In the forked child: stderr to DIR/ID/log.txt, die with the parent. */
/* Close every inherited descriptor but 0-2 and keep: the browser's pipe,
 * the router's ends of the other targets' sockets, the watchdog's
 * lifeline are the parent's. */
static void close_others(int keep)
{
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int fd = 3; fd < (int)max; fd++)
        if (fd != keep)
            close(fd);
}

static _Noreturn void child(const sweep *S, size_t i, pid_t parent, int fd)
{
    signal(SIGCHLD, SIG_DFL);           /* the parent's wake-up (schedule) */
#if defined(__linux__)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_CHILD_SUBREAPER, 1);   /* reaps its own browser's helpers (--port) */
#endif
    if (getppid() != parent)
        _exit(2);
    if (fd >= 0)
        close_others(fd);
    job j;
    memset(&j, 0, sizeof j);
    j.fd = fd;
    j.o = S->o;
    j.t = &S->t.v[i];
    snprintf(j.dir, sizeof j.dir, "%s/%s", S->o->output, j.t->id);
    char log[1300];
    snprintf(log, sizeof log, "%s/log.txt", j.dir);
    int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lfd >= 0) {
        dup2(lfd, 2);
        close(lfd);
    }
    int fdn = open("/dev/null", O_RDWR);
    if (fdn >= 0) {
        dup2(fdn, 0);
        dup2(fdn, 1);
        close(fdn);
    }
    int rc = job_run(&j, S);
    fflush(NULL);
    _exit(rc);
}

/* ---- the parent: scheduling, progress, the index ---- */

typedef struct {
    pid_t pid;                  /* 0: free */
    int mc;                     /* its client slot in the router, or -1 */
    unsigned gen;               /* of which browser (sweep.gen) */
    size_t t;
    char key[600];              /* origin NUL identity: one lease at a time */
} slot;

static void key_of(const a11y_target *t, char *out, size_t cap)
{
    char origin[300] = "";
    out[0] = 0;
    if (t->identity && snap_url_origin(t->url, origin, sizeof origin) == 0)
        snprintf(out, cap, "%s %s", origin, t->identity);
}

/* Make the index again from every target's files (all or nothing). */
static void index_write(const sweep *S)
{
    size_t n = S->t.n;
    a11y_sweep_row *rows = calloc(n, sizeof *rows);
    json_doc **docs = calloc(n, sizeof *docs);
    char **res = calloc(n, sizeof *res);
    for (size_t i = 0; rows && docs && res && i < n; i++) {
        const a11y_target *t = &S->t.v[i];
        docs[i] = status_read(S->o->output, t->id);
        const json_val *st = json_doc_root(docs[i]);
        bool mine = same(json_get_str(st, "url"), t->url);
        a11y_sweep_row *r = &rows[i];
        *r = (a11y_sweep_row){t->id, t->url, t->identity, t->trail, "pending", NULL, 0, NULL,
                              0};
        if (!mine)
            continue;
        r->state = json_get_str(st, "state") ? json_get_str(st, "state") : "pending";
        r->reason = json_get_str(st, "reason");
        r->seconds = json_num(json_get(st, "seconds"));
        if (strcmp(r->state, "done") == 0 || strcmp(r->state, "partial") == 0) {
            char path[1300];
            snprintf(path, sizeof path, "%s/%s/a11y.json", S->o->output, t->id);
            res[i] = slurp(path, A11Y_RESULTS_MAX, &r->results_len);
            r->results = res[i];
        }
    }
    char *js = NULL, *html = NULL;
    if (rows && docs && res && a11y_sweep_index(rows, n, &js, &html) == 0) {
        if (put(S->o->output, "index.json", js, strlen(js)) ||
            put(S->o->output, "index.html", html, strlen(html)))
            fprintf(stderr, "cdpgate a11y: cannot write the index in %s: %s\n", S->o->output,
                    strerror(errno));
    }
    free(js);
    free(html);
    for (size_t i = 0; docs && res && i < n; i++) {
        json_doc_free(docs[i]);
        free(res[i]);
    }
    free(rows);
    free(docs);
    free(res);
}

/* A child that ended without a status (killed, crashed): one said for it. */
static void lost_write(const sweep *S, const a11y_target *t, int status)
{
    char dir[1200], reason[200];
    snprintf(dir, sizeof dir, "%s/%s", S->o->output, t->id);
    snprintf(reason, sizeof reason, "the run ended without a result (%s %d; see log.txt)",
             WIFSIGNALED(status) ? "signal" : "exit",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    const char *k[] = {"id", "url", "identity", "trail", "state", "reason"};
    const char *v[] = {t->id, t->url, t->identity, t->trail, "failed", reason};
    for (size_t i = 0; i < 6; i++) {
        json_w_key(&w, k[i]);
        json_w_str(&w, v[i]);
    }
    json_w_obj_end(&w);
    size_t len = 0;
    char *s = json_w_take(&w, &len);
    json_w_free(&w);
    if (s)
        put(dir, "status.json", s, len);
    free(s);
}

/* "[i/n] ID: state ..." for a target that ended. 0 done, 1 not. */
static int progress_end(const sweep *S, size_t i, int status)
{
    const a11y_target *t = &S->t.v[i];
    json_doc *d = status_read(S->o->output, t->id);
    const json_val *st = json_doc_root(d);
    const char *state = json_get_str(st, "state");
    if (!state || !same(json_get_str(st, "url"), t->url)) {
        json_doc_free(d);
        lost_write(S, t, status);
        d = status_read(S->o->output, t->id);
        st = json_doc_root(d);
        state = "failed";
    }
    fprintf(stderr, "[%zu/%zu] %s: %s in %.1f s", i + 1, S->t.n, t->id, state,
            json_num(json_get(st, "seconds")));
    if (strcmp(state, "failed") != 0)
        fprintf(stderr, ": %lld violated rules, %lld elements, %lld need review",
                (long long)json_get_int(st, "violations", 0),
                (long long)json_get_int(st, "elements", 0),
                (long long)json_get_int(st, "needs_review", 0));
    if (json_get_str(st, "reason"))
        fprintf(stderr, ": %s", json_get_str(st, "reason"));
    fputc('\n', stderr);
    int rc = strcmp(state, "done") == 0 ? 0 : 1;
    json_doc_free(d);
    return rc;
}

/* The next target to start: pending, its identity not in use by a
 * running one. n when none. */
static size_t next_target(const sweep *S, const bool *started, const slot *sl, int jobs)
{
    for (size_t i = 0; i < S->t.n; i++) {
        if (S->done[i] || started[i])
            continue;
        char k[600];
        key_of(&S->t.v[i], k, sizeof k);
        bool busy = false;
        for (int s = 0; s < jobs && k[0]; s++)
            busy = busy || (sl[s].pid && strcmp(sl[s].key, k) == 0);
        if (!busy)
            return i;
    }
    return S->t.n;
}

/* ---- the shared browser ---- */

/* One browser for the whole sweep when cdpgate launches it over the pipe;
 * with --connect or --port each target starts or attaches its own. */
static bool shared(const sweep *S)
{
    return !S->o->connect && !S->o->use_port;
}

static void shared_end(sweep *S)
{
    if (cdp_mux_refused(S->mux))
        fprintf(stderr, "sweep: the browser's router refused %zu commands of the targets (not "
                "theirs; see each log.txt)\n", cdp_mux_refused(S->mux));
    cdp_mux_free(S->mux);
    S->mux = NULL;
    cdp_browser_free(S->b);
    S->b = NULL;
}

/* The shared browser and its router, launched (again, after it died) when
 * needed. -1: none (the target then starts its own). */
static int shared_ready(sweep *S)
{
    if (S->mux && !cdp_conn_dead(cdp_browser_conn(S->b)))
        return 0;
    shared_end(S);
    cli_opts so = *S->o;
    so.many_contexts = true;    /* a context per target: no spare renderer */
    S->b = cli_browser(&so, "a11y");
    cdp_err e = {0};
    S->mux = S->b ? cdp_mux_new(cdp_browser_conn(S->b), &e) : NULL;
    if (!S->mux) {
        if (S->b)
            fprintf(stderr, "cdpgate a11y: the sweep's browser: %s\n", e.msg);
        shared_end(S);
        return -1;
    }
    S->gen++;
    return 0;
}

/* A socket to the router for the target of slot s: the child's end, or
 * -1 (the target then starts a browser of its own). */
static int shared_client(sweep *S, slot *s)
{
    int sv[2];
    if (!shared(S) || shared_ready(S) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    cdp_err e = {0};
    s->mc = cdp_mux_add(S->mux, sv[0], &e);
    s->gen = S->gen;
    if (s->mc < 0) {
        fprintf(stderr, "cdpgate a11y: the sweep's browser: %s\n", e.msg);
        close(sv[1]);
        return -1;
    }
    return sv[1];
}

/* Route the shared browser's messages for a while; a browser that died
 * fails the targets running (their sockets close) and the next target
 * launches a new one. */
static void shared_pump(sweep *S)
{
    cdp_err e = {0};
    if (!S->mux) {
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
        return;
    }
    if (cdp_mux_run(S->mux, 200, &e) == 0)
        return;
    const char *death = cdp_browser_death(S->b);
    fprintf(stderr, "sweep: the browser ended (%s%s%s): the targets running fail, the rest "
            "get a new browser\n", e.msg, *death ? "; " : "", death);
    shared_end(S);
}

static int start(sweep *S, slot *s, size_t i)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", S->o->output, S->t.v[i].id);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "cdpgate a11y: cannot make %s: %s\n", dir, strerror(errno));
        return -1;
    }
    /* A run again: the old files go first, the status first of all. */
    static const char *const OLD[] = {"status.json", "a11y.json", "a11y.html", "summary.txt"};
    for (size_t k = 0; k < 4; k++) {
        char p[1300];
        snprintf(p, sizeof p, "%s/%s", dir, OLD[k]);
        unlink(p);
    }
    s->mc = -1;
    int fd = shared_client(S, s);
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "cdpgate a11y: fork: %s\n", strerror(errno));
        if (fd >= 0)
            close(fd);
        cdp_mux_drop(S->mux, s->mc);
        return -1;
    }
    if (pid == 0)
        child(S, i, parent, fd);
    if (fd >= 0)
        close(fd);
    s->pid = pid;
    s->t = i;
    key_of(&S->t.v[i], s->key, sizeof s->key);
    fprintf(stderr, "[%zu/%zu] %s: started %s\n", i + 1, S->t.n, S->t.v[i].id,
            S->t.v[i].url);
    return 0;
}

/* A child of slot s ended: its status said, its router slot freed. */
static int ended(sweep *S, slot *s, int status)
{
    s->pid = 0;
    if (s->mc >= 0 && S->mux && s->gen == S->gen)
        cdp_mux_drop(S->mux, s->mc);
    s->mc = -1;
    int bad = progress_end(S, s->t, status);
    S->done[s->t] = true;
    index_write(S);
    return bad;
}

/* Wait for one child of ours to end; its slot freed. The failures. */
static int reap(sweep *S, slot *sl, int jobs)
{
    for (;;) {
        int status = 0;
        pid_t p = waitpid(-1, &status, 0);
        if (p < 0 && errno == EINTR)
            continue;
        if (p < 0)
            return 0;
        for (int s = 0; s < jobs; s++)
            if (sl[s].pid == p)
                return ended(S, &sl[s], status);
        /* a browser helper orphaned to us (the subreaper): reaped */
    }
}

/* SIGCHLD interrupts the router's poll (no SA_RESTART): a child that
 * ended is reaped at once, not at the poll's 200 ms. */
static void on_child(int sig) { (void)sig; }

/* With the shared browser: route until some child of ours ended (only our
 * children are waited for: the browser and its watchdog are ours too).
 * *n gets how many ended; returns the failures. */
static int reap_shared(sweep *S, slot *sl, int jobs, int *n)
{
    int bad = 0;
    for (*n = 0; *n == 0;) {
        shared_pump(S);
        for (int s = 0; s < jobs; s++) {
            int status = 0;
            if (sl[s].pid && waitpid(sl[s].pid, &status, WNOHANG) == sl[s].pid) {
                bad += ended(S, &sl[s], status);
                (*n)++;
            }
        }
    }
    return bad;
}

static int schedule(sweep *S, int jobs)
{
    slot sl[JOBS_MAX];
    memset(sl, 0, sizeof sl);
    bool *started = calloc(S->t.n, sizeof *started);
    if (!started)
        return EXIT_FAIL;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_child;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, &old);
    int failed = 0, running = 0;
    for (;;) {
        while (running < jobs) {
            size_t i = next_target(S, started, sl, jobs);
            if (i == S->t.n)
                break;
            int s = 0;
            while (sl[s].pid)
                s++;
            started[i] = true;
            if (start(S, &sl[s], i)) {
                S->done[i] = true;
                failed++;
                continue;
            }
            running++;
        }
        if (running == 0)
            break;
        if (shared(S)) {
            int n = 0;
            failed += reap_shared(S, sl, jobs, &n);
            running -= n;
        } else {
            failed += reap(S, sl, jobs);
            running--;
        }
    }
    sigaction(SIGCHLD, &old, NULL);
    free(started);
    return failed ? EXIT_FAIL : EXIT_OK;
}

/* Targets done in an earlier run: skipped, said. */
static size_t skip_done(sweep *S)
{
    size_t n = 0;
    for (size_t i = 0; i < S->t.n; i++) {
        json_doc *d = status_read(S->o->output, S->t.v[i].id);
        S->done[i] = status_done(json_doc_root(d), &S->t.v[i], S->base);
        json_doc_free(d);
        if (S->done[i]) {
            n++;
            fprintf(stderr, "[%zu/%zu] %s: done before (skipped)\n", i + 1, S->t.n,
                    S->t.v[i].id);
        }
    }
    return n;
}

static int targets_load(sweep *S, const char *path)
{
    size_t len = 0;
    char *buf = slurp(path, A11Y_SWEEP_FILE_MAX, &len);
    if (!buf) {
        fprintf(stderr, "cdpgate a11y: --sweep %s: cannot read it (or over %zu bytes)\n",
                path, A11Y_SWEEP_FILE_MAX);
        return -1;
    }
    char err[400];
    int rc = a11y_targets_parse(buf, len, &S->t, err, sizeof err);
    free(buf);
    if (rc) {
        fprintf(stderr, "cdpgate a11y: --sweep %s: %s\n", path, err);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(S->base, sizeof S->base, "%.*s", (int)(slash - path), path);
    else
        snprintf(S->base, sizeof S->base, ".");
    if (!S->base[0])
        snprintf(S->base, sizeof S->base, "/");
    return 0;
}

/* One sweep at a time in DIR: DIR/.sweep.lock, held while it runs. */
static int lock_dir(const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/.sweep.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr, "cdpgate a11y: %s: %s\n", path, fd < 0 ? strerror(errno) :
                "another sweep is running in this directory");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int cli_a11y_sweep(const cli_opts *o, const a11y_axe *ax)
{
    sweep S;
    memset(&S, 0, sizeof S);
    S.o = o;
    S.ax = ax;
    if (targets_load(&S, o->a11y_sweep))
        return EXIT_USAGE;
    int jobs = o->a11y_jobs ? o->a11y_jobs : 2;
    int lk = lock_dir(o->output);
    S.done = calloc(S.t.n, sizeof *S.done);
    if (lk < 0 || !S.done || (o->evidence && mkdir(o->evidence, 0700) && errno != EEXIST)) {
        if (o->evidence && lk >= 0 && S.done)
            fprintf(stderr, "cdpgate a11y: --evidence %s: %s\n", o->evidence, strerror(errno));
        if (lk >= 0)
            close(lk);
        free(S.done);
        a11y_targets_free(&S.t);
        return EXIT_FAIL;
    }
    size_t before = skip_done(&S);
    fprintf(stderr, "sweep: %zu targets, %zu done before, %zu to run, %d at a time\n",
            S.t.n, before, S.t.n - before, jobs);
    int rc = schedule(&S, jobs);
    shared_end(&S);
    index_write(&S);
    fprintf(stderr, "sweep: index %s/index.html\n", o->output);
    close(lk);
    free(S.done);
    a11y_targets_free(&S.t);
    return rc;
}
