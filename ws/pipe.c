/*
 * pipe.c — the --remote-debugging-pipe transport: JSON messages, each
 * terminated by a NUL byte, written to one fd and read from another
 * (Chromium reads its fd 3 and writes its fd 4).
 *
 * Reads go into one growing buffer (64 KiB up to max_message + 1); a
 * message is returned in place, NUL-terminated, and stays valid until the
 * next recv. Consumed bytes are moved out of the way only when the buffer
 * must make room, so a burst of small messages costs one read().
 *
 * Both fds are owned, made non-blocking and close-on-exec. Writes to a
 * socket use MSG_NOSIGNAL; writes to a pipe block SIGPIPE in the calling
 * thread for the duration and swallow a SIGPIPE they caused, so a browser
 * that died gives EPIPE (WS_EIO), never a signal.
 *
 * EOF at a message boundary is WS_ECLOSED; EOF with a partial message
 * buffered is WS_EIO.
 *
 * Hygiene: bytes outside buf[start..end) are zero, except consumed bytes
 * in buf[wiped..start): those are zeroed when the buffer is rewound or
 * compacted, or at once by ws_pipe_wipe. The buffer never grows by realloc
 * and is zeroed before it is freed.
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ, MSG_NOSIGNAL */
#include "ws/ws_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PIPE_BUF0 ((size_t)64 << 10)

struct ws_pipe {
    int rfd, wfd;
    bool wsock;             /* wfd is a socket: MSG_NOSIGNAL works */
    bool read_full;         /* last read filled the space: try again at once */
    int dead;               /* 0 or the code every call returns now */
    uint8_t *buf;
    size_t cap, start, end; /* unconsumed bytes are buf[start..end) */
    size_t scan;            /* no NUL in buf[start..scan) */
    size_t wiped;           /* buf[0..wiped) is zero (wiped <= start) */
    size_t max;
    size_t chunk_len;       /* bytes of the current message handed out in pieces */
    bool chunk_mid;         /* a message is being handed out in pieces */
    char err[256];
};

ssize_t ws_pipe_find_nul(const uint8_t *buf, size_t len)
{
    const uint8_t *z = memchr(buf, 0, len);
    return z ? (ssize_t)(z - buf) : -1;
}

static void setup_fd(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int fdfl = fcntl(fd, F_GETFD);
    if (fdfl >= 0)
        (void)fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC);
#ifdef F_SETPIPE_SZ
    /* Bigger pipes mean fewer syscalls for large messages; best effort. */
    (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#endif
}

ws_pipe *ws_pipe_new(int rfd, int wfd, size_t max_message)
{
    ws_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->buf = malloc(PIPE_BUF0 + 1);
    if (!p->buf) {
        free(p);
        return NULL;
    }
    p->cap = PIPE_BUF0;
    p->rfd = rfd;
    p->wfd = wfd;
    p->max = max_message ? max_message : WS_DEFAULT_MAX_MESSAGE;
    struct stat st;
    p->wsock = fstat(wfd, &st) == 0 && S_ISSOCK(st.st_mode);
    setup_fd(rfd);
    if (wfd != rfd)
        setup_fd(wfd);
    return p;
}

void ws_pipe_free(ws_pipe *p)
{
    if (!p)
        return;
    if (p->rfd >= 0)
        close(p->rfd);
    if (p->wfd >= 0 && p->wfd != p->rfd)
        close(p->wfd);
    base_memzero(p->buf, p->end);
    free(p->buf);
    free(p);
}

void ws_pipe_wipe(ws_pipe *p)
{
    if (p->start > p->wiped)
        base_memzero(p->buf + p->wiped, p->start - p->wiped);
    p->wiped = p->start;
}

/* Move the unconsumed bytes to the front, zeroing the space they leave. */
static void compact(ws_pipe *p)
{
    size_t n = p->end - p->start;
    memmove(p->buf, p->buf + p->start, n);
    base_memzero(p->buf + n, p->start);
    p->end = n;
    p->scan -= p->start;
    p->start = p->wiped = 0;
}

