/*
 * observe.c — the observation: a compact text projection of a tab's
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
 */
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
#define CACHE_FRESH_MS 1000      /* a cached snapshot serves a plain first page this long */
#define CACHE_MAX_AGE_MS 4000    /* and paging, queries, text mode this long */

/* ---- growing text buffer ---- */

typedef struct {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static bool sb_reserve(sbuf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t n = b->cap ? b->cap : 256;
    while (n < b->len + extra + 1)
        n *= 2;
    char *np = realloc(b->p, n);
    if (!np) {
        b->oom = true;
        return false;
    }
    b->p = np;
    b->cap = n;
    return true;
}

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (!sb_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    sb_putn(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Length of the UTF-8 sequence starting with byte c (1 for stray bytes). */
static size_t u8len(unsigned char c)
{
    if (c < 0xC0)
        return 1;
    if (c < 0xE0)
        return 2;
    if (c < 0xF0)
        return 3;
    return 4;
}

enum { PAGE_QUOTED = 1, PAGE_KEEP_NL = 2 };

/* Append page-derived text: whitespace runs collapse to one space (or keep
 * one newline with PAGE_KEEP_NL), control characters become spaces, with
 * PAGE_QUOTED '"' and '\' are escaped, and no run of three '<' or '>' ever
 * comes out (the third becomes a look-alike angle quote), so page content
 * can never spell a content marker. At most max bytes of input are used;
 * when cut, "…" is appended. Returns true when the text was cut. */
static bool put_page(sbuf *b, const char *s, size_t n, size_t max, unsigned mode)
{
    bool cut = false;
    bool space = false;
    bool nl = false;
    int run_lt = 0, run_gt = 0;
    size_t used = 0;
    size_t i = 0;
    /* Skip leading whitespace. */
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            space = true;
            if (c == '\n' && (mode & PAGE_KEEP_NL))
                nl = true;
            i++;
            continue;
        }
        size_t l = u8len(c);
        if (i + l > n)
            l = n - i;
        if (used + l > max) {
            cut = true;
            break;
        }
        if (space) {
            sb_putc(b, nl ? '\n' : ' ');
            space = nl = false;
            run_lt = run_gt = 0;
            used++;
        }
        if (c < 0x20 || c == 0x7f) {
            sb_putc(b, ' ');
        } else if (c == '<') {
            if (++run_lt >= 3) {
                sb_puts(b, "\xe2\x80\xb9");     /* ‹ */
                run_lt = 0;
            } else {
                sb_putc(b, '<');
            }
            run_gt = 0;
        } else if (c == '>') {
            if (++run_gt >= 3) {
                sb_puts(b, "\xe2\x80\xba");     /* › */
                run_gt = 0;
            } else {
                sb_putc(b, '>');
            }
            run_lt = 0;
        } else {
            run_lt = run_gt = 0;
            if ((mode & PAGE_QUOTED) && (c == '"' || c == '\\'))
                sb_putc(b, '\\');
            sb_putn(b, s + i, l);
        }
        used += l;
        i += l;
    }
    if (cut)
        sb_puts(b, "\xe2\x80\xa6");             /* … */
    return cut;
}

static void put_quoted(sbuf *b, const char *s, size_t max)
{
    sb_putc(b, '"');
    put_page(b, s, strlen(s), max, PAGE_QUOTED);
    sb_putc(b, '"');
}

/* ASCII case-insensitive substring search. */
static bool contains_ci(const char *hay, size_t hlen, const char *needle)
{
    size_t nl = strlen(needle);
    if (nl == 0)
        return true;
    for (size_t i = 0; i + nl <= hlen; i++) {
        size_t k = 0;
        while (k < nl) {
            unsigned char x = (unsigned char)hay[i + k], y = (unsigned char)needle[k];
            if (x >= 'A' && x <= 'Z')
                x = (unsigned char)(x + 32);
            if (y >= 'A' && y <= 'Z')
                y = (unsigned char)(y + 32);
            if (x != y)
                break;
            k++;
        }
        if (k == nl)
            return true;
    }
    return false;
}

/* True when s has only whitespace. */
static bool blank(const char *s)
{
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\f')
            return false;
    return true;
}

/* Compare two strings ignoring leading/trailing whitespace, collapsing
 * inner runs, and ignoring ASCII case. */
static bool same_text(const char *x, const char *y)
{
    if (!x || !y)
        return false;
    for (;;) {
        while (*x == ' ' || *x == '\n' || *x == '\t')
            x++;
        while (*y == ' ' || *y == '\n' || *y == '\t')
            y++;
        if (!*x || !*y)
            return !*x && !*y;
        while (*x && *y && *x != ' ' && *x != '\n' && *x != '\t' &&
               (*x == *y || ((*x | 32) == (*y | 32) && (*x | 32) >= 'a' && (*x | 32) <= 'z')))
            x++, y++;
        bool xe = !*x || *x == ' ' || *x == '\n' || *x == '\t';
        bool ye = !*y || *y == ' ' || *y == '\n' || *y == '\t';
        if (!xe || !ye)
            return false;
    }
}

/* ---- backend id sets (sorted arrays) ---- */

typedef struct {
    int *v;
    size_t n, cap;
} idset;

static void ids_add(idset *s, int id)
{
    if (s->n == s->cap) {
        size_t n = s->cap ? s->cap * 2 : 64;
        int *nv = realloc(s->v, n * sizeof *nv);
        if (!nv)
            return;
        s->v = nv;
        s->cap = n;
    }
    s->v[s->n++] = id;
}

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

static void ids_sort(idset *s)
{
    if (s->n)
        qsort(s->v, s->n, sizeof *s->v, cmp_int);
}

static bool ids_has(const idset *s, int id)
{
    return s->n && bsearch(&id, s->v, s->n, sizeof *s->v, cmp_int) != NULL;
}

/* ---- per-session and per-frame fetch state ---- */

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
    sbuf str;                    /* the nodes' strings and role names */
    uint32_t *roles;             /* interned role names (offsets in str) */
    uint16_t *rcls;              /* their RC_* classes */
    size_t nroles, caproles;
    int *hash;                   /* nodeId -> index + 1, open addressing, until ax_finish */
    size_t hcap;
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
    unsigned st : 14;            /* ST_* */
    unsigned axf : 6;            /* its AX node's axn.flags, 0 for none */
    unsigned kind : 2;           /* V_* */
    unsigned vf : 7;             /* VF_* */
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
    sbuf arena;
    size_t deep;                 /* nodes below MAX_DEPTH, shown flattened */
    size_t deep_left;            /* visits walk_deep may still make */
    bool deep_cut;               /* it ran out: some were not shown */
    bool oom;
} build;

/* The index of role (a static string or one in a frame's str, which the
 * cache keeps) in B->rt, adding it; index 0 is "". */
static uint16_t role_ix(build *B, const char *role)
{
    for (size_t i = 0; i < B->nrt; i++)
        if (B->rt[i] == role || strcmp(B->rt[i], role) == 0)
            return (uint16_t)i;
    if (B->nrt + 2 > B->caprt) {
        size_t n = B->caprt ? B->caprt * 2 : 64;
        const char **nr = n <= 65536 ? realloc(B->rt, n * sizeof *nr) : NULL;
        if (!nr) {
            B->oom = true;
            return 0;
        }
        B->rt = nr;
        B->caprt = n;
    }
    if (!B->nrt)
        B->rt[B->nrt++] = "";
    B->rt[B->nrt] = role;
    return (uint16_t)B->nrt++;
}

static const char *vrole(const build *B, const vnode *x)
{
    return B->nrt ? B->rt[x->role] : "";
}

static int vnew(build *B, int parent, int kind, int frame)
{
    if (B->nv == B->capv) {
        size_t n = B->capv ? B->capv + B->capv / 2 : B->hintv > 1024 ? B->hintv : 1024;
        vnode *nv = realloc(B->v, n * sizeof *nv);
        if (!nv) {
            B->oom = true;
            return -1;
        }
        B->v = nv;
        B->capv = n;
    }
    int i = (int)B->nv++;
    vnode *x = &B->v[i];
    memset(x, 0, sizeof *x);
    x->parent = parent;
    x->kind = (unsigned)kind & 3u;
    x->frame = (uint16_t)frame;
    x->end = i + 1;
    return i;
}

/* ---- roles ---- */

static bool in_list(const char *role, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(role, *list) == 0)
            return true;
    return false;
}

/* Wrappers: not printed, their children print at their depth. */
static const char *const FLAT_ROLES[] = {
    "generic", "none", "presentation", "LabelText", "Section", "rowgroup", "Pre",
    "strong", "emphasis", "mark", "time", "subscript", "superscript", "insertion",
    "deletion", "Abbr", "Ruby", "RubyAnnotation", "paragraph", "cell", "gridcell",
    "DescriptionListDetail", "DescriptionListTerm", "definition", "term", "caption",
    "Legend", "FigureCaption", "sectionheader", "sectionfooter", "RootWebArea",
    "WebArea", "Canvas", "code", "Unknown", "ContentDeletion", "ContentInsertion",
    "blockquote", "Details", "figure", "group", "list", "section", "SvgRoot",
    "graphics-document", "graphics-object", "Summary", "LayoutTable", "LayoutTableRow",
    "LayoutTableCell", "Iframe", "IframePresentational", "math", "MathMLMath",
    NULL,
};
/* These wrappers print when they have a name (a fieldset's legend, a named list). */
static const char *const FLAT_UNLESS_NAMED[] = {
    "group", "list", "section", "figure", "blockquote", "Details", "SvgRoot", NULL,
};
/* Dropped with everything below. */
static const char *const DROP_ROLES[] = {
    "InlineTextBox", "LineBreak", "ListMarker", "separator", "MenuListPopup",
    "splitter", NULL,
};
/* Elements an agent acts on: they get a ref. */
static const char *const ACT_ROLES[] = {
    "button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox",
    "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider",
    "spinbutton", "treeitem", "PopUpButton", "ToggleButton", "DisclosureTriangle",
    "MenuListOption", "scrollbar", "ColorWell", "DateTime", "InputTime", "date",
    NULL,
};
/* Their children are the inner editor or repeat the value: not walked. */
static const char *const LEAF_ROLES[] = {
    "textbox", "searchbox", "spinbutton", "slider", "combobox", "progressbar", "meter",
    "scrollbar", "ColorWell", "DateTime", "InputTime", "date", "img", "image", "switch",
    NULL,
};

/* Roles whose name is computed from their content (ARIA "name from
 * content"), less the containers (row, treeitem). */
static const char *const NAME_FROM_CONTENT[] = {
    "button", "link", "heading", "cell", "gridcell", "columnheader", "rowheader",
    "checkbox", "radio", "switch", "tab", "option", "MenuListOption", "menuitem",
    "menuitemcheckbox", "menuitemradio", "tooltip", "ToggleButton", "PopUpButton",
    "DisclosureTriangle", NULL,
};

/* Role classes, computed once per interned role. */
enum {
    RC_FLAT = 1 << 0, RC_FLAT_NAMED = 1 << 1, RC_DROP = 1 << 2, RC_ACT = 1 << 3,
    RC_LEAF = 1 << 4, RC_TEXT = 1 << 5, RC_FRAME = 1 << 6, RC_ROOT = 1 << 7,
    RC_OPTION = 1 << 8, RC_EDITBASE = 1 << 9, RC_GENERIC = 1 << 10, RC_COMBO = 1 << 11,
};

static unsigned role_class(const char *role)
{
    unsigned c = 0;
    if (in_list(role, FLAT_ROLES))
        c |= RC_FLAT;
    if (in_list(role, FLAT_UNLESS_NAMED))
        c |= RC_FLAT_NAMED;
    if (in_list(role, DROP_ROLES))
        c |= RC_DROP;
    if (in_list(role, ACT_ROLES))
        c |= RC_ACT;
    if (in_list(role, LEAF_ROLES))
        c |= RC_LEAF;
    if (strcmp(role, "StaticText") == 0)
        c |= RC_TEXT;
    if (strcmp(role, "Iframe") == 0 || strcmp(role, "IframePresentational") == 0)
        c |= RC_FRAME;
    if (strcmp(role, "RootWebArea") == 0)
        c |= RC_ROOT;
    if (strcmp(role, "option") == 0 || strcmp(role, "MenuListOption") == 0)
        c |= RC_OPTION;
    if (strcmp(role, "generic") == 0 || strcmp(role, "none") == 0 ||
        strcmp(role, "paragraph") == 0)
        c |= RC_EDITBASE;
    if (strcmp(role, "generic") == 0)
        c |= RC_GENERIC;
    if (strcmp(role, "combobox") == 0)
        c |= RC_COMBO;
    return c;
}

/* The printed role: short names for common roles, hN for headings. All
 * results are static strings. */
static const char *print_role(const char *role, int level)
{
    static const char *const map[][2] = {
        {"listitem", "li"}, {"navigation", "nav"}, {"banner", "header"},
        {"contentinfo", "footer"}, {"complementary", "aside"}, {"columnheader", "th"},
        {"rowheader", "th"}, {"image", "img"}, {"PopUpButton", "button"},
        {"ToggleButton", "button"}, {"DisclosureTriangle", "summary"},
        {"MenuListOption", "option"}, {"searchbox", "search"}, {"alertdialog", "dialog"},
        {"DescriptionList", "dl"},
    };
    static const char *const hs[] = {"h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9"};
    if (strcmp(role, "heading") == 0)
        return hs[(level >= 1 && level <= 9 ? level : 2) - 1];
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(role, map[i][0]) == 0)
            return map[i][1];
    return role;
}

/* ---- AX parsing ---- */

/* nodeIds are decimal integers in Chromium ("27013", "-1000000002"); any
 * other text is hashed (FNV-1a) into the upper half so the two never meet. */
static int64_t ax_id(const char *s)
{
    if (!s)
        return INT64_MIN;
    const char *p = s + (*s == '-');
    uint64_t v = 0;
    bool num = *p != 0;
    for (; *p && num; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX >> 5))
            num = false;
        else
            v = v * 10 + (uint64_t)(*p - '0');
    }
    if (num && v <= (uint64_t)INT32_MAX * 1024)
        return *s == '-' ? -(int64_t)v : (int64_t)v;
    uint64_t h = 1469598103934665603ULL;
    for (p = s; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return (int64_t)((h | (1ULL << 62)) & ~(1ULL << 63));
}

static size_t hid(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 17);
}

/* Element i of an id array (ids or kid) of F's width. */
static int64_t ax_idv(const frame_st *F, const void *v, size_t i)
{
    return F->wide ? ((const int64_t *)v)[i] : ((const int32_t *)v)[i];
}

static bool ax_narrow(int64_t id)
{
    return id >= INT32_MIN && id <= INT32_MAX;
}

/* An id that does not fit in 32 bits (never from Chromium, whose AX node
 * ids are 32-bit; a hashed non-numeric id would be one): the frame's id
 * arrays go to 64 bits, widened in place from the end. */
static int ax_widen(frame_st *F, size_t ncap_ids)
{
    if (F->wide)
        return 0;
    /* Both arrays grow first (their int32 contents intact), then widen:
     * a failed allocation leaves F as it was. */
    if (ncap_ids) {
        void *ni = realloc(F->ids, ncap_ids * sizeof(int64_t));
        if (!ni)
            return SNAP_ENOMEM;
        F->ids = ni;
    }
    if (F->kid_cap) {
        void *nk = realloc(F->kid, F->kid_cap * sizeof(int64_t));
        if (!nk)
            return SNAP_ENOMEM;
        F->kid = nk;
    }
    /* From the end: element i's 8 bytes cover 4-byte elements 2i and 2i+1,
     * read already. */
    char *v[2] = {ncap_ids ? F->ids : NULL, F->kid_cap ? F->kid : NULL};
    size_t n[2] = {F->nnodes, F->nkid};
    for (int a = 0; a < 2; a++) {
        for (size_t i = n[a]; v[a] && i-- > 0;) {
            int32_t x;
            memcpy(&x, v[a] + i * sizeof x, sizeof x);
            int64_t w = x;
            memcpy(v[a] + i * sizeof w, &w, sizeof w);
        }
    }
    F->wide = true;
    return 0;
}

static int ax_find(const frame_st *F, int64_t id)
{
    if (!F->hcap)
        return -1;
    size_t m = F->hcap - 1;
    for (size_t h = hid(id) & m;; h = (h + 1) & m) {
        int k = F->hash[h];
        if (!k)
            return -1;
        if (ax_idv(F, F->ids, (size_t)k - 1) == id)
            return k - 1;
    }
}

static const char *ax_strval(const json_val *o)
{
    const json_val *v = json_get(o, "value");
    if (json_is(v, JSON_STRING))
        return json_str(v, NULL);
    return NULL;
}

/* The records are kept in chunks of AXC (80 KB each), so that a walk
 * that reads them in index order can free those behind it. */
#define AXC_SHIFT 12
#define AXC ((size_t)1 << AXC_SHIFT)

static axn *ax_at(const frame_st *F, size_t i)
{
    return &F->nodes[i >> AXC_SHIFT][i & (AXC - 1)];
}

/* ---- reading a complete record (after ax_finish) ---- */

static const char *ax_role(const frame_st *F, const axn *a)
{
    return F->str.p + F->roles[a->role];
}

static unsigned ax_cls(const frame_st *F, const axn *a)
{
    return F->rcls[a->role];
}

/* The name, value and number of a record (string offset off, AX_* flags)
 * in the string arena str: NULL (false) when absent; a name the view never
 * reads is "". */
static const char *name_at(const char *str, uint32_t off, unsigned flags)
{
    if (!(flags & AX_NAMED))
        return NULL;
    return flags & AX_NAME ? str + off : "";
}

static const char *value_at(const char *str, uint32_t off, unsigned flags)
{
    if (!(flags & AX_VALUE))
        return NULL;
    const char *p = str + off;
    return flags & AX_NAME ? p + strlen(p) + 1 : p;
}

