/*
 * json.h — strict RFC 8259 JSON: a reader into an arena-backed document and
 * a streaming writer.
 *
 * Reader. json_parse() validates the whole input (grammar, UTF-8, depth and
 * size limits) and builds an immutable tree of json_val nodes inside one
 * arena owned by the json_doc. Everything reachable from the document
 * (values, keys, decoded strings) is borrowed: valid until json_doc_free().
 * Decoded strings are NUL-terminated and also carry a length (they may hold
 * U+0000 from a \u0000 escape). On error nothing is allocated and the
 * json_err says where and why.
 *
 * Decisions where RFC 8259 leaves room (the "i_" cases of JSONTestSuite; see
 * docs/json.md for the full table):
 *   - Invalid UTF-8 in the input is rejected.
 *   - A lone UTF-16 surrogate in a \u escape is accepted and decoded as
 *     U+FFFD (JavaScript strings, and so CDP, may carry them; rejecting would
 *     let a page make its own title unparsable).
 *   - A byte order mark is rejected.
 *   - Numbers are kept as a double, plus an exact int64 when the literal is an
 *     integer that fits. A literal whose magnitude overflows a double is
 *     rejected ("number out of range"); one that underflows reads as 0
 *     (or the nearest subnormal). -0 is the integer 0 with a negative
 *     double. Decimal conversion is correctly rounded (exact fast paths,
 *     else the C library's strtod) and does not depend on the locale.
 *   - Duplicate keys are kept; lookups return the first. JSON_NO_DUPLICATES
 *     rejects them instead (for grant and vault files); keys are compared
 *     after unescaping, byte for byte (no Unicode normalisation).
 *   - Object keys must be shorter than 4 GiB (JSON_ESIZE otherwise).
 *
 * Error offsets point at the offending byte (for a duplicate key, its
 * opening quote; for a number out of range, its first byte).
 *
 * Writer. json_w builds output into a growing buffer without any document:
 * it inserts commas and colons, escapes strings (output is always valid
 * UTF-8 JSON; control characters, '"' and '\\' are escaped, and U+2028/2029
 * too), and prints doubles as the shortest text that reads back to the same
 * value (integers below 2^53 without exponent, "1e21", "5e-324", "-0").
 * Errors (out of memory, NaN or infinity, invalid UTF-8 in a string,
 * unbalanced nesting, max size) are sticky: check json_w_error() once at
 * the end.
 *
 * Secrets. A document parsed with JSON_SECRET (or marked with
 * json_doc_set_secret) and a writer set up with json_w_init_secret leave
 * nothing of their text behind in freed memory: the arena is zeroed before
 * it is freed (also when parsing fails), and a secret writer zeroes its
 * buffer on reset and free and never grows by realloc (the old buffer is
 * copied, zeroed, then freed). The zeroing is one the compiler cannot drop.
 * Other documents and writers are freed without it (no cost on bulk data).
 */
#ifndef CDPGATE_JSON_H
#define CDPGATE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- errors ---- */

enum {
    JSON_OK = 0,
    JSON_ENOMEM = -1,     /* allocation failed */
    JSON_ESYNTAX = -2,    /* grammar violation */
    JSON_EUTF8 = -3,      /* invalid UTF-8 */
    JSON_EDEPTH = -4,     /* nesting deeper than max_depth */
    JSON_ESIZE = -5,      /* input larger than max_size */
    JSON_ERANGE = -6,     /* number overflows a double */
    JSON_EDUPKEY = -7,    /* duplicate key with JSON_NO_DUPLICATES */
    JSON_EVALUE = -8,     /* writer: NaN/inf, bad string, unbalanced nesting */
};

typedef struct {
    int code;            /* JSON_E*, or JSON_OK */
    size_t offset;       /* byte offset in the input where it went wrong */
    const char *msg;     /* static text, e.g. "unterminated string" */
} json_err;

const char *json_strerror(int code);

/* ---- reader ---- */

typedef struct json_doc json_doc;
typedef struct json_val json_val;

typedef enum {
    JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING,
    JSON_ARRAY, JSON_OBJECT
} json_type;

enum {
    JSON_NO_DUPLICATES = 1 << 0,
    JSON_SECRET = 1 << 1,   /* the input holds secrets: zero the arena when freed */
};

typedef struct {
    size_t max_size;     /* input bytes; 0 = JSON_DEFAULT_MAX_SIZE */
    unsigned max_depth;  /* nesting of arrays/objects; 0 = JSON_DEFAULT_MAX_DEPTH */
    unsigned flags;      /* JSON_NO_DUPLICATES, JSON_SECRET */
} json_opts;

#define JSON_DEFAULT_MAX_SIZE  ((size_t)512 << 20)
#define JSON_DEFAULT_MAX_DEPTH 1024u

/* Parse len bytes at buf (need not be NUL-terminated). opts may be NULL.
 * Returns a new document (free with json_doc_free) or NULL with *err filled
 * (err may be NULL). */
