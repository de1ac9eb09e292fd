/*
 * gate.h — the policy gate: task grants, action classes, the confirmation
 * hook, control epochs, the audit log. Pure policy: no CDP, no browser.
 *
 * The snapshot module (the actions) describes every state-changing action
 * as a gate_request and asks gate_check before anything leaves for the
 * browser; its one sink for state-changing CDP commands refuses to send
 * without the permit that an allowing decision gives (snapshot/sink.c).
 * Network requests the page or the browser starts by itself (redirects,
 * popups, form posts, script navigations, subresources, reports,
 * prefetches) are paused by the sink and judged by gate_check_net before
 * they leave; in a privileged context nothing goes outside the grant.
 *
 * What the gate decides, in order (docs/gate.md has the table):
 *   1. the grant has expired                      -> deny
 *   2. control is not with the agent (human, paused) -> deny (mode)
 *   3. the request is stamped with an old epoch   -> stale
 *      after control returned, a state change before a fresh observation
 *                                                 -> stale
 *   4. the tool is not granted                    -> deny
 *   5. the origin is not granted                  -> deny
 *   6. recipient (wherever one is given: gate/recipient.c) / file /
 *      egress outside the grant                  -> deny
 *   7. by class of action:
 *        read, interact                           -> allow
 *        credential or challenge                  -> takeover (the human)
 *        consequential on an authenticated origin -> stop (unbound_stop),
 *                                                    unless a bound rule names it
 *        state change on an authenticated origin  -> confirm (the hook),
 *                                                    every time
 * A confirm is turned into allow or deny by the hook: the C callback, else
 * deny. (Hosts install the callback: the MCP server asks the client by
 * elicitation, or runs the --confirm program; the CLI asks on the TTY.)
 *
 * With no grant (gate_new(NULL, ...)): every tool but "eval", "upload" and "replay",
 * every http(s) origin, no privileged sessions (no identities), egress
 * approved_origin_fetch for every origin; classes still apply (credential
 * fields are still a takeover).
 *
 * Every decision is one JSON line in the audit log (when one is open): time,
 * task, principal, epoch, action, origin, target summary, class, decision,
 * reason. Secrets never reach it: the text to type is carried only to show
 * it to the human who confirms and to check it as a recipient (never for a
 * password or one-time-code field), and is logged only as a recipient; a
 * recipient or a file path is not a secret. Page and model text shown to a
 * human goes through gate_text_escape.
 *
 * Single-threaded; one gate per task. No global mutable state.
 */
#ifndef CDPGATE_GATE_H
#define CDPGATE_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    GATE_OK = 0,
    GATE_ENOMEM = -1,
    GATE_EINVAL = -2,       /* malformed grant / argument: message says where */
    GATE_EIO = -3,          /* audit log could not be opened or written */
};

#define GATE_GRANT_MAX (1u << 20)   /* bytes of a grant file */
#define GATE_LIST_MAX 1024u         /* entries in any list of a grant */
#define GATE_STR_MAX 2048u          /* bytes of any string in a grant */

typedef struct {
    char msg[256];
} gate_err;

/* ---- the task grant ---- */

enum {
    GATE_EGRESS_NONE = 0,
    GATE_EGRESS_FETCH = 1 << 0,     /* approved_origin_fetch: requests carrying
                                       data (POST, bodies) to granted origins */
    GATE_EGRESS_SEND = 1 << 1,      /* structured_send: send actions to granted
                                       recipients */
    GATE_EGRESS_FILE = 1 << 2,      /* file_transfer: uploads from and downloads
                                       to the file scopes */
};

typedef struct {
    const char *service;            /* origin, "https://bank.test" */
    const char *identity;           /* vault identity label */
} gate_identity;

/* A bound rule: the one consequential operation the human approved in
 * advance, named exactly (origin, tool, accessible name; row optional).
 * It turns that operation's stop into a confirm. */
typedef struct {
    const char *origin;
    const char *tool;
    const char *name;
    const char *row;                /* NULL: any row */
} gate_bound;

/* A grant as embedders fill it (all pointers borrowed; gate_new copies).
 * Lists: NULL/0 means empty. tools NULL/0 means the default tool set (every
 * tool but "eval", "upload" and "replay"). */
