/*
 * courier.c — the model as courier (red team s11, S7): what the agent read
 * on a signed-in service must not leave through the agent itself, unseen.
 *
 * A page of the untrusted context (or any page outside the browser context
 * that holds a session) may send whatever it is given anywhere: its GETs
 * are not judged, and a page can also send by a navigation, a form GET, a
 * prefetch, a WebSocket, DNS. So the flow is cut where the data enters
 * that page, at the agent's own tool call, which no page can route
 * around: once the task touched an authenticated origin (any action there
 * the gate allowed, reads included: the task is "tainted"), every action
 * that hands model-chosen data to a page outside a session (the text to
 * type, a prompt dialog's text, a key that types a character, a file to
 * upload, an address to open with a path, query or fragment) is
 * confirmed by the human, who is shown that data. No hook, or a no: not
 * done.
 *
 * Invariants: the taint is never cleared for the life of the gate; it is
 * set only after the gate allowed the action (a refused open reads
 * nothing); what carries data is judged from the request alone (no page
 * fact), so the page cannot make an action look empty.
 */
#include "gate/gate_int.h"

#include <stdio.h>
#include <string.h>

void gate_courier_note(gate *gt, const gate_request *req, const gate_decision *d)
{
    if (!gt || !req || gt->tainted[0] || d->decision != GATE_ALLOW)
        return;
    const char *svc = req->service && *req->service ? req->service
                    : req->authenticated ? req->origin : NULL;
    if (!svc || !*svc)
        return;
    if (gate_origin_parse(svc, gt->tainted, sizeof gt->tainted, ORIGIN_LENIENT, NULL) ||
        !gt->tainted[0])
        snprintf(gt->tainted, sizeof gt->tainted, "a signed-in service");
}

/* A key that types a character: its last part (after the modifiers) is
 * one character ("a", "Shift+7", "+", "é"). Named keys (Enter, Tab,
 * ArrowDown) are not: which one was pressed is a residual channel. */
static bool key_types(const char *key)
{
    if (!key || !*key)
        return false;
    size_t n = strlen(key);
    const char *last = n > 1 && key[n - 1] == '+' && key[n - 2] == '+' ? key + n - 1
                     : strrchr(key, '+') && n > 1 ? strrchr(key, '+') + 1 : key;
    size_t l = strlen(last);
    if (!l)
        return false;
    size_t chars = 0;
    for (size_t i = 0; i < l; i++)
        chars += ((unsigned char)last[i] & 0xc0) != 0x80;
    return chars == 1;
}

/* An address carries data past its origin: a path other than "/", a
 * query or a fragment (or it is no http(s) URL at all). */
static bool url_carries(const char *url)
{
    if (!url || !*url)
        return false;
    const char *s = strstr(url, "://");
    if (!s)
        return true;
    const char *rest = s + 3 + strcspn(s + 3, "/?#");
    return !(rest[0] == 0 || (rest[0] == '/' && rest[1] == 0));
}

static const char *carries(const gate_request *req)
{
    const char *t = req->tool;
    if ((strcmp(t, "type") == 0 || strcmp(t, "dialog") == 0) && req->text && *req->text)
        return strcmp(t, "type") == 0 ? "text to type" : "text for the dialog";
    if (strcmp(t, "press") == 0 && key_types(req->key))
        return "a key that types a character";
    if (strcmp(t, "upload") == 0 && req->file)
        return "a file to upload";
    if (strcmp(t, "open") == 0 && url_carries(req->url))
        return "an address to open (its path, query or fragment)";
    return NULL;
}

bool gate_courier(const gate *gt, const gate_request *req, const char *origin,
                  gate_decision *d)
{
    if (!gt->tainted[0] || req->authenticated || (req->service && *req->service))
        return false;
    if (strcmp(req->tool, "type") == 0 && req->text_withheld) {
        /* A field that merely looks secret (autocomplete "x-password-y"):
         * the text is kept from the prompt, so the human could not see it. */
        d->courier = true;
        gate_verdict(d, GATE_DENY, "courier: the task has read pages of %s (signed in); text "
                     "for a field that looks secret, on a page outside that session, cannot be "
                     "shown to the human who would be asked: refused", gt->tainted);
        return true;
    }
    const char *what = carries(req);
    if (!what)
        return false;
    d->courier = true;
    /* The human must see the data: an address whose values the driver
     * hides from prompts (a secret-looking parameter, a session value) is
     * refused, not asked. */
    if (strcmp(req->tool, "open") == 0 && req->url &&
        (strstr(req->url, "[redacted]") || strstr(req->url, "session-value") ||
         strstr(req->url, "withheld]"))) {
        gate_verdict(d, GATE_DENY, "courier: the task has read pages of %s (signed in); the "
                     "address to open outside that session has values hidden from the human "
                     "who would be asked (a secret-looking parameter or a session value): "
                     "refused", gt->tainted);
        return true;
    }
    gate_verdict(d, GATE_CONFIRM, "courier: the task has read pages of %s (signed in); %s "
                 "given to a page of %s outside that session may carry what was read there, "
                 "and that page can send it anywhere: confirmed every time, the data shown",
                 gt->tainted, what, origin && *origin ? origin : "no http(s) origin");
    return true;
}
