/*
 * cast.c — the screencast of the agent's current tab for the live view
 * (issue 15, point 1): Page.startScreencast (JPEG, a bounded size), each
 * frame acknowledged at once with Page.screencastFrameAck (the live
 * server paces the viewer itself: it keeps the latest frame only), the
 * JPEG bytes (base64-decoded, never JSON) handed to the host's callback.
 * A page that does not change sends no frame: when none came for
 * idle_ms, the tab is captured again (Page.captureScreenshot of the
 * viewport at its own size, one at a time). The cast follows the
 * current tab (a tab switch, a popup that became current):
 * snap_cast_step moves it. When the tab navigates (its main frame
 * committed, its DOM or load event fired), it is captured again at once,
 * so the view does not show the old page until the next frame or idle_ms.
 * Frames are consumed (cdp_event_consume: never kept in the connection's
 * event ring) and decoded into one buffer reused for every frame.
 *
 * Frames are for the person's view only: this file never writes them
 * anywhere, and they never reach a tool result (the model's screenshots
 * are act_page.c's, with their secret-field rules).
 */
#include "snapshot/snap_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAST_QUALITY 70
#define CAST_MAX_W 1280
#define CAST_MAX_H 720
#define CAST_IDLE_MS 1000
#define CAST_FRAME_MAX (8u << 20)   /* base64 text of one frame */

struct snap_cast {
    snap_agent *a;
    snap_cast_opts o;
    char session[SNAP_ID_MAX];  /* the tab cast now ("" none) */
    int tab;
    snap_cast_meta meta;        /* of the last frame */
    int64_t last_ms;            /* when the last frame came (or the cast began) */
    uint64_t shot;              /* a re-capture in flight, 0 none */
    bool now;                   /* a re-capture is due at once (a navigation) */
    char shot_session[SNAP_ID_MAX];
    uint8_t *jpeg;              /* the decoded frame: one buffer, reused */
    size_t jpeg_cap;
};

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* SOF markers: C0..CF but DHT (C4), JPG (C8) and DAC (CC). */
static bool sof_marker(uint8_t m)
{
    return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc;
}

int snap_cast_jpeg_size(const uint8_t *p, size_t n, int *w, int *h)
{
    if (n < 4 || p[0] != 0xff || p[1] != 0xd8)
        return -1;
    size_t i = 2;
    while (i + 4 <= n) {
        if (p[i] != 0xff)
            return -1;
        uint8_t m = p[i + 1];
        if (m == 0xff) {            /* fill byte */
            i++;
            continue;
        }
        if (m == 0xd9 || m == 0xda) /* end of image, start of scan: no SOF before */
            return -1;
        size_t len = be16(p + i + 2);
        if (len < 2 || i + 2 + len > n)
            return -1;
        if (sof_marker(m)) {
            if (len < 7)
                return -1;
            *h = be16(p + i + 5);
            *w = be16(p + i + 7);
            return *w > 0 && *h > 0 ? 0 : -1;
        }
        i += 2 + len;
    }
    return -1;
}

/* The decode buffer, at least need bytes (grown, never shrunk: frames of
 * one tab are about the same size; zeroed when replaced or freed). */
static uint8_t *cast_buffer(snap_cast *c, size_t need)
{
    if (need <= c->jpeg_cap)
        return c->jpeg;
    size_t cap = need + need / 4;
    uint8_t *nb = malloc(cap);
    if (!nb)
        return NULL;
    if (c->jpeg)
        base_memzero(c->jpeg, c->jpeg_cap);
    free(c->jpeg);
    c->jpeg = nb;
    c->jpeg_cap = cap;
    return nb;
}

