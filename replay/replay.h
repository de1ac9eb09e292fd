/*
 * replay.h — record and replay (issue 14): the trail a task leaves, and
 * (later sections) the recorder and the replayer.
 *
 * A trail is JSON Lines (docs/replay.md): a header line, then one step per
 * line. The header says which format version it is, when and by which
 * cdpgate it was recorded, and what a replay needs from the grant
 * (origins, identities, tools, egress classes, consequential operations).
 * A step holds the operation and its arguments (typed text may be a
 * parameter "{{name}}"), the semantic target it acted on (never a ref or
 * coordinates alone), the state it started from, the effect observed, and
 * for browser_read the name of the output it produced. Steps are
 * versioned: a healed step is a new revision of the same step number, the
 * old revision kept in the file before it (replay runs the last one).
 *
 * Secrets: a trail never holds one. A value typed into a secret field is
 * not recorded (the step says so, `secret`), a vault login or a takeover
 * is recorded by identity, never as keystrokes. The types here carry what
 * the recorder gives them; keeping secrets out is the recorder's rule.
 *
 * Ownership: a replay_trail owns every string and array reachable from it
 * (replay_trail_free). Step structs passed in (replay_trail_add) are
 * copied; the caller keeps its own. Callers read the trail's fields and
 * change it only through the functions below.
 *
 * The parser (replay_trail_parse) does no I/O and treats its input as
 * untrusted: explicit limits (REPLAY_MAX_*), strict fields (an unknown or
 * duplicate key, a wrong type, a string over its limit is an error), and
 * every error names the line: "trail line N: why". A last line with no
 * newline that is not JSON is a torn write: it is dropped with a warning
 * (replay_trail.warning), so a torn file is never unreadable.
 * replay_trail_save writes the file all or nothing, mode 0600.
 */
#ifndef CDPGATE_REPLAY_H
#define CDPGATE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "json/json.h"
#include "snapshot/snapshot.h"

/* ---- errors ---- */

enum {
    REPLAY_OK = 0,
    REPLAY_ENOMEM = -1,   /* allocation failed */
    REPLAY_EPARSE = -2,   /* a line is not a valid trail line */
    REPLAY_ELIMIT = -3,   /* a size or count limit was exceeded */
    REPLAY_EIO = -4,      /* reading or writing the file failed */
    REPLAY_EVERSION = -5, /* a trail format this cdpgate does not know */
    REPLAY_EARG = -6,     /* a caller's argument is invalid */
};

/* Filled on failure; msg never holds a secret (a trail has none). */
typedef struct {
    int code;             /* REPLAY_E*, or REPLAY_OK */
    unsigned line;        /* 1-based trail line, 0 when not about a line */
    char msg[256];        /* "trail line N: why" */
} replay_err;

const char *replay_strerror(int code);

/* ---- limits (untrusted input) ---- */

#define REPLAY_TRAIL_VERSION 1
#define REPLAY_MAX_TRAIL  ((size_t)16 << 20) /* bytes of a trail file */
#define REPLAY_MAX_LINE   ((size_t)256 << 10) /* bytes of one line */
#define REPLAY_MAX_STEPS  10000u             /* lines after the header */
#define REPLAY_MAX_STR    4096u              /* bytes of one string field */
#define REPLAY_MAX_ARGS   ((size_t)64 << 10) /* bytes of a step's args object */
#define REPLAY_MAX_LIST   256u               /* entries of one list */
#define REPLAY_MAX_DEPTH  16u                /* JSON nesting of a line */

/* ---- the trail key (replay/key.c; session 21) ----
 *
 * A target's hidden identifier (an IBAN, a Stripe id, a UUID, an API key:
 * replay_text_hide_ids) is written "{{*k:" and 16 hex digits of its
 * HMAC-SHA-256 under the user's trail key "}}", so one who holds a trail
 * but not the key cannot find an identifier of little entropy (an IBAN at
 * a known bank) by hashing candidates. The key never goes into a trail:
 * the header keeps its id (HMAC-SHA-256 of a label no word can spell,
 * its first 8 bytes in hex), so a replay under another key says so and
 * matches none of those identifiers (docs/replay.md "hidden word"). */
