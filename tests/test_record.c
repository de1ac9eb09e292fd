/*
 * test_record.c — recording a task through MCP (issue 14, points 1-3), on
 * real headless Chromium and the shop fixture (tests/fixtures/replay/):
 * `cdpgate mcp --record FILE` writes one step per action that passed the
 * gate and succeeded, each with its semantic target read before the
 * action, its start state and its effect; a typed text named as a
 * parameter is {{name}} everywhere in the trail (also where the page
 * echoed it); a secret typed into a password field is nowhere in the
 * trail's bytes; the file is mode 0600; browser_read returns the text
 * inside the page-content markers and is recorded as a named output;
 * browser_record keeps one trail per task under --record-dir only.
 */
#include "harness.h"
#include "testlib.h"
#include "fixture.h"

#include "replay/replay.h"
#include "url/url.h"
#include "vault/vault.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static testlib_world world;

#define SECRET "Zq7-SECRET-pw-4711"

typedef fixture_child child;

static bool ready(void)
{
    return testlib_need_browser() && testlib_need_cdpgate();
}

/* A grant for the shop's origin (tools: all but eval and upload). */
static void write_grant(const char *path, const char *extra)
{
    char origin[200];
    testlib_world_origin(&world, origin, sizeof origin, "shop.test");
    FILE *f = fopen(path, "w");
    if (!CHECK(f != NULL))
        return;
    fprintf(f, "{\"task\":\"price-watch\",\"origins\":[\"%s\"]%s}\n", origin,
            extra ? extra : "");
    fclose(f);
}

/* The ref on the line that ends with the row context needle. */
static void row_ref(const char *text, const char *needle, char *out, size_t cap)
{
    out[0] = 0;
    const char *p = text ? strstr(text, needle) : NULL;
    const char *e = NULL;
    for (const char *q = text; p && (q = strstr(q, "[e")) && q < p; q++)
        e = q;
    if (e)
        snprintf(out, cap, "%.*s", (int)strcspn(e + 1, "]"), e + 1);
}

/* The step of t with op (the nth such, from 0), or NULL. */
static const replay_step *step_of(const replay_trail *t, const char *op, int nth)
{
    for (size_t i = 0; t && i < t->nsteps; i++)
        if (strcmp(t->steps[i].op, op) == 0 && nth-- == 0)
            return &t->steps[i];
    return NULL;
}

static bool list_has(const replay_list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return true;
    return false;
}

/* A recorded MCP session: the steps, their targets and effects, the
 * parameter, the output, the needs; no secret in the bytes; 0600. */
static void t_mcp_record(void)
{
    if (!ready())
        return;
    char trail[400], grant[400], rules[200], url[300], args[600], ref[16], origin[200];
    snprintf(trail, sizeof trail, "%s/shop.trail", world.root);
    snprintf(grant, sizeof grant, "%s/grant-rec.json", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    write_grant(grant, NULL);
    testlib_world_origin(&world, origin, sizeof origin, "shop.test");
    const char *env[] = {"CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "--record", trail,
                          "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "record");
    testlib_world_url(&world, url, sizeof url, "shop.test", "/replay/record-shop.html?sid=abc123&x=1");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    char *r = testlib_mcp_tool(&c, 2, "browser_open", args);
    CHECK_HAS(r, "Add to cart");
    char search[16], pw[16];
    testlib_mcp_ref(r, "Search products", search, sizeof search);
    testlib_mcp_ref(r, "Password", pw, sizeof pw);
    row_ref(r, "(row: Floor lamp)", ref, sizeof ref);
    if (!CHECK(*search && *pw && *ref)) {
        test_fail_detail("%.3000s", r);
        free(r);
        goto out;
    }
    free(r);
    /* A typed text named as a parameter. */
    snprintf(args, sizeof args, "{\"ref\":\"%s\",\"text\":\"walnut lamp\",\"param\":\"query\"}",
             search);
    r = testlib_mcp_tool(&c, 3, "browser_type", args);
    CHECK_LACKS(r, "\"isError\":true");
    free(r);
    /* The agent typing a password: refused by the gate, never recorded. */
    snprintf(args, sizeof args, "{\"ref\":\"%s\",\"text\":\"" SECRET "\"}", pw);
    r = testlib_mcp_tool(&c, 4, "browser_type", args);
    CHECK_HAS(r, "\"isError\":true");
    free(r);
    /* The second row's button (same name as the first's). */
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", ref);
    r = testlib_mcp_tool(&c, 5, "browser_click", args);
    CHECK_HAS(r, "Added to cart");
    free(r);
    /* The output. */
    r = testlib_mcp_tool(&c, 6, "browser_snapshot", "{}");
    char price[16];
    testlib_mcp_ref(r, "$24.00", price, sizeof price);
    free(r);
    r = testlib_mcp_tool(&c, 7, "browser_read", "{\"query\":\"Price:\",\"name\":\"price\"}");
    CHECK_HAS(r, "page-content nonce=");
    CHECK_HAS(r, "\"name\":\"price\"");
    CHECK_HAS(r, "$24.00");
    CHECK_HAS(r, "\"recorded\":true");
    free(r);
    /* A read that names no output is refused, and not recorded. */
    r = testlib_mcp_tool(&c, 8, "browser_read", "{\"query\":\"Price:\",\"name\":\"../x\"}");
    CHECK_HAS(r, "\"isError\":true");
    free(r);
    /* Read-only calls are not steps. */
    r = testlib_mcp_tool(&c, 9, "browser_tabs", "{\"action\":\"list\"}");
    free(r);

    struct stat st;
    CHECK(stat(trail, &st) == 0 && (st.st_mode & 0777) == 0600);
    size_t len = 0;
    char *bytes = test_read_file(trail, &len);
    if (!CHECK(bytes))
        goto out;
    CHECK(strstr(bytes, SECRET) == NULL);
    CHECK(strstr(bytes, "walnut") == NULL);     /* the parameter's value, nowhere */
    CHECK(strstr(bytes, "abc123") == NULL);     /* a volatile URL parameter */
    replay_err err;
    replay_trail *t = replay_trail_parse(bytes, len, &err);
    if (!CHECK(t)) {
        test_fail_detail("%s\n%s", err.msg, bytes);
        free(bytes);
        goto out;
    }
    CHECK_INT(4, t->nsteps);    /* open, type, click, read; nothing else */
    CHECK_STR("price-watch", t->h.task);
    CHECK(list_has(&t->h.origins, origin));
    CHECK(list_has(&t->h.tools, "open") && list_has(&t->h.tools, "type") &&
          list_has(&t->h.tools, "click") && list_has(&t->h.tools, "text"));
    const replay_step *op = step_of(t, "open", 0), *ty = step_of(t, "type", 0),
                      *cl = step_of(t, "click", 0), *rd = step_of(t, "read", 0);
    if (CHECK(op && ty && cl && rd)) {
        CHECK(strstr(op->args, "x=1") && !strstr(op->args, "sid="));
        CHECK_STR("{\"text\":\"{{query}}\"}", ty->args);
        CHECK(ty->has_target);
        CHECK_STR("textbox", ty->target.role);
        CHECK_STR("Search products", ty->target.name);
        CHECK_STR("q", ty->target.id);
        CHECK_STR("q", ty->target.name_attr);
        CHECK_STR("search", ty->target.testid);
        CHECK_STR("lamp, desk...", ty->target.placeholder);
        CHECK_STR("Search", ty->target.section);
        CHECK_STR(origin, ty->state.origin);
        CHECK_STR("Shop", ty->state.title);
        CHECK(!ty->state.authenticated);
        CHECK_STR("{{query}}", ty->effect.value);
        CHECK_STR("interact", ty->cls);
        CHECK_STR("button", cl->target.role);
        CHECK_STR("Add to cart", cl->target.name);
        CHECK(cl->target.row && strstr(cl->target.row, "Floor lamp"));
        CHECK_STR("add", cl->target.testid);
        CHECK(cl->effect.appeared.n == 1 &&
              strstr(cl->effect.appeared.v[0], "Added to cart: Floor lamp"));
        CHECK_STR("price", rd->output);
        CHECK(rd->effect.value && strstr(rd->effect.value, "$24.00"));
        CHECK_STR("{\"query\":\"Price:\",\"name\":\"price\"}", rd->args);
    } else {
        test_fail_detail("%s", bytes);
    }
    replay_trail_free(t);
    free(bytes);
out:
    testlib_child_free(&c);
}

/* browser_record: offered only under --record-dir (and a grant that lets
 * the task record); a name, never a path; one trail per task. */
static void t_mcp_record_tool(void)
{
    if (!ready())
        return;
    char dir[400], grant[400], rules[200], url[300], args[600];
    snprintf(dir, sizeof dir, "%s/trails", world.root);
    mkdir(dir, 0700);
    snprintf(grant, sizeof grant, "%s/grant-tool.json", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    write_grant(grant, NULL);
    const char *env[] = {"CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    /* Without --record-dir the tool is not listed. */
    const char *argv0[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv0, false)))
        return;
    testlib_mcp_init(&c, "record");
    char *r = testlib_mcp_request(&c, 2, "tools/list", "{}", 20000);
    CHECK_HAS(r, "browser_read");
    CHECK_LACKS(r, "browser_record");
    free(r);
    testlib_child_free(&c);
    /* A grant whose tools list lacks "record" does not offer it either. */
    char grant2[400];
    snprintf(grant2, sizeof grant2, "%s/grant-tool2.json", world.root);
    write_grant(grant2, ",\"tools\":[\"open\",\"snapshot\",\"click\"]");
    const char *argv1[] = {testlib_cdpgate_bin(), rules, "--grant", grant2, "--record-dir", dir,
                           "mcp", NULL};
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv1, false)))
        return;
    testlib_mcp_init(&c, "record");
    r = testlib_mcp_request(&c, 2, "tools/list", "{}", 20000);
    CHECK_LACKS(r, "browser_record");
    free(r);
    testlib_child_free(&c);

    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "--record-dir", dir,
                          "mcp", NULL};
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "record");
    r = testlib_mcp_request(&c, 2, "tools/list", "{}", 20000);
    CHECK_HAS(r, "browser_record");
    free(r);
    r = testlib_mcp_tool(&c, 3, "browser_record", "{\"action\":\"start\",\"name\":\"../evil\"}");
    CHECK_HAS(r, "\"isError\":true");
    free(r);
    r = testlib_mcp_tool(&c, 4, "browser_record", "{\"action\":\"start\",\"name\":\"task-1\"}");
    CHECK_HAS(r, "recording to trail task-1");
    free(r);
    testlib_world_url(&world, url, sizeof url, "shop.test", "/replay/record-shop.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    r = testlib_mcp_tool(&c, 5, "browser_open", args);
    free(r);
    r = testlib_mcp_tool(&c, 6, "browser_record", "{\"action\":\"stop\"}");
    CHECK_HAS(r, "recording stopped: 1 steps");
    free(r);
    /* After stop, actions are not recorded. */
    r = testlib_mcp_tool(&c, 7, "browser_scroll", "{\"direction\":\"down\"}");
    free(r);
    char path[500];
    snprintf(path, sizeof path, "%s/task-1.trail", dir);
    replay_err err;
    replay_trail *t = replay_trail_load(path, &err);
    if (CHECK(t)) {
        CHECK_INT(1, t->nsteps);
        CHECK_STR("open", t->steps[0].op);
    } else {
        test_fail_detail("%s", err.msg);
    }
    replay_trail_free(t);
    struct stat st;
    snprintf(path, sizeof path, "%s/../evil.trail", dir);
    CHECK(stat(path, &st) != 0);
    testlib_child_free(&c);
}

