/*
 * json_parse.c — the strict RFC 8259 reader: bytes in, an arena-backed
 * json_doc out (or a json_err saying where and why).
 *
 * Implementation notes
 *
 * - One pass, no recursion: an explicit stack of open containers (frames),
 *   held on the C stack up to 64 levels and on the heap beyond. The frame
 *   keeps the container's last child so appending is O(1).
 * - The input is copied once into the first arena block, followed by
 *   JSON_PAD zero bytes. The NUL sentinel ends every scanner without
 *   bounds checks: it is not whitespace, not a digit, not a valid string
 *   byte, so each loop stops on it and then decides between "end of input"
 *   (p == end) and "bad character" (a real NUL inside the input).
 * - Strings are scanned eight bytes at a time for '"', '\\', control bytes
 *   and non-ASCII (json_str_special); pure-ASCII runs without escapes cost
 *   one load and a few ALU operations per word and are never copied. After
 *   the first escape the rest of the string is compacted in place (the
 *   write cursor trails the read cursor); the closing quote becomes the NUL.
 * - Numbers: up to 19 significant digits accumulate in a uint64. Integers
 *   that fit int64 are exact and converted to double by one conversion;
 *   decimals with a mantissa <= 2^53 and a power of ten within 10^±22 use
 *   Clinger's exact fast path (one correctly rounded multiply or divide).
 *   Anything else goes to strtod (correctly rounded in glibc and musl). The
 *   text handed to strtod is a validated JSON literal, so strtod cannot read
 *   past it; if the C library's locale uses another decimal point the
 *   literal is retried with that point (cdpgate never calls setlocale).
 * - Nodes are bump-allocated; the arena grows by blocks as big as
 *   everything allocated so far (capped at 64 MiB a step, so a huge string
 *   does not reserve gigabytes for nodes it will never need): O(log n)
 *   mallocs for ordinary documents.
 */
#include "json/json_int.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>

#define LOCAL_FRAMES 64
#define MIN_BLOCK ((size_t)16 << 10)
#define MAX_BLOCK ((size_t)64 << 20)   /* growth step cap, not a size limit */

typedef struct {
    json_val *ctr;
    json_val *last;
} frame;

typedef struct {
    char *base;            /* input copy */
    char *end;             /* base + len; *end == 0 */
    char *cur, *lim;       /* free space of the current block */
    json_doc *doc;
    json_err *err;
    unsigned flags;
} parser;

static void set_err(parser *ps, int code, const char *at, const char *msg)
{
    if (ps->err) {
        ps->err->code = code;
        ps->err->offset = at ? (size_t)(at - ps->base) : 0;
        ps->err->msg = msg;
    }
}

/* Add a block able to hold at least need bytes after its header. */
static int grow(parser *ps, size_t need)
{
    json_doc *doc = ps->doc;
    size_t size = doc->memsize;
    if (size < MIN_BLOCK)
        size = MIN_BLOCK;
    if (size > MAX_BLOCK)
        size = MAX_BLOCK;
    if (size < need + sizeof(json_blk) + 16)
        size = need + sizeof(json_blk) + 16;
    json_blk *b = malloc(size);
    if (!b)
        return -1;
    b->next = doc->blocks;
    b->size = size;
    doc->blocks = b;
    doc->memsize += size;
    /* Block data starts 16-aligned after the header. */
    ps->cur = (char *)b + ((sizeof(json_blk) + 15) & ~(size_t)15);
    ps->lim = (char *)b + size;
    return 0;
}

static inline json_val *new_node(parser *ps)
{
    if ((size_t)(ps->lim - ps->cur) < sizeof(json_val) &&
        grow(ps, sizeof(json_val)) != 0)
        return NULL;
    json_val *v = (json_val *)(void *)ps->cur;
    ps->cur += sizeof(json_val);
    return v;
}

static inline bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline char *skip_ws(char *p)
{
    while (is_ws((unsigned char)*p))
        p++;
    return p;
}

static inline unsigned hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return 0x10000;        /* stays > 0xFFFF whatever it is shifted by */
}

