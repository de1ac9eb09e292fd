/*
 * observe_build.c — building the view tree from the AX records and the DOM snapshot,
 * secret values kept out of every name, and row context.
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building the view tree ---- */

/* What a vnode shows of its AX node. */
static void vset_ax(vnode *x, const axn *n)
{
    x->str = n->str;
    x->backend = n->backend;
    x->axf = n->flags;
}

/* What a vnode shows, given its frame's strings. */
const char *snap_obs_vname_in(const char *str, const vnode *x)
{
    return !(x->vf & VF_NONAME) ? snap_obs_name_at(str, x->str, x->axf) : NULL;
}

const char *snap_obs_vvalue_in(const char *str, const vnode *x)
{
    return !(x->vf & (VF_NONAME | VF_NOVALUE)) ? snap_obs_value_at(str, x->str, x->axf) : NULL;
}

bool snap_obs_vnum_in(const char *str, const vnode *x, double *num)
{
    return !(x->vf & VF_NONAME) && snap_obs_num_at(str, x->str, x->axf, num);
}

const char *snap_obs_vname(const build *B, const vnode *x)
{
    return snap_obs_vname_in(B->fr[x->frame].str.s, x);
}

static const char *vvalue(const build *B, const vnode *x)
{
    return snap_obs_vvalue_in(B->fr[x->frame].str.s, x);
}

/* The text of V_TEXT x (tlen bytes; not NUL-terminated in the arena). */
char *snap_obs_vtext(const build *B, const vnode *x)
{
    return (x->vf & VF_STR) ? B->fr[x->frame].str.s + x->toff : B->arena.s + x->toff;
}

/* V_FRAME: the frame_st index of the child frame, -1 when not known. */
int snap_obs_vchild(const vnode *x)
{
    return (int)x->toff - 1;
}

static void walk(build *B, int fi, int ai, int parent, int depth);

/* ---- inline runs ----
 *
 * Text reads like the page: pieces of one line of the page (text around
 * code, emphasis, strong ..., links and buttons inside a sentence) are one
 * run. Text pieces under inline wrappers join into one V_TEXT with the
 * page's own spacing (the StaticText names keep their boundary spaces; a
 * whitespace-only piece is kept as that space), never with an invented
 * one, so a word the page breaks with <wbr> stays whole. Elements never
 * join: a link or button keeps its own line and ref, and the text after it
 * starts a new V_TEXT marked VF_RUN (VF_SPACE when the page has a space
 * before it), which text mode joins to the line before (page_text). An
 * unknown wrapper (an ignored node, a generic that is not display:inline)
 * counts as a block: a line break too many, never a control hidden inside
 * a run of text. */

/* Inline wrappers: flat, printed as nothing, inside a line of text. */
static const char *const INLINE_ROLES[] = {
    "strong", "emphasis", "mark", "time", "subscript", "superscript", "insertion",
    "deletion", "Abbr", "code", "ContentDeletion", "ContentInsertion", NULL,
};

/* Is vnode j an inline wrapper (a clickable one is not: it may become a
 * "clickable" line, and must keep its text)? One of INLINE_ROLES, or a
 * generic whose computed display is "inline" (a span the browser keeps
 * for its title or an ARIA attribute: the DOM snapshot's styles). */
static bool inline_wrap(const build *B, int j)
{
    const vnode *x = &B->v[j];
    if (x->kind != V_FLAT || (x->vf & VF_DROP))
        return false;
    const sess_st *S = &B->ss[B->fr[x->frame].sess];
    const char *role = snap_obs_vrole(B, x);
    if (!snap_obs_in_list(role, INLINE_ROLES) &&
        !(strcmp(role, "generic") == 0 &&
          ((x->backend > 0 && snap_obs_ids_has(&S->inl, x->backend)) || (x->st & ST_INLINE))))
        return false;
    return !(x->backend > 0 && snap_obs_ids_has(&S->click, x->backend));
}

/* Is vnode j a link or button (an element that sits inside a line)? */
static bool inline_elem(const build *B, int j)
{
    const vnode *x = &B->v[j];
    if (x->kind != V_ELEM || (x->vf & VF_DROP))
        return false;
    const char *r = snap_obs_vrole(B, x);
    return strcmp(r, "link") == 0 || strcmp(r, "button") == 0;
}

/* The block p is in: p, or its nearest ancestor that is not inline
 * (wrappers, and with elems inline links and buttons too). */
static int run_block(const build *B, int p, bool elems)
{
    while (p >= 0 && (inline_wrap(B, p) || (elems && inline_elem(B, p))))
        p = B->v[p].parent;
    return p;
}

/* Does a piece under parent, written at vnode upto, run on from vnode l
 * (text, or an inline element whose subtree is done)? Everything written
 * between them must be inline (wrappers; with elems also links and
 * buttons), and both in the same block. */
static bool runs_on(const build *B, int l, int parent, int upto, bool elems)
{
    if (l < 0 || l >= upto || (B->v[l].vf & VF_DROP))
        return false;
    int from = B->v[l].kind == V_TEXT ? l + 1 : B->v[l].end;
    for (int j = from; j < upto; j++)
        if (!inline_wrap(B, j) && !(elems && inline_elem(B, j)))
            return false;
    return run_block(B, B->v[l].parent, elems) == run_block(B, parent, elems);
}

/* Mark a new printed vnode i under parent that runs on from the piece
 * before it (lead: its text starts with whitespace). */
static void run_mark(build *B, int i, int parent, bool lead)
{
    int l = B->run_last;
    if (runs_on(B, l, parent, i, true)) {
        B->v[i].vf |= VF_RUN;
        /* Two controls side by side: the whitespace between them is not in
         * the accessibility tree, and a space too many is harmless. */
        if (B->run_ws || lead || (B->v[l].kind == V_ELEM && B->v[i].kind == V_ELEM))
            B->v[i].vf |= VF_SPACE;
    }
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f';
}

