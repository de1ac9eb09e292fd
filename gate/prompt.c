/*
 * prompt.c — what a human is shown when the gate asks: the escaping of
 * page- and model-derived text (gate_text_escape), the human-facing
 * message (gate_prompt_message) and the hook's JSON request
 * (gate_prompt_json), and those of a page's paused request
 * (gate_request_prompt).
 *
 * Invariants: every string that came from the page (names, rows, texts,
 * dialog messages, field names, URLs) or from the model (the text to type,
 * the key, options, the script) goes through gate_text_escape before a
 * human sees it, so it can neither break out of its quotes, nor start a
 * line that reads as cdpgate's, nor hide or reorder characters (bidi and
 * invisible characters are shown as escapes). The message starts with
 * cdpgate's own verdict, built only from the gate's decision and the
 * normalised origin; the page's text comes after a separator line that
 * labels it. A script is shown whole or the eval is refused (gate.c:
 * GATE_SCRIPT_SHOWN), never cut.
 */
#include "gate/gate_int.h"
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- escaping ---- */

/* The one list of characters never shown raw, to a human (the prompts) or
 * to the model (snapshot/'s page text, through gate_char_escape): C1
 * controls, and the characters a reader cannot see or that reorder or break
 * what follows (bidi controls, line/paragraph separators, zero-width and
 * other invisible characters, tags). */
static bool hidden(uint32_t c)
{
    return (c >= 0x80 && c <= 0x9F) || c == 0x00AD || c == 0x034F || c == 0x061C ||
           c == 0x115F || c == 0x1160 || c == 0x17B4 || c == 0x17B5 ||
           (c >= 0x180B && c <= 0x180F) || (c >= 0x200B && c <= 0x200F) ||
           (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) || c == 0x3164 ||
           (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF || c == 0xFFA0 ||
           (c >= 0xFFF0 && c <= 0xFFFB) || (c >= 0xE0000 && c <= 0xE0FFF);
}

/* Decode the valid UTF-8 sequence at s (n bytes left): its length, else 0. */
static size_t utf8_get(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t l = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
             : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!l || l > n || (l > 1 && !json_utf8_valid(s, l)))
        return 0;
    uint32_t c = l == 1 ? s[0] : l == 2 ? s[0] & 0x1Fu : l == 3 ? s[0] & 0x0Fu : s[0] & 0x07u;
    for (size_t i = 1; i < l; i++)
        c = (c << 6) | (s[i] & 0x3Fu);
    *cp = c;
    return l;
}

/* The escape of the character c (l bytes at p; l == 0: the byte p[0] starts
 * no valid UTF-8) into esc, its length; 0 when it may be shown as it is. */
static size_t esc_of(char *esc, const unsigned char *p, size_t l, uint32_t c)
{
    if (!l)
        return (size_t)snprintf(esc, GATE_CHAR_ESC_MAX, "\\x%02x", p[0]);
    if (!hidden(c))
        return 0;
    return (size_t)snprintf(esc, GATE_CHAR_ESC_MAX, c > 0xFFFF ? "\\u{%x}" : "\\u%04x",
                            (unsigned)c);
}

size_t gate_char_escape(char *esc, const char *s, size_t n, size_t *used)
{
    uint32_t c = 0;
    esc[0] = 0;
    if (!n) {
        *used = 0;
        return 0;
    }
    size_t l = utf8_get((const unsigned char *)s, n, &c);
    *used = l ? l : 1;
    return esc_of(esc, (const unsigned char *)s, l, c);
}

/* How a character reads when words are matched (gate_char_fold): white
 * space, and the hidden characters above that are not white space (read
 * as nothing: a reader does not see them between two letters). */
static int fold_of(uint32_t c)
{
    if (c == 0x0085 || c == 0x00A0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
        c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000)
        return ' ';
    if (c >= 0xFF01 && c <= 0xFF5E)
        return (int)(c - 0xFF01 + 0x21);
    return hidden(c) ? GATE_FOLD_DROP : 0;
}

int gate_char_fold(const char *s, size_t n, size_t *used)
{
    uint32_t c = 0;
    if (!n) {
        *used = 0;
        return 0;
    }
    size_t l = utf8_get((const unsigned char *)s, n, &c);
    *used = l ? l : 1;
    return l > 1 ? fold_of(c) : 0;
}

