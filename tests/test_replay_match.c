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
#include "replay/replay.h"
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
        CHECK_STR("Banana 0.80 Add", add->rowtext);
        CHECK_STR("", co->rowtext);
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

static char *dup_or_null(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

/* A target as the recorder would keep it for e (new strings). */
static void target_of(const snap_elem *e, replay_target *t)
{
    memset(t, 0, sizeof *t);
    t->role = dup_or_null(e->role);
    t->name = dup_or_null(e->name);
    t->row = dup_or_null(e->row);
    t->section = dup_or_null(e->section);
    t->id = dup_or_null(e->id);
    t->name_attr = dup_or_null(e->aname);
    t->label = dup_or_null(e->label);
    t->placeholder = dup_or_null(e->placeholder);
    t->testid = dup_or_null(e->testid);
}

static void target_free(replay_target *t)
{
    free(t->role), free(t->name), free(t->row), free(t->section), free(t->id);
    free(t->name_attr), free(t->label), free(t->placeholder), free(t->testid);
    memset(t, 0, sizeof *t);
}

/* Record: the targets of the elements named (role, name, row or NULL) on
 * path, attributes read. */
static bool record(snap_agent *a, const char *const (*want)[3], size_t n, replay_target *out)
{
    snap_elems s;
    snap_result r = {0};
    bool ok = CHECK_INT(0, snap_elements(a, &s, &r)) &&
              CHECK_INT(0, snap_elements_attrs(a, &s, NULL, &r));
    for (size_t i = 0; ok && i < n; i++) {
        const snap_elem *e = elem(&s, want[i][0], want[i][1], want[i][2]);
        if (!CHECK(e != NULL)) {
            test_fail_detail("no single %s \"%s\"", want[i][0], want[i][1]);
            dump(&s);
            ok = false;
        } else {
            target_of(e, &out[i]);
        }
    }
    snap_result_free(&r);
    snap_elements_free(&s);
    return ok;
}

static int open_path(snap_agent *a, const char *path)
{
    char url[256];
    testlib_world_url(&world, url, sizeof url, "a.test", path);
    snap_result r = {0};
    int rc = snap_open(a, url, false, &r);
    if (!CHECK_INT(0, rc))
        test_fail_detail("open %s: %s", url, r.text ? r.text : "");
    snap_result_free(&r);
    return rc;
}

/* Replay's find for t under the trail key key (NULL: none); the match's
 * JSON into *json (new) when asked. */
static int find_key(snap_agent *a, const replay_target *t, const replay_key *key,
                    replay_match *m, char **json)
{
    snap_elems s;
    snap_result r = {0};
    int rc = replay_find(a, t, key, &s, m, &r);
    if (!CHECK_INT(0, rc))
        test_fail_detail("replay_find: %s", r.text ? r.text : "");
    if (json) {
        json_w w;
        json_w_init(&w);
        replay_match_json(&w, t, &s, m, a);
        *json = json_w_take(&w, NULL);
        json_w_free(&w);
    }
    snap_result_free(&r);
    snap_elements_free(&s);
    return rc;
}

static int find(snap_agent *a, const replay_target *t, replay_match *m, char **json)
{
    return find_key(a, t, NULL, m, json);
}

/* The page's status line: what was clicked, "none" when nothing was. */
static void check_status(snap_agent *a, const char *want)
{
    snap_query q = {.text = true};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(a, &q, &r));
    CHECK_HAS(r.text, want);
    snap_result_free(&r);
}

static const char *const SHOP[][3] = {
    {"button", "Add", "Banana"},
    {"textbox", "Search", NULL},
    {"button", "Checkout", NULL},
};
enum { T_ADD_BANANA, T_SEARCH, T_CHECKOUT, T_N };

/* Classes and layout changed, sections moved, rows reordered: every
 * target is still found, and row context picks Banana's Add where the
 * row now stands third. */
