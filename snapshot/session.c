/*
 * session.c — browser contexts, session restore from the vault and the
 * login handoff (see "browser contexts" in snapshot.h and docs/vault.md);
 * whether a context still holds its session (the login wall, its
 * credentials) is in session_check.c.
 *
 * Invariants
 *  - ctxs[0] is the untrusted context: no session is ever written into it.
 *    A privileged context is created for one origin and only that origin's
 *    host's cookies are ever set in it (filtered again at restore, so an
 *    imported blob cannot carry another site's cookies in).
 *  - Session values (cookie values, localStorage values) go only into CDP
 *    command parameters and the vault: never into a result text, a
 *    structured result or a message. Their keyed hashes are kept
 *    (snap_scrub_note, scrub.c) so that no URL shown later carries one.
 *    Nothing that held them is freed unwiped: our own buffers go through
 *    wipe_free (base_memzero), JSON built from them through secret
 *    writers (json_w_init_secret), the
 *    vault's plaintext is parsed with JSON_SECRET, and the CDP calls that
 *    carry them are secret calls (cdp_call_secret), which zero the
 *    connection's and the transport's copies and the reply documents.
 *  - The login check scripts are fixed strings that read booleans, the
 *    location's path and localStorage keys, never a field value.
 *  - Authentication is never downgraded by a guess (docs/gate.md,
 *    "Authenticated"): a context that holds a restored or captured session
 *    (creds) authenticates its tabs on its origin until the service drops
 *    the session's credentials: none of the session's cookie names is left
 *    in the context and none of its localStorage keys on the origin
 *    (compared by name; values are never read for this but in a secret
 *    call). What looks like a rejection (a redirect of a non-login URL to a
 *    login page, HTTP 401/403 on the document) is only a note.
 *
 * Implementation notes
 *  - localStorage is per origin and can only be written from a document of
 *    that origin. Before a restored context's first real navigation its new
 *    tab is sent to the origin's root with Fetch interception on, and the
 *    request is answered by us (Fetch.fulfillRequest) with an empty page:
 *    nothing reaches the site and no page script runs. localStorage is set
 *    there with Runtime.evaluate, interception is switched off, and the
 *    real navigation follows (its history entry replaces the blank one via
 *    Page.resetNavigationHistory). DOMStorage.setDOMStorageItem would need a
 *    frame of the origin as well, and a script added with
 *    Page.addScriptToEvaluateOnNewDocument would run on every later document
 *    too and race the site's own scripts.
 */
#include "snapshot/session_int.h"
#include "snapshot/page_js.h"
#include "url/url.h"
#include "vault/vault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define STATE_MAX SNAP_STATE_MAX

void snap_session_copyid(char dst[SNAP_ID_MAX], const char *s)
{
    snprintf(dst, SNAP_ID_MAX, "%s", s ? s : "");
}

/* Free a buffer that held session values. */
static void wipe_free(char *p)
{
    if (p) {
        base_memzero(p, strlen(p));
        free(p);
    }
}

/* ---- names of a session's credentials (not secret: never values) ---- */

#define NAMES_MAX (64u << 10)   /* bytes of cookie names or localStorage keys kept */

/* Whether list ("\nname\n...", NULL = empty) holds name. */
bool snap_session_names_has(const char *list, const char *name)
{
    size_t k = name ? strlen(name) : 0;
    if (!list || !k)
        return false;
    for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
        if (p > list && p[-1] == '\n' && p[k] == '\n')
            return true;
    return false;
}

/* Add name to *list; false when it cannot be kept (then the session can
 * never be judged dropped: fail closed). */
static bool names_add(char **list, const char *name)
{
    if (!name || !*name || strchr(name, '\n'))
        return false;       /* an empty name cannot be looked for */
    if (snap_session_names_has(*list, name))
        return true;
    size_t n = *list ? strlen(*list) : 1, k = strlen(name);
    if (n + k + 2 > NAMES_MAX)
        return false;
    char *nl = realloc(*list, n + k + 2);
    if (!nl)
        return false;
    if (!*list)
        nl[0] = '\n';
    memcpy(nl + n, name, k);
    nl[n + k] = '\n';
    nl[n + k + 1] = 0;
    *list = nl;
    return true;
}

/* ---- origins ---- */

int snap_url_origin(const char *url, char *out, size_t cap)
{
    url_parts u;
    if (url_parse(url, &u, NULL) != 0 ||
        (u.scheme != URL_SCHEME_HTTP && u.scheme != URL_SCHEME_HTTPS))
        return -1;
    return url_parts_origin(&u, out, cap) == 0 ? 0 : -1;
}

/* The host of an origin "scheme://host[:port]" (brackets kept). */
void snap_session_origin_host(const char *origin, char *out, size_t cap)
{
    const char *h = strstr(origin, "://");
    h = h ? h + 3 : origin;
    size_t n = h[0] == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":");
    if (n > strlen(h))
        n = strlen(h);
    snprintf(out, cap, "%.*s", (int)n, h);
}

/* Whether a cookie of domain (leading dot allowed) belongs to the service
 * at host: the host's own cookies, its parent domain's, its subdomains'. */
bool snap_session_cookie_for_host(const char *domain, const char *host)
{
    if (!domain)
        return false;
    if (*domain == '.')
        domain++;
    size_t d = strlen(domain), h = strlen(host);
    if (!d || !h)
        return false;
    if (strcasecmp(domain, host) == 0)
        return true;
    if (h > d && host[h - d - 1] == '.' && strcasecmp(host + h - d, domain) == 0 &&
        strchr(domain, '.'))
        return true;
    return d > h && domain[d - h - 1] == '.' && strcasecmp(domain + d - h, host) == 0;
}

/* ---- contexts ---- */

static snap_ctx *ctx_add(snap_agent *a)
{
    snap_ctx *nc = base_grow(a->ctxs, a->nctxs + 1, &a->capctxs, sizeof *nc, 4);
    if (!nc)
        return NULL;
    a->ctxs = nc;
    snap_ctx *c = &a->ctxs[a->nctxs++];
    memset(c, 0, sizeof *c);
    return c;
}

/* Target.createBrowserContext; id "" and CDP_EPROTOCOL when refused.
 * privileged: the context's egress rule (sink.c) goes with it. */
