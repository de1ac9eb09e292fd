/*
 * human.c — the person's input from the live view (issue 15, point 4): a
 * mouse event, a key, inserted text or IME composition the person made in
 * the viewer goes to the agent's current tab through the one chokepoint
 * (sink.c) under the 'human' permit, which permits the Input methods only
 * while the gate's control mode is human. Under any other mode (the agent
 * holds control, or it is paused) the person's input is refused here and
 * again at the sink: the lock holds both ways.
 *
 * What the person typed is in params: it is sent as a secret command
 * (cdp_send_secret: its reply is wiped too) and never logged or kept.
 */
#include "snapshot/snap_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate.h"

static const char *const HUMAN_METHODS[] = {
    "Input.dispatchMouseEvent", "Input.dispatchKeyEvent", "Input.insertText",
    "Input.imeSetComposition", NULL,
};

static bool human_method(const char *method)
{
    for (size_t i = 0; method && HUMAN_METHODS[i]; i++)
        if (strcmp(HUMAN_METHODS[i], method) == 0)
            return true;
    return false;
}

int snap_human_input(snap_agent *a, const char *method, const char *params, char *why,
                     size_t cap)
{
    if (!a->gate || gate_mode(a->gate) != GATE_MODE_HUMAN) {
        snprintf(why, cap, "the person's input is refused: the human does not hold control "
                 "(%s)", a->gate ? gate_mode_name(gate_mode(a->gate)) : "no gate");
        return SNAP_EDENIED;
    }
    if (!human_method(method)) {
        snprintf(why, cap, "the person's input is refused: not an input method");
        return SNAP_EINVAL;
    }
    snap_tab *t = snap_tab_current(a);
    if (!t) {
        snprintf(why, cap, "the person's input is refused: no open tab");
        return SNAP_ENOTAB;
    }
    char saved[SNAP_PERMIT_MAX];
    snap_permit_push(a, "human", saved);
    uint64_t id = 0;
    cdp_err e = {0};
    int rc = snap_cdp_send_secret(a, t->session, method, params, &id, &e);
    snap_permit_begin(a, saved);
    if (rc) {
        /* e.msg names the method and the permit, never params */
        snprintf(why, cap, "the person's input was not sent: %s", e.msg);
        return SNAP_EBROWSER;
    }
    cdp_forget(a->c, id);   /* a secret call keeps its slot: its reply is wiped */
    why[0] = 0;
    return 0;
}

int snap_human_url(snap_agent *a, char *out, size_t cap)
{
    snap_tab *t = snap_tab_current(a);
    out[0] = 0;
    if (!t || !t->nframes || !t->frames[0].url)
        return SNAP_ENOTAB;
    char *r = snap_url_redact_act(a, t->frames[0].url);
    snprintf(out, cap, "%s", r ? r : "");
    free(r);
    return r ? 0 : SNAP_ENOMEM;
}

/* One "domain name" line per cookie of reply r (names only). */
static char *cookie_names(const json_val *cookies)
{
    size_t cap = 1, n = 0;
    for (const json_val *c = json_first(cookies); c; c = json_next(c))
        cap += strlen(json_get_str(c, "name") ? json_get_str(c, "name") : "") +
               strlen(json_get_str(c, "domain") ? json_get_str(c, "domain") : "") + 2;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    for (const json_val *c = json_first(cookies); c; c = json_next(c)) {
        const char *nm = json_get_str(c, "name"), *dm = json_get_str(c, "domain");
        n += (size_t)snprintf(out + n, cap - n, "%s %s\n", dm ? dm : "", nm ? nm : "");
    }
    out[n] = 0;
    return out;
}

char *snap_human_cookies(snap_agent *a)
{
    /* the current tab's browser context (the agent's are not the default) */
    snap_tab *t = snap_tab_current(a);
    const char *ctx = t && t->ctx < a->nctxs ? a->ctxs[t->ctx].id : "";
    char params[SNAP_ID_MAX + 32] = "{}";
    if (*ctx)
        snprintf(params, sizeof params, "{\"browserContextId\":\"%s\"}", ctx);
    cdp_reply r = {0};
    cdp_err e = {0};
    if (snap_cdp_call_secret(a, NULL, "Storage.getCookies", params, 0, &r, &e) != 0)
        return NULL;
    char *out = cookie_names(json_get(r.result, "cookies"));
    cdp_reply_free(&r);     /* wipes the values */
    return out;
}
