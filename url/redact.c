/*
 * redact.c — the one rule for hiding secrets in a URL that cdpgate shows,
 * audits or records (url_redact, url/url.h): the agent's results and frame
 * URLs (snapshot/), the trail (replay/), the evidence (cli/evid.c) and the
 * gate's own reasons (gate/) all go through it, so a secret hidden in one
 * output is hidden in all.
 *
 * Two parts, each applied by flag:
 *  - by name (always): the userinfo, and the values of query and fragment
 *    parameters named like secrets (URL_REDACT_STRICT: more names);
 *  - by shape (URL_REDACT_TOKENS): path segments, query values and a
 *    fragment that look like bearer secrets (reset and magic-login links,
 *    API keys, JWTs, digests).
 *
 * Unlike the parser (url.c) these functions allocate their result.
 */
#include "url/url.h"

#include "base/base.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- by name: userinfo and query parameters ---- */

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
    "password", "passwd", "pwd", "pw", "pword", "pass", "passcode", "passphrase", "otp", "totp",
    "hotp", "secret", "token", "apikey", "sig", "signature", "credential", "credentials", "pin",
    "sid", "sessionid", "jsessionid", "phpsessid", NULL,
};
static const char *const SECRET_PARTS[] = {"passw", "token", "secret", NULL};
/* Also when the form that was submitted had a password or one-time-code
 * field, or beside OAuth's "state". */
static const char *const STRICT_WORDS[] = {"code", "key", "auth", "mfa", NULL};

/* Should the parameter name (n bytes) have its value hidden? strict adds
 * STRICT_WORDS and the names in fields (NULL-terminated, may be NULL); a
 * field "*" stands for every name (the form's fields could not be read). */
static bool secret_param(const char *name, size_t n, bool strict, const char *const *fields)
{
    if (name_has_word(name, n, SECRET_WORDS, SECRET_PARTS))
        return true;
    if (!strict)
        return false;
    if (name_has_word(name, n, STRICT_WORDS, NULL))
        return true;
    for (size_t i = 0; fields && fields[i]; i++)
        if (strcmp(fields[i], "*") == 0 ||
            (*fields[i] && strlen(fields[i]) == n && strncmp(fields[i], name, n) == 0))
            return true;
    return false;
}

bool url_secret_name(const char *name, size_t n, bool strict)
{
    return name && secret_param(name, n, strict, NULL);
}

/* ---- shared by both parts: pairs, path parameters, nested URLs ---- */

/* How a pass is run: by name (strict, fields) or by shape (tokens). */
typedef struct {
    bool tokens;
    bool strict;
    const char *const *fields;
} redact_ctx;

#define NEST_MAX 3   /* URLs inside values inside values ... scrubbed this deep */

static char *redact_query(const char *url, const redact_ctx *c, int depth);
static char *redact_tokens(const char *url, int depth);
static bool key_personal(const char *k, size_t kn, const char *v, size_t vn);

/* Where the pair at p ends (before end): at '&' or ';'. Both parts split
 * a query or a fragment the same way (red team s15, R5-2: ';' pairs). */
static const char *pair_end(const char *p, const char *end)
{
    while (p < end && *p != '&' && *p != ';')
        p++;
    return p;
}

/* v[0..n) percent-decoded once (new; "%00" and '+' left as they are). */
static char *pct_decode(const char *v, size_t n)
{
    base_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if (c == '%' && i + 2 < n && isxdigit((unsigned char)v[i + 1]) &&
            isxdigit((unsigned char)v[i + 2])) {
            char hex[3] = {v[i + 1], v[i + 2], 0};
            char x = (char)strtol(hex, NULL, 16);
            if (x) {
                c = x;
                i += 2;
            }
        }
        base_buf_putc(&b, c);
    }
    return base_buf_take(&b, NULL);
}

/* s percent-encoded as encodeURIComponent does, '[' and ']' kept (so a
 * "[redacted]" in it reads as one), into b. */
static void put_pct(base_buf *b, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (isalnum(*c) || strchr("-_.!~*'()[]", *c))
            base_buf_putc(b, (char)*c);
        else
            base_buf_printf(b, "%%%02X", *c);
    }
}

