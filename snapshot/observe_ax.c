/*
 * observe_ax.c — accessibility parsing: Accessibility.getFullAXTree replies read as
 * a stream into records.
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- AX parsing ---- */

/* nodeIds are decimal integers in Chromium ("27013", "-1000000002"); any
 * other text is hashed (FNV-1a) into the upper half so the two never meet. */
static int64_t ax_id(const char *s)
{
    if (!s)
        return INT64_MIN;
    const char *p = s + (*s == '-');
    uint64_t v = 0;
    bool num = *p != 0;
    for (; *p && num; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX >> 5))
            num = false;
        else
            v = v * 10 + (uint64_t)(*p - '0');
    }
    if (num && v <= (uint64_t)INT32_MAX * 1024)
        return *s == '-' ? -(int64_t)v : (int64_t)v;
    uint64_t h = 1469598103934665603ULL;
    for (p = s; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return (int64_t)((h | (1ULL << 62)) & ~(1ULL << 63));
}

static size_t hid(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 17);
}

/* Element i of an id array (ids or kid) of F's width. */
static int64_t ax_idv(const frame_st *F, const void *v, size_t i)
{
    return F->wide ? ((const int64_t *)v)[i] : ((const int32_t *)v)[i];
}

static bool ax_narrow(int64_t id)
{
    return id >= INT32_MIN && id <= INT32_MAX;
}

/* An id that does not fit in 32 bits (never from Chromium, whose AX node
 * ids are 32-bit; a hashed non-numeric id would be one): the frame's id
 * arrays go to 64 bits, widened in place from the end. */
static int ax_widen(frame_st *F, size_t ncap_ids)
{
    if (F->wide)
        return 0;
    /* Both arrays grow first (their int32 contents intact), then widen:
     * a failed allocation leaves F as it was. */
    if (ncap_ids) {
        void *ni = realloc(F->ids, ncap_ids * sizeof(int64_t));
        if (!ni)
            return SNAP_ENOMEM;
        F->ids = ni;
    }
    if (F->kid_cap) {
        void *nk = realloc(F->kid, F->kid_cap * sizeof(int64_t));
        if (!nk)
            return SNAP_ENOMEM;
        F->kid = nk;
    }
    /* From the end: element i's 8 bytes cover 4-byte elements 2i and 2i+1,
     * read already. */
    char *v[2] = {ncap_ids ? F->ids : NULL, F->kid_cap ? F->kid : NULL};
    size_t n[2] = {F->nnodes, F->nkid};
    for (int a = 0; a < 2; a++) {
        for (size_t i = n[a]; v[a] && i-- > 0;) {
            int32_t x;
            memcpy(&x, v[a] + i * sizeof x, sizeof x);
            int64_t w = x;
            memcpy(v[a] + i * sizeof w, &w, sizeof w);
        }
    }
    F->wide = true;
    return 0;
}

static int ax_find(const frame_st *F, int64_t id)
{
    if (!F->hcap)
        return -1;
    size_t m = F->hcap - 1;
    for (size_t h = hid(id) & m;; h = (h + 1) & m) {
        int k = F->hash[h];
        if (!k)
            return -1;
        if (ax_idv(F, F->ids, (size_t)k - 1) == id)
            return k - 1;
    }
}

static const char *ax_strval(const json_val *o)
{
    const json_val *v = json_get(o, "value");
    if (json_is(v, JSON_STRING))
        return json_str(v, NULL);
    return NULL;
}
#define AXC ((size_t)1 << AXC_SHIFT)

axn *snap_obs_ax_at(const frame_st *F, size_t i)
{
    return &F->nodes[i >> AXC_SHIFT][i & (AXC - 1)];
}

/* ---- reading a complete record (after ax_finish) ---- */

const char *snap_obs_ax_role(const frame_st *F, const axn *a)
{
    return F->str.s + F->roles[a->role];
}

unsigned snap_obs_ax_cls(const frame_st *F, const axn *a)
{
    return F->rcls[a->role];
}

/* The name, value and number of a record (string offset off, AX_* flags)
 * in the string arena str: NULL (false) when absent; a name the view never
 * reads is "". */
const char *snap_obs_name_at(const char *str, uint32_t off, unsigned flags)
{
    if (!(flags & AX_NAMED))
        return NULL;
    return flags & AX_NAME ? str + off : "";
}

const char *snap_obs_value_at(const char *str, uint32_t off, unsigned flags)
{
    if (!(flags & AX_VALUE))
        return NULL;
    const char *p = str + off;
    return flags & AX_NAME ? p + strlen(p) + 1 : p;
}

bool snap_obs_num_at(const char *str, uint32_t off, unsigned flags, double *num)
{
    if (!(flags & AX_NUM))
        return false;
    const char *p = str + off;
    memcpy(num, flags & AX_NAME ? p + strlen(p) + 1 : p, sizeof *num);
    return true;
}

const char *snap_obs_ax_name(const frame_st *F, const axn *a)
{
    return snap_obs_name_at(F->str.s, a->str, a->flags);
}

const char *snap_obs_ax_value(const frame_st *F, const axn *a)
{
    return snap_obs_value_at(F->str.s, a->str, a->flags);
}

bool snap_obs_ax_num(const frame_st *F, const axn *a, double *num)
{
    return snap_obs_num_at(F->str.s, a->str, a->flags, num);
}

size_t snap_obs_ax_nkids(const frame_st *F, size_t i)
{
    size_t end = i + 1 < F->nnodes ? snap_obs_ax_at(F, i + 1)->kid0 : F->nkid;
    return end - snap_obs_ax_at(F, i)->kid0;
}

/* ---- adding records ---- */

