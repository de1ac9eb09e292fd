/*
 * harness.h — the in-house test harness shared by every tests/test_*.c.
 *
 * A test program defines a table of named tests and calls test_main():
 *
 *     static void t_parse_empty(void) { CHECK(...); }
 *     static const test_case TESTS[] = { {"parse_empty", t_parse_empty}, {0} };
 *     int main(int argc, char **argv) { return test_main(argc, argv, TESTS); }
 *
 * `prog name...` runs a subset (substring match). Each failed CHECK prints
 * file:line, the expression and, for the typed forms, expected and actual
 * values (hex for bytes). The program ends with a line
 * "<prog>: N passed, N failed" and exits non-zero when anything failed.
 * A test that made no check at all (and did not call test_skip) fails:
 * it proved nothing. tests/run.sh also fails a program that exits
 * non-zero, even after its summary (sanitizer, leak or valgrind reports),
 * or that never prints the summary line.
 *
 * Allocation failure injection: test programs are linked with
 * -Wl,--wrap=malloc,realloc,calloc, so every allocation made by the library
 * goes through the wrappers in harness.c. test_fail_alloc_after(n) makes the
 * (n+1)th allocation from now on return NULL (once, or always with sticky);
 * test_fail_alloc_off() disables it. Use it to walk every allocation of an
 * operation and check that each failure is reported cleanly and leaks nothing
 * (ASan's leak checker does the counting in the sanitizer build).
 */
#ifndef CDPGATE_TESTS_HARNESS_H
#define CDPGATE_TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case;

int test_main(int argc, char **argv, const test_case *tests);

/* Internal: record a check result. Return 1 when ok. */
int test_check(int ok, const char *file, int line, const char *expr);
/* Print why a check failed (indented, on stderr). It fails the current
 * test case too: a detail printed with no failed check before it (an
 * `if (bad) test_fail_detail(...)`) is a failure, never a note. */
void test_fail_detail(const char *fmt, ...);
int test_check_mem(const void *want, size_t wlen, const void *got, size_t glen,
                   const char *file, int line, const char *expr);

#define CHECK(e) test_check(!!(e), __FILE__, __LINE__, #e)

/* Typed checks; each is an expression worth 1 when it passed. */
int test_check_int(long long want, long long got, const char *file, int line,
                   const char *expr);
int test_check_str(const char *want, const char *got, const char *file, int line,
                   const char *expr);
#define CHECK_INT(want, got) \
    test_check_int((long long)(want), (long long)(got), __FILE__, __LINE__, #got " == " #want)
#define CHECK_STR(want, got) \
    test_check_str((want), (got), __FILE__, __LINE__, #got " == " #want)

/* Byte comparison; prints both sides in hex on failure. */
#define CHECK_MEM(want, wlen, got, glen) \
    test_check_mem((want), (wlen), (got), (glen), __FILE__, __LINE__, #got)

/* Number of failed checks so far in the current test. */
int test_failures_now(void);

/* Allocation failure injection (see above). */
void test_fail_alloc_after(long n, int sticky);
/* The next count allocations fail, then none (a fault at a chosen point:
 * called from a --wrap'ed function, say). */
void test_fail_alloc_next(long count);
void test_fail_alloc_off(void);
long test_alloc_count(void);

/* Remove path: a file, or a directory with everything below it (made
 * writable first; links are removed, never followed). Errors are ignored:
 * it cleans up after a test. */
void test_rm_rf(const char *path);

/* Read a whole file into a new NUL-terminated buffer; free() it. NULL on error. */
char *test_read_file(const char *path, size_t *len);

/* The conformance vectors, in the repository (run from the checkout root):
 * "tests/vectors". Nothing outside the checkout is read; a missing vector
 * is a failed check (tests/vectors/README.md). */
const char *test_vectors_dir(void);

/* Decode hex into out (cap bytes); returns the byte count or -1. */
long test_unhex(const char *hex, uint8_t *out, size_t cap);

/* Skips are not passes: a test that cannot run says why and is counted as
 * skipped; CI sets CDPGATE_REQUIRE_ALL=1, which turns a skip into a failure. */
void test_skip(const char *why);

#endif
