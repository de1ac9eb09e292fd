/*
 * fuzz_grant.c — libFuzzer target for the gate's grant parser and
 * classifier (also replayed over the checked-in corpus by
 * tests/fuzz/replay.c in `make test`).
 *
 * Grant: parse the input. On error the message must be non-empty, start
 * with "grant: " and be valid UTF-8, and nothing is returned. When it
 * parses, a gate made from it (audit forced to /dev/null, so the input
 * never names a file that gets created) must hold the same grant: packing
 * is idempotent (normalised entries normalise to themselves). Every exact
 * origin is allowed, every identity is found for its service, and a few
 * decisions run with the grant's own strings as targets.
 *
 * Classifier: the same bytes, cut into target fields at NUL bytes, are
 * classified and decided without a grant; reasons and summaries must be
 * valid UTF-8 and NUL-terminated within their buffers.
 */
#include "gate/gate.h"
#include "json/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_utf8(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    CHECK(n < cap);
    CHECK(json_utf8_valid((const uint8_t *)s, n));
}

static void check_same(const gate_grant *a, const gate_grant *b)
{
    CHECK(same(a->task, b->task) && same(a->principal, b->principal));
    CHECK(a->ntools == b->ntools && a->norigins == b->norigins);
    CHECK(a->nrecipients == b->nrecipients && a->nfile_scopes == b->nfile_scopes);
    CHECK(a->nidentities == b->nidentities && a->nbound == b->nbound);
    CHECK(a->egress == b->egress && a->expires == b->expires);
    for (size_t i = 0; i < a->ntools; i++)
        CHECK(same(a->tools[i], b->tools[i]));
    for (size_t i = 0; i < a->norigins; i++)
        CHECK(same(a->origins[i], b->origins[i]));
    for (size_t i = 0; i < a->nrecipients; i++)
        CHECK(same(a->recipients[i], b->recipients[i]));
    for (size_t i = 0; i < a->nfile_scopes; i++)
        CHECK(same(a->file_scopes[i], b->file_scopes[i]));
    for (size_t i = 0; i < a->nidentities; i++)
        CHECK(same(a->identities[i].service, b->identities[i].service) &&
              same(a->identities[i].identity, b->identities[i].identity));
    for (size_t i = 0; i < a->nbound; i++)
        CHECK(same(a->bound[i].origin, b->bound[i].origin) &&
              same(a->bound[i].tool, b->bound[i].tool) &&
              same(a->bound[i].name, b->bound[i].name) && same(a->bound[i].row, b->bound[i].row));
}

static void decide_some(gate *gt, const char *origin, const char *name, bool auth)
{
    gate_target t = {.role = "button", .name = name, .text = name, .row = name};
    gate_request r = {.tool = "click", .origin = origin, .url = origin, .authenticated = auth,
                      .state_change = true, .target = &t, .dialog = name};
    gate_decision d;
    gate_decide(gt, &r, &d);
    CHECK(d.decision >= GATE_ALLOW && d.decision <= GATE_STALE);
    check_utf8(d.reason, sizeof d.reason);
    check_utf8(d.target, sizeof d.target);
}

static void check_grant(const gate_grant *g)
{
    gate_opts o = {.audit = "/dev/null"};
    gate_err e;
    gate *gt = gate_new(g, &o, &e);
    if (!gt)
        return;                         /* out of memory only */
    const gate_grant *in = gate_grant_get(gt);
    check_same(g, in);
    for (size_t i = 0; i < g->norigins; i++) {
        if (g->origins[i][0] != '*')
            CHECK(gate_origin_allowed(gt, g->origins[i]));
        decide_some(gt, g->origins[i], g->task, i & 1);
    }
    for (size_t i = 0; i < g->nidentities; i++) {
        const char *id = gate_identity_for(gt, g->identities[i].service);
        CHECK(id && strcmp(id, g->identities[i].identity) == 0);
    }
    for (size_t i = 0; i < g->nbound; i++)
        decide_some(gt, g->bound[i].origin, g->bound[i].name, true);
    gate_free(gt);
}

static void check_classify(const uint8_t *data, size_t size)
{
    /* Up to 6 NUL-separated fields from a private NUL-terminated copy. */
    char *s = malloc(size + 1);
    if (!s)
        return;
    memcpy(s, data, size);
    s[size] = 0;
    const char *f[6] = {"", "", "", "", "", ""};
    size_t k = 0;
    for (size_t i = 0; k < 6 && i <= size; k++) {
        f[k] = s + i;
        i += strlen(s + i) + 1;
    }
    gate_target t = {.role = f[0], .name = f[1], .text = f[2], .row = f[3], .field = f[4],
                     .form_action = f[5], .form_method = "post", .submits = size & 1,
                     .frame_url = f[5], .autocomplete = f[4]};
    static const char *const TOOLS[] = {"click", "type", "press", "dialog", "open", "select"};
    gate_request r = {.tool = TOOLS[size % 6], .origin = "https://a.test", .url = f[5],
                      .authenticated = size & 2, .state_change = size & 4, .target = &t,
                      .dialog = f[2], .recipient = (size & 8) ? f[3] : NULL,
                      .file = (size & 16) ? f[4] : NULL};
    char why[128];
    int kind = -1;
    int cls = gate_classify(&r, &kind, why, sizeof why);
    CHECK(cls >= GATE_CLASS_READ && cls <= GATE_CLASS_CREDENTIAL);
    CHECK(kind >= GATE_CONSEQ_NONE && kind <= GATE_CONSEQ_PRODUCTION);
    CHECK((kind != GATE_CONSEQ_NONE) == (cls == GATE_CLASS_CONSEQUENTIAL));
    check_utf8(why, sizeof why);
    gate *gt = gate_new(NULL, NULL, NULL);
    if (gt) {
        gate_decision d;
        gate_decide(gt, &r, &d);
        check_utf8(d.reason, sizeof d.reason);
        check_utf8(d.target, sizeof d.target);
        CHECK(d.cls == cls && d.conseq == kind);
        char reason[64];
        gate_check_request(gt, f[0], f[1], size & 1, size & 2, 0, reason, sizeof reason);
        check_utf8(reason, sizeof reason);
        gate_url_allowed(gt, f[1]);
        gate_free(gt);
    }
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gate_grant *g = (gate_grant *)1;
    gate_err e;
    memset(&e, 0, sizeof e);
    int rc = gate_grant_parse((const char *)data, size, &g, &e);
    if (rc) {
        CHECK(g == NULL);
        CHECK(rc == GATE_EINVAL || rc == GATE_ENOMEM);
        CHECK(strncmp(e.msg, "grant: ", 7) == 0);
        check_utf8(e.msg, sizeof e.msg);
    } else {
        CHECK(g != NULL && g->task && *g->task);
        check_grant(g);
        gate_grant_free(g);
    }
    check_classify(data, size);
    return 0;
}
