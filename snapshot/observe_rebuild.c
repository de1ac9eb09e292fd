/*
 * observe_rebuild.c — reading a page into a tab's cache (the build's
 * phases, from the fetch to the printed lines handed over to a new
 * snap_cache) and whether the cache can serve again (the warm cache).
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The frames as they stand: ids, parents, documents, sessions. */
static uint64_t frames_sig(const snap_tab *t)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < t->nframes; i++) {
        const snap_frame *f = &t->frames[i];
        const char *parts[4] = {f->id, f->parent, f->loader, f->session};
        for (int k = 0; k < 4; k++) {
            for (const char *p = parts[k]; *p; p++)
                h = (h ^ (unsigned char)*p) * 1099511628211ULL;
            h = (h ^ 0xff) * 1099511628211ULL;
        }
        h = (h ^ (f->gone ? 1u : 2u)) * 1099511628211ULL;
    }
    return h;
}

/* The origin a frame line shows, never empty (issue 13, point 8a): the
 * browser reports "://" for an about:blank or about:srcdoc frame, whose
 * content the parent wrote (its real origin is the parent's, or an opaque
 * one when sandboxed: the line does not guess which), and "null" for an
 * opaque origin. */
static void frame_origin_shown(const snap_frame *f, char *out, size_t cap)
{
    const char *o = f->origin;
    const char *u = f->url ? f->url : "";
    if (*o && strcmp(o, "://") != 0 && strcmp(o, "null") != 0)
        snprintf(out, cap, "%s", o);
    else if (strncmp(u, "about:", 6) == 0 || !*u)
        snprintf(out, cap, "(about:blank/srcdoc, content from the parent)");
    else if (strcmp(o, "null") == 0)
        snprintf(out, cap, "opaque (sandboxed or data:)");
    else
        snprintf(out, cap, "(not loaded)");
}

/* Hand the build's printed lines and strings over to a new cache (NULL
 * when out of memory): the vnodes of L's lines are compacted in place at
 * the start of B->v (L's vnodes are increasing, so line k never overwrites
 * a vnode a later line reads), and the array is shrunk to them. */
static struct snap_cache *cache_from(build *B, const lines *L)
{
    struct snap_cache *C = calloc(1, sizeof *C);
    if (!C)
        return NULL;
    C->fr = calloc(B->nfr ? B->nfr : 1, sizeof *C->fr);
    if (!C->fr || (!B->arena.s && !(B->arena.s = calloc(1, 1)))) {
        snap_cache_free(C);
        return NULL;
    }
    C->nfr = B->nfr;
    for (size_t i = 0; i < B->nfr; i++) {
        frame_st *F = &B->fr[i];
        cframe *cf = &C->fr[i];
        snprintf(cf->id, sizeof cf->id, "%s", F->f->id);
        snprintf(cf->loader, sizeof cf->loader, "%s", F->f->loader);
        frame_origin_shown(F->f, cf->origin, sizeof cf->origin);
        cf->ax_rc = F->ax_rc;
        snprintf(cf->err, sizeof cf->err, "%s", F->err);
        cf->str = F->str.s;
        memset(&F->str, 0, sizeof F->str);
    }
    C->title = B->title;
    /* Where each line lies on the page (read from the tree before it is
     * compacted): a viewport view picks lines by it. */
    C->box = snap_obs_line_boxes(B, L, &C->boxb);
    if (C->box && !C->boxb) {
        free(C->box);            /* out of memory: no view from the viewport */
        C->box = NULL;
    }
    C->doc_h = B->nfr ? B->ss[B->fr[0].sess].doc_h : 0;
    C->lay_sig = B->nfr ? snap_obs_lay_sig(&B->ss[B->fr[0].sess]) : 0;
    for (size_t k = 0; k < L->n; k++) {
        vnode x = B->v[L->l[k].v];
        x.parent = L->l[k].parent;
        x.end = L->l[k].depth;
        B->v[k] = x;
    }
    C->n = L->n;
    C->l = B->v;
    B->v = NULL;
    B->nv = B->capv = 0;
    vnode *nl = realloc(C->l, (C->n ? C->n : 1) * sizeof *nl);
    if (nl)
        C->l = nl;
    C->rt = B->rt;
    C->nrt = B->nrt;
    B->rt = NULL;
    B->nrt = B->caprt = 0;
    C->arena = B->arena.s;
    char *na = realloc(C->arena, B->arena.len + 1);
    if (na)
        C->arena = na;
    memset(&B->arena, 0, sizeof B->arena);
    return C;
}

