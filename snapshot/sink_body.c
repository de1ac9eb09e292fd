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

enum { COVER_LINK, COVER_GET_FORM, COVER_POST_FORM };  /* the address shown (cover_url) */

void snap_cover_drop(snap_agent *a)
{
    free(a->cover_shown);
    a->cover_shown = NULL;
    a->ncover_shown = 0;
    a->cover_oom = false;
    free(a->cover_url);
    a->cover_url = NULL;
    a->cover_url_path = false;
    a->cover_addr = false;
    a->cover_nav = false;
    a->cover_post = false;
    a->ncover_rid = 0;
}

/* Keep url (its fragment left out; NULL: none) as the address shown: how,
 * a link's, a GET form's (compared up to its query: the query is the
 * fields') or a POST form's; nav: the action goes there itself. */
static void cover_url(snap_agent *a, const char *url, int how, bool nav)
{
    free(a->cover_url);
    a->cover_url = NULL;
    a->cover_addr = url && *url;        /* out of memory below: none passes */
    a->cover_nav = nav;
    a->cover_url_path = how == COVER_GET_FORM;
    a->cover_post = how == COVER_POST_FORM;
    if (!url || !*url)
        return;
    size_t n = strcspn(url, a->cover_url_path ? "?#" : "#");
    a->cover_url = malloc(n + 1);
    if (a->cover_url) {
        memcpy(a->cover_url, url, n);
        a->cover_url[n] = 0;
    }
}

/* Where the human was shown the action goes: a link's href, else the form
 * it submits, else the form it is in (a select that submits its own form:
 * its own, R9-1), else nowhere (a plain button, a composer). A
 * consequential GET passes the cover to the href or a form it submits
 * (red team s12, G9b), data to a POST form's action (snap_cover_data_other). */
void snap_cover_target(snap_agent *a, const gate_target *tg)
{
    const char *m = tg ? tg->form_method : NULL;
    if (tg && tg->href && *tg->href)
        cover_url(a, tg->href, COVER_LINK, true);
    else
        cover_url(a, tg ? tg->form_action : NULL, m && strcasecmp(m, "post") == 0
                  ? COVER_POST_FORM : COVER_GET_FORM, tg && tg->submits);
}

bool snap_cover_shown_url(const snap_agent *a, const char *url, const char *redirected_from)
{
    for (unsigned i = 0; redirected_from && i < a->ncover_rid && i < 4; i++)
        if (strcmp(a->cover_rid[i], redirected_from) == 0)
            return true;
    if (!a->cover_url || !url || !a->cover_nav)
        return false;
    size_t n = strcspn(url, a->cover_url_path ? "?#" : "#");
    return n == strlen(a->cover_url) && strncmp(url, a->cover_url, n) == 0;
}

/* Data is what a POST form sends; a link, a GET form, a dialog form send
 * none. So under the cover a request that carries data is the one the
 * human was shown only when the action showed a POST form and it is a
 * POST to that form's address itself: not a redirect hop (a 307 or 308
 * sends the body on to an address the server chose), not another method.
 * An action that showed no address (a plain button, a composer) covers
 * its page's script (a SPA's Save: the action as named), not a form the
 * page submits (a navigation that carries data: the form's, asked with
 * its address and fields). */
bool snap_cover_data_other(const snap_agent *a, const char *method, const char *url,
                           bool document)
{
    if (!a->cover_addr)
        return document;
    if (!a->cover_post || !a->cover_url || !url || !method || strcasecmp(method, "POST") != 0)
        return true;
    size_t n = strcspn(url, "#");
    return n != strlen(a->cover_url) || strncmp(url, a->cover_url, n) != 0;
}

void snap_cover_passed(snap_agent *a, const char *rid)
{
    if (!rid || strlen(rid) >= SNAP_ID_MAX)
        return;
    snprintf(a->cover_rid[a->ncover_rid % 4], SNAP_ID_MAX, "%s", rid);
    a->ncover_rid++;
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
    bool rcpt_only;              /* outside a cover: recipients only (snap_sent_recipients) */
    bool rcpt;                   /* the refusal is a recipient's */
    base_buf *shown;             /* snap_sent_values: the values a human is shown */
    size_t nshown;
} cover_ck;

#define SHOWN_VALUES_MAX 16      /* values listed for the human (then "...") */
#define SHOWN_VALUE_MAX 200      /* bytes of one value listed */

/* s[0..n) into b, a control character written as a space (the list's
 * separators are controls). */
