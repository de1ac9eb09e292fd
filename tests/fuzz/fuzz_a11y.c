/*
 * fuzz_a11y.c — libFuzzer target for what the accessibility scan reads of
 * axe's results, which are page data (a11y/a11y.h): the scrub of html
 * snippets, the results' scrub, the HTML report, the WCAG criterion of a
 * tag and the tags option (also replayed over the checked-in corpus by
 * tests/fuzz/replay.c in `make test`).
 *
 * Invariants: nothing crashes or leaks; a scrubbed snippet never holds a
 * value the input gave a password <input> (planted here: a marker the input
 * itself does not hold, so the marker's presence in the output can only be
 * the leaked value: the input's own text is kept as text); the report never
 * holds a raw '<' from the input (every text is escaped: "<script" never
 * appears); with a text function that takes out a marker (a session
 * value), no string or key of the scrubbed JSON holds it: the output
 * never holds the marker, however the input escaped it; a marker planted
 * as a ?token= value (a link's, a style's url(), a meta refresh's, a
 * title's, in an element's text, written with character references)
 * never reaches the scrubbed snippet (the value rule).
 */
#include "a11y/a11y.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

/* Case-blind strstr: the scrubber keeps the case of the text it keeps. */
static int has_ci(const char *h, const char *n)
{
    size_t k = strlen(n);
    for (; *h; h++) {
        size_t i = 0;
        while (i < k && h[i] && (h[i] | 0x20) == (n[i] | 0x20))
            i++;
        if (i == k)
            return 1;
    }
    return 0;
}

#define SESSION_MARK "zq7-sess-mark"

/* The text function: every SESSION_MARK out (as snap_text_shown takes out
 * a session value). */
static char *mark_out(void *ud, const char *s)
{
    (void)ud;
    size_t n = strlen(s), k = strlen(SESSION_MARK);
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        if (strncmp(s + i, SESSION_MARK, k) == 0) {
            o[j++] = '#';
            i += k;
        } else {
            o[j++] = s[i++];
        }
    }
    o[j] = 0;
    return o;
}

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
    /* The first marker the input does not hold (the input's own text
     * stays in the output as text, so a marker it holds proves nothing). */
    static const char *const MARK[] = { "pw-planted", "qx7-hidden", "zj4-secret" };
    const char *mark = NULL;
    for (size_t i = 0; i < sizeof MARK / sizeof *MARK && !mark; i++)
        if (!has_ci(s, MARK[i]))
            mark = MARK[i];
    if (in && mark) {
        static const char P[] = "<input type=password value=\"";
        size_t m = strlen(mark);
        memcpy(in, P, sizeof P - 1);
        memcpy(in + sizeof P - 1, mark, m);
        memcpy(in + sizeof P - 1 + m, s, n + 1);
        h = a11y_html_scrub(in);
        CHECK(!h || !has_ci(h, mark));
        free(h);
        /* A token in a URL (session 18: URLs in attributes by the URL
         * rule; session 20, R8-5: in every attribute, a style's url(), a
         * meta refresh, a title, an element's text, written with
         * character references). */
        static const char *const A[] = {
            "<a href=\"/r?token=",
            "<a style=\"background:url(&quot;/img?X-Amz-Signature=",
            "<meta http-equiv=refresh content=\"0;url=/reset?token=",
            "<a title='open https://a.test/r?token=",
            "<p>see https://a.test/r?token=",
            "<a aria-label=\"https&#58;&#x2F;&#x2f;a.test/r&quest;token&equals;",
        };
        for (size_t i = 0; i < sizeof A / sizeof *A; i++) {
            size_t a = strlen(A[i]);
            char *in2 = malloc(a + m + n + 1);
            if (!in2)
                break;
            memcpy(in2, A[i], a);
            memcpy(in2 + a, mark, m);
            memcpy(in2 + a + m, s, n + 1);
            h = a11y_html_scrub(in2);
            CHECK(!h || !has_ci(h, mark));
            free(h);
            free(in2);
        }
    }
    free(in);
    /* Results. */
    char *r = a11y_results_scrub(s, size);
    char *rw = a11y_results_scrub_with(s, size, mark_out, NULL);
    CHECK(!rw || !strstr(rw, SESSION_MARK));
    CHECK(!rw == !r);
    free(rw);
    rw = a11y_json_scrub(s, size, mark_out, NULL);
    CHECK(!rw || !strstr(rw, SESSION_MARK));
    CHECK(!r || rw);
    free(rw);
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
