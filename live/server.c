/*
 * server.c — the live view's socket loop (live/live.h, "the server"): a
 * listening socket on loopback, HTTP requests read with live_http_parse
 * and decided by live_access_judge, the viewer page, the viewer's
 * WebSocket (ws/'s decoder in server mode), and the latest frame sent
 * while fewer than LIVE_FRAME_WINDOW sent ones are unacknowledged.
 *
 * Invariants: every socket is non-blocking and close-on-exec; a
 * connection's head must arrive within HEAD_MS; writes wait at most
 * WRITE_MS, after which the connection is closed (a stalled viewer never
 * stalls the host for long). Nothing here logs; the audit callback gets
 * static reasons. Buffers that held the person's messages are ws/'s
 * decoder's (zeroed by it); the frame buffer is zeroed before it is freed.
 */
#include "live/live_int.h"

#include "base/base.h"
#include "ws/ws.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HEAD_MS 5000
#define WRITE_MS 2000
#define MESSAGE_MAX (64 * 1024)

#define STATE_KINDS 3               /* url, control, tabs */
#define REFUSALS_AUDITED 8          /* a watcher's refused messages audited per socket */

typedef struct {
    int fd;                         /* -1: free slot */
    bool ws;
    live_role role;                 /* ws: the control viewer's or a watcher's */
    int unacked;                    /* ws: frames sent, not yet acknowledged */
    bool fresh;                     /* ws: opened; the kept state is due */
    uint64_t sent;                  /* ws: the sequence number of the last frame sent */
    int refused;                    /* ws, watcher: input messages refused */
    int64_t since;
    size_t inlen;
    char in[LIVE_HTTP_HEAD_MAX];
    ws_decoder dec;
} conn;

struct live_server {
    int lfd, port;
    live_server_opts o;
    live_access *acc;
    conn c[LIVE_CONNS_MAX];
    int viewer;                     /* index of the control viewer's connection, or -1 */
    uint8_t *frame;
    size_t frame_len, frame_cap;
    uint64_t frame_seq;             /* counts the frames offered; 0: none yet */
    char *state[STATE_KINDS];       /* the latest url, control and tabs messages */
    size_t state_len[STATE_KINDS];
    bool access_dirty;              /* the sockets' access message is to be resent */
    bool insecure;                  /* bound beyond loopback (insecure_bind) */
};

static void audit(live_server *s, bool ok, const char *what)
{
    if (s->o.audit)
        s->o.audit(s->o.ud, ok, what);
}

static void conn_close(live_server *s, int i)
{
    conn *c = &s->c[i];
    if (c->fd < 0)
        return;
    close(c->fd);
    if (c->ws) {
        ws_decoder_free(&c->dec);
        s->access_dirty = true;
    }
    base_memzero(c->in, c->inlen);
    c->fd = -1;
    c->ws = false;
    c->role = LIVE_ROLE_NONE;
    c->inlen = 0;
    if (s->viewer == i)
        s->viewer = -1;
}

static int put(conn *c, const void *p, size_t n)
{
    return base_write_all(c->fd, p, n, base_deadline_in(WRITE_MS), BASE_WRITE_SOCKET, NULL);
}

/* A whole HTTP answer, then the connection is closed. */
static void answer(live_server *s, int i, int status, const char *headers,
                   const char *body, size_t blen)
{
    static const struct { int code; const char *text; } T[] = {
        {200, "OK"}, {400, "Bad Request"}, {403, "Forbidden"}, {404, "Not Found"},
        {405, "Method Not Allowed"}, {414, "URI Too Long"},
        {431, "Request Header Fields Too Large"}, {505, "HTTP Version Not Supported"},
    };
    const char *text = "Error";
    for (size_t k = 0; k < sizeof T / sizeof T[0]; k++)
        if (T[k].code == status)
            text = T[k].text;
    char head[1024];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\n%sContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
                     "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"
                     "Connection: close\r\n\r\n", status, text, headers ? headers : "", blen);
    if (n > 0 && (size_t)n < sizeof head && put(&s->c[i], head, (size_t)n) == 0 && blen)
        put(&s->c[i], body, blen);
    base_memzero(head, sizeof head);
    conn_close(s, i);
}

static void refuse_text(live_server *s, int i, int status, const char *why)
{
    char body[256];
    int n = snprintf(body, sizeof body, "cdpgate live view: %s\n", why);
    answer(s, i, status, "Content-Type: text/plain; charset=utf-8\r\n", body,
           n > 0 && (size_t)n < sizeof body ? (size_t)n : 0);
}

