/*
 * act_form.c — form actions: type, select and upload.
 *
 * Part of snapshot/ (see act_int.h for what the act_* files share).
 */
#define _XOPEN_SOURCE 700     /* realpath (POSIX.1-2008 XSI) */
#include "snapshot/act_int.h"
#include "snapshot/page_js.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ---- upload ---- */

int snap_upload(snap_agent *a, const char *ref, const char *path, const char *obs,
                snap_result *r)
{
    snap_tab *t;
    int rc = snap_act_begin(a, obs, &t, r);
    if (rc)
        return rc;
    if (!path || !*path)
        return snap_act_fail(r, SNAP_EINVAL, "upload needs the path of a file");
    /* The file system is not looked at before the gate judged the path: a
     * missing file is asked about by the path as given (the scope check is
     * then lexical), so "missing" and "outside the scopes" read the same
     * outside the grant's file scopes, and no refusal names a real path. */
    char *real = realpath(path, NULL);
    struct stat st;
    bool regular = real && stat(real, &st) == 0 && S_ISREG(st.st_mode);
    if (!regular) {
        free(real);
        real = strdup(path);
        if (!real)
            return snap_act_fail(r, SNAP_ENOMEM, "out of memory");
    }
    int64_t deadline = base_now_ms() + a->o.timeout_ms;
    target tg;
    if ((rc = snap_act_resolve(a, ref, &tg, r))) {
        free(real);
        return rc;
    }
    session_set ss = {0};
    snap_act_sessions_note(&ss, tg.session);
    snap_gated gg = {0};
    pcall pc;
    rc = snap_act_call(a, tg.session, "Runtime.callFunctionOn",
                       snap_act_fn_params(tg.oid, snap_js_file_input_fn, NULL, true, false), &pc);
    const json_val *v = snap_act_fn_value(&pc);
    if (rc || !v || json_get(v, "gone"))
        rc = snap_act_fail(r, SNAP_ESTALE, "%s is gone; take a new snapshot", tg.what);
    else if (json_get(v, "no"))
        rc = snap_act_fail(r, SNAP_EINVAL, "%s is not a file input; upload needs an "
                           "<input type=file>", tg.what);
    else if (json_get(v, "disabled"))
        rc = snap_act_fail(r, SNAP_EDISABLED, "%s is disabled", tg.what);
    snap_act_pfree(&pc);
    if (rc)
        goto done;
    snap_gate_in gi = {.tool = "upload", .tab = tg.tab, .frame = tg.frame,
                       .session = tg.session, .oid = tg.oid, .ref_n = tg.n,
                       .state_change = true, .file = real, .file_given = path,
                       .egress = GATE_EGRESS_FILE, .obs = obs};
    if ((rc = snap_gate_ask(a, &gi, &gg, r)))
        goto done;
    if (!regular) {
        rc = snap_act_fail(r, SNAP_EINVAL, "upload: %.300s is not a readable regular file", path);
        goto done;
    }
    if ((rc = snap_act_recheck_target(a, &gg, "upload", &tg, &ss, NULL, r)))
        goto done;
    snap_tab *t1 = snap_tab_by_id(a, tg.tab);
    uint64_t nav0 = t1 ? t1->nav : 0;
    size_t tabs0 = a->ntabs;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "files");
    json_w_arr_begin(&w);
    json_w_str(&w, real);
    json_w_arr_end(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, tg.oid);
    json_w_obj_end(&w);
    if ((rc = snap_act_call(a, tg.session, "DOM.setFileInputFiles", json_w_take(&w, NULL), &pc))) {
        rc = snap_act_fail(r, SNAP_EBROWSER, "%s: %s", tg.what, pc.e.msg);
        snap_act_pfree(&pc);
        goto done;
    }
    snap_act_pfree(&pc);
    const char *base = strrchr(real, '/');
    char did[900];
    snprintf(did, sizeof did, "attached %.200s to %s", base ? base + 1 : real, tg.what);
    snap_settled sd;
    if ((rc = snap_act_settle(a, tg.tab, nav0, tabs0, deadline, did, &sd, r)))
        goto done;
    act_report rp;
    snap_act_report_init(&rp, "upload", tg.ref);
    rc = snap_act_finish(a, tg.tab, did, &sd, &rp, r);
    snap_act_report_free(&rp);
done:
    snap_gate_done(a, &gg, rc, r);
    snap_act_release_all(a, &tg, &ss);
    free(real);
    return rc;
}

/* ---- type ---- */

int snap_select(snap_agent *a, const char *ref, const char *const *values, size_t n,
                const char *obs, snap_result *r);

static const keydef KEY_ENTER = {"Enter", "Enter", 13, "\r"};
static const keydef KEY_DELETE = {"Delete", "Delete", 46, ""};

/* Why the element cannot be typed into, from snap_js_prep_type_fn's reply v
 * (rpr: its call's result, msg its error): 0 when it can, else the error
 * set in r. A <select> (select) takes its option by label instead. */