static bool num_at(const char *str, uint32_t off, unsigned flags, double *num)
{
    if (!(flags & AX_NUM))
        return false;
    const char *p = str + off;
    memcpy(num, flags & AX_NAME ? p + strlen(p) + 1 : p, sizeof *num);
    return true;
}

static const char *ax_name(const frame_st *F, const axn *a)
{
    return name_at(F->str.p, a->str, a->flags);
}

static const char *ax_value(const frame_st *F, const axn *a)
{
    return value_at(F->str.p, a->str, a->flags);
}

static bool ax_num(const frame_st *F, const axn *a, double *num)
{
    return num_at(F->str.p, a->str, a->flags, num);
}

static size_t ax_nkids(const frame_st *F, size_t i)
{
    size_t end = i + 1 < F->nnodes ? ax_at(F, i + 1)->kid0 : F->nkid;
    return end - ax_at(F, i)->kid0;
}

/* ---- adding records ---- */

/* The index of role in F's interned roles, adding it; -1 out of memory. */
static int role_intern(frame_st *F, const char *role)
{
    for (size_t i = 0; i < F->nroles; i++)
        if (strcmp(F->str.p + F->roles[i], role) == 0)
            return (int)i;
    if (F->nroles == 65535)
        return -1;
    if (F->nroles == F->caproles) {
        size_t c = F->caproles ? F->caproles * 2 : 32;
        uint32_t *nr = realloc(F->roles, c * sizeof *nr);
        if (!nr)
            return -1;
        F->roles = nr;
        uint16_t *nc = realloc(F->rcls, c * sizeof *nc);
        if (!nc)
            return -1;
        F->rcls = nc;
        F->caproles = c;
    }
    if (!F->str.len)
        sb_putc(&F->str, 0);        /* offset 0 means "none" */
    size_t off = F->str.len;
    sb_putn(&F->str, role, strlen(role) + 1);
    if (F->str.oom || off > UINT32_MAX)
        return -1;
    F->roles[F->nroles] = (uint32_t)off;
    F->rcls[F->nroles] = (uint16_t)role_class(role);
    return (int)F->nroles++;
}

/* One node as read from the reply, before it is kept. */
typedef struct {
    const char *id, *role, *name, *value;   /* NULL when absent */
    bool ignored, has_num;
    double num;
    const int64_t *kids;
    size_t nk;
    int backend;
    unsigned st;
    int level;
} axpend;

/* Keep one node: what ax_parse and the stream (axs_commit) both do. A node
 * without nodeId, an InlineTextBox and a repeated nodeId (the first one
 * wins) are skipped. Strings the view never reads are not kept (see axn);
 * the view and collect_options are their only readers. 0 or SNAP_ENOMEM. */
static int ax_add(frame_st *F, const axpend *p)
{
    if (!p->id || (p->role && strcmp(p->role, "InlineTextBox") == 0))
        return 0;
    int64_t id = ax_id(p->id);
    if (ax_find(F, id) >= 0)
        return 0;
    if (!F->wide) {
        bool narrow = ax_narrow(id);
        for (size_t i = 0; i < p->nk && narrow; i++)
            narrow = ax_narrow(p->kids[i]);
        if (!narrow && ax_widen(F, F->hcap / 4 * 3))
            return SNAP_ENOMEM;
    }
    size_t idw = F->wide ? sizeof(int64_t) : sizeof(int32_t);
    /* Grow the records, and the index at three quarters load (linear
     * probing stays short there, and the index is smaller than at half load). */
    size_t k = F->nnodes;
    if ((k + 1) * 4 > F->hcap * 3) {
        size_t hc = F->hcap ? F->hcap * 2 : 1024;
        if (hc / 4 * 3 > INT32_MAX)
            return SNAP_ENOMEM;
        int *nh = calloc(hc, sizeof *nh);
        if (!nh)
            return SNAP_ENOMEM;
        void *ni = realloc(F->ids, hc / 4 * 3 * idw);
        if (ni)
            F->ids = ni;
        if (!ni) {
            free(nh);
            return SNAP_ENOMEM;
        }
        for (size_t i = 0; i < k; i++) {
            size_t h = hid(ax_idv(F, F->ids, i)) & (hc - 1);
            while (nh[h])
                h = (h + 1) & (hc - 1);
            nh[h] = (int)i + 1;
        }
        free(F->hash);
        F->hash = nh;
        F->hcap = hc;
    }
    int ri = role_intern(F, p->role ? p->role : "none");
    if (ri < 0)
        return SNAP_ENOMEM;
    unsigned rc = F->rcls[ri];
    size_t nk = rc & RC_TEXT ? 0 : p->nk;    /* StaticText: InlineTextBoxes */
    if (F->nkid + nk > F->kid_cap) {
        size_t n = F->kid_cap ? F->kid_cap : 1024;
        while (n < F->nkid + nk)
            n *= 2;
        void *nkp = realloc(F->kid, n * idw);
        if (!nkp)
            return SNAP_ENOMEM;
        F->kid = nkp;
        F->kid_cap = n;
    }
    if (F->nkid + nk > UINT32_MAX)
        return SNAP_ENOMEM;
    if (k >> AXC_SHIFT == F->nchunk) {
        axn **nc = realloc(F->nodes, (F->nchunk + 1) * sizeof *nc);
        if (!nc)
            return SNAP_ENOMEM;
        F->nodes = nc;
        nc[F->nchunk] = malloc(AXC * sizeof **nc);
        if (!nc[F->nchunk])
            return SNAP_ENOMEM;
        F->nchunk++;
    }
    axn *a = ax_at(F, k);
    memset(a, 0, sizeof *a);
    a->role = (uint16_t)ri;
    a->st = (uint16_t)p->st;
    a->level = (uint8_t)(p->level >= 1 && p->level <= 9 ? p->level : 0);
    a->backend = p->backend;
    a->flags = (uint8_t)((p->ignored ? AX_IGNORED : 0) | (p->nk ? AX_KIDS : 0) |
                         (p->name ? AX_NAMED : 0));
    /* Which strings the view reads: names of printed roles, of wrappers
     * that print when named, of generic elements (a clickable div is
     * shown with its name), of editable regions, frames, the root (the
     * title) and options (collect_options, even when ignored); values and
     * numbers of nodes that are not ignored or dropped. */
    bool keep_name, keep_value;
    if (p->ignored) {
        keep_name = rc & (RC_OPTION | RC_ROOT);
        keep_value = false;
    } else if (rc & RC_DROP) {
        keep_name = rc & RC_OPTION;
        keep_value = false;
    } else {
        keep_name = !(rc & RC_FLAT) || (rc & (RC_FLAT_NAMED | RC_FRAME | RC_ROOT |
                                               RC_GENERIC)) ||
                    ((rc & RC_EDITBASE) && (p->st & ST_EDITABLE));
        keep_value = true;
    }
    keep_name = keep_name && p->name;
    bool keep_str = keep_value && p->value;
    bool keep_num = keep_value && !keep_str && p->has_num;
    if (keep_name || keep_str || keep_num) {
        if (!F->str.len)
            sb_putc(&F->str, 0);
        size_t off = F->str.len;
        if (keep_name)
            sb_putn(&F->str, p->name, strlen(p->name) + 1);
        if (keep_str)
            sb_putn(&F->str, p->value, strlen(p->value) + 1);
        else if (keep_num)
            sb_putn(&F->str, (const char *)&p->num, sizeof p->num);
        if (F->str.oom || off > UINT32_MAX)
            return SNAP_ENOMEM;
        a->str = (uint32_t)off;
        a->flags |= (uint8_t)((keep_name ? AX_NAME : 0) | (keep_str ? AX_VALUE : 0) |
                              (keep_num ? AX_NUM : 0));
    }
    a->kid0 = (uint32_t)F->nkid;
    for (size_t i = 0; i < nk; i++) {
        if (F->wide)
            ((int64_t *)F->kid)[F->nkid + i] = p->kids[i];
        else
            ((int32_t *)F->kid)[F->nkid + i] = (int32_t)p->kids[i];
    }
    F->nkid += nk;
    if (F->wide)
        ((int64_t *)F->ids)[k] = id;
    else
        ((int32_t *)F->ids)[k] = (int32_t)id;
    size_t m = F->hcap - 1;
    size_t h = hid(id) & m;
    while (F->hash[h])
        h = (h + 1) & m;
    F->hash[h] = (int)k + 1;
    F->nnodes = k + 1;
    return 0;
}

/* One property (name k, value: on, its string s or NULL, its number num)
 * into state bits and level. */
static void ax_state1(const char *k, bool on, const char *s, double num, unsigned *stp,
                      int *level)
{
    unsigned st = *stp;
    {
        if (strcmp(k, "disabled") == 0 && on)
            st |= ST_DISABLED;
        else if (strcmp(k, "checked") == 0 || strcmp(k, "pressed") == 0) {
            unsigned bit = k[0] == 'c' ? ST_CHECKED : ST_PRESSED;
            if (on)
                st |= bit;
            else if (s && strcmp(s, "mixed") == 0)
                st |= ST_MIXED;
        } else if (strcmp(k, "expanded") == 0)
            st |= on ? ST_EXPANDED : ST_COLLAPSED;
        else if (strcmp(k, "selected") == 0 && on)
            st |= ST_SELECTED;
        else if (strcmp(k, "required") == 0 && on)
            st |= ST_REQUIRED;
        else if (strcmp(k, "focused") == 0 && on)
            st |= ST_FOCUSED;
        else if (strcmp(k, "readonly") == 0 && on)
            st |= ST_READONLY;
        else if (strcmp(k, "invalid") == 0 && s && strcmp(s, "false") != 0)
            st |= ST_INVALID;
        else if (strcmp(k, "focusable") == 0 && on)
            st |= ST_FOCUSABLE;
        else if (strcmp(k, "editable") == 0 && s)
            st |= ST_EDITABLE;
        else if (strcmp(k, "level") == 0)
            *level = num >= 1 && num < 10 ? (int)num : 0;
    }
    *stp = st;
}

/* The properties that matter, as state bits and level. */
static unsigned ax_states(const json_val *props, int *level)
{
    unsigned st = 0;
    for (const json_val *p = json_first(props); p; p = json_next(p)) {
        const char *k = json_get_str(p, "name");
        const json_val *v = json_get(json_get(p, "value"), "value");
        if (!k)
            continue;
        const char *s = json_str(v, NULL);
        bool on = json_bool(v) || (s && strcmp(s, "true") == 0);
        ax_state1(k, on, s, json_num(v), &st, level);
    }
    return st;
}

/* Digest a parsed getFullAXTree result into F (the reference for the
 * stream, and what snap_ax_digest_check compares it with); ax_finish
 * next. */
static int ax_parse(frame_st *F, const json_val *result)
{
    int64_t *kids = NULL;
    size_t ck = 0;
    int rc = 0;
    for (const json_val *x = json_first(json_get(result, "nodes")); x && !rc;
         x = json_next(x)) {
        axpend p;
        memset(&p, 0, sizeof p);
        p.id = json_get_str(x, "nodeId");
        p.role = ax_strval(json_get(x, "role"));
        p.name = ax_strval(json_get(x, "name"));
        p.value = ax_strval(json_get(x, "value"));
        const json_val *vv = json_get(json_get(x, "value"), "value");
        if (json_is(vv, JSON_NUMBER)) {
            p.has_num = true;
            p.num = json_num(vv);
        }
        const json_val *cl = json_get(x, "childIds");
        size_t n = json_len(cl);
        if (n > ck) {
            int64_t *nk = realloc(kids, n * sizeof *nk);
            if (!nk) {
                rc = SNAP_ENOMEM;
                break;
            }
            kids = nk;
            ck = n;
        }
        for (const json_val *c = json_first(cl); c; c = json_next(c))
            kids[p.nk++] = ax_id(json_str(c, NULL));
        p.kids = kids;
        p.st = ax_states(json_get(x, "properties"), &p.level);
        p.backend = (int)json_get_int(x, "backendDOMNodeId", 0);
        p.ignored = json_bool(json_get(x, "ignored"));
        rc = ax_add(F, &p);
    }
    free(kids);
    return rc;
}

/* The records are complete: children by index; the nodeId index goes.
 * The indices are written over the child ids in place (index i's 4 bytes
 * lie at or below id i's 4 or 8, and every id is read before it is
 * overwritten), then the buffer is cut to their size: no second list at
 * any time. */
static int ax_finish(frame_st *F)
{
    if (F->str.oom)
        return SNAP_ENOMEM;
    char *buf = (char *)F->kid;
    if (!buf) {
        buf = malloc(sizeof(int32_t));
        if (!buf)
            return SNAP_ENOMEM;
    }
    for (size_t i = 0; i < F->nkid; i++) {
        int64_t id = ax_idv(F, buf, i);
        int32_t k = ax_find(F, id);
        memcpy(buf + i * sizeof k, &k, sizeof k);
    }
    free(F->hash);
    free(F->ids);
    F->hash = NULL;
    F->ids = NULL;
    F->kid = NULL;
    F->kid_cap = F->hcap = 0;
    F->wide = false;
    char *nb = realloc(buf, (F->nkid ? F->nkid : 1) * sizeof(int32_t));
    F->kix = (int32_t *)(void *)(nb ? nb : buf);
    return 0;
}

/* Free a frame's records (what a failed AX reply left half-digested,
 * or all of them once the view is built); F is then empty. */
static void ax_drop(frame_st *F)
{
    for (size_t i = 0; i < F->nchunk; i++)
        free(F->nodes[i]);
    free(F->nodes);
    free(F->ids);
    free(F->kid);
    free(F->kix);
    free(F->hash);
    free(F->str.p);
    free(F->roles);
    free(F->rcls);
    F->nodes = NULL;
    F->ids = NULL;
    F->kid = NULL;
    F->kix = NULL;
    F->hash = NULL;
    F->roles = NULL;
    F->rcls = NULL;
    memset(&F->str, 0, sizeof F->str);
    F->nnodes = F->nkid = F->kid_cap = F->hcap = F->nroles = F->caproles = 0;
    F->nchunk = F->released = 0;
    F->preorder = false;
    F->wide = false;
}

/* ---- AX replies as a stream ----
 *
 * The same digest as ax_parse, fed by the events of the reply while it
 * arrives (cdp_send_sink), so the reply is never held: a path machine over
 * result.nodes[i].{nodeId, ignored, role.value, name.value, value.value,
 * childIds[], backendDOMNodeId, properties[].{name, value.value}}; all else
 * is skipped. Each node is gathered in scratch buffers and committed at its
 * end with the rules of ax_parse (so member order inside a node does not
 * matter): the first of a repeated key wins, as json_get does; a field of
 * the wrong type counts as absent; strings stop at an embedded NUL. */

enum { AF_OTHER, AF_ID, AF_IGNORED, AF_ROLE, AF_NAME, AF_VALUE, AF_KIDS, AF_BACKEND,
       AF_PROPS };

typedef struct {
    frame_st *F;
    bool oom;
    bool nodes_key, nodes_seen;
    int in_nodes;                /* 1 inside result.nodes */
    bool in_node;                /* inside an object element of nodes */
    int field;                   /* AF_* of the current depth-3 member */
    unsigned seen;               /* fields met in this node (first wins) */
    bool ctr_obj;                /* the depth-3 value is an object */
    bool sub, subseen;           /* role/name/value: at its first "value" */
    sbuf id, role, name, value, kid;
    bool has_id, has_role, has_name, has_value, ignored, has_num;
    double num;
    int backend;
    int64_t *kids;
    size_t nk, ck;
    /* properties[] */
    bool in_prop, pv_obj, pname_seen, pvalue_seen, pvv_seen;
    int pfield;                  /* 1 "name", 2 "value" */
    bool pvkey;
    sbuf pname;
    bool has_pname;
    int pvtype;                  /* 0 other, 1 true, 2 string, 3 number */
    char pstr[16];
    size_t pstr_len;
    bool pstr_nul;
    double pnum;
    unsigned st;
    int level;
} axsink;

static void axs_free(axsink *S)
{
    free(S->id.p);
    free(S->role.p);
    free(S->name.p);
    free(S->value.p);
    free(S->kid.p);
    free(S->pname.p);
    free(S->kids);
}

static void sb_clear(sbuf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = 0;
}

static void axs_push_kid(axsink *S, int64_t id)
{
    if (S->nk == S->ck) {
        size_t n = S->ck ? S->ck * 2 : 16;
        int64_t *nk = realloc(S->kids, n * sizeof *nk);
        if (!nk) {
            S->oom = true;
            return;
        }
        S->kids = nk;
        S->ck = n;
    }
    S->kids[S->nk++] = id;
}

/* Add one node: ax_add, as ax_parse does. */
static void axs_commit(axsink *S)
{
    if (S->id.oom || S->role.oom || S->name.oom || S->value.oom) {
        S->oom = true;
        return;
    }
    axpend p;
    memset(&p, 0, sizeof p);
    p.id = S->has_id ? S->id.p : NULL;
    p.role = S->has_role ? S->role.p : NULL;
    p.name = S->has_name ? S->name.p : NULL;
    p.value = S->has_value ? S->value.p : NULL;
    p.has_num = S->has_num;
    p.num = S->num;
    p.kids = S->kids;
    p.nk = S->nk;
    p.st = S->st;
    p.level = S->level;
    p.backend = S->backend;
    p.ignored = S->ignored;
    if (ax_add(S->F, &p))
        S->oom = true;
}

static void axs_node_begin(axsink *S)
{
    S->in_node = true;
    S->field = AF_OTHER;
    S->seen = 0;
    S->has_id = S->has_role = S->has_name = S->has_value = false;
    S->ignored = S->has_num = false;
    S->num = 0;
    S->backend = 0;
    S->nk = 0;
    S->st = 0;
    S->level = 0;
    sb_clear(&S->id);
    sb_clear(&S->role);
    sb_clear(&S->name);
    sb_clear(&S->value);
}

