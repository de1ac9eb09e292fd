/*
 * snapshot.h — what an agent touches: the observation (a compact
 * accessibility snapshot with element refs, and paged page text) and the
 * actions on refs (click, type, select, press, scroll, history, tabs,
 * dialogs, screenshots), over one cdp_browser.
 *
 * One snap_agent per agent session. It owns:
 *   - the tabs (page targets, each with a flattened session, its frames and
 *     their sessions: same-process frames share the page's session,
 *     out-of-process iframes have their own, attached with setAutoAttach);
 *   - the ref table: refs "e1", "e2", ... are unique for the agent's life and
 *     never reused. A ref is bound to (tab, frame, document, backend node):
 *     the same node keeps its ref across snapshots of the same document; a
 *     new document (new loaderId) gets new refs. Resolving a ref that no
 *     longer resolves fails closed with what changed (navigated, removed,
 *     frame gone, tab closed); it is never re-matched to a look-alike;
 *   - observation ids "o1", "o2", ...: every snapshot and every action result
 *     carries one. An action may name the observation it relied on; it is
 *     refused when that observation was invalidated by a navigation of the
 *     tab it observed (SNAP_ESTALE, with the reason);
 *   - the per-session random nonce used to mark untrusted page content.
 *
 * Snapshot text format (docs/snapshot.md has the full description):
 *   [page] title="..." url=... origin=... auth=no obs=o3 epoch=1 tab=t1
 *   <<<page-content nonce=3f9a1c>>>
 *   - heading "Accounts" level=1
 *   - table
 *     - row "Checking 1,250.00 Select"
 *       - button "Select" [e4] (row: Checking)
 *   - frame origin=http://b.test:8080
 *     - textbox "Card number" [e9] required
 *   <<<end page-content nonce=3f9a1c>>>
 *   [more] 120 of 620 elements shown; next: offset=120
 *
 * Every call returns 0 or a negative SNAP_E* code; the snap_result is filled
 * in both cases (the text explains a failure to the agent). Results are
 * bounded: actions report what changed, not a new full snapshot.
 *
 * Single-threaded, like cdp/.
 */
#ifndef CDPGATE_SNAPSHOT_H
#define CDPGATE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cdp/cdp.h"

enum {
    SNAP_OK = 0,
    SNAP_ENOMEM = -1,
    SNAP_EBROWSER = -2,     /* CDP failed: disconnected, timed out, protocol */
    SNAP_ENOREF = -3,       /* unknown ref (never issued) */
    SNAP_ESTALE = -4,       /* ref or observation no longer valid: says what changed */
    SNAP_EDISABLED = -5,    /* the control is disabled */
    SNAP_ECOVERED = -6,     /* another element covers it: the text names it with a ref */
    SNAP_ENOTVISIBLE = -7,  /* zero-size or hidden, cannot be acted on */
    SNAP_EINVAL = -8,       /* bad argument (wrong kind of element, bad option) */
    SNAP_ENAVIGATE = -9,    /* navigation failed */
    SNAP_ENOTAB = -10,      /* no such tab, or it was closed */
    SNAP_EDIALOG = -11,     /* a dialog is open and must be answered first / none open */
    SNAP_ETIMEOUT = -12,    /* bounded wait ran out: outcome unknown */
    SNAP_ELOGIN = -13,      /* the stored session expired, was ended by the site or
                               cannot be used: nothing was restored; log in again */
    SNAP_EBLOCKED = -14,    /* a login handoff runs: waiting for the human */
    SNAP_EDENIED = -15,     /* the gate refused: outside the grant, the confirmation
                               was denied, or control is with the human */
    SNAP_ESTOP = -16,       /* consequential on an authenticated origin: unbound_stop,
                               the human completes it */
    SNAP_ETAKEOVER = -17,   /* a credential or challenge step: the human takes over */
    SNAP_EUNKNOWN = -18,    /* a gated action was sent but its outcome could not be
                               established (browser gone, wait ran out): not retried */
};
const char *snap_strerror(int code);

typedef struct snap_agent snap_agent;
struct vault;               /* vault/vault.h */

