/*
 * test_url.c — the URL parser (url/url.h) and the origins every module
 * takes from it, held against the browser.
 *
 * differential_browser runs a corpus of tricky URLs (userinfo, '\', tabs
 * and newlines, percent-encoded and IDN hosts, IPv4 in decimal, hex, octal
 * and short forms, IPv6, trailing dots, default ports, blob:, data:,
 * about:, invalid ones) through headless Chromium's `new URL(x).origin`
 * and through cdpgate: url_origin, the session key (snap_url_origin), the
 * gate (gate_url_allowed under no grant and under a grant of exactly
 * Chromium's origin) and the WebSocket client's ws_url_parse. Each must
 * agree with Chromium exactly or refuse; a refusal of an input Chromium
 * reads as an http(s) origin is allowed only for a non-ASCII (IDN) host or
 * a host character Chromium rewrites instead of refusing. Refusals are
 * counted and listed.
 *
 * The other tests need no browser: a table of inputs with the origins
 * Chromium 156 gives (or the refusal), the parts url_parse fills, and
 * limits.
 */
#include "cdp/cdp.h"
#include "gate/gate.h"
#include "json/json.h"
#include "snapshot/snapshot.h"
#include "tests/fixture.h"
#include "tests/harness.h"
#include "url/url.h"
#include "ws/ws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The corpus: every entry is valid UTF-8 (so that it can travel to the
 * browser as a JSON string). */
