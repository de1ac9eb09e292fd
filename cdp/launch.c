/*
 * launch.c — browser discovery, launch (pipe or port), attach (--connect),
 * and the guarantees that a launched browser never outlives the driver.
 *
 * Implementation notes
 *  - The browser runs in its own process group (setpgid in the child) so the
 *    whole tree can be signalled at once, with PR_SET_PDEATHSIG(SIGKILL) on
 *    Linux for the main process.
 *  - A watchdog process (forked before the browser, so it holds no browser
 *    fds) blocks reading a "lifeline" pipe whose write end only the driver
 *    holds (close-on-exec, so the browser does not inherit it). When the
 *    driver exits for any reason, kill -9 included, the read returns EOF and
 *    the watchdog kills the browser's process group and removes the
 *    temporary profile. On a normal close the driver does that itself first.
 *  - Over the pipe the browser reads fd 3 and writes fd 4; it also exits on
 *    its own when those close.
 *  - The browser's stderr goes to a log file in the temporary directory; its
 *    tail is shown when the browser dies or fails to start.
 *  - Port mode reads the endpoint from <profile>/DevToolsActivePort, which
 *    the browser writes once it listens.
 */
#if defined(__linux__)
#define _GNU_SOURCE 1
#endif
#include "cdp/cdp_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

struct cdp_browser {
    cdp_conn *conn;
    pid_t pid;              /* launched browser (process group leader) */
    pid_t watchdog;
    int lifeline;           /* write end; closing it wakes the watchdog */
    bool reaped;
    int status;
    char path[1024];
    char tmpdir[512];       /* temporary dir: profile/ and stderr.log */
    char profile[1024];
    char product[256];
    char ws_url[512];
    char death[1024];
};

static const char *const BROWSER_NAMES[] = {
    "chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
    "google-chrome-beta", "google-chrome-unstable", "chrome", "microsoft-edge",
    "microsoft-edge-stable", "msedge", NULL,
};

static const char *const BROWSER_PATHS[] = {
    "/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium",
    "/usr/bin/google-chrome", "/opt/google/chrome/chrome",
    "/opt/microsoft/msedge/msedge",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
    NULL,
};

static bool is_exec_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int cdp_browser_find(const char *explicit_path, char *out, size_t cap, cdp_err *err)
{
    const char *env = getenv("CDPGATE_BROWSER");
    const char *given = explicit_path && *explicit_path ? explicit_path
                        : env && *env ? env : NULL;
    if (given) {
        const char *src = explicit_path && *explicit_path ? "--browser" : "CDPGATE_BROWSER";
        if (!strchr(given, '/')) {
            /* A bare name: look it up on PATH below. */
        } else if (is_exec_file(given)) {
            if (strlen(given) >= cap)
                return cdp_seterr(err, CDP_EINVAL, "browser path too long");
            snprintf(out, cap, "%s", given);
            return 0;
        } else {
            return cdp_seterr(err, CDP_ENOTFOUND, "%s %s: not an executable file", src,
                              given);
        }
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    const char *const *names = BROWSER_NAMES;
    const char *one[2] = {given, NULL};
    if (given)
        names = one;
    for (size_t i = 0; names[i]; i++) {
        const char *p = path;
        while (*p) {
            const char *e = strchr(p, ':');
            size_t dl = e ? (size_t)(e - p) : strlen(p);
            char cand[1024];
            if (dl && (size_t)snprintf(cand, sizeof cand, "%.*s/%s", (int)dl, p, names[i]) <
                          sizeof cand && is_exec_file(cand)) {
                snprintf(out, cap, "%s", cand);
                return 0;
            }
            p += dl + (e ? 1 : 0);
        }
    }
    if (given)
        return cdp_seterr(err, CDP_ENOTFOUND, "browser %s not found on PATH", given);
    for (size_t i = 0; BROWSER_PATHS[i]; i++) {
        if (is_exec_file(BROWSER_PATHS[i])) {
            snprintf(out, cap, "%s", BROWSER_PATHS[i]);
            return 0;
        }
    }
    return cdp_seterr(err, CDP_ENOTFOUND,
                      "no Chromium-family browser found (tried --browser, "
                      "CDPGATE_BROWSER, chromium, google-chrome, microsoft-edge on PATH "
                      "and the usual install paths); install one, e.g. "
                      "`apt-get install -y chromium`, or pass --browser PATH");
}

/* ---- temporary directory removal ---- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        return rmdir(p) == 0 || errno == ENOENT ? 0 : 0;
    return unlink(p) == 0 || errno == ENOENT ? 0 : 0;
}

static void rm_tree(const char *dir)
{
    if (dir && *dir)
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- process hygiene ---- */

static void close_fds_from(int lo, int keep)
{
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        int dfd = dirfd(d);
        struct dirent *e;
        int fds[1024];
        size_t n = 0;
        while ((e = readdir(d)) && n < 1024) {
            char *end;
            long v = strtol(e->d_name, &end, 10);
            if (*end == 0 && v >= lo && v != dfd && v != keep)
                fds[n++] = (int)v;
        }
        closedir(d);
        for (size_t i = 0; i < n; i++)
            close(fds[i]);
        if (n < 1024)
            return;
    }
    for (int fd = lo; fd < max; fd++)
        if (fd != keep)
            close(fd);
}