size_t gate_text_escape(char *out, size_t cap, const char *s, size_t len, unsigned flags)
{
    size_t o = 0, need = 0, i = 0;
    bool full = cap == 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    if (!s)
        len = 0;
    while (i < len) {
        char esc[16];
        const char *rep = esc;
        size_t rl;
        uint32_t c = 0;
        size_t l = utf8_get(p + i, len - i, &c);
        bool lines = (flags & GATE_ESC_LINES) != 0;
        if (!l) {
            rl = esc_of(esc, p + i, 0, 0);
            l = 1;
        } else if (c == '"' || c == '\\') {
            rl = (size_t)snprintf(esc, sizeof esc, "\\%c", (char)c);
        } else if (c == '\n') {
            rep = lines ? "\n" : "\\n";
            rl = strlen(rep);
        } else if (c == '\t') {
            rep = lines ? "\t" : "\\t";
            rl = strlen(rep);
        } else if (c == '\r') {
            /* A CR ends a line for JavaScript: show it, and break the line
             * (once, when an LF follows anyway). */
            rep = lines && !(i + 1 < len && p[i + 1] == '\n') ? "\\r\n" : "\\r";
            rl = strlen(rep);
        } else if (lines && (c == 0x2028 || c == 0x2029)) {
            rl = (size_t)snprintf(esc, sizeof esc, "\\u%04x\n", (unsigned)c);
        } else if (c < 0x20 || c == 0x7F) {
            rl = (size_t)snprintf(esc, sizeof esc, "\\x%02x", (unsigned)c);
        } else if ((rl = esc_of(esc, p + i, l, c)) != 0) {
            /* hidden: shown as its escape */
        } else {
            rep = (const char *)p + i;
            rl = l;
        }
        if (!full && o + rl < cap) {
            memcpy(out + o, rep, rl);
            o += rl;
        } else {
            full = true;
        }
        need += rl;
        i += l;
    }
    if (cap)
        out[o] = 0;
    return need;
}

/* ---- a growing text (base_buf) ---- */

/* How many bytes of s (NULL: none) to show at most max of: *n, cut back
 * to a character boundary. True when that is not all of s. */
static bool text_cut(const char *s, size_t max, size_t *n)
{
    *n = s ? strlen(s) : 0;
    if (*n <= max)
        return false;
    *n = max;
    while (*n && ((unsigned char)s[*n] & 0xC0) == 0x80)
        (*n)--;
    return true;
}

/* At most max bytes of s, escaped (GATE_ESC_LINES with lines), "…" when
 * cut; quoted with quote. */
static void tb_esc(base_buf *b, const char *s, size_t max, bool quote, unsigned flags)
{
    size_t n;
    bool cut = text_cut(s, max, &n);
    size_t need = gate_text_escape(NULL, 0, s, n, flags);
    char *e = malloc(need + 1);
    if (!e) {
        b->oom = true;
        return;
    }
    gate_text_escape(e, need + 1, s, n, flags);
    if (quote)
        base_buf_puts(b, "\"");
    base_buf_put(b, e, need);
    if (quote)
        base_buf_puts(b, "\"");
    if (cut)
        base_buf_puts(b, " (\xe2\x80\xa6 cut)");
    free(e);
}

void gate_text_quote(char *out, size_t cap, const char *s, size_t max)
{
    if (!cap)
        return;
    size_t n;
    bool cut = text_cut(s, max, &n);
    /* Room for the ellipsis: escapes are cut whole by gate_text_escape. */
    size_t room = cap > 4 ? cap - 3 : cap;
    if (gate_text_escape(out, room, s, n, 0) >= room)
        cut = true;
    if (cut && cap > 4) {
        size_t o = strlen(out);
        memcpy(out + o, "\xe2\x80\xa6", 4);
    }
}

/* ---- the message ---- */

static const char *tool_verb(const char *tool)
{
    static const char *const V[][2] = {
        {"click", "click an element"}, {"type", "type text into a field"},
        {"press", "press a key in the focused element"}, {"select", "choose an option"},
        {"eval", "run a script in the page"}, {"dialog", "accept the page's dialog"},
        {"upload", "upload a file"}, {"hover", "move the mouse over an element"},
        {"open", "open a page"}, {"login", "sign in"}, {"scroll", "scroll"},
        {"back", "go back"}, {"download", "save a file the page downloads"},
    };
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++)
        if (strcmp(V[i][0], tool) == 0)
            return V[i][1];
    return NULL;
}

