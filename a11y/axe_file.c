/*
 * axe_file.c — finding and reading the axe-core the user installed, and the
 * scan's options (tags).
 */
#include "a11y/a11y.h"

#include "base/base.h"

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

/* Read path whole: 0; -1 with why (missing: ENOENT in *err). */
static int read_file(const char *path, char **src, size_t *len, int *err, char *why,
                     size_t cap)
{
    *err = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        *err = errno;
        snprintf(why, cap, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (size_t)st.st_size > A11Y_AXE_MAX) {
        close(fd);
        snprintf(why, cap, "%s: %s", path, !S_ISREG(st.st_mode) ? "not a regular file"
                 : st.st_size <= 0 ? "empty" : "over 8 MiB: not axe-core");
        return -1;
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = malloc(n + 1);
    while (buf && got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
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

int a11y_axe_load(const char *path, char **src, size_t *len, char *used, size_t ucap,
                  char *why, size_t cap)
{
    *src = NULL;
    *len = 0;
    int err;
    char one[600];
    const char *env = getenv("CDPGATE_AXE");
    const char *given = path && *path ? path : env && *env ? env : NULL;
    if (given) {
        if (read_file(given, src, len, &err, one, sizeof one) == 0) {
            snprintf(used, ucap, "%s", given);
            return 0;
        }
        snprintf(why, cap, "axe-core: %s (from %s). %s", one,
                 path && *path ? "--axe" : "CDPGATE_AXE", HOW);
        return -1;
    }
    for (const char *const *p = PATHS; *p; p++) {
        char full[512];
        if (!expand(*p, full, sizeof full))
            continue;
        if (read_file(full, src, len, &err, one, sizeof one) == 0) {
            snprintf(used, ucap, "%s", full);
            return 0;
        }
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
