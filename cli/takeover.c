/*
 * takeover.c — the live view wired to the MCP server's browser (issue 15):
 * while the human holds control, the live server (live/) serves the
 * current tab's screencast (snapshot/cast.c) on loopback and the person's
 * input goes to the tab through the sink (snap_human_input: accepted only
 * while the gate's mode is human). Control passes to the human when the
 * person opens the link (the viewer connects): that is the sign a person
 * is at the browser; until then the agent waits and the page's requests
 * are still judged under the agent's rules. The person's hand-back (the viewer's
 * button) gives control back to the agent; the agent's next result gets a
 * compact account (cli_takeover_end): the origin of the person's last page
 * (path and query withheld, as the sink shows what a person opens), logged
 * in or not (and the sign-in's session sealed into the vault:
 * snap_human_handback), the origins visited, the cookies set counted by
 * site (never a name: the page chooses it, red team s17, R7-4; never a
 * value), a fresh observation id. The person sees the page's whole URL in
 * the view; the model never gets it from here.
 *
 * Tabs: the viewer gets the tab list of the context the person controls
 * (title and origin, the shown one marked) whenever it changes; a popup
 * the page opens is followed (it becomes the current tab, and the cast
 * moves to it), its opener again when it closes; the person's choice of a
 * tab ({"t":"tab"}, from the control viewer only: live/ refuses a
 * watcher's) goes through snap_human_tab_switch (the sink's 'human_tab'
 * permit) and is audited.
 *
 * Nothing here logs or keeps what the person typed, or a frame; the link
 * (the token) is handed to the caller for the out-of-band channel only.
 */
#include "cli/takeover.h"
#include "cli/cli.h"
#include "base/base.h"
#include "gate/gate.h"
#include "json/json.h"
#include "live/live.h"
#include "snapshot/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TK_ORIGINS_MAX 16

struct cli_takeover {
    snap_agent *a;
    gate *g;
    live_server *srv;
    snap_cast *cast;
    bool handback;
    bool seen;                  /* a viewer connected once */
    int64_t start_ms, ttl_ms;
    char url[2048];             /* the current tab's, as last sent to the viewer */
    char origins[TK_ORIGINS_MAX][256];
    int norigins;
    char *cookies0;             /* cookie names before ("domain name" lines) */
    snap_human_seen tabs_seen;  /* snap_human_follow's state */
    snap_human_tab tabs[SNAP_HUMAN_TABS_MAX];   /* the tab list as last sent */
    size_t ntabs, tabs_total;
    bool tabs_sent;
};

static void tk_audit(void *ud, bool allowed, const char *what)
{
    cli_takeover *t = ud;
    gate_audit_live(t->g, allowed, what);
}

static void tk_frame(void *ud, const uint8_t *jpeg, size_t len, const snap_cast_meta *m)
{
    cli_takeover *t = ud;
    (void)m;
    live_server_frame(t->srv, jpeg, len);
}

/* The viewer's mouse point (frame pixels) into CSS pixels: params again
 * with x and y scaled (new; NULL when they need no change). */
static char *tk_scale(cli_takeover *t, const char *params)
{
    json_doc *d = json_parse(params, strlen(params), NULL, NULL);
    const json_val *r = d ? json_doc_root(d) : NULL;
    double x = 0, y = 0;
    if (!r || snap_cast_point(t->cast, json_num(json_get(r, "x")), json_num(json_get(r, "y")),
                              &x, &y) != 0) {
        json_doc_free(d);
        return NULL;
    }
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    for (const json_val *m = json_first(r); m; m = json_next(m)) {
        size_t kl = 0;
        const char *k = json_key(m, &kl);
        char key[32];
        snprintf(key, sizeof key, "%.*s", (int)(kl < 31 ? kl : 31), k);
        json_w_key(&w, key);
        if (strcmp(key, "x") == 0 || strcmp(key, "y") == 0) {
            json_w_num(&w, strcmp(key, "x") == 0 ? x : y);
            continue;
        }
        char *v = json_write(m, NULL);
        if (v)
            json_w_raw(&w, v, strlen(v), true);
        free(v);
    }
    json_w_obj_end(&w);
    json_doc_free(d);
    char *out = json_w_take(&w, NULL);
    json_w_free(&w);
    return out;
}

/* The person chose a tab in the view ({"t":"tab"}): switched through the
 * sink (snap_human_tab_switch), audited either way (the tab's id only). */