/* The watchdog: wait for the driver to go away, then kill the browser's
 * process group and remove the temporary directory. Never returns. */
static void watchdog_main(int lifeline_rd, const char *tmpdir)
{
    /* Hold none of the driver's stdio: a client reading the driver's stdout
     * to its end must not wait for the watchdog. */
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (devnull > 2)
            close(devnull);
    }
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    close_fds_from(3, lifeline_rd);
    pid_t pgid = 0;
    char c;
    /* The driver first writes the browser's pid (as 4 bytes), then holds the
     * pipe open for the browser's life. */
    if (read(lifeline_rd, &pgid, sizeof pgid) != (ssize_t)sizeof pgid)
        pgid = 0;
    while (read(lifeline_rd, &c, 1) > 0 || errno == EINTR)
        ;
    if (pgid > 1) {
        kill(-pgid, SIGKILL);
        kill(pgid, SIGKILL);
        /* Let the kernel tear the processes down before removing files. */
        for (int i = 0; i < 200 && kill(-pgid, 0) == 0; i++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    rm_tree(tmpdir);
    _exit(0);
}

static void tail_file(const char *path, char *out, size_t cap)
{
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > (off_t)(cap - 1) ? end - (off_t)(cap - 1) : 0;
    ssize_t n = pread(fd, out, cap - 1, from);
    close(fd);
    if (n <= 0)
        return;
    out[n] = 0;
    /* Drop the noisy wrapper line and trailing newlines. */
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
        out[--n] = 0;
}

static void describe_status(int st, char *out, size_t cap)
{
    if (WIFEXITED(st))
        snprintf(out, cap, "exited with status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(out, cap, "killed by signal %d", WTERMSIG(st));
    else
        snprintf(out, cap, "stopped");
}

static bool browser_alive(cdp_browser *b)
{
    if (!b->pid || b->reaped)
        return false;
    pid_t r = waitpid(b->pid, &b->status, WNOHANG);
    if (r == b->pid) {
        b->reaped = true;
        return false;
    }
    return true;
}

static void sleep_ms(int ms);

const char *cdp_browser_death(cdp_browser *b)
{
    if (!b->pid)
        return "";
    /* The pipe reads EOF while the kernel is still tearing the process down,
     * a moment before its exit status can be collected: when the connection
     * is gone, give the status up to half a second to appear. */
    bool conn_gone = !b->conn || cdp_conn_dead(b->conn);
    for (int i = 0; conn_gone && i < 50 && browser_alive(b); i++)
        sleep_ms(10);
    if (browser_alive(b))
        return "";
    char st[64], log[700], path[600];
    describe_status(b->status, st, sizeof st);
    snprintf(path, sizeof path, "%s/stderr.log", b->tmpdir);
    tail_file(path, log, sizeof log);
    snprintf(b->death, sizeof b->death, "browser %s%s%s", st,
             *log ? "; its stderr ends with: " : "", log);
    return b->death;
}

/* ---- launch ---- */

static int read_devtools_port(const char *profile, char *ws, size_t cap)
{
    char path[1200], buf[512];
    snprintf(path, sizeof path, "%s/DevToolsActivePort", profile);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *nl = strchr(buf, '\n');
    /* Two lines: the port, then the browser's path (no final newline). A
     * partial file lacks the path: read again later. */
    if (!nl || strncmp(nl + 1, "/devtools/browser/", 18) != 0 || strlen(nl + 1) < 20)
        return -1;
    *nl = 0;
    char *p2 = nl + 1;
    p2[strcspn(p2, "\r\n")] = 0;
    char *end;
    long port = strtol(buf, &end, 10);
    if (*end || port <= 0 || port > 65535 || *p2 != '/')
        return -1;
    snprintf(ws, cap, "ws://127.0.0.1:%ld%s", port, p2);
    return 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void browser_kill(cdp_browser *b)
{
    if (!b->pid || b->reaped)
        return;
    /* Polite first (the profile gets flushed), then the whole group. */
    kill(b->pid, SIGTERM);
    for (int i = 0; i < 100 && browser_alive(b); i++)
        sleep_ms(10);
    kill(-b->pid, SIGKILL);
    pid_t r = -1;
    while (!b->reaped && (r = waitpid(b->pid, &b->status, 0)) < 0 && errno == EINTR)
        ;       /* a host's signal (the sweep's SIGCHLD wake-up) */
    if (r == b->pid)
        b->reaped = true;
    /* Helpers of the group (renderers, zygotes) may linger for a moment.
     * When the host made this process a subreaper (the cdpgate program
     * does, on Linux: cli/main.c; a library never changes that for its
     * embedder), orphaned helpers are its children, reaped here, so the
     * wait ends when the last one has died. Otherwise a dead helper may
     * stay a zombie until init reaps it, and the bound ends the wait (it
     * was 0.5 to 2 s a replay, issue 14). */
    for (int i = 0; i < 100; i++) {
        while (waitpid(-b->pid, NULL, WNOHANG) > 0)
            ;
        if (kill(-b->pid, 0) != 0)
            break;
        kill(-b->pid, SIGKILL);
        sleep_ms(5);
    }
}

static int browser_version(cdp_browser *b, int timeout_ms, cdp_err *err)
{
    cdp_reply r;
    int rc = cdp_call(b->conn, NULL, "Browser.getVersion", NULL, timeout_ms, &r, err);
    if (rc)
        return rc;
    const char *prod = json_get_str(r.result, "product");
    snprintf(b->product, sizeof b->product, "%s", prod ? prod : "unknown");
    cdp_reply_free(&r);
    return 0;
}

/* The browser's temporary directory (b->tmpdir) and its profile: the
 * caller's user_data_dir or a fresh one inside tmpdir. */
static int launch_dirs(cdp_browser *b, const cdp_launch_opts *o, cdp_err *err)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(b->tmpdir, sizeof b->tmpdir, "%s/cdpgate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(b->tmpdir)) {
        cdp_seterr(err, CDP_ELAUNCH, "cannot create a temporary directory in %s: %s",
                   tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return -1;
    }
    if (o->user_data_dir && *o->user_data_dir) {
        char stale[1200];
        snprintf(b->profile, sizeof b->profile, "%s", o->user_data_dir);
        /* A file left by an earlier run would point at a dead port. */
        snprintf(stale, sizeof stale, "%s/DevToolsActivePort", b->profile);
        unlink(stale);
    } else
        snprintf(b->profile, sizeof b->profile, "%s/profile", b->tmpdir);
    return 0;
}

#define FEATURES_OFF "--disable-features=Translate,MediaRouter,OptimizationHints," \
                     "WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"

/* The browser's command line into argv (room for 96 entries, ended by
 * NULL); a_udd (1200 bytes) and a_port hold the arguments built here. */
static void launch_argv(const cdp_browser *b, const cdp_launch_opts *o, const char **argv,
                        char *a_udd, size_t udd_cap, char *a_port)
{
    size_t n = 0;
    argv[n++] = b->path;
    if (!o->headed)
        argv[n++] = "--headless";
    if (geteuid() == 0)
        argv[n++] = "--no-sandbox";
    argv[n++] = "--disable-gpu";
    argv[n++] = "--no-first-run";
    argv[n++] = "--no-default-browser-check";
    argv[n++] = "--disable-background-networking";
    argv[n++] = "--disable-component-update";
    argv[n++] = "--disable-sync";
    argv[n++] = "--disable-crash-reporter";
    argv[n++] = "--disable-breakpad";
    /* The omnibox's WebUI popups: headless Chromium preloads them (two
     * renderer processes, chrome:// pages) in every browser context, for a
     * popup nobody ever shows. The spare renderer (kept warm for the next
     * navigation of the last context used) is wasted when each task has a
     * new context (o->many_contexts: the sweep's shared browser). */
    argv[n++] = o->many_contexts ? FEATURES_OFF ",SpareRendererForSitePerProcess" : FEATURES_OFF;
    argv[n++] = "--disable-default-apps";
    argv[n++] = "--password-store=basic";
    argv[n++] = "--use-mock-keychain";
    snprintf(a_udd, udd_cap, "--user-data-dir=%s", b->profile);
    argv[n++] = a_udd;
    argv[n++] = o->use_port ? a_port : "--remote-debugging-pipe";
    for (size_t i = 0; o->args && o->args[i] && n < 92; i++)
        argv[n++] = o->args[i];
    argv[n++] = "about:blank";
    argv[n] = NULL;
}

/* The browser's environment: ours with TMPDIR set to b->tmpdir (in tmpenv,
 * which must outlive the result), so the browser's own temporary files
 * (shared memory, sockets) go inside our directory too and nothing is left
 * behind even after a kill -9. Built before fork: the child only execs.
 * NULL when out of memory; free the array (not its strings). */
static char **launch_env(const cdp_browser *b, char *tmpenv, size_t cap)
{
    extern char **environ;
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    char **envp = calloc(nenv + 2, sizeof *envp);
    snprintf(tmpenv, cap, "TMPDIR=%s", b->tmpdir);
    if (!envp)
        return NULL;
    size_t ne = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "TMPDIR=", 7) != 0)
            envp[ne++] = environ[i];
    envp[ne++] = tmpenv;
    envp[ne] = NULL;
    return envp;
}

/* In the forked child: stdio to /dev/null and logpath, the pipe ends on
 * fds 3 and 4 (pipe mode), everything else closed, then exec the browser.
 * Never returns. */
static void launch_exec(const cdp_browser *b, const cdp_launch_opts *o, const char **argv,
                        char **envp, const char *logpath, int cmd_rd, int reply_wr)
{
    setpgid(0, 0);
#if defined(__linux__)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    int devnull = open("/dev/null", O_RDWR);
    int logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
    }
    if (logfd >= 0)
        dup2(logfd, 2);
    if (!o->use_port) {
        /* The browser reads commands on fd 3 and writes replies on 4.
         * Move the pipe ends out of the way before placing them. */
        int r = fcntl(cmd_rd, F_DUPFD, 10);
        int w = fcntl(reply_wr, F_DUPFD, 10);
        if (r < 0 || w < 0 || dup2(r, 3) < 0 || dup2(w, 4) < 0)
            _exit(127);
    }
    close_fds_from(o->use_port ? 3 : 5, -1);
    signal(SIGPIPE, SIG_DFL);
    execve(b->path, (char *const *)argv, envp);
    _exit(127);
}

