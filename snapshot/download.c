/*
 * download.c — downloads as gate decisions (issue 13, point 6d; round 2:
 * red-team findings R1-R4, R6, R8).
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
 *  - A download is the agent's only when it begins while an action the
 *    gate allowed runs on its tab (or a popup of that tab), up to the end
 *    of the action's settle (snap_dl_act .. snap_dl_act_end), AND its URL
 *    is one the action's target implies (snap_dl_want: its link's href,
 *    its form's action, the URL opened, or where one of them redirected).
 *    One that begins then from another URL (the page's click listener, a
 *    timer) is the page's: kept apart (page), asked of the gate as a page
 *    download, which the hook confirms every time (red team s11, S10).
 *    Every other one is queued by the listener and canceled by
 *    snap_dl_sync (Browser.cancelDownload), its guid file removed,
 *    audited, and told in the next result (snap_dl_tell).
 *  - The agent's download is a gate decision (tool "download", egress
 *    file_transfer, the file it would be; authenticated when its context
 *    holds a session, so the hook confirms it), made in snap_dl_sync,
 *    never in the listener. Refused: canceled, its bytes removed.
 *  - A file keeps the browser's guid name until it completed and was
 *    allowed; then its sanitized name, with ".download" appended unless
 *    its extension is one only read (name_inert). Count and bytes are
 *    capped per task.
 *  - A name is page text: results show it inside the page-content
 *    markers.
 *  - An undecided or running record is never evicted from the ring.
 *  - The behaviour's refusal is not silent: audited, told once, and each
 *    page session then gets Page.setDownloadBehavior deny.
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
    cdp_err e = {0};
    int rc = params ? snap_cdp_call(a, NULL, "Browser.setDownloadBehavior", params,
                                    a->o.timeout_ms, NULL, &e) : CDP_ENOMEM;
    free(params);
    if (rc == 0 || a->dl_ungoverned)
        return;
    /* Refused (a browser without the method, or it failed): the browser's
     * own default would stay (a headed browser saves into the user's
     * Downloads with no event at all). Fail closed: every page session
     * gets Page.setDownloadBehavior deny from now on (snap_dl_page_deny),
     * said once in the next result and audited. */
    a->dl_ungoverned = true;
    if (a->gate) {
        char why[300];
        snprintf(why, sizeof why, "downloads ungoverned: the browser refused "
                 "Browser.setDownloadBehavior (%.160s); each page is set to deny downloads",
                 e.msg[0] ? e.msg : "no answer");
        gate_note_decided(a->gate, "download", "", GATE_DENY, why);
    }
}

void snap_dl_page_deny(snap_agent *a, const char *session)
{
    if (!a->dl_ungoverned || !session || !*session)
        return;
    snap_cdp_call(a, session, "Page.setDownloadBehavior", "{\"behavior\":\"deny\"}",
                  a->o.timeout_ms, NULL, NULL);
}

