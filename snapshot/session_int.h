/*
 * session_int.h — internals shared by session.c, session_check.c and handback.c
 * only (browser contexts, session restore, the login handoff; whether a context
 * still holds its session).
 */
#ifndef CDPGATE_SESSION_INT_H
#define CDPGATE_SESSION_INT_H

#include "snapshot/snap_int.h"

/* ---- session.c ---- */

/* Copy an id (NULL: "") into dst. */
void snap_session_copyid(char dst[SNAP_ID_MAX], const char *s);
/* Whether list ("\nname\n...", NULL = empty) holds name. */
bool snap_session_names_has(const char *list, const char *name);
/* The host of an origin "scheme://host[:port]" (brackets kept). */
void snap_session_origin_host(const char *origin, char *out, size_t cap);
/* Whether a cookie of domain (leading dot allowed) belongs to the service
 * at host: the host's own cookies, its parent domain's, its subdomains'. */
bool snap_session_cookie_for_host(const char *domain, const char *host);

#define SNAP_STATE_MAX (8u << 20)   /* bytes of a session state we accept */
/* Read the service's cookies (context c) and the origin's localStorage
 * (tab tab_id, when on c's origin) into a session state v1 document (new;
 * wipe it), counting them; *expiry: the latest cookie expiry when the
 * session is persistent cookies only, else 0. */
int snap_session_capture(snap_agent *a, const snap_ctx *c, int tab_id, char **out,
                         size_t *ncookies, size_t *nls, int64_t *expiry, cdp_err *e);
/* A session saved under "default" never replaces one the vault holds for
 * origin under a named identity: 0, or the refusal in r. when: "started",
 * "saved". */
int snap_session_keeps_named(snap_agent *a, const char *origin, const char *when,
                             snap_result *r);

/* The login handoff's start (snap_login_begin without the gate's question
 * and the origin checks: the caller made them): a fresh login context for
 * url's origin, url opened in a new tab of it (current), the blocked
 * state. 0, or a snap_fail code. */
int snap_session_login_start(snap_agent *a, const char *url, snap_result *r);
/* End the login handoff and close its context ci with its tabs (its
 * cookies go with it). 0, or -1 with why. */
int snap_session_login_close(snap_agent *a, size_t ci, char *why, size_t cap);

/* ---- session_check.c ---- */

/* 1 when tab's page shows a login wall, 0 when not, -1 when unknown. */
int snap_session_login_wall(snap_agent *a, int tab_id);
/* Whether path looks like a login page's (a segment naming login or
 * sign-in, or an auth/SSO/second-factor step). */
bool snap_session_login_path(const char *path);

#endif