/* Text child: joined to the text before it when they are one run (see
 * above), else a V_TEXT of its own, carrying the backend node of its
 * first piece (a text node: what a text target clicks, act_locate.c). */
static void add_text(build *B, int parent, int fi, const char *s, int32_t backend)
{
    if (!s || !*s)
        return;
    bool blank = snap_obs_blank(s);
    int last = B->tail_text;
    /* A run of text joins while nothing else was written to the arena
     * since the run's last piece. */
    if (last >= 0 && B->v[last].kind == V_TEXT && B->arena.len == B->tail_len &&
        runs_on(B, last, parent, (int)B->nv, false)) {
        vnode *x = &B->v[last];
        if (x->vf & VF_STR) {
            /* Joined text is the arena's: the first piece moves there. */
            size_t off = B->arena.len;
            if (!base_buf_reserve(&B->arena, x->tlen))
                return;
            base_buf_put(&B->arena, snap_obs_vtext(B, x), x->tlen);
            x->toff = (uint32_t)off;
            x->vf &= ~VF_STR & 0x1FFu;
        }
        base_buf_puts(&B->arena, s);
        B->v[last].tlen = (uint32_t)(B->arena.len - B->v[last].toff);
        B->tail_len = B->arena.len;
        B->run_last = last;
        B->run_ws = is_ws(s[strlen(s) - 1]);
        return;
    }
    if (blank) {
        B->run_ws = true;   /* the space between two pieces of a run */
        return;
    }
    int i = snap_obs_vnew(B, parent, V_TEXT, fi);
    if (i < 0)
        return;
    B->v[i].aux = 1;
    B->v[i].backend = backend > 0 || B->fr[fi].walked ? backend : 0;   /* < 0: a walker id */
    run_mark(B, i, parent, is_ws(s[0]));
    B->tail_text = B->run_last = i;
    B->run_ws = is_ws(s[strlen(s) - 1]);
    /* A single piece is read where it is, in the frame's strings (the
     * cache keeps them): no copy. */
    const base_buf *str = &B->fr[fi].str;
    if (str->s && s >= str->s && s < str->s + str->len) {
        B->v[i].toff = (uint32_t)(s - str->s);
        B->v[i].tlen = (uint32_t)strlen(s);
        B->v[i].vf |= VF_STR;
    } else {
        B->v[i].toff = (uint32_t)B->arena.len;
        base_buf_puts(&B->arena, s);
        B->v[i].tlen = (uint32_t)(B->arena.len - B->v[i].toff);
    }
    B->tail_len = B->arena.len;
}

static void walk_deep(build *B, int fi, int ai, int parent);

static void walk_kids(build *B, int fi, int ai, int parent, int depth)
{
    if (depth >= MAX_DEPTH) {
        walk_deep(B, fi, ai, parent);
        return;
    }
    frame_st *F = &B->fr[fi];
    size_t k0 = snap_obs_ax_at(F, (size_t)ai)->kid0, nk = snap_obs_ax_nkids(F, (size_t)ai);
    for (size_t c = 0; c < nk; c++) {
        int k = F->kix[k0 + c];
        if (k >= 0 && k != ai)
            walk(B, fi, k, parent, depth + 1);
    }
}

/* Options of a native select, "a","b",... into the arena. */
static void collect_options(build *B, frame_st *F, int ai, int vi, int depth, int *count)
{
    if (depth > 8)
        return;
    size_t k0 = snap_obs_ax_at(F, (size_t)ai)->kid0, nk = snap_obs_ax_nkids(F, (size_t)ai);
    for (size_t c = 0; c < nk; c++) {
        int k = F->kix[k0 + c];
        if (k < 0 || k == ai)
            continue;
        const axn *o = snap_obs_ax_at(F, (size_t)k);
        if (snap_obs_ax_cls(F, o) & RC_OPTION) {
            if (*count < OPTIONS_MAX) {
                if (*count)
                    base_buf_putc(&B->arena, ',');
                const char *nm = snap_obs_ax_name(F, o);
                snap_obs_put_quoted(&B->arena, nm ? nm : "", 60);
            }
            (*count)++;
        } else {
            collect_options(B, F, k, vi, depth + 1, count);
        }
    }
}

static int frame_for_owner(build *B, int fi, int backend)
{
    for (size_t i = 0; i < B->nfr; i++)
        if (B->fr[i].parent == fi && B->fr[i].owner == backend && backend && !B->fr[i].placed)
            return (int)i;
    return -1;
}

/* Finish a vnode after its children: flatten unnamed rows and items with
 * one printed child, drop empty containers, and add its printed lines to
 * the parent's count. */
void snap_obs_finish(build *B, int i)
{
    vnode *x = &B->v[i];
    x->end = (int)B->nv;
    uint32_t kids = 0;
    for (int j = i + 1; j < x->end; j = B->v[j].end)
        kids += B->v[j].aux;
    if (x->kind == V_ELEM && !(x->vf & VF_ACT)) {
        const char *name = snap_obs_vname(B, x), *value = vvalue(B, x);
        bool named = name && *name;
        bool has_value = value && *value;
        if (!named && !has_value && kids == 0 && !(x->vf & VF_OPTS))
            x->vf |= VF_DROP;
        else if (!named && kids == 1 &&
                 (strcmp(snap_obs_vrole(B, x), "li") == 0 ||
                  strcmp(snap_obs_vrole(B, x), "row") == 0))
            x->kind = V_FLAT;
        else if (strcmp(snap_obs_vrole(B, x), "img") == 0 && !named)
            x->vf |= VF_DROP;
    }
    if (x->vf & VF_DROP)
        x->aux = 0;
    else if (x->kind == V_FLAT)
        x->aux = kids;
    else
        x->aux = 1;
}

