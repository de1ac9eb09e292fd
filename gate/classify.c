/*
 * classify.c — the classifier: which class of action a request is (read,
 * interact, auth_change, consequential, credential) and, when consequential,
 * which kind (send, publish, purchase, delete, production_change).
 *
 * Pure and bounded: no allocation, no I/O; a string is read a window of
 * at most SCAN_MAX bytes and WORDS_MAX words at a time; the words a name,
 * a text, a dialog or a field is judged by (match_conseq, match_cred) are
 * read whole, window after window, each overlapping the last by
 * WINDOW_OVERLAP words (red team s11, S9: a consequential word after 128
 * words of filler was never read). docs/gate.md has the rules and the
 * word lists in prose; the tables below are the source of truth.
 *
 * Implementation notes. Strings are first folded as snapshot/'s query
 * matcher folds them (gate_char_fold: zero-width, bidi and other invisible
 * characters read as nothing, so "Dele\u200bte" is "Delete"; white space
 * beyond ASCII as a space; full-width forms as ASCII), non-ASCII
 * punctuation read as a space; then split into words: runs of ASCII
 * letters and digits (other bytes >= 0x80 count as letters, so non-ASCII
 * words never match an ASCII phrase); field attributes are also split at camelCase humps
 * ("oneTimeCode"). A phrase is a sequence of lower-case words matched
 * case-insensitively on whole words ("pin" never matches "spinner"); "*" in
 * a phrase stands for any number of words ("email * to"). A phrase may be
 * tied to the first word (FIRST: "Post comment" but not "Blog post") or to
 * the whole string (WHOLE: "Merge" but not "Merge cells"). Exclusion phrases
 * ("remove from cart", "order history") mask their words first, so the words
 * inside them count for nothing. At one string the longest matching phrase
 * wins; across strings the first string with a match wins (name, visible
 * text, dialog message, row behind a generic button, submit button, form
 * action path), so a button whose text says "OK" and whose accessible name
 * says "Delete repository" is a delete: the more dangerous reading wins.
 *
 * The words of a URL (a GET's, a request's path, the query's act keys)
 * are read in urlread.c with this file's phrases (gate_phrase_url,
 * gate_phrase_path); the acts named noun first or joined in urlact.c.
 */
#include "gate/gate_int.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SCAN_MAX 4096u
#define WORDS_MAX 128u
#define WINDOW_OVERLAP 32u   /* words a window shares with the one before it */

/* Where a phrase may stand (rule.at's low bits) and, in CONSEQ, which
 * strings it is read in (its high bits): a name's (no flag), also a GET
 * URL's (URL), or only a GET URL's (URL_ONLY). */
enum { AT_ANY, AT_FIRST, AT_WHOLE, AT_BITS = 3 };
enum { URL = 0x10, NOT_NAME = 0x20, URL_ONLY = URL | NOT_NAME };

typedef struct {
    const char *phrase;
    unsigned char kind;         /* GATE_CONSEQ_*, or 1 for credential tables */
    unsigned char at;           /* AT_* | URL, URL_ONLY */
} rule;

#define N(t) (sizeof(t) / sizeof((t)[0]))

/* Consequential phrases on names, text, dialog messages, rows; those
 * marked URL (or URL_ONLY) also in the words of a GET URL on an
 * authenticated service (an open, a link's href, a GET form's action;
 * path and query, percent-decoded, camelCase split): verbs that, on an
 * endpoint a GET reaches, do the thing. Not the nouns of PATH (orders,
 * messages, payments) nor page words (transfer, pay, checkout, post): they
 * name pages that show a form, which a read may open. Whole query values
 * of urlread.c's URLV_VALUE count too (op=close). */
