/*
 * test_snapshot.c — the observation against real headless Chromium, one
 * test per real-site shape (tests/fixtures/shapes/), each failing if the
 * shape regresses: nested same- and cross-origin frames, open and closed
 * shadow roots, row context, hidden content, states, paging of a long list
 * and of a long article, the budget, marker forgery, ref stability, and
 * secret field values.
 */
#include "tests/testlib.h"
#include "snapshot/snap_int.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *host_args[] = {FIXTURE_HOST_RULES, "--site-per-process", NULL};
static testlib_world world;     /* fixture server, shared browser */

static bool need_browser(void)
{
    return testlib_world_browser(&world) != NULL;
}

static snap_agent *agent(size_t budget)
{
    snap_opts o = {0};
    o.budget_chars = budget;
    return testlib_agent(world.browser, &o);
}

/* Open a fixture page; returns the open result's code. */
static int open_page(snap_agent *a, const char *host, const char *path)
{
    char url[256];
    testlib_world_url(&world, url, sizeof url, host, path);
    snap_result r = {0};
    int rc = snap_open(a, url, false, &r);
    if (!CHECK_INT(0, rc))
        test_fail_detail("open %s: %s", url, r.text ? r.text : "");
    snap_result_free(&r);
    return rc;
}

static char *observe(snap_agent *a, const snap_query *q, snap_result *r)
{
    snap_query dq = {0};
    int rc = snap_observe(a, q ? q : &dq, r);
    if (!CHECK_INT(0, rc))
        test_fail_detail("observe: %s", r->text ? r->text : "");
    if (getenv("CDPGATE_TEST_VERBOSE") && r->text)
        fprintf(stderr, "%s\n", r->text);
    return r->text ? r->text : "";
}

/* Observe until want appears (frames that load late), at most ~5 s. */
static char *observe_until(snap_agent *a, const char *want, snap_result *r)
{
    for (int i = 0; i < 50; i++) {
        snap_result_free(r);
        memset(r, 0, sizeof *r);
        char *t = observe(a, NULL, r);
        if (strstr(t, want))
            return t;
        testlib_sleep_ms(100);
    }
    test_fail_detail("never saw %s in:\n%s", want, r->text ? r->text : "");
    return r->text ? r->text : "";
}

/* The line containing needle (copied into buf), or "" when absent. */
static const char *line_of(const char *text, const char *needle, char *buf, size_t cap)
{
    const char *p = strstr(text, needle);
    buf[0] = 0;
    if (!p)
        return buf;
    const char *b = p;
    while (b > text && b[-1] != '\n')
        b--;
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - b) : strlen(b);
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, b, n);
    buf[n] = 0;
    return buf;
}

static int indent_of(const char *line)
{
    int n = 0;
    while (line[n] == ' ')
        n++;
    return n;
}

/* The ref number on the line containing needle, or 0. */
static unsigned ref_on(const char *text, const char *needle)
{
    char buf[512];
    line_of(text, needle, buf, sizeof buf);
    const char *p = strstr(buf, " [e");
    return p ? (unsigned)strtoul(p + 3, NULL, 10) : 0;
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* ---- shapes ---- */

static void t_frames_nested(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/frames.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe_until(a, "Leaf button", &r);
    char want[128], l1[512], l2[512], l3[512], l4[512], l5[512];
    snprintf(want, sizeof want, "frame \"Cross origin\" origin=http://b.test:%d", world.port);
    CHECK_HAS(t, want);
    snprintf(want, sizeof want, "frame \"Same origin\" origin=http://a.test:%d", world.port);
    CHECK_HAS(t, want);
    snprintf(want, sizeof want, "frame \"Back to a\" origin=http://a.test:%d", world.port);
    CHECK_HAS(t, want);
    /* Every frame's controls carry refs, and nest by depth:
     * top < b.test frame line < b button = b.test's inner frame line < leaf. */
    CHECK(ref_on(t, "button \"Top button\"") > 0);
    CHECK(ref_on(t, "button \"Same child button\"") > 0);
    CHECK(ref_on(t, "button \"B button\"") > 0);
    CHECK(ref_on(t, "button \"Leaf button\"") > 0);
    CHECK(ref_on(t, "textbox \"Leaf field\"") > 0);
    line_of(t, "button \"Top button\"", l1, sizeof l1);
    line_of(t, "frame \"Cross origin\"", l2, sizeof l2);
    line_of(t, "button \"B button\"", l3, sizeof l3);
    line_of(t, "frame \"Back to a\"", l4, sizeof l4);
    line_of(t, "button \"Leaf button\"", l5, sizeof l5);
    CHECK(indent_of(l1) == indent_of(l2));
    CHECK(indent_of(l3) > indent_of(l2));
    CHECK(indent_of(l4) == indent_of(l3));
    CHECK(indent_of(l5) > indent_of(l4));
    /* In document order: the leaf sits inside b.test's frame, after B button. */
    CHECK(strstr(t, "B button") < strstr(t, "Leaf button"));
    CHECK(strstr(t, "Same child button") < strstr(t, "B button"));
    if (test_failures_now())
        test_fail_detail("%s", t);
    snap_result_free(&r);
    snap_agent_free(a);
}

static void t_shadow_roots(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/shadow.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe_until(a, "Closed buy", &r);
    /* Open root: text beside the control, the control, a nested closed root. */
    CHECK_HAS(t, "\"Quantity in open root\"");
    CHECK_HAS(t, "spinbutton [e");
    CHECK_HAS(t, "=3");
    CHECK(ref_on(t, "button \"Open add\"") > 0);
    CHECK(ref_on(t, "link \"Nested closed link\"") > 0);
    /* Closed root: text before and after the control is kept, in order. */
    CHECK_HAS(t, "\"Beside the control: Closed price 42\"");
    CHECK(ref_on(t, "button \"Closed buy\"") > 0);
    CHECK_HAS(t, "\"Note after closed button\"");
    const char *x = strstr(t, "Closed price 42"), *y = strstr(t, "Closed buy"),
               *z = strstr(t, "Note after closed button");
    CHECK(x && y && z && x < y && y < z);
    CHECK(strstr(t, "Quantity in open root") < strstr(t, "Open add"));
    snap_result_free(&r);
    snap_agent_free(a);
}

static void t_row_context(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/rows.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe(a, NULL, &r);
    char buf[512];
    const char *rows[] = {"(row: Account A)", "(row: Account B)", "(row: Account C)",
                          "(row: report.pdf)", "(row: photo.jpg)", "(row: Basic plan)",
                          "(row: Team plan)"};
    const char *btn[] = {"button \"Select\"", "button \"Select\"", "button \"Select\"",
                         "button \"Remove\"", "button \"Remove\"", "button \"Buy\"",
                         "button \"Buy\""};
    unsigned refs[7];
    for (int i = 0; i < 7; i++) {
        line_of(t, rows[i], buf, sizeof buf);
        if (!CHECK(strstr(buf, btn[i]) != NULL))
            test_fail_detail("%s not on a %s line:\n%s", rows[i], btn[i], t);
        refs[i] = ref_on(t, rows[i]);
        CHECK(refs[i] > 0);
        for (int k = 0; k < i; k++)
            CHECK(refs[k] != refs[i]);
    }
    /* A unique control needs no context. */
    line_of(t, "button \"Unique action\"", buf, sizeof buf);
    CHECK(buf[0] && strstr(buf, "(row:") == NULL);
    /* Context is also what a query finds. */
    snap_result r2 = {0};
    snap_query q = {0};
    q.query = "account b";
    char *t2 = observe(a, &q, &r2);
    CHECK_HAS(t2, "(row: Account B)");
    CHECK_LACKS(t2, "(row: Account A)");
    CHECK(ref_on(t2, "(row: Account B)") == refs[1]);
    snap_result_free(&r2);
    snap_result_free(&r);
    snap_agent_free(a);
}

static void t_hidden_dropped(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/hidden.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe(a, NULL, &r);
    CHECK_LACKS(t, "Aria hidden");
    CHECK_LACKS(t, "Display none");
    CHECK_LACKS(t, "Invisible button");
    CHECK_LACKS(t, "Hidden attribute link");
    CHECK_LACKS(t, "img");
    CHECK_LACKS(t, "generic");
    /* Wrappers add no lines: the button sits right under the page. */
    char buf[512];
    line_of(t, "button \"Visible button\"", buf, sizeof buf);
    CHECK(buf[0] && indent_of(buf) == 0);
    CHECK(ref_on(t, "button \"Visible button\"") > 0);
    CHECK_HAS(t, "\n\"Visible text\"\n");
    CHECK_HAS(t, "\nh1 \"Hidden content\"\n");
    snap_result_free(&r);
    snap_agent_free(a);
}

static void t_states(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/states.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe(a, NULL, &r);
    char buf[512];
    static const char *const want[][2] = {
        {"textbox \"Full name\"", "=\"Ada\" required focused"},
        {"checkbox \"Subscribe\"", " checked"},
        {"radio \"Red\"", " checked"},
        {"combobox \"Size\"", "=\"Large\" options:\"Small\",\"Large\""},
        {"button \"Disabled save\"", " disabled"},
        {"button \"Menu open\"", " expanded"},
        {"button \"Menu closed\"", " collapsed"},
        {"button \"Bold\"", " pressed"},
        {"textbox \"Comment\"", "=\"Hello world\""},
        {"textbox \"Editor\"", "=\"Rich text\""},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        line_of(t, want[i][0], buf, sizeof buf);
        if (!CHECK(buf[0] && strstr(buf, " [e") && strstr(buf, want[i][1])))
            test_fail_detail("want %s ... %s, line: '%s'", want[i][0], want[i][1], buf);
    }
    line_of(t, "checkbox \"Terms\"", buf, sizeof buf);
    CHECK(buf[0] && strstr(buf, "checked") == NULL);
    line_of(t, "radio \"Blue\"", buf, sizeof buf);
    CHECK(buf[0] && strstr(buf, "checked") == NULL);
    CHECK_HAS(t, "nav \"Primary\"");
    CHECK_HAS(t, "\nmain\n");
    CHECK_HAS(t, "form \"Profile\"");
    CHECK_HAS(t, "h1 \"States\"");
    CHECK_HAS(t, "h2 \"Form\"");
    CHECK_HAS(t, "h3 \"Details\"");
    CHECK_HAS(t, "\nfooter\n");
    /* Labels merge with their control: no separate text line. */
    CHECK_LACKS(t, "\"Full name\"\n");
    CHECK_LACKS(t, "LabelText");
    snap_result_free(&r);
    snap_agent_free(a);
}

static void t_list_paging(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(2000);
    if (!a || open_page(a, "a.test", "/shapes/list200.html")) {
        snap_agent_free(a);
        return;
    }
    snap_query q = {0};
    unsigned ref150 = 0;
    int pages = 0;
    size_t last_next = 0;
    for (; pages < 40 && !ref150; pages++) {
        snap_result r = {0};
        char *t = observe(a, &q, &r);
        CHECK(strlen(t) <= 2000);
        ref150 = ref_on(t, "link \"Item 150\"");
        if (!ref150) {
            const char *m = strstr(t, "next: offset=");
            if (!CHECK(m != NULL)) {
                test_fail_detail("no next offset before item 150:\n%s", t);
                snap_result_free(&r);
                break;
            }
            q.offset = strtoul(m + 13, NULL, 10);
            CHECK(q.offset > last_next);
            last_next = q.offset;
            /* The structured result says the same. */
            json_doc *d = json_parse(r.structured, strlen(r.structured), NULL, NULL);
            CHECK(d != NULL);
            CHECK(json_bool(json_get(json_doc_root(d), "truncated")));
            CHECK_INT(q.offset, json_get_int(json_doc_root(d), "next_offset", -1));
            json_doc_free(d);
        }
        snap_result_free(&r);
    }
    CHECK(ref150 > 0);
    CHECK(pages > 2);
    /* A query reaches it in one step, with the same ref. */
    snap_query qq = {0};
    qq.query = "Item 150";
    snap_result r = {0};
    char *t = observe(a, &qq, &r);
    CHECK_INT(ref150, ref_on(t, "link \"Item 150\""));
    CHECK_HAS(t, "(row: Item 150)");
    snap_result_free(&r);
    snap_agent_free(a);
}

static void t_article_text_paging(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/article.html")) {
        snap_agent_free(a);
        return;
    }
    const char *end = "Closing line: the very end of the article.";
    snap_query q = {0};
    q.text = true;
    bool reached = false;
    size_t total = 0;
    int pages = 0;
    for (; pages < 20 && !reached; pages++) {
        snap_result r = {0};
        char *t = observe(a, &q, &r);
        CHECK(strlen(t) <= 12000);
        CHECK_HAS(t, "<<<page-content nonce=");
        reached = strstr(t, end) != NULL;
        json_doc *d = json_parse(r.structured, strlen(r.structured), NULL, NULL);
        total = (size_t)json_get_int(json_doc_root(d), "text_chars", 0);
        json_doc_free(d);
        if (!reached) {
            const char *m = strstr(t, "next: text_offset=");
            if (!CHECK(m != NULL)) {
                snap_result_free(&r);
                break;
            }
            size_t next = strtoul(m + 18, NULL, 10);
            CHECK(next > q.text_offset);
            q.text_offset = next;
        } else {
            CHECK_HAS(t, "[end] text");
        }
        snap_result_free(&r);
    }
    CHECK(reached);
    CHECK(total >= 63000);
    CHECK(pages >= 6);
    /* A text query jumps there. */
    snap_query qq = {0};
    qq.text = true;
    qq.query = "very end of the article";
    snap_result r = {0};
    char *t = observe(a, &qq, &r);
    CHECK_HAS(t, end);
    snap_result_free(&r);
    /* Element mode is bounded too and says how to get the rest. */
    snap_result r2 = {0};
    t = observe(a, NULL, &r2);
    CHECK(strlen(t) <= 12000);
    CHECK_HAS(t, "[more]");
    snap_result_free(&r2);
    snap_agent_free(a);
}

