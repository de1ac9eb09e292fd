/*
 * act_shot.c — screenshots: the viewport, the full page, a region or an
 * element, with the secret fields masked (act_shot_mask.c) or the capture
 * refused; and the crops of many elements under one secret-field search
 * (the accessibility scan's report, a11y/scan.c).
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#include "snapshot/act_int.h"
#include "snapshot/page_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- screenshot ---- */

#define SHOT_MAX_HEIGHT 16384   /* full-page captures are cut here (and say so) */
#define SHOT_MAX_WIDTH 4096     /* and here: a page can be made arbitrarily wide */

/* One capture as asked: format "png" or "jpeg" (quality q), clip in page
 * CSS px with its scale (clip NULL: the viewport as it is). */
typedef struct {
    double x, y, w, h;
} shot_rect;

typedef struct {
    uint8_t *img;
    size_t len;
    uint32_t width, height;
    bool jpeg;
} shot_img;

/* Width and height of a PNG or a JPEG (its first SOF marker); false when
 * the bytes are neither. */
static bool shot_dims(const uint8_t *p, size_t n, bool *jpeg, uint32_t *w, uint32_t *h)
{
    static const uint8_t SIG[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n >= 24 && memcmp(p, SIG, 8) == 0) {
        *jpeg = false;
        *w = (uint32_t)p[16] << 24 | (uint32_t)p[17] << 16 | (uint32_t)p[18] << 8 | p[19];
        *h = (uint32_t)p[20] << 24 | (uint32_t)p[21] << 16 | (uint32_t)p[22] << 8 | p[23];
        return true;
    }
    if (n < 4 || p[0] != 0xff || p[1] != 0xd8 || p[2] != 0xff)
        return false;
    *jpeg = true;
    for (size_t i = 2; i + 9 < n;) {
        if (p[i] != 0xff)
            return false;
        uint8_t m = p[i + 1];
        size_t len = (size_t)p[i + 2] << 8 | p[i + 3];
        if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
            *h = (uint32_t)p[i + 5] << 8 | p[i + 6];
            *w = (uint32_t)p[i + 7] << 8 | p[i + 8];
            return true;
        }
        i += 2 + len;
    }
    return false;
}

/* rc's members x, y, width, height into the object w is writing. */
static void shot_rect_put(json_w *w, const shot_rect *rc)
{
    json_w_key(w, "x");
    json_w_num(w, rc->x);
    json_w_key(w, "y");
    json_w_num(w, rc->y);
    json_w_key(w, "width");
    json_w_num(w, rc->w);
    json_w_key(w, "height");
    json_w_num(w, rc->h);
}

static int shot_take(snap_agent *a, const char *session, const shot_rect *clip, double scale,
                     bool beyond, int quality, shot_img *out, snap_result *r)
{
    memset(out, 0, sizeof *out);
    char *cl = NULL;
    if (clip) {
        json_w w;
        json_w_init(&w);
        json_w_obj_begin(&w);
        shot_rect_put(&w, clip);
        json_w_key(&w, "scale");
        json_w_num(&w, scale);
        json_w_obj_end(&w);
        if (!(cl = json_w_take(&w, NULL)))
            return snap_act_fail(r, SNAP_ENOMEM, "out of memory");
    }
    char *prm = quality ? clip ? snap_act_params("sirb", "format", "jpeg", "quality", quality,
                                                 "clip", cl, "captureBeyondViewport", beyond)
                               : snap_act_params("si", "format", "jpeg", "quality", quality)
                        : clip ? snap_act_params("srb", "format", "png", "clip", cl,
                                                 "captureBeyondViewport", beyond)
                               : snap_act_params("s", "format", "png");
    free(cl);
    pcall pc;
    int rc = snap_act_call(a, session, "Page.captureScreenshot", prm, &pc);
    size_t blen = 0;
    const char *b64 = rc ? NULL : json_str(json_get(pc.rep.result, "data"), &blen);
    if (!b64) {
        rc = snap_act_fail(r, SNAP_EBROWSER, "screenshot: %s", rc ? pc.e.msg : "no data");
        snap_act_pfree(&pc);
        return rc;
    }
    size_t cap = blen / 4 * 3 + 3;
    uint8_t *img = malloc(cap ? cap : 1);
    ssize_t n = img ? base_b64_decode(b64, blen, img, cap) : -1;
    snap_act_pfree(&pc);
    if (n < 0 || !shot_dims(img, (size_t)n, &out->jpeg, &out->width, &out->height) ||
        out->jpeg != (quality != 0)) {
        bool oom = !img;
        free(img);
        return snap_act_fail(r, oom ? SNAP_ENOMEM : SNAP_EBROWSER, "screenshot: %s",
                             oom ? "out of memory" : quality ? "the browser sent no JPEG"
                                                            : "the browser sent no PNG");
    }
    out->img = img;
    out->len = (size_t)n;
    return 0;
}

