/*
 * policy.c — asking the gate before an action, and telling it the outcome.
 *
 * Each action of act_*.c and agent.c describes itself here as a gate_request:
 * the tool, the origin acted on (the element's frame, or the page; for open
 * the target URL's), whether the tab's context is authenticated for it
 * (snap_tab_auth: a session restored from the vault or captured by a
 * login, never the mere presence of cookies), and for element actions the
 * element as the browser sees it: role and accessible name from the
 * accessibility tree (the ref), and from one read-only script on the node
 * its tag, input type, autocomplete, field names, the form it submits
 * (action, method, submit button), its row and every source of its name.
 * When the element an action acts on is another one than the node its ref
 * names (a label's text, a span in a button), the action is judged as that
 * element, under its own accessibility role and name (acted_read). The
 * gate's decision (gate_check: grant, epoch, class, confirmation hook,
 * audit) is final; an allowed action gets the sink permit for its tool
 * until snap_gate_done, which audits the outcome of consequential and
 * confirmed actions ("done", or "unknown" when the browser went away or
 * the wait ran out: such an action is never retried).
 */
#include "snapshot/snap_int.h"
#include "snapshot/page_js.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Runtime.callFunctionOn params running the page function fn on the
 * object oid with the arguments args (a JSON array, NULL for none), the
 * answer by value (new; NULL when out of memory). */
static char *fn_on_params(const char *oid, const char *fn, const char *args)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, oid);
    json_w_key(&w, "functionDeclaration");
    json_w_str(&w, fn);
    if (args) {
        json_w_key(&w, "arguments");
        json_w_raw(&w, args, strlen(args), false);
    }
    json_w_key(&w, "returnByValue");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

char *snap_gate_facts_params(const char *oid)
{
    size_t n = strlen(snap_js_facts_fn) + sizeof SNAP_JS_FACTS_WHOLE +
               strlen(snap_js_facts_tail);
    char *fn = malloc(n);
    if (!fn)
        return NULL;
    snprintf(fn, n, "%s%s%s", snap_js_facts_fn, SNAP_JS_FACTS_WHOLE, snap_js_facts_tail);
    char *p = fn_on_params(oid, fn, NULL);
    free(fn);
    return p;
}

/* A password or one-time-code field: what is typed there is a secret and is
 * never handed to the gate (it would show it to the human, or quote it as
 * a recipient). */
static bool secret_field(const gate_target *t)
{
    return (t->input_type && strcmp(t->input_type, "password") == 0) ||
           (t->autocomplete && (strstr(t->autocomplete, "password") ||
                                strstr(t->autocomplete, "one-time-code")));
}

static const char *jstr(const json_val *v, const char *k)
{
    const char *s = json_get_str(v, k);
    return s ? s : "";
}

/* Structured refusal in r. */
static int refusal(snap_agent *a, const gate_decision *d, const char *tool, snap_result *r)
{
    int code = d->decision == GATE_STOP ? SNAP_ESTOP
             : d->decision == GATE_TAKEOVER ? SNAP_ETAKEOVER
             : d->decision == GATE_STALE ? SNAP_ESTALE : SNAP_EDENIED;
    const char *what = d->decision == GATE_STOP
        ? "stopped (unbound_stop): a consequential action on an authenticated site is "
          "completed by the human, not the agent"
        : d->decision == GATE_TAKEOVER
        ? "human takeover: credentials, one-time codes and challenges are entered by the "
          "human; cdpgate never types them and never solves CAPTCHAs"
        : d->decision == GATE_STALE ? "refused as stale" : "denied by the gate";
    snap_fail(r, code, "%s%s%s: %s (%s). %s", tool, d->target[0] ? " " : "", d->target, what,
              d->reason, "Tell the user what was refused and why; do not try another way "
              "around it.");
    json_w w;
    snap_result_begin(&w, code);
    json_w_key(&w, "decision");
    json_w_str(&w, gate_decision_name(d->decision));
    json_w_key(&w, "class");
    json_w_str(&w, gate_class_name(d->cls));
    if (d->conseq) {
        json_w_key(&w, "kind");
        json_w_str(&w, gate_conseq_name(d->conseq));
    }
    json_w_key(&w, "action");
    json_w_str(&w, tool);
    json_w_key(&w, "target");
    snap_json_page(&w, d->target);
    json_w_key(&w, "reason");
    snap_json_page(&w, d->reason);  /* escaped by the gate; page rules again */
    json_w_key(&w, "epoch");
    json_w_uint(&w, gate_epoch(a->gate));
    json_w_key(&w, "message");
    snap_json_page(&w, r->text ? r->text : "");
    snap_result_set(&w, r);
    return code;
}

#define PRESENT_SECRETS_MAX 64   /* fields ever secret passed to the read-back */
#define PRESENT_GROUP "cdpgate-present"

/* The fields noted ever secret in the document of the element (tab, frame;
 * snap_secret_note: a password field the page made type=text since, a
 * field that had a one-time-code or card hint), as Runtime.callFunctionOn
 * arguments ([{"objectId"}, ...], new; NULL with 0 when none): the
 * read-back skips them, so their values never reach cdpgate. They are
 * resolved into cdpgate's isolated world of the frame, the element's own
 * (snap_ref_resolve): a function takes arguments of its own world only.
 * -1 with *out NULL when there are more than PRESENT_SECRETS_MAX, -2 when
 * that world cannot be made (fail closed), SNAP_ENOMEM when out of memory. */
static int present_secrets(snap_agent *a, const snap_gate_in *in, char **out)
{
    *out = NULL;
    snap_tab *t = snap_tab_by_id(a, in->tab);
    snap_frame *f = !t ? NULL : in->frame && *in->frame ? snap_frame_find(t, in->frame)
                  : t->nframes ? &t->frames[0] : NULL;
    int be[PRESENT_SECRETS_MAX + 1];
    size_t n = f ? snap_secret_list(a, t->id, f->id, f->loader, be, PRESENT_SECRETS_MAX + 1)
                 : 0;
    if (n > PRESENT_SECRETS_MAX)
        return -1;
    if (!n)
        return 0;
    int64_t world = snap_frame_world(a, t->id, f->id);
    if (world <= 0)
        return -2;
    json_w w;
    json_w_init(&w);
    json_w_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        char params[160];
        snprintf(params, sizeof params, "{\"backendNodeId\":%d,\"objectGroup\":\"%s\","
                 "\"executionContextId\":%lld}", be[i], PRESENT_GROUP, (long long)world);
        cdp_reply rep = {0};
        const char *o = snap_cdp_call(a, in->session, "DOM.resolveNode", params,
                                      a->o.timeout_ms, &rep, NULL) == 0
                      ? json_get_str(json_get(rep.result, "object"), "objectId") : NULL;
        /* A node that cannot be resolved is gone from the document. */
        json_w_obj_begin(&w);
        json_w_key(&w, o ? "objectId" : "value");
        if (o)
            json_w_str(&w, o);
        else
            json_w_null(&w);
        json_w_obj_end(&w);
        cdp_reply_free(&rep);
    }
    json_w_arr_end(&w);
    *out = json_w_take(&w, NULL);
    return *out ? 0 : SNAP_ENOMEM;
}

