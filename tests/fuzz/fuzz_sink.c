/*
 * fuzz_sink.c — libFuzzer target for the sink's reader of what a page
 * sends (snapshot/sink_body.c: snap_cover_check, snap_sent_recipients,
 * snap_sent_values),
 * also replayed over the checked-in corpus by tests/fuzz/replay.c in
 * `make test`.
 *
 * Input: line 1 the Content-Type (empty: none), line 2 the request URL,
 * line 3 the Content-Encoding (empty: none), the rest the body (given to
 * the sink as postDataEntries, as the browser does). The readers run under
 * a cover (a read-back of To and Amount kept) and outside one, against a
 * grant naming one recipient. Each returns 0 or -1, a refusal has a
 * reason, and the reason is valid UTF-8 (the page's bytes reach it only
 * escaped).
 */
#include "base/base.h"
#include "gate/gate.h"
#include "json/json.h"
#include "snapshot/snap_int.h"
#include "url/url.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static const char GRANT[] = "{\"task\":\"t\",\"tools\":[\"click\"],\"origins\":"
                            "[\"http://bank.test\"],\"recipients\":[\"bob@partner.test\"]}";

/* Line i of data (cut at '\n'), and where the next begins. */
static char *line(const uint8_t *data, size_t size, size_t *off)
{
    size_t b = *off, e = b;
    while (e < size && data[e] != '\n')
        e++;
    char *s = malloc(e - b + 1);
    if (s) {
        memcpy(s, data + b, e - b);
        s[e - b] = 0;
    }
    *off = e < size ? e + 1 : e;
    return s;
}

static json_doc *request(const char *ct, const char *url, const char *ce, const uint8_t *body,
                         size_t bl)
{
    char *b64 = malloc(BASE_B64_ENCLEN(bl) + 1);
    if (!b64)
        return NULL;
    size_t n = base_b64_encode(body, bl, b64);
    b64[n] = 0;
    json_w w;
    json_w_init(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "url");
    json_w_str(&w, url);
    json_w_key(&w, "method");
    json_w_str(&w, "POST");
    json_w_key(&w, "headers");
    json_w_obj_begin(&w);
    if (*ct) {
        json_w_key(&w, "Content-Type");
        json_w_str(&w, ct);
    }
    if (*ce) {
        json_w_key(&w, "Content-Encoding");
        json_w_str(&w, ce);
    }
    json_w_obj_end(&w);
    json_w_key(&w, "hasPostData");
    json_w_bool(&w, true);
    json_w_key(&w, "postDataEntries");
    json_w_arr_begin(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "bytes");
    json_w_str(&w, b64);
    json_w_obj_end(&w);
    json_w_arr_end(&w);
    json_w_obj_end(&w);
    free(b64);
    size_t jl = 0;
    char *j = json_w_take(&w, &jl);
    json_doc *d = j ? json_parse(j, jl, NULL, NULL) : NULL;
    free(j);
    return d;
}

static void run(snap_agent *a, const json_val *req, const char *url, bool cover)
{
    char why[400] = "";
    int rc = cover ? snap_cover_check(a, req, url, why, sizeof why)
                   : snap_sent_recipients(a, req, url, why, sizeof why);
    CHECK(rc == 0 || rc == -1);
    CHECK(rc == 0 || why[0]);
    CHECK(json_utf8_valid((const uint8_t *)why, strlen(why)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = 0;
    char *ct = line(data, size, &off), *url = line(data, size, &off);
    char *ce = line(data, size, &off);
    gate_grant *g = NULL;
    gate_opts o = {.audit = "/dev/null"};
    gate *gt = NULL;
    snap_agent *a = calloc(1, sizeof *a);
    json_doc *d = ct && url && ce ? request(ct, url, ce, data + off, size - off) : NULL;
    if (d && a && gate_grant_parse(GRANT, sizeof GRANT - 1, &g, NULL) == 0 &&
        (gt = gate_new(g, &o, NULL)) != NULL) {
        a->gate = gt;
        gate_present p[3] = {{.field = "to", .value = "bob@partner.test"},
                             {.field = "amount", .value = "50"},
                             {.chip = true, .value = "bob@partner.test"}};
        snap_cover_keep(a, p, 3);
        a->covered_cls = GATE_CLASS_AUTH_CHANGE;
        run(a, json_doc_root(d), url, true);
        a->covered_cls = GATE_CLASS_CONSEQUENTIAL;
        run(a, json_doc_root(d), url, true);
        run(a, json_doc_root(d), url, false);
        /* What a human is shown of it: recipients and amounts only, each
         * pair "name 0x1F value 0x1E", never a secret-named field. */
        char *v = snap_sent_values(a, json_doc_root(d), url);
        if (v) {
            size_t n = strlen(v);
            CHECK(!n || v[n - 1] == '\x1e');
            for (char *q = v; *q;) {
                char *us = strchr(q, '\x1f'), *rs = strchr(q, '\x1e');
                CHECK(us && rs && us < rs);
                *us = 0;
                CHECK(!url_secret_name(q, strlen(q), true));
                q = rs + 1;
            }
        }
        free(v);
        snap_cover_drop(a);
    }
    gate_free(gt);
    gate_grant_free(g);
    json_doc_free(d);
    free(a);
    free(ct);
    free(url);
    free(ce);
    return 0;
}
