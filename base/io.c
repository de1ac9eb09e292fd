/*
 * io.c — monotonic time, deadlines, waiting on a descriptor with poll(),
 * and the one write loop every module uses (files, the audit log, stdout,
 * the browser's pipe, sockets).
 */
#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include "base/base.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int64_t base_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t base_deadline_in(int timeout_ms)
{
    if (timeout_ms < 0)
        return BASE_NO_DEADLINE;
    return base_now_ms() + timeout_ms;
}

static int poll_timeout(int64_t deadline)
{
    if (deadline == BASE_NO_DEADLINE)
        return -1;
    int64_t left = deadline - base_now_ms();
    if (left <= 0)
        return 0;
    return left > INT_MAX ? INT_MAX : (int)left;
}

int base_wait_fd(int fd, short events, int64_t deadline)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    for (;;) {
        int r = poll(&pfd, 1, poll_timeout(deadline));
        if (r > 0)
            return 1;
        if (r == 0) {
            if (deadline != BASE_NO_DEADLINE && base_now_ms() < deadline)
                continue; /* woke early (clock granularity) */
            return 0;
        }
        if (errno != EINTR)
            return -1;
    }
}

int base_write_all(int fd, const void *buf, size_t len, int64_t deadline, unsigned flags,
                   size_t *done)
{
    const char *p = buf;
    size_t off = 0;
    int rc = 0;
    while (off < len) {
        ssize_t n = (flags & BASE_WRITE_SOCKET) ? send(fd, p + off, len - off, MSG_NOSIGNAL)
                                                : write(fd, p + off, len - off);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int r = base_wait_fd(fd, POLLOUT, deadline);
            if (r > 0)
                continue;
            if (r == 0)
                errno = ETIMEDOUT;
            rc = -1;
            break;
        }
        if (n == 0)
            errno = EIO;
        rc = -1;
        break;
    }
    if (done)
        *done = off;
    return rc;
}