/* The submitter's name=value of the form element oid submits, read by
 * snap_js_submitter_fn into *doc: *sub its object ({f, n, v}, or NULL when
 * it has none). Returns 0, or a SNAP_E* with why (cap). */
static int submitter_read(snap_agent *a, const char *session, const char *oid, json_doc **doc,
                          const json_val **sub, char *why, size_t cap)
{
    *doc = NULL;
    *sub = NULL;
    char *p = fn_on_params(oid, snap_js_submitter_fn, NULL);
    cdp_reply rep = {0};
    cdp_err e = {0};
    int rc = p ? snap_cdp_call(a, session, "Runtime.callFunctionOn", p, a->o.timeout_ms, &rep,
                               &e) : CDP_ENOMEM;
    free(p);
    const json_val *v = rc == 0 && !json_get(rep.result, "exceptionDetails")
                            ? json_get(json_get(rep.result, "result"), "value") : NULL;
    if (!json_is(v, JSON_OBJECT)) {
        snprintf(why, cap, "%.150s", e.msg[0] ? e.msg : "the form's submitter could not be read");
        cdp_reply_free(&rep);
        return rc == CDP_ENOMEM ? SNAP_ENOMEM : SNAP_EBROWSER;
    }
    if (jstr(v, "v")[0])
        *sub = v;
    *doc = rep.doc;
    rep.doc = NULL;
    cdp_reply_free(&rep);
    return 0;
}

/* Red team s12, G10: the query of a POST form's action (the submitter's
 * formaction when it has one: the facts' fa) is read back as fields named
 * by their keys, since frameworks that merge query and body parameters
 * (PHP $_REQUEST, Rails params, Spring @RequestParam) read a `bcc` there
 * as the form's. A link's query is what it sends (red team s14, R4-11 and
 * R4-13 residuals): read back the same way, so the human is shown its
 * recipients and amounts as values, the grant's recipients are checked in
 * it, and the cover compares the navigation the browser makes with them
 * (an href swapped after the yes to another amount is refused). The
 * query of target tg's link, or of its form action when it POSTs (*len its
 * bytes, before any '#'), else NULL; *pairs the '&'-separated pairs in it
 * (at most ACTQ_MAX are read: more, or an address the facts cut (400
 * characters), and *cut is set: the gate refuses). */
#define ACTQ_MAX 64
static const char *action_query(const gate_target *tg, size_t *len, size_t *pairs, bool *cut)
{
    *len = *pairs = 0;
    const char *fa = tg ? tg->form_action : NULL;
    if (tg && tg->href && *tg->href && !tg->submits)
        fa = tg->href;
    else if (!fa || !tg->form_method || strcmp(tg->form_method, "post") != 0)
        return NULL;
    if (strlen(fa) >= 400)
        *cut = true;
    const char *qs = strchr(fa, '?');
    if (!qs)
        return NULL;
    qs++;
    *len = strcspn(qs, "#");
    for (size_t i = 0; i < *len;) {
        size_t k = strcspn(qs + i, "&#");
        if (k)
            ++*pairs;
        i += k + 1;
    }
    if (*pairs > ACTQ_MAX) {
        *pairs = ACTQ_MAX;
        *cut = true;
    }
    return qs;
}

/* Percent-decode s[0..n) as application/x-www-form-urlencoded into out
 * (n + 1 bytes): '+' is a space, and so is a decoded control character (a
 * %00 must not end the string before an address). Returns out. */
static char *form_decode(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
                   isxdigit((unsigned char)s[i + 2])) {
            char h[3] = {s[i + 1], s[i + 2], 0};
            c = (unsigned char)strtoul(h, NULL, 16);
            i += 2;
        }
        out[o++] = (char)(c < 0x20 || c == 0x7f ? ' ' : c);
    }
    out[o] = 0;
    return out;
}

/* Fill ps[0..) with the pairs of query qs (qlen bytes; at most max): each a
 * hidden field named by its key holding its decoded value, and an address
 * in a value also one beside the fields (a chip), the strings written at
 * sp. Returns the entries filled. */
static size_t action_fields(const char *qs, size_t qlen, size_t max, gate_present *ps, char *sp)
{
    size_t n = 0, done = 0;
    for (size_t i = 0; i < qlen && done < max;) {
        size_t k = strcspn(qs + i, "&#");
        if (k > qlen - i)
            k = qlen - i;
        if (k) {
            const char *eq = memchr(qs + i, '=', k);
            size_t kl = eq ? (size_t)(eq - (qs + i)) : k;
            char *key = form_decode(qs + i, kl, sp);
            sp += kl + 1;
            char *val = form_decode(eq ? eq + 1 : "", eq ? k - kl - 1 : 0, sp);
            sp += (eq ? k - kl - 1 : 0) + 1;
            ps[n++] = (gate_present){.field = key, .label = key, .name = key,
                                     .input_type = "hidden", .autocomplete = "", .value = val};
            if (strchr(val, '@') || strstr(val, "\xEF\xBC\xA0") || strstr(val, "\xEF\xB9\xAB"))
                ps[n++] = (gate_present){.chip = true, .value = val};
            done++;
        }
        i += k + 1;
    }
    return n;
}

/* The query of link tg as the fields it sends (new array, strings behind
 * it; NULL when it has none, or when out of memory: *oom). */
static gate_present *link_fields(const gate_target *tg, size_t *n, bool *oom)
{
    size_t qlen = 0, npairs = 0;
    bool cut = false;
    *n = 0;
    *oom = false;
    const char *qs = tg && tg->href && *tg->href && !tg->submits
                         ? action_query(tg, &qlen, &npairs, &cut) : NULL;
    if (!qs || !npairs)
        return NULL;
    gate_present *ps = calloc(1, 2 * npairs * sizeof *ps + qlen + 2 * npairs + 2);
    if (!ps) {
        *oom = true;
        return NULL;
    }
    *n = action_fields(qs, qlen, npairs, ps, (char *)(ps + 2 * npairs));
    return ps;
}

