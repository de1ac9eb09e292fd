/*
 * observe_tree.c — the view tree's building blocks: page-derived text (into
 * base/'s base_buf), backend id sets, per-session and per-frame fetch state,
 * view nodes and roles.
 *
 * Part of snapshot/ (see observe_int.h for what the observe_* files share).
 */
#include "snapshot/observe_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append page-derived text: whitespace runs collapse to one space (or keep
 * one newline with PAGE_KEEP_NL), control characters become spaces, with
 * PAGE_QUOTED '"' and '\' are escaped, and no run of three '<' or '>' ever
 * comes out (the third becomes a look-alike angle quote), so page content
 * can never spell a content marker. Characters the gate never shows raw
 * (bidi controls, invisible characters, C1 controls, U+2028/2029; invalid
 * UTF-8: gate_char_escape) are shown as their escape (\u202e, \xff). At
 * most max bytes of input are used; when cut, "…" is appended. Returns true
 * when the text was cut. */
bool snap_obs_put_page(base_buf *b, const char *s, size_t n, size_t max, unsigned mode)
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
        char esc[GATE_CHAR_ESC_MAX];
        size_t l = 1, k = c < 0x80 ? 0 : gate_char_escape(esc, s + i, n - i, &l);
        if (used + l > max) {
            cut = true;
            break;
        }
        if (space) {
            base_buf_putc(b, nl ? '\n' : ' ');
            space = nl = false;
            run_lt = run_gt = 0;
            used++;
        }
        if (c < 0x20 || c == 0x7f) {
            base_buf_putc(b, ' ');
        } else if (c == '<') {
            if (++run_lt >= 3) {
                base_buf_puts(b, "\xe2\x80\xb9");     /* ‹ */
                run_lt = 0;
            } else {
                base_buf_putc(b, '<');
            }
            run_gt = 0;
        } else if (c == '>') {
            if (++run_gt >= 3) {
                base_buf_puts(b, "\xe2\x80\xba");     /* › */
                run_gt = 0;
            } else {
                base_buf_putc(b, '>');
            }
            run_lt = 0;
        } else {
            run_lt = run_gt = 0;
            if ((mode & PAGE_QUOTED) && (c == '"' || c == '\\'))
                base_buf_putc(b, '\\');
            base_buf_put(b, k ? esc : s + i, k ? k : l);
        }
        used += l;
        i += l;
    }
    if (cut)
        base_buf_puts(b, "\xe2\x80\xa6");             /* … */
    return cut;
}

/* n bytes of s with what gate_char_escape escapes written as its escape
 * into b; false when there was nothing to escape (b untouched). */
static bool page_esc(base_buf *b, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (unsigned char)s[i] < 0x80)
        i++;
    if (i == n)
        return false;
    base_buf_put(b, s, i);
    while (i < n) {
        char esc[GATE_CHAR_ESC_MAX];
        size_t l = 1, k = (unsigned char)s[i] < 0x80 ? 0 : gate_char_escape(esc, s + i, n - i, &l);
        base_buf_put(b, k ? esc : s + i, k ? k : l);
        i += l;
    }
    return true;
}

/* A page-derived string (n bytes) as a JSON string (key: as a member's
 * key): see snap_json_page. */
static void json_page_n(json_w *w, const char *s, size_t n, bool key)
{
    base_buf b = {0};
    bool esc = page_esc(&b, s, n);
    const char *out = esc ? (b.oom || !b.s ? NULL : b.s) : s;
    size_t len = esc ? b.len : n;
    if (key)
        json_w_keyn(w, out ? out : "?", out ? len : 1);
    else if (out)
        json_w_strn(w, out, len);
    else
        json_w_null(w);
    base_buf_free(&b);
}

/* A page-derived string into a structured (JSON) result: what the text view
 * shows escaped (gate_char_escape) is written as the same visible escape, as
 * text (the decoded string holds "\u202e", six characters, never U+202E
 * itself); everything else as it is (the JSON writer escapes quotes and
 * controls). NULL writes null, as json_w_str does; so does running out of
 * memory (never the raw string). */
void snap_json_page(json_w *w, const char *s)
{
    if (!s)
        json_w_null(w);
    else
        json_page_n(w, s, strlen(s), false);
}

