/*
 * record.c — recording in the MCP server and the commands (issue 14,
 * points 1-3): the glue between a tool call and replay/'s recorder.
 *
 * A tool call is recorded when it is an action (open, click, hover, type,
 * select, press, scroll, back, tabs switch/close, dialog, upload), it
 * passed the gate and it succeeded (rc 0): the gate's chokepoint read its
 * target before it ran (snap_step_last), the result says what it did.
 * Reads (snapshot, screenshot, tabs list) are not steps; browser_read is,
 * as a named output. eval is never recorded (every call is the human's
 * confirmation of that one script). A step that cannot be written is
 * said in the tool's result and on stderr, never dropped silently.
 *
 * browser_record {action: start, name} records into DIR/NAME.trail under
 * --record-dir DIR (the host chooses where trails go: the model only
 * names one, [A-Za-z0-9_-], so it can write no other file); stop ends it.
 * The model's recording is its own (cli_rec.mine): it never stops or
 * switches the host's --record, and it writes only trails it made in this
 * session or ones a person marked "agent_editable" (red team s14, R4-4:
 * replay_rec_open_as); a trail it made says "by":"agent", a step it adds
 * to another says so too, and an unattended replay shows them.
 */
#include "cli/record.h"

#include "gate/gate.h"
#include "json/json.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_rec_start(cli_rec *c, const char *path, const char *cmd)
{
    replay_err err;
    cli_rec_stop(c);
    c->rec = replay_rec_open(path, CDPGATE_VERSION, c->task, &err);
    if (!c->rec) {
        fprintf(stderr, "cdpgate %s: --record %s: %s\n", cmd, path, err.msg);
        return -1;
    }
    replay_rec_param_typed(c->rec, c->param_typed);
    return 0;
}

void cli_rec_heal_arm(cli_rec *c, const char *path, unsigned n, const char *const *vars,
                      size_t nvars)
{
    free(c->heal_path);
    c->heal_path = NULL;
    for (size_t i = 0; i < c->nheal_vars; i++) {
        base_memzero(c->heal_vars[i], strlen(c->heal_vars[i]));
        free(c->heal_vars[i]);
    }
    c->nheal_vars = 0;
    if (!path || !(c->heal_path = base_strdup(path)))
        return;
    c->heal_n = n;
    for (size_t i = 0; i < nvars && i < MCP_MAX_VALUES; i++)
        if ((c->heal_vars[c->nheal_vars] = base_strdup(vars[i])))
            c->nheal_vars++;
}

void cli_rec_stop(cli_rec *c)
{
    replay_rec_close(c->rec);
    c->rec = NULL;
    replay_rec_close(c->mine);
    c->mine = NULL;
    for (size_t i = 0; i < c->nmade; i++)
        free(c->made[i]);
    c->nmade = 0;
    cli_rec_heal_arm(c, NULL, 0, NULL, 0);
}

bool cli_rec_made(const cli_rec *c, const char *name)
{
    for (size_t i = 0; name && i < c->nmade; i++)
        if (strcmp(c->made[i], name) == 0)
            return true;
    return false;
}

void cli_rec_before(cli_rec *c, snap_agent *g, const char *ref)
{
    if (!g)
        return;
    snap_record_facts(g, c->rec || c->mine || c->heal_path);
    snap_step_forget(g);
    /* The target's equals, counted before the action changes the page
     * (only a look; without it the step has no index among equals). */
    replay_rec *both[2] = {c->rec, c->mine};
    for (int i = 0; i < 2; i++)
        if (both[i] && ref)
            replay_rec_look(both[i], g, ref);
}

/* The trail name of a path DIR/NAME.trail (borrowed into path). */
static const char *trail_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The armed heal: act (with f and structured) becomes the next revision
 * of step heal_n of the trail heal_path; what happened said in note. */