typedef struct {
    size_t budget_chars;    /* default snapshot size budget; 0 = 12000 */
    int timeout_ms;         /* per action; 0 = 15000. A snapshot's reads wait
                               up to 4x (docs/snapshot.md, "Deadlines") */
    bool allow_local;       /* open file:, chrome:, devtools:, view-source: URLs
                               (the CLI's own commands; never for a model) */
    struct vault *vault;    /* session store (borrowed; NULL = none): see "Browser
                               contexts" below */
    struct gate *gate;      /* the policy gate (borrowed; gate/gate.h). NULL: the
                               agent makes its own with no grant (the open web) */
    bool timing;            /* print each cold snapshot's phase times to stderr
                               ("timing: snapshot counters=... fetch=... ms";
                               the CLI sets it from CDPGATE_TIMING=1) */
    bool ax_tree;           /* build every snapshot from the browser's accessibility
                               tree; false (the default): a single-frame tab's is
                               built by the in-page walker, the AX tree its
                               fallback (issue 13, point 4; the CLI sets it from
                               CDPGATE_WALKER=0; see docs/snapshot.md) */
    /* Evidence (issue 16, point 3): secret_fn gets each session value (a
     * cookie's or a localStorage item's, n bytes) the agent restores from
     * the vault or captures from a login, when it is known, so the host can
     * scrub it byte-exact from what it records; the host never shows it and
     * wipes it when done. NULL: none. */
    void (*secret_fn)(void *ud, const char *val, size_t n);
    void *secret_ud;
    /* Read each page's console errors and uncaught exceptions: Runtime.enable
     * on every page session, so Runtime.consoleAPICalled and
     * Runtime.exceptionThrown reach the connection's listeners (the host's).
     * A page can tell Runtime is enabled (docs/threat-model.md); off by
     * default (`--evidence` turns it on). */
    bool console;
    bool login_any_origin;  /* snap_login_begin takes any http(s) origin (`cdpgate
                               login URL`: the human typed it; never for a model,
                               whose login needs an origin the grant names an
                               identity for or one the vault holds a session of) */
} snap_opts;
/* The gate's confirmation hook (gate_confirm_fn, installed by the host) is
 * the one call from snapshot/ back up into the host: the agent runs it from
 * inside snap_* calls, in an action's prologue before anything is sent, or
 * between the waits of an action already under way (a request of the page
 * from an authenticated context waits at the browser for the human), and
 * from snap_idle. While it runs the agent is mid-call: the hook must not call
 * any snap_* function on this agent nor free it; what it may do is listed
 * at gate_confirm_fn (gate/gate.h). */

/* The result of any call. text is what the model reads (new; bounded);
 * structured is the same as a JSON object (new) for MCP structuredContent.
 * Free with snap_result_free. */
typedef struct {
    int code;
    char *text;
    char *structured;
    char obs[16];           /* observation id this result carries */
    uint8_t *image;         /* screenshots: PNG or JPEG bytes (new) */
    size_t image_len;
} snap_result;
void snap_result_free(snap_result *r);

/* Works in an existing browser (launched or attached). Does not own b. */
snap_agent *snap_agent_new(cdp_browser *b, const snap_opts *o, cdp_err *err);
void snap_agent_free(snap_agent *a);
/* While no call runs: read what the browser sent and answer the page's
 * requests, asking the gate's confirmation hook now about those that wait
 * for the human (under a grant, a request that carries data from an
 * authenticated context: docs/gate.md). An embedder keeping an agent idle
 * calls it when the connection's descriptor (cdp_conn_fd) is readable;
 * `cdpgate mcp` does. 0, or SNAP_EBROWSER when the browser is gone. */
int snap_idle(snap_agent *a);
/* Before control passes to the human (the person said yes to the agent's
 * takeover; gate_takeover_req.settle): read every request the page sent so
 * far, so that each one is judged under the agent's rules, not the
 * human's (a data-carrying one of an authenticated context waits for the
 * human stamped with the control epoch it was sent under, and is refused
 * once control has moved; snap_idle answers it). 0, or SNAP_EBROWSER when
 * the browser did not answer. */
int snap_handover(snap_agent *a);

/* ---- observation ---- */

typedef struct {
    size_t offset;          /* element paging: skip this many elements */
    size_t budget_chars;    /* 0 = the agent's default */
    const char *query;      /* only elements/lines whose text matches (case-insensitive) */
    bool text;              /* page text mode (paged by characters) instead of elements */
    size_t text_offset;
    /* NULL or "": the whole page. "viewport": only what is in view now (the
     * lines whose element lies in the viewport, fixed ones included, with
     * their ancestors). "e12": that element and what is under it, with its
     * ancestors. Paging, query and text mode apply within it. */
    const char *from;
} snap_query;

int snap_observe(snap_agent *a, const snap_query *q, snap_result *r);

/* ---- elements: what replay re-finds a recorded target among ---- */

/* One actionable line of the current tab's observation (the lines that get
 * a ref in a snapshot), as snap_elements lists them. Strings are borrowed
 * from the list (valid until snap_elements_free), "" when absent; page
 * text, untrusted. */
typedef struct {
    char ref[16];           /* issued for it, as a snapshot would ("e12") */
    const char *role;       /* the snapshot's role: "button", "link", "textbox" ... */
    const char *name;       /* the name the snapshot shows (a clickable's: its text) */
    const char *row;        /* row context, as "(row: ...)" shows it: look-alikes only */
    const char *rowtext;    /* the text of the row, list item or article it is in, as
                               the snapshot shows it (its lines joined by spaces; the
                               gate's row is that element's innerText); "" none */
    const char *section;    /* the nearest heading above it in the page */
    const char *frame;      /* its frame's origin; "" in the main frame */
    bool disabled;
    /* Stable attributes of its element, read by snap_elements_attrs (DOM.describeNode:
     * no page script runs): id, name, aria-label, placeholder, data-testid
     * (else data-test, data-test-id, data-qa). Never a value. */
    bool attrs;             /* they were read */
    const char *id, *aname, *label, *placeholder, *testid;
} snap_elem;

