/*
 * scan.c — one accessibility scan of the agent's current tab: axe run
 * through snapshot/ (snap_axe_run), its results scrubbed, each violation's
 * element given a snapshot ref, screenshot crops taken through the
 * screenshot path (its secret-field rules: a refused crop is noted, never
 * taken another way), the files written and the model's summary made.
 * Every string of the results and of the not-evaluated list goes through
 * snap_text_shown first (the session values out: a11y.h), so neither the
 * files nor the copies kept for the evidence hold one. An element whose
 * selector held a session value is then not found again (no ref, no
 * crop): its selector as written names "[session-value]".
 */
#include "a11y/a11y.h"

#include "base/base.h"
#include "json/json.h"
#include "url/url.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REFS_MAX 200                /* violation elements given a ref */
#define REFS_SHOWN 8                /* refs per rule in the summary */
#define CROP_BYTES 150000           /* one crop, at most */

/* r says why (msg is ours, never page text); code back. */
static int fail(snap_result *r, int code, const char *msg)
{
    free(r->text);
    r->text = base_strdup(msg);
    r->code = code;
    return code;
}

static const char *const IMPACTS[] = {"critical", "serious", "moderate", "minor"};

static int impact_rank(const char *imp)
{
    for (int i = 0; i < 4; i++)
        if (imp && strcmp(imp, IMPACTS[i]) == 0)
            return 4 - i;
    return 0;
}

typedef struct {
    snap_agent *a;
    snap_axe_scan *scan;
    const a11y_opts *o;
    json_doc *d;                    /* the scrubbed results */
    const json_val *viol;
    size_t nrules;
    size_t *off;                    /* off[i]: rule i's first element's flat index */
    size_t total;                   /* elements in all violations */
    char (*refs)[16];               /* refs[flat]: "" none (REFS_MAX at most) */
    size_t nrefs;
    a11y_crop *crops;               /* crops[flat] (o->crops at most) */
    uint8_t **imgs;
    size_t ncrops;
    char *skipped;                  /* snap_axe_skipped, scrubbed (new) */
    char json_path[600], html_path[600];
} run;

/* {"include":[...],"exclude":[...]} as @axe-core/playwright builds it. */
static char *context_json(const a11y_opts *o)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "exclude");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < o->nexclude && i < A11Y_SELECTORS_MAX; i++)
        json_w_str(&w, o->exclude[i]);
    json_w_arr_end(&w);
    json_w_key(&w, "include");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < o->ninclude && i < A11Y_SELECTORS_MAX; i++)
        json_w_str(&w, o->include[i]);
    json_w_arr_end(&w);
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

/* The flat index table and a ref for each of the first REFS_MAX elements. */
static int map_refs(run *R)
{
    R->nrules = json_len(R->viol);
    R->off = calloc(R->nrules + 1, sizeof *R->off);
    if (!R->off)
        return -1;
    size_t i = 0;
    for (const json_val *r = json_first(R->viol); r; r = json_next(r), i++) {
        R->off[i] = R->total;
        R->total += json_len(json_get(r, "nodes"));
    }
    R->off[R->nrules] = R->total;
    R->nrefs = R->total < REFS_MAX ? R->total : REFS_MAX;
    R->refs = calloc(R->nrefs + 1, sizeof *R->refs);
    if (!R->refs)
        return -1;
    size_t flat = 0;
    for (const json_val *r = json_first(R->viol); r && flat < R->nrefs; r = json_next(r))
        for (const json_val *n = json_first(json_get(r, "nodes")); n && flat < R->nrefs;
             n = json_next(n), flat++) {
            char *t = json_write(json_get(n, "target"), NULL);
            if (t && snap_axe_ref(R->a, R->scan, t, R->refs[flat]) != 0)
                R->refs[flat][0] = 0;
            free(t);
        }
    return 0;
}

/* A crop of each of the first o->crops elements that have a ref, all
 * under one secret-field search (snap_screenshot_refs). */