/* Children of a flat wrapper that is clickable: a ref for the wrapper when
 * nothing inside is actionable and it holds some text. */
static void flat_clickable(build *B, int i)
{
    vnode *x = &B->v[i];
    for (int j = i + 1; j < x->end; j++)
        if ((B->v[j].vf & VF_ACT) || B->v[j].kind == V_FRAME)
            return;
    size_t tlen = 0;
    for (int j = i + 1; j < x->end; j++) {
        const char *nm = B->v[j].kind == V_ELEM ? snap_obs_vname(B, &B->v[j]) : NULL;
        if (B->v[j].kind == V_TEXT && !(B->v[j].vf & VF_DROP))
            tlen += B->v[j].tlen;
        else if (nm)
            tlen += strlen(nm);
    }
    if (tlen == 0 || tlen > 200)
        return;
    uint16_t ri = snap_obs_role_ix(B, "clickable");
    x = &B->v[i];
    x->kind = V_ELEM;
    x->role = ri;
    x->vf |= VF_ACT;
}

static void walk(build *B, int fi, int ai, int parent, int depth)
{
    if (B->oom)
        return;
    frame_st *F = &B->fr[fi];
    /* In index order (F->preorder), no record before this one is read
     * again: their chunks go. */
    while (F->preorder && F->released < (size_t)ai >> AXC_SHIFT) {
        free(F->nodes[F->released]);
        F->nodes[F->released++] = NULL;
    }
    const axn *n = snap_obs_ax_at(F, (size_t)ai);
    int32_t backend = n->backend;    /* n is gone after the children */
    unsigned rc = snap_obs_ax_cls(F, n);
    const char *role = snap_obs_ax_role(F, n);
    const char *name = snap_obs_ax_name(F, n);
    /* Below MAX_DEPTH, walk_deep has the node walked without its children
     * (depth > MAX_DEPTH): it walks them itself, flattened. */
    bool shallow = depth > MAX_DEPTH;
    if ((rc & RC_DROP) && strcmp(role, "LineBreak") == 0)
        add_text(B, parent, fi, "\n", 0);   /* <br>: the line's own break */
    if (rc & RC_DROP)
        return;
    if (n->flags & AX_IGNORED) {
        /* Kept as a flat wrapper when it has children: a card made of
         * plain divs is still a container for row context. */
        if (!(n->flags & AX_KIDS))
            return;
        int w = snap_obs_vnew(B, parent, V_FLAT, fi);
        if (w < 0)
            return;
        vset_ax(&B->v[w], n);
        B->v[w].vf |= VF_NONAME;
        walk_kids(B, fi, ai, w, depth);
        snap_obs_finish(B, w);
        return;
    }
    if (rc & RC_TEXT) {
        add_text(B, parent, fi, name, backend);
        return;
    }
    int level = n->level;
    unsigned st = n->st;
    sess_st *S = &B->ss[F->sess];
    if (rc & RC_FRAME) {
        int i = snap_obs_vnew(B, parent, V_FRAME, fi);
        if (i < 0)
            return;
        vset_ax(&B->v[i], n);
        int cf = frame_for_owner(B, fi, n->backend);
        B->v[i].toff = (uint32_t)(cf + 1);
        if (cf >= 0) {
            B->fr[cf].placed = true;
            snap_obs_walk_frame_root(B, cf, i, shallow ? MAX_DEPTH : depth + 1);
        }
        snap_obs_finish(B, i);
        return;
    }
    bool editable_top = (st & ST_EDITABLE) && !(rc & RC_LEAF) && (rc & RC_EDITBASE);
    bool parent_editable = parent >= 0 && (B->v[parent].st & ST_EDITABLE);
    if (parent_editable)
        return;     /* inside a contenteditable: its value says it */
    bool flat = !editable_top && (rc & RC_FLAT) &&
                !(name && *name && (rc & RC_FLAT_NAMED));
    int i = snap_obs_vnew(B, parent, flat ? V_FLAT : V_ELEM, fi);
    if (i < 0)
        return;
    vnode *x = &B->v[i];
    const char *xrole = editable_top ? "textbox" : role;
    vset_ax(x, n);
    x->st = (uint16_t)st;
    if (flat) {
        uint16_t ri = snap_obs_role_ix(B, xrole);
        x = &B->v[i];
        x->role = ri;
    } else {
        bool act = (n->backend > 0 || F->walked) &&
            ((rc & RC_ACT) || editable_top ||
             ((st & ST_FOCUSABLE) && !(rc & RC_ROOT) && snap_obs_ids_has(&S->click, n->backend)));
        if (act)
            x->vf |= VF_ACT;
        bool textish = strcmp(xrole, "textbox") == 0 || strcmp(xrole, "searchbox") == 0 ||
                       strcmp(xrole, "combobox") == 0 || strcmp(xrole, "spinbutton") == 0;
        const char *value = snap_obs_ax_value(F, n);
        if (textish && (snap_obs_ids_has(&S->secret, n->backend) || snap_obs_masked(value) ||
                        snap_secret_kind(B->a, B->tab_id, F->f->id, F->f->loader,
                                         n->backend) ||
                        (!S->dom_ok && value && *value &&
                         strcmp(xrole, "combobox") != 0))) {
            x->st |= ST_SECRET;
            x->vf |= VF_NOVALUE;
        }
        if (rc & RC_COMBO) {
            size_t off = B->arena.len;
            int count = 0;
            collect_options(B, F, ai, i, 0, &count);
            x = &B->v[i];
            if (count) {
                if (count > OPTIONS_MAX)
                    base_buf_printf(&B->arena, ",+%d more", count - OPTIONS_MAX);
                x->toff = (uint32_t)off;
                x->tlen = (uint32_t)(B->arena.len - off);
                x->vf |= VF_OPTS;
            }
        }
        uint16_t ri = snap_obs_role_ix(B, snap_obs_print_role(xrole, level));
        x = &B->v[i];
        x->role = ri;
    }
    if (!flat && inline_elem(B, i))
        run_mark(B, i, parent, false);
    if (!(rc & RC_LEAF) && !editable_top && !shallow)
        walk_kids(B, fi, ai, i, depth);
    x = &B->v[i];
    x->end = (int)B->nv;
    if (flat && backend > 0 && snap_obs_ids_has(&S->click, backend) && name == NULL)
        flat_clickable(B, i);
    else if (flat && backend > 0 && snap_obs_ids_has(&S->click, backend) && (rc & RC_GENERIC))
        flat_clickable(B, i);
    x = &B->v[i];
    if (x->kind == V_ELEM && strcmp(snap_obs_vrole(B, x), "clickable") == 0) {
        /* The wrapper now prints as one line: its text is its name. */
        size_t off = B->arena.len;
        for (int j = i + 1; j < x->end; j++) {
            if (B->v[j].kind == V_TEXT) {
                if (B->arena.len > off)
                    base_buf_putc(&B->arena, ' ');
                /* Room first: the copy may come from the arena itself. */
                if (base_buf_reserve(&B->arena, B->v[j].tlen))
                    base_buf_put(&B->arena, snap_obs_vtext(B, &B->v[j]), B->v[j].tlen);
            }
        }
        x->toff = (uint32_t)off;
        x->tlen = (uint32_t)(B->arena.len - off);
        for (int j = i + 1; j < x->end; j++) {
            B->v[j].vf |= VF_DROP;
            B->v[j].aux = 0;
        }
    }
    snap_obs_finish(B, i);
    if (inline_elem(B, i))
        B->run_last = i;
}