static int create_context(snap_agent *a, char id[SNAP_ID_MAX], bool privileged, cdp_err *e)
{
    cdp_reply rep;
    char *params = privileged ? snap_sink_context_params(a) : NULL;
    if (privileged && !params) {
        id[0] = 0;
        snprintf(e->msg, sizeof e->msg, "out of memory");
        return CDP_ENOMEM;
    }
    int rc = snap_cdp_call(a, NULL, "Target.createBrowserContext",
                           params ? params : "{\"disposeOnDetach\":true}", a->o.timeout_ms,
                           &rep, e);
    free(params);
    id[0] = 0;
    if (rc)
        return rc;
    snap_session_copyid(id, json_get_str(rep.result, "browserContextId"));
    cdp_reply_free(&rep);
    if (!*id)
        return CDP_EPROTOCOL;
    snap_dl_context(a, id);      /* downloads: into a file scope, or denied */
    return 0;
}

int snap_ctx_untrusted(snap_agent *a, snap_result *r)
{
    if (a->nctxs)
        return 0;
    char id[SNAP_ID_MAX];
    cdp_err e = {0};
    int rc = create_context(a, id, false, &e);
    if (rc && rc != CDP_EPROTOCOL)
        return snap_fail(r, SNAP_EBROWSER, "cannot create a browser context: %s", e.msg);
    snap_ctx *c = ctx_add(a);
    if (!c)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    c->state = SNAP_CTX_UNTRUSTED;
    snap_session_copyid(c->id, id);
    c->created = rc == 0;
    a->ctx_shared = rc != 0;
    if (a->ctx_shared)
        snap_dl_context(a, NULL);   /* the default context's downloads */
    return 0;
}

static snap_ctx *ctx_for_origin(snap_agent *a, const char *origin, size_t *idx)
{
    for (size_t i = a->nctxs; i-- > 1;) {
        snap_ctx *c = &a->ctxs[i];
        if (c->state != SNAP_CTX_STALE && strcmp(c->origin, origin) == 0) {
            *idx = i;
            return c;
        }
    }
    return NULL;
}

/* Storage.setCookies for the service's cookies of a state document, into
 * context id. *n gets how many were set. */
static int set_cookies(snap_agent *a, const char *ctx_id, const char *host,
                       const json_val *cookies, size_t *n, cdp_err *e)
{
    static const char *const KEEP[] = {"name", "value", "domain", "path", "expires",
                                       "httpOnly", "secure", "sameSite", "partitionKey",
                                       "priority", "sourceScheme", "sourcePort", NULL};
    json_w w;
    json_w_init_secret(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "cookies");
    json_w_arr_begin(&w);
    *n = 0;
    for (const json_val *ck = json_first(cookies); ck; ck = json_next(ck)) {
        if (!json_get_str(ck, "name") || !json_get_str(ck, "value") ||
            !snap_session_cookie_for_host(json_get_str(ck, "domain"), host))
            continue;
        json_w_obj_begin(&w);
        /* A domain member always makes a domain cookie: a host-only one
         * (no leading dot) goes by URL, or it would widen to subdomains. */
        const char *dom = json_get_str(ck, "domain");
        bool host_only = dom[0] != '.';
        if (host_only) {
            const char *path = json_get_str(ck, "path");
            size_t ul = strlen(dom) + (path ? strlen(path) : 0) + 16;
            char *u = malloc(ul);
            if (u) {
                snprintf(u, ul, "%s://%s%s", json_bool(json_get(ck, "secure")) ? "https"
                         : "http", dom, path && path[0] == '/' ? path : "/");
                json_w_key(&w, "url");
                json_w_str(&w, u);
                free(u);
            }
        }
        for (const char *const *k = KEEP; *k; k++) {
            const json_val *v = json_get(ck, *k);
            if (!v || json_is(v, JSON_NULL) || (host_only && strcmp(*k, "domain") == 0))
                continue;
            if (strcmp(*k, "expires") == 0 && (!json_is(v, JSON_NUMBER) || json_num(v) <= 0))
                continue;       /* a session cookie */
            if (strcmp(*k, "partitionKey") == 0 && !json_is(v, JSON_OBJECT))
                continue;       /* the older string form is not accepted any more */
            json_w_key(&w, *k);
            json_w_val(&w, v);
        }
        json_w_obj_end(&w);
        (*n)++;
    }
    json_w_arr_end(&w);
    if (*ctx_id) {
        json_w_key(&w, "browserContextId");
        json_w_str(&w, ctx_id);
    }
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    if (!params)
        return CDP_ENOMEM;
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "restore", saved);
    int rc = *n ? snap_cdp_call_secret(a, NULL, "Storage.setCookies", params,
                                       a->o.timeout_ms, NULL, e) : 0;
    snap_permit_begin(a, saved);
    wipe_free(params);
    return rc;
}

/* Remember the keyed hashes of the session's values (scrub.c), so no URL
 * shown later carries one: the cookies of host, the localStorage items
 * ([key, value] pairs). */
static void session_values_note(snap_agent *a, const json_val *cookies, const char *host,
                                const json_val *ls)
{
    for (const json_val *ck = json_first(cookies); ck; ck = json_next(ck)) {
        size_t n = 0;
        const char *v = json_str(json_get(ck, "value"), &n);
        if (v && (!host || snap_session_cookie_for_host(json_get_str(ck, "domain"), host)))
            snap_scrub_note(a, v, n);
    }
    for (const json_val *kv = json_first(ls); kv; kv = json_next(kv)) {
        size_t n = 0;
        const char *v = json_str(json_next(json_first(kv)), &n);
        if (v)
            snap_scrub_note(a, v, n);
    }
}

/* A new privileged context for origin holding the session of root (a
 * session state v1 document): the cookies of the origin's host set, the
 * origin's localStorage pending for the first open (ctx_prime), and the
 * names of both kept (the session is dropped when all are gone,
 * snap_ctx_check). rule: created with the grant's network rule (sink.c).
 * 0 with *idx set; else a snap_fail code, with *idx set (and the context
 * STALE) when the context was created, 0 when not. */