static void take_crops(run *R)
{
    size_t want = R->o->crops ? R->o->crops : 40;
    R->ncrops = R->nrefs;
    R->crops = calloc(R->ncrops + 1, sizeof *R->crops);
    R->imgs = calloc(R->ncrops + 1, sizeof *R->imgs);
    const char **refs = calloc(want + 1, sizeof *refs);
    size_t *at = calloc(want + 1, sizeof *at);
    snap_shot_crop *got = calloc(want + 1, sizeof *got);
    if (!R->crops || !R->imgs || !refs || !at || !got) {
        free(refs);
        free(at);
        free(got);
        return;
    }
    size_t n = 0;
    for (size_t f = 0; f < R->ncrops; f++) {
        if (!R->refs[f][0])
            R->crops[f].note = "the element has no ref (not found again, or past the first "
                               "200 elements)";
        else if (n == want)
            R->crops[f].note = "past the crops limit";
        else
            refs[n] = R->refs[f], at[n++] = f;
    }
    snap_result r;
    memset(&r, 0, sizeof r);
    int rc = n ? snap_screenshot_refs(R->a, refs, n, CROP_BYTES, got, &r) : 0;
    for (size_t k = 0; k < n; k++) {
        a11y_crop *c = &R->crops[at[k]];
        int code = rc ? rc : got[k].code;
        if (!code && got[k].img) {
            R->imgs[at[k]] = got[k].img;
            c->png = got[k].img;
            c->len = got[k].len;
            c->cut = got[k].cut;
        } else {
            c->note = code == SNAP_EDENIED ? "refused by the gate or the secret-field rules"
                                           : snap_strerror(code ? code : SNAP_EBROWSER);
        }
    }
    snap_result_free(&r);
    free(refs);
    free(at);
    free(got);
}

static const a11y_crop *crop_of(void *ud, size_t rule, size_t node)
{
    run *R = ud;
    if (!R->crops || rule >= R->nrules)
        return NULL;
    size_t f = R->off[rule] + node;
    return f < R->ncrops ? &R->crops[f] : NULL;
}

/* Write name's data (the directory must exist). */
static int put_file(const char *path, const char *data, size_t len, char *why, size_t cap)
{
    int step = 0;
    if (base_file_put(AT_FDCWD, path, data, len, BASE_PUT_REPLACE, &step) == 0)
        return 0;
    snprintf(why, cap, "cannot write %s", path);
    return -1;
}

/* The report files' contents into out (json, html), written to o->dir
 * when there is one. */
static int make_files(run *R, const char *scrubbed, a11y_report *out, char *why, size_t cap)
{
    /* axe's object, plus what was not evaluated. */
    base_buf b = {0};
    size_t n = strlen(scrubbed);
    base_buf_put(&b, scrubbed, n ? n - 1 : 0);
    base_buf_printf(&b, ",\"notEvaluated\":%s}\n", R->skipped);
    out->json = base_buf_take(&b, &out->json_len);
    out->html = a11y_html_report(scrubbed, R->skipped, crop_of, R);
    out->html_len = out->html ? strlen(out->html) : 0;
    if (!out->json || !out->html) {
        snprintf(why, cap, "a11y scan: out of memory");
        return -1;
    }
    if (!R->o->dir)
        return 0;
    const char *stem = R->o->stem && *R->o->stem ? R->o->stem : "a11y";
    snprintf(R->json_path, sizeof R->json_path, "%s/%s.json", R->o->dir, stem);
    snprintf(R->html_path, sizeof R->html_path, "%s/%s.html", R->o->dir, stem);
    if (put_file(R->json_path, out->json, out->json_len, why, cap))
        return -1;
    return put_file(R->html_path, out->html, out->html_len, why, cap);
}

