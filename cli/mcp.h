/*
 * mcp.h — the Model Context Protocol server behind `cdpgate mcp` (internal
 * to cli/). Tests that include it: tests/fuzz/fuzz_mcp.c (the I/O-free
 * protocol layer, mcp.c, linked into the fuzz target).
 *
 * Two layers:
 *   mcp.c        the protocol, with no I/O and no browser: JSON-RPC 2.0
 *                dispatch (initialize with version negotiation, ping,
 *                tools/list, tools/call, notifications), the tool table that
 *                both tools/list and argument validation are generated from,
 *                progress and cancellation bookkeeping, and a line splitter
 *                with a size limit. A line goes in; response lines come out
 *                through mcp_opts.write; tools run through mcp_opts.tool.
 *                tests/fuzz/fuzz_mcp.c drives this layer alone.
 *   mcp_serve.c  stdio and the browser: reads stdin, writes stdout, launches
 *                the browser on the first tool call, runs tools on snapshot/.
 *
 * Ownership: mcp_server is opaque (mcp_server_new / mcp_server_free). The
 * lines handed to mcp_handle_line are borrowed for the call. A tool fills an
 * mcp_result with new (malloc) buffers that the server frees after writing
 * the response.
 *
 * Single-threaded. Re-entrancy: while a tool call runs, the tool may call
 * mcp_cancelled(), which calls mcp_opts.poll; poll may hand new lines to
 * mcp_handle_line. During a call only ping and notifications/cancelled are
 * handled at once; any other request returns MCP_DEFERRED and the caller
 * hands it in again after the call returned.
 */
#ifndef CDPGATE_CLI_MCP_H
#define CDPGATE_CLI_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Protocol revisions we speak, newest first (MCP_VERSIONS[0] is the answer
 * when the client asks for one we do not know). */
#define MCP_VERSION_LATEST "2025-11-25"
#define MCP_VERSION_OLDEST "2025-06-18"

#define MCP_DEFAULT_MAX_LINE ((size_t)4 << 20)
#define MCP_MAX_VALUES 64

/* JSON-RPC error codes. */
enum {
    MCP_PARSE_ERROR = -32700,
    MCP_INVALID_REQUEST = -32600,
    MCP_METHOD_NOT_FOUND = -32601,
    MCP_INVALID_PARAMS = -32602,
    MCP_INTERNAL_ERROR = -32603,
};

/* mcp_handle_line's answers. */
enum { MCP_DONE = 0, MCP_DEFERRED = 1 };

typedef enum {
    MCP_T_OPEN, MCP_T_SNAPSHOT, MCP_T_CLICK, MCP_T_HOVER, MCP_T_TYPE, MCP_T_SELECT,
    MCP_T_PRESS,
    MCP_T_SCROLL, MCP_T_BACK, MCP_T_SCREENSHOT, MCP_T_TABS, MCP_T_DIALOG,
    MCP_T_LOGIN, MCP_T_TAKEOVER, MCP_T_UPLOAD, MCP_T_EVAL,
    MCP_T_READ, MCP_T_RECORD,    /* issue 14: cli/record.c */
    MCP_T_REPLAY,                /* issue 14: cli/replay_mcp.c */
    MCP_T_A11Y,                  /* issue 16: cli/a11y_cmd.c */
    MCP_T_COUNT
} mcp_tool;

/* Validated tool arguments; strings are borrowed from the request and valid
 * for the duration of the tool call. Absent optional members are NULL,
 * false or 0; has_* says whether an optional member was given. */
typedef struct {
    const char *url, *ref, *obs, *text, *query, *key, *direction, *action, *tab;
    const char *path, *expression, *region, *from;
    const char *name, *param;    /* browser_read, browser_record; browser_type */
    bool new_tab, submit, forward, full_page, accept, text_mode, dbl;
    int64_t offset, text_offset;
    int64_t step;                /* browser_replay: from this step */
    bool update;                 /* browser_replay: heal a diverged step */
    const char *tags, *include, *exclude;   /* browser_a11y_scan */
    const char *values[MCP_MAX_VALUES];
    size_t nvalues;
} mcp_args;

/* What a tool answers (all new, freed by the server; any may be NULL).
 * structured must be a JSON object to be sent as structuredContent. */
typedef struct {
    char *text;
    char *structured;
    uint8_t *image;         /* PNG or JPEG (sent with its own mimeType) */
    size_t image_len;
    bool is_error;
} mcp_result;

