/*
 * cdp.h — the Chrome DevTools Protocol connection, browser discovery,
 * launch and attach, and page targets.
 *
 * cdp_conn: one connection over a ws_transport (pipe or WebSocket). It owns
 * the transport, an id counter and a table of pending calls (id -> method,
 * session, deadline, reply). Responses are matched to ids; events are
 * dispatched to listeners and kept in a small bounded ring so that a waiter
 * that starts after an event arrived still sees it (cdp_event_seq +
 * cdp_wait_event). Sessions are flattened (Target.attachToTarget/
 * setAutoAttach with flatten:true): messages carry a sessionId, the browser
 * is the empty session. A session is known (Target.attachedToTarget) before
 * any message for it is dispatched; on detach or target crash every call
 * pending on it fails with a reason naming the method; on disconnect (EOF,
 * I/O error, malformed message from the browser) every pending call fails
 * and the connection is dead: calls fail at once, never hang.
 *
 * Secrets. Cookie and localStorage values travel through the connection
 * (Storage.setCookies, Storage.getCookies, scripts that read or write
 * localStorage); calls made with cdp_send_secret/cdp_call_secret leave
 * nothing of them in the driver's memory once their reply is freed (see
 * there). Network.* events (request and response headers with Cookie and
 * Set-Cookie, post data, the cookies of *ExtraInfo) and Fetch.* events
 * (intercepted requests with their headers) are treated the same way:
 * their documents are zeroed when freed, and Network.* events are never
 * kept in the ring (listeners see them; cdp_wait_event cannot). Every
 * outgoing message is zeroed in the connection's writer once it is sent.
 *
 * Single-threaded: nothing happens unless the caller is inside cdp_wait,
 * cdp_call, cdp_wait_event or cdp_pump. Event listeners run inside those
 * calls; a listener may call cdp_send but must not wait.
 *
 * cdp_browser: a launched browser (pipe by default, port on request) or an
 * attached one (--connect ws://... or http://host:port). A launched browser
 * never outlives the driver: it runs in its own process group, gets
 * PR_SET_PDEATHSIG on Linux, and a small watchdog process kills the group
 * and removes the temporary profile if the driver dies (even by kill -9).
 *
 * cdp_page: one page target attached with a flattened session: open (a new
 * target, or an existing page where Target.createTarget is refused, as in
 * Electron apps), navigate and wait for load, evaluate.
 *
 * Errors: functions return 0 or a negative CDP_E* code and fill an optional
 * cdp_err with a message naming what failed.
 */
#ifndef CDPGATE_CDP_H
#define CDPGATE_CDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "json/json.h"
#include "ws/ws.h"

enum {
    CDP_OK = 0,
    CDP_ENOMEM = -1,
    CDP_ETIMEOUT = -2,      /* the deadline passed; the outcome is unknown */
    CDP_EPROTOCOL = -3,     /* the browser answered with an error object */
    CDP_EDISCONNECTED = -4, /* transport closed or failed; connection is dead */
    CDP_EDETACHED = -5,     /* the session's target detached, crashed or closed */
    CDP_EBADMSG = -6,       /* the browser sent something that is not CDP */
    CDP_ELIMIT = -7,        /* too many pending calls, message too large */
    CDP_ELAUNCH = -8,       /* the browser could not be started */
    CDP_ENOTFOUND = -9,     /* no browser executable found */
    CDP_ECONNECT = -10,     /* --connect endpoint wrong or unreachable */
    CDP_EINVAL = -11,       /* bad argument */
    CDP_EEVAL = -12,        /* the evaluated script threw */
    CDP_ENAVIGATE = -13,    /* navigation failed (net error, aborted) */
    CDP_EHELD = -14,        /* a hold (cdp_hold_add) ended the wait: the target
                               will not answer it for now (its late reply is
                               dropped) */
};
const char *cdp_strerror(int code);

typedef struct {
    int code;
    char msg[512];
    int protocol_code;      /* the browser's error code for CDP_EPROTOCOL */
} cdp_err;

/* ---- connection ---- */

typedef struct cdp_conn cdp_conn;