/* The verdict: why the human is asked, from the decision only. */
static void verdict(base_buf *b, const gate_request *req, const gate_decision *d,
                    const char *origin)
{
    if (strcmp(req->tool, "eval") == 0) {
        base_buf_puts(b, "Why you are asked: running a script can do anything the page can; it is "
                         "confirmed every time.\n");
    } else if (d->courier) {
        base_buf_puts(b, "Why you are asked: this task has read pages of a signed-in service; "
                         "what the agent gives this page (outside that session) may carry "
                         "what it read there, and the page can send it anywhere. Allow only "
                         "if the data below is fine for ");
        base_buf_puts(b, origin);
        base_buf_puts(b, " and anyone it sends to.\n");
    } else if (req->page_download && d->cls != GATE_CLASS_AUTH_CHANGE) {
        base_buf_puts(b, "Why you are asked: the page itself started this download while the "
                         "agent's action ran; it is not the file the element acted on points "
                         "to. Confirmed every time.\n");
    } else if (d->cls == GATE_CLASS_CONSEQUENTIAL) {
        base_buf_puts(b, "Why you are asked: a consequential action (");
        base_buf_puts(b, gate_conseq_name(d->conseq));
        base_buf_puts(b, ") on ");
        base_buf_puts(b, origin);
        base_buf_puts(b, ", where a signed-in session is in use; a bound rule of the grant "
                         "names it, so you may allow it here.\n");
    } else if (d->cls == GATE_CLASS_AUTH_CHANGE) {
        base_buf_puts(b, "Why you are asked: a state change (auth_change) on ");
        base_buf_puts(b, origin);
        base_buf_puts(b, ", where a signed-in session is in use; confirmed every time.\n");
    } else {
        base_buf_puts(b, "Why you are asked: class ");
        base_buf_puts(b, gate_class_name(d->cls));
        base_buf_puts(b, ".\n");
    }
}

/* A page of another origin in a service's browser context: the human is
 * told whose session rides with what it sends (issue 13 red team, S2). */
static void service_line(base_buf *b, const gate_request *req, const char *origin)
{
    char svc[GATE_ORIGIN_MAX];
    if (!req->service || !*req->service ||
        gate_origin_parse(req->service, svc, sizeof svc, ORIGIN_LENIENT, NULL) ||
        strcmp(svc, origin) == 0)
        return;
    base_buf_puts(b, "The page is on ");
    base_buf_puts(b, origin);
    base_buf_puts(b, ", but its tab is in the browser context that holds the signed-in "
                     "session of ");
    base_buf_puts(b, svc);
    base_buf_puts(b, ": what it sends to ");
    base_buf_puts(b, svc);
    base_buf_puts(b, " carries that session.\n");
}

/* One line of what the agent supplied: "  label: \"escaped text\"". */
static void supplied_line(base_buf *b, const char *label, const char *s, size_t max)
{
    base_buf_puts(b, "  ");
    base_buf_puts(b, label);
    base_buf_puts(b, ": ");
    tb_esc(b, s, max, true, 0);
    base_buf_puts(b, "\n");
}

/* What the agent supplied: model text, escaped. */
static void agent_part(base_buf *b, const gate_request *req)
{
    bool dlg = req->text && strcmp(req->tool, "dialog") == 0;
    bool open = req->url && strcmp(req->tool, "open") == 0;
    bool any = (req->text && strcmp(req->tool, "type") == 0) || req->key || req->noptions ||
               req->file || req->recipient || req->script || dlg || open;
    if (!any)
        return;
    base_buf_puts(b, "\nWhat the agent supplied (escaped: \\\" is a quote, \\n a line break, "
                     "\\uXXXX an invisible or control character):\n");
    if (req->text && strcmp(req->tool, "type") == 0)
        supplied_line(b, "text to type", req->text, GATE_SHOWN_MAX);
    if (dlg)
        supplied_line(b, "text for the dialog", req->text, GATE_SHOWN_MAX);
    if (open)
        supplied_line(b, "address to open", req->url, GATE_SHOWN_MAX);
    if (req->key)
        supplied_line(b, "key", req->key, 100);
    for (size_t i = 0; i < req->noptions && i < GATE_SHOWN_OPTIONS; i++) {
        base_buf_puts(b, i ? ", " : "  option(s) to choose: ");
        tb_esc(b, req->options[i], GATE_SHOWN_OPTION, true, 0);
        if (i + 1 == req->noptions || i + 1 == GATE_SHOWN_OPTIONS)
            base_buf_puts(b, "\n");
    }
    if (req->noptions > GATE_SHOWN_OPTIONS) {
        char n[64];
        snprintf(n, sizeof n, "  ... and %zu more options\n", req->noptions - GATE_SHOWN_OPTIONS);
        base_buf_puts(b, n);
    }
    if (req->recipient)
        supplied_line(b, "recipient", req->recipient, 300);
    if (req->file)
        supplied_line(b, "file", req->file, GATE_SHOWN_MAX);
    if (req->script) {
        size_t n = strlen(req->script);
        size_t need = gate_text_escape(NULL, 0, req->script, n, GATE_ESC_LINES);
        char *e = malloc(need + 1);
        if (!e) {
            b->oom = true;
            return;
        }
        gate_text_escape(e, need + 1, req->script, n, GATE_ESC_LINES);
        size_t lines = 1;
        for (size_t i = 0; i < need; i++)
            lines += e[i] == '\n';
        char h[160];
        snprintf(h, sizeof h, "  the script, whole (%zu bytes, %zu line%s), exactly as it will "
                 "run; each line is numbered:\n", n, lines, lines == 1 ? "" : "s");
        base_buf_puts(b, h);
        size_t ln = 1;
        for (char *p = e;; ln++) {
            char *nl = strchr(p, '\n');
            char num[24];
            snprintf(num, sizeof num, "  %4zu| ", ln);
            base_buf_puts(b, num);
            base_buf_put(b, p, nl ? (size_t)(nl - p) : strlen(p));
            base_buf_puts(b, "\n");
            if (!nl)
                break;
            p = nl + 1;
        }
        base_buf_puts(b, "  (end of the script)\n");
        free(e);
    }
}

