/*
 * test_cdp.c — the CDP connection, launch and attach, against real headless
 * Chromium on fixture pages served on loopback under several host names,
 * and against fake browsers that misbehave (garbage, early exit, silence).
 */
#include "tests/testlib.h"
#include "tests/json_canon.h"
#include "base/base.h"
#include "cdp/cdp.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *host_args[] = {FIXTURE_HOST_RULES, "--site-per-process", NULL};
static testlib_world world;     /* fixture server */

static char *eval_on(cdp_page *p, const char *expr)
{
    char *out = NULL;
    cdp_err e = {0};
    if (!CHECK(cdp_page_eval(p, expr, 10000, &out, &e) == 0))
        test_fail_detail("eval %s: %s", expr, e.msg);
    return out;
}

/* ---- discovery ---- */

static void t_find_explicit_missing(void)
{
    char path[256];
    cdp_err e = {0};
    CHECK_INT(CDP_ENOTFOUND, cdp_browser_find("/nonexistent/chrome", path, sizeof path, &e));
    CHECK(strstr(e.msg, "/nonexistent/chrome") != NULL);
    CHECK(strstr(e.msg, "not an executable") != NULL);
}

static void t_find_env_and_path(void)
{
    char dir[128];
    CHECK_INT(0, testlib_tempdir("find", dir, sizeof dir));
    char exe[300];
    snprintf(exe, sizeof exe, "%s/google-chrome", dir);
    FILE *f = fopen(exe, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("#!/bin/sh\nexit 0\n", f);
        fclose(f);
    }
    chmod(exe, 0755);
    char path[300];
    cdp_err e = {0};
    /* CDPGATE_BROWSER wins over PATH. */
    setenv("CDPGATE_BROWSER", exe, 1);
    CHECK_INT(0, cdp_browser_find(NULL, path, sizeof path, &e));
    CHECK_STR(exe, path);
    /* An explicit path wins over CDPGATE_BROWSER. */
    setenv("CDPGATE_BROWSER", "/nonexistent", 1);
    CHECK_INT(0, cdp_browser_find(exe, path, sizeof path, &e));
    CHECK_STR(exe, path);
    /* A bad CDPGATE_BROWSER is an error naming it, not a silent fallback. */
    CHECK_INT(CDP_ENOTFOUND, cdp_browser_find(NULL, path, sizeof path, &e));
    CHECK(strstr(e.msg, "CDPGATE_BROWSER") != NULL);
    unsetenv("CDPGATE_BROWSER");
    /* The usual names on PATH. */
    char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", dir, 1);
    CHECK_INT(0, cdp_browser_find(NULL, path, sizeof path, &e));
    CHECK_STR(exe, path);
    if (old) {
        setenv("PATH", old, 1);
        free(old);
    }
    unlink(exe);
    rmdir(dir);
}

/* ---- launch, pages, sessions ---- */

static void t_pipe_launch_eval(void)
{
    if (!testlib_need_browser())
        return;
    cdp_browser *b = testlib_launch(host_args, false);
    if (!b)
        return;
    CHECK_STR("pipe", cdp_conn_transport(cdp_browser_conn(b)));
    CHECK(strstr(cdp_browser_product(b), "Chrome") != NULL);
    CHECK_STR("", cdp_browser_ws_url(b));
    char profile[1024];
    snprintf(profile, sizeof profile, "%s", cdp_browser_profile_dir(b));
    struct stat st;
    CHECK(stat(profile, &st) == 0);
    cdp_err e = {0};
    cdp_page *p = cdp_page_open(b, 10000, &e);
    if (!CHECK(p != NULL)) {
        test_fail_detail("cdp_page_open: %s", e.msg);
        cdp_browser_free(b);
        return;
    }
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", "/index.html");
    CHECK_INT(0, cdp_page_navigate(p, url, 10000, &e));
    char *v = eval_on(p, "document.title + '|' + location.host");
    char want[128];
    snprintf(want, sizeof want, "\"Fixture home|a.test:%d\"", world.port);
    CHECK_STR(want, v);
    free(v);
    v = eval_on(p, "({n: 1.5, s: 'x\\u2028y', a: [true, null]})");
    CHECK_STR("{\"n\":1.5,\"s\":\"x\\u2028y\",\"a\":[true,null]}", v);
    free(v);
    v = eval_on(p, "undefined");
    CHECK_STR("null", v);
    free(v);
    v = eval_on(p, "NaN");
    CHECK_STR("\"NaN\"", v);
    free(v);
    v = eval_on(p, "new Promise(r => setTimeout(() => r(7), 50))");
    CHECK_STR("7", v);
    free(v);
    /* A thrown exception is an error carrying its text. */
    char *out = NULL;
    CHECK_INT(CDP_EEVAL, cdp_page_eval(p, "null.x", 10000, &out, &e));
    CHECK(strstr(e.msg, "TypeError") != NULL);
    CHECK_INT(CDP_EEVAL, cdp_page_eval(p, "throw new Error('boom')", 10000, &out, &e));
    CHECK(strstr(e.msg, "boom") != NULL);
    CHECK(out == NULL);
    cdp_page_free(p);
    cdp_browser_free(b);
    /* The temporary profile is removed on a normal exit. */
    CHECK(stat(profile, &st) != 0 && errno == ENOENT);
    CHECK_INT(0, fixture_count_procs(profile));
}

static void t_port_launch_and_attach(void)
{
    if (!testlib_need_browser())
        return;
    cdp_browser *b = testlib_launch(host_args, true);
    if (!b)
        return;
    CHECK_STR("websocket", cdp_conn_transport(cdp_browser_conn(b)));
    const char *ws = cdp_browser_ws_url(b);
    CHECK(strncmp(ws, "ws://127.0.0.1:", 15) == 0);
    CHECK(strstr(ws, "/devtools/browser/") != NULL);
    /* Attach as a second client, through http:// and through ws://. */
    char http[128];
    int bport = (int)strtol(ws + 15, NULL, 10);
    snprintf(http, sizeof http, "http://127.0.0.1:%d", bport);
    cdp_err e = {0};
    cdp_browser *a = cdp_browser_connect(http, NULL, 10000, &e);
    if (CHECK(a != NULL)) {
        CHECK_STR(ws, cdp_browser_ws_url(a));
        CHECK_INT(0, cdp_browser_pid(a));
        cdp_page *p = cdp_page_open(a, 10000, &e);
        CHECK(p != NULL && !cdp_page_adopted(p));
        if (p) {
            char url[256];
            testlib_world_url(&world, url, sizeof url, "b.test", "/echo-host");
            CHECK_INT(0, cdp_page_navigate(p, url, 10000, &e));
            char *v = eval_on(p, "document.body.innerText");
            char want[64];
            snprintf(want, sizeof want, "\"b.test:%d\"", world.port);
            CHECK_STR(want, v);
            free(v);
            cdp_page_free(p);
        } else {
            test_fail_detail("cdp_page_open: %s", e.msg);
        }
        cdp_browser_free(a);
    } else {
        test_fail_detail("%s", e.msg);
    }
    a = cdp_browser_connect(ws, NULL, 10000, &e);
    CHECK(a != NULL);
    cdp_browser_free(a);
    /* Attaching did not close the launched browser. */
    CHECK(!cdp_conn_dead(cdp_browser_conn(b)));
    CHECK_INT(0, cdp_call(cdp_browser_conn(b), NULL, "Browser.getVersion", NULL, 5000,
                          NULL, &e));
    cdp_browser_free(b);
}

