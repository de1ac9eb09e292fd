/*
 * fixture.c — see fixture.h.
 */
#if defined(__linux__)
#define _GNU_SOURCE 1
#endif
#include "tests/fixture.h"
#include "tests/harness.h"
#include "cdp/cdp.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdatomic.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

static void reply(int fd, int code, const char *type, const char *body, size_t len)
{
    char hdr[512];
    int hl = snprintf(hdr, sizeof hdr, "HTTP/1.1 %d X\r\nContent-Type: %s\r\n"
                      "Content-Length: %zu\r\nCache-Control: no-store\r\n"
                      "Connection: close\r\n\r\n", code, type, len);
    if (write(fd, hdr, (size_t)hl) == hl && len)
        (void)!write(fd, body, len);
}

/* A 302 to location, optionally setting one cookie (a Set-Cookie value). */
static void redirect(int fd, const char *location, const char *set_cookie)
{
    char hdr[1024];
    int hl = snprintf(hdr, sizeof hdr, "HTTP/1.1 302 Found\r\nLocation: %s\r\n%s%s%s"
                      "Content-Length: 0\r\nCache-Control: no-store\r\n"
                      "Connection: close\r\n\r\n", location, set_cookie ? "Set-Cookie: " : "",
                      set_cookie ? set_cookie : "", set_cookie ? "\r\n" : "");
    if (hl > 0 && hl < (int)sizeof hdr)
        (void)!write(fd, hdr, (size_t)hl);
}

/* The request's Cookie header value (into out), "" when none. */
static void cookie_header(const char *req, char *out, size_t cap)
{
    const char *h = strstr(req, "\r\nCookie: ");
    out[0] = 0;
    if (h) {
        h += 10;
        size_t n = strcspn(h, "\r\n");
        snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), h);
    }
}

static void serve_file(int fd, const char *path);
static void serve_file_hdr(int fd, const char *path, const char *extra);

/* The request log (fixture_server_log): set before the server forks. */
static char log_path[512];

/* Names (never values) of the cookies in a Cookie header value: "a,b". */
static void cookie_names(const char *c, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    while (*c && n + 1 < cap) {
        while (*c == ' ' || *c == ';')
            c++;
        size_t k = strcspn(c, "=;");
        if (!k)
            break;
        int w = snprintf(out + n, cap - n, "%s%.*s", n ? "," : "", (int)k, c);
        if (w < 0 || (size_t)w >= cap - n)
            break;
        n += (size_t)w;
        c += strcspn(c, ";");
    }
}

/* One line per request, appended with one write: method, Host, path and
 * query, the names of the cookies sent, the body's first bytes. */
static void log_request(const char *req, const char *method, const char *path,
                        const char *body, size_t blen)
{
    if (!log_path[0])
        return;
    char host[256] = "", c[4096], names[1024], b[300];
    const char *h = strstr(req, "\r\nHost: ");
    if (h)
        sscanf(h + 8, "%255[^\r\n]", host);
    cookie_header(req, c, sizeof c);
    cookie_names(c, names, sizeof names);
    size_t k = 0;
    for (size_t i = 0; i < blen && k + 1 < sizeof b; i++)
        b[k++] = body[i] >= 0x20 && body[i] < 0x7f ? body[i] : '.';
    b[k] = 0;
    char line[2000];
    int n = snprintf(line, sizeof line, "%s %s %s cookies=%s body=%s\n", method, host, path,
                     names, b);
    if (n <= 0)
        return;
    if ((size_t)n >= sizeof line)
        n = (int)sizeof line - 1;
    int f = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (f >= 0) {
        (void)!write(f, line, (size_t)n);
        close(f);
    }
}

void fixture_server_log(const char *path)
{
    snprintf(log_path, sizeof log_path, "%s", path ? path : "");
}

/* The switch (fixture_server_switch): a page of memory shared by the
 * process that started the server, the server and its connection
 * children (mapped before the server forks). */
#define SWITCH_CAP 64
static char *switch_page;