/* The value v[0..n) of a pair that is not hidden as a whole, into b. A
 * value holding a URL once percent-decoded ("://", '?', ';' or '#': a
 * return address "next=/cb?token=...", "continue=https%3A%2F%2F...") is
 * that URL scrubbed by the same pass, written back as it came (as it is,
 * or percent-encoded again) when anything was hidden; deeper than
 * NEST_MAX, the value is "[redacted]" (R5-2). */
static void put_value(base_buf *b, const char *v, size_t n, const redact_ctx *c, int depth)
{
    char *d = pct_decode(v, n);
    bool nested = d && (strstr(d, "://") || strpbrk(d, "?;#"));
    char *r = !nested || depth >= NEST_MAX ? NULL
              : c->tokens ? redact_tokens(d, depth + 1) : redact_query(d, c, depth + 1);
    if (!d || (nested && depth < NEST_MAX && !r))
        b->oom = true;
    else if (nested && depth >= NEST_MAX)
        base_buf_puts(b, "[redacted]");
    else if (!r || strcmp(r, d) == 0)
        base_buf_put(b, v, n);
    else if (strlen(d) == n && memcmp(d, v, n) == 0)
        base_buf_puts(b, r);
    else
        put_pct(b, r);
    free(r);
    free(d);
}

/* Redact name=value pairs of [p, end) separated by '&' or ';' into b. */
static void redact_pairs(base_buf *b, const char *p, const char *end, const redact_ctx *c,
                         int depth)
{
    while (p < end) {
        const char *amp = pair_end(p, end);
        const char *eq = memchr(p, '=', (size_t)(amp - p));
        size_t kn = eq ? (size_t)(eq - p) : 0, vn = eq ? (size_t)(amp - eq - 1) : 0;
        if (eq && vn && (secret_param(p, kn, c->strict, c->fields) ||
                         key_personal(p, kn, eq + 1, vn))) {
            base_buf_put(b, p, (size_t)(eq + 1 - p));
            base_buf_printf(b, "[redacted]");
        } else if (eq) {
            base_buf_put(b, p, (size_t)(eq + 1 - p));
            put_value(b, eq + 1, vn, c, depth);
        } else {
            base_buf_put(b, p, (size_t)(amp - p));
        }
        if (amp < end)
            base_buf_put(b, amp, 1);
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

/* A path segment's parameters s[0..n) (from its first ';'): each one's
 * value written "[redacted]", whatever its name (";jsessionid=...",
 * ";sid=...": a session id the server rewrote into the URL; R5-2). */
static void put_seg_params(base_buf *b, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t e = i + 1;
        while (e < n && s[e] != ';')
            e++;
        const char *eq = memchr(s + i, '=', e - i);
        if (eq && (size_t)(eq - s) + 1 < e) {
            base_buf_put(b, s + i, (size_t)(eq + 1 - (s + i)));
            base_buf_puts(b, "[redacted]");
        } else {
            base_buf_put(b, s + i, e - i);
        }
        i = e;
    }
}

/* The path p[0..n) into b with every segment's parameters hidden. */
static void put_path_params(base_buf *b, const char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t e = i;
        while (e < n && p[e] != '/')
            e++;
        const char *sc = memchr(p + i, ';', e - i);
        size_t core = sc ? (size_t)(sc - (p + i)) : e - i;
        base_buf_put(b, p + i, core);
        put_seg_params(b, p + i + core, e - i - core);
        if (e < n)
            base_buf_putc(b, '/');
        i = e + 1;
    }
}