/* The index of role in F's interned roles, adding it; -1 out of memory. */
static int role_intern(frame_st *F, const char *role)
{
    for (size_t i = 0; i < F->nroles; i++)
        if (strcmp(F->str.s + F->roles[i], role) == 0)
            return (int)i;
    if (F->nroles == 65535)
        return -1;
    if (F->nroles == F->caproles) {
        size_t c = F->caproles ? F->caproles * 2 : 32;
        uint32_t *nr = realloc(F->roles, c * sizeof *nr);
        if (!nr)
            return -1;
        F->roles = nr;
        uint16_t *nc = realloc(F->rcls, c * sizeof *nc);
        if (!nc)
            return -1;
        F->rcls = nc;
        F->caproles = c;
    }
    if (!F->str.len)
        base_buf_putc(&F->str, 0);        /* offset 0 means "none" */
    size_t off = F->str.len;
    base_buf_put(&F->str, role, strlen(role) + 1);
    if (F->str.oom || off > UINT32_MAX)
        return -1;
    F->roles[F->nroles] = (uint32_t)off;
    F->rcls[F->nroles] = (uint16_t)snap_obs_role_class(role);
    return (int)F->nroles++;
}

/* One node as read from the reply, before it is kept. */
typedef struct {
    const char *id, *role, *name, *value;   /* NULL when absent */
    bool ignored, has_num;
    double num;
    const int64_t *kids;
    size_t nk;
    int backend;
    unsigned st;
    int level;
} axpend;

/* Keep one node: what ax_parse and the stream (axs_commit) both do. A node
 * without nodeId, an InlineTextBox and a repeated nodeId (the first one
 * wins) are skipped. Strings the view never reads are not kept (see axn);
 * the view and collect_options are their only readers. 0 or SNAP_ENOMEM. */
static int ax_add(frame_st *F, const axpend *p)
{
    if (!p->id || (p->role && strcmp(p->role, "InlineTextBox") == 0))
        return 0;
    int64_t id = ax_id(p->id);
    if (!F->dense && ax_find(F, id) >= 0)
        return 0;
    if (!F->wide && !F->dense) {
        bool narrow = ax_narrow(id);
        for (size_t i = 0; i < p->nk && narrow; i++)
            narrow = ax_narrow(p->kids[i]);
        if (!narrow && ax_widen(F, F->hcap / 4 * 3))
            return SNAP_ENOMEM;
    }
    size_t idw = F->wide ? sizeof(int64_t) : sizeof(int32_t);
    /* Grow the records, and the index at three quarters load (linear
     * probing stays short there, and the index is smaller than at half load). */
    size_t k = F->nnodes;
    if (!F->dense && (k + 1) * 4 > F->hcap * 3) {
        size_t hc = F->hcap ? F->hcap * 2 : 1024;
        if (hc / 4 * 3 > INT32_MAX)
            return SNAP_ENOMEM;
        int *nh = calloc(hc, sizeof *nh);
        if (!nh)
            return SNAP_ENOMEM;
        void *ni = realloc(F->ids, hc / 4 * 3 * idw);
        if (ni)
            F->ids = ni;
        if (!ni) {
            free(nh);
            return SNAP_ENOMEM;
        }
        for (size_t i = 0; i < k; i++) {
            size_t h = hid(ax_idv(F, F->ids, i)) & (hc - 1);
            while (nh[h])
                h = (h + 1) & (hc - 1);
            nh[h] = (int)i + 1;
        }
        free(F->hash);
        F->hash = nh;
        F->hcap = hc;
    }
    int ri = role_intern(F, p->role ? p->role : "none");
    if (ri < 0)
        return SNAP_ENOMEM;
    unsigned rc = F->rcls[ri];
    size_t nk = rc & RC_TEXT ? 0 : p->nk;    /* StaticText: InlineTextBoxes */
    if (F->nkid + nk > F->kid_cap) {
        size_t n = F->kid_cap ? F->kid_cap : 1024;
        while (n < F->nkid + nk)
            n *= 2;
        void *nkp = realloc(F->kid, n * idw);
        if (!nkp)
            return SNAP_ENOMEM;
        F->kid = nkp;
        F->kid_cap = n;
    }
    if (F->nkid + nk > UINT32_MAX)
        return SNAP_ENOMEM;
    if (k >> AXC_SHIFT == F->nchunk) {
        axn **nc = realloc(F->nodes, (F->nchunk + 1) * sizeof *nc);
        if (!nc)
            return SNAP_ENOMEM;
        F->nodes = nc;
        nc[F->nchunk] = malloc(AXC * sizeof **nc);
        if (!nc[F->nchunk])
            return SNAP_ENOMEM;
        F->nchunk++;
    }
    axn *a = snap_obs_ax_at(F, k);
    memset(a, 0, sizeof *a);
    a->role = (uint16_t)ri;
    a->st = (uint16_t)p->st;
    a->level = (uint8_t)(p->level >= 1 && p->level <= 9 ? p->level : 0);
    a->backend = p->backend;
    a->flags = (uint8_t)((p->ignored ? AX_IGNORED : 0) | (p->nk ? AX_KIDS : 0) |
                         (p->name ? AX_NAMED : 0));
    /* Which strings the view reads: names of printed roles, of wrappers
     * that print when named, of generic elements (a clickable div is
     * shown with its name), of editable regions, frames, the root (the
     * title) and options (collect_options, even when ignored); values and
     * numbers of nodes that are not ignored or dropped. */
    bool keep_name, keep_value;
    if (p->ignored) {
        keep_name = rc & (RC_OPTION | RC_ROOT);
        keep_value = false;
    } else if (rc & RC_DROP) {
        keep_name = rc & RC_OPTION;
        keep_value = false;
    } else {
        keep_name = !(rc & RC_FLAT) || (rc & (RC_FLAT_NAMED | RC_FRAME | RC_ROOT |
                                               RC_GENERIC)) ||
                    ((rc & RC_EDITBASE) && (p->st & ST_EDITABLE));
        keep_value = true;
    }
    keep_name = keep_name && p->name;
    bool keep_str = keep_value && p->value;
    bool keep_num = keep_value && !keep_str && p->has_num;
    if (keep_name || keep_str || keep_num) {
        if (!F->str.len)
            base_buf_putc(&F->str, 0);
        size_t off = F->str.len;
        if (keep_name)
            base_buf_put(&F->str, p->name, strlen(p->name) + 1);
        if (keep_str)
            base_buf_put(&F->str, p->value, strlen(p->value) + 1);
        else if (keep_num)
            base_buf_put(&F->str, (const char *)&p->num, sizeof p->num);
        if (F->str.oom || off > UINT32_MAX)
            return SNAP_ENOMEM;
        a->str = (uint32_t)off;
        a->flags |= (uint8_t)((keep_name ? AX_NAME : 0) | (keep_str ? AX_VALUE : 0) |
                              (keep_num ? AX_NUM : 0));
    }
    a->kid0 = (uint32_t)F->nkid;
    for (size_t i = 0; i < nk; i++) {
        if (F->wide)
            ((int64_t *)F->kid)[F->nkid + i] = p->kids[i];
        else
            ((int32_t *)F->kid)[F->nkid + i] = (int32_t)p->kids[i];
    }
    F->nkid += nk;
    F->nnodes = k + 1;
    if (F->dense)
        return 0;
    if (F->wide)
        ((int64_t *)F->ids)[k] = id;
    else
        ((int32_t *)F->ids)[k] = (int32_t)id;
    size_t m = F->hcap - 1;
    size_t h = hid(id) & m;
    while (F->hash[h])
        h = (h + 1) & m;
    F->hash[h] = (int)k + 1;
    return 0;
}

