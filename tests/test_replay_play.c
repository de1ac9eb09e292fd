/*
 * test_replay_play.c — replaying a trail (issue 14, points 4-5): replay_run
 * on an agent under a gate, and `cdpgate replay` as a command, against real
 * headless Chromium on the shop pages of tests/fixtures/replay/ (each a
 * version of one page as it changes between a recording and a replay).
 *
 * The trails are written here as text (the format of docs/replay.md), with
 * the fixture server's port filled in.
 */
#include "tests/testlib.h"
#include "base/base.h"
#include "gate/gate.h"
#include "replay/replay.h"
#include "snapshot/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *host_args[] = {FIXTURE_HOST_RULES, NULL};
static testlib_world world;
static char O_A[64];
static const char *ORIGINS[1];

static void grant_a(gate_grant *g)
{
    memset(g, 0, sizeof *g);
    testlib_world_origin(&world, O_A, sizeof O_A, "a.test");
    ORIGINS[0] = O_A;
    g->task = "replay";
    g->principal = "test";
    g->origins = ORIGINS;
    g->norigins = 1;
}

/* The trail text with every "ORIGIN" replaced by a.test's origin (new). */
static char *trail_text(const char *tmpl)
{
    base_buf b = {0};
    char o[64];
    testlib_world_origin(&world, o, sizeof o, "a.test");
    for (const char *p = tmpl; *p;) {
        const char *q = strstr(p, "ORIGIN");
        if (!q) {
            base_buf_puts(&b, p);
            break;
        }
        base_buf_put(&b, p, (size_t)(q - p));
        base_buf_puts(&b, o);
        p = q + 6;
    }
    return b.s;
}

static replay_trail *trail(const char *tmpl)
{
    char *s = trail_text(tmpl);
    replay_err err = {0};
    replay_trail *t = s ? replay_trail_parse(s, strlen(s), &err) : NULL;
    if (!CHECK(t != NULL))
        test_fail_detail("trail: %s", err.msg);
    free(s);
    return t;
}

/* Play tmpl on a new rig under grant_a; the status, the result in *json. */
static int play(testlib_rig *x, const char *tmpl, const char *const *vars, size_t nvars,
                char **json)
{
    *json = NULL;
    replay_trail *t = trail(tmpl);
    if (!t)
        return -1;
    replay_opts ro = {.vars = vars, .nvars = nvars};
    int st = replay_run(x->a, x->g, t, &ro, json);
    replay_trail_free(t);
    return st;
}

static bool rig(testlib_rig *x)
{
    gate_grant g;
    grant_a(&g);
    snap_opts o = {0};
    o.timeout_ms = 10000;
    return testlib_rig_up(x, &world, &g, NULL, &o);
}

/* The page's status line has want. */
static void check_status(snap_agent *a, const char *want)
{
    snap_query q = {.text = true};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(a, &q, &r));
    CHECK_HAS(r.text, want);
    snap_result_free(&r);
}

#define HEAD "{\"cdpgate_trail\":1,\"created\":\"2026-12-03T06:30:00Z\",\"cdpgate\":\"0.1.0\"," \
             "\"needs\":{\"origins\":[\"ORIGIN\"]}}\n"
#define OPEN(page) "{\"step\":1,\"op\":\"open\",\"args\":{\"url\":\"ORIGIN/replay/" page "\"}}\n"

static const char SHOP_TRAIL[] =
    HEAD OPEN("shop-moved.html")
    "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\",\"name\":\"Add\","
    "\"row\":\"Banana 0.80 Add\",\"section\":\"Basket\"},\"state\":{\"origin\":\"ORIGIN\"},"
    "\"effect\":{\"appeared\":[\"clicked add banana\"]}}\n"
    "{\"step\":3,\"op\":\"type\",\"args\":{\"text\":\"{{fruit}}\"},\"target\":{\"role\":"
    "\"textbox\",\"name\":\"Search\",\"testid\":\"search-box\"}}\n"
    "{\"step\":4,\"op\":\"read\",\"args\":{\"query\":\"clicked\",\"name\":\"status\"}}\n";

/* A recorded task replays on a page whose classes, layout and row order
 * changed: each target re-found, the parameter filled, the effect seen,
 * the output returned. */
static void t_replay_done(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    const char *vars[] = {"fruit=kiwi \"gold\""};
    char *json = NULL;
    int st = play(&x, SHOP_TRAIL, vars, 1, &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s", json ? json : "");
    CHECK_HAS(json, "\"status\":\"done\"");
    CHECK_HAS(json, "\"steps\":4");
    CHECK_HAS(json, "\"done\":4");
    CHECK(testlib_replay_output(json, "status", "clicked add banana"));
    free(json);
    snap_query q = {.query = "Search"};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(x.a, &q, &r));
    CHECK_HAS(r.text, "=\"kiwi \\\"gold\\\"\"");
    snap_result_free(&r);
    testlib_rig_down(&x);
}

/* A look-alike added: the step diverges before acting, names both
 * candidates and gives a fresh observation; nothing is clicked. */
