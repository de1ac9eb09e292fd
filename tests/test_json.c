/*
 * test_json.c — tests of the json module: JSONTestSuite conformance (every
 * y_/n_/i_ file of tests/vectors/json/JSONTestSuite/test_parsing, the
 * i_ files against the decision table below), the test_transform files,
 * accessors, error offsets and messages, limits, duplicate keys, Unicode,
 * the writer, number formatting, round trips and allocation failures.
 *
 * Run from the checkout root (the vectors are in tests/vectors, see its README).
 */
#include "json/json.h"
#include "tests/harness.h"
#include "tests/json_canon.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

static json_doc *parse_str(const char *s, json_err *err)
{
    return json_parse(s, strlen(s), NULL, err);
}

/* parse -> write -> parse -> write; both writes must be equal. Returns the
 * first write (free it) or NULL on any failure. */
static char *round_trip(const char *in, size_t len, size_t *outlen)
{
    json_doc *d1 = json_parse(in, len, NULL, NULL);
    if (!d1)
        return NULL;
    size_t l1 = 0, l2 = 0;
    char *w1 = json_write(json_doc_root(d1), &l1);
    json_doc_free(d1);
    if (!w1)
        return NULL;
    json_doc *d2 = json_parse(w1, l1, NULL, NULL);
    char *w2 = d2 ? json_write(json_doc_root(d2), &l2) : NULL;
    json_doc_free(d2);
    int same = w2 && l1 == l2 && memcmp(w1, w2, l1) == 0;
    free(w2);
    if (!same) {
        free(w1);
        return NULL;
    }
    if (outlen)
        *outlen = l1;
    return w1;
}

static const char *suite_dir(char *buf, size_t cap, const char *sub)
{
    snprintf(buf, cap, "%s/json/JSONTestSuite/%s", test_vectors_dir(), sub);
    return buf;
}

/* ---- JSONTestSuite test_parsing ---- */

/* Decision table for the implementation-defined i_ files: accepted or the
 * error code it is rejected with. Kept in step with docs/json.md. */
static const struct {
    const char *file;
    int code;               /* JSON_OK = accepted */
} I_TABLE[] = {
    {"i_number_double_huge_neg_exp.json", JSON_OK},        /* underflow -> 0 */
    {"i_number_huge_exp.json", JSON_ERANGE},
    {"i_number_neg_int_huge_exp.json", JSON_ERANGE},
    {"i_number_pos_double_huge_exp.json", JSON_ERANGE},
    {"i_number_real_neg_overflow.json", JSON_ERANGE},
    {"i_number_real_pos_overflow.json", JSON_ERANGE},
    {"i_number_real_underflow.json", JSON_OK},
    {"i_number_too_big_neg_int.json", JSON_OK},            /* double only */
    {"i_number_too_big_pos_int.json", JSON_OK},
    {"i_number_very_big_negative_int.json", JSON_OK},
    {"i_object_key_lone_2nd_surrogate.json", JSON_OK},     /* -> U+FFFD */
    {"i_string_1st_surrogate_but_2nd_missing.json", JSON_OK},
    {"i_string_1st_valid_surrogate_2nd_invalid.json", JSON_OK},
    {"i_string_UTF-16LE_with_BOM.json", JSON_ESYNTAX},
    {"i_string_UTF-8_invalid_sequence.json", JSON_EUTF8},
    {"i_string_UTF8_surrogate_U+D800.json", JSON_EUTF8},
    {"i_string_incomplete_surrogate_and_escape_valid.json", JSON_OK},
    {"i_string_incomplete_surrogate_pair.json", JSON_OK},
    {"i_string_incomplete_surrogates_escape_valid.json", JSON_OK},
    {"i_string_invalid_lonely_surrogate.json", JSON_OK},
    {"i_string_invalid_surrogate.json", JSON_OK},
    {"i_string_invalid_utf-8.json", JSON_EUTF8},
    {"i_string_inverted_surrogates_U+1D11E.json", JSON_OK},
    {"i_string_iso_latin_1.json", JSON_EUTF8},
    {"i_string_lone_second_surrogate.json", JSON_OK},
    {"i_string_lone_utf8_continuation_byte.json", JSON_EUTF8},
    {"i_string_not_in_unicode_range.json", JSON_EUTF8},
    {"i_string_overlong_sequence_2_bytes.json", JSON_EUTF8},
    {"i_string_overlong_sequence_6_bytes.json", JSON_EUTF8},
    {"i_string_overlong_sequence_6_bytes_null.json", JSON_EUTF8},
    {"i_string_truncated-utf-8.json", JSON_EUTF8},
    {"i_string_utf16BE_no_BOM.json", JSON_ESYNTAX},
    {"i_string_utf16LE_no_BOM.json", JSON_ESYNTAX},
    {"i_structure_500_nested_arrays.json", JSON_OK},
    {"i_structure_UTF-8_BOM_empty_object.json", JSON_ESYNTAX},
};
#define I_COUNT (sizeof I_TABLE / sizeof I_TABLE[0])

static void t_suite_parsing(void)
{
    char dir[1024], path[2048];
    suite_dir(dir, sizeof dir, "test_parsing");
    DIR *d = opendir(dir);
    if (!CHECK(d != NULL)) {
        test_fail_detail("cannot open %s (tests/vectors is part of the checkout)", dir);
        return;
    }
    int ny = 0, nn = 0, ni = 0, oky = 0, okn = 0, oki = 0, rt = 0;
    int seen_i[I_COUNT] = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (n[0] == '.' || strlen(n) < 3)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, n);
        size_t len;
        char *buf = test_read_file(path, &len);
        if (!CHECK(buf != NULL))
            continue;
        json_err err;
        json_doc *doc = json_parse(buf, len, NULL, &err);
        if (n[0] == 'y') {
            ny++;
            if (doc) {
                oky++;
                char *w = round_trip(buf, len, NULL);
                if (w)
                    rt++;
                else
                    test_fail_detail("round trip failed: %s", n);
                free(w);
            } else {
                test_fail_detail("y_ rejected: %s (%s at %zu)", n, err.msg,
                                 err.offset);
            }
        } else if (n[0] == 'n') {
            nn++;
            if (!doc) {
                okn++;
                if (!err.msg || err.code == JSON_OK || err.offset > len)
                    test_fail_detail("n_ without a proper error: %s", n);
                CHECK(err.msg != NULL && err.code < 0 && err.offset <= len);
            } else {
                test_fail_detail("n_ accepted: %s", n);
            }
        } else if (n[0] == 'i') {
            ni++;
            size_t k = 0;
            while (k < I_COUNT && strcmp(I_TABLE[k].file, n) != 0)
                k++;
            if (k == I_COUNT) {
                test_fail_detail("i_ file missing from the table: %s", n);
            } else {
                seen_i[k] = 1;
                int got = doc ? JSON_OK : err.code;
                if (got == I_TABLE[k].code)
                    oki++;
                else
                    test_fail_detail("%s: expected %d, got %d (%s)", n,
                                     I_TABLE[k].code, got, doc ? "ok" : err.msg);
            }
        }
        json_doc_free(doc);
        free(buf);
    }
    closedir(d);
    for (size_t k = 0; k < I_COUNT; k++)
        if (!seen_i[k])
            test_fail_detail("table entry without a file: %s", I_TABLE[k].file);
    printf("JSONTestSuite: y %d/%d accepted, n %d/%d rejected, i %d/%d as "
           "documented (%d y round-tripped)\n", oky, ny, okn, nn, oki, ni, rt);
    CHECK_INT(95, ny);
    CHECK_INT(188, nn);
    CHECK_INT((long long)I_COUNT, ni);
    CHECK_INT(ny, oky);
    CHECK_INT(nn, okn);
    CHECK_INT(ni, oki);
    CHECK_INT(ny, rt);
}

/* ---- JSONTestSuite test_transform: no expected output upstream; this is
 * what cdpgate does with each (docs/json.md). ---- */

static json_doc *load_transform(const char *name, const json_opts *o, json_err *err)
{
    char dir[1024], path[2048];
    suite_dir(dir, sizeof dir, "test_transform");
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len;
    char *buf = test_read_file(path, &len);
    if (!buf) {
        test_fail_detail("cannot read %s", path);
        return NULL;
    }
    json_doc *d = json_parse(buf, len, o, err);
    free(buf);
    return d;
}

static const json_val *first_of(json_doc *d)
{
    return json_at(json_doc_root(d), 0);
}