typedef struct {
    size_t max_pending;         /* outstanding calls; 0 = 4096 */
    size_t event_ring;          /* events kept for late waiters; 0 = 256 */
    size_t event_ring_bytes;    /* and their bytes; 0 = 4 MiB */
    int default_timeout_ms;     /* for cdp_call with timeout 0; 0 = 30000 */
} cdp_opts;

/* Takes ownership of t (freed with the connection, also on failure). */
cdp_conn *cdp_conn_new(ws_transport *t, const cdp_opts *opts);
void cdp_conn_free(cdp_conn *c);
/* True once the connection failed; cdp_conn_error says why. */
bool cdp_conn_dead(const cdp_conn *c);
const char *cdp_conn_error(const cdp_conn *c);
const char *cdp_conn_transport(const cdp_conn *c);   /* "pipe" or "websocket" */
/* The descriptor to poll for the browser's messages (a host's idle loop
 * polls it and calls cdp_pump(c, 0) when readable, so events are handled
 * while no call runs); -1 once the connection is dead. */
int cdp_conn_fd(const cdp_conn *c);
/* How many users (agents) share c: add delta (+1 when one starts, -1 when
 * it ends, 0 to ask) and return the count. */
int cdp_conn_share(cdp_conn *c, int delta);

/* A reply: the whole message document and its "result" member (borrowed
 * from doc). Free with cdp_reply_free; zero-initialised replies are fine. */
typedef struct {
    json_doc *doc;
    const json_val *result;
} cdp_reply;
void cdp_reply_free(cdp_reply *r);

/* Send a command. session NULL or "" for the browser; params a serialised
 * JSON object or NULL. *id gets the message id. Does not wait. */
int cdp_send(cdp_conn *c, const char *session, const char *method,
             const char *params, uint64_t *id, cdp_err *err);
/* Wait for the reply to id. timeout_ms 0 = the default, -1 = no deadline.
 * On CDP_EPROTOCOL err->msg is "Method: message (code)". */
int cdp_wait(cdp_conn *c, uint64_t id, int timeout_ms, cdp_reply *out, cdp_err *err);
/* True once the call id has its reply or error (cdp_wait will not block),
 * or when no such call is pending. Does not read anything. */
bool cdp_reply_ready(const cdp_conn *c, uint64_t id);
/* Id of the last command cdp_send numbered on c (sent, or failed while
 * sending), 0 before any. Lets a cache tell whether anything was asked of
 * the browser since it was filled. */
uint64_t cdp_last_id(const cdp_conn *c);
/* Stop waiting for id: its reply is dropped whenever it comes. */
void cdp_forget(cdp_conn *c, uint64_t id);
/* Round trips to the browser so far: a command sent while none is in
 * flight (sent, not answered, not forgotten) starts one; commands sent
 * while one is (pipelined) join it; a command forgotten before its answer
 * (nobody waits for it) starts none. What an action costs in latency,
 * beside cdp_last_id's count of commands. */
uint64_t cdp_round_trips(const cdp_conn *c);
/* cdp_send + cdp_wait. out may be NULL when the result is not needed. */
int cdp_call(cdp_conn *c, const char *session, const char *method,
             const char *params, int timeout_ms, cdp_reply *out, cdp_err *err);
/* For commands whose params or reply carry secrets (cookie or localStorage
 * values): as cdp_send and cdp_call, and besides
 *   - the reply's bytes are zeroed in the transport's buffers as soon as
 *     they are parsed, and its document (out->doc) is zeroed when freed
 *     (cdp_reply_free), also when nobody takes it;
 *   - a call that times out or is forgotten keeps its slot until its reply
 *     comes, so that reply is zeroed too rather than dropped as unknown.
 * The caller zeroes its own copy of params. */
int cdp_send_secret(cdp_conn *c, const char *session, const char *method,
                    const char *params, uint64_t *id, cdp_err *err);
int cdp_call_secret(cdp_conn *c, const char *session, const char *method,
                    const char *params, int timeout_ms, cdp_reply *out, cdp_err *err);

/* Events. Each event gets a sequence number (1, 2, ...). */
typedef void (*cdp_event_fn)(void *ud, cdp_conn *c, const char *session,
                             const char *method, const json_val *params);