typedef struct {
    snap_elem *v;
    size_t n;
    char origin[256];       /* the main frame's origin */
    char *url;              /* the main frame's URL (new) */
    char *title;            /* its title (new) */
    bool auth;              /* the page is authenticated (auth=yes) */
} snap_elems;

/* The actionable elements of the current tab, from its snapshot (the
 * cached one when nothing may have changed, else the page read again, as
 * a snapshot would be), each with a ref issued. 0, or a SNAP_E* code with
 * r filled. Free *out with snap_elements_free (also after a failure). */
int snap_elements(snap_agent *a, snap_elems *out, snap_result *r);
/* Read the stable attributes of the elements whose want[i] is set (all of
 * them when want is NULL), in one round trip. An element whose node cannot
 * be described keeps attrs false. 0, or SNAP_ENOMEM / SNAP_ENOTAB. */
int snap_elements_attrs(snap_agent *a, snap_elems *s, const bool *want, snap_result *r);
void snap_elements_free(snap_elems *s);

/* A page-derived string (title, URL, name, value, dialog message, page
 * text, an element's attributes) into a structured (JSON) result: bidi,
 * invisible and C1 characters and invalid UTF-8 as visible escapes (text
 * "\\u202e", the text view's escapes), never raw (observe_tree.c); NULL
 * writes null. replay/ writes its result's page strings through it. */
void snap_json_page(json_w *w, const char *s);
/* Page-derived texts framed in a's page-content markers, as one JSON
 * string: "<<<page-content nonce=N>>>", then a line "label: text" for
 * each pair of kv (n strings: label, text, ...; an empty or NULL text
 * left out; the text written as the snapshot writes page text: one line,
 * escapes, no marker spelled, cut at 1 KiB), then "<<<end page-content
 * nonce=N>>>". replay/ frames a divergence's candidates with it. */
void snap_json_page_framed(json_w *w, const snap_agent *a, const char *const *kv, size_t n);

/* ---- actions ---- */

/* Navigate the current tab (or a new one) and wait for the final page
 * (script and meta redirects followed). The result includes a snapshot
 * within the default budget. */
int snap_open(snap_agent *a, const char *url, bool new_tab, snap_result *r);
/* obs may be NULL; when given it must still be valid for the tab. Every
 * action's ref may also be "text:<text>": the one element of the current
 * tab's observation with that text (a label, a cell; matched like a query;
 * a text inside a control is that control), given a ref; several or none
 * are refused (SNAP_EINVAL with the candidates, SNAP_ENOREF). */
int snap_click(snap_agent *a, const char *ref, const char *obs, snap_result *r);
/* A double click on the ref's element (editing a list item, selecting a
 * word): checked and gated exactly as a click (the gate's tool "click");
 * the result says "double-clicked". */
int snap_dblclick(snap_agent *a, const char *ref, const char *obs, snap_result *r);
/* Move the mouse over the ref's element and leave it there (menus and
 * controls that appear on hover; a disabled control's tooltip). Checked as
 * for a click (scrolled into view, not covered) but never as disabled; a
 * read for the gate (tool "hover"). The result reports what appeared. */
int snap_hover(snap_agent *a, const char *ref, const char *obs, snap_result *r);
int snap_type(snap_agent *a, const char *ref, const char *text, bool submit,
              const char *obs, snap_result *r);
/* values: option labels or values (native <select> and ARIA listbox/combobox). */
int snap_select(snap_agent *a, const char *ref, const char *const *values, size_t n,
                const char *obs, snap_result *r);
/* key: "Enter", "Tab", "Escape", "ArrowDown", "a", "Control+A" ... */
int snap_press(snap_agent *a, const char *key, const char *obs, snap_result *r);
/* A key pressed on the ref's element (a replayed press step's target):
 * gated as a press on that element, which is then given the focus (under
 * the press permit) and must hold it when the key is sent; an element in
 * a frame is refused (SNAP_EINVAL). ref NULL: snap_press. */
int snap_press_on(snap_agent *a, const char *ref, const char *key, const char *obs,
                  snap_result *r);
/* ref NULL scrolls the page: direction "down"/"up"/"top"/"bottom"; with a
 * ref, scrolls that element into view. */
int snap_scroll(snap_agent *a, const char *ref, const char *direction, snap_result *r);
/* delta -1 back, +1 forward. */
int snap_history(snap_agent *a, int delta, snap_result *r);
/* action "list", "switch", "close"; tab like "t2" (NULL for list). */
int snap_tabs(snap_agent *a, const char *action, const char *tab, snap_result *r);
/* Answer the open JS dialog of the current tab. */
int snap_dialog(snap_agent *a, bool accept, const char *prompt_text, snap_result *r);
/* Attach a local file to a file input (<input type=file>) by ref. The path
 * is resolved (realpath: symlinks followed, must be a regular file) before
 * the gate sees it: the grant must name the "upload" tool, the
 * file_transfer egress class and a file scope holding the file. */
