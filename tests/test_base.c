/*
 * test_base.c — base/: the write loop (short writes on a non-blocking
 * descriptor, its deadline, a closed socket peer without SIGPIPE), the
 * growing text buffer (growth, long printf, take, allocation failure),
 * random bytes and the wipe, the all-or-nothing file write. base64 is held to RFC 4648 in test_ws.c's
 * base64_* tests (they read the shared vectors there).
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include "base/base.h"
#include "tests/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child reads fd to EOF and exits with (sum of bytes) & 0x7f. */
static pid_t spawn_reader(int fd, int other)
{
    pid_t pid = fork();
    if (pid == 0) {
        close(other);
        unsigned sum = 0;
        uint8_t b[4096];
        ssize_t n;
        while ((n = read(fd, b, sizeof b)) != 0) {
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                _exit(255);
            for (ssize_t i = 0; i < n; i++)
                sum += b[i];
        }
        _exit((int)(sum & 0x7f));
    }
    return pid;
}

static void t_write_all_short_writes(void)
{
    /* 4 MB through a non-blocking 64 KB pipe: write() returns short counts
     * and EAGAIN many times; everything must arrive, in order. */
    int p[2];
    CHECK_INT(0, pipe(p));
    (void)fcntl(p[1], F_SETPIPE_SZ, 65536);
    CHECK_INT(0, fcntl(p[1], F_SETFL, O_NONBLOCK));
    pid_t pid = spawn_reader(p[0], p[1]);
    CHECK(pid > 0);
    close(p[0]);
    size_t len = (size_t)4 << 20;
    uint8_t *buf = malloc(len);
    unsigned sum = 0;
    for (size_t i = 0; i < len; i++) {
        buf[i] = (uint8_t)(i * 7 + 3);
        sum += buf[i];
    }
    size_t done = 0;
    CHECK_INT(0, base_write_all(p[1], buf, len, BASE_NO_DEADLINE, 0, &done));
    CHECK_INT((long long)len, (long long)done);
    close(p[1]);
    int st = 0;
    CHECK_INT(pid, waitpid(pid, &st, 0));
    CHECK(WIFEXITED(st));
    CHECK_INT(sum & 0x7f, WEXITSTATUS(st));
    free(buf);
}

static void t_write_all_deadline(void)
{
    /* Nobody reads: the pipe fills, then the deadline ends the wait. */
    int p[2];
    CHECK_INT(0, pipe(p));
    CHECK_INT(0, fcntl(p[1], F_SETFL, O_NONBLOCK));
    size_t len = (size_t)8 << 20, done = 0;
    uint8_t *buf = calloc(1, len);
    errno = 0;
    CHECK_INT(-1, base_write_all(p[1], buf, len, base_deadline_in(50), 0, &done));
    CHECK_INT(ETIMEDOUT, errno);
    CHECK(done > 0 && done < len);
    free(buf);
    close(p[0]);
    close(p[1]);
}

