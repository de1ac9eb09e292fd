/*
 * test_login.c — browser contexts, session restore and the login handoff
 * against real Chromium on the bank fixture (tests/fixtures/bank/):
 *   - the open web runs in the agent's own untrusted context;
 *   - a stored session opens in its service's privileged context, cookies
 *     (HttpOnly and Secure with their attributes) and localStorage restored
 *     before the first navigation; another service's cookies never enter it;
 *   - an expired or rejected session is reported (SNAP_ELOGIN), never used;
 *   - the login handoff, headless, with a second CDP client playing the
 *     human; then a fresh browser restores the session unattended;
 *   - a login naming no identity never replaces a named identity's session;
 *   - `cdpgate login` headed under Xvfb, and without a display;
 *   - the MCP server: browser_login blocks every other tool while the human
 *     logs in, and planted secrets (cookie, localStorage, password, one-time
 *     code) appear in no tool result, log or stderr.
 */
#if defined(__linux__)
#define _GNU_SOURCE 1
#endif
#include "tests/testlib.h"
#include "gate/gate.h"
#include "snapshot/snap_int.h"
#include "vault/vault.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

/* The password the "human" types: planted, must never appear anywhere. */
#define PLANT_PASSWORD "Pw-planted-8d1f0b"
/* A second service's cookies (shop.test). */
#define SHOP_SECRET "shop-planted-99ab"

/* The fixture server, the scratch directory (world.root) and the browser
 * the in-process cases share (each agent works in browser contexts of its
 * own, disposed when it is freed); a case about a fresh browser or one on
 * a port launches its own. */
static testlib_world world;
static const char *host_args[] = {FIXTURE_HOST_RULES, NULL};

static const char *const PLANTS[] = {PLANT_PASSWORD, FIXTURE_BANK_OTP, FIXTURE_BANK_SESSION,
                                     FIXTURE_BANK_PREF, FIXTURE_BANK_TOKEN, SHOP_SECRET,
                                     NULL};

/* No planted secret in text (what names where it looked). */
static void check_no_plants(const char *what, const char *text)
{
    testlib_check_no_plants(PLANTS, what, text);
}

/* A task grant for the bank fixture naming the identity "alice" for it
 * (without one, no stored session is restored): written into dir, its
 * path into out as "--grant=PATH"... as two argv words: out gets PATH. */
static void write_bank_grant(const char *dir, char *out, size_t cap)
{
    snprintf(out, cap, "%s/grant.json", dir);
    FILE *f = fopen(out, "w");
    if (!CHECK(f != NULL))
        return;
    fprintf(f, "{\"task\":\"login-test\",\"principal\":\"test\","
            "\"origins\":[\"http://bank.test:%d\",\"http://a.test:%d\",\"http://shop.test:%d\"],"
            "\"identities\":{\"http://bank.test:%d\":\"alice\",\"http://shop.test:%d\":\"alice\"},"
            "\"egress\":[\"approved_origin_fetch\"]}\n", world.port, world.port, world.port,
            world.port, world.port);
    fclose(f);
}

/* The task grant of the in-process agents: the fixture hosts, and the
 * identity "alice" for the bank and the shop (the planted sessions are
 * hers). Without a grant no stored session would be restored. */
static gate *test_gate;
static int confirms;

/* The human approving every confirmation (counted). */
static int confirm_yes(void *ud, const char *prompt, char *why, size_t cap)
{
    (void)ud;
    (void)prompt;
    confirms++;
    snprintf(why, cap, "the test approves");
    return GATE_ALLOW;
}

static void test_gate_open(void)
{
    static char o1[64], o2[64], o3[64];
    testlib_world_origin(&world, o1, sizeof o1, "a.test");
    testlib_world_origin(&world, o2, sizeof o2, "bank.test");
    testlib_world_origin(&world, o3, sizeof o3, "shop.test");
    const char *origins[] = {o1, o2, o3};
    gate_identity ids[] = {{o2, "alice"}, {o3, "alice"}};
    gate_grant g = {0};
    g.task = "login-test";
    g.principal = "test";
    g.origins = origins;
    g.norigins = 3;
    g.identities = ids;
    g.nidentities = 2;
    g.egress = GATE_EGRESS_FETCH;
    gate_opts go = {0};
    go.confirm = confirm_yes;
    test_gate = testlib_gate(&g, &go);
}

static snap_agent *agent_with(cdp_browser *b, vault *v)
{
    snap_opts o = {0};
    o.vault = v;
    o.gate = test_gate;
    return testlib_agent(b, &o);
}

/* Store a bank.test session like the one the login captures (valid: the
 * session cookie the server wants; else a stale one it refuses). */
static void plant_bank(vault *v, bool valid, int64_t expiry)
{
    char origin[128], state[1200];
    testlib_world_origin(&world, origin, sizeof origin, "bank.test");
    int n = testlib_bank_state(state, sizeof state, origin,
        valid ? FIXTURE_BANK_SESSION : "hs-stale-session",
        "{\"name\":\"intruder\",\"value\":\"" SHOP_SECRET "\",\"domain\":\"shop.test\","
        "\"path\":\"/\",\"httpOnly\":false,\"secure\":false}");
    if (CHECK(n > 0))
        testlib_vault_plant(v, origin, "alice", state, expiry);
}

/* shop.test: one Secure, HttpOnly, SameSite=Strict cookie. */
static void plant_shop(vault *v)
{
    char origin[128], state[800];
    testlib_world_origin(&world, origin, sizeof origin, "shop.test");
    int n = snprintf(state, sizeof state,
        "{\"version\":1,\"cookies\":["
        "{\"name\":\"shop_sid\",\"value\":\"" SHOP_SECRET "\",\"domain\":\"shop.test\","
        "\"path\":\"/\",\"httpOnly\":true,\"secure\":true,\"sameSite\":\"Strict\"},"
        "{\"name\":\"shop_lang\",\"value\":\"en\",\"domain\":\"shop.test\",\"path\":\"/\","
        "\"httpOnly\":false,\"secure\":false}],\"localStorage\":{}}");
    if (CHECK(n > 0 && (size_t)n < sizeof state))
        testlib_vault_plant(v, origin, "alice", state, 0);
}

/* Storage.getCookies of a browser context, as JSON text (new). */
static char *context_cookies(snap_agent *a, const char *ctx_id)
{
    char params[200];
    snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", ctx_id);
    cdp_reply rep;
    cdp_err e = {0};
    if (!CHECK_INT(0, cdp_call(a->c, NULL, "Storage.getCookies", params, 10000, &rep, &e))) {
        test_fail_detail("getCookies: %s", e.msg);
        return calloc(1, 1);
    }
    char *s = json_write(rep.result, NULL);
    cdp_reply_free(&rep);
    return s ? s : calloc(1, 1);
}

/* The browserContextId of a tab's target. */
static void tab_context(snap_agent *a, int tab, char *out, size_t cap)
{
    snap_tab *t = snap_tab_by_id(a, tab);
    out[0] = 0;
    if (!t)
        return;
    char params[200];
    snprintf(params, sizeof params, "{\"targetId\":\"%s\"}", t->target);
    cdp_reply rep;
    if (cdp_call(a->c, NULL, "Target.getTargetInfo", params, 10000, &rep, NULL) == 0) {
        const char *id = json_get_str(json_get(rep.result, "targetInfo"), "browserContextId");
        snprintf(out, cap, "%s", id ? id : "");
        cdp_reply_free(&rep);
    }
}

/* ---- contexts ---- */

/* Without any vault, the agent's tabs live in its own context, not the
 * browser's default one; two agents get two contexts. */
static void t_untrusted_context(void)
{
    cdp_browser *b = testlib_world_browser(&world);
    if (!b)
        return;
    snap_agent *a = agent_with(b, NULL), *a2 = agent_with(b, NULL);
    char url[200], ctx[128], ctx2[128];
    testlib_world_url(&world, url, sizeof url, "a.test", "/index.html");
    snap_result r = {0};
    CHECK_INT(0, snap_open(a, url, false, &r));
    CHECK(r.text && strstr(r.text, " auth=no ") != NULL);
    snap_result_free(&r);
    CHECK_INT(0, snap_open(a2, url, false, &r));
    snap_result_free(&r);
    CHECK(a->nctxs == 1 && a->ctxs[0].id[0] && !a->ctx_shared);
    tab_context(a, a->cur, ctx, sizeof ctx);
    tab_context(a2, a2->cur, ctx2, sizeof ctx2);
    CHECK_STR(a->ctxs[0].id, ctx);
    CHECK(*ctx2 && strcmp(ctx, ctx2) != 0);
    snap_agent_free(a2);
    snap_agent_free(a);
}

/* A stored session opens in its own context with its cookies (HttpOnly,
 * Secure, SameSite kept) and localStorage; the open web's context and the
 * other service's context never see them; a privileged tab that navigates
 * to another origin is not authenticated there and sends it nothing. */