static void cast_deliver(snap_cast *c, const char *b64, size_t blen, const json_val *meta)
{
    if (blen > CAST_FRAME_MAX)
        return;
    uint8_t *jpeg = cast_buffer(c, blen / 4 * 3 + 4);
    ssize_t n = jpeg ? base_b64_decode(b64, blen, jpeg, c->jpeg_cap) : -1;
    int w = 0, h = 0;
    if (n > 0 && snap_cast_jpeg_size(jpeg, (size_t)n, &w, &h) == 0) {
        if (meta) {
            c->meta.device_w = json_num(json_get(meta, "deviceWidth"));
            c->meta.device_h = json_num(json_get(meta, "deviceHeight"));
            c->meta.page_scale = json_num(json_get(meta, "pageScaleFactor"));
            c->meta.offset_top = json_num(json_get(meta, "offsetTop"));
        }
        c->meta.width = w;
        c->meta.height = h;
        c->meta.tab = c->tab;
        c->meta.recaptured = meta == NULL;
        c->last_ms = base_now_ms();
        if (c->o.frame)
            c->o.frame(c->o.ud, jpeg, (size_t)n, &c->meta);
    }
}

/* The cast tab's main frame navigated or loaded: its view is captured at
 * once (the screencast may hold the old page's picture until the new one
 * paints again, and a still page sends nothing), not after idle_ms. */
static bool cast_navigated(const char *method, const json_val *params)
{
    if (strcmp(method, "Page.loadEventFired") == 0 ||
        strcmp(method, "Page.domContentEventFired") == 0)
        return true;
    return strcmp(method, "Page.frameNavigated") == 0 &&
           !json_get(json_get(params, "frame"), "parentId");
}

static void cast_event(void *ud, cdp_conn *conn, const char *session, const char *method,
                       const json_val *params)
{
    snap_cast *c = ud;
    if (strncmp(method, "Page.", 5) != 0)
        return;
    if (session && c->session[0] && strcmp(session, c->session) == 0 &&
        cast_navigated(method, params)) {
        c->now = true;
        return;
    }
    if (strcmp(method, "Page.screencastFrame") != 0)
        return;
    cdp_event_consume(conn);    /* a frame is for the view only: not kept */
    if (!session || strcmp(session, c->session) != 0)
        return;
    char ack[64];
    snprintf(ack, sizeof ack, "{\"sessionId\":%.0f}", json_num(json_get(params, "sessionId")));
    uint64_t id = 0;
    cdp_err e;
    if (snap_cdp_send(c->a, session, "Page.screencastFrameAck", ack, &id, &e) == 0)
        cdp_forget(c->a->c, id);
    size_t blen = 0;
    const char *b64 = json_str(json_get(params, "data"), &blen);
    if (b64)
        cast_deliver(c, b64, blen, json_get(params, "metadata"));
}

static void cast_send(snap_cast *c, const char *session, const char *method,
                      const char *params)
{
    uint64_t id = 0;
    cdp_err e;
    if (snap_cdp_send(c->a, session, method, params, &id, &e) == 0)
        cdp_forget(c->a->c, id);
}

/* Cast the current tab when it is not the one cast now. */
static void cast_follow(snap_cast *c)
{
    snap_tab *t = snap_tab_current(c->a);
    if (!t) {
        c->session[0] = 0;
        c->tab = 0;
        return;
    }
    if (strcmp(t->session, c->session) == 0)
        return;
    snap_tab *old = snap_tab_by_session(c->a, c->session);
    if (old && !old->closed)
        cast_send(c, c->session, "Page.stopScreencast", NULL);
    snprintf(c->session, sizeof c->session, "%s", t->session);
    c->tab = t->id;
    c->meta.width = c->meta.height = 0;
    char p[128];
    snprintf(p, sizeof p, "{\"format\":\"jpeg\",\"quality\":%d,\"maxWidth\":%d,"
             "\"maxHeight\":%d,\"everyNthFrame\":1}", c->o.quality, c->o.max_w, c->o.max_h);
    cast_send(c, c->session, "Page.startScreencast", p);
    c->last_ms = base_now_ms();     /* the screencast sends a first frame */
}