static void t_suite_transform(void)
{
    static const struct {
        const char *file;
        int has_int;
        int64_t i;
        double d;
    } nums[] = {
        {"number_-9223372036854775808.json", 1, INT64_MIN, -9223372036854775808.0},
        {"number_-9223372036854775809.json", 0, 0, -9223372036854775808.0},
        {"number_1.0.json", 0, 0, 1.0},
        {"number_1.000000000000000005.json", 0, 0, 1.0},
        {"number_1000000000000000.json", 1, 1000000000000000LL, 1e15},
        {"number_10000000000000000999.json", 0, 0, 1e19},
        {"number_1e-999.json", 0, 0, 0.0},
        {"number_1e6.json", 0, 0, 1e6},
        {"number_9223372036854775807.json", 1, INT64_MAX, 9223372036854775807.0},
        {"number_9223372036854775808.json", 0, 0, 9223372036854775808.0},
    };
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        json_doc *d = load_transform(nums[k].file, NULL, NULL);
        if (!CHECK(d != NULL)) {
            test_fail_detail("%s", nums[k].file);
            continue;
        }
        int64_t i = 0;
        bool has = json_int(first_of(d), &i);
        CHECK_INT(nums[k].has_int, has);
        if (has)
            CHECK_INT(nums[k].i, i);
        if (!CHECK(json_num(first_of(d)) == nums[k].d))
            test_fail_detail("%s: %.17g", nums[k].file, json_num(first_of(d)));
        json_doc_free(d);
    }

    /* NFC and NFD keys are different bytes: two members. */
    const char *nf[] = {"object_key_nfc_nfd.json", "object_key_nfd_nfc.json"};
    for (int k = 0; k < 2; k++) {
        json_doc *d = load_transform(nf[k], NULL, NULL);
        CHECK_INT(2, json_len(json_doc_root(d)));
        CHECK_STR("NFC", json_get_str(json_doc_root(d), "\xc3\xa9"));
        CHECK_STR("NFD", json_get_str(json_doc_root(d), "e\xcc\x81"));
        json_doc_free(d);
    }

    /* Duplicates: kept, first wins; rejected with JSON_NO_DUPLICATES. */
    const char *dup[] = {"object_same_key_different_values.json",
                         "object_same_key_same_value.json",
                         "object_same_key_unclear_values.json"};
    for (int k = 0; k < 3; k++) {
        json_doc *d = load_transform(dup[k], NULL, NULL);
        CHECK_INT(2, json_len(json_doc_root(d)));
        CHECK_INT(k == 2 ? 0 : 1, json_get_int(json_doc_root(d), "a", -1));
        json_doc_free(d);
        json_opts o = {0, 0, JSON_NO_DUPLICATES};
        json_err err;
        d = load_transform(dup[k], &o, &err);
        CHECK(d == NULL);
        CHECK_INT(JSON_EDUPKEY, err.code);
        if (!CHECK(err.offset == (k == 2 ? 8 : 7)))   /* {"a":0, "a":-0} */
            test_fail_detail("%s: offset %zu", dup[k], err.offset);
        json_doc_free(d);
    }
    /* -0 keeps its sign as a double and is the integer 0. */
    {
        json_doc *d = load_transform("object_same_key_unclear_values.json", NULL, NULL);
        const json_val *m = json_next(json_first(json_doc_root(d)));
        int64_t i = 1;
        CHECK(json_int(m, &i) && i == 0);
        CHECK(signbit(json_num(m)));
        json_doc_free(d);
    }

    /* Escaped lone surrogates -> one U+FFFD each; raw ones are invalid UTF-8. */
    const char *esc[] = {"string_1_escaped_invalid_codepoint.json",
                         "string_2_escaped_invalid_codepoints.json",
                         "string_3_escaped_invalid_codepoints.json"};
    const char *raw[] = {"string_1_invalid_codepoint.json",
                         "string_2_invalid_codepoints.json",
                         "string_3_invalid_codepoints.json"};
    for (int k = 0; k < 3; k++) {
        json_doc *d = load_transform(esc[k], NULL, NULL);
        size_t len;
        const char *s = json_str(first_of(d), &len);
        const char fffd3[] = "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd";
        CHECK_MEM(fffd3, (size_t)(3 * (k + 1)), s, len);
        json_doc_free(d);
        json_err err;
        d = load_transform(raw[k], NULL, &err);
        CHECK(d == NULL);
        CHECK_INT(JSON_EUTF8, err.code);
        CHECK_INT(2, err.offset);
        json_doc_free(d);
    }

    /* \u0000 is kept; the length says so. */
    {
        json_doc *d = load_transform("string_with_escaped_NULL.json", NULL, NULL);
        size_t len;
        const char *s = json_str(first_of(d), &len);
        CHECK_MEM("A\0B", 3, s, len);
        CHECK(s && s[3] == 0);
        json_doc_free(d);
    }

    /* Every file: no crash, and accepted ones round-trip. */
    char dir[1024], path[2048];
    DIR *dd = opendir(suite_dir(dir, sizeof dir, "test_transform"));
    if (!CHECK(dd != NULL))
        return;
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dd))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        char *buf = test_read_file(path, &len);
        json_doc *d = json_parse(buf, len, NULL, NULL);
        if (d) {
            char *w = round_trip(buf, len, NULL);
            if (!CHECK(w != NULL))
                test_fail_detail("round trip: %s", e->d_name);
            free(w);
        }
        json_doc_free(d);
        free(buf);
        files++;
    }
    closedir(dd);
    CHECK_INT(22, files);
}

/* ---- accessors ---- */

static const char CDP_SAMPLE[] =
    "{\"id\":7,\"result\":{\"result\":{\"type\":\"string\",\"value\":\"hi\"},"
    "\"nodes\":[{\"nodeId\":\"1\",\"ignored\":false,\"childIds\":[\"2\",\"3\"]},"
    "{\"nodeId\":\"2\",\"ignored\":true,\"backendDOMNodeId\":42}],"
    "\"box\":[1.5,-2.25,8.203125,1000.5],\"empty\":{},\"none\":[],\"n\":null},"
    "\"sessionId\":\"AB12\",\"a.b\":1}";

static void t_accessors(void)
{
    json_doc *d = parse_str(CDP_SAMPLE, NULL);
    if (!CHECK(d != NULL))
        return;
    const json_val *r = json_doc_root(d);
    CHECK_INT(JSON_OBJECT, json_type_of(r));
    CHECK(json_is(r, JSON_OBJECT));
    CHECK(!json_is(r, JSON_ARRAY));
    CHECK_INT(4, json_len(r));
    CHECK_INT(7, json_get_int(r, "id", -1));
    CHECK_INT(-1, json_get_int(r, "nope", -1));
    CHECK_INT(-1, json_get_int(r, "sessionId", -1));
    CHECK_STR("AB12", json_get_str(r, "sessionId"));
    CHECK_STR("hi", json_str(json_path(r, "result.result.value"), NULL));
    CHECK_STR("string", json_get_str(json_path(r, "result.result"), "type"));
    CHECK(json_path(r, "result.nope.value") == NULL);
    CHECK(json_path(r, "a.b") == NULL);         /* dots separate */
    CHECK(json_get(r, "a.b") != NULL);
    CHECK(json_path(NULL, "x") == NULL);
    CHECK(json_path(r, NULL) == NULL);
    CHECK(json_path(r, "") == NULL);
    /* Array indexes in paths. */
    CHECK_STR("2", json_str(json_path(r, "result.nodes.0.childIds.0"), NULL));
    CHECK_INT(42, json_get_int(json_path(r, "result.nodes.1"), "backendDOMNodeId", 0));
    CHECK(json_path(r, "result.nodes.2") == NULL);
    CHECK(json_path(r, "result.nodes.x") == NULL);

    const json_val *nodes = json_path(r, "result.nodes");
    CHECK_INT(JSON_ARRAY, json_type_of(nodes));
    CHECK_INT(2, json_len(nodes));
    CHECK(json_at(nodes, 2) == NULL);
    CHECK(json_bool(json_get(json_at(nodes, 1), "ignored")));
    CHECK(!json_bool(json_get(json_at(nodes, 0), "ignored")));
    CHECK_INT(JSON_FALSE, json_type_of(json_get(json_at(nodes, 0), "ignored")));
    CHECK(json_key(json_at(nodes, 0), NULL) == NULL);   /* array element */

    const json_val *box = json_path(r, "result.box");
    double want[] = {1.5, -2.25, 8.203125, 1000.5};
    size_t i = 0;
    for (const json_val *c = json_first(box); c; c = json_next(c), i++) {
        CHECK(json_num(c) == want[i]);
        CHECK(!json_int(c, NULL));
    }
    CHECK_INT(4, i);

    /* Member iteration and keys. */
    const char *keys[] = {"id", "result", "sessionId", "a.b"};
    i = 0;
    for (const json_val *m = json_first(r); m; m = json_next(m), i++) {
        size_t kl;
        const char *k = json_key(m, &kl);
        CHECK_STR(keys[i], k);
        CHECK_INT(strlen(keys[i]), kl);
    }
    CHECK_INT(4, i);

    CHECK_INT(0, json_len(json_path(r, "result.empty")));
    CHECK(json_first(json_path(r, "result.empty")) == NULL);
    CHECK_INT(0, json_len(json_path(r, "result.none")));
    CHECK_INT(JSON_NULL, json_type_of(json_path(r, "result.n")));
    CHECK(json_path(r, "result.n") != NULL);

    /* NULL and wrong types answer "absent". */
    size_t len = 99;
    CHECK(json_str(json_get(r, "id"), &len) == NULL);
    CHECK_INT(0, len);
    CHECK(json_num(json_get(r, "sessionId")) == 0);
    CHECK(json_num(NULL) == 0);
    CHECK(!json_int(NULL, NULL));
    CHECK(!json_bool(NULL));
    CHECK(json_get(NULL, "a") == NULL);
    CHECK(json_get(r, NULL) == NULL);
    CHECK(json_get(nodes, "a") == NULL);
    CHECK(json_getn(r, "idx", 2) != NULL);
    CHECK(json_at(r, 0) == NULL);
    CHECK(json_first(json_get(r, "id")) == NULL);
    CHECK(json_next(NULL) == NULL);
    CHECK(json_key(NULL, &len) == NULL);
    CHECK_INT(JSON_NULL, json_type_of(NULL));
    CHECK(!json_is(NULL, JSON_NULL));
    CHECK_INT(0, json_len(NULL));
    CHECK_INT(0, json_len(json_get(r, "id")));
    CHECK(json_get_str(NULL, "x") == NULL);
    CHECK(json_doc_root(NULL) == NULL);
    CHECK_INT(0, json_doc_memsize(NULL));
    CHECK(json_doc_memsize(d) >= sizeof CDP_SAMPLE);
    json_doc_free(NULL);
    json_doc_free(d);

    /* Scalars at the top level. */
    d = parse_str(" \"x\" ", NULL);
    CHECK_STR("x", json_str(json_doc_root(d), NULL));
    json_doc_free(d);
    d = parse_str("-12", NULL);
    int64_t v = 0;
    CHECK(json_int(json_doc_root(d), &v) && v == -12);
    json_doc_free(d);
    /* Input need not be NUL-terminated. */
    d = json_parse("[1,2]xyz", 5, NULL, NULL);
    CHECK_INT(2, json_len(json_doc_root(d)));
    json_doc_free(d);
}