/* The distinct rule ids of the skipped list, as a JSON array (new). */
static size_t skipped_rules(const char *skipped, json_w *w)
{
    json_doc *d = json_parse(skipped, strlen(skipped), NULL, NULL);
    const char *seen[256];
    size_t n = 0;
    json_w_arr_begin(w);
    for (const json_val *s = json_first(json_doc_root(d)); s; s = json_next(s))
        for (const json_val *r = json_first(json_get(s, "rules")); r; r = json_next(r)) {
            const char *id = json_str(r, NULL);
            bool have = false;
            for (size_t i = 0; i < n && !have; i++)
                have = strcmp(seen[i], id) == 0;
            if (!have && id && n < 256) {
                seen[n++] = id;
                json_w_str(w, id);
            }
        }
    json_w_arr_end(w);
    json_doc_free(d);
    return n;
}

/* Rules in the order the summary lists them: impact, then elements. */
static void top_order(const run *R, size_t *ord)
{
    const json_val *v[4096];
    size_t n = R->nrules < 4096 ? R->nrules : 4096;
    size_t i = 0;
    for (const json_val *r = json_first(R->viol); r && i < n; r = json_next(r))
        v[i] = r, ord[i] = i, i++;
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0; b--) {
            const json_val *x = v[ord[b - 1]], *y = v[ord[b]];
            int rx = impact_rank(json_get_str(x, "impact")),
                ry = impact_rank(json_get_str(y, "impact"));
            size_t nx = json_len(json_get(x, "nodes")), ny = json_len(json_get(y, "nodes"));
            if (rx > ry || (rx == ry && nx >= ny))
                break;
            size_t t = ord[b - 1];
            ord[b - 1] = ord[b];
            ord[b] = t;
        }
}

static void top_put(const run *R, base_buf *b, json_w *w, size_t top)
{
    size_t n = R->nrules < 4096 ? R->nrules : 4096;
    size_t *ord = calloc(n + 1, sizeof *ord);
    if (!ord)
        return;
    top_order(R, ord);
    json_w_key(w, "top");
    json_w_arr_begin(w);
    for (size_t j = 0; j < n && j < top; j++) {
        const json_val *r = json_at(R->viol, ord[j]);
        const char *id = json_get_str(r, "id"), *imp = json_get_str(r, "impact");
        size_t nodes = json_len(json_get(r, "nodes"));
        json_w_obj_begin(w);
        json_w_key(w, "rule");
        json_w_str(w, id);
        json_w_key(w, "impact");
        json_w_str(w, imp);
        base_buf_printf(b, "- %s [%s]", id ? id : "?", imp ? imp : "no impact");
        json_w_key(w, "wcag");
        json_w_arr_begin(w);
        for (const json_val *t = json_first(json_get(r, "tags")); t; t = json_next(t)) {
            char sc[16];
            if (a11y_wcag_sc(json_str(t, NULL), sc, sizeof sc)) {
                json_w_str(w, sc);
                base_buf_printf(b, " WCAG %s", sc);
            }
        }
        json_w_arr_end(w);
        json_w_key(w, "elements");
        json_w_uint(w, nodes);
        base_buf_printf(b, ": %zu element%s", nodes, nodes == 1 ? "" : "s");
        json_w_key(w, "refs");
        json_w_arr_begin(w);
        size_t shown = 0, noref = 0;
        for (size_t k = 0; k < nodes; k++) {
            size_t f = R->off[ord[j]] + k;
            if (f < R->nrefs && R->refs[f][0] && shown < REFS_SHOWN) {
                json_w_str(w, R->refs[f]);
                base_buf_printf(b, "%s%s", shown ? " " : " (", R->refs[f]);
                shown++;
            } else if (f >= R->nrefs || !R->refs[f][0]) {
                noref++;
            }
        }
        json_w_arr_end(w);
        if (shown)
            base_buf_puts(b, nodes > shown + noref ? " ...)" : ")");
        if (noref)
            base_buf_printf(b, "; %zu without a ref", noref);
        base_buf_puts(b, "\n");
        json_w_obj_end(w);
    }
    json_w_arr_end(w);
    free(ord);
}

