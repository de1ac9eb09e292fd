/*
 * record.c — the recorder (issue 14, points 1-3): each action that passed
 * the gate and succeeded becomes one step of the trail, saved at once
 * (replay_trail_save: all or nothing, 0600), so a recording that dies
 * keeps every step before.
 *
 * The step is made of what the host's call gave (the tool's arguments,
 * without the ref), what the gate's chokepoint read of the target BEFORE
 * the action (snap_step_facts: role, name, row, section, frame origin,
 * stable attributes, the state it started from) and what the result says
 * happened (its structured object: navigated, new tabs, dialog, new text,
 * the value read back).
 *
 * No secret in a trail (point 2): a text typed into a field that is or was
 * secret is not recorded (the step says "secret field, value not
 * recorded"), nor its read-back; a login or takeover is recorded by
 * identity and what the human did, never as keystrokes; a typed text that
 * is a parameter is recorded as {{name}}, its read-back too; URLs lose
 * their volatile query parameters (session ids, tokens, nonces, stamps).
 */
#include "replay/replay_int.h"

#include "json/json.h"
#include "snapshot/snapshot.h"
#include "url/url.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PARAMS_MAX 64

struct replay_rec {
    replay_trail *t;
    char *path;
    bool param_typed;            /* every typed text becomes a parameter */
    char *pname[PARAMS_MAX], *pval[PARAMS_MAX];
    size_t nparams;
    unsigned heal;               /* the next step heals step `heal` (0: none) */
    bool mark_agent;             /* each step written "by":"agent" (the model's, in a
                                    trail it did not make: replay_rec_open_as) */
    replay_key key;              /* loaded at the first step with a target */
    snap_elems look;             /* the tab's elements before the action on */
    char look_ref[16];           /* this ref (replay_rec_look; "": none) */
};

static const char SECRET_NOTE[] = "secret field, value not recorded";

replay_rec *replay_rec_open(const char *path, const char *version, const char *task,
                            replay_err *err)
{
    return replay_rec_open_as(path, version, task, 0, err);
}

/* May the model write into t (an existing trail) under flags? Refused
 * unless it made it in this session (REPLAY_REC_OWN) or a person marked it
 * agent_editable; then r->mark_agent says whether its steps carry "by". */
static int agent_may(replay_rec *r, unsigned flags, replay_err *err)
{
    const replay_header *h = &r->t->h;
    if (!(flags & REPLAY_REC_AGENT))
        return 0;
    if (h->by_agent && (flags & REPLAY_REC_OWN))
        return 0;
    if (h->agent_editable) {
        r->mark_agent = !h->by_agent || !(flags & REPLAY_REC_OWN);
        return 0;
    }
    return replay_fail(err, REPLAY_EARG, 0, "the trail is not the agent's to change: it was "
                       "made by %s and is not marked \"agent_editable\"",
                       h->by_agent ? "an agent in another session" : "the host or a person");
}

replay_rec *replay_rec_open_as(const char *path, const char *version, const char *task,
                               unsigned flags, replay_err *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (!path || !*path) {
        replay_fail(err, REPLAY_EARG, 0, "no file to record to");
        return NULL;
    }
    replay_rec *r = calloc(1, sizeof *r);
    if (!r || !(r->path = base_strdup(path))) {
        free(r);
        replay_fail(err, REPLAY_ENOMEM, 0, "out of memory");
        return NULL;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        /* An existing trail is continued (one CLI command a step); a file
         * that is not a trail is never overwritten. */
        r->t = replay_trail_load(path, err);
        if (r->t && agent_may(r, flags, err) != 0) {
            replay_trail_free(r->t);
            r->t = NULL;
        }
    } else if (flags & REPLAY_REC_EXISTING) {
        replay_fail(err, REPLAY_EARG, 0, "no such trail");
    } else {
        r->t = replay_trail_new(version, task);
        if (r->t)
            r->t->h.by_agent = (flags & REPLAY_REC_AGENT) != 0;
        if (!r->t)
            replay_fail(err, REPLAY_ENOMEM, 0, "out of memory");
        else if (replay_trail_save(r->t, path, err) != 0) {
            replay_trail_free(r->t);
            r->t = NULL;
        }
    }
    if (!r->t) {
        replay_rec_close(r);
        return NULL;
    }
    return r;
}

static void look_clear(replay_rec *r)
{
    snap_elements_free(&r->look);
    r->look_ref[0] = '\0';
}

int replay_rec_look(replay_rec *r, snap_agent *a, const char *ref)
{
    if (!r)
        return SNAP_EINVAL;
    look_clear(r);
    if (!a || !ref || !*ref || strlen(ref) >= sizeof r->look_ref)
        return SNAP_EINVAL;
    int rc = replay_look(a, ref, &r->look);
    if (rc)
        snap_elements_free(&r->look);
    else
        snprintf(r->look_ref, sizeof r->look_ref, "%s", ref);
    return rc;
}

