/*
 * key.c — where the vault key comes from: a command ($CDPGATE_KEY_CMD, for
 * an OS keyring CLI) or a 0600 key file created on first use.
 *
 * Invariants: the key (and the command's output, which is the key) never
 * reaches an error message; every buffer that held it is wiped. The command
 * runs through /bin/sh -c in its own process group with stdin from
 * /dev/null and stderr inherited (so a keyring tool can say why it failed);
 * its stdout is read through a pipe, at most 256 bytes, until EOF, and the
 * whole group is killed when it outlasts the deadline.
 *
 * The key file is created by base_file_put: a temporary file (O_CREAT|
 * O_EXCL, 0600), fsync, then link(2) to the final name, which fails if
 * another process got there first: nobody ever reads a half-written key
 * file.
 */
#define _GNU_SOURCE 1
#include "vault/vault_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* 64 hex digits (white space around them allowed) or exactly 32 bytes. */
static int parse_key(const uint8_t *out, size_t n, uint8_t key[32])
{
    size_t a = 0, b = n;
    while (a < b && is_space(out[a]))
        a++;
    while (b > a && is_space(out[b - 1]))
        b--;
    if (b - a == 64) {
        int bad = 0;
        for (size_t i = 0; i < 32; i++) {
            int hi = base_hex_value(out[a + 2 * i]), lo = base_hex_value(out[a + 2 * i + 1]);
            bad |= (hi | lo) < 0;
            key[i] = (uint8_t)((hi << 4) | (lo & 15));
        }
        if (!bad)
            return VAULT_OK;
    }
    if (n == 32) {
        memcpy(key, out, 32);
        return VAULT_OK;
    }
    base_memzero(key, 32);
    return VAULT_EKEY;
}

int vault_key_from_cmd(const char *cmd, uint8_t key[32], char *err, size_t errlen)
{
    return vault_key_from_cmd_timeout(cmd, VAULT_KEY_CMD_TIMEOUT_MS, key, err, errlen);
}