static void t_layout_changed_found(void)
{
    snap_agent *a = agent_at("/replay/shop.html");
    replay_target t[T_N] = {0};
    if (!a || !record(a, SHOP, T_N, t) || open_path(a, "/replay/shop-moved.html"))
        goto out;
    CHECK_STR("search-box", t[T_SEARCH].testid);
    for (int i = 0; i < T_N; i++) {
        replay_match m;
        char *json = NULL;
        if (!find(a, &t[i], &m, &json))
            if (!CHECK_INT(REPLAY_FOUND, m.verdict))
                test_fail_detail("target %d: %s", i, json ? json : "");
        if (i == T_ADD_BANANA && m.verdict == REPLAY_FOUND) {
            snap_result r = {0};
            CHECK_INT(0, snap_click(a, m.ref, NULL, &r));
            snap_result_free(&r);
            check_status(a, "clicked add banana");
        }
        free(json);
    }
out:
    for (int i = 0; i < T_N; i++)
        target_free(&t[i]);
    snap_agent_free(a);
}

/* A look-alike added beside the recorded control: ambiguous, both listed,
 * nothing found to act on (and nothing clicked). */
static void t_lookalike_ambiguous(void)
{
    snap_agent *a = agent_at("/replay/shop.html");
    replay_target t[T_N] = {0};
    if (!a || !record(a, SHOP, T_N, t) || open_path(a, "/replay/shop-lookalike.html"))
        goto out;
    replay_match m;
    char *json = NULL;
    if (!find(a, &t[T_CHECKOUT], &m, &json)) {
        CHECK_INT(REPLAY_AMBIGUOUS, m.verdict);
        CHECK_STR("", m.ref);
        CHECK_INT(2, (int)m.nlike);
        CHECK_INT(2, (int)m.ncand);
        CHECK_HAS(json, "\"verdict\":\"ambiguous\"");
        CHECK_HAS(json, "look-alike: 2 elements have this role, name (no row was recorded)");
    }
    free(json);
    check_status(a, "none");
    /* The rows' look-alikes keep telling themselves apart. */
    if (!find(a, &t[T_ADD_BANANA], &m, NULL))
        CHECK_INT(REPLAY_FOUND, m.verdict);
out:
    for (int i = 0; i < T_N; i++)
        target_free(&t[i]);
    snap_agent_free(a);
}

/* Session 21: a target whose row keeps an IBAN as {{*k:hex}} (its HMAC
 * under the trail key) is found under that key, the row with that IBAN
 * only; under another key, or with none, it is missing (fail closed:
 * never any word, nor the look-alike row of another IBAN), and nothing
 * is clicked. */
static void t_row_id_keyed(void)
{
    snap_agent *a = agent_at("/red8/payees.html");
    if (!a)
        return;
    unsigned char raw[REPLAY_KEY_LEN], raw2[REPLAY_KEY_LEN];
    for (size_t i = 0; i < REPLAY_KEY_LEN; i++) {
        raw[i] = (unsigned char)(3 * i + 1);
        raw2[i] = (unsigned char)(5 * i + 2);
    }
    replay_key key, other;
    replay_key_set(&key, raw);
    replay_key_set(&other, raw2);
    char *row = replay_text_hide_ids("Payee GB82WEST12345698765432 Alice Smith Select", NULL,
                                     &key);
    replay_target t = {.role = "button", .name = "Select", .row = row};
    if (!CHECK(row && strstr(row, "{{*k:")))
        goto out;
    const replay_key *K[] = {&key, &other, NULL};
    for (int i = 0; i < 3; i++) {
        replay_match m;
        char *json = NULL;
        if (!find_key(a, &t, K[i], &m, &json)) {
            bool ok = i ? CHECK_INT(REPLAY_MISSING, m.verdict)
                        : CHECK_INT(REPLAY_FOUND, m.verdict) && CHECK_INT(0, m.by_index);
            if (!ok)
                test_fail_detail("key %d: %s", i, json ? json : "");
        }
        free(json);
    }
    snap_query q = {.text = true};
    snap_result r = {0};
    CHECK_INT(0, snap_observe(a, &q, &r));
    CHECK_LACKS(r.text, "selected payee");
    snap_result_free(&r);
    /* the payee with another IBAN (?v=2): missing under the key too */
    if (!open_path(a, "/red8/payees.html?v=2")) {
        replay_match m;
        if (!find_key(a, &t, &key, &m, NULL))
            CHECK_INT(REPLAY_MISSING, m.verdict);
    }
out:
    free(row);
    replay_key_wipe(&key);
    replay_key_wipe(&other);
    snap_agent_free(a);
}

