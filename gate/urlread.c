/*
 * urlread.c — the words of a URL the classifier reads (split out of
 * classify.c, which keeps the phrase tables and the element's reading):
 * a GET's URL (an open's, a link's href, a GET form's action, a page's
 * own GET: gate_classify_get), a data-carrying request's path
 * (gate_classify_request), the query's operation keys and act keys.
 * docs/gate.md, "The words of a URL", has the rules in prose.
 *
 * Pure and bounded: the URL is copied once (its length plus the query),
 * every word read; the phrases are matched by classify.c
 * (gate_phrase_url, gate_phrase_path), the noun-first and joined acts by
 * urlact.c (gate_url_act).
 */
#include "gate/gate_int.h"
#include "url/url.h"
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define N(t) (sizeof(t) / sizeof((t)[0]))

/* A query value that is only one of these words, under a key that names
 * what to do (action=close, op=cancel, WordPress's action=trash; not
 * q=close, a search); or a query key that is one (?cancel=1, ?close=true:
 * the key names the act, the value is a flag). */
static const char *const URLV_VALUE[] = {"close", "cancel", "confirm", "approve", "execute",
                                         "trash"};
static const char *const URLV_KEY[] = {"action", "op", "operation", "do", "cmd", "command",
                                       "verb", "act", "task", "intent", "mode"};

/* The path of a form's action or a request's URL as the browser sends it
 * (url/url.h: dot segments resolved), on the heap (free it); a URL the
 * parser refuses is read whole (more words, never fewer). NULL: out of
 * memory. */
static void pct_decode(const char *s, size_t n, char *out, size_t cap);

char *gate_url_path_dup(const char *url)
{
    size_t n = (url ? strlen(url) : 0) + 2;
    char *out = malloc(n);
    if (out && url_path(url, out, n))
        snprintf(out, n, "%s", url ? url : "");
    return out;
}

int gate_classify_request(const char *method, const char *url, char *why, size_t cap)
{
    if (why && cap)
        why[0] = 0;
    if (method && strcasecmp(method, "DELETE") == 0) {
        gate_why(why, cap, "%s: the request's method is %s%s", "delete", "DELETE", "");
        return GATE_CONSEQ_DELETE;
    }
    char *path = gate_url_path_dup(url);
    if (!path) {
        gate_why(why, cap, "%s: the request's URL %s%s", "production_change",
             "could not be read", " (out of memory)");
        return GATE_CONSEQ_PRODUCTION;
    }
    const char *ph = NULL;
    int k = gate_phrase_path(path, &ph);
    if (!k) {
        /* The words a GET URL is read with, too (percent-decoded, camelCase
         * split): "/account/close-account/confirm" or "/newsletter/
         * unsubscribe" is the same endpoint whichever method reaches it
         * (red team s12, G9b). */
        size_t n = strlen(path) + 1;
        char *dec = malloc(n);
        if (!dec) {
            free(path);
            gate_why(why, cap, "%s: the request's URL %s%s", "production_change",
                 "could not be read", " (out of memory)");
            return GATE_CONSEQ_PRODUCTION;
        }
        pct_decode(path, n - 1, dec, n);
        k = gate_phrase_url(dec, &ph);
        char act[96];
        int ak = k ? 0 : gate_url_act(dec, n, act, sizeof act);
        free(dec);
        if (ak) {
            gate_why(why, cap, "%s: request path \"%s\" has \"%s\" (an act named noun first or "
                 "joined)", gate_conseq_name(ak), path, act);
            free(path);
            return ak;
        }
    }
    if (k)
        gate_why(why, cap, "%s: request path \"%s\" has \"%s\"", gate_conseq_name(k), path, ph);
    free(path);
    return k;
}

/* Percent-decode [s, s + n) into out (cap), '+' read as a space; a byte
 * that decodes to a control reads as a space. */
