/*
 * observe_int.h — internals shared by the observe_*.c files only. They are
 * the observation: a compact text projection of a tab's
 * accessibility tree (all frames, shadow roots pierced) with element refs,
 * bounded by a character budget and paged; and the page text, paged by
 * characters.
 *
 * Sources, all fetched in one pipelined batch (cdp_send for every command,
 * then cdp_wait for every reply: one round trip of latency):
 *   - Accessibility.getFullAXTree {frameId} per frame, on the session that
 *     owns the frame's document (the tab's for same-process frames, the
 *     iframe target's for out-of-process ones). Roles, accessible names,
 *     values and states as the browser computes them; closed shadow roots
 *     included; aria-hidden, display:none and visibility:hidden content is
 *     marked ignored. A page script cannot change what these commands say
 *     except by changing the page itself.
 *   - DOM.getFrameOwner {frameId} per child frame, on its parent frame's
 *     session: the backend node of the <iframe> element, so the child's
 *     tree is placed under the right Iframe node.
 *   - DOMSnapshot.captureSnapshot per session (one covers every
 *     same-process frame): input types and autocomplete attributes (to
 *     recognise password and one-time-code fields, whose values are never
 *     shown) and isClickable (a generic element with a click listener gets
 *     a ref). If it fails, text field values of that session are withheld.
 *
 * Pipeline: AX nodes -> a "view" tree (vnode, preorder array, so a node's
 * subtree is the index range [i, end)) in which wrappers are kept but
 * marked flat (not printed; their children print at their depth) so that
 * row context can still see cards and rows -> lines (the printed vnodes in
 * order) -> the page of lines that fits the budget.
 *
 * Ownership: each reply is digested as it arrives (AX nodes into compact
 * records with their own strings, the DOM snapshot into id sets) and freed
 * at once; the AX trees, the biggest replies by far (tens of MB of JSON on
 * a large page), are never held at all: they go through a cdp_send_sink
 * sink that fills the records while the bytes arrive (ax_event). The
 * view tree carries what it shows of those records, which are freed once
 * it is built; its printed nodes, compacted in place, and the strings they
 * point into become the tab's cache (struct snap_cache): later pages,
 * queries and text pages of an unchanged document are rendered from it
 * without reading the page again.
 *
 * Implementation notes
 *  - Untrusted text: every page-derived string goes through put_page(),
 *    which quotes (escapes '"' and '\'), turns control characters into
 *    spaces, and never lets three '<' or '>' in a row through, so the
 *    content markers cannot appear inside page content whatever the nonce.
 *  - Refs are issued only for lines that are printed (snap_ref_for is
 *    idempotent per node and document), so a 3000-row page does not fill
 *    the ref table with refs nobody saw.
 *
 * Tests that include it (the walker's reader and records):
 *   tests/test_walker.c      the walker's view against the AX tree's
 *                            (snap_obs_walk_read, the records, a->walks)
 *   tests/fuzz/fuzz_walk.c   snap_obs_walk_read on arbitrary input
 */
#ifndef CDPGATE_OBSERVE_INT_H
#define CDPGATE_OBSERVE_INT_H

#include "snapshot/snap_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BUDGET 12000
#define MIN_BUDGET 600
#define NAME_MAX_CHARS 150       /* accessible names and values in element lines */
#define TEXT_MAX_CHARS 150       /* text lines in element mode (text mode is whole) */
#define CTX_MAX_CHARS 40         /* row context */
#define OPTIONS_MAX 30           /* native <select> options listed inline */
#define MAX_DEPTH 400            /* deeper structure is flattened (walk_deep) */
#define CACHE_MAX_AGE_MS 60000   /* a cached snapshot serves at most this long */

/* ---- backend id sets (sorted arrays) ---- */

typedef struct {
    int *v;
    size_t n, cap;
} idset;

/* ---- per-session and per-frame fetch state ---- */

/* Where a node lies in its document (the DOM snapshot's layout bounds, CSS
 * px from the top of the document, so a scroll does not move it): rows
 * [y0, y1). A fixed or sticky element, and what is inside one, is in view
 * wherever the page is scrolled: y0 = INT32_MIN, y1 = INT32_MAX. */