typedef struct {
    const char *task;               /* task id, shown in the audit log */
    const char *principal;          /* who set the task */
    const char *const *tools;
    size_t ntools;
    const char *const *origins;     /* "https://a.test", "http://a.test:8080",
                                       "*.example.com" (any scheme, any port,
                                       the domain and its subdomains) */
    size_t norigins;
    const char *const *recipients;  /* "a@b.test" exact, "*@b.test" a domain */
    size_t nrecipients;
    const char *const *file_scopes; /* absolute directories */
    size_t nfile_scopes;
    unsigned egress;                /* GATE_EGRESS_* bits */
    int egress_field;               /* GATE_EGRESS_FIELD_*: the grant file's
                                       field egress was read from (shown by
                                       `cdpgate policy`; not a permission) */
    const gate_identity *identities;
    size_t nidentities;
    const gate_bound *bound;
    size_t nbound;
    int64_t expires;                /* unix seconds; 0 = never */
    const char *audit;              /* audit log path; NULL = none */
    const char *const *assets;      /* asset origins (same syntax as origins): in a
                                       privileged context, read-only GET
                                       subresources (images, styles, fonts,
                                       scripts, media) may also come from them,
                                       e.g. a CDN; nothing else goes there */
    size_t nassets;
} gate_grant;

/* Which field of a grant file named the egress classes: none (no egress),
 * "egress", or the policy document's name "egress_classes" (a synonym with
 * the same values; both in one file is an error naming them). */
enum {
    GATE_EGRESS_FIELD_NONE,
    GATE_EGRESS_FIELD_EGRESS,
    GATE_EGRESS_FIELD_CLASSES
};

/* Parse a grant file's JSON (strict: unknown fields, wrong types, bad
 * origins or patterns, unknown tools or egress classes, relative file
 * scopes, an unparsable expires are errors that name the field). *out is new
 * (one allocation holding the strings); free with gate_grant_free. */
int gate_grant_parse(const char *json, size_t len, gate_grant **out, gate_err *err);
int gate_grant_load(const char *path, gate_grant **out, gate_err *err);
void gate_grant_free(gate_grant *g);

/* The tool names a grant may list (NULL-terminated): open, snapshot, text,
 * click, type, select, press, scroll, back, screenshot, tabs, dialog,
 * login, upload, eval, takeover, record, replay, a11y_scan (the accessibility
 * scan, a read: in the default set, but `cdpgate mcp` lists its tool only
 * when the grant names it). */
const char *const *gate_tool_names(void);

/* ---- classes, decisions ---- */

enum {
    GATE_CLASS_READ,
    GATE_CLASS_INTERACT,
    GATE_CLASS_AUTH_CHANGE,         /* state change on an authenticated origin */
    GATE_CLASS_CONSEQUENTIAL,
    GATE_CLASS_CREDENTIAL,
    GATE_CLASS_TAKEOVER,            /* the agent hands control to a person: a
                                       mode switch, never an action (review F7) */
};
const char *gate_class_name(int cls);   /* "read", "interact", ..., "takeover" */

/* Kinds of consequential action. */
enum {
    GATE_CONSEQ_NONE,
    GATE_CONSEQ_SEND,
    GATE_CONSEQ_PUBLISH,
    GATE_CONSEQ_PURCHASE,
    GATE_CONSEQ_DELETE,
    GATE_CONSEQ_PRODUCTION,         /* production_change */
};
const char *gate_conseq_name(int kind); /* "send", ..., "production_change" */

enum {
    GATE_ALLOW,
    GATE_DENY,
    GATE_CONFIRM,                   /* only from gate_decide: the hook decides */
    GATE_STOP,                      /* unbound_stop: the human completes it */
    GATE_TAKEOVER,                  /* credential/challenge: the human */
    GATE_STALE,                     /* old epoch / observation before control returned */
};
const char *gate_decision_name(int d);  /* "allow", "deny", ..., "stale" */

/* What the element acted on looks like (all may be NULL/""; borrowed). The
 * snapshot module reads these from the accessibility tree and the DOM
 * through read-only queries the page cannot change. */
typedef struct {
    const char *role;               /* AX role: button, link, textbox, ... */
    const char *name;               /* accessible name */
    const char *text;               /* visible text when it differs from name */
    const char *row;                /* row/list item/card context */
    const char *tag;                /* lower-case tag name */
    const char *input_type;         /* <input type>, lower case */
    const char *autocomplete;       /* autocomplete attribute */
    const char *field;              /* name/id attributes of a field */
    const char *form_action;        /* absolute URL the form is submitted to:
                                       its submitter's formaction, else the
                                       form's action */
    const char *form_method;        /* "get", "post", "dialog" (likewise) */
    const char *form_submit;        /* the names of the submitter: the submit
                                       button clicked, or for Enter in a field
                                       the form's default button */
    const char *frame_url;          /* URL of the element's frame (redacted) */
    const char *label;              /* label text, aria-labelledby, title, the
                                       text before it, the control an option
                                       belongs to (recipient fields only) */
    bool submits;                   /* the action submits a form */
    const char *href;               /* a plain link the element is or sits in (an a or
                                       area with an href, the element no form control):
                                       the absolute URL it follows; "" or NULL: none.
                                       On an authenticated origin a click on a link to
                                       a granted http(s) origin is a read (docs/gate.md,
                                       "Reads on authenticated origins") */
    bool download;                  /* that link has a download attribute */
    const char *const *names;       /* every name source of the element (its
                                       aria-label, aria-labelledby text, labels,
                                       title, alt, its text, the alt/title/aria-
                                       label of images and icons inside it):
                                       any consequential one makes the action
                                       consequential; shown to the human */
    size_t nnames;
    const char *via_role;           /* the action named another node that acts on
                                       this element (a text in its label, a span
                                       inside it): that node's role and name, */
    const char *via_name;           /* shown "(via text "...")"; NULL: none */
    const char *dialog_text;        /* the dialog it is in (a dialog, alertdialog,
                                       aria-modal, a fixed overlay or "modal"
                                       box): its name, description and text,
                                       whole; a generic button ("OK", "Yes") is
                                       judged by it, as by its row */
    const char *input_mode;         /* a field's inputmode attribute, lower case */
    int max_length;                 /* a field's maxlength; 0: none */
} gate_target;