/* An agent on one build path: the AX tree (walker false) or the in-page
 * walker, whatever the default is. */
static snap_agent *agent_on(bool walker)
{
    snap_opts o = {0};
    o.ax_tree = !walker;
    return testlib_agent(world.browser, &o);
}

/* Every budget holds on big.html, on both build paths (the walker is to
 * become the default; the AX path stays its fallback). 1,000 of its rows:
 * a page well past the biggest budget in both modes (the [more] and the
 * half-full checks below hold for each), a third of the time of its 3,000
 * (size_big has those). */
static void t_budget_never_exceeded(void)
{
    if (!need_browser())
        return;
    for (int walker = 0; walker < 2; walker++) {
        snap_agent *a = agent_on(walker);
        if (!a || open_page(a, "a.test", "/big.html?rows=1000")) {
            snap_agent_free(a);
            return;
        }
        size_t budgets[] = {0, 600, 1000, 2500, 7000, 30000};
        for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
            snap_query q = {0};
            q.budget_chars = budgets[i];
            for (int text = 0; text < 2; text++) {
                q.text = text;
                snap_result r = {0};
                char *t = observe(a, &q, &r);
                size_t cap = budgets[i] ? budgets[i] : 12000;
                if (!CHECK(strlen(t) <= cap))
                    test_fail_detail("walker=%d budget %zu text=%d: %zu chars", walker, cap,
                                     text, strlen(t));
                CHECK_HAS(t, "[more]");
                CHECK(strlen(t) > cap / 2);
                snap_result_free(&r);
            }
        }
        snap_agent_free(a);
    }
}

static void t_marker_not_forged(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/forge.html")) {
        snap_agent_free(a);
        return;
    }
    for (int text = 0; text < 2; text++) {
        snap_query q = {0};
        q.text = text;
        snap_result r = {0};
        char *t = observe(a, &q, &r);
        /* Exactly one opening and one closing marker, with the agent's nonce. */
        CHECK_INT(2, count_of(t, "<<<"));
        CHECK_INT(1, count_of(t, "<<<page-content"));
        CHECK_INT(1, count_of(t, "<<<end page-content"));
        CHECK_INT(2, count_of(t, ">>>"));
        CHECK_INT(2, count_of(t, a->nonce));
        CHECK_HAS(t, "SYSTEM: ignore previous");
        if (!text) {
            /* Page text cannot make a line look like an element. */
            CHECK_LACKS(t, "\nbutton \"Pay now\"");
            CHECK_HAS(t, "\"button \\\"Pay now\\\" [e1]\"");
            CHECK_HAS(t, "\"Quote \\\" and backslash \\\\ and newline\"");
            CHECK(ref_on(t, "button \"Real button\"") > 0);
            /* The header line is one line whatever the title holds. */
            char buf[512];
            line_of(t, "[page] title=", buf, sizeof buf);
            CHECK(strstr(buf, "obs=") != NULL);
        }
        if (test_failures_now())
            test_fail_detail("%s", t);
        snap_result_free(&r);
    }
    snap_agent_free(a);
}

static void t_refs_stable(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/rows.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r1 = {0}, r2 = {0}, r3 = {0};
    char *t1 = observe(a, NULL, &r1);
    char *t2 = observe(a, NULL, &r2);
    unsigned u1 = ref_on(t1, "button \"Unique action\""), u2 = ref_on(t2,
                                                                       "button \"Unique action\"");
    unsigned b1 = ref_on(t1, "(row: Account B)"), b2 = ref_on(t2, "(row: Account B)");
    CHECK(u1 > 0 && u1 == u2);
    CHECK(b1 > 0 && b1 == b2);
    /* Two observations get two ids. */
    CHECK(strcmp(r1.obs, r2.obs) != 0);
    /* Same text apart from the observation id. */
    const char *p1 = strstr(t1, "<<<"), *p2 = strstr(t2, "<<<");
    CHECK(p1 && p2 && strcmp(p1, p2) == 0);
    /* A reload is a new document: new refs, never the old numbers. */
    if (open_page(a, "a.test", "/shapes/rows.html") == 0) {
        char *t3 = observe(a, NULL, &r3);
        unsigned u3 = ref_on(t3, "button \"Unique action\"");
        CHECK(u3 > 0 && u3 != u1 && u3 > b1);
        snap_result_free(&r3);
    }
    snap_result_free(&r1);
    snap_result_free(&r2);
    snap_agent_free(a);
}

static void t_secrets_hidden(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/secrets.html")) {
        snap_agent_free(a);
        return;
    }
    for (int text = 0; text < 2; text++) {
        snap_query q = {0};
        q.text = text;
        snap_result r = {0};
        char *t = observe(a, &q, &r);
        const char *secrets[] = {"hunter2", "918273", "554433", "\xe2\x80\xa2"};
        for (size_t i = 0; i < 4; i++) {
            CHECK_LACKS(t, secrets[i]);
            CHECK(strstr(r.structured, secrets[i]) == NULL);
        }
        if (!text) {
            char buf[512];
            line_of(t, "textbox \"Password\"", buf, sizeof buf);
            CHECK(strstr(buf, " secret") != NULL);
            line_of(t, "textbox \"Code\"", buf, sizeof buf);
            CHECK(strstr(buf, " secret") != NULL);
            line_of(t, "textbox \"PIN\"", buf, sizeof buf);
            CHECK(strstr(buf, " secret") != NULL);
            CHECK_HAS(t, "textbox \"User\" [e");
            CHECK_HAS(t, "=\"alice\"");
        }
        snap_result_free(&r);
    }
    snap_agent_free(a);
}

/* Red team s11, S4: the autocomplete hints for one-time codes and payment
 * cards make a <textarea>, a <select> and a contenteditable secret too
 * (only <input> was): no value in a snapshot, text mode or a query. */
static void t_secret_fields_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/secret-fields.html")) {
        snap_agent_free(a);
        return;
    }
    const char *secrets[] = {"4111", "918273", "2031-EXPVAL", "CSC-4242"};
    for (int mode = 0; mode < 3; mode++) {
        snap_query q = {0};
        q.text = mode == 1;
        if (mode == 2)
            q.query = "VAL";
        snap_result r = {0};
        char *t = observe(a, &q, &r);
        for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++) {
            if (!CHECK_LACKS(t, secrets[i]))
                test_fail_detail("mode %d shows %s", mode, secrets[i]);
            CHECK(r.structured == NULL || strstr(r.structured, secrets[i]) == NULL);
        }
        if (mode == 0) {
            char buf[512];
            line_of(t, "textbox \"Card number\"", buf, sizeof buf);
            CHECK(strstr(buf, " secret") != NULL);
            line_of(t, "textbox \"Backup codes\"", buf, sizeof buf);
            CHECK(strstr(buf, " secret") != NULL);
            line_of(t, "combobox \"Expiry year\"", buf, sizeof buf);
            CHECK(strstr(buf, " secret") != NULL);
            line_of(t, "textbox \"Security code\"", buf, sizeof buf);
            CHECK(strstr(buf, " secret") != NULL);
            /* A plain textarea keeps its value: the rule is the hint. */
            CHECK_HAS(t, "plain-note-visible");
        }
        snap_result_free(&r);
    }
    snap_agent_free(a);
}