static void pct_decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        int c = (unsigned char)s[i], hi, lo;
        if (c == '%' && i + 2 < n && (hi = base_hex_value(s[i + 1])) >= 0 &&
            (lo = base_hex_value(s[i + 2])) >= 0) {
            c = hi * 16 + lo;
            i += 2;
        } else if (c == '+') {
            c = ' ';
        }
        out[o++] = (char)(c < 0x20 || c == 0x7f ? ' ' : c);
    }
    out[o] = 0;
}

/* One word of list (n entries), whole, ASCII case folded, in [v + b, v + l). */
const char *gate_word_of(const char *v, size_t b, size_t l, const char *const *list,
                         size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (strlen(list[k]) == l - b && strncasecmp(v + b, list[k], l - b) == 0)
            return list[k];
    return NULL;
}

/* ---- the query ---- */

/* One parameter of a query: its key [k, ke), its value [v, ve) (v NULL:
 * no '='). */
typedef struct {
    const char *k, *ke, *v, *ve;
} qparam;

static bool qparam_next(const char **p, const char *end, qparam *x)
{
    if (*p >= end)
        return false;
    const char *amp = memchr(*p, '&', (size_t)(end - *p));
    const char *e = amp ? amp : end;
    const char *eq = memchr(*p, '=', (size_t)(e - *p));
    x->k = *p;
    x->ke = eq ? eq : e;
    x->v = eq ? eq + 1 : NULL;
    x->ve = e;
    *p = amp ? amp + 1 : end;
    return true;
}

/* [s, e) percent-decoded into out (cap), spaces trimmed; false when it
 * does not fit (then out holds its first cap - 1 bytes). */
static bool qdecode(const char *s, const char *e, char *out, size_t cap)
{
    pct_decode(s, (size_t)(e - s), out, cap);
    size_t b = strspn(out, " "), l = strlen(out);
    while (l > b && out[l - 1] == ' ')
        l--;
    memmove(out, out + b, l - b);
    out[l - b] = 0;
    return (size_t)(e - s) < cap;
}

/* The words of s (cut at non-alphanumerics and camelCase humps) include
 * one of list. */