static void t_restore_isolated(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_world_browser(&world) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    plant_bank(v, true, 0);
    plant_shop(v);
    snap_agent *a = agent_with(b, v);
    char url[200];
    snap_result r = {0};
    /* The open web first: untrusted context. */
    testlib_world_url(&world, url, sizeof url, "a.test", "/echo-cookie");
    CHECK_INT(0, snap_open(a, url, false, &r));
    int web_tab = a->cur;
    snap_result_free(&r);
    /* The bank: a new tab in bank's own context, restored. */
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/account");
    int rc = snap_open(a, url, false, &r);
    const char *t = r.text ? r.text : "";
    CHECK_INT(0, rc);
    CHECK_HAS(t, "auth=yes");
    CHECK_HAS(t, "Account overview");
    CHECK_HAS(t, "Preferences: restored");
    CHECK_HAS(t, "Opened in a new tab");
    CHECK_HAS(t, "restored from the vault");
    check_no_plants("open result", t);
    check_no_plants("open structured", r.structured);
    snap_result_free(&r);
    int bank_tab = a->cur;
    CHECK(bank_tab != web_tab);
    snap_tab *bt = snap_tab_by_id(a, bank_tab);
    size_t bank_ctx = bt ? bt->ctx : 0;
    CHECK(bank_ctx > 0);
    /* History: the blank page that carried localStorage is not there. */
    CHECK_INT(SNAP_EINVAL, snap_history(a, -1, &r));
    if (!CHECK(r.text && strstr(r.text, "no earlier page") != NULL))
        test_fail_detail("back: %s", r.text ? r.text : "");
    snap_result_free(&r);
    /* The shop: a third context, Secure/HttpOnly/Strict kept. */
    testlib_world_url(&world, url, sizeof url, "shop.test", "/index.html");
    CHECK_INT(0, snap_open(a, url, false, &r));
    CHECK(r.text && strstr(r.text, "auth=yes") != NULL);
    snap_result_free(&r);
    snap_tab *st = snap_tab_by_id(a, a->cur);
    size_t shop_ctx = st ? st->ctx : 0;
    CHECK(shop_ctx > 0 && shop_ctx != bank_ctx);
    char *ck_bank = context_cookies(a, a->ctxs[bank_ctx].id);
    char *ck_shop = context_cookies(a, a->ctxs[shop_ctx].id);
    char *ck_web = context_cookies(a, a->ctxs[0].id);
    CHECK_HAS(ck_bank, "\"name\":\"bank_session\"");
    CHECK_HAS(ck_bank, "\"httpOnly\":true");
    CHECK_LACKS(ck_bank, "shop_sid");
    CHECK_LACKS(ck_bank, "intruder");       /* filtered: not the bank's domain */
    CHECK_HAS(ck_shop, "\"name\":\"shop_sid\"");
    CHECK_HAS(ck_shop, "\"secure\":true");
    CHECK_HAS(ck_shop, "\"sameSite\":\"Strict\"");
    CHECK_LACKS(ck_shop, "bank_");
    CHECK_LACKS(ck_web, "bank_");
    CHECK_LACKS(ck_web, "shop_");
    free(ck_bank);
    free(ck_shop);
    free(ck_web);
    /* The open web's tab still shows no cookie, and a.test is no session. */
    CHECK_INT(0, snap_tabs(a, "switch", "t1", &r));
    snap_result_free(&r);
    snap_query q = {0};
    CHECK_INT(0, snap_observe(a, &q, &r));
    CHECK(r.text && strstr(r.text, "cookies: []") != NULL);
    CHECK(r.text && strstr(r.text, "auth=no") != NULL);
    snap_result_free(&r);
    /* From the bank's tab, follow its link to shop.test: same tab, bank's
     * context, so not authenticated, and the shop's cookies are not there. */
    char tab[16];
    snprintf(tab, sizeof tab, "t%d", bank_tab);
    CHECK_INT(0, snap_tabs(a, "switch", tab, &r));
    snap_result_free(&r);
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/account");
    CHECK_INT(0, snap_open(a, url, false, &r));     /* same context: same tab */
    CHECK_INT(bank_tab, a->cur);
    snap_query qq = {0};
    qq.query = "Hide balance";
    snap_result_free(&r);
    CHECK_INT(0, snap_observe(a, &qq, &r));
    const char *ref = r.text ? strstr(r.text, "[e") : NULL;
    char refbuf[16] = "";
    if (CHECK(ref != NULL))
        snprintf(refbuf, sizeof refbuf, "%.*s", (int)strcspn(ref + 1, "]"), ref + 1);
    snap_result_free(&r);
    /* A click on a button of an authenticated page is a state change: the
     * human is asked (here the test's hook approves), once. */
    int asked = confirms;
    CHECK_INT(0, snap_click(a, refbuf, NULL, &r));
    CHECK_INT(asked + 1, confirms);
    snap_result_free(&r);
    /* Following its link to a granted origin is a read (issue 11, point
     * 14): nobody is asked. */
    qq.query = "Partner offers";
    CHECK_INT(0, snap_observe(a, &qq, &r));
    ref = r.text ? strstr(r.text, "[e") : NULL;
    refbuf[0] = 0;
    if (CHECK(ref != NULL))
        snprintf(refbuf, sizeof refbuf, "%.*s", (int)strcspn(ref + 1, "]"), ref + 1);
    snap_result_free(&r);
    asked = confirms;
    CHECK_INT(0, snap_click(a, refbuf, NULL, &r));
    CHECK_INT(asked, confirms);
    snap_result_free(&r);
    CHECK_INT(0, snap_observe(a, &q, &r));
    t = r.text ? r.text : "";
    CHECK_INT(bank_tab, a->cur);
    CHECK_HAS(t, "cookies: []");
    CHECK_HAS(t, "auth=no");
    check_no_plants("observe after link", t);
    snap_result_free(&r);
    snap_agent_free(a);
    vault_close(v);
}

/* Expired: not restored, SNAP_ELOGIN saying to log in again. Rejected (the
 * server refuses the cookie and redirects to its login page): evidence, not
 * proof (issue 11): the open succeeds with a note saying to log in again,
 * and the session is kept, authenticated while its cookies are in the
 * context (before issue 11: SNAP_ELOGIN, auth=no, the session dropped by
 * one page view). */
static void t_expired_and_rejected(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_world_browser(&world) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    char url[200], origin[128];
    snap_result r = {0};
    /* expired */
    plant_bank(v, true, (int64_t)time(NULL) - 5);
    snap_agent *a = agent_with(b, v);
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/account");
    testlib_world_origin(&world, origin, sizeof origin, "bank.test");
    CHECK_INT(SNAP_ELOGIN, snap_open(a, url, false, &r));
    const char *t = r.text ? r.text : "";
    CHECK_HAS(t, "expired");
    CHECK_HAS(t, "cdpgate login");
    CHECK_HAS(t, "auth=no");
    CHECK_HAS(t, "Sign in to Bank");           /* the server's redirect: no cookie */
    CHECK(r.structured && strstr(r.structured, "login_required") != NULL);
    check_no_plants("expired result", t);
    snap_result_free(&r);
    CHECK_INT(1, (int)a->nctxs);               /* no privileged context made */
    snap_agent_free(a);
    /* rejected */
    plant_bank(v, false, 0);
    a = agent_with(b, v);
    CHECK_INT(0, snap_open(a, url, false, &r));
    t = r.text ? r.text : "";
    CHECK_HAS(t, "may have rejected");
    CHECK_HAS(t, "login page (/bank/login.html)");
    CHECK_HAS(t, "cdpgate login");
    CHECK_HAS(t, "Sign in to Bank");
    CHECK_HAS(t, "auth=yes");
    check_no_plants("rejected result", t);
    snap_result_free(&r);
    snap_tab *bt = snap_tab_current(a);
    size_t ctx = bt ? bt->ctx : 0;
    CHECK(ctx > 0);
    CHECK_INT(0, snap_open(a, url, false, &r));
    CHECK(r.text && strstr(r.text, "may have rejected") != NULL && strstr(r.text, "auth=yes"));
    snap_result_free(&r);
    bt = snap_tab_current(a);
    CHECK(bt && bt->ctx == ctx);       /* the same context: the session was kept */
    snap_agent_free(a);
    vault_close(v);
}

/* Forgetting a service's contexts (a newer session was saved) leaves its
 * tabs open in a context that still holds the old session: they stay
 * authenticated (issue 11: only dropping the credentials ends that; before,
 * forgetting made them auth=no with the session's cookies still there). */
