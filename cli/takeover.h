/*
 * takeover.h — the live view wired to the agent's browser (issue 15;
 * cli/takeover.c): the server, the screencast, the person's input and the
 * hand-back account; `cdpgate mcp --live` and `cdpgate login`. Internal to
 * cli/.
 */
#ifndef CDPGATE_CLI_TAKEOVER_H
#define CDPGATE_CLI_TAKEOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"

struct snap_agent;
struct gate;
typedef struct cli_takeover cli_takeover;

/* Start the live view for the agent a under gate g (control passes to the
 * human when the person opens it: cli_takeover_step): the link (the
 * one-time token: for the out-of-band channel only) into link. From o:
 * --live-ttl (the link's lifetime; unopened that long, control goes back),
 * --live-bind/--live-host/--live-insecure (loopback unless the flag allows
 * more; then live_server_warning is printed on stderr before the link goes
 * out, and audited). NULL with why filled. */
cli_takeover *cli_takeover_start(struct snap_agent *a, struct gate *g, const cli_opts *o,
                                 char *link, size_t linkcap, char *why, size_t cap);
/* Serve without waiting: requests, the person's input, frames; when the
 * person first opens the view, control passes to the human (gate mode
 * human, after snap_handover). True while the link waits or the person
 * holds control; false once they handed back (or the link expired
 * unopened, or control was moved elsewhere). */
bool cli_takeover_step(cli_takeover *t);
/* The live server's descriptors for the host's poll (live_server_fds): when
 * one is ready, call cli_takeover_step at once (the person's input and the
 * frame acknowledgements wait for no timeout). Their count. */
int cli_takeover_fds(const cli_takeover *t, int *fds, int cap);
#define CLI_TAKEOVER_FDS 16     /* room for them all (live's LIVE_SERVER_FDS) */
/* A new read-only watch link of the view (live_server_watch_link: a path,
 * token and session of its own, the person's link's lifetime, at most
 * LIVE_WATCHERS_MAX), for the out-of-band channel only. 0, or -1 with why
 * filled. */
int cli_takeover_watch(cli_takeover *t, char *link, size_t cap, char *why, size_t whycap);
bool cli_takeover_handed_back(const cli_takeover *t);
bool cli_takeover_seen(const cli_takeover *t);
/* What the hand-back found (for a recording's takeover step): the tab is
 * logged in on origin, under the grant's identity ("" when none). */
typedef struct {
    bool logged_in;
    char origin[256];
    char identity[128];
} cli_takeover_login;
/* Stop and free; the account for the agent's next result (new): how it
 * ended, the page's origin now, logged in or not, origins visited, the
 * cookies set counted by site (never a name or a value), a fresh
 * observation id: each origin as results show one (a host outside the
 * grant by its last two labels), no page-chosen text (red team s17, R7-4).
 * login (may be NULL) gets what the hand-back found. */
char *cli_takeover_end(cli_takeover *t, const char *how, cli_takeover_login *login);
void cli_takeover_free(cli_takeover *t);
/* The link to the person, out of band (never in a result, a log or the
 * audit): the --live-notify program (on its stdin, its kind in the
 * environment: CDPGATE_LIVE_KIND=control, or =watch for a read-only watch
 * link), else the --confirm program ({"class":"live","kind","message",
 * "link"}), else stderr prefixed "cdpgate CMD: ". msg: what the person is
 * asked to do. */
void cli_takeover_deliver(const cli_opts *o, const char *cmd, const char *link, bool watch,
                          const char *msg);
/* The person's message for a takeover through the live view (red team s17,
 * R7-10), into out (cap bytes): cdpgate's own sentence complete first
 * ("cdpgate: the agent hands the browser to a person[: what]. Open the live
 * view ... for N minutes ..."; what: cdpgate's words, NULL for none), then
 * what the gate stopped last, if anything (gate_last_stop: page text
 * escaped and quoted), then the agent's words (said: model text, NULL for
 * none) quoted, escaped, cut at 200 bytes and labelled as the agent's, not
 * cdpgate's. From o: the link's lifetime (--live-ttl) and where it works
 * (this machine, or the network in clear text: cli_takeover_where). */
const char *cli_takeover_where(const cli_opts *o);
void cli_takeover_message(char *out, size_t cap, const char *what, const char *said,
                          const struct gate *g, const cli_opts *o);

#endif
