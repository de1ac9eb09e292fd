/*
 * text.c — page text a trail keeps (effect.appeared, effect.value,
 * effect.dialog, a target's name, row, section, label and placeholder, the
 * state's title): the words shaped like secrets hidden by the recorder,
 * and the recorded text matched against the page by replay (red team s16
 * R6-5; s17 R7-6, R7-8). One rule for all of them.
 *
 * A page shows a new API token, a sign-in code or recovery codes once,
 * after the click that made them; a token stands in the row of its
 * "Revoke" button; a mail's subject is "482913 is your code". The trail
 * is a file kept and shared ("a trail never holds a secret"). So each
 * word of recorded page text (runs of characters other than white space,
 * a parameter {{name}} and a literal "{{{{" between words), without the
 * punctuation around it, is written REPLAY_TEXT_HIDDEN when it is:
 *  - shaped like a secret by url/'s word rule (url_secret_shaped, which
 *    URLs use too): a bearer token, a payment card number (Luhn);
 *  - near a word naming a secret (token, code, key, PIN, OTP, recovery,
 *    verification, ...: WINDOW words before or after it in its sentence;
 *    a word hidden there reaches WINDOW more, so a list of codes goes
 *    whole): that rule read after a keyword (a one-time or recovery
 *    code, a token of 8+ characters), 3+ digits right after CVV/CVC;
 *  - a URL the trail's URL rule redacts (url_redact, URL_REDACT_TOKENS);
 *  - a secret the agent knows (snap_text_secret).
 * A group of up to RUN_MAX words is hidden as one when joined it is a
 * card number, or near such a word a code or a set-up key in groups
 * ("4111 1111 1111 1111", "7305 51", "JBSW Y3DP EHPK 3PXP").
 * Replay reads REPLAY_TEXT_HIDDEN as one word (or such a group) of the
 * page that the recorder would hide near a word naming a secret
 * (replay_text_unit_secret; match.c reads a target's texts by it too):
 * the words around it are still checked, and a new code or token at the
 * next run does not make it diverge.
 */
#include "replay/replay_int.h"

#include "url/url.h"
#include "vault/vault.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HIDDEN_LEN (sizeof REPLAY_TEXT_HIDDEN - 1)
#define REST_LEN (sizeof REPLAY_TEXT_REST - 1)
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

static bool lower_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

size_t replay_hidden_at(const char *p, char id[REPLAY_ID_HEX + 1], bool *keyed)
{
    id[0] = '\0';
    if (keyed)
        *keyed = false;
    if (strncmp(p, REPLAY_TEXT_HIDDEN, HIDDEN_LEN) == 0)
        return HIDDEN_LEN;
    /* "{{*k:" 16 hex "}}" (keyed: session 21), "{{*:" 16 or 8 hex "}}" */
    bool k = strncmp(p, REPLAY_ID_KEYED, sizeof REPLAY_ID_KEYED - 1) == 0;
    size_t at = k ? sizeof REPLAY_ID_KEYED - 1 : 4, n = 0;
    if (!k && strncmp(p, "{{*:", 4) != 0)
        return 0;
    while (n <= REPLAY_ID_HEX && lower_hex(p[at + n]))
        n++;
    if ((n != REPLAY_ID_HEX && (k || n != REPLAY_ID_OLD_HEX)) || p[at + n] != '}' ||
        p[at + n + 1] != '}')
        return 0;
    memcpy(id, p + at, n);
    id[n] = '\0';
    if (keyed)
        *keyed = k;
    return at + n + 2;
}

void replay_id_hash(const char *w, size_t n, char id[REPLAY_ID_HEX + 1])
{
    static const char HEX[] = "0123456789abcdef";
    uint8_t d[VAULT_SHA256_LEN];
    vault_sha256(w, n, d);
    for (size_t i = 0; i < REPLAY_ID_HEX / 2; i++) {
        id[2 * i] = HEX[d[i] >> 4];
        id[2 * i + 1] = HEX[d[i] & 15];
    }
    id[REPLAY_ID_HEX] = '\0';
}

/* What is at p of recorded text: a placeholder or escape (its length in
 * bytes), else 0 (a character of a word or white space). */
