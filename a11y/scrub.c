/*
 * scrub.c — field values out of axe's html snippets, and the WCAG success
 * criterion of a tag. axe's results are page data: any input is safe here
 * (bounded by A11Y_RESULTS_MAX and the JSON reader's depth; fuzzed by
 * tests/fuzz/fuzz_a11y.c).
 *
 * What is scrubbed, in each "html" string anywhere in the results (a
 * node's snippet, its related nodes'), read as an HTML tokenizer reads it
 * (text, start and end tags with their attributes and quotes, comments,
 * raw-text elements: red team s16, R6-3): the value attribute of every
 * <input> but those whose value is a label (type submit, button, reset,
 * image, checkbox, radio, range, color), the value and the text of every
 * secret field by the one secret-field rule (snapshot/page_js.h
 * SNAP_JS_SECRET_KIND, on the tag's attributes: a contenteditable too),
 * the text of every <textarea>, comment and raw-text element. An input or
 * secret tag that is not as a serialiser writes it (axe's cut snippets
 * write values raw) loses all its attributes. A snippet axe cut inside a
 * value loses the rest of it. The value and content of an element whose
 * name says a secret (<meta name="csrf-token">, <button name="otp">).
 * Every other attribute value, and each word of a text that may hold a
 * URL, by the value rule below (red team s18, R8-5: URLs and tokens in
 * any attribute, a style's url(), a meta refresh, a title). (The page
 * side masks first: axe_run.c's AXE_JS_MASK.) With a text function (the
 * *_with and a11y_json_scrub forms), every string and key of the document
 * then goes through it too (a11y_scan's: the session values out).
 */
#include "a11y/a11y.h"

#include "base/base.h"
#include "json/json.h"
#include "url/url.h"

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

/* One start tag as read: its name and attributes. */
typedef struct {
    const char *lt, *name_end;  /* '<' and the end of the name */
    attr at[ATTRS_MAX];
    size_t n;
    const char *end;            /* after '>', or the end of the text */
    bool odd;                   /* not as a serialiser writes it (a quote or '<' in an
                                   attribute's name, a quote in another's value, a
                                   quote left open, too many attributes): the
                                   attributes may not be what they seem */
} htag;

/* The scrubber's state over a snippet (HTML tokens, as a browser reads
 * them: text, start and end tags with their attributes, comments, raw
 * text elements). */
typedef struct {
    base_buf *b;
    const char *p;
    char secret[24];            /* a secret element's name: its text is masked */
    int depth;                  /* its nesting (same name) */
} hscan;

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool name_char(char c)
{
    return c && !is_space(c) && c != '/' && c != '>';
}

/* A quoted or unquoted value at p (after '=' and spaces) into a; where it
 * ends. */
static const char *attr_value(const char *p, attr *a)
{
    if (*p == '"' || *p == '\'') {
        a->quote = *p++;
        a->val = p;
        while (*p && *p != a->quote)
            p++;
        a->vlen = (size_t)(p - a->val);
        a->closed = *p != 0;
        return *p ? p + 1 : p;
    }
    a->val = p;
    while (*p && !is_space(*p) && *p != '>')
        p++;
    a->vlen = (size_t)(p - a->val);
    return p;
}

/* Whether a's name or value makes the tag odd. */
static bool attr_odd(const attr *a)
{
    if (memchr(a->name, '"', a->nlen) || memchr(a->name, '\'', a->nlen) ||
        memchr(a->name, '<', a->nlen))
        return true;
    bool value = a->nlen == 5 && strncasecmp(a->name, "value", 5) == 0;
    if (!a->val || value)
        return false;
    return (a->quote && !a->closed) || memchr(a->val, '"', a->vlen) ||
           memchr(a->val, '\'', a->vlen) || memchr(a->val, '<', a->vlen);
}

/* The attributes of the tag whose name ends at p, as the HTML tokenizer
 * reads them (a name may start with '='; '/' between attributes). */
