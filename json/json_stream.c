/*
 * json_stream.c — the push tokenizer: bytes in, in pieces of any size,
 * events out through a callback; no document is built.
 *
 * It accepts and rejects exactly what json_parse() does (without
 * JSON_NO_DUPLICATES), with the same error codes and offsets; the tests feed
 * every JSONTestSuite file split at every byte and compare, and a fuzz target
 * compares on arbitrary input.
 *
 * Implementation notes
 *  - One state enum for the grammar position, plus sub-states for strings
 *    (escape, \u digits, a high surrogate waiting for its low half) and
 *    numbers (the JSON number grammar as a small automaton). Nothing is
 *    recursive; open containers are one byte each on a growing stack.
 *  - Any token may be cut anywhere by the piece boundaries, so every token
 *    that needs its text (keys, strings, numbers) is collected in s->buf,
 *    and literals are matched byte by byte. A string value longer than
 *    max_string is handed out in pieces that end on character boundaries
 *    (so each piece is valid UTF-8 on its own); a key is always whole.
 *  - A byte is "reprocessed" (the loop continues without advancing) when
 *    it ends a token that has no terminator of its own: a number, or a
 *    pending high surrogate not followed by "\u".
 *  - Numbers are converted with the same algorithm as json_parse (exact
 *    integers, Clinger's fast path, else strtod), so both agree to the bit.
 *  - UTF-8 is validated as in json_utf8_seq: the allowed range of the first
 *    continuation byte depends on the lead byte (no overlongs, surrogates or
 *    code points above U+10FFFF); a bad sequence is reported at its lead.
 *    ASCII runs inside strings are scanned eight bytes at a time
 *    (json_str_special, as json_parse does).
 *  - JSON_STREAM_SKIP: the same machine runs over the skipped value (so it
 *    is validated exactly as before: grammar, escapes, UTF-8, depth,
 *    numbers' range, size), but emit() hands nothing to the callback and
 *    string bytes are not copied. `skip` says which: SK_ON while inside the
 *    value; after_value() at the depth the skip began ends it, SK_LAST when
 *    the value's own last event is still to be swallowed (a member's
 *    value), SK_OFF when the container's END is to be reported (a skip
 *    asked at its BEGIN).
 */
#include "json/json_int.h"

#include <stdlib.h>

#define DEFAULT_MAX_STRING ((size_t)64 << 10)

enum {
    S_VALUE,        /* a value must come (top level, after ':' or ',' in an array) */
    S_ARR_FIRST,    /* after '[': a value or ']' */
    S_OBJ_FIRST,    /* after '{': a key or '}' */
    S_KEY,          /* after ',' in an object: a key */
    S_COLON,        /* after a key */
    S_AFTER,        /* after a value inside a container: ',' or the close */
    S_DONE,         /* the top-level value is complete: only whitespace */
    S_STR,          /* inside a string (key or value) */
    S_NUM,
    S_LIT,
    S_ERR,
};

/* String sub-states. */
enum { STR_PLAIN, STR_ESC, STR_U, STR_HI, STR_HI_BS };

/* Skipping (JSON_STREAM_SKIP). */
enum { SK_OFF, SK_ON, SK_LAST };

/* Number sub-states: the grammar -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
enum { N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

struct json_stream {
    json_stream_fn fn;
    void *ud;
    size_t max_size, max_string;
    unsigned max_depth;
    size_t off;                 /* bytes consumed before the current piece */
    int state;
    json_err err;
    uint8_t *stk;               /* 1 = object, 0 = array */
    size_t depth, stk_cap;
    size_t tok_off;             /* offset of the current token's first byte */
    char *buf;                  /* text of the current key, string or number */
    size_t len, cap;
    bool oom;
    /* strings */
    bool is_key;
    int ss;
    unsigned u_val, u_n, hi;
    bool hi_pending;            /* the \u being read follows a high surrogate */
    size_t esc_off;
    unsigned u8_need;           /* continuation bytes still due */
    uint8_t u8_lo, u8_hi;       /* range of the next one */
    size_t u8_off;              /* offset of the sequence's lead byte */
    /* numbers and literals */
    int ns;
    const char *lit;
    unsigned lit_i, lit_n;
    int lit_ev;
    /* skipping */
    int skip;                   /* SK_* */
    bool skip_keep_end;         /* asked at a BEGIN: its END is reported */
    size_t skip_depth;          /* depth of the skipped value */
};