/* Frames not placed under an Iframe node (owner unknown, or not in the
 * parent's tree yet) go at the end under their own frame line, each after
 * its parent: never dropped. */
static void place_orphans(build *B)
{
    bool progress = true;
    while (progress && !B->oom) {
        progress = false;
        for (size_t i = 1; i < B->nfr && !B->oom; i++) {
            frame_st *F = &B->fr[i];
            if (F->placed || (F->parent >= 0 && !B->fr[F->parent].placed))
                continue;
            /* A frame that is not in the page: its parent is gone, or the
             * parent's document does not own it (a page left for the
             * back/forward cache keeps its frames alive, and an iframe
             * removed a moment ago may not be reported detached yet). No
             * line for it. A frame the parent owns but whose iframe is not
             * in the parent's tree (inside hidden content) still shows. A
             * frame with no known parent shows only when the main frame's
             * document owns it: an out-of-process frame of a page left for
             * the back/forward cache, or of a parent whose link was lost,
             * is announced by its target alone and showed as a top-level
             * frame line on later pages (issue 13, point 8a). */
            if ((F->parent < 0 && F->f->parent[0]) ||
                (F->parent < 0 && (!F->own_done || F->own_rc || F->owner <= 0)) ||
                (F->parent >= 0 && (F->own_rc == CDP_EPROTOCOL || B->fr[F->parent].ghost))) {
                F->placed = F->ghost = true;
                progress = true;
                continue;
            }
            int v = snap_obs_vnew(B, -1, V_FRAME, F->parent >= 0 ? F->parent : 0);
            if (v < 0)
                return;
            B->v[v].toff = (uint32_t)i + 1;
            B->fr[i].placed = true;
            snap_obs_walk_frame_root(B, (int)i, v, 1);
            snap_obs_finish(B, v);
            progress = true;
        }
    }
}

/* The warm cache (issue 13, point 4b). Can t's cached snapshot serve
 * query q? While nothing may have changed: the same document and frames,
 * no state-changing command let out by the sink since (input, navigation,
 * a page script that changes the page: a->changes), every frame's
 * mutation counter in cdpgate's isolated world as it was just before
 * the build (one pipelined read per frame; a failed read is a change),
 * and not older than CACHE_MAX_AGE_MS (what changes without a mutation
 * or an input event: CSS-only changes, a value or state set by script,
 * closed shadow roots). Read-only commands, the gate's answers to paused
 * requests and the page's own network traffic do not count. */
bool snap_obs_cache_valid(snap_agent *a, snap_tab *t, const snap_query *q)
{
    (void)q;
    const struct snap_cache *C = t->cache;
    if (!C)
        return false;
    int64_t age = base_now_ms() - C->built_ms;
    if (C->tab != t->id || C->nav != t->nav || C->changes != a->changes || !C->mut_ok ||
        C->sig != frames_sig(t) || age < 0 || age > CACHE_MAX_AGE_MS)
        return false;
    int64_t *now = calloc(C->nmut ? C->nmut : 1, sizeof *now);
    int tab = t->id;
    bool same = now && snap_frame_mut_read(a, tab, C->nmut,
                                           (const char (*)[SNAP_ID_MAX])C->mut_ids, now) == 0;
    for (size_t i = 0; same && i < C->nmut; i++)
        same = now[i] >= 0 && now[i] == C->mut[i];
    free(now);
    /* The reads may have let events in: the tab is looked at again. */
    t = snap_tab_by_id(a, tab);
    return same && t && t->cache == C && C->nav == t->nav && C->sig == frames_sig(t);
}

/* A tab the walker will read: its one live frame is the main frame, in
 * process (observe_render.c's test, before the frames are looked at again). */