/* The entries snap_js_present_fn read on element oid, for the gate: q->present
 * points into *doc and *arr (free both after gate_check). Fields ever
 * secret are skipped (present_secrets). Returns 0, or a SNAP_E* with why
 * (cap). */
static int present_read(snap_agent *a, const snap_gate_in *in, gate_request *q,
                        json_doc **doc, gate_present **arr, char *why, size_t cap)
{
    *doc = NULL;
    *arr = NULL;
    const char *session = in->session, *oid = in->oid;
    char *args = NULL;
    int src = present_secrets(a, in, &args);
    if (src) {
        snprintf(why, cap, "%s", src == SNAP_ENOMEM ? "out of memory"
                 : src == -2 ? "cdpgate's own script context could not be made in its frame"
                 : "its page has more fields that were ever secret than can be left out");
        return src == SNAP_ENOMEM ? SNAP_ENOMEM : SNAP_EDENIED;
    }
    char *p = fn_on_params(oid, snap_js_present_fn, args);
    free(args);
    cdp_reply rep = {0};
    cdp_err e = {0};
    int rc = p ? snap_cdp_call(a, session, "Runtime.callFunctionOn", p, a->o.timeout_ms, &rep,
                               &e) : CDP_ENOMEM;
    free(p);
    if (src == 0) {
        cdp_reply rel = {0};
        if (snap_cdp_call(a, session, "Runtime.releaseObjectGroup",
                          "{\"objectGroup\":\"" PRESENT_GROUP "\"}", a->o.timeout_ms, &rel,
                          NULL) == 0)
            cdp_reply_free(&rel);
    }
    const json_val *v = rc == 0 && !json_get(rep.result, "exceptionDetails")
                            ? json_get(json_get(rep.result, "result"), "value") : NULL;
    const json_val *pl = json_get(v, "p");
    if (!json_is(pl, JSON_ARRAY)) {
        snprintf(why, cap, "%.150s", e.msg[0] ? e.msg : "no answer");
        cdp_reply_free(&rep);
        return rc == CDP_ENOMEM ? SNAP_ENOMEM : SNAP_EBROWSER;
    }
    size_t n = json_len(pl);
    if (n > 256)
        n = 256;
    /* The form's submitter sends its name=value too: one more field and
     * its value as an address beside the fields (a chip), its strings
     * copied behind the array (one allocation, freed as *arr). */
    json_doc *sdoc = NULL;
    const json_val *sub = NULL;
    int src2 = submitter_read(a, session, oid, &sdoc, &sub, why, cap);
    if (src2) {
        cdp_reply_free(&rep);
        return src2;
    }
    const char *sf = jstr(sub, "f"), *sn = jstr(sub, "n"), *sv = jstr(sub, "v");
    size_t subl = sub ? strlen(sf) + strlen(sn) + strlen(sv) + 3 : 0, extra = subl;
    bool at = sub && (strchr(sv, '@') || strstr(sv, "\xEF\xBC\xA0") || strstr(sv, "\xEF\xB9\xAB"));
    size_t qlen, npairs;
    bool qcut = false;
    const char *qs = action_query(q->target, &qlen, &npairs, &qcut);
    extra += qs ? qlen + 2 * npairs + 2 : 0;
    size_t m = n + (sub ? 1 : 0) + (at ? 1 : 0) + 2 * npairs;
    gate_present *ps = m ? calloc(1, m * sizeof *ps + extra) : NULL;
    if (m && !ps) {
        snprintf(why, cap, "out of memory");
        json_doc_free(sdoc);
        cdp_reply_free(&rep);
        return SNAP_ENOMEM;
    }
    if (sub) {
        char *sp = (char *)(ps + m);
        size_t fl = strlen(sf) + 1, nl = strlen(sn) + 1;
        memcpy(sp, sf, fl);
        memcpy(sp + fl, sn, nl);
        memcpy(sp + fl + nl, sv, strlen(sv) + 1);
        ps[n] = (gate_present){.field = sp, .label = sp, .name = sp + fl,
                               .input_type = "submit", .autocomplete = "", .value = sp + fl + nl};
        /* and an address in its value is one beside the fields (as the
         * page script's chips: @, U+FF20, U+FE6B) */
        if (at)
            ps[n + 1] = (gate_present){.chip = true, .value = sp + fl + nl};
    }
    json_doc_free(sdoc);
    size_t used = n + (sub ? 1 : 0) + (at ? 1 : 0);
    if (qs)
        used += action_fields(qs, qlen, npairs, ps + used, (char *)(ps + m) + subl);
    for (size_t i = 0; i < n; i++) {
        const json_val *x = json_at(pl, i);
        ps[i].chip = json_bool(json_get(x, "c"));
        ps[i].field = jstr(x, "f");
        ps[i].label = jstr(x, "l");
        ps[i].name = jstr(x, "n");
        ps[i].input_type = jstr(x, "t");
        ps[i].autocomplete = jstr(x, "ac");
        ps[i].input_mode = jstr(x, "im");
        ps[i].value = jstr(x, "v");
    }
    q->present = ps;
    q->npresent = used;
    q->present_cut = json_bool(json_get(v, "cut")) || json_len(pl) > n || qcut;
    *arr = ps;
    *doc = rep.doc;
    rep.doc = NULL;
    cdp_reply_free(&rep);
    return 0;
}

/* What the gate request takes from the caller's as it is. A dialog's
 * frame's origin goes into dorigin ("" when not http(s)), for the human:
 * an iframe of another site may be the one asking. */
static void request_from(const snap_gate_in *in, gate_request *q, char *dorigin, size_t cap)
{
    q->tool = in->tool;
    q->state_change = in->state_change;
    q->dialog = in->dialog;
    if (in->dialog && in->dialog_url) {
        if (snap_url_origin(in->dialog_url, dorigin, cap) != 0)
            dorigin[0] = 0;
        q->dialog_origin = dorigin;
    }
    q->file = in->file;
    q->file_given = in->file_given;
    q->script = in->script;
    q->key = in->key;
    q->dbl = in->dbl;
    q->options = in->options;
    q->noptions = in->noptions;
    q->chosen = in->chosen;
    q->chosen_values = in->chosen_values;
    q->nchosen = in->nchosen;
    q->egress = in->egress;
    q->epoch = in->epoch;
    q->obs = in->obs;
}

/* The element an action acts on when it is another one than the node its
 * ref names (the facts' "via": the control a label's text names, the
 * button or link a text or a span is in): the action is judged as that
 * element, under its own role and accessible name, never weaker than a
 * click on it by its own ref (red team s10, R7). */
