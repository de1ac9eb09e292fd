/*
 * login.c — `cdpgate login URL`: the human login handoff (docs/cli.md,
 * "login"), and what the MCP server's browser_login shares with it: whether
 * a display exists and opening the session vault.
 *
 * The browser is launched headed (a visible window) on the login page, in a
 * fresh browser context of its own; the human logs in there while cdpgate
 * watches. With no display ($DISPLAY and $WAYLAND_DISPLAY unset) or with
 * --live, it runs headless and the person logs in through cdpgate's live
 * view of that tab (cli/takeover.c; issue 15), the link delivered out of
 * band; the person's hand-back from the view says done, like Enter. It
 * ends when the page is back on the service's origin with no visible
 * password field and off the login path, or when the human presses Enter
 * in this terminal (a line on stdin). Then only the session state —
 * that context's cookies for the service and the origin's localStorage,
 * never form values — is sealed into the vault. Nothing the page shows or
 * holds is printed.
 */
#include "cli/cli.h"
#include "cli/takeover.h"
#include "gate/gate.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOGIN_MAX_MS (30 * 60 * 1000)   /* a login left alone ends after 30 min */
#define LOGIN_POLL_MS 250

bool cli_has_display(void)
{
    const char *d = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
    return (d && *d) || (w && *w);
}

struct vault *cli_vault_existing(const char *cmd)
{
    char path[1200];
    const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (x && *x)
        snprintf(path, sizeof path, "%s/cdpgate/sessions", x);
    else if (home && *home)
        snprintf(path, sizeof path, "%s/.local/share/cdpgate/sessions", home);
    else
        return NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return NULL;
    char err[400] = "";
    vault *v = vault_open(NULL, NULL, err, sizeof err);
    if (!v)
        fprintf(stderr, "cdpgate %s: the session vault cannot be opened (%s); stored "
                "sessions are not used\n", cmd, err);
    return v;
}

/* Wait for the login's end: Enter here, the page leaving the login
 * (snap_login_poll's detection), or the person's hand-back from the live
 * view (tk, when it runs: served meanwhile). snap_login_poll's code with r
 * filled, or LOGIN_GAVE_UP (said on stderr, nothing saved). */
#define LOGIN_GAVE_UP 1

/* Wait up to ms for the terminal (stdin, when open) or, while the live
 * view runs (tk), its sockets and the browser's connection bc: the
 * person's input, the frame acknowledgements and the screencast's frames
 * (acknowledged as they are read: Chromium sends 2 unacknowledged at most)
 * wake the loop at once, not at LOGIN_POLL_MS. 1 when stdin is readable
 * (or hung up), else 0. */
static int login_poll(bool stdin_open, const cli_takeover *tk, cdp_conn *bc, int ms)
{
    struct pollfd p[2 + CLI_TAKEOVER_FDS] = {{stdin_open ? 0 : -1, POLLIN, 0},
                                             {tk ? cdp_conn_fd(bc) : -1, POLLIN, 0}};
    int fds[CLI_TAKEOVER_FDS];
    int n = cli_takeover_fds(tk, fds, CLI_TAKEOVER_FDS);
    for (int k = 0; k < n; k++)
        p[2 + k] = (struct pollfd){fds[k], POLLIN, 0};
    int pr = poll(p, (nfds_t)(2 + n), ms);
    if (pr > 0 && p[1].revents) {
        cdp_err e;
        cdp_pump(bc, 0, &e);
    }
    return pr > 0 && (p[0].revents & (POLLIN | POLLHUP)) ? 1 : 0;
}

static int login_wait(snap_agent *a, gate *g, cli_takeover *tk, cdp_conn *bc,
                      snap_result *r)
{
    bool stdin_open = true, human_done = false, live = tk != NULL;
    long long start = base_now_ns(), last = 0;
    for (;;) {
        int pr = login_poll(stdin_open, live ? tk : NULL, bc, live ? 20 : LOGIN_POLL_MS);
        if (pr > 0) {
            char buf[256];
            ssize_t n = read(0, buf, sizeof buf);
            if (n <= 0 && !(n < 0 && errno == EINTR))
                stdin_open = false;     /* no terminal: only detection ends it */
            else if (n > 0 && memchr(buf, '\n', (size_t)n))
                human_done = true;
        }
        if (live && !cli_takeover_step(tk)) {
            live = false;
            if (!cli_takeover_seen(tk)) {
                snap_login_cancel(a);
                fprintf(stderr, "cdpgate login: nobody opened the live view while its link "
                        "lived; nothing was saved\n");
                return LOGIN_GAVE_UP;
            }
            human_done = true;      /* the person handed back: they are done */
            if (gate_mode(g) == GATE_MODE_HUMAN)
                gate_set_mode(g, GATE_MODE_AGENT, "person (live view hand-back)");
        }
        long long now = base_now_ns();
        if (!human_done && (now - last) / 1000000 < LOGIN_POLL_MS)
            continue;
        last = now;
        int sr = snap_login_poll(a, human_done, r);
        if (sr != SNAP_EBLOCKED)
            return sr;
        snap_result_free(r);
        if ((now - start) / 1000000 > LOGIN_MAX_MS) {
            snap_login_cancel(a);
            fprintf(stderr, "cdpgate login: no login within 30 minutes; nothing was saved\n");
            return LOGIN_GAVE_UP;
        }
    }
}