static void page_line(base_buf *b, const char *label, const char *s, size_t max)
{
    if (!s || !*s)
        return;
    base_buf_puts(b, "  ");
    base_buf_puts(b, label);
    base_buf_puts(b, ": ");
    tb_esc(b, s, max, true, 0);
    base_buf_puts(b, "\n");
}

/* The other sources of the element's name (its label, aria-labelledby,
 * title, an image's alt inside it ...) that say something else than its
 * name and text: what the human clicks may read as any of them. */
#define PROMPT_NAMES_MAX 12

static void names_line(base_buf *b, const gate_target *t, const char *name)
{
    size_t shown = 0, more = 0;
    for (size_t i = 0; i < t->nnames; i++) {
        const char *s = t->names[i];
        if (!s || !*s || (name && strcmp(s, name) == 0) || (t->text && strcmp(s, t->text) == 0))
            continue;
        if (shown == PROMPT_NAMES_MAX) {
            more++;     /* classified all the same; only the display is cut */
            continue;
        }
        base_buf_puts(b, shown ? " | " : "  also named (label, title, alt, ...): ");
        tb_esc(b, s, 160, true, 0);
        shown++;
    }
    if (more) {
        char m[64];
        snprintf(m, sizeof m, " ... and %zu more", more);
        base_buf_puts(b, m);
    }
    if (shown)
        base_buf_puts(b, "\n");
}

#define PROMPT_RECIPIENTS_MAX 20

/* The element is a link: its read-back is its address's query (what the
 * navigation sends), not a form's fields. */
static bool link_sends(const gate_request *req)
{
    const gate_target *t = req->target;
    return t && t->href && *t->href && !t->submits;
}

/* The recipients read back from the form (page text): who it goes to. */
static void recipients_line(base_buf *b, const gate_request *req, const gate_decision *d)
{
    if (d->cls != GATE_CLASS_CONSEQUENTIAL)
        return;
    size_t n = 0;
    for (size_t i = 0; i < req->npresent; i++) {
        if (!gate_recipient_read_back(req, i, d->conseq))
            continue;
        if (n < PROMPT_RECIPIENTS_MAX) {
            base_buf_puts(b, n                ? ", "
                             : link_sends(req) ? "  recipients in the link's address: "
                                               : "  recipients read back from its form: ");
            tb_esc(b, req->present[i].value, 300, true, 0);
        }
        n++;
    }
    if (n > PROMPT_RECIPIENTS_MAX) {
        char m[64];
        snprintf(m, sizeof m, " ... and %zu more", n - PROMPT_RECIPIENTS_MAX);
        base_buf_puts(b, m);
    }
    if (n)
        base_buf_puts(b, "\n");
}

/* Whether s has one of words (n) as a whole word, ASCII case folded; a
 * word ends at any byte that is no letter and where camelCase turns
 * ("totalPrice": total, price). */
static bool ascii_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool has_word(const char *s, const char *const *words, size_t n)
{
    for (size_t i = 0; s && s[i];) {
        while (s[i] && !ascii_alpha((unsigned char)s[i]))
            i++;
        size_t b = i;
        while (s[i] && ascii_alpha((unsigned char)s[i]) &&
               !(i > b && s[i] >= 'A' && s[i] <= 'Z' && s[i - 1] >= 'a' && s[i - 1] <= 'z'))
            i++;
        for (size_t k = 0; k < n && i > b; k++)
            if (strlen(words[k]) == i - b && strncasecmp(s + b, words[k], i - b) == 0)
                return true;
    }
    return false;
}

/* A currency beside a field: a sign in its label, name or value ($, EUR,
 * pound, yen, rupee, won, ruble, lira, shekel, baht, dong signs) or a
 * currency code word. */
