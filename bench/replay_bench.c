/*
 * replay_bench.c — record and replay (issue 14, point 7), for `make bench`:
 * the price-watch task on the login-walled retailer of the tests
 * (tests/fixtures/retail/, served by tests/fixture.c on loopback; the
 * session restored from a vault by the grant's identity), done
 *   - live, as an agent does it: `cdpgate mcp --record` driven over stdio
 *     by a scripted client (open, click, snapshot, read: each tool call is
 *     a model turn in real use; the calls are counted and timed);
 *   - replayed by the host: `cdpgate replay TRAIL`, one command, zero
 *     calls, after the price changed (its output must be the new price);
 *   - in the library, on one browser: the same three actions' own times
 *     (snap_open, snap_click, snap_observe of the read; the look that finds
 *     the click's ref is not counted) against replay_run of the trail,
 *     which re-finds each target, checks it and the effects: the ratio
 *     (target: at most 1.2) and the overhead per step in ms.
 * Figures are medians of N runs, printed, not asserted; OUTDIR/replay.json
 * keeps them.
 *
 *   replay_bench CDPGATE_BIN OUTDIR N
 * BENCH_QUICK=1 (bench/smoke.sh): each wait may take 60 s (a shared CI
 * machine), so the program is known to run; its figures are rough.
 */
#include "cdp/cdp.h"
#include "gate/gate.h"
#include "replay/replay.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"
#include "tests/fixture.h"
#include "bench/benchlib.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUNS_MAX 21

typedef struct {
    const char *bin;
    char root[64], data[128], env[160], grant[128], trail[128], origin[128], home[256];
    char rules[200];
    int wait_ms;
} bench;

/* ---- the live side: a scripted MCP client ---- */

/* The JSON-RPC response line for id (new), "" when none came. */
static char *mcp_call(bench *B, fixture_child *c, int id, const char *method, const char *params)
{
    char line[4096], want[40];
    int n = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\","
                     "\"params\":%s}\n", id, method, params);
    size_t from = c->ngot;
    if (n <= 0 || (size_t)n >= sizeof line || write(c->in, line, (size_t)n) != n)
        return calloc(1, 1);
    snprintf(want, sizeof want, "\"id\":%d,\"", id);
    const char *p = fixture_child_read_until(c, from, want, B->wait_ms);
    if (!p)
        return calloc(1, 1);
    while (p > c->got && p[-1] != '\n')
        p--;
    size_t off = (size_t)(p - c->got);
    const char *e = fixture_child_read_until(c, off, "\n", B->wait_ms);
    p = c->got + off;
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char *r = malloc(len + 1);
    if (r) {
        memcpy(r, p, len);
        r[len] = 0;
    }
    return r ? r : calloc(1, 1);
}

static char *mcp_tool(bench *B, fixture_child *c, int id, const char *name, const char *args)
{
    char params[1200];
    snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", name, args);
    return mcp_call(B, c, id, "tools/call", params);
}

/* The ref on the (JSON-escaped) snapshot line holding needle, into out. */
static void ref_of(const char *text, const char *needle, char *out, size_t cap)
{
    out[0] = 0;
    const char *p = text ? strstr(text, needle) : NULL;
    const char *e = p ? strstr(p, "[e") : NULL, *nl = p ? strstr(p, "\\n") : NULL;
    if (e && (!nl || e < nl))
        snprintf(out, cap, "%.*s", (int)strcspn(e + 1, "]"), e + 1);
}

typedef struct {
    double session_ms;   /* spawn to exit: browser start and all calls */
    double calls_ms;     /* the tool calls' own times, summed */
    int calls;
} live_run;

