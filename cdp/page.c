/*
 * page.c — one page target: open (create, or adopt an existing page where
 * Target.createTarget is refused), navigate and wait for load, evaluate.
 */
#include "cdp/cdp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cdp_page {
    cdp_browser *b;
    cdp_conn *c;
    char session[128];
    char target[128];
    char frame[128];        /* main frame id (= target id for pages) */
    bool created;           /* we created the target, so we close it */
};

const char *cdp_page_session(const cdp_page *p) { return p->session; }
const char *cdp_page_target(const cdp_page *p) { return p->target; }
bool cdp_page_adopted(const cdp_page *p) { return !p->created; }

/* Build {"key":"value"...} params with the writer; returns new string. */
static char *params_str(const char *k1, const char *v1, const char *k2, const char *v2)
{
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, k1);
    json_w_str(&w, v1);
    if (k2) {
        json_w_key(&w, k2);
        json_w_str(&w, v2);
    }
    json_w_obj_end(&w);
    return json_w_take(&w, NULL);
}

/* Target.getTargets and pick the first page target. */
static int adopt_existing(cdp_page *p, int timeout_ms, const char *why, cdp_err *err)
{
    cdp_reply r;
    int rc = cdp_call(p->c, NULL, "Target.getTargets", NULL, timeout_ms, &r, err);
    if (rc)
        return rc;
    const json_val *infos = json_get(r.result, "targetInfos");
    for (const json_val *t = json_first(infos); t; t = json_next(t)) {
        const char *type = json_get_str(t, "type");
        const char *id = json_get_str(t, "targetId");
        if (type && id && strcmp(type, "page") == 0 && strlen(id) < sizeof p->target) {
            snprintf(p->target, sizeof p->target, "%s", id);
            cdp_reply_free(&r);
            return 0;
        }
    }
    cdp_reply_free(&r);
    return cdp_seterr(err, CDP_EPROTOCOL, "the browser refused a new page (%s) and has no "
                      "existing page target to work in", why);
}

cdp_page *cdp_page_open(cdp_browser *b, int timeout_ms, cdp_err *err)
{
    cdp_page *p = calloc(1, sizeof *p);
    if (!p) {
        cdp_seterr(err, CDP_ENOMEM, "out of memory");
        return NULL;
    }
    p->b = b;
    p->c = cdp_browser_conn(b);
    cdp_reply r;
    cdp_err e2;
    int rc = cdp_call(p->c, NULL, "Target.createTarget", "{\"url\":\"about:blank\"}",
                      timeout_ms, &r, &e2);
    if (rc == 0) {
        const char *id = json_get_str(r.result, "targetId");
        if (!id || strlen(id) >= sizeof p->target) {
            cdp_reply_free(&r);
            cdp_seterr(err, CDP_EBADMSG, "Target.createTarget: reply without a targetId");
            goto fail;
        }
        snprintf(p->target, sizeof p->target, "%s", id);
        p->created = true;
        cdp_reply_free(&r);
    } else if (rc == CDP_EPROTOCOL) {
        /* Electron and some embedders refuse new targets: work in theirs. */
        if (adopt_existing(p, timeout_ms, e2.msg, err))
            goto fail;
    } else {
        if (err)
            *err = e2;
        goto fail;
    }
    snprintf(p->frame, sizeof p->frame, "%s", p->target);

    char *params = params_str("targetId", p->target, NULL, NULL);
    if (!params) {
        cdp_seterr(err, CDP_ENOMEM, "out of memory");
        goto fail;
    }
    /* flatten: the session's messages travel on this connection. */
    size_t pl = strlen(params);
    char *fp = realloc(params, pl + 16);
    if (!fp) {
        free(params);
        cdp_seterr(err, CDP_ENOMEM, "out of memory");
        goto fail;
    }
    memcpy(fp + pl - 1, ",\"flatten\":true}", 17);
    rc = cdp_call(p->c, NULL, "Target.attachToTarget", fp, timeout_ms, &r, err);
    free(fp);
    if (rc)
        goto fail;
    const char *sid = json_get_str(r.result, "sessionId");
    if (!sid || strlen(sid) >= sizeof p->session) {
        cdp_reply_free(&r);
        cdp_seterr(err, CDP_EBADMSG, "Target.attachToTarget: reply without a sessionId");
        goto fail;
    }
    snprintf(p->session, sizeof p->session, "%s", sid);
    cdp_reply_free(&r);

    /* Pipeline the enables: one round trip instead of two. */
    uint64_t id1, id2;
    if ((rc = cdp_send(p->c, p->session, "Page.enable", NULL, &id1, err)) ||
        (rc = cdp_send(p->c, p->session, "Page.setLifecycleEventsEnabled",
                       "{\"enabled\":true}", &id2, err)) ||
        (rc = cdp_wait(p->c, id1, timeout_ms, NULL, err)) ||
        (rc = cdp_wait(p->c, id2, timeout_ms, NULL, err)))
        goto fail;
    return p;
fail:
    cdp_page_free(p);
    return NULL;
}