/* Four hex digits at p, or a value > 0xFFFF when any is not hex. */
static inline unsigned hex4(const char *p)
{
    return hexval((unsigned char)p[0]) << 12 | hexval((unsigned char)p[1]) << 8 |
           hexval((unsigned char)p[2]) << 4 | hexval((unsigned char)p[3]);
}

static inline char *put_utf8(char *d, unsigned cp)
{
    if (cp < 0x80) {
        *d++ = (char)cp;
    } else if (cp < 0x800) {
        *d++ = (char)(0xC0 | cp >> 6);
        *d++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *d++ = (char)(0xE0 | cp >> 12);
        *d++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *d++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *d++ = (char)(0xF0 | cp >> 18);
        *d++ = (char)(0x80 | (cp >> 12 & 0x3F));
        *d++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *d++ = (char)(0x80 | (cp & 0x3F));
    }
    return d;
}

/* Bad byte inside a string at p: report the precise reason. */
static char *string_error(parser *ps, char *p)
{
    unsigned char c = (unsigned char)*p;
    if (p >= ps->end)
        set_err(ps, JSON_ESYNTAX, p, "unterminated string");
    else if (c < 0x20)
        set_err(ps, JSON_ESYNTAX, p, "control character in string");
    else
        set_err(ps, JSON_EUTF8, p, "invalid UTF-8 in string");
    return NULL;
}

/* Decode one escape at s (s[0] == '\\') into d. Returns the new read
 * position and advances *dp, or NULL on error. A UTF-16 surrogate that is
 * not part of a valid pair decodes as U+FFFD. */
static char *unescape(parser *ps, char *s, char **dp)
{
    char *d = *dp;
    switch (s[1]) {
    case '"': *d++ = '"'; break;
    case '\\': *d++ = '\\'; break;
    case '/': *d++ = '/'; break;
    case 'b': *d++ = '\b'; break;
    case 'f': *d++ = '\f'; break;
    case 'n': *d++ = '\n'; break;
    case 'r': *d++ = '\r'; break;
    case 't': *d++ = '\t'; break;
    case 'u': {
        unsigned cp = hex4(s + 2);
        if (cp > 0xFFFF) {
            set_err(ps, JSON_ESYNTAX, s, "invalid \\u escape");
            return NULL;
        }
        s += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (s[0] == '\\' && s[1] == 'u' &&
                (lo = hex4(s + 2)) >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s += 6;
            } else {
                cp = 0xFFFD;
            }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = 0xFFFD;
        }
        *dp = put_utf8(d, cp);
        return s;
    }
    default:
        set_err(ps, JSON_ESYNTAX, s, s + 1 >= ps->end ? "unterminated string"
                                                      : "invalid escape");
        return NULL;
    }
    *dp = d;
    return s + 2;
}

/* Scan the string whose contents start at p (just after the opening quote).
 * On success returns the position after the closing quote, with the
 * decoded contents at p, NUL-terminated, *len bytes long. */
static char *parse_string_long(parser *ps, char *p, size_t *len)
{
    char *start = p;
    for (;;) {
        /* Two words per round; the second load is safe because the NUL
         * sentinel was not in the first. */
        uint64_t m = json_str_special(json_load64(p));
        if (m == 0) {
            m = json_str_special(json_load64(p + 8));
            if (m == 0) {
                p += 16;
                continue;
            }
            p += 8;
        }
        p += JSON_FIRST_FLAG(m);
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            *p = 0;
            *len = (size_t)(p - start);
            return p + 1;
        }
        if (c == '\\')
            break;
        if (c < 0x20)
            return string_error(ps, p);
        if (c >= 0x80) {
            size_t n = json_utf8_seq((const uint8_t *)p, (size_t)(ps->end - p));
            if (n == 0)
                return string_error(ps, p);
            p += n;
        } else {
            p++;   /* only without JSON_FIRST_FLAG */
        }
    }

    /* Escapes: compact the rest in place, d trailing p. */
    char *d = p;
    for (;;) {
        uint64_t w = json_load64(p);
        uint64_t m = json_str_special(w);
        if (m == 0) {
            memcpy(d, &w, 8);
            d += 8;
            p += 8;
            continue;
        }
        size_t k = JSON_FIRST_FLAG(m);
        memmove(d, p, k);
        d += k;
        p += k;
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            *d = 0;
            *len = (size_t)(d - start);
            return p + 1;
        }
        if (c == '\\') {
            p = unescape(ps, p, &d);
            if (!p)
                return NULL;
        } else if (c < 0x20) {
            return string_error(ps, p);
        } else if (c >= 0x80) {
            size_t n = json_utf8_seq((const uint8_t *)p, (size_t)(ps->end - p));
            if (n == 0)
                return string_error(ps, p);
            memmove(d, p, n);
            d += n;
            p += n;
        } else {
            *d++ = (char)c;
            p++;
        }
    }
}