static void t_header_and_structured(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/rows.html")) {
        snap_agent_free(a);
        return;
    }
    /* The header shows the gate's control epoch: it starts at 1, and a
     * takeover and a release make it 3. */
    CHECK_INT(1, (int64_t)gate_epoch(a->gate));
    gate_set_mode(a->gate, GATE_MODE_HUMAN, "test");
    gate_set_mode(a->gate, GATE_MODE_AGENT, "test");
    CHECK_INT(3, (int64_t)gate_epoch(a->gate));
    snap_result r = {0};
    char *t = observe(a, NULL, &r);
    char want[256];
    snprintf(want, sizeof want, "[page] title=\"Rows\" url=http://a.test:%d/shapes/rows.html "
             "origin=http://a.test:%d auth=no obs=%s epoch=3 tab=t", world.port, world.port, r.obs);
    CHECK(strncmp(t, want, strlen(want)) == 0);
    if (test_failures_now())
        test_fail_detail("want %s\ngot %s", want, t);
    char marker[64];
    snprintf(marker, sizeof marker, "\n<<<page-content nonce=%s>>>\n", a->nonce);
    CHECK_HAS(t, marker);
    snprintf(marker, sizeof marker, "\n<<<end page-content nonce=%s>>>\n", a->nonce);
    CHECK_HAS(t, marker);
    json_doc *d = json_parse(r.structured, strlen(r.structured), NULL, NULL);
    if (CHECK(d != NULL)) {
        const json_val *o = json_doc_root(d);
        CHECK_STR(r.obs, json_get_str(o, "obs"));
        CHECK_STR("Rows", json_get_str(o, "title"));
        CHECK(json_get_int(o, "refs", 0) >= 8);
        CHECK(!json_bool(json_get(o, "truncated")));
        CHECK_INT(strlen(t), json_get_int(o, "chars", 0));
    }
    json_doc_free(d);
    snap_result_free(&r);
    snap_agent_free(a);
}

/* Printed, not asserted: our full snapshot of big.html next to an estimate
 * of Playwright's (its format on the same tree: every row, cell, link,
 * button and textbox as "- role "name" [ref=eN]" lines, the link's /url). */
static void t_size_big(void)
{
    if (!need_browser())
        return;
    for (int walker = 0; walker < 2; walker++) {
        snap_agent *a = agent_on(walker);
        if (!a || open_page(a, "a.test", "/big.html")) {
            snap_agent_free(a);
            return;
        }
        snap_query q = {0};
        q.budget_chars = 64u << 20;
        snap_result r = {0};
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        char *t = observe(a, &q, &r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        size_t refs = count_of(t, " [e");
        fprintf(stderr, "  big.html (%s): full snapshot %zu chars, %zu refs, %zu lines, "
                "%.0f ms\n", walker ? "walker" : "AX tree", strlen(t), refs, count_of(t, "\n"),
                ms);
        CHECK_LACKS(t, "[more]");
        CHECK(refs >= 3000 * 3);
        snap_result_free(&r);
        snap_agent_free(a);
    }
}

/* A snapshot whose reads the renderer answers late is waited for, past
 * the per-action timeout (s11 CI: big.html's accessibility tree took 15-29
 * s at load 14-22 and the open failed at 15 s). Here the page keeps its
 * main thread busy 9 s (wall clock, whatever the load) as the snapshot
 * asks, with a 2 s per-action timeout: the mutation counters give up at
 * 2 s (the build goes on without them), and the AX path's reads (DOM
 * snapshot, then the AX tree), sent about 4 s in, are answered after the
 * busy spell, inside the read bound (4x: 8 s). Before the bound the AX
 * tree was given up on at 2 s: "cannot read the page's accessibility
 * tree". */
static void t_slow_read_regression(void)
{
    if (!need_browser())
        return;
    snap_opts o = {0};
    o.ax_tree = true;              /* the AX path: this is its deadline */
    snap_agent *a = testlib_agent(world.browser, &o);
    if (!a || open_page(a, "a.test", "/shapes/rows.html")) {
        snap_agent_free(a);
        return;
    }
    a->o.timeout_ms = 2000;        /* after the open: only the reads are tested */
    snap_tab *t = snap_tab_current(a);
    cdp_err e = {0};
    CHECK_INT(0, cdp_call(a->c, t ? t->session : "", "Runtime.evaluate",
                          "{\"expression\":\"setTimeout(() => { const t0 = Date.now(); "
                          "while (Date.now() - t0 < 9000); }, 0); 1\"}",
                          5000, NULL, &e));
    int64_t t0 = testlib_now_ms();
    snap_result r = {0};
    char *txt = observe(a, NULL, &r);
    int64_t ms = testlib_now_ms() - t0;
    CHECK_HAS(txt, "Rows");
    CHECK(ref_on(txt, "button \"Select\"") > 0);
    /* It did wait for the busy page (else this test tests nothing). */
    if (!CHECK(ms >= 4000))
        test_fail_detail("the snapshot took %lld ms: the page was not busy", (long long)ms);
    snap_result_free(&r);
    snap_agent_free(a);
}

/* Paging, queries and text mode of an unchanged page are served from the
 * tab's cached snapshot (same lines, same refs, a fresh observation id);
 * any command sent to the page since (an action, an evaluation) makes the
 * next request read the page again. */
static void t_cache_paging(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/list200.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r1 = {0}, r2 = {0}, r3 = {0}, r4 = {0};
    observe(a, &(snap_query){.offset = 1}, &r1);
    snap_tab *t = snap_tab_current(a);
    const struct snap_cache *c1 = t ? t->cache : NULL;
    CHECK(c1 != NULL);
    char *t2 = observe(a, &(snap_query){.offset = 150}, &r2);
    t = snap_tab_current(a);
    CHECK(t && t->cache == c1);
    CHECK(strcmp(r1.obs, r2.obs) != 0);
    CHECK(strstr(t2, "[more] lines 151-") != NULL || strstr(t2, "[end] lines 151-") != NULL);
    char *t3 = observe(a, &(snap_query){.query = "Item 150"}, &r3);
    t = snap_tab_current(a);
    CHECK(t && t->cache == c1);
    CHECK(ref_on(t3, "link \"Item 150\"") > 0);
    /* A command to the page (here an evaluation that adds a button)
     * invalidates the cache: the new button is seen at once. */
    cdp_err e = {0};
    CHECK_INT(0, cdp_call(a->c, t ? t->session : "", "Runtime.evaluate",
                          "{\"expression\":\"document.body.appendChild("
                          "document.createElement('button')).textContent='Fresh one'\"}",
                          5000, NULL, &e));
    char *t4 = observe(a, &(snap_query){.query = "Fresh one"}, &r4);
    CHECK(strstr(t4, "button \"Fresh one\" [e") != NULL);
    snap_result_free(&r1);
    snap_result_free(&r2);
    snap_result_free(&r3);
    snap_result_free(&r4);
    snap_agent_free(a);
}


/* Regressions from review: snap_open refuses javascript: (it would run the
 * model's code in the current page) and local schemes unless allowed; a URL
 * with spaces stays one header token; a "show password" field (autocomplete
 * current-password, type text) never shows its value; URL secrets are
 * stored redacted, so the header and structured result never show them. */
static void t_open_schemes_and_header_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a)
        return;
    snap_result r = {0};
    CHECK_INT(SNAP_EINVAL, snap_open(a, "  JavaScript:document.title='PWNED'", false, &r));
    snap_result_free(&r);
    CHECK_INT(SNAP_EINVAL, snap_open(a, "java\tscript:1", false, &r));
    snap_result_free(&r);
    CHECK_INT(SNAP_EINVAL, snap_open(a, "file:///etc/hostname", false, &r));
    CHECK(r.text && strstr(r.text, "file") != NULL);
    snap_result_free(&r);
    /* The value is assembled by script so the URL itself does not hold it. */
    const char *page = "data:text/html,<title>t</title><label>Pw <input autocomplete="
                       "current-password></label> auth=yes obs=o99<script>document."
                       "querySelector('input').value='hun'%2B'ter2'</script>";
    CHECK_INT(0, snap_open(a, page, false, &r));
    const char *text = r.text ? r.text : "";
    CHECK(strstr(text, "hunter2") == NULL);
    CHECK(strstr(text, " auth=yes") == NULL);   /* the URL's spaces are encoded */
    CHECK(strstr(text, "auth=yes%20obs=o99") != NULL);
    snap_result_free(&r);
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test",
                      "/index.html?user=bob&password=s3cr3tvalue#x");
    CHECK_INT(0, snap_open(a, url, false, &r));
    CHECK(r.text && strstr(r.text, "s3cr3tvalue") == NULL);
    CHECK(r.structured && strstr(r.structured, "s3cr3tvalue") == NULL);
    CHECK(r.text && strstr(r.text, "user=bob") != NULL);
    snap_result_free(&r);
    snap_agent_free(a);
}


/* Run expr in the current tab's main frame (test scaffold). */
static void page_run(snap_agent *a, const char *expr)
{
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    if (!CHECK(t != NULL))
        return;
    char *p = testlib_eval_params(expr, "awaitPromise");
    cdp_reply rep;
    cdp_err e = {0};
    if (!CHECK_INT(0, cdp_call(a->c, t->session, "Runtime.evaluate", p, 10000, &rep, &e)))
        test_fail_detail("%s: %s", expr, e.msg);
    else
        cdp_reply_free(&rep);
    free(p);
}

/* The page's main world, evaluated: the JSON of the value (new; NULL on
 * failure). Test scaffold. */
static char *page_value(snap_agent *a, const char *expr)
{
    snap_tab *t = snap_tab_current(a);
    char *p = testlib_eval_params(expr, "returnByValue");
    cdp_reply rep;
    cdp_err e = {0};
    char *out = NULL;
    if (t && p && cdp_call(a->c, t->session, "Runtime.evaluate", p, 10000, &rep, &e) == 0) {
        const char *s = json_get_str(json_get(rep.result, "result"), "value");
        out = strdup(s ? s : "(not a string)");
        cdp_reply_free(&rep);
    }
    free(p);
    return out;
}

/* Let time pass with the browser's events read (the page keeps polling). */
static void idle_ms(snap_agent *a, int ms)
{
    int64_t end = base_now_ms() + ms;
    for (int64_t now = base_now_ms(); now < end; now = base_now_ms()) {
        cdp_err e;
        cdp_pump_one(a->c, (int)(end - now), &e);
        snap_sync(a);
    }
}

/* Issue 13, point 4b: a repeated query on an unchanged page reused the
 * cached snapshot only when no network event had come and at most 4 s
 * had passed, so a page that polls its server rebuilt it every time
 * (the issue's "6.2 s per query on an unchanged page"). Now a mutation
 * counter in cdpgate's isolated world of each frame decides: 5 s later,
 * with the page polling all along, the query costs one counter read per
 * frame; a change in the page or in its iframe rebuilds at once; and the
 * page's main world can neither see the counter nor reset it. */