/* The target's index among its equals when the look before the action
 * found several (replay_equals: as replay will count them). */
static void target_index(replay_rec *r, replay_target *g)
{
    unsigned index = 0, count = 0;
    if (r->look_ref[0])
        replay_equals(g, &r->key, &r->look, r->look_ref, &index, &count);
    if (count >= 2) {
        g->index = index;
        g->equals = count;
    }
}

void replay_rec_close(replay_rec *r)
{
    if (!r)
        return;
    look_clear(r);
    replay_trail_free(r->t);
    free(r->path);
    replay_key_wipe(&r->key);
    for (size_t i = 0; i < r->nparams; i++) {
        base_memzero(r->pval[i], strlen(r->pval[i]));
        free(r->pname[i]);
        free(r->pval[i]);
    }
    free(r);
}

const char *replay_rec_path(const replay_rec *r)
{
    return r->path;
}

const replay_trail *replay_rec_trail(const replay_rec *r)
{
    return r->t;
}

int replay_rec_heal(replay_rec *r, unsigned n, replay_err *err)
{
    for (size_t i = 0; r && n && i < r->t->nsteps; i++) {
        if (r->t->steps[i].n == n) {
            r->heal = n;
            return 0;
        }
    }
    return replay_fail(err, REPLAY_EARG, 0, "no step %u to heal", n);
}

/* The step s into the trail (a new step, or the heal asked for) and the
 * file saved. */
static int commit(replay_rec *r, replay_step *s, replay_err *err)
{
    unsigned heal = r->heal;
    r->heal = 0;
    s->by_agent = r->mark_agent;
    int rc = heal ? replay_trail_heal(r->t, heal, s, err) : replay_trail_add(r->t, s, err);
    if (!rc)
        rc = replay_trail_needs(r->t, err);
    if (!rc)
        rc = replay_trail_save(r->t, r->path, err);
    return rc;
}

void replay_rec_param_typed(replay_rec *r, bool on)
{
    r->param_typed = on;
}

/* The trail key, at the first step with a target (made when missing:
 * the first need); a trail whose identifiers were hashed under another
 * is not continued (they could not be compared with the new ones). 0 or
 * REPLAY_E* (the step is not recorded: never an identifier unkeyed). */
static int key_ready(replay_rec *r, replay_err *err)
{
    int rc = r->key.id[0] ? 0 : replay_key_load(NULL, true, &r->key, err);
    const char *tid = r->t->h.trail_key;
    if (rc || !tid || strcmp(tid, r->key.id) == 0)
        return rc;
    return replay_fail(err, REPLAY_EARG, 0, "the trail's identifiers were hashed under trail "
                       "key %s, this machine's trail key is %s: record where that key is "
                       "(--trail-key FILE) or into a new trail", tid, r->key.id);
}

/* With the first identifier a step hides under the key, the trail's
 * header names the key (its id: the key itself never goes in). */
static bool key_named(replay_rec *r, const replay_step *s)
{
    const replay_target *t = &s->target;
    const char *f[] = {t->name, t->row, t->section, t->label, t->placeholder};
    bool keyed = false;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        keyed = keyed || (f[i] && strstr(f[i], REPLAY_ID_KEYED));
    if (!keyed || r->t->h.trail_key)
        return true;
    return (r->t->h.trail_key = base_strdup(r->key.id)) != NULL;
}

static bool param_name_ok(const char *s)
{
    size_t n = 0;
    for (; s && s[n]; n++)
        if (!isalnum((unsigned char)s[n]) && s[n] != '_' && s[n] != '-')
            return false;
    return n >= 1 && n <= 64;
}

int replay_rec_param(replay_rec *r, const char *name, const char *value, replay_err *err)
{
    if (!param_name_ok(name))
        return replay_fail(err, REPLAY_EARG, 0, "a parameter name is 1-64 letters, digits,"
                           " _ or -");
    for (size_t i = 0; i < r->nparams; i++)
        if (strcmp(r->pname[i], name) == 0) {
            char *v = base_strdup(value ? value : "");
            if (!v)
                return replay_fail(err, REPLAY_ENOMEM, 0, "out of memory");
            base_memzero(r->pval[i], strlen(r->pval[i]));
            free(r->pval[i]);
            r->pval[i] = v;
            return 0;
        }
    if (r->nparams >= PARAMS_MAX)
        return replay_fail(err, REPLAY_ELIMIT, 0, "more than %d parameters", PARAMS_MAX);
    char *n = base_strdup(name), *v = base_strdup(value ? value : "");
    if (!n || !v) {
        free(n);
        free(v);
        return replay_fail(err, REPLAY_ENOMEM, 0, "out of memory");
    }
    r->pname[r->nparams] = n;
    r->pval[r->nparams++] = v;
    return 0;
}

