/*
 * grant.c — the task grant: the JSON file format (strict), validation and
 * normalisation of every entry, and packing into one allocation.
 *
 * Two paths lead to a packed grant, and both end in gate_grant_pack():
 *   gate_grant_parse: JSON -> a draft gate_grant whose strings are borrowed
 *                     from the parsed document (types, unknown fields,
 *                     duplicates, limits and egress names are checked here)
 *                     -> gate_grant_pack -> the document is freed;
 *   gate_new:         the embedder's gate_grant -> gate_grant_pack.
 * So an origin written "HTTPS://A.test:443" by an embedder is checked and
 * normalised exactly like one read from a file.
 *
 * Packed layout (one malloc, freed by gate_grant_free): the gate_grant, the
 * four string-pointer lists, the identities, the bound rules, then every
 * string. Normalisation lengthens an origin by at most 14 bytes (an IPv4
 * host written short: "http://1" is "http://0.0.0.1") and no other string,
 * so the sizes of the source strings plus ORIGIN_GROWTH per origin bound
 * the string area.
 */
#include "gate/gate_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const TOOL_NAMES[] = {
    "open", "snapshot", "text", "click", "hover", "type", "select", "press", "scroll", "back",
    "screenshot", "tabs", "dialog", "login", "upload", "eval", "takeover", "record",
    "replay", "a11y_scan", NULL,
};

const char *const *gate_tool_names(void) { return TOOL_NAMES; }

bool gate_tool_known(const char *tool)
{
    for (size_t i = 0; tool && TOOL_NAMES[i]; i++)
        if (strcmp(TOOL_NAMES[i], tool) == 0)
            return true;
    return false;
}

static const struct {
    const char *name;
    unsigned bit;
} EGRESS_NAMES[] = {
    {"approved_origin_fetch", GATE_EGRESS_FETCH},
    {"structured_send", GATE_EGRESS_SEND},
    {"file_transfer", GATE_EGRESS_FILE},
};
#define EGRESS_ALL (GATE_EGRESS_FETCH | GATE_EGRESS_SEND | GATE_EGRESS_FILE)

static int fail(gate_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        gate_text_clean(err->msg);
    }
    return GATE_EINVAL;
}

/* A value quoted into a message: at most 60 bytes, cleaned, "..." when cut. */
static const char *quoted(char *buf, size_t cap, const char *s)
{
    char t[64];
    gate_text_copy(t, sizeof t, s, 60);
    snprintf(buf, cap, "\"%s%s\"", t, s && strlen(s) > strlen(t) ? "..." : "");
    return buf;
}

/* ---- packing ---- */

typedef struct {
    char *p;                    /* next free byte of the string area */
    char *end;
} area;

static const char *put(area *a, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = a->p;
    memcpy(d, s, n);
    a->p += n;
    return d;
}

/* Commit a string a validator wrote at a->p. */
static const char *commit(area *a)
{
    char *d = a->p;
    a->p += strlen(d) + 1;
    return d;
}

static int check_str(const char *field, size_t idx, bool indexed, const char *s,
                     size_t *total, gate_err *err)
{
    char where[64];
    if (indexed)
        snprintf(where, sizeof where, "%s[%zu]", field, idx);
    else
        snprintf(where, sizeof where, "%s", field);
    if (!s)
        return fail(err, "grant: %s: missing (NULL)", where);
    size_t n = strlen(s);
    if (n > GATE_STR_MAX)
        return fail(err, "grant: %s: longer than %u bytes", where, GATE_STR_MAX);
    *total += n + 1;
    return 0;
}

static int check_list(const char *field, const char *const *l, size_t n, size_t *total,
                      gate_err *err)
{
    if (n > GATE_LIST_MAX)
        return fail(err, "grant: %s: more than %u entries", field, GATE_LIST_MAX);
    if (n && !l)
        return fail(err, "grant: %s: %zu entries but no list", field, n);
    for (size_t i = 0; i < n; i++)
        if (check_str(field, i, true, l[i], total, err))
            return GATE_EINVAL;
    return 0;
}

