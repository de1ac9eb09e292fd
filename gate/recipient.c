/*
 * recipient.c — recipients wherever one can be given: which fields take a
 * recipient (To, Cc, payee, beneficiary, ... by their field names, label
 * and accessible name, or the control an option belongs to), the value
 * given there (typed text, options chosen, an option clicked), and the
 * check of that value against the grant's recipients.
 *
 * Invariants: a value that holds an '@' — or a look-alike of one (U+FF20
 * full-width, U+FE6B small), after full-width ASCII is folded to ASCII and
 * invisible characters dropped — in a recipient field is an address list,
 * and every address in it must be granted; one written with look-alike or
 * invisible characters is refused even when its folded form is granted
 * (the page may not fold it the same way). In a payee field (payee,
 * beneficiary, recipient, IBAN, ...) a value without '@' (an account name,
 * an IBAN) must equal a grant entry compared as text (ASCII case and
 * whitespace ignored). A grant that names no recipients allows none; no
 * grant allows any. Values are never secrets here: the gate never reads a
 * credential field's value as a recipient (the caller checks the class).
 */
#include "gate/gate_int.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RCPT_MAX 1024u          /* bytes of a value checked (longer: refused) */

/* ---- which fields ---- */

/* Words (ASCII lower case, whole words) that make a field an address
 * field, and those that make it a payee field (where a value without '@'
 * is a recipient too). */
static const char *const ADDRESS_WORDS[] = {"to", "cc", "bcc", "mailto", "send to", "sendto",
                                            "email to", NULL};
static const char *const PAYEE_WORDS[] = {
    "recipient", "recipients", "payee", "payees", "beneficiary", "beneficiaries", "iban",
    "pay to", "payto", "transfer to", "account holder", "account name", "send money to",
    "destinataire", "destinatario", "beneficiario", "b\xc3\xa9n\xc3\xa9" "ficiaire",
    "empf\xc3\xa4nger", "empfaenger", "beg\xc3\xbcnstigter", NULL};

static bool word_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* s (lower-cased ASCII, camelCase and '_'/'-' split into words) holds one
 * of the words of W as a whole word. */
static bool has_word(const char *s, const char *const *W)
{
    if (!s || !*s)
        return false;
    char low[512];
    size_t n = 0;
    for (size_t i = 0; s[i] && n + 2 < sizeof low; i++) {
        unsigned char c = (unsigned char)s[i];
        /* "sendTo", "payeeName": a hump starts a word. */
        if (c >= 'A' && c <= 'Z' && i && s[i - 1] >= 'a' && s[i - 1] <= 'z')
            low[n++] = ' ';
        low[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c == '_' || c == '-' ? ' ' : c);
    }
    low[n] = 0;
    for (const char *const *w = W; *w; w++) {
        size_t wl = strlen(*w);
        for (const char *p = strstr(low, *w); p; p = strstr(p + 1, *w)) {
            bool left = p == low || !word_char((unsigned char)p[-1]);
            bool right = !word_char((unsigned char)p[wl]);
            if (left && right)
                return true;
        }
    }
    return false;
}

/* The words an accessible name of a To field is made of: the address
 * words, and words that say nothing of what the field is ("Add
 * recipients", "Enter names or email addresses", "Cc (carbon copy)"). */
static const char *const TO_NAME_WORDS[] = {
    "to", "cc", "bcc", "mailto", "sendto", "send", "email", "emails", "e", "mail", "recipient",
    "recipients", "add", "enter", "type", "search", "name", "names", "address", "addresses", "or",
    "and", "people", "person", "contact", "contacts", "field", "here", "more", "other", "others",
    "the", "a", "an", "your", "new", "compose", "message", "line", "copy", "carbon", "blind",
    "list", NULL};

/* s (non-empty) is made only of words of W and numbers (split as has_word
 * splits). */
