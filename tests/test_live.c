/*
 * test_live.c — the live view (live/live.h, issue 15): the server side of
 * HTTP/1.1 (request heads: fields, limits, malformed and unsupported
 * requests, fed whole and byte by byte), the WebSocket upgrade (RFC 6455's
 * sample key, refusals) and the server's framing through ws/.
 */
#include "live/live.h"
#include "tests/harness.h"
#include "ws/ws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char GET[] =
    "GET /live/abc?x=1 HTTP/1.1\r\n"
    "Host: 127.0.0.1:4711\r\n"
    "User-Agent:  Mozilla/5.0 (X11)  \r\n"
    "Accept: text/html\r\n"
    "Cookie: cdpgate_live=SESSIONVALUE\r\n"
    "\r\n";

static void t_http_basic(void)
{
    live_http_request req;
    live_err err = {0};
    char buf[512];
    snprintf(buf, sizeof buf, "%sNEXT", GET);
    CHECK_INT(LIVE_OK, live_http_parse(buf, strlen(buf), &req, &err));
    CHECK_STR("GET", req.method);
    CHECK_STR("/live/abc?x=1", req.target);
    CHECK_INT(4, req.nheaders);
    CHECK_INT(strlen(GET), req.head_len);
    CHECK_STR("127.0.0.1:4711", live_http_get(&req, "host"));
    CHECK_STR("Mozilla/5.0 (X11)", live_http_get(&req, "user-agent"));
    CHECK_STR("cdpgate_live=SESSIONVALUE", live_http_get(&req, "cookie"));
    CHECK(live_http_get(&req, "origin") == NULL);
    /* the request holds its own copy: the input may be reused */
    memset(buf, 'x', sizeof buf);
    CHECK_STR("text/html", live_http_get(&req, "accept"));
}

/* Every prefix of a complete head is "need more", never an error. */
static void t_http_split(void)
{
    live_http_request req;
    size_t n = strlen(GET);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = live_http_parse(GET, i, &req, NULL);
        if (rc != LIVE_EAGAIN) {
            bad++;
            test_fail_detail("prefix %zu: %d\n", i, rc);
        }
    }
    CHECK_INT(0, bad);
    CHECK_INT(LIVE_OK, live_http_parse(GET, n, &req, NULL));
}

static int parse_str(const char *s, live_err *err)
{
    live_http_request req;
    memset(err, 0, sizeof *err);
    return live_http_parse(s, strlen(s), &req, err);
}

static void t_http_limits(void)
{
    live_err err;
    size_t cap = LIVE_HTTP_HEAD_MAX + 256;
    char *s = malloc(cap);
    CHECK(s != NULL);
    if (!s)
        return;
    /* a head that never ends within the limit */
    snprintf(s, cap, "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: ");
    size_t k = strlen(s);
    memset(s + k, 'a', LIVE_HTTP_HEAD_MAX - k);
    s[LIVE_HTTP_HEAD_MAX] = 0;
    CHECK_INT(LIVE_ETOOBIG, parse_str(s, &err));
    CHECK(strstr(err.msg, "longer than 8192") != NULL);
    /* one byte short of the limit and incomplete: more is needed */
    s[LIVE_HTTP_HEAD_MAX - 1] = 0;
    CHECK_INT(LIVE_EAGAIN, parse_str(s, &err));
    /* a head of exactly the limit is read */
    memcpy(s + LIVE_HTTP_HEAD_MAX - 4, "\r\n\r\n", 5);
    CHECK_INT(LIVE_OK, parse_str(s, &err));
    /* the target */
    snprintf(s, cap, "GET /");
    memset(s + 5, 'b', LIVE_HTTP_TARGET_MAX);
    snprintf(s + 5 + LIVE_HTTP_TARGET_MAX, cap - 5 - LIVE_HTTP_TARGET_MAX,
             " HTTP/1.1\r\nHost: a\r\n\r\n");
    CHECK_INT(LIVE_ETOOBIG, parse_str(s, &err));
    CHECK(strstr(err.msg, "target longer") != NULL);
    CHECK(strstr(err.msg, "bbbb") == NULL);
    /* the header count: 32 are read, 33 are not */
    size_t o = (size_t)snprintf(s, cap, "GET / HTTP/1.1\r\nHost: a\r\n");
    for (int i = 1; i < LIVE_HTTP_HEADERS_MAX; i++)
        o += (size_t)snprintf(s + o, cap - o, "X-%d: v\r\n", i);
    snprintf(s + o, cap - o, "\r\n");
    CHECK_INT(LIVE_OK, parse_str(s, &err));
    snprintf(s + o, cap - o, "X-last: v\r\n\r\n");
    CHECK_INT(LIVE_ETOOBIG, parse_str(s, &err));
    CHECK(strstr(err.msg, "header fields") != NULL);
    CHECK_INT(LIVE_ETOOBIG, parse_str("ABCDEFGHIJKLMNOPQ / HTTP/1.1\r\nHost: a\r\n\r\n", &err));
    free(s);
}

