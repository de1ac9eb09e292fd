/*
 * gate_int.h — what the files of the gate module share and no other module
 * includes: the gate object, origin/path/recipient normalisation, grant
 * packing, the audit log's internals and small text helpers.
 *
 * Files: origin.c (URLs, origins, patterns, recipients, paths), grant.c
 * (grant JSON, validation and packing into one allocation), classify.c (the
 * classifier: its phrase tables, an action's target), urlread.c (the words
 * of a GET URL and of a request's path, the query's act keys), urlact.c
 * (the acts a URL's path names noun first or joined), audit.c (the audit
 * log), gate.c (the gate object and its decisions), takeover.c (the
 * agent's request to hand over to a person).
 */
#ifndef CDPGATE_GATE_INT_H
#define CDPGATE_GATE_INT_H

#include "gate/gate.h"
#include "json/json.h"

#include <sys/types.h>

/* Longest origin the gate handles ("https://" + 253-byte host + ":65535"). */
#define GATE_ORIGIN_MAX 272u
/* Longest audit/diagnostic rendering of a URL or other page-derived text. */
#define GATE_AUDIT_URL_MAX 1024u
/* Pending outcomes kept from a previous process (more are counted only). */
#define GATE_PENDING_MAX 4096u
/* Bytes of an existing audit log read at gate_new (the tail beyond that). */
#define GATE_AUDIT_SCAN_MAX ((off_t)64 << 20)

/* One decision a previous process left without an outcome. */
typedef struct {
    uint64_t seq;
    char *text;                 /* "outcome unknown: ..." (new) */
} gate_pending;

struct gate {
    gate_grant *grant;          /* packed copy (grant.c), NULL: no grant */
    gate_confirm_fn confirm;
    void *confirm_ud;
    int64_t (*now)(void *ud);
    void *now_ud;
    int mode;                   /* GATE_MODE_* */
    uint64_t epoch;             /* starts at 1; 0 in a request means "current" */
    bool need_fresh;            /* control came back: state changes wait for
                                   gate_observed */
    int fd;                     /* audit log, -1 when none */
    gate_tap_fn tap;            /* gate_set_tap (evidence), NULL: none */
    void *tap_ud;
    uint64_t seq;               /* largest audit seq known */
    off_t known_end;            /* log size after our last write or read */
    gate_pending *pend;
    size_t npend, cappend;
    size_t pend_dropped;        /* pending beyond GATE_PENDING_MAX */
    char tainted[GATE_ORIGIN_MAX];  /* the first signed-in origin the task
                                       touched ("": none yet; courier.c) */
    char last_stop[480];        /* the last stop (takeover.c; "": none) */
    uint64_t last_stop_epoch;   /* the epoch it was decided in */
};

/* ---- gate.c ---- */

/* Write the audit line of decision d on req; when it cannot be written the
 * decision becomes a deny (fail closed). 0, or the audit log's error. */
int gate_audit_decision(gate *gt, const gate_request *req, gate_decision *d, bool pending);
/* Set d's decision and its reason (printf-style, cleaned as audit text
 * is: gate_text_clean, then copied with gate_text_copy, so the reason
 * holds no character gate_char_escape shows escaped). Page text inside
 * quotes is passed in already escaped (gate_text_quote). Returns 0.
 * takeover.c decides with it too. */