static void t_forget_keeps_auth(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_world_browser(&world) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    plant_bank(v, true, 0);
    snap_agent *a = agent_with(b, v);
    char url[200], origin[128];
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/account");
    testlib_world_origin(&world, origin, sizeof origin, "bank.test");
    snap_result r = {0};
    CHECK_INT(0, snap_open(a, url, false, &r));
    CHECK_HAS(r.text ? r.text : "", "auth=yes");
    snap_result_free(&r);
    snap_session_forget(a, origin);
    snap_query q = {0};
    CHECK_INT(0, snap_observe(a, &q, &r));
    const char *t = r.text ? r.text : "";
    CHECK_HAS(t, "Account overview");
    CHECK_HAS(t, "auth=yes");
    snap_result_free(&r);
    /* The next open restores the vault's session again, into a new
     * context: the old one's identity lease passes to it (a second lease
     * of this task would conflict with the first: "in use"). */
    snap_tab *bt = snap_tab_current(a);
    size_t old_ctx = bt ? bt->ctx : 0;
    int rc = snap_open(a, url, false, &r);
    if (!CHECK_INT(0, rc))
        test_fail_detail("%s", r.text ? r.text : "");
    t = r.text ? r.text : "";
    CHECK_HAS(t, "restored from the vault");
    CHECK_HAS(t, "auth=yes");
    CHECK_HAS(t, "Account overview");
    snap_result_free(&r);
    bt = snap_tab_current(a);
    CHECK(bt && bt->ctx > 0 && bt->ctx != old_ctx);
    snap_agent_free(a);
    vault_close(v);
}

/* The service signs the session out (it expires the cookies and clears
 * localStorage): that open says so and the page is auth=no; once the user
 * has logged in again (a newer session in the vault), the next open
 * restores it into a new context, authenticated, taking over this task's
 * identity lease. Before issue 11 the sign-out went unnoticed (auth=yes
 * on a session that was gone) and the newer session was never restored. */
static void t_signed_out_then_new_login(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_world_browser(&world) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    plant_bank(v, true, 0);
    snap_agent *a = agent_with(b, v);
    char url[200], out[200], origin[128];
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/account");
    testlib_world_url(&world, out, sizeof out, "bank.test", "/bank/signout");
    testlib_world_origin(&world, origin, sizeof origin, "bank.test");
    snap_result r = {0};
    CHECK_INT(0, snap_open(a, url, false, &r));
    CHECK_HAS(r.text ? r.text : "", "auth=yes");
    snap_result_free(&r);
    CHECK_INT(0, snap_open(a, out, false, &r));
    const char *t = r.text ? r.text : "";
    CHECK_HAS(t, "ended the session");
    CHECK_HAS(t, "cdpgate login");
    CHECK_HAS(t, "auth=no");
    check_no_plants("signed out", t);
    snap_result_free(&r);
    /* The user logs in again: a newer session (its capture time later
     * than the first's, without waiting for the clock). */
    char state[600], err[300] = "";
    int n = snprintf(state, sizeof state,
        "{\"version\":1,\"cookies\":[{\"name\":\"bank_session\",\"value\":\"%s\","
        "\"domain\":\"bank.test\",\"path\":\"/\",\"httpOnly\":true,\"secure\":false}],"
        "\"localStorage\":{}}", FIXTURE_BANK_SESSION);
    if (!CHECK_INT(0, vault_put_at(v, origin, "alice", (const uint8_t *)state, (size_t)n,
                                   (int64_t)time(NULL) + 60, 0, err, sizeof err)))
        test_fail_detail("vault_put_at: %s", err);
    int rc = snap_open(a, url, false, &r);
    if (!CHECK_INT(0, rc))
        test_fail_detail("%s", r.text ? r.text : "");
    t = r.text ? r.text : "";
    CHECK_HAS(t, "restored from the vault");
    CHECK_HAS(t, "Account overview");
    CHECK_HAS(t, "auth=yes");
    check_no_plants("new login", t);
    snap_result_free(&r);
    snap_agent_free(a);
    vault_close(v);
}

/* Issue 11, point 15b: the vault keeps one session per origin, so a login
 * that names no identity (no grant at all, or a grant naming none for the
 * origin) would replace alice's session with one under "default". It is
 * refused before the human is asked, and alice's session stays, restorable.
 * On main both logins started (and their capture replaced her session). */
static void t_unnamed_login_keeps_named(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_world_browser(&world) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    plant_bank(v, true, 0);
    char url[200], origin[128], aorigin[128], state[400];
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/login.html");
    testlib_world_origin(&world, origin, sizeof origin, "bank.test");
    testlib_world_origin(&world, aorigin, sizeof aorigin, "a.test");
    snprintf(state, sizeof state, "{\"version\":1,\"cookies\":[{\"name\":\"a_sid\","
             "\"value\":\"a-session\",\"domain\":\"a.test\",\"path\":\"/\","
             "\"httpOnly\":true,\"secure\":false}],\"localStorage\":{}}");
    testlib_vault_plant(v, aorigin, "alice", state, 0);
    /* browser_login with no grant. */
    snap_opts o = {0};
    o.vault = v;
    snap_agent *a = testlib_agent(b, &o);
    snap_result r = {0};
    if (a) {
        CHECK_INT(SNAP_EDENIED, snap_login_begin(a, url, &r));
        const char *t = r.text ? r.text : "";
        CHECK_HAS(t, "for the identity \"alice\"");
        CHECK_HAS(t, "names no identity");
        CHECK_HAS(t, "cdpgate vault rm");
        CHECK(!snap_login_active(a));
        snap_result_free(&r);
        /* A named session stored while an unnamed login runs: its capture
         * is refused too, nothing saved. (With no grant, a login needs a
         * session of the origin in the vault: red team s11, L4.) */
        char surl[200], sorigin[128], dstate[300];
        testlib_world_url(&world, surl, sizeof surl, "shop.test", "/index.html");
        testlib_world_origin(&world, sorigin, sizeof sorigin, "shop.test");
        snprintf(dstate, sizeof dstate, "{\"version\":1,\"cookies\":[{\"name\":\"shop_sid\","
                 "\"value\":\"shop-old\",\"domain\":\"shop.test\",\"path\":\"/\","
                 "\"httpOnly\":true,\"secure\":false}],\"localStorage\":{}}");
        testlib_vault_plant(v, sorigin, "default", dstate, 0);
        CHECK_INT(0, snap_login_begin(a, surl, &r));
        snap_result_free(&r);
        plant_shop(v);
        CHECK_INT(SNAP_EDENIED, snap_login_poll(a, true, &r));
        CHECK_HAS(r.text ? r.text : "", "so the login was not saved");
        CHECK_HAS(r.text ? r.text : "", "the login's browser context is closed");
        CHECK(!snap_login_active(a));
        snap_result_free(&r);
        uint8_t *blob = NULL;
        size_t len = 0;
        char err[300] = "";
        if (CHECK_INT(0, vault_get(v, sorigin, &blob, &len, NULL, err, sizeof err)))
            CHECK(len && strstr((const char *)blob, SHOP_SECRET) != NULL);
        else
            test_fail_detail("vault_get shop: %s", err);
        vault_free_blob(blob, len);
    }
    snap_agent_free(a);
    /* A grant naming no identity for a.test (alice's session there): the
     * human is not asked either. */
    a = agent_with(b, v);
    if (a) {
        int asked = confirms;
        char aurl[200];
        testlib_world_url(&world, aurl, sizeof aurl, "a.test", "/index.html");
        CHECK_INT(SNAP_EDENIED, snap_login_begin(a, aurl, &r));
        CHECK_HAS(r.text ? r.text : "", "so the login was not started");
        CHECK_INT(asked, confirms);
        CHECK(!snap_login_active(a));
        snap_result_free(&r);
    }
    /* Alice's sessions are still hers, and the bank's is restored. */
    const char *origins[] = {origin, aorigin};
    for (int i = 0; i < 2; i++) {
        uint8_t *blob = NULL;
        size_t len = 0;
        vault_meta meta;
        char err[300] = "";
        if (CHECK_INT(0, vault_get(v, origins[i], &blob, &len, &meta, err, sizeof err))) {
            CHECK_STR("alice", meta.identity);
            vault_meta_free(&meta);
            vault_free_blob(blob, len);
        } else {
            test_fail_detail("vault_get %s: %s", origins[i], err);
        }
    }
    if (a) {
        testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/account");
        CHECK_INT(0, snap_open(a, url, false, &r));
        const char *t = r.text ? r.text : "";
        CHECK_HAS(t, "auth=yes");
        CHECK_HAS(t, "Account overview");
        check_no_plants("restored after the refused login", t);
        snap_result_free(&r);
    }
    snap_agent_free(a);
    vault_close(v);
}

/* ---- the login handoff, headless ---- */

/* Play the human on the login page through a second CDP client: fill the
 * form (user, password, one-time code) and submit it, on the page whose
 * URL holds page (a human types into the page in front of them: after a
 * wrong code, the page the service sent back, not the one still
 * submitting). */
