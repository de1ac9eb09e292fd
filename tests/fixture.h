/*
 * fixture.h — test support for integration tests: a loopback HTTP server for
 * the fixture pages in tests/fixtures/, and helpers to find and launch the
 * browser under test.
 */
#ifndef CDPGATE_TESTS_FIXTURE_H
#define CDPGATE_TESTS_FIXTURE_H

#include <stdbool.h>
#include <sys/types.h>

/* Serve tests/fixtures/ on 127.0.0.1 (any host name reaching it works, see
 * FIXTURE_HOST_RULES) from a forked child, one child per connection.
 * Special paths: /slow?ms=N answers after N ms; /barrier?n=N&key=K
 * answers when N requests for K have come (a page whose image without
 * alt text has the class "together"), or after 20 s ("alone"); /status?code=N answers N;
 * /echo-host answers the Host header; /echo-cookie shows the Cookie header
 * in a page. The bank (tests/fixtures/bank/, for the login tests):
 * a POST of the login form (user, pw, otp) to /bank/login/verify with
 * otp=FIXTURE_BANK_OTP redirects to /bank/account setting the HttpOnly
 * cookie bank_session=FIXTURE_BANK_SESSION (another code: back to the login
 * page); /bank/account serves account.html only
 * with that cookie, else redirects to /bank/login.html; /bank/signout
 * expires bank_session and bank_pref (Max-Age=0) and its page clears
 * localStorage (?only=pref: expires bank_pref only and keeps localStorage;
 * ?only=cookies: expires both cookies, keeps localStorage); the sign-in
 * links /bank/magic?t=FIXTURE_BANK_MAGIC and /bank/login/link?n=
 * FIXTURE_BANK_LINK set bank_session too and redirect to /bank/account
 * (R8-6 b). Returns the port or -1. */
int fixture_server_start(pid_t *pid);

/* Planted secrets of the bank fixture: the one-time code the server wants,
 * the HttpOnly session cookie it sets; the script of bank/login.html sets
 * the cookie bank_pref=FIXTURE_BANK_PREF and localStorage bank_token=
 * FIXTURE_BANK_TOKEN (keep both files in step; the pages join the values
 * at run time, so their text, which the driver reads, never holds them
 * whole). The password the test types is its own. None may ever appear in
 * cdpgate's output, nor in its memory once a restore or capture is done. */
#define FIXTURE_BANK_OTP      "731906"
#define FIXTURE_BANK_SESSION  "hs-planted-c0ffee42"
#define FIXTURE_BANK_PREF     "js-planted-5e5e91"
#define FIXTURE_BANK_TOKEN    "ls-planted-7a7a33"
#define FIXTURE_BANK_MAGIC    "mq7Zr2LpT9vXw4KaYb8NcDe3FgHj6Ls"   /* a magic link's token */
#define FIXTURE_BANK_LINK     "42"       /* a sign-in link's number, not secret-shaped */

void fixture_server_stop(pid_t pid);

/* The switch: pages that change between a recording and a replay, under
 * the same URL. After fixture_server_switch("v2") (letters, digits, '-',
 * '_'; at most 63), a request for DIR/NAME is served from
 * tests/fixtures/DIR/v2/NAME when that file exists, else DIR/NAME as
 * before; "" switches back. It holds for the server the process started
 * (every later request: the value is in memory the server shares) and
 * is reset by fixture_server_start. 0, or -1 (no server started, or a
 * bad version).
 * The retailer (tests/fixtures/retail/, a login-walled shop for the
 * price-watch task): every /retail/ path but /retail/login.html is served
 * only with the cookie retail_session=FIXTURE_RETAIL_SESSION (restored
 * from the vault), else redirected to /retail/login.html; under the
 * switch "expired" the site has ended the session: the redirect also
 * expires the cookie (Max-Age=0). */
int fixture_server_switch(const char *version);
#define FIXTURE_RETAIL_SESSION "rs-planted-d00d5e"

