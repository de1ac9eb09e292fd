/*
 * mcp_login.c — browser_login, the MCP server's login handoff (moved out
 * of cli/mcp_serve.c, which keeps the loop and the other tools).
 *
 * A visible browser window (a second, headed browser; with --connect, the
 * attached browser itself) opens on the login page and is handed to the
 * human. With no display (or with --live) the login browser runs headless
 * and the person logs in through cdpgate's live view of its login tab
 * (cli/takeover.c), the link delivered out of band exactly as for
 * browser_takeover (cli_mcp_deliver), never in a result; the view's
 * hand-back says done. Until the login finishes, every tool call
 * (browser_login too) is refused with "waiting for the human to finish
 * logging in". The login ends when the page shows it is done, when the
 * host writes a byte to the --login-done-fd descriptor (the human said
 * done), or by the person's hand-back from the live view; a live view
 * nobody opened in its lifetime ends it with nothing saved. A tool
 * argument can never end it: the agent must not be able to declare a
 * login finished.
 */
#include "cli/mcp_int.h"
#include "base/base.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef cli_mcp_serve serve;

/* The host's "the human is done" signal: a byte on --login-done-fd. */
static bool done_signal(serve *S)
{
    if (S->o->login_done_fd < 0 || !S->done_fd_open)
        return false;
    struct pollfd pfd = {S->o->login_done_fd, POLLIN, 0};
    if (poll(&pfd, 1, 0) <= 0)
        return false;
    char buf[64];
    ssize_t n = read(S->o->login_done_fd, buf, sizeof buf);
    if (n > 0)
        return true;
    if (n == 0 || (errno != EINTR && errno != EAGAIN))
        S->done_fd_open = false;    /* closed: only detection ends a login now */
    return false;
}

void cli_mcp_login_end(serve *S)
{
    /* a login's live view gave the person control: it ends with the login */
    if (S->ltk && cli_takeover_seen(S->ltk) && gate_mode(S->gate) == GATE_MODE_HUMAN)
        gate_set_mode(S->gate, GATE_MODE_AGENT, "person (live view login ended)");
    cli_takeover_free(S->ltk);
    S->ltk = NULL;
    if (S->la != S->agent)
        snap_agent_free(S->la);
    S->la = NULL;
    cdp_browser_free(S->lb);
    S->lb = NULL;
}

/* A headless login's live view (no display): serve it. 0 while it runs
 * (or none does); 1 when the person handed back (done, as Enter is for
 * cdpgate login); -1 when nobody opened the link in its lifetime: the login
 * is canceled, nothing saved, and the next result says so. */
static int login_live_step(serve *S)
{
    if (!S->ltk || cli_takeover_step(S->ltk))
        return 0;
    bool seen = cli_takeover_seen(S->ltk);
    cli_takeover_free(S->ltk);
    S->ltk = NULL;
    if (gate_mode(S->gate) == GATE_MODE_HUMAN)
        gate_set_mode(S->gate, GATE_MODE_AGENT, "person (live view hand-back)");
    if (seen)
        return 1;
    char note[400];
    snprintf(note, sizeof note, "The login at %s ended: nobody opened the live view while its "
             "link lived; nothing was saved.", snap_login_origin(S->la));
    fprintf(stderr, "cdpgate mcp: %s\n", note);
    snap_login_cancel(S->la);
    free(S->login_note);
    S->login_note = base_strdup(note);
    cli_mcp_login_end(S);
    return -1;
}

/* Advance a running login: when it has ended, keep how (for the next tool
 * result and stderr) and close its browser. True while it still waits. */
bool cli_mcp_login_step(serve *S)
{
    if (!S->la || !snap_login_active(S->la))
        return false;
    char origin[256];
    snprintf(origin, sizeof origin, "%s", snap_login_origin(S->la));
    bool done = done_signal(S);
    int live = login_live_step(S);
    if (live < 0)
        return false;           /* nobody opened the view: ended, nothing saved */
    done = done || live > 0;
    int64_t now = base_now_ms();
    if (!done && S->ltk && now - S->lpoll_ms < 250)
        return true;            /* the view is served often, the page read less */
    S->lpoll_ms = now;
    snap_result r;
    memset(&r, 0, sizeof r);
    int rc = snap_login_poll(S->la, done, &r);
    if (rc == SNAP_EBLOCKED) {
        snap_result_free(&r);
        return true;
    }
    /* saved: in the vault, even when moving it out of the login's context
     * failed after the save (the note says so) */
    bool saved = rc == 0 || snap_login_saved(S->la);
    fprintf(stderr, "cdpgate mcp: the login at %s %s\n", origin,
            rc == 0 ? "finished; its session is saved" : saved ? "ended with its session "
            "saved, not moved out of the login's context" : "ended without a session");
    free(S->login_note);
    S->login_note = base_strdup(r.text ? r.text : snap_strerror(rc));
    snap_result_free(&r);
    /* A login in its own browser: the main browser restores the new session
     * on its next open (an attached browser already holds it). */
    if (saved && S->agent && S->la != S->agent)
        snap_session_forget(S->agent, origin);
    if (saved)      /* recorded by identity, never as keystrokes */
        cli_rec_login(&S->rec, origin, gate_identity_for(S->gate, origin));
    cli_mcp_login_end(S);
    return false;
}