/* The trade's answer: the cookie, and a page that moves on to the view's
 * page itself, "../" from /v/ID/live/TOKEN (a redirect would keep the
 * cross-site context of a link clicked in another site, and the Strict
 * cookie would not be sent). */
static void serve_redeem(live_server *s, int i, const live_decision *d)
{
    static const char body[] =
        "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0;url=../\">"
        "<title>cdpgate live view</title>Opening the live view...";
    char headers[400];
    snprintf(headers, sizeof headers, "Set-Cookie: %s\r\nContent-Type: text/html; "
             "charset=utf-8\r\nContent-Security-Policy: default-src 'none'\r\n", d->set_cookie);
    answer(s, i, 200, headers, body, sizeof body - 1);
    base_memzero(headers, sizeof headers);
}

/* The page: its socket's nonce (d->page_nonce) in its script; its CSP
 * lets it connect to its own socket, ws://HOST/v/ID/ws, only. */
static void serve_view(live_server *s, int i, const char *host, const live_decision *d)
{
    uint8_t raw[16];
    char nonce[BASE_B64_ENCLEN(16) + 1];
    if (base_random(raw, sizeof raw) != 0) {
        refuse_text(s, i, 403, "no random bytes for the page");
        return;
    }
    base_b64_encode(raw, sizeof raw, nonce);
    char *page = malloc(LIVE_VIEWER_CAP);
    int n = page ? live_viewer_page(page, LIVE_VIEWER_CAP, nonce, d->page_nonce,
                                    d->role == LIVE_ROLE_WATCH) : -1;
    char headers[800];
    snprintf(headers, sizeof headers, "Content-Type: text/html; charset=utf-8\r\n"
             "Content-Security-Policy: default-src 'none'; script-src 'nonce-%s'; "
             "style-src 'nonce-%s'; img-src blob:; connect-src ws://%s%sws; base-uri 'none'; "
             "form-action 'none'; frame-ancestors 'none'\r\n", nonce, nonce, host, d->base);
    if (n < 0)
        refuse_text(s, i, 403, "out of memory");
    else
        answer(s, i, 200, headers, page, (size_t)n);
    if (page)
        base_memzero(page, LIVE_VIEWER_CAP);
    free(page);
}

static void on_readable(live_server *s, int i);

/* A second control socket while the person's is open: the person's is
 * kept, never silently replaced (red team R4-3). Its pending bytes are
 * read first: a reload's close may be waiting there. True when refused. */
static bool second_control(live_server *s, int i)
{
    int v = s->viewer;
    if (v < 0 || v == i)
        return false;
    struct pollfd p = {.fd = s->c[v].fd, .events = POLLIN};
    if (poll(&p, 1, 0) > 0)
        on_readable(s, v);
    if (s->viewer < 0)
        return false;
    audit(s, false, "refused: a second control socket while the person's is open (the "
                    "person's is kept)");
    refuse_text(s, i, 403, "another viewer holds control of this live view");
    return true;
}

static void serve_socket(live_server *s, int i, const live_http_request *req,
                         const live_decision *d)
{
    char accept[29], resp[256];
    live_err err = {0};
    if (live_ws_upgrade(req, accept, &err) != LIVE_OK) {
        audit(s, false, "refused: not a valid WebSocket upgrade");
        refuse_text(s, i, 400, err.msg);
        return;
    }
    bool watch = d->role == LIVE_ROLE_WATCH;
    if (!watch && second_control(s, i))
        return;
    int n = live_ws_response(resp, sizeof resp, accept, LIVE_WS_PROTOCOL);
    if (n < 0 || put(&s->c[i], resp, (size_t)n) != 0) {
        conn_close(s, i);
        return;
    }
    conn *c = &s->c[i];
    c->ws = true;
    c->role = watch ? LIVE_ROLE_WATCH : LIVE_ROLE_CONTROL;
    c->unacked = 0;                 /* the first frame goes at once */
    c->fresh = true;
    c->sent = 0;
    c->refused = 0;
    ws_decoder_init(&c->dec, MESSAGE_MAX, true);
    if (!watch)
        s->viewer = i;
    s->access_dirty = true;
    audit(s, true, d->reason);
}

static void feed(live_server *s, int i, const uint8_t *p, size_t n);

