/*
 * live.h — the live view (issue 15): a person takes over the agent's
 * browser through a page cdpgate serves itself, on a headless machine
 * too, reached by a link delivered out of band (never through the model).
 *
 * Layers, bottom up (each I/O-free unless it says otherwise):
 *   1. live_http_parse        the server side of HTTP/1.1: one request head
 *                             (request line, headers) with explicit size
 *                             limits and an error naming what is wrong; no
 *                             request body is accepted.
 *   2. live_ws_upgrade        the WebSocket upgrade of such a request
 *                             (RFC 6455 section 4.2: Sec-WebSocket-Accept
 *                             from ws/'s SHA-1), and the server's framing
 *                             through ws/ (live_ws_frame: unmasked frames
 *                             out; ws_decoder_init(d, max, true) reads the
 *                             masked frames in).
 *   3. live_access            who may see the view: a one-time token traded
 *                             for a session cookie, the Host and Origin of
 *                             every request (see below); random bytes come
 *                             from the OS (base/).
 *   4. live_server            the socket loop: loopback listener,
 *                             connections, the viewer page (viewer.c), the
 *                             viewer's WebSocket, frames with ack pacing.
 *
 * Nothing here logs, prints or returns the token or a cookie value except
 * where a function's comment says it hands one to its caller (the link for
 * the person, the Set-Cookie header for the browser). Error messages never
 * quote a header value that could carry one (Cookie, the request target).
 *
 * Errors: functions return 0 or a negative LIVE_E* code and fill an
 * optional live_err (NULL accepted) with a message naming what failed.
 * No function keeps global state.
 */
#ifndef CDPGATE_LIVE_H
#define CDPGATE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    LIVE_OK = 0,
    LIVE_EAGAIN = -1,       /* need more input (the request head is incomplete) */
    LIVE_EBADREQ = -2,      /* malformed request: answer 400 and close */
    LIVE_ETOOBIG = -3,      /* a size limit was passed: answer 431/414 and close */
    LIVE_EUNSUPPORTED = -4, /* well-formed but not served (a body, HTTP/1.0) */
    LIVE_EUPGRADE = -5,     /* not a valid WebSocket upgrade */
    LIVE_EDENIED = -6,      /* access control refused the request */
    LIVE_ENOMEM = -7,
    LIVE_ERANDOM = -8,      /* the OS gave no random bytes */
    LIVE_EIO = -9,          /* a socket call failed */
};
const char *live_strerror(int code);

typedef struct {
    int code;               /* LIVE_E* */
    char msg[160];          /* what failed and why; never a token or cookie value */
    size_t offset;          /* byte offset in the input a parse error refers to */
} live_err;

/* ---- HTTP/1.1 request head (I/O-free) ---- */

#define LIVE_HTTP_HEAD_MAX 8192     /* request line + headers + the empty line */
#define LIVE_HTTP_TARGET_MAX 2048   /* the request target (path and query) */
#define LIVE_HTTP_HEADERS_MAX 32    /* header fields */
#define LIVE_HTTP_METHOD_MAX 16

typedef struct {
    const char *name;       /* lower-cased, NUL-terminated (in the request's copy) */
    const char *value;      /* without surrounding blanks, NUL-terminated */
} live_http_header;

/* A parsed request head. The strings point into the request's own copy of
 * the head (head[]), so the input buffer may be reused at once. */
typedef struct {
    const char *method;     /* "GET", ... (case-sensitive, as sent) */
    const char *target;     /* origin-form: starts with '/' */
    live_http_header headers[LIVE_HTTP_HEADERS_MAX];
    size_t nheaders;
    size_t head_len;        /* bytes of the input the head took, the empty line included */
    char head[LIVE_HTTP_HEAD_MAX + 1];
} live_http_request;