/* One record from the walker (observe_walk.c): id > 0, children by id. */
int snap_obs_ax_put(frame_st *F, int64_t id, const axrec *r)
{
    char ids[24];
    snprintf(ids, sizeof ids, "%lld", (long long)id);
    axpend p = {ids, r->role, r->name, r->value, false, r->has_num, r->num, r->kids, r->nk,
                r->backend, r->st, r->level};
    return ax_add(F, &p);
}

/* One property (name k, value: on, its string s or NULL, its number num)
 * into state bits and level. */
static void ax_state1(const char *k, bool on, const char *s, double num, unsigned *stp,
                      int *level)
{
    unsigned st = *stp;
    {
        if (strcmp(k, "disabled") == 0 && on)
            st |= ST_DISABLED;
        else if (strcmp(k, "checked") == 0 || strcmp(k, "pressed") == 0) {
            unsigned bit = k[0] == 'c' ? ST_CHECKED : ST_PRESSED;
            if (on)
                st |= bit;
            else if (s && strcmp(s, "mixed") == 0)
                st |= ST_MIXED;
        } else if (strcmp(k, "expanded") == 0)
            st |= on ? ST_EXPANDED : ST_COLLAPSED;
        else if (strcmp(k, "selected") == 0 && on)
            st |= ST_SELECTED;
        else if (strcmp(k, "required") == 0 && on)
            st |= ST_REQUIRED;
        else if (strcmp(k, "focused") == 0 && on)
            st |= ST_FOCUSED;
        else if (strcmp(k, "readonly") == 0 && on)
            st |= ST_READONLY;
        else if (strcmp(k, "invalid") == 0 && s && strcmp(s, "false") != 0)
            st |= ST_INVALID;
        else if (strcmp(k, "focusable") == 0 && on)
            st |= ST_FOCUSABLE;
        else if (strcmp(k, "editable") == 0 && s)
            st |= ST_EDITABLE;
        else if (strcmp(k, "level") == 0)
            *level = num >= 1 && num < 10 ? (int)num : 0;
    }
    *stp = st;
}

/* The properties that matter, as state bits and level. */
unsigned snap_obs_ax_states(const json_val *props, int *level)
{
    unsigned st = 0;
    for (const json_val *p = json_first(props); p; p = json_next(p)) {
        const char *k = json_get_str(p, "name");
        const json_val *v = json_get(json_get(p, "value"), "value");
        if (!k)
            continue;
        const char *s = json_str(v, NULL);
        bool on = json_bool(v) || (s && strcmp(s, "true") == 0);
        ax_state1(k, on, s, json_num(v), &st, level);
    }
    return st;
}

/* Digest a parsed getFullAXTree result into F (the reference for the
 * stream, and what snap_ax_digest_check compares it with); ax_finish
 * next. */
static int ax_parse(frame_st *F, const json_val *result)
{
    int64_t *kids = NULL;
    size_t ck = 0;
    int rc = 0;
    for (const json_val *x = json_first(json_get(result, "nodes")); x && !rc;
         x = json_next(x)) {
        axpend p;
        memset(&p, 0, sizeof p);
        p.id = json_get_str(x, "nodeId");
        p.role = ax_strval(json_get(x, "role"));
        p.name = ax_strval(json_get(x, "name"));
        p.value = ax_strval(json_get(x, "value"));
        const json_val *vv = json_get(json_get(x, "value"), "value");
        if (json_is(vv, JSON_NUMBER)) {
            p.has_num = true;
            p.num = json_num(vv);
        }
        const json_val *cl = json_get(x, "childIds");
        size_t n = json_len(cl);
        if (n > ck) {
            int64_t *nk = realloc(kids, n * sizeof *nk);
            if (!nk) {
                rc = SNAP_ENOMEM;
                break;
            }
            kids = nk;
            ck = n;
        }
        for (const json_val *c = json_first(cl); c; c = json_next(c))
            kids[p.nk++] = ax_id(json_str(c, NULL));
        p.kids = kids;
        p.st = snap_obs_ax_states(json_get(x, "properties"), &p.level);
        p.backend = (int)json_get_int(x, "backendDOMNodeId", 0);
        p.ignored = json_bool(json_get(x, "ignored"));
        rc = ax_add(F, &p);
    }
    free(kids);
    return rc;
}

