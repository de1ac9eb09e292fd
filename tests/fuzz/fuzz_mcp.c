/*
 * fuzz_mcp.c — MCP requests from a client, fuzzed, without a browser: the
 * input is a byte stream split into lines (limit 4 KiB, so oversized lines
 * happen) and handed to the protocol layer, whose tools are a stub that
 * answers text, structured content, an image or an error, reports progress
 * and polls for cancellation. While a tool runs, the poll hook hands the
 * next line in, as a client would send it meanwhile.
 *
 * Checked: nothing crashes or leaks; every message written is one JSON
 * object with "jsonrpc":"2.0" and either an id (a response) or a method
 * (a notification), never more responses than requests.
 *
 * The protocol layer lives in cli/ (cli/mcp.c, I/O-free, no state): the
 * Makefile links its object into this target beside the library.
 */
#include "cli/mcp.h"
#include "json/json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    const char *p;
    size_t len;
    bool too_long;
} line;

typedef struct {
    line *lines;
    size_t n, cap, next;
    size_t *deferred;
    size_t ndeferred;
    mcp_server *srv;
    size_t requests, responses;
} fz;

static void on_line(void *ud, const char *p, size_t len, bool too_long)
{
    fz *f = ud;
    if (f->n == f->cap)
        return;
    /* Lines are copied: the splitter's buffer is reused. */
    char *copy = malloc(len + 1);
    if (!copy)
        return;
    if (len)
        memcpy(copy, p, len);
    copy[len] = 0;
    f->lines[f->n].p = copy;
    f->lines[f->n].len = len;
    f->lines[f->n].too_long = too_long;
    f->n++;
}

static void on_write(void *ud, const char *msg, size_t len)
{
    fz *f = ud;
    json_doc *d = json_parse(msg, len, NULL, NULL);
    const json_val *r = json_doc_root(d);
    const char *v = json_get_str(r, "jsonrpc");
    if (!d || !json_is(r, JSON_OBJECT) || !v || strcmp(v, "2.0") != 0 ||
        (!json_get(r, "id") && !json_get(r, "method")) || memchr(msg, '\n', len))
        abort();
    if (json_get(r, "id"))
        f->responses++;
    json_doc_free(d);
    if (f->responses > f->requests)
        abort();
}

static void hand_in(fz *f, size_t i)
{
    line *l = &f->lines[i];
    f->requests++;      /* an upper bound: every line may deserve one answer */
    if (l->too_long)
        mcp_line_too_long(f->srv);
    else if (mcp_handle_line(f->srv, l->p, l->len) == MCP_DEFERRED)
        f->deferred[f->ndeferred++] = i;
}

static void on_poll(void *ud)
{
    fz *f = ud;
    if (f->next < f->n)
        hand_in(f, f->next++);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static void on_tool(void *ud, mcp_call *call, mcp_tool tool, const mcp_args *a,
                    mcp_result *out)
{
    (void)ud;
    mcp_progress(call, 0, 2, "starting");
    if (mcp_cancelled(call))
        return;
    mcp_progress(call, 1, 2, NULL);
    mcp_progress(call, 0.5, 2, "not increasing: dropped");
    switch (tool) {
    case MCP_T_SCREENSHOT: {
        static const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
        out->image = malloc(sizeof png);
        if (out->image) {
            memcpy(out->image, png, sizeof png);
            out->image_len = sizeof png;
        }
        break;
    }
    case MCP_T_CLICK:
        out->text = dup_str(a->ref);
        out->structured = dup_str("[\"not an object\"]");
        break;
    case MCP_T_TYPE:
        out->text = dup_str("typed");
        out->structured = dup_str("{\"ok\":true,\"obs\":\"o2\"}");
        break;
    case MCP_T_DIALOG:
        out->text = dup_str("bad UTF-8: \xff");
        out->is_error = true;
        break;
    default:
        out->text = dup_str(a->url ? a->url : "ok");
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    fz f;
    memset(&f, 0, sizeof f);
    f.cap = 512;
    f.lines = calloc(f.cap, sizeof *f.lines);
    f.deferred = calloc(f.cap, sizeof *f.deferred);
    mcp_opts o = {0};
    o.write = on_write;
    o.poll = on_poll;
    o.tool = on_tool;
    o.ud = &f;
    o.max_line = 4096;
    f.srv = mcp_server_new(&o);
    mcp_lines ls = {0};
    ls.max = 4096;
    if (f.lines && f.deferred && f.srv) {
        /* Feed in uneven chunks to exercise the splitter's joins. */
        size_t off = 0, step = 1;
        while (off < size) {
            size_t n = size - off < step ? size - off : step;
            mcp_lines_feed(&ls, (const char *)data + off, n, on_line, &f);
            off += n;
            step = step * 3 + 1;
        }
        mcp_lines_finish(&ls, on_line, &f);
        while (f.next < f.n || f.ndeferred) {
            if (f.ndeferred) {
                size_t i = f.deferred[0];
                memmove(f.deferred, f.deferred + 1, --f.ndeferred * sizeof *f.deferred);
                f.requests--;   /* counted when it was deferred */
                hand_in(&f, i);
                if (mcp_busy(f.srv))
                    abort();
            } else {
                hand_in(&f, f.next++);
            }
        }
    }
    for (size_t i = 0; i < f.n; i++)
        free((char *)f.lines[i].p);
    mcp_lines_free(&ls);
    mcp_server_free(f.srv);
    free(f.lines);
    free(f.deferred);
    return 0;
}