/* ---- small helpers ---- */

static int fail(json_stream *s, int code, size_t off, const char *msg)
{
    if (s->state != S_ERR) {
        s->state = S_ERR;
        s->err.code = code;
        s->err.offset = off;
        s->err.msg = msg;
    }
    return s->err.code;
}

/* Room for extra more bytes plus a NUL in s->buf. */
static bool reserve(json_stream *s, size_t extra)
{
    if (s->len + extra + 1 <= s->cap)
        return true;
    size_t n = s->cap ? s->cap : 256;
    while (n < s->len + extra + 1) {
        if (n > SIZE_MAX / 2)
            return false;
        n *= 2;
    }
    char *nb = realloc(s->buf, n);
    if (!nb)
        return false;
    s->buf = nb;
    s->cap = n;
    return true;
}

static bool put(json_stream *s, const void *p, size_t n)
{
    if (s->skip && s->state == S_STR)
        return true;            /* a skipped string's text is not kept */
    if (!reserve(s, n))
        return false;
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    return true;
}

static bool put_cp(json_stream *s, unsigned cp)
{
    char tmp[4];
    size_t n;
    if (cp < 0x80) {
        tmp[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        tmp[0] = (char)(0xC0 | cp >> 6);
        tmp[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        tmp[0] = (char)(0xE0 | cp >> 12);
        tmp[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        tmp[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        tmp[0] = (char)(0xF0 | cp >> 18);
        tmp[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        tmp[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        tmp[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return put(s, tmp, n);
}

static int emit(json_stream *s, json_event *ev, size_t off)
{
    if (s->skip) {
        if (s->skip == SK_LAST)
            s->skip = SK_OFF;
        return 0;
    }
    ev->offset = off;
    int r = s->fn ? s->fn(s->ud, ev) : 0;
    if (r == JSON_STREAM_SKIP) {
        /* A KEY's value, or a container's contents (the BEGIN is
         * emitted before the depth goes up, so both skip at s->depth). */
        if (ev->type == JSON_EV_KEY || ev->type == JSON_EV_OBJ_BEGIN ||
            ev->type == JSON_EV_ARR_BEGIN) {
            s->skip = SK_ON;
            s->skip_keep_end = ev->type != JSON_EV_KEY;
            s->skip_depth = s->depth;
        }
        return 0;
    }
    if (r)
        return fail(s, r, off, "stopped by the consumer");
    return 0;
}

static int emit_simple(json_stream *s, int type, size_t off)
{
    json_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = (json_ev_type)type;
    ev.depth = (unsigned)s->depth;
    return emit(s, &ev, off);
}

/* The text in s->buf as a key, a string piece or the last piece. */
static int emit_text(json_stream *s, int type)
{
    json_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = (json_ev_type)type;
    ev.depth = (unsigned)s->depth;
    if (!reserve(s, 0))
        return fail(s, JSON_ENOMEM, s->tok_off, "out of memory");
    s->buf[s->len] = 0;
    ev.str = s->buf;
    ev.len = s->len;
    s->len = 0;
    return emit(s, &ev, s->tok_off);
}

/* A value ended (its last event is emitted next): where the grammar goes
 * next, and whether a skip ends with it. */
static void after_value(json_stream *s)
{
    s->state = s->depth ? S_AFTER : S_DONE;
    if (s->skip && s->depth == s->skip_depth)
        s->skip = s->skip_keep_end ? SK_OFF : SK_LAST;
}

static inline bool is_ws(unsigned c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline unsigned hexval(unsigned c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return 16;
}

/* ---- numbers: json_parse.c's reader (json_number_read) ---- */

static bool is_digit(unsigned char c)
{
    return (unsigned)(c - '0') < 10;
}

/* Value of the validated literal s[0..n) (NUL-terminated) into ev. 0, or
 * JSON_ENOMEM or JSON_ERANGE. */
static int num_value(const char *s, size_t n, json_event *ev)
{
    json_number v;
    json_number_err e;
    const char *end = json_number_read(s, &v, &e);
    if (!end)
        return e.code;
    if ((size_t)(end - s) != n)
        return JSON_ESYNTAX;    /* the tokenizer validated it: cannot happen */
    ev->num = v.d;
    ev->is_int = v.is_int;
    ev->i = v.i;
    return 0;
}

static int end_number(json_stream *s)
{
    json_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = JSON_EV_NUM;
    ev.depth = (unsigned)s->depth;
    if (!reserve(s, 0))
        return fail(s, JSON_ENOMEM, s->tok_off, "out of memory");
    s->buf[s->len] = 0;
    int r = num_value(s->buf, s->len, &ev);
    s->len = 0;
    if (r == JSON_ENOMEM)
        return fail(s, r, s->tok_off, "out of memory");
    if (r)
        return fail(s, r, s->tok_off, "number out of range");
    after_value(s);
    return emit(s, &ev, s->tok_off);
}

/* ---- lifecycle ---- */

json_stream *json_stream_new(const json_stream_opts *o, json_stream_fn fn, void *ud)
{
    json_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->fn = fn;
    s->ud = ud;
    s->max_size = o && o->max_size ? o->max_size : JSON_DEFAULT_MAX_SIZE;
    s->max_depth = o && o->max_depth ? o->max_depth : JSON_DEFAULT_MAX_DEPTH;
    s->max_string = o && o->max_string ? o->max_string : DEFAULT_MAX_STRING;
    json_stream_reset(s);
    return s;
}

void json_stream_reset(json_stream *s)
{
    s->off = 0;
    s->state = S_VALUE;
    s->err.code = JSON_OK;
    s->err.offset = 0;
    s->err.msg = NULL;
    s->depth = 0;
    s->len = 0;
    s->skip = SK_OFF;
    /* Give back a big buffer left by a long token. */
    if (s->cap > ((size_t)1 << 20)) {
        free(s->buf);
        s->buf = NULL;
        s->cap = 0;
    }
}

void json_stream_free(json_stream *s)
{
    if (!s)
        return;
    free(s->stk);
    free(s->buf);
    free(s);
}

const json_err *json_stream_error(const json_stream *s) { return &s->err; }
bool json_stream_done(const json_stream *s) { return s->state == S_DONE; }

/* ---- the tokenizer ---- */

/* Start a value at byte c (offset off). Returns 0 or an error. */
static int start_value(json_stream *s, unsigned c, size_t off)
{
    s->tok_off = off;
    switch (c) {
    case '"':
        s->state = S_STR;
        s->ss = STR_PLAIN;
        s->is_key = false;
        s->len = 0;
        s->u8_need = 0;
        s->hi_pending = false;
        return 0;
    case '{':
    case '[':
        if (s->depth >= s->max_depth)
            return fail(s, JSON_EDEPTH, off, "nesting too deep");
        if (s->depth == s->stk_cap) {
            size_t n = s->stk_cap ? s->stk_cap * 2 : 64;
            uint8_t *ns = realloc(s->stk, n);
            if (!ns)
                return fail(s, JSON_ENOMEM, off, "out of memory");
            s->stk = ns;
            s->stk_cap = n;
        }
        s->stk[s->depth] = c == '{';
        s->state = c == '{' ? S_OBJ_FIRST : S_ARR_FIRST;
        {
            int r = emit_simple(s, c == '{' ? JSON_EV_OBJ_BEGIN : JSON_EV_ARR_BEGIN, off);
            s->depth++;
            return r;
        }
    case 't':
    case 'f':
    case 'n':
        s->state = S_LIT;
        s->lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
        s->lit_n = c == 'f' ? 5 : 4;
        s->lit_i = 1;
        s->lit_ev = c == 't' ? JSON_EV_TRUE : c == 'f' ? JSON_EV_FALSE : JSON_EV_NULL;
        return 0;
    default:
        if (c == '-' || is_digit((unsigned char)c)) {
            s->state = S_NUM;
            s->ns = c == '-' ? N_MINUS : c == '0' ? N_ZERO : N_INT;
            s->len = 0;
            char ch = (char)c;
            if (!put(s, &ch, 1))
                return fail(s, JSON_ENOMEM, off, "out of memory");
            return 0;
        }
        return fail(s, JSON_ESYNTAX, off, "value expected");
    }
}

/* A key's opening quote at off. */
static void begin_key(json_stream *s, size_t off)
{
    s->state = S_STR;
    s->ss = STR_PLAIN;
    s->is_key = true;
    s->len = 0;
    s->u8_need = 0;
    s->hi_pending = false;
    s->tok_off = off;
}

static int close_ctr(json_stream *s, size_t off)
{
    bool obj = s->stk[s->depth - 1];
    s->depth--;
    after_value(s);
    return emit_simple(s, obj ? JSON_EV_OBJ_END : JSON_EV_ARR_END, off);
}

/* One code point from a \u escape (after any surrogate pairing). */
static bool put_escape_cp(json_stream *s, unsigned cp)
{
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        s->hi = cp;
        s->ss = STR_HI;
        return true;
    }
    s->ss = STR_PLAIN;
    return put_cp(s, cp >= 0xDC00 && cp <= 0xDFFF ? 0xFFFD : cp);
}

/* Bytes p[0..n) inside a string, in sub-state PLAIN: copy the run up to the
 * next special byte, validating UTF-8. Returns the bytes consumed (the
 * special byte is not) or (size_t)-1 after an error. */
static size_t str_run(json_stream *s, const uint8_t *p, size_t n, size_t base)
{
    size_t lim = n;
    if (!s->is_key && !s->skip) {
        size_t room = s->max_string > s->len ? s->max_string - s->len : 1;
        if (lim > room)
            lim = room;
    }
    size_t i = 0;
    unsigned need = s->u8_need;
    /* Past lim only to finish a character: pieces end on boundaries. */
    while (i < n && (i < lim || need)) {
        if (!need) {
            /* Plain ASCII eight bytes at a time, up to the first byte
             * that needs a look ('"', '\\', control, non-ASCII). */
            while (i + 8 <= lim) {
                uint64_t m = json_str_special(json_load64(p + i));
                if (m) {
                    i += JSON_FIRST_FLAG(m);
                    break;
                }
                i += 8;
            }
            if (i >= lim)
                break;
        }
        unsigned c = p[i];
        if (need) {
            if (c < s->u8_lo || c > s->u8_hi) {
                fail(s, JSON_EUTF8, s->u8_off, "invalid UTF-8 in string");
                return (size_t)-1;
            }
            s->u8_lo = 0x80;
            s->u8_hi = 0xBF;
            need--;
            i++;
            continue;
        }
        if (c < 0x80) {
            if (c == '"' || c == '\\' || c < 0x20)
                break;
            i++;
            continue;
        }
        s->u8_off = base + i;
        s->u8_lo = 0x80;
        s->u8_hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                s->u8_lo = 0xA0;
            else if (c == 0xED)
                s->u8_hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                s->u8_lo = 0x90;
            else if (c == 0xF4)
                s->u8_hi = 0x8F;
        } else {
            fail(s, JSON_EUTF8, base + i, "invalid UTF-8 in string");
            return (size_t)-1;
        }
        i++;
    }
    s->u8_need = need;
    if (i && !put(s, p, i)) {
        fail(s, JSON_ENOMEM, base, "out of memory");
        return (size_t)-1;
    }
    return i;
}

/* fnlen: allow: the streaming parser's state machine (one loop over the
 * input, resumable at any byte), which reads best whole. */
int json_stream_feed(json_stream *s, const void *data, size_t n)
{
    if (s->state == S_ERR)
        return s->err.code;
    const uint8_t *in = data;
    size_t room = s->max_size >= s->off ? s->max_size - s->off : 0;
    bool too_big = n > room;
    if (too_big)
        n = room;
    size_t i = 0;
    int r = 0;
    while (i < n && r == 0) {
        unsigned c = in[i];
        size_t off = s->off + i;
        switch (s->state) {
        case S_VALUE:
            if (is_ws(c)) {
                i++;
                break;
            }
            r = start_value(s, c, off);
            i++;
            break;
        case S_ARR_FIRST:
            if (is_ws(c)) {
                i++;
            } else if (c == ']') {
                r = close_ctr(s, off);
                i++;
            } else {
                s->state = S_VALUE;
            }
            break;
        case S_OBJ_FIRST:
            if (is_ws(c)) {
                i++;
            } else if (c == '}') {
                r = close_ctr(s, off);
                i++;
            } else {
                s->state = S_KEY;
            }
            break;
        case S_KEY:
            if (is_ws(c)) {
                i++;
            } else if (c == '"') {
                begin_key(s, off);
                i++;
            } else {
                r = fail(s, JSON_ESYNTAX, off, "string key expected");
            }
            break;
        case S_COLON:
            if (is_ws(c))
                i++;
            else if (c == ':') {
                s->state = S_VALUE;
                i++;
                /* Most often the value follows at once: start it here
                 * (what S_VALUE would do next round). */
                if (i < n && !is_ws(in[i])) {
                    r = start_value(s, in[i], s->off + i);
                    i++;
                }
            } else {
                r = fail(s, JSON_ESYNTAX, off, "':' expected");
            }
            break;
        case S_AFTER: {
            bool obj = s->stk[s->depth - 1];
            if (is_ws(c)) {
                i++;
            } else if (c == ',') {
                s->state = obj ? S_KEY : S_VALUE;
                i++;
                /* The next key or element follows at once, most often. */
                if (i < n && obj && in[i] == '"') {
                    begin_key(s, s->off + i);
                    i++;
                } else if (i < n && !obj && !is_ws(in[i])) {
                    r = start_value(s, in[i], s->off + i);
                    i++;
                }
            } else if (c == (obj ? '}' : ']')) {
                r = close_ctr(s, off);
                i++;
            } else {
                r = fail(s, JSON_ESYNTAX, off,
                         obj ? "',' or '}' expected" : "',' or ']' expected");
            }
            break;
        }
        case S_DONE:
            if (is_ws(c))
                i++;
            else
                r = fail(s, JSON_ESYNTAX, off, "unexpected data after the value");
            break;
        case S_LIT:
            if (n - i >= s->lit_n - s->lit_i &&
                memcmp(in + i, s->lit + s->lit_i, s->lit_n - s->lit_i) == 0) {
                /* The rest of the literal is here: all at once. */
                i += s->lit_n - s->lit_i;
                s->lit_i = s->lit_n;
                after_value(s);
                r = emit_simple(s, s->lit_ev, s->tok_off);
                break;
            }
            if (c != (unsigned char)s->lit[s->lit_i]) {
                r = fail(s, JSON_ESYNTAX, s->tok_off, "invalid literal");
                break;
            }
            i++;
            if (++s->lit_i == s->lit_n) {
                after_value(s);
                r = emit_simple(s, s->lit_ev, s->tok_off);
            }
            break;
        case S_NUM: {
            int ns = s->ns;
            bool digit = is_digit((unsigned char)c);
            int next = -1;          /* -1: the literal ends before c */
            const char *bad = NULL;
            switch (ns) {
            case N_MINUS:
                if (digit)
                    next = c == '0' ? N_ZERO : N_INT;
                else
                    bad = "invalid number";
                break;
            case N_ZERO:
                if (digit)
                    bad = "leading zero in number";
                else if (c == '.')
                    next = N_DOT;
                else if (c == 'e' || c == 'E')
                    next = N_E;
                break;
            case N_INT:
            case N_FRAC:
                if (digit)
                    next = ns;
                else if (c == '.' && ns == N_INT)
                    next = N_DOT;
                else if (c == 'e' || c == 'E')
                    next = N_E;
                break;
            case N_DOT:
                if (digit)
                    next = N_FRAC;
                else
                    bad = "digit expected after '.'";
                break;
            case N_E:
                if (digit)
                    next = N_EXP;
                else if (c == '+' || c == '-')
                    next = N_ESIGN;
                else
                    bad = "digit expected in exponent";
                break;
            case N_ESIGN:
                if (digit)
                    next = N_EXP;
                else
                    bad = "digit expected in exponent";
                break;
            default: /* N_EXP */
                if (digit)
                    next = N_EXP;
                break;
            }
            if (bad) {
                r = fail(s, JSON_ESYNTAX, off, bad);
            } else if (next < 0) {
                r = end_number(s);      /* c is looked at again */
            } else {
                /* Take the whole run of number bytes at once. */
                size_t j = i + 1;
                if (next == N_INT || next == N_FRAC || next == N_EXP)
                    while (j < n && is_digit(in[j]))
                        j++;
                s->ns = next;
                if (!put(s, in + i, j - i))
                    r = fail(s, JSON_ENOMEM, off, "out of memory");
                i = j;
            }
            break;
        }
        case S_STR:
            if (!s->is_key && s->len >= s->max_string && !s->u8_need) {
                r = emit_text(s, JSON_EV_STR_PART);
                break;
            }
            switch (s->ss) {
            case STR_PLAIN: {
                size_t k = str_run(s, in + i, n - i, off);
                if (k == (size_t)-1) {
                    r = s->err.code;
                    break;
                }
                i += k;
                if (i == n || (!s->is_key && s->len >= s->max_string))
                    break;
                c = in[i];
                off = s->off + i;
                if (s->u8_need)
                    break;      /* the run stopped at its limit mid-sequence */
                if (c == '"') {
                    i++;
                    if (s->is_key) {
                        s->state = S_COLON;
                        r = emit_text(s, JSON_EV_KEY);
                        /* Most often ':' and the value follow at once. */
                        if (!r && i + 1 < n && in[i] == ':' && !is_ws(in[i + 1])) {
                            s->state = S_VALUE;
                            r = start_value(s, in[i + 1], s->off + i + 1);
                            i += 2;
                        }
                    } else {
                        after_value(s);
                        r = emit_text(s, JSON_EV_STR);
                    }
                } else if (c == '\\') {
                    s->ss = STR_ESC;
                    s->esc_off = off;
                    i++;
                } else {
                    r = fail(s, JSON_ESYNTAX, off, "control character in string");
                }
                break;
            }
            case STR_ESC: {
                static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
                const char *e = c ? strchr(from, (int)c) : NULL;
                if (c == 'u') {
                    s->ss = STR_U;
                    s->u_val = 0;
                    s->u_n = 0;
                } else if (e) {
                    s->ss = STR_PLAIN;
                    if (!put(s, &to[e - from], 1))
                        r = fail(s, JSON_ENOMEM, off, "out of memory");
                } else {
                    r = fail(s, JSON_ESYNTAX, s->esc_off, "invalid escape");
                    break;
                }
                i++;
                break;
            }
            case STR_U: {
                unsigned h = hexval(c);
                if (h > 15) {
                    r = fail(s, JSON_ESYNTAX, s->esc_off, "invalid \\u escape");
                    break;
                }
                i++;
                s->u_val = s->u_val << 4 | h;
                if (++s->u_n < 4)
                    break;
                unsigned cp = s->u_val;
                bool ok;
                if (s->hi_pending) {
                    s->hi_pending = false;
                    if (cp >= 0xDC00 && cp <= 0xDFFF) {
                        s->ss = STR_PLAIN;
                        ok = put_cp(s, 0x10000 + ((s->hi - 0xD800) << 10) + (cp - 0xDC00));
                    } else {
                        ok = put_cp(s, 0xFFFD) && put_escape_cp(s, cp);
                    }
                } else {
                    ok = put_escape_cp(s, cp);
                }
                if (!ok)
                    r = fail(s, JSON_ENOMEM, off, "out of memory");
                break;
            }
            case STR_HI:
                if (c == '\\') {
                    s->ss = STR_HI_BS;
                    s->esc_off = off;
                    i++;
                } else {
                    s->ss = STR_PLAIN;  /* c is looked at again */
                    if (!put_cp(s, 0xFFFD))
                        r = fail(s, JSON_ENOMEM, off, "out of memory");
                }
                break;
            default: /* STR_HI_BS */
                if (c == 'u') {
                    s->ss = STR_U;
                    s->hi_pending = true;
                    s->u_val = 0;
                    s->u_n = 0;
                    i++;
                } else {
                    s->ss = STR_ESC;    /* an ordinary escape after all */
                    if (!put_cp(s, 0xFFFD))
                        r = fail(s, JSON_ENOMEM, off, "out of memory");
                }
                break;
            }
            break;
        default: /* S_ERR */
            r = s->err.code;
            break;
        }
    }
    s->off += i;
    if (r)
        return r;
    if (too_big)
        return fail(s, JSON_ESIZE, s->max_size, "input larger than max_size");
    return 0;
}

int json_stream_end(json_stream *s)
{
    size_t end = s->off;
    switch (s->state) {
    case S_ERR:
        return s->err.code;
    case S_DONE:
        return 0;
    case S_VALUE:
        /* At the top level nothing but whitespace came. */
        if (!s->depth)
            return fail(s, JSON_ESYNTAX, end, "empty input");
        return fail(s, JSON_ESYNTAX, end, "unexpected end of input");
    case S_ARR_FIRST:
    case S_OBJ_FIRST:
    case S_KEY:
    case S_AFTER:
        return fail(s, JSON_ESYNTAX, end, "unexpected end of input");
    case S_COLON:
        return fail(s, JSON_ESYNTAX, end, "':' expected");
    case S_LIT:
        return fail(s, JSON_ESYNTAX, s->tok_off, "invalid literal");
    case S_NUM:
        switch (s->ns) {
        case N_MINUS:
            return fail(s, JSON_ESYNTAX, end, "invalid number");
        case N_DOT:
            return fail(s, JSON_ESYNTAX, end, "digit expected after '.'");
        case N_E:
        case N_ESIGN:
            return fail(s, JSON_ESYNTAX, end, "digit expected in exponent");
        default: {
            int r = end_number(s);
            return r ? r : json_stream_end(s);
        }
        }
    default: /* S_STR */
        switch (s->ss) {
        case STR_PLAIN:
            if (s->u8_need)
                return fail(s, JSON_EUTF8, s->u8_off, "invalid UTF-8 in string");
            return fail(s, JSON_ESYNTAX, end, "unterminated string");
        case STR_ESC:
        case STR_HI_BS:
            return fail(s, JSON_ESYNTAX, s->esc_off, "unterminated string");
        case STR_U:
            return fail(s, JSON_ESYNTAX, s->esc_off, "invalid \\u escape");
        default:
            return fail(s, JSON_ESYNTAX, end, "unterminated string");
        }
    }
}
