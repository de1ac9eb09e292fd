/*
 * url.c — the WHATWG URL parser, as far as the origin goes (see url.h).
 *
 * Implementation notes
 *  - The input is never copied whole: a cursor walks it between the
 *    stripped bounds and skips tab, CR and LF as the standard's first step
 *    removes them, so offsets in url_parts are offsets in the caller's
 *    string. Only the host (URL_RAW_HOST_MAX) and a blob: URL's inner URL
 *    (URL_RAW_MAX) are copied, into stack buffers.
 *  - Step names follow the standard: "special authority ignore slashes",
 *    "authority", "host", "port"; the host parser, "ends in a number",
 *    the IPv4 number parser, the IPv4 and IPv6 parsers and serialisers.
 *  - Numbers (IPv4 parts, ports) may be written with any number of digits;
 *    they saturate above 2^32 instead of overflowing, which the range
 *    checks then refuse.
 *  - Where Chromium departs from the standard (it percent-escapes '*',
 *    space and controls in a host where the standard fails, and does not
 *    validate Punycode labels), the parser refuses or follows Chromium; the
 *    differential test in tests/test_url.c holds it to that.
 */
#include "url/url.h"
#include "base/base.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SAT ((uint64_t)1 << 33)     /* saturation for parsed numbers */

typedef struct {
    const char *s;
    size_t i, e;        /* position and (stripped) end in s */
    bool *stripped;
} cur;

static bool tabnl(char c)
{
    return c == '\t' || c == '\n' || c == '\r';
}

/* The next code unit at the cursor (tab/CR/LF skipped), or -1 at the end. */
static int peek(cur *c)
{
    while (c->i < c->e && tabnl(c->s[c->i])) {
        c->i++;
        *c->stripped = true;
    }
    return c->i < c->e ? (unsigned char)c->s[c->i] : -1;
}

