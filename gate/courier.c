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
#include "url/url.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

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

/* A key command that may paste the clipboard: a modifier other than
 * Shift (Control+V, Meta+V, Control+Shift+V, and every other shortcut, as
 * platforms bind paste differently), or Insert (Shift+Insert) or Paste.
 * The clipboard is the browser's, shared by every context (and in a
 * headed browser the desktop's): what it holds cannot be shown to the
 * human, so such a key is refused, not asked (red team s13, C1). */
static bool key_command(const char *key)
{
    if (!key || !*key)
        return false;
    const char *p = key;
    for (;;) {
        const char *plus = strchr(p, '+');
        if (!plus || plus == p || plus[1] == 0)
            break;
        size_t len = (size_t)(plus - p);
        if (!(len == 5 && strncasecmp(p, "shift", 5) == 0))
            return true;
        p = plus + 1;
    }
    return strcasecmp(p, "insert") == 0 || strcasecmp(p, "paste") == 0;
}

/* The origin is one the grant names literally (not through a "*."
 * pattern, which lets the model choose the host's labels). */
static bool origin_literal(const gate *gt, const char *origin)
{
    if (!gt->grant || !origin || !*origin)
        return false;
    for (size_t i = 0; i < gt->grant->norigins; i++)
        if (strcmp(gt->grant->origins[i], origin) == 0)
            return true;
    return false;
}

/* An address carries data past its origin unless the browser will send
 * nothing but a literally granted origin's root: judged as the browser
 * reads the URL (url/url.h: '\\' is '/', tabs and newlines dropped, dot
 * segments resolved), never as text. It carries when it is no http(s)
 * URL, holds userinfo, has a path other than "/", a query or a fragment,
 * or its host was chosen under a "*." pattern (each label is free text
 * the browser sends in DNS and in the Host header; red team s13, C2). */
static bool url_carries(const gate *gt, const char *url)
{
    if (!url || !*url)
        return false;
    url_parts u;
    char origin[URL_ORIGIN_MAX], path[8];
    if (url_parse(url, &u, NULL) != URL_OK || u.userinfo ||
        (u.scheme != URL_SCHEME_HTTP && u.scheme != URL_SCHEME_HTTPS))
        return true;
    if (url_path(url, path, sizeof path) != URL_OK || strcmp(path, "/") != 0)
        return true;
    if (u.rest_end > u.rest && strpbrk(url + u.rest, "?#") &&
        (size_t)(strpbrk(url + u.rest, "?#") - url) < u.rest_end)
        return true;
    if (url_parts_origin(&u, origin, sizeof origin) != URL_OK)
        return true;
    return !origin_literal(gt, origin);
}

static const char *carries(const gate *gt, const gate_request *req)
{
    const char *t = req->tool;
    if ((strcmp(t, "type") == 0 || strcmp(t, "dialog") == 0) && req->text && *req->text)
        return strcmp(t, "type") == 0 ? "text to type" : "text for the dialog";
    if (strcmp(t, "press") == 0 && key_types(req->key))
        return "a key that types a character";
    if (strcmp(t, "upload") == 0 && req->file)
        return "a file to upload";
    if (strcmp(t, "select") == 0 && req->noptions > 1)
        return "several options to choose (which ones, and their order, spell data)";
    if (strcmp(t, "open") == 0 && url_carries(gt, req->url))
        return "an address to open (its path, query, fragment or a host under a \"*.\" pattern)";
    return NULL;
}

/* The question shows the agent's data whole (GATE_SHOWN_*): beyond that
 * it could not be seen, so a courier action is refused (red s13, C4). */
static bool shown_whole(const gate_request *req)
{
    const char *t = req->tool;
    if ((strcmp(t, "type") == 0 || strcmp(t, "dialog") == 0) && req->text &&
        strlen(req->text) > GATE_SHOWN_MAX)
        return false;
    if (strcmp(t, "open") == 0 && req->url && strlen(req->url) > GATE_SHOWN_MAX)
        return false;
    if (req->file && strlen(req->file) > GATE_SHOWN_MAX)
        return false;
    if (strcmp(t, "select") == 0) {
        if (req->noptions > GATE_SHOWN_OPTIONS)
            return false;
        for (size_t i = 0; i < req->noptions; i++)
            if (req->options[i] && strlen(req->options[i]) > GATE_SHOWN_OPTION)
                return false;
    }
    return true;
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
    if (strcmp(req->tool, "press") == 0 && key_command(req->key)) {
        d->courier = true;
        gate_verdict(d, GATE_DENY, "courier: the task has read pages of %s (signed in); a key "
                     "command (a modifier other than Shift, or Insert) on a page outside that "
                     "session may paste the clipboard, which cannot be shown to the human who "
                     "would be asked: refused (type the text instead: it is shown)",
                     gt->tainted);
        return true;
    }
    const char *what = carries(gt, req);
    if (!what)
        return false;
    d->courier = true;
    if (!shown_whole(req)) {
        gate_verdict(d, GATE_DENY, "courier: the task has read pages of %s (signed in); %s "
                     "for a page outside that session is longer than the question to the "
                     "human shows (text, an address or a file name over %d bytes, over %d "
                     "options or an option over %d bytes): refused, as the human could not "
                     "see all of it (give it in parts)", gt->tainted, what, GATE_SHOWN_MAX,
                     GATE_SHOWN_OPTIONS, GATE_SHOWN_OPTION);
        return true;
    }
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