static bool has_currency(const char *s)
{
    static const char *const SIGN[] = {"$", "\xe2\x82\xac", "\xc2\xa3", "\xc2\xa5",
                                       "\xe2\x82\xb9", "\xe2\x82\xa9", "\xe2\x82\xbd",
                                       "\xe2\x82\xba", "\xe2\x82\xaa", "\xe0\xb8\xbf",
                                       "\xe2\x82\xab"};
    static const char *const CODE[] = {"usd", "eur", "gbp", "jpy", "chf", "cad", "aud",
                                       "inr", "cny", "sek", "nok", "dkk", "currency"};
    for (size_t i = 0; s && i < sizeof SIGN / sizeof SIGN[0]; i++)
        if (strstr(s, SIGN[i]))
            return true;
    return has_word(s, CODE, sizeof CODE / sizeof CODE[0]);
}

static const char *const AMOUNT_WORDS[] = {"amount", "amt", "price", "total", "subtotal", "sum",
                                           "cost", "fee", "fees", "charge", "payment", "value"};
#define AMOUNT_NAMED (sizeof AMOUNT_WORDS / sizeof AMOUNT_WORDS[0] - 1) /* "value": currency */

bool gate_amount_name(const char *s)
{
    return has_word(s, AMOUNT_WORDS, AMOUNT_NAMED);
}

/* A field of the form that holds an amount (red team s13, P2 residual):
 * named so (amount, price, total, sum, cost, fee ...: its name, id,
 * label or accessible name), or a decimal/numeric field (inputmode, or
 * type number) with a currency beside it. */
static bool present_amount(const gate_present *p)
{
    const char *const *W = AMOUNT_WORDS;
    size_t n = AMOUNT_NAMED;                    /* "value" only with a currency */
    if (p->chip || !p->value || !*p->value)
        return false;
    if (gate_amount_name(p->field) || gate_amount_name(p->label) || gate_amount_name(p->name))
        return true;
    bool num = (p->input_mode && (strcmp(p->input_mode, "decimal") == 0 ||
                                  strcmp(p->input_mode, "numeric") == 0)) ||
               (p->input_type && strcmp(p->input_type, "number") == 0) ||
               has_word(p->field, W + n, 1);
    return num && (has_currency(p->label) || has_currency(p->name) || has_currency(p->value));
}

#define PROMPT_AMOUNTS_MAX 8

/* The amounts the form being submitted holds, as read back: the human
 * sees what they allow (the sink then compares what is sent with it). */
static void amounts_line(base_buf *b, const gate_request *req, const gate_decision *d)
{
    if (d->cls != GATE_CLASS_CONSEQUENTIAL)
        return;
    size_t n = 0;
    for (size_t i = 0; i < req->npresent; i++) {
        const gate_present *p = &req->present[i];
        if (!present_amount(p))
            continue;
        if (n < PROMPT_AMOUNTS_MAX) {
            base_buf_puts(b, n ? ", " : link_sends(req) ? "  amount in the link's address: "
                                                         : "  amount read back from its form: ");
            tb_esc(b, p->value, 100, true, 0);
            const char *by = p->field && *p->field ? p->field : p->label;
            if (by && *by) {
                base_buf_puts(b, " (field ");
                tb_esc(b, by, 60, true, 0);
                base_buf_puts(b, ")");
            }
        }
        n++;
    }
    if (n > PROMPT_AMOUNTS_MAX) {
        char m[64];
        snprintf(m, sizeof m, " ... and %zu more", n - PROMPT_AMOUNTS_MAX);
        base_buf_puts(b, m);
    }
    if (n)
        base_buf_puts(b, "\n");
}

/* select: the options the agent's values pick, as the page has them. */
static void chosen_line(base_buf *b, const gate_request *req)
{
    for (size_t i = 0; i < req->nchosen && i < 20; i++) {
        base_buf_puts(b, i ? ", " : "  option(s) chosen: ");
        tb_esc(b, req->chosen[i], 300, true, 0);
        if (req->chosen_values && req->chosen_values[i] && *req->chosen_values[i]) {
            base_buf_puts(b, " (value ");
            tb_esc(b, req->chosen_values[i], 100, true, 0);
            base_buf_puts(b, ")");
        }
    }
    if (req->nchosen > 20) {
        char n[64];
        snprintf(n, sizeof n, " ... and %zu more", req->nchosen - 20);
        base_buf_puts(b, n);
    }
    if (req->nchosen)
        base_buf_puts(b, "\n");
}