static int type_prep_fail(snap_gated *gg, const json_val *v, int rpr, const char *msg,
                          const char *what, bool select, snap_result *r)
{
    char why[256] = "";
    if (rpr && rpr != CDP_EPROTOCOL)
        return snap_act_fail(r, SNAP_EBROWSER, "%s: %s", what, msg);
    if (!v || json_get(v, "gone"))
        return snap_act_fail(r, SNAP_ESTALE, "%s was removed from the page; take a new snapshot",
                             what);
    if (json_get_str(v, "no")) {
        snap_act_pg(why, sizeof why, json_get_str(v, "no"));
        return snap_act_fail(r, SNAP_EINVAL, "%s does not take text (it is a %s); type into a "
                             "textbox, a textarea or an editable element", what, why);
    }
    if (json_get_str(v, "disabled")) {
        snap_act_pg(why, sizeof why, json_get_str(v, "disabled"));
        return snap_act_fail(r, SNAP_EDISABLED, "%s is %s; it cannot be typed into", what, why);
    }
    if (!select && !json_bool(json_get(v, "focused"))) {
        /* The text goes where the focus is: it must be the field named (or
         * inside it, for a contenteditable), confirmed or not (a focus
         * handler may have moved it, at once, in a microtask or from a
         * timer it set: snap_js_prep_type_fn looks again a task later). */
        return snap_act_focus_lost(gg, "type", what, json_get_str(v, "to"), r);
    }
    return 0;
}

/* What a read-back of the field (snap_js_value_fn) gave: its value, or for
 * a field that is secret now (or known to be) only its length. */
typedef struct {
    char *value;        /* a copy to free; NULL when secret, gone or unread */
    size_t len;         /* its length in characters (code points; for a
                           secret field too) */
    bool read;          /* an answer came */
    bool gone;          /* the field left the page */
    bool secret;        /* secret now, known to be, or the answer was not
                           understood (fail closed: no value, no length) */
    bool has_len;       /* len is known */
} field_value;

/* The characters (code points) of the UTF-8 text s: what a length told to
 * the agent counts, never bytes. */
static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Parse snap_js_value_fn's answer v (NULL: none came) into fv; known: the
 * field is known to be secret, whatever the answer says. */
static void type_value_parse(const json_val *v, bool known, field_value *fv)
{
    memset(fv, 0, sizeof *fv);
    if (!v)
        return;
    fv->read = true;
    if (json_is(v, JSON_NULL)) {
        fv->gone = true;
        return;
    }
    const char *s = json_get_str(v, "v");
    if (json_is(v, JSON_OBJECT) && s && !json_get(v, "s")) {
        fv->len = utf8_chars(s);
        fv->has_len = true;
        fv->secret = known;
        if (!known) {
            fv->value = base_strdup(s);
            if (!fv->value)
                fv->read = false;
        }
        return;
    }
    fv->secret = true;
    int64_t n = -1;
    if (json_is(v, JSON_OBJECT) && json_int(json_get(v, "n"), &n) && n >= 0) {
        fv->len = (size_t)n;
        fv->has_len = true;
    }
}

/* The parameters of a read-back of tg's field (snap_js_value_fn); known:
 * it is known to be secret, so only its length comes back. */
static char *type_value_params(const target *tg, bool known)
{
    return snap_act_fn_params(tg->oid, snap_js_value_fn, known ? "[{\"value\":true}]" : NULL,
                              true, false);
}

/* Press Enter after the text and add " and pressed Enter" to did (cap
 * bytes). Enter goes where the focus is now: a page that moved it on input
 * (to another form, a frame) does not get the key. */
static int type_press_enter(snap_agent *a, const target *tg, char *did, size_t cap,
                            bool *dialog, snap_result *r)
{
    char to[96], why[256];
    if (snap_act_focus_where(a, tg->session, tg->oid, to, sizeof to))
        return snap_act_fail(r, SNAP_ESTALE, "%s, but Enter was not pressed: the page then "
                             "moved the focus away from the field (to %s), so the key would have "
                             "gone there. Take a new snapshot, then press Enter on the control "
                             "you mean.", did, snap_act_pg(why, sizeof why, to));
    const char *methods[12];
    char *prms[12];
    size_t n = snap_act_key_events(&KEY_ENTER, 0, methods, prms);
    int rc = snap_act_dispatch_input(a, tg->tab, tg->session, methods, prms, n, dialog, r);
    if (rc)
        return rc;
    snprintf(did + strlen(did), cap - strlen(did), " and pressed Enter");
    return 0;
}

/* What the field held after the text went in, into the report: the value
 * and whether it is what was typed (noted in did, cap bytes), or for a
 * secret field only its length. secret: the field is secret, now or after
 * the submit (a page may make it one then: its earlier value is withheld
 * too). */
static void type_report_value(act_report *rp, const field_value *fv, const char *text,
                              bool secret, bool submit, char *did, size_t cap)
{
    if (!fv->read || fv->gone)
        return;
    if (!secret && !fv->secret && fv->value) {
        bool same = strcmp(fv->value, text) == 0;
        if (!same)
            snprintf(did + strlen(did), cap - strlen(did), " (the field %s something else than "
                     "what was typed)", submit ? "held" : "holds");
        /* After a submit, what it holds then is read again (type_report_after). */
        if (!submit) {
            base_buf_printf(&rp->page, "value now: ");
            snap_act_sb_page(&rp->page, fv->value, 300, PAGE_KEEP_NL);
        }
        json_w_key(&rp->extra, submit ? "value_typed" : "value");
        snap_json_page(&rp->extra, fv->value);
        json_w_key(&rp->extra, "value_matches");
        json_w_bool(&rp->extra, same);
    } else {
        json_w_key(&rp->extra, "secret");
        json_w_bool(&rp->extra, true);
        if (fv->has_len) {
            json_w_key(&rp->extra, "length");
            json_w_int(&rp->extra, (int64_t)fv->len);
        }
    }
    rp->has_extra = true;
}