/* Port mode: wait (until dl) for DevToolsActivePort, which the browser
 * writes once listening, then connect to it. NULL with err set on failure. */
static ws_transport *launch_connect_port(cdp_browser *b, int64_t dl, int timeout,
                                         cdp_err *err)
{
    for (;;) {
        if (read_devtools_port(b->profile, b->ws_url, sizeof b->ws_url) == 0)
            break;
        if (!browser_alive(b)) {
            cdp_seterr(err, CDP_ELAUNCH, "%s (%s)", cdp_browser_death(b), b->path);
            return NULL;
        }
        if (base_now_ms() > dl) {
            cdp_seterr(err, CDP_ELAUNCH,
                       "%s did not open its DevTools port within %d ms", b->path,
                       timeout);
            return NULL;
        }
        sleep_ms(5);
    }
    char werr[300];
    ws_opts wo = {0, cdp_remaining(dl) > 0 ? cdp_remaining(dl) : 1};
    ws_transport *t = ws_transport_connect(b->ws_url, &wo, werr, sizeof werr);
    if (!t)
        cdp_seterr(err, CDP_ELAUNCH, "connect to %s: %s", b->ws_url, werr);
    return t;
}

/* The connection over the transport, and the browser's answer to
 * Browser.getVersion (until dl): a browser that died says how. */