static int ctx_from_state(snap_agent *a, const char *origin, const json_val *root,
                          bool rule, size_t *idx, snap_result *r)
{
    *idx = 0;
    char id[SNAP_ID_MAX];
    cdp_err e = {0};
    int rc = create_context(a, id, rule, &e);
    if (rc)
        return snap_fail(r, SNAP_EBROWSER, "cannot create a browser context for %s: %s",
                         origin, e.msg);
    snap_ctx *c = ctx_add(a);
    if (!c)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    *idx = (size_t)(c - a->ctxs);
    snap_session_copyid(c->id, id);
    c->created = true;
    c->state = SNAP_CTX_AUTH;
    c->creds = true;        /* from here on: even a failed restore may have set some */
    snprintf(c->origin, sizeof c->origin, "%s", origin);
    char host[200];
    snap_session_origin_host(origin, host, sizeof host);
    size_t nck = 0;
    rc = set_cookies(a, id, host, json_get(root, "cookies"), &nck, &e);
    const json_val *ls = json_get(json_get(root, "localStorage"), origin);
    /* The names of what was restored: the session is dropped when all are
     * gone (snap_ctx_check). */
    c = &a->ctxs[*idx];
    for (const json_val *ck = json_first(json_get(root, "cookies")); ck; ck = json_next(ck))
        if (json_get_str(ck, "name") && json_get_str(ck, "value") &&
            snap_session_cookie_for_host(json_get_str(ck, "domain"), host) &&
            !names_add(&c->ck_names, json_get_str(ck, "name")))
            c->names_lost = true;
    for (const json_val *kv = json_first(ls); kv; kv = json_next(kv))
        if (!names_add(&c->ls_keys, json_str(json_first(kv), NULL)))
            c->names_lost = true;
    session_values_note(a, json_get(root, "cookies"), host, ls);
    if (rc == 0 && json_is(ls, JSON_ARRAY) && json_len(ls)) {
        json_w lw;
        json_w_init_secret(&lw);
        json_w_val(&lw, ls);
        c->pending_ls = json_w_take(&lw, NULL);
    }
    if (rc) {
        c->state = SNAP_CTX_STALE;
        return snap_fail(r, SNAP_EBROWSER, "cannot restore the cookies of %s: %s", origin,
                         e.msg);
    }
    return 0;
}

/* Restore the vault's session for origin into a new privileged context.
 * 0 with *idx set; else note/note_code say why and the untrusted context
 * is used. */
static int restore(snap_agent *a, const char *origin, size_t *idx, char *note, size_t cap,
                   int *note_code, snap_result *r)
{
    uint8_t *blob = NULL;
    size_t len = 0;
    vault_meta meta;
    memset(&meta, 0, sizeof meta);
    char verr[400] = "";
    int vr = vault_get(a->o.vault, origin, &blob, &len, &meta, verr, sizeof verr);
    if (vr == VAULT_ENOENT)
        return 1;
    if (vr == VAULT_EEXPIRED) {
        snprintf(note, cap, "The stored session for %s has expired, so it was not restored: "
                 "this page was opened without it (auth=no). Ask the user to log in again: "
                 "cdpgate login %s", origin, origin);
        *note_code = SNAP_ELOGIN;
        return 1;
    }
    if (vr) {
        snprintf(note, cap, "The stored session for %s cannot be used (%s), so nothing was "
                 "restored and this page was opened without it (auth=no). Ask the user to "
                 "log in again: cdpgate login %s", origin, verr, origin);
        *note_code = SNAP_ELOGIN;
        return 1;
    }
    int64_t captured = meta.captured;
    /* The grant says which identity serves this service; nothing else is
     * restored (no grant: no stored session at all). */
    const char *want = gate_identity_for(a->gate, origin);
    if (!want || strcmp(want, meta.identity ? meta.identity : "") != 0) {
        if (!want)
            snprintf(note, cap, "A stored session exists for %s, but the task grant names no "
                     "identity for it, so it was not restored: the page was opened without "
                     "it (auth=no).", origin);
        else
            snprintf(note, cap, "The stored session for %s is for identity \"%.200s\", but "
                     "the task grant names \"%.200s\": not restored (auth=no).", origin,
                     meta.identity ? meta.identity : "", want);
        vault_meta_free(&meta);
        vault_free_blob(blob, len);
        return 1;
    }
    /* One task at a time per identity: the lease lasts as long as the
     * context (or the process). */
    const gate_grant *gg = gate_grant_get(a->gate);
    char holder[200], lerr[400];
    snprintf(holder, sizeof holder, "task %.100s (pid %ld)", gg && gg->task ? gg->task : "-",
             (long)getpid());
    int lease = -1;
    /* This task may hold the lease already, in an older context of the
     * service (one the site signed out, or a newer login replaced; its old
     * session stays there): the new context takes it over, as a second
     * acquire in this process would conflict with it. */
    size_t from = 0;
    for (size_t k = 1; k < a->nctxs && !from; k++)
        if (a->ctxs[k].lease && strcmp(a->ctxs[k].origin, origin) == 0)
            from = k;
    if (from) {
        lease = a->ctxs[from].lease - 1;
    } else if (vault_identity_acquire(a->o.vault, origin, want, holder, &lease, lerr,
                                      sizeof lerr) != VAULT_OK) {
        snprintf(note, cap, "The stored session for %s was not restored: %s. The page was "
                 "opened without it (auth=no); try again when that task is done.", origin,
                 lerr);
        vault_meta_free(&meta);
        vault_free_blob(blob, len);
        *note_code = SNAP_ELOGIN;
        return 1;
    }
    vault_meta_free(&meta);
    if (a->ctx_shared) {
        vault_free_blob(blob, len);
        snprintf(note, cap, "The stored session for %s was not restored: this browser "
                 "refused a separate browser context, and a session must never share the "
                 "open web's context. The page was opened without it (auth=no).", origin);
        *note_code = SNAP_ELOGIN;
        if (!from)
            vault_identity_release(lease);
        return 1;
    }
    json_opts po = {0};
    po.max_size = STATE_MAX;
    po.max_depth = 16;
    po.flags = JSON_SECRET;
    json_doc *d = len <= STATE_MAX ? json_parse((const char *)blob, len, &po, NULL) : NULL;
    vault_free_blob(blob, len);
    const json_val *root = json_doc_root(d);
    if (!d || !json_is(root, JSON_OBJECT) || json_get_int(root, "version", 0) != 1) {
        json_doc_free(d);
        snprintf(note, cap, "The stored session for %s is not in a format this build reads "
                 "(session state v1), so nothing was restored (auth=no). Log in again: "
                 "cdpgate login %s", origin, origin);
        *note_code = SNAP_ELOGIN;
        if (!from)
            vault_identity_release(lease);
        return 1;
    }
    size_t ci = 0;
    int rc = ctx_from_state(a, origin, root, true, &ci, r);
    json_doc_free(d);
    if (!ci) {
        if (!from)
            vault_identity_release(lease);
        return rc;
    }
    /* The new context holds the lease from here on, even a failed one. */
    *idx = ci;
    snap_ctx *c = &a->ctxs[ci];
    c->lease = lease + 1;
    if (from)
        a->ctxs[from].lease = 0;
    c->check = true;
    c->captured = captured;
    return rc;
}