static size_t ph_len(const char *p)
{
    size_t nl = 0;
    char id[REPLAY_ID_HEX + 1];
    int k = replay_ph_at(p, &nl);
    if (k == REPLAY_PH_ESC)
        return 4;
    if (k == REPLAY_PH_NAME)
        return nl + 4;
    if (strncmp(p, REPLAY_TEXT_REST, REST_LEN) == 0)
        return REST_LEN;
    return replay_hidden_at(p, id, NULL);
}

/* Does the word w[0..n) name a secret (lower-cased, punctuation off)?
 * KW_NAMES (token, code, PIN, recovery, verification, ...), KW_CARD (a
 * card's security code: "CVV", "CVC": 3 digits are one), else 0. */
enum { KW_NONE, KW_NAMES, KW_CARD };

static int names_secret(const char *w, size_t n)
{
    static const char *const PART[] = {"token", "secret", "passw", "passcode", "passphrase",
                                       "passkey", "apikey", "api_key", "api-key", "recovery",
                                       "verif", "one-time", "onetime", "phrase", "mnemonic",
                                       NULL};
    static const char *const WORD[] = {"key", "keys", "code", "codes", "pin", "pins", "otp",
                                       "totp", "2fa", "mfa", "seed", "login", "log-in",
                                       "signin", "sign-in", "logon", NULL};
    static const char *const CARD[] = {"cvv", "cvv2", "cvc", "cvc2", "csc", "cvn", NULL};
    char low[40];
    if (!base_lower_copy(low, sizeof low, w, n))
        return KW_NONE;
    for (size_t i = 0; CARD[i]; i++)
        if (strcmp(low, CARD[i]) == 0)
            return KW_CARD;
    for (size_t i = 0; PART[i]; i++)
        if (strstr(low, PART[i]))
            return KW_NAMES;
    for (size_t i = 0; WORD[i]; i++)
        if (strcmp(low, WORD[i]) == 0)
            return KW_NAMES;
    return KW_NONE;
}

/* Does the word w[0..n) (punctuation off) name a secret that may have
 * any shape, so that what it gives is hidden whole (a password of symbols
 * or of letters, a phrase of plain words, a door code "4821#", a security
 * answer; red team s18, R8-4)? */
static bool names_whole(const char *w, size_t n)
{
    static const char *const PART[] = {"passw", "passphrase", "passcode", "phrase", "mnemonic",
                                       "secret", "token", NULL};
    static const char *const WORD[] = {"seed", "pin", "code", "codes", NULL};
    char low[40];
    if (!base_lower_copy(low, sizeof low, w, n))
        return false;
    for (size_t i = 0; PART[i]; i++)
        if (strstr(low, PART[i]))
            return true;
    for (size_t i = 0; WORD[i]; i++)
        if (strcmp(low, WORD[i]) == 0)
            return true;
    return false;
}

/* Is w[0..n) one of the words in list (ASCII case folded)? */
static bool word_is(const char *w, size_t n, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strlen(list[i]) == n && strncasecmp(w, list[i], n) == 0)
            return true;
    return false;
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

static bool all_digits(const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)w[i]))
            return false;
    return n > 0;
}

/* One word (punctuation off): url_secret_shaped, 3+ digits right after a
 * card's security code (card), a URL holding a token, a secret a knows. */
static bool word_hidden(const char *w, size_t n, bool after_kw, bool card, const snap_agent *a)
{
    return url_secret_shaped(w, n, after_kw) || (card && n >= 3 && all_digits(w, n)) ||
           url_secret(w, n) || snap_text_secret(a, w, n);
}

/* A hidden word whose short hash a target's text keeps ({{*k:16 hex}}:
 * red team s18, R8-7): an identifier shaped like a token (an IBAN, a
 * Stripe id, a UUID, an API key) of 16+ characters with a letter, hidden
 * by its shape alone. 64 bits (session 20; 32 before: a page could make an
 * id of its choice with a known payee's 32 bits in about 2^32 hashes) of
 * its HMAC-SHA-256 under the user's trail key (session 21; a plain
 * SHA-256 before: an identifier of little entropy, an IBAN at a known
 * bank, was found from it by hashing each candidate). Never a code hidden
 * only for the word naming it (6 digits: 10^6 values: whoever holds the
 * key could try them all), a card number (a known BIN and last 4 leave
 * 10^5), a URL, a secret the agent knows (a password): those stay
 * {{*}}. */
