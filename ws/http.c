/*
 * http.c — URL parsing, the WebSocket upgrade (request building and
 * response checking, RFC 6455 4.1/4.2.2), a small HTTP/1.1 response parser
 * for /json/version, and ws_http_get on top of it.
 *
 * The parsers do no I/O: they look at the bytes received so far and answer
 * "complete", "need more" (WS_EAGAIN) or an error naming what was wrong.
 * Header blocks end at an empty line; lines may end in CRLF or bare LF.
 * A header block larger than 16 KiB is refused.
 */
#include "ws/ws_int.h"
#include "url/url.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_HEADER ((size_t)16 << 10)
#define DEFAULT_MAX_BODY ((size_t)16 << 20)
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

/* ---- URL ---- */

static bool ieq(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen != blen)
        return false;
    for (size_t i = 0; i < alen; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return false;
    return true;
}

int ws_url_parse(const char *url, ws_url *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!url || !*url) {
        ws_seterr(err, errlen, "empty URL");
        return WS_EURL;
    }
    for (const char *c = url; *c; c++) {
        unsigned char ch = (unsigned char)*c;
        if (ch <= 0x20 || ch >= 0x7F) {
            ws_seterr(err, errlen, "URL has a space, control or non-ASCII byte at offset %zu",
                      (size_t)(c - url));
            return WS_EURL;
        }
    }
    const char *sep = strstr(url, "://");
    if (!sep) {
        ws_seterr(err, errlen, "URL \"%.200s\" has no scheme (want ws://host:port/path)", url);
        return WS_EURL;
    }
    size_t slen = (size_t)(sep - url);
    if (ieq(url, slen, "ws") || ieq(url, slen, "http")) {
        out->tls = false;
    } else if (ieq(url, slen, "wss")) {
        out->tls = true;
    } else if (ieq(url, slen, "https")) {
        out->tls = true;
    } else {
        ws_seterr(err, errlen, "unsupported URL scheme \"%.*s\" (want ws, wss, http or https)",
                  (int)(slen > 16 ? 16 : slen), url);
        return WS_EURL;
    }
    for (size_t i = 0; i < slen; i++)
        out->scheme[i] = (char)tolower((unsigned char)url[i]);
    const char *a = sep + 3;
    size_t alen = strcspn(a, "/\\?#");
    if (alen == 0) {
        ws_seterr(err, errlen, "URL has an empty host");
        return WS_EURL;
    }
    if (memchr(a, '@', alen)) {
        ws_seterr(err, errlen, "user name or password in a URL is not supported");
        return WS_EURL;
    }
    if (a[alen - 1] == ':') {
        ws_seterr(err, errlen, "URL has ':' but no port");
        return WS_EURL;
    }
    /* Host and port as the browser reads them (url/url.h). An IPv6 zone
     * ("[fe80::1%25eth0]", which browsers refuse) is taken off for the
     * parser and put back for getaddrinfo. */
    char tmp[URL_RAW_HOST_MAX + 64], zone[64] = "";
    const char *pu = url;
    const char *z = a[0] == '[' ? memchr(a, '%', alen) : NULL;
    const char *rb = z ? memchr(z, ']', alen - (size_t)(z - a)) : NULL;
    if (z && rb) {
        size_t zl = (size_t)(rb - z), head = (size_t)(z - url);
        if (zl >= sizeof zone || head + strlen(rb) >= sizeof tmp) {
            ws_seterr(err, errlen, "IPv6 zone or host too long");
            return WS_EURL;
        }
        memcpy(zone, z, zl);
        zone[zl] = 0;
        memcpy(tmp, url, head);
        memcpy(tmp + head, rb, strlen(rb) + 1);
        pu = tmp;
    }
    url_parts u;
    const char *why = "not a URL";
    int rc = url_parse(pu, &u, &why);
    if (rc) {
        ws_seterr(err, errlen, "%s", rc == URL_EIDN ? url_strerror(rc) : why);
        return WS_EURL;
    }
    size_t hl = strlen(u.host);
    const char *h = u.host;
    if (h[0] == '[')
        h++, hl -= 2;
    if (hl + strlen(zone) >= sizeof out->host) {
        ws_seterr(err, errlen, "host name longer than %zu bytes", sizeof out->host - 1);
        return WS_EURL;
    }
    memcpy(out->host, h, hl);
    memcpy(out->host + hl, zone, strlen(zone) + 1);
    out->port = u.port;
    if (out->port == 0) {
        ws_seterr(err, errlen, "bad port \"0\" (want 1-65535)");
        return WS_EURL;
    }
    const char *rest = pu + u.rest;
    size_t plen = strcspn(rest, "#"); /* the fragment is never sent */
    size_t need = plen + (rest[0] == '/' || rest[0] == '\\' ? 0 : 1);
    if (need >= sizeof out->path) {
        ws_seterr(err, errlen, "URL path longer than %zu bytes", sizeof out->path - 1);
        return WS_EURL;
    }
    size_t o = 0;
    if (rest[0] != '/' && rest[0] != '\\')
        out->path[o++] = '/';
    size_t q = strcspn(rest, "?#");      /* in the path a '\\' is a '/' */
    for (size_t i = 0; i < plen; i++)
        out->path[o++] = i < q && rest[i] == '\\' ? '/' : rest[i];
    out->path[o] = 0;
    return WS_OK;
}