int gate_verdict(gate_decision *d, int decision, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* What a question to the human shows of the agent's data, whole
 * (prompt.c cuts longer values with "… cut"; courier.c refuses data it
 * could not show: red team s13, C4). */
#define GATE_SHOWN_MAX 1000         /* bytes of a text, address or file name */
#define GATE_SHOWN_OPTIONS 20       /* options listed */
#define GATE_SHOWN_OPTION 200       /* bytes of one option */

/* ---- takeover.c ---- */

/* A decision being audited: a GATE_STOP, or a consequential action
 * denied, is kept as the last stop (gate_last_stop). */
void gate_stop_note(gate *gt, const gate_request *req, const gate_decision *d);

/* ---- courier.c (red team s11, S7) ---- */

/* After gate_check's decision: an allowed action on a signed-in origin (or
 * in a tab of a service's context) taints the task, for good. */
void gate_courier_note(gate *gt, const gate_request *req, const gate_decision *d);
/* The task is tainted and req hands model-chosen data (text, a typing key,
 * a file, an address with a path/query/fragment) to a page outside every
 * session: d becomes a confirmation (d->courier), true. */
bool gate_courier(const gate *gt, const gate_request *req, const char *origin,
                  gate_decision *d);

/* ---- origin.c ---- */

enum { ORIGIN_LENIENT = 0, ORIGIN_STRICT = 1 };

/* The origin of an http(s) URL, normalised by url/url.h (url_parse):
 * "scheme://host[:port]" with scheme and host lower case, IPv4 dotted,
 * IPv6 compressed, the default port dropped, userinfo dropped; a host
 * written with percent-encoding is refused.
 * ORIGIN_STRICT: the text must be an origin (no userinfo, no path but an
 * optional lone "/", no query or fragment). out gets at most
 * GATE_ORIGIN_MAX bytes with its NUL. Returns 0, else -1 with *why a
 * static text ("not an http or https URL", ...). */
int gate_origin_parse(const char *s, char *out, size_t cap, int strict, const char **why);
/* A grant origin entry: an exact origin or "*.suffix", normalised into out.
 * Returns 0 or -1 with *why. */
int gate_origin_entry(const char *s, char *out, size_t cap, const char **why);
/* The normalised origin matches the normalised entry (exact or pattern). */
bool gate_origin_match(const char *entry, const char *origin);
/* A recipient entry "user@domain" or "*@domain" (pattern allowed) or an
 * address (pattern refused), domain lower-cased into out. */
int gate_recipient_norm(const char *s, bool pattern, char *out, size_t cap, const char **why);
bool gate_recipient_match(const char *entry, const char *addr);
/* Lexical normalisation of an absolute path: "//" and "." dropped, trailing
 * slashes dropped (but "/"), ".." refused (dotdot false) or resolved
 * lexically (dotdot true). Returns 0 or -1 with *why. */
int gate_path_norm(const char *s, bool dotdot, char *out, size_t cap, const char **why);
/* path (normalised) is scope or lies below it. */
bool gate_path_inside(const char *scope, const char *path);

/* ---- grant.c ---- */

/* Validate src (borrowed strings, possibly not normalised) and pack a
 * normalised copy into one allocation (*out, free with gate_grant_free).
 * Errors name the field. */
int gate_grant_pack(const gate_grant *src, gate_grant **out, gate_err *err);
/* tool is one of gate_tool_names(). */
bool gate_tool_known(const char *tool);

/* ---- classify.c ---- */

/* The tool changes page state whatever the caller says (click, type,
 * select, press, upload, eval), or the caller says so. */
bool gate_is_state_change(const gate_request *req);
/* The action as shown and audited: the tool, or "dblclick" for a double
 * click (a click with dbl). */
const char *gate_action_name(const gate_request *req);
/* A data-carrying request's own evidence: GATE_CONSEQ_DELETE for the
 * DELETE method, else the kind its URL path's words name (the form-action
 * path table), else GATE_CONSEQ_NONE; why (may be NULL) gets the words. */
int gate_classify_request(const char *method, const char *url, char *why, size_t cap);

/* The CONSEQ phrase (its rows marked URL) the words of s name, s read as a
 * GET URL's words are (camelCase split, the masked phrases masked, read
 * whole): its kind, *phrase the phrase; else GATE_CONSEQ_NONE, *phrase
 * NULL. */
int gate_phrase_url(const char *s, const char **phrase);
/* The same for the form-action path table (a POST form's action, a
 * request's path). */
int gate_phrase_path(const char *path, const char **phrase);
/* The classifier's reason: printf-style fmt with three strings, b and c
 * page text (quoted with gate_text_quote), cleaned (gate_text_clean). */
void gate_why(char *why, size_t cap, const char *fmt, const char *a, const char *b,
              const char *c);

/* ---- urlread.c ---- */

/* The path of a URL as the browser sends it (url/url.h: dot segments
 * resolved), on the heap (free it); a URL the parser refuses is read
 * whole (more words, never fewer). NULL: out of memory. */
char *gate_url_path_dup(const char *url);
/* The entry of list (n entries) that [v + b, v + l) is, whole, ASCII case
 * folded; NULL when none. */
const char *gate_word_of(const char *v, size_t b, size_t l, const char *const *list,
                         size_t n);
/* key is an operation key (action, op, do, cmd, ...: the keys a query's
 * act value is read under). */
bool gate_op_key(const char *key);
/* [v + b, v + l) is one of the one-word act values (close, cancel,
 * confirm, approve, execute, trash): that word, else NULL. */
const char *gate_op_value(const char *v, size_t b, size_t l);

/* ---- urlact.c ---- */

/* The kind of act the path (the first path_len bytes of url, percent-
 * decoded) names in the shapes classify.c's phrases do not read (red team
 * s16, R6-9): noun first ("/orders/123/cancel", "/invoice/5/pay", the
 * noun looked for in all of url, path and query) or joined ("deleteuser",
 * "closeaccount"); else GATE_CONSEQ_NONE. what (may be NULL) gets the
 * word that decided (at most 64 bytes of it). O(strlen(url)). */
int gate_url_act(const char *url, size_t path_len, char *what, size_t cap);
/* url (path and query, percent-decoded) names an act noun (order, account,
 * subscription, payment, ...: what a query key's act acts on). */
bool gate_url_noun(const char *url);
/* url names a thing an account-security act acts on (2fa, email, payee,
 * key, owner, oauth, client, role, ...; red team s17, R7-7). */
bool gate_url_sec_noun(const char *url);
/* The path (the first path_len bytes of url, percent-decoded) names an
 * account-security act (red team s17, R7-7): a segment of a verb that
 * changes who signs in, who gets the mail or money, who owns or
 * administers ("disable-2fa", "forward-all", "transfer-ownership", or
 * with data, the query carrying a value: "change-email", "add-payee",
 * "add-ssh-key"), the URL naming what it acts on. what gets the verb. */
bool gate_url_account(const char *url, size_t path_len, bool data, char *what, size_t cap);

/* ---- audit.c ---- */

/* Open (create) the log at path and read back the largest seq and the
 * pending outcomes. */
int gate_audit_open(gate *gt, const char *path, gate_err *err);
void gate_audit_close(gate *gt);
/* Write one line (w holds the object, without the newline) under the log
 * lock; *seq gets the new sequence number, which the caller's build
 * callback must put in the line: the line is built by build(gt, w, seq, ud)
 * after the seq is known. sync: fsync after the write. Without a log the
 * seq is still assigned. Returns 0, GATE_EIO or GATE_ENOMEM. */
typedef void (*gate_line_fn)(gate *gt, json_w *w, uint64_t seq, void *ud);
int gate_audit_line(gate *gt, gate_line_fn build, void *ud, bool sync, uint64_t *seq);
/* RFC 3339 UTC ("2026-12-01T00:00:00Z") of t into out (>= 32 bytes). */
void gate_time_format(int64_t t, char *out, size_t cap);
/* Parse RFC 3339 ("Z" or a +hh:mm offset, optional fraction) to unix
 * seconds. Returns 0 or -1. */
int gate_time_parse(const char *s, int64_t *out);
int64_t gate_now(const gate *gt);

/* ---- text helpers (audit.c) ---- */

/* Copy at most max bytes of s into out (cap), cut on a UTF-8 boundary;
 * invalid UTF-8 bytes and control characters become '?', and what
 * gate_char_escape never shows raw (C1, bidi, invisible, tags) is written
 * as its escape (\u202e, \u{e0041}; never cut in half). Quotes are kept:
 * page text inside quotes goes through gate_text_quote. NULL -> "". */
void gate_text_copy(char *out, size_t cap, const char *s, size_t max);
/* Whether s names an amount (amount, price, total, sum, cost, fee, ...:
 * whole words, camelCase split; prompt.c). */
bool gate_amount_name(const char *s);
/* The confirmation request for a paused request of an authenticated
 * context (new, free(); NULL when out of memory): the same keys as
 * gate_prompt_json's, the target a "request" named by its method and URL,
 * and the method, the body's field names, the values of its recipients
 * and amounts and the resource type besides. */
char *gate_request_prompt(const gate *gt, const gate_auth_request *q, const gate_decision *d);
/* In place: the same cleaning for a buffer snprintf may have cut. */
void gate_text_clean(char *s);
/* Write s as a JSON string, cleaned and cut to max bytes (NULL -> null). */
void gate_w_text(json_w *w, const char *key, const char *s, size_t max);

/* ---- recipient.c ---- */

enum {
    GATE_RFIELD_NONE,
    GATE_RFIELD_ADDRESS,        /* "Fly to", "Ship to": a value with an '@' is checked */
    GATE_RFIELD_PAYEE,          /* recipient, payee, beneficiary, IBAN: any value */
    GATE_RFIELD_TO,             /* To, Cc, Bcc (named by those words alone, or an
                                   email field): any value; one without '@' (a
                                   contact name the page resolves) must be a
                                   grant entry */
};
/* The i-th value the request gives a recipient field (the text typed, an
 * option chosen, an option clicked), NULL when none; *kind the field's
 * GATE_RFIELD_*. The caller skips credential fields. */
const char *gate_recipient_value(const gate_request *req, size_t i, int *kind);
/* v against the grant's recipients (see recipient.c) as given to a field of
 * kind (GATE_RFIELD_NONE: given as a recipient, so it must be an address
 * list): 0 when allowed (no grant: always), else -1 with why (cap). */
int gate_recipient_check(const gate_grant *g, const char *v, int kind, char *why, size_t cap);
/* The recipients read back from the form of a consequential action
 * (req->present): 0 when every one a recipient field holds, and for a send
 * (conseq GATE_CONSEQ_SEND) every chip, is granted (no grant: always), else
 * -1 with why (cap) naming what was found where. */
int gate_recipient_present(const gate_grant *g, const gate_request *req, int conseq, char *why,
                           size_t cap);
/* Whether req->present[i] names a recipient as gate_recipient_present
 * judges it (a recipient field's value; for a send, a chip too): the
 * prompt lists those, so the human sees who a send goes to. */
bool gate_recipient_read_back(const gate_request *req, size_t i, int conseq);

/* ---- prompt.c ---- */

/* At most max bytes of s escaped with gate_text_escape into out (cap),
 * "…" appended when cut (by max or by cap). NULL -> "". */
void gate_text_quote(char *out, size_t cap, const char *s, size_t max);
/* The hook's JSON request (new, free(); NULL when out of memory): the
 * message of gate_prompt_message and the fields of gate.h's hook. */
char *gate_prompt_json(const gate *gt, const gate_request *req, const gate_decision *d);
/* A confirmation request's JSON object, as both kinds write it (the
 * action's above, a paused request's in gate.c): begin inits w and opens
 * the object with its "message" (msg: new, freed here); end closes it and
 * returns the text (new, free()), or NULL on a writer error; w is freed. */
void gate_prompt_begin(json_w *w, char *msg);
char *gate_prompt_end(json_w *w);

#endif
