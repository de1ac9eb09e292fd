/*
 * benchlib.h — the helpers every benchmark program shares (issue 12, point
 * 2): a monotonic clock, a nap, the median of samples, the confirmation
 * hook that allows, and removing a scratch tree. Compiled into each
 * benchmark by bench/run.sh and bench/smoke.sh (bench/lib.sh bench_cc);
 * the benchmarks do not link the test harness (tests/testlib.h), whose
 * allocator wrappers they must not measure.
 */
#ifndef CDPGATE_BENCH_BENCHLIB_H
#define CDPGATE_BENCH_BENCHLIB_H

#include <stddef.h>

/* Monotonic time in milliseconds, in seconds. */
double bench_now_ms(void);
double bench_now_s(void);
/* Sleep ms: a polling step between two looks at the page. */
void bench_nap_ms(long ms);
/* qsort comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);
/* The median of v[0..n) (sorts v in place); -1 when n <= 0. */
double bench_median(double *v, int n);
/* A gate_confirm_fn that allows every request, counting the calls in
 * *(int *)ud when ud is not NULL. */
int bench_allow_hook(void *ud, const char *prompt, char *why, size_t cap);
/* Remove path and what is below it, depth levels down at most (links
 * are removed, not followed); errors are ignored. */
void bench_rm_tree(const char *path, int depth);

#endif
