/*
 * urlact.c — the acts a URL's path names in the shapes the classifier's
 * phrases (classify.c, verb first, one word a word) do not read (red team
 * s16, R6-9): the noun first ("/account/close", "/orders/123/cancel",
 * "/invoice/5/pay": REST and Rails member routes) and the words joined
 * without a hump ("/admin/deleteuser.php", "/account/closeaccount").
 *
 * Three rules, each on the path's segments (cut at '/'; a segment's ';'
 * parameters, which servers strip before routing, left out), a segment's
 * words cut at non-alphanumerics, bytes beyond ASCII and camelCase humps,
 * case folded (docs/gate.md, "The words of a URL", has them in prose):
 *
 *  1. An act segment: a segment made only of act verbs (ACT_VERB), act
 *     nouns (ACT_NOUN), numbers, FILLER words and an extension (a
 *     handler's, or a format suffix that is no static file's: red team
 *     s17, R7-9) ("cancel.json", "cancel.pdf", "orders.cancel",
 *     "order-123-cancel"), with at least one act verb (or a JOIN_VERB
 *     written whole: "delete.html"). A verb that needs no noun (close, cancel, confirm,
 *     approve, execute: the words the query rule takes under action=)
 *     makes it consequential by itself; another (pay, place, empty,
 *     merge, refund, ...) only when the URL (path or query) also names a
 *     noun of a kind it acts on ("/invoice/5/pay", "/trash/empty",
 *     "/pulls/5/merge"; not "/cart/empty", "/oauth/authorize"), and pay
 *     and merge only in a segment without a noun ("/billpay" is a page,
 *     "merge_requests" a list). A segment with any other word
 *     ("how-to-cancel-a-flight", "order-confirmation", "close.svg": a
 *     static file's extension is no handler's) names a page, not an act.
 *  2. A joined act word: an act verb and an act noun written as one word,
 *     either order ("closeaccount", "ordercancel", "emptytrash"), counts
 *     as both in rule 1.
 *  3. A joined strong verb: a word that begins with one of JOIN_VERB
 *     ("deleteuser", "removepayee", "deployprod") unless the rest is an
 *     inflection ("deleted", "publishers", "deployments") or a past
 *     participle before a plural ("deleteditems": a view), or ends with
 *     one after at least 3 letters that are not UNPREFIX ("userdelete";
 *     not "autodelete", "undelete"). "send" joins only with what is sent
 *     ("sendmoney", "messagesend"; not "sendgrid").
 *
 * "confirm" does the kind of a thing paid, bought or merged the URL
 * names; without one, none in a verification flow (VERIFY_WORD: red team
 * s17, R7-12) unless the URL names a thing held other than the account
 * ("/account/subscription/confirm", "/account/membership/confirm": red
 * team s18), else a delete's.
 *
 * And, apart (gate_url_account, red team s17, R7-7), the acts that change
 * an account's security: a segment of SEC_VERB, SEC_NOUN and the words
 * above, on a URL naming a SEC_NOUN (a weak verb only when the query
 * carries a value): class auth_change, a confirmation.
 *
 * Pure, no allocation, no state; O(length of the URL): each word is
 * compared with the fixed tables, the URL's nouns read once, only when a
 * verb needs them.
 */
#include "gate/gate_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define N(t) (sizeof(t) / sizeof((t)[0]))

/* Kinds of noun, as a mask of the nouns a verb acts on. */
enum { NK_DEL = 1, NK_BUY = 2, NK_PAY = 4, NK_PROD = 8, NK_MONEY = NK_BUY | NK_PAY };

typedef struct {
    const char *w;
    unsigned char kind;     /* GATE_CONSEQ_*; 0: the noun's (else dflt) */
    unsigned char dflt;     /* the kind without a noun (ALONE verbs) */
    unsigned char nouns;    /* NK_* it needs; 0: ALONE, none needed */
    bool own;               /* only in a segment without a noun
                               ("/invoice/5/pay", "/pulls/5/merge"; "/billpay",
                               "/pay-bills" are pages, "merge_requests" a list) */
    bool verify;            /* none in a sign-up, sign-in or email
                               verification flow (VERIFY_WORD) unless the URL
                               names a thing it pays, buys or merges */
} act_verb;