/* ---- handshake ---- */

void ws_accept_key(const char *key_b64, char out[29])
{
    char buf[128];
    size_t klen = strlen(key_b64);
    if (klen > sizeof buf - sizeof WS_GUID)
        klen = sizeof buf - sizeof WS_GUID;
    memcpy(buf, key_b64, klen);
    memcpy(buf + klen, WS_GUID, sizeof WS_GUID - 1);
    uint8_t dig[20];
    ws_sha1(buf, klen + sizeof WS_GUID - 1, dig);
    base_b64_encode(dig, sizeof dig, out);
}

/* "host[:port]" as a Host header wants it: the port only when not default. */
static void host_header(const ws_url *u, char *out, size_t cap)
{
    int def = u->tls ? 443 : 80;
    if (u->port == def)
        snprintf(out, cap, strchr(u->host, ':') ? "[%s]" : "%s", u->host);
    else
        ws_hostport(u->host, u->port, out, cap);
}

int ws_handshake_request(char *out, size_t cap, const ws_url *url, const char *key_b64)
{
    char host[300];
    host_header(url, host, sizeof host);
    int n = snprintf(out, cap,
                     "GET %s HTTP/1.1\r\n"
                     "Host: %s\r\n"
                     "Upgrade: websocket\r\n"
                     "Connection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\n"
                     "Sec-WebSocket-Version: 13\r\n"
                     "\r\n",
                     url->path, host, key_b64);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    return n;
}

/* Index just past the empty line that ends the header block, or 0. */
static size_t header_end(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return 0;
        const char *q = nl + 1;
        if (q < end && *q == '\n')
            return (size_t)(q + 1 - buf);
        if (q + 1 < end && q[0] == '\r' && q[1] == '\n')
            return (size_t)(q + 2 - buf);
        p = q;
    }
    return 0;
}

/* Copy printable ASCII of s[0..n) into out for an error message. */
static void printable(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        out[o++] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
    }
    out[o] = 0;
}

typedef struct {
    const char *p, *end;
} line_iter;

/* Next line without its CR/LF; false at the end of the block. */
static bool next_line(line_iter *it, const char **s, size_t *n)
{
    if (it->p >= it->end)
        return false;
    const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
    const char *e = nl ? nl : it->end;
    *s = it->p;
    *n = (size_t)(e - it->p);
    if (*n && (*s)[*n - 1] == '\r')
        (*n)--;
    it->p = nl ? nl + 1 : it->end;
    return true;
}

static void trim(const char **s, size_t *n)
{
    while (*n && ((*s)[0] == ' ' || (*s)[0] == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* Parse "HTTP/1.x NNN reason". Returns the status or -1. */
static int status_line(const char *s, size_t n, const char **reason, size_t *rlen)
{
    if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)s[7]) ||
        s[8] != ' ')
        return -1;
    int st = 0;
    for (int i = 9; i < 12; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        st = st * 10 + (s[i] - '0');
    }
    if (n > 12 && s[12] != ' ')
        return -1;
    *reason = n > 13 ? s + 13 : s + n;
    *rlen = n > 13 ? n - 13 : 0;
    return st;
}

