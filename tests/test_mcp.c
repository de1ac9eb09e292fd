/*
 * test_mcp.c — `cdpgate mcp` driven as a child process over pipes, the way
 * an MCP host runs it: the protocol (initialize and version negotiation,
 * ping, tools/list and its size, every kind of bad input, oversized lines,
 * notifications, cancellation, end of input), then tool calls end to end
 * against headless Chromium on tests/fixtures pages, the `snapshot` and
 * `screenshot` subcommands, and the official TypeScript SDK client
 * (tests/peers/mcp_client.mjs) as an independent peer.
 */
#include "tests/testlib.h"
#include "gate/gate.h"
#include "json/json.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static testlib_world world;     /* fixture server */

/* ---- the server as a child process ---- */

typedef struct {
    pid_t pid;
    int to, from;           /* its stdin (our write end), its stdout (read end) */
    char *buf;
    size_t len, cap;
    long long started_ms;
} child;

/* Start `cdpgate [extra...] mcp`; extra is NULL-terminated or NULL. */
static bool start(child *c, const char *const *extra)
{
    memset(c, 0, sizeof *c);
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        return false;
    const char *argv[24];
    int n = 0;
    argv[n++] = testlib_cdpgate_bin();
    for (int i = 0; extra && extra[i] && n < 20; i++)
        argv[n++] = extra[i];
    argv[n++] = "mcp";
    argv[n] = NULL;
    c->started_ms = testlib_now_ms();
    c->pid = fork();
    if (c->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c->to = in[1];
    c->from = out[0];
    fcntl(c->to, F_SETFD, FD_CLOEXEC);
    fcntl(c->from, F_SETFD, FD_CLOEXEC);
    return c->pid > 0;
}

static bool send_raw(child *c, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(c->to, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static bool send_line(child *c, const char *line)
{
    return send_raw(c, line, strlen(line)) && send_raw(c, "\n", 1);
}

/* Next line from the server's stdout (new, without '\n'), or NULL on
 * timeout or end of output. */
static char *recv_line(child *c, int timeout_ms)
{
    long long deadline = testlib_now_ms() + timeout_ms;
    for (;;) {
        char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - c->buf);
            char *line = malloc(n + 1);
            if (!line)
                return NULL;
            memcpy(line, c->buf, n);
            line[n] = 0;
            memmove(c->buf, nl + 1, c->len - n - 1);
            c->len -= n + 1;
            return line;
        }
        long long left = deadline - testlib_now_ms();
        if (left <= 0)
            return NULL;
        struct pollfd pfd = {c->from, POLLIN, 0};
        if (poll(&pfd, 1, (int)left) <= 0)
            continue;
        if (c->cap - c->len < 65536) {
            size_t cap = c->cap ? c->cap * 2 : 131072;
            char *nb = realloc(c->buf, cap);
            if (!nb)
                return NULL;
            c->buf = nb;
            c->cap = cap;
        }
        ssize_t r = read(c->from, c->buf + c->len, c->cap - c->len);
        if (r <= 0)
            return NULL;
        c->len += (size_t)r;
    }
}

/* Next message as a parsed document; every line must be one JSON object. */
static json_doc *recv_msg(child *c, int timeout_ms)
{
    char *line = recv_line(c, timeout_ms);
    if (!line)
        return NULL;
    json_doc *d = json_parse(line, strlen(line), NULL, NULL);
    if (!CHECK(d && json_is(json_doc_root(d), JSON_OBJECT)))
        test_fail_detail("not a JSON object on stdout: %.300s", line);
    else if (!CHECK_STR("2.0", json_get_str(json_doc_root(d), "jsonrpc")))
        test_fail_detail("message: %.300s", line);
    free(line);
    return d;
}

/* Wait for the response with this id (serialised JSON, e.g. "7" or "\"a\""),
 * counting progress notifications for token (may be NULL) on the way.
 * Fails the test when a response to another id arrives first. */
static json_doc *wait_id(child *c, const char *id, int timeout_ms, const char *token,
                         int *progress)
{
    long long deadline = testlib_now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - testlib_now_ms();
        json_doc *d = left > 0 ? recv_msg(c, (int)left) : NULL;
        if (!d) {
            CHECK(!"no response");
            test_fail_detail("waiting for the response to id %s", id);
            return NULL;
        }
        const json_val *r = json_doc_root(d);
        const json_val *rid = json_get(r, "id");
        if (rid) {
            char *s = json_write(rid, NULL);
            bool match = s && strcmp(s, id) == 0;
            if (!match) {
                CHECK(!"response to another id");
                test_fail_detail("wanted id %s, got %s", id, s ? s : "?");
            }
            free(s);
            if (match)
                return d;
        } else if (token && progress) {
            const json_val *p = json_get(r, "params");
            const char *m = json_get_str(r, "method");
            char *t = json_write(json_get(p, "progressToken"), NULL);
            if (m && strcmp(m, "notifications/progress") == 0 && t && strcmp(t, token) == 0)
                (*progress)++;
            free(t);
        }
        json_doc_free(d);
    }
}

/* Send a request and wait for its response. */
static json_doc *rpc(child *c, const char *line, const char *id)
{
    if (!CHECK(send_line(c, line)))
        return NULL;
    return wait_id(c, id, 60000, NULL, NULL);
}

static int64_t error_code(json_doc *d)
{
    return json_get_int(json_get(json_doc_root(d), "error"), "code", 0);
}

/* Close stdin, wait for the exit; returns the exit status (or -1 after a
 * kill when it hung). */
static int stop(child *c, int wait_ms)
{
    if (c->to >= 0)
        close(c->to);
    c->to = -1;
    int st = 0;
    long long deadline = testlib_now_ms() + wait_ms;
    pid_t r;
    while ((r = waitpid(c->pid, &st, WNOHANG)) == 0 && testlib_now_ms() < deadline) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    int rc;
    if (r == 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, &st, 0);
        rc = -1;
    } else {
        rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    close(c->from);
    free(c->buf);
    c->buf = NULL;
    return rc;
}

static const char INIT[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"test_mcp\",\"version\":"
    "\"1\"}}}";

static bool handshake(child *c)
{
    json_doc *d = rpc(c, INIT, "1");
    bool ok = d && json_get(json_doc_root(d), "result");
    json_doc_free(d);
    return CHECK(ok) && CHECK(send_line(c, "{\"jsonrpc\":\"2.0\",\"method\":"
                                          "\"notifications/initialized\"}"));
}

/* A ping right now must be the next message: the server is alive and
 * wrote nothing for what came before. */
static void check_alive(child *c, int n)
{
    char line[128], id[32];
    snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":\"alive%d\",\"method\":\"ping\"}",
             n);
    snprintf(id, sizeof id, "\"alive%d\"", n);
    json_doc *d = rpc(c, line, id);
    CHECK(d && json_is(json_get(json_doc_root(d), "result"), JSON_OBJECT));
    json_doc_free(d);
}

/* ---- protocol ---- */

static void t_initialize(void)
{
    child c;
    if (!CHECK(start(&c, NULL)))
        return;
    json_doc *d = rpc(&c, INIT, "1");
    long long ms = testlib_now_ms() - c.started_ms;
    const json_val *r = json_get(json_doc_root(d), "result");
    CHECK_STR("2025-11-25", json_get_str(r, "protocolVersion"));
    CHECK(json_is(json_path(r, "capabilities.tools"), JSON_OBJECT));
    CHECK_STR("cdpgate", json_get_str(json_get(r, "serverInfo"), "name"));
    CHECK(json_get_str(json_get(r, "serverInfo"), "version") != NULL);
    CHECK(strstr(json_get_str(r, "instructions"), "untrusted") != NULL);
    json_doc_free(d);
    /* No browser is started for initialize: it is answered at once. */
    printf("test_mcp: initialize answered %lld ms after the process started\n", ms);
    CHECK(ms < 1000);
    CHECK_INT(0, stop(&c, 5000));
}

static void t_version_negotiation(void)
{
    child c;
    if (!CHECK(start(&c, NULL)))
        return;
    static const struct {
        const char *ask, *answer;
    } CASES[] = {
        {"2025-11-25", "2025-11-25"},
        {"2025-06-18", "2025-06-18"},
        {"2025-03-26", "2025-11-25"},   /* older than we speak: our latest */
        {"2024-11-05", "2025-11-25"},
        {"2099-01-01", "2025-11-25"},   /* unknown, newer: our latest */
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char line[256];
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"initialize\","
                 "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                 "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}", i + 10, CASES[i].ask);
        char id[16];
        snprintf(id, sizeof id, "%zu", i + 10);
        json_doc *d = rpc(&c, line, id);
        if (!CHECK_STR(CASES[i].answer,
                       json_path(json_doc_root(d), "result.protocolVersion") ?
                       json_str(json_path(json_doc_root(d), "result.protocolVersion"), NULL) :
                       "(none)"))
            test_fail_detail("client asked for %s", CASES[i].ask);
        json_doc_free(d);
    }
    /* protocolVersion is required. */
    json_doc *d = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"initialize\","
                      "\"params\":{\"capabilities\":{}}}", "99");
    CHECK_INT(-32602, error_code(d));
    json_doc_free(d);
    CHECK_INT(0, stop(&c, 5000));
}