static const act_verb ACT_VERB[] = {
    {"close", GATE_CONSEQ_DELETE, GATE_CONSEQ_DELETE, 0, false, false},
    {"cancel", GATE_CONSEQ_DELETE, GATE_CONSEQ_DELETE, 0, false, false},
    {"confirm", 0, GATE_CONSEQ_DELETE, 0, false, true},
    {"approve", 0, GATE_CONSEQ_DELETE, 0, false, false},
    {"execute", 0, GATE_CONSEQ_PRODUCTION, 0, false, false},
    {"empty", GATE_CONSEQ_DELETE, 0, NK_DEL, false, false},
    {"place", GATE_CONSEQ_PURCHASE, 0, NK_BUY, false, false},
    {"complete", GATE_CONSEQ_PURCHASE, 0, NK_BUY, false, false},
    {"pay", GATE_CONSEQ_SEND, 0, NK_MONEY, true, false},
    {"refund", GATE_CONSEQ_SEND, 0, NK_MONEY, false, false},
    {"capture", GATE_CONSEQ_SEND, 0, NK_MONEY, false, false},
    {"authorize", GATE_CONSEQ_SEND, 0, NK_MONEY, false, false},
    {"authorise", GATE_CONSEQ_SEND, 0, NK_MONEY, false, false},
    {"submit", 0, 0, NK_MONEY, false, false},
    {"finalize", 0, 0, NK_MONEY, false, false},
    {"finalise", 0, 0, NK_MONEY, false, false},
    {"void", GATE_CONSEQ_DELETE, 0, NK_MONEY, false, false},
    {"merge", GATE_CONSEQ_PRODUCTION, 0, NK_PROD, true, false},
};

typedef struct {
    const char *w;          /* singular; the plural is w + "s" (or "es") */
    unsigned char kind;     /* GATE_CONSEQ_*, 0: none of its own */
    unsigned char nk;       /* NK_* */
} act_noun;

/* The things an act verb after them does something to. Not the pages
 * that show a form (checkout, cart, transfer form pages are read by their
 * verbs alone): "/cart/empty" and "/checkout/complete" are reads. */
static const act_noun ACT_NOUN[] = {
    {"account", GATE_CONSEQ_DELETE, NK_DEL},
    {"subscription", GATE_CONSEQ_DELETE, NK_DEL},
    {"membership", GATE_CONSEQ_DELETE, NK_DEL},
    {"trash", GATE_CONSEQ_DELETE, NK_DEL},
    {"bin", GATE_CONSEQ_DELETE, NK_DEL},
    {"spam", GATE_CONSEQ_DELETE, NK_DEL},
    {"junk", GATE_CONSEQ_DELETE, NK_DEL},
    {"order", GATE_CONSEQ_PURCHASE, NK_BUY},
    {"booking", GATE_CONSEQ_PURCHASE, NK_BUY},
    {"reservation", GATE_CONSEQ_PURCHASE, NK_BUY},
    {"purchase", GATE_CONSEQ_PURCHASE, NK_BUY},
    {"payment", GATE_CONSEQ_SEND, NK_PAY},
    {"transfer", GATE_CONSEQ_SEND, NK_PAY},
    {"invoice", GATE_CONSEQ_SEND, NK_PAY},
    {"bill", GATE_CONSEQ_SEND, NK_PAY},
    {"payout", GATE_CONSEQ_SEND, NK_PAY},
    {"charge", GATE_CONSEQ_SEND, NK_PAY},
    {"wire", GATE_CONSEQ_SEND, NK_PAY},
    {"pull", GATE_CONSEQ_PRODUCTION, NK_PROD},
    {"pr", GATE_CONSEQ_PRODUCTION, NK_PROD},
    {"mr", GATE_CONSEQ_PRODUCTION, NK_PROD},
    {"request", 0, NK_PROD},    /* "merge_requests": licenses merge, names no kind */
    {"branch", GATE_CONSEQ_PRODUCTION, NK_PROD},
};