/* Parse one request head from buf[0..len). Returns
 *   LIVE_OK       req filled; req->head_len bytes were the head (bytes after
 *                 it belong to the next request or, after an upgrade, to
 *                 the WebSocket);
 *   LIVE_EAGAIN   the head is incomplete and nothing seen so far is wrong;
 *   LIVE_ETOOBIG  the head, the target, a method or the header count passed
 *                 its limit (LIVE_HTTP_*);
 *   LIVE_EBADREQ  malformed: the request line (method, origin-form target,
 *                 "HTTP/1.1"), a bare CR or LF, a NUL or control byte, a
 *                 header line that is folded or has blanks before its
 *                 colon, a repeated header among those read once (Host,
 *                 Origin, Cookie, Content-Length, Transfer-Encoding,
 *                 Upgrade, Connection, Sec-WebSocket-Key/-Version/-Protocol,
 *                 Sec-Fetch-Site), no Host;
 *   LIVE_EUNSUPPORTED  HTTP/1.0 or 2, or a request with a body
 *                 (Transfer-Encoding, or a Content-Length other than 0):
 *                 nothing here reads a body, so none is accepted (no
 *                 request smuggling through a body left unread).
 * err->offset is where the fault is. */
int live_http_parse(const char *buf, size_t len, live_http_request *req, live_err *err);

/* The value of header name (lower-case), or NULL. Borrowed from req. */
const char *live_http_get(const live_http_request *req, const char *name);

/* True when the comma-separated list value holds token (case-insensitive):
 * "keep-alive, Upgrade" holds "upgrade". */
bool live_http_has_token(const char *value, const char *token);

/* ---- WebSocket, server side ---- */

/* Check that req is a WebSocket upgrade a server may accept (GET, HTTP/1.1,
 * Upgrade: websocket, Connection: upgrade, Sec-WebSocket-Version: 13, a
 * Sec-WebSocket-Key of 16 bytes in base64) and compute Sec-WebSocket-Accept
 * into accept (28 characters and a NUL). 0 or LIVE_EUPGRADE (err names the
 * header). Access control is live_access_judge's, not this. */
int live_ws_upgrade(const live_http_request *req, char accept[29], live_err *err);

/* The 101 response for an accepted upgrade, with Sec-WebSocket-Protocol:
 * protocol when not NULL (one the client offered): its length, or -1 when
 * cap is too small. */
int live_ws_response(char *out, size_t cap, const char accept[29], const char *protocol);

/* A server frame's header (unmasked, as RFC 6455 wants from a server) for
 * a whole message of len bytes: its length (2..10). */
size_t live_ws_frame(uint8_t out[14], int opcode, uint64_t len);

/* ---- access control (I/O-free but for the random bytes) ---- */

/*
 * Who may see the view. The server binds loopback by default; the person
 * gets a link holding a one-time token (32 random bytes from the OS, in
 * the link's path, never after a '?': a link cut at the '?' must not half
 * work). Each link lives under a path of its own, /v/ID/ (ID: 32 more
 * random bytes), and everything of the view is under it: the trade
 * (GET /v/ID/live/TOKEN), the page (GET /v/ID/) and its WebSocket
 * (GET /v/ID/ws). Trading the token once, before it expires, gives the
 * browser a session cookie (32 more random bytes; Path=/v/ID/, HttpOnly,
 * SameSite=Strict): cookies ignore ports, so a host-wide cookie would go
 * to every other port of 127.0.0.1 too (red team R4-3); scoped to the
 * unguessable path, it goes only to this view's requests, and a cookie of
 * the same name another port sets for the host is ignored (several are
 * tolerated, only the session lets a request in). The page and the socket
 * need the cookie; the socket also needs the nonce of a page served to
 * that session (a fresh one each time the page is served, in the page's
 * script, never in a cookie), offered in Sec-WebSocket-Protocol next to
 * LIVE_WS_PROTOCOL, and used up by the socket it opens: a replayed Cookie
 * header alone never opens a socket. Every request must name this server
 * in Host (no DNS rebinding: a name that resolves to loopback is not
 * enough) and, when it has an Origin, be from this server's origin; the
 * WebSocket upgrade must carry that Origin (no cross-site WebSocket), and
 * a request a browser says came from another site (Sec-Fetch-Site) is
 * refused but for the link itself (the person may click it in a web
 * mail). Comparisons of the path, token, cookie and nonce take the same
 * time whatever they hold.
 *
 * Read-only watchers: the host may issue up to LIVE_WATCHERS_MAX watch
 * links (live_access_watch_link), each a path, one-time token and session
 * of its own, with the control link's lifetime. A watcher sees the page
 * and the frames; the server refuses (and audits) any input from its
 * socket.
 */
