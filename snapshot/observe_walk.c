/*
 * observe_walk.c — the in-page walker's view (issue 13, point 4: the default
 * for a single-frame tab; snap_opts.ax_tree, CDPGATE_WALKER=0 in the CLI,
 * turns it off). The walker script
 * (page_walk.c snap_js_walk_expr) runs in cdpgate's isolated world of the main
 * frame of a single-frame tab; its output is read here into the same records
 * the AX sink fills (observe_ax.c), so observe_build.c and everything after
 * it build the view from them as from an AX tree.
 *
 * Its records have no backend node (the walker cannot give one): each
 * element's record carries the walker's id for it (stable for the life of
 * the document), kept negated where an AX record keeps its backend node, so
 * an actionable line gets a walker ref (snap_ref_for) that agent_refs.c
 * resolves at action time to the element's node, if it is still in the
 * document. No line joins the DOM snapshot (which is not fetched: the
 * walker withholds secret fields' values itself and marks them), and
 * nothing of it reaches the gate, which classifies an action from the AX
 * node of its target (read at resolve time for a walker ref).
 * The output is the page's influence: it is parsed as untrusted input
 * (bounded sizes and depths, every field checked, a clear error), and its
 * strings are printed through the same escaping as AX names.
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"
#include "snapshot/page_js.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WALK_MAX_BYTES (128u << 20)  /* the whole output */
#define WALK_MAX_RECS (8u << 20)     /* records */
#define WALK_MAX_DEPTH 1100          /* the script stops at 1000 */
#define WALK_ROLE_MAX 40

typedef struct {
    char *role, *name, *value;   /* into the copy; NULL when absent */
    int depth;
    unsigned st;
    int level;
    int32_t id;                  /* the element's walker id, 0 for none */
    bool nu;                     /* the walker was unsure of its name or role */
} wrec;

static int fail(char *err, size_t cap, size_t ln, const char *why)
{
    snprintf(err, cap, "walker output, line %zu: %s", ln, why);
    return SNAP_EBROWSER;
}

/* The state letters of the script (page_walk.c) as ST_* bits; -1 unknown. */
static int state_bit(char c)
{
    switch (c) {
    case 'c': return ST_CHECKED;
    case 'm': return ST_MIXED;
    case '0': return 0;                  /* a checkbox that is not checked */
    case 'p': return ST_PRESSED;
    case 'x': return ST_EXPANDED;
    case 'o': return ST_COLLAPSED;
    case 's': return ST_SELECTED;
    case 'd': return ST_DISABLED;
    case 'r': return ST_REQUIRED;
    case 'R': return ST_READONLY;
    case 'f': return ST_FOCUSABLE;
    case 'e': return ST_EDITABLE;
    case 'F': return ST_FOCUSED;
    case 'i': return ST_INVALID;
    case 'z': return ST_SECRET;
    case 'n': return ST_INLINE;
    default: return -1;
    }
}