/* The words of the flows whose links end in "confirm" and only verify
 * (red team s17, R7-12): "/email/confirm?token=", "/account/confirm",
 * "/signup/confirm", "/password/reset/confirm", a newsletter's opt-in. */
static const char *const VERIFY_WORD[] = {"email", "emails", "signup", "sign", "register",
                                          "registration", "login", "signin", "logon",
                                          "password", "reset", "verify", "verification",
                                          "account", "accounts", "user", "users", "newsletter",
                                          "invite", "invitation", "rsvp", "optin", "opt",
                                          "subscriber", "subscribers"};

/* Words an act segment may hold besides verbs and nouns. */
static const char *const FILLER[] = {"my", "your", "the", "this", "it", "now", "all"};
/* A server handler's extension, as a segment's last word after a '.'. */
static const char *const HANDLER_EXT[] = {"php", "php3", "php4", "php5", "asp", "aspx",
                                          "jsp", "jspx", "cgi", "pl", "py", "rb", "do",
                                          "action", "json", "xml", "html", "htm", "shtml",
                                          "cfm"};
/* A static file's extension (an image, a style, a script, a font, a source
 * map: classify's statics): a file, not a format. Any other extension of
 * 1 to 6 letters is a format suffix routers take ("cancel.pdf", Rails'
 * member action with format pdf; "close.csv"; JSF's "cancel.xhtml"; red
 * team s17, R7-9). */
static const char *const FILE_EXT[] = {"css", "js", "mjs", "png", "jpg", "jpeg", "gif", "svg",
                                       "webp", "ico", "woff", "woff2", "ttf", "otf", "map",
                                       "avif", "bmp", "eot"};

/* Strong verbs read inside a joined word (rule 3): consequential as whole
 * words already (classify.c's CONSEQ). */
typedef struct {
    const char *w;
    unsigned char kind;
    bool object;            /* joins only with a SEND_OBJECT word */
} join_verb;

static const join_verb JOIN_VERB[] = {
    {"delete", GATE_CONSEQ_DELETE, false},     {"remove", GATE_CONSEQ_DELETE, false},
    {"destroy", GATE_CONSEQ_DELETE, false},    {"erase", GATE_CONSEQ_DELETE, false},
    {"purge", GATE_CONSEQ_DELETE, false},      {"terminate", GATE_CONSEQ_DELETE, false},
    {"revoke", GATE_CONSEQ_DELETE, false},     {"deactivate", GATE_CONSEQ_DELETE, false},
    {"unsubscribe", GATE_CONSEQ_DELETE, false}, {"publish", GATE_CONSEQ_PUBLISH, false},
    {"deploy", GATE_CONSEQ_PRODUCTION, false}, {"rollback", GATE_CONSEQ_PRODUCTION, false},
    {"migrate", GATE_CONSEQ_PRODUCTION, false}, {"send", GATE_CONSEQ_SEND, true},
};

static const char *const SEND_OBJECT[] = {"money", "payment", "payments", "funds", "fund",
                                          "transfer", "wire", "message", "messages", "mail",
                                          "email", "sms", "text", "invite", "invitation",
                                          "gift", "cash", "crypto", "coins", "tokens"};

/* The rest of a word after a verb that makes it another word. */
static const char *const INFLECTION[] = {"s", "es", "d", "ed", "r", "er", "ers", "rs", "ing",
                                         "ings", "ion", "ions", "al", "als", "able", "ment",
                                         "ments", "or", "ors", "ly", "ance"};
/* What before a verb makes it no act of the verb's ("autodelete" is a
 * setting; "undelete" undoes). */
static const char *const UNPREFIX[] = {"auto", "un", "non", "pre", "self"};

/* ---- words ---- */

typedef struct {
    const char *s;
    size_t n;
} span;

static bool alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool lower(char c) { return c >= 'a' && c <= 'z'; }

/* The next word of [*p, e) (cut at non-alphanumerics and camelCase humps;
 * a byte beyond ASCII cuts too); false at the end. */
static bool word_next(const char **p, const char *e, span *w)
{
    const char *s = *p;
    while (s < e && !alnum((unsigned char)*s))
        s++;
    if (s == e) {
        *p = e;
        return false;
    }
    const char *b = s++;
    while (s < e && alnum((unsigned char)*s) && !(upper(*s) && lower(s[-1])))
        s++;
    w->s = b;
    w->n = (size_t)(s - b);
    *p = s;
    return true;
}