static void heal_step(cli_rec *c, const replay_act *act, const snap_step_facts *f,
                      const char *structured, char *note, size_t cap)
{
    replay_err err = {0};
    char name[80];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(trail_name(c->heal_path), "."),
             trail_name(c->heal_path));
    unsigned flags = REPLAY_REC_AGENT | REPLAY_REC_EXISTING |
                     (cli_rec_made(c, name) ? REPLAY_REC_OWN : 0);
    replay_rec *r = replay_rec_open_as(c->heal_path, CDPGATE_VERSION, c->task, flags, &err);
    int rc = r ? 0 : -1;
    for (size_t i = 0; !rc && i < c->nheal_vars; i++) {
        char *eq = strchr(c->heal_vars[i], '=');
        if (eq) {
            *eq = '\0';
            replay_rec_param(r, c->heal_vars[i], eq + 1, NULL);
            *eq = '=';
        }
    }
    if (!rc)
        rc = replay_rec_heal(r, c->heal_n, &err);
    if (!rc)
        rc = replay_rec_action(r, act, f, structured, &err);
    const char *slash = strrchr(c->heal_path, '/');
    if (rc)
        snprintf(note, cap, "replay --update: step %u of trail %s was not healed: %s",
                 c->heal_n, slash ? slash + 1 : c->heal_path, err.msg);
    else
        snprintf(note, cap, "replay --update: this action is now step %u of trail %s (a new "
                 "revision; the old one is kept). Go on with browser_replay from %u.",
                 c->heal_n, slash ? slash + 1 : c->heal_path, c->heal_n + 1);
    if (rc)
        fprintf(stderr, "cdpgate: %s\n", note);
    replay_rec_close(r);
    cli_rec_heal_arm(c, NULL, 0, NULL, 0);
}

/* The op a tool call is recorded as, or NULL when it is not a step. */
static const char *op_of(mcp_tool tool, const mcp_args *a)
{
    switch (tool) {
    case MCP_T_OPEN: return "open";
    case MCP_T_CLICK: return "click";
    case MCP_T_HOVER: return "hover";
    case MCP_T_TYPE: return "type";
    case MCP_T_SELECT: return "select";
    case MCP_T_PRESS: return "press";
    case MCP_T_SCROLL: return "scroll";
    case MCP_T_BACK: return "back";
    case MCP_T_DIALOG: return "dialog";
    case MCP_T_UPLOAD: return "upload";
    case MCP_T_TABS:
        return a->action && (strcmp(a->action, "switch") == 0 || strcmp(a->action, "close") == 0)
                   ? "tabs" : NULL;
    default: return NULL;
    }
}

void cli_rec_after(cli_rec *c, snap_agent *g, mcp_tool tool, const mcp_args *a,
                   const char *structured, char *note, size_t cap)
{
    note[0] = '\0';
    const char *op = (c->rec || c->mine || c->heal_path) && g ? op_of(tool, a) : NULL;
    if (!op)
        return;
    replay_act act = {0};
    act.op = op;
    act.url = a->url;
    act.new_tab = a->new_tab;
    act.text = a->text;
    act.submit = a->submit;
    act.param = a->param;
    act.values = a->values;
    act.nvalues = a->nvalues;
    act.key = a->key;
    act.direction = a->direction;
    act.forward = a->forward;
    act.dbl = a->dbl;
    act.agent = g;
    if (tool == MCP_T_DIALOG) {
        act.has_accept = true;
        act.accept = a->accept;
    }
    if (tool == MCP_T_TABS) {
        act.action = a->action;
        act.tab = a->tab;
    }
    replay_err err;
    replay_rec *both[2] = {c->rec, c->mine};
    for (int i = 0; i < 2; i++) {
        if (!both[i] || note[0] ||
            replay_rec_action(both[i], &act, snap_step_last(g), structured, &err) == 0)
            continue;
        snprintf(note, cap, "recording: this step was not written to trail %s: %s",
                 trail_name(replay_rec_path(both[i])), err.msg);
        fprintf(stderr, "cdpgate: %s\n", note);
    }
    if (c->heal_path && !note[0])
        heal_step(c, &act, snap_step_last(g), structured, note, cap);
}

void cli_rec_login(cli_rec *c, const char *origin, const char *identity)
{
    replay_err err;
    replay_rec *both[2] = {c->rec, c->mine};
    for (int i = 0; i < 2; i++)
        if (both[i] && replay_rec_identity(both[i], "login", origin, identity, true, &err) != 0)
            fprintf(stderr, "cdpgate: recording: the login step was not written to %s: %s\n",
                    replay_rec_path(both[i]), err.msg);
}

void cli_rec_takeover(cli_rec *c, const char *origin, const char *identity)
{
    replay_err err;
    replay_rec *both[2] = {c->rec, c->mine};
    for (int i = 0; i < 2; i++)
        if (both[i] &&
            replay_rec_identity(both[i], "takeover", origin, identity, true, &err) != 0)
            fprintf(stderr, "cdpgate: recording: the takeover step was not written to %s: "
                    "%s\n", replay_rec_path(both[i]), err.msg);
}

static char *text_dup(const char *s)
{
    return base_strdup(s ? s : "");
}