int snap_upload(snap_agent *a, const char *ref, const char *path, const char *obs,
                snap_result *r);
/* Run the model's own JavaScript expression in the current page and return
 * its value (JSON, marked as page content). Only when the grant names the
 * "eval" tool, and every call is confirmed by the human (the gate's hook);
 * without a grant it is refused. */
int snap_eval(snap_agent *a, const char *expression, snap_result *r);
/* PNG of the viewport or the full page: r->image. */
int snap_screenshot(snap_agent *a, bool full_page, snap_result *r);
/* A screenshot as asked: of the element behind ref (clipped to its border
 * box), of a region of the page (w, h > 0; page CSS px), of the full page
 * (cut at 4096x16384 px, and it says so) or of the viewport. max_bytes > 0
 * caps r->image: over it, the capture is retaken downscaled (Chromium's
 * clip scale), then as JPEG quality 80, then 60 at smaller scales (r->image
 * starts with the JPEG magic then); the text states the original and the
 * delivered size, scale and format. */
typedef struct {
    bool full_page;
    size_t max_bytes;       /* 0: no cap */
    const char *ref;        /* "e12", or NULL */
    double x, y, w, h;      /* a region, when w > 0 and h > 0 */
} snap_shot_opts;
int snap_screenshot_with(snap_agent *a, const snap_shot_opts *o, snap_result *r);
/* Crops of the elements behind refs[0..n) (an a11y report's: many crops of
 * one page), each as snap_screenshot_with(ref, max_bytes) takes one, but
 * gated once (tool "screenshot") and under one search for the page's
 * secret fields: the mask on, every crop taken, the fields checked
 * unchanged, the mask off (a change discards every crop; taken once more,
 * then refused). A search of the page (a DOM snapshot of every frame) for
 * each crop made 40 crops of a large page take minutes (session 16).
 * An element out of view is scrolled into view for its crop (a capture
 * beyond the viewport lays the whole page out again: seconds each on a
 * long page), the page's scroll put back after; one larger than the
 * viewport is cut to its top left part, the viewport's size (cut).
 * out[i]: the image (new; free it) or NULL with code, the SNAP_E* why
 * (SNAP_EDENIED: a secret field, or beyond the viewport while the page has
 * a secret field with a value). 0, or the failure of the whole (the gate,
 * no page, the search) with r saying why and every out[i] empty. */
typedef struct {
    uint8_t *img;
    size_t len;
    int code;
    bool cut;       /* the element is larger than the viewport: its top left part */
} snap_shot_crop;
int snap_screenshot_refs(snap_agent *a, const char *const *refs, size_t n, size_t max_bytes,
                         snap_shot_crop *out, snap_result *r);

/* ---- browser contexts, sessions and the login handoff (session.c) ----
 *
 * The open web runs in one *untrusted* browser context per agent
 * (Target.createBrowserContext, disposed with the agent), which never holds
 * a vault cookie. Where the browser refuses new contexts (some attached
 * browsers, Electron) the default context is used and the first open says
 * so; sessions are then never restored (nothing could keep them apart).
 *
 * snap_open picks the context by the target URL's origin: an origin with a
 * stored, unexpired session in o.vault, under the identity the task grant
 * names for it (gate_identity_for; no grant: nothing is restored), whose
 * identity lease this task holds (vault_identity_acquire), opens
 * in that service's own
 * *privileged* context (created on first use, holding only that service's
 * cookies and localStorage, restored before its first navigation); every
 * other origin opens in the untrusted context. A tab's context never
 * changes: when the current tab is in another context, the page opens in a
 * new tab and the result says so. A page is authenticated (header
 * auth=yes) when its tab's context is privileged for the page's origin and
 * holds a session restored from the vault or captured by a login; cookies
 * alone never make a page authenticated.
 *
 * An expired session is not restored (SNAP_ELOGIN, the page still opened
 * without it, the text saying to log in again with `cdpgate login URL`).
 * A restored or captured session stays authenticated until the service
 * drops its credentials (none of its cookie names left in the context,
 * none of its localStorage keys on the origin): then the open that saw it
 * says so, and later opens of the origin are SNAP_ELOGIN in the untrusted
 * context. A URL, a login path or a password field never ends it; signs of
 * a rejection (a redirect to a login page, HTTP 401/403) are a note. */

/* The origin of an http(s) URL as sessions are keyed: url_parse's
 * (url/url.h) scheme://host[:port], as the browser's location.origin gives
 * it (lower case, IPv4 dotted, IPv6 compressed, default port left out,
 * user info dropped). 0, or -1 when the URL is not http(s), is refused by
 * url_parse, or does not fit in cap. */
