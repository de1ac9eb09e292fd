/*
 * record.h — recording for the MCP server and the commands (cli/record.c;
 * issue 14, points 1-3): which tool calls become trail steps, the MCP
 * tools browser_read and browser_record. Internal to cli/.
 */
#ifndef CDPGATE_CLI_RECORD_H
#define CDPGATE_CLI_RECORD_H

#include "cli/cli.h"
#include "cli/mcp.h"
#include "replay/replay.h"
#include "snapshot/snapshot.h"

/* The recording of one server or command: the recorder (NULL: not
 * recording), where browser_record may put trails (--record-dir, NULL:
 * the tool is not offered), --param-typed, and the task the grant names. */
#define CLI_REC_MADE_MAX 64

typedef struct {
    replay_rec *rec;             /* the host's --record FILE: never the model's to
                                    stop or switch */
    replay_rec *mine;            /* the model's browser_record (under --record-dir) */
    char *made[CLI_REC_MADE_MAX]; /* trail names browser_record made in this session
                                    (the model may go on with them and heal them) */
    size_t nmade;
    const char *dir;
    bool param_typed;
    const char *task;
    /* browser_replay {update: true} diverged at step heal_n of the trail
     * heal_path: the next live action that is a step heals it (written
     * back as its next revision), with the replay's vars as parameters
     * (heal_vars, "name=value", copied; wiped when done). */
    char *heal_path;
    unsigned heal_n;
    char *heal_vars[MCP_MAX_VALUES];
    size_t nheal_vars;
} cli_rec;

/* Start the host's recording to path (--record FILE): 0, or -1 with the
 * reason on stderr naming cmd. */
int cli_rec_start(cli_rec *c, const char *path, const char *cmd);
/* End every recording (the host's and the model's) and forget the names
 * made. */
void cli_rec_stop(cli_rec *c);
/* Did browser_record make trail name in this session? */
bool cli_rec_made(const cli_rec *c, const char *name);
/* Before a tool call on agent g: forget the last call's facts; when
 * recording a call on an element (ref, else NULL), look at the tab's
 * elements so its step records the index among equals. */
void cli_rec_before(cli_rec *c, snap_agent *g, const char *ref);
/* After a tool call that succeeded (rc 0) with the result's structured
 * object: append its step when the tool is one that is recorded. A step
 * that cannot be written is said in note (cap bytes; "" when recorded or
 * not recorded by design) and on stderr. */
void cli_rec_after(cli_rec *c, snap_agent *g, mcp_tool tool, const mcp_args *a,
                   const char *structured, char *note, size_t cap);
/* A login the human completed on origin under identity (NULL: the
 * grant names none): a step "identity X, human logged in". */
void cli_rec_login(cli_rec *c, const char *origin, const char *identity);
/* The human had control (a takeover) and gave it back on origin: a step
 * "identity X, human logged in" (op takeover), never what they did. */
void cli_rec_takeover(cli_rec *c, const char *origin, const char *identity);
/* browser_read: the text of a ref's element or of the lines matching a
 * query, returned inside the page-content markers and recorded as the
 * named output. */
void cli_rec_read(cli_rec *c, snap_agent *g, const mcp_args *a, mcp_result *out);
/* browser_record: start (name: the trail DIR/NAME.trail) or stop. */
void cli_rec_tool(cli_rec *c, snap_agent *g, const mcp_args *a, mcp_result *out);
/* Arm or disarm (path NULL) healing: the next live step heals step n of
 * the trail at path, typed values equal to a var kept as its {{name}}. */
void cli_rec_heal_arm(cli_rec *c, const char *path, unsigned n, const char *const *vars,
                      size_t nvars);
/* A trail name browser_record and browser_replay take: 1-64 of
 * [A-Za-z0-9_-]. */
bool cli_rec_name_ok(const char *s);

struct gate;
/* browser_replay (cli/replay_mcp.c): play DIR/TRAIL.trail on g under gt
 * from step `from`, the structured result as replay_run gives it; with
 * update, a divergence arms healing. */
void cli_replay_tool(cli_rec *c, snap_agent *g, struct gate *gt, const mcp_args *a,
                     mcp_result *out);

#endif