void snap_json_page_framed(json_w *w, const snap_agent *a, const char *const *kv, size_t n)
{
    base_buf b = {0};
    base_buf_printf(&b, "<<<page-content nonce=%s>>>", a->nonce);
    for (size_t i = 0; i + 1 < n; i += 2) {
        if (!kv[i + 1] || !*kv[i + 1])
            continue;
        base_buf_printf(&b, "\n%s: ", kv[i]);
        snap_obs_put_page(&b, kv[i + 1], strlen(kv[i + 1]), 1024, 0);
    }
    base_buf_printf(&b, "\n<<<end page-content nonce=%s>>>", a->nonce);
    if (b.oom || !b.s)
        json_w_null(w);
    else
        json_w_strn(w, b.s, b.len);
    base_buf_free(&b);
}

void snap_json_page_val(json_w *w, const json_val *v)
{
    size_t n = 0;
    if (json_is(v, JSON_STRING)) {
        const char *s = json_str(v, &n);
        json_page_n(w, s, n, false);
    } else if (json_is(v, JSON_ARRAY) || json_is(v, JSON_OBJECT)) {
        bool obj = json_is(v, JSON_OBJECT);
        if (obj)
            json_w_obj_begin(w);
        else
            json_w_arr_begin(w);
        for (const json_val *m = json_first(v); m; m = json_next(m)) {
            if (obj) {
                const char *k = json_key(m, &n);
                json_page_n(w, k, n, true);
            }
            snap_json_page_val(w, m);
        }
        if (obj)
            json_w_obj_end(w);
        else
            json_w_arr_end(w);
    } else {
        json_w_val(w, v);
    }
}

void snap_obs_put_quoted(base_buf *b, const char *s, size_t max)
{
    base_buf_putc(b, '"');
    snap_obs_put_page(b, s, strlen(s), max, PAGE_QUOTED);
    base_buf_putc(b, '"');
}

/* ASCII case-insensitive substring search. */
bool snap_obs_contains_ci(const char *hay, size_t hlen, const char *needle)
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

/* The code point of the escape at s (n bytes left) that the observation
 * writes for a character it never shows raw (gate_char_escape: "\u200b",
 * "\u{e0041}"), encoded as UTF-8 into u8 (4 bytes); its length in s, else 0. */