int snap_ctx_pick(snap_agent *a, const char *url, size_t *idx, char *note, size_t cap,
                  int *note_code, snap_result *r)
{
    *idx = 0;
    note[0] = 0;
    *note_code = 0;
    int rc = snap_ctx_untrusted(a, r);
    if (rc)
        return rc;
    char origin[256];
    if (!a->o.vault || snap_url_origin(url, origin, sizeof origin))
        return 0;
    size_t i;
    snap_ctx *c = ctx_for_origin(a, origin, &i);
    if (c && (c->state == SNAP_CTX_AUTH || c->state == SNAP_CTX_LOGIN)) {
        *idx = i;
        return 0;
    }
    int64_t rejected_at = c ? c->captured : -1;
    if (c) {
        /* The site ended the session (its credentials are gone from the
         * context): try the vault again only if it holds a newer one. */
        vault_meta *list = NULL;
        size_t n = 0;
        int64_t newest = -1;
        if (vault_list(a->o.vault, &list, &n, NULL, 0) == 0)
            for (size_t k = 0; k < n; k++)
                if (strcmp(list[k].origin, origin) == 0)
                    newest = list[k].captured;
        vault_list_free(list, n);
        if (newest <= rejected_at) {
            snprintf(note, cap, "The stored session for %s was ended by the site (it "
                     "cleared the session's cookies), so this page was opened without it "
                     "(auth=no). Ask the user to log in again: cdpgate login %s", origin,
                     origin);
            *note_code = SNAP_ELOGIN;
            return 0;
        }
        c->state = SNAP_CTX_STALE;
    }
    rc = restore(a, origin, idx, note, cap, note_code, r);
    if (rc < 0)
        return rc;
    if (rc > 0)
        *idx = 0;
    return 0;
}

static bool is_paused(void *ud, const json_val *p)
{
    (void)ud;
    return json_get_str(p, "requestId") != NULL;
}

static int ctx_prime(snap_agent *a, int tab_id, snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->ctx >= a->nctxs || !a->ctxs[t->ctx].pending_ls)
        return 0;
    char *ls = a->ctxs[t->ctx].pending_ls;
    a->ctxs[t->ctx].pending_ls = NULL;
    char origin[256], session[SNAP_ID_MAX], frame[SNAP_ID_MAX];
    snprintf(origin, sizeof origin, "%s", a->ctxs[t->ctx].origin);
    snap_session_copyid(session, t->session);
    snap_session_copyid(frame, t->nframes ? t->frames[0].id : "");
    cdp_err e = {0};
    cdp_reply rep = {0};
    int rc = snap_cdp_call(a, session, "Fetch.enable",
                      "{\"patterns\":[{\"urlPattern\":\"*\",\"requestStage\":\"Request\"}]}",
                      a->o.timeout_ms, NULL, &e);
    char params[400];
    uint64_t since = cdp_event_seq(a->c);
    uint64_t nav_id = 0;
    /* Page.navigate answers once the request is answered: send it, serve
     * the paused request, then collect the reply. */
    if (!rc) {
        snprintf(params, sizeof params, "{\"url\":\"%s/\"}", origin);
        rc = snap_cdp_send(a, session, "Page.navigate", params, &nav_id, &e);
    }
    if (!rc)
        rc = cdp_wait_event(a->c, since, session, "Fetch.requestPaused", is_paused, NULL,
                            a->o.timeout_ms, &rep, NULL, &e);
    if (!rc) {
        static const char BODY[] = "<!doctype html><title></title>";
        char b64[BASE_B64_ENCLEN(sizeof BODY) + 1];
        base_b64_encode((const uint8_t *)BODY, sizeof BODY - 1, b64);
        json_w w;
        json_w_init(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, "requestId");
        json_w_str(&w, json_get_str(rep.result, "requestId"));
        json_w_key(&w, "responseCode");
        json_w_int(&w, 200);
        json_w_key(&w, "responseHeaders");
        static const char HDRS[] = "[{\"name\":\"Content-Type\",\"value\":\"text/html\"}]";
        json_w_raw(&w, HDRS, sizeof HDRS - 1, true);
        json_w_key(&w, "body");
        json_w_str(&w, b64);
        json_w_obj_end(&w);
        char *fp = json_w_take(&w, NULL);
        rc = fp ? snap_cdp_call(a, session, "Fetch.fulfillRequest", fp, a->o.timeout_ms, NULL,
                           &e) : CDP_ENOMEM;
        free(fp);
    }
    cdp_reply_free(&rep);
    if (nav_id) {
        int rc2 = cdp_wait(a->c, nav_id, a->o.timeout_ms, &rep, rc ? NULL : &e);
        const char *etext = json_get_str(rep.result, "errorText");
        if (!rc && !rc2 && etext && *etext) {
            rc = CDP_ENAVIGATE;
            snprintf(e.msg, sizeof e.msg, "%s", etext);
        }
        else if (!rc)
            rc = rc2;
        cdp_reply_free(&rep);
    }
    if (!rc) {
        snap_load_match m = {frame};
        rc = cdp_wait_event(a->c, since, session, "Page.lifecycleEvent", snap_is_load, &m,
                            a->o.timeout_ms, &rep, NULL, &e);
        cdp_reply_free(&rep);
    }
    snap_cdp_call(a, session, "Fetch.disable", NULL, a->o.timeout_ms, NULL, NULL);
    /* Other requests the page session paused meanwhile (their Cookie
     * headers are the restored session's) are not left in the event ring
     * until it evicts them: zeroed and dropped now. */
    cdp_events_discard(a->c, session, "Fetch.");
    if (!rc) {
        /* The values travel in the command only; the reply is a count. */
        json_w w;
        json_w_init_secret(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, "expression");
        size_t n = strlen(ls) + 200;
        char *expr = malloc(n);
        if (expr) {
            snprintf(expr, n, "%s%s%s", snap_js_ls_set_prefix, ls, snap_js_ls_set_suffix);
            json_w_str(&w, expr);
            wipe_free(expr);
        } else {
            json_w_null(&w);
        }
        json_w_key(&w, "returnByValue");
        json_w_bool(&w, true);
        json_w_obj_end(&w);
        char *ep = json_w_take(&w, NULL);
        rc = ep ? snap_cdp_call_secret(a, session, "Runtime.evaluate", ep, a->o.timeout_ms,
                                       &rep, &e) : CDP_ENOMEM;
        if (!rc && json_get(rep.result, "exceptionDetails"))
            rc = CDP_EEVAL;
        cdp_reply_free(&rep);
        wipe_free(ep);
    }
    wipe_free(ls);
    if (rc)
        return snap_fail(r, SNAP_EBROWSER, "cannot restore the localStorage of %s (%s)",
                         origin, rc == CDP_EEVAL ? "the page refused it"
                                : e.msg[0] ? e.msg : cdp_strerror(rc));
    return 0;
}

