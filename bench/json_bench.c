/*
 * json_bench.c — parse and serialise throughput of cdpgate's json module
 * against cJSON and jansson (and yyjson when built with -DHAVE_YYJSON), on
 * the files named on the command line (captured CDP responses).
 *
 * Bench only: linked by bench/json_bench.sh, never part of the product.
 *
 * Method. For each file and library: "parse" is parse + free of the
 * document (both are part of handling a CDP message; cJSON and jansson pay
 * most in per-node malloc/free); "write" is serialising the parsed document
 * to compact text + freeing the text. Each sample runs enough iterations to
 * last >= 50 ms; the figure is the median of the samples (default 7).
 * Throughput is the input size (parse) or the output size (write) per
 * second, in MB/s (10^6 bytes). Ratios are against cJSON.
 *
 * Then the path a snapshot really takes for an accessibility tree
 * (cdp_send_sink: the reply is never parsed into a document): json_stream
 * fed in 64 KiB pieces with a callback that only counts events ("stream,
 * events"), and json_stream + the AX sink into records as observe_render.c
 * gets them ("stream + AX sink", snap_ax_stream_run in observe_ax.c; only
 * for files that are getFullAXTree replies), beside cJSON's parse.
 *
 *   json_bench [-n samples] file...
 *
 * JSON_BENCH_CLOCK=cpu times with the thread's CPU clock instead of the
 * wall clock: on a shared, loaded machine that leaves out the time other
 * processes held the core (cache and memory contention stay in).
 *
 * jansson's header defines json_type like ours, so this file is compiled
 * twice: once with -DJB_JANSSON_UNIT for the jansson wrappers alone, once
 * without for everything else (see bench/json_bench.sh).
 */
#include "bench/benchlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *buf;
    size_t len;
    size_t outlen;       /* set by the write function */
    void *doc;           /* parsed document for the write benchmark */
} input;

int ja_parse(input *in);
void *ja_load(input *in);
int ja_write(input *in);
void ja_unload(void *d);

#ifdef JB_JANSSON_UNIT
#include <jansson.h>

/* ---- jansson ---- */
int ja_parse(input *in)
{
    json_error_t e;
    json_t *d = json_loadb(in->buf, in->len, 0, &e);
    if (!d)
        return -1;
    json_decref(d);
    return 0;
}
void *ja_load(input *in)
{
    json_error_t e;
    return json_loadb(in->buf, in->len, 0, &e);
}
int ja_write(input *in)
{
    char *s = json_dumps(in->doc, JSON_COMPACT);
    if (!s)
        return -1;
    in->outlen = strlen(s);
    free(s);
    return 0;
}
void ja_unload(void *d) { json_decref(d); }

#else

#include <cjson/cJSON.h>

#include "json/json.h"

#ifdef HAVE_YYJSON
#include "yyjson.h"
#endif

typedef struct {
    const char *name;
    int (*parse)(input *in);           /* parse + free; 0 on success */
    void *(*load)(input *in);          /* parse and keep */
    int (*write)(input *in);           /* serialise in->doc + free text */
    void (*unload)(void *doc);
} lib;

