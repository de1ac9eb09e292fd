/*
 * site.c — the embedded demo site and `cdpgate demo`.
 *
 * The site is a few static pages compiled into the binary, served on
 * 127.0.0.1 (a port the kernel picks) by a forked child that exits when the
 * driver does. It needs nothing from the network, so the demo runs on any
 * machine with a browser.
 *
 * `cdpgate demo` walks the site the way an agent would, through the same
 * snapshot/ calls the MCP tools use, printing every step and its result:
 * open, snapshot, click a button told apart by its row, type and submit a
 * search, go back, follow a target=_blank link (a popup tab), list and
 * switch tabs, raise a confirm() dialog and accept it.
 */
#if defined(__linux__)
#define _GNU_SOURCE 1
#endif
#include "cli/cli.h"
#include "snapshot/snapshot.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

static const char PAGE_INDEX[] =
"<!doctype html><html lang=en><head><meta charset=utf-8>"
"<title>cdpgate demo: Acme Bank</title>"
"<style>body{font:16px system-ui;margin:2em}table{border-collapse:collapse}"
"td,th{border:1px solid #ccc;padding:4px 8px}</style></head><body>"
"<header><h1>Acme Bank</h1><nav><a href=/>Home</a> | <a href=/about>About</a> | "
"<a href=/statement target=_blank>Statement</a></nav></header>"
"<main><h2>Accounts</h2><table id=accounts><tr><th>Account</th><th>Balance</th><th></th></tr>"
"<tr><td>Checking</td><td class=bal>1,250.00</td><td><button>Select</button></td></tr>"
"<tr><td>Savings</td><td class=bal>8,400.00</td><td><button>Select</button></td></tr>"
"<tr><td>Travel</td><td class=bal>310.15</td><td><button>Select</button></td></tr></table>"
"<h2>Search transactions</h2><form action=/search method=get>"
"<label>Query <input name=q></label> <button type=submit>Search</button></form>"
"<h2>Danger zone</h2><button id=close>Close the Travel account</button>"
"<p id=status role=status>Ready.</p></main>"
"<script>var st=document.getElementById('status');"
"document.querySelectorAll('#accounts button').forEach(function(b){"
"b.onclick=function(){st.textContent='Selected '+b.closest('tr').cells[0].textContent+'.';};});"
"document.getElementById('close').onclick=function(){st.textContent="
"confirm('Close the Travel account?')?'Travel account closed.':'Travel account kept.';};"
"</script></body></html>";

static const char PAGE_ABOUT[] =
"<!doctype html><html lang=en><head><meta charset=utf-8><title>About Acme Bank</title>"
"</head><body><h1>About</h1><p>This page is served by cdpgate's embedded demo site "
"on 127.0.0.1.</p><a href=/>Back</a></body></html>";

static const char PAGE_STATEMENT[] =
"<!doctype html><html lang=en><head><meta charset=utf-8><title>Acme Bank statement</title>"
"</head><body><h1>Statement</h1><table><tr><th>Date</th><th>Payee</th><th>Amount</th></tr>"
"<tr><td>2025-11-02</td><td>Corner Coffee</td><td>-4.20</td></tr>"
"<tr><td>2025-11-03</td><td>Salary</td><td>2,100.00</td></tr></table></body></html>";

/* Decode a query-string value (+ and %XX) in place. */
static void url_decode(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s == '+') {
            *o++ = ' ';
        } else if (*s == '%' && s[1] && s[2]) {
            char hex[3] = {s[1], s[2], 0};
            char *end;
            long v = strtol(hex, &end, 16);
            if (*end || v <= 0) {
                *o++ = *s;
                continue;
            }
            *o++ = (char)v;
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
}

/* The search results page for q, HTML-escaped, into out. */
static void search_page(char *out, size_t cap, char *q)
{
    url_decode(q);
    char esc[1200];
    size_t n = 0;
    for (const char *p = q; *p && n + 7 < sizeof esc; p++) {
        const char *r = *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;"
                      : *p == '"' ? "&quot;" : *p == '\'' ? "&#39;" : NULL;
        if (r) {
            memcpy(esc + n, r, strlen(r));
            n += strlen(r);
        } else {
            esc[n++] = *p;
        }
    }
    esc[n] = 0;
    snprintf(out, cap, "<!doctype html><html lang=en><head><meta charset=utf-8>"
             "<title>Search results</title></head><body><h1>Search results</h1>"
             "<p>No transactions match \"%s\".</p><a href=/>Back</a></body></html>", esc);
}

