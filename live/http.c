/*
 * http.c — the server side of HTTP/1.1 for the live view, I/O-free: one
 * request head parsed into the request's own copy (live_http_parse), its
 * headers looked up, and the WebSocket upgrade checked and answered
 * (RFC 6455 section 4.2) with the server's unmasked framing from ws/.
 *
 * The parser is strict on purpose (RFC 9112 allows a server to refuse what
 * it will not read unambiguously): CRLF line ends only, no folded header
 * lines, no blank before a header's colon, no control bytes, one Host, one
 * of each header the live view decides on, no body at all. Whatever two
 * parsers could read differently is refused rather than guessed. Limits
 * are the LIVE_HTTP_* of live.h. Messages name the fault and its offset
 * and never quote the target or a header value (a token or a cookie may
 * be in them).
 */
#include "live/live_int.h"

#include "base/base.h"
#include "ws/ws.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *live_strerror(int code)
{
    switch (code) {
    case LIVE_OK: return "ok";
    case LIVE_EAGAIN: return "incomplete request";
    case LIVE_EBADREQ: return "malformed request";
    case LIVE_ETOOBIG: return "request too large";
    case LIVE_EUNSUPPORTED: return "request not supported";
    case LIVE_EUPGRADE: return "not a valid WebSocket upgrade";
    case LIVE_EDENIED: return "access refused";
    case LIVE_ENOMEM: return "out of memory";
    case LIVE_ERANDOM: return "no random bytes from the OS";
    case LIVE_EIO: return "socket error";
    default: return "unknown error";
    }
}

int live_fail(live_err *err, int code, size_t offset, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* The headers a request may carry once: the live view decides on each. */
static const char *const ONCE[] = {
    "host", "origin", "cookie", "content-length", "transfer-encoding", "upgrade",
    "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol",
    "sec-fetch-site", NULL
};

static bool tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Where the head ends (just past its empty line) within buf[0..n), 0 when
 * it does not end there yet, or a LIVE_EBADREQ with *off at a NUL, a bare
 * CR or a bare LF (so a malformed request fails before the limit). */
static int head_end(const char *buf, size_t n, size_t *end, size_t *off)
{
    *end = 0;
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        *off = i;
        if (c == 0)
            return LIVE_EBADREQ;
        if (c == '\n' && (i == 0 || buf[i - 1] != '\r'))
            return LIVE_EBADREQ;
        if (c == '\r' && i + 1 < n && buf[i + 1] != '\n')
            return LIVE_EBADREQ;
        if (c == '\n' && i >= 3 && buf[i - 2] == '\n') {
            *end = i + 1;
            return LIVE_OK;
        }
    }
    return LIVE_OK;
}

/* The request line in line (NUL-terminated, CR removed) at offset base. */
static int request_line(live_http_request *req, char *line, size_t base, live_err *err)
{
    char *sp = strchr(line, ' ');
    size_t mlen = sp ? (size_t)(sp - line) : strlen(line);
    if (!sp || mlen == 0)
        return live_fail(err, LIVE_EBADREQ, base, "request line: no method");
    if (mlen > LIVE_HTTP_METHOD_MAX)
        return live_fail(err, LIVE_ETOOBIG, base, "request line: method longer than %d bytes",
                         LIVE_HTTP_METHOD_MAX);
    for (size_t i = 0; i < mlen; i++)
        if (!tchar((unsigned char)line[i]))
            return live_fail(err, LIVE_EBADREQ, base + i, "request line: bad byte in the method");
    *sp = 0;
    req->method = line;
    char *t = sp + 1;
    char *sp2 = strchr(t, ' ');
    size_t tlen = sp2 ? (size_t)(sp2 - t) : strlen(t);
    size_t toff = base + (size_t)(t - line);
    if (!sp2)
        return live_fail(err, LIVE_EBADREQ, toff, "request line: no HTTP version");
    if (tlen > LIVE_HTTP_TARGET_MAX)
        return live_fail(err, LIVE_ETOOBIG, toff, "request target longer than %d bytes",
                         LIVE_HTTP_TARGET_MAX);
    if (tlen == 0 || t[0] != '/')
        return live_fail(err, LIVE_EBADREQ, toff,
                         "request target is not a path (origin-form, starting with '/')");
    for (size_t i = 0; i < tlen; i++)
        if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
            return live_fail(err, LIVE_EBADREQ, toff + i, "request target: bad byte");
    *sp2 = 0;
    req->target = t;
    const char *v = sp2 + 1;
    size_t voff = base + (size_t)(v - line);
    if (strcmp(v, "HTTP/1.1") == 0)
        return LIVE_OK;
    if (strlen(v) == 8 && strncmp(v, "HTTP/", 5) == 0 && v[5] >= '0' && v[5] <= '9' &&
        v[6] == '.' && v[7] >= '0' && v[7] <= '9')
        return live_fail(err, LIVE_EUNSUPPORTED, voff, "HTTP version %.8s is not served "
                         "(HTTP/1.1 only)", v);
    return live_fail(err, LIVE_EBADREQ, voff, "request line: bad HTTP version");
}

