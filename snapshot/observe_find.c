/*
 * observe_find.c — a text target: the element an action names by its text
 * ("text:Buy milk" for a ref), found among the lines of the tab's
 * observation (issue 13, point 6b).
 *
 * The lines searched are the snapshot's own (observe_cache.c, built again
 * when the page may have changed since): text that the accessibility tree
 * leaves out (aria-hidden, display:none, visibility:hidden, a closed
 * <details>) is never a target, and what is found is what a snapshot
 * shows. Matching is the query's (folded: case, whitespace runs,
 * invisible characters), over text lines and the names of controls alike:
 * lines equal to the text first, else lines containing it. A text line
 * inside a control (a cell in a row link, a label in a button) stands for
 * that control: the click is the control's, gated under its own name. The
 * lines found must come to one element: several (the same text in a frame
 * of another site, too) are refused with the candidates and their refs,
 * so the agent picks one. A text line outside any control is issued a ref
 * of role "text" on its text node (agent_refs.c), checked and gated as
 * the element the text is in (act_locate.c, policy.c); when a click there
 * acts on a control (a label's text: the control it labels), the action
 * is gated as that control, under its own accessible name (policy.c,
 * acted_read).
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIND_TEXT_MAX 300        /* bytes of text a target may give */
#define FIND_LIST_MAX 6          /* candidates listed when several match */

/* Fold s[0, n) into dst (room for n bytes), without leading and trailing
 * whitespace; the folded length. */
static size_t fold_trim(const char *s, size_t n, char *dst)
{
    size_t m = snap_obs_fold(s, n, dst, NULL);
    size_t b = 0;
    while (b < m && dst[b] == ' ')
        b++;
    while (m > b && dst[m - 1] == ' ')
        m--;
    memmove(dst, dst + b, m - b);
    return m - b;
}

/* How line hay[0, hn) matches folded needle nd[0, nn): 2 equal to it, 1
 * containing it, 0 not at all. */
static int match_class(const char *hay, size_t hn, const char *nd, size_t nn, char **buf,
                       size_t *cap)
{
    if (!hay || !hn)
        return 0;
    if (hn > *cap) {
        char *nb = realloc(*buf, hn);
        if (!nb)
            return 0;
        *buf = nb;
        *cap = hn;
    }
    size_t fh = fold_trim(hay, hn, *buf);
    if (fh == nn && memcmp(*buf, nd, nn) == 0)
        return 2;
    return snap_obs_fold_find(*buf, fh, nd, nn, 0) < fh ? 1 : 0;
}

/* What a click on line k acts on: the nearest line above it that is a
 * control (a link or button the text is in; its name is the one the gate
 * judges), else line k itself. */
static size_t acts_on(const struct snap_cache *C, size_t k)
{
    const vnode *x = snap_cache_line_vnode(C, k);
    if (x->kind != V_TEXT)
        return k;
    for (int p = snap_cache_parent(C, k); p >= 0; p = snap_cache_parent(C, (size_t)p))
        if (snap_cache_act(snap_cache_line_vnode(C, (size_t)p)))
            return (size_t)p;
    return k;
}

/* The ref of line k, issued ("text" for a text line, named by its first
 * 60 bytes); 0 when out of memory. observe_elems.c issues its refs too. */
uint32_t snap_cache_line_ref(snap_agent *a, int tab, const struct snap_cache *C, size_t k)
{
    const char *hay, *fid, *loader;
    size_t hn;
    const vnode *x = snap_cache_line(C, k, &hay, &hn, &fid, &loader);
    char name[64];
    size_t cut = hn < 60 ? hn : 60;
    while (cut < hn && cut > 0 && ((unsigned char)hay[cut] & 0xC0) == 0x80)
        cut--;
    snprintf(name, sizeof name, "%.*s", (int)cut, hay ? hay : "");
    /* A control keeps the name its snapshot line gave it (a clickable's is
     * its text, not kept as a name there). */
    const char *role = x->kind == V_TEXT ? "text" : snap_cache_role(C, x);
    bool click = x->kind != V_TEXT && strcmp(role, "clickable") == 0;
    return snap_ref_for(a, tab, fid, loader, x->backend, role,
                        x->kind == V_TEXT ? name : click ? "" : hay);
}

