/*
 * ws.h — transports for CDP: an RFC 6455 WebSocket client, the
 * --remote-debugging-pipe transport, and the small pieces they need
 * (SHA-1, URL and HTTP/1.1 parsing; base64 and random bytes are base/'s).
 *
 * Layers, bottom up:
 *   1. ws_sha1                pure function.
 *   2. ws_decoder             I/O-free: bytes in, events out. Frame codec plus
 *                             the message layer (fragmentation, interleaved
 *                             control frames, close codes, UTF-8 of text,
 *                             maximum message size). ws_frame_header/ws_mask
 *                             encode.
 *   3. ws_handshake_*, ws_http_parse_response, ws_url_parse
 *                             I/O-free HTTP/1.1 upgrade request building and
 *                             response checking (Sec-WebSocket-Accept verified).
 *   4. ws_client              blocking client over a TCP socket (TLS with
 *                             CDPGATE_OPENSSL) using poll() with deadlines:
 *                             connect, send (masked with a fresh random key per
 *                             frame), receive (answers pings itself), close
 *                             handshake.
 *   5. ws_transport           what cdp/ uses: "send one message, receive one
 *                             message" over either a ws_client or a pipe pair
 *                             (NUL-delimited JSON on two fds).
 *
 * Ownership: every *_new/connect result is freed with the matching *_free.
 * Message bytes handed out by recv functions are borrowed and valid until the
 * next recv call on the same object.
 *
 * Memory hygiene: message bytes are not left behind in freed or reused
 * memory. Buffers are zeroed before they are freed and never grow by
 * realloc; received bytes are zeroed when their buffer space is reused or
 * compacted (so what lingers is at most the latest read), each sent frame
 * is zeroed once written, and ws_transport_wipe zeroes every byte already
 * handed out at once (for a caller that just handled a message carrying
 * secrets). No function keeps global state; sockets
 * are created close-on-exec and writes never raise SIGPIPE.
 */
#ifndef CDPGATE_WS_H
#define CDPGATE_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
    WS_OK = 0,
    WS_EAGAIN = -1,     /* need more input (I/O-free parsers only) */
    WS_ETIMEOUT = -2,   /* deadline passed */
    WS_ECLOSED = -3,    /* peer closed (close frame or EOF at a message boundary) */
    WS_EIO = -4,        /* socket or pipe error, or EOF in the middle of a frame */
    WS_EPROTO = -5,     /* protocol violation by the peer */
    WS_ETOOBIG = -6,    /* message exceeds max_message */
    WS_EHANDSHAKE = -7, /* HTTP upgrade refused or malformed */
    WS_EURL = -8,       /* URL malformed or unsupported scheme */
    WS_ENOMEM = -9,
    WS_ETLS = -10,      /* TLS error, or wss:// without an OpenSSL build */
    WS_EUTF8 = -11,     /* text message is not valid UTF-8 */
    WS_ERESOLVE = -12,  /* host name lookup failed */
    WS_ECONNECT = -13,  /* TCP connect failed (refused, unreachable) */
};
const char *ws_strerror(int code);

/* ---- SHA-1 ---- */

void ws_sha1(const void *data, size_t len, uint8_t out[20]);

/* ---- frame codec and message layer (I/O-free) ---- */

enum {
    WS_OP_CONT = 0x0, WS_OP_TEXT = 0x1, WS_OP_BINARY = 0x2,
    WS_OP_CLOSE = 0x8, WS_OP_PING = 0x9, WS_OP_PONG = 0xA
};

typedef enum {
    WS_EV_NONE = 0,   /* all input consumed, need more */
    WS_EV_MESSAGE,    /* complete text/binary message: opcode, data, len */
    WS_EV_PING,       /* data/len = payload (<= 125 bytes) */
    WS_EV_PONG,
    WS_EV_CLOSE,      /* close_code (1005 if none given), data/len = reason */
    WS_EV_ERROR,      /* protocol error: code (WS_E*), close_code to send, msg */
    WS_EV_PIECE       /* chunked decoder: the next payload bytes of the current
                         message (data, len; opcode), fin on its last piece */
} ws_event_type;

typedef struct {
    ws_event_type type;
    int opcode;             /* WS_OP_TEXT or WS_OP_BINARY for messages */
    const uint8_t *data;    /* borrowed: valid until the next feed/free */
    size_t len;
    uint16_t close_code;
    int code;               /* WS_E* for WS_EV_ERROR */
    const char *msg;        /* static description for WS_EV_ERROR */
    bool fin;               /* WS_EV_PIECE: the message ends with this piece */
} ws_event;

