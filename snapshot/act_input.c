/*
 * act_input.c — input dispatch (Input.dispatch*, with the wait broken by a dialog),
 * keys and modifiers, and the press action.
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#define _XOPEN_SOURCE 700     /* realpath (POSIX.1-2008 XSI) */
#include "snapshot/act_int.h"
#include "snapshot/page_js.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- input, with the wait broken by a dialog ---- */

#define MAX_INPUT 16

typedef struct {
    snap_agent *a;
    int tab;
    uint64_t ids[MAX_INPUT];
    size_t n;
    bool dialog;
} input_wait;

/* Listener while input replies are pending: notes a dialog opening on the
 * tab, after which those replies will not come until it is answered. */
static void on_input_event(void *ud, cdp_conn *c, const char *session, const char *method,
                           const json_val *p)
{
    (void)c;
    (void)p;
    input_wait *w = ud;
    if (w->dialog || strcmp(method, "Page.javascriptDialogOpening") != 0)
        return;
    snap_tab *t = snap_tab_by_session(w->a, session);
    if (t && t->id == w->tab)
        w->dialog = true;
}

/* Dispatch n input commands (method, params; params consumed) on session,
 * in order, and wait until each is done or a JS dialog opens on tab t
 * (*dialog). 0, or SNAP_EBROWSER/SNAP_ETIMEOUT with r filled. */
int snap_act_dispatch_input(snap_agent *a, int tab_id, const char *session_in,
                            const char *const *methods, char **prms, size_t n, bool *dialog,
                            snap_result *r)
{
    *dialog = false;
    char session[SNAP_ID_MAX];
    snprintf(session, sizeof session, "%s", session_in);
    input_wait w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.tab = tab_id;
    int rc = 0;
    cdp_err e = {0};
    if (cdp_listen(a->c, on_input_event, &w)) {
        for (size_t i = 0; i < n; i++)
            free(prms[i]);
        return snap_act_fail(r, SNAP_EBROWSER, "too many listeners on the connection");
    }
    for (size_t i = 0; i < n; i++) {
        if (i >= MAX_INPUT && !rc) {
            rc = CDP_ELIMIT;
            snprintf(e.msg, sizeof e.msg, "too many input events");
        }
        if (!prms[i] && !rc) {
            rc = CDP_ENOMEM;
            snprintf(e.msg, sizeof e.msg, "out of memory");
        }
        if (!rc && !w.dialog) {
            rc = snap_cdp_send(a, session, methods[i], prms[i], &w.ids[w.n], &e);
            if (rc == 0)
                w.n++;
        }
        free(prms[i]);
    }
    /* Wait for "every reply, or a dialog": one message at a time, no timer. */
    int64_t deadline = base_now_ms() + a->o.timeout_ms;
    bool timed_out = false;
    for (;;) {
        bool all = true;
        for (size_t i = 0; i < w.n && all; i++)
            all = cdp_reply_ready(a->c, w.ids[i]);
        if (all || w.dialog)
            break;
        int64_t left = deadline - base_now_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        cdp_err e2 = {0};
        int rc2 = cdp_pump_one(a->c, (int)left, &e2);
        if (rc2 && rc2 != CDP_ETIMEOUT) {
            if (!rc) {
                rc = rc2;
                e = e2;
            }
            break;
        }
    }
    for (size_t i = 0; i < w.n; i++) {
        if (!cdp_reply_ready(a->c, w.ids[i])) {
            /* Blocked behind the dialog (or timed out): the late reply is
             * dropped whenever it comes. */
            cdp_forget(a->c, w.ids[i]);
            continue;
        }
        cdp_err e2 = {0};
        int rc2 = cdp_wait(a->c, w.ids[i], 1, NULL, &e2);
        if (rc2 && !w.dialog && !rc) {
            rc = rc2;
            e = e2;
        }
    }
    if (timed_out && !rc && !w.dialog) {
        rc = CDP_ETIMEOUT;
        snprintf(e.msg, sizeof e.msg, "input: no reply within %d ms", a->o.timeout_ms);
    }
    cdp_unlisten(a->c, on_input_event, &w);
    snap_sync(a);
    snap_tab *t = snap_tab_by_id(a, tab_id);
    *dialog = w.dialog || (t && t->dialog_open);
    /* The input closed its own tab (window.close() in a handler): the
     * target detached before the reply came. That is the consequence, not
     * a failure; the settle step reports "the tab closed". */
    if (rc == CDP_EDETACHED && (!t || t->closed))
        return 0;
    if (rc && !*dialog) {
        if (rc == CDP_ETIMEOUT)
            return snap_act_fail(r, SNAP_ETIMEOUT, "the page did not take the input within %d ms "
                                 "(busy script?): outcome unknown", a->o.timeout_ms);
        return snap_act_fail(r, SNAP_EBROWSER, "input: %s", e.msg);
    }
    return 0;
}

