/*
 * vault_state.c — what `cdpgate vault` knows of origins and of session
 * state format v1 (docs/vault.md): the canonical origin sessions are
 * stored under (cli_vault_origin) and the format's validation
 * (cli_session_check), both declared in cli/cli.h. Split from
 * vault_cmd.c, whose opening comment says how secrets are handled.
 */
#include "cli/cli.h"
#include "cli/vault_int.h"
#include "json/json.h"
#include "url/url.h"
#include "vault/vault.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* origins */

/*
 * Canonical origin of a URL or origin, as url/url.h (the one URL parser,
 * held against Chromium's) serialises it: lower-case scheme (http or
 * https) and host, IPv4 dotted, IPv6 compressed, the port only when it is
 * not the scheme's default, no trailing slash; path, query and fragment
 * are dropped. That is the form the browser's location.origin gives, and
 * the key the store files sessions under. A URL carrying a user name or
 * password is refused and never echoed; so is a host in Unicode (write it
 * in its xn-- form). Fills out (and, when not NULL, https and host) and
 * returns 0, or -1 with a reason in err.
 */
int cli_origin_parse(const char *url, char *out, size_t cap, bool *https, char *host,
                        size_t hostcap, char *err, size_t errlen)
{
    url_parts u;
    const char *why = "not a URL";
    int rc = url_parse(url, &u, &why);
    if (rc == URL_EOPAQUE || (rc == 0 && u.scheme != URL_SCHEME_HTTP &&
                              u.scheme != URL_SCHEME_HTTPS))
        return cli_seterr(err, errlen, "not an http:// or https:// origin");
    if (rc == 0 && u.userinfo)
        return cli_seterr(err, errlen, "a URL with a user name or password is refused");
    if (rc)
        return cli_seterr(err, errlen, "%s", why);
    if (strlen(u.host) > HOST_MAX)
        return cli_seterr(err, errlen, "host name longer than %u bytes", HOST_MAX);
    if (url_parts_origin(&u, out, cap))
        return cli_seterr(err, errlen, "origin too long");
    if (https)
        *https = u.scheme == URL_SCHEME_HTTPS;
    if (host) {
        if (strlen(u.host) >= hostcap)
            return cli_seterr(err, errlen, "host name too long");
        memcpy(host, u.host, strlen(u.host) + 1);
    }
    return 0;
}

