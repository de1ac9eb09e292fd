/*
 * json_write.c — the streaming writer (json_w) and number formatting.
 *
 * The writer appends to one growing buffer; it tracks, per open container,
 * whether an element was written yet (for commas) and whether it is an
 * object (a key must come before each value). The first error sticks: every
 * later call is a no-op and json_w_take() returns NULL, so callers check
 * once at the end. The buffer stays NUL-terminated while there is no error.
 *
 * Implementation notes
 *
 * - Strings are scanned a word at a time like the reader does; clean runs
 *   are copied with one memcpy. Only '"', '\\', control characters and
 *   U+2028/U+2029 are escaped; other UTF-8 is copied after validation.
 * - Doubles: integral values below 2^53 print as integers; values m/10^k
 *   with m < 2^53 of at most 15 digits that read back exactly print from
 *   m directly (at most 15 significant digits means no shorter text can
 *   read back to the same double, by DBL_DIG). Everything else tries
 *   %.15g, %.16g, %.17g and keeps the first that strtod reads back, then
 *   normalises the text (exponent without '+' and leading zeros, '.' as the
 *   decimal point whatever the locale).
 */
#include "json/json_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void json_w_init(json_w *w)
{
    memset(w, 0, sizeof *w);
}

void json_w_init_secret(json_w *w)
{
    json_w_init(w);
    w->secret = 1;
}

void json_w_free(json_w *w)
{
    if (w->secret && w->buf)
        base_memzero(w->buf, w->cap);
    free(w->buf);
    json_w_init(w);
}

void json_w_reset(json_w *w)
{
    char *buf = w->buf;
    size_t cap = w->cap, max = w->max;
    uint8_t secret = w->secret;
    if (secret && buf)
        base_memzero(buf, cap);
    json_w_init(w);
    w->buf = buf;
    w->cap = cap;
    w->max = max;
    w->secret = secret;
    if (buf)
        buf[0] = 0;
}

int json_w_error(const json_w *w)
{
    if (w->err)
        return w->err;
    return w->depth || w->want_val ? JSON_EVALUE : JSON_OK;
}

/* Start w over empty, keeping its limit and secrecy: the buffer freed
 * (zeroed first when secret) when free_buf, else left to whoever took it. */
static void restart(json_w *w, bool free_buf)
{
    size_t max = w->max;
    uint8_t secret = w->secret;
    if (free_buf)
        json_w_free(w);
    else
        json_w_init(w);
    w->max = max;
    w->secret = secret;
}

char *json_w_take(json_w *w, size_t *len)
{
    if (json_w_error(w) != JSON_OK || !w->buf) {
        /* Nothing written yet is not an error: hand over "". */
        char *out = json_w_error(w) == JSON_OK ? calloc(1, 1) : NULL;
        if (len)
            *len = 0;
        restart(w, true);
        return out;
    }
    char *out = w->buf;
    if (len)
        *len = w->len;
    restart(w, false);
    return out;
}

/* Make room for n more bytes plus the NUL, plus slack bytes that may be
 * scribbled on but do not count as output (nor against max). */
static bool grow(json_w *w, size_t n, size_t slack)
{
    if (w->err)
        return false;
    if (n > SIZE_MAX / 4 - w->len) {
        w->err = JSON_ENOMEM;
        return false;
    }
    size_t need = w->len + n + slack + 1;
    if (w->max && w->len + n > w->max) {
        w->err = JSON_ESIZE;
        return false;
    }
    if (need <= w->cap)
        return true;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < need)
        cap *= 2;
    char *b;
    if (w->secret) {
        /* realloc may move the text and free the old copy unwiped. */
        b = malloc(cap);
        if (b && w->buf) {
            memcpy(b, w->buf, w->len + 1);
            base_memzero(w->buf, w->cap);
            free(w->buf);
        }
    } else {
        b = realloc(w->buf, cap);
    }
    if (!b) {
        w->err = JSON_ENOMEM;
        return false;
    }
    w->buf = b;
    w->cap = cap;
    return true;
}

static inline bool reserve_slack(json_w *w, size_t n, size_t slack)
{
    if (!w->err && w->cap - w->len > n + slack &&
        (!w->max || w->len + n <= w->max))
        return true;
    return grow(w, n, slack);
}

static inline bool reserve(json_w *w, size_t n)
{
    return reserve_slack(w, n, 0);
}

