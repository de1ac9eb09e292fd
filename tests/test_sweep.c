/*
 * test_sweep.c — `cdpgate a11y --sweep TARGETS -o DIR` (issue 16, point
 * 4): real headless Chromium per target, fixture pages under several host
 * names (a.test, b.test, retail.test), axe-core from tests/peers.
 *
 * - sweep: six targets, two at a time: two pages behind a barrier of the
 *   fixture server (each answered only when the other's request has come:
 *   the two were running at once, seen by the server, not timed), the
 *   cross-origin frame fixture, the login-walled retailer behind the vault
 *   identity alice, the retailer's lamp page reached through a replay
 *   trail, and a page on a closed port (failed: "load error", recorded,
 *   the others done). The index's counts equal each target's a11y.json;
 *   the session's value is in no file; each target's evidence verifies.
 * - resume: four targets one at a time, the sweep killed (SIGKILL) while
 *   the third loads; no status for it, the first two done; the rerun says
 *   the first two were done before, does not load them again (the server's
 *   log), finishes the other two.
 * - axe_timeout: a scan that times out (--frame-timeout 1) fails with
 *   "axe timeout", exit 1; the rerun runs it again.
 * - login: the site ends alice's session on sight: "login diverged"; a
 *   target naming bob under a grant naming alice: refused, never opened.
 * - targets_file: the TARGETS parser's errors name the line; a bad file is
 *   refused before any browser starts (exit 2).
 * - anonymous: a target naming no identity is scanned signed out though
 *   the grant names alice for its origin (red team s16, R6-8).
 * - trail_changed: a done target is run again when its trail file changed.
 * - isolated: the targets share one browser, each in a context of its own:
 *   the cookie and localStorage item one target leaves on a.test are seen
 *   neither by the next one (--jobs 1) nor by the one running beside it
 *   (--jobs 2, held together by the fixture's barrier); the planter sees
 *   its own (the check can fail).
 * - browser_crash: the shared browser is killed while a target loads
 *   (/die): that target fails, a new browser is launched for the rest.
 * - hung: a target whose page never loads does not hold up the one beside
 *   it (done first); it fails at its own --timeout.
 * - worker_request: a shared worker's request goes to its own target's
 *   child only, never judged (or seen) by the target beside it.
 */
#include "tests/testlib.h"
#include "a11y/a11y.h"
#include "base/base.h"
#include "json/json.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *host_args[] = {FIXTURE_HOST_RULES, "--site-per-process", NULL};
/* The session value a11y/shown.html shows (vault identity carol on a.test). */
#define SHOWN_SESSION "as-shown-5eed77c0"
/* The short session value a11y/shown-short.html shows (identity dave). */
#define SHORT_CODE "k7Q2x9"

static testlib_world world;
static char axe_env[600];
static char retail_data[400], retail_env[450];

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!CHECK(f != NULL))
        return false;
    fputs(text, f);
    return CHECK_INT(0, fclose(f));
}

/* Lines of the request log holding both a and b. */
static int log_count(const char *a, const char *b)
{
    char *s = test_read_file(world.log, NULL);
    int n = 0;
    for (char *l = s; l && *l;) {
        char *e = strchr(l, '\n');
        if (e)
            *e = 0;
        if (strstr(l, a) && strstr(l, b))
            n++;
        l = e ? e + 1 : l + strlen(l);
    }
    free(s);
    return n;
}

static bool ready(void)
{
    if (!testlib_need_browser() || !testlib_need_cdpgate())
        return false;
    char path[600];
    snprintf(path, sizeof path, "%s", axe_env + strlen("CDPGATE_AXE="));
    if (access(path, R_OK) != 0) {
        test_skip("axe-core is not installed in tests/peers (sh tests/setup.sh)");
        return false;
    }
    return true;
}

/* The vault of XDG_DATA_HOME=retail_data holds the retailer's session for
 * alice. */
static bool vault_setup(void)
{
    if (*retail_data)
        return true;
    char origin[200], vdir[500], err[300] = "", state[600];
    testlib_world_origin(&world, origin, sizeof origin, "retail.test");
    snprintf(retail_data, sizeof retail_data, "%s/retail-data", world.root);
    snprintf(retail_env, sizeof retail_env, "XDG_DATA_HOME=%s", retail_data);
    mkdir(retail_data, 0700);
    snprintf(vdir, sizeof vdir, "%s/cdpgate", retail_data);
    vault *v = vault_open(vdir, NULL, err, sizeof err);
    if (!CHECK(v != NULL)) {
        test_fail_detail("vault_open: %s", err);
        return false;
    }
    snprintf(state, sizeof state, "{\"version\":1,\"cookies\":[{\"name\":\"retail_session\","
             "\"value\":\"" FIXTURE_RETAIL_SESSION "\",\"domain\":\"retail.test\",\"path\":\"/\","
             "\"httpOnly\":true,\"secure\":false,\"sameSite\":\"Lax\"}],\"localStorage\":{}}");
    int rc = testlib_vault_plant(v, origin, "alice", state, 0);
    /* a.test under carol: a cookie its page can read (a11y/shown.html). */
    testlib_world_origin(&world, origin, sizeof origin, "a.test");
    snprintf(state, sizeof state, "{\"version\":1,\"cookies\":[{\"name\":\"a11y_session\","
             "\"value\":\"" SHOWN_SESSION "\",\"domain\":\"a.test\",\"path\":\"/\","
             "\"httpOnly\":false,\"secure\":false,\"sameSite\":\"Lax\"}],\"localStorage\":{}}");
    rc = rc ? rc : testlib_vault_plant(v, origin, "carol", state, 0);
    /* b.test under dave (one identity an origin): short cookies
     * (a11y/shown-short.html). */
    testlib_world_origin(&world, origin, sizeof origin, "b.test");
    snprintf(state, sizeof state, "{\"version\":1,\"cookies\":[%s,%s,%s],\"localStorage\":{}}",
             "{\"name\":\"a11y_code\",\"value\":\"" SHORT_CODE "\",\"domain\":\"b.test\","
             "\"path\":\"/\",\"httpOnly\":false,\"secure\":false,\"sameSite\":\"Lax\"}",
             "{\"name\":\"a11y_flag\",\"value\":\"true\",\"domain\":\"b.test\",\"path\":\"/\","
             "\"httpOnly\":false,\"secure\":false,\"sameSite\":\"Lax\"}",
             "{\"name\":\"a11y_num\",\"value\":\"1234\",\"domain\":\"b.test\",\"path\":\"/\","
             "\"httpOnly\":false,\"secure\":false,\"sameSite\":\"Lax\"}");
    rc = rc ? rc : testlib_vault_plant(v, origin, "dave", state, 0);
    vault_close(v);
    return rc == 0;
}

