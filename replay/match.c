/*
 * match.c — re-finding a recorded step's target in a fresh observation
 * (issue 14, point 4): the one element of the tab that has the target's
 * role, accessible name, row context, frame and stable attributes, or a
 * divergence that says why not.
 *
 * The rule is fail closed: an element is acted on only when it is the ONLY
 * element of the observation that passes every check. A check fails on a
 * difference, never on an absence the recording did not rule out:
 *   - role: equal (the snapshot's role: button, link, textbox ...);
 *   - name: equal after folding case and whitespace (a changed label is a
 *     divergence, never "close enough");
 *   - row: when the target has one, either the snapshot's row context
 *     (which names which of several look-alikes it was: the row header, a
 *     key, "#2 of 3") or the text of the row the element is in (the gate's
 *     row, its innerText), digits compared too (a row that differs only in
 *     its digits is another invoice, account or amount: red team s14,
 *     R4-8), except where the recorded row says "{{#}}" (any one number:
 *     the recorder writes it for an amount, a person may write it); a
 *     target recorded without one that now finds several look-alikes is
 *     ambiguous;
 *   - frame: the innermost origin of the target's frame chain equals the
 *     element's frame origin (none: the element is in the top document);
 *   - stable attributes: each one the target recorded (id, name=, label,
 *     placeholder, test id) must read the same on the element (read by
 *     snap_elements_attrs; an element whose attributes were not read fails
 *     it); a label may also be the element's name. A target with neither
 *     role nor name (a key pressed on the focused field) has every
 *     element's attributes read.
 * The section (the heading above) only breaks a tie: when several elements
 * pass, those under the recorded heading are kept if any are. Then the
 * recorded index among equals chooses, but only when exactly as many
 * elements pass as the recording counted (equals): a look-alike added or
 * one gone leaves it ambiguous. Several left: ambiguous, nothing acted
 * on. None: missing, with the closest candidates (by what they share with
 * the target) and the first check each failed.
 *
 * match_elems does no I/O; replay_find reads the observation. At
 * recording, replay_look and replay_equals count the same equals the same
 * way, so an unchanged page replays to the same element.
 */
#include "replay/replay_int.h"

#include "json/json.h"
#include "snapshot/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHY_CUT 60               /* bytes of page text quoted in a reason */

static const char *nz(const char *s)
{
    return s ? s : "";
}

static bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* The next character of *p folded: ASCII case lowered, a run of
 * whitespace one space, none at either end; 0 at the end. */
static char fold_next(const char **p)
{
    const char *s = *p;
    if (!*s)
        return 0;
    if (is_space(*s)) {
        while (is_space(*s))
            s++;
        *p = s;
        return *s ? ' ' : 0;
    }
    *p = s + 1;
    return *s >= 'A' && *s <= 'Z' ? (char)(*s + 32) : *s;
}

/* Equal once case (ASCII) and whitespace runs are folded and the ends
 * trimmed? */
static bool fold_eq(const char *x, const char *y)
{
    x = nz(x), y = nz(y);
    while (is_space(*x))
        x++;
    while (is_space(*y))
        y++;
    for (;;) {
        char a = fold_next(&x), b = fold_next(&y);
        if (a != b)
            return false;
        if (!a)
            return true;
    }
}

/* A number as a row marker "{{#}}" stands for it: a digit, then digits,
 * '.' and ','; its length at p (0: none). */
static size_t number_len(const char *p)
{
    size_t n = 0;
    if (*p < '0' || *p > '9')
        return 0;
    while ((p[n] >= '0' && p[n] <= '9') || ((p[n] == '.' || p[n] == ',') && p[n + 1] >= '0' &&
                                            p[n + 1] <= '9'))
        n++;
    return n;
}

#define ROW_BUDGET 100000L       /* steps of one comparison; past it: unequal */
#define HIDDEN_WORDS 6           /* words of got one hidden word may stand for */

/* One comparison of a recorded row with a page's: got may go on after
 * want (prefix), the steps left, the trail key hidden identifiers are
 * compared under (NULL: none matches). */
typedef struct {
    bool prefix;
    long budget;
    const replay_key *key;
} rowc;

static bool row_at(const char *x, const char *y, rowc *c);

/* At a hidden word of want (x, past it): the word or group of words at y
 * that the recorder would hide (replay_text_unit_secret), the rest equal. */