/* The records are complete: children by index; the nodeId index goes.
 * The indices are written over the child ids in place (index i's 4 bytes
 * lie at or below id i's 4 or 8, and every id is read before it is
 * overwritten), then the buffer is cut to their size: no second list at
 * any time. */
int snap_obs_ax_finish(frame_st *F)
{
    if (F->str.oom)
        return SNAP_ENOMEM;
    char *buf = (char *)F->kid;
    if (!buf) {
        buf = malloc(sizeof(int32_t));
        if (!buf)
            return SNAP_ENOMEM;
    }
    for (size_t i = 0; i < F->nkid && !F->dense; i++) {
        int64_t id = ax_idv(F, buf, i);
        int32_t k = ax_find(F, id);
        memcpy(buf + i * sizeof k, &k, sizeof k);
    }
    F->dense = false;           /* dense: the reader wrote the indices */
    free(F->hash);
    free(F->ids);
    F->hash = NULL;
    F->ids = NULL;
    F->kid = NULL;
    F->kid_cap = F->hcap = 0;
    F->wide = false;
    char *nb = realloc(buf, (F->nkid ? F->nkid : 1) * sizeof(int32_t));
    F->kix = (int32_t *)(void *)(nb ? nb : buf);
    return 0;
}

/* Free a frame's records (what a failed AX reply left half-digested,
 * or all of them once the view is built); F is then empty. */
void snap_obs_ax_drop(frame_st *F)
{
    for (size_t i = 0; i < F->nchunk; i++)
        free(F->nodes[i]);
    free(F->nodes);
    free(F->ids);
    free(F->kid);
    free(F->kix);
    free(F->hash);
    free(F->str.s);
    free(F->roles);
    free(F->rcls);
    F->nodes = NULL;
    F->ids = NULL;
    F->kid = NULL;
    F->kix = NULL;
    F->hash = NULL;
    F->roles = NULL;
    F->rcls = NULL;
    memset(&F->str, 0, sizeof F->str);
    F->nnodes = F->nkid = F->kid_cap = F->hcap = F->nroles = F->caproles = 0;
    F->nchunk = F->released = 0;
    F->preorder = false;
    F->wide = false;
    F->dense = false;
}

/* ---- AX replies as a stream ----
 *
 * The same digest as ax_parse, fed by the events of the reply while it
 * arrives (cdp_send_sink), so the reply is never held: a path machine over
 * result.nodes[i].{nodeId, ignored, role.value, name.value, value.value,
 * childIds[], backendDOMNodeId, properties[].{name, value.value}}; all else
 * is skipped. Each node is gathered in scratch buffers and committed at its
 * end with the rules of ax_parse (so member order inside a node does not
 * matter): the first of a repeated key wins, as json_get does; a field of
 * the wrong type counts as absent; strings stop at an embedded NUL. */

enum { AF_OTHER, AF_ID, AF_IGNORED, AF_ROLE, AF_NAME, AF_VALUE, AF_KIDS, AF_BACKEND,
       AF_PROPS };

void snap_obs_axs_free(axsink *S)
{
    free(S->id.s);
    free(S->role.s);
    free(S->name.s);
    free(S->value.s);
    free(S->kid.s);
    free(S->pname.s);
    free(S->kids);
}

static void sb_clear(base_buf *b)
{
    b->len = 0;
    if (b->s)
        b->s[0] = 0;
}

static void axs_push_kid(axsink *S, int64_t id)
{
    if (S->nk == S->ck) {
        size_t n = S->ck ? S->ck * 2 : 16;
        int64_t *nk = realloc(S->kids, n * sizeof *nk);
        if (!nk) {
            S->oom = true;
            return;
        }
        S->kids = nk;
        S->ck = n;
    }
    S->kids[S->nk++] = id;
}

/* Add one node: ax_add, as ax_parse does. */
static void axs_commit(axsink *S)
{
    if (S->id.oom || S->role.oom || S->name.oom || S->value.oom) {
        S->oom = true;
        return;
    }
    axpend p;
    memset(&p, 0, sizeof p);
    p.id = S->has_id ? S->id.s : NULL;
    p.role = S->has_role ? S->role.s : NULL;
    p.name = S->has_name ? S->name.s : NULL;
    p.value = S->has_value ? S->value.s : NULL;
    p.has_num = S->has_num;
    p.num = S->num;
    p.kids = S->kids;
    p.nk = S->nk;
    p.st = S->st;
    p.level = S->level;
    p.backend = S->backend;
    p.ignored = S->ignored;
    if (ax_add(S->F, &p))
        S->oom = true;
}

static void axs_node_begin(axsink *S)
{
    S->in_node = true;
    S->field = AF_OTHER;
    S->seen = 0;
    S->has_id = S->has_role = S->has_name = S->has_value = false;
    S->textbox = false;
    S->ignored = S->has_num = false;
    S->num = 0;
    S->backend = 0;
    S->nk = 0;
    S->st = 0;
    S->level = 0;
    sb_clear(&S->id);
    sb_clear(&S->role);
    sb_clear(&S->name);
    sb_clear(&S->value);
}

static void axs_prop_end(axsink *S)
{
    if (!S->has_pname)
        return;
    const char *sv = S->pvtype == 2 ? S->pstr : NULL;
    bool on = S->pvtype == 1 || (sv && strcmp(sv, "true") == 0);
    ax_state1(S->pname.s, on, sv, S->pvtype == 3 ? S->pnum : 0, &S->st, &S->level);
}