static void t_warm_cache_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/warm.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r1 = {0}, r2 = {0}, r3 = {0}, r4 = {0};
    char *t1 = observe_until(a, "Same child button", &r1);
    CHECK(strstr(t1, "Quiet report v1") != NULL);
    idle_ms(a, 5000);
    uint64_t id0 = cdp_last_id(a->c);
    int64_t t0 = base_now_ms();
    char *t2 = observe(a, &(snap_query){.query = "Quiet report"}, &r2);
    uint64_t sent = cdp_last_id(a->c) - id0;
    printf("  timing: warm query 5 s later on a polling page: %lld ms, %llu commands\n",
           (long long)(base_now_ms() - t0), (unsigned long long)sent);
    CHECK(strstr(t2, "Quiet report v1") != NULL);
    /* Reused: one counter read per frame (two frames), no tree read. */
    if (!CHECK(sent <= 2))
        test_fail_detail("%llu commands for a warm query", (unsigned long long)sent);
    /* The main world sees no counter; what it sets there is its own. */
    char *seen = page_value(a, "typeof globalThis.__cdpgateMut");
    CHECK(seen && strcmp(seen, "undefined") == 0);
    free(seen);
    page_run(a, "document.getElementById('v').textContent = 'Quiet report v2';"
                "globalThis.__cdpgateMut = {n: 0, d: document};");
    id0 = cdp_last_id(a->c);
    char *t3 = observe(a, &(snap_query){.query = "Quiet report"}, &r3);
    CHECK(strstr(t3, "Quiet report v2") != NULL);
    CHECK(cdp_last_id(a->c) - id0 > 2);      /* rebuilt */
    /* A change inside the iframe only: rebuilt too. */
    page_run(a, "document.getElementById('child').contentDocument.querySelector('p')"
                ".textContent = 'Changed child text';");
    char *t4 = observe(a, &(snap_query){.query = "Changed child"}, &r4);
    CHECK(strstr(t4, "Changed child text") != NULL);
    snap_result_free(&r1);
    snap_result_free(&r2);
    snap_result_free(&r3);
    snap_result_free(&r4);
    snap_agent_free(a);
}

/* Regression: a page deeper than the walk's depth limit (20,000 nested
 * elements; the parser nests 512 of them) came back as an empty snapshot,
 * everything below 400 levels silently cut. Now what lies deeper is shown
 * flattened, with a note saying so. */
static void t_deep_page_not_empty_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/deep.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe(a, NULL, &r);
    CHECK_HAS(t, "h2 \"Deep heading\"");
    CHECK_HAS(t, "\"Deep text here\"");
    CHECK(ref_on(t, "button \"Deep button\"") > 0);
    CHECK(ref_on(t, "link \"Deep link\"") > 0);
    CHECK_HAS(t, "[note] the page nests deeper than");
    snap_result_free(&r);
    snap_query q = {0};
    q.text = true;
    t = observe(a, &q, &r);
    CHECK_HAS(t, "Deep text here");
    snap_result_free(&r);
    snap_agent_free(a);
}

/* Regression: frame lines of iframes the page removed stayed in the
 * snapshot (the out-of-process frame's own child, whose session the
 * browser did not report detached, came back as an orphan frame line). */
static void t_removed_frames_dropped_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/frames.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe_until(a, "Leaf button", &r);
    snap_result_free(&r);
    page_run(a, "document.getElementById('cross').remove();"
                "document.getElementById('same').remove()");
    t = observe(a, NULL, &r);
    CHECK_HAS(t, "button \"Top button\"");
    CHECK_LACKS(t, "frame \"");
    CHECK_LACKS(t, "frame origin=");
    CHECK_LACKS(t, "B button");
    CHECK_LACKS(t, "Leaf button");
    CHECK_LACKS(t, "Same child button");
    snap_result_free(&r);
    /* The page's frames go with the page: after a navigation (the old page
     * may stay alive in the back/forward cache) none of them is shown. */
    if (open_page(a, "a.test", "/shapes/frames.html?again") == 0) {
        t = observe_until(a, "Leaf button", &r);
        snap_result_free(&r);
        page_run(a, "location.href = '/shapes/rows.html'");
        for (int i = 0; i < 50; i++) {
            t = observe(a, NULL, &r);
            if (strstr(t, "title=\"Rows"))
                break;
            snap_result_free(&r);
            testlib_sleep_ms(100);
        }
        CHECK_HAS(t, "title=\"Rows");
        CHECK_LACKS(t, "frame \"");
        CHECK_LACKS(t, "frame origin=");
        CHECK_LACKS(t, "B button");
        snap_result_free(&r);
        /* And back (a page restored from the cache has its frames again). */
        CHECK_INT(0, snap_history(a, -1, &r));
        snap_result_free(&r);
        t = observe_until(a, "Leaf button", &r);
        CHECK(count_of(t, "button \"Leaf button\"") == 1);
        snap_result_free(&r);
    }
    snap_agent_free(a);
}

/* The frames of a site visited earlier never come back in a later
 * snapshot of another site: not as a frame line, not through a query, not
 * after back/forward between the later sites (issue 13, point 8a). The
 * first page has an out-of-process frame from b.test holding one from
 * a.test; the later ones are c.test and d.test, other sites again. */
static void earlier_site_lacks(snap_agent *a, const char *want, const char *where)
{
    snap_result r = {0};
    char *t = observe_until(a, want, &r);
    if (!CHECK(!strstr(t, "b.test") && !strstr(t, "B button") && !strstr(t, "Leaf button") &&
               !strstr(t, "frame origin=") && !strstr(t, "frame \"")))
        test_fail_detail("%s:\n%s", where, t);
    snap_result_free(&r);
    snap_query q = {0};
    q.query = "button";
    t = observe(a, &q, &r);
    if (!CHECK(!strstr(t, "B button") && !strstr(t, "Leaf button")))
        test_fail_detail("%s, query:\n%s", where, t);
    snap_result_free(&r);
    memset(&q, 0, sizeof q);
    q.text = true;
    t = observe(a, &q, &r);
    if (!CHECK(!strstr(t, "[frame") && !strstr(t, "Cross-origin child")))
        test_fail_detail("%s, text:\n%s", where, t);
    snap_result_free(&r);
}

static void t_earlier_site_frame_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/frames.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    observe_until(a, "Leaf button", &r);
    snap_result_free(&r);
    if (open_page(a, "c.test", "/shapes/rows.html") == 0)
        earlier_site_lacks(a, "title=\"Rows", "c.test");
    if (open_page(a, "d.test", "/shapes/article.html") == 0)
        earlier_site_lacks(a, "d.test", "d.test");
    CHECK_INT(0, snap_history(a, -1, &r));
    snap_result_free(&r);
    earlier_site_lacks(a, "title=\"Rows", "back to c.test");
    CHECK_INT(0, snap_history(a, 1, &r));
    snap_result_free(&r);
    earlier_site_lacks(a, "d.test", "forward to d.test");
    /* Back twice to the framed page (restored from the cache), then away. */
    CHECK_INT(0, snap_history(a, -1, &r));
    snap_result_free(&r);
    CHECK_INT(0, snap_history(a, -1, &r));
    snap_result_free(&r);
    /* Restored with its frames in place: no frame line of its own at the
     * top level for the inner a.test frame, which sits in b.test's. */
    char *t = observe_until(a, "Leaf button", &r);
    if (!CHECK(count_of(t, "button \"Leaf button\"") == 1 && !strstr(t, "\nframe origin=")))
        test_fail_detail("restored:\n%s", t);
    snap_result_free(&r);
    CHECK_INT(0, snap_history(a, 1, &r));
    snap_result_free(&r);
    earlier_site_lacks(a, "title=\"Rows", "forward again to c.test");
    /* The framed page in a new tab, a later site in another one. */
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", "/shapes/frames.html?tab");
    CHECK_INT(0, snap_open(a, url, true, &r));
    snap_result_free(&r);
    observe_until(a, "Leaf button", &r);
    snap_result_free(&r);
    testlib_world_url(&world, url, sizeof url, "e.test", "/shapes/rows.html?e");
    CHECK_INT(0, snap_open(a, url, true, &r));
    snap_result_free(&r);
    earlier_site_lacks(a, "e.test", "e.test in a new tab");
    testlib_world_url(&world, url, sizeof url, "f.test", "/shapes/rows.html?f");
    CHECK_INT(0, snap_open(a, url, false, &r));
    snap_result_free(&r);
    earlier_site_lacks(a, "f.test", "f.test after e.test");
    snap_agent_free(a);
}

/* No frame line has an empty origin (the browser reports "://"): an
 * about:blank frame the parent writes into, an empty one, a srcdoc frame
 * and a sandboxed srcdoc frame say what they are, in element and in text
 * mode (issue 13, point 8a). */
static void t_no_empty_origin_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/blank-frames.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe_until(a, "Srcdoc button", &r);
    CHECK_HAS(t, "Blank button");
    if (!CHECK(!strstr(t, "origin=null") && !strstr(t, "origin= ") && !strstr(t, "origin=\n") &&
               !strstr(t, "origin=://")))
        test_fail_detail("%s", t);
    CHECK(count_of(t, "origin=(about:blank/srcdoc, content from the parent)") == 4);
    snap_result_free(&r);
    snap_query q = {0};
    q.text = true;
    t = observe(a, &q, &r);
    if (!CHECK(!strstr(t, "[frame ]") && !strstr(t, "[frame null]") &&
               !strstr(t, "[frame ://]")))
        test_fail_detail("%s", t);
    snap_result_free(&r);
    snap_agent_free(a);
}

/* A broken page shows it: tests/fixtures/act/broken.html has a missing
 * image and a fetch answered 404 (its URL holds a token). The header says
 * problems=2, `tabs problems` lists both, the token redacted; console
 * messages are not read (no Runtime.enable). A new document starts at 0
 * (issue 13, point 6c). */
static void t_problems_reported_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/act/broken.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe_until(a, "problems=2", &r);
    CHECK_HAS(t, "tab=t1 problems=2\n");
    CHECK_HAS(t, "api 404");
    snap_result_free(&r);
    CHECK_INT(0, snap_tabs(a, "problems", NULL, &r));
    t = r.text ? r.text : "";
    if (!CHECK(strstr(t, "2 problems reported") != NULL))
        test_fail_detail("%s", t);
    CHECK_HAS(t, "no-such-image.png");
    CHECK_HAS(t, "no-such-api");
    CHECK_HAS(t, "404");
    CHECK_LACKS(t, "SECRET-TOKEN");
    CHECK_LACKS(t, "console error text");
    if (!CHECK(r.structured && !strstr(r.structured, "SECRET-TOKEN")))
        test_fail_detail("%s", r.structured ? r.structured : "");
    snap_result_free(&r);
    if (open_page(a, "a.test", "/shapes/rows.html") == 0) {
        t = observe(a, NULL, &r);
        CHECK_LACKS(t, "problems=");
        snap_result_free(&r);
        CHECK_INT(0, snap_tabs(a, "problems", "t1", &r));
        CHECK_HAS(r.text, "0 problems");
        snap_result_free(&r);
    }
    snap_agent_free(a);
}

/* The matches count of a query (0 when none, -1 when unreadable). */
static long query_matches(snap_agent *a, const char *query, bool text)
{
    snap_query q = {0};
    q.query = query;
    q.text = text;
    snap_result r = {0};
    observe(a, &q, &r);
    const char *m = r.structured ? strstr(r.structured, "\"matches\":") : NULL;
    long n = m ? strtol(m + 10, NULL, 10) : -1;
    snap_result_free(&r);
    return n;
}