static bool row_hidden(const char *x, const char *y, rowc *c)
{
    size_t e = 0, words = 1;
    for (; y[e]; e++)
        if (is_space(y[e]) && e && !is_space(y[e - 1]) && ++words > HIDDEN_WORDS)
            break;
    for (size_t k = e; k > 0 && --c->budget > 0; k--)
        if (!is_space(y[k - 1]) && replay_text_unit_secret(y, k, NULL) && row_at(x, y + k, c))
            return true;
    return false;
}

/* At REPLAY_TEXT_REST of want (x, past it): one or more words of y, any,
 * the rest equal (red team s18, R8-4). */
static bool row_rest(const char *x, const char *y, rowc *c)
{
    for (size_t k = strlen(y); k > 0 && --c->budget > 0; k--)
        if (!is_space(y[k - 1]) && (!y[k] || is_space(y[k])) && row_at(x, y + k, c))
            return true;
    return false;
}

/* At a hidden word of want written with its hash (x, past it): the word
 * at y (a start of it: the punctuation after it is want's) whose hash is
 * id, the rest equal (red team s18, R8-7: another IBAN, id or token in
 * the row is another row). keyed: id is the start of its HMAC under the
 * trail key (session 21), and with no key (c->key NULL: none on this
 * machine, or another than the trail's) no word matches it: fail closed,
 * never any word. Else the start of its SHA-256 in a trail written before
 * (REPLAY_ID_HEX digits, or the 8 of one written before session 20:
 * compared on those until it is recorded again). */
static bool row_hidden_id(const char *x, const char *y, const char *id, bool keyed, rowc *c)
{
    if (keyed && (!c->key || !c->key->id[0]))
        return false;
    size_t e = 0;
    while (y[e] && !is_space(y[e]))
        e++;
    for (size_t k = e; k > 0 && --c->budget > 0; k--) {
        char h[REPLAY_ID_HEX + 1];
        if (keyed)
            replay_id_hmac(c->key, y, k, h);
        else
            replay_id_hash(y, k, h);
        if (strncmp(h, id, strlen(id)) == 0 && row_at(x, y + k, c))
            return true;
    }
    return false;
}

/* want (x) equal to got (y) once folded as fold_eq, digits compared like
 * any character (red team s14, R4-8: invoice 1001 is not invoice 7777),
 * except where want holds the marker REPLAY_ROW_NUMBER (there got has one
 * number, any) or REPLAY_TEXT_HIDDEN (there got has a word the recorder
 * hides as a secret: red team s17, R7-6) or REPLAY_TEXT_REST (words,
 * any: R8-4); a literal "{{" of recorded text
 * is written "{{{{" in want. Both end together; or, with prefix, got goes
 * on after want. */
static bool row_cmp(const char *x, const char *y, bool prefix, const replay_key *key)
{
    x = nz(x), y = nz(y);
    while (is_space(*x))
        x++;
    while (is_space(*y))
        y++;
    rowc c = {prefix, ROW_BUDGET, key};
    return row_at(x, y, &c);
}

static bool row_at(const char *x, const char *y, rowc *c)
{
    static const char mark[] = REPLAY_ROW_NUMBER;
    char id[REPLAY_ID_HEX + 1];
    bool keyed = false;
    for (;;) {
        if (--c->budget < 0)
            return false;
        size_t hl = replay_hidden_at(x, id, &keyed);
        if (hl && id[0])
            return row_hidden_id(x + hl, y, id, keyed, c);
        if (hl)
            return row_hidden(x + hl, y, c);
        if (strncmp(x, REPLAY_TEXT_REST, sizeof REPLAY_TEXT_REST - 1) == 0)
            return row_rest(x + sizeof REPLAY_TEXT_REST - 1, y, c);
        if (strncmp(x, mark, sizeof mark - 1) == 0) {
            size_t n = number_len(y);
            if (!n)
                return false;
            x += sizeof mark - 1;
            y += n;
            continue;
        }
        if (strncmp(x, "{{{{", 4) == 0) {
            if (strncmp(y, "{{", 2) != 0)
                return false;
            x += 4;
            y += 2;
            continue;
        }
        char a = fold_next(&x), b = fold_next(&y);
        if (!a)
            return c->prefix ? b != 0 : !b;
        if (a != b)
            return false;
    }
}