static bool word_id(const char *w, size_t n, const snap_agent *a)
{
    bool alpha = false;
    for (size_t i = 0; i < n; i++)
        alpha = alpha || isalpha((unsigned char)w[i]);
    return n >= 16 && alpha && url_secret_shaped(w, n, false) && !memchr(w, '/', n) &&
           !snap_text_secret(a, w, n);
}

/* What a word can be as part of a group of words hidden as one (a card
 * "4111 1111 1111 1111", a code "123 456", a 2FA set-up key "JBSW Y3DP
 * EHPK 3PXP"): RUN_DIGITS (2-6 digits), RUN_KEY (4 letters and digits of
 * one case), else 0. */
enum { RUN_NONE, RUN_DIGITS, RUN_KEY };

static int run_part(const char *w, size_t n)
{
    if (n >= 2 && n <= 6 && all_digits(w, n))
        return RUN_DIGITS;
    bool lower = false, upper = false;
    for (size_t i = 0; n == 4 && i < n; i++) {
        unsigned char c = (unsigned char)w[i];
        if (!isalnum(c))
            return RUN_NONE;
        lower = lower || islower(c);
        upper = upper || isupper(c);
    }
    return n == 4 && !(lower && upper) ? RUN_KEY : RUN_NONE;
}

/* The letters and digits of a group of k words of one kind, joined (j,
 * jn bytes): a card number, or after a word naming a secret a code (4+
 * digits) or a key (3+ groups, token-shaped with a digit)? */
static bool run_hidden(const char *j, size_t jn, int kind, size_t k, bool after_kw)
{
    if (kind == RUN_DIGITS)
        return url_secret_shaped(j, jn, after_kw);
    bool digit = false;
    for (size_t i = 0; i < jn; i++)
        digit = digit || isdigit((unsigned char)j[i]);
    return after_kw && k >= 3 && digit && url_secret_shaped(j, jn, true);
}

/* ---- the recorder: words and their context ---- */

#define WINDOW 6       /* words a word naming a secret reaches, before or after it */
#define RUN_MAX 6      /* words one hidden group may span */

typedef struct {
    size_t at, n;      /* the token in the text: a word or a placeholder */
    size_t lo, hi;     /* a word's core: its punctuation off */
    bool ph;           /* a placeholder ({{name}}, "{{{{", REPLAY_TEXT_HIDDEN) */
    int kw;            /* names_secret */
    bool stop;         /* ends a sentence ('.', '!', '?' after it) */
    int run;           /* run_part of the core, when the word has no punctuation */
    bool lead, trail;  /* punctuation before, after the core */
    bool gives;        /* ':' or '=' after the core ("password:") */
    bool whole;        /* names a secret of any shape (names_whole) */
} tword;

/* What a word's neighbour says of it: "in" after "log"/"sign" names a
 * sign-in ("Use 482913 to log in"), "answer" after "security"/"secret" a
 * secret of any shape. */
static void word_context(const char *s, tword *w, const tword *prev)
{
    static const char *const LOG[] = {"log", "sign", NULL};
    static const char *const SEC[] = {"security", "secret", NULL};
    static const char *const IN[] = {"in", "on", NULL};
    static const char *const ANS[] = {"answer", "answers", NULL};
    const char *c = s + w->lo;
    size_t n = w->hi - w->lo;
    w->whole = names_whole(c, n);
    if (!prev || prev->ph || prev->trail)
        return;
    const char *pc = s + prev->lo;
    size_t pn = prev->hi - prev->lo;
    if (word_is(c, n, IN) && word_is(pc, pn, LOG))
        w->kw = w->kw ? w->kw : KW_NAMES;
    if (word_is(c, n, ANS) && word_is(pc, pn, SEC))
        w->kw = w->kw ? w->kw : KW_NAMES, w->whole = true;
}

