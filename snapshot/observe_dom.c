/*
 * observe_dom.c — the DOM snapshot (DOMSnapshot.captureSnapshot) read as a stream:
 * secret fields, clickables and where each node lies in its document.
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- DOMSnapshot: secrets and clickables ---- */

static void secret_add(sess_st *S, int backend, unsigned kind)
{
    if (kind)
        snap_obs_ids_add(&S->secret, backend);
    if (kind & SNAP_SECRET_PW)
        snap_obs_ids_add(&S->pw, backend);
    if (kind & SNAP_SECRET_OTC)
        snap_obs_ids_add(&S->otc, backend);
}

static void secrets_sort(sess_st *S)
{
    snap_obs_ids_sort(&S->secret);
    snap_obs_ids_sort(&S->pw);
    snap_obs_ids_sort(&S->otc);
}

/* The SNAP_SECRET_* kinds the DOM snapshot gave a node. */
unsigned snap_obs_secret_kind(const sess_st *S, int backend)
{
    if (!snap_obs_ids_has(&S->secret, backend))
        return 0;
    unsigned k = 0;
    if (snap_obs_ids_has(&S->pw, backend))
        k |= SNAP_SECRET_PW;
    if (snap_obs_ids_has(&S->otc, backend))
        k |= SNAP_SECRET_OTC;
    return k ? k : SNAP_SECRET_CC;
}

static void dom_parse(sess_st *S, const json_val *result)
{
    const json_val *strings = json_get(result, "strings");
    size_t ns = json_len(strings);
    /* Index the string table once (json_at is O(i)). */
    const char **tab = ns ? calloc(ns, sizeof *tab) : NULL;
    if (ns && !tab)
        return;
    size_t k = 0;
    for (const json_val *s = json_first(strings); s; s = json_next(s))
        tab[k++] = json_str(s, NULL);
    for (const json_val *d = json_first(json_get(result, "documents")); d;
         d = json_next(d)) {
        const json_val *nodes = json_get(d, "nodes");
        const json_val *be = json_first(json_get(nodes, "backendNodeId"));
        const json_val *nm = json_first(json_get(nodes, "nodeName"));
        const json_val *at = json_first(json_get(nodes, "attributes"));
        size_t nn = json_len(json_get(nodes, "backendNodeId"));
        int *backs = nn ? calloc(nn, sizeof *backs) : NULL;
        if (nn && !backs)
            break;
        for (size_t i = 0; i < nn && be; i++) {
            backs[i] = (int)json_num(be);
            int64_t ni = -1;
            json_int(nm, &ni);
            const char *name = ni >= 0 && (size_t)ni < ns ? tab[ni] : NULL;
            /* The one secret-field rule (SNAP_JS_SECRET_KIND, page_js.h;
             * docs/threat-model.md): the autocomplete hints make any
             * element secret (a textarea of backup codes, a select of card
             * expiry years, a contenteditable card field); type=password
             * only an input (its name in any case: XHTML). */
            bool input = name && strcasecmp(name, "INPUT") == 0;
            {
                unsigned kind = 0;
                const json_val *x = json_first(at);
                while (x && json_next(x)) {
                    int64_t ki = -1, vi = -1;
                    json_int(x, &ki);
                    json_int(json_next(x), &vi);
                    const char *key = ki >= 0 && (size_t)ki < ns ? tab[ki] : "";
                    const char *val = vi >= 0 && (size_t)vi < ns ? tab[vi] : "";
                    if (input && key && val && strcmp(key, "type") == 0 &&
                        snap_obs_contains_ci(val, strlen(val), "password"))
                        kind |= SNAP_SECRET_PW;
                    if (key && val && strcmp(key, "autocomplete") == 0 &&
                        (snap_obs_contains_ci(val, strlen(val), "one-time-code") ||
                         snap_obs_contains_ci(val, strlen(val), "password")))
                        kind |= SNAP_SECRET_OTC;
                    if (key && val && strcmp(key, "autocomplete") == 0 &&
                        snap_obs_contains_ci(val, strlen(val), "cc-"))
                        kind |= SNAP_SECRET_CC;
                    x = json_next(json_next(x));
                }
                secret_add(S, backs[i], kind);
            }
            be = json_next(be);
            nm = json_next(nm);
            at = json_next(at);
        }
        for (const json_val *ix = json_first(json_get(json_get(nodes, "isClickable"), "index"));
             ix; ix = json_next(ix)) {
            int64_t i = -1;
            if (json_int(ix, &i) && i >= 0 && (size_t)i < nn)
                snap_obs_ids_add(&S->click, backs[i]);
        }
        free(backs);
    }
    free(tab);
    secrets_sort(S);
    snap_obs_ids_sort(&S->click);
    S->dom_ok = true;
}

