/*
 * site.c — the embedded demo site and `cdpgate demo`.
 *
 * The site is a few static pages compiled into the binary, served on
 * 127.0.0.1 (a port the kernel picks) by a forked child that exits when the
 * driver does. It needs nothing from the network, so the demo runs on any
 * machine with a browser.
 */
#if defined(__linux__)
#define _GNU_SOURCE 1
#endif
#include "cli/cli.h"

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
"<header><h1>Acme Bank</h1><nav><a href=/>Home</a> | <a href=/about>About</a></nav></header>"
"<main><h2>Accounts</h2><table id=accounts><tr><th>Account</th><th>Balance</th><th></th></tr>"
"<tr><td>Checking</td><td class=bal>1,250.00</td><td><button>Select</button></td></tr>"
"<tr><td>Savings</td><td class=bal>8,400.00</td><td><button>Select</button></td></tr>"
"<tr><td>Travel</td><td class=bal>310.15</td><td><button>Select</button></td></tr></table>"
"<h2>Search transactions</h2><form action=/search method=get>"
"<label>Query <input name=q></label> <button type=submit>Search</button></form>"
"<p id=status>Ready.</p></main>"
"<script>document.querySelectorAll('#accounts button').forEach(function(b){"
"b.onclick=function(){document.getElementById('status').textContent='Selected '+"
"b.closest('tr').cells[0].textContent+'.';};});</script></body></html>";

static const char PAGE_ABOUT[] =
"<!doctype html><html lang=en><head><meta charset=utf-8><title>About Acme Bank</title>"
"</head><body><h1>About</h1><p>This page is served by cdpgate's embedded demo site "
"on 127.0.0.1.</p><a href=/>Back</a></body></html>";

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
    char path[512] = "";
    if (sscanf(req, "GET %511s", path) == 1) {
        char *q = strchr(path, '?');
        if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0)
            body = PAGE_INDEX;
        else if (strcmp(path, "/about") == 0)
            body = PAGE_ABOUT;
        else if (q && (*q = 0, strcmp(path, "/search") == 0))
            body = "<!doctype html><title>Search results</title><h1>Search results</h1>"
                   "<p>No transactions match.</p><a href=/>Back</a>";
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
        struct pollfd pfd = {s, POLLIN, 0};
        while (getppid() == parent) {
            if (poll(&pfd, 1, 500) <= 0)
                continue;
            int c = accept(s, NULL, NULL);
            if (c < 0)
                continue;
            serve_one(c);
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
    cdp_page *p = cdp_page_open(b, o->timeout_ms, &e);
    static const char *const EXPRS[] = {
        "document.title",
        "[...document.querySelectorAll('#accounts tr')].slice(1).map(r => "
        "({account: r.cells[0].textContent, balance: r.cells[1].textContent}))",
        "document.querySelectorAll('#accounts button')[1].click(), "
        "document.getElementById('status').textContent",
        NULL,
    };
    if (!p || cdp_page_navigate(p, url, o->timeout_ms, &e)) {
        fprintf(stderr, "cdpgate demo: %s\n", e.msg);
        rc = EXIT_FAIL;
    } else {
        for (size_t i = 0; EXPRS[i]; i++) {
            char *out = NULL;
            printf("demo: eval %s\n", EXPRS[i]);
            if (cdp_page_eval(p, EXPRS[i], o->timeout_ms, &out, &e)) {
                fprintf(stderr, "cdpgate demo: %s\n", e.msg);
                rc = EXIT_FAIL;
                break;
            }
            printf("  => %s\n", out);
            free(out);
        }
    }
    cdp_page_free(p);
    cdp_browser_free(b);
    cli_site_stop(site);
    if (rc == EXIT_OK)
        printf("demo: done\n");
    return rc;
}