static void tk_tab(cli_takeover *t, const char *id)
{
    char why[300], line[360];
    int rc = snap_human_tab_switch(t->a, id, why, sizeof why);
    if (rc == 0)
        snprintf(line, sizeof line, "the person switched the view to tab %s", id);
    else
        snprintf(line, sizeof line, "%s", why);
    gate_audit_live(t->g, rc == 0, line);
    if (rc)
        fprintf(stderr, "cdpgate: live view: %s\n", why);
}

static void tk_message(void *ud, const char *json, size_t len)
{
    cli_takeover *t = ud;
    live_input_cmd cmd = {0};
    bool hb = false;
    int rc = live_input_translate(json, len, &cmd, &hb, NULL);
    if (rc == 0 && hb) {
        t->handback = true;
        return;
    }
    if (rc == 2)
        tk_tab(t, cmd.tab);
    if (rc != 1)
        return;
    char *scaled = strcmp(cmd.method, "Input.dispatchMouseEvent") == 0
                   ? tk_scale(t, cmd.params) : NULL;
    char why[300];
    if (snap_human_input(t->a, cmd.method, scaled ? scaled : cmd.params, why, sizeof why) != 0)
        fprintf(stderr, "cdpgate mcp: live view: %s\n", why);
    free(scaled);
    live_input_free(&cmd);
}

/* The viewer's state: the URL and its origin, who holds control. */
static void tk_send_state(cli_takeover *t)
{
    char origin[256] = "";
    snap_url_origin(t->url, origin, sizeof origin);
    live_server_send_url(t->srv, t->url, origin);
    live_server_send_control(t->srv, gate_mode(t->g) == GATE_MODE_HUMAN,
                             (int64_t)gate_epoch(t->g));
}

/* The current URL: a new one is sent to the viewer and its origin kept. */
static void tk_follow_url(cli_takeover *t, bool force)
{
    char url[2048];
    if (snap_human_url(t->a, url, sizeof url) != 0)
        return;
    if (!force && strcmp(url, t->url) == 0)
        return;
    snprintf(t->url, sizeof t->url, "%s", url);
    /* the origins for the model's account: as the sink shows a request the
     * person makes (a host outside the grant cut to its last labels) */
    char origin[256];
    if (snap_url_origin(url, origin, sizeof origin) == 0 && *origin &&
        snap_human_origin(t->a, origin, sizeof origin) == 0 && *origin) {
        bool have = false;
        for (int i = 0; i < t->norigins; i++)
            have = have || strcmp(t->origins[i], origin) == 0;
        if (!have && t->norigins < TK_ORIGINS_MAX)
            snprintf(t->origins[t->norigins++], sizeof t->origins[0], "%s", origin);
    }
    tk_send_state(t);
}

/* The tab list of the person's context, sent when it changed (a popup, a
 * switch, a title, a tab closed): titles and origins, never a path. */
static void tk_send_tabs(cli_takeover *t)
{
    snap_human_tab now[SNAP_HUMAN_TABS_MAX];
    size_t total = 0;
    size_t n = snap_human_tabs(t->a, now, SNAP_HUMAN_TABS_MAX, &total);
    if (t->tabs_sent && n == t->ntabs && total == t->tabs_total &&
        memcmp(now, t->tabs, n * sizeof now[0]) == 0)
        return;
    memcpy(t->tabs, now, n * sizeof now[0]);
    t->ntabs = n;
    t->tabs_total = total;
    t->tabs_sent = true;
    live_tab lt[SNAP_HUMAN_TABS_MAX];
    for (size_t i = 0; i < n; i++)
        lt[i] = (live_tab){.id = now[i].id, .title = now[i].title, .url = NULL,
                           .current = now[i].current, .origin = now[i].origin};
    live_server_send_tabs(t->srv, lt, n);
}

cli_takeover *cli_takeover_start(snap_agent *a, gate *g, const cli_opts *opts, char *link,
                                 size_t linkcap, char *why, size_t cap)
{
    int64_t ttl_ms = (int64_t)opts->live_ttl_s * 1000;
    cli_takeover *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    t->a = a;
    t->g = g;
    t->ttl_ms = ttl_ms > 0 ? ttl_ms : LIVE_TOKEN_TTL_MS;
    t->start_ms = base_now_ms();
    live_server_opts o = {.token_ttl_ms = t->ttl_ms, .audit = tk_audit,
                          .message = tk_message, .ud = t, .bind = opts->live_bind,
                          .public_host = opts->live_host,
                          .insecure_bind = opts->live_insecure};
    live_err err = {0};
    t->srv = live_server_new(&o, &err);
    /* beyond loopback in clear text: said where the person and the
     * operator see it, before the link is sent anywhere */
    if (t->srv && live_server_warning(t->srv))
        fprintf(stderr, "cdpgate: warning: %s\n", live_server_warning(t->srv));
    snap_cast_opts co = {.frame = tk_frame, .ud = t};
    t->cast = t->srv ? snap_cast_start(a, &co, why, cap) : NULL;
    if (!t->srv)
        snprintf(why, cap, "the live view cannot start: %s%s", err.msg,
                 err.code == LIVE_EDENIED && !opts->live_insecure ?
                 " (--live-insecure allows it, in clear text)" : "");
    if (!t->cast || live_server_link(t->srv, link, linkcap) < 0) {
        cli_takeover_free(t);
        return NULL;
    }
    t->cookies0 = snap_human_cookies(a);
    snap_human_follow(a, &t->tabs_seen);    /* the tabs open now are not popups */
    tk_follow_url(t, true);
    tk_send_tabs(t);
    return t;
}