static const char *const CORPUS[] = {
    /* plain, case, default ports */
    "https://a.test", "https://a.test/", "HTTPS://A.TEST:443/x", "http://a.test:80/",
    "http://a.test:8080/p?q#f", "https://a.test:80/", "http://a.test:443", "ws://a.test:80/x",
    "wss://a.test:443/x", "wss://a.test:444/x", "ftp://a.test:21/", "http://a.test:00080/",
    "http://a.test:0/", "http://a.test:65535/", "http://a.test:65536/", "http://a.test:/",
    "http://a.test:99999999999999999999/", "http://a.test:8o/", "http://a.test: 80/",
    "http://a.test:-1/", "http://a.test:+80/", "http://a.test:0x50/",
    /* userinfo */
    "https://user:pw@a.test/", "https://a.test@evil.test/", "https://evil.test@a.test/",
    "https://u@v@a.test/", "https://a.test:443@evil.test/", "http://@a.test/",
    "http://user@/", "http://:@a.test/", "https://a.test%40evil.test/",
    "https://u:p:q@a.test:81/", "https://user@a.test@/",
    /* backslashes, missing slashes */
    "https://evil.test\\@a.test/", "https:\\\\a.test\\x", "https:\\/a.test/", "https:a.test/",
    "https:/a.test/", "https:///a.test/", "https:////a.test/", "http:\\\\\\\\a.test",
    "https://a.test\\b.test/", "ws:\\\\a.test:9222\\devtools",
    /* the authority ends */
    "https://evil.test#@a.test/", "https://evil.test?@a.test/", "https://a.test#", "https://a.test?",
    "https://evil.test/@a.test/", "https://a.test;b.test/",
    /* tabs, newlines, surrounding controls and spaces */
    "https://a\t.test/", "https://a\n.test/", "https://a\r\n.test/", "\thttps://a.test/",
    "  https://a.test/  ", "\x01https://a.test/\x1f", "ht\ttps://a.test/", "https:\n//a.test/",
    "https://a.test:8\t0/", "https://evil.test\t@a.test/", "https://a .test/",
    "https://a.test\x7f/", "https://a\x01.test/", " \x0b https://a.test", "https://a.test/\x01",
    /* percent-encoded hosts */
    "http://%61.test/", "http://a%2etest/", "http://a%2Etest/", "http://%2e/", "http://a%2fb.test/",
    "http://a%40b.test/", "http://a%3ab.test/", "http://a%25b.test/", "http://a%b.test/",
    "http://a%zzb.test/", "http://a%00b.test/", "http://a%20b.test/", "http://%31%32%37.1/",
    "http://a%2Ab.test/", "http://%41.TEST/",
    /* host characters */
    "http://a*b.test/", "http://a_b.test/", "http://-a.test/", "http://a-.test/", "http://a!b.test/",
    "http://a$b.test/", "http://a{b.test/", "http://a|b.test/", "http://a^b.test/",
    "http://a<b.test/", "http://a\"b.test/", "http://a`b.test/", "http://a~b.test/",
    "http://a=b.test/", "http://a[b.test/",
    /* IDN */
    "http://xn--nxasmq6b.test/", "http://XN--NXASMQ6B.test/", "http://xn--a.test/", "http://xn--/",
    "http://caf\xc3\xa9.test/", "http://CAF\xc3\x89.test/", "http://caf%C3%A9.test/",
    "https://a.test\xe3\x80\x82" "b/", "http://\xef\xbc\xa1.test/", "http://\xe2\x84\xaa.test/",
    "http://a\xc2\xad" "b.test/", "http://\xf0\x9f\x98\x80.test/",
    /* IPv4 */
    "http://127.0.0.1/", "http://127.1/", "http://127.0.1/", "http://2130706433/",
    "http://0x7f000001/", "http://0x7F.1/", "http://0177.0.0.1/", "http://0177.1/",
    "http://017700000001/", "http://0x7f.0.0.0x1/", "http://4294967295/", "http://4294967296/",
    "http://0xffffffff/", "http://0x100000000/", "http://1.2.3.4.5/", "http://1.2.3.256/",
    "http://1.2.65536/", "http://1.2.65535/", "http://256.1/", "http://1.16777216/",
    "http://1.2.3.4./", "http://1.2.3.4../", "http://1./", "http://0x7f.1./", "http://a.0./",
    "http://0x./", "http://.0./", "http://0x/", "http://0X/", "http://1.2.3.0x/",
    "http://09/", "http://08.1/", "http://0x1g/", "http://a.1/", "http://1.a/", "http://1.0x/",
    "http://0/", "http://00000000000000000000000000000001/", "http://0x0000000000000000000001/",
    "http://1.2.3.09/", "http://.1/", "http://1..2/", "http://%30x7f.1/", "http://127.1:80/",
    "http://999999999999999999999999/", "http://1.2.3.4.test/", "http://1.test.4/",
    /* IPv6 */
    "http://[::1]/", "http://[0:0:0:0:0:0:0:1]/", "http://[::FFFF:1.2.3.4]/",
    "http://[1:0:0:2:0:0:0:3]/", "http://[1:0:0:0:2:0:0:3]/", "http://[::]/",
    "http://[1:2:3:4:5:6:7:8]/", "http://[1:2:3:4:5:6:7:8:9]/", "http://[1::2::3]/",
    "http://[::1.2.3.4]/", "http://[::1.2.3]/", "http://[::1.2.3.4.5]/", "http://[::01.2.3.4]/",
    "http://[::1.2.3.256]/", "http://[::ffff:0:0]/", "http://[0::]/", "http://[::1]:8080/",
    "http://[::1]:80/", "http://[::1/", "http://[::1]x/", "http://::1/", "http://[:1]/",
    "http://[1:]/", "http://[12345::]/", "http://[%3A%3A1]/", "http://[g::]/",
    "http://[::1%25eth0]/", "http://[fe80::1%eth0]/", "http://[0:0:0:0:0:0:1.2.3.4]/",
    "http://[1:2:3:4:5:6:1.2.3.4]/", "http://[1:2:3:4:5:6:7:1.2.3.4]/", "http://[1::]/",
    "http://[1:0::0:1]/", "http://[ab:CD::Ef]/",
    /* trailing dots, empty labels */
    "http://a.test./", "http://A.TEST./", "http://a.test../", "http://a..b/", "http://./",
    "http://../", "http://.a.test/",
    /* blob:, data:, about:, file:, others */
    "blob:https://a.test/uuid", "blob:https://a.test:443/uuid", "blob:http://a.test:8080/x",
    "blob:https://evil.test\\@a.test/", "blob:https://u@a.test/", "blob:http://a.test?x",
    "blob: https://a.test/", "blob:blob:https://a.test/", "blob:ws://a.test/x",
    "blob:file:///x", "blob:data:text/html,x", "blob:null/uuid", "blob:", "blob://a.test/",
    "blob:https://0x7f.1/", "BLOB:https://a.test/", "blob:\thttps://a.test/",
    "data:text/html,hi", "about:blank", "about:srcdoc", "javascript:alert(1)",
    "file:///etc/passwd", "file://a.test/x", "mailto:a@a.test", "chrome://settings",
    "view-source:https://a.test/", "filesystem:https://a.test/temporary/x",
    "http2://a.test/", "httpx://a.test/",
    /* not URLs */
    "", " ", "a.test", "//a.test/", "/x", "https://", "https:///", "http://:80/",
    "1http://a.test/", "-http://a.test/", "http//a.test", "https://?x", "https://#x",
    "http://a.test:80:80/",
};