/* One record line l (NUL-terminated, tabs still in) into w. */
static int parse_rec(char *l, size_t ln, int prev, wrec *w, char *err, size_t cap)
{
    char *f[7];
    size_t nf = 0;
    f[nf++] = l;
    for (char *p = l; *p; p++) {
        if (*p != '\t')
            continue;
        if (nf == 7)
            return fail(err, cap, ln, "too many fields");
        *p = 0;
        f[nf++] = p + 1;
    }
    if (nf < 6)
        return fail(err, cap, ln, "too few fields");
    /* The element's id (optional: none for text and the root): decimal,
     * 1..INT32_MAX, and one id names one record in a walk. */
    w->id = 0;
    if (nf == 7 && f[6][0]) {
        size_t il = strlen(f[6]);
        long long v = il <= 10 && strspn(f[6], "0123456789") == il ? strtoll(f[6], NULL, 10)
                                                                  : 0;
        if (v < 1 || v > INT32_MAX)
            return fail(err, cap, ln, "bad id");
        w->id = (int32_t)v;
    }
    size_t dl = strlen(f[0]);
    if (dl == 0 || dl > 4 || strspn(f[0], "0123456789") != dl)
        return fail(err, cap, ln, "bad depth");
    w->depth = (int)strtol(f[0], NULL, 10);
    if (w->depth > WALK_MAX_DEPTH || (prev < 0 ? w->depth != 0 : w->depth < 1 ||
                                      w->depth > prev + 1))
        return fail(err, cap, ln, "depth out of order");
    size_t rl = strlen(f[1]);
    /* InlineTextBox: a role the AX side never keeps (ax_add), so its
     * children would hang from nothing; the walker never prints it (an
     * explicit role is lower-cased). */
    if (rl == 0 || rl > WALK_ROLE_MAX ||
        strspn(f[1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != rl ||
        strcmp(f[1], "InlineTextBox") == 0)
        return fail(err, cap, ln, "bad role");
    if ((prev < 0) != (strcmp(f[1], "RootWebArea") == 0))
        return fail(err, cap, ln, "the root must come first, and once");
    w->role = f[1];
    w->st = 0;
    w->nu = false;
    for (const char *p = f[2]; *p; p++) {
        if (*p == 'u' && w->id) {
            w->nu = true;
            continue;
        }
        int b = state_bit(*p);
        if (b < 0 || p - f[2] > 16)
            return fail(err, cap, ln, "bad states");
        w->st |= (unsigned)b;
    }
    if (strlen(f[3]) != 1 || f[3][0] < '0' || f[3][0] > '9')
        return fail(err, cap, ln, "bad level");
    w->level = f[3][0] - '0';
    if (f[4][0] && f[4][0] != '=')
        return fail(err, cap, ln, "bad name");
    w->name = f[4][0] ? f[4] + 1 : NULL;
    if (f[5][0] && f[5][0] != '=' && f[5][0] != '#')
        return fail(err, cap, ln, "bad value");
    w->value = f[5][0] ? f[5] : NULL;
    if (w->value && w->value[0] == '#') {
        char *end = NULL;
        double d = strtod(w->value + 1, &end);
        if (!w->value[1] || *end || !isfinite(d))
            return fail(err, cap, ln, "bad number");
    }
    return 0;
}

static int cmp_id(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return a < b ? -1 : a > b;
}

/* Each element id at most once in a walk: a ref (the id) names one line.
 * v[0..m): the ids met (sorted here). */
static int ids_once(int32_t *v, size_t m, char *err, size_t cap)
{
    qsort(v, m, sizeof *v, cmp_id);
    size_t dup = 0;
    for (size_t i = 1; i < m && !dup; i++)
        dup = v[i] == v[i - 1] ? i : 0;
    return dup ? fail(err, cap, 0, "an element id twice") : 0;
}

/* The per-node fallback (design point 4): the records the walker was
 * unsure of (state u: an aria-labelledby id it could not find, a focusable
 * custom element without a role, a long name from attributes) take role,
 * name, states and level from their elements' AX nodes; the walker's value
 * and secret mark stay (the AX value of a field is never taken). */
typedef struct {
    wrec *r;
    size_t *at;                  /* fix i is record at[i] */
    char **own;                  /* the strings taken, freed after the put */
} fixes;

static bool role_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n && n <= WALK_ROLE_MAX &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") == n &&
           strcmp(s, "RootWebArea") != 0;
}

static int fix_one(void *ud, size_t i, const json_val *node)
{
    fixes *X = ud;
    wrec *w = &X->r[X->at[i]];
    const char *role = json_get_str(json_get(node, "role"), "value");
    const char *name = json_get_str(json_get(node, "name"), "value");
    if (!role_ok(role))
        return -1;
    X->own[2 * i] = strdup(role);
    X->own[2 * i + 1] = name && *name ? strdup(name) : NULL;
    if (!X->own[2 * i] || (name && *name && !X->own[2 * i + 1]))
        return -1;
    int level = 0;
    unsigned st = snap_obs_ax_states(json_get(node, "properties"), &level);
    w->role = X->own[2 * i];
    w->name = X->own[2 * i + 1];
    w->st = st | (w->st & ST_SECRET);
    w->level = level;
    return 0;
}

/* ---- the incremental reader ----
 *
 * The output comes in pieces (snap_obs_walk_fetch): no buffer holds all
 * of it. Each piece's whole lines are parsed (the line cut at its end is
 * carried to the next), their unsure records fixed from the AX tree (one
 * batch a piece, SNAP_WALK_AX_MAX in the whole walk), and put in line
 * order, their children still unknown; what the children are is kept a
 * few integers a record (parent line, node index, child count, id), and
 * the child lists are laid out at the end (place_kids) as ax_add would
 * have laid them out had the records come with them. Every check of the
 * whole-string reader is made: sizes, NUL, header, each record
 * (parse_rec), the depth order, one root, each id once. */
struct walk_rd {
    build *B;                    /* to ask the browser (NULL: none can be) */
    frame_st *F;
    char *carry;                 /* the line cut at the last piece's end */
    size_t ncarry, total, ln;    /* bytes carried, fed; lines read */
    bool head;                   /* the header line was read */
    int rc;                      /* the first failure, kept */
    int64_t mut;
    bool unsure;
    int prev;                    /* the last record's depth */
    size_t nr, cap, nid, nnu;    /* records; room; ids; unsure records */
    int32_t *parent, *node, *ids;
    uint32_t *cnt;               /* children of each record, then where
                                    its run starts in F->kid (place_kids) */
    int32_t stack[WALK_MAX_DEPTH + 2];   /* the open record at each depth */
};

walk_rd *snap_obs_walk_rd_new(build *B, frame_st *F)
{
    walk_rd *R = calloc(1, sizeof *R);
    if (R) {
        R->B = B;
        R->F = F;
        R->mut = -2;
        F->dense = F->nnodes == 0;   /* record j is id j + 1: no index */
    }
    return R;
}

void snap_obs_walk_rd_free(walk_rd *R)
{
    if (!R)
        return;
    free(R->carry);
    free(R->parent);
    free(R->node);
    free(R->ids);
    free(R->cnt);
    free(R);
}

static int rd_fail(walk_rd *R, size_t ln, const char *why, char *err, size_t cap)
{
    return R->rc = fail(err, cap, ln, why);
}

/* The header line "W1 TAB mutations TAB [u]" (NUL-terminated). */
static int rd_head(walk_rd *R, const char *l, char *err, size_t cap)
{
    R->head = true;
    R->ln = 1;
    if (strncmp(l, "W1\t", 3) != 0)
        return rd_fail(R, 1, "not the walker's (no W1 header)", err, cap);
    const char *h = l + 3;
    char *end = NULL;
    long long m = strtoll(h, &end, 10);
    R->mut = m;
    if (end == h || *end != '\t' || m < -1 || (end[1] && strcmp(end + 1, "u") != 0))
        return rd_fail(R, 1, "bad header", err, cap);
    R->unsure = end[1] == 'u';
    return 0;
}

/* Room for n more records in the per-record arrays. */
static int rd_grow(walk_rd *R, size_t n)
{
    if (R->nr + n <= R->cap)
        return 0;
    size_t c = R->cap ? R->cap : 256;
    while (c < R->nr + n)
        c *= 2;
    int32_t *p = realloc(R->parent, c * sizeof *p);
    if (p)
        R->parent = p;
    int32_t *d = p ? realloc(R->node, c * sizeof *d) : NULL;
    if (d)
        R->node = d;
    int32_t *i = d ? realloc(R->ids, c * sizeof *i) : NULL;
    if (i)
        R->ids = i;
    uint32_t *k = i ? realloc(R->cnt, c * sizeof *k) : NULL;
    if (!k)
        return SNAP_ENOMEM;
    R->cnt = k;
    R->cap = c;
    return 0;
}

/* The unsure records of r[0..n) fixed from the AX tree, when there is a
 * browser to ask and the walk has not met more than SNAP_WALK_AX_MAX of
 * them; else the walk is unsure. own: the strings taken (*nown). */
static int rd_fix(walk_rd *R, wrec *r, size_t n, char ***own, size_t *nown)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += r[i].nu;
    if (!k || R->unsure)
        return 0;
    R->nnu += k;
    if (!R->B || R->nnu > SNAP_WALK_AX_MAX) {
        R->unsure = true;
        return 0;
    }
    int ids[SNAP_WALK_AX_MAX];
    size_t at[SNAP_WALK_AX_MAX];
    *own = calloc(2 * k, sizeof **own);
    if (!*own)
        return SNAP_ENOMEM;
    *nown = 2 * k;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].nu) {
            at[k] = i;
            ids[k++] = r[i].id;
        }
    fixes X = {r, at, *own};
    if (snap_walk_ax_nodes(R->B->a, R->B->tab_id, R->F->f->id, ids, k, fix_one, &X) != 0)
        R->unsure = true;
    return 0;
}