/* ---- DOMSnapshot as a stream ----
 *
 * The captureSnapshot reply is mostly small numbers (a 2.9 MB reply parses
 * into a 42 MB document), so it is digested while it arrives: per document,
 * the backend id and name index of each node, its attribute index pairs and
 * the isClickable node indices; then, as result.strings streams past (it
 * comes after "documents"), one flag byte per string says whether it is
 * "INPUT", "type", "autocomplete", or contains "password" or
 * "one-time-code" (a type=password makes an input secret; the autocomplete
 * hints any element). The sets are resolved at the end exactly as dom_parse
 * does (snap_dom_digest_check compares the two). */

enum { DS_INPUT = 1, DS_TYPE = 2, DS_AUTOC = 4, DS_PW = 8, DS_OTC = 16, DS_CC = 32,
       DS_FIXED = 64, DS_INLINE = 128 };

/* The members of nodes and layout that are read. */
enum { DF_BACK = 1, DF_NAME, DF_ATTR, DF_CLICK, DF_PARENT, DF_LNODE, DF_LSTYLE, DF_LBOUNDS };

static bool iv_push(ivec *v, int x)
{
    int *nv = base_grow(v->v, v->n + 1, &v->cap, sizeof *nv, 256);
    if (!nv)
        return false;
    v->v = nv;
    v->v[v->n++] = x;
    return true;
}

void snap_obs_ds_free(domsink *S)
{
    for (size_t i = 0; i < S->ndocs; i++) {
        dsdoc *d = &S->docs[i];
        free(d->backs.v);
        free(d->names.v);
        free(d->attr_off.v);
        free(d->attrs.v);
        free(d->click.v);
        free(d->parent.v);
        free(d->lnode.v);
        free(d->ly0.v);
        free(d->ly1.v);
        free(d->lpos.v);
        free(d->ldisp.v);
    }
    free(S->docs);
    free(S->flags);
    memset(S, 0, sizeof *S);
}

static void ds_scan(domsink *S, const char *p, size_t n)
{
    /* Across the piece boundary: the carried tail plus the piece's start. */
    char edge[32];
    size_t k = S->ncarry;
    memcpy(edge, S->carry, k);
    size_t take = n < 15 ? n : 15;
    memcpy(edge + k, p, take);
    if (snap_obs_contains_ci(edge, k + take, "password") || snap_obs_contains_ci(p, n, "password"))
        S->cur |= DS_PW;
    if (snap_obs_contains_ci(edge, k + take, "one-time-code") ||
        snap_obs_contains_ci(p, n, "one-time-code"))
        S->cur |= DS_OTC;
    if (snap_obs_contains_ci(edge, k + take, "cc-") || snap_obs_contains_ci(p, n, "cc-"))
        S->cur |= DS_CC;
    size_t keep = n < 15 ? n : 15;
    if (S->ncarry + n <= 15) {
        memcpy(S->carry + S->ncarry, p, n);
        S->ncarry += n;
    } else {
        if (n < 15) {
            size_t old = 15 - n;
            memmove(S->carry, S->carry + S->ncarry - old, old);
            memcpy(S->carry + old, p, n);
        } else {
            memcpy(S->carry, p + n - keep, keep);
        }
        S->ncarry = 15;
    }
    if (S->headlen < sizeof S->head) {
        size_t c = sizeof S->head - S->headlen < n ? sizeof S->head - S->headlen : n;
        memcpy(S->head + S->headlen, p, c);
        S->headlen += c;
    }
    S->total += n;
}

