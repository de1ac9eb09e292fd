/*
 * act_util.c — the actions' shared tools: numbers without libm, page-derived
 * text and URLs in results (snap_url_redact; the text goes into base/'s
 * base_buf), CDP params built with the JSON writer, and pipelined calls.
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#define _XOPEN_SOURCE 700     /* realpath (POSIX.1-2008 XSI) */
#include "snapshot/act_int.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- numbers (no libm: the library links with libc only) ---- */

double snap_act_dmin(double x, double y) { return x < y ? x : y; }
double snap_act_dmax(double x, double y) { return x > y ? x : y; }

double snap_act_dfloor(double x)
{
    if (!(x > -9e15 && x < 9e15))
        return x;
    double t = (double)(long long)x;
    return t > x ? t - 1 : t;
}

double snap_act_dceil(double x)
{
    double f = snap_act_dfloor(x);
    return f < x ? f + 1 : f;
}

/* ---- page-derived text ----
 *
 * Whatever came from the page (names, titles, URLs, option labels, dialog
 * texts, values) goes through sb_page or sb_url before it reaches a result,
 * inside the content markers or not: it can then neither start a line of its
 * own, nor close a quote, nor spell a content marker, and a cut never splits
 * a UTF-8 sequence (the JSON writer refuses a split one, which would lose
 * the whole result). */

/* Length of the valid UTF-8 sequence at s (avail bytes), 0 when invalid. */
static size_t u8_seq(const char *s, size_t avail)
{
    unsigned char c = (unsigned char)s[0];
    size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n || n > avail || !json_utf8_valid((const uint8_t *)s, n))
        return 0;
    return n;
}

/* Replace every byte that is not part of valid UTF-8 by '?', in place: a
 * fixed buffer cut by snprintf then still makes a valid JSON string. */
void snap_act_utf8_repair(char *s)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        size_t n = u8_seq(s + i, len - i);
        if (!n) {
            s[i++] = '?';
            continue;
        }
        i += n;
    }
}

/* Append page text (NUL-terminated s, NULL: nothing): the snapshot's one
 * writer, snap_obs_put_page, with its rules (whitespace, controls, markers,
 * escapes). At most max bytes of input; a cut ends in "…". */
void snap_act_sb_page(base_buf *b, const char *s, size_t max, unsigned mode)
{
    if (s)
        snap_obs_put_page(b, s, strlen(s), max, mode);
}

/* Page text as a quoted string: "...". */
void snap_act_sb_quoted(base_buf *b, const char *s, size_t max)
{
    base_buf_put(b, "\"", 1);
    snap_act_sb_page(b, s, max, PAGE_QUOTED);
    base_buf_put(b, "\"", 1);
}

/* Page text into a fixed buffer (quoted when quoted), never cut inside a
 * UTF-8 sequence. */
static void page_into(char *out, size_t cap, const char *s, size_t max, bool quoted)
{
    base_buf b = {0};
    if (quoted)
        snap_act_sb_quoted(&b, s ? s : "", max);
    else
        snap_act_sb_page(&b, s ? s : "", max, 0);
    snprintf(out, cap, "%s", b.s && !b.oom ? b.s : "");
    free(b.s);
    snap_act_utf8_repair(out);
}

/* Short page text for a message (escaped, at most 80 bytes): buf. */
const char *snap_act_pg(char *buf, size_t cap, const char *s)
{
    page_into(buf, cap, s, 80, false);
    return buf;
}

/* ---- URLs in results ----
 *
 * A URL is shown as one unbroken token: spaces, controls and the characters
 * that could quote or mark ('"', '<', '>', '\', '`') are percent-encoded, so
 * a data: URL cannot add fields to a line. Secrets are redacted first
 * (snap_url_redact: url/'s url_redact). */

char *snap_url_redact(const char *url, bool strict, const char *const *fields)
{
    return url_redact(url, strict ? URL_REDACT_STRICT : 0, fields);
}

char *snap_url_redact_act(const snap_agent *a, const char *url)
{
    const char *names[9] = {0};
    for (size_t i = 0; i < a->nact_secret && i < 8; i++)
        names[i] = a->act_secret[i];
    return snap_url_redact(url, true, names);
}

/* Append u as one token, at most max bytes (sb_url's encoding). */
static void sb_token(base_buf *b, const char *u, size_t max)
{
    size_t len = strlen(u), used = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)u[i];
        char esc[GATE_CHAR_ESC_MAX];
        size_t n = 1, hid = c < 0x80 ? 0 : gate_char_escape(esc, u + i, len - i, &n);
        if (used + n > max) {
            base_buf_put(b, "\xe2\x80\xa6", 3);
            break;
        }
        /* Characters never shown raw (gate_char_escape) are percent-encoded
         * like the rest: a URL stays one token. */
        if (hid || c <= 0x20 || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' ||
            c == '`') {
            size_t k = n;
            for (size_t j = 0; j < k; j++)
                base_buf_printf(b, "%%%02X", (unsigned char)u[i + j]);
            used += 3 * k;
            i += k;
            continue;
        }
        base_buf_put(b, u + i, n);
        used += n;
        i += n;
    }
}