/* Whether line[0..n) holds query, ignoring ASCII case. */
static bool line_has(const char *line, size_t n, const char *query)
{
    size_t q = strlen(query);
    for (size_t i = 0; q && i + q <= n; i++) {
        size_t k = 0;
        while (k < q && tolower((unsigned char)line[i + k]) == tolower((unsigned char)query[k]))
            k++;
        if (k == q)
            return true;
    }
    return false;
}

/* The page text between the result's page-content markers (new), "" when
 * there are none (the markers are never spelled inside page text); with a
 * query, only its lines that hold the query, without the match notes. */
static char *between_markers(const char *text, const char *query)
{
    const char *o = text ? strstr(text, "<<<page-content nonce=") : NULL;
    const char *s = o ? strstr(o, ">>>\n") : NULL;
    const char *e = s ? strstr(s, "\n<<<end page-content nonce=") : NULL;
    if (!e)
        return text_dup("");
    s += 4;
    base_buf b = {0};
    if (!query) {
        base_buf_put(&b, s, (size_t)(e - s));
        return base_buf_take(&b, NULL);
    }
    while (s < e) {
        const char *nl = memchr(s, '\n', (size_t)(e - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(e - s);
        if (n && strncmp(s, "[match ", 7) != 0 && line_has(s, n, query)) {
            if (b.len)
                base_buf_putc(&b, '\n');
            base_buf_put(&b, s, n);
        }
        s += n + 1;
    }
    if (!b.len)
        return text_dup("");
    return base_buf_take(&b, NULL);
}

/* The state a read started from, from its result's structured object:
 * origin, URL and title (page text as the result gives them). */
static void read_state(const char *structured, json_doc **doc, snap_step_facts *f)
{
    *doc = structured ? json_parse(structured, strlen(structured), NULL, NULL) : NULL;
    const json_val *v = json_doc_root(*doc);
    f->tool = "text";
    f->cls = "read";
    f->origin = json_get_str(v, "origin");
    f->url = json_get_str(v, "url");
    f->title = json_get_str(v, "title");
}

bool cli_rec_name_ok(const char *s)
{
    size_t n = 0;
    for (; s && s[n]; n++) {
        char ch = s[n];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-'))
            return false;
    }
    return n >= 1 && n <= 64;
}

static void fail_out(mcp_result *out, const char *msg)
{
    out->text = text_dup(msg);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, false);
    json_w_key(&w, "error");
    json_w_str(&w, "invalid_argument");
    json_w_key(&w, "message");
    json_w_str(&w, msg);
    json_w_obj_end(&w);
    out->structured = json_w_take(&w, NULL);
    out->is_error = true;
}

void cli_rec_read(cli_rec *c, snap_agent *g, const mcp_args *a, mcp_result *out)
{
    if (!cli_rec_name_ok(a->name))
        {
        fail_out(out, "browser_read: name is 1-64 letters, digits, _ or -");
        return;
    }
    if ((a->ref != NULL) == (a->query != NULL))
        {
        fail_out(out, "browser_read: give a ref or a query (one of them)");
        return;
    }
    /* A second output of the same name would hide the first at replay
     * (red team s14, R4-4): refused before anything is read. */
    replay_rec *both[2] = {c->rec, c->mine};
    for (int i = 0; i < 2; i++) {
        unsigned n = both[i] ? replay_rec_output_step(both[i], a->name) : 0;
        if (n) {
            char msg[300];
            snprintf(msg, sizeof msg, "browser_read: the output name %s is step %u's already "
                     "in the trail being recorded; choose another name", a->name, n);
            fail_out(out, msg);
            return;
        }
    }
    snap_result r;
    memset(&r, 0, sizeof r);
    cli_rec_before(c, g, a->ref);
    /* The target's facts first: a read does not go through an action. */
    bool recording = c->rec || c->mine;
    if (recording && a->ref && snap_step_describe(g, a->ref, &r) != 0) {
        out->text = r.text;
        out->structured = r.structured;
        out->is_error = true;
        r.text = r.structured = NULL;
        snap_result_free(&r);
        return;
    }
    snap_result_free(&r);
    memset(&r, 0, sizeof r);
    snap_query q = {0};
    q.text = true;
    q.from = a->ref;
    q.query = a->query;
    int rc = snap_observe(g, &q, &r);
    if (rc != 0) {
        out->text = r.text;
        out->structured = r.structured;
        out->is_error = true;
        r.text = r.structured = NULL;
        snap_result_free(&r);
        return;
    }
    char *value = between_markers(r.text, a->query);
    json_doc *sd = NULL;
    snap_step_facts qf = {0};
    if (!a->ref)
        read_state(r.structured, &sd, &qf);
    char note[700] = "";
    for (int i = 0; i < 2 && value; i++) {
        replay_act act = {0};
        act.op = "read";
        act.query = a->query;
        act.output = a->name;
        act.value = value;
        act.agent = g;
        replay_err err;
        if (!both[i] || note[0] ||
            replay_rec_action(both[i], &act, a->ref ? snap_step_last(g) : &qf, NULL,
                              &err) == 0)
            continue;
        snprintf(note, sizeof note, "recording: the output was not written to trail %s: %s",
                 trail_name(replay_rec_path(both[i])), err.msg);
        fprintf(stderr, "cdpgate: %s\n", note);
    }
    base_buf t = {0};
    base_buf_printf(&t, "output %s%s:\n%s", a->name, recording && !note[0] ? " (recorded)" : "",
                    r.text ? r.text : "");
    if (note[0])
        base_buf_printf(&t, "\n%s", note);
    out->text = base_buf_take(&t, NULL);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, true);
    json_w_key(&w, "name");
    json_w_str(&w, a->name);
    json_w_key(&w, "value");
    json_w_str(&w, value ? value : "");
    json_w_key(&w, "obs");
    json_w_str(&w, r.obs);
    json_w_key(&w, "recorded");
    json_w_bool(&w, recording && !note[0]);
    json_w_obj_end(&w);
    out->structured = json_w_take(&w, NULL);
    free(value);
    json_doc_free(sd);
    snap_result_free(&r);
}