bool replay_row_cut(const char *got, char *out, size_t cap)
{
    size_t units = 0, k = 0;
    const unsigned char *p = (const unsigned char *)nz(got);
    while (is_space((char)*p) || (p[0] == 0xc2 && p[1] == 0xa0))
        p += *p == 0xc2 ? 2 : 1;
    while (*p) {
        bool sp = is_space((char)*p) || (p[0] == 0xc2 && p[1] == 0xa0);
        if (sp) {
            while (is_space((char)*p) || (p[0] == 0xc2 && p[1] == 0xa0))
                p += *p == 0xc2 ? 2 : 1;
            if (!*p)
                break;
        }
        size_t len = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 1;
        size_t u = (sp ? 1 : 0) + (len == 4 ? 2 : 1);
        if (units + u > REPLAY_ROW_CUT || k + len + 2 > cap) {
            /* a word cut in two: none of it kept (part of a token is
             * no token to the recorder's rule, and it could be read) */
            while (!sp && k && out[k - 1] != ' ')
                k--;
            out[k] = 0;
            return true;
        }
        if (sp)
            out[k++] = ' ';
        for (size_t i = 0; i < len && p[i]; i++)
            out[k++] = (char)p[i];
        out[k] = 0;
        units += u;
        p += strnlen((const char *)p, len);
    }
    return false;
}

bool replay_row_eq(const char *want, const char *got, const replay_key *key)
{
    const char *w = nz(want);
    size_t wl = strlen(w), ml = sizeof REPLAY_ROW_CUT_MARK - 1;
    /* Cut by the recorder (its marker, which no page text can spell: a
     * page's "{{" is recorded "{{{{"): what was kept is the start of the
     * page's row, which goes on after it; else the whole row (red team
     * s15, R5-3: a recorded row that was not cut never matches a longer
     * one) */
    if (wl < ml || memcmp(w + wl - ml, REPLAY_ROW_CUT_MARK, ml) != 0)
        return row_cmp(w, got, false, key);
    char *kept = malloc(wl - ml + 1);
    if (!kept)
        return false;
    memcpy(kept, w, wl - ml);
    kept[wl - ml] = 0;
    bool eq = row_cmp(kept, got, true, key);
    free(kept);
    return eq;
}

/* A recorded text (a name, label, heading, placeholder: filled, "{{{{"
 * kept) equal to got: folded as fold_eq, or, when it holds a marker or a
 * literal "{{", as row_cmp reads it (a hidden word matches a word the
 * recorder would hide: red team s17, R7-6). exact: case and white space
 * compared too when it holds none (an attribute). */
static bool text_eq(const char *want, const char *got, bool exact, const replay_key *key)
{
    if (strstr(nz(want), "{{"))
        return row_cmp(want, got, false, key);
    return exact ? strcmp(nz(want), nz(got)) == 0 : fold_eq(want, got);
}

/* Does the recorded row want match e's? Either the snapshot's row context
 * (a recording from snap_elements keeps it) or the text of the row the
 * element is in (the gate's row: its innerText), digits compared except
 * at a "{{#}}" marker. A list item holding nothing but the element (a
 * link in an <li>) has no line of its own in a snapshot, so no row text:
 * its text is the element's name. */
static bool row_ok(const char *want, const snap_elem *e, const replay_key *key)
{
    const char *text = *nz(e->rowtext) ? e->rowtext : e->name;
    return replay_row_eq(want, e->row, key) || (*nz(text) && replay_row_eq(want, text, key));
}

/* Does one of x, y (folded by case) contain the other's first word? A
 * loose likeness, only to rank the closest candidates. */
static bool looks_like(const char *x, const char *y)
{
    x = nz(x), y = nz(y);
    while (*y == ' ')
        y++;
    size_t n = strcspn(y, " ");
    if (n < 3)
        return false;
    for (const char *p = x; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && ((p[i] | 32) == (y[i] | 32)))
            i++;
        if (i == n)
            return true;
    }
    return false;
}

static const char *target_frame(const replay_target *t)
{
    return t->frames.n ? nz(t->frames.v[t->frames.n - 1]) : "";
}

static void why_put(char *why, size_t cap, const char *what, const char *got, const char *want)
{
    snprintf(why, cap, "%s \"%.*s\", not \"%.*s\"", what, WHY_CUT, nz(got), WHY_CUT, nz(want));
}

/* The first check e fails against t, written into why; true when it
 * passes them all. */