/* Append a URL from the page, redacted and as one token, at most max bytes. */
void snap_act_sb_url(base_buf *b, const char *url, size_t max)
{
    char *red = snap_url_redact(url ? url : "", false, NULL);
    sb_token(b, red ? red : "", max);
    free(red);
}

/* Append the URL a page navigated to (red team s18, R8-2): the page chose
 * its path and query, so only the origin (cdpgate's serialisation of the
 * parsed URL) is cdpgate's text; the rest (path, query, fragment, at most
 * max bytes), or a whole URL that is no http(s) one, goes inside a's
 * page-content markers, on one line, encoded as snap_act_sb_url encodes. A
 * bare "/" is written plain. */
void snap_act_sb_nav_url(const snap_agent *a, base_buf *b, const char *url, size_t max)
{
    char *red = snap_url_redact(url ? url : "", false, NULL);
    const char *u = red ? red : "";
    url_parts p;
    char origin[URL_ORIGIN_MAX];
    const char *rest = u;
    if (url_parse(u, &p, NULL) == 0 && !p.stripped && p.rest <= strlen(u) &&
        (p.scheme == URL_SCHEME_HTTP || p.scheme == URL_SCHEME_HTTPS) &&
        url_parts_origin(&p, origin, sizeof origin) == 0) {
        sb_token(b, origin, URL_ORIGIN_MAX);
        rest = u + p.rest;
    }
    if (strcmp(rest, "/") == 0 || (*rest == 0 && rest != u)) {
        base_buf_puts(b, "/");
    } else {
        base_buf_printf(b, "%s<<<page-content nonce=%s>>>", rest == u ? "" : " ", a->nonce);
        sb_token(b, rest, max);
        base_buf_printf(b, "<<<end page-content nonce=%s>>>", a->nonce);
    }
    free(red);
}

/* Redact the stored URLs of tab tab_id's frames in place (strict: the
 * action submitted a form with a password or one-time-code field whose
 * names are in fields), so that whatever shows them later (the settle
 * line, the next snapshot's header, tabs) shows the redacted form. */
void snap_act_redact_tab_urls(snap_agent *a, int tab_id, bool strict, const char *const *fields)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    for (size_t i = 0; t && i < t->nframes; i++) {
        if (!t->frames[i].url)
            continue;
        char *red = snap_url_redact(t->frames[i].url, strict, fields);
        if (red && strcmp(red, t->frames[i].url) != 0) {
            free(t->frames[i].url);
            t->frames[i].url = red;
        } else {
            free(red);
        }
    }
}
int snap_act_fail(snap_result *r, int code, const char *fmt, ...)
{
    base_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    base_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.oom || !b.s) {
        free(b.s);
        return snap_fail(r, code, "%s", b.oom ? "out of memory" : "");
    }
    snap_act_utf8_repair(b.s);
    snap_fail_text(r, code, b.s);
    free(b.s);
    return code;
}

/* ---- building params (never by hand: strings may come from the page or
 * the model) ---- */

/* params("sbi", "objectId", oid, "returnByValue", true, "x", 3): one char
 * per member: s string (NULL skips the member), b bool (int), i int,
 * d double, r raw JSON text (NULL skips). Returns a new string or NULL. */
char *snap_act_params(const char *spec, ...)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    va_list ap;
    va_start(ap, spec);
    for (const char *c = spec; *c; c++) {
        const char *key = va_arg(ap, const char *);
        switch (*c) {
        case 's': {
            const char *v = va_arg(ap, const char *);
            if (v) {
                json_w_key(&w, key);
                json_w_str(&w, v);
            }
            break;
        }
        case 'b':
            json_w_key(&w, key);
            json_w_bool(&w, va_arg(ap, int) != 0);
            break;
        case 'i':
            json_w_key(&w, key);
            json_w_int(&w, va_arg(ap, int));
            break;
        case 'd':
            json_w_key(&w, key);
            json_w_num(&w, va_arg(ap, double));
            break;
        case 'r': {
            const char *v = va_arg(ap, const char *);
            if (v) {
                json_w_key(&w, key);
                json_w_raw(&w, v, strlen(v), false);
            }
            break;
        }
        default:
            break;
        }
    }
    va_end(ap);
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

/* Runtime.callFunctionOn params: fn on object oid, with arguments given as
 * a serialised JSON array (NULL: none). */
char *snap_act_fn_params(const char *oid, const char *fn, const char *args, bool by_value,
                         bool await_promise)
{
    return snap_act_params("ssrbbs", "objectId", oid, "functionDeclaration", fn, "arguments", args,
                           "returnByValue", by_value, "awaitPromise", await_promise,
                           "objectGroup", ACT_GROUP);
}