/* url redacted by name (c: not tokens), depth: how deep in values. */
static char *redact_query(const char *url, const redact_ctx *c, int depth)
{
    if (!url)
        return NULL;
    base_buf b = {0};
    const char *p = url, *end = url + strlen(url);
    /* http(s), ws(s), ftp: the userinfo as the browser reads it (url/url.h:
     * '\\' ends the authority, "//" is optional, tabs and newlines do not
     * count), hidden up to the last '@' before the host. */
    url_parts up;
    int prc = url_parse(url, &up, NULL);
    if (prc == 0) {
        const char *auth = strchr(url, ':') + 1, *rest = url + up.rest, *at = NULL;
        while (auth < rest && (*auth == '/' || *auth == '\\' || *auth == '\t' ||
                               *auth == '\n' || *auth == '\r'))
            auth++;
        for (const char *q = auth; q < rest; q++)
            if (*q == '@')
                at = q;
        base_buf_put(&b, p, (size_t)(auth - p));
        if (up.userinfo && at)
            base_buf_printf(&b, "[redacted]");
        p = up.userinfo && at ? at : auth;
        base_buf_put(&b, p, (size_t)(rest - p));
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
        base_buf_put(&b, p, (size_t)(auth - p));
        if (at)
            base_buf_printf(&b, "[redacted]");
        p = at ? at : auth;
        base_buf_put(&b, p, (size_t)(ae - p));
        p = ae;
    }
    const char *hash = memchr(p, '#', (size_t)(end - p));
    const char *qend = hash ? hash : end;
    const char *qm = memchr(p, '?', (size_t)(qend - p));
    /* A path's parameters, but not in an opaque URL's text (data:,
     * javascript:, mailto:) */
    if (prc != URL_EOPAQUE)
        put_path_params(&b, p, (size_t)((qm ? qm : qend) - p));
    else
        base_buf_put(&b, p, (size_t)((qm ? qm : qend) - p));
    redact_ctx st = *c;
    if (qm) {
        st.strict = c->strict || (has_param(qm + 1, qend, "state") &&
                                  has_param(qm + 1, qend, "code"));
        base_buf_put(&b, "?", 1);
        redact_pairs(&b, qm + 1, qend, &st, depth);
    }
    if (hash) {
        base_buf_put(&b, "#", 1);
        if (memchr(hash + 1, '=', (size_t)(end - hash - 1))) {
            st.strict = c->strict || (has_param(hash + 1, end, "state") &&
                                      has_param(hash + 1, end, "code"));
            redact_pairs(&b, hash + 1, end, &st, depth);
        } else {
            base_buf_put(&b, hash + 1, (size_t)(end - hash - 1));
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


/* ---- by shape: bearer-like segments and values ---- */

/* A path segment, a query value or a fragment that looks like a bearer
 * secret (a password-reset, magic-login, invitation or OAuth token, an
 * API key, a signature: red team s13 R1, s14 R4-1). Only URL characters
 * ("-_.~%+=:!*$,/" besides letters and digits), and one of:
 *  - a JWT: three dot-separated base64url parts, the first "eyJ...";
 *  - hex: 32 or more hex digits, hyphens aside (a digest, a UUID), with a
 *    digit;
 *  - a base64/base64url-shaped text of 16 or more characters mixing
 *    letters and digits that is NOT a sequence of words: parts joined by
 *    "-_.~+:,/" each of which is a word (lower-case, Capitalised or
 *    upper-case letters), a number, or a short mix of the two in at most
 *    three runs ("q3", "v2", "256gb", "x86"): "#release-notes-2024-q3" is
 *    no token; a signed value ("MQ:1vJvNA:sLq2X...") is one;
 *  - after a segment naming such a link (bearer_word: "reset", "invite",
 *    ...) or under a key naming one (key_secret: "code", "state", "key"),
 *    no sequence of words and 8 or more characters with a digit, or 16
 *    or more.
 * Random tokens have many letter/digit runs, so they fail the word test
 * ("sk_live_4eC39HqLy...": its third part). A step that opens a redacted
 * address diverges at replay (fail closed). */
static bool bearer_chars(const char *s, size_t n, bool *alpha, bool *digit)
{
    *alpha = *digit = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalpha(c))
            *alpha = true;
        else if (isdigit(c))
            *digit = true;
        else if (!c || !strchr("-_.~%+=:!*$,/", c))
            return false;
    }
    return true;
}

static bool bearer_sep(char c)
{
    return c && strchr("-_.~+:,/", c) != NULL;
}

/* What s[0..n) is as a part of a word sequence (see bearer_like). */
enum { PART_NONE, PART_WORD, PART_NUMBER, PART_MIX };

static int bearer_part(const char *s, size_t n)
{
    size_t runs = 0, lower = 0, upper = 0, letters = 0;
    int last = 0;   /* 1 letter, 2 digit */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int k = isalpha(c) ? 1 : isdigit(c) ? 2 : 0;
        bool pct = c == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
                   isxdigit((unsigned char)s[i + 2]);
        if (pct) {
            k = 1;   /* a percent-encoded letter ("caf%C3%A9"), of no case */
            i += 2;
        }
        if (!k)
            return PART_NONE;
        if (k != last)
            runs++;
        last = k;
        if (k == 1 && !pct) {
            bool first = letters++ == 0;
            if (islower(c))
                lower++;
            else if (!first)
                upper++;
        }
    }
    /* Letters: all lower case, all upper case, or Capitalised. */
    if (lower && upper)
        return PART_NONE;
    if (runs == 1)
        return last == 1 ? PART_WORD : PART_NUMBER;
    return runs <= 3 && n <= 12 ? PART_MIX : PART_NONE;
}