static int human_login_on(const char *endpoint, const char *otp, const char *page)
{
    cdp_err e = {0};
    cdp_browser *h = cdp_browser_connect(endpoint, NULL, 10000, &e);
    if (!CHECK(h != NULL)) {
        test_fail_detail("second client: %s", e.msg);
        return -1;
    }
    cdp_conn *c = cdp_browser_conn(h);
    char target[128] = "";
    for (int i = 0; i < 100 && !*target; i++) {
        cdp_reply rep;
        if (cdp_call(c, NULL, "Target.getTargets", NULL, 5000, &rep, &e) == 0) {
            for (const json_val *ti = json_first(json_get(rep.result, "targetInfos")); ti;
                 ti = json_next(ti)) {
                const char *u = json_get_str(ti, "url");
                if (u && strstr(u, page))
                    snprintf(target, sizeof target, "%s", json_get_str(ti, "targetId"));
            }
            cdp_reply_free(&rep);
        }
        if (!*target)
            testlib_sleep_ms(100);
    }
    int rc = -1;
    if (CHECK(*target)) {
        char params[256], session[128] = "";
        snprintf(params, sizeof params, "{\"targetId\":\"%s\",\"flatten\":true}", target);
        cdp_reply rep;
        if (cdp_call(c, NULL, "Target.attachToTarget", params, 5000, &rep, &e) == 0) {
            snprintf(session, sizeof session, "%s", json_get_str(rep.result, "sessionId"));
            cdp_reply_free(&rep);
        }
        /* Like a human, wait until the page has loaded before typing. */
        char expr[900];
        snprintf(expr, sizeof expr, "{\"expression\":\"new Promise(ok => { const go = () => "
                 "{ const f = id => document.getElementById(id); if (document.readyState !== "
                 "'complete' || !f('f')) return setTimeout(go, 50); f('user').value = "
                 "'alice'; f('pw').value = '%s'; f('otp').value = '%s'; "
                 "f('f').requestSubmit(); ok(1); }; go(); })\",\"awaitPromise\":true}",
                 PLANT_PASSWORD, otp);
        rc = cdp_call(c, session, "Runtime.evaluate", expr, 10000, &rep, &e);
        if (!CHECK_INT(0, rc))
            test_fail_detail("human: %s", e.msg);
        else if (!CHECK(json_get(rep.result, "exceptionDetails") == NULL))
            rc = -1;
        if (rc == 0)
            cdp_reply_free(&rep);
    }
    cdp_browser_free(h);
    return rc;
}

static int human_login(const char *endpoint, const char *otp)
{
    return human_login_on(endpoint, otp, "/bank/login.html");
}

/* Poll the login until it is no longer waiting (at most ~15 s). */
/* The human and the driver run at once, as they do for real: the human in
 * a child process (human_login), the driver here, pumping its connection
 * the way cdpgate's loops do while a login runs (the page's navigations
 * are judged by the driver before they leave). Returns the first poll
 * result other than "still waiting" (r keeps it), or SNAP_EBLOCKED; the
 * human's failure is a failed CHECK. */
static int human_login_pumped(snap_agent *a, const char *endpoint, const char *otp,
                              const char *page, snap_result *r)
{
    pid_t pid = fork();
    if (pid == 0) {
        int hr = human_login_on(endpoint, otp, page);
        _exit(hr == 0 && !test_failures_now() ? 0 : 1);
    }
    if (!CHECK(pid > 0))
        return SNAP_EBLOCKED;
    int rc = SNAP_EBLOCKED, status = 0;
    bool exited = false;
    for (int i = 0; i < 400 && !exited; i++) {
        exited = waitpid(pid, &status, WNOHANG) == pid;
        if (rc == SNAP_EBLOCKED) {
            snap_result_free(r);
            rc = snap_login_poll(a, false, r);
        } else {
            snap_sync(a);
        }
        if (!exited)
            testlib_sleep_ms(50);
    }
    if (!exited) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    if (!CHECK(exited && WIFEXITED(status) && WEXITSTATUS(status) == 0))
        test_fail_detail("the human's side of the login failed (see above)");
    return rc;
}

static int poll_login(snap_agent *a, snap_result *r)
{
    int rc = SNAP_EBLOCKED;
    for (int i = 0; i < 150 && rc == SNAP_EBLOCKED; i++) {
        snap_result_free(r);
        rc = snap_login_poll(a, false, r);
        if (rc == SNAP_EBLOCKED)
            testlib_sleep_ms(100);
    }
    return rc;
}

static void t_login_headless_then_restore(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_launch(host_args, true) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    snap_agent *a = agent_with(b, v);
    char url[200], origin[128];
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/login.html");
    testlib_world_origin(&world, origin, sizeof origin, "bank.test");
    snap_result r = {0};
    CHECK_INT(0, snap_login_begin(a, url, &r));
    CHECK(r.text && strstr(r.text, "blocked") != NULL);
    snap_result_free(&r);
    CHECK(snap_login_active(a));
    CHECK_STR(origin, snap_login_origin(a));
    /* The agent is blocked meanwhile. */
    char other[200];
    testlib_world_url(&world, other, sizeof other, "a.test", "/index.html");
    CHECK_INT(SNAP_EBLOCKED, snap_open(a, other, false, &r));
    CHECK(r.text && strstr(r.text, "waiting for the human to finish logging in") != NULL);
    snap_result_free(&r);
    CHECK_INT(SNAP_EBLOCKED, snap_login_poll(a, false, &r));
    snap_result_free(&r);
    /* A wrong code first: back on the login page, still waiting. */
    CHECK_INT(SNAP_EBLOCKED, human_login_pumped(a, cdp_browser_ws_url(b), "000000",
                                                "/bank/login.html", &r));
    snap_result_free(&r);
    CHECK_INT(SNAP_EBLOCKED, snap_login_poll(a, false, &r));
    snap_result_free(&r);
    /* The right one, typed into the page the service sent back for the
     * wrong one (error=1): the human helper waits for it, and the driver
     * answers the page's requests meanwhile, still waiting (any other poll
     * result would be kept as rc). Before, a fixed 600 ms sleep stood for
     * that wait, with the wrong code's post paused at the browser (nobody
     * pumped): under load the right code was typed into the old page,
     * whose submission the wrong one's navigation then replaced. */
    int rc = human_login_pumped(a, cdp_browser_ws_url(b), FIXTURE_BANK_OTP,
                                "/bank/login.html?error=1", &r);
    if (rc == SNAP_EBLOCKED)
        rc = poll_login(a, &r);
    CHECK_INT(0, rc);
    const char *t = r.text ? r.text : "";
    CHECK_HAS(t, "saved in the vault");
    check_no_plants("login result", t);
    snap_result_free(&r);
    CHECK(!snap_login_active(a));
    /* The login's tab is authenticated now. */
    snap_query q = {0};
    CHECK_INT(0, snap_observe(a, &q, &r));
    CHECK(r.text && strstr(r.text, "auth=yes") != NULL);
    snap_result_free(&r);
    snap_agent_free(a);
    cdp_browser_free(b);
    /* What was captured: cookies with attributes and localStorage; no form
     * value. */
    uint8_t *blob = NULL;
    size_t len = 0;
    char err[300] = "";
    vault_meta meta;
    if (CHECK_INT(0, vault_get(v, origin, &blob, &len, &meta, err, sizeof err))) {
        char *s = calloc(1, len + 1);
        if (s)
            memcpy(s, blob, len);
        const char *st = s ? s : "";
        CHECK_HAS(st, "\"version\":1");
        CHECK_HAS(st, FIXTURE_BANK_SESSION);
        CHECK_HAS(st, FIXTURE_BANK_PREF);
        CHECK_HAS(st, FIXTURE_BANK_TOKEN);
        CHECK_HAS(st, "\"httpOnly\":true");
        if (!CHECK(strstr(st, PLANT_PASSWORD) == NULL && strstr(st, FIXTURE_BANK_OTP) == NULL))
            test_fail_detail("a form value was captured");
        CHECK_INT(0, meta.expiry);          /* a session cookie: no expiry */
        vault_meta_free(&meta);
        free(s);
        vault_free_blob(blob, len);
    } else {
        test_fail_detail("vault_get: %s", err);
    }
    /* A fresh browser and agent restore it unattended. */
    b = testlib_launch(host_args, false);
    a = b ? agent_with(b, v) : NULL;
    if (a) {
        testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/account");
        CHECK_INT(0, snap_open(a, url, false, &r));
        t = r.text ? r.text : "";
        CHECK_HAS(t, "auth=yes");
        CHECK_HAS(t, "Account overview");
        CHECK_HAS(t, "Preferences: restored");
        check_no_plants("restored open", t);
        snap_result_free(&r);
        /* Another origin opened by that agent gets none of bank's cookies. */
        testlib_world_url(&world, url, sizeof url, "a.test", "/echo-cookie");
        CHECK_INT(0, snap_open(a, url, false, &r));
        t = r.text ? r.text : "";
        CHECK_HAS(t, "cookies: []");
        CHECK_HAS(t, "auth=no");
        snap_result_free(&r);
    }
    snap_agent_free(a);
    cdp_browser_free(b);
    vault_close(v);
}

/* The human's "done" captures at once, whatever the page shows. */
static void t_login_human_done(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_world_browser(&world) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    snap_agent *a = agent_with(b, v);
    char url[200];
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/login.html");
    snap_result r = {0};
    CHECK_INT(0, snap_login_begin(a, url, &r));
    snap_result_free(&r);
    CHECK_INT(SNAP_EBLOCKED, snap_login_poll(a, false, &r));
    snap_result_free(&r);
    CHECK_INT(0, snap_login_poll(a, true, &r));
    CHECK(r.text && strstr(r.text, "the human said done") != NULL);
    snap_result_free(&r);
    CHECK_INT(SNAP_EINVAL, snap_login_poll(a, false, &r));
    snap_result_free(&r);
    snap_agent_free(a);
    vault_close(v);
}

