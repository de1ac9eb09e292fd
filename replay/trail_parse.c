/*
 * trail_parse.c — reading a trail (JSON Lines, docs/replay.md) from bytes.
 *
 * The input is untrusted (a person may edit a trail, a file may be torn or
 * planted): no I/O, every size and count bounded (REPLAY_MAX_*), each line
 * parsed strictly (JSON_NO_DUPLICATES, REPLAY_MAX_DEPTH, known fields only,
 * types checked, strings without NUL), and every error says which line and
 * why. A last line that has no newline and is not JSON is a torn write: it
 * is dropped with a warning, so a trail whose writer died mid-line still
 * reads (replay_trail_save never leaves one; a copy or an append might).
 */
#include "replay/replay_int.h"

#include "json/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line's parsing context. */
typedef struct {
    unsigned line;
    replay_err *err;
    int rc;                  /* the first error */
} pctx;

static bool bad(pctx *c, int code, const char *fmt, const char *a, const char *b)
{
    if (!c->rc)
        c->rc = replay_fail(c->err, code, c->line, fmt, a, b ? b : "");
    return false;
}

/* At most 64 bytes of the key k into kb, cut on a character boundary, so
 * an error message quoting it stays UTF-8 (fuzz_trail checks it). */
static void key_cut(char kb[65], const char *k)
{
    size_t n = strnlen(k, 64);
    while (n > 0 && k[n] && ((unsigned char)k[n] & 0xC0) == 0x80)
        n--;
    memcpy(kb, k, n);
    kb[n] = 0;
}

/* Every key of obj (named what) is one of the NULL-terminated keys. */
static bool known_keys(pctx *c, const json_val *obj, const char *what,
                       const char *const *keys)
{
    for (const json_val *m = json_first(obj); m; m = json_next(m)) {
        const char *k = json_key(m, NULL);
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k) != 0)
            i++;
        if (!keys[i]) {
            char kb[65];
            key_cut(kb, k);
            return bad(c, REPLAY_EPARSE, "%s: unknown field \"%s\"", what, kb);
        }
    }
    return true;
}

/* A string value within max bytes and without NUL into *out (new); a
 * missing or null member leaves *out NULL unless required. */
static bool get_str_max(pctx *c, const json_val *obj, const char *key, const char *what,
                        bool required, size_t max, char **out)
{
    const json_val *v = json_get(obj, key);
    *out = NULL;
    if (!v || json_is(v, JSON_NULL)) {
        if (required)
            return bad(c, REPLAY_EPARSE, "%s: missing \"%s\"", what, key);
        return true;
    }
    size_t len = 0;
    const char *s = json_str(v, &len);
    if (!s)
        return bad(c, REPLAY_EPARSE, "%s.%s: not a string", what, key);
    if (len > max)
        return bad(c, REPLAY_ELIMIT, "%s.%s: longer than the limit", what, key);
    if (memchr(s, '\0', len))
        return bad(c, REPLAY_EPARSE, "%s.%s: holds a NUL character", what, key);
    if (!(*out = base_strdup(s)))
        return bad(c, REPLAY_ENOMEM, "%s.%s: out of memory", what, key);
    return true;
}

static bool get_str(pctx *c, const json_val *obj, const char *key, const char *what,
                    bool required, char **out)
{
    return get_str_max(c, obj, key, what, required, REPLAY_MAX_STR, out);
}

static bool get_bool(pctx *c, const json_val *obj, const char *key, const char *what,
                     bool *out)
{
    const json_val *v = json_get(obj, key);
    *out = false;
    if (!v)
        return true;
    if (!json_is(v, JSON_TRUE) && !json_is(v, JSON_FALSE))
        return bad(c, REPLAY_EPARSE, "%s.%s: not true or false", what, key);
    *out = json_bool(v);
    return true;
}

/* A non-negative integer below max into *out; missing: dflt. */
static bool get_uint(pctx *c, const json_val *obj, const char *key, const char *what,
                     unsigned max, unsigned dflt, unsigned *out)
{
    const json_val *v = json_get(obj, key);
    int64_t i = 0;
    *out = dflt;
    if (!v)
        return true;
    if (!json_int(v, &i) || i < 0 || i > (int64_t)max)
        return bad(c, REPLAY_EPARSE, "%s.%s: not an integer in range", what, key);
    *out = (unsigned)i;
    return true;
}