static bool check(const replay_target *t, const replay_key *key, const snap_elem *e, char *why,
                  size_t cap)
{
    why[0] = 0;
    const char *fr = target_frame(t);
    if (strcmp(fr, nz(e->frame)) != 0) {
        if (!*fr)
            snprintf(why, cap, "in a frame of %.*s, not the top document", WHY_CUT, e->frame);
        else
            why_put(why, cap, "frame", *e->frame ? e->frame : "(top document)", fr);
        return false;
    }
    if (t->role && !fold_eq(t->role, e->role)) {
        why_put(why, cap, "role", e->role, t->role);
        return false;
    }
    if (t->name && !text_eq(t->name, e->name, false, key)) {
        why_put(why, cap, "name", e->name, t->name);
        return false;
    }
    if (t->row && *t->row && !row_ok(t->row, e, key)) {
        why_put(why, cap, "row", *e->row ? e->row : *e->rowtext ? e->rowtext : "(none)", t->row);
        return false;
    }
    const struct {
        const char *what, *want, *got;
    } at[] = {
        {"id", t->id, e->id}, {"name attribute", t->name_attr, e->aname},
        {"placeholder", t->placeholder, e->placeholder}, {"test id", t->testid, e->testid},
    };
    /* Fail closed: a recorded attribute the element's could not be read
     * for is a difference (B-1: a target of attributes alone). */
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        if (!at[i].want || !*at[i].want ||
            (e->attrs && (i == 2 ? text_eq(at[i].want, at[i].got, true, key)
                                 : strcmp(at[i].want, nz(at[i].got)) == 0)))
            continue;
        why_put(why, cap, at[i].what, !e->attrs ? "(not read)" : *nz(at[i].got) ? at[i].got
                                                                   : "(none)", at[i].want);
        return false;
    }
    if (t->label && *t->label && !text_eq(t->label, e->name, false, key) &&
        (!e->attrs || !text_eq(t->label, e->label, false, key))) {
        why_put(why, cap, "label", *nz(e->label) ? e->label : e->name, t->label);
        return false;
    }
    return true;
}

/* How much e shares with t, to rank the closest candidates. */
static int likeness(const replay_target *t, const replay_key *key, const snap_elem *e)
{
    int s = 0;
    if (t->role && fold_eq(t->role, e->role))
        s += 3;
    if (t->name && text_eq(t->name, e->name, false, key))
        s += 4;
    else if (t->name && (looks_like(e->name, t->name) || looks_like(t->name, e->name)))
        s += 2;
    if (t->row && *t->row && row_ok(t->row, e, key))
        s += 2;
    if (t->section && *t->section && text_eq(t->section, e->section, false, key))
        s += 1;
    const char *want[] = {t->id, t->name_attr, t->placeholder, t->testid};
    const char *got[] = {e->id, e->aname, e->placeholder, e->testid};
    for (size_t i = 0; i < 4; i++)
        if (want[i] && *want[i] && strcmp(want[i], nz(got[i])) == 0)
            s += 2;
    return s;
}

/* Keep the best REPLAY_CANDS_MAX by score (stable: document order on ties). */
static void cand_add(replay_match *m, int *score, size_t i, int sc, const char *why)
{
    size_t at = m->ncand;
    while (at > 0 && score[at - 1] < sc)
        at--;
    if (at >= REPLAY_CANDS_MAX)
        return;
    size_t last = m->ncand < REPLAY_CANDS_MAX ? m->ncand : REPLAY_CANDS_MAX - 1;
    for (size_t k = last; k > at; k--) {
        m->cand[k] = m->cand[k - 1];
        score[k] = score[k - 1];
    }
    m->cand[at].elem = i;
    snprintf(m->cand[at].why, sizeof m->cand[at].why, "%s", why);
    score[at] = sc;
    if (m->ncand < REPLAY_CANDS_MAX)
        m->ncand++;
}

/* Mark in pass[] the elements of s that pass every check of t, the heading
 * above breaking a tie (when several pass, those under the recorded
 * heading are kept if any are); the others become m's closest candidates
 * (m NULL: none kept, score unused). The number that pass. */