static size_t nodes_of(const json_val *list)
{
    size_t n = 0;
    for (const json_val *r = json_first(list); r; r = json_next(r))
        n += json_len(json_get(r, "nodes"));
    return n;
}

/* The counts by impact into b and w. */
static void counts_put(const run *R, base_buf *b, json_w *w, a11y_report *out)
{
    const json_val *root = json_doc_root(R->d);
    out->violations = R->nrules;
    out->elements = R->total;
    base_buf_printf(b, "Violations: %zu rule%s, %zu element%s (", R->nrules,
                    R->nrules == 1 ? "" : "s", R->total, R->total == 1 ? "" : "s");
    json_w_key(w, "violations");
    json_w_obj_begin(w);
    json_w_key(w, "rules");
    json_w_uint(w, R->nrules);
    json_w_key(w, "elements");
    json_w_uint(w, R->total);
    for (int i = 0; i < 4; i++) {
        size_t rules = 0, nodes = 0;
        for (const json_val *r = json_first(R->viol); r; r = json_next(r))
            if (impact_rank(json_get_str(r, "impact")) == 4 - i) {
                rules++;
                nodes += json_len(json_get(r, "nodes"));
            }
        json_w_key(w, IMPACTS[i]);
        json_w_obj_begin(w);
        json_w_key(w, "rules");
        json_w_uint(w, rules);
        json_w_key(w, "elements");
        json_w_uint(w, nodes);
        json_w_obj_end(w);
        base_buf_printf(b, "%s%s %zu", i ? ", " : "", IMPACTS[i], nodes);
    }
    json_w_obj_end(w);
    const json_val *inc = json_get(root, "incomplete");
    out->review = json_len(inc);
    base_buf_printf(b, " elements).\nNeeds review (not violations; a person checks them): "
                    "%zu rule%s, %zu element%s.\n", json_len(inc),
                    json_len(inc) == 1 ? "" : "s", nodes_of(inc), nodes_of(inc) == 1 ? "" : "s");
    json_w_key(w, "needs_review");
    json_w_obj_begin(w);
    json_w_key(w, "rules");
    json_w_uint(w, json_len(inc));
    json_w_key(w, "elements");
    json_w_uint(w, nodes_of(inc));
    json_w_obj_end(w);
}

/* Which file axe-core came from, as results (a JSON object's text: new)
 * end with: "axeFile" {"sha256","release" ("" none),"from"} added (R6-7:
 * the reports say what ran). results back when there is no o->axe. */
static char *axe_file_put(const a11y_opts *o, char *results)
{
    size_t n = results ? strlen(results) : 0;
    if (!o->axe || n < 2 || results[n - 1] != '}')
        return results;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "sha256");
    json_w_str(&w, o->axe->sha256);
    json_w_key(&w, "release");
    json_w_str(&w, o->axe->release);
    json_w_key(&w, "from");
    json_w_str(&w, o->axe->from ? o->axe->from : "");
    json_w_obj_end(&w);
    char *f = json_w_take(&w, NULL);
    base_buf b = {0};
    base_buf_put(&b, results, n - 1);
    base_buf_printf(&b, "%s\"axeFile\":%s}", n > 2 ? "," : "", f ? f : "{}");
    free(f);
    free(results);
    return base_buf_take(&b, NULL);
}

/* The file axe-core came from, in the summary (no path: the model needs
 * none). */