/* The descendants of ai, below MAX_DEPTH levels, flattened under parent:
 * an explicit depth-first walk (the C stack stays bounded however deep the
 * page nests), in document order. Wrappers and ignored nodes add nothing
 * of their own (their children come up a level); every other node is
 * walked without its children (walk with depth > MAX_DEPTH) and its
 * children follow it as its siblings, except under leaves (a text field's
 * inner editor) and dropped roles. A clickable wrapper that holds only
 * text gets no ref this deep. Bounded by deep_left visits (the AX records
 * need not form a tree); what is left then is counted as cut. */
static void walk_deep(build *B, int fi, int ai, int parent)
{
    typedef struct { size_t k0, nk, c; } lvl;
    lvl *st = malloc(64 * sizeof *st);
    size_t ns = 0, cap = 64;
    if (!st) {
        B->oom = true;
        return;
    }
    frame_st *F = &B->fr[fi];
    st[ns++] = (lvl){snap_obs_ax_at(F, (size_t)ai)->kid0, snap_obs_ax_nkids(F, (size_t)ai), 0};
    while (ns && !B->oom) {
        lvl *top = &st[ns - 1];
        if (top->c == top->nk) {
            ns--;
            continue;
        }
        int k = F->kix[top->k0 + top->c++];
        if (k < 0 || k == ai)
            continue;
        if (!B->deep_left) {
            B->deep_cut = true;
            break;
        }
        B->deep_left--;
        B->deep++;
        const axn *n = snap_obs_ax_at(F, (size_t)k);
        unsigned rc = snap_obs_ax_cls(F, n);
        const char *name = snap_obs_ax_name(F, n);
        bool descend;
        if (rc & RC_DROP) {
            descend = false;
        } else if ((n->flags & AX_IGNORED) ||
                   ((rc & RC_FLAT) && !(name && *name && (rc & RC_FLAT_NAMED)) &&
                    !(n->st & ST_EDITABLE))) {
            descend = true;
        } else {
            size_t kid0 = n->kid0, nk = snap_obs_ax_nkids(F, (size_t)k);
            /* A named button, link, heading ... says its content in its name. */
            bool leaf = (rc & (RC_LEAF | RC_TEXT | RC_FRAME)) != 0 || (n->st & ST_EDITABLE) ||
                (name && *name &&
                 snap_obs_in_list(snap_obs_ax_role(F, n), snap_obs_NAME_FROM_CONTENT));
            B->run_last = -1;   /* flattened: no element runs on from another */
            walk(B, fi, k, parent, MAX_DEPTH + 1);
            F = &B->fr[fi];
            if (leaf || !nk)
                continue;
            lvl *nst = base_grow(st, ns + 1, &cap, sizeof *st, 64);
            if (!nst) {
                B->oom = true;
                break;
            }
            st = nst;
            st[ns++] = (lvl){kid0, nk, 0};
            B->tail_text = B->run_last = -1;   /* its text does not run on */
            continue;
        }
        if (descend && snap_obs_ax_nkids(F, (size_t)k)) {
            lvl *nst = base_grow(st, ns + 1, &cap, sizeof *st, 64);
            if (!nst) {
                B->oom = true;
                break;
            }
            st = nst;
            st[ns++] = (lvl){n->kid0, snap_obs_ax_nkids(F, (size_t)k), 0};
            if (!(n->flags & AX_IGNORED) && !(snap_obs_ax_cls(F, n) & RC_GENERIC))
                B->tail_text = B->run_last = -1;   /* a paragraph, a cell: a block */
        }
    }
    free(st);
}

