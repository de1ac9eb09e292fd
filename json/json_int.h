/*
 * json_int.h — internals shared by the files of the json module (reader,
 * writer, accessors). No other module includes this header.
 *
 * Node layout. A parsed document is a tree of 40-byte json_val nodes, all
 * bump-allocated in the document's arena. Siblings are linked through
 * `next` in document order; a container points at its first child and keeps
 * its child count. An object member carries its key (pointer into the arena,
 * NUL-terminated, length in keylen) in the member node itself, so an object
 * with n members costs n nodes.
 *
 * Arena. A chain of big blocks (json_blk headers followed by their data),
 * freed at once by json_doc_free. The first block holds the json_doc, then
 * the copy of the input followed by JSON_PAD zero bytes (so the scanners may
 * read a word past the end and always meet a NUL sentinel), then nodes.
 * Strings are unescaped in place inside the input copy: unescaping only ever
 * shrinks, and the closing quote becomes the NUL terminator.
 */
#ifndef CDPGATE_JSON_INT_H
#define CDPGATE_JSON_INT_H

#include "json/json.h"
#include "base/base.h"

#include <string.h>

/* json_val.flags */
enum { JV_INT = 1 };          /* u.num.i holds the exact integer value */

struct json_val {
    uint8_t type;             /* json_type */
    uint8_t flags;            /* JV_* */
    uint16_t unused_;
    uint32_t keylen;          /* member key length (keys are < 4 GiB) */
    const char *key;          /* member key, NULL for array elements/root */
    json_val *next;           /* next sibling, NULL for the last */
    union {
        struct { const char *s; size_t len; } str;
        struct { double d; int64_t i; } num;
        struct { json_val *first; size_t n; } ctr;
    } u;
};

typedef struct json_blk {
    struct json_blk *next;
    size_t size;              /* bytes including this header */
} json_blk;

struct json_doc {
    json_val *root;
    json_blk *blocks;         /* newest first; the first block holds doc */
    size_t memsize;
    bool secret;              /* zero every block before freeing it */
};

/* Zero bytes after the input copy: >= 8 for word loads, plus slack. */
#define JSON_PAD 16

/* ---- word-at-a-time helpers (SWAR) ---- */

#define JSON_ONES  0x0101010101010101ULL
#define JSON_HIGHS 0x8080808080808080ULL

static inline uint64_t json_load64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Bytes of w that end a fast string run: '"', '\\', < 0x20 or >= 0x80.
 * Returns a mask with the high bit set in such bytes. The lowest flagged
 * byte is always a true match, which is all the callers rely on:
 *  - x ^ '"' minus 1 has bit 7 set iff x == '"' or x >= 0x80 (x ^ '"' is then
 *    0, or >= 0x81); same for '\\';
 *  - x - 0x20 has bit 7 set iff x < 0x20 or x >= 0xA0;
 *  - x itself has bit 7 set iff x >= 0x80;
 * and a borrow leaves a byte only when that byte matched, so false positives
 * only ever appear above a true one. */
static inline uint64_t json_str_special(uint64_t w)
{
    uint64_t t = ((w ^ (JSON_ONES * '"')) - JSON_ONES) |
                 ((w ^ (JSON_ONES * '\\')) - JSON_ONES) |
                 (w - JSON_ONES * 0x20) | w;
    return t & JSON_HIGHS;
}

/* Index of the lowest flagged byte of a non-zero mask, or 0 when the
 * platform gives no cheap way to find it (callers then step bytewise). */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JSON_FIRST_FLAG(m) ((size_t)__builtin_ctzll(m) >> 3)
#define JSON_HAVE_FIRST_FLAG 1
#else
#define JSON_FIRST_FLAG(m) ((size_t)0)
#define JSON_HAVE_FIRST_FLAG 0
#endif

/* Length (2..4) of the valid UTF-8 sequence starting with the non-ASCII
 * byte at s, of which avail bytes are readable; 0 when invalid (overlong,
 * surrogate, above U+10FFFF, truncated, stray continuation). */
static inline size_t json_utf8_seq(const uint8_t *s, size_t avail)
{
    uint8_t c = s[0];
    if (c >= 0xC2 && c <= 0xDF)
        return avail >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (avail < 3)
            return 0;
        uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (avail < 4)
            return 0;
        uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 &&
               (s[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

/* ---- numbers (json_parse.c; json_stream.c reads its literals with it) ---- */

typedef struct {
    double d;
    int64_t i;                /* the exact value, when is_int */
    bool is_int;              /* an integer that int64_t holds */
} json_number;

typedef struct {
    int code;                 /* JSON_ESYNTAX, JSON_ENOMEM, JSON_ERANGE */
    const char *at;           /* where */
    const char *why;          /* static text */
} json_number_err;

/* Read the RFC 8259 number literal at p into *out; the byte after the
 * literal must not continue it (a NUL or a delimiter is fine). Returns the
 * end of the literal, or NULL with *e filled. */
const char *json_number_read(const char *p, json_number *out, json_number_err *e);

#endif
