/*
 * benchlib.c — the benchmarks' shared helpers (see benchlib.h).
 */
#include "bench/benchlib.h"
#include "gate/gate.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bench_nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return -1;
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[n / 2];
}

int bench_allow_hook(void *ud, const char *prompt, char *why, size_t cap)
{
    (void)prompt;
    (void)why;
    (void)cap;
    if (ud)
        (*(int *)ud)++;
    return GATE_ALLOW;
}

void bench_rm_tree(const char *path, int depth)
{
    DIR *d = depth > 0 ? opendir(path) : NULL;
    struct dirent *ent;
    while (d && (ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, ent->d_name);
        if (unlink(p) != 0)
            bench_rm_tree(p, depth - 1);
    }
    if (d)
        closedir(d);
    rmdir(path);
}