/* Red team s11, L4: the model picks the login URL. A login is only started
 * on an origin the grant names an identity for or whose session the vault
 * holds: a.test is granted but names no identity and has no session, so no
 * login page of it is shown to the human (the refusal names the origins
 * that can be logged into), and the human is not asked. On main it
 * started. */
static void t_login_origin_named(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_world_browser(&world) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    char aurl[200], aorigin[128], borigin[128], sorigin[128];
    testlib_world_url(&world, aurl, sizeof aurl, "a.test", "/gate/red/away.html");
    testlib_world_origin(&world, aorigin, sizeof aorigin, "a.test");
    testlib_world_origin(&world, borigin, sizeof borigin, "bank.test");
    testlib_world_origin(&world, sorigin, sizeof sorigin, "shop.test");
    snap_agent *a = agent_with(b, v);
    snap_result r = {0};
    if (a) {
        int asked = confirms;
        CHECK_INT(SNAP_EDENIED, snap_login_begin(a, aurl, &r));
        const char *t = r.text ? r.text : "";
        CHECK_HAS(t, "The login was not started");
        CHECK_HAS(t, aorigin);
        CHECK_HAS(t, borigin);
        CHECK_HAS(t, sorigin);
        CHECK_INT(asked, confirms);
        CHECK(!snap_login_active(a));
        CHECK_INT(0, (int)a->ntabs);
        snap_result_free(&r);
    }
    snap_agent_free(a);
    /* No grant, nothing in the vault: no origin can be logged into. */
    snap_opts o = {0};
    o.vault = v;
    a = testlib_agent(b, &o);
    if (a) {
        char burl[200];
        testlib_world_url(&world, burl, sizeof burl, "bank.test", "/bank/login.html");
        CHECK_INT(SNAP_EDENIED, snap_login_begin(a, burl, &r));
        CHECK_HAS(r.text ? r.text : "", "The login was not started");
        CHECK(!snap_login_active(a));
        snap_result_free(&r);
    }
    snap_agent_free(a);
    vault_close(v);
}

/* Red team s11, L4: a login started on the bank whose tab ends on another
 * origin (here the bank's own open redirect to shop.test, an origin the
 * grant also names an identity for) saves nothing when the human says
 * done: neither the bank's session nor the shop's. The handoff names the
 * origin first. On main the capture was saved under the bank's origin. */
static void t_login_done_elsewhere(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_world_browser(&world) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    snap_agent *a = agent_with(b, v);
    char url[400], shop[200], borigin[128], sorigin[128], first[200];
    testlib_world_url(&world, shop, sizeof shop, "shop.test", "/index.html");
    testlib_world_origin(&world, borigin, sizeof borigin, "bank.test");
    testlib_world_origin(&world, sorigin, sizeof sorigin, "shop.test");
    char path[300];
    snprintf(path, sizeof path, "/gate/redirect?to=%s", shop);
    testlib_world_url(&world, url, sizeof url, "bank.test", path);
    snap_result r = {0};
    if (a && CHECK_INT(0, snap_login_begin(a, url, &r))) {
        snprintf(first, sizeof first, "Log in to %s (only there)", borigin);
        CHECK(r.text && strncmp(r.text, first, strlen(first)) == 0);
        snap_result_free(&r);
        CHECK_INT(SNAP_EDENIED, snap_login_poll(a, true, &r));
        const char *t = r.text ? r.text : "";
        CHECK_HAS(t, "nothing was saved");
        CHECK_HAS(t, sorigin);
        CHECK_HAS(t, "the login's browser context is closed");
        CHECK(!snap_login_active(a));
        snap_result_free(&r);
        vault_meta *list = NULL;
        size_t n = 0;
        if (CHECK_INT(0, vault_list(v, &list, &n, NULL, 0)))
            CHECK_INT(0, (int)n);
        vault_list_free(list, n);
    }
    snap_result_free(&r);
    snap_agent_free(a);
    vault_close(v);
}

/* Session 18 (red team s17, R7-4's check of the login results): the login
 * tab ends on a host the page chose (the bank's open redirect to a
 * subdomain outside the grant whose labels are words for the model): the
 * refusal names it as results name a page's origin, the host cut to its
 * last two labels, never whole. On main 13b2f15 the whole host was in the
 * result. */
static void t_login_done_lure_host(void)
{
    char dir[300];
    vault *v = testlib_vault_new(world.root, dir, sizeof dir);
    cdp_browser *b = v ? testlib_world_browser(&world) : NULL;
    if (!b) {
        vault_close(v);
        return;
    }
    snap_agent *a = agent_with(b, v);
    char url[300], now[600] = "";
    testlib_world_url(&world, url, sizeof url, "bank.test", "/gate/bank/login-lure.html");
    snap_result r = {0};
    if (a && CHECK_INT(0, snap_login_begin(a, url, &r))) {
        snap_result_free(&r);
        /* the page moves its tab on its own: wait until the tab is there */
        for (int i = 0; i < 300 && !strstr(now, "agent-note"); i++) {
            CHECK_INT(SNAP_EBLOCKED, snap_login_poll(a, false, &r));
            snap_result_free(&r);
            snap_human_url(a, now, sizeof now);
            if (!strstr(now, "agent-note"))
                testlib_sleep_ms(100);
        }
        CHECK_HAS(now, "agent-note");
        CHECK_INT(SNAP_EDENIED, snap_login_poll(a, true, &r));
        const char *t = r.text ? r.text : "";
        CHECK_HAS(t, "nothing was saved");
        CHECK_HAS(t, "[withheld].shop.test");
        if (!CHECK_LACKS(t, "agent-note"))
            test_fail_detail("the login's result names the page's host whole: %.600s\n", t);
    }
    snap_result_free(&r);
    snap_agent_free(a);
    vault_close(v);
}

/* ---- processes: Xvfb, cdpgate as a child ---- */

static bool have_xvfb(void)
{
    return access("/usr/bin/Xvfb", X_OK) == 0;
}

/* Start Xvfb on a free display (-displayfd); *pid gets its pid (stop it
 * with xvfb_stop). Returns the display number or -1. */
static int xvfb_start(pid_t *pid)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    *pid = fork();
    if (*pid == 0) {
#if defined(__linux__)
        prctl(PR_SET_PDEATHSIG, SIGTERM);   /* a crashed test leaves no Xvfb */
#endif
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
        if (p[1] != 3) {
            dup2(p[1], 3);
            close(p[1]);
        }
        execl("/usr/bin/Xvfb", "Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24",
              "-nolisten", "tcp", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char buf[32];
    size_t n = 0;
    struct pollfd pfd = {p[0], POLLIN, 0};
    while (n < sizeof buf - 1 && poll(&pfd, 1, 15000) > 0) {
        ssize_t r = read(p[0], buf + n, 1);
        if (r <= 0 || buf[n] == '\n')
            break;
        n++;
    }
    buf[n] = 0;
    close(p[0]);
    char *end;
    long d = strtol(buf, &end, 10);
    if (!n || *end || d < 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
        *pid = 0;
        return -1;
    }
    return (int)d;
}

static void xvfb_stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 100; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        testlib_sleep_ms(20);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A cdpgate child (tests/fixture.h), --login-done-fd 3 on fd3_w. */
typedef fixture_child child;

/* The DevTools endpoints of the browsers launched with --port under tmp
 * (TMPDIR/cdpgate-XXXXXX/profile/DevToolsActivePort); fills up to cap. */
static int find_endpoints(const char *tmp, char out[][160], int cap)
{
    int n = 0;
    DIR *d = opendir(tmp);
    struct dirent *e;
    while (d && (e = readdir(d)) && n < cap) {
        if (strncmp(e->d_name, "cdpgate-", 8) != 0)
            continue;
        char p[700];
        snprintf(p, sizeof p, "%s/%s/profile/DevToolsActivePort", tmp, e->d_name);
        char *s = test_read_file(p, NULL);
        char *nl = s ? strchr(s, '\n') : NULL;
        if (nl) {
            *nl = 0;
            char *path = nl + 1;
            path[strcspn(path, "\n")] = 0;
            snprintf(out[n++], 160, "ws://127.0.0.1:%s%s", s, path);
        }
        free(s);
    }
    if (d)
        closedir(d);
    return n;
}

/* The endpoint of the browser showing the bank's login page, waiting for
 * it up to ~20 s; "" when none. */
static void login_endpoint(const char *tmp, char *out, size_t cap)
{
    out[0] = 0;
    for (int tries = 0; tries < 100 && !*out; tries++) {
        char eps[4][160];
        int n = find_endpoints(tmp, eps, 4);
        for (int i = 0; i < n && !*out; i++) {
            cdp_browser *h = cdp_browser_connect(eps[i], NULL, 3000, NULL);
            cdp_reply rep;
            if (h && cdp_call(cdp_browser_conn(h), NULL, "Target.getTargets", NULL, 3000,
                              &rep, NULL) == 0) {
                for (const json_val *ti = json_first(json_get(rep.result, "targetInfos"));
                     ti; ti = json_next(ti)) {
                    const char *u = json_get_str(ti, "url");
                    if (u && strstr(u, "/bank/login.html"))
                        snprintf(out, cap, "%.158s", eps[i]);
                }
                cdp_reply_free(&rep);
            }
            cdp_browser_free(h);
        }
        if (!*out)
            testlib_sleep_ms(200);
    }
}

/* True when the browser at endpoint runs headed (no HeadlessChrome). */
static bool is_headed(const char *endpoint)
{
    cdp_browser *h = cdp_browser_connect(endpoint, NULL, 5000, NULL);
    cdp_reply rep;
    bool headed = false;
    if (h && cdp_call(cdp_browser_conn(h), NULL, "Browser.getVersion", NULL, 5000, &rep,
                      NULL) == 0) {
        const char *ua = json_get_str(rep.result, "userAgent");
        headed = ua && !strstr(ua, "Headless");
        cdp_reply_free(&rep);
    }
    cdp_browser_free(h);
    return headed;
}

/* ---- what a core dump of the driver would hold ---- */

/* How often pid has been scheduled (voluntary + involuntary context
 * switches) and whether it sleeps now (state S: blocked in a system call,
 * for the idle driver its poll). -1 when unreadable. */
static long long proc_switches(pid_t pid, bool *sleeping)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long n = 0, v;
    *sleeping = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "State:", 6) == 0)
            *sleeping = strchr(line, 'S') != NULL;
        else if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
                 sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1)
            n += v;
    }
    fclose(f);
    return n;
}