int vault_key_from_cmd_timeout(const char *cmd, int timeout_ms, uint8_t key[32], char *err,
                               size_t errlen)
{
    int p[2];
    if (pipe(p) != 0)
        return vault_seterr(err, errlen, VAULT_EKEY, "CDPGATE_KEY_CMD: pipe: %s",
                            strerror(errno));
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawnattr_setpgroup(&at, 0);
    short flags = POSIX_SPAWN_SETPGROUP;
    /* The child starts with default signal dispositions for SIGPIPE etc. */
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    posix_spawnattr_setsigdefault(&at, &def);
    flags |= POSIX_SPAWN_SETSIGDEF;
    posix_spawnattr_setflags(&at, flags);
    char *argv[] = {"sh", "-c", (char *)cmd, NULL};
    pid_t pid;
    int src = posix_spawn(&pid, "/bin/sh", &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(p[1]);
    if (src != 0) {
        close(p[0]);
        return vault_seterr(err, errlen, VAULT_EKEY, "CDPGATE_KEY_CMD: cannot run /bin/sh: %s",
                            strerror(src));
    }
    uint8_t out[257];
    size_t n = 0;
    int64_t deadline = base_now_ms() + timeout_ms;
    int rc = VAULT_OK, timed_out = 0;
    for (;;) {
        int64_t left = deadline - base_now_ms();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pf = {p[0], POLLIN, 0};
        int pr = poll(&pf, 1, (int)left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0)
            continue;   /* the deadline check above ends the loop */
        if (pr < 0) {
            rc = vault_seterr(err, errlen, VAULT_EKEY, "CDPGATE_KEY_CMD: poll: %s",
                              strerror(errno));
            break;
        }
        ssize_t r = read(p[0], out + n, sizeof out - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == sizeof out) {
            rc = vault_seterr(err, errlen, VAULT_EKEY,
                              "CDPGATE_KEY_CMD printed more than 256 bytes; expected a key");
            break;
        }
    }
    close(p[0]);
    if (timed_out || rc)
        kill(-pid, SIGKILL);
    int status = 0;
    int64_t wait_deadline = base_now_ms() + (timed_out || rc ? 2000 : timeout_ms);
    pid_t w;
    /* The output is complete (EOF); wait for the exit status too, bounded. */
    while ((w = waitpid(pid, &status, WNOHANG)) == 0 && base_now_ms() < wait_deadline) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    if (w == 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        if (!rc)
            timed_out = 1;
    }
    if (timed_out && !rc)
        rc = vault_seterr(err, errlen, VAULT_EKEY,
                          "CDPGATE_KEY_CMD did not finish within %d ms", timeout_ms);
    else if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        rc = WIFEXITED(status)
           ? vault_seterr(err, errlen, VAULT_EKEY, "CDPGATE_KEY_CMD exited with status %d",
                          WEXITSTATUS(status))
           : vault_seterr(err, errlen, VAULT_EKEY, "CDPGATE_KEY_CMD killed by signal %d",
                          WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (!rc && parse_key(out, n, key) != VAULT_OK)
        rc = vault_seterr(err, errlen, VAULT_EKEY,
                          "CDPGATE_KEY_CMD printed %zu bytes that are neither 64 hex digits "
                          "nor 32 raw bytes", n);
    base_memzero(out, sizeof out);
    if (rc)
        base_memzero(key, 32);
    return rc;
}

/* Checks shared by the store and the key file: regular file (or directory
 * when dir), owned by us, no group/world bits. */
int vault_check_mode(const struct stat *st, const char *path, int dir, char *err,
                     size_t errlen)
{
    if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
        return vault_seterr(err, errlen, VAULT_EPERM, "%s: not a %s", path,
                            dir ? "directory" : "regular file");
    if (st->st_uid != geteuid())
        return vault_seterr(err, errlen, VAULT_EPERM,
                            "%s: owned by uid %ld, not by this user (uid %ld); refusing it",
                            path, (long)st->st_uid, (long)geteuid());
    if (st->st_mode & 077)
        return vault_seterr(err, errlen, VAULT_EPERM,
                            "%s: mode %04o gives group/world access; expected %s "
                            "(chmod %s %s)", path, (unsigned)(st->st_mode & 07777),
                            dir ? "0700" : "0600", dir ? "700" : "600", path);
    return VAULT_OK;
}

static int read_key_file(int fd, const char *path, uint8_t key[32], char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return vault_seterr(err, errlen, VAULT_EKEY, "%s: %s", path, strerror(errno));
    int rc = vault_check_mode(&st, path, 0, err, errlen);
    if (rc)
        return rc;
    if (st.st_size != 32)
        return vault_seterr(err, errlen, VAULT_EKEY, "%s: %lld bytes, expected 32", path,
                            (long long)st.st_size);
    size_t n = 0;
    while (n < 32) {
        ssize_t r = read(fd, key + n, 32 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            base_memzero(key, 32);
            return vault_seterr(err, errlen, VAULT_EKEY, "%s: short read", path);
        }
        n += (size_t)r;
    }
    return VAULT_OK;
}

/* A new key file at path, or none when another process created one first
 * (then the caller reads that one): base_file_put links, never replaces. */
static int create_key_file(const char *path, char *err, size_t errlen)
{
    uint8_t key[32];
    if (base_random(key, sizeof key))
        return vault_seterr(err, errlen, VAULT_ERANDOM, "no random bytes for the key");
    int step;
    int rc = base_file_put(AT_FDCWD, path, key, sizeof key, BASE_PUT_NEW, &step), e = errno;
    base_memzero(key, sizeof key);
    if (rc == 0 || step == BASE_PUT_ESYNC || (step == BASE_PUT_EPLACE && e == EEXIST))
        return VAULT_OK;
    if (step == BASE_PUT_ERANDOM)
        return vault_seterr(err, errlen, VAULT_ERANDOM, "no random bytes");
    return vault_seterr(err, errlen, VAULT_EKEY, "%s: cannot %s: %s", path,
                        step == BASE_PUT_EWRITE ? "write" : "create", strerror(e));
}

int vault_key_file_at(const char *path, bool create, uint8_t key[32], char *err, size_t errlen)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            int rc = read_key_file(fd, path, key, err, errlen);
            close(fd);
            return rc;
        }
        if (errno == ENOENT && !create)
            return vault_seterr(err, errlen, VAULT_ENOENT, "%s: no such file", path);
        if (errno != ENOENT || attempt)
            return vault_seterr(err, errlen, errno == ELOOP ? VAULT_EPERM : VAULT_EKEY,
                                "%s: cannot open: %s", path, strerror(errno));
        int rc = create_key_file(path, err, errlen);
        if (rc)
            return rc;
    }
    return VAULT_EKEY;
}

int vault_key_default(void *arg, const char *dir, uint8_t key[32], char *err, size_t errlen)
{
    (void)arg;
    const char *cmd = getenv("CDPGATE_KEY_CMD");
    if (cmd && *cmd)
        return vault_key_from_cmd(cmd, key, err, errlen);
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/key", dir) >= sizeof path)
        return vault_seterr(err, errlen, VAULT_EINVAL, "vault directory path too long");
    return vault_key_file_at(path, true, key, err, errlen);
}