static void axs_prop_end(axsink *S)
{
    if (!S->has_pname)
        return;
    const char *sv = S->pvtype == 2 ? S->pstr : NULL;
    bool on = S->pvtype == 1 || (sv && strcmp(sv, "true") == 0);
    ax_state1(S->pname.p, on, sv, S->pvtype == 3 ? S->pnum : 0, &S->st, &S->level);
}

static bool is_text(const json_event *ev)
{
    return ev->type == JSON_EV_STR || ev->type == JSON_EV_STR_PART;
}

static bool is_value(const json_event *ev)
{
    return ev->type != JSON_EV_KEY && ev->type != JSON_EV_OBJ_END &&
           ev->type != JSON_EV_ARR_END;
}

/* Text of a string value into b (pieces appended); true on its last piece. */
static bool axs_text(sbuf *b, const json_event *ev)
{
    sb_putn(b, ev->str, ev->len);
    return ev->type == JSON_EV_STR;
}

/* Depth 4 and below, inside a node (d = ev->depth). */
static void axs_inner(axsink *S, const json_event *ev, unsigned d)
{
    int f = S->field;
    if (f == AF_ROLE || f == AF_NAME || f == AF_VALUE) {
        if (d != 4 || !S->ctr_obj)
            return;
        if (ev->type == JSON_EV_KEY) {
            S->sub = !S->subseen && strcmp(ev->str, "value") == 0;
            S->subseen |= S->sub;
            return;
        }
        if (!S->sub || !is_value(ev))
            return;
        sbuf *b = f == AF_ROLE ? &S->role : f == AF_NAME ? &S->name : &S->value;
        bool *has = f == AF_ROLE ? &S->has_role : f == AF_NAME ? &S->has_name : &S->has_value;
        if (is_text(ev)) {
            if (axs_text(b, ev)) {
                *has = true;
                S->sub = false;
            }
            return;
        }
        if (f == AF_VALUE && ev->type == JSON_EV_NUM) {
            S->has_num = true;
            S->num = ev->num;
        }
        S->sub = false;
        return;
    }
    if (f == AF_KIDS) {
        if (d != 4 || !is_value(ev))
            return;
        if (is_text(ev)) {
            if (axs_text(&S->kid, ev)) {
                axs_push_kid(S, ax_id(S->kid.p ? S->kid.p : ""));
                sb_clear(&S->kid);
            }
        } else {
            axs_push_kid(S, ax_id(NULL));
        }
        return;
    }
    if (f != AF_PROPS)
        return;
    if (d == 4) {
        if (ev->type == JSON_EV_OBJ_BEGIN) {
            S->in_prop = true;
            S->pname_seen = S->pvalue_seen = S->pvv_seen = false;
            S->pfield = 0;
            S->pv_obj = false;
            S->pvkey = false;
            S->has_pname = false;
            sb_clear(&S->pname);
            S->pvtype = 0;
            S->pstr_len = 0;
            S->pstr[0] = 0;
            S->pstr_nul = false;
            S->pnum = 0;
        } else if (ev->type == JSON_EV_OBJ_END && S->in_prop) {
            axs_prop_end(S);
            S->in_prop = false;
        }
        return;
    }
    if (!S->in_prop)
        return;
    if (d == 5) {
        if (ev->type == JSON_EV_KEY) {
            S->pfield = 0;
            if (!S->pname_seen && strcmp(ev->str, "name") == 0) {
                S->pfield = 1;
                S->pname_seen = true;
            } else if (!S->pvalue_seen && strcmp(ev->str, "value") == 0) {
                S->pfield = 2;
                S->pvalue_seen = true;
            }
            return;
        }
        if (S->pfield == 1 && is_text(ev)) {
            if (axs_text(&S->pname, ev))
                S->has_pname = true;
        } else if (S->pfield == 2 && ev->type == JSON_EV_OBJ_BEGIN) {
            S->pv_obj = true;
        }
        return;
    }
    if (d != 6 || !S->pv_obj)
        return;
    if (ev->type == JSON_EV_KEY) {
        S->pvkey = !S->pvv_seen && strcmp(ev->str, "value") == 0;
        S->pvv_seen |= S->pvkey;
        return;
    }
    if (!S->pvkey || !is_value(ev))
        return;
    if (is_text(ev)) {
        /* Only its first 15 bytes matter: it is compared with short words. */
        for (size_t i = 0; i < ev->len && !S->pstr_nul && S->pstr_len < 15; i++) {
            if (!ev->str[i])
                S->pstr_nul = true;
            else
                S->pstr[S->pstr_len++] = ev->str[i];
        }
        S->pstr[S->pstr_len] = 0;
        if (ev->type == JSON_EV_STR) {
            S->pvtype = 2;
            S->pvkey = false;
        }
        return;
    }
    S->pvtype = ev->type == JSON_EV_TRUE ? 1 : ev->type == JSON_EV_NUM ? 3 : 0;
    S->pnum = ev->num;
    S->pvkey = false;
}

/* The sink of cdp_send_sink for Accessibility.getFullAXTree. */
static int ax_event(void *ud, const json_event *ev)
{
    axsink *S = ud;
    unsigned d = ev->depth;
    if (d == 1) {
        if (ev->type == JSON_EV_KEY) {
            S->nodes_key = !S->nodes_seen && strcmp(ev->str, "nodes") == 0;
            S->nodes_seen |= S->nodes_key;
        } else if (S->nodes_key && (ev->type == JSON_EV_ARR_BEGIN ||
                                    ev->type == JSON_EV_OBJ_BEGIN)) {
            S->in_nodes = 1;
            S->nodes_key = false;
        } else if (S->in_nodes == 1 && (ev->type == JSON_EV_ARR_END ||
                                        ev->type == JSON_EV_OBJ_END)) {
            S->in_nodes = 2;
        } else if (is_value(ev)) {
            S->nodes_key = false;
        }
        return 0;
    }
    if (d < 2 || S->in_nodes != 1)
        return 0;
    if (d == 2) {
        if (ev->type == JSON_EV_OBJ_BEGIN) {
            axs_node_begin(S);
        } else if (ev->type == JSON_EV_OBJ_END && S->in_node) {
            S->in_node = false;
            axs_commit(S);
        }
        return S->oom ? CDP_ENOMEM : 0;
    }
    if (!S->in_node)
        return 0;
    if (d == 3) {
        if (ev->type == JSON_EV_KEY) {
            static const char *const names[] = {
                "", "nodeId", "ignored", "role", "name", "value", "childIds",
                "backendDOMNodeId", "properties",
            };
            S->field = AF_OTHER;
            for (int f = 1; f <= AF_PROPS; f++) {
                if (strcmp(ev->str, names[f]) == 0) {
                    if (!(S->seen & (1u << f))) {
                        S->field = f;
                        S->seen |= 1u << f;
                    }
                    break;
                }
            }
            return 0;
        }
        if (!is_value(ev))
            return 0;
        switch (S->field) {
        case AF_ID:
            if (is_text(ev) && axs_text(&S->id, ev))
                S->has_id = true;
            break;
        case AF_IGNORED:
            S->ignored = ev->type == JSON_EV_TRUE;
            break;
        case AF_BACKEND:
            if (ev->type == JSON_EV_NUM && ev->is_int)
                S->backend = (int)ev->i;
            break;
        case AF_ROLE:
        case AF_NAME:
        case AF_VALUE:
            S->ctr_obj = ev->type == JSON_EV_OBJ_BEGIN;
            S->sub = S->subseen = false;
            break;
        default:
            break;
        }
        return 0;
    }
    axs_inner(S, ev, d);
    return S->oom || S->kid.oom || S->pname.oom ? CDP_ENOMEM : 0;
}

/* Same record (but for where its child list lies)? */
static bool ax_same(const frame_st *A, size_t i, const frame_st *B, size_t j)
{
    const axn *x = ax_at(A, i), *y = ax_at(B, j);
    const char *xn = ax_name(A, x), *yn = ax_name(B, y);
    const char *xv = ax_value(A, x), *yv = ax_value(B, y);
    double xd = 0, yd = 0;
    bool xh = ax_num(A, x, &xd), yh = ax_num(B, y, &yd);
    return ax_nkids(A, i) == ax_nkids(B, j) &&
           x->backend == y->backend && x->st == y->st && x->level == y->level &&
           x->flags == y->flags && xh == yh && (!xh || memcmp(&xd, &yd, sizeof xd) == 0) &&
           strcmp(ax_role(A, x), ax_role(B, y)) == 0 && !xn == !yn &&
           (!xn || strcmp(xn, yn) == 0) && !xv == !yv && (!xv || strcmp(xv, yv) == 0);
}

static int ax_root(const frame_st *F);
static int ax_reorder(frame_st *F);

/* The test side of ax_reorder: A (reordered) and B (as sent), walked depth
 * first from their roots in step (at most 4 visits per record, for
 * cycles), meet the same records; and when A is marked preorder, its
 * indices rise strictly along the walk. */
static bool ax_same_tree(const frame_st *A, const frame_st *B, char *why, size_t cap)
{
    int ra = ax_root(A), rb = ax_root(B);
    if ((ra < 0) != (rb < 0) || (A->preorder && ra > 0)) {
        snprintf(why, cap, "reorder: roots %d/%d", ra, rb);
        return false;
    }
    if (ra < 0)
        return true;
    typedef struct { int32_t a, b; size_t c; } pair;
    size_t ns = 0, cp = 64, budget = 4 * (A->nnodes + A->nkid) + 4;
    pair *st = malloc(cp * sizeof *st);
    long last = -1;
    if (!st) {
        snprintf(why, cap, "reorder: out of memory");
        return false;
    }
    st[ns++] = (pair){ra, rb, 0};
    bool ok = true;
    while (ns && budget--) {
        pair *top = &st[ns - 1];
        if (top->c == 0) {
            if (!ax_same(A, (size_t)top->a, B, (size_t)top->b) ||
                (A->preorder && top->a <= last)) {
                snprintf(why, cap, "reorder: node %d/%d differs", (int)top->a, (int)top->b);
                ok = false;
                break;
            }
            last = top->a;
        }
        if (top->c >= ax_nkids(A, (size_t)top->a)) {
            ns--;
            continue;
        }
        int ka = A->kix[ax_at(A, (size_t)top->a)->kid0 + top->c];
        int kb = B->kix[ax_at(B, (size_t)top->b)->kid0 + top->c];
        int sa = top->a, sb = top->b;
        top->c++;
        if ((ka < 0) != (kb < 0) || (ka == sa) != (kb == sb)) {
            snprintf(why, cap, "reorder: children of %d/%d differ", sa, sb);
            ok = false;
            break;
        }
        if (ka < 0 || ka == sa)
            continue;
        if (ns == cp) {
            pair *n2 = realloc(st, 2 * cp * sizeof *st);
            if (!n2) {
                snprintf(why, cap, "reorder: out of memory");
                ok = false;
                break;
            }
            st = n2;
            cp *= 2;
        }
        st[ns++] = (pair){ka, kb, 0};
    }
    free(st);
    return ok;
}

/* Test hook (tests/test_snapshot.c declares it too): digest the AX reply
 * text reply[0..len) both ways, json_parse + ax_parse and json_stream in
 * pieces of `piece` bytes + ax_event, and compare the records. Returns 0
 * when they are equal, else -1 with why filled. */
/* Test hook: the tree a getFullAXTree reply digests to, as text (for each
 * record "index:kid,kid;" after ax_finish), and whether its ids needed 64
 * bits. 0, or -1 when it cannot be digested. */
int snap_ax_shape(const char *reply, size_t len, char *out, size_t cap, bool *wide);
int snap_ax_shape(const char *reply, size_t len, char *out, size_t cap, bool *wide)
{
    frame_st A;
    memset(&A, 0, sizeof A);
    json_doc *d = json_parse(reply, len, NULL, NULL);
    int rc = -1;
    if (d && ax_parse(&A, json_doc_root(d)) == 0) {
        *wide = A.wide;
        if (ax_finish(&A) == 0) {
            size_t n = 0;
            out[0] = 0;
            for (size_t i = 0; i < A.nnodes && n < cap; i++) {
                n += (size_t)snprintf(out + n, cap - n, "%zu:", i);
                size_t k0 = ax_at(&A, i)->kid0;
                size_t k1 = i + 1 < A.nnodes ? ax_at(&A, i + 1)->kid0 : A.nkid;
                for (size_t k = k0; k < k1 && n < cap; k++)
                    n += (size_t)snprintf(out + n, cap - n, "%d,", A.kix[k]);
                if (n < cap)
                    n += (size_t)snprintf(out + n, cap - n, ";");
            }
            rc = n < cap ? 0 : -1;
        }
    }
    json_doc_free(d);
    ax_drop(&A);
    return rc;
}

int snap_ax_digest_check(const char *reply, size_t len, size_t piece, size_t *nodes,
                         char *why, size_t cap);
int snap_ax_digest_check(const char *reply, size_t len, size_t piece, size_t *nodes,
                         char *why, size_t cap)
{
    frame_st A, B;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    axsink S;
    memset(&S, 0, sizeof S);
    S.F = &B;
    int rc = -1;
    json_doc *d = json_parse(reply, len, NULL, NULL);
    json_stream *js = json_stream_new(NULL, NULL, NULL);
    snprintf(why, cap, "ok");
    if (!d || !js) {
        snprintf(why, cap, "cannot parse the reply");
        goto out;
    }
    const json_val *result = json_get(json_doc_root(d), "result");
    if (!result)
        result = json_doc_root(d);
    int ra = ax_parse(&A, result);
    if (ra) {
        snprintf(why, cap, "ax_parse: %d", ra);
        goto out;
    }
    /* Feed the result's own text: write it back, then stream that. */
    size_t tl;
    char *text = json_write(result, &tl);
    json_stream_free(js);
    js = json_stream_new(NULL, ax_event, &S);
    int r = 0;
    for (size_t off = 0; text && !r && off < tl; off += piece ? piece : tl)
        r = json_stream_feed(js, text + off, piece && piece < tl - off ? piece : tl - off);
    if (!r)
        r = json_stream_end(js);
    free(text);
    if (r || !text) {
        snprintf(why, cap, "stream: %d", r);
        goto out;
    }
    if (nodes)
        *nodes = A.nnodes;
    if (A.nnodes != B.nnodes || A.nkid != B.nkid || A.str.len != B.str.len ||
        A.nroles != B.nroles) {
        snprintf(why, cap, "counts: %zu/%zu nodes, %zu/%zu kids, %zu/%zu bytes", A.nnodes,
                 B.nnodes, A.nkid, B.nkid, A.str.len, B.str.len);
        goto out;
    }
    for (size_t i = 0; i < A.nnodes; i++) {
        if (ax_idv(&A, A.ids, i) != ax_idv(&B, B.ids, i)) {
            snprintf(why, cap, "node %zu: id %lld/%lld", i, (long long)ax_idv(&A, A.ids, i),
                     (long long)ax_idv(&B, B.ids, i));
            goto out;
        }
    }
    if (ax_finish(&A) != 0 || ax_finish(&B) != 0) {
        snprintf(why, cap, "ax_finish failed");
        goto out;
    }
    for (size_t i = 0; i < A.nnodes; i++) {
        if (ax_at(&A, i)->kid0 != ax_at(&B, i)->kid0 || !ax_same(&A, i, &B, i)) {
            snprintf(why, cap, "node %zu differs", i);
            goto out;
        }
    }
    for (size_t i = 0; i < A.nkid; i++) {
        if (A.kix[i] != B.kix[i]) {
            snprintf(why, cap, "kid %zu differs", i);
            goto out;
        }
    }
    /* Reordered for the walk, the records still make the same tree. */
    if (ax_reorder(&A) != 0) {
        snprintf(why, cap, "reorder: out of memory");
        goto out;
    }
    if (!ax_same_tree(&A, &B, why, cap))
        goto out;
    rc = 0;
out:
    json_stream_free(js);
    json_doc_free(d);
    axs_free(&S);
    ax_drop(&A);
    ax_drop(&B);
    return rc;
}

/* A value made only of bullets is a masked password. */
static bool masked(const char *s)
{
    if (!s || !*s)
        return false;
    while (*s) {
        if (strncmp(s, "\xe2\x80\xa2", 3) == 0 || strncmp(s, "\xe2\x97\x8f", 3) == 0)
            s += 3;
        else if (*s == '*')
            s++;
        else
            return false;
    }
    return true;
}

/* ---- DOMSnapshot: secrets and clickables ---- */

static void secret_add(sess_st *S, int backend, unsigned kind)
{
    if (kind)
        ids_add(&S->secret, backend);
    if (kind & SNAP_SECRET_PW)
        ids_add(&S->pw, backend);
    if (kind & SNAP_SECRET_OTC)
        ids_add(&S->otc, backend);
}

static void secrets_sort(sess_st *S)
{
    ids_sort(&S->secret);
    ids_sort(&S->pw);
    ids_sort(&S->otc);
}

/* The SNAP_SECRET_* kinds the DOM snapshot gave a node. */
static unsigned secret_kind(const sess_st *S, int backend)
{
    if (!ids_has(&S->secret, backend))
        return 0;
    unsigned k = 0;
    if (ids_has(&S->pw, backend))
        k |= SNAP_SECRET_PW;
    if (ids_has(&S->otc, backend))
        k |= SNAP_SECRET_OTC;
    return k ? k : SNAP_SECRET_CC;
}

