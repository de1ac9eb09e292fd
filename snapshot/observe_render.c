/*
 * observe_render.c — rendering the view tree: lines, budget and paging, text-mode
 * pages and query excerpts, the whole snapshot (snap_build).
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void snap_obs_collect_lines(build *B, lines *L, int i, int depth, int pline)
{
    /* Iterative over siblings, recursive over printed depth. */
    const vnode *x = &B->v[i];
    if (x->vf & VF_DROP)
        return;
    int me = pline;
    if (x->kind != V_FLAT) {
        if (L->n == L->cap) {
            size_t nc = L->cap ? L->cap * 2 : 256;
            line *nl = realloc(L->l, nc * sizeof *nl);
            if (!nl) {
                B->oom = true;
                return;
            }
            L->l = nl;
            L->cap = nc;
        }
        L->l[L->n] = (line){i, depth, pline};
        me = (int)L->n++;
        depth++;
    }
    if (x->kind == V_TEXT || (x->kind == V_ELEM && strcmp(snap_obs_vrole(B, x), "clickable") == 0))
        return;
    for (int j = i + 1; j < B->v[i].end; j = B->v[j].end)
        snap_obs_collect_lines(B, L, j, depth, me);
}

/* Does text vnode t say the same as the name of element e? */
static bool text_is_name(build *B, const vnode *t, const vnode *e)
{
    const char *en = e->kind == V_ELEM ? snap_obs_vname(B, e) : NULL;
    if (t->kind != V_TEXT || !en || !*en)
        return false;
    char *p = snap_obs_vtext(B, t);
    char save = p[t->tlen];
    p[t->tlen] = 0;
    bool same = snap_obs_same_text(p, en);
    p[t->tlen] = save;
    return same;
}

/* Drop text lines that repeat a name: the element's own text under it, and
 * a label next to its control ("Full name" before textbox "Full name"). */
void snap_obs_dedup_lines(build *B, lines *L)
{
    int *map = malloc((L->n ? L->n : 1) * sizeof *map);
    if (!map)
        return;     /* keeping the duplicates is harmless */
    size_t w = 0;
    for (size_t k = 0; k < L->n; k++) {
        const line *l = &L->l[k];
        const vnode *x = &B->v[l->v];
        bool drop = false;
        if (x->kind == V_TEXT) {
            if (l->parent >= 0 && text_is_name(B, x, &B->v[L->l[l->parent].v]))
                drop = true;
            for (int d = -1; d <= 1 && !drop; d += 2) {
                size_t o = d < 0 ? k - 1 : k + 1;
                if ((d < 0 && k == 0) || o >= L->n)
                    continue;
                const line *m = &L->l[o];
                if (m->depth == l->depth && m->parent == l->parent &&
                    (B->v[m->v].vf & VF_ACT) && text_is_name(B, x, &B->v[m->v]))
                    drop = true;
            }
        }
        map[k] = drop ? -1 : (int)w;
        if (!drop) {
            line nl = *l;
            nl.parent = nl.parent >= 0 ? map[nl.parent] : -1;
            L->l[w++] = nl;
        }
    }
    L->n = w;
    free(map);
}

/* ---- text mode pages ---- */

/* Text mode: characters from text_offset, cut at a character boundary
 * (a page ends at a line break when one is near). With a query:
 * snap_obs_page_text_matches. */
void snap_obs_page_chars(const base_buf *txt, const snap_query *q, size_t room, base_buf *out,
                         page_info *pi)
{
    const char *s = txt->s ? txt->s : "";
    size_t n = txt->len;
    size_t start = q->text_offset < n ? q->text_offset : n;
    while (start < n && ((unsigned char)s[start] & 0xC0) == 0x80)
        start++;
    size_t end = start + room < n ? start + room : n;
    while (end > start && end < n && ((unsigned char)s[end] & 0xC0) == 0x80)
        end--;
    /* Prefer to end after a newline when one is near the cut. */
    if (end < n) {
        size_t e = end;
        while (e > start && s[e - 1] != '\n' && end - e < 300)
            e--;
        if (e > start && s[e - 1] == '\n')
            end = e;
    }
    base_buf_put(out, s + start, end - start);
    if (end > start && s[end - 1] != '\n')
        base_buf_putc(out, '\n');
    pi->total = n;
    pi->first = start;
    pi->shown = end - start;
    pi->next = end;
    pi->truncated = end < n;
}

/* The bounds of the text shown around a match [b, e) of s (n bytes):
 * TEXT_AROUND chars each side, moved in to a word or line boundary and a
 * character boundary, never past lo on the left. */