bool cli_takeover_step(cli_takeover *t)
{
    if (!t || t->handback)
        return false;
    live_server_pump(t->srv, 0);
    if (live_server_viewing(t->srv) && !t->seen) {
        /* The person opened the link: a person is at the browser now, so
         * control passes (what the page sent before is judged under the
         * agent's rules first, as for a confirmed takeover). */
        t->seen = true;
        if (gate_mode(t->g) != GATE_MODE_AGENT || snap_handover(t->a) != 0) {
            t->handback = true;
            return false;
        }
        gate_set_mode(t->g, GATE_MODE_HUMAN, "person (live view)");
        snap_idle(t->a);
        tk_follow_url(t, true);
    }
    /* a popup the page opened is shown (and its opener again when it
     * closes); the cast follows the current tab */
    snap_human_follow(t->a, &t->tabs_seen);
    snap_cast_step(t->cast);
    tk_follow_url(t, false);
    tk_send_tabs(t);
    /* nobody opened the link in its lifetime: control goes back */
    if (!t->seen && base_now_ms() - t->start_ms > t->ttl_ms)
        t->handback = true;
    return !t->handback && (!t->seen || gate_mode(t->g) == GATE_MODE_HUMAN);
}

_Static_assert(CLI_TAKEOVER_FDS >= LIVE_SERVER_FDS, "room for the live server's fds");

int cli_takeover_fds(const cli_takeover *t, int *fds, int cap)
{
    return t && t->srv ? live_server_fds(t->srv, fds, cap) : 0;
}

/* "Logged in: ..." for the account (out, cap bytes). */
static void tk_logged_in(const snap_handback *h, char *out, size_t cap)
{
    if (h->saved)
        snprintf(out, cap, "logged in: %s at %s; the session (%zu cookies, %zu localStorage "
                 "items; no form values) is saved in the vault under the identity \"%s\" "
                 "and later runs restore it%s", h->logged_in ? "yes" : "no", h->shown,
                 h->ncookies, h->nls, h->identity,
                 h->logged_in ? "; the page is open in the session's own browser context "
                 "(auth=yes)" : "");
    else
        snprintf(out, cap, "logged in: %s%s%s", h->logged_in ? "yes" : "no",
                 *h->shown ? " at " : "", h->shown);
    /* why nothing was saved; or, saved, what failed after the save */
    if (*h->note)
        snprintf(out + strlen(out), cap - strlen(out), " (%s)", h->note);
}

char *cli_takeover_end(cli_takeover *t, const char *how, cli_takeover_login *lg)
{
    if (!t)
        return NULL;
    tk_follow_url(t, false);
    /* The person's last page by its origin only: the sink's rule for what
     * a person opens (a reset or magic-login path, a ticket in a query:
     * red team s15, R5-4). */
    char page[700];
    snap_human_page(t->a, page, sizeof page);
    char *now = snap_human_cookies(t->a);
    char cookies[1200], origins[TK_ORIGINS_MAX * 260] = "";
    snap_human_cookies_new(t->cookies0, now, cookies, sizeof cookies);
    free(now);
    size_t n = 0;
    for (int i = 0; i < t->norigins; i++)
        n += (size_t)snprintf(origins + n, sizeof origins - n, "%s%s", i ? ", " : "",
                              t->origins[i]);
    /* the cast ends before the session moves (its tab may close) */
    snap_cast_stop(t->cast);
    t->cast = NULL;
    snap_handback h;
    snap_human_handback(t->a, t->seen, &h);
    if (lg) {
        lg->logged_in = h.logged_in;
        snprintf(lg->origin, sizeof lg->origin, "%s", h.origin);
        snprintf(lg->identity, sizeof lg->identity, "%s", h.identity);
    }
    char login[1200];
    tk_logged_in(&h, login, sizeof login);
    size_t cap = 6000 + strlen(page);
    char *out = malloc(cap);
    if (out)
        snprintf(out, cap, "The person %s (epoch %llu). During the takeover: the page now is "
                 "%s; %s; origins visited: %s; cookies set (counted by site; no name, no "
                 "value): %s. New observation %s: refs and observations from before the "
                 "takeover are stale; take a new snapshot.", how,
                 (unsigned long long)gate_epoch(t->g), page, login,
                 *origins ? origins : "(none)", *cookies ? cookies : "(none)", h.obs);
    cli_takeover_free(t);
    return out;
}

