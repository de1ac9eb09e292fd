/*
 * axe_file.c — finding and reading the axe-core the user installed, and the
 * scan's options (tags).
 */
#include "a11y/a11y.h"

#include "base/base.h"
#include "vault/vault.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const PATHS[] = {
    "node_modules/axe-core/axe.min.js",
    "/usr/share/nodejs/axe-core/axe.min.js",
    "/usr/share/javascript/axe-core/axe.min.js",
    "/usr/lib/node_modules/axe-core/axe.min.js",
    "/usr/local/lib/node_modules/axe-core/axe.min.js",
    "~/.npm-global/lib/node_modules/axe-core/axe.min.js",
    "~/node_modules/axe-core/axe.min.js",
    NULL,
};

static const char HOW[] =
    "axe-core is not part of cdpgate: install it with `npm install axe-core` (in this "
    "directory: ./node_modules/axe-core/axe.min.js is found) or `npm install -g "
    "axe-core`, then pass --axe PATH/axe.min.js or set CDPGATE_AXE=PATH/axe.min.js";

/* p with a leading "~/" as $HOME/ into out; false when it does not fit. */
static bool expand(const char *p, char *out, size_t cap)
{
    const char *home = getenv("HOME");
    int n;
    if (strncmp(p, "~/", 2) == 0)
        n = home && *home ? snprintf(out, cap, "%s/%s", home, p + 2) : -1;
    else
        n = snprintf(out, cap, "%s", p);
    return n >= 0 && (size_t)n < cap;
}

/* Why st (an open file's) may not run as axe-core, or NULL: not a regular
 * file, empty or too big, owned by another user (not root), writable by
 * its group or by others (R6-7: anyone but its owner could change it). */
static const char *file_refused(const struct stat *st)
{
    if (!S_ISREG(st->st_mode))
        return S_ISFIFO(st->st_mode) ? "not a regular file (a FIFO): not run"
               : S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)
                   ? "not a regular file (a device): not run"
                   : "not a regular file: not run";
    if (st->st_size <= 0)
        return "empty";
    if ((size_t)st->st_size > A11Y_AXE_MAX)
        return "over 8 MiB: not axe-core";
    if (st->st_uid != geteuid() && st->st_uid != 0)
        return "owned by another user (it must be yours or root's): not run";
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return "writable by its group or by others (chmod go-w it): not run";
    return NULL;
}