/* The task once through `cdpgate mcp --record TRAIL`. 0 or -1. */
static int live_once(bench *B, live_run *L)
{
    memset(L, 0, sizeof *L);
    unlink(B->trail);
    const char *env[] = {B->env, "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {B->bin, B->rules, "--grant", B->grant, "--record", B->trail, "mcp",
                          NULL};
    char errf[128];
    snprintf(errf, sizeof errf, "%s/mcp.err", B->root);
    fixture_child c;
    double t0 = bench_now_ms();
    if (fixture_child_spawn(&c, errf, env, argv, false) != 0)
        return -1;
    char *r = mcp_call(B, &c, 1, "initialize", "{\"protocolVersion\":\"2025-06-18\","
                       "\"capabilities\":{},\"clientInfo\":{\"name\":\"replay_bench\","
                       "\"version\":\"1\"}}");
    bool ok = strstr(r, "cdpgate") != NULL;
    free(r);
    static const char N[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    ok = ok && write(c.in, N, sizeof N - 1) == (ssize_t)(sizeof N - 1);
    char args[400], ref[16] = "";
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", B->home);
    struct {
        const char *tool, *want;
    } S[] = {{"browser_open", "auth=yes"}, {"browser_click", "navigated to"},
             {"browser_snapshot", "Price:"}, {"browser_read", "\"recorded\":true"}};
    for (int i = 0; ok && i < 4; i++) {
        if (i == 1)
            snprintf(args, sizeof args, "{\"ref\":\"%s\"}", ref);
        if (i == 2)
            snprintf(args, sizeof args, "{}");
        if (i == 3)
            snprintf(args, sizeof args, "{\"query\":\"Price:\",\"name\":\"price\"}");
        double t = bench_now_ms();
        r = mcp_tool(B, &c, 2 + i, S[i].tool, args);
        L->calls_ms += bench_now_ms() - t;
        L->calls++;
        ok = strstr(r, S[i].want) && !strstr(r, "\"isError\":true");
        if (!ok)
            fprintf(stderr, "replay_bench: %s: %.600s\n", S[i].tool, r);
        if (i == 0)
            ref_of(r, "link \\\"Desk lamp", ref, sizeof ref);
        free(r);
    }
    int rc = fixture_child_wait(&c, B->wait_ms);
    L->session_ms = bench_now_ms() - t0;
    free(c.got);
    if (c.out >= 0)
        close(c.out);
    return ok && rc == 0 ? 0 : -1;
}

/* ---- the host: `cdpgate replay`, one command ---- */

/* One `cdpgate replay TRAIL`: its wall time in ms, or -1 when it did not
 * end done with the new price as its output. */
static double replay_once(bench *B)
{
    const char *env[] = {B->env, "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {B->bin, B->rules, "--grant", B->grant, "replay", B->trail, NULL};
    char errf[128];
    snprintf(errf, sizeof errf, "%s/replay.err", B->root);
    fixture_child c;
    double t0 = bench_now_ms();
    if (fixture_child_spawn(&c, errf, env, argv, false) != 0)
        return -1;
    fixture_child_read_until(&c, 0, "\n", B->wait_ms);
    int rc = fixture_child_wait(&c, B->wait_ms);
    double ms = bench_now_ms() - t0;
    /* the output framed in the page-content markers (red team s14, R4-6) */
    bool ok = rc == 0 && c.got && strstr(c.got, "\"outputs\":{\"price\":\"<<<page-content ") &&
              strstr(c.got, ">>>\\nPrice: $19.99\\n<<<end page-content nonce=");
    if (!ok)
        fprintf(stderr, "replay_bench: cdpgate replay exited %d: %.600s\n", rc,
                c.got ? c.got : "");
    free(c.got);
    if (c.out >= 0)
        close(c.out);
    return ok ? ms : -1;
}

/* ---- the library: the actions' own times against replay_run ---- */

typedef struct {
    cdp_browser *b;
    gate *g;
    vault *v;
    snap_agent *a;
} lib;

static int lib_up(bench *B, lib *L)
{
    memset(L, 0, sizeof *L);
    const char *args[] = {FIXTURE_HOST_RULES, NULL};
    cdp_launch_opts lo = {0};
    lo.browser = getenv("CDPGATE_BROWSER");
    lo.args = args;
    cdp_err e = {0};
    char err[300] = "", vdir[200];
    snprintf(vdir, sizeof vdir, "%s/cdpgate", B->data);
    gate_grant *gg = NULL;
    gate_err ge = {{0}};
    if (gate_grant_load(B->grant, &gg, &ge) != 0) {
        fprintf(stderr, "replay_bench: grant: %s\n", ge.msg);
        return -1;
    }
    gate_opts go = {.confirm = bench_allow_hook};
    L->g = gate_new(gg, &go, &ge);
    gate_grant_free(gg);
    L->v = vault_open(vdir, NULL, err, sizeof err);
    L->b = L->g && L->v ? cdp_browser_launch(&lo, &e) : NULL;
    snap_opts so = {0};
    so.gate = L->g;
    so.vault = L->v;
    so.timeout_ms = B->wait_ms;
    L->a = L->b ? snap_agent_new(L->b, &so, &e) : NULL;
    if (!L->a)
        fprintf(stderr, "replay_bench: library side: %s%s%s\n", ge.msg, err, e.msg);
    return L->a ? 0 : -1;
}

static void lib_down(lib *L)
{
    snap_agent_free(L->a);
    cdp_browser_free(L->b);
    gate_free(L->g);
    vault_close(L->v);
}

/* The three actions as an agent's calls: their own times summed (ms), or
 * -1. The look that finds the click's ref is not counted. */
static double actions_once(bench *B, lib *L, double own[3])
{
    snap_result r = {0};
    double t = bench_now_ms();
    int rc = snap_open(L->a, B->home, false, &r);
    own[0] = bench_now_ms() - t;
    snap_result_free(&r);
    char ref[16] = "";
    if (!rc && !(rc = snap_observe(L->a, &(snap_query){0}, &r))) {
        const char *p = r.text ? strstr(r.text, "link \"Desk lamp\" [") : NULL;
        if (p)
            snprintf(ref, sizeof ref, "%.*s", (int)strcspn(p + 18, "]"), p + 18);
    }
    snap_result_free(&r);
    if (rc || !*ref)
        return -1;
    t = bench_now_ms();
    rc = snap_click(L->a, ref, NULL, &r);
    own[1] = bench_now_ms() - t;
    snap_result_free(&r);
    if (rc)
        return -1;
    t = bench_now_ms();
    rc = snap_observe(L->a, &(snap_query){.text = true, .query = "Price:"}, &r);
    own[2] = bench_now_ms() - t;
    bool ok = !rc && r.text && strstr(r.text, "$19.99");
    snap_result_free(&r);
    return ok ? own[0] + own[1] + own[2] : -1;
}

/* replay_run of the trail (loaded before the clock starts): ms, or -1. */
static double replay_run_once(bench *B, lib *L)
{
    replay_err err = {0};
    replay_trail *t = replay_trail_load(B->trail, &err);
    if (!t) {
        fprintf(stderr, "replay_bench: %s\n", err.msg);
        return -1;
    }
    replay_opts ro = {0};
    char *json = NULL;
    double t0 = bench_now_ms();
    int st = replay_run(L->a, L->g, t, &ro, &json);
    double ms = bench_now_ms() - t0;
    bool ok = st == REPLAY_RUN_DONE && json && strstr(json, "Price: $19.99");
    if (!ok)
        fprintf(stderr, "replay_bench: replay_run: %.600s\n", json ? json : "");
    free(json);
    replay_trail_free(t);
    return ok ? ms : -1;
}

/* ---- set-up: scratch, vault, grant ---- */

static int setup(bench *B, int port)
{
    snprintf(B->root, sizeof B->root, "/tmp/cdpgate-replay-bench-XXXXXX");
    if (!mkdtemp(B->root))
        return -1;
    snprintf(B->data, sizeof B->data, "%s/data", B->root);
    snprintf(B->env, sizeof B->env, "XDG_DATA_HOME=%s", B->data);
    /* the trail key of the recording (the cdpgate children) and of the
     * replays played here: one, in the scratch directory */
    char key[200];
    snprintf(key, sizeof key, "%s/trail-key", B->root);
    setenv("CDPGATE_TRAIL_KEY", key, 1);
    snprintf(B->grant, sizeof B->grant, "%s/grant.json", B->root);
    snprintf(B->trail, sizeof B->trail, "%s/price-watch.trail", B->root);
    snprintf(B->rules, sizeof B->rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    fixture_url(B->origin, sizeof B->origin, port, "retail.test", "");
    fixture_url(B->home, sizeof B->home, port, "retail.test", "/retail/home.html");
    mkdir(B->data, 0700);
    char vdir[200], err[300] = "", state[600];
    snprintf(vdir, sizeof vdir, "%s/cdpgate", B->data);
    vault *v = vault_open(vdir, NULL, err, sizeof err);
    int n = snprintf(state, sizeof state, "{\"version\":1,\"cookies\":[{\"name\":"
                     "\"retail_session\",\"value\":\"" FIXTURE_RETAIL_SESSION "\",\"domain\":"
                     "\"retail.test\",\"path\":\"/\",\"httpOnly\":true,\"secure\":false,"
                     "\"sameSite\":\"Lax\"}],\"localStorage\":{}}");
    int rc = v ? vault_put(v, B->origin, "alice", (const uint8_t *)state, (size_t)n, 0, err,
                           sizeof err) : -1;
    vault_close(v);
    FILE *f = rc == 0 ? fopen(B->grant, "w") : NULL;
    if (f) {
        fprintf(f, "{\"task\":\"price-watch\",\"origins\":[\"%s\"],\"identities\":"
                "{\"%s\":\"alice\"}}\n", B->origin, B->origin);
        rc = fclose(f);
    }
    if (!f || rc)
        fprintf(stderr, "replay_bench: set-up: %s\n", err);
    return f && !rc ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: replay_bench CDPGATE_BIN OUTDIR N\n");
        return 2;
    }
    bench B = {.bin = argv[1], .wait_ms = 30000};
    int n = (int)strtol(argv[3], NULL, 10);
    const char *quick = getenv("BENCH_QUICK");
    if (quick && strcmp(quick, "1") == 0) {
        n = 1;
        B.wait_ms = 60000;
    }
    if (n < 1 || n > RUNS_MAX)
        n = 5;
    pid_t srv;
    int port = fixture_server_start(&srv);
    if (port <= 0 || setup(&B, port) != 0) {
        fprintf(stderr, "replay_bench: no fixture server or scratch directory\n");
        fixture_server_stop(srv);
        return 1;
    }
    double sess[RUNS_MAX], calls_ms[RUNS_MAX], rep[RUNS_MAX], own[RUNS_MAX], run[RUNS_MAX];
    double act[3][RUNS_MAX];
    int ncalls = 0, rc = 1;
    live_run L;
    for (int k = 0; k < n; k++) {
        if (live_once(&B, &L) != 0)
            goto out;
        sess[k] = L.session_ms;
        calls_ms[k] = L.calls_ms;
        ncalls = L.calls;
    }
    fixture_server_switch("price2");     /* the price changed since the recording */
    for (int k = 0; k < n; k++)
        if ((rep[k] = replay_once(&B)) < 0)
            goto out;
    lib W;
    if (lib_up(&B, &W) != 0) {
        lib_down(&W);
        goto out;
    }
    /* Warm the browser's cache of the pages once, then alternate the order. */
    double o3[3];
    bool ok = actions_once(&B, &W, o3) >= 0;
    for (int k = 0; ok && k < n; k++) {
        if (k % 2) {
            ok = (run[k] = replay_run_once(&B, &W)) >= 0 &&
                 (own[k] = actions_once(&B, &W, o3)) >= 0;
        } else {
            ok = (own[k] = actions_once(&B, &W, o3)) >= 0 &&
                 (run[k] = replay_run_once(&B, &W)) >= 0;
        }
        for (int i = 0; i < 3; i++)
            act[i][k] = o3[i];
    }
    lib_down(&W);
    if (!ok)
        goto out;
    double ms = bench_median(sess, n), mc = bench_median(calls_ms, n);
    double mr = bench_median(rep, n), mo = bench_median(own, n), mu = bench_median(run, n);
    printf("== record and replay: the price-watch task (login-walled retailer, session from "
           "the vault; ms, median of %d; lower is better)\n", n);
    printf("  %-48s %4d calls %9.1f ms (calls) %9.1f ms (session, browser start incl.)\n",
           "live: cdpgate mcp, a scripted agent", ncalls, mc, ms);
    printf("  %-48s %4d calls %9s    %9.1f ms (one command, browser start incl.)\n",
           "replay: cdpgate replay TRAIL (new price read)", 0, "", mr);
    printf("  %-48s %9.1f  (open %.1f, click %.1f, read %.1f)\n",
           "library: the 3 actions' own times, summed", mo, bench_median(act[0], n),
           bench_median(act[1], n), bench_median(act[2], n));
    printf("  %-48s %9.1f\n", "library: replay_run of the same 3 steps", mu);
    printf("  %-48s %9.3f   (target: at most 1.2)\n", "replay_run / actions' own times", mu / mo);
    printf("  %-48s %9.1f ms\n", "overhead per step (re-find, checks, effects)", (mu - mo) / 3);
    printf("  with a model: each live call is a model turn (anchor: 2-4 s each): live ~%d turns "
           "+ %.1f s of driver, replay 0 turns + %.1f s\n", ncalls, mc / 1000, mr / 1000);
    char jp[300];
    snprintf(jp, sizeof jp, "%s/replay.json", argv[2]);
    FILE *jf = fopen(jp, "w");
    if (jf) {
        fprintf(jf, "{\"live_calls\":%d,\"live_calls_ms\":%.1f,\"live_session_ms\":%.1f,"
                "\"replay_calls\":0,\"replay_cmd_ms\":%.1f,\"actions_ms\":%.1f,"
                "\"replay_run_ms\":%.1f,\"ratio\":%.3f,\"overhead_per_step_ms\":%.1f}\n",
                ncalls, mc, ms, mr, mo, mu, mu / mo, (mu - mo) / 3);
        fclose(jf);
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "replay_bench: failed (stderr of the last cdpgate: %s/*.err)\n", B.root);
    fixture_server_stop(srv);
    if (!rc)
        bench_rm_tree(B.root, 6);
    return rc;
}