static void around(const char *s, size_t n, size_t b, size_t e, size_t lo, size_t *wb,
                   size_t *we)
{
    size_t x = b > lo + TEXT_AROUND ? b - TEXT_AROUND : lo;
    size_t y = e + TEXT_AROUND < n ? e + TEXT_AROUND : n;
    if (x > lo) {
        size_t z = x;
        while (z < b && s[z - 1] != ' ' && s[z - 1] != '\n')
            z++;
        x = z < b ? z : x;
    }
    if (y < n) {
        size_t z = y;
        while (z > e && s[z] != ' ' && s[z] != '\n')
            z--;
        y = z > e ? z : y;
    }
    while (x > lo && ((unsigned char)s[x] & 0xC0) == 0x80)
        x--;
    while (y < n && y > e && ((unsigned char)s[y] & 0xC0) == 0x80)
        y--;
    *wb = x;
    *we = y;
}

/* Text mode with a query: each match at or after text_offset (at most
 * TEXT_MATCHES_PAGE a page) under "[match i/N @text_offset=O]" with the
 * text around it (around()); matches whose surroundings overlap share
 * one excerpt. The text and the query are folded once (snap_obs_fold),
 * the text with a map back to its offsets: linear in the text. next is
 * just past the last match shown. */
void snap_obs_page_text_matches(const base_buf *txt, const snap_query *q, size_t room,
                                 base_buf *out, page_info *pi)
{
    const char *s = txt->s ? txt->s : "";
    size_t n = txt->len, ql = strlen(q->query);
    char *fs = malloc(n + ql + 1);
    uint32_t *map = malloc((n + 1) * sizeof *map);
    if (!fs || !map) {
        free(fs), free(map);
        out->oom = true;
        return;
    }
    size_t fq = snap_obs_fold(q->query, ql, fs, NULL);
    char *ft = fs + fq;
    size_t fn = snap_obs_fold(s, n, ft, map);
    size_t from = q->text_offset < n ? q->text_offset : n;
    size_t count = 0, before = 0, shown_to = from, start_len = out->len;
    for (size_t j = snap_obs_fold_find(ft, fn, fs, fq, 0); fq && j < fn;
         j = snap_obs_fold_find(ft, fn, fs, fq, j + 1)) {
        count++;
        before += map[j] < from;
    }
    pi->total = n;
    pi->first = pi->next = from;
    for (size_t j = snap_obs_fold_find(ft, fn, fs, fq, 0); fq && j < fn && !pi->truncated;
         j = snap_obs_fold_find(ft, fn, fs, fq, j + 1)) {
        size_t b = map[j];
        if (b < from)
            continue;
        size_t e = j + fq < fn ? map[j + fq] : n;
        while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\n'))
            e--;
        if (pi->mshown == TEXT_MATCHES_PAGE) {
            pi->truncated = true;
            continue;
        }
        size_t wb, we, mark = out->len;
        around(s, n, b, e, shown_to, &wb, &we);
        if (we <= shown_to) {
            /* Inside the excerpt already shown. */
            pi->moff[pi->mshown++] = b;
            pi->next = e;
            continue;
        }
        if (wb < shown_to)
            wb = shown_to;
        base_buf_printf(out, "[match %zu/%zu @text_offset=%zu]\n", before + pi->mshown + 1,
                        count, b);
        if (wb > 0 && s[wb - 1] != '\n')
            base_buf_puts(out, "\xe2\x80\xa6");
        base_buf_put(out, s + wb, we - wb);
        if (we < n && s[we] != '\n')
            base_buf_puts(out, "\xe2\x80\xa6");
        base_buf_putc(out, '\n');
        if (out->len - start_len > room) {
            out->len = mark;
            if (out->s)
                out->s[mark] = 0;
            pi->truncated = true;
            continue;
        }
        if (pi->mshown == 0)
            pi->first = wb;
        pi->moff[pi->mshown++] = b;
        pi->shown += we - wb;
        pi->next = e;
        shown_to = we;
    }
    free(fs), free(map);
    pi->matches = count;
    pi->mfirst = before;
}

/* ---- the whole thing ---- */