typedef struct {
    int attached;
    char iframe_session[128];
} attach_seen;

static void on_event(void *ud, cdp_conn *c, const char *session, const char *method,
                     const json_val *params)
{
    (void)c;
    (void)session;
    attach_seen *s = ud;
    if (strcmp(method, "Target.attachedToTarget") == 0) {
        const char *type = json_get_str(json_get(params, "targetInfo"), "type");
        if (type && strcmp(type, "iframe") == 0) {
            s->attached++;
            snprintf(s->iframe_session, sizeof s->iframe_session, "%s",
                     json_get_str(params, "sessionId"));
        }
    }
}

static bool is_iframe_attach(void *ud, const json_val *params)
{
    (void)ud;
    const char *type = json_get_str(json_get(params, "targetInfo"), "type");
    return type && strcmp(type, "iframe") == 0;
}

/* Flattened sessions: auto-attach to an out-of-process iframe (b.test inside
 * a.test) and evaluate inside it through its own session. */
static void t_flatten_oopif(void)
{
    if (!testlib_need_browser())
        return;
    cdp_browser *b = testlib_launch(host_args, false);
    if (!b)
        return;
    cdp_conn *c = cdp_browser_conn(b);
    attach_seen seen = {0, ""};
    CHECK_INT(0, cdp_listen(c, on_event, &seen));
    cdp_err e = {0};
    cdp_page *p = cdp_page_open(b, 10000, &e);
    CHECK(p != NULL);
    if (!p)
        goto out;
    CHECK_INT(0, cdp_call(c, cdp_page_session(p), "Target.setAutoAttach",
                          "{\"autoAttach\":true,\"waitForDebuggerOnStart\":false,"
                          "\"flatten\":true}", 10000, NULL, &e));
    uint64_t since = cdp_event_seq(c);
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", "/frames.html");
    CHECK_INT(0, cdp_page_navigate(p, url, 10000, &e));
    cdp_reply ev;
    int rc = cdp_wait_event(c, since, cdp_page_session(p), "Target.attachedToTarget",
                            is_iframe_attach, NULL, 10000, &ev, NULL, &e);
    if (!CHECK_INT(0, rc)) {
        test_fail_detail("%s", e.msg);
        goto out;
    }
    const char *sid = json_get_str(ev.result, "sessionId");
    CHECK(sid != NULL);
    const cdp_target *t = cdp_target_by_session(c, sid);
    CHECK(t != NULL);
    if (t) {
        CHECK_STR("iframe", t->type);
        CHECK_STR(cdp_page_session(p), t->parent_session);
    }
    CHECK(seen.attached >= 1);
    /* Evaluate in the iframe's own session (its document may still load). */
    char params[] = "{\"expression\":\"new Promise(r => { const f = () => "
                    "document.readyState === 'complete' ? r(location.hostname) : "
                    "setTimeout(f, 20); f(); })\",\"awaitPromise\":true,"
                    "\"returnByValue\":true}";
    cdp_reply r;
    rc = cdp_call(c, sid, "Runtime.evaluate", params, 10000, &r, &e);
    CHECK_INT(0, rc);
    if (rc == 0) {
        CHECK_STR("b.test", json_get_str(json_get(r.result, "result"), "value"));
        cdp_reply_free(&r);
    } else {
        test_fail_detail("%s", e.msg);
    }
    cdp_reply_free(&ev);
    cdp_unlisten(c, on_event, &seen);
out:
    cdp_page_free(p);
    cdp_browser_free(b);
}

/* Several targets at once, with commands pipelined across sessions. */
static void t_many_targets(void)
{
    if (!testlib_need_browser())
        return;
    cdp_browser *b = testlib_launch(host_args, false);
    if (!b)
        return;
    cdp_conn *c = cdp_browser_conn(b);
    cdp_err e = {0};
    cdp_page *pages[4] = {0};
    for (int i = 0; i < 4; i++) {
        pages[i] = cdp_page_open(b, 10000, &e);
        CHECK(pages[i] != NULL);
    }
    uint64_t ids[4][10];
    for (int k = 0; k < 10; k++)
        for (int i = 0; i < 4; i++) {
            char params[128];
            snprintf(params, sizeof params, "{\"expression\":\"%d*100+%d\","
                     "\"returnByValue\":true}", i, k);
            CHECK_INT(0, cdp_send(c, pages[i] ? cdp_page_session(pages[i]) : "",
                                  "Runtime.evaluate", params, &ids[i][k], &e));
        }
    /* Wait in reverse order: replies arriving earlier are kept for us. */
    for (int i = 3; i >= 0; i--)
        for (int k = 9; k >= 0; k--) {
            cdp_reply r;
            if (CHECK_INT(0, cdp_wait(c, ids[i][k], 10000, &r, &e))) {
                int64_t v = -1;
                json_int(json_get(json_get(r.result, "result"), "value"), &v);
                CHECK_INT(i * 100 + k, v);
                cdp_reply_free(&r);
            }
        }
    for (int i = 0; i < 4; i++)
        cdp_page_free(pages[i]);
    cdp_browser_free(b);
}

