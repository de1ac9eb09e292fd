/*
 * download.c — downloads, reported as downloads (issue 13, point 6d).
 *
 * A download is a file transfer, which the grant governs: the egress class
 * file_transfer and the file scopes (docs/gate.md, "Downloads"). Every
 * browser context cdpgate makes gets Browser.setDownloadBehavior with
 * events on: "allowAndName" into a fresh 0700 directory inside the grant's
 * first usable file scope when the grant has file_transfer and a scope,
 * else "deny". The browser then reports each download
 * (Browser.downloadWillBegin: guid, frame, URL, suggested name;
 * Browser.downloadProgress: bytes and inProgress/completed/canceled); a
 * denied one is canceled at once and writes nothing.
 *
 * Invariants
 *  - Nothing is ever written outside the download directory, and the
 *    directory is inside a file scope (its real path checked after
 *    mkdtemp). The browser writes <dir>/<guid> (allowAndName); the guid is
 *    checked to be hex and '-' before it names a path. A completed file is
 *    opened with O_NOFOLLOW, must be a regular file, and gets its
 *    sanitized name by link() (which never replaces an existing file, a
 *    symlink included) and unlink() of the guid name.
 *  - The suggested name is the page's text: it is cut to at most
 *    SNAP_DL_NAME_MAX - 1 bytes of letters, digits and ".-_+()," (anything
 *    else one '_'; no leading '.'; "download" when nothing is left), so it
 *    holds no path separator, control or bidi character and no space.
 *  - A download belongs to the tab whose frame started it; an action's
 *    settle counts those of its tab started since its input
 *    (snap_dl_busy, snap_dl_settled) and its result reports them.
 *  - Every download is audited when it begins (gate_note_decided, tool
 *    "download", the URL redacted): deny when blocked, allow with the
 *    directory when it may be saved.
 */
#define _XOPEN_SOURCE 700     /* realpath, mkdtemp (POSIX.1-2008 XSI) */
#include "snapshot/snap_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define DL_DIR_PREFIX "cdpgate-downloads-"

/* ---- names ---- */

void snap_dl_name_clean(const char *s, char out[SNAP_DL_NAME_MAX])
{
    size_t k = 0;
    bool under = false;
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (k >= SNAP_DL_NAME_MAX - 1)
            break;
        if ((*c & 0xc0) == 0x80)
            continue;            /* the rest of a character already replaced */
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || (*c && strchr(".-_+(),", *c));
        if (ok && !(*c == '.' && k == 0)) {
            out[k++] = (char)*c;
            under = false;
        } else if (!under) {
            out[k++] = '_';
            under = true;
        }
    }
    out[k] = 0;
    if (strspn(out, "_") == k)
        snprintf(out, SNAP_DL_NAME_MAX, "download");
}

static bool guid_ok(const char *g)
{
    size_t n = g ? strlen(g) : 0;
    return n > 0 && n < SNAP_ID_MAX && strspn(g, "0123456789abcdefABCDEF-") == n;
}

/* ---- the directory and the behaviour ---- */

/* Is real path p inside real directory d? */
static bool path_inside(const char *d, const char *p)
{
    size_t n = strlen(d);
    if (n == 1 && d[0] == '/')
        return p[0] == '/';
    return strncmp(d, p, n) == 0 && (p[n] == '/' || p[n] == 0);
}

/* The download directory: made once, in the first file scope where
 * mkdtemp succeeds, when the grant allows downloads; NULL otherwise. */
static const char *dl_dir(snap_agent *a)
{
    if (a->dl_decided)
        return a->dl_dir;
    a->dl_decided = true;
    const gate_grant *g = a->gate ? gate_grant_get(a->gate) : NULL;
    if (!g || !(g->egress & GATE_EGRESS_FILE))
        return NULL;
    for (size_t i = 0; i < g->nfile_scopes; i++) {
        char scope[PATH_MAX], tmpl[PATH_MAX + 32], real[PATH_MAX];
        if (!realpath(g->file_scopes[i], scope))
            continue;
        int n = snprintf(tmpl, sizeof tmpl, "%s/" DL_DIR_PREFIX "XXXXXX",
                         strcmp(scope, "/") ? scope : "");
        if (n < 0 || (size_t)n >= sizeof tmpl || !mkdtemp(tmpl))
            continue;
        if (!realpath(tmpl, real) || !path_inside(scope, real)) {
            rmdir(tmpl);
            continue;
        }
        a->dl_dir = strdup(real);
        if (!a->dl_dir)
            rmdir(real);
        return a->dl_dir;
    }
    return NULL;
}

