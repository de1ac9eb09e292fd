/*
 * secval.c — the values of secret fields, remembered as keyed hashes, so
 * that a new node holding one is masked too (red team s13, W7).
 *
 * A field stays secret for the life of its node (snap_secret_note), but a
 * page can swap a filled password field for a new text input holding its
 * value ("show password" by node swap): the new node is no secret by any
 * rule. So the values the builds of a tab collect from secret fields (the
 * AX path's snap_obs_mask_secrets, the walker's noted values read back by
 * observe_walk.c) are remembered per document (a->refdocs index) as
 * HMAC-SHA-256 under a key of 32 random bytes made per agent, truncated
 * to 16 bytes, with the length of the normalised value; never the value.
 * A later build of the same document masks a field value, a text or a
 * name that equals one, or a word of it that does
 * (snap_obs_mask_secrets). Normalised: white space runs made one space,
 * trimmed, ASCII letters lower-cased (a page that pads or changes the
 * case of the value does not escape). Values of more than SECVAL_LEN_MAX
 * normalised bytes are not remembered; past SECVAL_MAX entries the
 * oldest is forgotten (a ring). The parts of a value of at most
 * SECVAL_PARTS_OF bytes (SECVAL_PART_MIN bytes or more) are remembered
 * too, in a ring of their own: a field whose whole value is one is
 * masked (a value split across two fields); a text or name only for a
 * whole value or a word equal to one. Residuals (docs/threat-model.md): a value
 * split across nodes, or shown transformed otherwise.
 */
#include "snapshot/snap_int.h"
#include "snapshot/observe_int.h"
#include "vault/vault.h"

#include <stdlib.h>
#include <string.h>

#define SECVAL_MAX 1024
#define SECVAL_PARTS_MAX 4096
#define SECVAL_PART_MIN 4    /* bytes: a shorter part of a value is not remembered */
#define SECVAL_PARTS_OF 32   /* the parts of values up to this long are remembered */
#define SECVAL_MAC 16

typedef struct {
    uint32_t doc;
    uint32_t len;               /* of the normalised value */
    uint8_t mac[SECVAL_MAC];
} secval_ent;

/* A ring of entries: past cap the oldest is forgotten. */
typedef struct {
    secval_ent *e;
    size_t cap, n, next;
    uint64_t lens;              /* bit l % 64: an entry of normalised length l */
} secval_ring;

struct snap_secval {
    uint8_t key[32];
    secval_ring whole;          /* the values */
    secval_ring parts;          /* their parts (a value split across fields) */
};

static bool ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* s[0..n) normalised into out (cap SECVAL_LEN_MAX); its length, or 0 when
 * blank or longer. */
