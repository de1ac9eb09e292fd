/*
 * signin.c — a sign-in made in the agent's own untrusted context (red team
 * s18, R8-6 b).
 *
 * The untrusted context (ctxs[0], the open web's) never holds a session
 * restored or captured by cdpgate, but a sign-in made there is live all the
 * same: the model opens a magic-login link from a mail it read, or a page
 * posts a sign-in form, and the site's cookies in that context are a
 * session. From then on that site's pages there count as signed in
 * (snap_tab_auth: auth=yes, state changes confirmed, consequential acts
 * stopped unless bound), and the sink judges the requests of its pages, and
 * those to it, as a session's (sink.c auth_origin: the courier rule,
 * consequential GETs). A site is marked, for the rest of the task, when a
 * request of a tab of that context that the gate let through (sink.c,
 * snap_signin_seen, in the listener) is
 *   - strong: a navigation (a document, a redirect hop) whose URL carries
 *     a capability (the bearer rule hides something in it: url_redact
 *     URL_REDACT_TOKENS) on a sign-in path (login, magic, verify, auth,
 *     callback, reset, ...): marked at once, whatever the cookies say (a
 *     magic link's page may keep its session in localStorage);
 *   - weak: a navigation or a script's request (not a subresource) whose
 *     URL carries a capability or names a sign-in, or a request carrying
 *     data with a field named like a credential (password, code, PIN,
 *     token...): marked when, by the time the browser answered it, a cookie
 *     of that site in the context is new or changed since the request left.
 * The cookies before: a Storage.getCookies sent from the listener before
 * the paused request is continued (its reply is read later, outside the
 * listener); after: one read when the agent next syncs (snap_sync). Cookies
 * are compared by a keyed hash of name, domain, path and value (a key of
 * this agent's, never shown; the values are wiped with the replies). A
 * cookie that cannot be read, a baseline that did not come, or no memory:
 * the site is marked (fail closed). A weak signal is settled once the
 * browser answered its request (Network.responseReceived or loadingFailed
 * of its network id: the response's cookies are stored by then) or after
 * SIGNIN_WAIT_MS; a cookie a page sets later (a consent or analytics
 * cookie) does not mark the site.
 *
 * Invariants: nothing here names a cookie or a value: what a result says
 * is the site (as results show an origin) and why; a mark is never undone
 * in the task (a sign-out there is not read: fail closed).
 */
#include "snapshot/session_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url/url.h"
#include "vault/vault.h"

#define SIGNIN_WAITS 8          /* weak signals waiting for the browser's answer */
#define SIGNIN_SITES 16         /* sites marked in the context (more: fail closed) */
#define SIGNIN_WAIT_MS 15000    /* a weak signal whose answer was never seen */
#define SIGNIN_NOTE_MAX 1400

enum { WHY_LINK = 1, WHY_PATH = 2, WHY_FORM = 4 };

typedef struct {
    char origin[URL_ORIGIN_MAX]; /* the request's origin: its site is the one */
    char net[SNAP_ID_MAX];      /* its network id ("" unknown) */
    uint64_t base;              /* the cookies before: the call's id (0: none) */
    bool have_base, base_ok;    /* read; read whole */
    uint64_t *fp;               /* the site's cookies before, hashed (new) */
    size_t nfp;
    bool done;                  /* the browser answered the request */
    int64_t since;
    unsigned why;
} signin_wait;

struct snap_signin {
    uint8_t key[32];
    bool keyed;
    signin_wait w[SIGNIN_WAITS];
    size_t nw;
    char sites[SIGNIN_SITES][URL_ORIGIN_MAX];
    size_t nsites;
    bool busy;                  /* snap_signin_sync is running */
    char note[SIGNIN_NOTE_MAX]; /* not told yet */
};

static snap_signin *state(snap_agent *a)
{
    if (a->signin)
        return a->signin;
    snap_signin *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->keyed = base_random(s->key, sizeof s->key) == 0;
    a->signin = s;
    return s;
}

/* ---- what a request says ---- */

/* A path naming a sign-in or an account link: the login-wall rule's words
 * (session_check.c) and the link words of the bearer rule. */
