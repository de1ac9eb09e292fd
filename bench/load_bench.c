/*
 * load_bench.c — what a privileged context's egress rule costs a page load
 * (issue 11, point 17): the bench's real pages, each loaded N times in two
 * browsers side by side, figures printed, never asserted:
 *   off  an agent under a grant naming the page's origin, in its untrusted
 *        context: every request paused and judged (Fetch interception), no
 *        network rule;
 *   on   an agent under the same grant plus an identity for the origin, with
 *        a vault holding a dummy session (one cookie) for it: the page opens
 *        in a privileged context (auth=yes), created with the unusable proxy
 *        and its bypass list (docs/gate.md, "A privileged context's network
 *        rule"), every request judged as a privileged one.
 * A load is snap_open's latency (navigation, load, settle, the result's
 * snapshot) plus, for a page with READY text, the time until a snapshot
 * shows it (Swagger UI renders after fetching its spec). Each page is loaded
 * once in each browser first (the privileged context's restore happens
 * there), then N times alternating which browser goes first; the figure is
 * the median. The overall ratio is the geometric mean of the pages' ratios.
 *
 *   load_bench BASE_URL N ID=PATH[=READY]...
 *
 * BASE_URL is the server's http://127.0.0.1:PORT; both browsers load the
 * pages as http://bench.test:PORT (see BENCH_HOST below). The vault lives in a temporary directory with a key made up for the run
 * (never $CDPGATE_KEY_CMD or a key file of the user's) and is removed at the
 * end. The dummy cookie's value is never printed.
 *
 * BENCH_QUICK=1 (bench/smoke.sh, CI, a shared machine): each load may take
 * 60 s instead of the agent's default 15 s, so the program is known to run.
 */
#include "cdp/cdp.h"
#include "gate/gate.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"
#include "bench/benchlib.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUNS_MAX 101

/* The pages are loaded from http://bench.test:PORT, mapped to the server's
 * 127.0.0.1 in both browsers alike: a host name, as a real service has,
 * whose bypass entry is an ordinary one (a granted loopback origin
 * 127.0.0.1:PORT loads in a privileged context as well since the bypass
 * list puts "<-loopback>" first; test_gate_accept net_privileged_loopback). */
#define BENCH_HOST "bench.test"
#define HOST_RULES "--host-resolver-rules=MAP " BENCH_HOST " 127.0.0.1"

/* Requests the gate asked the human about (none expected: the pages only
 * read); allowed, so a page that does send something still loads. */
static int asks;

/* The run's vault key: random bytes, held by the vault until vault_close. */
static int bench_key(void *arg, const char *dir, uint8_t key[32], char *err, size_t errlen)
{
    (void)arg;
    (void)dir;
    int fd = open("/dev/urandom", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, key, 32) : -1;
    if (fd >= 0)
        close(fd);
    if (n != 32) {
        snprintf(err, errlen, "/dev/urandom: cannot read a key");
        return VAULT_EKEY;
    }
    return VAULT_OK;
}

typedef struct {
    cdp_browser *b;
    gate *g;
    snap_agent *a;
    bool privileged;
    int wrong_auth;     /* loads whose header did not say the expected auth= */
    int blocked;        /* loads whose result reports a request refused: then the
                           two sides did not load the same page */
} side;

static int side_up(side *s, bool privileged, const char *origin, vault *v, cdp_err *e)
{
    memset(s, 0, sizeof *s);
    s->privileged = privileged;
    char winarg[64];
    const char *win = getenv("BENCH_WINDOW");
    snprintf(winarg, sizeof winarg, "--window-size=%s", win && *win ? win : "1280,720");
    const char *args[] = {winarg, HOST_RULES, NULL};
    cdp_launch_opts lo = {0};
    lo.browser = getenv("CDPGATE_BROWSER");
    lo.args = args;
    if (!(s->b = cdp_browser_launch(&lo, e)))
        return -1;
    const char *origins[] = {origin};
    gate_identity id = {.service = origin, .identity = "bench"};
    gate_grant gg = {0};
    gg.task = "load bench";
    gg.principal = "bench";
    gg.origins = origins;
    gg.norigins = 1;
    if (privileged) {
        gg.identities = &id;
        gg.nidentities = 1;
    }
    gate_opts go = {.confirm = bench_allow_hook, .confirm_ud = &asks};
    gate_err ge = {{0}};
    if (!(s->g = gate_new(&gg, &go, &ge))) {
        snprintf(e->msg, sizeof e->msg, "gate_new: %s", ge.msg);
        return -1;
    }
    snap_opts so = {0};
    so.gate = s->g;
    so.vault = privileged ? v : NULL;
    const char *quick = getenv("BENCH_QUICK");
    if (quick && strcmp(quick, "1") == 0)
        so.timeout_ms = 60000;
    return (s->a = snap_agent_new(s->b, &so, e)) ? 0 : -1;
}

static void side_down(side *s)
{
    snap_agent_free(s->a);
    gate_free(s->g);
    cdp_browser_free(s->b);
}