static char *mouse_params(const char *type, int x, int y, const char *button, int clicks,
                          int modifiers)
{
    return snap_act_params("sddsii", "type", type, "x", (double)x, "y", (double)y, "button", button,
                           "clickCount", clicks, "modifiers", modifiers);
}

/* A left click at (x, y) in the tab's top-level coordinates: the mouse
 * moved there, pressed and released with clickCount 1. With second, the
 * second click of a double click only: pressed and released with
 * clickCount 2 (the browser then fires click and dblclick, as for a user's
 * double click); snap_act_dbl_click decides whether it is sent. */
int snap_act_mouse_click(snap_agent *a, int tab_id, int x, int y, bool second, bool *dialog,
                         snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed)
        return snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
    static const char *const M[3] = {"Input.dispatchMouseEvent", "Input.dispatchMouseEvent",
                                     "Input.dispatchMouseEvent"};
    char *p[3] = {
        second ? NULL : mouse_params("mouseMoved", x, y, "none", 0, 0),
        mouse_params("mousePressed", x, y, "left", second ? 2 : 1, 0),
        mouse_params("mouseReleased", x, y, "left", second ? 2 : 1, 0),
    };
    return snap_act_dispatch_input(a, tab_id, t->session, M + second, p + second, second ? 2 : 3,
                                   dialog, r);
}

/* A click the human confirmed, at loc on tg: the pointer is moved there
 * first (the page's pointermove and mouseover listeners run), then the
 * node at the point must still be tg's element or inside it
 * (snap_act_hit_still) before the press; else nothing is pressed and the
 * cover of the yes ends (red team s13 P1: a page moved another form's
 * "Send" under the pointer on its arrival, after the re-check). */
int snap_act_judged_click(snap_agent *a, const target *tg, const located *loc, session_set *ss,
                          bool *dialog, snap_result *r)
{
    int rc = snap_act_mouse_move(a, tg->tab, loc->x, loc->y, dialog, r);
    if (rc || *dialog)
        return rc;
    char w[400];
    if (!snap_act_hit_still(a, tg, loc, ss, w, sizeof w)) {
        a->covered_tab = 0;
        return snap_act_fail(r, SNAP_ECOVERED, "%s: the page moved another element under the "
                             "pointer (%s): not clicked", tg->what, w);
    }
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    if (!t || t->closed)
        return snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
    static const char *const M[2] = {"Input.dispatchMouseEvent", "Input.dispatchMouseEvent"};
    char *p[2] = {mouse_params("mousePressed", loc->x, loc->y, "left", 1, 0),
                  mouse_params("mouseReleased", loc->x, loc->y, "left", 1, 0)};
    return snap_act_dispatch_input(a, tg->tab, t->session, M, p, 2, dialog, r);
}

/* A double click at loc on tg, after the gate's decision g: the first
 * click, then the second only when it would go where the first did: no
 * dialog open, the same document (nav0), the element what the gate was
 * told (its facts, g->facts), and the node at the click point still the
 * element or inside it (snap_act_hit_still). Otherwise the second is not
 * sent and why (cap) says what the page did ("" when sent). 0, or the
 * input's error. */
int snap_act_dbl_click(snap_agent *a, const snap_gated *g, const target *tg, const located *loc,
                       uint64_t nav0, session_set *ss, bool *dialog, char *why, size_t cap,
                       snap_result *r)
{
    why[0] = 0;
    int rc = snap_act_mouse_click(a, tg->tab, loc->x, loc->y, false, dialog, r);
    if (rc)
        return rc;
    snap_sync(a);
    snap_tab *t = snap_tab_by_id(a, tg->tab);
    char w[400];
    if (*dialog || (t && t->dialog_open))
        snprintf(why, cap, "a dialog opened after the first click");
    else if (!t || t->closed)
        snprintf(why, cap, "the tab closed after the first click");
    else if (t->nav != nav0)
        snprintf(why, cap, "the first click started loading another page");
    else if (snap_gate_facts_same(a, g, tg->session, tg->oid, w, sizeof w))
        snprintf(why, cap, "the element changed after the first click (%s)", w);
    else if (!snap_act_hit_still(a, tg, loc, ss, w, sizeof w))
        snprintf(why, cap, "the page put %s under the pointer after the first click", w);
    if (why[0]) {
        size_t n = strlen(why);
        snprintf(why + n, cap - n, "; the second click was not sent");
        return 0;
    }
    return snap_act_mouse_click(a, tg->tab, loc->x, loc->y, true, dialog, r);
}