/* A recipient candidate the page holds in the form (or compose area) of a
 * consequential action, read back by the caller just before the action
 * (docs/gate.md, "Recipients"): a field's value with what names the field
 * (the gate decides whether it takes a recipient, as for a target), or an
 * address found beside the fields on an element that is no field (a
 * "chip" or token: in an attribute or its text), which is checked as a
 * recipient whatever names it. All borrowed; never a credential field's
 * value (the caller leaves those out). */
typedef struct {
    bool chip;                      /* an address beside the fields */
    const char *field;              /* name, id, placeholder, aria-label */
    const char *label;              /* as gate_target.label */
    const char *name;               /* its accessible name as the page gives it */
    const char *input_type;         /* <input type>, lower case */
    const char *autocomplete;       /* autocomplete attribute */
    const char *value;              /* the value (an option's label or value, the
                                       text of a contenteditable, the address of
                                       a chip) */
    const char *input_mode;         /* its inputmode attribute, lower case ("decimal"):
                                       with a currency beside it, an amount the
                                       prompt shows */
} gate_present;

typedef struct {
    const char *tool;               /* a gate_tool_names() name, or "download": a
                                       file the page downloads in an action, which
                                       the grant governs by egress file_transfer
                                       and the file scopes (file: where it goes) */
    const char *origin;             /* page origin; for open: the target's */
    const char *url;                /* redacted URL (audit only) */
    bool authenticated;             /* the context holds a vault/login session
                                       for origin (never: "has cookies"), or the
                                       tab's context holds one for another
                                       origin (service): judged as on it */
    const char *service;            /* the service origin whose session the tab's
                                       browser context holds (for open: the
                                       target's, when open restores or reuses
                                       its session); NULL: none. A URL the action
                                       goes to there (open's URL, a link's href,
                                       a GET form's action) has its words read
                                       (gate_classify_url) */
    bool state_change;              /* the tool changes page state (click,
                                       type, select, press, dialog accept,
                                       upload, eval); read tools are false */
    const gate_target *target;      /* NULL for page-level actions */
    const char *dialog;             /* dialog accept: the dialog's message */
    const char *dialog_origin;      /* and the origin of the frame whose script
                                       opened it ("" not http(s), NULL unknown):
                                       shown to the human */
    const char *recipient;          /* a recipient being entered (an address, or
                                       a payee as text); the gate also finds
                                       the ones given to a recipient field
                                       through text, options or an option */
    const char *file;               /* a file being uploaded/downloaded */
    bool page_download;             /* download: the page started it while an
                                       action ran, and it is not the file the
                                       action's target implies (its link, its
                                       navigation, its form's response): the
                                       page's, confirmed every time (S10) */
    const char *file_given;         /* the path as the agent wrote it: refusals
                                       name it, never file (its real path, which
                                       would read symlinks back); NULL: file */
    const char *script;             /* eval: the JavaScript to run, shown to the
                                       human who confirms in full (model text);
                                       longer than GATE_SCRIPT_SHOWN: refused */
    const char *text;               /* type: the text to type (model text), shown
                                       to the human who confirms and checked as a
                                       recipient in a recipient field; never
                                       audited, never quoted for a secret field */
    bool text_withheld;             /* type: the caller left text out (a field that
                                       looks secret): the courier rule refuses it */
    const char *key;                /* press: the key (shown) */
    bool dbl;                       /* click: a double click (two clicks on the
                                       element): judged as the tool click, shown
                                       to the human and audited as the action
                                       "dblclick" */
    const char *const *options;     /* select: the options chosen (shown; checked
                                       as recipients in a recipient field) */
    size_t noptions;
    const char *const *chosen;      /* select: the options the values pick, read
                                       from the page before the gate (page text:
                                       label, text, aria-label, title): classified
                                       as a control's name, checked as recipients
                                       in a recipient field, shown to the human */
    const char *const *chosen_values; /* and their values (page text; NULL: none) */
    size_t nchosen;
    const gate_present *present;    /* recipients the form of a consequential
                                       action holds (read back by the caller);
                                       each one a recipient field takes, and
                                       every chip for a send, must be granted */
    size_t npresent;
    bool present_cut;               /* the form held more than the caller could
                                       read back: a consequential action is
                                       refused (fail closed) */
    unsigned egress;                /* egress classes the action needs */
    uint64_t epoch;                 /* epoch the caller stamped; 0 = current */
    const char *obs;                /* observation id relied on (audit) */
} gate_request;