typedef struct live_access live_access;

#define LIVE_TOKEN_TTL_MS (10 * 60 * 1000)  /* the link's default lifetime */
#define LIVE_COOKIE_NAME "cdpgate_live"
#define LIVE_WS_PROTOCOL "cdpgate-live"         /* the subprotocol the socket offers and gets */
#define LIVE_WATCHERS_MAX 4                 /* watch links per live view */

typedef enum {
    LIVE_ROLE_NONE = 0,
    LIVE_ROLE_CONTROL,      /* the person's link: sees and controls */
    LIVE_ROLE_WATCH,        /* a watch link: sees, never controls */
} live_role;

typedef struct {
    const char *host;       /* the bound address as a browser writes it in a
                               URL: "127.0.0.1" (NULL), "[::1]", a name */
    int port;               /* the bound port, 1..65535 */
    int64_t token_ttl_ms;   /* the token can be traded this long; 0 = LIVE_TOKEN_TTL_MS */
    int64_t session_ttl_ms; /* the cookie works this long after the trade; 0 = until
                               live_access_end */
} live_access_opts;

/* New access state at time now_ms (the caller's clock, base_now_ms in a
 * server), with a fresh token. NULL with err filled (bad options, no
 * random bytes, no memory). Free with live_access_free (it wipes). */
live_access *live_access_new(const live_access_opts *o, int64_t now_ms, live_err *err);
void live_access_free(live_access *a);

/* The link for the person, "http://HOST:PORT/v/ID/live/TOKEN": the one function
 * that hands out the token, for the out-of-band channel only (never a log,
 * the audit or a tool result). Its length, or -1 when cap is too small. */
int live_access_link(const live_access *a, char *out, size_t cap);

/* Issue a new read-only watch link at time now_ms ("http://HOST:PORT/v/WID/
 * live/WTOKEN": a path and token of its own, the control link's lifetime,
 * one trade),
 * into out (cap >= 300): like live_access_link, for the out-of-band channel
 * only. Its length, or LIVE_ETOOBIG (LIVE_WATCHERS_MAX links issued, or cap
 * too small), LIVE_EDENIED (ended), LIVE_ERANDOM; err says which. */
int live_access_watch_link(live_access *a, int64_t now_ms, char *out, size_t cap,
                           live_err *err);

/* Who can see and control, and when links expire (for the page: no value
 * in it). Seconds are rounded up; -1 means "no deadline". */
typedef struct {
    bool ended;
    bool control_opened;        /* the control link was traded */
    int64_t control_expires_s;  /* not opened: the link's seconds left (0: expired);
                                   opened: the session's, -1 until the hand-back */
    int watch_links;            /* watch links issued */
    int watch_opened;           /* of which traded */
    int64_t watch_expires_s;    /* the soonest an unopened watch link expires, -1 none */
    int64_t session_ttl_s;      /* a session's lifetime once opened, -1 until hand-back */
} live_access_state;
void live_access_state_get(const live_access *a, int64_t now_ms, live_access_state *st);

/* End the session (control handed back): the cookie stops working, the
 * token too if it was never traded. */
void live_access_end(live_access *a);

typedef enum {
    LIVE_REQ_REFUSED = 0,   /* answer status; reason says why */
    LIVE_REQ_REDEEM,        /* the token was traded: answer with set_cookie and send
                               the browser on to the page, "/v/ID/" */
    LIVE_REQ_VIEW,          /* the viewer page: it carries page_nonce */
    LIVE_REQ_SOCKET,        /* the viewer's WebSocket (its page's nonce used up): check
                               it with live_ws_upgrade, answer with LIVE_WS_PROTOCOL */
} live_req_kind;

typedef struct {
    live_req_kind kind;
    live_role role;         /* a trade, a page or a socket: whose (control or watch) */
    int watcher;            /* LIVE_ROLE_WATCH: which watch link (0..); else -1 */
    int status;             /* the HTTP status to answer: 200, 403, 404, 405 */
    const char *reason;     /* static text for the audit: what was decided and why
                               ("token reused", "foreign Origin", ...); never a value */
    char set_cookie[192];   /* LIVE_REQ_REDEEM: the Set-Cookie header's value. It holds
                               the session: send it to the browser, nowhere else */
    char page_nonce[48];    /* LIVE_REQ_VIEW: the nonce the page's socket must offer;
                               into the page only, never a log or a cookie */
    char base[56];          /* VIEW and SOCKET: the link's path, "/v/ID/" (for the
                               page's Content-Security-Policy) */
} live_decision;

