/*
 * a11y_cmd.h — browser_a11y_scan for the MCP server (internal to cli/;
 * cli/a11y_cmd.c). The tool is listed only when the grant names
 * "a11y_scan" (cli/mcp_serve.c): an ungranted user pays nothing.
 */
#ifndef CDPGATE_CLI_A11Y_CMD_H
#define CDPGATE_CLI_A11Y_CMD_H

#include <stddef.h>

#include "a11y/a11y.h"
#include "cli/cli.h"
#include "cli/evid.h"
#include "snapshot/snapshot.h"

typedef struct {
    a11y_axe axe;       /* axe-core, read on the first scan (a11y_axe_load) */
    unsigned seq;       /* reports written by this server */
} cli_a11y_state;

/* Scan a's current tab (tags, include, exclude: NULL for the command
 * line's); r gets the summary (text, structured) or the error. With ev
 * recording (--evidence), the scan is a record of kind a11y with its
 * reports (cli_evid_a11y). */
void cli_a11y_tool(cli_a11y_state *st, const cli_opts *o, snap_agent *a, cli_evid *ev,
                   const char *tags, const char *include, const char *exclude,
                   snap_result *r);
void cli_a11y_free(cli_a11y_state *st);

/* The scan's options from the command line (--tags, --include, ...),
 * reports into dir as STEM.json and STEM.html. */
a11y_opts cli_a11y_opts(const cli_opts *o, const char *dir, const char *stem);

/* `cdpgate a11y --sweep TARGETS -o DIR [--jobs N]` (cli/sweep.c; docs/a11y.md
 * "A sweep"): every target in a session of its own, at most --jobs at once,
 * axe-core as read given. The exit status: 0 when every target
 * is done, 1 when one is partial or failed, 2 for a bad TARGETS file. */
int cli_a11y_sweep(const cli_opts *o, const a11y_axe *ax);

#endif