static void ds_string_end(domsink *S)
{
    if (S->nstr == S->capstr) {
        size_t c = S->capstr ? S->capstr * 2 : 1024;
        unsigned char *nf = realloc(S->flags, c);
        if (!nf) {
            S->oom = true;
            return;
        }
        S->flags = nf;
        S->capstr = c;
    }
    unsigned char f = S->cur;
    if (S->total == 5 && strncasecmp(S->head, "INPUT", 5) == 0)
        f |= DS_INPUT;
    if (S->total == 4 && memcmp(S->head, "type", 4) == 0)
        f |= DS_TYPE;
    if (S->total == 12 && memcmp(S->head, "autocomplete", 12) == 0)
        f |= DS_AUTOC;
    if ((S->total == 5 && memcmp(S->head, "fixed", 5) == 0) ||
        (S->total == 6 && memcmp(S->head, "sticky", 6) == 0))
        f |= DS_FIXED;
    if (S->total == 6 && memcmp(S->head, "inline", 6) == 0)
        f |= DS_INLINE;
    S->flags[S->nstr++] = f;
    S->cur = 0;
    S->headlen = S->total = S->ncarry = 0;
}

static int32_t clamp32(double x)
{
    return x != x ? 0 : x <= -2e9 ? -2000000000 : x >= 2e9 ? 2000000000 : (int32_t)x;
}

static int field_of(int sect, const char *key)
{
    static const char *const NODES[] = {"backendNodeId", "nodeName", "attributes",
                                        "isClickable", "parentIndex"};
    static const char *const LAYOUT[] = {"nodeIndex", "styles", "bounds"};
    for (int i = 0; sect == 1 && i < 5; i++)
        if (strcmp(key, NODES[i]) == 0)
            return DF_BACK + i;
    for (int i = 0; sect == 2 && i < 3; i++)
        if (strcmp(key, LAYOUT[i]) == 0)
            return DF_LNODE + i;
    return 0;
}

/* One number of a bounds rect [x, y, width, height]: the rows it covers,
 * whole pixels outward. */
static void rect_num(domsink *S, dsdoc *doc, double x)
{
    size_t k = doc->ly0.n - 1;
    if (S->rect_i == 1) {
        S->rect_y = x;
    } else if (S->rect_i == 3) {
        double y0 = S->rect_y, y1 = S->rect_y + (x > 0 ? x : 0);
        double f0 = (double)(int64_t)y0, c1 = (double)(int64_t)y1;
        if (y0 == y0 && y0 > -2e9 && y0 < 2e9 && f0 > y0)
            f0 -= 1;
        if (y1 == y1 && y1 > -2e9 && y1 < 2e9 && c1 < y1)
            c1 += 1;
        doc->ly0.v[k] = clamp32(f0);
        doc->ly1.v[k] = clamp32(c1);
    }
    S->rect_i++;
}