/* Regression (issue 13, point 1c): a phrase that crosses an inline element
 * ("The <code>LIMIT</code> clause consists of") and a path the page breaks
 * with <wbr> or U+200B were not found by a query, in either mode. */
static void t_query_folds_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/inline.html")) {
        snap_agent_free(a);
        return;
    }
    for (int text = 0; text < 2; text++) {
        long n = query_matches(a, "The LIMIT clause consists of", text);
        if (!CHECK_INT(1, n))
            test_fail_detail("LIMIT phrase, text=%d", text);
        n = query_matches(a, "/containers/{id}/logs", text);
        if (!CHECK_INT(2, n))
            test_fail_detail("path, text=%d", text);
        n = query_matches(a, "str.split(sep=None, maxsplit=-1)", text);
        if (!CHECK_INT(1, n))
            test_fail_detail("signature, text=%d", text);
    }
    snap_agent_free(a);
}

/* The page's document.body.innerText (new), or NULL. */
static char *page_inner_text(snap_agent *a)
{
    snap_sync(a);
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return NULL;
    char *p = testlib_eval_params("document.body.innerText", "returnByValue");
    cdp_reply rep;
    cdp_err e = {0};
    int rc = cdp_call(a->c, t->session, "Runtime.evaluate", p, 10000, &rep, &e);
    free(p);
    if (rc)
        return NULL;
    size_t n = 0;
    const char *v = json_str(json_get(json_get(rep.result, "result"), "value"), &n);
    char *out = v ? malloc(n + 1) : NULL;
    if (out) {
        memcpy(out, v, n);
        out[n] = 0;
    }
    cdp_reply_free(&rep);
    return out;
}

size_t snap_obs_fold(const char *s, size_t n, char *dst, uint32_t *map);

/* s[0, n) folded (whitespace runs, zero-width characters), new. */
static char *folded(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    size_t k = snap_obs_fold(s, n, d, NULL);
    while (k && d[k - 1] == ' ')
        k--;
    d[k] = 0;
    return d[0] == ' ' ? memmove(d, d + 1, k) : d;
}

/* Regression (issue 13, point 1b): text under inline elements (code, em,
 * strong, spans, a link or button inside a sentence) came out one piece
 * per line, with a space invented between pieces ("/containers/ {id}/
 * logs", "str. split ("). Text mode now reads as the page's innerText,
 * element mode has each sentence of text on one line, and controls keep
 * their own lines and refs. */
static void t_inline_runs_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/inline.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe(a, NULL, &r);
    CHECK_HAS(t, "\n\"The LIMIT clause consists of two independent sub-clauses.\"\n");
    CHECK_HAS(t, "\n\"Endpoint /containers/{id}/logs streams the output.\"\n");
    CHECK_HAS(t, "\n \"str.split(sep=None, maxsplit=-1)\"\n");
    CHECK_HAS(t, "\n \"Return a list of the words in the string.\"\n");
    CHECK_HAS(t, "\n\"first block\"\n\"second block\"\n");
    /* Spans the browser keeps as generics (a title, an ARIA attribute):
     * display:inline ones sit in the line, a display:block one breaks it
     * (issue 13, residual P1). */
    CHECK_HAS(t, "\n\"Total 42 EUR due today at noon.\"\n");
    CHECK_HAS(t, "\n\"Before\"\n\"the block span\"\n\"after.\"\n");
    CHECK(ref_on(t, "link \"reference manual\"") > 0);
    CHECK(ref_on(t, "button \"Delete all\"") > 0);
    snap_result_free(&r);
    snap_query q = {0};
    q.text = true;
    t = observe(a, &q, &r);
    const char *b = strstr(t, ">>>\n"), *e = strstr(t, "<<<end page-content");
    char *inner = page_inner_text(a);
    if (CHECK(b && e && e > b && inner)) {
        char *mine = folded(b + 4, (size_t)(e - b - 4)), *page = folded(inner, strlen(inner));
        if (!CHECK(mine && page && strcmp(mine, page) == 0))
            test_fail_detail("text mode:\n%s\ninnerText:\n%s", mine ? mine : "",
                             page ? page : "");
        free(mine), free(page);
    }
    CHECK_HAS(t, "\nSee the reference manual for details.\n");
    CHECK_HAS(t, "\nPress Delete all to empty the list.\n");
    CHECK_HAS(t, "\nTotal 42 EUR due today at noon.\n");
    CHECK_HAS(t, "\nfirst block\nsecond block\n");
    free(inner);
    snap_result_free(&r);
    snap_agent_free(a);
}

/* The paragraph of shapes/find.html holding its i-th "marigold" (0-based). */
static int find_hit_paragraph(size_t i)
{
    for (int p = 1; p <= 40; p++)
        if ((p * 7) % 40 < 23 && i-- == 0)
            return p;
    return -1;
}

/* Observe q; its structured result parsed (free with json_doc_free). */
static json_doc *observe_doc(snap_agent *a, const snap_query *q, snap_result *r)
{
    observe(a, q, r);
    const char *st = r->structured ? r->structured : "{}";
    json_doc *d = json_parse(st, strlen(st), NULL, NULL);
    CHECK(d != NULL);
    return d;
}

/* Regression (issue 13, point 2): a query's result could not be navigated:
 * no offset per match to jump to, no context, and text mode returned a
 * whole budget from the first hit. Now each match comes with its offset
 * and total, a line of context each side (element mode) or the text
 * around it (text mode), and a next offset for the following matches. */
static void t_query_navigate_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/find.html")) {
        snap_agent_free(a);
        return;
    }
    snap_query q = {0};
    q.query = "marigold";
    snap_result r = {0};
    json_doc *d = observe_doc(a, &q, &r);
    const json_val *root = json_doc_root(d);
    CHECK_INT(23, json_get_int(root, "matches", -1));
    CHECK_INT(8, json_get_int(root, "matches_shown", -1));
    CHECK_INT(8, json_get_int(root, "next_offset", -1));
    CHECK_HAS(r.text, "[match 1/23 @");
    CHECK_HAS(r.text, "[match 8/23 @");
    CHECK_LACKS(r.text, "[match 9/23");
    CHECK_HAS(r.text, "\n~");                  /* context lines */
    CHECK_HAS(r.text, "next: offset=8 with the same query");
    const json_val *offs = json_get(root, "match_offsets");
    CHECK_INT(8, (long long)json_len(offs));
    /* Each match's offset, without the query, opens the page at it. */
    size_t i = 0;
    for (const json_val *o = json_first(offs); o; o = json_next(o), i++) {
        snap_query oq = {0};
        oq.offset = (size_t)json_num(o);
        oq.budget_chars = 1000;
        snap_result orr = {0};
        const char *t = observe(a, &oq, &orr);
        char want[64];
        snprintf(want, sizeof want, "\"Paragraph %d. ", find_hit_paragraph(i));
        const char *first = strstr(t, "\"Paragraph ");
        if (!CHECK(first && strncmp(first, want, strlen(want)) == 0))
            test_fail_detail("match %zu at offset %zu: want %s in\n%s", i, oq.offset, want, t);
        snap_result_free(&orr);
    }
    json_doc_free(d);
    snap_result_free(&r);
    /* The next page starts at match 9. */
    q.offset = 8;
    d = observe_doc(a, &q, &r);
    CHECK_HAS(r.text, "[match 9/23 @");
    CHECK_LACKS(r.text, "[match 8/23");
    CHECK_INT(23, json_get_int(json_doc_root(d), "matches", -1));
    json_doc_free(d);
    snap_result_free(&r);
    /* Text mode: each match with the text around it, not a budget from
     * the first hit; the one in <code> and the one split by <em> count. */
    snap_query tq = {0};
    tq.query = "marigold";
    tq.text = true;
    d = observe_doc(a, &tq, &r);
    root = json_doc_root(d);
    CHECK_INT(23, json_get_int(root, "matches", -1));
    CHECK_INT(6, json_get_int(root, "matches_shown", -1));
    long long shown = json_get_int(root, "shown_chars", -1);
    if (!CHECK(shown > 0 && shown <= 6 * (2 * 240 + 8)))
        test_fail_detail("shown_chars %lld for 6 matches", shown);
    CHECK_HAS(r.text, "[match 1/23 @text_offset=");
    CHECK_HAS(r.text, "[match 6/23 @text_offset=");
    CHECK_LACKS(r.text, "Paragraph 40.");
    long long next = json_get_int(root, "next_text_offset", -1);
    const json_val *to = json_get(root, "match_offsets");
    CHECK(json_len(to) == 6 && next > (long long)json_num(json_at(to, 5)));
    size_t first_off = (size_t)json_num(json_at(to, 0));
    json_doc_free(d);
    snap_result_free(&r);
    tq.text_offset = next > 0 ? (size_t)next : 0;
    d = observe_doc(a, &tq, &r);
    CHECK_HAS(r.text, "[match 7/23 @text_offset=");
    CHECK_LACKS(r.text, "[match 6/23");
    json_doc_free(d);
    snap_result_free(&r);
    /* A match's text offset opens the text there. */
    snap_query xq = {0};
    xq.text = true;
    xq.text_offset = first_off;
    xq.budget_chars = 700;
    observe(a, &xq, &r);
    const char *c = strstr(r.text, ">>>\n");
    CHECK(c && strncmp(c + 4, "marigold", 8) == 0);
    snap_result_free(&r);
    snap_agent_free(a);
}

/* Regression (issue 13, point 8b): look-alike controls took their row
 * context from the largest container that held them alone, here a card
 * whose first text is a title every card shares: three "(row: Contact)".
 * Now the nearest container with text names them: the row's key. */
static void t_row_context_key_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/kv.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe(a, NULL, &r);
    static const char *const keys[] = {"(row: email", "(row: phone", "(row: city"};
    char buf[300];
    for (size_t i = 0; i < 3; i++) {
        const char *l = line_of(t, keys[i], buf, sizeof buf);
        if (!CHECK(strstr(l, "button \"Remove\"") != NULL))
            test_fail_detail("no Remove line with %s in:\n%s", keys[i], t);
    }
    CHECK_LACKS(t, "(row: Contact");
    snap_result_free(&r);
    snap_agent_free(a);
}

/* Issue 13, point 8b (the rest): row context names the key that tells
 * rows apart. In a JSON editor's tree the key is typed into a field and
 * every row has the same drag handle: each "Remove", each drag handle and
 * each "Value" field read the row's key, not the handle's title; in a
 * description list the term, not the value beside the button; in th/td
 * rows the row header; in a table whose button shares a cell with text,
 * the row's first cell. Was: "(row: Drag to move)", "(row: 12 High St)",
 * "(row: 40.00)". */