/* ---- secret values kept out of every name ----
 *
 * A secret field's own value is withheld (VF_NOVALUE), but the browser
 * also computes it into other accessible names: a button or label that
 * points at the field with aria-labelledby, a field labelled by itself,
 * and once the page has turned a password into type=text, the value in
 * plain. Before the walk, every text field that is secret now or was
 * noted secret before (snap_secret_kind) is noted, its value collected,
 * and every name and value of every frame that holds one of the values
 * gets it replaced by "[secret]" (a value shorter than 3 bytes only where
 * it stands as a whole word). The records then point at the masked copies;
 * the plain strings are wiped. Everything built from the records — lines,
 * text mode, ref names, action results, the gate's target, audit lines and
 * prompts — only ever sees the masked ones. */

#define SECRET_MASK "[secret]"

static bool textish_role(const char *role)
{
    return strcmp(role, "textbox") == 0 || strcmp(role, "searchbox") == 0 ||
           strcmp(role, "combobox") == 0 || strcmp(role, "spinbutton") == 0;
}

static bool word_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80;
}

/* s with every secret value replaced, into out; false when none was in it. */
static bool mask_one(const char *s, const char *const *vals, size_t nv, base_buf *out)
{
    bool hit = false;
    out->len = 0;
    const char *p = s;
    while (*p) {
        size_t best = 0;
        for (size_t i = 0; i < nv; i++) {
            size_t l = strlen(vals[i]);
            if (l > best && strncmp(p, vals[i], l) == 0 &&
                (l >= 3 || ((p == s || !word_char((unsigned char)p[-1])) &&
                            !word_char((unsigned char)p[l]))))
                best = l;
        }
        if (best) {
            base_buf_puts(out, SECRET_MASK);
            p += best;
            hit = true;
        } else {
            base_buf_putc(out, *p++);
        }
    }
    if (!out->s)
        base_buf_put(out, "", 0);
    return hit;
}

static void wipe(char *p, size_t n)
{
    volatile char *v = p;
    while (n--)
        *v++ = 0;
}

void snap_obs_mask_secrets(build *B)
{
    const char **vals = NULL;
    size_t nv = 0, cv = 0;
    bool *read = calloc(B->nfr + 1, sizeof *read);
    if (!read) {
        B->oom = true;
        return;
    }
    for (size_t fi = 0; fi < B->nfr; fi++) {
        frame_st *F = &B->fr[fi];
        const sess_st *S = &B->ss[F->sess];
        for (size_t k = 0; k < F->nnodes; k++) {
            const axn *n = snap_obs_ax_at(F, k);
            if (n->backend <= 0)
                continue;
            /* Any role (red team s12, W1): Chromium gives a contenteditable
             * <div> role generic, its text as its value. */
            bool textish = textish_role(snap_obs_ax_role(F, n));
            unsigned kind = snap_obs_secret_kind(S, n->backend);
            if (kind)
                snap_secret_note(B->a, B->tab_id, F->f->id, F->f->loader, n->backend, kind);
            else if (textish || (n->st & ST_EDITABLE))
                kind = snap_secret_kind(B->a, B->tab_id, F->f->id, F->f->loader, n->backend);
            if (!textish && !kind)
                continue;
            const char *v = snap_obs_ax_value(F, n);
            if (kind && n->backend > 0 && v && snap_obs_masked(v) && !read[fi]) {
                read[fi] = true;   /* a password's value, bullets in the AX tree */
                snap_obs_secret_values(B, F);
            }
            /* Without the DOM snapshot every text value is withheld (walk). */
            bool unknown = !S->dom_ok && strcmp(snap_obs_ax_role(F, n), "combobox") != 0;
            if ((!kind && !unknown) || !v || !*v || snap_obs_masked(v) || snap_obs_blank(v))
                continue;
            if (kind)   /* remembered for the document's later builds (W7) */
                snap_secval_note(B->a, B->tab_id, F->f->id, F->f->loader, v, strlen(v));
            if (nv == cv) {
                size_t c = cv ? cv * 2 : 8;
                const char **nvs = realloc(vals, c * sizeof *nvs);
                if (!nvs) {
                    B->oom = true;
                    free(vals);
                    free(read);
                    return;
                }
                vals = nvs;
                cv = c;
            }
            vals[nv++] = v;
        }
    }
    free(read);
    base_buf hits = {0};
    snap_obs_remembered(B, &hits);
    size_t nh = 0;
    for (size_t i = 0; i < hits.len; i++)
        nh += hits.s[i] == 0;
    if (!nv && !nh) {
        free(vals);
        return;
    }
    /* The values point into the frames' strings, which grow below: copy
     * (with the remembered ones found, after them). */
    base_buf all = {0};
    const char **nvals = realloc(vals, (nv + nh + 1) * sizeof *nvals);
    size_t *offs = nvals ? malloc((nv + nh + 1) * sizeof *offs) : NULL;
    if (nvals)
        vals = nvals;
    for (size_t i = 0; offs && i < nv; i++) {
        offs[i] = all.len;
        base_buf_put(&all, vals[i], strlen(vals[i]) + 1);
    }
    for (size_t i = 0, at = 0; offs && i < nh; i++) {
        offs[nv + i] = all.len + at;
        at += strlen(hits.s + at) + 1;
    }
    if (hits.len)
        base_buf_put(&all, hits.s, hits.len);
    if (hits.s)
        base_memzero(hits.s, hits.cap);
    free(hits.s);
    nv += nh;
    if (!offs || all.oom || hits.oom) {
        B->oom = true;
        free(offs);
        free(all.s);
        free(vals);
        return;
    }
    for (size_t i = 0; i < nv; i++)
        vals[i] = all.s + offs[i];
    free(offs);
    base_buf mn = {0}, mv = {0};
    for (size_t fi = 0; fi < B->nfr && !B->oom; fi++) {
        frame_st *F = &B->fr[fi];
        for (size_t k = 0; k < F->nnodes; k++) {
            axn *n = snap_obs_ax_at(F, k);
            const char *name = (n->flags & AX_NAME) ? snap_obs_ax_name(F, n) : NULL;
            const char *value = snap_obs_ax_value(F, n);
            bool hn = name && mask_one(name, vals, nv, &mn);
            bool hv = value && mask_one(value, vals, nv, &mv);
            if (!hn && !hv)
                continue;
            /* [name NUL][value NUL | double], appended; the old one wiped. */
            char *old = F->str.s + n->str;
            size_t oldlen = 0;
            if (n->flags & AX_NAME)
                oldlen += strlen(old) + 1;
            if (n->flags & AX_VALUE)
                oldlen += strlen(old + oldlen) + 1;
            double num = 0;
            bool has_num = snap_obs_ax_num(F, n, &num);
            if (has_num)
                oldlen += sizeof num;
            /* mask_one left a copy in mn / mv, masked or not: append from
             * those, never from F->str itself, which the append may move
             * (a name or value read from it would be read after the free). */
            size_t off = F->str.len;
            if ((n->flags & AX_NAME) && name)
                base_buf_put(&F->str, mn.s, strlen(mn.s) + 1);
            if ((n->flags & AX_VALUE) && value)
                base_buf_put(&F->str, mv.s, strlen(mv.s) + 1);
            if (has_num)
                base_buf_put(&F->str, (const char *)&num, sizeof num);
            if (F->str.oom || off > UINT32_MAX) {
                B->oom = true;
                break;
            }
            wipe(F->str.s + n->str, oldlen);
            n->str = (uint32_t)off;
        }
    }
    if (mn.s)
        wipe(mn.s, mn.cap);
    if (mv.s)
        wipe(mv.s, mv.cap);
    if (all.s)
        wipe(all.s, all.cap);
    free(mn.s);
    free(mv.s);
    free(all.s);
    free(vals);
}