#define REPLAY_KEY_LEN 32
#define REPLAY_KEY_ID_HEX 16
typedef struct {
    unsigned char k[REPLAY_KEY_LEN];
    char id[REPLAY_KEY_ID_HEX + 1];    /* "" until loaded */
} replay_key;
/* The trail key into *k from file; NULL: $CDPGATE_TRAIL_KEY when set,
 * else "trail-key" in the vault's directory (vault_key_file). A file of
 * this user, mode 0600, 32 bytes; made when missing and create (O_EXCL,
 * 0600, random; the recorder's first need), else REPLAY_EIO ("no trail
 * key"). 0 or REPLAY_E* with err (never the key). */
int replay_key_load(const char *file, bool create, replay_key *k, replay_err *err);
/* k from 32 bytes of key (tests, fuzz targets). */
void replay_key_set(replay_key *k, const unsigned char raw[REPLAY_KEY_LEN]);
void replay_key_wipe(replay_key *k);

/* ---- the trail ---- */

/* A list of strings (owned by the trail). */
typedef struct {
    char **v;
    size_t n;
} replay_list;

/* One identity a trail needs: the service origin and its vault label. */
typedef struct {
    char *origin, *label;
} replay_identity;

/* A consequential operation the trail performs: the grant's `bound` rule
 * that would pre-approve it (docs/gate.md) has these four fields. */
typedef struct {
    char *origin, *tool, *name, *row;  /* row may be NULL */
} replay_bound;

/* The header line: what the trail is and what a replay needs. A parsed
 * trail's needs are the union of what its header declared and what its
 * steps imply (replay_trail_parse runs replay_trail_needs), so an edited
 * header cannot hide a need a step has. */
typedef struct {
    unsigned version;            /* REPLAY_TRAIL_VERSION */
    char *created;               /* RFC 3339 UTC, e.g. 2026-12-03T06:30:00Z */
    char *cdpgate;               /* the recording cdpgate's version */
    char *task;                  /* the grant's task, or NULL */
    bool by_agent;               /* "by":"agent": the model made it (browser_record
                                    in an MCP session); absent: the host or a person */
    bool agent_editable;         /* a person lets the model extend and heal it */
    char *trail_key;             /* the id of the trail key its hidden identifiers
                                    ({{*k:hex}}) were hashed under (REPLAY_KEY_ID_HEX
                                    hex digits; replay_key), never the key; NULL: none */
    replay_list origins;         /* exact origins the steps act on */
    replay_identity *identities; /* vault identities the steps use */
    size_t nidentities;
    replay_list tools;           /* gate tool names (docs/gate.md) */
    replay_list egress;          /* egress classes the steps needed */
    replay_bound *consequential; /* consequential operations */
    size_t nconsequential;
} replay_header;

/* What a step acted on, by meaning: replay re-finds it from a fresh
 * observation with these, never by ref or coordinates. Any field may be
 * NULL (not known); index 0 means unique or not known. */
typedef struct {
    char *role, *name;       /* accessible role and name */
    char *row;               /* row or list item context (its text) */
    char *section;           /* nearest heading or landmark name */
    unsigned index;          /* 1-based among its equals in document order
                                (the elements that pass every check of this
                                target), 0: unique or not known */
    unsigned equals;         /* how many equals there were when recorded (2
                                or more with an index; 0: not known) */
    replay_list frames;      /* frame origin chain, outermost first; empty:
                                the top document */
    char *id;                /* stable attributes: the element's id, */
    char *name_attr;         /* name="...", */
    char *label;             /* label text or aria-label, */
    char *placeholder;       /* placeholder, */
    char *testid;            /* data-testid / data-test / data-qa */
} replay_target;