static bool span_is(span w, const char *x)
{
    return strlen(x) == w.n && strncasecmp(w.s, x, w.n) == 0;
}

static bool span_in(span w, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (span_is(w, list[i]))
            return true;
    return false;
}

static bool digits(span w)
{
    for (size_t i = 0; i < w.n; i++)
        if (w.s[i] < '0' || w.s[i] > '9')
            return false;
    return w.n > 0;
}

static const act_verb *verb_of(span w)
{
    for (size_t i = 0; i < N(ACT_VERB); i++)
        if (span_is(w, ACT_VERB[i].w))
            return &ACT_VERB[i];
    return NULL;
}

/* An act noun, singular or plural ("orders", "branches"). */
static const act_noun *noun_of(span w)
{
    for (size_t i = 0; i < N(ACT_NOUN); i++) {
        size_t l = strlen(ACT_NOUN[i].w);
        if (w.n < l || strncasecmp(w.s, ACT_NOUN[i].w, l) != 0)
            continue;
        span rest = {w.s + l, w.n - l};
        if (rest.n == 0 || span_is(rest, "s") || span_is(rest, "es"))
            return &ACT_NOUN[i];
    }
    return NULL;
}

/* w as an act verb and an act noun joined, either order ("closeaccount",
 * "ordercancel"): both set, else false. */
static bool joined_act(span w, const act_verb **v, const act_noun **o)
{
    for (size_t i = 0; i < N(ACT_VERB); i++) {
        size_t l = strlen(ACT_VERB[i].w);
        if (w.n <= l)
            continue;
        span head = {w.s, l}, tail = {w.s + l, w.n - l};
        span vhead = {w.s, w.n - l}, vtail = {w.s + w.n - l, l};
        if (span_is(head, ACT_VERB[i].w) && (*o = noun_of(tail)))
            return (*v = &ACT_VERB[i]), true;
        if (span_is(vtail, ACT_VERB[i].w) && (*o = noun_of(vhead)))
            return (*v = &ACT_VERB[i]), true;
    }
    return false;
}

/* The rest of a joined word after a verb, read as no other word: not an
 * inflection, nor a past participle before a plural ("deleteditems"). */
static bool rest_joins(const char *verb, span rest)
{
    if (span_in(rest, INFLECTION, N(INFLECTION)))
        return false;
    bool e = verb[strlen(verb) - 1] == 'e';
    size_t p = !e && rest.n > 2 && strncasecmp(rest.s, "ed", 2) == 0 ? 2
             : e && rest.n > 1 && (rest.s[0] == 'd' || rest.s[0] == 'D') ? 1 : 0;
    if (!p || rest.n - p < 4)
        return true;
    char last = (char)(rest.s[rest.n - 1] | 0x20), prev = (char)(rest.s[rest.n - 2] | 0x20);
    return !(last == 's' && prev != 's');
}

/* A strong verb inside the joined word w (rule 3), or NULL. */
static const join_verb *joined_strong(span w)
{
    for (size_t i = 0; i < N(JOIN_VERB); i++) {
        const join_verb *j = &JOIN_VERB[i];
        size_t l = strlen(j->w);
        if (w.n <= l)
            continue;
        span head = {w.s, l}, rest = {w.s + l, w.n - l};
        if (span_is(head, j->w) &&
            (j->object ? span_in(rest, SEND_OBJECT, N(SEND_OBJECT)) : rest_joins(j->w, rest)))
            return j;
        span pre = {w.s, w.n - l}, tail = {w.s + w.n - l, l};
        if (span_is(tail, j->w) && pre.n >= 3 &&
            (j->object ? span_in(pre, SEND_OBJECT, N(SEND_OBJECT))
                       : !span_in(pre, UNPREFIX, N(UNPREFIX))))
            return j;
    }
    return NULL;
}

/* w (a segment's last word, after a '.') is a handler's extension or a
 * format suffix (1 to 6 letters, not a static file's). */