int snap_obs_ax_root(const frame_st *F)
{
    for (size_t k = 0; k < F->nnodes; k++)
        if (snap_obs_ax_cls(F, snap_obs_ax_at(F, k)) & RC_ROOT)
            return (int)k;
    return F->nnodes ? 0 : -1;
}

/* Put F's records in the order the view walk reads them: depth first
 * from the root, children in order (then the records the root does not
 * reach, in their order). Chromium does not send them so. When every
 * record is reached at most once (a tree: no shared child, no cycle), the
 * walk then never reads a record before one it has read, and frees the
 * chunks behind it (F->preorder). Otherwise nothing moves. Indices
 * change, nothing else: the walk follows the child lists, and the root
 * stays the first root. 0 or SNAP_ENOMEM. */
int snap_obs_ax_reorder(frame_st *F)
{
    int r = snap_obs_ax_root(F);
    size_t n = F->nnodes;
    if (r < 0 || n > INT32_MAX || F->nkid > INT32_MAX)
        return 0;
    typedef struct { int32_t ai; uint32_t c; } dfs;
    int32_t *q = malloc(n * sizeof *q);          /* old index -> new */
    int32_t *p = malloc(n * sizeof *p);          /* new -> old, then new kid0 */
    int32_t *kix = malloc((F->nkid ? F->nkid : 1) * sizeof *kix);
    dfs *st = NULL;
    size_t ns = 0, cap = 0;
    int rc = 0;
    bool tree = true;
    if (!q || !p || !kix) {
        rc = SNAP_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        q[i] = -1;
    size_t next = 0;
    int cur = r;
    for (;;) {
        if (cur >= 0) {
            if (q[cur] >= 0) {
                tree = false;
                break;
            }
            q[cur] = (int32_t)next;
            p[next++] = cur;
            if (ns == cap) {
                size_t nc = cap ? cap * 2 : 64;
                dfs *nst = realloc(st, nc * sizeof *nst);
                if (!nst) {
                    rc = SNAP_ENOMEM;
                    goto out;
                }
                st = nst;
                cap = nc;
            }
            st[ns++] = (dfs){cur, 0};
            cur = -1;
        }
        if (!ns)
            break;
        dfs *top = &st[ns - 1];
        size_t k0 = snap_obs_ax_at(F, (size_t)top->ai)->kid0,
               nk = snap_obs_ax_nkids(F, (size_t)top->ai);
        if (top->c == nk) {
            ns--;
            continue;
        }
        int k = F->kix[k0 + top->c++];
        if (k >= 0 && k != top->ai)
            cur = k;
    }
    if (!tree)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (q[i] < 0) {
            q[i] = (int32_t)next;
            p[next++] = (int32_t)i;
        }
    /* The child lists in the new order, with new indices; p[j] becomes
     * record j's kid0 (the old layout is read until the records move). */
    size_t pos = 0;
    for (size_t j = 0; j < n; j++) {
        size_t old = (size_t)p[j];
        size_t k0 = snap_obs_ax_at(F, old)->kid0, nk = snap_obs_ax_nkids(F, old);
        for (size_t c = 0; c < nk; c++) {
            int k = F->kix[k0 + c];
            kix[pos++] = k >= 0 ? q[k] : k;
        }
        p[j] = (int32_t)(pos - nk);
    }
    /* Move the records: each cycle of the permutation in place. */
    for (size_t i = 0; i < n; i++) {
        while ((size_t)q[i] != i) {
            size_t j = (size_t)q[i];
            axn tmp = *snap_obs_ax_at(F, i);
            *snap_obs_ax_at(F, i) = *snap_obs_ax_at(F, j);
            *snap_obs_ax_at(F, j) = tmp;
            int32_t t = q[i];
            q[i] = q[j];
            q[j] = t;
        }
    }
    for (size_t j = 0; j < n; j++)
        snap_obs_ax_at(F, j)->kid0 = (uint32_t)p[j];
    free(F->kix);
    F->kix = kix;
    kix = NULL;
    F->preorder = true;
out:
    free(q);
    free(p);
    free(kix);
    free(st);
    return rc;
}

void snap_obs_walk_frame_root(build *B, int fi, int parent, int depth)
{
    int r = snap_obs_ax_root(&B->fr[fi]);
    if (r >= 0)
        walk(B, fi, r, parent, depth);
}

/* ---- row context ---- */

static int cmp_act(const void *x, const void *y, build *B)
{
    const vnode *a = &B->v[*(const int *)x], *b = &B->v[*(const int *)y];
    int c = strcmp(snap_obs_vrole(B, a), snap_obs_vrole(B, b));
    if (c)
        return c;
    const char *an = snap_obs_vname(B, a), *bn = snap_obs_vname(B, b);
    c = strcmp(an ? an : "", bn ? bn : "");
    if (c)
        return c;
    return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

/* qsort has no context argument in C11: a small merge sort instead. */
static void sort_acts(int *v, int *tmp, size_t n, build *B)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_acts(v, tmp, h, B);
    sort_acts(v + h, tmp, n - h, B);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_act(&v[i], &v[j], B) <= 0 ? v[i++] : v[j++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

/* Members of the group (sorted by index) inside [lo, hi). */
static size_t members_in(const int *g, size_t n, int lo, int hi)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (g[m] < lo)
            a = m + 1;
        else
            b = m;
    }
    size_t c = 0;
    while (a < n && g[a] < hi && c < 2)
        a++, c++;
    return c;
}

/* Row context: the text goes into the arena after a 16-bit length (the
 * vnode keeps only its offset). ctx_begin reserves the length; ctx_end
 * fills it in and marks vnode me (false, and nothing kept, when the text
 * is empty). */
static size_t ctx_begin(build *B)
{
    size_t off = B->arena.len;
    base_buf_put(&B->arena, "\0\0", 2);
    return off;
}

static bool ctx_end(build *B, int me, size_t off)
{
    if (B->arena.oom || B->arena.len < off + 2)
        return false;
    uint16_t n = (uint16_t)(B->arena.len - off - 2);
    if (!n) {
        B->arena.len = off;
        B->arena.s[off] = 0;
        return false;
    }
    memcpy(B->arena.s + off, &n, sizeof n);
    B->v[me].aux = (uint32_t)off;
    B->v[me].vf |= VF_CTX;
    return true;
}

/* Text that says nothing alone (a separator: ":", "-", "="). */
static bool ctx_punct(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\n:;,.-=|/()[]{}*\xc2\xa0", s[i]))
            return false;
    return true;
}

static bool role_is(const build *B, int j, const char *r1, const char *r2)
{
    const char *r = snap_obs_vrole(B, &B->v[j]);
    return strcmp(r, r1) == 0 || (r2 && strcmp(r, r2) == 0);
}

/* What vnode j offers as a row's key for control me (len set): a text
 * line; a field's value (what the row holds: a key typed into a field, as
 * in a JSON editor's tree), never a secret's; an element's name, unless
 * it is a look-alike itself (tw: a drag handle in every row tells no row
 * apart) or names what me does. NULL for none (a separator). */
/* Whether vnode j is inside a secret field (the text of a contenteditable
 * is its value: never a row key; red team s12, W1). */
static bool in_secret(const build *B, int j)
{
    for (int p = B->v[j].parent; p >= 0; p = B->v[p].parent)
        if (B->v[p].kind == V_ELEM && (B->v[p].st & ST_SECRET))
            return true;
    return false;
}

static const char *ctx_text(const build *B, int j, int me, const unsigned char *tw, size_t *len)
{
    const vnode *c = &B->v[j], *m = &B->v[me];
    const char *s = NULL;
    if (in_secret(B, j))
        return NULL;
    if (c->kind == V_TEXT && !(c->vf & VF_DROP)) {
        s = snap_obs_vtext(B, c);
        *len = c->tlen;
    } else if (c->kind == V_ELEM) {
        const char *val = textish_role(snap_obs_vrole(B, c)) && !(c->st & ST_SECRET)
                          ? vvalue(B, c) : NULL;
        const char *cn = snap_obs_vname(B, c), *mn = snap_obs_vname(B, m);
        if (val && *val && !snap_obs_blank(val))
            s = val;
        else if (cn && *cn && !snap_obs_blank(cn) && !tw[j] &&
                 !(strcmp(snap_obs_vrole(B, c), snap_obs_vrole(B, m)) == 0 &&
                   snap_obs_same_text(cn, mn ? mn : "")))
            s = cn;
        *len = s ? strlen(s) : 0;
    }
    return s && *len && !ctx_punct(s, *len) ? s : NULL;
}

/* Write s as me's row context. */
static bool ctx_put(build *B, int me, const char *s, size_t len)
{
    /* Copy out first: put_page may grow the arena that s points into. */
    char *tmp = malloc(len + 1);
    if (!tmp)
        return false;
    memcpy(tmp, s, len);
    tmp[len] = 0;
    size_t off = ctx_begin(B);
    snap_obs_put_page(&B->arena, tmp, len, CTX_MAX_CHARS, 0);
    free(tmp);
    return ctx_end(B, me, off);
}

/* The key of control me in container cont. For a field (its value is the
 * row's value), the nearest text before it in the container: the label,
 * term or field name of a key/value row; for another control (a "Remove"
 * at the row's end), and when nothing precedes a field, the container's
 * first text: the row's key, a table row's first cell, a list item's
 * text. Ancestors of me are not candidates (they are containers). */
static bool ctx_label(build *B, int cont, int me, const unsigned char *tw)
{
    bool field = textish_role(snap_obs_vrole(B, &B->v[me])) ||
                 role_is(B, me, "checkbox", "radio") || role_is(B, me, "switch", "slider");
    const char *best = NULL;
    size_t blen = 0;
    int limit = 400;
    for (int j = cont + 1; j < B->v[cont].end && limit-- > 0; j++) {
        if (j == me) {
            if (best)
                break;           /* a field: the nearest text before it */
            j = B->v[me].end - 1;
            continue;
        }
        if (j < me && B->v[j].end > me)
            continue;            /* an ancestor of me */
        if (tw[j] && !textish_role(snap_obs_vrole(B, &B->v[j]))) {
            j = B->v[j].end - 1; /* a look-alike's text is its name */
            continue;
        }
        size_t len = 0;
        const char *s = ctx_text(B, j, me, tw, &len);
        if (!s)
            continue;
        best = s;
        blen = len;
        if (!field || j > me)
            break;
    }
    return best && ctx_put(B, me, best, blen);
}

/* A description list: me in a detail (dd) preceded by a term (dt): the
 * term's first text is the key. */
static bool ctx_term(build *B, int dd, int me, const unsigned char *tw)
{
    int pp = B->v[dd].parent, term = -1;
    if (pp < 0)
        return false;
    for (int j = pp + 1; j < dd; j = B->v[j].end)
        if (role_is(B, j, "term", "DescriptionListTerm"))
            term = j;
    for (int j = term + 1; term >= 0 && j < B->v[term].end; j++) {
        size_t len = 0;
        const char *s = ctx_text(B, j, me, tw, &len);
        if (s)
            return ctx_put(B, me, s, len);
    }
    return false;
}

/* A table row: its row header's text, if it has one. */
static bool ctx_rowheader(build *B, int row, int me, const unsigned char *tw)
{
    for (int j = row + 1; j < B->v[row].end; j = B->v[j].end) {
        if (!role_is(B, j, "th", "rowheader") || (j <= me && me < B->v[j].end))
            continue;
        for (int k = j; k < B->v[j].end; k++) {
            size_t len = 0;
            const char *s = ctx_text(B, k, me, tw, &len);
            if (s)
                return ctx_put(B, me, s, len);
        }
    }
    return false;
}

/* Row context of twin me (g: its group, n members, sorted by index). */
static void ctx_find(build *B, int me, const int *g, size_t n, const unsigned char *tw,
                     size_t ordinal)
{
    /* The nearest container that holds this twin alone and has text of
     * its own: the key of a key/value row, a table row's first cell, not
     * the title of the whole card or page above it (issue 13, point 8b);
     * in a description list the term; in a table the row, not the cell. */
    for (int p = B->v[me].parent; p >= 0; p = B->v[p].parent) {
        if (members_in(g, n, p, B->v[p].end) > 1)
            break;
        if (role_is(B, p, "definition", "DescriptionListDetail") && ctx_term(B, p, me, tw))
            return;
        int pp = B->v[p].parent;
        if ((role_is(B, p, "cell", "gridcell") || role_is(B, p, "LayoutTableCell", NULL)) &&
            pp >= 0 && role_is(B, pp, "row", "LayoutTableRow") &&
            members_in(g, n, pp, B->v[pp].end) == 1)
            continue;            /* the row names it */
        if (role_is(B, p, "row", "LayoutTableRow") && ctx_rowheader(B, p, me, tw))
            return;
        if (ctx_label(B, p, me, tw))
            return;
    }
    size_t off = ctx_begin(B);
    base_buf_printf(&B->arena, "#%zu of %zu", ordinal + 1, n);
    ctx_end(B, me, off);
}

/* Same role and name: look-alikes. */
static bool same_group(const build *B, int x, int y)
{
    if (strcmp(snap_obs_vrole(B, &B->v[x]), snap_obs_vrole(B, &B->v[y])) != 0)
        return false;
    const char *xn = snap_obs_vname(B, &B->v[x]), *yn = snap_obs_vname(B, &B->v[y]);
    return strcmp(xn ? xn : "", yn ? yn : "") == 0;
}

void snap_obs_row_context(build *B)
{
    size_t n = 0;
    for (size_t i = 0; i < B->nv; i++)
        if ((B->v[i].vf & (VF_ACT | VF_DROP)) == VF_ACT)
            n++;
    if (n < 2)
        return;
    int *acts = malloc(n * sizeof *acts), *tmp = malloc(n * sizeof *tmp);
    unsigned char *tw = calloc(B->nv, 1);    /* look-alikes, by vnode */
    if (!acts || !tmp || !tw) {
        free(acts), free(tmp), free(tw);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < B->nv; i++)
        if ((B->v[i].vf & (VF_ACT | VF_DROP)) == VF_ACT)
            acts[k++] = (int)i;
    sort_acts(acts, tmp, n, B);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t s = 0; s < n;) {
            size_t e = s + 1;
            while (e < n && same_group(B, acts[s], acts[e]))
                e++;
            for (size_t q = s; e - s > 1 && q < e; q++) {
                if (pass == 0)
                    tw[acts[q]] = 1;
                else         /* acts + s: the group, sorted by index */
                    ctx_find(B, acts[q], acts + s, e - s, tw, q - s);
            }
            s = e;
        }
    }
    free(acts);
    free(tmp);
    free(tw);
}