int fixture_server_switch(const char *version)
{
    if (!switch_page || !version || strlen(version) >= SWITCH_CAP)
        return -1;
    for (const char *c = version; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
            return -1;
    memset(switch_page, 0, SWITCH_CAP);
    memcpy(switch_page, version, strlen(version));
    return 0;
}

/* The barrier (/barrier?n=N&key=K): the rest of the switch's page holds
 * BARRIER_SLOTS counters by key, under a spin lock. */
#define BARRIER_SLOTS 16
typedef struct {
    char key[28];
    atomic_int count;
} barrier_slot;

static barrier_slot *barrier_slot_of(const char *key)
{
    if (!switch_page)
        return NULL;
    atomic_flag *lock = (atomic_flag *)(switch_page + 256);
    barrier_slot *sl = (barrier_slot *)(switch_page + 512);
    while (atomic_flag_test_and_set(lock))
        ;
    barrier_slot *got = NULL;
    for (int i = 0; i < BARRIER_SLOTS && !got; i++)
        if (strcmp(sl[i].key, key) == 0 || !sl[i].key[0]) {
            got = &sl[i];
            snprintf(got->key, sizeof got->key, "%s", key);
        }
    atomic_flag_clear(lock);
    return got;
}

/* Count this request under key; answer when n have come (each sees the
 * others: "together"), or after 20 s alone ("alone"). The page has one
 * image without alt text whose class says which: a scan's report shows it. */
static void barrier(int fd, const char *q)
{
    char key[28] = "", page[400];
    long n = 2;
    for (const char *p = q; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, "n=", 2) == 0)
            n = strtol(p + 2, NULL, 10);
        if (strncmp(p, "key=", 4) == 0)
            snprintf(key, sizeof key, "%.*s", (int)strcspn(p + 4, "&"), p + 4);
    }
    barrier_slot *b = barrier_slot_of(key[0] ? key : "default");
    int seen = b ? atomic_fetch_add(&b->count, 1) + 1 : 0;
    for (int i = 0; b && seen < n && i < 1000; i++) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
        seen = atomic_load(&b->count);
    }
    int len = snprintf(page, sizeof page, "<!doctype html><html lang=\"en\"><head><title>"
                       "Barrier</title></head><body><main><h1>Barrier</h1><img src=\"/none.png"
                       "\" class=\"%s\"></main></body></html>", seen >= n ? "together" : "alone");
    reply(fd, 200, "text/html", page, (size_t)len);
}

/* fixture_server_die_parent: the parent pid whose browser /die kills,
 * kept in the shared page after the switch's bytes. */
#define DIE_AT SWITCH_CAP

void fixture_server_die_parent(pid_t parent)
{
    if (switch_page)
        memcpy(switch_page + DIE_AT, &parent, sizeof parent);
}

/* SIGKILL each process whose parent is parent and whose command line
 * holds "chrom" (the browser; never the fixture server). */
static void kill_browsers(pid_t parent)
{
    DIR *d = parent > 0 ? opendir("/proc") : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char p[300], buf[4096];
        snprintf(p, sizeof p, "/proc/%s/stat", e->d_name);
        int fd = open(p, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        char *rp = n > 0 ? (buf[n] = 0, strrchr(buf, ')')) : NULL;
        int pp = 0;
        if (!rp || sscanf(rp + 1, " %*c %d", &pp) != 1 || pp != parent)
            continue;
        snprintf(p, sizeof p, "/proc/%s/cmdline", e->d_name);
        fd = open(p, O_RDONLY);
        n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        for (ssize_t i = 0; i < n; i++)
            buf[i] = buf[i] ? buf[i] : ' ';
        if (n > 0 && (buf[n] = 0, strstr(buf, "chrom")))
            kill((pid_t)atoi(e->d_name), SIGKILL);
    }
    if (d)
        closedir(d);
}

/* The switch's version now (into out, "" when none). */
static void switch_now(char *out)
{
    out[0] = 0;
    if (switch_page)
        memcpy(out, switch_page, SWITCH_CAP);
    out[SWITCH_CAP - 1] = 0;
}

/* The retailer (tests/fixtures/retail/): every page but the login page
 * wants the session cookie, and not under the switch "expired" (the
 * site then ends the session: the cookie is expired with the redirect). */