static void tag_attrs(const char *p, htag *t)
{
    t->n = 0;
    t->odd = false;
    for (;;) {
        while (is_space(*p) || *p == '/')
            p++;
        if (!*p || *p == '>') {
            t->end = *p ? p + 1 : p;
            return;
        }
        attr a = {p, 0, NULL, 0, 0, true};
        p++;
        while (name_char(*p) && *p != '=')
            p++;
        a.nlen = (size_t)(p - a.name);
        while (is_space(*p))
            p++;
        if (*p == '=') {
            p++;
            while (is_space(*p))
                p++;
            p = attr_value(p, &a);
        }
        t->odd |= attr_odd(&a);
        if (t->n < ATTRS_MAX)
            t->at[t->n++] = a;
        else
            t->odd = true;
    }
}

static bool named(const attr *a, const char *name)
{
    return a->nlen == strlen(name) && strncasecmp(a->name, name, a->nlen) == 0;
}

static bool tag_is(const htag *t, const char *name)
{
    size_t n = (size_t)(t->name_end - t->lt - 1);
    return n == strlen(name) && strncasecmp(t->lt + 1, name, n) == 0;
}

/* a's value holds word (any case). */
static bool value_has(const attr *a, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; a->val && i + w <= a->vlen; i++)
        if (strncasecmp(a->val + i, word, w) == 0)
            return true;
    return false;
}

/* Whether an input of this type shows its value as a label. */
static bool type_keeps(const htag *t)
{
    static const char *const KEEP[] = {"submit", "button", "reset", "image", "checkbox",
                                       "radio", "range", "color"};
    for (size_t i = 0; i < t->n; i++) {
        const attr *a = &t->at[i];
        if (!named(a, "type") || !a->val)
            continue;
        for (size_t k = 0; k < sizeof KEEP / sizeof KEEP[0]; k++)
            if (a->vlen == strlen(KEEP[k]) && strncasecmp(a->val, KEEP[k], a->vlen) == 0)
                return true;
        return false;
    }
    return false;   /* no type: a text field */
}

/* Whether an attribute naming the element (name, id, itemprop, property,
 * http-equiv) says its value or content is a secret: a name url/'s rule
 * hides the value of (url_secret_name, strict: "csrf-token", "api_key",
 * "otp", "auth"), or a cookie (<meta http-equiv="Set-Cookie">). */
static bool tag_named_secret(const htag *t)
{
    static const char *const NAMING[] = {"name", "id", "itemprop", "property", "http-equiv"};
    for (size_t i = 0; i < t->n; i++) {
        const attr *a = &t->at[i];
        for (size_t k = 0; a->val && k < sizeof NAMING / sizeof NAMING[0]; k++)
            if (named(a, NAMING[k]) &&
                (url_secret_name(a->val, a->vlen, true) || value_has(a, "cookie")))
                return true;
    }
    return false;
}

/* The one secret-field rule (docs/threat-model.md; snapshot/page_js.h
 * SNAP_JS_SECRET_KIND) on a tag's attributes: an input typed password, an
 * element whose autocomplete names password, one-time-code or cc-. */
static bool tag_secret(const htag *t)
{
    bool input = tag_is(t, "input");
    for (size_t i = 0; i < t->n; i++) {
        const attr *a = &t->at[i];
        if ((input && named(a, "type") && value_has(a, "password")) ||
            (named(a, "autocomplete") && (value_has(a, "password") ||
                                          value_has(a, "one-time-code") ||
                                          value_has(a, "cc-"))))
            return true;
    }
    return false;
}