/* Inside a listener: take the event being dispatched (later listeners see
 * cdp_event_claimed true), for events exactly one listener must answer. */
void cdp_event_claim(cdp_conn *c);
bool cdp_event_claimed(const cdp_conn *c);
/* Inside a listener: the event is used up: it is not kept in the ring for
 * late waiters (cdp_wait_event cannot see it). For big events only their
 * listener wants, e.g. the live view's screencast frames (~40-60 KB each,
 * at 25 a second they would fill the ring's bytes: 4 MiB by default). */
void cdp_event_consume(cdp_conn *c);
/* Whether (fn, ud) is the last registered listener with function fn: among
 * several users of one function, the one that sees each event last. */
bool cdp_listener_last(const cdp_conn *c, cdp_event_fn fn, void *ud);
/* Add/remove a listener (at most 16). Returns 0 or CDP_ELIMIT. A listener
 * must not keep anything of a Network.* or Fetch.* event's params that may
 * hold a secret (headers, cookies, post data). */
int cdp_listen(cdp_conn *c, cdp_event_fn fn, void *ud);
void cdp_unlisten(cdp_conn *c, cdp_event_fn fn, void *ud);
/* Holds: a host that knows a target cannot answer for now says so. A
 * renderer that shows a JavaScript dialog (alert, confirm, prompt,
 * beforeunload) answers nothing that needs its main thread until the
 * dialog is answered: a snapshot waiting for Runtime.evaluate would wait
 * its whole timeout, call after call. cdp_wait asks each hold before every
 * wait for a reply to a call on a session: a hold that returns a reason
 * (static text, or text that lives as long as the call's wait) ends the
 * wait at once with CDP_EHELD, "Method: reason"; the call's late reply is
 * dropped (zeroed for a secret call). A hold runs inside cdp_wait: it must
 * not use the connection. At most 16. */
typedef const char *(*cdp_hold_fn)(void *ud, const char *session, const char *method);
int cdp_hold_add(cdp_conn *c, cdp_hold_fn fn, void *ud);
void cdp_hold_remove(cdp_conn *c, cdp_hold_fn fn, void *ud);
/* Sequence number of the last event received. */
uint64_t cdp_event_seq(const cdp_conn *c);
/* Predicate for cdp_wait_event; NULL matches any params. */
typedef bool (*cdp_match_fn)(void *ud, const json_val *params);
/* Wait for an event with seq > since, the given method and session (NULL =
 * any session), for which match returns true. Events already in the ring are
 * considered first (never Network.* events: they are not kept). On success
 * *out holds the event message (params in out->result) and *seq_out (if not
 * NULL) its sequence number. */
int cdp_wait_event(cdp_conn *c, uint64_t since, const char *session, const char *method,
                   cdp_match_fn match, void *ud, int timeout_ms,
                   cdp_reply *out, uint64_t *seq_out, cdp_err *err);
/* Zero and drop the events kept for late waiters (the ring) of session
 * (NULL: every session) whose method starts with prefix, e.g. "Fetch." once
 * a page session's interception is over: its paused requests carry the
 * Cookie headers of a restored session and must not linger until the ring
 * evicts them. Returns how many were dropped. */
size_t cdp_events_discard(cdp_conn *c, const char *session, const char *prefix);
/* Read and dispatch incoming messages for up to timeout_ms (0 = only what is
 * already readable). Returns 0, or the error that killed the connection. */
int cdp_pump(cdp_conn *c, int timeout_ms, cdp_err *err);

/* Wait up to timeout_ms for one message and dispatch it. Returns 0 when one
 * was handled, CDP_ETIMEOUT when none came, or the error that killed the
 * connection. For loops that wait for "a reply or an event". */
int cdp_pump_one(cdp_conn *c, int timeout_ms, cdp_err *err);

/* Process one message as if the transport had delivered it (fuzzing, tests,
 * replay). Returns 0, or the error that killed the connection. */
int cdp_conn_inject(cdp_conn *c, const char *msg, size_t len, cdp_err *err);