static bool walker_tab(const snap_agent *a, const snap_tab *t)
{
    size_t live = 0;
    for (size_t i = 0; i < t->nframes; i++)
        live += !t->frames[i].gone;
    return !a->o.ax_tree && live == 1 && t->nframes && !t->frames[0].gone &&
           !t->frames[0].oopif;
}

/* The mutation counters of t's live frames, read (installed the first
 * time in a document) just before a build: *C gets them. A tab the walker
 * reads (defer): only the ids; the walker's batch reads the counter just
 * before its walk (rebuild_read), one round trip less. */
static void mut_before(snap_agent *a, snap_tab *t, struct snap_cache *M, bool defer)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nframes; i++)
        n += !t->frames[i].gone;
    M->mut_ok = false;
    M->nmut = 0;
    if (!n || n > 64)
        return;
    M->mut_ids = calloc(n, sizeof *M->mut_ids);
    M->mut = calloc(n, sizeof *M->mut);
    if (!M->mut_ids || !M->mut)
        return;
    for (size_t i = 0; i < t->nframes; i++)
        if (!t->frames[i].gone)
            snprintf(M->mut_ids[M->nmut++], SNAP_ID_MAX, "%s", t->frames[i].id);
    if (defer)
        return;
    int tab = t->id;
    bool ok = snap_frame_mut_read(a, tab, M->nmut, (const char (*)[SNAP_ID_MAX])M->mut_ids,
                                  M->mut) == 0;
    /* -1: installed now, so it counts from 0. */
    for (size_t i = 0; ok && i < M->nmut; i++) {
        if (M->mut[i] == -1)
            M->mut[i] = 0;
        ok = M->mut[i] >= 0;
    }
    M->mut_ok = ok;
}

/* Read the page and replace t->cache, with the mutation counters M read
 * just before (taken on success). 0 or a SNAP_E* code with r filled. */
