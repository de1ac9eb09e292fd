/*
 * observe_cache.c — the cache: the last snapshot of a tab as printed lines (pages,
 * queries and text mode served from it), and what an action brought into
 * view.
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the cache: the last snapshot of a tab, as printed lines ----
 *
 * A build ends in a snap_cache: the printed lines as view nodes (the
 * printed ones of the view tree, compacted in place, each with its depth
 * and printed parent line), the strings they show (each frame's AX strings
 * and the build's arena, handed over rather than copied) and the role
 * table. Pages, queries and text pages are rendered from it on demand, so
 * no rendered copy of the page is kept; the AX records and the rest of the
 * view tree are gone by then. The cache serves later requests on the same
 * tab while nothing may have changed (snap_obs_cache_valid, observe_rebuild.c). */

void snap_cache_free(struct snap_cache *C)
{
    if (!C)
        return;
    for (size_t i = 0; i < C->nfr; i++)
        free(C->fr[i].str);
    free(C->fr);
    free(C->mut_ids);
    free(C->mut);
    free(C->l);
    free(C->rt);
    free(C->arena);
    free(C->box);
    free(C->boxb);
    free(C);
}

static const char *crole(const struct snap_cache *C, const vnode *x)
{
    return C->nrt ? C->rt[x->role] : "";
}

static const char *cname(const struct snap_cache *C, const vnode *x)
{
    return snap_obs_vname_in(C->fr[x->frame].str, x);
}

/* The text of line x (V_TEXT, or what else keeps text at toff). */
static const char *ctext(const struct snap_cache *C, const vnode *x)
{
    return (x->vf & VF_STR) ? C->fr[x->frame].str + x->toff : C->arena + x->toff;
}

/* Does line x get a ref? */
static bool cact(const vnode *x)
{
    return x->kind == V_ELEM && (x->vf & (VF_ACT | VF_DROP)) == VF_ACT;
}

/* Render one line (no indentation, no ref) into out, text cut at tmax
 * bytes. */
static bool render_cut(const struct snap_cache *C, const vnode *x, base_buf *out, size_t tmax)
{
    switch (x->kind) {
    case V_TEXT: {
        base_buf_putc(out, '"');
        char *tmp = malloc(x->tlen + 1);
        if (!tmp) {
            out->oom = true;
            return false;
        }
        memcpy(tmp, ctext(C, x), x->tlen);
        tmp[x->tlen] = 0;
        bool cut = snap_obs_put_page(out, tmp, x->tlen, tmax, PAGE_QUOTED);
        free(tmp);
        base_buf_putc(out, '"');
        return cut;
    }
    case V_FRAME: {
        const char *fname = cname(C, x);
        base_buf_puts(out, "frame");
        if (fname && *fname && !snap_obs_blank(fname)) {
            base_buf_putc(out, ' ');
            snap_obs_put_quoted(out, fname, 60);
        }
        if (snap_obs_vchild(x) < 0) {
            base_buf_puts(out, " (not loaded)");
            return false;
        }
        const cframe *F = &C->fr[snap_obs_vchild(x)];
        const char *o = F->origin[0] ? F->origin : "(not loaded)";
        base_buf_puts(out, " origin=");
        snap_obs_put_page(out, o, strlen(o), 120, 0);
        if (F->ax_rc && strncmp(F->err, "not read", 8) == 0)
            base_buf_printf(out, " (%s)", F->err);   /* its process did not answer */
        else if (F->ax_rc)
            base_buf_printf(out, " (unavailable: %s)", F->err);
        return false;
    }
    default:
        break;
    }
    const char *role = crole(C, x);
    base_buf_puts(out, role);
    if (strcmp(role, "clickable") == 0) {
        base_buf_putc(out, ' ');
        base_buf_putc(out, '"');
        char *tmp = malloc(x->tlen + 1);
        if (tmp) {
            memcpy(tmp, ctext(C, x), x->tlen);
            tmp[x->tlen] = 0;
            snap_obs_put_page(out, tmp, x->tlen, NAME_MAX_CHARS, PAGE_QUOTED);
            free(tmp);
        }
        base_buf_putc(out, '"');
    } else {
        const char *name = cname(C, x);
        if (name && *name && !snap_obs_blank(name)) {
            base_buf_putc(out, ' ');
            snap_obs_put_quoted(out, name, NAME_MAX_CHARS);
        }
    }
    return false;
}