/* Append without the NUL: emit() terminates once at the end. */
static inline void put_nt(json_w *w, const void *s, size_t n)
{
    if (!reserve(w, n))
        return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static inline void put1_nt(json_w *w, char c)
{
    if (!reserve(w, 1))
        return;
    w->buf[w->len++] = c;
}

static inline void put(json_w *w, const void *s, size_t n)
{
    put_nt(w, s, n);
    if (!w->err)
        w->buf[w->len] = 0;
}

static inline void put1(json_w *w, char c)
{
    put1_nt(w, c);
    if (!w->err)
        w->buf[w->len] = 0;
}

/* Bookkeeping before any value: the comma, or consuming the pending key.
 * Returns false (with the sticky error set) when a value cannot go here. */
static bool begin_value(json_w *w)
{
    if (w->err)
        return false;
    if (w->depth == 0) {
        if (w->len != 0) {
            w->err = JSON_EVALUE;     /* a second top-level value */
            return false;
        }
        return true;
    }
    unsigned t = w->depth - 1;
    if (w->in_obj[t]) {
        if (!w->want_val) {
            w->err = JSON_EVALUE;     /* value without a key */
            return false;
        }
        w->want_val = 0;
        return true;
    }
    if (!w->first[t])
        put1(w, ',');
    w->first[t] = 0;
    return !w->err;
}

static void open_ctr(json_w *w, char c, bool obj)
{
    if (!begin_value(w))
        return;
    if (w->depth >= JSON_W_MAX_DEPTH) {
        w->err = JSON_EVALUE;
        return;
    }
    put1(w, c);
    w->first[w->depth] = 1;
    w->in_obj[w->depth] = obj;
    w->depth++;
}

static void close_ctr(json_w *w, char c, bool obj)
{
    if (w->err)
        return;
    if (w->depth == 0 || w->in_obj[w->depth - 1] != obj || w->want_val) {
        w->err = JSON_EVALUE;
        return;
    }
    put1(w, c);
    w->depth--;
}

void json_w_obj_begin(json_w *w) { open_ctr(w, '{', true); }
void json_w_obj_end(json_w *w) { close_ctr(w, '}', true); }
void json_w_arr_begin(json_w *w) { open_ctr(w, '[', false); }
void json_w_arr_end(json_w *w) { close_ctr(w, ']', false); }

static const char hexdig[] = "0123456789abcdef";

/* Quoted, escaped string. Invalid UTF-8 sets JSON_EVALUE.
 * Room for the unescaped case plus 8 bytes of slack is reserved up front,
 * so every step may store a whole word at d: a word is copied while it is
 * scanned (a short tail is padded with 'A', which needs no escape), and
 * only its clean prefix counts. Each escape re-reserves for itself plus the
 * rest of the string. Invariant: room after d >= (end - p) + 2 + 8. */
static void put_string(json_w *w, const char *str, size_t n)
{
    if (!reserve_slack(w, n + 2, 8))
        return;
    char *d = w->buf + w->len;
    *d++ = '"';
    const uint8_t *p = (const uint8_t *)str, *end = p + n;
    while (p < end) {
        uint64_t v, m;
        while (end - p >= 8) {
            v = json_load64(p);
            m = json_str_special(v);
            memcpy(d, &v, 8);
            if (m) {
                size_t k = JSON_FIRST_FLAG(m);
                p += k;
                d += k;
                goto special;
            }
            p += 8;
            d += 8;
        }
        if (p >= end)
            break;
        {
            size_t rem = (size_t)(end - p);
            v = JSON_ONES * 'A';
            memcpy(&v, p, rem);
            m = json_str_special(v);
            memcpy(d, &v, 8);
            if (m == 0) {
                p += rem;
                d += rem;
                break;
            }
            size_t k = JSON_FIRST_FLAG(m);  /* < rem: the padding is clean */
            p += k;
            d += k;
        }
    special:;
        uint8_t c = *p;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            *d++ = (char)c;                /* only without JSON_FIRST_FLAG */
            p++;
            continue;
        }
        char esc[6];
        size_t elen = 2, skip = 1;
        if (c >= 0x80) {
            size_t q = json_utf8_seq(p, (size_t)(end - p));
            if (q == 0) {
                w->err = JSON_EVALUE;
                return;
            }
            if (q != 3 || c != 0xE2 || p[1] != 0x80 || (p[2] & 0xFE) != 0xA8) {
                memcpy(d, p, q);
                d += q;
                p += q;
                continue;
            }
            memcpy(esc, p[2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
            elen = 6;
            skip = 3;
        } else {
            esc[0] = '\\';
            switch (c) {
            case '"': esc[1] = '"'; break;
            case '\\': esc[1] = '\\'; break;
            case '\b': esc[1] = 'b'; break;
            case '\f': esc[1] = 'f'; break;
            case '\n': esc[1] = 'n'; break;
            case '\r': esc[1] = 'r'; break;
            case '\t': esc[1] = 't'; break;
            default:
                memcpy(esc, "\\u00", 4);
                esc[4] = hexdig[c >> 4];
                esc[5] = hexdig[c & 15];
                elen = 6;
            }
        }
        size_t o = (size_t)(d - w->buf);
        size_t need = elen + (size_t)(end - p) - skip + 1;
        if (w->cap - o <= need + 8 || (w->max && o + need > w->max)) {
            w->len = o;
            if (!reserve_slack(w, need, 8))
                return;
            d = w->buf + o;
        }
        memcpy(d, esc, elen);
        d += elen;
        p += skip;
    }
    *d++ = '"';
    w->len = (size_t)(d - w->buf);
    w->buf[w->len] = 0;
}

void json_w_keyn(json_w *w, const char *key, size_t len)
{
    if (w->err)
        return;
    if (!key || w->depth == 0 || !w->in_obj[w->depth - 1] || w->want_val) {
        w->err = JSON_EVALUE;
        return;
    }
    unsigned t = w->depth - 1;
    if (!w->first[t])
        put1(w, ',');
    w->first[t] = 0;
    put_string(w, key, len);
    put1(w, ':');
    w->want_val = 1;
}

void json_w_key(json_w *w, const char *key)
{
    json_w_keyn(w, key, key ? strlen(key) : 0);
}

void json_w_strn(json_w *w, const char *s, size_t len)
{
    if (!s) {
        json_w_null(w);
        return;
    }
    if (begin_value(w))
        put_string(w, s, len);
}

void json_w_str(json_w *w, const char *s)
{
    json_w_strn(w, s, s ? strlen(s) : 0);
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits of u, right-aligned ending at end; returns the start. */
static char *utoa_rev(uint64_t u, char *end)
{
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        end -= 2;
        memcpy(end, digit_pairs + 2 * r, 2);
    }
    if (u >= 10) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * u, 2);
    } else {
        *--end = (char)('0' + u);
    }
    return end;
}