/* The visual viewport vv (Page.getLayoutMetrics' cssVisualViewport) as a
 * page rectangle. */
static void shot_view(const json_val *vv, shot_rect *view)
{
    *view = (shot_rect){json_num(json_get(vv, "pageX")), json_num(json_get(vv, "pageY")),
                        snap_act_dfloor(json_num(json_get(vv, "clientWidth"))),
                        snap_act_dfloor(json_num(json_get(vv, "clientHeight")))};
}

/* Whether area lies in view (1 px of rounding aside): then it is taken as
 * the browser shows it, with the mask; else beyond the viewport. */
static bool shot_in_view(const shot_rect *area, const shot_rect *view)
{
    return view->w >= 1 && view->h >= 1 && area->x >= view->x - 1 && area->y >= view->y - 1 &&
           area->x + area->w <= view->x + view->w + 1 && area->y + area->h <= view->y + view->h + 1;
}

/* Whether a masked secret field would show in a capture of area (page px)
 * in view: the browser paints the mask where the field is in the
 * viewport, so only a capture of the viewport itself (at its top left)
 * has it in place; elsewhere a field the capture meets shows (gate21). */
static bool shot_whole(const shot_rect *area, const shot_rect *view)
{
    return area->x > view->x - 0.5 && area->x < view->x + 0.5 && area->y > view->y - 0.5 &&
           area->y < view->y + 0.5 && area->w > view->w - 0.5 && area->w < view->w + 0.5 &&
           area->h > view->h - 0.5 && area->h < view->h + 0.5;
}

static bool shot_mask_misses(snap_agent *a, const snap_shot_mask *m, const shot_rect *area,
                             const shot_rect *view)
{
    if (!m->fields)
        return false;
    return !shot_whole(area, view) &&
           snap_shot_mask_meets(a, m, area->x - view->x, area->y - view->y, area->w, area->h);
}

/* Whether the page's view is no longer view (it scrolled or was resized
 * since view was read), or cannot be told: a clipped capture was then
 * taken where the page no longer is, and the mask, painted where the
 * field is now, may have missed it (review s21, S1). */
static bool shot_view_moved(snap_agent *a, const char *session, const shot_rect *view)
{
    pcall lm;
    if (snap_act_call0(a, session, "Page.getLayoutMetrics", &lm)) {
        snap_act_pfree(&lm);
        return true;
    }
    shot_rect now;
    shot_view(json_get(lm.rep.result, "cssVisualViewport"), &now);
    snap_act_pfree(&lm);
    return !shot_whole(&now, view);
}

/* The page box of the element behind ref, in page CSS px (its border box
 * plus the scroll offset; inside out-of-process frames, plus their
 * iframes' offsets and cut to what they show): 0, or the failure. */