bool snap_obs_is_text(const json_event *ev)
{
    return ev->type == JSON_EV_STR || ev->type == JSON_EV_STR_PART;
}

bool snap_obs_is_value(const json_event *ev)
{
    return ev->type != JSON_EV_KEY && ev->type != JSON_EV_OBJ_END &&
           ev->type != JSON_EV_ARR_END;
}

/* Text of a string value into b (pieces appended); true on its last piece. */
static bool axs_text(base_buf *b, const json_event *ev)
{
    base_buf_put(b, ev->str, ev->len);
    return ev->type == JSON_EV_STR;
}

/* The members the sink reads are few; the rest of a reply (a name's
 * "sources", "ignoredReasons", "chromeRole", "description", properties the
 * states never use, whole InlineTextBox nodes) is answered with
 * JSON_STREAM_SKIP, so the stream validates it without events or copies.
 * Skipping changes no record: every skip below is of something the digest
 * would have ignored (snap_ax_digest_check digests both ways). */
#define AXS_SKIP(S) ((S)->noskip ? 0 : JSON_STREAM_SKIP)

static bool ev_begin(const json_event *ev)
{
    return ev->type == JSON_EV_OBJ_BEGIN || ev->type == JSON_EV_ARR_BEGIN;
}

/* The properties ax_state1 reads. */
static bool axs_prop_used(const char *k)
{
    static const char *const used[] = {
        "disabled", "checked", "pressed", "expanded", "selected", "required",
        "focused", "readonly", "invalid", "focusable", "editable", "level",
    };
    for (size_t i = 0; i < sizeof used / sizeof used[0]; i++)
        if (strcmp(k, used[i]) == 0)
            return true;
    return false;
}

/* role, name or value: an object whose first "value" is read. */
static int axs_rnv(axsink *S, const json_event *ev, unsigned d)
{
    int f = S->field;
    if (d != 4 || !S->ctr_obj)
        return 0;
    if (ev->type == JSON_EV_KEY) {
        S->sub = !S->subseen && strcmp(ev->str, "value") == 0;
        S->subseen |= S->sub;
        return S->sub ? 0 : AXS_SKIP(S);
    }
    if (!S->sub || !snap_obs_is_value(ev))
        return 0;
    base_buf *b = f == AF_ROLE ? &S->role : f == AF_NAME ? &S->name : &S->value;
    bool *has = f == AF_ROLE ? &S->has_role : f == AF_NAME ? &S->has_name : &S->has_value;
    if (snap_obs_is_text(ev)) {
        if (axs_text(b, ev)) {
            *has = true;
            S->sub = false;
            S->textbox = f == AF_ROLE && b->s && strcmp(b->s, "InlineTextBox") == 0;
        }
        return 0;
    }
    if (f == AF_VALUE && ev->type == JSON_EV_NUM) {
        S->has_num = true;
        S->num = ev->num;
    }
    S->sub = false;
    return ev_begin(ev) ? AXS_SKIP(S) : 0;
}

/* properties[]: each {name, value: {value}}. */
static int axs_props(axsink *S, const json_event *ev, unsigned d)
{
    if (d == 4) {
        if (ev->type == JSON_EV_OBJ_BEGIN) {
            S->in_prop = true;
            S->pname_seen = S->pvalue_seen = S->pvv_seen = false;
            S->pfield = 0;
            S->pv_obj = false;
            S->pvkey = false;
            S->has_pname = false;
            sb_clear(&S->pname);
            S->pvtype = 0;
            S->pstr_len = 0;
            S->pstr[0] = 0;
            S->pstr_nul = false;
            S->pnum = 0;
        } else if (ev->type == JSON_EV_OBJ_END && S->in_prop) {
            axs_prop_end(S);
            S->in_prop = false;
        } else if (ev->type == JSON_EV_ARR_BEGIN) {
            return AXS_SKIP(S);
        }
        return 0;
    }
    if (!S->in_prop)
        return 0;
    if (d == 5) {
        if (ev->type == JSON_EV_KEY) {
            S->pfield = 0;
            if (!S->pname_seen && strcmp(ev->str, "name") == 0) {
                S->pfield = 1;
                S->pname_seen = true;
            } else if (!S->pvalue_seen && strcmp(ev->str, "value") == 0) {
                S->pfield = 2;
                S->pvalue_seen = true;
                /* A property whose name is known and never read. */
                bool used = S->has_pname && (!S->pname.s || axs_prop_used(S->pname.s));
                if (S->pname_seen && !used)
                    return AXS_SKIP(S);
            }
            return S->pfield ? 0 : AXS_SKIP(S);
        }
        if (S->pfield == 1 && snap_obs_is_text(ev)) {
            if (axs_text(&S->pname, ev))
                S->has_pname = true;
        } else if (S->pfield == 2 && ev->type == JSON_EV_OBJ_BEGIN) {
            S->pv_obj = true;
        } else if (ev_begin(ev)) {
            return AXS_SKIP(S);
        }
        return 0;
    }
    if (d != 6 || !S->pv_obj)
        return 0;
    if (ev->type == JSON_EV_KEY) {
        S->pvkey = !S->pvv_seen && strcmp(ev->str, "value") == 0;
        S->pvv_seen |= S->pvkey;
        return S->pvkey ? 0 : AXS_SKIP(S);
    }
    if (!S->pvkey || !snap_obs_is_value(ev))
        return 0;
    if (snap_obs_is_text(ev)) {
        /* Only its first 15 bytes matter: it is compared with short words. */
        for (size_t i = 0; i < ev->len && !S->pstr_nul && S->pstr_len < 15; i++) {
            if (!ev->str[i])
                S->pstr_nul = true;
            else
                S->pstr[S->pstr_len++] = ev->str[i];
        }
        S->pstr[S->pstr_len] = 0;
        if (ev->type == JSON_EV_STR) {
            S->pvtype = 2;
            S->pvkey = false;
        }
        return 0;
    }
    S->pvtype = ev->type == JSON_EV_TRUE ? 1 : ev->type == JSON_EV_NUM ? 3 : 0;
    S->pnum = ev->num;
    S->pvkey = false;
    return ev_begin(ev) ? AXS_SKIP(S) : 0;
}

