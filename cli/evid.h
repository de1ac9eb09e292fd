/*
 * evid.h — `--evidence DIR` (cli/evid.c; issue 16, point 3): a task's
 * session recorded as evidence through evidence/, fed from the gate's
 * audit tap, the browser's events and the tool calls. Internal to cli/.
 */
#ifndef CDPGATE_CLI_EVID_H
#define CDPGATE_CLI_EVID_H

#include "a11y/a11y.h"
#include "cli/cli.h"
#include "cli/mcp.h"
#include "evidence/evidence.h"
#include "snapshot/snapshot.h"

#define CLI_EVID_REQS 128      /* requests whose method is remembered */
#define CLI_EVID_FRAMES 32     /* main frames known */
#define CLI_EVID_NET_MAX 5000  /* network records, then one note */
#define CLI_EVID_HUMAN_NAV 8   /* the person's pages awaiting their navigation */

struct gate;

/* One session's evidence. Zero it; cli_evid_start opens it. */
typedef struct {
    evidence *e;                /* NULL: not recording */
    struct gate *gt;
    cdp_conn *conn;             /* the browser connection listened to */
    snap_agent *agent;
    /* the last gate decision of the running tool call */
    char decision[16], reason[512], target[256];
    uint64_t seq;
    bool failed;                /* a record could not be written (said once) */
    bool viewport;              /* the manifest has the viewport */
    unsigned nnet;
    unsigned shots_skipped;
    unsigned a11y;              /* accessibility reports kept */
    unsigned texts;             /* text files kept (cli_evid_text) */
    struct { char id[48]; char method[16]; } req[CLI_EVID_REQS];
    unsigned nreq;
    char main_frame[CLI_EVID_FRAMES][48];
    unsigned nframes;
    /* The person's session: from a takeover's start until the agent's next
     * tool call after control came back (what the browser sent before that
     * call is theirs); its URLs by origin only, no console text (R6-6). */
    bool human;
    /* Pages the person opened whose navigation may be read after the
     * agent's next call began (SHA-256 of the URL; consumed on a match,
     * forgotten when that call ends). */
    unsigned char human_nav[CLI_EVID_HUMAN_NAV][32];
    unsigned nhuman_nav;
} cli_evid;

/* Open DIR/<task>-<UTC time>-<pid>/ (DIR made 0700 when missing) and
 * start taking the gate's audit lines. 0, or -1 with the reason on stderr
 * naming cmd. */
int cli_evid_start(cli_evid *v, const char *dir, struct gate *gt, const char *cmd);
/* What the agent's options need (the secret hook, console errors). */
void cli_evid_opts(cli_evid *v, snap_opts *so);
/* A browser and its agent started / about to go. */
void cli_evid_attach(cli_evid *v, cdp_browser *b, snap_agent *g);
void cli_evid_detach(cli_evid *v);
/* Around a tool call: before (forget the last decision, keep the facts;
 * after a takeover, the events the browser sent until now are recorded as
 * the person's, then the agent's are again), after (the action's record
 * and a screenshot when it is an action). */
void cli_evid_before(cli_evid *v, snap_agent *g);
void cli_evid_after(cli_evid *v, snap_agent *g, mcp_tool tool, const mcp_args *a, int rc,
                    const snap_result *r);
/* A whole run's result (a replay's JSON, scrubbed) as a record of kind,
 * then a screenshot. */
void cli_evid_result(cli_evid *v, snap_agent *g, const char *kind, const char *json);
/* An accessibility scan (made with a11y_opts.keep): its JSON and HTML
 * reports copied into the folder as a11y-NNNN.json / .html (scrubbed of
 * the secrets) and a record of kind "a11y": the page's URL as shown, axe's
 * version and the tags, the summary (rep->structured: counts, rules,
 * criteria, refs; no page text) and the two files with their SHA-256
 * ("files", checked by the verifier); the manifest gets "axe". */
void cli_evid_a11y(cli_evid *v, const a11y_report *rep);
/* A command's text output (a snapshot) as KIND-NNNN.txt in the folder
 * (scrubbed of the secrets) and a record of kind naming it (file, sha256,
 * the observation id). */
void cli_evid_text(cli_evid *v, const char *kind, const char *text, const char *obs);
/* An image the command produced (the screenshot command's) as a shot
 * record with note. */
void cli_evid_image(cli_evid *v, const uint8_t *img, size_t n, const char *note);
/* A note of the host's (a login handed over and ended, a takeover asked):
 * kind and what (no secret). */
void cli_evid_note(cli_evid *v, const char *kind, const char *event, const char *what);
/* End: manifest and viewer written, the final digest said on stderr. */
void cli_evid_stop(cli_evid *v, const char *cmd);

#endif