static bool has_word(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; s[i];) {
        bool an = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                  (s[i] >= '0' && s[i] <= '9');
        if (!an) {
            i++;
            continue;
        }
        size_t b = i++;
        while (((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')) ||
               (s[i] >= 'A' && s[i] <= 'Z' && !(s[i - 1] >= 'a' && s[i - 1] <= 'z')))
            i++;
        if (gate_word_of(s, b, i, list, n))
            return true;
    }
    return false;
}

/* The value of x is a flag: none, empty, 1, true, yes, on, y. */
static bool flag_value(const qparam *x)
{
    static const char *const FLAG[] = {"", "1", "true", "yes", "on", "y"};
    char v[8];
    return !x->v || (qdecode(x->v, x->ve, v, sizeof v) &&
                     gate_word_of(v, 0, strlen(v), FLAG, N(FLAG)));
}

/* x sets a piece of the page's UI, not an act (red team s17, R7-12): a key
 * naming a dialog, a modal, a panel ("delete_dialog", "showCloseModal")
 * with a state for its value ("open", "1", "hidden"). Its words are not
 * read. */
static bool ui_flag(const qparam *x)
{
    static const char *const UI_NOUN[] = {"dialog", "modal", "popup", "popover", "panel",
                                          "drawer", "sheet", "overlay", "prompt", "banner",
                                          "toast", "tooltip", "sidebar", "menu"};
    static const char *const UI_STATE[] = {"", "1", "0", "true", "false", "yes", "no", "on",
                                           "off", "open", "opened", "show", "shown", "visible",
                                           "hidden", "hide", "closed", "close"};
    char k[64], v[12];
    if (!qdecode(x->k, x->ke, k, sizeof k) || !has_word(k, UI_NOUN, N(UI_NOUN)))
        return false;
    return !x->v || (qdecode(x->v, x->ve, v, sizeof v) &&
                     gate_word_of(v, 0, strlen(v), UI_STATE, N(UI_STATE)));
}

/* x carries a value to the service (an account act's data, red team s17,
 * R7-7): a value under a key that is none of a link's own (a token, a
 * code, a signature, a return address, a page's language or tab). */
static bool data_value(const qparam *x)
{
    static const char *const LINK_WORD[] = {"token", "code", "state", "sig", "signature",
                                            "nonce", "hash", "expires", "exp", "ts", "utm",
                                            "ref", "lang", "locale", "hl", "tab", "page",
                                            "view", "return", "returnto", "redirect", "next",
                                            "continue", "callback", "from", "source", "src"};
    char k[64];
    if (!x->v || x->v == x->ve)
        return false;
    return !qdecode(x->k, x->ke, k, sizeof k) || !has_word(k, LINK_WORD, N(LINK_WORD));
}

/* A query value [p, e) read as a route: under an operation key
 * (URLV_KEY), one URLV_VALUE word or what the path's act rules read in it
 * ("action=deleteuser", "do=closeaccount"); under any key, a route the
 * value holds ("r=order/cancel": Yii, "route=account/close": OpenCart;
 * not an address: "/x", "https://..."; red team s17, R7-9). what gets
 * how. */
static int value_act(const char *p, const char *e, bool op, char *what, size_t cap)
{
    size_t n = (size_t)(e - p) + 1;
    char *v = malloc(n);
    if (!v) {
        snprintf(what, cap, "%s", "(a value that could not be read: out of memory)");
        return GATE_CONSEQ_PRODUCTION;
    }
    qdecode(p, e, v, n);
    size_t l = strlen(v);
    const char *w = op ? gate_word_of(v, 0, l, URLV_VALUE, N(URLV_VALUE)) : NULL;
    bool route = op || (strchr(v, '/') && v[0] != '/' && !strstr(v, "://"));
    char act[96];
    int k = w ? GATE_CONSEQ_DELETE : route ? gate_url_act(v, l, act, sizeof act) : 0;
    if (w || k)
        snprintf(what, cap, "%s", w ? w : act);
    free(v);
    return k;
}

/* The act the query [p, end) of the URL dec (decoded) names by one key or
 * value: a key that is a URLV_VALUE word with a flag for its value, on a
 * URL naming a thing it acts on ("/orders/5?cancel=1"; not "/inbox?close=1",
 * a UI flag, nor "?cancel=https://...", a return address: red team s17,
 * R7-12), or a value read as a route (value_act); its kind (what gets
 * how), else GATE_CONSEQ_NONE. */
static int query_act(const char *p, const char *end, const char *dec, char *what, size_t cap)
{
    qparam x;
    int noun = -1;      /* dec's act noun, read once, when first needed */
    while (qparam_next(&p, end, &x)) {
        char key[24];
        pct_decode(x.k, (size_t)(x.ke - x.k), key, sizeof key);
        const char *w = gate_word_of(key, 0, strlen(key), URLV_VALUE, N(URLV_VALUE));
        if (w && flag_value(&x) && noun < 0)
            noun = gate_url_noun(dec);
        if (w && flag_value(&x) && noun > 0) {
            snprintf(what, cap, "%s", w);
            return GATE_CONSEQ_DELETE;
        }
        bool op = gate_word_of(key, 0, strlen(key), URLV_KEY, N(URLV_KEY));
        int k = x.v ? value_act(x.v, x.ve, op, what, cap) : GATE_CONSEQ_NONE;
        if (k)
            return k;
    }
    return GATE_CONSEQ_NONE;
}

/* The query [p, end) grants an account's access by a flag
 * ("/oauth/authorize?client_id=evil&allow=1": red team s17, R7-7) or a
 * value ("decision=allow", "authorize=Allow": red team s18) on a URL dec
 * naming what it grants; what gets the word. */
static bool query_grant(const char *p, const char *end, const char *dec, char *what,
                        size_t cap)
{
    static const char *const GRANT[] = {"allow", "approve", "approved", "grant", "granted",
                                        "consent", "accept", "accepted", "authorize",
                                        "authorized", "authorise", "authorised", "confirm",
                                        "confirmed"};
    qparam x;
    int noun = -1;      /* dec's SEC_NOUN, read once, when first needed */
    while (qparam_next(&p, end, &x)) {
        char key[24];
        pct_decode(x.k, (size_t)(x.ke - x.k), key, sizeof key);
        char v[24] = "";
        if (x.v)
            qdecode(x.v, x.ve, v, sizeof v);
        const char *w = gate_word_of(key, 0, strlen(key), GRANT, N(GRANT));
        const char *wv = gate_word_of(v, 0, strlen(v), GRANT, N(GRANT));
        bool yes = (w && (flag_value(&x) || wv)) || (wv && x.v != x.ve);
        w = w ? w : wv;
        if (yes && noun < 0)
            noun = gate_url_sec_noun(dec);
        if (yes && noun > 0) {
            snprintf(what, cap, "%s", w);
            return true;
        }
    }
    return false;
}

/* ---- account data in a query (red team s18, the note's point 2) ---- */

/* The words of [s, s + n) (has_word's) include one of list. */
static bool has_word_n(const char *s, size_t n, const char *const *list, size_t ln)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf - 1 ? n : sizeof buf - 1), s);
    return has_word(buf, list, ln);
}

