/*
 * net.c — the one place in ws/ that opens sockets: TCP connect over
 * getaddrinfo (IPv4 and IPv6) and a recv that waits until an absolute
 * deadline (waiting and sending are base_wait_fd and base_write_all).
 *
 * Sockets are created non-blocking and close-on-exec in one call
 * (SOCK_NONBLOCK | SOCK_CLOEXEC), TCP_NODELAY is set (CDP is request/
 * response; Nagle would add latency), and sends use MSG_NOSIGNAL so a peer
 * that went away yields EPIPE, never SIGPIPE.
 *
 * Limit: getaddrinfo() itself cannot be bounded by the deadline; numeric
 * addresses and /etc/hosts names resolve at once.
 */
#define _GNU_SOURCE /* SOCK_NONBLOCK, SOCK_CLOEXEC, MSG_NOSIGNAL */
#include "ws/ws_int.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Connect one address with the deadline. 0 or an errno value. */
static int connect_one(const struct addrinfo *ai, int64_t deadline, int *fdp)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);
    if (fd < 0)
        return errno;
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS && errno != EINTR) {
            int e = errno;
            close(fd);
            return e;
        }
        int r = base_wait_fd(fd, POLLOUT, deadline);
        if (r <= 0) {
            int e = r == 0 ? ETIMEDOUT : errno;
            close(fd);
            return e;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
            soerr = errno;
        if (soerr) {
            close(fd);
            return soerr;
        }
    }
    *fdp = fd;
    return 0;
}

int ws_tcp_connect(const char *host, int port, int64_t deadline, int *fdp,
                   char *err, size_t errlen)
{
    char hp[300], service[16];
    ws_hostport(host, port, hp, sizeof hp);
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int g = getaddrinfo(host, service, &hints, &res);
    if (g != 0) {
        ws_seterr(err, errlen, "resolve %s: %s", host,
                  g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
        return WS_ERESOLVE;
    }
    int e = 0;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        e = connect_one(ai, deadline, fdp);
        if (e == 0) {
            freeaddrinfo(res);
            return WS_OK;
        }
        if (e == ETIMEDOUT && deadline != BASE_NO_DEADLINE && base_now_ms() >= deadline)
            break;
    }
    freeaddrinfo(res);
    if (e == ETIMEDOUT) {
        ws_seterr(err, errlen, "connect to %s: timed out", hp);
        return WS_ETIMEOUT;
    }
    ws_seterr(err, errlen, "connect to %s: %s", hp, strerror(e));
    return WS_ECONNECT;
}

ssize_t ws_sock_recv(int fd, void *buf, size_t cap, int64_t deadline, bool try_first)
{
    for (;;) {
        if (!try_first) {
            int r = base_wait_fd(fd, POLLIN, deadline);
            if (r == 0)
                return WS_ETIMEOUT;
            if (r < 0)
                return WS_EIO;
        }
        ssize_t n = recv(fd, buf, cap, 0);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            try_first = false;
            continue;
        }
        return WS_EIO;
    }
}