static void serve_one(int fd)
{
    char req[4096];
    size_t n = 0;
    struct pollfd pfd = {fd, POLLIN, 0};
    while (n < sizeof req - 1) {
        if (poll(&pfd, 1, 5000) <= 0)
            return;
        ssize_t r = read(fd, req + n, sizeof req - 1 - n);
        if (r <= 0)
            return;
        n += (size_t)r;
        req[n] = 0;
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    const char *body = NULL, *status = "200 OK", *type = "text/html; charset=utf-8";
    char path[512] = "", page[2048];
    if (sscanf(req, "GET %511s", path) == 1) {
        char *q = strchr(path, '?');
        if (q)
            *q++ = 0;
        if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0) {
            body = PAGE_INDEX;
        } else if (strcmp(path, "/about") == 0) {
            body = PAGE_ABOUT;
        } else if (strcmp(path, "/statement") == 0) {
            body = PAGE_STATEMENT;
        } else if (strcmp(path, "/search") == 0) {
            char *v = q ? strstr(q, "q=") : NULL;
            char empty[1] = "";
            if (v && (v == q || v[-1] == '&')) {
                v += 2;
                char *amp = strchr(v, '&');
                if (amp)
                    *amp = 0;
            } else {
                v = empty;
            }
            search_page(page, sizeof page, v);
            body = page;
        }
    }
    if (!body) {
        status = "404 Not Found";
        body = "<!doctype html><title>Not found</title><h1>Not found</h1>";
    }
    char hdr[256];
    int hl = snprintf(hdr, sizeof hdr, "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                      status, type, strlen(body));
    if (write(fd, hdr, (size_t)hl) == hl)
        (void)!write(fd, body, strlen(body));
}

int cli_site_start(pid_t *pid)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 64) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &al) != 0) {
        close(s);
        return -1;
    }
    pid_t parent = getpid();
    *pid = fork();
    if (*pid < 0) {
        close(s);
        return -1;
    }
    if (*pid == 0) {
#if defined(__linux__)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        signal(SIGPIPE, SIG_IGN);
        signal(SIGCHLD, SIG_IGN);   /* connection children reap themselves */
        struct pollfd pfd = {s, POLLIN, 0};
        while (getppid() == parent) {
            if (poll(&pfd, 1, 500) <= 0)
                continue;
            int c = accept(s, NULL, NULL);
            if (c < 0)
                continue;
            /* One child per connection: an idle preconnected socket of the
             * browser must not hold up the page's real request. */
            pid_t w = fork();
            if (w == 0) {
#if defined(__linux__)
                prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
                close(s);
                serve_one(c);
                close(c);
                _exit(0);
            }
            if (w < 0)
                serve_one(c);       /* no process to spare: serve it here */
            close(c);
        }
        _exit(0);
    }
    close(s);
    return ntohs(a.sin_port);
}

void cli_site_stop(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

/* ---- the demo walk ---- */

/* The ref ("e12") on the first line of text holding both needles (b may be
 * NULL); false when there is none. */
static bool find_ref(const char *text, const char *a, const char *b, char *ref, size_t cap)
{
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1),
                 line);
        const char *r = strstr(buf, "[e");
        if (r && strstr(buf, a) && (!b || strstr(buf, b))) {
            size_t n = 0;
            for (r++; *r && *r != ']' && n + 1 < cap; r++)
                ref[n++] = *r;
            ref[n] = 0;
            return n > 1;
        }
        line = eol ? eol + 1 : NULL;
    }
    return false;
}

/* Print text indented under a step. */
static void show(const char *text)
{
    for (const char *line = text ? text : ""; *line;) {
        const char *eol = strchr(line, '\n');
        int len = eol ? (int)(eol - line) : (int)strlen(line);
        printf("    %.*s\n", len, line);
        if (!eol)
            break;
        line = eol + 1;
    }
}

typedef struct {
    snap_agent *a;
    int step;
    snap_result last;       /* the latest result (text kept for ref lookups) */
} walk;

/* Report a step's result; false (after printing why) when it failed. */
static bool step_done(walk *w, int rc, snap_result *r)
{
    snap_result_free(&w->last);
    w->last = *r;
    memset(r, 0, sizeof *r);
    show(w->last.text);
    fflush(stdout);
    if (rc < 0) {
        fprintf(stderr, "cdpgate demo: step %d failed: %s\n", w->step, snap_strerror(rc));
        return false;
    }
    return true;
}

static bool need_ref(walk *w, const char *text, const char *a, const char *b, char *ref,
                     size_t cap)
{
    if (find_ref(text ? text : "", a, b, ref, cap))
        return true;
    fflush(stdout);
    fprintf(stderr, "cdpgate demo: no element with %s%s%s in the snapshot\n", a,
            b ? " and " : "", b ? b : "");
    (void)w;
    return false;
}