#define NCORPUS (sizeof CORPUS / sizeof CORPUS[0])

/* ---- the browser ---- */

/* The corpus as a JSON array literal (new; free). */
static char *corpus_json(void)
{
    size_t cap = 64;
    for (size_t i = 0; i < NCORPUS; i++)
        cap += 6 * strlen(CORPUS[i]) + 4;
    char *o = malloc(cap);
    if (!o)
        return NULL;
    size_t n = 0;
    o[n++] = '[';
    for (size_t i = 0; i < NCORPUS; i++) {
        if (i)
            o[n++] = ',';
        o[n++] = '"';
        for (const char *p = CORPUS[i]; *p; p++) {
            unsigned char c = (unsigned char)*p;
            if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f)
                n += (size_t)snprintf(o + n, cap - n, "\\u%04x", c);
            else
                o[n++] = (char)c;
        }
        o[n++] = '"';
    }
    o[n++] = ']';
    o[n] = 0;
    return o;
}

/* Chromium's origins for the corpus: a JSON array, a string or null
 * (new URL threw) per input. NULL when the browser could not be asked. */
static json_doc *browser_origins(void)
{
    cdp_launch_opts lo = {0};
    cdp_err e = {0};
    cdp_browser *b = cdp_browser_launch(&lo, &e);
    if (!CHECK(b != NULL)) {
        test_fail_detail("launch: %s", e.msg);
        return NULL;
    }
    json_doc *doc = NULL;
    cdp_page *p = cdp_page_open(b, 20000, &e);
    char *arr = corpus_json();
    if (CHECK(p != NULL) && CHECK(arr != NULL)) {
        size_t cap = strlen(arr) + 200;
        char *expr = malloc(cap);
        char *out = NULL;
        if (CHECK(expr != NULL)) {
            snprintf(expr, cap, "%s.map(x => { try { return new URL(x).origin; } "
                     "catch (e) { return null; } })", arr);
            if (!CHECK_INT(0, cdp_page_eval(p, expr, 20000, &out, &e)))
                test_fail_detail("eval: %s", e.msg);
        }
        if (out) {
            json_err je;
            doc = json_parse(out, strlen(out), NULL, &je);
            CHECK(doc != NULL);
            CHECK_INT(NCORPUS, json_len(json_doc_root(doc)));
        }
        free(out);
        free(expr);
    } else {
        test_fail_detail("page: %s", e.msg);
    }
    free(arr);
    cdp_page_free(p);
    cdp_browser_free(b);
    return doc;
}

