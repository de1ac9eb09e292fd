/*
 * act_bench.c — cdpgate's library figures for `make bench`, written as JSON
 * for bench/compare.mjs, which prints them beside Playwright's library
 * (bench/pw_bench.mjs) measured in the same run; nothing is asserted:
 *   - snap_click and snap_type latency medians on the action page (the same
 *     page, server and browser flags Playwright's click and fill run on);
 *   - per page: snap_open latency, snap_observe latency and size with the
 *     default budget, and the whole element list paged through with offset;
 *   - the process's peak RSS (VmHWM): library, agent and CDP connection.
 * The browser gets --window-size=$BENCH_WINDOW (default 1280,720), so pages
 * lay out at the width of Playwright's default viewport.
 *
 *   act_bench BASE_URL OUT.json N ID=PATH[=READY]...
 * READY is text the snapshot shows once the page has rendered (Swagger UI
 * renders after fetching its spec). The page "todomvc" is seeded with three
 * todos first, as in bench/common.mjs. With BENCH_SNAP_DIR set, every page of
 * each paged snapshot is saved as BENCH_SNAP_DIR/cdpgate-lib-ID.txt (the
 * coverage check uses it when `cdpgate mcp` is not measured).
 * BENCH_QUICK=1 (bench/smoke.sh, CI, a shared machine): each call may take
 * 60 s instead of the agent's default 15 s, so the program is known to run.
 */
#include "cdp/cdp.h"
#include "snapshot/snapshot.h"
#include "bench/benchlib.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The ref on the first line that contains `role "name"`: "[eN]" -> "eN". */
static int find_ref(const char *text, const char *role, const char *name, char *ref, size_t cap)
{
    char pat[256];
    snprintf(pat, sizeof pat, "%s \"%s\"", role, name);
    for (const char *s = text ? strstr(text, pat) : NULL; s; s = strstr(s + 1, pat)) {
        const char *eol = strchr(s, '\n');
        const char *b = strstr(s, "[e");
        if (!b || (eol && b > eol))
            continue;
        size_t n = strspn(b + 2, "0123456789");
        if (n == 0 || b[2 + n] != ']' || n + 2 > cap)
            continue;
        memcpy(ref, b + 1, n + 1);
        ref[n + 1] = 0;
        return 0;
    }
    return -1;
}

/* N of the "[more] ... next: offset=N" line of a paged snapshot, or -1 when
 * it was the last page (page text may itself contain "offset="). */
static long next_offset(const char *text)
{
    const char *m = text ? strstr(text, "\n[more]") : NULL;
    if (!m)
        return -1;
    const char *eol = strchr(m + 1, '\n');
    const char *s = strstr(m, "offset=");
    return s && (!eol || s < eol) ? strtol(s + 7, NULL, 10) : -1;
}

static long vmhwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

static void put_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(o, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(o, "\\u%04x", *s);
        else
            fputc(*s, o);
    }
    fputc('"', o);
}

static void fail(FILE *o, const char *what, const snap_result *r, int rc)
{
    char buf[400];
    snprintf(buf, sizeof buf, "%s: %s: %.300s", what, snap_strerror(rc),
             r && r->text ? r->text : "");
    fprintf(o, "\"error\":");
    put_str(o, buf);
    fprintf(stderr, "act_bench: %s\n", buf);
}

