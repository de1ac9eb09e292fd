/*
 * json_canon.h — a canonical dump of a JSON value, built either from a
 * json_doc (json_parse) or from json_stream events, so the two readers can
 * be compared byte for byte: structure, keys, decoded strings, numbers to
 * the bit (double and exact integer). Shared by tests/test_json.c and
 * tests/fuzz/fuzz_json_stream.c; header-only, static functions.
 *
 * The stream side also checks the event invariants: depths follow the
 * nesting, string pieces are valid UTF-8 and end on character boundaries,
 * and a piece is never longer than max_string.
 *
 * With a skip period p > 0, every KEY and BEGIN event the callback sees is
 * counted, and the one where count % p == phase is answered with
 * JSON_STREAM_SKIP; the doc side makes the same choices in the same order
 * (a skipped member dumps its key and "~", a skipped container "{~}" or
 * "[~]"), so the dumps still agree, and so must every error and offset.
 */
#ifndef CDPGATE_TESTS_JSON_CANON_H
#define CDPGATE_TESTS_JSON_CANON_H

#include "json/json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define CANON_UNUSED __attribute__((unused))
#else
#define CANON_UNUSED
#endif

typedef struct {
    char *p;
    size_t len, cap;
    int bad;                 /* an event invariant was broken: which (line) */
    unsigned depth;          /* containers open, by the events */
    size_t max_string;
    int in_str;              /* STR_PART seen, the last piece not yet */
    unsigned skip_period, skip_phase, skip_n;
} canon;

/* Skip this KEY or BEGIN? (Counts it.) */
static int canon_skip(canon *c)
{
    if (!c->skip_period)
        return 0;
    return c->skip_n++ % c->skip_period == c->skip_phase;
}

static void canon_put(canon *c, const void *s, size_t n)
{
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 256;
        while (cap < c->len + n + 1)
            cap *= 2;
        char *np = realloc(c->p, cap);
        if (!np) {
            c->bad = __LINE__;
            return;
        }
        c->p = np;
        c->cap = cap;
    }
    memcpy(c->p + c->len, s, n);
    c->len += n;
    c->p[c->len] = 0;
}

static void canon_text(canon *c, char tag, const char *s, size_t n)
{
    char hdr[32];
    int k = snprintf(hdr, sizeof hdr, "%c%zu:", tag, n);
    canon_put(c, hdr, (size_t)k);
    canon_put(c, s, n);
}

static void canon_num(canon *c, double d, int is_int, int64_t i)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    char tmp[64];
    int k = snprintf(tmp, sizeof tmp, "N%016llx/%d/%lld", (unsigned long long)bits,
                     is_int, is_int ? (long long)i : 0LL);
    canon_put(c, tmp, (size_t)k);
}

static void canon_doc(canon *c, const json_val *v)
{
    switch (json_type_of(v)) {
    case JSON_NULL: canon_put(c, "n", 1); break;
    case JSON_TRUE: canon_put(c, "t", 1); break;
    case JSON_FALSE: canon_put(c, "f", 1); break;
    case JSON_NUMBER: {
        int64_t i = 0;
        int is = json_int(v, &i);
        canon_num(c, json_num(v), is, i);
        break;
    }
    case JSON_STRING: {
        size_t n;
        const char *s = json_str(v, &n);
        canon_text(c, 'S', s, n);
        break;
    }
    case JSON_ARRAY:
    case JSON_OBJECT: {
        int obj = json_is(v, JSON_OBJECT);
        canon_put(c, obj ? "{" : "[", 1);
        for (const json_val *m = json_first(v); m; m = json_next(m)) {
            if (obj) {
                size_t kl;
                const char *k = json_key(m, &kl);
                canon_text(c, 'K', k, kl);
            }
            canon_doc(c, m);
        }
        canon_put(c, obj ? "}" : "]", 1);
        break;
    }
    }
}