static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now(void)
{
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- cdpgate ---- */
static int cg_parse(input *in)
{
    json_doc *d = json_parse(in->buf, in->len, NULL, NULL);
    if (!d)
        return -1;
    json_doc_free(d);
    return 0;
}
static void *cg_load(input *in) { return json_parse(in->buf, in->len, NULL, NULL); }
static int cg_write(input *in)
{
    size_t n;
    char *s = json_write(json_doc_root(in->doc), &n);
    if (!s)
        return -1;
    in->outlen = n;
    free(s);
    return 0;
}
static void cg_unload(void *d) { json_doc_free(d); }

/* ---- cJSON ---- */
static int cj_parse(input *in)
{
    cJSON *d = cJSON_ParseWithLength(in->buf, in->len);
    if (!d)
        return -1;
    cJSON_Delete(d);
    return 0;
}
static void *cj_load(input *in) { return cJSON_ParseWithLength(in->buf, in->len); }
static int cj_write(input *in)
{
    char *s = cJSON_PrintUnformatted(in->doc);
    if (!s)
        return -1;
    in->outlen = strlen(s);
    cJSON_free(s);
    return 0;
}
static void cj_unload(void *d) { cJSON_Delete(d); }

#ifdef HAVE_YYJSON
static int yy_parse(input *in)
{
    yyjson_doc *d = yyjson_read(in->buf, in->len, 0);
    if (!d)
        return -1;
    yyjson_doc_free(d);
    return 0;
}
static void *yy_load(input *in) { return yyjson_read(in->buf, in->len, 0); }
static int yy_write(input *in)
{
    size_t n;
    char *s = yyjson_write(in->doc, 0, &n);
    if (!s)
        return -1;
    in->outlen = n;
    free(s);
    return 0;
}
static void yy_unload(void *d) { yyjson_doc_free(d); }
#endif

static const lib LIBS[] = {
    {"cdpgate", cg_parse, cg_load, cg_write, cg_unload},
    {"cJSON", cj_parse, cj_load, cj_write, cj_unload},
    {"jansson", ja_parse, ja_load, ja_write, ja_unload},
#ifdef HAVE_YYJSON
    {"yyjson", yy_parse, yy_load, yy_write, yy_unload},
#endif
};
#define NLIBS (sizeof LIBS / sizeof LIBS[0])

/* ---- the stream, as a sink call reads a reply ---- */

#define STREAM_PIECE ((size_t)64 << 10)

long snap_ax_stream_run(const char *reply, size_t len, size_t piece);

static int count_event(void *ud, const json_event *ev)
{
    (void)ev;
    ++*(long *)ud;
    return 0;
}

static int st_events(input *in)
{
    long n = 0;
    json_stream *js = json_stream_new(NULL, count_event, &n);
    int r = js ? 0 : -1;
    for (size_t off = 0; !r && off < in->len; off += STREAM_PIECE)
        r = json_stream_feed(js, in->buf + off,
                             in->len - off < STREAM_PIECE ? in->len - off : STREAM_PIECE);
    if (!r)
        r = json_stream_end(js);
    json_stream_free(js);
    return r ? -1 : 0;
}

static int st_ax(input *in)
{
    return snap_ax_stream_run(in->buf, in->len, STREAM_PIECE) > 0 ? 0 : -1;
}

/* Median seconds per call of fn over `samples` samples of >= 50 ms. */
static double measure(int (*fn)(input *), input *in, int samples)
{
    long iters = 1;
    for (;;) {
        double t0 = now();
        for (long i = 0; i < iters; i++)
            if (fn(in) != 0)
                return -1;
        double dt = now() - t0;
        if (dt >= 0.05 || iters > (1L << 24))
            break;
        iters = dt > 0.001 ? (long)(iters * 0.06 / dt) + 1 : iters * 10;
    }
    double t[64];
    if (samples > 64)
        samples = 64;
    for (int s = 0; s < samples; s++) {
        double t0 = now();
        for (long i = 0; i < iters; i++)
            fn(in);
        t[s] = (now() - t0) / (double)iters;
    }
    qsort(t, (size_t)samples, sizeof t[0], bench_cmp_double);
    return t[samples / 2];
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
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
        *len = n;
    }
    return buf;
}

int main(int argc, char **argv)
{
    int samples = 7, rc = 0;
    const char *ck = getenv("JSON_BENCH_CLOCK");
    if (ck && strcmp(ck, "cpu") == 0)
        bench_clock = CLOCK_THREAD_CPUTIME_ID;
    int i = 1;
    if (i + 1 < argc && strcmp(argv[i], "-n") == 0) {
        samples = (int)strtol(argv[i + 1], NULL, 10);
        if (samples < 1)
            samples = 1;
        i += 2;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: %s [-n samples] file...\n", argv[0]);
        return 2;
    }
    for (; i < argc; i++) {
        input in = {0};
        char *buf = read_file(argv[i], &in.len);
        if (!buf) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            rc = 1;
            continue;
        }
        in.buf = buf;
        const char *base = strrchr(argv[i], '/');
        printf("%s: %.2f MB\n", base ? base + 1 : argv[i], (double)in.len / 1e6);
        printf("  %-8s %12s %10s %12s %10s\n", "library", "parse MB/s",
               "vs cJSON", "write MB/s", "vs cJSON");
        double pr[NLIBS], wr[NLIBS];
        for (size_t l = 0; l < NLIBS; l++) {
            double tp = measure(LIBS[l].parse, &in, samples);
            pr[l] = tp > 0 ? (double)in.len / tp / 1e6 : 0;
            wr[l] = 0;
            in.doc = LIBS[l].load(&in);
            if (in.doc) {
                double tw = measure(LIBS[l].write, &in, samples);
                wr[l] = tw > 0 ? (double)in.outlen / tw / 1e6 : 0;
                LIBS[l].unload(in.doc);
            }
            in.doc = NULL;
        }
        for (size_t l = 0; l < NLIBS; l++) {
            printf("  %-8s %12.1f %9.2fx %12.1f %9.2fx\n", LIBS[l].name,
                   pr[l], pr[1] > 0 ? pr[l] / pr[1] : 0,
                   wr[l], wr[1] > 0 ? wr[l] / wr[1] : 0);
            if (pr[l] == 0)
                printf("  (%s failed to parse this file)\n", LIBS[l].name);
        }
        double ts = measure(st_events, &in, samples);
        if (ts > 0)
            printf("  cdpgate json_stream, events only      %8.1f MB/s %6.2fx cJSON\n",
                   (double)in.len / ts / 1e6, pr[1] > 0 ? (double)in.len / ts / 1e6 / pr[1] : 0);
        long nodes = snap_ax_stream_run(in.buf, in.len, STREAM_PIECE);
        double ta = nodes > 0 ? measure(st_ax, &in, samples) : -1;
        if (ta > 0)
            printf("  cdpgate json_stream + AX sink         %8.1f MB/s %6.2fx cJSON"
                   " (%ld records)\n", (double)in.len / ta / 1e6,
                   pr[1] > 0 ? (double)in.len / ta / 1e6 / pr[1] : 0, nodes);
        free(buf);
    }
    return rc;
}

#endif /* JB_JANSSON_UNIT */