/* Targets known through Target.attachedToTarget (flattened sessions). */
typedef struct {
    const char *session_id;
    const char *target_id;
    const char *type;           /* "page", "iframe", "worker", ... */
    const char *url;
    const char *context_id;     /* browserContextId or "" */
    const char *parent_session; /* "" for sessions of the browser */
} cdp_target;
size_t cdp_target_count(const cdp_conn *c);
/* Borrowed; valid until the next pump. */
const cdp_target *cdp_target_at(const cdp_conn *c, size_t i);
const cdp_target *cdp_target_by_session(const cdp_conn *c, const char *session);

/* ---- browsers ---- */

typedef struct cdp_browser cdp_browser;

typedef struct {
    const char *browser;        /* executable; NULL = discovery */
    bool use_port;              /* --remote-debugging-port=0 instead of pipe */
    bool headed;                /* no --headless (needs a display) */
    const char *user_data_dir;  /* NULL = a fresh temporary profile */
    const char *const *args;    /* extra browser arguments, NULL-terminated */
    int timeout_ms;             /* launch deadline; 0 = 20000 */
    bool many_contexts;         /* a new browser context per task (a sweep's
                                   shared browser): no spare renderer */
    cdp_opts conn;
} cdp_launch_opts;

/* Find the browser: explicit path, else $CDPGATE_BROWSER, else the usual
 * names on $PATH, else the usual install paths. out gets the path. */
int cdp_browser_find(const char *explicit_path, char *out, size_t cap, cdp_err *err);
cdp_browser *cdp_browser_launch(const cdp_launch_opts *o, cdp_err *err);
/* Attach to ws://host:port/devtools/browser/ID or http://host:port (resolved
 * through /json/version). */
cdp_browser *cdp_browser_connect(const char *url, const cdp_opts *o, int timeout_ms,
                                 cdp_err *err);
/* Close: a launched browser is asked to quit, then killed after a grace
 * period, reaped, and its temporary profile removed. An attached browser is
 * only disconnected. NULL is a no-op. */
void cdp_browser_free(cdp_browser *b);
cdp_conn *cdp_browser_conn(cdp_browser *b);
/* Browser.getVersion fields, filled once the connection is up. */
const char *cdp_browser_product(const cdp_browser *b);
const char *cdp_browser_ws_url(const cdp_browser *b);  /* "" over the pipe */
pid_t cdp_browser_pid(const cdp_browser *b);           /* 0 when attached */
const char *cdp_browser_profile_dir(const cdp_browser *b); /* "" when attached */
/* If a launched browser died: a description ("exited with status 1",
 * "killed by signal 9") plus the tail of its stderr; else "". */
const char *cdp_browser_death(cdp_browser *b);

/* A browser reached over a descriptor another process of ours routes to
 * (cdp_mux below): NUL-framed messages both ways on fd (a socketpair's end;
 * taken, also on failure). Browser.getVersion is asked within timeout_ms.
 * Freeing it only disconnects. */
cdp_browser *cdp_browser_adopt(int fd, const cdp_opts *o, int timeout_ms, cdp_err *err);

/* ---- one browser shared by several processes: the router ----
 *
 * cdp_mux routes one browser connection (the router's, over the pipe) to
 * clients over socketpairs (cdp_browser_adopt at the other end), so that
 * several processes of one sweep drive one browser with no DevTools port.
 * Each client gets a browser session of its own (Target.attachToBrowserTarget)
 * and owns what it creates: browser contexts, the targets in them, the
 * sessions attached to those, their frames and downloads. Command ids are
 * rewritten per client; events go to the owner only (by session, by the
 * target's browserContextId, by frame id or download guid; an event of
 * nobody's is dropped). A client's command is refused (an error reply, the
 * browser never sees it) when it names a session, target, context or
 * download that is not its own, or is a browser-wide command outside a short
 * list (Browser.close, Target.setAutoAttach on the browser,
 * Target.attachToBrowserTarget, Target.exposeDevToolsProtocol, a context
 * not named, ...). A request paused by a client's interception (Fetch on
 * its browser session sees every context's requests) goes to that client
 * when the frame is its own (frames and every target of its contexts, from
 * the router's own target discovery: a worker's requests name its target);
 * another's is continued for that client (the owner's own interception
 * judges it); one of unknown owner is held until the owner is known, and
 * failed when it is not within 10 s (never given to a non-owner). When a client
 * ends, its contexts are disposed (their pages close) and its session is
 * detached. Single-threaded: the host calls cdp_mux_run in its loop. */