void snap_dl_context(snap_agent *a, const char *ctx_id)
{
    const char *dir = dl_dir(a);
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "behavior");
    json_w_str(&w, dir ? "allowAndName" : "deny");
    if (dir) {
        json_w_key(&w, "downloadPath");
        json_w_str(&w, dir);
    }
    json_w_key(&w, "eventsEnabled");
    json_w_bool(&w, true);
    if (ctx_id && *ctx_id) {
        json_w_key(&w, "browserContextId");
        json_w_str(&w, ctx_id);
    }
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    /* Refused (a browser without the method): its own default stays. */
    if (params)
        snap_cdp_call(a, NULL, "Browser.setDownloadBehavior", params, a->o.timeout_ms, NULL,
                      NULL);
    free(params);
}

void snap_dl_free(snap_agent *a)
{
    if (a->dl_dir)
        rmdir(a->dl_dir);        /* only when nothing was saved in it */
    free(a->dl_dir);
    a->dl_dir = NULL;
}

/* ---- events ---- */

void snap_dl_expect(snap_agent *a, int tab)
{
    a->dl_expect_tab = tab;
    a->dl_expect_until = base_now_ms() + SNAP_SETTLE_CAP_MS;
    a->dl_expect_url[0] = a->dl_expect_mime[0] = 0;
}

/* s cut to cap - 1 bytes, keeping only what a MIME type is made of
 * (lower-cased letters, digits, "/.+-"): anything else ends it. */
static void mime_clean(const char *s, char *out, size_t cap)
{
    size_t k = 0;
    for (; s && s[k] && k < cap - 1; k++) {
        char c = s[k] >= 'A' && s[k] <= 'Z' ? (char)(s[k] - 'A' + 'a') : s[k];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("/.+-", c)))
            break;
        out[k] = c;
    }
    out[k] = 0;
}

void snap_dl_response(snap_agent *a, int tab, const json_val *response)
{
    const json_val *h = json_get(response, "headers");
    for (const json_val *m = json_first(h); m; m = json_next(m)) {
        size_t n = 0;
        const char *k = json_key(m, &n);
        const char *v = json_str(m, NULL);
        if (!k || !v || n != 19 || strncasecmp(k, "content-disposition", 19) != 0)
            continue;
        v += strspn(v, " \t");
        if (strncasecmp(v, "attachment", 10) != 0)
            return;
        snap_dl_expect(a, tab);
        const char *url = json_get_str(response, "url");
        snprintf(a->dl_expect_url, sizeof a->dl_expect_url, "%s", url ? url : "");
        mime_clean(json_get_str(response, "mimeType"), a->dl_expect_mime,
                   sizeof a->dl_expect_mime);
        return;
    }
}

static snap_download *dl_find(snap_agent *a, const char *guid)
{
    for (size_t i = 0; i < SNAP_DL_MAX && i < a->ndls; i++)
        if (strcmp(a->dls[i].guid, guid) == 0)
            return &a->dls[i];
    return NULL;
}

static snap_tab *tab_of_frame(snap_agent *a, const char *frame)
{
    for (size_t i = 0; frame && i < a->ntabs; i++)
        if (!a->tabs[i].closed && snap_frame_find(&a->tabs[i], frame))
            return &a->tabs[i];
    return NULL;
}

/* The browser wrote <dir>/<guid>: give it its name, never replacing a file. */
static void dl_save(snap_agent *a, snap_download *d)
{
    char from[PATH_MAX], to[PATH_MAX];
    int n = snprintf(from, sizeof from, "%s/%s", a->dl_dir, d->guid);
    int fd = n > 0 && (size_t)n < sizeof from ? open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                                              : -1;
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        if (fd >= 0)
            close(fd);
        d->state = SNAP_DL_FAILED;
        return;
    }
    (void)fchmod(fd, 0600);
    close(fd);
    d->received = (int64_t)sb.st_size;
    d->state = SNAP_DL_SAVED;
    snprintf(d->file, sizeof d->file, "%s", d->guid);  /* kept there if no name is free */
    const char *dot = strrchr(d->name, '.');
    size_t stem = dot && dot != d->name ? (size_t)(dot - d->name) : strlen(d->name);
    for (int k = 1; k < 100; k++) {
        if (k == 1)
            n = snprintf(to, sizeof to, "%s/%s", a->dl_dir, d->name);
        else
            n = snprintf(to, sizeof to, "%s/%.*s-%d%s", a->dl_dir, (int)stem, d->name, k,
                         d->name + stem);
        if (n < 0 || (size_t)n >= sizeof to)
            return;
        bool moved = link(from, to) == 0;
        if (moved) {
            unlink(from);
        } else if (errno != EEXIST) {
            /* No hard links on this file system: take the name with
             * O_EXCL first, then move the file onto it. */
            int nf = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (nf < 0 && errno != EEXIST)
                return;
            if (nf >= 0) {
                close(nf);
                moved = rename(from, to) == 0;
                if (!moved) {
                    unlink(to);
                    return;
                }
            }
        }
        if (moved) {
            snprintf(d->file, sizeof d->file, "%s", to + strlen(a->dl_dir) + 1);
            return;
        }
    }
}

