/*
 * test_a11y_scrub.c — the a11y module's pieces that need no browser
 * (session 18, issue 16's left-overs): the axe-core file search on what
 * is not a regular file (red team s17, R7-11), and URLs inside the html
 * snippets' attributes (a11y_html_scrub: the report's URL rule). The
 * browser cases are in test_a11y.c and test_sweep.c.
 */
#include "a11y/a11y.h"
#include "base/base.h"
#include "tests/harness.h"
#include "tests/testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* A temporary directory (mode 0700) into dir; false on failure. */
static bool tempdir(char *dir, size_t cap)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, cap, "%s/a11y-scrub-XXXXXX", t && *t ? t : "/tmp");
    return CHECK(mkdtemp(dir) != NULL);
}

/* dir/node_modules/axe-core made; the file's path into p. */
static void axe_dirs(const char *dir, char *p, size_t cap)
{
    snprintf(p, cap, "%s/node_modules", dir);
    mkdir(p, 0700);
    snprintf(p, cap, "%s/node_modules/axe-core", dir);
    mkdir(p, 0700);
    snprintf(p, cap, "%s/node_modules/axe-core/axe.min.js", dir);
}

/* A unix socket bound at path (its fd, or -1). */
static int sock_at(const char *path)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa.sun_path)
        return -1;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* a11y_axe_load refused, why holding want. */
static void refused(const char *path, const char *want)
{
    a11y_axe ax;
    char why[1500] = "";
    if (!CHECK_INT(-1, a11y_axe_load(path, &ax, why, sizeof why)))
        a11y_axe_free(&ax);
    if (!CHECK_HAS(why, want))
        test_fail_detail("%s: %s", path ? path : "(the search)", why);
    CHECK(ax.src == NULL);
}

/* R7-11: what the search finds at ./node_modules/axe-core/axe.min.js, or
 * what --axe names, that is not a regular file is refused at once with a
 * clear error, never opened for reading in a way that waits: a FIFO (a
 * blocking open() waited for a writer for ever, and the MCP server with
 * it), a socket, a device; a symbolic link the search finds is not
 * followed (one named by --axe is, and its target is checked). Before the
 * fix the FIFO cases never returned (the program hangs: fails). */
static void t_axe_not_regular(void)
{
    char dir[300], here[600], p[700];
    if (!tempdir(dir, sizeof dir) || !CHECK(getcwd(here, sizeof here)))
        return;
    char *env = getenv("CDPGATE_AXE") ? base_strdup(getenv("CDPGATE_AXE")) : NULL;
    unsetenv("CDPGATE_AXE");
    axe_dirs(dir, p, sizeof p);
    /* Before the fix a FIFO blocked for ever: the alarm ends the program
     * (no summary line: tests/run.sh counts a failure). */
    alarm(300);
    if (CHECK_INT(0, chdir(dir))) {
        if (CHECK_INT(0, mkfifo(p, 0600))) {
            refused(NULL, "node_modules/axe-core/axe.min.js: not a regular file (a FIFO)");
            refused(p, "not a regular file (a FIFO)");
            CHECK_INT(0, unlink(p));
        }
        int s = sock_at(p);
        if (CHECK(s >= 0)) {
            refused(NULL, "not a regular file (a socket");
            refused(p, "not a regular file (a socket");
            close(s);
            CHECK_INT(0, unlink(p));
        }
        if (CHECK_INT(0, symlink("/dev/null", p))) {
            refused(NULL, "a symbolic link: the search does not follow one");
            refused(p, "not a regular file (a device)");
            CHECK_INT(0, unlink(p));
        }
        CHECK_INT(0, chdir(here));
    }
    alarm(0);
    if (env)
        setenv("CDPGATE_AXE", env, 1);
    free(env);
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    CHECK_INT(0, system(p));
}

static const test_case TESTS[] = {
    {"axe_not_regular", t_axe_not_regular},
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, TESTS);
}