void snap_obs_free_build(build *B)
{
    for (size_t i = 0; i < B->nfr; i++) {
        if (B->fr[i].axs) {
            snap_obs_axs_free(B->fr[i].axs);
            free(B->fr[i].axs);
        }
        snap_obs_ax_drop(&B->fr[i]);
    }
    for (size_t i = 0; i < B->nss; i++) {
        free(B->ss[i].secret.v);
        free(B->ss[i].pw.v);
        free(B->ss[i].otc.v);
        free(B->ss[i].click.v);
        free(B->ss[i].inl.v);
        free(B->ss[i].box);
        if (B->ss[i].dss) {
            snap_obs_ds_free(B->ss[i].dss);
            free(B->ss[i].dss);
        }
    }
    free(B->fr);
    free(B->ss);
    free(B->v);
    free(B->rt);
    free(B->arena.s);
}

static char *frame_params(const char *frame_id)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "frameId");
    json_w_str(&w, frame_id);
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

/* The calls of one fetch, in the order they were sent. */
typedef struct {
    int kind;                    /* 0 AX tree, 1 frame owner, 2 DOM snapshot */
    size_t i;                    /* frame or session index */
    uint64_t id;
    size_t s;                    /* the session it went to (B->ss) */
} fcall;

/* Why a frame of a session that does not answer was not read. */
static void mute_note(const snap_agent *a, frame_st *F)
{
    int tmo = a->o.timeout_ms > 0 ? a->o.timeout_ms : 15000;
    F->ax_rc = CDP_ETIMEOUT;
    snprintf(F->err, sizeof F->err, "not read: its process did not answer within %d s",
             (tmo + 999) / 1000);
}

/* Collect one reply, digest it and free it at once: only the replies that
 * arrived together are ever held as parsed documents. */
static int collect(build *B, const fcall *fc, int tmo, int *crc)
{
    snap_agent *a = B->a;
    cdp_reply rep = {0};
    cdp_err e = {0};
    int rc = cdp_wait(a->c, fc->id, tmo, &rep, &e);
    *crc = rc;
    int ret = 0;
    if (fc->kind == 0) {
        /* The reply went through ax_event as it arrived. */
        frame_st *F = &B->fr[fc->i];
        axsink *S = F->axs;
        F->ax_done = true;
        F->ax_rc = rc;
        if (rc) {
            snprintf(F->err, sizeof F->err, "%.150s", e.msg);
            if (S && S->oom)
                ret = SNAP_ENOMEM;
            snap_obs_ax_drop(F);
        } else if ((F->ax_rc = snap_obs_ax_finish(F)) == SNAP_ENOMEM) {
            ret = SNAP_ENOMEM;
        }
        if (S) {
            snap_obs_axs_free(S);
            free(S);
            F->axs = NULL;
        }
    } else if (fc->kind == 1) {
        frame_st *F = &B->fr[fc->i];
        F->own_done = true;
        F->own_rc = rc;
        if (!rc)
            F->owner = (int)json_get_int(rep.result, "backendNodeId", 0);
    } else {
        sess_st *S = &B->ss[fc->i];
        domsink *DS = S->dss;
        S->done = true;
        S->rc = rc;
        if (!rc && DS && !DS->oom)
            snap_obs_ds_finish(S, DS);    /* the reply went through ds_event as it came */
        if (DS) {
            snap_obs_ds_free(DS);
            free(DS);
            S->dss = NULL;
        }
    }
    cdp_reply_free(&rep);
    return ret;
}

/* The wait for call fc: a read of the main frame's session waits up to
 * tmo (docs/snapshot.md, "Deadlines"); one of another frame process's up
 * to the per-action timeout from t0, all its reads together (its frames
 * are then not read, and said so), and none once that process was found
 * not answering. */
static int fetch_wait(const build *B, const fcall *fc, const unsigned char *mute, int64_t t0,
                      int tmo)
{
    if (fc->s == (size_t)B->fr[0].sess)
        return tmo;
    if (mute[fc->s])
        return 1;
    int per = B->a->o.timeout_ms > 0 ? B->a->o.timeout_ms : 15000;
    int64_t left = t0 + per - base_now_ms();
    return left > 1 ? (int)left : 1;
}

/* The sessions of the frames not answering (snap_frame.mute) into
 * mute[], each sent a Page.getFrameTree (probe[]: answered by the end of
 * the fetch, the frames are read again from the next snapshot). */
static void fetch_mute(build *B, unsigned char *mute, uint64_t *probe)
{
    for (size_t i = 0; i < B->nfr; i++)
        if (B->fr[i].f->mute && B->fr[i].sess != B->fr[0].sess)
            mute[B->fr[i].sess] = 1;
    for (size_t s = 0; s < B->nss; s++)
        if (mute[s] && snap_cdp_send(B->a, B->ss[s].id, "Page.getFrameTree", NULL, &probe[s],
                                     NULL))
            probe[s] = 0;
}

