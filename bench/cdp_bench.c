/*
 * cdp_bench.c — transport and driver figures (printed, never asserted):
 *   - median and p90 round trip of Runtime.evaluate("1") on a page session,
 *     over the pipe and over WebSocket, beside Node's `ws` client against the
 *     same browser in the same run, the three in interleaved rounds;
 *   - driver start to first CDP response (attach mode, so the browser's own
 *     launch is excluded): fork/exec of `cdpgate version --connect` to the
 *     moment its first reply is handled;
 *   - the driver's peak RSS with one page (cdpgate eval, VmHWM);
 *   - captures a real Accessibility.getFullAXTree response and a full-page
 *     Page.captureScreenshot response into OUTDIR for the JSON benchmark.
 *
 *   cdp_bench CDPGATE_BIN OUTDIR [N]
 *
 * BENCH_AX="NAME=URL ..." captures the accessibility trees of more pages
 * (e.g. the Python manual's stdtypes.html from bench/pages.sh's site, or a
 * file: URL) as OUTDIR/axtree-NAME.json, for json_bench's stream figures;
 * with N = 0 only the captures run (no round trips, no driver starts).
 *
 * BENCH_QUICK=1 (bench/smoke.sh, CI): 3 driver starts instead of 21, and
 * the JSON inputs captured from shapes/list200.html's viewport instead of
 * the whole of big.html (its 24 MB accessibility tree can take minutes on a
 * loaded machine), so the program is known to run; pass a small N too.
 */
#include "cdp/cdp.h"
#include "tests/fixture.h"
#include "bench/benchlib.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* n round trips on a fresh page of b (after 50 unmeasured), their times in
 * microseconds into t[0..n). */
static int rtt(cdp_browser *b, int n, double *t)
{
    cdp_err e;
    cdp_page *p = cdp_page_open(b, 10000, &e);
    if (!p) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return -1;
    }
    cdp_conn *c = cdp_browser_conn(b);
    for (int i = -50; i < n; i++) {
        long long t0 = now_ns();
        if (cdp_call(c, cdp_page_session(p), "Runtime.evaluate", "{\"expression\":\"1\"}",
                     5000, NULL, &e)) {
            fprintf(stderr, "bench: %s\n", e.msg);
            cdp_page_free(p);
            return -1;
        }
        if (i >= 0)
            t[i] = (now_ns() - t0) / 1e3;
    }
    cdp_page_free(p);
    return 0;
}

/* The median and p90 of t[0..n) (sorted in place). */
static void rtt_stats(double *t, int n, double *median, double *p90)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    *median = t[n / 2];
    *p90 = t[n * 9 / 10];
}

static int save(const char *path, const json_val *v)
{
    size_t len;
    char *s = json_write(v, &len);
    FILE *f = fopen(path, "wb");
    if (!s || !f) {
        free(s);
        if (f)
            fclose(f);
        return -1;
    }
    fwrite(s, 1, len, f);
    fclose(f);
    free(s);
    return (int)(len / 1024);
}

/* The reply of Accessibility.getFullAXTree on page p at url, whole, into
 * path; its size and node count printed. */
static void capture_ax(cdp_browser *b, cdp_page *p, const char *url, const char *path)
{
    cdp_err e;
    cdp_reply r;
    if (cdp_page_navigate(p, url, 60000, &e)) {
        fprintf(stderr, "bench: capture %s: %s\n", url, e.msg);
        return;
    }
    if (cdp_call(cdp_browser_conn(b), cdp_page_session(p), "Accessibility.getFullAXTree", "{}",
                 120000, &r, &e) == 0) {
        /* The whole reply message, as the driver receives it. */
        printf("  captured %s (%d KiB, %zu AX nodes)\n", path,
               save(path, json_doc_root(r.doc)), json_len(json_get(r.result, "nodes")));
        cdp_reply_free(&r);
    } else {
        fprintf(stderr, "bench: accessibility tree of %s: %s\n", url, e.msg);
    }
}

/* BENCH_AX="NAME=URL ...": each page's tree into OUTDIR/axtree-NAME.json. */
static void capture_more(cdp_browser *b, const char *outdir)
{
    const char *spec = getenv("BENCH_AX");
    if (!spec || !*spec)
        return;
    cdp_err e;
    cdp_page *p = cdp_page_open(b, 10000, &e);
    if (!p) {
        fprintf(stderr, "bench: capture: %s\n", e.msg);
        return;
    }
    char *list = strdup(spec), *save_p = NULL;
    for (char *w = list ? strtok_r(list, " ", &save_p) : NULL; w;
         w = strtok_r(NULL, " ", &save_p)) {
        char *eq = strchr(w, '=');
        if (!eq || eq == w) {
            fprintf(stderr, "bench: BENCH_AX: want NAME=URL, not %s\n", w);
            continue;
        }
        *eq = 0;
        char path[1024];
        snprintf(path, sizeof path, "%s/axtree-%s.json", outdir, w);
        capture_ax(b, p, eq + 1, path);
    }
    free(list);
    cdp_page_free(p);
}