static bool only_words(const char *s, const char *const *W)
{
    size_t nw = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        while (*p && !(word_char(*p) || (*p >= 'A' && *p <= 'Z')))
            p++;
        if (!*p)
            break;
        char w[64];
        size_t n = 0;
        bool digits = true;
        do {
            unsigned char c = *p++;
            if (n + 1 < sizeof w)
                w[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            digits = digits && c >= '0' && c <= '9';
            /* "sendTo": a hump starts a word. */
            if (*p >= 'A' && *p <= 'Z' && c >= 'a' && c <= 'z')
                break;
        } while (*p && (word_char(*p) || (*p >= 'A' && *p <= 'Z')));
        w[n] = 0;
        nw++;
        if (digits)
            continue;
        bool known = false;
        for (const char *const *k = W; *k && !known; k++)
            known = strcmp(*k, w) == 0;
        if (!known)
            return false;
    }
    return nw > 0;
}

/* What kind of recipient field t is, from its field names, label and
 * accessible name. An address field is a To field (where any value is a
 * recipient) when it is an email field, or its accessible name is made of
 * To-field words only ("To", "Cc:", "Add recipients"), or it has none (its
 * field names or the text beside it said To); one whose name says more
 * ("Fly to", "Ship to") is not. */
static int gate_recipient_field(const gate_target *t)
{
    if (!t)
        return GATE_RFIELD_NONE;
    const char *s[] = {t->field, t->label, t->name};
    int kind = GATE_RFIELD_NONE;
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        if (has_word(s[i], PAYEE_WORDS))
            return GATE_RFIELD_PAYEE;
        if (has_word(s[i], ADDRESS_WORDS))
            kind = GATE_RFIELD_ADDRESS;
    }
    if (kind != GATE_RFIELD_ADDRESS)
        return kind;
    bool email = (t->input_type && strcmp(t->input_type, "email") == 0) ||
                 (t->autocomplete && strstr(t->autocomplete, "email"));
    if (email || !t->name || !*t->name || only_words(t->name, TO_NAME_WORDS))
        return GATE_RFIELD_TO;
    return kind;
}

/* ---- look-alikes ---- */

/* Fold s into out (cap): full-width ASCII (U+FF01-FF5E) to ASCII, U+FE6B
 * and U+FF20 to '@', U+3000 to a space; drop invisible characters (U+00AD,
 * U+200B-200F, U+202A-202E, U+2060-2069, U+FEFF, tags U+E0000-E007F).
 * *changed tells whether anything was folded or dropped. Returns 0, or -1
 * when out is too small. */