/* ---- errors: code, offset, message ---- */

static void t_errors(void)
{
    static const struct {
        const char *in;
        int code;
        size_t off;
        const char *msg;
    } cases[] = {
        {"", JSON_ESYNTAX, 0, "empty input"},
        {"   ", JSON_ESYNTAX, 3, "empty input"},
        {"[1,2", JSON_ESYNTAX, 4, "unexpected end of input"},
        {"[1,]", JSON_ESYNTAX, 3, "value expected"},
        {"{\"a\":1,}", JSON_ESYNTAX, 7, "string key expected"},
        {"{\"a\" 1}", JSON_ESYNTAX, 5, "':' expected"},
        {"{\"a\":1 \"b\":2}", JSON_ESYNTAX, 7, "',' or '}' expected"},
        {"[1 2]", JSON_ESYNTAX, 3, "',' or ']' expected"},
        {"[1] x", JSON_ESYNTAX, 4, "unexpected data after the value"},
        {"[\"abc", JSON_ESYNTAX, 5, "unterminated string"},
        {"[\"a\tb\"]", JSON_ESYNTAX, 3, "control character in string"},
        {"[\"a\\qb\"]", JSON_ESYNTAX, 3, "invalid escape"},
        {"[\"\\u12x4\"]", JSON_ESYNTAX, 2, "invalid \\u escape"},
        {"[\"ab\xc3\"]", JSON_EUTF8, 4, "invalid UTF-8 in string"},
        {"[\"\xed\xa0\x80\"]", JSON_EUTF8, 2, "invalid UTF-8 in string"},
        {"[01]", JSON_ESYNTAX, 2, "leading zero in number"},
        {"[1.]", JSON_ESYNTAX, 3, "digit expected after '.'"},
        {"[1e+]", JSON_ESYNTAX, 4, "digit expected in exponent"},
        {"[-]", JSON_ESYNTAX, 2, "invalid number"},
        {"[tru]", JSON_ESYNTAX, 1, "invalid literal"},
        {"[nul", JSON_ESYNTAX, 1, "invalid literal"},
        {"[1e400]", JSON_ERANGE, 1, "number out of range"},
        {"[-1e400]", JSON_ERANGE, 1, "number out of range"},
        {"\xef\xbb\xbf{}", JSON_ESYNTAX, 0, "byte order mark not allowed"},
        {"{\"a\":1}}", JSON_ESYNTAX, 7, "unexpected data after the value"},
        {"[\"a\"\xc3\xa9]", JSON_ESYNTAX, 4, "',' or ']' expected"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_err err = {99, 99, NULL};
        json_doc *d = parse_str(cases[k].in, &err);
        if (!CHECK(d == NULL)) {
            test_fail_detail("case %zu \"%s\" accepted", k, cases[k].in);
            json_doc_free(d);
            continue;
        }
        if (err.code != cases[k].code || err.offset != cases[k].off ||
            !err.msg || strcmp(err.msg, cases[k].msg) != 0) {
            CHECK(0);
            test_fail_detail("case %zu \"%s\": got %d at %zu \"%s\"", k,
                             cases[k].in, err.code, err.offset,
                             err.msg ? err.msg : "(null)");
        }
    }
    /* A NUL byte inside the input is a character, not the end. */
    json_err err;
    CHECK(json_parse("[1]\0", 4, NULL, &err) == NULL);
    CHECK_INT(3, err.offset);
    CHECK(json_parse("[\"a\0\"]", 6, NULL, &err) == NULL);
    CHECK_STR("control character in string", err.msg);
    CHECK(json_parse(NULL, 0, NULL, &err) == NULL);
    CHECK_INT(JSON_ESYNTAX, err.code);
    /* err may be NULL. */
    CHECK(json_parse("[", 1, NULL, NULL) == NULL);
    /* Success clears err. */
    json_doc *d = parse_str("1", &err);
    CHECK_INT(JSON_OK, err.code);
    json_doc_free(d);

    CHECK_STR("out of memory", json_strerror(JSON_ENOMEM));
    CHECK_STR("nesting too deep", json_strerror(JSON_EDEPTH));
    CHECK_STR("duplicate key", json_strerror(JSON_EDUPKEY));
    CHECK_STR("unknown error", json_strerror(-1000));
    for (int c = JSON_EVALUE; c <= JSON_OK; c++)
        CHECK(json_strerror(c) != NULL);
}

/* ---- limits ---- */

static void t_limits(void)
{
    json_opts o = {0, 3, 0};
    json_err err;
    json_doc *d = json_parse("[[{\"a\":1}]]", 11, &o, &err);
    CHECK(d != NULL);
    json_doc_free(d);
    d = json_parse("[[[[1]]]]", 9, &o, &err);
    CHECK(d == NULL);
    CHECK_INT(JSON_EDEPTH, err.code);
    CHECK_INT(3, err.offset);
    CHECK_STR("nesting too deep", err.msg);

    /* Default depth 1024: 1024 levels pass, 1025 fail. */
    char *deep = malloc(2 * 1025 + 1);
    for (int k = 0; k < 1025; k++) {
        deep[k] = '[';
        deep[2 * 1025 - 1 - k] = ']';
    }
    d = json_parse(deep + 1, 2 * 1024, NULL, &err);
    CHECK(d != NULL);
    char *w = d ? json_write(json_doc_root(d), NULL) : NULL;
    CHECK(w == NULL);                         /* writer stops at 256 */
    free(w);
    json_doc_free(d);
    d = json_parse(deep, 2 * 1025, NULL, &err);
    CHECK(d == NULL);
    CHECK_INT(JSON_EDEPTH, err.code);
    CHECK_INT(1024, err.offset);
    free(deep);

    /* Size. */
    o = (json_opts){5, 0, 0};
    d = json_parse("[1,2]", 5, &o, &err);
    CHECK(d != NULL);
    json_doc_free(d);
    d = json_parse("[1,23]", 6, &o, &err);
    CHECK(d == NULL);
    CHECK_INT(JSON_ESIZE, err.code);
    CHECK_INT(5, err.offset);
}

/* ---- duplicate keys ---- */

static void t_dup_keys(void)
{
    json_opts o = {0, 0, JSON_NO_DUPLICATES};
    json_err err;
    json_doc *d = parse_str("{\"a\":1,\"b\":{\"a\":2},\"c\":3}", NULL);
    CHECK(d != NULL);                         /* same key, other objects */
    json_doc_free(d);
    const char *in = "{\"a\":1,\"b\":{\"x\":2,\"x\":3}}";
    d = json_parse(in, strlen(in), &o, &err);
    CHECK(d == NULL);
    CHECK_INT(JSON_EDUPKEY, err.code);
    CHECK_INT(18, err.offset);
    CHECK_STR("duplicate key", err.msg);
    /* Escaped spelling of the same key is the same key. */
    in = "{\"ab\":1,\"a\\u0062\":2}";
    d = json_parse(in, strlen(in), &o, &err);
    CHECK(d == NULL);
    CHECK_INT(8, err.offset);
    /* Keys differing only after a NUL are different keys. */
    in = "{\"a\\u0000b\":1,\"a\\u0000c\":2,\"a\":3}";
    d = json_parse(in, strlen(in), &o, &err);
    CHECK(d != NULL);
    CHECK_INT(3, json_getn(json_doc_root(d), "a", 1) ?
              json_get_int(json_doc_root(d), "a", 0) : 0);
    CHECK(json_getn(json_doc_root(d), "a\0c", 3) != NULL);
    json_doc_free(d);

    /* Big objects take the sorted path; report the earliest repeat. */
    char big[4096];
    size_t n = 0;
    big[n++] = '{';
    for (int k = 0; k < 100; k++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s\"k%d\":%d",
                              k ? "," : "", k == 70 ? 5 : k == 90 ? 30 : k, k);
    big[n++] = '}';
    d = json_parse(big, n, NULL, &err);
    CHECK(d != NULL);
    CHECK_INT(100, json_len(json_doc_root(d)));
    CHECK_INT(5, json_get_int(json_doc_root(d), "k5", -1));
    json_doc_free(d);
    d = json_parse(big, n, &o, &err);
    CHECK(d == NULL);
    CHECK_INT(JSON_EDUPKEY, err.code);
    const char *first_dup = strstr(strstr(big, "\"k5\":5") + 1, "\"k5\"");
    CHECK_INT(first_dup - big, err.offset);
}

/* ---- Unicode ---- */

static void t_unicode(void)
{
    static const struct {
        const char *in;
        const char *out;
        size_t outlen;
    } cases[] = {
        {"\"\\u00e9\"", "\xc3\xa9", 2},
        {"\"\\u20AC\"", "\xe2\x82\xac", 3},
        {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4},
        {"\"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf", 4},
        {"\"x\\u0000y\"", "x\0y", 3},
        {"\"\\ud800\"", "\xef\xbf\xbd", 3},
        {"\"\\udc00\"", "\xef\xbf\xbd", 3},
        {"\"\\ud800\\ud800\\udc00\"", "\xef\xbf\xbd\xf0\x90\x80\x80", 7},
        {"\"\\ud800\\n\"", "\xef\xbf\xbd\n", 4},
        {"\"\\ud800x\"", "\xef\xbf\xbdx", 4},
        {"\"\\ud800\\u0041\"", "\xef\xbf\xbd" "A", 4},
        {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t", 8},
        {"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
         "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9},
        {"\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\"", "\xef\xbf\xbf\xf4\x8f\xbf\xbf", 7},
        {"\"\xe2\x80\xa8\"", "\xe2\x80\xa8", 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_err err;
        json_doc *d = parse_str(cases[k].in, &err);
        if (!CHECK(d != NULL)) {
            test_fail_detail("case %zu: %s at %zu", k, err.msg, err.offset);
            continue;
        }
        size_t len;
        const char *s = json_str(json_doc_root(d), &len);
        CHECK_MEM(cases[k].out, cases[k].outlen, s, len);
        CHECK(s[len] == 0);
        json_doc_free(d);
    }
    static const char *bad[] = {
        "\"\xc0\x80\"", "\"\xc1\xbf\"", "\"\xe0\x80\x80\"", "\"\xe0\x9f\xbf\"",
        "\"\xed\xa0\x80\"", "\"\xed\xbf\xbf\"", "\"\xf0\x80\x80\x80\"",
        "\"\xf0\x8f\xbf\xbf\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"",
        "\"\xff\"", "\"\x80\"", "\"\xc3\"", "\"\xe2\x82\"", "\"\xf0\x9f\x98\"",
        "\"\xc3\x28\"", "\"\xf8\x88\x80\x80\x80\"",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        json_err err;
        json_doc *d = parse_str(bad[k], &err);
        CHECK(d == NULL);
        CHECK_INT(JSON_EUTF8, err.code);
        CHECK_INT(1, err.offset);
        json_doc_free(d);
        const uint8_t *u = (const uint8_t *)bad[k] + 1;
        CHECK(!json_utf8_valid(u, strlen(bad[k]) - 2));
    }
    CHECK(json_utf8_valid((const uint8_t *)"", 0));
    CHECK(json_utf8_valid((const uint8_t *)"a\0b", 3));
    CHECK(json_utf8_valid((const uint8_t *)"0123456789abcdef\xc3\xa9xyz", 21));
    CHECK(!json_utf8_valid((const uint8_t *)"0123456789abcdef\xc3", 17));
    CHECK(!json_utf8_valid((const uint8_t *)"\xc3\xa9\xc3", 3));
}

/* Escapes and multibyte characters at every position of strings around
 * the 8- and 16-byte word boundaries of the scanners. */
static void t_string_boundaries(void)
{
    static const struct {
        const char *esc, *dec;
        size_t declen;
    } ins[] = {
        {"\\n", "\n", 1}, {"\\u00e9", "\xc3\xa9", 2}, {"\xc3\xa9", "\xc3\xa9", 2},
        {"\\ud83d\\ude00", "\xf0\x9f\x98\x80", 4}, {"\\\"", "\"", 1},
        {"\xe2\x80\xa8", "\xe2\x80\xa8", 3},
    };
    char in[128], want[128];
    for (size_t t = 0; t < sizeof ins / sizeof ins[0]; t++) {
        for (size_t len = 0; len < 40; len++) {
            for (size_t pos = 0; pos <= len; pos++) {
                size_t n = 0, m = 0;
                in[n++] = '"';
                for (size_t i = 0; i < len; i++) {
                    if (i == pos) {
                        memcpy(in + n, ins[t].esc, strlen(ins[t].esc));
                        n += strlen(ins[t].esc);
                        memcpy(want + m, ins[t].dec, ins[t].declen);
                        m += ins[t].declen;
                    }
                    in[n++] = want[m++] = (char)('a' + i % 26);
                }
                if (pos == len) {
                    memcpy(in + n, ins[t].esc, strlen(ins[t].esc));
                    n += strlen(ins[t].esc);
                    memcpy(want + m, ins[t].dec, ins[t].declen);
                    m += ins[t].declen;
                }
                in[n++] = '"';
                json_doc *d = json_parse(in, n, NULL, NULL);
                size_t sl = 0;
                const char *s = json_str(json_doc_root(d), &sl);
                if (!CHECK_MEM(want, m, s, sl))
                    test_fail_detail("insert %zu len %zu pos %zu", t, len, pos);
                /* Write it back and parse again. */
                char *w = d ? json_write(json_doc_root(d), NULL) : NULL;
                json_doc *d2 = w ? parse_str(w, NULL) : NULL;
                s = json_str(json_doc_root(d2), &sl);
                CHECK_MEM(want, m, s, sl);
                json_doc_free(d2);
                free(w);
                json_doc_free(d);
                if (test_failures_now() > 20)
                    return;
            }
        }
    }
}

/* ---- numbers ---- */

static void t_number_parse(void)
{
    static const struct {
        const char *in;
        double d;
    } cases[] = {
        {"0", 0.0}, {"-0", -0.0}, {"1", 1.0}, {"-1", -1.0},
        {"0.1", 0.1}, {"0.5", 0.5}, {"3.14159", 3.14159}, {"-2.5e-3", -2.5e-3},
        {"1e21", 1e21}, {"1E+2", 100.0}, {"123456789012345678", 123456789012345678.0},
        {"9007199254740993", 9007199254740993.0},
        {"0.30000000000000004", 0.30000000000000004},
        {"2.2250738585072014e-308", 2.2250738585072014e-308},
        {"4.9406564584124654e-324", 4.9406564584124654e-324},
        {"5e-324", 5e-324}, {"1.7976931348623157e308", 1.7976931348623157e308},
        {"1e-400", 0.0}, {"-1e-400", -0.0}, {"0e999999999", 0.0},
        {"0.000000000000000000000000000001", 1e-30},
        {"1.00000000000000011102230246251565404236316680908203125", 1.0},
        {"1.00000000000000011102230246251565404236316680908203126",
         1.0000000000000002},
        {"1.00000000000000011102230246251565404236316680908203124", 1.0},
        {"123.456e-2", 1.23456}, {"1e22", 1e22}, {"1e23", 1e23},
        {"8.203125", 8.203125}, {"17976931348623157e292", 1.7976931348623157e308},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_doc *d = parse_str(cases[k].in, NULL);
        double got = json_num(json_doc_root(d));
        if (!CHECK(d && got == cases[k].d &&
                   signbit(got) == signbit(cases[k].d)))
            test_fail_detail("%s -> %.17g", cases[k].in, got);
        json_doc_free(d);
    }
    int64_t i;
    json_doc *d = parse_str("[9223372036854775807,-9223372036854775808,"
                            "9223372036854775808,1.0,1e2,0,-0,12345678901234567890]",
                            NULL);
    const json_val *a = json_doc_root(d);
    CHECK(json_int(json_at(a, 0), &i) && i == INT64_MAX);
    CHECK(json_int(json_at(a, 1), &i) && i == INT64_MIN);
    CHECK(!json_int(json_at(a, 2), &i));
    CHECK(!json_int(json_at(a, 3), &i));
    CHECK(!json_int(json_at(a, 4), &i));
    CHECK(json_int(json_at(a, 5), &i) && i == 0);
    CHECK(json_int(json_at(a, 6), &i) && i == 0);
    CHECK(!json_int(json_at(a, 7), &i));
    CHECK(json_num(json_at(a, 7)) == 12345678901234567890.0);
    json_doc_free(d);
}

static void t_number_format(void)
{
    static const struct {
        double d;
        const char *s;
    } cases[] = {
        {0.0, "0"}, {-0.0, "-0"}, {1.0, "1"}, {-1.0, "-1"}, {0.1, "0.1"},
        {0.5, "0.5"}, {1.5, "1.5"}, {-2.25, "-2.25"}, {100.0, "100"},
        {1e21, "1e21"}, {1e22, "1e22"}, {1e100, "1e100"}, {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e308"},
        {2.2250738585072014e-308, "2.2250738585072014e-308"},
        {0.30000000000000004, "0.30000000000000004"}, {1.0 / 3, "0.3333333333333333"},
        {123456.789, "123456.789"}, {8.203125, "8.203125"}, {0.001, "0.001"},
        {1e-6, "0.000001"}, {1e-7, "1e-7"}, {1.5e-10, "1.5e-10"}, {1e15, "1000000000000000"},
        {9007199254740991.0, "9007199254740991"}, {9007199254740992.0, "9007199254740992"},
        {1e16, "1e16"}, {123456789012345680.0, "1.2345678901234568e17"},
        {4.35, "4.35"}, {2.675, "2.675"}, {-1e-300, "-1e-300"},
        {1.2345678901234567e-5, "1.2345678901234568e-5"},
        {0.000123, "0.000123"}, {4350.0, "4350"}, {43.5, "43.5"},
    };
    char buf[32];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int n = json_fmt_double(cases[k].d, buf);
        if (!CHECK(n > 0 && strcmp(buf, cases[k].s) == 0 &&
                   (size_t)n == strlen(cases[k].s)))
            test_fail_detail("%.17g: want %s got %s", cases[k].d, cases[k].s, buf);
        CHECK(strtod(buf, NULL) == cases[k].d);
    }
    CHECK_INT(-1, json_fmt_double(NAN, buf));
    CHECK_INT(-1, json_fmt_double(INFINITY, buf));
    CHECK_INT(-1, json_fmt_double(-INFINITY, buf));
}

/* xorshift64*: deterministic random bits. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

/* Significant digits of a number's text (leading and trailing zeros of
 * the mantissa not counted). */
static int sig_digits(const char *s)
{
    int n = 0, zeros = 0, started = 0;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s < '0' || *s > '9')
            continue;
        if (*s == '0') {
            zeros += started;
            continue;
        }
        started = 1;
        n += zeros + 1;
        zeros = 0;
    }
    return n;
}

static void t_number_round_trip(void)
{
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    char buf[32];
    int bad = 0, longer = 0;
    for (int k = 0; k < 200000 && bad < 10; k++) {
        uint64_t bits = rnd(&seed);
        double v;
        if (k % 4 == 3) {
            /* Short decimals, the common case in CDP (coordinates). */
            v = (double)(int64_t)(bits % 20000000) / (double)(1 << (bits >> 60));
            if (bits & 1)
                v = -v;
        } else if (k % 4 == 2) {
            v = (double)(int64_t)(bits >> 11) * 1e-3;
        } else {
            memcpy(&v, &bits, 8);
        }
        int n = json_fmt_double(v, buf);
        if (isnan(v) || isinf(v)) {
            CHECK_INT(-1, n);
            continue;
        }
        /* Reads back identically with strtod and with our parser. */
        double back = strtod(buf, NULL);
        json_doc *d = json_parse(buf, (size_t)n, NULL, NULL);
        double back2 = json_num(json_doc_root(d));
        json_doc_free(d);
        if (n <= 0 || back != v || back2 != v || signbit(back) != signbit(v)) {
            bad++;
            CHECK(0);
            test_fail_detail("%a -> %s -> %a / %a", v, buf, back, back2);
        }
        /* And has no more significant digits than the first of %.15g,
         * %.16g, %.17g that reads back (the shortest for normals). */
        char ref[40];
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(ref, sizeof ref, "%.*g", prec, v);
            if (strtod(ref, NULL) == v)
                break;
        }
        if (sig_digits(buf) > sig_digits(ref) && longer++ < 5)
            test_fail_detail("longer: %s vs %s", buf, ref);
    }
    CHECK_INT(0, longer);
}

/* ---- writer ---- */

static void t_writer_basic(void)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "id");
    json_w_int(&w, 1);
    json_w_key(&w, "method");
    json_w_str(&w, "Runtime.evaluate");
    json_w_key(&w, "params");
    json_w_obj_begin(&w);
    json_w_key(&w, "expression");
    json_w_str(&w, "1+1");
    json_w_key(&w, "list");
    json_w_arr_begin(&w);
    json_w_int(&w, INT64_MIN);
    json_w_int(&w, INT64_MAX);
    json_w_uint(&w, UINT64_MAX);
    json_w_num(&w, 0.25);
    json_w_bool(&w, true);
    json_w_bool(&w, false);
    json_w_null(&w);
    json_w_str(&w, NULL);
    json_w_arr_begin(&w);
    json_w_arr_end(&w);
    json_w_obj_begin(&w);
    json_w_obj_end(&w);
    json_w_raw(&w, "{\"r\":[1, 2]}", 12, true);
    json_w_arr_end(&w);
    json_w_keyn(&w, "k\0z", 3);
    json_w_strn(&w, "a\0b", 3);
    json_w_obj_end(&w);
    json_w_obj_end(&w);
    CHECK_INT(JSON_OK, json_w_error(&w));
    const char *want =
        "{\"id\":1,\"method\":\"Runtime.evaluate\",\"params\":{\"expression\":"
        "\"1+1\",\"list\":[-9223372036854775808,9223372036854775807,"
        "18446744073709551615,0.25,true,false,null,null,[],{},{\"r\":[1, 2]}],"
        "\"k\\u0000z\":\"a\\u0000b\"}}";
    CHECK_STR(want, w.buf);
    size_t len;
    char *out = json_w_take(&w, &len);
    CHECK_STR(want, out);
    CHECK_INT(strlen(want), len);
    free(out);
    /* Taken: empty again, reusable. */
    CHECK_INT(0, w.len);
    json_w_int(&w, 5);
    CHECK_STR("5", w.buf);
    json_w_reset(&w);
    json_w_str(&w, "x");
    CHECK_STR("\"x\"", w.buf);
    json_w_free(&w);
    json_w_free(&w);

    /* Zero-initialised works like json_w_init. */
    json_w z = {0};
    json_w_arr_begin(&z);
    json_w_arr_end(&z);
    out = json_w_take(&z, NULL);
    CHECK_STR("[]", out);
    free(out);
    /* Nothing written: "" */
    out = json_w_take(&z, &len);
    CHECK_STR("", out);
    free(out);
}