int snap_obs_ds_event(void *ud, const json_event *ev)
{
    domsink *S = ud;
    unsigned d = ev->depth;
    if (S->oom)
        return CDP_ENOMEM;
    if (d == 1) {
        if (ev->type == JSON_EV_KEY)
            S->where = strcmp(ev->str, "documents") == 0 ? 1
                       : strcmp(ev->str, "strings") == 0 ? 2 : 0;
        return 0;
    }
    if (S->where == 2) {
        if (d == 2 && snap_obs_is_text(ev)) {
            ds_scan(S, ev->str, ev->len);
            if (ev->type == JSON_EV_STR)
                ds_string_end(S);
        } else if (d == 2 && snap_obs_is_value(ev) && ev->type != JSON_EV_ARR_BEGIN &&
                   ev->type != JSON_EV_OBJ_BEGIN) {
            ds_string_end(S);    /* not a string: keeps the indices aligned */
        }
        return S->oom ? CDP_ENOMEM : 0;
    }
    if (S->where != 1 || d < 2)
        return 0;
    if (d == 2) {
        if (ev->type == JSON_EV_OBJ_BEGIN) {
            dsdoc *nd = base_grow(S->docs, S->ndocs + 1, &S->capdocs, sizeof *nd, 4);
            if (!nd)
                return CDP_ENOMEM;
            S->docs = nd;
            memset(&S->docs[S->ndocs++], 0, sizeof S->docs[0]);
        }
        return 0;
    }
    if (!S->ndocs)
        return 0;
    dsdoc *doc = &S->docs[S->ndocs - 1];
    if (d == 3) {
        if (ev->type == JSON_EV_KEY)
            S->sect = strcmp(ev->str, "nodes") == 0 ? 1 : strcmp(ev->str, "layout") == 0 ? 2
                      : strcmp(ev->str, "contentHeight") == 0 ? 3 : 0;
        else if (S->sect == 3 && ev->type == JSON_EV_NUM)
            doc->content_h = clamp32(ev->num);
        return 0;
    }
    if (S->sect != 1 && S->sect != 2)
        return 0;
    if (d == 4) {
        if (ev->type == JSON_EV_KEY)
            S->field = field_of(S->sect, ev->str);
        return 0;
    }
    bool ok = true;
    int64_t v = ev->type == JSON_EV_NUM && ev->is_int ? ev->i : -1;
    if (d == 5) {
        if (S->field == DF_BACK && ev->type == JSON_EV_NUM)
            ok = iv_push(&doc->backs, (int)ev->num);
        else if (S->field == DF_NAME && snap_obs_is_value(ev))
            ok = iv_push(&doc->names, (int)v);
        else if (S->field == DF_ATTR && ev->type == JSON_EV_ARR_BEGIN)
            ok = iv_push(&doc->attr_off, (int)doc->attrs.n);
        else if (S->field == DF_CLICK && ev->type == JSON_EV_KEY)
            S->in_click_index = strcmp(ev->str, "index") == 0;
        else if (S->field == DF_PARENT && snap_obs_is_value(ev))
            ok = iv_push(&doc->parent, v >= 0 && v <= INT32_MAX ? (int)v : -1);
        else if (S->field == DF_LNODE && snap_obs_is_value(ev))
            ok = iv_push(&doc->lnode, v >= 0 && v <= INT32_MAX ? (int)v : -1);
        else if (S->field == DF_LSTYLE && ev->type == JSON_EV_ARR_BEGIN) {
            S->style_i = 0;
            ok = iv_push(&doc->lpos, -1) && iv_push(&doc->ldisp, -1);
        }
        else if (S->field == DF_LBOUNDS && ev->type == JSON_EV_ARR_BEGIN) {
            S->rect_i = 0;
            ok = iv_push(&doc->ly0, 0) && iv_push(&doc->ly1, 0);
        }
    } else if (d == 6) {
        if (S->field == DF_ATTR && snap_obs_is_value(ev))
            ok = iv_push(&doc->attrs, (int)v);
        else if (S->field == DF_CLICK && S->in_click_index && snap_obs_is_value(ev))
            ok = iv_push(&doc->click, (int)v);
        else if (S->field == DF_LSTYLE && doc->lpos.n && snap_obs_is_value(ev)) {
            /* computedStyles is [position, display] (observe_render.c) */
            ivec *iv = S->style_i == 0 ? &doc->lpos : S->style_i == 1 ? &doc->ldisp : NULL;
            if (iv && iv->n)
                iv->v[iv->n - 1] = v >= 0 && v <= INT32_MAX ? (int)v : -1;
            S->style_i++;
        }
        else if (S->field == DF_LBOUNDS && ev->type == JSON_EV_NUM && doc->ly0.n)
            rect_num(S, doc, ev->num);
    }
    if (!ok)
        S->oom = true;
    return S->oom ? CDP_ENOMEM : 0;
}

static int cmp_box(const void *x, const void *y)
{
    const nbox *a = x, *b = y;
    return a->backend < b->backend ? -1 : a->backend > b->backend;
}

/* Where each node with a layout object lies (the union when it has
 * several), sorted by backend; fixed and sticky elements and their
 * descendants (the DOM's, by parentIndex) count as everywhere. Without
 * memory, no boxes: what is in view is then unknown (snap_build says so). */
