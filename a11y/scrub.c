/*
 * scrub.c — field values out of axe's html snippets, and the WCAG success
 * criterion of a tag. axe's results are page data: any input is safe here
 * (bounded by A11Y_RESULTS_MAX and the JSON reader's depth; fuzzed by
 * tests/fuzz/fuzz_a11y.c).
 *
 * What is scrubbed, in each "html" string anywhere in the results (a
 * node's snippet, its related nodes'): the value attribute of every
 * <input> but those whose value is a label (type submit, button, reset,
 * image, checkbox, radio, range, color), whatever else the element says
 * about itself (a password field typed "text", a one-time code, a card
 * number are all inputs), and the text of every <textarea>. A snippet axe
 * cut inside a value loses the rest of it. With a text function (the
 * *_with and a11y_json_scrub forms), every string and key of the document
 * then goes through it too (a11y_scan's: the session values out).
 */
#include "a11y/a11y.h"

#include "base/base.h"
#include "json/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MASK "[scrubbed]"
#define ATTRS_MAX 64

typedef struct {
    const char *name;
    size_t nlen;
    const char *val;            /* NULL: no value */
    size_t vlen;
    char quote;                 /* '"', '\'' or 0 */
    bool closed;                /* the quote was closed */
} attr;

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* Parse the attributes of the tag whose name ends at p; returns where the
 * tag ends (after '>' or at the end of the text). */
static const char *tag_attrs(const char *p, attr *at, size_t *n)
{
    *n = 0;
    for (;;) {
        while (is_space(*p) || *p == '/')
            p++;
        if (!*p || *p == '>')
            return *p ? p + 1 : p;
        attr a = {p, 0, NULL, 0, 0, true};
        while (*p && !is_space(*p) && *p != '=' && *p != '>' && *p != '/')
            p++;
        a.nlen = (size_t)(p - a.name);
        if (a.nlen == 0) {
            p++;    /* a stray character: skip it */
            continue;
        }
        const char *q = p;
        while (is_space(*q))
            q++;
        if (*q == '=') {
            q++;
            while (is_space(*q))
                q++;
            if (*q == '"' || *q == '\'') {
                a.quote = *q++;
                a.val = q;
                while (*q && *q != a.quote)
                    q++;
                a.vlen = (size_t)(q - a.val);
                a.closed = *q != 0;
                p = *q ? q + 1 : q;
            } else {
                a.val = q;
                while (*q && !is_space(*q) && *q != '>')
                    q++;
                a.vlen = (size_t)(q - a.val);
                p = q;
            }
        }
        if (*n < ATTRS_MAX)
            at[(*n)++] = a;
    }
}

static bool named(const attr *a, const char *name)
{
    return a->nlen == strlen(name) && strncasecmp(a->name, name, a->nlen) == 0;
}

/* Whether an input of this type shows its value as a label. */
static bool type_keeps(const attr *at, size_t n)
{
    static const char *const KEEP[] = {"submit", "button", "reset", "image", "checkbox",
                                       "radio", "range", "color"};
    for (size_t i = 0; i < n; i++) {
        if (!named(&at[i], "type") || !at[i].val)
            continue;
        for (size_t k = 0; k < sizeof KEEP / sizeof KEEP[0]; k++)
            if (at[i].vlen == strlen(KEEP[k]) && strncasecmp(at[i].val, KEEP[k], at[i].vlen) == 0)
                return true;
        return false;
    }
    return false;   /* no type: a text field */
}

/* Write the tag from its '<' (start) with its attributes, a value masked
 * when mask_value. */
static void tag_put(base_buf *b, const char *start, const char *name_end, const attr *at,
                    size_t n, bool mask_value, const char *end)
{
    base_buf_put(b, start, (size_t)(name_end - start));
    for (size_t i = 0; i < n; i++) {
        base_buf_putc(b, ' ');
        base_buf_put(b, at[i].name, at[i].nlen);
        if (!at[i].val)
            continue;
        base_buf_putc(b, '=');
        char q = at[i].quote ? at[i].quote : '"';
        base_buf_putc(b, q);
        if (mask_value && named(&at[i], "value"))
            base_buf_puts(b, MASK);
        else
            base_buf_put(b, at[i].val, at[i].vlen);
        if (at[i].closed || !at[i].quote)
            base_buf_putc(b, q);
    }
    if (end > start && end[-1] == '>')
        base_buf_putc(b, '>');
}