static const struct {
    const char *in;
    int code;
    const char *msg;
} BAD[] = {
    {"GET / HTTP/1.1\nHost: a\r\n\r\n", LIVE_EBADREQ, "bare LF"},
    {"GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n", LIVE_EBADREQ, "bare CR"},
    {"GET / HTTP/1.1\r\nHost: a\r\nX: y\0z\r\n\r\n", LIVE_EBADREQ, "NUL"},
    {"GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n z\r\n\r\n", LIVE_EBADREQ, "folded"},
    {"GET / HTTP/1.1\r\nHost : a\r\n\r\n", LIVE_EBADREQ, "blank before"},
    {"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", LIVE_EBADREQ, "host given twice"},
    {"GET / HTTP/1.1\r\nHost: a\r\nOrigin: x\r\nORIGIN: y\r\n\r\n", LIVE_EBADREQ,
     "origin given twice"},
    {"GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", LIVE_EBADREQ, "no Host"},
    {"GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", LIVE_EBADREQ, "not a path"},
    {"GET * HTTP/1.1\r\nHost: a\r\n\r\n", LIVE_EBADREQ, "not a path"},
    {"GET / HTTP/1.1 \r\nHost: a\r\n\r\n", LIVE_EBADREQ, "bad HTTP version"},
    {"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", LIVE_EBADREQ, "not a path"},
    {"GET / XTTP/1.1\r\nHost: a\r\n\r\n", LIVE_EBADREQ, "bad HTTP version"},
    {"GET /\r\nHost: a\r\n\r\n", LIVE_EBADREQ, "no HTTP version"},
    {"\r\n\r\n", LIVE_EBADREQ, "empty request line"},
    {"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", LIVE_EBADREQ, "method"},
    {"GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n", LIVE_EBADREQ, "target: bad byte"},
    {"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01" "b\r\n\r\n", LIVE_EBADREQ, "control byte"},
    {"GET / HTTP/1.1\r\nHost: a\r\n: v\r\n\r\n", LIVE_EBADREQ, "without a name"},
    {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", LIVE_EBADREQ, "not a number"},
    {"GET / HTTP/1.0\r\nHost: a\r\n\r\n", LIVE_EUNSUPPORTED, "HTTP/1.1 only"},
    {"GET / HTTP/2.0\r\nHost: a\r\n\r\n", LIVE_EUNSUPPORTED, "HTTP/1.1 only"},
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", LIVE_EUNSUPPORTED,
     "body"},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", LIVE_EUNSUPPORTED,
     "body"},
};

