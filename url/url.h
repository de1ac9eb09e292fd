/*
 * url.h — the one URL parser of cdpgate: which site a URL belongs to.
 *
 * The gate (grants, page requests), the session contexts and the vault's
 * keys, and the WebSocket transport all ask this module for a URL's scheme,
 * host and port, so every comparison of "which site" goes through the same
 * code. The browser is the authority on where a request goes: the parser
 * follows the WHATWG URL Standard (the basic URL parser, host parser, IPv4
 * and IPv6 parsers and serialisers) for the special schemes http, https,
 * ws, wss and ftp, as far as the origin goes, and checks itself against
 * Chromium's own `new URL(x).origin` (tests/test_url.c). Where it cannot
 * agree it refuses:
 *
 *  - hosts with a non-ASCII code point, raw or percent-encoded (an IDN in
 *    Unicode form needs UTS #46 mapping and Punycode, which this parser
 *    does not implement): URL_EIDN. Punycode ("xn--") labels are taken as
 *    written, lower-cased, as Chromium does;
 *  - hosts with a code point that the standard forbids but Chromium
 *    rewrites instead ('*', space, C0 controls, DEL): URL_EHOSTCHAR;
 *  - file: URLs and every non-special scheme (data:, about:, javascript:,
 *    ...): their origin is opaque, URL_EOPAQUE; url_origin() also takes the
 *    inner origin of a blob: or filesystem: URL whose inner URL is http(s)
 *    or ws(s).
 *
 * What it does, in the standard's order: leading and trailing C0 controls
 * and spaces are stripped and every tab, CR and LF removed; the scheme is
 * lower-cased; after a special scheme any run of '/' and '\' is skipped;
 * the authority ends at '/', '\', '?', '#' or the end; everything before
 * its last '@' is userinfo (noted, never kept); the host is percent-decoded,
 * lower-cased and checked for forbidden code points; a host whose last
 * label is a number (decimal, 0x-hex or 0-octal) is an IPv4 address in one
 * to four parts and is written dotted ("0x7f.1" is 127.0.0.1) or refused
 * when out of range; a bracketed host is an IPv6 address, written in its
 * compressed canonical form ("[0:0::1]" is "[::1]", "[::ffff:1.2.3.4]" is
 * "[::ffff:102:304]"); a trailing dot stays; the port may have leading
 * zeros, must be at most 65535, and is left out when it is the scheme's
 * default.
 *
 * Limits: a host of at most URL_HOST_MAX - 1 bytes once serialised (and of
 * URL_RAW_HOST_MAX bytes as written), a blob: URL's inner URL of at most
 * URL_RAW_MAX bytes. Longer ones are URL_ETOOLONG.
 *
 * Nothing here does I/O; only url_redact allocates; there is no global
 * state.
 */
#ifndef CDPGATE_URL_H
#define CDPGATE_URL_H

#include <stdbool.h>
#include <stddef.h>

#define URL_HOST_MAX 256u        /* bytes of a serialised host with its NUL */
#define URL_ORIGIN_MAX 280u      /* bytes of a serialised origin with its NUL */
#define URL_RAW_HOST_MAX 1024u   /* bytes of a host as written (percent-encoded) */
#define URL_RAW_MAX 8192u        /* bytes of a blob: URL's inner URL */

enum {
    URL_OK = 0,
    URL_EINVAL = -1,     /* not a URL: the browser's parser fails on it too */
    URL_EOPAQUE = -2,    /* a URL whose origin is opaque ("null") */
    URL_EIDN = -3,       /* non-ASCII host: refused (no UTS #46 here) */
    URL_EHOSTCHAR = -4,  /* a host code point Chromium rewrites: refused */
    URL_ETOOLONG = -5,   /* over a limit above */
};

typedef enum {
    URL_SCHEME_OTHER = 0,   /* any non-special scheme (origin opaque) */
    URL_SCHEME_HTTP,
    URL_SCHEME_HTTPS,
    URL_SCHEME_WS,
    URL_SCHEME_WSS,
    URL_SCHEME_FTP,
    URL_SCHEME_FILE,        /* special, but its origin is opaque */
} url_scheme;

/* A parsed URL, as far as its origin goes. Filled by url_parse; the
 * offsets point into the string given to it. */
typedef struct {
    url_scheme scheme;
    char scheme_name[16];    /* lower case; cut at 15 bytes for long schemes */
    char host[URL_HOST_MAX]; /* serialised: "a.test", "127.0.0.1", "[::1]" */
    int port;                /* the port; the scheme's default when none */
    bool default_port;       /* port is the scheme's default (not shown) */
    bool userinfo;           /* a user name or password was given (not kept) */
    bool host_pct;           /* the host was written with percent-encoding */
    bool stripped;           /* leading/trailing C0 or space, or a tab, CR or
                                LF inside, was removed */
    size_t rest;             /* offset of what follows the authority (path,
                                query, fragment; for a non-special scheme,
                                what follows the ':') */
    size_t rest_end;         /* offset where the input ends once stripped */
} url_parts;