typedef struct {
    int backend;
    int32_t y0, y1;
} nbox;

typedef struct {
    const char *id;              /* session id (borrowed from the tab's frames) */
    uint64_t call;
    int rc;
    bool done;                   /* reply collected (or the call failed) */
    bool dom_ok;                 /* the DOMSnapshot answered: secrets are known */
    idset secret;                /* password, one-time-code and payment card inputs */
    idset pw, otc;               /* of which type=password; one-time-code or
                                    current/new-password autocomplete */
    idset click;                 /* isClickable */
    idset inl;                   /* computed display "inline" (a generic that sits
                                    inside a line of text) */
    nbox *box;                   /* layout boxes, sorted by backend */
    size_t nbox;
    int32_t doc_h;               /* the first document's content height, 0 unknown */
    void *dss;                   /* domsink while the reply streams in */
} sess_st;

/* One AX node, digested from the reply and independent of it (the reply
 * is freed as soon as its nodes are read): 20 bytes. Strings live in the
 * frame's own arena, the role as an index into the frame's interned roles,
 * children as indices into the frame's kids array (a node's run ends where
 * the next node's begins). InlineTextBox nodes (a quarter of a text-heavy
 * tree, never printed) are not kept, nor the children of StaticText (only
 * InlineTextBoxes), nor strings the view never reads: the names of ignored
 * nodes and of wrappers that never print (a table cell's name repeats its
 * text), the values of ignored and dropped nodes (see ax_add). */
enum {
    AX_IGNORED = 1,
    AX_KIDS = 2,                 /* the reply listed children (maybe none kept) */
    AX_NAMED = 4,                /* the reply had a name ... */
    AX_NAME = 8,                 /* ... and it is kept at str */
    AX_VALUE = 16,               /* a string value, after the name */
    AX_NUM = 32,                 /* a numeric value (spinbutton, slider): a double there */
};

typedef struct {
    uint32_t str;                /* F->str offset: [name NUL][value NUL | double] */
    uint32_t kid0;               /* F->kix[kid0 .. next node's kid0) */
    int32_t backend;
    uint16_t role;               /* index into F->roles */
    uint16_t st;                 /* ST_* from the properties */
    uint8_t level;               /* heading level 1-9, 0 for any other */
    uint8_t flags;               /* AX_* */
} axn;

typedef struct {
    snap_frame *f;               /* = &fc: a copy, because the event listener may
                                    grow t->frames while replies are awaited */
    snap_frame fc;
    int sess;                    /* index into sessions */
    int parent;                  /* index into frames, -1 for the main frame */
    uint64_t ax_call, own_call;
    int ax_rc, own_rc;
    bool ax_done, own_done;      /* reply collected (or the call failed) */
    char err[160];
    int owner;                   /* backend node of the <iframe> in the parent, 0 unknown */
    bool placed;
    bool ghost;                  /* not in the page (place_orphans): no line */
    bool walked;                 /* records from the walker (observe_walk.c): their
                                    "backend" is the walker's element id, negated */
    axn **nodes;                 /* chunks of AXC records (see ax_at) */
    size_t nnodes, nchunk;
    size_t released;             /* chunks [0, released) freed by the walk */
    bool preorder;               /* the walk reads records in index order */
    void *ids;                   /* nodeId per node, until ax_finish */
    void *kid;                   /* child nodeIds, until ax_finish */
    bool wide;                   /* ids and kid hold int64_t, else int32_t (every
                                    nodeId Chromium sends fits; see ax_widen) */
    int32_t *kix;                /* then: child node index or -1 */
    size_t nkid, kid_cap;
    base_buf str;                /* the nodes' strings and role names */
    uint32_t *roles;             /* interned role names (offsets in str) */
    uint16_t *rcls;              /* their RC_* classes */
    size_t nroles, caproles;
    int *hash;                   /* nodeId -> index + 1, open addressing, until ax_finish */
    size_t hcap;
    bool dense;                  /* walker records (observe_walk.c): ids are 1, 2, ...
                                    in record order and the reader writes child
                                    indices itself, so no ids, no index (the
                                    driver's peak on a big page: issue 3) */
    void *axs;                   /* axsink while the AX reply streams in */
} frame_st;