static const rule CONSEQ[] = {
    {"send", GATE_CONSEQ_SEND, AT_ANY | URL},
    {"send now", GATE_CONSEQ_SEND, AT_ANY},
    {"send money", GATE_CONSEQ_SEND, AT_ANY | URL},
    {"sendmail", GATE_CONSEQ_SEND, AT_ANY | URL_ONLY},
    {"transfer", GATE_CONSEQ_SEND, AT_ANY},
    {"confirm transfer", GATE_CONSEQ_SEND, AT_ANY | URL_ONLY},
    {"wire", GATE_CONSEQ_SEND, AT_ANY | URL},
    {"pay", GATE_CONSEQ_SEND, AT_ANY},
    {"remit", GATE_CONSEQ_SEND, AT_ANY | URL},
    {"submit payment", GATE_CONSEQ_SEND, AT_ANY | URL},
    {"make payment", GATE_CONSEQ_SEND, AT_ANY | URL},
    {"make a payment", GATE_CONSEQ_SEND, AT_ANY},
    {"confirm payment", GATE_CONSEQ_SEND, AT_ANY | URL},
    {"schedule payment", GATE_CONSEQ_SEND, AT_ANY},
    {"authorize payment", GATE_CONSEQ_SEND, AT_ANY | URL},
    {"reply", GATE_CONSEQ_SEND, AT_ANY},
    {"reply all", GATE_CONSEQ_SEND, AT_ANY},
    {"forward", GATE_CONSEQ_SEND, AT_ANY},
    {"email * to", GATE_CONSEQ_SEND, AT_FIRST},
    {"mail * to", GATE_CONSEQ_SEND, AT_FIRST},

    {"publish", GATE_CONSEQ_PUBLISH, AT_ANY | URL},
    {"post", GATE_CONSEQ_PUBLISH, AT_FIRST},
    {"tweet", GATE_CONSEQ_PUBLISH, AT_ANY | URL},
    {"retweet", GATE_CONSEQ_PUBLISH, AT_ANY | URL},
    {"repost", GATE_CONSEQ_PUBLISH, AT_ANY | URL},
    {"share publicly", GATE_CONSEQ_PUBLISH, AT_ANY},
    {"go live", GATE_CONSEQ_PUBLISH, AT_ANY},
    {"make public", GATE_CONSEQ_PUBLISH, AT_ANY | URL},
    {"make it public", GATE_CONSEQ_PUBLISH, AT_ANY},
    {"comment", GATE_CONSEQ_PUBLISH, AT_WHOLE},

    {"buy", GATE_CONSEQ_PURCHASE, AT_ANY | URL},
    {"buy now", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"purchase", GATE_CONSEQ_PURCHASE, AT_ANY | URL},
    {"place order", GATE_CONSEQ_PURCHASE, AT_ANY | URL},
    {"place your order", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"confirm order", GATE_CONSEQ_PURCHASE, AT_ANY | URL},
    {"submit order", GATE_CONSEQ_PURCHASE, AT_ANY | URL},
    {"complete order", GATE_CONSEQ_PURCHASE, AT_ANY | URL},
    {"checkout", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"check out", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"order now", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"subscribe", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"pay now", GATE_CONSEQ_PURCHASE, AT_ANY | URL},
    {"donate", GATE_CONSEQ_PURCHASE, AT_ANY | URL},
    {"book now", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"reserve", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"confirm booking", GATE_CONSEQ_PURCHASE, AT_ANY | URL},
    {"upgrade now", GATE_CONSEQ_PURCHASE, AT_ANY},

    {"delete", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"remove", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"destroy", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"erase", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"wipe", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"purge", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"terminate", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"revoke", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"unsubscribe", GATE_CONSEQ_DELETE, AT_ANY | URL_ONLY},
    {"deactivate", GATE_CONSEQ_DELETE, AT_ANY | URL_ONLY},
    {"drop", GATE_CONSEQ_DELETE, AT_WHOLE},
    {"drop table", GATE_CONSEQ_DELETE, AT_ANY},
    {"drop database", GATE_CONSEQ_DELETE, AT_ANY},
    {"close account", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"close my account", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"close your account", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"deactivate account", GATE_CONSEQ_DELETE, AT_ANY},
    {"empty trash", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"cancel subscription", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"cancel my subscription", GATE_CONSEQ_DELETE, AT_ANY},
    {"cancel membership", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"cancel order", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"cancel booking", GATE_CONSEQ_DELETE, AT_ANY | URL},
    {"cancel reservation", GATE_CONSEQ_DELETE, AT_ANY},

    {"deploy", GATE_CONSEQ_PRODUCTION, AT_ANY | URL},
    {"deploy to production", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"production", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"prod", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"promote", GATE_CONSEQ_PRODUCTION, AT_ANY | URL},
    {"rollout", GATE_CONSEQ_PRODUCTION, AT_ANY | URL},
    {"roll out", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"rollback", GATE_CONSEQ_PRODUCTION, AT_ANY | URL},
    {"roll back", GATE_CONSEQ_PRODUCTION, AT_ANY | URL},
    {"merge", GATE_CONSEQ_PRODUCTION, AT_WHOLE},
    {"merge pull request", GATE_CONSEQ_PRODUCTION, AT_ANY | URL},
    {"merge to main", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"merge into main", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"merge to master", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"merge into master", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"merge branch", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"squash and merge", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"rebase and merge", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"confirm merge", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"apply to production", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"migrate", GATE_CONSEQ_PRODUCTION, AT_ANY | URL},
    {"migrate database", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"run migrations", GATE_CONSEQ_PRODUCTION, AT_ANY},
};

/* Words that look consequential but name UI state, navigation or history:
 * masked before CONSEQ is matched. */
static const rule MASK[] = {
    {"remove from cart", 0, AT_ANY},
    {"remove from basket", 0, AT_ANY},
    {"remove from bag", 0, AT_ANY},
    {"remove from wishlist", 0, AT_ANY},
    {"remove filter", 0, AT_ANY},
    {"remove filters", 0, AT_ANY},
    {"remove all filters", 0, AT_ANY},
    {"remove sort", 0, AT_ANY},
    {"remove selection", 0, AT_ANY},
    {"post code", 0, AT_ANY},
    {"fast forward", 0, AT_ANY},
    {"transfer history", 0, AT_ANY},
    {"payment history", 0, AT_ANY},
    {"order history", 0, AT_ANY},
    {"purchase history", 0, AT_ANY},
    {"deploy history", 0, AT_ANY},
    {"deployment history", 0, AT_ANY},
    {"order status", 0, AT_ANY},
    {"track order", 0, AT_ANY},
};

/* Form action path segments (POST or unknown method): nouns and verbs that
 * APIs and form handlers are named after. */
