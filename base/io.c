/*
 * io.c — monotonic time, deadlines, waiting on a descriptor with poll(),
 * the one write loop every module uses (files, the audit log, stdout,
 * the browser's pipe, sockets), and the one all-or-nothing file write
 * (temporary file, fsync, rename or link: the vault's sessions and key,
 * the CLI's exports).
 */
#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int64_t base_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t base_now_ms(void) { return base_now_ns() / 1000000; }

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

/* The directory of name (relative to dirfd) fsync'd: 0 or -1 with errno. */
static int sync_dir(int dirfd, const char *name, size_t dl)
{
    char dir[PATH_MAX];
    if (dl == 0 && dirfd != AT_FDCWD)
        return fsync(dirfd);
    if (dl >= sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (dl == 0)
        memcpy(dir, ".", 2);
    else if (dl == 1)
        memcpy(dir, "/", 2);
    else {
        memcpy(dir, name, dl - 1);
        dir[dl - 1] = 0;
    }
    int fd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd), e = errno;
    close(fd);
    errno = e;
    return rc;
}

int base_file_put(int dirfd, const char *name, const void *data, size_t len, unsigned how,
                  int *step)
{
    int dummy;
    if (!step)
        step = &dummy;
    const char *slash = strrchr(name, '/');
    size_t dl = slash ? (size_t)(slash - name) + 1 : 0;    /* with the '/' */
    char tmp[PATH_MAX + 64];
    uint8_t r[6];
    *step = BASE_PUT_ECREATE;
    if (!name[dl] || dl > PATH_MAX) {
        errno = name[dl] ? ENAMETOOLONG : EISDIR;
        return -1;
    }
    if (base_random(r, sizeof r)) {
        *step = BASE_PUT_ERANDOM;
        return -1;
    }
    int w = snprintf(tmp, sizeof tmp, "%.*s.tmp.%s.%ld.%02x%02x%02x%02x%02x%02x", (int)dl, name,
                     name + dl, (long)getpid(), r[0], r[1], r[2], r[3], r[4], r[5]);
    if (w < 0 || (size_t)w >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = 0, e = 0;
    *step = BASE_PUT_EWRITE;
    if (fchmod(fd, 0600) != 0 || base_write_all(fd, data, len, BASE_NO_DEADLINE, 0, NULL) != 0 ||
        fsync(fd) != 0) {
        rc = -1;
        e = errno;
    }
    if (close(fd) != 0 && !rc) {
        rc = -1;
        e = errno;
    }
    if (!rc) {
        *step = BASE_PUT_EPLACE;
        if ((how == BASE_PUT_NEW ? linkat(dirfd, tmp, dirfd, name, 0)
                                 : renameat(dirfd, tmp, dirfd, name)) != 0) {
            rc = -1;
            e = errno;
        }
    }
    if (rc || how == BASE_PUT_NEW)
        unlinkat(dirfd, tmp, 0);   /* after a link, the second name */
    if (rc) {
        errno = e;
        return -1;
    }
    *step = BASE_PUT_ESYNC;
    if (sync_dir(dirfd, name, dl))
        return -1;
    *step = 0;
    return 0;
}