static int parse_status(int rc)
{
    return rc == LIVE_ETOOBIG ? 431 : rc == LIVE_EUNSUPPORTED ? 505 : 400;
}

/* The connection's head is complete or wrong: decide and answer. */
static void on_head(live_server *s, int i)
{
    conn *c = &s->c[i];
    live_http_request *req = malloc(sizeof *req);
    if (!req) {
        conn_close(s, i);
        return;
    }
    live_err err = {0};
    int rc = live_http_parse(c->in, c->inlen, req, &err);
    if (rc == LIVE_EAGAIN) {
        free(req);
        return;
    }
    if (rc != LIVE_OK) {
        audit(s, false, "refused: malformed or unsupported request");
        refuse_text(s, i, parse_status(rc), err.msg);
    } else {
        live_decision d;
        rc = live_access_judge(s->acc, req, base_now_ms(), &d);
        if (!(rc == LIVE_OK && d.kind == LIVE_REQ_SOCKET))
            audit(s, rc == LIVE_OK, d.reason);
        if (rc != LIVE_OK)
            refuse_text(s, i, d.status, d.reason);
        else if (d.kind == LIVE_REQ_REDEEM) {
            serve_redeem(s, i, &d);
            s->access_dirty = true;
        }
        else if (d.kind == LIVE_REQ_VIEW)
            serve_view(s, i, live_http_get(req, "host"), &d);
        else
            serve_socket(s, i, req, &d);
        base_memzero(&d, sizeof d);
        conn *v = &s->c[i];
        if (v->fd >= 0 && v->ws && v->inlen > req->head_len)
            feed(s, i, (const uint8_t *)v->in + req->head_len, v->inlen - req->head_len);
    }
    base_memzero(req, sizeof *req);
    free(req);
}

static int send_frame(live_server *s, int i, int op, const void *p, size_t n)
{
    uint8_t h[14];
    size_t hl = live_ws_frame(h, op, n);
    if (put(&s->c[i], h, hl) != 0 || (n && put(&s->c[i], p, n) != 0)) {
        conn_close(s, i);
        return LIVE_EIO;
    }
    return LIVE_OK;
}

/* A message from a watcher's socket other than an acknowledgement: never
 * handed to the host; audited (the first REFUSALS_AUDITED per socket, then
 * once more to say the rest are not). */
static void refuse_watcher(live_server *s, int i)
{
    conn *c = &s->c[i];
    if (c->refused < REFUSALS_AUDITED)
        audit(s, false, "refused: input from a read-only watcher");
    else if (c->refused == REFUSALS_AUDITED)
        audit(s, false, "refused: more input from a read-only watcher (not audited again "
                        "on this socket)");
    if (c->refused <= REFUSALS_AUDITED)
        c->refused++;
}

/* One event of a viewer's (or watcher's) socket. */
static void on_event(live_server *s, int i, const ws_event *ev)
{
    if (ev->type == WS_EV_PING) {
        send_frame(s, i, WS_OP_PONG, ev->data, ev->len);
    } else if (ev->type == WS_EV_CLOSE || ev->type == WS_EV_ERROR) {
        if (ev->type == WS_EV_CLOSE)
            send_frame(s, i, WS_OP_CLOSE, "\x03\xe8", 2);
        audit(s, true, ev->type == WS_EV_CLOSE ? "viewer socket closed"
                                               : "viewer socket closed: protocol error");
        conn_close(s, i);
    } else if (ev->type == WS_EV_MESSAGE && ev->opcode == WS_OP_TEXT) {
        static const char ack[] = "{\"t\":\"ack\"}";
        if (ev->len == sizeof ack - 1 && memcmp(ev->data, ack, sizeof ack - 1) == 0) {
            if (s->c[i].unacked > 0)
                s->c[i].unacked--;
        }
        else if (s->c[i].role == LIVE_ROLE_WATCH)
            refuse_watcher(s, i);
        else if (s->o.message && i == s->viewer)
            s->o.message(s->o.ud, (const char *)ev->data, ev->len);
    }
}

/* Bytes of the viewer's socket: their events, in order. */
static void feed(live_server *s, int i, const uint8_t *p, size_t n)
{
    size_t off = 0;
    while (off < n && s->c[i].fd >= 0 && s->c[i].ws) {
        ws_event ev;
        off += ws_decoder_feed(&s->c[i].dec, p + off, n - off, &ev);
        if (ev.type == WS_EV_NONE)
            break;
        on_event(s, i, &ev);
    }
}

