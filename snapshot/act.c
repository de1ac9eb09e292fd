/*
 * act.c — the actions on refs: click, type, select, press, scroll, history,
 * tabs, dialogs and screenshots, with actionability checks and an account of
 * what each action caused.
 *
 * Every action starts the same way: snap_sync, refuse while the current tab
 * (or the ref's tab) has a JS dialog open, check the observation id, resolve
 * the ref (fails closed with what changed), and releases the remote object
 * when done. It ends with snap_settle (event-driven, bounded) and a short
 * result: what happened (navigated, new tab, dialog, no visible change), a
 * compact account of what changed near the element, and a fresh observation
 * id. Results never carry a new full snapshot.
 *
 * Implementation notes
 *  - Round trips are pipelined: commands for one session are sent together
 *    and their replies collected afterwards (a session handles them in
 *    order), so a click costs a few round trips plus the settle window.
 *  - Input goes through Input.dispatch* on the tab's top-level session, like
 *    a user's: coordinates from an out-of-process iframe's session are
 *    relative to that iframe, so the iframe's content-box origin in its
 *    parent (DOM.getFrameOwner + DOM.getBoxModel) is added, up to the main
 *    frame. The hit test (DOM.getNodeForLocation, which pierces shadow roots
 *    and same-process frames) runs at every level, so an overlay in a parent
 *    frame covering an iframe is caught too.
 *  - Input.dispatchMouseEvent/KeyEvent do not reply while a JS dialog opened
 *    by the event is showing. While input replies are pending, a listener
 *    watches for Page.javascriptDialogOpening on the tab; the wait reads one
 *    message at a time (cdp_pump_one) until every reply is in or the dialog
 *    opened, and then forgets the blocked calls (cdp_forget: their late
 *    replies are dropped). The wait is thus "reply or dialog", without a
 *    timer. The dialog is reported, never dismissed.
 *  - Checks that read page state (disabled, visibility, editability) run as
 *    functions on the element (Runtime.callFunctionOn) and return plain
 *    values. A page can lie to them only about itself; the ref's identity
 *    (tab, frame, document, node) comes from CDP, never from page script.
 *  - Temporary remote objects go in the object group "cdpgate-act" of the
 *    sessions they came from and are released before the action returns.
 */
#define _XOPEN_SOURCE 700     /* realpath (POSIX.1-2008 XSI) */
#include "snapshot/snap_int.h"
#include "url/url.h"
#include "ws/ws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ACT_GROUP "cdpgate-act"
#define MAX_SESSIONS 8          /* sessions touched by one action (frame chain) */

/* ---- numbers (no libm: the library links with libc only) ---- */

static double dmin(double x, double y) { return x < y ? x : y; }
static double dmax(double x, double y) { return x > y ? x : y; }

static double dfloor(double x)
{
    if (!(x > -9e15 && x < 9e15))
        return x;
    double t = (double)(long long)x;
    return t > x ? t - 1 : t;
}

static double dceil(double x)
{
    double f = dfloor(x);
    return f < x ? f + 1 : f;
}

/* ---- text buffer ---- */

typedef struct {
    char *s;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_vadd(sbuf *b, const char *fmt, va_list ap)
{
    if (b->oom)
        return;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if (!b->s || b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = true;
            va_end(ap2);
            return;
        }
        b->s = ns;
        b->cap = cap;
        vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap2);
    }
    b->len += (size_t)n;
    va_end(ap2);
}

static void sb_add(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_add(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vadd(b, fmt, ap);
    va_end(ap);
}

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    sb_add(b, "%.*s", (int)n, s);
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
static void utf8_repair(char *s)
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

enum { PG_QUOTED = 1, PG_KEEP_NL = 2 };

/* Append page text: leading and trailing whitespace dropped, runs of
 * whitespace, control characters and Unicode line breaks (U+0085, U+2028,
 * U+2029) become one space (one newline with PG_KEEP_NL), invalid UTF-8
 * becomes U+FFFD, a third '<' or '>' in a row becomes a look-alike angle
 * quote, and with PG_QUOTED '"' and '\' are escaped. At most max bytes of
 * input; a cut ends in "…". */
static void sb_page(sbuf *b, const char *s, size_t max, unsigned mode)
{
    if (!s)
        return;
    size_t len = strlen(s), used = 0;
    bool space = false, nl = false, any = false;
    int run_lt = 0, run_gt = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        size_t n = u8_seq(s + i, len - i);
        bool brk = c < 0x20 || c == 0x7f || c == ' ' ||
                   (n == 2 && c == 0xc2 && (unsigned char)s[i + 1] == 0x85) ||
                   (n == 3 && c == 0xe2 && (unsigned char)s[i + 1] == 0x80 &&
                    ((unsigned char)s[i + 2] & 0xfe) == 0xa8);
        if (brk) {
            space = true;
            if ((mode & PG_KEEP_NL) && c == '\n')
                nl = true;
            i += n ? n : 1;
            continue;
        }
        if (used + (n ? n : 1) > max) {
            sb_putn(b, "\xe2\x80\xa6", 3);          /* … */
            return;
        }
        if (space && any) {
            sb_putn(b, nl ? "\n" : " ", 1);
            run_lt = run_gt = 0;
        }
        space = nl = false;
        any = true;
        if (!n) {
            sb_putn(b, "\xef\xbf\xbd", 3);          /* U+FFFD */
            run_lt = run_gt = 0;
            used++;
            i++;
            continue;
        }
        run_lt = c == '<' ? run_lt + 1 : 0;
        run_gt = c == '>' ? run_gt + 1 : 0;
        if (run_lt >= 3) {
            sb_putn(b, "\xe2\x80\xb9", 3);          /* ‹ */
            run_lt = 0;
        } else if (run_gt >= 3) {
            sb_putn(b, "\xe2\x80\xba", 3);          /* › */
            run_gt = 0;
        } else {
            if ((mode & PG_QUOTED) && (c == '"' || c == '\\'))
                sb_putn(b, "\\", 1);
            sb_putn(b, s + i, n);
        }
        used += n;
        i += n;
    }
}

/* Page text as a quoted string: "...". */
static void sb_quoted(sbuf *b, const char *s, size_t max)
{
    sb_putn(b, "\"", 1);
    sb_page(b, s, max, PG_QUOTED);
    sb_putn(b, "\"", 1);
}

/* Page text into a fixed buffer (quoted when quoted), never cut inside a
 * UTF-8 sequence. */
static void page_into(char *out, size_t cap, const char *s, size_t max, bool quoted)
{
    sbuf b = {0};
    if (quoted)
        sb_quoted(&b, s ? s : "", max);
    else
        sb_page(&b, s ? s : "", max, 0);
    snprintf(out, cap, "%s", b.s && !b.oom ? b.s : "");
    free(b.s);
    utf8_repair(out);
}

/* Short page text for a message (escaped, at most 80 bytes): buf. */
static const char *pg(char *buf, size_t cap, const char *s)
{
    page_into(buf, cap, s, 80, false);
    return buf;
}

/* ---- URLs in results ----
 *
 * A URL is shown as one unbroken token: spaces, controls and the characters
 * that could quote or mark ('"', '<', '>', '\', '`') are percent-encoded, so
 * a data: URL cannot add fields to a line. Secrets are redacted first
 * (snap_url_redact). */

/* Name of a query parameter, percent-decoded and lower-cased, split into
 * words at non-alphanumerics and at lower-to-upper case changes. */
static bool name_has_word(const char *name, size_t n, const char *const *words,
                          const char *const *parts)
{
    char dec[128];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < sizeof dec; i++) {
        char c = name[i];
        if (c == '%' && i + 2 < n) {
            char hex[3] = {name[i + 1], name[i + 2], 0};
            char *end;
            long v = strtol(hex, &end, 16);
            if (!*end && v > 0) {
                c = (char)v;
                i += 2;
            }
        } else if (c == '+') {
            c = ' ';
        }
        dec[k++] = c;
    }
    dec[k] = 0;
    /* Words: lower-cased runs of letters and digits; "accessToken" is
     * "access", "token". */
    for (size_t i = 0; i < k;) {
        while (i < k && !((dec[i] >= 'a' && dec[i] <= 'z') || (dec[i] >= 'A' && dec[i] <= 'Z') ||
                          (dec[i] >= '0' && dec[i] <= '9')))
            i++;
        char w[64];
        size_t wl = 0;
        bool prev_lower = false;
        while (i < k && ((dec[i] >= 'a' && dec[i] <= 'z') || (dec[i] >= 'A' && dec[i] <= 'Z') ||
                         (dec[i] >= '0' && dec[i] <= '9'))) {
            bool up = dec[i] >= 'A' && dec[i] <= 'Z';
            if (up && prev_lower && wl)
                break;
            if (wl + 1 < sizeof w)
                w[wl++] = up ? (char)(dec[i] - 'A' + 'a') : dec[i];
            prev_lower = dec[i] >= 'a' && dec[i] <= 'z';
            i++;
        }
        w[wl] = 0;
        if (!wl)
            continue;
        for (size_t j = 0; words && words[j]; j++)
            if (strcmp(w, words[j]) == 0)
                return true;
        for (size_t j = 0; parts && parts[j]; j++)
            if (strstr(w, parts[j]))
                return true;
    }
    return false;
}

static const char *const SECRET_WORDS[] = {
    "password", "passwd", "pwd", "pass", "passcode", "passphrase", "otp", "totp", "hotp",
    "secret", "token", "apikey", "sig", "signature", "credential", "credentials", "pin", NULL,
};
static const char *const SECRET_PARTS[] = {"passw", "token", "secret", NULL};
/* Also when the form that was submitted had a password or one-time-code
 * field, or beside OAuth's "state". */
static const char *const STRICT_WORDS[] = {"code", "key", "auth", "mfa", NULL};

/* Should the parameter name (n bytes) have its value hidden? strict adds
 * STRICT_WORDS and the names in fields (NULL-terminated, may be NULL). */
static bool secret_param(const char *name, size_t n, bool strict, const char *const *fields)
{
    if (name_has_word(name, n, SECRET_WORDS, SECRET_PARTS))
        return true;
    if (!strict)
        return false;
    if (name_has_word(name, n, STRICT_WORDS, NULL))
        return true;
    for (size_t i = 0; fields && fields[i]; i++)
        if (*fields[i] && strlen(fields[i]) == n && strncmp(fields[i], name, n) == 0)
            return true;
    return false;
}

/* Redact name=value pairs of [p, end) separated by '&' or ';' into b. */
static void redact_pairs(sbuf *b, const char *p, const char *end, bool strict,
                         const char *const *fields)
{
    while (p < end) {
        const char *amp = p;
        while (amp < end && *amp != '&' && *amp != ';')
            amp++;
        const char *eq = memchr(p, '=', (size_t)(amp - p));
        if (eq && secret_param(p, (size_t)(eq - p), strict, fields) && eq + 1 < amp) {
            sb_putn(b, p, (size_t)(eq + 1 - p));
            sb_add(b, "[redacted]");
        } else {
            sb_putn(b, p, (size_t)(amp - p));
        }
        if (amp < end)
            sb_putn(b, amp, 1);
        p = amp + 1;
    }
}

/* Does the query [p, end) have a parameter named name? */
static bool has_param(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name);
    for (const char *q = p; q < end; q++)
        if ((q == p || q[-1] == '&' || q[-1] == ';') && (size_t)(end - q) > n &&
            strncmp(q, name, n) == 0 && q[n] == '=')
            return true;
    return false;
}

char *snap_url_redact(const char *url, bool strict, const char *const *fields)
{
    if (!url)
        return NULL;
    sbuf b = {0};
    const char *p = url, *end = url + strlen(url);
    /* http(s), ws(s), ftp: the userinfo as the browser reads it (url/url.h:
     * '\\' ends the authority, "//" is optional, tabs and newlines do not
     * count), hidden up to the last '@' before the host. */
    url_parts up;
    if (url_parse(url, &up, NULL) == 0) {
        const char *auth = strchr(url, ':') + 1, *rest = url + up.rest, *at = NULL;
        while (auth < rest && (*auth == '/' || *auth == '\\' || *auth == '\t' ||
                               *auth == '\n' || *auth == '\r'))
            auth++;
        for (const char *q = auth; q < rest; q++)
            if (*q == '@')
                at = q;
        sb_putn(&b, p, (size_t)(auth - p));
        if (up.userinfo && at)
            sb_add(&b, "[redacted]");
        p = up.userinfo && at ? at : auth;
        sb_putn(&b, p, (size_t)(rest - p));
        p = rest;
    }
    /* scheme ":" */
    const char *s = p;
    while (p == url && s < end && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                       (s > p && ((*s >= '0' && *s <= '9') || *s == '+' || *s == '-' ||
                                  *s == '.'))))
        s++;
    if (s > p && s < end && *s == ':' && s + 2 < end && s[1] == '/' && s[2] == '/') {
        const char *auth = s + 3, *ae = auth;
        while (ae < end && *ae != '/' && *ae != '?' && *ae != '#')
            ae++;
        const char *at = NULL;
        for (const char *q = auth; q < ae; q++)
            if (*q == '@')
                at = q;
        sb_putn(&b, p, (size_t)(auth - p));
        if (at)
            sb_add(&b, "[redacted]");
        p = at ? at : auth;
        sb_putn(&b, p, (size_t)(ae - p));
        p = ae;
    }
    const char *hash = memchr(p, '#', (size_t)(end - p));
    const char *qend = hash ? hash : end;
    const char *qm = memchr(p, '?', (size_t)(qend - p));
    sb_putn(&b, p, (size_t)((qm ? qm : qend) - p));
    if (qm) {
        bool st = strict || (has_param(qm + 1, qend, "state") && has_param(qm + 1, qend, "code"));
        sb_putn(&b, "?", 1);
        redact_pairs(&b, qm + 1, qend, st, fields);
    }
    if (hash) {
        sb_putn(&b, "#", 1);
        if (memchr(hash + 1, '=', (size_t)(end - hash - 1))) {
            bool st = strict || (has_param(hash + 1, end, "state") &&
                                 has_param(hash + 1, end, "code"));
            redact_pairs(&b, hash + 1, end, st, fields);
        } else {
            sb_putn(&b, hash + 1, (size_t)(end - hash - 1));
        }
    }
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    if (!b.s) {
        b.s = malloc(1);
        if (b.s)
            b.s[0] = 0;
    }
    return b.s;
}

char *snap_url_redact_act(const snap_agent *a, const char *url)
{
    const char *names[9] = {0};
    for (size_t i = 0; i < a->nact_secret && i < 8; i++)
        names[i] = a->act_secret[i];
    return snap_url_redact(url, true, names);
}

/* Append a URL from the page, redacted and as one token, at most max bytes. */
static void sb_url(sbuf *b, const char *url, size_t max)
{
    char *red = snap_url_redact(url ? url : "", false, NULL);
    const char *u = red ? red : "";
    size_t len = strlen(u), used = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)u[i];
        size_t n = u8_seq(u + i, len - i);
        if (used + (n ? n : 1) > max) {
            sb_putn(b, "\xe2\x80\xa6", 3);
            break;
        }
        if (!n || c <= 0x20 || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' ||
            c == '`' || (n == 2 && c == 0xc2 && (unsigned char)u[i + 1] == 0x85) ||
            (n == 3 && c == 0xe2 && (unsigned char)u[i + 1] == 0x80 &&
             ((unsigned char)u[i + 2] & 0xfe) == 0xa8)) {
            size_t k = n ? n : 1;
            for (size_t j = 0; j < k; j++)
                sb_add(b, "%%%02X", (unsigned char)u[i + j]);
            used += 3 * k;
            i += k;
            continue;
        }
        sb_putn(b, u + i, n);
        used += n;
        i += n;
    }
    free(red);
}

/* Redact the stored URLs of tab tab_id's frames in place (strict: the
 * action submitted a form with a password or one-time-code field whose
 * names are in fields), so that whatever shows them later (the settle
 * line, the next snapshot's header, tabs) shows the redacted form. */
static void redact_tab_urls(snap_agent *a, int tab_id, bool strict, const char *const *fields)
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

/* snap_fail without its length limit, for messages that carry page text
 * (snap_fail cuts at 1023 bytes, which can split a UTF-8 sequence or drop
 * the closing content marker). */
static int act_fail(snap_result *r, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int act_fail(snap_result *r, int code, const char *fmt, ...)
{
    sbuf b = {0};
    va_list ap;
    va_start(ap, fmt);
    sb_vadd(&b, fmt, ap);
    va_end(ap);
    if (b.oom || !b.s) {
        free(b.s);
        return snap_fail(r, code, "%s", b.oom ? "out of memory" : "");
    }
    utf8_repair(b.s);
    snap_fail(r, code, "%s", "");
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, code == 0);
    if (code) {
        json_w_key(&w, "error");
        json_w_str(&w, snap_strerror(code));
    }
    json_w_key(&w, "message");
    json_w_str(&w, b.s);
    if (r->obs[0]) {
        json_w_key(&w, "obs");
        json_w_str(&w, r->obs);
    }
    json_w_obj_end(&w);
    char *js = json_w_take(&w, NULL);
    if (js) {
        free(r->text);
        free(r->structured);
        r->text = b.s;
        r->structured = js;
    } else {
        free(b.s);
    }
    return code;
}

/* ---- building params (never by hand: strings may come from the page or
 * the model) ---- */

/* params("sbi", "objectId", oid, "returnByValue", true, "x", 3): one char
 * per member: s string (NULL skips the member), b bool (int), i int,
 * d double, r raw JSON text (NULL skips). Returns a new string or NULL. */
static char *params(const char *spec, ...)
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
static char *fn_params(const char *oid, const char *fn, const char *args, bool by_value,
                       bool await_promise)
{
    return params("ssrbbs", "objectId", oid, "functionDeclaration", fn, "arguments", args,
                  "returnByValue", by_value, "awaitPromise", await_promise,
                  "objectGroup", ACT_GROUP);
}

/* A JSON array of one string argument for callFunctionOn: [{"value":s}]. */
static char *arg_str(const char *s)
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
static char *arg_obj(const char *oid)
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

/* ---- pipelined calls ---- */

typedef struct {
    uint64_t id;
    bool sent;
    int rc;
    cdp_reply rep;
    cdp_err e;
} pcall;

/* Send (params is consumed; NULL sends none). A failed send is remembered in
 * pc->rc and reported by pwait. */
static void psend(snap_agent *a, const char *session, const char *method, char *prm,
                  pcall *pc)
{
    memset(pc, 0, sizeof *pc);
    pc->rc = snap_cdp_send(a, session, method, prm, &pc->id, &pc->e);
    pc->sent = pc->rc == 0;
    free(prm);
}

/* Send with params that must exist (NULL means out of memory). */
static void psend_p(snap_agent *a, const char *session, const char *method, char *prm,
                    pcall *pc)
{
    if (!prm) {
        memset(pc, 0, sizeof *pc);
        pc->rc = CDP_ENOMEM;
        snprintf(pc->e.msg, sizeof pc->e.msg, "out of memory");
        return;
    }
    psend(a, session, method, prm, pc);
}

static int pwait(snap_agent *a, pcall *pc)
{
    if (!pc->sent)
        return pc->rc;
    pc->sent = false;
    pc->rc = cdp_wait(a->c, pc->id, a->o.timeout_ms, &pc->rep, &pc->e);
    return pc->rc;
}

static void pfree(pcall *pc)
{
    cdp_reply_free(&pc->rep);
}

/* One call, params consumed (must not be NULL: that means out of memory). */
static int call(snap_agent *a, const char *session, const char *method, char *prm,
                pcall *pc)
{
    psend_p(a, session, method, prm, pc);
    return pwait(a, pc);
}

/* One call without params. */
static int call0(snap_agent *a, const char *session, const char *method, pcall *pc)
{
    psend(a, session, method, NULL, pc);
    return pwait(a, pc);
}

/* The value of a callFunctionOn/evaluate reply made with returnByValue;
 * NULL when it threw or failed. */
static const json_val *fn_value(const pcall *pc)
{
    if (pc->rc || json_get(pc->rep.result, "exceptionDetails"))
        return NULL;
    return json_get(json_get(pc->rep.result, "result"), "value");
}

/* The objectId of a callFunctionOn reply returning a node (by reference). */
static const char *fn_object(const pcall *pc)
{
    if (pc->rc || json_get(pc->rep.result, "exceptionDetails"))
        return NULL;
    return json_get_str(json_get(pc->rep.result, "result"), "objectId");
}

/* Sessions whose ACT_GROUP objects must be released at the end. */
typedef struct {
    char s[MAX_SESSIONS][SNAP_ID_MAX];
    size_t n;
} session_set;

static void sessions_note(session_set *ss, const char *session)
{
    for (size_t i = 0; i < ss->n; i++)
        if (strcmp(ss->s[i], session) == 0)
            return;
    if (ss->n < MAX_SESSIONS)
        snprintf(ss->s[ss->n++], SNAP_ID_MAX, "%s", session);
}

static void sessions_release(snap_agent *a, session_set *ss)
{
    pcall pc[MAX_SESSIONS];
    for (size_t i = 0; i < ss->n; i++)
        psend_p(a, ss->s[i], "Runtime.releaseObjectGroup",
                params("s", "objectGroup", ACT_GROUP), &pc[i]);
    for (size_t i = 0; i < ss->n; i++) {
        pwait(a, &pc[i]);
        pfree(&pc[i]);
    }
    ss->n = 0;
}

/* ---- prologue and results ---- */

/* Refuse an action while tab t has a JS dialog open. */
/* The dialog's message between the content markers, escaped and cut. */
static void sb_dialog_message(snap_agent *a, sbuf *b, const snap_tab *t)
{
    sb_add(b, "<<<page-content nonce=%s>>>", a->nonce);
    sb_page(b, t->dialog_message ? t->dialog_message : "", 300, PG_KEEP_NL);
    sb_add(b, "<<<end page-content nonce=%s>>>", a->nonce);
}

static int refuse_dialog(snap_agent *a, snap_tab *t, snap_result *r)
{
    sbuf b = {0};
    sb_dialog_message(a, &b, t);
    int rc = act_fail(r, SNAP_EDIALOG, "tab t%d has a %s dialog open saying %s; answer it "
                      "first with dialog accept or dismiss", t->id, t->dialog_type,
                      b.s ? b.s : "");
    free(b.s);
    return rc;
}

/* Common start of every action but dialog: clear r, process what arrived,
 * find the current tab, refuse while it has a dialog, check obs. */