/* The recorder's rules without a browser: a text typed where the
 * chokepoint read no target, or into a field that was ever secret, is not
 * recorded; a login is recorded by identity. */
static void t_rec_secret_rules(void)
{
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    replay_act act = {0};
    act.op = "type";
    act.text = SECRET;
    snap_step_facts f = {0};
    f.has_target = true;
    f.secret = true;
    f.role = "textbox";
    f.name = "Password";
    CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true,\"value\":\"" SECRET "\"}",
                                   &err));
    CHECK_INT(0, replay_rec_action(r, &act, NULL, NULL, &err));
    CHECK_INT(0, replay_rec_param(r, "who", "bob", &err));
    CHECK_INT(REPLAY_EARG, replay_rec_param(r, "a b", "x", &err));
    CHECK_INT(0, replay_rec_identity(r, "login", "https://bank.test", "alice", true, &err));
    replay_rec_close(r);
    size_t len = 0;
    char *bytes = test_read_file(path, &len);
    if (CHECK(bytes)) {
        CHECK(strstr(bytes, SECRET) == NULL);
        CHECK_HAS(bytes, "secret field, value not recorded");
        CHECK_HAS(bytes, "identity alice, human logged in");
        CHECK_HAS(bytes, "\"identities\":{\"https://bank.test\":\"alice\"}");
    }
    free(bytes);
    /* A file that is not a trail is never recorded over. */
    FILE *fp = fopen(path, "w");
    if (fp) {
        fputs("not a trail\n", fp);
        fclose(fp);
    }
    CHECK(replay_rec_open(path, "0.1.0", NULL, &err) == NULL);
    CHECK_HAS(err.msg, "trail line 1");
    bytes = test_read_file(path, &len);
    CHECK(bytes && strcmp(bytes, "not a trail\n") == 0);
    free(bytes);
    test_rm_rf(dir);
}

/* Bearer secrets in an address are never recorded (red team s13, R1): a
 * password-reset token in the path, an OAuth token in the fragment, in
 * the arguments and the state alike; an ordinary address is kept as it
 * is. Fails before the change: both tokens in args.url and state.url. */
static void t_rec_bearer_urls(void)
{
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    static const char *const U[] = {
        "http://a.test:8080/reset-password/Zq8vT3kLm9Xw2RpY7sNd4HfJ",
        "http://a.test:8080/app/paste.html#access_token=FRAGTOKEN5566&token_type=bearer",
        "http://a.test:8080/invite/ab12cd34ef",
        "http://a.test:8080/#eyJhbGciOiJIUzI1NiJ9x1",
        "https://docs.python.org/3.12/library/stdtypes.html#str.split",
    };
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++) {
        replay_act act = {0};
        act.op = "open";
        act.url = U[i];
        snap_step_facts f = {0};
        f.url = U[i];
        f.origin = "http://a.test:8080";
        CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
    }
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    if (CHECK(bytes)) {
        CHECK_LACKS(bytes, "Zq8vT3kLm9Xw2RpY7sNd4HfJ");
        CHECK_LACKS(bytes, "FRAGTOKEN5566");
        CHECK_LACKS(bytes, "ab12cd34ef");
        CHECK_LACKS(bytes, "eyJhbGciOiJIUzI1NiJ9x1");
        CHECK_HAS(bytes, "\"url\":\"http://a.test:8080/reset-password/[redacted]\"");
        CHECK_HAS(bytes, "\"url\":\"http://a.test:8080/app/paste.html#[redacted]\"");
        CHECK_HAS(bytes, "\"url\":\"https://docs.python.org/3.12/library/stdtypes.html"
                         "#str.split\"");
    }
    free(bytes);
    test_rm_rf(dir);
}

/* Bearer-like is a token's shape, not any long text mixing letters and
 * digits (red team s13, R1, refined): fragments and path words that are
 * words and numbers joined by hyphens or underscores are kept (the
 * replay of "#release-notes-2024-q3" diverged once it was recorded
 * "#[redacted]"); a JWT, 32 hex digits, a UUID, a 40-character
 * base64url token, an "sk_live_..." key and a numeric code after
 * "verify" are still redacted. Fails before the change: the kept ones
 * were "[redacted]". */
static void t_rec_bearer_shape(void)
{
    static const char *const KEEP[] = {
        "http://a.test:8080/docs/changes.html#release-notes-2024-q3",
        "http://a.test:8080/blog/2024/05/my-first-post-v2#section-3-2-introduction",
        "http://a.test:8080/shop/iphone-15-pro-max-256gb",
        "http://a.test:8080/wiki/Release_Notes_2024_Q3_Final",
        "http://a.test:8080/recettes/caf%C3%A9-und-kuchen-rezepte-2024",
        "http://a.test:8080/orders/ORD-2024-000123-summary",
    };
    static const char *const REDACT[] = {
        "http://a.test:8080/s/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.dozjgNryP4J3jVmNHl0w5N_X",
        "http://a.test:8080/d/9f86d081884c7d659a2feaa0c55ad015",
        "http://a.test:8080/i/123e4567-e89b-12d3-a456-426614174000",
        "http://a.test:8080/m/Q2hhbmdlLXRoaXMtdG9rZW4tMTIzNDU2Nzg5MA_x",
        "http://a.test:8080/k/sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "http://a.test:8080/k/sk_live_abcdef1234567890abcd",
        "http://a.test:8080/verify/73920184",
        "http://a.test:8080/t/ab12-cd34-ef56-gh78-ij90",
        "http://a.test:8080/a/x#a8f3k2m9x7q1w5e4",
    };
    static const char *const GONE[] = {
        "dozjgNryP4J3jVmNHl0w5N_X", "9f86d081884c7d659a2feaa0c55ad015",
        "426614174000", "Q2hhbmdlLXRoaXMtdG9rZW4tMTIzNDU2Nzg5MA_x", "4eC39HqLyjWDarjtT1zdp7dc",
        "abcdef1234567890abcd", "73920184", "ab12-cd34", "a8f3k2m9x7q1w5e4",
    };
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    const char *const *L[] = {KEEP, REDACT};
    size_t N[] = {sizeof KEEP / sizeof KEEP[0], sizeof REDACT / sizeof REDACT[0]};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < N[l]; i++) {
            replay_act act = {0};
            act.op = "open";
            act.url = L[l][i];
            snap_step_facts f = {0};
            f.url = L[l][i];
            f.origin = "http://a.test:8080";
            CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
        }
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    if (CHECK(bytes)) {
        char want[300];
        for (size_t i = 0; i < N[0]; i++) {
            snprintf(want, sizeof want, "\"url\":\"%s\"", KEEP[i]);
            if (!CHECK_HAS(bytes, want))
                fprintf(stderr, "  kept? %s\n", KEEP[i]);
        }
        for (size_t i = 0; i < sizeof GONE / sizeof GONE[0]; i++)
            if (!CHECK_LACKS(bytes, GONE[i]))
                fprintf(stderr, "  redacted? %s\n", GONE[i]);
        CHECK_HAS(bytes, "\"url\":\"http://a.test:8080/verify/[redacted]\"");
        CHECK_HAS(bytes, "\"url\":\"http://a.test:8080/a/x#[redacted]\"");
    }
    free(bytes);
    test_rm_rf(dir);
}

/* `cdpgate --record FILE snapshot URL`, twice: each command adds its open
 * to the same trail; the URL's token is redacted (red team s14, R4-1: a
 * secret is written "[redacted]", never dropped silently). */
