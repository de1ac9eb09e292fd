/*
 * scrub.c — session values are never shown, and a refused request shows
 * no page-chosen data.
 *
 * A script of an authenticated page can read a session value that is not
 * HttpOnly (a cookie in document.cookie, a localStorage token) and put it
 * into the URL of a request: a query value, a path segment, a host label
 * (TOKEN.attacker.example). The request is refused, but its URL would be
 * reported to the model, the audit log and stderr. Two rules close that:
 *
 *  1. Known values are scrubbed from every URL shown (snap_scrub_url): the
 *     driver keeps, for the life of the agent, keyed hashes of every cookie
 *     and localStorage value it restored from the vault or captured from a
 *     human login (snap_scrub_note; values of at least SCRUB_MIN bytes, and
 *     the tokens inside them), never the values. Before a URL is shown it
 *     is searched for them raw, percent-decoded, lower-cased (hosts are),
 *     and base64/base64url-encoded at any alignment, and each occurrence is
 *     replaced with "[session-value]" ("session-value" inside a host). The
 *     key (32 random bytes) and a random odd base for a rolling fingerprint
 *     are made per agent; a fingerprint hit is confirmed with the HMAC.
 *  2. A refused request is shown without its path and query
 *     (snap_request_shown): method, scheme, host, port, resource type and
 *     "path and query withheld (N bytes)". A host outside the grant is
 *     shown by its last two labels only ("[withheld].attacker.example"):
 *     any label left of them can be data. The audit log keeps the path and
 *     query (scrubbed, and redacted by parameter names as before): it is the
 *     operator's record, never read by the model; but a request audited
 *     while the human has control is written in this shown form (the
 *     person's own links carry bearer secrets in paths: sink.c).
 *
 * Temporary buffers that held a value or an encoding of it are wiped.
 * Page text written to a file (snap_text_shown: an a11y report's strings)
 * also loses the short values (SCRUB_SHORT_MIN to SCRUB_MIN - 1 bytes,
 * aligned with the evidence's 4) that mix letters and digits, raw or
 * percent-decoded, where each is a whole token (short_like, whole_token).
 * Residuals (docs/threat-model.md): values shorter than SCRUB_MIN elsewhere
 * (and, in reports, short ones of letters or digits alone or glued inside
 * a longer word), other
 * encodings (hex, reversed, split, encrypted, compressed), a value the
 * page derives by computation.
 */
#include "snapshot/snap_int.h"
#include "url/url.h"
#include "vault/vault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCRUB_MIN 8u             /* bytes: shorter values are not remembered but */
#define SCRUB_SHORT_MIN 4u       /* these, as whole tokens in reports (short_like) */
#define SCRUB_VALUE_MAX 4096u    /* a longer value: remembered by its tokens */
#define SCRUB_ENTRIES_MAX 8192u  /* then new values are not remembered */
#define SCRUB_TEXT_MAX 16384u    /* bytes of a text searched; the rest is withheld */

enum { FORM_RAW = 1, FORM_LOWER = 2, FORM_B64 = 4, FORM_SHORT = 8 };

typedef struct {
    uint32_t len;
    unsigned form;
    uint64_t fp;
    uint8_t mac[VAULT_SHA256_LEN];
} scrub_ent;

struct snap_scrub {
    uint8_t key[32];
    uint64_t base;
    scrub_ent *e;                /* sorted by len */
    size_t n, cap;
    bool full;                   /* SCRUB_ENTRIES_MAX reached */
};

static uint64_t fingerprint(uint64_t base, const uint8_t *s, size_t n)
{
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++)
        h = h * base + s[i];
    return h;
}

static void mac_of(const snap_scrub *sc, const uint8_t *s, size_t n,
                   uint8_t out[VAULT_SHA256_LEN])
{
    vault_hmac_sha256(sc->key, sizeof sc->key, s, n, out);
}