/* Parse s (NUL-terminated). 0 with u filled for a special scheme other
 * than file; URL_EOPAQUE with scheme, scheme_name, rest and rest_end filled
 * for file: and non-special schemes; else a negative URL_E* code. why, when
 * not NULL, gets a static text on failure. */
int url_parse(const char *s, url_parts *u, const char **why);

/* The path of s (a special scheme but file) as the browser reads it:
 * what follows the authority up to '?' or '#', with tabs and newlines
 * dropped, '\\' read as '/' and dot segments resolved as the browser
 * resolves them before it sends the request ("/a/./b/../c" is "/a/c";
 * "%2e" is a dot); "/" when empty. Into out (cap >= 2
 * bytes; a longer path is cut). 0, or url_parse's negative code (out "").
 */
int url_path(const char *s, char *out, size_t cap);

/* The serialised origin of s, exactly as the browser's
 * `new URL(s).origin` gives it: "scheme://host[:port]", for the special
 * schemes but file, and for a blob: or filesystem: URL whose inner URL is
 * http, https, ws
 * or wss. 0, or a negative URL_E* code (URL_EOPAQUE: the origin is "null";
 * URL_ETOOLONG also when it does not fit in cap). out is at most
 * URL_ORIGIN_MAX bytes with its NUL. */
int url_origin(const char *s, char *out, size_t cap, const char **why);

/* Serialise the origin of a parsed URL (0, or URL_ETOOLONG). */
int url_parts_origin(const url_parts *u, char *out, size_t cap);

/* Whether a request to url carries the cookies of a session held for
 * service (an origin or a URL): url's host is the site of service's host
 * or a subdomain of it, whatever the scheme and port (a cookie is sent to
 * every port, and a Domain= cookie to every subdomain of its domain). The
 * site is approximated without a public-suffix list: the host's last two
 * labels ("www.bank.test" -> "bank.test", so "app.bank.test" carries it);
 * an IP address or a single label ("localhost") is its own site. Under a
 * suffix of two labels ("bank.co.uk" -> "co.uk") every host under it
 * counts: more hosts than the cookies reach, never fewer (fail closed).
 * Trailing dots are ignored. False when either does not parse with an
 * http(s) or ws(s) scheme. */
bool url_same_site(const char *service, const char *url);

/* The scheme's default port: 80, 443, 80, 443, 21; 0 for others. */
int url_default_port(url_scheme s);

/* A static text for a URL_E* code. */
const char *url_strerror(int code);

/* ---- Hiding secrets in a URL (redact.c) ----
 * The one rule every URL cdpgate shows, audits or records goes through
 * (the agent's results, the gate's reasons and audit, the trail, the
 * evidence). url with secrets written "[redacted]" (new, free with free();
 * NULL for NULL or when out of memory):
 *  - always: the userinfo ("user:pass@", as the browser reads the
 *    authority), and the values of query and fragment parameters whose
 *    names say password, passwd, pwd, pass, otp, secret, token, signature,
 *    credential, API key or PIN (split at case changes: "accessToken");
 *    "code" beside OAuth's "state";
 *  - URL_REDACT_STRICT (a form with a password or one-time-code field was
 *    submitted): also code, key, auth, mfa and the names in fields
 *    (NULL-terminated, may be NULL; "*" stands for every name);
 *  - URL_REDACT_TOKENS (the bearer rule): path segments, query values and
 *    a fragment shaped like a secret (url_secret_shaped; after a reset,
 *    magic, verify, invite, login, code or token segment or key, a
 *    token of 8+ characters with a digit and a one-time code), and a
 *    fragment holding values. */
#define URL_REDACT_STRICT 1u
#define URL_REDACT_TOKENS 2u
char *url_redact(const char *url, unsigned flags, const char *const *fields);
/* Whether a parameter or field named name (n bytes, percent-encoded or
 * not) has its value hidden by that rule (strict: URL_REDACT_STRICT's
 * names too): the same test for a URL's query and a body's fields. */
bool url_secret_name(const char *name, size_t n, bool strict);
/* Whether s[0..n) (one word: a path segment, a query value, a word of
 * page text without the punctuation around it) is shaped like a secret:
 * the one word rule of URL_REDACT_TOKENS and of a trail's page text
 * (replay/text.c; red team s16 R6-5, s17 R7-1/6/8):
 *  - a bearer token: a JWT, 32+ hex digits, 16+ URL-safe characters
 *    mixing letters and digits that are no sequence of words;
 *  - a payment card number: 13-19 digits (a space or '-' between
 *    groups), the first 2-6, Luhn's check passing;
 *  - after_kw (it follows a word or key naming a secret: code, PIN,
 *    verify, token, ...): 8+ token characters with a digit (or 16+), and
 *    a one-time, recovery or backup code: 4+ letters and digits with a
 *    digit, '-' or '.' between groups ("482913", "G-482913",
 *    "4f3a2-9c8b1"), or letter groups of one length and case
 *    ("abcd-efgh"); never a date ("2024-01-02") or an amount ("24.00"). */
bool url_secret_shaped(const char *s, size_t n, bool after_kw);

#endif