static void t_cli_record(void)
{
    if (!ready())
        return;
    char trail[400], rules[200], url[300];
    snprintf(trail, sizeof trail, "%s/cli.trail", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    testlib_world_url(&world, url, sizeof url, "shop.test", "/replay/record-shop.html?token=T0K3N");
    const char *env[] = {"CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--record", trail, "snapshot", url,
                          NULL};
    for (int i = 0; i < 2; i++) {
        child c;
        if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
            return;
        CHECK_INT(0, fixture_child_wait(&c, 60000));
        testlib_child_free(&c);
    }
    replay_err err;
    replay_trail *t = replay_trail_load(trail, &err);
    if (CHECK(t)) {
        CHECK_INT(2, t->nsteps);
        CHECK(t->nsteps == 2 && strcmp(t->steps[1].op, "open") == 0 &&
              t->steps[1].n == 2 &&
              strstr(t->steps[1].args, "/replay/record-shop.html?token=[redacted]\"") &&
              !strstr(t->steps[1].args, "T0K3N"));
    } else {
        test_fail_detail("%s", err.msg);
    }
    replay_trail_free(t);
}

/* Session 21, through the CLI: `--trail-key FILE` names the trail key a
 * replay compares a target's hidden identifiers under. A dry run of a
 * trail whose row keeps an IBAN under key A says, under key B, that its
 * identifiers were hashed under A's id and this machine's key is B's
 * (never either key); under A it says nothing of the kind; a missing key
 * file is said as such and not made. Fails on main 7616387 (no
 * --trail-key: a usage error). */
static void t_cli_trail_key(void)
{
    if (!testlib_need_cdpgate())
        return;
    char trail[400], ka[400], kb[400], kn[400];
    snprintf(trail, sizeof trail, "%s/keyed.trail", world.root);
    snprintf(ka, sizeof ka, "%s/key-a", world.root);
    snprintf(kb, sizeof kb, "%s/key-b", world.root);
    snprintf(kn, sizeof kn, "%s/key-none", world.root);
    replay_key a, b;
    replay_err err = {0};
    if (!CHECK_INT(0, replay_key_load(ka, true, &a, &err)) ||
        !CHECK_INT(0, replay_key_load(kb, true, &b, &err)))
        return;
    char *row = replay_text_hide_ids("Payee GB82WEST12345698765432 Alice Smith Select", NULL,
                                     &a);
    char hex[2][2 * REPLAY_KEY_LEN + 1], body[1200];
    for (size_t i = 0; i < REPLAY_KEY_LEN; i++) {
        snprintf(hex[0] + 2 * i, 3, "%02x", a.k[i]);
        snprintf(hex[1] + 2 * i, 3, "%02x", b.k[i]);
    }
    snprintf(body, sizeof body,
             "{\"cdpgate_trail\":1,\"created\":\"2026-12-04T00:00:00Z\",\"cdpgate\":\"0.1.0\","
             "\"trail_key\":\"%s\"}\n"
             "{\"step\":1,\"op\":\"click\",\"args\":{},\"target\":{\"role\":\"button\","
             "\"name\":\"Select\",\"row\":\"%s\"},\"state\":{\"origin\":\"http://a.test\"}}\n",
             a.id, row ? row : "");
    free(row);
    FILE *f = fopen(trail, "w");
    bool wrote = f && fputs(body, f) >= 0;
    if (f && fclose(f) != 0)
        wrote = false;
    if (!CHECK(wrote))
        return;
    const char *env[] = {"CDPGATE_KEY_CMD", "CDPGATE_TRAIL_KEY", NULL};
    const char *keys[] = {kb, ka, kn};
    for (int i = 0; i < 3; i++) {
        const char *argv[] = {testlib_cdpgate_bin(), "--trail-key", keys[i], "replay",
                              "--dry-run", trail, NULL};
        child c;
        if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
            return;
        int rc = fixture_child_wait(&c, 30000);
        const char *out = c.got ? c.got : "";
        char *errs = fixture_child_stderr(&c);
        bool ok = CHECK_INT(0, rc) && CHECK_LACKS(out, hex[0]) && CHECK_LACKS(out, hex[1]) &&
                  CHECK_LACKS(errs, hex[0]) && CHECK_LACKS(errs, hex[1]);
        if (i == 0)
            ok = ok && CHECK_HAS(out, "\"trail_key\":\"the trail's identifiers were hashed") &&
                 CHECK_HAS(out, a.id) && CHECK_HAS(out, b.id);
        else if (i == 1)
            ok = ok && CHECK_LACKS(out, "\"trail_key\"");
        else
            ok = ok && CHECK_HAS(out, "no trail key") && CHECK(access(kn, F_OK) != 0);
        if (!ok)
            test_fail_detail("key %d: exit %d\n%s\n%s", i, rc, out, errs ? errs : "");
        free(errs);
        testlib_child_free(&c);
    }
    replay_key_wipe(&a);
    replay_key_wipe(&b);
}

/* ---- red team s14 (round 4): trailsec's regression tests ---- */

/* R4-1's rule is general (token shape + key words), not the red team's
 * names: other secret keys and shapes are redacted (the key kept, the
 * value "[redacted]"), ordinary parameters and paths are kept as they
 * are (a word value under a weak key, "authuser", "keyword", a wiki
 * title with ':'), and noise (utm_*, a cache buster) is still dropped.
 * Fails before the change: the redacted ones were written or dropped. */
static void t_rec_url_rule(void)
{
    static const char *const KEEP[] = {
        "http://a.test:8080/issues?state=open&page=2&sort=price",
        "http://a.test:8080/s?q=walnut+lamp&authuser=0&keyword=shoes",
        "http://a.test:8080/wiki/Category:1990s_American_films",
        "http://a.test:8080/shop?country_code=US&lang=en",
        "http://a.test:8080/next?return=/account/settings",
    };
    static const char *const WANT[] = {
        "http://a.test:8080/oauth/callback?code=[redacted]&state=[redacted]",
        "http://a.test:8080/sso?SAMLResponse=[redacted]&RelayState=x",
        "http://a.test:8080/f.pdf?X-Goog-Signature=[redacted]&Key-Pair-Id=[redacted]",
        "http://a.test:8080/login?pwd=[redacted]&user=bob",
        "http://a.test:8080/dl?id=[redacted]",
        "http://[redacted]@a.test:8080/x",
        "http://a.test:8080/p?oauth_token=[redacted]",
    };
    static const char *const U[] = {
        "http://a.test:8080/oauth/callback?code=4/0AX4XfWhQx9&state=af0ifjsldkj",
        "http://a.test:8080/sso?SAMLResponse=PHNhbWxwOlJlc3BvbnNlIHhtbG5z&RelayState=x",
        "http://a.test:8080/f.pdf?X-Goog-Signature=9a8b7c&Key-Pair-Id=APKAEIBAERJR2EXAMPLE",
        "http://a.test:8080/login?pwd=hunter2&user=bob&utm_source=mail&cb=123",
        "http://a.test:8080/dl?id=9f86d081884c7d659a2feaa0c55ad015",
        "http://bob@a.test:8080/x",
        "http://a.test:8080/p?oauth_token=abc",
    };
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    const char *const *L[] = {KEEP, U};
    size_t N[] = {sizeof KEEP / sizeof KEEP[0], sizeof U / sizeof U[0]};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < N[l]; i++) {
            replay_act act = {.op = "open", .url = L[l][i]};
            snap_step_facts f = {.url = L[l][i], .origin = "http://a.test:8080"};
            CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
        }
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    char want[300];
    for (size_t i = 0; bytes && i < N[0]; i++) {
        snprintf(want, sizeof want, "\"url\":\"%s\"", KEEP[i]);
        if (!CHECK_HAS(bytes, want))
            fprintf(stderr, "  kept? %s\n", KEEP[i]);
    }
    for (size_t i = 0; bytes && i < N[1]; i++) {
        snprintf(want, sizeof want, "\"url\":\"%s\"", WANT[i]);
        if (!CHECK_HAS(bytes, want))
            fprintf(stderr, "  redacted? %s\n", WANT[i]);
    }
    CHECK(bytes != NULL);
    free(bytes);
    test_rm_rf(dir);
}

/* Red team s15 (red5, R5-2): secrets the trail's URL rule still writes:
 * a password under "pw" (the fixture bank's own field name) or "userPw",
 * a ';jsessionid=' path parameter, a ';'-separated query pair, a token in
 * a nested return URL (raw and percent-encoded). Each secret must be
 * absent from the trail file. Fails on main 8072822. */
static void t_red5_rec_url_more(void)
{
    static const char *const U[] = {
        "http://a.test:8080/bank/login/verify?user=alice&pw=hunt3r7&otp=123456",
        "http://a.test:8080/p?q=1&userPw=Tr0ub4dorPw",
        "http://a.test:8080/account;jsessionid=0123456789ABCDEF0123456789ABCDEF",
        "http://a.test:8080/a?x=1;access_token=abcdefgh12345",
        "http://a.test:8080/x?next=/cb?token=nestedtok1",
        "http://a.test:8080/x?redirect=http%3A%2F%2Fb.test%2Fcb%3Faccess_token%3Dencodedtok1",
    };
    static const char *const SECRETS5[] = {"hunt3r7", "Tr0ub4dorPw",
        "0123456789ABCDEF0123456789ABCDEF", "abcdefgh12345", "nestedtok1", "encodedtok1"};
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++) {
        replay_act act = {.op = "open", .url = U[i]};
        snap_step_facts f = {.url = U[i], .origin = "http://a.test:8080"};
        CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
    }
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    for (size_t i = 0; bytes && i < sizeof SECRETS5 / sizeof SECRETS5[0]; i++)
        if (!CHECK(!strstr(bytes, SECRETS5[i])))
            fprintf(stderr, "  in the trail: %s\n", U[i]);
    CHECK(bytes != NULL);
    free(bytes);
    test_rm_rf(dir);
}

/* Record one "open" step per URL of u (n) into a new trail; its bytes
 * (new), NULL on failure. */
static char *rec_opens(const char *const *u, size_t n)
{
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return NULL;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        replay_act act = {.op = "open", .url = u[i]};
        snap_step_facts f = {.url = u[i], .origin = "http://a.test:8080"};
        CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
    }
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    test_rm_rf(dir);
    return bytes;
}

/* R5-2's rule is general, both sides: what a demanding reader expects
 * hidden is (short password keys, ';' pairs and path parameters of any
 * name, personal numbers under their keys, a nested return URL raw or
 * percent-encoded, a short code after a short-link segment), and docs,
 * search, pagination and plain return addresses stay as they are; a
 * session id in a path parameter is dropped as a query's is (the replay
 * gets a session afresh). Each URL goes through url_redact twice
 * (idempotent). Fails before the fix: the secrets were kept. */
static void t_rec_url_r5_rule(void)
{
    static const char *const KEEP[] = {
        "http://a.test:8080/docs/3/library/stdtypes.html#str.split",
        "http://a.test:8080/search?q=walnut+lamp&start=10&p=2",
        "http://a.test:8080/search?p=walnut+lamp",
        "http://a.test:8080/list?page=3&per_page=50;sort=price",
        "http://a.test:8080/blog/?p=123",
        "http://a.test:8080/shop?cc=US&card=gift&cardType=visa&account=settings",
        "http://a.test:8080/r/programming",
        "http://a.test:8080/s?k=walnut+lamp",
        "http://a.test:8080/next?return=/account/settings",
        "http://a.test:8080/login?continue=https%3A%2F%2Fmail.a.test%2Finbox",
    };
    static const char *const WANT[] = {
        "http://a.test:8080/login?user=alice&pw=[redacted]",
        "http://a.test:8080/l?p=[redacted]&userPw=[redacted]&passwd=[redacted]",
        "http://a.test:8080/account;x=[redacted]/a",
        "http://a.test:8080/a?x=1;access_token=[redacted]",
        "http://a.test:8080/f?ssn=[redacted]&card=[redacted]&cvv=[redacted]&iban=[redacted]",
        "http://a.test:8080/f?cardNumber=[redacted]&account_no=[redacted]&cc=[redacted]",
        "http://a.test:8080/x?next=/cb?token=[redacted]",
        ("http://a.test:8080/x?continue=https%3A%2F%2Fb.test%2Fcb%3Fcode%3D[redacted]"
         "%26state%3D[redacted]"),
        "http://a.test:8080/r/[redacted]",
        "http://a.test:8080/x?n=%2Fa%3BJSESSIONID%3D[redacted]",
    };
    static const char *const U[] = {
        "http://a.test:8080/login?user=alice&pw=hunt3r",
        "http://a.test:8080/l?p=hunter2&userPw=Tr0ub4dor&passwd=letmein",
        "http://a.test:8080/account;jsessionid=0123456789ABCDEF;x=y/a;sid=77",
        "http://a.test:8080/a?x=1;access_token=abcdefgh12345",
        "http://a.test:8080/f?ssn=123-45-6789&card=4111111111111111&cvv=123&iban=GB82WEST",
        "http://a.test:8080/f?cardNumber=4111111111111111&account_no=12345678&cc=4111111111111111",
        "http://a.test:8080/x?next=/cb?token=nestedtok1",
        ("http://a.test:8080/x?continue=https%3A%2F%2Fb.test%2Fcb%3Fcode%3Dq8vT3kLm9Xw2%26"
         "state%3DRpY7sNd4HfJ8xQ"),
        "http://a.test:8080/r/Kx9mQ2vB7",
        "http://a.test:8080/x?n=%2Fa%3BJSESSIONID%3DZZ99",
    };
    const char *all[sizeof KEEP / sizeof KEEP[0] + sizeof U / sizeof U[0]];
    size_t nk = sizeof KEEP / sizeof KEEP[0], nu = sizeof U / sizeof U[0];
    memcpy(all, KEEP, sizeof KEEP);
    memcpy(all + nk, U, sizeof U);
    char *bytes = rec_opens(all, nk + nu);
    char want[400];
    for (size_t i = 0; bytes && i < nk + nu; i++) {
        snprintf(want, sizeof want, "\"url\":\"%s\"", i < nk ? KEEP[i] : WANT[i - nk]);
        if (!CHECK_HAS(bytes, want))
            fprintf(stderr, "  from %s\n", all[i]);
    }
    CHECK(bytes != NULL);
    free(bytes);
    /* the one rule, every flag: applied again, nothing changes */
    for (size_t i = 0; i < nk + nu; i++)
        for (unsigned fl = 0; fl < 4; fl++) {
            char *r1 = url_redact(all[i], fl, NULL), *r2 = r1 ? url_redact(r1, fl, NULL) : NULL;
            if (!CHECK(r1 && r2 && strcmp(r1, r2) == 0))
                fprintf(stderr, "  not idempotent (%u): %s -> %s -> %s\n", fl, all[i],
                        r1 ? r1 : "", r2 ? r2 : "");
            free(r1);
            free(r2);
        }
    /* shown to the model (by name, no token shapes): the same names */
    char *r = url_redact(U[1], 0, NULL);
    CHECK_STR("http://a.test:8080/l?p=[redacted]&userPw=[redacted]&passwd=[redacted]", r);
    free(r);
    r = url_redact(U[6], 0, NULL);
    CHECK_STR(WANT[6], r);
    free(r);
}