/* Pass 1: limits, NULLs, and the size of the packed grant. */
#define ORIGIN_GROWTH 16u    /* see "Packed layout" above */

static int pack_size(const gate_grant *s, size_t *size, gate_err *err)
{
    size_t str = 0;
    if ((s->task && check_str("task", 0, false, s->task, &str, err)) ||
        (s->principal && check_str("principal", 0, false, s->principal, &str, err)) ||
        (s->audit && check_str("audit", 0, false, s->audit, &str, err)) ||
        check_list("tools", s->tools, s->ntools, &str, err) ||
        check_list("origins", s->origins, s->norigins, &str, err) ||
        check_list("assets", s->assets, s->nassets, &str, err) ||
        check_list("recipients", s->recipients, s->nrecipients, &str, err) ||
        check_list("file_scopes", s->file_scopes, s->nfile_scopes, &str, err))
        return GATE_EINVAL;
    if (s->nidentities > GATE_LIST_MAX || (s->nidentities && !s->identities))
        return fail(err, "grant: identities: more than %u entries or no list", GATE_LIST_MAX);
    for (size_t i = 0; i < s->nidentities; i++)
        if (check_str("identities", i, true, s->identities[i].service, &str, err) ||
            check_str("identities", i, true, s->identities[i].identity, &str, err))
            return GATE_EINVAL;
    if (s->nbound > GATE_LIST_MAX || (s->nbound && !s->bound))
        return fail(err, "grant: bound: more than %u entries or no list", GATE_LIST_MAX);
    for (size_t i = 0; i < s->nbound; i++) {
        const gate_bound *b = &s->bound[i];
        if (check_str("bound", i, true, b->origin, &str, err) ||
            check_str("bound", i, true, b->tool, &str, err) ||
            check_str("bound", i, true, b->name, &str, err) ||
            (b->row && check_str("bound", i, true, b->row, &str, err)))
            return GATE_EINVAL;
    }
    if (s->egress & ~(unsigned)EGRESS_ALL)
        return fail(err, "grant: egress: unknown bits 0x%x", s->egress & ~(unsigned)EGRESS_ALL);
    if (s->egress_field < GATE_EGRESS_FIELD_NONE || s->egress_field > GATE_EGRESS_FIELD_CLASSES)
        return fail(err, "grant: egress_field: %d is not a GATE_EGRESS_FIELD_*", s->egress_field);
    if (s->expires < 0)
        return fail(err, "grant: expires: negative");
    size_t ptrs = s->ntools + s->norigins + s->nrecipients + s->nfile_scopes + s->nassets;
    str += (s->norigins + s->nassets + s->nidentities + s->nbound) * ORIGIN_GROWTH;
    *size = sizeof(gate_grant) + ptrs * sizeof(char *) +
            s->nidentities * sizeof(gate_identity) + s->nbound * sizeof(gate_bound) + str;
    return 0;
}

static int pack_tools(const gate_grant *s, gate_grant *d, const char **l, area *a,
                      gate_err *err)
{
    char q[80];
    for (size_t i = 0; i < s->ntools; i++) {
        if (!gate_tool_known(s->tools[i]))
            return fail(err, "grant: tools[%zu]: %s is not a tool (open, snapshot, text, "
                        "click, type, select, press, scroll, back, screenshot, tabs, dialog, "
                        "login, upload, eval, takeover, record, replay, a11y_scan)", i,
                        quoted(q, sizeof q, s->tools[i]));
        l[i] = put(a, s->tools[i]);
    }
    d->tools = s->ntools ? l : NULL;
    d->ntools = s->ntools;
    return 0;
}