void snap_dl_free(snap_agent *a)
{
    if (a->dl_dir)
        rmdir(a->dl_dir);        /* only when nothing was saved in it */
    free(a->dl_dir);
    a->dl_dir = NULL;
    snap_dl_act_end(a);
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

static bool dl_active(const snap_download *d)
{
    return d->state == SNAP_DL_PENDING || d->state == SNAP_DL_RUNNING;
}

/* A slot for a new record: a free one, else the oldest one no longer
 * undecided or running (the agent's own download is never evicted);
 * NULL when every one is. */
static snap_download *dl_slot(snap_agent *a)
{
    if (a->ndls < SNAP_DL_MAX)
        return &a->dls[a->ndls++];
    snap_download *old = NULL;
    for (size_t i = 0; i < SNAP_DL_MAX; i++)
        if (!dl_active(&a->dls[i]) && (!old || a->dls[i].start_ms < old->start_ms))
            old = &a->dls[i];
    if (old)
        a->ndls++;
    return old;
}

static snap_tab *tab_of_frame(snap_agent *a, const char *frame)
{
    for (size_t i = 0; frame && i < a->ntabs; i++)
        if (!a->tabs[i].closed && snap_frame_find(&a->tabs[i], frame))
            return &a->tabs[i];
    return NULL;
}

/* The browser context of a popup not adopted yet whose main frame is
 * frame (its target id): its opener's, when the opener is one of the
 * agent's tabs. NULL: not the agent's. */
static const char *popup_ctx(snap_agent *a, const char *frame)
{
    for (size_t i = 0; frame && i < a->nwork; i++) {
        if (a->work[i].kind != 1 || strcmp(a->work[i].target, frame) != 0)
            continue;
        for (size_t k = 0; k < a->ntabs; k++)
            if (!a->tabs[k].closed && strcmp(a->tabs[k].target, a->work[i].opener) == 0)
                return a->ctxs[a->tabs[k].ctx].id;
    }
    return NULL;
}

/* The tab runs the action the gate allowed, or is a popup that tab
 * opened. */
static bool dl_own(const snap_agent *a, const snap_tab *t)
{
    return a->dl_act_tab && t && (t->id == a->dl_act_tab || t->opener == a->dl_act_tab);
}

/* url's length without its fragment (form: without its query either). */
static size_t want_len(const char *url, bool form)
{
    return strcspn(url, form ? "?#" : "#");
}

void snap_dl_want(snap_agent *a, const char *url, bool form)
{
    if (!url || !*url || a->ndl_want >= SNAP_DL_WANT_MAX)
        return;
    size_t n = want_len(url, form);
    char *c = malloc(n + 1);
    if (!c)
        return;                  /* fail closed: the download is the page's */
    memcpy(c, url, n);
    c[n] = 0;
    a->dl_want[a->ndl_want].url = c;
    a->dl_want[a->ndl_want++].form = form;
}

/* Is url one the allowed action's target implies? */
static bool dl_implied(const snap_agent *a, const char *url)
{
    for (size_t i = 0; url && i < a->ndl_want; i++) {
        size_t n = want_len(url, a->dl_want[i].form);
        if (strlen(a->dl_want[i].url) == n && strncmp(a->dl_want[i].url, url, n) == 0)
            return true;
    }
    return false;
}

void snap_dl_redirect(snap_agent *a, int tab, const char *from, const char *to)
{
    if (dl_own(a, snap_tab_by_id(a, tab)) && dl_implied(a, from) && !dl_implied(a, to))
        snap_dl_want(a, to, false);
}

/* An extension a file of that name is only read, never run or rendered
 * with scripts, by the tools a developer or a desktop opens it with
 * (pytest collects test_*.py and conftest.py, make reads Makefile, npm
 * package.json, Maven pom.xml; an svg or html runs its scripts when
 * opened, an archive is unpacked, an office file, an ebook, a mail or a
 * calendar entry is rendered or imported). Data only: every other name
 * gets ".download" (red team s11, S10). */
static bool name_inert(const char *name)
{
    static const char *const EXT[] = {
        "pdf", "csv", "tsv", "txt", "log", "png", "jpg", "jpeg", "gif", "webp",
        "mp3", "mp4", "wav", "webm", "ogg",
    };
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name)
        return false;
    for (size_t i = 0; i < sizeof EXT / sizeof EXT[0]; i++)
        if (strcasecmp(dot + 1, EXT[i]) == 0)
            return true;
    return false;
}

static void dl_unlink(snap_agent *a, const char *guid)
{
    char path[PATH_MAX];
    int n = a->dl_dir ? snprintf(path, sizeof path, "%s/%s", a->dl_dir, guid) : -1;
    if (n > 0 && (size_t)n < sizeof path && guid_ok(guid))
        unlink(path);
}

/* The browser wrote <dir>/<guid> and the gate allowed it: give it its
 * name (with ".download" after a name tooling may run), never replacing a
 * file; within the task's caps, else it is removed. */
