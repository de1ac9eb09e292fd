/*
 * human.c — the person's input from the live view (issue 15, point 4): a
 * mouse event, a key, inserted text or IME composition the person made in
 * the viewer goes to the agent's current tab through the one chokepoint
 * (sink.c) under the 'human' permit, which permits the Input methods only
 * while the gate's control mode is human. Under any other mode (the agent
 * holds control, or it is paused) the person's input is refused here and
 * again at the sink: the lock holds both ways.
 *
 * What the person typed is in params: it is sent as a secret command
 * (cdp_send_secret: its reply is wiped too) and never logged or kept.
 *
 * The tabs of the view: the open tabs of the current tab's browser context
 * (the context the person controls) are listed for the viewer (title and
 * origin); the person's choice of one is brought to the front under the
 * 'human_tab' permit (Target.activateTarget only, only while the human
 * holds control, only a tab of that context: sink.c checks it again) and
 * becomes the current tab; a popup the page opens becomes the current tab
 * as a browser shows it, and when it closes its opener does
 * (snap_human_follow). The screencast (cast.c) follows the current tab.
 */
#include "snapshot/snap_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate.h"

static const char *const HUMAN_METHODS[] = {
    "Input.dispatchMouseEvent", "Input.dispatchKeyEvent", "Input.insertText",
    "Input.imeSetComposition", NULL,
};

static bool human_method(const char *method)
{
    for (size_t i = 0; method && HUMAN_METHODS[i]; i++)
        if (strcmp(HUMAN_METHODS[i], method) == 0)
            return true;
    return false;
}

int snap_human_input(snap_agent *a, const char *method, const char *params, char *why,
                     size_t cap)
{
    if (!a->gate || gate_mode(a->gate) != GATE_MODE_HUMAN) {
        snprintf(why, cap, "the person's input is refused: the human does not hold control "
                 "(%s)", a->gate ? gate_mode_name(gate_mode(a->gate)) : "no gate");
        return SNAP_EDENIED;
    }
    if (!human_method(method)) {
        snprintf(why, cap, "the person's input is refused: not an input method");
        return SNAP_EINVAL;
    }
    snap_tab *t = snap_tab_current(a);
    if (!t) {
        snprintf(why, cap, "the person's input is refused: no open tab");
        return SNAP_ENOTAB;
    }
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "human", saved);
    uint64_t id = 0;
    cdp_err e = {0};
    int rc = snap_cdp_send_secret(a, t->session, method, params, &id, &e);
    snap_permit_begin(a, saved);
    if (rc) {
        /* e.msg names the method and the permit, never params */
        snprintf(why, cap, "the person's input was not sent: %s", e.msg);
        return SNAP_EBROWSER;
    }
    cdp_forget(a->c, id);   /* a secret call keeps its slot: its reply is wiped */
    why[0] = 0;
    return 0;
}

int snap_human_url(snap_agent *a, char *out, size_t cap)
{
    snap_tab *t = snap_tab_current(a);
    out[0] = 0;
    if (!t || !t->nframes || !t->frames[0].url)
        return SNAP_ENOTAB;
    char *r = snap_url_redact_act(a, t->frames[0].url);
    snprintf(out, cap, "%s", r ? r : "");
    free(r);
    return r ? 0 : SNAP_ENOMEM;
}

int snap_human_origin(snap_agent *a, char *out, size_t cap)
{
    snap_tab *t = snap_tab_current(a);
    out[0] = 0;
    if (!t || !t->nframes || !t->frames[0].url)
        return SNAP_ENOTAB;
    char *o = snap_origin_shown_strict(a, t->frames[0].url);
    snprintf(out, cap, "%s", o ? o : "");
    free(o);
    return o ? 0 : SNAP_ENOMEM;
}

int snap_human_page(snap_agent *a, char *out, size_t cap)
{
    char o[600];
    int rc = snap_human_origin(a, o, sizeof o);
    if (rc)
        snprintf(out, cap, "%s", rc == SNAP_ENOTAB ? "(no tab)" : "(withheld: out of memory)");
    else
        snprintf(out, cap, "%s (path and query withheld)", o);
    return rc;
}

char *snap_human_url_shown(const snap_agent *a, const char *url)
{
    char *o = snap_request_origin_shown(a, url);
    size_t cap = o ? strlen(o) + 32 : 0;
    char *s = o ? malloc(cap) : NULL;
    if (s)
        snprintf(s, cap, "%s (path and query withheld)", o);
    free(o);
    return s;
}

/* One "domain name" line per cookie of reply r (names only). */
static char *cookie_names(const json_val *cookies)
{
    size_t cap = 1, n = 0;
    for (const json_val *c = json_first(cookies); c; c = json_next(c))
        cap += strlen(json_get_str(c, "name") ? json_get_str(c, "name") : "") +
               strlen(json_get_str(c, "domain") ? json_get_str(c, "domain") : "") + 2;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    for (const json_val *c = json_first(cookies); c; c = json_next(c)) {
        const char *nm = json_get_str(c, "name"), *dm = json_get_str(c, "domain");
        size_t at = n;
        n += (size_t)snprintf(out + n, cap - n, "%s %s", dm ? dm : "", nm ? nm : "");
        for (size_t i = at; i < n; i++)     /* one line a cookie, whatever its name */
            if (out[i] == '\n' || out[i] == '\r')
                out[i] = '?';
        out[n++] = '\n';
    }
    out[n] = 0;
    return out;
}

