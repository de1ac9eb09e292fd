/*
 * html.c — the self-contained HTML report of an axe scan (no network: no
 * script, no external style, image or font; crops are data: URIs). Every
 * text from the results is escaped; the page under test cannot put markup
 * into the report. Grouped by WCAG success criterion: a rule is listed
 * under each criterion its tags name, and rules naming none under "Other
 * rules (best practices)". "Needs review" (axe's incomplete) and "Not
 * evaluated" (rules a timeout or a failed frame left out) are sections of
 * their own, never counted as violations or passes.
 */
#include "a11y/a11y.h"

#include "base/base.h"
#include "json/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_MAX 128              /* distinct criteria listed */
#define NODES_SHOWN 50          /* elements shown per rule */

static void esc(base_buf *b, const char *s)
{
    base_buf_put_html(b, s);
}

static void esc_json(base_buf *b, const json_val *v)
{
    char *s = json_write(v, NULL);
    esc(b, s);
    free(s);
}

static const char STYLE[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;"
    "color:#111}h1{font-size:1.6em}h2{border-bottom:2px solid #333;margin-top:2em}"
    "h3{margin-top:1.6em}table{border-collapse:collapse}td,th{border:1px solid #999;"
    "padding:.2em .6em;text-align:left}.rule{border-left:4px solid #b00;padding-left:.8em;"
    "margin:1em 0}.review .rule{border-color:#b70}.node{margin:.6em 0 .6em 1em}"
    "code,pre{background:#f3f3f3;white-space:pre-wrap;word-break:break-all}"
    "img{max-width:40em;border:1px solid #999;display:block;margin:.3em 0}"
    ".impact{font-weight:bold}.note{color:#555;font-style:italic}";

/* The criteria a rule's tags name ("1.1.1"), into sc[] (n of them). */
static size_t rule_scs(const json_val *rule, char (*sc)[16], size_t cap)
{
    size_t n = 0;
    for (const json_val *t = json_first(json_get(rule, "tags")); t && n < cap; t = json_next(t))
        if (a11y_wcag_sc(json_str(t, NULL), sc[n], sizeof sc[n]))
            n++;
    return n;
}

static void node_put(base_buf *b, const json_val *node, const a11y_crop *c)
{
    base_buf_puts(b, "<div class=\"node\"><code>");
    esc_json(b, json_get(node, "target"));
    base_buf_puts(b, "</code>");
    const char *imp = json_get_str(node, "impact");
    if (imp) {
        base_buf_puts(b, " <span class=\"impact\">");
        esc(b, imp);
        base_buf_puts(b, "</span>");
    }
    base_buf_puts(b, "<pre>");
    esc(b, json_get_str(node, "html"));
    base_buf_puts(b, "</pre>");
    const char *fix = json_get_str(node, "failureSummary");
    if (fix) {
        base_buf_puts(b, "<p>How to fix: ");
        esc(b, fix);
        base_buf_puts(b, "</p>");
    }
    if (c && c->png && c->len) {
        bool jpeg = c->len > 2 && c->png[0] == 0xff && c->png[1] == 0xd8;
        char *b64 = malloc(BASE_B64_ENCLEN(c->len) + 1);
        if (b64) {
            size_t n = base_b64_encode(c->png, c->len, b64);
            b64[n] = 0;
            base_buf_printf(b, "<img alt=\"the element\" src=\"data:image/%s;base64,",
                            jpeg ? "jpeg" : "png");
            base_buf_puts(b, b64);
            base_buf_puts(b, "\">");
            if (c->cut)
                base_buf_puts(b, "<p class=\"note\">The element is larger than the window: "
                              "its top left part.</p>");
            free(b64);
        }
    } else if (c && c->note) {
        base_buf_puts(b, "<p class=\"note\">No screenshot: ");
        esc(b, c->note);
        base_buf_puts(b, "</p>");
    }
    base_buf_puts(b, "</div>");
}

/* Rule ri of list (violations when crop is set) with its elements. */
static void rule_put(base_buf *b, const json_val *rule, size_t ri, a11y_crop_fn crop,
                     void *ud)
{
    const json_val *nodes = json_get(rule, "nodes");
    base_buf_puts(b, "<div class=\"rule\"><h4>");
    esc(b, json_get_str(rule, "id"));
    base_buf_puts(b, ": ");
    esc(b, json_get_str(rule, "help"));
    base_buf_printf(b, "</h4><p><span class=\"impact\">");
    esc(b, json_get_str(rule, "impact") ? json_get_str(rule, "impact") : "no impact given");
    base_buf_printf(b, "</span>, %zu element%s. ", json_len(nodes),
                    json_len(nodes) == 1 ? "" : "s");
    esc(b, json_get_str(rule, "description"));
    base_buf_puts(b, " More: ");
    esc(b, json_get_str(rule, "helpUrl"));
    base_buf_puts(b, "</p>");
    size_t k = 0;
    for (const json_val *n = json_first(nodes); n && k < NODES_SHOWN; n = json_next(n), k++)
        node_put(b, n, crop ? crop(ud, ri, k) : NULL);
    if (json_len(nodes) > NODES_SHOWN)
        base_buf_printf(b, "<p class=\"note\">%zu more in the JSON report.</p>",
                        json_len(nodes) - NODES_SHOWN);
    base_buf_puts(b, "</div>");
}

/* Every rule of list grouped by criterion (sorted as strings of digits). */
static int sc_cmp(const void *x, const void *y)
{
    const char *a = x, *b = y;
    for (;;) {
        long na = strtol(a, NULL, 10), nb = strtol(b, NULL, 10);
        if (na != nb)
            return na < nb ? -1 : 1;
        a = strchr(a, '.');
        b = strchr(b, '.');
        if (!a || !b)
            return a ? 1 : b ? -1 : 0;
        a++;
        b++;
    }
}

static void grouped(base_buf *b, const json_val *list, a11y_crop_fn crop, void *ud)
{
    char scs[SC_MAX][16];
    size_t n = 0;
    for (const json_val *r = json_first(list); r; r = json_next(r)) {
        char sc[16][16];
        size_t k = rule_scs(r, sc, 16);
        for (size_t i = 0; i < k; i++) {
            bool have = false;
            for (size_t j = 0; j < n && !have; j++)
                have = strcmp(scs[j], sc[i]) == 0;
            if (!have && n < SC_MAX)
                memcpy(scs[n++], sc[i], 16);
        }
    }
    qsort(scs, n, sizeof scs[0], sc_cmp);
    for (size_t j = 0; j <= n; j++) {
        bool head = false;
        size_t ri = 0;
        for (const json_val *r = json_first(list); r; r = json_next(r), ri++) {
            char sc[16][16];
            size_t k = rule_scs(r, sc, 16);
            bool in = j == n ? k == 0 : false;
            for (size_t i = 0; i < k && j < n; i++)
                in |= strcmp(sc[i], scs[j]) == 0;
            if (!in)
                continue;
            if (!head) {
                base_buf_puts(b, "<h3>");
                if (j < n)
                    base_buf_printf(b, "WCAG %s", scs[j]);
                else
                    base_buf_puts(b, "Other rules (best practices)");
                base_buf_puts(b, "</h3>");
                head = true;
            }
            rule_put(b, r, ri, crop, ud);
        }
    }
    if (!json_len(list))
        base_buf_puts(b, "<p>None.</p>");
}

static size_t nodes_in(const json_val *list)
{
    size_t n = 0;
    for (const json_val *r = json_first(list); r; r = json_next(r))
        n += json_len(json_get(r, "nodes"));
    return n;
}

static void summary_put(base_buf *b, const json_val *root, const json_val *skipped)
{
    static const char *const IMPACTS[] = {"critical", "serious", "moderate", "minor"};
    const json_val *v = json_get(root, "violations");
    base_buf_puts(b, "<h2>Summary</h2><table><tr><th>impact</th><th>rules</th>"
                  "<th>elements</th></tr>");
    for (size_t i = 0; i < 4; i++) {
        size_t rules = 0, nodes = 0;
        for (const json_val *r = json_first(v); r; r = json_next(r)) {
            const char *imp = json_get_str(r, "impact");
            if (imp && strcmp(imp, IMPACTS[i]) == 0) {
                rules++;
                nodes += json_len(json_get(r, "nodes"));
            }
        }
        base_buf_printf(b, "<tr><td>%s</td><td>%zu</td><td>%zu</td></tr>", IMPACTS[i], rules,
                        nodes);
    }
    base_buf_printf(b, "</table><p>Violations: %zu rules, %zu elements. Needs review: "
                    "%zu rules, %zu elements. Passed: %zu rules. Not evaluated: %zu "
                    "entries (below).</p>", json_len(v), nodes_in(v),
                    json_len(json_get(root, "incomplete")),
                    nodes_in(json_get(root, "incomplete")), json_len(json_get(root, "passes")),
                    json_len(skipped));
}

static void skipped_put(base_buf *b, const json_val *skipped)
{
    base_buf_puts(b, "<h2>Not evaluated</h2><p>Rules a timeout or a frame that could not "
                  "be scanned left out: neither passed nor failed.</p>");
    if (!json_len(skipped)) {
        base_buf_puts(b, "<p>None: every rule ran in every frame.</p>");
        return;
    }
    base_buf_puts(b, "<ul>");
    for (const json_val *s = json_first(skipped); s; s = json_next(s)) {
        base_buf_puts(b, "<li><code>");
        esc(b, json_get_str(s, "frame"));
        base_buf_puts(b, "</code>: ");
        esc(b, json_get_str(s, "reason"));
        base_buf_puts(b, "; rules: ");
        size_t k = 0;
        for (const json_val *r = json_first(json_get(s, "rules")); r; r = json_next(r), k++) {
            base_buf_puts(b, k ? ", " : "");
            esc(b, json_str(r, NULL));
        }
        base_buf_puts(b, "</li>");
    }
    base_buf_puts(b, "</ul>");
}

char *a11y_html_report(const char *results, const char *skipped, a11y_crop_fn crop,
                       void *ud)
{
    json_opts po = {0};
    po.max_size = A11Y_RESULTS_MAX;
    po.max_depth = 256;
    json_doc *d = results ? json_parse(results, strlen(results), &po, NULL) : NULL;
    json_doc *sd = skipped ? json_parse(skipped, strlen(skipped), &po, NULL) : NULL;
    const json_val *root = json_doc_root(d);
    if (!json_is(root, JSON_OBJECT)) {
        json_doc_free(d);
        json_doc_free(sd);
        return NULL;
    }
    const json_val *sk = json_doc_root(sd);
    base_buf b = {0};
    base_buf_puts(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                  "img-src data:; style-src 'unsafe-inline'\"><title>Accessibility report: ");
    esc(&b, json_get_str(root, "url"));
    base_buf_printf(&b, "</title><style>%s</style></head><body><h1>Accessibility report</h1>"
                    "<p>Page: <code>", STYLE);
    esc(&b, json_get_str(root, "url"));
    base_buf_puts(&b, "</code><br>Scanned: ");
    esc(&b, json_get_str(root, "timestamp"));
    base_buf_puts(&b, " with axe-core ");
    esc(&b, json_get_str(json_get(root, "testEngine"), "version"));
    const json_val *af = json_get(root, "axeFile");
    if (af) {
        const char *rel = json_get_str(af, "release");
        base_buf_puts(&b, rel && *rel ? " (the published release " : " (not a published "
                      "release: the host's own file, named by ");
        esc(&b, rel && *rel ? rel : json_get_str(af, "from"));
        base_buf_puts(&b, ", SHA-256 ");
        esc(&b, json_get_str(af, "sha256"));
        base_buf_puts(&b, ")");
    }
    base_buf_puts(&b, " (by cdpgate), tags: ");
    esc_json(&b, json_path(root, "toolOptions.runOnly.values"));
    base_buf_puts(&b, "</p>");
    summary_put(&b, root, sk);
    base_buf_puts(&b, "<h2>Violations by WCAG success criterion</h2>");
    grouped(&b, json_get(root, "violations"), crop, ud);
    base_buf_puts(&b, "<section class=\"review\"><h2>Needs review</h2><p>axe could not "
                  "decide these: a person must check them. They are not violations.</p>");
    grouped(&b, json_get(root, "incomplete"), NULL, NULL);
    base_buf_puts(&b, "</section>");
    skipped_put(&b, sk);
    base_buf_puts(&b, "</body></html>\n");
    json_doc_free(d);
    json_doc_free(sd);
    return base_buf_take(&b, NULL);
}