/* Split a header line into trimmed name and value; false if malformed. */
static bool split_header(const char *s, size_t n, const char **name, size_t *nlen,
                         const char **val, size_t *vlen)
{
    const char *colon = memchr(s, ':', n);
    if (!colon || colon == s || s[0] == ' ' || s[0] == '\t')
        return false;
    *name = s;
    *nlen = (size_t)(colon - s);
    for (size_t i = 0; i < *nlen; i++)
        if (s[i] == ' ' || s[i] == '\t')
            return false;
    *val = colon + 1;
    *vlen = n - *nlen - 1;
    trim(val, vlen);
    return true;
}

/* Does the comma-separated list v contain token tok (case-insensitive)? */
static bool has_token(const char *v, size_t n, const char *tok)
{
    const char *end = v + n;
    while (v < end) {
        const char *c = memchr(v, ',', (size_t)(end - v));
        const char *e = c ? c : end;
        const char *s = v;
        size_t l = (size_t)(e - v);
        trim(&s, &l);
        if (ieq(s, l, tok))
            return true;
        v = c ? c + 1 : end;
    }
    return false;
}

int ws_handshake_check(const char *buf, size_t len, const char *key_b64,
                       size_t *consumed, char *err, size_t errlen)
{
    size_t hend = header_end(buf, len > MAX_HEADER ? MAX_HEADER : len);
    if (!hend) {
        if (len >= MAX_HEADER) {
            ws_seterr(err, errlen, "handshake: response header larger than 16 KiB");
            return WS_EHANDSHAKE;
        }
        /* Refuse early what cannot become an HTTP response. */
        size_t k = len < 5 ? len : 5;
        if (memcmp(buf, "HTTP/", k) != 0) {
            ws_seterr(err, errlen, "handshake: response is not HTTP");
            return WS_EHANDSHAKE;
        }
        return WS_EAGAIN;
    }
    line_iter it = {buf, buf + hend};
    const char *s, *reason;
    size_t n, rlen;
    next_line(&it, &s, &n);
    int st = status_line(s, n, &reason, &rlen);
    char tmp[96];
    if (st < 0) {
        printable(s, n, tmp, 64);
        ws_seterr(err, errlen, "handshake: malformed status line \"%s\"", tmp);
        return WS_EHANDSHAKE;
    }
    if (st != 101) {
        printable(reason, rlen, tmp, 64);
        ws_seterr(err, errlen, "handshake: HTTP %d%s%s (want 101 Switching Protocols)",
                  st, rlen ? " " : "", tmp);
        return WS_EHANDSHAKE;
    }
    bool upgrade = false, connection = false;
    const char *accept = NULL;
    size_t accept_len = 0;
    int accepts = 0;
    while (next_line(&it, &s, &n) && n) {
        const char *name, *val;
        size_t nlen, vlen;
        if (!split_header(s, n, &name, &nlen, &val, &vlen)) {
            printable(s, n, tmp, 64);
            ws_seterr(err, errlen, "handshake: malformed header line \"%s\"", tmp);
            return WS_EHANDSHAKE;
        }
        if (ieq(name, nlen, "upgrade")) {
            upgrade = has_token(val, vlen, "websocket");
        } else if (ieq(name, nlen, "connection")) {
            connection = connection || has_token(val, vlen, "upgrade");
        } else if (ieq(name, nlen, "sec-websocket-accept")) {
            accept = val;
            accept_len = vlen;
            accepts++;
        } else if (ieq(name, nlen, "sec-websocket-extensions") && vlen) {
            printable(val, vlen, tmp, 64);
            ws_seterr(err, errlen, "handshake: server chose extension \"%s\" that was not offered",
                      tmp);
            return WS_EHANDSHAKE;
        } else if (ieq(name, nlen, "sec-websocket-protocol") && vlen) {
            printable(val, vlen, tmp, 64);
            ws_seterr(err, errlen,
                      "handshake: server chose subprotocol \"%s\" that was not offered", tmp);
            return WS_EHANDSHAKE;
        }
    }
    if (!upgrade) {
        ws_seterr(err, errlen, "handshake: missing \"Upgrade: websocket\" header");
        return WS_EHANDSHAKE;
    }
    if (!connection) {
        ws_seterr(err, errlen, "handshake: missing \"Connection: Upgrade\" header");
        return WS_EHANDSHAKE;
    }
    if (!accept) {
        ws_seterr(err, errlen, "handshake: missing Sec-WebSocket-Accept header");
        return WS_EHANDSHAKE;
    }
    char want[29];
    ws_accept_key(key_b64, want);
    if (accepts != 1 || accept_len != 28 || memcmp(accept, want, 28) != 0) {
        printable(accept, accept_len, tmp, 40);
        ws_seterr(err, errlen, "handshake: Sec-WebSocket-Accept mismatch (got \"%s\", want \"%s\")",
                  tmp, want);
        return WS_EHANDSHAKE;
    }
    if (consumed)
        *consumed = hend;
    return WS_OK;
}