/* v is an email address: a local part, '@', a host with a dot. */
static bool email_shape(const char *v)
{
    const char *at = strchr(v, '@');
    return at && at > v && strchr(at, '.') && at[1] != '.' && !strchr(v, ' ');
}

/* v is an IBAN: two letters, two digits, 11 to 30 letters or digits
 * (spaces between groups left out). */
static bool iban_shape(const char *v)
{
    size_t n = 0;
    for (const char *c = v; *c; c++) {
        bool d = *c >= '0' && *c <= '9', l = (*c >= 'A' && *c <= 'Z') ||
                                             (*c >= 'a' && *c <= 'z');
        if (*c == ' ')
            continue;
        if (!(d || l) || (n < 2 && !l) || (n >= 2 && n < 4 && !d))
            return false;
        n++;
    }
    return n >= 15 && n <= 34;
}

/* v is a phone number: a '+' (or a phone key) and 7 to 15 digits, with
 * spaces, dots, dashes, brackets only. */
static bool phone_shape(const char *v, bool key)
{
    size_t d = 0;
    const char *c = v + (*v == '+');
    for (; *c; c++) {
        if (*c >= '0' && *c <= '9')
            d++;
        else if (!strchr(" .-()", *c))
            return false;
    }
    return (key || *v == '+') && d >= 7 && d <= 15;
}

/* What the parameter (key k, value v, decoded) hands the service that
 * changes who signs in, gets mail or money, or administers: a short
 * phrase, else NULL. */
static const char *account_value(const char *k, const char *v)
{
    static const char *const BANK_KEY[] = {"iban", "bic", "swift", "routing", "sortcode",
                                           "beneficiary", "payee"};
    static const char *const PHONE_KEY[] = {"phone", "tel", "mobile", "sms", "msisdn"};
    static const char *const ROLE_KEY[] = {"role", "roles", "permission", "permissions",
                                           "privilege", "privileges", "rights"};
    static const char *const ROLE_VALUE[] = {"admin", "administrator", "owner", "superuser",
                                             "root", "maintainer", "sudo"};
    static const char *const KEY_PREFIX[] = {"ssh-", "ecdsa-", "sk-ssh-", "sk-ecdsa-",
                                             "-----begin"};
    if (email_shape(v))
        return "an email address in the query";
    if (iban_shape(v) || has_word(k, BANK_KEY, N(BANK_KEY)))
        return "an account number in the query";
    if (phone_shape(v, has_word(k, PHONE_KEY, N(PHONE_KEY))))
        return "a phone number in the query";
    if (strstr(v, "://"))
        return "an address (URL) in the query";
    for (size_t i = 0; i < N(KEY_PREFIX); i++)
        if (strncasecmp(v, KEY_PREFIX[i], strlen(KEY_PREFIX[i])) == 0)
            return "a key in the query";
    if (has_word(k, ROLE_KEY, N(ROLE_KEY)) || has_word(v, ROLE_VALUE, N(ROLE_VALUE)))
        return "a role in the query";
    return NULL;
}