void json_w_uint(json_w *w, uint64_t v)
{
    char tmp[24];
    char *s = utoa_rev(v, tmp + sizeof tmp);
    if (begin_value(w))
        put(w, s, (size_t)(tmp + sizeof tmp - s));
}

void json_w_int(json_w *w, int64_t v)
{
    char tmp[24];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char *s = utoa_rev(u, tmp + sizeof tmp);
    if (v < 0)
        *--s = '-';
    if (begin_value(w))
        put(w, s, (size_t)(tmp + sizeof tmp - s));
}

static const double pow10_tab[16] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15
};

/* m / 10^k as text into out; m has at most 15 digits. */
static int fmt_scaled(bool neg, uint64_t m, int k, char *out)
{
    char tmp[24];
    char *d = utoa_rev(m, tmp + sizeof tmp);
    int nd = (int)(tmp + sizeof tmp - d);
    int o = 0;
    if (neg)
        out[o++] = '-';
    if (nd <= k) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = nd; i < k; i++)
            out[o++] = '0';
        memcpy(out + o, d, (size_t)nd);
        o += nd;
    } else {
        memcpy(out + o, d, (size_t)(nd - k));
        o += nd - k;
        if (k > 0) {
            out[o++] = '.';
            memcpy(out + o, d + nd - k, (size_t)k);
            o += k;
        }
    }
    out[o] = 0;
    return o;
}