static int rebuild_read(snap_agent *a, snap_tab *t, struct snap_cache *M, bool defer,
                        int64_t *ph, snap_result *r)
{
    snap_cache_free(t->cache);
    t->cache = NULL;
    build B = {0};
    B.tail_text = B.run_last = -1;
    B.a = a;
    B.t = t;
    B.tab_id = t->id;
    int tab = t->id;
    uint64_t nav = t->nav, sig = frames_sig(t), changes = a->changes;
    B.mut_defer = defer && M->nmut == 1 ? &M->mut[0] : NULL;
    int rc = snap_obs_fetch(&B);
    ph[2] = base_now_ns();
    /* Deferred: installed now (-1) counts from 0; not read (the walker was
     * not used after all, or the read failed): no warm cache. */
    if (B.mut_defer) {
        if (M->mut[0] == -1)
            M->mut[0] = 0;
        M->mut_ok = B.mut_read && M->mut[0] >= 0;
    }
    if (rc) {
        char why[200];
        snprintf(why, sizeof why, "%s", B.nfr && B.fr[0].err[0] ? B.fr[0].err
                 : cdp_conn_error(a->c));
        snap_obs_free_build(&B);
        if (rc == SNAP_ENOMEM)
            return snap_fail(r, rc, "out of memory building the snapshot");
        return snap_fail(r, SNAP_EBROWSER, "cannot read the page's accessibility tree: %s",
                         why);
    }
    for (size_t i = 0; i < B.nfr; i++)
        B.hintv += B.fr[i].nnodes;
    B.hintv += B.nfr;
    /* The view tree: the main frame, child frames under their Iframe
     * nodes, the rest after. */
    for (size_t i = 0; i < B.nfr && !rc; i++)
        rc = snap_obs_ax_reorder(&B.fr[i]);
    ph[3] = base_now_ns();
    if (rc) {
        snap_obs_free_build(&B);
        return snap_fail(r, rc, "out of memory building the snapshot");
    }
    snap_obs_mask_secrets(&B);
    ph[4] = base_now_ns();
    if (B.oom) {
        snap_obs_free_build(&B);
        return snap_fail(r, SNAP_ENOMEM, "out of memory building the snapshot");
    }
    int rt = snap_obs_ax_root(&B.fr[0]);
    B.title = rt >= 0 ? snap_obs_ax_name(&B.fr[0], snap_obs_ax_at(&B.fr[0], (size_t)rt)) : NULL;
    B.deep_left = 2 * B.hintv + 1024;
    B.fr[0].placed = true;
    snap_obs_walk_frame_root(&B, 0, -1, 0);
    place_orphans(&B);
    ph[5] = base_now_ns();
    /* The view has what it shows: the records and child lists go (the
     * strings stay, the view points into them). */
    for (size_t i = 0; i < B.nfr; i++) {
        frame_st *F = &B.fr[i];
        for (size_t c = 0; c < F->nchunk; c++)
            free(F->nodes[c]);
        free(F->nodes);
        free(F->kix);
        F->nodes = NULL;
        F->kix = NULL;
        F->nnodes = F->nkid = F->nchunk = F->released = 0;
    }
    snap_obs_row_context(&B);
    ph[6] = base_now_ns();
    lines L = {0};
    for (size_t i = 0; i < B.nv && !B.oom; i = (size_t)B.v[i].end)
        snap_obs_collect_lines(&B, &L, (int)i, 0, -1);
    snap_obs_dedup_lines(&B, &L);
    ph[7] = base_now_ns();
    ph[9] = (int64_t)B.hintv;
    ph[10] = (int64_t)L.n;
    ph[11] = (int64_t)B.nfr;
    struct snap_cache *C = NULL;
    if (!B.oom && !B.arena.oom)
        C = cache_from(&B, &L);
    if (C) {
        C->deep = B.deep;
        C->deep_cut = B.deep_cut;
        C->walked = B.nfr && B.fr[0].walked;
    }
    free(L.l);
    snap_obs_free_build(&B);
    ph[8] = base_now_ns();
    if (!C)
        return snap_fail(r, SNAP_ENOMEM, "out of memory building the snapshot");
    C->tab = tab;
    C->nav = nav;
    C->sig = sig;
    C->changes = changes;
    C->built_ms = base_now_ms();
    C->mut_ids = M->mut_ids;         /* taken */
    C->mut = M->mut;
    C->nmut = M->nmut;
    C->mut_ok = M->mut_ok;
    M->mut_ids = NULL;
    M->mut = NULL;
    /* The event listener may have moved the tabs while the replies came. */
    t = snap_tab_by_id(a, tab);
    if (!t) {
        snap_cache_free(C);
        return snap_fail(r, SNAP_ENOTAB, "the tab closed");
    }
    t->cache = C;
    return 0;
}

/* Read the page and replace t->cache. 0 or a SNAP_E* code with r filled. */
int snap_obs_rebuild(snap_agent *a, snap_tab *t, snap_result *r)
{
    int tab = t->id;
    struct snap_cache M = {0};
    /* Phase times (ns) of a cold build for snap_opts.timing: start,
     * counters, fetch, reorder, mask, walk, row context, lines, cache;
     * then nodes, lines, frames. */
    int64_t ph[12] = {base_now_ns()};
    a->builds++;
    snap_cache_free(t->cache);
    t->cache = NULL;
    bool defer = walker_tab(a, t);
    mut_before(a, t, &M, defer);
    ph[1] = base_now_ns();
    t = snap_tab_by_id(a, tab);
    int rc = t ? rebuild_read(a, t, &M, defer, ph, r)
               : snap_fail(r, SNAP_ENOTAB, "the tab closed");
    free(M.mut_ids);
    free(M.mut);
    if (a->o.timing && rc == 0) {
        static const char *const NAME[] = {"counters", "fetch", "reorder", "mask", "walk",
                                           "rows", "lines", "cache"};
        fprintf(stderr, "timing: snapshot");
        for (int i = 1; i <= 8; i++)
            fprintf(stderr, " %s=%.1f", NAME[i - 1], (double)(ph[i] - ph[i - 1]) / 1e6);
        fprintf(stderr, " total_ms=%.1f nodes=%lld lines=%lld frames=%lld\n",
                (double)(ph[8] - ph[0]) / 1e6, (long long)ph[9], (long long)ph[10],
                (long long)ph[11]);
    }
    return rc;
}