static bool render(const struct snap_cache *C, const vnode *x, base_buf *out)
{
    return render_cut(C, x, out, TEXT_MAX_CHARS);
}

/* A text line too long to show whole, as the part around the first match
 * of query (EXCERPT bytes each side, "…" where cut) into out. False (out
 * untouched) when the line is short or the match is not in its text. */
#define EXCERPT 60
static bool render_excerpt(const struct snap_cache *C, const vnode *x, const char *query,
                           base_buf *out)
{
    size_t n = x->tlen, ql = strlen(query);
    if (x->kind != V_TEXT || n <= TEXT_MAX_CHARS)
        return false;
    const char *raw = ctext(C, x);
    char *fs = malloc(n + ql + 1);
    uint32_t *map = malloc((n + 1) * sizeof *map);
    if (!fs || !map) {
        free(fs), free(map);
        return false;
    }
    size_t fq = snap_obs_fold(query, ql, fs, NULL);
    size_t fn = snap_obs_fold(raw, n, fs + fq, map);
    size_t j = snap_obs_fold_find(fs + fq, fn, fs, fq, 0);
    size_t b = j < fn ? map[j] : n, e = j + fq < fn ? map[j + fq] : n;
    free(fs), free(map);
    if (j >= fn || e + 2 < TEXT_MAX_CHARS)
        return false;           /* no match, or it shows in the plain cut */
    size_t wb = b > EXCERPT ? b - EXCERPT : 0, we = e + EXCERPT < n ? e + EXCERPT : n;
    while (wb > 0 && ((unsigned char)raw[wb] & 0xC0) == 0x80)
        wb--;
    while (we < n && ((unsigned char)raw[we] & 0xC0) == 0x80)
        we++;
    base_buf_putc(out, '"');
    if (wb > 0)
        base_buf_puts(out, "\xe2\x80\xa6");
    snap_obs_put_page(out, raw + wb, we - wb, (size_t)-1, PAGE_QUOTED);
    if (we < n)
        base_buf_puts(out, "\xe2\x80\xa6");
    base_buf_putc(out, '"');
    return true;
}

/* The tail after the ref: value, options, states, row context. */
static void render_tail(const struct snap_cache *C, const vnode *x, base_buf *out)
{
    if (x->kind != V_ELEM)
        return;
    const char *str = C->fr[x->frame].str;
    const char *name = snap_obs_vname_in(str, x), *value = snap_obs_vvalue_in(str, x);
    double numv;
    uint32_t olen = x->vf & VF_OPTS ? x->tlen : 0;
    if (value && *value && !(x->st & ST_SECRET) && !(name && strcmp(name, value) == 0)) {
        base_buf_puts(out, " =");
        snap_obs_put_quoted(out, value, NAME_MAX_CHARS);
    }
    if (snap_obs_vnum_in(str, x, &numv) && !(value && *value) && !(x->st & ST_SECRET)) {
        char num[40];
        if (json_fmt_double(numv, num) > 0) {
            base_buf_puts(out, " =");
            base_buf_puts(out, num);
        }
    }
    if (olen) {
        base_buf_puts(out, " options:");
        base_buf_put(out, C->arena + x->toff, olen);
    }
    static const struct {
        unsigned bit;
        const char *word;
    } words[] = {
        {ST_SECRET, "secret"}, {ST_DISABLED, "disabled"}, {ST_CHECKED, "checked"},
        {ST_MIXED, "mixed"}, {ST_PRESSED, "pressed"}, {ST_EXPANDED, "expanded"},
        {ST_COLLAPSED, "collapsed"}, {ST_SELECTED, "selected"}, {ST_REQUIRED, "required"},
        {ST_READONLY, "readonly"}, {ST_INVALID, "invalid"}, {ST_FOCUSED, "focused"},
    };
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        if (!(x->st & words[k].bit))
            continue;
        /* Collapsed/expanded on a native select is noise. */
        if ((words[k].bit & (ST_COLLAPSED | ST_SELECTED)) && !(x->vf & VF_ACT))
            continue;
        if (words[k].bit == ST_COLLAPSED && olen)
            continue;
        base_buf_putc(out, ' ');
        base_buf_puts(out, words[k].word);
    }
    if (x->vf & VF_CTX) {
        uint16_t n;
        memcpy(&n, C->arena + x->aux, sizeof n);
        base_buf_puts(out, " (row: ");
        base_buf_put(out, C->arena + x->aux + 2, n);
        base_buf_putc(out, ')');
    }
}