static int launch_handshake(cdp_browser *b, const cdp_launch_opts *o, ws_transport *t,
                            int64_t dl, cdp_err *err)
{
    b->conn = cdp_conn_new(t, &o->conn);
    if (!b->conn) {
        cdp_seterr(err, CDP_ENOMEM, "out of memory");
        return -1;
    }
    int rc = browser_version(b, cdp_remaining(dl) > 0 ? cdp_remaining(dl) : 1, err);
    if (rc) {
        const char *d = cdp_browser_death(b);
        if (*d)
            cdp_seterr(err, CDP_ELAUNCH, "%s (%s)", d, b->path);
        else if (err)
            err->code = CDP_ELAUNCH;
        return -1;
    }
    return 0;
}

cdp_browser *cdp_browser_launch(const cdp_launch_opts *o, cdp_err *err)
{
    cdp_launch_opts dflt = {0};
    if (!o)
        o = &dflt;
    cdp_browser *b = calloc(1, sizeof *b);
    if (!b) {
        cdp_seterr(err, CDP_ENOMEM, "out of memory");
        return NULL;
    }
    b->lifeline = -1;
    int timeout = o->timeout_ms > 0 ? o->timeout_ms : 20000;
    if (cdp_browser_find(o->browser, b->path, sizeof b->path, err) ||
        launch_dirs(b, o, err)) {
        free(b);
        return NULL;
    }

    char a_udd[1200], a_port[] = "--remote-debugging-port=0";
    const char *argv[96];
    launch_argv(b, o, argv, a_udd, sizeof a_udd, a_port);
    char tmpenv[600];
    char **envp = launch_env(b, tmpenv, sizeof tmpenv);
    if (!envp) {
        cdp_seterr(err, CDP_ENOMEM, "out of memory");
        rm_tree(b->tmpdir);
        free(b);
        return NULL;
    }

    int to_browser[2] = {-1, -1}, from_browser[2] = {-1, -1}, life[2] = {-1, -1};
    if (pipe(life) != 0 ||
        (!o->use_port && (pipe(to_browser) != 0 || pipe(from_browser) != 0))) {
        cdp_seterr(err, CDP_ELAUNCH, "pipe: %s", strerror(errno));
        goto fail_fds;
    }
    /* Everything of ours is close-on-exec; the child dups what it needs. */
    int all[6] = {to_browser[0], to_browser[1], from_browser[0], from_browser[1],
                  life[0], life[1]};
    for (int i = 0; i < 6; i++)
        if (all[i] >= 0)
            fcntl(all[i], F_SETFD, FD_CLOEXEC);

    b->watchdog = fork();
    if (b->watchdog < 0) {
        cdp_seterr(err, CDP_ELAUNCH, "fork: %s", strerror(errno));
        goto fail_fds;
    }
    if (b->watchdog == 0) {
        /* Own process group: a terminal's ^C to the driver's group must not
         * take the watchdog down before it has done its job. */
        setpgid(0, 0);
        char dir[sizeof b->tmpdir];
        memcpy(dir, b->tmpdir, sizeof dir);
        free(envp);     /* this process only waits: drop the parent's heap */
        free(b);
        watchdog_main(life[0], dir);
    }
    close(life[0]);
    life[0] = -1;
    b->lifeline = life[1];

    char logpath[600];
    snprintf(logpath, sizeof logpath, "%s/stderr.log", b->tmpdir);
    b->pid = fork();
    if (b->pid < 0) {
        cdp_seterr(err, CDP_ELAUNCH, "fork: %s", strerror(errno));
        b->pid = 0;
        goto fail_fds;
    }
    if (b->pid == 0)
        launch_exec(b, o, argv, envp, logpath, to_browser[0], from_browser[1]);
    setpgid(b->pid, b->pid);    /* also from here, to close the race */
    free(envp);
    envp = NULL;
    if (write(b->lifeline, &b->pid, sizeof b->pid) != (ssize_t)sizeof b->pid) {
        cdp_seterr(err, CDP_ELAUNCH, "watchdog: %s", strerror(errno));
        goto fail;
    }

    int64_t dl = base_now_ms() + timeout;
    ws_transport *t = NULL;
    if (!o->use_port) {
        close(to_browser[0]);
        close(from_browser[1]);
        to_browser[0] = from_browser[1] = -1;
        t = ws_transport_pipe(from_browser[0], to_browser[1], 0);
        from_browser[0] = to_browser[1] = -1;   /* owned by t now, even on failure */
        if (!t) {
            cdp_seterr(err, CDP_ENOMEM, "out of memory");
            goto fail;
        }
    } else if (!(t = launch_connect_port(b, dl, timeout, err)))
        goto fail;
    if (launch_handshake(b, o, t, dl, err))
        goto fail;
    return b;

fail_fds:
    for (int i = 0; i < 2; i++) {
        if (to_browser[i] >= 0) close(to_browser[i]);
        if (from_browser[i] >= 0) close(from_browser[i]);
    }
    if (life[0] >= 0)
        close(life[0]);
    if (life[1] >= 0 && b->lifeline != life[1])
        close(life[1]);
fail:
    free(envp);
    if (to_browser[1] >= 0) close(to_browser[1]);
    if (from_browser[0] >= 0) close(from_browser[0]);
    cdp_browser_free(b);
    return NULL;
}

