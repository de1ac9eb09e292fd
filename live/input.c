/*
 * input.c — the person's input, from the viewer's messages to CDP Input
 * commands (issue 15, point 3), I/O-free: live_input_translate.
 *
 * Keys: the windows virtual key code comes from the physical key (the
 * `code`: "Period" is 190), never from the character, so '.' (character
 * 46) can never arrive as Delete (virtual key 46), the fault users of
 * other live views report; a key that produces one character (key is one
 * character, no Ctrl, Meta or Alt held) is a keyDown with that text (the
 * page gets keydown, keypress and input, shifted characters as the viewer
 * saw them); other keys (Backspace, Tab, arrows, shortcuts) are a
 * rawKeyDown, Enter with its "\r" text. Modifiers use CDP's bits (1 Alt,
 * 2 Ctrl, 4 Meta, 8 Shift), which the viewer sends as they are. Paste,
 * and the text an IME commits, is Input.insertText; the composition before
 * the commit is Input.imeSetComposition (the page shows the candidate
 * where the person types). A tab message is no command: its id goes to
 * the host. Mouse coordinates are the frame's pixels (the host
 * scales them if its frames are scaled).
 *
 * The parameters hold what the person typed: they are written by a secret
 * JSON writer, handed to the caller to send, and wiped by live_input_free;
 * errors never quote a value.
 */
#include "live/live_int.h"

#include "base/base.h"
#include "json/json.h"

#include <stdlib.h>
#include <string.h>

#define TEXT_MAX (32 * 1024)
#define IME_MAX 1024                /* a composition's text, bytes */

/* The windows virtual key code of a physical key (US layout), 0 unknown. */
static int vk_of(const char *code, const char *key)
{
    static const struct { const char *code; int vk; } T[] = {
        {"Backspace", 8}, {"Tab", 9}, {"Enter", 13}, {"NumpadEnter", 13}, {"ShiftLeft", 16},
        {"ShiftRight", 16}, {"ControlLeft", 17}, {"ControlRight", 17}, {"AltLeft", 18},
        {"AltRight", 18}, {"Pause", 19}, {"CapsLock", 20}, {"Escape", 27}, {"Space", 32},
        {"PageUp", 33}, {"PageDown", 34}, {"End", 35}, {"Home", 36}, {"ArrowLeft", 37},
        {"ArrowUp", 38}, {"ArrowRight", 39}, {"ArrowDown", 40}, {"Insert", 45},
        {"Delete", 46}, {"MetaLeft", 91}, {"MetaRight", 92}, {"ContextMenu", 93},
        {"NumpadMultiply", 106}, {"NumpadAdd", 107}, {"NumpadSubtract", 109},
        {"NumpadDecimal", 110}, {"NumpadDivide", 111}, {"Semicolon", 186}, {"Equal", 187},
        {"Comma", 188}, {"Minus", 189}, {"Period", 190}, {"Slash", 191}, {"Backquote", 192},
        {"BracketLeft", 219}, {"Backslash", 220}, {"BracketRight", 221}, {"Quote", 222},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (strcmp(T[i].code, code) == 0)
            return T[i].vk;
    size_t n = strlen(code);
    if (n == 4 && strncmp(code, "Key", 3) == 0 && code[3] >= 'A' && code[3] <= 'Z')
        return code[3];
    if (n == 6 && strncmp(code, "Digit", 5) == 0 && code[5] >= '0' && code[5] <= '9')
        return code[5];
    if (n == 7 && strncmp(code, "Numpad", 6) == 0 && code[6] >= '0' && code[6] <= '9')
        return 96 + code[6] - '0';
    if (code[0] == 'F' && n >= 2 && n <= 3 && strspn(code + 1, "0123456789") == n - 1) {
        long f = strtol(code + 1, NULL, 10);
        if (f >= 1 && f <= 24)
            return 111 + (int)f;
    }
    if (!code[0] && strlen(key) == 1 && key[0] >= 'a' && key[0] <= 'z')
        return key[0] - 'a' + 'A';
    return 0;
}

/* One character (one UTF-8 sequence, not a control character). */
static bool one_char(const char *s)
{
    size_t n = strlen(s);
    unsigned char c = (unsigned char)s[0];
    if (n == 1)
        return c >= 0x20 && c != 0x7f;
    size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    return want && n == want;
}

static bool small_name(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;
    return s && n <= max && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789") == n;
}

/* UTF-16 code units of the UTF-8 text t[0..n) (the unit of a textarea's
 * selection): 2 for a 4-byte sequence, else 1 per character. */
static size_t utf16_units(const char *t, size_t n)
{
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if ((c & 0xc0) != 0x80)
            u += c >= 0xf0 ? 2 : 1;
    }
    return u;
}