/* Page text: one line per printed line that carries text, whole, except
 * that a line marked VF_RUN runs on from the one before it (with a space
 * when the page has one: VF_SPACE), as innerText reads. An element's name
 * is shown only when it has no text of its own in the run (a link's text
 * under it stands for its name, an aria-label is not read twice). With in
 * (a view), only the lines it keeps. */
static void page_text(const struct snap_cache *C, const unsigned char *in, base_buf *out)
{
    bool open = false;           /* a line was written and not ended */
    bool gap = false;            /* lines left out since (a view): no run across */
    for (size_t k = 0; k < C->n; k++) {
        const vnode *x = &C->l[k];
        if (in && !in[k]) {
            gap = true;
            continue;
        }
        bool run = (x->vf & VF_RUN) && open && !gap;
        gap = false;
        size_t before = out->len;
        if (run && (x->vf & VF_SPACE))
            base_buf_putc(out, ' ');
        else if (!run && open)
            base_buf_putc(out, '\n');
        size_t start = out->len;
        if (x->kind == V_TEXT || (x->kind == V_ELEM && strcmp(crole(C, x), "clickable") == 0)) {
            snap_obs_put_page(out, ctext(C, x), x->tlen, (size_t)-1, PAGE_KEEP_NL);
        } else if (x->kind == V_FRAME) {
            const char *o = snap_obs_vchild(x) >= 0 ? C->fr[snap_obs_vchild(x)].origin
                                                    : "(not loaded)";
            base_buf_puts(out, "[frame ");
            snap_obs_put_page(out, o, strlen(o), 120, 0);
            base_buf_putc(out, ']');
        } else if (x->kind == V_ELEM) {
            const char *name = cname(C, x);
            bool own = k + 1 < C->n && C->l[k + 1].parent == (int32_t)k &&
                       C->l[k + 1].kind == V_TEXT;
            if (name && *name && !snap_obs_blank(name) && !own)
                snap_obs_put_page(out, name, strlen(name), (size_t)-1, PAGE_KEEP_NL);
        }
        if (out->len > start) {
            open = true;
        } else {
            out->len = before;   /* nothing shown: no separator either */
            if (out->s)
                out->s[out->len] = 0;
        }
    }
    if (open)
        base_buf_putc(out, '\n');
}

/* A page-derived URL or origin as one header token: bytes that could end
 * the token or start a marker (controls, space, quotes, '<', '>') and the
 * characters never shown raw (gate_char_escape) are percent-encoded, and
 * it is cut at max bytes on a character boundary. */
static void put_token(base_buf *out, const char *s, size_t max)
{
    static const char HEX[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        char esc[GATE_CHAR_ESC_MAX];
        size_t l = 1, hid = c < 0x80 ? 0 : gate_char_escape(esc, s + i, n - i, &l);
        if (hid || c <= 0x20 || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '\\') {
            for (size_t j = 0; j < l; j++) {
                unsigned char x = (unsigned char)s[i + j];
                char e[4] = {'%', HEX[x >> 4], HEX[x & 15], 0};
                base_buf_puts(out, e);
            }
        } else {
            base_buf_put(out, s + i, l);
        }
        i += l;
    }
    if (n < strlen(s))
        base_buf_puts(out, "\u2026");
}

/* Header line: title, URL, origin, auth, obs, epoch, tab. */
static void header(const struct snap_cache *C, snap_agent *a, snap_tab *t, const char *obs,
                   const snap_view *v, base_buf *out)
{
    snap_frame *f = &t->frames[0];
    const char *title = C->title ? C->title : t->title ? t->title : "";
    base_buf_puts(out, "[page] title=");
    snap_obs_put_quoted(out, title, 100);
    base_buf_puts(out, " url=");
    put_token(out, f->url ? f->url : "", 200);
    base_buf_puts(out, " origin=");
    put_token(out, f->origin, 120);
    base_buf_printf(out, " auth=%s obs=%s epoch=%llu tab=t%d",
                    snap_tab_auth(a, t) ? "yes" : "no", obs,
                    (unsigned long long)gate_epoch(a->gate), t->id);
    if (snap_problems_count(t))     /* issue 13, 6c: tabs problems lists them */
        base_buf_printf(out, " problems=%zu", snap_problems_count(t));
    base_buf_puts(out, v->head);    /* issue 13, 3a: from the viewport or a ref */
    base_buf_putc(out, '\n');
}