static void t_protocol_error_and_timeout(void)
{
    if (!testlib_need_browser())
        return;
    cdp_browser *b = testlib_launch(host_args, false);
    if (!b)
        return;
    cdp_conn *c = cdp_browser_conn(b);
    cdp_err e = {0};
    uint64_t id0 = cdp_last_id(c), id1 = 0;
    CHECK(id0 > 0);     /* the launch asked Browser.getVersion */
    CHECK_INT(0, cdp_send(c, NULL, "Browser.getVersion", NULL, &id1, &e));
    CHECK(id1 == id0 + 1 && cdp_last_id(c) == id1);
    CHECK_INT(0, cdp_wait(c, id1, 5000, NULL, &e));
    CHECK(cdp_last_id(c) == id1);
    CHECK_INT(CDP_EPROTOCOL, cdp_call(c, NULL, "Nope.nothing", NULL, 5000, NULL, &e));
    CHECK(cdp_last_id(c) == id1 + 1);
    CHECK(strstr(e.msg, "Nope.nothing") != NULL);
    CHECK(strstr(e.msg, "wasn't found") != NULL);
    CHECK_INT(-32601, e.protocol_code);
    cdp_page *p = cdp_page_open(b, 10000, &e);
    CHECK(p != NULL);
    if (p) {
        /* A call that never answers times out by its own deadline ... */
        CHECK_INT(CDP_ETIMEOUT, cdp_call(c, cdp_page_session(p), "Runtime.evaluate",
                                         "{\"expression\":\"new Promise(() => {})\","
                                         "\"awaitPromise\":true}", 300, NULL, &e));
        CHECK(strstr(e.msg, "Runtime.evaluate") != NULL);
        /* ... and the connection stays usable. */
        char *v = eval_on(p, "1+1");
        CHECK_STR("2", v);
        free(v);
        /* Unknown session: refused at once, naming the method. */
        CHECK_INT(CDP_EDETACHED, cdp_call(c, "NOSUCHSESSION", "Runtime.evaluate",
                                          "{\"expression\":\"1\"}", 5000, NULL, &e));
        CHECK(strstr(e.msg, "not attached") != NULL);
    }
    /* Navigation failure names the net error. */
    if (p) {
        char dead[64];
        snprintf(dead, sizeof dead, "http://127.0.0.1:%d/", fixture_closed_port());
        CHECK_INT(CDP_ENAVIGATE, cdp_page_navigate(p, dead, 10000, &e));
        CHECK(strstr(e.msg, "net::ERR_CONNECTION_REFUSED") != NULL);
        CHECK(strstr(e.msg, dead) != NULL);
        CHECK_INT(CDP_ENAVIGATE, cdp_page_navigate(p, "http://nothing.invalid/", 10000, &e));
        CHECK(strstr(e.msg, "net::ERR_NAME_NOT_RESOLVED") != NULL);
    }
    cdp_page_free(p);
    cdp_browser_free(b);
}

/* A call pending on a target that goes away fails with a reason naming the
 * method; a crashed browser fails every pending call, never hangs. */
static void t_detach_and_crash(void)
{
    if (!testlib_need_browser())
        return;
    cdp_browser *b = testlib_launch(host_args, false);
    if (!b)
        return;
    cdp_conn *c = cdp_browser_conn(b);
    cdp_err e = {0};
    cdp_page *p1 = cdp_page_open(b, 10000, &e);
    cdp_page *p2 = cdp_page_open(b, 10000, &e);
    CHECK(p1 && p2);
    if (!p1 || !p2)
        goto out;
    uint64_t id;
    CHECK_INT(0, cdp_send(c, cdp_page_session(p1), "Runtime.evaluate",
                          "{\"expression\":\"new Promise(() => {})\",\"awaitPromise\":true}",
                          &id, &e));
    char params[256];
    snprintf(params, sizeof params, "{\"targetId\":\"%s\"}", cdp_page_target(p1));
    CHECK_INT(0, cdp_call(c, NULL, "Target.closeTarget", params, 10000, NULL, &e));
    int rc = cdp_wait(c, id, 10000, NULL, &e);
    CHECK(rc == CDP_EDETACHED || rc == CDP_EPROTOCOL);
    CHECK(strstr(e.msg, "Runtime.evaluate") != NULL);

    /* Now the browser dies while a call waits. */
    CHECK_INT(0, cdp_send(c, cdp_page_session(p2), "Runtime.evaluate",
                          "{\"expression\":\"new Promise(() => {})\",\"awaitPromise\":true}",
                          &id, &e));
    kill(cdp_browser_pid(b), SIGKILL);
    rc = cdp_wait(c, id, 20000, NULL, &e);
    CHECK_INT(CDP_EDISCONNECTED, rc);
    CHECK(strstr(e.msg, "Runtime.evaluate") != NULL);
    CHECK(strstr(e.msg, "disconnected") != NULL);
    CHECK(cdp_conn_dead(c));
    /* Later calls fail at once. */
    CHECK_INT(CDP_EDISCONNECTED, cdp_call(c, NULL, "Browser.getVersion", NULL, 5000, NULL, &e));
    const char *death = cdp_browser_death(b);
    CHECK(strstr(death, "killed by signal 9") != NULL);
out:
    cdp_page_free(p1);
    cdp_page_free(p2);
    cdp_browser_free(b);
}

/* ---- fake browsers that misbehave ---- */

static char *fake_browser(const char *body)
{
    static int n;
    char *path = malloc(256);
    snprintf(path, 256, "/tmp/cdpgate-fake-%d-%d.sh", (int)getpid(), n++);
    FILE *f = fopen(path, "w");
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
    return path;
}

static void t_fake_garbage(void)
{
    char *path = fake_browser("printf 'this is {not json' >&4; printf '\\000' >&4; sleep 30");
    cdp_launch_opts o = {0};
    o.browser = path;
    o.timeout_ms = 5000;
    cdp_err e = {0};
    cdp_browser *b = cdp_browser_launch(&o, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "malformed JSON") != NULL);
    cdp_browser_free(b);
    unlink(path);
    free(path);
}

static void t_fake_exits(void)
{
    char *path = fake_browser("echo 'cannot open display' >&2; exit 3");
    cdp_launch_opts o = {0};
    o.browser = path;
    o.timeout_ms = 5000;
    cdp_err e = {0};
    cdp_browser *b = cdp_browser_launch(&o, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "exited with status 3") != NULL);
    CHECK(strstr(e.msg, "cannot open display") != NULL);
    /* Same over the port. */
    o.use_port = true;
    b = cdp_browser_launch(&o, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "exited with status 3") != NULL);
    unlink(path);
    free(path);
}

static void t_fake_silent(void)
{
    char *path = fake_browser("exec sleep 30");
    cdp_launch_opts o = {0};
    o.browser = path;
    o.timeout_ms = 700;
    cdp_err e = {0};
    cdp_browser *b = cdp_browser_launch(&o, &e);
    CHECK(b == NULL);
    CHECK_INT(CDP_ETIMEOUT, e.code == CDP_ELAUNCH ? CDP_ETIMEOUT : e.code);
    CHECK(strstr(e.msg, "Browser.getVersion") != NULL);
    o.use_port = true;
    b = cdp_browser_launch(&o, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "did not open its DevTools port") != NULL);
    /* No sleeper is left behind. */
    CHECK_INT(0, fixture_count_procs(path));
    unlink(path);
    free(path);
}

static void t_fake_huge_message(void)
{
    /* A reply larger than the transport's limit is an error, not a hang or
     * an unbounded allocation. */
    char *path = fake_browser("head -c 80000000 /dev/zero | tr '\\0' 'x' >&4; sleep 30");
    cdp_launch_opts o = {0};
    o.browser = path;
    o.timeout_ms = 20000;
    cdp_err e = {0};
    cdp_browser *b = cdp_browser_launch(&o, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "too large") != NULL || strstr(e.msg, "too big") != NULL ||
          strstr(e.msg, "exceeds") != NULL);
    if (b == NULL && !strstr(e.msg, "large") && !strstr(e.msg, "big") && !strstr(e.msg, "exceeds"))
        test_fail_detail("%s", e.msg);
    unlink(path);
    free(path);
}