/* Read fd (st: its stat, checked) whole into *src. */
static int read_all(int fd, const struct stat *st, const char *path, char **src, size_t *len,
                    char *why, size_t cap)
{
    size_t n = (size_t)st->st_size, got = 0;
    char *buf = malloc(n + 1);
    while (buf && got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if (!buf || got != n) {
        free(buf);
        snprintf(why, cap, "%s: %s", path, buf ? "short read" : "out of memory");
        return -1;
    }
    buf[n] = 0;
    if (strlen(buf) != n) {
        free(buf);
        snprintf(why, cap, "%s: holds NUL bytes: not axe-core", path);
        return -1;
    }
    *src = buf;
    *len = n;
    return 0;
}

/* Open path for reading without waiting (red team s17, R7-11: a FIFO
 * planted where the search looks made a blocking open() wait for a writer
 * for ever, and the MCP server with it): O_NONBLOCK until fstat shows a
 * regular file, O_NOFOLLOW when the search found it (a symbolic link is
 * not followed: fail closed). The fd with *st, or -1 with errno set
 * (ENXIO: a socket). */
static int open_regular(const char *path, bool found, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (found ? O_NOFOLLOW : 0));
    if (fd < 0)
        return -1;
    int fl = fstat(fd, st) == 0 ? fcntl(fd, F_GETFL) : -1;
    if (fl == -1 || (S_ISREG(st->st_mode) && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Why open() failed, for the message. */
static const char *open_why(int err, bool found)
{
    if (err == ELOOP && found)
        return "a symbolic link: the search does not follow one (name the file itself with "
               "--axe): not run";
    if (err == ENXIO)
        return "not a regular file (a socket or a device with no reader): not run";
    return strerror(err);
}

/* Read path whole (found: by the search): 0; -1 with why (missing: ENOENT
 * in *err). Anything but a regular file is refused before a byte is read. */
static int read_file(const char *path, bool found, char **src, size_t *len, int *err,
                     char *why, size_t cap)
{
    *err = 0;
    struct stat st;
    int fd = open_regular(path, found, &st);
    if (fd < 0) {
        *err = errno;
        snprintf(why, cap, "%s: %s", path, open_why(*err, found));
        return -1;
    }
    const char *no = file_refused(&st);
    if (no)
        snprintf(why, cap, "%s: %s", path, no);
    int rc = no ? -1 : read_all(fd, &st, path, src, len, why, cap);
    close(fd);
    return rc;
}

/* The digest and release of out's source. */
static void identify(a11y_axe *out)
{
    unsigned char d[VAULT_SHA256_LEN];
    vault_sha256(out->src, out->len, d);
    for (size_t i = 0; i < sizeof d; i++)
        snprintf(out->sha256 + 2 * i, 3, "%02x", d[i]);
    const char *rel = a11y_axe_release(d);
    snprintf(out->release, sizeof out->release, "%s", rel ? rel : "");
}

/* The file named by --axe or CDPGATE_AXE: the host's choice, any content. */
static int load_given(const char *given, const char *from, a11y_axe *out, char *why,
                      size_t cap)
{
    char one[700];
    int err;
    if (read_file(given, false, &out->src, &out->len, &err, one, sizeof one) != 0) {
        snprintf(why, cap, "axe-core: %s (from %s). %s", one, from, HOW);
        return -1;
    }
    snprintf(out->path, sizeof out->path, "%s", given);
    out->from = from;
    identify(out);
    return 0;
}

/* A file the search found: a published release, or refused (fail closed:
 * the search does not go on past it). */
static int load_found(const char *full, a11y_axe *out, char *why, size_t cap)
{
    snprintf(out->path, sizeof out->path, "%s", full);
    out->from = "found";
    identify(out);
    if (out->release[0])
        return 0;
    snprintf(why, cap, "axe-core: %s was found by the search but is not a published "
             "axe-core release (its SHA-256 is %s, none of the releases 4.3.0 to %s cdpgate "
             "knows): not run. A file found in the working directory or a well-known path "
             "runs only when it is byte for byte a release. Reinstall axe-core there (`npm "
             "install axe-core@%s`), or, if you made this file and trust it, name it "
             "yourself: --axe %s or CDPGATE_AXE=%s", full, out->sha256, A11Y_AXE_NEWEST,
             A11Y_AXE_NEWEST, full, full);
    a11y_axe_free(out);
    return -1;
}

int a11y_axe_load(const char *path, a11y_axe *out, char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    int err;
    char one[700];
    const char *env = getenv("CDPGATE_AXE");
    if (path && *path)
        return load_given(path, "--axe", out, why, cap);
    if (env && *env)
        return load_given(env, "CDPGATE_AXE", out, why, cap);
    for (const char *const *p = PATHS; *p; p++) {
        char full[512];
        if (!expand(*p, full, sizeof full))
            continue;
        if (read_file(full, true, &out->src, &out->len, &err, one, sizeof one) == 0)
            return load_found(full, out, why, cap);
        if (err != ENOENT && err != ENOTDIR) {
            snprintf(why, cap, "axe-core: %s. %s", one, HOW);
            return -1;
        }
    }
    snprintf(why, cap, "axe-core was not found (no --axe, no CDPGATE_AXE, none of "
             "./node_modules/axe-core/axe.min.js, /usr/share/nodejs/axe-core, "
             "/usr/lib/node_modules/axe-core, /usr/local/lib/node_modules/axe-core, "
             "~/.npm-global/lib/node_modules/axe-core). %s", HOW);
    return -1;
}

void a11y_axe_free(a11y_axe *ax)
{
    free(ax->src);
    memset(ax, 0, sizeof *ax);
}

int a11y_tags_json(const char *tags, char **out, char *why, size_t cap)
{
    *out = NULL;
    if (!tags || !*tags)
        tags = A11Y_TAGS_DEFAULT;
    base_buf b = {0};
    base_buf_putc(&b, '[');
    size_t n = 0;
    for (const char *p = tags; *p;) {
        size_t k = strcspn(p, ",");
        if (k == 0 || k > 40) {
            base_buf_free(&b);
            snprintf(why, cap, "tags: each tag is 1 to 40 characters, comma-separated");
            return -1;
        }
        for (size_t i = 0; i < k; i++) {
            char c = p[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '.' || c == '_')) {
                base_buf_free(&b);
                snprintf(why, cap, "tags: '%.*s' has a character other than letters, "
                         "digits, '-', '.', '_'", (int)k, p);
                return -1;
            }
        }
        if (++n > 32) {
            base_buf_free(&b);
            snprintf(why, cap, "tags: at most 32");
            return -1;
        }
        base_buf_printf(&b, "%s\"%.*s\"", n > 1 ? "," : "", (int)k, p);
        p += k;
        if (*p == ',' && *++p == 0) {
            base_buf_free(&b);
            snprintf(why, cap, "tags: a trailing comma");
            return -1;
        }
    }
    base_buf_putc(&b, ']');
    *out = base_buf_take(&b, NULL);
    if (!*out)
        snprintf(why, cap, "out of memory");
    return *out ? 0 : -1;
}
