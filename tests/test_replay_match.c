/*
 * test_replay_match.c — re-finding a recorded target for replay (issue 14,
 * point 4): the snapshot's element list (snap_elements, with the elements'
 * stable attributes) against real headless Chromium on the pages in
 * tests/fixtures/replay/, each a version of one shop page as it changes
 * between a recording and a replay.
 *
 * One browser is shared by all tests (launched on first use); each test has
 * its own agent and tab.
 */
#include "tests/testlib.h"
#include "snapshot/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *host_args[] = {FIXTURE_HOST_RULES, NULL};
static testlib_world world;

/* A new agent with a new tab on path (a.test). NULL on failure. */
static snap_agent *agent_at(const char *path)
{
    if (!testlib_world_browser(&world))
        return NULL;
    snap_agent *a = testlib_agent(world.browser, NULL);
    if (!a)
        return NULL;
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", path);
    snap_result r = {0};
    int rc = snap_open(a, url, true, &r);
    if (!CHECK_INT(0, rc))
        test_fail_detail("open %s: %s", url, r.text ? r.text : "");
    snap_result_free(&r);
    if (rc) {
        snap_agent_free(a);
        return NULL;
    }
    return a;
}

/* The element of s with role and name (and row, when not NULL); NULL when
 * none or several. */
static const snap_elem *elem(const snap_elems *s, const char *role, const char *name,
                             const char *row)
{
    const snap_elem *found = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const snap_elem *e = &s->v[i];
        if (strcmp(e->role, role) || strcmp(e->name, name) || (row && strcmp(e->row, row)))
            continue;
        if (found)
            return NULL;
        found = e;
    }
    return found;
}

static void dump(const snap_elems *s)
{
    for (size_t i = 0; i < s->n; i++)
        test_fail_detail("  [%s] %s \"%s\" row=\"%s\" section=\"%s\" frame=\"%s\" id=\"%s\" "
                         "testid=\"%s\"", s->v[i].ref, s->v[i].role, s->v[i].name, s->v[i].row,
                         s->v[i].section, s->v[i].frame, s->v[i].id, s->v[i].testid);
}

/* The elements list what a snapshot shows: role, name, row context for
 * look-alikes, the heading above, refs a snapshot issues; and the stable
 * attributes when asked. */
static void t_elements_list(void)
{
    snap_agent *a = agent_at("/replay/shop.html");
    if (!a)
        return;
    snap_elems s;
    snap_result r = {0};
    CHECK_INT(0, snap_elements(a, &s, &r));
    const snap_elem *add = elem(&s, "button", "Add", "Banana");
    const snap_elem *q = elem(&s, "textbox", "Search", NULL);
    const snap_elem *co = elem(&s, "button", "Checkout", NULL);
    if (!CHECK(add && q && co))
        dump(&s);
    if (add && q && co) {
        CHECK_STR("Basket", add->section);
        CHECK_STR("Pay", co->section);
        CHECK_STR("", co->row);
        CHECK_STR("", co->frame);
        CHECK(!q->attrs);
        CHECK_STR("", q->id);
    }
    CHECK_STR("Shop", s.title);
    CHECK(strstr(s.origin, "a.test") != NULL);
    CHECK(!s.auth);
    CHECK_INT(0, snap_elements_attrs(a, &s, NULL, &r));
    q = elem(&s, "textbox", "Search", NULL);
    if (CHECK(q != NULL) && CHECK(q->attrs)) {
        CHECK_STR("q", q->id);
        CHECK_STR("q", q->aname);
        CHECK_STR("Find fruit", q->placeholder);
        CHECK_STR("search-box", q->testid);
        CHECK_STR("", q->label);
    }
    /* The ref is the one a snapshot shows for that line. */
    snap_query sq = {.query = "Checkout"};
    CHECK_INT(0, snap_observe(a, &sq, &r));
    co = elem(&s, "button", "Checkout", NULL);
    if (co) {
        char want[32];
        snprintf(want, sizeof want, "[%s]", co->ref);
        CHECK_HAS(r.text, want);
    }
    snap_result_free(&r);
    snap_elements_free(&s);
    snap_agent_free(a);
}

static const test_case TESTS[] = {
    {"elements_list", t_elements_list},
    {0},
};

int main(int argc, char **argv)
{
    if (testlib_world_up(&world, "replay-match", host_args, false) != 0)
        return 1;
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
