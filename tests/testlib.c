/*
 * testlib.c — the one test helper library (see testlib.h).
 */
#include "tests/testlib.h"
#include "json/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- text checks ---- */

int testlib_check_has(const char *text, const char *s, bool want, const char *file, int line)
{
    const char *t = text ? text : "";
    bool in = strstr(t, s) != NULL;
    int ok = test_check(in == want, file, line,
                        want ? "text has the expected part" : "text lacks the unexpected part");
    if (!ok)
        test_fail_detail("%s %s in:\n%.3000s", want ? "missing" : "unexpected", s, t);
    return ok;
}

void testlib_check_no_plants(const char *const *plants, const char *what, const char *text)
{
    const char *t = text ? text : "";
    for (const char *const *p = plants; *p; p++) {
        const char *hit = strstr(t, *p);
        if (!CHECK(hit == NULL)) {
            const char *from = hit - t > 600 ? hit - 600 : t;
            test_fail_detail("planted secret %s found in %s:\n...%.1200s", *p, what, from);
        }
    }
}

/* ---- time ---- */

int64_t testlib_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void testlib_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- scratch directories ---- */

int testlib_tempdir(const char *name, char *out, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    int n = snprintf(out, cap, "%s/cdpgate-%s-XXXXXX", tmp, name);
    if (n < 0 || (size_t)n >= cap) {
        fprintf(stderr, "testlib_tempdir: path too long under %s\n", tmp);
        return -1;
    }
    if (!mkdtemp(out)) {
        fprintf(stderr, "mkdtemp %s: %s\n", out, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- page scripts ---- */

char *testlib_eval_params(const char *expr, const char *opt)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "expression");
    json_w_str(&w, expr);
    json_w_key(&w, opt);
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

/* ---- the browser ---- */

bool testlib_need_browser(void)
{
    if (!fixture_browser()) {
        test_skip(TESTLIB_NO_BROWSER);
        return false;
    }
    return true;
}

cdp_browser *testlib_launch(const char *const *args, bool use_port)
{
    if (!testlib_need_browser())
        return NULL;
    cdp_launch_opts o = {0};
    o.args = args;
    o.use_port = use_port;
    cdp_err e = {0};
    cdp_browser *b = cdp_browser_launch(&o, &e);
    if (!CHECK(b != NULL))
        test_fail_detail("launch: %s", e.msg);
    return b;
}

/* ---- the world ---- */

int testlib_world_up(testlib_world *w, const char *name, const char *const *browser_args,
                     bool log_requests)
{
    memset(w, 0, sizeof *w);
    w->args = browser_args;
    if (testlib_tempdir(name, w->root, sizeof w->root) != 0)
        return -1;
    /* The trail key of what this run records and replays (and of the
     * cdpgate processes it starts): the scratch directory's, never the
     * user's own (replay_key_load) */
    char key[400];
    snprintf(key, sizeof key, "%s/trail-key", w->root);
    setenv("CDPGATE_TRAIL_KEY", key, 1);
    if (log_requests) {
        snprintf(w->log, sizeof w->log, "%s/requests.log", w->root);
        fixture_server_log(w->log);
    }
    w->port = fixture_server_start(&w->server_pid);
    if (w->port <= 0) {
        fprintf(stderr, "cannot start the fixture server\n");
        w->port = 0;
        return -1;
    }
    return 0;
}

cdp_browser *testlib_world_browser(testlib_world *w)
{
    if (!w->browser)
        w->browser = testlib_launch(w->args, false);
    return w->browser;
}

void testlib_world_down(testlib_world *w)
{
    cdp_browser_free(w->browser);
    w->browser = NULL;
    if (w->port > 0)
        fixture_server_stop(w->server_pid);
    w->port = 0;
    if (!*w->root)
        return;
    if (getenv("CDPGATE_KEEP"))
        fprintf(stderr, "kept %s\n", w->root);
    else
        test_rm_rf(w->root);
}

void testlib_world_url(const testlib_world *w, char *out, size_t cap, const char *host,
                       const char *path)
{
    fixture_url(out, cap, w->port, host, path);
}

void testlib_world_origin(const testlib_world *w, char *out, size_t cap, const char *host)
{
    snprintf(out, cap, "http://%s:%d", host, w->port);
}

/* ---- the rig ---- */

gate *testlib_gate(const gate_grant *g, const gate_opts *go)
{
    gate_err ge = {{0}};
    gate *gt = gate_new(g, go, &ge);
    if (!CHECK(gt != NULL))
        test_fail_detail("gate_new: %s", ge.msg);
    return gt;
}

snap_agent *testlib_agent(cdp_browser *b, const snap_opts *o)
{
    cdp_err e = {0};
    snap_agent *a = snap_agent_new(b, o, &e);
    if (!CHECK(a != NULL))
        test_fail_detail("agent: %s", e.msg);
    return a;
}

bool testlib_rig_up(testlib_rig *x, testlib_world *w, const gate_grant *g,
                    const gate_opts *go, const snap_opts *o)
{
    memset(x, 0, sizeof *x);
    cdp_browser *b = testlib_world_browser(w);
    if (!b)
        return false;
    if (g) {
        x->g = testlib_gate(g, go);
        if (!x->g)
            return false;
    }
    snap_opts so = {0};
    if (o)
        so = *o;
    if (x->g)
        so.gate = x->g;
    x->a = testlib_agent(b, &so);
    return x->a != NULL;
}

void testlib_rig_down(testlib_rig *x)
{
    snap_agent_free(x->a);
    gate_free(x->g);
    x->a = NULL;
    x->g = NULL;
}

/* ---- vault ---- */

vault *testlib_vault_new(const char *root, char *dir, size_t cap)
{
    static int seq;             /* test support only: numbers the stores */
    snprintf(dir, cap, "%s/vault%d", root, ++seq);
    char err[300] = "";
    vault *v = vault_open(dir, NULL, err, sizeof err);
    if (!CHECK(v != NULL))
        test_fail_detail("vault_open: %s", err);
    return v;
}

int testlib_vault_plant(vault *v, const char *origin, const char *identity,
                        const char *state, int64_t expiry)
{
    char err[300] = "";
    int rc = vault_put(v, origin, identity, (const uint8_t *)state, strlen(state), expiry,
                       err, sizeof err);
    if (!CHECK_INT(0, rc)) {
        test_fail_detail("vault_put %s: %s", origin, err);
        return -1;
    }
    return 0;
}

int testlib_bank_state(char *out, size_t cap, const char *origin, const char *session,
                       const char *extra_cookies)
{
    int n = snprintf(out, cap,
        "{\"version\":1,\"cookies\":["
        "{\"name\":\"bank_session\",\"value\":\"%s\",\"domain\":\"bank.test\",\"path\":\"/\","
        "\"httpOnly\":true,\"secure\":false,\"sameSite\":\"Lax\"},"
        "{\"name\":\"bank_pref\",\"value\":\"" FIXTURE_BANK_PREF "\",\"domain\":\"bank.test\","
        "\"path\":\"/\",\"httpOnly\":false,\"secure\":false,\"expires\":%lld}%s%s],"
        "\"localStorage\":{\"%s\":[[\"bank_token\",\"" FIXTURE_BANK_TOKEN "\"]]}}",
        session, (long long)time(NULL) + 86400, extra_cookies ? "," : "",
        extra_cookies ? extra_cookies : "", origin);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

/* ---- a cdpgate child and the MCP test client ---- */

const char *testlib_cdpgate_bin(void)
{
    const char *b = getenv("CDPGATE_BIN");
    return b && *b ? b : "build/cdpgate";
}

bool testlib_need_cdpgate(void)
{
    if (access(testlib_cdpgate_bin(), X_OK) != 0) {
        test_skip("the cdpgate binary is not built (make)");
        return false;
    }
    return true;
}

int testlib_child_spawn(fixture_child *c, const char *dir, const char *const *env,
                        const char *const *argv, bool fd3)
{
    static int seq;             /* test support only: numbers the stderr files */
    char errfile[300];
    snprintf(errfile, sizeof errfile, "%s/child%d.err", dir, ++seq);
    return fixture_child_spawn(c, errfile, env, argv, fd3);
}

void testlib_child_free(fixture_child *c)
{
    if (c->pid > 0)
        fixture_child_wait(c, 5000);
    if (c->out >= 0)
        close(c->out);
    c->out = -1;
    free(c->got);
    c->got = NULL;
}

bool testlib_child_stderr_wait(fixture_child *c, const char *needle, int timeout_ms)
{
    int64_t end = testlib_now_ms() + timeout_ms;
    for (;;) {
        char *e = fixture_child_stderr(c);
        bool ok = e && strstr(e, needle) != NULL;
        free(e);
        if (ok || testlib_now_ms() >= end)
            return ok;
        testlib_sleep_ms(20);
    }
}

bool testlib_mcp_send(fixture_child *c, int id, const char *method, const char *params)
{
    char line[4096];
    int n = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\","
                     "\"params\":%s}\n", id, method, params);
    if (!CHECK(n > 0 && (size_t)n < sizeof line))
        return false;
    return CHECK(write(c->in, line, (size_t)n) == n);
}

char *testlib_mcp_response(fixture_child *c, size_t from, int id, int timeout_ms)
{
    char want[40];
    snprintf(want, sizeof want, "\"id\":%d,\"", id);
    const char *p = fixture_child_read_until(c, from, want, timeout_ms);
    if (!CHECK(p != NULL)) {
        test_fail_detail("no answer to request %d", id);
        return calloc(1, 1);
    }
    while (p > c->got && p[-1] != '\n')
        p--;
    size_t off = (size_t)(p - c->got);      /* read_until may move c->got */
    const char *e = fixture_child_read_until(c, off, "\n", timeout_ms);
    p = c->got + off;
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char *r = malloc(len + 1);
    if (r) {
        memcpy(r, p, len);
        r[len] = 0;
    }
    return r ? r : calloc(1, 1);
}

char *testlib_mcp_request(fixture_child *c, int id, const char *method, const char *params,
                          int timeout_ms)
{
    size_t from = c->ngot;
    if (!testlib_mcp_send(c, id, method, params)) {
        test_fail_detail("request %s %.300s not sent", method, params);
        return calloc(1, 1);
    }
    return testlib_mcp_response(c, from, id, timeout_ms);
}

char *testlib_mcp_tool(fixture_child *c, int id, const char *name, const char *args)
{
    char params[3600];
    snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", name, args);
    return testlib_mcp_request(c, id, "tools/call", params, 60000);
}

void testlib_mcp_init(fixture_child *c, const char *client)
{
    char params[300];
    snprintf(params, sizeof params, "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
             "\"clientInfo\":{\"name\":\"%s\",\"version\":\"1\"}}", client);
    char *r = testlib_mcp_request(c, 1, "initialize", params, 20000);
    CHECK_HAS(r, "cdpgate");
    free(r);
    static const char N[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    CHECK(write(c->in, N, sizeof N - 1) == (ssize_t)(sizeof N - 1));
}

bool testlib_replay_output(const char *json, const char *name, const char *value)
{
    char head[300], tail[1200];
    snprintf(head, sizeof head, "\"%s\":\"<<<page-content nonce=", name);
    snprintf(tail, sizeof tail, ">>>\\n%s\\n<<<end page-content nonce=", value);
    const char *outs = json ? strstr(json, "\"outputs\":{") : NULL;
    const char *h = outs ? strstr(outs, head) : NULL;
    const char *t = h ? strstr(h + strlen(head), ">>>") : NULL;
    if (!t || strncmp(t, tail, strlen(tail)) != 0)
        return false;
    /* the same nonce closes it, then the value's quote */
    const char *n1 = h + strlen(head), *n2 = t + strlen(tail);
    size_t nl = (size_t)(t - n1);
    return strncmp(n1, n2, nl) == 0 && strncmp(n2 + nl, ">>>\"", 4) == 0;
}

void testlib_mcp_ref(const char *text, const char *needle, char *out, size_t cap)
{
    out[0] = 0;
    for (const char *p = text ? strstr(text, needle) : NULL; p; p = strstr(p + 1, needle)) {
        const char *e = strstr(p, "[e");
        const char *nl = strstr(p, "\\n");
        if (e && (!nl || e < nl)) {
            snprintf(out, cap, "%.*s", (int)strcspn(e + 1, "]"), e + 1);
            return;
        }
    }
}