/* After a submit settled on the same document: what the field holds now,
 * read again (issue 13, point 5c) into fv: "the field was cleared", "the
 * field now holds ...", "the field is gone from the page". Whether it is
 * secret is decided again at this read, with the snapshot's rules
 * (snap_js_value_fn): a page may have made it a password or one-time-code
 * field on submit. For a secret field (then, before, or noted ever), or an
 * answer not understood: only whether it was cleared or how many
 * characters it holds, never a value; the value never leaves the page. */
static void type_report_after(const field_value *fv, bool secret, act_report *rp)
{
    if (!fv->read)
        return;
    bool hide = secret || fv->secret;
    const char *how = fv->gone ? "gone" : fv->has_len && !fv->len ? "cleared" : "kept";
    base_buf_printf(&rp->page, "%safter the submit: ", rp->page.len ? "\n" : "");
    if (fv->gone) {
        base_buf_printf(&rp->page, "the field is gone from the page");
    } else if (fv->has_len && !fv->len) {
        base_buf_printf(&rp->page, "the field was cleared");
    } else if (hide && fv->has_len) {
        base_buf_printf(&rp->page, "the field still holds %zu characters (a secret field: not "
                        "shown)", fv->len);
        json_w_key(&rp->extra, "length_after");
        json_w_int(&rp->extra, (int64_t)fv->len);
    } else if (hide || !fv->value) {
        base_buf_printf(&rp->page, "the field holds something (a secret field: not shown)");
        how = "unknown";
    } else {
        base_buf_printf(&rp->page, "the field now holds ");
        snap_act_sb_quoted(&rp->page, fv->value, 300);
        json_w_key(&rp->extra, "value");
        snap_json_page(&rp->extra, fv->value);
    }
    json_w_key(&rp->extra, "field_after");
    json_w_str(&rp->extra, how);
    rp->has_extra = true;
    rp->changed = true;
}

/* What the recorder saw (collect: the reply of snap_js_collect_fn), into
 * the report (never new text for a secret field, nor the typed text
 * itself, which shows up as new text in contenteditables). */
static void type_report_new_text(pcall *collect, const char *text, bool secret,
                                 act_report *rp)
{
    const json_val *v = snap_act_fn_value(collect);
    if (json_is(v, JSON_OBJECT))
        snap_act_report_recorded(v, text, secret, true, rp);
}

/* What type and select hold from field_gate to their end: the element,
 * the sessions its objects were made in, the gate's answer (the permit),
 * the action's deadline and, for type, the recorder. */
typedef struct {
    target tg;
    session_set ss;
    snap_gated gg;
    int64_t deadline;
    char obs_oid[SNAP_ID_MAX];  /* the recorder (snap_js_observe_fn), or "" */
    /* select: the options the values pick, read before the gate
     * (snap_js_select_pick_fn's answer; the strings point into it) */
    pcall pick;
    bool have_pick;
    const char **chosen, **chosen_v;
    size_t nchosen;
} field_act;

static void options_list(const json_val *v, base_buf *b);
static char *arg_strs(const char *const *values, size_t n);

/* Free what field_pick_read kept. */
static void field_pick_free(field_act *f)
{
    if (f->have_pick)
        snap_act_pfree(&f->pick);
    f->have_pick = false;
    free(f->chosen);
    free(f->chosen_v);
    f->chosen = f->chosen_v = NULL;
    f->nchosen = 0;
}

/* "no option" from a {miss, total, avail} answer. */
static int select_miss(const json_val *v, const char *what, snap_result *r)
{
    base_buf b = {0}, m = {0};
    options_list(v, &b);
    size_t i = 0;
    for (const json_val *o = json_first(json_get(v, "miss")); o; o = json_next(o), i++) {
        base_buf_printf(&m, "%s", i ? ", " : "");
        snap_act_sb_quoted(&m, json_str(o, NULL), 100);
    }
    int rc = snap_act_fail(r, SNAP_EINVAL, "%s has no option %s; its options: %s", what,
                           m.s ? m.s : "", b.s ? b.s : "none");
    free(b.s);
    free(m.s);
    return rc;
}

/* select: the answer of snap_js_select_pick_fn (call rc) into f->chosen and
 * gi: the gate judges the options the values pick, not the values. A value
 * that picks nothing fails here, before the gate, as the select would. */
static int field_pick_read(field_act *f, int rc, snap_gate_in *gi, snap_result *r)
{
    const json_val *v = rc ? NULL : snap_act_fn_value(&f->pick);
    if (rc && rc != CDP_EPROTOCOL)
        return snap_act_fail(r, SNAP_EBROWSER, "%s: %s", f->tg.what, f->pick.e.msg);
    if (!v || json_get(v, "gone"))
        return snap_act_fail(r, SNAP_ESTALE, "%s was removed from the page; take a new snapshot",
                             f->tg.what);
    if (json_get(v, "miss"))
        return select_miss(v, f->tg.what, r);
    const json_val *opts = json_get(v, "opts");
    size_t n = 0;
    for (const json_val *o = json_first(opts); o; o = json_next(o))
        n++;
    if (n != gi->noptions)
        return snap_act_fail(r, SNAP_EBROWSER, "%s: the options chosen could not be read",
                             f->tg.what);
    f->chosen = calloc(n, sizeof *f->chosen);
    f->chosen_v = calloc(n, sizeof *f->chosen_v);
    if (!f->chosen || !f->chosen_v)
        return snap_act_fail(r, SNAP_ENOMEM, "out of memory");
    size_t i = 0;
    for (const json_val *o = json_first(opts); o; o = json_next(o), i++) {
        f->chosen[i] = json_get_str(o, "l");
        f->chosen_v[i] = json_get_str(o, "v");
        if (!f->chosen[i] || !f->chosen_v[i])
            return snap_act_fail(r, SNAP_EBROWSER, "%s: the options chosen could not be read",
                                 f->tg.what);
    }
    f->nchosen = n;
    gi->chosen = f->chosen;
    gi->chosen_values = f->chosen_v;
    gi->nchosen = n;
    return 0;
}

