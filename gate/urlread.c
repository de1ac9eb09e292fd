/*
 * urlread.c — the words of a URL the classifier reads (split out of
 * classify.c, which keeps the phrase tables and the element's reading):
 * a GET's URL (an open's, a link's href, a GET form's action, a page's
 * own GET: gate_classify_get), a data-carrying request's path
 * (gate_classify_request), the query's operation keys and act keys.
 * docs/gate.md, "The words of a URL", has the rules in prose.
 *
 * Pure and bounded: the URL is copied once (its length plus the query),
 * every word read; the phrases are matched by classify.c
 * (gate_phrase_url, gate_phrase_path), the noun-first and joined acts by
 * urlact.c (gate_url_act).
 */
#include "gate/gate_int.h"
#include "url/url.h"
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define N(t) (sizeof(t) / sizeof((t)[0]))

/* A query value that is only one of these words, under a key that names
 * what to do (action=close, op=cancel, WordPress's action=trash; not
 * q=close, a search); or a query key that is one (?cancel=1, ?close=true:
 * the key names the act, the value is a flag). */
static const char *const URLV_VALUE[] = {"close", "cancel", "confirm", "approve", "execute",
                                         "trash"};
static const char *const URLV_KEY[] = {"action", "op", "operation", "do", "cmd", "command",
                                       "verb", "act", "task", "intent", "mode"};

/* The path of a form's action or a request's URL as the browser sends it
 * (url/url.h: dot segments resolved), on the heap (free it); a URL the
 * parser refuses is read whole (more words, never fewer). NULL: out of
 * memory. */
static void pct_decode(const char *s, size_t n, char *out, size_t cap);

char *gate_url_path_dup(const char *url)
{
    size_t n = (url ? strlen(url) : 0) + 2;
    char *out = malloc(n);
    if (out && url_path(url, out, n))
        snprintf(out, n, "%s", url ? url : "");
    return out;
}

int gate_classify_request(const char *method, const char *url, char *why, size_t cap)
{
    if (why && cap)
        why[0] = 0;
    if (method && strcasecmp(method, "DELETE") == 0) {
        gate_why(why, cap, "%s: the request's method is %s%s", "delete", "DELETE", "");
        return GATE_CONSEQ_DELETE;
    }
    char *path = gate_url_path_dup(url);
    if (!path) {
        gate_why(why, cap, "%s: the request's URL %s%s", "production_change",
             "could not be read", " (out of memory)");
        return GATE_CONSEQ_PRODUCTION;
    }
    const char *ph = NULL;
    int k = gate_phrase_path(path, &ph);
    if (!k) {
        /* The words a GET URL is read with, too (percent-decoded, camelCase
         * split): "/account/close-account/confirm" or "/newsletter/
         * unsubscribe" is the same endpoint whichever method reaches it
         * (red team s12, G9b). */
        size_t n = strlen(path) + 1;
        char *dec = malloc(n);
        if (!dec) {
            free(path);
            gate_why(why, cap, "%s: the request's URL %s%s", "production_change",
                 "could not be read", " (out of memory)");
            return GATE_CONSEQ_PRODUCTION;
        }
        pct_decode(path, n - 1, dec, n);
        k = gate_phrase_url(dec, &ph);
        char act[96];
        int ak = k ? 0 : gate_url_act(dec, n, act, sizeof act);
        free(dec);
        if (ak) {
            gate_why(why, cap, "%s: request path \"%s\" has \"%s\" (an act named noun first or "
                 "joined)", gate_conseq_name(ak), path, act);
            free(path);
            return ak;
        }
    }
    if (k)
        gate_why(why, cap, "%s: request path \"%s\" has \"%s\"", gate_conseq_name(k), path, ph);
    free(path);
    return k;
}

/* Percent-decode [s, s + n) into out (cap), '+' read as a space; a byte
 * that decodes to a control reads as a space. */