static void t_ping(void)
{
    child c;
    if (!CHECK(start(&c, NULL)) || !handshake(&c))
        return;
    json_doc *d = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"p-1\",\"method\":\"ping\"}",
                      "\"p-1\"");
    CHECK(json_is(json_get(json_doc_root(d), "result"), JSON_OBJECT));
    CHECK_INT(0, json_len(json_get(json_doc_root(d), "result")));
    json_doc_free(d);
    d = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{}}", "7");
    CHECK(json_is(json_get(json_doc_root(d), "result"), JSON_OBJECT));
    json_doc_free(d);
    CHECK_INT(0, stop(&c, 5000));
}

static void t_tools_list(void)
{
    child c;
    if (!CHECK(start(&c, NULL)) || !handshake(&c))
        return;
    json_doc *d = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", "2");
    const json_val *tools = json_path(json_doc_root(d), "result.tools");
    static const char *const NAMES[] = {
        "browser_open", "browser_snapshot", "browser_click", "browser_hover", "browser_type",
        "browser_select", "browser_press", "browser_scroll", "browser_back",
        "browser_screenshot", "browser_tabs", "browser_dialog", "browser_login",
        "browser_takeover", "browser_read",
    };
    /* browser_record is listed only under --record-dir (test_record). */
    CHECK_INT(15, json_len(tools));
    for (size_t i = 0; i < 15; i++) {
        const json_val *t = json_at(tools, i);
        CHECK_STR(NAMES[i], json_get_str(t, "name"));
        CHECK(json_get_str(t, "description") != NULL);
        CHECK_STR("object", json_get_str(json_get(t, "inputSchema"), "type"));
        CHECK(json_is(json_path(t, "inputSchema.properties"), JSON_OBJECT));
    }
    CHECK_STR("url", json_str(json_path(tools, "0.inputSchema.required.0"), NULL));
    CHECK_STR("array", json_str(json_path(tools, "5.inputSchema.properties.values.type"),
                                NULL));
    /* The permanent prompt cost: the whole tools array as the model sees it. */
    size_t chars = 0;
    char *s = json_write(tools, &chars);
    free(s);
    printf("test_mcp: tools/list is %zu characters, about %zu tokens (chars/4); target "
           "under 1300 (0.3x @playwright/mcp's 4413)\n", chars, chars / 4);
    CHECK(chars / 4 < 1300);
    json_doc_free(d);
    /* A cursor is accepted (one page only). */
    d = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":"
            "{\"cursor\":\"x\"}}", "3");
    CHECK_INT(15, json_len(json_path(json_doc_root(d), "result.tools")));
    json_doc_free(d);
    CHECK_INT(0, stop(&c, 5000));
}

/* Each bad message gets its error (or, for notifications and responses,
 * nothing), and the server answers the next ping. */
static void t_bad_input_keeps_serving(void)
{
    child c;
    if (!CHECK(start(&c, NULL)) || !handshake(&c))
        return;
    static const struct {
        const char *line;
        const char *id;     /* expected response id; NULL: no response at all */
        int code;           /* expected error code; 0: a result with isError */
    } CASES[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", "null", -32700},
        {"not json at all", "null", -32700},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}", "null", -32700},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xc3\x28ng\"}", "null", -32700},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xed\xa0\x80\"}", "null",
         -32700},
        {"42", "null", -32600},
        {"\"ping\"", "null", -32600},
        {"null", "null", -32600},
        {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "null", -32600},
        {"[]", "null", -32600},
        {"{\"id\":5,\"method\":\"ping\"}", "5", -32600},
        {"{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}", "5", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "null", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", "null", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "null", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":17}", "5", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":5}", "5", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"id\":6,\"method\":\"ping\"}", "null", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/list\"}", "5", -32601},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"no/such\"}", "5", -32601},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":[1]}", "5",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\"}", "5", -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{}}", "5",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_frobnicate\"}}", "5", -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_click\",\"arguments\":[\"e1\"]}}", "5", -32602},
        /* Argument validation: tool results with isError (MCP 2025-11-25). */
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_click\",\"arguments\":{\"ref\":12}}}", "6", 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_click\",\"arguments\":{}}}", "6", 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_click\",\"arguments\":{\"ref\":\"e1\",\"force\":true}}}", "6", 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_snapshot\",\"arguments\":{\"offset\":-3}}}", "6", 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_snapshot\",\"arguments\":{\"offset\":\"3\"}}}", "6", 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_select\",\"arguments\":{\"ref\":\"e1\",\"values\":\"a\"}}}", "6", 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_tabs\",\"arguments\":{\"action\":\"open\"}}}", "6", 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_dialog\",\"arguments\":{\"accept\":1}}}", "6", 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"browser_type\",\"arguments\":{\"ref\":\"e1\",\"text\":\"a\\u0000b\"}}}", "6", 0},
        /* Never answered: notifications (even unknown or malformed ones) and
         * responses from the client. */
        {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}", NULL, 0},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
         "{\"requestId\":12345}}", NULL, 0},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":5}", NULL, 0},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}", NULL,
         0},
        {"{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}", NULL, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-1,\"message\":\"x\"}}", NULL,
         0},
        {"", NULL, 0},
        {"   \r", NULL, 0},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        int before = test_failures_now();
        CHECK(send_line(&c, CASES[i].line));
        if (CASES[i].id) {
            json_doc *d = wait_id(&c, CASES[i].id, 10000, NULL, NULL);
            const json_val *r = json_doc_root(d);
            if (CASES[i].code) {
                CHECK_INT(CASES[i].code, error_code(d));
                CHECK(json_get_str(json_get(r, "error"), "message") != NULL);
            } else {
                CHECK(json_bool(json_path(r, "result.isError")));
                const char *text = json_str(json_path(r, "result.content.0.text"), NULL);
                CHECK(text && strstr(text, "Invalid arguments for browser_"));
            }
            json_doc_free(d);
        }
        check_alive(&c, (int)i);
        if (test_failures_now() != before)
            test_fail_detail("case %zu: %s", i, CASES[i].line);
    }
    /* Nesting deeper than the limit. */
    char deep[400];
    size_t n = 0;
    n += (size_t)snprintf(deep, sizeof deep, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
                          "\"ping\",\"params\":{\"x\":");
    for (int i = 0; i < 100; i++)
        deep[n++] = '[';
    for (int i = 0; i < 100; i++)
        deep[n++] = ']';
    memcpy(deep + n, "}}", 3);
    json_doc *d = rpc(&c, deep, "null");
    CHECK_INT(-32600, error_code(d));
    json_doc_free(d);
    check_alive(&c, 1000);
    CHECK_INT(0, stop(&c, 5000));
}

/* A line over the limit is answered with an error and skipped, to its end;
 * the next line is served. Default limit 4 MiB, settable. */
static void t_oversized(void)
{
    const char *const small[] = {"--max-message", "1024", NULL};
    child c;
    if (!CHECK(start(&c, small)) || !handshake(&c))
        return;
    char *big = malloc(6 << 20);
    if (!big)
        return;
    int len = snprintf(big, 200, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\","
                       "\"params\":{\"pad\":\"");
    memset(big + len, 'x', 5000);
    memcpy(big + len + 5000, "\"}}", 4);
    json_doc *d = rpc(&c, big, "null");
    CHECK_INT(-32600, error_code(d));
    CHECK(strstr(json_get_str(json_get(json_doc_root(d), "error"), "message"), "1024"));
    json_doc_free(d);
    check_alive(&c, 1);
    /* Just under the limit is fine. */
    memset(big + len, 'y', 900);
    memcpy(big + len + 900, "\"}}", 4);
    d = rpc(&c, big, "3");
    CHECK(json_get(json_doc_root(d), "result") != NULL);
    json_doc_free(d);
    CHECK_INT(0, stop(&c, 5000));

    /* The default: 5 MiB is refused, 3 MiB accepted. */
    if (!CHECK(start(&c, NULL)) || !handshake(&c)) {
        free(big);
        return;
    }
    memset(big + len, 'z', 5 << 20);
    memcpy(big + len + (5 << 20), "\"}}", 4);
    d = rpc(&c, big, "null");
    CHECK_INT(-32600, error_code(d));
    json_doc_free(d);
    check_alive(&c, 2);
    memcpy(big + len + (3 << 20), "\"}}", 4);
    d = rpc(&c, big, "3");
    CHECK(json_get(json_doc_root(d), "result") != NULL);
    json_doc_free(d);
    free(big);
    CHECK_INT(0, stop(&c, 5000));
}

/* Several messages in one write, a message split across writes, CRLF line
 * ends: the stream is split on newlines only. */