static int shot_ref_box(snap_agent *a, const char *ref, int *tab_id, shot_rect *box,
                        shot_rect *view, snap_result *r)
{
    target tg;
    memset(&tg, 0, sizeof tg);
    int rc = snap_act_resolve(a, ref, &tg, r);
    if (rc)
        return rc;
    session_set ss = {0};
    snap_tab *t = snap_tab_by_id(a, tg.tab);
    if (tg.tab != *tab_id) {
        /* The gate judged (and the audit names) the current tab: a ref of
         * another tab is refused, and the current tab stays as it was. */
        int cur = *tab_id;
        a->cur = cur;
        snap_act_release_all(a, &tg, &ss);
        return snap_act_fail(r, SNAP_EINVAL, "%s is in tab t%d, not the current tab t%d: "
                             "switch to it first (browser_tabs)", tg.what, tg.tab, cur);
    }
    /* An element in an out-of-process frame (another site's): its box is in
     * its frame's viewport, moved by the iframes' offsets in the page and
     * cut to what they show. */
    double ox = 0, oy = 0, clip[4] = {-1e18, -1e18, 1e18, 1e18};
    char top[SNAP_ID_MAX];
    snprintf(top, sizeof top, "%s", t ? t->session : "");
    if (!t || (strcmp(top, tg.session) != 0 &&
               (rc = snap_act_frame_origin(a, tg.tab, tg.frame, tg.what, &ox, &oy, clip, r)))) {
        snap_act_release_all(a, &tg, &ss);
        return t ? rc : snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
    }
    if (snap_shot_ref_secret(a, tg.tab, tg.frame, tg.backend, tg.session, tg.oid)) {
        /* Its box is the value: refused outright, never only masked. */
        rc = snap_act_fail(r, SNAP_EDENIED, "%s is a secret field: a screenshot of it would "
                           "show its value (the snapshot shows it without)", tg.what);
        snap_act_release_all(a, &tg, &ss);
        return rc;
    }
    pcall bm, lm;
    rc = snap_act_call(a, tg.session, "DOM.getBoxModel", snap_act_params("s", "objectId", tg.oid),
                       &bm);
    const json_val *q = rc ? NULL : json_get(json_get(bm.rep.result, "model"), "border");
    double x0 = 1e18, y0 = 1e18, x1 = -1e18, y1 = -1e18;
    size_t k = 0;
    for (const json_val *v = json_first(q); v; v = json_next(v), k++) {
        double d = json_num(v);
        if (k % 2 == 0) {
            x0 = snap_act_dmin(x0, d);
            x1 = snap_act_dmax(x1, d);
        } else {
            y0 = snap_act_dmin(y0, d);
            y1 = snap_act_dmax(y1, d);
        }
    }
    snap_act_pfree(&bm);
    x0 = snap_act_dmax(x0 + ox, clip[0]);
    y0 = snap_act_dmax(y0 + oy, clip[1]);
    x1 = snap_act_dmin(x1 + ox, clip[2]);
    y1 = snap_act_dmin(y1 + oy, clip[3]);
    if (k < 8 || x1 - x0 < 1 || y1 - y0 < 1) {
        rc = snap_act_fail(r, SNAP_ENOTVISIBLE, "%s has no box on the page to clip to "
                           "(hidden or zero size)", tg.what);
        snap_act_release_all(a, &tg, &ss);
        return rc;
    }
    double px = 0, py = 0;
    *view = (shot_rect){0, 0, 0, 0};    /* unknown: taken beyond the viewport */
    if (snap_act_call0(a, top, "Page.getLayoutMetrics", &lm) == 0) {
        const json_val *vv = json_get(lm.rep.result, "cssVisualViewport");
        px = json_num(json_get(vv, "pageX"));
        py = json_num(json_get(vv, "pageY"));
        shot_view(vv, view);
    }
    snap_act_pfree(&lm);
    snap_act_release_all(a, &tg, &ss);
    *box = (shot_rect){x0 + px, y0 + py, x1 - x0, y1 - y0};
    return 0;
}

/* Cut area at SHOT_MAX_* (a page can make a page or an element arbitrarily
 * large, and the browser fails on a huge capture): true if it was cut. */