/* The state a step started from. */
typedef struct {
    char *origin;            /* the tab's origin */
    char *url;               /* URL without volatile parameters */
    char *title;
    bool authenticated;      /* a restored or logged-in session on origin */
    char *identity;          /* its vault identity label, or NULL */
} replay_state;

/* What the step was seen to do, so replay can check outcomes. */
typedef struct {
    char *navigated;         /* URL (volatile parameters dropped), or NULL */
    char *new_tab;           /* a new tab's URL, or NULL */
    char *dialog;            /* "alert: text", "confirm: ...", or NULL */
    replay_list appeared;    /* text that appeared */
    char *value;             /* a field's value or a read's text as read
                                back (a parameter stays "{{name}}"; never
                                for a secret field) */
} replay_effect;

/* One step (one line). `op` is the tool without "browser_": open, click,
 * type, select, press, scroll, back, tabs, dialog, hover, upload, login,
 * takeover, read. */
typedef struct {
    unsigned n;              /* step number, from 1 */
    unsigned rev;            /* revision, from 1; a healed step is rev + 1 */
    bool superseded;         /* a later revision of n follows (parser sets it) */
    char *op;
    char *args;              /* the arguments as one JSON object ("{}") */
    char *cls;               /* the gate's class: read, interact,
                                auth_change, consequential, credential */
    replay_list egress;      /* egress classes the gate saw */
    bool has_target;
    replay_target target;
    replay_state state;
    replay_effect effect;
    char *output;            /* browser_read: the output's name */
    bool secret;             /* typed into a secret field: no value kept */
    char *note;              /* for a person: "secret field, value not
                                recorded", "identity X, session restored" */
    bool by_agent;           /* "by":"agent": the model wrote it into a trail it
                                did not make (an agent-editable one, or a heal):
                                an unattended replay needs --accept-agent-steps */
} replay_step;

typedef struct {
    replay_header h;
    replay_step *steps;      /* file order; every revision */
    size_t nsteps, cap;
    char warning[256];       /* "" or e.g. the torn last line dropped */
} replay_trail;

/* A new empty trail (version set, created now in UTC, cdpgate = version,
 * task may be NULL). NULL when out of memory. */
replay_trail *replay_trail_new(const char *cdpgate_version, const char *task);
void replay_trail_free(replay_trail *t);

/* Parse a trail (untrusted; no I/O). New trail, or NULL with *err filled
 * (err may be NULL). Blank lines are skipped; a torn last line is dropped
 * with t->warning set. The header's needs are folded with the steps'. */
replay_trail *replay_trail_parse(const char *buf, size_t len, replay_err *err);

/* The trail as JSON Lines (new, NUL-terminated; free with free()), the
 * header as it is (call replay_trail_needs after adding steps). 0 or
 * REPLAY_E*. */
int replay_trail_serialize(const replay_trail *t, char **out, size_t *len, replay_err *err);

/* Append a copy of *s as step "last n + 1", revision 1 (s->n, s->rev and
 * s->superseded are ignored). 0 or REPLAY_E*. */
int replay_trail_add(replay_trail *t, const replay_step *s, replay_err *err);

/* Heal step n: a copy of *s becomes its next revision, placed after its
 * last one; the old revisions stay (superseded). 0 or REPLAY_E*
 * (REPLAY_EARG when no step n exists). */
int replay_trail_heal(replay_trail *t, unsigned n, const replay_step *s, replay_err *err);

/* Fold what the steps imply into the header's needs (origins of states
 * and opened URLs, identities, tools, egress, consequential steps). */
int replay_trail_needs(replay_trail *t, replay_err *err);

/* Free the strings and arrays a step struct owns (the trail's own steps
 * are freed by replay_trail_free; this is for a caller's filled struct). */
void replay_step_clear(replay_step *s);

/* Read and parse a trail file (at most REPLAY_MAX_TRAIL bytes). */
replay_trail *replay_trail_load(const char *path, replay_err *err);