static void on_readable(live_server *s, int i)
{
    conn *c = &s->c[i];
    uint8_t buf[16384];
    ssize_t r;
    if (!c->ws) {
        r = read(c->fd, c->in + c->inlen, sizeof c->in - c->inlen);
        if (r <= 0) {
            if (r == 0 || (errno != EAGAIN && errno != EINTR))
                conn_close(s, i);
            return;
        }
        c->inlen += (size_t)r;
        on_head(s, i);
        return;
    }
    r = read(c->fd, buf, sizeof buf);
    if (r <= 0) {
        if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
            audit(s, true, "viewer socket closed");
            conn_close(s, i);
        }
        return;
    }
    feed(s, i, buf, (size_t)r);
    base_memzero(buf, (size_t)r);
}

static void on_accept(live_server *s)
{
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        return;
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        close(fd);
        return;
    }
    for (int i = 0; i < LIVE_CONNS_MAX; i++) {
        if (s->c[i].fd < 0) {
            s->c[i].fd = fd;
            s->c[i].since = base_now_ms();
            s->c[i].inlen = 0;
            return;
        }
    }
    audit(s, false, "refused: too many connections");
    close(fd);
}

/* addr as a socket address (port set): loopback by name, any IPv4 or
 * IPv6 literal; *loop says whether it is 127.0.0.1 or ::1. */
static int parse_addr(const char *addr, int port, struct sockaddr_storage *ss, socklen_t *sl,
                      bool *loop)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *sl = sizeof *a4;
        *loop = a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
        return 0;
    }
    if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *sl = sizeof *a6;
        *loop = memcmp(&a6->sin6_addr, &in6addr_loopback, sizeof in6addr_loopback) == 0;
        return 0;
    }
    return -1;
}

bool live_addr_loopback(const char *addr)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    bool loop = false;
    return addr && parse_addr(addr, 0, &ss, &sl, &loop) == 0 && loop;
}

/* Listen on addr:port: loopback, or beyond it with insecure_bind. */
static int listen_on(live_server *s, const char *addr, int port, live_err *err)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    bool loop = false;
    if (parse_addr(addr, port, &ss, &sl, &loop) != 0)
        return live_fail(err, LIVE_EBADREQ, 0, "live view: bind wants an IPv4 or IPv6 address");
    if (!loop && !s->o.insecure_bind)
        return live_fail(err, LIVE_EDENIED, 0, "live view: binding that address is refused: "
                         "loopback only (127.0.0.1 or ::1) without TLS, unless insecure_bind "
                         "is set");
    s->insecure = !loop;
    s->lfd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (s->lfd < 0 || fcntl(s->lfd, F_SETFD, FD_CLOEXEC) < 0 ||
        fcntl(s->lfd, F_SETFL, O_NONBLOCK) < 0 || bind(s->lfd, (struct sockaddr *)&ss, sl) < 0 ||
        listen(s->lfd, 16) < 0 || getsockname(s->lfd, (struct sockaddr *)&ss, &sl) < 0)
        return live_fail(err, LIVE_EIO, 0, "live view: cannot listen on that address, port "
                         "%d: %s", port, strerror(errno));
    s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    return LIVE_OK;
}

/* The host the link names (and Host must): the public host when given,
 * else the bound address ("[v6]"); a wildcard needs a public host. */
static int link_host(const live_server_opts *o, const char *addr, char *out, size_t cap,
                     live_err *err)
{
    if (o->public_host) {
        snprintf(out, cap, "%s", o->public_host);
        return LIVE_OK;
    }
    if (strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0)
        return live_fail(err, LIVE_EBADREQ, 0, "live view: binding every address needs "
                         "public_host (the name the person's browser uses)");
    snprintf(out, cap, strchr(addr, ':') ? "[%s]" : "%s", addr);
    return LIVE_OK;
}