static void t_writer_escape(void)
{
    static const struct {
        const char *in;
        size_t len;
        const char *out;
    } cases[] = {
        {"plain", 5, "\"plain\""},
        {"", 0, "\"\""},
        {"q\"b\\s/", 6, "\"q\\\"b\\\\s/\""},
        {"\b\f\n\r\t", 5, "\"\\b\\f\\n\\r\\t\""},
        {"\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\""},
        {"\0", 1, "\"\\u0000\""},
        {"a\xe2\x80\xa8" "b\xe2\x80\xa9", 8, "\"a\\u2028b\\u2029\""},
        {"\xe2\x80\xaa\xc3\xa9\xf0\x9f\x98\x80", 9,
         "\"\xe2\x80\xaa\xc3\xa9\xf0\x9f\x98\x80\""},
        {"0123456789abcdef\n0123456789abcdef\"", 34,
         "\"0123456789abcdef\\n0123456789abcdef\\\"\""},
        {"</script>", 9, "\"</script>\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_w w;
        json_w_init(&w);
        json_w_strn(&w, cases[k].in, cases[k].len);
        CHECK_INT(JSON_OK, json_w_error(&w));
        CHECK_STR(cases[k].out, w.buf);
        json_w_free(&w);
    }
    /* Invalid UTF-8 in a string or key is an error. */
    static const char *bad[] = {"\xff", "a\xc3", "\xed\xa0\x80", "\xc0\x80",
                                "0123456789\xf4\x90\x80\x80"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        json_w w;
        json_w_init(&w);
        json_w_str(&w, bad[k]);
        CHECK_INT(JSON_EVALUE, json_w_error(&w));
        CHECK(json_w_take(&w, NULL) == NULL);
        json_w_init(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, bad[k]);
        CHECK_INT(JSON_EVALUE, json_w_error(&w));
        json_w_free(&w);
    }
}

static void t_writer_errors(void)
{
    json_w w;
    /* Each sequence must end in JSON_EVALUE and a NULL take. */
    for (int k = 0; k < 12; k++) {
        json_w_init(&w);
        switch (k) {
        case 0: json_w_arr_end(&w); break;
        case 1: json_w_obj_begin(&w); json_w_int(&w, 1); break;
        case 2: json_w_arr_begin(&w); json_w_key(&w, "a"); break;
        case 3: json_w_arr_begin(&w); break;                   /* unclosed */
        case 4: json_w_obj_begin(&w); json_w_key(&w, "a"); json_w_obj_end(&w); break;
        case 5: json_w_obj_begin(&w); json_w_key(&w, "a"); json_w_key(&w, "b"); break;
        case 6: json_w_arr_begin(&w); json_w_obj_end(&w); break;
        case 7: json_w_int(&w, 1); json_w_int(&w, 2); break;   /* two roots */
        case 8: json_w_num(&w, NAN); break;
        case 9: json_w_arr_begin(&w); json_w_num(&w, -INFINITY); json_w_arr_end(&w); break;
        case 10: json_w_raw(&w, "[1,", 3, true); break;
        case 11: json_w_key(&w, "a"); break;
        }
        if (!CHECK(json_w_error(&w) == JSON_EVALUE))
            test_fail_detail("sequence %d: %d", k, json_w_error(&w));
        char *out = json_w_take(&w, NULL);
        CHECK(out == NULL);
        free(out);
        json_w_free(&w);
    }
    /* Sticky: later calls change nothing. */
    json_w_init(&w);
    json_w_arr_begin(&w);
    json_w_num(&w, NAN);
    size_t len = w.len;
    json_w_int(&w, 1);
    json_w_arr_end(&w);
    CHECK_INT(len, w.len);
    CHECK_INT(JSON_EVALUE, json_w_error(&w));
    json_w_free(&w);

    /* Depth limit. */
    json_w_init(&w);
    for (int k = 0; k < JSON_W_MAX_DEPTH; k++)
        json_w_arr_begin(&w);
    CHECK_INT(0, w.err);                        /* 256 open is allowed */
    CHECK_INT(JSON_EVALUE, json_w_error(&w));   /* but unbalanced */
    json_w_arr_begin(&w);
    CHECK_INT(JSON_EVALUE, w.err);
    json_w_free(&w);

    /* Size limit: exceeding max is JSON_ESIZE; exactly max is fine. */
    json_w_init(&w);
    w.max = 7;
    json_w_str(&w, "abcde");
    CHECK_INT(JSON_OK, json_w_error(&w));
    json_w_reset(&w);
    json_w_str(&w, "abcdef");
    CHECK_INT(JSON_ESIZE, json_w_error(&w));
    json_w_reset(&w);
    CHECK_INT(7, w.max);
    json_w_arr_begin(&w);
    json_w_str(&w, "\n\n\n");
    CHECK_INT(JSON_ESIZE, json_w_error(&w));
    json_w_free(&w);

    /* Raw without validation goes in as is; empty raw is an error. */
    json_w_init(&w);
    json_w_arr_begin(&w);
    json_w_raw(&w, "1,2", 3, false);
    json_w_arr_end(&w);
    CHECK_STR("[1,2]", w.buf);
    json_w_reset(&w);
    json_w_raw(&w, "", 0, false);
    CHECK_INT(JSON_EVALUE, json_w_error(&w));
    json_w_free(&w);
}

static void t_writer_val(void)
{
    size_t len;
    char *w = round_trip(CDP_SAMPLE, strlen(CDP_SAMPLE), &len);
    CHECK_STR(CDP_SAMPLE, w);      /* compact input comes back byte-exact */
    free(w);
    const char *in = " { \"a\" : [ 1 , -0 , 0.10 , 1E2 , \"\\u00e9\\/\" ] , \"b\" : { } } ";
    json_doc *d = parse_str(in, NULL);
    w = json_write(json_doc_root(d), &len);
    CHECK_STR("{\"a\":[1,-0,0.1,100,\"\xc3\xa9/\"],\"b\":{}}", w);
    free(w);
    /* A subtree, and json_w_val inside a writer. */
    json_w wr;
    json_w_init(&wr);
    json_w_obj_begin(&wr);
    json_w_key(&wr, "copy");
    json_w_val(&wr, json_get(json_doc_root(d), "a"));
    json_w_key(&wr, "missing");
    json_w_val(&wr, json_get(json_doc_root(d), "zz"));
    json_w_obj_end(&wr);
    CHECK_STR("{\"copy\":[1,-0,0.1,100,\"\xc3\xa9/\"],\"missing\":null}", wr.buf);
    json_w_free(&wr);
    json_doc_free(d);
    CHECK_STR("null", (w = json_write(NULL, NULL)));
    free(w);
}

/* ---- allocation failures ---- */

static char *big_doc(size_t *len)
{
    /* Several arena blocks (many small nodes), nesting deeper than the
     * parser's local frame stack, a big object for the duplicate check,
     * escapes and a non-trivial double for the slow paths. */
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "nodes");
    json_w_arr_begin(&w);
    for (int k = 0; k < 3000; k++) {
        json_w_obj_begin(&w);
        json_w_key(&w, "i");
        json_w_int(&w, k);
        json_w_key(&w, "s");
        json_w_str(&w, "x\n\xc3\xa9");
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    json_w_key(&w, "d");
    json_w_num(&w, 1.2345678901234567e-200);
    for (int k = 0; k < 20; k++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", k);
        json_w_key(&w, key);
        json_w_int(&w, k);
    }
    json_w_key(&w, "deep");
    for (int k = 0; k < 100; k++)
        json_w_arr_begin(&w);
    for (int k = 0; k < 100; k++)
        json_w_arr_end(&w);
    json_w_obj_end(&w);
    return json_w_take(&w, len);
}

static void t_alloc_failures(void)
{
    size_t len;
    char *doc = big_doc(&len);
    if (!CHECK(doc != NULL))
        return;
    json_opts o = {0, 0, JSON_NO_DUPLICATES};
    long n, fails = 0;
    for (n = 0; n < 1000; n++) {
        json_err err;
        test_fail_alloc_after(n, 0);
        json_doc *d = json_parse(doc, len, &o, &err);
        test_fail_alloc_off();
        if (d) {
            json_doc_free(d);
            break;
        }
        fails++;
        if (!CHECK(err.code == JSON_ENOMEM))
            test_fail_detail("allocation %ld: %s", n, err.msg);
        CHECK_STR("out of memory", err.msg);
    }
    CHECK(fails >= 4);          /* first block, blocks, frames, dup check */
    CHECK(n < 1000);
    /* Sticky failure too. */
    test_fail_alloc_after(2, 1);
    CHECK(json_parse(doc, len, &o, NULL) == NULL);
    test_fail_alloc_off();

    /* Writer: rebuild the document with each allocation failing in turn. */
    json_doc *d = json_parse(doc, len, NULL, NULL);
    fails = 0;
    for (n = 0; n < 1000; n++) {
        json_w w;
        json_w_init(&w);
        test_fail_alloc_after(n, 0);
        json_w_val(&w, json_doc_root(d));
        int e = json_w_error(&w);
        char *out = json_w_take(&w, NULL);
        test_fail_alloc_off();
        json_w_free(&w);
        if (e == JSON_OK && out) {
            CHECK_STR(doc, out);
            free(out);
            break;
        }
        fails++;
        CHECK_INT(JSON_ENOMEM, e);
        CHECK(out == NULL);
        free(out);
    }
    CHECK(fails >= 5);
    CHECK(n < 1000);
    /* json_w_raw with validation allocates too. */
    for (n = 0; n < 10; n++) {
        json_w w;
        json_w_init(&w);
        test_fail_alloc_after(n, 0);
        json_w_raw(&w, "[1]", 3, true);
        test_fail_alloc_off();
        int e = json_w_error(&w);
        json_w_free(&w);
        if (e == JSON_OK)
            break;
        CHECK_INT(JSON_ENOMEM, e);
    }
    json_doc_free(d);
    free(doc);
}

/* ---- large inputs: a CDP-like AX tree and a screenshot ---- */

static void t_large(void)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "id");
    json_w_int(&w, 9);
    json_w_key(&w, "result");
    json_w_obj_begin(&w);
    json_w_key(&w, "data");
    size_t n = 3 << 20;
    char *b64 = malloc(n);
    static const char al[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint64_t s = 1;
    for (size_t i = 0; i < n; i++)
        b64[i] = al[rnd(&s) & 63];
    json_w_strn(&w, b64, n);
    json_w_obj_end(&w);
    json_w_obj_end(&w);
    size_t len;
    char *txt = json_w_take(&w, &len);
    CHECK_INT(n + 29, len);
    json_doc *d = json_parse(txt, len, NULL, NULL);
    size_t sl;
    const char *data = json_str(json_path(json_doc_root(d), "result.data"), &sl);
    CHECK_MEM(b64, n, data, sl);
    char *again = json_write(json_doc_root(d), &sl);
    CHECK_MEM(txt, len, again, sl);
    free(again);
    json_doc_free(d);
    free(txt);
    free(b64);
}


