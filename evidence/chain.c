/*
 * chain.c — the records: building one (fields scrubbed of every secret
 * the host gave), sealing it into the chain (prev, digest) and appending
 * it to records.jsonl. The sealing and the scrubbing are pure.
 *
 * A secret is searched raw and in each encoding a text may hold it in
 * (percent-encoded four ways, JSON-escaped two, HTML-escaped four:
 * evidence_secret_add), byte-exact.
 *
 * A string field is scrubbed whole, then cut to EVIDENCE_STR_MAX bytes (so
 * a cut never leaves half a secret). The sealed line is searched once more
 * for every secret: a hit there (a secret that equals part of the record's
 * own structure: a key, a number, a digest) withholds the record, written
 * instead as kind "withheld" with its original kind.
 */
#include "evidence/evidence_int.h"
#include "vault/vault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char MASK[] = "[secret]";

const char *evidence_strerror(int code)
{
    switch (code) {
    case EVIDENCE_OK: return "ok";
    case EVIDENCE_ENOMEM: return "out of memory";
    case EVIDENCE_EIO: return "file error";
    case EVIDENCE_EINVAL: return "invalid argument";
    case EVIDENCE_EBROKEN: return "evidence does not verify";
    case EVIDENCE_ELIMIT: return "over a size limit";
    default: return "unknown error";
    }
}

void evidence_hash_hex(const void *data, size_t n, char out[EVIDENCE_HEX_LEN + 1])
{
    static const char hx[] = "0123456789abcdef";
    uint8_t d[VAULT_SHA256_LEN];
    vault_sha256(data, n, d);
    for (size_t i = 0; i < sizeof d; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[EVIDENCE_HEX_LEN] = '\0';
}

char *evidence_line_seal(const char *body, size_t n, const char prev_hex[EVIDENCE_HEX_LEN + 1],
                         size_t *len)
{
    base_buf b = {0};
    base_buf_put(&b, body, n);
    base_buf_puts(&b, ",\"prev\":\"");
    base_buf_put(&b, prev_hex, EVIDENCE_HEX_LEN);
    base_buf_puts(&b, "\"");
    if (b.oom) {
        base_buf_free(&b);
        return NULL;
    }
    char d[EVIDENCE_HEX_LEN + 1];
    evidence_hash_hex(b.s, b.len, d);
    base_buf_puts(&b, ",\"digest\":\"");
    base_buf_puts(&b, d);
    base_buf_puts(&b, "\"}");
    return base_buf_take(&b, len);
}

void evidence_time_now(char out[32])
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    time_t s = ts.tv_sec;
    if (!gmtime_r(&s, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm)) {
        snprintf(out, 32, "1970-01-01T00:00:00.000Z");
        return;
    }
    size_t k = strlen(out);
    snprintf(out + k, 32 - k, ".%03dZ", (int)(ts.tv_nsec / 1000000));
}

bool evidence_key_ok(const char *k)
{
    size_t n = k ? strlen(k) : 0;
    if (n == 0 || n > 32)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
            return false;
    return true;
}

/* ---- secrets ---- */

static int secret_push(evidence *e, const char *v, size_t n)
{
    for (size_t i = 0; i < e->nsec; i++)
        if (e->seclen[i] == n && memcmp(e->sec[i], v, n) == 0)
            return 0;
    if (e->nsec >= EVIDENCE_SECRETS_MAX)
        return 0;
    if (e->nsec == e->capsec) {
        size_t cap = e->capsec ? e->capsec * 2 : 16;
        char **s = realloc(e->sec, cap * sizeof *s);
        if (!s)
            return EVIDENCE_ENOMEM;
        e->sec = s;
        size_t *l = realloc(e->seclen, cap * sizeof *l);
        if (!l)
            return EVIDENCE_ENOMEM;
        e->seclen = l;
        e->capsec = cap;
    }
    char *c = malloc(n + 1);
    if (!c)
        return EVIDENCE_ENOMEM;
    memcpy(c, v, n);
    c[n] = '\0';
    e->sec[e->nsec] = c;
    e->seclen[e->nsec++] = n;
    e->first[(unsigned char)v[0]] = true;
    return 0;
}

static bool unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == '~';
}

/* The encodings a value is also searched in (red team s16, "seen, minor":
 * a value in an a11y report's JSON or HTML text, a form's query). */