static bool http_origin(const char *o)
{
    return o && (strncmp(o, "http://", 7) == 0 || strncmp(o, "https://", 8) == 0);
}

static bool ws_origin(const char *o)
{
    return o && (strncmp(o, "ws://", 5) == 0 || strncmp(o, "wss://", 6) == 0);
}

/* Printable form of a corpus entry for messages. */
static const char *show(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 5 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c >= 0x7f)
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", c);
        else
            buf[n++] = (char)c;
    }
    buf[n] = 0;
    return buf;
}

/* The origin ws_url_parse gives, as a browser writes it; -1 refused. */
static int ws_origin_of(const char *url, char *out, size_t cap)
{
    ws_url w;
    if (ws_url_parse(url, &w, NULL, 0) != 0)
        return -1;
    int def = w.tls ? 443 : 80;
    bool v6 = strchr(w.host, ':') != NULL;
    if (w.port == def)
        snprintf(out, cap, v6 ? "%s://[%s]" : "%s://%s", w.scheme, w.host);
    else
        snprintf(out, cap, v6 ? "%s://[%s]:%d" : "%s://%s:%d", w.scheme, w.host, w.port);
    return 0;
}

static void t_differential_browser(void)
{
    if (!fixture_browser()) {
        test_skip("no Chromium-family browser installed (apt-get install -y chromium)");
        return;
    }
    json_doc *doc = browser_origins();
    if (!doc)
        return;
    const json_val *arr = json_doc_root(doc);
    gate *open = gate_new(NULL, NULL, NULL);
    CHECK(open != NULL);
    size_t agree = 0, refused = 0, both = 0;
    char buf[400];
    printf("  refused by cdpgate (input, Chromium's origin, why):\n");
    for (size_t i = 0; i < NCORPUS && open; i++) {
        const char *x = CORPUS[i];
        const char *chrome = json_str(json_at(arr, i), NULL);   /* NULL: threw */
        char mine[URL_ORIGIN_MAX];
        const char *why = "";
        int rc = url_origin(x, mine, sizeof mine, &why);
        if (rc == 0) {
            if (!CHECK(chrome && strcmp(mine, chrome) == 0))
                test_fail_detail("%s: cdpgate %s, Chromium %s", show(x, buf, sizeof buf), mine,
                                 chrome ? chrome : "(throws)");
            agree++;
        } else if (!chrome || (rc == URL_EOPAQUE && !strcmp(chrome, "null"))) {
            both++;                     /* invalid, or opaque, for both */
        } else {
            refused++;
            printf("    %-44s %-34s (%s)\n", show(x, buf, sizeof buf),
                   chrome ? chrome : "(throws)", why);
            /* Refusing what the browser reads as an http(s) origin: only
             * for IDN and host characters Chromium rewrites. */
            if (http_origin(chrome) && !CHECK(rc == URL_EIDN || rc == URL_EHOSTCHAR))
                test_fail_detail("%s refused (%s) but Chromium reads %s",
                                 show(x, buf, sizeof buf), why, chrome);
        }

        /* The session key: same origin or refused, and only for http(s). */
        char key[URL_ORIGIN_MAX + 64];
        if (snap_url_origin(x, key, sizeof key) == 0 &&
            !CHECK(http_origin(chrome) && strcmp(key, chrome) == 0))
            test_fail_detail("snap_url_origin(%s) = %s, Chromium %s", show(x, buf, sizeof buf),
                             key, chrome ? chrome : "(throws)");

        /* The gate: without a grant it allows every http(s) origin it
         * can read; under a grant of exactly Chromium's origin it must
         * allow the same inputs (it read the same origin), under a grant
         * of another origin none. */
        bool any = gate_url_allowed(open, x) && strncmp(x, "about:blank", 11) != 0;
        if (any && !CHECK(http_origin(chrome)))
            test_fail_detail("gate reads %s as http(s); Chromium %s", show(x, buf, sizeof buf),
                             chrome ? chrome : "(throws)");
        if (any && http_origin(chrome)) {
            char g[600], q[300];
            size_t k = 0;
            for (const char *c = chrome; *c && k + 3 < sizeof q; c++) {
                if (*c == '"' || *c == '\\')
                    q[k++] = '\\';
                q[k++] = *c;
            }
            q[k] = 0;
            snprintf(g, sizeof g, "{\"task\":\"t\",\"origins\":[\"%s\"]}", q);
            gate_grant *gr = NULL;
            gate_err ge;
            if (CHECK_INT(0, gate_grant_parse(g, strlen(g), &gr, &ge))) {
                gate *gt = gate_new(gr, NULL, NULL);
                if (CHECK(gt != NULL) && !CHECK(gate_url_allowed(gt, x)))
                    test_fail_detail("gate: %s is not on %s", show(x, buf, sizeof buf), chrome);
                gate_free(gt);
                gate_grant_free(gr);
            } else {
                test_fail_detail("grant of %s: %s", chrome, ge.msg);
            }
        }

        /* The WebSocket client (it refuses userinfo and controls; it alone
         * takes an IPv6 zone, "[fe80::1%25eth0]", which browsers refuse). */
        char wso[URL_ORIGIN_MAX + 64];
        const char *lb = strchr(x, '[');
        bool zone = lb && strchr(lb, '%') && strchr(lb, ']') > strchr(lb, '%');
        if (!zone && ws_origin_of(x, wso, sizeof wso) == 0 &&
            !CHECK((http_origin(chrome) || ws_origin(chrome)) && strcmp(wso, chrome) == 0))
            test_fail_detail("ws_url_parse(%s) = %s, Chromium %s", show(x, buf, sizeof buf),
                             wso, chrome ? chrome : "(throws)");
    }
    printf("  %zu inputs: %zu same origin, %zu invalid or opaque for both, %zu refused\n",
           NCORPUS, agree, both, refused);
    CHECK(NCORPUS >= 100);
    CHECK(agree >= 100);
    gate_free(open);
    json_doc_free(doc);
}