typedef struct {
    int rc;
    char *err;
} run_out;

/* cdpgate a11y --sweep targets -o out --jobs jobs [--grant g] [--evidence ev];
 * kill_at: when not NULL, SIGKILL it once its stderr holds kill_at. */
/* The next sweep's process is the one whose browser /die kills. */
static bool die_parent_next;

static run_out sweep_run_x(const char *targets, const char *out, int jobs, const char *g,
                           const char *ev, const char *kill_at, const char *opt,
                           const char *val)
{
    run_out o = {.rc = -1};
    char rules[300], j[8];
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    snprintf(j, sizeof j, "%d", jobs);
    const char *argv[20] = {testlib_cdpgate_bin(), rules, "--browser-arg=--site-per-process",
                            "--timeout", "90000", "a11y", "--sweep", targets, "-o", out,
                            "--jobs", j};
    size_t n = 12;
    if (g) {
        argv[n++] = "--grant";
        argv[n++] = g;
    }
    if (ev) {
        argv[n++] = "--evidence";
        argv[n++] = ev;
    }
    if (opt) {
        argv[n++] = opt;
        argv[n++] = val;
    }
    argv[n] = NULL;
    const char *env[] = {axe_env, retail_env[0] ? retail_env : "CDPGATE_UNUSED",
                         "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    fixture_child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return o;
    if (die_parent_next)
        fixture_server_die_parent(c.pid);
    die_parent_next = false;
    if (kill_at) {
        if (CHECK(testlib_child_stderr_wait(&c, kill_at, 120000)))
            kill(c.pid, SIGKILL);
    }
    o.rc = fixture_child_wait(&c, 240000);
    o.err = fixture_child_stderr(&c);
    testlib_child_free(&c);
    return o;
}

static run_out sweep_run(const char *targets, const char *out, int jobs, const char *g,
                         const char *ev, const char *kill_at)
{
    return sweep_run_x(targets, out, jobs, g, ev, kill_at, NULL, NULL);
}

static json_doc *read_json(const char *dir, const char *id, const char *name)
{
    char path[700];
    if (id)
        snprintf(path, sizeof path, "%s/%s/%s", dir, id, name);
    else
        snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    char *s = test_read_file(path, &len);
    json_doc *d = s ? json_parse(s, len, NULL, NULL) : NULL;
    free(s);
    return d;
}

static char *read_text(const char *dir, const char *id, const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s/%s", dir, id, name);
    return test_read_file(path, NULL);
}

static const char *state_of(const char *dir, const char *id, char *buf, size_t cap)
{
    json_doc *d = read_json(dir, id, "status.json");
    snprintf(buf, cap, "%s", d ? json_get_str(json_doc_root(d), "state") ?
             json_get_str(json_doc_root(d), "state") : "?" : "(none)");
    json_doc_free(d);
    return buf;
}

/* The index row of id equals what its a11y.json holds: elements by
 * impact, violated rules and elements, needs review. */
static void check_row(const char *dir, const json_val *row)
{
    const char *id = json_get_str(row, "id");
    json_doc *d = read_json(dir, id, "a11y.json");
    if (!CHECK(d != NULL)) {
        test_fail_detail("no a11y.json for %s", id ? id : "?");
        return;
    }
    static const char *const IMP[] = {"critical", "serious", "moderate", "minor"};
    int64_t by[4] = {0}, rules = 0, elements = 0, rr = 0, re = 0;
    const json_val *root = json_doc_root(d);
    for (const json_val *v = json_first(json_get(root, "violations")); v; v = json_next(v)) {
        int64_t k = (int64_t)json_len(json_get(v, "nodes"));
        rules++;
        elements += k;
        for (int i = 0; i < 4; i++)
            if (strcmp(json_get_str(v, "impact") ? json_get_str(v, "impact") : "", IMP[i]) == 0)
                by[i] += k;
    }
    for (const json_val *v = json_first(json_get(root, "incomplete")); v; v = json_next(v)) {
        rr++;
        re += (int64_t)json_len(json_get(v, "nodes"));
    }
    const json_val *vi = json_get(row, "violations"), *nr = json_get(row, "needs_review");
    CHECK_INT(rules, json_get_int(vi, "rules", -1));
    CHECK_INT(elements, json_get_int(vi, "elements", -1));
    for (int i = 0; i < 4; i++)
        if (!CHECK_INT(by[i], json_get_int(vi, IMP[i], -1)))
            test_fail_detail("%s: %s", id, IMP[i]);
    CHECK_INT(rr, json_get_int(nr, "rules", -1));
    CHECK_INT(re, json_get_int(nr, "elements", -1));
    json_doc_free(d);
}

static bool has_bytes(const char *t, size_t len, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; t && i + n <= len; i++)
        if (memcmp(t + i, s, n) == 0)
            return true;
    return false;
}

/* No file under dir holds s. */
static void check_no_file_has(const char *dir, const char *s)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || e->d_name[1] == '.'))
            continue;
        char p[900];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            check_no_file_has(p, s);
            continue;
        }
        size_t len = 0;
        char *t = test_read_file(p, &len);
        if (!CHECK(!t || !has_bytes(t, len, s)))
            test_fail_detail("%s holds the planted secret", p);
        free(t);
    }
    if (dp)
        closedir(dp);
}

/* The one evidence folder under ev/id verifies. */
static void check_evidence(const char *ev, const char *id)
{
    char d[700], cmd[1600];
    snprintf(d, sizeof d, "%s/%s", ev, id);
    DIR *dp = opendir(d);
    struct dirent *e;
    int n = 0;
    while (dp && (e = readdir(dp)))
        if (e->d_name[0] != '.') {
            n++;
            snprintf(cmd, sizeof cmd, "%s evidence verify '%s/%s'", testlib_cdpgate_bin(), d,
                     e->d_name);
            char *out = NULL, *err = NULL;
            if (!CHECK_INT(0, fixture_run(cmd, &out, &err)))
                test_fail_detail("%s: %s %s", cmd, out ? out : "", err ? err : "");
            free(out);
            free(err);
            /* The scan's record names its two reports, hashed in the folder. */
            snprintf(cmd, sizeof cmd, "%s/%s/records.jsonl", d, e->d_name);
            char *recs = test_read_file(cmd, NULL);
            CHECK_HAS(recs, "\"kind\":\"a11y\"");
            CHECK_HAS(recs, "{\"file\":\"a11y-0001.html\",\"sha256\":\"");
            free(recs);
        }
    if (dp)
        closedir(dp);
    if (!CHECK_INT(1, n))
        test_fail_detail("evidence folders under %s", d);
}

/* The trail to the lamp: on the retailer's home (signed in as alice),
 * click the link "Desk lamp". */
