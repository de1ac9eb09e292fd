/*
 * fuzz_sweep.c — libFuzzer target for the sweep's readers of outside
 * input (a11y/a11y.h, a11y/sweep.c): the TARGETS file (a11y_targets_parse)
 * and the index made from targets' results files (a11y_sweep_index reads
 * each a11y.json, page data). Also replayed over the checked-in corpus by
 * tests/fuzz/replay.c in `make test`.
 *
 * Invariants: nothing crashes or leaks; a parsed target has an id that
 * cannot climb out of the sweep's directory (no '/', not "." or "..") and
 * an http(s) URL (the scheme in any case: "httP:" is http); the index's HTML never holds a raw "<script" (every text
 * from the input is escaped) and its JSON parses.
 */
#include "a11y/a11y.h"
#include "json/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void index_of(const a11y_targets *t, const char *results, size_t len)
{
    a11y_sweep_row rows[4];
    size_t n = t && t->n < 4 ? t->n : 4;
    static const char *const ST[] = {"done", "partial", "failed", "pending"};
    for (size_t i = 0; i < 4; i++) {
        const a11y_target *x = t && i < t->n ? &t->v[i] : NULL;
        rows[i] = (a11y_sweep_row){x ? x->id : "t<script>", x ? x->url : results,
                                   x ? x->identity : NULL, x ? x->trail : NULL, ST[i],
                                   i == 2 ? results : NULL, (double)i, results, len};
    }
    if (!t)
        n = 4;
    char *js = NULL, *html = NULL;
    if (a11y_sweep_index(rows, n, &js, &html) == 0) {
        CHECK(!strstr(html, "<script"));
        json_doc *d = json_parse(js, strlen(js), NULL, NULL);
        CHECK(d);
        json_doc_free(d);
    }
    free(js);
    free(html);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > A11Y_SWEEP_FILE_MAX + 16)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    a11y_targets t;
    char why[300];
    if (a11y_targets_parse(s, size, &t, why, sizeof why) == 0) {
        CHECK(t.n > 0);
        for (size_t i = 0; i < t.n; i++) {
            CHECK(t.v[i].id && !strchr(t.v[i].id, '/') && t.v[i].id[0] != '.');
            const char *u = t.v[i].url;     /* a scheme's case does not matter */
            CHECK(u[0] && (u[0] | 0x20) == 'h' && (u[1] | 0x20) == 't' &&
                  (u[2] | 0x20) == 't' && (u[3] | 0x20) == 'p');
        }
        index_of(&t, s, size);
        a11y_targets_free(&t);
    } else {
        CHECK(strncmp(why, "targets line ", 13) == 0);
        CHECK(t.n == 0 && !t.v);
    }
    /* The input as a target's results (a11y.json). */
    index_of(NULL, s, size);
    free(s);
    return 0;
}