/* s[0..n) is a sequence of words and numbers joined by "-_.~+": every
 * part a word, a number or a short mix, one word of 3 letters or more,
 * no more mixes than words. */
static bool bearer_words(const char *s, size_t n)
{
    size_t pos = 0, words = 0, mixes = 0;
    bool long_word = false;
    while (pos <= n) {
        size_t e = pos;
        while (e < n && !bearer_sep(s[e]))
            e++;
        if (e > pos) {
            int k = bearer_part(s + pos, e - pos);
            if (k == PART_NONE)
                return false;
            words += k == PART_WORD;
            mixes += k == PART_MIX;
            long_word = long_word || (k == PART_WORD && e - pos >= 3);
        }
        pos = e + 1;
    }
    return long_word && mixes <= words;
}

static bool bearer_jwt(const char *s, size_t n)
{
    if (n < 16 || strncmp(s, "eyJ", 3) != 0)
        return false;
    size_t dots = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '.')
            dots++;
        else if (!isalnum(c) && c != '-' && c != '_' && c != '=')
            return false;
    }
    return dots == 2;
}

static bool bearer_hex(const char *s, size_t n)
{
    size_t hex = 0;
    bool digit = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isxdigit(c))
            hex++;
        else if (c != '-')
            return false;
        digit = digit || isdigit(c);
    }
    return hex >= 32 && digit;
}

static bool bearer_like(const char *s, size_t n, bool after_kw)
{
    bool alpha, digit;
    if (!bearer_chars(s, n, &alpha, &digit))
        return false;
    if (bearer_jwt(s, n) || bearer_hex(s, n))
        return true;
    if (bearer_words(s, n))
        return false;
    return after_kw ? n >= 8 && (digit || n >= 16) : n >= 16 && alpha && digit;
}

/* ---- the one word rule: bearer tokens, cards, codes (red team s17) ---- */

/* s[0..n): a payment card number: 13-19 digits, a space or '-' between
 * groups, the first digit 2-6 (the card networks' ranges; an id or a
 * millisecond timestamp begins with 1), Luhn's check passing (R7-1). */
static bool card_like(const char *s, size_t n)
{
    if (n < 13 || !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[n - 1]) ||
        s[0] < '2' || s[0] > '6')
        return false;
    unsigned digits = 0, sum = 0;
    for (size_t i = n; i-- > 0;) {
        if ((s[i] == ' ' || s[i] == '-') && isdigit((unsigned char)s[i - 1]))
            continue;
        if (!isdigit((unsigned char)s[i]) || ++digits > 19)
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (digits % 2 == 0)
            d = d * 2 > 9 ? d * 2 - 9 : d * 2;
        sum += d;
    }
    return digits >= 13 && sum % 10 == 0;
}

/* Groups of digits g[0..k): a date ("2024-01-02", "02.01.2024") or an
 * amount ("24.00"), which no code is. */
static bool date_or_amount(const size_t *g, size_t k, bool digits_only)
{
    if (!digits_only)
        return false;
    if (k == 2 && g[1] == 2)
        return true;
    return k == 3 && ((g[0] == 4 && g[1] == 2 && g[2] == 2) ||
                      (g[0] == 2 && g[1] == 2 && g[2] == 4));
}

/* s[0..n): a date of digits with '-', '.' or '/' between (never a
 * secret, whatever names it: "Code of conduct, updated 2024-01-02"). */