/* ---- the value rule: URLs and tokens in attribute values and text ----
 *
 * Red team s18, R8-5: a token sits in more places than a URL attribute: a
 * style's url(...) (several, quoted or not, the quotes written &quot;), a
 * meta refresh's content ("0;url=/reset?token=..."), a title or an
 * aria-label that shows the link, a value, a data-* attribute, a URL
 * written with character references (&#58; &#x2F;). So every attribute
 * value (and every word of an element's text that holds a URL) goes
 * through one rule, word by word (runs without white space), each word
 * read with its character references decoded:
 *  1. the word by the report's URL rule (url_redact with the bearer rule:
 *     secret-named query and fragment values, path segments, values and
 *     fragments shaped like bearer secrets, "[redacted]"), as the recorder
 *     and the evidence show URLs;
 *  2. each piece of it between quotes, parentheses, angle brackets,
 *     commas, semicolons and the like (a CSS url(...) among declarations,
 *     a refresh's "url=...") by the same rule, and inside a piece, what
 *     follows a scheme that is no web one ("background-image:", "mailto:",
 *     "key:") and each URL that starts inside it ("next=https://...");
 *  3. every run of token characters (letters, digits, "-_.~+%") that
 *     url/'s word rule calls a secret (url_secret_shaped: a bearer token, a
 *     JWT, 32+ hex digits, a card number) wherever it stands, but a web
 *     URL's host.
 * A word the rule leaves as it was is kept byte for byte; a changed one is
 * written back with < > & " ' as character references; one the rule
 * cannot take (out of memory, too many URLs in one piece) is MASK. */

#define PIECE_URLS 8    /* URLs starting inside one piece; more: MASK */

/* Where a piece of a word ends (its delimiters: not in a URL, or between
 * a CSS declaration's parts). */
#define PIECE_DELIMS "\"'()<>`{}|\\^,;"

static bool run_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("-_.~+%", c));
}