/* ---- the view tree ---- */

enum { V_ELEM, V_FLAT, V_TEXT, V_FRAME };

/* State bits shown after the name. */
enum {
    ST_DISABLED = 1 << 0, ST_CHECKED = 1 << 1, ST_MIXED = 1 << 2, ST_EXPANDED = 1 << 3,
    ST_COLLAPSED = 1 << 4, ST_SELECTED = 1 << 5, ST_PRESSED = 1 << 6, ST_REQUIRED = 1 << 7,
    ST_FOCUSED = 1 << 8, ST_READONLY = 1 << 9, ST_SECRET = 1 << 10, ST_INVALID = 1 << 11,
    ST_FOCUSABLE = 1 << 12, ST_EDITABLE = 1 << 13,
    ST_INLINE = 1 << 14,         /* a walker generic with display:inline (not shown:
                                    observe_build.c inline_wrap, as the AX path's S->inl) */
};

/* A view node: 36 bytes. It carries what it shows of its AX node (the
 * string offset, flags and backend node: vname, vvalue, vnum), so that the
 * AX records are freed once the view is built; its role is an index into
 * the build's role table (build.rt). The printed ones, compacted in place,
 * become the cache's lines (see struct snap_cache). */
enum {
    VF_ACT = 1,                  /* gets a ref */
    VF_DROP = 2,                 /* prints nothing, not even its children */
    VF_NONAME = 4,               /* shown without the AX node's name and value */
    VF_NOVALUE = 8,              /* the value is withheld (secret) */
    VF_OPTS = 16,                /* toff/tlen hold the options of a native select */
    VF_CTX = 32,                 /* aux holds a row context */
    VF_STR = 64,                 /* V_TEXT: toff is in the frame's str (one
                                    StaticText's name), not in the arena */
    VF_RUN = 128,                /* text or an inline link/button that runs on
                                    from the line before it (text mode joins) */
    VF_SPACE = 256,              /* VF_RUN: the page has a space before it */
};

/* The frames a build takes (vnode.frame is 16 bits); more is out of memory. */
#define FRAMES_MAX 65535

typedef struct {
    int32_t parent, end;         /* preorder: the subtree is [index, end); in
                                    the cache: printed parent line, depth */
    uint32_t str;                /* its AX node's axn.str (in that frame's str) */
    int32_t backend;             /* its AX node's backendDOMNodeId, 0 for none */
    uint32_t toff, tlen;         /* text (V_TEXT, clickable) or options in the
                                    arena; V_FRAME: child frame_st index + 1 */
    uint32_t aux;                /* during the walk: top-level printed lines it
                                    contributes; then (VF_CTX): row context in
                                    the arena, after its 16-bit length */
    uint16_t role;               /* printed role (elements): index into rt */
    uint16_t frame;              /* frame_st index (at most FRAMES_MAX) */
    unsigned st : 15;            /* ST_* */
    unsigned axf : 6;            /* its AX node's axn.flags, 0 for none */
    unsigned kind : 2;           /* V_* */
    unsigned vf : 9;             /* VF_* */
} vnode;

typedef struct {
    snap_agent *a;
    snap_tab *t;                 /* valid until fetch waits; then tab_id */
    int tab_id;
    frame_st *fr;
    size_t nfr;
    sess_st *ss;
    size_t nss;
    vnode *v;
    size_t nv, capv;
    size_t hintv;                /* first capacity: about one per AX node */
    const char **rt;             /* printed roles (static or in a frame's str) */
    size_t nrt, caprt;
    const char *title;           /* the main frame's RootWebArea name (in its str) */
    int tail_text;               /* the V_TEXT vnode written last, and the arena */
    size_t tail_len;             /* length then: it may take more text while equal */
    int run_last;                /* the text or inline element printed last, -1 */
    bool run_ws;                 /* the page had whitespace after it */
    base_buf arena;
    size_t deep;                 /* nodes below MAX_DEPTH, shown flattened */
    size_t deep_left;            /* visits walk_deep may still make */
    bool deep_cut;               /* it ran out: some were not shown */
    bool oom;
    /* The main frame's mutation counter, read in the walker's own batch
     * (observe_walk.c) instead of a round trip of its own before the build:
     * where it goes (NULL: read before), and whether it was read. */
    int64_t *mut_defer;
    bool mut_read;
} build;

