/*
 * fuzz_trail.c — libFuzzer target for the trail parser (replay/; also
 * replayed over the checked-in corpus by tests/fuzz/replay.c in
 * `make test`).
 *
 * Parse the input as a trail. On error nothing is returned and the message
 * starts with "trail" and is valid UTF-8. When it parses, the serializer
 * must write it, the text must parse again, and writing that must give the
 * same bytes (the serializer's output is a fixed point); every step's
 * revision ordering holds (superseded only when the same number follows).
 * The input as a URL through the recorder's secret rule (replay_url_scrub:
 * userinfo, path, query values, fragment): it returns a string, and a
 * second pass keeps every "[redacted]" of the first. The input as page
 * text through the trail's page-text rule (replay_text_hide, R6-5): the
 * hidden text matches the input again (replay_text_match), a second pass
 * keeps every hidden word; as a target's row (replay_row_mark, R7-6) it
 * matches the input as replay_row_eq reads a row; with its identifiers
 * hashed under a trail key (replay_text_hide_ids) it matches under that
 * key and, when one was hashed, not without it.
 */
#include "json/json.h"
#include "replay/replay.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *z = malloc(size + 1);
    CHECK(z);
    memcpy(z, data, size);
    z[size] = '\0';
    char *u1 = replay_url_scrub(z);
    char *u2 = u1 ? replay_url_scrub(u1) : NULL;
    CHECK(u1 && u2);
    size_t r1 = 0, r2 = 0;
    for (const char *p = u1; (p = strstr(p, "[redacted]")); p++)
        r1++;
    for (const char *p = u2; (p = strstr(p, "[redacted]")); p++)
        r2++;
    CHECK(r2 >= r1);
    free(u1);
    free(u2);
    /* The page-text rule (R6-5): the text with its secret-shaped words
     * hidden still matches the text it came from (whole), and a second
     * pass keeps every hidden word of the first. */
    if (size <= 4096 && !strstr(z, "{{")) {
        char *h1 = replay_text_hide(z, NULL);
        char *h2 = h1 ? replay_text_hide(h1, NULL) : NULL;
        CHECK(h1 && h2);
        CHECK(replay_text_match(h1, z, NULL, true, NULL));
        CHECK(replay_text_match(h1, z, NULL, false, NULL));
        size_t m1 = 0, m2 = 0;
        for (const char *p = h1; (p = strstr(p, REPLAY_TEXT_HIDDEN)); p++)
            m1++;
        for (const char *p = h2; (p = strstr(p, REPLAY_TEXT_HIDDEN)); p++)
            m2++;
        CHECK(m2 >= m1);
        /* as a target's row (R7-6): hidden, its amounts marked, it
         * matches the row it came from */
        char *row = replay_row_mark(h1);
        CHECK(row && replay_row_eq(row, z, NULL));
        free(row);
        /* as a target's text with its identifiers' hashes (R8-7), keyed
         * (session 21): it still matches the text it came from under the
         * key, and with no key it matches only when no identifier was
         * hashed (fail closed: never any word) */
        static const unsigned char RAW[REPLAY_KEY_LEN] = {1, 2, 3, 4, 5, 6, 7, 8};
        replay_key key;
        replay_key_set(&key, RAW);
        char *h3 = replay_text_hide_ids(z, NULL, &key);
        char *row3 = h3 ? replay_row_mark(h3) : NULL;
        CHECK(row3 && replay_row_eq(row3, z, &key));
        CHECK(!strstr(h3, "{{*k:") || !replay_row_eq(row3, z, NULL));
        CHECK(!strstr(h3, "{{*:"));
        free(row3);
        free(h3);
        free(h1);
        free(h2);
    }
    free(z);
    replay_err err;
    replay_trail *t = replay_trail_parse((const char *)data, size, &err);
    if (!t) {
        size_t n = strnlen(err.msg, sizeof err.msg);
        CHECK(n < sizeof err.msg && n > 0);
        CHECK(strncmp(err.msg, "trail", 5) == 0);
        CHECK(json_utf8_valid((const uint8_t *)err.msg, n) || n == sizeof err.msg - 1);
        CHECK(err.code < 0);
        return 0;
    }
    for (size_t i = 0; i < t->nsteps; i++) {
        const replay_step *s = &t->steps[i];
        bool next_same = i + 1 < t->nsteps && t->steps[i + 1].n == s->n;
        CHECK(s->superseded == next_same);
        CHECK(s->op && s->args && s->n >= 1 && s->rev >= 1);
    }
    char *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;
    if (replay_trail_serialize(t, &a, &alen, &err) == 0) {
        replay_trail *u = replay_trail_parse(a, alen, &err);
        CHECK(u);
        CHECK(u->nsteps == t->nsteps);
        CHECK(replay_trail_serialize(u, &b, &blen, &err) == 0);
        CHECK(alen == blen && memcmp(a, b, alen) == 0);
        replay_trail_free(u);
    }
    free(a);
    free(b);
    replay_trail_free(t);
    return 0;
}
