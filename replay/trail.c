/*
 * trail.c — the trail's types: parsing (untrusted, no I/O), serializing,
 * adding and healing steps, and the needs the steps imply.
 *
 * Format: docs/replay.md. Invariants of a parsed or built trail: the
 * header's version is REPLAY_TRAIL_VERSION; steps are in file order with
 * non-decreasing step numbers, the revisions of one number strictly
 * increasing, every revision but the last of a number marked superseded;
 * every string is at most REPLAY_MAX_STR bytes (args REPLAY_MAX_ARGS), valid
 * UTF-8 without NUL; every list at most REPLAY_MAX_LIST entries.
 */
#include "replay/replay_int.h"

#include "json/json.h"
#include "url/url.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *replay_strerror(int code)
{
    switch (code) {
    case REPLAY_OK: return "ok";
    case REPLAY_ENOMEM: return "out of memory";
    case REPLAY_EPARSE: return "not a valid trail";
    case REPLAY_ELIMIT: return "trail over a limit";
    case REPLAY_EIO: return "trail file I/O failed";
    case REPLAY_EVERSION: return "unknown trail format version";
    case REPLAY_EARG: return "invalid argument";
    default: return "unknown replay error";
    }
}

int replay_fail(replay_err *err, int code, unsigned line, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    err->line = line;
    int n = 0;
    if (line)
        n = snprintf(err->msg, sizeof err->msg, "trail line %u: ", line);
    else
        n = snprintf(err->msg, sizeof err->msg, "trail: ");
    if (n < 0 || (size_t)n >= sizeof err->msg)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- parameters in recorded strings ---- */

#define PH_NAME_MAX 64

static bool ph_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

int replay_ph_at(const char *p, size_t *nlen)
{
    if (p[0] != '{' || p[1] != '{')
        return REPLAY_PH_NONE;
    if (p[2] == '{' && p[3] == '{')
        return REPLAY_PH_ESC;
    size_t n = 0;
    while (n <= PH_NAME_MAX && ph_name_char(p[2 + n]))
        n++;
    if (n < 1 || n > PH_NAME_MAX || p[2 + n] != '}' || p[3 + n] != '}')
        return REPLAY_PH_NONE;
    *nlen = n;
    return REPLAY_PH_NAME;
}

void replay_lit_put(base_buf *b, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] == '{' && i + 1 < n && s[i + 1] == '{') {
            base_buf_puts(b, "{{{{");
            i += 2;
        } else {
            base_buf_putc(b, s[i++]);
        }
    }
}

char *replay_lit_dup(const char *s)
{
    if (!s)
        return NULL;
    base_buf b = {0};
    replay_lit_put(&b, s, strlen(s));
    return base_buf_take(&b, NULL);
}

/* ---- freeing ---- */