static bool scheme_char(char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

/* Whether s[0..n) names a web scheme (its host is no secret). */
static bool web_scheme(const char *s, size_t n)
{
    static const char *const WEB[] = {"http", "https", "ws", "wss", "ftp"};
    for (size_t i = 0; i < sizeof WEB / sizeof WEB[0]; i++)
        if (n == strlen(WEB[i]) && strncasecmp(s, WEB[i], n) == 0)
            return true;
    return false;
}

/* The character reference at s (after '&', up to end): its character
 * into *c and its length (without the '&'), or 0 when there is none the
 * rule reads (a numeric one above 127 is kept as written). */
static size_t ent_at(const char *s, const char *end, char *c)
{
    static const struct {
        const char *name;
        char c;
    } N[] = {{"amp", '&'},   {"AMP", '&'},   {"quot", '"'},    {"QUOT", '"'},   {"apos", '\''},
             {"lt", '<'},    {"LT", '<'},    {"gt", '>'},      {"GT", '>'},     {"nbsp", ' '},
             {"colon", ':'}, {"sol", '/'},   {"bsol", '\\'},   {"quest", '?'},  {"equals", '='},
             {"num", '#'},   {"period", '.'}, {"lpar", '('},   {"rpar", ')'},   {"comma", ','},
             {"semi", ';'},  {"excl", '!'},  {"percnt", '%'},  {"plus", '+'},   {"lowbar", '_'},
             {"commat", '@'}, {"dollar", '$'}, {"ast", '*'},   {"Tab", '\t'},   {"NewLine", '\n'},
             {"lsqb", '['},  {"rsqb", ']'},  {"grave", '`'},   {"Hat", '^'},    {"verbar", '|'}};
    if (s < end && *s == '#') {
        bool hex = s + 1 < end && (s[1] == 'x' || s[1] == 'X');
        const char *p = s + 1 + hex;
        unsigned long v = 0;
        size_t digits = 0;
        for (; p < end; p++, digits++) {
            int d = *p >= '0' && *p <= '9' ? *p - '0'
                    : hex && (*p | 0x20) >= 'a' && (*p | 0x20) <= 'f' ? (*p | 0x20) - 'a' + 10
                    : -1;
            if (d < 0)
                break;
            v = v > 0x10FFFF ? v : v * (hex ? 16 : 10) + (unsigned long)d;
        }
        if (!digits || v == 0 || v > 127)
            return 0;
        *c = (char)v;
        return (size_t)(p - s) + (p < end && *p == ';');
    }
    for (size_t i = 0; i < sizeof N / sizeof N[0]; i++) {
        size_t k = strlen(N[i].name);
        if ((size_t)(end - s) > k && strncmp(s, N[i].name, k) == 0 && s[k] == ';') {
            *c = N[i].c;
            return k + 1;
        }
    }
    return 0;
}

/* w[0..n) with its character references read (new; NULL: out of memory). */
static char *ent_decode(const char *w, size_t n)
{
    base_buf b = {0};
    base_buf_reserve(&b, n);
    for (size_t i = 0; i < n;) {
        char c;
        size_t k = w[i] == '&' ? ent_at(w + i + 1, w + n, &c) : 0;
        if (k) {
            base_buf_putc(&b, c);
            i += k + 1;
        } else {
            base_buf_putc(&b, w[i++]);
        }
    }
    return base_buf_take(&b, NULL);
}

/* Where the next URL inside the piece r starts, at from or after (0:
 * none): after the ':' of a scheme at its start that is no web one (from
 * 0 only: "background-image:url", "mailto:", "key:"), or at the scheme of
 * a "://" met inside it. */
static size_t url_start(const char *r, size_t from)
{
    if (from == 0) {
        size_t n = 0;
        while (scheme_char(r[n]))
            n++;
        if (n && is_alpha(r[0]) && r[n] == ':' && !web_scheme(r, n))
            return n + 1;
    }
    if (from > strlen(r))
        return 0;
    for (const char *k = strstr(r + from, "://"); k; k = strstr(k + 1, "://")) {
        size_t j = (size_t)(k - r);
        while (j > 0 && scheme_char(r[j - 1]))
            j--;
        while (j < (size_t)(k - r) && !is_alpha(r[j]))
            j++;
        if (j > 0 && j >= from && j < (size_t)(k - r))
            return j;
    }
    return 0;
}

/* One piece p[0..n) by the URL rule, then each URL inside it (url_start)
 * from its start on, into b. */
static void piece_put(base_buf *b, const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) {
        b->oom = true;
        return;
    }
    memcpy(s, p, n);
    s[n] = 0;
    char *r = url_redact(s, URL_REDACT_TOKENS, NULL);
    free(s);
    size_t from = 0;
    for (int k = 0; r; k++) {
        size_t i = url_start(r, from);
        if (!i)
            break;
        if (k == PIECE_URLS) {
            free(r);
            r = base_strdup(MASK);
            break;
        }
        char *t = url_redact(r + i, URL_REDACT_TOKENS, NULL);
        base_buf j = {0};
        base_buf_put(&j, r, i);
        base_buf_puts(&j, t ? t : "");
        free(t);
        free(r);
        r = t ? base_buf_take(&j, NULL) : NULL;
        if (!t)
            base_buf_free(&j);
        from = i + 1;
    }
    if (!r)
        b->oom = true;
    base_buf_puts(b, r ? r : "");
    free(r);
}

/* Whether the run at s[i] is a web URL's host (after "http://", or after
 * "//" at a piece's start: a protocol-relative URL). */
static bool run_host(const char *s, size_t i)
{
    if (i < 2 || s[i - 1] != '/' || s[i - 2] != '/')
        return false;
    if (i == 2 || strchr(PIECE_DELIMS "=", s[i - 3]))
        return true;
    if (s[i - 3] != ':')
        return false;
    size_t j = i - 3;
    while (j > 0 && scheme_char(s[j - 1]))
        j--;
    return web_scheme(s + j, i - 3 - j);
}

/* s with every run of token characters that is shaped like a secret
 * (url_secret_shaped), a web URL's host aside, "[redacted]" (new). */
static char *runs_scrub(const char *s)
{
    base_buf b = {0};
    for (size_t i = 0; s[i];) {
        if (!run_char(s[i])) {
            base_buf_putc(&b, s[i++]);
            continue;
        }
        size_t e = i;
        while (run_char(s[e]))
            e++;
        if (!run_host(s, i) && url_secret_shaped(s + i, e - i, false))
            base_buf_puts(&b, "[redacted]");
        else
            base_buf_put(&b, s + i, e - i);
        i = e;
    }
    return base_buf_take(&b, NULL);
}