/* The page's own text: escaped and quoted, between separator lines. */
static void page_part(base_buf *b, const gate_request *req, const gate_decision *d)
{
    const gate_target *t = req->target;
    bool press = strcmp(req->tool, "press") == 0;
    base_buf_puts(b, "\n----- page text below: written by the page, not by cdpgate; "
                     "quoted and escaped -----\n");
    if (t) {
        const char *name = t->name && *t->name ? t->name : NULL;
        const char *role = t->role && *t->role ? t->role : t->tag && *t->tag ? t->tag
                         : "element";
        base_buf_puts(b, press ? "  focused element (the key goes to it): " : "  element: ");
        tb_esc(b, role, 40, false, 0);
        if (t->input_type && *t->input_type) {
            base_buf_puts(b, " type=");
            tb_esc(b, t->input_type, 40, false, 0);
        }
        if (name) {
            base_buf_puts(b, " ");
            tb_esc(b, name, 300, true, 0);
        }
        if (t->via_name) {
            /* The agent named another node, which acts on this element. */
            base_buf_puts(b, " (via the ");
            tb_esc(b, t->via_role && *t->via_role ? t->via_role : "node", 40, false, 0);
            base_buf_puts(b, " ");
            tb_esc(b, t->via_name, 120, true, 0);
            base_buf_puts(b, ")");
        }
        base_buf_puts(b, "\n");
        if (t->text && *t->text && (!name || strcmp(t->text, name) != 0))
            page_line(b, "its text", t->text, 300);
        names_line(b, t, name);
        if (strcmp(req->tool, "click") != 0)
            page_line(b, "field (name, id, placeholder, label)", t->field, 300);
        if (!name)
            page_line(b, "its label and the text beside it", t->label, 300);
        page_line(b, "row", t->row, 300);
        page_line(b, "in the dialog", t->dialog_text, 300);
        page_line(b, "a link to", t->href, 400);
        if (t->submits)
            page_line(b, "submits a form to", t->form_action, 300);
        else if (!t->href || !*t->href)     /* its own form's submission is covered */
            page_line(b, "in a form that submits to", t->form_action, 300);
        recipients_line(b, req, d);
        amounts_line(b, req, d);
        chosen_line(b, req);
    } else if (press) {
        base_buf_puts(b, "  focused element: none (the key goes to the page)\n");
    }
    page_line(b, "dialog message", req->dialog, 600);
    page_line(b, "page address", req->url, 400);
    base_buf_puts(b, "----- end of page text -----\n");
}

char *gate_prompt_message(const gate *gt, const gate_request *req, const gate_decision *d)
{
    (void)gt;
    if (!req || !req->tool || !d)
        return NULL;
    base_buf b = {0};
    char origin[GATE_ORIGIN_MAX];
    if (!req->origin || gate_origin_parse(req->origin, origin, sizeof origin, ORIGIN_LENIENT,
                                          NULL))
        snprintf(origin, sizeof origin, "a page with no http(s) origin");
    /* A double click is two clicks: the human is told so. */
    const char *act = gate_action_name(req);
    const char *verb = strcmp(act, "dblclick") == 0 ? "double-click (two clicks) an element"
                                                    : tool_verb(req->tool);
    base_buf_puts(&b, "cdpgate: the agent asks to ");
    if (verb)
        base_buf_puts(&b, verb);
    base_buf_puts(&b, verb ? " (" : "use ");
    tb_esc(&b, act, 40, false, 0);
    base_buf_puts(&b, verb ? ") on " : " on ");
    base_buf_puts(&b, origin);
    base_buf_puts(&b, ". Nothing happens unless you allow it; allowing covers this one action "
                      "only.\n");
    if (req->dialog && req->dialog_origin) {
        /* Normalised like the page's: an iframe of another site may ask. */
        char dor[GATE_ORIGIN_MAX];
        if (gate_origin_parse(req->dialog_origin, dor, sizeof dor, ORIGIN_LENIENT, NULL))
            snprintf(dor, sizeof dor, "a frame with no http(s) origin");
        base_buf_puts(&b, "The dialog was opened by a script of ");
        base_buf_puts(&b, dor);
        base_buf_puts(&b, strcmp(dor, origin) == 0 ? " (the page's own origin).\n"
                                                   : " (not the page's origin).\n");
    }
    verdict(&b, req, d, origin);
    service_line(&b, req, origin);
    agent_part(&b, req);
    page_part(&b, req, d);
    base_buf_puts(&b, "\nAllow this one action?");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* gate_auth_request.values for a human: 'to "bob@partner.test", amount
 * "50"', each part escaped (new, free(); "" when none; NULL when out of
 * memory). */
static char *values_text(const char *values)
{
    base_buf b = {0};
    size_t n = 0;
    for (const char *p = values ? values : ""; *p;) {
        const char *end = strchr(p, '\x1e'), *us = strchr(p, '\x1f');
        if (!end)
            end = p + strlen(p);
        if (n++)
            base_buf_puts(&b, ", ");
        if (us && us < end && us[1] == '\x1e' && us - p == 3 && strncmp(p, "...", 3) == 0) {
            base_buf_puts(&b, "... and more");
        } else if (us && us < end) {
            char *name = strndup(p, (size_t)(us - p));
            char *val = strndup(us + 1, (size_t)(end - us - 1));
            if (name && val) {
                tb_esc(&b, name, 60, false, 0);
                base_buf_puts(&b, " ");
                tb_esc(&b, val, 220, true, 0);
            } else {
                b.oom = true;
            }
            free(name);
            free(val);
        }
        p = *end ? end + 1 : end;
    }
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s ? b.s : base_strdup("");
}