static int fold(const char *s, char *out, size_t cap, bool *changed)
{
    size_t o = 0;
    *changed = false;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        uint32_t c = *p;
        size_t l = 1;
        if (p[0] >= 0xC0 && (p[1] & 0xC0) == 0x80) {
            if (p[0] < 0xE0) {
                c = ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
                l = 2;
            } else if (p[0] < 0xF0 && (p[2] & 0xC0) == 0x80) {
                c = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
                l = 3;
            } else if (p[0] >= 0xF0 && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80) {
                c = ((p[0] & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) |
                    (p[3] & 0x3Fu);
                l = 4;
            }
        }
        int a = -1;
        bool drop = false;
        if (c >= 0xFF01 && c <= 0xFF5E)
            a = (int)(c - 0xFF01 + 0x21);
        else if (c == 0xFE6B)
            a = '@';
        else if (c == 0x3000)
            a = ' ';
        else if (c == 0x00AD || (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
                 (c >= 0x2060 && c <= 0x2069) || c == 0xFEFF || (c >= 0xE0000 && c <= 0xE007F))
            drop = true;
        if (a >= 0 || drop)
            *changed = true;
        size_t need = drop ? 0 : a >= 0 ? 1 : l;
        if (o + need + 1 > cap)
            return -1;
        if (a >= 0)
            out[o] = (char)a;
        else if (!drop)
            memcpy(out + o, p, l);
        o += need;
        p += l;
    }
    out[o] = 0;
    return 0;
}

static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Plain comparison: ASCII case and all whitespace ignored. */
static bool plain_equal(const char *a, const char *b)
{
    for (;;) {
        while (space(*a))
            a++;
        while (space(*b))
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
        if (x != y)
            return false;
        a++;
        b++;
    }
}

/* ---- the check ---- */

static int refuse(char *why, size_t cap, const char *fmt, const char *v, const char *w)
{
    char q[160];
    gate_text_quote(q, sizeof q, v, 100);
    snprintf(why, cap, fmt, q, w ? w : "");
    return -1;
}

/* One address. */
static int check_address(const gate_grant *g, char *part, bool changed, char *why, size_t cap)
{
    if (strncasecmp(part, "mailto:", 7) == 0)
        part += 7;
    char a[RCPT_MAX + 1];
    const char *w;
    if (gate_recipient_norm(part, false, a, sizeof a, &w))
        return refuse(why, cap, "recipient \"%s\" is not an address (%s)", part, w);
    /* Named as given (the user part is compared exactly). */
    bool ok = false;
    for (size_t i = 0; i < g->nrecipients && !ok; i++)
        ok = strchr(g->recipients[i], '@') && gate_recipient_match(g->recipients[i], a);
    if (!ok)
        return refuse(why, cap, g->nrecipients ? "recipient %s is not in the grant%s"
                      : "recipient %s is not in the grant (it names no recipients)%s", part, "");
    if (changed)
        return refuse(why, cap, "recipient %s is written with look-alike or invisible "
                      "characters (full-width letters, a full-width or small '@', zero-width "
                      "or bidi characters)%s; write it in plain ASCII", a, "");
    return 0;
}

/* One entry of an address list (the text between separators): every
 * word in it holding an '@' is an address ("Bob <bob@x.test>", "Bob
 * Partner bob@x.test", "(bob@x.test)": the display name is not a
 * recipient); an entry with no '@' at all is not an address. */
static int check_part(const gate_grant *g, char *part, bool changed, char *why, size_t cap)
{
    const char *p = part;
    while (space(*p))
        p++;
    if (!*p)
        return 0;
    if (!strchr(part, '@')) {
        size_t n = strlen(part);
        while (n && space(part[n - 1]))
            part[--n] = 0;
        return check_address(g, (char *)p, changed, why, cap);
    }
    for (char *q = part; *q; q++)
        if (strchr("<>()[]\"", *q))
            *q = ' ';
    for (char *w = part, *end; *w; w = end) {
        while (space(*w))
            w++;
        if (!*w)
            break;
        for (end = w; *end && !space(*end); end++)
            ;
        bool last = !*end;
        *end = 0;
        if (strchr(w, '@') && check_address(g, w, changed, why, cap))
            return -1;
        if (!last)
            end++;
    }
    return 0;
}

int gate_recipient_check(const gate_grant *g, const char *v, int kind, char *why, size_t cap)
{
    bool payee = kind == GATE_RFIELD_PAYEE;
    if (!g || !v)
        return 0;
    char f[RCPT_MAX + 1];
    bool changed;
    if (strlen(v) > RCPT_MAX || fold(v, f, sizeof f, &changed)) {
        /* Long text in a To-like field that holds no '@' nor a look-alike
         * of one is not an address ("Fly to": a paragraph). */
        if (kind == GATE_RFIELD_ADDRESS && !strchr(v, '@') && !strstr(v, "\xef\xbc\xa0") &&
            !strstr(v, "\xef\xb9\xab"))
            return 0;
        return refuse(why, cap, "recipient \"%s\" is too long to check%s", v, "");
    }
    if (!strchr(f, '@')) {
        const char *p = f;
        while (space(*p))
            p++;
        /* Given as a recipient (not through a field): it must be one. */
        if (kind == GATE_RFIELD_NONE)
            return refuse(why, cap, "recipient \"%s\" is not an address (%s)", v,
                          "one '@' between a user and a domain");
        if ((!payee && kind != GATE_RFIELD_TO) || !*p)
            return 0;
        for (size_t i = 0; i < g->nrecipients; i++)
            if (!strchr(g->recipients[i], '@') && plain_equal(g->recipients[i], f))
                return changed ? refuse(why, cap, "payee \"%s\" is written with look-alike or "
                                        "invisible characters%s; write it in plain text", v,
                                        "") : 0;
        /* A name in a To field: the page resolves it to an address the
         * gate never sees (autocomplete, a contact list). */
        if (kind == GATE_RFIELD_TO)
            return refuse(why, cap, "\"%s\" in a To field is not a recipient the grant names "
                          "(the page may resolve a name to any address; give a granted "
                          "address in full)%s", f, g->nrecipients ? ""
                          : "; the grant names no recipients");
        return refuse(why, cap, g->nrecipients ? "payee \"%s\" is not in the grant's "
                      "recipients%s" : "payee \"%s\" is not in the grant (it names no "
                      "recipients)%s", f, "");
    }
    /* An address list: every address in it. */
    for (char *part = f, *next; part; part = next) {
        next = strpbrk(part, ",;\n");
        if (next)
            *next++ = 0;
        if (check_part(g, part, changed, why, cap))
            return -1;
    }
    return 0;
}

const char *gate_recipient_value(const gate_request *req, size_t i, int *kind)
{
    const gate_target *t = req->target;
    *kind = gate_recipient_field(t);
    if (*kind == GATE_RFIELD_NONE || !req->tool)
        return NULL;
    if (strcmp(req->tool, "type") == 0)
        return i == 0 ? req->text : NULL;
    if (strcmp(req->tool, "select") == 0) {
        /* The model's strings, and what they pick: the options' labels and
         * values as the page has them. */
        if (i < req->noptions)
            return req->options[i];
        i -= req->noptions;
        if (i < req->nchosen)
            return req->chosen[i];
        i -= req->nchosen;
        if (!req->chosen_values || i >= req->nchosen)
            return NULL;
        /* A value is often an id ("p12"), no payee's name: only an address
         * in it is checked (else the label, checked already, again). */
        return strchr(req->chosen_values[i], '@') ? req->chosen_values[i] : req->chosen[i];
    }
    /* An option clicked in a recipient field's list. */
    bool option = (t->role && (strcmp(t->role, "option") == 0 ||
                               strcmp(t->role, "menuitemradio") == 0 ||
                               strcmp(t->role, "treeitem") == 0)) ||
                  (t->tag && strcmp(t->tag, "option") == 0);
    if (strcmp(req->tool, "click") != 0 || !option)
        return NULL;
    /* A suggestion picked from a list: what it names is judged by its own
     * words (an address is checked), and what it put in the form is read
     * back before the send (gate_recipient_present). "Lisbon" in a "Fly
     * to" list is no recipient. */
    if (*kind == GATE_RFIELD_TO)
        *kind = GATE_RFIELD_ADDRESS;
    /* Its accessible name and its text: either may be what the page uses. */
    const char *nm = t->name && *t->name ? t->name : NULL;
    const char *tx = t->text && *t->text && (!nm || strcmp(t->text, nm) != 0) ? t->text : NULL;
    return i == 0 ? (nm ? nm : tx) : i == 1 && nm ? tx : NULL;
}

bool gate_recipient_read_back(const gate_request *req, size_t i, int conseq)
{
    const gate_present *p = &req->present[i];
    if (!p->value || !*p->value)
        return false;
    if (p->chip)
        return conseq == GATE_CONSEQ_SEND;
    gate_target t = {.field = p->field, .label = p->label, .name = p->name,
                     .input_type = p->input_type, .autocomplete = p->autocomplete};
    return gate_recipient_field(&t) != GATE_RFIELD_NONE;
}

int gate_recipient_present(const gate_grant *g, const gate_request *req, int conseq, char *why,
                           size_t cap)
{
    if (!g || !req)
        return 0;
    const char *what = gate_conseq_name(conseq);
    if (req->present_cut) {
        snprintf(why, cap, "the form of this %s holds more fields and addresses than can be read "
                 "back and checked against the grant's recipients", what);
        return -1;
    }
    for (size_t i = 0; i < req->npresent; i++) {
        const gate_present *p = &req->present[i];
        if (!p->value || !*p->value)
            continue;
        int kind = GATE_RFIELD_NONE;
        char where[160], w[400];
        if (p->chip) {
            /* An address beside the fields: a recipient of a send. */
            if (conseq != GATE_CONSEQ_SEND)
                continue;
            snprintf(where, sizeof where, "an address shown or carried beside the fields");
        } else {
            gate_target t = {.field = p->field, .label = p->label, .name = p->name,
                             .input_type = p->input_type, .autocomplete = p->autocomplete};
            kind = gate_recipient_field(&t);
            if (kind == GATE_RFIELD_NONE)
                continue;
            char q[100];
            gate_text_quote(q, sizeof q, p->name && *p->name ? p->name
                            : p->field && *p->field ? p->field : p->label, 60);
            snprintf(where, sizeof where, "the field \"%s\"", q);
        }
        if (gate_recipient_check(g, p->value, kind, w, sizeof w)) {
            snprintf(why, cap, "read back from the form before the %s: %s, in %s; nothing was "
                     "sent", what, w, where);
            return -1;
        }
    }
    return 0;
}

/* ---- what a request sent under a confirmation carries ---- */

/* Whether the read-back entry's field names start with the name sent (the
 * page script gives "name id placeholder aria-label", space-separated). */
static bool shown_name(const gate_present *p, const char *name)
{
    size_t n = strlen(name);
    return !p->chip && p->field && n && strncmp(p->field, name, n) == 0 &&
           (p->field[n] == ' ' || p->field[n] == 0);
}

/* a and b equal but for carriage returns (a form sends a textarea's line
 * breaks as CR LF); a shown value cut at the read-back's 1,100 characters
 * is compared as a prefix. */
static bool sent_equal(const char *shown, const char *sent)
{
    size_t sl = strlen(shown);
    for (;;) {
        while (*shown == '\r')
            shown++;
        while (*sent == '\r')
            sent++;
        if (!*shown)
            return !*sent || sl >= 1100;
        if (*shown != *sent)
            return false;
        shown++;
        sent++;
    }
}

static bool has_at(const char *v)
{
    return strchr(v, '@') || strstr(v, "\xef\xbc\xa0") || strstr(v, "\xef\xb9\xab");
}

bool gate_sent_field_shown(const char *name, const char *value)
{
    if (!name || !value || !*value || url_secret_name(name, strlen(name), true))
        return false;
    gate_target t = {.field = name};
    return has_at(value) || gate_recipient_field(&t) != GATE_RFIELD_NONE ||
           gate_amount_name(name);
}

int gate_check_sent_field(const gate *gt, const char *name, const char *value,
                          const gate_present *shown, size_t nshown, char *why, size_t cap)
{
    if (!value || !*value || !name)
        return 0;
    char q[100];
    gate_text_quote(q, sizeof q, name, 60);
    /* A field the human was shown: its value must be one they saw. */
    bool named = false;
    for (size_t i = 0; i < nshown; i++) {
        if (!shown_name(&shown[i], name) || !shown[i].value)
            continue;
        named = true;
        if (sent_equal(shown[i].value, value))
            return 0;   /* read back, judged and shown before the yes */
    }
    if (named) {
        snprintf(why, cap, "the page changed the field \"%s\" after the human allowed the "
                 "action: what is sent is not what they were shown", q);
        return -1;
    }
    /* Not shown: a recipient in it must be granted, as in a form read back
     * (an address anywhere; any value of a recipient field by its name). */
    gate_target t = {.field = name};
    int kind = gate_recipient_field(&t);
    if (kind == GATE_RFIELD_NONE) {
        if (!has_at(value))
            return 0;
        for (size_t i = 0; i < nshown; i++)
            if (shown[i].chip && shown[i].value && sent_equal(shown[i].value, value))
                return 0;
        kind = GATE_RFIELD_ADDRESS;
    }
    char w[400];
    if (gate_recipient_check(gate_grant_get(gt), value, kind, w, sizeof w) == 0)
        return 0;
    snprintf(why, cap, "%s, in the field \"%s\" the page sent under the human's yes (never "
             "shown to them)", w, q);
    return -1;
}