/* A key that searches, or names a way back (the value is no account's
 * data): q=, search=, cancel_url=... */
static bool search_key(const char *k)
{
    static const char *const SEARCH[] = {"q", "query", "search", "s", "term", "terms",
                                         "keyword", "keywords", "find", "cancel", "success",
                                         "failure", "fail", "back", "done", "error"};
    return has_word(k, SEARCH, N(SEARCH));
}

/* The query [p, end) of the URL dec (decoded, path fl bytes) hands the
 * service an account's data (red team s18, point 2 of the note on R7-7):
 * an email address, an account number, a phone number, a URL, a key or a
 * role as a value; a sign-in factor turned off ("?mfa=off", "/2fa?enabled=0");
 * any value for a URL naming a password or an owner ("/settings/password?
 * new=...", "/settings/owner?new=..."). what gets how. */
static bool query_account(const char *p, const char *end, const char *dec, size_t fl,
                          char *what, size_t cap)
{
    static const char *const MFA[] = {"2fa", "mfa", "tfa", "totp", "otp", "factor", "twofactor",
                                      "2sv", "authenticator", "passkey", "webauthn"};
    static const char *const OFF[] = {"0", "false", "off", "no", "n", "disable", "disabled",
                                      "none"};
    static const char *const HELD[] = {"password", "passwd", "passphrase", "owner", "owners",
                                       "ownership"};
    bool mfa = has_word_n(dec, fl, MFA, N(MFA));
    qparam x;
    while (qparam_next(&p, end, &x)) {
        char k[64], v[256];
        if (!data_value(&x))
            continue;
        qdecode(x.k, x.ke, k, sizeof k);
        qdecode(x.v, x.ve, v, sizeof v);
        if (search_key(k))
            continue;
        const char *how = account_value(k, v);
        bool off = gate_word_of(v, 0, strlen(v), OFF, N(OFF));
        if (!how && off && (mfa || has_word(k, MFA, N(MFA))))
            how = "a sign-in factor turned off";
        if (!how && has_word_n(dec, fl, HELD, N(HELD)))
            how = "a new password or owner in the query";
        if (how) {
            snprintf(what, cap, "%s", how);
            return true;
        }
    }
    return false;
}

/* The path dec (fl bytes) turns a sign-in factor off: "/settings/
 * two-factor/off". */
static bool path_mfa_off(const char *dec, size_t fl, char *what, size_t cap)
{
    static const char *const MFA[] = {"2fa", "mfa", "tfa", "totp", "otp", "factor", "twofactor",
                                      "2sv", "authenticator", "passkey", "webauthn"};
    static const char *const OFF[] = {"off", "disabled", "deactivate", "turnoff", "turn-off"};
    const char *seg = dec;
    for (const char *c = dec; c < dec + fl; c++)
        if (*c == '/')
            seg = c + 1;
    size_t sl = (size_t)(dec + fl - seg);
    if (!gate_word_of(seg, 0, sl, OFF, N(OFF)) || !has_word_n(dec, fl, MFA, N(MFA)))
        return false;
    snprintf(what, cap, "%s", "a sign-in factor turned off");
    return true;
}

/* ---- the path ---- */

/* A plain name: letters, digits, '.', '-', '_' only (a ';' holds path
 * parameters some servers strip before routing: "delete;.html" is routed
 * to "delete", red team s17, R7-3; '%' and other bytes may be read
 * otherwise). */
static bool plain_name(const char *seg, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)seg[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && c != '.' && c != '-' && c != '_')
            return false;
    }
    return true;
}