/* ---- URLs without volatile parameters and without secrets ---- */

/* A query key whose value changes on every visit and that replay gets
 * afresh (a session id: the vault restores the session; a nonce or CSRF
 * token; a cache buster, a time stamp, a campaign tag): dropped. Other
 * secrets are redacted (url_query_scrub), never dropped. */
static bool volatile_key(const char *k, size_t n)
{
    static const char *const V[] = {"sid", "session", "sessionid", "session_id", "phpsessid",
                                    "jsessionid", "nonce", "csrf", "xsrf", "_csrf", "ts",
                                    "timestamp", "_", "cb", "cachebust", "rand", "random", "t",
                                    NULL};
    char low[32];
    if (!base_lower_copy(low, sizeof low, k, n))
        return false;
    if (strncmp(low, "utm_", 4) == 0)
        return true;
    for (size_t i = 0; V[i]; i++)
        if (strcmp(V[i], low) == 0)
            return true;
    return false;
}

/* A path's segment parameters p[0..n) (from a ';') into b without the
 * volatile ones (";jsessionid=...": a session id the server wrote into
 * the URL; red team s15, R5-2): replay gets its session afresh. */
static void put_params_stable(base_buf *b, const char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t e = i + 1;
        while (e < n && p[e] != ';' && p[e] != '/')
            e++;
        const char *eq = p[i] == ';' ? memchr(p + i, '=', e - i) : NULL;
        if (!eq || !volatile_key(p + i + 1, (size_t)(eq - (p + i + 1))))
            base_buf_put(b, p + i, e - i);
        i = e;
    }
}

/* url with the volatile query and path parameters dropped (new; NULL for
 * NULL or when out of memory). Pairs are split at '&' and ';' as
 * url_redact splits them; a kept pair keeps the separator before it. */
static char *url_stable_query(const char *url)
{
    const char *sch = strstr(url, "://");
    size_t at = sch && sch < url + strcspn(url, "/?#") ? (size_t)(sch - url) + 3 : 0;
    at += strcspn(url + at, "/?#");
    size_t qat = at + strcspn(url + at, "?#");
    base_buf b = {0};
    base_buf_put(&b, url, at);
    for (size_t i = at; i < qat;) {
        size_t n = strcspn(url + i, ";/?#"), e = i + n;
        base_buf_put(&b, url + i, n);
        if (url[e] == ';') {
            size_t pe = e + strcspn(url + e, "/?#");
            put_params_stable(&b, url + e, pe - e);
            e = pe;
        }
        if (e < qat && url[e] == '/')
            base_buf_putc(&b, url[e++]);
        i = e;
    }
    const char *frag = strchr(url + qat, '#');
    size_t qend = frag ? (size_t)(frag - url) : strlen(url);
    size_t pos = qat + 1;
    bool first = true;
    while (url[qat] == '?' && pos <= qend) {
        size_t end = pos + strcspn(url + pos, "&;#");
        const char *eq = memchr(url + pos, '=', end - pos);
        size_t klen = (eq ? (size_t)(eq - url) : end) - pos;
        if (end > pos && !volatile_key(url + pos, klen)) {
            base_buf_putc(&b, first ? '?' : url[pos - 1]);
            base_buf_put(&b, url + pos, end - pos);
            first = false;
        }
        pos = end + 1;
    }
    if (frag)
        base_buf_puts(&b, frag);
    return base_buf_take(&b, NULL);
}

char *replay_url_scrub(const char *url)
{
    return url_redact(url, URL_REDACT_TOKENS, NULL);
}

/* url with the volatile query parameters dropped and its secrets (the
 * userinfo, bearer-like path segments, secret query values, fragments)
 * redacted (new; NULL for NULL or when out of memory). */
static char *url_stable(const char *url)
{
    if (!url)
        return NULL;
    char *u = url_stable_query(url);
    char *c = u ? replay_url_scrub(u) : NULL;
    free(u);
    return c;
}

/* ---- building a step ---- */

/* The parameter a typed text is recorded as ("{{name}}", into out), or
 * NULL when it is recorded as it is. */