static void t_write_all_closed_socket(void)
{
    /* A closed peer is EPIPE, not a SIGPIPE that kills the process. */
    int sv[2];
    CHECK_INT(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    close(sv[1]);
    errno = 0;
    CHECK_INT(-1, base_write_all(sv[0], "abc", 3, BASE_NO_DEADLINE, BASE_WRITE_SOCKET, NULL));
    CHECK_INT(EPIPE, errno);
    close(sv[0]);
}

static void t_write_all_bad_fd(void)
{
    size_t done = 7;
    errno = 0;
    CHECK_INT(-1, base_write_all(-1, "x", 1, BASE_NO_DEADLINE, 0, &done));
    CHECK_INT(EBADF, errno);
    CHECK_INT(0, done);
    CHECK_INT(0, base_write_all(-1, "", 0, BASE_NO_DEADLINE, 0, NULL));
}

static void t_buf(void)
{
    base_buf b = {0};
    base_buf_puts(&b, "ab");
    base_buf_putc(&b, 'c');
    base_buf_put(&b, "dxx", 1);
    base_buf_printf(&b, "-%d-", 42);
    CHECK_STR("abcd-42-", b.s);
    CHECK_INT(8, b.len);
    /* A printf longer than any stack buffer arrives whole. */
    char big[3000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = 0;
    base_buf_printf(&b, "[%s]", big);
    CHECK_INT(8 + 2 + 2999, b.len);
    CHECK(b.s[b.len - 1] == ']' && b.s[10] == 'q' && b.s[b.len] == 0);
    CHECK(!b.oom);
    size_t n = 0;
    char *s = base_buf_take(&b, &n);
    CHECK(s != NULL);
    CHECK_INT(3009, n);
    CHECK(b.s == NULL && b.len == 0 && b.cap == 0);
    free(s);
    /* Empty: take gives "" allocated. */
    s = base_buf_take(&b, &n);
    CHECK(s != NULL);
    CHECK_STR("", s);
    free(s);
    base_buf_free(NULL);
}

static void t_grow(void)
{
    size_t cap = 0;
    int *v = base_grow(NULL, 1, &cap, sizeof *v, 4);
    CHECK(v != NULL);
    CHECK_INT(4, cap);
    CHECK(base_grow(v, 4, &cap, sizeof *v, 4) == v);  /* fits: unchanged */
    v[3] = 7;
    int *w = base_grow(v, 5, &cap, sizeof *v, 4);
    CHECK(w != NULL);
    CHECK_INT(8, cap);
    CHECK_INT(7, w[3]);
    /* An overflowing size fails and leaves the array and cap alone. */
    CHECK(base_grow(w, SIZE_MAX / 2, &cap, sizeof *w, 4) == NULL);
    CHECK_INT(8, cap);
    test_fail_alloc_after(0, 1);
    CHECK(base_grow(w, 9, &cap, sizeof *w, 4) == NULL);
    test_fail_alloc_off();
    CHECK_INT(8, cap);
    free(w);
}

static void t_strdup(void)
{
    char *a = base_strdup("abc");
    CHECK_STR("abc", a);
    free(a);
    char *e = base_strdup(NULL);
    CHECK_STR("", e);
    free(e);
    test_fail_alloc_after(0, 1);
    CHECK(base_strdup("x") == NULL);
    test_fail_alloc_off();
}

static void t_buf_alloc_failure(void)
{
    base_buf b = {0};
    base_buf_puts(&b, "x");
    test_fail_alloc_after(0, 1);
    char big[600];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = 0;
    base_buf_puts(&b, big);
    base_buf_printf(&b, "%s", big);
    test_fail_alloc_off();
    CHECK(b.oom);
    base_buf_puts(&b, "y"); /* a no-op once oom */
    CHECK_STR("x", b.s);
    CHECK(base_buf_take(&b, NULL) == NULL);
    CHECK(b.s == NULL && !b.oom);
}

static void t_random_and_wipe(void)
{
    uint8_t a[32], b[32], z[32] = {0};
    CHECK_INT(0, base_random(a, sizeof a));
    CHECK_INT(0, base_random(b, sizeof b));
    CHECK(memcmp(a, b, sizeof a) != 0);
    base_memzero(a, sizeof a);
    CHECK_MEM(z, sizeof z, a, sizeof a);
    base_memzero(NULL, 5);
    CHECK_INT(0, base_random(a, 0));
}

static void t_time(void)
{
    int64_t t0 = base_now_ms();
    CHECK(t0 >= 0);
    CHECK(base_now_ms() >= t0);
    /* the same clock in nanoseconds, monotonic too */
    int64_t n0 = base_now_ns();
    CHECK(n0 / 1000000 >= t0 && base_now_ns() >= n0);
    CHECK_INT(BASE_NO_DEADLINE, base_deadline_in(-1));
    CHECK(base_deadline_in(1000) >= t0 + 1000);
    int p[2];
    CHECK_INT(0, pipe(p));
    CHECK_INT(0, base_wait_fd(p[0], POLLIN, base_now_ms()));
    CHECK_INT(1, write(p[1], "x", 1));
    CHECK_INT(1, base_wait_fd(p[0], POLLIN, BASE_NO_DEADLINE));
    close(p[0]);
    close(p[1]);
}

/* The bytes of dir/name into buf (NUL-terminated): their count, or -1. */
static ssize_t slurp(const char *dir, const char *name, char *buf, size_t cap)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    buf[n < 0 ? 0 : n] = 0;
    return n;
}

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

/* base_file_put: rename replaces, link never clobbers (EEXIST, the old
 * bytes stay), mode 0600 whatever the umask, no temporary file left on
 * any path, a name with a directory part, a missing directory named as
 * the create step. */
static void t_file_put(void)
{
    char dir[] = "/tmp/cdpgate-test-base-XXXXXX", buf[64], sub[600];
    if (!CHECK(mkdtemp(dir) != NULL))
        return;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    mode_t um = umask(0);
    int step = -1;
    CHECK_INT(0, base_file_put(dfd, "a", "one", 3, BASE_PUT_NEW, &step));
    CHECK_INT(0, step);
    umask(um);
    CHECK_INT(3, slurp(dir, "a", buf, sizeof buf));
    CHECK_STR("one", buf);
    struct stat st;
    CHECK_INT(0, fstatat(dfd, "a", &st, 0));
    CHECK_INT(0600, st.st_mode & 07777);
    CHECK_INT(-1, base_file_put(dfd, "a", "two", 3, BASE_PUT_NEW, &step));
    CHECK_INT(EEXIST, errno);
    CHECK_INT(BASE_PUT_EPLACE, step);
    CHECK_INT(3, slurp(dir, "a", buf, sizeof buf));
    CHECK_STR("one", buf);
    CHECK_INT(0, base_file_put(dfd, "a", "three", 5, BASE_PUT_REPLACE, NULL));
    CHECK_INT(5, slurp(dir, "a", buf, sizeof buf));
    CHECK_STR("three", buf);
    CHECK_INT(1, entries(dir));
    /* A path with a directory part, relative to the working directory. */
    CHECK_INT(0, mkdirat(dfd, "d", 0700));
    snprintf(sub, sizeof sub, "%s/d/b", dir);
    CHECK_INT(0, base_file_put(AT_FDCWD, sub, "", 0, BASE_PUT_NEW, &step));
    snprintf(sub, sizeof sub, "%s/d", dir);
    CHECK_INT(0, slurp(sub, "b", buf, sizeof buf));
    CHECK_INT(1, entries(sub));
    CHECK_INT(-1, base_file_put(dfd, "nodir/c", "x", 1, BASE_PUT_REPLACE, &step));
    CHECK_INT(ENOENT, errno);
    CHECK_INT(BASE_PUT_ECREATE, step);
    CHECK_INT(-1, base_file_put(dfd, "d/", "x", 1, BASE_PUT_REPLACE, &step));
    CHECK_INT(BASE_PUT_ECREATE, step);
    CHECK_INT(2, entries(dir));
    close(dfd);
    test_rm_rf(dir);
}

static const test_case TESTS[] = {
    {"write_all_short_writes", t_write_all_short_writes},
    {"write_all_deadline", t_write_all_deadline},
    {"write_all_closed_socket", t_write_all_closed_socket},
    {"write_all_bad_fd", t_write_all_bad_fd},
    {"buf", t_buf},
    {"buf_alloc_failure", t_buf_alloc_failure},
    {"grow", t_grow},
    {"strdup", t_strdup},
    {"random_and_wipe", t_random_and_wipe},
    {"time", t_time},
    {"file_put", t_file_put},
    {0, 0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, TESTS);
}