static const char *open_fmt = "<<<page-content nonce=%s>>>\n";
static const char *close_fmt = "<<<end page-content nonce=%s>>>\n";

static void write_structured(const struct snap_cache *C, snap_tab *t, const snap_query *q,
                             const snap_view *v, const char *obs, const page_info *pi,
                             size_t text_len, snap_result *r)
{
    json_w w;
    snap_result_begin(&w, 0);
    json_w_key(&w, "obs");
    json_w_str(&w, obs);
    char tab[16];
    snprintf(tab, sizeof tab, "t%d", t->id);
    json_w_key(&w, "tab");
    json_w_str(&w, tab);
    json_w_key(&w, "url");
    snap_json_page(&w, t->frames[0].url ? t->frames[0].url : "");
    json_w_key(&w, "origin");
    snap_json_page(&w, t->frames[0].origin);
    json_w_key(&w, "title");
    snap_json_page(&w, C->title ? C->title : "");
    json_w_key(&w, "mode");
    json_w_str(&w, q->text ? "text" : "elements");
    json_w_key(&w, "frames");
    json_w_uint(&w, C->nfr);
    if (v->kind != VIEW_ALL) {
        json_w_key(&w, "from");
        json_w_str(&w, q->from);
    }
    if (v->kind == VIEW_PORT) {
        json_w_key(&w, "scroll_y");
        json_w_int(&w, v->y);
        json_w_key(&w, "viewport_height");
        json_w_int(&w, v->h);
        json_w_key(&w, "page_height");
        json_w_int(&w, v->page_h);
    }
    if (q->text) {
        json_w_key(&w, "text_chars");
        json_w_uint(&w, pi->total);
        json_w_key(&w, "text_offset");
        json_w_uint(&w, pi->first);
        json_w_key(&w, "shown_chars");
        json_w_uint(&w, pi->shown);
    } else {
        json_w_key(&w, "lines");
        json_w_uint(&w, pi->total);
        json_w_key(&w, "offset");
        json_w_uint(&w, pi->first);
        json_w_key(&w, "shown");
        json_w_uint(&w, pi->shown);
        json_w_key(&w, "refs");
        json_w_uint(&w, pi->refs);
    }
    if (q->query && *q->query) {
        json_w_key(&w, "query");
        json_w_str(&w, q->query);
        json_w_key(&w, "matches");
        json_w_uint(&w, pi->matches);
        json_w_key(&w, "matches_shown");
        json_w_uint(&w, pi->mshown);
        json_w_key(&w, "match_offsets");
        json_w_arr_begin(&w);
        for (size_t i = 0; i < pi->mshown; i++)
            json_w_uint(&w, pi->moff[i]);
        json_w_arr_end(&w);
    }
    json_w_key(&w, "truncated");
    json_w_bool(&w, pi->truncated);
    json_w_key(&w, q->text ? "next_text_offset" : "next_offset");
    if (pi->truncated)
        json_w_uint(&w, pi->next);
    else
        json_w_null(&w);
    json_w_key(&w, "chars");
    json_w_uint(&w, text_len);
    json_w_obj_end(&w);
    free(r->structured);
    r->structured = json_w_take(&w, NULL);
}

/* Line li as printed at its depth, with its ref, into ln (emptied first);
 * ctx: a context line around a match, marked '~' and without a ref (the
 * first ref of a query's result is a match's). */
static void put_line(snap_agent *a, snap_tab *t, const struct snap_cache *C, size_t li,
                     bool ctx, const char *query, base_buf *ln, page_info *pi)
{
    const vnode *c = &C->l[li];
    ln->len = 0;
    if (ctx)
        base_buf_putc(ln, '~');
    for (int d = ctx ? 1 : 0; d < c->end; d++)
        base_buf_putc(ln, ' ');
    if (!query || !render_excerpt(C, c, query, ln))
        pi->text_cut |= render(C, c, ln);
    if (cact(c) && !ctx) {
        const cframe *F = &C->fr[c->frame];
        const char *nm = cname(C, c);
        uint32_t ref = snap_ref_for(a, t->id, F->id, F->loader, c->backend, crole(C, c),
                                    nm ? nm : "");
        if (ref) {
            base_buf_printf(ln, " [e%u]", ref);
            pi->refs++;
        }
    }
    render_tail(C, c, ln);
    base_buf_putc(ln, '\n');
}