static bool shot_cap(shot_rect *area)
{
    bool cut = false;
    if (area->h > SHOT_MAX_HEIGHT) {
        area->h = SHOT_MAX_HEIGHT;
        cut = true;
    }
    if (area->w > SHOT_MAX_WIDTH) {
        area->w = SHOT_MAX_WIDTH;
        cut = true;
    }
    return cut;
}

/* The area to take: the full page (cut at SHOT_MAX_*), the viewport (at its
 * scroll offset), or o's region; *page_h the page's height. */
static int shot_area(snap_agent *a, snap_tab *t, const snap_shot_opts *o, shot_rect *area,
                     shot_rect *view, bool *cut, double *page_h, snap_result *r)
{
    pcall lm;
    if (snap_act_call0(a, t->session, "Page.getLayoutMetrics", &lm)) {
        int rc = snap_act_fail(r, SNAP_EBROWSER, "screenshot: %s", lm.e.msg);
        snap_act_pfree(&lm);
        return rc;
    }
    const json_val *cs = json_get(lm.rep.result, "cssContentSize");
    const json_val *vv = json_get(lm.rep.result, "cssVisualViewport");
    double cw = snap_act_dceil(json_num(json_get(cs, "width")));
    double ch = snap_act_dceil(json_num(json_get(cs, "height")));
    *page_h = ch;
    shot_view(vv, view);
    if (o->w > 0 && o->h > 0)
        *area = (shot_rect){snap_act_dmax(o->x, 0), snap_act_dmax(o->y, 0), o->w, o->h};
    else if (o->full_page && cw >= 1 && ch >= 1)
        *area = (shot_rect){0, 0, cw, ch};
    else
        *area = *view;
    snap_act_pfree(&lm);
    *cut = shot_cap(area);
    if (area->w < 1 || area->h < 1)
        return snap_act_fail(r, SNAP_EINVAL, "the region to take is empty");
    return 0;
}

/* Square root by Newton's method (no libm in the link), for v > 0. */
static double shot_sqrt(double v)
{
    double x = v > 1 ? v : 1;
    for (int i = 0; i < 60; i++)
        x = (x + v / x) / 2;
    return x;
}

/* The capture im is dropped and the screenshot refused: why. */
static int shot_refuse(shot_img *im, snap_result *r, const char *why)
{
    free(im->img);
    im->img = NULL;
    return snap_act_fail(r, SNAP_EDENIED, "screenshot refused: %s", why);
}

/* Take area at scale 1 as PNG; while over o->max_bytes, downscale (PNG
 * while the scale stays >= 0.5), then JPEG at quality 80, then 60 with
 * smaller scales. *first_len is the size of the first capture. */
