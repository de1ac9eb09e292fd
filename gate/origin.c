/*
 * origin.c — URL origins, origin patterns, recipient addresses and file
 * paths: the parsing and normalisation that grant entries and requests
 * share, so both sides of every comparison went through the same code.
 *
 * Origins are compared as normalised strings: "scheme://host[:port]", the
 * scheme http or https, as url/url.h (the one URL parser, which agrees
 * with Chromium's or refuses) serialises them: the host lower case, an
 * IPv4 address dotted, an IPv6 address compressed in brackets, the default
 * port (80, 443) dropped, userinfo dropped, a backslash ending the
 * authority as in a browser (so "https://evil.test\@a.test" is on
 * evil.test). The gate refuses a host written with percent-encoding
 * (the browser hands over decoded hosts, and an agent has no reason to
 * write one); an entry of a grant is refused with any control character
 * or space, userinfo, a path, query or fragment.
 *
 * Nothing here allocates. An origin's normal form can be 14 bytes longer
 * than the text it came from (an IPv4 host written short); every other
 * output is never longer than its input.
 */
#include "gate/gate_int.h"
#include "url/url.h"

#include <stdio.h>
#include <string.h>

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_';
}

int gate_origin_parse(const char *s, char *out, size_t cap, int strict, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (strict && s) {
        for (const char *p = s; *p; p++)
            if ((unsigned char)*p <= 0x20 || *p == 0x7f) {
                *why = "control character or space in host";
                return -1;
            }
    }
    url_parts u;
    int rc = url_parse(s, &u, why);
    if (rc == URL_EOPAQUE || (rc == 0 && u.scheme != URL_SCHEME_HTTP &&
                              u.scheme != URL_SCHEME_HTTPS)) {
        *why = "not an http or https URL";
        return -1;
    }
    if (rc)
        return -1;
    if (u.host_pct) {
        *why = "percent-encoded host";
        return -1;
    }
    if (strict) {
        const char *r = s + u.rest;
        size_t n = u.rest_end - u.rest;
        if (u.userinfo) {
            *why = "userinfo is not allowed";
            return -1;
        }
        if (n == 0 || (n == 1 && *r == '/'))
            ;
        else if (*r == '/' || *r == '\\') {
            *why = "no path allowed";
            return -1;
        } else if (*r == '?') {
            *why = "no query allowed";
            return -1;
        } else {
            *why = "no fragment allowed";
            return -1;
        }
    }
    if (url_parts_origin(&u, out, cap)) {
        *why = "origin too long";
        return -1;
    }
    return 0;
}

/* The last label of h[0..n) is all digits: after url/ normalisation such
 * a host is an IPv4 address, which no "*.domain" pattern covers. */
static bool last_label_numeric(const char *h, size_t n)
{
    size_t i = n;
    while (i > 0 && h[i - 1] != '.')
        i--;
    if (i == n)
        return false;
    for (; i < n; i++)
        if (h[i] < '0' || h[i] > '9')
            return false;
    return true;
}

int gate_origin_entry(const char *s, char *out, size_t cap, const char **why)
{
    if (!s || !*s) {
        *why = "empty";
        return -1;
    }
    if (s[0] == '*') {
        if (s[1] != '.' || !s[2]) {
            *why = "a pattern is \"*.\" and a domain";
            return -1;
        }
        const char *d = s + 2;
        size_t n = strlen(d), dots = 0;
        if (n > 253 || n + 3 > cap) {
            *why = "domain too long";
            return -1;
        }
        out[0] = '*';
        out[1] = '.';
        for (size_t i = 0; i < n; i++) {
            char c = lower(d[i]);
            if (c == '*') {
                *why = "a wildcard is allowed only as the leading \"*.\"";
                return -1;
            }
            if (!host_char(c)) {
                *why = c == '/' || c == ':' ? "a pattern has no scheme, port or path"
                                            : "bad character in domain";
                return -1;
            }
            if (c == '.' && (i == 0 || d[i - 1] == '.' || i + 1 == n)) {
                *why = "empty label in domain";
                return -1;
            }
            dots += c == '.';
            out[2 + i] = c;
        }
        out[2 + n] = 0;
        if (last_label_numeric(out + 2, n)) {
            *why = "a pattern names a domain, not an IPv4 address";
            return -1;
        }
        if (!dots && strcmp(out + 2, "localhost") != 0) {
            *why = "too broad (the domain needs a dot)";
            return -1;
        }
        return 0;
    }
    if (strchr(s, '*')) {
        *why = "a wildcard is allowed only as the leading \"*.\"";
        return -1;
    }
    /* Whether the entry has a scheme is the URL parser's call, as the
     * browser reads it: no scheme at all (a bare host, a "://" only later
     * in a path or query) or a non-special one ("localhost:8080") is the
     * scheme left out; "https:a.test" and "https:\\a.test" are
     * https://a.test to the browser, and to the gate. */
    url_parts u;
    int rc = url_parse(s, &u, NULL);
    if ((rc == URL_EINVAL || rc == URL_EOPAQUE) && u.scheme == URL_SCHEME_OTHER) {
        *why = "not an origin (scheme://host[:port] or *.domain)";
        return -1;
    }
    return gate_origin_parse(s, out, cap, ORIGIN_STRICT, why);
}