typedef struct cdp_mux cdp_mux;
#define CDP_MUX_MAX 16
/* c: the browser's connection (borrowed; listened to until freed). */
cdp_mux *cdp_mux_new(cdp_conn *c, cdp_err *err);
/* A client at the far end of fd (taken, also on failure): its slot
 * (0..CDP_MUX_MAX-1) or a negative CDP_E* code. */
int cdp_mux_add(cdp_mux *m, int fd, cdp_err *err);
/* The client of slot is gone (its process ended): its contexts disposed,
 * its session detached, its descriptor closed. */
void cdp_mux_drop(cdp_mux *m, int slot);
/* Route for up to timeout_ms: what the browser and the clients sent. A
 * client whose socket ended or failed is dropped. Returns 0, or the error
 * that killed the browser's connection (every client is then dropped). */
int cdp_mux_run(cdp_mux *m, int timeout_ms, cdp_err *err);
/* Commands refused so far. */
size_t cdp_mux_refused(const cdp_mux *m);
void cdp_mux_free(cdp_mux *m);

/* ---- pages ---- */

typedef struct cdp_page cdp_page;

/* Open a page: Target.createTarget (about:blank) and attach with a flattened
 * session; where createTarget is refused (Electron) adopt the first existing
 * page target instead. Enables Page and lifecycle events. */
cdp_page *cdp_page_open(cdp_browser *b, int timeout_ms, cdp_err *err);
/* Close the target if this driver created it; always detach. */
void cdp_page_free(cdp_page *p);
const char *cdp_page_session(const cdp_page *p);
const char *cdp_page_target(const cdp_page *p);
bool cdp_page_adopted(const cdp_page *p);   /* an existing target was used */
/* Navigate and wait for the load event of the new document. A net error or
 * an aborted navigation is CDP_ENAVIGATE with the browser's reason. */
int cdp_page_navigate(cdp_page *p, const char *url, int timeout_ms, cdp_err *err);
/* Evaluate an expression (promises awaited) and return its value serialised
 * as JSON (new string, free with free()). A thrown exception is CDP_EEVAL
 * with the exception text. undefined reads as null; values JSON cannot hold
 * (NaN, Infinity, -0, bigint) as their text in a string. */
int cdp_page_eval(cdp_page *p, const char *expr, int timeout_ms, char **json_out,
                  cdp_err *err);

/* ---- replies too big to hold: a sink ----
 *
 * cdp_send_sink sends a command whose reply is handed to fn as JSON events
 * while it arrives (json_stream events of its "result" value, depth 0 being
 * the result itself), so a reply of many megabytes is never held whole:
 * while a sink call is pending the connection reads messages in pieces and
 * tokenizes them; it keeps a message's first top-level members until "id"
 * or "method" decides what it is; a reply to the sink call goes to fn, every
 * other message is gathered and handled as usual. (Chromium writes "id"
 * first; a reply whose "result" comes before its "id" is gathered whole and
 * then replayed to fn, so any member order works.)
 *
 * fn returns 0 to go on, or a negative CDP_E* code: the call then fails with
 * that code and the rest of the reply is read and dropped. fn must not call
 * into the connection. cdp_wait(id) then reports the outcome: 0 with
 * out->doc and out->result NULL once the whole reply went through fn, or the
 * error ("error" in the reply is CDP_EPROTOCOL as for cdp_call). */
typedef int (*cdp_sink_fn)(void *ud, const json_event *ev);
int cdp_send_sink(cdp_conn *c, const char *session, const char *method,
                  const char *params, cdp_sink_fn fn, void *ud, uint64_t *id,
                  cdp_err *err);
/* Process the next piece of a message as if the transport had delivered it
 * in pieces (end true on the last); the same path as a real receive while a
 * sink call is pending. For tests and replay. Returns 0 or the error that
 * killed the connection. */
int cdp_conn_inject_piece(cdp_conn *c, const char *p, size_t n, bool end, cdp_err *err);

#endif