static const char *param_for(replay_rec *r, const replay_act *act, const snap_step_facts *f,
                             char *out, size_t cap)
{
    const char *name = act->param;
    for (size_t i = 0; !name && act->text && i < r->nparams; i++)
        if (strcmp(r->pval[i], act->text) == 0)
            name = r->pname[i];
    char made[40];
    if (!name && r->param_typed && act->text) {
        const char *base = f && f->name_attr ? f->name_attr : f && f->id ? f->id : NULL;
        if (base && param_name_ok(base) && strlen(base) < 32)
            snprintf(made, sizeof made, "%s", base);
        else
            snprintf(made, sizeof made, "text%u", (unsigned)r->nparams + 1);
        name = made;
    }
    if (!name)
        return NULL;
    if (act->text && replay_rec_param(r, name, act->text, NULL) != 0)
        return NULL;
    snprintf(out, cap, "{{%s}}", name);
    return out;
}

/* s as recorded text: every "{{" written "{{{{" (replay_lit_put), so only
 * the recorder's own parameters read as {{name}} (red team s14, R4-5). */
static void w_lit(json_w *w, const char *s)
{
    char *l = replay_lit_dup(s);
    if (l)
        json_w_str(w, l);
    else
        json_w_null(w);
    free(l);
}

/* The step's arguments as a JSON object (new). typed: the text to write
 * for a typed text, as it is (a parameter, or recorded text already
 * escaped; NULL: none, a secret). held: a key or a select's values that
 * are not recorded (a secret field's). */
static char *args_json(const replay_act *act, const char *typed, bool held)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    if (act->url) {
        json_w_key(&w, "url");
        char *u = url_stable(act->url);
        w_lit(&w, u ? u : "");
        free(u);
    }
    if (act->new_tab) { json_w_key(&w, "new_tab"); json_w_bool(&w, true); }
    if (typed) { json_w_key(&w, "text"); json_w_str(&w, typed); }
    if (act->submit) { json_w_key(&w, "submit"); json_w_bool(&w, true); }
    if (act->nvalues && !held) {
        json_w_key(&w, "values");
        json_w_arr_begin(&w);
        for (size_t i = 0; i < act->nvalues; i++)
            w_lit(&w, act->values[i]);
        json_w_arr_end(&w);
    }
    if (act->key && !held) { json_w_key(&w, "key"); w_lit(&w, act->key); }
    if (act->direction) { json_w_key(&w, "direction"); w_lit(&w, act->direction); }
    if (act->forward) { json_w_key(&w, "forward"); json_w_bool(&w, true); }
    if (act->dbl) { json_w_key(&w, "double"); json_w_bool(&w, true); }
    if (act->has_accept) { json_w_key(&w, "accept"); json_w_bool(&w, act->accept); }
    if (act->action) { json_w_key(&w, "action"); w_lit(&w, act->action); }
    if (act->tab) { json_w_key(&w, "tab"); w_lit(&w, act->tab); }
    if (act->query) { json_w_key(&w, "query"); w_lit(&w, act->query); }
    if (act->output) { json_w_key(&w, "name"); w_lit(&w, act->output); }
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

static void fill_target(replay_step *s, const snap_step_facts *f, char **frames)
{
    s->has_target = true;
    replay_target *g = &s->target;
    g->role = (char *)f->role;
    g->name = (char *)f->name;
    g->row = (char *)f->row;
    g->section = (char *)f->section;
    g->label = (char *)f->label;
    g->id = (char *)f->id;
    g->name_attr = (char *)f->name_attr;
    g->placeholder = (char *)f->placeholder;
    g->testid = (char *)f->testid;
    if (f->frame_origin && f->origin) {
        frames[0] = (char *)f->origin;
        frames[1] = (char *)f->frame_origin;
        g->frames.v = frames;
        g->frames.n = 2;
    }
}

/* The length of the number at p (a digit, then digits, '.' and ','
 * between digits), 0: none. */
static size_t row_number(const char *p)
{
    size_t n = 0;
    if (!isdigit((unsigned char)*p))
        return 0;
    while (isdigit((unsigned char)p[n]) ||
           ((p[n] == '.' || p[n] == ',') && isdigit((unsigned char)p[n + 1])))
        n++;
    return n;
}

/* The currency signs an amount is written with. */
static const char *const SIGNS[] = {"$", "\xe2\x82\xac", "\xc2\xa3", "\xc2\xa5", "\xe2\x82\xb9",
                                    "\xe2\x82\xa9", "\xe2\x82\xbd", "\xe2\x82\xba", "\xe2\x82\xaa",
                                    NULL};

/* Is s[0..3) a currency code (ISO 4217, the common ones)? */
static bool currency_code(const char *s)
{
    static const char C[] = "USD EUR GBP JPY CHF CAD AUD NZD INR CNY RMB SEK NOK DKK PLN CZK "
                            "HUF BRL MXN ZAR SGD HKD KRW TRY RUB ILS AED SAR";
    for (size_t i = 0; i + 3 <= sizeof C - 1; i += 4)
        if (memcmp(C + i, s, 3) == 0)
            return true;
    return false;
}