int cli_vault_origin(const char *url, char *out, size_t cap)
{
    return cli_origin_parse(url, out, cap, NULL, NULL, 0, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* session state format v1 (docs/vault.md) */

bool cli_is_str(const json_val *v)
{
    return json_type_of(v) == JSON_STRING;
}

bool cli_is_bool(const json_val *v)
{
    return json_type_of(v) == JSON_TRUE || json_type_of(v) == JSON_FALSE;
}

/* A string without control characters (U+0000..U+001F, U+007F). */
static bool clean_str(const json_val *v, size_t max)
{
    size_t n;
    const char *s = json_str(v, &n);
    if (!s || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

static bool samesite_ok(const char *s)
{
    return s && (strcmp(s, "Strict") == 0 || strcmp(s, "Lax") == 0 || strcmp(s, "None") == 0);
}

/* Checks one cookie object of the stored format (pw: of a Playwright file,
 * whose partitionKey is a string); err names the field, never a value. */
int cli_cookie_check(const json_val *c, size_t i, bool pw, char *err, size_t errlen)
{
    if (json_type_of(c) != JSON_OBJECT)
        return cli_seterr(err, errlen, "cookies[%zu] is not an object", i);
    const json_val *name = json_get(c, "name"), *value = json_get(c, "value");
    const json_val *dom = json_get(c, "domain"), *path = json_get(c, "path");
    size_t nl = 0, vl = 0;
    json_str(name, &nl);
    json_str(value, &vl);
    if (!clean_str(name, COOKIE_NV_MAX) || !clean_str(value, COOKIE_NV_MAX) ||
        nl + vl > COOKIE_NV_MAX)
        return cli_seterr(err, errlen, "cookies[%zu]: name or value missing, not a string, "
                      "holding a control character, or over %u bytes", i, COOKIE_NV_MAX);
    if (!clean_str(dom, HOST_MAX + 1) || !json_str(dom, NULL)[0])
        return cli_seterr(err, errlen, "cookies[%zu]: bad domain", i);
    if (!clean_str(path, COOKIE_PATH_MAX) || json_str(path, NULL)[0] != '/')
        return cli_seterr(err, errlen, "cookies[%zu]: bad path (must start with /)", i);
    const json_val *v;
    if (((v = json_get(c, "secure")) && !cli_is_bool(v)) ||
        ((v = json_get(c, "httpOnly")) && !cli_is_bool(v)))
        return cli_seterr(err, errlen, "cookies[%zu]: secure and httpOnly must be booleans", i);
    if ((v = json_get(c, "sameSite")) && !samesite_ok(json_str(v, NULL)))
        return cli_seterr(err, errlen, "cookies[%zu]: sameSite must be Strict, Lax or None", i);
    if ((v = json_get(c, "expires")) && json_type_of(v) != JSON_NUMBER)
        return cli_seterr(err, errlen, "cookies[%zu]: expires must be a number", i);
    if ((v = json_get(c, "partitionKey")) && !(pw && clean_str(v, VAULT_ORIGIN_MAX))) {
        const json_val *x = json_get(v, "hasCrossSiteAncestor");
        if (!clean_str(json_get(v, "topLevelSite"), VAULT_ORIGIN_MAX) || (x && !cli_is_bool(x)))
            return cli_seterr(err, errlen, "cookies[%zu]: partitionKey must be "
                          "{topLevelSite, hasCrossSiteAncestor}", i);
    }
    return 0;
}

/* Validates a parsed session state v1; counts cookies and localStorage
 * items when the pointers are not NULL. */
int cli_session_check_val(const json_val *root, size_t *ncookies, size_t *nitems,
                             char *err, size_t errlen)
{
    int64_t ver = 0;
    if (json_type_of(root) != JSON_OBJECT)
        return cli_seterr(err, errlen, "session state is not a JSON object");
    if (!json_int(json_get(root, "version"), &ver) || ver != 1)
        return cli_seterr(err, errlen, "session state version is not 1");
    const json_val *cookies = json_get(root, "cookies"), *ls = json_get(root, "localStorage");
    if (json_type_of(cookies) != JSON_ARRAY || json_type_of(ls) != JSON_OBJECT)
        return cli_seterr(err, errlen, "session state needs \"cookies\" (array) and "
                      "\"localStorage\" (object)");
    size_t i = 0, items = 0;
    for (const json_val *c = json_first(cookies); c; c = json_next(c), i++)
        if (cli_cookie_check(c, i, false, err, errlen))
            return -1;
    for (const json_val *m = json_first(ls); m; m = json_next(m)) {
        char canon[ORIGIN_CAP];
        const char *k = json_key(m, NULL);
        if (cli_origin_parse(k, canon, sizeof canon, NULL, NULL, 0, NULL, 0) ||
            strcmp(canon, k) != 0)
            return cli_seterr(err, errlen, "localStorage: a key is not a canonical origin");
        if (json_type_of(m) != JSON_ARRAY)
            return cli_seterr(err, errlen, "localStorage: an origin's items are not an array");
        for (const json_val *p = json_first(m); p; p = json_next(p), items++)
            if (json_len(p) != 2 || !cli_is_str(json_at(p, 0)) || !cli_is_str(json_at(p, 1)))
                return cli_seterr(err, errlen, "localStorage: an item is not a [key, value] "
                              "pair of strings");
    }
    if (ncookies)
        *ncookies = i;
    if (nitems)
        *nitems = items;
    return 0;
}

json_doc *cli_parse_strict(const char *buf, size_t len, size_t max, unsigned depth,
                              json_err *je)
{
    /* Everything parsed here holds session values: zeroed when freed. */
    json_opts jo = {max, depth, JSON_NO_DUPLICATES | JSON_SECRET};
    return json_parse(buf, len, &jo, je);
}

int cli_session_check(const char *buf, size_t len, char *err, size_t errlen)
{
    json_err je = {0};
    json_doc *d = cli_parse_strict(buf, len, VAULT_BLOB_MAX, 8, &je);
    if (!d)
        return cli_seterr(err, errlen, "session state is not valid JSON (%s at byte %zu)",
                      je.msg ? je.msg : json_strerror(je.code), je.offset);
    int rc = cli_session_check_val(json_doc_root(d), NULL, NULL, err, errlen);
    json_doc_free(d);
    return rc;
}