/* Depth 4 and below, inside a node (d = ev->depth). */
static int axs_inner(axsink *S, const json_event *ev, unsigned d)
{
    int f = S->field;
    if (f == AF_ROLE || f == AF_NAME || f == AF_VALUE)
        return axs_rnv(S, ev, d);
    if (f == AF_KIDS) {
        if (d != 4 || !snap_obs_is_value(ev))
            return 0;
        if (snap_obs_is_text(ev)) {
            if (axs_text(&S->kid, ev)) {
                axs_push_kid(S, ax_id(S->kid.s ? S->kid.s : ""));
                sb_clear(&S->kid);
            }
        } else {
            axs_push_kid(S, ax_id(NULL));
            return ev_begin(ev) ? AXS_SKIP(S) : 0;
        }
        return 0;
    }
    return f == AF_PROPS ? axs_props(S, ev, d) : 0;
}

/* The AF_* of a node member's key (matched whole, as json_get does). */
static int axs_field(const char *k, size_t n)
{
    static const struct { const char *k; size_t n; int f; } names[] = {
        {"role", 4, AF_ROLE}, {"name", 4, AF_NAME}, {"value", 5, AF_VALUE},
        {"nodeId", 6, AF_ID}, {"ignored", 7, AF_IGNORED}, {"childIds", 8, AF_KIDS},
        {"properties", 10, AF_PROPS}, {"backendDOMNodeId", 16, AF_BACKEND},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0] && names[i].n <= n; i++)
        if (names[i].n == n && memcmp(k, names[i].k, n) == 0)
            return names[i].f;
    return AF_OTHER;
}

/* A node member's key at depth 3: which field, or skip its value. */
static int axs_key(axsink *S, const json_event *ev)
{
    S->field = AF_OTHER;
    /* An InlineTextBox is never kept (ax_add): nothing after its role
     * matters. */
    if (S->textbox)
        return AXS_SKIP(S);
    int f = axs_field(ev->str, ev->len);
    if (f != AF_OTHER && !(S->seen & (1u << f))) {
        S->field = f;
        S->seen |= 1u << f;
    }
    return S->field == AF_OTHER ? AXS_SKIP(S) : 0;
}

/* The sink of cdp_send_sink for Accessibility.getFullAXTree. */
int snap_obs_ax_event(void *ud, const json_event *ev)
{
    axsink *S = ud;
    unsigned d = ev->depth;
    if (d == 1) {
        if (ev->type == JSON_EV_KEY) {
            S->nodes_key = !S->nodes_seen && strcmp(ev->str, "nodes") == 0;
            S->nodes_seen |= S->nodes_key;
            return S->nodes_key ? 0 : AXS_SKIP(S);
        } else if (S->nodes_key && (ev->type == JSON_EV_ARR_BEGIN ||
                                    ev->type == JSON_EV_OBJ_BEGIN)) {
            S->in_nodes = 1;
            S->nodes_key = false;
        } else if (S->in_nodes == 1 && (ev->type == JSON_EV_ARR_END ||
                                        ev->type == JSON_EV_OBJ_END)) {
            S->in_nodes = 2;
        } else if (snap_obs_is_value(ev)) {
            S->nodes_key = false;
        }
        return 0;
    }
    if (d < 2 || S->in_nodes != 1)
        return 0;
    if (d == 2) {
        if (ev->type == JSON_EV_OBJ_BEGIN) {
            axs_node_begin(S);
        } else if (ev->type == JSON_EV_OBJ_END && S->in_node) {
            S->in_node = false;
            axs_commit(S);
        }
        return S->oom ? CDP_ENOMEM : 0;
    }
    if (!S->in_node)
        return 0;
    if (d == 3) {
        if (ev->type == JSON_EV_KEY)
            return axs_key(S, ev);
        if (!snap_obs_is_value(ev))
            return 0;
        switch (S->field) {
        case AF_ID:
            if (snap_obs_is_text(ev) && axs_text(&S->id, ev))
                S->has_id = true;
            break;
        case AF_IGNORED:
            S->ignored = ev->type == JSON_EV_TRUE;
            break;
        case AF_BACKEND:
            if (ev->type == JSON_EV_NUM && ev->is_int)
                S->backend = (int)ev->i;
            break;
        case AF_ROLE:
        case AF_NAME:
        case AF_VALUE:
            S->ctr_obj = ev->type == JSON_EV_OBJ_BEGIN;
            S->sub = S->subseen = false;
            return ev->type == JSON_EV_ARR_BEGIN ? AXS_SKIP(S) : 0;
        default:
            break;
        }
        /* A container where a scalar belongs is ignored whole. */
        return ev_begin(ev) && S->field != AF_KIDS && S->field != AF_PROPS ? AXS_SKIP(S) : 0;
    }
    int r = axs_inner(S, ev, d);
    return S->oom || S->kid.oom || S->pname.oom ? CDP_ENOMEM : r;
}