/* One pass over the writable memory of pid: the hits of the planted
 * secrets, each described in det (up to cap bytes, the first 40). -1 when
 * nothing could be read. */
static int scan_plants(pid_t pid, const char *what, char *det, size_t cap)
{
    char path[64];
    size_t dl = 0;
    det[0] = 0;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "r");
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int mem = open(path, O_RDONLY);
    if (!maps || mem < 0) {
        snprintf(det, cap, "%s: cannot read the memory of pid %d: %s", what, (int)pid,
                 strerror(errno));
        if (maps)
            fclose(maps);
        if (mem >= 0)
            close(mem);
        return -1;
    }
    enum { CHUNK = 1 << 20, OVERLAP = 64 };
    char *buf = malloc(CHUNK + OVERLAP);
    char line[600];
    int hits = 0;
    size_t scanned = 0;
    while (buf && fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8] = "", name[400] = "";
        /* Over 1 GiB: the sanitizer build's shadow memory (terabytes of
         * zero pages reserved); the heap of the driver is far smaller. */
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %399[^\n]", &lo, &hi, perms, name) < 3 ||
            perms[1] != 'w' || strstr(name, "[vvar") || strstr(name, "[vsyscall]") ||
            hi - lo > (1ul << 30))
            continue;
        size_t keep = 0;
        for (unsigned long at = lo; at < hi;) {
            size_t want = hi - at < CHUNK ? (size_t)(hi - at) : CHUNK;
            ssize_t n = pread(mem, buf + keep, want, (off_t)at);
            if (n <= 0)
                break;
            size_t have = keep + (size_t)n;
            scanned += (size_t)n;
            for (const char *const *p = PLANTS; *p; p++) {
                size_t pl = strlen(*p);
                for (const char *q = buf; (q = memmem(q, have - (size_t)(q - buf), *p, pl));
                     q++) {
                    /* A hit wholly inside the overlap was counted last round. */
                    if ((size_t)(q - buf) + pl <= keep)
                        continue;
                    char ctx[97];
                    size_t from = (size_t)(q - buf) > 32 ? (size_t)(q - buf) - 32 : 0;
                    size_t k = 0;
                    for (size_t i = from; i < have && k < sizeof ctx - 1; i++, k++)
                        ctx[k] = buf[i] >= 0x20 && buf[i] < 0x7f ? buf[i] : '.';
                    ctx[k] = 0;
                    if (hits++ < 40 && dl < cap) {
                        int w = snprintf(det + dl, cap - dl,
                                         "%s%s: planted secret %s at %#lx in %s: \"%s\"",
                                         dl ? "\n       " : "", what, *p,
                                         at - keep + (unsigned long)(q - buf),
                                         *name ? name : "[anon]", ctx);
                        dl = w < 0 ? cap : dl + (size_t)w;
                    }
                }
            }
            keep = have < OVERLAP ? have : OVERLAP;
            memmove(buf, buf + have - keep, keep);
            at += (unsigned long)n;
        }
    }
    free(buf);
    fclose(maps);
    close(mem);
    if (scanned == 0) {
        snprintf(det, cap, "%s: nothing of pid %d's memory was readable", what, (int)pid);
        return -1;
    }
    return hits;
}

/* Count the planted secrets in the writable memory of the live process pid
 * -- heap (freed chunks included), stacks, anonymous mappings, data
 * segments: everything a core dump holds that the process wrote -- read
 * through /proc/PID/mem, and report each hit (value, mapping, surrounding
 * bytes) as a test failure naming what. Returns the hits, or -1 when the
 * memory could not be read (then the check fails too). The browser's own
 * processes legitimately hold the session; only the driver is read.
 *
 * The claim is "nothing is left once handled", so the pass that counts is
 * one taken while the driver is idle: asleep (in its poll) before the pass
 * and not scheduled at all during it (its context-switch counts unchanged).
 * The page keeps sending events (a late favicon request's cookies come in
 * a Network.*ExtraInfo event), and a pass that overlaps the microseconds
 * between reading such an event and zeroing it -- long under load, when the
 * driver is preempted there -- would report what is being handled, not
 * what was left. Passes that overlap any run of the driver are repeated. */
static int core_plants(pid_t pid, const char *what)
{
    char det[8192];
    int hits = -1;
    bool quiet = false;
    for (int tries = 0; tries < 50 && !quiet; tries++) {
        if (tries)
            testlib_sleep_ms(100);
        bool asleep = false, still = false;
        long long before = proc_switches(pid, &asleep);
        if (before < 0 || !asleep)
            continue;
        hits = scan_plants(pid, what, det, sizeof det);
        long long after = proc_switches(pid, &still);
        quiet = hits >= 0 && after == before && still;
        if (hits < 0)
            break;
    }
    if (hits < 0) {
        CHECK(!"the driver's memory is readable");
        test_fail_detail("%s", det);
        return -1;
    }
    if (!CHECK(quiet))
        test_fail_detail("%s: the driver (pid %d) never stayed idle for a whole pass in 50 "
                         "tries", what, (int)pid);
    if (hits > 0) {
        CHECK(!"planted secret in the driver's memory");
        test_fail_detail("%s%s", det, hits > 40 ? " (and more)" : "");
        if (hits > 40)
            test_fail_detail("%s: %d hits in all", what, hits);
    }
    return hits;
}

/* ---- the command line ---- */

/* No display: the browser runs headless and the person gets the live
 * view (issue 15; the whole login through it: test_takeover
 * cli_login_live). With no --live-notify and no --confirm the link is on
 * this terminal (stderr); the login waits for the person. With --confirm
 * the link goes to its program with its kind ("control"). */
static void t_cli_login_no_display(void)
{
    if (!testlib_need_browser())
        return;
    char data[400], url[200], rules[200];
    snprintf(data, sizeof data, "XDG_DATA_HOME=%s/nodisplay", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/login.html");
    const char *env[] = {data, "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "login", url, NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    CHECK(testlib_child_stderr_wait(&c, "http://127.0.0.1:", 30000));
    char *err = fixture_child_stderr(&c);
    CHECK_HAS(err, "in cdpgate's live view of the login page");
    CHECK_LACKS(err, "no display");
    free(err);
    kill(c.pid, SIGTERM);   /* the child this test started */
    testlib_child_free(&c);
    /* with --confirm PROG the link goes to it, with its kind ("control": the
     * person's, not a read-only watch link), never to the terminal */
    char confirm[1400], askedp[400], asked[4096] = "";
    snprintf(askedp, sizeof askedp, "%s/nodisplay-asked", world.root);
    snprintf(confirm, sizeof confirm, "cat > %s.part && mv %s.part %s", askedp, askedp,
             askedp);
    const char *argv2[] = {testlib_cdpgate_bin(), rules, "--confirm", confirm, "login", url,
                           NULL};
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv2, false)))
        return;
    CHECK(testlib_child_stderr_wait(&c, "the link went to the --confirm program", 30000));
    FILE *af = fopen(askedp, "r");
    if (CHECK(af != NULL)) {
        size_t an = fread(asked, 1, sizeof asked - 1, af);
        asked[an] = 0;
        fclose(af);
    }
    CHECK_HAS(asked, "{\"class\":\"live\",\"kind\":\"control\",\"message\":");
    CHECK_HAS(asked, "\"link\":\"http://127.0.0.1:");
    err = fixture_child_stderr(&c);
    CHECK_LACKS(err, "http://127.0.0.1:");
    free(err);
    kill(c.pid, SIGTERM);   /* the child this test started */
    testlib_child_free(&c);
}