static size_t passing(const replay_target *t, const replay_key *key, const snap_elems *s,
                      bool *pass, replay_match *m, int *score)
{
    char why[sizeof m->cand[0].why];
    size_t np = 0;
    for (size_t i = 0; i < s->n; i++) {
        if ((pass[i] = check(t, key, &s->v[i], why, sizeof why))) {
            np++;
        } else if (m) {
            int sc = likeness(t, key, &s->v[i]);
            if (sc >= 3)
                cand_add(m, score, i, sc, why);
        }
    }
    if (np < 2 || !t->section || !*t->section)
        return np;
    size_t ns = 0;
    for (size_t i = 0; i < s->n; i++)
        ns += pass[i] && text_eq(t->section, s->v[i].section, false, key);
    for (size_t i = 0; ns && i < s->n; i++) {
        if (pass[i] && !text_eq(t->section, s->v[i].section, false, key)) {
            pass[i] = false;
            np--;
            why_put(why, sizeof why, "under heading", s->v[i].section, t->section);
            if (m)
                cand_add(m, score, i, 100, why);
        }
    }
    return np;
}

/* The k-th (1-based) element of s marked in pass; s->n when none. */
static size_t nth_pass(const snap_elems *s, const bool *pass, size_t k)
{
    for (size_t i = 0; i < s->n; i++)
        if (pass[i] && --k == 0)
            return i;
    return s->n;
}

/* Several passed: ambiguous, every look-alike a candidate (listed before
 * the rest), unless the recorded index among equals may choose: exactly
 * as many equals pass as were recorded. */
static void several(const replay_target *t, const snap_elems *s, const bool *pass, size_t np,
                    replay_match *m, int *score)
{
    size_t at = t->index && t->equals == np && t->index <= np ? nth_pass(s, pass, t->index)
                                                              : s->n;
    m->nlike = np;
    if (at < s->n) {
        m->verdict = REPLAY_FOUND;
        m->by_index = true;
        m->elem = at;
        snprintf(m->ref, sizeof m->ref, "%s", s->v[at].ref);
        return;
    }
    m->verdict = REPLAY_AMBIGUOUS;
    m->ncand = 0;
    char why[sizeof m->cand[0].why], was[120] = "";
    if (t->index && t->equals)
        snprintf(was, sizeof was, "; %u when recorded, so the index among equals (%u) does "
                 "not choose", t->equals, t->index);
    for (size_t i = 0; i < s->n; i++) {
        if (!pass[i])
            continue;
        snprintf(why, sizeof why, "look-alike: %zu elements have this role, name%s%s", np,
                 t->row && *t->row ? " and row" : " (no row was recorded)", was);
        cand_add(m, score, i, 1000, why);
    }
}

/* Match t among s (no I/O). 0, or REPLAY_ENOMEM. */
static int match_elems(const replay_target *t, const replay_key *key, const snap_elems *s,
                       replay_match *m)
{
    memset(m, 0, sizeof *m);
    bool *pass = calloc(s->n ? s->n : 1, sizeof *pass);
    if (!pass)
        return REPLAY_ENOMEM;
    int score[REPLAY_CANDS_MAX];
    size_t np = passing(t, key, s, pass, m, score);
    if (np == 1) {
        m->verdict = REPLAY_FOUND;
        m->elem = nth_pass(s, pass, 1);
        snprintf(m->ref, sizeof m->ref, "%s", s->v[m->elem].ref);
    } else if (np > 1) {
        several(t, s, pass, np, m, score);
    } else {
        m->verdict = REPLAY_MISSING;
    }
    free(pass);
    return 0;
}

void replay_equals(const replay_target *t, const replay_key *key, const snap_elems *s,
                   const char *ref, unsigned *index, unsigned *count)
{
    *index = *count = 0;
    bool *pass = ref ? calloc(s->n ? s->n : 1, sizeof *pass) : NULL;
    if (!pass)
        return;
    size_t np = passing(t, key, s, pass, NULL, NULL);
    unsigned k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (pass[i] && ++k && strcmp(s->v[i].ref, ref) == 0)
            *index = k;
    if (*index)
        *count = (unsigned)np;
    free(pass);
}

int replay_look(snap_agent *a, const char *ref, snap_elems *s)
{
    snap_result r = {0};
    int rc = snap_elements(a, s, &r);
    const snap_elem *me = NULL;
    for (size_t i = 0; !rc && ref && i < s->n; i++)
        if (strcmp(s->v[i].ref, ref) == 0)
            me = &s->v[i];
    bool *want = me ? calloc(s->n, sizeof *want) : NULL;
    for (size_t i = 0; want && i < s->n; i++)
        want[i] = fold_eq(me->role, s->v[i].role) || fold_eq(me->name, s->v[i].name);
    if (!rc)
        rc = !me ? SNAP_EINVAL : want ? snap_elements_attrs(a, s, want, &r) : SNAP_ENOMEM;
    free(want);
    snap_result_free(&r);
    return rc;
}