static void boxes_finish(sess_st *T, const domsink *S)
{
    size_t total = 0;
    for (size_t di = 0; di < S->ndocs; di++)
        total += S->docs[di].lnode.n;
    T->doc_h = S->ndocs ? S->docs[0].content_h : 0;
    nbox *bx = total ? malloc(total * sizeof *bx) : NULL;
    size_t n = 0;
    for (size_t di = 0; bx && di < S->ndocs; di++) {
        const dsdoc *d = &S->docs[di];
        size_t nn = d->backs.n, nl = d->lnode.n;
        unsigned char *fx = calloc(nn ? nn : 1, 1);
        if (!fx || d->ly0.n < nl || d->ly1.n < nl) {
            free(fx);
            free(bx);
            bx = NULL;
            break;
        }
        for (size_t i = 0; i < nl && i < d->lpos.n; i++) {
            int ni = d->lnode.v[i], ps = d->lpos.v[i];
            if (ni >= 0 && (size_t)ni < nn && ps >= 0 && (size_t)ps < S->nstr &&
                (S->flags[ps] & DS_FIXED))
                fx[ni] = 1;
        }
        for (size_t i = 0; i < nn && i < d->parent.n; i++) {
            int p = d->parent.v[i];
            if (p >= 0 && (size_t)p < i && fx[p])
                fx[i] = 1;
        }
        for (size_t i = 0; i < nl; i++) {
            int ni = d->lnode.v[i];
            if (ni < 0 || (size_t)ni >= nn || d->backs.v[ni] <= 0)
                continue;
            bool f = fx[ni];
            bx[n++] = (nbox){d->backs.v[ni], f ? INT32_MIN : d->ly0.v[i],
                             f ? INT32_MAX : d->ly1.v[i]};
        }
        free(fx);
    }
    if (!bx)
        return;
    qsort(bx, n, sizeof *bx, cmp_box);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && bx[w - 1].backend == bx[i].backend) {
            if (bx[i].y0 < bx[w - 1].y0)
                bx[w - 1].y0 = bx[i].y0;
            if (bx[i].y1 > bx[w - 1].y1)
                bx[w - 1].y1 = bx[i].y1;
        } else {
            bx[w++] = bx[i];
        }
    }
    T->box = bx;
    T->nbox = w;
}

/* The box of a node of session S, NULL when it has none (no layout object,
 * or the DOM snapshot did not answer). */
const nbox *snap_obs_box(const sess_st *S, int backend)
{
    nbox key = {backend, 0, 0};
    return S->nbox && backend > 0 ? bsearch(&key, S->box, S->nbox, sizeof key, cmp_box) : NULL;
}

/* Resolve the streamed reply into the session's sets (as dom_parse does). */
void snap_obs_ds_finish(sess_st *T, const domsink *S)
{
    boxes_finish(T, S);
    for (size_t di = 0; di < S->ndocs; di++) {
        const dsdoc *d = &S->docs[di];
        size_t nn = d->backs.n;
        for (size_t i = 0; i < nn; i++) {
            int ni = i < d->names.n ? d->names.v[i] : -1;
            if (i >= d->attr_off.n)
                continue;
            bool input = ni >= 0 && (size_t)ni < S->nstr && (S->flags[ni] & DS_INPUT);
            size_t a0 = (size_t)d->attr_off.v[i];
            size_t a1 = i + 1 < d->attr_off.n ? (size_t)d->attr_off.v[i + 1] : d->attrs.n;
            unsigned kind = 0;
            for (size_t k = a0; k + 1 < a1; k += 2) {
                int ki = d->attrs.v[k], vi = d->attrs.v[k + 1];
                unsigned char kf = ki >= 0 && (size_t)ki < S->nstr ? S->flags[ki] : 0;
                unsigned char vf = vi >= 0 && (size_t)vi < S->nstr ? S->flags[vi] : 0;
                if (input && (kf & DS_TYPE) && (vf & DS_PW))
                    kind |= SNAP_SECRET_PW;
                if ((kf & DS_AUTOC) && (vf & (DS_OTC | DS_PW)))
                    kind |= SNAP_SECRET_OTC;
                if ((kf & DS_AUTOC) && (vf & DS_CC))
                    kind |= SNAP_SECRET_CC;
            }
            secret_add(T, d->backs.v[i], kind);
        }
        for (size_t k = 0; k < d->click.n; k++) {
            int i = d->click.v[k];
            if (i >= 0 && (size_t)i < nn)
                snap_obs_ids_add(&T->click, d->backs.v[i]);
        }
        for (size_t k = 0; k < d->lnode.n && k < d->ldisp.n; k++) {
            int i = d->lnode.v[k], ds = d->ldisp.v[k];
            if (i >= 0 && (size_t)i < nn && ds >= 0 && (size_t)ds < S->nstr &&
                (S->flags[ds] & DS_INLINE))
                snap_obs_ids_add(&T->inl, d->backs.v[i]);
        }
    }
    secrets_sort(T);
    snap_obs_ids_sort(&T->click);
    snap_obs_ids_sort(&T->inl);
    T->dom_ok = true;
}