static void t_http_malformed(void)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        live_http_request req;
        live_err err;
        memset(&err, 0, sizeof err);
        size_t n = strlen(BAD[i].in);
        if (strstr(BAD[i].msg, "NUL"))
            n = sizeof "GET / HTTP/1.1\r\nHost: a\r\nX: y\0z\r\n\r\n" - 1;
        int rc = live_http_parse(BAD[i].in, n, &req, &err);
        if (!CHECK_INT(BAD[i].code, rc) || !CHECK_INT(BAD[i].code, err.code) ||
            !CHECK(strcmp(live_strerror(rc), "unknown error") != 0) ||
            !CHECK(strstr(err.msg, BAD[i].msg) != NULL))
            test_fail_detail("case %zu: %s (msg \"%s\")\n", i, BAD[i].in, err.msg);
    }
    /* Content-Length 0 is no body */
    live_err err;
    CHECK_INT(LIVE_OK, parse_str("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
                                 &err));
    /* a bare LF is refused as soon as it is seen, before the head ends */
    CHECK_INT(LIVE_EBADREQ, parse_str("GET / HTTP/1.1\nHost", &err));
    CHECK_INT(14, err.offset);
}

/* No message quotes the target or a header value (a token or a cookie). */
static void t_http_errors_quote_no_value(void)
{
    static const char *const in[] = {
        "GET /live/TOKENSECRET HTTP/1.0\r\nHost: a\r\n\r\n",
        "GET /live/TOKENSECRET\x01 HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nCookie: c=TOKENSECRET\x01\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nCookie: c=TOKENSECRET\r\nCookie: d=TOKENSECRET\r\n\r\n",
        "GET / HTTP/1.1\r\nCookie: c=TOKENSECRET\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        live_err err;
        CHECK(parse_str(in[i], &err) < 0);
        if (!CHECK(err.msg[0] && strstr(err.msg, "TOKENSECRET") == NULL))
            test_fail_detail("case %zu: \"%s\"\n", i, err.msg);
    }
}

static void t_http_tokens(void)
{
    CHECK(live_http_has_token("keep-alive, Upgrade", "upgrade"));
    CHECK(live_http_has_token("Upgrade", "upgrade"));
    CHECK(live_http_has_token(" upgrade ,x", "upgrade"));
    CHECK(!live_http_has_token("upgrades", "upgrade"));
    CHECK(!live_http_has_token("keep-alive", "upgrade"));
    CHECK(!live_http_has_token("", "upgrade"));
    CHECK(!live_http_has_token(",,", "upgrade"));
}

static const char UPGRADE[] =
    "GET /ws HTTP/1.1\r\n"
    "Host: 127.0.0.1:4711\r\n"
    "Upgrade: websocket\r\n"
    "Connection: keep-alive, Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Sec-WebSocket-Version: 13\r\n"
    "Origin: http://127.0.0.1:4711\r\n"
    "\r\n";

/* RFC 6455 section 1.3's example key and accept value. */
static void t_ws_upgrade(void)
{
    live_http_request req;
    live_err err = {0};
    CHECK_INT(LIVE_OK, live_http_parse(UPGRADE, strlen(UPGRADE), &req, &err));
    char accept[29];
    CHECK_INT(LIVE_OK, live_ws_upgrade(&req, accept, &err));
    CHECK_STR("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", accept);
    char out[256];
    int n = live_ws_response(out, sizeof out, accept);
    CHECK(n > 0);
    CHECK_STR("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
              "Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
              out);
    /* ws/'s client takes it */
    size_t used = 0;
    char werr[128];
    CHECK_INT(WS_OK, ws_handshake_check(out, (size_t)n, "dGhlIHNhbXBsZSBub25jZQ==", &used,
                                        werr, sizeof werr));
    CHECK_INT(n, used);
    CHECK_INT(-1, live_ws_response(out, 40, accept));
}