/* Caller-allocated decoder; fields are private. */
typedef struct {
    int state;
    uint8_t hdr[14];
    size_t hdr_have, hdr_need;
    int fin, opcode, masked;
    uint8_t mask[4];
    uint64_t remaining;     /* payload bytes left in the current frame */
    size_t mask_off;
    int msg_opcode;         /* opcode of the message being reassembled, or 0 */
    uint8_t *msg;           /* reassembly buffer (malloc) */
    size_t msg_len, msg_cap;
    size_t msg_dirty;       /* msg[0..msg_dirty) may hold payload; the rest is zero */
    uint8_t ctl[125];       /* control frame payload */
    size_t ctl_len;
    uint32_t utf8_state;    /* incremental UTF-8 validation of text */
    size_t max_message;
    bool expect_masked;     /* true on a server, false on a client */
    bool failed;            /* a WS_EV_ERROR was returned; decoder is dead */
    bool closed;            /* a close frame was returned */
    bool chunked;           /* hand out data as WS_EV_PIECE (ws_decoder_set_chunked) */
} ws_decoder;

/* max_message: largest reassembled message in bytes (0 = 64 MiB).
 * expect_masked: frames must be masked (server side) or must not be (client
 * side); the other kind is a protocol error. */
void ws_decoder_init(ws_decoder *d, size_t max_message, bool expect_masked);
/* Zero and free the reassembly buffer. */
void ws_decoder_free(ws_decoder *d);
/* Consume input up to the first complete event. Returns the number of bytes
 * consumed (possibly less than len: call again with the rest) and fills *ev
 * (WS_EV_NONE when all len bytes were consumed without an event). After
 * WS_EV_ERROR or WS_EV_CLOSE the decoder consumes nothing more. */
size_t ws_decoder_feed(ws_decoder *d, const uint8_t *in, size_t len, ws_event *ev);
/* Chunked mode: instead of reassembling a message, hand out its payload as
 * WS_EV_PIECE events as it arrives (in place when unmasked; masked payload
 * is unmasked into a 64 KiB scratch), with the UTF-8 check of text and the
 * maximum message size still enforced; the last piece has fin set (it may
 * be empty). Switching takes effect for the rest of the current message:
 * bytes already reassembled stay in the decoder (ws_client hands them out
 * first). Control frames are reported as usual. */
void ws_decoder_set_chunked(ws_decoder *d, bool on);

/* Encode a frame header into out (2..14 bytes); mask NULL for unmasked.
 * Returns its length. */
size_t ws_frame_header(uint8_t out[14], int opcode, bool fin, uint64_t len,
                       const uint8_t *mask);
/* XOR data with mask, starting at mask position offset % 4. */
void ws_mask(uint8_t *data, size_t len, const uint8_t mask[4], size_t offset);

/* ---- URL, HTTP/1.1, handshake (I/O-free) ---- */

typedef struct {
    char scheme[8];      /* "ws", "wss", "http", "https" */
    char host[256];      /* without brackets for IPv6 literals */
    int port;            /* explicit or the scheme default */
    char path[2048];     /* starts with '/', includes the query */
    bool tls;
} ws_url;
/* Parse ws://, wss://, http://, https:// URLs. 0 or WS_EURL (err filled). */
int ws_url_parse(const char *url, ws_url *out, char *err, size_t errlen);

/* Sec-WebSocket-Accept for a key: base64(SHA-1(key + GUID)), 28 chars + NUL. */
void ws_accept_key(const char *key_b64, char out[29]);
/* Build the upgrade request for url with the given 24-char base64 key.
 * Returns the length, or -1 if cap is too small. */
int ws_handshake_request(char *out, size_t cap, const ws_url *url, const char *key_b64);
/* Check an upgrade response in buf[0..len). Returns WS_OK and sets
 * *consumed to the header length (bytes after it are frame data), WS_EAGAIN
 * when the header is incomplete, or WS_EHANDSHAKE with err naming the problem
 * (status other than 101, missing/wrong Upgrade, Connection or
 * Sec-WebSocket-Accept, header larger than 16 KiB). */
int ws_handshake_check(const char *buf, size_t len, const char *key_b64,
                       size_t *consumed, char *err, size_t errlen);

/* A parsed HTTP/1.1 response (for /json/version); I/O-free. Returns WS_OK
 * when buf holds the complete response (Content-Length, chunked, or
 * eof=true for read-until-close), WS_EAGAIN for more, or WS_EPROTO/WS_ETOOBIG.
 * body points into buf (chunked bodies are decoded in place). */
typedef struct {
    int status;
    const char *body;
    size_t body_len;
} ws_http_response;
int ws_http_parse_response(char *buf, size_t len, bool eof, size_t max_body,
                           ws_http_response *out, char *err, size_t errlen);

/* Blocking GET of an http:// URL with a deadline. On success *body is a new
 * NUL-terminated buffer (free with free()). */
int ws_http_get(const char *url, int timeout_ms, size_t max_body,
                char **body, size_t *body_len, int *status, char *err, size_t errlen);

