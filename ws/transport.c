/*
 * transport.c — one "send a message, receive a message" interface for cdp/
 * over either a WebSocket client (text messages) or the pipe pair of
 * --remote-debugging-pipe (NUL-terminated messages; pipe.c).
 *
 * Messages from the pipe are NUL-terminated in place; messages from a
 * WebSocket are not (they may point into the read buffer). Both are borrowed
 * until the next recv.
 */
#include "ws/ws_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { KIND_PIPE, KIND_WS };

struct ws_transport {
    int kind;
    ws_pipe *pipe;
    ws_client *ws;
};

ws_transport *ws_transport_pipe(int rfd, int wfd, size_t max_message)
{
    ws_transport *t = calloc(1, sizeof *t);
    if (t)
        t->pipe = ws_pipe_new(rfd, wfd, max_message);
    if (!t || !t->pipe) {
        free(t);
        if (rfd >= 0)
            close(rfd);
        if (wfd >= 0 && wfd != rfd)
            close(wfd);
        return NULL;
    }
    t->kind = KIND_PIPE;
    return t;
}

ws_transport *ws_transport_connect(const char *url, const ws_opts *opts,
                                   char *err, size_t errlen)
{
    ws_transport *t = calloc(1, sizeof *t);
    if (!t) {
        ws_seterr(err, errlen, "out of memory");
        return NULL;
    }
    t->kind = KIND_WS;
    t->ws = ws_client_connect(url, opts, err, errlen);
    if (!t->ws) {
        free(t);
        return NULL;
    }
    return t;
}

int ws_transport_send(ws_transport *t, const char *msg, size_t len, int timeout_ms)
{
    if (t->kind == KIND_PIPE)
        return ws_pipe_send(t->pipe, msg, len, timeout_ms);
    return ws_client_send(t->ws, WS_OP_TEXT, msg, len, timeout_ms);
}

int ws_transport_recv(ws_transport *t, const char **msg, size_t *len, int timeout_ms)
{
    if (t->kind == KIND_PIPE)
        return ws_pipe_recv(t->pipe, msg, len, timeout_ms);
    ws_event ev;
    *msg = NULL;
    *len = 0;
    int rc = ws_client_recv(t->ws, &ev, timeout_ms);
    if (rc == WS_OK) {
        *msg = (const char *)ev.data;
        *len = ev.len;
    }
    return rc;
}

int ws_transport_recv_chunk(ws_transport *t, const char **p, size_t *n, bool *end,
                            int timeout_ms)
{
    if (t->kind == KIND_PIPE)
        return ws_pipe_recv_chunk(t->pipe, p, n, end, timeout_ms);
    const uint8_t *u;
    int rc = ws_client_recv_chunk_int(t->ws, &u, n, end, timeout_ms);
    *p = (const char *)u;
    return rc;
}

void ws_transport_wipe(ws_transport *t)
{
    if (t->kind == KIND_PIPE)
        ws_pipe_wipe(t->pipe);
    else
        ws_client_wipe_int(t->ws);
}

bool ws_transport_ready(const ws_transport *t)
{
    if (t->kind == KIND_PIPE)
        return ws_pipe_ready(t->pipe);
    return ws_client_ready_int(t->ws);
}

int ws_transport_fd(const ws_transport *t)
{
    return t->kind == KIND_PIPE ? ws_pipe_rfd(t->pipe) : ws_client_fd(t->ws);
}

const char *ws_transport_error(const ws_transport *t)
{
    return t->kind == KIND_PIPE ? ws_pipe_error(t->pipe) : ws_client_error(t->ws);
}

const char *ws_transport_kind(const ws_transport *t)
{
    return t->kind == KIND_PIPE ? "pipe" : "websocket";
}

void ws_transport_free(ws_transport *t)
{
    if (!t)
        return;
    if (t->kind == KIND_PIPE) {
        ws_pipe_free(t->pipe);
    } else {
        ws_client_close(t->ws, 1000, "", 1000);
        ws_client_free(t->ws);
    }
    free(t);
}