char *a11y_html_scrub(const char *html)
{
    base_buf b = {0};
    const char *p = html ? html : "";
    while (*p) {
        const char *lt = strchr(p, '<');
        if (!lt) {
            base_buf_puts(&b, p);
            break;
        }
        base_buf_put(&b, p, (size_t)(lt - p));
        const char *q = lt + 1;
        while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9'))
            q++;
        size_t tl = (size_t)(q - lt - 1);
        if (tl == 0) {
            base_buf_putc(&b, '<');
            p = lt + 1;
            continue;
        }
        attr at[ATTRS_MAX];
        size_t n;
        const char *end = tag_attrs(q, at, &n);
        bool input = tl == 5 && strncasecmp(lt + 1, "input", 5) == 0;
        bool textarea = tl == 8 && strncasecmp(lt + 1, "textarea", 8) == 0;
        tag_put(&b, lt, q, at, n, input && !type_keeps(at, n), end);
        p = end;
        if (textarea && end[-1] == '>') {
            /* Its text up to </textarea (or the end) is its value. */
            const char *close = p;
            while (*close && !(close[0] == '<' && close[1] == '/' &&
                               strncasecmp(close + 2, "textarea", 8) == 0))
                close++;
            if (close > p)
                base_buf_puts(&b, MASK);
            p = close;
        }
    }
    return base_buf_take(&b, NULL);
}

/* A string through fn (when given) into w; fn's failure writes MASK. */
static void str_put(json_w *w, const char *s, a11y_text_fn fn, void *ud, bool key)
{
    char *t = fn ? fn(ud, s) : NULL;
    const char *out = fn ? (t ? t : MASK) : s;
    if (key)
        json_w_key(w, out);
    else
        json_w_str(w, out);
    free(t);
}

/* Copy v into w with every "html" string scrubbed, and every string and
 * key through fn. */
static void scrub_val(json_w *w, const json_val *v, a11y_text_fn fn, void *ud)
{
    if (json_is(v, JSON_OBJECT)) {
        json_w_obj_begin(w);
        for (const json_val *m = json_first(v); m; m = json_next(m)) {
            size_t kl;
            const char *k = json_key(m, &kl);
            if (fn)
                str_put(w, k, fn, ud, true);
            else
                json_w_keyn(w, k, kl);
            if (kl == 4 && memcmp(k, "html", 4) == 0 && json_is(m, JSON_STRING)) {
                char *s = a11y_html_scrub(json_str(m, NULL));
                str_put(w, s ? s : MASK, fn, ud, false);
                free(s);
            } else {
                scrub_val(w, m, fn, ud);
            }
        }
        json_w_obj_end(w);
    } else if (json_is(v, JSON_ARRAY)) {
        json_w_arr_begin(w);
        for (const json_val *m = json_first(v); m; m = json_next(m))
            scrub_val(w, m, fn, ud);
        json_w_arr_end(w);
    } else if (fn && json_is(v, JSON_STRING)) {
        str_put(w, json_str(v, NULL), fn, ud, false);
    } else {
        json_w_val(w, v);
    }
}

static char *scrub_doc(const char *json, size_t len, bool object, a11y_text_fn fn, void *ud)
{
    json_opts po = {0};
    po.max_size = A11Y_RESULTS_MAX;
    po.max_depth = 256;
    json_doc *d = json ? json_parse(json, len, &po, NULL) : NULL;
    const json_val *root = json_doc_root(d);
    if (!root || (object && !json_is(root, JSON_OBJECT))) {
        json_doc_free(d);
        return NULL;
    }
    json_w w;
    json_w_init(&w);
    scrub_val(&w, root, fn, ud);
    json_doc_free(d);
    return json_w_take(&w, NULL);
}

char *a11y_results_scrub(const char *json, size_t len)
{
    return scrub_doc(json, len, true, NULL, NULL);
}

char *a11y_results_scrub_with(const char *json, size_t len, a11y_text_fn fn, void *ud)
{
    return scrub_doc(json, len, true, fn, ud);
}

char *a11y_json_scrub(const char *json, size_t len, a11y_text_fn fn, void *ud)
{
    return scrub_doc(json, len, false, fn, ud);
}

bool a11y_wcag_sc(const char *tag, char *out, size_t cap)
{
    if (!tag || strncmp(tag, "wcag", 4) != 0)
        return false;
    const char *d = tag + 4;
    size_t n = strlen(d);
    if (n < 3 || n > 4 || strspn(d, "0123456789") != n)
        return false;
    snprintf(out, cap, "%c.%c.%s", d[0], d[1], d + 2);
    return true;
}