static void shown_put(base_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        base_buf_putc(b, (unsigned char)s[i] < 0x20 ? ' ' : s[i]);
}

/* A field a human asked about the request is shown (gate_sent_field_shown:
 * a recipient or an amount, never a secret-named field): into k->shown. */
static void shown_field(cover_ck *k, const char *name, const char *val)
{
    if (!gate_sent_field_shown(name, val))
        return;
    if (k->nshown++ == SHOWN_VALUES_MAX) {
        base_buf_puts(k->shown, "...\x1f\x1e");
        return;
    }
    if (k->nshown > SHOWN_VALUES_MAX)
        return;
    size_t vl = strlen(val);
    shown_put(k->shown, name, strlen(name));
    base_buf_putc(k->shown, '\x1f');
    shown_put(k->shown, val, vl < SHOWN_VALUE_MAX ? vl : SHOWN_VALUE_MAX);
    base_buf_puts(k->shown, vl > SHOWN_VALUE_MAX ? " (cut)\x1e" : "\x1e");
}

/* The operation a field names (action=close-account, a GraphQL
 * deleteAccount mutation, _method=DELETE; red team s14, R4-9): under the
 * cover of an action that was not itself consequential, a consequential
 * one is stopped, as its URL words would be (the human completes it). */
static void field_op(cover_ck *k, const char *name, const char *val)
{
    char w[300];
    int kind = gate_classify_body_op(name, val, w, sizeof w);
    if (!kind || k->a->covered_cls == GATE_CLASS_CONSEQUENTIAL)
        return;
    snprintf(k->why, k->cap, "unbound_stop: the page's request names a %s operation under "
             "the human's yes to an action that was not one (%s); the human completes it",
             gate_conseq_name(kind), w);
    k->bad = 1;
}

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
    const gate_present *sh = k->rcpt_only ? NULL : k->a->cover_shown;
    if (k->shown)
        shown_field(k, name, val);
    else if (gate_check_sent_field(k->a->gate, name, val, sh, sh ? k->a->ncover_shown : 0, k->why,
                              k->cap))
        k->bad = k->rcpt = 1;
    else if (!k->rcpt_only)
        field_op(k, name, val);
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

/* One parameter of a header value ("form-data; name=\"to\"", a
 * Content-Type's "boundary=..."): parameters after the first ';', split on
 * ';' with optional spaces, names case-insensitive, a value a token or a
 * quoted string (backslash escapes read), as servers read them. 1: found
 * (out, cap: cut is malformed), 0: absent, -1: malformed or given twice
 * (servers differ on which one counts: fail closed). */
static int header_param(const char *v, size_t vl, const char *name, char *out, size_t cap)
{
    const char *p = memchr(v, ';', vl), *end = v + vl;
    int found = 0;
    size_t nl = strlen(name);
    while (p && p < end) {
        p++;
        while (p < end && (*p == ' ' || *p == '\t' || *p == ';'))
            p++;
        const char *n = p;
        while (p < end && *p != '=' && *p != ';')
            p++;
        const char *ne = p;
        while (ne > n && (ne[-1] == ' ' || ne[-1] == '\t'))
            ne--;
        if (p >= end || *p == ';')
            continue;                                   /* no value */
        p++;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        bool match = (size_t)(ne - n) == nl && strncasecmp(n, name, nl) == 0;
        size_t o = 0;
        if (p < end && *p == '"') {
            for (p++; p < end && *p != '"'; p++) {
                if (*p == '\\' && p + 1 < end)
                    p++;
                if (match && o + 1 < cap)
                    out[o++] = *p;
                else if (match)
                    return -1;
            }
            if (p >= end)
                return -1;                              /* unterminated */
            p++;
        } else {
            for (; p < end && *p != ';' && *p != ' ' && *p != '\t'; p++) {
                if (match && o + 1 < cap)
                    out[o++] = *p;
                else if (match)
                    return -1;
            }
        }
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p < end && *p != ';')
            return -1;                                  /* junk after a value */
        if (match) {
            if (found)
                return -1;
            out[o] = 0;
            found = 1;
        }
        p = p < end ? p : NULL;
    }
    return found;
}

static bool ci_eq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* Whether [s, s + n) holds lit, ASCII case folded. */
static bool ci_has(const char *s, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    for (size_t i = 0; i + l <= n; i++)
        if (strncasecmp(s + i, lit, l) == 0)
            return true;
    return false;
}

