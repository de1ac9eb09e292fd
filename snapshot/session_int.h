/*
 * session_int.h — internals shared by session.c and session_check.c only
 * (browser contexts, session restore, the login handoff; whether a context
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

/* ---- session_check.c ---- */

/* 1 when tab's page shows a login wall, 0 when not, -1 when unknown. */
int snap_session_login_wall(snap_agent *a, int tab_id);

#endif
