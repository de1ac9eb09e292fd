/*
 * agent_int.h — internals shared by the agent*.c files only (agent.c,
 * agent_open.c, agent_refs.c, agent_wait.c, agent_problems.c): the
 * agent's state: tabs, frames, events, refs, observations.
 */
#ifndef CDPGATE_AGENT_INT_H
#define CDPGATE_AGENT_INT_H

#include "snapshot/snap_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A page that redirects itself from a timer a little after its load (a
 * "Redirecting..." interstitial calling location.replace after a few
 * hundred ms, a meta refresh with a delay) is not the final page of the
 * navigation. After a navigation settles, one read-only script asks the
 * page for evidence that it is such a page; only then does the wait go
 * on, at most REDIRECT_WINDOW_MS, for the navigation it scheduled (then
 * settles again, up to REDIRECT_HOPS times). Ordinary pages pay the one
 * round trip, never the window. */
#define REDIRECT_WINDOW_MS 1500
#define REDIRECT_HOPS 3

/* ---- agent.c ---- */

void snap_agent_setstr(char **dst, const char *s);
void snap_agent_copyid(char dst[SNAP_ID_MAX], const char *s);
/* The hint appended to a failed navigation's error (Chromium's errorText,
 * "net::ERR_..."): static, "" when there is none. */
const char *snap_agent_nav_hint(const char *etext);
/* Open a new tab in context ctxs[ctx] (Target.createTarget there, attach,
 * enable Page/Network/Runtime/lifecycle, auto-attach to OOPIFs); it
 * becomes the current tab. */
int snap_tab_open(snap_agent *a, size_t ctx, snap_tab **out, snap_result *r);
/* Target.closeTarget for t, under the permit the caller holds; the answer
 * is not waited on beyond 3 s and its failure changes nothing here. */
void snap_tab_close_target(snap_agent *a, const snap_tab *t);

/* ---- agent_wait.c ---- */

/* Record a Network.requestWillBeSent / loadingFinished / loadingFailed
 * event (params p) of one of tab t's sessions in t's request table;
 * other methods are ignored. The listener's: records only, never waits. */
void snap_net_event(snap_agent *a, snap_tab *t, const char *method, const json_val *p);
/* Free t's request table (the tab is cleared). */
void snap_net_clear(snap_tab *t);

#endif
