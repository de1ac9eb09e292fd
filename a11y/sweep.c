/*
 * sweep.c — the pure parts of an accessibility sweep (issue 16, point 4;
 * docs/a11y.md "A sweep"): the TARGETS file read (JSON Lines, one target a
 * line, untrusted: explicit limits, strict fields, every error naming its
 * line), and the index across targets (index.json and a self-contained
 * index.html) made from each target's state and its a11y.json. No I/O:
 * cli/sweep.c runs the targets and writes the files.
 */
#include "a11y/a11y.h"

#include "base/base.h"
#include "json/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_RULES 5             /* per target in the index */
#define TOP_ALL 10              /* across targets */
#define RULES_MAX 512           /* distinct rules counted across targets */

static int fail(char *why, size_t cap, unsigned line, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (why && cap)
        snprintf(why, cap, "targets line %u: %s", line, msg);
    return -1;
}

/* An id: [A-Za-z0-9][A-Za-z0-9._-]* (a directory name that cannot climb). */
static bool id_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > A11Y_SWEEP_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
            return false;
    }
    return true;
}

/* A string field: no control byte, at most max bytes. */
static bool text_ok(const char *s, size_t n, size_t max)
{
    if (n == 0 || n > max || strlen(s) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

static const char *const FIELDS[] = {"url", "id", "identity", "trail"};

/* One target line (an object) into t. 0, or -1 with why. */
static int target_read(const json_val *o, unsigned line, a11y_target *t, char *why, size_t cap)
{
    if (!json_is(o, JSON_OBJECT))
        return fail(why, cap, line, "not a JSON object");
    char **dst[] = {&t->url, &t->id, &t->identity, &t->trail};
    static const size_t MAX[] = {A11Y_SWEEP_STR_MAX, A11Y_SWEEP_ID_MAX, 128, 1024};
    for (const json_val *m = json_first(o); m; m = json_next(m)) {
        size_t kl, vl;
        const char *k = json_key(m, &kl);
        size_t f = 0;
        while (f < 4 && !(strlen(FIELDS[f]) == kl && memcmp(FIELDS[f], k, kl) == 0))
            f++;
        if (f == 4)
            return fail(why, cap, line, "unknown field \"%.32s\" (fields: url, id, identity, "
                        "trail)", k);
        const char *v = json_str(m, &vl);
        if (!v)
            return fail(why, cap, line, "%s: not a string", FIELDS[f]);
        if (!text_ok(v, vl, MAX[f]))
            return fail(why, cap, line, "%s: empty, over %zu bytes or a control character",
                        FIELDS[f], MAX[f]);
        *dst[f] = base_strdup(v);
        if (!*dst[f])
            return fail(why, cap, line, "out of memory");
    }
    if (!t->url)
        return fail(why, cap, line, "no url");
    if (t->id && !id_ok(t->id))
        return fail(why, cap, line, "id: letters, digits, '.', '_', '-' (a letter or digit "
                    "first), at most %u", A11Y_SWEEP_ID_MAX);
    char origin[300];
    if (snap_url_origin(t->url, origin, sizeof origin))
        return fail(why, cap, line, "url: not an http(s) URL");
    t->line = line;
    return 0;
}

static int target_line(const char *s, size_t n, unsigned line, a11y_targets *out, char *why,
                       size_t cap)
{
    if (n > A11Y_SWEEP_LINE_MAX)
        return fail(why, cap, line, "over %zu bytes", A11Y_SWEEP_LINE_MAX);
    if (out->n == A11Y_SWEEP_TARGETS_MAX)
        return fail(why, cap, line, "more than %u targets", A11Y_SWEEP_TARGETS_MAX);
    json_opts po = {.max_size = A11Y_SWEEP_LINE_MAX, .max_depth = 4,
                    .flags = JSON_NO_DUPLICATES};
    json_err je;
    json_doc *d = json_parse(s, n, &po, &je);
    if (!d)
        return fail(why, cap, line, "not JSON (a field twice is an error too)");
    a11y_target *t = &out->v[out->n];
    memset(t, 0, sizeof *t);
    int rc = target_read(json_doc_root(d), line, t, why, cap);
    json_doc_free(d);
    out->n++;                   /* freed with the list, also on an error */
    if (rc == 0 && !t->id) {
        char id[16];
        snprintf(id, sizeof id, "t%03zu", out->n);
        t->id = base_strdup(id);
    }
    for (size_t i = 0; rc == 0 && i + 1 < out->n; i++)
        if (t->id && strcmp(out->v[i].id, t->id) == 0)
            rc = fail(why, cap, line, "id \"%s\" again (line %u)", t->id, out->v[i].line);
    return rc;
}

int a11y_targets_parse(const char *buf, size_t len, a11y_targets *out, char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (len > A11Y_SWEEP_FILE_MAX)
        return fail(why, cap, 0, "the file is over %zu bytes", A11Y_SWEEP_FILE_MAX);
    out->v = calloc(A11Y_SWEEP_TARGETS_MAX, sizeof *out->v);
    if (!out->v)
        return fail(why, cap, 0, "out of memory");
    unsigned line = 0;
    for (size_t i = 0; i < len;) {
        const char *s = buf + i, *nl = memchr(s, '\n', len - i);
        size_t n = nl ? (size_t)(nl - s) : len - i;
        i += n + (nl ? 1 : 0);
        line++;
        size_t k = 0;
        while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
            k++;
        if (k == n || s[k] == '#')
            continue;           /* blank, or a comment */
        if (target_line(s, n, line, out, why, cap)) {
            a11y_targets_free(out);
            return -1;
        }
    }
    if (out->n == 0) {
        a11y_targets_free(out);
        return fail(why, cap, line, "no target in the file");
    }
    return 0;
}

void a11y_targets_free(a11y_targets *t)
{
    for (size_t i = 0; t->v && i < t->n; i++) {
        free(t->v[i].id);
        free(t->v[i].url);
        free(t->v[i].identity);
        free(t->v[i].trail);
    }
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* ---- the index ---- */

static const char *const IMPACTS[] = {"critical", "serious", "moderate", "minor"};

/* A rule's count: in one target, or summed across targets. */
typedef struct {
    const char *id;             /* borrowed from a results document */
    int impact;                 /* index in IMPACTS, 4: none */
    size_t elements, targets;
} rule_n;

/* One row's counts, from its results. */
typedef struct {
    json_doc *d;
    size_t rules, elements, by[4], review_rules, review_elements, not_evaluated;
    rule_n top[TOP_RULES];
    size_t ntop;
} counts;

static int impact_of(const char *s)
{
    int i = 0;
    while (i < 4 && !(s && strcmp(s, IMPACTS[i]) == 0))
        i++;
    return i;
}

static int rule_cmp(const void *x, const void *y)
{
    const rule_n *a = x, *b = y;
    if (a->elements != b->elements)
        return a->elements > b->elements ? -1 : 1;
    if (a->impact != b->impact)
        return a->impact < b->impact ? -1 : 1;
    return strcmp(a->id, b->id);
}

/* Add rule (id, impact, elements) of one target to the list all. */
static void rule_add(rule_n *all, size_t *n, const char *id, int impact, size_t elements)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(all[i].id, id) == 0) {
            all[i].elements += elements;
            all[i].targets++;
            if (impact < all[i].impact)
                all[i].impact = impact;
            return;
        }
    if (*n < RULES_MAX)
        all[(*n)++] = (rule_n){id, impact, elements, 1};
}

static void count(const a11y_sweep_row *r, counts *c, rule_n *all, size_t *nall)
{
    memset(c, 0, sizeof *c);
    if (!r->results)
        return;
    json_opts po = {.max_size = A11Y_RESULTS_MAX, .max_depth = 256};
    c->d = json_parse(r->results, r->results_len, &po, NULL);
    const json_val *root = json_doc_root(c->d);
    rule_n mine[RULES_MAX];
    size_t nmine = 0;
    for (const json_val *v = json_first(json_get(root, "violations")); v; v = json_next(v)) {
        const char *id = json_get_str(v, "id");
        int imp = impact_of(json_get_str(v, "impact"));
        size_t nodes = json_len(json_get(v, "nodes"));
        c->rules++;
        c->elements += nodes;
        if (imp < 4)
            c->by[imp] += nodes;
        if (id && nmine < RULES_MAX)
            mine[nmine++] = (rule_n){id, imp, nodes, 1};
        if (id)
            rule_add(all, nall, id, imp, nodes);
    }
    for (const json_val *v = json_first(json_get(root, "incomplete")); v; v = json_next(v)) {
        c->review_rules++;
        c->review_elements += json_len(json_get(v, "nodes"));
    }
    for (const json_val *s = json_first(json_get(root, "notEvaluated")); s; s = json_next(s))
        c->not_evaluated += json_len(json_get(s, "rules"));
    qsort(mine, nmine, sizeof *mine, rule_cmp);
    c->ntop = nmine < TOP_RULES ? nmine : TOP_RULES;
    memcpy(c->top, mine, c->ntop * sizeof *mine);
}

static void impacts_w(json_w *w, size_t rules, size_t elements, const size_t by[4])
{
    json_w_obj_begin(w);
    json_w_key(w, "rules");
    json_w_uint(w, rules);
    json_w_key(w, "elements");
    json_w_uint(w, elements);
    for (int i = 0; i < 4; i++) {
        json_w_key(w, IMPACTS[i]);
        json_w_uint(w, by[i]);
    }
    json_w_obj_end(w);
}

static void review_w(json_w *w, size_t rules, size_t elements)
{
    json_w_obj_begin(w);
    json_w_key(w, "rules");
    json_w_uint(w, rules);
    json_w_key(w, "elements");
    json_w_uint(w, elements);
    json_w_obj_end(w);
}

static void rules_w(json_w *w, const rule_n *r, size_t n, bool targets)
{
    json_w_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        json_w_obj_begin(w);
        json_w_key(w, "id");
        json_w_str(w, r[i].id);
        json_w_key(w, "impact");
        json_w_str(w, r[i].impact < 4 ? IMPACTS[r[i].impact] : NULL);
        json_w_key(w, "elements");
        json_w_uint(w, r[i].elements);
        if (targets) {
            json_w_key(w, "targets");
            json_w_uint(w, r[i].targets);
        }
        json_w_obj_end(w);
    }
    json_w_arr_end(w);
}