static void dl_begin(snap_agent *a, const json_val *p)
{
    const char *guid = json_get_str(p, "guid");
    /* A frame of none of this agent's tabs: another agent's download (the
     * browser session's events reach every agent on the browser). */
    snap_tab *t = tab_of_frame(a, json_get_str(p, "frameId"));
    if (!t || !guid_ok(guid) || dl_find(a, guid))
        return;
    snap_download *d = &a->dls[a->ndls % SNAP_DL_MAX];
    a->ndls++;
    memset(d, 0, sizeof *d);
    snprintf(d->guid, sizeof d->guid, "%s", guid);
    snap_dl_name_clean(json_get_str(p, "suggestedFilename"), d->name);
    d->start_ms = base_now_ms();
    d->state = a->dl_dir ? SNAP_DL_RUNNING : SNAP_DL_BLOCKED;
    d->tab = t->id;
    t->settle_evt++;
    const char *url = json_get_str(p, "url");
    size_t cut = sizeof a->dl_expect_url - 1;
    if (a->dl_expect_url[0] && url && strncmp(url, a->dl_expect_url, cut) == 0 &&
        (strlen(a->dl_expect_url) < cut || strlen(url) >= cut))
        snprintf(d->mime, sizeof d->mime, "%s", a->dl_expect_mime);
    if (a->dl_expect_tab == t->id)
        a->dl_expect_tab = 0;
    if (a->gate) {
        char *shown = snap_url_redact_act(a, url ? url : "");
        char *sc = shown ? snap_scrub_url(a, shown) : NULL;
        char why[PATH_MAX + 200];
        if (d->state == SNAP_DL_BLOCKED)
            snprintf(why, sizeof why, "download of %s blocked: the grant allows no downloads "
                     "(needs egress file_transfer and a file scope)", d->name);
        else
            snprintf(why, sizeof why, "download of %s allowed into %s (egress file_transfer, "
                     "file scope)", d->name, a->dl_dir);
        gate_note_decided(a->gate, "download", sc ? sc : "", d->state == SNAP_DL_BLOCKED ?
                          GATE_DENY : GATE_ALLOW, why);
        free(sc);
        free(shown);
    }
}

void snap_dl_event(snap_agent *a, const char *method, const json_val *p)
{
    if (strcmp(method, "Browser.downloadWillBegin") == 0) {
        dl_begin(a, p);
        return;
    }
    if (strcmp(method, "Browser.downloadProgress") != 0)
        return;
    const char *guid = json_get_str(p, "guid");
    snap_download *d = guid ? dl_find(a, guid) : NULL;
    const char *state = json_get_str(p, "state");
    if (!d || !state)
        return;
    d->total = json_get_int(p, "totalBytes", d->total);
    d->received = json_get_int(p, "receivedBytes", d->received);
    if (d->state != SNAP_DL_RUNNING || strcmp(state, "inProgress") == 0)
        return;
    if (strcmp(state, "completed") == 0 && a->dl_dir)
        dl_save(a, d);
    else
        d->state = SNAP_DL_FAILED;
    snap_tab *t = snap_tab_by_id(a, d->tab);
    if (t)
        t->settle_evt++;
}

/* ---- settling and results ---- */

bool snap_dl_busy(snap_agent *a, int tab, int64_t since_ms)
{
    if (a->dl_expect_tab == tab && base_now_ms() < a->dl_expect_until)
        return true;
    for (size_t i = 0; i < SNAP_DL_MAX && i < a->ndls; i++)
        if (a->dls[i].tab == tab && a->dls[i].start_ms >= since_ms &&
            a->dls[i].state == SNAP_DL_RUNNING)
            return true;
    return false;
}

void snap_dl_settled(snap_agent *a, int tab, int64_t since_ms, snap_settled *out)
{
    out->ndls = 0;
    size_t n = a->ndls < SNAP_DL_MAX ? a->ndls : SNAP_DL_MAX;
    /* Oldest first: the ring's next slot is the oldest once it is full. */
    for (size_t k = 0; k < n; k++) {
        const snap_download *d = &a->dls[(a->ndls - n + k) % SNAP_DL_MAX];
        if (d->tab != tab || d->start_ms < since_ms)
            continue;
        if (out->ndls < (int)(sizeof out->dls / sizeof out->dls[0]))
            out->dls[out->ndls] = *d;
        out->ndls++;
    }
}