static size_t esc_unit(const unsigned char *s, size_t n, unsigned char *u8, size_t *u8n)
{
    if (n < 6 || s[0] != '\\' || s[1] != 'u')
        return 0;
    bool brace = s[2] == '{';
    size_t i = brace ? 3 : 2, end = brace ? (n < 11 ? n : 11) : 6;
    uint32_t c = 0;
    size_t d = 0;
    for (; i < end && isxdigit(s[i]); i++, d++)
        c = c * 16 + (uint32_t)(isdigit(s[i]) ? s[i] - '0' : (s[i] | 0x20) - 'a' + 10);
    if (brace ? (i >= n || s[i] != '}' || d < 5) : d != 4)
        return 0;
    if (c < 0x80 || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
        return 0;
    if (c < 0x800) {
        u8[0] = (unsigned char)(0xC0 | c >> 6);
        *u8n = 2;
    } else if (c < 0x10000) {
        u8[0] = (unsigned char)(0xE0 | c >> 12);
        u8[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *u8n = 3;
    } else {
        u8[0] = (unsigned char)(0xF0 | c >> 18);
        u8[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
        u8[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *u8n = 4;
    }
    u8[*u8n - 1] = (unsigned char)(0x80 | (c & 0x3F));
    return brace ? i + 1 : 6;
}

/* The folded matching form (snap_obs_fold): ASCII whitespace (space, tab,
 * CR, LF, FF) is a space and ASCII letters are lower case; other
 * characters fold as the gate's classifier folds them (gate_char_fold, the
 * one definition): white space beyond ASCII (no-break space, ...) is a
 * space, invisible characters (zero-width, soft hyphen, bidi and other
 * format controls, tags) are dropped, so that a word the page breaks with
 * <wbr>, a zero-width space or a soft hyphen still reads as one, and
 * full-width forms read as ASCII. Whitespace runs are one space. The
 * observation shows the invisible characters as their escapes
 * (gate_char_escape: "\u200b"), and queries match what it shows, so an
 * escape folds as its character. Returns how many bytes of s one folding
 * unit takes and sets *out to what it folds to: ' ' for whitespace, 0 for
 * a dropped character, else one byte. */
static size_t fold_unit(const unsigned char *s, size_t n, unsigned char *out)
{
    unsigned char c = s[0], u8[4];
    size_t u8n = 0, used, l = esc_unit(s, n, u8, &u8n);
    int f = l ? gate_char_fold((const char *)u8, u8n, &used)
              : gate_char_fold((const char *)s, n, &used);
    if (l && !f)
        l = 0; /* an escape of a character shown as it is: kept as written */
    if (f) {
        *out = f == GATE_FOLD_DROP ? 0 : (unsigned char)(f >= 'A' && f <= 'Z' ? f + 32 : f);
        return l ? l : used;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        *out = ' ';
        return 1;
    }
    *out = c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
    return 1;
}

/* Fold s[0, n) into dst (room for n bytes; not NUL-terminated) and return
 * the folded length. When map is not NULL, map[j] is the offset in s of
 * the unit that gave dst[j] (a whitespace run: its first byte). Linear. */
size_t snap_obs_fold(const char *s, size_t n, char *dst, uint32_t *map)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c;
        size_t l = fold_unit(u + i, n - i, &c);
        if (c && !(c == ' ' && j > 0 && dst[j - 1] == ' ')) {
            if (map)
                map[j] = (uint32_t)i;
            dst[j++] = (char)c;
        }
        i += l;
    }
    return j;
}

/* First occurrence of folded needle nd[0, nn) in folded hay h[0, hn) at or
 * after from; hn when none. */
size_t snap_obs_fold_find(const char *h, size_t hn, const char *nd, size_t nn, size_t from)
{
    if (nn == 0)
        return from <= hn ? from : hn;
    for (size_t i = from; i + nn <= hn; i++) {
        const char *p = memchr(h + i, nd[0], hn - nn + 1 - i);
        if (!p)
            break;
        i = (size_t)(p - h);
        if (memcmp(p, nd, nn) == 0)
            return i;
    }
    return hn;
}

/* Does hay[0, hlen) contain needle once both are folded (see fold_unit)?
 * Unlike snap_obs_contains_ci (kept as it is for the secret-field words
 * of observe_dom.c), a phrase matches across inline elements and line
 * breaks, and a path written with <wbr> or U+200B matches without them. */
bool snap_obs_find_folded(const char *hay, size_t hlen, const char *needle)
{
    size_t nl = strlen(needle);
    char sb[512];
    char *buf = hlen + nl <= sizeof sb ? sb : malloc(hlen + nl);
    if (!buf)
        return snap_obs_contains_ci(hay, hlen, needle);
    size_t fn = snap_obs_fold(needle, nl, buf, NULL);
    size_t fh = snap_obs_fold(hay, hlen, buf + fn, NULL);
    bool hit = snap_obs_fold_find(buf + fn, fh, buf, fn, 0) < fh;
    if (buf != sb)
        free(buf);
    return hit;
}

/* True when s has only whitespace. */
bool snap_obs_blank(const char *s)
{
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\f')
            return false;
    return true;
}

/* Compare two strings ignoring leading/trailing whitespace, collapsing
 * inner runs, and ignoring ASCII case. */
bool snap_obs_same_text(const char *x, const char *y)
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

void snap_obs_ids_add(idset *s, int id)
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

void snap_obs_ids_sort(idset *s)
{
    if (s->n)
        qsort(s->v, s->n, sizeof *s->v, cmp_int);
}

bool snap_obs_ids_has(const idset *s, int id)
{
    return s->n && bsearch(&id, s->v, s->n, sizeof *s->v, cmp_int) != NULL;
}

/* The index of role (a static string or one in a frame's str, which the
 * cache keeps) in B->rt, adding it; index 0 is "". */
uint16_t snap_obs_role_ix(build *B, const char *role)
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

const char *snap_obs_vrole(const build *B, const vnode *x)
{
    return B->nrt ? B->rt[x->role] : "";
}

int snap_obs_vnew(build *B, int parent, int kind, int frame)
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

bool snap_obs_in_list(const char *role, const char *const *list)
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
const char *const snap_obs_NAME_FROM_CONTENT[] = {
    "button", "link", "heading", "cell", "gridcell", "columnheader", "rowheader",
    "checkbox", "radio", "switch", "tab", "option", "MenuListOption", "menuitem",
    "menuitemcheckbox", "menuitemradio", "tooltip", "ToggleButton", "PopUpButton",
    "DisclosureTriangle", NULL,
};

unsigned snap_obs_role_class(const char *role)
{
    unsigned c = 0;
    if (snap_obs_in_list(role, FLAT_ROLES))
        c |= RC_FLAT;
    if (snap_obs_in_list(role, FLAT_UNLESS_NAMED))
        c |= RC_FLAT_NAMED;
    if (snap_obs_in_list(role, DROP_ROLES))
        c |= RC_DROP;
    if (snap_obs_in_list(role, ACT_ROLES))
        c |= RC_ACT;
    if (snap_obs_in_list(role, LEAF_ROLES))
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
const char *snap_obs_print_role(const char *role, int level)
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