static void list_clear(replay_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static void target_clear(replay_target *g)
{
    free(g->role); free(g->name); free(g->row); free(g->section);
    list_clear(&g->frames);
    free(g->id); free(g->name_attr); free(g->label); free(g->placeholder); free(g->testid);
    memset(g, 0, sizeof *g);
}

void replay_step_clear(replay_step *s)
{
    if (!s)
        return;
    free(s->op); free(s->args); free(s->cls);
    list_clear(&s->egress);
    target_clear(&s->target);
    free(s->state.origin); free(s->state.url); free(s->state.title);
    free(s->state.identity);
    free(s->effect.navigated); free(s->effect.new_tab); free(s->effect.dialog);
    list_clear(&s->effect.appeared);
    free(s->effect.value);
    free(s->output); free(s->note);
    memset(s, 0, sizeof *s);
}

static void header_clear(replay_header *h)
{
    free(h->created); free(h->cdpgate); free(h->task); free(h->trail_key);
    list_clear(&h->origins);
    for (size_t i = 0; i < h->nidentities; i++) {
        free(h->identities[i].origin);
        free(h->identities[i].label);
    }
    free(h->identities);
    list_clear(&h->tools);
    list_clear(&h->egress);
    for (size_t i = 0; i < h->nconsequential; i++) {
        replay_bound *b = &h->consequential[i];
        free(b->origin); free(b->tool); free(b->name); free(b->row);
    }
    free(h->consequential);
    memset(h, 0, sizeof *h);
}

void replay_trail_free(replay_trail *t)
{
    if (!t)
        return;
    header_clear(&t->h);
    for (size_t i = 0; i < t->nsteps; i++)
        replay_step_clear(&t->steps[i]);
    free(t->steps);
    free(t);
}

replay_trail *replay_trail_new(const char *cdpgate_version, const char *task)
{
    replay_trail *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->h.version = REPLAY_TRAIL_VERSION;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(when, sizeof when, "1970-01-01T00:00:00Z");
    t->h.created = base_strdup(when);
    t->h.cdpgate = base_strdup(cdpgate_version ? cdpgate_version : "unknown");
    t->h.task = task ? base_strdup(task) : NULL;
    if (!t->h.created || !t->h.cdpgate || (task && !t->h.task)) {
        replay_trail_free(t);
        return NULL;
    }
    return t;
}

/* ---- copying ---- */

/* A copy of s, or NULL for NULL; *oom set when the copy fails. */
static char *dup_opt(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *c = base_strdup(s);
    if (!c)
        *oom = true;
    return c;
}

static void list_copy(replay_list *to, const replay_list *from, bool *oom)
{
    to->v = NULL;
    to->n = 0;
    if (!from->n)
        return;
    to->v = calloc(from->n, sizeof *to->v);
    if (!to->v) {
        *oom = true;
        return;
    }
    for (size_t i = 0; i < from->n; i++)
        to->v[i] = dup_opt(from->v[i], oom);
    to->n = from->n;
}

static bool step_copy(replay_step *to, const replay_step *s)
{
    bool oom = false;
    memset(to, 0, sizeof *to);
    to->op = dup_opt(s->op, &oom);
    to->args = dup_opt(s->args ? s->args : "{}", &oom);
    to->cls = dup_opt(s->cls, &oom);
    list_copy(&to->egress, &s->egress, &oom);
    to->has_target = s->has_target;
    const replay_target *g = &s->target;
    replay_target *d = &to->target;
    d->role = dup_opt(g->role, &oom);
    d->name = dup_opt(g->name, &oom);
    d->row = dup_opt(g->row, &oom);
    d->section = dup_opt(g->section, &oom);
    d->index = g->index;
    d->equals = g->equals;
    list_copy(&d->frames, &g->frames, &oom);
    d->id = dup_opt(g->id, &oom);
    d->name_attr = dup_opt(g->name_attr, &oom);
    d->label = dup_opt(g->label, &oom);
    d->placeholder = dup_opt(g->placeholder, &oom);
    d->testid = dup_opt(g->testid, &oom);
    to->state.origin = dup_opt(s->state.origin, &oom);
    to->state.url = dup_opt(s->state.url, &oom);
    to->state.title = dup_opt(s->state.title, &oom);
    to->state.authenticated = s->state.authenticated;
    to->state.identity = dup_opt(s->state.identity, &oom);
    to->effect.navigated = dup_opt(s->effect.navigated, &oom);
    to->effect.new_tab = dup_opt(s->effect.new_tab, &oom);
    to->effect.dialog = dup_opt(s->effect.dialog, &oom);
    list_copy(&to->effect.appeared, &s->effect.appeared, &oom);
    to->effect.value = dup_opt(s->effect.value, &oom);
    to->output = dup_opt(s->output, &oom);
    to->secret = s->secret;
    to->by_agent = s->by_agent;
    to->note = dup_opt(s->note, &oom);
    if (oom)
        replay_step_clear(to);
    return !oom;
}

/* Room for one more step at index at (shifting the rest up). */
static replay_step *step_slot(replay_trail *t, size_t at)
{
    replay_step *a = base_grow(t->steps, t->nsteps + 1, &t->cap, sizeof *a, 16);
    if (!a)
        return NULL;
    t->steps = a;
    memmove(&a[at + 1], &a[at], (t->nsteps - at) * sizeof *a);
    t->nsteps++;
    return &a[at];
}

static int check_step_in(const replay_trail *t, const replay_step *s, replay_err *err)
{
    if (!t || !s || !s->op || !*s->op)
        return replay_fail(err, REPLAY_EARG, 0, "a step needs an op");
    if (t->nsteps >= REPLAY_MAX_STEPS)
        return replay_fail(err, REPLAY_ELIMIT, 0, "more than %u steps", REPLAY_MAX_STEPS);
    return 0;
}

int replay_trail_add(replay_trail *t, const replay_step *s, replay_err *err)
{
    int rc = check_step_in(t, s, err);
    if (rc)
        return rc;
    unsigned n = t->nsteps ? t->steps[t->nsteps - 1].n + 1 : 1;
    replay_step copy;
    if (!step_copy(&copy, s))
        return replay_fail(err, REPLAY_ENOMEM, 0, "out of memory adding a step");
    replay_step *slot = step_slot(t, t->nsteps);
    if (!slot) {
        replay_step_clear(&copy);
        return replay_fail(err, REPLAY_ENOMEM, 0, "out of memory adding a step");
    }
    *slot = copy;
    slot->n = n;
    slot->rev = 1;
    slot->superseded = false;
    return 0;
}

int replay_trail_heal(replay_trail *t, unsigned n, const replay_step *s, replay_err *err)
{
    int rc = check_step_in(t, s, err);
    if (rc)
        return rc;
    size_t last = t->nsteps;
    for (size_t i = 0; i < t->nsteps; i++)
        if (t->steps[i].n == n)
            last = i;
    if (last == t->nsteps)
        return replay_fail(err, REPLAY_EARG, 0, "no step %u to heal", n);
    replay_step copy;
    if (!step_copy(&copy, s))
        return replay_fail(err, REPLAY_ENOMEM, 0, "out of memory healing step %u", n);
    unsigned rev = t->steps[last].rev + 1;
    replay_step *slot = step_slot(t, last + 1);
    if (!slot) {
        replay_step_clear(&copy);
        return replay_fail(err, REPLAY_ENOMEM, 0, "out of memory healing step %u", n);
    }
    t->steps[last].superseded = true;
    *slot = copy;
    slot->n = n;
    slot->rev = rev;
    slot->superseded = false;
    return 0;
}

/* ---- needs ---- */

static int list_add_unique(replay_list *l, const char *s)
{
    if (!s || !*s)
        return 0;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 0;
    if (l->n >= REPLAY_MAX_LIST)
        return REPLAY_ELIMIT;
    char **v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        return REPLAY_ENOMEM;
    l->v = v;
    if (!(v[l->n] = base_strdup(s)))
        return REPLAY_ENOMEM;
    l->n++;
    return 0;
}

static int add_identity(replay_header *h, const char *origin, const char *label)
{
    if (!origin || !label || !*origin || !*label)
        return 0;
    for (size_t i = 0; i < h->nidentities; i++)
        if (strcmp(h->identities[i].origin, origin) == 0)
            return 0;
    if (h->nidentities >= REPLAY_MAX_LIST)
        return REPLAY_ELIMIT;
    replay_identity *a = realloc(h->identities, (h->nidentities + 1) * sizeof *a);
    if (!a)
        return REPLAY_ENOMEM;
    h->identities = a;
    replay_identity *d = &a[h->nidentities];
    d->origin = base_strdup(origin);
    d->label = base_strdup(label);
    if (!d->origin || !d->label) {
        free(d->origin);
        free(d->label);
        return REPLAY_ENOMEM;
    }
    h->nidentities++;
    return 0;
}

static bool same_opt(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int add_bound(replay_header *h, const char *origin, const char *tool,
                     const char *name, const char *row)
{
    if (!origin || !tool || !name)
        return 0;
    for (size_t i = 0; i < h->nconsequential; i++) {
        const replay_bound *b = &h->consequential[i];
        if (strcmp(b->origin, origin) == 0 && strcmp(b->tool, tool) == 0 &&
            strcmp(b->name, name) == 0 && same_opt(b->row, row))
            return 0;
    }
    if (h->nconsequential >= REPLAY_MAX_LIST)
        return REPLAY_ELIMIT;
    replay_bound *a = realloc(h->consequential, (h->nconsequential + 1) * sizeof *a);
    if (!a)
        return REPLAY_ENOMEM;
    h->consequential = a;
    bool oom = false;
    replay_bound *d = &a[h->nconsequential];
    d->origin = dup_opt(origin, &oom);
    d->tool = dup_opt(tool, &oom);
    d->name = dup_opt(name, &oom);
    d->row = dup_opt(row, &oom);
    if (oom) {
        free(d->origin); free(d->tool); free(d->name); free(d->row);
        return REPLAY_ENOMEM;
    }
    h->nconsequential++;
    return 0;
}

/* The gate tool an op needs ("read" reads the page: the tool text). */
static const char *op_tool(const char *op)
{
    if (strcmp(op, "read") == 0)
        return "text";
    return op;
}

/* The origin of an opened URL into out; "" when it has none. */
static void url_origin_of(const char *url, char *out, size_t cap)
{
    const char *why = NULL;
    out[0] = '\0';
    if (url && url_origin(url, out, cap, &why) != 0)
        out[0] = '\0';
}

static int step_needs(replay_header *h, const replay_step *s)
{
    int rc = list_add_unique(&h->tools, op_tool(s->op));
    if (!rc)
        rc = list_add_unique(&h->origins, s->state.origin);
    for (size_t i = 0; !rc && i < s->egress.n; i++)
        rc = list_add_unique(&h->egress, s->egress.v[i]);
    if (!rc && s->state.identity)
        rc = add_identity(h, s->state.origin, s->state.identity);
    if (!rc && strcmp(s->op, "open") == 0) {
        json_doc *d = json_parse(s->args, strlen(s->args), NULL, NULL);
        char origin[512];
        url_origin_of(json_get_str(json_doc_root(d), "url"), origin, sizeof origin);
        json_doc_free(d);
        if (origin[0] && strcmp(origin, "null") != 0)
            rc = list_add_unique(&h->origins, origin);
    }
    if (!rc && s->cls && strcmp(s->cls, "consequential") == 0)
        rc = add_bound(h, s->state.origin, op_tool(s->op), s->target.name, s->target.row);
    return rc;
}

int replay_trail_needs(replay_trail *t, replay_err *err)
{
    for (size_t i = 0; i < t->nsteps; i++) {
        if (t->steps[i].superseded)
            continue;
        int rc = step_needs(&t->h, &t->steps[i]);
        if (rc)
            return replay_fail(err, rc, 0, "%s folding step %u's needs into the header",
                               replay_strerror(rc), t->steps[i].n);
    }
    return 0;
}

const char *replay_step_output(const replay_step *s, char *buf, size_t cap)
{
    const char *name = NULL;
    json_doc *d = s->op && strcmp(s->op, "read") == 0 && s->args
                      ? json_parse(s->args, strlen(s->args), NULL, NULL) : NULL;
    if (d)
        name = json_get_str(json_doc_root(d), "name");
    if (!name)
        name = s->output;
    if (name)
        snprintf(buf, cap, "%s", name);
    json_doc_free(d);
    return name ? buf : NULL;
}