/* Stop f's recorder, not waiting (a failed type, or one that goes on as a
 * select). */
static void field_unobserve(snap_agent *a, field_act *f)
{
    if (f->obs_oid[0])
        snap_act_send_forget(a, f->tg.session, "Runtime.callFunctionOn",
                             snap_act_fn_params(f->obs_oid, snap_js_unobserve_fn, NULL, true,
                                                false));
    f->obs_oid[0] = 0;
}

/* The start type and select share: the deadline set, ref resolved into
 * f->tg and its session noted in f->ss, the gate asked about gi (its
 * element members are filled in here from f->tg), and after a
 * confirmation a check that the element is still the one the human was
 * shown. The element's facts for the gate (and for type, observe: the
 * element scrolled into view and the recorder started, both reads, as a
 * click does before the gate) go in the round trip of the check that the
 * element is still in the document. 0 with the permit held (the caller
 * ends with snap_gate_done and snap_act_release_all), or a SNAP_E* code
 * with r filled and everything released. */
static int field_gate(snap_agent *a, const char *ref, snap_gate_in *gi, bool observe,
                      field_act *f, snap_result *r)
{
    memset(&f->ss, 0, sizeof f->ss);
    memset(&f->gg, 0, sizeof f->gg);
    f->obs_oid[0] = 0;
    f->have_pick = false;
    f->chosen = f->chosen_v = NULL;
    f->nchosen = 0;
    f->deadline = base_now_ms() + a->o.timeout_ms;
    target *tg = &f->tg;
    session_set *ss = &f->ss;
    snap_gated *gg = &f->gg;
    int rc = snap_act_resolve_start(a, ref, tg, r);
    if (rc)
        return rc;
    snap_act_sessions_note(ss, tg->session);
    pcall fc, sc, ob;
    snap_act_psend_p(a, tg->session, "Runtime.callFunctionOn", snap_gate_facts_params(tg->oid),
                     &fc);
    if (gi->options) {
        char *args = arg_strs(gi->options, gi->noptions);
        snap_act_psend_p(a, tg->session, "Runtime.callFunctionOn",
                         args ? snap_act_fn_params(tg->oid, snap_js_select_pick_fn, args, true,
                                                   false)
                              : NULL,
                         &f->pick);
        free(args);
        f->have_pick = true;
    }
    if (observe) {
        snap_act_psend_p(a, tg->session, "DOM.scrollIntoViewIfNeeded",
                         snap_act_params("s", "objectId", tg->oid), &sc);
        snap_act_psend_p(a, tg->session, "Runtime.callFunctionOn",
                         snap_act_fn_params(tg->oid, snap_js_observe_fn, NULL, false, false), &ob);
    }
    rc = snap_act_resolve_check(a, tg, r);
    snap_act_pwait(a, &fc);
    if (observe) {
        snap_act_pwait(a, &sc);
        snap_act_pwait(a, &ob);
        const char *o = snap_act_fn_object(&ob);
        if (o && strlen(o) < SNAP_ID_MAX)
            snprintf(f->obs_oid, sizeof f->obs_oid, "%s", o);
        snap_act_pfree(&sc);
        snap_act_pfree(&ob);
    }
    gi->tab = tg->tab;
    gi->frame = tg->frame;
    gi->session = tg->session;
    gi->oid = tg->oid;
    gi->ref_n = tg->n;
    /* Not an object (an exception, no answer): the gate reads them itself
     * and fails closed. */
    gi->facts = json_is(snap_act_fn_value(&fc), JSON_OBJECT) ? snap_act_fn_value(&fc) : NULL;
    if (f->have_pick) {
        int prc = snap_act_pwait(a, &f->pick);
        if (!rc)
            rc = field_pick_read(f, prc, gi, r);
    }
    if (!rc)
        rc = snap_gate_ask(a, gi, gg, r);
    gi->facts = NULL;
    snap_act_pfree(&fc);
    if (rc) {
        field_unobserve(a, f);
        field_pick_free(f);
        snap_act_release_all(a, tg, ss);
        return rc;
    }
    if ((rc = snap_act_recheck_target(a, gg, gi->tool, tg, ss, NULL, r))) {
        snap_gate_done(a, gg, rc, r);
        field_unobserve(a, f);
        field_pick_free(f);
        snap_act_release_all(a, tg, ss);
    }
    return rc;
}

/* After the text went in: read back what the field holds into fv, and
 * without submit what the recorder saw, in the same round trip (the
 * recorder keeps watching: *co is used only if the page then started
 * nothing, else read again after the settle). These answers are also the
 * barrier snap_act_settle_light relies on (a later call answered). */