static void t_replay_lookalike_diverges(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    int st = play(&x, HEAD OPEN("shop-lookalike.html")
                  "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
                  "\"name\":\"Checkout\",\"section\":\"Pay\"}}\n", NULL, 0, &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_HAS(json, "\"status\":\"diverged\"");
    CHECK_HAS(json, "\"divergence\":{\"step\":2,\"op\":\"click\",\"reason\":\"ambiguous\","
              "\"acted\":false");
    CHECK_HAS(json, "look-alike: 2 elements");
    CHECK_HAS(json, "\"observation\":\"[page] title=\\\"Shop\\\"");
    CHECK_HAS(json, "\"done\":1");
    free(json);
    check_status(x.a, "none");
    testlib_rig_down(&x);
}

/* A label changed: missing, the relabelled button the closest candidate,
 * nothing clicked. */
static void t_replay_label_diverges(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    int st = play(&x, HEAD OPEN("shop-relabel.html")
                  "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
                  "\"name\":\"Checkout\"}}\n", NULL, 0, &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_HAS(json, "\"reason\":\"missing\"");
    CHECK_HAS(json, "\\nname: Place order\\n");
    free(json);
    check_status(x.a, "none");
    testlib_rig_down(&x);
}

/* An open whose address held a bearer secret the trail did not keep
 * ("[redacted]", red team s13, R1) is never opened as written: it
 * diverges with the reason "secret" before anything is sent. */
static void t_replay_redacted_open(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    int st = play(&x, HEAD "{\"step\":1,\"op\":\"open\",\"args\":{\"url\":"
                  "\"ORIGIN/replay/reset/[redacted]\"}}\n", NULL, 0, &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_HAS(json, "\"reason\":\"secret\",\"acted\":false");
    CHECK_HAS(json, "open it yourself");
    free(json);
    testlib_rig_down(&x);
}

/* The effect recorded did not happen: diverged after acting (acted:
 * true), so the agent checks rather than repeats. */
static void t_replay_effect_diverges(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    int st = play(&x, HEAD OPEN("shop.html")
                  "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
                  "\"name\":\"Checkout\"},\"effect\":{\"appeared\":[\"Order placed\"]}}\n",
                  NULL, 0, &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_HAS(json, "\"reason\":\"effect\",\"acted\":true");
    CHECK_HAS(json, "Order placed");
    free(json);
    check_status(x.a, "clicked checkout");
    testlib_rig_down(&x);
}

/* What the grant lacks and a parameter without a value are refused up
 * front, all listed, nothing run (no tab was opened). */
static void t_replay_refused_up_front(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    int st = play(&x,
                  "{\"cdpgate_trail\":1,\"created\":\"2026-12-03T06:30:00Z\",\"cdpgate\":\"0.1.0\","
                  "\"needs\":{\"origins\":[\"ORIGIN\",\"http://evil.test\"],"
                  "\"identities\":{\"ORIGIN\":\"alice\"},\"egress\":[\"file_transfer\"],"
                  "\"consequential\":[{\"origin\":\"ORIGIN\",\"tool\":\"click\","
                  "\"name\":\"Checkout\"}]}}\n"
                  OPEN("shop.html")
                  "{\"step\":2,\"op\":\"type\",\"args\":{\"text\":\"{{fruit}}\"},\"target\":"
                  "{\"role\":\"textbox\",\"name\":\"Search\"}}\n", NULL, 0, &json);
    CHECK_INT(REPLAY_RUN_REFUSED, st);
    CHECK_HAS(json, "\"status\":\"refused\"");
    CHECK_HAS(json, "{\"need\":\"origin\",\"value\":\"http://evil.test\"}");
    CHECK_HAS(json, "{\"need\":\"identity\",\"value\":\"alice\"");
    CHECK_HAS(json, "{\"need\":\"egress\",\"value\":\"file_transfer\"}");
    CHECK_HAS(json, "{\"need\":\"consequential\",\"value\":\"click \\\"Checkout\\\" on");
    CHECK_HAS(json, "{\"need\":\"variable\",\"value\":\"fruit\"");
    CHECK_HAS(json, "\"done\":0");
    free(json);
    snap_elems e;
    snap_result r = {0};
    CHECK_INT(SNAP_ENOTAB, snap_elements(x.a, &e, &r));
    snap_elements_free(&e);
    snap_result_free(&r);
    testlib_rig_down(&x);
}

/* A step the gate will not let through on replay (text typed into a
 * password field: the human takes over) stops the run with the gate's
 * reason, and never echoes the text. */
static void t_replay_gate_stops(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    int st = play(&x, HEAD OPEN("shop-relabel.html")
                  "{\"step\":2,\"op\":\"type\",\"args\":{\"text\":\"hunter2\"},"
                  "\"class\":\"interact\",\"target\":{\"role\":\"textbox\","
                  "\"name\":\"Password\"}}\n",
                  NULL, 0, &json);
    CHECK_INT(REPLAY_RUN_STOPPED, st);
    CHECK_HAS(json, "\"status\":\"stopped\"");
    CHECK_HAS(json, "\"stopped\":{\"step\":2,\"op\":\"type\",\"gate\":");
    CHECK_HAS(json, "\"done\":1");
    CHECK_LACKS(json, "hunter2");
    free(json);
    testlib_rig_down(&x);
}


/* from: the agent did the diverged step itself; the replay goes on from
 * the next step on the tab as it is (issue 14, point 5). */
static void t_replay_from(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    static const char T[] = HEAD OPEN("shop-lookalike.html")
        "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
        "\"name\":\"Checkout\"}}\n"
        "{\"step\":3,\"op\":\"read\",\"args\":{\"query\":\"clicked\",\"name\":\"status\"}}\n";
    char *json = NULL;
    CHECK_INT(REPLAY_RUN_DIVERGED, play(&x, T, NULL, 0, &json));
    CHECK_HAS(json, "\"step\":2");
    free(json);
    /* The agent's own step 2: the second Checkout. */
    snap_elems e;
    snap_result r = {0};
    CHECK_INT(0, snap_elements(x.a, &e, &r));
    snap_result_free(&r);
    const char *ref = NULL;
    for (size_t i = 0; i < e.n; i++)
        if (e.v[i].name && strcmp(e.v[i].name, "Checkout") == 0)
            ref = e.v[i].ref;
    if (CHECK(ref != NULL))
        CHECK_INT(0, snap_click(x.a, ref, NULL, &r));
    snap_result_free(&r);
    snap_elements_free(&e);
    replay_trail *t = trail(T);
    replay_opts ro = {.from = 3};
    json = NULL;
    int st = t ? replay_run(x.a, x.g, t, &ro, &json) : -1;
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s", json ? json : "");
    CHECK_HAS(json, "\"from\":3");
    CHECK_HAS(json, "\"done\":1");
    CHECK(testlib_replay_output(json, "status", "clicked look-alike"));
    free(json);
    replay_trail_free(t);
    testlib_rig_down(&x);
}

/* --dry-run: the plan, each step with the gate's decision on what the
 * trail recorded; nothing opened (the agent has no tab after it). */
static void t_replay_dry_run(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    replay_trail *t = trail(HEAD OPEN("shop.html")
        "{\"step\":2,\"op\":\"click\",\"args\":{},\"class\":\"interact\",\"target\":{\"role\":"
        "\"button\",\"name\":\"Add\",\"row\":\"Banana\"},\"state\":{\"origin\":\"ORIGIN\"}}\n"
        "{\"step\":3,\"op\":\"type\",\"args\":{},\"class\":\"credential\",\"secret\":true,"
        "\"target\":{\"role\":\"textbox\",\"name\":\"Password\"},\"state\":{\"origin\":"
        "\"ORIGIN\"}}\n"
        "{\"step\":4,\"op\":\"open\",\"args\":{\"url\":\"http://evil.test/x\"}}\n");
    replay_opts ro = {.dry_run = true};
    int st = t ? replay_run(x.a, x.g, t, &ro, &json) : -1;
    CHECK_INT(REPLAY_RUN_REFUSED, st);
    CHECK_HAS(json, "{\"need\":\"origin\",\"value\":\"http://evil.test\"}");
    CHECK_HAS(json, "\"plan\":[{\"step\":1,\"op\":\"open\",\"decision\":\"allow\"");
    CHECK_HAS(json, "{\"step\":2,\"op\":\"click\",\"target\":\"button \\\"Add\\\" (row: Banana)\","
              "\"origin\":");
    CHECK_HAS(json, "\"step\":3,\"op\":\"type\"");
    CHECK_HAS(json, "\"decision\":\"stop\"");
    CHECK_HAS(json, "{\"step\":4,\"op\":\"open\",\"decision\":\"refused\"");
    CHECK_HAS(json, "\"done\":0");
    free(json);
    /* from 2 on, the granted steps alone: planned. */
    replay_trail_free(t);
    t = trail(HEAD OPEN("shop.html")
        "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\",\"name\":"
        "\"Add\"},\"state\":{\"origin\":\"ORIGIN\"}}\n");
    ro.from = 2;
    json = NULL;
    st = t ? replay_run(x.a, x.g, t, &ro, &json) : -1;
    CHECK_INT(REPLAY_RUN_DONE, st);
    CHECK_HAS(json, "\"plan\":[{\"step\":2,\"op\":\"click\"");
    CHECK_HAS(json, "\"decision\":\"allow\"");
    CHECK_HAS(json, "\"status\":\"planned\"");
    free(json);
    replay_trail_free(t);
    snap_elems e;
    snap_result r = {0};
    CHECK_INT(SNAP_ENOTAB, snap_elements(x.a, &e, &r));
    snap_elements_free(&e);
    snap_result_free(&r);
    testlib_rig_down(&x);
}


/* browser_replay on MCP (issue 14, point 5): listed only under
 * --record-dir and a grant naming "replay"; the trail by name, never a
 * path; a divergence as a structured result; with update, the agent's
 * next action is written back as the diverged step's next revision (the
 * old one kept); from goes on after it; the next replay uses the healed
 * step. */
static void t_mcp_replay_update(void)
{
    if (!testlib_need_cdpgate() || !testlib_world_browser(&world))
        return;
    char dir[512], path[600], grant[512], grant2[512], rules[400], data[600], ref[16];
    snprintf(dir, sizeof dir, "%s/mcp-trails", world.root);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/add.trail", dir);
    snprintf(grant, sizeof grant, "%s/grant-replay.json", world.root);
    snprintf(grant2, sizeof grant2, "%s/grant-noreplay.json", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    snprintf(data, sizeof data, "XDG_DATA_HOME=%s/mcp-data", world.root);
    /* A person's trail that lets the model heal it (red team s14, R4-4:
     * without "agent_editable" update is refused: test_record
     * red4_mcp_trail_poison). */
    char *tr = trail_text("{\"cdpgate_trail\":1,\"created\":\"2026-12-03T06:30:00Z\","
        "\"cdpgate\":\"0.1.0\",\"agent_editable\":true,\"needs\":{\"origins\":[\"ORIGIN\"]}}\n"
        OPEN("shop.html")
        "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
        "\"name\":\"Add to basket\",\"row\":\"Banana\"}}\n"
        "{\"step\":3,\"op\":\"read\",\"args\":{\"query\":\"clicked\",\"name\":\"status\"}}\n");
    char *g = trail_text("{\"task\":\"replay\",\"origins\":[\"ORIGIN\"],\"tools\":[\"open\","
                         "\"snapshot\",\"text\",\"click\",\"replay\"]}");
    char *g2 = trail_text("{\"task\":\"replay\",\"origins\":[\"ORIGIN\"]}");
    FILE *f = fopen(path, "w"), *fg = fopen(grant, "w"), *fg2 = fopen(grant2, "w");
    if (!CHECK(tr && g && g2 && f && fg && fg2))
        return;
    fputs(tr, f);
    fputs(g, fg);
    fputs(g2, fg2);
    fclose(f);
    fclose(fg);
    fclose(fg2);
    free(tr);
    free(g);
    free(g2);
    const char *env[] = {data, NULL};
    fixture_child c;
    /* The default tool set does not hold "replay": not offered. */
    const char *argv0[] = {testlib_cdpgate_bin(), rules, "--grant", grant2, "--record-dir", dir,
                           "mcp", NULL};
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv0, false)))
        return;
    testlib_mcp_init(&c, "replay");
    char *o = testlib_mcp_request(&c, 2, "tools/list", "{}", 20000);
    CHECK_HAS(o, "browser_snapshot");
    CHECK_LACKS(o, "browser_replay");
    free(o);
    testlib_child_free(&c);
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "--record-dir", dir,
                          "mcp", NULL};
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "replay");
    o = testlib_mcp_request(&c, 2, "tools/list", "{}", 20000);
    CHECK_HAS(o, "\"name\":\"browser_replay\"");
    free(o);
    o = testlib_mcp_tool(&c, 3, "browser_replay", "{\"trail\":\"../add\"}");
    CHECK_HAS(o, "\"isError\":true");
    CHECK_HAS(o, "trail is a name");
    free(o);
    /* A trail that cannot be loaded: the reason, never the host's
     * --record-dir (trailurl, point 5; failed before: "trail big:
     * DIR/big.trail: larger than ..."). A sparse file over the limit. */
    char big[700];
    snprintf(big, sizeof big, "%s/big.trail", dir);
    FILE *fb = fopen(big, "w");
    if (CHECK(fb != NULL)) {
        CHECK_INT(0, ftruncate(fileno(fb), (off_t)REPLAY_MAX_TRAIL + 1));
        fclose(fb);
    }
    o = testlib_mcp_tool(&c, 30, "browser_replay", "{\"trail\":\"big\"}");
    CHECK_HAS(o, "\"isError\":true");
    CHECK_HAS(o, "trail big: larger than");
    if (!CHECK_LACKS(o, "mcp-trails"))
        test_fail_detail("%.400s\n", o ? o : "");
    free(o);
    unlink(big);
    /* The button was "Add to basket" when recorded; it reads "Add" now. */
    o = testlib_mcp_tool(&c, 4, "browser_replay", "{\"trail\":\"add\",\"update\":true}");
    CHECK_HAS(o, "\"structuredContent\":{\"steps\":3");
    CHECK_HAS(o, "\"divergence\":{\"step\":2,\"op\":\"click\",\"reason\":\"missing\"");
    CHECK_HAS(o, "\"status\":\"diverged\"");
    CHECK_HAS(o, "\"isError\":true");
    free(o);
    /* The agent does step 2 itself: Banana's Add. */
    o = testlib_mcp_tool(&c, 5, "browser_snapshot", "{}");
    const char *rb = o ? strstr(o, "(row: Banana)") : NULL;
    while (rb && rb > o && strncmp(rb, "[e", 2) != 0)
        rb--;
    snprintf(ref, sizeof ref, "%.*s", rb ? (int)strcspn(rb + 1, "]") : 0, rb ? rb + 1 : "");
    free(o);
    char args[200];
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", ref);
    o = testlib_mcp_tool(&c, 6, "browser_click", args);
    CHECK_HAS(o, "clicked add banana");
    CHECK_HAS(o, "is now step 2 of trail add.trail");
    free(o);
    o = testlib_mcp_tool(&c, 7, "browser_replay", "{\"trail\":\"add\",\"from\":3}");
    CHECK_HAS(o, "\"status\":\"done\"");
    CHECK(testlib_replay_output(o, "status", "clicked add banana"));
    free(o);
    /* The whole trail again: the healed step runs. */
    o = testlib_mcp_tool(&c, 8, "browser_replay", "{\"trail\":\"add\"}");
    CHECK_HAS(o, "\"done\":3");
    CHECK_HAS(o, "\"status\":\"done\"");
    free(o);
    testlib_child_free(&c);
    replay_err err = {0};
    replay_trail *t = replay_trail_load(path, &err);
    if (!CHECK(t != NULL)) {
        test_fail_detail("%s", err.msg);
        return;
    }
    CHECK_INT(4, (long long)t->nsteps);
    if (t->nsteps == 4) {
        CHECK(t->steps[1].superseded);
        CHECK_STR("Add to basket", t->steps[1].target.name);
        CHECK_INT(2, t->steps[2].n);
        CHECK_INT(2, t->steps[2].rev);
        CHECK_STR("Add", t->steps[2].target.name);
        CHECK(t->steps[2].by_agent);       /* the model's heal says so */
        CHECK(!t->steps[1].by_agent);
    }
    replay_trail_free(t);
}