/* Capture the JSON benchmark's inputs from a real page. */
static void capture(cdp_browser *b, int port, const char *outdir)
{
    cdp_err e;
    cdp_page *p = cdp_page_open(b, 10000, &e);
    char url[128], path[1024];
    const char *quick = getenv("BENCH_QUICK");
    bool whole = !(quick && strcmp(quick, "1") == 0);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/%s", port,
             whole ? "big.html" : "shapes/list200.html");
    if (!p || cdp_page_navigate(p, url, 30000, &e)) {
        fprintf(stderr, "bench: capture: %s\n", e.msg);
        cdp_page_free(p);
        return;
    }
    cdp_conn *c = cdp_browser_conn(b);
    cdp_reply r;
    if (cdp_call(c, cdp_page_session(p), "Accessibility.getFullAXTree", "{}", 60000, &r, &e)
        == 0) {
        snprintf(path, sizeof path, "%s/axtree.json", outdir);
        /* The whole reply message, as the driver receives it. */
        printf("  captured %s (%d KiB, %zu AX nodes)\n", path,
               save(path, json_doc_root(r.doc)), json_len(json_get(r.result, "nodes")));
        cdp_reply_free(&r);
    } else {
        fprintf(stderr, "bench: accessibility tree: %s\n", e.msg);
    }
    if (cdp_call(c, cdp_page_session(p), "Page.captureScreenshot",
                 whole ? "{\"format\":\"png\",\"captureBeyondViewport\":true}"
                       : "{\"format\":\"png\"}", 60000, &r, &e) == 0) {
        snprintf(path, sizeof path, "%s/screenshot.json", outdir);
        printf("  captured %s (%d KiB)\n", path, save(path, json_doc_root(r.doc)));
        cdp_reply_free(&r);
    } else {
        fprintf(stderr, "bench: screenshot: %s\n", e.msg);
    }
    cdp_page_free(p);
}

/* Run argv with CDPGATE_TIMING=1; return the value of "timing: KEY=" from
 * its stderr, and the fork time in *t_fork. */
static long long run_timed(char *const argv[], const char *key, long long *t_fork)
{
    char tmpl[] = "/tmp/cdpgate-bench-XXXXXX";
    int fd = mkstemp(tmpl);
    unlink(tmpl);
    *t_fork = now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        setenv("CDPGATE_TIMING", "1", 1);
        dup2(fd, 2);
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    waitpid(pid, NULL, 0);
    char buf[4096];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char pat[64];
    snprintf(pat, sizeof pat, "timing: %s=", key);
    char *s = strstr(buf, pat);
    return s ? strtoll(s + strlen(pat), NULL, 10) : -1;
}

/* n round trips by Node's ws client on browser ws: their times into
 * t[0..n) (node_rtt.js prints each with "raw"). */
static int node_rtt(const char *ws, int n, double *t)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "node bench/node_rtt.js '%s' %d raw 2>/dev/null", ws, n);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    int k = 0;
    while (k < n && fscanf(f, "%lf", &t[k]) == 1)
        k++;
    pclose(f);
    return k == n ? 0 : -1;
}

/* The three clients in RTT_ROUNDS rounds of n/RTT_ROUNDS calls each, one
 * after another inside a round (pipe, WebSocket, Node), each on a page of
 * its own: a drift of the machine's load or of the browsers' warm-up over
 * the run falls on all three alike (they ran one after another before:
 * Node last, on the most warmed-up browser); each client's figures pool
 * its rounds. Both browsers are up for the whole run. */
#define RTT_ROUNDS 4

