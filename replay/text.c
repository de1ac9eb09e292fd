/*
 * text.c — page text a trail keeps (effect.appeared, effect.value,
 * effect.dialog): the words shaped like secrets hidden by the recorder,
 * and the recorded text matched against the page by replay (red team s16,
 * R6-5).
 *
 * A page shows a new API token, a recovery code or a reset link once,
 * after the click that made it; the step's effect would keep it, and the
 * trail is a file kept and shared ("a trail never holds a secret"). So
 * each word of recorded page text (runs of characters other than white
 * space, a parameter {{name}} and a literal "{{{{" between words), without
 * the punctuation around it, is written REPLAY_TEXT_HIDDEN when it is:
 *  - shaped like a bearer secret (url_bearer_like: a JWT, 32+ hex digits,
 *    16+ URL-safe characters mixing letters and digits that are no
 *    sequence of words);
 *  - within two words after a word naming a secret (token, secret,
 *    password, passcode, key, code, PIN, OTP, ...): 8+ such characters
 *    with a digit, or 6+ digits (a one-time code, "7391-8426-5510");
 *  - a URL the trail's URL rule redacts (url_redact, URL_REDACT_TOKENS:
 *    a reset or magic-login link);
 *  - a secret the agent knows (snap_text_secret: a session value, a
 *    secret field's value).
 * Replay reads REPLAY_TEXT_HIDDEN as one word of the page that the
 * recorder would hide too (read as after a word naming a secret): the
 * effect is still checked (the words around it, and that a secret-shaped
 * word stands there), and a new token at the next run does not make it
 * diverge.
 */
#include "replay/replay_int.h"

#include "url/url.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN_LEN (sizeof REPLAY_TEXT_HIDDEN - 1)
#define MATCH_BUDGET 2000000L    /* steps of one match; past it: no match */

static bool space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Punctuation around a word, not part of it ("token:", "(shown"). */
static bool punct(char c)
{
    return c && strchr(".,;:!?()[]\"'<>", c) != NULL;
}

/* What is at p of recorded text: a placeholder or escape (its length in
 * bytes), else 0 (a character of a word or white space). */
static size_t ph_len(const char *p)
{
    size_t nl = 0;
    int k = replay_ph_at(p, &nl);
    if (k == REPLAY_PH_ESC)
        return 4;
    if (k == REPLAY_PH_NAME)
        return nl + 4;
    return strncmp(p, REPLAY_TEXT_HIDDEN, HIDDEN_LEN) == 0 ? HIDDEN_LEN : 0;
}

/* Does the word w[0..n) name a secret (lower-cased, punctuation off)? */
static bool names_secret(const char *w, size_t n)
{
    static const char *const PART[] = {"token", "secret", "passw", "passcode", "passphrase",
                                       "apikey", "api_key", "api-key", "recovery", NULL};
    static const char *const WORD[] = {"key", "keys", "code", "codes", "pin", "otp", "totp",
                                       "2fa", "mfa", NULL};
    char low[40];
    if (!n || n >= sizeof low)
        return false;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)w[i]);
    low[n] = '\0';
    for (size_t i = 0; PART[i]; i++)
        if (strstr(low, PART[i]))
            return true;
    for (size_t i = 0; WORD[i]; i++)
        if (strcmp(low, WORD[i]) == 0)
            return true;
    return false;
}

/* 6 or more digits, with '-' or '.' between groups and nothing else. */
static bool code_digits(const char *w, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++) {
        if (isdigit((unsigned char)w[i]))
            d++;
        else if (w[i] != '-' && w[i] != '.')
            return false;
    }
    return d >= 6;
}

/* A URL word the trail's URL rule changes (a token in it). */
static bool url_secret(const char *w, size_t n)
{
    if (!(n > 7 && strncmp(w, "http://", 7) == 0) && !(n > 8 && strncmp(w, "https://", 8) == 0))
        return false;
    char *u = malloc(n + 1);
    if (!u)
        return true;
    memcpy(u, w, n);
    u[n] = '\0';
    char *r = url_redact(u, URL_REDACT_TOKENS, NULL);
    bool hit = !r || strcmp(r, u) != 0;
    free(r);
    free(u);
    return hit;
}

static bool word_hidden(const char *w, size_t n, bool after_kw, const snap_agent *a)
{
    return url_bearer_like(w, n, after_kw) || (after_kw && code_digits(w, n)) ||
           url_secret(w, n) || snap_text_secret(a, w, n);
}

/* The word at s[0..n) (no placeholder in it) written into b, hidden when
 * it is a secret; *kw counts down the words after one naming a secret. */
static void put_word(base_buf *b, const char *s, size_t n, int *kw, const snap_agent *a)
{
    size_t lo = 0, hi = n;
    while (lo < hi && punct(s[lo]))
        lo++;
    while (hi > lo && punct(s[hi - 1]))
        hi--;
    if (hi == lo) {
        base_buf_put(b, s, n);
        return;
    }
    bool hide = word_hidden(s + lo, hi - lo, *kw > 0, a);
    *kw = names_secret(s + lo, hi - lo) ? 2 : *kw > 0 ? *kw - 1 : 0;
    base_buf_put(b, s, lo);
    if (hide)
        base_buf_puts(b, REPLAY_TEXT_HIDDEN);
    else
        base_buf_put(b, s + lo, hi - lo);
    base_buf_put(b, s + hi, n - hi);
}