static void axe_file_say(const a11y_opts *o, base_buf *b, json_w *w)
{
    if (!o->axe)
        return;
    if (o->axe->release[0])
        base_buf_printf(b, "axe-core file: the published release %s (SHA-256 %s).\n",
                        o->axe->release, o->axe->sha256);
    else
        base_buf_printf(b, "axe-core file: not a published release: the host's own file, "
                        "named by %s (SHA-256 %s).\n", o->axe->from ? o->axe->from : "--axe",
                        o->axe->sha256);
    json_w_key(w, "axe_file");
    json_w_obj_begin(w);
    json_w_key(w, "sha256");
    json_w_str(w, o->axe->sha256);
    json_w_key(w, "release");
    json_w_str(w, o->axe->release);
    json_w_key(w, "from");
    json_w_str(w, o->axe->from ? o->axe->from : "");
    json_w_obj_end(w);
}

static int summarize(run *R, const char *tags, a11y_report *out)
{
    base_buf b = {0};
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    size_t found = 0, scanned = snap_axe_frames(R->scan, &found);
    base_buf_printf(&b, "Accessibility scan with axe-core %s (tags %s): %zu of %zu frame%s "
                    "scanned.\n", snap_axe_version(R->scan), tags, scanned, found,
                    found == 1 ? "" : "s");
    json_w_key(&w, "axe");
    json_w_str(&w, snap_axe_version(R->scan));
    axe_file_say(R->o, &b, &w);
    json_w_key(&w, "tags");
    json_w_str(&w, tags);
    json_w_key(&w, "frames");
    json_w_obj_begin(&w);
    json_w_key(&w, "scanned");
    json_w_uint(&w, scanned);
    json_w_key(&w, "found");
    json_w_uint(&w, found);
    json_w_obj_end(&w);
    counts_put(R, &b, &w, out);
    json_w_key(&w, "not_evaluated");
    json_w ne;
    json_w_init(&ne);
    out->not_evaluated = skipped_rules(R->skipped, &ne);
    char *nes = json_w_take(&ne, NULL);
    json_w_raw(&w, nes ? nes : "[]", nes ? strlen(nes) : 2, false);
    base_buf_printf(&b, "Not evaluated (a timeout or a frame not scanned; neither passed nor "
                    "failed): %s\n", out->not_evaluated ? nes : "none");
    free(nes);
    if (R->nrules)
        base_buf_puts(&b, "Top rules (elements as refs: look with browser_snapshot "
                      "from=REF, act on them as usual):\n");
    top_put(R, &b, &w, R->o->top ? R->o->top : 10);
    if (R->o->dir) {
        /* By name only when asked (browser_a11y_scan: the model gets no
         * host path). */
        const char *j = R->json_path, *h = R->html_path;
        if (R->o->files_by_name) {
            j += strlen(R->o->dir) + 1;
            h += strlen(R->o->dir) + 1;
        }
        base_buf_printf(&b, "Full report: %s and %s%s\n", j, h,
                        R->o->files_by_name ? " (in the host's report directory)" : "");
        json_w_key(&w, "files");
        json_w_obj_begin(&w);
        json_w_key(&w, "json");
        json_w_str(&w, j);
        json_w_key(&w, "html");
        json_w_str(&w, h);
        json_w_obj_end(&w);
    }
    json_w_obj_end(&w);
    out->text = base_buf_take(&b, NULL);
    out->structured = json_w_take(&w, NULL);
    return out->text && out->structured ? 0 : -1;
}

static void run_free(run *R)
{
    for (size_t f = 0; R->imgs && f < R->ncrops; f++)
        free(R->imgs[f]);
    free(R->imgs);
    free(R->crops);
    free(R->refs);
    free(R->off);
    free(R->skipped);
    json_doc_free(R->d);
    snap_axe_free(R->scan);
}

/* A string of the results as it may be written: a whole http(s) URL (the
 * page's "url", a frame's) by the report's URL rule, the one the
 * snippets' URL attributes get (scrub.c url_words: url_redact with the
 * bearer rule) and then as every output of the agent shows it
 * (snap_url_shown: secret-named query and fragment values "[redacted]",
 * session values out; red team s16, R6-2), any other text with the
 * session values out. */
