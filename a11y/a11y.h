/*
 * a11y.h — accessibility scans with axe-core (issue 16, points 1 and 2;
 * docs/a11y.md).
 *
 * axe-core is not part of cdpgate: a11y_axe_load reads the file the user
 * installed (--axe FILE, the environment variable CDPGATE_AXE, or a
 * well-known install path); when there is none, its error says exactly how
 * to get one. a11y_scan runs it in every frame of the agent's current tab
 * (snap_axe_run, snapshot.h: isolated worlds, the page's CSP and scripts
 * do not matter, timeouts leave rules "not evaluated") and makes:
 *   - the summary the model reads: counts by impact, the top rules with
 *     their WCAG success criteria, each element as a snapshot ref (so the
 *     agent can look at it or act on it). No page text: selectors and HTML
 *     snippets stay in the files;
 *   - the files (when a directory is given): STEM.json, axe's results as
 *     axe produced them plus "notEvaluated", and STEM.html, a self-contained
 *     report (no network) grouped by WCAG success criterion, with a
 *     screenshot crop of each violation (the screenshot path's secret-field
 *     rules apply: a crop of a secret field is refused, and said).
 * Field values never reach a file: every value attribute of an input
 * (buttons and boxes aside) and every textarea's text in axe's html
 * snippets is replaced by "[scrubbed]" (a11y_results_scrub). Nor do session
 * values: every string of the results and of the not-evaluated list (an
 * element's html, its target selector, a message) is passed through
 * snap_text_shown before the files (and the evidence's copies) are made,
 * so a cookie or storage value the agent restored from the vault or
 * captured from a login is "[session-value]" in STEM.json and STEM.html.
 *
 * One scan is one call on one tab, so a sweep over many targets (issue 16,
 * point 4) calls it once per target's session.
 */
#ifndef CDPGATE_A11Y_H
#define CDPGATE_A11Y_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot/snapshot.h"

#define A11Y_AXE_MAX ((size_t)8 << 20)     /* axe-core's file: at most 8 MiB */
#define A11Y_RESULTS_MAX ((size_t)64 << 20) /* axe's results read: at most 64 MiB */
#define A11Y_TAGS_DEFAULT "wcag2a,wcag2aa,wcag21aa,wcag22aa"
#define A11Y_SELECTORS_MAX 32              /* include/exclude selectors each */

/* axe-core as read (a11y_axe_load). */
typedef struct {
    char *src;                      /* the file's text (new; a11y_axe_free) */
    size_t len;
    char path[600];                 /* the file read */
    char sha256[65];                /* its SHA-256, lower-case hex */
    char release[16];               /* the published axe-core release it is byte
                                       for byte ("4.14.1"); "" when none */
    const char *from;               /* "--axe", "CDPGATE_AXE" or "found" */
} a11y_axe;

/* Find and read axe-core: path when given (only it), else $CDPGATE_AXE,
 * else the first well-known path that exists (docs/a11y.md lists them:
 * ./node_modules/axe-core/axe.min.js, then the global install paths). Red
 * team s16, R6-7 (docs/a11y.md "Which axe-core runs"): the file must be
 * owned by this user or root and writable by no one else (group and
 * others); a file the search found must also be byte for byte one of the
 * published axe-core releases a11y/axe_known.c lists (its SHA-256): a
 * file planted in the working directory (by a model that writes files) is
 * refused, never run. A file named by --axe or CDPGATE_AXE is the host's
 * own choice: any content, its digest and release (or none) said in the
 * summary and the reports. 0 with *out, or -1 with why: what was tried
 * and what to do (`npm install axe-core`, then --axe or CDPGATE_AXE). A
 * file over A11Y_AXE_MAX or empty is refused. */
int a11y_axe_load(const char *path, a11y_axe *out, char *why, size_t cap);
void a11y_axe_free(a11y_axe *ax);
/* The published axe-core release whose axe.min.js has this SHA-256 (32
 * bytes), or NULL. */
const char *a11y_axe_release(const unsigned char digest[32]);
#define A11Y_AXE_NEWEST "4.14.1"     /* the newest release a11y/axe_known.c lists */

typedef struct {
    const char *tags;               /* comma-separated; NULL = A11Y_TAGS_DEFAULT */
    const char *const *include;     /* CSS selectors (borrowed) */
    size_t ninclude;
    const char *const *exclude;
    size_t nexclude;
    int frame_ms, cap_ms;           /* 0: snap_axe_opts' defaults */
    const char *dir;                /* the report files go here; NULL: none */
    const char *stem;               /* their name: STEM.json, STEM.html; NULL "a11y" */
    size_t top;                     /* rules in the summary; 0 = 10 */
    size_t crops;                   /* screenshot crops in the HTML; 0 = 40 */
    bool keep;                      /* the files' contents in the report too (evidence) */
    bool files_by_name;             /* the summary names the files without their
                                       directory (the model needs no host path) */
    const a11y_axe *axe;            /* the file the source came from (its digest and
                                       release in the summary and the files); NULL:
                                       not said */
} a11y_opts;

typedef struct {
    char *text;                     /* the summary for the model (new) */
    char *structured;               /* the same as JSON (new) */
    size_t violations, elements;    /* violated rules, their elements */
    size_t review;                  /* rules that need review */
    size_t not_evaluated;           /* distinct rules not evaluated somewhere */
    double axe_ms;                  /* the scan in the page alone (snap_axe_run) */
    double refs_ms, crops_ms;       /* the refs found, the crops taken (CDPGATE_TIMING) */
    double files_ms;                /* scrub, the reports made and written */
    /* With a11y_opts.keep (with or without dir): what STEM.json and
     * STEM.html hold (new; NULL otherwise). */
    char *json, *html;
    size_t json_len, html_len;
    char *url;                      /* the page's URL as axe read it (new; NULL unknown) */
} a11y_report;