/* Grow to ncap (+1 for a NUL), without leaving a copy behind. */
static bool grow_buf(ws_pipe *p, size_t ncap)
{
    uint8_t *nb = malloc(ncap + 1);
    if (!nb)
        return false;
    memcpy(nb, p->buf, p->end);
    base_memzero(p->buf, p->end);
    free(p->buf);
    p->buf = nb;
    p->cap = ncap;
    return true;
}

int ws_pipe_rfd(const ws_pipe *p) { return p->rfd; }
const char *ws_pipe_error(const ws_pipe *p) { return p->err; }

bool ws_pipe_ready(const ws_pipe *p)
{
    if (p->dead)
        return true;
    return memchr(p->buf + p->scan, 0, p->end - p->scan) != NULL;
}

/* Write all of data[0..len) then one NUL byte (the message delimiter). */
static int write_all(ws_pipe *p, const char *data, size_t len, int64_t deadline)
{
    static const char zero[1] = {0};
    unsigned flags = p->wsock ? BASE_WRITE_SOCKET : 0;
    if (base_write_all(p->wfd, data, len, deadline, flags, NULL) == 0 &&
        base_write_all(p->wfd, zero, 1, deadline, flags, NULL) == 0)
        return WS_OK;
    if (errno == ETIMEDOUT) {
        snprintf(p->err, sizeof p->err, "pipe: send timed out");
        return WS_ETIMEOUT;
    }
    snprintf(p->err, sizeof p->err, "pipe: write: %s",
             errno == EPIPE ? "the reader closed the pipe" : strerror(errno));
    return WS_EIO;
}

int ws_pipe_send(ws_pipe *p, const char *msg, size_t len, int timeout_ms)
{
    if (p->dead)
        return p->dead;
    const char *z = memchr(msg, 0, len);
    if (z) {
        snprintf(p->err, sizeof p->err, "pipe: message contains a NUL byte at offset %zu",
                 (size_t)(z - msg));
        return WS_EPROTO;
    }
    int64_t deadline = base_deadline_in(timeout_ms == 0 ? -1 : timeout_ms);
    if (p->wsock)
        return write_all(p, msg, len, deadline) == WS_OK ? WS_OK : (p->dead = WS_EIO);
    /* A pipe: keep SIGPIPE away from the process while writing. */
    sigset_t set, old, pending;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &set, &old);
    int rc = write_all(p, msg, len, deadline);
    if (rc == WS_EIO && !was_pending) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != WS_OK)
        p->dead = WS_EIO; /* a message may be half-written */
    return rc;
}

/* Nothing buffered: start the buffer over (zeroing what was consumed),
 * giving back a big one. */
static void rewind_buf(ws_pipe *p)
{
    ws_pipe_wipe(p);
    p->start = p->end = p->scan = p->wiped = 0;
    if (p->cap > ((size_t)4 << 20)) {
        uint8_t *nb = realloc(p->buf, PIPE_BUF0 + 1);
        if (nb) {
            p->buf = nb;
            p->cap = PIPE_BUF0;
        }
    }
}

/* Wait for input and read what fits after p->end. 1 on bytes, else the
 * code to return (EOF: WS_ECLOSED at a message boundary, else WS_EIO). */