/* ---- without the browser ---- */

static void t_origins_table(void)
{
    /* Chromium 156's answers (refusals as the code). */
    static const struct {
        const char *in;
        const char *want;   /* NULL: refused with code */
        int code;
    } T[] = {
        {"HTTPS://A.TEST:443/x", "https://a.test", 0},
        {"http://a.test:00080/", "http://a.test", 0},
        {"http://a.test:0/", "http://a.test:0", 0},
        {"ws://a.test:80/x", "ws://a.test", 0},
        {"wss://a.test:444/x", "wss://a.test:444", 0},
        {"https://evil.test\\@a.test/", "https://evil.test", 0},
        {"https://a.test@evil.test/", "https://evil.test", 0},
        {"https:a.test/", "https://a.test", 0},
        {"https:\\\\a.test\\x", "https://a.test", 0},
        {"https://evil.test#@a.test/", "https://evil.test", 0},
        {"https://a\t.test/", "https://a.test", 0},
        {"\x01https://a.test/\x1f", "https://a.test", 0},
        {"http://%61.test/", "http://a.test", 0},
        {"http://a%2etest/", "http://a.test", 0},
        {"http://%31%32%37.1/", "http://127.0.0.1", 0},
        {"http://127.1/", "http://127.0.0.1", 0},
        {"http://0x7F.1/", "http://127.0.0.1", 0},
        {"http://0177.0.0.1/", "http://127.0.0.1", 0},
        {"http://2130706433/", "http://127.0.0.1", 0},
        {"http://4294967295/", "http://255.255.255.255", 0},
        {"http://0x/", "http://0.0.0.0", 0},
        {"http://1.2.3.0x/", "http://1.2.3.0", 0},
        {"http://1.2.3.4./", "http://1.2.3.4", 0},
        {"http://0x1g/", "http://0x1g", 0},
        {"http://1.a/", "http://1.a", 0},
        {"http://[0:0:0:0:0:0:0:1]/", "http://[::1]", 0},
        {"http://[::FFFF:1.2.3.4]/", "http://[::ffff:102:304]", 0},
        {"http://[1:0:0:2:0:0:0:3]/", "http://[1:0:0:2::3]", 0},
        {"http://[1:0:0:0:2:0:0:3]/", "http://[1::2:0:0:3]", 0},
        {"http://[::1]:80/", "http://[::1]", 0},
        {"http://A.TEST./", "http://a.test.", 0},
        {"http://a..b/", "http://a..b", 0},
        {"http://XN--NXASMQ6B.test/", "http://xn--nxasmq6b.test", 0},
        {"http://a!b.test/", "http://a!b.test", 0},
        {"blob:https://a.test/uuid", "https://a.test", 0},
        {"blob:https://evil.test\\@a.test/", "https://evil.test", 0},
        {"blob:ws://a.test/x", "ws://a.test", 0},
        {"blob: https://a.test/", "https://a.test", 0},
        {"blob:blob:https://a.test/", NULL, URL_EOPAQUE},
        {"blob:file:///x", NULL, URL_EOPAQUE},
        {"data:text/html,hi", NULL, URL_EOPAQUE},
        {"about:blank", NULL, URL_EOPAQUE},
        {"file:///etc/passwd", NULL, URL_EOPAQUE},
        {"http://caf\xc3\xa9.test/", NULL, URL_EIDN},
        {"http://caf%C3%A9.test/", NULL, URL_EIDN},
        {"http://a*b.test/", NULL, URL_EHOSTCHAR},
        {"http://a%20b.test/", NULL, URL_EHOSTCHAR},
        {"http://a.test:65536/", NULL, URL_EINVAL},
        {"http://a.test: 80/", NULL, URL_EINVAL},
        {"http://user@/", NULL, URL_EINVAL},
        {"http://4294967296/", NULL, URL_EINVAL},
        {"http://1.2.3.4.5/", NULL, URL_EINVAL},
        {"http://1.2.3.256/", NULL, URL_EINVAL},
        {"http://09/", NULL, URL_EINVAL},
        {"http://a.1/", NULL, URL_EINVAL},
        {"http://a%2fb.test/", NULL, URL_EINVAL},
        {"http://a|b.test/", NULL, URL_EINVAL},
        {"http://[1::2::3]/", NULL, URL_EINVAL},
        {"http://[::1.2.3]/", NULL, URL_EINVAL},
        {"http://[::1]x/", NULL, URL_EINVAL},
        {"https://", NULL, URL_EINVAL},
        {"a.test", NULL, URL_EINVAL},
        {"//a.test/", NULL, URL_EINVAL},
        {"", NULL, URL_EINVAL},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        char o[URL_ORIGIN_MAX];
        const char *why = NULL;
        int rc = url_origin(T[i].in, o, sizeof o, &why);
        bool ok = T[i].want ? rc == 0 && strcmp(o, T[i].want) == 0 : rc == T[i].code;
        if (!CHECK(ok))
            test_fail_detail("%s: rc %d (%s) origin %s; want %s (%d)", T[i].in, rc,
                             why ? why : "", rc ? "-" : o, T[i].want ? T[i].want : "-",
                             T[i].code);
        CHECK(rc == 0 || (why && *why));
    }
}