static int shot_fit(snap_agent *a, snap_tab *t, const snap_shot_opts *o, const shot_rect *area,
                    const shot_rect *view, const snap_shot_mask *m, bool beyond, shot_img *im,
                    size_t *first_len, double *scale, int *quality, snap_result *r)
{
    *scale = 1;
    *quality = 0;
    /* The viewport with a masked field: taken as the browser shows it now,
     * with no clip. A clip is a place in the page: had the page scrolled
     * since its view was read (a smooth scroll still running, a page that
     * scrolls itself), the capture would show the field where the clip
     * says while the mask is painted where the field is now (review s21,
     * S1). Not downscaled either (below). */
    bool noclip = m && m->fields && !beyond && shot_whole(area, view);
    const shot_rect *clip = noclip ? NULL : area;
    int rc = shot_take(a, t->session, clip, 1, beyond, 0, im, r);
    if (rc)
        return rc;
    *first_len = im->len;
    /* Downscaled, the browser paints the mask at the field's unscaled place
     * (gate21): with a masked field in the area, only JPEG steps. */
    int noscale = noclip ? 1 : -1;
    for (int step = 0; o->max_bytes && im->len > o->max_bytes && step < 6; step++) {
        double s = *scale * shot_sqrt((double)o->max_bytes / (double)im->len) * 0.92;
        if (noscale < 0)
            noscale = m && m->fields &&
                      snap_shot_mask_meets(a, m, area->x - view->x, area->y - view->y, area->w,
                                           area->h);
        if (noscale && *quality == 60)
            return shot_refuse(im, r, "over the size cap even as JPEG, and with a secret field "
                               "masked in it the capture cannot be downscaled (the browser "
                               "paints the mask at the field's unscaled place); take a smaller "
                               "region");
        if (noscale)
            *quality = *quality ? 60 : 80;
        else if (step == 0 && s >= 0.5) {
            *scale = s;
        } else if (*quality == 0) {
            *quality = 80;
        } else if (*quality == 80) {
            *quality = 60;
        } else {
            *scale = snap_act_dmax(s, 0.02);
        }
        free(im->img);
        if ((rc = shot_take(a, t->session, clip, *scale, beyond, *quality, im, r)))
            return rc;
    }
    /* A clipped capture with a masked field on the page: the view must
     * still be the one the clip and the field boxes were measured in. */
    if (clip && m && m->fields && shot_view_moved(a, t->session, view))
        return shot_refuse(im, r, "the page scrolled while the screenshot was taken, and it has "
                           "a secret field masked: take it again once the page is still; the "
                           "snapshot shows the page without their values");
    return 0;
}

/* Take area with the secret fields masked (act_shot_mask.c). Beyond the
 * viewport the overlay covers nothing out of view (and the page is laid
 * out again for the capture), so a page with a secret field with a value
 * is refused then (red team s12, W4). The fields are watched from the
 * search to after the capture, and so are the iframes of masked frames
 * found out of view: a change discards the image, taken once more, then
 * refused (W6). 0 with *im, fields[0] (masked) and fields[1] (of those,
 * in frames out of view), or the failure. */
static int shot_masked(snap_agent *a, int tab_id, const snap_shot_opts *o, const shot_rect *area,
                       const shot_rect *view, bool beyond, shot_img *im, size_t *first,
                       double *scale, int *quality, int fields[2], snap_result *r)
{
    for (int tries = 0;; tries++) {
        snap_shot_mask m;
        int rc = snap_shot_mask_on(a, tab_id, !beyond, &m, r);
        if (rc)
            return rc;
        snap_tab *t = snap_tab_by_id(a, tab_id);
        if (!t)
            rc = snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
        else if (beyond && m.fields)
            rc = snap_act_fail(r, SNAP_EDENIED, "screenshot refused: the page has %d secret "
                               "field%s with a value, and a capture beyond the viewport (a full "
                               "page, or a region or element not wholly in view) cannot mask "
                               "them: the mask covers only what is in view. Take the viewport "
                               "(scrolled to the part you need) or a region inside it; the "
                               "snapshot shows the page without their values", m.fields,
                               m.fields == 1 ? "" : "s");
        else if (!beyond && shot_mask_misses(a, &m, area, view))
            rc = snap_act_fail(r, SNAP_EDENIED, "screenshot refused: a secret field with a "
                               "value lies in the region or element asked for, and the browser "
                               "paints the mask only in a capture of the whole viewport: take "
                               "the viewport (scrolled to the part you need); the snapshot "
                               "shows the page without their values");
        else
            rc = shot_fit(a, t, o, area, view, &m, beyond, im, first, scale, quality, r);
        int changed = rc ? 0 : snap_shot_mask_check(a, &m);
        snap_shot_mask_off(a, &m);
        if (rc)
            return rc;
        if (!changed) {
            fields[0] = m.fields;
            fields[1] = m.out;
            return 0;
        }
        free(im->img);
        im->img = NULL;
        if (tries)
            return snap_act_fail(r, SNAP_EDENIED, "screenshot refused: the page changed its "
                                 "secret fields (or what holds them) while the screenshot was "
                                 "taken, twice, so an image could show their values; the "
                                 "snapshot shows the page without them");
    }
}