cdp_browser *cdp_browser_connect(const char *url, const cdp_opts *o, int timeout_ms,
                                 cdp_err *err)
{
    if (!url || !*url) {
        cdp_seterr(err, CDP_EINVAL, "--connect needs a URL (ws://host:port/devtools/"
                   "browser/ID or http://host:port)");
        return NULL;
    }
    int timeout = timeout_ms > 0 ? timeout_ms : 10000;
    int64_t dl = base_now_ms() + timeout;
    cdp_browser *b = calloc(1, sizeof *b);
    if (!b) {
        cdp_seterr(err, CDP_ENOMEM, "out of memory");
        return NULL;
    }
    b->lifeline = -1;
    ws_url u;
    char uerr[256];
    if (ws_url_parse(url, &u, uerr, sizeof uerr) != 0) {
        cdp_seterr(err, CDP_ECONNECT, "--connect %s: %s", url, uerr);
        goto fail;
    }
    if (strcmp(u.scheme, "http") == 0 || strcmp(u.scheme, "https") == 0) {
        char vurl[2400], herr[300];
        char *body = NULL;
        size_t blen = 0;
        int status = 0;
        const char *base = url;
        size_t bl = strlen(base);
        while (bl && base[bl - 1] == '/')
            bl--;
        snprintf(vurl, sizeof vurl, "%.*s/json/version", (int)bl, base);
        int r = ws_http_get(vurl, timeout, 1 << 20, &body, &blen, &status, herr, sizeof herr);
        if (r != 0) {
            cdp_seterr(err, CDP_ECONNECT, "--connect %s: %s", url, herr);
            goto fail;
        }
        if (status != 200) {
            free(body);
            cdp_seterr(err, CDP_ECONNECT, "--connect %s: GET /json/version answered HTTP %d "
                       "(is this a DevTools endpoint?)", url, status);
            goto fail;
        }
        json_err je;
        json_doc *d = json_parse(body, blen, NULL, &je);
        free(body);
        const char *ws = json_get_str(json_doc_root(d), "webSocketDebuggerUrl");
        if (!ws) {
            json_doc_free(d);
            cdp_seterr(err, CDP_ECONNECT, "--connect %s: /json/version has no "
                       "webSocketDebuggerUrl (not a DevTools endpoint?)", url);
            goto fail;
        }
        snprintf(b->ws_url, sizeof b->ws_url, "%s", ws);
        json_doc_free(d);
    } else {
        snprintf(b->ws_url, sizeof b->ws_url, "%s", url);
    }
    char werr[300];
    ws_opts wo = {0, cdp_remaining(dl) > 0 ? cdp_remaining(dl) : 1};
    ws_transport *t = ws_transport_connect(b->ws_url, &wo, werr, sizeof werr);
    if (!t) {
        cdp_seterr(err, CDP_ECONNECT, "--connect %s: %s", b->ws_url, werr);
        goto fail;
    }
    b->conn = cdp_conn_new(t, o);
    if (!b->conn) {
        cdp_seterr(err, CDP_ENOMEM, "out of memory");
        goto fail;
    }
    if (browser_version(b, cdp_remaining(dl) > 0 ? cdp_remaining(dl) : 1, err)) {
        if (err) {
            char m[512];
            snprintf(m, sizeof m, "%s", err->msg);
            cdp_seterr(err, CDP_ECONNECT, "--connect %s: %s", b->ws_url, m);
        }
        goto fail;
    }
    return b;
fail:
    cdp_browser_free(b);
    return NULL;
}