/* A double click whose second click was not sent (why, from
 * snap_act_dbl_click; "" when it was): did and the result say so. */
void snap_act_dbl_note(act_report *rp, char *did, size_t cap, const char *why)
{
    if (!*why)
        return;
    snprintf(did + strlen(did), cap - strlen(did), " once, not twice: %s", why);
    json_w_key(&rp->extra, "second_click");
    json_w_str(&rp->extra, "not sent");
    rp->has_extra = true;
}

/* The mouse to (x, y) and left there: the page sees it hover. */
int snap_act_mouse_move(snap_agent *a, int tab_id, int x, int y, bool *dialog, snap_result *r)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || t->closed)
        return snap_act_fail(r, SNAP_ENOTAB, "the tab closed");
    static const char *const M[1] = {"Input.dispatchMouseEvent"};
    char *p[1] = {mouse_params("mouseMoved", x, y, "none", 0, 0)};
    return snap_act_dispatch_input(a, tab_id, t->session, M, p, 1, dialog, r);
}

/* ---- keys ---- */

enum { MOD_ALT = 1, MOD_CTRL = 2, MOD_META = 4, MOD_SHIFT = 8 };

static const struct {
    const char *name, *key, *code;
    int vk;
    const char *text;
} NAMED_KEYS[] = {
    {"Enter", "Enter", "Enter", 13, "\r"}, {"Return", "Enter", "Enter", 13, "\r"},
    {"Tab", "Tab", "Tab", 9, ""}, {"Escape", "Escape", "Escape", 27, ""},
    {"Esc", "Escape", "Escape", 27, ""}, {"Backspace", "Backspace", "Backspace", 8, ""},
    {"Delete", "Delete", "Delete", 46, ""}, {"Del", "Delete", "Delete", 46, ""},
    {"Insert", "Insert", "Insert", 45, ""},
    {"ArrowUp", "ArrowUp", "ArrowUp", 38, ""}, {"Up", "ArrowUp", "ArrowUp", 38, ""},
    {"ArrowDown", "ArrowDown", "ArrowDown", 40, ""},
    {"Down", "ArrowDown", "ArrowDown", 40, ""},
    {"ArrowLeft", "ArrowLeft", "ArrowLeft", 37, ""},
    {"Left", "ArrowLeft", "ArrowLeft", 37, ""},
    {"ArrowRight", "ArrowRight", "ArrowRight", 39, ""},
    {"Right", "ArrowRight", "ArrowRight", 39, ""},
    {"Home", "Home", "Home", 36, ""}, {"End", "End", "End", 35, ""},
    {"PageUp", "PageUp", "PageUp", 33, ""}, {"PageDown", "PageDown", "PageDown", 34, ""},
    {"Space", " ", "Space", 32, " "}, {" ", " ", "Space", 32, " "},
    {"Shift", "Shift", "ShiftLeft", 16, ""}, {"Control", "Control", "ControlLeft", 17, ""},
    {"Alt", "Alt", "AltLeft", 18, ""}, {"Meta", "Meta", "MetaLeft", 91, ""},
};

/* US layout punctuation: unshifted, shifted, code, virtual key. */
static const struct {
    char plain, shifted;
    const char *code;
    int vk;
} PUNCT[] = {
    {'`', '~', "Backquote", 192}, {'-', '_', "Minus", 189}, {'=', '+', "Equal", 187},
    {'[', '{', "BracketLeft", 219}, {']', '}', "BracketRight", 221},
    {'\\', '|', "Backslash", 220}, {';', ':', "Semicolon", 186}, {'\'', '"', "Quote", 222},
    {',', '<', "Comma", 188}, {'.', '>', "Period", 190}, {'/', '?', "Slash", 191},
};
static const char SHIFTED_DIGITS[] = ")!@#$%^&*(";

