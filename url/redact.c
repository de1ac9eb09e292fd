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
    "password", "passwd", "pwd", "pass", "passcode", "passphrase", "otp", "totp", "hotp",
    "secret", "token", "apikey", "sig", "signature", "credential", "credentials", "pin", NULL,
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

/* Redact name=value pairs of [p, end) separated by '&' or ';' into b. */
static void redact_pairs(base_buf *b, const char *p, const char *end, bool strict,
                         const char *const *fields)
{
    while (p < end) {
        const char *amp = p;
        while (amp < end && *amp != '&' && *amp != ';')
            amp++;
        const char *eq = memchr(p, '=', (size_t)(amp - p));
        if (eq && secret_param(p, (size_t)(eq - p), strict, fields) && eq + 1 < amp) {
            base_buf_put(b, p, (size_t)(eq + 1 - p));
            base_buf_printf(b, "[redacted]");
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

static char *redact_query(const char *url, bool strict, const char *const *fields)
{
    if (!url)
        return NULL;
    base_buf b = {0};
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
    base_buf_put(&b, p, (size_t)((qm ? qm : qend) - p));
    if (qm) {
        bool st = strict || (has_param(qm + 1, qend, "state") && has_param(qm + 1, qend, "code"));
        base_buf_put(&b, "?", 1);
        redact_pairs(&b, qm + 1, qend, st, fields);
    }
    if (hash) {
        base_buf_put(&b, "#", 1);
        if (memchr(hash + 1, '=', (size_t)(end - hash - 1))) {
            bool st = strict || (has_param(hash + 1, end, "state") &&
                                 has_param(hash + 1, end, "code"));
            redact_pairs(&b, hash + 1, end, st, fields);
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

static bool bearer_word(const char *s, size_t n)
{
    static const char *const W[] = {"reset", "magic", "verif", "confirm", "invit", "activat",
                                    "login", "signin", "sign-in", "token", "auth", "unsubscribe",
                                    "callback", "ticket", "saml", NULL};
    char low[40];
    if (!base_lower_copy(low, sizeof low, s, n))
        return false;
    for (size_t i = 0; W[i]; i++)
        if (strstr(low, W[i]))
            return true;
    return false;
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
                                      NULL};
    static const char *const STRONG[] = {"sig", "pwd", "pass", "passcode", "otp", "auth",
                                         "authorization", "assertion", "hmac", "pin", "mfa",
                                         NULL};
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

/* The query q[0..n) (after the '?') into b with the value of each
 * parameter that is a secret written "[redacted]" (the key kept): under
 * a strong key any value, under a weak key or after a path segment naming
 * a secret link (kw) one shaped like a token, under any key a JWT, a hex
 * digest or a token-shaped text (bearer_like). A parameter without '=' is
 * a value. */
static void put_query_scrubbed(base_buf *b, const char *q, size_t n, bool kw)
{
    size_t pos = 0;
    while (pos <= n) {
        const char *amp = memchr(q + pos, '&', n - pos);
        size_t end = amp ? (size_t)(amp - q) : n;
        const char *eq = memchr(q + pos, '=', end - pos);
        size_t klen = eq ? (size_t)(eq - (q + pos)) : 0;
        size_t vat = eq ? pos + klen + 1 : pos;
        int ks = eq ? key_secret(q + pos, klen) : KEY_PLAIN;
        bool secret = end > vat && (ks == KEY_STRONG ||
                                    bearer_like(q + vat, end - vat, kw || ks == KEY_WEAK));
        base_buf_put(b, q + pos, vat - pos);
        if (secret)
            base_buf_puts(b, "[redacted]");
        else
            base_buf_put(b, q + vat, end - vat);
        if (amp)
            base_buf_putc(b, '&');
        pos = end + 1;
    }
}

/* u (the path and what follows it, after the authority) with bearer-like
 * path segments, secret query values and a fragment holding values or a
 * bearer-like text written "[redacted]", into b. */
static void put_path_scrubbed(base_buf *b, const char *u)
{
    size_t plen = strcspn(u, "?#");
    size_t pos = 0;
    bool kw = false, any_kw = false;
    while (pos < plen) {
        if (u[pos] == '/') {
            base_buf_putc(b, '/');
            pos++;
            continue;
        }
        size_t n = strcspn(u + pos, "/?#");
        if (bearer_like(u + pos, n, kw))
            base_buf_puts(b, "[redacted]");
        else
            base_buf_put(b, u + pos, n);
        kw = bearer_word(u + pos, n);
        any_kw = any_kw || kw;
        pos += n;
    }
    const char *frag = strchr(u + plen, '#');
    size_t qlen = frag ? (size_t)(frag - (u + plen)) : strlen(u + plen);
    if (qlen) {
        base_buf_putc(b, '?');
        put_query_scrubbed(b, u + plen + 1, qlen - 1, any_kw);
    }
    if (!frag)
        return;
    if (strchr(frag, '=') || bearer_like(frag + 1, strlen(frag + 1), false))
        base_buf_puts(b, "#[redacted]");
    else
        base_buf_puts(b, frag);
}

/* url (redacted by name) with the bearer rule applied: the userinfo, then
 * the path, query and fragment. */
static char *redact_tokens(const char *url)
{
    /* The authority follows a scheme at the start ("https://", also
     * "blob:https://"), never a "://" met later: a relative address or a
     * text holding a URL in its query is scrubbed as a path and query as a
     * whole (make fuzz, fuzz_url: a nested "http://" taken for the
     * authority left the text before it unscrubbed, so a second pass hid
     * more than the first). */
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
    const char *path = auth ? auth + alen : url + strlen(url);
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
    put_path_scrubbed(&b, path);
    return base_buf_take(&b, NULL);
}

char *url_redact(const char *url, unsigned flags, const char *const *fields)
{
    char *r = redact_query(url, (flags & URL_REDACT_STRICT) != 0, fields);
    if (!r || !(flags & URL_REDACT_TOKENS))
        return r;
    char *t = redact_tokens(r);
    free(r);
    return t;
}