/* Red team s17 (red7, R7-1): secrets the trail's URL rule (url_redact,
 * URL_REDACT_TOKENS: what replay/record.c writes) still keeps: the
 * 6-digit one-time code of an email verification or sign-in link, in its
 * query under "code" (a weak key: a code needs 8+ characters there) or
 * as a path segment after "verify"; a card number (16 digits, Luhn-valid) under "pan" or "number". Each secret
 * must be absent from the trail file. Fails on main 90de5e4. */
static void t_red7_rec_url_codes(void)
{
    static const char *const U[] = {
        "http://a.test:8080/verify?email=alice%40example.test&code=482913",
        "http://a.test:8080/login/verify/573920",
        "http://a.test:8080/pay?pan=4111111111111111&exp=1227",
        "http://a.test:8080/pay?number=5555555555554444",
    };
    static const char *const SECRETS7[] = {"482913", "573920",
                                           "4111111111111111", "5555555555554444"};
    char *bytes = rec_opens(U, sizeof U / sizeof U[0]);
    for (size_t i = 0; bytes && i < sizeof SECRETS7 / sizeof SECRETS7[0]; i++)
        if (!CHECK(!strstr(bytes, SECRETS7[i])))
            test_fail_detail("in the trail: %s\n", U[i]);
    CHECK(bytes != NULL);
    free(bytes);
}

/* R5-3 at the recorder: a number is written "{{#}}" only as an amount
 * (beside a currency sign or code), never as a reference ("Invoice
 * 2023.11"); a long row is cut at 120 characters with the recorder's own
 * marker, which no page text can spell (a page's "{{" is "{{{{"). Fails
 * before the fix: "Invoice {{#}}", the long row whole. */
static void t_red5_rec_rows(void)
{
    static const char *const ROWS[] = {
        "Invoice 2023.11 from Acme Ltd  Pay",
        "Acme Ltd, account 4711.00, Pay",
        "Widget $24.50 or 20.00 EUR or EUR 1,234.50 or 9,99 \xe2\x82\xac Buy",
        ("Payee Alice Smith, Acme Supplies Ltd, 12 High Street, Springfield, account ending 4321, "
         "added 2024-01-02, reference 0042 -- Pay now to IBAN GB00 MALLORY"),
        "Pay Alice {{\xe2\x80\xa6}}",
    };
    static const char *const WANT[] = {
        "\"row\":\"Invoice 2023.11 from Acme Ltd  Pay\"",
        "\"row\":\"Acme Ltd, account 4711.00, Pay\"",
        "\"row\":\"Widget ${{#}} or {{#}} EUR or EUR {{#}} or {{#}} \xe2\x82\xac Buy\"",
        ("\"row\":\"Payee Alice Smith, Acme Supplies Ltd, 12 High Street, Springfield, account "
         "ending 4321, added 2024-01-02, reference 0042{{\xe2\x80\xa6}}\""),
        "\"row\":\"Pay Alice {{{{\xe2\x80\xa6}}\"",
    };
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        replay_act act = {.op = "click"};
        snap_step_facts f = {.has_target = true, .role = "button", .name = "Pay",
                             .row = ROWS[i], .origin = "http://a.test:8080"};
        CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
    }
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    for (size_t i = 0; bytes && i < sizeof WANT / sizeof WANT[0]; i++)
        if (!CHECK_HAS(bytes, WANT[i]))
            fprintf(stderr, "  row %zu\n", i);
    CHECK(bytes != NULL);
    free(bytes);
    /* the matcher: a reference is compared, an amount is any number, a
     * row not cut is whole, a cut one is a start */
    char *m = replay_row_mark("Invoice 2023.11 from Acme Ltd  Pay");
    CHECK(m && !replay_row_eq(m, "Invoice 9999.99 from Acme Ltd  Pay", NULL));
    CHECK(m && replay_row_eq(m, "Invoice 2023.11  from acme ltd Pay", NULL));
    free(m);
    m = replay_row_mark("Widget $24.50 Buy");
    CHECK(m && replay_row_eq(m, "Widget $99.00 Buy", NULL) &&
          !replay_row_eq(m, "Widget $ Buy", NULL));
    free(m);
    const char *payee = ROWS[3];
    char rec[200];
    snprintf(rec, sizeof rec, "%.104s", payee);
    CHECK(!replay_row_eq(rec, payee, NULL));
    CHECK(replay_row_eq(rec, rec, NULL));
    snprintf(rec, sizeof rec, "%.104s{{\xe2\x80\xa6}}", payee);
    CHECK(replay_row_eq(rec, payee, NULL));
    CHECK(!replay_row_eq(rec, "Payee Alice Smith", NULL));
    test_rm_rf(dir);
}

/* Issue 14 (trailurl, point 4): a parameter's value in a later step's
 * target (its name, row, label, placeholder) is written {{name}}, as in a
 * typed text, a literal "{{" as "{{{{"; a value the row's cut split is
 * dropped, not kept in part. Fails before: "Alice Smith" in the trail. */
static void t_rec_target_params(void)
{
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    CHECK_INT(0, replay_rec_param(r, "who", "Alice Smith", &err));
    replay_act act = {.op = "click"};
    snap_step_facts f = {.has_target = true, .role = "button", .name = "Open Alice Smith",
                         .row = "Alice Smith {{x}} $5.00 Open Alice Smith",
                         .label = "Alice Smith", .placeholder = "e.g. Alice Smith",
                         .section = "Alice Smith's files", .origin = "http://a.test:8080"};
    CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
    /* 115 letters (115 digits would be a digest to the secret rule) */
    char row[200];
    memset(row, 'x', 115);
    snprintf(row + 115, sizeof row - 115, " Alice Smith");
    f.row = row;
    CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    if (CHECK(bytes)) {
        CHECK_LACKS(bytes, "Alice");
        CHECK_HAS(bytes, "\"name\":\"Open {{who}}\"");
        CHECK_HAS(bytes, "\"row\":\"{{who}} {{{{x}} ${{#}} Open {{who}}\"");
        CHECK_HAS(bytes, "\"label\":\"{{who}}\"");
        CHECK_HAS(bytes, "\"placeholder\":\"e.g. {{who}}\"");
        CHECK_HAS(bytes, "\"section\":\"{{who}}'s files\"");
        CHECK_HAS(bytes, "xxxx {{\xe2\x80\xa6}}\"");
    }
    free(bytes);
    test_rm_rf(dir);
}

/* Red team s17 (red7, R7-6): R6-5's twin in a step's target. A token the
 * page shows in the row of the button the agent clicks (an API keys page:
 * "Production key sk_live_... Created ... Revoke"; a personal access token
 * beside its "Copy" button) is written into the trail's target.row whole,
 * and a button named after it (aria-label "Copy ghp_...") into
 * target.name. Each token must be absent from the trail file. Fails on
 * main 90de5e4. */
static void t_red7_rec_row_token(void)
{
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    replay_act act = {.op = "click"};
    snap_step_facts f = {.has_target = true, .role = "button", .name = "Revoke",
                         .row = "Production key sk_live_4eC39HqLyjWDarjtT1zdp7dc Created "
                                "2024-01-02 Revoke",
                         .origin = "http://a.test:8080", .url = "http://a.test:8080/keys"};
    CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
    snap_step_facts g = {.has_target = true, .role = "button",
                         .name = "Copy ghp_R7x4TOKLEAK9vQm2B7kP4wZt6Yw1Rv8Jq3",
                         .row = "CI token ghp_R7x4TOKLEAK9vQm2B7kP4wZt6Yw1Rv8Jq3 Copy",
                         .origin = "http://a.test:8080", .url = "http://a.test:8080/tokens"};
    CHECK_INT(0, replay_rec_action(r, &act, &g, "{\"ok\":true}", &err));
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    if (CHECK(bytes)) {
        CHECK_LACKS(bytes, "sk_live_4eC39HqLyjWDarjtT1zdp7dc");
        CHECK_LACKS(bytes, "ghp_R7x4TOKLEAK9vQm2B7kP4wZt6Yw1Rv8Jq3");
    }
    free(bytes);
    test_rm_rf(dir);
}

/* Red team s17 (red7, R7-8): R6-5 is wider than token shapes. The page
 * text a step records (effect.appeared after a click, a read's
 * effect.value) keeps a one-time code the page shows ("Your sign-in code
 * is 482913", a magic-link page's code, an SMS-fallback page) and the
 * recovery codes a 2FA set-up page shows once; neither is token-shaped
 * (6 digits; grouped 5+5 hex), so a fix by url_redact's bearer shapes
 * alone keeps them. Each must be absent from the trail file. Fails on
 * main 90de5e4. */
static void t_red7_rec_appeared_codes(void)
{
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    snap_step_facts f = {.has_target = true, .role = "button", .name = "Email me a code",
                         .origin = "http://a.test:8080", .url = "http://a.test:8080/signin"};
    replay_act cl = {.op = "click"};
    CHECK_INT(0, replay_rec_action(r, &cl, &f, "{\"ok\":true,\"new_text\":\"Your sign-in code "
                                   "is 482913\"}", &err));
    /* the code a few words after the word that names it, as banks write it */
    CHECK_INT(0, replay_rec_action(r, &cl, &f, "{\"ok\":true,\"new_text\":\"Your verification "
                                   "code for Acme Bank is 730551\"}", &err));
    snap_step_facts g = {.has_target = true, .role = "button", .name = "Set up two-factor",
                         .origin = "http://a.test:8080", .url = "http://a.test:8080/2fa"};
    CHECK_INT(0, replay_rec_action(r, &cl, &g, "{\"ok\":true,\"new_text\":\"Save your recovery "
                                   "codes: 4f3a2-9c8b1 7d6e5-0a1b2 e9f8a-b7c6d\"}", &err));
    replay_act rd = {.op = "read", .query = "recovery codes", .output = "codes",
                     .value = "4f3a2-9c8b1 7d6e5-0a1b2 e9f8a-b7c6d"};
    CHECK_INT(0, replay_rec_action(r, &rd, &g, "{\"ok\":true}", &err));
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    if (CHECK(bytes)) {
        CHECK_HAS(bytes, "\"op\":\"read\"");
        CHECK_LACKS(bytes, "482913");
        CHECK_LACKS(bytes, "730551");
        CHECK_LACKS(bytes, "4f3a2-9c8b1");
        CHECK_LACKS(bytes, "e9f8a-b7c6d");
    }
    free(bytes);
    test_rm_rf(dir);
}

/* Issue 14 point 2 (trail18): the one rule for secret-shaped text a trail
 * keeps (url_secret_shaped, replay/text.c), on what a bank, a 2FA set-up
 * page or a mail provider shows: the code before the word naming it, a
 * few words after it, in groups, a list of recovery codes, a card number
 * in groups, a CVV, a set-up key; and what it keeps (an invoice and an
 * order number, a date, an amount, a card's last digits, a status id).
 * Replay matches the hidden text with new secrets, not without one. */