/* The records r[0..n) put in F, their parents and ids noted. */
static int rd_put(walk_rd *R, const wrec *r, size_t n)
{
    frame_st *F = R->F;
    for (size_t i = 0; i < n; i++) {
        size_t j = R->nr++;
        R->stack[r[i].depth] = (int32_t)j;
        R->parent[j] = r[i].depth ? R->stack[r[i].depth - 1] : -1;
        R->cnt[j] = 0;
        if (R->parent[j] >= 0)
            R->cnt[R->parent[j]]++;
        if (r[i].id)
            R->ids[R->nid++] = r[i].id;
        axrec a = {r[i].role, r[i].name, NULL, false, 0, NULL, 0, r[i].st, r[i].level,
                   -r[i].id};
        if (r[i].value && r[i].value[0] == '#') {
            a.has_num = true;
            a.num = strtod(r[i].value + 1, NULL);
        } else if (r[i].value) {
            a.value = r[i].value + 1;
        }
        size_t before = F->nnodes;
        int rc = snap_obs_ax_put(F, (int64_t)j + 1, &a);
        if (rc)
            return rc;
        R->node[j] = F->nnodes > before ? (int32_t)before : -1;
    }
    return 0;
}

/* The record lines of s (n lines, '\n' between them, NUL after the last):
 * parsed, fixed, put. */