/* browser_record stop: the model's own recording only. */
static void rec_tool_stop(cli_rec *c, snap_agent *g, mcp_result *out)
{
    char msg[600];
    if (!c->mine) {
        fail_out(out, c->rec ? "browser_record: no recording of yours runs (the host's own "
                              "recording is not yours to stop)"
                            : "browser_record: no recording runs");
        return;
    }
    snprintf(msg, sizeof msg, "recording stopped: %zu steps in trail %s",
             replay_rec_trail(c->mine)->nsteps, trail_name(replay_rec_path(c->mine)));
    replay_rec_close(c->mine);
    c->mine = NULL;
    if (g && !c->rec && !c->heal_path)
        snap_record_facts(g, false);
    out->text = text_dup(msg);
}

/* Note name as made in this session (a trail browser_record created). */
static void made_add(cli_rec *c, const char *name)
{
    if (c->nmade < CLI_REC_MADE_MAX && !cli_rec_made(c, name) &&
        (c->made[c->nmade] = base_strdup(name)))
        c->nmade++;
}

void cli_rec_tool(cli_rec *c, snap_agent *g, const mcp_args *a, mcp_result *out)
{
    char msg[600];
    if (a->action && strcmp(a->action, "stop") == 0) {
        rec_tool_stop(c, g, out);
        return;
    }
    if (!c->dir) {
        fail_out(out, "browser_record: the host gave no --record-dir");
        return;
    }
    if (!cli_rec_name_ok(a->name)) {
        fail_out(out, "browser_record: start needs a name: 1-64 letters, digits, _ or -");
        return;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.trail", c->dir, a->name);
    if (c->rec && strcmp(replay_rec_path(c->rec), path) == 0) {
        fail_out(out, "browser_record: the host records into that trail itself");
        return;
    }
    /* Only the model's own recording is switched, never the host's. */
    replay_rec_close(c->mine);
    c->mine = NULL;
    struct stat st;
    bool existed = stat(path, &st) == 0;
    unsigned flags = REPLAY_REC_AGENT | (cli_rec_made(c, a->name) ? REPLAY_REC_OWN : 0);
    replay_err err = {0};
    c->mine = replay_rec_open_as(path, CDPGATE_VERSION, c->task, flags, &err);
    if (!c->mine) {
        fprintf(stderr, "cdpgate mcp: browser_record %s: %s\n", a->name, err.msg);
        snprintf(msg, sizeof msg, "browser_record: cannot record to trail %s: %s", a->name,
                 err.code == REPLAY_EARG ? err.msg : "see the server's log");
        fail_out(out, msg);
        return;
    }
    replay_rec_param_typed(c->mine, c->param_typed);
    if (!existed)
        made_add(c, a->name);
    snprintf(msg, sizeof msg, "recording to trail %s%s: each action that passes the gate and "
             "succeeds is a step; values typed into secret fields are never recorded",
             a->name, existed ? " (continued)" : "");
    out->text = text_dup(msg);
}