/* Issue 15, point 2: with no display (or --live) the browser runs
 * headless and the person logs in through the live view of its login tab,
 * the link delivered out of band (--live-notify, --confirm's program, or
 * this terminal). NULL with the reason printed. */
static cli_takeover *login_live_start(const cli_opts *o, snap_agent *a, gate *g,
                                      const char *origin)
{
    char link[256], why[400], msg[1000];
    cli_takeover *tk = cli_takeover_start(a, g, o, link,
                                          sizeof link, why, sizeof why);
    if (!tk) {
        fprintf(stderr, "cdpgate login: %s\n", why);
        return NULL;
    }
    snprintf(msg, sizeof msg, "log in to %s (only there) in cdpgate's live view of the login "
             "page (the link works once, %s, for %d minutes); a session is saved "
             "only when the page ends on %s. cdpgate notices when the login page is gone; or "
             "hand back from the view, or press Enter here, when you are done.", origin,
             cli_takeover_where(o), (o->live_ttl_s ? o->live_ttl_s : 600) / 60, origin);
    cli_takeover_deliver(o, "login", link, false, msg);
    memset(link, 0, sizeof link);
    return tk;
}

int cli_login(const cli_opts *o, int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cdpgate login URL\n");
        return EXIT_USAGE;
    }
    const char *url = argv[1];
    char origin[256];
    if (snap_url_origin(url, origin, sizeof origin)) {
        fprintf(stderr, "cdpgate login: give the http or https URL of the login page\n");
        return EXIT_USAGE;
    }
    /* no display here: the person logs in through the live view */
    bool live = o->live || (!o->connect && !cli_has_display());
    char err[400] = "";
    /* The grant says which identity the session is saved under. */
    gate *g = cli_gate_open(o, true, "login");
    if (!g)
        return EXIT_USAGE;
    vault *v = vault_open(NULL, NULL, err, sizeof err);
    if (!v) {
        fprintf(stderr, "cdpgate login: %s\n", err);
        gate_free(g);
        return EXIT_FAIL;
    }
    cli_opts lo = *o;
    lo.headed = !live;
    cdp_browser *b = cli_browser(&lo, "login");
    if (!b) {
        vault_close(v);
        gate_free(g);
        return EXIT_BROWSER;
    }
    cdp_err e = {0};
    snap_opts so = {0};
    so.timeout_ms = o->timeout_ms;
    so.vault = v;
    so.gate = g;
    so.login_any_origin = true;     /* the human typed the URL, not a model */
    snap_agent *a = snap_agent_new(b, &so, &e);
    int rc = EXIT_FAIL, sr = 0;
    cli_takeover *tk = NULL;
    snap_result r;
    memset(&r, 0, sizeof r);
    if (!a) {
        fprintf(stderr, "cdpgate login: %s\n", e.msg);
        rc = EXIT_BROWSER;
        goto done;
    }
    if (snap_login_begin(a, url, &r)) {
        fprintf(stderr, "cdpgate login: %s\n", r.text ? r.text : "cannot start");
        rc = cdp_conn_dead(cdp_browser_conn(b)) ? EXIT_BROWSER : EXIT_FAIL;
        goto done;
    }
    snap_result_free(&r);
    if (live && !(tk = login_live_start(o, a, g, origin)))
        goto done;
    if (!live)
        fprintf(stderr, "cdpgate login: %s: log in to %s (only there) in the browser window; "
                "a session is saved only when the page ends on %s. cdpgate notices when the "
                "login page is gone; or press Enter here when you are done.\n", origin, origin,
                origin);
    sr = login_wait(a, g, tk, cdp_browser_conn(b), &r);
    if (sr == LOGIN_GAVE_UP)
        goto done;
    if (sr == 0) {
        printf("%s\n", r.text ? r.text : "saved");
        rc = EXIT_OK;
    } else if (snap_login_saved(a)) {
        /* in the vault; only moving it out of the login's context failed,
         * which this command does not need (exit 0: saved) */
        fprintf(stderr, "cdpgate login: %s\n", r.text ? r.text : snap_strerror(sr));
        rc = EXIT_OK;
    } else {
        fprintf(stderr, "cdpgate login: %s\n", r.text ? r.text : snap_strerror(sr));
        rc = cdp_conn_dead(cdp_browser_conn(b)) ? EXIT_BROWSER : EXIT_FAIL;
    }
done:
    snap_result_free(&r);
    cli_takeover_free(tk);
    snap_agent_free(a);
    cdp_browser_free(b);
    vault_close(v);
    gate_free(g);
    return rc;
}