/* The targets marked in tgt, listed with their refs (each with the line it
 * is in) into out for the refusal. */
static void list_candidates(snap_agent *a, int tab, const struct snap_cache *C,
                            const unsigned char *tgt, size_t ntgt, base_buf *out)
{
    size_t shown = 0, n = snap_cache_nlines(C);
    for (size_t k = 0; k < n && shown < FIND_LIST_MAX; k++) {
        if (!tgt[k])
            continue;
        uint32_t e = snap_cache_line_ref(a, tab, C, k);
        base_buf_puts(out, shown ? "; " : ": ");
        if (e)
            base_buf_printf(out, "[e%u] ", e);
        snap_cache_render(C, k, 60, out);
        int p = snap_cache_parent(C, k);
        if (p >= 0) {
            base_buf_puts(out, " in ");
            snap_cache_render(C, (size_t)p, 40, out);
        }
        shown++;
    }
    if (ntgt > shown)
        base_buf_printf(out, "; and %zu more", ntgt - shown);
}

int snap_text_target(snap_agent *a, int tab, const char *text, char ref[16], snap_result *r)
{
    ref[0] = 0;
    size_t tl = text ? strlen(text) : 0;
    char nd[FIND_TEXT_MAX];
    size_t nn = tl && tl <= FIND_TEXT_MAX ? fold_trim(text, tl, nd) : 0;
    if (!nn)
        return snap_fail(r, SNAP_EINVAL, "a text target needs a text of 1 to %d bytes that is "
                         "not only spaces", FIND_TEXT_MAX);
    const struct snap_cache *C = snap_cache_fresh(a, tab, r);
    if (!C)
        return r->code ? r->code : SNAP_ENOTAB;
    size_t n = snap_cache_nlines(C);
    unsigned char *cls = calloc(n ? n : 1, 2);
    char *buf = NULL;
    size_t cap = 0, count[3] = {0};
    if (!cls)
        return snap_fail(r, SNAP_ENOMEM, "out of memory");
    unsigned char *tgt = cls + (n ? n : 1);
    for (size_t k = 0; k < n; k++) {
        const char *hay, *fid, *loader;
        size_t hn;
        const vnode *x = snap_cache_line(C, k, &hay, &hn, &fid, &loader);
        if (x->backend != 0)     /* a node's line (< 0: a walker's, text too) */
            count[cls[k] = (unsigned char)match_class(hay, hn, nd, nn, &buf, &cap)]++;
    }
    free(buf);
    /* The best class decides; lines that act on the same element (a text
     * and the link it is in) are one target. */
    int best = count[2] ? 2 : count[1] ? 1 : 0;
    size_t ntgt = 0, one = 0;
    for (size_t k = 0; best && k < n; k++) {
        if (cls[k] != best)
            continue;
        size_t t = acts_on(C, k);
        if (!tgt[t]++) {
            ntgt++;
            one = t;
        }
    }
    int rc = 0;
    if (!best) {
        rc = snap_fail(r, SNAP_ENOREF, "no element with that text; query the snapshot "
                       "(browser_snapshot with query) to find it");
    } else if (ntgt > 1) {
        base_buf b = {0};
        list_candidates(a, tab, C, tgt, ntgt, &b);
        rc = snap_fail(r, SNAP_EINVAL, "%zu elements have that text%s; click one by its ref",
                       ntgt, b.s && !b.oom ? b.s : "");
        free(b.s);
    } else {
        uint32_t e = snap_cache_line_ref(a, tab, C, one);
        if (!e)
            rc = snap_fail(r, SNAP_ENOMEM, "out of memory");
        else
            snprintf(ref, 16, "e%u", e);
    }
    free(cls);
    return rc;
}