static const rule PATH[] = {
    {"send", GATE_CONSEQ_SEND, AT_ANY},
    {"transfer", GATE_CONSEQ_SEND, AT_ANY},
    {"transfers", GATE_CONSEQ_SEND, AT_ANY},
    {"payment", GATE_CONSEQ_SEND, AT_ANY},
    {"payments", GATE_CONSEQ_SEND, AT_ANY},
    {"pay", GATE_CONSEQ_SEND, AT_ANY},
    {"wire", GATE_CONSEQ_SEND, AT_ANY},
    {"remit", GATE_CONSEQ_SEND, AT_ANY},
    {"message", GATE_CONSEQ_SEND, AT_ANY},
    {"messages", GATE_CONSEQ_SEND, AT_ANY},
    {"mail", GATE_CONSEQ_SEND, AT_ANY},
    {"email", GATE_CONSEQ_SEND, AT_ANY},
    {"sendmail", GATE_CONSEQ_SEND, AT_ANY},
    {"reply", GATE_CONSEQ_SEND, AT_ANY},
    {"forward", GATE_CONSEQ_SEND, AT_ANY},
    {"publish", GATE_CONSEQ_PUBLISH, AT_ANY},
    {"post", GATE_CONSEQ_PUBLISH, AT_ANY},
    {"posts", GATE_CONSEQ_PUBLISH, AT_ANY},
    {"comment", GATE_CONSEQ_PUBLISH, AT_ANY},
    {"comments", GATE_CONSEQ_PUBLISH, AT_ANY},
    {"tweet", GATE_CONSEQ_PUBLISH, AT_ANY},
    {"order", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"orders", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"checkout", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"purchase", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"purchases", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"buy", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"subscribe", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"subscriptions", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"donate", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"booking", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"bookings", GATE_CONSEQ_PURCHASE, AT_ANY},
    {"delete", GATE_CONSEQ_DELETE, AT_ANY},
    {"destroy", GATE_CONSEQ_DELETE, AT_ANY},
    {"remove", GATE_CONSEQ_DELETE, AT_ANY},
    {"erase", GATE_CONSEQ_DELETE, AT_ANY},
    {"purge", GATE_CONSEQ_DELETE, AT_ANY},
    {"revoke", GATE_CONSEQ_DELETE, AT_ANY},
    {"terminate", GATE_CONSEQ_DELETE, AT_ANY},
    {"deploy", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"deploys", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"deployment", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"deployments", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"rollout", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"promote", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"migrate", GATE_CONSEQ_PRODUCTION, AT_ANY},
    {"merge", GATE_CONSEQ_PRODUCTION, AT_ANY},
};


/* A button made only of these words ("OK", "Yes, I'm sure", "Continue")
 * says nothing itself: its row or dialog context is read instead. */
static const char *const GENERIC[] = {
    "ok", "okay", "yes", "confirm", "continue", "proceed", "submit", "done", "i", "m",
    "am", "understand", "agree", "accept", "apply", "sure", "go", "save",
};

/* Credential or challenge, on any state-changing target. */
static const rule CRED[] = {
    {"otp", 1, AT_ANY}, {"totp", 1, AT_ANY},
    {"one time code", 1, AT_ANY}, {"one time password", 1, AT_ANY},
    {"one time passcode", 1, AT_ANY}, {"one time pin", 1, AT_ANY},
    {"verification code", 1, AT_ANY}, {"security code", 1, AT_ANY},
    {"sms code", 1, AT_ANY}, {"authenticator code", 1, AT_ANY},
    {"2fa", 1, AT_ANY}, {"mfa", 1, AT_ANY}, {"two factor", 1, AT_ANY},
    {"2 step verification", 1, AT_ANY}, {"two step verification", 1, AT_ANY},
    {"passcode", 1, AT_ANY}, {"passkey", 1, AT_ANY}, {"passkeys", 1, AT_ANY},
    {"webauthn", 1, AT_ANY}, {"security key", 1, AT_ANY},
    {"cvv", 1, AT_ANY}, {"cvv2", 1, AT_ANY}, {"cvc", 1, AT_ANY}, {"cvc2", 1, AT_ANY},
    {"csc", 1, AT_ANY},
    {"captcha", 1, AT_ANY}, {"recaptcha", 1, AT_ANY}, {"hcaptcha", 1, AT_ANY},
    {"turnstile", 1, AT_ANY}, {"i m not a robot", 1, AT_ANY},
    {"identity check", 1, AT_ANY}, {"verify it s you", 1, AT_ANY},
    {"verify it is you", 1, AT_ANY}, {"confirm it s you", 1, AT_ANY},
    {"verify your identity", 1, AT_ANY}, {"confirm your identity", 1, AT_ANY},
};

/* Credential words that count only on a text-entry target (a "Pin" button
 * pins a post; a "Forgot password?" link is navigation). */
static const rule CRED_ENTRY[] = {
    {"password", 1, AT_ANY}, {"passwd", 1, AT_ANY}, {"pwd", 1, AT_ANY},
    {"passphrase", 1, AT_ANY}, {"pin", 1, AT_ANY}, {"pincode", 1, AT_ANY},
    {"secret", 1, AT_ANY},
};

/* Words beside a code-shaped field that make it a one-time-code field
 * (code_near), besides CRED's. */