static void t_row_context_kv_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/kv.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    snap_query q = {0};
    q.budget_chars = 100000;
    char *t = observe(a, &q, &r);
    static const char *const want[][2] = {
        {"button \"Remove\"", "(row: name)"}, {"button \"Remove\"", "(row: born)"},
        {"button \"Remove\"", "(row: field)"},
        {"textbox \"Value\"", "(row: name)"}, {"textbox \"Value\"", "(row: born)"},
        {"button \"Drag to move\"", "(row: name)"},
        {"button \"Edit\"", "(row: Street)"}, {"button \"Edit\"", "(row: Town)"},
        {"textbox \"Size\"", "(row: Width)"}, {"textbox \"Size\"", "(row: Height)"},
        {"button \"Pay\"", "(row: Gas)"}, {"button \"Pay\"", "(row: Water)"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        bool found = false;
        for (const char *l = t; l && *l && !found;) {
            const char *e = strchr(l, '\n');
            size_t n = e ? (size_t)(e - l) : strlen(l);
            char line[400];
            snprintf(line, sizeof line, "%.*s", (int)(n < 399 ? n : 399), l);
            found = strstr(line, want[i][0]) && strstr(line, want[i][1]);
            l = e ? e + 1 : NULL;
        }
        if (!CHECK(found))
            test_fail_detail("no line with %s %s in:\n%s", want[i][0], want[i][1], t);
    }
    CHECK_LACKS(t, "(row: Drag to move");
    CHECK_LACKS(t, "(row: 12 High St");
    CHECK_LACKS(t, "(row: 40.00");
    CHECK_LACKS(t, "(row: Contact");
    snap_result_free(&r);
    snap_agent_free(a);
}

/* ---- the folded query matcher (pure) ---- */

/* In observe_tree.c (observe_int.h); snap_obs_fold is declared above. */
bool snap_obs_find_folded(const char *hay, size_t hlen, const char *needle);
bool snap_obs_contains_ci(const char *hay, size_t hlen, const char *needle);

static bool folded_has(const char *hay, const char *needle)
{
    return snap_obs_find_folded(hay, strlen(hay), needle);
}

/* Whitespace runs are one space, zero-width characters and the soft
 * hyphen are skipped on both sides, ASCII case is folded; the rest of the
 * fold is gate_char_fold's (tested in test_gate classify_invisible). */
static void t_fold_matcher(void)
{
    CHECK(folded_has("The \nLIMIT\n  clause consists of", "the limit clause consists"));
    CHECK(folded_has("The\tLIMIT\r\n\fclause", "THE LIMIT CLAUSE"));
    CHECK(folded_has("GET /containers/\xe2\x80\x8b{id}/\xe2\x80\x8blogs", "/containers/{id}/logs"));
    CHECK(folded_has("/containers/{id}/logs", "/containers/\xe2\x80\x8b{id}/logs"));
    CHECK(folded_has("a\xe2\x80\x8c\xe2\x80\x8dz\xe2\x81\xa0y\xef\xbb\xbfx", "azyx"));
    CHECK(folded_has("con\xc2\xadtainers", "containers"));
    /* As the observation shows them (gate_char_escape), too. */
    CHECK(folded_has("/containers/\\u200b{id}/\\ufefflogs", "/containers/{id}/logs"));
    CHECK(folded_has("con\\u00adtainers", "containers"));
    /* The fold is the gate classifier's (gate_char_fold, issue 13 review
     * F8): bidi and other format controls read as nothing, as the
     * zero-width ones; white space beyond ASCII is a space, full-width
     * forms are ASCII; an escape of a character shown raw stays as it is. */
    CHECK(folded_has("/containers/\\u202e{id}/logs", "/containers/{id}/logs"));
    CHECK(folded_has("De\xe2\x80\x8ele\\u2066te\\u{e0041}", "delete"));
    CHECK(folded_has("ideographic\xe3\x80\x80space", "ideographic space"));
    CHECK(folded_has("\xef\xbc\xa4\xef\xbd\x85lete", "delete"));
    CHECK(!folded_has("caf\\u00e9", "caf"  "\xc3\xa9"));
    CHECK(folded_has("a\\u00e9", "a\\u00e9"));
    CHECK(!folded_has("x\\u{e0041y", "xy"));
    CHECK(folded_has("no\xc2\xa0" "break space", "no break space"));
    CHECK(folded_has("anything", ""));
    CHECK(!folded_has("limitclause", "limit clause"));
    CHECK(!folded_has("limit clause", "limitclause"));
    CHECK(!folded_has("ab c", "abc"));
    CHECK(!folded_has("/containers/ {id}/ logs", "/containers/{id}/logs"));
    CHECK(!folded_has("caf\xc3\xa9", "CAF\xc3\x89"));     /* ASCII folding only */
    CHECK(!folded_has("short", "shorter"));
    /* The offset map points each folded byte back to where it came from. */
    const char *s = "A \n\tB\xe2\x80\x8b" "c";
    char dst[16];
    uint32_t map[16];
    size_t n = snap_obs_fold(s, strlen(s), dst, map);
    CHECK_INT(4, (long long)n);
    CHECK(n == 4 && memcmp(dst, "a bc", 4) == 0);
    CHECK(n == 4 && map[0] == 0 && map[1] == 1 && map[2] == 4 && map[3] == 8);
    /* The secret-field matcher of observe_dom.c is not the folded one. */
    CHECK(!snap_obs_contains_ci("one\xe2\x80\x8b-time-code", 16, "one-time-code"));
    CHECK(!snap_obs_contains_ci("pass word", 9, "password"));
}

/* ---- the hint after a failed navigation (pure) ---- */

/* In agent.c (agent_int.h). */
const char *snap_agent_nav_hint(const char *etext);

/* Issue 13 review F4: a certificate error's hint pointed the agent at the
 * site's http URL, which an on-path attacker (the usual cause of such an
 * error) then serves. It says the certificate is not trusted, that
 * cdpgate will not bypass it, and neither http nor another host. */
static void t_nav_hint_cert_regression(void)
{
    static const char *const CERT[] = {
        "net::ERR_CERT_AUTHORITY_INVALID", "net::ERR_CERT_COMMON_NAME_INVALID",
        "net::ERR_CERT_DATE_INVALID", "net::ERR_CERT_REVOKED",
    };
    for (size_t i = 0; i < sizeof CERT / sizeof CERT[0]; i++) {
        const char *h = snap_agent_nav_hint(CERT[i]);
        CHECK_HAS(h, "the certificate is not trusted");
        CHECK_HAS(h, "cdpgate will not bypass it");
        CHECK_HAS(h, "do not retry over http or another host, tell the user");
        if (!CHECK(strstr(h, "http URL") == NULL && strstr(h, "open its") == NULL))
            test_fail_detail("%s: %s", CERT[i], h);
    }
    CHECK_HAS(snap_agent_nav_hint("net::ERR_CONNECTION_REFUSED"), "nothing listens");
    CHECK_STR("", snap_agent_nav_hint("net::ERR_ABORTED"));
}

/* ---- the AX reply digested as a stream ---- */

/* In observe.c: digest a saved reply through json_parse and through the
 * streaming sink (fed in pieces of `piece` bytes) and compare the records. */
int snap_ax_digest_check(const char *reply, size_t len, size_t piece, size_t *nodes,
                         char *why, size_t cap);

static void t_ax_digest_stream(void)
{
    static const char *const files[] = {
        "tests/fixtures/ax/forms.reply.json", "tests/fixtures/ax/rows.reply.json",
    };
    static const size_t pieces[] = {0, 1, 7, 64, 4096};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t len;
        char *buf = test_read_file(files[f], &len);
        if (!CHECK(buf != NULL))
            continue;
        for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
            char why[200];
            size_t nodes = 0;
            int rc = snap_ax_digest_check(buf, len, pieces[k], &nodes, why, sizeof why);
            if (!CHECK_INT(0, rc))
                test_fail_detail("%s in pieces of %zu: %s", files[f], pieces[k], why);
            CHECK(nodes > 50);
        }
        free(buf);
    }
    /* Shapes a browser does not send but a digest must survive alike:
     * members out of order, repeated keys, wrong types, objects for arrays,
     * InlineTextBox, repeated nodeIds, NULs in strings. */
    static const char *const odd[] = {
        "{\"nodes\":[{\"childIds\":[\"2\",7,[\"x\"],\"3\"],\"role\":{\"value\":\"button\"},"
        "\"nodeId\":\"1\",\"name\":{\"value\":\"a\\u0000b\"},\"nodeId\":\"9\"},"
        "{\"nodeId\":\"2\",\"role\":{\"value\":\"InlineTextBox\"}},"
        "{\"nodeId\":\"3\",\"role\":{\"value\":\"slider\"},\"value\":{\"value\":42.5},"
        "\"properties\":[{\"name\":\"level\",\"value\":{\"value\":3}},{\"value\":{\"value\":true},"
        "\"name\":\"disabled\"},{\"name\":\"checked\",\"value\":{\"value\":\"mixed\"}},"
        "{\"name\":\"invalid\",\"value\":{\"value\":\"spelling-long-value\"}},7,"
        "{\"name\":\"focused\",\"value\":{\"value\":\"true\",\"value\":false}}],"
        "\"backendDOMNodeId\":12,\"ignored\":true},"
        "{\"nodeId\":\"1\",\"role\":{\"value\":\"link\"}},{\"nodeId\":4},5,"
        "{\"nodeId\":\"6\",\"role\":\"x\",\"name\":{\"value\":1},\"childIds\":{\"a\":\"3\"},"
        "\"properties\":{\"p\":{\"name\":\"expanded\",\"value\":{\"value\":false}}},"
        "\"backendDOMNodeId\":1.5}],\"nodes\":[]}",
        "{\"nodes\":{\"a\":{\"nodeId\":\"1\"},\"b\":{\"nodeId\":\"2\",\"childIds\":[\"1\"]}}}",
        "{\"nodes\":7}",
        "{}",
        /* What the sink skips (JSON_STREAM_SKIP) next to what it reads:
         * sources before a value, unused properties (name first or
         * last), a non-string property name, InlineTextBoxes with members
         * after the role, containers where scalars belong. */
        ("{\"frameId\":{\"x\":[1]},\"nodes\":[{\"nodeId\":\"1\",\"ignored\":false,"
        "\"ignoredReasons\":[{\"name\":\"x\",\"value\":{\"value\":true}}],"
        "\"role\":{\"type\":\"role\",\"sources\":[{\"value\":\"no\"}],\"value\":\"button\"},"
        "\"chromeRole\":{\"value\":9},\"name\":{\"sources\":[{\"type\":\"contents\","
        "\"value\":{\"value\":\"x\"}}],\"value\":\"Go\",\"value\":\"no\"},"
        "\"properties\":[{\"name\":\"labelledby\",\"value\":{\"type\":\"nodeList\","
        "\"relatedNodes\":[{\"idref\":\"a\"}]}},{\"value\":{\"value\":true},\"name\":\"busy\"},"
        "{\"name\":5,\"value\":{\"value\":true}},{\"name\":\"level\",\"value\":"
        "{\"relatedNodes\":[1],\"value\":2}},{\"name\":[\"focused\"],\"value\":{\"value\":true}},"
        "{\"name\":\"focusable\",\"value\":[true]},{\"name\":\"selected\",\"value\":"
        "{\"value\":{\"value\":true}}},[{\"name\":\"disabled\"}]],"
        "\"childIds\":[\"2\",{\"a\":\"3\"},\"3\"],\"backendDOMNodeId\":[4]},"
        "{\"nodeId\":\"2\",\"role\":{\"value\":\"InlineTextBox\"},\"nodeId\":\"5\","
        "\"role\":{\"value\":\"button\"},\"childIds\":[\"1\"]},"
        "{\"role\":{\"value\":\"InlineTextBox\"},\"nodeId\":\"6\"},"
        "{\"nodeId\":[\"3\"],\"role\":[\"button\"]},{\"nodeId\":\"3\",\"role\":[{\"value\":\"x\"}],"
        "\"name\":{\"value\":[\"n\"]},\"value\":{\"value\":{\"value\":1}}}]}"),
        /* For the walk's reordering (ax_reorder): out of order with an
         * orphan; a shared child; a cycle. */
        ("{\"nodes\":[{\"nodeId\":\"5\",\"role\":{\"value\":\"generic\"}},"
        "{\"nodeId\":\"4\",\"role\":{\"value\":\"StaticText\"},\"name\":{\"value\":\"t\"}},"
        "{\"nodeId\":\"1\",\"role\":{\"value\":\"RootWebArea\"},\"childIds\":[\"3\",\"9\",\"2\",\"1\"]},"
        "{\"nodeId\":\"2\",\"role\":{\"value\":\"generic\"},\"childIds\":[\"4\"]},"
        "{\"nodeId\":\"3\",\"role\":{\"value\":\"button\"},\"name\":{\"value\":\"b\"}}]}"),
        ("{\"nodes\":[{\"nodeId\":\"1\",\"role\":{\"value\":\"RootWebArea\"},"
        "\"childIds\":[\"2\",\"3\"]},{\"nodeId\":\"3\",\"childIds\":[\"4\"]},"
        "{\"nodeId\":\"2\",\"childIds\":[\"4\"]},{\"nodeId\":\"4\"}]}"),
        ("{\"nodes\":[{\"nodeId\":\"2\",\"childIds\":[\"1\"]},"
        "{\"nodeId\":\"1\",\"role\":{\"value\":\"RootWebArea\"},\"childIds\":[\"2\"]}]}"),
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        for (size_t piece = 0; piece < 5; piece++) {
            char why[200];
            int rc = snap_ax_digest_check(odd[i], strlen(odd[i]), piece, NULL, why,
                                          sizeof why);
            if (!CHECK_INT(0, rc))
                test_fail_detail("odd reply %zu in pieces of %zu: %s", i, piece, why);
        }
    }
}