static snap_scrub *scrub_get(snap_agent *a)
{
    if (a->scrub)
        return a->scrub;
    snap_scrub *sc = calloc(1, sizeof *sc);
    if (!sc)
        return NULL;
    if (base_random(sc->key, sizeof sc->key) != 0 ||
        base_random(&sc->base, sizeof sc->base) != 0) {
        base_memzero(sc, sizeof *sc);
        free(sc);
        return NULL;
    }
    sc->base |= 1;
    a->scrub = sc;
    return sc;
}

static void ent_add(snap_scrub *sc, unsigned form, const uint8_t *s, size_t n)
{
    if (n < (form == FORM_SHORT ? SCRUB_SHORT_MIN : SCRUB_MIN) || n > SCRUB_VALUE_MAX * 2)
        return;
    scrub_ent e = {(uint32_t)n, form, fingerprint(sc->base, s, n), {0}};
    mac_of(sc, s, n, e.mac);
    size_t at = sc->n;
    for (size_t i = 0; i < sc->n; i++) {
        const scrub_ent *x = &sc->e[i];
        if (x->len == e.len && x->fp == e.fp && memcmp(x->mac, e.mac, sizeof e.mac) == 0) {
            sc->e[i].form |= form;
            return;
        }
        if (x->len > e.len && at == sc->n)
            at = i;
    }
    if (sc->n == SCRUB_ENTRIES_MAX) {
        sc->full = true;
        return;
    }
    if (sc->n == sc->cap) {
        size_t nc = sc->cap ? sc->cap * 2 : 32;
        scrub_ent *ne = realloc(sc->e, nc * sizeof *ne);
        if (!ne) {
            sc->full = true;
            return;
        }
        sc->e = ne;
        sc->cap = nc;
    }
    memmove(sc->e + at + 1, sc->e + at, (sc->n - at) * sizeof *sc->e);
    sc->e[at] = e;
    sc->n++;
}

/* One value: as it is, lower-cased, and its base64 at each of the three
 * alignments (only the characters that depend on the value alone). */
static void note_one(snap_scrub *sc, const uint8_t *v, size_t n)
{
    if (n < SCRUB_MIN || n > SCRUB_VALUE_MAX)
        return;
    ent_add(sc, FORM_RAW, v, n);
    uint8_t *buf = malloc(BASE_B64_ENCLEN(n + 2) + 1 + n + 2);
    if (!buf)
        return;
    for (size_t i = 0; i < n; i++)
        buf[i] = v[i] >= 'A' && v[i] <= 'Z' ? (uint8_t)(v[i] - 'A' + 'a') : v[i];
    ent_add(sc, FORM_LOWER, buf, n);
    uint8_t *in = buf, *out = buf + n + 2;
    for (size_t k = 0; k < 3; k++) {
        memset(in, 0, k);
        memcpy(in + k, v, n);
        size_t el = base_b64_encode(in, n + k, (char *)out);
        /* Character j holds bits [6j, 6j+6) of the stream: it depends on
         * the value alone when they lie within [8k, 8(k+n)). */
        size_t j0 = (8 * k + 5) / 6, j1 = (8 * (k + n)) / 6;   /* [j0, j1) */
        if (j1 > el)
            j1 = el;
        if (j1 > j0)
            ent_add(sc, FORM_B64, out + j0, j1 - j0);
        base_memzero(out, el);
    }
    base_memzero(buf, n + 2);
    free(buf);
}