static char lower(int c)
{
    return (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

static bool alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool digit(int c)
{
    return c >= '0' && c <= '9';
}

static int fail(const char **why, int code, const char *text)
{
    if (why)
        *why = text;
    return code;
}

int url_default_port(url_scheme s)
{
    switch (s) {
    case URL_SCHEME_HTTP:
    case URL_SCHEME_WS:
        return 80;
    case URL_SCHEME_HTTPS:
    case URL_SCHEME_WSS:
        return 443;
    case URL_SCHEME_FTP:
        return 21;
    default:
        return 0;
    }
}

const char *url_strerror(int code)
{
    switch (code) {
    case URL_OK: return "ok";
    case URL_EINVAL: return "not a valid URL";
    case URL_EOPAQUE: return "the URL's origin is opaque";
    case URL_EIDN: return "non-ASCII host (write an internationalised name in its xn-- form)";
    case URL_EHOSTCHAR: return "host has a character the browser rewrites";
    case URL_ETOOLONG: return "URL part too long";
    default: return "unknown URL error";
    }
}

/* ---- IPv4 ---- */

/* The IPv4 number parser on p[0..n): 0 with *v, or -1. */
static int v4_number(const char *p, size_t n, uint64_t *v)
{
    if (n == 0)
        return -1;
    unsigned radix = 10;
    if (n >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        p += 2, n -= 2, radix = 16;
    } else if (n >= 2 && p[0] == '0') {
        p += 1, n -= 1, radix = 8;
    }
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        int d = base_hex_value((unsigned char)p[i]);
        if (d < 0 || (unsigned)d >= radix)
            return -1;
        x = x * radix + (unsigned)d;
        if (x > SAT)
            x = SAT;
    }
    *v = x;
    return 0;
}

/* "Ends in a number": the last label (a trailing empty one dropped) is
 * all digits, or parses as an IPv4 number. */
static bool ends_in_number(const char *h, size_t n)
{
    size_t end = n;
    if (end && h[end - 1] == '.')
        end--;                       /* "1.2.3.4.", "1.": the label before */
    size_t st = end;
    while (st > 0 && h[st - 1] != '.')
        st--;
    if (st == end)
        return false;
    bool all = true;
    for (size_t i = st; i < end; i++)
        all = all && digit((unsigned char)h[i]);
    uint64_t v;
    return all || v4_number(h + st, end - st, &v) == 0;
}

/* The IPv4 parser: h[0..n) into dotted form in out. */
static int v4_parse(const char *h, size_t n, char *out, size_t cap, const char **why)
{
    uint64_t num[4];
    size_t parts = 0, st = 0;
    if (n && h[n - 1] == '.')
        n--;                         /* "1.2.3.4." */
    for (size_t i = 0; i <= n; i++) {
        if (i < n && h[i] != '.')
            continue;
        if (parts == 4)
            return fail(why, URL_EINVAL, "IPv4 address with more than four parts");
        if (v4_number(h + st, i - st, &num[parts]))
            return fail(why, URL_EINVAL, "bad number in an IPv4 address");
        parts++;
        st = i + 1;
    }
    for (size_t i = 0; i + 1 < parts; i++)
        if (num[i] > 255)
            return fail(why, URL_EINVAL, "IPv4 address part over 255");
    uint64_t lim = (uint64_t)1 << (8 * (5 - parts));
    if (num[parts - 1] >= lim)
        return fail(why, URL_EINVAL, "IPv4 address out of range");
    uint64_t a = num[parts - 1];
    for (size_t i = 0; i + 1 < parts; i++)
        a += num[i] << (8 * (3 - i));
    int w = snprintf(out, cap, "%u.%u.%u.%u", (unsigned)(a >> 24) & 255,
                     (unsigned)(a >> 16) & 255, (unsigned)(a >> 8) & 255, (unsigned)a & 255);
    return w > 0 && (size_t)w < cap ? 0 : fail(why, URL_ETOOLONG, "host too long");
}

/* ---- IPv6 ---- */

/* The IPv6 parser on p[0..n) (without brackets): 0, -1, or -2 for a
 * leading zero in an embedded IPv4 part (which only the standard refuses). */
static int v6_parse(const char *p, size_t n, uint16_t a[8])
{
    size_t i = 0;
    int piece = 0, compress = -1;
    memset(a, 0, 8 * sizeof a[0]);
#define C(k) ((k) < n ? (unsigned char)p[(k)] : -1)
    if (C(i) == ':') {
        if (C(i + 1) != ':')
            return -1;
        i += 2;
        compress = ++piece;
    }
    while (C(i) != -1) {
        if (piece == 8)
            return -1;
        if (C(i) == ':') {
            if (compress >= 0)
                return -1;
            i++;
            compress = ++piece;
            continue;
        }
        unsigned v = 0, len = 0;
        while (len < 4 && base_hex_value(C(i)) >= 0) {
            v = v * 16 + (unsigned)base_hex_value(C(i));
            i++, len++;
        }
        if (C(i) == '.') {
            if (len == 0)
                return -1;
            i -= len;
            if (piece > 6)
                return -1;
            int seen = 0;
            while (C(i) != -1) {
                int v4 = -1;
                if (seen > 0) {
                    if (C(i) == '.' && seen < 4)
                        i++;
                    else
                        return -1;
                }
                if (!digit(C(i)))
                    return -1;
                while (digit(C(i))) {
                    int d = C(i) - '0';
                    if (v4 < 0)
                        v4 = d;
                    else if (v4 == 0)
                        return -2;
                    else
                        v4 = v4 * 10 + d;
                    if (v4 > 255)
                        return -1;
                    i++;
                }
                a[piece] = (uint16_t)(a[piece] * 0x100 + v4);
                seen++;
                if (seen == 2 || seen == 4)
                    piece++;
            }
            if (seen != 4)
                return -1;
            break;
        } else if (C(i) == ':') {
            i++;
            if (C(i) == -1)
                return -1;
        } else if (C(i) != -1) {
            return -1;
        }
        a[piece++] = (uint16_t)v;
    }
#undef C
    if (compress >= 0) {
        int swaps = piece - compress;
        piece = 7;
        while (piece != 0 && swaps > 0) {
            uint16_t t = a[piece];
            a[piece] = a[compress + swaps - 1];
            a[compress + swaps - 1] = t;
            piece--, swaps--;
        }
    } else if (piece != 8) {
        return -1;
    }
    return 0;
}

/* The IPv6 serialiser, in brackets. */
static void v6_write(const uint16_t a[8], char *out, size_t cap)
{
    int best = -1, bestlen = 1;
    for (int i = 0; i < 8;) {
        if (a[i]) {
            i++;
            continue;
        }
        int j = i;
        while (j < 8 && a[j] == 0)
            j++;
        if (j - i > bestlen)
            best = i, bestlen = j - i;
        i = j;
    }
    size_t o = 0;
    out[o++] = '[';
    bool ignore0 = false;
    for (int i = 0; i < 8; i++) {
        if (ignore0 && a[i] == 0)
            continue;
        ignore0 = false;
        if (best == i) {
            o += (size_t)snprintf(out + o, cap - o, "%s", i == 0 ? "::" : ":");
            ignore0 = true;
            continue;
        }
        o += (size_t)snprintf(out + o, cap - o, "%x%s", a[i], i == 7 ? "" : ":");
    }
    snprintf(out + o, cap - o, "]");
}

/* ---- hosts ---- */

/* The host parser for special schemes: raw[0..n) into u->host. */
static int host_parse(const char *raw, size_t n, url_parts *u, const char **why)
{
    if (raw[0] == '[') {
        const char *rb = memchr(raw, ']', n);
        if (!rb)
            return fail(why, URL_EINVAL, "host has '[' without ']'");
        if (rb != raw + n - 1)
            return fail(why, URL_EINVAL, "unexpected text after ']' in the host");
        if (memchr(raw, '%', n))     /* Chromium decodes, the standard refuses */
            return fail(why, URL_EHOSTCHAR, "percent-encoding in an IPv6 address");
        uint16_t a[8];
        int rc = v6_parse(raw + 1, n - 2, a);
        if (rc == -2)                /* Chromium reads it, the standard refuses */
            return fail(why, URL_EHOSTCHAR, "leading zero in an IPv4 part of an IPv6 address");
        if (rc)
            return fail(why, URL_EINVAL, "bracketed host is not an IPv6 address");
        v6_write(a, u->host, sizeof u->host);  /* at most 41 bytes */
        return 0;
    }
    char d[URL_RAW_HOST_MAX];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = raw[i];
        if (c == '%' && i + 2 < n && base_hex_value((unsigned char)raw[i + 1]) >= 0 &&
            base_hex_value((unsigned char)raw[i + 2]) >= 0) {
            c = (char)(base_hex_value((unsigned char)raw[i + 1]) * 16 +
                       base_hex_value((unsigned char)raw[i + 2]));
            i += 2;
            u->host_pct = true;
        }
        d[k++] = c;
    }
    for (size_t i = 0; i < k; i++)
        if ((unsigned char)d[i] >= 0x80)
            return fail(why, URL_EIDN, "non-ASCII host (write an internationalised name "
                        "in its xn-- form)");
    for (size_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)d[i];
        if (c <= 0x20 || c == 0x7f || c == '*')
            return fail(why, URL_EHOSTCHAR, "host has a space, control character or '*'");
        if (strchr("#%/:<>?@[\\]^|", c))
            return fail(why, URL_EINVAL, "forbidden character in host");
        d[i] = lower(c);
    }
    if (ends_in_number(d, k))
        return v4_parse(d, k, u->host, sizeof u->host, why);
    if (k >= sizeof u->host)
        return fail(why, URL_ETOOLONG, "host too long");
    memcpy(u->host, d, k);
    u->host[k] = 0;
    return 0;
}