/* Role classes, computed once per interned role. */
enum {
    RC_FLAT = 1 << 0, RC_FLAT_NAMED = 1 << 1, RC_DROP = 1 << 2, RC_ACT = 1 << 3,
    RC_LEAF = 1 << 4, RC_TEXT = 1 << 5, RC_FRAME = 1 << 6, RC_ROOT = 1 << 7,
    RC_OPTION = 1 << 8, RC_EDITBASE = 1 << 9, RC_GENERIC = 1 << 10, RC_COMBO = 1 << 11,
};

/* The records are kept in chunks of AXC (80 KB each), so that a walk
 * that reads them in index order can free those behind it. */
#define AXC_SHIFT 12

typedef struct {
    frame_st *F;
    bool oom;
    bool noskip;                 /* tests: never answer JSON_STREAM_SKIP */
    bool textbox;                /* this node's role is InlineTextBox */
    bool nodes_key, nodes_seen;
    int in_nodes;                /* 1 inside result.nodes */
    bool in_node;                /* inside an object element of nodes */
    int field;                   /* AF_* of the current depth-3 member */
    unsigned seen;               /* fields met in this node (first wins) */
    bool ctr_obj;                /* the depth-3 value is an object */
    bool sub, subseen;           /* role/name/value: at its first "value" */
    base_buf id, role, name, value, kid;
    bool has_id, has_role, has_name, has_value, ignored, has_num;
    double num;
    int backend;
    int64_t *kids;
    size_t nk, ck;
    /* properties[] */
    bool in_prop, pv_obj, pname_seen, pvalue_seen, pvv_seen;
    int pfield;                  /* 1 "name", 2 "value" */
    bool pvkey;
    base_buf pname;
    bool has_pname;
    int pvtype;                  /* 0 other, 1 true, 2 string, 3 number */
    char pstr[16];
    size_t pstr_len;
    bool pstr_nul;
    double pnum;
    unsigned st;
    int level;
} axsink;

typedef struct {
    int *v;
    size_t n, cap;
} ivec;

typedef struct {
    ivec backs, names;           /* per node of the current document */
    ivec parent;                 /* per node: parent node index, -1 */
    ivec attr_off;               /* per node: start in attrs (pairs follow) */
    ivec attrs;                  /* string indices, k v k v ... */
    ivec click;                  /* node indices */
    ivec lnode, ly0, ly1, lpos;  /* per layout object: node index, rows, position
                                    (string index of its computed "position") */
    ivec ldisp;                  /* and of its computed "display" (-1 none) */
    int32_t content_h;           /* contentHeight */
} dsdoc;

typedef struct {
    dsdoc *docs;
    size_t ndocs, capdocs;
    int where;                   /* 1 documents, 2 strings, 0 elsewhere */
    int field;                   /* DF_*: the member of nodes or layout being read */
    int sect;                    /* 1 in nodes, 2 in layout, 3 at contentHeight */
    bool in_click_index;
    int rect_i;                  /* index of the number in the current bounds rect */
    int style_i;                 /* index of the value in the current styles array */
    double rect_y;
    unsigned char *flags;        /* per string */
    size_t nstr, capstr;
    char head[16];               /* first bytes of the current string */
    size_t headlen, total;
    char carry[16];              /* last bytes of the previous piece */
    size_t ncarry;
    unsigned char cur;           /* flags gathered for the current string */
    bool oom;
} domsink;

/* ---- lines ---- */

typedef struct {
    int v;                       /* vnode */
    int depth;
    int parent;                  /* printed parent line, -1 */
} line;

typedef struct {
    line *l;
    size_t n, cap;
} lines;

/* ---- a page of the observation (observe_cache.c, observe_render.c) ---- */

/* What the page placed (filled for the structured result). */
#define MATCHES_PAGE 8            /* element mode: matches shown per page */
#define TEXT_MATCHES_PAGE 6       /* text mode: matches shown per page */
#define TEXT_AROUND 240           /* text mode: chars shown each side of a match */

