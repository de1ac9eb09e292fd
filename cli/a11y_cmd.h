/*
 * a11y_cmd.h — browser_a11y_scan for the MCP server (internal to cli/;
 * cli/a11y_cmd.c). The tool is listed only when the grant names
 * "a11y_scan" (cli/mcp_serve.c): an ungranted user pays nothing.
 */
#ifndef CDPGATE_CLI_A11Y_CMD_H
#define CDPGATE_CLI_A11Y_CMD_H

#include <stddef.h>

#include "cli/cli.h"
#include "snapshot/snapshot.h"

typedef struct {
    char *src;          /* axe-core's source, read on the first scan (new) */
    size_t len;
    unsigned seq;       /* reports written by this server */
} cli_a11y_state;

/* Scan a's current tab (tags, include, exclude: NULL for the command
 * line's); r gets the summary (text, structured) or the error. */
void cli_a11y_tool(cli_a11y_state *st, const cli_opts *o, snap_agent *a,
                   const char *tags, const char *include, const char *exclude,
                   snap_result *r);
void cli_a11y_free(cli_a11y_state *st);

#endif