static bool demo_walk(walk *w, const char *url)
{
    snap_result r;
    memset(&r, 0, sizeof r);
    char ref[32];
    printf("demo: %d. open %s\n", ++w->step, url);
    if (!step_done(w, snap_open(w->a, url, false, &r), &r))
        return false;

    /* open's result is the page's snapshot: take the refs from it. */
    snap_query q = {0};
    char *page = w->last.text ? strdup(w->last.text) : NULL;
    if (!page)
        return false;
    bool ok = need_ref(w, page, "button \"Select\"", "Savings", ref, sizeof ref);
    if (ok) {
        printf("demo: %d. click [%s]: the \"Select\" button in the Savings row\n", ++w->step,
               ref);
        ok = step_done(w, snap_click(w->a, ref, NULL, &r), &r);
    }
    if (ok && (ok = need_ref(w, page, "textbox \"Query\"", NULL, ref, sizeof ref))) {
        printf("demo: %d. type \"coffee\" into [%s] (textbox \"Query\") and submit\n",
               ++w->step, ref);
        ok = step_done(w, snap_type(w->a, ref, "coffee", true, NULL, &r), &r);
    }
    if (ok) {
        printf("demo: %d. back\n", ++w->step);
        ok = step_done(w, snap_history(w->a, -1, &r), &r);
    }
    if (ok) {
        /* Refs are per document: read them again after a navigation. */
        printf("demo: %d. snapshot after going back\n", ++w->step);
        ok = step_done(w, snap_observe(w->a, &q, &r), &r);
        free(page);
        page = w->last.text ? strdup(w->last.text) : NULL;
        ok = ok && page;
    }
    if (ok && (ok = need_ref(w, page, "link \"Statement\"", NULL, ref, sizeof ref))) {
        printf("demo: %d. click [%s]: link \"Statement\" (target=_blank: a popup)\n",
               ++w->step, ref);
        ok = step_done(w, snap_click(w->a, ref, NULL, &r), &r);
    }
    if (ok) {
        printf("demo: %d. tabs\n", ++w->step);
        ok = step_done(w, snap_tabs(w->a, "list", NULL, &r), &r);
    }
    if (ok) {
        printf("demo: %d. switch to tab t1\n", ++w->step);
        ok = step_done(w, snap_tabs(w->a, "switch", "t1", &r), &r);
    }
    if (ok && (ok = need_ref(w, page, "button \"Close the Travel account\"", NULL, ref,
                             sizeof ref))) {
        printf("demo: %d. click [%s]: button \"Close the Travel account\" (a confirm "
               "dialog)\n", ++w->step, ref);
        ok = step_done(w, snap_click(w->a, ref, NULL, &r), &r);
    }
    if (ok) {
        printf("demo: %d. answer the dialog: accept\n", ++w->step);
        ok = step_done(w, snap_dialog(w->a, true, NULL, &r), &r);
    }
    if (ok) {
        printf("demo: %d. snapshot, only lines with \"Travel\"\n", ++w->step);
        q.query = "Travel";
        ok = step_done(w, snap_observe(w->a, &q, &r), &r);
    }
    free(page);
    return ok;
}

int cli_demo(const cli_opts *o, int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: cdpgate demo\n");
        return EXIT_USAGE;
    }
    pid_t site;
    int port = cli_site_start(&site);
    if (port < 0) {
        fprintf(stderr, "cdpgate demo: cannot serve the embedded site on 127.0.0.1: %s\n",
                strerror(errno));
        return EXIT_FAIL;
    }
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    printf("demo: embedded site at %s\n", url);
    cdp_browser *b = cli_browser(o, "demo");
    if (!b) {
        cli_site_stop(site);
        return EXIT_BROWSER;
    }
    printf("demo: browser %s over the %s\n", cdp_browser_product(b),
           cdp_conn_transport(cdp_browser_conn(b)));
    int rc = EXIT_OK;
    cdp_err e = {0};
    snap_opts so = {0};
    so.timeout_ms = o->timeout_ms;
    walk w;
    memset(&w, 0, sizeof w);
    w.a = snap_agent_new(b, &so, &e);
    if (!w.a) {
        fprintf(stderr, "cdpgate demo: %s\n", e.msg);
        rc = EXIT_BROWSER;
    } else if (!demo_walk(&w, url)) {
        rc = cdp_conn_dead(cdp_browser_conn(b)) ? EXIT_BROWSER : EXIT_FAIL;
    }
    fflush(stdout);
    snap_result_free(&w.last);
    snap_agent_free(w.a);
    cdp_browser_free(b);
    cli_site_stop(site);
    if (rc == EXIT_OK)
        printf("demo: done (%d steps)\n", w.step);
    return rc;
}