/* The probes' answers: a session that answered is no longer muted. */
static void fetch_unmute(build *B, int tab_id, const uint64_t *probe)
{
    for (size_t s = 0; s < B->nss; s++) {
        if (!probe[s])
            continue;
        cdp_reply rep = {0};
        if (cdp_reply_ready(B->a->c, probe[s]) && cdp_wait(B->a->c, probe[s], 1, &rep, NULL) == 0)
            snap_session_mute(B->a, tab_id, B->ss[s].id, false);
        else if (!cdp_reply_ready(B->a->c, probe[s]))
            cdp_forget(B->a->c, probe[s]);
        cdp_reply_free(&rep);
    }
}

/* Collect calls[0..nc) as they arrive (the oldest waited for; after each
 * reply, every other one already in). A frame process found not answering
 * is muted (its frames' lines say so). 0 or SNAP_ENOMEM. */
static int fetch_collect(build *B, fcall *calls, size_t nc, unsigned char *mute, int tab_id,
                         int tmo)
{
    unsigned char *done = calloc(nc ? nc : 1, 1);
    if (!done) {
        for (size_t k = 0; k < nc; k++)
            cdp_forget(B->a->c, calls[k].id);
        return SNAP_ENOMEM;
    }
    int rc = 0;
    int64_t t0 = base_now_ms();
    for (size_t k = 0; k < nc; k++) {
        for (size_t j = k; j < nc; j++) {
            if (done[j] || (j > k && !cdp_reply_ready(B->a->c, calls[j].id)))
                continue;
            int crc = 0;
            if (collect(B, &calls[j], fetch_wait(B, &calls[j], mute, t0, tmo), &crc))
                rc = SNAP_ENOMEM;
            done[j] = 1;
            size_t s = calls[j].s;
            if (crc == CDP_ETIMEOUT && s != (size_t)B->fr[0].sess) {
                if (!mute[s])
                    snap_session_mute(B->a, tab_id, B->ss[s].id, true);
                mute[s] = 1;
                if (calls[j].kind == 0)
                    mute_note(B->a, &B->fr[calls[j].i]);
            }
        }
    }
    free(done);
    return rc;
}

/* B's frames and sessions from t's live frames. 0, SNAP_ENOMEM or
 * SNAP_EBROWSER (the main frame is not among them). */
static int fetch_frames(build *B, snap_tab *t)
{
    if (t->nframes > FRAMES_MAX)
        return SNAP_ENOMEM;
    B->fr = calloc(t->nframes ? t->nframes : 1, sizeof *B->fr);
    B->ss = calloc(t->nframes ? t->nframes : 1, sizeof *B->ss);
    if (!B->fr || !B->ss)
        return SNAP_ENOMEM;
    for (size_t i = 0; i < t->nframes; i++) {
        snap_frame *f = &t->frames[i];
        if (f->gone || !f->session[0])
            continue;
        frame_st *F = &B->fr[B->nfr++];
        F->fc = *f;
        F->fc.url = NULL;        /* owned by the agent; not needed here */
        F->f = &F->fc;
        F->parent = -1;
        size_t s = 0;
        while (s < B->nss && strcmp(B->ss[s].id, F->f->session) != 0)
            s++;
        if (s == B->nss)
            B->ss[B->nss++].id = F->f->session;
        F->sess = (int)s;
    }
    if (!B->nfr || strcmp(B->fr[0].f->id, t->frames[0].id) != 0)
        return SNAP_EBROWSER;
    for (size_t i = 0; i < B->nfr; i++) {
        frame_st *F = &B->fr[i];
        for (size_t k = 0; k < B->nfr; k++)
            if (k != i && F->f->parent[0] && strcmp(B->fr[k].f->id, F->f->parent) == 0)
                F->parent = (int)k;
    }
    return 0;
}

/* Send frame i's AX tree and frame owner calls (a frame of a session not
 * answering: none, and its line says so), adding them to calls. 0 or
 * SNAP_ENOMEM. */