static void row_w(json_w *w, const a11y_sweep_row *r, const counts *c)
{
    json_w_obj_begin(w);
    static const char *const K[] = {"id", "url", "identity", "trail", "state", "reason"};
    const char *v[] = {r->id, r->url, r->identity, r->trail, r->state, r->reason};
    for (size_t i = 0; i < 6; i++) {
        json_w_key(w, K[i]);
        json_w_str(w, v[i]);
    }
    json_w_key(w, "seconds");
    json_w_num(w, r->seconds);
    json_w_key(w, "scanned_url");
    json_w_str(w, json_get_str(json_doc_root(c->d), "url"));
    bool have = c->d != NULL;
    json_w_key(w, "violations");
    if (have)
        impacts_w(w, c->rules, c->elements, c->by);
    else
        json_w_null(w);
    json_w_key(w, "needs_review");
    if (have)
        review_w(w, c->review_rules, c->review_elements);
    else
        json_w_null(w);
    json_w_key(w, "not_evaluated");
    json_w_uint(w, c->not_evaluated);
    json_w_key(w, "top_rules");
    rules_w(w, c->top, c->ntop, false);
    json_w_key(w, "report");
    if (have) {
        char p[A11Y_SWEEP_ID_MAX + 16];
        snprintf(p, sizeof p, "%s/a11y.html", r->id);
        json_w_str(w, p);
    } else {
        json_w_null(w);
    }
    json_w_obj_end(w);
}