void cdp_page_free(cdp_page *p)
{
    if (!p)
        return;
    if (!cdp_conn_dead(p->c)) {
        if (p->created && *p->target) {
            char *params = params_str("targetId", p->target, NULL, NULL);
            if (params)
                cdp_call(p->c, NULL, "Target.closeTarget", params, 5000, NULL, NULL);
            free(params);
        } else if (*p->session) {
            char *params = params_str("sessionId", p->session, NULL, NULL);
            if (params)
                cdp_call(p->c, NULL, "Target.detachFromTarget", params, 5000, NULL, NULL);
            free(params);
        }
    }
    free(p);
}

typedef struct {
    const char *frame;
} load_match;

static bool is_main_frame_load(void *ud, const json_val *params)
{
    load_match *m = ud;
    const char *name = json_get_str(params, "name");
    const char *frame = json_get_str(params, "frameId");
    return name && frame && strcmp(name, "load") == 0 && strcmp(frame, m->frame) == 0;
}

int cdp_page_navigate(cdp_page *p, const char *url, int timeout_ms, cdp_err *err)
{
    int64_t dl = cdp_deadline(timeout_ms, 30000);
    char *params = params_str("url", url, NULL, NULL);
    if (!params)
        return cdp_seterr(err, CDP_ENOMEM, "out of memory");
    uint64_t since = cdp_event_seq(p->c);
    cdp_reply r;
    int rc = cdp_call(p->c, p->session, "Page.navigate", params, cdp_remaining(dl), &r, err);
    free(params);
    if (rc)
        return rc;
    const char *etext = json_get_str(r.result, "errorText");
    const char *loader = json_get_str(r.result, "loaderId");
    const char *frame = json_get_str(r.result, "frameId");
    if (etext && *etext) {
        cdp_seterr(err, CDP_ENAVIGATE, "navigation to %s failed: %s", url, etext);
        cdp_reply_free(&r);
        return CDP_ENAVIGATE;
    }
    if (frame && strlen(frame) < sizeof p->frame)
        snprintf(p->frame, sizeof p->frame, "%s", frame);
    bool same_document = !loader || !*loader;
    cdp_reply_free(&r);
    if (same_document)
        return 0;
    load_match m = {p->frame};
    cdp_reply ev;
    rc = cdp_wait_event(p->c, since, p->session, "Page.lifecycleEvent", is_main_frame_load,
                        &m, cdp_remaining(dl) ? cdp_remaining(dl) : 1, &ev, NULL, err);
    if (rc == CDP_ETIMEOUT)
        return cdp_seterr(err, CDP_ETIMEOUT, "navigation to %s: no load event within "
                          "the deadline", url);
    cdp_reply_free(&ev);
    return rc;
}

int cdp_page_eval(cdp_page *p, const char *expr, int timeout_ms, char **json_out,
                  cdp_err *err)
{
    *json_out = NULL;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "expression");
    json_w_str(&w, expr);
    json_w_key(&w, "returnByValue");
    json_w_bool(&w, true);
    json_w_key(&w, "awaitPromise");
    json_w_bool(&w, true);
    json_w_obj_end(&w);
    char *params = json_w_take(&w, NULL);
    if (!params)
        return cdp_seterr(err, CDP_EINVAL, "expression is not valid UTF-8 or out of memory");
    cdp_reply r;
    int rc = cdp_call(p->c, p->session, "Runtime.evaluate", params, timeout_ms, &r, err);
    free(params);
    if (rc)
        return rc;
    const json_val *ex = json_get(r.result, "exceptionDetails");
    if (ex) {
        const char *desc = json_get_str(json_get(ex, "exception"), "description");
        const char *text = json_get_str(ex, "text");
        const char *val = json_str(json_get(json_get(ex, "exception"), "value"), NULL);
        cdp_seterr(err, CDP_EEVAL, "%s", desc ? desc : val ? val : text ? text : "exception");
        cdp_reply_free(&r);
        return CDP_EEVAL;
    }
    const json_val *ro = json_get(r.result, "result");
    const json_val *v = json_get(ro, "value");
    const char *unser = json_get_str(ro, "unserializableValue");
    const char *type = json_get_str(ro, "type");
    json_w_init(&w);
    if (v)
        json_w_val(&w, v);
    else if (unser)
        json_w_str(&w, unser);
    else if (type && strcmp(type, "undefined") == 0)
        json_w_null(&w);
    else
        json_w_str(&w, json_get_str(ro, "description"));
    cdp_reply_free(&r);
    size_t len;
    *json_out = json_w_take(&w, &len);
    if (!*json_out)
        return cdp_seterr(err, CDP_ENOMEM, "cannot serialise the result");
    return 0;
}