/* ---- the parser ---- */

static url_scheme scheme_of(const char *name)
{
    static const struct {
        const char *name;
        url_scheme s;
    } T[] = {{"http", URL_SCHEME_HTTP}, {"https", URL_SCHEME_HTTPS}, {"ws", URL_SCHEME_WS},
             {"wss", URL_SCHEME_WSS},   {"ftp", URL_SCHEME_FTP},     {"file", URL_SCHEME_FILE}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (strcmp(name, T[i].name) == 0)
            return T[i].s;
    return URL_SCHEME_OTHER;
}

static int parse(const char *s, size_t len, bool trim, url_parts *u, const char **why)
{
    memset(u, 0, sizeof *u);
    size_t b = 0, e = len;
    if (trim) {
        while (b < e && (unsigned char)s[b] <= 0x20)
            b++;
        while (e > b && (unsigned char)s[e - 1] <= 0x20)
            e--;
        u->stripped = b > 0 || e < len;
    }
    cur c = {s, b, e, &u->stripped};
    u->rest_end = e;

    /* scheme start and scheme states */
    int ch = peek(&c);
    if (!alpha(ch))
        return fail(why, URL_EINVAL, "no scheme");
    size_t sl = 0;
    bool longname = false;
    while ((ch = peek(&c)) != -1 && (alpha(ch) || digit(ch) || ch == '+' || ch == '-' ||
                                     ch == '.')) {
        if (sl + 1 < sizeof u->scheme_name)
            u->scheme_name[sl++] = lower(ch);
        else
            longname = true;
        c.i++;
    }
    if (ch != ':')
        return fail(why, URL_EINVAL, "no scheme");
    c.i++;
    u->scheme = longname ? URL_SCHEME_OTHER : scheme_of(u->scheme_name);
    if (u->scheme == URL_SCHEME_OTHER || u->scheme == URL_SCHEME_FILE) {
        peek(&c);
        u->rest = c.i;
        return fail(why, URL_EOPAQUE, "not an http(s) or ws(s) URL");
    }

    /* special authority ignore slashes */
    while ((ch = peek(&c)) == '/' || ch == '\\')
        c.i++;

    /* authority: up to '/', '\', '?', '#' or the end; userinfo before the
     * last '@' */
    size_t start = c.i, at = SIZE_MAX;
    while ((ch = peek(&c)) != -1 && ch != '/' && ch != '\\' && ch != '?' && ch != '#') {
        if (ch == '@')
            at = c.i;
        c.i++;
    }
    size_t aend = c.i;
    if (at != SIZE_MAX) {
        u->userinfo = true;
        start = at + 1;
    }

    /* host, up to a ':' outside brackets */
    char raw[URL_RAW_HOST_MAX];
    size_t rn = 0;
    bool brackets = false;
    c.i = start;
    while (c.i < aend && (ch = peek(&c)) != -1 && c.i < aend) {
        if (ch == ':' && !brackets)
            break;
        if (ch == '[')
            brackets = true;
        else if (ch == ']')
            brackets = false;
        if (rn == sizeof raw)
            return fail(why, URL_ETOOLONG, "host too long");
        raw[rn++] = (char)ch;
        c.i++;
    }
    if (rn == 0)
        return fail(why, URL_EINVAL, at != SIZE_MAX ? "empty host after '@'" : "empty host");

    /* port */
    int dport = url_default_port(u->scheme);
    u->port = dport;
    u->default_port = true;
    if (c.i < aend && peek(&c) == ':') {
        c.i++;
        uint64_t p = 0;
        bool any = false;
        while (c.i < aend && (ch = peek(&c)) != -1 && c.i < aend) {
            if (!digit(ch))
                return fail(why, URL_EINVAL, "bad port (not a number)");
            p = p * 10 + (uint64_t)(ch - '0');
            if (p > SAT)
                p = SAT;
            any = true;
            c.i++;
        }
        if (p > 65535)
            return fail(why, URL_EINVAL, "bad port (port out of range)");
        if (any && (int)p != dport) {
            u->port = (int)p;
            u->default_port = false;
        }
    }
    c.i = aend;
    peek(&c);
    u->rest = c.i;
    return host_parse(raw, rn, u, why);
}

int url_parse(const char *s, url_parts *u, const char **why)
{
    url_parts dummy;
    if (!u)
        u = &dummy;
    if (!s) {
        memset(u, 0, sizeof *u);
        return fail(why, URL_EINVAL, "no URL");
    }
    return parse(s, strlen(s), true, u, why);
}

int url_parts_origin(const url_parts *u, char *out, size_t cap)
{
    const char *sc = u->scheme_name;
    int w = u->default_port ? snprintf(out, cap, "%s://%s", sc, u->host)
                            : snprintf(out, cap, "%s://%s:%d", sc, u->host, u->port);
    if (w < 0 || (size_t)w >= cap) {
        if (cap)
            out[0] = 0;
        return URL_ETOOLONG;
    }
    return 0;
}

/* A blob: URL's inner URL: its path (up to '?' or '#', tabs and newlines
 * removed), with leading spaces skipped. Anything else the standard would
 * percent-encode in the path (controls, spaces, non-ASCII) is refused:
 * the browsers do not agree on those. */
static int blob_inner(const char *s, const url_parts *o, url_parts *u, const char **why)
{
    char in[URL_RAW_MAX];
    size_t n = 0;
    bool lead = true;
    for (size_t i = o->rest; i < o->rest_end; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (tabnl((char)ch))
            continue;
        if (ch == '?' || ch == '#')
            break;
        if (lead && ch == ' ')
            continue;
        lead = false;
        if (ch <= 0x20 || ch >= 0x7f)
            return fail(why, URL_EOPAQUE, "blob: URL with a space, control or non-ASCII byte");
        if (n == sizeof in)
            return fail(why, URL_ETOOLONG, "blob: URL too long");
        in[n++] = (char)ch;
    }
    if (n && in[0] == '/')
        return fail(why, URL_EOPAQUE, "blob: URL with an authority");
    int rc = parse(in, n, false, u, why);
    if (rc == URL_EOPAQUE)
        return fail(why, URL_EOPAQUE, "blob: URL of an opaque origin");
    if (rc)
        return rc == URL_EINVAL ? fail(why, URL_EOPAQUE, "blob: URL of an invalid URL") : rc;
    if (u->scheme == URL_SCHEME_FTP)
        return fail(why, URL_EOPAQUE, "blob: URL of an ftp: URL");
    return 0;
}

/* Whether out[b, e) is a single-dot (1) or double-dot (2) path segment as
 * the URL standard reads them: ".", "%2e"; "..", ".%2e", "%2e.", "%2e%2e"
 * (percent-encoding in any case). 0 for any other segment. */
static int dot_segment(const char *out, size_t b, size_t e)
{
    int dots = 0;
    for (size_t i = b; i < e;) {
        if (out[i] == '.') {
            i++;
        } else if (e - i >= 3 && out[i] == '%' && out[i + 1] == '2' &&
                   (out[i + 2] == 'e' || out[i + 2] == 'E')) {
            i += 3;
        } else {
            return 0;
        }
        if (++dots > 2)
            return 0;
    }
    return dots;
}

/* Ends the segment out[seg, *n): a dot segment is removed, a double-dot
 * one with the segment before it (never the leading '/'). Returns whether
 * the '/' that follows is kept (not after a dot segment, whose place the
 * next segment takes). */
static bool path_segment_end(char *out, size_t *n, size_t seg)
{
    int d = dot_segment(out, seg, *n);
    if (!d)
        return true;
    *n = seg;
    if (d == 2 && *n > 1) {
        size_t p = *n - 1;          /* the '/' before the dot segment */
        while (p > 0 && out[p - 1] != '/')
            p--;
        *n = p > 0 ? p : 1;
    }
    return false;
}

int url_path(const char *s, char *out, size_t cap)
{
    if (!out || cap < 2)
        return URL_ETOOLONG;
    out[0] = 0;
    url_parts u;
    int rc = url_parse(s ? s : "", &u, NULL);
    if (rc)
        return rc;
    size_t n = 0, seg = 0;
    bool full = false;
    for (size_t i = u.rest; i < u.rest_end && s[i] != '?' && s[i] != '#'; i++) {
        char c = s[i];
        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == '\\')
            c = '/';
        if (c == '/' && n > 0 && !path_segment_end(out, &n, seg)) {
            seg = n;
            continue;
        }
        if (n + 1 >= cap) {
            full = true;
            break;
        }
        out[n++] = c;
        if (c == '/')
            seg = n;
    }
    if (!full && n > 0)
        path_segment_end(out, &n, seg);
    if (!n)
        out[n++] = '/';
    out[n] = 0;
    return 0;
}