static int begin(snap_agent *a, const char *obs, snap_tab **out, snap_result *r)
{
    memset(r, 0, sizeof *r);
    *out = NULL;
    if (snap_sync(a))
        return act_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return act_fail(r, SNAP_ENOTAB, "no open tab: open a page first");
    if (t->dialog_open)
        return refuse_dialog(a, t, r);
    int rc = snap_obs_check(a, obs, r);
    if (rc)
        return rc;
    snap_nav_note(a, snap_tab_current(a), a->nav_note, sizeof a->nav_note);
    a->nact_secret = 0;                 /* the last action's form is done with */
    *out = snap_tab_current(a);         /* the check synced: tabs may have moved */
    return *out ? 0 : act_fail(r, SNAP_ENOTAB, "the tab closed; open a page first");
}

/* What an action needs of a resolved ref, copied out of the agent's tables:
 * the tab array moves when snap_sync adopts a popup, a tab's frame array
 * when the event listener sees a new frame (during any wait), and the ref
 * table when a ref is issued, so no pointer into them is held across a
 * call. Frames are looked up again by id when needed. */
typedef struct {
    uint32_t n;                 /* "e<n>" */
    int tab;
    int backend;
    char frame[SNAP_ID_MAX];
    char session[SNAP_ID_MAX];  /* the frame's session */
    char oid[SNAP_ID_MAX];      /* Runtime object of the node (group "cdpgate") */
    char ref[16];
    char what[400];             /* "e5 (button "Save")" for messages (page text
                                   escaped: see sb_page) */
} target;

static void release_object(snap_agent *a, const char *session, char oid[SNAP_ID_MAX])
{
    if (!oid[0])
        return;
    pcall pc;
    call(a, session, "Runtime.releaseObject", params("s", "objectId", oid), &pc);
    pfree(&pc);
    oid[0] = 0;
}

/* "e5 (button "Save")": role and name escaped as page text. */
static void describe_ref(uint32_t n, const char *role, const char *name, char *out,
                         size_t cap)
{
    sbuf b = {0};
    sb_add(&b, "e%u (", n);
    sb_page(&b, role && *role ? role : "element", 32, 0);
    if (name && *name) {
        sb_putn(&b, " ", 1);
        sb_quoted(&b, name, 60);
    }
    sb_putn(&b, ")", 1);
    snprintf(out, cap, "%s", b.s && !b.oom ? b.s : "");
    utf8_repair(out);
    free(b.s);
}

/* Resolve a ref for acting (snap_ref_resolve: fails closed with what
 * changed). The ref's tab becomes the current tab (acting on it is the
 * agent's choice) and must not have a dialog open. */
static int resolve(snap_agent *a, const char *ref, target *tg, snap_result *r)
{
    memset(tg, 0, sizeof *tg);
    snap_resolved res;
    int rc = snap_ref_resolve(a, ref, &res, r);
    if (rc)
        return rc;
    const snap_ref *rf = res.ref;
    tg->n = rf->n;
    tg->tab = snap_ref_tab(a, rf);
    tg->backend = rf->backend;
    snprintf(tg->frame, sizeof tg->frame, "%s", snap_ref_frame(a, rf));
    snprintf(tg->oid, sizeof tg->oid, "%s", res.object_id);
    snprintf(tg->ref, sizeof tg->ref, "e%u", rf->n);
    describe_ref(rf->n, snap_ref_role(a, rf), rf->name, tg->what, sizeof tg->what);
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    snap_frame *f = t ? snap_frame_find(t, tg->frame) : NULL;
    if (!f)
        return act_fail(r, SNAP_ESTALE, "%s: its frame is gone; take a new snapshot",
                        tg->what);
    snprintf(tg->session, sizeof tg->session, "%s", f->session);
    if (t->dialog_open) {
        tg->oid[0] = 0;         /* the renderer would not answer a release now */
        return refuse_dialog(a, t, r);
    }
    a->cur = t->id;
    return 0;
}

/* Whether the element acted on sits in a form with a password or
 * one-time-code field, and those fields' names (for URL redaction). */
typedef struct {
    bool on;
    char names[8][64];
    size_t n;
} secret_form;

/* Page-check helper (JS source, a var statement): sfOf(e) is the names of
 * the password and one-time-code inputs of e's form (or of e itself when
 * it is one), or null. */
#define SF_SRC \
    "var sfOf=function(e){var f=e&&(e.form||(e.closest&&e.closest('form')));" \
    "var L=f?[].slice.call(f.elements||[]):e?[e]:[];" \
    "var s=L.filter(function(i){return i.tagName==='INPUT'&&((i.type||'').toLowerCase()===" \
    "'password'||/one-time-code|current-password|new-password/.test(" \
    "(i.getAttribute('autocomplete')||'').toLowerCase()));});" \
    "return s.length?s.slice(0,8).map(function(i){return String(i.name||'');}):null;};"

/* Page-check helper (JS source, a var statement): fw(e) is "" when the
 * keys of the page go to e (the focused element, through open shadow
 * roots, is e, or, for a contenteditable, an editable element holding e or
 * inside it), else what has the focus ("input type=text", "a frame", "no
 * element"): tag and type only, never a value. */
#define FW_SRC \
    "var fw=function(e){var a=document.activeElement;" \
    "while(a&&a.shadowRoot&&a.shadowRoot.activeElement)a=a.shadowRoot.activeElement;" \
    "if(e&&a&&(a===e||(e.isContentEditable&&a.isContentEditable&&" \
    "(a.contains(e)||e.contains(a)))))return'';" \
    "return!a||a===document.body||a===document.documentElement?'no element':" \
    "a.tagName==='IFRAME'||a.tagName==='FRAME'?'a frame':a.tagName.toLowerCase()+" \
    "(a.tagName==='INPUT'?' type='+String(a.type).slice(0,20):'');};"

/* Where the keys go now, as fw() says ("" on the element). */
static const char FOCUS_ON_FN[] =
    "function(){" FW_SRC "var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;return fw(e);}";

/* Note the "sf" member of a page check's answer. */
static void secret_form_note(secret_form *sf, const json_val *v)
{
    const json_val *a = json_get(v, "sf");
    if (!json_is(a, JSON_ARRAY))
        return;
    sf->on = true;
    for (const json_val *n = json_first(a); n && sf->n < 8; n = json_next(n)) {
        const char *s = json_str(n, NULL);
        if (s && *s && strlen(s) < sizeof sf->names[0])
            snprintf(sf->names[sf->n++], sizeof sf->names[0], "%s", s);
    }
}

/* Which of the fields noted secret in the element's document (tab,
 * frame_id; snap_secret_note) are the element or in its form: the page
 * may have made them type=text since, which sfOf() cannot see. */
static const char SF_KNOWN_FN[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;"
    "var f=e&&(e.form||(e.closest&&e.closest('form'))),o=[];"
    "for(var i=0;i<arguments.length&&o.length<8;i++){var x=arguments[i];"
    "if(x&&x.nodeType===1&&(x===e||(f&&(x.form===f||f.contains(x)))))"
    "o.push(String(x.name||'').slice(0,63));}return o;}";

#define SF_KNOWN_MAX 32         /* remembered secrets looked at per action */

/* Add those fields (SF_KNOWN_FN) to sf; nothing to do (no round trip) when
 * none was ever noted in the document. Fails open to what sfOf() saw:
 * the names are for hiding values in URLs, not for deciding. */
static void secret_form_known(snap_agent *a, int tab_id, const char *frame_id,
                              const char *session, const char *oid, secret_form *sf)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    snap_frame *f = t ? (frame_id && *frame_id ? snap_frame_find(t, frame_id)
                                               : t->nframes ? &t->frames[0] : NULL) : NULL;
    int be[SF_KNOWN_MAX];
    size_t n = f ? snap_secret_list(a, tab_id, f->id, f->loader, be, SF_KNOWN_MAX) : 0;
    if (!n || !oid || !*oid)
        return;
    pcall rs[SF_KNOWN_MAX];
    for (size_t i = 0; i < n; i++) {
        psend_p(a, session, "DOM.resolveNode",
                params("is", "backendNodeId", be[i], "objectGroup", ACT_GROUP), &rs[i]);
    }
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        const char *o = pwait(a, &rs[i]) ? NULL
                      : json_get_str(json_get(rs[i].rep.result, "object"), "objectId");
        json_w_obj_begin(&w);
        if (o) {
            json_w_key(&w, "objectId");
            json_w_str(&w, o);
        } else {
            json_w_key(&w, "value");
            json_w_null(&w);
        }
        json_w_obj_end(&w);
        pfree(&rs[i]);
    }
    json_w_arr_end(&w);
    char *args = json_w_take(&w, NULL);
    pcall pc;
    if (args && call(a, session, "Runtime.callFunctionOn",
                     fn_params(oid, SF_KNOWN_FN, args, true, false), &pc) == 0) {
        const json_val *v = fn_value(&pc);
        if (json_is(v, JSON_ARRAY) && json_first(v))
            sf->on = true;
        for (const json_val *x = json_first(v); x && sf->n < 8; x = json_next(x)) {
            const char *s = json_str(x, NULL);
            bool dup = false;
            for (size_t i = 0; s && i < sf->n; i++)
                dup |= strcmp(sf->names[i], s) == 0;
            if (s && *s && !dup && strlen(s) < sizeof sf->names[0])
                snprintf(sf->names[sf->n++], sizeof sf->names[0], "%s", s);
        }
        pfree(&pc);
    }
    free(args);
}

/* The action is about to send its input: URLs reached meanwhile hide the
 * values of sf's fields (a->act_secret, snap_url_redact_act). */
static void secret_form_arm(snap_agent *a, const secret_form *sf)
{
    for (size_t i = 0; i < sf->n && a->nact_secret < 8; i++)
        snprintf(a->act_secret[a->nact_secret++], sizeof a->act_secret[0], "%s",
                 sf->names[i]);
}

/* What a successful action reports besides the settle outcome. */
typedef struct {
    const char *action;        /* "click", "type", ... */
    const char *ref;           /* "e5" or NULL */
    sbuf page;                 /* page-derived detail (marked as such), may be empty */
    json_w extra;              /* extra structured members (key/value pairs), may be empty */
    bool has_extra;
    /* The action may have submitted a form with a password or one-time-code
     * field: URLs are redacted strictly, also hiding those fields' names. */
    secret_form sf;
} act_report;

/* The account of what followed: navigation, new tabs, dialog, timeout. */
static void describe(snap_agent *a, snap_tab *t, const snap_settled *st, sbuf *b)
{
    size_t start = b->len;
    if (st->closed)
        sb_add(b, "the tab closed");
    if (st->navigated && t && !t->closed && t->nframes) {
        sb_add(b, "%snavigated to ", b->len > start ? "; " : "");
        sb_url(b, t->frames[0].url, 300);
    }
    for (int i = 0; i < st->nnew; i++) {
        snap_tab *nt = snap_tab_by_id(a, st->new_tabs[i]);
        sb_add(b, "%sopened tab t%d", b->len > start ? "; " : "", st->new_tabs[i]);
        if (nt && nt->nframes && nt->frames[0].url) {
            sb_add(b, " at ");
            sb_url(b, nt->frames[0].url, 300);
        }
    }
    if (st->dialog && t) {
        sb_add(b, "%s%s %s dialog is open (answer it with dialog accept/dismiss) saying: ",
               b->len > start ? "; " : "", strchr("aeiou", t->dialog_type[0]) ? "an" : "a",
               t->dialog_type);
        sb_dialog_message(a, b, t);
    }
    if (st->timed_out)
        sb_add(b, "%sstill busy when the wait ended (outcome unknown)",
               b->len > start ? "; " : "");
    if (b->len == start)
        sb_add(b, "no navigation, dialog or new tab");
}

/* A URL redacted for structured results (new), "" when absent. */
static void json_url(json_w *w, const char *url)
{
    char *red = snap_url_redact(url ? url : "", false, NULL);
    if (red)
        utf8_repair(red);
    json_w_str(w, red ? red : "");
    free(red);
}

static void report_init(act_report *rp, const char *action, const char *ref)
{
    memset(rp, 0, sizeof *rp);
    rp->action = action;
    rp->ref = ref;
    json_w_init(&rp->extra);
    json_w_obj_begin(&rp->extra);
}

static void report_free(act_report *rp)
{
    free(rp->page.s);
    json_w_free(&rp->extra);
}

/* Wait for the consequences of input on tab tab_id (snap_settle); when a
 * dialog is already open, take stock without waiting. 0 or SNAP_EBROWSER
 * with r filled. */
static int settle_after(snap_agent *a, int tab_id, uint64_t nav0, size_t tabs0,
                        int64_t deadline, uint64_t frame_call, const char *did,
                        snap_settled *st, snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    memset(st, 0, sizeof *st);
    if (t && !t->closed && !t->dialog_open) {
        if (snap_settle_frame(a, t, nav0, tabs0, deadline, frame_call, st))
            return act_fail(r, SNAP_EBROWSER, "%s, then the browser went away: %s", did,
                            cdp_conn_error(a->c));
    } else if (t && !t->closed) {
        st->dialog = true;
        st->navigated = t->nav != nav0;
        for (size_t i = tabs0; i < a->ntabs && st->nnew < 8; i++)
            if (!a->tabs[i].closed)
                st->new_tabs[st->nnew++] = a->tabs[i].id;
    } else {
        st->closed = true;
    }
    return 0;
}

static int settle(snap_agent *a, int tab_id, uint64_t nav0, size_t tabs0, int64_t deadline,
                  const char *did, snap_settled *st, snap_result *r)
{
    return settle_after(a, tab_id, nav0, tabs0, deadline, 0, did, st, r);
}

/* After input that seldom has consequences (typing without submit): if
 * nothing started on the tab (no navigation, no request in flight, no popup,
 * no dialog) by the time the page answered a later call, skip the quiet
 * window; otherwise settle as usual. (t->activity is not used: it also
 * counts DOM events, which typing itself causes.) */
static int settle_light(snap_agent *a, int tab_id, uint64_t nav0, size_t tabs0,
                        uint64_t inflight0, int64_t deadline, const char *did,
                        snap_settled *st, snap_result *r)
{
    if (snap_sync(a))
        return act_fail(r, SNAP_EBROWSER, "%s, then the browser went away: %s", did,
                        cdp_conn_error(a->c));
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (t && !t->closed && !t->dialog_open && !t->loading &&
        (uint64_t)t->inflight <= inflight0 && t->nav == nav0 && a->ntabs == tabs0) {
        memset(st, 0, sizeof *st);
        return 0;
    }
    return settle(a, tab_id, nav0, tabs0, deadline, did, st, r);
}

/* True when page calls on tab tab_id can be answered now: the tab is open,
 * no dialog blocks its renderer and it did not navigate away. */
static bool page_usable(snap_agent *a, int tab_id, const snap_settled *st)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    return t && !t->closed && !t->dialog_open && !st->navigated && !st->closed;
}

/* Fill r for a successful action: the first line says what the action did
 * (did) and what followed (st0); page-derived detail from rp follows between
 * the session's content markers; r->structured has the same as JSON. */
static int finish(snap_agent *a, int tab_id, const char *did, const snap_settled *st0,
                  act_report *rp, snap_result *r)
{
    snap_settled st = *st0;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (t && t->closed)
        st.closed = true;
    if (st.closed && a->cur == tab_id) {
        /* The tab closed itself (window.close): continue in its opener, or
         * in the most recent open tab. */
        snap_tab *op = t && t->opener ? snap_tab_by_id(a, t->opener) : NULL;
        a->cur = op && !op->closed ? op->id : 0;
        for (size_t i = a->ntabs; !a->cur && i > 0; i--)
            if (!a->tabs[i - 1].closed)
                a->cur = a->tabs[i - 1].id;
    }
    /* Secrets in the URLs the action led to are hidden before anything
     * shows them (this result, later snapshots, tabs). */
    const char *names[9] = {0};
    for (size_t i = 0; i < rp->sf.n; i++)
        names[i] = rp->sf.names[i];
    for (size_t i = 0; i < a->ntabs; i++) {
        bool mine = a->tabs[i].id == tab_id;
        for (int k = 0; k < st.nnew; k++)
            mine |= a->tabs[i].id == st.new_tabs[k];
        redact_tab_urls(a, a->tabs[i].id, mine && rp->sf.on, names);
    }
    t = snap_tab_by_id(a, tab_id);
    snap_tab *cur = snap_tab_current(a);
    snap_obs_issue(a, cur ? cur : t, r->obs);
    sbuf text = {0};
    if (a->nav_note[0])          /* the page moved on by itself before this action */
        sb_add(&text, "%s\n", a->nav_note);
    a->nav_note[0] = 0;
    sb_add(&text, "%s: ", did);
    describe(a, t, &st, &text);
    if (st.nnew)
        sb_add(&text, " (still on t%d; tabs switch t%d to go there)", cur ? cur->id : 0,
               st.new_tabs[0]);
    if (st.closed && cur)
        sb_add(&text, "; now on t%d", cur->id);
    sb_add(&text, " [obs %s]", r->obs);
    if (rp->page.len && !rp->page.oom)
        sb_add(&text, "\n<<<page-content nonce=%s>>>\n%s\n<<<end page-content nonce=%s>>>",
               a->nonce, rp->page.s, a->nonce);
    if (text.s)
        utf8_repair(text.s);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, true);
    json_w_key(&w, "action");
    json_w_str(&w, rp->action);
    if (rp->ref) {
        json_w_key(&w, "ref");
        json_w_str(&w, rp->ref);
    }
    json_w_key(&w, "obs");
    json_w_str(&w, r->obs);
    json_w_key(&w, "tab");
    json_w_int(&w, tab_id);
    json_w_key(&w, "navigated");
    json_w_bool(&w, st.navigated);
    if (t && t->nframes && t->frames[0].url) {
        json_w_key(&w, "url");
        json_url(&w, t->frames[0].url);
    }
    json_w_key(&w, "new_tabs");
    json_w_arr_begin(&w);
    for (int i = 0; i < st.nnew; i++) {
        snap_tab *nt = snap_tab_by_id(a, st.new_tabs[i]);
        json_w_obj_begin(&w);
        json_w_key(&w, "tab");
        json_w_int(&w, st.new_tabs[i]);
        if (nt && nt->nframes && nt->frames[0].url) {
            json_w_key(&w, "url");
            json_url(&w, nt->frames[0].url);
        }
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    if (st.dialog && t) {
        json_w_key(&w, "dialog");
        json_w_obj_begin(&w);
        json_w_key(&w, "type");
        json_w_str(&w, t->dialog_type);
        json_w_key(&w, "message");
        json_w_str(&w, t->dialog_message ? t->dialog_message : "");
        json_w_obj_end(&w);
    }
    if (st.closed) {
        json_w_key(&w, "tab_closed");
        json_w_bool(&w, true);
    }
    if (st.timed_out) {
        json_w_key(&w, "timed_out");
        json_w_bool(&w, true);
    }
    if (rp->has_extra) {
        json_w_obj_end(&rp->extra);
        char *ex = json_w_take(&rp->extra, NULL);
        json_doc *d = ex ? json_parse(ex, strlen(ex), NULL, NULL) : NULL;
        for (const json_val *m = json_first(json_doc_root(d)); m; m = json_next(m)) {
            size_t kl;
            const char *k = json_key(m, &kl);
            json_w_keyn(&w, k, kl);
            json_w_val(&w, m);
        }
        json_doc_free(d);
        free(ex);
    }
    json_w_key(&w, "message");
    json_w_str(&w, text.s ? text.s : "");
    json_w_obj_end(&w);
    free(r->text);
    free(r->structured);
    r->code = 0;
    r->text = text.oom ? NULL : text.s;
    if (text.oom)
        free(text.s);
    r->structured = json_w_take(&w, NULL);
    if (!r->text || !r->structured)
        return act_fail(r, SNAP_ENOMEM, "%s, but the result ran out of memory", did);
    return 0;
}

/* ---- input, with the wait broken by a dialog ---- */

#define MAX_INPUT 16

typedef struct {
    snap_agent *a;
    int tab;
    uint64_t ids[MAX_INPUT];
    size_t n;
    bool dialog;
} input_wait;

/* Listener while input replies are pending: notes a dialog opening on the
 * tab, after which those replies will not come until it is answered. */
static void on_input_event(void *ud, cdp_conn *c, const char *session, const char *method,
                           const json_val *p)
{
    (void)c;
    (void)p;
    input_wait *w = ud;
    if (w->dialog || strcmp(method, "Page.javascriptDialogOpening") != 0)
        return;
    snap_tab *t = snap_tab_by_session(w->a, session);
    if (t && t->id == w->tab)
        w->dialog = true;
}

/* Dispatch n input commands (method, params; params consumed) on session,
 * in order, and wait until each is done or a JS dialog opens on tab t
 * (*dialog). 0, or SNAP_EBROWSER/SNAP_ETIMEOUT with r filled. */