/* Screenshots (act_shot_mask.c): the secret fields of a session found
 * through the DOM, not through the page's open trees, so a field in a
 * closed shadow root is found too (red team s12, W2). */
int snap_dom_secret_ids(snap_agent *a, const char *session, int **ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    int tmo = a->o.timeout_ms > 0 ? a->o.timeout_ms : 15000;
    domsink *DS = calloc(1, sizeof *DS);
    sess_st S = {.id = session};
    uint64_t id = 0;
    int rc = DS ? snap_cdp_send_sink(a, session, "DOMSnapshot.captureSnapshot",
                                     "{\"computedStyles\":[]}", snap_obs_ds_event, DS, &id,
                                     NULL)
                : -1;
    if (rc == 0) {
        cdp_reply rep = {0};
        cdp_err e = {0};
        rc = cdp_wait(a->c, id, tmo, &rep, &e);
        cdp_reply_free(&rep);
        if (rc == 0 && !DS->oom)
            snap_obs_ds_finish(&S, DS);    /* the reply went through ds_event as it came */
    }
    if (DS)
        snap_obs_ds_free(DS);
    free(DS);
    free(S.pw.v);
    free(S.otc.v);
    free(S.click.v);
    free(S.inl.v);
    free(S.box);
    if (rc != 0 || !S.dom_ok) {
        free(S.secret.v);
        return -1;
    }
    *ids = S.secret.v;
    *n = S.secret.n;
    return 0;
}

/* Test hook (tests/test_snapshot.c declares it too): digest a DOMSnapshot
 * reply both ways (json_parse + dom_parse, and the stream in pieces of
 * `piece` bytes) and compare the secret and clickable sets. 0 when equal. */
int snap_dom_digest_check(const char *reply, size_t len, size_t piece, size_t *secrets,
                          size_t *clicks, char *why, size_t cap);
int snap_dom_digest_check(const char *reply, size_t len, size_t piece, size_t *secrets,
                          size_t *clicks, char *why, size_t cap)
{
    sess_st A, B;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    domsink S;
    memset(&S, 0, sizeof S);
    int rc = -1;
    char *text = NULL;
    json_stream *js = NULL;
    json_doc *d = json_parse(reply, len, NULL, NULL);
    snprintf(why, cap, "ok");
    const json_val *result = json_get(json_doc_root(d), "result");
    if (!result)
        result = json_doc_root(d);
    if (!d) {
        snprintf(why, cap, "cannot parse the reply");
        goto out;
    }
    dom_parse(&A, result);
    size_t tl;
    text = json_write(result, &tl);
    js = json_stream_new(NULL, snap_obs_ds_event, &S);
    int r = text && js ? 0 : -1;
    for (size_t off = 0; text && !r && off < tl; off += piece ? piece : tl)
        r = json_stream_feed(js, text + off, piece && piece < tl - off ? piece : tl - off);
    if (!r)
        r = json_stream_end(js);
    if (r) {
        snprintf(why, cap, "stream: %d", r);
        goto out;
    }
    snap_obs_ds_finish(&B, &S);
    if (secrets)
        *secrets = A.secret.n;
    if (clicks)
        *clicks = A.click.n;
    if (A.secret.n != B.secret.n || A.click.n != B.click.n || A.pw.n != B.pw.n ||
        A.otc.n != B.otc.n ||
        (A.secret.n && memcmp(A.secret.v, B.secret.v, A.secret.n * sizeof *A.secret.v)) ||
        (A.click.n && memcmp(A.click.v, B.click.v, A.click.n * sizeof *A.click.v))) {
        snprintf(why, cap, "sets differ: secret %zu/%zu, click %zu/%zu", A.secret.n,
                 B.secret.n, A.click.n, B.click.n);
        goto out;
    }
    rc = 0;
out:
    free(text);
    json_stream_free(js);
    json_doc_free(d);
    snap_obs_ds_free(&S);
    free(A.secret.v);
    free(A.click.v);
    free(B.secret.v);
    free(B.click.v);
    free(A.pw.v);
    free(A.otc.v);
    free(B.pw.v);
    free(B.otc.v);
    free(B.box);
    return rc;
}