/* {"t":"ime","text","sel":[start,end]}: the composition so far (the IME's
 * candidate, not yet typed) as Input.imeSetComposition; an empty text
 * cancels it. The selection is in UTF-16 units within the text, the caret
 * at its end when sel is absent. The commit comes as a text message. */
static int ime_cmd(const json_val *m, json_w *w, live_err *err)
{
    size_t tl = 0;
    const char *text = json_str(json_get(m, "text"), &tl);
    const json_val *sel = json_get(m, "sel");
    size_t units = text ? utf16_units(text, tl) : 0;
    int64_t a = (int64_t)units, b = (int64_t)units;
    bool ok = text && tl <= IME_MAX;
    if (ok && sel)
        ok = json_is(sel, JSON_ARRAY) && json_len(sel) == 2 && json_int(json_at(sel, 0), &a) &&
             json_int(json_at(sel, 1), &b) && a >= 0 && a <= b && (uint64_t)b <= units;
    if (!ok)
        return live_fail(err, LIVE_EBADREQ, 0, "input: an ime message needs a text of at most "
                         "%d bytes and sel [start,end] within it", IME_MAX);
    json_w_key(w, "text");
    json_w_strn(w, text, tl);
    json_w_key(w, "selectionStart");
    json_w_int(w, a);
    json_w_key(w, "selectionEnd");
    json_w_int(w, b);
    return LIVE_OK;
}