int snap_url_origin(const char *url, char *out, size_t cap);
/* url as every output of the agent shows it (new; NULL when out of
 * memory): the values of query and fragment parameters named like secrets
 * (password, token, ...) written "[redacted]", and every session value
 * the agent restored or captured, raw or encoded, "[session-value]". */
char *snap_url_shown(const snap_agent *a, const char *url);
/* Any text (page data about to be written to a file: an a11y report's
 * strings) as every output of the agent shows it (new; NULL when out of
 * memory): every session value the agent restored or captured (values of
 * at least 8 bytes and the tokens in them; raw, percent-decoded,
 * lower-cased or base64-encoded; and values of 4 to 7 bytes mixing
 * letters and digits, raw or percent-decoded, where each is a whole
 * token: no letter or digit on either side) replaced with
 * "[session-value]". Short values of letters alone or digits alone
 * ("true", "1234") are not: they would blank every such word. Then a run
 * of text between markup characters, or a word of one, that is the value
 * of a secret field a build of the agent remembered (snap_text_secret's
 * second rule) is "[secret]", as a snapshot shows it. A text
 * over 16 KiB keeps its first 16 KiB ("[N more bytes withheld]"). A plain
 * copy when the agent holds no session value. */
char *snap_text_shown(const snap_agent *a, const char *s);
/* Whether the word w[0..n) of page text is, or holds, a secret this agent
 * knows: a session value it restored or captured (snap_text_shown's rule:
 * raw or encoded, 8 bytes or more) or the value of a secret field a build
 * of any of its documents remembered (secval.c: normalised, whole). For
 * page text kept past the page (a trail: replay/text.c; red team s16,
 * R6-5). a may be NULL (false). */
bool snap_text_secret(const snap_agent *a, const char *w, size_t n);
/* Forget the contexts of origin (after a new login saved a new session):
 * its tabs stay open, still authenticated while their context holds the
 * old session, and the next open of the origin restores the session from
 * the vault again. */
void snap_session_forget(snap_agent *a, const char *origin);
/* Restore the session of origin from the vault under the identity the
 * grant names for it, the path snap_open takes before opening a page of
 * the origin (nothing is opened): replay's login and takeover steps. 0
 * when a context of the agent holds that session now (restored, or held
 * already); SNAP_ELOGIN with r->text saying why not (no vault, no stored
 * session, expired, another identity, held by another task); SNAP_EINVAL
 * when origin is not one. */
int snap_session_restore(snap_agent *a, const char *origin, snap_result *r);

/* The login handoff. snap_login_begin opens url in a new tab of a fresh
 * login context for url's origin (needs o.vault; the human's: its requests
 * are not judged and it has no network rule, so identity providers on
 * other origins work) and starts the blocked state. Unless o.login_any_origin,
 * url's origin must be one the grant names an identity for or one the vault
 * holds a session of (SNAP_EDENIED otherwise, naming the grant's: a model
 * cannot send the human to a look-alike sign-in page on any granted
 * origin). The caller shows that
 * window to a human (a headed browser) and calls snap_login_poll until it
 * returns something other than SNAP_EBLOCKED. The login is complete when
 * the page is back on the service's origin with no visible password field
 * and off the login path, or when human_done says the human declared it
 * done (a signal from the human, never from the agent); a login tab whose
 * top page is then on another origin than url's is refused (SNAP_EDENIED,
 * nothing saved, the login's context closed). Then only session
 * state — the context's cookies for the service's domain and the origin's
 * localStorage, never form values — is sealed into the vault (format:
 * docs/vault.md, "Session state format v1"), the same state is set into a
 * new privileged context (with the grant's network rule, as a restored
 * session gets), the login context is closed with its tabs, and the
 * service's root is opened in a new tab of the privileged context (never
 * the page the human ended on: its address may be a one-time link, red
 * team s15, R5-4). While a login runs,
 * snap_open refuses with SNAP_EBLOCKED; hosts refuse every other agent
 * call (the MCP server does). */
int snap_login_begin(snap_agent *a, const char *url, snap_result *r);
int snap_login_poll(snap_agent *a, bool human_done, snap_result *r);
bool snap_login_active(const snap_agent *a);
/* Whether the last login's session went into the vault: true also when
 * snap_login_poll failed after the save (the session could not be moved
 * out of the login's context, or that context not closed: its result says
 * "is saved in the vault, but ..."). False from snap_login_begin on. */
bool snap_login_saved(const snap_agent *a);
/* The origin of the running login ("" when none); borrowed. */
const char *snap_login_origin(const snap_agent *a);
/* Stop a running login without saving anything. */
void snap_login_cancel(snap_agent *a);
/* Give the agent a vault later (a login created the store). Borrowed. */
void snap_agent_set_vault(snap_agent *a, struct vault *v);

/* ---- recording (record.c; issue 14: replay/ keeps the trail) ----
 *
 * What an action that passed the gate started from and acted on, read at
 * the gate's chokepoint before the action was sent (a clicked element may
 * vanish). Page text as read, each string cut at 1 KiB; never a typed
 * value, never a secret field's value (secret says the field is one).
 * Borrowed from the agent: valid until its next action or
 * snap_step_forget. NULL strings: not known. */