/* 12345 as "12,345". */
static void sb_count(base_buf *b, int64_t v)
{
    char s[24];
    int n = snprintf(s, sizeof s, "%lld", (long long)(v < 0 ? 0 : v));
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            base_buf_puts(b, ",");
        base_buf_printf(b, "%c", s[i]);
    }
}

void snap_dl_describe(snap_agent *a, const snap_settled *st, base_buf *b, size_t start)
{
    int shown = st->ndls < 4 ? st->ndls : 4;
    for (int i = 0; i < shown; i++) {
        const snap_download *d = &st->dls[i];
        const char *sep = b->len > start ? "; " : "";
        if (d->state == SNAP_DL_BLOCKED) {
            base_buf_printf(b, "%sdownload of %s blocked: the grant allows no downloads (needs "
                            "egress file_transfer and a file scope)", sep, d->name);
        } else if (d->state == SNAP_DL_SAVED) {
            base_buf_printf(b, "%sdownload: %s (%s%s", sep, d->name, d->mime,
                            d->mime[0] ? ", " : "");
            sb_count(b, d->received);
            base_buf_printf(b, " bytes) saved to %s/%s", a->dl_dir ? a->dl_dir : "", d->file);
        } else if (d->state == SNAP_DL_RUNNING) {
            base_buf_printf(b, "%sdownload: %s still in progress when the wait ended (", sep,
                            d->name);
            sb_count(b, d->received);
            if (d->total > 0) {
                base_buf_puts(b, " of ");
                sb_count(b, d->total);
            }
            base_buf_printf(b, " bytes), into %s", a->dl_dir ? a->dl_dir : "");
        } else {
            base_buf_printf(b, "%sdownload of %s failed (the browser canceled it or the file "
                            "could not be kept)", sep, d->name);
        }
    }
    if (st->ndls > shown)
        base_buf_printf(b, "; %d more downloads", st->ndls - shown);
}

int snap_dl_open(snap_agent *a, int tab, int64_t since_ms, int64_t deadline_ms, const char *url,
                 cdp_reply *rep, snap_result *r)
{
    cdp_reply_free(rep);
    /* Its events may follow the reply; the attachment's response, which
     * set the expectation with its type, came before it. */
    bool begun = false;
    for (size_t i = 0; i < SNAP_DL_MAX && i < a->ndls; i++)
        begun |= a->dls[i].tab == tab && a->dls[i].start_ms >= since_ms;
    if (!begun && a->dl_expect_tab != tab)
        snap_dl_expect(a, tab);
    for (;;) {
        if (snap_sync(a))
            return snap_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
        int64_t now = base_now_ms();
        if (!snap_dl_busy(a, tab, since_ms) || now >= deadline_ms)
            break;
        cdp_err e;
        int rc = cdp_pump_one(a->c, deadline_ms - now < 50 ? (int)(deadline_ms - now) : 50, &e);
        if (rc && rc != CDP_ETIMEOUT)
            return snap_fail(r, SNAP_EBROWSER, "the browser is gone: %s", e.msg);
    }
    if (a->dl_expect_tab == tab)
        a->dl_expect_tab = 0;
    snap_settled st;
    memset(&st, 0, sizeof st);
    snap_dl_settled(a, tab, since_ms, &st);
    base_buf b = {0};
    if (st.ndls)
        snap_dl_describe(a, &st, &b, 0);
    else
        base_buf_puts(&b, "the browser reported no download");
    int rc = b.oom ? snap_fail(r, SNAP_ENOMEM, "out of memory")
                   : snap_fail(r, SNAP_ENAVIGATE, "%s is a download, not a page (no page was "
                               "opened): %s", url, b.s ? b.s : "");
    base_buf_free(&b);
    return rc;
}

void snap_dl_json(snap_agent *a, const snap_settled *st, json_w *w)
{
    if (!st->ndls)
        return;
    static const char *const STATE[] = {"in_progress", "saved", "blocked", "failed"};
    json_w_key(w, "downloads");
    json_w_arr_begin(w);
    for (int i = 0; i < st->ndls && i < 4; i++) {
        const snap_download *d = &st->dls[i];
        json_w_obj_begin(w);
        json_w_key(w, "name");
        json_w_str(w, d->name);
        json_w_key(w, "state");
        json_w_str(w, STATE[d->state]);
        json_w_key(w, "bytes");
        json_w_int(w, d->received);
        if (d->mime[0]) {
            json_w_key(w, "type");
            json_w_str(w, d->mime);
        }
        if (d->state == SNAP_DL_SAVED && a->dl_dir) {
            char path[PATH_MAX + SNAP_ID_MAX + 2];
            snprintf(path, sizeof path, "%s/%s", a->dl_dir, d->file);
            json_w_key(w, "path");
            json_w_str(w, path);
        }
        json_w_obj_end(w);
    }
    json_w_arr_end(w);
}