int replay_find(snap_agent *a, const replay_target *t, const replay_key *key, snap_elems *s,
                replay_match *m, snap_result *r)
{
    memset(m, 0, sizeof *m);
    int rc = snap_elements(a, s, r);
    if (rc)
        return rc;
    /* Attributes only where they can matter: the target recorded some, and
     * the element shares its role or its name. */
    bool any = (t->id && *t->id) || (t->name_attr && *t->name_attr) ||
               (t->label && *t->label) || (t->placeholder && *t->placeholder) ||
               (t->testid && *t->testid);
    bool *want = any ? calloc(s->n ? s->n : 1, sizeof *want) : NULL;
    if (any && !want)
        return SNAP_ENOMEM;
    /* A target of attributes alone (a key pressed on the focused field:
     * no role, no name) reads every element's. */
    bool all = !(t->role && *t->role) && !(t->name && *t->name);
    size_t nw = 0;
    for (size_t i = 0; want && i < s->n; i++)
        nw += want[i] = all || fold_eq(t->role, s->v[i].role) ||
                        text_eq(t->name, s->v[i].name, false, key);
    rc = nw ? snap_elements_attrs(a, s, want, r) : 0;
    free(want);
    if (rc)
        return rc;
    return match_elems(t, key, s, m) ? SNAP_ENOMEM : 0;
}

/* A member holding page text (a target's or an element's strings, the
 * why quoting them): escaped as a snapshot's structured strings are
 * (snap_json_page: no raw bidi or invisible character; red team s14,
 * R4-6). */
static void str_member(json_w *w, const char *key, const char *v)
{
    if (v && *v) {
        json_w_key(w, key);
        snap_json_page(w, v);
    }
}

static void target_json(json_w *w, const replay_target *t)
{
    json_w_obj_begin(w);
    str_member(w, "role", t->role);
    str_member(w, "name", t->name);
    str_member(w, "row", t->row);
    str_member(w, "section", t->section);
    if (t->index) {
        json_w_key(w, "index");
        json_w_uint(w, t->index);
    }
    if (t->equals) {
        json_w_key(w, "equals");
        json_w_uint(w, t->equals);
    }
    if (t->frames.n) {
        json_w_key(w, "frames");
        json_w_arr_begin(w);
        for (size_t i = 0; i < t->frames.n; i++)
            snap_json_page(w, t->frames.v[i]);
        json_w_arr_end(w);
    }
    str_member(w, "id", t->id);
    str_member(w, "name_attr", t->name_attr);
    str_member(w, "label", t->label);
    str_member(w, "placeholder", t->placeholder);
    str_member(w, "testid", t->testid);
    json_w_obj_end(w);
}

void replay_match_json(json_w *w, const replay_target *t, const snap_elems *s,
                       const replay_match *m, const snap_agent *a)
{
    static const char *verdict[] = {"found", "missing", "ambiguous"};
    json_w_obj_begin(w);
    json_w_key(w, "verdict");
    json_w_str(w, verdict[m->verdict]);
    json_w_key(w, "expected");
    target_json(w, t);
    if (m->verdict == REPLAY_FOUND) {
        json_w_key(w, "ref");
        json_w_str(w, m->ref);
    }
    if (m->by_index) {
        json_w_key(w, "by_index");
        json_w_bool(w, true);
    }
    json_w_key(w, "candidates");
    json_w_arr_begin(w);
    for (size_t i = 0; i < m->ncand; i++) {
        const snap_elem *e = &s->v[m->cand[i].elem];
        json_w_obj_begin(w);
        json_w_key(w, "ref");
        json_w_str(w, e->ref);
        /* its page text framed, as outputs are (red team s14, R4-6) */
        const char *kv[] = {"role", e->role, "name", e->name, "row", e->row,
                            "section", e->section, "frame", e->frame, "why", m->cand[i].why};
        json_w_key(w, "page");
        snap_json_page_framed(w, a, kv, sizeof kv / sizeof kv[0]);
        json_w_obj_end(w);
    }
    json_w_arr_end(w);
    json_w_obj_end(w);
}