bool gate_origin_match(const char *entry, const char *origin)
{
    if (entry[0] != '*')
        return strcmp(entry, origin) == 0;
    const char *sfx = entry + 2, *h;
    size_t sl = strlen(sfx), hl;
    url_parts u;
    if (url_parse(origin, &u, NULL))
        return false;
    h = u.host;
    hl = strlen(h);
    if (hl && (h[0] == '[' || last_label_numeric(h, hl)))
        return false;
    if (hl == sl)
        return memcmp(h, sfx, sl) == 0;
    return hl > sl && h[hl - sl - 1] == '.' && memcmp(h + hl - sl, sfx, sl) == 0;
}

int gate_recipient_norm(const char *s, bool pattern, char *out, size_t cap, const char **why)
{
    const char *at = s ? strchr(s, '@') : NULL;
    if (!s || !*s) {
        *why = "empty";
        return -1;
    }
    if (!at || strchr(at + 1, '@')) {
        *why = "not an address (one '@' between a user and a domain)";
        return -1;
    }
    size_t ul = (size_t)(at - s), dl = strlen(at + 1);
    if (!ul || !dl) {
        *why = "not an address (empty user or domain)";
        return -1;
    }
    if (ul + dl + 2 > cap) {
        *why = "address too long";
        return -1;
    }
    if (s[0] == '*' && ul == 1 && !pattern) {
        *why = "a pattern is not an address";
        return -1;
    }
    for (size_t i = 0; i < ul; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c == 0x7f || strchr("<>,;:\"()[]\\", c) ||
            (c == '*' && ul != 1)) {
            *why = "bad character in the user part";
            return -1;
        }
    }
    memcpy(out, s, ul + 1);
    for (size_t i = 0; i < dl; i++) {
        char c = lower(at[1 + i]);
        if (!host_char(c) || (c == '.' && (i == 0 || i + 1 == dl))) {
            *why = "bad domain";
            return -1;
        }
        out[ul + 1 + i] = c;
    }
    out[ul + 1 + dl] = 0;
    return 0;
}

bool gate_recipient_match(const char *entry, const char *addr)
{
    if (entry[0] == '*' && entry[1] == '@') {
        const char *at = strchr(addr, '@');
        return at && strcmp(at + 1, entry + 2) == 0;
    }
    return strcmp(entry, addr) == 0;
}

int gate_path_norm(const char *s, bool dotdot, char *out, size_t cap, const char **why)
{
    if (!s || s[0] != '/') {
        *why = "not an absolute path";
        return -1;
    }
    size_t o = 0;
    const char *p = s;
    while (*p) {
        while (*p == '/')
            p++;
        const char *c = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - c);
        if (n == 0 || (n == 1 && c[0] == '.'))
            continue;
        if (n == 2 && c[0] == '.' && c[1] == '.') {
            if (!dotdot) {
                *why = "\"..\" is not allowed";
                return -1;
            }
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        if (o + 1 + n + 1 > cap) {
            *why = "path too long";
            return -1;
        }
        out[o++] = '/';
        memcpy(out + o, c, n);
        o += n;
    }
    if (o == 0) {
        if (cap < 2) {
            *why = "path too long";
            return -1;
        }
        out[o++] = '/';
    }
    out[o] = 0;
    return 0;
}

bool gate_path_inside(const char *scope, const char *path)
{
    size_t n = strlen(scope);
    if (n == 1 && scope[0] == '/')
        return path[0] == '/';
    return strncmp(scope, path, n) == 0 && (path[n] == 0 || path[n] == '/');
}