static bool date_like(const char *s, size_t n)
{
    size_t g[3], k = 0, len = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '-' || s[i] == '.' || s[i] == '/') {
            if (!len || k == 3)
                return false;
            g[k++] = len;
            len = 0;
        } else if (isdigit((unsigned char)s[i])) {
            len++;
        } else {
            return false;
        }
    }
    return k == 3 && date_or_amount(g, k, true);
}

/* s[0..n) after a word or key naming a secret (code, PIN, verify, ...): a
 * one-time code, a PIN or a recovery code (R7-1, R7-8). Letters and
 * digits with '-' or '.' between groups, 4 or more of them with a digit
 * ("482913", "G-482913", "7391-8426", "4f3a2-9c8b1"), or of letters alone
 * two or more groups of one length (4-6) and one case ("abcd-efgh"); not
 * a date or an amount. */
static bool code_like(const char *s, size_t n)
{
    size_t g[8], k = 0, len = 0, alnum = 0, digits = 0;
    bool lower = false, upper = false, same = true;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '-' || s[i] == '.') {
            if (!len || k == sizeof g / sizeof g[0])
                return false;
            same = same && (!k || g[0] == len);
            g[k++] = len;
            len = 0;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c))
            return false;
        len++;
        alnum++;
        digits += isdigit(c) != 0;
        lower = lower || islower(c);
        upper = upper || isupper(c);
    }
    if (date_or_amount(g, k, digits == alnum))
        return false;
    if (digits)
        return alnum >= 4;
    return k >= 2 && same && g[0] >= 4 && g[0] <= 6 && !(lower && upper);
}

/* The one rule for a word (bearer_like, card_like, code_like). */
static bool secret_shaped(const char *s, size_t n, bool after_kw)
{
    return !date_like(s, n) &&
           (bearer_like(s, n, after_kw) || card_like(s, n) || (after_kw && code_like(s, n)));
}

bool url_secret_shaped(const char *s, size_t n, bool after_kw)
{
    return s && n && secret_shaped(s, n, after_kw);
}

/* What a path segment s[0..n) says of the next one: BW_NAMED, it names a
 * secret link ("reset", "invite", "login", ...: the next segment and the
 * query's values are read after a keyword, a one-time code among them:
 * "/verify/573920", R7-1); BW_CODE, it is "code", "otp", "pin", ...: the
 * next segment only, a code too ("/otp/482913"); BW_SHORT, a short-link prefix
 * (one letter, "go", "share", "link": "/r/Kx9mQ2vB7", a magic-link code
 * of 8+ characters; red team s15, R5-2; "join", "invite": a capability
 * link, red team s18, R8-4), the next segment only, redacted unless it
 * is a plain name (cap_plain); else 0. */
enum { BW_NONE, BW_SHORT, BW_CODE, BW_NAMED };

static int bearer_word(const char *s, size_t n)
{
    static const char *const W[] = {"reset", "magic", "verif", "confirm", "invit", "activat",
                                    "login", "signin", "sign-in", "token", "auth", "unsubscribe",
                                    "callback", "ticket", "saml", NULL};
    static const char *const EXACT[] = {"otp", "code", "codes", "pin", "2fa", "mfa", "passcode",
                                        NULL};
    static const char *const SHORT[] = {"go", "ml", "link", "links", "share", "shared", "sso",
                                        "key", "join", "invite", "invites", "invitation", "s",
                                        NULL};
    char low[40];
    if (!base_lower_copy(low, sizeof low, s, n))
        return BW_NONE;
    for (size_t i = 0; W[i]; i++)
        if (strstr(low, W[i]))
            return BW_NAMED;
    for (size_t i = 0; EXACT[i]; i++)
        if (strcmp(low, EXACT[i]) == 0)
            return BW_CODE;
    if (n == 1 && isalpha((unsigned char)low[0]))
        return BW_SHORT;
    for (size_t i = 0; SHORT[i]; i++)
        if (strcmp(low, SHORT[i]) == 0)
            return BW_SHORT;
    return BW_NONE;
}

static bool word_in(const char *w, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(w, list[i]) == 0)
            return true;
    return false;
}

/* Where a word of a query key ends: at a character that is no letter or
 * digit, or at a camelCase boundary ("accessToken", "APIKey"). */