enum {
    F_URIC,         /* encodeURIComponent's: ! ' ( ) * kept */
    F_PCT,          /* all but the unreserved, upper-case hex */
    F_PCT_LOWER,    /* the same with lower-case hex */
    F_FORM,         /* application/x-www-form-urlencoded: '+' for a space */
    F_JSON,         /* a JSON string's inside (json_w, JSON.stringify) */
    F_JSON_SLASH,   /* the same with "\/" (PHP's json_encode) */
    F_HTML,         /* < > & " ' as &lt; &gt; &amp; &quot; &#39; */
    F_HTML_X27,     /* the same with &#x27; (Python's html.escape) */
    F_HTML_ATTR,    /* an attribute value as a browser serialises it: & " */
    F_HTML_TEXT,    /* a text node as a browser serialises it: & < > */
    F_COUNT
};

static void pct_putc(base_buf *b, int f, unsigned char c)
{
    bool keep = f == F_FORM   ? (unreserved(c) && c != '~') || c == '*'
              : f == F_URIC ? unreserved(c) || (c && strchr("!'()*", c))
                            : unreserved(c);
    if (f == F_FORM && c == ' ')
        base_buf_putc(b, '+');
    else if (keep)
        base_buf_putc(b, (char)c);
    else
        base_buf_printf(b, f == F_PCT_LOWER ? "%%%02x" : "%%%02X", c);
}

static void json_putc(base_buf *b, int f, unsigned char c)
{
    char esc = 0;
    switch (c) {
    case '"': esc = '"'; break;
    case '\\': esc = '\\'; break;
    case '\b': esc = 'b'; break;
    case '\f': esc = 'f'; break;
    case '\n': esc = 'n'; break;
    case '\r': esc = 'r'; break;
    case '\t': esc = 't'; break;
    case '/': esc = f == F_JSON_SLASH ? '/' : 0; break;
    default: break;
    }
    if (esc) {
        base_buf_putc(b, '\\');
        base_buf_putc(b, esc);
    } else if (c < 0x20) {
        base_buf_printf(b, "\\u%04x", c);
    } else {
        base_buf_putc(b, (char)c);
    }
}

static void html_putc(base_buf *b, int f, unsigned char c)
{
    bool all = f == F_HTML || f == F_HTML_X27;
    if (c == '&')
        base_buf_puts(b, "&amp;");
    else if ((c == '<' || c == '>') && (all || f == F_HTML_TEXT))
        base_buf_puts(b, c == '<' ? "&lt;" : "&gt;");
    else if (c == '"' && (all || f == F_HTML_ATTR))
        base_buf_puts(b, "&quot;");
    else if (c == '\'' && all)
        base_buf_puts(b, f == F_HTML ? "&#39;" : "&#x27;");
    else
        base_buf_putc(b, (char)c);
}

/* v (n bytes) in encoding f, into b (cleared first). */
static void form_of(base_buf *b, int f, const char *v, size_t n)
{
    b->len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (f <= F_FORM)
            pct_putc(b, f, c);
        else if (f <= F_JSON_SLASH)
            json_putc(b, f, c);
        else
            html_putc(b, f, c);
    }
}

int evidence_secret_add(evidence *e, const char *v, size_t n)
{
    if (!e || !v || n < EVIDENCE_SECRET_MIN || n > EVIDENCE_STR_MAX)
        return 0;
    int rc = secret_push(e, v, n);
    /* Each encoding that differs from the value (secret_push drops one
     * already known). */
    base_buf b = {0};
    for (int f = 0; !rc && f < F_COUNT; f++) {
        form_of(&b, f, v, n);
        if (b.oom)
            break;
        if (b.len != n || memcmp(b.s, v, n) != 0)
            rc = secret_push(e, b.s, b.len);
        base_memzero(b.s, b.len);
    }
    if (b.s)
        base_memzero(b.s, b.cap);
    base_buf_free(&b);
    return b.oom ? EVIDENCE_ENOMEM : rc;
}

/* The index of the longest secret that starts at s[0] (n bytes left), or
 * -1. */
static long secret_at(const evidence *e, const char *s, size_t n)
{
    long best = -1;
    for (size_t i = 0; i < e->nsec; i++)
        if (e->seclen[i] <= n && e->sec[i][0] == s[0] &&
            memcmp(e->sec[i], s, e->seclen[i]) == 0 &&
            (best < 0 || e->seclen[i] > e->seclen[best]))
            best = (long)i;
    return best;
}