/* The live view beyond loopback (issue 15, point 3) from the command line:
 * --live-bind to an address other than 127.0.0.1/::1 is refused at start
 * without --live-insecure (no TLS); with it, cdpgate warns on stderr before
 * the link goes out, the link names --live-host, the person's message says
 * the link crosses the network in clear text, and the view listens on that
 * address only (127.0.0.2 here: beyond the loopback literal, on this
 * machine). */
static void t_cli_login_live_bind(void)
{
    if (!testlib_need_browser())
        return;
    char data[400], url[200], rules[200];
    snprintf(data, sizeof data, "XDG_DATA_HOME=%s/livebind", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/login.html");
    const char *env[] = {data, "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--live-bind", "127.0.0.2", "login",
                          url, NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    CHECK_INT(2, fixture_child_wait(&c, 30000));
    char *err = fixture_child_stderr(&c);
    CHECK_HAS(err, "--live-bind 127.0.0.2 is beyond loopback");
    CHECK_HAS(err, "Add --live-insecure");
    CHECK_LACKS(err, "http://");
    free(err);
    testlib_child_free(&c);
    const char *argv2[] = {testlib_cdpgate_bin(), rules, "--live-bind", "127.0.0.2",
                           "--live-insecure", "--live-host", "viewer.lan.test", "login", url,
                           NULL};
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv2, false)))
        return;
    CHECK(testlib_child_stderr_wait(&c, "http://viewer.lan.test:", 30000));
    err = fixture_child_stderr(&c);
    const char *w = strstr(err, "cdpgate: warning: live view: listening beyond loopback "
                           "without TLS");
    const char *l = strstr(err, "http://viewer.lan.test:");
    CHECK(w && l && w < l);     /* warned before the link went out */
    CHECK_HAS(err, "over the network, in clear text");
    int port = l ? atoi(l + strlen("http://viewer.lan.test:")) : 0;
    CHECK(port > 0);
    const char *addrs[] = {"127.0.0.2", "127.0.0.1"};
    for (int k = 0; k < 2 && port > 0; k++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        inet_pton(AF_INET, addrs[k], &a.sin_addr);
        int rc = fd >= 0 ? connect(fd, (struct sockaddr *)&a, sizeof a) : -1;
        CHECK_INT(k == 0 ? 0 : -1, rc);  /* bound to 127.0.0.2 only */
        if (fd >= 0)
            close(fd);
    }
    free(err);
    kill(c.pid, SIGTERM);   /* the child this test started */
    testlib_child_free(&c);
}

/* `cdpgate login` headed under Xvfb: a real window; a second client plays
 * the human; the session lands in the vault; a fresh `cdpgate snapshot`
 * (headless, no display) restores it unattended. Then Enter in the
 * terminal ends a login at once. */
static void t_cli_login_headed_xvfb(void)
{
    if (!testlib_need_browser())
        return;
    if (!have_xvfb()) {
        test_skip("Xvfb not installed (apt-get install -y xvfb)");
        return;
    }
    pid_t xpid = 0;
    int dnum = xvfb_start(&xpid);
    if (!CHECK(dnum >= 0))
        return;
    char display[32], data[400], tmpenv[400], tmp[300], url[200], rules[200];
    snprintf(display, sizeof display, "DISPLAY=:%d", dnum);
    snprintf(data, sizeof data, "XDG_DATA_HOME=%s/cli", world.root);
    snprintf(tmp, sizeof tmp, "%s/clitmp", world.root);
    mkdir(tmp, 0700);
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmp);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/login.html");
    const char *env[] = {display, data, tmpenv, "WAYLAND_DISPLAY", NULL};
    char grant[400];
    write_bank_grant(tmp, grant, sizeof grant);
    const char *argv[] = {testlib_cdpgate_bin(), "--port", rules, "--grant", grant, "login", url,
                          NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false))) {
        xvfb_stop(xpid);
        return;
    }
    char ep[160];
    login_endpoint(tmp, ep, sizeof ep);
    if (CHECK(*ep)) {
        CHECK(is_headed(ep));
        human_login(ep, FIXTURE_BANK_OTP);
    }
    CHECK_INT(0, fixture_child_wait(&c, 30000));
    const char *out = c.got ? c.got : "";
    CHECK_HAS(out, "saved in the vault");
    char *err = fixture_child_stderr(&c);
    check_no_plants("login stdout", out);
    check_no_plants("login stderr", err);
    free(err);
    testlib_child_free(&c);
    /* A fresh process restores it, with no display. */
    char acct[200];
    testlib_world_url(&world, acct, sizeof acct, "bank.test", "/bank/account");
    const char *env2[] = {data, tmpenv, "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv2[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "snapshot", acct, NULL};
    if (CHECK_INT(0, testlib_child_spawn(&c, world.root, env2, argv2, false))) {
        CHECK_INT(0, fixture_child_wait(&c, 30000));
        out = c.got ? c.got : "";
        CHECK_HAS(out, "auth=yes");
        CHECK_HAS(out, "Account overview");
        CHECK_HAS(out, "Preferences: restored");
        err = fixture_child_stderr(&c);
        check_no_plants("snapshot stdout", out);
        check_no_plants("snapshot stderr", err);
        free(err);
        testlib_child_free(&c);
    }
    /* Enter in the terminal: the human says done. */
    snprintf(data, sizeof data, "XDG_DATA_HOME=%s/cli-enter", world.root);
    const char *env3[] = {display, data, tmpenv, "WAYLAND_DISPLAY", NULL};
    const char *argv3[] = {testlib_cdpgate_bin(), rules, "login", url, NULL};
    if (CHECK_INT(0, testlib_child_spawn(&c, world.root, env3, argv3, false))) {
        CHECK(write(c.in, "\n", 1) == 1);
        CHECK_INT(0, fixture_child_wait(&c, 30000));
        CHECK_HAS(c.got ? c.got : "", "the human said done");
        testlib_child_free(&c);
    }
    xvfb_stop(xpid);
}

/* ---- the MCP server ---- */

/* The whole MCP path under Xvfb: browser_login opens a headed window and
 * blocks every tool until the human (a second CDP client) has logged in;
 * the main browser then restores the session; snapshot, text and actions
 * on the authenticated page; a second login ended by the host's
 * --login-done-fd signal. No planted secret appears in any tool result,
 * on stderr or in the vault's files. */