static bool lamp_trail(const char *path, const char *origin)
{
    char t[1600];
    snprintf(t, sizeof t, "{\"cdpgate_trail\":1,\"created\":\"2026-12-03T18:00:00Z\","
             "\"cdpgate\":\"0.1.0\",\"task\":\"sweep\"}\n"
             "{\"step\":1,\"op\":\"click\",\"args\":{},\"class\":\"interact\",\"target\":"
             "{\"role\":\"link\",\"name\":\"Desk lamp\"},\"state\":{\"origin\":\"%s\",\"url\":"
             "\"%s/retail/home.html\",\"title\":\"Your account — Lamp Store\","
             "\"authenticated\":true,\"identity\":\"alice\"},\"effect\":{\"navigated\":"
             "\"%s/retail/lamp.html?from=home\"}}\n", origin, origin, origin);
    return write_text(path, t);
}

static void t_sweep(void)
{
    if (!ready() || !vault_setup())
        return;
    char a[200], b[200], r[200], dead[200], targets[400], grant[400], lamp[400], out[400],
        ev[400], text[4000], g[1200];
    testlib_world_origin(&world, a, sizeof a, "a.test");
    testlib_world_origin(&world, b, sizeof b, "b.test");
    testlib_world_origin(&world, r, sizeof r, "retail.test");
    snprintf(dead, sizeof dead, "http://a.test:%d", fixture_closed_port());
    snprintf(targets, sizeof targets, "%s/sweep/targets.jsonl", world.root);
    snprintf(lamp, sizeof lamp, "%s/sweep/lamp.trail", world.root);
    snprintf(grant, sizeof grant, "%s/sweep/grant.json", world.root);
    snprintf(out, sizeof out, "%s/sweep/out", world.root);
    snprintf(ev, sizeof ev, "%s/sweep/evidence", world.root);
    char sd[400];
    snprintf(sd, sizeof sd, "%s/sweep", world.root);
    mkdir(sd, 0700);
    snprintf(text, sizeof text,
             "# two at once: each barrier page is answered when the other's request came\n"
             "{\"id\":\"bar1\",\"url\":\"%s/barrier?key=sweep1&n=2\"}\n"
             "{\"id\":\"bar2\",\"url\":\"%s/barrier?key=sweep1&n=2&b=1\"}\n"
             "{\"id\":\"frames\",\"url\":\"%s/a11y/index.html\"}\n"
             "{\"id\":\"shop\",\"url\":\"%s/retail/home.html\",\"identity\":\"alice\"}\n"
             "{\"id\":\"lamp\",\"url\":\"%s/retail/home.html\",\"identity\":\"alice\","
             "\"trail\":\"lamp.trail\"}\n"
             "{\"id\":\"down\",\"url\":\"%s/\"}\n", a, b, a, r, r, dead);
    snprintf(g, sizeof g, "{\"task\":\"sweep\",\"origins\":[\"%s\",\"%s\",\"%s\",\"%s\"],"
             "\"identities\":{\"%s\":\"alice\"}}\n", a, b, r, dead, r);
    if (!write_text(targets, text) || !write_text(grant, g) || !lamp_trail(lamp, r))
        return;
    run_out o = sweep_run(targets, out, 2, grant, ev, NULL);
    CHECK_INT(1, o.rc);         /* one target failed */
    CHECK_HAS(o.err, "sweep: 6 targets, 0 done before, 6 to run, 2 at a time");
    CHECK_HAS(o.err, "[6/6] down: failed");
    CHECK_HAS(o.err, "load error");
    CHECK_HAS(o.err, "[3/6] frames: done");
    char st[32];
    static const char *const DONE[] = {"bar1", "bar2", "frames", "shop", "lamp"};
    for (size_t i = 0; i < 5; i++)
        if (!CHECK(strcmp(state_of(out, DONE[i], st, sizeof st), "done") == 0))
            test_fail_detail("%s: state %s\nstderr:\n%s", DONE[i], st, o.err ? o.err : "");
    CHECK_HAS(state_of(out, "down", st, sizeof st), "failed");
    char *s = read_text(out, "down", "status.json");
    CHECK_HAS(s, "\"reason\":\"load error: ");
    free(s);
    /* The two barrier pages were answered together: two at once. */
    for (size_t i = 0; i < 2; i++) {
        s = read_text(out, DONE[i], "a11y.json");
        CHECK_HAS(s, "class=\\\"together\\\"");
        CHECK_LACKS(s, "alone");
        free(s);
    }
    /* The frames fixture: its known violations, the frame's target. */
    s = read_text(out, "frames", "a11y.json");
    CHECK_HAS(s, "[\"#inner\",\"#nameless\"]");
    free(s);
    /* Signed in as alice: the account's home, and the lamp through the trail. */
    s = read_text(out, "shop", "a11y.json");
    CHECK_HAS(s, "/retail/home.html\"");
    free(s);
    s = read_text(out, "lamp", "a11y.json");
    CHECK_HAS(s, "/retail/lamp.html?from=home\"");
    free(s);
    s = read_text(out, "lamp", "status.json");
    CHECK_HAS(s, "\"replay\":{");
    CHECK_HAS(s, "\"status\":\"done\"}}");
    free(s);
    /* The index: the states, and each row's counts as its report's. */
    json_doc *d = read_json(out, NULL, "index.json");
    const json_val *ix = json_doc_root(d);
    CHECK_INT(6, json_get_int(ix, "targets", -1));
    CHECK_INT(5, json_get_int(ix, "done", -1));
    CHECK_INT(1, json_get_int(ix, "failed", -1));
    int rows = 0;
    for (const json_val *row = json_first(json_get(ix, "rows")); row; row = json_next(row)) {
        rows++;
        if (strcmp(json_get_str(row, "state") ? json_get_str(row, "state") : "", "done") == 0)
            check_row(out, row);
    }
    CHECK_INT(6, rows);
    int64_t frames_el = json_get_int(json_get(json_at(json_get(ix, "rows"), 2), "violations"),
                                     "elements", -1);
    CHECK_INT(6, frames_el);    /* button-name 1, image-alt 2, label 2, color-contrast 1 */
    json_doc_free(d);
    char ip[500];
    snprintf(ip, sizeof ip, "%s/index.html", out);
    s = test_read_file(ip, NULL);
    CHECK_HAS(s, "Content-Security-Policy");
    CHECK_HAS(s, "<a href=\"lamp/a11y.html\">report</a>");
    CHECK_HAS(s, "failed: load error");
    free(s);
    check_no_file_has(out, FIXTURE_RETAIL_SESSION);
    check_no_file_has(ev, FIXTURE_RETAIL_SESSION);
    check_evidence(ev, "frames");
    check_evidence(ev, "lamp");
    free(o.err);
}