static void t_ws_upgrade_refused(void)
{
    static const struct { const char *from, *to, *msg; } R[] = {
        {"GET /ws", "PUT /ws", "not GET"},
        {"Upgrade: websocket", "Upgrade: h2c", "Upgrade: websocket"},
        {"Connection: keep-alive, Upgrade", "Connection: keep-alive", "Connection: Upgrade"},
        {"Version: 13", "Version: 8", "not 13"},
        {"dGhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZSBub25jZQ", "16 bytes"},
        {"dGhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZSBub25jZWU=", "16 bytes"},
        {"dGhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZSBub25jZ!==", "16 bytes"},
    };
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) {
        char buf[512];
        const char *at = strstr(UPGRADE, R[i].from);
        CHECK(at != NULL);
        if (!at)
            continue;
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - UPGRADE), UPGRADE, R[i].to,
                 at + strlen(R[i].from));
        live_http_request req;
        live_err err = {0};
        CHECK_INT(LIVE_OK, live_http_parse(buf, strlen(buf), &req, &err));
        char accept[29];
        if (!CHECK_INT(LIVE_EUPGRADE, live_ws_upgrade(&req, accept, &err)) ||
            !CHECK(strstr(err.msg, R[i].msg) != NULL))
            test_fail_detail("case %zu: \"%s\"\n", i, err.msg);
    }
    /* a plain GET is no upgrade */
    live_http_request req;
    live_err err = {0};
    char accept[29];
    CHECK_INT(LIVE_OK, live_http_parse(GET, strlen(GET), &req, &err));
    CHECK_INT(LIVE_EUPGRADE, live_ws_upgrade(&req, accept, &err));
}

/* The server's frames are unmasked and a client decoder reads them; the
 * client's masked frames are read by a server decoder, and an unmasked
 * client frame is a protocol error there (RFC 6455 section 5.1). */
static void t_ws_server_framing(void)
{
    uint8_t jpeg[70000];
    for (size_t i = 0; i < sizeof jpeg; i++)
        jpeg[i] = (uint8_t)(i * 7);
    uint8_t *wire = malloc(sizeof jpeg + 14);
    CHECK(wire != NULL);
    if (!wire)
        return;
    size_t h = live_ws_frame(wire, WS_OP_BINARY, sizeof jpeg);
    CHECK_INT(10, h);
    memcpy(wire + h, jpeg, sizeof jpeg);
    ws_decoder client;
    ws_decoder_init(&client, 0, false);
    ws_event ev;
    size_t used = ws_decoder_feed(&client, wire, h + sizeof jpeg, &ev);
    CHECK_INT(h + sizeof jpeg, used);
    CHECK_INT(WS_EV_MESSAGE, ev.type);
    CHECK_INT(WS_OP_BINARY, ev.opcode);
    CHECK_MEM(jpeg, sizeof jpeg, ev.data, ev.len);
    ws_decoder_free(&client);
    free(wire);

    /* client to server: masked */
    const uint8_t mask[4] = {1, 2, 3, 4};
    uint8_t in[64];
    const char *msg = "{\"type\":\"key\",\"key\":\".\"}";
    size_t ml = strlen(msg);
    size_t ch = ws_frame_header(in, WS_OP_TEXT, true, ml, mask);
    memcpy(in + ch, msg, ml);
    ws_mask(in + ch, ml, mask, 0);
    ws_decoder server;
    ws_decoder_init(&server, 4096, true);
    ws_decoder_feed(&server, in, ch + ml, &ev);
    CHECK_INT(WS_EV_MESSAGE, ev.type);
    CHECK_MEM(msg, ml, ev.data, ev.len);
    ws_decoder_free(&server);
    ch = ws_frame_header(in, WS_OP_TEXT, true, ml, NULL);
    memcpy(in + ch, msg, ml);
    ws_decoder_init(&server, 4096, true);
    ws_decoder_feed(&server, in, ch + ml, &ev);
    CHECK_INT(WS_EV_ERROR, ev.type);
    ws_decoder_free(&server);
    /* small frames take the short header */
    uint8_t sh[14];
    CHECK_INT(2, live_ws_frame(sh, WS_OP_TEXT, 125));
    CHECK_INT(4, live_ws_frame(sh, WS_OP_TEXT, 126));
    CHECK_INT(0x81, sh[0]);
}

static const test_case TESTS[] = {
    {"http_basic", t_http_basic},
    {"http_split", t_http_split},
    {"http_limits", t_http_limits},
    {"http_malformed", t_http_malformed},
    {"http_errors_quote_no_value", t_http_errors_quote_no_value},
    {"http_tokens", t_http_tokens},
    {"ws_upgrade", t_ws_upgrade},
    {"ws_upgrade_refused", t_ws_upgrade_refused},
    {"ws_server_framing", t_ws_server_framing},
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, TESTS);
}