static void t_trail_secret_rule(void)
{
    static const char *const HIDE[][2] = {
        {"482913 is your Facebook code", "482913"},
        {"G-482913 is your Google verification code.", "482913"},
        {"Your Acme Bank one-time passcode: 7305 51", "7305"},
        {"Use code 123-456 to sign in", "123-456"},
        {"Your PIN is 4821.", "4821"},
        {"CVV 123", "123"},
        {"Card number 4111 1111 1111 1111 exp 12/27", "4111"},
        {"Paid with 4111-1111-1111-1111", "4111"},
        {"Backup codes: abcd-efgh ijkl-mnop", "ijkl-mnop"},
        {"Recovery codes\n4f3a2-9c8b1\n7d6e5-0a1b2\ne9f8a-b7c6d\n1a2b3-4c5d6\n9f8e7-6d5c4\n"
         "0a9b8-7c6d5\nb1c2d-3e4f5\n5e4d3-2c1b0", "5e4d3-2c1b0"},
        {"Can't scan it? Enter this key: JBSW Y3DP EHPK 3PXP", "EHPK"},
        {"Your recovery code: ABCDE-FGHIJ-KLMNO-PQRST-UVWXY", "KLMNO"},
        {"Subject: Your verification code is 730551 - Inbox", "730551"},
    };
    static const char *const KEEP[] = {
        "Invoice 1002 $120.00 Pay", "Order 4821 shipped on 2024-01-02",
        "Code of conduct, updated 2024-01-02", "Key features: 24.00 USD per month",
        "Your card ending 4242 was charged", "Status 1729384756102938475",
    };
    for (size_t i = 0; i < sizeof HIDE / sizeof HIDE[0]; i++) {
        char *h = replay_text_hide(HIDE[i][0], NULL);
        if (!CHECK(h && !strstr(h, HIDE[i][1]) && strstr(h, REPLAY_TEXT_HIDDEN)))
            test_fail_detail("kept: %s -> %s\n", HIDE[i][0], h ? h : "(null)");
        else if (!CHECK(replay_text_match(h, HIDE[i][0], NULL, true, NULL)))
            test_fail_detail("no match: %s\n", h);
        free(h);
    }
    for (size_t i = 0; i < sizeof KEEP / sizeof KEEP[0]; i++) {
        char *h = replay_text_hide(KEEP[i], NULL);
        if (!CHECK(h && strcmp(h, KEEP[i]) == 0))
            test_fail_detail("changed: %s -> %s\n", KEEP[i], h ? h : "(null)");
        free(h);
    }
    /* a new code, a new card: still the same text; none: another */
    char *h = replay_text_hide("482913 is your Facebook code", NULL);
    CHECK(h && replay_text_match(h, "730551 is your Facebook code", NULL, true, NULL));
    CHECK(h && !replay_text_match(h, "is your Facebook code", NULL, true, NULL));
    CHECK(h && !replay_text_match(h, "expired is your Facebook code", NULL, true, NULL));
    free(h);
    h = replay_text_hide("Card 4111 1111 1111 1111 saved", NULL);
    CHECK(h && replay_text_match(h, "Card 5555 5555 5555 4444 saved", NULL, true, NULL));
    CHECK(h && !replay_text_match(h, "Card on file saved", NULL, true, NULL));
    free(h);
    /* a row: the hidden word is one secret-shaped word or group, no wildcard */
    CHECK(replay_row_eq("Production key {{*}} Revoke",
                        "Production key sk_live_9xQ2mW7kR4tP8vB3nL6xC1dF Revoke", NULL));
    CHECK(!replay_row_eq("Production key {{*}} Revoke", "Production key revoked Revoke", NULL));
    CHECK(!replay_row_eq("Production key {{*}} Revoke", "Production key Revoke", NULL));
    CHECK(!replay_row_eq("Production key {{*}} Revoke",
                         "Test key sk_test_9xQ2mW7kR4tP8vB3nL6xC1dF Revoke", NULL));
    /* URLs: the same rule */
    static const char *const URL_HIDE[][2] = {
        {"http://a.test/confirm?c=482913", "482913"},
        {"http://a.test/otp/482913", "482913"},
        {"http://a.test/card/4111-1111-1111-1111/edit", "4111"},
    };
    for (size_t i = 0; i < sizeof URL_HIDE / sizeof URL_HIDE[0]; i++) {
        char *u = replay_url_scrub(URL_HIDE[i][0]);
        if (!CHECK(u && !strstr(u, URL_HIDE[i][1])))
            test_fail_detail("kept: %s\n", u ? u : "(null)");
        free(u);
    }
    static const char *const URL_KEEP[] = {
        "http://a.test/orders/4821", "http://a.test/p/123456",
        "http://a.test/status/1729384756102938475", "http://a.test/search?page=1234",
        "http://a.test/pay?exp=1227&amount=4200",
    };
    for (size_t i = 0; i < sizeof URL_KEEP / sizeof URL_KEEP[0]; i++) {
        char *u = replay_url_scrub(URL_KEEP[i]);
        if (!CHECK(u && strcmp(u, URL_KEEP[i]) == 0))
            test_fail_detail("changed: %s\n", u ? u : "(null)");
        free(u);
    }
}

/* R4-5 at the recorder: a typed text, a key, a query and a read that
 * spell "{{name}}" are written with "{{" as "{{{{" (docs/replay.md,
 * "Parameters"), the recorder's own parameter as {{name}}, also where a
 * page echoes its value beside literal braces. Fails before the change:
 * "{{ssn}}" was written as it is. */
static void t_rec_param_escape(void)
{
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    snap_step_facts f = {.has_target = true, .role = "textbox", .name = "Q",
                         .origin = "http://a.test:8080"};
    replay_act t1 = {.op = "type", .text = "walnut", .param = "q"};
    CHECK_INT(0, replay_rec_action(r, &t1, &f, "{\"ok\":true,\"new_text\":\"{walnut} "
                                   "{{q}}\"}", &err));
    replay_act t2 = {.op = "type", .text = "see {{ssn}} {{{x"};
    CHECK_INT(0, replay_rec_action(r, &t2, &f, "{\"ok\":true,\"value\":\"see {{ssn}} {{{x\"}",
                                   &err));
    replay_act rd = {.op = "read", .query = "{{q}}", .output = "o", .value = "{{ssn}}"};
    CHECK_INT(0, replay_rec_action(r, &rd, &f, "{\"ok\":true}", &err));
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    if (CHECK(bytes)) {
        CHECK_HAS(bytes, "\"text\":\"{{q}}\"");
        CHECK_HAS(bytes, "\"appeared\":[\"{{{q}}} {{{{q}}\"]");
        CHECK_HAS(bytes, "\"text\":\"see {{{{ssn}} {{{{{x\"");
        CHECK_HAS(bytes, "\"value\":\"see {{{{ssn}} {{{{{x\"");
        CHECK_HAS(bytes, "\"query\":\"{{{{q}}\"");
        CHECK_HAS(bytes, "\"value\":\"{{{{ssn}}\"");
        CHECK_LACKS(bytes, "\"see {{ssn}}");
    }
    free(bytes);
    test_rm_rf(dir);
}

/* R4-1: bearer secrets in an address the recorder keeps. R1's fix reads
 * path segments (letters and digits and "-_.~%+=" only) and fragments,
 * and drops query keys of a fixed list: a token in a query value under
 * another key (a magic-login link's ?magic=, a reset link's
 * ?reset_token=, a CAS ticket, an S3 presigned URL, an API key), a
 * signed path segment holding ':' (Django's TimestampSigner) and a
 * password in the userinfo are written into the trail as they are.
 * Fails on main = flaw present. */
static void t_red4_rec_url_secrets(void)
{
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    static const char *const U[] = {
        "http://a.test:8080/login/magic?magic=MAGICq8vT3kLm9Xw2RpY7",
        "http://a.test:8080/password/reset?reset_token=RSTq7w8E9r0T1y2U3i4",
        "http://a.test:8080/cas/login?service=x&ticket=ST-1234-TICKETfGhIjKlMnOp",
        "http://a.test:8080/r.pdf?X-Amz-Credential=AKIA&X-Amz-Signature=AMZSIG0a1b2c3d4e5f6a7b8",
        "http://a.test:8080/api/export?apikey=APIKEYlive51HxYzAbCdEf",
        "http://a.test:8080/confirm-email/MQ:1vJvNA:DJANGOsLq2Xz8PbR7tYv/",
        "http://alice:USERINFOpw77@a.test:8080/",
        "http://a.test:8080/oauth/cb?refresh_token=REFRESHq8vT3kLm9Xw2",
        "http://a.test:8080/app?accessToken=CAMELACCESSq8vT3kLm9",
        "http://a.test:8080/app?sessionToken=CAMELSESSq8vT3kLm9",
    };
    static const char *const SECRETS[] = {
        "MAGICq8vT3kLm9Xw2RpY7", "RSTq7w8E9r0T1y2U3i4", "TICKETfGhIjKlMnOp",
        "AMZSIG0a1b2c3d4e5f6a7b8", "APIKEYlive51HxYzAbCdEf", "DJANGOsLq2Xz8PbR7tYv",
        "USERINFOpw77", "REFRESHq8vT3kLm9Xw2", "CAMELACCESSq8vT3kLm9", "CAMELSESSq8vT3kLm9",
    };
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++) {
        replay_act act = {0};
        act.op = "open";
        act.url = U[i];
        snap_step_facts f = {0};
        f.url = U[i];
        f.origin = "http://a.test:8080";
        CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
    }
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    if (CHECK(bytes))
        for (size_t i = 0; i < sizeof SECRETS / sizeof SECRETS[0]; i++)
            CHECK_LACKS(bytes, SECRETS[i]);
    free(bytes);
    test_rm_rf(dir);
}

/* R4-2: keys pressed into a secret field are recorded. A text typed into
 * a field that is or was secret is not (the step says "secret field,
 * value not recorded"), but browser_press's key is written whatever the
 * focused field: a card number entered digit by digit with press into an
 * autocomplete=cc-number field (no credential to the gate: cc-csc only)
 * puts the number in the trail, one key a step; a select's values on a
 * cc-exp select likewise. The facts here are what the chokepoint gives
 * for such a field (has_target, secret). Fails on main = flaw present. */