typedef struct {
    uint32_t n;                  /* its ref (its own from a snapshot, or issued) */
    char role[32];               /* accessibility role */
    char *name;                  /* accessible name (page text), whole: the
                                    classifier reads all of it (S9) */
    char oid[SNAP_ID_MAX];       /* the element in cdpgate's world ("" none) */
    char *shadow;                /* the text of the shadow roots in the element
                                    (open and closed), whole; NULL: none */
} acted_el;

/* Free what el holds (not its object). */
static void acted_free(acted_el *el)
{
    free(el->name);
    free(el->shadow);
    el->name = el->shadow = NULL;
}

/* Let go of the object oid in session (not waited for). */
static void object_release(snap_agent *a, const char *session, const char *oid)
{
    if (!oid || !*oid)
        return;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, oid);
    json_w_obj_end(&w);
    char *p = json_w_take(&w, NULL);
    uint64_t id;
    if (p && snap_cdp_send(a, session, "Runtime.releaseObject", p, &id, NULL) == 0)
        cdp_forget(a->c, id);
    free(p);
}

/* Runtime.callFunctionOn, DOM.describeNode or getPartialAXTree params on
 * the object oid (new; NULL when out of memory). */
static char *obj_params(const char *oid, const char *fn, bool ax)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, oid);
    if (fn) {
        json_w_key(&w, "functionDeclaration");
        json_w_str(&w, fn);
    }
    if (ax) {
        json_w_key(&w, "fetchRelatives");
        json_w_bool(&w, false);
    }
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

/* Send method with params (taken) on session and wait for its reply. */
static int call_taken(snap_agent *a, const char *session, const char *method, char *params,
                      cdp_reply *rep)
{
    int rc = params ? snap_cdp_call(a, session, method, params, a->o.timeout_ms, rep, NULL)
                    : CDP_ENOMEM;
    free(params);
    return rc;
}

/* Read the element the action on in's node acts on (snap_js_acted_fn): its
 * backend node, accessibility role and name, and a ref (its own when it
 * has one). Fails closed: when it cannot be found or named (gone, hidden
 * from the accessibility tree), the action is refused with its ref, so the
 * agent can act on it by that ref if it is the one it means. */
static int acted_read(snap_agent *a, const snap_gate_in *in, acted_el *el, snap_result *r)
{
    memset(el, 0, sizeof *el);
    const snap_ref *rf = in->ref_n && in->ref_n <= a->nrefs ? &a->refs[in->ref_n - 1] : NULL;
    char what[512] = "the element", frame[SNAP_ID_MAX] = "", loader[SNAP_ID_MAX] = "";
    const char *why = "it could not be found";
    int tab = 0, backend = 0;
    char tag[32] = "element";
    if (rf) {
        snap_ref_what(a, rf, what, sizeof what);
        snprintf(frame, sizeof frame, "%s", snap_ref_frame(a, rf));
        snprintf(loader, sizeof loader, "%s", a->refdocs[rf->doc].loader);
        tab = snap_ref_tab(a, rf);
    }
    cdp_reply rep = {0}, d = {0}, x = {0};
    const char *o = NULL;
    if (rf && in->oid && *in->oid && in->session &&
        call_taken(a, in->session, "Runtime.callFunctionOn",
                   obj_params(in->oid, snap_js_acted_fn, false), &rep) == 0 &&
        !json_get(rep.result, "exceptionDetails"))
        o = json_get_str(json_get(rep.result, "result"), "objectId");
    if (o && strlen(o) < SNAP_ID_MAX) {
        snprintf(el->oid, sizeof el->oid, "%s", o);
        /* Its node and its accessibility node, in one round trip. */
        uint64_t di = 0, xi = 0;
        char *pd = obj_params(el->oid, NULL, false), *px = obj_params(el->oid, NULL, true);
        int drc = pd ? snap_cdp_send(a, in->session, "DOM.describeNode", pd, &di, NULL) : -1;
        int xrc = px ? snap_cdp_send(a, in->session, "Accessibility.getPartialAXTree", px, &xi,
                                     NULL) : -1;
        free(pd);
        free(px);
        if (drc == 0)
            drc = cdp_wait(a->c, di, a->o.timeout_ms, &d, NULL);
        if (xrc == 0)
            xrc = cdp_wait(a->c, xi, a->o.timeout_ms, &x, NULL);
        const json_val *node = drc == 0 ? json_get(d.result, "node") : NULL;
        backend = (int)json_get_int(node, "backendNodeId", 0);
        const char *ln = json_get_str(node, "localName");
        if (ln && *ln)
            snprintf(tag, sizeof tag, "%s", ln);
        const json_val *ax = NULL;
        for (const json_val *v = xrc == 0 ? json_first(json_get(x.result, "nodes")) : NULL; v;
             v = json_next(v))
            if (json_get_int(v, "backendDOMNodeId", 0) == backend)
                ax = v;
        const char *ro = json_get_str(json_get(ax, "role"), "value");
        const json_val *nm = json_get(json_get(ax, "name"), "value");
        why = !backend ? "its node could not be described"
            : !ax || json_bool(json_get(ax, "ignored")) || !ro || !*ro
            ? "it is hidden from the accessibility tree, so it has no name the gate can judge"
            : nm && !json_is(nm, JSON_STRING) ? "its accessible name could not be read" : NULL;
        if (!why) {
            snprintf(el->role, sizeof el->role, "%s", ro);
            el->name = base_strdup(nm ? json_str(nm, NULL) : "");
            el->n = el->name ? snap_ref_for(a, tab, frame, loader, backend, el->role, el->name)
                             : 0;
            if (!el->n)
                why = "out of memory";
        }
    }
    cdp_reply_free(&rep);
    cdp_reply_free(&d);
    cdp_reply_free(&x);
    if (!why)
        return 0;
    object_release(a, in->session, el->oid);
    el->oid[0] = 0;
    free(el->name);
    el->name = NULL;
    uint32_t n = backend ? snap_ref_for(a, tab, frame, loader, backend, tag, NULL) : 0;
    char refs[64] = "";
    if (n)
        snprintf(refs, sizeof refs, " (%s [e%u])", tag, n);
    return snap_fail(r, SNAP_EDENIED, "%s: %s acts on another element%s, which cannot be "
                     "named for the gate: %s; nothing was done. Take a snapshot and act on "
                     "that element by its ref if it is the one you mean.", in->tool, what,
                     refs, why);
}

#define NAMES_MAX 256    /* name sources of an element the facts give, at
                            most (snap_js_facts_fn: more is refused) */