static int rd_lines(walk_rd *R, char *s, size_t n, char *err, size_t cap)
{
    if (R->nr + n > WALK_MAX_RECS)
        return rd_fail(R, 0, "too many records", err, cap);
    wrec *r = calloc(n ? n : 1, sizeof *r);
    int rc = r ? rd_grow(R, n) : SNAP_ENOMEM;
    size_t k = 0;
    for (char *l = s; l && !rc && k < n; k++) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        int prev = k ? r[k - 1].depth : R->nr ? R->prev : -1;
        rc = parse_rec(l, ++R->ln, prev, &r[k], err, cap);
        l = nl ? nl + 1 : NULL;
    }
    if (!rc && k)
        R->prev = r[k - 1].depth;
    char **own = NULL;
    size_t nown = 0;
    if (!rc)
        rc = rd_fix(R, r, n, &own, &nown);
    if (!rc)
        rc = rd_put(R, r, n);
    for (size_t i = 0; i < nown; i++)
        free(own[i]);
    free(own);
    free(r);
    return R->rc = rc;
}

/* Whole lines of b (len bytes, NUL after): the header first when it has
 * not been read. */
static int rd_text(walk_rd *R, char *b, size_t len, char *err, size_t cap)
{
    if (!R->head) {
        char *nl = memchr(b, '\n', len);
        if (nl)
            *nl = 0;
        if (rd_head(R, b, err, cap) || !nl)
            return R->rc;
        len -= (size_t)(nl + 1 - b);
        b = nl + 1;
    }
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += b[i] == '\n';
    return rd_lines(R, b, n, err, cap);
}

int snap_obs_walk_rd_feed(walk_rd *R, const char *s, size_t n, char *err, size_t cap)
{
    if (R->rc)
        return R->rc;
    if (n > WALK_MAX_BYTES - R->total)
        return rd_fail(R, 0, "too big", err, cap);
    R->total += n;
    if (memchr(s, 0, n))
        return rd_fail(R, 0, "a NUL byte", err, cap);
    size_t len = R->ncarry + n;
    char *b = malloc(len + 1);
    if (!b)
        return R->rc = SNAP_ENOMEM;
    if (R->ncarry)
        memcpy(b, R->carry, R->ncarry);
    memcpy(b + R->ncarry, s, n);
    b[len] = 0;
    free(R->carry);
    R->carry = NULL;
    R->ncarry = 0;
    if (!R->head && len >= 3 && memcmp(b, "W1\t", 3) != 0) {
        free(b);
        return rd_fail(R, 1, "not the walker's (no W1 header)", err, cap);
    }
    char *last = NULL;
    for (size_t i = len; i > 0 && !last; i--)
        last = b[i - 1] == '\n' ? b + i - 1 : NULL;
    if (!last) {                 /* no whole line yet: all of it is carried */
        R->carry = b;
        R->ncarry = len;
        return 0;
    }
    size_t rest = len - (size_t)(last + 1 - b);
    R->carry = malloc(rest + 1);
    if (!R->carry) {
        free(b);
        return R->rc = SNAP_ENOMEM;
    }
    memcpy(R->carry, last + 1, rest + 1);
    R->ncarry = rest;
    *last = 0;
    int rc = rd_text(R, b, (size_t)(last - b), err, cap);
    free(b);
    return rc;
}

