/*
 * access.c — who may see the live view (live/live.h, "access control"):
 * the path each link lives under (/v/ID/), the one-time token in the
 * person's link, the session cookie it is traded for (scoped to that
 * path), the nonce each page served hands its WebSocket, and the Host,
 * Origin and Sec-Fetch-Site of every request.
 *
 * Each link is a pass: the control link's (the person's) and up to
 * LIVE_WATCHERS_MAX read-only watch links', each with its own token and
 * session; a decision says whose pass let it in (live_decision.role).
 *
 * Invariants: each path id, token, session value and page nonce is 32
 * random bytes from the OS, written base64url (43 characters); they leave
 * this file only through live_access_link / live_access_watch_link (a path
 * and token, for the out-of-band channel), a trade's Set-Cookie (a
 * session, for the browser) and a page decision's page_nonce (for that
 * page). A path lookup compares the value with every pass, so its time
 * does not say which. They are compared in constant time and wiped when
 * the state is freed; a nonce is wiped when a socket uses it. A token trades once;
 * after live_access_end nothing works any more. The reasons a decision
 * gives are static text: they are audited and never hold a value.
 */
#include "live/live_int.h"

#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SECRET_BYTES 32
#define SECRET_LEN 43           /* base64url of 32 bytes, unpadded */
#define HOSTS_MAX 2

/* One link: the path it lives under (/v/ID/), its token, the session it
 * trades for, their lifetimes, and the nonce of the page served last (the
 * one its WebSocket must present, once). */
typedef struct {
    char id[SECRET_LEN + 1];
    char token[SECRET_LEN + 1];
    char session[SECRET_LEN + 1];
    char wsn[SECRET_LEN + 1];
    bool wsn_live;
    int64_t token_deadline;
    int64_t session_deadline;       /* 0: until ended */
    bool traded;
} pass;

struct live_access {
    char host[HOSTS_MAX][280];      /* "127.0.0.1:4711", "localhost:4711" */
    char origin[HOSTS_MAX][290];    /* "http://" + host */
    int nhosts;
    pass ctl;                       /* the person's link: control */
    pass watch[LIVE_WATCHERS_MAX];  /* read-only links, issued on demand */
    int nwatch;
    int64_t token_ttl, session_ttl;
    bool ended;
};