static void type_read_back(snap_agent *a, field_act *f, bool secret, bool submit,
                           field_value *fv, pcall *co, bool *have_co)
{
    pcall vv;
    *have_co = !submit && f->obs_oid[0];
    if (*have_co)
        memset(co, 0, sizeof *co);
    snap_act_psend_p(a, f->tg.session, "Runtime.callFunctionOn", type_value_params(&f->tg, secret),
                     &vv);
    if (*have_co)
        snap_act_psend_p(a, f->tg.session, "Runtime.callFunctionOn",
                         snap_act_fn_params(f->obs_oid, snap_js_collect_fn, "[{\"value\":true}]",
                                            true, false),
                         co);
    int rc = snap_act_pwait(a, &vv);
    type_value_parse(rc ? NULL : snap_act_fn_value(&vv), secret, fv);
    snap_act_pfree(&vv);
    if (*have_co)
        snap_act_pwait(a, co);
}

/* Once the page settled (usable): after a submit, the field read again
 * into fa; and what the recorder saw into co, unless the early reading
 * (have_co) stands (quiet: the page started nothing). One round trip. */
static void type_read_settled(snap_agent *a, field_act *f, bool secret, bool submit, bool quiet,
                              field_value *fa, pcall *co, bool *have_co)
{
    pcall vv;
    if (*have_co && quiet && !submit)
        return;
    if (*have_co)
        snap_act_pfree(co);
    *have_co = f->obs_oid[0] != 0;
    if (submit)
        snap_act_psend_p(a, f->tg.session, "Runtime.callFunctionOn",
                         type_value_params(&f->tg, secret), &vv);
    if (*have_co) {
        snap_act_psend_p(a, f->tg.session, "Runtime.callFunctionOn",
                         snap_act_fn_params(f->obs_oid, snap_js_collect_fn, NULL, true, false), co);
        f->obs_oid[0] = 0;      /* that collect stops it */
    }
    if (submit) {
        int rc = snap_act_pwait(a, &vv);
        type_value_parse(rc ? NULL : snap_act_fn_value(&vv), secret, fa);
        snap_act_pfree(&vv);
    }
    if (*have_co)
        snap_act_pwait(a, co);
}

/* Check the field takes text, focus it, select what it holds and, a task
 * later, check that the focus stayed on it (one round trip, after the
 * gate: it changes the page; the keys follow only if the focus stayed).
 * 0, or a failure with everything released; *select when it is a
 * <select> (released too). */
static int type_prep(snap_agent *a, field_act *f, bool *secret, bool *had, bool *select,
                     secret_form *sf, snap_result *r)
{
    pcall pr;
    int rpr = snap_act_call(a, f->tg.session, "Runtime.callFunctionOn",
                            snap_act_fn_params(f->tg.oid, snap_js_prep_type_fn, NULL, true, true),
                            &pr);
    const json_val *v = snap_act_fn_value(&pr);
    /* Secret: by the snapshot's rules now, or noted secret before (a
     * password field the page made type=text since). */
    const snap_ref *rf = f->tg.n && f->tg.n <= a->nrefs ? &a->refs[f->tg.n - 1] : NULL;
    *secret = json_bool(json_get(v, "secret")) || snap_secret_of_ref(a, rf) != 0;
    *had = json_bool(json_get(v, "had"));
    *select = json_get(v, "select") != NULL;
    snap_act_secret_form_note(sf, v);
    int fail = type_prep_fail(&f->gg, v, rpr, pr.e.msg, f->tg.what, *select, r);
    snap_act_pfree(&pr);
    if (fail || *select) {
        snap_gate_done(a, &f->gg, fail, fail ? r : NULL);
        field_unobserve(a, f);
        snap_act_release_all(a, &f->tg, &f->ss);
    }
    return fail;
}

/* The keys for text (Delete to clear a field that had text): their count. */
static size_t type_keys(const char *text, bool had, const char **methods, char **prms)
{
    if (*text) {
        methods[0] = "Input.insertText";
        prms[0] = snap_act_params("s", "text", text);
        return 1;
    }
    return had ? snap_act_key_events(&KEY_DELETE, 0, methods, prms) : 0;
}

/* Round trips of a type without submit, the page quiet (issue 13, point
 * 9; test_actions type_round_trips_regression): the ref resolved; its
 * check that it is in the document with the gate's facts, the scroll and
 * the recorder; the field prepared (after the gate) with where the focus
 * is a task later (it gates the keys); the keys; the value read back with
 * what the recorder saw. The releases at the end are not waited for. */