static void dom_parse(sess_st *S, const json_val *result)
{
    const json_val *strings = json_get(result, "strings");
    size_t ns = json_len(strings);
    /* Index the string table once (json_at is O(i)). */
    const char **tab = ns ? calloc(ns, sizeof *tab) : NULL;
    if (ns && !tab)
        return;
    size_t k = 0;
    for (const json_val *s = json_first(strings); s; s = json_next(s))
        tab[k++] = json_str(s, NULL);
    for (const json_val *d = json_first(json_get(result, "documents")); d;
         d = json_next(d)) {
        const json_val *nodes = json_get(d, "nodes");
        const json_val *be = json_first(json_get(nodes, "backendNodeId"));
        const json_val *nm = json_first(json_get(nodes, "nodeName"));
        const json_val *at = json_first(json_get(nodes, "attributes"));
        size_t nn = json_len(json_get(nodes, "backendNodeId"));
        int *backs = nn ? calloc(nn, sizeof *backs) : NULL;
        if (nn && !backs)
            break;
        for (size_t i = 0; i < nn && be; i++) {
            backs[i] = (int)json_num(be);
            int64_t ni = -1;
            json_int(nm, &ni);
            const char *name = ni >= 0 && (size_t)ni < ns ? tab[ni] : NULL;
            if (name && strcmp(name, "INPUT") == 0) {
                unsigned kind = 0;
                const json_val *x = json_first(at);
                while (x && json_next(x)) {
                    int64_t ki = -1, vi = -1;
                    json_int(x, &ki);
                    json_int(json_next(x), &vi);
                    const char *key = ki >= 0 && (size_t)ki < ns ? tab[ki] : "";
                    const char *val = vi >= 0 && (size_t)vi < ns ? tab[vi] : "";
                    if (key && val && strcmp(key, "type") == 0 &&
                        contains_ci(val, strlen(val), "password"))
                        kind |= SNAP_SECRET_PW;
                    if (key && val && strcmp(key, "autocomplete") == 0 &&
                        (contains_ci(val, strlen(val), "one-time-code") ||
                         contains_ci(val, strlen(val), "current-password") ||
                         contains_ci(val, strlen(val), "new-password")))
                        kind |= SNAP_SECRET_OTC;
                    if (key && val && strcmp(key, "autocomplete") == 0 &&
                        contains_ci(val, strlen(val), "cc-"))
                        kind |= SNAP_SECRET_CC;
                    x = json_next(json_next(x));
                }
                secret_add(S, backs[i], kind);
            }
            be = json_next(be);
            nm = json_next(nm);
            at = json_next(at);
        }
        for (const json_val *ix = json_first(json_get(json_get(nodes, "isClickable"), "index"));
             ix; ix = json_next(ix)) {
            int64_t i = -1;
            if (json_int(ix, &i) && i >= 0 && (size_t)i < nn)
                ids_add(&S->click, backs[i]);
        }
        free(backs);
    }
    free(tab);
    secrets_sort(S);
    ids_sort(&S->click);
    S->dom_ok = true;
}

/* ---- DOMSnapshot as a stream ----
 *
 * The captureSnapshot reply is mostly small numbers (a 2.9 MB reply parses
 * into a 42 MB document), so it is digested while it arrives: per document,
 * the backend id and name index of each node, its attribute index pairs and
 * the isClickable node indices; then, as result.strings streams past (it
 * comes after "documents"), one flag byte per string says whether it is
 * "INPUT", "type", "autocomplete", or contains "password" or
 * "one-time-code". The sets are resolved at the end exactly as dom_parse
 * does (snap_dom_digest_check compares the two). */

enum { DS_INPUT = 1, DS_TYPE = 2, DS_AUTOC = 4, DS_PW = 8, DS_OTC = 16, DS_CC = 32 };

typedef struct {
    int *v;
    size_t n, cap;
} ivec;

static bool iv_push(ivec *v, int x)
{
    if (v->n == v->cap) {
        size_t c = v->cap ? v->cap * 2 : 256;
        int *nv = realloc(v->v, c * sizeof *nv);
        if (!nv)
            return false;
        v->v = nv;
        v->cap = c;
    }
    v->v[v->n++] = x;
    return true;
}

typedef struct {
    ivec backs, names;           /* per node of the current document */
    ivec attr_off;               /* per node: start in attrs (pairs follow) */
    ivec attrs;                  /* string indices, k v k v ... */
    ivec click;                  /* node indices */
} dsdoc;

typedef struct {
    dsdoc *docs;
    size_t ndocs, capdocs;
    int where;                   /* 1 documents, 2 strings, 0 elsewhere */
    int field;                   /* 1 backendNodeId 2 nodeName 3 attributes 4 isClickable */
    bool in_nodes, in_click_index;
    unsigned char *flags;        /* per string */
    size_t nstr, capstr;
    char head[16];               /* first bytes of the current string */
    size_t headlen, total;
    char carry[16];              /* last bytes of the previous piece */
    size_t ncarry;
    unsigned char cur;           /* flags gathered for the current string */
    bool oom;
} domsink;

static void ds_free(domsink *S)
{
    for (size_t i = 0; i < S->ndocs; i++) {
        dsdoc *d = &S->docs[i];
        free(d->backs.v);
        free(d->names.v);
        free(d->attr_off.v);
        free(d->attrs.v);
        free(d->click.v);
    }
    free(S->docs);
    free(S->flags);
    memset(S, 0, sizeof *S);
}

static void ds_scan(domsink *S, const char *p, size_t n)
{
    /* Across the piece boundary: the carried tail plus the piece's start. */
    char edge[32];
    size_t k = S->ncarry;
    memcpy(edge, S->carry, k);
    size_t take = n < 15 ? n : 15;
    memcpy(edge + k, p, take);
    if (contains_ci(edge, k + take, "password") || contains_ci(p, n, "password"))
        S->cur |= DS_PW;
    if (contains_ci(edge, k + take, "one-time-code") || contains_ci(p, n, "one-time-code"))
        S->cur |= DS_OTC;
    if (contains_ci(edge, k + take, "cc-") || contains_ci(p, n, "cc-"))
        S->cur |= DS_CC;
    size_t keep = n < 15 ? n : 15;
    if (S->ncarry + n <= 15) {
        memcpy(S->carry + S->ncarry, p, n);
        S->ncarry += n;
    } else {
        if (n < 15) {
            size_t old = 15 - n;
            memmove(S->carry, S->carry + S->ncarry - old, old);
            memcpy(S->carry + old, p, n);
        } else {
            memcpy(S->carry, p + n - keep, keep);
        }
        S->ncarry = 15;
    }
    if (S->headlen < sizeof S->head) {
        size_t c = sizeof S->head - S->headlen < n ? sizeof S->head - S->headlen : n;
        memcpy(S->head + S->headlen, p, c);
        S->headlen += c;
    }
    S->total += n;
}

static void ds_string_end(domsink *S)
{
    if (S->nstr == S->capstr) {
        size_t c = S->capstr ? S->capstr * 2 : 1024;
        unsigned char *nf = realloc(S->flags, c);
        if (!nf) {
            S->oom = true;
            return;
        }
        S->flags = nf;
        S->capstr = c;
    }
    unsigned char f = S->cur;
    if (S->total == 5 && memcmp(S->head, "INPUT", 5) == 0)
        f |= DS_INPUT;
    if (S->total == 4 && memcmp(S->head, "type", 4) == 0)
        f |= DS_TYPE;
    if (S->total == 12 && memcmp(S->head, "autocomplete", 12) == 0)
        f |= DS_AUTOC;
    S->flags[S->nstr++] = f;
    S->cur = 0;
    S->headlen = S->total = S->ncarry = 0;
}

static int ds_event(void *ud, const json_event *ev)
{
    domsink *S = ud;
    unsigned d = ev->depth;
    if (S->oom)
        return CDP_ENOMEM;
    if (d == 1) {
        if (ev->type == JSON_EV_KEY)
            S->where = strcmp(ev->str, "documents") == 0 ? 1
                       : strcmp(ev->str, "strings") == 0 ? 2 : 0;
        return 0;
    }
    if (S->where == 2) {
        if (d == 2 && is_text(ev)) {
            ds_scan(S, ev->str, ev->len);
            if (ev->type == JSON_EV_STR)
                ds_string_end(S);
        } else if (d == 2 && is_value(ev) && ev->type != JSON_EV_ARR_BEGIN &&
                   ev->type != JSON_EV_OBJ_BEGIN) {
            ds_string_end(S);    /* not a string: keeps the indices aligned */
        }
        return S->oom ? CDP_ENOMEM : 0;
    }
    if (S->where != 1 || d < 2)
        return 0;
    if (d == 2) {
        if (ev->type == JSON_EV_OBJ_BEGIN) {
            if (S->ndocs == S->capdocs) {
                size_t c = S->capdocs ? S->capdocs * 2 : 4;
                dsdoc *nd = realloc(S->docs, c * sizeof *nd);
                if (!nd)
                    return CDP_ENOMEM;
                S->docs = nd;
                S->capdocs = c;
            }
            memset(&S->docs[S->ndocs++], 0, sizeof S->docs[0]);
        }
        return 0;
    }
    if (!S->ndocs)
        return 0;
    dsdoc *doc = &S->docs[S->ndocs - 1];
    if (d == 3) {
        if (ev->type == JSON_EV_KEY)
            S->in_nodes = strcmp(ev->str, "nodes") == 0;
        return 0;
    }
    if (!S->in_nodes)
        return 0;
    if (d == 4) {
        if (ev->type == JSON_EV_KEY)
            S->field = strcmp(ev->str, "backendNodeId") == 0 ? 1
                       : strcmp(ev->str, "nodeName") == 0 ? 2
                       : strcmp(ev->str, "attributes") == 0 ? 3
                       : strcmp(ev->str, "isClickable") == 0 ? 4 : 0;
        return 0;
    }
    bool ok = true;
    int64_t v = ev->type == JSON_EV_NUM && ev->is_int ? ev->i : -1;
    if (d == 5) {
        if (S->field == 1 && ev->type == JSON_EV_NUM)
            ok = iv_push(&doc->backs, (int)ev->num);
        else if (S->field == 2 && is_value(ev))
            ok = iv_push(&doc->names, (int)v);
        else if (S->field == 3 && ev->type == JSON_EV_ARR_BEGIN)
            ok = iv_push(&doc->attr_off, (int)doc->attrs.n);
        else if (S->field == 4 && ev->type == JSON_EV_KEY)
            S->in_click_index = strcmp(ev->str, "index") == 0;
    } else if (d == 6) {
        if (S->field == 3 && is_value(ev))
            ok = iv_push(&doc->attrs, (int)v);
        else if (S->field == 4 && S->in_click_index && is_value(ev))
            ok = iv_push(&doc->click, (int)v);
    }
    if (!ok)
        S->oom = true;
    return S->oom ? CDP_ENOMEM : 0;
}

/* Resolve the streamed reply into the session's sets (as dom_parse does). */
static void ds_finish(sess_st *T, const domsink *S)
{
    for (size_t di = 0; di < S->ndocs; di++) {
        const dsdoc *d = &S->docs[di];
        size_t nn = d->backs.n;
        for (size_t i = 0; i < nn; i++) {
            int ni = i < d->names.n ? d->names.v[i] : -1;
            if (ni < 0 || (size_t)ni >= S->nstr || !(S->flags[ni] & DS_INPUT))
                continue;
            if (i >= d->attr_off.n)
                continue;
            size_t a0 = (size_t)d->attr_off.v[i];
            size_t a1 = i + 1 < d->attr_off.n ? (size_t)d->attr_off.v[i + 1] : d->attrs.n;
            unsigned kind = 0;
            for (size_t k = a0; k + 1 < a1; k += 2) {
                int ki = d->attrs.v[k], vi = d->attrs.v[k + 1];
                unsigned char kf = ki >= 0 && (size_t)ki < S->nstr ? S->flags[ki] : 0;
                unsigned char vf = vi >= 0 && (size_t)vi < S->nstr ? S->flags[vi] : 0;
                if ((kf & DS_TYPE) && (vf & DS_PW))
                    kind |= SNAP_SECRET_PW;
                if ((kf & DS_AUTOC) && (vf & (DS_OTC | DS_PW)))
                    kind |= SNAP_SECRET_OTC;
                if ((kf & DS_AUTOC) && (vf & DS_CC))
                    kind |= SNAP_SECRET_CC;
            }
            secret_add(T, d->backs.v[i], kind);
        }
        for (size_t k = 0; k < d->click.n; k++) {
            int i = d->click.v[k];
            if (i >= 0 && (size_t)i < nn)
                ids_add(&T->click, d->backs.v[i]);
        }
    }
    secrets_sort(T);
    ids_sort(&T->click);
    T->dom_ok = true;
}

/* Test hook (tests/test_snapshot.c declares it too): digest a DOMSnapshot
 * reply both ways (json_parse + dom_parse, and the stream in pieces of
 * `piece` bytes) and compare the secret and clickable sets. 0 when equal. */
int snap_dom_digest_check(const char *reply, size_t len, size_t piece, size_t *secrets,
                          size_t *clicks, char *why, size_t cap);
int snap_dom_digest_check(const char *reply, size_t len, size_t piece, size_t *secrets,
                          size_t *clicks, char *why, size_t cap)
{
    sess_st A, B;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    domsink S;
    memset(&S, 0, sizeof S);
    int rc = -1;
    char *text = NULL;
    json_stream *js = NULL;
    json_doc *d = json_parse(reply, len, NULL, NULL);
    snprintf(why, cap, "ok");
    const json_val *result = json_get(json_doc_root(d), "result");
    if (!result)
        result = json_doc_root(d);
    if (!d) {
        snprintf(why, cap, "cannot parse the reply");
        goto out;
    }
    dom_parse(&A, result);
    size_t tl;
    text = json_write(result, &tl);
    js = json_stream_new(NULL, ds_event, &S);
    int r = text && js ? 0 : -1;
    for (size_t off = 0; text && !r && off < tl; off += piece ? piece : tl)
        r = json_stream_feed(js, text + off, piece && piece < tl - off ? piece : tl - off);
    if (!r)
        r = json_stream_end(js);
    if (r) {
        snprintf(why, cap, "stream: %d", r);
        goto out;
    }
    ds_finish(&B, &S);
    if (secrets)
        *secrets = A.secret.n;
    if (clicks)
        *clicks = A.click.n;
    if (A.secret.n != B.secret.n || A.click.n != B.click.n || A.pw.n != B.pw.n ||
        A.otc.n != B.otc.n ||
        (A.secret.n && memcmp(A.secret.v, B.secret.v, A.secret.n * sizeof *A.secret.v)) ||
        (A.click.n && memcmp(A.click.v, B.click.v, A.click.n * sizeof *A.click.v))) {
        snprintf(why, cap, "sets differ: secret %zu/%zu, click %zu/%zu", A.secret.n,
                 B.secret.n, A.click.n, B.click.n);
        goto out;
    }
    rc = 0;
out:
    free(text);
    json_stream_free(js);
    json_doc_free(d);
    ds_free(&S);
    free(A.secret.v);
    free(A.click.v);
    free(B.secret.v);
    free(B.click.v);
    free(A.pw.v);
    free(A.otc.v);
    free(B.pw.v);
    free(B.otc.v);
    return rc;
}

/* ---- building the view tree ---- */

/* What a vnode shows of its AX node. */
static void vset_ax(vnode *x, const axn *n)
{
    x->str = n->str;
    x->backend = n->backend;
    x->axf = n->flags;
}

/* What a vnode shows, given its frame's strings. */
static const char *vname_in(const char *str, const vnode *x)
{
    return !(x->vf & VF_NONAME) ? name_at(str, x->str, x->axf) : NULL;
}

static const char *vvalue_in(const char *str, const vnode *x)
{
    return !(x->vf & (VF_NONAME | VF_NOVALUE)) ? value_at(str, x->str, x->axf) : NULL;
}

static bool vnum_in(const char *str, const vnode *x, double *num)
{
    return !(x->vf & VF_NONAME) && num_at(str, x->str, x->axf, num);
}

static const char *vname(const build *B, const vnode *x)
{
    return vname_in(B->fr[x->frame].str.p, x);
}

static const char *vvalue(const build *B, const vnode *x)
{
    return vvalue_in(B->fr[x->frame].str.p, x);
}

/* The text of V_TEXT x (tlen bytes; not NUL-terminated in the arena). */
static char *vtext(const build *B, const vnode *x)
{
    return (x->vf & VF_STR) ? B->fr[x->frame].str.p + x->toff : B->arena.p + x->toff;
}

/* V_FRAME: the frame_st index of the child frame, -1 when not known. */
static int vchild(const vnode *x)
{
    return (int)x->toff - 1;
}

static void walk(build *B, int fi, int ai, int parent, int depth);

/* Text child: merged into the previous sibling when that is text too. */
static void add_text(build *B, int parent, int fi, const char *s)
{
    if (!s || blank(s))
        return;
    int last = -1;
    /* The previous sibling is the last vnode whose parent is `parent`;
     * since vnodes are preorder, it is found walking back over the tail. */
    if (B->nv && parent >= 0) {
        int j = (int)B->nv - 1;
        while (j > parent && B->v[j].parent != parent)
            j = B->v[j].parent;
        if (j > parent && B->v[j].parent == parent)
            last = j;
    }
    /* Runs of text join into one line while nothing else was written to
     * the arena since the run's last piece. */
    if (last >= 0 && B->v[last].kind == V_TEXT && last == B->tail_text &&
        B->arena.len == B->tail_len) {
        vnode *x = &B->v[last];
        if (x->vf & VF_STR) {
            /* Joined text is the arena's: the first piece moves there. */
            size_t off = B->arena.len;
            if (!sb_reserve(&B->arena, x->tlen))
                return;
            sb_putn(&B->arena, vtext(B, x), x->tlen);
            x->toff = (uint32_t)off;
            x->vf &= ~VF_STR & 0x7Fu;
        }
        const char *p = B->arena.p + x->toff;
        bool sp = x->tlen && (p[x->tlen - 1] == ' ' || p[x->tlen - 1] == '\n');
        if (!sp && s[0] != ' ' && s[0] != '\n')
            sb_putc(&B->arena, ' ');
        sb_puts(&B->arena, s);
        B->v[last].tlen = (uint32_t)(B->arena.len - B->v[last].toff);
        B->tail_len = B->arena.len;
        return;
    }
    int i = vnew(B, parent, V_TEXT, fi);
    if (i < 0)
        return;
    B->v[i].aux = 1;
    B->tail_text = i;
    /* A single piece is read where it is, in the frame's strings (the
     * cache keeps them): no copy. */
    const sbuf *str = &B->fr[fi].str;
    if (str->p && s >= str->p && s < str->p + str->len) {
        B->v[i].toff = (uint32_t)(s - str->p);
        B->v[i].tlen = (uint32_t)strlen(s);
        B->v[i].vf |= VF_STR;
    } else {
        B->v[i].toff = (uint32_t)B->arena.len;
        sb_puts(&B->arena, s);
        B->v[i].tlen = (uint32_t)(B->arena.len - B->v[i].toff);
    }
    B->tail_len = B->arena.len;
}