/* The recorded label changed: missing, the relabelled control the closest
 * candidate with why ("name ..., not ..."), nothing clicked. */
static void t_label_changed_diverges(void)
{
    snap_agent *a = agent_at("/replay/shop.html");
    replay_target t[T_N] = {0};
    if (!a || !record(a, SHOP, T_N, t) || open_path(a, "/replay/shop-relabel.html"))
        goto out;
    replay_match m;
    char *json = NULL;
    if (!find(a, &t[T_CHECKOUT], &m, &json)) {
        CHECK_INT(REPLAY_MISSING, m.verdict);
        CHECK_STR("", m.ref);
        CHECK(m.ncand >= 1);
        /* the candidate's page text framed in the markers (R4-6) */
        CHECK_HAS(json, "\"page\":\"<<<page-content nonce=");
        CHECK_HAS(json, "\\nname: Place order\\nsection: Pay\\n"
                  "why: name \\\"Place order\\\", not \\\"Checkout\\\"\\n<<<end page-content");
    }
    free(json);
    check_status(a, "none");
out:
    for (int i = 0; i < T_N; i++)
        target_free(&t[i]);
    snap_agent_free(a);
}

/* A stable attribute that reads differently rejects the element, even
 * with role and name equal; one the recording did not have does not. */
static void t_attribute_differs(void)
{
    snap_agent *a = agent_at("/replay/shop.html");
    replay_target t[T_N] = {0};
    if (!a || !record(a, SHOP, T_N, t))
        goto out;
    replay_match m;
    char *json = NULL;
    free(t[T_SEARCH].testid);
    t[T_SEARCH].testid = strdup("search-old");
    if (!find(a, &t[T_SEARCH], &m, &json)) {
        CHECK_INT(REPLAY_MISSING, m.verdict);
        CHECK_HAS(json, "test id \\\"search-box\\\", not \\\"search-old\\\"");
    }
    free(json);
    free(t[T_SEARCH].testid);
    t[T_SEARCH].testid = NULL;
    if (!find(a, &t[T_SEARCH], &m, NULL))
        CHECK_INT(REPLAY_FOUND, m.verdict);
out:
    for (int i = 0; i < T_N; i++)
        target_free(&t[i]);
    snap_agent_free(a);
}

/* A row recorded as the gate reads it (the row's text, its amount marked
 * "{{#}}" as the recorder writes it) finds its row where the rows moved
 * and the price changed; the same row with its price as digits does not
 * (digits are compared: red team s14, R4-8); a row that is gone is
 * missing, and the other rows' look-alikes are not taken for it. */
static void t_row_text(void)
{
    snap_agent *a = agent_at("/replay/shop-moved.html");
    if (!a)
        return;
    replay_target t = {.role = "button", .name = "Add", .row = "Apple 1.20 Add"};
    replay_match m;
    char *json = NULL;
    if (!find(a, &t, &m, &json))
        CHECK_INT(REPLAY_MISSING, m.verdict);
    free(json);
    json = NULL;
    t.row = "Apple {{#}} Add";
    if (!find(a, &t, &m, &json) && CHECK_INT(REPLAY_FOUND, m.verdict)) {
        snap_result r = {0};
        CHECK_INT(0, snap_click(a, m.ref, NULL, &r));
        snap_result_free(&r);
        check_status(a, "clicked add apple");
    } else {
        test_fail_detail("%s", json ? json : "");
    }
    free(json);
    json = NULL;
    t.row = "Durian 9.00 Add";
    if (!find(a, &t, &m, &json)) {
        CHECK_INT(REPLAY_MISSING, m.verdict);
        CHECK(m.ncand >= 3);
        CHECK_HAS(json, "row \\\"Cherry\\\", not \\\"Durian 9.00 Add\\\"");
    }
    free(json);
    snap_agent_free(a);
}

static const test_case TESTS[] = {
    {"elements_list", t_elements_list},
    {"layout_changed_found", t_layout_changed_found},
    {"lookalike_ambiguous", t_lookalike_ambiguous},
    {"row_id_keyed", t_row_id_keyed},
    {"label_changed_diverges", t_label_changed_diverges},
    {"attribute_differs", t_attribute_differs},
    {"row_text", t_row_text},
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