static int dispatch_input(snap_agent *a, int tab_id, const char *session_in,
                          const char *const *methods, char **prms, size_t n, bool *dialog,
                          snap_result *r)
{
    *dialog = false;
    char session[SNAP_ID_MAX];
    snprintf(session, sizeof session, "%s", session_in);
    input_wait w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.tab = tab_id;
    int rc = 0;
    cdp_err e = {0};
    if (cdp_listen(a->c, on_input_event, &w)) {
        for (size_t i = 0; i < n; i++)
            free(prms[i]);
        return act_fail(r, SNAP_EBROWSER, "too many listeners on the connection");
    }
    for (size_t i = 0; i < n; i++) {
        if (i >= MAX_INPUT && !rc) {
            rc = CDP_ELIMIT;
            snprintf(e.msg, sizeof e.msg, "too many input events");
        }
        if (!prms[i] && !rc) {
            rc = CDP_ENOMEM;
            snprintf(e.msg, sizeof e.msg, "out of memory");
        }
        if (!rc && !w.dialog) {
            rc = snap_cdp_send(a, session, methods[i], prms[i], &w.ids[w.n], &e);
            if (rc == 0)
                w.n++;
        }
        free(prms[i]);
    }
    /* Wait for "every reply, or a dialog": one message at a time, no timer. */
    int64_t deadline = snap_now_ms() + a->o.timeout_ms;
    bool timed_out = false;
    for (;;) {
        bool all = true;
        for (size_t i = 0; i < w.n && all; i++)
            all = cdp_reply_ready(a->c, w.ids[i]);
        if (all || w.dialog)
            break;
        int64_t left = deadline - snap_now_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        cdp_err e2 = {0};
        int rc2 = cdp_pump_one(a->c, (int)left, &e2);
        if (rc2 && rc2 != CDP_ETIMEOUT) {
            if (!rc) {
                rc = rc2;
                e = e2;
            }
            break;
        }
    }
    for (size_t i = 0; i < w.n; i++) {
        if (!cdp_reply_ready(a->c, w.ids[i])) {
            /* Blocked behind the dialog (or timed out): the late reply is
             * dropped whenever it comes. */
            cdp_forget(a->c, w.ids[i]);
            continue;
        }
        cdp_err e2 = {0};
        int rc2 = cdp_wait(a->c, w.ids[i], 1, NULL, &e2);
        if (rc2 && !w.dialog && !rc) {
            rc = rc2;
            e = e2;
        }
    }
    if (timed_out && !rc && !w.dialog) {
        rc = CDP_ETIMEOUT;
        snprintf(e.msg, sizeof e.msg, "input: no reply within %d ms", a->o.timeout_ms);
    }
    cdp_unlisten(a->c, on_input_event, &w);
    snap_sync(a);
    snap_tab *t = snap_tab_by_id(a, tab_id);
    *dialog = w.dialog || (t && t->dialog_open);
    /* The input closed its own tab (window.close() in a handler): the
     * target detached before the reply came. That is the consequence, not
     * a failure; the settle step reports "the tab closed". */
    if (rc == CDP_EDETACHED && (!t || t->closed))
        return 0;
    if (rc && !*dialog) {
        if (rc == CDP_ETIMEOUT)
            return act_fail(r, SNAP_ETIMEOUT, "the page did not take the input within %d ms "
                            "(busy script?): outcome unknown", a->o.timeout_ms);
        return act_fail(r, SNAP_EBROWSER, "input: %s", e.msg);
    }
    return 0;
}

static char *mouse_params(const char *type, int x, int y, const char *button, int clicks,
                          int modifiers)
{
    return params("sddsii", "type", type, "x", (double)x, "y", (double)y, "button", button,
                  "clickCount", clicks, "modifiers", modifiers);
}

/* A left click at (x, y) in the tab's top-level coordinates. */
static int mouse_click(snap_agent *a, int tab_id, int x, int y, bool *dialog,
                       snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed)
        return act_fail(r, SNAP_ENOTAB, "the tab closed");
    static const char *const M[3] = {"Input.dispatchMouseEvent", "Input.dispatchMouseEvent",
                                     "Input.dispatchMouseEvent"};
    char *p[3] = {
        mouse_params("mouseMoved", x, y, "none", 0, 0),
        mouse_params("mousePressed", x, y, "left", 1, 0),
        mouse_params("mouseReleased", x, y, "left", 1, 0),
    };
    return dispatch_input(a, tab_id, t->session, M, p, 3, dialog, r);
}

/* The mouse to (x, y) and left there: the page sees it hover. */
static int mouse_move(snap_agent *a, int tab_id, int x, int y, bool *dialog, snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed)
        return act_fail(r, SNAP_ENOTAB, "the tab closed");
    static const char *const M[1] = {"Input.dispatchMouseEvent"};
    char *p[1] = {mouse_params("mouseMoved", x, y, "none", 0, 0)};
    return dispatch_input(a, tab_id, t->session, M, p, 1, dialog, r);
}

/* ---- locating an element for input ---- */

/* Checks on the element before input (one call, plain values back). */
static const char STATE_FN[] =
    "function(){" SF_SRC "var e=this.nodeType===1?this:this.parentElement;"
    "if(!e)return{gone:1};"
    "var r={tag:e.tagName.toLowerCase()},d=null;if(e.id)r.id=String(e.id).slice(0,40);"
    "if(e.matches(':disabled'))d=e.hasAttribute('disabled')?'disabled':"
    "'inside a disabled fieldset';"
    "else{var b=e.parentElement&&e.parentElement.closest('button:disabled,select:disabled');"
    "if(b)d='inside a disabled '+b.tagName.toLowerCase();"
    "else{var c=e.closest('[aria-disabled=true]');"
    "if(c)d=c===e?'aria-disabled':'inside an aria-disabled element';"
    "else if(e.closest('[inert]'))d='inert (blocked by a modal)';}}"
    "r.disabled=d;var s=getComputedStyle(e);"
    "if(s.visibility!=='visible')r.hidden='visibility: '+s.visibility;"
    "else if(e.checkVisibility&&!e.checkVisibility())r.hidden='not rendered';"
    "if(r.tag==='option'&&e.closest('select'))r.option=1;"
    "var sf=sfOf(e);if(sf)r.sf=sf;return r;}";

/* Is the hit node (argument) the element, inside it, or its label? A hit
 * on a ::before/::after box (a CSSPseudoElement, not a Node: TodoMVC's
 * check mark is its checkbox's ::after) counts as its element. */
static const char CONTAINS_FN[] =
    "function(n){if(n&&n.nodeType===undefined&&n.element)n=n.element;"
    "for(var x=n;x;x=x.parentNode||x.host)if(x===this)return 1;"
    "var e=n.nodeType===1?n:n.parentElement,l=e&&e.closest('label');"
    "if(l&&l.control===this)return 2;"
    "if(this.tagName==='LABEL'&&this.control&&this.control===e)return 3;return 0;}";

/* What covers the element (argument): the outermost ancestor of the hit
 * node that does not contain the element, an open modal if that has no
 * controls, and up to four visible controls in them, likely closers first. */
static const char COVER_FN[] =
    "function(t){var h=this.nodeType===undefined&&this.element?this.element:this;"
    "var n=h.nodeType===1?h:h.parentElement;"
    "var up=function(x){return x.parentElement||(x.parentNode&&x.parentNode.host)||null;};"
    "var c=n;for(var p=up(c);p&&p!==document.body&&p!==document.documentElement&&"
    "!(t&&p.contains(t));p=up(p))c=p;"
    "var vis=function(x){var b=x.getBoundingClientRect();return b.width>0&&b.height>0&&"
    "getComputedStyle(x).visibility==='visible';};"
    "var S='button,a[href],[role=button],input[type=button],input[type=submit],[role=link]';"
    "var K=/close|dismiss|accept|agree|\\bok\\b|got it|no,? thanks|reject|decline|continue|"
    "allow|deny|\\u00d7|\\u2715|\\u2716|^x$/i;"
    "var nm=function(x){return((x.getAttribute('aria-label')||'')+' '+(x.textContent||'')+"
    "' '+(x.value||'')).trim();};"
    "var all=[].slice.call(c.querySelectorAll(S)).filter(vis),m=null;"
    "if(!all.length){m=document.querySelector('[aria-modal=true],dialog[open],"
    "[role=dialog],[role=alertdialog]');"
    "if(m&&m!==c&&vis(m))all=[].slice.call(m.querySelectorAll(S)).filter(vis);else m=null;}"
    "all.sort(function(x,y){return(K.test(nm(y))?1:0)-(K.test(nm(x))?1:0);});"
    "return[c,m].concat(all.slice(0,4));}";

typedef struct {
    int x, y;                   /* top-level coordinates of the click point */
    bool option;                /* an <option> of a <select> */
    char tag[16];
    secret_form sf;             /* it is in a form with a password/OTP field */
} located;

/* Hit-test (x, y) in session viewport coordinates: the topmost node's
 * backend id and frame. DOM.getNodeForLocation takes document coordinates,
 * so the session's scroll offset (sx, sy: cssLayoutViewport pageX/pageY) is
 * added. 0 or a CDP error. */
static int hit_test(snap_agent *a, const char *session, int x, int y, double sx, double sy,
                    int *backend, char frame[SNAP_ID_MAX])
{
    pcall pc;
    int dx = (int)dfloor(x + sx), dy = (int)dfloor(y + sy);
    int rc = call(a, session, "DOM.getNodeForLocation",
                  params("iib", "x", dx, "y", dy, "includeUserAgentShadowDOM", false), &pc);
    *backend = rc ? 0 : (int)json_get_int(pc.rep.result, "backendNodeId", 0);
    snprintf(frame, SNAP_ID_MAX, "%s", rc ? "" : (json_get_str(pc.rep.result, "frameId")
                                                   ? json_get_str(pc.rep.result, "frameId")
                                                   : ""));
    pfree(&pc);
    return rc;
}

/* Role and name of a node as the accessibility tree has them; role falls
 * back to the tag name for generic containers. */
static void ax_role_name(const json_val *ax, const json_val *desc, char *role, size_t rcap,
                         char *name, size_t ncap)
{
    const json_val *n0 = json_at(json_get(ax, "nodes"), 0);
    const char *ro = json_get_str(json_get(n0, "role"), "value");
    const char *nm = json_get_str(json_get(n0, "name"), "value");
    const char *tag = json_get_str(json_get(desc, "node"), "localName");
    if (!ro || !*ro || strcmp(ro, "generic") == 0 || strcmp(ro, "none") == 0 ||
        strcmp(ro, "GenericContainer") == 0 || json_bool(json_get(n0, "ignored")))
        ro = tag && *tag ? tag : "element";
    snprintf(role, rcap, "%s", ro);
    snprintf(name, ncap, "%s", nm ? nm : "");
}

/* Fail with SNAP_ECOVERED: the element `what` (objectId target_oid in
 * session, may be NULL when the covered thing is an iframe) is covered by
 * the node hit_backend in frame hit_frame; name it and the controls in it
 * with refs of their own. */
static int report_covered(snap_agent *a, int tab_id, const char *session, int hit_backend,
                          const char *hit_frame, const char *target_oid, const char *what,
                          session_set *ss, snap_result *r)
{
    sessions_note(ss, session);
    snap_tab *t = snap_tab_by_id(a, tab_id);
    snap_frame *hf = t ? snap_frame_find(t, hit_frame) : NULL;
    for (size_t i = 0; t && !hf && i < t->nframes; i++)
        if (strcmp(t->frames[i].session, session) == 0 && !t->frames[i].gone)
            hf = &t->frames[i];
    /* Copies: the frame array may move during the calls below. */
    char hf_id[SNAP_ID_MAX] = "", hf_loader[SNAP_ID_MAX] = "";
    if (hf) {
        snprintf(hf_id, sizeof hf_id, "%s", hf->id);
        snprintf(hf_loader, sizeof hf_loader, "%s", hf->loader);
    }
    pcall pc;
    int rc = call(a, session, "DOM.resolveNode",
                  params("is", "backendNodeId", hit_backend, "objectGroup", ACT_GROUP), &pc);
    char hit_oid[SNAP_ID_MAX] = "";
    if (rc == 0)
        snprintf(hit_oid, sizeof hit_oid, "%s",
                 json_get_str(json_get(pc.rep.result, "object"), "objectId")
                 ? json_get_str(json_get(pc.rep.result, "object"), "objectId") : "");
    pfree(&pc);
    enum { NMAX = 6 };
    char oids[NMAX][SNAP_ID_MAX];
    int count = 0;
    if (*hit_oid) {
        char *args = target_oid ? arg_obj(target_oid) : NULL;
        rc = call(a, session, "Runtime.callFunctionOn",
                  fn_params(hit_oid, COVER_FN, args ? args : "[]", false, false), &pc);
        free(args);
        const char *arr = fn_object(&pc);
        pcall props;
        memset(&props, 0, sizeof props);
        if (arr && call(a, session, "Runtime.getProperties",
                        params("sb", "objectId", arr, "ownProperties", true), &props) == 0) {
            for (int i = 0; i < NMAX; i++) {
                char idx[8];
                snprintf(idx, sizeof idx, "%d", i);
                oids[i][0] = 0;
                for (const json_val *pr = json_first(json_get(props.rep.result, "result")); pr;
                     pr = json_next(pr)) {
                    const char *nm = json_get_str(pr, "name");
                    const char *o = json_get_str(json_get(pr, "value"), "objectId");
                    if (nm && strcmp(nm, idx) == 0 && o && strlen(o) < SNAP_ID_MAX)
                        snprintf(oids[i], SNAP_ID_MAX, "%s", o);
                }
                count = i + 1;
            }
        }
        pfree(&props);
        pfree(&pc);
    }
    /* Backend ids, roles and names of what was found, in one round trip. */
    pcall d[NMAX], x[NMAX];
    for (int i = 0; i < count; i++) {
        if (!oids[i][0])
            continue;
        psend_p(a, session, "DOM.describeNode", params("s", "objectId", oids[i]), &d[i]);
        psend_p(a, session, "Accessibility.getPartialAXTree",
                params("sb", "objectId", oids[i], "fetchRelatives", false), &x[i]);
    }
    struct {
        uint32_t n;
        char role[32], name[200];
    } found[NMAX];
    memset(found, 0, sizeof found);
    for (int i = 0; i < count; i++) {
        if (!oids[i][0])
            continue;
        pwait(a, &d[i]);
        pwait(a, &x[i]);
        int be = (int)json_get_int(json_get(d[i].rep.result, "node"), "backendNodeId", 0);
        ax_role_name(x[i].rep.result, d[i].rep.result, found[i].role, sizeof found[i].role,
                     found[i].name, sizeof found[i].name);
        pfree(&d[i]);
        pfree(&x[i]);
        if (be && hf_id[0])
            found[i].n = snap_ref_for(a, tab_id, hf_id, hf_loader, be, found[i].role,
                                      found[i].name);
    }
    if (!found[0].n)
        return act_fail(r, SNAP_ECOVERED, "%s is covered by another element at the click "
                        "point (it could not be described); close what is on top, take a "
                        "snapshot and try again", what);
    sbuf txt = {0};
    int nctl = 0;
    for (int i = 0; i < count; i++) {
        if (!found[i].n)
            continue;
        const char *lead = i == 0 ? "covered by: " : i == 1 ? "\nopen dialog: "
                         : nctl++ ? ", " : "\ncontrols: ";
        sb_add(&txt, "%s", lead);
        sb_page(&txt, found[i].role, 32, 0);
        if (found[i].name[0]) {
            sb_putn(&txt, " ", 1);
            sb_quoted(&txt, found[i].name, 80);
        }
        sb_add(&txt, " [e%u]", found[i].n);
    }
    act_fail(r, SNAP_ECOVERED, "%s is covered by another element, so a click would land on "
             "that instead; close or answer it first, then try again.\n<<<page-content "
             "nonce=%s>>>\n%s\n<<<end page-content nonce=%s>>>", what, a->nonce,
             txt.s ? txt.s : "", a->nonce);
    free(txt.s);
    /* Structured: the covering element and the controls, each with a ref. */
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, false);
    json_w_key(&w, "error");
    json_w_str(&w, "covered");
    json_w_key(&w, "message");
    json_w_str(&w, r->text ? r->text : "");
    for (int i = 0; i < count && i < 2; i++) {
        if (!found[i].n)
            continue;
        char ref[16];
        snprintf(ref, sizeof ref, "e%u", found[i].n);
        json_w_key(&w, i == 0 ? "covered_by" : "open_dialog");
        json_w_obj_begin(&w);
        json_w_key(&w, "ref");
        json_w_str(&w, ref);
        json_w_key(&w, "role");
        json_w_str(&w, found[i].role);
        json_w_key(&w, "name");
        json_w_str(&w, found[i].name);
        json_w_obj_end(&w);
    }
    json_w_key(&w, "controls");
    json_w_arr_begin(&w);
    for (int i = 2; i < count; i++) {
        if (!found[i].n)
            continue;
        char ref[16];
        snprintf(ref, sizeof ref, "e%u", found[i].n);
        json_w_obj_begin(&w);
        json_w_key(&w, "ref");
        json_w_str(&w, ref);
        json_w_key(&w, "role");
        json_w_str(&w, found[i].role);
        json_w_key(&w, "name");
        json_w_str(&w, found[i].name);
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    json_w_obj_end(&w);
    char *js = json_w_take(&w, NULL);
    if (js) {
        free(r->structured);
        r->structured = js;
    }
    return SNAP_ECOVERED;
}

/* The first content quad with an area, clipped to the viewport (vw x vh);
 * its centre in *x, *y. False when there is none. */
static bool quad_point(const json_val *quads, double vw, double vh, int *x, int *y)
{
    for (const json_val *q = json_first(quads); q; q = json_next(q)) {
        if (json_len(q) != 8)
            continue;
        double p[8];
        int i = 0;
        for (const json_val *v = json_first(q); v && i < 8; v = json_next(v))
            p[i++] = json_num(v);
        double area = 0;
        for (int k = 0; k < 4; k++) {
            int n = (k + 1) % 4;
            area += p[2 * k] * p[2 * n + 1] - p[2 * n] * p[2 * k + 1];
        }
        if ((area < 0 ? -area : area) / 2 < 1)
            continue;
        double x0 = p[0], x1 = p[0], y0 = p[1], y1 = p[1];
        for (int k = 1; k < 4; k++) {
            x0 = dmin(x0, p[2 * k]);
            x1 = dmax(x1, p[2 * k]);
            y0 = dmin(y0, p[2 * k + 1]);
            y1 = dmax(y1, p[2 * k + 1]);
        }
        if (vw > 0 && vh > 0) {
            x0 = dmax(x0, 0);
            y0 = dmax(y0, 0);
            x1 = dmin(x1, vw);
            y1 = dmin(y1, vh);
            if (x1 - x0 < 1 || y1 - y0 < 1)
                continue;
        }
        *x = (int)dfloor((x0 + x1) / 2);
        *y = (int)dfloor((y0 + y1) / 2);
        return true;
    }
    return false;
}

static snap_frame *frame_parent(snap_tab *t, snap_frame *f)
{
    return f->parent[0] ? snap_frame_find(t, f->parent) : NULL;
}

/* Scroll the element into view and check that it can take input: attached
 * (resolve did that), visible, enabled, not covered. Fills *loc with the
 * click point in the tab's top-level coordinates. The element is oid (its
 * backend node id: backend) in frame frame_id of tab tab_id; what names it
 * in messages. With check_enabled false a disabled element is located
 * anyway. 0 or a SNAP_E* code with r filled. */
static int locate(snap_agent *a, int tab_id, const char *frame_id, const char *oid,
                  int backend, const char *what, bool check_enabled, session_set *ss,
                  located *loc, snap_result *r)
{
    memset(loc, 0, sizeof *loc);
    snap_tab *t0 = snap_tab_by_id(a, tab_id);
    snap_frame *f0 = t0 ? snap_frame_find(t0, frame_id) : NULL;
    if (!f0 || f0->gone || t0->closed)
        return act_fail(r, SNAP_ESTALE, "%s: its frame is no longer in the page", what);
    char s[SNAP_ID_MAX];
    snprintf(s, sizeof s, "%s", f0->session);
    sessions_note(ss, s);
    pcall sc, st, qu, lm;
    psend_p(a, s, "DOM.scrollIntoViewIfNeeded", params("s", "objectId", oid), &sc);
    psend_p(a, s, "Runtime.callFunctionOn", fn_params(oid, STATE_FN, NULL, true,
                                                      false), &st);
    psend_p(a, s, "DOM.getContentQuads", params("s", "objectId", oid), &qu);
    psend(a, s, "Page.getLayoutMetrics", NULL, &lm);
    int rsc = pwait(a, &sc), rst = pwait(a, &st), rqu = pwait(a, &qu), rlm = pwait(a, &lm);
    int rc = 0;
    const json_val *v = fn_value(&st);
    if (rst && rst != CDP_EPROTOCOL) {
        rc = act_fail(r, SNAP_EBROWSER, "%s: %s", what, st.e.msg);
        goto out;
    }
    if (!v || json_get(v, "gone")) {
        rc = act_fail(r, SNAP_ESTALE, "%s was removed from the page; take a new snapshot",
                      what);
        goto out;
    }
    const char *tag = json_get_str(v, "tag");
    snprintf(loc->tag, sizeof loc->tag, "%s", tag ? tag : "");
    loc->option = json_get(v, "option") != NULL;
    secret_form_note(&loc->sf, v);
    const char *dis = json_get_str(v, "disabled");
    char pb[256];
    if (check_enabled && dis) {
        rc = act_fail(r, SNAP_EDISABLED, "%s is disabled (%s); it cannot be used until the "
                      "page enables it", what, pg(pb, sizeof pb, dis));
        goto out;
    }
    if (loc->option) {
        rc = 0;                 /* options of a <select> are chosen, not clicked */
        goto out;
    }
    const char *hidden = json_get_str(v, "hidden");
    if (hidden) {
        rc = act_fail(r, SNAP_ENOTVISIBLE, "%s is hidden (%s); it cannot be clicked", what,
                      pg(pb, sizeof pb, hidden));
        goto out;
    }
    (void)rsc;
    const json_val *vp = json_get(lm.rep.result, "cssLayoutViewport");
    double vw = rlm ? 0 : json_num(json_get(vp, "clientWidth"));
    double vh = rlm ? 0 : json_num(json_get(vp, "clientHeight"));
    double sx = rlm ? 0 : json_num(json_get(vp, "pageX"));
    double sy = rlm ? 0 : json_num(json_get(vp, "pageY"));
    int x, y;
    if (rqu || !quad_point(json_get(qu.rep.result, "quads"), vw, vh, &x, &y)) {
        rc = act_fail(r, SNAP_ENOTVISIBLE, "%s has no visible box on screen (zero size, "
                      "clipped, or outside the viewport even after scrolling)", what);
        goto out;
    }
    /* Hit test where the click will land. */
    int hb;
    char hframe[SNAP_ID_MAX];
    if (hit_test(a, s, x, y, sx, sy, &hb, hframe) || !hb) {
        rc = act_fail(r, SNAP_ENOTVISIBLE, "%s: nothing can be hit at its centre (%d,%d)",
                      what, x, y);
        goto out;
    }
    if (hb != backend) {
        pcall hr, in;
        int ok = 0;
        if (call(a, s, "DOM.resolveNode", params("is", "backendNodeId", hb, "objectGroup",
                                                 ACT_GROUP), &hr) == 0) {
            const char *hoid = json_get_str(json_get(hr.rep.result, "object"), "objectId");
            char *args = hoid ? arg_obj(hoid) : NULL;
            if (args) {
                if (call(a, s, "Runtime.callFunctionOn",
                         fn_params(oid, CONTAINS_FN, args, true, false), &in) == 0)
                    ok = (int)json_num(fn_value(&in));
                pfree(&in);
                free(args);
            }
        }
        pfree(&hr);
        if (!ok) {
            rc = report_covered(a, tab_id, s, hb, hframe, oid, what, ss, r);
            goto out;
        }
    }
    /* Up the chain of out-of-process frames: add each iframe's content-box
     * origin in its parent, and check nothing in the parent covers it. */
    double ox = x, oy = y;
    char gid[SNAP_ID_MAX];
    snprintf(gid, sizeof gid, "%s", frame_id);
    for (int depth = 0;; depth++) {
        /* Looked up again every round: the frame array moves during calls. */
        snap_tab *t = snap_tab_by_id(a, tab_id);
        snap_frame *g = t ? snap_frame_find(t, gid) : NULL;
        if (!g || depth > 32) {
            rc = act_fail(r, SNAP_ESTALE, "%s: its frame is no longer in the page", what);
            goto out;
        }
        if (strcmp(g->session, t->session) == 0)
            break;
        snap_frame *p = frame_parent(t, g);
        while (p && strcmp(p->session, g->session) == 0) {
            g = p;
            p = frame_parent(t, g);
        }
        if (!p || p->gone) {
            rc = act_fail(r, SNAP_ESTALE, "%s: its frame is no longer in the page", what);
            goto out;
        }
        char ps[SNAP_ID_MAX], lroot[SNAP_ID_MAX];
        snprintf(ps, sizeof ps, "%s", p->session);
        snprintf(lroot, sizeof lroot, "%s", g->id);
        snprintf(gid, sizeof gid, "%s", p->id);
        pcall fo, bm, plm;
        int be = 0;
        psend_p(a, ps, "DOM.getFrameOwner", params("s", "frameId", lroot), &fo);
        psend(a, ps, "Page.getLayoutMetrics", NULL, &plm);
        if (pwait(a, &fo) == 0)
            be = (int)json_get_int(fo.rep.result, "backendNodeId", 0);
        pfree(&fo);
        double psx = 0, psy = 0;
        if (pwait(a, &plm) == 0) {
            const json_val *pvp = json_get(plm.rep.result, "cssLayoutViewport");
            psx = json_num(json_get(pvp, "pageX"));
            psy = json_num(json_get(pvp, "pageY"));
        }
        pfree(&plm);
        const json_val *content = NULL;
        if (be && call(a, ps, "DOM.getBoxModel", params("i", "backendNodeId", be), &bm) == 0)
            content = json_get(json_get(bm.rep.result, "model"), "content");
        if (!content) {
            if (be)
                pfree(&bm);
            rc = act_fail(r, SNAP_ENOTVISIBLE, "%s: the frame it is in has no box in its "
                          "parent page", what);
            goto out;
        }
        ox += json_num(json_at(content, 0));
        oy += json_num(json_at(content, 1));
        pfree(&bm);
        int phb;
        char phf[SNAP_ID_MAX];
        int px = (int)dfloor(ox), py = (int)dfloor(oy);
        if (hit_test(a, ps, px, py, psx, psy, &phb, phf) || !phb) {
            rc = act_fail(r, SNAP_ENOTVISIBLE, "%s: its frame is outside the visible part "
                          "of the page", what);
            goto out;
        }
        if (phb != be) {
            rc = report_covered(a, tab_id, ps, phb, phf, NULL, what, ss, r);
            goto out;
        }
    }
    loc->x = (int)dfloor(ox);
    loc->y = (int)dfloor(oy);
out:
    pfree(&sc);
    pfree(&st);
    pfree(&qu);
    pfree(&lm);
    return rc;
}