/* ---- json_stream: the push tokenizer against json_parse ---- */

/* Every JSONTestSuite file (y_, n_ and i_), fed in two pieces split at every
 * byte, then a byte at a time, then whole with tiny string pieces: the
 * stream must accept and reject exactly like json_parse, with the same
 * error code and offset, and report the same values. The two big n_ files
 * are split at 97 points instead of all. */
static void t_stream_suite(void)
{
    char dir[1024], path[2048];
    suite_dir(dir, sizeof dir, "test_parsing");
    DIR *d = opendir(dir);
    if (!CHECK(d != NULL))
        return;
    int files = 0, runs = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (n[0] == '.' || strlen(n) < 3)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, n);
        size_t len;
        char *buf = test_read_file(path, &len);
        if (!CHECK(buf != NULL))
            continue;
        files++;
        const uint8_t *u = (const uint8_t *)buf;
        size_t step = len > 4096 ? len / 97 : 1;
        for (size_t k = 0; k <= len; k += step) {
            int why = canon_compare(u, len, k, 0, 0, 0);
            runs++;
            if (why) {
                CHECK(!"stream == parse");
                test_fail_detail("%s split at %zu: differs (json_canon.h:%d)", n, k, why);
                break;
            }
        }
        int why = canon_compare(u, len, 0, 1, 0, 0);
        if (!why)
            why = canon_compare(u, len, 0, 0, 0, 1);
        if (!why)
            why = canon_compare(u, len, 1, 3, 0, 2);
        runs += 3;
        if (why) {
            CHECK(!"stream == parse");
            test_fail_detail("%s bytewise or small pieces: differs (json_canon.h:%d)", n, why);
        }
        free(buf);
    }
    closedir(d);
    printf("json_stream: %d files, %d split runs agree with json_parse\n", files, runs);
    CHECK_INT(318, files);
}