static bool format_ext(span w)
{
    if (span_in(w, HANDLER_EXT, N(HANDLER_EXT)))
        return true;
    if (w.n > 6 || span_in(w, FILE_EXT, N(FILE_EXT)))
        return false;
    for (size_t i = 0; i < w.n; i++)
        if (!upper(w.s[i]) && !lower(w.s[i]))
            return false;
    return true;
}

/* A strong verb written as a whole word ("delete.html": the phrases read
 * it, but not in a page's name they leave out), or NULL. */
static const join_verb *whole_strong(span w)
{
    for (size_t i = 0; i < N(JOIN_VERB); i++)
        if (span_is(w, JOIN_VERB[i].w))
            return &JOIN_VERB[i];
    return NULL;
}

/* ---- segments ---- */

typedef struct {
    const char *url;            /* read when first needed (most URLs name no act) */
    bool read;
    bool verify;                /* it has a VERIFY_WORD */
    bool held;                  /* it names a thing a person holds and
                                   closes (NK_DEL) other than the account:
                                   "/account/subscription/confirm" */
    const act_noun *first[4];   /* the URL's first noun of each NK_* bit */
    const act_noun *any;        /* its first noun */
    unsigned nk;                /* the NK_* bits of its nouns */
} url_nouns;

/* The act nouns of u->url (path and query, every word), once. */
static void nouns_read(url_nouns *u)
{
    if (u->read)
        return;
    u->read = true;
    span w;
    const char *e = u->url + strlen(u->url);
    for (const char *p = u->url; word_next(&p, e, &w);) {
        const act_verb *v;
        u->verify = u->verify || span_in(w, VERIFY_WORD, N(VERIFY_WORD));
        const act_noun *o = noun_of(w);
        if (!o && !joined_act(w, &v, &o))
            continue;
        if (!u->any)
            u->any = o;
        u->held = u->held || ((o->nk & NK_DEL) && strcmp(o->w, "account") != 0);
        for (unsigned b = 0; b < 4; b++)
            if ((o->nk & (1u << b)) && !u->first[b])
                u->first[b] = o;
        u->nk |= o->nk;
    }
}

/* The URL's first noun of a kind in nk, or NULL. */
static const act_noun *nouns_first(url_nouns *u, unsigned nk)
{
    nouns_read(u);
    if ((nk & 0xFu) == 0xFu)
        return u->any;
    for (unsigned b = 0; b < 4; b++)
        if ((nk & (1u << b)) && u->first[b])
            return u->first[b];
    return NULL;
}

typedef struct {
    const act_verb *verb;       /* an act segment's first verb, or NULL */
    const act_noun *noun;       /* a noun in that segment, or NULL */
    const join_verb *strong;    /* rule 3's verb, or NULL */
    const join_verb *whole;     /* a strong verb as a whole word ("delete",
                                   in a segment of act words only), or NULL */
    span word;                  /* the word that decided */
} act_seg;

/* One word of a segment into f; false when the word is no act word. */
static bool word_read(span w, bool ext, act_seg *f)
{
    const act_verb *v = verb_of(w);
    const act_noun *o = v ? NULL : noun_of(w);
    if (!v && !o && !joined_act(w, &v, &o))
        return digits(w) || ext || span_in(w, FILLER, N(FILLER));
    if (v && !f->verb) {
        f->verb = v;
        f->word = w;
    }
    if (o && !f->noun)
        f->noun = o;
    return true;
}

/* Read the segment [b, e) (rules 1 to 3) into f. */
static void seg_read(const char *b, const char *e, act_seg *f)
{
    memset(f, 0, sizeof *f);
    const char *semi = memchr(b, ';', (size_t)(e - b));
    if (semi)
        e = semi;       /* path parameters: servers strip them before routing */
    bool other = false;
    span w;
    for (const char *p = b; word_next(&p, e, &w);) {
        if ((f->strong = joined_strong(w))) {
            f->word = w;
            return;
        }
        bool ext = p == e && w.s > b && w.s[-1] == '.' && format_ext(w);
        const join_verb *j = whole_strong(w);
        if (j && !f->whole) {
            f->whole = j;
            f->word = w;
        }
        if (!j && !word_read(w, ext, f))
            other = true;
    }
    if (other)
        f->whole = NULL;
    if (other || (f->verb && f->verb->own && f->noun))
        f->verb = NULL;
}