live_server *live_server_new(const live_server_opts *o, live_err *err)
{
    live_server *s = calloc(1, sizeof *s);
    if (!s) {
        live_fail(err, LIVE_ENOMEM, 0, "live view: out of memory");
        return NULL;
    }
    s->o = *o;
    s->viewer = -1;
    for (int i = 0; i < LIVE_CONNS_MAX; i++)
        s->c[i].fd = -1;
    const char *addr = o->bind ? o->bind : "127.0.0.1";
    if (o->port < 0 || o->port > 65535) {
        live_fail(err, LIVE_EBADREQ, 0, "live view: port out of range");
        free(s);
        return NULL;
    }
    char host[260];
    s->lfd = -1;
    /* the host is checked before a wildcard is bound (never bound for nothing) */
    if ((o->insecure_bind && link_host(o, addr, host, sizeof host, err) != LIVE_OK) ||
        listen_on(s, addr, o->port, err) != LIVE_OK ||
        link_host(o, addr, host, sizeof host, err) != LIVE_OK) {
        if (s->lfd >= 0)
            close(s->lfd);
        free(s);
        return NULL;
    }
    live_access_opts ao = {.host = host, .port = s->port, .token_ttl_ms = o->token_ttl_ms,
                           .session_ttl_ms = o->session_ttl_ms};
    s->acc = live_access_new(&ao, base_now_ms(), err);
    if (!s->acc) {
        close(s->lfd);
        free(s);
        return NULL;
    }
    if (s->insecure)
        audit(s, true, "warning: listening beyond loopback without TLS (insecure_bind)");
    return s;
}

void live_server_free(live_server *s)
{
    if (!s)
        return;
    for (int i = 0; i < LIVE_CONNS_MAX; i++)
        conn_close(s, i);
    close(s->lfd);
    live_access_end(s->acc);
    live_access_free(s->acc);
    base_memzero(s->frame, s->frame_cap);
    free(s->frame);
    for (int k = 0; k < STATE_KINDS; k++)
        free(s->state[k]);
    free(s);
}

int live_server_port(const live_server *s) { return s->port; }

const char *live_server_warning(const live_server *s)
{
    return s->insecure ? "live view: listening beyond loopback without TLS (insecure_bind): "
                         "the link, the session cookie, every frame and what the person types "
                         "cross the network in clear text; anyone who can see that traffic "
                         "can watch the session or take it over. Use it only on a network "
                         "you trust, for as short as you can." : NULL;
}
bool live_server_viewing(const live_server *s) { return s->viewer >= 0; }

int live_server_link(const live_server *s, char *out, size_t cap)
{
    return live_access_link(s->acc, out, cap);
}

int live_server_frame(live_server *s, const uint8_t *jpeg, size_t len)
{
    if (len > s->frame_cap) {
        uint8_t *nb = malloc(len);
        if (!nb)
            return LIVE_ENOMEM;
        base_memzero(s->frame, s->frame_cap);
        free(s->frame);
        s->frame = nb;
        s->frame_cap = len;
    }
    memcpy(s->frame, jpeg, len);
    s->frame_len = len;
    s->frame_seq++;
    return LIVE_OK;
}

int live_server_text(live_server *s, const char *json, size_t len)
{
    int sent = 0;
    for (int i = 0; i < LIVE_CONNS_MAX; i++)
        if (s->c[i].fd >= 0 && s->c[i].ws && send_frame(s, i, WS_OP_TEXT, json, len) == 0)
            sent++;
    return sent ? LIVE_OK : LIVE_EDENIED;
}

/* Keep msg as the latest of its kind (owned from here) and send it. */
static int keep_state(live_server *s, int kind, char *msg, size_t len)
{
    if (!msg)
        return LIVE_ENOMEM;
    free(s->state[kind]);
    s->state[kind] = msg;
    s->state_len[kind] = len;
    live_server_text(s, msg, len);
    return LIVE_OK;
}

int live_server_send_url(live_server *s, const char *url, const char *origin)
{
    size_t n = 0;
    char *m = live_state_url(url, origin, &n);
    return keep_state(s, 0, m, n);
}

int live_server_send_control(live_server *s, bool human, int64_t epoch)
{
    size_t n = 0;
    char *m = live_state_control(human, epoch, &n);
    return keep_state(s, 1, m, n);
}

int live_server_send_tabs(live_server *s, const live_tab *tabs, size_t n)
{
    size_t len = 0;
    char *m = live_state_tabs(tabs, n, &len);
    return keep_state(s, 2, m, len);
}

int live_server_watchers(const live_server *s)
{
    int n = 0;
    for (int i = 0; i < LIVE_CONNS_MAX; i++)
        n += s->c[i].fd >= 0 && s->c[i].ws && s->c[i].role == LIVE_ROLE_WATCH;
    return n;
}