json_doc *json_parse(const char *buf, size_t len, const json_opts *opts, json_err *err);
/* Free the document; a secret one is zeroed first. NULL is a no-op. */
void json_doc_free(json_doc *doc);
/* Mark doc as holding secrets (as if parsed with JSON_SECRET): its arena is
 * zeroed when it is freed. For documents whose sensitivity is known only
 * once they are parsed (a CDP reply, matched to its call by its id). */
void json_doc_set_secret(json_doc *doc);
/* Root value; borrowed. */
const json_val *json_doc_root(const json_doc *doc);
/* Bytes held by the document's arena (for memory accounting). */
size_t json_doc_memsize(const json_doc *doc);

/* All accessors accept NULL and wrong-typed values and then return the
 * "absent" answer (NULL, 0, false), so chains like
 * json_str(json_get(json_get(root, "result"), "value"), NULL) are safe. */
json_type json_type_of(const json_val *v);      /* JSON_NULL for NULL */
bool json_is(const json_val *v, json_type t);
/* Member of an object by key (first match), else NULL. */
const json_val *json_get(const json_val *obj, const char *key);
const json_val *json_getn(const json_val *obj, const char *key, size_t keylen);
/* Dotted path through objects: json_path(root, "result.result.value").
 * A segment of digits indexes an array ("result.nodes.0.nodeId"). Keys
 * holding '.' are not reachable this way (use json_get). */
const json_val *json_path(const json_val *v, const char *path);
/* Element count of an array or object; 0 otherwise. */
size_t json_len(const json_val *v);
/* idx-th element of an array (O(idx)); NULL when out of range. */
const json_val *json_at(const json_val *arr, size_t idx);
/* Iteration over array elements or object members, in document order:
 *   for (const json_val *c = json_first(v); c; c = json_next(c)) ... */
const json_val *json_first(const json_val *v);
const json_val *json_next(const json_val *v);
/* Key of an object member (as reached by json_first/json_next on an object);
 * NULL for array elements. *len gets the length when len != NULL. */
const char *json_key(const json_val *member, size_t *len);
/* String contents (NUL-terminated); NULL if not a string. */
const char *json_str(const json_val *v, size_t *len);
/* Number as a double; 0 if not a number. */
double json_num(const json_val *v);
/* Exact integer: returns true and sets *out when v is a number literal
 * without fraction or exponent that fits int64. */
bool json_int(const json_val *v, int64_t *out);
/* true for JSON true; false otherwise. */
bool json_bool(const json_val *v);
/* Convenience: string member or NULL; integer member or dflt. */
const char *json_get_str(const json_val *obj, const char *key);
int64_t json_get_int(const json_val *obj, const char *key, int64_t dflt);

/* ---- writer ---- */

#define JSON_W_MAX_DEPTH 256

/* Caller-allocated; fields are private. Zero-initialise or json_w_init. */
typedef struct {
    char *buf;           /* output, NUL-terminated when err == 0 */
    size_t len, cap;
    size_t max;          /* 0 = no limit; exceeding it is JSON_ESIZE */
    int err;             /* sticky JSON_E* */
    unsigned depth;
    uint8_t first[JSON_W_MAX_DEPTH];   /* no element written yet at depth */
    uint8_t in_obj[JSON_W_MAX_DEPTH];  /* container at depth is an object */
    uint8_t want_val;                  /* a key was written, value expected */
    uint8_t secret;                    /* json_w_init_secret: wipe, never realloc */
} json_w;

void json_w_init(json_w *w);
/* json_w_init for output that holds secrets (see "Secrets" above): the
 * buffer is zeroed by json_w_reset and json_w_free, and growing it leaves
 * no copy behind. What json_w_take hands over must be zeroed by the caller
 * before it is freed. */
void json_w_init_secret(json_w *w);
/* Release the buffer (json_w_take() hands it over instead); a secret
 * writer zeroes it first. The writer is left empty and not secret. */
void json_w_free(json_w *w);
/* Reset to empty, keeping the allocation (and the secret mode; a secret
 * writer zeroes what it held). */
void json_w_reset(json_w *w);
/* Hand over the NUL-terminated buffer (free with free()); NULL on error.
 * The writer is left empty (keeping its max and secret mode). */
char *json_w_take(json_w *w, size_t *len);
/* The sticky error; JSON_EVALUE while containers are still open or a key
 * awaits its value (so call it once, at the end). */
int json_w_error(const json_w *w);

void json_w_obj_begin(json_w *w);
void json_w_obj_end(json_w *w);
void json_w_arr_begin(json_w *w);
void json_w_arr_end(json_w *w);
void json_w_key(json_w *w, const char *key);         /* NUL-terminated */
void json_w_keyn(json_w *w, const char *key, size_t len);
void json_w_str(json_w *w, const char *s);            /* NULL writes null */
void json_w_strn(json_w *w, const char *s, size_t len);
void json_w_int(json_w *w, int64_t v);
void json_w_uint(json_w *w, uint64_t v);
void json_w_num(json_w *w, double v);                 /* shortest round-trip */
void json_w_bool(json_w *w, bool v);
void json_w_null(json_w *w);
/* Insert already-serialised JSON as one value (validated when validate). */
void json_w_raw(json_w *w, const char *json, size_t len, bool validate);
/* Serialise a parsed value (deep). */
void json_w_val(json_w *w, const json_val *v);
/* Write each member of object obj (deep) into the object being written;
 * nothing when obj is not an object. */