typedef struct {
    size_t total, shown, first, next;   /* lines (or chars in text mode) */
    size_t refs;
    bool truncated;
    size_t matches;
    size_t mfirst, mshown;       /* with a query: index of the first match shown,
                                    and how many */
    size_t moff[MATCHES_PAGE];   /* each one's line (text mode: char) offset */
    bool text_cut;               /* a text line was shortened ("…") */
} page_info;

/* ---- the cache (observe_cache.c) ----
 *
 * A build ends in a snap_cache: the printed lines as view nodes (the
 * printed ones of the view tree, compacted in place, each with its depth
 * and printed parent line), the strings they show (each frame's AX strings
 * and the build's arena, handed over rather than copied) and the role
 * table. */

typedef struct {
    char id[SNAP_ID_MAX];
    char loader[SNAP_ID_MAX];
    char origin[256];
    char *str;                   /* the frame's AX strings (owned) */
    int ax_rc;                   /* its AX tree failed: frame lines say why */
    char err[160];
} cframe;

struct snap_cache {
    int tab;
    uint64_t nav;                /* the tab's counter when the build began */
    uint64_t sig;                /* frames_sig() then (observe_rebuild.c) */
    uint64_t changes;            /* a->changes then */
    int64_t built_ms;
    /* The frames' mutation counters read just before the build (mut_ok:
     * every one was read; else the cache is never reused). */
    char (*mut_ids)[SNAP_ID_MAX];
    int64_t *mut;
    size_t nmut;
    bool mut_ok;
    cframe *fr;
    size_t nfr;
    const char *title;           /* the main frame's RootWebArea name (in fr[0].str) */
    size_t deep;                 /* nodes below MAX_DEPTH levels, shown flattened */
    bool deep_cut;               /* and some not shown at all (walk_deep's bound) */
    bool walked;                 /* built by the walker (observe_walk.c) */
    vnode *l;                    /* printed lines; parent: printed parent line or
                                    -1, end: depth */
    size_t n;
    const char **rt;             /* role table (vnode.role) */
    size_t nrt;
    char *arena;                 /* text, options and row context */
    int32_t *box;                /* two per line, [y0, y1): the rows of the page a
                                    main-frame line covers (observe_view.c); NULL
                                    when the layout was not read */
    int *boxb;                   /* per line, the node whose box it took (its own
                                    or an ancestor's), 0 none: the layout is read
                                    again by it for every viewport view */
    uint64_t lay_sig;            /* which nodes of the main frame's session had a
                                    layout object at the build (snap_obs_lay_sig) */
    int32_t doc_h;               /* the page's height then, 0 unknown */
};

/* ---- observe_rebuild.c: reading the page into the cache ---- */

/* Can t's cached snapshot serve query q (nothing may have changed since
 * it was built)? Reads the frames' mutation counters: events may come in,
 * so look the tab up again after. */
bool snap_obs_cache_valid(snap_agent *a, snap_tab *t, const snap_query *q);
/* Read the page and replace t->cache. 0 or a SNAP_E* code with r filled. */
int snap_obs_rebuild(snap_agent *a, snap_tab *t, snap_result *r);

/* ---- observe_view.c: a snapshot from the viewport or from a ref ---- */

enum { VIEW_ALL, VIEW_PORT, VIEW_REF };

typedef struct {
    int kind;                    /* VIEW_* */
    int32_t y, h, page_h;        /* VIEW_PORT: scroll position, viewport and page
                                    height (CSS px), read fresh */
    uint32_t ref;                /* VIEW_REF: the ref, its frame, document and node */
    char frame[SNAP_ID_MAX];
    char loader[SNAP_ID_MAX];
    int backend;
    char head[96];               /* for the header line: " view=..." */
} snap_view;

int32_t *snap_obs_line_boxes(const build *B, const lines *L, int **boxb);
uint64_t snap_obs_lay_sig(const sess_st *S);
int snap_obs_view_relayout(snap_agent *a, snap_tab *t, struct snap_cache *C);
int snap_obs_walk_boxes(snap_agent *a, snap_tab *t, struct snap_cache *C);
int snap_obs_view_begin(snap_agent *a, snap_tab *t, const char *from, snap_view *v,
                        snap_result *r);