/* Play tmpl on x; the status; the result into *json (new). */
static int play_on(testlib_rig *x, const char *tmpl, char **json)
{
    *json = NULL;
    replay_trail *t = trail(tmpl);
    replay_opts ro = {0};
    int st = t ? replay_run(x->a, x->g, t, &ro, json) : -1;
    replay_trail_free(t);
    return st;
}

#define EFF_OPEN OPEN("effects.html")
#define EFF_TYPE(field, value) \
    "{\"step\":2,\"op\":\"type\",\"args\":{\"text\":\"abc\"},\"target\":{\"role\":\"textbox\"," \
    "\"name\":\"" field "\"},\"effect\":{\"value\":\"" value "\"}}\n"
#define EFF_TYPE_AS(field, text, value) \
    "{\"step\":2,\"op\":\"type\",\"args\":{\"text\":\"" text "\"},\"target\":{\"role\":" \
    "\"textbox\",\"name\":\"" field "\"},\"effect\":{\"value\":\"" value "\"}}\n"
#define EFF_CLICK(role, name, effect) \
    "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"" role "\",\"name\":\"" \
    name "\"},\"effect\":{" effect "}}\n"

/* The effects a step's own result shows are checked (issue 14, point 5):
 * the value read back, a dialog, a new tab; each one that differs is an
 * effect divergence after acting. */
