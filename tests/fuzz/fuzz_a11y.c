/*
 * fuzz_a11y.c — libFuzzer target for what the accessibility scan reads of
 * axe's results, which are page data (a11y/a11y.h): the scrub of html
 * snippets, the results' scrub, the HTML report, the WCAG criterion of a
 * tag and the tags option (also replayed over the checked-in corpus by
 * tests/fuzz/replay.c in `make test`).
 *
 * Invariants: nothing crashes or leaks; a scrubbed snippet never holds a
 * value the input gave a password <input> (planted here: "pw-planted"); the
 * report never holds a raw '<' from the input (every text is escaped:
 * "<script" never appears).
 */
#include "a11y/a11y.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 200000)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    /* A snippet: the input, then as an input's value. */
    char *h = a11y_html_scrub(s);
    free(h);
    size_t n = strlen(s);
    char *in = malloc(n + 64);
    if (in) {
        static const char P[] = "<input type=password value=\"pw-planted";
        memcpy(in, P, sizeof P - 1);
        memcpy(in + sizeof P - 1, s, n + 1);
        h = a11y_html_scrub(in);
        CHECK(!h || !strstr(h, "pw-planted"));
        free(h);
        free(in);
    }
    /* Results. */
    char *r = a11y_results_scrub(s, size);
    char *html = a11y_html_report(s, s, NULL, NULL);
    CHECK(!html || !strstr(html, "<script"));
    free(html);
    free(r);
    char sc[16], *tags = NULL, why[200];
    a11y_wcag_sc(s, sc, sizeof sc);
    if (a11y_tags_json(s, &tags, why, sizeof why) == 0)
        CHECK(tags && tags[0] == '[');
    free(tags);
    free(s);
    return 0;
}