/* A currency sign or code ends at row[0, at) (a space between allowed;
 * a code stands on its own: "USD", not "XUSD")? */
static bool after_currency(const char *row, size_t at)
{
    if (at && row[at - 1] == ' ')
        at--;
    for (size_t i = 0; SIGNS[i]; i++) {
        size_t n = strlen(SIGNS[i]);
        if (at >= n && memcmp(row + at - n, SIGNS[i], n) == 0)
            return true;
    }
    return at >= 3 && currency_code(row + at - 3) &&
           (at == 3 || !isalnum((unsigned char)row[at - 4]));
}

/* Does a currency sign or code start at row + at (a space between
 * allowed) that ends the amount before it ("20.00 USD", "9,99 € Buy")?
 * Not one that begins the next amount: in "Invoice 1002 $120.00" the "$"
 * is 120.00's, and 1002 no amount (red team s17, R7-5). */
static bool before_currency(const char *row, size_t at)
{
    if (row[at] == ' ')
        at++;
    size_t n = 0;
    for (size_t i = 0; SIGNS[i] && !n; i++)
        if (strncmp(row + at, SIGNS[i], strlen(SIGNS[i])) == 0)
            n = strlen(SIGNS[i]);
    if (!n && strnlen(row + at, 3) == 3 && currency_code(row + at) &&
        !isalnum((unsigned char)row[at + 3]))
        n = 3;
    if (!n)
        return false;
    at += n;
    if (row[at] == ' ')
        at++;
    return !isdigit((unsigned char)row[at]);
}

/* A row as the trail keeps it (new; NULL for NULL or out of memory): each
 * amount written REPLAY_ROW_NUMBER, so a price that changed keeps its row
 * while an invoice or account number that differs does not (red team
 * s14, R4-8). An amount: a number after a currency sign or code, or
 * before one ("$20.00", "EUR 1,234.50", "9,99 €", "20.00 USD"). Any other
 * number stays as it is and must be equal at replay: "Invoice 2023.11" or
 * "account 4711.00" is no amount (red team s15, R5-3). */
char *replay_row_mark(const char *row)
{
    if (!row)
        return NULL;
    base_buf b = {0};
    for (size_t i = 0; row[i];) {
        bool edge = i == 0 || !isalnum((unsigned char)row[i - 1]) || after_currency(row, i);
        size_t n = edge ? row_number(row + i) : 0;
        bool end = n && (!isalnum((unsigned char)row[i + n]) || before_currency(row, i + n));
        if (end && (after_currency(row, i) || before_currency(row, i + n))) {
            base_buf_puts(&b, REPLAY_ROW_NUMBER);
            i += n;
        } else {
            size_t k = n ? n : 1;
            base_buf_put(&b, row + i, k);
            i += k;
        }
    }
    return base_buf_take(&b, NULL);
}

/* v as a URL's query carries it (new): letters, digits and "-._~" kept, a
 * space as '+' (a form's encoding, plus) or "%20", any other byte %XX. */
static char *url_enc(const char *v, bool plus)
{
    base_buf b = {0};
    for (const unsigned char *c = (const unsigned char *)v; *c; c++) {
        if (isalnum(*c) || strchr("-._~", *c))
            base_buf_putc(&b, (char)*c);
        else if (*c == ' ' && plus)
            base_buf_putc(&b, '+');
        else
            base_buf_printf(&b, "%%%02X", *c);
    }
    return base_buf_take(&b, NULL);
}

/* The parameter whose value (or, in a URL, one of its encodings: enc[i],
 * two a parameter) is longest at s: its index, the length into *len; -1
 * when none is. */
static int param_at(const replay_rec *r, char *const *enc, const char *s, size_t *len)
{
    int best = -1;
    *len = 0;
    for (size_t i = 0; i < r->nparams; i++)
        for (int k = 0; k < 3; k++) {
            const char *v = k == 0 ? r->pval[i] : enc ? enc[2 * i + (size_t)k - 1] : NULL;
            size_t n = v ? strlen(v) : 0;
            if (n > *len && strncmp(s, v, n) == 0) {
                best = (int)i;
                *len = n;
            }
        }
    return best;
}

/* A word's byte (a letter or digit; any byte of a UTF-8 sequence: "é" is
 * part of a word)? */
static bool word_byte(char c)
{
    return isalnum((unsigned char)c) || (unsigned char)c >= 0x80;
}

/* Does s[pos, pos + len) stand as a whole token of s: no word byte right
 * before or after it, and not inside a number ("1.5" in "11.50", "2" in
 * "1,2")? A value found inside a word or a number is no parameter's:
 * written {{name}} there, another value would make another word or
 * number at replay ("Invoice 100{{qty}}" with qty=5 is invoice 1005: red
 * team s17, R7-2). */