/* ---- --connect: wrong, unreachable, not DevTools, Electron-like ---- */

static void t_connect_errors(void)
{
    cdp_err e = {0};
    cdp_browser *b = cdp_browser_connect("http://127.0.0.1:1", NULL, 3000, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "127.0.0.1:1") != NULL);
    CHECK(strstr(e.msg, "refused") != NULL || strstr(e.msg, "Refused") != NULL);
    b = cdp_browser_connect("ftp://x", NULL, 3000, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "ftp://x") != NULL);
    b = cdp_browser_connect("", NULL, 3000, &e);
    CHECK(b == NULL);
    CHECK_INT(CDP_EINVAL, e.code);
    /* An HTTP server that is not DevTools. */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", world.port);
    b = cdp_browser_connect(url, NULL, 3000, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "404") != NULL);
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/devtools/browser/x", world.port);
    b = cdp_browser_connect(url, NULL, 3000, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "handshake") != NULL || strstr(e.msg, "404") != NULL);
    if (b == NULL)
        fprintf(stderr, "    (ws to a plain HTTP server: %s)\n", e.msg);
    b = cdp_browser_connect("http://no-such-host.invalid:9222", NULL, 3000, &e);
    CHECK(b == NULL);
    CHECK(strstr(e.msg, "no-such-host.invalid") != NULL);
}

static void t_connect_electron_like(void)
{
    if (!testlib_need_browser())
        return;
    cdp_browser *b = testlib_launch(host_args, true);
    if (!b)
        return;
    char why[256];
    pid_t np;
    int pport = fixture_node_start("cdp_proxy.js", cdp_browser_ws_url(b), "electron", &np,
                                   why, sizeof why);
    if (pport < 0) {
        test_skip(why);
        cdp_browser_free(b);
        return;
    }
    /* The launched browser has its about:blank page: adopt it. */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", pport);
    cdp_err e = {0};
    cdp_browser *a = cdp_browser_connect(url, NULL, 10000, &e);
    CHECK(a != NULL);
    if (a) {
        cdp_page *p = cdp_page_open(a, 10000, &e);
        if (CHECK(p != NULL)) {
            CHECK(cdp_page_adopted(p));
            char page[256];
            testlib_world_url(&world, page, sizeof page, "a.test", "/index.html");
            CHECK_INT(0, cdp_page_navigate(p, page, 10000, &e));
            char *v = eval_on(p, "document.querySelector('h1').textContent");
            CHECK_STR("\"Fixture home\"", v);
            free(v);
            cdp_page_free(p);
        } else {
            test_fail_detail("%s", e.msg);
        }
        cdp_browser_free(a);
    }
    /* The adopted page was not closed: it belongs to the app. */
    cdp_reply r;
    CHECK_INT(0, cdp_call(cdp_browser_conn(b), NULL, "Target.getTargets", NULL, 5000, &r, &e));
    int pages = 0;
    for (const json_val *t = json_first(json_get(r.result, "targetInfos")); t; t = json_next(t))
        pages += json_get_str(t, "type") && strcmp(json_get_str(t, "type"), "page") == 0;
    CHECK(pages >= 1);
    cdp_reply_free(&r);
    fixture_node_stop(np);

    /* A peer that sends garbage, and one that drops the connection. */
    pport = fixture_node_start("cdp_proxy.js", cdp_browser_ws_url(b), "garbage", &np, why,
                               sizeof why);
    if (CHECK(pport > 0)) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d", pport);
        a = cdp_browser_connect(url, NULL, 10000, &e);
        if (CHECK(a != NULL)) {
            int rc = cdp_call(cdp_browser_conn(a), NULL, "Target.getTargets", NULL, 5000, NULL,
                              &e);
            CHECK_INT(CDP_EDISCONNECTED, rc);
            CHECK(strstr(e.msg, "malformed JSON") != NULL);
            cdp_browser_free(a);
        }
        fixture_node_stop(np);
    }
    pport = fixture_node_start("cdp_proxy.js", cdp_browser_ws_url(b), "die", &np, why,
                               sizeof why);
    if (CHECK(pport > 0)) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d", pport);
        a = cdp_browser_connect(url, NULL, 10000, &e);
        if (CHECK(a != NULL)) {
            cdp_page *p = cdp_page_open(a, 10000, &e);
            if (CHECK(p != NULL)) {
                char *out = NULL;
                int rc = cdp_page_eval(p, "1", 10000, &out, &e);
                CHECK_INT(CDP_EDISCONNECTED, rc);
                CHECK(strstr(e.msg, "Runtime.evaluate") != NULL);
                cdp_page_free(p);
            }
            cdp_browser_free(a);
        }
        fixture_node_stop(np);
    }
    cdp_browser_free(b);
}

/* ---- the browser never outlives the driver ---- */

static void t_kill9_driver_kills_browser(void)
{
    if (!testlib_need_browser())
        return;
    const char *bin = testlib_cdpgate_bin();
    for (int mode = 0; mode < 2; mode++) {
        char dir[128];
        CHECK_INT(0, testlib_tempdir("k9", dir, sizeof dir));
        pid_t pid = fork();
        if (pid == 0) {
            setenv("TMPDIR", dir, 1);
            int nul = open("/dev/null", 1);
            dup2(nul, 1);
            dup2(nul, 2);
            char url[256];
            testlib_world_url(&world, url, sizeof url, "a.test", "/index.html");
            const char *av_pipe[] = {bin, "--timeout", "60000", "eval", url,
                                     "new Promise(() => {})", NULL};
            const char *av_port[] = {bin, "--port", "--timeout", "60000", "eval", url,
                                     "new Promise(() => {})", NULL};
            execv(bin, (char *const *)(mode ? av_port : av_pipe));
            _exit(127);
        }
        /* Wait until the browser runs with a profile under dir. */
        int n = 0;
        for (int i = 0; i < 300 && (n = fixture_count_procs(dir)) < 2; i++)
            testlib_sleep_ms(50);
        CHECK(n >= 2);
        testlib_sleep_ms(300);  /* let it reach the page */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        int left = -1;
        for (int i = 0; i < 100 && (left = fixture_count_procs(dir)) > 0; i++)
            testlib_sleep_ms(50);
        if (!CHECK_INT(0, left))
            test_fail_detail("%d processes still mention %s (mode %s)", left, dir,
                             mode ? "port" : "pipe");
        /* The watchdog also removed the temporary profile. */
        char cmd[200];
        snprintf(cmd, sizeof cmd, "ls -A %s", dir);
        char *out = NULL;
        for (int i = 0; i < 50; i++) {
            free(out);
            fixture_run(cmd, &out, NULL);
            if (out && !*out)
                break;
            testlib_sleep_ms(50);
        }
        CHECK_STR("", out);
        free(out);
        test_rm_rf(dir);
    }
}