/* Element mode: lines from offset (or the query's matches) while they
 * fit. With a query, each match (at most MATCHES_PAGE a page) comes under
 * a "[match i/N @L]" line (L: its line offset, which offset=L without the
 * query opens), its ancestors not shown yet, and a line of context on
 * each side ('~'); offset counts matches. With in (a view: from), only
 * the lines it keeps count, their ancestors shown above them. */
static void page_elements(snap_agent *a, snap_tab *t, const struct snap_cache *C,
                          const snap_query *q, const unsigned char *in, size_t room,
                          base_buf *out, page_info *pi)
{
    const char *query = q->query && *q->query ? q->query : NULL;
    base_buf ln = {0}, blk = {0};
    /* Which lines count: all, or the ones matching the query (its text
     * without the ref and indentation: head and tail). */
    unsigned char *match = calloc(C->n ? C->n : 1, 1);
    unsigned char *shown = calloc(C->n ? C->n : 1, 1);
    if (!match || !shown) {
        free(match), free(shown);
        out->oom = true;
        return;
    }
    size_t total = 0;
    for (size_t k = 0; k < C->n; k++) {
        if (in && !in[k])
            continue;           /* not in the view (match[k] stays 0) */
        if (query) {
            ln.len = 0;
            render_cut(C, &C->l[k], &ln, (size_t)-1);
            render_tail(C, &C->l[k], &ln);
            if (ln.oom)
                break;
        }
        match[k] = !query || snap_obs_find_folded(ln.s, ln.len, query);
        total += match[k];
    }
    if (ln.oom) {
        free(match), free(shown), free(ln.s);
        out->oom = true;
        return;
    }
    pi->total = total;
    pi->matches = total;
    size_t idx = 0, k = 0;
    while (k < C->n && (!match[k] || idx < q->offset)) {
        idx += match[k];
        k++;
    }
    pi->first = q->offset < total ? q->offset : total;
    pi->next = pi->first;
    pi->mfirst = pi->first;
    size_t start_len = out->len;
    for (; k < C->n; k++) {
        if (!match[k])
            continue;
        if (query && pi->mshown == MATCHES_PAGE) {
            pi->truncated = true;
            break;
        }
        /* Ancestors first (once), so a page or a match keeps its place. */
        int chain[64];
        int nc = 0;
        for (int p = C->l[k].parent; p >= 0 && nc < 64; p = C->l[p].parent)
            if (!shown[p])
                chain[nc++] = p;
        page_info save = *pi;
        blk.len = 0;
        if (query)
            base_buf_printf(&blk, "[match %zu/%zu @%zu]\n", pi->next + 1, total, k);
        for (int ci = nc - 1; ci >= 0; ci--) {
            put_line(a, t, C, (size_t)chain[ci], false, NULL, &ln, pi);
            base_buf_put(&blk, ln.s, ln.len);
        }
        bool before = query && k > 0 && !shown[k - 1] && !match[k - 1] &&
                      (nc == 0 || (size_t)chain[0] != k - 1);
        bool after = query && k + 1 < C->n && !match[k + 1] && C->l[k + 1].end >= C->l[k].end;
        if (before) {
            put_line(a, t, C, k - 1, true, NULL, &ln, pi);
            base_buf_put(&blk, ln.s, ln.len);
        }
        put_line(a, t, C, k, false, query, &ln, pi);
        base_buf_put(&blk, ln.s, ln.len);
        if (after) {
            put_line(a, t, C, k + 1, true, NULL, &ln, pi);
            base_buf_put(&blk, ln.s, ln.len);
        }
        if (blk.oom || ln.oom || out->len - start_len + blk.len > room) {
            *pi = save;
            pi->truncated = true;
            break;
        }
        base_buf_put(out, blk.s, blk.len);
        for (int ci = 0; ci < nc; ci++)
            shown[chain[ci]] = 1;
        shown[k] = 1;
        if (before)
            shown[k - 1] = 1;
        if (after)
            shown[k + 1] = 1;
        if (query && pi->mshown < MATCHES_PAGE)
            pi->moff[pi->mshown++] = k;
        pi->shown++;
        pi->next++;
    }
    free(match);
    free(shown);
    free(ln.s);
    free(blk.s);
}

/* ---- what an action brought into view ---- */

/* A node's identity across builds: its frame id and backend node. */
static uint64_t ctl_key(const char *frame_id, int backend)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *s = (const unsigned char *)frame_id; *s; s++)
        h = (h ^ *s) * 1099511628211ULL;
    return (h ^ (uint32_t)backend) * 0x9E3779B97F4A7C15ULL;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