int url_origin(const char *s, char *out, size_t cap, const char **why)
{
    url_parts u;
    if (cap)
        out[0] = 0;
    int rc = url_parse(s, &u, why);
    if (rc == URL_EOPAQUE && (strcmp(u.scheme_name, "blob") == 0 ||
                              strcmp(u.scheme_name, "filesystem") == 0)) {
        url_parts in;
        rc = blob_inner(s, &u, &in, why);
        if (rc)
            return rc;
        u = in;
    }
    if (rc)
        return rc;
    if (url_parts_origin(&u, out, cap))
        return fail(why, URL_ETOOLONG, "origin too long");
    return 0;
}

/* ---- the site a session's cookies reach ---- */

/* Whether a serialised host is an IP address (IPv4 dotted, IPv6 in
 * brackets): url_parse writes every numeric last label as IPv4. */
static bool host_ip(const char *h, size_t n)
{
    if (n && h[0] == '[')
        return true;
    size_t i = n;
    while (i && h[i - 1] != '.')
        i--;
    if (i == n)
        return false;
    for (size_t k = i; k < n; k++)
        if (h[k] < '0' || h[k] > '9')
            return false;
    return true;
}

static bool web_host(const char *s, char *host, size_t *len)
{
    url_parts u;
    if (!s || url_parse(s, &u, NULL) != 0 || u.scheme == URL_SCHEME_FTP ||
        u.scheme == URL_SCHEME_OTHER || u.scheme == URL_SCHEME_FILE)
        return false;
    size_t n = strlen(u.host);
    while (n && u.host[n - 1] == '.')
        n--;
    memcpy(host, u.host, n);
    host[n] = 0;
    *len = n;
    return n > 0;
}

bool url_same_site(const char *service, const char *url)
{
    char sh[URL_HOST_MAX], uh[URL_HOST_MAX];
    size_t sn, un;
    if (!web_host(service, sh, &sn) || !web_host(url, uh, &un))
        return false;
    if (host_ip(sh, sn))
        return strcmp(uh, sh) == 0;     /* an IP address is its own site */
    /* The site: the last two labels, or the whole host (a single label). */
    const char *site = sh;
    int dots = 0;
    for (size_t i = sn; i > 0 && site == sh; i--)
        if (sh[i - 1] == '.' && ++dots == 2)
            site = sh + i;
    size_t tn = strlen(site);
    if (un == tn)
        return strcmp(uh, site) == 0;
    return un > tn && uh[un - tn - 1] == '.' && strcmp(uh + un - tn, site) == 0;
}