/* Same record (but for where its child list lies)? */
static bool ax_same(const frame_st *A, size_t i, const frame_st *B, size_t j)
{
    const axn *x = snap_obs_ax_at(A, i), *y = snap_obs_ax_at(B, j);
    const char *xn = snap_obs_ax_name(A, x), *yn = snap_obs_ax_name(B, y);
    const char *xv = snap_obs_ax_value(A, x), *yv = snap_obs_ax_value(B, y);
    double xd = 0, yd = 0;
    bool xh = snap_obs_ax_num(A, x, &xd), yh = snap_obs_ax_num(B, y, &yd);
    return snap_obs_ax_nkids(A, i) == snap_obs_ax_nkids(B, j) &&
           x->backend == y->backend && x->st == y->st && x->level == y->level &&
           x->flags == y->flags && xh == yh && (!xh || memcmp(&xd, &yd, sizeof xd) == 0) &&
           strcmp(snap_obs_ax_role(A, x), snap_obs_ax_role(B, y)) == 0 && !xn == !yn &&
           (!xn || strcmp(xn, yn) == 0) && !xv == !yv && (!xv || strcmp(xv, yv) == 0);
}

/* The test side of ax_reorder: A (reordered) and B (as sent), walked depth
 * first from their roots in step (at most 4 visits per record, for
 * cycles), meet the same records; and when A is marked preorder, its
 * indices rise strictly along the walk. */
static bool ax_same_tree(const frame_st *A, const frame_st *B, char *why, size_t cap)
{
    int ra = snap_obs_ax_root(A), rb = snap_obs_ax_root(B);
    if ((ra < 0) != (rb < 0) || (A->preorder && ra > 0)) {
        snprintf(why, cap, "reorder: roots %d/%d", ra, rb);
        return false;
    }
    if (ra < 0)
        return true;
    typedef struct { int32_t a, b; size_t c; } pair;
    size_t ns = 0, cp = 64, budget = 4 * (A->nnodes + A->nkid) + 4;
    pair *st = malloc(cp * sizeof *st);
    long last = -1;
    if (!st) {
        snprintf(why, cap, "reorder: out of memory");
        return false;
    }
    st[ns++] = (pair){ra, rb, 0};
    bool ok = true;
    while (ns && budget--) {
        pair *top = &st[ns - 1];
        if (top->c == 0) {
            if (!ax_same(A, (size_t)top->a, B, (size_t)top->b) ||
                (A->preorder && top->a <= last)) {
                snprintf(why, cap, "reorder: node %d/%d differs", (int)top->a, (int)top->b);
                ok = false;
                break;
            }
            last = top->a;
        }
        if (top->c >= snap_obs_ax_nkids(A, (size_t)top->a)) {
            ns--;
            continue;
        }
        int ka = A->kix[snap_obs_ax_at(A, (size_t)top->a)->kid0 + top->c];
        int kb = B->kix[snap_obs_ax_at(B, (size_t)top->b)->kid0 + top->c];
        int sa = top->a, sb = top->b;
        top->c++;
        if ((ka < 0) != (kb < 0) || (ka == sa) != (kb == sb)) {
            snprintf(why, cap, "reorder: children of %d/%d differ", sa, sb);
            ok = false;
            break;
        }
        if (ka < 0 || ka == sa)
            continue;
        if (ns == cp) {
            pair *n2 = realloc(st, 2 * cp * sizeof *st);
            if (!n2) {
                snprintf(why, cap, "reorder: out of memory");
                ok = false;
                break;
            }
            st = n2;
            cp *= 2;
        }
        st[ns++] = (pair){ka, kb, 0};
    }
    free(st);
    return ok;
}

/* Test hook (tests/test_snapshot.c declares it too): digest the AX reply
 * text reply[0..len) both ways, json_parse + ax_parse and json_stream in
 * pieces of `piece` bytes + ax_event, and compare the records. Returns 0
 * when they are equal, else -1 with why filled. */
/* Test hook: the tree a getFullAXTree reply digests to, as text (for each
 * record "index:kid,kid;" after ax_finish), and whether its ids needed 64
 * bits. 0, or -1 when it cannot be digested. */
int snap_ax_shape(const char *reply, size_t len, char *out, size_t cap, bool *wide);
int snap_ax_shape(const char *reply, size_t len, char *out, size_t cap, bool *wide)
{
    frame_st A;
    memset(&A, 0, sizeof A);
    json_doc *d = json_parse(reply, len, NULL, NULL);
    int rc = -1;
    if (d && ax_parse(&A, json_doc_root(d)) == 0) {
        *wide = A.wide;
        if (snap_obs_ax_finish(&A) == 0) {
            size_t n = 0;
            out[0] = 0;
            for (size_t i = 0; i < A.nnodes && n < cap; i++) {
                n += (size_t)snprintf(out + n, cap - n, "%zu:", i);
                size_t k0 = snap_obs_ax_at(&A, i)->kid0;
                size_t k1 = i + 1 < A.nnodes ? snap_obs_ax_at(&A, i + 1)->kid0 : A.nkid;
                for (size_t k = k0; k < k1 && n < cap; k++)
                    n += (size_t)snprintf(out + n, cap - n, "%d,", A.kix[k]);
                if (n < cap)
                    n += (size_t)snprintf(out + n, cap - n, ";");
            }
            rc = n < cap ? 0 : -1;
        }
    }
    json_doc_free(d);
    snap_obs_ax_drop(&A);
    return rc;
}

/* What the connection does with a sink reply (cdp/conn_recv.c in_event),
 * reduced to the stream: the events under the message's "result" go to the
 * AX sink, one level up. */
typedef struct {
    axsink *S;
    bool in_result, result_seen;
} axrun;

static int axrun_event(void *ud, const json_event *ev)
{
    axrun *R = ud;
    if (ev->depth == 0)
        return 0;
    if (ev->depth == 1 && ev->type == JSON_EV_KEY) {
        R->in_result = !R->result_seen && strcmp(ev->str, "result") == 0;
        R->result_seen |= R->in_result;
        return 0;
    }
    if (!R->in_result)
        return 0;
    json_event e = *ev;
    e.depth--;
    return snap_obs_ax_event(R->S, &e);
}