typedef struct {
    int decision;                   /* GATE_ALLOW ... GATE_STALE */
    int cls;                        /* GATE_CLASS_* */
    int conseq;                     /* GATE_CONSEQ_* */
    char reason[512];               /* for the agent and the audit log: what
                                       was missing or why; never a secret */
    char target[256];               /* target summary as audited */
    uint64_t seq;                   /* audit sequence number of this decision */
    bool pending;                   /* gate_check allowed a consequential or confirmed
                                       action: its outcome is owed (gate_outcome) */
    bool confirmed;                 /* the allow came from the confirmation hook (a
                                       human answered; that may have taken minutes):
                                       the caller checks the page did not change
                                       meanwhile before it sends anything */
    bool courier;                   /* confirmed because the task read a signed-in
                                       service and the action hands the agent's data
                                       to a page outside it (red team s11, S7) */
} gate_decision;

/* Classify without a gate (pure): the class from the tool, the target and
 * authenticated; *conseq the kind when consequential. why (may be NULL)
 * gets the words that decided it. */
int gate_classify(const gate_request *req, int *conseq, char *why, size_t cap);

/* The kind of consequential action a GET URL does by its words (path and
 * query, percent-decoded: "/account/close-account/confirm",
 * "/transfer/send?to=..", "?action=delete", "?op=close"), else
 * GATE_CONSEQ_NONE; why (may be NULL) gets the words. Verbs only: the
 * nouns of a listing page (orders, messages, payments) and the pages that
 * show a form (transfer, checkout) are not consequential to open. Verbs
 * after their noun ("/orders/123/cancel", "/invoice/5/pay") and joined to
 * a word ("deleteuser.php", "closeaccount") count too, and a query key
 * that names the act ("?cancel=1"): docs/gate.md, "The words of a URL". */
int gate_classify_url(const char *url, char *why, size_t cap);
/* As gate_classify_url, for a GET a page sends; statics (a request that is
 * no navigation: an image, a script, a style, a fetch(), a prefetch) also
 * leaves out the words of a static file's name (css js mjs png jpg jpeg
 * gif svg webp ico woff woff2 ttf otf map: "/icons/send.svg") when no query
 * follows, as of a ".html" page's; the directory words are read
 * ("/account/delete/x.png" is a delete). */
int gate_classify_get(const char *url, bool statics, char *why, size_t cap);
/* As gate_classify_get, with the class: GATE_CLASS_CONSEQUENTIAL (*conseq
 * the kind), GATE_CLASS_AUTH_CHANGE when the URL changes the account's
 * security without a consequential word (red team s17, R7-7: "/settings/
 * disable-2fa", "/change-email?email=..", "/add-payee?iban=..",
 * "/mail/forward-all", "/transfer-ownership", "/oauth/authorize?..&
 * allow=1": confirmed on the service, as a button doing it is), else
 * GATE_CLASS_READ. conseq and why may be NULL. */
int gate_classify_get_class(const char *url, bool statics, int *conseq, char *why, size_t cap);

/* The kind of consequential operation a field of a request's body names
 * (red team s14, R4-9): the value of an operation key (action, op, cmd,
 * do, operationName, _method, ... as a GET query's verbs are read) or a
 * GraphQL mutation under "query", by the words of gate_classify_url
 * (camelCase split: deleteAccount); else GATE_CONSEQ_NONE. why (may be
 * NULL) names the key and the words, never the value. */
int gate_classify_body_op(const char *key, const char *value, char *why, size_t cap);

/* ---- the gate ---- */

typedef struct gate gate;

/* The longest eval script (bytes): a confirmation shows the whole script,
 * so a longer one is refused (denied before the hook), never cut. */
#define GATE_SCRIPT_SHOWN 2000