static void t_parts(void)
{
    const char *s = " https://u:p@A.test:8443/x\\y?q#f ";
    url_parts u;
    CHECK_INT(0, url_parse(s, &u, NULL));
    CHECK_INT(URL_SCHEME_HTTPS, u.scheme);
    CHECK_STR("https", u.scheme_name);
    CHECK_STR("a.test", u.host);
    CHECK_INT(8443, u.port);
    CHECK(!u.default_port && u.userinfo && u.stripped && !u.host_pct);
    CHECK_INT(strlen(" https://u:p@A.test:8443"), u.rest);
    CHECK_INT(strlen(s) - 1, u.rest_end);
    CHECK_INT(0, url_parse("http://a.test", &u, NULL));
    CHECK_INT(80, u.port);
    CHECK(u.default_port && !u.stripped && !u.userinfo);
    CHECK_INT(13, u.rest);
    CHECK_INT(0, url_parse("http://%41.test/", &u, NULL));
    CHECK(u.host_pct);
    CHECK_INT(0, url_parse("ht\ttp://a.test/", &u, NULL));
    CHECK(u.stripped);
    CHECK_INT(URL_EOPAQUE, url_parse("blob:https://a.test/", &u, NULL));
    CHECK_STR("blob", u.scheme_name);
    CHECK_INT(5, u.rest);
    CHECK_INT(URL_EINVAL, url_parse(NULL, &u, NULL));
    CHECK_INT(URL_EINVAL, url_parse(NULL, NULL, NULL));
    CHECK_INT(443, url_default_port(URL_SCHEME_WSS));
    CHECK_INT(0, url_default_port(URL_SCHEME_FILE));
    CHECK(strlen(url_strerror(URL_EIDN)) > 0);
}

