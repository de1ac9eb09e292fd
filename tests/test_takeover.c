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

typedef struct {
    int n, cast, recaptured;
    size_t bytes;
    bool jpeg;              /* every frame was a JPEG (FF D8) */
    int w, h, tab;
    int cast_w, cast_h;     /* the largest screencast frame */
} frames_seen;

static void on_frame(void *ud, const uint8_t *jpeg, size_t len, const snap_cast_meta *m)
{
    frames_seen *f = ud;
    f->n++;
    f->bytes = len;
    f->jpeg = (f->n == 1 || f->jpeg) && len > 4 && jpeg[0] == 0xff && jpeg[1] == 0xd8;
    f->w = m->width;
    f->h = m->height;
    f->tab = m->tab;
    if (m->recaptured) {
        f->recaptured++;
        return;
    }
    f->cast++;
    f->cast_w = m->width > f->cast_w ? m->width : f->cast_w;
    f->cast_h = m->height > f->cast_h ? m->height : f->cast_h;
}

/* Pump the browser and step the cast until *count reaches n and the
 * last frame shows tab (0: any) (20 s). */
static bool cast_until(snap_agent *a, snap_cast *c, const frames_seen *f, const int *count,
                       int n, int tab)
{
    int64_t end = testlib_now_ms() + 20000;
    cdp_err e;
    while ((*count < n || (tab && f->tab != tab)) && testlib_now_ms() < end) {
        cdp_pump(a->c, 20, &e);
        snap_cast_step(c);
    }
    return *count >= n && (!tab || f->tab == tab);
}

/* Issue 15, point 2: the screencast of the current tab: JPEG frames (the
 * bytes, no base64) within the cast's size, frames still coming on a page
 * that does not change (re-captured), a point in frame pixels scaled to
 * the page's CSS pixels, and the cast following a new current tab. */
static void t_cast_frames(void)
{
    testlib_rig x;
    if (!rig_up(&x) || !open_login(&x)) {
        testlib_rig_down(&x);
        return;
    }
    frames_seen f = {0};
    snap_cast_opts o = {.max_w = 400, .max_h = 300, .frame = on_frame, .ud = &f};
    char why[200];
    snap_cast *c = snap_cast_start(x.a, &o, why, sizeof why);
    if (!CHECK(c != NULL)) {
        test_fail_detail("%s\n", why);
        testlib_rig_down(&x);
        return;
    }
    int t1 = snap_tab_current(x.a)->id;
    CHECK(cast_until(x.a, c, &f, &f.cast, 1, t1));
    CHECK(f.jpeg);
    CHECK(f.cast_w > 0 && f.cast_w <= 400 && f.cast_h > 0 && f.cast_h <= 300);
    CHECK_INT(t1, f.tab);
    const snap_cast_meta *m = snap_cast_last(c);
    double px = 0, py = 0;
    CHECK(m && !m->recaptured && m->device_w > m->width);  /* the frame is scaled down */
    CHECK_INT(0, snap_cast_point(c, m->width / 2.0, m->height / 2.0, &px, &py));
    char *vw = page_eval(x.a, "String(innerWidth)"), *vh = page_eval(x.a, "String(innerHeight)");
    if (!CHECK(px > atof(vw) / 2 - 4 && px < atof(vw) / 2 + 4 && py > atof(vh) / 2 - 4 &&
               py < atof(vh) / 2 + 4))
        test_fail_detail("frame %dx%d centre -> %.1f,%.1f; viewport %s x %s\n", f.w, f.h,
                         px, py, vw, vh);
    free(vw);
    free(vh);
    /* a still page: frames keep coming (a re-capture about every second) */
    CHECK(cast_until(x.a, c, &f, &f.recaptured, f.recaptured + 2, 0));
    CHECK(f.jpeg);
    /* a new tab becomes current: the cast follows it */
    char url[200];
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/signedout.html");
    snap_result r = {0};
    CHECK_INT(0, snap_open(x.a, url, true, &r));
    snap_result_free(&r);
    int t2 = snap_tab_current(x.a)->id;
    CHECK(t2 != t1);
    CHECK(cast_until(x.a, c, &f, &f.n, f.n + 1, t2));
    snap_cast_stop(c);
    testlib_rig_down(&x);
}

/* A JPEG's size from its SOF marker; what is no JPEG is refused. */
static void t_cast_jpeg_size(void)
{
    static const uint8_t ok[] = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x4a, 0x46, 0xff, 0xc0,
                                 0x00, 0x0b, 0x08, 0x02, 0xd0, 0x05, 0x00, 0x01, 0x01, 0x11,
                                 0x00};
    int w = 0, h = 0;
    CHECK_INT(0, snap_cast_jpeg_size(ok, sizeof ok, &w, &h));
    CHECK_INT(1280, w);
    CHECK_INT(720, h);
    CHECK_INT(-1, snap_cast_jpeg_size(ok, sizeof ok - 10, &w, &h));
    CHECK_INT(-1, snap_cast_jpeg_size(ok + 1, sizeof ok - 1, &w, &h));
    static const uint8_t sos[] = {0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 0xff, 0xc0};
    CHECK_INT(-1, snap_cast_jpeg_size(sos, sizeof sos, &w, &h));
}

static const test_case TESTS[] = {
    {"human_input_lock", t_human_input_lock},
    {"cast_frames", t_cast_frames},
    {"cast_jpeg_size", t_cast_jpeg_size},
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
