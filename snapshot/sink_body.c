/*
 * sink_body.c — what a request a page sends under a confirmation's cover
 * really carries (red team s13 P1, P2, P3, P3b).
 *
 * A confirmed action covers the data-carrying requests its tab sends while
 * it runs (sink.c, auth_request). What the human was shown of the action's
 * form (the read-back, policy.c) is kept here when the cover begins
 * (snap_cover_keep); every such request's query and body fields (form
 * encoded, multipart, a JSON document's string members; an address in any
 * other body) are then read as the browser sends them, and each one is
 * checked by the gate (gate_check_sent_field): a field the human was shown
 * must carry a value they saw, and a recipient the human was not shown
 * must be granted. The read-back of the controls cannot be what is judged
 * alone: a formdata listener, a form-associated custom element, a timer
 * during the question, or another button moved under the pointer all
 * change what the browser sends without changing what was read.
 *
 * Invariants: fail closed (a body the sink cannot read whole is refused
 * under a cover); a refusal names a field and a refused address, never
 * another value (a body may hold a PIN or a password).
 */
#include "snapshot/snap_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define COVER_BODY_MAX 65536u   /* bytes of a body read whole under a cover */
#define COVER_VALUE_MAX 4096u   /* bytes of one value checked (longer: cut, refused
                                   by the gate as too long for an address) */

void snap_cover_drop(snap_agent *a)
{
    free(a->cover_shown);
    a->cover_shown = NULL;
    a->ncover_shown = 0;
    a->cover_oom = false;
}

void snap_cover_keep(snap_agent *a, const gate_present *p, size_t n)
{
    snap_cover_drop(a);
    size_t extra = 0;
    for (size_t i = 0; i < n; i++)
        extra += strlen(p[i].field ? p[i].field : "") + strlen(p[i].value ? p[i].value : "") + 2;
    if (!n)
        return;
    gate_present *c = calloc(1, n * sizeof *c + extra);
    if (!c) {
        a->cover_oom = true;    /* snap_cover_check refuses: nothing to compare */
        return;
    }
    char *s = (char *)(c + n);
    for (size_t i = 0; i < n; i++) {
        size_t fl = strlen(p[i].field ? p[i].field : "") + 1;
        size_t vl = strlen(p[i].value ? p[i].value : "") + 1;
        memcpy(s, p[i].field ? p[i].field : "", fl);
        memcpy(s + fl, p[i].value ? p[i].value : "", vl);
        c[i].chip = p[i].chip;
        c[i].field = s;
        c[i].value = s + fl;
        s += fl + vl;
    }
    a->cover_shown = c;
    a->ncover_shown = n;
}

typedef struct {
    snap_agent *a;
    char *why;
    size_t cap;
    int bad;
} cover_ck;

/* One field: decoded copies, a NUL inside a value made visible (so it
 * cannot hide a tail from the comparison). */
static void field(cover_ck *k, const char *n, size_t nl, const char *v, size_t vl)
{
    if (k->bad)
        return;
    char name[200], val[COVER_VALUE_MAX + 1];
    nl = nl < sizeof name - 1 ? nl : sizeof name - 1;
    vl = vl < COVER_VALUE_MAX ? vl : COVER_VALUE_MAX;
    memcpy(name, n, nl);
    name[nl] = 0;
    for (size_t i = 0; i < vl; i++)
        val[i] = v[i] ? v[i] : '?';
    val[vl] = 0;
    if (gate_check_sent_field(k->a->gate, name, val, k->a->cover_shown, k->a->ncover_shown,
                              k->why, k->cap))
        k->bad = 1;
    base_memzero(val, sizeof val);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Percent-decode s (len) in place ('+' a space); returns the new length. */
static size_t pct_decode(char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '+') {
            s[o++] = ' ';
        } else if (s[i] == '%' && i + 2 < len && hexval(s[i + 1]) >= 0 &&
                   hexval(s[i + 2]) >= 0) {
            s[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            s[o++] = s[i];
        }
    }
    return o;
}

