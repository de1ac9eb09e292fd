/*
 * fuzz_url.c — libFuzzer target for the URL parser (url/url.h) and the
 * origins the other modules take from it (also replayed over the
 * checked-in corpus by tests/fuzz/replay.c in `make test`).
 *
 * The input, cut at its first NUL, is parsed. An origin, when there is
 * one, is printable ASCII without '@', '\' or whitespace, fits
 * URL_ORIGIN_MAX, and parses to itself (normalising is idempotent); the
 * parts' offsets lie within the input and the port within 0..65535. The
 * session key (snap_url_origin) is the same origin for http(s); the gate
 * without a grant allows exactly the http(s) URLs it can read; an http(s)
 * URL is within its own site (url_same_site); the WebSocket client, the
 * redactor (url_redact: idempotent) and the gate's reading of a GET URL's
 * and an operation value's words (gate_classify_get, gate_classify_body_op)
 * run on the same bytes.
 */
#include "gate/gate.h"
#include "snapshot/snap_int.h"
#include "url/url.h"
#include "ws/ws.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void check_origin(const char *o)
{
    size_t n = strlen(o);
    CHECK(n > 0 && n < URL_ORIGIN_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)o[i];
        CHECK(c > 0x20 && c < 0x7f && c != '@' && c != '\\');
    }
    char again[URL_ORIGIN_MAX];
    CHECK(url_origin(o, again, sizeof again, NULL) == 0);
    CHECK(strcmp(o, again) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    size_t len = strlen(s);

    url_parts u;
    const char *why = NULL;
    int rc = url_parse(s, &u, &why);
    CHECK(rc <= 0 && rc >= URL_ETOOLONG);
    CHECK(rc == 0 || (why && *why));
    if (rc == 0 || rc == URL_EOPAQUE)
        CHECK(u.rest <= u.rest_end && u.rest_end <= len);
    bool http = rc == 0 && (u.scheme == URL_SCHEME_HTTP || u.scheme == URL_SCHEME_HTTPS);
    if (rc == 0) {
        CHECK(u.port >= 0 && u.port <= 65535 && u.host[0]);
        CHECK(u.default_port == (u.port == url_default_port(u.scheme)));
    }

    char o[URL_ORIGIN_MAX];
    int orc = url_origin(s, o, sizeof o, NULL);
    if (orc == 0)
        check_origin(o);
    if (rc == 0)
        CHECK(orc == 0);

    char key[URL_ORIGIN_MAX];
    int krc = snap_url_origin(s, key, sizeof key);
    CHECK((krc == 0) == http);
    if (http)
        CHECK(strcmp(key, o) == 0);

    gate *gt = gate_new(NULL, NULL, NULL);
    if (gt) {
        bool allowed = gate_url_allowed(gt, s);
        if (strncmp(s, "about:blank", 11) != 0)
            CHECK(allowed == (http && !u.host_pct));
        gate_free(gt);
    }

    /* The session's cookie scope (url_same_site): an http(s) URL's host is
     * within its own site; a URL and a service either way parse without
     * reading past the input. */
    if (http && u.host[strspn(u.host, ".")])
        CHECK(url_same_site(s, s));
    (void)url_same_site("http://bank.test", s);
    (void)url_same_site(s, "http://www.bank.test/x");

    ws_url w;
    if (ws_url_parse(s, &w, NULL, 0) == 0)
        CHECK(w.host[0] && w.port > 0 && w.port <= 65535 && w.path[0] == '/');

    /* The gate's reading of a GET URL's words (gate_classify_get: phrases,
     * acts named noun first or joined, query keys and values): a kind in
     * range, a why exactly when it is one, never past the input. */
    char gw[200];
    int k = gate_classify_get(s, size & 1, gw, sizeof gw);
    CHECK(k >= GATE_CONSEQ_NONE && k <= GATE_CONSEQ_PRODUCTION);
    CHECK((k != GATE_CONSEQ_NONE) == (gw[0] != 0));
    /* With the class (red team s17, R7-7): consequential exactly with a
     * kind, auth_change and read with none. */
    int kk = -1, c = gate_classify_get_class(s, size & 1, &kk, gw, sizeof gw);
    CHECK(c == GATE_CLASS_READ || c == GATE_CLASS_AUTH_CHANGE || c == GATE_CLASS_CONSEQUENTIAL);
    CHECK((c == GATE_CLASS_CONSEQUENTIAL) == (kk != GATE_CONSEQ_NONE));
    CHECK(c != GATE_CLASS_CONSEQUENTIAL || kk == k);
    CHECK((c != GATE_CLASS_READ) == (gw[0] != 0));
    k = gate_classify_body_op((size & 2) ? "action" : "op", s, gw, sizeof gw);
    CHECK(k >= GATE_CONSEQ_NONE && k <= GATE_CONSEQ_PRODUCTION);

    free(snap_url_redact(s, size & 1, NULL));
    /* The one redaction rule with every flag: nothing read past the input;
     * applying it again changes nothing (a redacted value stays hidden). */
    char *r = url_redact(s, (unsigned)size & 3u, NULL);
    if (r) {
        char *r2 = url_redact(r, (unsigned)size & 3u, NULL);
        CHECK(!r2 || strcmp(r, r2) == 0);
        free(r2);
    }
    free(r);
    free(s);
    return 0;
}