typedef struct {
    const char *tool;           /* the gate's tool name (a double click: click) */
    const char *cls;            /* the gate's class (read, interact, ...) */
    const char *const *egress;  /* egress classes it needed, NULL-terminated */
    const char *origin;         /* the page's origin; for open, the target's */
    const char *url;            /* the page's URL (redacted, session values
                                   scrubbed); for open, the target's */
    const char *title;          /* the tab's title before the action */
    bool authenticated;         /* the tab holds a vault or login session */
    const char *identity;       /* the grant's identity for it, when so */
    bool has_target;            /* an action on an element: */
    const char *role, *name;    /* as the gate judged them */
    const char *row;            /* its row or list item's text */
    const char *section;        /* the nearest section, form, dialog or region */
    const char *label;          /* its label's text or aria-label */
    const char *id, *name_attr, *placeholder, *testid;  /* stable attributes */
    const char *frame_origin;   /* its frame's origin when not the top frame */
    bool secret;                /* a secret field now or ever */
} snap_step_facts;
/* The one rule for what a record of a step keeps of its input, the
 * trail's and the evidence's alike (red team s14 R4-2, s16 R6-4): a typed
 * text or a select's values only when the chokepoint read a target that
 * is not and never was a secret field; a pressed key only when it read
 * the step and the focus is no secret field. f NULL: nothing was read,
 * nothing is kept. */
bool snap_step_text_kept(const snap_step_facts *f);
bool snap_step_key_kept(const snap_step_facts *f);
/* Keep the facts of each action that passes the gate (on costs one page
 * read per action on an element). Off by default. */
void snap_record_facts(snap_agent *a, bool on);
/* The facts of the last action that passed the gate since
 * snap_step_forget, or NULL (none, or recording off). */
const snap_step_facts *snap_step_last(const snap_agent *a);
void snap_step_forget(snap_agent *a);
/* Describe the element behind ref (a read of it: browser_read) into the
 * facts snap_step_last returns. 0, or SNAP_E* with r saying why. */
int snap_step_describe(snap_agent *a, const char *ref, snap_result *r);

/* ---- the live view (issue 15; human.c, cast.c) ---- */

/* The person's input from the live view (live_input_translate's command:
 * method Input.dispatchMouseEvent, dispatchKeyEvent, insertText or
 * imeSetComposition, params its JSON) sent to the current tab through the
 * sink under the 'human' permit: only while the gate's control mode is
 * human. params holds what the person typed: sent as a secret, never kept.
 * Does not wait for the browser. 0, or SNAP_EDENIED (the human does not
 * hold control), SNAP_EINVAL (not an input method), SNAP_ENOTAB,
 * SNAP_EBROWSER; why (cap bytes) says which, never quoting params. */
int snap_human_input(snap_agent *a, const char *method, const char *params, char *why,
                     size_t cap);
/* The current tab's URL, redacted as in results (session values out). 0, or
 * SNAP_ENOTAB / SNAP_ENOMEM (out ""). */
int snap_human_url(snap_agent *a, char *out, size_t cap);
/* The tabs of the live view (human.c): the open tabs of the current tab's
 * browser context (the context the person controls; another context's
 * tabs are never listed nor chosen), in the order they were opened. The
 * title is page data (cut on a character boundary); the origin only, never
 * a path. */
#define SNAP_HUMAN_TABS_MAX 32
typedef struct {
    char id[16];            /* "t2": what the viewer sends back to choose it */
    char title[256];
    char origin[256];       /* "" for about:blank and the like */
    bool current;           /* the tab the view shows */
} snap_human_tab;
/* Up to cap of them into out; their count, and *total (may be NULL) all of
 * them. */
size_t snap_human_tabs(snap_agent *a, snap_human_tab *out, size_t cap, size_t *total);
/* The person chose tab id ("t2") in the view: only while the gate's mode
 * is human, only a tab of the context the person controls. It is brought
 * to the front (Target.activateTarget through the sink under the
 * 'human_tab' permit, which permits that method only, only then and only
 * for such a tab) and becomes the current tab (the screencast follows it;
 * the agent continues there after the hand-back). 0, or SNAP_EDENIED (not
 * the human's control, a tab of another context), SNAP_ENOTAB (no such
 * open tab), SNAP_EBROWSER; why says which. */
int snap_human_tab_switch(snap_agent *a, const char *id, char *why, size_t cap);
/* While the live view runs: adopt the tabs the page opened (a popup:
 * window.open, target=_blank) and follow them as a browser does: a new
 * tab opened from the current tab's context becomes the current tab; when
 * the current tab closes (a popup's window.close), its opener, else the
 * context's most recent open tab, does. The tabs' titles are read again
 * when a tab is adopted and once a second (the browser's title events lag
 * or come before a popup is adopted). *seen: the caller's state, zeroed at
 * first (the tabs open then are not new). True when the current tab
 * changed. */