int json_fmt_double(double v, char *out)
{
    if (isnan(v) || isinf(v))
        return -1;
    bool neg = signbit(v) != 0;
    double a = neg ? -v : v;
    if (a == 0) {
        memcpy(out, neg ? "-0" : "0", neg ? 3 : 2);
        return neg ? 2 : 1;
    }
    /* Short decimals: a = m / 10^k exactly as strtod would read it back.
     * (x may be integral at a k larger than needed because the multiply
     * rounds: drop trailing zeros.) Below 1e-6 the exponent form reads
     * better, as in JavaScript. */
    if (a < 1e15 && a >= 1e-6) {
        for (int k = 0; k <= 15; k++) {
            double x = a * pow10_tab[k];
            if (x >= 1e15)
                break;
            if (x == (double)(uint64_t)x && x / pow10_tab[k] == a) {
                uint64_t m = (uint64_t)x;
                while (k > 0 && m % 10 == 0) {
                    m /= 10;
                    k--;
                }
                return fmt_scaled(neg, m, k, out);
            }
        }
    }
    if (a >= 1e15 && a < 9007199254740992.0 && a == (double)(uint64_t)a)
        return fmt_scaled(neg, (uint64_t)a, 0, out);
    /* %.15g is the shortest for normal doubles (DBL_DIG); subnormals
     * have fewer bits and may need fewer digits. */
    char tmp[48];
    for (int prec = a < 2.2250738585072014e-308 ? 1 : 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    /* Normalise: '.' for any decimal point, "e+05" -> "e5", "e-07" -> "e-7". */
    int o = 0;
    const char *p = tmp;
    bool point = false;
    while (*p && *p != 'e' && *p != 'E') {
        if ((*p >= '0' && *p <= '9') || *p == '-') {
            out[o++] = *p;
        } else if (!point) {
            out[o++] = '.';
            point = true;
        }
        p++;
    }
    if (*p) {
        out[o++] = 'e';
        p++;
        if (*p == '-')
            out[o++] = *p++;
        else if (*p == '+')
            p++;
        while (*p == '0' && p[1])
            p++;
        while (*p)
            out[o++] = *p++;
    }
    out[o] = 0;
    return o;
}

void json_w_num(json_w *w, double v)
{
    char tmp[48];
    if (w->err)
        return;
    int n = json_fmt_double(v, tmp);
    if (n < 0) {
        w->err = JSON_EVALUE;
        return;
    }
    if (begin_value(w))
        put(w, tmp, (size_t)n);
}

void json_w_bool(json_w *w, bool v)
{
    if (begin_value(w))
        put(w, v ? "true" : "false", v ? 4 : 5);
}

void json_w_null(json_w *w)
{
    if (begin_value(w))
        put(w, "null", 4);
}

void json_w_raw(json_w *w, const char *json, size_t len, bool validate)
{
    if (w->err)
        return;
    if (!json || len == 0) {
        w->err = JSON_EVALUE;
        return;
    }
    if (validate) {
        json_err e;
        json_opts o = {0, 0, w->secret ? JSON_SECRET : 0};
        json_doc *d = json_parse(json, len, &o, &e);
        if (!d) {
            w->err = e.code == JSON_ENOMEM ? JSON_ENOMEM : JSON_EVALUE;
            return;
        }
        json_doc_free(d);
    }
    if (begin_value(w))
        put(w, json, len);
}

static void put_int(json_w *w, int64_t v)
{
    char tmp[24];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char *s = utoa_rev(u, tmp + sizeof tmp);
    if (v < 0)
        *--s = '-';
    put_nt(w, s, (size_t)(tmp + sizeof tmp - s));
}

/* Serialise a parsed subtree without the per-call state machine: the tree
 * is well-formed by construction, so commas and colons go in directly.
 * depth counts the writer's open containers plus ours. */
static void emit(json_w *w, const json_val *v, unsigned depth)
{
    switch ((json_type)v->type) {
    case JSON_NULL: put_nt(w, "null", 4); return;
    case JSON_FALSE: put_nt(w, "false", 5); return;
    case JSON_TRUE: put_nt(w, "true", 4); return;
    case JSON_NUMBER:
        /* -0 parses as the integer 0; keep its sign via the double. */
        if ((v->flags & JV_INT) && !(v->u.num.i == 0 && signbit(v->u.num.d))) {
            put_int(w, v->u.num.i);
        } else {
            char tmp[48];
            int n = json_fmt_double(v->u.num.d, tmp);
            if (n < 0)
                w->err = JSON_EVALUE;
            else
                put_nt(w, tmp, (size_t)n);
        }
        return;
    case JSON_STRING:
        put_string(w, v->u.str.s, v->u.str.len);
        return;
    case JSON_ARRAY:
    case JSON_OBJECT:
        break;
    }
    bool obj = v->type == JSON_OBJECT;
    if (depth >= JSON_W_MAX_DEPTH) {
        w->err = JSON_EVALUE;
        return;
    }
    put1_nt(w, obj ? '{' : '[');
    for (const json_val *c = v->u.ctr.first; c && !w->err; c = c->next) {
        if (c != v->u.ctr.first)
            put1_nt(w, ',');
        if (obj) {
            put_string(w, c->key, c->keylen);
            put1_nt(w, ':');
        }
        emit(w, c, depth + 1);
    }
    put1_nt(w, obj ? '}' : ']');
}

void json_w_val(json_w *w, const json_val *v)
{
    if (w->err)
        return;
    if (!v) {
        json_w_null(w);
        return;
    }
    if (!begin_value(w))
        return;
    emit(w, v, w->depth);
    if (!w->err)
        w->buf[w->len] = 0;
}

void json_w_members(json_w *w, const json_val *obj)
{
    if (!json_is(obj, JSON_OBJECT))
        return;
    for (const json_val *m = json_first(obj); m; m = json_next(m)) {
        size_t kl;
        const char *k = json_key(m, &kl);
        json_w_keyn(w, k, kl);
        json_w_val(w, m);
    }
}

char *json_write(const json_val *v, size_t *len)
{
    json_w w;
    json_w_init(&w);
    json_w_val(&w, v);
    char *out = json_w_take(&w, len);
    json_w_free(&w);
    return out;
}