/* Hand-written cases at the edges: surrogates across pieces, escapes at
 * piece ends, numbers cut anywhere, literals, depth, errors at the end. */
static void t_stream_cases(void)
{
    static const char *const cases[] = {
        "\"\\uD83D\\uDE00\"", "\"\\uD83D\"", "\"\\uD83Dx\"", "\"\\uD83D\\n\"",
        "\"\\uD83D\\u0041\"", "\"\\uD83D\\uD83D\\uDE00\"", "\"\\uDE00\"", "\"\\uD83D\\",
        "\"\\uD83D\\u12", "\"\\uD83D\\u12G4\"", "\"\\u12\"", "\"\\", "\"abc", "\"\xc3",
        "\"\xc3\"", "\"\xe2\x82\xac\xf0\x9f\x98\x80\"", "\"\xed\xa0\x80\"", "\"\x01\"",
        "-", "-0", "-01", "0.", "0.5e", "0.5e+", "1e400", "-1e-400", "123456789012345678901",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "0.1e1", "1E+2", "[1,2", "[1,2,]", "{\"a\":1,}", "{\"a\" 1}", "{\"a\"", "{\"a\":",
        "tru", "truex", "nul", "[true false]", " \t\r\n ", "", "[]x", "{}  ", "1 2",
        "{\"k\":[{\"x\":\"y\"},[[]],{}],\"\\u0000\":\"a\\u0000b\"}", "\"a\\/b\\\"\\\\\"",
        "[-]", "[01]", "[1.]", "[.5]", "[+1]", "[1e]", "[\"\\x\"]", "\xef\xbb\xbf{}",
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const uint8_t *u = (const uint8_t *)cases[c];
        size_t len = strlen(cases[c]);
        for (size_t k = 0; k <= len; k++) {
            for (size_t ms = 0; ms < 4; ms++) {
                int why = canon_compare(u, len, k, ms ? 1 : 0, 0, ms);
                if (why) {
                    CHECK(!"stream == parse");
                    test_fail_detail("case %zu \"%s\" split %zu max_string %zu: "
                                     "json_canon.h:%d", c, cases[c], k, ms, why);
                    k = len + 1;
                    break;
                }
            }
        }
    }
    /* depth limit */
    CHECK_INT(0, canon_compare((const uint8_t *)"[[[]]]", 6, 2, 1, 3, 0));
    CHECK_INT(0, canon_compare((const uint8_t *)"[[[[]]]]", 8, 2, 1, 3, 0));
    json_stream_opts o = {0, 3, 0};
    json_stream *s = json_stream_new(&o, NULL, NULL);
    CHECK_INT(JSON_EDEPTH, json_stream_feed(s, "[[[[", 4));
    CHECK_INT(3, json_stream_error(s)->offset);
    json_stream_reset(s);
    CHECK_INT(0, json_stream_feed(s, "[[[]]] ", 7));
    CHECK(json_stream_done(s));
    CHECK_INT(0, json_stream_end(s));
    json_stream_free(s);
}