static void shot_size(base_buf *b, size_t n)
{
    if (n >= 10 * 1024)
        base_buf_printf(b, "%zu KB", (n + 512) / 1024);
    else
        base_buf_printf(b, "%zu bytes", n);
}

static int screenshot_run(snap_agent *a, const snap_shot_opts *o, snap_result *r)
{
    snap_tab *t;
    int rc = snap_act_begin(a, NULL, &t, r);
    if (rc)
        return rc;
    shot_rect area, view;
    bool cut = false, clipped = (o->ref && *o->ref) || (o->w > 0 && o->h > 0);
    double page_h = 0;
    if (o->ref && *o->ref) {
        int tab_id = t->id;
        if ((rc = shot_ref_box(a, o->ref, &tab_id, &area, &view, r)))
            return rc;
        t = snap_tab_by_id(a, tab_id);
        if (!t)
            return snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
        cut = shot_cap(&area);
    } else if ((rc = shot_area(a, t, o, &area, &view, &cut, &page_h, r))) {
        return rc;
    }
    bool full = o->full_page && !clipped;
    shot_img im;
    size_t first = 0;
    double scale = 1;
    int quality = 0, fields[2] = {0, 0};
    /* The secret fields with a value are masked for the capture only. */
    int tab_id = t->id;
    rc = shot_masked(a, tab_id, o, &area, &view, !shot_in_view(&area, &view), &im, &first,
                     &scale, &quality, fields, r);
    if (rc)
        return rc;
    if (!(t = snap_tab_by_id(a, tab_id))) {
        free(im.img);
        return snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
    }
    r->image = im.img;
    r->image_len = im.len;
    snap_obs_issue(a, t, r->obs);
    base_buf b = {0};
    base_buf_printf(&b, "screenshot of tab t%d (%s): %ux%u %s", t->id,
                    o->ref && *o->ref ? "element" : clipped ? "region" : full ? "full page"
                                                                             : "viewport",
                    im.width, im.height, im.jpeg ? "JPEG" : "PNG");
    if (quality)
        base_buf_printf(&b, " q%d", quality);
    base_buf_printf(&b, ", ");
    shot_size(&b, im.len);
    if (o->max_bytes && (scale < 1 || quality)) {
        base_buf_printf(&b, " (cap ");
        shot_size(&b, o->max_bytes);
        base_buf_printf(&b, "; the %.0fx%.0f PNG was ", area.w, area.h);
        shot_size(&b, first);
        if (scale < 1)
            base_buf_printf(&b, "; downscaled %.2fx", scale);
        base_buf_printf(&b, ")");
    }
    if (o->max_bytes && im.len > o->max_bytes)
        base_buf_printf(&b, "; still over the cap: take a region or an element (ref)");
    if (cut && o->ref && *o->ref)
        base_buf_printf(&b, "; the element is larger, cut to its top left 4096x16384 px "
                        "(a region shows the rest)");
    else if (cut)
        base_buf_printf(&b, "; the page is larger, cut at 4096x16384 px (it is %.0f px high: "
                        "a region from y=16384 shows the rest)", page_h);
    if (fields[0])
        base_buf_printf(&b, "; %d secret field%s masked (grey: values never shown)", fields[0],
                        fields[0] == 1 ? "" : "s");
    if (fields[1])
        base_buf_printf(&b, "; %d of them in frames out of view", fields[1]);
    base_buf_printf(&b, " [obs %s]", r->obs);
    json_w w;
    snap_result_begin(&w, 0);
    json_w_key(&w, "tab");
    json_w_int(&w, t->id);
    json_w_key(&w, "full_page");
    json_w_bool(&w, full);
    json_w_key(&w, "width");
    json_w_uint(&w, im.width);
    json_w_key(&w, "height");
    json_w_uint(&w, im.height);
    json_w_key(&w, "format");
    json_w_str(&w, im.jpeg ? "jpeg" : "png");
    json_w_key(&w, "bytes");
    json_w_uint(&w, (uint64_t)im.len);
    if (o->max_bytes) {
        json_w_key(&w, "original_bytes");
        json_w_uint(&w, (uint64_t)first);
        json_w_key(&w, "scale");
        json_w_num(&w, scale);
        if (quality) {
            json_w_key(&w, "quality");
            json_w_int(&w, quality);
        }
    }
    json_w_key(&w, "masked");
    json_w_int(&w, fields[0]);
    if (cut) {
        json_w_key(&w, "cut");
        json_w_bool(&w, true);
    }
    return snap_act_result_end(&w, &b, r);
}