/* Decide a parsed request at time now_ms (a trade uses up the token, a
 * page draws a new nonce for its socket, a socket uses that nonce up).
 * Always fills d; returns 0 when d lets the request in, LIVE_EDENIED when
 * it refuses it. */
int live_access_judge(live_access *a, const live_http_request *req, int64_t now_ms,
                      live_decision *d);

/* ---- the person's input (I/O-free) ---- */

/* One CDP command for one viewer message. */
typedef struct {
    const char *method;     /* static: "Input.dispatchKeyEvent", "Input.dispatchMouseEvent",
                               "Input.insertText", "Input.imeSetComposition" */
    char *params;           /* new JSON object; holds what the person typed: send it, never
                               log it; live_input_free wipes and frees it */
    size_t len;
    char tab[65];           /* {"t":"tab"} (return 2): the tab the person chose, its
                               target id; no command */
} live_input_cmd;

/* Translate a viewer message (live/server.c hands them to the host) into
 * the CDP command that performs it on the tab: 1 and *cmd filled; 0 for
 * {"t":"handback"} (*handback true, no command); 2 for {"t":"tab","id"}
 * (the person chose that tab: cmd->tab holds its id, no command; the host
 * switches to it if it is the session's); LIVE_EBADREQ for a
 * message that is not valid input (err says which kind, never a value),
 * LIVE_ENOMEM. Keys: key, code and modifiers as the viewer saw them, the
 * virtual key code from the physical key, text for a key that types one
 * character (see input.c). */
int live_input_translate(const char *msg, size_t len, live_input_cmd *cmd, bool *handback,
                         live_err *err);
void live_input_free(live_input_cmd *cmd);

/* ---- the server (sockets; the one place live/ does I/O) ---- */

/*
 * One live view: a listening socket on loopback, the access state, at most
 * LIVE_CONNS_MAX connections, one control viewer (the WebSocket of the control
 * link's session; while it is open a second control socket is refused and
 * audited, never silently put in its place) and read-only watchers' sockets
 * (watch links' sessions: they get the frames and the state messages; any
 * other message from them is refused and audited). Single-threaded: the host
 * calls live_server_pump from its own loop (or live_server_fds to poll with
 * its other descriptors). HTTP answers close their connection; writes are
 * bounded by a deadline, and a connection that cannot take its answer is
 * closed. Frames: the host offers each new JPEG with live_server_frame; the
 * server keeps only the latest and sends it to each socket that has not had
 * it while fewer than LIVE_FRAME_WINDOW frames sent to that socket are
 * unacknowledged (acknowledgement pacing with a small window: one frame can
 * travel while the viewer shows the other, so the round trip does not cap
 * the frame rate; a slow viewer gets fewer frames, never a queue, and never
 * slows another). Each socket also gets
 * {"t":"access",...} when it opens and when sockets or links change
 * (docs/takeover.md, "Messages to the viewer"). Every decision on a request
 * goes to the audit callback; the token, the cookie, frames and what the
 * person sends are never given to it.
 */
typedef struct live_server live_server;

#define LIVE_CONNS_MAX 8
#define LIVE_FRAME_WINDOW 2     /* frames a socket may have unacknowledged */

typedef struct {
    const char *bind;       /* an IPv4 or IPv6 literal: "127.0.0.1" (NULL) or "::1";
                               any other address only with insecure_bind (there is
                               no TLS yet) */
    bool insecure_bind;     /* allow bind beyond loopback, in clear text: the host
                               must print live_server_warning to the person */
    const char *public_host;/* the host the link names and Host must carry: NULL is
                               the bound address; required for 0.0.0.0 and :: */
    int port;               /* 0: a free port (live_server_port says which) */
    int64_t token_ttl_ms;   /* live_access_opts' */
    int64_t session_ttl_ms;
    /* Each decision: allowed or not, and why (static text, no value). */
    void (*audit)(void *ud, bool allowed, const char *what);
    /* A text message of the viewer other than an acknowledgement: the
     * person's input or hand-back, as JSON (borrowed for the call; never
     * log it: it holds what the person typed). */
    void (*message)(void *ud, const char *json, size_t len);
    void *ud;
} live_server_opts;