/* The words and placeholders of s into a new array (*n of them). */
static tword *text_words(const char *s, size_t *n)
{
    base_buf b = {0};
    size_t k = 0;
    for (size_t p = 0; s[p];) {
        if (space(s[p])) {
            p++;
            continue;
        }
        tword w = {.at = p};
        size_t ph = ph_len(s + p);
        if (ph) {
            w.ph = true;
            w.n = ph;
        } else {
            while (s[p + w.n] && !space(s[p + w.n]) && !ph_len(s + p + w.n))
                w.n++;
            w.lo = p, w.hi = p + w.n;
            while (w.lo < w.hi && punct(s[w.lo]))
                w.lo++;
            while (w.hi > w.lo && punct(s[w.hi - 1]))
                w.hi--;
            w.kw = names_secret(s + w.lo, w.hi - w.lo);
            for (size_t i = w.hi; i < p + w.n; i++)
                w.stop = w.stop || strchr(".!?", s[i]);
            w.lead = w.lo > p;
            w.trail = w.hi < p + w.n;
            w.gives = w.trail && strchr(":=", s[w.hi]);
            word_context(s, &w, k && b.s ? (const tword *)b.s + (k - 1) : NULL);
            w.run = run_part(s + w.lo, w.hi - w.lo);
        }
        base_buf_put(&b, (const char *)&w, sizeof w);
        k++;
        p += w.n;
    }
    *n = k;
    return (tword *)base_buf_take(&b, NULL);
}

/* near[i]: a word naming a secret follows word i within WINDOW words of
 * its sentence ("482913 is your verification code"). */
static void kw_ahead(const tword *w, size_t n, bool *near)
{
    int left = 0;
    for (size_t i = n; i-- > 0;) {
        if (w[i].stop)
            left = 0;
        near[i] = left > 0;
        left = w[i].kw ? WINDOW : left > 0 ? left - 1 : 0;
    }
}

/* The last word of a group starting at word i (kind w[i].run, no
 * punctuation inside, RUN_MAX words at most) that run_hidden hides; i
 * when none. */
static size_t run_end(const char *s, const tword *w, size_t n, size_t i, bool after_kw)
{
    char j[RUN_MAX * 6 + 1];
    size_t jn = 0, last = i;
    for (size_t k = i; k < n && k < i + RUN_MAX; k++) {
        if (w[k].ph || w[k].run != w[i].run || (k > i && w[k].lead) || (k > i && w[k - 1].trail))
            break;
        memcpy(j + jn, s + w[k].lo, w[k].hi - w[k].lo);
        jn += w[k].hi - w[k].lo;
        if (k > i && run_hidden(j, jn, w[i].run, k - i + 1, after_kw))
            last = k;
    }
    return last;
}

/* Into b: the words w[i..e] as one hidden word, the punctuation around
 * them kept; with ids, one word word_id takes written with its hash. */
static void put_hidden(base_buf *b, const char *s, const tword *w, size_t i, size_t e,
                       const replay_key *ids, const snap_agent *a)
{
    base_buf_put(b, s + w[i].at, w[i].lo - w[i].at);
    if (ids && e == i && word_id(s + w[i].lo, w[i].hi - w[i].lo, a)) {
        char id[REPLAY_ID_HEX + 1];
        replay_id_hmac(ids, s + w[i].lo, w[i].hi - w[i].lo, id);
        base_buf_puts(b, REPLAY_ID_KEYED);
        base_buf_puts(b, id);
        base_buf_puts(b, "}}");
    } else {
        base_buf_puts(b, REPLAY_TEXT_HIDDEN);
    }
    base_buf_put(b, s + w[e].hi, w[e].at + w[e].n - w[e].hi);
}

/* After word i naming a secret of any shape that gives it ("password:",
 * "code is"): the first word of what it gives, the rest of its sentence
 * (red team s18, R8-4); 0 when none. */
static size_t rest_from(const char *s, const tword *w, size_t n, size_t i)
{
    static const char *const IS[] = {"is", "are", NULL};
    if (w[i].ph || !w[i].whole || w[i].stop)
        return 0;
    size_t r = i + 1;
    if (!w[i].gives) {
        if (r >= n || w[r].ph || w[r].stop || w[r].lead || w[r].trail ||
            !word_is(s + w[r].lo, w[r].hi - w[r].lo, IS))
            return 0;
        r++;
    }
    return r < n ? r : 0;
}

/* Does the word rule (a word or group after a word naming a secret)
 * hide word r? Then what a naming word gives is hidden by it, word by
 * word, and the rest of the sentence kept. */
