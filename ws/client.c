/*
 * client.c — a blocking RFC 6455 client over one TCP socket (TLS through
 * OpenSSL when built with CDPGATE_OPENSSL=1).
 *
 * The socket is non-blocking; every wait is a poll() bounded by a deadline
 * (net.c), so no call blocks longer than its timeout. Frames are decoded by
 * ws_decoder (frame.c) straight out of the read buffer; an unfragmented frame
 * that arrived whole is handed to the caller without a copy.
 *
 * Sending: each frame gets a fresh random mask key (taken from a pool filled
 * by getrandom, 16 keys per syscall); header and masked payload are built in
 * one scratch buffer and go out in one send() for messages up to 256 KiB,
 * larger ones in 256 KiB pieces.
 *
 * States: alive → (close received: answered, ECLOSED from then on) or
 * (protocol error: close frame sent, dead with that error) or (I/O error:
 * dead). A send that fails part-way leaves the stream unusable, so it kills
 * the client too.
 */
#include "ws/ws_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#if CDPGATE_OPENSSL
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#endif

#define RBUF_SIZE ((size_t)256 << 10)
#define SEND_CHUNK ((size_t)256 << 10)

struct ws_client {
    int fd;
    ws_decoder dec;
    uint8_t *rbuf;
    size_t rpos, rlen;      /* unconsumed bytes are rbuf[rpos..rlen) */
    size_t rwiped;          /* rbuf[0..rwiped) is zero; so is rbuf[rlen..) */
    bool read_full;         /* the last read filled the buffer: more waiting */
    uint8_t *sbuf;          /* header + masked payload scratch */
    size_t scap;
    uint8_t keys[64];       /* pool of mask keys */
    size_t keys_left;
    unsigned long pongs;
    int dead;               /* 0, or the WS_E* code every call now returns */
    bool close_sent;
    char hostport[300];
    char err[512];
#if CDPGATE_OPENSSL
    SSL_CTX *ctx;
    SSL *ssl;
#endif
};

static void cerr(ws_client *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void cerr(ws_client *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}

/* ---- raw I/O: plain socket or TLS ---- */

#if CDPGATE_OPENSSL
static void tls_err(char *out, size_t cap)
{
    unsigned long e = ERR_get_error();
    if (e)
        ERR_error_string_n(e, out, cap);
    else
        snprintf(out, cap, "%s", errno ? strerror(errno) : "unexpected end of stream");
    ERR_clear_error();
}
#endif

/* Write all of buf. WS_OK, WS_ETIMEOUT or WS_EIO; *sent how much went. */
static int conn_write(ws_client *c, const uint8_t *buf, size_t len, int64_t deadline,
                      size_t *sent)
{
#if CDPGATE_OPENSSL
    if (c->ssl) {
        size_t off = 0;
        while (off < len) {
            size_t want = len - off > (1u << 30) ? (1u << 30) : len - off;
            ERR_clear_error();
            int n = SSL_write(c->ssl, buf + off, (int)want);
            if (n > 0) {
                off += (size_t)n;
                continue;
            }
            int e = SSL_get_error(c->ssl, n);
            short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
            if (!ev) {
                char tmp[200];
                tls_err(tmp, sizeof tmp);
                cerr(c, "%s: TLS write: %s", c->hostport, tmp);
                *sent = off;
                return WS_EIO;
            }
            int r = base_wait_fd(c->fd, ev, deadline);
            if (r <= 0) {
                *sent = off;
                cerr(c, "%s: send timed out", c->hostport);
                return r == 0 ? WS_ETIMEOUT : WS_EIO;
            }
        }
        *sent = off;
        return WS_OK;
    }
#endif
    if (base_write_all(c->fd, buf, len, deadline, BASE_WRITE_SOCKET, sent) == 0)
        return WS_OK;
    if (errno == ETIMEDOUT) {
        cerr(c, "%s: send timed out", c->hostport);
        return WS_ETIMEOUT;
    }
    cerr(c, "%s: send: %s", c->hostport, strerror(errno));
    return WS_EIO;
}

/* Read what is there (waiting until the deadline) into rbuf[rlen..).
 * Returns bytes read, 0 at EOF, WS_ETIMEOUT or WS_EIO. */
static ssize_t conn_read(ws_client *c, int64_t deadline)
{
    uint8_t *dst = c->rbuf + c->rlen;
    size_t cap = RBUF_SIZE - c->rlen;
#if CDPGATE_OPENSSL
    if (c->ssl) {
        for (;;) {
            ERR_clear_error();
            int n = SSL_read(c->ssl, dst, cap > (1u << 30) ? (1 << 30) : (int)cap);
            if (n > 0) {
                size_t got = (size_t)n;
                /* Drain decrypted bytes so poll() alone tells readiness. */
                while (got < cap && SSL_pending(c->ssl) > 0) {
                    int m = SSL_read(c->ssl, dst + got, (int)(cap - got));
                    if (m <= 0)
                        break;
                    got += (size_t)m;
                }
                return (ssize_t)got;
            }
            int e = SSL_get_error(c->ssl, n);
            if (e == SSL_ERROR_ZERO_RETURN)
                return 0;
            short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
            if (!ev) {
                if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && errno == 0)
                    return 0; /* EOF without close_notify */
                char tmp[200];
                tls_err(tmp, sizeof tmp);
                cerr(c, "%s: TLS read: %s", c->hostport, tmp);
                return WS_EIO;
            }
            int r = base_wait_fd(c->fd, ev, deadline);
            if (r == 0)
                return WS_ETIMEOUT;
            if (r < 0) {
                cerr(c, "%s: poll: %s", c->hostport, strerror(errno));
                return WS_EIO;
            }
        }
    }
#endif
    ssize_t n = ws_sock_recv(c->fd, dst, cap, deadline, c->read_full);
    if (n == WS_EIO)
        cerr(c, "%s: receive: %s", c->hostport, strerror(errno));
    c->read_full = n > 0 && (size_t)n == cap;
    return n;
}