uint64_t *snap_controls_now(const snap_tab *t, size_t max_lines, size_t *n)
{
    *n = 0;
    const struct snap_cache *C = t->cache;
    if (!C || C->tab != t->id || C->nav != t->nav || C->n > max_lines)
        return NULL;
    uint64_t *v = malloc((C->n ? C->n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t k = 0; k < C->n; k++)
        if (cact(&C->l[k]))
            v[(*n)++] = ctl_key(C->fr[C->l[k].frame].id, C->l[k].backend);
    qsort(v, *n, sizeof *v, cmp_u64);
    return v;
}

char *snap_controls_new(snap_agent *a, snap_tab *t, const uint64_t *before, size_t nbefore,
                        size_t max)
{
    int tab = t->id;
    snap_result r = {0};
    int rc = snap_obs_rebuild(a, t, &r);
    snap_result_free(&r);
    t = snap_tab_by_id(a, tab);
    if (rc || !t || !t->cache)
        return NULL;
    const struct snap_cache *C = t->cache;
    base_buf out = {0}, ln = {0};
    size_t shown = 0, more = 0;
    for (size_t k = 0; k < C->n; k++) {
        const vnode *c = &C->l[k];
        if (!cact(c))
            continue;
        const cframe *F = &C->fr[c->frame];
        uint64_t key = ctl_key(F->id, c->backend);
        if (bsearch(&key, before, nbefore, sizeof *before, cmp_u64))
            continue;
        if (shown == max) {
            more++;
            continue;
        }
        ln.len = 0;
        render(C, c, &ln);
        const char *nm = cname(C, c);
        uint32_t ref = snap_ref_for(a, tab, F->id, F->loader, c->backend, crole(C, c),
                                    nm ? nm : "");
        if (!ref)
            continue;
        base_buf_printf(&ln, " [e%u]", ref);
        render_tail(C, c, &ln);
        base_buf_putc(&ln, '\n');
        base_buf_put(&out, ln.s, ln.len);
        shown++;
    }
    if (more)
        base_buf_printf(&out, "and %zu more (a snapshot lists them)\n", more);
    free(ln.s);
    if (out.oom || !out.len) {
        free(out.s);
        return NULL;
    }
    out.s[out.len - 1] = 0;         /* no final line break */
    return out.s;
}

/* ---- text targets (observe_find.c reads the lines through these) ---- */

const struct snap_cache *snap_cache_fresh(snap_agent *a, int tab, snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, tab);
    if (t && !t->closed && t->nframes && !snap_obs_cache_valid(a, t, NULL) &&
        snap_obs_rebuild(a, t, r))
        return NULL;
    t = snap_tab_by_id(a, tab);
    if (!t || t->closed || !t->nframes || !t->cache) {
        snap_fail(r, SNAP_ENOTAB, "the tab closed");
        return NULL;
    }
    return t->cache;
}

size_t snap_cache_nlines(const struct snap_cache *C)
{
    return C->n;
}

/* Line k: its text (a text line, or a clickable's) or a control's name in
 * *hay (*hn bytes; NULL for other lines), its frame; and whether it is a
 * text line. */
const vnode *snap_cache_line(const struct snap_cache *C, size_t k, const char **hay, size_t *hn,
                             const char **frame_id, const char **loader)
{
    const vnode *x = &C->l[k];
    const char *nm = x->kind == V_ELEM && cact(x) ? cname(C, x) : NULL;
    *hay = x->kind == V_TEXT || (cact(x) && strcmp(crole(C, x), "clickable") == 0) ? ctext(C, x)
           : nm;
    *hn = *hay == nm ? (nm ? strlen(nm) : 0) : x->tlen;
    *frame_id = C->fr[x->frame].id;
    *loader = C->fr[x->frame].loader;
    return x;
}

const vnode *snap_cache_line_vnode(const struct snap_cache *C, size_t k)
{
    return &C->l[k];
}

bool snap_cache_act(const vnode *x)
{
    return cact(x);
}

const char *snap_cache_role(const struct snap_cache *C, const vnode *x)
{
    return crole(C, x);
}

/* Line k as the snapshot prints it (text cut at max bytes), row context
 * included, without its ref; then its origin when not the main frame's. */