/* ---- the hook's JSON ---- */

static void w_esc(json_w *w, const char *key, const char *s, size_t max, unsigned flags)
{
    json_w_key(w, key);
    if (!s) {
        json_w_null(w);
        return;
    }
    base_buf b = {0};
    tb_esc(&b, s, max, false, flags);
    json_w_str(w, b.oom ? "" : b.s ? b.s : "");
    free(b.s);
}

char *gate_prompt_json(const gate *gt, const gate_request *req, const gate_decision *d)
{
    const gate_target *t = req->target;
    char *msg = gate_prompt_message(gt, req, d);
    if (!msg)
        return NULL;
    json_w w;
    gate_prompt_begin(&w, msg);
    gate_w_text(&w, "action", gate_action_name(req), 64);
    w_esc(&w, "origin", req->origin, GATE_ORIGIN_MAX, 0);
    w_esc(&w, "url", req->url, GATE_AUDIT_URL_MAX, 0);
    if (req->service && *req->service)
        w_esc(&w, "service", req->service, GATE_ORIGIN_MAX, 0);
    if (req->dialog)
        w_esc(&w, "dialog_origin", req->dialog_origin, GATE_ORIGIN_MAX, 0);
    json_w_key(&w, "target");
    json_w_obj_begin(&w);
    w_esc(&w, "role", t ? t->role : req->dialog ? "dialog" : NULL, 64, 0);
    w_esc(&w, "name", t ? (t->name && *t->name ? t->name : t->text) : req->dialog, 200, 0);
    w_esc(&w, "row", t ? t->row : NULL, 200, 0);
    if (t && t->via_name) {
        w_esc(&w, "via_role", t->via_role, 64, 0);
        w_esc(&w, "via_name", t->via_name, 200, 0);
    }
    json_w_obj_end(&w);
    json_w_key(&w, "class");
    json_w_str(&w, gate_class_name(d->cls));
    gate_w_text(&w, "kind", d->conseq ? gate_conseq_name(d->conseq) : NULL, 32);
    w_esc(&w, "observation", req->obs, 256, 0);
    if (req->page_download) {
        json_w_key(&w, "page_download");
        json_w_bool(&w, true);
    }
    if (d->cls == GATE_CLASS_CONSEQUENTIAL && req->npresent) {
        /* Who a consequential action goes to, read back from its form. */
        json_w_key(&w, "recipients");
        json_w_arr_begin(&w);
        for (size_t i = 0, n = 0; i < req->npresent && n < 100; i++) {
            if (!gate_recipient_read_back(req, i, d->conseq))
                continue;
            base_buf b = {0};
            tb_esc(&b, req->present[i].value, 300, false, 0);
            json_w_str(&w, b.oom || !b.s ? "" : b.s);
            free(b.s);
            n++;
        }
        json_w_arr_end(&w);
    }
    if (req->script) {
        /* The whole script (gate_decide refused a longer one). */
        w_esc(&w, "script", req->script, GATE_SCRIPT_SHOWN, GATE_ESC_LINES);
        json_w_key(&w, "script_bytes");
        json_w_uint(&w, strlen(req->script));
    }
    if (req->text && (strcmp(req->tool, "type") == 0 || strcmp(req->tool, "dialog") == 0))
        w_esc(&w, "text", req->text, GATE_SHOWN_MAX, 0);
    if (d->courier) {
        json_w_key(&w, "courier");
        json_w_bool(&w, true);
    }
    if (req->key)
        w_esc(&w, "key", req->key, 100, 0);
    if (req->noptions) {
        json_w_key(&w, "options");
        json_w_arr_begin(&w);
        for (size_t i = 0; i < req->noptions && i < 100; i++) {
            base_buf b = {0};
            tb_esc(&b, req->options[i], 200, false, 0);
            json_w_str(&w, b.oom || !b.s ? "" : b.s);
            free(b.s);
        }
        json_w_arr_end(&w);
    }
    if (req->nchosen) {
        json_w_key(&w, "chosen");
        json_w_arr_begin(&w);
        for (size_t i = 0; i < req->nchosen && i < 100; i++) {
            base_buf b = {0};
            tb_esc(&b, req->chosen[i], 300, false, 0);
            json_w_str(&w, b.oom || !b.s ? "" : b.s);
            free(b.s);
        }
        json_w_arr_end(&w);
    }
    json_w_key(&w, "epoch");
    json_w_uint(&w, gt->epoch);
    gate_w_text(&w, "reason", d->reason, sizeof d->reason);
    w_esc(&w, "task", gt->grant ? gt->grant->task : NULL, GATE_STR_MAX, 0);
    return gate_prompt_end(&w);
}