static void t_limits(void)
{
    char big[URL_RAW_HOST_MAX + 64], o[URL_ORIGIN_MAX];
    /* a 255-byte host fits; 256 does not */
    size_t n = (size_t)snprintf(big, sizeof big, "http://");
    memset(big + n, 'a', 255);
    big[n + 255] = 0;
    CHECK_INT(0, url_origin(big, o, sizeof o, NULL));
    big[n + 255] = 'a';
    big[n + 256] = 0;
    CHECK_INT(URL_ETOOLONG, url_origin(big, o, sizeof o, NULL));
    /* raw host over URL_RAW_HOST_MAX, even if it would decode shorter */
    n = (size_t)snprintf(big, sizeof big, "http://");
    for (size_t i = 0; i + 3 <= URL_RAW_HOST_MAX + 3; i += 3)
        memcpy(big + n + i, "%61", 3), big[n + i + 3] = 0;
    CHECK_INT(URL_ETOOLONG, url_origin(big, o, sizeof o, NULL));
    /* a small output buffer */
    CHECK_INT(URL_ETOOLONG, url_origin("https://a.test", o, 10, NULL));
    CHECK_STR("", o);
    /* long numbers saturate instead of wrapping */
    CHECK_INT(URL_EINVAL, url_origin("http://18446744073709551617/", o, sizeof o, NULL));
    CHECK_INT(URL_EINVAL, url_origin("http://a.test:18446744073709551696/", o, sizeof o, NULL));
    /* a long path after the authority is not read */
    char *huge = malloc(1 << 20);
    if (CHECK(huge != NULL)) {
        memset(huge, 'x', 1 << 20);
        memcpy(huge, "https://a.test/", 15);
        huge[(1 << 20) - 1] = 0;
        CHECK_INT(0, url_origin(huge, o, sizeof o, NULL));
        CHECK_STR("https://a.test", o);
        free(huge);
    }
}

/* url_path reads the path as the browser does (issue 11, point 10): the
 * string versions in gate/classify.c and snapshot/session.c found "://"
 * with strstr and stopped at '/' only, so a backslash path, a tab inside
 * a word, or "://" inside the query was read wrong. */