int snap_obs_view_metrics(snap_agent *a, int tab_id, snap_view *v, snap_result *r);
unsigned char *snap_obs_view_mask(snap_agent *a, const struct snap_cache *C, snap_view *v,
                                  snap_result *r, int *rc);

/* ---- observe_tree.c ---- */

void snap_obs_put_quoted(base_buf *b, const char *s, size_t max);
bool snap_obs_contains_ci(const char *hay, size_t hlen, const char *needle);
size_t snap_obs_fold(const char *s, size_t n, char *dst, uint32_t *map);
size_t snap_obs_fold_find(const char *h, size_t hn, const char *nd, size_t nn, size_t from);
bool snap_obs_find_folded(const char *hay, size_t hlen, const char *needle);
bool snap_obs_blank(const char *s);
bool snap_obs_same_text(const char *x, const char *y);
void snap_obs_ids_add(idset *s, int id);
void snap_obs_ids_sort(idset *s);
bool snap_obs_ids_has(const idset *s, int id);
uint16_t snap_obs_role_ix(build *B, const char *role);
const char *snap_obs_vrole(const build *B, const vnode *x);
int snap_obs_vnew(build *B, int parent, int kind, int frame);
bool snap_obs_in_list(const char *role, const char *const *list);
extern const char *const snap_obs_NAME_FROM_CONTENT[];
unsigned snap_obs_role_class(const char *role);
const char *snap_obs_print_role(const char *role, int level);

/* ---- observe_ax.c ---- */

axn *snap_obs_ax_at(const frame_st *F, size_t i);
const char *snap_obs_ax_role(const frame_st *F, const axn *a);
unsigned snap_obs_ax_cls(const frame_st *F, const axn *a);
const char *snap_obs_name_at(const char *str, uint32_t off, unsigned flags);
const char *snap_obs_value_at(const char *str, uint32_t off, unsigned flags);
bool snap_obs_num_at(const char *str, uint32_t off, unsigned flags, double *num);
const char *snap_obs_ax_name(const frame_st *F, const axn *a);
const char *snap_obs_ax_value(const frame_st *F, const axn *a);
bool snap_obs_ax_num(const frame_st *F, const axn *a, double *num);
size_t snap_obs_ax_nkids(const frame_st *F, size_t i);
int snap_obs_ax_finish(frame_st *F);
void snap_obs_ax_drop(frame_st *F);
void snap_obs_axs_free(axsink *S);
bool snap_obs_is_text(const json_event *ev);
bool snap_obs_is_value(const json_event *ev);
int snap_obs_ax_event(void *ud, const json_event *ev);
bool snap_obs_masked(const char *s);
/* A record from another source than an AX reply (the walker). */
typedef struct {
    const char *role, *name, *value;   /* NULL when absent */
    bool has_num;
    double num;
    const int64_t *kids;               /* children's ids */
    size_t nk;
    unsigned st;                       /* ST_* */
    int level;
    int backend;                       /* < 0: a walker id, negated (a ref
                                          resolved by agent_refs.c); 0 none */
} axrec;
int snap_obs_ax_put(frame_st *F, int64_t id, const axrec *r);

/* ---- observe_walk.c ---- */

/* The walker's output reader, incremental: fed the output in pieces of
 * any size (a line may be cut between two), it puts each piece's records
 * in F as they come and keeps a few integers a record besides (for the
 * child lists, laid out at the end, and the id check): no buffer holds the
 * whole output. B: the build, to fix the records the walker was unsure of
 * from their AX nodes (NULL: none can be; the walk is then unsure). New;
 * free with snap_obs_walk_rd_free (F's records stay: snap_obs_ax_drop
 * them on failure). feed and end return 0, SNAP_ENOMEM, or SNAP_EBROWSER
 * with err "walker output, line N: why"; a failure is kept (later calls
 * return it). end: after the last piece; *mut, *unsure from the header
 * (*unsure also when an unsure record could not be fixed). */