static void serve_retail(int fd, const char *req, const char *path)
{
    char c[4096], sw[SWITCH_CAP];
    cookie_header(req, c, sizeof c);
    switch_now(sw);
    bool has = strstr(c, "retail_session=" FIXTURE_RETAIL_SESSION) != NULL;
    if (has && strcmp(sw, "expired") != 0)
        serve_file(fd, path);
    else
        redirect(fd, "/retail/login.html", has ? "retail_session=; Path=/; Max-Age=0" : NULL);
}

static const char *mime(const char *p)
{
    const char *dot = strrchr(p, '.');
    if (dot && strcmp(dot, ".html") == 0) return "text/html; charset=utf-8";
    if (dot && strcmp(dot, ".js") == 0) return "text/javascript";
    if (dot && strcmp(dot, ".json") == 0) return "application/json";
    if (dot && strcmp(dot, ".css") == 0) return "text/css";
    return "application/octet-stream";
}

static void serve(int fd)
{
    char req[8192];
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
    char method[8], path[1024];
    if (sscanf(req, "%7s %1023s", method, path) != 2) {
        reply(fd, 400, "text/plain", "bad request", 11);
        return;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0) {
        /* Logged all the same (a preflight, a PUT): the log is the proof
         * of what reached the server. */
        log_request(req, method, path, "", 0);
        reply(fd, 400, "text/plain", "bad request", 11);
        return;
    }
    /* A POST body: what came with the header, then up to Content-Length. */
    char *post = strstr(req, "\r\n\r\n");
    post = post ? post + 4 : req + n;
    const char *cl = strstr(req, "\r\nContent-Length: ");
    size_t want = cl ? (size_t)strtoul(cl + 18, NULL, 10) : 0;
    while (strcmp(method, "GET") != 0 && (size_t)(req + n - post) < want &&
           n < sizeof req - 1) {
        if (poll(&pfd, 1, 5000) <= 0)
            return;
        ssize_t r = read(fd, req + n, sizeof req - 1 - n);
        if (r <= 0)
            return;
        n += (size_t)r;
        req[n] = 0;
    }
    log_request(req, method, path, post, (size_t)(req + n - post));
    char *q = strchr(path, '?');
    if (q)
        *q++ = 0;
    if (strcmp(path, "/gate/sink") == 0) {
        static const char B[] = "<title>received</title><h1>Received</h1>";
        reply(fd, 200, "text/html", B, sizeof B - 1);
        return;
    }
    if (strcmp(path, "/gate/cookie-names") == 0) {
        char c[4096], names[1024], body[1200];
        cookie_header(req, c, sizeof c);
        cookie_names(c, names, sizeof names);
        int bl = snprintf(body, sizeof body, "<title>cookie names</title>"
                          "<p>cookie names: [%s]</p>", names);
        reply(fd, 200, "text/html", body, (size_t)bl);
        return;
    }
    if (strcmp(path, "/gate/news") == 0) {
        serve_file_hdr(fd, "/gate/news.html",
                       "Set-Cookie: news_visitor=nv-public-1; Path=/\r\n");
        return;
    }
    if (strcmp(path, "/gate/net-report") == 0) {
        /* gate/net-report.html under a policy of its own that reports its
         * violations to the ungranted evil.test (same port). */
        const char *h = strstr(req, "\r\nHost: ");
        char host[256] = "", hdr[700];
        if (h)
            sscanf(h + 8, "%255[^\r\n]", host);
        const char *colon = strrchr(host, ':');
        snprintf(hdr, sizeof hdr, "Content-Security-Policy: img-src 'self'; report-uri "
                 "http://evil.test%s/gate/sink?tag=net-cspreport\r\n", colon ? colon : "");
        serve_file_hdr(fd, "/gate/net-report.html", hdr);
        return;
    }
    if (strcmp(path, "/gate/redirect") == 0 && q && strncmp(q, "to=", 3) == 0) {
        redirect(fd, q + 3, NULL);
        return;
    }
    if (strcmp(path, "/gate/r307") == 0) {
        /* A page whose form posts to its own address; the POST is sent on
         * with its body by a 307 (red team s20, tests/fixtures/red10). */
        static const char R[] = "HTTP/1.1 307 Temporary Redirect\r\nLocation: "
                                "/gate/sink?tag=r10-307\r\nContent-Length: 0\r\n"
                                "Cache-Control: no-store\r\nConnection: close\r\n\r\n";
        if (strcmp(method, "GET") == 0)
            serve_file(fd, "/red10/r307.html");
        else
            (void)!write(fd, R, sizeof R - 1);
        return;
    }
    if (strcmp(path, "/die") == 0) {
        /* The request is in (logged above); the browser that sent it dies
         * before any answer: an action's outcome the driver cannot know. */
        pid_t parent = 0;
        if (switch_page)
            memcpy(&parent, switch_page + DIE_AT, sizeof parent);
        kill_browsers(parent);
        struct timespec ts = {3, 0};
        nanosleep(&ts, NULL);
        reply(fd, 200, "text/html", "<title>late</title>late", 23);
        return;
    }
    if (strcmp(path, "/slow") == 0) {
        long ms = q && strncmp(q, "ms=", 3) == 0 ? strtol(q + 3, NULL, 10) : 1000;
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        reply(fd, 200, "text/html", "<title>slow</title>slow", 23);
        return;
    }
    if (strcmp(path, "/barrier") == 0) {
        barrier(fd, q);
        return;
    }
    if (strcmp(path, "/hold") == 0) {
        /* A long poll: answered after ms, or ended when the client goes. */
        long ms = q && strncmp(q, "ms=", 3) == 0 ? strtol(q + 3, NULL, 10) : 30000;
        struct pollfd hp = {fd, POLLIN, 0};
        if (poll(&hp, 1, ms > 0 && ms < 600000 ? (int)ms : 30000) == 0)
            reply(fd, 200, "text/plain", "held", 4);
        return;
    }
    if (strcmp(path, "/download") == 0) {
        /* An attachment (issue 13, point 6d): name= is the file name the
         * server suggests (letters, digits, '.', '-', '_' kept); the body is
         * 12,345 bytes of a known pattern, so a saved copy can be checked. */
        char name[80] = "report.pdf", hdr[400];
        if (q && strncmp(q, "name=", 5) == 0) {
            size_t k = 0;
            for (const char *c = q + 5; *c && *c != '&' && k < sizeof name - 1; c++)
                if (isalnum((unsigned char)*c) || strchr(".-_", *c))
                    name[k++] = *c;
            name[k] = 0;
        }
        char body[12345];
        for (size_t i = 0; i < sizeof body; i++)
            body[i] = (char)('a' + i % 26);
        int hl = snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n"
                          "Content-Disposition: attachment; filename=\"%s\"\r\n"
                          "Content-Length: %zu\r\nCache-Control: no-store\r\n"
                          "Connection: close\r\n\r\n", name, sizeof body);
        if (hl > 0 && hl < (int)sizeof hdr && write(fd, hdr, (size_t)hl) == hl)
            (void)!write(fd, body, sizeof body);
        return;
    }
    if (strcmp(path, "/status") == 0) {
        int code = q && strncmp(q, "code=", 5) == 0 ? (int)strtol(q + 5, NULL, 10) : 500;
        reply(fd, code, "text/html", "<title>status</title>status", 27);
        return;
    }
    if (strcmp(path, "/echo-host") == 0) {
        const char *h = strstr(req, "\r\nHost: ");
        char host[256] = "";
        if (h)
            sscanf(h + 8, "%255[^\r\n]", host);
        reply(fd, 200, "text/plain", host, strlen(host));
        return;
    }
    if (strcmp(path, "/echo-cookie") == 0) {
        char c[4096], body[4200];
        cookie_header(req, c, sizeof c);
        int bl = snprintf(body, sizeof body, "<title>cookies</title><p>cookies: [%s]</p>", c);
        reply(fd, 200, "text/html", body, (size_t)bl);
        return;
    }
    if (strcmp(path, "/bank/login/verify") == 0 && strcmp(method, "POST") == 0) {
        /* The form's fields, user=...&pw=...&otp=... (the code last). */
        const char *otp = strstr(post, "otp=");
        size_t ol = strlen(FIXTURE_BANK_OTP);
        if (otp && strncmp(otp + 4, FIXTURE_BANK_OTP, ol) == 0 &&
            (otp[4 + ol] == 0 || otp[4 + ol] == '&'))
            redirect(fd, "/bank/account", "bank_session=" FIXTURE_BANK_SESSION
                     "; Path=/; HttpOnly; SameSite=Lax");
        else
            redirect(fd, "/bank/login.html?error=1", NULL);
        return;
    }
    if (strcmp(path, "/gate/domain-cookie") == 0) {
        /* A cookie scoped to the domain (every subdomain gets it): red team
         * s13, N2 (test_gate_accept red_nav_domain_regression). */
        redirect(fd, "/gate/sink?tag=domain-cookie-set",
                 "bank_wide=wide-31f0; Domain=bank.test; Path=/; SameSite=Lax");
        return;
    }
    if (strcmp(path, "/bank/signout") == 0) {
        /* The service ends the session: expires both cookies (only=pref:
         * bank_pref alone); the page clears localStorage unless only= says
         * otherwise (only=cookies: both cookies, localStorage kept). */
        bool pref_only = q && strstr(q, "only=pref");
        serve_file_hdr(fd, "/bank/signedout.html", pref_only
                       ? "Set-Cookie: bank_pref=; Path=/; Max-Age=0\r\n"
                       : "Set-Cookie: bank_session=; Path=/; Max-Age=0\r\n"
                         "Set-Cookie: bank_pref=; Path=/; Max-Age=0\r\n");
        return;
    }
    if (strncmp(path, "/retail/", 8) == 0 && strcmp(path, "/retail/login.html") != 0) {
        serve_retail(fd, req, path);
        return;
    }
    if (strcmp(path, "/bank/magic") == 0 || strcmp(path, "/bank/login/link") == 0) {
        /* A sign-in link the model opens in its own context (red team s18,
         * R8-6 b): /bank/magic?t=FIXTURE_BANK_MAGIC (a capability token) or
         * /bank/login/link?n=FIXTURE_BANK_LINK (a short number: no token
         * shape) sets the session cookie and redirects to the account;
         * another value: to the login page. */
        bool magic = strcmp(path, "/bank/magic") == 0;
        const char *good = magic ? "t=" FIXTURE_BANK_MAGIC : "n=" FIXTURE_BANK_LINK;
        if (q && strcmp(q, good) == 0)
            redirect(fd, "/bank/account", "bank_session=" FIXTURE_BANK_SESSION
                     "; Path=/; HttpOnly; SameSite=Lax");
        else
            redirect(fd, "/bank/login.html?error=1", NULL);
        return;
    }
    if (strcmp(path, "/bank/account") == 0) {
        char c[4096];
        cookie_header(req, c, sizeof c);
        if (strstr(c, "bank_session=" FIXTURE_BANK_SESSION))
            serve_file(fd, "/bank/account.html");
        else
            redirect(fd, "/bank/login.html", NULL);
        return;
    }
    serve_file(fd, path);
}