static bool get_list(pctx *c, const json_val *obj, const char *key, const char *what,
                     replay_list *out)
{
    const json_val *v = json_get(obj, key);
    out->v = NULL;
    out->n = 0;
    if (!v)
        return true;
    if (!json_is(v, JSON_ARRAY))
        return bad(c, REPLAY_EPARSE, "%s.%s: not an array", what, key);
    size_t n = json_len(v);
    if (n > REPLAY_MAX_LIST)
        return bad(c, REPLAY_ELIMIT, "%s.%s: more entries than the limit", what, key);
    if (!n)
        return true;
    if (!(out->v = calloc(n, sizeof *out->v)))
        return bad(c, REPLAY_ENOMEM, "%s.%s: out of memory", what, key);
    for (const json_val *e = json_first(v); e; e = json_next(e)) {
        size_t len = 0;
        const char *s = json_str(e, &len);
        if (!s)
            return bad(c, REPLAY_EPARSE, "%s.%s: an entry is not a string", what, key);
        if (len > REPLAY_MAX_STR || memchr(s, '\0', len))
            return bad(c, REPLAY_EPARSE, "%s.%s: an entry is too long or holds NUL",
                       what, key);
        if (!(out->v[out->n] = base_strdup(s)))
            return bad(c, REPLAY_ENOMEM, "%s.%s: out of memory", what, key);
        out->n++;
    }
    return true;
}

/* An optional object member: NULL when missing; an error when not an
 * object. */
static const json_val *get_obj(pctx *c, const json_val *obj, const char *key,
                               const char *what, bool *ok)
{
    const json_val *v = json_get(obj, key);
    *ok = true;
    if (!v)
        return NULL;
    if (!json_is(v, JSON_OBJECT))
        *ok = bad(c, REPLAY_EPARSE, "%s.%s: not an object", what, key);
    return *ok ? v : NULL;
}

/* A "by" member: absent, or "agent" (the only author a trail names; the
 * host or a person writes none). */
static bool get_by(pctx *c, const json_val *obj, const char *what, bool *out)
{
    const json_val *v = json_get(obj, "by");
    *out = false;
    if (!v)
        return true;
    const char *s = json_str(v, NULL);
    if (!s || strcmp(s, "agent") != 0)
        return bad(c, REPLAY_EPARSE, "%s.by: not \"%s\"", what, "agent");
    *out = true;
    return true;
}

/* ---- the header ---- */

static bool parse_identities(pctx *c, const json_val *v, replay_header *h)
{
    if (!v)
        return true;
    if (!json_is(v, JSON_OBJECT))
        return bad(c, REPLAY_EPARSE, "%s: not an object", "needs.identities", NULL);
    size_t n = json_len(v);
    if (n > REPLAY_MAX_LIST)
        return bad(c, REPLAY_ELIMIT, "%s: more entries than the limit", "needs.identities",
                   NULL);
    if (!n)
        return true;
    if (!(h->identities = calloc(n, sizeof *h->identities)))
        return bad(c, REPLAY_ENOMEM, "%s: out of memory", "needs.identities", NULL);
    for (const json_val *m = json_first(v); m; m = json_next(m)) {
        size_t klen = 0;
        const char *k = json_key(m, &klen);
        replay_identity *d = &h->identities[h->nidentities];
        if (!klen || klen > REPLAY_MAX_STR || memchr(k, '\0', klen))
            return bad(c, REPLAY_EPARSE, "%s: an origin is empty or too long",
                       "needs.identities", NULL);
        if (!(d->origin = base_strdup(k)))
            return bad(c, REPLAY_ENOMEM, "%s: out of memory", "needs.identities", NULL);
        h->nidentities++;
        size_t len = 0;
        const char *s = json_str(m, &len);
        if (!s || !len || len > REPLAY_MAX_STR || memchr(s, '\0', len)) {
            char kb[65];
            key_cut(kb, k);
            return bad(c, REPLAY_EPARSE, "needs.identities.%s: not a label", kb, NULL);
        }
        if (!(d->label = base_strdup(s)))
            return bad(c, REPLAY_ENOMEM, "%s: out of memory", "needs.identities", NULL);
    }
    return true;
}