/* ---- HTTP/1.1 response ---- */

/* Parse a decimal Content-Length; false if not all digits or overflowing. */
static bool parse_len(const char *v, size_t n, size_t *out)
{
    if (!n)
        return false;
    size_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9' || x > (SIZE_MAX - 9) / 10)
            return false;
        x = x * 10 + (size_t)(v[i] - '0');
    }
    *out = x;
    return true;
}

/*
 * Walk a chunked body in b[0..n). With write false only validate and find the
 * end; with write true also compact the data to the front of b (the write
 * position never passes the read position, so this is safe in place).
 */
static int chunked(char *b, size_t n, bool eof, size_t max_body, bool write,
                   size_t *body_len, char *err, size_t errlen)
{
    size_t p = 0, w = 0, total = 0;
    for (;;) {
        char *nl = memchr(b + p, '\n', n - p);
        if (!nl)
            goto more;
        size_t lend = (size_t)(nl - b);
        size_t size = 0, digits = 0;
        while (p + digits < lend && isxdigit((unsigned char)b[p + digits])) {
            char c = b[p + digits];
            int v = c <= '9' ? c - '0' : (tolower((unsigned char)c) - 'a' + 10);
            if (size > (SIZE_MAX >> 4)) {
                ws_seterr(err, errlen, "chunk size too large");
                return WS_ETOOBIG;
            }
            size = size << 4 | (size_t)v;
            digits++;
        }
        char after = p + digits < lend ? b[p + digits] : '\n';
        if (!digits || (after != ';' && after != '\r' && after != ' ' &&
                        after != '\t' && after != '\n')) {
            ws_seterr(err, errlen, "malformed chunk size line");
            return WS_EPROTO;
        }
        p = lend + 1;
        if (size == 0) {
            /* Trailers, then an empty line. */
            for (;;) {
                char *tl = memchr(b + p, '\n', n - p);
                if (!tl)
                    goto more;
                size_t l = (size_t)(tl - (b + p));
                bool empty = l == 0 || (l == 1 && b[p] == '\r');
                p += l + 1;
                if (empty) {
                    *body_len = w;
                    return WS_OK;
                }
            }
        }
        if (size > max_body - total) {
            ws_seterr(err, errlen, "chunked body larger than %zu bytes", max_body);
            return WS_ETOOBIG;
        }
        if (n - p <= size)
            goto more;
        size_t q = p + size;
        size_t crlf = b[q] == '\n' ? 1 : (b[q] == '\r' ? 2 : 0);
        if (crlf == 2 && q + 1 >= n)
            goto more;
        if (!crlf || (crlf == 2 && b[q + 1] != '\n')) {
            ws_seterr(err, errlen, "chunk data not followed by CRLF");
            return WS_EPROTO;
        }
        if (write)
            memmove(b + w, b + p, size);
        w += size;
        total += size;
        p = q + crlf;
    }
more:
    if (eof) {
        ws_seterr(err, errlen, "connection closed inside a chunked body");
        return WS_EPROTO;
    }
    return WS_EAGAIN;
}