static void t_red4_rec_press_secret(void)
{
    char dir[256], path[300];
    if (testlib_tempdir("rec", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_err err;
    replay_rec *r = replay_rec_open(path, "0.1.0", "t", &err);
    if (!CHECK(r))
        return;
    snap_step_facts f = {0};
    f.has_target = true;
    f.secret = true;
    f.role = "textbox";
    f.name = "Card number";
    f.origin = "http://a.test:8080";
    static const char *const K[] = {"Digit7", "9", "3", "1"};
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
        replay_act act = {0};
        act.op = "press";
        act.key = K[i];
        CHECK_INT(0, replay_rec_action(r, &act, &f, "{\"ok\":true}", &err));
    }
    const char *vals[] = {"EXPMONTH11"};
    replay_act sel = {0};
    sel.op = "select";
    sel.values = vals;
    sel.nvalues = 1;
    f.name = "Expiry month";
    f.role = "combobox";
    CHECK_INT(0, replay_rec_action(r, &sel, &f, "{\"ok\":true}", &err));
    replay_rec_close(r);
    char *bytes = test_read_file(path, NULL);
    if (CHECK(bytes)) {
        CHECK_LACKS(bytes, "\"key\":\"9\"");
        CHECK_LACKS(bytes, "\"key\":\"Digit7\"");
        CHECK_LACKS(bytes, "EXPMONTH11");
    }
    free(bytes);
    test_rm_rf(dir);
}

/* R4-2 end to end, and browser_read on a box holding secret fields: in
 * `cdpgate mcp --record`, the agent clicks the card field of
 * tests/fixtures/red4/card.html (autocomplete=cc-number) and presses
 * 4, 1, 1, 1 (allowed: a card number is no credential to the gate, only
 * cc-csc is), selects the cc-exp-month select's 11, then reads the box
 * holding a password, a one-time-code contenteditable and a saved card
 * field (browser_read, recorded as an output). The trail must hold none
 * of the keys, the month or the secret values; the read's result none of
 * the secret values. Fails on main = flaw present. */
static void t_red4_mcp_press_secret(void)
{
    if (!ready())
        return;
    char trail[400], grant[400], rules[200], url[300], args[600], cc[16], exp[16], box[16];
    snprintf(trail, sizeof trail, "%s/red4card.trail", world.root);
    snprintf(grant, sizeof grant, "%s/grant-red4.json", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    write_grant(grant, NULL);
    const char *env[] = {"CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "--record", trail,
                          "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "record");
    testlib_world_url(&world, url, sizeof url, "shop.test", "/red4/card.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    char *r = testlib_mcp_tool(&c, 2, "browser_open", args);
    testlib_mcp_ref(r, "Card number", cc, sizeof cc);
    testlib_mcp_ref(r, "Expiry month", exp, sizeof exp);
    CHECK_LACKS(r, "PWPREFILL4242");
    CHECK_LACKS(r, "OTPTEXT9911");
    CHECK_LACKS(r, "4111222233334444");
    if (!CHECK(*cc && *exp)) {
        test_fail_detail("%.3000s", r);
        free(r);
        goto out;
    }
    free(r);
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", cc);
    r = testlib_mcp_tool(&c, 3, "browser_click", args);
    CHECK_LACKS(r, "\"isError\":true");
    free(r);
    static const char *const K[] = {"4", "1", "1", "7"};
    for (int i = 0; i < 4; i++) {
        snprintf(args, sizeof args, "{\"key\":\"%s\"}", K[i]);
        r = testlib_mcp_tool(&c, 4 + i, "browser_press", args);
        if (!CHECK_LACKS(r, "\"isError\":true"))
            test_fail_detail("press %s: %.1500s", K[i], r);
        free(r);
    }
    snprintf(args, sizeof args, "{\"ref\":\"%s\",\"values\":[\"11\"]}", exp);
    r = testlib_mcp_tool(&c, 9, "browser_select", args);
    if (!CHECK_LACKS(r, "\"isError\":true"))
        test_fail_detail("select: %.1500s", r);
    free(r);
    /* browser_read on the part of the page with the secret fields */
    r = testlib_mcp_tool(&c, 10, "browser_read", "{\"query\":\"Code\",\"name\":\"codes\"}");
    CHECK_LACKS(r, "OTPTEXT9911");
    free(r);
    r = testlib_mcp_tool(&c, 11, "browser_snapshot", "{}");
    testlib_mcp_ref(r, "Saved card", box, sizeof box);
    free(r);
    if (*box) {
        snprintf(args, sizeof args, "{\"ref\":\"%s\",\"name\":\"saved\"}", box);
        r = testlib_mcp_tool(&c, 12, "browser_read", args);
        CHECK_LACKS(r, "4111222233334444");
        free(r);
    }
    char *bytes = test_read_file(trail, NULL);
    if (CHECK(bytes)) {
        CHECK_HAS(bytes, "\"op\":\"press\"");
        CHECK_LACKS(bytes, "\"key\":\"7\"");
        CHECK_LACKS(bytes, "\"key\":\"4\"");
        CHECK_LACKS(bytes, "\"values\":[\"11\"]");
        CHECK_LACKS(bytes, "PWPREFILL4242");
        CHECK_LACKS(bytes, "OTPTEXT9911");
        CHECK_LACKS(bytes, "4111222233334444");
        CHECK_LACKS(bytes, "4117");
    }
    free(bytes);
out:
    testlib_child_free(&c);
}


/* Red team s16, R6-5: page text that appeared after a step, and a
 * browser_read's text, are written into the trail as they are
 * (effect.appeared, effect.value): a token the page shows once after
 * "Create token" (shaped as the URL rule's bearer tokens) is in the trail
 * file; the URL rule (url_redact) would have written it [redacted] in an
 * address. */
static int cli_replay(const char *grant, const char *trail, const char *extra, char *out,
                      size_t cap);

/* R6-5 (session 17): the trail of red6-token.html replays after the page
 * shows another token and code (switch "token2": the effect's hidden word
 * stands for the new one), and diverges when it shows none ("tokenfail":
 * a word that is no secret does not stand for it). */
static void red6_token_replays(const char *grant, const char *trail)
{
    char out[16384];
    if (CHECK_INT(0, fixture_server_switch("token2"))) {
        if (!CHECK_INT(0, cli_replay(grant, trail, "", out, sizeof out)))
            test_fail_detail("%.3000s", out);
        CHECK_HAS(out, "\"status\":\"done\"");
        CHECK_HAS(out, "ghp_Q2w8NEWTOKEN4xLp7Rt3Zk9Vb6Mn1Cd5Fh0");   /* the output, read now */
    }
    if (CHECK_INT(0, fixture_server_switch("tokenfail"))) {
        if (!CHECK_INT(4, cli_replay(grant, trail, "", out, sizeof out)))
            test_fail_detail("%.3000s", out);
        CHECK_HAS(out, "\"divergence\":{\"step\":2,\"op\":\"click\",\"reason\":\"effect\"");
    }
    fixture_server_switch("");
}

static void t_red6_rec_appeared_token(void)
{
    if (!ready())
        return;
    char trail[400], grant[400], rules[200], url[300], args[600], mk[16];
    snprintf(trail, sizeof trail, "%s/red6token.trail", world.root);
    snprintf(grant, sizeof grant, "%s/grant-red6.json", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    write_grant(grant, NULL);
    const char *env[] = {"CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "--record", trail,
                          "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "record");
    testlib_world_url(&world, url, sizeof url, "shop.test", "/replay/red6-token.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    char *r = testlib_mcp_tool(&c, 2, "browser_open", args);
    testlib_mcp_ref(r, "Create token", mk, sizeof mk);
    free(r);
    if (CHECK(*mk)) {
        snprintf(args, sizeof args, "{\"ref\":\"%s\"}", mk);
        r = testlib_mcp_tool(&c, 3, "browser_click", args);
        CHECK_HAS(r, "TOKLEAK");      /* the model sees it: the page showed it */
        free(r);
        r = testlib_mcp_tool(&c, 4, "browser_read", "{\"query\":\"token\",\"name\":\"tok\"}");
        free(r);
        r = testlib_mcp_tool(&c, 5, "browser_read",
                             "{\"query\":\"Backup code\",\"name\":\"codes\"}");
        CHECK_HAS(r, "7391-8426-5510");
        free(r);
    }
    char *bytes = test_read_file(trail, NULL);
    if (CHECK(bytes)) {
        CHECK_HAS(bytes, "\"op\":\"click\"");
        CHECK_LACKS(bytes, "ghp_R6x4TOKLEAK9vQm2B7kP4wZt6Yw1Rv8Jq3");
        /* (session 17) what replay needs is kept, the secret-shaped word
         * written {{*}}; a one-time code after "code" too */
        CHECK_HAS(bytes, "\"appeared\":[\"Your new token (shown once): {{*}}\"]");
        CHECK_HAS(bytes, "Backup code: {{*}}");
        CHECK_LACKS(bytes, "7391-8426-5510");
    }
    free(bytes);
    testlib_child_free(&c);
    red6_token_replays(grant, trail);
}

/* ---- red team s14 (round 4): trailplay's regression tests ---- */

/* The person's unattended replay of trail (cdpgate replay, extra options
 * before the trail's path) into out; its exit status. */
static int cli_replay(const char *grant, const char *trail, const char *extra, char *out,
                      size_t cap)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --browser-arg '%s' --grant %s replay %s %s 2>/dev/null",
             testlib_cdpgate_bin(), FIXTURE_HOST_RULES, grant, extra, trail);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, cap - 1, p) : 0;
    out[n] = 0;
    int st = p ? pclose(p) : -1;
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* R4-4: the model writes into the person's trails. A person keeps
 * DIR/price-watch.trail (open the shop, read "Price:" as the output
 * price) for an unattended `cdpgate replay`. In an MCP session under
 * --record-dir, the model calls browser_record start with the same name:
 * refused (before the fix the recorder went on with the person's trail, so
 * the model's next actions became steps 3, 4, here another read named
 * price, and the next `cdpgate replay` returned the model's "price").
 * browser_replay with update on that trail is refused too. A trail the
 * model makes says "by":"agent": the unattended replay refuses it (exit 5,
 * agent_steps) unless --accept-agent-steps. A second output of one name
 * is refused while recording. */
static void t_red4_mcp_trail_poison(void)
{
    if (!ready())
        return;
    char dir[400], trail[500], grant[400], rules[200], url[300], args[600], origin[200];
    snprintf(dir, sizeof dir, "%s/red4trails", world.root);
    mkdir(dir, 0700);
    snprintf(trail, sizeof trail, "%s/price-watch.trail", dir);
    snprintf(grant, sizeof grant, "%s/grant-red4p.json", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    write_grant(grant, ",\"tools\":[\"open\",\"snapshot\",\"text\",\"record\",\"replay\"]");
    testlib_world_origin(&world, origin, sizeof origin, "shop.test");
    FILE *f = fopen(trail, "w");
    if (!CHECK(f))
        return;
    fprintf(f, "{\"cdpgate_trail\":1,\"created\":\"2026-12-03T06:30:00Z\",\"cdpgate\":\"0.1.0\","
            "\"task\":\"price-watch\",\"needs\":{\"origins\":[\"%s\"],\"tools\":[\"open\","
            "\"text\"]}}\n"
            "{\"step\":1,\"op\":\"open\",\"args\":{\"url\":\"%s/replay/record-shop.html\"}}\n"
            "{\"step\":2,\"op\":\"read\",\"args\":{\"query\":\"Price:\",\"name\":\"price\"}}\n",
            origin, origin);
    fclose(f);
    const char *env[] = {"CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "--record-dir", dir,
                          "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "record");
    char *r = testlib_mcp_tool(&c, 2, "browser_record",
                               "{\"action\":\"start\",\"name\":\"price-watch\"}");
    CHECK_HAS(r, "\"isError\":true");     /* an existing trail is not the model's to extend */
    CHECK_HAS(r, "not the agent's to change");
    free(r);
    testlib_world_url(&world, url, sizeof url, "shop.test", "/replay/record-shop.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    r = testlib_mcp_tool(&c, 3, "browser_open", args);
    free(r);
    r = testlib_mcp_tool(&c, 4, "browser_read", "{\"query\":\"Floor lamp\",\"name\":\"price\"}");
    free(r);
    r = testlib_mcp_tool(&c, 5, "browser_record", "{\"action\":\"stop\"}");
    free(r);
    /* a heal of the person's trail: refused before anything runs */
    r = testlib_mcp_tool(&c, 6, "browser_replay",
                         "{\"trail\":\"price-watch\",\"update\":true,\"from\":2}");
    CHECK_HAS(r, "\"isError\":true");
    CHECK_HAS(r, "not yours to change");
    free(r);
    /* the model's own trail: made "by":"agent"; one output name once */
    r = testlib_mcp_tool(&c, 7, "browser_record", "{\"action\":\"start\",\"name\":\"mine\"}");
    CHECK_HAS(r, "recording to trail mine");
    free(r);
    r = testlib_mcp_tool(&c, 8, "browser_open", args);
    free(r);
    r = testlib_mcp_tool(&c, 9, "browser_read", "{\"query\":\"Price:\",\"name\":\"price\"}");
    CHECK_LACKS(r, "\"isError\":true");
    free(r);
    r = testlib_mcp_tool(&c, 10, "browser_read", "{\"query\":\"Floor lamp\",\"name\":\"price\"}");
    CHECK_HAS(r, "\"isError\":true");
    CHECK_HAS(r, "is step 2's already");
    free(r);
    r = testlib_mcp_tool(&c, 11, "browser_record", "{\"action\":\"stop\"}");
    CHECK_HAS(r, "recording stopped: 2 steps");
    free(r);
    /* made in this session: the model may go on with it */
    r = testlib_mcp_tool(&c, 12, "browser_record", "{\"action\":\"start\",\"name\":\"mine\"}");
    CHECK_HAS(r, "recording to trail mine (continued)");
    free(r);
    testlib_child_free(&c);
    replay_err err;
    replay_trail *t = replay_trail_load(trail, &err);
    if (CHECK(t)) {
        if (!CHECK_INT(2, t->nsteps))
            test_fail_detail("the person's trail now has %zu steps\n", t->nsteps);
    }
    replay_trail_free(t);
    /* the person's unattended replay */
    static char out[65536];
    CHECK_INT(0, cli_replay(grant, trail, "", out, sizeof out));
    CHECK_HAS(out, "\"status\":\"done\"");
    if (!CHECK_LACKS(out, "Floor lamp"))
        test_fail_detail("replay result: %.2000s\n", out);
    /* the model's trail, unattended: refused, then accepted */
    char mine[500];
    snprintf(mine, sizeof mine, "%s/mine.trail", dir);
    char *bytes = test_read_file(mine, NULL);
    CHECK_HAS(bytes, "\"by\":\"agent\"");
    free(bytes);
    CHECK_INT(5, cli_replay(grant, mine, "", out, sizeof out));
    CHECK_HAS(out, "\"need\":\"agent_steps\",\"value\":\"steps 1, 2\"");
    CHECK_INT(5, cli_replay(grant, mine, "--dry-run", out, sizeof out));
    CHECK_HAS(out, "\"step\":1,\"op\":\"open\",\"by\":\"agent\"");
    CHECK_INT(0, cli_replay(grant, mine, "--accept-agent-steps", out, sizeof out));
    CHECK_HAS(out, "\"outputs\":{\"price\":");
    /* two steps of one output name (a trail edited by hand): refused */
    f = fopen(trail, "a");
    if (CHECK(f)) {
        fprintf(f, "{\"step\":3,\"op\":\"read\",\"args\":{\"query\":\"Floor lamp\","
                "\"name\":\"price\"}}\n");
        fclose(f);
    }
    CHECK_INT(5, cli_replay(grant, trail, "", out, sizeof out));
    CHECK_HAS(out, "\"need\":\"output\",\"value\":\"price\"");
    CHECK_LACKS(out, "Floor lamp");
}

/* With both --record FILE (the host's) and --record-dir, browser_record
 * starts and stops the model's own recording only: the host's trail goes
 * on recording every step (before the fix, browser_record start stopped
 * the host's recorder and switched to the model's trail; stop ended it),
 * and the model cannot record into the host's file. */
static void t_mcp_host_record_kept(void)
{
    if (!ready())
        return;
    char dir[400], host[500], grant[400], rules[200], url[300], args[600];
    snprintf(dir, sizeof dir, "%s/hosttrails", world.root);
    mkdir(dir, 0700);
    snprintf(host, sizeof host, "%s/host.trail", dir);
    snprintf(grant, sizeof grant, "%s/grant-host.json", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    write_grant(grant, NULL);
    const char *env[] = {"CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "--record", host,
                          "--record-dir", dir, "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "record");
    testlib_world_url(&world, url, sizeof url, "shop.test", "/replay/record-shop.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    char *r = testlib_mcp_tool(&c, 2, "browser_open", args);              /* host: 1 */
    free(r);
    r = testlib_mcp_tool(&c, 3, "browser_record", "{\"action\":\"stop\"}");
    CHECK_HAS(r, "\"isError\":true");
    CHECK_HAS(r, "not yours to stop");
    free(r);
    r = testlib_mcp_tool(&c, 4, "browser_record", "{\"action\":\"start\",\"name\":\"host\"}");
    CHECK_HAS(r, "\"isError\":true");
    free(r);
    r = testlib_mcp_tool(&c, 5, "browser_record", "{\"action\":\"start\",\"name\":\"t1\"}");
    CHECK_HAS(r, "recording to trail t1");
    free(r);
    r = testlib_mcp_tool(&c, 6, "browser_scroll", "{\"direction\":\"down\"}");  /* both */
    free(r);
    r = testlib_mcp_tool(&c, 7, "browser_record", "{\"action\":\"stop\"}");
    CHECK_HAS(r, "recording stopped: 1 steps");
    free(r);
    r = testlib_mcp_tool(&c, 8, "browser_scroll", "{\"direction\":\"up\"}");    /* host */
    free(r);
    testlib_child_free(&c);
    replay_err err;
    replay_trail *t = replay_trail_load(host, &err);
    if (CHECK(t)) {
        if (!CHECK_INT(3, t->nsteps))
            test_fail_detail("the host's trail has %zu steps\n", t->nsteps);
        CHECK(!t->h.by_agent);
    }
    replay_trail_free(t);
    char path[500];
    snprintf(path, sizeof path, "%s/t1.trail", dir);
    t = replay_trail_load(path, &err);
    if (CHECK(t)) {
        CHECK_INT(1, t->nsteps);
        CHECK(t->h.by_agent);
    }
    replay_trail_free(t);
}

/* ---- red team s18 (round 8) ---- */

/* R8-4 (after trail18's one rule, its work in progress at 08:25, and on
 * main): page text a trail keeps must not hold these secrets, which the
 * secret-shaped rule does not see: a wallet's recovery phrase (twelve
 * plain words after "recovery phrase" / "seed": the wallet itself), a
 * temporary password with symbols or of letters only right after
 * "password", and a sign-in code with no keyword ("Use 482913 to log in",
 * "482913 is your Acme sign-in number"). Each secret word must be gone
 * from replay_text_hide's output. Fails on main 9eb564c and on trail18's
 * tree at 08:25. */
static void t_red8_text_secret_shapes(void)
{
    static const char *const T[][2] = {
        {"Your recovery phrase: witch collapse practice feed shame open despair creek road "
         "again ice least", "despair creek"},
        {"seed: legal winner thank year wave sausage worth useful legal winner thank yellow",
         "sausage worth"},
        {"User created. Temporary password: Xk9#mP2!qL", "Xk9#mP2!qL"},
        {"Your temporary password is Tr0ub4dor&3", "Tr0ub4dor&3"},
        {"Your temporary password is correcthorsebatterystaple", "correcthorsebatterystaple"},
        {"Use 482913 to log in to Acme.", "482913"},
        {"482913 is your Acme sign-in number", "482913"},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        char *h = replay_text_hide(T[i][0], NULL);
        if (!CHECK(h && !strstr(h, T[i][1])))
            test_fail_detail("kept in the trail: %s", h ? h : "(null)");
        /* trail19b: replay still matches the page's text it came from */
        if (!CHECK(h && replay_text_match(h, T[i][0], NULL, true, NULL)))
            test_fail_detail("no longer matches its page: %s", h ? h : "(null)");
        free(h);
    }
}

/* trail19b (R8-4): what a word naming a secret gives, of any shape, is
 * hidden to its sentence's end as REPLAY_TEXT_REST; replay reads it as
 * any words (a new temporary password next run), the rest still checked. */
static void t_rec_rest_hidden(void)
{
    char *h = replay_text_hide("Temporary password: Xk9#mP2!qL. Sign in now", NULL);
    CHECK(h && strcmp(h, "Temporary password: " REPLAY_TEXT_REST " Sign in now") == 0);
    CHECK(h && replay_text_match(h, "Temporary password: Q!w e2. Sign in now", NULL, true, NULL));
    CHECK(h && !replay_text_match(h, "Temporary password: Q!w. Call us", NULL, true, NULL));
    CHECK(h && !replay_text_match(h, "Temporary password: Sign in now", NULL, true, NULL));
    CHECK(replay_row_eq("Door code is " REPLAY_TEXT_REST " Edit", "Door code is 77#1 Edit",
                        NULL));
    CHECK(!replay_row_eq("Door code is " REPLAY_TEXT_REST " Edit", "Door code is 77#1 Delete",
                         NULL));
    free(h);
}

/* R8-4, the URL half (url_redact, the rule trails, evidence and results
 * share; as of 4949160): capability links kept whole: a share link
 * ("/share/AbCdEfGh": anyone holding it reads the document), a workspace
 * join link of words ("/join/BRIGHT-OTTER-HAPPY-42"), a wallet's phrase in
 * a query ("?phrase=witch+collapse+..."). Each secret part must be gone.
 * Fails on main 2ea0670. */
static void t_red8_url_capability(void)
{
    static const char *const U[][2] = {
        {"https://app.test/share/AbCdEfGh", "AbCdEfGh"},
        {"https://app.test/join/BRIGHT-OTTER-HAPPY-42", "OTTER"},
        {"https://wallet.test/backup?phrase=witch+collapse+practice+feed+shame+open+despair+creek",
         "despair"},
    };
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++) {
        char *r = url_redact(U[i][0], URL_REDACT_TOKENS, NULL);
        if (!CHECK(r && !strstr(r, U[i][1])))
            test_fail_detail("kept: %s", r ? r : "(null)");
        free(r);
    }
}

/* Session 20: a target's hidden identifier was written {{*:16 hex}}, 64
 * bits of its SHA-256 (8 hex before: a page could make an id of its own
 * choice holding a known payee's 32 bits in about 2^32 hashes, and be
 * taken for that payee at replay). replay_row_eq compares all 64 bits: a
 * marker whose first 32 bits are the word's but not the rest is another
 * word; a trail written before (8 hex) is read as before; a marker of
 * another length is no marker (text, compared as written). Session 21:
 * such trails are still read so, with a trail key or none. */
static void t_trail_id_64(void)
{
    static const char IBAN[] = "GB82WEST12345698765432";
    static const char ROW[] = "Payee GB82WEST12345698765432 Alice Smith Select";
    static const char OTHER[] = "Payee GB33MALL98765432101234 Alice Smith Select";
    static const unsigned char RAW[REPLAY_KEY_LEN] = {7};
    replay_key key;
    replay_key_set(&key, RAW);
    uint8_t d[VAULT_SHA256_LEN];
    vault_sha256(IBAN, strlen(IBAN), d);
    char hex[17], want[200];
    for (int i = 0; i < 8; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    snprintf(want, sizeof want, "Payee {{*:%s}} Alice Smith Select", hex);
    for (int k = 0; k < 2; k++) {
        const replay_key *kp = k ? &key : NULL;
        CHECK(replay_row_eq(want, ROW, kp));
        CHECK(!replay_row_eq(want, OTHER, kp));
        /* The last 32 bits count. */
        char forged[200];
        snprintf(forged, sizeof forged, "Payee {{*:%.15s%c}} Alice Smith Select", hex,
                 hex[15] == '0' ? '1' : '0');
        CHECK(!replay_row_eq(forged, ROW, kp));
        /* A trail written before session 20: its 8 hex digits, matched on them. */
        char old[200];
        snprintf(old, sizeof old, "Payee {{*:%.8s}} Alice Smith Select", hex);
        CHECK(replay_row_eq(old, ROW, kp));
        CHECK(!replay_row_eq(old, OTHER, kp));
        /* 12 or 17 digits: no marker. */
        snprintf(old, sizeof old, "Payee {{*:%.12s}} Alice Smith Select", hex);
        CHECK(!replay_row_eq(old, ROW, kp));
        snprintf(old, sizeof old, "Payee {{*:%s0}} Alice Smith Select", hex);
        CHECK(!replay_row_eq(old, ROW, kp));
    }
    replay_key_wipe(&key);
}

/* Session 21 (the session-20 trade-off, decided): a target's hidden
 * identifier is written {{*k:16 hex}}, 64 bits of its HMAC-SHA-256 under
 * the user's trail key, never its plain SHA-256 (from which one holding a
 * shared trail found an IBAN at a known bank by hashing ~10^14
 * candidates). The key's id is the HMAC of a label no word can spell. It
 * matches the same identifier under the same key only: not another IBAN,
 * not under another key, not with no key (fail closed, never any word);
 * an 8-digit keyed marker is no marker. replay_text_hide_ids with no key
 * writes nothing (never unkeyed). On main 7616387 the {{*: SHA-256 form
 * was written (cli_trail_key shows it through the CLI). */
static void t_trail_id_keyed(void)
{
    static const char IBAN[] = "GB82WEST12345698765432";
    static const char ROW[] = "Payee GB82WEST12345698765432 Alice Smith Select";
    static const char OTHER[] = "Payee GB33MALL98765432101234 Alice Smith Select";
    static const char LABEL[] = "\0cdpgate trail key id v1";
    unsigned char raw[REPLAY_KEY_LEN], raw2[REPLAY_KEY_LEN];
    for (size_t i = 0; i < sizeof raw; i++) {
        raw[i] = (unsigned char)(0xa0 + i);
        raw2[i] = (unsigned char)(0x10 + i);
    }
    replay_key key, other;
    replay_key_set(&key, raw);
    replay_key_set(&other, raw2);
    uint8_t d[VAULT_SHA256_LEN], s[VAULT_SHA256_LEN], kid[VAULT_SHA256_LEN];
    vault_hmac_sha256(raw, sizeof raw, IBAN, strlen(IBAN), d);
    vault_sha256(IBAN, strlen(IBAN), s);
    vault_hmac_sha256(raw, sizeof raw, LABEL, sizeof LABEL - 1, kid);
    char hex[17], plain[17], id[17], want[200];
    for (int i = 0; i < 8; i++) {
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
        snprintf(plain + 2 * i, 3, "%02x", s[i]);
        snprintf(id + 2 * i, 3, "%02x", kid[i]);
    }
    CHECK_STR(id, key.id);
    CHECK(strcmp(key.id, other.id) != 0);
    snprintf(want, sizeof want, "Payee {{*k:%s}} Alice Smith Select", hex);
    char *h = replay_text_hide_ids(ROW, NULL, &key);
    if (!CHECK_STR(want, h))
        test_fail_detail("the identifier is not its HMAC under the trail key");
    CHECK(h && !strstr(h, plain) && !strstr(h, "{{*:"));
    CHECK(h && replay_row_eq(h, ROW, &key));
    CHECK(h && !replay_row_eq(h, OTHER, &key));
    CHECK(h && !replay_row_eq(h, ROW, &other));
    CHECK(h && !replay_row_eq(h, ROW, NULL));
    free(h);
    /* another key: another hash of the same identifier */
    h = replay_text_hide_ids(ROW, NULL, &other);
    CHECK(h && !strstr(h, hex) && strstr(h, "{{*k:"));
    free(h);
    CHECK(replay_text_hide_ids(ROW, NULL, NULL) == NULL);
    /* 8 keyed digits: no marker (text, compared as written) */
    snprintf(want, sizeof want, "Payee {{*k:%.8s}} Alice Smith Select", hex);
    CHECK(!replay_row_eq(want, ROW, &key));
    /* a code hidden for its keyword, a card: {{*}} still (no hash) */
    h = replay_text_hide_ids("Card 4111 1111 1111 1111 code 482913 Pay", NULL, &key);
    CHECK(h && !strstr(h, "{{*k:") && strstr(h, REPLAY_TEXT_HIDDEN));
    free(h);
    replay_key_wipe(&key);
    replay_key_wipe(&other);
    CHECK(key.id[0] == 0);
}

/* The trail key's file (replay_key_load): made at the first need (create)
 * 0600 with 32 random bytes, read again the same (same id); not made
 * without create (a replay: "no trail key"); refused when group or world
 * may read it or when it is a symlink; no message holds the key (its
 * bytes in hex); with no file named, $CDPGATE_TRAIL_KEY, else trail-key
 * in the vault's directory ($XDG_DATA_HOME/cdpgate, made 0700). */
static void t_trail_key_file(void)
{
    char dir[256], path[300], link[300];
    if (testlib_tempdir("trailkey", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/trail-key", dir);
    snprintf(link, sizeof link, "%s/link-key", dir);
    replay_key k1, k2;
    replay_err err = {0};
    CHECK_INT(REPLAY_EIO, replay_key_load(path, false, &k1, &err));
    CHECK_HAS(err.msg, "no trail key");
    CHECK_INT(0, replay_key_load(path, true, &k1, &err));
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == REPLAY_KEY_LEN);
    CHECK_INT(0, replay_key_load(path, false, &k2, &err));
    CHECK_STR(k1.id, k2.id);
    CHECK(memcmp(k1.k, k2.k, REPLAY_KEY_LEN) == 0);
    char khex[2 * REPLAY_KEY_LEN + 1];
    for (size_t i = 0; i < REPLAY_KEY_LEN; i++)
        snprintf(khex + 2 * i, 3, "%02x", k1.k[i]);
    /* the environment names it when no file is given */
    char *was = getenv("CDPGATE_TRAIL_KEY") ? strdup(getenv("CDPGATE_TRAIL_KEY")) : NULL;
    setenv("CDPGATE_TRAIL_KEY", path, 1);
    CHECK_INT(0, replay_key_load(NULL, false, &k2, &err));
    CHECK_STR(k1.id, k2.id);
    if (was)
        setenv("CDPGATE_TRAIL_KEY", was, 1);
    else
        unsetenv("CDPGATE_TRAIL_KEY");
    free(was);
    chmod(path, 0640);
    memset(&err, 0, sizeof err);
    CHECK(replay_key_load(path, false, &k2, &err) != 0);
    CHECK_HAS(err.msg, "0640");
    CHECK(k2.id[0] == 0);
    CHECK_LACKS(err.msg, khex);
    chmod(path, 0600);
    CHECK(symlink(path, link) == 0);
    CHECK(replay_key_load(link, false, &k2, &err) != 0);
    CHECK_LACKS(err.msg, khex);
    /* no file named: trail-key in the vault's directory, made 0700 / 0600
     * when asked, not before */
    char data[300], def[400], *xdg = getenv("XDG_DATA_HOME") ? strdup(getenv("XDG_DATA_HOME"))
                                                              : NULL;
    was = getenv("CDPGATE_TRAIL_KEY") ? strdup(getenv("CDPGATE_TRAIL_KEY")) : NULL;
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(def, sizeof def, "%s/cdpgate/trail-key", data);
    setenv("XDG_DATA_HOME", data, 1);
    unsetenv("CDPGATE_TRAIL_KEY");
    CHECK_INT(REPLAY_EIO, replay_key_load(NULL, false, &k2, &err));
    CHECK_HAS(err.msg, "no trail key");
    CHECK(access(def, F_OK) != 0);
    CHECK_INT(0, replay_key_load(NULL, true, &k2, &err));
    CHECK(stat(def, &st) == 0 && (st.st_mode & 0777) == 0600);
    snprintf(def, sizeof def, "%s/cdpgate", data);
    CHECK(stat(def, &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK(strcmp(k1.id, k2.id) != 0);
    if (xdg)
        setenv("XDG_DATA_HOME", xdg, 1);
    else
        unsetenv("XDG_DATA_HOME");
    if (was)
        setenv("CDPGATE_TRAIL_KEY", was, 1);
    free(xdg);
    free(was);
    replay_key_wipe(&k1);
    replay_key_wipe(&k2);
    test_rm_rf(dir);
}

static const test_case TESTS[] = {
    {"cli_record", t_cli_record},
    {"cli_trail_key", t_cli_trail_key},
    {"red8_text_secret_shapes", t_red8_text_secret_shapes},
    {"red8_url_capability", t_red8_url_capability},
    {"rec_rest_hidden", t_rec_rest_hidden},
    {"rec_secret_rules", t_rec_secret_rules},
    {"trail_id_64", t_trail_id_64},
    {"trail_id_keyed", t_trail_id_keyed},
    {"trail_key_file", t_trail_key_file},
    {"rec_bearer_urls", t_rec_bearer_urls},
    {"rec_bearer_shape", t_rec_bearer_shape},
    {"red4_rec_url_secrets", t_red4_rec_url_secrets},
    {"rec_url_rule", t_rec_url_rule},
    {"red5_rec_url_more", t_red5_rec_url_more},
    {"rec_url_r5_rule", t_rec_url_r5_rule},
    {"red7_rec_url_codes", t_red7_rec_url_codes},
    {"red5_rec_rows", t_red5_rec_rows},
    {"rec_target_params", t_rec_target_params},
    {"red7_rec_row_token", t_red7_rec_row_token},
    {"red7_rec_appeared_codes", t_red7_rec_appeared_codes},
    {"trail_secret_rule", t_trail_secret_rule},
    {"rec_param_escape", t_rec_param_escape},
    {"red4_rec_press_secret", t_red4_rec_press_secret},
    {"red4_mcp_press_secret", t_red4_mcp_press_secret},
    {"red6_rec_appeared_token", t_red6_rec_appeared_token},
    {"mcp_record", t_mcp_record},
    {"mcp_record_tool", t_mcp_record_tool},
    {"red4_mcp_trail_poison", t_red4_mcp_trail_poison},
    {"mcp_host_record_kept", t_mcp_host_record_kept},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (testlib_world_up(&world, "record", NULL, false) != 0)
        return 1;
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