/* ---- after a confirmation ----
 *
 * A confirmation can take minutes, and the page runs meanwhile: it can move
 * another control under the approved one, disable, replace or rewrite it,
 * move the focus, or navigate. What the human approved must be what runs,
 * so after a decision that went through the hook (d.confirmed; a plain
 * allow costs no extra round trip) the target is resolved again and
 * checked as it was the first time, and any difference calls the action
 * off before anything is sent. What is left between these checks and the
 * input itself is a few milliseconds (docs/threat-model.md). */

/* Call a confirmed action off: r (filled by the check that failed, or
 * empty) becomes a SNAP_ESTALE result that says what changed, with the
 * failed check's own result under "detail"; the audit gets change (a fixed
 * phrase, no page text) as the outcome's detail. */
static int call_off(snap_gated *g, const char *tool, const char *what, const char *change,
                    snap_result *r)
{
    snprintf(g->changed, sizeof g->changed, "the page changed while the human was asked: "
             "%s; nothing was done", change);
    char *detail = r->text;
    char *was = r->structured;
    r->text = NULL;
    r->structured = NULL;
    act_fail(r, SNAP_ESTALE, "%s%s%s was not done: the page changed while you were asked to "
             "confirm it (%s), so what was approved is not what would run. Nothing was "
             "sent. Take a new snapshot; trying again asks the human again.%s%s", tool,
             what && *what ? " " : "", what ? what : "", change, detail && *detail ? "\n" : "",
             detail ? detail : "");
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, false);
    json_w_key(&w, "error");
    json_w_str(&w, snap_strerror(SNAP_ESTALE));
    json_w_key(&w, "action");
    json_w_str(&w, tool);
    json_w_key(&w, "changed_while_confirming");
    json_w_str(&w, change);
    json_w_key(&w, "done");
    json_w_bool(&w, false);
    json_w_key(&w, "message");
    json_w_str(&w, r->text ? r->text : "");
    if (was && *was == '{') {
        json_w_key(&w, "detail");
        json_w_raw(&w, was, strlen(was), true);
    }
    json_w_obj_end(&w);
    char *js = json_w_take(&w, NULL);
    if (js) {
        free(r->structured);
        r->structured = js;
    }
    free(detail);
    free(was);
    return SNAP_ESTALE;
}

/* The fixed phrase for a failed check of locate or resolve. */
/* The keys would not go to the element named: the page moved the focus
 * (to: what has it, page-derived tag and type). Confirmed or not, nothing
 * is typed or pressed. */
static int focus_lost(snap_gated *g, const char *tool, const char *what, const char *to,
                      snap_result *r)
{
    char where[96];
    pg(where, sizeof where, to && *to ? to : "another element");
    char change[160];
    snprintf(change, sizeof change, "the focus did not stay on the element (it went to %s)",
             where);
    if (g->d.confirmed)
        return call_off(g, tool, what, change, r);
    return act_fail(r, SNAP_ESTALE, "%s%s%s was not done: the page moved the focus away from "
                    "the element named (to %s), so the keys would have gone there. Nothing "
                    "was typed or pressed. Take a new snapshot; a page that keeps moving the "
                    "focus away cannot be typed into with this element.", tool,
                    what && *what ? " " : "", what ? what : "", where);
}

/* Where the keys of the page go, for the element oid (session): 0 when
 * to it, else SNAP_ESTALE with to (cap bytes) saying where. */
static int focus_where(snap_agent *a, const char *session, const char *oid, char *to,
                       size_t cap)
{
    pcall pc;
    int rc = call(a, session, "Runtime.callFunctionOn",
                  fn_params(oid, FOCUS_ON_FN, NULL, true, false), &pc);
    const char *s = rc ? NULL : json_str(fn_value(&pc), NULL);
    bool on = s && !*s;
    snprintf(to, cap, "%s", s ? s : "an element the check could not read");
    pfree(&pc);
    return on ? 0 : SNAP_ESTALE;
}

static const char *change_phrase(int code)
{
    switch (code) {
    case SNAP_ECOVERED: return "another element is now at the click point";
    case SNAP_EDISABLED: return "the element is disabled now";
    case SNAP_ENOTVISIBLE: return "the element is hidden or has no box on screen now";
    case SNAP_EDIALOG: return "a dialog opened";
    case SNAP_ENOTAB: return "the tab closed";
    case SNAP_EBROWSER: return "the page could not be read again";
    case SNAP_ETIMEOUT: return "the page did not answer the checks";
    default: return "the element was removed or replaced, or the page navigated";
    }
}

/* After a confirmed decision on tg: the ref resolves to the same node in
 * the same document, attached, no dialog is open, and the element's facts
 * are what the human was shown; with loc (click) it is located again
 * (visible, enabled, and the node at the exact point to click is the
 * element or inside it) and loc gets that point. 0, or call_off. */
static int recheck_target(snap_agent *a, snap_gated *g, const char *tool, const target *tg,
                          session_set *ss, located *loc, snap_result *r)
{
    if (!g->d.confirmed)
        return 0;
    /* A dialog first: the renderer answers no script while one is open. */
    snap_sync(a);
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    if (!t || t->closed)
        return call_off(g, tool, tg->what, change_phrase(SNAP_ENOTAB), r);
    if (t->dialog_open)
        return call_off(g, tool, tg->what, change_phrase(SNAP_EDIALOG), r);
    snap_resolved res;
    snap_result rr = {0};
    int rc = snap_ref_resolve(a, tg->ref, &res, &rr);
    if (rc) {
        snap_result_free(r);
        *r = rr;
        return call_off(g, tool, tg->what, change_phrase(rc), r);
    }
    snap_resolved_release(a, &res);
    snap_result_free(&rr);
    char why[200];
    if (snap_gate_facts_same(a, g, tg->session, tg->oid, why, sizeof why))
        return call_off(g, tool, tg->what, why, r);
    if (loc && (rc = locate(a, tg->tab, tg->frame, tg->oid, tg->backend, tg->what, true, ss,
                            loc, r)))
        return call_off(g, tool, tg->what, change_phrase(rc), r);
    return 0;
}

/* After a confirmed page-level decision: the tab is still open, on the
 * document it was on (nav0) and (dialog: the dialog's message, NULL when
 * none was approved) with the same dialog open. 0, or call_off. */
static int recheck_page(snap_agent *a, snap_gated *g, const char *tool, int tab_id,
                        uint64_t nav0, const char *dialog, snap_result *r)
{
    if (!g->d.confirmed)
        return 0;
    snap_sync(a);
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed)
        return call_off(g, tool, NULL, change_phrase(SNAP_ENOTAB), r);
    if (t->nav != nav0)
        return call_off(g, tool, NULL, "the page navigated to another document", r);
    if (dialog && (!t->dialog_open || strcmp(dialog, t->dialog_message ? t->dialog_message
                                                                         : "") != 0))
        return call_off(g, tool, NULL, "the dialog that was approved is no longer the one "
                        "open", r);
    return 0;
}

/* ---- what changed ---- */

/* Watch the element's document for text added or changed by the action.
 * Returns a recorder object; COLLECT_FN reads and stops it. */
#define OBSERVE_SRC \
    "function(){var d=this.ownerDocument||document,rec={n:[]};" \
    "var o=new MutationObserver(function(ms){ms.forEach(function(m){" \
    "if(rec.n.length>200)return;if(m.type==='characterData')rec.n.push(m.target);" \
    "else m.addedNodes.forEach(function(x){rec.n.push(x);});});});" \
    "o.observe(d,{subtree:true,childList:true,characterData:true});rec.o=o;return rec;}"
static const char OBSERVE_FN[] = OBSERVE_SRC;
/* The same recorder on the document (for press, which has no element). */
static const char OBSERVE_DOC_EXPR[] = "(" OBSERVE_SRC ").call(document)";

/* New visible text since OBSERVE_FN, outermost nodes only, at most 300
 * characters. */
static const char COLLECT_FN[] =
    "function(){var r=this;r.o.disconnect();var seen=[],out=[];"
    "var txt=function(x){if(!x.isConnected)return'';"
    "var e=x.nodeType===1?x:x.parentElement;if(!e||!e.getClientRects().length)return'';"
    "if(/^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/.test(e.tagName))return'';"
    "var s=x.nodeType===3?x.data:x.nodeType===1?(x.innerText||''):'';"
    "return s.replace(/\\s+/g,' ').trim();};"
    "r.n.forEach(function(x){if(seen.indexOf(x)>=0)return;"
    "for(var p=x.parentNode;p;p=p.parentNode)if(seen.indexOf(p)>=0)return;"
    "seen.push(x);var s=txt(x);if(s&&out.indexOf(s)<0)out.push(s);});"
    "var s=out.join(' | ');return s.length>300?s.slice(0,300)+'\\u2026':s;}";

/* The element's state after the action (checkbox, radio, ARIA states). */
static const char AFTER_FN[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;"
    "if(!e||!e.isConnected)return{gone:1};var r={},t=(e.type||'').toLowerCase();"
    "if(e.tagName==='INPUT'&&(t==='checkbox'||t==='radio'))r.checked=e.checked?'true':'false';"
    "else if(e.hasAttribute('aria-checked'))r.checked=e.getAttribute('aria-checked');"
    "['expanded','pressed','selected'].forEach(function(k){"
    "if(e.hasAttribute('aria-'+k))r[k]=e.getAttribute('aria-'+k);});"
    "if(document.activeElement===e)r.focused=true;return r;}";

/* Read what changed (text added near the element, its states) into rp:
 * text for the page block, members for structured. obs_oid is the recorder
 * from OBSERVE_FN (may be ""), elem_oid the element. */
static void collect_changes(snap_agent *a, const char *session, const char *obs_oid,
                            const char *elem_oid, act_report *rp)
{
    pcall co, af;
    memset(&co, 0, sizeof co);
    if (*obs_oid)
        psend_p(a, session, "Runtime.callFunctionOn",
                fn_params(obs_oid, COLLECT_FN, NULL, true, false), &co);
    psend_p(a, session, "Runtime.callFunctionOn",
            fn_params(elem_oid, AFTER_FN, NULL, true, false), &af);
    if (*obs_oid)
        pwait(a, &co);
    pwait(a, &af);
    const json_val *sv = *obs_oid ? fn_value(&co) : NULL;
    const char *added = json_str(sv, NULL);
    const json_val *av = fn_value(&af);
    static const char *const KEYS[] = {"checked", "expanded", "pressed", "selected"};
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        const char *v = json_get_str(av, KEYS[i]);
        if (!v)
            continue;
        json_w_key(&rp->extra, KEYS[i]);
        json_w_str(&rp->extra, v);
        rp->has_extra = true;
    }
    if (json_get(av, "gone")) {
        json_w_key(&rp->extra, "element_removed");
        json_w_bool(&rp->extra, true);
        rp->has_extra = true;
    }
    if (added && *added) {
        sb_add(&rp->page, "new text: ");
        sb_page(&rp->page, added, 300, 0);
        json_w_key(&rp->extra, "new_text");
        json_w_str(&rp->extra, added);
        rp->has_extra = true;
    }
    pfree(&co);
    pfree(&af);
}

/* One line of states for the result text: "now checked", "expanded". */
static void states_line(const act_report *rp, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!rp->has_extra || rp->extra.err)
        return;
    /* The writer holds "{...members"; read it back as an object. */
    size_t n = rp->extra.len;
    char *tmp = malloc(n + 2);
    if (!tmp)
        return;
    memcpy(tmp, rp->extra.buf, n);
    tmp[n] = '}';
    tmp[n + 1] = 0;
    json_doc *d = json_parse(tmp, n + 1, NULL, NULL);
    free(tmp);
    const json_val *o = json_doc_root(d);
    size_t len = 0;
    const char *c = json_get_str(o, "checked");
    if (c)
        len += (size_t)snprintf(buf + len, cap - len, "now %s",
                                strcmp(c, "true") == 0 ? "checked" :
                                strcmp(c, "false") == 0 ? "unchecked" : "mixed");
    static const char *const K[] = {"expanded", "pressed", "selected"};
    for (size_t i = 0; i < 3 && len < cap; i++) {
        const char *v = json_get_str(o, K[i]);
        char pb[64];
        if (v)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s=%s", len ? ", " : "", K[i],
                                    pg(pb, sizeof pb, v));
    }
    if (len < cap && json_get(o, "element_removed"))
        snprintf(buf + len, cap - len, "%sthe element is gone from the page",
                 len ? ", " : "");
    json_doc_free(d);
}

/* Release what an action took, unless a dialog blocks the page (then the
 * renderer would not answer; the objects go with the document). */
static void release_all(snap_agent *a, target *tg, session_set *ss)
{
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    if (!t || t->closed || t->dialog_open) {
        ss->n = 0;
        tg->oid[0] = 0;
        return;
    }
    sessions_release(a, ss);
    release_object(a, tg->session, tg->oid);
}

/* ---- click ---- */

/* Choose an <option> of a <select> the way a user's pick does. */
static const char PICK_OPTION_FN[] =
    "function(){var s=this.closest('select');if(!s)return false;"
    "if(s.multiple)this.selected=!this.selected;else this.selected=true;"
    "s.dispatchEvent(new Event('input',{bubbles:true}));"
    "s.dispatchEvent(new Event('change',{bubbles:true}));return true;}";

/* Resolves after the frame has drawn twice, or after 100 ms (a frame that
 * does not draw, e.g. in a background tab, must not hold the click up). */
static const char RAF2_EXPR[] =
    "new Promise(function(r){var f=function(){r(1);};setTimeout(f,100);"
    "requestAnimationFrame(function(){requestAnimationFrame(f);});})";

/* Resolves once the page has run its next frame's animation callbacks and
 * a task after them (what a click set going by then has started), or after
 * 100 ms (a page that does not draw). */
static const char FRAME_EXPR[] =
    "new Promise(function(r){var f=function(){r(1);};setTimeout(f,100);"
    "requestAnimationFrame(function(){setTimeout(f,0);});})";

/* Ask the gate about a page-level action on the current tab. With no open
 * tab there is nothing to act on: the action fails by itself, before
 * sending anything. */
static int gate_page(snap_agent *a, const char *tool, bool state_change, bool submit,
                     const char *dialog, const char *obs, snap_gated *g, snap_result *r)
{
    memset(g, 0, sizeof *g);
    memset(r, 0, sizeof *r);
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return 0;
    snap_gate_in gi = {.tool = tool, .tab = t->id, .state_change = state_change,
                       .submit = submit, .dialog = dialog, .obs = obs};
    return snap_gate_ask(a, &gi, g, r);
}

/* A hover names the controls it brought into view: at most this many, on
 * pages whose last snapshot had at most HOVER_REPORT_LINES lines. */
#define HOVER_REPORT_MAX 8
#define HOVER_REPORT_LINES 4000

/* Click the ref's element, or (hover) move the mouse over it. */
static int pointer_run(snap_agent *a, const char *ref, const char *obs, bool hover,
                       snap_result *r)
{
    const char *tool = hover ? "hover" : "click";
    uint64_t *before = NULL;     /* hover: the controls shown before */
    size_t nbefore = 0;
    snap_tab *t;
    int rc = begin(a, obs, &t, r);
    if (rc)
        return rc;
    int64_t deadline = snap_now_ms() + a->o.timeout_ms;
    target tg;
    if ((rc = resolve(a, ref, &tg, r)))
        return rc;
    snap_gated gg = {0};
    session_set ss = {0};
    sessions_note(&ss, tg.session);
    /* The recorder and what the gate needs of the element are read in the
     * same round trip as the checks. */
    pcall ob, fc;
    psend_p(a, tg.session, "Runtime.callFunctionOn",
            fn_params(tg.oid, OBSERVE_FN, NULL, false, false), &ob);
    psend_p(a, tg.session, "Runtime.callFunctionOn", snap_gate_facts_params(tg.oid), &fc);
    located loc;
    /* A disabled control can be hovered (its tooltip may say why). */
    rc = locate(a, tg.tab, tg.frame, tg.oid, tg.backend, tg.what, !hover, &ss, &loc, r);
    pwait(a, &ob);
    pwait(a, &fc);
    char obs_oid[SNAP_ID_MAX] = "";
    if (fn_object(&ob) && strlen(fn_object(&ob)) < SNAP_ID_MAX)
        snprintf(obs_oid, sizeof obs_oid, "%s", fn_object(&ob));
    pfree(&ob);
    if (rc) {
        pfree(&fc);
        goto done;
    }
    if (hover && loc.option) {
        pfree(&fc);
        rc = act_fail(r, SNAP_EINVAL, "%s is an option of a closed select: hover the select "
                      "itself, or choose with browser_select", tg.what);
        goto done;
    }
    /* Hovering reads (like scrolling): the page's own hover handlers run,
     * as they do whenever a pointer passes. */
    snap_gate_in gi = {.tool = tool, .tab = tg.tab, .frame = tg.frame,
                       .session = tg.session, .oid = tg.oid, .ref_n = tg.n,
                       .facts = json_is(fn_value(&fc), JSON_OBJECT) ? fn_value(&fc) : NULL,
                       .state_change = !hover, .obs = obs};
    rc = snap_gate_ask(a, &gi, &gg, r);
    pfree(&fc);
    if (rc || (rc = recheck_target(a, &gg, tool, &tg, &ss, &loc, r)))
        goto done;
    if (!hover) {
        secret_form_known(a, tg.tab, tg.frame, tg.session, tg.oid, &loc.sf);
        secret_form_arm(a, &loc.sf);
    }
    t = snap_tab_by_id(a, tg.tab);
    uint64_t nav0 = t ? t->nav : 0;
    size_t tabs0 = a->ntabs;
    bool dialog = false;
    /* A hover is for what it shows: the controls of the last snapshot are
     * noted, to name the ones that appear (not on huge pages, where the
     * rebuild would cost more than the agent's own next snapshot). */
    if (hover && t)
        before = snap_controls_now(t, HOVER_REPORT_LINES, &nbefore);
    /* Input for an out-of-process frame is routed by the browser from the
     * frame's last composited layout: wait until that frame has produced
     * two animation frames, so a frame that just loaded or moved takes the
     * click where the checks found its element. */
    t = snap_tab_by_id(a, tg.tab);
    snap_frame *tf = t ? snap_frame_find(t, tg.frame) : NULL;
    if (tf && tf->oopif && !loc.option) {
        pcall pr;
        call(a, tg.session, "Runtime.evaluate",
             params("sbb", "expression", RAF2_EXPR, "awaitPromise", true, "returnByValue", true),
             &pr);
        pfree(&pr);
    }
    if (loc.option) {
        pcall po;
        rc = call(a, tg.session, "Runtime.callFunctionOn",
                  fn_params(tg.oid, PICK_OPTION_FN, NULL, true, false), &po);
        pfree(&po);
        if (rc) {
            rc = act_fail(r, SNAP_EBROWSER, "%s: %s", tg.what, po.e.msg);
            goto done;
        }
    } else if ((rc = hover ? mouse_move(a, tg.tab, loc.x, loc.y, &dialog, r)
                           : mouse_click(a, tg.tab, loc.x, loc.y, &dialog, r))) {
        goto done;
    }
    /* The page reports its next frame: with nothing else happening, the
     * click has settled once that frame is in (see snap_settle_frame). */
    uint64_t frame_call = 0;
    if (!dialog) {
        pcall pf;
        psend_p(a, tg.session, "Runtime.evaluate",
                params("sbb", "expression", FRAME_EXPR, "awaitPromise", true, "returnByValue",
                       true), &pf);
        frame_call = pf.sent ? pf.id : 0;
    }
    char did[800];
    snprintf(did, sizeof did, "%s %s", hover ? "hovered over" : "clicked", tg.what);
    snap_settled st;
    if ((rc = settle_after(a, tg.tab, nav0, tabs0, deadline, frame_call, did, &st, r)))
        goto done;
    act_report rp;
    report_init(&rp, tool, tg.ref);
    rp.sf = loc.sf;
    if (page_usable(a, tg.tab, &st))
        collect_changes(a, tg.session, obs_oid, tg.oid, &rp);
    t = snap_tab_by_id(a, tg.tab);
    if (before && t && page_usable(a, tg.tab, &st) && !st.nnew) {
        char *shown = snap_controls_new(a, t, before, nbefore, HOVER_REPORT_MAX);
        if (shown) {
            sb_add(&rp.page, "%snow shown:\n", rp.page.len ? "\n" : "");
            sb_putn(&rp.page, shown, strlen(shown));
            free(shown);
        }
    }
    free(before);
    before = NULL;
    /* The element's states after a click (a hover changes none of its own
     * that the agent asked for: what appeared is in the page detail). */
    char states[160];
    states_line(&rp, states, sizeof states);
    if (states[0] && !hover)
        snprintf(did + strlen(did), sizeof did - strlen(did), " (%s)", states);
    rc = finish(a, tg.tab, did, &st, &rp, r);
    report_free(&rp);
done:
    free(before);
    snap_gate_done(a, &gg, rc, r);
    release_all(a, &tg, &ss);
    return rc;
}