static int pack_origins(const gate_grant *s, gate_grant *d, const char **l, area *a,
                        gate_err *err)
{
    char q[80];
    for (size_t i = 0; i < s->norigins; i++) {
        const char *why;
        if (gate_origin_entry(s->origins[i], a->p, (size_t)(a->end - a->p), &why))
            return fail(err, "grant: origins[%zu]: %s is not an origin (%s)", i,
                        quoted(q, sizeof q, s->origins[i]), why);
        l[i] = commit(a);
    }
    d->origins = s->norigins ? l : NULL;
    d->norigins = s->norigins;
    return 0;
}

/* Asset origins: the syntax of origins. */
static int pack_assets(const gate_grant *s, gate_grant *d, const char **l, area *a,
                       gate_err *err)
{
    char q[80];
    for (size_t i = 0; i < s->nassets; i++) {
        const char *why;
        if (gate_origin_entry(s->assets[i], a->p, (size_t)(a->end - a->p), &why))
            return fail(err, "grant: assets[%zu]: %s is not an origin (%s)", i,
                        quoted(q, sizeof q, s->assets[i]), why);
        l[i] = commit(a);
    }
    d->assets = s->nassets ? l : NULL;
    d->nassets = s->nassets;
    return 0;
}

static int pack_recipients(const gate_grant *s, gate_grant *d, const char **l, area *a,
                           gate_err *err)
{
    char q[80];
    for (size_t i = 0; i < s->nrecipients; i++) {
        const char *why, *r = s->recipients[i];
        /* A payee (an account name, an IBAN): text without '@', which must
         * not hide one (a full-width or small '@') nor invisible or
         * control characters. */
        if (r && !strchr(r, '@')) {
            char e[64];
            size_t n = strlen(r);
            bool plain = n && n < (size_t)(a->end - a->p) &&
                         gate_text_escape(e, sizeof e, r, n, 0) == n &&
                         !strstr(r, "\xef\xbc\xa0") && !strstr(r, "\xef\xb9\xab") &&
                         strspn(r, " ") < n;
            if (!plain)
                return fail(err, "grant: recipients[%zu]: %s is not a recipient (an address "
                            "user@domain, *@domain, or a payee in plain text)", i,
                            quoted(q, sizeof q, r));
            memcpy(a->p, r, n + 1);
            l[i] = commit(a);
            continue;
        }
        if (gate_recipient_norm(r, true, a->p, (size_t)(a->end - a->p), &why))
            return fail(err, "grant: recipients[%zu]: %s is not a recipient (%s)", i,
                        quoted(q, sizeof q, s->recipients[i]), why);
        l[i] = commit(a);
    }
    d->recipients = s->nrecipients ? l : NULL;
    d->nrecipients = s->nrecipients;
    return 0;
}

static int pack_scopes(const gate_grant *s, gate_grant *d, const char **l, area *a,
                       gate_err *err)
{
    char q[80];
    for (size_t i = 0; i < s->nfile_scopes; i++) {
        const char *why;
        if (gate_path_norm(s->file_scopes[i], false, a->p, (size_t)(a->end - a->p), &why))
            return fail(err, "grant: file_scopes[%zu]: %s is not a file scope (%s)", i,
                        quoted(q, sizeof q, s->file_scopes[i]), why);
        l[i] = commit(a);
    }
    d->file_scopes = s->nfile_scopes ? l : NULL;
    d->nfile_scopes = s->nfile_scopes;
    return 0;
}

static int pack_identities(const gate_grant *s, gate_grant *d, gate_identity *ids, area *a,
                           gate_err *err)
{
    char q[80];
    for (size_t i = 0; i < s->nidentities; i++) {
        const char *why, *svc = s->identities[i].service;
        if (gate_origin_parse(svc, a->p, (size_t)(a->end - a->p), ORIGIN_STRICT, &why))
            return fail(err, "grant: identities: %s is not an origin (%s)",
                        quoted(q, sizeof q, svc), why);
        ids[i].service = commit(a);
        for (size_t j = 0; j < i; j++)
            if (strcmp(ids[j].service, ids[i].service) == 0)
                return fail(err, "grant: identities: %s names the service %s twice",
                            quoted(q, sizeof q, svc), ids[i].service);
        if (!s->identities[i].identity[0])
            return fail(err, "grant: identities[%s]: empty identity", quoted(q, sizeof q, svc));
        ids[i].identity = put(a, s->identities[i].identity);
    }
    d->identities = s->nidentities ? ids : NULL;
    d->nidentities = s->nidentities;
    return 0;
}

