/*
 * fuzz_live.c — libFuzzer target for the live view's request parser and
 * WebSocket upgrade check (live/live.h; also replayed over the checked-in
 * corpus by tests/fuzz/replay.c in `make test`).
 *
 * The input is one request head. The parser returns one of its codes; on
 * an error the message is set and the offset lies within the input. On
 * success the head is within the limits and the input, ends with the empty
 * line, every name is lower-case tchars, no value holds a control byte
 * other than a tab or has blanks around it, Host is there, and every
 * shorter prefix of the head is "need more" (the incremental reading
 * agrees with the whole). The upgrade check then runs; when it accepts,
 * the accept value is 28 base64 characters and the 101 response fits.
 * The access judge decides the request (its target, Cookie and
 * Sec-WebSocket-Protocol read): a decision always has a reason and a
 * status, and only a trade holds a cookie, only a page a nonce.
 * An input starting with '{' is a viewer message instead
 * (live_input_translate: keys, mouse, text, IME, tab, hand-back): a
 * command's params parse back as JSON; a tab's id is of the allowed bytes.
 */
#include "json/json.h"
#include "live/live.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void check_ok(const char *in, size_t size, const live_http_request *req)
{
    CHECK(req->head_len >= 4 && req->head_len <= size && req->head_len <= LIVE_HTTP_HEAD_MAX);
    CHECK(memcmp(in + req->head_len - 4, "\r\n\r\n", 4) == 0);
    CHECK(req->method[0] && strlen(req->method) <= LIVE_HTTP_METHOD_MAX);
    CHECK(req->target[0] == '/' && strlen(req->target) <= LIVE_HTTP_TARGET_MAX);
    CHECK(req->nheaders <= LIVE_HTTP_HEADERS_MAX);
    CHECK(live_http_get(req, "host") != NULL);
    for (size_t i = 0; i < req->nheaders; i++) {
        const char *n = req->headers[i].name, *v = req->headers[i].value;
        CHECK(n[0]);
        for (const char *p = n; *p; p++)
            CHECK(!(*p >= 'A' && *p <= 'Z') && *p != ' ' && *p != ':');
        size_t vl = strlen(v);
        for (size_t k = 0; k < vl; k++)
            CHECK((unsigned char)v[k] >= 0x20 || v[k] == '\t');
        if (vl)
            CHECK(v[0] != ' ' && v[0] != '\t' && v[vl - 1] != ' ' && v[vl - 1] != '\t');
        live_http_has_token(v, "upgrade");
    }
    /* prefixes: a few, spread over the head */
    live_http_request *p = malloc(sizeof *p);
    if (!p)
        return;
    size_t step = req->head_len / 7 + 1;
    for (size_t k = 0; k < req->head_len; k += step)
        CHECK(live_http_parse(in, k, p, NULL) == LIVE_EAGAIN);
    CHECK(live_http_parse(in, req->head_len - 1, p, NULL) == LIVE_EAGAIN);
    free(p);

    char accept[29];
    live_err err;
    int rc = live_ws_upgrade(req, accept, &err);
    CHECK(rc == LIVE_OK || (rc == LIVE_EUPGRADE && err.msg[0]));
    if (rc == LIVE_OK) {
        CHECK(strlen(accept) == 28);
        char out[256];
        CHECK(live_ws_response(out, sizeof out, accept, NULL) > 0);
        CHECK(live_ws_response(out, sizeof out, accept, LIVE_WS_PROTOCOL) > 0);
    }
}

/* The access judge on a parsed request (a fresh state: the fuzzer cannot
 * know its path, so this reads the routes and headers, and refuses). */
static void check_judge(const live_http_request *req)
{
    live_access_opts o = {.port = 4711};
    live_access *a = live_access_new(&o, 1000, NULL);
    if (!a)
        return;
    live_decision d;
    int rc = live_access_judge(a, req, 2000, &d);
    CHECK(rc == LIVE_OK || rc == LIVE_EDENIED);
    CHECK(d.reason && d.reason[0] && d.status >= 200 && d.status < 500);
    CHECK(d.kind == LIVE_REQ_REDEEM || !d.set_cookie[0]);
    CHECK(d.kind == LIVE_REQ_VIEW || !d.page_nonce[0]);
    CHECK((rc == LIVE_OK) == (d.kind != LIVE_REQ_REFUSED));
    live_access_free(a);
}

/* A viewer message (input starting with '{'): translated or refused;
 * a command's params are a JSON object the reader takes back. */
static void check_input(const char *in, size_t size)
{
    live_input_cmd cmd;
    live_err err;
    bool hb = false;
    memset(&err, 0, sizeof err);
    int rc = live_input_translate(in, size, &cmd, &hb, &err);
    CHECK(rc == 2 || rc == 1 || rc == 0 || rc == LIVE_EBADREQ || rc == LIVE_ENOMEM);
    CHECK((rc == 1) == (cmd.params != NULL) && (rc == 0) == hb);
    if (rc == 2)    /* a tab: its id, of the allowed bytes, no command */
        CHECK(!cmd.method && cmd.tab[0] && strlen(cmd.tab) < sizeof cmd.tab &&
              strspn(cmd.tab, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                              "0123456789-_.") == strlen(cmd.tab));
    if (rc == 1) {
        CHECK(cmd.method && cmd.len && cmd.params[0] == '{' && cmd.params[cmd.len - 1] == '}');
        json_doc *d = json_parse(cmd.params, cmd.len, NULL, NULL);
        CHECK(d != NULL);
        json_doc_free(d);
    } else if (rc < 0) {
        CHECK(err.msg[0]);
    }
    live_input_free(&cmd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size && data[0] == '{') {
        check_input((const char *)data, size);
        return 0;
    }
    live_http_request *req = malloc(sizeof *req);
    if (!req)
        return 0;
    const char *in = (const char *)data;
    live_err err;
    memset(&err, 0, sizeof err);
    int rc = live_http_parse(in, size, req, &err);
    CHECK(rc == LIVE_OK || rc == LIVE_EAGAIN || rc == LIVE_EBADREQ || rc == LIVE_ETOOBIG ||
          rc == LIVE_EUNSUPPORTED);
    if (rc == LIVE_EAGAIN)
        CHECK(size < LIVE_HTTP_HEAD_MAX);
    else if (rc != LIVE_OK)
        CHECK(err.code == rc && err.msg[0] && err.offset <= size);
    else {
        check_ok(in, size, req);
        check_judge(req);
    }
    free(req);
    return 0;
}