/* The confirmation hook. p is the request as a JSON object: "message", the
 * text to show the human (gate_prompt_message below: cdpgate's verdict
 * first, then what the agent supplied, then the page's text after a
 * separator, everything page- or model-derived escaped with
 * gate_text_escape), and the same as fields: action, origin, url, service
 * (when the tab's browser context holds a session: its origin), target
 * {role, name, row} (escaped), class, kind, observation, epoch, reason,
 * task; for eval "script" (the whole script, escaped with GATE_ESC_LINES)
 * and "script_bytes"; for type "text", for press "key", for select
 * "options" and "chosen" (the options they pick, page text; escaped).
 * Never a secret. A host shows "message" as it is.
 * Return GATE_ALLOW or GATE_DENY (anything else is a deny); why (cap bytes)
 * may get the human's reason.
 *
 * The one upward call (docs/architecture.md): the hook runs inside the
 * caller of gate_check/gate_check_auth_request, which for snapshot/ is an
 * agent call still in progress, maybe half done (it has clicked, and a
 * request of the page waits at the browser for this answer). The hook may
 * take as long as the human takes, read the host's own input, change the
 * control mode (gate_set_mode: the epoch moves) and pump the browser
 * connection without waiting (cdp_pump). It must not call back into the
 * agent (any snap_* on it, snap_idle included), call gate_check,
 * gate_check_auth_request or gate_outcome on this gate, wait on the
 * connection (cdp_wait, cdp_call), or free the gate, the agent or the
 * browser. */
typedef int (*gate_confirm_fn)(void *ud, const char *prompt_json, char *why, size_t cap);

typedef struct {
    const char *audit;              /* audit path overriding the grant's */
    gate_confirm_fn confirm;        /* NULL: every confirm is a deny */
    void *confirm_ud;
    int64_t (*now)(void *ud);       /* unix seconds (tests); NULL = time() */
    void *now_ud;
} gate_opts;

/* g may be NULL (no grant: see above); it is copied. Opens the audit log
 * (append); outcomes left pending by a previous process with the same log
 * are read back (gate_unknown_outcomes). */
gate *gate_new(const gate_grant *g, const gate_opts *o, gate_err *err);
void gate_free(gate *gt);
void gate_set_confirm(gate *gt, gate_confirm_fn fn, void *ud);
/* The audit tap (evidence, issue 16): fn gets every audit line the gate
 * writes (decisions, mode changes, outcomes, page requests; no newline),
 * also when no audit log is open, after the line is written. The line
 * holds no secret value (see "Audit log" above). fn must not call back
 * into the gate. NULL fn: none. */
typedef void (*gate_tap_fn)(void *ud, const char *line, size_t len);
void gate_set_tap(gate *gt, gate_tap_fn fn, void *ud);
/* The grant in force (borrowed), NULL when none. */
const gate_grant *gate_grant_get(const gate *gt);

/* Decide without running the hook or writing the audit log. */
int gate_decide(gate *gt, const gate_request *req, gate_decision *d);
/* Decide, run the hook for a confirm, write the audit line. d->decision is
 * final: GATE_ALLOW or a refusal. Returns 0, or GATE_EIO when the audit line
 * could not be written (then the decision is a deny: fail closed). */
int gate_check(gate *gt, const gate_request *req, gate_decision *d);
/* After an allowed consequential or confirmed action: its outcome, audited
 * against d->seq. outcome: "done", "failed", "unknown". Until this is
 * written, the action is pending; a process that dies leaves it pending and
 * the next gate_new on the same audit log reports it as unknown. */
int gate_outcome(gate *gt, const gate_decision *d, const char *outcome, const char *detail);
/* Actions a previous process left without an outcome: a text (new, NULL when
 * none) listing them, one per line; each is also audited as "unknown". */
char *gate_unknown_outcomes(gate *gt);

/* Origin checks (no audit): the origin of a URL is granted. A URL that is
 * not http(s) is granted only for about:blank. */
bool gate_origin_allowed(const gate *gt, const char *origin);
bool gate_url_allowed(const gate *gt, const char *url);
bool gate_tool_allowed(const gate *gt, const char *tool);
/* The vault identity the grant names for a service origin (borrowed), NULL
 * when the grant names none (then no session may be restored for it). With
 * no grant: NULL for every origin. */
const char *gate_identity_for(const gate *gt, const char *origin);

/* A network request the page started (not an action): document requests
 * (top-level and frames) must go to a granted origin; requests that carry
 * data out (a method other than GET/HEAD, or a body) need the
 * approved_origin_fetch egress class and a granted origin. Audited when
 * refused, and every one while the human has control (then judged all the
 * same: this call knows no context, so it is never the person's own; see
 * gate_net.human). Returns GATE_ALLOW or GATE_DENY; reason (cap) says
 * why. */
int gate_check_request(gate *gt, const char *method, const char *url, bool document,
                       bool has_body, uint64_t epoch, char *reason, size_t cap);

/* The same with everything the sink knows of the request (all borrowed).
 * data: it carries data whatever its method (CSP and Reporting API
 * reports, WebSockets, pings). subresource: a read-only load (image,
 * style, font, script, media, text track, manifest). privileged: it comes
 * from a privileged context (one holding a service's session): there it
 * must go to a granted origin, or be a GET/HEAD subresource without a body
 * from an asset origin of the grant, whatever its type (a GET with data in
 * its URL included). Elsewhere the rules of gate_check_request apply.
 * type (the browser's resource type) is written on the audit line. */