static void bench_actions(snap_agent *a, const char *base, int n, FILE *o)
{
    char url[1024], btn[32], box[32];
    snap_result r = {0};
    snprintf(url, sizeof url, "%s/gen/act.html", base);
    fprintf(o, "\"act\":{");
    int rc = snap_open(a, url, false, &r);
    if (rc) {
        fail(o, "open act.html", &r, rc);
        goto out;
    }
    snap_result_free(&r);
    rc = snap_observe(a, &(snap_query){0}, &r);
    if (rc || find_ref(r.text, "button", "Increment", btn, sizeof btn)
        || find_ref(r.text, "textbox", "Name", box, sizeof box)) {
        fail(o, "no ref for button \"Increment\" / textbox \"Name\"", &r, rc);
        goto out;
    }
    snap_result_free(&r);
    double *t = calloc((size_t)n + 5, sizeof *t);
    int k = 0;
    for (int i = -5; i < n; i++) {
        double t0 = bench_now_ms();
        rc = snap_click(a, btn, NULL, &r);
        double dt = bench_now_ms() - t0;
        if (rc) {
            fail(o, "snap_click", &r, rc);
            free(t);
            goto out;
        }
        if (i >= 0)
            t[k++] = dt;
        if (i == n - 1)
            fprintf(o, "\"click_result_chars\":%zu,", r.text ? strlen(r.text) : 0);
        snap_result_free(&r);
    }
    fprintf(o, "\"click_median_ms\":%.3f,", bench_median(t, k));
    k = 0;
    for (int i = -5; i < n; i++) {
        char text[32];
        snprintf(text, sizeof text, "name %d", i);
        double t0 = bench_now_ms();
        rc = snap_type(a, box, text, false, NULL, &r);
        double dt = bench_now_ms() - t0;
        if (rc) {
            fail(o, "snap_type", &r, rc);
            free(t);
            goto out;
        }
        if (i >= 0)
            t[k++] = dt;
        snap_result_free(&r);
    }
    fprintf(o, "\"type_median_ms\":%.3f,\"n\":%d,", bench_median(t, k), n);
    free(t);
    rc = snap_observe(a, &(snap_query){0}, &r);
    char want[32];
    snprintf(want, sizeof want, "Count: %d", n + 5);
    fprintf(o, "\"effect_seen\":%s", !rc && r.text && strstr(r.text, want) ? "true" : "false");
out:
    snap_result_free(&r);
    fprintf(o, "}");
}