static void dl_save(snap_agent *a, snap_download *d)
{
    char from[PATH_MAX], to[PATH_MAX], name[SNAP_DL_NAME_MAX + 10];
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
    if (a->dl_bytes + d->received > SNAP_DL_TASK_BYTES) {
        unlink(from);
        d->state = SNAP_DL_DENIED;
        snprintf(d->why, sizeof d->why, "the task's cap of %lld bytes of downloads was reached",
                 (long long)SNAP_DL_TASK_BYTES);
        return;
    }
    a->dl_files++;
    a->dl_bytes += d->received;
    d->state = SNAP_DL_SAVED;
    snprintf(d->file, sizeof d->file, "%s", d->guid);  /* kept there if no name is free */
    snprintf(name, sizeof name, "%s%s", d->name, name_inert(d->name) ? "" : ".download");
    const char *dot = strrchr(name, '.');
    size_t stem = dot && dot != name ? (size_t)(dot - name) : strlen(name);
    for (int k = 1; k < 100; k++) {
        if (k == 1)
            n = snprintf(to, sizeof to, "%s/%s", a->dl_dir, name);
        else
            n = snprintf(to, sizeof to, "%s/%.*s-%d%s", a->dl_dir, (int)stem, name, k,
                         name + stem);
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

/* The URL as shown and audited: redacted, session values scrubbed, cut on
 * a character boundary. */
static void dl_url(snap_agent *a, const char *url, char *out, size_t cap)
{
    char *shown = snap_url_redact_act(a, url ? url : "");
    char *sc = shown ? snap_scrub_url(a, shown) : NULL;
    size_t n = sc ? strlen(sc) : 0;
    if (n >= cap) {
        n = cap - 1;
        while (n && ((unsigned char)sc[n] & 0xc0) == 0x80)
            n--;
    }
    snprintf(out, cap, "%.*s", (int)n, sc ? sc : "");
    free(sc);
    free(shown);
}

/* Queue a download the page started outside an allowed action. */
static void dl_page(snap_agent *a, const char *guid, const char *ctx, const char *name,
                    const char *url)
{
    for (size_t i = 0; i < a->ndl_cancel; i++)
        if (strcmp(a->dl_cancel[i].guid, guid) == 0)
            return;
    if (a->ndl_cancel >= SNAP_DL_CANCEL_MAX) {
        a->dl_cancel_lost++;
        return;
    }
    snap_dl_page *pg = &a->dl_cancel[a->ndl_cancel++];
    snprintf(pg->guid, sizeof pg->guid, "%s", guid);
    snprintf(pg->ctx, sizeof pg->ctx, "%s", ctx ? ctx : "");
    snprintf(pg->name, sizeof pg->name, "%s", name);
    dl_url(a, url, pg->url, sizeof pg->url);
}

static void dl_begin(snap_agent *a, const json_val *p)
{
    const char *guid = json_get_str(p, "guid");
    const char *frame = json_get_str(p, "frameId");
    const char *url = json_get_str(p, "url");
    /* A frame of none of this agent's tabs (nor of a popup of one): another
     * agent's download (the browser session's events reach every agent on
     * the browser). */
    snap_tab *t = tab_of_frame(a, frame);
    const char *ctx = t ? a->ctxs[t->ctx].id : popup_ctx(a, frame);
    if (!ctx || !guid_ok(guid) || dl_find(a, guid))
        return;
    char name[SNAP_DL_NAME_MAX];
    snap_dl_name_clean(json_get_str(p, "suggestedFilename"), name);
    /* Begun during an allowed action on its tab: the action's when its
     * target implies it, else the page's own (S10): both decided by the
     * gate; outside an action: canceled. */
    snap_download *d = dl_own(a, t) ? dl_slot(a) : NULL;
    if (!d) {
        dl_page(a, guid, ctx, name, url);
        return;
    }
    memset(d, 0, sizeof *d);
    snprintf(d->guid, sizeof d->guid, "%s", guid);
    snprintf(d->ctx, sizeof d->ctx, "%s", ctx);
    snprintf(d->name, sizeof d->name, "%s", name);
    dl_url(a, url, d->url, sizeof d->url);
    d->start_ms = base_now_ms();
    d->state = a->dl_dir ? SNAP_DL_PENDING : SNAP_DL_BLOCKED;
    d->tab = t->id;
    d->page = !dl_implied(a, url);
    t->settle_evt++;
    size_t cut = sizeof a->dl_expect_url - 1;
    if (a->dl_expect_url[0] && url && strncmp(url, a->dl_expect_url, cut) == 0 &&
        (strlen(a->dl_expect_url) < cut || strlen(url) >= cut))
        snprintf(d->mime, sizeof d->mime, "%s", a->dl_expect_mime);
    if (a->dl_expect_tab == t->id && !d->page)
        a->dl_expect_tab = 0;
    if (a->gate && d->state == SNAP_DL_BLOCKED) {
        char why[SNAP_DL_NAME_MAX + 200];
        snprintf(why, sizeof why, "download of \"%s\" blocked: the grant allows no downloads "
                 "(needs egress file_transfer and a file scope)", d->name);
        gate_note_decided(a->gate, "download", d->url, GATE_DENY, why);
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
    if (!state || !guid)
        return;
    if (!d) {
        /* A page's download (queued to be canceled, or past the queue):
         * whatever the browser wrote under its guid in the agent's
         * directory is removed. */
        if (strcmp(state, "completed") == 0)
            dl_unlink(a, guid);
        return;
    }
    d->total = json_get_int(p, "totalBytes", d->total);
    d->received = json_get_int(p, "receivedBytes", d->received);
    if (a->dl_bytes + d->received > SNAP_DL_TASK_BYTES && dl_active(d))
        d->over = true;              /* snap_dl_sync cancels it */
    bool done = strcmp(state, "completed") == 0;
    if (strcmp(state, "inProgress") == 0 || !dl_active(d)) {
        if (done && d->state != SNAP_DL_SAVED)
            dl_unlink(a, d->guid);   /* refused meanwhile: never kept */
        return;
    }
    if (d->state == SNAP_DL_PENDING && done) {
        d->done = true;              /* named once the gate allows it */
    } else if (done && a->dl_dir && !d->over) {
        dl_save(a, d);
    } else {
        if (done)
            dl_unlink(a, d->guid);   /* past the byte cap: never kept */
        d->state = d->over ? SNAP_DL_DENIED : SNAP_DL_FAILED;
        if (d->over)
            snprintf(d->why, sizeof d->why, "the task's cap of %lld bytes of downloads was "
                     "reached", (long long)SNAP_DL_TASK_BYTES);
    }
    snap_tab *t = snap_tab_by_id(a, d->tab);
    if (t)
        t->settle_evt++;
}

/* ---- decisions (snap_sync) ---- */

void snap_dl_act(snap_agent *a, int tab)
{
    a->dl_act_tab = tab;
    a->dl_act_since = base_now_ms();
}

void snap_dl_act_end(snap_agent *a)
{
    a->dl_act_tab = 0;
    a->dl_expect_tab = 0;
    for (size_t i = 0; i < a->ndl_want; i++)
        free(a->dl_want[i].url);
    a->ndl_want = 0;
}

static void dl_cancel(snap_agent *a, const char *guid, const char *ctx)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "guid");
    json_w_str(&w, guid);
    if (ctx && *ctx) {
        json_w_key(&w, "browserContextId");
        json_w_str(&w, ctx);
    }
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    /* Refused: it had already ended; its file goes below either way. */
    if (params)
        snap_cdp_call(a, NULL, "Browser.cancelDownload", params, a->o.timeout_ms, NULL, NULL);
    free(params);
    dl_unlink(a, guid);
}

static void dl_refuse(snap_agent *a, snap_download *d, const char *why)
{
    d->state = SNAP_DL_DENIED;
    snprintf(d->why, sizeof d->why, "%s", why);
    dl_cancel(a, d->guid, d->ctx);
    snap_tab *t = snap_tab_by_id(a, d->tab);
    if (t)
        t->settle_evt++;
}

/* The gate's decision on a download of an allowed action: tool
 * "download", the page's origin (the URL's when the tab has none yet: an
 * open answered as an attachment), the file it would be, egress
 * file_transfer; authenticated when its context holds a session (the hook
 * confirms it then). */
static void dl_decide(snap_agent *a, snap_download *d)
{
    snap_tab *t = snap_tab_by_id(a, d->tab);
    char origin[256] = "", file[PATH_MAX + SNAP_DL_NAME_MAX + 2], why[200];
    if (!t || !t->nframes || !t->frames[0].url ||
        snap_url_origin(t->frames[0].url, origin, sizeof origin) != 0)
        if (snap_url_origin(d->url, origin, sizeof origin) != 0)
            origin[0] = 0;
    if (a->dl_files >= SNAP_DL_TASK_FILES || a->dl_bytes >= SNAP_DL_TASK_BYTES) {
        snprintf(why, sizeof why, "the task's cap of %d files or %lld bytes of downloads was "
                 "reached", SNAP_DL_TASK_FILES, (long long)SNAP_DL_TASK_BYTES);
        gate_note_decided(a->gate, "download", d->url, GATE_DENY, why);
        dl_refuse(a, d, why);
        return;
    }
    snprintf(file, sizeof file, "%s/%s", a->dl_dir, d->name);
    gate_request q = {0};
    q.tool = "download";
    q.origin = origin;
    q.url = d->url;
    q.state_change = true;
    q.authenticated = t && t->ctx && t->ctx < a->nctxs && a->ctxs[t->ctx].creds;
    q.file = file;
    q.page_download = d->page;
    q.egress = GATE_EGRESS_FILE;
    gate_decision gd;
    int64_t t0 = base_now_ms();
    gate_check(a->gate, &q, &gd);
    a->asked_ms += base_now_ms() - t0;     /* a human's answer is not the settle's */
    if (gd.decision != GATE_ALLOW) {
        dl_refuse(a, d, gd.reason);
        return;
    }
    d->state = SNAP_DL_RUNNING;
    if (d->done && !d->over)
        dl_save(a, d);
    if (t)
        t->settle_evt++;
}

void snap_dl_sync(snap_agent *a)
{
    if (a->dl_syncing)
        return;
    a->dl_syncing = true;
    /* The page's own downloads: canceled, their file removed, audited. */
    while (a->ndl_cancel) {
        snap_dl_page pg = a->dl_cancel[0];
        memmove(&a->dl_cancel[0], &a->dl_cancel[1], --a->ndl_cancel * sizeof pg);
        dl_cancel(a, pg.guid, pg.ctx);
        char why[SNAP_DL_NAME_MAX + 200];
        snprintf(why, sizeof why, "the page started a download of \"%s\" on its own (no "
                 "action of the agent allowed it): canceled", pg.name);
        if (a->gate)
            gate_note_decided(a->gate, "download", pg.url, GATE_DENY, why);
        if (!a->dl_page_told++)
            snprintf(a->dl_page_name, sizeof a->dl_page_name, "%s", pg.name);
    }
    for (size_t i = 0; i < SNAP_DL_MAX && i < a->ndls; i++) {
        snap_download *d = &a->dls[i];
        if (d->state == SNAP_DL_PENDING && a->gate && a->dl_dir)
            dl_decide(a, d);
        if (dl_active(d) && d->over) {
            char why[120];
            snprintf(why, sizeof why, "the task's cap of %lld bytes of downloads was reached",
                     (long long)SNAP_DL_TASK_BYTES);
            if (a->gate)
                gate_note_decided(a->gate, "download", d->url, GATE_DENY, why);
            dl_refuse(a, d, why);
        }
    }
    a->dl_syncing = false;
}

void snap_dl_tell(snap_agent *a, base_buf *b)
{
    if (a->dl_page_told) {
        base_buf_printf(b, "%sthe page started a download of <<<page-content nonce=%s>>>",
                        b->len ? "\n" : "", a->nonce);
        snap_obs_put_page(b, a->dl_page_name, strlen(a->dl_page_name), SNAP_DL_NAME_MAX, 0);
        base_buf_printf(b, "<<<end page-content nonce=%s>>> on its own (no action of the "
                        "agent): canceled", a->nonce);
        if (a->dl_page_told > 1)
            base_buf_printf(b, " (and %zu more it started: canceled)", a->dl_page_told - 1);
        a->dl_page_told = 0;
    }
    if (a->dl_cancel_lost) {
        base_buf_printf(b, "%s%zu more downloads the page started were not canceled in time; "
                        "their files are removed as they complete",
                        b->len ? "\n" : "", a->dl_cancel_lost);
        a->dl_cancel_lost = 0;
    }
    if (!a->dl_cap_told && (a->dl_files >= SNAP_DL_TASK_FILES ||
                            a->dl_bytes >= SNAP_DL_TASK_BYTES)) {
        a->dl_cap_told = true;
        base_buf_printf(b, "%sthe task's cap of %d downloaded files or %lld bytes was reached: "
                        "further downloads are canceled", b->len ? "\n" : "",
                        SNAP_DL_TASK_FILES, (long long)SNAP_DL_TASK_BYTES);
    }
    if (a->dl_ungoverned && !a->dl_ungoverned_told) {
        a->dl_ungoverned_told = true;
        base_buf_printf(b, "%sdownloads ungoverned: the browser refused cdpgate's download "
                        "behaviour for a browser context; each page is set to deny downloads",
                        b->len ? "\n" : "");
    }
}

/* ---- settling and results ---- */

bool snap_dl_busy(snap_agent *a, int tab, int64_t since_ms)
{
    if (a->dl_expect_tab == tab && base_now_ms() < a->dl_expect_until)
        return true;
    for (size_t i = 0; i < SNAP_DL_MAX && i < a->ndls; i++)
        if (a->dls[i].tab == tab && a->dls[i].start_ms >= since_ms && dl_active(&a->dls[i]))
            return true;
    return false;
}

void snap_dl_settled(snap_agent *a, int tab, int64_t since_ms, snap_settled *out)
{
    out->ndls = 0;
    size_t n = a->ndls < SNAP_DL_MAX ? a->ndls : SNAP_DL_MAX;
    int64_t after = since_ms - 1;
    /* Oldest first (a reused slot is anywhere in the ring). */
    for (;;) {
        const snap_download *next = NULL;
        for (size_t k = 0; k < n; k++) {
            const snap_download *d = &a->dls[k];
            if (d->tab == tab && d->start_ms > after && (!next || d->start_ms < next->start_ms))
                next = d;
        }
        if (!next)
            break;
        for (size_t k = 0; k < n; k++) {
            const snap_download *d = &a->dls[k];
            if (d->tab != tab || d->start_ms != next->start_ms)
                continue;
            if (out->ndls < (int)(sizeof out->dls / sizeof out->dls[0]))
                out->dls[out->ndls] = *d;
            out->ndls++;
        }
        after = next->start_ms;
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

/* A name the page chose, as page content (R3). */
static void sb_name(snap_agent *a, base_buf *b, const char *name)
{
    base_buf_printf(b, "<<<page-content nonce=%s>>>", a->nonce);
    snap_obs_put_page(b, name, strlen(name), SNAP_DL_NAME_MAX, 0);
    base_buf_printf(b, "<<<end page-content nonce=%s>>>", a->nonce);
}

void snap_dl_describe(snap_agent *a, const snap_settled *st, base_buf *b, size_t start)
{
    int shown = st->ndls < 4 ? st->ndls : 4;
    for (int i = 0; i < shown; i++) {
        const snap_download *d = &st->dls[i];
        base_buf_printf(b, "%sdownload of ", b->len > start ? "; " : "");
        sb_name(a, b, d->name);
        if (d->state == SNAP_DL_BLOCKED) {
            base_buf_puts(b, " blocked: the grant allows no downloads (needs egress "
                             "file_transfer and a file scope)");
        } else if (d->state == SNAP_DL_DENIED) {
            base_buf_puts(b, " refused and canceled: ");
            snap_obs_put_page(b, d->why, strlen(d->why), sizeof d->why, 0);
        } else if (d->state == SNAP_DL_SAVED) {
            base_buf_printf(b, " (%s%s", d->mime, d->mime[0] ? ", " : "");
            sb_count(b, d->received);
            base_buf_printf(b, " bytes) saved to %s/", a->dl_dir ? a->dl_dir : "");
            sb_name(a, b, d->file);
        } else if (d->state == SNAP_DL_RUNNING || d->state == SNAP_DL_PENDING) {
            base_buf_printf(b, " %s when the wait ended (",
                            d->state == SNAP_DL_RUNNING ? "still in progress"
                                                        : "not decided yet by the gate");
            sb_count(b, d->received);
            if (d->total > 0) {
                base_buf_puts(b, " of ");
                sb_count(b, d->total);
            }
            base_buf_printf(b, " bytes), into %s under its download id until it is allowed "
                            "and complete", a->dl_dir ? a->dl_dir : "");
        } else {
            base_buf_puts(b, " failed (the browser canceled it or the file could not be kept)");
        }
        if (d->page && d->state != SNAP_DL_BLOCKED)
            base_buf_puts(b, " (the page started it during the action: not the file the "
                             "action's target points to)");
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
        int64_t asked0 = a->asked_ms;
        if (snap_sync(a))
            return snap_fail(r, SNAP_EBROWSER, "the browser is gone: %s", cdp_conn_error(a->c));
        deadline_ms += a->asked_ms - asked0;   /* a human's answer is not the wait's */
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
    snap_dl_sync(a);
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
    static const char *const STATE[] = {"in_progress", "saved", "blocked", "failed",
                                        "undecided", "refused"};
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
        if (d->page) {
            json_w_key(w, "started_by_page");
            json_w_bool(w, true);
        }
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