int cli_takeover_watch(cli_takeover *t, char *link, size_t cap, char *why, size_t whycap)
{
    live_err err = {0};
    if (live_server_watch_link(t->srv, link, cap, &err) < 0) {
        snprintf(why, whycap, "no watch link: %s", err.msg);
        return -1;
    }
    return 0;
}

bool cli_takeover_handed_back(const cli_takeover *t)
{
    return t && t->handback;
}

bool cli_takeover_seen(const cli_takeover *t)
{
    return t && t->seen;
}

void cli_takeover_free(cli_takeover *t)
{
    if (!t)
        return;
    snap_cast_stop(t->cast);
    live_server_free(t->srv);
    free(t->cookies0);
    free(t);
}

#define TK_SAID_MAX 200

const char *cli_takeover_where(const cli_opts *o)
{
    /* the server refuses an address beyond loopback without the flag */
    bool loop = !o->live_bind || !o->live_insecure || live_addr_loopback(o->live_bind);
    return loop ? "on this machine" : "over the network, in clear text: anyone who sees the "
                  "traffic can watch or take over";
}

void cli_takeover_message(char *out, size_t cap, const char *what, const char *said,
                          const gate *g, const cli_opts *o)
{
    int s = o->live_ttl_s > 0 ? o->live_ttl_s : (int)(LIVE_TOKEN_TTL_MS / 1000);
    char life[40], stop[500];
    snprintf(life, sizeof life, s >= 120 ? "%d minutes" : "%d seconds", s >= 120 ? s / 60 : s);
    size_t n = (size_t)snprintf(out, cap, "cdpgate: the agent hands the browser to a "
                                "person%s%s. Open the live view to take over (it works once, "
                                "%s, for %s); hand control back from it when you "
                                "are done. While you hold control, cdpgate does not judge what "
                                "you do in the page: each click and key is yours.",
                                what && *what ? ": " : "", what ? what : "",
                                cli_takeover_where(o), life);
    if (g && gate_last_stop(g, stop, sizeof stop) && n < cap)
        n += (size_t)snprintf(out + n, cap - n, "\n\ncdpgate stopped the agent last at: %s "
                              "(the page's names quoted and escaped). cdpgate does not ask you "
                              "to do that; whether you do is your decision.", stop);
    if (!said || n >= cap)
        return;
    char q[TK_SAID_MAX + 1];
    bool cut = gate_text_escape(q, sizeof q, said, strlen(said), 0) >= sizeof q;
    snprintf(out + n, cap - n, "\n\nThe agent says (its words, not cdpgate's; escaped: \\\" is "
             "a quote, \\n a line break; at most %d bytes): \"%s\"%s", TK_SAID_MAX, q,
             cut ? " (cut)" : "");
}

void cli_takeover_deliver(const cli_opts *o, const char *cmd, const char *link, bool watch,
                          const char *msg)
{
    char why[300];
    const char *kind = watch ? "watch" : "control";
    if (o->live_notify) {
        cli_program_run(o->live_notify, link, watch ? "CDPGATE_LIVE_KIND=watch" :
                        "CDPGATE_LIVE_KIND=control", 10000, NULL, NULL, why, sizeof why);
        fprintf(stderr, "cdpgate %s: live view: the %slink went to --live-notify\n", cmd,
                watch ? "watch " : "");
        return;
    }
    if (o->confirm) {
        json_w w;
        json_w_init(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, "class");
        json_w_str(&w, "live");
        json_w_key(&w, "kind");
        json_w_str(&w, kind);
        json_w_key(&w, "message");
        json_w_str(&w, msg);
        json_w_key(&w, "link");
        json_w_str(&w, link);
        json_w_obj_end(&w);
        char *p = json_w_take(&w, NULL);
        json_w_free(&w);
        if (p)
            cli_confirm_program(o->confirm, p, 10000, why, sizeof why);
        free(p);
        fprintf(stderr, "cdpgate %s: live view: the link went to the --confirm program\n",
                cmd);
        return;
    }
    fprintf(stderr, "cdpgate %s: %s\n  %s\n", cmd, msg, link);
}