/* The child lists, laid out as ax_add lays out those a record comes with:
 * in record order, each record's children in line order, none kept for
 * text (an AX StaticText's are InlineTextBoxes), AX_KIDS on a record with
 * any. */
static int place_kids(walk_rd *R)
{
    frame_st *F = R->F;
    size_t total = 0;
    for (size_t j = 0; j < R->nr; j++) {
        uint32_t c = R->cnt[j];
        R->cnt[j] = UINT32_MAX;
        if (R->node[j] < 0)
            continue;
        axn *x = snap_obs_ax_at(F, (size_t)R->node[j]);
        x->kid0 = (uint32_t)total;
        x->flags |= c ? AX_KIDS : 0;
        if (!(snap_obs_ax_cls(F, x) & RC_TEXT)) {
            R->cnt[j] = (uint32_t)total;
            total += c;
        }
    }
    if (total > UINT32_MAX)
        return SNAP_ENOMEM;
    size_t idw = F->wide ? sizeof(int64_t) : sizeof(int32_t);
    void *k = realloc(F->kid, (total ? total : 1) * idw);
    if (!k)
        return SNAP_ENOMEM;
    F->kid = k;
    F->kid_cap = total;
    F->nkid = total;
    for (size_t j = 0; j < R->nr; j++) {
        int32_t p = R->parent[j];
        if (p < 0 || R->cnt[p] == UINT32_MAX)
            continue;
        size_t at = R->cnt[p]++;
        if (F->dense)           /* the child's index itself (ax_finish) */
            ((int32_t *)F->kid)[at] = R->node[j];
        else if (F->wide)
            ((int64_t *)F->kid)[at] = (int64_t)j + 1;
        else
            ((int32_t *)F->kid)[at] = (int32_t)j + 1;
    }
    return 0;
}

int snap_obs_walk_rd_end(walk_rd *R, int64_t *mut, bool *unsure, char *err, size_t cap)
{
    int rc = R->rc;
    if (!rc && !R->head && R->total < 3)
        rc = rd_fail(R, 1, "not the walker's (no W1 header)", err, cap);
    if (!rc) {                   /* the last line, or the header alone */
        char empty[1] = "";
        rc = rd_text(R, R->carry ? R->carry : empty, R->ncarry, err, cap);
    }
    if (!rc && R->nr == 0)
        rc = rd_fail(R, 2, "no root", err, cap);
    if (!rc)
        rc = ids_once(R->ids, R->nid, err, cap);
    if (!rc)
        rc = place_kids(R);
    if (!rc)
        rc = snap_obs_ax_finish(R->F);
    *mut = R->mut;
    *unsure = R->unsure;
    return R->rc = rc;
}

int snap_obs_walk_read_split(frame_st *F, const char *s, size_t n, size_t piece, int64_t *mut,
                             bool *unsure, char *err, size_t cap)
{
    *mut = -2;
    *unsure = false;
    walk_rd *R = snap_obs_walk_rd_new(NULL, F);
    if (!R)
        return SNAP_ENOMEM;
    int rc = 0;
    for (size_t at = 0; at < n && !rc; at += piece ? piece : n) {
        size_t k = piece && n - at > piece ? piece : n - at;
        rc = snap_obs_walk_rd_feed(R, s + at, k, err, cap);
    }
    rc = snap_obs_walk_rd_end(R, mut, unsure, err, cap);
    snap_obs_walk_rd_free(R);
    return rc;
}

int snap_obs_walk_read(frame_st *F, const char *s, size_t n, int64_t *mut, bool *unsure,
                       char *err, size_t cap)
{
    return snap_obs_walk_read_split(F, s, n, 0, mut, unsure, err, cap);
}

/* The secret fields of a walk noted as "ever secret" under their backend
 * nodes (snap_walk_secrets), as the AX build notes them from the DOM
 * snapshot: what redacts their values from a form's URL and the audit
 * when the agent acts from this view. 0, or -1: the view must not be used
 * (more than SECRETS_MAX secret fields, or they could not be noted). */
