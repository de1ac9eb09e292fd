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