static int pack_bound(const gate_grant *s, gate_grant *d, gate_bound *bs, area *a,
                      gate_err *err)
{
    char q[80];
    for (size_t i = 0; i < s->nbound; i++) {
        const gate_bound *b = &s->bound[i];
        const char *why;
        if (gate_origin_parse(b->origin, a->p, (size_t)(a->end - a->p), ORIGIN_STRICT, &why))
            return fail(err, "grant: bound[%zu].origin: %s is not an origin (%s)", i,
                        quoted(q, sizeof q, b->origin), why);
        bs[i].origin = commit(a);
        if (!gate_tool_known(b->tool))
            return fail(err, "grant: bound[%zu].tool: %s is not a tool", i,
                        quoted(q, sizeof q, b->tool));
        if (!b->name[0])
            return fail(err, "grant: bound[%zu].name: empty", i);
        if (b->row && !b->row[0])
            return fail(err, "grant: bound[%zu].row: empty (leave it out for any row)", i);
        bs[i].tool = put(a, b->tool);
        bs[i].name = put(a, b->name);
        bs[i].row = put(a, b->row);
    }
    d->bound = s->nbound ? bs : NULL;
    d->nbound = s->nbound;
    return 0;
}

int gate_grant_pack(const gate_grant *s, gate_grant **out, gate_err *err)
{
    *out = NULL;
    size_t size = 0;
    if (pack_size(s, &size, err))
        return GATE_EINVAL;
    char *mem = malloc(size);
    if (!mem) {
        fail(err, "grant: out of memory");
        return GATE_ENOMEM;
    }
    gate_grant *d = (gate_grant *)(void *)mem;
    memset(d, 0, sizeof *d);
    const char **lists = (const char **)(void *)(mem + sizeof *d);
    gate_identity *ids = (gate_identity *)(void *)(lists + s->ntools + s->norigins +
                                                   s->nrecipients + s->nfile_scopes +
                                                   s->nassets);
    gate_bound *bs = (gate_bound *)(void *)(ids + s->nidentities);
    area a = {(char *)(bs + s->nbound), mem + size};
    d->task = put(&a, s->task);
    d->principal = put(&a, s->principal);
    d->audit = put(&a, s->audit);
    d->egress = s->egress;
    d->egress_field = s->egress_field;
    d->expires = s->expires;
    const char **l = lists;
    if (pack_tools(s, d, l, &a, err) ||
        pack_origins(s, d, l += s->ntools, &a, err) ||
        pack_recipients(s, d, l += s->norigins, &a, err) ||
        pack_scopes(s, d, l += s->nrecipients, &a, err) ||
        pack_assets(s, d, l += s->nfile_scopes, &a, err) ||
        pack_identities(s, d, ids, &a, err) || pack_bound(s, d, bs, &a, err)) {
        free(mem);
        return GATE_EINVAL;
    }
    *out = d;
    return 0;
}

void gate_grant_free(gate_grant *g) { free(g); }

/* ---- the JSON file ---- */

/* The draft: a gate_grant whose lists are malloc'd here and whose strings
 * are borrowed from the parsed document. */
typedef struct {
    gate_grant g;
    const char **tools, **origins, **recipients, **scopes, **assets;
    gate_identity *ids;
    gate_bound *bound;
    bool has_task, has_egress;
} draft;

static void draft_free(draft *d)
{
    free(d->tools);
    free(d->origins);
    free(d->recipients);
    free(d->scopes);
    free(d->assets);
    free(d->ids);
    free(d->bound);
}