static bool parse_bounds(pctx *c, const json_val *v, replay_header *h)
{
    static const char *const keys[] = {"origin", "tool", "name", "row", NULL};
    if (!v)
        return true;
    if (!json_is(v, JSON_ARRAY))
        return bad(c, REPLAY_EPARSE, "%s: not an array", "needs.consequential", NULL);
    size_t n = json_len(v);
    if (n > REPLAY_MAX_LIST)
        return bad(c, REPLAY_ELIMIT, "%s: more entries than the limit",
                   "needs.consequential", NULL);
    if (!n)
        return true;
    if (!(h->consequential = calloc(n, sizeof *h->consequential)))
        return bad(c, REPLAY_ENOMEM, "%s: out of memory", "needs.consequential", NULL);
    for (const json_val *e = json_first(v); e; e = json_next(e)) {
        const char *what = "needs.consequential[]";
        if (!json_is(e, JSON_OBJECT))
            return bad(c, REPLAY_EPARSE, "%s: not an object", what, NULL);
        replay_bound *b = &h->consequential[h->nconsequential++];
        if (!known_keys(c, e, what, keys) ||
            !get_str(c, e, "origin", what, true, &b->origin) ||
            !get_str(c, e, "tool", what, true, &b->tool) ||
            !get_str(c, e, "name", what, true, &b->name) ||
            !get_str(c, e, "row", what, false, &b->row))
            return false;
    }
    return true;
}

static bool parse_header(pctx *c, const json_val *root, replay_header *h)
{
    static const char *const keys[] = {"cdpgate_trail", "created", "cdpgate", "task",
                                       "by", "agent_editable", "trail_key", "needs", NULL};
    static const char *const nkeys[] = {"origins", "identities", "tools", "egress",
                                        "consequential", NULL};
    const json_val *ver = json_get(root, "cdpgate_trail");
    int64_t v = 0;
    if (!json_is(root, JSON_OBJECT) || !ver)
        return bad(c, REPLAY_EPARSE, "%s: not a trail header (no \"cdpgate_trail\")",
                   "header", NULL);
    if (!json_int(ver, &v) || v != REPLAY_TRAIL_VERSION)
        return bad(c, REPLAY_EVERSION, "%s: format version is not %s (this cdpgate reads"
                   " version 1)", "header", "1");
    h->version = REPLAY_TRAIL_VERSION;
    bool ok = true;
    const json_val *needs;
    if (!known_keys(c, root, "header", keys) ||
        !get_str(c, root, "created", "header", true, &h->created) ||
        !get_str(c, root, "cdpgate", "header", true, &h->cdpgate) ||
        !get_str(c, root, "task", "header", false, &h->task) ||
        !get_by(c, root, "header", &h->by_agent) ||
        !get_bool(c, root, "agent_editable", "header", &h->agent_editable) ||
        !get_str_max(c, root, "trail_key", "header", false, REPLAY_KEY_ID_HEX, &h->trail_key))
        return false;
    if (h->trail_key && (strlen(h->trail_key) != REPLAY_KEY_ID_HEX ||
                         strspn(h->trail_key, "0123456789abcdef") != REPLAY_KEY_ID_HEX))
        return bad(c, REPLAY_EPARSE, "%s.%s: not 16 hex digits", "header", "trail_key");
    needs = get_obj(c, root, "needs", "header", &ok);
    if (!ok)
        return false;
    if (!needs)
        return true;
    return known_keys(c, needs, "needs", nkeys) &&
           get_list(c, needs, "origins", "needs", &h->origins) &&
           parse_identities(c, json_get(needs, "identities"), h) &&
           get_list(c, needs, "tools", "needs", &h->tools) &&
           get_list(c, needs, "egress", "needs", &h->egress) &&
           parse_bounds(c, json_get(needs, "consequential"), h);
}

/* ---- a step ---- */

static bool parse_target(pctx *c, const json_val *v, replay_target *g)
{
    static const char *const keys[] = {"role", "name", "row", "section", "index", "equals",
                                       "frames", "id", "name_attr", "label", "placeholder",
                                       "testid", NULL};
    const char *w = "target";
    return known_keys(c, v, w, keys) &&
           get_str(c, v, "role", w, false, &g->role) &&
           get_str(c, v, "name", w, false, &g->name) &&
           get_str(c, v, "row", w, false, &g->row) &&
           get_str(c, v, "section", w, false, &g->section) &&
           get_uint(c, v, "index", w, 100000, 0, &g->index) &&
           get_uint(c, v, "equals", w, 100000, 0, &g->equals) &&
           get_list(c, v, "frames", w, &g->frames) &&
           get_str(c, v, "id", w, false, &g->id) &&
           get_str(c, v, "name_attr", w, false, &g->name_attr) &&
           get_str(c, v, "label", w, false, &g->label) &&
           get_str(c, v, "placeholder", w, false, &g->placeholder) &&
           get_str(c, v, "testid", w, false, &g->testid);
}