typedef struct {
    const char *method;             /* NULL: GET */
    const char *url;
    const char *type;               /* "Image", "WebSocket", ... (audit); may be NULL */
    const char *shown;              /* the URL as the audit line shows it (session
                                       values scrubbed, a host outside the grant
                                       cut to its last labels); NULL: url */
    const char *shown_origin;       /* its origin as a refusal's reason names it
                                       (NULL: url's origin) */
    bool document;
    bool has_body;
    bool data;
    bool subresource;
    bool privileged;
    bool human;                     /* the person's own, while the human has control:
                                       a request of their sign-in's context or of the
                                       privileged context of the tab they took over
                                       (never the agent's untrusted context's: red
                                       team s15, R5-5). Only such a request is let
                                       through unjudged (audited); any other is judged
                                       then by the privileged context's rule (granted
                                       origins only, asset origins for subresources),
                                       what the person types never leaving for an
                                       origin outside the grant */
    uint64_t epoch;
} gate_net;
int gate_check_net(gate *gt, const gate_net *n, char *reason, size_t cap);
/* Audit a request that was refused elsewhere (the browser blocked it under
 * the policy the sink set; the reason says so). GATE_EIO when the line
 * could not be written. */
int gate_note_request(gate *gt, const gate_net *n, const char *reason);
/* Audit an action refused before it reached the gate's decision (open of a
 * javascript:, file: or view-source: URL): a decision line with decision
 * deny, class read. url is shown as given (pass it redacted). */
int gate_note_refusal(gate *gt, const char *tool, const char *url, const char *reason);
/* The same for what the grant's standing rules decided outside a gate
 * check (a download: saved into a file scope under file_transfer, or
 * blocked): decision allow or deny (GATE_ALLOW/GATE_DENY), class read. */
int gate_note_decided(gate *gt, const char *tool, const char *url, int decision,
                      const char *reason);
/* Whether origin is an asset origin of the grant (no grant: false). */
bool gate_asset_allowed(const gate *gt, const char *origin);

/* ---- text shown to a human ---- */

enum {
    GATE_ESC_LINES = 1 << 0,        /* keep line breaks as line breaks (scripts):
                                       '\n' stays, tabs stay; '\r', U+2028 and
                                       U+2029 (JavaScript line ends too) are shown
                                       escaped and followed by a line break */
};

/* Escape len bytes of s (page or model text) for a human-facing prompt, so
 * that it cannot pass for cdpgate's own words or hide what it says: '"' and
 * '\' get a backslash; newline, tab and CR become \n \t \r; other C0/C1
 * controls and DEL, bidi controls (U+061C, U+200E/F, U+202A-202E,
 * U+2066-2069), line/paragraph separators (U+2028/2029), zero-width and
 * other invisible characters (U+00AD, U+034F, U+115F/1160, U+17B4/5,
 * U+180B-180F, U+200B-200D, U+2060-206F, U+3164, U+FE00-FE0F, U+FEFF,
 * U+FFA0, U+FFF0-FFFB, U+E0000-E0FFF) are shown as \uXXXX (\u{XXXXX});
 * invalid UTF-8 bytes as \xNN. Writes at most cap-1 bytes and a NUL,
 * cut only between whole characters or escapes; returns the length the
 * whole escape needs (like snprintf: a result >= cap means it was cut). */
size_t gate_text_escape(char *out, size_t cap, const char *s, size_t len, unsigned flags);

/* The characters never shown raw, to a human or to the model: the one list
 * (gate_text_escape's "shown as \uXXXX" set above: C1 controls, bidi
 * controls, U+2028/2029, zero-width and other invisible characters, tags),
 * used by gate_text_escape and by snapshot/ for every page-derived text and
 * structured string the model reads. For the character at s (n bytes left):
 * when it must be shown escaped, writes its escape ("\u202e", "\u{e0041}",
 * or "\xNN" for a byte that starts no valid UTF-8 sequence) NUL-terminated
 * into esc (GATE_CHAR_ESC_MAX bytes) and returns the escape's length; else
 * returns 0. Either way *used is the bytes of s the character takes (1 for
 * an invalid byte, 0 when n is 0). ASCII is never escaped here: callers
 * treat quotes and C0 controls their own way. */
#define GATE_CHAR_ESC_MAX 16
size_t gate_char_escape(char *esc, const char *s, size_t n, size_t *used);