bool snap_act_name_eq(const char *a, size_t alen, const char *b)
{
    if (strlen(b) != alen)
        return false;
    for (size_t i = 0; i < alen; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (char)(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

/* One key by name ("Enter", "a", "F5", "é"). A letter is typed as given
 * unless lower_letters (shortcuts: Control+A is key "a"); Shift makes it
 * upper case. False when unknown. */
static bool key_lookup(const char *s, size_t len, bool shift, bool lower_letters,
                       keydef *k)
{
    memset(k, 0, sizeof *k);
    if (len == 0 || len >= sizeof k->key)
        return false;
    for (size_t i = 0; i < sizeof NAMED_KEYS / sizeof NAMED_KEYS[0]; i++) {
        if (snap_act_name_eq(s, len, NAMED_KEYS[i].name)) {
            snprintf(k->key, sizeof k->key, "%s", NAMED_KEYS[i].key);
            snprintf(k->code, sizeof k->code, "%s", NAMED_KEYS[i].code);
            snprintf(k->text, sizeof k->text, "%s", NAMED_KEYS[i].text);
            k->vk = NAMED_KEYS[i].vk;
            return true;
        }
    }
    if ((s[0] == 'F' || s[0] == 'f') && len >= 2 && len <= 3) {
        char *end;
        long n = strtol(s + 1, &end, 10);
        if (end == s + len && n >= 1 && n <= 24) {
            snprintf(k->key, sizeof k->key, "F%ld", n);
            snprintf(k->code, sizeof k->code, "F%ld", n);
            k->vk = 111 + (int)n;
            return true;
        }
    }
    if (len == 1) {
        char c = s[0];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            char up = c >= 'a' ? (char)(c - 'a' + 'A') : c;
            char out = shift ? up : c;
            if (lower_letters && !shift)
                out = (char)(up - 'A' + 'a');
            snprintf(k->key, sizeof k->key, "%c", out);
            snprintf(k->code, sizeof k->code, "Key%c", up);
            snprintf(k->text, sizeof k->text, "%c", out);
            k->vk = up;
            return true;
        }
        if (c >= '0' && c <= '9') {
            char out = shift ? SHIFTED_DIGITS[c - '0'] : c;
            snprintf(k->key, sizeof k->key, "%c", out);
            snprintf(k->code, sizeof k->code, "Digit%c", c);
            snprintf(k->text, sizeof k->text, "%c", out);
            k->vk = c;
            return true;
        }
        for (size_t i = 0; i < sizeof SHIFTED_DIGITS - 1; i++) {
            if (c == SHIFTED_DIGITS[i]) {
                snprintf(k->key, sizeof k->key, "%c", c);
                snprintf(k->code, sizeof k->code, "Digit%d", (int)i);
                snprintf(k->text, sizeof k->text, "%c", c);
                k->vk = '0' + (int)i;
                return true;
            }
        }
        for (size_t i = 0; i < sizeof PUNCT / sizeof PUNCT[0]; i++) {
            if (c == PUNCT[i].plain || c == PUNCT[i].shifted) {
                char out = shift ? PUNCT[i].shifted : c;
                snprintf(k->key, sizeof k->key, "%c", out);
                snprintf(k->code, sizeof k->code, "%s", PUNCT[i].code);
                snprintf(k->text, sizeof k->text, "%c", out);
                k->vk = PUNCT[i].vk;
                return true;
            }
        }
    }
    /* Any other single character (UTF-8): typed as text, no key code. */
    unsigned char c0 = (unsigned char)s[0];
    size_t want = c0 >= 0xf0 ? 4 : c0 >= 0xe0 ? 3 : c0 >= 0xc0 ? 2 : 1;
    if (len == want && c0 >= 0x80 && json_utf8_valid((const uint8_t *)s, len)) {
        memcpy(k->key, s, len);
        memcpy(k->text, s, len);
        return true;
    }
    return false;
}

/* Parse "Control+Shift+A" into modifiers and a key. "+" alone, or as the
 * last part ("Control++"), is the plus key. */
static bool key_parse(const char *spec, int *mods, keydef *k)
{
    *mods = 0;
    size_t n = strlen(spec);
    if (n == 0 || n > 64)
        return false;
    const char *p = spec;
    for (;;) {
        const char *plus = strchr(p, '+');
        if (!plus || plus == p || (size_t)(plus - spec) == n - 1)
            break;
        size_t len = (size_t)(plus - p);
        if (snap_act_name_eq(p, len, "Control") || snap_act_name_eq(p, len, "Ctrl"))
            *mods |= MOD_CTRL;
        else if (snap_act_name_eq(p, len, "Shift"))
            *mods |= MOD_SHIFT;
        else if (snap_act_name_eq(p, len, "Alt") || snap_act_name_eq(p, len, "Option"))
            *mods |= MOD_ALT;
        else if (snap_act_name_eq(p, len, "Meta") || snap_act_name_eq(p, len, "Cmd") ||
                 snap_act_name_eq(p, len, "Command") || snap_act_name_eq(p, len, "Super"))
            *mods |= MOD_META;
        else
            return false;
        p = plus + 1;
    }
    if (!key_lookup(p, strlen(p), (*mods & MOD_SHIFT) != 0,
                    (*mods & (MOD_CTRL | MOD_ALT | MOD_META)) != 0, k))
        return false;
    if (*mods & (MOD_CTRL | MOD_ALT | MOD_META))
        k->text[0] = 0;         /* shortcuts type nothing */
    return true;
}

static char *key_params(const char *type, const keydef *k, int mods)
{
    bool text = k->text[0] && strcmp(type, "keyUp") != 0;
    return snap_act_params("sssiiss", "type", type, "key", k->key, "code",
                           k->code[0] ? k->code : NULL, "windowsVirtualKeyCode", k->vk, "modifiers",
                           mods, "text", text ? k->text : NULL, "unmodifiedText",
                           text ? k->text : NULL);
}

/* Press modifiers, the key, release in reverse: input commands into
 * methods/prms (at most 10). Returns the count. */
size_t snap_act_key_events(const keydef *k, int mods, const char **methods, char **prms)
{
    static const struct { int bit; const char *name; } MODS[] = {
        {MOD_CTRL, "Control"}, {MOD_SHIFT, "Shift"}, {MOD_ALT, "Alt"}, {MOD_META, "Meta"},
    };
    size_t n = 0;
    int held = 0;
    keydef mk[4];
    int order[4], nm = 0;
    for (int i = 0; i < 4; i++) {
        if (!(mods & MODS[i].bit))
            continue;
        key_lookup(MODS[i].name, strlen(MODS[i].name), false, false, &mk[nm]);
        held |= MODS[i].bit;
        order[nm] = MODS[i].bit;
        methods[n] = "Input.dispatchKeyEvent";
        prms[n++] = key_params("rawKeyDown", &mk[nm], held);
        nm++;
    }
    methods[n] = "Input.dispatchKeyEvent";
    prms[n++] = key_params(k->text[0] ? "keyDown" : "rawKeyDown", k, held);
    methods[n] = "Input.dispatchKeyEvent";
    prms[n++] = key_params("keyUp", k, held);
    for (int i = nm - 1; i >= 0; i--) {
        held &= ~order[i];
        methods[n] = "Input.dispatchKeyEvent";
        prms[n++] = key_params("keyUp", &mk[i], held);
    }
    return n;
}

/* ---- press ---- */

/* cdpgate's isolated world in the tab's main frame (snap_frame_world):
 * where press reads the focus, so the page cannot redefine activeElement
 * or what the gate then reads of it. 0 when it cannot be made. */
static int64_t press_world(snap_agent *a, int tab_id)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    return t && t->nframes ? snap_frame_world(a, tab_id, t->frames[0].id) : 0;
}

/* Say which element has the focus now, with a ref (main frame only; focus
 * inside an iframe is reported as such). */
static void report_focus(snap_agent *a, int tab_id, act_report *rp)
{
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (!t || !t->nframes)
        return;
    char session[SNAP_ID_MAX], fid[SNAP_ID_MAX], loader[SNAP_ID_MAX];
    snprintf(session, sizeof session, "%s", t->session);
    snprintf(fid, sizeof fid, "%s", t->frames[0].id);
    snprintf(loader, sizeof loader, "%s", t->frames[0].loader);
    pcall ev;
    memset(&ev, 0, sizeof ev);
    int64_t world = press_world(a, tab_id);
    if (world > 0 &&
        snap_act_call(a, session, "Runtime.evaluate",
                      snap_act_params("ssi", "expression", snap_js_focus_expr, "objectGroup",
                                      ACT_GROUP, "contextId", (int)world),
                      &ev) == 0) {
        const char *oid = snap_act_fn_object(&ev);
        if (oid) {
            pcall d, x;
            snap_act_psend_p(a, session, "DOM.describeNode", snap_act_params("s", "objectId", oid),
                             &d);
            snap_act_psend_p(a, session, "Accessibility.getPartialAXTree",
                             snap_act_params("sb", "objectId", oid, "fetchRelatives", false), &x);
            snap_act_pwait(a, &d);
            snap_act_pwait(a, &x);
            int be = (int)json_get_int(json_get(d.rep.result, "node"), "backendNodeId", 0);
            const char *tag = json_get_str(json_get(d.rep.result, "node"), "localName");
            char role[32], name[200];
            snap_act_ax_role_name(x.rep.result, d.rep.result, role, sizeof role, name, sizeof name);
            if (tag && (strcmp(tag, "iframe") == 0 || strcmp(tag, "frame") == 0)) {
                base_buf_printf(&rp->page, "%sfocus: inside a frame", rp->page.len ? "\n" : "");
            } else if (be) {
                uint32_t n = snap_ref_for(a, tab_id, fid, loader, be, role, name);
                if (n) {
                    base_buf_printf(&rp->page, "%sfocus: ", rp->page.len ? "\n" : "");
                    snap_act_sb_page(&rp->page, role, 32, 0);
                    base_buf_put(&rp->page, " ", 1);
                    snap_act_sb_quoted(&rp->page, name, 80);
                    base_buf_printf(&rp->page, " [e%u]", n);
                    char refs[16];
                    snprintf(refs, sizeof refs, "e%u", n);
                    json_w_key(&rp->extra, "focus");
                    json_w_str(&rp->extra, refs);
                    rp->has_extra = true;
                }
            }
            snap_act_pfree(&d);
            snap_act_pfree(&x);
        }
    }
    snap_act_pfree(&ev);
}

static int press_focus_same(snap_agent *a, int tab_id, const char *session, const char *oid);

/* focus: the element the gate judged the key against ("" for none). */
static int press_run(snap_agent *a, const char *key, const char *obs, snap_gated *g,
                     const char *focus, snap_result *r)
{
    snap_tab *t;
    int rc = snap_act_begin(a, obs, &t, r);
    if (rc)
        return rc;
    int mods;
    keydef k;
    if (!key || !key_parse(key, &mods, &k))
        return snap_act_fail(r, SNAP_EINVAL, "'%.40s' is not a key: use names like Enter, Tab, "
                             "Escape, Backspace, ArrowDown, PageDown, Home, F5, a single "
                             "character, or combinations like Control+A, Shift+Tab",
                             key ? key : "");
    int64_t deadline = base_now_ms() + a->o.timeout_ms;
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    size_t tabs0 = a->ntabs;
    char session[SNAP_ID_MAX];
    snprintf(session, sizeof session, "%s", t->session);
    session_set ss = {0};
    snap_act_sessions_note(&ss, session);
    /* Is the focused element in a form with a password field (Enter may
     * submit it)? In the same round trip as the recorder. */
    pcall ob, sfc;
    /* Without cdpgate's world the secret-form check reads nothing and the
     * URL redaction of a submitted password form is not armed: fail
     * closed, before any key is sent (as gate_press does). */
    int64_t world = press_world(a, tab_id);
    if (world <= 0)
        return snap_act_fail(r, SNAP_EBROWSER, "press %s: cdpgate's own script context could "
                             "not be made in the page, so the form of the focused element "
                             "cannot be checked; nothing was pressed; try again", key);
    snap_act_psend_p(a, session, "Runtime.evaluate",
                     snap_act_params("ssi", "expression", snap_js_observe_doc_expr,
                                     "objectGroup", ACT_GROUP, "contextId", (int)world),
                     &ob);
    snap_act_psend_p(a, session, "Runtime.evaluate",
                     snap_act_params("sbi", "expression", snap_js_sf_expr, "returnByValue", true,
                                     "contextId", (int)world),
                     &sfc);
    snap_act_pwait(a, &ob);
    snap_act_pwait(a, &sfc);
    secret_form sf = {0};
    snap_act_secret_form_note(&sf, snap_act_fn_value(&sfc));
    snap_act_pfree(&sfc);
    snap_act_secret_form_known(a, tab_id, NULL, session, focus, &sf);
    snap_act_secret_form_arm(a, &sf);
    char obs_oid[SNAP_ID_MAX] = "";
    if (snap_act_fn_object(&ob) && strlen(snap_act_fn_object(&ob)) < SNAP_ID_MAX)
        snprintf(obs_oid, sizeof obs_oid, "%s", snap_act_fn_object(&ob));
    snap_act_pfree(&ob);
    const char *methods[12];
    char *prms[12];
    /* The key goes to the element the gate judged, confirmed or not: a
     * page that moved the focus meanwhile does not get it. */
    if (!press_focus_same(a, tab_id, session, focus))
        return snap_act_focus_lost(g, "press", NULL, "another element", r);
    size_t n = snap_act_key_events(&k, mods, methods, prms);
    bool dialog = false;
    if ((rc = snap_act_dispatch_input(a, tab_id, session, methods, prms, n, &dialog, r)))
        return rc;
    char did[120];
    snprintf(did, sizeof did, "pressed %.60s", key);
    snap_settled st;
    if ((rc = snap_act_settle(a, tab_id, nav0, tabs0, deadline, did, &st, r)))
        return rc;
    act_report rp;
    snap_act_report_init(&rp, "press", NULL);
    rp.sf = sf;
    if (snap_act_page_usable(a, tab_id, &st)) {
        if (*obs_oid) {
            pcall co;
            if (snap_act_call(a, session, "Runtime.callFunctionOn",
                              snap_act_fn_params(obs_oid, snap_js_collect_fn, NULL, true, false),
                              &co) == 0) {
                const json_val *v = snap_act_fn_value(&co);
                if (json_is(v, JSON_OBJECT))
                    snap_act_report_recorded(v, NULL, false, false, &rp);
            }
            snap_act_pfree(&co);
        }
        report_focus(a, tab_id, &rp);
        snap_act_sessions_release(a, &ss);
    }
    rc = snap_act_finish(a, tab_id, did, &st, &rp, r);
    snap_act_report_free(&rp);
    return rc;
}

/* Does the key still go to oid (in session, cdpgate's world of tab tab_id's
 * main frame; "" for none: the body)? */
static int press_focus_same(snap_agent *a, int tab_id, const char *session, const char *oid)
{
    pcall pc;
    memset(&pc, 0, sizeof pc);
    bool same = false;
    int64_t world = oid && *oid ? 0 : press_world(a, tab_id);
    if (oid && *oid) {
        if (snap_act_call(a, session, "Runtime.callFunctionOn",
                          snap_act_fn_params(oid, snap_js_focus_same_fn, NULL, true, false),
                          &pc) == 0)
            same = json_bool(snap_act_fn_value(&pc));
    } else if (world > 0 &&
               snap_act_call(a, session, "Runtime.evaluate",
                             snap_act_params("ssi", "expression", snap_js_focus_deep_expr,
                                             "objectGroup", ACT_GROUP, "contextId", (int)world),
                             &pc) == 0) {
        const char *o = json_get_str(json_get(pc.rep.result, "result"), "objectId");
        same = !o;
        if (o && strlen(o) < SNAP_ID_MAX) {
            char moved[SNAP_ID_MAX];
            snprintf(moved, sizeof moved, "%s", o);
            snap_act_pfree(&pc);
            snap_act_release_object(a, session, moved);
            return 0;
        }
    }
    snap_act_pfree(&pc);
    return same;
}

/* After a confirmed press: the key still goes where it went when the human
 * was asked (oid: that element, "" for none), on the same document. 0, or
 * call_off. */
static int recheck_focus(snap_agent *a, snap_gated *g, int tab_id, uint64_t nav0,
                         const char *session, const char *oid, snap_result *r)
{
    int rc = snap_act_recheck_page(a, g, "press", tab_id, nav0, NULL, r);
    if (rc || !g->d.confirmed)
        return rc;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    if (t && t->dialog_open)
        return snap_act_call_off(g, "press", NULL, snap_act_change_phrase(SNAP_EDIALOG), r);
    if (!press_focus_same(a, tab_id, session, oid))
        return snap_act_call_off(g, "press", NULL, *oid ? "the focus moved to another element"
                                               : "the focus moved to an element", r);
    char why[200];
    if (*oid && snap_gate_facts_same(a, g, session, oid, why, sizeof why))
        return snap_act_call_off(g, "press", NULL, why, r);
    return 0;
}

/* Does key submit what has the focus? Any spelling and any modifiers of
 * Enter: the browser submits a field's form on "enter", "RETURN" and
 * Shift+Enter as on "Enter", and pages submit on Control/Meta+Enter (mail,
 * chat, issue trackers), so each is judged as a submission (red team s18,
 * R8-1: only the exact spellings "Enter" and "Return" were). A key that
 * does not parse is not pressed at all. */
static bool press_submits(const char *key)
{
    int mods;
    keydef k;
    return key && key_parse(key, &mods, &k) && strcmp(k.key, "Enter") == 0;
}

/* The gate for a key: the focused element is the target (Enter in a field
 * submits its form, Enter or Space on a button presses it), so a key can
 * never do what a click on the same control would not be allowed to. */
static int gate_press(snap_agent *a, const char *key, const char *obs, snap_gated *g,
                      char oid[SNAP_ID_MAX], char session[SNAP_ID_MAX], snap_result *r)
{
    snap_tab *t = snap_act_gate_begin(a, g, r);
    if (!t)
        return 0;
    int tab_id = t->id;
    uint64_t nav0 = t->nav;
    snprintf(session, SNAP_ID_MAX, "%s", t->session);
    bool in_frame = false;
    /* Read in cdpgate's isolated world: the gate judges the key against
     * the element that really has the focus. */
    int64_t world = press_world(a, tab_id);
    if (world <= 0)
        return snap_act_fail(r, SNAP_EBROWSER, "press %s: cdpgate's own script context could "
                             "not be made in the page, so the focused element cannot be "
                             "checked; try again", key ? key : "");
    pcall pc;
    if (snap_act_call(
            a, session, "Runtime.evaluate",
            snap_act_params("ssi", "expression", snap_js_focus_deep_expr, "objectGroup", ACT_GROUP,
                            "contextId", (int)world),
            &pc) == 0) {
        const json_val *res = json_get(pc.rep.result, "result");
        const char *o = json_get_str(res, "objectId");
        const char *desc = json_get_str(res, "description");
        if (o && strlen(o) < SNAP_ID_MAX)
            snprintf(oid, SNAP_ID_MAX, "%s", o);
        /* a document embedded by <object> or <embed> is a frame too (R8-1) */
        in_frame = desc && (strncmp(desc, "iframe", 6) == 0 || strncmp(desc, "frame", 5) == 0 ||
                            strncmp(desc, "object", 6) == 0 || strncmp(desc, "embed", 5) == 0 ||
                            strncmp(desc, "fencedframe", 11) == 0);
    }
    snap_act_pfree(&pc);
    t = snap_tab_by_id(a, tab_id);
    if (in_frame && t && snap_tab_auth(a, t)) {
        snap_act_release_object(a, session, oid);
        return snap_act_fail(r, SNAP_EDENIED, "press %s: the focus is inside a frame whose "
                             "content the gate cannot see on an authenticated page; click the "
                             "control itself instead", key ? key : "");
    }
    bool submit = press_submits(key);
    snap_gate_in gi = {.tool = "press", .tab = tab_id, .session = oid[0] ? session : NULL,
                       .oid = oid[0] ? oid : NULL, .state_change = true, .submit = submit,
                       .key = key, .obs = obs};
    int rc = snap_gate_ask(a, &gi, g, r);
    if (rc == 0 && (rc = recheck_focus(a, g, tab_id, nav0, session, oid, r)))
        snap_gate_done(a, g, rc, r);
    if (rc)
        snap_act_release_object(a, session, oid);
    return rc;
}

int snap_press(snap_agent *a, const char *key, const char *obs, snap_result *r)
{
    snap_gated gg;
    char oid[SNAP_ID_MAX] = "", session[SNAP_ID_MAX] = "";
    int rc = gate_press(a, key, obs, &gg, oid, session, r);
    if (rc)
        return rc;
    rc = press_run(a, key, obs, &gg, oid, r);
    snap_gate_done(a, &gg, rc, r);
    snap_act_release_object(a, session, oid);
    return rc;
}

/* Focus tg's element under the press permit and check the keys go to it.
 * 0, or SNAP_ESTALE / SNAP_EBROWSER with r saying why (nothing pressed). */
static int focus_target(snap_agent *a, const target *tg, snap_result *r)
{
    pcall pc;
    int rc = snap_act_call(a, tg->session, "Runtime.callFunctionOn",
                           snap_act_fn_params(tg->oid, snap_js_focus_fn, NULL, true, false), &pc);
    snap_act_pfree(&pc);
    if (rc)
        return snap_act_fail(r, SNAP_EBROWSER, "press on %s: the element could not be given "
                             "the focus; nothing was pressed", tg->what);
    char to[120];
    if (snap_act_focus_where(a, tg->session, tg->oid, to, sizeof to) != 0)
        return snap_act_fail(r, SNAP_ESTALE, "press on %s: the element did not take the focus "
                             "(the keys would go to %s); nothing was pressed", tg->what, to);
    return 0;
}

int snap_press_on(snap_agent *a, const char *ref, const char *key, const char *obs,
                  snap_result *r)
{
    if (!ref || !*ref)
        return snap_press(a, key, obs, r);
    snap_tab *t;
    int rc = snap_act_begin(a, obs, &t, r);
    if (rc)
        return rc;
    target tg;
    if ((rc = snap_act_resolve(a, ref, &tg, r)))
        return rc;
    session_set ss = {0};
    snap_act_sessions_note(&ss, tg.session);
    snap_gated gg = {0};
    t = snap_tab_by_id(a, tg.tab);
    uint64_t nav0 = t ? t->nav : 0;
    if (!t || !t->nframes || strcmp(tg.frame, t->frames[0].id) != 0) {
        rc = snap_act_fail(r, SNAP_EINVAL, "press on %s: the element is in a frame; click it, "
                           "then press", tg.what);
        goto done;
    }
    bool submit = press_submits(key);
    snap_gate_in gi = {.tool = "press", .tab = tg.tab, .frame = tg.frame, .session = tg.session,
                       .oid = tg.oid, .ref_n = tg.n, .state_change = true, .submit = submit,
                       .key = key, .obs = obs};
    if ((rc = snap_gate_ask(a, &gi, &gg, r)))
        goto done;
    rc = focus_target(a, &tg, r);
    if (!rc && gg.d.confirmed)
        rc = recheck_focus(a, &gg, tg.tab, nav0, tg.session, tg.oid, r);
    if (!rc)
        rc = press_run(a, key, obs, &gg, tg.oid, r);
done:
    snap_gate_done(a, &gg, rc, r);
    snap_act_release_all(a, &tg, &ss);
    return rc;
}