/* {"t":"tab","id"}: the person chose a tab; its id into cmd->tab. */
static int tab_msg(const json_val *m, live_input_cmd *cmd, live_err *err)
{
    const char *id = json_get_str(m, "id");
    size_t n = id ? strlen(id) : 0;
    if (!id || !n || n >= sizeof cmd->tab ||
        strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") != n)
        return live_fail(err, LIVE_EBADREQ, 0, "input: a tab message needs an id of 1..%zu "
                         "letters, digits, '-', '_' or '.'", sizeof cmd->tab - 1);
    memcpy(cmd->tab, id, n + 1);
    return LIVE_OK;
}

static int key_cmd(const json_val *m, json_w *w, live_err *err)
{
    const char *type = json_get_str(m, "type");
    const char *key = json_get_str(m, "key");
    const char *code = json_get_str(m, "code");
    int64_t mods = json_get_int(m, "m", 0);
    bool down = type && strcmp(type, "down") == 0;
    if (!type || (!down && strcmp(type, "up") != 0) || !key || !key[0] || strlen(key) > 32 ||
        !small_name(code, 32) || mods < 0 || mods > 15)
        return live_fail(err, LIVE_EBADREQ, 0, "input: a key message needs type down|up, "
                         "key, code and modifiers 0..15");
    bool text = down && one_char(key) && !(mods & 7);
    bool enter = down && strcmp(key, "Enter") == 0 && !(mods & 7);
    json_w_key(w, "type");
    json_w_str(w, !down ? "keyUp" : text || enter ? "keyDown" : "rawKeyDown");
    json_w_key(w, "key");
    json_w_str(w, key);
    json_w_key(w, "code");
    json_w_str(w, code);
    json_w_key(w, "modifiers");
    json_w_int(w, mods);
    json_w_key(w, "windowsVirtualKeyCode");
    json_w_int(w, vk_of(code, key));
    if (text || enter) {
        json_w_key(w, "text");
        json_w_str(w, enter ? "\r" : key);
        json_w_key(w, "unmodifiedText");
        json_w_str(w, enter ? "\r" : key);
    }
    if (json_bool(json_get(m, "rep"))) {
        json_w_key(w, "autoRepeat");
        json_w_bool(w, true);
    }
    return LIVE_OK;
}

static int mouse_cmd(const json_val *m, bool wheel, json_w *w, live_err *err)
{
    const char *type = json_get_str(m, "type");
    double x = json_num(json_get(m, "x")), y = json_num(json_get(m, "y"));
    int64_t mods = json_get_int(m, "m", 0), b = json_get_int(m, "b", 0);
    int64_t button = json_get_int(m, "button", -1), n = json_get_int(m, "n", 1);
    static const char *const names[] = {"left", "middle", "right", "back", "forward"};
    const char *cdp = wheel ? "mouseWheel" : !type ? NULL : strcmp(type, "move") == 0 ?
                      "mouseMoved" : strcmp(type, "down") == 0 ? "mousePressed" :
                      strcmp(type, "up") == 0 ? "mouseReleased" : NULL;
    bool nums = json_is(json_get(m, "x"), JSON_NUMBER) && json_is(json_get(m, "y"), JSON_NUMBER);
    if (!cdp || !nums || x < 0 || y < 0 || x > 100000 || y > 100000 || mods < 0 ||
        mods > 15 || b < 0 || b > 31)
        return live_fail(err, LIVE_EBADREQ, 0, "input: a mouse message needs type "
                         "move|down|up, x and y within the frame, modifiers 0..15");
    json_w_key(w, "type");
    json_w_str(w, cdp);
    json_w_key(w, "x");
    json_w_num(w, x);
    json_w_key(w, "y");
    json_w_num(w, y);
    json_w_key(w, "modifiers");
    json_w_int(w, mods);
    if (wheel) {
        double dx = json_num(json_get(m, "dx")), dy = json_num(json_get(m, "dy"));
        json_w_key(w, "deltaX");
        json_w_num(w, dx > 10000 ? 10000 : dx < -10000 ? -10000 : dx);
        json_w_key(w, "deltaY");
        json_w_num(w, dy > 10000 ? 10000 : dy < -10000 ? -10000 : dy);
        return LIVE_OK;
    }
    json_w_key(w, "buttons");
    json_w_int(w, b);
    if (strcmp(cdp, "mouseMoved") != 0) {
        json_w_key(w, "button");
        json_w_str(w, button >= 0 && button <= 4 ? names[button] : "none");
        json_w_key(w, "clickCount");
        json_w_int(w, n < 1 ? 1 : n > 3 ? 3 : n);
    }
    return LIVE_OK;
}

int live_input_translate(const char *msg, size_t len, live_input_cmd *cmd, bool *handback,
                         live_err *err)
{
    memset(cmd, 0, sizeof *cmd);
    *handback = false;
    json_opts jo = {.max_size = TEXT_MAX * 2, .max_depth = 4,
                    .flags = JSON_NO_DUPLICATES | JSON_SECRET};
    json_doc *doc = json_parse(msg, len, &jo, NULL);
    const json_val *m = json_doc_root(doc);
    const char *t = json_get_str(m, "t");
    if (!doc || !t) {
        json_doc_free(doc);
        return live_fail(err, LIVE_EBADREQ, 0, "input: not a viewer message (a JSON object "
                         "with \"t\")");
    }
    if (strcmp(t, "handback") == 0) {
        json_doc_free(doc);
        *handback = true;
        return 0;
    }
    if (strcmp(t, "tab") == 0) {
        int trc = tab_msg(m, cmd, err);
        json_doc_free(doc);
        return trc == LIVE_OK ? 2 : trc;
    }
    json_w w;
    json_w_init_secret(&w);
    json_w_obj_begin(&w);
    int rc;
    if (strcmp(t, "key") == 0) {
        cmd->method = "Input.dispatchKeyEvent";
        rc = key_cmd(m, &w, err);
    } else if (strcmp(t, "mouse") == 0 || strcmp(t, "wheel") == 0) {
        cmd->method = "Input.dispatchMouseEvent";
        rc = mouse_cmd(m, t[0] == 'w', &w, err);
    } else if (strcmp(t, "ime") == 0) {
        cmd->method = "Input.imeSetComposition";
        rc = ime_cmd(m, &w, err);
    } else if (strcmp(t, "text") == 0) {
        size_t tl = 0;
        const char *text = json_str(json_get(m, "text"), &tl);
        cmd->method = "Input.insertText";
        rc = text && tl && tl <= TEXT_MAX ? LIVE_OK
             : live_fail(err, LIVE_EBADREQ, 0, "input: a text message needs 1..%d bytes",
                         TEXT_MAX);
        if (rc == LIVE_OK) {
            json_w_key(&w, "text");
            json_w_strn(&w, text, tl);
        }
    } else {
        rc = live_fail(err, LIVE_EBADREQ, 0, "input: unknown message type");
    }
    json_w_obj_end(&w);
    json_doc_free(doc);
    if (rc == LIVE_OK)
        cmd->params = json_w_error(&w) ? NULL : json_w_take(&w, &cmd->len);
    json_w_free(&w);
    if (rc != LIVE_OK)
        return rc;
    if (!cmd->params)
        return live_fail(err, LIVE_ENOMEM, 0, "input: out of memory");
    return 1;
}

void live_input_free(live_input_cmd *cmd)
{
    if (cmd && cmd->params) {
        base_memzero(cmd->params, cmd->len);
        free(cmd->params);
        cmd->params = NULL;
    }
}