/* Restoring a granted session is the agent's own housekeeping: it runs
 * under the restore permit, whatever action asked for the page. */
int snap_ctx_prime(snap_agent *a, int tab_id, snap_result *r)
{
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "restore", saved);
    int rc = ctx_prime(a, tab_id, r);
    snap_permit_begin(a, saved);
    return rc;
}

int snap_session_restore(snap_agent *a, const char *origin, snap_result *r)
{
    char url[300], norm[256], note[900];
    if (!origin || snprintf(url, sizeof url, "%s/", origin) >= (int)sizeof url ||
        snap_url_origin(url, norm, sizeof norm) != 0 || strcmp(norm, origin) != 0)
        return snap_fail(r, SNAP_EINVAL, "not an origin: \"%.200s\"", origin ? origin : "");
    if (!a->o.vault)
        return snap_fail(r, SNAP_ELOGIN, "no session vault is open, so no session of %s can "
                         "be restored", origin);
    size_t idx = 0;
    int code = 0;
    int rc = snap_ctx_pick(a, url, &idx, note, sizeof note, &code, r);
    if (rc)
        return rc;
    if (!idx)
        return snap_fail(r, SNAP_ELOGIN, "%s", note[0] ? note : "the vault holds no session "
                         "for this origin under the grant's identity");
    return 0;
}

void snap_session_forget(snap_agent *a, const char *origin)
{
    for (size_t i = 1; i < a->nctxs; i++)
        if (strcmp(a->ctxs[i].origin, origin) == 0 && a->ctxs[i].state != SNAP_CTX_LOGIN)
            a->ctxs[i].state = SNAP_CTX_STALE;
}

void snap_ctx_free_all(snap_agent *a)
{
    for (size_t i = 0; i < a->nctxs; i++) {
        snap_ctx *c = &a->ctxs[i];
        wipe_free(c->pending_ls);
        free(c->ck_names);
        free(c->ls_keys);
        if (c->lease)
            vault_identity_release(c->lease - 1);
        if (c->created && *c->id && !cdp_conn_dead(a->c)) {
            char params[SNAP_ID_MAX + 40];
            snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", c->id);
            snap_cdp_call(a, NULL, "Target.disposeBrowserContext", params, 3000, NULL, NULL);
        }
    }
    free(a->ctxs);
    a->ctxs = NULL;
    a->nctxs = a->capctxs = 0;
}

/* ---- the login handoff ---- */

void snap_agent_set_vault(snap_agent *a, struct vault *v)
{
    a->o.vault = v;
}

bool snap_login_active(const snap_agent *a)
{
    return a->login.active;
}

bool snap_login_saved(const snap_agent *a)
{
    return a->login.saved;
}

const char *snap_login_origin(const snap_agent *a)
{
    return a->login.active && a->login.ctx < a->nctxs ? a->ctxs[a->login.ctx].origin : "";
}

static void login_cancel_run(snap_agent *a)
{
    if (!a->login.active)
        return;
    a->login.active = false;
    if (a->login.ctx < a->nctxs)
        a->ctxs[a->login.ctx].state = SNAP_CTX_STALE;
}

void snap_login_cancel(snap_agent *a)
{
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "login", saved);
    login_cancel_run(a);
    snap_permit_begin(a, saved);
}