static bool parse_state(pctx *c, const json_val *v, replay_state *s)
{
    static const char *const keys[] = {"origin", "url", "title", "authenticated", "identity",
                                       NULL};
    const char *w = "state";
    if (!v)
        return true;
    return known_keys(c, v, w, keys) &&
           get_str(c, v, "origin", w, false, &s->origin) &&
           get_str(c, v, "url", w, false, &s->url) &&
           get_str(c, v, "title", w, false, &s->title) &&
           get_bool(c, v, "authenticated", w, &s->authenticated) &&
           get_str(c, v, "identity", w, false, &s->identity);
}

static bool parse_effect(pctx *c, const json_val *v, replay_effect *e)
{
    static const char *const keys[] = {"navigated", "new_tab", "dialog", "appeared", "value",
                                       NULL};
    const char *w = "effect";
    if (!v)
        return true;
    return known_keys(c, v, w, keys) &&
           get_str(c, v, "navigated", w, false, &e->navigated) &&
           get_str(c, v, "new_tab", w, false, &e->new_tab) &&
           get_str(c, v, "dialog", w, false, &e->dialog) &&
           get_list(c, v, "appeared", w, &e->appeared) &&
           get_str(c, v, "value", w, false, &e->value);
}

static bool parse_args(pctx *c, const json_val *root, replay_step *s)
{
    const json_val *a = json_get(root, "args");
    if (!a) {
        s->args = base_strdup("{}");
    } else {
        if (!json_is(a, JSON_OBJECT))
            return bad(c, REPLAY_EPARSE, "%s.%s: not an object", "step", "args");
        size_t len = 0;
        s->args = json_write(a, &len);
        if (s->args && len > REPLAY_MAX_ARGS)
            return bad(c, REPLAY_ELIMIT, "%s.%s: longer than the limit", "step", "args");
    }
    if (!s->args)
        return bad(c, REPLAY_ENOMEM, "%s.%s: out of memory", "step", "args");
    return true;
}

static bool parse_step(pctx *c, const json_val *root, replay_step *s)
{
    static const char *const keys[] = {"step", "rev", "op", "args", "class", "egress",
                                       "target", "state", "effect", "output", "secret",
                                       "note", "by", NULL};
    const char *w = "step";
    bool ok = true;
    if (!json_is(root, JSON_OBJECT))
        return bad(c, REPLAY_EPARSE, "%s: not a JSON object", w, NULL);
    if (!json_get(root, "step"))
        return bad(c, REPLAY_EPARSE, "%s: missing \"%s\"", w, "step");
    if (!known_keys(c, root, w, keys) ||
        !get_uint(c, root, "step", w, REPLAY_MAX_STEPS, 0, &s->n) ||
        !get_uint(c, root, "rev", w, 1000, 1, &s->rev) ||
        !get_str(c, root, "op", w, true, &s->op) ||
        !parse_args(c, root, s) ||
        !get_str(c, root, "class", w, false, &s->cls) ||
        !get_list(c, root, "egress", w, &s->egress) ||
        !get_str(c, root, "output", w, false, &s->output) ||
        !get_bool(c, root, "secret", w, &s->secret) ||
        !get_str(c, root, "note", w, false, &s->note) ||
        !get_by(c, root, w, &s->by_agent))
        return false;
    if (s->n < 1 || s->rev < 1)
        return bad(c, REPLAY_EPARSE, "%s: \"step\" and \"rev\" start at %s", w, "1");
    if (!*s->op)
        return bad(c, REPLAY_EPARSE, "%s: empty \"%s\"", w, "op");
    const json_val *tv = get_obj(c, root, "target", w, &ok);
    if (!ok)
        return false;
    s->has_target = tv != NULL;
    if (tv && !parse_target(c, tv, &s->target))
        return false;
    const json_val *sv = get_obj(c, root, "state", w, &ok);
    if (!ok || !parse_state(c, sv, &s->state))
        return false;
    const json_val *ev = get_obj(c, root, "effect", w, &ok);
    return ok && parse_effect(c, ev, &s->effect);
}