char *evidence_scrub(const evidence *e, const char *s, size_t n, size_t *outlen)
{
    base_buf b = {0};
    base_buf_reserve(&b, n);
    for (size_t i = 0; i < n;) {
        long k = e->first[(unsigned char)s[i]] ? secret_at(e, s + i, n - i) : -1;
        if (k >= 0) {
            base_buf_puts(&b, MASK);
            i += e->seclen[k];
        } else {
            base_buf_putc(&b, s[i++]);
        }
    }
    if (!b.s && !b.oom)
        base_buf_puts(&b, "");
    return base_buf_take(&b, outlen);
}

/* Whether a secret of at least min bytes occurs in s[0..n). */
static bool has_secret(const evidence *e, const char *s, size_t n, size_t min)
{
    for (size_t i = 0; i < n; i++) {
        if (!e->first[(unsigned char)s[i]])
            continue;
        for (size_t k = 0; k < e->nsec; k++)
            if (e->seclen[k] >= min && e->seclen[k] <= n - i && e->sec[k][0] == s[i] &&
                memcmp(e->sec[k], s + i, e->seclen[k]) == 0)
                return true;
    }
    return false;
}

/* ---- building a record ---- */

static const char *const RESERVED[] = {"n", "t", "kind", "prev", "digest", NULL};

static bool field_ok(evidence *e, const char *key)
{
    if (!e || !e->building || !evidence_key_ok(key))
        return false;
    for (size_t i = 0; RESERVED[i]; i++)
        if (strcmp(key, RESERVED[i]) == 0)
            return false;
    return true;
}

int evidence_rec_begin(evidence *e, const char *kind)
{
    if (!e || !evidence_key_ok(kind))
        return EVIDENCE_EINVAL;
    json_w_reset(&e->w);
    char t[32];
    evidence_time_now(t);
    json_w_obj_begin(&e->w);
    json_w_key(&e->w, "n");
    json_w_uint(&e->w, e->n + 1);
    json_w_key(&e->w, "t");
    json_w_str(&e->w, t);
    json_w_key(&e->w, "kind");
    json_w_str(&e->w, kind);
    e->building = true;
    return 0;
}

/* Cut s (n bytes) back to at most max bytes of whole UTF-8 characters. */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    size_t k = max;
    while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
        k--;
    return k;
}

/* Write the string s (n bytes) scrubbed and cut. */
static void put_scrubbed(evidence *e, const char *s, size_t n)
{
    size_t m = 0;
    char *c = evidence_scrub(e, s, n, &m);
    if (!c) {
        json_w_str(&e->w, "[withheld: out of memory]");
        return;
    }
    size_t k = utf8_cut(c, m, EVIDENCE_STR_MAX);
    if (k < m) {
        memcpy(c + k, " [cut]", 7);
        k += 6;
    }
    json_w_strn(&e->w, c, k);
    free(c);
}

void evidence_rec_strn(evidence *e, const char *key, const char *s, size_t n)
{
    if (!field_ok(e, key))
        return;
    json_w_key(&e->w, key);
    if (!s)
        json_w_null(&e->w);
    else
        put_scrubbed(e, s, n);
}

void evidence_rec_str(evidence *e, const char *key, const char *s)
{
    evidence_rec_strn(e, key, s, s ? strlen(s) : 0);
}

void evidence_rec_int(evidence *e, const char *key, int64_t v)
{
    if (!field_ok(e, key))
        return;
    json_w_key(&e->w, key);
    /* A number the page chose (a line number, a count) that spells a
     * secret, short ones included, is written as a masked string. */
    char d[24];
    int dn = snprintf(d, sizeof d, "%lld", (long long)v);
    if (dn > 0 && has_secret(e, d, (size_t)dn, 0))
        json_w_str(&e->w, MASK);
    else
        json_w_int(&e->w, v);
}

void evidence_rec_bool(evidence *e, const char *key, bool v)
{
    if (!field_ok(e, key))
        return;
    json_w_key(&e->w, key);
    json_w_bool(&e->w, v);
}