void snap_cache_render(const struct snap_cache *C, size_t k, size_t max, base_buf *out)
{
    render_cut(C, &C->l[k], out, max);
    render_tail(C, &C->l[k], out);
    if (C->l[k].frame && C->fr[C->l[k].frame].origin[0]) {
        base_buf_puts(out, " in frame ");
        snap_obs_put_page(out, C->fr[C->l[k].frame].origin, strlen(C->fr[C->l[k].frame].origin),
                          120, 0);
    }
}

int snap_cache_parent(const struct snap_cache *C, size_t k)
{
    return C->l[k].parent;
}

int snap_build(snap_agent *a, snap_tab *t, const snap_query *q, snap_result *r)
{
    snap_query dq = {0};
    if (!q)
        q = &dq;
    if (!t || t->closed || !t->nframes)
        return snap_fail(r, SNAP_ENOTAB, "no open tab to observe");
    snap_sync(a);
    t = snap_tab_by_id(a, t->id);
    if (!t || t->closed || !t->nframes)
        return snap_fail(r, SNAP_ENOTAB, "the tab closed");
    int tab = t->id;
    snap_view vw;
    int rc = snap_obs_view_begin(a, t, q->from, &vw, r);
    if (rc)
        return rc;
    t = snap_tab_by_id(a, tab);
    bool warm = t && snap_obs_cache_valid(a, t, q);
    t = snap_tab_by_id(a, tab);     /* the counter reads may have let events in */
    /* A warm cache serves a viewport view only with its boxes read again
     * now (R5: layout moves without a mutation). */
    if (t && warm && t->cache && vw.kind == VIEW_PORT &&
        snap_obs_view_relayout(a, t, t->cache) != 0)
        warm = false;
    t = snap_tab_by_id(a, tab);     /* the read may have let events in */
    if (!t || !warm || !t->cache) {
        rc = t ? snap_obs_rebuild(a, t, r) : snap_fail(r, SNAP_ENOTAB, "the tab closed");
        if (rc)
            return rc;
        t = snap_tab_by_id(a, tab);     /* a walker view's boxes: read now */
        if (t && t->cache && t->cache->walked && vw.kind == VIEW_PORT)
            snap_obs_walk_boxes(a, t, t->cache);
    }
    /* The page may have scrolled while it was read. */
    if (vw.kind == VIEW_PORT && (rc = snap_obs_view_metrics(a, tab, &vw, r)))
        return rc;
    /* A ref of a view of the other kind (AX, walker): its node in this one's. */
    t = snap_tab_by_id(a, tab);
    if (vw.kind == VIEW_REF && t && t->cache && vw.backend &&
        (vw.backend < 0) != t->cache->walked)
        vw.backend = snap_ref_node_as(a, vw.ref, t->cache->walked);
    t = snap_tab_by_id(a, tab);
    if (!t || !t->cache)
        return snap_fail(r, SNAP_ENOTAB, "the tab closed");
    const struct snap_cache *C = t->cache;
    unsigned char *in = snap_obs_view_mask(a, C, &vw, r, &rc);
    if (rc)
        return rc;

    if (!r->obs[0])
        snap_obs_issue(a, t, r->obs);
    size_t budget = q->budget_chars ? q->budget_chars
                    : a->o.budget_chars ? a->o.budget_chars : DEFAULT_BUDGET;
    if (budget < MIN_BUDGET)
        budget = MIN_BUDGET;
    base_buf out = {0};
    header(C, a, t, r->obs, &vw, &out);
    base_buf_printf(&out, open_fmt, a->nonce);
    char close_line[96];
    snprintf(close_line, sizeof close_line, close_fmt, a->nonce);
    /* Room for the content: the budget less header, markers and the
     * longest footer and note (below 280 bytes). */
    size_t fixed = out.len + strlen(close_line) + 280 + (C->deep ? 320 : 0);
    size_t room = budget > fixed ? budget - fixed : 0;
    page_info pi = {0};
    if (q->text) {
        /* The page text, rendered for this page and dropped after it. */
        base_buf txt = {0};
        page_text(C, in, &txt);
        if (txt.oom) {
            free(txt.s);
            free(out.s);
            free(in);
            return snap_fail(r, SNAP_ENOMEM, "out of memory building the snapshot");
        }
        if (q->query && *q->query)
            snap_obs_page_text_matches(&txt, q, room, &out, &pi);
        else
            snap_obs_page_chars(&txt, q, room, &out, &pi);
        free(txt.s);
    } else {
        page_elements(a, t, C, q, in, room, &out, &pi);
    }
    free(in);
    base_buf_puts(&out, close_line);
    if (q->text && q->query && *q->query) {
        if (pi.mshown == 0)
            base_buf_puts(&out, "[end] no match at or after text_offset\n");
        else
            base_buf_printf(&out, "[%s] matches %zu-%zu of %zu", pi.truncated ? "more" : "end",
                            pi.mfirst + 1, pi.mfirst + pi.mshown, pi.matches);
        if (pi.mshown && pi.truncated)
            base_buf_printf(&out, "; next: text_offset=%zu with the same query", pi.next);
        if (pi.mshown)
            base_buf_putc(&out, '\n');
    } else if (q->text) {
        if (pi.truncated)
            base_buf_printf(&out,
                            "[more] text %zu-%zu of %zu chars shown; next: text_offset=%zu\n",
                            pi.first, pi.first + pi.shown, pi.total, pi.next);
        else
            base_buf_printf(&out, "[end] text %zu-%zu of %zu chars\n", pi.first,
                            pi.first + pi.shown, pi.total);
    } else {
        const char *what = q->query && *q->query ? "matching lines" : "lines";
        if (pi.truncated)
            base_buf_printf(&out, "[more] %s %zu-%zu of %zu shown, %zu left; next: offset=%zu "
                            "%s\n", what, pi.first + 1, pi.first + pi.shown, pi.total,
                            pi.total - pi.first - pi.shown, pi.next,
                            q->query && *q->query ? "with the same query" : "(or a query)");
        else if (pi.first > 0 || (q->query && *q->query))
            base_buf_printf(&out, "[end] %s %zu-%zu of %zu\n", what,
                            pi.total ? pi.first + 1 : 0, pi.first + pi.shown, pi.total);
        if (pi.text_cut)
            base_buf_printf(&out,
                            "[note] text lines are cut at %d chars (\xe2\x80\xa6); text mode "
                            "has the whole text\n",
                            TEXT_MAX_CHARS);
    }
    if (C->deep)
        base_buf_printf(&out, "[note] the page nests deeper than %d levels: the %zu nodes below "
                        "are shown flattened under their ancestor at that depth (in page order, "
                        "without their structure)%s\n", MAX_DEPTH, C->deep,
                        C->deep_cut ? "; past a bound some were left out (the browser's tree "
                        "repeats nodes)" : "");
    if (out.oom) {
        free(out.s);
        return snap_fail(r, SNAP_ENOMEM, "out of memory building the snapshot");
    }
    write_structured(C, t, q, &vw, r->obs, &pi, out.len, r);
    if (r->text && *r->text) {
        base_buf both = {0};
        base_buf_puts(&both, r->text);
        if (r->text[strlen(r->text) - 1] != '\n')
            base_buf_putc(&both, '\n');
        base_buf_put(&both, out.s, out.len);
        free(out.s);
        if (both.oom) {
            free(both.s);
            return snap_fail(r, SNAP_ENOMEM, "out of memory");
        }
        out = both;
    }
    free(r->text);
    r->text = out.s ? out.s : calloc(1, 1);
    r->code = 0;
    return 0;
}