static int login_begin_run(snap_agent *a, const char *url, snap_result *r)
{
    memset(r, 0, sizeof *r);
    if (a->login.active)
        return snap_fail(r, SNAP_EBLOCKED, "a login at %s is already waiting for the human",
                         snap_login_origin(a));
    if (!a->o.vault)
        return snap_fail(r, SNAP_EINVAL, "login needs the session vault");
    char origin[256];
    if (!url || snap_url_origin(url, origin, sizeof origin))
        return snap_fail(r, SNAP_EINVAL, "login needs an http or https URL");
    int rc = snap_ctx_untrusted(a, r);
    if (rc)
        return rc;
    if (a->ctx_shared)
        return snap_fail(r, SNAP_EBROWSER, "this browser refused a separate browser context, "
                         "so a login cannot be kept apart from the open web here");
    char id[SNAP_ID_MAX];
    cdp_err e = {0};
    if ((rc = create_context(a, id, false, &e)))
        return snap_fail(r, SNAP_EBROWSER, "cannot create a browser context: %s", e.msg);
    snap_session_forget(a, origin);
    snap_ctx *c = ctx_add(a);
    if (!c)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    size_t ci = (size_t)(c - a->ctxs);
    snap_session_copyid(c->id, id);
    c->created = true;
    c->state = SNAP_CTX_LOGIN;
    c->creds = true;        /* the human may log in here whatever follows */
    snprintf(c->origin, sizeof c->origin, "%s", origin);
    rc = snap_open_in(a, url, ci, true, r);
    snap_tab *t = snap_tab_current(a);
    if (rc && rc != SNAP_EDIALOG) {
        a->ctxs[ci].state = SNAP_CTX_STALE;
        return rc;
    }
    snap_result_free(r);
    a->login.active = true;
    a->login.ctx = ci;
    a->login.tab = t ? t->id : 0;
    a->login.takeover = false;
    a->login.from_tab = 0;
    a->login.ncookies = a->login.nls = 0;
    a->login.saved = false;
    if (t)
        snap_obs_issue(a, t, r->obs);
    snap_fail(r, SNAP_OK, "Log in to %s (only there). Login handoff: the login page of %s "
              "is open in its own browser context (tab t%d); a session is saved only when "
              "the page ends on %s. The human logs in there; the agent is blocked until the "
              "login finishes. Credentials never pass through the agent.", origin, origin,
              a->login.tab, origin);
    return 0;
}

int snap_session_login_start(snap_agent *a, const char *url, snap_result *r)
{
    return login_begin_run(a, url, r);
}

/* Issue 11, point 15b: a login saved under "default" (the grant names no
 * identity for the origin, or names "default") never replaces a session
 * the vault holds for the origin under a named identity: the vault keeps
 * one session per origin. 0, or the refusal in r (fail closed: a vault
 * that cannot be listed refuses too). when: "started" or "saved". */
int snap_session_keeps_named(snap_agent *a, const char *origin, const char *when,
                             snap_result *r)
{
    const char *ident = gate_identity_for(a->gate, origin);
    if (!a->o.vault || (ident && strcmp(ident, "default") != 0))
        return 0;
    vault_meta *list = NULL;
    size_t n = 0;
    char verr[300] = "";
    if (vault_list(a->o.vault, &list, &n, verr, sizeof verr))
        return snap_fail(r, SNAP_EDENIED, "cannot read the vault's sessions (%s), so the login "
                         "at %s was not %s", verr, origin, when);
    const char *named = NULL;
    for (size_t k = 0; k < n && !named; k++)
        if (strcmp(list[k].origin, origin) == 0 && *list[k].identity &&
            strcmp(list[k].identity, "default") != 0)
            named = list[k].identity;
    int rc = 0;
    if (named)
        rc = snap_fail(r, SNAP_EDENIED, "The vault holds the session of %s for the identity "
                       "\"%.200s\", and this login names no identity for it (it would be saved "
                       "under \"default\" and replace that session), so the login was not %s. "
                       "To log in as \"%.200s\", the task grant names that identity for %s "
                       "(\"identities\"); to replace the session, the user removes it first: "
                       "cdpgate vault rm %s", origin, named, when, named, origin, origin);
    vault_list_free(list, n);
    return rc;
}

/* Red team s11, L4: the model picks the login URL, so a login is only
 * started on an origin the grant names an identity for, or one whose
 * session the vault already holds: never on user content of any granted
 * origin dressed as a bank's sign-in (the human would type the bank's
 * password into it). `cdpgate login URL` (o.login_any_origin) takes the
 * URL the human typed. 0, or the refusal in r (fail closed: a vault that
 * cannot be listed refuses). */
static int login_origin_named(snap_agent *a, const char *origin, snap_result *r)
{
    if (a->o.login_any_origin || !a->o.vault || gate_identity_for(a->gate, origin))
        return 0;       /* no vault: login_begin_run refuses */
    vault_meta *list = NULL;
    size_t n = 0;
    char verr[300] = "";
    if (vault_list(a->o.vault, &list, &n, verr, sizeof verr))
        return snap_fail(r, SNAP_EDENIED, "cannot read the vault's sessions (%s), so the login "
                         "at %s was not started", verr, origin);
    bool held = false;
    for (size_t k = 0; k < n && !held; k++)
        held = strcmp(list[k].origin, origin) == 0;
    vault_list_free(list, n);
    if (held)
        return 0;
    char names[700] = "";
    size_t off = 0;
    const gate_grant *g = gate_grant_get(a->gate);
    for (size_t i = 0; g && i < g->nidentities && off + 4 < sizeof names; i++) {
        int w = snprintf(names + off, sizeof names - off, "%s%s", off ? ", " : "",
                         g->identities[i].service);
        off = w < 0 ? sizeof names : off + (size_t)w;
    }
    return snap_fail(r, SNAP_EDENIED, "The login was not started: %s is not an origin the "
                     "task grant names an identity for, and the vault holds no session of "
                     "it, so no login page of it is shown to the human. Logins are only for %s%s"
                     "origins whose session the vault already holds. To log in to %s, the "
                     "grant names an identity for it (\"identities\"), or the user runs "
                     "cdpgate login URL.", origin, *names ? names : "",
                     *names ? ", or " : "", origin);
}

int snap_login_begin(snap_agent *a, const char *url, snap_result *r)
{
    memset(r, 0, sizeof *r);
    /* Refused before the gate asks the human anything. */
    char origin[256];
    if (url && snap_url_origin(url, origin, sizeof origin) == 0) {
        int krc = login_origin_named(a, origin, r);
        if (!krc)
            krc = snap_session_keeps_named(a, origin, "started", r);
        if (krc)
            return krc;
    }
    snap_gated gg;
    snap_gate_in gi = {.tool = "login", .open_url = url};
    int rc = snap_gate_ask(a, &gi, &gg, r);
    if (rc)
        return rc;
    rc = login_begin_run(a, url, r);
    snap_gate_done(a, &gg, rc, NULL);
    return rc;
}

/* Read the service's cookies and the origin's localStorage of the login's
 * context into a session state v1 document (new; wipe_free). */