static size_t key_word_end(const char *k, size_t n, size_t i)
{
    for (i++; i < n && isalnum((unsigned char)k[i]); i++) {
        unsigned char c = (unsigned char)k[i], p = (unsigned char)k[i - 1];
        bool next_lower = i + 1 < n && islower((unsigned char)k[i + 1]);
        if (isupper(c) && (islower(p) || (isupper(p) && next_lower)))
            break;
    }
    return i;
}

/* What a query key k[0..n) says of its value: KEY_STRONG, a secret
 * whatever it looks like (a token, password, signature, ticket, API key,
 * magic link: "access_token", "accessToken", "X-Amz-Signature",
 * "apikey"); KEY_WEAK, a secret when it is shaped like one (an OAuth
 * "code" or "state", a "key", a "hash"); else KEY_PLAIN. One rule, by
 * the key's words: split at non-alphanumerics and camelCase boundaries,
 * lower-cased; words run together ("resettoken", "sessiontoken") are
 * caught by the strong parts found anywhere in the key. */
enum { KEY_PLAIN, KEY_WEAK, KEY_STRONG };

static int key_secret(const char *k, size_t n)
{
    static const char *const SUB[] = {"token", "secret", "passw", "apikey", "signature",
                                      "credential", "ticket", "magic", "bearer", "jwt", "saml",
                                      "phrase", "mnemonic", NULL};
    static const char *const STRONG[] = {"sig", "pwd", "pw", "pword", "pass", "passcode", "otp",
                                         "auth", "authorization", "assertion", "hmac", "pin",
                                         "mfa", "sid", "seed", NULL};
    static const char *const WEAK[] = {"code", "state", "key", "hash", "reset", "verify",
                                       "verification", "confirm", "confirmation", "invite",
                                       "invitation", "activation", "activate", "access",
                                       NULL};
    char joined[65], w[65];
    size_t j = 0;
    for (size_t i = 0; i < n && j < sizeof joined - 1; i++)
        if (isalnum((unsigned char)k[i]))
            joined[j++] = (char)tolower((unsigned char)k[i]);
    joined[j] = '\0';
    for (size_t i = 0; SUB[i]; i++)
        if (strstr(joined, SUB[i]))
            return KEY_STRONG;
    int kind = KEY_PLAIN;
    for (size_t i = 0; i < n;) {
        if (!isalnum((unsigned char)k[i])) {
            i++;
            continue;
        }
        size_t e = key_word_end(k, n, i);
        if (base_lower_copy(w, sizeof w, k + i, e - i)) {
            if (word_in(w, STRONG))
                return KEY_STRONG;
            if (word_in(w, WEAK))
                kind = KEY_WEAK;
        }
        i = e;
    }
    return kind;
}

/* Is k[0..kn)'s word list (split as key_secret splits, lower-cased) or
 * its letters and digits run together (joined) one of list / holding one
 * of parts? */
static bool key_has(const char *k, size_t kn, const char *joined, const char *const *list,
                    const char *const *parts)
{
    for (size_t i = 0; parts && parts[i]; i++)
        if (strstr(joined, parts[i]))
            return true;
    char w[65];
    for (size_t i = 0; list && i < kn;) {
        if (!isalnum((unsigned char)k[i])) {
            i++;
            continue;
        }
        size_t e = key_word_end(k, kn, i);
        if (base_lower_copy(w, sizeof w, k + i, e - i) && word_in(w, list))
            return true;
        i = e;
    }
    return false;
}

/* Personal data and session ids under their usual keys (red team s15,
 * R5-2), for both parts of the rule:
 *  - always: a session id ("JSESSIONID", "session_id", "sessId"), a
 *    social security number, a card's security code, an IBAN;
 *  - when the value holds 3 digits or more: a card or account number
 *    ("card", "cc", "cardNumber", "acct", "account_no", "routing",
 *    "sortcode"): "card=gift", "cc=US", "account=settings" stay;
 *  - under the one-letter key "p": a value of one word mixing letters and
 *    digits or holding a symbol (a password: "p=hunter2"), not a number
 *    or words (a page "p=2", Yahoo's search "p=walnut+lamp"), nor a text
 *    holding '/', '?', '#', ';', ':' or '['. */