int snap_type(snap_agent *a, const char *ref, const char *text, bool submit,
              const char *obs, snap_result *r)
{
    snap_tab *t0;
    int rc = snap_act_begin(a, obs, &t0, r);
    if (rc)
        return rc;
    if (!text)
        text = "";
    if (!json_utf8_valid((const uint8_t *)text, strlen(text)))
        return snap_act_fail(r, SNAP_EINVAL, "the text to type is not valid UTF-8");
    field_act f;
    snap_gate_in gi = {.tool = "type", .state_change = true, .submit = submit, .text = text,
                       .obs = obs};
    if ((rc = field_gate(a, ref, &gi, true, &f, r)))
        return rc;
    const char *fs = f.tg.session, *what = f.tg.what;
    bool secret = false, had = false, select = false;
    secret_form sf = {0};
    if ((rc = type_prep(a, &f, &secret, &had, &select, &sf, r)))
        return rc;
    if (select) {
        /* Typing into a <select> picks the option with that label. */
        const char *vals[1] = {text};
        return snap_select(a, ref, vals, 1, obs, r);
    }
    snap_act_secret_form_known(a, f.tg.tab, f.tg.frame, fs, f.tg.oid, &sf);
    snap_act_secret_form_arm(a, &sf);
    int tab_id = f.tg.tab;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    uint64_t nav0 = t ? t->nav : 0;
    uint64_t own_seq0 = t ? t->own_seq : 0;
    size_t tabs0 = a->ntabs;
    bool dialog = false;
    const char *methods[12];
    char *prms[12];
    size_t n = type_keys(text, had, methods, prms);
    if (n && (rc = snap_act_dispatch_input(a, tab_id, f.tg.session, methods, prms, n, &dialog, r)))
        goto done;
    field_value fv = {0}, fa = {0};
    pcall co;
    bool have_co = false, quiet = false;
    if (!dialog)
        type_read_back(a, &f, secret, submit, &fv, &co, &have_co);
    secret |= fv.secret;
    char did[800];
    if (secret)
        snprintf(did, sizeof did, "typed %zu characters into %s (a secret field: not shown)",
                 utf8_chars(text), what);
    else
        snprintf(did, sizeof did, "%s %s", *text ? "typed into" : "cleared", what);
    snap_settled st;
    if (submit && !dialog)
        rc = type_press_enter(a, &f.tg, did, sizeof did, &dialog, r);
    if (!rc)
        rc = submit ? snap_act_settle(a, tab_id, nav0, tabs0, f.deadline, did, &st, r)
                    : snap_act_settle_light(a, tab_id, nav0, tabs0, own_seq0, f.deadline, did,
                                            &st, &quiet, r);
    if (!rc && snap_act_page_usable(a, tab_id, &st)) {
        type_read_settled(a, &f, secret, submit, quiet, &fa, &co, &have_co);
        secret |= fa.secret;
    }
    if (!rc) {
        act_report rp;
        snap_act_report_init(&rp, "type", f.tg.ref);
        rp.sf = sf;
        type_report_value(&rp, &fv, text, secret, submit, did, sizeof did);
        if (submit)
            type_report_after(&fa, secret, &rp);
        if (have_co && snap_act_page_usable(a, tab_id, &st))
            type_report_new_text(&co, text, secret, &rp);
        rc = snap_act_finish(a, tab_id, did, &st, &rp, r);
        snap_act_report_free(&rp);
    }
    if (have_co)
        snap_act_pfree(&co);
    free(fv.value);
    free(fa.value);
done:
    snap_gate_done(a, &f.gg, rc, r);
    field_unobserve(a, &f);
    snap_act_release_all(a, &f.tg, &f.ss);
    return rc;
}

/* ---- select ---- */

/* Available options, from a {miss, avail, total} object, for an error. */
static void options_list(const json_val *v, base_buf *b)
{
    size_t i = 0;
    for (const json_val *o = json_first(json_get(v, "avail")); o; o = json_next(o), i++) {
        base_buf_printf(b, "%s", i ? ", " : "");
        snap_act_sb_quoted(b, json_str(o, NULL) ? json_str(o, NULL) : "", 100);
    }
    int64_t total = json_get_int(v, "total", 0);
    if (total > (int64_t)i)
        base_buf_printf(b, " and %lld more", (long long)(total - (int64_t)i));
    if (!i)
        base_buf_printf(b, "none");
}

/* [{"value":[v1, v2, ...]}], and with f: a second argument, the options
 * the gate judged [{"l":words,"v":value}, ...] */
static char *arg_strs_exp(const char *const *values, size_t n, const field_act *f)
{
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "value");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < n; i++)
        json_w_str(&w, values[i]);
    json_w_arr_end(&w);
    json_w_obj_end(&w);
    if (f) {
        json_w_obj_begin(&w);
        json_w_key(&w, "value");
        json_w_arr_begin(&w);
        for (size_t i = 0; i < f->nchosen; i++) {
            json_w_obj_begin(&w);
            json_w_key(&w, "l");
            json_w_str(&w, f->chosen[i]);
            json_w_key(&w, "v");
            json_w_str(&w, f->chosen_v[i]);
            json_w_obj_end(&w);
        }
        json_w_arr_end(&w);
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    return json_w_take(&w, NULL);
}

static char *arg_strs(const char *const *values, size_t n)
{
    return arg_strs_exp(values, n, NULL);
}

/* Click an element given by object id in tg's frame (an ARIA option, the
 * combobox): locate (checks) and a real mouse click. */
static int click_object(snap_agent *a, const target *tg, const char *oid, const char *what,
                        session_set *ss, bool *dialog, snap_result *r)
{
    pcall dn;
    int be = 0;
    if (snap_act_call(a, tg->session, "DOM.describeNode", snap_act_params("s", "objectId", oid),
                      &dn) == 0)
        be = (int)json_get_int(json_get(dn.rep.result, "node"), "backendNodeId", 0);
    snap_act_pfree(&dn);
    if (!be)
        return snap_act_fail(r, SNAP_ESTALE, "%s is gone from the page", what);
    located loc;
    int rc = snap_act_locate(a, tg->tab, tg->frame, oid, be, what, true, ss, &loc, r);
    if (rc)
        return rc;
    return snap_act_mouse_click(a, tg->tab, loc.x, loc.y, false, dialog, r);
}