int snap_session_capture(snap_agent *a, const snap_ctx *c, int tab_id, char **out,
                         size_t *ncookies, size_t *nls, int64_t *expiry, cdp_err *e)
{
    *out = NULL;
    *ncookies = *nls = 0;
    *expiry = 0;
    char params[SNAP_ID_MAX + 40];
    snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", c->id);
    cdp_reply ck = {0}, ls = {0};
    int rc = snap_cdp_call_secret(a, NULL, "Storage.getCookies", params, a->o.timeout_ms,
                                  &ck, e);
    if (rc)
        return rc;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (t && !t->closed && t->nframes && strcmp(t->frames[0].origin, c->origin) == 0) {
        char session[SNAP_ID_MAX];
        snap_session_copyid(session, t->session);
        char get[SNAP_JS_LS_GET_CAP];
        snprintf(get, sizeof get, "{\"expression\":\"%s\",\"returnByValue\":true}",
                 snap_js_ls_get);
        rc = snap_cdp_call_secret(a, session, "Runtime.evaluate", get, a->o.timeout_ms, &ls,
                                  e);
        if (rc) {
            cdp_reply_free(&ck);
            return rc;
        }
    }
    char host[200];
    snap_session_origin_host(c->origin, host, sizeof host);
    bool all_persistent = true;
    int64_t latest = 0;
    json_w w;
    json_w_init_secret(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "version");
    json_w_int(&w, 1);
    json_w_key(&w, "cookies");
    json_w_arr_begin(&w);
    for (const json_val *k = json_first(json_get(ck.result, "cookies")); k; k = json_next(k)) {
        if (!snap_session_cookie_for_host(json_get_str(k, "domain"), host))
            continue;
        static const char *const KEEP[] = {"name", "value", "domain", "path", "httpOnly",
                                           "secure", "sameSite", "partitionKey", NULL};
        json_w_obj_begin(&w);
        for (const char *const *f = KEEP; *f; f++) {
            const json_val *v = json_get(k, *f);
            if (v) {
                json_w_key(&w, *f);
                json_w_val(&w, v);
            }
        }
        double exp = json_num(json_get(k, "expires"));
        if (json_bool(json_get(k, "session")) || exp <= 0) {
            all_persistent = false;
        } else {
            json_w_key(&w, "expires");
            json_w_val(&w, json_get(k, "expires"));
            if ((int64_t)exp > latest)
                latest = (int64_t)exp;
        }
        json_w_obj_end(&w);
        (*ncookies)++;
    }
    json_w_arr_end(&w);
    json_w_key(&w, "localStorage");
    json_w_obj_begin(&w);
    const json_val *items = json_get(json_get(ls.result, "result"), "value");
    if (json_is(items, JSON_ARRAY)) {
        json_w_key(&w, c->origin);
        json_w_val(&w, items);
        *nls = json_len(items);
    }
    json_w_obj_end(&w);
    json_w_obj_end(&w);
    session_values_note(a, json_get(ck.result, "cookies"), host, items);
    cdp_reply_free(&ck);
    cdp_reply_free(&ls);
    /* As the Playwright import decides it: only a session of persistent
     * cookies and no localStorage is surely dead after its last cookie. */
    if (all_persistent && *ncookies && !*nls)
        *expiry = latest;
    *out = json_w_take(&w, NULL);
    return *out ? 0 : CDP_ENOMEM;
}

/* Close the login's context ci and its pages (its cookies, the identity
 * provider's included, go with it). 0, or -1 with why. */
static int login_ctx_close(snap_agent *a, size_t ci, char *why, size_t cap)
{
    snap_ctx *c = &a->ctxs[ci];
    c->state = SNAP_CTX_STALE;
    if (!c->created || !*c->id)
        return 0;
    char params[SNAP_ID_MAX + 40];
    snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", c->id);
    cdp_err e = {0};
    if (snap_cdp_call(a, NULL, "Target.disposeBrowserContext", params, a->o.timeout_ms, NULL,
                      &e)) {
        snprintf(why, cap, "%.200s", e.msg);
        return -1;
    }
    c = &a->ctxs[ci];
    c->created = false;
    c->creds = false;
    snap_sync(a);       /* its tabs are gone */
    return 0;
}

/* Where the agent goes on after a login or a sign-in's hand-back (new;
 * NULL when out of memory): origin's root. Never the page the person ended
 * on (it may be a one-time link): the rule of snap_request_shown, origin
 * only (red team s15, R5-4). */
static char *landing_url(const char *origin)
{
    size_t n = strlen(origin) + 2;
    char *u = malloc(n);
    if (u)
        snprintf(u, n, "%s/", origin);
    return u;
}

int snap_session_login_close(snap_agent *a, size_t ci, char *why, size_t cap)
{
    a->login.active = false;
    return ci < a->nctxs ? login_ctx_close(a, ci, why, cap) : 0;
}

/* Red team s11, L4: "done" with the login tab on another origin than the one
 * asked (a redirect, a link, even to an origin with an identity) saves nothing:
 * not the page the human was sent to log in to. The login ends, context closed. */
static int login_off_origin(snap_agent *a, size_t ci, const snap_tab *t, const char *origin,
                            snap_result *r)
{
    char there[300];    /* as results show an origin the page chose (R7-4) */
    char *sh = t->nframes ? snap_origin_shown_strict(a, t->frames[0].url) : NULL;
    snprintf(there, sizeof there, "%s", sh && *t->frames[0].origin ? sh : "no page");
    free(sh);
    char cerr[300] = "";
    int closed = login_ctx_close(a, ci, cerr, sizeof cerr);
    a->login.active = false;
    return snap_fail(r, SNAP_EDENIED, "The login was for %s, but the login tab is on %s, "
                     "so nothing was saved (a session is only taken from the origin the "
                     "login was started for); the login's browser context %s. Log in "
                     "again and end on a page of %s.", origin, there,
                     closed ? "could not be closed" : "is closed", origin);
}

