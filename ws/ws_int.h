/*
 * ws_int.h — internals shared by the files of the ws module; no other
 * module includes this.
 *
 *   - Deadlines are absolute CLOCK_MONOTONIC milliseconds (base_now_ms);
 *     BASE_NO_DEADLINE means wait forever. base_deadline_in(-1) gives it.
 *   - net.c is the only file that calls socket() and connect(); waiting
 *     (poll) and writing go through base/ (base_wait_fd, base_write_all).
 *   - The pipe transport (pipe.c) is reached from transport.c through the
 *     ws_pipe_* functions below.
 */
#ifndef CDPGATE_WS_INT_H
#define CDPGATE_WS_INT_H

#include "ws/ws.h"
#include "base/base.h"

#include <stdarg.h>

#define WS_DEFAULT_MAX_MESSAGE ((size_t)64 << 20)

/* snprintf into err (NULL or errlen 0 is accepted). */
void ws_seterr(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* XOR-copy src into dst with mask starting at mask position offset % 4. */
void ws_mask_copy(uint8_t *dst, const uint8_t *src, size_t len,
                  const uint8_t mask[4], size_t offset);

/* Incremental UTF-8 validation; *state is 0 at a character boundary.
 * Returns false at the first invalid byte. */
bool ws_utf8_run(uint32_t *state, const uint8_t *p, size_t n);

/* "host:port", IPv6 literals in brackets. */
void ws_hostport(const char *host, int port, char *out, size_t cap);

/* ---- sockets (net.c) ---- */

/* Time, deadlines (BASE_NO_DEADLINE), waiting on a descriptor and the write
 * loop are base/'s: base_now_ms, base_deadline_in, base_wait_fd,
 * base_write_all. */
/* Non-blocking, close-on-exec TCP connection with TCP_NODELAY, tried on
 * every address getaddrinfo gives. WS_OK with *fd set, or WS_ERESOLVE,
 * WS_ECONNECT, WS_ETIMEOUT with err naming host:port and the reason. */
int ws_tcp_connect(const char *host, int port, int64_t deadline, int *fd,
                   char *err, size_t errlen);
/* One recv on a non-blocking socket, waiting until the deadline. Returns the
 * byte count, 0 at EOF, WS_ETIMEOUT or WS_EIO (errno kept). try_first skips
 * the poll when data is probably already there. */
ssize_t ws_sock_recv(int fd, void *buf, size_t cap, int64_t deadline, bool try_first);

/* ---- client internals used by the transport ---- */

/* True when the buffered bytes hold a complete message, close or error, so
 * that ws_client_recv will not wait. */
bool ws_client_ready_int(const ws_client *c);
/* ws_transport_wipe for a WebSocket client. */
void ws_client_wipe_int(ws_client *c);
/* Zero the decoder's copy of the last complete message (not of one still
 * being reassembled). */
void ws_decoder_wipe_int(ws_decoder *d);
/* The next piece of the current message (see ws_transport_recv_chunk). */
int ws_client_recv_chunk_int(ws_client *c, const uint8_t **p, size_t *n, bool *fin,
                             int timeout_ms);

/* ---- pipe transport (pipe.c) ---- */

typedef struct ws_pipe ws_pipe;
ws_pipe *ws_pipe_new(int rfd, int wfd, size_t max_message);
int ws_pipe_send(ws_pipe *p, const char *msg, size_t len, int timeout_ms);
int ws_pipe_recv(ws_pipe *p, const char **msg, size_t *len, int timeout_ms);
int ws_pipe_recv_chunk(ws_pipe *p, const char **msg, size_t *len, bool *end,
                       int timeout_ms);
bool ws_pipe_ready(const ws_pipe *p);
void ws_pipe_wipe(ws_pipe *p);
int ws_pipe_rfd(const ws_pipe *p);
const char *ws_pipe_error(const ws_pipe *p);
void ws_pipe_free(ws_pipe *p);

#endif