/* The ARIA path of select: open a combobox with a click, then click each
 * option by name. */
static int select_aria(snap_agent *a, field_act *f, const char *role,
                       const char *const *values, size_t n, bool *dialog, base_buf *chosen,
                       snap_result *r)
{
    const target *tg = &f->tg;
    const char *what = tg->what;
    session_set *ss = &f->ss;
    bool combo = strcmp(role, "listbox") != 0;
    if (combo && n > 1)
        return snap_act_fail(r, SNAP_EINVAL, "%s is a combobox: choose one option at a time",
                             what);
    for (size_t i = 0; i < n; i++) {
        if (combo) {
            int rc = click_object(a, tg, tg->oid, what, ss, dialog, r);
            if (rc || *dialog)
                return rc;
        }
        char *arg = snap_act_arg_str(values[i]);
        pcall fo;
        int rc = snap_act_call(
            a, tg->session, "Runtime.callFunctionOn",
            arg ? snap_act_fn_params(tg->oid, snap_js_find_option_fn, arg, false, true) : NULL,
            &fo);
        free(arg);
        if (rc) {
            snap_act_fail(r, SNAP_EBROWSER, "%s: %s", what, fo.e.msg);
            snap_act_pfree(&fo);
            return SNAP_EBROWSER;
        }
        const char *oid = snap_act_fn_object(&fo);
        const json_val *res_v = json_get(fo.rep.result, "result");
        if (!oid || !json_get_str(res_v, "subtype") ||
            strcmp(json_get_str(res_v, "subtype"), "node") != 0) {
            const char *js = json_get_str(res_v, "value");
            json_doc *d = js ? json_parse(js, strlen(js), NULL, NULL) : NULL;
            const json_val *dv = json_doc_root(d);
            if (json_get(dv, "nolist")) {
                snap_act_fail(r, SNAP_EINVAL,
                              "%s: no listbox with options appeared%s; take a "
                              "snapshot to see what opened",
                              what, combo ? " after opening it" : "");
            } else {
                base_buf b = {0}, v = {0};
                options_list(dv, &b);
                snap_act_sb_quoted(&v, values[i], 100);
                snap_act_fail(r, SNAP_EINVAL, "%s has no option %s; its options: %s", what,
                              v.s ? v.s : "", b.s ? b.s : "none");
                free(b.s);
                free(v.s);
            }
            json_doc_free(d);
            snap_act_pfree(&fo);
            return SNAP_EINVAL;
        }
        char ooid[SNAP_ID_MAX];
        snprintf(ooid, sizeof ooid, "%s", oid);
        snap_act_pfree(&fo);
        /* In a multi-select listbox a click toggles: leave chosen ones be. */
        pcall sel;
        memset(&sel, 0, sizeof sel);
        bool already = false;
        if (!combo &&
            snap_act_call(a, tg->session, "Runtime.callFunctionOn",
                          snap_act_fn_params(ooid, snap_js_aria_selected_fn, NULL, true, false),
                          &sel) == 0)
            already = json_bool(snap_act_fn_value(&sel));
        snap_act_pfree(&sel);
        /* The option found must carry the words the gate judged. */
        pcall ow;
        const char *words = NULL;
        if (snap_act_call(a, tg->session, "Runtime.callFunctionOn",
                          snap_act_fn_params(ooid, snap_js_option_words_fn, NULL, true, false),
                          &ow) == 0)
            words = json_str(snap_act_fn_value(&ow), NULL);
        bool same = words && i < f->nchosen && strcasecmp(words, f->chosen[i]) == 0;
        snap_act_pfree(&ow);
        if (!same)
            return snap_act_fail(r, SNAP_ESTALE,
                                 "the option of %s that the value picks is not the one the "
                                 "gate judged (it was not in the list before it opened, or "
                                 "changed); choose it by its name; no option was chosen",
                                 what);
        char owhat[600];
        {
            base_buf ob = {0};
            base_buf_printf(&ob, "option ");
            snap_act_sb_quoted(&ob, values[i], 60);
            base_buf_printf(&ob, " of %s", what);
            snprintf(owhat, sizeof owhat, "%s", ob.s && !ob.oom ? ob.s : "an option");
            snap_act_utf8_repair(owhat);
            free(ob.s);
        }
        if (!already && (rc = click_object(a, tg, ooid, owhat, ss, dialog, r)))
            return rc;
        base_buf_printf(chosen, "%s", i ? ", " : "");
        snap_act_sb_quoted(chosen, values[i], 100);
        if (*dialog)
            return 0;
    }
    return 0;
}