static void pct_decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        int c = (unsigned char)s[i], hi, lo;
        if (c == '%' && i + 2 < n && (hi = base_hex_value(s[i + 1])) >= 0 &&
            (lo = base_hex_value(s[i + 2])) >= 0) {
            c = hi * 16 + lo;
            i += 2;
        } else if (c == '+') {
            c = ' ';
        }
        out[o++] = (char)(c < 0x20 || c == 0x7f ? ' ' : c);
    }
    out[o] = 0;
}

/* One word of list (n entries), whole, ASCII case folded, in [v + b, v + l). */
const char *gate_word_of(const char *v, size_t b, size_t l, const char *const *list,
                         size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (strlen(list[k]) == l - b && strncasecmp(v + b, list[k], l - b) == 0)
            return list[k];
    return NULL;
}

/* The act a query value [p, e) under a URLV_KEY key names: one URLV_VALUE
 * word, or what the path's act rules read in it ("action=deleteuser",
 * "do=closeaccount"); what gets how. */
static int value_act(const char *p, const char *e, char *what, size_t cap)
{
    size_t n = (size_t)(e - p) + 1;
    char *v = malloc(n);
    if (!v) {
        snprintf(what, cap, "%s", "(a value that could not be read: out of memory)");
        return GATE_CONSEQ_PRODUCTION;
    }
    pct_decode(p, n - 1, v, n);
    size_t b = strspn(v, " "), l = strlen(v);
    while (l > b && v[l - 1] == ' ')
        l--;
    const char *w = gate_word_of(v, b, l, URLV_VALUE, N(URLV_VALUE));
    char act[96];
    int k = w ? GATE_CONSEQ_DELETE : gate_url_act(v, l, act, sizeof act);
    if (w || k)
        snprintf(what, cap, "%s", w ? w : act);
    free(v);
    return k;
}

/* The act the query [p, end) names by one key or value: a key that is a
 * URLV_VALUE word (?cancel=1), or a URLV_KEY key's value (value_act); its
 * kind (what gets how), else GATE_CONSEQ_NONE. */
static int query_act(const char *p, const char *end, char *what, size_t cap)
{
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *e = amp ? amp : end;
        const char *eq = memchr(p, '=', (size_t)(e - p));
        char key[24];
        pct_decode(p, (size_t)((eq ? eq : e) - p), key, sizeof key);
        const char *w = gate_word_of(key, 0, strlen(key), URLV_VALUE, N(URLV_VALUE));
        if (w) {
            snprintf(what, cap, "%s", w);
            return GATE_CONSEQ_DELETE;
        }
        int k = eq && gate_word_of(key, 0, strlen(key), URLV_KEY, N(URLV_KEY))
                    ? value_act(eq + 1, e, what, cap) : GATE_CONSEQ_NONE;
        if (k)
            return k;
        p = e + 1;
    }
    return GATE_CONSEQ_NONE;
}

/* A static file's extension (a style, a script, an image, a font, a source
 * map), at the end of a last path segment of len bytes. */
static bool static_name(const char *seg, size_t len)
{
    static const char *const EXT[] = {"css", "js", "mjs", "png", "jpg", "jpeg", "gif", "svg",
                                      "webp", "ico", "woff", "woff2", "ttf", "otf", "map"};
    const char *dot = NULL;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)seg[i];
        /* Only a plain name: a ';' (path parameters some servers strip
         * before routing), '%' or another byte is read as written. */
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && c != '.' && c != '-' && c != '_')
            return false;
        if (c == '.')
            dot = seg + i;
    }
    if (!dot || dot == seg)
        return false;
    size_t el = (size_t)(seg + len - dot - 1);
    for (size_t k = 0; k < N(EXT); k++)
        if (strlen(EXT[k]) == el && strncasecmp(dot + 1, EXT[k], el) == 0)
            return true;
    return false;
}

int gate_classify_url(const char *url, char *why, size_t cap)
{
    return gate_classify_get(url, false, why, cap);
}