typedef struct mcp_server mcp_server;
typedef struct mcp_call mcp_call;

typedef void (*mcp_write_fn)(void *ud, const char *msg, size_t len);
typedef void (*mcp_poll_fn)(void *ud);
typedef void (*mcp_tool_fn)(void *ud, mcp_call *call, mcp_tool tool, const mcp_args *args,
                            mcp_result *out);

typedef struct {
    mcp_write_fn write;     /* one JSON-RPC message, without the newline */
    mcp_poll_fn poll;       /* read pending input without blocking; may be NULL */
    mcp_tool_fn tool;       /* run a tool; NULL answers every call with an error */
    void *ud;
    size_t max_line;        /* request size limit; 0 = MCP_DEFAULT_MAX_LINE */
    unsigned hidden;        /* bit (1u << tool): not listed, and a call is refused
                               (tools the grant does not name: upload, eval) */
} mcp_opts;

/* New server (free with mcp_server_free), NULL when out of memory. */
mcp_server *mcp_server_new(const mcp_opts *o);
void mcp_server_free(mcp_server *s);

/* Handle one message: a line without its newline (a trailing CR is
 * ignored). Writes zero or more messages. Returns MCP_DONE, or MCP_DEFERRED
 * (see above; nothing was written). */
int mcp_handle_line(mcp_server *s, const char *line, size_t len);
/* Report a line longer than the limit whose bytes were discarded: writes an
 * Invalid Request error with id null. */
void mcp_line_too_long(mcp_server *s);
/* True while a tool call runs (lines handed in now may be deferred). */
bool mcp_busy(const mcp_server *s);
/* The negotiated protocol version, "" before initialize. */
const char *mcp_protocol_version(const mcp_server *s);
/* tools/list's result as JSON (new; free with free()), for tests and docs;
 * hidden as in mcp_opts. */
char *mcp_tools_json(unsigned hidden, size_t *len);

/* ---- inside a tool call ---- */

/* Send notifications/progress when the request carried
 * _meta.progressToken (else nothing). progress must increase between calls;
 * total <= 0 leaves it out; message may be NULL. */
void mcp_progress(mcp_call *call, double progress, double total, const char *message);
/* Poll for input and say whether the client cancelled this request. A
 * cancelled request is never answered, whatever the tool returns. */
bool mcp_cancelled(mcp_call *call);

/* Elicitation (server-to-client request), for the gate's confirmation
 * hook: mcp_client_can_elicit says whether the client declared the
 * capability at initialize; mcp_elicit_begin sends elicitation/create with
 * message and requestedSchema (a JSON object text) during call, -1 when it
 * cannot; then the host polls for input and calls mcp_elicit_poll until it
 * answers 1 (*result: the result object, new) or -1 (an error response, or
 * nothing in flight); 0 means still waiting. */
bool mcp_client_can_elicit(const mcp_server *s);
int mcp_elicit_begin(mcp_call *call, const char *message, const char *schema);
int mcp_elicit_poll(mcp_server *s, char **result);
/* URL-mode elicitation (MCP 2025-11-25): whether the client declared
 * elicitation.url, and elicitation/create {mode:"url", message, url,
 * elicitationId} (the live view's link, for the person: the client opens
 * it out of band, never in the model's context); -1 when it cannot. The
 * answer (accept: the user opened it) comes through mcp_elicit_poll. */
bool mcp_client_can_elicit_url(const mcp_server *s);
int mcp_elicit_url_begin(mcp_call *call, const char *message, const char *url);

/* ---- line splitting ---- */

/* Splits a byte stream into lines ('\n'-terminated), holding at most max
 * bytes of one line; a longer line is reported once (too_long) and its
 * bytes are discarded up to the next newline. Caller-allocated; zero it and
 * set max (0 = MCP_DEFAULT_MAX_LINE); free with mcp_lines_free. */
typedef struct {
    char *buf;
    size_t len, cap, max;
    bool discarding;
} mcp_lines;

typedef void (*mcp_line_fn)(void *ud, const char *line, size_t len, bool too_long);
/* Feed n bytes; fn gets each complete line (without '\n'). Returns 0, or -1
 * when out of memory (the partial line is dropped). */
int mcp_lines_feed(mcp_lines *l, const char *data, size_t n, mcp_line_fn fn, void *ud);
/* End of input: a last line without newline is delivered. */
void mcp_lines_finish(mcp_lines *l, mcp_line_fn fn, void *ud);
void mcp_lines_free(mcp_lines *l);

#endif