typedef struct walk_rd walk_rd;
walk_rd *snap_obs_walk_rd_new(build *B, frame_st *F);
int snap_obs_walk_rd_feed(walk_rd *R, const char *s, size_t n, char *err, size_t cap);
int snap_obs_walk_rd_end(walk_rd *R, int64_t *mut, bool *unsure, char *err, size_t cap);
void snap_obs_walk_rd_free(walk_rd *R);
/* The reader fed s[0..n) whole (tests), or in pieces of `piece` bytes
 * (0: whole), with no browser. */
int snap_obs_walk_read(frame_st *F, const char *s, size_t n, int64_t *mut, bool *unsure,
                       char *err, size_t cap);
int snap_obs_walk_read_split(frame_st *F, const char *s, size_t n, size_t piece, int64_t *mut,
                             bool *unsure, char *err, size_t cap);
int snap_obs_walk_fetch(build *B, frame_st *F);
/* An AX node's properties (getFullAXTree / getPartialAXTree "properties")
 * as ST_* bits, and its level (observe_ax.c). */
unsigned snap_obs_ax_states(const json_val *props, int *level);

/* ---- observe_dom.c ---- */

unsigned snap_obs_secret_kind(const sess_st *S, int backend);
const nbox *snap_obs_box(const sess_st *S, int backend);
void snap_obs_ds_free(domsink *S);
int snap_obs_ds_event(void *ud, const json_event *ev);
void snap_obs_ds_finish(sess_st *T, const domsink *S);

/* ---- observe_build.c ---- */

const char *snap_obs_vname_in(const char *str, const vnode *x);
const char *snap_obs_vvalue_in(const char *str, const vnode *x);
bool snap_obs_vnum_in(const char *str, const vnode *x, double *num);
const char *snap_obs_vname(const build *B, const vnode *x);
char *snap_obs_vtext(const build *B, const vnode *x);
int snap_obs_vchild(const vnode *x);
void snap_obs_finish(build *B, int i);
/* The values of F's document's secret fields read in its isolated world
 * (snap_js_secret_values_expr: the AX tree shows a password's as
 * bullets) and remembered as keyed hashes (snap_secval_note; W7). */
void snap_obs_secret_values(build *B, frame_st *F);
/* secval.c: every name and value of the build that is or holds a
 * remembered secret value (secval.c), into hits (NUL-separated);
 * a field or an editable whose value is one becomes secret (ST_SECRET:
 * its value withheld; and noted ever secret: the gate treats it as the
 * password field it stands for). */
void snap_obs_remembered(build *B, base_buf *hits);
void snap_obs_mask_secrets(build *B);
int snap_obs_ax_root(const frame_st *F);
int snap_obs_ax_reorder(frame_st *F);
void snap_obs_walk_frame_root(build *B, int fi, int parent, int depth);
void snap_obs_row_context(build *B);

/* ---- observe_cache.c: the lines a text target is found in (observe_find.c) ---- */

struct snap_cache;
const struct snap_cache *snap_cache_fresh(snap_agent *a, int tab, snap_result *r);
size_t snap_cache_nlines(const struct snap_cache *C);
const vnode *snap_cache_line(const struct snap_cache *C, size_t k, const char **hay, size_t *hn,
                             const char **frame_id, const char **loader);
const vnode *snap_cache_line_vnode(const struct snap_cache *C, size_t k);
bool snap_cache_act(const vnode *x);
const char *snap_cache_role(const struct snap_cache *C, const vnode *x);
void snap_cache_render(const struct snap_cache *C, size_t k, size_t max, base_buf *out);
int snap_cache_parent(const struct snap_cache *C, size_t k);
/* observe_find.c: the ref of line k, issued as its snapshot line shows it
 * (0: out of memory); observe_elems.c lists the lines with theirs. */
uint32_t snap_cache_line_ref(snap_agent *a, int tab, const struct snap_cache *C, size_t k);

/* ---- observe_render.c ---- */

void snap_obs_collect_lines(build *B, lines *L, int i, int depth, int pline);
void snap_obs_page_chars(const base_buf *txt, const snap_query *q, size_t room, base_buf *out,
                         page_info *pi);
void snap_obs_page_text_matches(const base_buf *txt, const snap_query *q, size_t room,
                                base_buf *out, page_info *pi);
void snap_obs_dedup_lines(build *B, lines *L);
void snap_obs_free_build(build *B);
int snap_obs_fetch(build *B);

#endif