/* One word d (no white space) by the value rule (new; NULL: out of
 * memory). */
static char *word_rule(const char *d)
{
    char *t = url_redact(d, URL_REDACT_TOKENS, NULL);
    if (!t)
        return NULL;
    base_buf b = {0};
    for (const char *p = t;;) {
        size_t n = strcspn(p, PIECE_DELIMS);
        piece_put(&b, p, n);
        if (!p[n])
            break;
        base_buf_putc(&b, p[n]);
        p += n + 1;
    }
    free(t);
    char *u = base_buf_take(&b, NULL);
    char *v = u ? runs_scrub(u) : NULL;
    free(u);
    return v;
}

/* Whether the word d may hold a URL (an element's text: a word without
 * one is the page's prose, kept for the session rule). */
static bool url_ish(const char *d)
{
    return strstr(d, "://") || strpbrk(d, "/?=");
}

/* d (a decoded word: white space in it from a character reference) by
 * the value rule, each run without white space (new; NULL: out of
 * memory); text: only runs that may hold a URL (url_ish). */
static char *decoded_rule(const char *d, bool text)
{
    base_buf b = {0};
    for (size_t i = 0; d[i];) {
        size_t k = i;
        while (d[k] && !is_space(d[k]))
            k++;
        if (k == i) {
            base_buf_putc(&b, d[i++]);
            continue;
        }
        char *w = malloc(k - i + 1), *r = NULL;
        if (w) {
            memcpy(w, d + i, k - i);
            w[k - i] = 0;
            r = text && !url_ish(w) ? base_strdup(w) : word_rule(w);
        }
        if (!r)
            b.oom = true;
        base_buf_puts(&b, r ? r : "");
        free(w);
        free(r);
        i = k;
    }
    return base_buf_take(&b, NULL);
}

/* How value_words writes. */
enum { VW_ATTR, VW_TEXT, VW_SEL };

/* s[0..n) into b, word by word (runs without white space) by the value
 * rule. VW_ATTR: an attribute value within the quote q (character
 * references read; a kept word holding q has it as a reference); VW_TEXT:
 * an element's text (its words that may hold a URL only); VW_SEL: a
 * selector's attribute value (no references; a word that would hold q is
 * MASK). */
static void value_words(base_buf *b, const char *s, size_t n, char q, int how)
{
    for (size_t i = 0; i < n;) {
        size_t k = i;
        while (k < n && !is_space(s[k]))
            k++;
        if (k == i) {
            base_buf_putc(b, s[i++]);
            continue;
        }
        char *d = how == VW_SEL ? malloc(k - i + 1) : ent_decode(s + i, k - i);
        if (d && how == VW_SEL) {
            memcpy(d, s + i, k - i);
            d[k - i] = 0;
        }
        char *r = d ? decoded_rule(d, how == VW_TEXT) : NULL;
        if (!r || (how == VW_SEL && q && strchr(r, q))) {
            base_buf_puts(b, MASK);
        } else if (strcmp(r, d) == 0) {
            for (size_t j = i; j < k; j++)
                if (q && s[j] == q && how == VW_ATTR)
                    base_buf_puts(b, q == '"' ? "&quot;" : "&#39;");
                else
                    base_buf_putc(b, s[j]);
        } else if (how == VW_SEL) {
            base_buf_puts(b, r);
        } else {
            base_buf_put_html(b, r);
        }
        free(d);
        free(r);
        i = k;
    }
}

/* One attribute of a tag: its value MASK when mask_value and it is the
 * value (or a meta's content), else by the value rule (value_words). In
 * an odd tag (its attributes may not be what they seem) every name goes
 * through the rule too, a name holding a quote or '<' MASK. */