static void serve_file(int fd, const char *path)
{
    serve_file_hdr(fd, path, "");
}

/* serve_file with extra header lines (each ending in CRLF). */
static void serve_file_hdr(int fd, const char *path, const char *extra)
{
    if (strstr(path, "..") || path[0] != '/') {
        reply(fd, 403, "text/plain", "no", 2);
        return;
    }
    char file[1200], sw[SWITCH_CAP];
    snprintf(file, sizeof file, "tests/fixtures%s%s", path,
             path[strlen(path) - 1] == '/' ? "index.html" : "");
    /* Under the switch, DIR/VERSION/NAME stands in for DIR/NAME when it exists. */
    switch_now(sw);
    const char *base = strrchr(file, '/');
    int f = -1;
    if (sw[0] && base && base[1]) {
        char alt[1300];
        snprintf(alt, sizeof alt, "%.*s/%s%s", (int)(base - file), file, sw, base);
        f = open(alt, O_RDONLY);
    }
    if (f < 0)
        f = open(file, O_RDONLY);
    struct stat st;
    if (f < 0 || fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (f >= 0)
            close(f);
        reply(fd, 404, "text/html", "<title>404</title>not found", 27);
        return;
    }
    char *body = malloc((size_t)st.st_size + 1);
    ssize_t got = body ? read(f, body, (size_t)st.st_size) : -1;
    close(f);
    if (got == st.st_size && !*extra) {
        reply(fd, 200, mime(file), body, (size_t)got);
    } else if (got == st.st_size) {
        char hdr[1024];
        int hl = snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n%s"
                          "Content-Length: %zu\r\nCache-Control: no-store\r\n"
                          "Connection: close\r\n\r\n", mime(file), extra, (size_t)got);
        if (hl > 0 && hl < (int)sizeof hdr && write(fd, hdr, (size_t)hl) == hl)
            (void)!write(fd, body, (size_t)got);
    }
    free(body);
}