#if CDPGATE_OPENSSL
static int tls_start(ws_client *c, const ws_url *u, int64_t deadline, char *err,
                     size_t errlen)
{
    char tmp[256];
    c->ctx = SSL_CTX_new(TLS_client_method());
    if (!c->ctx)
        goto fail;
    SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
    SSL_CTX_set_default_verify_paths(c->ctx);
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
    SSL_CTX_set_options(c->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
    c->ssl = SSL_new(c->ctx);
    if (!c->ssl || SSL_set_fd(c->ssl, c->fd) != 1)
        goto fail;
    bool is_ip = strchr(u->host, ':') || strspn(u->host, "0123456789.") == strlen(u->host);
    if (is_ip) {
        X509_VERIFY_PARAM *pm = SSL_get0_param(c->ssl);
        X509_VERIFY_PARAM_set1_ip_asc(pm, u->host);
    } else {
        SSL_set_tlsext_host_name(c->ssl, u->host);
        SSL_set1_host(c->ssl, u->host);
    }
    for (;;) {
        ERR_clear_error();
        int r = SSL_connect(c->ssl);
        if (r == 1)
            return WS_OK;
        int e = SSL_get_error(c->ssl, r);
        short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        if (!ev)
            break;
        int w = base_wait_fd(c->fd, ev, deadline);
        if (w == 0) {
            ws_seterr(err, errlen, "%s: TLS handshake timed out", c->hostport);
            return WS_ETIMEOUT;
        }
        if (w < 0)
            break;
    }
fail:
    tls_err(tmp, sizeof tmp);
    if (c->ssl && SSL_get_verify_result(c->ssl) != X509_V_OK)
        ws_seterr(err, errlen, "%s: TLS handshake: certificate verify failed: %s", c->hostport,
                  X509_verify_cert_error_string(SSL_get_verify_result(c->ssl)));
    else
        ws_seterr(err, errlen, "%s: TLS handshake: %s", c->hostport, tmp);
    return WS_ETLS;
}
#endif

/* ---- connect ---- */

void ws_client_free(ws_client *c)
{
    if (!c)
        return;
#if CDPGATE_OPENSSL
    if (c->ssl)
        SSL_free(c->ssl);
    if (c->ctx)
        SSL_CTX_free(c->ctx);
#endif
    if (c->fd >= 0)
        close(c->fd);
    ws_decoder_free(&c->dec);
    base_memzero(c->rbuf, c->rlen);
    free(c->rbuf);
    base_memzero(c->sbuf, c->scap);
    free(c->sbuf);
    free(c);
}

/* Everything in rbuf was consumed: start it over, zeroing what it held. */
static void rbuf_reset(ws_client *c)
{
    if (c->rlen > c->rwiped)
        base_memzero(c->rbuf + c->rwiped, c->rlen - c->rwiped);
    c->rpos = c->rlen = c->rwiped = 0;
}

void ws_client_wipe_int(ws_client *c)
{
    if (!c)
        return;
    if (c->rpos > c->rwiped)
        base_memzero(c->rbuf + c->rwiped, c->rpos - c->rwiped);
    if (c->rpos > c->rwiped)
        c->rwiped = c->rpos;
    ws_decoder_wipe_int(&c->dec);
}

ws_client *ws_client_connect(const char *url, const ws_opts *opts, char *err, size_t errlen)
{
    ws_url u;
    char tmp[300];
    if (ws_url_parse(url, &u, tmp, sizeof tmp) != WS_OK) {
        ws_seterr(err, errlen, "%s", tmp);
        return NULL;
    }
    if (strcmp(u.scheme, "ws") != 0 && strcmp(u.scheme, "wss") != 0) {
        ws_seterr(err, errlen, "WebSocket URL must start with ws:// or wss://, not %s://",
                  u.scheme);
        return NULL;
    }
#if !CDPGATE_OPENSSL
    if (u.tls) {
        ws_seterr(err, errlen, "wss:// needs a build with OPENSSL=1");
        return NULL;
    }
#endif
    size_t max_message = opts && opts->max_message ? opts->max_message
                                                   : WS_DEFAULT_MAX_MESSAGE;
    int timeout_ms = opts && opts->timeout_ms > 0 ? opts->timeout_ms : 10000;
    int64_t deadline = base_deadline_in(timeout_ms);

    ws_client *c = calloc(1, sizeof *c);
    if (!c) {
        ws_seterr(err, errlen, "out of memory");
        return NULL;
    }
    c->fd = -1;
    ws_decoder_init(&c->dec, max_message, false);
    ws_hostport(u.host, u.port, c->hostport, sizeof c->hostport);
    c->rbuf = malloc(RBUF_SIZE);
    if (!c->rbuf) {
        ws_seterr(err, errlen, "out of memory");
        goto fail;
    }
    if (ws_tcp_connect(u.host, u.port, deadline, &c->fd, err, errlen) != WS_OK)
        goto fail;
#if CDPGATE_OPENSSL
    if (u.tls && tls_start(c, &u, deadline, err, errlen) != WS_OK)
        goto fail;
#endif
    uint8_t raw[16];
    char key[BASE_B64_ENCLEN(16) + 1];
    if (base_random(raw, sizeof raw) != 0) {
        ws_seterr(err, errlen, "no random bytes for the handshake key");
        goto fail;
    }
    base_b64_encode(raw, sizeof raw, key);
    char req[2600];
    int rn = ws_handshake_request(req, sizeof req, &u, key);
    if (rn < 0) {
        ws_seterr(err, errlen, "%s: handshake request too long", c->hostport);
        goto fail;
    }
    size_t sent;
    int rc = conn_write(c, (const uint8_t *)req, (size_t)rn, deadline, &sent);
    if (rc != WS_OK) {
        ws_seterr(err, errlen, "%s: handshake: %s", c->hostport, c->err);
        goto fail;
    }
    for (;;) {
        size_t consumed = 0;
        char herr[300];
        rc = ws_handshake_check((const char *)c->rbuf, c->rlen, key, &consumed, herr,
                                sizeof herr);
        if (rc == WS_OK) {
            c->rpos = consumed;
            break;
        }
        if (rc != WS_EAGAIN) {
            ws_seterr(err, errlen, "%s: %s", c->hostport, herr);
            goto fail;
        }
        ssize_t n = conn_read(c, deadline);
        if (n == WS_ETIMEOUT) {
            ws_seterr(err, errlen, "%s: handshake: no complete response within %d ms",
                      c->hostport, timeout_ms);
            goto fail;
        }
        if (n < 0) {
            ws_seterr(err, errlen, "%s: handshake: %s", c->hostport, c->err);
            goto fail;
        }
        if (n == 0) {
            ws_seterr(err, errlen, "%s: handshake: connection closed after %zu bytes of response",
                      c->hostport, c->rlen);
            goto fail;
        }
        c->rlen += (size_t)n;
    }
    c->err[0] = 0;
    return c;
fail:
    ws_client_free(c);
    return NULL;
}

/* ---- sending ---- */

static int next_key(ws_client *c, uint8_t key[4])
{
    if (c->keys_left < 4) {
        if (base_random(c->keys, sizeof c->keys) != 0) {
            cerr(c, "no random bytes for a mask key");
            return WS_EIO;
        }
        c->keys_left = sizeof c->keys;
    }
    c->keys_left -= 4;
    memcpy(key, c->keys + c->keys_left, 4);
    return WS_OK;
}

/* Send one frame. A failure after the first byte went out kills the client. */
static int send_frame(ws_client *c, int opcode, bool fin, const uint8_t *data, size_t len,
                      int64_t deadline)
{
    if (c->dead)
        return c->dead;
    uint8_t key[4], hdr[14];
    int rc = next_key(c, key);
    if (rc != WS_OK)
        return rc;
    size_t hlen = ws_frame_header(hdr, opcode, fin, len, key);
    size_t first = len < SEND_CHUNK ? len : SEND_CHUNK;
    if (c->scap < hlen + first) {
        size_t ncap = hlen + first;
        uint8_t *nb = realloc(c->sbuf, ncap);   /* all zero between frames */
        if (!nb) {
            cerr(c, "out of memory for a %zu-byte frame", len);
            return WS_ENOMEM;
        }
        c->sbuf = nb;
        c->scap = ncap;
    }
    memcpy(c->sbuf, hdr, hlen);
    ws_mask_copy(c->sbuf + hlen, data, first, key, 0);
    size_t sent = 0;
    rc = conn_write(c, c->sbuf, hlen + first, deadline, &sent);
    size_t off = first;
    while (rc == WS_OK && off < len) {
        size_t n = len - off < SEND_CHUNK ? len - off : SEND_CHUNK;
        ws_mask_copy(c->sbuf, data + off, n, key, off);
        rc = conn_write(c, c->sbuf, n, deadline, &sent);
        off += n;
        sent = 1; /* the frame is under way */
    }
    /* The frame is out (or never will be): no copy stays behind. */
    base_memzero(c->sbuf, hlen + first);
    if (rc != WS_OK && sent > 0)
        c->dead = WS_EIO;
    return rc;
}

static int64_t send_deadline(int timeout_ms)
{
    /* 0 would abandon a frame half-written; treat it as "no limit". */
    return base_deadline_in(timeout_ms == 0 ? -1 : timeout_ms);
}

int ws_client_send(ws_client *c, int opcode, const void *data, size_t len, int timeout_ms)
{
    if (c->close_sent && !c->dead)
        return WS_ECLOSED;
    return send_frame(c, opcode, true, data, len, send_deadline(timeout_ms));
}

int ws_client_send_fragmented(ws_client *c, int opcode, const void *data, size_t len,
                              size_t frag, int timeout_ms)
{
    if (c->close_sent && !c->dead)
        return WS_ECLOSED;
    if (!frag)
        frag = len ? len : 1;
    int64_t deadline = send_deadline(timeout_ms);
    const uint8_t *p = data;
    size_t off = 0;
    do {
        size_t n = len - off < frag ? len - off : frag;
        bool fin = off + n == len;
        int rc = send_frame(c, off ? WS_OP_CONT : opcode, fin, p + off, n, deadline);
        if (rc != WS_OK) {
            if (off)
                c->dead = rc; /* a message left half-sent */
            return rc;
        }
        off += n;
    } while (off < len);
    return WS_OK;
}

int ws_client_ping(ws_client *c, const void *data, size_t len, int timeout_ms)
{
    if (len > 125) {
        cerr(c, "ping payload of %zu bytes (at most 125)", len);
        return WS_EPROTO;
    }
    if (c->close_sent && !c->dead)
        return WS_ECLOSED;
    return send_frame(c, WS_OP_PING, true, data, len, send_deadline(timeout_ms));
}

/* Close frame with code (0 = none) and reason cut to 123 bytes on a UTF-8
 * character boundary. */
static int send_close(ws_client *c, uint16_t code, const char *reason, size_t rlen,
                      int64_t deadline)
{
    uint8_t pl[125];
    size_t n = 0;
    if (code) {
        if (rlen > 123) {
            rlen = 123;
            while (rlen && ((unsigned char)reason[rlen] & 0xC0) == 0x80)
                rlen--;
        }
        pl[0] = (uint8_t)(code >> 8);
        pl[1] = (uint8_t)code;
        if (rlen)
            memcpy(pl + 2, reason, rlen);
        n = 2 + rlen;
    }
    c->close_sent = true;
    return send_frame(c, WS_OP_CLOSE, true, pl, n, deadline);
}

/* ---- receiving ---- */

/* Feed buffered bytes to the decoder, reading more until an event that the
 * caller must see (message, close, error), EOF or the deadline. Pings are
 * answered here (unless quiet) and pongs counted. */
static int pump(ws_client *c, ws_event *ev, int64_t deadline, bool quiet)
{
    for (;;) {
        if (c->rpos < c->rlen) {
            size_t n = ws_decoder_feed(&c->dec, c->rbuf + c->rpos, c->rlen - c->rpos, ev);
            c->rpos += n;
            switch (ev->type) {
            case WS_EV_MESSAGE:
            case WS_EV_CLOSE:
            case WS_EV_ERROR:
            case WS_EV_PIECE:
                return WS_OK;
            case WS_EV_PING:
                if (!quiet && !c->close_sent) {
                    int rc = send_frame(c, WS_OP_PONG, true, ev->data, ev->len, deadline);
                    if (rc != WS_OK && c->dead)
                        return c->dead;
                }
                continue;
            case WS_EV_PONG:
                c->pongs++;
                continue;
            case WS_EV_NONE:
                break;
            }
        }
        rbuf_reset(c);
        ssize_t n = conn_read(c, deadline);
        if (n == WS_ETIMEOUT)
            return WS_ETIMEOUT;
        if (n < 0) {
            c->dead = WS_EIO;
            return WS_EIO;
        }
        if (n == 0) {
            memset(ev, 0, sizeof *ev);
            bool mid = c->dec.state != 0 || c->dec.hdr_have || c->dec.msg_opcode;
            if (mid) {
                cerr(c, "%s: connection closed in the middle of a %s", c->hostport,
                     c->dec.msg_opcode && !c->dec.hdr_have && c->dec.state == 0
                         ? "fragmented message" : "frame");
                c->dead = WS_EIO;
                return WS_EIO;
            }
            cerr(c, "%s: connection closed without a close frame", c->hostport);
            ev->type = WS_EV_CLOSE;
            ev->close_code = 1006;
            ev->data = (const uint8_t *)"";
            c->dead = WS_ECLOSED;
            return WS_ECLOSED;
        }
        c->rlen = (size_t)n;
    }
}

static int close_or_error(ws_client *c, ws_event *ev, int64_t deadline);

int ws_client_recv(ws_client *c, ws_event *ev, int timeout_ms)
{
    memset(ev, 0, sizeof *ev);
    if (c->dead)
        return c->dead;
    if (c->dec.msg_opcode && c->dec.chunked) {
        cerr(c, "%s: a message is being received in pieces", c->hostport);
        return WS_EPROTO;
    }
    ws_decoder_set_chunked(&c->dec, false);
    int64_t deadline = base_deadline_in(timeout_ms);
    int rc = pump(c, ev, deadline, false);
    if (rc != WS_OK)
        return rc;
    if (ev->type == WS_EV_MESSAGE)
        return WS_OK;
    return close_or_error(c, ev, deadline);
}

int ws_client_recv_chunk_int(ws_client *c, const uint8_t **p, size_t *n, bool *fin,
                             int timeout_ms)
{
    *p = NULL;
    *n = 0;
    *fin = false;
    if (c->dead)
        return c->dead;
    if (c->dec.msg_opcode && !c->dec.chunked) {
        /* A whole-message recv began this one: what it gathered comes first. */
        ws_decoder_set_chunked(&c->dec, true);
        if (c->dec.msg_len) {
            *p = c->dec.msg;
            *n = c->dec.msg_len;
            return WS_OK;
        }
    }
    ws_decoder_set_chunked(&c->dec, true);
    ws_event ev;
    int64_t deadline = base_deadline_in(timeout_ms);
    int rc = pump(c, &ev, deadline, false);
    if (rc != WS_OK)
        return rc;
    if (ev.type == WS_EV_PIECE) {
        *p = ev.data;
        *n = ev.len;
        *fin = ev.fin;
        return WS_OK;
    }
    return close_or_error(c, &ev, deadline);
}

/* After a close or an error event: answer the close, or send ours. */
static int close_or_error(ws_client *c, ws_event *ev, int64_t deadline)
{
    if (ev->type == WS_EV_CLOSE) {
        cerr(c, "%s: peer closed the connection with code %u", c->hostport,
             (unsigned)ev->close_code);
        if (!c->close_sent) {
            /* Echo the status code (none for 1005), bounded by one second. */
            uint16_t code = ev->close_code == 1005 ? 0 : ev->close_code;
            int64_t d2 = base_deadline_in(1000);
            if (deadline != BASE_NO_DEADLINE && deadline < d2)
                d2 = deadline;
            send_close(c, code, NULL, 0, d2);
        }
        c->dead = WS_ECLOSED;
        return WS_ECLOSED;
    }
    /* Protocol error: tell the peer why, then give up. */
    cerr(c, "%s: %s", c->hostport, ev->msg);
    if (!c->close_sent)
        send_close(c, ev->close_code, ev->msg, strlen(ev->msg), base_deadline_in(1000));
    c->dead = ev->code;
    return ev->code;
}

int ws_client_close(ws_client *c, uint16_t code, const char *reason, int timeout_ms)
{
    if (!c)
        return WS_OK;
    int64_t deadline = base_deadline_in(timeout_ms);
    int rc = WS_OK;
    if (c->dead) {
        rc = c->dead == WS_ECLOSED ? WS_OK : c->dead;
        if (c->close_sent && c->dead != WS_ECLOSED && c->dead != WS_EIO && c->fd >= 0) {
            /* We failed the connection with a close frame: let the server
             * read it and hang up (RFC 6455 7.1.1) instead of resetting the
             * connection under it; what it still sends is discarded. */
            shutdown(c->fd, SHUT_WR);
            for (;;) {
                rbuf_reset(c);
                if (conn_read(c, deadline) <= 0)
                    break;
            }
        }
    } else {
        if (!c->close_sent)
            rc = send_close(c, code, reason ? reason : "", reason ? strlen(reason) : 0,
                            deadline);
        /* Wait for the peer's close; messages still in flight are dropped. */
        while (rc == WS_OK) {
            ws_event ev;
            rc = pump(c, &ev, deadline, true);
            if (rc == WS_OK && ev.type == WS_EV_CLOSE)
                break;
            if (rc == WS_OK && ev.type == WS_EV_ERROR)
                rc = ev.code;
            if (rc == WS_ECLOSED) {
                rc = WS_OK; /* EOF: the peer went away, which is closed enough */
                break;
            }
        }
        c->dead = WS_ECLOSED;
    }
#if CDPGATE_OPENSSL
    if (c->ssl)
        SSL_shutdown(c->ssl);
#endif
    if (c->fd >= 0)
        shutdown(c->fd, SHUT_RDWR);
    return rc;
}

int ws_client_fd(const ws_client *c) { return c ? c->fd : -1; }
unsigned long ws_client_pongs(const ws_client *c) { return c ? c->pongs : 0; }
const char *ws_client_error(const ws_client *c) { return c ? c->err : ""; }

/*
 * Would ws_client_recv return without waiting? Walk the frames buffered
 * after the last event (the decoder is then at a frame boundary): a complete
 * final data frame, a close, or a frame the decoder will reject means yes.
 */
bool ws_client_ready_int(const ws_client *c)
{
    if (c->dead)
        return true;
#if CDPGATE_OPENSSL
    if (c->ssl && SSL_pending(c->ssl) > 0)
        return true;
#endif
    const uint8_t *p = c->rbuf + c->rpos, *end = c->rbuf + c->rlen;
    if (c->dec.state != 0 || c->dec.hdr_have)
        return false;
    while (end - p >= 2) {
        unsigned op = p[0] & 0x0F, len7 = p[1] & 0x7F;
        if ((p[0] & 0x70) || (p[1] & 0x80))
            return true; /* an error the decoder will report */
        size_t h = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0);
        if ((size_t)(end - p) < h)
            return false;
        uint64_t plen = len7;
        if (len7 == 126) {
            plen = (uint64_t)p[2] << 8 | p[3];
        } else if (len7 == 127) {
            plen = 0;
            for (int i = 0; i < 8; i++)
                plen = plen << 8 | p[2 + i];
        }
        bool reserved = (op > 2 && op < 8) || op > 10;
        if (reserved || (op >= 8 && len7 > 125))
            return true; /* an error the decoder will report */
        if (plen > (uint64_t)(end - p) - h)
            return false;
        if (op == WS_OP_CLOSE || ((p[0] & 0x80) && op < 8))
            return true;
        p += h + plen; /* ping, pong or a non-final fragment */
    }
    return false;
}