char *replay_text_hide(const char *s, const snap_agent *a)
{
    if (!s)
        return NULL;
    base_buf b = {0};
    int kw = 0;
    const char *p = s;
    while (*p) {
        size_t ph = ph_len(p);
        if (ph) {
            base_buf_put(&b, p, ph);
            p += ph;
            continue;
        }
        if (space(*p)) {
            base_buf_putc(&b, *p++);
            continue;
        }
        size_t n = 0;
        while (p[n] && !space(p[n]) && !ph_len(p + n))
            n++;
        put_word(&b, p, n, &kw, a);
        p += n;
    }
    return base_buf_take(&b, NULL);
}

/* ---- replay: a recorded text against the page's ---- */

/* Folded text: white space runs one space, the ends trimmed (case kept:
 * compared folded, and a hidden word's shape needs it); mk (want only)
 * marks the bytes that stand for a hidden word. */
typedef struct {
    base_buf s;
    base_buf mk;
    bool sp;
} folded;

static void fold_put(folded *f, const char *s, size_t n, bool marker)
{
    for (size_t i = 0; i < n; i++) {
        if (space(s[i])) {
            f->sp = f->s.len > 0;
            continue;
        }
        if (f->sp) {
            base_buf_putc(&f->s, ' ');
            base_buf_putc(&f->mk, 0);
        }
        f->sp = false;
        base_buf_putc(&f->s, s[i]);
        base_buf_putc(&f->mk, marker);
    }
}

/* want (recorded text) folded, its parameters filled from o (a name
 * without a value kept as written), each hidden word one marked byte. */
static void fold_want(folded *f, const char *want, const replay_opts *o)
{
    for (const char *p = want; *p;) {
        size_t nl = 0;
        int k = replay_ph_at(p, &nl);
        const char *v = k == REPLAY_PH_NAME ? replay_var(o, p + 2, nl) : NULL;
        if (k == REPLAY_PH_ESC) {
            fold_put(f, "{{", 2, false);
            p += 4;
        } else if (k == REPLAY_PH_NAME) {
            fold_put(f, v ? v : p, v ? strlen(v) : nl + 4, false);
            p += nl + 4;
        } else if (strncmp(p, REPLAY_TEXT_HIDDEN, HIDDEN_LEN) == 0) {
            fold_put(f, "*", 1, true);
            p += HIDDEN_LEN;
        } else {
            fold_put(f, p++, 1, false);
        }
    }
}

typedef struct {
    const char *h, *w, *mk;
    size_t hn, wn;
    const snap_agent *a;
    long budget;
} tmatch;

/* h[b..e) stands where a hidden word was: without the punctuation around
 * it, a word the recorder would hide (after a word naming a secret). */
static bool tm_hidden(const tmatch *m, size_t b, size_t e)
{
    while (b < e && punct(m->h[b]))
        b++;
    while (e > b && punct(m->h[e - 1]))
        e--;
    return e > b && word_hidden(m->h + b, e - b, true, m->a);
}

/* Does w[wi..] match h[hi..] (to h's end when whole), ASCII case folded?
 * A marked byte of w matches one word of h (no space) that is shaped like
 * a secret. */
static bool tm_at(tmatch *m, size_t hi, size_t wi, bool whole)
{
    while (wi < m->wn) {
        if (--m->budget < 0)
            return false;
        if (m->mk[wi]) {
            size_t e = hi;
            while (e < m->hn && m->h[e] != ' ')
                e++;
            for (size_t k = e; k > hi && m->budget > 0; k--)
                if (tm_hidden(m, hi, k) && tm_at(m, k, wi + 1, whole))
                    return true;
            return false;
        }
        if (hi >= m->hn ||
            tolower((unsigned char)m->h[hi]) != tolower((unsigned char)m->w[wi]))
            return false;
        hi++;
        wi++;
    }
    return !whole || hi == m->hn;
}

bool replay_text_match(const char *want, const char *got, const replay_opts *o, bool whole,
                       const snap_agent *a)
{
    folded w = {0}, h = {0};
    fold_want(&w, want ? want : "", o);
    fold_put(&h, got ? got : "", got ? strlen(got) : 0, false);
    bool ok = false;
    if (!w.s.oom && !w.mk.oom && !h.s.oom && !h.mk.oom) {
        tmatch m = {h.s.s ? h.s.s : "", w.s.s ? w.s.s : "", w.mk.s ? w.mk.s : "",
                    h.s.len, w.s.len, a, MATCH_BUDGET};
        for (size_t hi = 0; !ok && hi <= (whole ? 0 : m.hn) && m.budget > 0; hi++)
            ok = (hi == 0 || m.h[hi - 1] == ' ' || !m.wn || !m.mk[0]) && tm_at(&m, hi, 0, whole);
    }
    base_buf_free(&w.s);
    base_buf_free(&w.mk);
    base_buf_free(&h.s);
    base_buf_free(&h.mk);
    return ok;
}