static int read_more(ws_pipe *p, int64_t deadline)
{
    for (;;) {
        if (!p->read_full) {
            int r = base_wait_fd(p->rfd, POLLIN, deadline);
            if (r == 0)
                return WS_ETIMEOUT;
            if (r < 0) {
                snprintf(p->err, sizeof p->err, "pipe: poll: %s", strerror(errno));
                return p->dead = WS_EIO;
            }
        }
        ssize_t n = read(p->rfd, p->buf + p->end, p->cap - p->end);
        if (n < 0) {
            p->read_full = false;
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            snprintf(p->err, sizeof p->err, "pipe: read: %s", strerror(errno));
            return p->dead = WS_EIO;
        }
        if (n == 0) {
            size_t have = p->end - p->start + p->chunk_len;
            if (have == 0 && !p->chunk_mid) {
                snprintf(p->err, sizeof p->err, "pipe: closed by the peer");
                return p->dead = WS_ECLOSED;
            }
            snprintf(p->err, sizeof p->err,
                     "pipe: closed by the peer in the middle of a message (%zu bytes)", have);
            return p->dead = WS_EIO;
        }
        p->read_full = (size_t)n == p->cap - p->end;
        p->end += (size_t)n;
        return 1;
    }
}

/*
 * Chunked receive: hand out whatever part of the current message is
 * buffered, up to its NUL, and consume it, so the buffer never grows past
 * its first size however big the message.
 */
int ws_pipe_recv_chunk(ws_pipe *p, const char **msg, size_t *len, bool *end,
                       int timeout_ms)
{
    *msg = NULL;
    *len = 0;
    *end = false;
    if (p->dead)
        return p->dead;
    int64_t deadline = base_deadline_in(timeout_ms);
    for (;;) {
        if (p->start < p->end) {
            uint8_t *z = memchr(p->buf + p->scan, 0, p->end - p->scan);
            size_t n = z ? (size_t)(z - (p->buf + p->start)) : p->end - p->start;
            if (n > p->max - p->chunk_len) {
                snprintf(p->err, sizeof p->err,
                         "pipe: message larger than the maximum of %zu bytes", p->max);
                return p->dead = WS_ETOOBIG;
            }
            *msg = (const char *)p->buf + p->start;
            *len = n;
            if (z) {
                *end = true;
                p->start = p->scan = (size_t)(z - p->buf) + 1;
                p->chunk_len = 0;
                p->chunk_mid = false;
            } else {
                p->start = p->scan = p->end;
                p->chunk_len += n;
                p->chunk_mid = true;
            }
            return WS_OK;
        }
        rewind_buf(p);
        int r = read_more(p, deadline);
        if (r != 1)
            return r;
    }
}

int ws_pipe_recv(ws_pipe *p, const char **msg, size_t *len, int timeout_ms)
{
    *msg = NULL;
    *len = 0;
    if (p->dead)
        return p->dead;
    if (p->chunk_mid) {
        snprintf(p->err, sizeof p->err, "pipe: a message is being received in pieces");
        return WS_EPROTO;
    }
    int64_t deadline = base_deadline_in(timeout_ms);
    for (;;) {
        uint8_t *z = memchr(p->buf + p->scan, 0, p->end - p->scan);
        if (z) {
            *msg = (const char *)p->buf + p->start;
            *len = (size_t)(z - (p->buf + p->start));
            p->start = p->scan = (size_t)(z - p->buf) + 1;
            return WS_OK;
        }
        p->scan = p->end;
        if (p->end - p->start > p->max) {
            snprintf(p->err, sizeof p->err,
                     "pipe: message larger than the maximum of %zu bytes", p->max);
            return p->dead = WS_ETOOBIG;
        }
        /* Make room: drop consumed bytes, then grow. */
        if (p->start == p->end)
            rewind_buf(p);
        else if (p->start > 0 && p->cap - p->end < p->cap / 4)
            compact(p);
        if (p->end == p->cap) {
            size_t ncap = p->cap * 2;
            if (ncap > p->max + 1)
                ncap = p->max + 1;
            if (ncap <= p->cap)
                ncap = p->cap + 1; /* one byte beyond max: proves it too big */
            if (!grow_buf(p, ncap)) {
                snprintf(p->err, sizeof p->err, "pipe: out of memory for a %zu-byte message",
                         p->end - p->start);
                return p->dead = WS_ENOMEM;
            }
        }
        int r = read_more(p, deadline);     /* no message in pieces: chunk_len is 0 */
        if (r != 1)
            return r;
    }
}