int ws_http_parse_response(char *buf, size_t len, bool eof, size_t max_body,
                           ws_http_response *out, char *err, size_t errlen)
{
    if (!max_body)
        max_body = DEFAULT_MAX_BODY;
    memset(out, 0, sizeof *out);
    size_t base = 0;
    for (;;) { /* loops over interim 1xx responses */
        size_t avail = len - base;
        size_t hend = header_end(buf + base, avail > MAX_HEADER ? MAX_HEADER : avail);
        if (!hend) {
            if (avail >= MAX_HEADER) {
                ws_seterr(err, errlen, "response header larger than 16 KiB");
                return WS_ETOOBIG;
            }
            if (eof) {
                ws_seterr(err, errlen, avail ? "connection closed inside the response header"
                                             : "connection closed without a response");
                return WS_EPROTO;
            }
            return WS_EAGAIN;
        }
        line_iter it = {buf + base, buf + base + hend};
        const char *s, *reason;
        size_t n, rlen;
        char tmp[80];
        next_line(&it, &s, &n);
        int st = status_line(s, n, &reason, &rlen);
        if (st < 100 || st > 999) {
            printable(s, n, tmp, 64);
            ws_seterr(err, errlen, "malformed status line \"%s\"", tmp);
            return WS_EPROTO;
        }
        bool is_chunked = false, has_cl = false;
        size_t cl = 0;
        while (next_line(&it, &s, &n) && n) {
            const char *name, *val;
            size_t nlen, vlen;
            if (!split_header(s, n, &name, &nlen, &val, &vlen)) {
                printable(s, n, tmp, 64);
                ws_seterr(err, errlen, "malformed header line \"%s\"", tmp);
                return WS_EPROTO;
            }
            if (ieq(name, nlen, "content-length")) {
                size_t v;
                if (!parse_len(val, vlen, &v) || (has_cl && v != cl)) {
                    ws_seterr(err, errlen, "bad Content-Length");
                    return WS_EPROTO;
                }
                cl = v;
                has_cl = true;
            } else if (ieq(name, nlen, "transfer-encoding")) {
                if (!has_token(val, vlen, "chunked")) {
                    printable(val, vlen, tmp, 40);
                    ws_seterr(err, errlen, "unsupported Transfer-Encoding \"%s\"", tmp);
                    return WS_EPROTO;
                }
                is_chunked = true;
            }
        }
        if (st >= 100 && st < 200 && st != 101) {
            base += hend;
            continue;
        }
        out->status = st;
        char *body = buf + base + hend;
        size_t have = len - base - hend;
        if (st == 101 || st == 204 || st == 304) {
            out->body = body;
            return WS_OK;
        }
        if (is_chunked) {
            size_t blen;
            int rc = chunked(body, have, eof, max_body, false, &blen, err, errlen);
            if (rc != WS_OK)
                return rc;
            chunked(body, have, eof, max_body, true, &blen, err, errlen);
            out->body = body;
            out->body_len = blen;
            return WS_OK;
        }
        if (has_cl) {
            if (cl > max_body) {
                ws_seterr(err, errlen, "response body of %zu bytes is larger than %zu",
                          cl, max_body);
                return WS_ETOOBIG;
            }
            if (have < cl) {
                if (eof) {
                    ws_seterr(err, errlen, "connection closed after %zu of %zu body bytes",
                              have, cl);
                    return WS_EPROTO;
                }
                return WS_EAGAIN;
            }
            out->body = body;
            out->body_len = cl;
            return WS_OK;
        }
        /* No length: the body runs until the connection closes. */
        if (have > max_body) {
            ws_seterr(err, errlen, "response body larger than %zu bytes", max_body);
            return WS_ETOOBIG;
        }
        if (!eof)
            return WS_EAGAIN;
        out->body = body;
        out->body_len = have;
        return WS_OK;
    }
}

/* ---- ws_http_get ---- */

