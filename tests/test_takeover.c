/*
 * test_takeover.c — the live view wired to the agent's browser (issue 15,
 * points 2, 4 and 5): the person's input through the one chokepoint only
 * while the human holds control (snap_human_input, sink.c's 'human'
 * permit), the agent's calls refused then, and the screencast of the
 * current tab (snap_cast_*).
 */
#include "base/base.h"
#include "cdp/cdp.h"
#include "gate/gate.h"
#include "json/json.h"
#include "snapshot/snapshot.h"
#include "snapshot/snap_int.h"
#include "tests/harness.h"
#include "tests/testlib.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static testlib_world world;
static const char *host_args[] = {FIXTURE_HOST_RULES, NULL};
static char O_BANK[64];
static const char *ORIGINS[1];

static bool rig_up(testlib_rig *x)
{
    gate_grant g;
    memset(&g, 0, sizeof g);
    ORIGINS[0] = O_BANK;
    g.task = "takeover test";
    g.principal = "test";
    g.origins = ORIGINS;
    g.norigins = 1;
    snap_opts o = {0};
    o.timeout_ms = 10000;
    return testlib_rig_up(x, &world, &g, NULL, &o);
}

/* Evaluate expr in the current tab (the test's own look, not the agent's
 * sink): the value as a string (new; "" when none). */
static char *page_eval(snap_agent *a, const char *expr)
{
    snap_tab *t = snap_tab_current(a);
    char *p = t ? testlib_eval_params(expr, "returnByValue") : NULL;
    cdp_reply rep = {0};
    cdp_err e = {0};
    char *out = NULL;
    if (p && cdp_call(a->c, t->session, "Runtime.evaluate", p, 10000, &rep, &e) == 0) {
        const json_val *v = json_get(json_get(rep.result, "result"), "value");
        const char *s = json_get_str(json_get(rep.result, "result"), "value");
        out = s ? strdup(s) : v ? json_write(v, NULL) : NULL;
    }
    cdp_reply_free(&rep);
    free(p);
    return out ? out : calloc(1, 1);
}

/* CHECK that expr comes to want in the current tab within 10 s (input is
 * sent without waiting: the page gets it in order, a little later). */
static void eval_until(snap_agent *a, const char *expr, const char *want)
{
    char *v = NULL;
    for (int k = 0; k < 500; k++) {
        free(v);
        v = page_eval(a, expr);
        if (strcmp(v, want) == 0)
            break;
        cdp_err e;
        cdp_pump(a->c, 20, &e);
    }
    if (!CHECK_STR(want, v))
        test_fail_detail("%s\n", expr);
    free(v);
}

static bool open_login(testlib_rig *x)
{
    char url[200];
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/login.html");
    snap_result r = {0};
    int rc = snap_open(x->a, url, false, &r);
    if (!CHECK_INT(0, rc))
        test_fail_detail("%s\n", r.text ? r.text : "");
    snap_result_free(&r);
    return rc == 0;
}

/* Issue 15, point 4: the person's input reaches the tab only while the
 * human holds control, through the sink's 'human' permit; the agent's
 * calls are refused then; each change of control moves the epoch. */
static void t_human_input_lock(void)
{
    testlib_rig x;
    if (!rig_up(&x) || !open_login(&x)) {
        testlib_rig_down(&x);
        return;
    }
    char why[300];
    free(page_eval(x.a, "document.getElementById('user').focus(),''"));
    /* the agent holds control: the person's input is refused, twice over */
    CHECK_INT(SNAP_EDENIED, snap_human_input(x.a, "Input.insertText", "{\"text\":\"q\"}",
                                             why, sizeof why));
    CHECK_HAS(why, "the human does not hold control");
    snap_tab *t = snap_tab_current(x.a);
    cdp_err e = {0};
    snap_permit_begin(x.a, "human");
    CHECK(snap_cdp_call(x.a, t->session, "Input.insertText", "{\"text\":\"q\"}", 5000, NULL,
                        &e) != 0);
    snap_permit_end(x.a);
    CHECK_HAS(e.msg, "refused at the sink");
    uint64_t e0 = gate_epoch(x.g);
    gate_set_mode(x.g, GATE_MODE_PAUSED, "test");
    CHECK_INT(SNAP_EDENIED, snap_human_input(x.a, "Input.insertText", "{\"text\":\"q\"}",
                                             why, sizeof why));
    /* the human holds control: input goes through; the agent is refused */
    gate_set_mode(x.g, GATE_MODE_HUMAN, "test");
    uint64_t e1 = gate_epoch(x.g);
    CHECK(e1 > e0);
    CHECK_INT(SNAP_EINVAL, snap_human_input(x.a, "Page.navigate", "{\"url\":\"about:blank\"}",
                                            why, sizeof why));
    CHECK_INT(0, snap_human_input(x.a, "Input.insertText", "{\"text\":\"Al!ce.\"}", why,
                                  sizeof why));
    CHECK_INT(0, snap_human_input(x.a, "Input.dispatchKeyEvent", "{\"type\":\"rawKeyDown\","
                                  "\"key\":\"Backspace\",\"code\":\"Backspace\","
                                  "\"windowsVirtualKeyCode\":8}", why, sizeof why));
    eval_until(x.a, "document.getElementById('user').value", "Al!ce");
    snap_result r = {0};
    CHECK(snap_observe(x.a, NULL, &r) < 0);
    CHECK_HAS(r.text, "control is with the human");
    snap_result_free(&r);
    memset(&r, 0, sizeof r);
    CHECK(snap_press(x.a, "Enter", NULL, &r) < 0);
    CHECK_HAS(r.text, "control is with the human");
    snap_result_free(&r);
    /* handed back: the person's input is refused again */
    gate_set_mode(x.g, GATE_MODE_AGENT, "test");
    CHECK(gate_epoch(x.g) > e1);
    CHECK_INT(SNAP_EDENIED, snap_human_input(x.a, "Input.insertText", "{\"text\":\"z\"}",
                                             why, sizeof why));
    eval_until(x.a, "document.getElementById('user').value", "Al!ce");
    testlib_rig_down(&x);
}

static const test_case TESTS[] = {
    {"human_input_lock", t_human_input_lock},
    {0},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (testlib_world_up(&world, "takeover", host_args, false) != 0)
        return 1;
    testlib_world_origin(&world, O_BANK, sizeof O_BANK, "bank.test");
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