int snap_click(snap_agent *a, const char *ref, const char *obs, snap_result *r)
{
    return pointer_run(a, ref, obs, false, r);
}

int snap_hover(snap_agent *a, const char *ref, const char *obs, snap_result *r)
{
    return pointer_run(a, ref, obs, true, r);
}

/* ---- eval (granted and confirmed only) ---- */

static int eval_run(snap_agent *a, const char *expression, snap_result *r)
{
    snap_tab *t;
    int rc = begin(a, NULL, &t, r);
    if (rc)
        return rc;
    if (!expression || !*expression ||
        !json_utf8_valid((const uint8_t *)expression, strlen(expression)))
        return act_fail(r, SNAP_EINVAL, "eval needs an expression (UTF-8)");
    pcall pc;
    rc = call(a, t->session, "Runtime.evaluate",
              params("sbb", "expression", expression, "returnByValue", true, "awaitPromise",
                     true), &pc);
    if (rc) {
        rc = act_fail(r, SNAP_EBROWSER, "eval: %s", pc.e.msg);
        pfree(&pc);
        return rc;
    }
    const json_val *ex = json_get(pc.rep.result, "exceptionDetails");
    const json_val *v = json_get(json_get(pc.rep.result, "result"), "value");
    char *js = v ? json_write(v, NULL) : NULL;
    sbuf b = {0};
    sb_add(&b, "%s; value:\n<<<page-content nonce=%s>>>\n", ex ? "the expression threw"
                                                             : "evaluated", a->nonce);
    sb_page(&b, js ? js : "undefined", 4000, PG_KEEP_NL);
    sb_add(&b, "\n<<<end page-content nonce=%s>>>", a->nonce);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, !ex);
    json_w_key(&w, "value");
    if (v)
        json_w_val(&w, v);
    else
        json_w_null(&w);
    json_w_obj_end(&w);
    free(js);
    pfree(&pc);
    memset(r, 0, sizeof *r);
    r->code = ex ? SNAP_EINVAL : 0;
    r->text = b.s;
    r->structured = json_w_take(&w, NULL);
    snap_obs_issue(a, t, r->obs);
    return r->code;
}