/* Check tags ("wcag2a,wcag2aa": letters, digits, '-', '.', '_') into a JSON
 * array (new); 0, or -1 with why. */
int a11y_tags_json(const char *tags, char **out, char *why, size_t cap);
/* Scan the agent's current tab (a reader's tool: the gate sees
 * "a11y_scan"). axe's source src[0..len) is borrowed. 0 with *out (free
 * with a11y_report_free), or a SNAP_E* code with r saying why. */
int a11y_scan(snap_agent *a, const char *src, size_t len, const a11y_opts *o,
              a11y_report *out, snap_result *r);
void a11y_report_free(a11y_report *rep);

/* ---- the pieces, on axe's results as text (page data: bounded, any
 * input is safe; tests/fuzz/fuzz_a11y.c) ---- */

/* axe's results with every field value out of the html snippets (new
 * JSON text), or NULL when json is not a JSON object or is over
 * A11Y_RESULTS_MAX. */
char *a11y_results_scrub(const char *json, size_t len);
/* A string as it may be written (new), or NULL (out of memory: the string
 * is then written "[scrubbed]"). a11y_scan passes snap_text_shown: the
 * session values out of every string. */
typedef char *(*a11y_text_fn)(void *ud, const char *s);
/* a11y_results_scrub, and every string (keys too) also passed through fn
 * (NULL: none) after the field values are out. */
char *a11y_results_scrub_with(const char *json, size_t len, a11y_text_fn fn, void *ud);
/* Any JSON text (an array too: snap_axe_skipped's) with every string
 * passed through fn (new), or NULL when it is not JSON or is over
 * A11Y_RESULTS_MAX. */
char *a11y_json_scrub(const char *json, size_t len, a11y_text_fn fn, void *ud);
/* An html snippet with its field values replaced (new). */
char *a11y_html_scrub(const char *html);
/* The WCAG success criterion an axe tag names ("wcag1410" -> "1.4.10")
 * into out; false when it names none. */
bool a11y_wcag_sc(const char *tag, char *out, size_t cap);

/* One element's screenshot crop for the HTML report (borrowed). */
typedef struct {
    const unsigned char *png;       /* PNG or JPEG bytes; NULL: none */
    size_t len;
    const char *note;               /* why there is none ("a secret field") */
    bool cut;                       /* larger than the window: its top left part */
} a11y_crop;
/* crop(ud, rule_index, node_index): the crop of violation rule i's node k,
 * or NULL. */
typedef const a11y_crop *(*a11y_crop_fn)(void *ud, size_t rule, size_t node);
/* The self-contained HTML report of scrubbed results (new), or NULL when
 * they do not parse. skipped: snap_axe_skipped's JSON (may be NULL). */
char *a11y_html_report(const char *results, const char *skipped, a11y_crop_fn crop,
                       void *ud);

/* ---- a sweep over many targets (issue 16, point 4; a11y/sweep.c,
 * cli/sweep.c runs it; docs/a11y.md "A sweep") ----
 *
 * The TARGETS file is JSON Lines: one object a line, blank lines and
 * lines starting with '#' skipped, fields (strict: an unknown or repeated
 * field is an error naming the line) "url" (http(s), required), "id" (the
 * target's directory name: letters, digits, '.', '_', '-', a letter or
 * digit first; default "tNNN", its position), "identity" (a vault
 * identity: the grant must name it for the URL's origin), "trail" (a
 * replay trail played after the URL is opened, to reach the page under
 * test; a relative path is relative to the TARGETS file). Untrusted input:
 * the limits below; tests/fuzz/fuzz_sweep.c. */
#define A11Y_SWEEP_FILE_MAX ((size_t)1 << 20)     /* bytes of a TARGETS file */
#define A11Y_SWEEP_LINE_MAX ((size_t)16 << 10)    /* bytes of one line */
#define A11Y_SWEEP_TARGETS_MAX 1000u
#define A11Y_SWEEP_STR_MAX 2048u                  /* bytes of a URL */
#define A11Y_SWEEP_ID_MAX 64u

typedef struct {
    char *id, *url;             /* id: set (the default when not given) */
    char *identity, *trail;     /* NULL: none */
    unsigned line;              /* its line in the file */
} a11y_target;

typedef struct {
    a11y_target *v;             /* owned: a11y_targets_free */
    size_t n;
} a11y_targets;

/* Parse a TARGETS file's text (no I/O). 0 with *out (at least one
 * target), or -1 with why ("targets line N: why") and *out empty. */
int a11y_targets_parse(const char *buf, size_t len, a11y_targets *out, char *why, size_t cap);
void a11y_targets_free(a11y_targets *t);

/* One target's row of the sweep's index (strings borrowed). */
typedef struct {
    const char *id, *url, *identity, *trail;
    const char *state;          /* "done", "partial" (a report, some rules not
                                   evaluated: a timeout), "failed", "pending" */
    const char *reason;         /* partial, failed: why; else NULL */
    double seconds;             /* its last run; 0 when not run */
    const char *results;        /* its a11y.json text (page data), NULL: none */
    size_t results_len;
} a11y_sweep_row;

/* The index across targets: *json (index.json: counts by state, the
 * violations' elements by impact, needs review, the top rules across
 * targets, and each row with its own counts read from its results) and
 * *html (index.html: self-contained, a table across targets, every text
 * escaped), both new. 0, or -1 (out of memory). */
int a11y_sweep_index(const a11y_sweep_row *rows, size_t n, char **json, char **html);

#endif