void json_w_members(json_w *w, const json_val *obj);

/* Shortest round-trip text of a finite double into out (>= 32 bytes).
 * Returns the length, or -1 for NaN/inf. */
int json_fmt_double(double v, char *out);

/* Whole document to a new string (free with free()); NULL on error. */
char *json_write(const json_val *v, size_t *len);

/* UTF-8 validation of a byte span (no NUL special-casing). */
bool json_utf8_valid(const uint8_t *s, size_t len);

/* ---- push tokenizer ----
 *
 * json_stream reads one JSON text fed in pieces of any size (a byte at a
 * time, or whatever a socket gives) and reports it as events through a
 * callback, without building a document: memory stays bounded by the
 * nesting depth, the longest key or number, and max_string. It accepts and
 * rejects exactly what json_parse does (same error codes and offsets),
 * except that JSON_NO_DUPLICATES is not available.
 *
 * Events come in document order. An object member is a JSON_EV_KEY followed
 * by its value's events. A string value of at most max_string decoded bytes
 * is one JSON_EV_STR; a longer one is JSON_EV_STR_PART pieces followed by a
 * last JSON_EV_STR (possibly empty); pieces end on character boundaries
 * and are at most max_string + 6 bytes (the last character or escape).
 * Keys always come whole. Text is decoded (escapes resolved, a lone
 * surrogate as U+FFFD), NUL-terminated, and borrowed until the callback
 * returns.
 */

typedef enum {
    JSON_EV_OBJ_BEGIN = 1, JSON_EV_OBJ_END, JSON_EV_ARR_BEGIN, JSON_EV_ARR_END,
    JSON_EV_KEY,          /* str/len: a member's key; its value follows */
    JSON_EV_STR_PART,     /* str/len: a piece of a long string value; more follow */
    JSON_EV_STR,          /* str/len: a string value, or the last piece of one */
    JSON_EV_NUM,          /* num, and i when is_int (as json_int would say) */
    JSON_EV_TRUE, JSON_EV_FALSE, JSON_EV_NULL,
} json_ev_type;

typedef struct {
    json_ev_type type;
    unsigned depth;       /* of the value: 0 for the top-level value, 1 for its
                             members or elements; a KEY has its value's depth */
    const char *str;      /* borrowed until the callback returns */
    size_t len;
    double num;
    int64_t i;
    bool is_int;
    size_t offset;        /* input offset of the token's first byte */
} json_event;

/* Return 0 to go on; JSON_STREAM_SKIP to skip (see below); any other value
 * stops the stream, and feed returns it. */
typedef int (*json_stream_fn)(void *ud, const json_event *ev);

/* Returned for a JSON_EV_KEY: the member's value comes with no events at
 * all. For a JSON_EV_OBJ_BEGIN or JSON_EV_ARR_BEGIN: the container's
 * contents come with no events, and its END event still comes. For any
 * other event it means 0. A skipped value is still read and checked in
 * full: what is accepted or rejected, error codes and offsets, are the
 * same as without skipping; it only costs no callbacks and no copies. */
#define JSON_STREAM_SKIP 0x534b4950

typedef struct {
    size_t max_size;      /* input bytes; 0 = JSON_DEFAULT_MAX_SIZE */
    unsigned max_depth;   /* 0 = JSON_DEFAULT_MAX_DEPTH */
    size_t max_string;    /* string value bytes per event; 0 = 64 KiB */
} json_stream_opts;

typedef struct json_stream json_stream;

/* New stream (free with json_stream_free); opts may be NULL; NULL when out
 * of memory. */
json_stream *json_stream_new(const json_stream_opts *opts, json_stream_fn fn, void *ud);
void json_stream_free(json_stream *s);
/* Start over for a new text, keeping the allocations. */
void json_stream_reset(json_stream *s);
/* Feed the next n bytes. Returns 0, a JSON_E* code (details in
 * json_stream_error), or the callback's non-zero value. After an error every
 * call returns it again. */
int json_stream_feed(json_stream *s, const void *data, size_t n);
/* The input is complete: finish a trailing number and check that exactly
 * one value came. Returns 0 or the error. */
int json_stream_end(json_stream *s);
/* The error (code JSON_OK when none); borrowed. */
const json_err *json_stream_error(const json_stream *s);
/* True once the top-level value is complete (only whitespace may follow;
 * a top-level number completes only at the next byte or json_stream_end). */
bool json_stream_done(const json_stream *s);

#endif