/* The login page is open in a headless browser: the person logs in
 * through the live view of its tab, the link out of band exactly as for
 * browser_takeover (never in the result); the view's hand-back says done. */
static void login_live_begin(serve *S, mcp_result *out)
{
    char link[256], why[400], what[800];
    const char *origin = snap_login_origin(S->la);
    S->ltk = cli_takeover_start(S->la, S->gate, S->o, link,
                                sizeof link, why, sizeof why);
    if (!S->ltk) {
        snprintf(what, sizeof what, "browser_login: the live view cannot start (%s), and no "
                 "login window is shown here (no display, or --live), so the login was not "
                 "started.", why);
        snap_login_cancel(S->la);
        cli_mcp_login_end(S);
        free(out->text);
        out->text = base_strdup(what);
        out->is_error = true;
        return;
    }
    snprintf(what, sizeof what, "log in to %s (only there); a session is saved only when the "
             "page ends on %s (cdpgate notices when the login page is gone, or hand back "
             "when you are done)", origin, origin);
    cli_mcp_deliver(S, link, what);
    memset(link, 0, sizeof link);
    S->lpoll_ms = 0;
    fprintf(stderr, "cdpgate mcp: %s: log in to %s (only there) in the live view\n", origin,
            origin);
    cli_mcp_append(out, "No login window is shown here (no display, or --live): a person was "
                "asked, out of band, to log in through cdpgate's live view of the login page. "
                "Every other tool answers "
                "\"waiting for the human to finish logging in\" until the login is done; then "
                "the session is restored here.");
}

void cli_mcp_login_start(serve *S, const mcp_args *a, mcp_result *out)
{
    char why[900];
    /* no display (or --live): a headless browser and the live view (issue
     * 15), as cdpgate login does */
    bool live = !S->o->connect && (S->o->live || !cli_has_display());
    if (!S->v) {
        char err[400] = "";
        S->v = vault_open(NULL, NULL, err, sizeof err);
        if (!S->v) {
            snprintf(why, sizeof why, "browser_login: the session vault cannot be opened: %s",
                     err);
            out->text = base_strdup(why);
            out->is_error = true;
            return;
        }
        if (S->agent)
            snap_agent_set_vault(S->agent, S->v);
    }
    if (S->o->connect) {
        /* The attached browser is the user's own, with its own window. */
        if (!S->agent && cli_mcp_browser(S, why, sizeof why)) {
            out->text = base_strdup(why);
            out->is_error = true;
            return;
        }
        S->la = S->agent;
    } else {
        cli_opts lo = *S->o;
        lo.headed = !live;
        cdp_err e = {0};
        S->lb = cli_browser_open(&lo, &e);
        snap_opts so = {0};
        so.timeout_ms = S->o->timeout_ms;
        so.vault = S->v;
        so.gate = S->gate;
        S->la = S->lb ? snap_agent_new(S->lb, &so, &e) : NULL;
        if (!S->la) {
            snprintf(why, sizeof why, "browser_login: cannot start a %s browser: %s",
                     live ? "headless" : "visible", e.msg);
            out->text = base_strdup(why);
            out->is_error = true;
            cli_mcp_login_end(S);
            return;
        }
    }
    snap_result r;
    memset(&r, 0, sizeof r);
    int rc = snap_login_begin(S->la, a->url, &r);
    out->text = r.text;
    r.text = NULL;
    snap_result_free(&r);
    out->is_error = rc != 0;
    if (rc) {
        cli_mcp_login_end(S);
        return;
    }
    if (live) {
        login_live_begin(S, out);
        return;
    }
    /* The human reads this where the host shows cdpgate's stderr: the
     * origin first, plainly (red team s11, L4). */
    fprintf(stderr, "cdpgate mcp: %s: log in to %s (only there) in the login window\n",
            snap_login_origin(S->la), snap_login_origin(S->la));
    cli_mcp_append(out, "Every other tool answers \"waiting for the human to finish logging "
                "in\" until the login is done; then the session is restored here.");
}