/* ---- the CLI ---- */

static void t_cli(void)
{
    const char *bin = testlib_cdpgate_bin();
    char cmd[1024], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "%s --help", bin);
    CHECK_INT(0, fixture_run(cmd, &out, &err));
    CHECK(strstr(out, "usage: cdpgate") != NULL);
    CHECK(strstr(out, "eval URL EXPR") != NULL);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s --version", bin);
    CHECK_INT(0, fixture_run(cmd, &out, &err));
    CHECK(strncmp(out, "cdpgate ", 8) == 0);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s --frobnicate", bin);
    CHECK_INT(2, fixture_run(cmd, &out, &err));
    CHECK(strstr(err, "--frobnicate") != NULL);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s eval", bin);
    CHECK_INT(2, fixture_run(cmd, &out, &err));
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s --browser /nonexistent eval about:blank 1", bin);
    CHECK_INT(3, fixture_run(cmd, &out, &err));
    CHECK(strstr(err, "/nonexistent") != NULL);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s --connect http://127.0.0.1:1 eval about:blank 1", bin);
    CHECK_INT(3, fixture_run(cmd, &out, &err));
    CHECK(strstr(err, "127.0.0.1:1") != NULL);
    free(out), free(err);
    if (!testlib_need_browser())
        return;
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", "/index.html");
    snprintf(cmd, sizeof cmd, "%s --browser-arg='%s' eval %s "
             "'[document.title, document.querySelectorAll(\"button\").length]'",
             bin, FIXTURE_HOST_RULES, url);
    CHECK_INT(0, fixture_run(cmd, &out, &err));
    CHECK_STR("[\"Fixture home\",1]\n", out);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s --browser-arg='%s' eval %s 'no_such_var + 1'", bin,
             FIXTURE_HOST_RULES, url);
    CHECK_INT(1, fixture_run(cmd, &out, &err));
    CHECK_STR("", out);
    CHECK(strstr(err, "ReferenceError") != NULL);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s eval http://127.0.0.1:%d/ 1", bin, fixture_closed_port());
    CHECK_INT(1, fixture_run(cmd, &out, &err));
    CHECK(strstr(err, "ERR_CONNECTION_REFUSED") != NULL);
    free(out), free(err);
    /* eval --connect to a browser launched over a port. */
    cdp_browser *b = testlib_launch(host_args, true);
    if (b) {
        snprintf(cmd, sizeof cmd, "%s --connect %s eval %s 'location.pathname'", bin,
                 cdp_browser_ws_url(b), url);  /* the launched browser maps a.test */
        CHECK_INT(0, fixture_run(cmd, &out, &err));
        CHECK_STR("\"/index.html\"\n", out);
        free(out), free(err);
        cdp_browser_free(b);
    }
    snprintf(cmd, sizeof cmd, "%s doctor", bin);
    int rc = fixture_run(cmd, &out, &err);
    CHECK_INT(0, rc);
    CHECK(strstr(out, "0 failed") != NULL);
    if (rc)
        test_fail_detail("doctor said:\n%s%s", out, err);
    free(out), free(err);
}


/* ---- replies through a sink ---- */

/* A connection over a socketpair nobody answers: replies are injected. */
static cdp_conn *quiet_conn(int *peer)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return NULL;
    *peer = sv[1];
    return cdp_conn_new(ws_transport_pipe(sv[0], sv[0], 0), NULL);
}

/* The canon of the "result" of a reply text, as json_parse sees it. */
static char *result_canon(const char *reply)
{
    json_doc *d = json_parse(reply, strlen(reply), NULL, NULL);
    canon a = {0};
    canon_doc_s(&a, json_get(json_doc_root(d), "result"));
    json_doc_free(d);
    return a.p;
}

static int stop_sink(void *ud, const json_event *ev)
{
    int *n = ud;
    return ++*n == 3 ? CDP_ENOMEM : 0;
}

/* One sink call whose reply arrives in pieces split at every byte, with an
 * event and a plain reply before it: the sink sees exactly the result, the
 * event reaches the ring, the plain reply its waiter. Member orders other
 * than Chromium's (result before id) are gathered and replayed. */
static void t_sink_injected(void)
{
    static const char *const replies[] = {
        "{\"id\":2,\"result\":{\"nodes\":[{\"nodeId\":\"1\",\"name\":{\"type\":\"computedString\","
        "\"value\":\"caf\\u00e9 \\ud83d\\ude00\"},\"childIds\":[\"2\",\"3\"]},"
        "{\"nodeId\":\"2\",\"ignored\":true,\"value\":{\"value\":1.5e3}}]},"
        "\"sessionId\":\"S1\"}",
        "{\"sessionId\":\"S1\",\"result\":{\"a\":[1,{\"b\":null}]},\"id\":2}",
        "{\"id\":2,\"result\":{}}",
    };
    for (size_t r = 0; r < sizeof replies / sizeof replies[0]; r++) {
        const char *rep = replies[r];
        char *want = result_canon(rep);
        size_t len = strlen(rep);
        for (size_t k = 0; k <= len; k++) {
            int peer;
            cdp_conn *c = quiet_conn(&peer);
            cdp_err e = {0};
            uint64_t plain, id;
            canon got = {0};
            CHECK_INT(0, cdp_send(c, NULL, "Plain.call", NULL, &plain, &e));
            CHECK_INT(0, cdp_send_sink(c, NULL, "Big.call", NULL, canon_event, &got, &id, &e));
            CHECK_INT(2, id);
            const char *ev = "{\"method\":\"Page.thing\",\"params\":{\"x\":1}}";
            const char *pr = "{\"id\":1,\"result\":{\"ok\":true}}";
            CHECK_INT(0, cdp_conn_inject_piece(c, ev, 10, false, &e));
            CHECK_INT(0, cdp_conn_inject_piece(c, ev + 10, strlen(ev) - 10, true, &e));
            CHECK_INT(0, cdp_conn_inject(c, pr, strlen(pr), &e));
            CHECK_INT(0, cdp_conn_inject_piece(c, rep, k, false, &e));
            CHECK(!cdp_reply_ready(c, id));
            CHECK_INT(0, cdp_conn_inject_piece(c, rep + k, len - k, true, &e));
            CHECK(cdp_reply_ready(c, id));
            cdp_reply out = {0};
            CHECK_INT(0, cdp_wait(c, id, 100, &out, &e));
            CHECK(out.doc == NULL && out.result == NULL);
            CHECK_INT(0, got.bad);
            if (!CHECK(got.p && strcmp(got.p, want) == 0)) {
                test_fail_detail("reply %zu split %zu: got %s want %s", r, k,
                                 got.p ? got.p : "(none)", want);
                k = len;
            }
            CHECK_INT(0, cdp_wait(c, plain, 100, &out, &e));
            CHECK(json_bool(json_get(out.result, "ok")));
            cdp_reply_free(&out);
            CHECK_INT(0, cdp_wait_event(c, 0, NULL, "Page.thing", NULL, NULL, 100, &out,
                                        NULL, &e));
            CHECK_INT(1, json_get_int(out.result, "x", 0));
            cdp_reply_free(&out);
            free(got.p);
            cdp_conn_free(c);
            close(peer);
        }
        free(want);
    }
}