int fixture_server_start(pid_t *pid)
{
    if (!switch_page) {
        void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED)
            switch_page = m;
    }
    if (switch_page)
        memset(switch_page, 0, SWITCH_CAP);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return -1;
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);  /* 127.0.0.1 and 127.0.0.2 alike */
    socklen_t al = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 128) != 0 ||
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
            pid_t w = fork();
            if (w == 0) {
                close(s);
                serve(c);
                close(c);
                _exit(0);
            }
            close(c);
        }
        _exit(0);
    }
    close(s);
    return ntohs(a.sin_port);
}

void fixture_server_stop(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

const char *fixture_browser(void)
{
    static char path[1024];     /* test support only; the library has no globals */
    cdp_err e;
    if (cdp_browser_find(NULL, path, sizeof path, &e) != 0)
        return NULL;
    return path;
}

int fixture_count_procs(const char *needle)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int count = 0;
    struct dirent *e;
    char self[32];
    snprintf(self, sizeof self, "%d", (int)getpid());
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || strcmp(e->d_name, self) == 0)
            continue;
        char p[300], buf[8192];
        snprintf(p, sizeof p, "/proc/%s/cmdline", e->d_name);
        int fd = open(p, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;   /* zombies have an empty cmdline */
        for (ssize_t i = 0; i < n; i++)
            if (!buf[i])
                buf[i] = ' ';
        buf[n] = 0;
        if (strstr(buf, needle))
            count++;
    }
    closedir(d);
    return count;
}