static void attr_put(base_buf *b, const attr *a, bool odd, bool mask_value)
{
    base_buf_putc(b, ' ');
    if (!odd)
        base_buf_put(b, a->name, a->nlen);
    else if (memchr(a->name, '"', a->nlen) || memchr(a->name, '\'', a->nlen) ||
             memchr(a->name, '<', a->nlen))
        base_buf_puts(b, MASK);
    else
        value_words(b, a->name, a->nlen, '=', VW_SEL);
    if (!a->val)
        return;
    base_buf_putc(b, '=');
    char q = a->quote ? a->quote : '"';
    base_buf_putc(b, q);
    if (mask_value && (named(a, "value") || named(a, "content")))
        base_buf_puts(b, MASK);
    else
        value_words(b, a->val, a->vlen, q, VW_ATTR);
    if (a->closed || !a->quote)
        base_buf_putc(b, q);
}

/* Write the tag with its attributes, every value attribute masked when
 * mask_value; an odd tag whose values matter loses them all. Every other
 * value by the value rule (attr_put). */
static void tag_put(base_buf *b, const htag *t, bool mask_value)
{
    base_buf_put(b, t->lt, (size_t)(t->name_end - t->lt));
    if (mask_value && t->odd) {
        base_buf_puts(b, " " MASK ">");
        return;
    }
    for (size_t i = 0; i < t->n; i++)
        attr_put(b, &t->at[i], t->odd, mask_value);
    if (t->end > t->lt && t->end[-1] == '>')
        base_buf_putc(b, '>');
}

/* Elements whose text a serialiser writes raw (and <textarea>, whose text
 * is its value): their text is masked, never read for tags. */
static bool tag_raw(const htag *t)
{
    static const char *const RAW[] = {"textarea", "script", "style", "xmp", "iframe",
                                      "noembed", "noframes", "noscript", "plaintext"};
    for (size_t i = 0; i < sizeof RAW / sizeof RAW[0]; i++)
        if (tag_is(t, RAW[i]))
            return true;
    return false;
}

static bool tag_void(const htag *t)
{
    static const char *const VOID[] = {"area", "base", "br", "col", "embed", "hr", "img",
                                       "input", "link", "meta", "source", "track", "wbr"};
    for (size_t i = 0; i < sizeof VOID / sizeof VOID[0]; i++)
        if (tag_is(t, VOID[i]))
            return true;
    return false;
}

/* Text up to the next '<' (masked inside a secret element; its words
 * that may hold a URL by the value rule). */
static void hs_text(hscan *h)
{
    const char *lt = strchr(h->p + 1, '<');
    size_t n = lt ? (size_t)(lt - h->p) : strlen(h->p);
    if (h->depth > 0)
        base_buf_puts(h->b, MASK);
    else
        value_words(h->b, h->p, n, 0, VW_TEXT);
    h->p += n;
}

/* A comment (<!-- ... -->) or a bogus one (<!...>, <?...>): its text
 * masked. */
static void hs_comment(hscan *h)
{
    bool real = strncmp(h->p, "<!--", 4) == 0;
    const char *from = h->p + (real ? 4 : 2);
    const char *end = real ? strstr(from, "-->") : strchr(from, '>');
    base_buf_puts(h->b, real ? "<!--" MASK : "<!" MASK);
    if (end)
        base_buf_puts(h->b, real ? "-->" : ">");
    h->p = end ? end + (real ? 3 : 1) : from + strlen(from);
}

/* The text of a raw element up to its end tag (masked), name: its name. */
static void hs_raw(hscan *h, const char *name, size_t nl)
{
    const char *q = h->p;
    while (*q && !(q[0] == '<' && q[1] == '/' && strncasecmp(q + 2, name, nl) == 0))
        q++;
    if (q > h->p)
        base_buf_puts(h->b, MASK);
    h->p = q;
}