/* A part's head [h, he) (header lines, CR LF each): its field name into
 * name (cap), *file when a file. 0, or -1 with why (fail closed: a head
 * with another header than Content-Disposition and Content-Type, a folded
 * or bare-LF line, a disposition other than form-data, none, twice, or
 * without a name). */
static int part_head(cover_ck *k, const char *h, const char *he, char *name, size_t cap,
                     bool *file)
{
    int seen = 0;
    *file = false;
    for (const char *l = h; l < he;) {
        const char *le = l;
        while (le < he && *le != '\r' && *le != '\n')
            le++;
        const char *colon = memchr(l, ':', (size_t)(le - l));
        if (le < he && (le + 1 >= he || le[0] != '\r' || le[1] != '\n'))
            colon = NULL;                       /* a bare CR or LF */
        if (!colon || *l == ' ' || *l == '\t')
            goto bad;
        const char *v = colon + 1;
        while (v < le && (*v == ' ' || *v == '\t'))
            v++;
        size_t vl = (size_t)(le - v);
        if (ci_eq(l, (size_t)(colon - l), "Content-Disposition")) {
            size_t tl = strcspn(v, ";\r\n");
            tl = tl < vl ? tl : vl;
            while (tl && (v[tl - 1] == ' ' || v[tl - 1] == '\t'))
                tl--;
            char tmp[8];
            if (seen++ || !ci_eq(v, tl, "form-data") ||
                header_param(v, vl, "name", name, cap) != 1 ||
                header_param(v, vl, "name*", tmp, sizeof tmp) != 0)
                goto bad;
            int f1 = header_param(v, vl, "filename", tmp, sizeof tmp);
            int f2 = header_param(v, vl, "filename*", tmp, sizeof tmp);
            if (f1 < 0 && f2 < 0)
                goto bad;
            *file = f1 != 0 || f2 != 0;
        } else if (!ci_eq(l, (size_t)(colon - l), "Content-Type")) {
            goto bad;
        }
        l = le + 2;
    }
    if (seen == 1)
        return 0;
bad:
    snprintf(k->why, k->cap, "a part of its multipart body has a head the sink does not read "
             "as every server would (one Content-Disposition: form-data with a name, and "
             "Content-Type): it cannot be checked against what the human allowed");
    k->bad = 1;
    return -1;
}

static int multipart_bad(cover_ck *k, const char *what)
{
    snprintf(k->why, k->cap, "its multipart body %s: it cannot be read to check it against "
             "what the human allowed", what);
    k->bad = 1;
    return -1;
}

/* multipart/form-data, read as servers read it: the boundary a parameter
 * of the Content-Type, the body starting with it (no preamble), each
 * part's head parsed as headers (part_head), its content up to the next
 * delimiter, the close delimiter at the end; a file's content is not a
 * field the human fills (skipped). Anything else: refused. */
static int multipart_fields(cover_ck *k, const char *ct, const char *s, size_t len)
{
    char bnd[80], name[200];
    if (header_param(ct, strlen(ct), "boundary", bnd + 4, sizeof bnd - 4) != 1 || !bnd[4])
        return multipart_bad(k, "names no boundary it can read");
    memcpy(bnd, "\r\n--", 4);
    size_t wl = strlen(bnd);
    const char *end = s + len;
    if (len < wl - 2 || memcmp(s, bnd + 2, wl - 2) != 0)
        return multipart_bad(k, "does not start with its boundary");
    const char *p = s + wl - 2;
    while (!k->bad) {
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            return 0;                           /* the close delimiter */
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
            return multipart_bad(k, "has a boundary line it cannot read");
        const char *h = p + 2, *body = NULL;
        for (const char *x = h; x + 2 <= end; x++)
            if (memcmp(x, "\r\n", 2) == 0 &&
                (x == h || (x >= h + 2 && memcmp(x - 2, "\r\n", 2) == 0))) {
                body = x + 2;
                break;
            }
        const char *next = NULL;
        for (const char *x = body; x && x + wl <= end; x++)
            if (memcmp(x, bnd, wl) == 0) {
                next = x;
                break;
            }
        if (!body || !next)
            return multipart_bad(k, "has a part with no end");
        bool file;
        if (part_head(k, h, body - 2, name, sizeof name, &file))
            return -1;
        if (!file)
            field(k, name, strlen(name), body, (size_t)(next - body));
        p = next + wl;
    }
    return -1;
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
    /* Numbers and booleans are values too (an amount sent as 5000): their
     * JSON text, compared with the shown field of the same key. */
    char num[40];
    int nl = json_is(v, JSON_NUMBER) ? json_fmt_double(json_num(v), num)
           : json_is(v, JSON_TRUE) ? snprintf(num, sizeof num, "true")
           : json_is(v, JSON_FALSE) ? snprintf(num, sizeof num, "false") : 0;
    if (nl > 0) {
        field(k, key, strlen(key), num, (size_t)nl);
        return;
    }
    for (const json_val *c = json_first(v); c && !k->bad; c = json_next(c)) {
        const char *ck = json_key(c, NULL);
        json_fields(k, c, ck ? ck : key, depth + 1);
    }
}