/* In observe.c: a reply's digested tree as text; wide: its ids took 64 bits. */
int snap_ax_shape(const char *reply, size_t len, char *out, size_t cap, bool *wide);

/* nodeIds are kept in 32 bits; one that does not fit (mid-reply, as a node
 * and as a child) widens the frame's arrays in place, and the tree is the
 * same as with small ids. Stream and parse agree on it in every piece size. */
static void t_ax_wide_ids(void)
{
    static const char narrow[] =
        "{\"nodes\":[{\"nodeId\":\"1\",\"role\":{\"value\":\"RootWebArea\"},"
        "\"childIds\":[\"2\",\"3\"]},"
        "{\"nodeId\":\"2\",\"role\":{\"value\":\"generic\"},\"childIds\":[\"4\",\"5\"]},"
        "{\"nodeId\":\"4\",\"role\":{\"value\":\"button\"},\"name\":{\"value\":\"a\"}},"
        "{\"nodeId\":\"3\",\"role\":{\"value\":\"list\"},\"childIds\":[\"6\"]},"
        "{\"nodeId\":\"5\",\"role\":{\"value\":\"link\"},\"name\":{\"value\":\"b\"}},"
        "{\"nodeId\":\"6\",\"role\":{\"value\":\"listitem\"}}]}";
    /* The same tree: 5 is 2^32 + 4 and 6 is 2^32 + 1 (cut to 32 bits they
     * would be 4 and 1, which are taken), 3 is "x". */
    static const char wide[] =
        "{\"nodes\":[{\"nodeId\":\"1\",\"role\":{\"value\":\"RootWebArea\"},"
        "\"childIds\":[\"2\",\"x\"]},"
        "{\"nodeId\":\"2\",\"role\":{\"value\":\"generic\"},"
        "\"childIds\":[\"4\",\"4294967300\"]},"
        "{\"nodeId\":\"4\",\"role\":{\"value\":\"button\"},\"name\":{\"value\":\"a\"}},"
        "{\"nodeId\":\"x\",\"role\":{\"value\":\"list\"},\"childIds\":[\"4294967297\"]},"
        "{\"nodeId\":\"4294967300\",\"role\":{\"value\":\"link\"},"
        "\"name\":{\"value\":\"b\"}},"
        "{\"nodeId\":\"4294967297\",\"role\":{\"value\":\"listitem\"}}]}";
    char a[256], b[256];
    bool wa = true, wb = false;
    CHECK_INT(0, snap_ax_shape(narrow, strlen(narrow), a, sizeof a, &wa));
    CHECK_INT(0, snap_ax_shape(wide, strlen(wide), b, sizeof b, &wb));
    CHECK(!wa);
    CHECK(wb);
    if (!CHECK_STR(a, b))
        test_fail_detail("narrow %s\nwide   %s", a, b);
    CHECK_STR("0:1,3,;1:2,4,;2:;3:5,;4:;5:;", a);
    for (size_t piece = 0; piece < 9; piece++) {
        char why[200];
        int rc = snap_ax_digest_check(wide, strlen(wide), piece, NULL, why, sizeof why);
        if (!CHECK_INT(0, rc))
            test_fail_detail("wide reply in pieces of %zu: %s", piece, why);
    }
}

/* In observe.c: the DOMSnapshot reply digested both ways must give the same
 * secret and clickable sets. */
int snap_dom_digest_check(const char *reply, size_t len, size_t piece, size_t *secrets,
                          size_t *clicks, char *why, size_t cap);

static void t_dom_digest_stream(void)
{
    size_t len;
    char *buf = test_read_file("tests/fixtures/ax/dom.reply.json", &len);
    if (!CHECK(buf != NULL))
        return;
    static const size_t pieces[] = {0, 1, 3, 7, 64, 4096};
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
        char why[200];
        size_t secrets = 0, clicks = 0;
        int rc = snap_dom_digest_check(buf, len, pieces[k], &secrets, &clicks, why,
                                       sizeof why);
        if (!CHECK_INT(0, rc))
            test_fail_detail("piece %zu: %s", pieces[k], why);
        /* password, show-password, new-password, one-time-code, PASSWORD and
         * the iframe's password: the check cannot pass on empty sets. */
        CHECK_INT(6, secrets);
        CHECK(clicks >= 2);
    }
    free(buf);
}

/* ---- invisible and bidi characters (issue 11, point 15b(e)) ---- */

/* The raw UTF-8 of the characters shapes/bidi.html puts in its text, and
 * the visible escape each must be shown as instead. */
static const struct {
    const char *raw, *esc, *json;
} HIDDEN[] = {
    {"\xe2\x80\xae", "\\u202e", "\\u202e"},             /* right-to-left override */
    {"\xe2\x81\xa6", "\\u2066", "\\u2066"},             /* left-to-right isolate */
    {"\xe2\x80\x8b", "\\u200b", "\\u200b"},             /* zero-width space */
    {"\xe2\x80\xa8", "\\u2028", "\\u2028"},             /* line separator */
    {"\xf3\xa0\x81\x81", "\\u{e0041}", "\\udb40"},      /* tag letter A */
    {"\xc2\x9b", "\\u009b", "\\u009b"},                 /* C1 control (CSI) */
    {"\xc2\x85", "\\u0085", "\\u0085"},                 /* C1 control (NEL) */
};

/* No raw byte sequence of any of them in s; with json, no JSON escape that
 * decodes to one either (a "\uXXXX" not itself escaped as "\\uXXXX"). */
static void check_no_hidden(const char *what, const char *s, bool json)
{
    for (size_t k = 0; k < sizeof HIDDEN / sizeof HIDDEN[0]; k++) {
        if (!CHECK(strstr(s, HIDDEN[k].raw) == NULL))
            test_fail_detail("%s: raw %s in:\n%s", what, HIDDEN[k].esc, s);
        for (const char *p = json ? strstr(s, HIDDEN[k].json) : NULL; p;
             p = strstr(p + 1, HIDDEN[k].json)) {
            size_t bs = 0;
            while (p - bs > s && p[-1 - (ptrdiff_t)bs] == '\\')
                bs++;
            if (!CHECK(bs % 2 == 1))
                test_fail_detail("%s: JSON escape %s decodes raw in:\n%s", what,
                                 HIDDEN[k].json, s);
        }
    }
}

/* Each of them shown as its visible escape after prefix ("Heading" ...). */
static void check_escaped(const char *what, const char *s, const char *prefix, bool json)
{
    char want[160];
    snprintf(want, sizeof want, "%sA%s%sB%s%sC%s%sD%s%sE%s%sF%s%sG", prefix,
             json ? "\\" : "", HIDDEN[0].esc, json ? "\\" : "", HIDDEN[1].esc,
             json ? "\\" : "", HIDDEN[2].esc, json ? "\\" : "", HIDDEN[3].esc,
             json ? "\\" : "", HIDDEN[4].esc, json ? "\\" : "", HIDDEN[5].esc);
    if (!CHECK(strstr(s, want) != NULL))
        test_fail_detail("%s: %s not in:\n%s", what, want, s);
}