typedef struct {
    bool started;
    size_t ntabs;           /* the tabs seen so far */
    int64_t titles_ms;      /* when the titles were last read */
} snap_human_seen;
bool snap_human_follow(snap_agent *a, snap_human_seen *seen);
/* The current tab's origin as the sink shows a request the person makes
 * (snap_request_shown's rule: a host outside the grant cut to its last
 * labels, session values scrubbed; with no grant every host is cut so: the
 * page chose it, red team s17), and "ORIGIN (path and query withheld)"
 * for the page: what a result to the model says of the person's page (red
 * team s15, R5-4: a path or query they opened may carry a one-time
 * secret). 0, or SNAP_ENOTAB / SNAP_ENOMEM (out says so). */
int snap_human_origin(snap_agent *a, char *out, size_t cap);
int snap_human_page(snap_agent *a, char *out, size_t cap);
/* Any URL of the person's session (a navigation, a response while they
 * hold control) in that same form, "ORIGIN (path and query withheld)"
 * (new; NULL when out of memory): the evidence's record of a takeover
 * (red team s16, R6-6). */
char *snap_human_url_shown(const snap_agent *a, const char *url);
/* The browser's cookies by name: one "domain name" line each (new), never a
 * value (the reply is read as a secret and wiped); NULL on failure. */
char *snap_human_cookies(snap_agent *a);
/* The cookies in now (snap_human_cookies) that were not in before, as
 * counts by site into out (cap bytes): "2 on shop.test, 1 on
 * tracker.example"; "" when none. A site is the cookie's domain as the
 * browser holds it, cut to its last two labels (an IP address whole), or
 * "[withheld]" when it has a character a host name does not: never a
 * cookie's name, which the page chooses (red team s17, R7-4: a name is
 * any text, and this account is cdpgate's own words to the model). */
void snap_human_cookies_new(const char *before, const char *now, char *out, size_t cap);
/* The person's sign-in for the gate's takeover stop (handback.c; red team
 * s15, R5-1, R5-5), before the live view starts: on the current tab's
 * origin, only when the task grant names an identity for it (SNAP_EDENIED
 * otherwise, r saying why: no person is asked); a tab already
 * authenticated there is answered in place (0, *fresh false); else a
 * fresh, empty login context of its own is created for the origin (needs
 * the vault: SNAP_EINVAL) and the stop page's login path (the origin's
 * root when it is none, never its query) opened in a new tab of it, which
 * becomes current (0, *fresh true; audited). Its requests are the
 * person's; the agent's untrusted context and its cookies stay apart.
 * snap_human_handback ends it. */
int snap_human_signin(snap_agent *a, bool *fresh, snap_result *r);
/* The hand-back (handback.c): whether the current tab is logged in, by the
 * gate's rule (auth=yes: its context is privileged for the page's origin
 * and holds a session). After a sign-in (snap_human_signin): its
 * context's session, only there, off the login wall and on its origin, is
 * saved in the vault under the identity the grant names for the origin
 * (the rules of `cdpgate login`: the service's cookies and the origin's
 * localStorage, never a form value; audited), moved into a privileged
 * context of its own (the grant's network rule) where the service's root
 * is opened (never the page the person ended on), and the sign-in's
 * context closed; when nothing is saved it is closed and the agent is back
 * on its tab. An authenticated tab's session is saved again off the login
 * wall. A takeover in the agent's untrusted context saves nothing. person:
 * a person held control (the link was opened); when false nothing is
 * saved. Counts, names and ids only: no value. */
typedef struct {
    bool logged_in;         /* the current tab is authenticated now */
    bool saved;             /* a session was saved in the vault */
    char origin[256];       /* the current tab's origin ("" when none) */
    char shown[300];        /* that origin as results show it (a host outside
                               the grant by its last two labels) */
    char identity[128];     /* the grant's identity for it ("" when none) */
    size_t ncookies, nls;   /* what the saved session holds */
    char obs[16];           /* a fresh observation id (older refs are stale) */
    char note[700];         /* why nothing was saved, when it was not */
} snap_handback;
void snap_human_handback(snap_agent *a, bool person, snap_handback *h);

/* The screencast of the current tab for the person's view (cast.c): JPEG
 * frames from Page.startScreencast, each acknowledged at once; a
 * re-capture when no frame came for idle_ms (a still page sends none)
 * and at once when the tab navigates (commit, DOM ready, load); the cast
 * follows the current tab. Frames go to frame() only: never
 * written anywhere, never in a tool result. */
typedef struct {
    int width, height;          /* the JPEG's pixels */
    double device_w, device_h;  /* the viewport in DIP (Page.screencastFrame
                                   metadata; 0 before the first such frame) */
    double page_scale;          /* pageScaleFactor (pinch zoom) */
    double offset_top;          /* DIP above the page in the frame */
    int tab;                    /* the tab it shows ("t<tab>") */
    bool recaptured;            /* a re-capture of a still page (the viewport at its
                                   own size), not a screencast frame */
} snap_cast_meta;