static bool signin_path(const char *url)
{
    static const char *const W[] = {"magic", "callback", "token", "ticket", "saml", "oauth",
                                    "openid", "invit", "activat", "verif", "confirm", "reset",
                                    "passwordless", NULL};
    char path[1024];
    if (url_path(url, path, sizeof path))
        return false;
    if (snap_session_login_path(path))
        return true;
    for (char *p = path; *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    for (size_t i = 0; W[i]; i++)
        if (strstr(path, W[i]))
            return true;
    return false;
}

/* The URL carries a capability: the bearer rule hides something in it
 * (a token-shaped path segment or query value, a secret-named parameter,
 * a code after a sign-in word). Out of memory: yes (fail closed). */
static bool capability(const char *url)
{
    if (strstr(url, "[redacted]"))
        return true;
    char *r = url_redact(url, URL_REDACT_TOKENS, NULL);
    bool cap = !r || strstr(r, "[redacted]") != NULL;
    free(r);
    return cap;
}

/* A field list (snap_body_fields: "a, b, ...") names a credential. */
static bool credential_fields(const char *fields)
{
    for (const char *p = fields; *p;) {
        size_t n = strcspn(p, ",");
        if (url_secret_name(p, n, true))
            return true;
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return false;
}

/* ---- marks ---- */

static const char *site_of(const snap_signin *s, const char *url)
{
    for (size_t i = 0; s && url && *url && i < s->nsites; i++)
        if (url_same_site(s->sites[i], url))
            return s->sites[i];
    return NULL;
}

static void mark(snap_agent *a, snap_signin *s, const char *origin, unsigned why)
{
    if (site_of(s, origin))
        return;
    if (s->nsites == SIGNIN_SITES) {
        /* More sites than kept: every page of the context counts as
         * signed in from now on (fail closed, as after a takeover). */
        a->ctxs[0].person = true;
        size_t used = strlen(s->note);
        snprintf(s->note + used, sizeof s->note - used, "%sNote: more sites were signed in "
                 "in the agent's own browser context than cdpgate tells apart: every page "
                 "there now counts as signed in.", used ? "\n" : "");
        return;
    }
    snprintf(s->sites[s->nsites++], sizeof s->sites[0], "%s", origin);
    char *shown = snap_origin_shown_strict(a, origin);
    size_t used = strlen(s->note);
    snprintf(s->note + used, sizeof s->note - used, "%sNote: %s now counts as signed in in "
             "the agent's own browser context (%s there): its pages there are treated as "
             "signed in (auth=yes; state changes confirmed, consequential acts stopped "
             "unless the grant binds them) for the rest of the task. A sign-in there is not "
             "kept; use browser_login to keep one.", used ? "\n" : "",
             shown ? shown : "a site",
             why & WHY_LINK ? "a sign-in link was opened"
             : why & WHY_FORM ? "a sign-in was sent and the site set a cookie"
             : "a sign-in address was opened and the site set a cookie");
    free(shown);
}

/* The untrusted context takes marks: not the browser's own (every page of
 * it already counts as signed in), nor once a person held control there. */
static bool ctx0_open(const snap_agent *a)
{
    return a->nctxs && !a->ctx_shared && !a->ctxs[0].person;
}

void snap_signin_seen(snap_agent *a, const snap_tab *t, const json_val *p, bool document,
                      bool subresource, bool data)
{
    const json_val *req = json_get(p, "request");
    const char *url = json_get_str(req, "url");
    if (!t || t->ctx != 0 || !ctx0_open(a) || !url || (subresource && !data))
        return;
    char origin[URL_ORIGIN_MAX];
    if (url_origin(url, origin, sizeof origin, NULL))
        return;
    unsigned why = 0;
    bool cap = capability(url), path = signin_path(url);
    if (cap || path)
        why = cap && document ? WHY_LINK : WHY_PATH;
    if (data) {
        char fields[600];
        snap_body_fields(req, fields, sizeof fields);
        if (credential_fields(fields))
            why |= WHY_FORM;
    }
    if (!why)
        return;
    snap_signin *s = state(a);
    if (!s) {
        a->ctxs[0].person = true;   /* no memory to tell sites apart: all (fail closed) */
        return;
    }
    if (site_of(s, origin))
        return;
    if (document && cap && path) {
        mark(a, s, origin, WHY_LINK);
        return;
    }
    /* One wait a site: a later request (a redirect hop, a page that
     * polls) keeps the first one's cookies before and its start, and the
     * wait settles when the browser answered the latest. */
    const char *net = json_get_str(p, "networkId");
    for (size_t i = 0; i < s->nw; i++)
        if (strcmp(s->w[i].origin, origin) == 0) {
            s->w[i].why |= why;
            s->w[i].done = false;
            snprintf(s->w[i].net, sizeof s->w[i].net, "%s", net ? net : "");
            return;
        }
    if (s->nw == SIGNIN_WAITS && s->busy) {
        mark(a, s, origin, why);    /* no room, and the table is being read */
        return;
    }
    if (s->nw == SIGNIN_WAITS) {
        /* No room to wait: the oldest one's site counts (fail closed). */
        mark(a, s, s->w[0].origin, s->w[0].why);
        if (s->w[0].base)
            cdp_forget(a->c, s->w[0].base);
        free(s->w[0].fp);
        memmove(s->w, s->w + 1, (SIGNIN_WAITS - 1) * sizeof s->w[0]);
        s->nw--;
    }
    signin_wait *w = &s->w[s->nw++];
    memset(w, 0, sizeof *w);
    snprintf(w->origin, sizeof w->origin, "%s", origin);
    snprintf(w->net, sizeof w->net, "%s", net ? net : "");
    w->since = base_now_ms();
    w->why = why;
    /* The cookies before: sent now, before the request goes on (its
     * answer is read outside the listener). Not sent: unknown. */
    char params[SNAP_ID_MAX + 40];
    snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", a->ctxs[0].id);
    if (*a->ctxs[0].id &&
        snap_cdp_send_secret(a, NULL, "Storage.getCookies", params, &w->base, NULL))
        w->base = 0;
}

void snap_signin_net(snap_agent *a, const char *method, const json_val *p)
{
    snap_signin *s = a->signin;
    if (!s || !s->nw || (strcmp(method, "Network.responseReceived") != 0 &&
                         strcmp(method, "Network.loadingFailed") != 0))
        return;
    const char *id = json_get_str(p, "requestId");
    for (size_t i = 0; id && i < s->nw; i++)
        if (strcmp(s->w[i].net, id) == 0)
            s->w[i].done = true;
}

/* ---- the cookies before and after ---- */

/* The keyed hash of one cookie (name, domain, path, value). */
static uint64_t cookie_fp(const snap_signin *s, const json_val *k)
{
    static const char *const F[] = {"name", "domain", "path", "value"};
    vault_sha256_ctx in;
    uint8_t kb[64] = {0}, d[VAULT_SHA256_LEN];
    memcpy(kb, s->key, sizeof s->key);
    /* HMAC by hand over the fields, so no copy of the value is made */
    for (size_t i = 0; i < sizeof kb; i++)
        kb[i] ^= 0x36;
    vault_sha256_init(&in);
    vault_sha256_update(&in, kb, sizeof kb);
    for (size_t i = 0; i < 4; i++) {
        size_t n = 0;
        const char *v = json_str(json_get(k, F[i]), &n);
        vault_sha256_update(&in, v ? v : "", v ? n : 0);
        vault_sha256_update(&in, "", 1);
    }
    vault_sha256_final(&in, d);
    for (size_t i = 0; i < sizeof kb; i++)
        kb[i] ^= 0x36 ^ 0x5c;
    vault_sha256_init(&in);
    vault_sha256_update(&in, kb, sizeof kb);
    vault_sha256_update(&in, d, sizeof d);
    vault_sha256_final(&in, d);
    uint64_t h = 0;
    memcpy(&h, d, sizeof h);
    base_memzero(kb, sizeof kb);
    base_memzero(d, sizeof d);
    base_memzero(&in, sizeof in);
    return h;
}

/* Whether cookie k is one of origin's site (its domain, any subdomain). */
static bool cookie_of(const json_val *k, const char *origin)
{
    const char *dom = json_get_str(k, "domain");
    if (!dom || !*dom)
        return false;
    while (*dom == '.')
        dom++;
    char u[300];
    snprintf(u, sizeof u, "http://%s/", dom);
    return url_same_site(origin, u);
}

/* The hashes of origin's cookies in a reply's list (false: not a list, or
 * no memory). */
static bool fps_of(const snap_signin *s, const json_val *list, const char *origin,
                   uint64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!json_is(list, JSON_ARRAY))
        return false;
    size_t cap = 0;
    for (const json_val *k = json_first(list); k; k = json_next(k))
        if (cookie_of(k, origin)) {
            if (*n == cap) {
                size_t nc = cap ? cap * 2 : 8;
                uint64_t *g = realloc(*out, nc * sizeof *g);
                if (!g) {
                    free(*out);
                    *out = NULL;
                    *n = 0;
                    return false;
                }
                *out = g;
                cap = nc;
            }
            (*out)[(*n)++] = cookie_fp(s, k);
        }
    return true;
}

/* Read wait i's cookies before (its call's reply) into hashes. */
static void base_read(snap_agent *a, size_t i)
{
    uint64_t id = a->signin->w[i].base;
    cdp_reply rep = {0};
    int rc = id ? cdp_wait(a->c, id, a->o.timeout_ms, &rep, NULL) : -1;
    if (rc && id)
        cdp_forget(a->c, id);
    snap_signin *s = a->signin;     /* the listener may have run meanwhile */
    signin_wait *w = &s->w[i];
    w->base = 0;
    w->have_base = true;
    w->base_ok = rc == 0 && s->keyed &&
                 fps_of(s, json_get(rep.result, "cookies"), w->origin, &w->fp, &w->nfp);
    cdp_reply_free(&rep);           /* wipes the values */
}

/* A cookie of wait w's site now that was not there before, or unknown. */
static bool site_changed(const snap_signin *s, const signin_wait *w, const json_val *list)
{
    if (!w->base_ok || !s->keyed || !json_is(list, JSON_ARRAY))
        return true;
    for (const json_val *k = json_first(list); k; k = json_next(k)) {
        if (!cookie_of(k, w->origin))
            continue;
        uint64_t h = cookie_fp(s, k);
        bool old = false;
        for (size_t j = 0; j < w->nfp && !old; j++)
            old = w->fp[j] == h;
        if (!old)
            return true;
    }
    return false;
}

void snap_signin_sync(snap_agent *a)
{
    snap_signin *s = a->signin;
    if (!s || !s->nw || s->busy || !a->nctxs)
        return;
    s->busy = true;
    if (!ctx0_open(a)) {
        for (size_t i = 0; i < s->nw; i++) {
            if (s->w[i].base)
                cdp_forget(a->c, s->w[i].base);
            free(s->w[i].fp);
        }
        s->nw = 0;
        s->busy = false;
        return;
    }
    /* Settle only what was answered before the cookies are read: one
     * answered meanwhile waits for the next read. Nothing answered: no
     * read (this runs at every sync). */
    size_t n = s->nw, ndone = 0;
    bool done[SIGNIN_WAITS];
    int64_t now = base_now_ms();
    for (size_t i = 0; i < n; i++) {
        done[i] = s->w[i].done || now - s->w[i].since > SIGNIN_WAIT_MS;
        ndone += done[i];
    }
    if (!ndone) {
        s->busy = false;
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!a->signin->w[i].have_base)
            base_read(a, i);
    s = a->signin;
    char params[SNAP_ID_MAX + 40];
    snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", a->ctxs[0].id);
    cdp_reply cur = {0};
    int rc = *a->ctxs[0].id ? snap_cdp_call_secret(a, NULL, "Storage.getCookies", params,
                                                   a->o.timeout_ms, &cur, NULL) : -1;
    s = a->signin;
    const json_val *list = rc == 0 ? json_get(cur.result, "cookies") : NULL;
    bool drop[SIGNIN_WAITS] = {false};
    for (size_t i = 0; i < n; i++) {
        signin_wait *w = &s->w[i];
        if (!done[i])
            continue;
        if (site_of(s, w->origin) || !list || site_changed(s, w, list))
            mark(a, s, w->origin, w->why);
        else if (!w->done && now - w->since <= SIGNIN_WAIT_MS)
            continue;   /* a later request of the site left meanwhile */
        drop[i] = true;
    }
    cdp_reply_free(&cur);           /* wipes the values */
    size_t k = 0;
    for (size_t i = 0; i < s->nw; i++) {
        if (i < n && drop[i]) {
            free(s->w[i].fp);
            continue;
        }
        if (k != i)
            s->w[k] = s->w[i];
        k++;
    }
    s->nw = k;
    s->busy = false;
}

const char *snap_signin_site(const snap_agent *a, const char *url)
{
    return a->nctxs && !a->ctx_shared ? site_of(a->signin, url) : NULL;
}

const char *snap_signin_any(const snap_agent *a)
{
    return a->signin && a->signin->nsites ? a->signin->sites[0] : NULL;
}

void snap_signin_note(snap_agent *a, char *out, size_t cap)
{
    snap_signin *s = a->signin;
    if (!cap)
        return;
    size_t used = strlen(out);
    if (!s || !s->note[0] || used + 1 >= cap)
        return;
    snprintf(out + used, cap - used, "%s%s\n", used && out[used - 1] != '\n' ? "\n" : "",
             s->note);
    s->note[0] = 0;
}

void snap_signin_free(snap_agent *a)
{
    snap_signin *s = a->signin;
    if (!s)
        return;
    for (size_t i = 0; i < s->nw; i++) {
        if (s->w[i].base)
            cdp_forget(a->c, s->w[i].base);
        free(s->w[i].fp);
    }
    base_memzero(s->key, sizeof s->key);
    free(s);
    a->signin = NULL;
}