/* The kind of act segment f (its verb and the URL's nouns u), or NONE. */
static int seg_kind(const act_seg *f, url_nouns *u)
{
    const act_verb *v = f->verb;
    if (v->verify) {
        /* "confirm": the kind of a thing it pays, buys or merges; none in a
         * verification flow (but of a subscription, a membership...);
         * else a delete's (a lone "/confirm/TOKEN"). */
        unsigned m = NK_MONEY | NK_PROD;
        const act_noun *o = f->noun && (f->noun->nk & m) ? f->noun : nouns_first(u, m);
        if (o)
            return o->kind ? o->kind : v->dflt;
        nouns_read(u);
        if (u->verify && !u->held)
            return GATE_CONSEQ_NONE;
    }
    unsigned nk = v->nouns ? v->nouns : 0xFFu;
    const act_noun *o = f->noun && (f->noun->nk & nk) ? f->noun : nouns_first(u, nk);
    if (v->nouns && !o)
        return GATE_CONSEQ_NONE;
    return v->kind ? v->kind : o && o->kind ? o->kind : v->dflt;
}

static void show(char *what, size_t cap, span w)
{
    if (what && cap)
        snprintf(what, cap, "%.*s", (int)(w.n > 64 ? 64 : w.n), w.s);
}

int gate_url_act(const char *url, size_t path_len, char *what, size_t cap)
{
    if (what && cap)
        what[0] = 0;
    if (!url)
        return GATE_CONSEQ_NONE;
    url_nouns u = {.url = url};
    const char *b = url, *end = url + strnlen(url, path_len);
    for (;;) {
        const char *e = memchr(b, '/', (size_t)(end - b));
        act_seg f;
        seg_read(b, e ? e : end, &f);
        int k = f.strong ? f.strong->kind : f.whole ? f.whole->kind
              : f.verb ? seg_kind(&f, &u) : 0;
        if (k) {
            show(what, cap, f.word);
            return k;
        }
        if (!e)
            return GATE_CONSEQ_NONE;
        b = e + 1;
    }
}

bool gate_url_noun(const char *url)
{
    url_nouns u = {.url = url ? url : ""};
    return nouns_first(&u, 0xFFu) != NULL;
}

/* ---- account security (red team s17, R7-7) ---- */

/* Verbs that change who can sign in, who gets the mail or the money, who
 * owns or administers the account. Strong: an act whenever the URL names
 * a SEC_NOUN ("/settings/disable-2fa", "/mail/forward-all",
 * "/transfer-ownership"). Weak (the names of pages that show a form:
 * "/password/reset", "/settings/keys/add"): an act only when the query
 * also carries a value (urlread.c: "/change-email?email=...",
 * "/add-payee?iban=..."). */
typedef struct {
    const char *w;
    bool strong;
    bool own;       /* its noun in its own segment ("transfer-ownership";
                       "/accounts/5/transfer" is the money's form) */
} sec_verb;

static const sec_verb SEC_VERB[] = {
    {"disable", true, false},     {"unlink", true, false},      {"disconnect", true, false},
    {"deauthorize", true, false}, {"deauthorise", true, false}, {"forward", true, false},
    {"transfer", true, true},     {"ban", true, false},         {"block", true, false},
    {"suspend", true, false},     {"lock", true, false},        {"demote", true, false},
    {"impersonate", true, false}, {"reassign", true, false},    {"change", false, false},
    {"update", false, false},     {"set", false, false},        {"add", false, false},
    {"create", false, false},     {"link", false, false},       {"connect", false, false},
    {"enable", false, false},     {"reset", false, false},      {"invite", false, false},
    {"register", false, false},   {"assign", false, false},     {"grant", false, false},
    {"allow", false, false},      {"approve", false, false},    {"accept", false, false},
    {"make", false, false},
};

/* What those verbs act on (singular; a plural adds "s" or "es"): sign-in
 * factors, the addresses the account's mail and money go to, keys and
 * tokens, owners, members and roles, connected apps. */
