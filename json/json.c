/*
 * json.c — the read side of a parsed document: accessors, lookups, paths,
 * document lifetime, plus error strings and UTF-8 validation.
 *
 * Every accessor takes NULL or a value of the wrong type and then answers
 * "absent" (NULL, 0, false), so lookups chain without checks in between.
 * Everything returned is borrowed from the document's arena.
 */
#include "json/json_int.h"

#include <stdlib.h>

const char *json_strerror(int code)
{
    switch (code) {
    case JSON_OK: return "success";
    case JSON_ENOMEM: return "out of memory";
    case JSON_ESYNTAX: return "syntax error";
    case JSON_EUTF8: return "invalid UTF-8";
    case JSON_EDEPTH: return "nesting too deep";
    case JSON_ESIZE: return "too large";
    case JSON_ERANGE: return "number out of range";
    case JSON_EDUPKEY: return "duplicate key";
    case JSON_EVALUE: return "invalid value for JSON";
    default: return "unknown error";
    }
}

bool json_utf8_valid(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        /* ASCII runs a word at a time. */
        while (i + 8 <= len && (json_load64(s + i) & JSON_HIGHS) == 0)
            i += 8;
        if (i >= len)
            break;
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = json_utf8_seq(s + i, len - i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

void json_doc_free(json_doc *doc)
{
    if (!doc)
        return;
    bool secret = doc->secret;
    json_blk *b = doc->blocks;      /* the first block holds doc itself */
    while (b) {
        json_blk *next = b->next;
        if (secret)
            base_memzero(b, b->size);
        free(b);
        b = next;
    }
}

void json_doc_set_secret(json_doc *doc)
{
    if (doc)
        doc->secret = true;
}

const json_val *json_doc_root(const json_doc *doc)
{
    return doc ? doc->root : NULL;
}

size_t json_doc_memsize(const json_doc *doc)
{
    return doc ? doc->memsize : 0;
}

json_type json_type_of(const json_val *v)
{
    return v ? (json_type)v->type : JSON_NULL;
}

bool json_is(const json_val *v, json_type t)
{
    return v && v->type == t;
}

const json_val *json_getn(const json_val *obj, const char *key, size_t keylen)
{
    if (!obj || obj->type != JSON_OBJECT || !key)
        return NULL;
    for (const json_val *m = obj->u.ctr.first; m; m = m->next)
        if (m->keylen == keylen && memcmp(m->key, key, keylen) == 0)
            return m;
    return NULL;
}

const json_val *json_get(const json_val *obj, const char *key)
{
    return key ? json_getn(obj, key, strlen(key)) : NULL;
}

/* A path segment made only of digits indexes an array; anything else is an
 * object key. Keys that contain '.' cannot be reached this way. */
const json_val *json_path(const json_val *v, const char *path)
{
    if (!path)
        return NULL;
    const char *p = path;
    while (v) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (v->type == JSON_ARRAY && n > 0 && n <= 19) {
            size_t idx = 0, i = 0;
            while (i < n && p[i] >= '0' && p[i] <= '9')
                idx = idx * 10 + (size_t)(p[i++] - '0');
            v = i == n ? json_at(v, idx) : NULL;
        } else {
            v = json_getn(v, p, n);
        }
        if (!dot)
            return v;
        p = dot + 1;
    }
    return NULL;
}

size_t json_len(const json_val *v)
{
    if (!v || (v->type != JSON_ARRAY && v->type != JSON_OBJECT))
        return 0;
    return v->u.ctr.n;
}

const json_val *json_at(const json_val *arr, size_t idx)
{
    if (!arr || arr->type != JSON_ARRAY || idx >= arr->u.ctr.n)
        return NULL;
    const json_val *c = arr->u.ctr.first;
    while (idx-- > 0)
        c = c->next;
    return c;
}

const json_val *json_first(const json_val *v)
{
    if (!v || (v->type != JSON_ARRAY && v->type != JSON_OBJECT))
        return NULL;
    return v->u.ctr.first;
}

const json_val *json_next(const json_val *v)
{
    return v ? v->next : NULL;
}

const char *json_key(const json_val *member, size_t *len)
{
    if (!member || !member->key) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = member->keylen;
    return member->key;
}

const char *json_str(const json_val *v, size_t *len)
{
    if (!v || v->type != JSON_STRING) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = v->u.str.len;
    return v->u.str.s;
}

double json_num(const json_val *v)
{
    return v && v->type == JSON_NUMBER ? v->u.num.d : 0;
}

bool json_int(const json_val *v, int64_t *out)
{
    if (!v || v->type != JSON_NUMBER || !(v->flags & JV_INT))
        return false;
    if (out)
        *out = v->u.num.i;
    return true;
}

bool json_bool(const json_val *v)
{
    return v && v->type == JSON_TRUE;
}

const char *json_get_str(const json_val *obj, const char *key)
{
    return json_str(json_get(obj, key), NULL);
}

int64_t json_get_int(const json_val *obj, const char *key, int64_t dflt)
{
    int64_t i;
    return json_int(json_get(obj, key), &i) ? i : dflt;
}