static bool token_char(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Whether a value of SCRUB_SHORT_MIN to SCRUB_MIN - 1 bytes is remembered
 * (for snap_text_shown, as a whole token): URL-safe characters mixing
 * letters and digits ("k7Q2x9"). One of letters alone or digits alone
 * ("true", "dark", "1234", "2024") is a flag, a preference or a number:
 * scrubbing it would blank every "true" and every such number of a
 * report. */
static bool short_like(const uint8_t *v, size_t n)
{
    bool letter = false, digit = false;
    for (size_t i = 0; i < n; i++) {
        if (!token_char(v[i]))
            return false;
        letter |= (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z');
        digit |= v[i] >= '0' && v[i] <= '9';
    }
    return letter && digit;
}

void snap_scrub_note(snap_agent *a, const char *val, size_t n)
{
    if (val && a->o.secret_fn)
        a->o.secret_fn(a->o.secret_ud, val, n);
    const uint8_t *v = (const uint8_t *)val;
    if (val && n >= SCRUB_SHORT_MIN && n < SCRUB_MIN && short_like(v, n)) {
        snap_scrub *ss = scrub_get(a);
        if (ss)
            ent_add(ss, FORM_SHORT, v, n);
        return;
    }
    snap_scrub *sc = val && n >= SCRUB_MIN ? scrub_get(a) : NULL;
    if (!sc)
        return;
    note_one(sc, v, n);
    /* The tokens inside it (a JWT in a JSON value, a session id after a
     * prefix), and its percent-decoded form. */
    for (size_t i = 0; i < n;) {
        while (i < n && !token_char(v[i]))
            i++;
        size_t b = i;
        while (i < n && token_char(v[i]))
            i++;
        if (i - b < n)
            note_one(sc, v + b, i - b);
    }
    if (memchr(v, '%', n) && n <= SCRUB_VALUE_MAX) {
        uint8_t *d = malloc(n);
        if (d) {
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                int h1 = i + 2 < n ? hexval(v[i + 1]) : -1, h2 = i + 2 < n ? hexval(v[i + 2]) : -1;
                if (v[i] == '%' && h1 >= 0 && h2 >= 0) {
                    d[k++] = (uint8_t)(h1 * 16 + h2);
                    i += 2;
                } else {
                    d[k++] = v[i];
                }
            }
            note_one(sc, d, k);
            base_memzero(d, n);
            free(d);
        }
    }
}

void snap_scrub_free(snap_agent *a)
{
    if (!a->scrub)
        return;
    free(a->scrub->e);
    base_memzero(a->scrub, sizeof *a->scrub);
    free(a->scrub);
    a->scrub = NULL;
}

static bool b64_char(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '+' || c == '/' || c == '=';
}

static bool alnum(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* v[i..i+L) is a whole token of v (n bytes): no letter or digit beside it. */
static bool whole_token(const uint8_t *v, size_t n, size_t i, size_t L)
{
    return (i == 0 || !alnum(v[i - 1])) && (i + L >= n || !alnum(v[i + L]));
}

/* Mark in mark[] the bytes of the original text behind every occurrence
 * in view v (n bytes; byte i came from [ms[i], me[i]) of the original, or
 * from i itself when ms is NULL) of an entry of a form in forms. */
static void scan_view(const snap_scrub *sc, const uint8_t *v, size_t n, const uint32_t *ms,
                      const uint32_t *me, unsigned forms, uint8_t *mark, size_t orig_n)
{
    for (size_t g = 0; g < sc->n;) {
        size_t L = sc->e[g].len, ge = g;
        bool any = false;
        while (ge < sc->n && sc->e[ge].len == L)
            any |= (sc->e[ge++].form & forms) != 0;
        if (!any || L > n) {
            g = ge;
            continue;
        }
        uint64_t pw = 1;
        for (size_t i = 0; i < L; i++)
            pw *= sc->base;
        uint64_t h = fingerprint(sc->base, v, L);
        for (size_t i = 0;; i++) {
            for (size_t j = g; j < ge; j++) {
                if (!(sc->e[j].form & forms) || sc->e[j].fp != h)
                    continue;
                if (L < SCRUB_MIN && !whole_token(v, n, i, L))
                    continue;
                uint8_t m[VAULT_SHA256_LEN];
                mac_of(sc, v + i, L, m);
                if (memcmp(m, sc->e[j].mac, sizeof m) != 0)
                    continue;
                /* Base64 at an unknown alignment: the characters beside
                 * the match carry bits of the value too. */
                size_t a = i, b = i + L;
                for (size_t k = 0; (sc->e[j].form & FORM_B64) && k < 2; k++) {
                    if (a > 0 && b64_char(v[a - 1]))
                        a--;
                    if (b < n && b64_char(v[b]))
                        b++;
                }
                size_t oa = ms ? ms[a] : a, ob = me ? me[b - 1] : b;
                for (size_t k = oa; k < ob && k < orig_n; k++)
                    mark[k] = 1;
                break;
            }
            if (i + L >= n)
                break;
            h = h * sc->base + v[i + L] - pw * v[i];
        }
        g = ge;
    }
}

/* s with every occurrence of a remembered value replaced (new string).
 * host_b..host_e: the bytes of a host (replaced with a name a host may
 * have); keep_host: those bytes are left alone (a granted host); shorts:
 * the short values (FORM_SHORT) too, where a whole token. */
static char *scrub_text(const snap_agent *a, const char *s, size_t host_b, size_t host_e,
                        bool keep_host, bool shorts)
{
    size_t n = strlen(s);
    const snap_scrub *sc = a->scrub;
    if (!sc || !sc->n || !n)
        return strdup(s);
    bool cut = n > SCRUB_TEXT_MAX;
    if (cut)
        n = SCRUB_TEXT_MAX;
    uint8_t *mark = calloc(n + 1, 1);
    uint8_t *dec = malloc(n + 1), *alt = malloc(n + 1);
    uint32_t *ms = calloc(n + 1, sizeof *ms), *me = calloc(n + 1, sizeof *me);
    char *out = NULL;
    if (!mark || !dec || !alt || !ms || !me)
        goto done;
    const uint8_t *u = (const uint8_t *)s;
    size_t dn = 0;
    for (size_t i = 0; i < n; i++) {
        int h1 = i + 2 < n ? hexval(u[i + 1]) : -1, h2 = i + 2 < n ? hexval(u[i + 2]) : -1;
        ms[dn] = (uint32_t)i;
        if (u[i] == '%' && h1 >= 0 && h2 >= 0) {
            dec[dn] = (uint8_t)(h1 * 16 + h2);
            i += 2;
        } else {
            dec[dn] = u[i];
        }
        me[dn++] = (uint32_t)(i + 1);
    }
    unsigned raw = FORM_RAW | (shorts ? FORM_SHORT : 0);
    scan_view(sc, u, n, NULL, NULL, raw, mark, n);
    scan_view(sc, dec, dn, ms, me, raw, mark, n);
    for (size_t i = 0; i < dn; i++)
        alt[i] = dec[i] >= 'A' && dec[i] <= 'Z' ? (uint8_t)(dec[i] - 'A' + 'a') : dec[i];
    scan_view(sc, alt, dn, ms, me, FORM_LOWER, mark, n);
    for (size_t i = 0; i < dn; i++)
        alt[i] = dec[i] == '-' ? '+' : dec[i] == '_' ? '/' : dec[i];
    scan_view(sc, alt, dn, ms, me, FORM_B64, mark, n);
    if (keep_host)
        for (size_t i = host_b; i < host_e && i < n; i++)
            mark[i] = 0;
    base_buf b = {0};
    for (size_t i = 0; i < n;) {
        if (!mark[i]) {
            base_buf_putc(&b, s[i]);
            i++;
            continue;
        }
        bool in_host = i >= host_b && i < host_e;
        base_buf_puts(&b, in_host ? "session-value" : "[session-value]");
        while (i < n && mark[i] && (i >= host_b && i < host_e) == in_host)
            i++;
    }
    if (cut)
        base_buf_printf(&b, "[%zu more bytes withheld]", strlen(s) - n);
    out = base_buf_take(&b, NULL);
done:
    if (dec)
        base_memzero(dec, n + 1);
    if (alt)
        base_memzero(alt, n + 1);
    free(dec);
    free(alt);
    free(mark);
    free(ms);
    free(me);
    return out;
}

/* The grant names the host of url (an origin or an asset origin). */
static bool host_granted(const snap_agent *a, const char *url)
{
    char o[300];
    return a->gate && (gate_url_allowed(a->gate, url) ||
                       (snap_url_origin(url, o, sizeof o) == 0 &&
                        gate_asset_allowed(a->gate, o)));
}

char *snap_scrub_url(const snap_agent *a, const char *url)
{
    if (!url)
        return NULL;
    url_parts up;
    size_t hb = 0, he = 0;
    if (url_parse(url, &up, NULL) == 0 && *up.host) {
        /* The host as written: between the authority's start (after any
         * userinfo) and the port or the path. */
        const char *h = strstr(url, "://");
        const char *at = h ? memchr(h + 3, '@', up.rest - (size_t)(h + 3 - url)) : NULL;
        hb = h ? (size_t)((at ? at + 1 : h + 3) - url) : 0;
        he = up.rest;
        const char *colon = hb ? memchr(url + hb, ':', he - hb) : NULL;
        if (colon && up.host[0] != '[')
            he = (size_t)(colon - url);
    }
    return scrub_text(a, url, hb, he, he > hb && host_granted(a, url), false);
}

char *snap_scrub_str(const snap_agent *a, const char *s)
{
    return s ? scrub_text(a, s, 0, 0, false, false) : NULL;
}

/* The host as it may be shown: a granted one or an IP address whole;
 * another by its last two labels, the rest "[withheld]". strict: with no
 * grant no host is granted (every one is allowed, so the page chose it). */
static void host_shown(const snap_agent *a, const char *url, const url_parts *up, bool strict,
                       char *out, size_t cap)
{
    const char *h = up->host;
    bool ip = h[0] == '[' || strspn(h, "0123456789.") == strlen(h);
    if (ip || (host_granted(a, url) && (!strict || gate_grant_get(a->gate)))) {
        snprintf(out, cap, "%s", h);
        return;
    }
    size_t n = strlen(h);
    if (n && h[n - 1] == '.')
        n--;
    size_t dots = 0, i = n;
    while (i > 0 && dots < 2) {
        i--;
        if (h[i] == '.')
            dots++;
    }
    if (dots < 2)
        snprintf(out, cap, "%.*s", (int)n, h);
    else
        snprintf(out, cap, "[withheld].%.*s", (int)(n - i - 1), h + i + 1);
}

static char *origin_shown(const snap_agent *a, const char *url, bool strict)
{
    url_parts up;
    int rc = url_parse(url ? url : "", &up, NULL);
    if (rc != 0 || !*up.host) {
        char s[40];
        snprintf(s, sizeof s, "%s:", rc == URL_EOPAQUE || rc == 0 ? up.scheme_name
                                                                   : "an unreadable URL");
        return snap_scrub_str(a, s);
    }
    char host[URL_HOST_MAX + 16], buf[URL_HOST_MAX + 64];
    host_shown(a, url, &up, strict, host, sizeof host);
    if (up.default_port)
        snprintf(buf, sizeof buf, "%s://%s", up.scheme_name, host);
    else
        snprintf(buf, sizeof buf, "%s://%s:%d", up.scheme_name, host, up.port);
    return snap_scrub_str(a, buf);
}

char *snap_request_origin_shown(const snap_agent *a, const char *url)
{
    return origin_shown(a, url, false);
}

char *snap_origin_shown_strict(const snap_agent *a, const char *url)
{
    return origin_shown(a, url, true);
}

char *snap_request_shown(const snap_agent *a, const char *method, const char *url,
                         const char *type)
{
    static const char *const M[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH",
                                    "OPTIONS", NULL};
    const char *m = "a request with another method";
    for (size_t i = 0; M[i]; i++)
        if (strcmp(M[i], method ? method : "GET") == 0)
            m = M[i];
    char *o = snap_request_origin_shown(a, url);
    url_parts up;
    size_t rest = url_parse(url ? url : "", &up, NULL) == 0 ? up.rest : 0;
    size_t n = url ? strlen(url) : 0;
    size_t withheld = rest <= n ? n - rest : n;
    char t[40] = "";
    if (type && *type)
        snprintf(t, sizeof t, "%.24s; ", type);
    for (char *p = t; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == ';' || *p == ' '))
            *p = '?';
    size_t cap = (o ? strlen(o) : 0) + 160;
    char *s = malloc(cap);
    if (s)
        snprintf(s, cap, "%s %s (%spath and query withheld, %zu byte%s)", m, o ? o : "",
                 t, withheld, withheld == 1 ? "" : "s");
    free(o);
    return s;
}

char *snap_request_audit_url(const snap_agent *a, const char *url)
{
    url_parts up;
    if (!url || url_parse(url, &up, NULL) != 0 || !*up.host)
        return snap_scrub_str(a, url ? url : "");
    char *o = snap_request_origin_shown(a, url);
    char *rest = snap_scrub_str(a, url + up.rest);
    size_t cap = (o ? strlen(o) : 0) + (rest ? strlen(rest) : 0) + 1;
    char *s = o && rest ? malloc(cap) : NULL;
    if (s)
        snprintf(s, cap, "%s%s", o, rest);
    free(o);
    free(rest);
    return s;
}

char *snap_url_shown(const snap_agent *a, const char *url)
{
    char *red = url ? snap_url_redact(url, false, NULL) : NULL;
    char *sc = red ? snap_scrub_url(a, red) : NULL;
    free(red);
    return sc;
}

static bool markup(char c)
{
    return c == '<' || c == '>' || c == '"' || c == '\'' || c == '=';
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Mark s[b..e) in mark[] when, trimmed of white space (and, for a word,
 * of the punctuation around it), it is a remembered secret field's value. */
static void secval_try(const snap_agent *a, const char *s, size_t b, size_t e, bool word,
                       uint8_t *mark)
{
    while (b < e && (blank(s[b]) || (word && strchr(".,;:!?()[]{}", s[b]))))
        b++;
    while (e > b && (blank(s[e - 1]) || (word && strchr(".,;:!?()[]{}", s[e - 1]))))
        e--;
    if (e > b && snap_secval_known(a, s + b, e - b))
        memset(mark + b, 1, e - b);
}

/* s (new; NULL when out of memory) with each run of text between markup
 * characters (< > " ' =), and each word of one, that is the value of a
 * secret field a build of the agent remembered (secval.c, any document:
 * snap_secval_known) written "[secret]", as a snapshot writes it. The page
 * side masks the fields present when axe runs (axe_run.c AXE_JS_MASK);
 * this takes a value shown after its field left the page (session 17's
 * left-over of R6-1). */
static char *secval_hide(const snap_agent *a, const char *s)
{
    size_t n = strlen(s);
    uint8_t *mark = calloc(n + 1, 1);
    if (!mark)
        return NULL;
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && !markup(s[e]))
            e++;
        secval_try(a, s, i, e, false, mark);
        for (size_t w = i; w < e;) {
            size_t we = w;
            while (we < e && !blank(s[we]))
                we++;
            secval_try(a, s, w, we, true, mark);
            w = we + 1;
        }
        i = e + 1;
    }
    base_buf b = {0};
    for (size_t i = 0; i < n;) {
        if (!mark[i]) {
            base_buf_putc(&b, s[i++]);
            continue;
        }
        base_buf_puts(&b, "[secret]");
        while (i < n && mark[i])
            i++;
    }
    if (!b.s && !b.oom)
        base_buf_puts(&b, "");
    free(mark);
    return base_buf_take(&b, NULL);
}

char *snap_text_shown(const snap_agent *a, const char *s)
{
    char *t = scrub_text(a, s ? s : "", 0, 0, false, true);
    if (!t || !a->secval)
        return t;
    char *h = secval_hide(a, t);
    base_memzero(t, strlen(t));
    free(t);
    return h;
}

bool snap_text_secret(const snap_agent *a, const char *w, size_t n)
{
    if (!a || !w || !n)
        return false;
    if (snap_secval_known(a, w, n))
        return true;
    if (!a->scrub || !a->scrub->n || n > SCRUB_TEXT_MAX)
        return false;
    char *s = malloc(n + 1);
    if (!s)
        return true;        /* fail closed: hidden */
    memcpy(s, w, n);
    s[n] = '\0';
    char *sc = scrub_text(a, s, 0, 0, false, false);
    bool hit = !sc || strcmp(sc, s) != 0;
    base_memzero(s, n);
    free(s);
    if (sc)
        base_memzero(sc, strlen(sc));
    free(sc);
    return hit;
}