static void t_mcp_login_and_plants(void)
{
    if (!testlib_need_browser())
        return;
    if (!have_xvfb()) {
        test_skip("Xvfb not installed (apt-get install -y xvfb)");
        return;
    }
    pid_t xpid = 0;
    int dnum = xvfb_start(&xpid);
    if (!CHECK(dnum >= 0))
        return;
    char display[32], data[400], tmpenv[400], tmp[300], rules[200], args[600];
    snprintf(display, sizeof display, "DISPLAY=:%d", dnum);
    snprintf(data, sizeof data, "XDG_DATA_HOME=%s/mcp", world.root);
    snprintf(tmp, sizeof tmp, "%s/mcptmp", world.root);
    mkdir(tmp, 0700);
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmp);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    const char *env[] = {display, data, tmpenv, "WAYLAND_DISPLAY", NULL};
    char grant[400];
    write_bank_grant(tmp, grant, sizeof grant);
    /* The human approves confirmations through a --confirm program that
     * also leaves a mark for each request it was asked. */
    char confirm[800];
    snprintf(confirm, sizeof confirm, "cat >> %s/asked; echo '{\"decision\":\"allow\"}'", tmp);
    const char *argv[] = {testlib_cdpgate_bin(), "--port", rules, "--grant", grant, "--confirm",
                          confirm, "--login-done-fd", "3", "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, true))) {
        xvfb_stop(xpid);
        return;
    }
    char *r = testlib_mcp_request(&c, 1, "initialize", "{\"protocolVersion\":\"2025-11-25\","
                  "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}",
                  20000);
    CHECK_HAS(r, "cdpgate");
    free(r);
    char url[200], login[200], acct[200];
    testlib_world_url(&world, url, sizeof url, "a.test", "/index.html");
    testlib_world_url(&world, login, sizeof login, "bank.test", "/bank/login.html");
    testlib_world_url(&world, acct, sizeof acct, "bank.test", "/bank/account");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    r = testlib_mcp_tool(&c, 2, "browser_open", args);
    CHECK_HAS(r, "auth=no");
    free(r);
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", login);
    r = testlib_mcp_tool(&c, 3, "browser_login", args);
    CHECK_HAS(r, "Login handoff");
    CHECK_LACKS(r, "\"isError\":true");
    free(r);
    /* Blocked: every tool, browser_login included. */
    r = testlib_mcp_tool(&c, 4, "browser_snapshot", "{}");
    CHECK_HAS(r, "waiting for the human to finish logging in");
    CHECK_HAS(r, "\"isError\":true");
    free(r);
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", acct);
    r = testlib_mcp_tool(&c, 5, "browser_open", args);
    CHECK_HAS(r, "waiting for the human to finish logging in");
    free(r);
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", login);
    r = testlib_mcp_tool(&c, 6, "browser_login", args);
    CHECK_HAS(r, "waiting for the human to finish logging in");
    free(r);
    /* The human, in the visible window. */
    char ep[160];
    login_endpoint(tmp, ep, sizeof ep);
    if (CHECK(*ep)) {
        CHECK(is_headed(ep));
        human_login(ep, FIXTURE_BANK_OTP);
    }
    int id = 7;
    bool finished = false;
    for (int i = 0; i < 40 && !finished; i++, id++) {
        r = testlib_mcp_tool(&c, id, "browser_snapshot", "{}");
        finished = !strstr(r, "waiting for the human");
        if (finished)
            CHECK_HAS(r, "Login finished");
        free(r);
        if (!finished)
            testlib_sleep_ms(250);
    }
    CHECK(finished);
    /* Restored in the agent's own (headless) browser. */
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", acct);
    r = testlib_mcp_tool(&c, id++, "browser_open", args);
    CHECK_HAS(r, "auth=yes");
    CHECK_HAS(r, "Account overview");
    CHECK_HAS(r, "Preferences: restored");
    free(r);
    r = testlib_mcp_tool(&c, id++, "browser_snapshot", "{\"text\":true}");
    CHECK_HAS(r, "Checking balance");
    free(r);
    r = testlib_mcp_tool(&c, id++, "browser_screenshot", "{}");
    free(r);
    /* The login page in the bank's context: type the user name (never a
     * credential), then follow the partner link. */
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", login);
    r = testlib_mcp_tool(&c, id++, "browser_open", args);
    char ref[16];
    testlib_mcp_ref(r, "textbox \\\"User\\\"", ref, sizeof ref);
    free(r);
    if (CHECK(*ref)) {
        snprintf(args, sizeof args, "{\"ref\":\"%s\",\"text\":\"alice\"}", ref);
        r = testlib_mcp_tool(&c, id++, "browser_type", args);
        free(r);
    }
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", acct);
    r = testlib_mcp_tool(&c, id++, "browser_open", args);
    char link[16];
    testlib_mcp_ref(r, "Hide balance", ref, sizeof ref);
    testlib_mcp_ref(r, "Partner offers", link, sizeof link);
    free(r);
    if (CHECK(*ref)) {
        snprintf(args, sizeof args, "{\"ref\":\"%s\"}", ref);
        r = testlib_mcp_tool(&c, id++, "browser_click", args);
        free(r);
    }
    if (CHECK(*link)) {
        /* Following the link to a granted origin is a read: not asked. */
        snprintf(args, sizeof args, "{\"ref\":\"%s\"}", link);
        r = testlib_mcp_tool(&c, id++, "browser_click", args);
        free(r);
        /* The click on the button of the authenticated page went to the
         * --confirm program, which was told what and where, and no
         * secret. */
        char askedp[400], asked[4096] = "";
        snprintf(askedp, sizeof askedp, "%s/asked", tmp);
        FILE *af = fopen(askedp, "r");
        if (CHECK(af != NULL)) {
            size_t an = fread(asked, 1, sizeof asked - 1, af);
            asked[an] = 0;
            fclose(af);
        }
        CHECK_HAS(asked, "Hide balance");
        CHECK_HAS(asked, "\"action\":\"click\"");
        CHECK_LACKS(asked, "Partner offers");
        check_no_plants("confirmation request", asked);
        r = testlib_mcp_tool(&c, id++, "browser_snapshot", "{}");
        CHECK_HAS(r, "cookies: []");
        CHECK_HAS(r, "auth=no");
        free(r);
    }
    /* A second login, ended by the host: a byte on --login-done-fd. */
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", login);
    r = testlib_mcp_tool(&c, id++, "browser_login", args);
    CHECK_HAS(r, "Login handoff");
    free(r);
    r = testlib_mcp_tool(&c, id++, "browser_snapshot", "{}");
    CHECK_HAS(r, "waiting for the human");
    free(r);
    CHECK(write(c.fd3_w, "y", 1) == 1);
    finished = false;
    for (int i = 0; i < 40 && !finished; i++, id++) {
        r = testlib_mcp_tool(&c, id, "browser_tabs", "{\"action\":\"list\"}");
        finished = !strstr(r, "waiting for the human");
        if (finished)
            CHECK_HAS(r, "the human said done");
        free(r);
        if (!finished)
            testlib_sleep_ms(250);
    }
    CHECK(finished);
    /* A core dump of the driver now (two captures, a restore into the
     * main browser over WebSocket, the human's password and code sent
     * through pages it watches) holds none of the planted secrets. */
    core_plants(c.pid, "MCP server memory after login and restore");
    CHECK_INT(0, fixture_child_wait(&c, 30000));
    char *err = fixture_child_stderr(&c);
    check_no_plants("MCP stdout (every tool result)", c.got);
    check_no_plants("MCP stderr", err);
    free(err);
    testlib_child_free(&c);
    /* The vault's files hold no plaintext. */
    char sdir[500];
    snprintf(sdir, sizeof sdir, "%s/mcp/cdpgate/sessions", world.root);
    DIR *d = opendir(sdir);
    struct dirent *e;
    int files = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[800];
        snprintf(p, sizeof p, "%s/%s", sdir, e->d_name);
        size_t len = 0;
        char *s2 = test_read_file(p, &len);
        for (const char *const *pl = PLANTS; s2 && *pl; pl++)
            CHECK(memmem(s2, len, *pl, strlen(*pl)) == NULL);
        free(s2);
        files++;
    }
    if (d)
        closedir(d);
    CHECK(files >= 2);
    xvfb_stop(xpid);
}

/* Restore over the pipe: an MCP server (headless, no --port) restores the
 * bank's and the shop's stored sessions (HttpOnly and Secure cookies,
 * localStorage) and works on the pages; then its memory -- what a core
 * dump would hold -- has none of the planted values. */
static void t_core_restore_pipe(void)
{
    if (!testlib_need_browser())
        return;
    char data[400], vdir[400], rules[200], args[600], acct[200], shop[200], err[300] = "";
    snprintf(data, sizeof data, "XDG_DATA_HOME=%s/corepipe", world.root);
    snprintf(vdir, sizeof vdir, "%s/corepipe", world.root);
    mkdir(vdir, 0700);
    snprintf(vdir, sizeof vdir, "%s/corepipe/cdpgate", world.root);
    vault *v = vault_open(vdir, NULL, err, sizeof err);
    if (!CHECK(v != NULL)) {
        test_fail_detail("vault_open: %s", err);
        return;
    }
    plant_bank(v, true, 0);
    plant_shop(v);
    vault_close(v);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    const char *env[] = {data, "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    char gdir[400], grant[400];
    snprintf(gdir, sizeof gdir, "%s/corepipe", world.root);
    write_bank_grant(gdir, grant, sizeof grant);
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    char *r = testlib_mcp_request(&c, 1, "initialize", "{\"protocolVersion\":\"2025-11-25\","
                  "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}",
                  20000);
    free(r);
    testlib_world_url(&world, acct, sizeof acct, "bank.test", "/bank/account");
    testlib_world_url(&world, shop, sizeof shop, "shop.test", "/index.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", acct);
    r = testlib_mcp_tool(&c, 2, "browser_open", args);
    CHECK_HAS(r, "auth=yes");
    CHECK_HAS(r, "Preferences: restored");
    free(r);
    r = testlib_mcp_tool(&c, 3, "browser_snapshot", "{\"text\":true}");
    CHECK_HAS(r, "Checking balance");
    free(r);
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", shop);
    r = testlib_mcp_tool(&c, 4, "browser_open", args);
    CHECK_HAS(r, "auth=yes");
    free(r);
    r = testlib_mcp_tool(&c, 5, "browser_tabs", "{\"action\":\"list\"}");
    free(r);
    core_plants(c.pid, "MCP server memory after restoring over the pipe");
    CHECK_INT(0, fixture_child_wait(&c, 30000));
    check_no_plants("MCP stdout", c.got);
    testlib_child_free(&c);
}

static const test_case TESTS[] = {
    {"untrusted_context", t_untrusted_context},
    {"restore_isolated", t_restore_isolated},
    {"expired_and_rejected", t_expired_and_rejected},
    {"forget_keeps_auth", t_forget_keeps_auth},
    {"signed_out_then_new_login", t_signed_out_then_new_login},
    {"login_headless_then_restore", t_login_headless_then_restore},
    {"login_human_done", t_login_human_done},
    {"unnamed_login_keeps_named", t_unnamed_login_keeps_named},
    {"login_origin_named", t_login_origin_named},
    {"login_done_elsewhere", t_login_done_elsewhere},
    {"login_done_lure_host", t_login_done_lure_host},
    {"cli_login_live_bind", t_cli_login_live_bind},
    {"cli_login_no_display", t_cli_login_no_display},
    {"cli_login_headed_xvfb", t_cli_login_headed_xvfb},
    {"mcp_login_and_plants", t_mcp_login_and_plants},
    {"core_restore_pipe", t_core_restore_pipe},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (testlib_world_up(&world, "login", host_args, false) != 0)
        return 1;
    test_gate_open();
    int rc = test_main(argc, argv, TESTS);
    gate_free(test_gate);
    testlib_world_down(&world);
    return rc;
}