/* name=value&... (a body or a query), each decoded. */
static void form_fields(cover_ck *k, char *s, size_t len)
{
    for (size_t b = 0; b < len && !k->bad;) {
        size_t e = b, eq = (size_t)-1;
        while (e < len && s[e] != '&') {
            if (s[e] == '=' && eq == (size_t)-1)
                eq = e;
            e++;
        }
        size_t ne = eq == (size_t)-1 ? e : eq;
        size_t nl = pct_decode(s + b, ne - b);
        size_t vl = eq == (size_t)-1 ? 0 : pct_decode(s + eq + 1, e - eq - 1);
        field(k, s + b, nl, eq == (size_t)-1 ? "" : s + eq + 1, vl);
        b = e + 1;
    }
}

/* multipart/form-data: each part's name="..." and content (a file's
 * content is not a field the human fills: skipped). */
static void multipart_fields(cover_ck *k, const char *ct, const char *s, size_t len)
{
    const char *bp = strstr(ct, "boundary=");
    char bnd[200];
    if (!bp) {
        snprintf(k->why, k->cap, "its multipart body names no boundary: it cannot be read to "
                 "check it against what the human allowed");
        k->bad = 1;
        return;
    }
    bp += 9;
    if (*bp == '"')
        bp++;
    size_t bl = strcspn(bp, "\";, ");
    if (bl + 5 > sizeof bnd || !bl) {
        snprintf(k->why, k->cap, "its multipart boundary cannot be read");
        k->bad = 1;
        return;
    }
    int w = snprintf(bnd, sizeof bnd, "\r\n--%.*s", (int)bl, bp);
    size_t wl = (size_t)w;
    const char *end = s + len;
    /* The first boundary has no CR LF before it. */
    const char *p = len >= wl - 2 && memcmp(s, bnd + 2, wl - 2) == 0 ? s + wl - 2 : NULL;
    while (p && p < end && !k->bad) {
        const char *h = p;
        const char *body = NULL;
        for (const char *x = h; x + 4 <= end; x++)
            if (memcmp(x, "\r\n\r\n", 4) == 0) {
                body = x + 4;
                break;
            }
        if (!body)
            break;
        const char *next = NULL;
        for (const char *x = body; x + wl <= end; x++)
            if (memcmp(x, bnd, wl) == 0) {
                next = x;
                break;
            }
        if (!next)
            next = end;
        const char *nm = NULL;
        bool file = false;
        for (const char *x = h; x + 6 <= body; x++) {
            if (!nm && memcmp(x, " name=\"", 7) == 0 && x + 7 <= body)
                nm = x + 7;
            if (memcmp(x, "filename", 8) == 0)
                file = true;
        }
        if (nm && !file) {
            size_t nl = 0;
            while (nm + nl < body && nm[nl] != '"')
                nl++;
            field(k, nm, nl, body, (size_t)(next - body));
        }
        p = next < end ? next + wl : NULL;
    }
}

/* A JSON document: every string member, named by its key (an array's
 * items by the array's key). */
static void json_fields(cover_ck *k, const json_val *v, const char *key, int depth)
{
    if (k->bad)
        return;
    if (depth > 32) {
        snprintf(k->why, k->cap, "its JSON body is nested too deep to check");
        k->bad = 1;
        return;
    }
    if (json_is(v, JSON_STRING)) {
        size_t l = 0;
        const char *s = json_str(v, &l);
        field(k, key, strlen(key), s ? s : "", s ? l : 0);
        return;
    }
    for (const json_val *c = json_first(v); c && !k->bad; c = json_next(c)) {
        const char *ck = json_key(c, NULL);
        json_fields(k, c, ck ? ck : key, depth + 1);
    }
}