static const rule CODE_NEAR[] = {
    {"digit code", 1, AT_ANY}, {"code we sent", 1, AT_ANY}, {"code we texted", 1, AT_ANY},
    {"code we emailed", 1, AT_ANY}, {"code sent to", 1, AT_ANY},
    {"code you received", 1, AT_ANY}, {"confirmation code", 1, AT_ANY},
    {"login code", 1, AT_ANY}, {"sign in code", 1, AT_ANY},
    {"authentication code", 1, AT_ANY},
};

/* Words in a frame URL (host and path) that mark a challenge frame. */
static const rule FRAME[] = {
    {"captcha", 1, AT_ANY}, {"recaptcha", 1, AT_ANY}, {"hcaptcha", 1, AT_ANY},
    {"turnstile", 1, AT_ANY}, {"challenge", 1, AT_ANY}, {"challenges", 1, AT_ANY},
    {"funcaptcha", 1, AT_ANY}, {"arkoselabs", 1, AT_ANY},
};

static const char *const AUTOCOMPLETE_CRED[] = {
    "current-password", "new-password", "one-time-code", "webauthn", "cc-csc",
};

/* ---- words ---- */

typedef struct {
    char s[SCAN_MAX + 1]; /* the string folded (fold_copy) */
    size_t n;
    unsigned short off[WORDS_MAX];
    unsigned char len[WORDS_MAX];
    bool masked[WORDS_MAX];
} words;

static bool word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80;
}

static bool camel_hump(const char *s, size_t i)
{
    return i > 0 && s[i] >= 'A' && s[i] <= 'Z' && s[i - 1] >= 'a' && s[i - 1] <= 'z';
}

/* Punctuation and symbols beyond ASCII that end a word as ASCII
 * punctuation does ("Delete\u2026", "Delete\u2014account"): Latin-1's
 * (but its letters ª µ º), the general punctuation block, CJK's. */
static bool punct_at(const unsigned char *p, size_t l)
{
    uint32_t c = l == 2 ? ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu)
               : l == 3 ? ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu)
               : 0;
    return (c >= 0xA1 && c <= 0xBF && c != 0xAA && c != 0xB5 && c != 0xBA) || c == 0xD7 ||
           c == 0xF7 || (c >= 0x2010 && c <= 0x205E) || (c >= 0x3001 && c <= 0x3003) ||
           (c >= 0x3008 && c <= 0x3011);
}

/* Copy the first SCAN_MAX bytes of s into out (SCAN_MAX + 1), folded as
 * snapshot/'s query matcher folds (gate_char_fold: invisible characters
 * read as nothing, so "Dele\u200bte" is "Delete"; white space beyond
 * ASCII as a space; full-width forms as ASCII), and non-ASCII punctuation
 * as a space. Never longer than s. */
static void fold_copy(char *out, const char *s)
{
    size_t i = 0, o = 0, n = strnlen(s, SCAN_MAX);
    while (i < n) {
        size_t l;
        int f = gate_char_fold(s + i, n - i, &l);
        if (f == GATE_FOLD_DROP) {
        } else if (f) {
            out[o++] = (char)f;
        } else if (l > 1 && punct_at((const unsigned char *)s + i, l)) {
            out[o++] = ' ';
        } else {
            memcpy(out + o, s + i, l);
            o += l;
        }
        i += l;
    }
    out[o] = 0;
}

/* The bytes of s (as fold_copy reads them) that fold to its first fo
 * output bytes. */
static size_t fold_in(const char *s, size_t fo)
{
    size_t i = 0, o = 0, n = strnlen(s, SCAN_MAX);
    while (i < n && o < fo) {
        size_t l;
        int f = gate_char_fold(s + i, n - i, &l);
        if (f == GATE_FOLD_DROP)
            ;
        else if (f || (l > 1 && punct_at((const unsigned char *)s + i, l)))
            o++;
        else
            o += l;
        i += l;
    }
    return i;
}

static void words_split(words *w, const char *s, bool camel)
{
    fold_copy(w->s, s ? s : "");
    w->n = 0;
    size_t i = 0;
    while (w->n < WORDS_MAX && w->s[i]) {
        /* The mask cdpgate writes where a secret field's text was (the
         * view and the gate's facts: "[secret]") is no word of the text:
         * a row or label holding a masked field is not a credential name
         * for that (a page writing it gains nothing a name without the
         * word would not). */
        if (w->s[i] == '[' && strncasecmp(w->s + i, "[secret]", 8) == 0) {
            i += 8;
            continue;
        }
        if (!word_byte((unsigned char)w->s[i])) {
            i++;
            continue;
        }
        size_t b = i++;
        while (word_byte((unsigned char)w->s[i]) && !(camel && camel_hump(w->s, i)))
            i++;
        w->off[w->n] = (unsigned short)b;
        w->len[w->n] = (unsigned char)(i - b > 255 ? 255 : i - b);
        w->masked[w->n] = false;
        w->n++;
    }
}

/* Words of phrase p (from *p) matched from word i; returns the words used
 * or 0. "*" matches any run of words, shortest first. */