/* Write the trail to path all or nothing (temporary file, fsync, rename,
 * fsync of the directory), mode 0600. 0 or REPLAY_E*. */
int replay_trail_save(const replay_trail *t, const char *path, replay_err *err);

/* ---- replaying: re-finding a step's target (replay/match.c) ----
 *
 * Owned by replayplay (issue 14, points 4-5). A step's target is re-found
 * in a fresh observation of the tab (snap_elements, snapshot/snapshot.h):
 * the ONE element that passes every check (role, name folded for case and
 * whitespace, row context when recorded, frame, each recorded stable
 * attribute), the heading above breaking a tie, then the recorded index
 * among equals only when exactly as many equals pass as were recorded (a
 * look-alike added or removed: ambiguous). Anything else is a divergence
 * with the closest candidates and why each was rejected (docs/replay.md,
 * "Re-finding a target"). */

enum { REPLAY_FOUND = 0, REPLAY_MISSING = 1, REPLAY_AMBIGUOUS = 2 };
/* In a target's row: any one number stands here (an amount that may
 * change: the recorder writes it for one; a person may write it). Digits
 * anywhere else in a row must be equal (red team s14, R4-8). */
#define REPLAY_ROW_NUMBER "{{#}}"
/* At the end of a target's row: the recorder cut the row here (after its
 * first 120 UTF-16 units); the page's row may go on. In the "{{" space,
 * which page text never reaches (recorded text writes "{{" as "{{{{"). */
#define REPLAY_ROW_CUT_MARK "{{\xe2\x80\xa6}}"
/* In recorded page text (effect.appeared, effect.value, effect.dialog, a
 * target's name, row, section, label, placeholder, the title): a word the
 * recorder hid, shaped like a secret (a new API token, a recovery code, a
 * reset link the page showed; red team s16 R6-5, s17 R7-6/R7-8); replay
 * reads it as one word (or group) the recorder would hide there, never
 * any word. In the "{{" space too. */
#define REPLAY_TEXT_HIDDEN "{{*}}"
/* In recorded page text: the rest of a sentence the recorder hid, after a
 * word naming a secret that gives it ("Temporary password: ...", "Your
 * recovery phrase: ...", "The door code is ...": red team s18, R8-4): a
 * secret of any shape (symbols, plain words). Replay reads it as one or
 * more words, any. */
#define REPLAY_TEXT_REST "{{**}}"
/* A row as the recorder writes it into a target (new; NULL for NULL or out
 * of memory): each amount (a number after or before a currency sign or
 * code: "$20.00", "20.00 EUR") written REPLAY_ROW_NUMBER; any other number
 * kept, so it must be equal at replay ("Invoice 2023.11"; red team s15,
 * R5-3) (record.c). */
char *replay_row_mark(const char *row);
/* Does a recorded row want match the page's row got? Equal once case
 * (ASCII) and whitespace runs are folded, digits compared, any one number
 * at a REPLAY_ROW_NUMBER, a secret-shaped word at a REPLAY_TEXT_HIDDEN,
 * a literal "{{" written "{{{{" in want, a word whose hash is a hidden
 * identifier's (its HMAC under key at a "{{*k:hex}}": key NULL matches
 * none; its SHA-256 at an older "{{*:hex}}"). A row
 * that ends in REPLAY_ROW_CUT_MARK matches a page row that starts with
 * what was kept and goes on; any other row must be the page's whole row
 * (red team s15, R5-3: never "starts with" for a row that was not cut)
 * (match.c). */
bool replay_row_eq(const char *want, const char *got, const replay_key *key);
#define REPLAY_CANDS_MAX 5

typedef struct {
    size_t elem;                 /* index into the snap_elems matched */
    char why[200];               /* the check it failed (page text quoted, cut) */
} replay_cand;