typedef struct {
    int quality;                /* JPEG quality 1..100; 0: 70 */
    int max_w, max_h;           /* the largest frame; 0: 1280 x 720 */
    int idle_ms;                /* re-capture after this long without a frame; 0: 1000 */
    /* Each frame: the JPEG bytes and what they show (borrowed for the call;
     * runs inside the connection's event dispatch or snap_cast_step: it
     * must not call into the agent or the connection). */
    void (*frame)(void *ud, const uint8_t *jpeg, size_t len, const snap_cast_meta *m);
    void *ud;
} snap_cast_opts;

typedef struct snap_cast snap_cast;

/* Start casting the current tab (if any). NULL with why filled. */
snap_cast *snap_cast_start(snap_agent *a, const snap_cast_opts *o, char *why, size_t cap);
/* Call often (after pumping the connection): follows the current tab,
 * collects and asks for re-captures. 0, or SNAP_EBROWSER when the browser
 * is gone. NULL is a no-op. */
int snap_cast_step(snap_cast *c);
/* Stop the screencast and free. NULL is a no-op. */
void snap_cast_stop(snap_cast *c);
/* What the last frame showed, NULL before the first. */
const snap_cast_meta *snap_cast_last(const snap_cast *c);
/* A point in frame pixels (as the viewer clicked it) into the page's CSS
 * pixels for Input.dispatchMouseEvent (the frame is the viewport scaled
 * to the JPEG's size). 0, or -1 before the first frame. */
int snap_cast_point(const snap_cast *c, double fx, double fy, double *x, double *y);
/* The width and height of a JPEG from its SOF marker (bounded: fuzzed by
 * fuzz_cast). 0, or -1 when p is no JPEG with a frame header. */
int snap_cast_jpeg_size(const uint8_t *p, size_t n, int *w, int *h);

/* ---- the accessibility scan's page side (axe_run.c; issue 16) ----
 *
 * Runs a user-installed axe-core (its source is given: cdpgate ships none)
 * in every frame of the current tab, out-of-process frames included, each
 * in an isolated world of its own ("cdpgate-axe", made anew for each scan):
 * the page's CSP does not apply there and the page's scripts cannot reach
 * axe's builtins (a page that redefines Array.prototype.map or window.axe
 * changes nothing). As @axe-core/playwright does: axe.runPartial in each
 * frame with the frame context axe.utils.getFrameContexts gives for it,
 * then axe.finishRun over the partial results in the top frame's world.
 * Each frame runs in two phases: every rule but the slow ones
 * (color-contrast, color-contrast-enhanced, link-in-text-block,
 * target-size), then those; each phase of each frame has frame_ms, the
 * whole scan cap_ms. Rules a phase did not finish are listed as not
 * evaluated (never as passed). Gated as the tool "a11y_scan" (a read); the
 * sink lets the source out only under that permit and only byte for byte
 * as given (sink.c). Nothing is run in the page's own world; axe reads the
 * DOM and does not change it. */
typedef struct {
    const char *src;        /* axe-core's source as the user installed it (borrowed) */
    size_t len;
    const char *tags;       /* JSON array of tags ("[\"wcag2a\"]") */
    const char *context;    /* JSON axe context {"include":[...],"exclude":[...]} */
    int frame_ms;           /* per frame and phase; 0 = 30000 */
    int cap_ms;             /* the whole scan; 0 = 120000 */
} snap_axe_opts;
typedef struct snap_axe_scan snap_axe_scan;
/* 0 with *out (free with snap_axe_free), or a SNAP_E* code with r saying
 * why (no page open, the gate refused, axe did not load in the top frame,
 * the cap ran out before the top frame was done). */
int snap_axe_run(snap_agent *a, const snap_axe_opts *o, snap_axe_scan **out, snap_result *r);
/* axe.finishRun's results (JSON text, as axe produced them; page text:
 * the html snippets still hold whatever the page's markup holds). */
const char *snap_axe_results(const snap_axe_scan *s);
/* What was not evaluated: JSON array of {"frame": URL (redacted), "rules":
 * [...], "reason": "..."}; "[]" when everything ran. */
const char *snap_axe_skipped(const snap_axe_scan *s);
const char *snap_axe_version(const snap_axe_scan *s);
/* The frames scanned and found (the top frame included). */
size_t snap_axe_frames(const snap_axe_scan *s, size_t *found);
/* The ref of the element an axe node's target names (a JSON array: the
 * frame selectors, then the node's), issued as a snapshot would (its
 * accessibility role and name), into ref[16]; "" when it cannot be found
 * again (gone, frame not scanned). 0, or SNAP_ENOMEM. */
int snap_axe_ref(snap_agent *a, snap_axe_scan *s, const char *target, char ref[16]);
void snap_axe_free(snap_axe_scan *s);

#endif