int snap_eval(snap_agent *a, const char *expression, snap_result *r)
{
    snap_gated gg;
    memset(&gg, 0, sizeof gg);
    memset(r, 0, sizeof *r);
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    int rc = 0;
    if (t) {
        /* The human who confirms sees the script itself. */
        int tab_id = t->id;
        uint64_t nav0 = t->nav;
        snap_gate_in gi = {.tool = "eval", .tab = t->id, .state_change = true,
                           .script = expression ? expression : ""};
        rc = snap_gate_ask(a, &gi, &gg, r);
        if (rc == 0 && (rc = recheck_page(a, &gg, "eval", tab_id, nav0, NULL, r)))
            snap_gate_done(a, &gg, rc, r);
    }
    if (rc)
        return rc;
    rc = eval_run(a, expression, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

/* ---- upload ---- */

/* Is the element a file input (plain values back)? */
static const char FILE_INPUT_FN[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;if(!e)return{gone:1};"
    "if(e.tagName!=='INPUT'||(e.type||'').toLowerCase()!=='file')"
    "return{no:e.tagName.toLowerCase()};"
    "if(e.matches(':disabled'))return{disabled:1};return{ok:1};}";

int snap_upload(snap_agent *a, const char *ref, const char *path, const char *obs,
                snap_result *r)
{
    snap_tab *t;
    int rc = begin(a, obs, &t, r);
    if (rc)
        return rc;
    if (!path || !*path)
        return act_fail(r, SNAP_EINVAL, "upload needs the path of a file");
    char *real = realpath(path, NULL);
    struct stat st;
    if (!real || stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(real);
        return act_fail(r, SNAP_EINVAL, "upload: %.300s is not a readable regular file", path);
    }
    int64_t deadline = snap_now_ms() + a->o.timeout_ms;
    target tg;
    if ((rc = resolve(a, ref, &tg, r))) {
        free(real);
        return rc;
    }
    session_set ss = {0};
    sessions_note(&ss, tg.session);
    snap_gated gg = {0};
    pcall pc;
    rc = call(a, tg.session, "Runtime.callFunctionOn",
              fn_params(tg.oid, FILE_INPUT_FN, NULL, true, false), &pc);
    const json_val *v = fn_value(&pc);
    if (rc || !v || json_get(v, "gone"))
        rc = act_fail(r, SNAP_ESTALE, "%s is gone; take a new snapshot", tg.what);
    else if (json_get(v, "no"))
        rc = act_fail(r, SNAP_EINVAL, "%s is not a file input; upload needs an "
                      "<input type=file>", tg.what);
    else if (json_get(v, "disabled"))
        rc = act_fail(r, SNAP_EDISABLED, "%s is disabled", tg.what);
    pfree(&pc);
    if (rc)
        goto done;
    snap_gate_in gi = {.tool = "upload", .tab = tg.tab, .frame = tg.frame,
                       .session = tg.session, .oid = tg.oid, .ref_n = tg.n,
                       .state_change = true, .file = real, .egress = GATE_EGRESS_FILE,
                       .obs = obs};
    if ((rc = snap_gate_ask(a, &gi, &gg, r)) ||
        (rc = recheck_target(a, &gg, "upload", &tg, &ss, NULL, r)))
        goto done;
    snap_tab *t1 = snap_tab_by_id(a, tg.tab);
    uint64_t nav0 = t1 ? t1->nav : 0;
    size_t tabs0 = a->ntabs;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "files");
    json_w_arr_begin(&w);
    json_w_str(&w, real);
    json_w_arr_end(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, tg.oid);
    json_w_obj_end(&w);
    if ((rc = call(a, tg.session, "DOM.setFileInputFiles", json_w_take(&w, NULL), &pc))) {
        rc = act_fail(r, SNAP_EBROWSER, "%s: %s", tg.what, pc.e.msg);
        pfree(&pc);
        goto done;
    }
    pfree(&pc);
    const char *base = strrchr(real, '/');
    char did[900];
    snprintf(did, sizeof did, "attached %.200s to %s", base ? base + 1 : real, tg.what);
    snap_settled sd;
    if ((rc = settle(a, tg.tab, nav0, tabs0, deadline, did, &sd, r)))
        goto done;
    act_report rp;
    report_init(&rp, "upload", tg.ref);
    rc = finish(a, tg.tab, did, &sd, &rp, r);
    report_free(&rp);
done:
    snap_gate_done(a, &gg, rc, r);
    release_all(a, &tg, &ss);
    free(real);
    return rc;
}

/* ---- keys ---- */

enum { MOD_ALT = 1, MOD_CTRL = 2, MOD_META = 4, MOD_SHIFT = 8 };

typedef struct {
    char key[16];               /* KeyboardEvent.key */
    char code[24];              /* KeyboardEvent.code, "" when unknown */
    int vk;                     /* windowsVirtualKeyCode */
    char text[8];               /* what the key types, "" for none */
} keydef;

static const struct {
    const char *name, *key, *code;
    int vk;
    const char *text;
} NAMED_KEYS[] = {
    {"Enter", "Enter", "Enter", 13, "\r"}, {"Return", "Enter", "Enter", 13, "\r"},
    {"Tab", "Tab", "Tab", 9, ""}, {"Escape", "Escape", "Escape", 27, ""},
    {"Esc", "Escape", "Escape", 27, ""}, {"Backspace", "Backspace", "Backspace", 8, ""},
    {"Delete", "Delete", "Delete", 46, ""}, {"Del", "Delete", "Delete", 46, ""},
    {"Insert", "Insert", "Insert", 45, ""},
    {"ArrowUp", "ArrowUp", "ArrowUp", 38, ""}, {"Up", "ArrowUp", "ArrowUp", 38, ""},
    {"ArrowDown", "ArrowDown", "ArrowDown", 40, ""},
    {"Down", "ArrowDown", "ArrowDown", 40, ""},
    {"ArrowLeft", "ArrowLeft", "ArrowLeft", 37, ""},
    {"Left", "ArrowLeft", "ArrowLeft", 37, ""},
    {"ArrowRight", "ArrowRight", "ArrowRight", 39, ""},
    {"Right", "ArrowRight", "ArrowRight", 39, ""},
    {"Home", "Home", "Home", 36, ""}, {"End", "End", "End", 35, ""},
    {"PageUp", "PageUp", "PageUp", 33, ""}, {"PageDown", "PageDown", "PageDown", 34, ""},
    {"Space", " ", "Space", 32, " "}, {" ", " ", "Space", 32, " "},
    {"Shift", "Shift", "ShiftLeft", 16, ""}, {"Control", "Control", "ControlLeft", 17, ""},
    {"Alt", "Alt", "AltLeft", 18, ""}, {"Meta", "Meta", "MetaLeft", 91, ""},
};

/* US layout punctuation: unshifted, shifted, code, virtual key. */
static const struct {
    char plain, shifted;
    const char *code;
    int vk;
} PUNCT[] = {
    {'`', '~', "Backquote", 192}, {'-', '_', "Minus", 189}, {'=', '+', "Equal", 187},
    {'[', '{', "BracketLeft", 219}, {']', '}', "BracketRight", 221},
    {'\\', '|', "Backslash", 220}, {';', ':', "Semicolon", 186}, {'\'', '"', "Quote", 222},
    {',', '<', "Comma", 188}, {'.', '>', "Period", 190}, {'/', '?', "Slash", 191},
};
static const char SHIFTED_DIGITS[] = ")!@#$%^&*(";

static bool name_eq(const char *a, size_t alen, const char *b)
{
    if (strlen(b) != alen)
        return false;
    for (size_t i = 0; i < alen; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (char)(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

/* One key by name ("Enter", "a", "F5", "é"). A letter is typed as given
 * unless lower_letters (shortcuts: Control+A is key "a"); Shift makes it
 * upper case. False when unknown. */
static bool key_lookup(const char *s, size_t len, bool shift, bool lower_letters,
                       keydef *k)
{
    memset(k, 0, sizeof *k);
    if (len == 0 || len >= sizeof k->key)
        return false;
    for (size_t i = 0; i < sizeof NAMED_KEYS / sizeof NAMED_KEYS[0]; i++) {
        if (name_eq(s, len, NAMED_KEYS[i].name)) {
            snprintf(k->key, sizeof k->key, "%s", NAMED_KEYS[i].key);
            snprintf(k->code, sizeof k->code, "%s", NAMED_KEYS[i].code);
            snprintf(k->text, sizeof k->text, "%s", NAMED_KEYS[i].text);
            k->vk = NAMED_KEYS[i].vk;
            return true;
        }
    }
    if ((s[0] == 'F' || s[0] == 'f') && len >= 2 && len <= 3) {
        char *end;
        long n = strtol(s + 1, &end, 10);
        if (end == s + len && n >= 1 && n <= 24) {
            snprintf(k->key, sizeof k->key, "F%ld", n);
            snprintf(k->code, sizeof k->code, "F%ld", n);
            k->vk = 111 + (int)n;
            return true;
        }
    }
    if (len == 1) {
        char c = s[0];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            char up = c >= 'a' ? (char)(c - 'a' + 'A') : c;
            char out = shift ? up : c;
            if (lower_letters && !shift)
                out = (char)(up - 'A' + 'a');
            snprintf(k->key, sizeof k->key, "%c", out);
            snprintf(k->code, sizeof k->code, "Key%c", up);
            snprintf(k->text, sizeof k->text, "%c", out);
            k->vk = up;
            return true;
        }
        if (c >= '0' && c <= '9') {
            char out = shift ? SHIFTED_DIGITS[c - '0'] : c;
            snprintf(k->key, sizeof k->key, "%c", out);
            snprintf(k->code, sizeof k->code, "Digit%c", c);
            snprintf(k->text, sizeof k->text, "%c", out);
            k->vk = c;
            return true;
        }
        for (size_t i = 0; i < sizeof SHIFTED_DIGITS - 1; i++) {
            if (c == SHIFTED_DIGITS[i]) {
                snprintf(k->key, sizeof k->key, "%c", c);
                snprintf(k->code, sizeof k->code, "Digit%d", (int)i);
                snprintf(k->text, sizeof k->text, "%c", c);
                k->vk = '0' + (int)i;
                return true;
            }
        }
        for (size_t i = 0; i < sizeof PUNCT / sizeof PUNCT[0]; i++) {
            if (c == PUNCT[i].plain || c == PUNCT[i].shifted) {
                char out = shift ? PUNCT[i].shifted : c;
                snprintf(k->key, sizeof k->key, "%c", out);
                snprintf(k->code, sizeof k->code, "%s", PUNCT[i].code);
                snprintf(k->text, sizeof k->text, "%c", out);
                k->vk = PUNCT[i].vk;
                return true;
            }
        }
    }
    /* Any other single character (UTF-8): typed as text, no key code. */
    unsigned char c0 = (unsigned char)s[0];
    size_t want = c0 >= 0xf0 ? 4 : c0 >= 0xe0 ? 3 : c0 >= 0xc0 ? 2 : 1;
    if (len == want && c0 >= 0x80 && json_utf8_valid((const uint8_t *)s, len)) {
        memcpy(k->key, s, len);
        memcpy(k->text, s, len);
        return true;
    }
    return false;
}

/* Parse "Control+Shift+A" into modifiers and a key. "+" alone, or as the
 * last part ("Control++"), is the plus key. */
static bool key_parse(const char *spec, int *mods, keydef *k)
{
    *mods = 0;
    size_t n = strlen(spec);
    if (n == 0 || n > 64)
        return false;
    const char *p = spec;
    for (;;) {
        const char *plus = strchr(p, '+');
        if (!plus || plus == p || (size_t)(plus - spec) == n - 1)
            break;
        size_t len = (size_t)(plus - p);
        if (name_eq(p, len, "Control") || name_eq(p, len, "Ctrl"))
            *mods |= MOD_CTRL;
        else if (name_eq(p, len, "Shift"))
            *mods |= MOD_SHIFT;
        else if (name_eq(p, len, "Alt") || name_eq(p, len, "Option"))
            *mods |= MOD_ALT;
        else if (name_eq(p, len, "Meta") || name_eq(p, len, "Cmd") ||
                 name_eq(p, len, "Command") || name_eq(p, len, "Super"))
            *mods |= MOD_META;
        else
            return false;
        p = plus + 1;
    }
    if (!key_lookup(p, strlen(p), (*mods & MOD_SHIFT) != 0,
                    (*mods & (MOD_CTRL | MOD_ALT | MOD_META)) != 0, k))
        return false;
    if (*mods & (MOD_CTRL | MOD_ALT | MOD_META))
        k->text[0] = 0;         /* shortcuts type nothing */
    return true;
}

static char *key_params(const char *type, const keydef *k, int mods)
{
    bool text = k->text[0] && strcmp(type, "keyUp") != 0;
    return params("sssiiss", "type", type, "key", k->key, "code", k->code[0] ? k->code : NULL,
                  "windowsVirtualKeyCode", k->vk, "modifiers", mods,
                  "text", text ? k->text : NULL, "unmodifiedText", text ? k->text : NULL);
}

/* Press modifiers, the key, release in reverse: input commands into
 * methods/prms (at most 10). Returns the count. */
static size_t key_events(const keydef *k, int mods, const char **methods, char **prms)
{
    static const struct { int bit; const char *name; } MODS[] = {
        {MOD_CTRL, "Control"}, {MOD_SHIFT, "Shift"}, {MOD_ALT, "Alt"}, {MOD_META, "Meta"},
    };
    size_t n = 0;
    int held = 0;
    keydef mk[4];
    int order[4], nm = 0;
    for (int i = 0; i < 4; i++) {
        if (!(mods & MODS[i].bit))
            continue;
        key_lookup(MODS[i].name, strlen(MODS[i].name), false, false, &mk[nm]);
        held |= MODS[i].bit;
        order[nm] = MODS[i].bit;
        methods[n] = "Input.dispatchKeyEvent";
        prms[n++] = key_params("rawKeyDown", &mk[nm], held);
        nm++;
    }
    methods[n] = "Input.dispatchKeyEvent";
    prms[n++] = key_params(k->text[0] ? "keyDown" : "rawKeyDown", k, held);
    methods[n] = "Input.dispatchKeyEvent";
    prms[n++] = key_params("keyUp", k, held);
    for (int i = nm - 1; i >= 0; i--) {
        held &= ~order[i];
        methods[n] = "Input.dispatchKeyEvent";
        prms[n++] = key_params("keyUp", &mk[i], held);
    }
    return n;
}

/* ---- type ---- */

/* Check the element takes text, focus it and select what it holds (so the
 * inserted text replaces it). Plain values back. */
static const char PREP_TYPE_FN[] =
    "function(){" SF_SRC FW_SRC
    "var e=this.nodeType===1?this:this.parentElement;if(!e)return{gone:1};"
    "if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "var r={tag:e.tagName.toLowerCase()},t=(e.type||'').toLowerCase();"
    "if(e.tagName==='SELECT')return{select:1};"
    "var txt=e.tagName==='TEXTAREA'||(e.tagName==='INPUT'&&!/^(checkbox|radio|button|submit|"
    "reset|file|image|range|color|hidden)$/.test(t));"
    "if(!txt&&!e.isContentEditable)return{no:r.tag+(t&&e.tagName==='INPUT'?' type='+t:'')+"
    "(e.getAttribute('role')?' role='+e.getAttribute('role'):'')};"
    "if(e.matches(':disabled'))return{disabled:e.hasAttribute('disabled')?'disabled':"
    "'inside a disabled fieldset'};"
    "if(txt&&e.readOnly)return{disabled:'read-only'};"
    "if(e.closest('[aria-disabled=true]'))return{disabled:'aria-disabled'};"
    "if(e.closest('[inert]'))return{disabled:'inert (blocked by a modal)'};"
    "r.secret=t==='password'||/one-time-code|current-password|new-password/.test("
    "(e.getAttribute('autocomplete')||'').toLowerCase());var sf=sfOf(e);if(sf)r.sf=sf;"
    "e.focus();"
    "if(!txt){var s=getSelection(),g=document.createRange();g.selectNodeContents(e);"
    "s.removeAllRanges();s.addRange(g);r.ce=1;r.had=e.textContent.length>0;}"
    "else{try{e.select();}catch(x){}r.had=e.value.length>0;}"
    "var to=fw(e);r.focused=!to;if(to)r.to=to;return r;}";

/* The value now in the field (text of a contenteditable). */
static const char VALUE_FN[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;if(!e||!e.isConnected)return null;"
    "return(e.tagName==='INPUT'||e.tagName==='TEXTAREA')?e.value:e.innerText;}";

int snap_select(snap_agent *a, const char *ref, const char *const *values, size_t n,
                const char *obs, snap_result *r);

static const keydef KEY_ENTER = {"Enter", "Enter", 13, "\r"};
static const keydef KEY_DELETE = {"Delete", "Delete", 46, ""};

int snap_type(snap_agent *a, const char *ref, const char *text, bool submit,
              const char *obs, snap_result *r)
{
    snap_tab *t0;
    int rc = begin(a, obs, &t0, r);
    if (rc)
        return rc;
    if (!text)
        text = "";
    if (!json_utf8_valid((const uint8_t *)text, strlen(text)))
        return act_fail(r, SNAP_EINVAL, "the text to type is not valid UTF-8");
    int64_t deadline = snap_now_ms() + a->o.timeout_ms;
    target tg;
    if ((rc = resolve(a, ref, &tg, r)))
        return rc;
    const char *fs = tg.session, *what = tg.what;
    session_set ss = {0};
    sessions_note(&ss, fs);
    snap_gated gg = {0};
    snap_gate_in gi = {.tool = "type", .tab = tg.tab, .frame = tg.frame,
                       .session = tg.session, .oid = tg.oid, .ref_n = tg.n,
                       .state_change = true, .submit = submit, .text = text, .obs = obs};
    if ((rc = snap_gate_ask(a, &gi, &gg, r))) {
        release_all(a, &tg, &ss);
        return rc;
    }
    if ((rc = recheck_target(a, &gg, "type", &tg, &ss, NULL, r))) {
        snap_gate_done(a, &gg, rc, r);
        release_all(a, &tg, &ss);
        return rc;
    }
    pcall sc, ob, pr;
    psend_p(a, fs, "DOM.scrollIntoViewIfNeeded", params("s", "objectId", tg.oid), &sc);
    psend_p(a, fs, "Runtime.callFunctionOn",
            fn_params(tg.oid, OBSERVE_FN, NULL, false, false), &ob);
    psend_p(a, fs, "Runtime.callFunctionOn",
            fn_params(tg.oid, PREP_TYPE_FN, NULL, true, false), &pr);
    pwait(a, &sc);
    pwait(a, &ob);
    int rpr = pwait(a, &pr);
    char obs_oid[SNAP_ID_MAX] = "";
    if (fn_object(&ob) && strlen(fn_object(&ob)) < SNAP_ID_MAX)
        snprintf(obs_oid, sizeof obs_oid, "%s", fn_object(&ob));
    const json_val *v = fn_value(&pr);
    bool secret = json_bool(json_get(v, "secret"));
    bool had = json_bool(json_get(v, "had"));
    bool select = json_get(v, "select") != NULL;
    secret_form sf = {0};
    secret_form_note(&sf, v);
    char why[256] = "";
    int fail = 0;
    if (rpr && rpr != CDP_EPROTOCOL) {
        fail = act_fail(r, SNAP_EBROWSER, "%s: %s", what, pr.e.msg);
    } else if (!v || json_get(v, "gone")) {
        fail = act_fail(r, SNAP_ESTALE, "%s was removed from the page; take a new snapshot",
                        what);
    } else if (json_get_str(v, "no")) {
        pg(why, sizeof why, json_get_str(v, "no"));
        fail = act_fail(r, SNAP_EINVAL, "%s does not take text (it is a %s); type into a "
                        "textbox, a textarea or an editable element", what, why);
    } else if (json_get_str(v, "disabled")) {
        pg(why, sizeof why, json_get_str(v, "disabled"));
        fail = act_fail(r, SNAP_EDISABLED, "%s is %s; it cannot be typed into", what, why);
    } else if (!select && !json_bool(json_get(v, "focused"))) {
        /* The text goes where the focus is: it must be the field named (or
         * inside it, for a contenteditable), confirmed or not (a focus
         * handler may have moved it). */
        fail = focus_lost(&gg, "type", what, json_get_str(v, "to"), r);
    }
    pfree(&sc);
    pfree(&ob);
    pfree(&pr);
    if (select && !fail) {
        /* Typing into a <select> picks the option with that label. */
        snap_gate_done(a, &gg, 0, NULL);
        release_all(a, &tg, &ss);
        const char *vals[1] = {text};
        return snap_select(a, ref, vals, 1, obs, r);
    }
    if (fail) {
        snap_gate_done(a, &gg, fail, r);
        release_all(a, &tg, &ss);
        return fail;
    }
    secret_form_known(a, tg.tab, tg.frame, fs, tg.oid, &sf);
    secret_form_arm(a, &sf);
    int tab_id = tg.tab;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    uint64_t nav0 = t ? t->nav : 0;
    uint64_t inflight0 = t && t->inflight > 0 ? (uint64_t)t->inflight : 0;
    size_t tabs0 = a->ntabs;
    bool dialog = false;
    const char *methods[12];
    char *prms[12];
    size_t n = 0;
    if (*text) {
        methods[n] = "Input.insertText";
        prms[n++] = params("s", "text", text);
    } else if (had) {
        n = key_events(&KEY_DELETE, 0, methods, prms);
    }
    /* Again just before the keys leave: a handler that moves the focus
     * from a timer (not while the field took it) has run by now. */
    char to[96];
    if (n && focus_where(a, fs, tg.oid, to, sizeof to)) {
        for (size_t i = 0; i < n; i++)
            free(prms[i]);
        rc = focus_lost(&gg, "type", what, to, r);
        goto done;
    }
    if (n && (rc = dispatch_input(a, tab_id, tg.session, methods, prms, n, &dialog, r)))
        goto done;
    /* Read back what the field holds (pages reformat and truncate). */
    char *value = NULL;
    if (!dialog) {
        pcall vv;
        if (call(a, fs, "Runtime.callFunctionOn",
                 fn_params(tg.oid, VALUE_FN, NULL, true, false), &vv) == 0) {
            const char *s = json_str(fn_value(&vv), NULL);
            if (s) {
                size_t len = strlen(s);
                value = malloc(len + 1);
                if (value)
                    memcpy(value, s, len + 1);
            }
        }
        pfree(&vv);
    }
    char did[800];
    if (secret)
        snprintf(did, sizeof did, "typed %zu characters into %s (a secret field: not shown)",
                 strlen(text), what);
    else
        snprintf(did, sizeof did, "%s %s", *text ? "typed into" : "cleared", what);
    if (submit && !dialog) {
        /* Enter goes where the focus is now: a page that moved it on input
         * (to another form, a frame) does not get the key. */
        if (focus_where(a, fs, tg.oid, to, sizeof to)) {
            free(value);
            rc = act_fail(r, SNAP_ESTALE, "%s, but Enter was not pressed: the page then "
                          "moved the focus away from the field (to %s), so the key would have "
                          "gone there. Take a new snapshot, then press Enter on the control "
                          "you mean.", did, pg(why, sizeof why, to));
            goto done;
        }
        n = key_events(&KEY_ENTER, 0, methods, prms);
        rc = dispatch_input(a, tab_id, tg.session, methods, prms, n, &dialog, r);
        if (rc) {
            free(value);
            goto done;
        }
        snprintf(did + strlen(did), sizeof did - strlen(did), " and pressed Enter");
    }
    snap_settled st;
    rc = submit ? settle(a, tab_id, nav0, tabs0, deadline, did, &st, r)
                : settle_light(a, tab_id, nav0, tabs0, inflight0, deadline, did, &st, r);
    if (rc) {
        free(value);
        goto done;
    }
    act_report rp;
    report_init(&rp, "type", tg.ref);
    rp.sf = sf;
    if (value && !secret) {
        bool same = strcmp(value, text) == 0;
        if (!same)
            snprintf(did + strlen(did), sizeof did - strlen(did),
                     " (the field holds something else than what was typed)");
        sb_add(&rp.page, "value now: ");
        sb_page(&rp.page, value, 300, PG_KEEP_NL);
        json_w_key(&rp.extra, "value");
        json_w_str(&rp.extra, value);
        json_w_key(&rp.extra, "value_matches");
        json_w_bool(&rp.extra, same);
        rp.has_extra = true;
    } else if (value) {
        json_w_key(&rp.extra, "secret");
        json_w_bool(&rp.extra, true);
        json_w_key(&rp.extra, "length");
        json_w_int(&rp.extra, (int64_t)strlen(value));
        rp.has_extra = true;
    }
    free(value);
    if (page_usable(a, tab_id, &st) && *obs_oid) {
        pcall co;
        if (call(a, fs, "Runtime.callFunctionOn",
                 fn_params(obs_oid, COLLECT_FN, NULL, true, false), &co) == 0) {
            const char *added = json_str(fn_value(&co), NULL);
            /* The typed text itself shows up as new text in contenteditables. */
            if (added && *added && !secret && strcmp(added, text) != 0) {
                sb_add(&rp.page, "%snew text: ", rp.page.len ? "\n" : "");
                sb_page(&rp.page, added, 300, 0);
                json_w_key(&rp.extra, "new_text");
                json_w_str(&rp.extra, added);
                rp.has_extra = true;
            }
        }
        pfree(&co);
    }
    rc = finish(a, tab_id, did, &st, &rp, r);
    report_free(&rp);
done:
    snap_gate_done(a, &gg, rc, r);
    release_all(a, &tg, &ss);
    return rc;
}

/* ---- select ---- */

/* A native <select>: pick options by value, then label (exact, then
 * case-insensitive), set them as a user's pick would (input + change), or
 * say what is available. Other elements: their role. */
static const char SELECT_FN[] =
    "function(vals){var e=this.nodeType===1?this:this.parentElement;if(!e)return{gone:1};"
    "if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "if(e.tagName!=='SELECT')return{role:e.getAttribute('role')||'',"
    "popup:e.getAttribute('aria-haspopup')||'',tag:e.tagName.toLowerCase()};"
    "if(e.matches(':disabled'))return{disabled:e.hasAttribute('disabled')?'disabled':"
    "'inside a disabled fieldset'};"
    "var o=[].slice.call(e.options),pick=[],miss=[];"
    "var N=function(s){return String(s).replace(/\\s+/g,' ').trim();};"
    "vals.forEach(function(v){var w=N(v).toLowerCase();"
    "var x=o.filter(function(p){return p.value===v;})[0]||"
    "o.filter(function(p){return N(p.label)===N(v);})[0]||"
    "o.filter(function(p){return N(p.label).toLowerCase()===w;})[0];"
    "if(!x)miss.push(v);else if(x.disabled||(x.parentElement&&x.parentElement.disabled))"
    "miss.push(v+' (disabled)');else pick.push(x);});"
    "if(miss.length)return{miss:miss,total:o.length,avail:o.slice(0,40).map(function(p){"
    "return N(p.label)+(p.value!==N(p.label)?' (value '+p.value+')':'');})};"
    "if(!e.multiple&&pick.length>1)return{single:1};e.focus();"
    "if(e.multiple)o.forEach(function(p){p.selected=pick.indexOf(p)>=0;});"
    "else pick[0].selected=true;"
    "e.dispatchEvent(new Event('input',{bubbles:true}));"
    "e.dispatchEvent(new Event('change',{bubbles:true}));"
    "return{ok:1,sel:pick.map(function(p){return N(p.label);})};}";

/* ARIA: find the option named v in the listbox this element is, controls
 * or owns (or the visible listbox after a combobox opened), waiting up to a
 * second for it to appear (mutation-driven). Returns the option element, or
 * a JSON string {avail, total, nolist}. */
static const char FIND_OPTION_FN[] =
    "function(v){var cb=this,d=cb.ownerDocument;"
    "var N=function(s){return String(s||'').replace(/\\s+/g,' ').trim();},w=N(v).toLowerCase();"
    "var lb=function(){if(cb.getAttribute('role')==='listbox')return cb;"
    "var id=cb.getAttribute('aria-controls')||cb.getAttribute('aria-owns'),"
    "l=id&&d.getElementById(id.split(' ')[0]);"
    "if(l&&l.getAttribute('role')!=='listbox'){var q=l.querySelector('[role=listbox]');"
    "if(q)l=q;}if(!l)l=cb.querySelector('[role=listbox]');"
    "if(!l)l=[].slice.call(d.querySelectorAll('[role=listbox]')).filter(function(x){"
    "return x.getClientRects().length;})[0];return l||null;};"
    "var nm=function(o){return N(o.getAttribute('aria-label')||o.textContent);};"
    "var find=function(){var l=lb();if(!l)return null;"
    "var os=[].slice.call(l.querySelectorAll('[role=option]'));"
    "var m=os.filter(function(o){return nm(o)===N(v);})[0]||"
    "os.filter(function(o){return nm(o).toLowerCase()===w;})[0]||"
    "os.filter(function(o){return(o.getAttribute('data-value')||o.getAttribute('value'))"
    "===v;})[0];return m||{avail:os.slice(0,40).map(nm),total:os.length};};"
    "return new Promise(function(res){var r=find();if(r&&r.nodeType)return res(r);"
    "var tm,mo=new MutationObserver(function(){var x=find();if(x&&x.nodeType){"
    "mo.disconnect();clearTimeout(tm);res(x);}});"
    "mo.observe(d,{subtree:true,childList:true,attributes:true});"
    "tm=setTimeout(function(){mo.disconnect();var x=find();"
    "res(x&&x.nodeType?x:JSON.stringify(x||{nolist:1}));},1000);});}";

/* Whether an ARIA option is selected already. */
static const char ARIA_SELECTED_FN[] =
    "function(){return this.getAttribute('aria-selected')==='true'}";

/* What the listbox or combobox shows as chosen now. */
static const char CHOSEN_FN[] =
    "function(){var e=this,N=function(s){return String(s||'').replace(/\\s+/g,' ').trim();};"
    "if(e.getAttribute('role')==='listbox')return[].slice.call(e.querySelectorAll("
    "'[role=option][aria-selected=true]')).map(function(o){return N(o.textContent);});"
    "return[N(e.tagName==='INPUT'?e.value:e.textContent)];}";

/* The labels of the chosen options of a native <select>. */
static const char VALUE_SELECT_FN[] =
    "function(){var e=this;if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "return[].slice.call(e.selectedOptions||[]).map(function(o){"
    "return o.label.replace(/\\s+/g,' ').trim();});}";

/* Available options, from a {miss, avail, total} object, for an error. */
static void options_list(const json_val *v, sbuf *b)
{
    size_t i = 0;
    for (const json_val *o = json_first(json_get(v, "avail")); o; o = json_next(o), i++) {
        sb_add(b, "%s", i ? ", " : "");
        sb_quoted(b, json_str(o, NULL) ? json_str(o, NULL) : "", 100);
    }
    int64_t total = json_get_int(v, "total", 0);
    if (total > (int64_t)i)
        sb_add(b, " and %lld more", (long long)(total - (int64_t)i));
    if (!i)
        sb_add(b, "none");
}

/* [{"value":[v1, v2, ...]}] */
static char *arg_strs(const char *const *values, size_t n)
{
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "value");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < n; i++)
        json_w_str(&w, values[i]);
    json_w_arr_end(&w);
    json_w_obj_end(&w);
    json_w_arr_end(&w);
    return json_w_take(&w, NULL);
}

/* Click an element given by object id in tg's frame (an ARIA option, the
 * combobox): locate (checks) and a real mouse click. */
static int click_object(snap_agent *a, const target *tg, const char *oid, const char *what,
                        session_set *ss, bool *dialog, snap_result *r)
{
    pcall dn;
    int be = 0;
    if (call(a, tg->session, "DOM.describeNode", params("s", "objectId", oid), &dn) == 0)
        be = (int)json_get_int(json_get(dn.rep.result, "node"), "backendNodeId", 0);
    pfree(&dn);
    if (!be)
        return act_fail(r, SNAP_ESTALE, "%s is gone from the page", what);
    located loc;
    int rc = locate(a, tg->tab, tg->frame, oid, be, what, true, ss, &loc, r);
    if (rc)
        return rc;
    return mouse_click(a, tg->tab, loc.x, loc.y, dialog, r);
}

/* The ARIA path of select: open a combobox with a click, then click each
 * option by name. */
static int select_aria(snap_agent *a, const target *tg, const char *role,
                       const char *const *values, size_t n, const char *what,
                       session_set *ss, bool *dialog, sbuf *chosen, snap_result *r)
{
    bool combo = strcmp(role, "listbox") != 0;
    if (combo && n > 1)
        return act_fail(r, SNAP_EINVAL, "%s is a combobox: choose one option at a time",
                        what);
    for (size_t i = 0; i < n; i++) {
        if (combo) {
            int rc = click_object(a, tg, tg->oid, what, ss, dialog, r);
            if (rc || *dialog)
                return rc;
        }
        char *arg = arg_str(values[i]);
        pcall fo;
        int rc = call(a, tg->session, "Runtime.callFunctionOn",
                      arg ? fn_params(tg->oid, FIND_OPTION_FN, arg, false, true) : NULL,
                      &fo);
        free(arg);
        if (rc) {
            act_fail(r, SNAP_EBROWSER, "%s: %s", what, fo.e.msg);
            pfree(&fo);
            return SNAP_EBROWSER;
        }
        const char *oid = fn_object(&fo);
        const json_val *res_v = json_get(fo.rep.result, "result");
        if (!oid || !json_get_str(res_v, "subtype") ||
            strcmp(json_get_str(res_v, "subtype"), "node") != 0) {
            const char *js = json_get_str(res_v, "value");
            json_doc *d = js ? json_parse(js, strlen(js), NULL, NULL) : NULL;
            const json_val *dv = json_doc_root(d);
            if (json_get(dv, "nolist")) {
                act_fail(r, SNAP_EINVAL, "%s: no listbox with options appeared%s; take a "
                         "snapshot to see what opened", what, combo ? " after opening it" : "");
            } else {
                sbuf b = {0}, v = {0};
                options_list(dv, &b);
                sb_quoted(&v, values[i], 100);
                act_fail(r, SNAP_EINVAL, "%s has no option %s; its options: %s", what,
                         v.s ? v.s : "", b.s ? b.s : "none");
                free(b.s);
                free(v.s);
            }
            json_doc_free(d);
            pfree(&fo);
            return SNAP_EINVAL;
        }
        char ooid[SNAP_ID_MAX];
        snprintf(ooid, sizeof ooid, "%s", oid);
        pfree(&fo);
        /* In a multi-select listbox a click toggles: leave chosen ones be. */
        pcall sel;
        memset(&sel, 0, sizeof sel);
        bool already = false;
        if (!combo && call(a, tg->session, "Runtime.callFunctionOn",
                           fn_params(ooid, ARIA_SELECTED_FN, NULL, true, false),
                           &sel) == 0)
            already = json_bool(fn_value(&sel));
        pfree(&sel);
        char owhat[600];
        {
            sbuf ob = {0};
            sb_add(&ob, "option ");
            sb_quoted(&ob, values[i], 60);
            sb_add(&ob, " of %s", what);
            snprintf(owhat, sizeof owhat, "%s", ob.s && !ob.oom ? ob.s : "an option");
            utf8_repair(owhat);
            free(ob.s);
        }
        if (!already && (rc = click_object(a, tg, ooid, owhat, ss, dialog, r)))
            return rc;
        sb_add(chosen, "%s", i ? ", " : "");
        sb_quoted(chosen, values[i], 100);
        if (*dialog)
            return 0;
    }
    return 0;
}

int snap_select(snap_agent *a, const char *ref, const char *const *values, size_t n,
                const char *obs, snap_result *r)
{
    snap_tab *t0;
    int rc = begin(a, obs, &t0, r);
    if (rc)
        return rc;
    if (!values || n == 0)
        return act_fail(r, SNAP_EINVAL, "select needs at least one option label or value");
    for (size_t i = 0; i < n; i++)
        if (!values[i] || !json_utf8_valid((const uint8_t *)values[i], strlen(values[i])))
            return act_fail(r, SNAP_EINVAL, "option %zu is missing or not valid UTF-8", i + 1);
    int64_t deadline = snap_now_ms() + a->o.timeout_ms;
    target tg;
    if ((rc = resolve(a, ref, &tg, r)))
        return rc;
    session_set ss = {0};
    const char *fs = tg.session, *what = tg.what;
    sessions_note(&ss, fs);
    snap_gated gg = {0};
    snap_gate_in gi = {.tool = "select", .tab = tg.tab, .frame = tg.frame,
                       .session = tg.session, .oid = tg.oid, .ref_n = tg.n,
                       .state_change = true, .options = values, .noptions = n, .obs = obs};
    if ((rc = snap_gate_ask(a, &gi, &gg, r))) {
        release_all(a, &tg, &ss);
        return rc;
    }
    if ((rc = recheck_target(a, &gg, "select", &tg, &ss, NULL, r))) {
        snap_gate_done(a, &gg, rc, r);
        release_all(a, &tg, &ss);
        return rc;
    }
    int tab_id = tg.tab;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    uint64_t nav0 = t ? t->nav : 0;
    size_t tabs0 = a->ntabs;
    bool dialog = false;
    sbuf chosen = {0};
    char *args = arg_strs(values, n);
    pcall sc, sv;
    psend_p(a, fs, "DOM.scrollIntoViewIfNeeded", params("s", "objectId", tg.oid), &sc);
    psend_p(a, fs, "Runtime.callFunctionOn",
            args ? fn_params(tg.oid, SELECT_FN, args, true, false) : NULL, &sv);
    free(args);
    pwait(a, &sc);
    pfree(&sc);
    int rsv = pwait(a, &sv);
    const json_val *v = fn_value(&sv);
    bool native = json_get(v, "ok") != NULL;
    if (rsv && rsv != CDP_EPROTOCOL) {
        rc = act_fail(r, SNAP_EBROWSER, "%s: %s", what, sv.e.msg);
    } else if (!v || json_get(v, "gone")) {
        rc = act_fail(r, SNAP_ESTALE, "%s was removed from the page; take a new snapshot",
                      what);
    } else if (json_get_str(v, "disabled")) {
        char pb[256];
        rc = act_fail(r, SNAP_EDISABLED, "%s is %s; no option can be chosen", what,
                      pg(pb, sizeof pb, json_get_str(v, "disabled")));
    } else if (json_get(v, "miss")) {
        sbuf b = {0}, m = {0};
        options_list(v, &b);
        size_t i = 0;
        for (const json_val *o = json_first(json_get(v, "miss")); o; o = json_next(o), i++) {
            sb_add(&m, "%s", i ? ", " : "");
            sb_quoted(&m, json_str(o, NULL), 100);
        }
        rc = act_fail(r, SNAP_EINVAL, "%s has no option %s; its options: %s", what,
                      m.s ? m.s : "", b.s ? b.s : "none");
        free(b.s);
        free(m.s);
    } else if (json_get(v, "single")) {
        rc = act_fail(r, SNAP_EINVAL, "%s takes one option, not %zu", what, n);
    } else if (json_get(v, "ok")) {
        size_t i = 0;
        for (const json_val *o = json_first(json_get(v, "sel")); o; o = json_next(o), i++) {
            sb_add(&chosen, "%s", i ? ", " : "");
            sb_quoted(&chosen, json_str(o, NULL), 100);
        }
    } else {
        const char *role = json_get_str(v, "role");
        const char *popup = json_get_str(v, "popup");
        if (role && (strcmp(role, "listbox") == 0 || strcmp(role, "combobox") == 0))
            rc = select_aria(a, &tg, role, values, n, what, &ss, &dialog, &chosen, r);
        else if (popup && strcmp(popup, "listbox") == 0)
            rc = select_aria(a, &tg, "combobox", values, n, what, &ss, &dialog, &chosen, r);
        else {
            char pt[256], pr[256];
            rc = act_fail(r, SNAP_EINVAL, "%s is a <%s>%s%s, not a select, listbox or "
                          "combobox; click it instead", what,
                          pg(pt, sizeof pt, json_get_str(v, "tag") ? json_get_str(v, "tag")
                                                                   : "?"),
                          role && *role ? " with role " : "", pg(pr, sizeof pr, role));
        }
    }
    pfree(&sv);
    if (rc) {
        free(chosen.s);
        goto done;
    }
    char did[2000];
    snprintf(did, sizeof did, "chose %s in %s", chosen.s ? chosen.s : "", what);
    utf8_repair(did);
    free(chosen.s);
    snap_settled st;
    if ((rc = settle(a, tab_id, nav0, tabs0, deadline, did, &st, r)))
        goto done;
    act_report rp;
    report_init(&rp, "select", tg.ref);
    if (page_usable(a, tab_id, &st)) {
        pcall ch;
        if (call(a, fs, "Runtime.callFunctionOn",
                 fn_params(tg.oid, native ? VALUE_SELECT_FN : CHOSEN_FN,
                           NULL, true, false), &ch) == 0) {
            const json_val *cv = fn_value(&ch);
            size_t i = 0;
            json_w_key(&rp.extra, "selected");
            json_w_arr_begin(&rp.extra);
            for (const json_val *o = json_first(cv); o; o = json_next(o), i++) {
                sb_add(&rp.page, "%s", i ? ", " : "selected now: ");
                sb_page(&rp.page, json_str(o, NULL), 100, 0);
                json_w_str(&rp.extra, json_str(o, NULL));
            }
            json_w_arr_end(&rp.extra);
            rp.has_extra = true;
        }
        pfree(&ch);
    }
    rc = finish(a, tab_id, did, &st, &rp, r);
    report_free(&rp);
done:
    snap_gate_done(a, &gg, rc, r);
    release_all(a, &tg, &ss);
    return rc;
}

/* ---- press ---- */

/* The focused element of the page (through open shadow roots), or null
 * for the body. */
static const char SF_EXPR[] =
    "(function(){" SF_SRC "var e=document.activeElement;while(e&&e.shadowRoot&&"
    "e.shadowRoot.activeElement)e=e.shadowRoot.activeElement;var s=sfOf(e);"
    "return s?{sf:s}:{};})()";

static const char FOCUS_EXPR[] =
    "(function(){var e=document.activeElement;while(e&&e.shadowRoot&&"
    "e.shadowRoot.activeElement)e=e.shadowRoot.activeElement;"
    "return e===document.body||e===document.documentElement?null:e;})()";

/* Say which element has the focus now, with a ref (main frame only; focus
 * inside an iframe is reported as such). */
static void report_focus(snap_agent *a, int tab_id, act_report *rp)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || !t->nframes)
        return;
    char session[SNAP_ID_MAX], fid[SNAP_ID_MAX], loader[SNAP_ID_MAX];
    snprintf(session, sizeof session, "%s", t->session);
    snprintf(fid, sizeof fid, "%s", t->frames[0].id);
    snprintf(loader, sizeof loader, "%s", t->frames[0].loader);
    pcall ev;
    if (call(a, session, "Runtime.evaluate",
             params("ss", "expression", FOCUS_EXPR, "objectGroup", ACT_GROUP), &ev) == 0) {
        const char *oid = fn_object(&ev);
        if (oid) {
            pcall d, x;
            psend_p(a, session, "DOM.describeNode", params("s", "objectId", oid), &d);
            psend_p(a, session, "Accessibility.getPartialAXTree",
                    params("sb", "objectId", oid, "fetchRelatives", false), &x);
            pwait(a, &d);
            pwait(a, &x);
            int be = (int)json_get_int(json_get(d.rep.result, "node"), "backendNodeId", 0);
            const char *tag = json_get_str(json_get(d.rep.result, "node"), "localName");
            char role[32], name[200];
            ax_role_name(x.rep.result, d.rep.result, role, sizeof role, name, sizeof name);
            if (tag && (strcmp(tag, "iframe") == 0 || strcmp(tag, "frame") == 0)) {
                sb_add(&rp->page, "%sfocus: inside a frame", rp->page.len ? "\n" : "");
            } else if (be) {
                uint32_t n = snap_ref_for(a, tab_id, fid, loader, be, role, name);
                if (n) {
                    sb_add(&rp->page, "%sfocus: ", rp->page.len ? "\n" : "");
                    sb_page(&rp->page, role, 32, 0);
                    sb_putn(&rp->page, " ", 1);
                    sb_quoted(&rp->page, name, 80);
                    sb_add(&rp->page, " [e%u]", n);
                    char refs[16];
                    snprintf(refs, sizeof refs, "e%u", n);
                    json_w_key(&rp->extra, "focus");
                    json_w_str(&rp->extra, refs);
                    rp->has_extra = true;
                }
            }
            pfree(&d);
            pfree(&x);
        }
    }
    pfree(&ev);
}

static int press_focus_same(snap_agent *a, const char *session, const char *oid);

/* focus: the element the gate judged the key against ("" for none). */
static int press_run(snap_agent *a, const char *key, const char *obs, snap_gated *g,
                     const char *focus, snap_result *r)
{
    snap_tab *t;
    int rc = begin(a, obs, &t, r);
    if (rc)
        return rc;
    int mods;
    keydef k;
    if (!key || !key_parse(key, &mods, &k))
        return act_fail(r, SNAP_EINVAL, "'%.40s' is not a key: use names like Enter, Tab, "
                        "Escape, Backspace, ArrowDown, PageDown, Home, F5, a single "
                        "character, or combinations like Control+A, Shift+Tab",
                        key ? key : "");
    int64_t deadline = snap_now_ms() + a->o.timeout_ms;
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    size_t tabs0 = a->ntabs;
    char session[SNAP_ID_MAX];
    snprintf(session, sizeof session, "%s", t->session);
    session_set ss = {0};
    sessions_note(&ss, session);
    /* Is the focused element in a form with a password field (Enter may
     * submit it)? In the same round trip as the recorder. */
    pcall ob, sfc;
    psend_p(a, session, "Runtime.evaluate", params("ss", "expression", OBSERVE_DOC_EXPR,
                                                   "objectGroup", ACT_GROUP), &ob);
    psend_p(a, session, "Runtime.evaluate", params("sb", "expression", SF_EXPR,
                                                   "returnByValue", true), &sfc);
    pwait(a, &ob);
    pwait(a, &sfc);
    secret_form sf = {0};
    secret_form_note(&sf, fn_value(&sfc));
    pfree(&sfc);
    secret_form_known(a, tab_id, NULL, session, focus, &sf);
    secret_form_arm(a, &sf);
    char obs_oid[SNAP_ID_MAX] = "";
    if (fn_object(&ob) && strlen(fn_object(&ob)) < SNAP_ID_MAX)
        snprintf(obs_oid, sizeof obs_oid, "%s", fn_object(&ob));
    pfree(&ob);
    const char *methods[12];
    char *prms[12];
    /* The key goes to the element the gate judged, confirmed or not: a
     * page that moved the focus meanwhile does not get it. */
    if (!press_focus_same(a, session, focus))
        return focus_lost(g, "press", NULL, "another element", r);
    size_t n = key_events(&k, mods, methods, prms);
    bool dialog = false;
    if ((rc = dispatch_input(a, tab_id, session, methods, prms, n, &dialog, r)))
        return rc;
    char did[120];
    snprintf(did, sizeof did, "pressed %.60s", key);
    snap_settled st;
    if ((rc = settle(a, tab_id, nav0, tabs0, deadline, did, &st, r)))
        return rc;
    act_report rp;
    report_init(&rp, "press", NULL);
    rp.sf = sf;
    if (page_usable(a, tab_id, &st)) {
        if (*obs_oid) {
            pcall co;
            if (call(a, session, "Runtime.callFunctionOn",
                     fn_params(obs_oid, COLLECT_FN, NULL, true, false), &co) == 0) {
                const char *added = json_str(fn_value(&co), NULL);
                if (added && *added) {
                    sb_add(&rp.page, "new text: ");
                    sb_page(&rp.page, added, 300, 0);
                    json_w_key(&rp.extra, "new_text");
                    json_w_str(&rp.extra, added);
                    rp.has_extra = true;
                }
            }
            pfree(&co);
        }
        report_focus(a, tab_id, &rp);
        sessions_release(a, &ss);
    }
    rc = finish(a, tab_id, did, &st, &rp, r);
    report_free(&rp);
    return rc;
}

/* The element a key goes to: through open shadow roots and same-origin
 * frames; an <iframe> when the focus is inside a frame this document cannot
 * see into (cross-origin); null for the body. */
static const char FOCUS_DEEP_EXPR[] =
    "(function(){var e=document.activeElement;for(var i=0;i<20&&e;i++){"
    "if(e.shadowRoot&&e.shadowRoot.activeElement){e=e.shadowRoot.activeElement;continue;}"
    "if(e.tagName==='IFRAME'||e.tagName==='FRAME'){var d=null;try{d=e.contentDocument;}"
    "catch(x){}if(d&&d.activeElement&&d.activeElement!==d.body){e=d.activeElement;continue;}}"
    "break;}return e===document.body||e===document.documentElement?null:e;})()";

/* Is the element a key goes to (as FOCUS_DEEP_EXPR finds it) still this
 * one? */
static const char FOCUS_SAME_FN[] =
    "function(){var e=document.activeElement;for(var i=0;i<20&&e;i++){"
    "if(e.shadowRoot&&e.shadowRoot.activeElement){e=e.shadowRoot.activeElement;continue;}"
    "if(e.tagName==='IFRAME'||e.tagName==='FRAME'){var d=null;try{d=e.contentDocument;}"
    "catch(x){}if(d&&d.activeElement&&d.activeElement!==d.body){e=d.activeElement;continue;}}"
    "break;}return e===this;}";

/* Does the key still go to oid (in session; "" for none: the body)? */
static int press_focus_same(snap_agent *a, const char *session, const char *oid)
{
    pcall pc;
    bool same = false;
    if (oid && *oid) {
        if (call(a, session, "Runtime.callFunctionOn",
                 fn_params(oid, FOCUS_SAME_FN, NULL, true, false), &pc) == 0)
            same = json_bool(fn_value(&pc));
    } else if (call(a, session, "Runtime.evaluate",
                    params("ss", "expression", FOCUS_DEEP_EXPR, "objectGroup", ACT_GROUP),
                    &pc) == 0) {
        const char *o = json_get_str(json_get(pc.rep.result, "result"), "objectId");
        same = !o;
        if (o && strlen(o) < SNAP_ID_MAX) {
            char moved[SNAP_ID_MAX];
            snprintf(moved, sizeof moved, "%s", o);
            pfree(&pc);
            release_object(a, session, moved);
            return 0;
        }
    }
    pfree(&pc);
    return same;
}

/* After a confirmed press: the key still goes where it went when the human
 * was asked (oid: that element, "" for none), on the same document. 0, or
 * call_off. */
static int recheck_focus(snap_agent *a, snap_gated *g, int tab_id, uint64_t nav0,
                         const char *session, const char *oid, snap_result *r)
{
    int rc = recheck_page(a, g, "press", tab_id, nav0, NULL, r);
    if (rc || !g->d.confirmed)
        return rc;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (t && t->dialog_open)
        return call_off(g, "press", NULL, change_phrase(SNAP_EDIALOG), r);
    if (!press_focus_same(a, session, oid))
        return call_off(g, "press", NULL, *oid ? "the focus moved to another element"
                                               : "the focus moved to an element", r);
    char why[200];
    if (*oid && snap_gate_facts_same(a, g, session, oid, why, sizeof why))
        return call_off(g, "press", NULL, why, r);
    return 0;
}

/* The gate for a key: the focused element is the target (Enter in a field
 * submits its form, Enter or Space on a button presses it), so a key can
 * never do what a click on the same control would not be allowed to. */
static int gate_press(snap_agent *a, const char *key, const char *obs, snap_gated *g,
                      char oid[SNAP_ID_MAX], char session[SNAP_ID_MAX], snap_result *r)
{
    memset(g, 0, sizeof *g);
    memset(r, 0, sizeof *r);
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return 0;
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    snprintf(session, SNAP_ID_MAX, "%s", t->session);
    bool in_frame = false;
    pcall pc;
    if (call(a, session, "Runtime.evaluate",
             params("ss", "expression", FOCUS_DEEP_EXPR, "objectGroup", ACT_GROUP), &pc) == 0) {
        const json_val *res = json_get(pc.rep.result, "result");
        const char *o = json_get_str(res, "objectId");
        const char *desc = json_get_str(res, "description");
        if (o && strlen(o) < SNAP_ID_MAX)
            snprintf(oid, SNAP_ID_MAX, "%s", o);
        in_frame = desc && (strncmp(desc, "iframe", 6) == 0 || strncmp(desc, "frame", 5) == 0);
    }
    pfree(&pc);
    t = snap_tab_by_id(a, tab_id);
    if (in_frame && t && snap_tab_auth(a, t)) {
        release_object(a, session, oid);
        return act_fail(r, SNAP_EDENIED, "press %s: the focus is inside a frame whose "
                        "content the gate cannot see on an authenticated page; click the "
                        "control itself instead", key ? key : "");
    }
    bool submit = key && (strcmp(key, "Enter") == 0 || strcmp(key, "Return") == 0);
    snap_gate_in gi = {.tool = "press", .tab = tab_id, .session = oid[0] ? session : NULL,
                       .oid = oid[0] ? oid : NULL, .state_change = true, .submit = submit,
                       .key = key, .obs = obs};
    int rc = snap_gate_ask(a, &gi, g, r);
    if (rc == 0 && (rc = recheck_focus(a, g, tab_id, nav0, session, oid, r)))
        snap_gate_done(a, g, rc, r);
    if (rc)
        release_object(a, session, oid);
    return rc;
}

int snap_press(snap_agent *a, const char *key, const char *obs, snap_result *r)
{
    snap_gated gg;
    char oid[SNAP_ID_MAX] = "", session[SNAP_ID_MAX] = "";
    int rc = gate_press(a, key, obs, &gg, oid, session, r);
    if (rc)
        return rc;
    rc = press_run(a, key, obs, &gg, oid, r);
    snap_gate_done(a, &gg, rc, r);
    release_object(a, session, oid);
    return rc;
}

/* ---- scroll ---- */

/* Scroll the page (or, when the document itself does not scroll, its
 * largest scrollable element) by about a viewport, or to the top or the
 * bottom; d: 0 report only, 1 down, 2 up, 3 top, 4 bottom. */
#define SCROLL_SRC \
    "(function(d){var se=document.scrollingElement||document.documentElement,el=se," \
    "vh=innerHeight;if(se.scrollHeight<=innerHeight+1){var best=null,ba=0," \
    "all=document.querySelectorAll('body *');" \
    "for(var i=0;i<all.length&&i<20000;i++){var x=all[i];" \
    "if(x.scrollHeight>x.clientHeight+1){var o=getComputedStyle(x).overflowY;" \
    "if(o==='auto'||o==='scroll'){var ar=x.clientWidth*x.clientHeight;" \
    "if(ar>ba){ba=ar;best=x;}}}}if(best){el=best;vh=best.clientHeight;}}" \
    "var y0=el.scrollTop,step=Math.max(40,Math.round(vh*0.85)),I='instant';" \
    "if(d===1)el.scrollBy({top:step,behavior:I});" \
    "else if(d===2)el.scrollBy({top:-step,behavior:I});" \
    "else if(d===3)el.scrollTo({top:0,behavior:I});" \
    "else if(d===4)el.scrollTo({top:el.scrollHeight,behavior:I});" \
    "return{y:Math.round(el.scrollTop),y0:Math.round(y0),h:el.scrollHeight,vh:vh," \
    "inner:el===se?'':(el.tagName.toLowerCase()+(el.id?'#'+el.id:''))};})"
static const char SCROLL_EXPR[] = SCROLL_SRC;

/* Resolves once the page has run its next frame (scroll events are
 * dispatched in it, before its animation callbacks) and a task after it,
 * or after 1 s (a page that does not draw). */
static const char SCROLL_FRAME_EXPR[] =
    "new Promise(function(r){var f=function(){r(1);};setTimeout(f,1000);"
    "requestAnimationFrame(function(){setTimeout(f,0);});})";

static int scroll_eval(snap_agent *a, int tab_id, int d, pcall *pc)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t) {
        memset(pc, 0, sizeof *pc);
        snprintf(pc->e.msg, sizeof pc->e.msg, "the tab closed");
        return pc->rc = CDP_EDETACHED;
    }
    char expr[sizeof SCROLL_EXPR + 16];
    snprintf(expr, sizeof expr, "%s(%d)", SCROLL_EXPR, d);
    return call(a, t->session, "Runtime.evaluate",
                params("sb", "expression", expr, "returnByValue", true), pc);
}

static int scroll_run(snap_agent *a, const char *ref, const char *direction, snap_result *r)
{
    snap_tab *t;
    int rc = begin(a, NULL, &t, r);
    if (rc)
        return rc;
    int64_t deadline = snap_now_ms() + a->o.timeout_ms;
    int d = 0;
    target tg;
    memset(&tg, 0, sizeof tg);
    char did[900];
    session_set ss = {0};
    if (ref && *ref) {
        if ((rc = resolve(a, ref, &tg, r)))
            return rc;
        t = snap_tab_by_id(a, tg.tab);
        const char *what = tg.what;
        pcall sc;
        rc = call(a, tg.session, "DOM.scrollIntoViewIfNeeded",
                  params("s", "objectId", tg.oid), &sc);
        if (rc) {
            rc = act_fail(r, rc == CDP_EPROTOCOL ? SNAP_ENOTVISIBLE : SNAP_EBROWSER,
                          "%s cannot be scrolled into view: %s", what, sc.e.msg);
            pfree(&sc);
            release_all(a, &tg, &ss);
            return rc;
        }
        pfree(&sc);
        snprintf(did, sizeof did, "scrolled %s into view", what);
    } else {
        static const char *const DIRS[] = {"down", "up", "top", "bottom"};
        const char *dir = direction && *direction ? direction : "down";
        for (int i = 0; i < 4; i++)
            if (name_eq(dir, strlen(dir), DIRS[i]))
                d = i + 1;
        if (!d)
            return act_fail(r, SNAP_EINVAL, "scroll direction '%.20s' is not one of down, up, "
                            "top, bottom (or give a ref to scroll it into view)", dir);
        snprintf(did, sizeof did, "scrolled %s", DIRS[d - 1]);
    }
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    size_t tabs0 = a->ntabs;
    pcall sv;
    rc = scroll_eval(a, tab_id, d, &sv);
    const json_val *v = fn_value(&sv);
    int64_t h0 = json_get_int(v, "h", 0), y0 = json_get_int(v, "y0", 0);
    int64_t y1 = json_get_int(v, "y", 0);
    pfree(&sv);
    if (rc) {
        rc = act_fail(r, SNAP_EBROWSER, "scroll: %s", sv.e.msg);
        release_all(a, &tg, &ss);
        return rc;
    }
    /* The page's scroll handlers run in its next frame (an infinite list
     * starts its fetch there): the quiet window starts after that frame,
     * not after the scroll call, or a busy machine settles first. */
    t = snap_tab_by_id(a, tab_id);
    if (t && !t->closed && !t->dialog_open) {
        pcall fw;
        call(a, t->session, "Runtime.evaluate",
             params("sbb", "expression", SCROLL_FRAME_EXPR, "awaitPromise", true,
                    "returnByValue", true), &fw);
        pfree(&fw);
    }
    snap_settled st;
    if ((rc = settle(a, tab_id, nav0, tabs0, deadline, did, &st, r))) {
        release_all(a, &tg, &ss);
        return rc;
    }
    act_report rp;
    report_init(&rp, "scroll", ref && *ref ? ref : NULL);
    t = snap_tab_by_id(a, tab_id);
    if (page_usable(a, tab_id, &st) && scroll_eval(a, tab_id, 0, &sv) == 0) {
        v = fn_value(&sv);
        int64_t y = json_get_int(v, "y", 0), h = json_get_int(v, "h", 0);
        int64_t vh = json_get_int(v, "vh", 0);
        char inner[128];
        pg(inner, sizeof inner, json_get_str(v, "inner") ? json_get_str(v, "inner") : "");
        size_t len = strlen(did);
        snprintf(did + len, sizeof did - len, "%s, now at %lld of %lld px (viewport %lld px%s%s)"
                 "%s", d && y == y0 && y1 == y0 ? " (it was already there)" : "",
                 (long long)y, (long long)h, (long long)vh, *inner ? ", in " : "", inner,
                 y + vh >= h - 1 ? " at the bottom" : y <= 0 ? " at the top" : "");
        if (h != h0 && h0) {
            len = strlen(did);
            snprintf(did + len, sizeof did - len, "; the page grew from %lld to %lld px",
                     (long long)h0, (long long)h);
        }
        json_w_key(&rp.extra, "y");
        json_w_int(&rp.extra, y);
        json_w_key(&rp.extra, "height");
        json_w_int(&rp.extra, h);
        json_w_key(&rp.extra, "viewport");
        json_w_int(&rp.extra, vh);
        rp.has_extra = true;
    }
    pfree(&sv);
    rc = finish(a, tab_id, did, &st, &rp, r);
    report_free(&rp);
    release_all(a, &tg, &ss);
    return rc;
}

int snap_scroll(snap_agent *a, const char *ref, const char *direction, snap_result *r)
{
    snap_gated gg;
    int rc = gate_page(a, "scroll", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    rc = scroll_run(a, ref, direction, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

/* ---- history ---- */

typedef struct {
    snap_agent *a;
    int tab;
    bool same_doc;              /* navigatedWithinDocument on the main frame */
} nav_watch;

static void on_nav_event(void *ud, cdp_conn *c, const char *session, const char *method,
                         const json_val *p)
{
    (void)c;
    nav_watch *w = ud;
    if (strcmp(method, "Page.navigatedWithinDocument") != 0)
        return;
    snap_tab *t = snap_tab_by_session(w->a, session);
    const char *fid = json_get_str(p, "frameId");
    const char *url = json_get_str(p, "url");
    if (!t || t->id != w->tab || !fid || !t->nframes || strcmp(fid, t->frames[0].id) != 0)
        return;
    w->same_doc = true;
    /* agent.c keeps the URL of cross-document navigations; keep this one. */
    size_t n = url ? strlen(url) : 0;
    char *u = url ? malloc(n + 1) : NULL;
    if (u) {
        memcpy(u, url, n + 1);
        free(t->frames[0].url);
        t->frames[0].url = u;
    }
}

static int history_run(snap_agent *a, int delta, snap_result *r)
{
    snap_tab *t;
    int rc = begin(a, NULL, &t, r);
    if (rc)
        return rc;
    if (delta == 0)
        return act_fail(r, SNAP_EINVAL, "history needs -1 (back) or +1 (forward)");
    int64_t deadline = snap_now_ms() + a->o.timeout_ms;
    pcall h;
    if (call0(a, t->session, "Page.getNavigationHistory", &h)) {
        rc = act_fail(r, SNAP_EBROWSER, "history: %s", h.e.msg);
        pfree(&h);
        return rc;
    }
    int64_t cur = json_get_int(h.rep.result, "currentIndex", 0);
    const json_val *entries = json_get(h.rep.result, "entries");
    int64_t want = cur + delta;
    if (want < 0 || want >= (int64_t)json_len(entries)) {
        pfree(&h);
        if (delta < 0)
            return act_fail(r, SNAP_EINVAL, "tab t%d has no earlier page to go back to "
                            "(this is the first page of its history)", t->id);
        return act_fail(r, SNAP_EINVAL, "tab t%d has no later page to go forward to "
                        "(this is the last page of its history)", t->id);
    }
    const json_val *entry = json_at(entries, (size_t)want);
    int entry_id = (int)json_get_int(entry, "id", 0);
    char url[600];
    snprintf(url, sizeof url, "%s", json_get_str(entry, "url") ? json_get_str(entry, "url")
                                                                 : "");
    pfree(&h);
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    size_t tabs0 = a->ntabs;
    nav_watch w = {a, tab_id, false};
    if (cdp_listen(a->c, on_nav_event, &w))
        return act_fail(r, SNAP_EBROWSER, "too many listeners on the connection");
    pcall ne;
    rc = call(a, t->session, "Page.navigateToHistoryEntry", params("i", "entryId", entry_id),
              &ne);
    pfree(&ne);
    if (rc) {
        cdp_unlisten(a->c, on_nav_event, &w);
        return act_fail(r, SNAP_EBROWSER, "history: %s", ne.e.msg);
    }
    /* The new document (or same-document entry) first, then its consequences. */
    for (;;) {
        if (snap_sync(a))
            break;
        t = snap_tab_by_id(a, tab_id);
        if (!t || t->closed || t->dialog_open || t->nav != nav0 || w.same_doc)
            break;
        int64_t left = deadline - snap_now_ms();
        if (left <= 0)
            break;
        cdp_err e;
        if (cdp_pump(a->c, left < 10 ? (int)left : 10, &e))
            break;
    }
    cdp_unlisten(a->c, on_nav_event, &w);
    char did[700];
    /* A new document is reported by the settle line ("navigated to ..."). */
    if (w.same_doc) {
        sbuf ub = {0};
        sb_url(&ub, url, 300);
        snprintf(did, sizeof did, "went %s to %s (same document)",
                 delta < 0 ? "back" : "forward", ub.s && !ub.oom ? ub.s : "");
        utf8_repair(did);
        free(ub.s);
    } else
        snprintf(did, sizeof did, "went %s", delta < 0 ? "back" : "forward");
    snap_settled st;
    if ((rc = settle(a, tab_id, nav0, tabs0, deadline, did, &st, r)))
        return rc;
    act_report rp;
    report_init(&rp, delta < 0 ? "back" : "forward", NULL);
    if (w.same_doc) {
        json_w_key(&rp.extra, "same_document");
        json_w_bool(&rp.extra, true);
        rp.has_extra = true;
    }
    rc = finish(a, tab_id, did, &st, &rp, r);
    report_free(&rp);
    return rc;
}

int snap_history(snap_agent *a, int delta, snap_result *r)
{
    snap_gated gg;
    int rc = gate_page(a, "back", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    rc = history_run(a, delta, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

/* ---- tabs ---- */

static int parse_tab(const char *s)
{
    if (!s)
        return 0;
    if (*s == 't' || *s == 'T')
        s++;
    char *end;
    long v = strtol(s, &end, 10);
    return end == s || *end || v <= 0 || v > 1000000 ? 0 : (int)v;
}

static const char *tab_url(const snap_tab *t)
{
    return t->nframes && t->frames[0].url ? t->frames[0].url : "";
}

/* Titles arrive with Target.targetInfoChanged, which may lag a load: read
 * them fresh (one round trip) before showing tabs. */
static void refresh_titles(snap_agent *a)
{
    pcall pc;
    if (call0(a, NULL, "Target.getTargets", &pc) == 0) {
        for (const json_val *ti = json_first(json_get(pc.rep.result, "targetInfos")); ti;
             ti = json_next(ti)) {
            const char *id = json_get_str(ti, "targetId");
            const char *title = json_get_str(ti, "title");
            for (size_t i = 0; id && title && i < a->ntabs; i++) {
                snap_tab *t = &a->tabs[i];
                if (t->closed || strcmp(t->target, id) != 0)
                    continue;
                size_t n = strlen(title);
                char *d = malloc(n + 1);
                if (d) {
                    memcpy(d, title, n + 1);
                    free(t->title);
                    t->title = d;
                }
            }
        }
    }
    pfree(&pc);
}

static int tabs_list(snap_agent *a, snap_result *r)
{
    refresh_titles(a);
    sbuf b = {0};
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, true);
    json_w_key(&w, "tabs");
    json_w_arr_begin(&w);
    size_t open = 0;
    for (size_t i = 0; i < a->ntabs; i++) {
        snap_tab *t = &a->tabs[i];
        if (t->closed)
            continue;
        open++;
        bool cur = t->id == a->cur;
        sb_add(&b, "%st%d%s ", open > 1 ? "\n" : "", t->id, cur ? " (current)" : "");
        sb_quoted(&b, t->title ? t->title : "", 80);
        sb_putn(&b, " ", 1);
        sb_url(&b, tab_url(t), 300);
        if (t->opener)
            sb_add(&b, " (opened by t%d)", t->opener);
        if (t->dialog_open)
            sb_add(&b, " [%s dialog open]", t->dialog_type);
        json_w_obj_begin(&w);
        json_w_key(&w, "tab");
        json_w_int(&w, t->id);
        json_w_key(&w, "url");
        json_url(&w, tab_url(t));
        json_w_key(&w, "title");
        json_w_str(&w, t->title ? t->title : "");
        json_w_key(&w, "current");
        json_w_bool(&w, cur);
        if (t->opener) {
            json_w_key(&w, "opener");
            json_w_int(&w, t->opener);
        }
        if (t->dialog_open) {
            json_w_key(&w, "dialog");
            json_w_str(&w, t->dialog_type);
        }
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    json_w_key(&w, "closed");
    json_w_arr_begin(&w);
    size_t nclosed = 0;
    for (size_t i = 0; i < a->ntabs; i++) {
        if (!a->tabs[i].closed)
            continue;
        json_w_int(&w, a->tabs[i].id);
        nclosed++;
    }
    json_w_arr_end(&w);
    if (!open)
        sb_add(&b, "no open tabs");
    if (nclosed)
        sb_add(&b, "\n%zu closed tab%s (ids are never reused)", nclosed, nclosed > 1 ? "s" : "");
    /* Titles and URLs come from the pages: mark them. */
    sbuf out = {0};
    sb_add(&out, "%zu open tab%s\n<<<page-content nonce=%s>>>\n%s\n<<<end page-content "
           "nonce=%s>>>", open, open == 1 ? "" : "s", a->nonce, b.s ? b.s : "", a->nonce);
    free(b.s);
    json_w_key(&w, "message");
    json_w_str(&w, out.s ? out.s : "");
    json_w_obj_end(&w);
    r->code = 0;
    r->text = out.s;
    r->structured = json_w_take(&w, NULL);
    if (!r->text || !r->structured)
        return act_fail(r, SNAP_ENOMEM, "out of memory listing tabs");
    return 0;
}

static int tabs_run(snap_agent *a, const char *action, const char *tab, snap_result *r)
{
    memset(r, 0, sizeof *r);
    if (snap_sync(a))
        return act_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    if (!action || !*action || strcmp(action, "list") == 0)
        return tabs_list(a, r);
    bool sw = strcmp(action, "switch") == 0, cl = strcmp(action, "close") == 0;
    if (!sw && !cl)
        return act_fail(r, SNAP_EINVAL, "tabs action '%.20s' is not list, switch or close",
                        action);
    snap_tab *cur = snap_tab_current(a);
    if (cur && cur->dialog_open)
        return refuse_dialog(a, cur, r);
    int id = tab && *tab ? parse_tab(tab) : (cl && cur ? cur->id : 0);
    if (!id)
        return act_fail(r, SNAP_EINVAL, "'%.20s' is not a tab id (they look like t2; tabs "
                        "list shows them)", tab ? tab : "");
    snap_tab *t = snap_tab_by_id(a, id);
    if (!t)
        return act_fail(r, SNAP_ENOTAB, "there is no tab t%d", id);
    if (t->closed)
        return act_fail(r, SNAP_ENOTAB, "tab t%d is closed (closed tabs never come back; "
                        "tabs list shows the open ones)", id);
    char *prm = params("s", "targetId", t->target);
    pcall pc;
    int rc = call(a, NULL, sw ? "Target.activateTarget" : "Target.closeTarget", prm, &pc);
    pfree(&pc);
    if (rc && !(cl && rc == CDP_EPROTOCOL))
        return act_fail(r, SNAP_EBROWSER, "tabs %s: %s", action, pc.e.msg);
    t = snap_tab_by_id(a, id);
    if (!t)
        return act_fail(r, SNAP_ENOTAB, "tab t%d is gone", id);
    char did[800];
    if (sw) {
        a->cur = id;
        snprintf(did, sizeof did, "switched to t%d", id);
    } else {
        t->closed = true;
        snprintf(did, sizeof did, "closed t%d", id);
        if (a->cur == id) {
            snap_tab *op = t->opener ? snap_tab_by_id(a, t->opener) : NULL;
            a->cur = op && !op->closed ? op->id : 0;
            for (size_t i = a->ntabs; !a->cur && i > 0; i--)
                if (!a->tabs[i - 1].closed)
                    a->cur = a->tabs[i - 1].id;
        }
        snap_sync(a);
    }
    refresh_titles(a);
    snap_tab *now = snap_tab_current(a);
    snap_obs_issue(a, now, r->obs);
    sbuf b = {0};
    if (now) {
        sb_add(&b, "%s; current tab t%d [obs %s]\n<<<page-content nonce=%s>>>\n", did, now->id,
               r->obs, a->nonce);
        sb_quoted(&b, now->title ? now->title : "", 80);
        sb_putn(&b, " ", 1);
        sb_url(&b, tab_url(now), 300);
        sb_add(&b, "%s\n<<<end page-content nonce=%s>>>",
               now->dialog_open ? " (a dialog is open)" : "", a->nonce);
    } else
        sb_add(&b, "%s; no tab is open now (open a page)", did);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, true);
    json_w_key(&w, "action");
    json_w_str(&w, action);
    json_w_key(&w, "tab");
    json_w_int(&w, id);
    json_w_key(&w, "current");
    json_w_int(&w, now ? now->id : 0);
    if (now) {
        json_w_key(&w, "url");
        json_url(&w, tab_url(now));
    }
    json_w_key(&w, "obs");
    json_w_str(&w, r->obs);
    json_w_key(&w, "message");
    json_w_str(&w, b.s ? b.s : "");
    json_w_obj_end(&w);
    r->code = 0;
    r->text = b.s;
    r->structured = json_w_take(&w, NULL);
    if (!r->text || !r->structured)
        return act_fail(r, SNAP_ENOMEM, "out of memory");
    return 0;
}

int snap_tabs(snap_agent *a, const char *action, const char *tab, snap_result *r)
{
    snap_gated gg;
    int rc = gate_page(a, "tabs", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    rc = tabs_run(a, action, tab, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

/* ---- dialogs ---- */

static int dialog_run(snap_agent *a, bool accept, const char *prompt_text, snap_result *r)
{
    memset(r, 0, sizeof *r);
    if (snap_sync(a))
        return act_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return act_fail(r, SNAP_ENOTAB, "no open tab");
    if (!t->dialog_open) {
        for (size_t i = 0; i < a->ntabs; i++)
            if (!a->tabs[i].closed && a->tabs[i].dialog_open)
                return act_fail(r, SNAP_EDIALOG, "no dialog is open in the current tab t%d; "
                                "tab t%d has a %s dialog (tabs switch t%d first)", t->id,
                                a->tabs[i].id, a->tabs[i].dialog_type, a->tabs[i].id);
        return act_fail(r, SNAP_EDIALOG, "no dialog is open in tab t%d", t->id);
    }
    if (prompt_text && !json_utf8_valid((const uint8_t *)prompt_text, strlen(prompt_text)))
        return act_fail(r, SNAP_EINVAL, "the prompt text is not valid UTF-8");
    int64_t deadline = snap_now_ms() + a->o.timeout_ms;
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    size_t tabs0 = a->ntabs;
    char type[16];
    snprintf(type, sizeof type, "%s", t->dialog_type);
    bool prompt = strcmp(type, "prompt") == 0;
    uint64_t since = cdp_event_seq(a->c);
    /* The dialog belongs to the session of the frame that opened it: the
     * page's, or an out-of-process iframe's. */
    char sessions[MAX_SESSIONS][SNAP_ID_MAX];
    size_t ns = 0;
    snprintf(sessions[ns++], SNAP_ID_MAX, "%s", t->session);
    for (size_t i = 1; i < t->nframes && ns < MAX_SESSIONS; i++)
        if (t->frames[i].oopif && !t->frames[i].gone)
            snprintf(sessions[ns++], SNAP_ID_MAX, "%s", t->frames[i].session);
    const char *text = prompt && accept ? (prompt_text ? prompt_text : "") : NULL;
    pcall pc;
    int rc = CDP_EPROTOCOL;
    for (size_t i = 0; rc == CDP_EPROTOCOL && i < ns; i++) {
        rc = call(a, sessions[i], "Page.handleJavaScriptDialog",
                  params("bs", "accept", accept, "promptText", text), &pc);
        pfree(&pc);
    }
    if (rc)
        return act_fail(r, SNAP_EBROWSER, "dialog: %s", pc.e.msg);
    cdp_reply ev;
    cdp_err e;
    if (cdp_wait_event(a->c, since, NULL, "Page.javascriptDialogClosed", NULL, NULL, 3000, &ev,
                       NULL, &e) == 0)
        cdp_reply_free(&ev);
    t = snap_tab_by_id(a, tab_id);
    if (t)
        t->dialog_open = false;
    char did[120];
    snprintf(did, sizeof did, "%s the %s dialog%s", accept ? "accepted" : "dismissed", type,
             prompt && accept ? " with the given text" : "");
    snap_settled st;
    if ((rc = settle(a, tab_id, nav0, tabs0, deadline, did, &st, r)))
        return rc;
    act_report rp;
    report_init(&rp, "dialog", NULL);
    json_w_key(&rp.extra, "answered");
    json_w_str(&rp.extra, type);
    json_w_key(&rp.extra, "accepted");
    json_w_bool(&rp.extra, accept);
    rp.has_extra = true;
    rc = finish(a, tab_id, did, &st, &rp, r);
    report_free(&rp);
    return rc;
}

int snap_dialog(snap_agent *a, bool accept, const char *prompt_text, snap_result *r)
{
    snap_gated gg;
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    const char *msg = accept && t && t->dialog_open
                          ? (t->dialog_message ? t->dialog_message : "") : NULL;
    /* The message approved, kept: the tab's copy goes when the dialog does. */
    char *approved = msg ? strdup(msg) : NULL;
    int tab_id = t ? t->id : 0;
    uint64_t nav0 = t ? t->nav : 0;
    if (msg && !approved) {
        memset(r, 0, sizeof *r);
        return snap_fail(r, SNAP_ENOMEM, "dialog: out of memory");
    }
    int rc = gate_page(a, "dialog", accept, false, approved, NULL, &gg, r);
    if (rc) {
        free(approved);
        return rc;
    }
    if ((rc = recheck_page(a, &gg, "dialog", tab_id, nav0, approved, r))) {
        free(approved);
        snap_gate_done(a, &gg, rc, r);
        return rc;
    }
    free(approved);
    rc = dialog_run(a, accept, prompt_text, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

/* ---- screenshot ---- */

#define SHOT_MAX_HEIGHT 16384   /* full-page captures are cut here (and say so) */
#define SHOT_MAX_WIDTH 4096     /* and here: a page can be made arbitrarily wide */

static int screenshot_run(snap_agent *a, bool full_page, snap_result *r)
{
    snap_tab *t;
    int rc = begin(a, NULL, &t, r);
    if (rc)
        return rc;
    char *prm;
    double cw = 0, ch = 0;
    bool cut = false;
    if (full_page) {
        pcall lm;
        if (call0(a, t->session, "Page.getLayoutMetrics", &lm)) {
            rc = act_fail(r, SNAP_EBROWSER, "screenshot: %s", lm.e.msg);
            pfree(&lm);
            return rc;
        }
        const json_val *cs = json_get(lm.rep.result, "cssContentSize");
        cw = dceil(json_num(json_get(cs, "width")));
        ch = dceil(json_num(json_get(cs, "height")));
        pfree(&lm);
        if (ch > SHOT_MAX_HEIGHT) {
            ch = SHOT_MAX_HEIGHT;
            cut = true;
        }
        if (cw > SHOT_MAX_WIDTH) {
            cw = SHOT_MAX_WIDTH;
            cut = true;
        }
        if (cw < 1 || ch < 1)
            full_page = false;
    }
    if (full_page) {
        json_w w;
        json_w_init(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, "x");
        json_w_int(&w, 0);
        json_w_key(&w, "y");
        json_w_int(&w, 0);
        json_w_key(&w, "width");
        json_w_num(&w, cw);
        json_w_key(&w, "height");
        json_w_num(&w, ch);
        json_w_key(&w, "scale");
        json_w_int(&w, 1);
        json_w_obj_end(&w);
        char *clip = json_w_take(&w, NULL);
        prm = clip ? params("srb", "format", "png", "clip", clip, "captureBeyondViewport", true)
                   : NULL;
        free(clip);
    } else {
        prm = params("s", "format", "png");
    }
    pcall pc;
    rc = call(a, t->session, "Page.captureScreenshot", prm, &pc);
    size_t blen = 0;
    const char *b64 = rc ? NULL : json_str(json_get(pc.rep.result, "data"), &blen);
    if (!b64) {
        rc = act_fail(r, SNAP_EBROWSER, "screenshot: %s", rc ? pc.e.msg : "no data");
        pfree(&pc);
        return rc;
    }
    size_t cap = blen / 4 * 3 + 3;
    uint8_t *img = malloc(cap ? cap : 1);
    ssize_t n = img ? ws_b64_decode(b64, blen, img, cap) : -1;
    pfree(&pc);
    static const uint8_t SIG[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 24 || memcmp(img, SIG, 8) != 0) {
        bool oom = !img;
        free(img);
        return act_fail(r, oom ? SNAP_ENOMEM : SNAP_EBROWSER, "screenshot: %s",
                        oom ? "out of memory" : "the browser sent no PNG");
    }
    uint32_t width = (uint32_t)img[16] << 24 | (uint32_t)img[17] << 16 |
                     (uint32_t)img[18] << 8 | img[19];
    uint32_t height = (uint32_t)img[20] << 24 | (uint32_t)img[21] << 16 |
                      (uint32_t)img[22] << 8 | img[23];
    r->image = img;
    r->image_len = (size_t)n;
    snap_obs_issue(a, t, r->obs);
    sbuf b = {0};
    sb_add(&b, "screenshot of tab t%d (%s): %ux%u PNG, %zd bytes%s [obs %s]", t->id,
           full_page ? "full page" : "viewport", width, height, n,
           cut ? "; the page is larger, cut at 4096x16384 px" : "", r->obs);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, true);
    json_w_key(&w, "tab");
    json_w_int(&w, t->id);
    json_w_key(&w, "full_page");
    json_w_bool(&w, full_page);
    json_w_key(&w, "width");
    json_w_uint(&w, width);
    json_w_key(&w, "height");
    json_w_uint(&w, height);
    json_w_key(&w, "bytes");
    json_w_uint(&w, (uint64_t)n);
    if (cut) {
        json_w_key(&w, "cut");
        json_w_bool(&w, true);
    }
    json_w_key(&w, "obs");
    json_w_str(&w, r->obs);
    json_w_key(&w, "message");
    json_w_str(&w, b.s ? b.s : "");
    json_w_obj_end(&w);
    r->text = b.s;
    r->structured = json_w_take(&w, NULL);
    if (!r->text || !r->structured)
        return act_fail(r, SNAP_ENOMEM, "out of memory");
    return 0;
}

int snap_screenshot(snap_agent *a, bool full_page, snap_result *r)
{
    snap_gated gg;
    int rc = gate_page(a, "screenshot", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    rc = screenshot_run(a, full_page, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

/* Every page script of this file, for the sink (sink.c): a script that is
 * not listed here is refused. WRITE: it changes the page. */
const snap_js snap_act_scripts[] = {
    {STATE_FN, NULL, SNAP_JS_READ},
    {CONTAINS_FN, NULL, SNAP_JS_READ},
    {COVER_FN, NULL, SNAP_JS_READ},
    {OBSERVE_FN, NULL, SNAP_JS_READ},
    {OBSERVE_DOC_EXPR, NULL, SNAP_JS_READ},
    {COLLECT_FN, NULL, SNAP_JS_READ},
    {AFTER_FN, NULL, SNAP_JS_READ},
    {PICK_OPTION_FN, NULL, SNAP_JS_WRITE},
    {PREP_TYPE_FN, NULL, SNAP_JS_WRITE},
    {VALUE_FN, NULL, SNAP_JS_READ},
    {FOCUS_ON_FN, NULL, SNAP_JS_READ},
    {SF_KNOWN_FN, NULL, SNAP_JS_READ},
    {SELECT_FN, NULL, SNAP_JS_WRITE},
    {FIND_OPTION_FN, NULL, SNAP_JS_READ},
    {CHOSEN_FN, NULL, SNAP_JS_READ},
    {ARIA_SELECTED_FN, NULL, SNAP_JS_READ},
    {FILE_INPUT_FN, NULL, SNAP_JS_READ},
    {RAF2_EXPR, NULL, SNAP_JS_READ},
    {FRAME_EXPR, NULL, SNAP_JS_READ},
    {SCROLL_FRAME_EXPR, NULL, SNAP_JS_READ},
    {VALUE_SELECT_FN, NULL, SNAP_JS_READ},
    {SF_EXPR, NULL, SNAP_JS_READ},
    {FOCUS_EXPR, NULL, SNAP_JS_READ},
    {FOCUS_DEEP_EXPR, NULL, SNAP_JS_READ},
    {FOCUS_SAME_FN, NULL, SNAP_JS_READ},
    {SCROLL_SRC "(", ")", SNAP_JS_WRITE},
    {NULL, NULL, 0},
};