static void walk_deep(build *B, int fi, int ai, int parent);

static void walk_kids(build *B, int fi, int ai, int parent, int depth)
{
    if (depth >= MAX_DEPTH) {
        walk_deep(B, fi, ai, parent);
        return;
    }
    frame_st *F = &B->fr[fi];
    size_t k0 = ax_at(F, (size_t)ai)->kid0, nk = ax_nkids(F, (size_t)ai);
    for (size_t c = 0; c < nk; c++) {
        int k = F->kix[k0 + c];
        if (k >= 0 && k != ai)
            walk(B, fi, k, parent, depth + 1);
    }
}

/* Options of a native select, "a","b",... into the arena. */
static void collect_options(build *B, frame_st *F, int ai, int vi, int depth, int *count)
{
    if (depth > 8)
        return;
    size_t k0 = ax_at(F, (size_t)ai)->kid0, nk = ax_nkids(F, (size_t)ai);
    for (size_t c = 0; c < nk; c++) {
        int k = F->kix[k0 + c];
        if (k < 0 || k == ai)
            continue;
        const axn *o = ax_at(F, (size_t)k);
        if (ax_cls(F, o) & RC_OPTION) {
            if (*count < OPTIONS_MAX) {
                if (*count)
                    sb_putc(&B->arena, ',');
                const char *nm = ax_name(F, o);
                put_quoted(&B->arena, nm ? nm : "", 60);
            }
            (*count)++;
        } else {
            collect_options(B, F, k, vi, depth + 1, count);
        }
    }
}

static int frame_for_owner(build *B, int fi, int backend)
{
    for (size_t i = 0; i < B->nfr; i++)
        if (B->fr[i].parent == fi && B->fr[i].owner == backend && backend && !B->fr[i].placed)
            return (int)i;
    return -1;
}

static void walk_frame_root(build *B, int fi, int parent, int depth);

/* Finish a vnode after its children: flatten unnamed rows and items with
 * one printed child, drop empty containers, and add its printed lines to
 * the parent's count. */
static void finish(build *B, int i)
{
    vnode *x = &B->v[i];
    x->end = (int)B->nv;
    uint32_t kids = 0;
    for (int j = i + 1; j < x->end; j = B->v[j].end)
        kids += B->v[j].aux;
    if (x->kind == V_ELEM && !(x->vf & VF_ACT)) {
        const char *name = vname(B, x), *value = vvalue(B, x);
        bool named = name && *name;
        bool has_value = value && *value;
        if (!named && !has_value && kids == 0 && !(x->vf & VF_OPTS))
            x->vf |= VF_DROP;
        else if (!named && kids == 1 &&
                 (strcmp(vrole(B, x), "li") == 0 || strcmp(vrole(B, x), "row") == 0))
            x->kind = V_FLAT;
        else if (strcmp(vrole(B, x), "img") == 0 && !named)
            x->vf |= VF_DROP;
    }
    if (x->vf & VF_DROP)
        x->aux = 0;
    else if (x->kind == V_FLAT)
        x->aux = kids;
    else
        x->aux = 1;
}

/* Children of a flat wrapper that is clickable: a ref for the wrapper when
 * nothing inside is actionable and it holds some text. */
static void flat_clickable(build *B, int i)
{
    vnode *x = &B->v[i];
    for (int j = i + 1; j < x->end; j++)
        if ((B->v[j].vf & VF_ACT) || B->v[j].kind == V_FRAME)
            return;
    size_t tlen = 0;
    for (int j = i + 1; j < x->end; j++) {
        const char *nm = B->v[j].kind == V_ELEM ? vname(B, &B->v[j]) : NULL;
        if (B->v[j].kind == V_TEXT && !(B->v[j].vf & VF_DROP))
            tlen += B->v[j].tlen;
        else if (nm)
            tlen += strlen(nm);
    }
    if (tlen == 0 || tlen > 200)
        return;
    uint16_t ri = role_ix(B, "clickable");
    x = &B->v[i];
    x->kind = V_ELEM;
    x->role = ri;
    x->vf |= VF_ACT;
}

static void walk(build *B, int fi, int ai, int parent, int depth)
{
    if (B->oom)
        return;
    frame_st *F = &B->fr[fi];
    /* In index order (F->preorder), no record before this one is read
     * again: their chunks go. */
    while (F->preorder && F->released < (size_t)ai >> AXC_SHIFT) {
        free(F->nodes[F->released]);
        F->nodes[F->released++] = NULL;
    }
    const axn *n = ax_at(F, (size_t)ai);
    int32_t backend = n->backend;    /* n is gone after the children */
    unsigned rc = ax_cls(F, n);
    const char *role = ax_role(F, n);
    const char *name = ax_name(F, n);
    /* Below MAX_DEPTH, walk_deep has the node walked without its children
     * (depth > MAX_DEPTH): it walks them itself, flattened. */
    bool shallow = depth > MAX_DEPTH;
    if (rc & RC_DROP)
        return;
    if (n->flags & AX_IGNORED) {
        /* Kept as a flat wrapper when it has children: a card made of
         * plain divs is still a container for row context. */
        if (!(n->flags & AX_KIDS))
            return;
        int w = vnew(B, parent, V_FLAT, fi);
        if (w < 0)
            return;
        vset_ax(&B->v[w], n);
        B->v[w].vf |= VF_NONAME;
        walk_kids(B, fi, ai, w, depth);
        finish(B, w);
        return;
    }
    if (rc & RC_TEXT) {
        add_text(B, parent, fi, name);
        return;
    }
    int level = n->level;
    unsigned st = n->st;
    sess_st *S = &B->ss[F->sess];
    if (rc & RC_FRAME) {
        int i = vnew(B, parent, V_FRAME, fi);
        if (i < 0)
            return;
        vset_ax(&B->v[i], n);
        int cf = frame_for_owner(B, fi, n->backend);
        B->v[i].toff = (uint32_t)(cf + 1);
        if (cf >= 0) {
            B->fr[cf].placed = true;
            walk_frame_root(B, cf, i, shallow ? MAX_DEPTH : depth + 1);
        }
        finish(B, i);
        return;
    }
    bool editable_top = (st & ST_EDITABLE) && !(rc & RC_LEAF) && (rc & RC_EDITBASE);
    bool parent_editable = parent >= 0 && (B->v[parent].st & ST_EDITABLE);
    if (parent_editable)
        return;     /* inside a contenteditable: its value says it */
    bool flat = !editable_top && (rc & RC_FLAT) &&
                !(name && *name && (rc & RC_FLAT_NAMED));
    int i = vnew(B, parent, flat ? V_FLAT : V_ELEM, fi);
    if (i < 0)
        return;
    vnode *x = &B->v[i];
    const char *xrole = editable_top ? "textbox" : role;
    vset_ax(x, n);
    x->st = (uint16_t)st;
    if (flat) {
        uint16_t ri = role_ix(B, xrole);
        x = &B->v[i];
        x->role = ri;
    } else {
        bool act = n->backend > 0 &&
                   ((rc & RC_ACT) || editable_top ||
                    ((st & ST_FOCUSABLE) && !(rc & RC_ROOT) && ids_has(&S->click, n->backend)));
        if (act)
            x->vf |= VF_ACT;
        bool textish = strcmp(xrole, "textbox") == 0 || strcmp(xrole, "searchbox") == 0 ||
                       strcmp(xrole, "combobox") == 0 || strcmp(xrole, "spinbutton") == 0;
        const char *value = ax_value(F, n);
        if (textish && (ids_has(&S->secret, n->backend) || masked(value) ||
                        snap_secret_kind(B->a, B->tab_id, F->f->id, F->f->loader,
                                         n->backend) ||
                        (!S->dom_ok && value && *value &&
                         strcmp(xrole, "combobox") != 0))) {
            x->st |= ST_SECRET;
            x->vf |= VF_NOVALUE;
        }
        if (rc & RC_COMBO) {
            size_t off = B->arena.len;
            int count = 0;
            collect_options(B, F, ai, i, 0, &count);
            x = &B->v[i];
            if (count) {
                if (count > OPTIONS_MAX)
                    sb_printf(&B->arena, ",+%d more", count - OPTIONS_MAX);
                x->toff = (uint32_t)off;
                x->tlen = (uint32_t)(B->arena.len - off);
                x->vf |= VF_OPTS;
            }
        }
        uint16_t ri = role_ix(B, print_role(xrole, level));
        x = &B->v[i];
        x->role = ri;
    }
    if (!(rc & RC_LEAF) && !editable_top && !shallow)
        walk_kids(B, fi, ai, i, depth);
    x = &B->v[i];
    x->end = (int)B->nv;
    if (flat && backend > 0 && ids_has(&S->click, backend) && name == NULL)
        flat_clickable(B, i);
    else if (flat && backend > 0 && ids_has(&S->click, backend) && (rc & RC_GENERIC))
        flat_clickable(B, i);
    x = &B->v[i];
    if (x->kind == V_ELEM && strcmp(vrole(B, x), "clickable") == 0) {
        /* The wrapper now prints as one line: its text is its name. */
        size_t off = B->arena.len;
        for (int j = i + 1; j < x->end; j++) {
            if (B->v[j].kind == V_TEXT) {
                if (B->arena.len > off)
                    sb_putc(&B->arena, ' ');
                /* Room first: the copy may come from the arena itself. */
                if (sb_reserve(&B->arena, B->v[j].tlen))
                    sb_putn(&B->arena, vtext(B, &B->v[j]), B->v[j].tlen);
            }
        }
        x->toff = (uint32_t)off;
        x->tlen = (uint32_t)(B->arena.len - off);
        for (int j = i + 1; j < x->end; j++) {
            B->v[j].vf |= VF_DROP;
            B->v[j].aux = 0;
        }
    }
    finish(B, i);
}

/* The descendants of ai, below MAX_DEPTH levels, flattened under parent:
 * an explicit depth-first walk (the C stack stays bounded however deep the
 * page nests), in document order. Wrappers and ignored nodes add nothing
 * of their own (their children come up a level); every other node is
 * walked without its children (walk with depth > MAX_DEPTH) and its
 * children follow it as its siblings, except under leaves (a text field's
 * inner editor) and dropped roles. A clickable wrapper that holds only
 * text gets no ref this deep. Bounded by deep_left visits (the AX records
 * need not form a tree); what is left then is counted as cut. */
static void walk_deep(build *B, int fi, int ai, int parent)
{
    typedef struct { size_t k0, nk, c; } lvl;
    lvl *st = malloc(64 * sizeof *st);
    size_t ns = 0, cap = 64;
    if (!st) {
        B->oom = true;
        return;
    }
    frame_st *F = &B->fr[fi];
    st[ns++] = (lvl){ax_at(F, (size_t)ai)->kid0, ax_nkids(F, (size_t)ai), 0};
    while (ns && !B->oom) {
        lvl *top = &st[ns - 1];
        if (top->c == top->nk) {
            ns--;
            continue;
        }
        int k = F->kix[top->k0 + top->c++];
        if (k < 0 || k == ai)
            continue;
        if (!B->deep_left) {
            B->deep_cut = true;
            break;
        }
        B->deep_left--;
        B->deep++;
        const axn *n = ax_at(F, (size_t)k);
        unsigned rc = ax_cls(F, n);
        const char *name = ax_name(F, n);
        bool descend;
        if (rc & RC_DROP) {
            descend = false;
        } else if ((n->flags & AX_IGNORED) ||
                   ((rc & RC_FLAT) && !(name && *name && (rc & RC_FLAT_NAMED)) &&
                    !(n->st & ST_EDITABLE))) {
            descend = true;
        } else {
            size_t kid0 = n->kid0, nk = ax_nkids(F, (size_t)k);
            /* A named button, link, heading ... says its content in its name. */
            bool leaf = (rc & (RC_LEAF | RC_TEXT | RC_FRAME)) != 0 || (n->st & ST_EDITABLE) ||
                        (name && *name && in_list(ax_role(F, n), NAME_FROM_CONTENT));
            walk(B, fi, k, parent, MAX_DEPTH + 1);
            F = &B->fr[fi];
            if (leaf || !nk)
                continue;
            if (ns == cap) {
                lvl *nst = realloc(st, cap * 2 * sizeof *nst);
                if (!nst) {
                    B->oom = true;
                    break;
                }
                st = nst;
                cap *= 2;
            }
            st[ns++] = (lvl){kid0, nk, 0};
            B->tail_text = -1;   /* its text does not run on from the text before */
            continue;
        }
        if (descend && ax_nkids(F, (size_t)k)) {
            if (ns == cap) {
                lvl *nst = realloc(st, cap * 2 * sizeof *nst);
                if (!nst) {
                    B->oom = true;
                    break;
                }
                st = nst;
                cap *= 2;
            }
            st[ns++] = (lvl){n->kid0, ax_nkids(F, (size_t)k), 0};
            if (!(n->flags & AX_IGNORED) && !(ax_cls(F, n) & RC_GENERIC))
                B->tail_text = -1;   /* a paragraph, a cell: a block of its own */
        }
    }
    free(st);
}

/* ---- secret values kept out of every name ----
 *
 * A secret field's own value is withheld (VF_NOVALUE), but the browser
 * also computes it into other accessible names: a button or label that
 * points at the field with aria-labelledby, a field labelled by itself,
 * and once the page has turned a password into type=text, the value in
 * plain. Before the walk, every text field that is secret now or was
 * noted secret before (snap_secret_kind) is noted, its value collected,
 * and every name and value of every frame that holds one of the values
 * gets it replaced by "[secret]" (a value shorter than 3 bytes only where
 * it stands as a whole word). The records then point at the masked copies;
 * the plain strings are wiped. Everything built from the records — lines,
 * text mode, ref names, action results, the gate's target, audit lines and
 * prompts — only ever sees the masked ones. */

#define SECRET_MASK "[secret]"

static bool textish_role(const char *role)
{
    return strcmp(role, "textbox") == 0 || strcmp(role, "searchbox") == 0 ||
           strcmp(role, "combobox") == 0 || strcmp(role, "spinbutton") == 0;
}

static bool word_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80;
}

/* s with every secret value replaced, into out; false when none was in it. */
static bool mask_one(const char *s, const char *const *vals, size_t nv, sbuf *out)
{
    bool hit = false;
    out->len = 0;
    const char *p = s;
    while (*p) {
        size_t best = 0;
        for (size_t i = 0; i < nv; i++) {
            size_t l = strlen(vals[i]);
            if (l > best && strncmp(p, vals[i], l) == 0 &&
                (l >= 3 || ((p == s || !word_char((unsigned char)p[-1])) &&
                            !word_char((unsigned char)p[l]))))
                best = l;
        }
        if (best) {
            sb_puts(out, SECRET_MASK);
            p += best;
            hit = true;
        } else {
            sb_putc(out, *p++);
        }
    }
    if (!out->p)
        sb_putn(out, "", 0);
    return hit;
}

static void wipe(char *p, size_t n)
{
    volatile char *v = p;
    while (n--)
        *v++ = 0;
}

static void mask_secrets(build *B)
{
    const char **vals = NULL;
    size_t nv = 0, cv = 0;
    for (size_t fi = 0; fi < B->nfr; fi++) {
        frame_st *F = &B->fr[fi];
        const sess_st *S = &B->ss[F->sess];
        for (size_t k = 0; k < F->nnodes; k++) {
            const axn *n = ax_at(F, k);
            if (n->backend <= 0 || !textish_role(ax_role(F, n)))
                continue;
            unsigned kind = secret_kind(S, n->backend);
            if (kind)
                snap_secret_note(B->a, B->tab_id, F->f->id, F->f->loader, n->backend, kind);
            else
                kind = snap_secret_kind(B->a, B->tab_id, F->f->id, F->f->loader, n->backend);
            const char *v = ax_value(F, n);
            /* Without the DOM snapshot every text value is withheld (walk). */
            bool unknown = !S->dom_ok && strcmp(ax_role(F, n), "combobox") != 0;
            if ((!kind && !unknown) || !v || !*v || masked(v) || blank(v))
                continue;
            if (nv == cv) {
                size_t c = cv ? cv * 2 : 8;
                const char **nvs = realloc(vals, c * sizeof *nvs);
                if (!nvs) {
                    B->oom = true;
                    free(vals);
                    return;
                }
                vals = nvs;
                cv = c;
            }
            vals[nv++] = v;
        }
    }
    if (!nv) {
        free(vals);
        return;
    }
    /* The values point into the frames' strings, which grow below: copy. */
    sbuf all = {0};
    size_t *offs = malloc(nv * sizeof *offs);
    for (size_t i = 0; offs && i < nv; i++) {
        offs[i] = all.len;
        sb_putn(&all, vals[i], strlen(vals[i]) + 1);
    }
    if (!offs || all.oom) {
        B->oom = true;
        free(offs);
        free(all.p);
        free(vals);
        return;
    }
    for (size_t i = 0; i < nv; i++)
        vals[i] = all.p + offs[i];
    free(offs);
    sbuf mn = {0}, mv = {0};
    for (size_t fi = 0; fi < B->nfr && !B->oom; fi++) {
        frame_st *F = &B->fr[fi];
        for (size_t k = 0; k < F->nnodes; k++) {
            axn *n = ax_at(F, k);
            const char *name = (n->flags & AX_NAME) ? ax_name(F, n) : NULL;
            const char *value = ax_value(F, n);
            bool hn = name && mask_one(name, vals, nv, &mn);
            bool hv = value && mask_one(value, vals, nv, &mv);
            if (!hn && !hv)
                continue;
            /* [name NUL][value NUL | double], appended; the old one wiped. */
            char *old = F->str.p + n->str;
            size_t oldlen = 0;
            if (n->flags & AX_NAME)
                oldlen += strlen(old) + 1;
            if (n->flags & AX_VALUE)
                oldlen += strlen(old + oldlen) + 1;
            double num = 0;
            bool has_num = ax_num(F, n, &num);
            if (has_num)
                oldlen += sizeof num;
            size_t off = F->str.len;
            if (n->flags & AX_NAME)
                sb_putn(&F->str, hn ? mn.p : name, strlen(hn ? mn.p : name) + 1);
            if (n->flags & AX_VALUE) {
                value = ax_value(F, n);     /* F->str may have moved */
                sb_putn(&F->str, hv ? mv.p : value, strlen(hv ? mv.p : value) + 1);
            }
            if (has_num)
                sb_putn(&F->str, (const char *)&num, sizeof num);
            if (F->str.oom || off > UINT32_MAX) {
                B->oom = true;
                break;
            }
            wipe(F->str.p + n->str, oldlen);
            n->str = (uint32_t)off;
        }
    }
    if (mn.p)
        wipe(mn.p, mn.cap);
    if (mv.p)
        wipe(mv.p, mv.cap);
    if (all.p)
        wipe(all.p, all.cap);
    free(mn.p);
    free(mv.p);
    free(all.p);
    free(vals);
}