void cdp_browser_free(cdp_browser *b)
{
    if (!b)
        return;
    if (b->conn && b->pid && !cdp_conn_dead(b->conn)) {
        /* Ask the browser to close cleanly; short bound, we kill anyway. */
        cdp_call(b->conn, NULL, "Browser.close", NULL, 2000, NULL, NULL);
    }
    cdp_conn_free(b->conn);     /* closes the pipe: the browser exits too */
    b->conn = NULL;
    if (b->pid)
        browser_kill(b);
    if (*b->tmpdir)
        rm_tree(b->tmpdir);
    if (b->lifeline >= 0)
        close(b->lifeline);
    while (b->watchdog > 0 && waitpid(b->watchdog, NULL, 0) < 0 && errno == EINTR)
        ;
    free(b);
}

cdp_conn *cdp_browser_conn(cdp_browser *b) { return b->conn; }
const char *cdp_browser_product(const cdp_browser *b) { return b->product; }
const char *cdp_browser_ws_url(const cdp_browser *b) { return b->ws_url; }
pid_t cdp_browser_pid(const cdp_browser *b) { return b->pid; }
const char *cdp_browser_profile_dir(const cdp_browser *b) { return b->pid ? b->profile : ""; }

cdp_browser *cdp_browser_adopt(int fd, const cdp_opts *o, int timeout_ms, cdp_err *err)
{
    cdp_browser *b = calloc(1, sizeof *b);
    int fd2 = fd >= 0 ? dup(fd) : -1;
    ws_transport *t = b && fd2 >= 0 ? ws_transport_pipe(fd, fd2, 0) : NULL;
    if (!t) {
        if (fd2 >= 0)
            close(fd2);
        if (fd >= 0)
            close(fd);
        free(b);
        cdp_seterr(err, CDP_ENOMEM, "cannot use descriptor %d: %s", fd, strerror(errno));
        return NULL;
    }
    b->lifeline = -1;
    b->conn = cdp_conn_new(t, o);
    if (!b->conn || browser_version(b, timeout_ms > 0 ? timeout_ms : 10000, err)) {
        if (!b->conn)
            cdp_seterr(err, CDP_ENOMEM, "out of memory");
        cdp_browser_free(b);
        return NULL;
    }
    return b;
}