typedef struct {
    int verdict;                 /* REPLAY_FOUND, REPLAY_MISSING, REPLAY_AMBIGUOUS */
    char ref[16];                /* FOUND: the element's ref, to act on */
    size_t elem;                 /* FOUND: its index in the snap_elems */
    size_t nlike;                /* AMBIGUOUS: how many passed every check;
                                    FOUND by index: how many equals */
    bool by_index;               /* FOUND among equals by the recorded index
                                    (their count as recorded) */
    replay_cand cand[REPLAY_CANDS_MAX]; /* the closest rejected (AMBIGUOUS: the
                                    look-alikes first), best first */
    size_t ncand;
} replay_match;

/* Read the current tab's elements into *s (the caller frees it with
 * snap_elements_free, also on failure), the stable attributes of those
 * sharing the target's role or name when it recorded any, and match
 * (key: the trail key its hidden identifiers are compared under, or
 * NULL: none matches, replay_row_eq). 0
 * (m says what was found), or the snapshot's SNAP_E* code with r filled. */
int replay_find(struct snap_agent *a, const replay_target *t, const replay_key *key,
                snap_elems *s, replay_match *m, snap_result *r);
/* The match as a JSON object: verdict ("found", "missing", "ambiguous"),
 * expected (the target: role, name, row, section, index, frames, id,
 * name_attr, label, placeholder, testid; those it has), ref when found,
 * candidates, each {ref, page}: page its role, name, row, section, frame
 * and why as lines "role: button", framed in a's page-content markers
 * (snap_json_page_framed). Page text, untrusted. */
void replay_match_json(json_w *w, const replay_target *t, const snap_elems *s,
                       const replay_match *m, const snap_agent *a);

/* ---- the recorder (record.c; issue 14, points 1-3) ----
 *
 * One recorder per trail file. Each action that passed the gate and
 * succeeded is appended as a step and the file saved at once (all or
 * nothing, 0600). What a step may never hold: a text typed into a field
 * that is or was secret (or whose target the gate's chokepoint did not
 * read: fail closed), a login's keystrokes (a login or takeover is
 * recorded by identity: replay_rec_identity), a parameter's value (a text
 * recorded as a parameter is written "{{name}}", its read-back too). */

typedef struct replay_rec replay_rec;

/* An action as the host called it (strings borrowed for the call). */
typedef struct {
    const char *op;              /* the tool without browser_ */
    const char *url;             /* open */
    bool new_tab;
    const char *text;            /* type, dialog's prompt answer */
    bool submit;
    const char *param;           /* type: record the text as {{param}} */
    const char *const *values;   /* select */
    size_t nvalues;
    const char *key;             /* press */
    const char *direction;       /* scroll */
    bool forward;                /* back */
    bool dbl;                    /* click: a double click */
    bool has_accept, accept;     /* dialog */
    const char *action, *tab;    /* tabs */
    const char *query;           /* read: a text query instead of a ref */
    const char *output;          /* read: the output's name */
    const char *value;           /* read: the text read (page text) */
    const snap_agent *agent;     /* the agent acted through (may be NULL): the
                                    secrets it knows (session values, secret
                                    fields' values) are hidden in the page text
                                    a step keeps (snap_text_secret) */
} replay_act;

/* url with the recorder's bearer rule applied: url_redact(url,
 * URL_REDACT_TOKENS, NULL) (url/url.h, the one rule; new; NULL when out of
 * memory): secret-named parameters, and path segments, query values and a
 * fragment shaped like bearer secrets are written "[redacted]". The
 * evidence recorder (cli/evid.c) shows URLs through it too. */
char *replay_url_scrub(const char *url);

/* Record into path: an existing trail there is continued (each CLI
 * command adds its step), a missing one is created now (the header
 * alone), a file that is not a trail is refused and left alone. New
 * recorder, or NULL with *err. */
replay_rec *replay_rec_open(const char *path, const char *version, const char *task,
                            replay_err *err);
/* replay_rec_open for a recording of the model's (red team s14, R4-4):
 * flags REPLAY_REC_AGENT: a new trail is made "by":"agent"; an existing
 * one is continued only when this session made it (REPLAY_REC_OWN, and its
 * header says by agent) or a person marked it "agent_editable" (then each
 * step the recorder writes says "by":"agent"); any other is refused
 * (REPLAY_EARG) and left alone. REPLAY_REC_EXISTING: a missing trail is an
 * error, not made (a heal). flags 0: replay_rec_open. */