static size_t norm(const char *s, size_t n, char out[SECVAL_LEN_MAX])
{
    size_t k = 0;
    bool sp = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (ws(c)) {
            sp = k > 0;
            continue;
        }
        if (k + (sp ? 2 : 1) > SECVAL_LEN_MAX)
            return 0;
        if (sp)
            out[k++] = ' ';
        sp = false;
        out[k++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return k;
}

/* The normalised length of s[0..n) (0 when blank; more than
 * SECVAL_LEN_MAX when longer), without copying. */
static size_t norm_len(const char *s, size_t n)
{
    size_t k = 0;
    bool sp = false;
    for (size_t i = 0; i < n && k <= SECVAL_LEN_MAX; i++) {
        if (ws((unsigned char)s[i])) {
            sp = k > 0;
            continue;
        }
        k += sp ? 2 : 1;
        sp = false;
    }
    return k;
}

static void mac_of(const snap_secval *sv, const char *s, size_t n, uint8_t out[SECVAL_MAC])
{
    uint8_t full[VAULT_SHA256_LEN];
    vault_hmac_sha256(sv->key, sizeof sv->key, s, n, full);
    memcpy(out, full, SECVAL_MAC);
    base_memzero(full, sizeof full);
}

static snap_secval *secval_get(snap_agent *a)
{
    if (a->secval)
        return a->secval;
    snap_secval *sv = calloc(1, sizeof *sv);
    if (!sv)
        return NULL;
    sv->whole.e = calloc(SECVAL_MAX, sizeof *sv->whole.e);
    sv->parts.e = calloc(SECVAL_PARTS_MAX, sizeof *sv->parts.e);
    sv->whole.cap = SECVAL_MAX;
    sv->parts.cap = SECVAL_PARTS_MAX;
    if (!sv->whole.e || !sv->parts.e || base_random(sv->key, sizeof sv->key) != 0) {
        free(sv->whole.e);
        free(sv->parts.e);
        free(sv);
        return NULL;
    }
    a->secval = sv;
    return sv;
}

static bool ring_has(const secval_ring *r, uint32_t doc, uint32_t len,
                     const uint8_t mac[SECVAL_MAC])
{
    for (size_t i = 0; i < r->n; i++)
        if (r->e[i].doc == doc && r->e[i].len == len && memcmp(r->e[i].mac, mac, SECVAL_MAC) == 0)
            return true;
    return false;
}

/* Remember nv[0..k) (normalised) for doc in ring r. */
static void ring_add(const snap_secval *sv, secval_ring *r, uint32_t doc, const char *nv,
                     size_t k)
{
    secval_ent e = {doc, (uint32_t)k, {0}};
    mac_of(sv, nv, k, e.mac);
    if (!ring_has(r, e.doc, e.len, e.mac)) {
        r->e[r->next] = e;
        r->next = (r->next + 1) % r->cap;
        if (r->n < r->cap)
            r->n++;
        r->lens |= 1ull << (k % 64);
    }
    base_memzero(&e, sizeof e);
}

void snap_secval_note(snap_agent *a, int tab, const char *frame, const char *loader,
                      const char *v, size_t n)
{
    char nv[SECVAL_LEN_MAX];
    size_t k = norm(v, n, nv);
    long doc = k ? snap_refdoc_ix(a, tab, frame, loader, true) : -1;
    snap_secval *sv = doc >= 0 ? secval_get(a) : NULL;
    uint8_t mac[SECVAL_MAC];
    if (sv)
        mac_of(sv, nv, k, mac);
    /* Known already (each build notes the fields it sees): its parts too. */
    if (sv && !ring_has(&sv->whole, (uint32_t)doc, (uint32_t)k, mac)) {
        ring_add(sv, &sv->whole, (uint32_t)doc, nv, k);
        /* Its parts (a page that shows it split across two fields). */
        for (size_t l = SECVAL_PART_MIN; k <= SECVAL_PARTS_OF && l < k; l++)
            for (size_t i = 0; i + l <= k; i++)
                ring_add(sv, &sv->parts, (uint32_t)doc, nv + i, l);
    }
    base_memzero(nv, sizeof nv);
    base_memzero(mac, sizeof mac);
}

/* The document's index when it has remembered values, else -1. */
static long secval_doc(const snap_agent *a, int tab, const char *frame, const char *loader)
{
    if (!a->secval || !a->secval->whole.n)
        return -1;
    long doc = snap_refdoc_ix((snap_agent *)a, tab, frame, loader, false);
    for (size_t i = 0; doc >= 0 && i < a->secval->whole.n; i++)
        if (a->secval->whole.e[i].doc == (uint32_t)doc)
            return doc;
    return -1;
}

/* Whether s[0..n), normalised, is an entry of ring r for doc. */
static bool seen_whole(const snap_secval *sv, const secval_ring *r, long doc, const char *s,
                       size_t n)
{
    size_t l = norm_len(s, n);
    if (!l || l > SECVAL_LEN_MAX || !(r->lens & (1ull << (l % 64))))
        return false;
    char nv[SECVAL_LEN_MAX];
    size_t k = norm(s, n, nv);
    uint8_t mac[SECVAL_MAC];
    bool hit = false;
    if (k) {
        mac_of(sv, nv, k, mac);
        hit = ring_has(r, (uint32_t)doc, (uint32_t)k, mac);
    }
    base_memzero(nv, sizeof nv);
    base_memzero(mac, sizeof mac);
    return hit;
}

bool snap_secval_known(const snap_agent *a, const char *s, size_t n)
{
    const snap_secval *sv = a ? a->secval : NULL;
    size_t l = s ? norm_len(s, n) : 0;
    if (!sv || !l || l > SECVAL_LEN_MAX || !(sv->whole.lens & (1ull << (l % 64))))
        return false;
    char nv[SECVAL_LEN_MAX];
    size_t k = norm(s, n, nv);
    uint8_t mac[SECVAL_MAC];
    bool hit = false;
    if (k)
        mac_of(sv, nv, k, mac);
    for (size_t i = 0; k && !hit && i < sv->whole.n; i++)
        hit = sv->whole.e[i].len == k && memcmp(sv->whole.e[i].mac, mac, SECVAL_MAC) == 0;
    base_memzero(nv, sizeof nv);
    base_memzero(mac, sizeof mac);
    return hit;
}

static bool punct(unsigned char c)
{
    return c && strchr(".,;:!?()[]{}\"'<>", c) != NULL;
}

/* The length of the first part of s that is a value remembered for doc
 * (s whole, or one of its white-space-separated words, with or without
 * the punctuation around it), its offset in *off; 0 when none. */
static size_t secval_seen(const snap_agent *a, long doc, const char *s, size_t *off)
{
    const snap_secval *sv = a->secval;
    size_t n = s ? strlen(s) : 0;
    if (!sv || doc < 0 || !n)
        return 0;
    if (seen_whole(sv, &sv->whole, doc, s, n)) {
        *off = 0;
        return n;
    }
    /* A word of it, as it is or without the punctuation around it. */
    for (size_t i = 0; i < n;) {
        while (i < n && ws((unsigned char)s[i]))
            i++;
        size_t j = i;
        while (j < n && !ws((unsigned char)s[j]))
            j++;
        size_t b = i, e = j;
        while (b < e && punct((unsigned char)s[b]))
            b++;
        while (e > b && punct((unsigned char)s[e - 1]))
            e--;
        if (j > i && j - i < n && seen_whole(sv, &sv->whole, doc, s + i, j - i)) {
            *off = i;
            return j - i;
        }
        if (e > b && (b > i || e < j) && seen_whole(sv, &sv->whole, doc, s + b, e - b)) {
            *off = b;
            return e - b;
        }
        i = j;
    }
    return 0;
}

/* ---- the build (observe_build.c snap_obs_mask_secrets) ---- */

/* The parts of s that are values of secret fields remembered for the
 * document doc (secval_seen: a field swapped for a new node holding
 * the value, the value written into a text: red team s13, W7), each
 * appended to hits with its NUL. Returns whether s is one whole. */
static bool remembered_in(const build *B, long doc, const char *s, base_buf *hits)
{
    size_t pos = 0, off = 0, len;
    bool whole = false;
    while (s && s[pos] && (len = secval_seen(B->a, doc, s + pos, &off)) > 0) {
        whole = whole || (pos == 0 && off == 0 && !s[len]);
        base_buf_put(hits, s + pos + off, len);
        base_buf_putc(hits, 0);
        pos += off + len;
    }
    return whole;
}

void snap_obs_remembered(build *B, base_buf *hits)
{
    for (size_t fi = 0; fi < B->nfr; fi++) {
        frame_st *F = &B->fr[fi];
        long doc = secval_doc(B->a, B->tab_id, F->f->id, F->f->loader);
        for (size_t k = 0; doc >= 0 && k < F->nnodes; k++) {
            axn *n = snap_obs_ax_at(F, k);
            if (n->flags & AX_NAME)
                remembered_in(B, doc, snap_obs_ax_name(F, n), hits);
            const char *v = snap_obs_ax_value(F, n);
            const char *role = snap_obs_ax_role(F, n);
            bool field = (n->st & ST_EDITABLE) || strcmp(role, "textbox") == 0 ||
                         strcmp(role, "searchbox") == 0 || strcmp(role, "combobox") == 0 ||
                         strcmp(role, "spinbutton") == 0;
            bool whole = v && remembered_in(B, doc, v, hits);
            /* A field holding a part of one (split across two fields). */
            if (v && !whole && field &&
                seen_whole(B->a->secval, &B->a->secval->parts, doc, v, strlen(v))) {
                whole = true;
                base_buf_put(hits, v, strlen(v) + 1);
            }
            if (whole && field) {
                n->st |= ST_SECRET;
                snap_secret_note(B->a, B->tab_id, F->f->id, F->f->loader, n->backend,
                                 SNAP_SECRET_PW);
            }
        }
    }
}

void snap_secval_free(snap_agent *a)
{
    if (!a->secval)
        return;
    base_memzero(a->secval->whole.e, SECVAL_MAX * sizeof *a->secval->whole.e);
    base_memzero(a->secval->parts.e, SECVAL_PARTS_MAX * sizeof *a->secval->parts.e);
    free(a->secval->whole.e);
    free(a->secval->parts.e);
    base_memzero(a->secval, sizeof *a->secval);
    free(a->secval);
    a->secval = NULL;
}