static bool whole_token(const char *s, size_t pos, size_t len)
{
    const char *e = s + pos + len;
    if (pos && (word_byte(s[pos - 1]) ||
                (pos >= 2 && strchr(".,", s[pos - 1]) && isdigit((unsigned char)s[pos - 2]) &&
                 isdigit((unsigned char)s[pos]))))
        return false;
    return !word_byte(*e) &&
           !(strchr(".,", *e) && *e && isdigit((unsigned char)e[1]) &&
             isdigit((unsigned char)e[-1]));
}

/* s as recorded text (literal "{{" written "{{{{") with every parameter's
 * value that stands as a whole token written {{name}} (new; NULL when out
 * of memory): a page that echoes a parameter (a search box's "Results for
 * ...") does not put its value in the trail. In a URL (url), its encoded
 * forms too: a search form's GET puts the value in the next page's URL.
 * A value inside a word or a number stays as it is (whole_token). */
static char *scrub_params(const replay_rec *r, const char *s, bool url)
{
    char *enc[2 * PARAMS_MAX] = {0};
    bool oom = false;
    for (size_t i = 0; url && i < r->nparams; i++) {
        enc[2 * i] = url_enc(r->pval[i], true);
        enc[2 * i + 1] = url_enc(r->pval[i], false);
        oom = oom || !enc[2 * i] || !enc[2 * i + 1];
    }
    base_buf b = {0};
    size_t lit = 0, pos = 0, n = strlen(s);
    while (!oom && pos < n) {
        size_t len;
        int p = param_at(r, url ? enc : NULL, s + pos, &len);
        if (p < 0 || !whole_token(s, pos, len)) {
            pos++;
            continue;
        }
        replay_lit_put(&b, s + lit, pos - lit);
        base_buf_printf(&b, "{{%s}}", r->pname[p]);
        pos += len;
        lit = pos;
    }
    replay_lit_put(&b, s + lit, n - lit);
    for (size_t i = 0; i < 2 * r->nparams && i < 2 * PARAMS_MAX; i++)
        free(enc[i]);
    if (oom) {
        base_buf_free(&b);
        return NULL;
    }
    return base_buf_take(&b, NULL);
}

/* url without its volatile query parameters and with the parameters'
 * values written {{name}} (new; NULL for NULL or when out of memory). */
static char *url_clean(const replay_rec *r, const char *url)
{
    char *u = url_stable(url);
    char *c = u ? scrub_params(r, u, true) : NULL;
    free(u);
    return c;
}

/* cut (a row the recorder cut) without a trailing part of a parameter's
 * value the cut split: that part is no {{name}} and is dropped. */
static void cut_partial(const replay_rec *r, char *cut)
{
    size_t len = strlen(cut), drop = 0;
    for (size_t i = 0; i < r->nparams; i++) {
        size_t vn = strlen(r->pval[i]);
        for (size_t k = vn > len + 1 ? len : vn ? vn - 1 : 0; k > drop; k--)
            if (memcmp(cut + len - k, r->pval[i], k) == 0) {
                drop = k;
                break;
            }
    }
    cut[len - drop] = '\0';
}

/* A target's row as the trail keeps it (new; NULL when out of memory):
 * cut at REPLAY_ROW_CUT UTF-16 units (the only row replay matches by its
 * start: REPLAY_ROW_CUT_MARK after it; a word the cut splits dropped), as
 * recorded text ("{{" written "{{{{", so no page spells the marker) with,
 * when scrub, each parameter's value written {{name}} and each
 * secret-shaped word REPLAY_TEXT_HIDDEN (text.c: red team s17, R7-6), its
 * amounts marked. Without scrub: the row target_index counts equals by. */
static char *row_kept(const replay_rec *r, const char *row, bool scrub, const snap_agent *a)
{
    char cut[REPLAY_ROW_CUT_MAX];
    bool was_cut = replay_row_cut(row, cut, sizeof cut);
    if (was_cut)
        cut_partial(r, cut);
    char *esc = scrub ? scrub_params(r, was_cut ? cut : row, false)
                      : replay_lit_dup(was_cut ? cut : row);
    char *hid = esc && scrub ? replay_text_hide_ids(esc, a, &r->key) : NULL;
    char *m = scrub ? (hid ? replay_row_mark(hid) : NULL) : esc ? replay_row_mark(esc) : NULL;
    free(esc);
    free(hid);
    if (!m || !was_cut)
        return m;
    base_buf b = {0};
    base_buf_puts(&b, m);
    base_buf_puts(&b, REPLAY_ROW_CUT_MARK);
    free(m);
    return base_buf_take(&b, NULL);
}