/* The site of cookie domain dom (n bytes) as the account names it: its
 * last two labels, lower case (an IP address whole), "[withheld]" when a
 * character is not one of a host name's. */
static void cookie_site(const char *dom, size_t n, char *out, size_t cap)
{
    while (n && *dom == '.') {
        dom++;
        n--;
    }
    while (n && dom[n - 1] == '.')
        n--;
    bool v6 = n && memchr(dom, ':', n) != NULL, ip = n > 0;
    for (size_t i = 0; i < n; i++) {
        char c = (char)(dom[i] >= 'A' && dom[i] <= 'Z' ? dom[i] - 'A' + 'a' : dom[i]);
        bool digit = c >= '0' && c <= '9', hex = digit || (c >= 'a' && c <= 'f');
        bool host = (c >= 'a' && c <= 'z') || digit || c == '.' || c == '-' || c == '_';
        if (v6 ? !(hex || c == ':' || c == '.') : !host)
            n = 0;
        ip = ip && (v6 || digit || c == '.');
    }
    if (!n || n > 253) {
        snprintf(out, cap, "[withheld]");
        return;
    }
    size_t from = 0, dots = 0;
    for (size_t i = n; !ip && i > 0 && dots < 2; i--)
        if (dom[i - 1] == '.' && ++dots == 2)
            from = i;
    snprintf(out, cap, "%.*s", (int)(n - from), dom + from);
    for (char *p = out; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
}

/* Whether list ("\n"-ended lines) holds the line line (n bytes). */
static bool cookie_line_in(const char *list, const char *line, size_t n)
{
    for (const char *p = list; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (l == n && memcmp(p, line, n) == 0)
            return true;
        p += l + (nl ? 1 : 0);
    }
    return false;
}

#define HUMAN_SITES_MAX 16

typedef struct {
    char site[140];
    size_t n;
} cookie_count;

/* The count of line's site in c (ns of them, HUMAN_SITES_MAX at most) one
 * up; false when there is no room for a new site. */
static bool cookie_count_add(cookie_count *c, size_t *ns, const char *line, size_t l)
{
    const char *sp = memchr(line, ' ', l);
    char site[140];
    cookie_site(line, sp ? (size_t)(sp - line) : l, site, sizeof site);
    for (size_t i = 0; i < *ns; i++)
        if (strcmp(c[i].site, site) == 0) {
            c[i].n++;
            return true;
        }
    if (*ns == HUMAN_SITES_MAX)
        return false;
    snprintf(c[*ns].site, sizeof c[*ns].site, "%s", site);
    c[(*ns)++].n = 1;
    return true;
}

void snap_human_cookies_new(const char *before, const char *now, char *out, size_t cap)
{
    cookie_count c[HUMAN_SITES_MAX];
    size_t ns = 0, more = 0;
    for (const char *p = now; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (l && !cookie_line_in(before, p, l) && !cookie_count_add(c, &ns, p, l))
            more++;
        p += l + (nl ? 1 : 0);
    }
    size_t n = 0;
    if (cap)
        out[0] = 0;
    for (size_t i = 0; i < ns && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%zu on %s", i ? ", " : "", c[i].n,
                              c[i].site);
    if (more && n < cap)
        snprintf(out + n, cap - n, ", %zu more on other sites", more);
}

char *snap_human_cookies(snap_agent *a)
{
    /* the current tab's browser context (the agent's are not the default) */
    snap_tab *t = snap_tab_current(a);
    const char *ctx = t && t->ctx < a->nctxs ? a->ctxs[t->ctx].id : "";
    char params[SNAP_ID_MAX + 32] = "{}";
    if (*ctx)
        snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", ctx);
    cdp_reply r = {0};
    cdp_err e = {0};
    if (snap_cdp_call_secret(a, NULL, "Storage.getCookies", params, 0, &r, &e) != 0)
        return NULL;
    char *out = cookie_names(json_get(r.result, "cookies"));
    cdp_reply_free(&r);     /* wipes the values */
    return out;
}

/* ---- the tabs of the live view ---- */

#define HUMAN_TITLES_MS 1000        /* the tabs' titles read again this often */

/* The browser context the person controls: the current tab's (a tab
 * closed just now still names it until snap_human_follow moves on). */
static bool human_ctx(snap_agent *a, size_t *ctx)
{
    snap_tab *cur = snap_tab_by_id(a, a->cur);
    if (!cur)
        return false;
    *ctx = cur->ctx;
    return true;
}

static bool human_tab_mine(const snap_tab *t, size_t ctx)
{
    return t && !t->closed && !t->discarded && t->ctx == ctx;
}

static void human_tab_fill(snap_agent *a, const snap_tab *t, snap_human_tab *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->id, sizeof o->id, "t%d", t->id);
    snprintf(o->title, sizeof o->title, "%s", t->title ? t->title : "");
    base_utf8_trim(o->title);
    if (!t->nframes || !t->frames[0].url ||
        snap_url_origin(t->frames[0].url, o->origin, sizeof o->origin) != 0)
        o->origin[0] = 0;
    o->current = t->id == a->cur;
}