#define SECRETS_MAX 64
static int note_secrets(build *B, frame_st *F)
{
    int ids[SECRETS_MAX];
    size_t n = 0;
    for (size_t i = 0; i < F->nnodes; i++) {
        const axn *x = snap_obs_ax_at(F, i);
        if (x->backend < 0 && (x->st & ST_SECRET)) {
            if (n == SECRETS_MAX)
                return -1;
            ids[n++] = -x->backend;
        }
    }
    return n ? snap_walk_secrets(B->a, B->tab_id, F->f->id, ids, n) : 0;
}

/* Whether the walk read into F printed a secret field (state z). */
static bool secret_noted(const frame_st *F)
{
    for (size_t i = 0; i < F->nnodes; i++)
        if (snap_obs_ax_at(F, i)->st & ST_SECRET)
            return true;
    return false;
}

/* The secret values the walk in F's frame noted (snap_js_walk_sv_expr),
 * remembered as keyed hashes for the document's later builds (red team
 * s13, W7: a field swapped for a new node holding the value is masked
 * then, by snap_obs_mask_secrets, on either build path). A secret call:
 * the reply is wiped; nothing when it fails (the walk masked this build
 * itself). */
static void note_values(build *B, frame_st *F, int64_t world, const char *expr)
{
    char *pj = snap_world_eval_params(world, expr);
    cdp_reply rep = {0};
    if (pj && snap_cdp_call_secret(B->a, F->f->session, "Runtime.evaluate", pj,
                                   snap_read_timeout(B->a), &rep, NULL) == 0) {
        const json_val *v = json_get(json_get(rep.result, "result"), "value");
        for (const json_val *x = json_first(v); x; x = json_next(x)) {
            size_t n = 0;
            const char *sv = json_str(x, &n);
            if (sv)
                snap_secval_note(B->a, B->tab_id, F->f->id, F->f->loader, sv, n);
        }
    }
    cdp_reply_free(&rep);
    free(pj);
}

void snap_obs_secret_values(build *B, frame_st *F)
{
    int64_t world = snap_frame_world(B->a, B->tab_id, F->f->id);
    if (world > 0)
        note_values(B, F, world, snap_js_secret_values_expr);
}

/* A walk's output piece from reply rep: its string (borrowed from rep),
 * or NULL when the call failed or threw. */
static const char *piece_of(snap_agent *a, uint64_t id, int tmo, cdp_reply *rep, size_t *len)
{
    *len = 0;
    return cdp_wait(a->c, id, tmo, rep, NULL) || json_get(rep->result, "exceptionDetails")
           ? NULL : json_str(json_get(json_get(rep->result, "result"), "value"), len);
}

#define WALK_MAX_PIECES 2048     /* WALK_MAX_BYTES in pieces of 85,000 units */
#define WALK_WINDOW 2            /* pieces asked for ahead of the reader */

/* The walk's output read into F: the first piece, s (n bytes: "pieces
 * left NL" and its text, borrowed from *first, which is freed once it is
 * read), then the others, asked for WALK_WINDOW ahead, each fed to the
 * reader and freed before the next is read. 0, 1 (the output was
 * refused, or a piece could not be had: *why says which), or SNAP_ENOMEM. */