int ws_http_get(const char *url, int timeout_ms, size_t max_body,
                char **body, size_t *body_len, int *status, char *err, size_t errlen)
{
    if (body)
        *body = NULL;
    if (body_len)
        *body_len = 0;
    if (status)
        *status = 0;
    if (!max_body)
        max_body = DEFAULT_MAX_BODY;
    ws_url u;
    char e2[256];
    if (ws_url_parse(url, &u, e2, sizeof e2) != WS_OK) {
        ws_seterr(err, errlen, "GET %.300s: %s", url ? url : "(null)", e2);
        return WS_EURL;
    }
    if (strcmp(u.scheme, "http") != 0) {
        ws_seterr(err, errlen, "GET %.300s: only http:// URLs are supported", url);
        return WS_EURL;
    }
    int64_t deadline = base_deadline_in(timeout_ms <= 0 ? 10000 : timeout_ms);
    char hp[300];
    ws_hostport(u.host, u.port, hp, sizeof hp);
    int fd;
    int rc = ws_tcp_connect(u.host, u.port, deadline, &fd, err, errlen);
    if (rc != WS_OK)
        return rc;
    char req[2600], host[300];
    host_header(&u, host, sizeof host);
    int rn = snprintf(req, sizeof req,
                      "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: application/json\r\n"
                      "Connection: close\r\n\r\n",
                      u.path, host);
    if (rn < 0 || (size_t)rn >= sizeof req) {
        close(fd);
        ws_seterr(err, errlen, "GET %s: request too long", hp);
        return WS_EURL;
    }
    if (base_write_all(fd, req, (size_t)rn, deadline, BASE_WRITE_SOCKET, NULL) != 0) {
        rc = errno == ETIMEDOUT ? WS_ETIMEOUT : WS_EIO;
        close(fd);
        ws_seterr(err, errlen, "GET %s%s: send: %s", hp, u.path,
                  rc == WS_ETIMEOUT ? "timed out" : "connection lost");
        return rc;
    }
    size_t cap = 4096, len = 0, limit = max_body + MAX_HEADER + 64;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        ws_seterr(err, errlen, "out of memory");
        return WS_ENOMEM;
    }
    ws_http_response r;
    bool eof = false;
    for (;;) {
        rc = ws_http_parse_response(buf, len, eof, max_body, &r, e2, sizeof e2);
        if (rc != WS_EAGAIN)
            break;
        if (len == cap) {
            size_t ncap = cap * 2 > limit ? limit : cap * 2;
            if (ncap <= cap) {
                rc = WS_ETOOBIG;
                snprintf(e2, sizeof e2, "response larger than %zu bytes", limit);
                break;
            }
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                rc = WS_ENOMEM;
                snprintf(e2, sizeof e2, "out of memory");
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t n = ws_sock_recv(fd, buf + len, cap - len, deadline, false);
        if (n == WS_ETIMEOUT) {
            rc = WS_ETIMEOUT;
            snprintf(e2, sizeof e2, "no complete response within %d ms",
                     timeout_ms <= 0 ? 10000 : timeout_ms);
            break;
        }
        if (n < 0) {
            rc = WS_EIO;
            snprintf(e2, sizeof e2, "receive failed");
            break;
        }
        if (n == 0)
            eof = true;
        len += (size_t)n;
    }
    close(fd);
    if (rc != WS_OK) {
        ws_seterr(err, errlen, "GET %s%s: %s", hp, u.path, e2);
        free(buf);
        return rc;
    }
    if (status)
        *status = r.status;
    if (r.status < 200 || r.status > 299) {
        /* Name the reason phrase of the final status line too. */
        const char *reason = "";
        size_t rlen = 0;
        char *sl = buf + (r.body - buf) - 1, tmp[80];
        while (sl > buf && !(sl[-1] == '\n' && memcmp(sl, "HTTP/", 5) == 0))
            sl--;
        char *nl = memchr(sl, '\n', (size_t)(r.body - sl));
        size_t sn = nl ? (size_t)(nl - sl) : 0;
        if (sn && sl[sn - 1] == '\r')
            sn--;
        if (status_line(sl, sn, &reason, &rlen) < 0)
            rlen = 0;
        printable(reason, rlen, tmp, 64);
        ws_seterr(err, errlen, "GET %s%s: HTTP %d%s%s", hp, u.path, r.status,
                  rlen ? " " : "", tmp);
        free(buf);
        return WS_EHANDSHAKE;
    }
    memmove(buf, r.body, r.body_len);
    buf[r.body_len] = 0;
    if (body_len)
        *body_len = r.body_len;
    if (body)
        *body = buf;
    else
        free(buf);
    return WS_OK;
}