static bool shape_hides(const char *s, const tword *w, size_t n, size_t r, const snap_agent *a)
{
    return w[r].hi > w[r].lo && (word_hidden(s + w[r].lo, w[r].hi - w[r].lo, true, false, a) ||
                                 (w[r].run && run_end(s, w, n, r, true) > r));
}

/* Do words r to the end of their sentence hold a marker ("{{")? */
static bool rest_marked(const char *s, const tword *w, size_t n, size_t r)
{
    size_t e = r;
    while (e + 1 < n && !w[e].stop)
        e++;
    for (const char *p = s + w[r].at; p + 1 < s + w[e].at + w[e].n; p++)
        if (p[0] == '{' && p[1] == '{')
            return true;
    return false;
}

/* Into b: the text from word i to before word r kept, then words r to
 * the end of their sentence as REPLAY_TEXT_REST; the last word hidden. */
static size_t put_rest(base_buf *b, const char *s, const tword *w, size_t n, size_t i, size_t r)
{
    size_t e = r;
    while (e + 1 < n && !w[e].stop)
        e++;
    base_buf_put(b, s + w[i].at, w[r].at - w[i].at);
    base_buf_puts(b, REPLAY_TEXT_REST);
    return e;
}

/* s with its secret-shaped words hidden, into b (w: its n words). */
typedef struct {
    bool primed;
    const replay_key *ids;       /* a target's identifiers hashed under it */
    const snap_agent *a;
} hide_how;

static void hide_words(base_buf *b, const char *s, const tword *w, size_t n, const bool *near,
                       const hide_how *how)
{
    const snap_agent *a = how->a;
    char id[REPLAY_ID_HEX + 1];
    int fwd = how->primed ? WINDOW : 0, card = 0;
    size_t done = 0;   /* bytes of s written */
    for (size_t i = 0; i < n; i++) {
        base_buf_put(b, s + done, w[i].at - done);
        size_t r = rest_from(s, w, n, i);
        /* already hidden (a marker in what it gives: a second pass keeps
         * what the first hid), or hidden word by word by the shape rule */
        if (r && (rest_marked(s, w, n, r) || shape_hides(s, w, n, r, how->a)))
            r = 0;
        if (r) {
            i = put_rest(b, s, w, n, i, r);
            done = w[i].at + w[i].n;
            fwd = card = 0;
            continue;
        }
        bool after = fwd > 0 || near[i];
        bool hidden = w[i].ph && replay_hidden_at(s + w[i].at, id, NULL);
        size_t e = i;
        if (!w[i].ph && w[i].hi > w[i].lo) {
            hidden = word_hidden(s + w[i].lo, w[i].hi - w[i].lo, after, card > 0, a);
            if (!hidden && w[i].run && (e = run_end(s, w, n, i, after)) > i)
                hidden = true;
        }
        if (hidden && !w[i].ph)
            put_hidden(b, s, w, i, e, how->ids, a);
        else
            base_buf_put(b, s + w[i].at, w[i].n);
        done = w[e].at + w[e].n;
        fwd = w[i].kw || hidden ? WINDOW : fwd > 0 ? fwd - 1 : 0;
        card = w[i].kw == KW_CARD ? 2 : card > 0 ? card - 1 : 0;
        if (w[e].stop)
            fwd = card = 0;
        i = e;
    }
    base_buf_puts(b, s + done);
}

static char *text_hide(const char *s, const hide_how *how)
{
    if (!s)
        return NULL;
    size_t n = 0;
    tword *w = text_words(s, &n);
    bool *near = calloc(n ? n : 1, sizeof *near);
    base_buf b = {0};
    if (w && near) {
        kw_ahead(w, n, near);
        hide_words(&b, s, w, n, near, how);
    } else {
        b.oom = true;
    }
    free(w);
    free(near);
    return base_buf_take(&b, NULL);
}

char *replay_text_hide_kw(const char *s, const snap_agent *a, bool primed)
{
    hide_how how = {.primed = primed, .a = a};
    return text_hide(s, &how);
}

char *replay_text_hide(const char *s, const snap_agent *a)
{
    return replay_text_hide_kw(s, a, false);
}

char *replay_text_hide_ids(const char *s, const snap_agent *a, const replay_key *key)
{
    if (!key || !key->id[0])
        return NULL;
    hide_how how = {.ids = key, .a = a};
    return text_hide(s, &how);
}