static void t_resume(void)
{
    if (!ready())
        return;
    char a[200], targets[600], out[600], text[2000], sd[400];
    testlib_world_origin(&world, a, sizeof a, "a.test");
    snprintf(sd, sizeof sd, "%s/resume", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(text, sizeof text,
             "{\"id\":\"r1\",\"url\":\"%s/a11y/csp.html?r=1\"}\n"
             "{\"id\":\"r2\",\"url\":\"%s/a11y/csp.html?r=2\"}\n"
             "{\"id\":\"r3\",\"url\":\"%s/slow?ms=8000&r=3\"}\n"
             "{\"id\":\"r4\",\"url\":\"%s/a11y/csp.html?r=4\"}\n", a, a, a, a);
    if (!write_text(targets, text))
        return;
    run_out o = sweep_run(targets, out, 1, NULL, NULL, "[3/4] r3: started");
    char st[32];
    CHECK_HAS(o.err, "[2/4] r2: done");
    CHECK_LACKS(o.err, "[3/4] r3: done");
    CHECK_HAS(state_of(out, "r1", st, sizeof st), "done");
    CHECK_HAS(state_of(out, "r2", st, sizeof st), "done");
    CHECK_HAS(state_of(out, "r3", st, sizeof st), "(none)");   /* nothing torn */
    json_doc *d = read_json(out, NULL, "index.json");
    CHECK_INT(2, json_get_int(json_doc_root(d), "done", -1));
    CHECK_INT(2, json_get_int(json_doc_root(d), "pending", -1));
    json_doc_free(d);
    free(o.err);
    CHECK_INT(1, log_count("a.test", "/a11y/csp.html?r=1"));
    o = sweep_run(targets, out, 1, NULL, NULL, NULL);
    CHECK_INT(0, o.rc);
    CHECK_HAS(o.err, "sweep: 4 targets, 2 done before, 2 to run, 1 at a time");
    CHECK_HAS(o.err, "[1/4] r1: done before (skipped)");
    CHECK_HAS(o.err, "[2/4] r2: done before (skipped)");
    CHECK_HAS(o.err, "[3/4] r3: done");
    CHECK_HAS(o.err, "[4/4] r4: done");
    /* The done ones were not loaded again. */
    CHECK_INT(1, log_count("a.test", "/a11y/csp.html?r=1"));
    CHECK_INT(1, log_count("a.test", "/a11y/csp.html?r=2"));
    CHECK_INT(1, log_count("a.test", "/a11y/csp.html?r=4"));
    d = read_json(out, NULL, "index.json");
    CHECK_INT(4, json_get_int(json_doc_root(d), "done", -1));
    json_doc_free(d);
    free(o.err);
}

/* A scan that times out (--frame-timeout 1: the top frame not scanned in
 * time): failed, "axe timeout", exit 1; a rerun runs it again. */
static void t_axe_timeout(void)
{
    if (!ready())
        return;
    char a[200], targets[600], out[600], text[600], sd[400], st[32];
    testlib_world_origin(&world, a, sizeof a, "a.test");
    snprintf(sd, sizeof sd, "%s/timeout", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(text, sizeof text, "{\"id\":\"p1\",\"url\":\"%s/a11y/csp.html?p=1\"}\n", a);
    if (!write_text(targets, text))
        return;
    run_out o = sweep_run_x(targets, out, 1, NULL, NULL, NULL, "--frame-timeout", "1");
    CHECK_INT(1, o.rc);
    CHECK_HAS(o.err, "[1/1] p1: failed");
    CHECK_HAS(o.err, "axe timeout: axe-core did not finish: ");
    CHECK_HAS(state_of(out, "p1", st, sizeof st), "failed");
    json_doc *d = read_json(out, NULL, "index.json");
    CHECK_INT(1, json_get_int(json_doc_root(d), "failed", -1));
    json_doc_free(d);
    free(o.err);
    o = sweep_run(targets, out, 1, NULL, NULL, NULL);
    CHECK_INT(0, o.rc);
    CHECK_HAS(o.err, "sweep: 1 targets, 0 done before, 1 to run");
    CHECK_HAS(o.err, "[1/1] p1: done");
    CHECK_INT(2, log_count("a.test", "/a11y/csp.html?p=1"));
    free(o.err);
}

/* The partial state: a report written, some rules not evaluated (the
 * frames fixture a11y/many.html: 71 frames, a scan takes 64; the rest
 * "not evaluated"): the target is "partial", never "done" (before session
 * 16 only a timeout made a target partial: this one was "done"), exit 1;
 * its summary and report say "not evaluated", its violations are those of
 * the frames scanned only; the index counts it partial. (A frame that
 * never answers: test_a11y scan_frame_hung.) */
static void t_partial(void)
{
    if (!ready())
        return;
    char a[200], targets[600], out[600], text[600], sd[400], st[32];
    testlib_world_origin(&world, a, sizeof a, "a.test");
    snprintf(sd, sizeof sd, "%s/partial", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(text, sizeof text, "{\"id\":\"many\",\"url\":\"%s/a11y/many.html\"}\n", a);
    if (!write_text(targets, text))
        return;
    run_out o = sweep_run(targets, out, 1, NULL, NULL, NULL);
    CHECK_INT(1, o.rc);
    CHECK_HAS(o.err, "[1/1] many: partial");
    if (!CHECK(strcmp(state_of(out, "many", st, sizeof st), "partial") == 0))
        test_fail_detail("state %s\nstderr:\n%s", st, o.err ? o.err : "");
    char *s = read_text(out, "many", "status.json");
    CHECK_HAS(s, "rules not evaluated somewhere (a frame not scanned: see notEvaluated)");
    free(s);
    s = read_text(out, "many", "summary.txt");
    CHECK_HAS(s, "64 of 71 frames scanned");
    CHECK_HAS(s, "Not evaluated (a timeout or a frame not scanned; neither passed nor "
              "failed): [\"");
    free(s);
    json_doc *d = read_json(out, "many", "a11y.json");
    const json_val *root = json_doc_root(d);
    CHECK_INT(7, json_len(json_get(root, "notEvaluated")));
    CHECK_INT(63, json_len(json_get(json_at(json_get(root, "violations"), 0), "nodes")));
    json_doc_free(d);
    d = read_json(out, NULL, "index.json");
    CHECK_INT(1, json_get_int(json_doc_root(d), "partial", -1));
    CHECK_INT(0, json_get_int(json_doc_root(d), "done", -1));
    json_doc_free(d);
    free(o.err);
}

/* Login failures, recorded: the retailer ends alice's session when it
 * sees it (the switch "expired": a redirect to its login page expiring the
 * cookie): "login diverged"; a target naming bob where the grant names
 * alice: refused before anything is restored. */
static void t_login(void)
{
    if (!ready() || !vault_setup())
        return;
    char r[200], targets[600], out[600], grant[600], text[1200], g[600], sd[400], st[32];
    testlib_world_origin(&world, r, sizeof r, "retail.test");
    snprintf(sd, sizeof sd, "%s/login", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(grant, sizeof grant, "%s/grant.json", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(text, sizeof text,
             "{\"id\":\"ended\",\"url\":\"%s/retail/home.html\",\"identity\":\"alice\"}\n"
             "{\"id\":\"bob\",\"url\":\"%s/retail/home.html?bob=1\",\"identity\":\"bob\"}\n",
             r, r);
    snprintf(g, sizeof g, "{\"task\":\"sweep\",\"origins\":[\"%s\"],\"identities\":"
             "{\"%s\":\"alice\"}}\n", r, r);
    if (!write_text(targets, text) || !write_text(grant, g))
        return;
    CHECK_INT(0, fixture_server_switch("expired"));
    run_out o = sweep_run(targets, out, 2, grant, NULL, NULL);
    fixture_server_switch("");
    CHECK_INT(1, o.rc);
    CHECK_HAS(state_of(out, "ended", st, sizeof st), "failed");
    CHECK_HAS(state_of(out, "bob", st, sizeof st), "failed");
    char *s = read_text(out, "ended", "status.json");
    CHECK_HAS(s, "\"reason\":\"login diverged: the page ");
    CHECK_LACKS(s, FIXTURE_RETAIL_SESSION);
    free(s);
    s = read_text(out, "bob", "status.json");
    CHECK_HAS(s, "\"reason\":\"login: the grant names \\\"alice\\\" for ");
    free(s);
    CHECK_INT(0, log_count("retail.test", "/retail/home.html?bob=1"));
    if (o.rc != 1)
        test_fail_detail("stderr:\n%s", o.err ? o.err : "");
    free(o.err);
}

/* Red team s16, R6-8: a target that names no identity is scanned signed
 * out, though the grant names alice for its origin and the vault holds
 * her session (before: restored as alice, its status saying identity
 * null, racing a target that names her for the lease). Beside it, two at
 * once, a target naming alice on the same origin is scanned signed in. */
static void t_anonymous(void)
{
    if (!ready() || !vault_setup())
        return;
    char r[200], targets[600], out[600], grant[600], text[1200], g[600], sd[400], st[32];
    testlib_world_origin(&world, r, sizeof r, "retail.test");
    snprintf(sd, sizeof sd, "%s/anon", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(grant, sizeof grant, "%s/grant.json", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(text, sizeof text,
             "{\"id\":\"anon\",\"url\":\"%s/retail/home.html?anon=1\"}\n"
             "{\"id\":\"named\",\"url\":\"%s/retail/home.html?named=1\",\"identity\":\"alice\"}\n",
             r, r);
    snprintf(g, sizeof g, "{\"task\":\"sweep\",\"origins\":[\"%s\"],\"identities\":"
             "{\"%s\":\"alice\"}}\n", r, r);
    if (!write_text(targets, text) || !write_text(grant, g))
        return;
    run_out o = sweep_run(targets, out, 2, grant, NULL, NULL);
    CHECK_INT(0, o.rc);
    CHECK_HAS(state_of(out, "anon", st, sizeof st), "done");
    CHECK_HAS(state_of(out, "named", st, sizeof st), "done");
    /* Signed out: the retailer sent it to its login page. */
    char *s = read_text(out, "anon", "a11y.json");
    CHECK_HAS(s, "/retail/login.html\"");
    if (!CHECK_LACKS(s, "/retail/home.html?anon=1\""))
        test_fail_detail("the anonymous target was scanned signed in");
    free(s);
    s = read_text(out, "anon", "status.json");
    CHECK_HAS(s, "\"identity\":null");
    free(s);
    s = read_text(out, "named", "a11y.json");
    CHECK_HAS(s, "/retail/home.html?named=1\"");
    free(s);
    check_no_file_has(out, FIXTURE_RETAIL_SESSION);
    if (o.rc != 0)
        test_fail_detail("stderr:\n%s", o.err ? o.err : "");
    free(o.err);
}

/* Resuming plays a target's trail again when the trail file changed since
 * the run that was done (red team s16, seen minor: "done before" compared
 * the trail's name only); unchanged, it is skipped. */
static void t_trail_changed(void)
{
    if (!ready() || !vault_setup())
        return;
    char r[200], targets[600], out[600], grant[600], lamp[600], text[1200], g[600], sd[400];
    testlib_world_origin(&world, r, sizeof r, "retail.test");
    snprintf(sd, sizeof sd, "%s/trailchg", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(grant, sizeof grant, "%s/grant.json", sd);
    snprintf(lamp, sizeof lamp, "%s/lamp.trail", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(text, sizeof text, "{\"id\":\"lamp\",\"url\":\"%s/retail/home.html?tc=1\","
             "\"identity\":\"alice\",\"trail\":\"lamp.trail\"}\n", r);
    snprintf(g, sizeof g, "{\"task\":\"sweep\",\"origins\":[\"%s\"],\"identities\":"
             "{\"%s\":\"alice\"}}\n", r, r);
    if (!write_text(targets, text) || !write_text(grant, g) || !lamp_trail(lamp, r))
        return;
    run_out o = sweep_run(targets, out, 1, grant, NULL, NULL);
    CHECK_INT(0, o.rc);
    CHECK_HAS(o.err, "[1/1] lamp: done");
    char *s = read_text(out, "lamp", "status.json");
    CHECK_HAS(s, "\"trail_sha256\":\"");
    free(s);
    free(o.err);
    o = sweep_run(targets, out, 1, grant, NULL, NULL);
    CHECK_INT(0, o.rc);
    CHECK_HAS(o.err, "[1/1] lamp: done before (skipped)");
    free(o.err);
    CHECK_INT(1, log_count("retail.test", "/retail/home.html?tc=1"));
    /* The trail edited (its header's date): played again. */
    char *t = test_read_file(lamp, NULL);
    char *at = t ? strstr(t, "2026-12-03T18:00:00Z") : NULL;
    if (!CHECK(at != NULL)) {
        free(t);
        return;
    }
    memcpy(at, "2026-12-04T18:00:00Z", 20);
    if (!write_text(lamp, t)) {
        free(t);
        return;
    }
    free(t);
    o = sweep_run(targets, out, 1, grant, NULL, NULL);
    CHECK_INT(0, o.rc);
    CHECK_HAS(o.err, "sweep: 1 targets, 0 done before, 1 to run");
    if (!CHECK_HAS(o.err, "[1/1] lamp: done in"))
        test_fail_detail("stderr:\n%s", o.err ? o.err : "");
    CHECK_INT(2, log_count("retail.test", "/retail/home.html?tc=1"));
    free(o.err);
}

/* cdpgate ARGS... (NULL-ended, after the binary and the host rules) with
 * the sweep's environment; its exit status, stderr into *err (new). */
static int cdpgate_run(const char *const *args, char **err)
{
    char rules[300];
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    const char *argv[24] = {testlib_cdpgate_bin(), rules, "--browser-arg=--site-per-process"};
    size_t n = 3;
    for (size_t i = 0; args[i] && n < 23; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    const char *env[] = {axe_env, retail_env, "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY",
                         NULL};
    fixture_child c;
    *err = NULL;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return -1;
    int rc = fixture_child_wait(&c, 240000);
    *err = fixture_child_stderr(&c);
    testlib_child_free(&c);
    return rc;
}

/* A report of a11y/shown.html (the page shows carol's session cookie in
 * an image's id and attribute and in a text): its two violations kept,
 * the value written "[session-value]" and in no file of dir. */
static void check_shown(const char *dir, const char *stem)
{
    char p[800];
    snprintf(p, sizeof p, "%s/%s.json", dir, stem);
    char *j = test_read_file(p, NULL);
    if (!CHECK(j != NULL)) {
        test_fail_detail("no %s", p);
        return;
    }
    CHECK_HAS(j, "\"id\":\"image-alt\"");
    CHECK_HAS(j, "\"id\":\"color-contrast\"");
    CHECK_HAS(j, "\"target\":[\"#s-[session-value]\"]");
    /* A data-* attribute goes through the URL rule first (session 18):
     * the value is bearer-shaped, so "[redacted]" before the session scrub. */
    CHECK_HAS(j, "data-session=\\\"[redacted]\\\"");
    CHECK_HAS(j, "Signed in with session [session-value]");
    snprintf(p, sizeof p, "%s/%s.html", dir, stem);
    char *h = test_read_file(p, NULL);
    CHECK_HAS(h, "[session-value]");
    free(j);
    free(h);
    check_no_file_has(dir, SHOWN_SESSION);
}

/* Reports written to -o / --a11y-dir hold no session value (issue 16,
 * point 1 of session 16: before, only the evidence copies were scrubbed):
 * the sweep (with its evidence), `cdpgate a11y URL -o DIR` and
 * browser_a11y_scan under `mcp --a11y-dir`, each on a page that shows the
 * session cookie the vault restored (identity carol). */
static void t_session_scrub(void)
{
    if (!ready() || !vault_setup())
        return;
    char a[200], sd[400], targets[600], grant[600], mgrant[600], out[600], ev[600], cli[600],
        mdir[600], url[400], text[1200], *err = NULL;
    testlib_world_origin(&world, a, sizeof a, "a.test");
    snprintf(url, sizeof url, "%s/a11y/shown.html", a);
    snprintf(sd, sizeof sd, "%s/shown", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(grant, sizeof grant, "%s/grant.json", sd);
    snprintf(mgrant, sizeof mgrant, "%s/mgrant.json", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(ev, sizeof ev, "%s/evidence", sd);
    snprintf(cli, sizeof cli, "%s/cli", sd);
    snprintf(mdir, sizeof mdir, "%s/mcp", sd);
    snprintf(text, sizeof text, "{\"id\":\"shown\",\"url\":\"%s\",\"identity\":\"carol\"}\n",
             url);
    if (!write_text(targets, text))
        return;
    snprintf(text, sizeof text, "{\"task\":\"shown\",\"origins\":[\"%s\"],\"identities\":"
             "{\"%s\":\"carol\"}}\n", a, a);
    if (!write_text(grant, text))
        return;
    snprintf(text, sizeof text, "{\"task\":\"shown\",\"tools\":[\"open\",\"snapshot\","
             "\"screenshot\",\"a11y_scan\"],\"origins\":[\"%s\"],\"identities\":"
             "{\"%s\":\"carol\"}}\n", a, a);
    if (!write_text(mgrant, text))
        return;
    /* The sweep, with its evidence. */
    run_out o = sweep_run(targets, out, 1, grant, ev, NULL);
    char st[32];
    if (!CHECK_INT(0, o.rc))
        test_fail_detail("stderr:\n%s", o.err ? o.err : "");
    CHECK_HAS(state_of(out, "shown", st, sizeof st), "done");
    char tdir[700];
    snprintf(tdir, sizeof tdir, "%s/shown", out);
    check_shown(tdir, "a11y");
    check_no_file_has(out, SHOWN_SESSION);
    check_no_file_has(ev, SHOWN_SESSION);
    free(o.err);
    /* cdpgate a11y URL -o DIR. */
    const char *args[] = {"--timeout", "90000", "--grant", grant, "a11y", url, "-o", cli, NULL};
    int rc = cdpgate_run(args, &err);
    if (!CHECK_INT(0, rc))
        test_fail_detail("stderr:\n%s", err ? err : "");
    free(err);
    check_shown(cli, "a11y");
    /* browser_a11y_scan under mcp --a11y-dir DIR. */
    mkdir(mdir, 0700);
    char rules[300];
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", mgrant, "--a11y-dir", mdir,
                          "mcp", NULL};
    const char *env[] = {axe_env, retail_env, "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY",
                         NULL};
    fixture_child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "test_sweep");
    snprintf(text, sizeof text, "{\"url\":\"%s\"}", url);
    free(testlib_mcp_tool(&c, 2, "browser_open", text));
    char *r = testlib_mcp_tool(&c, 3, "browser_a11y_scan", "{}");
    CHECK_HAS(r, "image-alt [critical]");
    CHECK_LACKS(r, SHOWN_SESSION);
    free(r);
    close(c.in);
    c.in = -1;
    fixture_child_wait(&c, 30000);
    testlib_child_free(&c);
    DIR *dp = opendir(mdir);
    struct dirent *e;
    int n = 0;
    while (dp && (e = readdir(dp)))
        if (strstr(e->d_name, ".json")) {
            char stem[300];
            snprintf(stem, sizeof stem, "%.*s", (int)(strlen(e->d_name) - 5), e->d_name);
            check_shown(mdir, stem);
            n++;
        }
    if (dp)
        closedir(dp);
    CHECK_INT(1, n);
}

/* Session values of 4 to 7 bytes in reports (issue 16, a session 17
 * left-over: only values of 8 bytes and more were scrubbed; the evidence
 * takes 4). a11y/shown-short.html shows dave's three short cookies:
 * "k7Q2x9" (letters and digits) is "[session-value]" where a whole token
 * (an image's id "c-k7Q2x9", a text) and in no file; "true" and "1234" (a
 * flag, a number) are kept, the page's other "1234" and the image's
 * data-flag="true" too, never blanked. `cdpgate a11y URL -o DIR`.
 * Failed before: k7Q2x9 in a11y.json and a11y.html. */
static void t_session_short(void)
{
    if (!ready() || !vault_setup())
        return;
    char a[200], sd[400], grant[600], cli[600], url[400], text[600], p[700], *err = NULL;
    testlib_world_origin(&world, a, sizeof a, "b.test");
    snprintf(url, sizeof url, "%s/a11y/shown-short.html", a);
    snprintf(sd, sizeof sd, "%s/short", world.root);
    mkdir(sd, 0700);
    snprintf(grant, sizeof grant, "%s/grant.json", sd);
    snprintf(cli, sizeof cli, "%s/cli", sd);
    snprintf(text, sizeof text, "{\"task\":\"short\",\"origins\":[\"%s\"],\"identities\":"
             "{\"%s\":\"dave\"}}\n", a, a);
    if (!write_text(grant, text))
        return;
    const char *args[] = {"--timeout", "90000", "--grant", grant, "a11y", url, "-o", cli, NULL};
    int rc = cdpgate_run(args, &err);
    if (!CHECK_INT(0, rc))
        test_fail_detail("stderr:\n%s", err ? err : "");
    free(err);
    snprintf(p, sizeof p, "%s/a11y.json", cli);
    char *j = test_read_file(p, NULL);
    snprintf(p, sizeof p, "%s/a11y.html", cli);
    char *h = test_read_file(p, NULL);
    CHECK_HAS(j, "\"id\":\"image-alt\"");
    CHECK_HAS(j, "\"id\":\"color-contrast\"");
    CHECK_HAS(j, "\"target\":[\"#c-[session-value]\"]");
    CHECK_HAS(j, "Code [session-value], remember me true, visits 1234, page 1234.");
    CHECK_HAS(j, "data-flag=\\\"true\\\"");
    CHECK_HAS(h, "Code [session-value], remember me true, visits 1234, page 1234.");
    free(j);
    free(h);
    check_no_file_has(cli, SHORT_CODE);
}

static void t_targets_file(void)
{
    static const struct {
        const char *text, *err;
    } BAD[] = {
        {"{\"url\":\"https://a.test/\",\"id\":\"../x\"}\n", "targets line 1: id:"},
        {"\n# c\n{\"url\":\"https://a.test/\",\"tagret\":1}\n",
         "targets line 3: unknown field \"tagret\""},
        {"{\"url\":\"https://a.test/\",\"url\":\"https://b.test/\"}\n", "targets line 1: not JSON"},
        {"{\"url\":\"https://a.test/\",\"id\":\"a\"}\n{\"url\":\"https://b.test/\",\"id\":\"a\"}\n",
         "targets line 2: id \"a\" again (line 1)"},
        {"{\"url\":\"file:///etc/passwd\"}\n", "targets line 1: url: not an http(s) URL"},
        {"{\"id\":\"x\"}\n", "targets line 1: no url"},
        {"# nothing\n\n", "no target in the file"},
        {"[1]\n", "targets line 1: not a JSON object"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        a11y_targets t;
        char why[300] = "";
        CHECK_INT(-1, a11y_targets_parse(BAD[i].text, strlen(BAD[i].text), &t, why, sizeof why));
        CHECK_HAS(why, BAD[i].err);
    }
    a11y_targets t;
    char why[300] = "";
    const char *ok = "{\"url\":\"https://a.test/\"}\n\n{\"url\":\"http://b.test:81/x\",\"id\":"
                     "\"b\",\"identity\":\"alice\",\"trail\":\"x.trail\"}\n{\"url\":\"https://c"
                     ".test/\"}";
    if (CHECK_INT(0, a11y_targets_parse(ok, strlen(ok), &t, why, sizeof why))) {
        CHECK_INT(3, (int)t.n);
        CHECK_HAS(t.v[0].id, "t001");
        CHECK_HAS(t.v[1].id, "b");
        CHECK_HAS(t.v[1].identity, "alice");
        CHECK_HAS(t.v[2].id, "t003");
        CHECK_INT(4, (int)t.v[2].line);
        a11y_targets_free(&t);
    }
    /* The command refuses a bad file before any browser starts. */
    if (!testlib_need_cdpgate())
        return;
    char path[400], cmd[1400];
    snprintf(path, sizeof path, "%s/bad-targets.jsonl", world.root);
    if (!write_text(path, "{\"url\":\"https://a.test/\",\"tagret\":1}\n"))
        return;
    snprintf(cmd, sizeof cmd, "%s a11y --sweep '%s' -o '%s/bad-out' --axe /nonexistent-axe.js",
             testlib_cdpgate_bin(), path, world.root);
    char *so = NULL, *se = NULL;
    int rc = fixture_run(cmd, &so, &se);
    CHECK(rc != 0);
    free(so);
    free(se);
    snprintf(cmd, sizeof cmd, "CDPGATE_AXE='%s' %s a11y --sweep '%s' -o '%s/bad-out'",
             axe_env + strlen("CDPGATE_AXE="), testlib_cdpgate_bin(), path, world.root);
    rc = fixture_run(cmd, &so, &se);
    CHECK_INT(2, rc);
    CHECK_HAS(se, "targets line 1: unknown field \"tagret\"");
    free(so);
    free(se);
}

/* Where a appears in s before b (both there). */
static bool before(const char *s, const char *a, const char *b)
{
    const char *x = s ? strstr(s, a) : NULL, *y = s ? strstr(s, b) : NULL;
    return x && y && x < y;
}

static void isolated_run(const char *a, const char *sd, int jobs)
{
    char targets[600], out[600], text[1500], st[32];
    snprintf(targets, sizeof targets, "%s/targets%d.jsonl", sd, jobs);
    snprintf(out, sizeof out, "%s/out%d", sd, jobs);
    snprintf(text, sizeof text,
             "{\"id\":\"plant\",\"url\":\"%s/a11y/iso.html?key=iso%d&n=%d&plant=1\"}\n"
             "{\"id\":\"check\",\"url\":\"%s/a11y/iso.html?key=iso%d&n=%d\"}\n",
             a, jobs, jobs, a, jobs, jobs);
    if (!write_text(targets, text))
        return;
    run_out o = sweep_run(targets, out, jobs, NULL, NULL, NULL);
    CHECK_INT(0, o.rc);
    CHECK_HAS(state_of(out, "plant", st, sizeof st), "done");
    CHECK_HAS(state_of(out, "check", st, sizeof st), "done");
    if (jobs == 2 && !CHECK(before(o.err, "check: started", "plant: done")))
        test_fail_detail("the two did not run at once:\n%s", o.err ? o.err : "");
    char *s = read_text(out, "plant", "a11y.json");
    CHECK_HAS(s, "#own-cookie");
    CHECK_HAS(s, "#own-storage");
    free(s);
    s = read_text(out, "check", "a11y.json");
    CHECK_HAS(s, "/a11y/iso.html?");      /* key= is shown redacted (url_redact) */
    if (!CHECK_LACKS(s, "#leak-"))
        test_fail_detail("--jobs %d: a target saw the state another one left", jobs);
    free(s);
    if (o.rc != 0)
        test_fail_detail("stderr:\n%s", o.err ? o.err : "");
    free(o.err);
}

static void t_isolated(void)
{
    if (!ready())
        return;
    char a[200], sd[400];
    testlib_world_origin(&world, a, sizeof a, "a.test");
    snprintf(sd, sizeof sd, "%s/iso", world.root);
    mkdir(sd, 0700);
    isolated_run(a, sd, 1);
    isolated_run(a, sd, 2);
}

static void t_browser_crash(void)
{
    if (!ready())
        return;
    char a[200], sd[400], targets[600], out[600], text[1200], st[32];
    testlib_world_origin(&world, a, sizeof a, "a.test");
    snprintf(sd, sizeof sd, "%s/crash", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(text, sizeof text,
             "{\"id\":\"die\",\"url\":\"%s/die\"}\n"
             "{\"id\":\"after\",\"url\":\"%s/a11y/iso.html?key=crash&n=1&plant=1\"}\n", a, a);
    if (!write_text(targets, text))
        return;
    die_parent_next = true;
    run_out o = sweep_run(targets, out, 1, NULL, NULL, NULL);
    CHECK_INT(1, o.rc);
    CHECK_HAS(o.err, "sweep: the browser ended");
    CHECK_HAS(state_of(out, "die", st, sizeof st), "failed");
    if (!CHECK(strcmp(state_of(out, "after", st, sizeof st), "done") == 0))
        test_fail_detail("after: %s\nstderr:\n%s", st, o.err ? o.err : "");
    char *s = read_text(out, "after", "a11y.json");
    CHECK_HAS(s, "#own-cookie");
    free(s);
    free(o.err);
}

static void t_hung(void)
{
    if (!ready())
        return;
    char a[200], sd[400], targets[600], out[600], text[1200], st[32];
    testlib_world_origin(&world, a, sizeof a, "a.test");
    snprintf(sd, sizeof sd, "%s/hung", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(text, sizeof text,
             "{\"id\":\"hung\",\"url\":\"%s/hold?ms=150000\"}\n"
             "{\"id\":\"beside\",\"url\":\"%s/a11y/iso.html?key=hung&n=1\"}\n", a, a);
    if (!write_text(targets, text))
        return;
    run_out o = sweep_run_x(targets, out, 2, NULL, NULL, NULL, "--timeout", "20000");
    CHECK_INT(1, o.rc);
    CHECK_HAS(state_of(out, "hung", st, sizeof st), "failed");
    CHECK_HAS(state_of(out, "beside", st, sizeof st), "done");
    if (!CHECK(before(o.err, "beside: done", "hung: failed")))
        test_fail_detail("stderr:\n%s", o.err ? o.err : "");
    free(o.err);
}

/* The router gives a paused request to its owner only (red team s18, the
 * sweep router's note): a shared worker's request names the worker's
 * target as its frame, which no page event announces. "worker"'s shared
 * worker GETs b.test (outside the grant) while "signed" (alice's restored
 * session: a privileged context) is loading; sent to "signed"'s child too,
 * its gate refused it as a request of a frame it does not know from a
 * privileged context (#leak-refused in "worker"'s report, and "worker"'s
 * barrier image waited 20 s alone). The b.test request reaching the server
 * shows the path was taken. */
static void t_worker_request(void)
{
    if (!ready() || !vault_setup())
        return;
    char r[200], a[200], targets[600], out[600], grant[600], text[1200], g[1000], sd[400];
    char st[32];
    testlib_world_origin(&world, r, sizeof r, "retail.test");
    testlib_world_origin(&world, a, sizeof a, "a.test");
    snprintf(sd, sizeof sd, "%s/worker", world.root);
    mkdir(sd, 0700);
    snprintf(targets, sizeof targets, "%s/targets.jsonl", sd);
    snprintf(grant, sizeof grant, "%s/grant.json", sd);
    snprintf(out, sizeof out, "%s/out", sd);
    snprintf(text, sizeof text,
             "{\"id\":\"signed\",\"url\":\"%s/retail/wait.html?key=wkr1&n=2\","
             "\"identity\":\"alice\"}\n"
             "{\"id\":\"worker\",\"url\":\"%s/a11y/shared-worker.html?key=wkr1&n=2&to=wkr2\"}\n",
             r, a);
    snprintf(g, sizeof g, "{\"task\":\"sweep\",\"origins\":[\"%s\",\"%s\"],\"identities\":"
             "{\"%s\":\"alice\"}}\n", r, a, r);
    if (!write_text(targets, text) || !write_text(grant, g))
        return;
    run_out o = sweep_run(targets, out, 2, grant, NULL, NULL);
    CHECK_INT(0, o.rc);
    CHECK_HAS(state_of(out, "signed", st, sizeof st), "done");
    CHECK_HAS(state_of(out, "worker", st, sizeof st), "done");
    CHECK(log_count("b.test", "/barrier?key=wkr2") == 1);
    char *s = read_text(out, "worker", "a11y.json");
    CHECK_HAS(s, "/a11y/shared-worker.html?");
    if (!CHECK_LACKS(s, "#leak-"))
        test_fail_detail("the worker's request was judged by the other target's child");
    free(s);
    if (o.rc != 0)
        test_fail_detail("stderr:\n%s", o.err ? o.err : "");
    free(o.err);
}

static const test_case TESTS[] = {
    {"targets_file", t_targets_file},
    {"sweep", t_sweep},
    {"resume", t_resume},
    {"axe_timeout", t_axe_timeout},
    {"login", t_login},
    {"session_scrub", t_session_scrub},
    {"session_short", t_session_short},
    {"partial", t_partial},
    {"anonymous", t_anonymous},
    {"trail_changed", t_trail_changed},
    {"isolated", t_isolated},
    {"browser_crash", t_browser_crash},
    {"hung", t_hung},
    {"worker_request", t_worker_request},
    {0},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    char cwd[300];
    if (!getcwd(cwd, sizeof cwd))
        return 1;
    snprintf(axe_env, sizeof axe_env,
             "CDPGATE_AXE=%s/tests/peers/node_modules/axe-core/axe.min.js", cwd);
    if (testlib_world_up(&world, "sweep", host_args, true) != 0)
        return 1;
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
