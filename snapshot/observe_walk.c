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
    if (rl == 0 || rl > WALK_ROLE_MAX ||
        strspn(f[1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != rl)
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

/* Each element id at most once in a walk: a ref (the id) names one line. */
static int ids_once(const wrec *r, size_t n, char *err, size_t cap)
{
    int32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return SNAP_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].id)
            v[m++] = r[i].id;
    qsort(v, m, sizeof *v, cmp_id);
    size_t dup = 0;
    for (size_t i = 1; i < m && !dup; i++)
        dup = v[i] == v[i - 1] ? i : 0;
    free(v);
    return dup ? fail(err, cap, 0, "an element id twice") : 0;
}

/* The records, parsed: children found by depth, then each one kept. */
static int put_all(frame_st *F, const wrec *r, size_t n)
{
    int32_t *parent = malloc(n * sizeof *parent);
    size_t *nk = calloc(n + 1, sizeof *nk);
    int32_t *stack = malloc((WALK_MAX_DEPTH + 2) * sizeof *stack);
    int64_t *kid = malloc(n * sizeof *kid);
    int rc = parent && nk && stack && kid ? 0 : SNAP_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        stack[r[i].depth] = (int32_t)i;
        parent[i] = r[i].depth ? stack[r[i].depth - 1] : -1;
        if (parent[i] >= 0)
            nk[parent[i]]++;
    }
    /* nk[i] becomes the start of i's run in kid (exclusive prefix sums). */
    size_t sum = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        size_t c = nk[i];
        nk[i] = sum;
        sum += c;
    }
    size_t *fill = rc ? NULL : calloc(n + 1, sizeof *fill);
    if (!rc && !fill)
        rc = SNAP_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++)
        if (parent[i] >= 0)
            kid[nk[parent[i]] + fill[parent[i]]++] = (int64_t)i + 1;
    for (size_t i = 0; i < n && !rc; i++) {
        axrec a = {r[i].role, r[i].name, NULL, false, 0, kid + nk[i], fill[i], r[i].st,
                   r[i].level, -r[i].id};
        if (r[i].value && r[i].value[0] == '#') {
            a.has_num = true;
            a.num = strtod(r[i].value + 1, NULL);
        } else if (r[i].value) {
            a.value = r[i].value + 1;
        }
        rc = snap_obs_ax_put(F, (int64_t)i + 1, &a);
    }
    free(fill);
    free(parent);
    free(nk);
    free(stack);
    free(kid);
    return rc;
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

/* The unsure records of r[0..n) fixed from the AX tree (B: the build, to
 * ask the browser; NULL: none can be). *unsure when some could not be. */
static int fix_unsure(build *B, frame_st *F, wrec *r, size_t n, char ***own, size_t *nown,
                      bool *unsure)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += r[i].nu;
    if (!k)
        return 0;
    if (!B || k > SNAP_WALK_AX_MAX) {
        *unsure = true;
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
    if (snap_walk_ax_nodes(B->a, B->tab_id, F->f->id, ids, k, fix_one, &X) != 0)
        *unsure = true;
    return 0;
}

static int walk_read(build *B, frame_st *F, const char *s, size_t n, int64_t *mut, bool *unsure,
                     char *err, size_t cap)
{
    *unsure = false;
    *mut = -2;
    if (n > WALK_MAX_BYTES)
        return fail(err, cap, 0, "too big");
    if (memchr(s, 0, n))
        return fail(err, cap, 0, "a NUL byte");
    if (n < 3 || memcmp(s, "W1\t", 3) != 0)
        return fail(err, cap, 1, "not the walker's (no W1 header)");
    char *buf = malloc(n + 1);
    size_t cr = 0;
    for (size_t i = 0; i < n; i++)
        cr += s[i] == '\n';
    wrec *r = cr + 1 <= WALK_MAX_RECS ? calloc(cr + 1, sizeof *r) : NULL;
    if (!buf || !r) {
        free(buf);
        free(r);
        return cr + 1 > WALK_MAX_RECS ? fail(err, cap, 0, "too many records") : SNAP_ENOMEM;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = 0;
    char *h = buf + 3, *end = NULL;
    long long m = strtoll(h, &end, 10);
    int rc = 0;
    if (end == h || *end != '\t' || m < -1 || (end[1] && strcmp(end + 1, "u") != 0))
        rc = fail(err, cap, 1, "bad header");
    *unsure = !rc && end[1] == 'u';
    *mut = m;
    size_t nr = 0, ln = 1;
    for (char *l = nl ? nl + 1 : NULL; l && !rc; l = nl ? nl + 1 : NULL) {
        ln++;
        nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        rc = parse_rec(l, ln, nr ? r[nr - 1].depth : -1, &r[nr], err, cap);
        nr++;
    }
    if (!rc && nr == 0)
        rc = fail(err, cap, 2, "no root");
    if (!rc)
        rc = ids_once(r, nr, err, cap);
    char **own = NULL;
    size_t nown = 0;
    if (!rc && !*unsure)
        rc = fix_unsure(B, F, r, nr, &own, &nown, unsure);
    if (!rc)
        rc = put_all(F, r, nr);
    if (!rc)
        rc = snap_obs_ax_finish(F);
    for (size_t i = 0; i < nown; i++)
        free(own[i]);
    free(own);
    free(r);
    free(buf);
    return rc;
}

int snap_obs_walk_read(frame_st *F, const char *s, size_t n, int64_t *mut, bool *unsure,
                       char *err, size_t cap)
{
    return walk_read(NULL, F, s, n, mut, unsure, err, cap);
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

/* Run the walker in the isolated world of F's frame and read its output
 * into F: the mutation counter (B->mut_defer), its three definitions and
 * the walk, pipelined. 0: F holds the
 * records; 1: fall back to the AX tree (no world, a call or the parse
 * failed, or the walker was unsure); SNAP_ENOMEM. */
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
            int64_t mut;
            bool unsure;
            int r = walk_read(B, F, s, len, &mut, &unsure, F->err, sizeof F->err);
            ret = r == SNAP_ENOMEM ? SNAP_ENOMEM : r || unsure ? 1 : 0;
            if (ret == 0 && note_secrets(B, F) != 0)
                ret = 1;
            if (ret)
                snap_obs_ax_drop(F);
            a->walks += ret == 0;
            F->walked = ret == 0;
            if (ret && a->o.timing)
                fprintf(stderr, "timing: walker fallback: %s\n", r ? F->err : "unsure");
            F->err[0] = 0;
        }
        cdp_reply_free(&rep);
    }
    return ret;
}