static void t_sink_errors(void)
{
    int peer;
    cdp_conn *c = quiet_conn(&peer);
    cdp_err e = {0};
    uint64_t id;
    canon got = {0};
    /* an error reply fails the call like cdp_call */
    CHECK_INT(0, cdp_send_sink(c, "", "Big.call", NULL, canon_event, &got, &id, &e));
    const char *er = "{\"id\":1,\"error\":{\"code\":-32000,\"message\":\"No node\"}}";
    CHECK_INT(0, cdp_conn_inject_piece(c, er, 9, false, &e));
    CHECK_INT(0, cdp_conn_inject_piece(c, er + 9, strlen(er) - 9, true, &e));
    CHECK_INT(CDP_EPROTOCOL, cdp_wait(c, id, 100, NULL, &e));
    CHECK_STR("Big.call: No node (-32000)", e.msg);
    CHECK_INT(-32000, e.protocol_code);
    CHECK(got.len == 0);
    /* the sink stops: the call fails with its code, the rest is dropped */
    int n = 0;
    CHECK_INT(0, cdp_send_sink(c, "", "Big.call", NULL, stop_sink, &n, &id, &e));
    const char *ok = "{\"id\":2,\"result\":{\"a\":[1,2,3,4,5]}}";
    CHECK_INT(0, cdp_conn_inject(c, ok, strlen(ok), &e));
    CHECK_INT(3, n);
    CHECK_INT(CDP_ENOMEM, cdp_wait(c, id, 100, NULL, &e));
    CHECK(strstr(e.msg, "Big.call") != NULL);
    /* forgotten: the reply is read and dropped, the sink not called */
    n = 0;
    CHECK_INT(0, cdp_send_sink(c, "", "Big.call", NULL, stop_sink, &n, &id, &e));
    cdp_forget(c, id);
    const char *r3 = "{\"id\":3,\"result\":{\"a\":[1,2,3,4,5]}}";
    CHECK_INT(0, cdp_conn_inject_piece(c, r3, 5, false, &e));
    CHECK_INT(0, cdp_conn_inject_piece(c, r3 + 5, strlen(r3) - 5, true, &e));
    CHECK_INT(0, n);
    CHECK(cdp_reply_ready(c, id));
    /* a malformed sink reply kills the connection, failing the call */
    CHECK_INT(0, cdp_send_sink(c, "", "Big.call", NULL, canon_event, &got, &id, &e));
    const char *bad = "{\"id\":4,\"result\":{\"a\":[1,}}";
    CHECK_INT(CDP_EDISCONNECTED, cdp_conn_inject(c, bad, strlen(bad), &e));
    CHECK(strstr(e.msg, "malformed JSON") != NULL);
    CHECK_INT(CDP_EDISCONNECTED, cdp_wait(c, id, 100, NULL, &e));
    CHECK(strstr(e.msg, "Big.call") != NULL);
    free(got.p);
    cdp_conn_free(c);
    close(peer);
    /* something that is not CDP, while a sink call waits, is still fatal */
    c = quiet_conn(&peer);
    CHECK_INT(0, cdp_send_sink(c, "", "Big.call", NULL, stop_sink, &n, &id, &e));
    CHECK_INT(CDP_EDISCONNECTED, cdp_conn_inject(c, "[1]", 3, &e));
    CHECK(cdp_conn_dead(c));
    cdp_conn_free(c);
    close(peer);
}

/* Real Chromium, over the pipe and over WebSocket: the AX tree of the big
 * fixture through a sink equals the one from cdp_call; while it streams,
 * other calls and events keep working. */
static void sink_real(bool use_port)
{
    if (!testlib_need_browser())
        return;
    cdp_browser *b = testlib_launch(host_args, use_port);
    if (!b)
        return;
    cdp_err e = {0};
    cdp_page *p = cdp_page_open(b, 10000, &e);
    if (!CHECK(p != NULL)) {
        cdp_browser_free(b);
        return;
    }
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", "/big.html");
    CHECK_INT(0, cdp_page_navigate(p, url, 15000, &e));
    cdp_conn *c = cdp_browser_conn(b);
    const char *sess = cdp_page_session(p);
    cdp_reply whole = {0};
    CHECK_INT(0, cdp_call(c, sess, "Accessibility.getFullAXTree", "{}", 30000, &whole, &e));
    canon want = {0}, got = {0};
    canon_doc_s(&want, whole.result);
    cdp_reply_free(&whole);
    uint64_t id, other;
    CHECK_INT(0, cdp_send_sink(c, sess, "Accessibility.getFullAXTree", "{}", canon_event,
                               &got, &id, &e));
    CHECK_INT(0, cdp_send(c, sess, "Runtime.evaluate", "{\"expression\":\"6*7\"}", &other,
                          &e));
    cdp_reply r = {0};
    CHECK_INT(0, cdp_wait(c, other, 30000, &r, &e));
    CHECK_INT(42, json_get_int(json_path(r.result, "result"), "value", 0));
    cdp_reply_free(&r);
    CHECK_INT(0, cdp_wait(c, id, 30000, &r, &e));
    CHECK_INT(0, got.bad);
    CHECK(want.len > 1000000);
    CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
    free(want.p);
    free(got.p);
    /* a protocol error through a sink */
    got = (canon){0};
    CHECK_INT(0, cdp_send_sink(c, sess, "Accessibility.getFullAXTree",
                               "{\"frameId\":\"nope\"}", canon_event, &got, &id, &e));
    CHECK_INT(CDP_EPROTOCOL, cdp_wait(c, id, 30000, NULL, &e));
    CHECK(strstr(e.msg, "Accessibility.getFullAXTree: ") == e.msg);
    free(got.p);
    cdp_page_free(p);
    cdp_browser_free(b);
}

static void t_sink_real_pipe(void) { sink_real(false); }
static void t_sink_real_ws(void) { sink_real(true); }

static void count_events(void *ud, cdp_conn *c, const char *session, const char *method,
                         const json_val *params)
{
    (void)c;
    (void)session;
    (void)method;
    (void)params;
    (*(int *)ud)++;
}

/* Network.* events (cookies, post data) reach listeners but are never kept
 * for late waiters; other events are. A secret call that timed out keeps
 * its slot until its late reply (then zeroed and dropped); an ordinary
 * one is forgotten at once. */