/* A non-empty string without NUL bytes, within GATE_STR_MAX. */
static int json_text(const json_val *v, const char *where, const char **out, gate_err *err)
{
    size_t n;
    const char *s = json_str(v, &n);
    if (!s)
        return fail(err, "grant: %s: not a string", where);
    if (!n)
        return fail(err, "grant: %s: empty", where);
    if (strlen(s) != n)
        return fail(err, "grant: %s: contains a NUL character", where);
    if (n > GATE_STR_MAX)
        return fail(err, "grant: %s: longer than %u bytes", where, GATE_STR_MAX);
    *out = s;
    return 0;
}

static int json_strings(const json_val *v, const char *field, const char ***out, size_t *n,
                        gate_err *err)
{
    if (!json_is(v, JSON_ARRAY))
        return fail(err, "grant: %s: not an array", field);
    size_t len = json_len(v);
    if (len > GATE_LIST_MAX)
        return fail(err, "grant: %s: more than %u entries", field, GATE_LIST_MAX);
    if (!len)
        return 0;
    const char **l = malloc(len * sizeof *l);
    if (!l) {
        fail(err, "grant: out of memory");
        return GATE_ENOMEM;
    }
    *out = l;
    size_t i = 0;
    for (const json_val *e = json_first(v); e; e = json_next(e), i++) {
        char where[64];
        snprintf(where, sizeof where, "%s[%zu]", field, i);
        if (json_text(e, where, &l[i], err))
            return GATE_EINVAL;
    }
    *n = len;
    return 0;
}

/* "egress" or its synonym "egress_classes" (field: the name read). */
static int json_egress(const json_val *v, const char *field, unsigned *bits, gate_err *err)
{
    if (!json_is(v, JSON_ARRAY))
        return fail(err, "grant: %s: not an array", field);
    bool none = false;
    size_t i = 0, n = json_len(v);
    if (n > GATE_LIST_MAX)
        return fail(err, "grant: %s: more than %u entries", field, GATE_LIST_MAX);
    *bits = 0;
    for (const json_val *e = json_first(v); e; e = json_next(e), i++) {
        char where[48], q[80];
        const char *s;
        snprintf(where, sizeof where, "%s[%zu]", field, i);
        if (json_text(e, where, &s, err))
            return GATE_EINVAL;
        size_t k = 0;
        if (strcmp(s, "none") == 0) {
            none = true;
            continue;
        }
        while (k < 3 && strcmp(s, EGRESS_NAMES[k].name) != 0)
            k++;
        if (k == 3)
            return fail(err, "grant: %s: %s is not an egress class (none, "
                        "approved_origin_fetch, structured_send, file_transfer)", where,
                        quoted(q, sizeof q, s));
        *bits |= EGRESS_NAMES[k].bit;
    }
    if (none && *bits)
        return fail(err, "grant: %s: \"none\" together with other classes", field);
    return 0;
}

static int json_identities(const json_val *v, draft *d, gate_err *err)
{
    if (!json_is(v, JSON_OBJECT))
        return fail(err, "grant: identities: not an object");
    size_t n = json_len(v), i = 0;
    if (n > GATE_LIST_MAX)
        return fail(err, "grant: identities: more than %u entries", GATE_LIST_MAX);
    if (!n)
        return 0;
    if (!(d->ids = malloc(n * sizeof *d->ids))) {
        fail(err, "grant: out of memory");
        return GATE_ENOMEM;
    }
    for (const json_val *m = json_first(v); m; m = json_next(m), i++) {
        size_t kl;
        const char *k = json_key(m, &kl);
        char where[96], q[80];
        snprintf(where, sizeof where, "identities[%s]", quoted(q, sizeof q, k));
        if (kl != strlen(k) || kl > GATE_STR_MAX)
            return fail(err, "grant: %s: bad service key", where);
        d->ids[i].service = k;
        if (json_text(m, where, &d->ids[i].identity, err))
            return GATE_EINVAL;
    }
    d->g.identities = d->ids;
    d->g.nidentities = n;
    return 0;
}

