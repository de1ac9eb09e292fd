/*
 * origin.c — URL origins, origin patterns, recipient addresses and file
 * paths: the parsing and normalisation that grant entries and requests
 * share, so both sides of every comparison went through the same code.
 *
 * Origins are compared as normalised strings: "scheme://host[:port]", the
 * scheme http or https, the host lower case ([a-z0-9._-], or an IPv6
 * literal in brackets), the default port (80, 443) dropped. Like a browser's
 * URL parser, a backslash ends the authority (so "https://evil.test\@a.test"
 * is on evil.test), and userinfo is dropped. Hosts are not decoded: a
 * browser hands over punycode, and '%' in a host is refused.
 *
 * Nothing here allocates; outputs are never longer than inputs.
 */
#include "gate/gate_int.h"

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

/* Scheme before "://": 80 for http, 443 for https, 0 otherwise. */
static int scheme_port(const char *s, size_t *after)
{
    char sc[9];
    size_t i = 0;
    for (; i < 8 && s[i]; i++)
        sc[i] = lower(s[i]);
    sc[i] = 0;
    if (strncmp(sc, "http://", 7) == 0) {
        *after = 7;
        return 80;
    }
    if (strncmp(sc, "https://", 8) == 0) {
        *after = 8;
        return 443;
    }
    return 0;
}

static bool authority_end(char c)
{
    return c == 0 || c == '/' || c == '?' || c == '#' || c == '\\';
}

/* Host (lower-cased into out) and port of an authority without userinfo. */
static int parse_hostport(const char *a, size_t n, char *host, size_t hcap, long *port,
                          const char **why)
{
    size_t hl, i = 0;
    if (n && a[0] == '[') {
        const char *rb = memchr(a, ']', n);
        if (!rb) {
            *why = "unterminated IPv6 literal";
            return -1;
        }
        hl = (size_t)(rb - a) + 1;
        for (i = 1; i + 1 < hl; i++) {
            char c = lower(a[i]);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.')) {
                *why = "bad character in IPv6 literal";
                return -1;
            }
        }
        if (hl < 4) {
            *why = "empty IPv6 literal";
            return -1;
        }
    } else {
        for (hl = 0; hl < n && a[hl] != ':'; hl++)
            ;
    }
    if (hl == 0) {
        *why = "no host";
        return -1;
    }
    if (hl > 253 || hl + 1 > hcap) {
        *why = "host too long";
        return -1;
    }
    for (i = 0; i < hl; i++) {
        char c = lower(a[i]);
        if (a[0] != '[' && !host_char(c)) {
            *why = "bad character in host";
            return -1;
        }
        host[i] = c;
    }
    host[hl] = 0;
    *port = -1;
    if (hl == n)
        return 0;
    if (a[hl] != ':') {
        *why = "bad character after host";
        return -1;
    }
    long p = 0;
    size_t digits = 0;
    for (i = hl + 1; i < n; i++, digits++) {
        if (a[i] < '0' || a[i] > '9' || digits >= 5) {
            *why = "bad port";
            return -1;
        }
        p = p * 10 + (a[i] - '0');
    }
    if (digits && (p == 0 || p > 65535)) {
        *why = "port out of range";
        return -1;
    }
    *port = digits ? p : -1;
    return 0;
}

int gate_origin_parse(const char *s, char *out, size_t cap, int strict, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    size_t off = 0;
    int dport = s ? scheme_port(s, &off) : 0;
    if (!dport) {
        *why = "not an http or https URL";
        return -1;
    }
    const char *a = s + off;
    size_t n = 0;
    while (!authority_end(a[n])) {
        if ((unsigned char)a[n] <= 0x20 || a[n] == 0x7f) {
            *why = "control character or space in host";
            return -1;
        }
        n++;
    }
    const char *at = NULL;
    for (size_t i = 0; i < n; i++)
        if (a[i] == '@')
            at = a + i;
    if (at) {
        if (strict) {
            *why = "userinfo is not allowed";
            return -1;
        }
        n -= (size_t)(at + 1 - a);
        a = at + 1;
    }
    if (strict) {
        const char *r = a + n;
        if (*r == '/' && r[1] == 0)
            ;
        else if (*r == '/' || *r == '\\') {
            *why = "no path allowed";
            return -1;
        } else if (*r == '?') {
            *why = "no query allowed";
            return -1;
        } else if (*r == '#') {
            *why = "no fragment allowed";
            return -1;
        }
    }
    char host[256];
    long port;
    if (parse_hostport(a, n, host, sizeof host, &port, why))
        return -1;
    const char *scheme = dport == 80 ? "http" : "https";
    int w = port < 0 || port == dport ? snprintf(out, cap, "%s://%s", scheme, host)
                                      : snprintf(out, cap, "%s://%s:%ld", scheme, host, port);
    if (w < 0 || (size_t)w >= cap) {
        *why = "origin too long";
        return -1;
    }
    return 0;
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
    if (!strstr(s, "://")) {
        *why = "not an origin (scheme://host[:port] or *.domain)";
        return -1;
    }
    return gate_origin_parse(s, out, cap, ORIGIN_STRICT, why);
}

/* Host part of a normalised origin: [*start, *start + *len). */
static void origin_host(const char *o, const char **h, size_t *len)
{
    const char *p = strstr(o, "://");
    p = p ? p + 3 : o;
    size_t n = 0;
    if (*p == '[') {
        while (p[n] && p[n] != ']')
            n++;
        n += p[n] == ']';
    } else {
        while (p[n] && p[n] != ':')
            n++;
    }
    *h = p;
    *len = n;
}

bool gate_origin_match(const char *entry, const char *origin)
{
    if (entry[0] != '*')
        return strcmp(entry, origin) == 0;
    const char *sfx = entry + 2, *h;
    size_t sl = strlen(sfx), hl;
    origin_host(origin, &h, &hl);
    if (hl && h[0] == '[')
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