/* How cdpgate reads a character when it matches words, the one fold that
 * the gate's classifier (its phrases: gate_classify) and snapshot/'s
 * query matcher share, so that what the model finds as "delete account"
 * the gate reads as "delete account" too. For the character at s (n bytes
 * left), *used set to the bytes it takes (as gate_char_escape): returns
 * GATE_FOLD_DROP when it reads as nothing (every character of the list
 * above that is not white space: the soft hyphen, zero-width and joiner
 * characters, bidi and other format controls, variation selectors,
 * invisible fillers, tags, C1 controls), ' ' when it reads as a space
 * (white space beyond ASCII: U+0085, U+00A0, U+1680, U+2000-200A,
 * U+2028, U+2029, U+202F, U+205F, U+3000), the ASCII character a
 * full-width form stands for (U+FF01-FF5E), else 0: it reads as it is
 * (ASCII among them: callers fold ASCII their own way). */
#define GATE_FOLD_DROP (-1)
int gate_char_fold(const char *s, size_t n, size_t *used);

/* The human-facing text of a confirmation (new, free(); NULL when out of
 * memory): the verdict line first (what will happen, the class, the
 * origin, "Allow it once?"), then what the agent supplied (the text to
 * type, the key, the options, the file, the whole script with numbered
 * lines), then the page's own text (element name, row, dialog message,
 * the focused element, the URL) between separator lines that label it as
 * page text; all of it escaped with gate_text_escape. d is the decision
 * being confirmed. */
char *gate_prompt_message(const gate *gt, const gate_request *req, const gate_decision *d);

/* A data-carrying request (a method other than GET/HEAD, or a body) that a
 * page of an authenticated browser context is about to send, paused by the
 * driver: whatever started it (a click, a key, a hover, a scroll, a timer).
 * The human is shown its method, URL, body field names and the values of
 * its recipients and amounts (never another value). */
typedef struct {
    const char *method;             /* "POST", "DELETE", ... */
    const char *url;                /* the request URL, secrets redacted */
    const char *origin;             /* the authenticated service origin of the
                                       context that sends it */
    const char *fields;             /* body field names, ", "-separated (never
                                       values); NULL or "": none or unknown */
    const char *values;             /* the recipients and amounts it sends, as
                                       'name="value"', ", "-separated, session
                                       values scrubbed (gate_sent_field_shown:
                                       never a secret-named field); NULL or "":
                                       none */
    const char *resource;           /* the browser's resource type: "Fetch",
                                       "XHR", "Document", "Ping", ... */
    bool document;                  /* a navigation (form post) */
    bool get;                       /* a GET or HEAD that carries no data, of any
                                       resource type (an image, a fetch(), a
                                       prefetch): judged by its URL's words
                                       (gate_classify_get, statics unless its
                                       resource is "Document"), else a read */
    int covered;                    /* -1: no confirmed action in progress on its
                                       tab; else that action's GATE_CLASS_* (the
                                       human confirmed it a moment ago) */
    bool shown_url;                 /* its URL is the one the human was shown for
                                       that action (a link's href, the form's
                                       action), or it is a redirect hop of a
                                       request the cover let through: only then
                                       does a consequential GET pass the cover */
    bool shown_other;               /* a request that carries data, and not a
                                       POST to the POST form the action showed
                                       the human (it submits it or is in it):
                                       to another address, a redirect hop (a
                                       307 sends the body on), after a link or
                                       a GET form (they send none); or the
                                       action showed no address (a plain
                                       button) and this is a form the page
                                       submits: not covered (red team s19,
                                       s20: R9-1) */
    uint64_t epoch;                 /* the control epoch the page sent it under
                                       (0: now); another than the current one:
                                       stale, refused (a request is never judged
                                       under another control than its own) */
    bool human;                     /* while the human has control: sent from the
                                       context of the tab the person took over
                                       (theirs: allowed); any other tab's is
                                       refused then, never asked (R5-5) */
} gate_auth_request;

/* Decide (no hook, no audit) what such a request needs, and check it:
 * consequential by its own evidence (the DELETE method, or form-action path
 * words of the consequential kinds: docs/gate.md) -> stop, unless a
 * confirmed consequential action (a bound rule) is in progress on its tab;
 * covered by a confirmed action in progress on its tab -> allow; else
 * confirm. While the human has control: allow (theirs; gate_check_auth_request
 * audits it too); paused: deny.
 * gate_check_auth_request also runs the hook for a confirm and audits the
 * decision (action "request"); d->decision is final (allow or a refusal),
 * and never pending (the page, not the agent, owes the outcome). Returns
 * 0, or GATE_EIO when the audit line could not be written (then a deny). */
int gate_decide_auth_request(gate *gt, const gate_auth_request *q, gate_decision *d);
/* How long (ms) a confirmed action's answer still covers the data-carrying
 * requests of its tab after the action settled (its result was built): a
 * POST the confirmed click started may reach the driver a moment later;
 * past this, a request is judged on its own (asked, or refused), however
 * long the agent stays idle (docs/gate.md, "Reads on authenticated
 * origins", rule 4). The caller keeps the clock (gate_auth_request.covered). */
