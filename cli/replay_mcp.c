/*
 * replay_mcp.c — the MCP tool browser_replay (issue 14, points 4-5): the
 * same player as `cdpgate replay` (replay_run), on the server's own agent
 * and gate, its result as the tool's structured content.
 *
 * The tool is offered only under --record-dir DIR and a grant that names
 * the tool "replay" (it is in no default tool set): the model names a
 * trail (1-64 of [A-Za-z0-9_-], DIR/NAME.trail), never a path, so it can
 * make cdpgate read no other file. Every step goes through the gate as a
 * live action (confirmations reach the host as for any tool call); what
 * the trail needs is checked against the grant first, and a replay the
 * grant cannot allow runs nothing.
 *
 * from: the agent did a diverged step itself and the replay goes on from
 * the next one, on the tab as it is. update: when the replay diverges,
 * the agent's next live action that is a step is written back into the
 * trail as the diverged step's next revision (the old one kept), so the
 * next replay uses it (cli/record.c heal_step).
 */
#include "cli/record.h"

#include "gate/gate.h"
#include "json/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(mcp_result *out, const char *msg)
{
    out->text = base_strdup(msg);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "status");
    json_w_str(&w, "failed");
    json_w_key(&w, "error");
    json_w_str(&w, msg);
    json_w_obj_end(&w);
    out->structured = json_w_take(&w, NULL);
    out->is_error = true;
}

/* The step the run diverged at (0: it did not). */
static unsigned diverged_step(const char *json)
{
    json_doc *d = json ? json_parse(json, strlen(json), NULL, NULL) : NULL;
    int64_t n = 0;
    if (!json_int(json_get(json_get(json_doc_root(d), "divergence"), "step"), &n))
        n = 0;
    json_doc_free(d);
    return n > 0 && n <= REPLAY_MAX_STEPS ? (unsigned)n : 0;
}

/* The first line of the tool's text: what happened, for the model. */
static void summary(int st, const char *name, unsigned heal, char *out, size_t cap)
{
    static const char *const S[] = {
        "done: every step played, its effect as recorded; the outputs are in the result",
        "diverged: the page changed; the divergence says at which step, what was expected "
        "and what was found. Do that step yourself, then call browser_replay again with "
        "from set to the next step",
        "refused: the grant or the vars lack what the trail needs (missing); nothing ran",
        "stopped: the gate refused or stopped a step (stopped)",
        "unknown: a step's outcome is unknown; it was not retried. Look at the page",
        "failed",
    };
    snprintf(out, cap, "replay of trail %s: %s.%s", name,
             st >= 0 && st <= REPLAY_RUN_FAILED ? S[st] : "failed",
             heal ? " Your next action that passes the gate and succeeds replaces that step "
                    "in the trail (update)." : "");
}

void cli_replay_tool(cli_rec *c, snap_agent *g, gate *gt, const mcp_args *a,
                     mcp_result *out)
{
    char msg[1400];
    cli_rec_heal_arm(c, NULL, 0, NULL, 0);
    if (!c->dir) {
        fail(out, "browser_replay: the host gave no --record-dir");
        return;
    }
    if (!cli_rec_name_ok(a->name)) {
        fail(out, "browser_replay: trail is a name: 1-64 letters, digits, _ or -");
        return;
    }
    for (size_t i = 0; i < a->nvalues; i++) {
        const char *eq = strchr(a->values[i], '=');
        if (!eq || eq == a->values[i]) {
            fail(out, "browser_replay: each of vars is name=value");
            return;
        }
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.trail", c->dir, a->name);
    if (a->update && ((c->rec && strcmp(replay_rec_path(c->rec), path) == 0) ||
                      (c->mine && strcmp(replay_rec_path(c->mine), path) == 0))) {
        fail(out, "browser_replay: update on the trail being recorded now; stop the "
                  "recording first");
        return;
    }
    replay_err err = {0};
    replay_trail *t = replay_trail_load(path, &err);
    if (!t) {
        /* Never the host's --record-dir (the model knows trails by name):
         * the loader's message without the path it starts with */
        const char *at = strstr(err.msg, path), *rest = at ? at + strlen(path) : "";
        rest += strspn(rest, ": ");
        snprintf(msg, sizeof msg, "browser_replay: trail %s: %s", a->name,
                 err.code == REPLAY_EIO ? "cannot be read"
                 : at && !strstr(rest, c->dir) ? rest
                 : strstr(err.msg, c->dir) ? "cannot be loaded" : err.msg);
        fail(out, msg);
        return;
    }
    /* A heal writes into the trail: only one the model may change (red
     * team s14, R4-4; replay_rec_open_as). */
    if (a->update && !t->h.agent_editable && !(t->h.by_agent && cli_rec_made(c, a->name))) {
        replay_trail_free(t);
        snprintf(msg, sizeof msg, "browser_replay: update: trail %s is not yours to change (it "
                 "was not made by browser_record in this session, and no person marked it "
                 "\"agent_editable\"); replay it without update", a->name);
        fail(out, msg);
        return;
    }
    replay_opts ro = {0};
    ro.agent_steps = true;   /* attended: the model plays what the model wrote */
    ro.vars = a->values;
    ro.nvars = a->nvalues;
    ro.from = a->step > 0 && a->step <= REPLAY_MAX_STEPS ? (unsigned)a->step : 0;
    char *json = NULL;
    int st = replay_run(g, gt, t, &ro, &json);
    replay_trail_free(t);
    if (!json) {
        fail(out, "browser_replay: out of memory");
        return;
    }
    unsigned heal = a->update && st == REPLAY_RUN_DIVERGED ? diverged_step(json) : 0;
    if (heal)
        cli_rec_heal_arm(c, path, heal, a->values, a->nvalues);
    summary(st, a->name, heal, msg, sizeof msg);
    base_buf b = {0};
    base_buf_printf(&b, "%s\n%s", msg, json);
    out->text = base_buf_take(&b, NULL);
    out->structured = json;
    out->is_error = st != REPLAY_RUN_DONE;
}