/* Bench hook (bench/json_bench.c declares it): digest a whole
 * getFullAXTree reply message as a sink call does, json_stream fed in
 * pieces of `piece` bytes (0: whole) through the AX sink into records,
 * then ax_finish. Returns the record count, or -1. */
long snap_ax_stream_run(const char *reply, size_t len, size_t piece);
long snap_ax_stream_run(const char *reply, size_t len, size_t piece)
{
    frame_st F;
    memset(&F, 0, sizeof F);
    axsink S;
    memset(&S, 0, sizeof S);
    S.F = &F;
    axrun R = {&S, false, false};
    json_stream *js = json_stream_new(NULL, axrun_event, &R);
    int r = js ? 0 : -1;
    for (size_t off = 0; !r && off < len; off += piece ? piece : len)
        r = json_stream_feed(js, reply + off, piece && piece < len - off ? piece : len - off);
    if (!r)
        r = json_stream_end(js);
    long n = !r && snap_obs_ax_finish(&F) == 0 ? (long)F.nnodes : -1;
    json_stream_free(js);
    snap_obs_axs_free(&S);
    snap_obs_ax_drop(&F);
    return n;
}

static int ax_digest_check1(const char *reply, size_t len, size_t piece, size_t *nodes,
                            char *why, size_t cap, bool noskip)
{
    frame_st A, B;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    axsink S;
    memset(&S, 0, sizeof S);
    S.F = &B;
    S.noskip = noskip;
    int rc = -1;
    json_doc *d = json_parse(reply, len, NULL, NULL);
    json_stream *js = json_stream_new(NULL, NULL, NULL);
    snprintf(why, cap, "ok");
    if (!d || !js) {
        snprintf(why, cap, "cannot parse the reply");
        goto out;
    }
    const json_val *result = json_get(json_doc_root(d), "result");
    if (!result)
        result = json_doc_root(d);
    int ra = ax_parse(&A, result);
    if (ra) {
        snprintf(why, cap, "ax_parse: %d", ra);
        goto out;
    }
    /* Feed the result's own text: write it back, then stream that. */
    size_t tl;
    char *text = json_write(result, &tl);
    json_stream_free(js);
    js = json_stream_new(NULL, snap_obs_ax_event, &S);
    int r = 0;
    for (size_t off = 0; text && !r && off < tl; off += piece ? piece : tl)
        r = json_stream_feed(js, text + off, piece && piece < tl - off ? piece : tl - off);
    if (!r)
        r = json_stream_end(js);
    free(text);
    if (r || !text) {
        snprintf(why, cap, "stream: %d", r);
        goto out;
    }
    if (nodes)
        *nodes = A.nnodes;
    if (A.nnodes != B.nnodes || A.nkid != B.nkid || A.str.len != B.str.len ||
        A.nroles != B.nroles) {
        snprintf(why, cap, "counts: %zu/%zu nodes, %zu/%zu kids, %zu/%zu bytes", A.nnodes,
                 B.nnodes, A.nkid, B.nkid, A.str.len, B.str.len);
        goto out;
    }
    for (size_t i = 0; i < A.nnodes; i++) {
        if (ax_idv(&A, A.ids, i) != ax_idv(&B, B.ids, i)) {
            snprintf(why, cap, "node %zu: id %lld/%lld", i, (long long)ax_idv(&A, A.ids, i),
                     (long long)ax_idv(&B, B.ids, i));
            goto out;
        }
    }
    if (snap_obs_ax_finish(&A) != 0 || snap_obs_ax_finish(&B) != 0) {
        snprintf(why, cap, "ax_finish failed");
        goto out;
    }
    for (size_t i = 0; i < A.nnodes; i++) {
        if (snap_obs_ax_at(&A, i)->kid0 != snap_obs_ax_at(&B, i)->kid0 || !ax_same(&A, i, &B, i)) {
            snprintf(why, cap, "node %zu differs", i);
            goto out;
        }
    }
    for (size_t i = 0; i < A.nkid; i++) {
        if (A.kix[i] != B.kix[i]) {
            snprintf(why, cap, "kid %zu differs", i);
            goto out;
        }
    }
    /* Reordered for the walk, the records still make the same tree. */
    if (snap_obs_ax_reorder(&A) != 0) {
        snprintf(why, cap, "reorder: out of memory");
        goto out;
    }
    if (!ax_same_tree(&A, &B, why, cap))
        goto out;
    rc = 0;
out:
    json_stream_free(js);
    json_doc_free(d);
    snap_obs_axs_free(&S);
    snap_obs_ax_drop(&A);
    snap_obs_ax_drop(&B);
    return rc;
}

/* Both ways: the sink skipping what it never reads, and not skipping; the
 * records must equal ax_parse's either way. */
int snap_ax_digest_check(const char *reply, size_t len, size_t piece, size_t *nodes,
                         char *why, size_t cap);
int snap_ax_digest_check(const char *reply, size_t len, size_t piece, size_t *nodes,
                         char *why, size_t cap)
{
    int rc = ax_digest_check1(reply, len, piece, nodes, why, cap, false);
    if (rc == 0) {
        rc = ax_digest_check1(reply, len, piece, nodes, why, cap, true);
        if (rc)
            snprintf(why + strlen(why), cap - strlen(why), " (not skipping)");
    }
    return rc;
}

/* A value made only of bullets is a masked password. */
bool snap_obs_masked(const char *s)
{
    if (!s || !*s)
        return false;
    while (*s) {
        if (strncmp(s, "\xe2\x80\xa2", 3) == 0 || strncmp(s, "\xe2\x97\x8f", 3) == 0)
            s += 3;
        else if (*s == '*')
            s++;
        else
            return false;
    }
    return true;
}