/* The target's page texts with each parameter's value written {{name}}
 * (as a typed text is: a button "Remove Alice" after Alice was typed as
 * {{who}} is recorded "Remove {{who}}"; replay fills it in), a literal
 * "{{" written "{{{{", each secret-shaped word written REPLAY_TEXT_HIDDEN
 * (an API key in its row, a "Copy ghp_..." button: red team s17, R7-6;
 * replay matches it as such a word, match.c): its name, row, section,
 * label and placeholder. After target_index, which counted equals with
 * the page's own texts: two rows told apart only by their secrets are
 * ambiguous at replay, never the recorded index's. The new strings go
 * into owned[]; false when out of memory. */
static bool target_scrub(const replay_rec *r, replay_target *g, const char *row,
                         const snap_agent *a, char **owned, size_t *nowned)
{
    char **f[] = {&g->name, &g->section, &g->label, &g->placeholder};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        char *p = *f[i] ? scrub_params(r, *f[i], false) : NULL;
        if (*f[i] &&
            !(owned[(*nowned)++] = *f[i] = p ? replay_text_hide_ids(p, a, &r->key) : NULL)) {
            free(p);
            return false;
        }
        free(p);
    }
    if (row && !(owned[(*nowned)++] = g->row = row_kept(r, row, true, a)))
        return false;
    return true;
}

/* Page text as the trail keeps it (new; NULL when out of memory): each
 * parameter's value written {{name}} (recorded text), then each word
 * shaped like a secret written REPLAY_TEXT_HIDDEN (text.c: a token, a code,
 * a secret the agent knows; red team s16, R6-5). */
static char *text_kept(const replay_rec *r, const char *s, const snap_agent *a, bool primed)
{
    char *p = scrub_params(r, s, false);
    char *h = p ? replay_text_hide_kw(p, a, primed) : NULL;
    free(p);
    return h;
}

/* The effect from the action's structured result (a JSON object). Strings
 * are new and listed in owned[] (freed by the caller). */
static void fill_effect(const replay_rec *r, replay_step *s, const json_val *res,
                        const replay_act *act, const char *typed, char **owned, size_t *nowned,
                        char **appeared)
{
    if (json_bool(json_get(res, "navigated")))
        owned[(*nowned)++] = s->effect.navigated = url_clean(r, json_get_str(res, "url"));
    const json_val *nt = json_first(json_get(res, "new_tabs"));
    if (nt)
        owned[(*nowned)++] = s->effect.new_tab = url_clean(r, json_get_str(nt, "url"));
    const json_val *d = json_get(res, "dialog");
    if (d) {
        base_buf b = {0};
        base_buf_printf(&b, "%s: %s", json_get_str(d, "type") ? json_get_str(d, "type") : "",
                        json_get_str(d, "message") ? json_get_str(d, "message") : "");
        char *raw = base_buf_take(&b, NULL);
        owned[(*nowned)++] = s->effect.dialog = raw ? text_kept(r, raw, act->agent, false) : NULL;
        free(raw);
    }
    const char *nw = json_get_str(res, "new_text");
    char *sc = nw && *nw && strlen(nw) <= REPLAY_MAX_STR && !s->secret
                   ? text_kept(r, nw, act->agent, false) : NULL;
    if (sc) {
        owned[(*nowned)++] = appeared[0] = sc;
        s->effect.appeared.v = appeared;
        s->effect.appeared.n = 1;
    }
    const char *v = json_get_str(res, "value");
    if (s->secret || json_bool(json_get(res, "secret")) || !v)
        return;
    /* A read-back equal to a parameter's value is the parameter. */
    if (typed && act->text && strcmp(v, act->text) == 0)
        s->effect.value = (char *)typed;
    else if (!typed && strlen(v) <= REPLAY_MAX_STR) {
        char *lit = replay_lit_dup(v);
        owned[(*nowned)++] = s->effect.value = lit ? replay_text_hide(lit, act->agent) : NULL;
        free(lit);
    }
}

unsigned replay_rec_output_step(const replay_rec *r, const char *name)
{
    char buf[REPLAY_MAX_STR + 1];
    for (size_t i = 0; r && name && i < r->t->nsteps; i++) {
        const replay_step *s = &r->t->steps[i];
        const char *o = s->superseded ? NULL : replay_step_output(s, buf, sizeof buf);
        if (o && strcmp(o, name) == 0 && s->n != r->heal)
            return s->n;
    }
    return 0;
}