static void shot_collect(snap_cast *c)
{
    if (!c->shot || !cdp_reply_ready(c->a->c, c->shot))
        return;
    cdp_reply r = {0};
    cdp_err e;
    if (cdp_wait(c->a->c, c->shot, 1000, &r, &e) == 0 &&
        strcmp(c->shot_session, c->session) == 0) {
        size_t blen = 0;
        const char *b64 = json_str(json_get(r.result, "data"), &blen);
        if (b64)
            cast_deliver(c, b64, blen, NULL);
    }
    cdp_reply_free(&r);
    c->shot = 0;
}

int snap_cast_step(snap_cast *c)
{
    if (!c)
        return 0;
    if (cdp_conn_dead(c->a->c))
        return SNAP_EBROWSER;
    cast_follow(c);
    shot_collect(c);
    if (!c->session[0] || c->shot || (!c->now && base_now_ms() - c->last_ms < c->o.idle_ms))
        return 0;
    c->now = false;
    /* The viewport as it is (no clip: a scaled clip makes Chromium emulate
     * the smaller size for a moment, and the screencast sends a frame of
     * it); a viewer scales the image, snap_cast_point the clicks. */
    char p[96];
    snprintf(p, sizeof p, "{\"format\":\"jpeg\",\"quality\":%d,\"optimizeForSpeed\":true}",
             c->o.quality);
    cdp_err e;
    if (snap_cdp_send(c->a, c->session, "Page.captureScreenshot", p, &c->shot, &e) != 0)
        c->shot = 0;
    snprintf(c->shot_session, sizeof c->shot_session, "%s", c->session);
    c->last_ms = base_now_ms();     /* at most one re-capture per idle_ms */
    return 0;
}

snap_cast *snap_cast_start(snap_agent *a, const snap_cast_opts *o, char *why, size_t cap)
{
    snap_cast *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    c->a = a;
    if (o)
        c->o = *o;
    if (c->o.quality <= 0 || c->o.quality > 100)
        c->o.quality = CAST_QUALITY;
    if (c->o.max_w <= 0)
        c->o.max_w = CAST_MAX_W;
    if (c->o.max_h <= 0)
        c->o.max_h = CAST_MAX_H;
    if (c->o.idle_ms <= 0)
        c->o.idle_ms = CAST_IDLE_MS;
    if (cdp_listen(a->c, cast_event, c) != 0) {
        snprintf(why, cap, "cannot listen to the browser's frames (too many listeners)");
        free(c);
        return NULL;
    }
    snap_cast_step(c);
    return c;
}

void snap_cast_stop(snap_cast *c)
{
    if (!c)
        return;
    cdp_unlisten(c->a->c, cast_event, c);
    if (c->session[0] && !cdp_conn_dead(c->a->c))
        cast_send(c, c->session, "Page.stopScreencast", NULL);
    if (c->shot)
        cdp_forget(c->a->c, c->shot);
    if (c->jpeg)
        base_memzero(c->jpeg, c->jpeg_cap);
    free(c->jpeg);
    free(c);
}

const snap_cast_meta *snap_cast_last(const snap_cast *c)
{
    return c && c->meta.width > 0 ? &c->meta : NULL;
}

/* Frame pixels to the page's CSS pixels: the frame is the viewport
 * (deviceWidth x deviceHeight DIP, below offsetTop) scaled to the JPEG's
 * size; pinch zoom (pageScaleFactor) magnifies what the DIP show. */
int snap_cast_point(const snap_cast *c, double fx, double fy, double *x, double *y)
{
    const snap_cast_meta *m = snap_cast_last(c);
    if (!m)
        return -1;
    /* a re-capture before any screencast frame: the viewport, unscaled */
    double dw = m->device_w >= 1 ? m->device_w : m->width;
    double dh = m->device_h >= 1 ? m->device_h : m->height;
    double ps = m->page_scale > 0 ? m->page_scale : 1;
    *x = fx * dw / m->width / ps;
    *y = (fy * dh / m->height - m->offset_top) / ps;
    return 0;
}