/* "http://HOST:PORT/PATH" for a fixture page (path starts with '/'),
 * truncated to cap. */
void fixture_url(char *out, size_t cap, int port, const char *host, const char *path);

/* Log every request the server gets (call before fixture_server_start):
 * one line each, appended with one write before the answer,
 *   METHOD HOST PATH?QUERY cookies=NAME,NAME body=FIRST-BYTES
 * (cookie names only, never values; the body's first 200-odd bytes with
 * non-printing bytes as '.'). Gate endpoints for the acceptance suite:
 * /gate/sink answers a small "Received" page to any method;
 * /gate/cookie-names shows the names of the cookies sent; /gate/news
 * serves gate/news.html setting the cookie news_visitor;
 * /gate/redirect?to=URL answers 302 to URL; /gate/net-report serves
 * gate/net-report.html under a Content-Security-Policy (img-src 'self')
 * whose report-uri is evil.test's /gate/sink?tag=net-cspreport. Requests
 * with other methods than GET and POST are logged, then answered 400. */
void fixture_server_log(const char *path);
/* A request to /die (logged like any) then SIGKILLs the browser processes
 * (command line holding "chrom") whose parent is parent, and answers 3 s
 * later: the browser is gone after the page sent the request (an action
 * whose outcome cannot be known). Set after fixture_server_start; 0: none. */
void fixture_server_die_parent(pid_t parent);

/* Browser argument mapping the fixture host names (*.test) to loopback:
 * a.test -> 127.0.0.1, b.test -> 127.0.0.2 (a different site, so an iframe
 * between them is out-of-process). */
#define FIXTURE_HOST_RULES \
    "--host-resolver-rules=MAP a.test 127.0.0.1, MAP b.test 127.0.0.2, " \
    "MAP *.test 127.0.0.1"

/* Path of the browser for tests, or NULL (then the test calls test_skip). */
const char *fixture_browser(void);

/* Count live processes whose command line contains needle. */
int fixture_count_procs(const char *needle);

/* Run a command line through /bin/sh, capturing stdout and stderr into new
 * buffers (free them); returns the exit status (or -1). */
int fixture_run(const char *cmd, char **out, char **err);

/* Start `node SCRIPT ARG1 ARG2` (args may be NULL) from tests/peers, read the
 * port it prints on its first stdout line. Returns the port, or -1 when node
 * or tests/peers/node_modules is missing (why says which) or it failed. */
int fixture_node_start(const char *script, const char *arg1, const char *arg2,
                       pid_t *pid, char *why, size_t whylen);
void fixture_node_stop(pid_t pid);

/* A loopback port nothing listens on (bound, then closed). */
int fixture_closed_port(void);

/* A child program (cdpgate) with its stdin and stdout on pipes, its stderr
 * in the file errfile, and with fd3 a pipe whose read end is its
 * descriptor 3 (--control-fd 3, --login-done-fd 3) and whose write end is
 * fd3_w (else -1). It dies with the test process (PR_SET_PDEATHSIG). */
typedef struct {
    pid_t pid;
    int in, out, fd3_w;
    char errfile[300];
    char *got;                   /* everything read from out so far */
    size_t ngot;
} fixture_child;
/* env: "K=V" to set, "K" to unset, NULL-terminated (may be NULL). 0 or -1. */
int fixture_child_spawn(fixture_child *c, const char *errfile, const char *const *env,
                        const char *const *argv, bool fd3);
/* Read its stdout until needle appears after offset from, or timeout_ms
 * passes: the position, or NULL. */
const char *fixture_child_read_until(fixture_child *c, size_t from, const char *needle,
                                     int timeout_ms);
/* What it wrote to stderr so far (new; "" when nothing). */
char *fixture_child_stderr(const fixture_child *c);
/* Close its stdin and fd 3, wait for its exit (bounded; else SIGKILL by
 * pid), reading its stdout meanwhile. Its exit status (128 for a signal),
 * or -1 when it had to be killed. got stays. */
int fixture_child_wait(fixture_child *c, int timeout_ms);

#endif