int gate_classify_get(const char *url, bool statics, char *why, size_t cap)
{
    if (why && cap)
        why[0] = 0;
    url_parts u;
    if (!url || url_parse(url, &u, NULL) != 0)
        return GATE_CONSEQ_NONE;
    /* The query, up to the fragment (the browser never sends it). */
    const char *p = url + u.rest, *end = url + u.rest_end;
    const char *hash = memchr(p, '#', (size_t)(end - p));
    if (hash)
        end = hash;
    const char *qm = memchr(p, '?', (size_t)(end - p));
    /* The path as the browser sends it: dot segments resolved ("/x/../send"
     * is "/send"; red team s12, G1), every word read (no cap on words or
     * bytes: a URL padded with filler words is read to its end). */
    size_t pn = (size_t)(end - p) + 2, qn = qm ? (size_t)(end - qm) : 0;
    char *raw = malloc(pn + qn + 1), *dec = malloc(pn + qn + 1);
    if (!raw || !dec || url_path(url, raw, pn)) {
        free(raw);
        free(dec);
        gate_why(why, cap, "%s: the URL %s%s", "production_change", "could not be read", "");
        return GATE_CONSEQ_PRODUCTION;
    }
    /* A static page's file name (".html", ".htm") names a document, not an
     * endpoint: its words are not read ("pin-send.html" shows a form). Not
     * when a query follows: frameworks route "/account/delete.html?id=7"
     * to the delete endpoint (Rails' format suffix; red team s12, G1).
     * With statics (a page's own request that is no navigation, red team
     * s13, N3), a static file's name likewise: "/icons/send.svg" and
     * "/js/delete-dialog.js" load; the directory words are still read
     * ("/account/delete/x.png" is a delete). */
    size_t rl = strlen(raw), sl = rl;
    char *seg = raw + rl;
    while (seg > raw && seg[-1] != '/')
        seg--;
    sl = (size_t)(raw + rl - seg);
    bool page = !qm && ((sl > 5 && strncasecmp(raw + rl - 5, ".html", 5) == 0) ||
                        (sl > 4 && strncasecmp(raw + rl - 4, ".htm", 4) == 0) ||
                        (statics && static_name(seg, sl)));
    if (page)
        *seg = 0;
    /* Tabs and newlines are dropped from the whole URL by the browser
     * ("clo<TAB>se" is sent "close"). */
    size_t pl = strlen(raw);
    for (size_t i = 0, o = pl; qm && i < qn; i++)
        if (qm[i] != '\t' && qm[i] != '\n' && qm[i] != '\r') {
            raw[o++] = qm[i];
            raw[o] = 0;
        }
    pct_decode(raw, pl, dec, pn + qn + 1);
    size_t dl = strlen(dec);
    pct_decode(raw + pl, strlen(raw + pl), dec + dl, pn + qn + 1 - dl);
    const char *ph = NULL;
    int k = gate_phrase_url(dec, &ph);
    if (k) {
        gate_why(why, cap, "%s: the URL \"%s\" has \"%s\"", gate_conseq_name(k), dec, ph);
    } else {
        /* The act a path names noun first or joined (urlact.c), then the
         * one a query key or an operation key's value names. */
        char act[128];
        k = gate_url_act(dec, dl, act, sizeof act);
        if (k)
            gate_why(why, cap, "%s: the URL \"%s\" has \"%s\" (an act named noun first or "
                 "joined)", gate_conseq_name(k), dec, act);
        else if (qm && (k = query_act(qm + 1, end, act, sizeof act)))
            gate_why(why, cap, "%s: the URL \"%s\" has the query key or value \"%s\"",
                 gate_conseq_name(k), dec, act);
    }
    free(raw);
    free(dec);
    return k;
}

bool gate_op_key(const char *key)
{
    return gate_word_of(key, 0, strlen(key), URLV_KEY, N(URLV_KEY)) != NULL;
}

const char *gate_op_value(const char *v, size_t b, size_t l)
{
    return gate_word_of(v, b, l, URLV_VALUE, N(URLV_VALUE));
}