/* 32 random bytes as base64url without padding into out[SECRET_LEN + 1]. */
static int draw_secret(char *out)
{
    uint8_t raw[SECRET_BYTES];
    char b64[BASE_B64_ENCLEN(SECRET_BYTES) + 1];
    if (base_random(raw, sizeof raw) != 0)
        return -1;
    base_b64_encode(raw, sizeof raw, b64);
    for (int i = 0; i < SECRET_LEN; i++)
        out[i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
    out[SECRET_LEN] = 0;
    base_memzero(raw, sizeof raw);
    base_memzero(b64, sizeof b64);
    return 0;
}

/* a[0..an) equals the secret s, in time independent of where they differ. */
static bool secret_eq(const char *a, size_t an, const char *s)
{
    if (an != SECRET_LEN)
        return false;
    unsigned char d = 0;
    for (size_t i = 0; i < SECRET_LEN; i++)
        d |= (unsigned char)(a[i] ^ s[i]);
    return d == 0;
}

/* A host as a URL writes it: a name or IPv4 of [A-Za-z0-9.-], or an IPv6
 * literal in brackets. */
static bool host_ok(const char *h)
{
    size_t n = strlen(h);
    if (n == 0 || n > 255)
        return false;
    if (h[0] == '[')
        return n > 2 && h[n - 1] == ']' && strspn(h + 1, "0123456789abcdefABCDEF:.") == n - 2;
    return strspn(h, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-") == n;
}

static void add_host(live_access *a, const char *host, int port)
{
    snprintf(a->host[a->nhosts], sizeof a->host[0], "%s:%d", host, port);
    snprintf(a->origin[a->nhosts], sizeof a->origin[0], "http://%s:%d", host, port);
    a->nhosts++;
}

/* A fresh path, token and session for p, the token good until now + ttl. */
static int pass_draw(pass *p, int64_t ttl, int64_t now)
{
    if (draw_secret(p->id) != 0 || draw_secret(p->token) != 0 || draw_secret(p->session) != 0)
        return -1;
    p->wsn_live = false;
    p->token_deadline = now + ttl;
    p->session_deadline = 0;
    p->traded = false;
    return 0;
}

live_access *live_access_new(const live_access_opts *o, int64_t now_ms, live_err *err)
{
    const char *host = o && o->host ? o->host : "127.0.0.1";
    if (!o || o->port < 1 || o->port > 65535) {
        live_fail(err, LIVE_EBADREQ, 0, "live view: port out of range");
        return NULL;
    }
    if (!host_ok(host) || o->token_ttl_ms < 0 || o->session_ttl_ms < 0) {
        live_fail(err, LIVE_EBADREQ, 0, "live view: bad host or lifetime");
        return NULL;
    }
    live_access *a = calloc(1, sizeof *a);
    if (!a) {
        live_fail(err, LIVE_ENOMEM, 0, "live view: out of memory");
        return NULL;
    }
    add_host(a, host, o->port);
    if (strcmp(host, "127.0.0.1") == 0 || strcmp(host, "[::1]") == 0)
        add_host(a, "localhost", o->port);
    a->token_ttl = o->token_ttl_ms ? o->token_ttl_ms : LIVE_TOKEN_TTL_MS;
    a->session_ttl = o->session_ttl_ms;
    if (pass_draw(&a->ctl, a->token_ttl, now_ms) != 0) {
        live_access_free(a);
        live_fail(err, LIVE_ERANDOM, 0, "live view: no random bytes from the OS");
        return NULL;
    }
    return a;
}

void live_access_free(live_access *a)
{
    if (!a)
        return;
    base_memzero(a, sizeof *a);
    free(a);
}

static int write_link(const live_access *a, const pass *p, char *out, size_t cap)
{
    int n = snprintf(out, cap, "http://%s/v/%s/live/%s", a->host[0], p->id, p->token);
    if (n < 0 || (size_t)n >= cap) {
        if (cap)
            base_memzero(out, cap);
        return -1;
    }
    return n;
}

int live_access_link(const live_access *a, char *out, size_t cap)
{
    return write_link(a, &a->ctl, out, cap);
}

int live_access_watch_link(live_access *a, int64_t now_ms, char *out, size_t cap,
                           live_err *err)
{
    if (a->ended)
        return live_fail(err, LIVE_EDENIED, 0, "live view: ended, no more watch links");
    if (a->nwatch >= LIVE_WATCHERS_MAX)
        return live_fail(err, LIVE_ETOOBIG, 0, "live view: at most %d watch links",
                         LIVE_WATCHERS_MAX);
    if (cap < 300)
        return live_fail(err, LIVE_ETOOBIG, 0, "live view: the link needs 300 bytes");
    pass *p = &a->watch[a->nwatch];
    if (pass_draw(p, a->token_ttl, now_ms) != 0) {
        base_memzero(p, sizeof *p);
        return live_fail(err, LIVE_ERANDOM, 0, "live view: no random bytes from the OS");
    }
    a->nwatch++;
    return write_link(a, p, out, cap);
}

/* Seconds from now to deadline, at least 0. */
static int64_t secs_left(int64_t deadline, int64_t now)
{
    return deadline > now ? (deadline - now + 999) / 1000 : 0;
}

void live_access_state_get(const live_access *a, int64_t now_ms, live_access_state *st)
{
    memset(st, 0, sizeof *st);
    st->ended = a->ended;
    st->control_opened = a->ctl.traded;
    st->control_expires_s = a->ctl.traded ? (a->ctl.session_deadline ?
                            secs_left(a->ctl.session_deadline, now_ms) : -1)
                            : secs_left(a->ctl.token_deadline, now_ms);
    st->watch_links = a->nwatch;
    st->watch_expires_s = -1;
    for (int i = 0; i < a->nwatch; i++) {
        const pass *p = &a->watch[i];
        if (p->traded) {
            st->watch_opened++;
            continue;
        }
        int64_t left = secs_left(p->token_deadline, now_ms);
        if (left > 0 && (st->watch_expires_s < 0 || left < st->watch_expires_s))
            st->watch_expires_s = left;
    }
    st->session_ttl_s = a->session_ttl ? (a->session_ttl + 999) / 1000 : -1;
}

void live_access_end(live_access *a)
{
    a->ended = true;
}

static int refuse(live_decision *d, int status, const char *reason)
{
    d->kind = LIVE_REQ_REFUSED;
    d->role = LIVE_ROLE_NONE;
    d->watcher = -1;
    d->status = status;
    d->reason = reason;
    return LIVE_EDENIED;
}

static bool is_origin(const live_access *a, const char *v)
{
    for (int i = 0; i < a->nhosts; i++)
        if (strcasecmp(a->origin[i], v) == 0)
            return true;
    return false;
}

static bool is_host(const live_access *a, const char *v)
{
    for (int i = 0; i < a->nhosts; i++)
        if (strcasecmp(a->host[i], v) == 0)
            return true;
    return false;
}

/* The pass whose path is /v/v[0..n)/, its role and watcher index into d;
 * every pass is compared, so the time taken does not say which. NULL when
 * none. */
static pass *pass_by_id(live_access *a, const char *v, size_t n, live_decision *d)
{
    pass *found = NULL;
    if (secret_eq(v, n, a->ctl.id)) {
        found = &a->ctl;
        d->role = LIVE_ROLE_CONTROL;
        d->watcher = -1;
    }
    for (int i = 0; i < a->nwatch; i++) {
        if (secret_eq(v, n, a->watch[i].id)) {
            found = &a->watch[i];
            d->role = LIVE_ROLE_WATCH;
            d->watcher = i;
        }
    }
    return found;
}

/* GET /v/ID/live/TOKEN: trade p's token for its session cookie, scoped to
 * p's path (other ports of the host never get a request on it). */
static int redeem(live_access *a, pass *p, const char *tok, int64_t now, live_decision *d)
{
    if (a->ended)
        return refuse(d, 403, "token refused: the live view has ended");
    if (!secret_eq(tok, strlen(tok), p->token))
        return refuse(d, 403, "token refused: unknown token");
    if (p->traded)
        return refuse(d, 403, "token refused: already used (the link was opened before)");
    if (now > p->token_deadline)
        return refuse(d, 403, "token refused: expired");
    p->traded = true;
    p->session_deadline = a->session_ttl ? now + a->session_ttl : 0;
    snprintf(d->set_cookie, sizeof d->set_cookie, "%s=%s; Path=/v/%s/; HttpOnly; "
             "SameSite=Strict", LIVE_COOKIE_NAME, p->session, p->id);
    d->kind = LIVE_REQ_REDEEM;
    d->status = 200;
    d->reason = d->role == LIVE_ROLE_WATCH ? "watch token traded for a read-only session"
                                            : "token traded for a session";
    return LIVE_OK;
}

#define COOKIES_MAX 8   /* cookies of our name a request may carry */

/* Our cookies in a Cookie header against p's session: 1 one of them is
 * it, 0 none is there, -1 some are but none is it, -2 more than
 * COOKIES_MAX. Several are tolerated: a page of another port of the host
 * can set cookies of this name (cookies ignore ports), and the browser
 * sends them along with ours; only p's session lets a request in. Each
 * is compared in full. */
static int cookie_match(const char *h, const pass *p)
{
    int seen = 0;
    bool ok = false;
    size_t nl = strlen(LIVE_COOKIE_NAME);
    while (h && *h) {
        while (*h == ' ' || *h == ';')
            h++;
        const char *e = strchr(h, ';');
        size_t len = e ? (size_t)(e - h) : strlen(h);
        if (len > nl && strncmp(h, LIVE_COOKIE_NAME, nl) == 0 && h[nl] == '=') {
            if (++seen > COOKIES_MAX)
                return -2;
            const char *v = h + nl + 1;
            size_t n = len - nl - 1;
            while (n && v[n - 1] == ' ')
                n--;
            ok = secret_eq(v, n, p->session) || ok;
        }
        h = e;
    }
    return ok ? 1 : seen ? -1 : 0;
}

/* The page and its socket: p's session cookie. */
static int session(live_access *a, const pass *p, const live_http_request *req, int64_t now,
                   live_decision *d)
{
    if (a->ended)
        return refuse(d, 403, "session refused: the live view has ended");
    int f = cookie_match(live_http_get(req, "cookie"), p);
    if (f == -2)
        return refuse(d, 403, "session refused: too many session cookies");
    if (f == 0)
        return refuse(d, 403, "session refused: no session cookie (open the link first)");
    if (f < 0 || !p->traded)
        return refuse(d, 403, "session refused: wrong session cookie");
    if (p->session_deadline && now > p->session_deadline)
        return refuse(d, 403, "session refused: expired");
    return LIVE_OK;
}

/* The socket's Sec-WebSocket-Protocol offers LIVE_WS_PROTOCOL and the
 * nonce of the page p served last; that nonce is used up here (one socket
 * per page load). */
static bool nonce_take(pass *p, const char *v)
{
    bool proto = false, ok = false;
    for (int items = 0; v && *v; items++) {
        v += strspn(v, " \t,");
        size_t n = strcspn(v, " \t,");
        if (n == 0 || items >= 4)
            break;
        if (n == strlen(LIVE_WS_PROTOCOL) && strncmp(v, LIVE_WS_PROTOCOL, n) == 0)
            proto = true;
        else if (p->wsn_live && secret_eq(v, n, p->wsn))
            ok = true;
        v += n;
    }
    if (!proto || !ok)
        return false;
    base_memzero(p->wsn, sizeof p->wsn);
    p->wsn_live = false;
    return true;
}

typedef enum { ROUTE_NONE, ROUTE_TRADE, ROUTE_VIEW, ROUTE_SOCKET } route;

/* The target's route: "/v/ID/" then "live/TOKEN" (*tok), "" (the page; a
 * query is allowed) or "ws"; *p the pass whose path it is. */
static route route_of(live_access *a, const char *t, pass **p, const char **tok,
                      live_decision *d)
{
    if (strncmp(t, "/v/", 3) != 0)
        return ROUTE_NONE;
    const char *id = t + 3;
    size_t n = strcspn(id, "/?");
    if (id[n] != '/' || !(*p = pass_by_id(a, id, n, d)))
        return ROUTE_NONE;
    const char *rest = id + n + 1;
    if (strncmp(rest, "live/", 5) == 0) {
        *tok = rest + 5;
        return ROUTE_TRADE;
    }
    size_t rl = strcspn(rest, "?");
    return rl == 0 ? ROUTE_VIEW : rl == 2 && strncmp(rest, "ws", 2) == 0 ? ROUTE_SOCKET
                                                                         : ROUTE_NONE;
}

/* The page (a fresh nonce for its socket) or the socket (that nonce). */
static int view_or_socket(pass *p, const live_http_request *req, bool sock, live_decision *d)
{
    bool w = d->role == LIVE_ROLE_WATCH;
    if (sock && !nonce_take(p, live_http_get(req, "sec-websocket-protocol")))
        return refuse(d, 403, "refused: WebSocket without the nonce of a page served to this "
                              "session (a cookie alone never opens the socket)");
    if (!sock) {
        if (draw_secret(p->wsn) != 0)
            return refuse(d, 403, "refused: no random bytes for the page");
        p->wsn_live = true;
        memcpy(d->page_nonce, p->wsn, sizeof p->wsn);
    }
    snprintf(d->base, sizeof d->base, "/v/%s/", p->id);
    d->kind = sock ? LIVE_REQ_SOCKET : LIVE_REQ_VIEW;
    d->status = 200;
    d->reason = sock ? (w ? "watcher socket opened (read-only)" : "viewer socket opened")
                     : (w ? "watcher page served (read-only)" : "viewer page served");
    return LIVE_OK;
}

int live_access_judge(live_access *a, const live_http_request *req, int64_t now_ms,
                      live_decision *d)
{
    memset(d, 0, sizeof *d);
    d->watcher = -1;
    const char *host = live_http_get(req, "host");
    if (!host || !is_host(a, host))
        return refuse(d, 403, "refused: Host is not this server (DNS rebinding?)");
    const char *origin = live_http_get(req, "origin");
    if (origin && !is_origin(a, origin))
        return refuse(d, 403, "refused: foreign Origin");
    if (strcmp(req->method, "GET") != 0)
        return refuse(d, 405, "refused: method not allowed");
    pass *p = NULL;
    const char *tok = NULL;
    route r = route_of(a, req->target, &p, &tok, d);
    if (r == ROUTE_NONE)
        return refuse(d, 404, "refused: no such page");
    if (r == ROUTE_TRADE)
        return redeem(a, p, tok, now_ms, d);
    const char *site = live_http_get(req, "sec-fetch-site");
    if (site && strcmp(site, "same-origin") != 0 && strcmp(site, "none") != 0)
        return refuse(d, 403, "refused: a request from another site");
    if (r == ROUTE_SOCKET && !origin)
        return refuse(d, 403, "refused: WebSocket upgrade without an Origin");
    int rc = session(a, p, req, now_ms, d);
    return rc != LIVE_OK ? rc : view_or_socket(p, req, r == ROUTE_SOCKET, d);
}