enum { REPLAY_REC_AGENT = 1, REPLAY_REC_OWN = 2, REPLAY_REC_EXISTING = 4 };
replay_rec *replay_rec_open_as(const char *path, const char *version, const char *task,
                               unsigned flags, replay_err *err);
/* The step number whose output is named name (an active step; not the one
 * being healed), 0: none. replay_rec_action refuses a second output of
 * the same name (REPLAY_EARG): a trail's outputs have names of their own. */
unsigned replay_rec_output_step(const replay_rec *r, const char *name);
/* Close (the file is already saved after each step). NULL is a no-op. */
void replay_rec_close(replay_rec *r);
const char *replay_rec_path(const replay_rec *r);
/* The trail as recorded so far (borrowed). */
const replay_trail *replay_rec_trail(const replay_rec *r);
/* Name a parameter: a typed text equal to value is recorded as {{name}}
 * (the value is kept in memory only, wiped on close). Names: 1-64 of
 * [A-Za-z0-9_-]. */
int replay_rec_param(replay_rec *r, const char *name, const char *value, replay_err *err);
/* On: every typed text becomes a parameter, named after the field's name
 * attribute or id (else text1, text2, ...). */
void replay_rec_param_typed(replay_rec *r, bool on);
/* The trail key: the recorder loads it (replay_key_load(NULL, true):
 * $CDPGATE_TRAIL_KEY, which --trail-key sets, else the default; made when
 * missing) at its first step with a target, and writes its id into the
 * header with the first identifier it hides. A trail whose header names
 * another key is not continued (replay_rec_action: REPLAY_EARG, its
 * identifiers could not be compared); a key that cannot be loaded fails
 * the step (REPLAY_EIO: nothing is written, never an unkeyed hash). */
/* Before an action on ref (an element of the current tab): look at the
 * tab's elements as replay will (replay_find), so the step the next
 * replay_rec_action appends records its target's index among equals and
 * their count. Only a look: it acts on nothing. 0, or the snapshot's
 * SNAP_E* code (the step is then recorded without an index). */
int replay_rec_look(replay_rec *r, snap_agent *a, const char *ref);
/* Append the step of an action that passed the gate and succeeded: f is
 * what the gate's chokepoint read before it (snap_step_last; NULL: not
 * known, then no typed text is recorded), structured the action's result
 * object (its effect). 0 or REPLAY_E* (the step is not on disk then). */
int replay_rec_action(replay_rec *r, const replay_act *act, const snap_step_facts *f,
                      const char *structured, replay_err *err);
/* The next step this recorder appends (replay_rec_action,
 * replay_rec_identity) heals step n instead (replay_trail_heal: its next
 * revision, the old ones kept): the agent's substitute for a step that
 * diverged (--update). 0, or REPLAY_EARG when the trail has no step n. */
int replay_rec_heal(replay_rec *r, unsigned n, replay_err *err);
/* Append a login or takeover step: "identity X, session restored" or
 * "identity X, human logged in" (human), never what was typed. */
int replay_rec_identity(replay_rec *r, const char *op, const char *origin,
                        const char *identity, bool human, replay_err *err);

/* ---- replaying a trail (replay/play.c) ----
 *
 * replay_run plays t's active steps on agent a under gate g (the same
 * gate the agent asks: snap_opts.gate): first what the trail needs
 * against g's grant and every {{name}} against vars (anything missing:
 * REPLAY_RUN_REFUSED, nothing run); then each step re-found, acted on
 * through snap_* as a live action, its effect checked. *out is the result
 * as one JSON object (new; docs/replay.md "The result"): status, steps,
 * done, missing, outputs, and the divergence, stopped, unknown or error
 * member of the step that ended the run. Returns the status. */