static int ax_root(const frame_st *F)
{
    for (size_t k = 0; k < F->nnodes; k++)
        if (ax_cls(F, ax_at(F, k)) & RC_ROOT)
            return (int)k;
    return F->nnodes ? 0 : -1;
}

/* Put F's records in the order the view walk reads them: depth first
 * from the root, children in order (then the records the root does not
 * reach, in their order). Chromium does not send them so. When every
 * record is reached at most once (a tree: no shared child, no cycle), the
 * walk then never reads a record before one it has read, and frees the
 * chunks behind it (F->preorder). Otherwise nothing moves. Indices
 * change, nothing else: the walk follows the child lists, and the root
 * stays the first root. 0 or SNAP_ENOMEM. */
static int ax_reorder(frame_st *F)
{
    int r = ax_root(F);
    size_t n = F->nnodes;
    if (r < 0 || n > INT32_MAX || F->nkid > INT32_MAX)
        return 0;
    typedef struct { int32_t ai; uint32_t c; } dfs;
    int32_t *q = malloc(n * sizeof *q);          /* old index -> new */
    int32_t *p = malloc(n * sizeof *p);          /* new -> old, then new kid0 */
    int32_t *kix = malloc((F->nkid ? F->nkid : 1) * sizeof *kix);
    dfs *st = NULL;
    size_t ns = 0, cap = 0;
    int rc = 0;
    bool tree = true;
    if (!q || !p || !kix) {
        rc = SNAP_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        q[i] = -1;
    size_t next = 0;
    int cur = r;
    for (;;) {
        if (cur >= 0) {
            if (q[cur] >= 0) {
                tree = false;
                break;
            }
            q[cur] = (int32_t)next;
            p[next++] = cur;
            if (ns == cap) {
                size_t nc = cap ? cap * 2 : 64;
                dfs *nst = realloc(st, nc * sizeof *nst);
                if (!nst) {
                    rc = SNAP_ENOMEM;
                    goto out;
                }
                st = nst;
                cap = nc;
            }
            st[ns++] = (dfs){cur, 0};
            cur = -1;
        }
        if (!ns)
            break;
        dfs *top = &st[ns - 1];
        size_t k0 = ax_at(F, (size_t)top->ai)->kid0, nk = ax_nkids(F, (size_t)top->ai);
        if (top->c == nk) {
            ns--;
            continue;
        }
        int k = F->kix[k0 + top->c++];
        if (k >= 0 && k != top->ai)
            cur = k;
    }
    if (!tree)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (q[i] < 0) {
            q[i] = (int32_t)next;
            p[next++] = (int32_t)i;
        }
    /* The child lists in the new order, with new indices; p[j] becomes
     * record j's kid0 (the old layout is read until the records move). */
    size_t pos = 0;
    for (size_t j = 0; j < n; j++) {
        size_t old = (size_t)p[j];
        size_t k0 = ax_at(F, old)->kid0, nk = ax_nkids(F, old);
        for (size_t c = 0; c < nk; c++) {
            int k = F->kix[k0 + c];
            kix[pos++] = k >= 0 ? q[k] : k;
        }
        p[j] = (int32_t)(pos - nk);
    }
    /* Move the records: each cycle of the permutation in place. */
    for (size_t i = 0; i < n; i++) {
        while ((size_t)q[i] != i) {
            size_t j = (size_t)q[i];
            axn tmp = *ax_at(F, i);
            *ax_at(F, i) = *ax_at(F, j);
            *ax_at(F, j) = tmp;
            int32_t t = q[i];
            q[i] = q[j];
            q[j] = t;
        }
    }
    for (size_t j = 0; j < n; j++)
        ax_at(F, j)->kid0 = (uint32_t)p[j];
    free(F->kix);
    F->kix = kix;
    kix = NULL;
    F->preorder = true;
out:
    free(q);
    free(p);
    free(kix);
    free(st);
    return rc;
}

static void walk_frame_root(build *B, int fi, int parent, int depth)
{
    int r = ax_root(&B->fr[fi]);
    if (r >= 0)
        walk(B, fi, r, parent, depth);
}

/* ---- row context ---- */

static int cmp_act(const void *x, const void *y, build *B)
{
    const vnode *a = &B->v[*(const int *)x], *b = &B->v[*(const int *)y];
    int c = strcmp(vrole(B, a), vrole(B, b));
    if (c)
        return c;
    const char *an = vname(B, a), *bn = vname(B, b);
    c = strcmp(an ? an : "", bn ? bn : "");
    if (c)
        return c;
    return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

/* qsort has no context argument in C11: a small merge sort instead. */
static void sort_acts(int *v, int *tmp, size_t n, build *B)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_acts(v, tmp, h, B);
    sort_acts(v + h, tmp, n - h, B);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_act(&v[i], &v[j], B) <= 0 ? v[i++] : v[j++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

/* Members of the group (sorted by index) inside [lo, hi). */
static size_t members_in(const int *g, size_t n, int lo, int hi)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (g[m] < lo)
            a = m + 1;
        else
            b = m;
    }
    size_t c = 0;
    while (a < n && g[a] < hi && c < 2)
        a++, c++;
    return c;
}

/* Row context: the text goes into the arena after a 16-bit length (the
 * vnode keeps only its offset). ctx_begin reserves the length; ctx_end
 * fills it in and marks vnode me (false, and nothing kept, when the text
 * is empty). */
static size_t ctx_begin(build *B)
{
    size_t off = B->arena.len;
    sb_putn(&B->arena, "\0\0", 2);
    return off;
}

static bool ctx_end(build *B, int me, size_t off)
{
    if (B->arena.oom || B->arena.len < off + 2)
        return false;
    uint16_t n = (uint16_t)(B->arena.len - off - 2);
    if (!n) {
        B->arena.len = off;
        B->arena.p[off] = 0;
        return false;
    }
    memcpy(B->arena.p + off, &n, sizeof n);
    B->v[me].aux = (uint32_t)off;
    B->v[me].vf |= VF_CTX;
    return true;
}

/* The first text in the container that is not the control's own. */
static bool ctx_label(build *B, int cont, int me)
{
    vnode *m = &B->v[me];
    int limit = 400;
    for (int j = cont + 1; j < B->v[cont].end && limit-- > 0; j++) {
        if (j == me) {
            j = B->v[me].end - 1;
            continue;
        }
        const vnode *c = &B->v[j];
        const char *s = NULL;
        size_t len = 0;
        const char *cn = c->kind == V_ELEM ? vname(B, c) : NULL, *mn = vname(B, m);
        if (c->kind == V_TEXT && !(c->vf & VF_DROP)) {
            s = vtext(B, c);
            len = c->tlen;
        } else if (cn && *cn && !blank(cn) &&
                   !(strcmp(vrole(B, c), vrole(B, m)) == 0 && same_text(cn, mn ? mn : ""))) {
            s = cn;
            len = strlen(s);
        }
        if (!s || !len)
            continue;
        /* Copy out first: put_page may grow the arena that s points into. */
        char *tmp = malloc(len + 1);
        if (!tmp)
            return false;
        memcpy(tmp, s, len);
        tmp[len] = 0;
        size_t off = ctx_begin(B);
        put_page(&B->arena, tmp, len, CTX_MAX_CHARS, 0);
        free(tmp);
        return ctx_end(B, me, off);
    }
    return false;
}

static void row_context(build *B)
{
    size_t n = 0;
    for (size_t i = 0; i < B->nv; i++)
        if ((B->v[i].vf & (VF_ACT | VF_DROP)) == VF_ACT)
            n++;
    if (n < 2)
        return;
    int *acts = malloc(n * sizeof *acts), *tmp = malloc(n * sizeof *tmp);
    if (!acts || !tmp) {
        free(acts), free(tmp);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < B->nv; i++)
        if ((B->v[i].vf & (VF_ACT | VF_DROP)) == VF_ACT)
            acts[k++] = (int)i;
    sort_acts(acts, tmp, n, B);
    for (size_t s = 0; s < n;) {
        size_t e = s + 1;
        const char *sn = vname(B, &B->v[acts[s]]);
        while (e < n && strcmp(vrole(B, &B->v[acts[s]]), vrole(B, &B->v[acts[e]])) == 0) {
            const char *en = vname(B, &B->v[acts[e]]);
            if (strcmp(sn ? sn : "", en ? en : "") != 0)
                break;
            e++;
        }
        if (e - s > 1) {
            const int *g = acts + s;     /* sorted by index within the group */
            for (size_t q = s; q < e; q++) {
                int me = acts[q];
                int cont = -1;
                for (int p = B->v[me].parent; p >= 0; p = B->v[p].parent) {
                    if (members_in(g, e - s, p, B->v[p].end) > 1)
                        break;
                    cont = p;
                }
                if (cont < 0 || !ctx_label(B, cont, me)) {
                    size_t off = ctx_begin(B);
                    sb_printf(&B->arena, "#%zu of %zu", q - s + 1, e - s);
                    ctx_end(B, me, off);
                }
            }
        }
        s = e;
    }
    free(acts);
    free(tmp);
}

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

static void collect_lines(build *B, lines *L, int i, int depth, int pline)
{
    /* Iterative over siblings, recursive over printed depth. */
    const vnode *x = &B->v[i];
    if (x->vf & VF_DROP)
        return;
    int me = pline;
    if (x->kind != V_FLAT) {
        if (L->n == L->cap) {
            size_t nc = L->cap ? L->cap * 2 : 256;
            line *nl = realloc(L->l, nc * sizeof *nl);
            if (!nl) {
                B->oom = true;
                return;
            }
            L->l = nl;
            L->cap = nc;
        }
        L->l[L->n] = (line){i, depth, pline};
        me = (int)L->n++;
        depth++;
    }
    if (x->kind == V_TEXT || (x->kind == V_ELEM && strcmp(vrole(B, x), "clickable") == 0))
        return;
    for (int j = i + 1; j < B->v[i].end; j = B->v[j].end)
        collect_lines(B, L, j, depth, me);
}

/* Does text vnode t say the same as the name of element e? */
static bool text_is_name(build *B, const vnode *t, const vnode *e)
{
    const char *en = e->kind == V_ELEM ? vname(B, e) : NULL;
    if (t->kind != V_TEXT || !en || !*en)
        return false;
    char *p = vtext(B, t);
    char save = p[t->tlen];
    p[t->tlen] = 0;
    bool same = same_text(p, en);
    p[t->tlen] = save;
    return same;
}

/* Drop text lines that repeat a name: the element's own text under it, and
 * a label next to its control ("Full name" before textbox "Full name"). */
static void dedup_lines(build *B, lines *L)
{
    int *map = malloc((L->n ? L->n : 1) * sizeof *map);
    if (!map)
        return;     /* keeping the duplicates is harmless */
    size_t w = 0;
    for (size_t k = 0; k < L->n; k++) {
        const line *l = &L->l[k];
        const vnode *x = &B->v[l->v];
        bool drop = false;
        if (x->kind == V_TEXT) {
            if (l->parent >= 0 && text_is_name(B, x, &B->v[L->l[l->parent].v]))
                drop = true;
            for (int d = -1; d <= 1 && !drop; d += 2) {
                size_t o = d < 0 ? k - 1 : k + 1;
                if ((d < 0 && k == 0) || o >= L->n)
                    continue;
                const line *m = &L->l[o];
                if (m->depth == l->depth && m->parent == l->parent &&
                    (B->v[m->v].vf & VF_ACT) && text_is_name(B, x, &B->v[m->v]))
                    drop = true;
            }
        }
        map[k] = drop ? -1 : (int)w;
        if (!drop) {
            line nl = *l;
            nl.parent = nl.parent >= 0 ? map[nl.parent] : -1;
            L->l[w++] = nl;
        }
    }
    L->n = w;
    free(map);
}

/* ---- the whole thing ---- */




static void free_build(build *B)
{
    for (size_t i = 0; i < B->nfr; i++) {
        if (B->fr[i].axs) {
            axs_free(B->fr[i].axs);
            free(B->fr[i].axs);
        }
        ax_drop(&B->fr[i]);
    }
    for (size_t i = 0; i < B->nss; i++) {
        free(B->ss[i].secret.v);
        free(B->ss[i].pw.v);
        free(B->ss[i].otc.v);
        free(B->ss[i].click.v);
        if (B->ss[i].dss) {
            ds_free(B->ss[i].dss);
            free(B->ss[i].dss);
        }
    }
    free(B->fr);
    free(B->ss);
    free(B->v);
    free(B->rt);
    free(B->arena.p);
}

static char *frame_params(const char *frame_id)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "frameId");
    json_w_str(&w, frame_id);
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

/* The calls of one fetch, in the order they were sent. */
typedef struct {
    int kind;                    /* 0 AX tree, 1 frame owner, 2 DOM snapshot */
    size_t i;                    /* frame or session index */
    uint64_t id;
} fcall;

/* Collect one reply, digest it and free it at once: only the replies that
 * arrived together are ever held as parsed documents. */
static int collect(build *B, const fcall *fc, int tmo)
{
    snap_agent *a = B->a;
    cdp_reply rep = {0};
    cdp_err e = {0};
    int rc = cdp_wait(a->c, fc->id, tmo, &rep, &e);
    int ret = 0;
    if (fc->kind == 0) {
        /* The reply went through ax_event as it arrived. */
        frame_st *F = &B->fr[fc->i];
        axsink *S = F->axs;
        F->ax_done = true;
        F->ax_rc = rc;
        if (rc) {
            snprintf(F->err, sizeof F->err, "%.150s", e.msg);
            if (S && S->oom)
                ret = SNAP_ENOMEM;
            ax_drop(F);
        } else if ((F->ax_rc = ax_finish(F)) == SNAP_ENOMEM) {
            ret = SNAP_ENOMEM;
        }
        if (S) {
            axs_free(S);
            free(S);
            F->axs = NULL;
        }
    } else if (fc->kind == 1) {
        frame_st *F = &B->fr[fc->i];
        F->own_done = true;
        F->own_rc = rc;
        if (!rc)
            F->owner = (int)json_get_int(rep.result, "backendNodeId", 0);
    } else {
        sess_st *S = &B->ss[fc->i];
        domsink *DS = S->dss;
        S->done = true;
        S->rc = rc;
        if (!rc && DS && !DS->oom)
            ds_finish(S, DS);    /* the reply went through ds_event as it came */
        if (DS) {
            ds_free(DS);
            free(DS);
            S->dss = NULL;
        }
    }
    cdp_reply_free(&rep);
    return ret;
}