static int json_bound_one(const json_val *o, size_t i, gate_bound *b, gate_err *err)
{
    char where[48];
    if (!json_is(o, JSON_OBJECT))
        return fail(err, "grant: bound[%zu]: not an object", i);
    memset(b, 0, sizeof *b);
    for (const json_val *m = json_first(o); m; m = json_next(m)) {
        const char *k = json_key(m, NULL), **dst;
        if (strcmp(k, "origin") == 0)
            dst = &b->origin;
        else if (strcmp(k, "tool") == 0)
            dst = &b->tool;
        else if (strcmp(k, "name") == 0)
            dst = &b->name;
        else if (strcmp(k, "row") == 0)
            dst = &b->row;
        else {
            char q[80];
            return fail(err, "grant: bound[%zu]: unknown field %s (origin, tool, name, row)", i,
                        quoted(q, sizeof q, k));
        }
        snprintf(where, sizeof where, "bound[%zu].%s", i, k);
        if (json_text(m, where, dst, err))
            return GATE_EINVAL;
    }
    const char *miss = !b->origin ? "origin" : !b->tool ? "tool" : !b->name ? "name" : NULL;
    if (miss)
        return fail(err, "grant: bound[%zu].%s: missing", i, miss);
    return 0;
}

static int json_bound(const json_val *v, draft *d, gate_err *err)
{
    if (!json_is(v, JSON_ARRAY))
        return fail(err, "grant: bound: not an array");
    size_t n = json_len(v), i = 0;
    if (n > GATE_LIST_MAX)
        return fail(err, "grant: bound: more than %u entries", GATE_LIST_MAX);
    if (!n)
        return 0;
    if (!(d->bound = malloc(n * sizeof *d->bound))) {
        fail(err, "grant: out of memory");
        return GATE_ENOMEM;
    }
    for (const json_val *e = json_first(v); e; e = json_next(e), i++)
        if (json_bound_one(e, i, &d->bound[i], err))
            return GATE_EINVAL;
    d->g.bound = d->bound;
    d->g.nbound = n;
    return 0;
}

static int json_expires(const json_val *v, int64_t *out, gate_err *err)
{
    const char *s = json_str(v, NULL);
    if (s) {
        char q[80];
        if (gate_time_parse(s, out))
            return fail(err, "grant: expires: %s is not an RFC 3339 date-time "
                        "(2026-12-01T00:00:00Z)", quoted(q, sizeof q, s));
        if (*out <= 0)
            return fail(err, "grant: expires: before 1970");
        return 0;
    }
    if (!json_int(v, out))
        return fail(err, "grant: expires: not a date-time string or an integer of unix "
                    "seconds");
    if (*out < 0)
        return fail(err, "grant: expires: negative");
    return 0;
}

static int json_member(const char *k, const json_val *v, draft *d, gate_err *err)
{
    gate_grant *g = &d->g;
    char q[80];
    if (strcmp(k, "task") == 0) {
        d->has_task = true;
        return json_text(v, "task", &g->task, err);
    }
    if (strcmp(k, "principal") == 0)
        return json_text(v, "principal", &g->principal, err);
    if (strcmp(k, "audit") == 0)
        return json_text(v, "audit", &g->audit, err);
    if (strcmp(k, "tools") == 0) {
        int rc = json_strings(v, "tools", &d->tools, &g->ntools, err);
        g->tools = d->tools;
        return rc;
    }
    if (strcmp(k, "origins") == 0) {
        int rc = json_strings(v, "origins", &d->origins, &g->norigins, err);
        g->origins = d->origins;
        return rc;
    }
    if (strcmp(k, "assets") == 0) {
        int rc = json_strings(v, "assets", &d->assets, &g->nassets, err);
        g->assets = d->assets;
        return rc;
    }
    if (strcmp(k, "recipients") == 0) {
        int rc = json_strings(v, "recipients", &d->recipients, &g->nrecipients, err);
        g->recipients = d->recipients;
        return rc;
    }
    if (strcmp(k, "file_scopes") == 0) {
        int rc = json_strings(v, "file_scopes", &d->scopes, &g->nfile_scopes, err);
        g->file_scopes = d->scopes;
        return rc;
    }
    if (strcmp(k, "egress") == 0 || strcmp(k, "egress_classes") == 0) {
        int which = k[6] ? GATE_EGRESS_FIELD_CLASSES : GATE_EGRESS_FIELD_EGRESS;
        if (g->egress_field && g->egress_field != which)
            return fail(err, "grant: both egress and egress_classes (the same field under "
                        "two names; keep one)");
        g->egress_field = which;
        return json_egress(v, k, &g->egress, err);
    }
    if (strcmp(k, "identities") == 0)
        return json_identities(v, d, err);
    if (strcmp(k, "bound") == 0)
        return json_bound(v, d, err);
    if (strcmp(k, "expires") == 0)
        return json_expires(v, &g->expires, err);
    return fail(err, "grant: unknown field %s (task, principal, tools, origins, assets, "
                "recipients, file_scopes, egress (or egress_classes), identities, bound, "
                "expires, audit)",
                quoted(q, sizeof q, k));
}