static int login_poll_run(snap_agent *a, bool human_done, snap_result *r)
{
    memset(r, 0, sizeof *r);
    if (!a->login.active)
        return snap_fail(r, SNAP_EINVAL, "no login is running");
    char origin[256];
    snprintf(origin, sizeof origin, "%s", snap_login_origin(a));
    if (snap_sync(a)) {
        snap_login_cancel(a);
        return snap_fail(r, SNAP_EBROWSER, "the browser is gone: %s; nothing was saved",
                         cdp_conn_error(a->c));
    }
    int tab_id = a->login.tab;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed) {
        snap_login_cancel(a);
        return snap_fail(r, SNAP_ENOTAB, "the login window for %s was closed before the "
                         "login finished; nothing was saved", origin);
    }
    bool done = human_done;
    if (!done && !t->loading && !t->dialog_open && t->nframes &&
        strcmp(t->frames[0].origin, origin) == 0)
        done = snap_session_login_wall(a, tab_id) == 0;
    if (!done)
        return snap_fail(r, SNAP_EBLOCKED, "waiting for the human to finish logging in at %s",
                         origin);
    size_t ci = a->login.ctx;
    if (!t->nframes || strcmp(t->frames[0].origin, origin) != 0)
        return login_off_origin(a, ci, t, origin, r);
    char *state = NULL;
    size_t nck = 0, nls = 0;
    int64_t expiry = 0;
    cdp_err e = {0};
    int rc = snap_session_capture(a, &a->ctxs[ci], tab_id, &state, &nck, &nls, &expiry, &e);
    if (rc) {
        snap_login_cancel(a);
        return snap_fail(r, SNAP_EBROWSER, "cannot read the session of %s: %s; nothing was "
                         "saved", origin, e.msg);
    }
    char verr[400] = "";
    /* Saved under the identity the grant names for the service, else
     * "default" (a later grant names it to have the session restored);
     * checked again, as a named session may have been stored meanwhile. */
    if (snap_session_keeps_named(a, origin, "saved", r)) {
        wipe_free(state);
        char why[900];
        snprintf(why, sizeof why, "%s", r->text ? r->text : "");
        snap_result_free(r);
        char cerr[300] = "";
        int closed = login_ctx_close(a, ci, cerr, sizeof cerr);
        a->login.active = false;
        return snap_fail(r, SNAP_EDENIED, "%s; the login's browser context %s", why,
                         closed ? "could not be closed" : "is closed");
    }
    const char *ident = gate_identity_for(a->gate, origin);
    int vr = vault_put(a->o.vault, origin, ident ? ident : "default", (const uint8_t *)state,
                       strlen(state), expiry,
                       verr, sizeof verr);
    a->login.active = false;
    a->login.saved = vr == 0;   /* in the vault, whatever happens next */
    a->login.ncookies = nck;
    a->login.nls = nls;
    /* Where the agent goes on: the service's root, never the page the
     * human ended on. Its address may be a one-time link (a magic-login or
     * reset path, a ticket in the query) that must not be fetched again in
     * another context; the rule is the sink's for what a person opens
     * (snap_request_shown: the origin, path and query withheld; red team
     * s15, R5-4). */
    char *landing = landing_url(origin);
    /* The login's context is the human's: it ran without the network rule
     * (the human may pass through identity providers the grant does not
     * name) and holds their cookies too. The session moves into a
     * privileged context of its own, created as a restored one is (the
     * grant's network rule; only the service host's cookies and the
     * origin's localStorage), and the login's context is closed with its
     * pages. Without a grant nothing is judged, so no rule either. */
    size_t ni = 0;
    int mv = SNAP_EBROWSER;
    if (!vr) {
        json_opts po = {0};
        po.max_size = STATE_MAX;
        po.max_depth = 16;
        po.flags = JSON_SECRET;
        json_doc *d = json_parse(state, strlen(state), &po, NULL);
        mv = d ? ctx_from_state(a, origin, json_doc_root(d), gate_grant_get(a->gate) != NULL,
                                &ni, r)
               : snap_fail(r, SNAP_ENOMEM, "out of memory");
        json_doc_free(d);
    }
    wipe_free(state);
    char cerr[300] = "";
    int closed = login_ctx_close(a, ci, cerr, sizeof cerr);
    if (vr) {
        free(landing);
        return snap_fail(r, SNAP_EBROWSER, "the session of %s could not be saved: %s; the "
                         "login's browser context %s", origin, verr,
                         closed ? "could not be closed" : "is closed");
    }
    if (closed) {
        free(landing);
        if (ni)
            a->ctxs[ni].state = SNAP_CTX_STALE;
        return snap_fail(r, SNAP_EBROWSER, "the session of %s is saved in the vault, but the "
                         "login's browser context could not be closed (%s), so this agent "
                         "does not use it", origin, cerr);
    }
    if (mv) {
        free(landing);
        char why[600];
        snprintf(why, sizeof why, "%s", r->text ? r->text : "");
        return snap_fail(r, SNAP_EBROWSER, "the session of %s is saved in the vault, but it "
                         "could not be moved out of the login's browser context (%s); that "
                         "context is closed", origin, why);
    }
    a->ctxs[ni].captured = (int64_t)time(NULL);
    a->ctxs[ni].check = false;
    char opened[700] = "";
    if (landing) {
        snap_result o;
        int orc = snap_open_in(a, landing, ni, true, &o);
        snap_tab *nt = orc == 0 || orc == SNAP_EDIALOG ? snap_tab_current(a) : NULL;
        if (nt && nt->ctx == ni)
            snprintf(opened, sizeof opened, " The service's root page is open there (tab "
                     "t%d; the page the human ended on is not opened again: its address may "
                     "be a one-time link).", nt->id);
        else
            snprintf(opened, sizeof opened, " Opening the service's root there failed "
                     "(%.300s): open a page of %s to go on.", snap_strerror(orc), origin);
        snprintf(r->obs, sizeof r->obs, "%s", o.obs);
        snap_result_free(&o);
        free(landing);
    }
    snap_fail(r, SNAP_OK, "Login finished%s: the session of %s (%zu cookies, %zu "
              "localStorage items; no form values) is saved in the vault, and later "
              "runs restore it. It now lives in a browser context of its own, %s, and "
              "the login's context is closed.%s", human_done ? " (the human said done)" : "",
              origin, nck, nls, gate_grant_get(a->gate) ? "with the grant's network rule "
              "like a restored session" : "like a restored session", opened);
    return 0;
}

int snap_login_poll(snap_agent *a, bool human_done, snap_result *r)
{
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "login", saved);
    int rc = login_poll_run(a, human_done, r);
    snap_permit_begin(a, saved);
    return rc;
}
