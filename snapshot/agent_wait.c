/*
 * agent_wait.c — waiting for the consequences of an action (snap_settle): navigations,
 * network quiet, dialogs and popups, event-driven and bounded.
 *
 * Part of snapshot/ (see agent_int.h for what the agent* files share).
 */
#include "snapshot/agent_int.h"
#include "snapshot/page_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- waiting for consequences ---- */

/* Quiet window: how long nothing must happen (no navigation, no request,
 * no new tab) before an action is taken to have settled. It is a window
 * measured from the last event, not a fixed sleep: a click with no effect
 * costs one window; a click that navigates waits for the load, then one
 * window (which is what catches script and meta redirects). */
#define QUIET_MS 30
/* After a click whose page reported its next frame, with nothing else
 * seen: what a click's consequences (a navigation, a request, a popup)
 * start within is taken by then. */
#define QUICK_QUIET_MS 8
/* A request with no news for this long (long polling, a stuck beacon) no
 * longer holds the page busy. */
#define NET_STALE_MS 500

/* Does the page say it will navigate shortly by itself? */
static bool redirect_pending(snap_agent *a, snap_tab *t)
{
    if (!t->nframes || !t->frames[0].url || (strncmp(t->frames[0].url, "http:", 5) != 0 &&
                                              strncmp(t->frames[0].url, "https:", 6) != 0))
        return false;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "expression");
    json_w_str(&w, snap_js_redirect_expr);
    json_w_key(&w, "returnByValue");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    cdp_reply rep = {0};
    int rc = params ? snap_cdp_call(a, t->session, "Runtime.evaluate", params, 2000, &rep,
                                    NULL) : CDP_ENOMEM;
    free(params);
    bool pending = false;
    if (rc == 0) {
        const json_val *v = json_get(json_get(rep.result, "result"), "value");
        double delay = json_num(json_first(v));
        bool small = json_bool(json_next(json_first(v)));
        bool words = json_bool(json_next(json_next(json_first(v))));
        pending = (delay > 0 && delay * 1000 <= REDIRECT_WINDOW_MS) || (small && words);
    }
    cdp_reply_free(&rep);
    return pending;
}

static int settle_once(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                       int64_t deadline_ms, uint64_t frame_call, snap_settled *out);

int snap_settle(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                int64_t deadline_ms, snap_settled *out)
{
    return snap_settle_frame(a, t, since_nav, tabs_before, deadline_ms, 0, out);
}

int snap_settle_frame(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                      int64_t deadline_ms, uint64_t frame_call, snap_settled *out)
{
    int tab_id = t->id;
    int rc = settle_once(a, t, since_nav, tabs_before, deadline_ms, frame_call, out);
    for (int hop = 0; rc == 0 && hop < REDIRECT_HOPS; hop++) {
        t = snap_tab_by_id(a, tab_id);
        if (!t || !out->navigated || out->dialog || out->closed || out->timed_out)
            break;
        uint64_t nav = t->nav;
        if (!redirect_pending(a, t))
            break;
        /* Wait for the navigation the page scheduled to start. */
        int64_t until = base_now_ms() + REDIRECT_WINDOW_MS;
        if (until > deadline_ms)
            until = deadline_ms;
        bool started = false;
        for (;;) {
            if (snap_sync(a))
                return SNAP_EBROWSER;
            t = snap_tab_by_id(a, tab_id);
            if (!t || t->closed || t->dialog_open || t->loading || t->nav != nav) {
                started = true;
                break;
            }
            int64_t now = base_now_ms();
            if (now >= until)
                break;
            cdp_err e;
            int prc = cdp_pump_one(a->c, (int)(until - now), &e);
            if (prc && prc != CDP_ETIMEOUT)
                return SNAP_EBROWSER;
        }
        if (!started || !t)
            break;
        snap_settled more;
        rc = settle_once(a, t, since_nav, tabs_before, deadline_ms, 0, &more);
        if (rc == 0)
            *out = more;
    }
    return rc;
}

static int settle_once(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                       int64_t deadline_ms, uint64_t frame_call, snap_settled *out)
{
    memset(out, 0, sizeof *out);
    int tab_id = t->id;
    uint64_t last_activity = t->activity;
    size_t last_tabs = a->ntabs;
    int64_t quiet_from = base_now_ms();
    /* The short window holds while the tab has shown no consequence. */
    bool quick = frame_call != 0;
    for (;;) {
        /* The time a human took to answer a request's confirmation is not
         * the action's: the wait is extended by it. */
        int64_t asked0 = a->asked_ms;
        if (snap_sync(a))
            return SNAP_EBROWSER;
        deadline_ms += a->asked_ms - asked0;
        t = snap_tab_by_id(a, tab_id);      /* adoption may move the array */
        if (!t || t->closed) {
            out->closed = true;
            break;
        }
        if (t->dialog_open) {
            out->dialog = true;
            break;
        }
        int64_t now = base_now_ms();
        if (t->activity != last_activity || a->ntabs != last_tabs) {
            last_activity = t->activity;
            last_tabs = a->ntabs;
            quiet_from = now;
            quick = false;
        }
        bool net_busy = t->inflight > 0 && now - (int64_t)t->last_net_ms < NET_STALE_MS;
        if (t->loading || net_busy)
            quick = false;
        bool framed = quick && cdp_reply_ready(a->c, frame_call);
        int quiet = framed ? QUICK_QUIET_MS : QUIET_MS;
        if (!t->loading && !net_busy && now - quiet_from >= quiet)
            break;
        if (now >= deadline_ms) {
            out->timed_out = true;
            break;
        }
        /* Sleep in the read until the next message, the end of the quiet
         * window, or (while busy) a re-check of stale requests. */
        int64_t wake = quiet_from + quiet;
        if (quick && !framed && wake > now + 1)
            wake = now + 1 + (wake - now - 1) / 2;   /* look for the frame sooner */
        if (t->loading || net_busy)
            wake = now + 50;
        if (wake > deadline_ms)
            wake = deadline_ms;
        cdp_err e;
        int rc = cdp_pump_one(a->c, wake > now ? (int)(wake - now) : 1, &e);
        if (rc && rc != CDP_ETIMEOUT)
            return SNAP_EBROWSER;
    }
    if (frame_call)
        cdp_forget(a->c, frame_call);    /* answered or not, nobody reads it */
    t = snap_tab_by_id(a, tab_id);
    out->navigated = t && t->nav != since_nav;
    for (size_t i = tabs_before; i < a->ntabs && out->nnew < 8; i++)
        if (!a->tabs[i].closed)
            out->new_tabs[out->nnew++] = a->tabs[i].id;
    return 0;
}