/* A static file's extension (a style, a script, an image, a font, a source
 * map), at the end of a last path segment of len bytes, a plain name. */
static bool static_name(const char *seg, size_t len)
{
    static const char *const EXT[] = {"css", "js", "mjs", "png", "jpg", "jpeg", "gif", "svg",
                                      "webp", "ico", "woff", "woff2", "ttf", "otf", "map"};
    const char *dot = NULL;
    for (size_t i = 0; i < len; i++)
        if (seg[i] == '.')
            dot = seg + i;
    if (!plain_name(seg, len) || !dot || dot == seg)
        return false;
    size_t el = (size_t)(seg + len - dot - 1);
    for (size_t k = 0; k < N(EXT); k++)
        if (strlen(EXT[k]) == el && strncasecmp(dot + 1, EXT[k], el) == 0)
            return true;
    return false;
}

/* A segment [b, e) after a documentation segment (end: the path's end):
 * a plain name, not a dot file, no word with a digit but a version
 * ("v1"): a page's title, not a resource's id ("/docs/123/delete"
 * deletes document 123). */
static bool doc_plain(const char *b, const char *e, const char *end)
{
    if (b == e)
        return e == end;        /* a trailing slash */
    if (*b == '.' || !plain_name(b, (size_t)(e - b)))
        return false;
    for (const char *w = b; w < e;) {
        const char *x = w;
        bool digit = false;
        for (; x < e && *x != '.' && *x != '-' && *x != '_'; x++)
            digit = digit || (*x >= '0' && *x <= '9');
        bool version = (*w == 'v' || *w == 'V') && x - w > 1 && digit &&
                       strspn(w + 1, "0123456789") == (size_t)(x - w - 1);
        if (digit && !version)
            return false;
        w = x < e ? x + 1 : e;
    }
    return true;
}

/* The service's API reference (red team s17, R7-12; s18, R8-3): after a
 * segment docs, documentation, reference, apidocs... when every later
 * segment is doc_plain, the weak act verbs (DOC_WEAK: the ones that are
 * an act with no noun, and capture) are pages' names ("/docs/api/orders/
 * cancel" documents the endpoint): they are blanked in the copy of the
 * path p (n bytes) the act rules read. Every other word is read: a strong
 * verb (delete, send, pay, revoke...) and the phrases, whatever segment
 * comes before ("/docs/quarterly-report/delete", "/projects/docs/delete");
 * a help centre's, a FAQ's words and any host's are read as every path's
 * ("/help/account/close", "/faq/subscription/cancel"; developer.* and
 * support.* hosts are signed-in consoles). */