static size_t phrase_at(const words *w, size_t i, const char *p)
{
    size_t k = i;
    while (*p) {
        const char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *next = p + n + (e != NULL);
        if (n == 1 && *p == '*') {
            for (size_t j = k; j <= w->n; j++) {
                size_t m = *next ? phrase_at(w, j, next) : 1;
                if (m)
                    return j - i + (*next ? m : 0);
            }
            return 0;
        }
        if (k >= w->n || w->masked[k] || w->len[k] != n ||
            strncasecmp(w->s + w->off[k], p, n) != 0)
            return 0;
        k++;
        p = next;
    }
    return k - i;
}

static void words_mask(words *w);
static const rule *rules_find(const words *w, const rule *tab, size_t ntab, bool url);

/* The longest phrase of tab (with CONSEQ's exclusions masked first when
 * mask) matching s, read whole: in windows of at most SCAN_MAX bytes and
 * WORDS_MAX words, each starting WINDOW_OVERLAP words before the end of
 * the last (a phrase is far shorter), the first window with a match
 * winning. w is scratch. */
static const rule *find_whole(words *w, const char *s, bool camel, bool mask, const rule *tab,
                              size_t ntab, bool url)
{
    size_t off = 0;
    for (;;) {
        words_split(w, s + off, camel);
        if (mask)
            words_mask(w);
        const rule *r = rules_find(w, tab, ntab, url);
        if (r)
            return r;
        if (w->n < WORDS_MAX && strnlen(s + off, SCAN_MAX + 1) <= SCAN_MAX)
            return NULL;        /* this window read the rest */
        size_t k = w->n > WINDOW_OVERLAP ? w->n - WINDOW_OVERLAP : w->n / 2;
        size_t adv = w->n ? fold_in(s + off, w->off[k]) : 0;
        if (adv == 0)           /* one word fills the window: go past it */
            adv = fold_in(s + off, strlen(w->s));
        if (adv == 0)
            return NULL;
        off += adv;
    }
}

/* The longest phrase of tab matching anywhere in w (earliest on ties):
 * of the phrases marked URL when url, else of those not NOT_NAME. */
static const rule *rules_find(const words *w, const rule *tab, size_t ntab, bool url)
{
    const rule *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < w->n; i++) {
        for (size_t r = 0; r < ntab; r++) {
            unsigned at = tab[r].at & AT_BITS;
            if ((url ? !(tab[r].at & URL) : (tab[r].at & NOT_NAME)) || (at != AT_ANY && i != 0))
                continue;
            size_t m = phrase_at(w, i, tab[r].phrase);
            if (!m || (at == AT_WHOLE && m != w->n))
                continue;
            if (m > best_len) {
                best = &tab[r];
                best_len = m;
            }
        }
    }
    return best;
}

static void words_mask(words *w)
{
    for (size_t i = 0; i < w->n; i++)
        for (size_t r = 0; r < N(MASK); r++) {
            size_t m = phrase_at(w, i, MASK[r].phrase);
            for (size_t k = 0; k < m; k++)
                w->masked[i + k] = true;
        }
}

static bool words_generic(const words *w)
{
    if (!w->n)
        return false;
    for (size_t i = 0; i < w->n; i++) {
        size_t r = 0;
        while (r < N(GENERIC) && !(strlen(GENERIC[r]) == w->len[i] &&
                                   strncasecmp(GENERIC[r], w->s + w->off[i], w->len[i]) == 0))
            r++;
        if (r == N(GENERIC))
            return false;
    }
    return true;
}

void gate_why(char *why, size_t cap, const char *fmt, const char *a, const char *b,
              const char *c)
{
    if (!why || !cap)
        return;
    /* b and c may be page text (a name, a dialog message, a form action
     * path, a frame URL, a request path), shown inside quotes: escaped as
     * the decision's target is (gate_text_quote), so they can neither close
     * their quotes nor hold a bidi, invisible, tag or C1 character. */
    char qb[160], qc[160];
    gate_text_quote(qb, sizeof qb, b, 60);
    gate_text_quote(qc, sizeof qc, c, 60);
    snprintf(why, cap, fmt, a, qb, qc);
    gate_text_clean(why);
}