/* The gate's view of the element from its facts fv: role and name from
 * its ref, or from el (the element it acts on, when that is another);
 * names[] holds its name sources (borrowed from fv). */
static void target_fill(snap_agent *a, const snap_gate_in *in, const json_val *fv,
                        const acted_el *el, gate_target *tg, const char **names)
{
    const snap_ref *rf = in->ref_n && in->ref_n <= a->nrefs ? &a->refs[in->ref_n - 1] : NULL;
    tg->role = rf ? snap_ref_gate_role(a, rf) : "";
    tg->name = rf ? snap_ref_gate_name(rf) : "";
    if (el->n) {
        tg->via_role = tg->role;
        tg->via_name = tg->name;
        tg->role = el->role;
        tg->name = el->name;
        /* Whether it was ever secret is the element's own memory. */
        rf = &a->refs[el->n - 1];
    }
    tg->text = jstr(fv, "text");
    tg->row = jstr(fv, "row");
    tg->tag = jstr(fv, "tag");
    tg->input_type = jstr(fv, "type");
    tg->autocomplete = jstr(fv, "ac");
    tg->field = jstr(fv, "field");
    tg->form_action = jstr(fv, "fa");
    tg->form_method = jstr(fv, "fm");
    tg->form_submit = jstr(fv, "fs");
    tg->label = jstr(fv, "lbl");
    tg->submits = json_bool(json_get(fv, "sub")) || in->submit;
    tg->href = jstr(fv, "href");
    tg->download = json_bool(json_get(fv, "dl"));
    tg->dialog_text = jstr(fv, "dlg");
    tg->input_mode = jstr(fv, "im");
    int64_t ml = json_get_int(fv, "ml", 0);
    tg->max_length = ml > 0 && ml < 65536 ? (int)ml : 0;
    size_t n = 0;   /* names_check: no more than NAMES_MAX */
    for (const json_val *v = json_first(json_get(fv, "nm")); v && n < NAMES_MAX;
         v = json_next(v))
        if (json_str(v, NULL))
            names[n++] = json_str(v, NULL);
    if (el->shadow)
        names[n++] = el->shadow;   /* names has room for one more */
    tg->names = names;
    tg->nnames = n;
    /* A field that was a password or a one-time-code field stays one
     * for the gate, whatever the page changed it to since. */
    unsigned was = snap_secret_of_ref(a, rf);
    if ((was & SNAP_SECRET_PW) && strcmp(tg->input_type, "password") != 0)
        tg->input_type = "password";
    else if ((was & SNAP_SECRET_OTC) && !secret_field(tg))
        tg->autocomplete = "one-time-code";
}

#define SHADOW_MAX 65536  /* the text of an element's shadow roots read, at most */

/* Append s to b, its white space runs made one space. */
static void put_words(base_buf *b, const char *s)
{
    for (; s && *s && b->len <= SHADOW_MAX; s++) {
        bool sp = *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f';
        if (!sp)
            base_buf_putc(b, *s);
        else if (b->len && b->s[b->len - 1] != ' ')
            base_buf_putc(b, ' ');
    }
    if (b->len && b->s[b->len - 1] != ' ')
        base_buf_putc(b, ' ');
}

/* Where shadow_collect reads: the element's document (tab, frame,
 * loader), for the fields noted ever secret there (snap_secret_kind). */
typedef struct {
    const snap_agent *a;
    int tab;
    const char *frame, *loader;
} shadow_doc;

static bool has_ci(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; s && *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return true;
    return false;
}

/* The one secret-field rule (SNAP_JS_SECRET_KIND, page_js.h) on the
 * described node v: an <input> whose type holds "password", an element
 * whose autocomplete holds "password", "one-time-code" or "cc-"; or a
 * node noted ever secret in its document. */
static bool shadow_secret(const shadow_doc *d, const json_val *v)
{
    if (json_get_int(v, "nodeType", 0) != 1)
        return false;
    const char *ln = json_get_str(v, "localName");
    bool input = ln && strcasecmp(ln, "input") == 0;
    const json_val *at = json_get(v, "attributes");
    for (size_t i = 0; i + 1 < json_len(at); i += 2) {
        const char *k = json_str(json_at(at, i), NULL);
        const char *x = json_str(json_at(at, i + 1), NULL);
        if (!k || !x)
            continue;
        if (input && strcasecmp(k, "type") == 0 && has_ci(x, "password"))
            return true;
        if (strcasecmp(k, "autocomplete") == 0 &&
            (has_ci(x, "password") || has_ci(x, "one-time-code") || has_ci(x, "cc-")))
            return true;
    }
    int be = (int)json_get_int(v, "backendNodeId", 0);
    return d->a && be > 0 && snap_secret_kind(d->a, d->tab, d->frame, d->loader, be) != 0;
}

/* The text of every shadow root in the DOM node v, as DOM.describeNode
 * pierce gives it (open and closed roots: page scripts, cdpgate's too,
 * cannot see into a closed one; and the user-agent roots of form
 * controls, which hold an input's live value), appended to b: its text
 * nodes (not a style's or a script's), alt, title and aria-label. in: v
 * is in one. A secret field (shadow_secret), in a root or not, is
 * "[secret]" and nothing of it is read: its text, its attributes, its
 * user-agent root (session 14; a one-time code in a contenteditable of
 * a button's closed root reached the name the human is shown). */
static void shadow_collect(const shadow_doc *d, const json_val *v, bool in, base_buf *b)
{
    const char *nn = json_get_str(v, "nodeName");
    if (b->len > SHADOW_MAX || (nn && (strcasecmp(nn, "style") == 0 ||
                                       strcasecmp(nn, "script") == 0 ||
                                       strcasecmp(nn, "template") == 0)))
        return;
    if (shadow_secret(d, v)) {
        put_words(b, "[secret]");
        return;
    }
    if (in && json_get_int(v, "nodeType", 0) == 3)
        put_words(b, json_get_str(v, "nodeValue"));
    const json_val *at = in ? json_get(v, "attributes") : NULL;
    for (size_t i = 0; i + 1 < json_len(at); i += 2) {
        const char *k = json_str(json_at(at, i), NULL);
        if (k && (strcmp(k, "alt") == 0 || strcmp(k, "title") == 0 ||
                  strcmp(k, "aria-label") == 0))
            put_words(b, json_str(json_at(at, i + 1), NULL));
    }
    for (const json_val *c = json_first(json_get(v, "children")); c; c = json_next(c))
        shadow_collect(d, c, in, b);
    for (const json_val *c = json_first(json_get(v, "shadowRoots")); c; c = json_next(c))
        shadow_collect(d, c, true, b);
}