static void t_bidi_escaped_regression(void)
{
    if (!need_browser())
        return;
    snap_agent *a = agent(0);
    if (!a || open_page(a, "a.test", "/shapes/bidi.html")) {
        snap_agent_free(a);
        return;
    }
    snap_result r = {0};
    char *t = observe_until(a, "inside", &r);
    check_no_hidden("snapshot", t, false);
    check_no_hidden("snapshot structured", r.structured ? r.structured : "", true);
    static const char *const SHOWN[] = {"Title", "Heading", "Link", "Button", "Value", "Frame"};
    for (size_t k = 0; k < sizeof SHOWN / sizeof SHOWN[0]; k++)
        check_escaped("snapshot", t, SHOWN[k], false);
    check_escaped("snapshot structured title", r.structured ? r.structured : "", "Title", true);
    unsigned add = ref_on(t, "button \"Add text\""), alert = ref_on(t, "button \"Alert\"");
    unsigned field = ref_on(t, "textbox \"Field\""), ask = ref_on(t, "button \"Ask\"");
    unsigned rm = ref_on(t, "button \"Remove\""), btn = ref_on(t, "button \"ButtonA");
    CHECK(add > 0 && alert > 0 && field > 0 && ask > 0 && rm > 0 && btn > 0);
    snap_result_free(&r);
    /* Text mode. */
    snap_query q = {0};
    q.text = true;
    t = observe(a, &q, &r);
    check_no_hidden("text mode", t, false);
    check_no_hidden("text mode structured", r.structured ? r.structured : "", true);
    check_escaped("text mode", t, "Heading", false);
    check_escaped("text mode", t, "Link", false);
    snap_result_free(&r);
    /* The tab list: titles inside the page-content markers. */
    CHECK_INT(0, snap_tabs(a, "list", NULL, &r));
    t = r.text ? r.text : "";
    check_no_hidden("tabs", t, false);
    check_no_hidden("tabs structured", r.structured ? r.structured : "", true);
    check_escaped("tabs", t, "Title", false);
    check_escaped("tabs structured", r.structured ? r.structured : "", "Title", true);
    const char *open = strstr(t, "<<<page-content"), *title = strstr(t, "\"Title");
    const char *close = strstr(t, "<<<end page-content");
    CHECK(open && title && close && open < title && title < close);
    snap_result_free(&r);
    /* Action results: new text, a value read back, a dialog message. */
    char ref[16];
    snprintf(ref, sizeof ref, "e%u", add);
    CHECK_INT(0, snap_click(a, ref, NULL, &r));
    check_no_hidden("click", r.text ? r.text : "", false);
    check_no_hidden("click structured", r.structured ? r.structured : "", true);
    check_escaped("click", r.text ? r.text : "", "Added", false);
    check_escaped("click structured", r.structured ? r.structured : "", "Added", true);
    snap_result_free(&r);
    snprintf(ref, sizeof ref, "e%u", field);
    CHECK_INT(0, snap_type(a, ref, "Z", false, NULL, &r));
    check_no_hidden("type", r.text ? r.text : "", false);
    check_no_hidden("type structured", r.structured ? r.structured : "", true);
    check_escaped("type", r.text ? r.text : "", "Typed", false);
    check_escaped("type structured", r.structured ? r.structured : "", "Typed", true);
    snap_result_free(&r);
    snprintf(ref, sizeof ref, "e%u", alert);
    CHECK_INT(0, snap_click(a, ref, NULL, &r));
    check_no_hidden("dialog", r.text ? r.text : "", false);
    check_no_hidden("dialog structured", r.structured ? r.structured : "", true);
    check_escaped("dialog", r.text ? r.text : "", "Dialog", false);
    check_escaped("dialog structured", r.structured ? r.structured : "", "Dialog", true);
    snap_result_free(&r);
    CHECK_INT(0, snap_dialog(a, true, NULL, &r));
    snap_result_free(&r);
    /* A ref whose element is gone: the refusal names it escaped
     * (agent_refs.c short_name wrote the name's bytes raw). */
    snprintf(ref, sizeof ref, "e%u", rm);
    CHECK_INT(0, snap_click(a, ref, NULL, &r));
    snap_result_free(&r);
    snprintf(ref, sizeof ref, "e%u", btn);
    CHECK_INT(SNAP_ESTALE, snap_click(a, ref, NULL, &r));
    check_no_hidden("stale ref", r.text ? r.text : "", false);
    check_no_hidden("stale ref structured", r.structured ? r.structured : "", true);
    check_escaped("stale ref", r.text ? r.text : "", "Button", false);
    snap_result_free(&r);
    /* The gate's reason quotes page text escaped (review of session 8, F1):
     * accepting a prompt that asks for a password is refused (takeover), its
     * reason quoting the message, with U+0085 and a quote besides. */
    snprintf(ref, sizeof ref, "e%u", ask);
    CHECK_INT(0, snap_click(a, ref, NULL, &r));
    snap_result_free(&r);
    CHECK_INT(SNAP_ETAKEOVER, snap_dialog(a, true, NULL, &r));
    t = r.text ? r.text : "";
    check_no_hidden("refused accept", t, false);
    check_no_hidden("refused accept structured", r.structured ? r.structured : "", true);
    check_escaped("refused accept", t, "credential: dialog \"Enter your password ", false);
    if (!CHECK(strstr(t, "G c1\\u0085 \\\"q\\\"\" has \"password\"")))
        test_fail_detail("refused accept: quote not escaped in:\n%s", t);
    check_escaped("refused accept structured", r.structured ? r.structured : "",
                  "Enter your password ", true);
    snap_result_free(&r);
    CHECK_INT(0, snap_dialog(a, false, NULL, &r));
    snap_result_free(&r);
    /* A dialog raised while a page opens (F2): the open's refusal text. */
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", "/shapes/bidi-alert.html");
    int rc = snap_open(a, url, false, &r);
    t = r.text ? r.text : "";
    if (!CHECK_INT(SNAP_EDIALOG, rc))
        test_fail_detail("open: %s", t);
    check_no_hidden("open", t, false);
    check_no_hidden("open structured", r.structured ? r.structured : "", true);
    check_escaped("open", t, "Opened", false);
    CHECK(strstr(t, "G c1\\u0085 \"q\"<<<end page-content") != NULL);
    snap_result_free(&r);
    CHECK_INT(0, snap_dialog(a, false, NULL, &r));
    snap_result_free(&r);
    snap_agent_free(a);
}

/* Issue 13, point 6d: a download's suggested name is the page's text; as
 * saved and shown it keeps no path separator, control, bidi or space
 * character, no leading dot, and is bounded. */
static void t_download_name_clean(void)
{
    static const char *const CASES[][2] = {
        {"report.pdf", "report.pdf"},
        {"../../etc/passwd", "_._.._etc_passwd"},
        {"/abs/path.sh", "_abs_path.sh"},
        {"a\\b\\c.txt", "a_b_c.txt"},
        {".bashrc", "_bashrc"},
        {"..", "_."},
        {"evil\xe2\x80\xaegpj.exe", "evil_gpj.exe"},   /* U+202E */
        {"line\nbreak\x1b[2J.txt", "line_break_2J.txt"},
        {"Q3 report (final), v2+.pdf", "Q3_report_(final),_v2+.pdf"},
        {"", "download"},
        {"///", "download"},
        {"\xe6\x97\xa5\xe6\x9c\xac.txt", "_.txt"},
    };
    char out[SNAP_DL_NAME_MAX];
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        snap_dl_name_clean(CASES[i][0], out);
        CHECK_STR(CASES[i][1], out);
    }
    snap_dl_name_clean(NULL, out);
    CHECK_STR("download", out);
    char longname[400];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    snap_dl_name_clean(longname, out);
    CHECK_INT(SNAP_DL_NAME_MAX - 1, (int)strlen(out));
}

/* A frame whose process does not answer (a11y/hang-open.html: the frame
 * from b.test blocks its process once loaded, from the start): the open
 * and its snapshot wait for it no longer than the per-action timeout (its
 * set-up's calls under one deadline, its reads under another, then not
 * asked again until it answers), the page's own lines are there, and the
 * frame's line says it was not read; so does the next snapshot, at once.
 * Before session 17 the open waited for each of that frame's calls in
 * turn, each up to its whole deadline (230 s with the 15 s default; the
 * case sets 8 s), and
 * the frame line said "unavailable: ... no reply within 60000 ms". Run
 * last: the frame's process stays blocked (the server holds its request)
 * until the tab closes. */
static void t_open_hung_frame_regression(void)
{
    if (!need_browser())
        return;
    /* An 8 s per-action timeout (the default 15 s proves no more and
     * costs the suite 7 s twice). */
    snap_opts o = {0};
    o.timeout_ms = 8000;
    snap_agent *a = testlib_agent(world.browser, &o);
    if (!CHECK(a != NULL))
        return;
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", "/a11y/hang-open.html");
    snap_result r = {0};
    CHECK_INT(0, snap_open(a, url, false, &r));
    CHECK_HAS(r.text, "Text of the page itself.");
    CHECK_HAS(r.text, "button \"Go on\"");
    if (!CHECK(r.text && strstr(r.text, "frame \"Hung frame\"") &&
               strstr(r.text, "(not read: its process did not answer within 8 s)")))
        test_fail_detail("open:\n%s", r.text ? r.text : "");
    snap_result_free(&r);
    memset(&r, 0, sizeof r);
    char *text = observe(a, NULL, &r);
    if (!CHECK(strstr(text, "(not read: its process did not answer within 8 s)")))
        test_fail_detail("snapshot:\n%s", text);
    snap_result_free(&r);
    snap_agent_free(a);
}

static const test_case TESTS[] = {
    {"fold_matcher", t_fold_matcher},
    {"download_name_clean", t_download_name_clean},
    {"nav_hint_cert_regression", t_nav_hint_cert_regression},
    {"query_folds_regression", t_query_folds_regression},
    {"inline_runs_regression", t_inline_runs_regression},
    {"query_navigate_regression", t_query_navigate_regression},
    {"row_context_key_regression", t_row_context_key_regression},
    {"row_context_kv_regression", t_row_context_kv_regression},
    {"ax_digest_stream", t_ax_digest_stream},
    {"ax_wide_ids", t_ax_wide_ids},
    {"frames_nested", t_frames_nested},
    {"shadow_roots", t_shadow_roots},
    {"row_context", t_row_context},
    {"hidden_dropped", t_hidden_dropped},
    {"states", t_states},
    {"list_paging", t_list_paging},
    {"article_text_paging", t_article_text_paging},
    {"budget_never_exceeded", t_budget_never_exceeded},
    {"marker_not_forged", t_marker_not_forged},
    {"refs_stable", t_refs_stable},
    {"secrets_hidden", t_secrets_hidden},
    {"secret_fields_regression", t_secret_fields_regression},
    {"header_and_structured", t_header_and_structured},
    {"size_big", t_size_big},
    {"slow_read_regression", t_slow_read_regression},
    {"cache_paging", t_cache_paging},
    {"warm_cache_regression", t_warm_cache_regression},
    {"dom_digest_stream", t_dom_digest_stream},
    {"open_schemes_and_header_regression", t_open_schemes_and_header_regression},
    {"deep_page_not_empty_regression", t_deep_page_not_empty_regression},
    {"removed_frames_dropped_regression", t_removed_frames_dropped_regression},
    {"earlier_site_frame_regression", t_earlier_site_frame_regression},
    {"no_empty_origin_regression", t_no_empty_origin_regression},
    {"problems_reported_regression", t_problems_reported_regression},
    {"bidi_escaped_regression", t_bidi_escaped_regression},
    {"open_hung_frame_regression", t_open_hung_frame_regression},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (testlib_world_up(&world, "snapshot", host_args, false) != 0)
        return 1;
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