static void bench_page(snap_agent *a, const char *base, char *spec, int runs, FILE *o)
{
    char *id = spec, *path = strchr(spec, '='), *ready = NULL, url[1024];
    snap_result r = {0};
    if (!path)
        return;
    *path++ = 0;
    if ((ready = strchr(path, '=')) != NULL)
        *ready++ = 0;
    snprintf(url, sizeof url, "%s%s", base, path);
    put_str(o, id);
    fprintf(o, ":{");
    double t0 = bench_now_ms();
    int rc = snap_open(a, url, false, &r);
    if (rc) {
        fail(o, "snap_open", &r, rc);
        goto out;
    }
    fprintf(o, "\"open_ms\":%.3f,\"open_result_chars\":%zu,", bench_now_ms() - t0,
            r.text ? strlen(r.text) : 0);
    snap_result_free(&r);
    if (strcmp(id, "todomvc") == 0) {
        const char *todos[] = {"Buy milk", "Write the benchmark", "Ship cdpgate"};
        char ref[32];
        rc = snap_observe(a, &(snap_query){0}, &r);
        if (rc || find_ref(r.text, "textbox", "What needs to be done?", ref, sizeof ref)) {
            fail(o, "todomvc: no ref for the new-todo box", &r, rc);
            goto out;
        }
        snap_result_free(&r);
        for (int i = 0; i < 3; i++) {
            rc = snap_type(a, ref, todos[i], true, NULL, &r);
            if (rc) {
                fail(o, "todomvc: snap_type", &r, rc);
                goto out;
            }
            snap_result_free(&r);
        }
    }
    for (double end = bench_now_ms() + 15000; ready;) {
        rc = snap_observe(a, &(snap_query){0}, &r);
        bool seen = !rc && r.text && strstr(r.text, ready);
        snap_result_free(&r);
        if (seen)
            break;
        if (bench_now_ms() > end) {
            fprintf(o, "\"ready\":false,");
            break;
        }
        bench_nap_ms(250);
    }
    double t[16];
    int k = 0;
    size_t chars = 0;
    char *first = NULL;
    for (int i = 0; i < runs && i < 16; i++) {
        t0 = bench_now_ms();
        rc = snap_observe(a, &(snap_query){0}, &r);
        t[k++] = bench_now_ms() - t0;
        if (rc) {
            fail(o, "snap_observe", &r, rc);
            free(first);
            goto out;
        }
        chars = r.text ? strlen(r.text) : 0;
        free(first);
        first = r.text ? strdup(r.text) : NULL;
        snap_result_free(&r);
    }
    fprintf(o, "\"snapshot_median_ms\":%.3f,\"snapshot_chars\":%zu,", bench_median(t, k), chars);
    /* The whole element list, paged through. */
    FILE *save = NULL;
    const char *dir = getenv("BENCH_SNAP_DIR");
    if (dir && *dir) {
        char fn[1024];
        snprintf(fn, sizeof fn, "%s/cdpgate-lib-%s.txt", dir, id);
        if ((save = fopen(fn, "w")) != NULL && first)
            fputs(first, save);
    }
    size_t all_chars = chars;
    int pages = 1;
    double all_ms = t[k - 1];
    for (long off = next_offset(first); off > 0 && pages < 400;) {
        t0 = bench_now_ms();
        rc = snap_observe(a, &(snap_query){.offset = (size_t)off}, &r);
        all_ms += bench_now_ms() - t0;
        if (rc) {
            snap_result_free(&r);
            break;
        }
        pages++;
        all_chars += r.text ? strlen(r.text) : 0;
        if (save && r.text)
            fprintf(save, "\n\f\n%s", r.text); /* page break */
        long next = next_offset(r.text);
        snap_result_free(&r);
        if (next <= off)
            break;
        off = next;
    }
    free(first);
    if (save)
        fclose(save);
    fprintf(o, "\"pages\":%d,\"all_chars\":%zu,\"all_ms\":%.3f", pages, all_chars, all_ms);
out:
    snap_result_free(&r);
    fprintf(o, "}");
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: act_bench BASE_URL OUT.json N ID=PATH[=READY]...\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    const char *base = argv[1];
    int n = (int)strtol(argv[3], NULL, 10);
    if (n < 1)
        n = 50;
    FILE *o = fopen(argv[2], "w");
    if (!o) {
        perror(argv[2]);
        return 1;
    }
    cdp_err e = {0};
    cdp_launch_opts lo = {0};
    lo.browser = getenv("CDPGATE_BROWSER");
    /* The same layout width as Playwright's default 1280x720 viewport
     * (headless Chromium's own default window is 800x600). */
    char winarg[64];
    const char *win = getenv("BENCH_WINDOW");
    snprintf(winarg, sizeof winarg, "--window-size=%s", win && *win ? win : "1280,720");
    const char *args[] = {winarg, NULL};
    lo.args = args;
    fprintf(o, "{");
    double t0 = bench_now_ms();
    cdp_browser *b = cdp_browser_launch(&lo, &e);
    if (!b) {
        fprintf(o, "\"error\":");
        put_str(o, e.msg);
        fprintf(o, "}\n");
        fclose(o);
        fprintf(stderr, "act_bench: %s\n", e.msg);
        return 1;
    }
    fprintf(o, "\"launch_ms\":%.3f,", bench_now_ms() - t0);
    snap_opts so = {0};
    const char *quick = getenv("BENCH_QUICK");
    if (quick && strcmp(quick, "1") == 0)
        so.timeout_ms = 60000;
    snap_agent *a = snap_agent_new(b, &so, &e);
    if (!a) {
        fprintf(o, "\"error\":");
        put_str(o, e.msg);
        fprintf(o, "}\n");
        fclose(o);
        cdp_browser_free(b);
        return 1;
    }
    bench_actions(a, base, n, o);
    fprintf(o, ",\"pages\":{");
    for (int i = 4; i < argc; i++) {
        if (i > 4)
            fprintf(o, ",");
        bench_page(a, base, argv[i], 3, o);
        fflush(o);
    }
    fprintf(o, "},\"vmhwm_kb\":%ld}\n", vmhwm_kb());
    fclose(o);
    snap_agent_free(a);
    cdp_browser_free(b);
    return 0;
}