int snap_select(snap_agent *a, const char *ref, const char *const *values, size_t n,
                const char *obs, snap_result *r)
{
    snap_tab *t0;
    int rc = snap_act_begin(a, obs, &t0, r);
    if (rc)
        return rc;
    if (!values || n == 0)
        return snap_act_fail(r, SNAP_EINVAL, "select needs at least one option label or value");
    for (size_t i = 0; i < n; i++)
        if (!values[i] || !json_utf8_valid((const uint8_t *)values[i], strlen(values[i])))
            return snap_act_fail(r, SNAP_EINVAL, "option %zu is missing or not valid UTF-8", i + 1);
    field_act f;
    snap_gate_in gi = {.tool = "select", .state_change = true, .options = values, .noptions = n,
                       .obs = obs};
    if ((rc = field_gate(a, ref, &gi, false, &f, r)))
        return rc;
    const char *fs = f.tg.session, *what = f.tg.what;
    int tab_id = f.tg.tab;
    snap_tab *t = snap_tab_by_id(a, tab_id);
    uint64_t nav0 = t ? t->nav : 0;
    size_t tabs0 = a->ntabs;
    bool dialog = false;
    base_buf chosen = {0};
    char *args = arg_strs_exp(values, n, &f);
    pcall sc, sv;
    snap_act_psend_p(a, fs, "DOM.scrollIntoViewIfNeeded",
                     snap_act_params("s", "objectId", f.tg.oid), &sc);
    snap_act_psend_p(a, fs, "Runtime.callFunctionOn",
                     args ? snap_act_fn_params(f.tg.oid, snap_js_select_fn, args, true, false)
                          : NULL,
                     &sv);
    free(args);
    snap_act_pwait(a, &sc);
    snap_act_pfree(&sc);
    int rsv = snap_act_pwait(a, &sv);
    const json_val *v = snap_act_fn_value(&sv);
    bool native = json_get(v, "ok") != NULL;
    if (rsv && rsv != CDP_EPROTOCOL) {
        rc = snap_act_fail(r, SNAP_EBROWSER, "%s: %s", what, sv.e.msg);
    } else if (!v || json_get(v, "gone")) {
        rc = snap_act_fail(r, SNAP_ESTALE, "%s was removed from the page; take a new snapshot",
                           what);
    } else if (json_get_str(v, "disabled")) {
        char pb[256];
        rc = snap_act_fail(r, SNAP_EDISABLED, "%s is %s; no option can be chosen", what,
                           snap_act_pg(pb, sizeof pb, json_get_str(v, "disabled")));
    } else if (json_get(v, "miss")) {
        rc = select_miss(v, what, r);
    } else if (json_get(v, "changed")) {
        rc = snap_act_fail(r, SNAP_ESTALE,
                           "the options of %s that the values pick changed since the gate "
                           "judged them; nothing was chosen; take a new snapshot",
                           what);
    } else if (json_get(v, "single")) {
        rc = snap_act_fail(r, SNAP_EINVAL, "%s takes one option, not %zu", what, n);
    } else if (json_get(v, "ok")) {
        size_t i = 0;
        for (const json_val *o = json_first(json_get(v, "sel")); o; o = json_next(o), i++) {
            base_buf_printf(&chosen, "%s", i ? ", " : "");
            snap_act_sb_quoted(&chosen, json_str(o, NULL), 100);
        }
    } else {
        const char *role = json_get_str(v, "role");
        const char *popup = json_get_str(v, "popup");
        if (role && (strcmp(role, "listbox") == 0 || strcmp(role, "combobox") == 0))
            rc = select_aria(a, &f, role, values, n, &dialog, &chosen, r);
        else if (popup && strcmp(popup, "listbox") == 0)
            rc = select_aria(a, &f, "combobox", values, n, &dialog, &chosen, r);
        else {
            char pt[256], pr[256];
            rc = snap_act_fail(
                r, SNAP_EINVAL,
                "%s is a <%s>%s%s, not a select, listbox or "
                "combobox; click it instead",
                what,
                snap_act_pg(pt, sizeof pt, json_get_str(v, "tag") ? json_get_str(v, "tag") : "?"),
                role && *role ? " with role " : "", snap_act_pg(pr, sizeof pr, role));
        }
    }
    snap_act_pfree(&sv);
    if (rc) {
        free(chosen.s);
        goto done;
    }
    char did[2000];
    snprintf(did, sizeof did, "chose %s in %s", chosen.s ? chosen.s : "", what);
    snap_act_utf8_repair(did);
    free(chosen.s);
    snap_settled st;
    if ((rc = snap_act_settle(a, tab_id, nav0, tabs0, f.deadline, did, &st, r)))
        goto done;
    act_report rp;
    snap_act_report_init(&rp, "select", f.tg.ref);
    if (snap_act_page_usable(a, tab_id, &st)) {
        pcall ch;
        if (snap_act_call(a, fs, "Runtime.callFunctionOn",
                          snap_act_fn_params(f.tg.oid,
                                             native ? snap_js_value_select_fn : snap_js_chosen_fn,
                                             NULL, true, false),
                          &ch) == 0) {
            const json_val *cv = snap_act_fn_value(&ch);
            size_t i = 0;
            json_w_key(&rp.extra, "selected");
            json_w_arr_begin(&rp.extra);
            for (const json_val *o = json_first(cv); o; o = json_next(o), i++) {
                base_buf_printf(&rp.page, "%s", i ? ", " : "selected now: ");
                snap_act_sb_page(&rp.page, json_str(o, NULL), 100, 0);
                snap_json_page(&rp.extra, json_str(o, NULL));
            }
            json_w_arr_end(&rp.extra);
            rp.has_extra = true;
        }
        snap_act_pfree(&ch);
    }
    rc = snap_act_finish(a, tab_id, did, &st, &rp, r);
    snap_act_report_free(&rp);
done:
    snap_gate_done(a, &f.gg, rc, r);
    field_pick_free(&f);
    snap_act_release_all(a, &f.tg, &f.ss);
    return rc;
}