int replay_rec_action(replay_rec *r, const replay_act *act, const snap_step_facts *f,
                      const char *structured, replay_err *err)
{
    if (!r || !act || !act->op)
        return replay_fail(err, REPLAY_EARG, 0, "no action to record");
    int krc = f && f->has_target ? key_ready(r, err) : 0;
    if (krc)
        return krc;
    unsigned taken = replay_rec_output_step(r, act->output);
    if (taken)
        return replay_fail(err, REPLAY_EARG, 0, "the output name \"%.64s\" is step %u's "
                           "already: each output of a trail has a name of its own",
                           act->output, taken);
    replay_step s;
    memset(&s, 0, sizeof s);
    s.op = (char *)act->op;
    /* Fail closed: a text is recorded only when the chokepoint read a
     * target that is not and never was a secret field. */
    bool secret = !snap_step_text_kept(f);
    /* Nor a key pressed while a secret field has focus (or the
     * chokepoint read nothing), nor a secret select's values (red team
     * s14, R4-2): the evidence's rule too (snapshot.h). */
    bool held = (act->text && secret) || (act->nvalues && secret) ||
                (act->key && !snap_step_key_kept(f));
    char pbuf[80];
    const char *param = act->text && !secret ? param_for(r, act, f, pbuf, sizeof pbuf) : NULL;
    char *lit = act->text && !secret && !param ? replay_lit_dup(act->text) : NULL;
    s.args = args_json(act, param ? param : lit, held);
    free(lit);
    if (!s.args)
        return replay_fail(err, REPLAY_ENOMEM, 0, "out of memory");
    char *frames[2], *appeared[1], *owned[16] = {0};
    size_t nowned = 0;
    bool oom = false;
    char *egress[4];
    if (f) {
        s.cls = (char *)f->cls;
        for (size_t i = 0; f->egress && f->egress[i] && i < 3; i++)
            egress[s.egress.n++] = (char *)f->egress[i];
        s.egress.v = s.egress.n ? egress : NULL;
        if (f->has_target) {
            fill_target(&s, f, frames);
            if (f->row && !(owned[nowned++] = s.target.row = row_kept(r, f->row, false, NULL)))
                oom = true;
            target_index(r, &s.target);
            oom = oom || !target_scrub(r, &s.target, f->row, act->agent, owned, &nowned);
        }
        s.state.origin = (char *)f->origin;
        owned[nowned++] = s.state.url = url_clean(r, f->url);
        /* the tab's title (a message's subject: "Your code is 482913") */
        if (f->title && !(owned[nowned++] = s.state.title = replay_text_hide(f->title, NULL)))
            oom = true;
        s.state.authenticated = f->authenticated;
        s.state.identity = (char *)f->identity;
    }
    if (held) {
        s.secret = true;
        s.note = (char *)SECRET_NOTE;
    }
    json_doc *d = structured ? json_parse(structured, strlen(structured), NULL, NULL) : NULL;
    fill_effect(r, &s, json_doc_root(d), act, param, owned, &nowned, appeared);
    if (act->output) {
        s.output = (char *)act->output;
        /* a read of what its query or name says is a secret ("recovery
         * codes"): every word read after a word naming one (R7-8) */
        bool named = replay_text_names_secret(act->query) ||
                     replay_text_names_secret(act->output);
        char *v = act->value && strlen(act->value) <= REPLAY_MAX_STR
                      ? text_kept(r, act->value, act->agent, named) : NULL;
        if (v)
            owned[nowned++] = s.effect.value = v;
    }
    look_clear(r);
    oom = oom || !key_named(r, &s);
    int rc = oom ? replay_fail(err, REPLAY_ENOMEM, 0, "out of memory") : commit(r, &s, err);
    json_doc_free(d);
    free(s.args);
    for (size_t i = 0; i < nowned; i++)
        free(owned[i]);
    return rc;
}

int replay_rec_identity(replay_rec *r, const char *op, const char *origin,
                        const char *identity, bool human, replay_err *err)
{
    if (!r || !op)
        return replay_fail(err, REPLAY_EARG, 0, "no step to record");
    replay_step s;
    memset(&s, 0, sizeof s);
    s.op = (char *)op;
    char note[300];
    if (identity && *identity)
        snprintf(note, sizeof note, "identity %.200s, %s", identity,
                 human ? "human logged in" : "session restored");
    else
        snprintf(note, sizeof note, "%s", human ? "human logged in" : "session restored");
    s.note = note;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    if (origin && *origin) {
        json_w_key(&w, "origin");
        w_lit(&w, origin);
    }
    json_w_obj_end(&w);
    s.args = json_w_take(&w, NULL);
    if (!s.args)
        return replay_fail(err, REPLAY_ENOMEM, 0, "out of memory");
    s.state.origin = (char *)origin;
    s.state.identity = (char *)identity;
    s.state.authenticated = identity && *identity;
    int rc = commit(r, &s, err);
    free(s.args);
    return rc;
}
