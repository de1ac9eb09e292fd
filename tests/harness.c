/*
 * harness.c — see harness.h. Also holds the malloc wrappers used for
 * allocation failure injection in test builds.
 */
#include "tests/harness.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int cur_failures;
static int cur_skipped;
static long cur_checks;          /* checks made by the current test */
static long alloc_count;
static long alloc_fail_at = -1;
static int alloc_sticky;
static long alloc_fail_left;     /* test_fail_alloc_next: failures to come */

void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_calloc(size_t a, size_t b);
void *__wrap_malloc(size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_calloc(size_t a, size_t b);

static int should_fail(void)
{
    long n = alloc_count++;
    if (alloc_fail_left > 0) {
        alloc_fail_left--;
        errno = ENOMEM;
        return 1;
    }
    if (alloc_fail_at < 0)
        return 0;
    int fail = n == alloc_fail_at || (alloc_sticky && n > alloc_fail_at);
    if (n == alloc_fail_at && !alloc_sticky)
        alloc_fail_at = -1;
    if (fail)
        errno = ENOMEM;          /* as malloc does: libc's callers report it */
    return fail;
}

void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b)
{
    return should_fail() ? NULL : __real_calloc(a, b);
}
void *__wrap_realloc(void *p, size_t n)
{
    return should_fail() ? NULL : __real_realloc(p, n);
}

void test_fail_alloc_after(long n, int sticky)
{
    alloc_count = 0;
    alloc_fail_at = n;
    alloc_sticky = sticky;
}
void test_fail_alloc_next(long count) { alloc_fail_left = count; }
void test_fail_alloc_off(void)
{
    alloc_fail_at = -1;
    alloc_fail_left = 0;
}
long test_alloc_count(void) { return alloc_count; }

int test_check(int ok, const char *file, int line, const char *expr)
{
    cur_checks++;
    if (!ok) {
        cur_failures++;
        fprintf(stderr, "  FAIL %s:%d: %s\n", file, line, expr);
    }
    return ok;
}

/* A detail is a failure: after a failed check it says why; on its own
 * (`if (bad) test_fail_detail(...)`) it fails the case too, which it
 * did not before (test_gate_accept's screenshot comparison passed with
 * differing PNGs). */
void test_fail_detail(const char *fmt, ...)
{
    va_list ap;
    if (!cur_failures) {
        cur_failures++;
        fputs("  FAIL (a detail with no failed check before it)\n", stderr);
    }
    fputs("       ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void hexdump(const char *tag, const void *p, size_t n)
{
    const unsigned char *b = p;
    fprintf(stderr, "       %s (%zu):", tag, n);
    for (size_t i = 0; i < n && i < 256; i++)
        fprintf(stderr, "%s%02x", i % 32 ? "" : "\n         ", b[i]);
    if (n > 256)
        fprintf(stderr, " ...");
    fputc('\n', stderr);
}

int test_check_mem(const void *want, size_t wlen, const void *got, size_t glen,
                   const char *file, int line, const char *expr)
{
    int ok = wlen == glen && (wlen == 0 || memcmp(want, got, wlen) == 0);
    if (!test_check(ok, file, line, expr)) {
        hexdump("expected", want, wlen);
        hexdump("actual  ", got, glen);
    }
    return ok;
}

int test_check_int(long long want, long long got, const char *file, int line,
                   const char *expr)
{
    int ok = test_check(want == got, file, line, expr);
    if (!ok)
        test_fail_detail("expected %lld, got %lld", want, got);
    return ok;
}

int test_check_str(const char *want, const char *got, const char *file, int line,
                   const char *expr)
{
    int ok = (want && got) ? strcmp(want, got) == 0 : want == got;
    if (!test_check(ok, file, line, expr))
        test_fail_detail("expected \"%s\", got \"%s\"", want ? want : "(null)",
                         got ? got : "(null)");
    return ok;
}

int test_failures_now(void) { return cur_failures; }

void test_skip(const char *why)
{
    const char *req = getenv("CDPGATE_REQUIRE_ALL");
    if (req && *req == '1') {
        cur_failures++;
        fprintf(stderr, "  FAIL (skip not allowed with CDPGATE_REQUIRE_ALL=1): %s\n", why);
        return;
    }
    cur_skipped = 1;
    fprintf(stderr, "  SKIP: %s\n", why);
}

char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        char *nb = realloc(buf, cap * 2 + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len)
            *len = n;
    }
    return buf;
}

const char *test_vectors_dir(void) { return "tests/vectors"; }

long test_unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = hex; *p;) {
        if (*p == ' ' || *p == '\n' || *p == '\r') {
            p++;
            continue;
        }
        int v[2];
        for (int k = 0; k < 2; k++) {
            char c = p[k];
            if (c >= '0' && c <= '9') v[k] = c - '0';
            else if (c >= 'a' && c <= 'f') v[k] = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F') v[k] = c - 'A' + 10;
            else return -1;
        }
        if (n >= cap)
            return -1;
        out[n++] = (uint8_t)(v[0] << 4 | v[1]);
        p += 2;
    }
    return (long)n;
}

/* Monotonic seconds, for the slow-case list. */
static double test_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int test_main(int argc, char **argv, const test_case *tests)
{
    const char *prog = strrchr(argv[0], '/');
    prog = prog ? prog + 1 : argv[0];
    int passed = 0, failed = 0, skipped = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *times_env = getenv("CDPGATE_CASE_TIMES");
    bool times = times_env && *times_env == '1';
    for (const test_case *t = tests; t->name; t++) {
        int run = argc < 2;
        for (int i = 1; i < argc && !run; i++)
            run = strstr(t->name, argv[i]) != NULL;
        if (!run)
            continue;
        cur_failures = 0;
        cur_skipped = 0;
        cur_checks = 0;
        fprintf(stderr, "%s: %s\n", prog, t->name);
        double t0 = test_now_s();
        t->fn();
        double took = test_now_s() - t0;
        if (took >= 10.0) /* tests/run.sh lists these (CI's time budget) */
            fprintf(stderr, "  slow case: %s %.1f s\n", t->name, took);
        else if (times)   /* CDPGATE_CASE_TIMES=1: every case's (where time goes) */
            fprintf(stderr, "  case time: %s %.1f s\n", t->name, took);
        test_fail_alloc_off();
        /* A test that checked nothing proved nothing: it fails, unless it
         * said why it could not run (a skip). */
        if (!cur_checks && !cur_skipped && !cur_failures) {
            cur_failures++;
            fprintf(stderr, "  FAIL %s: made no check\n", t->name);
        }
        if (cur_failures)
            failed++;
        else if (cur_skipped)
            skipped++;
        else
            passed++;
    }
    if (skipped)
        printf("%s: %d passed, %d failed, %d skipped\n", prog, passed, failed, skipped);
    else
        printf("%s: %d passed, %d failed\n", prog, passed, failed);
    return failed ? 1 : 0;
}

void test_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            test_rm_rf(p);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}