/* An end tag: its name and '>' (attributes in it dropped). */
static void hs_end(hscan *h)
{
    htag t;
    t.lt = h->p + 1;
    const char *q = h->p + 2;
    while (name_char(*q))
        q++;
    t.name_end = q;
    tag_attrs(q, &t);
    size_t nl = (size_t)(q - h->p - 2);
    if (h->depth > 0 && nl == strlen(h->secret) && strncasecmp(h->p + 2, h->secret, nl) == 0)
        h->depth--;
    base_buf_putc(h->b, '<');
    base_buf_put(h->b, h->p + 1, (size_t)(q - h->p - 1));
    if (t.end > q && t.end[-1] == '>')
        base_buf_putc(h->b, '>');
    h->p = t.end;
}

/* A start tag, and the raw text after it. */
static void hs_start(hscan *h)
{
    htag t;
    t.lt = h->p;
    const char *q = h->p + 1;
    while (name_char(*q))
        q++;
    t.name_end = q;
    tag_attrs(q, &t);
    bool secret = tag_secret(&t);
    bool input = tag_is(&t, "input");
    tag_put(h->b, &t, secret || h->depth > 0 || (input && !type_keeps(&t)) ||
                          tag_named_secret(&t));
    h->p = t.end;
    size_t nl = (size_t)(q - t.lt - 1);
    if (h->depth > 0 && nl == strlen(h->secret) && strncasecmp(t.lt + 1, h->secret, nl) == 0)
        h->depth++;
    else if (secret && !tag_void(&t) && h->depth == 0 && nl < sizeof h->secret) {
        snprintf(h->secret, sizeof h->secret, "%.*s", (int)nl, t.lt + 1);
        h->depth = 1;
    }
    if (tag_raw(&t) && t.end[-1] == '>')
        hs_raw(h, t.lt + 1, nl);
}

char *a11y_html_scrub(const char *html)
{
    base_buf b = {0};
    hscan h = {&b, html ? html : "", "", 0};
    while (*h.p) {
        const char *p = h.p;
        if (p[0] != '<')
            hs_text(&h);
        else if (p[1] == '!' || p[1] == '?')
            hs_comment(&h);
        else if (p[1] == '/' && is_alpha(p[2]))
            hs_end(&h);
        else if (is_alpha(p[1]))
            hs_start(&h);
        else
            hs_text(&h);
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

/* A selector of axe's "target" with the value of each attribute selector
 * ([href$="..."]: axe names a link or an image by its href or src) by the
 * value rule (value_words); new, NULL when out of memory. */
static char *sel_scrub(const char *s)
{
    base_buf b = {0};
    for (const char *p = s; *p;) {
        if ((*p != '"' && *p != '\'') || p == s || p[-1] != '=') {
            base_buf_putc(&b, *p++);
            continue;
        }
        char q = *p;
        const char *e = p + 1;
        while (*e && *e != q)
            e += *e == '\\' && e[1] ? 2 : 1;
        base_buf_putc(&b, q);
        value_words(&b, p + 1, (size_t)(e - p - 1), q, VW_SEL);
        if (*e)
            base_buf_putc(&b, q);
        p = *e ? e + 1 : e;
    }
    if (!b.s && !b.oom)
        base_buf_puts(&b, "");
    return base_buf_take(&b, NULL);
}

/* Copy v into w with every "html" string scrubbed, every string under a
 * "target" (sel) by sel_scrub, and every string and key through fn. */
static void scrub_val(json_w *w, const json_val *v, a11y_text_fn fn, void *ud, bool sel)
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
                scrub_val(w, m, fn, ud, sel || (kl == 6 && memcmp(k, "target", 6) == 0));
            }
        }
        json_w_obj_end(w);
    } else if (json_is(v, JSON_ARRAY)) {
        json_w_arr_begin(w);
        for (const json_val *m = json_first(v); m; m = json_next(m))
            scrub_val(w, m, fn, ud, sel);
        json_w_arr_end(w);
    } else if (sel && json_is(v, JSON_STRING)) {
        char *s = sel_scrub(json_str(v, NULL));
        str_put(w, s ? s : MASK, fn, ud, false);
        free(s);
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
    scrub_val(&w, root, fn, ud, false);
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