/* The human-facing text for a paused request (new, free(); NULL when out
 * of memory): the verdict first, then the page-chosen parts (URL, field
 * names) escaped with gate_text_escape, so they cannot pass for cdpgate's
 * own words. */
static char *request_message(const gate_auth_request *q, const gate_decision *d)
{
    char *v = values_text(q->values);
    if (!v)
        return NULL;
    char m[40], o[GATE_ORIGIN_MAX * 2], u[GATE_AUDIT_URL_MAX * 2], f[1300], r[80];
    gate_text_escape(m, sizeof m, q->method ? q->method : "GET",
                     strlen(q->method ? q->method : "GET"), 0);
    gate_text_escape(o, sizeof o, q->origin ? q->origin : "", strlen(q->origin ? q->origin : ""),
                     0);
    gate_text_escape(u, sizeof u, q->url, strlen(q->url), 0);
    gate_text_escape(f, sizeof f, q->fields ? q->fields : "", strlen(q->fields ? q->fields : ""),
                     0);
    gate_text_escape(r, sizeof r, q->resource ? q->resource : "",
                     strlen(q->resource ? q->resource : ""), 0);
    bool stop = d->decision == GATE_STOP;
    size_t cap = 1024 + strlen(m) + strlen(o) + strlen(u) + strlen(f) + strlen(r) + strlen(v);
    char *out = malloc(cap);
    if (!out) {
        free(v);
        return NULL;
    }
    snprintf(out, cap, "cdpgate: the page on %s (authenticated) is about to send a %s request "
             "that carries data there; the agent did not name it. Allow it once?%s\n"
             "--- the request (page text) ---\nmethod: %s\nurl: %s\nfields (names): "
             "%s\nrecipients and amounts it sends (values; other values not shown): %s\n"
             "resource: %s\n--- end of the request ---", o, m,
             stop ? " (it is stopped: the human completes it)" : "", m, u, *f ? f : "(none)",
             *v ? v : "(none found)", *r ? r : "?");
    free(v);
    return out;
}

/* The confirmation request for a paused request of an authenticated
 * context (new, free()): the same keys as gate_prompt_json's, the target a
 * "request" named by its method and URL, and the method, the body's field
 * names and the resource type besides. */
char *gate_request_prompt(const gate *gt, const gate_auth_request *q, const gate_decision *d)
{
    char *msg = request_message(q, d);
    if (!msg)
        return NULL;
    json_w w;
    gate_prompt_begin(&w, msg);
    gate_w_text(&w, "action", "request", 16);
    gate_w_text(&w, "origin", q->origin, GATE_ORIGIN_MAX);
    gate_w_text(&w, "url", q->url, GATE_AUDIT_URL_MAX);
    gate_w_text(&w, "method", q->method ? q->method : "GET", 32);
    gate_w_text(&w, "fields", q->fields, 600);
    char *v = values_text(q->values);
    gate_w_text(&w, "values", v ? v : "", 1400);
    free(v);
    gate_w_text(&w, "resource", q->resource, 32);
    json_w_key(&w, "target");
    json_w_obj_begin(&w);
    gate_w_text(&w, "role", "request", 16);
    gate_w_text(&w, "name", d->target, sizeof d->target);
    gate_w_text(&w, "row", NULL, 0);
    json_w_obj_end(&w);
    json_w_key(&w, "class");
    json_w_str(&w, gate_class_name(d->cls));
    gate_w_text(&w, "kind", d->conseq ? gate_conseq_name(d->conseq) : NULL, 32);
    gate_w_text(&w, "observation", NULL, 0);
    json_w_key(&w, "epoch");
    json_w_uint(&w, gt->epoch);
    gate_w_text(&w, "reason", d->reason, sizeof d->reason);
    gate_w_text(&w, "task", gt->grant ? gt->grant->task : NULL, GATE_STR_MAX);
    return gate_prompt_end(&w);
}

void gate_prompt_begin(json_w *w, char *msg)
{
    json_w_init(w);
    json_w_obj_begin(w);
    json_w_key(w, "message");
    json_w_str(w, msg);
    free(msg);
}

char *gate_prompt_end(json_w *w)
{
    json_w_obj_end(w);
    char *p = json_w_error(w) ? NULL : json_w_take(w, NULL);
    json_w_free(w);
    return p;
}