static void t_secret_events_and_calls(void)
{
    int peer = -1, seen = 0;
    cdp_conn *c = quiet_conn(&peer);
    if (!CHECK(c != NULL))
        return;
    cdp_err e = {0};
    CHECK_INT(0, cdp_listen(c, count_events, &seen));
    static const char NET[] = "{\"method\":\"Network.requestWillBeSentExtraInfo\",\"params\":"
                              "{\"headers\":{\"Cookie\":\"sid=secret\"}}}";
    static const char PAGE[] = "{\"method\":\"Page.loadEventFired\",\"params\":{}}";
    CHECK_INT(0, cdp_conn_inject(c, NET, strlen(NET), &e));
    CHECK_INT(0, cdp_conn_inject(c, PAGE, strlen(PAGE), &e));
    CHECK_INT(2, seen);
    cdp_reply rep = {0};
    CHECK_INT(CDP_ETIMEOUT, cdp_wait_event(c, 0, NULL, "Network.requestWillBeSentExtraInfo",
                                           NULL, NULL, 1, &rep, NULL, &e));
    CHECK_INT(0, cdp_wait_event(c, 0, NULL, "Page.loadEventFired", NULL, NULL, 1, &rep, NULL,
                                &e));
    cdp_reply_free(&rep);
    uint64_t id = 0, id2 = 0;
    CHECK_INT(0, cdp_send_secret(c, NULL, "Storage.getCookies", "{}", &id, &e));
    CHECK_INT(CDP_ETIMEOUT, cdp_wait(c, id, 20, &rep, &e));
    CHECK(!cdp_reply_ready(c, id));             /* still expected */
    char late[100];
    snprintf(late, sizeof late, "{\"id\":%llu,\"result\":{\"cookies\":[{\"value\":\"s\"}]}}",
             (unsigned long long)id);
    CHECK_INT(0, cdp_conn_inject(c, late, strlen(late), &e));
    CHECK(cdp_reply_ready(c, id));              /* came, dropped */
    CHECK_INT(0, cdp_send(c, NULL, "Page.enable", NULL, &id2, &e));
    CHECK_INT(CDP_ETIMEOUT, cdp_wait(c, id2, 20, &rep, &e));
    CHECK(cdp_reply_ready(c, id2));             /* forgotten at once */
    /* A secret call answered in time hands its reply over as usual. */
    CHECK_INT(0, cdp_send_secret(c, NULL, "Storage.getCookies", "{}", &id, &e));
    snprintf(late, sizeof late, "{\"id\":%llu,\"result\":{\"cookies\":[{\"value\":\"s\"}]}}",
             (unsigned long long)id);
    CHECK_INT(0, cdp_conn_inject(c, late, strlen(late), &e));
    CHECK_INT(0, cdp_wait(c, id, 20, &rep, &e));
    CHECK_STR("s", json_get_str(json_at(json_get(rep.result, "cookies"), 0), "value"));
    cdp_reply_free(&rep);
    cdp_conn_free(c);
    close(peer);
}

/* A fake dialog hold: while *open, every call to session "S1" but
 * Page.handleJavaScriptDialog is held. */
typedef struct {
    bool open;
    int asked;
} hold_state;

static const char *hold_s1(void *ud, const char *session, const char *method)
{
    hold_state *h = ud;
    h->asked++;
    if (!h->open || strcmp(session, "S1") != 0 || strcmp(method, "Page.handleJavaScriptDialog") == 0)
        return NULL;
    return "a dialog is open";
}

static void on_dialog_event(void *ud, cdp_conn *c, const char *session, const char *method,
                            const json_val *p)
{
    (void)c, (void)session, (void)p;
    if (strcmp(method, "Page.javascriptDialogOpening") == 0)
        ((hold_state *)ud)->open = true;
}

/* Sends method on session and injects its reply first when reply_first. */
static int held_call(cdp_conn *c, const char *session, const char *method, bool secret,
                     bool reply_first, int ms, uint64_t *id, cdp_err *e)
{
    cdp_reply rep = {0};
    int rc = secret ? cdp_send_secret(c, session, method, NULL, id, e)
                    : cdp_send(c, session, method, NULL, id, e);
    if (rc)
        return rc;
    if (reply_first) {
        char msg[160];
        snprintf(msg, sizeof msg, "{\"id\":%llu,\"sessionId\":\"%s\",\"result\":{\"v\":1}}",
                 (unsigned long long)*id, session ? session : "");
        if (session == NULL)
            snprintf(msg, sizeof msg, "{\"id\":%llu,\"result\":{\"v\":1}}",
                     (unsigned long long)*id);
        CHECK_INT(0, cdp_conn_inject(c, msg, strlen(msg), e));
    }
    rc = cdp_wait(c, *id, ms, &rep, e);
    if (rc == 0)
        CHECK_INT(1, (int)json_get_int(rep.result, "v", 0));
    cdp_reply_free(&rep);
    return rc;
}

/* Holds (cdp_hold_add; the agent's dialog hold, session 21): a call whose
 * session a hold names ends at once with CDP_EHELD and the hold's reason,
 * also when the event that makes the hold arrives while it waits; a reply
 * already in is still handed over; other sessions, the browser's own
 * session and the methods the hold lets through are waited for; a held
 * secret call keeps its slot until its late reply (zeroed, dropped); a
 * removed hold holds nothing; at most 16. */
