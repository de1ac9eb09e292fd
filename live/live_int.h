/*
 * live_int.h — what the files of live/ share (no other module includes it).
 */
#ifndef CDPGATE_LIVE_INT_H
#define CDPGATE_LIVE_INT_H

#include "live/live.h"

/* Fill err (may be NULL) with code, offset and the formatted message;
 * returns code. The message must never hold a token or cookie value. */
int live_fail(live_err *err, int code, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* viewer.c: the viewer page with nonce (for its script and style) and
 * ws_nonce (what its socket offers, base64url) into out, read-only (a
 * watcher's: no input sent, no hand-back) when watch: its length, or -1
 * when cap is too small (LIVE_VIEWER_CAP fits) or ws_nonce is not
 * base64url. */
#define LIVE_VIEWER_CAP 16384
int live_viewer_page(char *out, size_t cap, const char *nonce, const char *ws_nonce,
                     bool watch);

/* state.c: the state messages (live.h, "the session's state"), new
 * (free them), their length in *len; NULL when out of memory. */
char *live_state_url(const char *url, const char *origin, size_t *len);
char *live_state_control(bool human, int64_t epoch, size_t *len);
char *live_state_tabs(const live_tab *tabs, size_t n, size_t *len);

#endif