static void t_path_regression(void)
{
    static const struct {
        const char *in, *want;
    } C[] = {
        {"https://bank.test\\account\\delete", "/account/delete"},
        {"https://bank.test/acc\tount/de\nlete?x=1", "/account/delete"},
        {"https://bank.test/x?next=https://evil.test/delete", "/x"},
        {"https:bank.test/close", "/close"},
        {"https:\\\\bank.test\\transfer#a", "/transfer"},
        {"https://user:pw@bank.test:8443/pay", "/pay"},
        {"https://bank.test", "/"},
        {"  https://bank.test/a b/  ", "/a b/"},
        /* Dot segments resolved as the browser does before it sends the
         * request (red team s12, G1). */
        {"https://bank.test/x/y/../../transfer/send?to=m", "/transfer/send"},
        {"https://bank.test/a/./b/%2e/c", "/a/b/c"},
        {"https://bank.test/a/b/.%2E/c", "/a/c"},
        {"https://bank.test/a/b/%2e%2e", "/a/"},
        {"https://bank.test/a/.", "/a/"},
        {"https://bank.test/../../..", "/"},
        {"https://bank.test\\x\\..\\delete", "/delete"},
        {"https://bank.test/a/..b/...", "/a/..b/..."},
        {"https://bank.test/a/%2e%2e%2e", "/a/%2e%2e%2e"},
        {"https://bank.test//..", "/"},
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        char out[64];
        if (!CHECK_INT(0, url_path(C[i].in, out, sizeof out)))
            continue;
        if (!CHECK(strcmp(out, C[i].want) == 0))
            test_fail_detail("%s: want %s, got %s", C[i].in, C[i].want, out);
    }
    char out[8];
    CHECK(url_path("javascript:alert(1)", out, sizeof out) != 0);
    CHECK_STR("", out);
    CHECK_INT(0, url_path("https://a.test/abcdefghij", out, sizeof out));
    CHECK_STR("/abcdef", out);
}

/* Red team s13, N2: which hosts carry the cookies of a session held for a
 * service: its site (the last two labels, no public-suffix list) and every
 * subdomain of it, any scheme and port; an IP address or a single label
 * only itself; a two-label public suffix makes more hosts count, never
 * fewer. */
static void t_same_site(void)
{
    static const struct {
        const char *svc, *url;
        bool want;
    } C[] = {
        {"http://bank.test:8080", "http://bank.test:8080/x", true},
        {"http://bank.test:8080", "http://www.bank.test:8080/account/close", true},
        {"http://bank.test:8080", "https://a.b.bank.test/x", true},
        {"http://bank.test", "http://WWW.Bank.Test./x", true},
        {"https://www.bank.test", "http://bank.test/x", true},
        {"https://www.bank.test", "http://api.bank.test:9/x", true},
        {"https://www.bank.test", "wss://api.bank.test/x", true},
        {"http://bank.test", "http://evilbank.test/x", false},
        {"http://bank.test", "http://bank.test.evil.test/x", false},
        {"http://bank.test", "http://evil.test/x", false},
        {"http://bank.test", "data:text/html,x", false},
        {"http://bank.test", "not a url", false},
        {"http://bank.co.uk", "http://other.co.uk/x", true},      /* fail closed */
        {"http://127.0.0.1:8080", "http://127.0.0.1:9/x", true},
        {"http://127.0.0.1:8080", "http://1.127.0.0.1/x", false},
        {"http://127.0.0.1:8080", "http://0.1/x", false},
        {"http://[::1]:8080", "http://[::1]/x", true},
        {"http://[::1]:8080", "http://[::2]/x", false},
        {"http://localhost:8080", "http://localhost/x", true},
        {"http://localhost:8080", "http://a.localhost/x", true},
        {"http://localhost:8080", "http://otherhost/x", false},
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++)
        if (!CHECK(url_same_site(C[i].svc, C[i].url) == C[i].want))
            test_fail_detail("%s for %s: want %d", C[i].url, C[i].svc, C[i].want);
}

static const test_case TESTS[] = {
    {"same_site", t_same_site},
    {"path_regression", t_path_regression},
    {"origins_table", t_origins_table},
    {"parts", t_parts},
    {"limits", t_limits},
    {"differential_browser", t_differential_browser},
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, TESTS);
}