/* An '@' written as an escape a server or a script reads back ("\u0040",
 * "\x40", "&#64;", "&#x40;", "&commat;") made one in place; returns the
 * new length. */
static size_t at_unescape(char *s, size_t len)
{
    static const char *const E[] = {"\\u0040", "\\x40", "&#64;", "&#x40;", "&commat;"};
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t el = 0;
        for (size_t e = 0; !el && e < sizeof E / sizeof E[0]; e++)
            if (len - i >= strlen(E[e]) && strncasecmp(s + i, E[e], strlen(E[e])) == 0)
                el = strlen(E[e]);
        s[o++] = el ? '@' : s[i];
        i += el ? el : 1;
    }
    return o;
}

/* Another body (text, XML, ...): every word holding an address. */
static void text_addresses(cover_ck *k, char *s, size_t len)
{
    len = at_unescape(s, pct_decode(s, len));
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

/* The path's segments, decoded: an address in one is a recipient as a
 * field's is (REST: POST /users/{email}/transfers; red team s14, R4-7). */
static void path_addresses(cover_ck *k, const char *url)
{
    const char *p = url ? strstr(url, "://") : NULL;
    p = p ? strchr(p + 3, '/') : NULL;
    while (p && *p && *p != '?' && *p != '#' && !k->bad) {
        p++;
        size_t l = strcspn(p, "/?#");
        char seg[COVER_VALUE_MAX + 1];
        size_t n = l < COVER_VALUE_MAX ? l : COVER_VALUE_MAX;
        memcpy(seg, p, n);
        n = at_unescape(seg, pct_decode(seg, n));
        if (memchr(seg, '@', n) || ci_has(seg, n, "\xef\xbc\xa0") || ci_has(seg, n, "\xef\xb9\xab"))
            field(k, "(the request's path)", 20, seg, n);
        p += l;
    }
}

/* The method the request says it is, besides its own (Express
 * method-override, ASP.NET, Google APIs; R4-9): read as a "_method"
 * field. */
static void method_override(cover_ck *k, const json_val *req)
{
    static const char *const H[] = {"X-HTTP-Method-Override", "X-HTTP-Method",
                                    "X-Method-Override"};
    for (size_t i = 0; i < sizeof H / sizeof H[0] && !k->bad; i++) {
        const char *v = snap_request_header(req, H[i]);
        if (v)
            field(k, "_method", 7, v, strlen(v));
    }
}

/* Whether the Content-Type's charset (if any) is one whose bytes read as
 * ASCII for the characters the readers look for. */
static bool charset_ok(const char *ct)
{
    static const char *const OK[] = {"utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1",
                                     "latin1", "windows-1252"};
    char cs[40];
    int r = ct ? header_param(ct, strlen(ct), "charset", cs, sizeof cs) : 0;
    if (r <= 0)
        return r == 0;
    for (size_t i = 0; i < sizeof OK / sizeof OK[0]; i++)
        if (strcasecmp(cs, OK[i]) == 0)
            return true;
    return false;
}

static int body_bad(cover_ck *k, const char *what)
{
    snprintf(k->why, k->cap, "its body %s: it cannot be checked against what the human "
             "allowed", what);
    k->bad = 1;
    return -1;
}

/* A JSON document (by its type, or a '{' or '[' after an optional BOM and
 * spaces, as servers that parse JSON whatever the type read it): read
 * whole or refused, never read as text. */
static void json_body(cover_ck *k, const char *b, size_t len)
{
    json_opts po = {0};
    po.flags = JSON_SECRET;
    json_doc *d = json_parse(b, len, &po, NULL);
    if (d)
        json_fields(k, json_doc_root(d), "", 0);
    else
        (void)body_bad(k, "is JSON the sink cannot parse (malformed, or nested too deep)");
    json_doc_free(d);
}

/* The body, by what it is. Under a cover every reader a server might use
 * is applied: a form type (or none) is read as a form, and as JSON too
 * when it looks like JSON. Another type is compared with nothing: refused
 * when the human was shown fields (they cannot be compared), else its
 * addresses are read. */
static int cover_body(cover_ck *k, const json_val *req, char *b, size_t len)
{
    const char *ct = snap_request_header(req, "Content-Type");
    const char *ce = snap_request_header(req, "Content-Encoding");
    if (ce && ce[strspn(ce, " \t")] && strcasecmp(ce + strspn(ce, " \t"), "identity") != 0)
        return body_bad(k, "is compressed (Content-Encoding), which the sink does not read");
    if (!charset_ok(ct))
        return body_bad(k, "is in a charset the sink does not read");
    size_t i = len >= 3 && memcmp(b, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    while (i < len && strchr(" \t\r\n", b[i]) && b[i])
        i++;
    bool form = !ct || strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0;
    size_t tl = ct ? strcspn(ct, ";") : 0;
    bool json = (ct && ci_has(ct, tl, "json")) ||
                (i < len && (b[i] == '{' || b[i] == '['));
    if (ct && strncasecmp(ct, "multipart/form-data", 19) == 0)
        return multipart_fields(k, ct, b, len);
    if (json)
        json_body(k, b + i, len - i);
    if (form && !k->bad)
        form_fields(k, b, len);
    else if (!json && !form && !k->bad && i < len && !k->rcpt_only && k->a->ncover_shown)
        return body_bad(k, "is of a type the sink does not read (not a form, multipart or "
                        "JSON), and the human was shown fields to compare it with");
    else if (!json && !form && !k->bad)
        text_addresses(k, b, len);
    return k->bad ? -1 : 0;
}

/* The readers over a request: its method override, path, query, body. */
static int cover_run(cover_ck *k, const json_val *req, const char *url)
{
    method_override(k, req);
    path_addresses(k, url);
    /* The query, as sent. */
    const char *q = url ? strchr(url, '?') : NULL;
    if (q && !k->bad) {
        size_t ql = strcspn(q + 1, "#");
        char *qs = malloc(ql + 1);
        if (!qs) {
            snprintf(k->why, k->cap, "out of memory");
            return -1;
        }
        memcpy(qs, q + 1, ql);
        qs[ql] = 0;
        form_fields(k, qs, ql);
        base_memzero(qs, ql);
        free(qs);
    }
    size_t len;
    const char *bw;
    char *b = k->bad ? NULL : body_read(req, &len, &bw);
    if (!b && bw && !k->bad) {
        snprintf(k->why, k->cap, "%s against what the human allowed", bw);
        return -1;
    }
    if (b) {
        (void)cover_body(k, req, b, len);
        base_memzero(b, len);
        free(b);
    }
    return k->bad ? -1 : 0;
}

int snap_cover_check(snap_agent *a, const json_val *req, const char *url, char *why, size_t cap)
{
    cover_ck k = {a, why, cap, 0, false, false, NULL, 0};
    if (a->cover_oom) {
        snprintf(why, cap, "out of memory when the human's answer was kept: what is sent "
                 "cannot be compared with what they were shown");
        return -1;
    }
    int rc = cover_run(&k, req, url);
    base_utf8_trim(why);        /* a reason cut at cap may end inside a character */
    return rc;
}

int snap_sent_recipients(snap_agent *a, const json_val *req, const char *url, char *why,
                         size_t cap)
{
    cover_ck k = {a, why, cap, 0, true, false, NULL, 0};
    if (cover_run(&k, req, url) == 0 || k.rcpt) {
        base_utf8_trim(why);
        return k.rcpt ? -1 : 0;
    }
    /* A body the readers refused: its addresses, read as text (the human
     * is asked when none is refused, as before). */
    k.bad = 0;
    size_t len;
    const char *bw;
    char *b = body_read(req, &len, &bw);
    if (b) {
        text_addresses(&k, b, len);
        base_memzero(b, len);
        free(b);
    }
    if (!k.rcpt)
        why[0] = 0;
    base_utf8_trim(why);        /* a reason cut at cap may end inside a character */
    return k.rcpt ? -1 : 0;
}

char *snap_sent_values(snap_agent *a, const json_val *req, const char *url)
{
    char why[300];
    base_buf b = {0};
    cover_ck k = {a, why, sizeof why, 0, true, false, &b, 0};
    if (cover_run(&k, req, url) != 0) {
        /* A body the readers refused: its addresses, read as text. */
        size_t len;
        const char *bw;
        char *body = body_read(req, &len, &bw);
        k.bad = 0;
        if (body) {
            text_addresses(&k, body, len);
            base_memzero(body, len);
            free(body);
        }
    }
    if (b.oom) {
        base_buf_free(&b);
        return NULL;
    }
    char *s = base_buf_take(&b, NULL);
    return s ? s : base_strdup("");
}

/* ---- the names of a body's fields (sink.c, signin.c) ---- */

#define FIELDS_MAX 16           /* field names shown */
#define FIELD_NAME_MAX 40       /* bytes of one name shown */
#define BODY_SCAN_MAX 65536u    /* bytes of a body read for its names */

/* Append one field name (cleaned to [A-Za-z0-9_.[]-], cut) to out. */
static void field_add(char *out, size_t cap, int *n, const char *s, size_t len)
{
    if (*n > FIELDS_MAX)
        return;
    size_t used = strlen(out);
    if (*n == FIELDS_MAX) {
        snprintf(out + used, cap - used, "%s...", used ? ", " : "");
        (*n)++;
        return;
    }
    char nm[FIELD_NAME_MAX + 1];
    size_t k = 0;
    for (size_t i = 0; i < len && k < FIELD_NAME_MAX; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.' || c == '[' || c == ']';
        nm[k++] = ok ? c : '?';
    }
    nm[k] = 0;
    if (!k)
        return;
    snprintf(out + used, cap - used, "%s%s", used ? ", " : "", nm);
    (*n)++;
}

/* The names of a request body's fields (never values) into out: form
 * encoded (name=value&...), multipart (name="..."), a JSON object's keys;
 * another body: "" (the human sees the method and URL). */
void snap_body_fields(const json_val *req, char *out, size_t cap)
{
    out[0] = 0;
    const char *ct = snap_request_header(req, "Content-Type");
    const char *pd = json_get_str(req, "postData");
    char *buf = NULL;
    size_t len = 0;
    if (pd) {
        len = strlen(pd);
    } else {
        /* postDataEntries: base64 pieces. */
        buf = malloc(BODY_SCAN_MAX + 1);
        for (const json_val *e = json_first(json_get(req, "postDataEntries")); buf && e;
             e = json_next(e)) {
            const char *b = json_get_str(e, "bytes");
            size_t bl = b ? strlen(b) : 0;
            if (!bl || BASE_B64_ENCLEN(BODY_SCAN_MAX - len) < bl)
                break;
            ssize_t got = base_b64_decode(b, bl, (uint8_t *)buf + len, BODY_SCAN_MAX - len);
            if (got < 0)
                break;
            len += (size_t)got;
        }
        if (buf)
            buf[len] = 0;
        pd = buf;
    }
    if (!pd || !len) {
        free(buf);
        return;
    }
    if (len > BODY_SCAN_MAX)
        len = BODY_SCAN_MAX;
    int n = 0;
    size_t i = 0;
    while (i < len && (pd[i] == ' ' || pd[i] == '\t' || pd[i] == '\r' || pd[i] == '\n'))
        i++;
    if (ct && strncasecmp(ct, "multipart/form-data", 19) == 0) {
        for (const char *p = pd; p && (size_t)(p - pd) < len;) {
            const char *q = strstr(p, "name=\"");
            if (!q || (size_t)(q - pd) >= len)
                break;
            /* Content-Disposition's name, not filename="..." */
            bool file = q - 4 >= pd && strncmp(q - 4, "file", 4) == 0;
            q += 6;
            size_t l = strcspn(q, "\"\r\n");
            if (!file)
                field_add(out, cap, &n, q, l);
            p = q + l;
        }
    } else if (i < len && pd[i] == '{') {
        json_opts po = {0};
        po.flags = JSON_SECRET;
        json_doc *d = json_parse(pd, len, &po, NULL);
        for (const json_val *v = d ? json_first(json_doc_root(d)) : NULL; v; v = json_next(v)) {
            const char *k = json_key(v, NULL);
            if (k)
                field_add(out, cap, &n, k, strlen(k));
        }
        json_doc_free(d);
    } else if (!ct || strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0) {
        for (size_t b = 0; b < len;) {
            size_t e = b;
            while (e < len && pd[e] != '&' && pd[e] != '=')
                e++;
            if (e > b)
                field_add(out, cap, &n, pd + b, e - b);
            while (e < len && pd[e] != '&')
                e++;
            b = e + 1;
        }
    }
    if (buf) {
        base_memzero(buf, len);
        free(buf);
    }
}