static bool key_personal(const char *k, size_t kn, const char *v, size_t vn)
{
    static const char *const ALWAYS[] = {"ssn", "cvv", "cvv2", "cvc", "cvc2", "csc", "cvn",
                                         "iban", "sid", NULL};
    static const char *const ALWAYS_IN[] = {"sessionid", "sessid", "socialsecurity",
                                            "securitycode", NULL};
    static const char *const NUM[] = {"card", "cc", "acct", "routing", "bsb", NULL};
    static const char *const NUM_IN[] = {"cardnum", "cardno", "creditcard", "debitcard", "ccnum",
                                         "accountnum", "accountno", "accountnr", "acctnum",
                                         "acctno", "sortcode", NULL};
    char joined[65];
    size_t j = 0;
    for (size_t i = 0; i < kn && j < sizeof joined - 1; i++)
        if (isalnum((unsigned char)k[i]))
            joined[j++] = (char)tolower((unsigned char)k[i]);
    joined[j] = 0;
    if (key_has(k, kn, joined, ALWAYS, ALWAYS_IN))
        return true;
    size_t digits = 0, alpha = 0, other = 0;
    for (size_t i = 0; i < vn; i++) {
        unsigned char c = (unsigned char)v[i];
        digits += isdigit(c) != 0;
        alpha += isalpha(c) != 0;
        other += !isalnum(c) && !strchr("-_.", c);
    }
    if (digits >= 3 && key_has(k, kn, joined, NUM, NUM_IN))
        return true;
    /* "p": one word, not a text holding delimiters (a nested URL: what
     * its scrub hides or keeps may never turn the whole value into a
     * password on a second pass: idempotent, fuzz_url) */
    bool word = true;
    for (size_t i = 0; i < vn && word; i++)
        word = !strchr("+/?#;:[", v[i]) &&
               !(v[i] == '%' && i + 2 < vn && v[i + 1] == '2' && v[i + 2] == '0');
    return strcmp(joined, "p") == 0 && kn == 1 && word && ((digits && alpha) || other);
}

/* The query q[0..n) (after the '?') into b with the value of each
 * parameter that is a secret written "[redacted]" (the key kept): under
 * a strong key any value, under a weak key or after a path segment naming
 * a secret link (kw) one shaped like a token, under any key a JWT, a hex
 * digest or a token-shaped text (bearer_like). A parameter without '=' is
 * a value. */
static void put_query_scrubbed(base_buf *b, const char *q, size_t n, bool kw, int depth)
{
    static const redact_ctx tokens = {.tokens = true};
    size_t pos = 0;
    while (pos <= n) {
        size_t end = (size_t)(pair_end(q + pos, q + n) - q);
        const char *eq = memchr(q + pos, '=', end - pos);
        size_t klen = eq ? (size_t)(eq - (q + pos)) : 0;
        size_t vat = eq ? pos + klen + 1 : pos;
        int ks = eq ? key_secret(q + pos, klen) : KEY_PLAIN;
        bool secret = end > vat && (ks == KEY_STRONG ||
                                    (eq && key_personal(q + pos, klen, q + vat, end - vat)) ||
                                    secret_shaped(q + vat, end - vat, kw || ks == KEY_WEAK));
        base_buf_put(b, q + pos, vat - pos);
        if (secret)
            base_buf_puts(b, "[redacted]");
        else
            put_value(b, q + vat, end - vat, &tokens, depth);
        if (end < n)
            base_buf_putc(b, q[end]);
        pos = end + 1;
    }
}

/* A segment after a short-link or capability prefix that is a plain name
 * or number, kept ("/share/settings", "/p/123456"): lower-case letters
 * with '-', '_', '.', or digits alone. Anything else there ("/share/
 * AbCdEfGh", "/join/BRIGHT-OTTER-HAPPY-42", "/s/Xk9pQ2") is the link's
 * key (red team s18, R8-4). */
static bool cap_plain(const char *s, size_t n)
{
    bool digits = n > 0, lower = n > 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        digits = digits && isdigit(c);
        lower = lower && (islower(c) || c == '-' || c == '_' || c == '.');
    }
    return digits || lower;
}