/* The text of the shadow roots in the element a click or a key acts on
 * (oid), for the gate as one more source of its name: a button labelled
 * "OK" whose shadow root shows "Pay invoice now" is a payment (red team
 * s12, G5). Fails closed: unread, or longer than SHADOW_MAX, nothing is
 * done. */
static int shadow_read(snap_agent *a, const snap_gate_in *in, const char *oid, acted_el *el,
                       snap_result *r)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "objectId");
    json_w_str(&w, oid);
    json_w_key(&w, "depth");
    json_w_int(&w, -1);
    json_w_key(&w, "pierce");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    cdp_reply rep = {0};
    int rc = call_taken(a, in->session, "DOM.describeNode", json_w_take(&w, NULL), &rep);
    const json_val *node = rc == 0 ? json_get(rep.result, "node") : NULL;
    base_buf b = {0};
    snap_tab *t = snap_tab_by_id(a, in->tab);
    snap_frame *f = !t ? NULL : in->frame && *in->frame ? snap_frame_find(t, in->frame)
                  : t->nframes ? &t->frames[0] : NULL;
    shadow_doc d = {a, t ? t->id : 0, f ? f->id : "", f ? f->loader : ""};
    if (node)
        shadow_collect(&d, node, false, &b);
    cdp_reply_free(&rep);
    const char *why = !node ? "its node could not be described"
                    : b.oom ? "out of memory"
                    : b.len > SHADOW_MAX ? "it is longer than 65,536 characters" : NULL;
    if (why) {
        base_buf_free(&b);
        return snap_fail(r, node && b.oom ? SNAP_ENOMEM : SNAP_EDENIED,
                         "%s: the gate cannot read the text of the element's shadow roots, "
                         "a source of its name: %s; nothing was done", in->tool, why);
    }
    if (b.len && b.s[b.len - 1] == ' ')
        b.s[--b.len] = 0;
    el->shadow = b.len ? base_buf_take(&b, NULL) : NULL;
    base_buf_free(&b);
    return 0;
}

/* Whether the gate can read every source of the element's name (facts
 * fv): fails closed when the page gave too many or too long ones for the
 * facts to carry them whole (nothing the classifier reads is cut: red team
 * s11, S9); then, when the facts say via, the element acted on (el). */
static int names_check(snap_agent *a, const snap_gate_in *in, const json_val *fv,
                       acted_el *el, snap_result *r)
{
    const char *x = jstr(fv, "nmx");
    size_t n = json_len(json_get(fv, "nm"));
    if (*x || n > NAMES_MAX)
        return snap_fail(r, SNAP_EDENIED, "%s: the element has %s to judge (more than %d "
                         "sources of its name, or one, its row or its dialog longer than "
                         "65,536 characters); the gate refuses what it cannot read whole: "
                         "nothing was done", in->tool,
                         strcmp(x, "long") == 0 ? "a name too long" : "too many names",
                         NAMES_MAX);
    int rc = json_bool(json_get(fv, "via")) ? acted_read(a, in, el, r) : 0;
    bool acts = strcmp(in->tool, "click") == 0 || strcmp(in->tool, "press") == 0;
    const char *oid = el->oid[0] ? el->oid : in->oid;
    if (rc == 0 && acts && oid && *oid && in->session && (rc = shadow_read(a, in, oid, el, r))) {
        object_release(a, in->session, el->oid);
        free(el->name);
        memset(el, 0, sizeof *el);
    }
    return rc;
}

/* A tool whose input may make the page start a download. */
static bool acts_on_page(const char *tool)
{
    static const char *const T[] = {"click", "type", "select", "press", "eval", "dialog"};
    for (size_t i = 0; tool && i < sizeof T / sizeof T[0]; i++)
        if (strcmp(T[i], tool) == 0)
            return true;
    return false;
}

/* A download the action's tab starts until it settled is its own (still
 * a gate decision: download.c) when its target implies it: the link it
 * clicks (its href, with a download attribute or answered as an
 * attachment), the form it submits (its action); any other is the page's,
 * asked of the gate as a page download (red team s11, S10); outside the
 * action, canceled. Only after the allow (R8): a refused click awaits no
 * download. */
static void dl_allowed(snap_agent *a, const snap_gate_in *in, const gate_target *tg)
{
    if (!in->tab || !(in->state_change || acts_on_page(in->tool)))
        return;
    snap_dl_act(a, in->tab);
    bool click = strcmp(in->tool, "click") == 0;
    if (tg && click && tg->href && *tg->href) {
        snap_dl_want(a, tg->href, false);
        if (tg->download)
            snap_dl_expect(a, in->tab);  /* the click starts a download */
    }
    if (tg && tg->submits && tg->form_action && *tg->form_action)
        snap_dl_want(a, tg->form_action, true);
}

/* A field whose value a trail never keeps (record.c; red team s14, R4-2):
 * a credential field (secret_field), a payment card's (autocomplete
 * "cc-...": no credential to the gate, but the snapshot withholds its
 * value), or one noted ever secret (the snapshot's one rule). */
static bool rec_secret(const snap_agent *a, const snap_gate_in *in, const gate_target *tg)
{
    const snap_ref *rf = in->ref_n && in->ref_n <= a->nrefs ? &a->refs[in->ref_n - 1] : NULL;
    return secret_field(tg) || has_ci(tg->autocomplete, "cc-") ||
           (rf && snap_secret_of_ref(a, rf) != 0);
}

/* Recording (issue 14, record.c): an allowed action's target as the gate
 * judged it, and the state it starts from, kept before anything is sent
 * (a clicked element may vanish). el_oid: the element acted on when it is
 * another than the node ("" none). */
static void rec_step(snap_agent *a, const snap_gate_in *in, const gate_decision *d,
                     const gate_request *q, snap_tab *t, const gate_target *tg,
                     const char *el_oid)
{
    if (d->decision != GATE_ALLOW || !a->rec)
        return;
    snap_rec_in ri = {in->tool, d->cls, q->egress, q->origin, q->url, t, in->frame,
                      q->authenticated, q->service, tg, tg && rec_secret(a, in, tg), NULL,
                      in->session, el_oid[0] ? el_oid : in->oid};
    snap_rec_capture(a, &ri);
}

/* The human confirmed this action just now: the data-carrying requests its
 * tab sends while it runs are covered by that answer (sink.c), and must
 * carry what the human was shown of its form (sink_body.c; out of memory,
 * nothing is kept and the cover passes no field it cannot compare). */