bool replay_text_names_secret(const char *s)
{
    size_t n = 0;
    tword *w = s ? text_words(s, &n) : NULL;
    bool hit = false;
    for (size_t i = 0; w && i < n; i++)
        hit = hit || w[i].kw;
    free(w);
    return hit;
}

bool replay_text_unit_secret(const char *s, size_t n, const snap_agent *a)
{
    while (n && punct(*s))
        s++, n--;
    while (n && punct(s[n - 1]))
        n--;
    if (!n || space(*s) || space(s[n - 1]))
        return false;
    if (!memchr(s, ' ', n) && !memchr(s, '\t', n) && !memchr(s, '\n', n))
        return word_hidden(s, n, true, true, a);
    char j[RUN_MAX * 6 + 1];
    size_t jn = 0, k = 0;
    int kind = RUN_NONE;
    for (size_t p = 0; p < n;) {
        while (p < n && space(s[p]))
            p++;
        size_t e = p;
        while (e < n && !space(s[e]))
            e++;
        int r = run_part(s + p, e - p);
        if (!r || (kind && r != kind) || ++k > RUN_MAX)
            return false;
        kind = r;
        memcpy(j + jn, s + p, e - p);
        jn += e - p;
        p = e;
    }
    return k >= 2 && run_hidden(j, jn, kind, k, true);
}

/* ---- replay: a recorded text against the page's ---- */

/* Folded text: white space runs one space, the ends trimmed (case kept:
 * compared folded, and a hidden word's shape needs it); mk (want only)
 * marks the bytes that stand for a hidden word (1) or a hidden rest of
 * a sentence, REPLAY_TEXT_REST (2). */
typedef struct {
    base_buf s;
    base_buf mk;
    bool sp;
} folded;

static void fold_put(folded *f, const char *s, size_t n, char marker)
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
    char id[REPLAY_ID_HEX + 1];
    for (const char *p = want; *p;) {
        size_t nl = 0, hl = 0;
        int k = replay_ph_at(p, &nl);
        const char *v = k == REPLAY_PH_NAME ? replay_var(o, p + 2, nl) : NULL;
        if (k == REPLAY_PH_ESC) {
            fold_put(f, "{{", 2, false);
            p += 4;
        } else if (k == REPLAY_PH_NAME) {
            fold_put(f, v ? v : p, v ? strlen(v) : nl + 4, false);
            p += nl + 4;
        } else if (strncmp(p, REPLAY_TEXT_REST, REST_LEN) == 0) {
            fold_put(f, "*", 1, 2);
            p += REST_LEN;
        } else if ((hl = replay_hidden_at(p, id, NULL)) > 0) {
            fold_put(f, "*", 1, true);
            p += hl;
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

static bool tm_at(tmatch *m, size_t hi, size_t wi, bool whole);

/* At REPLAY_TEXT_REST (w[wi]): one or more words of h from hi, any, and
 * the rest of w after them. */
static bool tm_rest(tmatch *m, size_t hi, size_t wi, bool whole)
{
    for (size_t k = m->hn; k > hi && --m->budget > 0; k--)
        if (m->h[k - 1] != ' ' && (k == m->hn || m->h[k] == ' ') && tm_at(m, k, wi + 1, whole))
            return true;
    return false;
}

/* Does w[wi..] match h[hi..] (to h's end when whole), ASCII case folded?
 * A marked byte of w matches one word of h, or a group of up to RUN_MAX
 * words, that the recorder would hide (replay_text_unit_secret, read as
 * after a word naming a secret). */
static bool tm_at(tmatch *m, size_t hi, size_t wi, bool whole)
{
    while (wi < m->wn) {
        if (--m->budget < 0)
            return false;
        if (m->mk[wi] == 2)
            return tm_rest(m, hi, wi, whole);
        if (m->mk[wi]) {
            size_t e = hi, words = 0;
            while (e < m->hn && (m->h[e] != ' ' || ++words < RUN_MAX))
                e++;
            for (size_t k = e; k > hi && --m->budget > 0; k--)
                if (m->h[k - 1] != ' ' && replay_text_unit_secret(m->h + hi, k - hi, m->a) &&
                    tm_at(m, k, wi + 1, whole))
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