enum {
    REPLAY_RUN_DONE = 0,         /* every step done, its effect as recorded */
    REPLAY_RUN_DIVERGED = 1,     /* the page changed: a step not done (or its
                                    effect not seen); the divergence says why */
    REPLAY_RUN_REFUSED = 2,      /* the grant or --var lacks what the trail needs */
    REPLAY_RUN_STOPPED = 3,      /* the gate refused or stopped a step */
    REPLAY_RUN_UNKNOWN = 4,      /* a step's outcome is unknown: not retried */
    REPLAY_RUN_FAILED = 5,       /* the browser failed, or a step cannot be read */
};

typedef struct {
    const char *const *vars;     /* "name=value": the parameters' values */
    size_t nvars;
    bool check_only;             /* the up-front check alone: no step runs, a is
                                    not used (may be NULL); status "ready" when
                                    nothing is missing (REPLAY_RUN_DONE) */
    unsigned from;               /* play from step number `from` on (0 or 1: from
                                    the first): the agent did a diverged step
                                    itself and the replay goes on after it, on
                                    the tab as it is; earlier steps are not
                                    played and give no output */
    bool dry_run;                /* the plan alone (plan.c): each step from
                                    `from` on with the gate's decision on what
                                    the trail recorded (gate_decide: no hook,
                                    no audit line); a is not used (may be NULL),
                                    nothing is opened or acted on; status
                                    "planned" (REPLAY_RUN_DONE) or "refused" */
    bool agent_steps;            /* play steps the model wrote ("by":"agent", or
                                    a trail made by the agent) without a person
                                    having adopted them: an attended replay
                                    (browser_replay) or --accept-agent-steps;
                                    false: such steps refuse the run up front
                                    (need "agent_steps") */
    const char *trail_key;       /* the trail key's file (--trail-key), NULL: the
                                    default (replay_key_load); read, never made,
                                    when the trail's header names a key */
} replay_opts;

/* Page text a trail keeps (effect.appeared, effect.value, effect.dialog,
 * a target's texts, the title; text.c; red team s16 R6-5, s17 R7-6/R7-8;
 * the recorder and replay use them). s (recorded text) with each word
 * shaped like a secret (a bearer token, a card number, a code near a word
 * naming a secret, a URL holding a token, a secret the agent a knows; a
 * may be NULL) written REPLAY_TEXT_HIDDEN, a group of words that is one
 * (a card in groups) as one (new; NULL for NULL or when out of memory). */
char *replay_text_hide(const char *s, const snap_agent *a);
/* A target's texts (record.c): as replay_text_hide, one hidden word shaped
 * like a token identifier (16+ characters with a letter, by its shape
 * alone: an IBAN, a Stripe id, a UUID, an API key) written "{{*k:" and 16
 * hex digits of its HMAC-SHA-256 under key "}}" (session 21; trails
 * written before keep "{{*:" and 16 or 8 hex digits of its plain
 * SHA-256, compared on those), which replay compares: the same identifier
 * matches, another does not (red team s18, R8-7). A code hidden for the
 * word naming it, a card number, a URL, a secret a knows stay
 * REPLAY_TEXT_HIDDEN (a hash would give a short one back). NULL for NULL,
 * out of memory, or no key (key NULL or not loaded: never unkeyed). */
char *replay_text_hide_ids(const char *s, const snap_agent *a, const replay_key *key);
/* Does recorded text want, its parameters filled from o, appear in got
 * (whole: equal to got), ASCII case and white space runs folded, each
 * REPLAY_TEXT_HIDDEN matching one word of got (or a group of up to six)
 * that replay_text_hide would hide near a word naming a secret (a the
 * agent replaying, may be NULL)? */
bool replay_text_match(const char *want, const char *got, const replay_opts *o, bool whole,
                       const snap_agent *a);

struct gate;
int replay_run(snap_agent *a, struct gate *g, const replay_trail *t, const replay_opts *o,
               char **out);

#endif