static void cover_begin(snap_agent *a, const snap_gated *g, const snap_tab *t,
                        const gate_request *q)
{
    if (g->d.decision != GATE_ALLOW || !g->d.confirmed || !t)
        return;
    a->covered_tab = t->id;
    a->covered_cls = g->d.cls;
    a->covered_until = 0;
    if (q->npresent) {
        snap_cover_keep(a, q->present, q->npresent);
    } else {
        /* A link confirmed without a read-back (not consequential): what
         * its address sends is what the human was shown all the same. */
        size_t n = 0;
        bool oom = false;
        gate_present *lp = link_fields(q->target, &n, &oom);
        snap_cover_keep(a, lp, n);
        a->cover_oom = a->cover_oom || oom;
        free(lp);
    }
    snap_cover_target(a, q->target);    /* where the human was shown it goes */
}

int snap_gate_ask(snap_agent *a, const snap_gate_in *in, snap_gated *g, snap_result *r)
{
    memset(g, 0, sizeof *g);
    g->blocked0 = a->blocked_told;   /* and those made while it idled */
    /* A confirmed action's cover ends when the agent asks for the next
     * action (see snap_gate_done). */
    a->covered_tab = 0;
    snap_cover_drop(a);
    snap_dl_act_end(a);          /* an earlier action's downloads are its own no more */
    snap_tab *t = in->tab ? snap_tab_by_id(a, in->tab) : NULL;
    char origin[256] = "";
    char *url = NULL;
    const char *frame_url = "";
    if (in->open_url) {
        snap_url_origin(in->open_url, origin, sizeof origin);
        char *red = snap_url_redact(in->open_url, false, NULL);
        url = red ? snap_scrub_url(a, red) : NULL;
        free(red);
    } else if (t && t->nframes) {
        snap_frame *f = in->frame && *in->frame ? snap_frame_find(t, in->frame) : NULL;
        if (!f)
            f = &t->frames[0];
        /* The origin as the gate keys it: an http(s) page's; anything else
         * (about:blank, data:, file:, an opaque origin) is none. */
        if (!f->url || snap_url_origin(f->url, origin, sizeof origin) != 0)
            origin[0] = 0;
        url = f->url ? strdup(f->url) : NULL;
        frame_url = url ? url : "";
    }
    json_doc *facts = NULL;         /* the element as the gate sees it */
    const json_val *fv = NULL;
    gate_target tg = {0};
    bool have_target = false;
    if (in->facts) {
        fv = in->facts;
    } else if (in->oid && *in->oid && in->session) {
        char *p = snap_gate_facts_params(in->oid);
        cdp_reply rep = {0};
        cdp_err e = {0};
        int rc = p ? snap_cdp_call(a, in->session, "Runtime.callFunctionOn", p,
                                   a->o.timeout_ms, &rep, &e) : CDP_ENOMEM;
        free(p);
        if (rc == 0 && !json_get(rep.result, "exceptionDetails")) {
            facts = rep.doc;
            rep.doc = NULL;
            fv = json_get(json_get(rep.result, "result"), "value");
        }
        cdp_reply_free(&rep);
        if (!fv) {
            free(url);
            json_doc_free(facts);
            return snap_fail(r, SNAP_EBROWSER, "%s: cannot read the element for the gate: %s",
                             in->tool, e.msg[0] ? e.msg : "no answer");
        }
    }
    acted_el el = {0};              /* what it really acts on, when another one */
    const char *names[NAMES_MAX + 1];
    int arc = fv ? names_check(a, in, fv, &el, r) : 0;
    if (arc) {
        free(url);
        json_doc_free(facts);
        return arc;
    }
    if (fv) {
        target_fill(a, in, fv, &el, &tg, names);
        tg.frame_url = frame_url;
        have_target = true;
    }
    gate_request q = {0};
    char dorigin[256];
    request_from(in, &q, dorigin, sizeof dorigin);
    q.origin = origin;
    q.url = url ? url : "";
    /* A tab of a context holding a service's session is judged as on the
     * service, whatever its page's origin (red team S2, S5). */
    q.service = in->open_url ? (snap_origin_service(a, origin) ? origin : NULL)
                             : snap_tab_service(a, t);
    q.authenticated = t && !in->open_url ? snap_tab_auth(a, t) || q.service
                                         : in->authenticated || q.service;
    q.target = have_target ? &tg : NULL;
    /* The text to type: shown to the human, checked in a recipient field. Never a
     * secret field's: withheld, it is still data for the courier rule (S7). */
    bool held = in->text && have_target && secret_field(&tg);
    q.text = held ? NULL : in->text;
    q.text_withheld = held && *in->text;
    /* A consequential action (a send, a payment): what its form holds is
     * read back for the gate, which checks the recipients in it (a
     * suggestion accepted with a key, or filled in by the page, is there
     * and nowhere else). Fail closed: unread, nothing is done. */
    json_doc *pdoc = NULL;
    gate_present *parr = NULL;
    if (have_target && gate_grant_get(a->gate) &&
        gate_classify(&q, NULL, NULL, 0) == GATE_CLASS_CONSEQUENTIAL) {
        char pw[200] = "the element is not available";
        snap_gate_in on = *in;    /* the form of the element acted on */
        if (el.oid[0])
            on.oid = el.oid;
        int prc = on.oid && *on.oid && in->session
                      ? present_read(a, &on, &q, &pdoc, &parr, pw, sizeof pw)
                      : SNAP_EBROWSER;
        if (prc) {
            object_release(a, in->session, el.oid);
            acted_free(&el);
            free(url);
            json_doc_free(facts);
            return snap_fail(r, prc, "%s: cannot read back the recipients its form holds for "
                             "the gate: %s; nothing was done", in->tool, pw);
        }
    }
    gate_check(a->gate, &q, &g->d);
    rec_step(a, in, &g->d, &q, t, have_target ? &tg : NULL, el.oid);
    cover_begin(a, g, t, &q);
    if (g->d.decision == GATE_ALLOW && el.oid[0]) {
        /* Kept for the change report (its states), until snap_gate_done. */
        snprintf(g->acted_oid, sizeof g->acted_oid, "%s", el.oid);
        snprintf(g->acted_session, sizeof g->acted_session, "%s", in->session);
    } else {
        object_release(a, in->session, el.oid);
    }
    acted_free(&el);             /* the decision holds its own copy */
    free(parr);
    json_doc_free(pdoc);
    free(url);
    /* A human answered: keep what they were shown of the element, so the
     * caller can check it is still so before anything is sent (and before
     * a double click's second click, whoever allowed it). */
    if (g->d.decision == GATE_ALLOW && (g->d.confirmed || in->dbl) && fv) {
        g->facts = json_write(fv, NULL);
        if (!g->facts) {
            a->covered_tab = 0;
            object_release(a, g->acted_session, g->acted_oid);
            g->acted_oid[0] = 0;
            json_doc_free(facts);
            return snap_fail(r, SNAP_ENOMEM, "%s: out of memory; nothing was done", in->tool);
        }
    }
    if (g->d.decision != GATE_ALLOW) {
        json_doc_free(facts);
        return refusal(a, &g->d, in->dbl ? "dblclick" : in->tool, r);
    }
    g->allowed = true;
    g->audit_outcome = g->d.pending;
    snap_permit_begin(a, in->permit ? in->permit : in->tool);
    dl_allowed(a, in, have_target ? &tg : NULL);   /* tg's strings are in facts */
    json_doc_free(facts);
    return 0;
}