/* A JSON array of one string argument for callFunctionOn: [{"value":s}]. */
char *snap_act_arg_str(const char *s)
{
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "value");
    json_w_str(&w, s);
    json_w_obj_end(&w);
    json_w_arr_end(&w);
    return json_w_take(&w, NULL);
}

/* [{"objectId":oid}] */
char *snap_act_arg_obj(const char *oid)
{
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, oid);
    json_w_obj_end(&w);
    json_w_arr_end(&w);
    return json_w_take(&w, NULL);
}

/* Send (params is consumed; NULL sends none). A failed send is remembered in
 * pc->rc and reported by pwait. */
void snap_act_psend(snap_agent *a, const char *session, const char *method, char *prm,
                    pcall *pc)
{
    memset(pc, 0, sizeof *pc);
    pc->rc = snap_cdp_send(a, session, method, prm, &pc->id, &pc->e);
    pc->sent = pc->rc == 0;
    free(prm);
}

/* Send with params that must exist (NULL means out of memory). */
void snap_act_psend_p(snap_agent *a, const char *session, const char *method, char *prm,
                      pcall *pc)
{
    if (!prm) {
        memset(pc, 0, sizeof *pc);
        pc->rc = CDP_ENOMEM;
        snprintf(pc->e.msg, sizeof pc->e.msg, "out of memory");
        return;
    }
    snap_act_psend(a, session, method, prm, pc);
}

/* Send and do not wait (params consumed; NULL: nothing is sent): the
 * reply is dropped whenever it comes. For calls with nothing to say back
 * (releases, stopping the recorder), which the browser answers in order
 * before the next command on the session. */
void snap_act_send_forget(snap_agent *a, const char *session, const char *method, char *prm)
{
    uint64_t id;
    if (prm && snap_cdp_send(a, session, method, prm, &id, NULL) == 0)
        cdp_forget(a->c, id);
    free(prm);
}

int snap_act_pwait(snap_agent *a, pcall *pc)
{
    if (!pc->sent)
        return pc->rc;
    pc->sent = false;
    pc->rc = cdp_wait(a->c, pc->id, a->o.timeout_ms, &pc->rep, &pc->e);
    return pc->rc;
}

void snap_act_pfree(pcall *pc)
{
    cdp_reply_free(&pc->rep);
}

void snap_act_args_resolved(snap_agent *a, pcall *rs, size_t n, json_w *w)
{
    for (size_t i = 0; i < n; i++) {
        /* A node gone from the document is passed as null. */
        const char *o = snap_act_pwait(a, &rs[i]) ? NULL
                      : json_get_str(json_get(rs[i].rep.result, "object"), "objectId");
        json_w_obj_begin(w);
        if (o) {
            json_w_key(w, "objectId");
            json_w_str(w, o);
        } else {
            json_w_key(w, "value");
            json_w_null(w);
        }
        json_w_obj_end(w);
        snap_act_pfree(&rs[i]);
    }
}

/* One call, params consumed (must not be NULL: that means out of memory). */
int snap_act_call(snap_agent *a, const char *session, const char *method, char *prm,
                  pcall *pc)
{
    snap_act_psend_p(a, session, method, prm, pc);
    return snap_act_pwait(a, pc);
}

/* One call without params. */
int snap_act_call0(snap_agent *a, const char *session, const char *method, pcall *pc)
{
    snap_act_psend(a, session, method, NULL, pc);
    return snap_act_pwait(a, pc);
}

/* The value of a callFunctionOn/evaluate reply made with returnByValue;
 * NULL when it threw or failed. */
const json_val *snap_act_fn_value(const pcall *pc)
{
    if (pc->rc || json_get(pc->rep.result, "exceptionDetails"))
        return NULL;
    return json_get(json_get(pc->rep.result, "result"), "value");
}

/* The objectId of a callFunctionOn reply returning a node (by reference). */
const char *snap_act_fn_object(const pcall *pc)
{
    if (pc->rc || json_get(pc->rep.result, "exceptionDetails"))
        return NULL;
    return json_get_str(json_get(pc->rep.result, "result"), "objectId");
}

void snap_act_sessions_note(session_set *ss, const char *session)
{
    for (size_t i = 0; i < ss->n; i++)
        if (strcmp(ss->s[i], session) == 0)
            return;
    if (ss->n < MAX_SESSIONS)
        snprintf(ss->s[ss->n++], SNAP_ID_MAX, "%s", session);
}

void snap_act_sessions_release(snap_agent *a, session_set *ss)
{
    /* Not waited for (issue 13, point 9: a round trip of every action). */
    for (size_t i = 0; i < ss->n; i++)
        snap_act_send_forget(a, ss->s[i], "Runtime.releaseObjectGroup",
                             snap_act_params("s", "objectGroup", ACT_GROUP));
    ss->n = 0;
}