/* Send every command, then collect every reply as it arrives. */
static int fetch(build *B)
{
    snap_agent *a = B->a;
    snap_tab *t = B->t;
    int tmo = a->o.timeout_ms > 0 ? a->o.timeout_ms : 15000;
    if (t->nframes > FRAMES_MAX)
        return SNAP_ENOMEM;
    B->fr = calloc(t->nframes ? t->nframes : 1, sizeof *B->fr);
    B->ss = calloc(t->nframes ? t->nframes : 1, sizeof *B->ss);
    fcall *calls = calloc(t->nframes * 3 + 1, sizeof *calls);
    if (!B->fr || !B->ss || !calls) {
        free(calls);
        return SNAP_ENOMEM;
    }
    for (size_t i = 0; i < t->nframes; i++) {
        snap_frame *f = &t->frames[i];
        if (f->gone || !f->session[0])
            continue;
        frame_st *F = &B->fr[B->nfr++];
        F->fc = *f;
        F->fc.url = NULL;        /* owned by the agent; not needed here */
        F->f = &F->fc;
        F->parent = -1;
        size_t s = 0;
        while (s < B->nss && strcmp(B->ss[s].id, F->f->session) != 0)
            s++;
        if (s == B->nss)
            B->ss[B->nss++].id = F->f->session;
        F->sess = (int)s;
    }
    if (!B->nfr || strcmp(B->fr[0].f->id, t->frames[0].id) != 0) {
        free(calls);
        return SNAP_EBROWSER;
    }
    for (size_t i = 0; i < B->nfr; i++) {
        frame_st *F = &B->fr[i];
        for (size_t k = 0; k < B->nfr; k++)
            if (k != i && F->f->parent[0] && strcmp(B->fr[k].f->id, F->f->parent) == 0)
                F->parent = (int)k;
    }
    /* The DOM snapshots go first: their replies are digested into small
     * sets and freed before the AX replies (which are kept as records until
     * the walk) stream in, so the two never sit in memory together. */
    size_t nc = 0;
    for (size_t s = 0; s < B->nss; s++) {
        domsink *DS = calloc(1, sizeof *DS);
        B->ss[s].dss = DS;
        B->ss[s].rc = DS ? snap_cdp_send_sink(a, B->ss[s].id, "DOMSnapshot.captureSnapshot",
                                         "{\"computedStyles\":[]}", ds_event, DS,
                                         &B->ss[s].call, NULL)
                         : CDP_ENOMEM;
        if (!B->ss[s].rc)
            calls[nc++] = (fcall){2, s, B->ss[s].call};
    }
    for (size_t i = 0; i < B->nfr; i++) {
        frame_st *F = &B->fr[i];
        char *p = frame_params(F->f->id);
        if (!p) {
            free(calls);
            return SNAP_ENOMEM;
        }
        cdp_err e = {0};
        axsink *S = calloc(1, sizeof *S);
        if (!S) {
            free(p);
            free(calls);
            return SNAP_ENOMEM;
        }
        S->F = F;
        F->axs = S;
        F->ax_rc = snap_cdp_send_sink(a, F->f->session, "Accessibility.getFullAXTree", p,
                                 ax_event, S, &F->ax_call, &e);
        if (F->ax_rc)
            snprintf(F->err, sizeof F->err, "%.150s", e.msg);
        else
            calls[nc++] = (fcall){0, i, F->ax_call};
        if (F->parent >= 0) {
            F->own_rc = snap_cdp_send(a, B->fr[F->parent].f->session, "DOM.getFrameOwner", p,
                                 &F->own_call, NULL);
            if (!F->own_rc)
                calls[nc++] = (fcall){1, i, F->own_call};
        }
        free(p);
    }
    /* Wait for the oldest outstanding call; after each reply, take every
     * other one already in, so that none waits as a parsed document. */
    int rc = 0;
    unsigned char *done = calloc(nc ? nc : 1, 1);
    if (!done) {
        for (size_t k = 0; k < nc; k++)
            cdp_forget(a->c, calls[k].id);
        free(calls);
        return SNAP_ENOMEM;
    }
    for (size_t k = 0; k < nc; k++) {
        if (done[k])
            continue;
        if (collect(B, &calls[k], tmo))
            rc = SNAP_ENOMEM;
        done[k] = 1;
        for (size_t j = k + 1; j < nc; j++) {
            if (!done[j] && cdp_reply_ready(a->c, calls[j].id)) {
                if (collect(B, &calls[j], tmo))
                    rc = SNAP_ENOMEM;
                done[j] = 1;
            }
        }
    }
    free(done);
    free(calls);
    if (B->fr[0].ax_rc && !rc)
        rc = SNAP_EBROWSER;
    return rc;
}

/* ---- the cache: the last snapshot of a tab, as printed lines ----
 *
 * A build ends in a snap_cache: the printed lines as view nodes (the
 * printed ones of the view tree, compacted in place, each with its depth
 * and printed parent line), the strings they show (each frame's AX strings
 * and the build's arena, handed over rather than copied) and the role
 * table. Pages, queries and text pages are rendered from it on demand, so
 * no rendered copy of the page is kept; the AX records and the rest of the
 * view tree are gone by then. The cache serves later requests on the same
 * tab while nothing may have changed (cache_valid). */

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
    uint64_t nav, activity;      /* the tab's counters when the build began */
    uint64_t sig;                /* frames_sig() then */
    uint64_t cmd;                /* cdp_last_id() when the build ended */
    int64_t built_ms;
    cframe *fr;
    size_t nfr;
    const char *title;           /* the main frame's RootWebArea name (in fr[0].str) */
    size_t deep;                 /* nodes below MAX_DEPTH levels, shown flattened */
    bool deep_cut;               /* and some not shown at all (walk_deep's bound) */
    vnode *l;                    /* printed lines; parent: printed parent line or
                                    -1, end: depth */
    size_t n;
    const char **rt;             /* role table (vnode.role) */
    size_t nrt;
    char *arena;                 /* text, options and row context */
};

void snap_cache_free(struct snap_cache *C)
{
    if (!C)
        return;
    for (size_t i = 0; i < C->nfr; i++)
        free(C->fr[i].str);
    free(C->fr);
    free(C->l);
    free(C->rt);
    free(C->arena);
    free(C);
}

static const char *crole(const struct snap_cache *C, const vnode *x)
{
    return C->nrt ? C->rt[x->role] : "";
}

static const char *cname(const struct snap_cache *C, const vnode *x)
{
    return vname_in(C->fr[x->frame].str, x);
}

/* The text of line x (V_TEXT, or what else keeps text at toff). */
static const char *ctext(const struct snap_cache *C, const vnode *x)
{
    return (x->vf & VF_STR) ? C->fr[x->frame].str + x->toff : C->arena + x->toff;
}

/* Does line x get a ref? */
static bool cact(const vnode *x)
{
    return x->kind == V_ELEM && (x->vf & (VF_ACT | VF_DROP)) == VF_ACT;
}

/* Render one line (no indentation, no ref) into out. */
static bool render(const struct snap_cache *C, const vnode *x, sbuf *out)
{
    switch (x->kind) {
    case V_TEXT: {
        sb_putc(out, '"');
        char *tmp = malloc(x->tlen + 1);
        if (!tmp) {
            out->oom = true;
            return false;
        }
        memcpy(tmp, ctext(C, x), x->tlen);
        tmp[x->tlen] = 0;
        bool cut = put_page(out, tmp, x->tlen, TEXT_MAX_CHARS, PAGE_QUOTED);
        free(tmp);
        sb_putc(out, '"');
        return cut;
    }
    case V_FRAME: {
        const char *fname = cname(C, x);
        sb_puts(out, "frame");
        if (fname && *fname && !blank(fname)) {
            sb_putc(out, ' ');
            put_quoted(out, fname, 60);
        }
        if (vchild(x) < 0) {
            sb_puts(out, " (not loaded)");
            return false;
        }
        const cframe *F = &C->fr[vchild(x)];
        const char *o = F->origin[0] ? F->origin : "null";
        sb_puts(out, " origin=");
        put_page(out, o, strlen(o), 120, 0);
        if (F->ax_rc)
            sb_printf(out, " (unavailable: %s)", F->err);
        return false;
    }
    default:
        break;
    }
    const char *role = crole(C, x);
    sb_puts(out, role);
    if (strcmp(role, "clickable") == 0) {
        sb_putc(out, ' ');
        sb_putc(out, '"');
        char *tmp = malloc(x->tlen + 1);
        if (tmp) {
            memcpy(tmp, ctext(C, x), x->tlen);
            tmp[x->tlen] = 0;
            put_page(out, tmp, x->tlen, NAME_MAX_CHARS, PAGE_QUOTED);
            free(tmp);
        }
        sb_putc(out, '"');
    } else {
        const char *name = cname(C, x);
        if (name && *name && !blank(name)) {
            sb_putc(out, ' ');
            put_quoted(out, name, NAME_MAX_CHARS);
        }
    }
    return false;
}

/* The tail after the ref: value, options, states, row context. */
static void render_tail(const struct snap_cache *C, const vnode *x, sbuf *out)
{
    if (x->kind != V_ELEM)
        return;
    const char *str = C->fr[x->frame].str;
    const char *name = vname_in(str, x), *value = vvalue_in(str, x);
    double numv;
    uint32_t olen = x->vf & VF_OPTS ? x->tlen : 0;
    if (value && *value && !(x->st & ST_SECRET) && !(name && strcmp(name, value) == 0)) {
        sb_puts(out, " =");
        put_quoted(out, value, NAME_MAX_CHARS);
    }
    if (vnum_in(str, x, &numv) && !(value && *value) && !(x->st & ST_SECRET)) {
        char num[40];
        if (json_fmt_double(numv, num) > 0) {
            sb_puts(out, " =");
            sb_puts(out, num);
        }
    }
    if (olen) {
        sb_puts(out, " options:");
        sb_putn(out, C->arena + x->toff, olen);
    }
    static const struct {
        unsigned bit;
        const char *word;
    } words[] = {
        {ST_SECRET, "secret"}, {ST_DISABLED, "disabled"}, {ST_CHECKED, "checked"},
        {ST_MIXED, "mixed"}, {ST_PRESSED, "pressed"}, {ST_EXPANDED, "expanded"},
        {ST_COLLAPSED, "collapsed"}, {ST_SELECTED, "selected"}, {ST_REQUIRED, "required"},
        {ST_READONLY, "readonly"}, {ST_INVALID, "invalid"}, {ST_FOCUSED, "focused"},
    };
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        if (!(x->st & words[k].bit))
            continue;
        /* Collapsed/expanded on a native select is noise. */
        if ((words[k].bit & (ST_COLLAPSED | ST_SELECTED)) && !(x->vf & VF_ACT))
            continue;
        if (words[k].bit == ST_COLLAPSED && olen)
            continue;
        sb_putc(out, ' ');
        sb_puts(out, words[k].word);
    }
    if (x->vf & VF_CTX) {
        uint16_t n;
        memcpy(&n, C->arena + x->aux, sizeof n);
        sb_puts(out, " (row: ");
        sb_putn(out, C->arena + x->aux + 2, n);
        sb_putc(out, ')');
    }
}

/* The frames as they stand: ids, parents, documents, sessions. */
static uint64_t frames_sig(const snap_tab *t)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < t->nframes; i++) {
        const snap_frame *f = &t->frames[i];
        const char *parts[4] = {f->id, f->parent, f->loader, f->session};
        for (int k = 0; k < 4; k++) {
            for (const char *p = parts[k]; *p; p++)
                h = (h ^ (unsigned char)*p) * 1099511628211ULL;
            h = (h ^ 0xff) * 1099511628211ULL;
        }
        h = (h ^ (f->gone ? 1u : 2u)) * 1099511628211ULL;
    }
    return h;
}

/* Page text: one line per printed line that carries text, whole. */
static void page_text(const struct snap_cache *C, sbuf *out)
{
    for (size_t k = 0; k < C->n; k++) {
        const vnode *x = &C->l[k];
        size_t before = out->len;
        if (x->kind == V_TEXT || (x->kind == V_ELEM && strcmp(crole(C, x), "clickable") == 0)) {
            put_page(out, ctext(C, x), x->tlen, (size_t)-1, PAGE_KEEP_NL);
        } else if (x->kind == V_FRAME) {
            const char *o = vchild(x) >= 0 ? C->fr[vchild(x)].origin : "";
            sb_puts(out, "[frame ");
            put_page(out, o, strlen(o), 120, 0);
            sb_putc(out, ']');
        } else if (x->kind == V_ELEM) {
            const char *name = cname(C, x);
            if (name && *name && !blank(name))
                put_page(out, name, strlen(name), (size_t)-1, PAGE_KEEP_NL);
        }
        if (out->len > before)
            sb_putc(out, '\n');
    }
}

/* Hand the build's printed lines and strings over to a new cache (NULL
 * when out of memory): the vnodes of L's lines are compacted in place at
 * the start of B->v (L's vnodes are increasing, so line k never overwrites
 * a vnode a later line reads), and the array is shrunk to them. */
static struct snap_cache *cache_from(build *B, const lines *L)
{
    struct snap_cache *C = calloc(1, sizeof *C);
    if (!C)
        return NULL;
    C->fr = calloc(B->nfr ? B->nfr : 1, sizeof *C->fr);
    if (!C->fr || (!B->arena.p && !(B->arena.p = calloc(1, 1)))) {
        snap_cache_free(C);
        return NULL;
    }
    C->nfr = B->nfr;
    for (size_t i = 0; i < B->nfr; i++) {
        frame_st *F = &B->fr[i];
        cframe *cf = &C->fr[i];
        snprintf(cf->id, sizeof cf->id, "%s", F->f->id);
        snprintf(cf->loader, sizeof cf->loader, "%s", F->f->loader);
        snprintf(cf->origin, sizeof cf->origin, "%s", F->f->origin);
        cf->ax_rc = F->ax_rc;
        snprintf(cf->err, sizeof cf->err, "%s", F->err);
        cf->str = F->str.p;
        memset(&F->str, 0, sizeof F->str);
    }
    C->title = B->title;
    for (size_t k = 0; k < L->n; k++) {
        vnode x = B->v[L->l[k].v];
        x.parent = L->l[k].parent;
        x.end = L->l[k].depth;
        B->v[k] = x;
    }
    C->n = L->n;
    C->l = B->v;
    B->v = NULL;
    B->nv = B->capv = 0;
    vnode *nl = realloc(C->l, (C->n ? C->n : 1) * sizeof *nl);
    if (nl)
        C->l = nl;
    C->rt = B->rt;
    C->nrt = B->nrt;
    B->rt = NULL;
    B->nrt = B->caprt = 0;
    C->arena = B->arena.p;
    char *na = realloc(C->arena, B->arena.len + 1);
    if (na)
        C->arena = na;
    memset(&B->arena, 0, sizeof B->arena);
    return C;
}

/* A page-derived URL or origin as one header token: bytes that could end
 * the token or start a marker (controls, space, quotes, '<', '>') are
 * percent-encoded, and it is cut at max bytes on a character boundary. */
static void put_token(sbuf *out, const char *s, size_t max)
{
    static const char HEX[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '\\') {
            char e[4] = {'%', HEX[c >> 4], HEX[c & 15], 0};
            sb_puts(out, e);
        } else {
            char one[2] = {(char)c, 0};
            sb_puts(out, one);
        }
    }
    if (n < strlen(s))
        sb_puts(out, "\u2026");
}

/* Header line: title, URL, origin, auth, obs, epoch, tab. */
static void header(const struct snap_cache *C, snap_agent *a, snap_tab *t, const char *obs,
                   sbuf *out)
{
    snap_frame *f = &t->frames[0];
    const char *title = C->title ? C->title : t->title ? t->title : "";
    sb_puts(out, "[page] title=");
    put_quoted(out, title, 100);
    sb_puts(out, " url=");
    put_token(out, f->url ? f->url : "", 200);
    sb_puts(out, " origin=");
    put_token(out, f->origin, 120);
    sb_printf(out, " auth=%s obs=%s epoch=%llu tab=t%d\n", snap_tab_auth(a, t) ? "yes" : "no",
              obs, (unsigned long long)gate_epoch(a->gate), t->id);
}

static const char *open_fmt = "<<<page-content nonce=%s>>>\n";
static const char *close_fmt = "<<<end page-content nonce=%s>>>\n";

/* Place the page of text that fits; fills the structured fields. */
typedef struct {
    size_t total, shown, first, next;   /* lines (or chars in text mode) */
    size_t refs;
    bool truncated;
    size_t matches;
    bool text_cut;               /* a text line was shortened ("…") */
} page_info;

static void write_structured(const struct snap_cache *C, snap_tab *t, const snap_query *q,
                             const char *obs, const page_info *pi, size_t text_len,
                             snap_result *r)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "ok");
    json_w_bool(&w, true);
    json_w_key(&w, "obs");
    json_w_str(&w, obs);
    char tab[16];
    snprintf(tab, sizeof tab, "t%d", t->id);
    json_w_key(&w, "tab");
    json_w_str(&w, tab);
    json_w_key(&w, "url");
    json_w_str(&w, t->frames[0].url ? t->frames[0].url : "");
    json_w_key(&w, "origin");
    json_w_str(&w, t->frames[0].origin);
    json_w_key(&w, "title");
    json_w_str(&w, C->title ? C->title : "");
    json_w_key(&w, "mode");
    json_w_str(&w, q->text ? "text" : "elements");
    json_w_key(&w, "frames");
    json_w_uint(&w, C->nfr);
    if (q->text) {
        json_w_key(&w, "text_chars");
        json_w_uint(&w, pi->total);
        json_w_key(&w, "text_offset");
        json_w_uint(&w, pi->first);
        json_w_key(&w, "shown_chars");
        json_w_uint(&w, pi->shown);
    } else {
        json_w_key(&w, "lines");
        json_w_uint(&w, pi->total);
        json_w_key(&w, "offset");
        json_w_uint(&w, pi->first);
        json_w_key(&w, "shown");
        json_w_uint(&w, pi->shown);
        json_w_key(&w, "refs");
        json_w_uint(&w, pi->refs);
    }
    if (q->query && *q->query) {
        json_w_key(&w, "query");
        json_w_str(&w, q->query);
        json_w_key(&w, "matches");
        json_w_uint(&w, pi->matches);
    }
    json_w_key(&w, "truncated");
    json_w_bool(&w, pi->truncated);
    json_w_key(&w, q->text ? "next_text_offset" : "next_offset");
    if (pi->truncated)
        json_w_uint(&w, pi->next);
    else
        json_w_null(&w);
    json_w_key(&w, "chars");
    json_w_uint(&w, text_len);
    json_w_obj_end(&w);
    free(r->structured);
    r->structured = json_w_take(&w, NULL);
}