/* Step order: numbers never go down; one number's revisions go up. The
 * previous revision of the same number is marked superseded. */
static bool check_order(pctx *c, replay_trail *t, replay_step *s)
{
    if (!t->nsteps)
        return true;
    replay_step *p = &t->steps[t->nsteps - 1];
    if (s->n < p->n)
        return bad(c, REPLAY_EPARSE, "%s: step numbers go down (%s)", "step",
                   "a step must follow the steps before it");
    if (s->n == p->n) {
        if (s->rev <= p->rev)
            return bad(c, REPLAY_EPARSE, "%s: a revision of a step must be higher than the"
                       " one before it%s", "step", "");
        p->superseded = true;
    }
    return true;
}

/* One line (start..end, no newline) into the trail. */
static int parse_line(replay_trail *t, const char *start, size_t len, unsigned line,
                      bool first, bool *notjson, replay_err *err)
{
    pctx c = {line, err, 0};
    json_opts o = {REPLAY_MAX_LINE, REPLAY_MAX_DEPTH, JSON_NO_DUPLICATES};
    json_err je = {0};
    json_doc *d = json_parse(start, len, &o, &je);
    *notjson = !d && je.code != JSON_ENOMEM;
    if (!d)
        return replay_fail(err, je.code == JSON_ENOMEM ? REPLAY_ENOMEM : REPLAY_EPARSE,
                           line, "not JSON: %s at byte %zu", je.msg ? je.msg : "error",
                           je.offset);
    const json_val *root = json_doc_root(d);
    if (first) {
        parse_header(&c, root, &t->h);
    } else if (t->nsteps >= REPLAY_MAX_STEPS) {
        bad(&c, REPLAY_ELIMIT, "more than %s steps%s", "10000", "");
    } else {
        replay_step s;
        memset(&s, 0, sizeof s);
        if (parse_step(&c, root, &s) && check_order(&c, t, &s)) {
            replay_step *a = base_grow(t->steps, t->nsteps + 1, &t->cap, sizeof *a, 16);
            if (!a) {
                bad(&c, REPLAY_ENOMEM, "%s%s", "out of memory", "");
            } else {
                t->steps = a;
                a[t->nsteps++] = s;
                memset(&s, 0, sizeof s);
            }
        }
        replay_step_clear(&s);
    }
    json_doc_free(d);
    return c.rc;
}

static bool blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

replay_trail *replay_trail_parse(const char *buf, size_t len, replay_err *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (len > REPLAY_MAX_TRAIL) {
        replay_fail(err, REPLAY_ELIMIT, 0, "larger than %zu bytes", REPLAY_MAX_TRAIL);
        return NULL;
    }
    replay_trail *t = calloc(1, sizeof *t);
    if (!t) {
        replay_fail(err, REPLAY_ENOMEM, 0, "out of memory");
        return NULL;
    }
    bool have_header = false;
    unsigned line = 0;
    size_t pos = 0;
    int rc = 0;
    while (!rc && pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        size_t n = end - pos;
        line++;
        if (n > REPLAY_MAX_LINE) {
            rc = replay_fail(err, REPLAY_ELIMIT, line, "longer than %zu bytes",
                             REPLAY_MAX_LINE);
        } else if (!blank(buf + pos, n)) {
            bool notjson = false;
            rc = parse_line(t, buf + pos, n, line, !have_header, &notjson, err);
            if (rc && notjson && !nl && have_header) {
                /* A torn last line: the writer died before its newline. */
                snprintf(t->warning, sizeof t->warning, "trail line %u: a torn last line"
                         " (no newline, not JSON) was ignored", line);
                if (err)
                    memset(err, 0, sizeof *err);
                rc = 0;
            }
            have_header = true;
        }
        pos = end + 1;
    }
    if (!rc && !have_header)
        rc = replay_fail(err, REPLAY_EPARSE, 0, "empty (no header line)");
    if (!rc)
        rc = replay_trail_needs(t, err);
    if (rc) {
        replay_trail_free(t);
        return NULL;
    }
    return t;
}