#define GATE_COVER_MS 3000
int gate_check_auth_request(gate *gt, const gate_auth_request *q, gate_decision *d);

/* Whether the human asked about a page's request is shown the value of
 * its field name (decoded) (red team s14, R4-13 residual): a recipient (an
 * address in the value, or a field named To, Cc, payee, IBAN, ...) or an
 * amount (amount, price, total, fee, ...), never a field whose name says
 * it is a secret (url_secret_name, strict: password, token, PIN, code, key,
 * ...). Shown values are what the request carries, so they are what a yes
 * sends (the request waits at the browser, its body fixed). */
bool gate_sent_field_shown(const char *name, const char *value);

/* One field (name, value decoded) of a data-carrying request a page sends
 * while a confirmed action covers its tab (sink.c reads the body and the
 * query the browser really sends; red team s13 P1-P3): shown is what the
 * human was shown of the action's form (its read-back, gate_present; none
 * for an action with no form read back). A field the human was shown must
 * carry a value they saw; any other field's recipient (an address in any
 * field, any value of a field named To, Cc, payee, IBAN, ...) must be in
 * the grant's recipients. Returns 0, or -1 with why (cap; it names the
 * field, and an address refused, never another value). No audit. */
int gate_check_sent_field(const gate *gt, const char *name, const char *value,
                          const gate_present *shown, size_t nshown, char *why, size_t cap);

/* ---- control epochs ---- */

enum { GATE_MODE_AGENT, GATE_MODE_HUMAN, GATE_MODE_PAUSED };
const char *gate_mode_name(int mode);   /* "agent", "human", "paused" */
int gate_mode(const gate *gt);
uint64_t gate_epoch(const gate *gt);
/* Give control to the human (takeover), pause, or return it to the agent
 * (release); each change bumps the epoch and is audited with who asked. After
 * a release, state changes are refused as stale until gate_observed. */
uint64_t gate_set_mode(gate *gt, int mode, const char *who);
/* The agent took a fresh observation at the current epoch. */
void gate_observed(gate *gt);

/* The agent asks to hand control to a person (browser_takeover; issue 11,
 * point 15b(a)). While the human has control the requests of the
 * person's own context are not judged (gate_check_net allows and audits
 * each one; the agent's untrusted context stays judged: gate_net.human),
 * so a person must really be at the browser: the hook is asked "a person takes over the
 * browser now?" (prompt action "takeover", "text" the agent's words
 * escaped), and only its allow gives control to the human (gate_set_mode,
 * the epoch moves). Refused without asking when no_window (a browser
 * with no window for a person: cdpgate launched it headless and the host
 * did not say it shows the page another way, --takeover-headless), when
 * control is paused or the grant expired; with no hook, refused (fail
 * closed); a change of control while asked makes it stale. With the human
 * already: allowed, nothing asked. After the person's yes and before
 * control passes, settle (when set) is called: the host reads every
 * request the page sent so far and answers it under the agent's rules (the
 * question may have taken seconds, the page's timers went on); its failure
 * or a change of control meanwhile refuses the takeover (fail closed). The
 * decision is audited (action and class "takeover"). Returns 0, or
 * GATE_EIO when the audit line could not be written (then a deny). The
 * host's own control channel is the human already: it calls gate_set_mode. */
typedef struct {
    const char *said;               /* the agent's words (model text; shown escaped) */
    bool no_window;                 /* no window a person could use */
    int (*settle)(void *ud);        /* 0, or nonzero when it could not (NULL: none) */
    void *settle_ud;
} gate_takeover_req;
int gate_takeover(gate *gt, const gate_takeover_req *t, gate_decision *d);

/* What the gate stopped last (a GATE_STOP: an action or a page's request
 * the human completes; or a consequential action denied), for the person
 * a takeover asks (red team s17,
 * R7-10): "KIND TARGET on ORIGIN" (e.g. 'send button "Send" on
 * https://bank.test'), the target's page text escaped and quoted as the
 * audit has it, into out (cap bytes); "" when nothing was stopped since
 * control last changed hands (the epoch). Returns strlen(out). */
size_t gate_last_stop(const gate *gt, char *out, size_t cap);

/* An access to the live view (issue 15; live/live.h) in the audit log:
 * {"event":"live", task, epoch, mode, "decision":"allow"|"deny", "reason":
 * what}. what is the live view's static account of the decision (a token
 * traded, refused and why, a page served); the caller never passes a token,
 * a cookie or anything the person typed. 0, or GATE_EIO. */
int gate_audit_live(gate *gt, bool allowed, const char *what);

/* ---- v1 exclusions ---- */

/* Threats named and not enforced in v1 (NULL-terminated, each "name: why"). */
const char *const *gate_exclusions(void);

#endif