static char *slurp_fd(int fd)
{
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    ssize_t r;
    while (b && (r = read(fd, b + n, cap - n - 1)) > 0) {
        n += (size_t)r;
        if (cap - n < 2) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return NULL;
            }
            b = nb;
            cap *= 2;
        }
    }
    if (b)
        b[n] = 0;
    return b;
}

int fixture_run(const char *cmd, char **out, char **err)
{
    char ofile[] = "/tmp/cdpgate-test-outXXXXXX", efile[] = "/tmp/cdpgate-test-errXXXXXX";
    int ofd = mkstemp(ofile), efd = mkstemp(efile);
    if (ofd < 0 || efd < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(ofd, 1);
        dup2(efd, 2);
        int nul = open("/dev/null", O_RDONLY);
        dup2(nul, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    lseek(ofd, 0, SEEK_SET);
    lseek(efd, 0, SEEK_SET);
    char *o = slurp_fd(ofd), *e = slurp_fd(efd);
    close(ofd);
    close(efd);
    unlink(ofile);
    unlink(efile);
    if (out) *out = o; else free(o);
    if (err) *err = e; else free(e);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int fixture_node_start(const char *script, const char *arg1, const char *arg2,
                       pid_t *pid, char *why, size_t whylen)
{
    if (access("tests/peers/node_modules/ws", F_OK) != 0) {
        snprintf(why, whylen, "tests/peers/node_modules missing (run: cd tests/peers && "
                 "npm install)");
        return -1;
    }
    int p[2];
    if (pipe(p) != 0)
        return -1;
    *pid = fork();
    if (*pid == 0) {
#if defined(__linux__)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        char path[512];
        snprintf(path, sizeof path, "tests/peers/%s", script);
        execlp("node", "node", path, arg1, arg2, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char line[64];
    size_t n = 0;
    struct pollfd pfd = {p[0], POLLIN, 0};
    while (n < sizeof line - 1 && poll(&pfd, 1, 10000) > 0) {
        ssize_t r = read(p[0], line + n, 1);
        if (r <= 0 || line[n] == '\n')
            break;
        n++;
    }
    line[n] = 0;
    close(p[0]);
    long port = strtol(line, NULL, 10);
    if (port <= 0 || port > 65535) {
        snprintf(why, whylen, "node %s did not start (is node installed?)", script);
        fixture_node_stop(*pid);
        return -1;
    }
    return (int)port;
}

void fixture_node_stop(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

int fixture_closed_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &al) != 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    close(s);   /* nothing listens there now */
    return ntohs(a.sin_port);
}

/* ---- child programs ---- */

int fixture_child_spawn(fixture_child *c, const char *errfile, const char *const *env,
                        const char *const *argv, bool fd3)
{
    memset(c, 0, sizeof *c);
    c->in = c->out = c->fd3_w = -1;
    snprintf(c->errfile, sizeof c->errfile, "%s", errfile);
    int in[2], out[2], f3[2] = {-1, -1};
    if (pipe(in) || pipe(out) || (fd3 && pipe(f3)))
        return -1;
    c->pid = fork();
    if (c->pid == 0) {
#if defined(__linux__)
        prctl(PR_SET_PDEATHSIG, SIGTERM);   /* a crashed test leaves no child */
#endif
        int ef = open(c->errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(ef, 2);
        if (fd3)
            dup2(f3[0], 3);
        for (int fd = fd3 ? 4 : 3; fd < 64; fd++)
            close(fd);
        for (const char *const *e = env; e && *e; e++) {
            const char *eq = strchr(*e, '=');
            if (eq) {
                char k[128];
                snprintf(k, sizeof k, "%.*s", (int)(eq - *e), *e);
                setenv(k, eq + 1, 1);
            } else {
                unsetenv(*e);
            }
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (fd3) {
        close(f3[0]);
        c->fd3_w = f3[1];
    }
    c->in = in[1];
    c->out = out[0];
    return c->pid > 0 ? 0 : -1;
}

const char *fixture_child_read_until(fixture_child *c, size_t from, const char *needle,
                                     int timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t end = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + timeout_ms;
    for (;;) {
        if (c->got) {
            const char *p = strstr(c->got + from, needle);
            if (p)
                return p;
        }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t left = end - ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
        if (left <= 0 || c->out < 0)
            return NULL;
        struct pollfd pfd = {c->out, POLLIN, 0};
        if (poll(&pfd, 1, (int)left) <= 0)
            continue;
        char buf[65536];
        ssize_t n = read(c->out, buf, sizeof buf);
        if (n <= 0) {
            close(c->out);
            c->out = -1;
            continue;
        }
        char *g = realloc(c->got, c->ngot + (size_t)n + 1);
        if (!g)
            return NULL;
        memcpy(g + c->ngot, buf, (size_t)n);
        c->ngot += (size_t)n;
        g[c->ngot] = 0;
        c->got = g;
    }
}

/* The child's stderr file, whole (fixture.c is also linked by the
 * benchmarks, without the test harness). */
char *fixture_child_stderr(const fixture_child *c)
{
    FILE *f = fopen(c->errfile, "rb");
    char *s = NULL;
    size_t n = 0;
    if (f) {
        for (size_t cap = 0; !ferror(f) && !feof(f);) {
            if (n == cap) {
                char *ns = realloc(s, cap * 2 + 4096);
                if (!ns)
                    break;
                s = ns;
                cap = cap * 2 + 4095;
            }
            n += fread(s + n, 1, cap - n, f);
        }
        fclose(f);
    }
    if (!s)
        return calloc(1, 1);
    s[n] = 0;
    return s;
}

int fixture_child_wait(fixture_child *c, int timeout_ms)
{
    if (c->in >= 0)
        close(c->in);
    c->in = -1;
    if (c->fd3_w >= 0)
        close(c->fd3_w);
    c->fd3_w = -1;
    int st, rc = -1;
    for (int i = 0; c->pid > 0 && i <= timeout_ms / 20; i++) {
        fixture_child_read_until(c, 0, "\x01never\x01", 0);
        if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
            c->pid = 0;
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
            break;
        }
        struct timespec d = {0, 20 * 1000000L};
        nanosleep(&d, NULL);
    }
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
        c->pid = 0;
    }
    fixture_child_read_until(c, 0, "\x01never\x01", 200);
    return rc;
}

void fixture_url(char *out, size_t cap, int port, const char *host, const char *path)
{
    snprintf(out, cap, "http://%s:%d%s", host, port, path);
}