int live_server_watch_link(live_server *s, char *out, size_t cap, live_err *err)
{
    int n = live_access_watch_link(s->acc, base_now_ms(), out, cap, err);
    if (n >= 0) {
        audit(s, true, "watch link issued (read-only)");
        s->access_dirty = true;
    }
    return n;
}

/* The access message of connection i: its role, who can see and control,
 * when links expire (live/live.h "the viewer's messages"). */
static void send_access(live_server *s, int i)
{
    live_access_state st;
    live_access_state_get(s->acc, base_now_ms(), &st);
    char m[400], ce[24] = "null", we[24] = "null";
    if (st.control_expires_s >= 0)
        snprintf(ce, sizeof ce, "%lld", (long long)st.control_expires_s);
    if (st.watch_expires_s >= 0)
        snprintf(we, sizeof we, "%lld", (long long)st.watch_expires_s);
    int n = snprintf(m, sizeof m, "{\"t\":\"access\",\"you\":\"%s\",\"control\":{\"opened\":%s,"
                     "\"expires\":%s,\"viewing\":%s},\"watch\":{\"links\":%d,\"opened\":%d,"
                     "\"expires\":%s,\"watching\":%d}}",
                     s->c[i].role == LIVE_ROLE_WATCH ? "watch" : "control",
                     st.control_opened ? "true" : "false", ce, s->viewer >= 0 ? "true" : "false",
                     st.watch_links, st.watch_opened, we, live_server_watchers(s));
    if (n > 0 && (size_t)n < sizeof m)
        send_frame(s, i, WS_OP_TEXT, m, (size_t)n);
}

/* Each socket that is due gets the latest frame (one it has not had, while
 * fewer than LIVE_FRAME_WINDOW are unacknowledged); the access message goes
 * out again when sockets or links changed. */
static void send_due(live_server *s)
{
    bool dirty = s->access_dirty;
    s->access_dirty = false;
    for (int i = 0; i < LIVE_CONNS_MAX; i++) {
        conn *c = &s->c[i];
        if (c->fd >= 0 && c->ws && (dirty || c->fresh))
            send_access(s, i);
        for (int k = 0; c->fd >= 0 && c->ws && c->fresh && k < STATE_KINDS; k++)
            if (s->state[k])
                send_frame(s, i, WS_OP_TEXT, s->state[k], s->state_len[k]);
        if (c->fd >= 0)
            c->fresh = false;
        if (c->fd < 0 || !c->ws || c->unacked >= LIVE_FRAME_WINDOW || !s->frame_seq ||
            c->sent == s->frame_seq)
            continue;
        c->unacked++;
        c->sent = s->frame_seq;
        send_frame(s, i, WS_OP_BINARY, s->frame, s->frame_len);
    }
}

int live_server_pump(live_server *s, int timeout_ms)
{
    struct pollfd p[LIVE_CONNS_MAX + 1];
    int idx[LIVE_CONNS_MAX + 1], n = 0;
    p[n].fd = s->lfd;
    p[n].events = POLLIN;
    idx[n++] = -1;
    int64_t now = base_now_ms();
    for (int i = 0; i < LIVE_CONNS_MAX; i++) {
        if (s->c[i].fd < 0)
            continue;
        if (!s->c[i].ws && now - s->c[i].since > HEAD_MS) {
            audit(s, false, "refused: no complete request in time");
            conn_close(s, i);
            continue;
        }
        p[n].fd = s->c[i].fd;
        p[n].events = POLLIN;
        idx[n++] = i;
    }
    int r = poll(p, (nfds_t)n, timeout_ms);
    if (r < 0 && errno != EINTR)
        return live_fail(NULL, LIVE_EIO, 0, "poll");
    for (int k = 0; r > 0 && k < n; k++) {
        if (!p[k].revents)
            continue;
        if (idx[k] < 0)
            on_accept(s);
        else if (s->c[idx[k]].fd == p[k].fd)
            on_readable(s, idx[k]);
    }
    send_due(s);
    return LIVE_OK;
}

int live_server_fds(const live_server *s, int *fds, int cap)
{
    int n = 0;
    if (n < cap && s->lfd >= 0)
        fds[n++] = s->lfd;
    for (int i = 0; i < LIVE_CONNS_MAX && n < cap; i++)
        if (s->c[i].fd >= 0)
            fds[n++] = s->c[i].fd;
    return n;
}