static void t_hold_regression(void)
{
    int peer = -1;
    cdp_conn *c = quiet_conn(&peer);
    if (!CHECK(c != NULL))
        return;
    hold_state h = {0};
    cdp_err e = {0};
    uint64_t id = 0;
    for (int i = 1; i <= 2; i++) {
        char at[300];
        snprintf(at, sizeof at, "{\"method\":\"Target.attachedToTarget\",\"params\":{\"sessionId\":"
                 "\"S%d\",\"targetInfo\":{\"targetId\":\"T%d\",\"type\":\"page\",\"url\":"
                 "\"about:blank\",\"browserContextId\":\"C\"},\"waitingForDebugger\":false}}", i, i);
        CHECK_INT(0, cdp_conn_inject(c, at, strlen(at), &e));
    }
    CHECK_INT(0, cdp_listen(c, on_dialog_event, &h));
    CHECK_INT(0, cdp_hold_add(c, hold_s1, &h));
    CHECK_INT(0, held_call(c, "S1", "Runtime.evaluate", false, true, 1000, &id, &e));
    /* The dialog opens (an event) before the wait: held at once. */
    static const char EV[] = "{\"method\":\"Page.javascriptDialogOpening\",\"sessionId\":\"S1\","
                             "\"params\":{\"type\":\"alert\",\"message\":\"x\"}}";
    CHECK_INT(0, cdp_send(c, "S1", "DOM.getDocument", NULL, &id, &e));
    CHECK_INT(0, cdp_conn_inject(c, EV, strlen(EV), &e));
    int64_t t0 = base_now_ms();
    CHECK_INT(CDP_EHELD, cdp_wait(c, id, 20000, NULL, &e));
    CHECK(base_now_ms() - t0 < 10000);      /* not the 20 s timeout */
    CHECK_INT(CDP_EHELD, e.code);
    CHECK_STR("DOM.getDocument: a dialog is open", e.msg);
    CHECK(cdp_reply_ready(c, id));          /* forgotten: its late reply is dropped */
    char late[120];
    snprintf(late, sizeof late, "{\"id\":%llu,\"sessionId\":\"S1\",\"result\":{}}",
             (unsigned long long)id);
    CHECK_INT(0, cdp_conn_inject(c, late, strlen(late), &e));
    /* A reply already in is handed over; the hold's exception, another
     * session and the browser's session are waited for. */
    CHECK_INT(0, held_call(c, "S1", "Runtime.evaluate", false, true, 1000, &id, &e));
    CHECK_INT(0, held_call(c, "S1", "Page.handleJavaScriptDialog", false, true, 1000, &id, &e));
    CHECK_INT(0, held_call(c, "S2", "Runtime.evaluate", false, true, 1000, &id, &e));
    CHECK_INT(0, held_call(c, NULL, "Target.getTargets", false, true, 1000, &id, &e));
    CHECK_INT(CDP_ETIMEOUT, held_call(c, "S2", "Runtime.evaluate", false, false, 20, &id, &e));
    /* A held secret call keeps its slot until its reply. */
    CHECK_INT(CDP_EHELD, held_call(c, "S1", "Storage.getCookies", true, false, 1000, &id, &e));
    CHECK(!cdp_reply_ready(c, id));
    snprintf(late, sizeof late, "{\"id\":%llu,\"sessionId\":\"S1\",\"result\":{\"c\":\"s\"}}",
             (unsigned long long)id);
    CHECK_INT(0, cdp_conn_inject(c, late, strlen(late), &e));
    CHECK(cdp_reply_ready(c, id));
    /* Removed: nothing is held. */
    cdp_hold_remove(c, hold_s1, &h);
    int asked = h.asked;
    CHECK_INT(CDP_ETIMEOUT, held_call(c, "S1", "Runtime.evaluate", false, false, 20, &id, &e));
    CHECK_INT(asked, h.asked);
    hold_state many[17];
    memset(many, 0, sizeof many);
    for (int i = 0; i < 16; i++)
        CHECK_INT(0, cdp_hold_add(c, hold_s1, &many[i]));
    CHECK_INT(CDP_ELIMIT, cdp_hold_add(c, hold_s1, &many[16]));
    cdp_conn_free(c);
    close(peer);
}

/* A page session's paused requests (Fetch.requestPaused: the Cookie
 * headers of a restored session) are kept for late waiters; once the
 * interception is over cdp_events_discard drops them (zeroed) at once
 * rather than leaving them until the ring evicts them (issue 11, point 16).
 * Other sessions' and other domains' events stay. */
static void t_discard_fetch_events_regression(void)
{
    int peer = -1;
    cdp_conn *c = quiet_conn(&peer);
    if (!CHECK(c != NULL))
        return;
    cdp_err e = {0};
    static const char *const MSGS[] = {
        ("{\"method\":\"Target.attachedToTarget\",\"params\":{\"sessionId\":\"S1\","
        "\"targetInfo\":{\"targetId\":\"T1\",\"type\":\"page\",\"url\":\"\","
        "\"browserContextId\":\"C1\"}}}"),
        ("{\"method\":\"Target.attachedToTarget\",\"params\":{\"sessionId\":\"S2\","
        "\"targetInfo\":{\"targetId\":\"T2\",\"type\":\"page\",\"url\":\"\","
        "\"browserContextId\":\"C1\"}}}"),
        ("{\"sessionId\":\"S1\",\"method\":\"Fetch.requestPaused\",\"params\":{\"requestId\":"
        "\"r1\",\"request\":{\"url\":\"http://a.test/favicon.ico\",\"headers\":"
        "{\"Cookie\":\"session=planted\"}}}}"),
        ("{\"sessionId\":\"S2\",\"method\":\"Fetch.requestPaused\",\"params\":{\"requestId\":"
        "\"r2\",\"request\":{\"url\":\"http://b.test/\",\"headers\":{}}}}"),
        "{\"sessionId\":\"S1\",\"method\":\"Page.loadEventFired\",\"params\":{}}",
    };
    for (size_t i = 0; i < sizeof MSGS / sizeof MSGS[0]; i++)
        CHECK_INT(0, cdp_conn_inject(c, MSGS[i], strlen(MSGS[i]), &e));
    CHECK_INT(1, cdp_events_discard(c, "S1", "Fetch."));
    cdp_reply rep = {0};
    CHECK_INT(CDP_ETIMEOUT, cdp_wait_event(c, 0, "S1", "Fetch.requestPaused", NULL, NULL, 1,
                                           &rep, NULL, &e));
    CHECK_INT(0, cdp_wait_event(c, 0, "S2", "Fetch.requestPaused", NULL, NULL, 1, &rep, NULL,
                                &e));
    CHECK_STR("r2", json_get_str(rep.result, "requestId"));
    cdp_reply_free(&rep);
    CHECK_INT(0, cdp_wait_event(c, 0, "S1", "Page.loadEventFired", NULL, NULL, 1, &rep, NULL,
                                &e));
    cdp_reply_free(&rep);
    CHECK_INT(0, cdp_events_discard(c, NULL, "Fetch."));   /* nothing left */
    cdp_conn_free(c);
    close(peer);
}

static const test_case TESTS[] = {
    {"secret_events_and_calls", t_secret_events_and_calls},
    {"discard_fetch_events_regression", t_discard_fetch_events_regression},
    {"hold_regression", t_hold_regression},
    {"find_explicit_missing", t_find_explicit_missing},
    {"find_env_and_path", t_find_env_and_path},
    {"pipe_launch_eval", t_pipe_launch_eval},
    {"port_launch_and_attach", t_port_launch_and_attach},
    {"flatten_oopif", t_flatten_oopif},
    {"many_targets", t_many_targets},
    {"protocol_error_and_timeout", t_protocol_error_and_timeout},
    {"detach_and_crash", t_detach_and_crash},
    {"fake_garbage", t_fake_garbage},
    {"fake_exits", t_fake_exits},
    {"fake_silent", t_fake_silent},
    {"fake_huge_message", t_fake_huge_message},
    {"connect_errors", t_connect_errors},
    {"connect_electron_like", t_connect_electron_like},
    {"kill9_driver_kills_browser", t_kill9_driver_kills_browser},
    {"cli", t_cli},
    {"sink_injected", t_sink_injected},
    {"sink_errors", t_sink_errors},
    {"sink_real_pipe", t_sink_real_pipe},
    {"sink_real_ws", t_sink_real_ws},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (testlib_world_up(&world, "cdp", host_args, false) != 0)
        return 1;
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