/* The json_stream callback: ud is a canon. */
CANON_UNUSED static int canon_event(void *ud, const json_event *ev)
{
    canon *c = ud;
    int open_str = c->in_str;
    if (ev->type != JSON_EV_STR && ev->type != JSON_EV_STR_PART && open_str)
        c->bad = __LINE__;   /* a long string's pieces must end with a STR */
    switch (ev->type) {
    case JSON_EV_OBJ_BEGIN:
    case JSON_EV_ARR_BEGIN:
        if (ev->depth != c->depth)
            c->bad = __LINE__;
        c->depth++;
        canon_put(c, ev->type == JSON_EV_OBJ_BEGIN ? "{" : "[", 1);
        break;
    case JSON_EV_OBJ_END:
    case JSON_EV_ARR_END:
        if (!c->depth || ev->depth != c->depth - 1)
            c->bad = __LINE__;
        c->depth--;
        canon_put(c, ev->type == JSON_EV_OBJ_END ? "}" : "]", 1);
        break;
    case JSON_EV_KEY:
        if (ev->depth != c->depth || !ev->str || ev->str[ev->len] != 0)
            c->bad = __LINE__;
        canon_text(c, 'K', ev->str, ev->len);
        break;
    case JSON_EV_STR_PART:
    case JSON_EV_STR:
        if (ev->depth != c->depth || !ev->str || ev->str[ev->len] != 0 ||
            !json_utf8_valid((const uint8_t *)ev->str, ev->len))
            c->bad = __LINE__;
        if (c->max_string && ev->len > c->max_string + 6)
            c->bad = __LINE__;
        if (!open_str)
            canon_put(c, "S?:", 3);   /* length unknown until the last piece */
        canon_put(c, ev->str, ev->len);
        c->in_str = ev->type == JSON_EV_STR_PART;
        break;
    case JSON_EV_NUM:
        if (ev->depth != c->depth)
            c->bad = __LINE__;
        canon_num(c, ev->num, ev->is_int, ev->i);
        break;
    case JSON_EV_TRUE: canon_put(c, "t", 1); break;
    case JSON_EV_FALSE: canon_put(c, "f", 1); break;
    case JSON_EV_NULL: canon_put(c, "n", 1); break;
    default: c->bad = __LINE__; break;
    }
    if ((ev->type == JSON_EV_KEY || ev->type == JSON_EV_OBJ_BEGIN ||
         ev->type == JSON_EV_ARR_BEGIN) && canon_skip(c)) {
        canon_put(c, "~", 1);
        return JSON_STREAM_SKIP;
    }
    return 0;
}

/* The doc side writes string lengths; the stream side cannot know them up
 * front. Compare with the lengths of string values blanked out on the doc
 * side: canon_doc_for_stream() writes "S?:" instead. */
CANON_UNUSED static void canon_doc_s(canon *c, const json_val *v)
{
    if (json_is(v, JSON_STRING)) {
        size_t n;
        const char *s = json_str(v, &n);
        canon_put(c, "S?:", 3);
        canon_put(c, s, n);
        return;
    }
    if (json_is(v, JSON_ARRAY) || json_is(v, JSON_OBJECT)) {
        int obj = json_is(v, JSON_OBJECT);
        canon_put(c, obj ? "{" : "[", 1);
        if (canon_skip(c)) {
            canon_put(c, "~", 1);
        } else {
            for (const json_val *m = json_first(v); m; m = json_next(m)) {
                if (obj) {
                    size_t kl;
                    const char *k = json_key(m, &kl);
                    canon_text(c, 'K', k, kl);
                    if (canon_skip(c)) {
                        canon_put(c, "~", 1);
                        continue;
                    }
                }
                canon_doc_s(c, m);
            }
        }
        canon_put(c, obj ? "}" : "]", 1);
        return;
    }
    canon_doc(c, v);
}

/*
 * Compare json_parse and json_stream on data, the stream fed in pieces of
 * `piece` bytes (0 = the whole input at once) starting with a first piece of
 * `first` bytes. Returns 0 when they agree (same outcome, same error code and
 * offset, same canonical dump), else a line number saying what differed.
 */
CANON_UNUSED static int canon_compare_skip(const uint8_t *data, size_t size, size_t first,
                                           size_t piece, unsigned max_depth, size_t max_string,
                                           unsigned skip_period, unsigned skip_phase)
{
    json_opts o = {0, max_depth, 0};
    json_err pe;
    json_doc *d = json_parse((const char *)data, size, &o, &pe);
    canon a = {0}, b = {0};
    b.max_string = max_string;
    a.skip_period = b.skip_period = skip_period;
    a.skip_phase = b.skip_phase = skip_phase;
    json_stream_opts so = {0, max_depth, max_string};
    json_stream *s = json_stream_new(&so, canon_event, &b);
    int why = 0;
    if (!s) {
        json_doc_free(d);
        return __LINE__;
    }
    int r = 0;
    size_t off = 0;
    if (first > size)
        first = size;
    if (first) {
        r = json_stream_feed(s, data, first);
        off = first;
    }
    while (!r && off < size) {
        size_t n = piece && piece < size - off ? piece : size - off;
        r = json_stream_feed(s, data + off, n);
        off += n;
    }
    if (!r)
        r = json_stream_end(s);
    const json_err *se = json_stream_error(s);
    if (d) {
        if (r)
            why = __LINE__;
        canon_doc_s(&a, json_doc_root(d));
        if (!why && (a.len != b.len || memcmp(a.p, b.p, a.len) != 0))
            why = __LINE__;
        if (!why && b.bad)
            why = b.bad;
    } else {
        if (!r)
            why = __LINE__;
        else if (r != pe.code || se->code != pe.code || se->offset != pe.offset)
            why = __LINE__;
    }
    json_stream_free(s);
    json_doc_free(d);
    free(a.p);
    free(b.p);
    return why;
}

CANON_UNUSED static int canon_compare(const uint8_t *data, size_t size, size_t first, size_t piece,
                                      unsigned max_depth, size_t max_string)
{
    return canon_compare_skip(data, size, first, piece, max_depth, max_string, 0, 0);
}

#endif