static const char *const SEC_NOUN[] = {
    "2fa", "mfa", "tfa", "totp", "otp", "two", "factor", "step", "authenticator", "passkey",
    "webauthn", "password", "passwd", "passphrase", "email", "mail", "phone", "recovery",
    "payee", "beneficiary", "beneficiaries", "recipient", "iban", "key", "ssh", "gpg", "pgp",
    "token", "owner", "ownership", "forwarding", "filter", "oauth", "client", "app",
    "application", "device", "member", "collaborator", "role", "admin", "administrator",
    "permission", "access", "delegate", "delegation", "sso", "saml", "login", "signin",
    "username", "user", "account", "webhook", "alias", "aliases",
};

static const sec_verb *sec_verb_of(span w)
{
    for (size_t i = 0; i < N(SEC_VERB); i++)
        if (span_is(w, SEC_VERB[i].w))
            return &SEC_VERB[i];
    return NULL;
}

static bool sec_noun(span w)
{
    for (size_t i = 0; i < N(SEC_NOUN); i++) {
        size_t l = strlen(SEC_NOUN[i]);
        if (w.n < l || strncasecmp(w.s, SEC_NOUN[i], l) != 0)
            continue;
        span rest = {w.s + l, w.n - l};
        if (rest.n == 0 || span_is(rest, "s") || span_is(rest, "es"))
            return true;
    }
    return false;
}

/* A SEC_VERB and a SEC_NOUN written as one word, verb first
 * ("changeemail", "addpayee", "disable2fa"), or NULL. */
static const sec_verb *sec_joined(span w)
{
    for (size_t i = 0; i < N(SEC_VERB); i++) {
        size_t l = strlen(SEC_VERB[i].w);
        span head = {w.s, l}, tail = {w.s + l, w.n - l};
        if (w.n > l && span_is(head, SEC_VERB[i].w) && sec_noun(tail))
            return &SEC_VERB[i];
    }
    return NULL;
}

bool gate_url_sec_noun(const char *url)
{
    span w;
    const char *e = url ? url + strlen(url) : NULL;
    for (const char *p = url; p && word_next(&p, e, &w);)
        if (sec_noun(w) || sec_joined(w))
            return true;
    return false;
}

/* The segment [b, e) as an account act: its first verb (*word the word)
 * when every word is a SEC_VERB, a SEC_NOUN, an act noun, a number, a
 * filler or a format suffix; *noun whether it names a SEC_NOUN itself. */
static const sec_verb *sec_seg(const char *b, const char *e, span *word, bool *noun)
{
    const char *semi = memchr(b, ';', (size_t)(e - b));
    if (semi)
        e = semi;
    const sec_verb *v = NULL;
    *noun = false;
    span w;
    for (const char *p = b; word_next(&p, e, &w);) {
        const sec_verb *x = sec_verb_of(w), *j = x ? NULL : sec_joined(w);
        if (x || j) {
            if (!v)
                *word = w;
            v = v ? v : x ? x : j;
            *noun = *noun || j;
            continue;
        }
        bool ext = p == e && w.s > b && w.s[-1] == '.' && format_ext(w);
        if (sec_noun(w))
            *noun = true;
        else if (!noun_of(w) && !digits(w) && !ext && !span_in(w, FILLER, N(FILLER)))
            return NULL;
    }
    return v;
}

bool gate_url_account(const char *url, size_t path_len, bool data, char *what, size_t cap)
{
    if (what && cap)
        what[0] = 0;
    if (!url)
        return false;
    const char *b = url, *end = url + strnlen(url, path_len);
    int named = -1;     /* the URL's SEC_NOUN, read once, when first needed */
    for (;;) {
        const char *e = memchr(b, '/', (size_t)(end - b));
        span w;
        bool noun;
        const sec_verb *v = sec_seg(b, e ? e : end, &w, &noun);
        if (v && (v->strong || data) && !noun && !v->own && named < 0)
            named = gate_url_sec_noun(url);
        if (v && (v->strong || data) && (noun || (!v->own && named > 0))) {
            show(what, cap, w);
            return true;
        }
        if (!e)
            return false;
        b = e + 1;
    }
}