/* One load of url (and of ready, when given): milliseconds, or -1. */
static double load(side *s, const char *id, const char *url, const char *ready)
{
    snap_result r = {0};
    double t0 = bench_now_ms();
    int rc = snap_open(s->a, url, false, &r);
    if (rc) {
        fprintf(stderr, "load_bench: %s (%s): %s: %.300s\n", id, s->privileged ? "on" : "off",
                snap_strerror(rc), r.text ? r.text : "");
        snap_result_free(&r);
        return -1;
    }
    const char *want = s->privileged ? " auth=yes " : " auth=no ";
    const char *hdr = r.text ? strstr(r.text, "[page] ") : NULL;
    const char *eol = hdr ? strchr(hdr, '\n') : NULL;
    const char *hit = hdr ? strstr(hdr, want) : NULL;
    if (!hit || (eol && hit > eol))
        s->wrong_auth++;
    if (r.text && strstr(r.text, "blocked before it left"))
        s->blocked++;
    snap_result_free(&r);
    for (double end = t0 + 15000; ready;) {
        rc = snap_observe(s->a, &(snap_query){0}, &r);
        bool seen = !rc && r.text && strstr(r.text, ready);
        snap_result_free(&r);
        if (seen)
            break;
        if (bench_now_ms() > end) {
            fprintf(stderr, "load_bench: %s (%s): \"%s\" not shown within 15 s\n", id,
                    s->privileged ? "on" : "off", ready);
            return -1;
        }
        bench_nap_ms(20);
    }
    return bench_now_ms() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: load_bench BASE_URL N ID=PATH[=READY]...\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    /* BASE_URL's host becomes BENCH_HOST (see above); its port stays. */
    const char *given = argv[1], *port = strstr(given, "://");
    port = port ? strchr(port + 3, ':') : NULL;
    char base[300];
    snprintf(base, sizeof base, "http://%s%s", BENCH_HOST, port ? port : "");
    int n = (int)strtol(argv[2], NULL, 10);
    if (n < 1 || n > RUNS_MAX)
        n = 7;
    char origin[256];
    if (snap_url_origin(base, origin, sizeof origin) != 0) {
        fprintf(stderr, "load_bench: not an http(s) URL: %s\n", given);
        return 2;
    }

    /* The dummy session: one host-only cookie for the origin's host. */
    char root[] = "/tmp/cdpgate-load-bench-XXXXXX", vdir[sizeof root + 8];
    if (!mkdtemp(root)) {
        perror("load_bench: mkdtemp");
        return 1;
    }
    snprintf(vdir, sizeof vdir, "%s/vault", root);
    char err[400] = "", host[256], state[600];
    vault_keyprov kp = {bench_key, NULL};
    vault *v = vault_open(vdir, &kp, err, sizeof err);
    snprintf(host, sizeof host, "%s", strstr(origin, "://") + 3);
    host[strcspn(host, ":")] = 0;
    int sn = snprintf(state, sizeof state,
                      "{\"version\":1,\"cookies\":[{\"name\":\"bench_sid\",\"value\":"
                      "\"dummy-%08lx\",\"domain\":\"%s\",\"path\":\"/\",\"httpOnly\":true,"
                      "\"secure\":false,\"sameSite\":\"Lax\"}],\"localStorage\":{}}",
                      (unsigned long)getpid(), host);
    if (!v || vault_put(v, origin, "bench", (const uint8_t *)state, (size_t)sn, 0, err,
                        sizeof err) != VAULT_OK) {
        fprintf(stderr, "load_bench: vault: %s\n", err);
        vault_close(v);
        bench_rm_tree(root, 3);
        return 1;
    }

    side off = {0}, on = {0};
    cdp_err e = {0};
    int rc = 0;
    if (side_up(&off, false, origin, NULL, &e) || side_up(&on, true, origin, v, &e)) {
        fprintf(stderr, "load_bench: %s\n", e.msg);
        rc = 1;
        goto out;
    }
    printf("== privileged context's egress rule: page load, ms (median of %d; lower is "
           "better)\n", n);
    printf("  %-12s %10s %10s %8s\n", "page", "off", "on", "on/off");
    double logsum = 0;
    int pages = 0;
    for (int i = 3; i < argc; i++) {
        char spec[1024], url[2048];
        snprintf(spec, sizeof spec, "%s", argv[i]);
        char *id = spec, *path = strchr(spec, '='), *ready = NULL;
        if (!path)
            continue;
        *path++ = 0;
        if ((ready = strchr(path, '=')) != NULL)
            *ready++ = 0;
        snprintf(url, sizeof url, "%s%s", base, path);
        double toff[RUNS_MAX], ton[RUNS_MAX];
        bool ok = load(&off, id, url, ready) >= 0 && load(&on, id, url, ready) >= 0;
        for (int k = 0; ok && k < n; k++) {
            side *first = k % 2 ? &on : &off, *second = k % 2 ? &off : &on;
            double t1 = load(first, id, url, ready);
            double t2 = t1 >= 0 ? load(second, id, url, ready) : -1;
            ok = t1 >= 0 && t2 >= 0;
            toff[k] = k % 2 ? t2 : t1;
            ton[k] = k % 2 ? t1 : t2;
        }
        if (!ok) {
            printf("  %-12s %10s\n", id, "failed (stderr)");
            continue;
        }
        double mo = bench_median(toff, n), mn = bench_median(ton, n);
        printf("  %-12s %10.1f %10.1f %8.3f\n", id, mo, mn, mn / mo);
        fflush(stdout);
        logsum += log(mn / mo);
        pages++;
    }
    if (pages)
        printf("  %-12s %21s %8.3f   (target: at most 1.05)\n", "overall", "geometric mean",
               exp(logsum / pages));
    if (off.wrong_auth || on.wrong_auth)
        printf("  note: %d off loads not auth=no, %d on loads not auth=yes: the figures do "
               "not compare what they say\n", off.wrong_auth, on.wrong_auth);
    if (off.blocked || on.blocked)
        printf("  note: %d off loads and %d on loads had a request refused: the pages "
               "loaded are not the same\n", off.blocked, on.blocked);
    if (asks)
        printf("  note: the gate asked the human %d times (answered allow)\n", asks);
out:
    side_down(&on);
    side_down(&off);
    vault_close(v);
    bench_rm_tree(root, 3);
    return rc;
}