static void doc_mask(char *p, size_t n)
{
    static const char *const DOC_SEG[] = {"docs", "documentation", "reference", "apidocs",
                                          "api-docs", "api-reference", "apireference"};
    static const char *const DOC_WEAK[] = {"close", "cancel", "confirm", "approve", "execute",
                                           "capture"};
    char *end = p + n, *cut = NULL;
    if (n == 0 || *p != '/')
        return;
    for (char *b = p + 1;;) {
        char *e = memchr(b, '/', (size_t)(end - b));
        e = e ? e : end;
        if (cut && !doc_plain(b, e, end))
            return;
        if (!cut && e < end && gate_word_of(b, 0, (size_t)(e - b), DOC_SEG, N(DOC_SEG)))
            cut = e;
        if (e == end)
            break;
        b = e + 1;
    }
    for (char *w = cut; w && w < end;) {
        while (w < end && !((*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z')))
            w++;
        char *x = w;
        while (x < end && ((*x >= 'a' && *x <= 'z') || (*x >= 'A' && *x <= 'Z')))
            x++;
        if (x > w && gate_word_of(w, 0, (size_t)(x - w), DOC_WEAK, N(DOC_WEAK)))
            memset(w, '-', (size_t)(x - w));
        w = x;
    }
}

/* ---- a GET's words ---- */

typedef struct {
    char *buf;                  /* one allocation for the three below */
    char *raw;                  /* the path then '?' and the query */
    const char *full;           /* decoded: the path, then the query */
    const char *acts;           /* full with an API reference's weak verbs
                                   blanked (doc_mask): the act rules read it */
    size_t fl;                  /* the path's length in full */
    const char *words;          /* full without a page's file name: the
                                   phrases read it */
    const char *q, *qe;         /* the query in raw, after its '?' */
    bool data;                  /* a parameter carries a value (data_value) */
} get_read;

/* The query [p, end) into g->raw at o: tabs and newlines dropped as the
 * browser drops them ("clo<TAB>se" is sent "close"), a UI flag's
 * parameter left out; g->q, g->qe and g->data set. */
static void query_copy(get_read *g, size_t o, const char *p, const char *end)
{
    g->raw[o++] = '?';
    g->q = g->raw + o;
    qparam x;
    for (const char *s = p; qparam_next(&s, end, &x);) {
        if (ui_flag(&x))
            continue;
        if (g->raw + o != g->q)
            g->raw[o++] = '&';
        for (const char *c = x.k; c < x.ve; c++)
            if (*c != '\t' && *c != '\n' && *c != '\r')
                g->raw[o++] = *c;
    }
    g->raw[o] = 0;
    g->qe = g->raw + o;
    for (const char *s = g->q; qparam_next(&s, g->qe, &x);)
        g->data = g->data || data_value(&x);
}

/* Read url as the browser sends it into g: 0, or -1 out of memory (or a
 * path url/url.h cannot read). */
static int get_read_url(const char *url, const url_parts *u, bool statics, get_read *g)
{
    memset(g, 0, sizeof *g);
    /* The query, up to the fragment (the browser never sends it). */
    const char *p = url + u->rest, *end = url + u->rest_end;
    const char *hash = memchr(p, '#', (size_t)(end - p));
    if (hash)
        end = hash;
    const char *qm = memchr(p, '?', (size_t)(end - p));
    /* The path as the browser sends it: dot segments resolved ("/x/../send"
     * is "/send"; red team s12, G1), every word read (no cap on words or
     * bytes: a URL padded with filler words is read to its end). */
    size_t n = (size_t)(end - p) + 2, qn = qm ? (size_t)(end - qm) : 0, r = n + qn + 2;
    g->buf = malloc(4 * r);
    if (!g->buf || url_path(url, g->buf, n))
        return -1;
    g->raw = g->buf;
    char *full = g->buf + r, *words = full + r, *acts = words + r;
    /* A static page's file name (".html", ".htm", a plain name) names a
     * document, not an endpoint: the phrases do not read it ("pin-send.html"
     * shows a form); the act rules do ("/orders/5/cancel.html" is Rails'
     * cancel action). Not when a query follows: frameworks route
     * "/account/delete.html?id=7" to the delete endpoint (Rails' format
     * suffix; red team s12, G1). With statics (a page's own request that
     * is no navigation, red team s13, N3), a static file's name is not
     * read at all: "/icons/send.svg" and "/js/delete-dialog.js" load; the
     * directory words are still read ("/account/delete/x.png" is a
     * delete). */
    size_t rl = strlen(g->raw);
    char *seg = g->raw + rl;
    while (seg > g->raw && seg[-1] != '/')
        seg--;
    size_t sl = (size_t)(g->raw + rl - seg), page = rl;
    if (!qm && statics && static_name(seg, sl)) {
        *seg = 0;
        rl = (size_t)(seg - g->raw);
        page = rl;
    } else if (!qm && plain_name(seg, sl) &&
             ((sl > 5 && strncasecmp(seg + sl - 5, ".html", 5) == 0) ||
              (sl > 4 && strncasecmp(seg + sl - 4, ".htm", 4) == 0)))
        page = (size_t)(seg - g->raw);
    if (qm)
        query_copy(g, rl, qm + 1, end);
    pct_decode(g->raw, rl, full, r);
    g->fl = strlen(full);
    pct_decode(g->raw + rl, strlen(g->raw + rl), full + g->fl, r - g->fl);
    pct_decode(g->raw, page, words, r);
    size_t wl = strlen(words);
    pct_decode(g->raw + rl, strlen(g->raw + rl), words + wl, r - wl);
    memcpy(acts, full, strlen(full) + 1);
    doc_mask(acts, g->fl);
    g->full = full;
    g->acts = acts;
    g->words = words;
    return 0;
}

int gate_classify_url(const char *url, char *why, size_t cap)
{
    return gate_classify_get(url, false, why, cap);
}

int gate_classify_get(const char *url, bool statics, char *why, size_t cap)
{
    int k = GATE_CONSEQ_NONE;
    int cls = gate_classify_get_class(url, statics, &k, why, cap);
    if (cls != GATE_CLASS_CONSEQUENTIAL && why && cap)
        why[0] = 0;
    return cls == GATE_CLASS_CONSEQUENTIAL ? k : GATE_CONSEQ_NONE;
}

/* The consequential act g names: its phrases, the acts named noun first
 * or joined (urlact.c), a query key's or value's; its kind, else NONE. */
static int get_conseq(const get_read *g, char *why, size_t cap)
{
    const char *ph = NULL;
    int k = gate_phrase_url(g->words, &ph);
    if (k) {
        gate_why(why, cap, "%s: the URL \"%s\" has \"%s\"", gate_conseq_name(k), g->full, ph);
        return k;
    }
    char act[128];
    k = gate_url_act(g->acts, g->fl, act, sizeof act);
    if (k)
        gate_why(why, cap, "%s: the URL \"%s\" has \"%s\" (an act named noun first or "
                 "joined)", gate_conseq_name(k), g->full, act);
    else if (g->q && (k = query_act(g->q, g->qe, g->full, act, sizeof act)))
        gate_why(why, cap, "%s: the URL \"%s\" has the query key or value \"%s\"",
                 gate_conseq_name(k), g->full, act);
    return k;
}

int gate_classify_get_class(const char *url, bool statics, int *conseq, char *why, size_t cap)
{
    if (conseq)
        *conseq = GATE_CONSEQ_NONE;
    if (why && cap)
        why[0] = 0;
    url_parts u;
    if (!url || url_parse(url, &u, NULL) != 0)
        return GATE_CLASS_READ;
    get_read g;
    if (get_read_url(url, &u, statics, &g)) {
        free(g.buf);
        gate_why(why, cap, "%s: the URL %s%s", "production_change", "could not be read", "");
        if (conseq)
            *conseq = GATE_CONSEQ_PRODUCTION;
        return GATE_CLASS_CONSEQUENTIAL;
    }
    int cls = GATE_CLASS_READ, k = get_conseq(&g, why, cap);
    char act[80];
    if (k) {
        cls = GATE_CLASS_CONSEQUENTIAL;
        if (conseq)
            *conseq = k;
    } else if (gate_url_account(g.full, g.fl, g.data, act, sizeof act) ||
               (g.q && query_grant(g.q, g.qe, g.full, act, sizeof act)) ||
               (g.q && query_account(g.q, g.qe, g.full, g.fl, act, sizeof act)) ||
               path_mfa_off(g.full, g.fl, act, sizeof act)) {
        /* An account-security act (red team s17, R7-7): confirmed, as a
         * button doing it on the service is. */
        cls = GATE_CLASS_AUTH_CHANGE;
        gate_why(why, cap, "%s: the URL \"%s\" has \"%s\" (an account's security: who signs "
                 "in, who gets its mail or money, who owns it)", "auth_change", g.full, act);
    }
    free(g.buf);
    return cls;
}

bool gate_op_key(const char *key)
{
    return gate_word_of(key, 0, strlen(key), URLV_KEY, N(URLV_KEY)) != NULL;
}

const char *gate_op_value(const char *v, size_t b, size_t l)
{
    return gate_word_of(v, b, l, URLV_VALUE, N(URLV_VALUE));
}
