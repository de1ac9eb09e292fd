/*
 * fuzz_json.c — libFuzzer target for the json module (also replayed over
 * the checked-in corpus by tests/fuzz/replay.c in `make test`).
 *
 * Reader: parse the input with small limits. When it parses, write it,
 * check the text is valid UTF-8, parse that again and write again: the two
 * writes must be byte-identical (a parse/write fixed point), and every
 * member must be found again by its key. When it does not parse, the error
 * must be a proper one (negative code, message, offset inside the input).
 * With JSON_NO_DUPLICATES the outcome may only differ by JSON_EDUPKEY.
 *
 * Writer: the same bytes are also read as a script of writer calls
 * (containers, keys and strings with arbitrary bytes, integers, raw
 * doubles, raw JSON, an optional size cap). Whenever the writer reports no
 * error, its output must parse and be valid UTF-8, and it must never exceed
 * the cap.
 */
#include "json/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void walk(const json_val *v, unsigned depth)
{
    CHECK(depth <= 64);
    size_t n = 0;
    for (const json_val *c = json_first(v); c; c = json_next(c), n++) {
        if (json_is(v, JSON_OBJECT)) {
            size_t kl;
            const char *k = json_key(c, &kl);
            CHECK(k != NULL && k[kl] == 0);
            const json_val *m = json_getn(v, k, kl);
            CHECK(m != NULL);
            size_t ml;
            CHECK(json_key(m, &ml) && ml == kl && memcmp(json_key(m, NULL), k, kl) == 0);
        } else {
            CHECK(json_key(c, NULL) == NULL);
            CHECK(json_at(v, n) == c);
        }
        walk(c, depth + 1);
    }
    CHECK(n == json_len(v));
    size_t sl;
    const char *s = json_str(v, &sl);
    if (s)
        CHECK(s[sl] == 0 && json_utf8_valid((const uint8_t *)s, sl));
}

static void check_reader(const uint8_t *data, size_t size)
{
    json_opts o = {1 << 20, 64, 0};
    json_err err;
    json_doc *d = json_parse((const char *)data, size, &o, &err);
    json_opts od = {1 << 20, 64, JSON_NO_DUPLICATES};
    json_err err2;
    json_doc *d2 = json_parse((const char *)data, size, &od, &err2);
    if (!d) {
        CHECK(err.code < 0 && err.msg && err.offset <= size);
        /* A duplicate in an object closed before the error may be seen
         * first. */
        CHECK(!d2);
        CHECK((err2.code == err.code && err2.offset == err.offset) ||
              (err2.code == JSON_EDUPKEY && err2.offset < err.offset));
        return;
    }
    CHECK(err.code == JSON_OK);
    CHECK(d2 || err2.code == JSON_EDUPKEY);
    json_doc_free(d2);

    walk(json_doc_root(d), 0);
    size_t l1, l2;
    char *w1 = json_write(json_doc_root(d), &l1);
    CHECK(w1 != NULL && strlen(w1) <= l1);
    CHECK(json_utf8_valid((const uint8_t *)w1, l1));
    json_doc *e = json_parse(w1, l1, &o, &err);
    CHECK(e != NULL);
    char *w2 = json_write(json_doc_root(e), &l2);
    CHECK(w2 != NULL && l1 == l2 && memcmp(w1, w2, l1) == 0);
    json_doc_free(e);
    free(w1);
    free(w2);
    json_doc_free(d);
}

static size_t take(const uint8_t **p, const uint8_t *end, size_t n)
{
    size_t avail = (size_t)(end - *p);
    if (n > avail)
        n = avail;
    *p += n;
    return n;
}

static void check_writer(const uint8_t *data, size_t size)
{
    json_w w;
    json_w_init(&w);
    const uint8_t *p = data, *end = data + size;
    if (p < end && (*p & 0xC0) == 0xC0)
        w.max = (size_t)(*p & 0x3F) * 8 + 1;
    while (p < end) {
        uint8_t op = *p++;
        const uint8_t *arg = p;
        size_t n;
        uint64_t u = 0;
        double dv;
        switch (op % 13) {
        case 0: json_w_obj_begin(&w); break;
        case 1: json_w_obj_end(&w); break;
        case 2: json_w_arr_begin(&w); break;
        case 3: json_w_arr_end(&w); break;
        case 4:
            n = take(&p, end, (size_t)(op >> 4));
            json_w_keyn(&w, (const char *)arg, n);
            break;
        case 5:
            n = take(&p, end, (size_t)(op >> 4));
            json_w_strn(&w, (const char *)arg, n);
            break;
        case 6:
            n = take(&p, end, 8);
            memcpy(&u, arg, n);
            json_w_int(&w, (int64_t)u);
            break;
        case 7:
            n = take(&p, end, 8);
            memcpy(&u, arg, n);
            memcpy(&dv, &u, 8);
            json_w_num(&w, dv);
            break;
        case 8: json_w_bool(&w, op & 16); break;
        case 9: json_w_null(&w); break;
        case 10:
            n = take(&p, end, (size_t)(op >> 4));
            json_w_raw(&w, (const char *)arg, n, true);
            break;
        case 11:
            n = take(&p, end, 8);
            memcpy(&u, arg, n);
            json_w_uint(&w, u);
            break;
        case 12:
            if (op & 0x80)
                json_w_reset(&w);
            break;
        }
    }
    int err = json_w_error(&w);
    size_t len = 0;
    size_t max = w.max;
    char *out = json_w_take(&w, &len);
    if (err == JSON_OK) {
        CHECK(out != NULL);
        CHECK(!max || len <= max);
        CHECK(json_utf8_valid((const uint8_t *)out, len));
        if (len) {
            json_opts o = {0, 1024, 0};
            json_err e;
            json_doc *d = json_parse(out, len, &o, &e);
            CHECK(d != NULL);
            json_doc_free(d);
        }
    } else {
        CHECK(out == NULL);
    }
    free(out);
    json_w_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_reader(data, size);
    check_writer(data, size);
    return 0;
}