/* Write v again with every string (and key) scrubbed. */
static void put_val(evidence *e, const json_val *v, unsigned depth)
{
    size_t n = 0;
    const char *s;
    switch (json_type_of(v)) {
    case JSON_STRING:
        s = json_str(v, &n);
        put_scrubbed(e, s, n);
        return;
    case JSON_ARRAY:
    case JSON_OBJECT:
        if (depth > 32) {
            json_w_str(&e->w, "[withheld: too deep]");
            return;
        }
        bool obj = json_type_of(v) == JSON_OBJECT;
        obj ? json_w_obj_begin(&e->w) : json_w_arr_begin(&e->w);
        for (const json_val *c = json_first(v); c; c = json_next(c)) {
            if (obj) {
                const char *k = json_key(c, &n);
                char *ks = evidence_scrub(e, k, n, &n);
                json_w_keyn(&e->w, ks ? ks : "[withheld]", ks ? n : 10);
                free(ks);
            }
            put_val(e, c, depth + 1);
        }
        obj ? json_w_obj_end(&e->w) : json_w_arr_end(&e->w);
        return;
    default:
        json_w_val(&e->w, v);
    }
}

void evidence_rec_json(evidence *e, const char *key, const char *json, size_t n)
{
    if (!field_ok(e, key))
        return;
    json_w_key(&e->w, key);
    json_opts o = {.max_size = EVIDENCE_LINE_MAX, .max_depth = 64};
    json_doc *d = json ? json_parse(json, n, &o, NULL) : NULL;
    if (!d) {
        json_w_null(&e->w);
        return;
    }
    put_val(e, json_doc_root(d), 0);
    json_doc_free(d);
}

/* Append the sealed line to records.jsonl and move the chain on. */
static int append_line(evidence *e, char *line, size_t len, evidence_err *err)
{
    line[len] = '\n';
    int rc = base_write_all(e->fd, line, len + 1, BASE_NO_DEADLINE, 0, NULL);
    line[len] = '\0';
    if (rc != 0)
        return evidence_fail(err, EVIDENCE_EIO, "evidence: records.jsonl in %s: write failed",
                             e->dir);
    evidence_hash_hex(line, len, e->prev);
    e->n++;
    return 0;
}

/* The record that stands for one withheld because a secret matched its
 * structure. */
static char *withheld_line(evidence *e, const char *body, size_t *len)
{
    json_w w;
    json_w_init(&w);
    char t[32];
    evidence_time_now(t);
    json_w_obj_begin(&w);
    json_w_key(&w, "n");
    json_w_uint(&w, e->n + 1);
    json_w_key(&w, "t");
    json_w_str(&w, t);
    json_w_key(&w, "kind");
    json_w_str(&w, "withheld");
    json_w_key(&w, "why");
    json_w_str(&w, "a secret's bytes equal part of the record's structure");
    const char *k = strstr(body, "\"kind\":\"");
    if (k) {
        k += 8;
        json_w_key(&w, "of");
        json_w_strn(&w, k, strcspn(k, "\""));
    }
    json_w_obj_end(&w);
    size_t n = 0;
    char *b = json_w_error(&w) ? NULL : json_w_take(&w, &n);
    json_w_free(&w);
    char *line = b ? evidence_line_seal(b, n - 1, e->prev, len) : NULL;
    free(b);
    return line;
}

int evidence_rec_end(evidence *e, evidence_err *err)
{
    if (!e || !e->building)
        return evidence_fail(err, EVIDENCE_EINVAL, "evidence: no record begun");
    e->building = false;
    json_w_obj_end(&e->w);
    size_t n = 0;
    int we = json_w_error(&e->w);
    char *body = we ? NULL : json_w_take(&e->w, &n);
    json_w_reset(&e->w);
    if (!body)
        return evidence_fail(err, we == JSON_ENOMEM || !we ? EVIDENCE_ENOMEM : EVIDENCE_EINVAL,
                             "evidence: a record could not be built");
    size_t len = 0;
    char *line = evidence_line_seal(body, n - 1, e->prev, &len);
    if (line && has_secret(e, line, len, EVIDENCE_SECRET_STRUCT_MIN)) {
        free(line);
        line = withheld_line(e, body, &len);
    }
    free(body);
    if (!line || len + 1 > EVIDENCE_LINE_MAX) {
        free(line);
        return evidence_fail(err, line ? EVIDENCE_ELIMIT : EVIDENCE_ENOMEM,
                             "evidence: a record could not be sealed");
    }
    char *grown = realloc(line, len + 2);
    if (!grown) {
        free(line);
        return evidence_fail(err, EVIDENCE_ENOMEM, "evidence: out of memory");
    }
    int rc = append_line(e, grown, len, err);
    free(grown);
    return rc;
}