static void t_replay_effects_checked(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json;
    /* The value reads back as recorded. */
    int st = play_on(&x, HEAD EFF_OPEN EFF_TYPE("Code", "abc"), &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s", json ? json : "");
    free(json);
    /* The page now upper-cases what is typed. */
    st = play_on(&x, HEAD EFF_OPEN EFF_TYPE("Shout", "abc"), &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_HAS(json, "\"reason\":\"effect\",\"acted\":true");
    CHECK_HAS(json, "\"expected\":\"the field reads \\\"abc\\\"\",\"found\":\"it reads "
              "\\\"ABC\\\"\"");
    free(json);
    /* The dialog as recorded; then one whose message changed. */
    st = play_on(&x, HEAD EFF_OPEN EFF_CLICK("button", "Save", "\"dialog\":\"alert: Saved\""),
                 &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s", json ? json : "");
    free(json);
    snap_result r = {0};
    CHECK_INT(0, snap_dialog(x.a, true, NULL, &r));
    snap_result_free(&r);
    st = play_on(&x, HEAD EFF_OPEN EFF_CLICK("button", "Save", "\"dialog\":\"alert: Deleted\""),
                 &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_HAS(json, "\"expected\":\"alert: Deleted\",\"found\":\"alert: Saved\"");
    free(json);
    CHECK_INT(0, snap_dialog(x.a, true, NULL, &r));
    snap_result_free(&r);
    /* The new tab as recorded; then one the page no longer opens. */
    st = play_on(&x, HEAD EFF_OPEN EFF_CLICK("link", "Help",
                 "\"new_tab\":\"ORIGIN/replay/shop.html\""), &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s", json ? json : "");
    free(json);
    st = play_on(&x, HEAD EFF_OPEN EFF_CLICK("link", "Help",
                 "\"new_tab\":\"ORIGIN/replay/help.html\""), &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_HAS(json, "/replay/help.html\",\"found\":\"");
    CHECK_HAS(json, "/replay/shop.html\"");
    free(json);
    testlib_rig_down(&x);
}

/* A field that reformats what is typed: the value check folds whitespace
 * and, when both sides are numeric-ish, compares digits; the result says
 * which steps matched only so. Case is kept, a '.' is no separator, and
 * other digits still diverge. */
static void t_replay_value_normalised(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json;
    int st = play_on(&x, HEAD EFF_OPEN EFF_TYPE_AS("Amount", "1234", "1234"), &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s", json ? json : "");
    CHECK_HAS(json, "\"normalised\":[{\"step\":2,\"rule\":\"digits\",\"expected\":\"1234\","
              "\"found\":\"1,234\"}]");
    free(json);
    st = play_on(&x, HEAD EFF_OPEN EFF_TYPE_AS("Phone", "5551234567", "555-123-4567"), &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s", json ? json : "");
    CHECK_HAS(json, "\"found\":\"(555) 123-4567\"");
    free(json);
    st = play_on(&x, HEAD EFF_OPEN EFF_TYPE_AS("Nick", " ann  lee ", " ann  lee "), &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s", json ? json : "");
    CHECK_HAS(json, "\"rule\":\"whitespace\",\"expected\":\" ann  lee \",\"found\":"
              "\"ann  lee\"");
    free(json);
    /* An exact match says nothing. */
    st = play_on(&x, HEAD EFF_OPEN EFF_TYPE_AS("Amount", "1234", "1,234"), &json);
    CHECK_INT(REPLAY_RUN_DONE, st);
    CHECK_LACKS(json, "normalised");
    free(json);
    /* Other digits, a decimal point, another case: divergences. */
    st = play_on(&x, HEAD EFF_OPEN EFF_TYPE_AS("Amount", "1234", "1243"), &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_HAS(json, "\"found\":\"it reads \\\"1,234\\\"\"");
    free(json);
    st = play_on(&x, HEAD EFF_OPEN EFF_TYPE_AS("Amount", "1234", "12.34"), &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    free(json);
    st = play_on(&x, HEAD EFF_OPEN EFF_TYPE_AS("Shout", "abc", "abc"), &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_LACKS(json, "normalised");
    free(json);
    testlib_rig_down(&x);
}

/* `cdpgate replay`: one JSON object on stdout and the documented exit
 * status (4: diverged). */
static void t_cli_replay_exit(void)
{
    if (!testlib_need_cdpgate() || !testlib_world_browser(&world))
        return;
    char path[512], grant[512];
    snprintf(path, sizeof path, "%s/look.trail", world.root);
    snprintf(grant, sizeof grant, "%s/grant.json", world.root);
    char *s = trail_text(HEAD OPEN("shop-lookalike.html")
                         "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":"
                         "\"button\",\"name\":\"Checkout\"}}\n");
    char *g = trail_text("{\"task\":\"replay\",\"origins\":[\"ORIGIN\"]}");
    FILE *f = fopen(path, "w"), *fg = fopen(grant, "w");
    if (!CHECK(s && g && f && fg))
        return;
    fputs(s, f);
    fputs(g, fg);
    fclose(f);
    fclose(fg);
    free(s);
    free(g);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --browser-arg '%s' --grant %s replay %s 2>/dev/null",
             testlib_cdpgate_bin(), FIXTURE_HOST_RULES, grant, path);
    FILE *p = popen(cmd, "r");
    char out[65536];
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int rc = p ? pclose(p) : -1;
    CHECK(WIFEXITED(rc));
    CHECK_INT(4, WEXITSTATUS(rc));
    CHECK(out[0] == '{' && strchr(out, '\n') == out + n - 1);
    CHECK_HAS(out, "\"reason\":\"ambiguous\"");
}

/* The file's text (new), NULL when it cannot be read. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    base_buf b = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        base_buf_put(&b, buf, n);
    fclose(f);
    return b.s;
}

/* A trail recorded by `cdpgate mcp --record` (the recorder's own target
 * format: the gate's row text, its attributes) replays on the page after
 * its classes, layout and row order changed: the two formats agree. */
static void t_recorded_mcp_replays(void)
{
    if (!testlib_need_cdpgate() || !testlib_world_browser(&world))
        return;
    char path[512], grant[512], rules[400], data[600], url[256], args[400], ref[16];
    snprintf(path, sizeof path, "%s/mcp.trail", world.root);
    snprintf(grant, sizeof grant, "%s/grant-mcp.json", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    snprintf(data, sizeof data, "XDG_DATA_HOME=%s/mcp-data", world.root);
    char *g = trail_text("{\"task\":\"replay\",\"origins\":[\"ORIGIN\"]}");
    FILE *fg = fopen(grant, "w");
    if (!CHECK(g && fg))
        return;
    fputs(g, fg);
    fclose(fg);
    free(g);
    const char *env[] = {data, NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "--record", path,
                          "mcp", NULL};
    fixture_child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "replay");
    testlib_world_url(&world, url, sizeof url, "a.test", "/replay/shop.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    char *o = testlib_mcp_tool(&c, 2, "browser_open", args);
    /* The ref before "(row: Banana)" on its line. */
    const char *rb = o ? strstr(o, "(row: Banana)") : NULL;
    while (rb && rb > o && strncmp(rb, "[e", 2) != 0)
        rb--;
    snprintf(ref, sizeof ref, "%.*s", rb ? (int)strcspn(rb + 1, "]") : 0, rb ? rb + 1 : "");
    free(o);
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", ref);
    o = testlib_mcp_tool(&c, 3, "browser_click", args);
    CHECK_HAS(o, "clicked add banana");
    free(o);
    testlib_child_free(&c);
    char *rec = slurp(path);
    if (!CHECK(rec != NULL))
        return;
    CHECK_HAS(rec, "\"op\":\"click\"");
    /* The same task, on the page as it is now. */
    char *moved = rec, *at = strstr(rec, "/replay/shop.html");
    base_buf b = {0};
    if (at) {
        base_buf_put(&b, rec, (size_t)(at - rec));
        base_buf_puts(&b, "/replay/shop-moved.html");
        base_buf_puts(&b, at + strlen("/replay/shop.html"));
        moved = b.s;
    }
    replay_err err = {0};
    replay_trail *t = moved ? replay_trail_parse(moved, strlen(moved), &err) : NULL;
    free(rec);
    base_buf_free(&b);
    testlib_rig x;
    if (!CHECK(t != NULL) || !rig(&x)) {
        replay_trail_free(t);
        return;
    }
    char *json = NULL;
    replay_opts ro = {0};
    int st = replay_run(x.a, x.g, t, &ro, &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s", json ? json : "");
    CHECK_HAS(json, "\"done\":2");
    free(json);
    check_status(x.a, "clicked add banana");
    replay_trail_free(t);
    testlib_rig_down(&x);
}

/* ---- red team s14 (round 4): trailsec's regression tests ---- */

/* R4-5: {{name}} injection. The recorder writes a typed text as it is
 * unless it is a parameter, so a text the model typed that holds the
 * characters "{{ssn}}" (a page told it to) is recorded as
 * {"text":"{{ssn}}"}; replay substitutes every {{name}} of a step's
 * arguments, so the person's --var ssn=... (given for the trail's real
 * ssn parameter) is typed into the Comment field too (or into an open's
 * URL). Recorded here through the recorder itself, then replayed on
 * tests/fixtures/red4/form.html. Fails on main = flaw present. */
static void t_red4_var_injection(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char dir[256], path[300], url[300];
    if (testlib_tempdir("red4", dir, sizeof dir) != 0) {
        testlib_rig_down(&x);
        return;
    }
    snprintf(path, sizeof path, "%s/apply.trail", dir);
    snprintf(url, sizeof url, "%s/red4/form.html", O_A);
    replay_err err = {0};
    replay_rec *rec = replay_rec_open(path, "0.1.0", "apply", &err);
    if (!CHECK(rec)) {
        testlib_rig_down(&x);
        return;
    }
    replay_act op = {.op = "open", .url = url};
    snap_step_facts fo = {.origin = O_A, .url = url};
    CHECK_INT(0, replay_rec_action(rec, &op, &fo, "{\"ok\":true}", &err));
    /* the person's parameter */
    replay_act t1 = {.op = "type", .text = "111-22-3333", .param = "ssn"};
    snap_step_facts f1 = {.has_target = true, .role = "textbox", .name = "SSN", .origin = O_A,
                          .url = url};
    CHECK_INT(0, replay_rec_action(rec, &t1, &f1, "{\"ok\":true}", &err));
    /* what the model typed into the comment box: page-supplied text */
    replay_act t2 = {.op = "type", .text = "see {{ssn}}"};
    snap_step_facts f2 = {.has_target = true, .role = "textbox", .name = "Comment",
                          .origin = O_A, .url = url};
    CHECK_INT(0, replay_rec_action(rec, &t2, &f2, "{\"ok\":true}", &err));
    replay_rec_close(rec);
    replay_trail *t = replay_trail_load(path, &err);
    if (!CHECK(t)) {
        test_fail_detail("%s", err.msg);
        testlib_rig_down(&x);
        return;
    }
    const char *vars[] = {"ssn=987-65-4321"};
    replay_opts ro = {.vars = vars, .nvars = 1};
    char *json = NULL;
    int st = replay_run(x.a, x.g, t, &ro, &json);
    replay_trail_free(t);
    CHECK_INT(REPLAY_RUN_DONE, st);
    snap_query q = {.query = "Comment"};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(x.a, &q, &r));
    /* The Comment field's own line (the match shows the SSN field above
     * it as context, with the parameter rightly typed there). */
    const char *c = r.text ? strstr(r.text, "textbox \"Comment\"") : NULL;
    char line[400];
    snprintf(line, sizeof line, "%.*s", c ? (int)strcspn(c, "\n") : 0, c ? c : "");
    CHECK(c != NULL);
    if (!CHECK_LACKS(line, "987-65-4321"))
        test_fail_detail("replay: %s\n", json ? json : "");
    CHECK_HAS(line, "=\"see {{ssn}}\"");
    snap_result_free(&r);
    free(json);
    test_rm_rf(dir);
    testlib_rig_down(&x);
}

/* R4-6: page text in replay's result outside the page-content markers,
 * and attribute values raw. A read step's output is the page's text cut
 * out of the markers (put_read_text), and a divergence's candidates
 * carry names and the "why" of each, which quotes the element's id /
 * test id / placeholder / aria-label as DOM.describeNode gave them: a
 * U+202E in a data-testid reaches structuredContent raw (every other
 * page-derived string is escaped as \u202e). Fails on main = flaw
 * present. */
static void t_red4_replay_result_framing(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    play(&x, HEAD "{\"step\":1,\"op\":\"open\",\"args\":{\"url\":\"ORIGIN/red4/attr.html\"}}\n"
         "{\"step\":2,\"op\":\"read\",\"args\":{\"query\":\"Note:\",\"name\":\"note\"}}\n"
         "{\"step\":3,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
         "\"name\":\"Go\",\"testid\":\"go-1\"}}\n", NULL, 0, &json);
    CHECK_HAS(json, "\"reason\":\"missing\"");
    /* the output: page text, but not marked as such */
    const char *o = json ? strstr(json, "\"outputs\":{\"note\":\"") : NULL;
    if (CHECK(o != NULL) && !CHECK(strncmp(o + 19, "<<<page-content", 15) == 0))
        test_fail_detail("output unframed: %.200s\n", o);
    /* the raw U+202E */
    if (!CHECK_LACKS(json, "\xe2\x80\xae"))
        test_fail_detail("%s\n", json ? json : "");
    /* the candidates' page text framed in the markers too, not only
     * escaped (R4-6 residual; failed before: role, name, why as members) */
    const char *cd = json ? strstr(json, "\"candidates\":[{\"ref\":\"") : NULL;
    const char *pg = cd ? strstr(cd, "\",\"page\":\"<<<page-content nonce=") : NULL;
    if (!CHECK(cd && pg && !strstr(cd, "\"why\":")))
        test_fail_detail("candidates: %.600s\n", cd ? cd : "(none)");
    free(json);
    testlib_rig_down(&x);
}

/* ---- red team s14 (round 4): trailplay's regression tests ---- */

/* R4-8: a row that differs only in its digits is another row. The trail
 * clicked "Approve" in the row "Invoice 1001 ACME Ltd due 20.00 Approve";
 * at the replay that invoice is gone and the page has "Invoice 7777 ACME
 * Ltd due 99999.00 Approve" (tests/fixtures/red4/invoices.html): a
 * divergence, nothing clicked. The same row recorded with its amount
 * marked "{{#}}" (as the recorder writes an amount) finds the row of the
 * same invoice whose amount changed. Failed before the fix: done, 7777
 * approved. */
static void t_red4_row_digits(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    int st = play(&x, HEAD "{\"step\":1,\"op\":\"open\",\"args\":{\"url\":\"ORIGIN/red4/"
                  "invoices.html\"}}\n"
                  "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
                  "\"name\":\"Approve\",\"row\":\"Invoice 1001 ACME Ltd due 20.00 Approve\"}}\n",
                  NULL, 0, &json);
    if (!CHECK_INT(REPLAY_RUN_DIVERGED, st))
        test_fail_detail("%s\n", json ? json : "");
    CHECK_HAS(json, "\"reason\":\"missing\"");
    snap_query q = {.text = true};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(x.a, &q, &r));
    CHECK_LACKS(r.text, "approved invoice");
    snap_result_free(&r);
    free(json);
    /* the amount marked: any amount, the same invoice */
    st = play(&x, HEAD "{\"step\":1,\"op\":\"open\",\"args\":{\"url\":\"ORIGIN/red4/"
              "invoices.html\"}}\n"
              "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
              "\"name\":\"Approve\",\"row\":\"Invoice 7777 ACME Ltd due {{#}} Approve\"}}\n",
              NULL, 0, &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%s\n", json ? json : "");
    check_status(x.a, "approved invoice 7777");
    free(json);
    /* the marker stands for a number only, and one */
    st = play(&x, HEAD "{\"step\":1,\"op\":\"open\",\"args\":{\"url\":\"ORIGIN/red4/"
              "invoices.html\"}}\n"
              "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
              "\"name\":\"Approve\",\"row\":\"Invoice {{#}} Other Co due {{#}} {{#}}\"}}\n",
              NULL, 0, &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    free(json);
    testlib_rig_down(&x);
}

/* B-1: a press step as the recorder wrote it before (its target from the
 * focused field: id, name attribute, label; no role, no name) replays: the
 * target is re-found by its attributes (every element's read), given the
 * focus, and the key goes there. The search box is not focused by the
 * step before (a click on Checkout): the replay focuses it. Failed before
 * the fix: ambiguous, every element passed. A press whose field is gone
 * diverges before anything is pressed. */
static void t_red4_press_step_replays(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char *json = NULL;
    int st = play(&x, HEAD OPEN("shop.html")
                  "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
                  "\"name\":\"Checkout\"}}\n"
                  "{\"step\":3,\"op\":\"press\",\"args\":{\"key\":\"k\"},\"target\":{\"id\":\"q\","
                  "\"name_attr\":\"q\",\"label\":\"Search\"}}\n", NULL, 0, &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%.1500s\n", json ? json : "");
    free(json);
    snap_query q = {.query = "Search"};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(x.a, &q, &r));
    if (!CHECK_HAS(r.text, "=\"k\" focused"))
        test_fail_detail("%.1500s\n", r.text ? r.text : "");
    snap_result_free(&r);
    /* with its role and name, as the recorder writes it now */
    st = play(&x, HEAD OPEN("shop.html")
              "{\"step\":2,\"op\":\"press\",\"args\":{\"key\":\"z\"},\"target\":{\"role\":"
              "\"textbox\",\"name\":\"Search\",\"id\":\"q\"}}\n", NULL, 0, &json);
    if (!CHECK_INT(REPLAY_RUN_DONE, st))
        test_fail_detail("%.1500s\n", json ? json : "");
    free(json);
    /* the field is gone (another id): nothing pressed */
    st = play(&x, HEAD OPEN("shop.html")
              "{\"step\":2,\"op\":\"press\",\"args\":{\"key\":\"Enter\"},\"target\":{\"id\":"
              "\"q-old\",\"label\":\"Search\"}}\n", NULL, 0, &json);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    CHECK_HAS(json, "\"reason\":\"missing\"");
    free(json);
    testlib_rig_down(&x);
}

/* ---- red team s15 (round 5): trailurl's regression tests ---- */

#define OPEN5 "{\"step\":1,\"op\":\"open\",\"args\":{\"url\":\"ORIGIN/red5/rows.html\"}}\n"
#define CLICK5(name, row) "{\"step\":2,\"op\":\"click\",\"args\":{},\"target\":{\"role\":" \
    "\"button\",\"name\":\"" name "\",\"row\":\"" row "\"}}\n"
#define PAYEE "Payee Alice Smith, Acme Supplies Ltd, 12 High Street, Springfield, account " \
    "ending 4321, added 2024-01-02 --"

/* Play one click step on red5/rows.html: its status, the page's status
 * line checked for want (NULL: nothing was clicked). */
static int play_row(testlib_rig *x, const char *step, const char *const *vars, size_t nvars,
                    const char *want)
{
    char tmpl[1200];
    snprintf(tmpl, sizeof tmpl, "%s%s%s", HEAD, OPEN5, step);
    char *json = NULL;
    int st = play(x, tmpl, vars, nvars, &json);
    snap_query q = {.text = true};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(x->a, &q, &r));
    if (want ? !CHECK_HAS(r.text, want) : !CHECK_LACKS(r.text, "clicked"))
        test_fail_detail("%s\n", json ? json : "");
    snap_result_free(&r);
    free(json);
    return st;
}

/* R5-3: a row's look-alikes. A number that is no amount ("Invoice
 * 2023.11", as the recorder now keeps it) must be equal: the row of
 * invoice 9999.99 is another. A recorded row of 100-119 characters (the
 * old matcher took any row of 100+ for a cut one) does not match the same
 * row going on with another IBAN. An amount marked "{{#}}" still finds
 * its row whose price changed. Failed before the fix: the payee row's
 * "Choose now" was clicked (done). */
static void t_red5_row_lookalikes(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    CHECK_INT(REPLAY_RUN_DIVERGED,
              play_row(&x, CLICK5("Choose", "Invoice 2023.11 from Acme Ltd Choose"), NULL, 0,
                       NULL));
    CHECK_INT(REPLAY_RUN_DIVERGED,
              play_row(&x, CLICK5("Choose now", PAYEE " Choose now"), NULL, 0, NULL));
    CHECK_INT(REPLAY_RUN_DONE,
              play_row(&x, CLICK5("Choose", "Widget ${{#}} Choose"), NULL, 0, "clicked choose"));
    /* cut by the recorder: what it kept is the start of the row */
    CHECK_INT(REPLAY_RUN_DONE,
              play_row(&x, CLICK5("Choose now", PAYEE " Choose now to IBAN{{\xe2\x80\xa6}}"), NULL,
                       0, "clicked choose now"));
    testlib_rig_down(&x);
}

/* Issue 14 (trailurl, point 4): a target's name and row recorded with a
 * parameter's value written {{who}} are filled in at replay: the button
 * of the person the vars name is clicked; without that var the replay
 * is refused up front, as for a parameter of the arguments. */
static void t_target_params_replay(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    const char *vars[] = {"who=Bob Jones"};
    CHECK_INT(REPLAY_RUN_DONE,
              play_row(&x, CLICK5("Open {{who}}", "{{who}} Open {{who}}"), vars, 1,
                       "clicked open bob jones"));
    /* without the var: refused up front, the variable named (nothing
     * opened or clicked) */
    char *json = NULL;
    int st = play(&x, HEAD OPEN5 CLICK5("Open {{who}}", "Bob Jones Open Bob Jones"), NULL, 0,
                  &json);
    CHECK_INT(REPLAY_RUN_REFUSED, st);
    if (!CHECK_HAS(json, "{\"need\":\"variable\",\"value\":\"who\""))
        test_fail_detail("%s\n", json ? json : "");
    free(json);
    testlib_rig_down(&x);
}

/* R7-2: a parameter's value is written {{name}} wherever it occurs in a
 * target's texts, inside a number too: a quantity "2" typed as {{qty}}
 * (browser_type "param", or --param-typed for every typed text) turns the
 * row of invoice 1002, chosen next, into "Invoice 100{{qty}} Acme Ltd",
 * so the replay with --var qty=5 selects invoice 1005 (R4-8's "a row's
 * digits are part of the row" undone). The recorder's own trail, replayed
 * on the same page: invoice 1002 must be the one selected. Failed on main
 * 90de5e4: "selected Invoice 1005 Acme Ltd". */
static void t_red7_param_digit_row(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char dir[256], path[300], url[300];
    if (testlib_tempdir("red7", dir, sizeof dir) != 0) {
        testlib_rig_down(&x);
        return;
    }
    snprintf(path, sizeof path, "%s/pay.trail", dir);
    snprintf(url, sizeof url, "%s/red7/qty.html", O_A);
    replay_err err = {0};
    replay_rec *rec = replay_rec_open(path, "0.1.0", "pay", &err);
    if (!CHECK(rec)) {
        testlib_rig_down(&x);
        return;
    }
    replay_act op = {.op = "open", .url = url};
    snap_step_facts fo = {.origin = O_A, .url = url};
    CHECK_INT(0, replay_rec_action(rec, &op, &fo, "{\"ok\":true}", &err));
    replay_act ty = {.op = "type", .text = "2", .param = "qty"};
    snap_step_facts ft = {.has_target = true, .role = "textbox", .name = "Quantity",
                          .origin = O_A, .url = url};
    CHECK_INT(0, replay_rec_action(rec, &ty, &ft, "{\"ok\":true}", &err));
    replay_act cl = {.op = "click"};
    snap_step_facts fc = {.has_target = true, .role = "button", .name = "Select",
                          .row = "Invoice 1002 Acme Ltd", .origin = O_A, .url = url};
    CHECK_INT(0, replay_rec_action(rec, &cl, &fc, "{\"ok\":true}", &err));
    replay_rec_close(rec);
    char *bytes = test_read_file(path, NULL);
    CHECK_HAS(bytes, "\"row\":\"Invoice 1002 Acme Ltd\"");   /* no {{qty}} inside 1002 */
    free(bytes);
    replay_trail *t = replay_trail_load(path, &err);
    if (!CHECK(t)) {
        test_fail_detail("%s", err.msg);
        test_rm_rf(dir);
        testlib_rig_down(&x);
        return;
    }
    const char *vars[] = {"qty=5"};
    replay_opts ro = {.vars = vars, .nvars = 1};
    char *json = NULL;
    int st = replay_run(x.a, x.g, t, &ro, &json);
    replay_trail_free(t);
    snap_query q = {.text = true};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(x.a, &q, &r));
    if (!CHECK_LACKS(r.text, "selected Invoice 1005") ||
        !CHECK_HAS(r.text, "selected Invoice 1002 Acme Ltd"))
        test_fail_detail("replay %d: %.1200s\n", st, json ? json : "");
    CHECK_INT(REPLAY_RUN_DONE, st);
    snap_result_free(&r);
    free(json);
    test_rm_rf(dir);
    testlib_rig_down(&x);
}

/* R7-5: the recorder takes a number followed by " $" (or " USD", " EUR",
 * " €") for an amount ("20.00 USD"), so in the commonest invoice row,
 * number then price ("Invoice 1002 $120.00"), the invoice number is
 * written {{#}} too: "Invoice {{#}} ${{#}}" (R4-8 undone: "invoice 1001
 * is not invoice 7777"). The row as the recorder takes it when the
 * snapshot gives none (the invoice was the only "Select" on the page:
 * snapshot/record.c, the row's innerText). Recorded on invoice 1002, replayed when 1002 is
 * gone and invoice 1005 is listed (beside a credit note, the row that
 * was there before): it must diverge, never select 1005.
 * Failed on main 90de5e4: "done", "selected Invoice 1005". */
static void t_red7_number_before_price(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char dir[256], path[300], url[300];
    if (testlib_tempdir("red7", dir, sizeof dir) != 0) {
        testlib_rig_down(&x);
        return;
    }
    snprintf(path, sizeof path, "%s/inv.trail", dir);
    snprintf(url, sizeof url, "%s/red7/invoices.html", O_A);
    replay_err err = {0};
    replay_rec *rec = replay_rec_open(path, "0.1.0", "inv", &err);
    if (!CHECK(rec)) {
        testlib_rig_down(&x);
        return;
    }
    replay_act op = {.op = "open", .url = url};
    snap_step_facts fo = {.origin = O_A, .url = url};
    CHECK_INT(0, replay_rec_action(rec, &op, &fo, "{\"ok\":true}", &err));
    replay_act cl = {.op = "click"};
    snap_step_facts fc = {.has_target = true, .role = "button", .name = "Select",
                          .row = "Invoice 1002 $120.00 Select", .origin = O_A, .url = url};
    CHECK_INT(0, replay_rec_action(rec, &cl, &fc, "{\"ok\":true}", &err));
    replay_rec_close(rec);
    char *bytes = test_read_file(path, NULL);
    CHECK_HAS(bytes, "\"row\":\"Invoice 1002 ${{#}} Select\"");  /* 1002 no amount */
    free(bytes);
    replay_trail *t = replay_trail_load(path, &err);
    if (!CHECK(t)) {
        test_fail_detail("%s", err.msg);
        test_rm_rf(dir);
        testlib_rig_down(&x);
        return;
    }
    replay_opts ro = {0};
    char *json = NULL;
    int st = replay_run(x.a, x.g, t, &ro, &json);
    replay_trail_free(t);
    CHECK_INT(REPLAY_RUN_DIVERGED, st);
    snap_query q = {.text = true};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(x.a, &q, &r));
    if (!CHECK_LACKS(r.text, "selected Invoice 1005"))
        test_fail_detail("replay %d: %.1200s\n", st, json ? json : "");
    snap_result_free(&r);
    free(json);
    test_rm_rf(dir);
    testlib_rig_down(&x);
}

/* ---- issue 14 point 2 (trail18): secret-shaped words in a target ---- */

/* The trail text with "keys.html" opened with query q (a variant of the
 * page), played: its status, the result in *json. */
static int play_keys_key(testlib_rig *x, const char *bytes, const char *q, const char *key,
                        char **json);

static int play_keys(testlib_rig *x, const char *bytes, const char *q, char **json)
{
    return play_keys_key(x, bytes, q, NULL, json);
}

/* play_keys with the trail key of the file key (NULL: the default). */
static int play_keys_key(testlib_rig *x, const char *bytes, const char *q, const char *key,
                        char **json)
{
    *json = NULL;
    base_buf b = {0};
    const char *at = strstr(bytes, "keys.html");
    if (!CHECK(at != NULL))
        return -1;
    base_buf_put(&b, bytes, (size_t)(at - bytes) + 9);
    base_buf_puts(&b, q);
    base_buf_puts(&b, at + 9);
    replay_err err = {0};
    replay_trail *t = b.s ? replay_trail_parse(b.s, b.len, &err) : NULL;
    base_buf_free(&b);
    if (!CHECK(t != NULL)) {
        test_fail_detail("trail: %s\n", err.msg);
        return -1;
    }
    replay_opts ro = {.trail_key = key};
    int st = replay_run(x->a, x->g, t, &ro, json);
    replay_trail_free(t);
    return st;
}

/* Record a click on the Deploy token's "Copy ghp_..." (the recording's
 * look counting look-alikes, as cli/record.c does) into path. */
static void rec_keys(testlib_rig *x, const char *path, const char *url)
{
    snap_result r = {0};
    CHECK_INT(0, snap_open(x->a, url, false, &r));
    snap_result_free(&r);
    snap_elems e = {0};
    CHECK_INT(0, snap_elements(x->a, &e, &r));
    snap_result_free(&r);
    const snap_elem *b = NULL;
    for (size_t i = 0; i < e.n; i++)
        if (e.v[i].name && strstr(e.v[i].name, "ghp_Q8w2"))
            b = &e.v[i];
    replay_err err = {0};
    replay_rec *rec = CHECK(b != NULL) ? replay_rec_open(path, "0.1.0", "keys", &err) : NULL;
    if (rec) {
        replay_act op = {.op = "open", .url = url};
        snap_step_facts fo = {.origin = O_A, .url = url};
        CHECK_INT(0, replay_rec_action(rec, &op, &fo, "{\"ok\":true}", &err));
        CHECK_INT(0, replay_rec_look(rec, x->a, b->ref));
        replay_act cl = {.op = "click"};
        snap_step_facts fc = {.has_target = true, .role = "button", .name = b->name,
                              .row = b->rowtext, .origin = O_A, .url = url};
        CHECK_INT(0, replay_rec_action(rec, &cl, &fc, "{\"ok\":true}", &err));
        replay_rec_close(rec);
    }
    snap_elements_free(&e);
}

/* Issue 14 point 2 (trail18; red team s17, R7-6; s18, R8-7): a click
 * recorded on a page of API tokens keeps the target's name and row with
 * each token written {{*k:hash}} (16 hex digits of its HMAC under the
 * trail key: session 21; never the token); the replay finds that row again as recorded, and stops where
 * the tokens were rotated (?v=2: another token is another row, R8-7's
 * safe side) or the row holds no token-shaped word (?revoked=1).
 * Recorded where two rows differ only by their tokens (?same=1), the
 * second one's Copy: the recording counted no look-alike, and the replay
 * copies that row (its token's hash), never the first row's; with both
 * tokens rotated it stops. */
static void t_trail_row_secret(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char dir[256], path[2][300], url[2][300];
    if (testlib_tempdir("trail18", dir, sizeof dir) != 0) {
        testlib_rig_down(&x);
        return;
    }
    char *bytes[2];
    for (int k = 0; k < 2; k++) {
        snprintf(path[k], sizeof path[k], "%s/keys%d.trail", dir, k);
        snprintf(url[k], sizeof url[k], "%s/trail18/keys.html%s", O_A, k ? "?same=1" : "");
        rec_keys(&x, path[k], url[k]);
        bytes[k] = test_read_file(path[k], NULL);
        if (!CHECK(bytes[k] != NULL))
            continue;
        CHECK_LACKS(bytes[k], "ghp_");
        CHECK_LACKS(bytes[k], "\"equals\"");
        const char *nm = strstr(bytes[k], "\"name\":\"Copy {{*k:");
        char want[80];
        snprintf(want, sizeof want, "\"row\":\"%s token {{*k:%.16s}} Copy\"",
                 k ? "CI" : "Deploy", nm ? nm + 18 : "");
        if (!CHECK(nm != NULL) || !CHECK_HAS(bytes[k], want))
            test_fail_detail("%s\n", bytes[k]);
    }
    static const struct {
        int k;
        const char *q;
        int st;
        const char *want;
    } V[] = {
        {0, "", REPLAY_RUN_DONE, "copied row 2"},
        {0, "?v=2", REPLAY_RUN_DIVERGED, "\"reason\":\"missing\""},
        {0, "?revoked=1", REPLAY_RUN_DIVERGED, "\"reason\":\"missing\""},
        {1, "", REPLAY_RUN_DONE, "copied row 2"},
        {1, "?v=2&same=1", REPLAY_RUN_DIVERGED, "\"reason\":\"missing\""},
    };
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
        if (!bytes[V[i].k])
            continue;
        char *json = NULL;
        int st = play_keys(&x, bytes[V[i].k], V[i].q, &json);
        snap_query q = {.text = true};
        snap_result r = {0};
        CHECK_INT(0, snap_observe(x.a, &q, &r));
        bool ok = CHECK_INT(V[i].st, st) &&
                  (V[i].st == REPLAY_RUN_DONE ? CHECK_HAS(r.text, V[i].want)
                                              : CHECK_HAS(json, V[i].want) &&
                                                    CHECK_LACKS(r.text, "copied"));
        if (!ok)
            test_fail_detail("variant %zu: %.1500s\n", i, json ? json : "");
        snap_result_free(&r);
        free(json);
    }
    free(bytes[0]);
    free(bytes[1]);
    test_rm_rf(dir);
    testlib_rig_down(&x);
}

/* Session 21: the trail's hidden identifiers are hashed under the trail
 * key of the machine that recorded it; its header names the key's id
 * (never the key). Replayed under that key: done. Under another key (a
 * trail shared with someone else) or none: it diverges at that step with
 * reason "trail_key" and a message naming both ids, the row is not
 * clicked (fail closed: never any word), and the result says why up
 * front too; no output holds either key. */
static void t_trail_key_other(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char dir[256], path[300], url[300], other[300], none[300];
    if (testlib_tempdir("trailkey", dir, sizeof dir) != 0) {
        testlib_rig_down(&x);
        return;
    }
    snprintf(path, sizeof path, "%s/keys.trail", dir);
    snprintf(url, sizeof url, "%s/trail18/keys.html", O_A);
    snprintf(other, sizeof other, "%s/other-key", dir);
    snprintf(none, sizeof none, "%s/no-such-key", dir);
    replay_key mine, theirs;
    replay_err err = {0};
    CHECK_INT(0, replay_key_load(NULL, true, &mine, &err));
    CHECK_INT(0, replay_key_load(other, true, &theirs, &err));
    char hex[2][2 * REPLAY_KEY_LEN + 1];
    for (size_t i = 0; i < REPLAY_KEY_LEN; i++) {
        snprintf(hex[0] + 2 * i, 3, "%02x", mine.k[i]);
        snprintf(hex[1] + 2 * i, 3, "%02x", theirs.k[i]);
    }
    rec_keys(&x, path, url);
    char *bytes = test_read_file(path, NULL);
    char want[80];
    snprintf(want, sizeof want, "\"trail_key\":\"%s\"", mine.id);
    if (!CHECK(bytes != NULL) || !CHECK_HAS(bytes, want) || !CHECK_HAS(bytes, "{{*k:") ||
        !CHECK_LACKS(bytes, "{{*:") || !CHECK_LACKS(bytes, hex[0])) {
        test_fail_detail("%s\n", bytes ? bytes : "");
        goto out;
    }
    static const struct {
        int which;               /* 0: the recorder's key, 1: another, 2: none */
        int st;
    } V[] = {{0, REPLAY_RUN_DONE}, {1, REPLAY_RUN_DIVERGED}, {2, REPLAY_RUN_DIVERGED}};
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
        char *json = NULL;
        const char *kf = V[i].which == 1 ? other : V[i].which == 2 ? none : NULL;
        int st = play_keys_key(&x, bytes, "", kf, &json);
        snap_query q = {.text = true};
        snap_result r = {0};
        CHECK_INT(0, snap_observe(x.a, &q, &r));
        bool ok = CHECK_INT(V[i].st, st) && CHECK_LACKS(json, hex[0]) &&
                  CHECK_LACKS(json, hex[1]);
        if (V[i].st == REPLAY_RUN_DONE)
            ok = ok && CHECK_HAS(r.text, "copied row 2");
        else
            ok = ok && CHECK_HAS(json, "\"reason\":\"trail_key\"") &&
                 CHECK_HAS(json, mine.id) && CHECK_LACKS(r.text, "copied") &&
                 (V[i].which == 1 ? CHECK_HAS(json, theirs.id) : CHECK_HAS(json, "no trail key"));
        if (!ok)
            test_fail_detail("variant %zu: %.1500s\n", i, json ? json : "");
        snap_result_free(&r);
        free(json);
    }
out:
    replay_key_wipe(&mine);
    replay_key_wipe(&theirs);
    free(bytes);
    test_rm_rf(dir);
    testlib_rig_down(&x);
}

/* R8-7 (made by 4949160, trail18's one rule): a word of a target's row
 * shaped like a secret is written {{*}} and replay reads {{*}} as any such
 * word; but identifiers are that shape too: an IBAN (GB82WEST1234...), a
 * Stripe id (in_1MtHb..., sub_1Oq...), a UUID, a transaction reference.
 * A trail that selected the payee "GB82WEST12345698765432 Alice Smith"
 * (then an amount, then Send, in a real trail) replays "done" on the page
 * where that payee is gone and another one of the same name with the
 * attacker's IBAN stands (?v=2): "selected payee GB33MALL98765432101234".
 * Before 4949160 the row kept the IBAN (digits compared: R4-8). Must
 * diverge, nothing selected. Fails on main 4949160. */
static void t_red8_row_id_wildcard(void)
{
    testlib_rig x;
    if (!rig(&x))
        return;
    char dir[256], path[300], url[300];
    if (testlib_tempdir("red8pay", dir, sizeof dir) != 0) {
        testlib_rig_down(&x);
        return;
    }
    snprintf(path, sizeof path, "%s/pay.trail", dir);
    snprintf(url, sizeof url, "%s/red8/payees.html", O_A);
    snap_result r = {0};
    CHECK_INT(0, snap_open(x.a, url, false, &r));
    snap_result_free(&r);
    snap_elems e = {0};
    CHECK_INT(0, snap_elements(x.a, &e, &r));
    snap_result_free(&r);
    const snap_elem *b = NULL;
    for (size_t i = 0; i < e.n; i++)
        if (e.v[i].name && strcmp(e.v[i].name, "Select") == 0 && e.v[i].rowtext &&
            strstr(e.v[i].rowtext, "Alice"))
            b = &e.v[i];
    replay_err err = {0};
    replay_rec *rec = CHECK(b != NULL) ? replay_rec_open(path, "0.1.0", "pay", &err) : NULL;
    if (rec) {
        replay_act op = {.op = "open", .url = url};
        snap_step_facts fo = {.origin = O_A, .url = url};
        CHECK_INT(0, replay_rec_action(rec, &op, &fo, "{\"ok\":true}", &err));
        CHECK_INT(0, replay_rec_look(rec, x.a, b->ref));
        replay_act cl = {.op = "click"};
        snap_step_facts fc = {.has_target = true, .role = "button", .name = b->name,
                              .row = b->rowtext, .origin = O_A, .url = url};
        CHECK_INT(0, replay_rec_action(rec, &cl, &fc, "{\"ok\":true}", &err));
        replay_rec_close(rec);
    }
    snap_elements_free(&e);
    char *bytes = test_read_file(path, NULL);
    const char *at = bytes ? strstr(bytes, "payees.html") : NULL;
    if (CHECK(at != NULL)) {
        base_buf bb = {0};
        base_buf_put(&bb, bytes, (size_t)(at - bytes) + 11);
        base_buf_puts(&bb, "?v=2");
        base_buf_puts(&bb, at + 11);
        replay_trail *t = bb.s ? replay_trail_parse(bb.s, bb.len, &err) : NULL;
        base_buf_free(&bb);
        char *json = NULL;
        replay_opts ro = {0};
        int st = t ? replay_run(x.a, x.g, t, &ro, &json) : -1;
        replay_trail_free(t);
        snap_query q = {.text = true};
        memset(&r, 0, sizeof r);
        CHECK_INT(0, snap_observe(x.a, &q, &r));
        if (!CHECK(st == REPLAY_RUN_DIVERGED && r.text && !strstr(r.text, "selected payee")))
            test_fail_detail("the replay chose another payee (status %d): %.300s\ntrail: "
                             "%.600s\npage: %.300s", st, json ? json : "", bytes,
                             r.text ? r.text : "");
        snap_result_free(&r);
        free(json);
    }
    free(bytes);
    test_rm_rf(dir);
    testlib_rig_down(&x);
}

static const test_case TESTS[] = {
    {"trail_row_secret", t_trail_row_secret},
    {"trail_key_other", t_trail_key_other},
    {"replay_done", t_replay_done},
    {"replay_lookalike_diverges", t_replay_lookalike_diverges},
    {"replay_label_diverges", t_replay_label_diverges},
    {"replay_redacted_open", t_replay_redacted_open},
    {"replay_effect_diverges", t_replay_effect_diverges},
    {"replay_refused_up_front", t_replay_refused_up_front},
    {"replay_gate_stops", t_replay_gate_stops},
    {"cli_replay_exit", t_cli_replay_exit},
    {"recorded_mcp_replays", t_recorded_mcp_replays},
    {"replay_from", t_replay_from},
    {"replay_dry_run", t_replay_dry_run},
    {"mcp_replay_update", t_mcp_replay_update},
    {"replay_effects_checked", t_replay_effects_checked},
    {"replay_value_normalised", t_replay_value_normalised},
    {"red4_var_injection", t_red4_var_injection},
    {"red4_replay_result_framing", t_red4_replay_result_framing},
    {"red4_row_digits", t_red4_row_digits},
    {"red4_press_step_replays", t_red4_press_step_replays},
    {"red5_row_lookalikes", t_red5_row_lookalikes},
    {"red7_param_digit_row", t_red7_param_digit_row},
    {"red7_number_before_price", t_red7_number_before_price},
    {"target_params_replay", t_target_params_replay},
    {"red8_row_id_wildcard", t_red8_row_id_wildcard},
    {0},
};

int main(int argc, char **argv)
{
    if (testlib_world_up(&world, "replay-play", host_args, false) != 0)
        return 1;
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