/* Whether addr is an address literal the server counts as loopback
 * (127.0.0.1 or ::1, however written): where it binds without
 * insecure_bind. */
bool live_addr_loopback(const char *addr);
/* Bind and listen. NULL with err filled. */
live_server *live_server_new(const live_server_opts *o, live_err *err);
/* Close every connection, end the access (the link and the cookie stop
 * working) and free. NULL is a no-op. */
void live_server_free(live_server *s);
int live_server_port(const live_server *s);
/* NULL on loopback; bound beyond it (insecure_bind), the warning (static
 * text) the host must show the person before it sends the link. The
 * server also audits it when it starts. */
const char *live_server_warning(const live_server *s);
/* The person's link (live_access_link). */
int live_server_link(const live_server *s, char *out, size_t cap);
/* Wait up to timeout_ms (0: do not wait) for something to do, then do it:
 * accept, read and answer requests, read the viewer's messages (callbacks
 * run here), send the latest frame when it is due. 0, or LIVE_EIO-like
 * errors of the listening socket (connection errors only close it). */
int live_server_pump(live_server *s, int timeout_ms);
/* The descriptors to poll for input (POLLIN) with the host's own: the
 * listening socket and each connection's, at most LIVE_SERVER_FDS; their
 * count (as many as fit in cap). When one is ready the host calls
 * live_server_pump(s, 0): the person's input and acknowledgements are
 * then handled at once, not at the host's next timeout. */
int live_server_fds(const live_server *s, int *fds, int cap);
#define LIVE_SERVER_FDS (LIVE_CONNS_MAX + 1)
/* Offer a frame (copied; replaces one not yet sent). 0 or LIVE_ENOMEM. */
int live_server_frame(live_server *s, const uint8_t *jpeg, size_t len);
/* Send a text message now to every socket, the control viewer's and the
 * watchers' (the state messages below). 0, or LIVE_EDENIED when none is
 * connected. */
int live_server_text(live_server *s, const char *json, size_t len);
/* ---- the session's state, as the viewer shows it ----
 *
 * The host tells the viewer where the tab is, who holds control and which
 * tabs there are; the server sends each message to every socket at once
 * and keeps the latest of each kind, so a socket that opens later (a
 * watcher, a reload) gets them right after its access message. Messages
 * (docs/takeover.md, "Messages to the viewer"):
 *   {"t":"url","url","origin"}
 *   {"t":"control","who":"human|agent","epoch"}
 *   {"t":"tabs","tabs":[{"id","title","origin","url","current"}],"more"?}
 * Titles and URLs are page data: written escaped, shown as text, cut at
 * LIVE_STATE_TEXT_MAX (titles LIVE_STATE_TITLE_MAX) bytes on a character
 * boundary, LIVE_TABS_MAX tabs ("more" counts the rest). The person's
 * click on a tab comes back as {"t":"tab","id"} (live_input_translate
 * returns 2). Each returns 0 or LIVE_ENOMEM. */
#define LIVE_STATE_TEXT_MAX 2048
#define LIVE_STATE_TITLE_MAX 200
#define LIVE_TABS_MAX 32

typedef struct {
    const char *id;         /* the tab's id (what {"t":"tab"} sends back: "t2") */
    const char *title;
    const char *url;        /* NULL: none sent ("") */
    bool current;           /* the tab the view shows */
    const char *origin;     /* shown next to the title; NULL: "" */
} live_tab;

int live_server_send_url(live_server *s, const char *url, const char *origin);
int live_server_send_control(live_server *s, bool human, int64_t epoch);
int live_server_send_tabs(live_server *s, const live_tab *tabs, size_t n);

/* True while the control viewer is connected. */
bool live_server_viewing(const live_server *s);
/* A new read-only watch link (live_access_watch_link), audited as issued
 * (never the link); the sockets' access message is resent. */
int live_server_watch_link(live_server *s, char *out, size_t cap, live_err *err);
/* How many watchers' sockets are open. */
int live_server_watchers(const live_server *s);

#endif