/* One header line (NUL-terminated, CR removed) at offset base. */
static int header_line(live_http_request *req, char *line, size_t base, live_err *err)
{
    if (line[0] == ' ' || line[0] == '\t')
        return live_fail(err, LIVE_EBADREQ, base, "folded header line (obs-fold)");
    char *colon = strchr(line, ':');
    if (!colon || colon == line)
        return live_fail(err, LIVE_EBADREQ, base, "header line without a name and a colon");
    for (char *p = line; p < colon; p++) {
        if (!tchar((unsigned char)*p))
            return live_fail(err, LIVE_EBADREQ, base + (size_t)(p - line),
                             *p == ' ' || *p == '\t' ? "blank before a header's colon"
                                                     : "bad byte in a header name");
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    }
    *colon = 0;
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    size_t vlen = strlen(v);
    while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
        v[--vlen] = 0;
    for (size_t i = 0; i < vlen; i++) {
        unsigned char c = (unsigned char)v[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return live_fail(err, LIVE_EBADREQ, base + (size_t)(v - line) + i,
                             "control byte in header %.40s", line);
    }
    for (int i = 0; ONCE[i]; i++)
        if (strcmp(line, ONCE[i]) == 0 && live_http_get(req, line))
            return live_fail(err, LIVE_EBADREQ, base, "header %s given twice", line);
    if (req->nheaders == LIVE_HTTP_HEADERS_MAX)
        return live_fail(err, LIVE_ETOOBIG, base, "more than %d header fields",
                         LIVE_HTTP_HEADERS_MAX);
    req->headers[req->nheaders].name = line;
    req->headers[req->nheaders].value = v;
    req->nheaders++;
    return LIVE_OK;
}

/* After the headers: Host present, no body. */
static int head_rules(const live_http_request *req, live_err *err)
{
    if (!live_http_get(req, "host"))
        return live_fail(err, LIVE_EBADREQ, 0, "no Host header");
    if (live_http_get(req, "transfer-encoding"))
        return live_fail(err, LIVE_EUNSUPPORTED, 0,
                         "a request body is not accepted (Transfer-Encoding)");
    const char *cl = live_http_get(req, "content-length");
    if (cl) {
        size_t n = strlen(cl);
        if (n == 0 || strspn(cl, "0123456789") != n)
            return live_fail(err, LIVE_EBADREQ, 0, "Content-Length is not a number");
        if (strspn(cl, "0") != n)
            return live_fail(err, LIVE_EUNSUPPORTED, 0,
                             "a request body is not accepted (Content-Length)");
    }
    return LIVE_OK;
}

int live_http_parse(const char *buf, size_t len, live_http_request *req, live_err *err)
{
    memset(req, 0, offsetof(live_http_request, head));
    size_t end = 0, off = 0;
    size_t scan = len < LIVE_HTTP_HEAD_MAX ? len : LIVE_HTTP_HEAD_MAX;
    if (head_end(buf, scan, &end, &off) != LIVE_OK)
        return live_fail(err, LIVE_EBADREQ, off, buf[off] == 0 ? "NUL byte in the request"
                         : buf[off] == '\r' ? "bare CR in the request" : "bare LF in the request");
    if (!end) {
        if (len >= LIVE_HTTP_HEAD_MAX)
            return live_fail(err, LIVE_ETOOBIG, LIVE_HTTP_HEAD_MAX,
                             "request head longer than %d bytes", LIVE_HTTP_HEAD_MAX);
        return LIVE_EAGAIN;
    }
    memcpy(req->head, buf, end);
    req->head[end] = 0;
    req->head_len = end;
    size_t pos = 0;
    for (int first = 1;; first = 0) {
        char *line = req->head + pos;
        char *cr = strstr(line, "\r\n");    /* present: the head ends with CRLF CRLF */
        *cr = 0;
        size_t next = pos + (size_t)(cr - line) + 2;
        if (!*line) {
            if (first)
                return live_fail(err, LIVE_EBADREQ, pos, "empty request line");
            break;
        }
        int rc = first ? request_line(req, line, pos, err) : header_line(req, line, pos, err);
        if (rc != LIVE_OK)
            return rc;
        pos = next;
    }
    return head_rules(req, err);
}

const char *live_http_get(const live_http_request *req, const char *name)
{
    for (size_t i = 0; i < req->nheaders; i++)
        if (strcmp(req->headers[i].name, name) == 0)
            return req->headers[i].value;
    return NULL;
}

bool live_http_has_token(const char *value, const char *token)
{
    size_t tl = strlen(token);
    const char *p = value;
    while (p && *p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if ((size_t)(t - p) == tl && tl && strncasecmp(p, token, tl) == 0)
            return true;
        p = e;
    }
    return false;
}

int live_ws_upgrade(const live_http_request *req, char accept[29], live_err *err)
{
    if (strcmp(req->method, "GET") != 0)
        return live_fail(err, LIVE_EUPGRADE, 0, "upgrade: method %s is not GET", req->method);
    const char *up = live_http_get(req, "upgrade");
    if (!up || !live_http_has_token(up, "websocket"))
        return live_fail(err, LIVE_EUPGRADE, 0, "upgrade: no \"Upgrade: websocket\" header");
    const char *conn = live_http_get(req, "connection");
    if (!conn || !live_http_has_token(conn, "upgrade"))
        return live_fail(err, LIVE_EUPGRADE, 0, "upgrade: no \"Connection: Upgrade\" header");
    const char *ver = live_http_get(req, "sec-websocket-version");
    if (!ver || strcmp(ver, "13") != 0)
        return live_fail(err, LIVE_EUPGRADE, 0, "upgrade: Sec-WebSocket-Version is not 13");
    const char *key = live_http_get(req, "sec-websocket-key");
    uint8_t raw[18];
    if (!key || strlen(key) != 24 || base_b64_decode(key, 24, raw, sizeof raw) != 16)
        return live_fail(err, LIVE_EUPGRADE, 0,
                         "upgrade: Sec-WebSocket-Key is not 16 bytes in base64");
    ws_accept_key(key, accept);
    return LIVE_OK;
}

int live_ws_response(char *out, size_t cap, const char accept[29], const char *protocol)
{
    int n = snprintf(out, cap, "HTTP/1.1 101 Switching Protocols\r\n"
                               "Upgrade: websocket\r\n"
                               "Connection: Upgrade\r\n"
                               "Sec-WebSocket-Accept: %.28s\r\n"
                               "%s%s%s"
                               "\r\n", accept, protocol ? "Sec-WebSocket-Protocol: " : "",
                     protocol ? protocol : "", protocol ? "\r\n" : "");
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

size_t live_ws_frame(uint8_t out[14], int opcode, uint64_t len)
{
    return ws_frame_header(out, opcode, true, len, NULL);
}