/* Most keys and many values are short plain ASCII: the first word holds
 * the closing quote. That case stays inline; the rest is a call. */
static inline char *parse_string(parser *ps, char *p, size_t *len)
{
#if JSON_HAVE_FIRST_FLAG
    uint64_t m = json_str_special(json_load64(p));
    if (m) {
        size_t k = JSON_FIRST_FLAG(m);
        if (p[k] == '"') {
            p[k] = 0;
            *len = k;
            return p + k + 1;
        }
    }
#endif
    return parse_string_long(ps, p, len);
}

static const double pow10_tab[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

static inline bool is_digit(unsigned char c)
{
    return (unsigned)(c - '0') < 10;
}

/* strtod on a validated literal [s, e), tolerant of a foreign locale. */
static double slow_strtod(const char *s, const char *e, bool *ok)
{
    char *stop;
    double d = strtod(s, &stop);
    *ok = true;
    if (stop == e)
        return d;
    /* Only a locale whose decimal point is not '.' gets here. */
    const char *dp = localeconv()->decimal_point;
    size_t dpl = strlen(dp), n = (size_t)(e - s);
    char *tmp = malloc(n + dpl + 1);
    if (!tmp) {
        *ok = false;
        return 0;
    }
    size_t j = 0;
    for (const char *q = s; q < e; q++) {
        if (*q == '.') {
            memcpy(tmp + j, dp, dpl);
            j += dpl;
        } else {
            tmp[j++] = *q;
        }
    }
    tmp[j] = 0;
    d = strtod(tmp, NULL);
    free(tmp);
    return d;
}

/* One number's error: the code, the message and where. */
static const char *num_fail(json_number_err *e, int code, const char *at, const char *why)
{
    e->code = code;
    e->at = at;
    e->why = why;
    return NULL;
}

/* The reader's number parser, which json_stream.c shares (json_int.h). */
const char *json_number_read(const char *p, json_number *out, json_number_err *err)
{
    const char *start = p;
    bool neg = *p == '-';
    p += neg;
    uint64_t m = 0;
    int sig = 0;                 /* significant digits in m */
    bool trunc = false;          /* digits beyond what m holds */
    int64_t exp10 = 0;

    out->is_int = false;
    out->i = 0;
    if (*p == '0') {
        p++;
        if (is_digit((unsigned char)*p)) {
            return num_fail(err, JSON_ESYNTAX, p, "leading zero in number");
        }
    } else if (is_digit((unsigned char)*p)) {
        const char *d0 = p;
        while (is_digit((unsigned char)*p))
            m = m * 10 + (unsigned)(*p++ - '0');
        sig = (int)(p - d0);
        if (sig > 19) {
            trunc = true;        /* m wrapped: only strtod can tell */
        }
    } else {
        return num_fail(err, JSON_ESYNTAX, p, "invalid number");
    }

    if (*p != '.' && *p != 'e' && *p != 'E') {
        if (!trunc) {
            out->d = neg ? -(double)m : (double)m;
            if (!neg && m <= (uint64_t)INT64_MAX) {
                out->is_int = true;
                out->i = (int64_t)m;
            } else if (neg && m <= (uint64_t)INT64_MAX + 1) {
                out->is_int = true;
                out->i = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN
                                                      : -(int64_t)m;
            }
            return p;
        }
        goto slow;
    }

    if (*p == '.') {
        p++;
        if (!is_digit((unsigned char)*p)) {
            return num_fail(err, JSON_ESYNTAX, p, "digit expected after '.'");
        }
        while (is_digit((unsigned char)*p)) {
            unsigned dg = (unsigned)(*p++ - '0');
            if (m == 0 && dg == 0) {
                exp10--;             /* leading zeros are not significant */
            } else if (sig < 19) {
                m = m * 10 + dg;
                sig++;
                exp10--;
            } else {
                trunc = true;
            }
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        bool eneg = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        if (!is_digit((unsigned char)*p)) {
            return num_fail(err, JSON_ESYNTAX, p, "digit expected in exponent");
        }
        int64_t e = 0;
        while (is_digit((unsigned char)*p)) {
            if (e < 1000000)
                e = e * 10 + (*p - '0');
            p++;
        }
        exp10 += eneg ? -e : e;
    }
    if (!trunc && m == 0) {
        out->d = neg ? -0.0 : 0.0;
        return p;
    }
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    if (!trunc && m <= ((uint64_t)1 << 53) && exp10 >= -22 && exp10 <= 22) {
        double d = (double)m;
        d = exp10 < 0 ? d / pow10_tab[-exp10] : d * pow10_tab[exp10];
        out->d = neg ? -d : d;
        return p;
    }
#endif
slow:
    /* p is at the end of the literal on every path that gets here. */
    {
        bool ok;
        double d = slow_strtod(start, p, &ok);
        if (!ok) {
            return num_fail(err, JSON_ENOMEM, start, "out of memory");
        }
        if (isinf(d)) {
            return num_fail(err, JSON_ERANGE, start, "number out of range");
        }
        out->d = d;
    }
    return p;
}

/* Number literal at p into v. Returns the position after it, or NULL. */
static char *parse_number(parser *ps, char *p, json_val *v)
{
    json_number n;
    json_number_err e;
    v->type = JSON_NUMBER;
    const char *end = json_number_read(p, &n, &e);
    if (!end) {
        set_err(ps, e.code, e.at, e.why);
        return NULL;
    }
    v->u.num.d = n.d;
    if (n.is_int) {
        v->flags = JV_INT;
        v->u.num.i = n.i;
    }
    return p + (end - p);
}

static int keycmp(const void *a, const void *b)
{
    const json_val *x = *(const json_val *const *)a;
    const json_val *y = *(const json_val *const *)b;
    size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
    int c = memcmp(x->key, y->key, n);
    if (c)
        return c;
    if (x->keylen != y->keylen)
        return x->keylen < y->keylen ? -1 : 1;
    /* Equal keys: document order (keys point into the input copy). */
    return x->key < y->key ? -1 : x->key > y->key;
}

/* JSON_NO_DUPLICATES: check an object once it is complete. Reports the
 * earliest key that repeats an earlier one. Small objects are compared
 * pairwise; big ones sorted (so a hostile object costs n log n). */
static int check_dups(parser *ps, const json_val *obj)
{
    size_t n = obj->u.ctr.n;
    const char *dup = NULL;
    if (n < 2)
        return 0;
    if (n <= 16) {
        for (const json_val *a = obj->u.ctr.first; a; a = a->next)
            for (const json_val *b = a->next; b; b = b->next)
                if (a->keylen == b->keylen &&
                    memcmp(a->key, b->key, a->keylen) == 0 &&
                    (!dup || b->key < dup))
                    dup = b->key;
    } else {
        const json_val **v = malloc(n * sizeof *v);
        if (!v) {
            set_err(ps, JSON_ENOMEM, NULL, "out of memory");
            return -1;
        }
        size_t i = 0;
        for (const json_val *a = obj->u.ctr.first; a; a = a->next)
            v[i++] = a;
        qsort(v, n, sizeof *v, keycmp);
        for (i = 1; i < n; i++)
            if (v[i]->keylen == v[i - 1]->keylen &&
                memcmp(v[i]->key, v[i - 1]->key, v[i]->keylen) == 0 &&
                (!dup || v[i]->key < dup))
                dup = v[i]->key;
        free(v);
    }
    if (dup) {
        /* The key's offset: its opening quote in the input. */
        set_err(ps, JSON_EDUPKEY, dup - 1, "duplicate key");
        return -1;
    }
    return 0;
}

/* Frame stack growth beyond the local array. */
static frame *grow_frames(frame *stk, frame *local, size_t *cap)
{
    size_t ncap = *cap * 2;
    frame *n = malloc(ncap * sizeof *n);
    if (!n)
        return NULL;
    memcpy(n, stk, *cap * sizeof *n);
    if (stk != local)
        free(stk);
    *cap = ncap;
    return n;
}

/* fnlen: allow: the parser's state machine (one loop over the input and an
 * explicit stack of open containers), which reads best whole. */
json_doc *json_parse(const char *buf, size_t len, const json_opts *opts,
                     json_err *err)
{
    size_t max_size = opts && opts->max_size ? opts->max_size
                                             : JSON_DEFAULT_MAX_SIZE;
    unsigned max_depth = opts && opts->max_depth ? opts->max_depth
                                                 : JSON_DEFAULT_MAX_DEPTH;
    parser ps = {0};
    ps.err = err;
    ps.flags = opts ? opts->flags : 0;
    if (err) {
        err->code = JSON_OK;
        err->offset = 0;
        err->msg = NULL;
    }
    if (len > max_size) {
        if (err) {
            err->code = JSON_ESIZE;
            err->offset = max_size;
            err->msg = "input larger than max_size";
        }
        return NULL;
    }
    if (!buf && len) {
        set_err(&ps, JSON_ESYNTAX, NULL, "no input");
        return NULL;
    }

    /* First block: header, doc, input copy + padding, then room for nodes
     * (about one node per 16 input bytes, which fits typical CDP traffic;
     * the arena grows if not). */
    if (len > SIZE_MAX / 4) {
        set_err(&ps, JSON_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    size_t hdr = (sizeof(json_blk) + 15) & ~(size_t)15;
    size_t docsz = (sizeof(json_doc) + 15) & ~(size_t)15;
    size_t copysz = (len + JSON_PAD + 15) & ~(size_t)15;
    size_t nodes = len / 16 * sizeof(json_val) + 4 * sizeof(json_val);
    if (nodes > MAX_BLOCK)
        nodes = MAX_BLOCK;
    size_t first = hdr + docsz + copysz + nodes;
    json_blk *b = malloc(first);
    if (!b) {
        set_err(&ps, JSON_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    b->next = NULL;
    b->size = first;
    json_doc *doc = (json_doc *)(void *)((char *)b + hdr);
    doc->root = NULL;
    doc->blocks = b;
    doc->memsize = first;
    doc->secret = (ps.flags & JSON_SECRET) != 0;
    ps.doc = doc;
    ps.base = (char *)doc + docsz;
    if (len)
        memcpy(ps.base, buf, len);
    memset(ps.base + len, 0, copysz - len);
    ps.end = ps.base + len;
    ps.cur = ps.base + copysz;
    ps.lim = (char *)b + first;

    frame local[LOCAL_FRAMES];
    frame *stk = local;
    size_t cap = LOCAL_FRAMES;
    size_t depth = 0;           /* open containers; stk[depth-1] is top */
    frame *top = NULL;
    const char *key = NULL;
    size_t keylen = 0;
    char *p = skip_ws(ps.base);
    json_val *v;

    if (p == ps.base && len >= 3 && (unsigned char)p[0] == 0xEF &&
        (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF) {
        set_err(&ps, JSON_ESYNTAX, p, "byte order mark not allowed");
        goto fail;
    }
    if (p == ps.end) {
        set_err(&ps, JSON_ESYNTAX, p, "empty input");
        goto fail;
    }

value:
    v = new_node(&ps);
    if (!v) {
        set_err(&ps, JSON_ENOMEM, p, "out of memory");
        goto fail;
    }
    v->flags = 0;
    v->keylen = (uint32_t)keylen;
    v->key = key;
    v->next = NULL;
    key = NULL;
    keylen = 0;
    if (top) {
        if (top->last)
            top->last->next = v;
        else
            top->ctr->u.ctr.first = v;
        top->last = v;
        top->ctr->u.ctr.n++;
    } else {
        doc->root = v;
    }
    switch (*p) {
    case '"': {
        size_t n;
        char *s = p + 1;
        p = parse_string(&ps, s, &n);
        if (!p)
            goto fail;
        v->type = JSON_STRING;
        v->u.str.s = s;
        v->u.str.len = n;
        goto after;
    }
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        p = parse_number(&ps, p, v);
        if (!p)
            goto fail;
        goto after;
    case '{':
    case '[': {
        bool obj = *p == '{';
        v->type = obj ? JSON_OBJECT : JSON_ARRAY;
        v->u.ctr.first = NULL;
        v->u.ctr.n = 0;
        if (depth >= max_depth) {
            set_err(&ps, JSON_EDEPTH, p, "nesting too deep");
            goto fail;
        }
        if (depth == cap) {
            frame *n = grow_frames(stk, local, &cap);
            if (!n) {
                set_err(&ps, JSON_ENOMEM, p, "out of memory");
                goto fail;
            }
            stk = n;
        }
        top = &stk[depth++];
        top->ctr = v;
        top->last = NULL;
        p = skip_ws(p + 1);
        if (*p == (obj ? '}' : ']')) {
            p++;
            goto close;
        }
        if (obj)
            goto member;
        goto value;
    }
    case 't':
        if (memcmp(p, "true", 4) != 0)
            goto bad_literal;
        v->type = JSON_TRUE;
        p += 4;
        goto after;
    case 'f':
        if (memcmp(p, "false", 5) != 0)
            goto bad_literal;
        v->type = JSON_FALSE;
        p += 5;
        goto after;
    case 'n':
        if (memcmp(p, "null", 4) != 0)
            goto bad_literal;
        v->type = JSON_NULL;
        p += 4;
        goto after;
    default:
        set_err(&ps, JSON_ESYNTAX, p,
                p >= ps.end ? "unexpected end of input" : "value expected");
        goto fail;
    }

bad_literal:
    set_err(&ps, JSON_ESYNTAX, p, "invalid literal");
    goto fail;

member:
    /* p is at what must be a key. */
    if (*p != '"') {
        set_err(&ps, JSON_ESYNTAX, p,
                p >= ps.end ? "unexpected end of input" : "string key expected");
        goto fail;
    }
    {
        char *s = p + 1;
        p = parse_string(&ps, s, &keylen);
        if (!p)
            goto fail;
        if (keylen > UINT32_MAX) {
            set_err(&ps, JSON_ESIZE, s - 1, "key too long");
            goto fail;
        }
        key = s;
    }
    if (*p != ':') {
        p = skip_ws(p);
        if (*p != ':') {
            set_err(&ps, JSON_ESYNTAX, p, "':' expected");
            goto fail;
        }
    }
    p = skip_ws(p + 1);
    goto value;

after:
    if (!top)
        goto done;
    if (*p != ',' && *p != '}' && *p != ']')
        p = skip_ws(p);
    if (*p == ',') {
        p = skip_ws(p + 1);
        if (top->ctr->type == JSON_OBJECT)
            goto member;
        goto value;
    }
    if (*p == (top->ctr->type == JSON_OBJECT ? '}' : ']')) {
        p++;
        goto close;
    }
    set_err(&ps, JSON_ESYNTAX, p,
            p >= ps.end ? "unexpected end of input"
            : top->ctr->type == JSON_OBJECT ? "',' or '}' expected"
                                            : "',' or ']' expected");
    goto fail;

close:
    if ((ps.flags & JSON_NO_DUPLICATES) && top->ctr->type == JSON_OBJECT &&
        check_dups(&ps, top->ctr) != 0)
        goto fail;
    depth--;
    top = depth ? &stk[depth - 1] : NULL;
    goto after;

done:
    p = skip_ws(p);
    if (p != ps.end) {
        set_err(&ps, JSON_ESYNTAX, p, "unexpected data after the value");
        goto fail;
    }
    if (stk != local)
        free(stk);
    return doc;

fail:
    if (stk != local)
        free(stk);
    json_doc_free(doc);
    return NULL;
}