/* The key of a duplicate reported at its opening quote, for the message. */
static void dup_key(const char *json, size_t len, size_t off, char *out, size_t cap)
{
    size_t i = off + 1, o = 0;
    while (i < len && json[i] != '"' && o + 1 < cap && o < 60)
        out[o++] = json[i++];
    out[o] = 0;
    gate_text_clean(out);
}

int gate_grant_parse(const char *json, size_t len, gate_grant **out, gate_err *err)
{
    *out = NULL;
    if (len > GATE_GRANT_MAX)
        return fail(err, "grant: larger than %u bytes", GATE_GRANT_MAX);
    json_opts o = {GATE_GRANT_MAX, 16, JSON_NO_DUPLICATES};
    json_err je;
    json_doc *doc = json_parse(json, len, &o, &je);
    if (!doc) {
        if (je.code == JSON_ENOMEM) {
            fail(err, "grant: out of memory");
            return GATE_ENOMEM;
        }
        if (je.code == JSON_EDUPKEY) {
            char k[64];
            dup_key(json, len, je.offset, k, sizeof k);
            return fail(err, "grant: duplicate key \"%s\" at byte %zu", k, je.offset);
        }
        return fail(err, "grant: invalid JSON at byte %zu: %s", je.offset, je.msg);
    }
    const json_val *root = json_doc_root(doc);
    draft d;
    memset(&d, 0, sizeof d);
    int rc = 0;
    if (!json_is(root, JSON_OBJECT))
        rc = fail(err, "grant: not a JSON object");
    for (const json_val *m = json_first(root); !rc && m; m = json_next(m)) {
        size_t kl;
        const char *k = json_key(m, &kl);
        rc = kl == strlen(k) ? json_member(k, m, &d, err)
                             : fail(err, "grant: a key contains a NUL character");
    }
    if (!rc && !d.has_task)
        rc = fail(err, "grant: task: missing (name the task for the audit log)");
    if (!rc)
        rc = gate_grant_pack(&d.g, out, err);
    draft_free(&d);
    json_doc_free(doc);
    return rc;
}

int gate_grant_load(const char *path, gate_grant **out, gate_err *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, "grant: %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (off_t)GATE_GRANT_MAX) {
        close(fd);
        return fail(err, "grant: %s: larger than %u bytes", path, GATE_GRANT_MAX);
    }
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, n = 0;
    char *buf = malloc(cap);
    int rc = 0;
    for (;;) {
        if (!buf) {
            rc = GATE_ENOMEM;
            fail(err, "grant: out of memory");
            break;
        }
        if (n == cap) {
            if (cap > GATE_GRANT_MAX) {
                rc = fail(err, "grant: %s: larger than %u bytes", path, GATE_GRANT_MAX);
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = fail(err, "grant: %s: %s", path, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (!rc)
        rc = gate_grant_parse(buf, n, out, err);
    free(buf);
    return rc;
}