static void t_framing(void)
{
    child c;
    if (!CHECK(start(&c, NULL)) || !handshake(&c))
        return;
    const char two[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"
                       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n";
    CHECK(send_raw(&c, two, sizeof two - 1));
    json_doc *d = wait_id(&c, "1", 5000, NULL, NULL);
    json_doc_free(d);
    d = wait_id(&c, "2", 5000, NULL, NULL);
    json_doc_free(d);
    const char split[] = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n";
    for (size_t i = 0; i < sizeof split - 1; i++) {
        CHECK(send_raw(&c, split + i, 1));
        if (i % 8 == 0) {
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    d = wait_id(&c, "3", 5000, NULL, NULL);
    json_doc_free(d);
    /* A last message without a newline before end of input is served. */
    CHECK(send_raw(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}", 40));
    close(c.to);
    c.to = -1;
    d = wait_id(&c, "4", 5000, NULL, NULL);
    json_doc_free(d);
    CHECK_INT(0, stop(&c, 5000));
}

/* End of input ends the server at once, with status 0. */
static void t_eof_exits(void)
{
    child c;
    if (!CHECK(start(&c, NULL)) || !handshake(&c))
        return;
    long long t0 = testlib_now_ms();
    CHECK_INT(0, stop(&c, 5000));
    CHECK(testlib_now_ms() - t0 < 2000);
    /* Without anything sent. */
    if (!CHECK(start(&c, NULL)))
        return;
    CHECK_INT(0, stop(&c, 5000));
}

/* The browser is launched on the first tool call, not before: with a
 * browser that does not exist the protocol works, and a tool call is a
 * tool error that names the problem; the server keeps serving. */
static void t_lazy_browser(void)
{
    const char *const args[] = {"--browser", "/nonexistent/chromium", NULL};
    child c;
    if (!CHECK(start(&c, args)) || !handshake(&c))
        return;
    json_doc *d = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", "2");
    CHECK_INT(15, json_len(json_path(json_doc_root(d), "result.tools")));
    json_doc_free(d);
    d = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"browser_snapshot\",\"arguments\":{}}}", "3");
    const json_val *r = json_get(json_doc_root(d), "result");
    CHECK(json_bool(json_get(r, "isError")));
    const char *text = json_str(json_path(r, "content.0.text"), NULL);
    if (!CHECK(text && strstr(text, "/nonexistent/chromium")))
        test_fail_detail("text: %s", text ? text : "(none)");
    json_doc_free(d);
    check_alive(&c, 1);
    CHECK_INT(0, stop(&c, 5000));
}

/* ---- tools against Chromium ---- */

static const char *const BROWSER_ARGS[] = {"--browser-arg", FIXTURE_HOST_RULES, NULL};

/* The arguments of a server for a regression case about what a tool says
 * or does, not about the browser's start: it attaches (--connect) to one
 * browser launched for the program on a port with the fixture's host
 * rules, its agent in browser contexts of its own (disposed when it
 * detaches), and waits for no browser of its own to start.
 * tools_end_to_end, lazy_browser, browser_dies and the CLI launch theirs.
 * NULL (a failed check or a skip) when that browser does not start. */
static const char *const *attach_args(void)
{
    static const char *const RULES[] = {FIXTURE_HOST_RULES, NULL};
    static char url[300];
    static const char *args[] = {"--connect", url, NULL};
    if (!world.browser)
        world.browser = testlib_launch(RULES, true);
    if (!world.browser)
        return NULL;
    snprintf(url, sizeof url, "%s", cdp_browser_ws_url(world.browser));
    return args;
}

/* Call a tool; returns the response document (result checked present). */
static json_doc *call_tool(child *c, int id, const char *name, const char *args_json)
{
    char *line = malloc(strlen(args_json) + 256);
    if (!line)
        return NULL;
    snprintf(line, strlen(args_json) + 256, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
             "\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}", id, name,
             args_json);
    char sid[16];
    snprintf(sid, sizeof sid, "%d", id);
    json_doc *d = rpc(c, line, sid);
    free(line);
    CHECK(json_get(json_doc_root(d), "result") != NULL);
    return d;
}

static const char *result_text(json_doc *d)
{
    const char *t = json_str(json_path(json_doc_root(d), "result.content.0.text"), NULL);
    return t ? t : "";
}

static bool is_error(json_doc *d)
{
    return json_bool(json_path(json_doc_root(d), "result.isError"));
}

/* The ref on the first line containing needle: "... [e12] ..." -> "e12". */
static bool find_ref(const char *text, const char *needle, char *ref, size_t cap)
{
    const char *p = strstr(text, needle);
    if (!p)
        return false;
    const char *eol = strchr(p, '\n');
    const char *b = strstr(p, "[e");
    if (!b || (eol && b > eol))
        return false;
    size_t n = 0;
    for (b += 1; *b != ']' && n + 1 < cap; b++)
        ref[n++] = *b;
    ref[n] = 0;
    return n > 1;
}

static void t_tools_end_to_end(void)
{
    if (!testlib_need_browser())
        return;
    child c;
    if (!CHECK(start(&c, BROWSER_ARGS)) || !handshake(&c))
        return;
    char url[256], args[512], ref[32], name_ref[32], greet_ref[32], ask_ref[32];
    testlib_world_url(&world, url, sizeof url, "a.test", "/mcp.html");

    /* browser_open with a progress token: progress, then the result. */
    snprintf(args, sizeof args, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"browser_open\",\"arguments\":{\"url\":\"%s\"},"
             "\"_meta\":{\"progressToken\":\"tok-1\"}}}", url);
    CHECK(send_line(&c, args));
    int progress = 0;
    json_doc *d = wait_id(&c, "10", 60000, "\"tok-1\"", &progress);
    CHECK(progress >= 1);
    if (!CHECK(!is_error(d)) || !CHECK(strstr(result_text(d), "MCP fixture")))
        test_fail_detail("browser_open: %s", result_text(d));
    CHECK(json_is(json_path(json_doc_root(d), "result.structuredContent"), JSON_OBJECT));
    json_doc_free(d);

    d = call_tool(&c, 11, "browser_snapshot", "{}");
    const char *text = result_text(d);
    CHECK(!is_error(d));
    if (!CHECK(find_ref(text, "textbox \"Name\"", name_ref, sizeof name_ref)) ||
        !CHECK(find_ref(text, "button \"Greet\"", greet_ref, sizeof greet_ref)) ||
        !CHECK(find_ref(text, "button \"Ask\"", ask_ref, sizeof ask_ref)))
        test_fail_detail("snapshot:\n%s", text);
    CHECK(strstr(text, "obs=o") != NULL);
    json_doc_free(d);

    snprintf(args, sizeof args, "{\"ref\":\"%s\",\"text\":\"Ada\"}", name_ref);
    d = call_tool(&c, 12, "browser_type", args);
    if (!CHECK(!is_error(d)))
        test_fail_detail("browser_type: %s", result_text(d));
    json_doc_free(d);
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", greet_ref);
    d = call_tool(&c, 13, "browser_click", args);
    if (!CHECK(!is_error(d)))
        test_fail_detail("browser_click: %s", result_text(d));
    json_doc_free(d);
    /* double:true is a double click (issue 13, point 6a). */
    snprintf(args, sizeof args, "{\"ref\":\"%s\",\"double\":true}", greet_ref);
    d = call_tool(&c, 30, "browser_click", args);
    if (!CHECK(!is_error(d)) || !CHECK(strstr(result_text(d), "double-clicked")))
        test_fail_detail("browser_click double: %s", result_text(d));
    json_doc_free(d);
    d = call_tool(&c, 14, "browser_snapshot", "{\"text\":true}");
    if (!CHECK(strstr(result_text(d), "Hello, Ada!")))
        test_fail_detail("page text: %s", result_text(d));
    json_doc_free(d);
    /* A text target in place of a ref (issue 13, point 6b). */
    d = call_tool(&c, 31, "browser_hover", "{\"ref\":\"text:hello, ada!\"}");
    if (!CHECK(!is_error(d)) || !CHECK(strstr(result_text(d), "hovered over e")) ||
        !CHECK(strstr(result_text(d), "(text \"Hello, Ada!\")")))
        test_fail_detail("browser_hover text: %s", result_text(d));
    json_doc_free(d);
    d = call_tool(&c, 15, "browser_snapshot", "{\"query\":\"Greet\"}");
    CHECK(strstr(result_text(d), "Greet") != NULL);
    CHECK(strstr(result_text(d), "Ask\"") == NULL);
    json_doc_free(d);

    /* A dialog raised by a click is reported, then answered. */
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", ask_ref);
    d = call_tool(&c, 16, "browser_click", args);
    if (!CHECK(strstr(result_text(d), "Really?")))
        test_fail_detail("click raising confirm(): %s", result_text(d));
    json_doc_free(d);
    d = call_tool(&c, 17, "browser_dialog", "{\"accept\":true}");
    if (!CHECK(!is_error(d)))
        test_fail_detail("browser_dialog: %s", result_text(d));
    json_doc_free(d);
    d = call_tool(&c, 18, "browser_snapshot", "{\"text\":true}");
    CHECK(strstr(result_text(d), "confirmed") != NULL);
    json_doc_free(d);

    /* Errors are tool results the model can read. */
    d = call_tool(&c, 19, "browser_click", "{\"ref\":\"e99999\"}");
    CHECK(is_error(d));
    CHECK(strlen(result_text(d)) > 0);
    json_doc_free(d);

    /* Screenshot: image content, base64 PNG. */
    d = call_tool(&c, 20, "browser_screenshot", "{}");
    const json_val *content = json_path(json_doc_root(d), "result.content");
    const json_val *img = NULL;
    for (const json_val *e = json_first(content); e; e = json_next(e))
        if (json_get_str(e, "type") && strcmp(json_get_str(e, "type"), "image") == 0)
            img = e;
    CHECK(img != NULL);
    CHECK_STR("image/png", json_get_str(img, "mimeType"));
    const char *data = json_get_str(img, "data");
    CHECK(data && strncmp(data, "iVBORw0KGgo", 11) == 0);   /* \x89PNG\r\n\x1a\n */
    CHECK(data && strlen(data) > 1000);
    json_doc_free(d);

    d = call_tool(&c, 21, "browser_tabs", "{\"action\":\"list\"}");
    CHECK(!is_error(d));
    CHECK(strstr(result_text(d), "t1") != NULL);
    json_doc_free(d);
    d = call_tool(&c, 22, "browser_scroll", "{\"direction\":\"bottom\"}");
    CHECK(!is_error(d));
    json_doc_free(d);
    /* What is in view after the scroll (issue 13, point 3a). */
    d = call_tool(&c, 22, "browser_snapshot", "{\"from\":\"viewport\"}");
    if (!CHECK(!is_error(d) && strstr(result_text(d), " view=viewport y=")))
        test_fail_detail("from viewport: %s", result_text(d));
    json_doc_free(d);
    d = call_tool(&c, 23, "browser_press", "{\"key\":\"Tab\"}");
    CHECK(!is_error(d));
    json_doc_free(d);

    /* Open a second page, go back to the first. */
    testlib_world_url(&world, url, sizeof url, "a.test", "/index.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    d = call_tool(&c, 24, "browser_open", args);
    CHECK(strstr(result_text(d), "Fixture home") != NULL);
    json_doc_free(d);
    d = call_tool(&c, 25, "browser_back", "{}");
    if (!CHECK(!is_error(d)))
        test_fail_detail("browser_back: %s", result_text(d));
    json_doc_free(d);
    d = call_tool(&c, 26, "browser_snapshot", "{}");
    CHECK(strstr(result_text(d), "MCP fixture") != NULL);
    /* Refs from before the navigation do not resolve on the new document. */
    json_doc_free(d);
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", greet_ref);
    d = call_tool(&c, 27, "browser_click", args);
    CHECK(is_error(d));
    json_doc_free(d);

    check_alive(&c, 1);
    CHECK_INT(0, stop(&c, 15000));
    (void)ref;
}

/* browser_open("javascript:...") ran the model's script in the current
 * page (with its origin and session) and then reported a failed
 * navigation. It is refused, in every spelling the URL parser accepts. */
static void t_open_javascript_url_refused_regression(void)
{
    if (!testlib_need_browser())
        return;
    child c;
    const char *const *srv = attach_args();
    if (!srv || !CHECK(start(&c, srv)) || !handshake(&c))
        return;
    char url[256], args[512];
    testlib_world_url(&world, url, sizeof url, "a.test", "/mcp.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    json_doc *d = call_tool(&c, 2, "browser_open", args);
    CHECK(!is_error(d));
    json_doc_free(d);
    static const char *const JS[] = {
        "{\"url\":\"javascript:document.title='PWNED'\"}",
        "{\"url\":\"  JavaScript:document.title='PWNED'\"}",
        "{\"url\":\"java\\tscript:document.title='PWNED'\"}",
        "{\"url\":\"\\u0001jav\\nascript:document.title='PWNED'\"}",
    };
    for (int i = 0; i < 4; i++) {
        d = call_tool(&c, 3 + i, "browser_open", JS[i]);
        if (!CHECK(is_error(d)))
            test_fail_detail("%s: %s", JS[i], result_text(d));
        CHECK(strstr(result_text(d), "javascript: URLs are refused") != NULL);
        CHECK_STR("invalid_argument",
                  json_str(json_path(json_doc_root(d), "result.structuredContent.error"), NULL));
        json_doc_free(d);
    }
    d = call_tool(&c, 9, "browser_snapshot", "{}");
    if (!CHECK(!strstr(result_text(d), "PWNED")))
        test_fail_detail("snapshot: %s", result_text(d));
    json_doc_free(d);
    stop(&c, 15000);
}

/* A refused scheme says how to do it instead: a file: URL names the
 * http server to run and the URL to open, view-source: and chrome: say
 * what to do instead; a failed navigation names the way on after
 * Chromium's error (issue 13, point 8c). */
static void t_open_local_url_says_how_regression(void)
{
    if (!testlib_need_browser())
        return;
    child c;
    const char *const *srv = attach_args();
    if (!srv || !CHECK(start(&c, srv)) || !handshake(&c))
        return;
    static const struct { const char *args, *want[2]; } U[] = {
        {"{\"url\":\"file:///etc/hostname\"}",
         {"cdpgate mcp never opens file: URLs (a file: page can read other local files)",
          "python3 -m http.server 8000 --bind 127.0.0.1 --directory FOLDER"}},
        {"{\"url\":\" FILE:///tmp/x.html\"}", {"never opens file: URLs", "http://127.0.0.1:8000/"}},
        {"{\"url\":\"view-source:http://a.test/\"}",
         {"view-source: URLs are never opened", "open the page's own http(s) URL"}},
        {"{\"url\":\"chrome://settings\"}", {"chrome: URLs are never opened", "ask the user"}},
    };
    for (int i = 0; i < 4; i++) {
        json_doc *d = call_tool(&c, 2 + i, "browser_open", U[i].args);
        CHECK(is_error(d));
        for (int k = 0; k < 2; k++)
            if (!CHECK(strstr(result_text(d), U[i].want[k]) != NULL))
                test_fail_detail("%s: %s", U[i].args, result_text(d));
        CHECK_STR("invalid_argument",
                  json_str(json_path(json_doc_root(d), "result.structuredContent.error"), NULL));
        json_doc_free(d);
    }
    char args[128];
    snprintf(args, sizeof args, "{\"url\":\"http://127.0.0.1:%d/\"}", fixture_closed_port());
    json_doc *d = call_tool(&c, 9, "browser_open", args);
    CHECK(is_error(d));
    if (!CHECK(strstr(result_text(d), "ERR_CONNECTION_REFUSED; nothing listens at that address")))
        test_fail_detail("%s", result_text(d));
    json_doc_free(d);
    stop(&c, 15000);
}

/* browser_screenshot fits a tool result: the full page of
 * tests/fixtures/shapes/tall.html (incompressible noise) comes back as a
 * JPEG (mimeType image/jpeg) of at most 800 KB, saying it was downscaled;
 * a region is clipped to its size; a malformed region is refused with the
 * form to use (issue 13, point 7). */
static void t_screenshot_cap_mcp_regression(void)
{
    if (!testlib_need_browser())
        return;
    child c;
    const char *const *srv = attach_args();
    if (!srv || !CHECK(start(&c, srv)) || !handshake(&c))
        return;
    char url[256], args[512];
    testlib_world_url(&world, url, sizeof url, "a.test", "/shapes/tall.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    json_doc *d = call_tool(&c, 2, "browser_open", args);
    CHECK(!is_error(d));
    json_doc_free(d);
    d = call_tool(&c, 3, "browser_screenshot", "{\"full_page\":true}");
    CHECK(!is_error(d));
    const json_val *img = NULL;
    for (const json_val *e = json_first(json_path(json_doc_root(d), "result.content")); e;
         e = json_next(e))
        if (json_get_str(e, "type") && strcmp(json_get_str(e, "type"), "image") == 0)
            img = e;
    CHECK(img != NULL);
    CHECK_STR("image/jpeg", json_get_str(img, "mimeType"));
    const char *data = json_get_str(img, "data");
    CHECK(data && strncmp(data, "/9j/", 4) == 0);   /* \xff\xd8\xff */
    if (!CHECK(data && strlen(data) <= (800 * 1024 + 2) / 3 * 4))
        test_fail_detail("%zu base64 chars", data ? strlen(data) : 0);
    CHECK(strstr(result_text(d), "downscaled") != NULL);
    CHECK(strstr(result_text(d), "cut at") != NULL);
    json_doc_free(d);
    d = call_tool(&c, 4, "browser_screenshot", "{\"region\":\"37,1500,321,123\"}");
    CHECK(!is_error(d));
    const json_val *sc = json_path(json_doc_root(d), "result.structuredContent");
    CHECK_INT(321, json_get_int(sc, "width", 0));
    CHECK_INT(123, json_get_int(sc, "height", 0));
    json_doc_free(d);
    d = call_tool(&c, 5, "browser_screenshot", "{\"region\":\"37,1500,wide\"}");
    CHECK(is_error(d));
    CHECK(strstr(result_text(d), "x,y,width,height") != NULL);
    json_doc_free(d);
    stop(&c, 15000);
}

/* Page text with bidi, invisible and C1 characters (tests/fixtures/shapes/
 * bidi.html) reaches the model only as visible escapes, in the text AND in
 * structuredContent: no response line of browser_snapshot, browser_tabs or
 * a click that raises a dialog holds one of them raw, nor a JSON escape
 * that decodes to one (issue 11, point 15b(e)). */
static const char *const BIDI_RAW[] = {
    "\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x80\x8b", "\xe2\x80\xa8", "\xf3\xa0\x81\x81", "\xc2\x9b",
    "\xc2\x85",
};
static const char *const BIDI_JSON_ESC[] = {
    "\\u202e", "\\u202E", "\\u2066", "\\u200b", "\\u200B", "\\u2028", "\\udb40", "\\uDB40",
    "\\u009b", "\\u009B", "\\u0085",
};

/* Call a tool and return the raw response line (new), checked for the
 * characters; *d gets it parsed. */
static char *call_raw(child *c, int id, const char *name, const char *args_json, json_doc **d)
{
    char line[1024], want[32];
    snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"%s\",\"arguments\":%s}}", id, name, args_json);
    snprintf(want, sizeof want, "\"id\":%d,", id);
    *d = NULL;
    CHECK(send_line(c, line));
    char *got = NULL;
    for (int i = 0; i < 50 && !got; i++) {
        char *l = recv_line(c, 60000);
        if (!l)
            break;
        if (strstr(l, want))
            got = l;
        else
            free(l);
    }
    if (!CHECK(got != NULL)) {
        test_fail_detail("no response to %s", name);
        return NULL;
    }
    *d = json_parse(got, strlen(got), NULL, NULL);
    CHECK(*d != NULL);
    for (size_t k = 0; k < sizeof BIDI_RAW / sizeof BIDI_RAW[0]; k++)
        if (!CHECK(strstr(got, BIDI_RAW[k]) == NULL))
            test_fail_detail("%s: raw character %zu in %s", name, k, got);
    for (size_t k = 0; k < sizeof BIDI_JSON_ESC / sizeof BIDI_JSON_ESC[0]; k++) {
        for (const char *p = strstr(got, BIDI_JSON_ESC[k]); p;
             p = strstr(p + 1, BIDI_JSON_ESC[k])) {
            size_t bs = 0;
            while (p - bs > got && p[-1 - (ptrdiff_t)bs] == '\\')
                bs++;
            if (!CHECK(bs % 2 == 1))
                test_fail_detail("%s: JSON escape %s (decodes raw) in %s", name,
                                 BIDI_JSON_ESC[k], got);
        }
    }
    return got;
}

/* The decoded string at path holds want (visible escapes as text). */
static void check_member_has(json_doc *d, const char *path, const char *want)
{
    const char *v = json_str(json_path(json_doc_root(d), path), NULL);
    if (!CHECK(v && strstr(v, want)))
        test_fail_detail("%s: %s not in %s", path, want, v ? v : "(absent)");
}

static void t_bidi_structured_regression(void)
{
    if (!testlib_need_browser())
        return;
    child c;
    const char *const *srv = attach_args();
    if (!srv || !CHECK(start(&c, srv)) || !handshake(&c))
        return;
    static const char WANT[] = "A\\u202eB\\u2066C\\u200bD\\u2028E\\u{e0041}F\\u009bG";
    char url[256], args[512], want[256], ref[32] = "";
    testlib_world_url(&world, url, sizeof url, "a.test", "/shapes/bidi.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    json_doc *d;
    free(call_raw(&c, 2, "browser_open", args, &d));
    json_doc_free(d);
    char *raw = call_raw(&c, 3, "browser_snapshot", "{}", &d);
    snprintf(want, sizeof want, "Title%s", WANT);
    check_member_has(d, "result.structuredContent.title", want);
    snprintf(want, sizeof want, "Heading%s", WANT);
    check_member_has(d, "result.content.0.text", want);
    if (!CHECK(find_ref(result_text(d), "button \"Alert\"", ref, sizeof ref)))
        test_fail_detail("snapshot: %s", raw ? raw : "");
    free(raw);
    json_doc_free(d);
    free(call_raw(&c, 4, "browser_snapshot", "{\"text\":true}", &d));
    snprintf(want, sizeof want, "Link%s", WANT);
    check_member_has(d, "result.content.0.text", want);
    json_doc_free(d);
    free(call_raw(&c, 5, "browser_tabs", "{\"action\":\"list\"}", &d));
    snprintf(want, sizeof want, "Title%s", WANT);
    check_member_has(d, "result.structuredContent.tabs.0.title", want);
    json_doc_free(d);
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", ref);
    free(call_raw(&c, 6, "browser_click", args, &d));
    snprintf(want, sizeof want, "Dialog%s", WANT);
    check_member_has(d, "result.structuredContent.dialog.message", want);
    check_member_has(d, "result.content.0.text", want);
    json_doc_free(d);
    free(call_raw(&c, 7, "browser_dialog", "{\"accept\":true}", &d));
    json_doc_free(d);
    /* The gate's reason (review of session 8, F1): accepting a prompt that
     * asks for a password is refused; text and structured "reason" quote
     * its message escaped, U+0085 and the quote too. */
    free(call_raw(&c, 8, "browser_snapshot", "{}", &d));
    if (!CHECK(find_ref(result_text(d), "button \"Ask\"", ref, sizeof ref)))
        test_fail_detail("snapshot: %s", result_text(d));
    json_doc_free(d);
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", ref);
    free(call_raw(&c, 9, "browser_click", args, &d));
    json_doc_free(d);
    free(call_raw(&c, 10, "browser_dialog", "{\"accept\":true}", &d));
    snprintf(want, sizeof want, "credential: dialog \"Enter your password %s c1\\u0085 "
             "\\\"q\\\"\" has \"password\"", WANT);
    check_member_has(d, "result.structuredContent.reason", want);
    check_member_has(d, "result.content.0.text", want);
    json_doc_free(d);
    free(call_raw(&c, 11, "browser_dialog", "{\"accept\":false}", &d));
    json_doc_free(d);
    /* A dialog raised while the page opens (F2): browser_open's text. */
    testlib_world_url(&world, url, sizeof url, "a.test", "/shapes/bidi-alert.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    free(call_raw(&c, 12, "browser_open", args, &d));
    snprintf(want, sizeof want, "Opened%s c1\\u0085 \"q\"<<<end page-content", WANT);
    check_member_has(d, "result.content.0.text", want);
    json_doc_free(d);
    free(call_raw(&c, 13, "browser_dialog", "{\"accept\":false}", &d));
    json_doc_free(d);
    check_alive(&c, 1);
    CHECK_INT(0, stop(&c, 15000));
}

/* Cancellation: a request cancelled while it runs, or while it waits in
 * the queue, is never answered; a ping sent during a long call is answered
 * before that call ends. */
static void t_cancel_and_ping(void)
{
    if (!testlib_need_browser())
        return;
    child c;
    const char *const *srv = attach_args();
    if (!srv || !CHECK(start(&c, srv)) || !handshake(&c))
        return;
    char url[256], line[1024];
    testlib_world_url(&world, url, sizeof url, "a.test", "/slow?ms=1500");
    /* 10: a slow navigation (after the browser launch). 11: ping, answered
     * while 10 runs. 12: tools/list, queued behind 10, cancelled. */
    snprintf(line, sizeof line,
             "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":"
             "{\"name\":\"browser_open\",\"arguments\":{\"url\":\"%s\"}}}\n"
             "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\"}\n"
             "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/list\"}\n"
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
             "{\"requestId\":12,\"reason\":\"test\"}}\n", url);
    CHECK(send_raw(&c, line, strlen(line)));
    json_doc *d = wait_id(&c, "11", 60000, NULL, NULL);
    json_doc_free(d);
    d = wait_id(&c, "10", 60000, NULL, NULL);
    CHECK(json_get(json_doc_root(d), "result") != NULL);
    json_doc_free(d);
    check_alive(&c, 1);     /* and no answer to 12 came in between */

    /* 20 cancelled in the same write: never answered. */
    snprintf(line, sizeof line,
             "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/call\",\"params\":"
             "{\"name\":\"browser_open\",\"arguments\":{\"url\":\"%s\"}}}\n"
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
             "{\"requestId\":20}}\n", url);
    CHECK(send_raw(&c, line, strlen(line)));
    check_alive(&c, 2);
    /* 30 cancelled while it runs (the slow page takes 1.5 s). */
    snprintf(line, sizeof line,
             "{\"jsonrpc\":\"2.0\",\"id\":\"thirty\",\"method\":\"tools/call\",\"params\":"
             "{\"name\":\"browser_open\",\"arguments\":{\"url\":\"%s\"}}}", url);
    CHECK(send_line(&c, line));
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CHECK(send_line(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                        "\"params\":{\"requestId\":\"thirty\"}}"));
    check_alive(&c, 3);
    CHECK_INT(0, stop(&c, 15000));
}

/* The browser dies between calls (killed by its pid): the next call says so
 * and starts a new browser; browser_open works again at once. */
static void t_browser_dies(void)
{
    const char *real = fixture_browser();
    if (!real) {
        testlib_need_browser();
        return;
    }
    /* A wrapper that records the browser's pid, then becomes the browser. */
    char dir[128];
    if (!CHECK_INT(0, testlib_tempdir("mcp-dies", dir, sizeof dir)))
        return;
    char wrapper[300], pidfile[300];
    snprintf(wrapper, sizeof wrapper, "%s/browser", dir);
    snprintf(pidfile, sizeof pidfile, "%s/pid", dir);
    FILE *f = fopen(wrapper, "w");
    if (!CHECK(f != NULL))
        return;
    fprintf(f, "#!/bin/sh\necho $$ > '%s'\nexec '%s' \"$@\"\n", pidfile, real);
    fclose(f);
    chmod(wrapper, 0755);
    const char *const args[] = {"--browser", wrapper, "--browser-arg", FIXTURE_HOST_RULES, NULL};
    child c;
    if (!CHECK(start(&c, args)) || !handshake(&c))
        return;
    char url[256], a[400];
    testlib_world_url(&world, url, sizeof url, "a.test", "/index.html");
    snprintf(a, sizeof a, "{\"url\":\"%s\"}", url);
    json_doc *d = call_tool(&c, 2, "browser_open", a);
    CHECK(!is_error(d));
    json_doc_free(d);
    char *pid = test_read_file(pidfile, NULL);
    long bpid = pid ? strtol(pid, NULL, 10) : 0;
    free(pid);
    if (CHECK(bpid > 1)) {
        kill((pid_t)bpid, SIGKILL);
        for (int i = 0; i < 200 && kill((pid_t)bpid, 0) == 0; i++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    d = call_tool(&c, 3, "browser_snapshot", "{}");
    CHECK(is_error(d));
    if (!CHECK(strstr(result_text(d), "browser had died")))
        test_fail_detail("text: %s", result_text(d));
    json_doc_free(d);
    d = call_tool(&c, 4, "browser_open", a);
    if (!CHECK(!is_error(d)) || !CHECK(strstr(result_text(d), "Fixture home")))
        test_fail_detail("text: %s", result_text(d));
    json_doc_free(d);
    CHECK_INT(0, stop(&c, 15000));
    unlink(pidfile);
    unlink(wrapper);
    rmdir(dir);
}

/* ---- the CLI ---- */

/* Replace the nonce value after every "nonce=" with "N", in place. */
static void mask_nonce(char *s)
{
    char *p = s;
    while ((p = strstr(p, "nonce="))) {
        p += 6;
        char *e = p;
        while ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f') || (*e >= 'A' && *e <= 'F'))
            e++;
        if (e > p) {
            *p = 'N';
            memmove(p + 1, e, strlen(e) + 1);
        }
    }
}

static void t_cli(void)
{
    char cmd[1024], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "%s --help", testlib_cdpgate_bin());
    CHECK_INT(0, fixture_run(cmd, &out, &err));
    CHECK(strstr(out, "snapshot URL") != NULL);
    CHECK(strstr(out, "screenshot URL -o FILE") != NULL);
    CHECK(strstr(out, "  mcp ") != NULL);
    CHECK(strstr(out, "--max-message") != NULL);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s screenshot http://a.test/", testlib_cdpgate_bin());
    CHECK_INT(2, fixture_run(cmd, &out, &err));
    CHECK(strstr(err, "-o FILE") != NULL);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s snapshot", testlib_cdpgate_bin());
    CHECK_INT(2, fixture_run(cmd, &out, &err));
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s mcp extra", testlib_cdpgate_bin());
    CHECK_INT(2, fixture_run(cmd, &out, &err));
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s --max-message 12 mcp", testlib_cdpgate_bin());
    CHECK_INT(2, fixture_run(cmd, &out, &err));
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s --browser /nonexistent snapshot http://a.test/",
             testlib_cdpgate_bin());
    CHECK_INT(3, fixture_run(cmd, &out, &err));
    free(out), free(err);
    /* `cdpgate policy`: what is enforced, and the v1 exclusions named as
     * not enforced; with a grant, the grant too. A malformed grant stops
     * every command at start (exit 2) with the field named. */
    snprintf(cmd, sizeof cmd, "%s policy", testlib_cdpgate_bin());
    CHECK_INT(0, fixture_run(cmd, &out, &err));
    static const char *const EXCL[] = {
        "snapshot_cookie_integrity", "bot_to_bot_channel_injection", "approval_fatigue",
        "prompt_data_separation_as_boundary", "generic_browser_click_binding",
        "local_device_execution_isolation", "bot_as_security_boundary"};
    CHECK(out && strstr(out, "not enforced in v1"));
    for (size_t i = 0; i < sizeof EXCL / sizeof EXCL[0]; i++)
        if (!CHECK(out && strstr(out, EXCL[i])))
            test_fail_detail("cdpgate policy does not list %s", EXCL[i]);
    CHECK(out && strstr(out, "grant: none"));
    free(out), free(err);
    char gpath[] = "/tmp/cdpgate-policy-XXXXXX";
    int gfd = mkstemp(gpath);
    if (CHECK(gfd >= 0)) {
        static const char G[] = "{\"task\":\"t1\",\"origins\":[\"https://bank.test\"],"
                                "\"egress\":[\"approved_origin_fetch\"]}";
        CHECK(write(gfd, G, sizeof G - 1) == (ssize_t)(sizeof G - 1));
        close(gfd);
        snprintf(cmd, sizeof cmd, "%s --grant %s policy", testlib_cdpgate_bin(), gpath);
        CHECK_INT(0, fixture_run(cmd, &out, &err));
        CHECK(out && strstr(out, "task t1") && strstr(out, "https://bank.test") &&
              strstr(out, "approved_origin_fetch"));
        CHECK(out && strstr(out, "(read from egress)"));
        free(out), free(err);
        /* the policy document's name for the field: same values, and
         * `cdpgate policy` says which field it read */
        gfd = open(gpath, O_WRONLY | O_TRUNC);
        static const char G2[] = "{\"task\":\"t2\",\"egress_classes\":[\"structured_send\"]}";
        CHECK(gfd >= 0 && write(gfd, G2, sizeof G2 - 1) == (ssize_t)(sizeof G2 - 1));
        close(gfd);
        CHECK_INT(0, fixture_run(cmd, &out, &err));
        CHECK(out && strstr(out, "egress: structured_send (read from egress_classes)"));
        free(out), free(err);
        gfd = open(gpath, O_WRONLY | O_TRUNC);
        static const char BAD[] = "{\"task\":\"t1\",\"origns\":[]}";
        CHECK(gfd >= 0 && write(gfd, BAD, sizeof BAD - 1) == (ssize_t)(sizeof BAD - 1));
        close(gfd);
        snprintf(cmd, sizeof cmd, "%s --grant %s mcp </dev/null", testlib_cdpgate_bin(), gpath);
        CHECK_INT(2, fixture_run(cmd, &out, &err));
        CHECK(err && strstr(err, "origns"));
        free(out), free(err);
        unlink(gpath);
    }
    if (!testlib_need_browser())
        return;

    /* The TTY confirmation: `eval` under a grant asks at the terminal
     * (/dev/tty; script(1) gives it one): "y" runs it, "n" refuses it. */
    char tg[] = "/tmp/cdpgate-tty-XXXXXX";
    int tfd = mkstemp(tg);
    if (CHECK(tfd >= 0)) {
        char gb[300], page[256];
        int gn = snprintf(gb, sizeof gb, "{\"task\":\"tty\",\"tools\":[\"open\",\"eval\"],"
                          "\"origins\":[\"http://a.test:%d\"]}", world.port);
        CHECK(write(tfd, gb, (size_t)gn) == gn);
        close(tfd);
        testlib_world_url(&world, page, sizeof page, "a.test", "/mcp.html");
        for (int yes = 1; yes >= 0; yes--) {
            snprintf(cmd, sizeof cmd, "printf '%s\\n' | script -q -e -c \"%s "
                     "--browser-arg='%s' --grant %s eval %s document.title\" /dev/null",
                     yes ? "y" : "n", testlib_cdpgate_bin(), FIXTURE_HOST_RULES, tg, page);
            int rc = fixture_run(cmd, &out, &err);
            /* The human's prompt (issue 11, point 3): cdpgate's verdict first,
             * the script whole with numbered lines, then the question. */
            char verdict[160];
            snprintf(verdict, sizeof verdict, "cdpgate: the agent asks to run a script in "
                     "the page (eval) on http://a.test:%d.", world.port);
            const char *vp = out ? strstr(out, verdict) : NULL;
            const char *sp = out ? strstr(out, "     1| document.title") : NULL;
            const char *qp = out ? strstr(out, "Allow this one action? [y/N]") : NULL;
            CHECK(vp && sp && qp && vp < sp && sp < qp);
            if (yes) {
                CHECK_INT(0, rc);
                CHECK(out && strstr(out, "\"MCP fixture"));
            } else {
                CHECK_INT(1, rc);
                CHECK(out && strstr(out, "denied at the terminal"));
            }
            if (test_failures_now())
                test_fail_detail("%s\nstdout: %s\nstderr: %s", cmd, out ? out : "",
                                 err ? err : "");
            free(out), free(err);
        }
        unlink(tg);
    }

    /* `cdpgate snapshot URL` prints what browser_snapshot returns (after the
     * same open), up to the per-session nonce. */
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", "/mcp.html");
    snprintf(cmd, sizeof cmd, "%s --browser-arg='%s' snapshot %s", testlib_cdpgate_bin(),
             FIXTURE_HOST_RULES, url);
    int rc = fixture_run(cmd, &out, &err);
    if (!CHECK_INT(0, rc))
        test_fail_detail("stderr: %s", err);
    CHECK(strstr(out, "MCP fixture") != NULL);
    CHECK(strstr(out, "[e") != NULL);
    child c;
    if (CHECK(start(&c, BROWSER_ARGS)) && handshake(&c)) {
        char args[400];
        snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
        json_doc *d = call_tool(&c, 2, "browser_open", args);
        json_doc_free(d);
        d = call_tool(&c, 3, "browser_snapshot", "{}");
        char *mcp_text = strdup(result_text(d));
        json_doc_free(d);
        mask_nonce(mcp_text);
        mask_nonce(out);
        size_t n = strlen(out);
        if (n && out[n - 1] == '\n' && (!*mcp_text || mcp_text[strlen(mcp_text) - 1] != '\n'))
            out[n - 1] = 0;
        if (!CHECK_STR(mcp_text, out))
            test_fail_detail("cli and mcp snapshots differ");
        free(mcp_text);
        stop(&c, 15000);
    }
    free(out), free(err);

    /* `cdpgate screenshot URL -o FILE` writes a PNG. */
    char file[] = "/tmp/cdpgate-shot-XXXXXX";
    int fd = mkstemp(file);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    snprintf(cmd, sizeof cmd, "%s --browser-arg='%s' screenshot %s -o %s --full-page",
             testlib_cdpgate_bin(), FIXTURE_HOST_RULES, url, file);
    rc = fixture_run(cmd, &out, &err);
    if (!CHECK_INT(0, rc))
        test_fail_detail("stderr: %s", err);
    size_t len = 0;
    char *png = test_read_file(file, &len);
    CHECK(png && len > 100);
    if (png && len >= 8)
        CHECK_MEM("\x89PNG\r\n\x1a\n", 8, png, 8);
    free(png);
    free(out), free(err);
    /* With --max-bytes, a page of noise fits: downscaled JPEG (issue 13, 7). */
    char tall[256];
    testlib_world_url(&world, tall, sizeof tall, "a.test", "/shapes/tall.html");
    snprintf(cmd, sizeof cmd, "%s --browser-arg='%s' screenshot %s -o %s --full-page "
             "--max-bytes 300000", testlib_cdpgate_bin(), FIXTURE_HOST_RULES, tall, file);
    rc = fixture_run(cmd, &out, &err);
    if (!CHECK_INT(0, rc))
        test_fail_detail("stderr: %s", err);
    CHECK(out && strstr(out, "JPEG") != NULL);
    png = test_read_file(file, &len);
    if (!CHECK(png && len > 1000 && len <= 300000))
        test_fail_detail("%zu bytes", len);
    if (png && len >= 3)
        CHECK_MEM("\xff\xd8\xff", 3, png, 3);
    free(png);
    free(out), free(err);
    unlink(file);
}

/* `cdpgate demo` walks the embedded site through every kind of step and
 * says what each one did. */
static void t_demo(void)
{
    if (!testlib_need_browser())
        return;
    char cmd[512], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "%s demo", testlib_cdpgate_bin());
    int rc = fixture_run(cmd, &out, &err);
    if (!CHECK_INT(0, rc))
        test_fail_detail("stdout:\n%s\nstderr:\n%s", out, err);
    static const char *const WANT[] = {
        "button \"Select\" [e",               /* the snapshot, with refs */
        "(row: Savings)",                       /* row context */
        "Selected Savings.",                    /* the click's effect */
        "navigated to http://127.0.0.1:",       /* type + submit */
        "/search?q=coffee",
        ". back\n",
        "link \"Statement\" (target=_blank: a popup)",
        "t2",                                   /* the popup is a tab */
        "confirm",                              /* the dialog is reported */
        "Travel account closed.",               /* and accepting it worked */
        "demo: done",
    };
    for (size_t i = 0; i < sizeof WANT / sizeof WANT[0]; i++)
        if (!CHECK(out && strstr(out, WANT[i])))
            test_fail_detail("missing \"%s\"", WANT[i]);
    if (test_failures_now())
        test_fail_detail("demo output:\n%s\nstderr:\n%s", out, err);
    free(out), free(err);
}

/* ---- the official TypeScript SDK as the client ---- */

static void t_sdk_client(void)
{
    if (access("tests/peers/node_modules/@modelcontextprotocol/sdk/package.json", F_OK) != 0) {
        test_skip("tests/peers/node_modules/@modelcontextprotocol/sdk missing "
                  "(run: cd tests/peers && npm install)");
        return;
    }
    if (fixture_run("node --version", NULL, NULL) != 0) {
        test_skip("node is not installed");
        return;
    }
    bool browser = fixture_browser() != NULL;
    char url[256], cmd[1024], *out = NULL, *err = NULL;
    testlib_world_url(&world, url, sizeof url, "a.test", "/mcp.html");
    snprintf(cmd, sizeof cmd, "node tests/peers/mcp_client.mjs '%s' '%s' '%s'",
             testlib_cdpgate_bin(), FIXTURE_HOST_RULES, browser ? url : "");
    int rc = fixture_run(cmd, &out, &err);
    if (!CHECK_INT(0, rc))
        test_fail_detail("stdout: %s\nstderr: %s", out, err);
    json_doc *d = json_parse(out ? out : "", out ? strlen(out) : 0, NULL, NULL);
    const json_val *r = json_doc_root(d);
    if (!CHECK(json_is(r, JSON_OBJECT)))
        test_fail_detail("summary: %s", out);
    CHECK_STR("2025-11-25", json_get_str(r, "protocolVersion"));
    CHECK_STR("cdpgate", json_get_str(r, "serverName"));
    CHECK_INT(15, json_get_int(r, "tools", 0));
    CHECK(json_get_int(r, "toolsListChars", 0) > 0);
    CHECK(json_bool(json_get(r, "unknownToolRejected")));
    CHECK(json_bool(json_get(r, "badArgsIsError")));
    if (browser) {
        CHECK(json_bool(json_get(r, "openOk")));
        CHECK(json_bool(json_get(r, "openStructured")));
        CHECK(json_bool(json_get(r, "snapshotHasRefs")));
        CHECK(json_bool(json_get(r, "clickOk")));
        CHECK(json_bool(json_get(r, "clickChangedPage")));
        CHECK(json_get_int(r, "progress", 0) >= 1);
    }
    json_doc_free(d);
    free(out), free(err);
}


/* ---- the gate through MCP: elicitation, takeover ---- */

/* Read messages until a server request with this method arrives; returns
 * it (the caller frees) or NULL. Responses to our ids must not come first. */
static json_doc *wait_request(child *c, const char *method, int timeout_ms)
{
    long long deadline = testlib_now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - testlib_now_ms();
        json_doc *d = left > 0 ? recv_msg(c, (int)left) : NULL;
        if (!d) {
            CHECK(!"no request from the server");
            test_fail_detail("waiting for %s", method);
            return NULL;
        }
        const char *m = json_get_str(json_doc_root(d), "method");
        if (m && strcmp(m, method) == 0 && json_get(json_doc_root(d), "id"))
            return d;
        if (!m) {
            CHECK(!"a response came before the server's request");
            json_doc_free(d);
            return NULL;
        }
        json_doc_free(d);
    }
}

/* Answer the server request req with result (a JSON text) or, result NULL,
 * an error. */
static void answer(child *c, json_doc *req, const char *result)
{
    char *id = json_write(json_get(json_doc_root(req), "id"), NULL);
    char line[1024];
    if (result)
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}", id, result);
    else
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-1,"
                 "\"message\":\"no\"}}", id);
    free(id);
    CHECK(send_line(c, line));
}

static void t_gate_elicitation_and_takeover(void)
{
    if (!testlib_need_browser())
        return;
    char grant[] = "/tmp/cdpgate-mcp-grant-XXXXXX";
    int gfd = mkstemp(grant);
    if (!CHECK(gfd >= 0))
        return;
    char body[512];
    int n = snprintf(body, sizeof body, "{\"task\":\"mcp-elicit\",\"tools\":[\"open\","
                     "\"snapshot\",\"eval\",\"takeover\"],\"origins\":[\"http://a.test:%d\"]}",
                     world.port);
    CHECK(write(gfd, body, (size_t)n) == n);
    close(gfd);
    const char *extra[] = {"--browser-arg", FIXTURE_HOST_RULES, "--grant", grant,
                           "--takeover-headless", NULL};
    child c;
    if (!CHECK(start(&c, extra))) {
        unlink(grant);
        return;
    }
    /* A client that can be asked. */
    json_doc *d = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                      "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":"
                      "{}},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}", "1");
    json_doc_free(d);
    CHECK(send_line(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
    /* eval is listed: the grant names it. */
    d = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", "2");
    char *tl = d ? json_write(json_doc_root(d), NULL) : NULL;
    CHECK(tl && strstr(tl, "\"browser_eval\"") && !strstr(tl, "\"browser_upload\""));
    free(tl);
    json_doc_free(d);
    char url[256], args[512];
    testlib_world_url(&world, url, sizeof url, "a.test", "/mcp.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    d = call_tool(&c, 3, "browser_open", args);
    CHECK(!is_error(d));
    json_doc_free(d);
    /* 1. The user approves: the value comes back. */
    CHECK(send_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
                        "{\"name\":\"browser_eval\",\"arguments\":{\"expression\":\"6*7\"}}}"));
    json_doc *q = wait_request(&c, "elicitation/create", 30000);
    if (q) {
        const json_val *p = json_get(json_doc_root(q), "params");
        const char *msg = json_get_str(p, "message");
        CHECK(msg && strstr(msg, "eval") && strstr(msg, "a.test"));
        /* The human sees cdpgate's verdict first, then the whole script
         * they approve, line by line. */
        CHECK(msg && strncmp(msg, "cdpgate: the agent asks to run a script in the page (eval) "
                             "on http://a.test:", 76) == 0);
        CHECK(msg && strstr(msg, "\n     1| 6*7\n  (end of the script)\n"));
        CHECK(json_is(json_path(p, "requestedSchema.properties.approve"), JSON_OBJECT));
        answer(&c, q, "{\"action\":\"accept\",\"content\":{\"approve\":true}}");
        json_doc_free(q);
    }
    d = wait_id(&c, "4", 30000, NULL, NULL);
    CHECK(d && !is_error(d) && strstr(result_text(d), "42"));
    json_doc_free(d);
    /* 2. The user declines: refused, with the reason. */
    CHECK(send_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
                        "{\"name\":\"browser_eval\",\"arguments\":{\"expression\":"
                        "\"document.title='x'\"}}}"));
    q = wait_request(&c, "elicitation/create", 30000);
    if (q) {
        const char *msg = json_get_str(json_get(json_doc_root(q), "params"), "message");
        CHECK(msg && strstr(msg, "\n     1| document.title='x'\n"));
        answer(&c, q, "{\"action\":\"decline\"}");
        json_doc_free(q);
    }
    d = wait_id(&c, "5", 30000, NULL, NULL);
    CHECK(d && is_error(d) && strstr(result_text(d), "declined"));
    json_doc_free(d);
    /* 3. An error answer, and an accept without approve: both deny. */
    CHECK(send_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
                        "{\"name\":\"browser_eval\",\"arguments\":{\"expression\":\"1\"}}}"));
    q = wait_request(&c, "elicitation/create", 30000);
    if (q) {
        answer(&c, q, NULL);
        json_doc_free(q);
    }
    d = wait_id(&c, "6", 30000, NULL, NULL);
    CHECK(d && is_error(d) && strstr(result_text(d), "denied"));
    json_doc_free(d);
    CHECK(send_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                        "{\"name\":\"browser_eval\",\"arguments\":{\"expression\":\"1\"}}}"));
    q = wait_request(&c, "elicitation/create", 30000);
    if (q) {
        answer(&c, q, "{\"action\":\"accept\",\"content\":{\"approve\":false}}");
        json_doc_free(q);
    }
    d = wait_id(&c, "7", 30000, NULL, NULL);
    CHECK(d && is_error(d));
    json_doc_free(d);
    /* The title never changed: nothing declined ran. */
    CHECK(send_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":"
                        "{\"name\":\"browser_eval\",\"arguments\":{\"expression\":"
                        "\"document.title\"}}}"));
    q = wait_request(&c, "elicitation/create", 30000);
    if (q) {
        answer(&c, q, "{\"action\":\"accept\",\"content\":{\"approve\":true}}");
        json_doc_free(q);
    }
    d = wait_id(&c, "8", 30000, NULL, NULL);
    CHECK(d && strstr(result_text(d), "MCP fixture") && !strstr(result_text(d), "\"x\""));
    json_doc_free(d);
    /* A script longer than a confirmation can show whole: refused without
     * asking (no elicitation), never shown cut. */
    {
        char big[GATE_SCRIPT_SHOWN + 200];
        int k = snprintf(big, sizeof big, "{\"jsonrpc\":\"2.0\",\"id\":81,\"method\":"
                         "\"tools/call\",\"params\":{\"name\":\"browser_eval\",\"arguments\":"
                         "{\"expression\":\"");
        for (int i = 0; i < GATE_SCRIPT_SHOWN + 1; i++)
            big[k++] = i % 2 ? '1' : '+';
        snprintf(big + k, sizeof big - (size_t)k, "\"}}}");
        CHECK(send_line(&c, big));
        d = wait_id(&c, "81", 30000, NULL, NULL);
        CHECK(d && is_error(d) && strstr(result_text(d), "it is refused, not cut"));
        json_doc_free(d);
    }
    /* 4. The agent asks to hand control to the human: the person is asked
     * whether they are at the browser (issue 11, point 15b(a)); a no keeps
     * control with the agent. */
    CHECK(send_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":82,\"method\":\"tools/call\",\"params\":"
                        "{\"name\":\"browser_takeover\",\"arguments\":{\"text\":\"solve it\"}}}"));
    q = wait_request(&c, "elicitation/create", 30000);
    if (q) {
        const json_val *p = json_get(json_doc_root(q), "params");
        const char *msg = json_get_str(p, "message");
        CHECK(msg && strstr(msg, "A person takes over the browser now?"));
        CHECK(msg && strstr(msg, "\"solve it\""));
        /* Not asked as "one action": a mode switch (review F7). */
        const char *title = json_get_str(json_path(p, "requestedSchema.properties.approve"),
                                         "title");
        CHECK(title && strcmp(title, "A person takes over the browser now") == 0);
        answer(&c, q, "{\"action\":\"decline\"}");
        json_doc_free(q);
    }
    d = wait_id(&c, "82", 30000, NULL, NULL);
    CHECK(d && is_error(d) && strstr(result_text(d), "browser_takeover refused"));
    json_doc_free(d);
    d = call_tool(&c, 83, "browser_snapshot", "{}");
    CHECK(d && !is_error(d));
    json_doc_free(d);
    /* The person says yes: every tool is refused (no elicitation is even
     * asked), and the model cannot take control back. */
    CHECK(send_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
                        "{\"name\":\"browser_takeover\",\"arguments\":{\"text\":"
                        "\"solve the puzzle\"}}}"));
    q = wait_request(&c, "elicitation/create", 30000);
    if (q) {
        answer(&c, q, "{\"action\":\"accept\",\"content\":{\"approve\":true}}");
        json_doc_free(q);
    }
    d = wait_id(&c, "9", 30000, NULL, NULL);
    CHECK(d && !is_error(d) && strstr(result_text(d), "Control is with the human"));
    json_doc_free(d);
    d = call_tool(&c, 10, "browser_snapshot", "{}");
    CHECK(d && is_error(d) && strstr(result_text(d), "control is with the human"));
    json_doc_free(d);
    d = call_tool(&c, 11, "browser_eval", "{\"expression\":\"1\"}");
    CHECK(d && is_error(d));
    json_doc_free(d);
    CHECK_INT(0, stop(&c, 20000));
    unlink(grant);
}

static const test_case TESTS[] = {
    {"initialize", t_initialize},
    {"gate_elicitation_and_takeover", t_gate_elicitation_and_takeover},
    {"version_negotiation", t_version_negotiation},
    {"ping", t_ping},
    {"tools_list", t_tools_list},
    {"bad_input_keeps_serving", t_bad_input_keeps_serving},
    {"oversized", t_oversized},
    {"framing", t_framing},
    {"eof_exits", t_eof_exits},
    {"lazy_browser", t_lazy_browser},
    {"tools_end_to_end", t_tools_end_to_end},
    {"open_javascript_url_refused_regression", t_open_javascript_url_refused_regression},
    {"open_local_url_says_how_regression", t_open_local_url_says_how_regression},
    {"screenshot_cap_mcp_regression", t_screenshot_cap_mcp_regression},
    {"bidi_structured_regression", t_bidi_structured_regression},
    {"cancel_and_ping", t_cancel_and_ping},
    {"browser_dies", t_browser_dies},
    {"cli", t_cli},
    {"demo", t_demo},
    {"sdk_client", t_sdk_client},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (testlib_world_up(&world, "mcp", NULL, false) != 0)
        return 1;
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