/* JSON_STREAM_SKIP changes nothing but the events: on every JSONTestSuite
 * file, with a callback that skips every KEY/BEGIN, or every second or
 * third one (at each phase), fed whole, a byte at a time and split at every
 * byte (the two big n_ files at 97 points), the stream accepts and rejects
 * as json_parse does, with the same error code and offset, and reports
 * what is not skipped exactly (tests/json_canon.h). */
static void t_stream_skip_suite(void)
{
    char dir[1024], path[2048];
    suite_dir(dir, sizeof dir, "test_parsing");
    DIR *d = opendir(dir);
    if (!CHECK(d != NULL))
        return;
    int files = 0, runs = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (n[0] == '.' || strlen(n) < 3)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, n);
        size_t len;
        char *buf = test_read_file(path, &len);
        if (!CHECK(buf != NULL))
            continue;
        files++;
        const uint8_t *u = (const uint8_t *)buf;
        int why = 0;
        for (unsigned p = 1; p <= 3 && !why; p++) {
            for (unsigned ph = 0; ph < p && !why; ph++) {
                why = canon_compare_skip(u, len, 0, 0, 0, 0, p, ph);
                if (!why)
                    why = canon_compare_skip(u, len, 0, 1, 0, 0, p, ph);
                if (!why)
                    why = canon_compare_skip(u, len, 1, 3, 0, 2, p, ph);
                runs += 3;
                if (why)
                    test_fail_detail("%s skipping 1 in %u (phase %u): differs "
                                     "(json_canon.h:%d)", n, p, ph, why);
            }
        }
        size_t step = len > 4096 ? len / 97 : 1;
        for (size_t k = 0; k <= len && !why; k += step) {
            why = canon_compare_skip(u, len, k, 0, 0, 0, 2, 1);
            runs++;
            if (why)
                test_fail_detail("%s skipping, split at %zu: differs (json_canon.h:%d)", n, k,
                                 why);
        }
        if (why)
            CHECK(!"skipping stream == parse");
        free(buf);
    }
    closedir(d);
    printf("json_stream skipping: %d files, %d runs agree with json_parse\n", files, runs);
    CHECK_INT(318, files);
}

/* What a skip hands out: a skipped member's value gives no event at all,
 * a skipped container its END only; SKIP anywhere else means 0; a long
 * skipped string is neither handed out in pieces nor gathered. */
typedef struct {
    char log[256];
    size_t n;
    long parts;
} skip_log;

static int skip_some(void *ud, const json_event *ev)
{
    skip_log *L = ud;
    static const char tag[] = "?{}[]KPSNtfn";
    if (L->n + 1 < sizeof L->log)
        L->log[L->n++] = tag[ev->type];
    L->log[L->n] = 0;
    L->parts += ev->type == JSON_EV_STR_PART;
    if (ev->type == JSON_EV_KEY && ev->str[0] == 's')
        return JSON_STREAM_SKIP;
    if (ev->type == JSON_EV_ARR_BEGIN && ev->depth == 1)
        return JSON_STREAM_SKIP;
    if (ev->type == JSON_EV_STR || ev->type == JSON_EV_NUM || ev->type == JSON_EV_OBJ_END)
        return JSON_STREAM_SKIP;    /* means 0 */
    return 0;
}