size_t snap_human_tabs(snap_agent *a, snap_human_tab *out, size_t cap, size_t *total)
{
    size_t ctx = 0, n = 0, all = 0;
    if (human_ctx(a, &ctx)) {
        for (size_t i = 0; i < a->ntabs; i++) {
            if (!human_tab_mine(&a->tabs[i], ctx))
                continue;
            if (n < cap)
                human_tab_fill(a, &a->tabs[i], &out[n++]);
            all++;
        }
    }
    if (total)
        *total = all;
    return n;
}

/* "t2" -> 2; 0 when id is not one. */
static int human_tab_id(const char *id)
{
    if (!id || id[0] != 't' || !id[1] || strlen(id) > 9 ||
        strspn(id + 1, "0123456789") != strlen(id + 1))
        return 0;
    return (int)strtol(id + 1, NULL, 10);
}

/* Bring tab t to the front under the 'human_tab' permit (sink.c checks
 * the mode and that t is a tab of the person's context). Sent, not waited
 * on (as the person's input): no event is dispatched while the permit is
 * held. */
static int human_activate(snap_agent *a, const snap_tab *t, char *why, size_t cap)
{
    char params[SNAP_ID_MAX + 24];
    snprintf(params, sizeof params, "{\"targetId\":\"%s\"}", t->target);
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "human_tab", saved);
    cdp_err e = {0};
    uint64_t id = 0;
    int rc = snap_cdp_send(a, NULL, "Target.activateTarget", params, &id, &e);
    snap_permit_begin(a, saved);
    if (rc == 0)
        cdp_forget(a->c, id);
    if (rc) {
        snprintf(why, cap, "the tab was not switched: %s", e.msg);
        return SNAP_EBROWSER;
    }
    return 0;
}

int snap_human_tab_switch(snap_agent *a, const char *id, char *why, size_t cap)
{
    if (!a->gate || gate_mode(a->gate) != GATE_MODE_HUMAN) {
        snprintf(why, cap, "the person's tab choice is refused: the human does not hold "
                 "control (%s)", a->gate ? gate_mode_name(gate_mode(a->gate)) : "no gate");
        return SNAP_EDENIED;
    }
    size_t ctx = 0;
    int n = human_tab_id(id);
    snap_tab *t = n ? snap_tab_by_id(a, n) : NULL;
    if (!t || t->closed || t->discarded || !human_ctx(a, &ctx)) {
        snprintf(why, cap, "the person's tab choice is refused: no such open tab");
        return SNAP_ENOTAB;
    }
    if (t->ctx != ctx) {
        snprintf(why, cap, "the person's tab choice is refused: t%d is not a tab of the "
                 "browser context the person controls", t->id);
        return SNAP_EDENIED;
    }
    int rc = human_activate(a, t, why, cap);
    if (rc)
        return rc;
    a->cur = t->id;
    why[0] = 0;
    return 0;
}

/* The current tab closed: its opener when open, else the most recent open
 * tab of the same context. */
static int human_fallback(snap_agent *a, const snap_tab *gone)
{
    snap_tab *op = gone->opener ? snap_tab_by_id(a, gone->opener) : NULL;
    if (human_tab_mine(op, gone->ctx))
        return op->id;
    for (size_t i = a->ntabs; i > 0; i--)
        if (human_tab_mine(&a->tabs[i - 1], gone->ctx))
            return a->tabs[i - 1].id;
    return 0;
}

bool snap_human_follow(snap_agent *a, snap_human_seen *seen)
{
    snap_sync(a);                   /* adopts the popups the page opened */
    int was = a->cur;
    size_t ctx = 0;
    int64_t now = base_now_ms();
    bool fresh = seen->started && a->ntabs > seen->ntabs;
    if (!fresh && now - seen->titles_ms >= HUMAN_TITLES_MS) {
        snap_tab_titles(a);
        seen->titles_ms = now;
    }
    if (!seen->started || !human_ctx(a, &ctx)) {
        seen->started = true;
        seen->ntabs = a->ntabs;
        return false;
    }
    for (size_t i = seen->ntabs; i < a->ntabs; i++)
        if (human_tab_mine(&a->tabs[i], ctx))
            a->cur = a->tabs[i].id;     /* a popup: the browser shows it */
    if (fresh) {
        snap_tab_titles(a);             /* its title may have come before it was adopted */
        seen->titles_ms = now;
    }
    seen->ntabs = a->ntabs;
    snap_tab *cur = snap_tab_by_id(a, a->cur);
    if (cur && cur->closed)
        a->cur = human_fallback(a, cur);
    return a->cur != was;
}