/* Another body (text, XML, ...): every word holding an address. */
static void text_addresses(cover_ck *k, char *s, size_t len)
{
    len = pct_decode(s, len);
    for (size_t i = 0; i < len && !k->bad;) {
        while (i < len && strchr(" \t\r\n,;<>()[]{}\"'&=:", s[i]) && s[i])
            i++;
        size_t b = i;
        while (i < len && s[i] && !strchr(" \t\r\n,;<>()[]{}\"'&=:", s[i]))
            i++;
        if (i > b && memchr(s + b, '@', i - b))
            field(k, "(the body's text)", 17, s + b, i - b);
        if (i < len && !s[i])
            i++;
    }
}

/* The body the browser sends, whole, into a new buffer (*len), or NULL
 * with why: none, too large, or unreadable. */
static char *body_read(const json_val *req, size_t *len, const char **why)
{
    *len = 0;
    *why = NULL;
    const char *pd = json_get_str(req, "postData");
    const json_val *ents = json_get(req, "postDataEntries");
    bool has = json_bool(json_get(req, "hasPostData")) || pd || ents;
    if (!has)
        return NULL;
    char *buf = malloc(COVER_BODY_MAX + 1);
    if (!buf) {
        *why = "out of memory";
        return NULL;
    }
    size_t n = 0;
    if (ents) {
        for (const json_val *e = json_first(ents); e; e = json_next(e)) {
            const char *b = json_get_str(e, "bytes");
            size_t bl = b ? strlen(b) : 0;
            if (BASE_B64_ENCLEN(COVER_BODY_MAX - n) < bl) {
                *why = "its body is larger than the sink reads to check it";
                break;
            }
            ssize_t got = bl ? base_b64_decode(b, bl, (uint8_t *)buf + n, COVER_BODY_MAX - n)
                             : 0;
            if (got < 0 || (!b && json_len(e))) {
                *why = "its body cannot be read whole (a file or a stream)";
                break;
            }
            n += (size_t)got;
        }
    } else if (pd) {
        size_t pl = strlen(pd);
        if (pl > COVER_BODY_MAX)
            *why = "its body is larger than the sink reads to check it";
        else
            memcpy(buf, pd, (n = pl));
    } else {
        *why = "its body was not given to the sink to read";
    }
    if (*why) {
        base_memzero(buf, n);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

int snap_cover_check(snap_agent *a, const json_val *req, const char *url, char *why, size_t cap)
{
    cover_ck k = {a, why, cap, 0};
    if (a->cover_oom) {
        snprintf(why, cap, "out of memory when the human's answer was kept: what is sent "
                 "cannot be compared with what they were shown");
        return -1;
    }
    /* The query, as sent. */
    const char *q = url ? strchr(url, '?') : NULL;
    if (q) {
        size_t ql = strcspn(q + 1, "#");
        char *qs = malloc(ql + 1);
        if (!qs) {
            snprintf(why, cap, "out of memory");
            return -1;
        }
        memcpy(qs, q + 1, ql);
        qs[ql] = 0;
        form_fields(&k, qs, ql);
        base_memzero(qs, ql);
        free(qs);
    }
    size_t len;
    const char *bw;
    char *b = k.bad ? NULL : body_read(req, &len, &bw);
    if (!b && bw && !k.bad) {
        snprintf(why, cap, "%s against what the human allowed", bw);
        return -1;
    }
    if (b) {
        const char *ct = snap_request_header(req, "Content-Type");
        size_t i = 0;
        while (i < len && strchr(" \t\r\n", b[i]) && b[i])
            i++;
        if (ct && strncasecmp(ct, "multipart/form-data", 19) == 0) {
            multipart_fields(&k, ct, b, len);
        } else if (i < len && (b[i] == '{' || b[i] == '[')) {
            json_opts po = {0};
            po.flags = JSON_SECRET;
            json_doc *d = json_parse(b, len, &po, NULL);
            if (d)
                json_fields(&k, json_doc_root(d), "", 0);
            else
                text_addresses(&k, b, len);
            json_doc_free(d);
        } else if (!ct || strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0) {
            form_fields(&k, b, len);
        } else {
            text_addresses(&k, b, len);
        }
        base_memzero(b, len);
        free(b);
    }
    return k.bad ? -1 : 0;
}
