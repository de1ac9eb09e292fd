/*
 * state.c — the state messages the server sends the viewer's sockets
 * (live/live.h, "the session's state"): the URL and origin of the current
 * tab, who holds control, and the tab list, written as JSON (I/O-free).
 *
 * What they carry comes from the browser (a page's title and URL): page
 * data, written escaped by json/'s writer and shown by the page as text,
 * never as HTML. Long strings are cut at a character boundary
 * (LIVE_STATE_TEXT_MAX bytes), the tab list at LIVE_TABS_MAX tabs.
 */
#include "live/live_int.h"

#include "json/json.h"

#include <stdlib.h>
#include <string.h>

/* s, cut to at most max bytes without splitting a UTF-8 sequence. */
static void put_cut(json_w *w, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    }
    json_w_strn(w, s, n);
}

/* The writer's text, new (free it), or NULL. */
static char *finish(json_w *w, size_t *len)
{
    char *out = json_w_error(w) ? NULL : json_w_take(w, len);
    json_w_free(w);
    return out;
}

char *live_state_url(const char *url, const char *origin, size_t *len)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "t");
    json_w_str(&w, "url");
    json_w_key(&w, "url");
    put_cut(&w, url ? url : "", LIVE_STATE_TEXT_MAX);
    json_w_key(&w, "origin");
    put_cut(&w, origin ? origin : "", LIVE_STATE_TEXT_MAX);
    json_w_obj_end(&w);
    return finish(&w, len);
}

char *live_state_control(bool human, int64_t epoch, size_t *len)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "t");
    json_w_str(&w, "control");
    json_w_key(&w, "who");
    json_w_str(&w, human ? "human" : "agent");
    json_w_key(&w, "epoch");
    json_w_int(&w, epoch);
    json_w_obj_end(&w);
    return finish(&w, len);
}

char *live_state_tabs(const live_tab *tabs, size_t n, size_t *len)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "t");
    json_w_str(&w, "tabs");
    json_w_key(&w, "tabs");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < n && i < LIVE_TABS_MAX; i++) {
        json_w_obj_begin(&w);
        json_w_key(&w, "id");
        put_cut(&w, tabs[i].id ? tabs[i].id : "", 64);
        json_w_key(&w, "title");
        put_cut(&w, tabs[i].title ? tabs[i].title : "", LIVE_STATE_TITLE_MAX);
        json_w_key(&w, "origin");
        put_cut(&w, tabs[i].origin ? tabs[i].origin : "", LIVE_STATE_TEXT_MAX);
        json_w_key(&w, "url");
        put_cut(&w, tabs[i].url ? tabs[i].url : "", LIVE_STATE_TEXT_MAX);
        json_w_key(&w, "current");
        json_w_bool(&w, tabs[i].current);
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    if (n > LIVE_TABS_MAX) {
        json_w_key(&w, "more");
        json_w_uint(&w, n - LIVE_TABS_MAX);
    }
    json_w_obj_end(&w);
    return finish(&w, len);
}