/* ---- blocking client ---- */

typedef struct ws_client ws_client;

typedef struct {
    size_t max_message;     /* 0 = 64 MiB */
    int timeout_ms;         /* connect + handshake; 0 = 10000 */
} ws_opts;

/* Connect and upgrade. NULL on failure with err filled (what failed, and the
 * URL's host:port). */
ws_client *ws_client_connect(const char *url, const ws_opts *opts, char *err, size_t errlen);
/* Send one unfragmented message, masked with a fresh random key. */
int ws_client_send(ws_client *c, int opcode, const void *data, size_t len, int timeout_ms);
/* Send one message as several fragments of at most frag bytes (for tests and
 * for peers with small frame limits). */
int ws_client_send_fragmented(ws_client *c, int opcode, const void *data, size_t len,
                              size_t frag, int timeout_ms);
int ws_client_ping(ws_client *c, const void *data, size_t len, int timeout_ms);
/* Wait up to timeout_ms (-1 = forever, 0 = poll) for the next message.
 * Pings are answered with pongs internally and pongs are counted, not
 * returned. Returns WS_OK with *ev a WS_EV_MESSAGE; WS_ECLOSED when the
 * peer closed (*ev the WS_EV_CLOSE, and the close is answered); WS_ETIMEOUT;
 * or an error (WS_EPROTO, WS_ETOOBIG, WS_EUTF8, WS_EIO) after which the
 * client has sent the matching close frame and is dead. */
int ws_client_recv(ws_client *c, ws_event *ev, int timeout_ms);
/* Close handshake: send close(code, reason), wait up to timeout_ms for the
 * peer's close, then shut the socket. */
int ws_client_close(ws_client *c, uint16_t code, const char *reason, int timeout_ms);
void ws_client_free(ws_client *c);
int ws_client_fd(const ws_client *c);
unsigned long ws_client_pongs(const ws_client *c);
/* Text of the last error on this client ("" if none). */
const char *ws_client_error(const ws_client *c);

/* ---- message transport: WebSocket or pipe ---- */

typedef struct ws_transport ws_transport;

/* Over --remote-debugging-pipe: write to wfd, read from rfd, messages
 * terminated by NUL. Takes ownership of both fds. */
ws_transport *ws_transport_pipe(int rfd, int wfd, size_t max_message);
/* Over WebSocket text messages. NULL with err filled on failure. */
ws_transport *ws_transport_connect(const char *url, const ws_opts *opts,
                                   char *err, size_t errlen);
/* Send one message (must not contain NUL). */
int ws_transport_send(ws_transport *t, const char *msg, size_t len, int timeout_ms);
/* Receive one message: *msg borrowed until the next recv. Returns WS_OK,
 * WS_ETIMEOUT, WS_ECLOSED (clean end) or an error. */
int ws_transport_recv(ws_transport *t, const char **msg, size_t *len, int timeout_ms);
/* Receive the current message piece by piece, without holding it whole:
 * *p and *n: the next bytes (borrowed until the next recv call), *end true on
 * its last piece (which may be empty); the next call then starts the next
 * message. Over the pipe the pieces are what each read() brought (the NUL
 * is not included); over WebSocket the payload of text frames as it
 * arrives, UTF-8 checked before it is handed out, pings answered. The
 * maximum message size applies to the sum of the pieces. Whole-message
 * recv and recv_chunk may alternate message by message; a message begun
 * with recv_chunk must be finished with it (recv then fails with
 * WS_EPROTO and leaves the transport usable), while one whose whole-message
 * recv timed out may be continued with recv_chunk (what was buffered comes
 * first). Returns WS_OK, WS_ETIMEOUT (call again to continue), WS_ECLOSED or
 * an error. */
int ws_transport_recv_chunk(ws_transport *t, const char **p, size_t *n, bool *end,
                            int timeout_ms);
/* Zero every byte the transport still holds of messages already received
 * (handed out by recv, including the last one, which is then no longer
 * valid) and sent; bytes not handed out yet are kept. Cheap: only what was
 * not zeroed before is touched. */
void ws_transport_wipe(ws_transport *t);
/* True when a complete message is already buffered (recv won't block). */
bool ws_transport_ready(const ws_transport *t);
int ws_transport_fd(const ws_transport *t);   /* fd to poll for input */
const char *ws_transport_error(const ws_transport *t);
const char *ws_transport_kind(const ws_transport *t);  /* "pipe" or "websocket" */
/* Close (WebSocket close handshake, bounded) and free. NULL is a no-op. */
void ws_transport_free(ws_transport *t);

/* I/O-free NUL-delimited splitter used by the pipe transport (exposed for the
 * fuzz target): find the first NUL in buf[0..len); returns its index or -1. */
ssize_t ws_pipe_find_nul(const uint8_t *buf, size_t len);

#endif