static char *text_shown(void *ud, const char *s)
{
    bool url = (strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0) &&
               !strpbrk(s, " \t\n\r");
    if (!url)
        return snap_text_shown(ud, s);
    char *red = url_redact(s, URL_REDACT_TOKENS, NULL);
    char *out = red ? snap_url_shown(ud, red) : NULL;
    free(red);
    return out;
}

/* After the scan: scrub, refs, crops, files, summary. */
static int report(run *R, const char *tags, a11y_report *out, snap_result *r)
{
    int64_t t0 = base_now_ns();
    const char *res = snap_axe_results(R->scan), *sk = snap_axe_skipped(R->scan);
    char *scrubbed = axe_file_put(R->o, a11y_results_scrub_with(res, strlen(res), text_shown,
                                                                R->a));
    R->skipped = a11y_json_scrub(sk, strlen(sk), text_shown, R->a);
    json_opts po = {0};
    po.max_size = A11Y_RESULTS_MAX;
    po.max_depth = 256;
    R->d = scrubbed ? json_parse(scrubbed, strlen(scrubbed), &po, NULL) : NULL;
    R->viol = json_get(json_doc_root(R->d), "violations");
    int64_t t1 = base_now_ns();
    if (!R->d || !R->skipped || map_refs(R)) {
        free(scrubbed);
        return fail(r, SNAP_ENOMEM, "a11y scan: axe's results could not be read");
    }
    int64_t t2 = base_now_ns(), t3 = t2;
    char why[700];
    if (R->o->dir || R->o->keep) {
        take_crops(R);
        t3 = base_now_ns();
        if (make_files(R, scrubbed, out, why, sizeof why)) {
            free(scrubbed);
            return fail(r, SNAP_EINVAL, why);
        }
    }
    free(scrubbed);
    out->refs_ms = (double)(t2 - t1) / 1e6;
    out->crops_ms = (double)(t3 - t2) / 1e6;
    out->files_ms = (double)(t1 - t0 + base_now_ns() - t3) / 1e6;
    const char *url = json_get_str(json_doc_root(R->d), "url");
    out->url = url ? base_strdup(url) : NULL;
    if (summarize(R, tags, out))
        return fail(r, SNAP_ENOMEM, "a11y scan: out of memory");
    if (!R->o->keep) {
        free(out->json);
        free(out->html);
        out->json = out->html = NULL;
        out->json_len = out->html_len = 0;
    }
    return 0;
}

int a11y_scan(snap_agent *a, const char *src, size_t len, const a11y_opts *o,
              a11y_report *out, snap_result *r)
{
    memset(out, 0, sizeof *out);
    memset(r, 0, sizeof *r);
    char why[300];
    char *tags = NULL, *ctx = context_json(o);
    if (a11y_tags_json(o->tags, &tags, why, sizeof why) || !ctx) {
        free(ctx);
        free(tags);
        return fail(r, SNAP_EINVAL, ctx ? why : "out of memory");
    }
    snap_axe_opts ao = {src, len, tags, ctx, o->frame_ms, o->cap_ms};
    run R;
    memset(&R, 0, sizeof R);
    R.a = a;
    R.o = o;
    R.viol = NULL;
    int64_t t0 = base_now_ns();
    int rc = snap_axe_run(a, &ao, &R.scan, r);
    double axe_ms = (double)(base_now_ns() - t0) / 1e6;
    free(ctx);
    free(tags);
    if (rc == 0) {
        snap_result_free(r);
        memset(r, 0, sizeof *r);
        rc = report(&R, o->tags && *o->tags ? o->tags : A11Y_TAGS_DEFAULT, out, r);
        out->axe_ms = axe_ms;
        if (rc)
            a11y_report_free(out);
    }
    run_free(&R);
    return rc;
}

void a11y_report_free(a11y_report *rep)
{
    free(rep->text);
    free(rep->structured);
    free(rep->json);
    free(rep->html);
    free(rep->url);
    memset(rep, 0, sizeof *rep);
}