static void rtt_all(cdp_browser *pipe_b, cdp_browser *ws_b, int n)
{
    int per = n / RTT_ROUNDS > 0 ? n / RTT_ROUNDS : 1;
    n = per * RTT_ROUNDS;
    double *tp = malloc(sizeof *tp * (size_t)n), *tw = malloc(sizeof *tw * (size_t)n),
           *tn = malloc(sizeof *tn * (size_t)n);
    bool pok = tp != NULL, wok = tw != NULL, nok = tn != NULL;
    for (int r = 0; r < RTT_ROUNDS; r++) {
        pok = pok && rtt(pipe_b, per, tp + r * per) == 0;
        wok = wok && rtt(ws_b, per, tw + r * per) == 0;
        nok = nok && node_rtt(cdp_browser_ws_url(ws_b), per, tn + r * per) == 0;
    }
    double pm = 0, p9 = 0, wm = 0, w9 = 0, nm = 0, n9 = 0;
    printf("CDP round trip, Runtime.evaluate(\"1\") on a page session, %d calls each in %d "
           "interleaved rounds:\n", n, RTT_ROUNDS);
    if (pok) {
        rtt_stats(tp, n, &pm, &p9);
        printf("  cdpgate pipe       median %7.1f us   p90 %7.1f us\n", pm, p9);
    }
    if (wok) {
        rtt_stats(tw, n, &wm, &w9);
        printf("  cdpgate websocket  median %7.1f us   p90 %7.1f us\n", wm, w9);
    }
    if (nok) {
        rtt_stats(tn, n, &nm, &n9);
        printf("  node ws client     median %7.1f us   p90 %7.1f us\n", nm, n9);
        if (pok && wok)
            printf("  ratio node/cdpgate (websocket) %.2fx, node/cdpgate (pipe) %.2fx "
                   "(>1 means cdpgate is faster)\n", nm / wm, nm / pm);
    } else {
        printf("  node ws client     (not measured: node or tests/peers/node_modules missing)\n");
    }
    free(tp);
    free(tw);
    free(tn);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cdp_bench CDPGATE_BIN OUTDIR [N]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    const char *bin = argv[1], *outdir = argv[2];
    int n = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 2000;
    pid_t srv;
    int port = fixture_server_start(&srv);
    cdp_err e;
    cdp_launch_opts lo = {0};
    if (n == 0) {              /* only the captures */
        cdp_browser *b = cdp_browser_launch(&lo, &e);
        if (!b) {
            fprintf(stderr, "bench: %s\n", e.msg);
            return 1;
        }
        capture(b, port, outdir);
        capture_more(b, outdir);
        cdp_browser_free(b);
        fixture_server_stop(srv);
        return 0;
    }

    cdp_browser *pb = cdp_browser_launch(&lo, &e);
    if (!pb) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    lo.use_port = true;
    cdp_browser *b = cdp_browser_launch(&lo, &e);
    if (!b) {
        fprintf(stderr, "bench: %s\n", e.msg);
        cdp_browser_free(pb);
        return 1;
    }
    char ws[512];
    snprintf(ws, sizeof ws, "%s", cdp_browser_ws_url(b));
    rtt_all(pb, b, n);
    cdp_browser_free(pb);

    /* Driver start to first CDP response, attached (no browser launch). */
    const char *quick = getenv("BENCH_QUICK");
    int starts = quick && strcmp(quick, "1") == 0 ? 3 : 21;
    long long best[21];
    int k = 0;
    for (int i = 0; i < starts; i++) {
        long long t_fork;
        char *av[] = {(char *)bin, "version", "--connect", ws, NULL};
        long long t = run_timed(av, "first_response_ns", &t_fork);
        if (t > 0)
            best[k++] = t - t_fork;
    }
    if (k) {
        double d[21];
        for (int i = 0; i < k; i++)
            d[i] = best[i] / 1e6;
        qsort(d, (size_t)k, sizeof *d, bench_cmp_double);
        printf("\nDriver start to first CDP response (fork+exec of cdpgate, attach over "
               "WebSocket,\nBrowser.getVersion answered), %d runs: median %.2f ms, min %.2f ms\n",
               k, d[k / 2], d[0]);
    }

    /* Peak RSS of the driver with one page. */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/index.html", port);
    long long t_fork;
    char *av1[] = {(char *)bin, "--connect", ws, "eval", url, "document.title", NULL};
    long long kb_ws = run_timed(av1, "vmhwm_kb", &t_fork);
    char *av2[] = {(char *)bin, "eval", url, "document.title", NULL};
    long long kb_pipe = run_timed(av2, "vmhwm_kb", &t_fork);
    printf("\nDriver peak RSS (VmHWM) with one page: %lld KiB attached over WebSocket, "
           "%lld KiB launching over the pipe\n", kb_ws, kb_pipe);

    printf("\nCapturing JSON benchmark inputs from real Chromium:\n");
    capture(b, port, outdir);
    capture_more(b, outdir);
    cdp_browser_free(b);
    fixture_server_stop(srv);
    return 0;
}