/* u (the path and what follows it, after the authority) with bearer-like
 * path segments (a segment's part before its parameters; the parameters'
 * values hidden), secret query values and a fragment holding values or a
 * bearer-like text written "[redacted]", into b. */
static void put_path_scrubbed(base_buf *b, const char *u, int depth)
{
    size_t plen = strcspn(u, "?#");
    size_t pos = 0;
    int kw = BW_NONE;
    bool any_kw = false;
    while (pos < plen) {
        if (u[pos] == '/') {
            base_buf_putc(b, '/');
            pos++;
            continue;
        }
        size_t n = strcspn(u + pos, "/?#"), core = strcspn(u + pos, "/?#;");
        if (bearer_like(u + pos, core, kw != BW_NONE) || card_like(u + pos, core) ||
            ((kw == BW_NAMED || kw == BW_CODE) && code_like(u + pos, core)) ||
            (kw == BW_SHORT && !cap_plain(u + pos, core)))
            base_buf_puts(b, "[redacted]");
        else
            base_buf_put(b, u + pos, core);
        put_seg_params(b, u + pos + core, n - core);
        kw = bearer_word(u + pos, core);
        any_kw = any_kw || kw == BW_NAMED;
        pos += n;
    }
    const char *frag = strchr(u + plen, '#');
    size_t qlen = frag ? (size_t)(frag - (u + plen)) : strlen(u + plen);
    if (qlen) {
        base_buf_putc(b, '?');
        put_query_scrubbed(b, u + plen + 1, qlen - 1, any_kw, depth);
    }
    if (!frag)
        return;
    if (strchr(frag, '=') || secret_shaped(frag + 1, strlen(frag + 1), false))
        base_buf_puts(b, "#[redacted]");
    else
        base_buf_puts(b, frag);
}

/* Does url start with a scheme ("https:", "mailto:")? */
static bool has_scheme(const char *url)
{
    size_t n = strcspn(url, ":/?#");
    if (!n || url[n] != ':' || !isalpha((unsigned char)url[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)url[i]) && !strchr("+-.", url[i]))
            return false;
    return true;
}

/* url (redacted by name) with the bearer rule applied: the userinfo, then
 * the path, query and fragment. */
static char *redact_tokens(const char *url, int depth)
{
    /* The authority follows a scheme at the start ("https://", also
     * "blob:https://"), never a "://" met later: a relative address or a
     * text holding a URL in its query is scrubbed as a path and query as a
     * whole (make fuzz, fuzz_url: a nested "http://" taken for the
     * authority left the text before it unscrubbed, so a second pass hid
     * more than the first). A text with no scheme at all (a relative
     * address, a return address inside a value) is all path, query and
     * fragment; an opaque URL's text (data:, mailto:) is kept. */
    const char *s = strstr(url, "://");
    if (s) {
        const char *c = url;
        bool scheme = isalpha((unsigned char)*c);
        for (; scheme && c < s; c++)
            scheme = isalnum((unsigned char)*c) || strchr("+-.:", *c) != NULL;
        if (!scheme)
            s = NULL;
    }
    const char *auth = s ? s + 3 : NULL;
    size_t alen = auth ? strcspn(auth, "/\\?#") : 0;
    const char *path = auth ? auth + alen : has_scheme(url) ? url + strlen(url) : url;
    const char *at = NULL;   /* the userinfo's end: its last '@' */
    for (size_t i = 0; i < alen; i++)
        if (auth[i] == '@')
            at = auth + i;
    base_buf b = {0};
    if (at) {
        base_buf_put(&b, url, (size_t)(auth - url));
        base_buf_puts(&b, "[redacted]");
        base_buf_put(&b, at, (size_t)(path - at));
    } else {
        base_buf_put(&b, url, (size_t)(path - url));
    }
    put_path_scrubbed(&b, path, depth);
    return base_buf_take(&b, NULL);
}

char *url_redact(const char *url, unsigned flags, const char *const *fields)
{
    redact_ctx c = {.strict = (flags & URL_REDACT_STRICT) != 0, .fields = fields};
    char *r = redact_query(url, &c, 0);
    if (!r || !(flags & URL_REDACT_TOKENS))
        return r;
    char *t = redact_tokens(r, 0);
    free(r);
    return t;
}