static void t_stream_skip_events(void)
{
    const char *doc = "{\"a\":\"x\",\"s1\":{\"b\":[1,{\"c\":2}],\"d\":\"\\u00e9\"},"
                      "\"e\":[\"y\",{\"z\":3}],\"s2\":\"long\",\"f\":{\"s3\":[[]],\"g\":null},"
                      "\"s4\":7,\"h\":true}";
    skip_log L = {{0}, 0, 0};
    json_stream *s = json_stream_new(NULL, skip_some, &L);
    for (size_t k = 0; k <= strlen(doc); k++) {
        json_stream_reset(s);
        L.n = 0;
        CHECK_INT(0, json_stream_feed(s, doc, k));
        CHECK_INT(0, json_stream_feed(s, doc + k, strlen(doc) - k));
        CHECK_INT(0, json_stream_end(s));
        if (!CHECK_STR("{KSKK[]KK{KKn}KKt}", L.log))
            break;
    }
    /* An 8 MB string value skipped: no pieces, and no buffer for it. */
    size_t n = (size_t)8 << 20;
    char *big = malloc(n + 32);
    memcpy(big, "{\"s\":\"", 6);
    for (size_t i = 6; i < n; i += 3)
        memcpy(big + i, "\xe2\x82\xac", 3);
    size_t end = 6 + (n - 6) / 3 * 3;
    memcpy(big + end, "\",\"t\":1}", 8);
    json_stream_opts o = {0, 0, 1000};
    json_stream *t = json_stream_new(&o, skip_some, &L);
    L.n = 0;
    long before = test_alloc_count();
    for (size_t off = 0; off < end + 8; off += 4093)
        CHECK_INT(0, json_stream_feed(t, big + off, end + 8 - off < 4093 ? end + 8 - off : 4093));
    CHECK_INT(0, json_stream_end(t));
    CHECK(test_alloc_count() - before < 4);
    CHECK_INT(0, L.parts);
    CHECK_STR("{KKN}", L.log);
    /* Still checked in full: a bad byte inside the skipped string. */
    big[end - 2] = (char)0xff;
    json_stream_reset(t);
    int r = json_stream_feed(t, big, end + 8);
    CHECK_INT(JSON_EUTF8, r);
    json_err pe;
    CHECK(json_parse(big, end + 8, NULL, &pe) == NULL);
    CHECK_INT(pe.offset, json_stream_error(t)->offset);
    json_stream_free(t);
    json_stream_free(s);
    free(big);
}

/* A long string arrives in pieces of at most max_string bytes, each ending
 * on a character boundary, and memory stays small for a big input. */
typedef struct {
    size_t parts, total, maxlen;
    int bad;
} piece_count;

static int count_pieces(void *ud, const json_event *ev)
{
    piece_count *pc = ud;
    if (ev->type == JSON_EV_STR_PART || ev->type == JSON_EV_STR) {
        pc->parts++;
        pc->total += ev->len;
        if (ev->len > pc->maxlen)
            pc->maxlen = ev->len;
        if (!json_utf8_valid((const uint8_t *)ev->str, ev->len))
            pc->bad = 1;
    }
    return 0;
}

static void t_stream_pieces(void)
{
    size_t n = (size_t)8 << 20;
    char *big = malloc(n + 16);
    big[0] = '"';
    for (size_t i = 1; i + 4 < n; i += 3)
        memcpy(big + i, "\xe2\x82\xac", 3);      /* euro signs */
    size_t end = 1 + ((n - 5) / 3 + ((n - 5) % 3 ? 1 : 0)) * 3;
    big[end] = '"';
    piece_count pc = {0};
    json_stream_opts o = {0, 0, 1000};
    json_stream *s = json_stream_new(&o, count_pieces, &pc);
    long before = test_alloc_count();
    for (size_t off = 0; off <= end; off += 4093) {
        size_t k = end + 1 - off < 4093 ? end + 1 - off : 4093;
        CHECK_INT(0, json_stream_feed(s, big + off, k));
    }
    CHECK_INT(0, json_stream_end(s));
    CHECK(test_alloc_count() - before < 8);   /* the piece buffer, not the string */
    CHECK_INT(end - 1, pc.total);
    CHECK(pc.maxlen <= 1003);
    CHECK(pc.parts > (end - 1) / 1003);
    CHECK(!pc.bad);
    json_stream_free(s);
    free(big);
}

/* The callback stops the stream; an allocation failure is JSON_ENOMEM. */
static int stop_at_key(void *ud, const json_event *ev)
{
    (void)ud;
    return ev->type == JSON_EV_KEY && strcmp(ev->str, "stop") == 0 ? -100 : 0;
}

static void t_stream_stop_and_oom(void)
{
    json_stream *s = json_stream_new(NULL, stop_at_key, NULL);
    CHECK_INT(-100, json_stream_feed(s, "{\"a\":1,\"stop\":2}", 16));
    CHECK_INT(-100, json_stream_error(s)->code);
    CHECK_INT(7, json_stream_error(s)->offset);
    CHECK_INT(-100, json_stream_feed(s, "x", 1));
    json_stream_free(s);
    const char *doc = "{\"key\":[\"a long enough string value\",1.5,true]}";
    for (long k = 0; k < 20; k++) {
        test_fail_alloc_after(k, 0);
        json_stream *t = json_stream_new(NULL, NULL, NULL);
        int r = t ? json_stream_feed(t, doc, strlen(doc)) : JSON_ENOMEM;
        if (!r)
            r = json_stream_end(t);
        test_fail_alloc_off();
        CHECK(r == 0 || r == JSON_ENOMEM);
        json_stream_free(t);
        if (r == 0)
            break;
    }
}

/* Secret documents and writers give what ordinary ones give (growth
 * included); a secret writer's reset zeroes what it held (the buffer stays
 * allocated, so that can be read back); take keeps the mode. */
static void t_secret_modes(void)
{
    json_w w, p;
    json_w_init_secret(&w);
    json_w_init(&p);
    json_w_arr_begin(&w);
    json_w_arr_begin(&p);
    for (int i = 0; i < 2000; i++) {
        char s[40];
        snprintf(s, sizeof s, "secret-%d\n\"\xc3\xa9", i);
        json_w_str(&w, s);
        json_w_str(&p, s);
        json_w_int(&w, i);
        json_w_int(&p, i);
    }
    json_w_arr_end(&w);
    json_w_arr_end(&p);
    CHECK_INT(JSON_OK, json_w_error(&w));
    CHECK(w.len > 30000 && w.len == p.len);
    CHECK(w.buf && p.buf && strcmp(w.buf, p.buf) == 0);
    json_opts so = {0, 0, JSON_SECRET};
    json_doc *a = json_parse(w.buf, w.len, &so, NULL), *b = json_parse(p.buf, p.len, NULL, NULL);
    char *wa = json_write(json_doc_root(a), NULL), *wb = json_write(json_doc_root(b), NULL);
    CHECK(wa && wb && strcmp(wa, wb) == 0 && strcmp(wa, p.buf) == 0);
    free(wa);
    free(wb);
    json_doc_free(a);
    json_doc_set_secret(b);
    json_doc_free(b);
    json_doc_set_secret(NULL);
    CHECK(json_parse("[\"secret\",", 10, &so, NULL) == NULL);   /* freed, zeroed */
    const char *buf = w.buf;
    size_t cap = w.cap, nz = 0;
    json_w_reset(&w);
    CHECK(w.buf == buf && w.cap == cap && w.secret);
    for (size_t i = 0; i < cap; i++)
        nz += buf[i] != 0;
    CHECK_INT(0, nz);
    json_w_raw(&w, "{\"v\":\"secret\"}", 14, true);
    size_t len = 0;
    char *out = json_w_take(&w, &len);
    CHECK(out && strcmp(out, "{\"v\":\"secret\"}") == 0 && len == 14);
    CHECK(w.secret && !w.buf);
    free(out);
    json_w_free(&w);
    CHECK(!w.secret);
    json_w_free(&p);
}

static const test_case TESTS[] = {
    {"secret_modes", t_secret_modes},
    {"suite_parsing", t_suite_parsing},
    {"suite_transform", t_suite_transform},
    {"accessors", t_accessors},
    {"errors", t_errors},
    {"limits", t_limits},
    {"dup_keys", t_dup_keys},
    {"unicode", t_unicode},
    {"string_boundaries", t_string_boundaries},
    {"number_parse", t_number_parse},
    {"number_format", t_number_format},
    {"number_round_trip", t_number_round_trip},
    {"writer_basic", t_writer_basic},
    {"writer_escape", t_writer_escape},
    {"writer_errors", t_writer_errors},
    {"writer_val", t_writer_val},
    {"alloc_failures", t_alloc_failures},
    {"large", t_large},
    {"stream_suite", t_stream_suite},
    {"stream_cases", t_stream_cases},
    {"stream_pieces", t_stream_pieces},
    {"stream_stop_and_oom", t_stream_stop_and_oom},
    {"stream_skip_suite", t_stream_skip_suite},
    {"stream_skip_events", t_stream_skip_events},
    {0, 0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, TESTS);
}