static int fetch_send_frame(build *B, size_t i, const unsigned char *mute, fcall *calls,
                            size_t *nc)
{
    snap_agent *a = B->a;
    frame_st *F = &B->fr[i];
    char *p = frame_params(F->f->id);
    if (!p)
        return SNAP_ENOMEM;
    if (mute[F->sess]) {
        mute_note(a, F);
        F->ax_done = true;
    } else {
        cdp_err e = {0};
        axsink *S = calloc(1, sizeof *S);
        if (!S) {
            free(p);
            return SNAP_ENOMEM;
        }
        S->F = F;
        F->axs = S;
        F->ax_rc = snap_cdp_send_sink(a, F->f->session, "Accessibility.getFullAXTree", p,
                                      snap_obs_ax_event, S, &F->ax_call, &e);
        if (F->ax_rc)
            snprintf(F->err, sizeof F->err, "%.150s", e.msg);
        else
            calls[(*nc)++] = (fcall){0, i, F->ax_call, (size_t)F->sess};
    }
    /* Whose document owns the frame: its parent's; for a frame whose
     * parent is not known (an out-of-process frame announced by its
     * target only), the main frame's, or nobody's (issue 13, 8a). */
    int owner_fr = F->parent >= 0 ? F->parent : i > 0 ? 0 : -1;
    if (owner_fr >= 0 && !mute[B->fr[owner_fr].sess]) {
        F->own_rc = snap_cdp_send(a, B->fr[owner_fr].f->session, "DOM.getFrameOwner", p,
                                  &F->own_call, NULL);
        if (!F->own_rc)
            calls[(*nc)++] = (fcall){1, i, F->own_call, (size_t)B->fr[owner_fr].sess};
    }
    free(p);
    return 0;
}

/* Send every command of B (walked: the main frame was read by the walker),
 * into calls (*nc of them). 0 or SNAP_ENOMEM. */
static int fetch_send(build *B, bool walked, const unsigned char *mute, fcall *calls, size_t *nc)
{
    snap_agent *a = B->a;
    /* The DOM snapshots go first: their replies are digested into small
     * sets and freed before the AX replies (which are kept as records until
     * the walk) stream in, so the two never sit in memory together. */
    for (size_t s = 0; s < B->nss && walked; s++)
        B->ss[s].done = B->ss[s].dom_ok = true;
    for (size_t s = 0; s < B->nss && !walked; s++) {
        if (mute[s]) {
            B->ss[s].done = true;
            B->ss[s].rc = CDP_ETIMEOUT;
            continue;
        }
        domsink *DS = calloc(1, sizeof *DS);
        B->ss[s].dss = DS;
        B->ss[s].rc = DS ? snap_cdp_send_sink(a, B->ss[s].id, "DOMSnapshot.captureSnapshot",
                                              "{\"computedStyles\":[\"position\",\"display\"]}",
                                              snap_obs_ds_event, DS, &B->ss[s].call, NULL)
                         : CDP_ENOMEM;
        if (!B->ss[s].rc)
            calls[(*nc)++] = (fcall){2, s, B->ss[s].call, s};
    }
    for (size_t i = walked ? B->nfr : 0; i < B->nfr; i++)
        if (fetch_send_frame(B, i, mute, calls, nc))
            return SNAP_ENOMEM;
    return 0;
}

/* Send every command, then collect every reply as it arrives. */
int snap_obs_fetch(build *B)
{
    snap_agent *a = B->a;
    snap_tab *t = B->t;
    int tab_id = t->id;
    int rc = fetch_frames(B, t);
    if (rc)
        return rc;
    /* The default (issue 13, point 4): a single-frame tab read by the in-page
     * walker (observe_walk.c). Its records have no backend nodes, so there
     * is no DOM snapshot to join (the walker withheld secret values and
     * marked those fields itself); anything unsure falls back to the AX
     * tree. t is not read after this: the world's creation may let events in. */
    bool walked = false;
    if (!a->o.ax_tree && B->nfr == 1 && !B->fr[0].f->oopif) {
        int wr = snap_obs_walk_fetch(B, &B->fr[0]);
        if (wr == SNAP_ENOMEM)
            return wr;
        walked = wr == 0;
        B->fr[0].ax_done = walked;
    }
    fcall *calls = calloc(B->nfr * 3 + 1, sizeof *calls);
    unsigned char *mute = calloc(B->nss + 1, 1);
    uint64_t *probe = calloc(B->nss + 1, sizeof *probe);
    size_t nc = 0;
    rc = calls && mute && probe ? 0 : SNAP_ENOMEM;
    if (!rc)
        fetch_mute(B, mute, probe);
    if (!rc && (rc = fetch_send(B, walked, mute, calls, &nc)))
        for (size_t k = 0; k < nc; k++)
            cdp_forget(a->c, calls[k].id);
    if (!rc)
        rc = fetch_collect(B, calls, nc, mute, tab_id, snap_read_timeout(a));
    if (probe)
        fetch_unmute(B, tab_id, probe);
    free(calls);
    free(mute);
    free(probe);
    if (B->fr[0].ax_rc && !rc)
        rc = SNAP_EBROWSER;
    return rc;
}