int snap_observe(snap_agent *a, const snap_query *q, snap_result *r)
{
    memset(r, 0, sizeof *r);
    if (snap_sync(a))
        return snap_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return snap_fail(r, SNAP_ENOTAB, "no open tab; open a URL first");
    if (t->dialog_open)
        return snap_fail(r, SNAP_EDIALOG, "tab t%d has a %s dialog open; answer it first",
                         t->id, t->dialog_type);
    snap_gated gg;
    snap_gate_in gi = {.tool = q && q->text ? "text" : "snapshot", .tab = t->id};
    int rc = snap_gate_ask(a, &gi, &gg, r);
    if (rc)
        return rc;
    t = snap_tab_current(a);
    char note[600];
    snap_nav_note(a, t, note, sizeof note);
    if (note[0]) {
        free(r->text);
        r->text = strdup(note);
    }
    int tab = t ? t->id : 0;
    rc = t ? snap_build(a, t, q, r) : snap_fail(r, SNAP_ENOTAB, "the tab closed");
    /* A dialog that opened while the page was read: the reads it stopped
     * failed at once (the agent's hold), and the result says what to do. */
    t = rc ? snap_tab_by_id(a, tab) : NULL;
    if (t && !t->closed && t->dialog_open)
        rc = snap_fail(r, SNAP_EDIALOG, "tab t%d has a %s dialog open (it opened while the page "
                       "was read); answer it first", t->id, t->dialog_type);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}