static bool str_in(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

static bool tool_is(const gate_request *req, const char *t)
{
    return req->tool && strcmp(req->tool, t) == 0;
}

const char *gate_action_name(const gate_request *req)
{
    return req && req->dbl && tool_is(req, "click") ? "dblclick" : req ? req->tool : NULL;
}

bool gate_is_state_change(const gate_request *req)
{
    static const char *const CHANGE[] = {"click", "type", "select", "press", "upload", "eval"};
    return req->state_change || str_in(req->tool, CHANGE, N(CHANGE));
}

/* A field the user types into (its label is not an action). */
static bool target_entry(const gate_request *req, const gate_target *t)
{
    static const char *const ROLES[] = {"textbox", "searchbox", "combobox", "spinbutton"};
    static const char *const NOT_TEXT[] = {"button", "submit", "reset", "image", "checkbox",
                                           "radio", "file", "range", "color", "hidden"};
    if (str_in(t->role, ROLES, N(ROLES)) || (t->tag && strcmp(t->tag, "textarea") == 0))
        return true;
    if (t->tag && strcmp(t->tag, "input") == 0)
        return !str_in(t->input_type, NOT_TEXT, N(NOT_TEXT));
    return tool_is(req, "type");
}

/* A control whose activation only selects something that a later button
 * commits (its words never make it consequential). */
static bool target_selection(const gate_target *t)
{
    static const char *const ROLES[] = {"checkbox", "radio", "option", "tab", "menuitemcheckbox",
                                        "menuitemradio", "listbox", "treeitem", "slider",
                                        "spinbutton", "textbox", "searchbox", "combobox"};
    static const char *const TYPES[] = {"checkbox", "radio"};
    return str_in(t->role, ROLES, N(ROLES)) || str_in(t->input_type, TYPES, N(TYPES));
}

/* ---- credential ---- */

static bool match_cred(const char *s, const char *label, bool entry, bool camel, char *why,
                       size_t cap)
{
    if (!s || !*s)
        return false;
    words w;
    const rule *r = find_whole(&w, s, camel, false, CRED, N(CRED), false);
    if (!r && entry)
        r = find_whole(&w, s, camel, false, CRED_ENTRY, N(CRED_ENTRY), false);
    if (!r)
        return false;
    gate_why(why, cap, "credential: %s \"%s\" has \"%s\"", label, s, r->phrase);
    return true;
}

static bool autocomplete_cred(const char *ac, char *why, size_t cap)
{
    size_t i = 0;
    while (ac && ac[i]) {
        while (ac[i] == ' ' || ac[i] == '\t')
            i++;
        size_t b = i;
        while (ac[i] && ac[i] != ' ' && ac[i] != '\t')
            i++;
        for (size_t k = 0; k < N(AUTOCOMPLETE_CRED); k++) {
            const char *c = AUTOCOMPLETE_CRED[k];
            if (strlen(c) == i - b && strncasecmp(ac + b, c, i - b) == 0) {
                gate_why(why, cap, "credential: %s \"%s\"%s", "autocomplete", c, "");
                return true;
            }
        }
    }
    return false;
}

/* A field named only by the text beside it ("Your one-time code from the
 * SMS:", "Enter the 6-digit code" before an unlabelled input) that has a
 * code's shape: numeric input or 4 to 8 characters at most. The text
 * beside a field (its label words: the text before it, its group's
 * legend) counts only with that shape, so a "Two-factor authentication"
 * section's phone number or a "ZIP code" field stays a plain field. */
static bool code_near(const gate_target *t, char *why, size_t cap)
{
    bool shaped = (t->input_mode && strcmp(t->input_mode, "numeric") == 0) ||
                  (t->max_length >= 4 && t->max_length <= 8);
    if (!shaped || !t->label || !*t->label)
        return false;
    words w;
    const rule *r = find_whole(&w, t->label, false, false, CRED, N(CRED), false);
    if (!r)
        r = find_whole(&w, t->label, false, false, CODE_NEAR, N(CODE_NEAR), false);
    if (!r)
        return false;
    gate_why(why, cap, "credential: %s \"%s\" has \"%s\"", "code-shaped field beside", t->label,
         r->phrase);
    return true;
}

static bool credential(const gate_request *req, char *why, size_t cap)
{
    const gate_target *t = req->target;
    if (t) {
        bool entry = target_entry(req, t);
        if (t->input_type && strcasecmp(t->input_type, "password") == 0) {
            gate_why(why, cap, "credential: %s \"%s\"%s", "input type", "password", "");
            return true;
        }
        if (autocomplete_cred(t->autocomplete, why, cap))
            return true;
        if (t->frame_url && *t->frame_url) {
            words w;
            words_split(&w, t->frame_url, false);
            const rule *r = rules_find(&w, FRAME, N(FRAME), false);
            if (r) {
                gate_why(why, cap, "credential: %s \"%s\" names \"%s\"", "frame URL", t->frame_url,
                     r->phrase);
                return true;
            }
        }
        if (match_cred(t->name, "name", entry, false, why, cap) ||
            match_cred(t->text, "text", entry, false, why, cap) ||
            match_cred(t->field, "field", entry, true, why, cap))
            return true;
        /* Every source of its name (a key pressed into the focused field
         * has no ref, so no name: its label says "Verification code"). */
        for (size_t i = 0; i < t->nnames; i++)
            if (match_cred(t->names[i], "name source", entry, false, why, cap))
                return true;
        if (entry && code_near(t, why, cap))
            return true;
    }
    return match_cred(req->dialog, "dialog", true, false, why, cap);
}

/* ---- consequential ---- */

static int match_conseq(const char *s, const char *label, char *why, size_t cap)
{
    if (!s || !*s)
        return GATE_CONSEQ_NONE;
    words w;
    const rule *r = find_whole(&w, s, false, true, CONSEQ, N(CONSEQ), false);
    if (!r)
        return GATE_CONSEQ_NONE;
    gate_why(why, cap, "%s: %s \"%s\" has \"", gate_conseq_name(r->kind), label, s);
    size_t n = why ? strlen(why) : 0;
    if (why && n < cap)
        snprintf(why + n, cap - n, "%s\"", r->phrase);
    return r->kind;
}


/* The PATH phrase in path, read whole (every word, in windows). */
static const rule *path_rule(const char *path)
{
    words w;
    return find_whole(&w, path, false, false, PATH, N(PATH), false);
}

int gate_phrase_path(const char *path, const char **phrase)
{
    const rule *r = path_rule(path);
    *phrase = r ? r->phrase : NULL;
    return r ? r->kind : GATE_CONSEQ_NONE;
}

int gate_phrase_url(const char *s, const char **phrase)
{
    words w;
    const rule *r = find_whole(&w, s, true, true, CONSEQ, N(CONSEQ), true);
    *phrase = r ? r->phrase : NULL;
    return r ? r->kind : GATE_CONSEQ_NONE;
}

static int match_path(const gate_target *t, char *why, size_t cap)
{
    const char *m = t->form_method;
    if (!t->form_action || (m && (strcasecmp(m, "get") == 0 || strcasecmp(m, "dialog") == 0)))
        return GATE_CONSEQ_NONE;
    char *path = gate_url_path_dup(t->form_action);
    if (!path) {
        gate_why(why, cap, "%s: the form's action %s%s", "production_change",
             "could not be read", " (out of memory)");
        return GATE_CONSEQ_PRODUCTION;
    }
    const rule *r = path_rule(path);
    if (!r) {
        free(path);
        return GATE_CONSEQ_NONE;
    }
    char q[80];
    snprintf(q, sizeof q, "%s (%s)", r->phrase, m ? m : "method not given");
    gate_why(why, cap, "%s: form action path \"%s\" has %s", gate_conseq_name(r->kind), path, q);
    free(path);
    return r->kind;
}


/* The URL a click or a GET form goes to, when the session the context
 * holds (req->service) goes with it (the service's site or a subdomain: a
 * Domain= cookie reaches www.bank.test; red team s13, N2): its words, as
 * an open's. */
static int url_on_service(const gate_request *req, const char *url, char *why, size_t cap)
{
    if (!req->service || !*req->service || !url || !*url || !url_same_site(req->service, url))
        return GATE_CONSEQ_NONE;
    return gate_classify_url(url, why, cap);
}

/* Whether the classifier reads all of s (SCAN_MAX bytes, WORDS_MAX words). */
static bool words_whole(const char *s)
{
    if (!s || strnlen(s, SCAN_MAX + 1) > SCAN_MAX)
        return !s;
    words w;
    words_split(&w, s, false);
    if (w.n < WORDS_MAX)
        return true;
    const char *e = w.s + w.off[w.n - 1] + w.len[w.n - 1];
    while (*e && !word_byte((unsigned char)*e))
        e++;
    return !*e;
}

/* select: the options the values pick, read as a control's name (an
 * option "Close my account" chosen by its value "x1" is a delete). A label
 * too long to be read whole is judged consequential (fail closed). */
static int chosen_conseq(const gate_request *req, char *why, size_t cap)
{
    for (size_t i = 0; i < req->nchosen; i++) {
        int k = match_conseq(req->chosen[i], "option chosen", why, cap);
        if (k)
            return k;
        if (!words_whole(req->chosen[i])) {
            gate_why(why, cap, "%s: option chosen \"%s\" is %s", "production_change",
                 req->chosen[i], "too long to be read whole");
            return GATE_CONSEQ_PRODUCTION;
        }
    }
    return GATE_CONSEQ_NONE;
}

static int consequential(const gate_request *req, char *why, size_t cap)
{
    const gate_target *t = req->target;
    if (tool_is(req, "select")) {
        int k = chosen_conseq(req, why, cap);
        if (k)
            return k;
    }
    bool activates = tool_is(req, "click") || tool_is(req, "press") || tool_is(req, "dialog") ||
                     (t && t->submits);
    if (!activates)
        return GATE_CONSEQ_NONE;
    int k = match_conseq(req->dialog, "dialog", why, cap);
    if (k || !t)
        return k;
    if (!target_entry(req, t) && !target_selection(t)) {
        if ((k = match_conseq(t->name, "name", why, cap)) ||
            (k = match_conseq(t->text, "text", why, cap)))
            return k;
        /* Every other source of its name: a label can name a "Pay" button
         * "Not interested" (its accessible name), an image inside it says
         * what it does. */
        for (size_t i = 0; i < t->nnames; i++)
            if ((k = match_conseq(t->names[i], "name source", why, cap)))
                return k;
        words w;
        words_split(&w, t->name && *t->name ? t->name : t->text, false);
        if ((w.n == 0 || words_generic(&w)) &&
            ((k = match_conseq(t->row, "row", why, cap)) ||
             (k = match_conseq(t->dialog_text, "dialog", why, cap))))
            return k;
    }
    /* Where it goes, on the service whose session the context holds: a
     * link's href (clicked, or a key pressed on the focused link: red team
     * s12, G6), a GET form's action (the words of the address a read
     * would open are read as an open's). */
    if (t->href && (k = url_on_service(req, t->href, why, cap)))
        return k;
    if (!t->submits)
        return GATE_CONSEQ_NONE;
    if ((k = match_conseq(t->form_submit, "submit button", why, cap)))
        return k;
    if (t->form_method && strcasecmp(t->form_method, "get") == 0 &&
        (k = url_on_service(req, t->form_action, why, cap)))
        return k;
    return match_path(t, why, cap);
}

int gate_classify(const gate_request *req, int *conseq, char *why, size_t cap)
{
    if (conseq)
        *conseq = GATE_CONSEQ_NONE;
    if (why && cap)
        why[0] = 0;
    if (!req || !req->tool)
        return GATE_EINVAL;
    /* An open of the service whose session the context holds: the words
     * of the URL, as a link's name (a GET endpoint may do the thing); an
     * account-security act there is confirmed, as a button doing it is
     * (red team s17, R7-7). */
    int k = 0;
    if (tool_is(req, "open") && req->service && *req->service && req->url && *req->url &&
        url_same_site(req->service, req->url)) {
        int cls = gate_classify_get_class(req->url, false, &k, why, cap);
        if (conseq)
            *conseq = k;
        if (cls != GATE_CLASS_READ)
            return cls;
    }
    if (!gate_is_state_change(req)) {
        gate_why(why, cap, "read: %s%s%s", req->tool, " does not change the page", "");
        return GATE_CLASS_READ;
    }
    if (credential(req, why, cap))
        return GATE_CLASS_CREDENTIAL;
    k = consequential(req, why, cap);
    if (k) {
        if (conseq)
            *conseq = k;
        return GATE_CLASS_CONSEQUENTIAL;
    }
    gate_why(why, cap, "%s: state change on an %s origin%s",
         req->authenticated ? "auth_change" : "interact",
         req->authenticated ? "authenticated" : "unauthenticated", "");
    return req->authenticated ? GATE_CLASS_AUTH_CHANGE : GATE_CLASS_INTERACT;
}

static const char *const CLASS_NAMES[] = {"read", "interact", "auth_change", "consequential",
                                          "credential", "takeover"};
static const char *const CONSEQ_NAMES[] = {"none", "send", "publish", "purchase", "delete",
                                           "production_change"};

const char *gate_class_name(int cls)
{
    return cls >= 0 && (size_t)cls < N(CLASS_NAMES) ? CLASS_NAMES[cls] : "unknown";
}

const char *gate_conseq_name(int kind)
{
    return kind >= 0 && (size_t)kind < N(CONSEQ_NAMES) ? CONSEQ_NAMES[kind] : "unknown";
}

/* ---- the operation a request's body names (red team s14, R4-9) ---- */

/* Keys whose value names the operation at an RPC-style endpoint (a PHP or
 * Rails dispatcher's action=, a GraphQL operationName), besides the query
 * keys a GET URL's verb is read under (URLV_KEY); _method and the method
 * override headers (read by the sink as the key "_method") make a POST
 * the method they name. */
static const char *const BODY_OP_KEY[] = {"_action", "operationname", "method", "_method",
                                          "mutation"};

/* Whether GraphQL text holds the word "mutation" (a query document that
 * changes state; "query" operations read). */
static bool gql_mutation(const char *v)
{
    words w;
    words_split(&w, v, false);
    for (size_t i = 0; i < w.n; i++)
        if (w.len[i] == 8 && strncasecmp(w.s + w.off[i], "mutation", 8) == 0)
            return true;
    return w.n >= WORDS_MAX;    /* not read whole: read its words (fail closed) */
}

/* The key, as a why names it: [A-Za-z0-9_.-], cut. */
static void op_key_shown(const char *key, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; key[i] && o + 1 < cap && i < 40; i++) {
        char c = key[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
        out[o++] = ok ? c : '?';
    }
    out[o] = 0;
}

int gate_classify_body_op(const char *key, const char *value, char *why, size_t cap)
{
    if (why && cap)
        why[0] = 0;
    if (!key || !value || !*value)
        return GATE_CONSEQ_NONE;
    size_t kl = strlen(key);
    bool op = gate_op_key(key) || gate_word_of(key, 0, kl, BODY_OP_KEY, N(BODY_OP_KEY));
    bool gql = kl == 5 && strcasecmp(key, "query") == 0 && gql_mutation(value);
    if (!op && !gql)
        return GATE_CONSEQ_NONE;
    char ks[48];
    op_key_shown(key, ks, sizeof ks);
    const char *ph = NULL;
    int pk = gate_phrase_url(value, &ph);
    if (pk) {
        gate_why(why, cap, "%s: the body's field \"%s\" names \"%s\"", gate_conseq_name(pk), ks,
                 ph);
        return pk;
    }
    /* One verb alone ("close", "cancel", "approve"), as in a GET's query. */
    size_t b = strspn(value, " \t\r\n"), l = strlen(value);
    while (l > b && strchr(" \t\r\n", value[l - 1]))
        l--;
    const char *v = op ? gate_op_value(value, b, l) : NULL;
    if (v) {
        gate_why(why, cap, "%s: the body's field \"%s\" names \"%s\"", "delete", ks, v);
        return GATE_CONSEQ_DELETE;
    }
    /* Noun first or joined ("ordercancel", "deleteuser"), as a GET's. */
    char act[96];
    int k = op ? gate_url_act(value, l, act, sizeof act) : GATE_CONSEQ_NONE;
    if (k) {
        /* act quotes the word that decided: the key is shown, not it. */
        gate_why(why, cap, "%s: the body's field \"%s\" names %s", gate_conseq_name(k), ks,
             "an act (noun first or joined words)");
    }
    return k;
}