int snap_screenshot_with(snap_agent *a, const snap_shot_opts *o, snap_result *r)
{
    snap_gated gg;
    int rc = snap_act_gate_page(a, "screenshot", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    rc = screenshot_run(a, o, r);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}

int snap_screenshot(snap_agent *a, bool full_page, snap_result *r)
{
    snap_shot_opts o = {0};
    o.full_page = full_page;
    return snap_screenshot_with(a, &o, r);
}

/* ---- crops of many elements under one secret-field search ---- */

static void crops_free(snap_shot_crop *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(out[i].img);
        out[i].img = NULL;
        out[i].len = 0;
    }
}

/* Where the crops scrolled the page from (crop_reveal), put back after. */
typedef struct {
    bool moved;
    double x, y;
} crop_scroll;

/* Bring part (a box in the element's border box) of ref's element into
 * view: the browser's own scroll of every box and frame that holds it (a
 * capture beyond the viewport lays the whole page out again: seconds a
 * crop on a long page). True when it scrolled. */
static bool crop_reveal(snap_agent *a, const char *ref, const shot_rect *part)
{
    snap_result r;
    memset(&r, 0, sizeof r);
    target tg;
    memset(&tg, 0, sizeof tg);
    session_set ss = {0};
    int rc = snap_act_resolve(a, ref, &tg, &r);
    if (!rc) {
        json_w w;
        json_w_init(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, "objectId");
        json_w_str(&w, tg.oid);
        json_w_key(&w, "rect");
        json_w_obj_begin(&w);
        shot_rect_put(&w, part);
        json_w_obj_end(&w);
        json_w_obj_end(&w);
        pcall sc;
        rc = snap_act_call(a, tg.session, "DOM.scrollIntoViewIfNeeded", json_w_take(&w, NULL),
                           &sc);
        snap_act_pfree(&sc);
        snap_act_release_all(a, &tg, &ss);
        a->changes++;   /* boxes inside the page may have moved (act_pointer.c) */
    }
    snap_result_free(&r);
    return rc == 0;
}

/* Cut area to the viewport's size (its top left part): a crop is evidence
 * of an element, and a capture larger than the window is a capture beyond
 * it. True when cut. */
static bool crop_fit_view(shot_rect *area, const shot_rect *view)
{
    bool cut = false;
    if (view->w >= 1 && area->w > view->w)
        area->w = view->w, cut = true;
    if (view->h >= 1 && area->h > view->h)
        area->h = view->h, cut = true;
    return cut;
}

/* The page's scroll as it was before the crops (cdpgate's world: the
 * browser's own scrollTo, whatever the page defined; page_js.c). */
static void crop_scroll_back(snap_agent *a, int tab_id, const crop_scroll *cs)
{
    snap_tab *t = cs->moved ? snap_tab_by_id(a, tab_id) : NULL;
    int64_t w = t && t->nframes ? snap_frame_world(a, tab_id, t->frames[0].id) : 0;
    if (!w)
        return;
    char expr[400];
    snprintf(expr, sizeof expr, "%s[%.0f,%.0f])", snap_js_scroll_back_expr, cs->x, cs->y);
    pcall pc;
    snap_act_call(a, t->session, "Runtime.evaluate", snap_world_eval_params(w, expr), &pc);
    snap_act_pfree(&pc);
}