/* ---- index.html ---- */

static void esc(base_buf *b, const char *s)
{
    base_buf_put_html(b, s);
}

static const char STYLE[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:90em;padding:0 1em;"
    "color:#111}h1{font-size:1.6em}table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #999;padding:.2em .5em;text-align:left;vertical-align:top}"
    "td.n{text-align:right}.failed{background:#fde8e8}.partial{background:#fff4d6}"
    ".pending{background:#eee}code{background:#f3f3f3;word-break:break-all}";

static void html_row(base_buf *b, const a11y_sweep_row *r, const counts *c, size_t i)
{
    base_buf_printf(b, "<tr class=\"%s\"><td class=\"n\">%zu</td><td><b>", r->state, i + 1);
    esc(b, r->id);
    base_buf_puts(b, "</b><br><code>");
    esc(b, r->url);
    base_buf_puts(b, "</code>");
    if (r->identity) {
        base_buf_puts(b, "<br>identity ");
        esc(b, r->identity);
    }
    if (r->trail) {
        base_buf_puts(b, "<br>trail <code>");
        esc(b, r->trail);
        base_buf_puts(b, "</code>");
    }
    base_buf_puts(b, "</td><td>");
    esc(b, r->state);
    if (r->reason) {
        base_buf_puts(b, ": ");
        esc(b, r->reason);
    }
    base_buf_puts(b, "</td>");
    if (c->d) {
        for (int k = 0; k < 4; k++)
            base_buf_printf(b, "<td class=\"n\">%zu</td>", c->by[k]);
        base_buf_printf(b, "<td class=\"n\">%zu / %zu</td><td class=\"n\">%zu / %zu</td>"
                        "<td class=\"n\">%zu</td><td>", c->rules, c->elements,
                        c->review_rules, c->review_elements, c->not_evaluated);
        for (size_t k = 0; k < c->ntop; k++) {
            base_buf_puts(b, k ? ", " : "");
            esc(b, c->top[k].id);
            base_buf_printf(b, " (%zu)", c->top[k].elements);
        }
        base_buf_puts(b, "</td>");
    } else {
        base_buf_puts(b, "<td colspan=\"8\">no report</td>");
    }
    base_buf_printf(b, "<td class=\"n\">%.1f</td><td>", r->seconds);
    if (c->d) {
        base_buf_puts(b, "<a href=\"");
        esc(b, r->id);
        base_buf_puts(b, "/a11y.html\">report</a>");
    }
    base_buf_puts(b, "</td></tr>\n");
}

static void html_head(base_buf *b, const size_t st[4], size_t n, const size_t by[4],
                      size_t elements)
{
    base_buf_printf(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
                    " style-src 'unsafe-inline'\"><title>Accessibility sweep</title>"
                    "<style>%s</style></head><body><h1>Accessibility sweep</h1>"
                    "<p>%zu targets: %zu done, %zu partial, %zu failed, %zu not run. "
                    "Violations (elements): critical %zu, serious %zu, moderate %zu, minor %zu;"
                    " %zu in all. Each target's report is its own page (axe's JSON beside it)."
                    "</p>", STYLE, n, st[0], st[1], st[2], st[3], by[0], by[1], by[2], by[3],
                    elements);
}

static void html_top(base_buf *b, const rule_n *all, size_t nall)
{
    base_buf_puts(b, "<h2>Top rules across targets</h2><table><tr><th>rule</th><th>impact"
                  "</th><th>targets</th><th>elements</th></tr>\n");
    for (size_t i = 0; i < nall && i < TOP_ALL; i++) {
        base_buf_puts(b, "<tr><td>");
        esc(b, all[i].id);
        base_buf_printf(b, "</td><td>%s</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>"
                        "</tr>\n", all[i].impact < 4 ? IMPACTS[all[i].impact] : "",
                        all[i].targets, all[i].elements);
    }
    base_buf_puts(b, "</table><h2>Targets</h2><table><tr><th>#</th><th>target</th>"
                  "<th>state</th><th>critical</th><th>serious</th><th>moderate</th>"
                  "<th>minor</th><th>violations: rules / elements</th><th>needs review: "
                  "rules / elements</th><th>not evaluated</th><th>top rules (elements)</th>"
                  "<th>time (s)</th><th>report</th></tr>\n");
}

static size_t state_of(const char *s)
{
    static const char *const ST[] = {"done", "partial", "failed"};
    size_t i = 0;
    while (i < 3 && !(s && strcmp(s, ST[i]) == 0))
        i++;
    return i;
}

int a11y_sweep_index(const a11y_sweep_row *rows, size_t n, char **json, char **html)
{
    *json = *html = NULL;
    counts *c = calloc(n ? n : 1, sizeof *c);
    rule_n *all = calloc(RULES_MAX, sizeof *all);
    size_t nall = 0, st[4] = {0}, by[4] = {0}, elements = 0, rules_review = 0, el_review = 0;
    for (size_t i = 0; c && all && i < n; i++) {
        count(&rows[i], &c[i], all, &nall);
        st[state_of(rows[i].state)]++;
        for (int k = 0; k < 4; k++)
            by[k] += c[i].by[k];
        elements += c[i].elements;
        rules_review += c[i].review_rules;
        el_review += c[i].review_elements;
    }
    if (c && all)
        qsort(all, nall, sizeof *all, rule_cmp);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "cdpgate_sweep");
    json_w_int(&w, 1);
    static const char *const SK[] = {"done", "partial", "failed", "pending"};
    json_w_key(&w, "targets");
    json_w_uint(&w, n);
    for (int k = 0; k < 4; k++) {
        json_w_key(&w, SK[k]);
        json_w_uint(&w, st[k]);
    }
    json_w_key(&w, "violations");
    impacts_w(&w, nall, elements, by);
    json_w_key(&w, "needs_review");
    review_w(&w, rules_review, el_review);
    json_w_key(&w, "top_rules");
    rules_w(&w, all, nall < TOP_ALL ? nall : TOP_ALL, true);
    base_buf b = {0};
    html_head(&b, st, n, by, elements);
    html_top(&b, all, nall);
    json_w_key(&w, "rows");
    json_w_arr_begin(&w);
    for (size_t i = 0; c && all && i < n; i++) {
        row_w(&w, &rows[i], &c[i]);
        html_row(&b, &rows[i], &c[i], i);
    }
    json_w_arr_end(&w);
    json_w_obj_end(&w);
    base_buf_puts(&b, "</table></body></html>\n");
    for (size_t i = 0; c && i < n; i++)
        json_doc_free(c[i].d);
    bool ok = c && all && !b.oom && !json_w_error(&w);
    free(c);
    free(all);
    *json = ok ? json_w_take(&w, NULL) : NULL;
    *html = ok ? base_buf_take(&b, NULL) : NULL;
    json_w_free(&w);
    base_buf_free(&b);
    if (*json && *html)
        return 0;
    free(*json);
    free(*html);
    *json = *html = NULL;
    return -1;
}