static int walk_pieces(build *B, frame_st *F, int64_t world, cdp_reply *first, const char *s,
                       size_t n, bool *unsure, const char **why)
{
    snap_agent *a = B->a;
    const char *nl = memchr(s, '\n', n < 8 ? n : 8);
    long np = nl && nl > s && strspn(s, "0123456789") == (size_t)(nl - s)
              ? strtol(s, NULL, 10) : -1;
    *why = "unsure";
    if (np < 0 || np > WALK_MAX_PIECES) {
        *why = "bad piece count";
        return 1;
    }
    walk_rd *R = snap_obs_walk_rd_new(B, F);
    if (!R)
        return SNAP_ENOMEM;
    int rc = snap_obs_walk_rd_feed(R, nl + 1, n - (size_t)(nl + 1 - s), F->err, sizeof F->err);
    cdp_reply_free(first);
    uint64_t q[WALK_WINDOW] = {0};
    long sent = 0, got = 0;
    int tmo = snap_read_timeout(a);
    bool lost = false;
    while (got < np) {
        while (!rc && !lost && sent < np && sent - got < WALK_WINDOW) {
            uint64_t id = 0;
            lost = snap_world_eval(a, F->f->session, world, snap_js_walk_next_expr, &id) != 0;
            if (!lost)
                q[sent++ % WALK_WINDOW] = id;
        }
        if (got == sent)
            break;
        cdp_reply rep = {0};
        size_t len;
        const char *p = piece_of(a, q[got++ % WALK_WINDOW], tmo, &rep, &len);
        lost = lost || !p;
        if (!rc && !lost)
            rc = snap_obs_walk_rd_feed(R, p, len, F->err, sizeof F->err);
        cdp_reply_free(&rep);
    }
    int64_t mut;
    if (!rc && !lost)
        rc = snap_obs_walk_rd_end(R, &mut, unsure, F->err, sizeof F->err);
    snap_obs_walk_rd_free(R);
    if (lost)
        *why = "a piece of the output was lost";
    else if (rc)
        *why = F->err;
    return rc == SNAP_ENOMEM ? SNAP_ENOMEM : rc || lost ? 1 : 0;
}

/* Run the walker in the isolated world of F's frame and read its output
 * into F: the mutation counter (B->mut_defer), its definitions and the
 * walk, pipelined, then the walk's output piece by piece (walk_pieces).
 * 0: F holds the records; 1: fall back to the AX tree (no world, a call
 * or the parse failed, or the walker was unsure); SNAP_ENOMEM. */
int snap_obs_walk_fetch(build *B, frame_st *F)
{
    static const char *const PART[] = {snap_js_walk_def1, snap_js_walk_def2, snap_js_walk_def3,
                                       snap_js_walk_def4, snap_js_walk_expr};
    enum { NPART = sizeof PART / sizeof PART[0] };
    snap_agent *a = B->a;
    int64_t world = snap_frame_world(a, B->tab_id, F->f->id);
    if (world <= 0)
        return 1;
    uint64_t call[NPART] = {0}, mc = 0;
    /* The mutation counter first (installed now in a new document), in
     * the same batch: it runs before the walk, as a read before the build. */
    int rc = B->mut_defer ? snap_world_eval(a, F->f->session, world, snap_js_mut_expr, &mc) : 0;
    for (size_t k = 0; k < NPART && !rc; k++)
        rc = snap_world_eval(a, F->f->session, world, PART[k], &call[k]);
    int tmo = snap_read_timeout(a);
    if (mc) {
        cdp_reply rep = {0};
        const json_val *v = cdp_wait(a->c, mc, tmo, &rep, NULL) ||
                            json_get(rep.result, "exceptionDetails")
                            ? NULL : json_get(json_get(rep.result, "result"), "value");
        if (json_is(v, JSON_NUMBER)) {
            *B->mut_defer = (int64_t)json_num(v);
            B->mut_read = true;
        }
        cdp_reply_free(&rep);
    }
    int ret = rc == SNAP_ENOMEM ? SNAP_ENOMEM : 1;
    for (size_t k = 0; k < NPART; k++) {
        if (!call[k])
            continue;
        cdp_reply rep = {0};
        int wr = cdp_wait(a->c, call[k], tmo, &rep, NULL);
        bool ok = !wr && !json_get(rep.result, "exceptionDetails");
        rc = rc ? rc : ok ? 0 : 1;
        size_t len = 0;
        const char *s = k == NPART - 1 && !rc
            ? json_str(json_get(json_get(rep.result, "result"), "value"), &len) : NULL;
        if (s) {
            bool unsure = false;
            const char *why = "";
            ret = walk_pieces(B, F, world, &rep, s, len, &unsure, &why);
            if (ret != SNAP_ENOMEM && secret_noted(F))
                note_values(B, F, world, snap_js_walk_sv_expr);
            if (ret == 0 && unsure)
                ret = 1;
            if (ret == 0 && note_secrets(B, F) != 0)
                ret = 1;
            if (ret)
                snap_obs_ax_drop(F);
            a->walks += ret == 0;
            F->walked = ret == 0;
            if (ret == 1 && a->o.timing)
                fprintf(stderr, "timing: walker fallback: %s\n", why);
            F->err[0] = 0;
        }
        cdp_reply_free(&rep);
    }
    return ret;
}