/* Element mode: lines from offset (or the query's matches) while they fit. */
static void page_elements(snap_agent *a, snap_tab *t, const struct snap_cache *C,
                          const snap_query *q, size_t room, sbuf *out, page_info *pi)
{
    const char *query = q->query && *q->query ? q->query : NULL;
    sbuf ln = {0};
    /* Which lines count: all, or the ones matching the query (its text
     * without the ref and indentation: head and tail). */
    unsigned char *match = calloc(C->n ? C->n : 1, 1);
    unsigned char *shown = calloc(C->n ? C->n : 1, 1);
    if (!match || !shown) {
        free(match), free(shown);
        out->oom = true;
        return;
    }
    size_t total = 0;
    for (size_t k = 0; k < C->n; k++) {
        if (query) {
            ln.len = 0;
            render(C, &C->l[k], &ln);
            render_tail(C, &C->l[k], &ln);
            if (ln.oom)
                break;
        }
        match[k] = !query || contains_ci(ln.p, ln.len, query);
        total += match[k];
    }
    if (ln.oom) {
        free(match), free(shown), free(ln.p);
        out->oom = true;
        return;
    }
    pi->total = total;
    pi->matches = total;
    size_t idx = 0, k = 0;
    while (k < C->n && (!match[k] || idx < q->offset)) {
        idx += match[k];
        k++;
    }
    pi->first = q->offset < total ? q->offset : total;
    pi->next = pi->first;
    size_t start_len = out->len;
    for (; k < C->n; k++) {
        if (!match[k])
            continue;
        /* Ancestors first (once), so a page or a match keeps its place. */
        int chain[64];
        int nc = 0;
        for (int p = C->l[k].parent; p >= 0 && nc < 64; p = C->l[p].parent)
            if (!shown[p])
                chain[nc++] = p;
        bool fits = true;
        size_t mark = out->len;
        /* Render: chain (outermost first), then the line itself. */
        for (int ci = nc - 1; ci >= -1 && fits; ci--) {
            size_t li = ci >= 0 ? (size_t)chain[ci] : k;
            const vnode *c = &C->l[li];
            ln.len = 0;
            for (int d = 0; d < c->end; d++)
                sb_putc(&ln, ' ');
            bool cut = render(C, c, &ln);
            uint32_t ref = 0;
            if (cact(c)) {
                const cframe *F = &C->fr[c->frame];
                const char *nm = cname(C, c);
                ref = snap_ref_for(a, t->id, F->id, F->loader, c->backend, crole(C, c),
                                   nm ? nm : "");
                if (ref)
                    sb_printf(&ln, " [e%u]", ref);
            }
            render_tail(C, c, &ln);
            sb_putc(&ln, '\n');
            if (ln.oom || out->len - start_len + ln.len > room) {
                fits = false;
                break;
            }
            sb_putn(out, ln.p, ln.len);
            shown[li] = 1;
            pi->text_cut |= cut;
            if (ref)
                pi->refs++;
        }
        if (!fits) {
            out->len = mark;
            if (out->p)
                out->p[out->len] = 0;
            pi->truncated = true;
            break;
        }
        pi->shown++;
        pi->next++;
    }
    free(match);
    free(shown);
    free(ln.p);
}

/* Text mode: characters from text_offset (or the first match of the query
 * at or after it), cut at a character boundary. */
static void page_chars(const sbuf *txt, const snap_query *q, size_t room, sbuf *out,
                       page_info *pi)
{
    const char *s = txt->p ? txt->p : "";
    size_t n = txt->len;
    size_t start = q->text_offset < n ? q->text_offset : n;
    while (start < n && ((unsigned char)s[start] & 0xC0) == 0x80)
        start++;
    if (q->query && *q->query) {
        size_t ql = strlen(q->query);
        size_t found = n;
        size_t count = 0;
        for (size_t i = 0; i + ql <= n; i++) {
            if (contains_ci(s + i, ql, q->query)) {
                if (i >= start && found == n)
                    found = i;
                count++;
            }
        }
        pi->matches = count;
        if (found < n) {
            /* Start at the beginning of the line holding the match. */
            size_t b = found;
            while (b > start && s[b - 1] != '\n' && found - b < 200)
                b--;
            start = b;
        } else {
            start = n;
        }
    }
    size_t end = start + room < n ? start + room : n;
    while (end > start && end < n && ((unsigned char)s[end] & 0xC0) == 0x80)
        end--;
    /* Prefer to end after a newline when one is near the cut. */
    if (end < n) {
        size_t e = end;
        while (e > start && s[e - 1] != '\n' && end - e < 300)
            e--;
        if (e > start && s[e - 1] == '\n')
            end = e;
    }
    sb_putn(out, s + start, end - start);
    if (end > start && s[end - 1] != '\n')
        sb_putc(out, '\n');
    pi->total = n;
    pi->first = start;
    pi->shown = end - start;
    pi->next = end;
    pi->truncated = end < n;
}

/* Frames not placed under an Iframe node (owner unknown, or not in the
 * parent's tree yet) go at the end under their own frame line, each after
 * its parent: never dropped. */
static void place_orphans(build *B)
{
    bool progress = true;
    while (progress && !B->oom) {
        progress = false;
        for (size_t i = 1; i < B->nfr && !B->oom; i++) {
            frame_st *F = &B->fr[i];
            if (F->placed || (F->parent >= 0 && !B->fr[F->parent].placed))
                continue;
            /* A frame that is not in the page: its parent is gone, or the
             * parent's document does not own it (a page left for the
             * back/forward cache keeps its frames alive, and an iframe
             * removed a moment ago may not be reported detached yet). No
             * line for it. A frame the parent owns but whose iframe is not
             * in the parent's tree (inside hidden content) still shows. */
            if ((F->parent < 0 && F->f->parent[0]) ||
                (F->parent >= 0 && (F->own_rc == CDP_EPROTOCOL || B->fr[F->parent].ghost))) {
                F->placed = F->ghost = true;
                progress = true;
                continue;
            }
            int v = vnew(B, -1, V_FRAME, F->parent >= 0 ? F->parent : 0);
            if (v < 0)
                return;
            B->v[v].toff = (uint32_t)i + 1;
            B->fr[i].placed = true;
            walk_frame_root(B, (int)i, v, 1);
            finish(B, v);
            progress = true;
        }
    }
}

/* Can t's cached snapshot serve query q? Only while nothing may have
 * changed: same document and frames, no page or network event on the tab,
 * no command sent to the browser by anyone (an action, an evaluation, a
 * navigation), and not older than a few seconds (input values and CSS
 * change without any event). A plain first page is held to a shorter age
 * than paging, queries and text mode. */
static bool cache_valid(snap_agent *a, snap_tab *t, const snap_query *q)
{
    const struct snap_cache *C = t->cache;
    if (!C)
        return false;
    bool plain = q->offset == 0 && !(q->query && *q->query) && !q->text;
    int64_t age = snap_now_ms() - C->built_ms;
    return C->tab == t->id && C->nav == t->nav && C->activity == t->activity &&
           C->cmd == cdp_last_id(a->c) && C->sig == frames_sig(t) && age >= 0 &&
           age <= (plain ? CACHE_FRESH_MS : CACHE_MAX_AGE_MS);
}

/* Read the page and replace t->cache. 0 or a SNAP_E* code with r filled. */
static int rebuild(snap_agent *a, snap_tab *t, snap_result *r)
{
    snap_cache_free(t->cache);
    t->cache = NULL;
    build B = {0};
    B.tail_text = -1;
    B.a = a;
    B.t = t;
    B.tab_id = t->id;
    int tab = t->id;
    uint64_t nav = t->nav, activity = t->activity, sig = frames_sig(t);
    int rc = fetch(&B);
    if (rc) {
        char why[200];
        snprintf(why, sizeof why, "%s", B.nfr && B.fr[0].err[0] ? B.fr[0].err
                 : cdp_conn_error(a->c));
        free_build(&B);
        if (rc == SNAP_ENOMEM)
            return snap_fail(r, rc, "out of memory building the snapshot");
        return snap_fail(r, SNAP_EBROWSER, "cannot read the page's accessibility tree: %s",
                         why);
    }
    uint64_t cmd = cdp_last_id(a->c);
    for (size_t i = 0; i < B.nfr; i++)
        B.hintv += B.fr[i].nnodes;
    B.hintv += B.nfr;
    /* The view tree: the main frame, child frames under their Iframe
     * nodes, the rest after. */
    for (size_t i = 0; i < B.nfr && !rc; i++)
        rc = ax_reorder(&B.fr[i]);
    if (rc) {
        free_build(&B);
        return snap_fail(r, rc, "out of memory building the snapshot");
    }
    mask_secrets(&B);
    if (B.oom) {
        free_build(&B);
        return snap_fail(r, SNAP_ENOMEM, "out of memory building the snapshot");
    }
    int rt = ax_root(&B.fr[0]);
    B.title = rt >= 0 ? ax_name(&B.fr[0], ax_at(&B.fr[0], (size_t)rt)) : NULL;
    B.deep_left = 2 * B.hintv + 1024;
    B.fr[0].placed = true;
    walk_frame_root(&B, 0, -1, 0);
    place_orphans(&B);
    /* The view has what it shows: the records and child lists go (the
     * strings stay, the view points into them). */
    for (size_t i = 0; i < B.nfr; i++) {
        frame_st *F = &B.fr[i];
        for (size_t c = 0; c < F->nchunk; c++)
            free(F->nodes[c]);
        free(F->nodes);
        free(F->kix);
        F->nodes = NULL;
        F->kix = NULL;
        F->nnodes = F->nkid = F->nchunk = F->released = 0;
    }
    row_context(&B);
    lines L = {0};
    for (size_t i = 0; i < B.nv && !B.oom; i = (size_t)B.v[i].end)
        collect_lines(&B, &L, (int)i, 0, -1);
    dedup_lines(&B, &L);
    struct snap_cache *C = NULL;
    if (!B.oom && !B.arena.oom)
        C = cache_from(&B, &L);
    if (C) {
        C->deep = B.deep;
        C->deep_cut = B.deep_cut;
    }
    free(L.l);
    free_build(&B);
    if (!C)
        return snap_fail(r, SNAP_ENOMEM, "out of memory building the snapshot");
    C->tab = tab;
    C->nav = nav;
    C->activity = activity;
    C->sig = sig;
    C->cmd = cmd;
    C->built_ms = snap_now_ms();
    /* The event listener may have moved the tabs while the replies came. */
    t = snap_tab_by_id(a, tab);
    if (!t) {
        snap_cache_free(C);
        return snap_fail(r, SNAP_ENOTAB, "the tab closed");
    }
    t->cache = C;
    return 0;
}

/* ---- what an action brought into view ---- */

/* A node's identity across builds: its frame id and backend node. */
static uint64_t ctl_key(const char *frame_id, int backend)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *s = (const unsigned char *)frame_id; *s; s++)
        h = (h ^ *s) * 1099511628211ULL;
    return (h ^ (uint32_t)backend) * 0x9E3779B97F4A7C15ULL;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

uint64_t *snap_controls_now(const snap_tab *t, size_t max_lines, size_t *n)
{
    *n = 0;
    const struct snap_cache *C = t->cache;
    if (!C || C->tab != t->id || C->nav != t->nav || C->n > max_lines)
        return NULL;
    uint64_t *v = malloc((C->n ? C->n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t k = 0; k < C->n; k++)
        if (cact(&C->l[k]))
            v[(*n)++] = ctl_key(C->fr[C->l[k].frame].id, C->l[k].backend);
    qsort(v, *n, sizeof *v, cmp_u64);
    return v;
}

char *snap_controls_new(snap_agent *a, snap_tab *t, const uint64_t *before, size_t nbefore,
                        size_t max)
{
    int tab = t->id;
    snap_result r = {0};
    int rc = rebuild(a, t, &r);
    snap_result_free(&r);
    t = snap_tab_by_id(a, tab);
    if (rc || !t || !t->cache)
        return NULL;
    const struct snap_cache *C = t->cache;
    sbuf out = {0}, ln = {0};
    size_t shown = 0, more = 0;
    for (size_t k = 0; k < C->n; k++) {
        const vnode *c = &C->l[k];
        if (!cact(c))
            continue;
        const cframe *F = &C->fr[c->frame];
        uint64_t key = ctl_key(F->id, c->backend);
        if (bsearch(&key, before, nbefore, sizeof *before, cmp_u64))
            continue;
        if (shown == max) {
            more++;
            continue;
        }
        ln.len = 0;
        render(C, c, &ln);
        const char *nm = cname(C, c);
        uint32_t ref = snap_ref_for(a, tab, F->id, F->loader, c->backend, crole(C, c),
                                    nm ? nm : "");
        if (!ref)
            continue;
        sb_printf(&ln, " [e%u]", ref);
        render_tail(C, c, &ln);
        sb_putc(&ln, '\n');
        sb_putn(&out, ln.p, ln.len);
        shown++;
    }
    if (more)
        sb_printf(&out, "and %zu more (a snapshot lists them)\n", more);
    free(ln.p);
    if (out.oom || !out.len) {
        free(out.p);
        return NULL;
    }
    out.p[out.len - 1] = 0;         /* no final line break */
    return out.p;
}

int snap_build(snap_agent *a, snap_tab *t, const snap_query *q, snap_result *r)
{
    snap_query dq = {0};
    if (!q)
        q = &dq;
    if (!t || t->closed || !t->nframes)
        return snap_fail(r, SNAP_ENOTAB, "no open tab to observe");
    snap_sync(a);
    t = snap_tab_by_id(a, t->id);
    if (!t || t->closed || !t->nframes)
        return snap_fail(r, SNAP_ENOTAB, "the tab closed");
    if (!cache_valid(a, t, q)) {
        int tab = t->id;
        int rc = rebuild(a, t, r);
        if (rc)
            return rc;
        t = snap_tab_by_id(a, tab);
    }
    const struct snap_cache *C = t->cache;

    if (!r->obs[0])
        snap_obs_issue(a, t, r->obs);
    size_t budget = q->budget_chars ? q->budget_chars
                    : a->o.budget_chars ? a->o.budget_chars : DEFAULT_BUDGET;
    if (budget < MIN_BUDGET)
        budget = MIN_BUDGET;
    sbuf out = {0};
    header(C, a, t, r->obs, &out);
    sb_printf(&out, open_fmt, a->nonce);
    char close_line[96];
    snprintf(close_line, sizeof close_line, close_fmt, a->nonce);
    /* Room for the content: the budget less header, markers and the
     * longest footer and note (below 280 bytes). */
    size_t fixed = out.len + strlen(close_line) + 280 + (C->deep ? 320 : 0);
    size_t room = budget > fixed ? budget - fixed : 0;
    page_info pi = {0};
    if (q->text) {
        /* The page text, rendered for this page and dropped after it. */
        sbuf txt = {0};
        page_text(C, &txt);
        if (txt.oom) {
            free(txt.p);
            free(out.p);
            return snap_fail(r, SNAP_ENOMEM, "out of memory building the snapshot");
        }
        page_chars(&txt, q, room, &out, &pi);
        free(txt.p);
    } else
        page_elements(a, t, C, q, room, &out, &pi);
    sb_puts(&out, close_line);
    if (q->text) {
        if (pi.truncated)
            sb_printf(&out, "[more] text %zu-%zu of %zu chars shown; next: text_offset=%zu\n",
                      pi.first, pi.first + pi.shown, pi.total, pi.next);
        else if (q->query && *q->query && pi.shown == 0)
            sb_puts(&out, "[end] no match at or after text_offset\n");
        else
            sb_printf(&out, "[end] text %zu-%zu of %zu chars\n", pi.first,
                      pi.first + pi.shown, pi.total);
    } else {
        const char *what = q->query && *q->query ? "matching lines" : "lines";
        if (pi.truncated)
            sb_printf(&out, "[more] %s %zu-%zu of %zu shown, %zu left; next: offset=%zu "
                      "(or a query)\n", what, pi.first + 1, pi.first + pi.shown, pi.total,
                      pi.total - pi.first - pi.shown, pi.next);
        else if (pi.first > 0 || (q->query && *q->query))
            sb_printf(&out, "[end] %s %zu-%zu of %zu\n", what,
                      pi.total ? pi.first + 1 : 0, pi.first + pi.shown, pi.total);
        if (pi.text_cut)
            sb_printf(&out, "[note] text lines are cut at %d chars (\xe2\x80\xa6); text mode "
                      "has the whole text\n", TEXT_MAX_CHARS);
    }
    if (C->deep)
        sb_printf(&out, "[note] the page nests deeper than %d levels: the %zu nodes below "
                  "are shown flattened under their ancestor at that depth (in page order, "
                  "without their structure)%s\n", MAX_DEPTH, C->deep,
                  C->deep_cut ? "; past a bound some were left out (the browser's tree "
                  "repeats nodes)" : "");
    if (out.oom) {
        free(out.p);
        return snap_fail(r, SNAP_ENOMEM, "out of memory building the snapshot");
    }
    write_structured(C, t, q, r->obs, &pi, out.len, r);
    if (r->text && *r->text) {
        sbuf both = {0};
        sb_puts(&both, r->text);
        if (r->text[strlen(r->text) - 1] != '\n')
            sb_putc(&both, '\n');
        sb_putn(&both, out.p, out.len);
        free(out.p);
        if (both.oom) {
            free(both.p);
            return snap_fail(r, SNAP_ENOMEM, "out of memory");
        }
        out = both;
    }
    free(r->text);
    r->text = out.p ? out.p : calloc(1, 1);
    r->code = 0;
    return 0;
}

int snap_observe(snap_agent *a, const snap_query *q, snap_result *r)
{
    memset(r, 0, sizeof *r);
    if (snap_sync(a))
        return snap_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
    snap_tab *t = snap_tab_current(a);
    if (!t)
        return snap_fail(r, SNAP_ENOTAB, "no open tab; open a URL first");
    if (t->dialog_open)
        return snap_fail(r, SNAP_EDIALOG, "tab t%d has a %s dialog open; answer it first",
                         t->id, t->dialog_type);
    snap_gated gg;
    snap_gate_in gi = {.tool = q && q->text ? "text" : "snapshot", .tab = t->id};
    int rc = snap_gate_ask(a, &gi, &gg, r);
    if (rc)
        return rc;
    t = snap_tab_current(a);
    char note[600];
    snap_nav_note(a, t, note, sizeof note);
    if (note[0]) {
        free(r->text);
        r->text = strdup(note);
    }
    rc = t ? snap_build(a, t, q, r) : snap_fail(r, SNAP_ENOTAB, "the tab closed");
    snap_gate_done(a, &gg, rc, r);
    return rc;
}