/* One element's crop while the mask m is on (screenshot_run's rules: a
 * capture beyond the viewport is refused when the page has a secret field
 * with a value). An element larger than the viewport is cut to its top
 * left part (*cut); out of view with no such field, that part is scrolled
 * into view first (cs notes where from). 0 with *im, or the code. */
static int crop_one(snap_agent *a, int tab_id, const char *ref, size_t max_bytes,
                    const snap_shot_mask *m, crop_scroll *cs, shot_img *im, bool *cut)
{
    snap_result r;
    memset(&r, 0, sizeof r);
    shot_rect area, view;
    int tid = tab_id;
    int rc = shot_ref_box(a, ref, &tid, &area, &view, &r);
    bool beyond = false;
    if (!rc) {
        bool fit = crop_fit_view(&area, &view), capped = shot_cap(&area);
        *cut = fit || capped;
        beyond = !shot_in_view(&area, &view);
    }
    if (beyond && !m->fields && view.w >= 1 && view.h >= 1) {
        shot_rect v0 = view, part = {0, 0, area.w, area.h};
        if (crop_reveal(a, ref, &part)) {
            if (!cs->moved)
                *cs = (crop_scroll){true, v0.x, v0.y};
            snap_result_free(&r);
            memset(&r, 0, sizeof r);
            tid = tab_id;
            if (!(rc = shot_ref_box(a, ref, &tid, &area, &view, &r))) {
                bool fit = crop_fit_view(&area, &view), capped = shot_cap(&area);
                *cut = fit || capped;
                beyond = !shot_in_view(&area, &view);
            }
        }
    }
    snap_tab *t = rc ? NULL : snap_tab_by_id(a, tid);
    if (!rc && !t)
        rc = SNAP_ENOTAB;
    if (!rc) {
        snap_shot_opts o = {0};
        o.max_bytes = max_bytes;
        size_t first = 0;
        double scale = 1;
        int quality = 0;
        rc = beyond && m->fields ? SNAP_EDENIED
             : !beyond && shot_mask_misses(a, m, &area, &view)
                 ? SNAP_EDENIED
                 : shot_fit(a, t, &o, &area, &view, m, beyond, im, &first, &scale, &quality,
                            &r);
    }
    snap_result_free(&r);
    return rc;
}

int snap_screenshot_refs(snap_agent *a, const char *const *refs, size_t n, size_t max_bytes,
                         snap_shot_crop *out, snap_result *r)
{
    memset(out, 0, n * sizeof *out);
    snap_gated gg;
    int rc = snap_act_gate_page(a, "screenshot", false, false, NULL, NULL, &gg, r);
    if (rc)
        return rc;
    snap_tab *t = NULL;
    rc = snap_act_begin(a, NULL, &t, r);
    int tab_id = t ? t->id : 0;
    crop_scroll cs = {0};
    for (int tries = 0; !rc; tries++) {
        snap_shot_mask m;
        /* Crops with a secret field on the page are taken in view only. */
        if ((rc = snap_shot_mask_on(a, tab_id, true, &m, r)))
            break;
        for (size_t i = 0; i < n; i++) {
            shot_img im;
            memset(&im, 0, sizeof im);
            out[i].code = crop_one(a, tab_id, refs[i], max_bytes, &m, &cs, &im, &out[i].cut);
            out[i].img = out[i].code ? NULL : im.img;
            out[i].len = out[i].code ? 0 : im.len;
            if (out[i].code)
                free(im.img);
        }
        int changed = snap_shot_mask_check(a, &m);
        snap_shot_mask_off(a, &m);
        if (!changed)
            break;
        crops_free(out, n);
        if (tries)
            rc = snap_act_fail(r, SNAP_EDENIED, "screenshots refused: the page changed its "
                               "secret fields (or what holds them) while the crops were taken, "
                               "twice, so an image could show their values");
    }
    crop_scroll_back(a, tab_id, &cs);
    if (rc)
        crops_free(out, n);
    snap_gate_done(a, &gg, rc, r);
    return rc;
}
