/*
 * replay_int.h — what the files of replay/ share (no other module and no
 * test includes it).
 */
#ifndef CDPGATE_REPLAY_INT_H
#define CDPGATE_REPLAY_INT_H

#include "replay/replay.h"

#include "base/base.h"
#include "gate/gate.h"

/* Fill *err (NULL accepted) with code, line (0: not about a line) and a
 * printf-style message prefixed "trail line N: " or "trail: "; returns
 * code. */
int replay_fail(replay_err *err, int code, unsigned line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Parameters in a trail's strings (docs/replay.md, "Parameters"): in a
 * step's args, effect.appeared and effect.value, "{{name}}" (name: 1-64
 * of [A-Za-z0-9_-]) is a parameter the recorder wrote, and a literal "{{"
 * of recorded text is written "{{{{", so that no text typed or read can
 * spell a parameter (red team s14, R4-5). What is at p: REPLAY_PH_ESC
 * ("{{{{", a literal "{{": 4 bytes), REPLAY_PH_NAME ("{{name}}": the
 * name's length into *nlen), or REPLAY_PH_NONE (a literal character). */
enum { REPLAY_PH_NONE, REPLAY_PH_ESC, REPLAY_PH_NAME };
int replay_ph_at(const char *p, size_t *nlen);
/* s[0..n) as recorded text into b: every "{{" written "{{{{". */
void replay_lit_put(base_buf *b, const char *s, size_t n);
/* The same, new (NULL for NULL or when out of memory). */
char *replay_lit_dup(const char *s);

/* args with every {{name}} replaced by its value from o->vars, escaped for
 * a JSON string (new). NULL when out of memory or a name has no value:
 * then *missing points at it and *mlen is its length (play.c). */
char *replay_subst(const char *args, const replay_opts *o, const char **missing,
                   size_t *mlen);

/* The tab's elements as replay_find reads them for a target like the
 * element behind ref: the stable attributes of those sharing its role or
 * name read (match.c). 0 or SNAP_E*; free *s with snap_elements_free. */
int replay_look(snap_agent *a, const char *ref, snap_elems *s);
/* The index (1-based, document order) of the element behind ref among the
 * elements of s that pass every check of t (match_elems's, the heading's
 * tie-break included) into *index, and their count into *count; both 0
 * when ref's element is not one of them. */
void replay_equals(const replay_target *t, const replay_key *key, const snap_elems *s,
                   const char *ref, unsigned *index, unsigned *count);

/* A target's row is cut at REPLAY_ROW_CUT UTF-16 units, REPLAY_ROW_CUT_MARK
 * written after it; what is kept is at most REPLAY_ROW_CUT_MAX bytes with
 * its NUL. */
#define REPLAY_ROW_CUT 120u
#define REPLAY_ROW_CUT_MAX (4u * REPLAY_ROW_CUT + 8u)
/* row as the recorder cuts it (whitespace runs one space, the ends
 * trimmed, its first REPLAY_ROW_CUT UTF-16 units, a word the cut splits
 * dropped: no part of a secret is kept) into out (cap bytes,
 * at least REPLAY_ROW_CUT_MAX): true when row is longer than that (it
 * was cut), false (out unspecified) when not (match.c). */
bool replay_row_cut(const char *row, char *out, size_t cap);

/* The trail's rule for secret-shaped page text (text.c): s with its
 * secret-shaped words hidden as replay_text_hide does, read from its
 * start as after a word naming a secret when primed (a read whose query
 * says "recovery codes"); whether a word of s names a secret ("code",
 * "token", "PIN", ...); whether s[0..n) (one word, or a group of up to
 * six words: a card number "4111 1111 1111 1111") is one the recorder
 * hides after such a word, as replay matches REPLAY_TEXT_HIDDEN (the
 * punctuation around it off; a the agent replaying, may be NULL). */
char *replay_text_hide_kw(const char *s, const snap_agent *a, bool primed);
bool replay_text_names_secret(const char *s);
bool replay_text_unit_secret(const char *s, size_t n, const snap_agent *a);
/* The hash replay_text_hide_ids writes: REPLAY_ID_HEX hex digits (64
 * bits: session 20; 32 before, forgeable: a page could make an id of its
 * choice whose 32 bits are a known payee's), the start of a word's
 * HMAC-SHA-256 under the trail key (replay_id_hmac, key.c: session 21;
 * a plain SHA-256 before, replay_id_hash: an identifier of little
 * entropy was found from it by hashing candidates). Whether p starts a
 * hidden word (its length; REPLAY_TEXT_HIDDEN: id "", "{{*k:hex}}": id
 * its REPLAY_ID_HEX digits and *keyed true, "{{*:hex}}" of a trail
 * written before: id its REPLAY_ID_HEX or REPLAY_ID_OLD_HEX digits, *keyed
 * false), else 0. keyed may be NULL. */
#define REPLAY_ID_HEX 16
#define REPLAY_ID_OLD_HEX 8
#define REPLAY_ID_KEYED "{{*k:"
size_t replay_hidden_at(const char *p, char id[REPLAY_ID_HEX + 1], bool *keyed);
void replay_id_hash(const char *w, size_t n, char id[REPLAY_ID_HEX + 1]);
void replay_id_hmac(const replay_key *key, const char *w, size_t n, char id[REPLAY_ID_HEX + 1]);

/* The name of the output step s produces into buf (cap bytes): a read
 * step's args.name (what replay keys the output by), else its "output"
 * field; NULL when it produces none (trail.c). */
const char *replay_step_output(const replay_step *s, char *buf, size_t cap);

/* The --var value of the parameter name[0..n) in o (borrowed), NULL when
 * none (play.c). */
const char *replay_var(const replay_opts *o, const char *name, size_t n);

/* A recorded text with each {{name}} o gives a value written as it (new;
 * a name without one kept as written); "{{{{" as "{{", or kept when
 * keep_esc (a row, for replay_row_eq). NULL: out of memory (play.c). */
char *replay_fill(const char *s, const replay_opts *o, bool keep_esc);

/* Does the grant's bound rule x pre-approve a consequential step of the
 * trail (origin, tool, its target's name and row as recorded: {{name}}
 * filled from o, the row matched as replay_row_eq matches)? A rule with a
 * row must still hold at the live row (gate.c find_bound) (play.c). */
bool replay_bound_eq(const gate_bound *x, const char *origin, const char *tool,
                     const char *name, const char *row, const replay_opts *o,
                     const replay_key *key);
struct gate;
/* The "plan" member of a dry run: each active step from o->from on with
 * the gate's decision on what the trail recorded (plan.c). */
void replay_plan(struct gate *g, const replay_trail *t, const replay_opts *o,
                 const replay_key *key, json_w *w);

#endif