/* The facts snap_js_facts_fn reads, named for "what changed" (never a value). */
static const struct {
    const char *key, *what;
} FACT_NAMES[] = {
    {"tag", "its tag"},
    {"type", "its input type"},
    {"ac", "its autocomplete attribute"},
    {"field", "its field name or label"},
    {"text", "its text"},
    {"fa", "the address its form submits to"},
    {"fm", "its form's method"},
    {"fs", "the button that submits its form (Enter: the default button)"},
    {"sub", "whether it submits a form"},
    {"row", "the row it is in"},
    {"dlg", "the dialog it is in"},
    {"im", "its inputmode"},
    {"ml", "its maxlength"},
    {"nm", "what names it (its label, title, alt, ...)"},
    {"nmx", "what names it (now too much to judge)"},
    {"via", "which element the action acts on"},
};

int snap_gate_facts_same(snap_agent *a, const snap_gated *g, const char *session,
                         const char *oid, char *why, size_t cap)
{
    snprintf(why, cap, "what the element is could not be read again");
    json_doc *was = g->facts ? json_parse(g->facts, strlen(g->facts), NULL, NULL) : NULL;
    if (!was)
        return SNAP_ENOMEM;
    char *p = snap_gate_facts_params(oid);
    cdp_reply rep = {0};
    cdp_err e = {0};
    int rc = p ? snap_cdp_call(a, session, "Runtime.callFunctionOn", p, a->o.timeout_ms, &rep,
                               &e) : CDP_ENOMEM;
    free(p);
    const json_val *now = rc == 0 && !json_get(rep.result, "exceptionDetails")
                              ? json_get(json_get(rep.result, "result"), "value") : NULL;
    int out = 0;
    if (!json_is(now, JSON_OBJECT)) {
        out = rc == CDP_ENOMEM ? SNAP_ENOMEM : rc && rc != CDP_EPROTOCOL ? SNAP_EBROWSER
                                                                         : SNAP_ESTALE;
        if (out == SNAP_ESTALE)
            snprintf(why, cap, "it is gone from the page");
    } else {
        const json_val *w = json_doc_root(was);
        for (size_t i = 0; i < sizeof FACT_NAMES / sizeof FACT_NAMES[0] && !out; i++) {
            char *x = json_get(w, FACT_NAMES[i].key) ? json_write(json_get(w, FACT_NAMES[i].key),
                                                                  NULL) : NULL;
            char *y = json_get(now, FACT_NAMES[i].key)
                          ? json_write(json_get(now, FACT_NAMES[i].key), NULL) : NULL;
            bool same = (!x && !y) || (x && y && strcmp(x, y) == 0);
            if ((json_get(w, FACT_NAMES[i].key) && !x) ||
                (json_get(now, FACT_NAMES[i].key) && !y)) {
                out = SNAP_ENOMEM;
                snprintf(why, cap, "out of memory comparing the element");
            } else if (!same) {
                out = SNAP_ESTALE;
                snprintf(why, cap, "%s changed", FACT_NAMES[i].what);
            }
            free(x);
            free(y);
        }
    }
    cdp_reply_free(&rep);
    json_doc_free(was);
    if (!out && why && cap)
        why[0] = 0;
    return out;
}

void snap_gate_done(snap_agent *a, snap_gated *g, int rc, snap_result *r)
{
    free(g->facts);
    g->facts = NULL;
    object_release(a, g->acted_session, g->acted_oid);
    g->acted_oid[0] = 0;
    if (!g->allowed)
        return;
    g->allowed = false;
    snap_permit_end(a);
    snap_dl_sync(a);             /* decide what began while it settled */
    snap_dl_act_end(a);
    /* The cover of a confirmed action outlives its result by GATE_COVER_MS
     * (or until the next action is asked for, if sooner): a form POST or
     * fetch the confirmed click started can reach the driver after the
     * click settled (a slow page, a busy machine), and it is the request
     * the human approved. Not longer: a page timer posting while the agent
     * idles is not what the human said yes to (issue 11, point 15b(c)). */
    if (g->d.confirmed && a->covered_tab && !a->covered_until)
        a->covered_until = base_now_ms() + GATE_COVER_MS;
    if (r) {
        /* Requests of the page refused at the network level meanwhile. */
        char buf[1200] = "";
        snap_blocked_describe(a, g->blocked0, 0, buf, sizeof buf);
        a->blocked_told = a->nblocked;
        base_buf tb = {0};
        snap_dl_tell(a, &tb);    /* downloads the page started on its own */
        if (tb.s && !tb.oom)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? "\n" : "",
                     tb.s);
        base_buf_free(&tb);
        if (buf[0]) {
            size_t n = r->text ? strlen(r->text) : 0;
            char *nt = realloc(r->text, n + strlen(buf) + 3);
            if (nt) {
                snprintf(nt + n, strlen(buf) + 3, "%s%s", n ? "\n" : "", buf);
                r->text = nt;
            }
        }
    }
    if (!g->audit_outcome)
        return;
    const char *outcome = rc == 0 ? "done"
                        : (rc == SNAP_EBROWSER || rc == SNAP_ETIMEOUT || rc == SNAP_EUNKNOWN)
                        ? "unknown" : "failed";
    gate_outcome(a->gate, &g->d, outcome, g->changed[0] ? g->changed
                                          : rc ? snap_strerror(rc) : "");
    if (strcmp(outcome, "unknown") == 0 && r) {
        const char *note = "\noutcome unknown: the action was sent but what followed could "
                           "not be established; it was not and will not be retried: check "
                           "the page before doing anything else.";
        size_t n = r->text ? strlen(r->text) : 0;
        char *nt = realloc(r->text, n + strlen(note) + 1);
        if (nt) {
            memcpy(nt + n, note, strlen(note) + 1);
            r->text = nt;
        }
    }
}
