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

/* A bearer-shaped path segment (url_redact's rule: 16+ URL-safe
 * characters mixing letters and digits, no sequence of words). */
#define RESET_TOK "Zk3p9QwXr7Lm2Vb8Tn4Yc6"

/* Issue 16 left-over (session 17): a URL inside a snippet's attribute kept
 * its bearer token (an href with ?token=, a fragment's access_token, a
 * /reset/<random> link; src, srcset, action, formaction, data-*). Each is
 * now written by the report's URL rule (url_redact with the bearer rule,
 * as the recorder and the evidence show URLs); other attributes and
 * ordinary URLs are kept byte for byte. Failed before: the tokens kept. */
static void t_scrub_urls(void)
{
    static const struct {
        const char *in, *out;
    } C[] = {
        {"<a href=\"https://app.test/reset?token=SECRETtok123&amp;x=1\">Reset</a>",
         "<a href=\"https://app.test/reset?token=[redacted]&amp;x=1\">Reset</a>"},
        {"<a href=\"/cb#access_token=ya29.SECRETaccess99&amp;state=1\">",
         "<a href=\"/cb#[redacted]\">"},          /* a fragment holding values: whole */
        {"<a href=\"/reset/" RESET_TOK "\">Set a new password</a>",
         "<a href=\"/reset/[redacted]\">Set a new password</a>"},
        {"<img src=\"/i.png?sig=1&amp;X-Amz-Signature=SECRETsig0042\" alt=\"\">",
         "<img src=\"/i.png?sig=[redacted]&amp;X-Amz-Signature=[redacted]\" alt=\"\">"},
        {"<img srcset=\"/a.png?token=SECRETset77 1x, /reset/" RESET_TOK " 2x\">",
         "<img srcset=\"/a.png?token=[redacted] 1x, /reset/[redacted] 2x\">"},
        {"<form action=\"/pay?api_key=SECRETkey5150\"><button formaction=\"/x?password=hunter2\">",
         "<form action=\"/pay?api_key=[redacted]\"><button formaction=\"/x?password=[redacted]\">"},
        {"<div data-next=\"/cb?token=SECRETdata31\" data-n=\"3\">",
         "<div data-next=\"/cb?token=[redacted]\" data-n=\"3\">"},
        /* Kept: ordinary URLs, text attributes (an apostrophe, a slash). */
        {"<a href=\"/docs/page.html?lang=en#top\" title=\"a/b\">Docs</a>",
         "<a href=\"/docs/page.html?lang=en#top\" title=\"a/b\">Docs</a>"},
        {"<button aria-label=\"Don't save\" class=\"btn x\">",
         "<button aria-label=\"Don't save\" class=\"btn x\">"},
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        char *s = a11y_html_scrub(C[i].in);
        if (!CHECK_STR(C[i].out, s))
            test_fail_detail("case %zu", i);
        free(s);
    }
    /* axe's cut snippet writes values raw: a quote in one makes the tag
     * odd, the href read as other attributes; the token still goes. */
    static const char *const ODD[] = {
        "<a data-x=\"a\" z=\" href=\"/reset/" RESET_TOK "\" ...>",
        "<a title=\"say \"hi\" href=\"/cb?token=SECRETodd8181\" ...>",
    };
    for (size_t i = 0; i < sizeof ODD / sizeof ODD[0]; i++) {
        char *s = a11y_html_scrub(ODD[i]);
        CHECK(s != NULL);
        if (!CHECK_LACKS(s, RESET_TOK) || !CHECK_LACKS(s, "SECRETodd8181"))
            test_fail_detail("odd case %zu: %s", i, s ? s : "(null)");
        free(s);
    }
    /* In results: every "html", nested too. */
    const char *res = "{\"violations\":[{\"nodes\":[{\"html\":\"<a href=\\\"/reset/" RESET_TOK
                      "\\\">x</a>\",\"target\":[\"a[href$=\\\"" RESET_TOK "\\\"]\"],\"any\":[{\"relatedNodes\":[{\"html\":\"<a href=\\\"/r?"
                      "token=SECRETrel4242\\\">y</a>\"}]}]}]}]}";
    char *s = a11y_results_scrub(res, strlen(res));
    CHECK(s != NULL);
    CHECK_LACKS(s, RESET_TOK);
    CHECK_LACKS(s, "SECRETrel4242");
    CHECK_HAS(s, "/reset/[redacted]");
    CHECK_HAS(s, "\"target\":[\"a[href$=\\\"[redacted]\\\"]\"]");
    free(s);
}

static const test_case TESTS[] = {
    {"axe_not_regular", t_axe_not_regular},
    {"scrub_urls", t_scrub_urls},
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, TESTS);
}
