/*
 * test_evidence.c — session recording as evidence (issue 16, point 3;
 * evidence/, cli/evidence.c, `cdpgate evidence verify`).
 *
 * Pure cases: the chain verifies; an edited, removed, reordered or added
 * record, a cut tail, an edited screenshot and a missing manifest are each
 * found; secrets given to the writer are nowhere in the folder; the limits.
 * Browser cases: `cdpgate mcp --evidence` on fixture pages (see their own
 * comments).
 */
#include "evidence/evidence.h"
#include "json/json.h"
#include "vault/vault.h"
#include "tests/fixture.h"
#include "tests/harness.h"
#include "tests/testlib.h"
#include "base/base.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static testlib_world world;

/* A 1x1 PNG. */
static const uint8_t PNG1[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
    0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
    0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8,
    0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};

static const char SECRET[] = "s3ss10n-V4LUE-9f8e7d6c";
static const char SECRET2[] = "tok/en+with=odd&chars";   /* percent-encoded in URLs */

/* A fresh folder name under the world's root. */
static void new_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", world.root, name);
}

/* Write a sample evidence folder at dir: 5 records and a screenshot. */
static bool sample(const char *dir, char final_hex[EVIDENCE_HEX_LEN + 1])
{
    evidence_err err = {0};
    evidence *e = evidence_open(dir, "sample-task", &err);
    if (!CHECK(e)) {
        test_fail_detail("%s", err.msg);
        return false;
    }
    CHECK_INT(0, evidence_secret_add(e, SECRET, strlen(SECRET)));
    CHECK_INT(0, evidence_secret_add(e, SECRET2, strlen(SECRET2)));
    CHECK_INT(0, evidence_meta_set(e, "browser", "Chromium/156"));
    CHECK_INT(0, evidence_rec_begin(e, "navigation"));
    evidence_rec_str(e, "url", "http://bank.test/?sid=s3ss10n-V4LUE-9f8e7d6c&x=1");
    CHECK_INT(0, evidence_rec_end(e, &err));
    CHECK_INT(0, evidence_rec_begin(e, "console"));
    evidence_rec_str(e, "text", "cookie is sid=s3ss10n-V4LUE-9f8e7d6c; and "
                     "tok%2Fen%2Bwith%3Dodd%26chars in a URL");
    CHECK_INT(0, evidence_rec_end(e, &err));
    CHECK_INT(0, evidence_rec_begin(e, "action"));
    evidence_rec_str(e, "tool", "click");
    static const char js[] = "{\"role\":\"button\",\"name\":\"Pay s3ss10n-V4LUE-9f8e7d6c\","
                             "\"list\":[\"tok/en+with=odd&chars\",1,true]}";
    evidence_rec_json(e, "target", js, strlen(js));
    evidence_rec_str(e, "decision", "allow");
    CHECK_INT(0, evidence_rec_end(e, &err));
    CHECK_INT(0, evidence_shot(e, PNG1, sizeof PNG1, "after step 3", &err));
    CHECK_INT(0, evidence_rec_begin(e, "takeover"));
    evidence_rec_str(e, "event", "start");
    CHECK_INT(0, evidence_rec_end(e, &err));
    CHECK_INT(5, (long long)evidence_count(e));
    int rc = evidence_close(e, final_hex, &err);
    if (!CHECK_INT(0, rc))
        test_fail_detail("%s", err.msg);
    return rc == 0;
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return test_read_file(p, len);
}

static void put(const char *dir, const char *name, const char *s, size_t n)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (CHECK(f)) {
        CHECK_INT((long long)n, (long long)fwrite(s, 1, n, f));
        fclose(f);
    }
}

/* Every file of dir: not one holds needle (byte-exact). */
static void check_dir_lacks(const char *dir, const char *needle)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "grep -rlF -e '%s' '%s' >/dev/null 2>&1", needle, dir);
    int st = system(cmd);
    if (!CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1))
        test_fail_detail("a secret is in a file under %s", dir);
}

static void t_chain_verifies(void)
{
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "ok");
    if (!sample(dir, fin))
        return;
    evidence_report rep;
    evidence_err err = {0};
    if (!CHECK_INT(0, evidence_verify(dir, &rep, &err)))
        test_fail_detail("%s", err.msg);
    CHECK_INT(5, (long long)rep.records);
    CHECK_INT(1, (long long)rep.files);
    CHECK_STR(fin, rep.final_hex);
    check_dir_lacks(dir, SECRET);
    check_dir_lacks(dir, SECRET2);
    check_dir_lacks(dir, "tok%2Fen%2Bwith%3Dodd%26chars");
    size_t n = 0;
    char *r = slurp(dir, "records.jsonl", &n);
    CHECK_HAS(r, "\"url\":\"http://bank.test/?sid=[secret]&x=1\"");
    CHECK_HAS(r, "\"name\":\"Pay [secret]\"");
    CHECK_HAS(r, "\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"");
    CHECK_HAS(r, "\"file\":\"shot-0001.png\"");
    free(r);
    char *m = slurp(dir, "manifest.json", &n);
    CHECK_HAS(m, "\"records\":5");
    CHECK_HAS(m, fin);
    CHECK_HAS(m, "\"browser\":\"Chromium/156\"");
    free(m);
    char *h = slurp(dir, "index.html", &n);
    CHECK_HAS(h, "default-src 'none'");
    CHECK_HAS(h, "shot-0001.png");
    CHECK_LACKS(h, "</script>\n<script type=\"application/json\" id=\"records\">[]");
    free(h);
    /* The command agrees. */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' evidence verify '%s' >/dev/null 2>&1", testlib_cdpgate_bin(),
             dir);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The lines of records.jsonl (at most 16), each with its newline. */
static size_t lines_of(char *r, size_t n, char **v, size_t *len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < 16;) {
        char *nl = memchr(r + i, '\n', n - i);
        size_t l = nl ? (size_t)(nl - (r + i)) + 1 : n - i;
        v[k] = r + i;
        len[k++] = l;
        i += l;
    }
    return k;
}

/* Rewrite records.jsonl of dir from its lines in the order ord (-1 ends). */
static void rewrite(const char *dir, const int *ord)
{
    size_t n = 0;
    char *r = slurp(dir, "records.jsonl", &n);
    if (!CHECK(r))
        return;
    char *v[16];
    size_t len[16];
    size_t k = lines_of(r, n, v, len);
    base_buf b = {0};
    for (size_t i = 0; ord[i] >= 0; i++)
        if ((size_t)ord[i] < k)
            base_buf_put(&b, v[ord[i]], len[ord[i]]);
    put(dir, "records.jsonl", b.s ? b.s : "", b.len);
    base_buf_free(&b);
    free(r);
}

/* Verify dir: it must fail with a message holding want, at line (0: any). */
static void check_broken(const char *dir, const char *want, uint64_t line)
{
    evidence_err err = {0};
    int rc = evidence_verify(dir, NULL, &err);
    CHECK_INT(EVIDENCE_EBROKEN, rc);
    CHECK_HAS(err.msg, want);
    if (line)
        CHECK_INT((long long)line, (long long)err.line);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' evidence verify '%s' >/dev/null 2>&1", testlib_cdpgate_bin(),
             dir);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
}

static void t_tamper_edited(void)
{
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "edited");
    if (!sample(dir, fin))
        return;
    size_t n = 0;
    char *r = slurp(dir, "records.jsonl", &n);
    char *p = r ? strstr(r, "\"decision\":\"allow\"") : NULL;
    if (CHECK(p)) {
        memcpy(p + 12, "deny\",", 6);   /* "decision":"deny","w"... same length */
        put(dir, "records.jsonl", r, n);
        check_broken(dir, "edited", 3);
    }
    free(r);
}

static void t_tamper_removed(void)
{
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "removed");
    if (!sample(dir, fin))
        return;
    static const int ord[] = {0, 2, 3, 4, -1};
    rewrite(dir, ord);
    check_broken(dir, "removed", 2);
}

static void t_tamper_reordered(void)
{
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "reordered");
    if (!sample(dir, fin))
        return;
    static const int ord[] = {0, 2, 1, 3, 4, -1};
    rewrite(dir, ord);
    check_broken(dir, "moved", 2);
}

static void t_tamper_tail(void)
{
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "tail");
    if (!sample(dir, fin))
        return;
    static const int ord[] = {0, 1, 2, 3, -1};
    rewrite(dir, ord);
    check_broken(dir, "manifest.json: it counts 5 records, records.jsonl has 4", 0);
    /* A duplicated record is found too. */
    char dir2[600];
    new_dir(dir2, sizeof dir2, "dup");
    if (!sample(dir2, fin))
        return;
    static const int dup[] = {0, 1, 1, 2, 3, 4, -1};
    rewrite(dir2, dup);
    check_broken(dir2, "record 3", 3);
}

static void t_tamper_files(void)
{
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "shot");
    if (!sample(dir, fin))
        return;
    uint8_t png[sizeof PNG1];
    memcpy(png, PNG1, sizeof png);
    png[40] ^= 1;
    put(dir, "shot-0001.png", (const char *)png, sizeof png);
    check_broken(dir, "shot-0001.png does not match its sha256", 4);
    char p[700];
    snprintf(p, sizeof p, "%s/shot-0001.png", dir);
    unlink(p);
    check_broken(dir, "shot-0001.png is missing", 4);
    char dir2[600];
    new_dir(dir2, sizeof dir2, "noman");
    if (!sample(dir2, fin))
        return;
    snprintf(p, sizeof p, "%s/manifest.json", dir2);
    unlink(p);
    check_broken(dir2, "no manifest.json", 0);
    /* A manifest whose final digest was changed. */
    char dir3[600];
    new_dir(dir3, sizeof dir3, "badman");
    if (!sample(dir3, fin))
        return;
    size_t n = 0;
    char *m = slurp(dir3, "manifest.json", &n);
    char *f = m ? strstr(m, fin) : NULL;
    if (CHECK(f)) {
        f[0] = f[0] == 'a' ? 'b' : 'a';
        put(dir3, "manifest.json", m, n);
        check_broken(dir3, "final digest", 0);
    }
    free(m);
}

/* Report files a record names in "files" (evidence_put): scrubbed of the
 * secrets before they reach the disk, each checked by the verifier (an
 * edited or removed one is found); a name outside the folder is refused. */
static void t_put_files(void)
{
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "putfiles");
    evidence_err err = {0};
    evidence *e = evidence_open(dir, "put", &err);
    if (!CHECK(e))
        return;
    CHECK_INT(0, evidence_secret_add(e, SECRET, strlen(SECRET)));
    static const char html[] = "<p>a link <a href=\"/x?sid=s3ss10n-V4LUE-9f8e7d6c\">x</a></p>";
    static const char js[] = "{\"violations\":[]}";
    char h1[EVIDENCE_HEX_LEN + 1], h2[EVIDENCE_HEX_LEN + 1];
    CHECK_INT(0, evidence_put(e, "a11y-0001.json", js, strlen(js), true, h1, &err));
    CHECK_INT(0, evidence_put(e, "a11y-0001.html", html, strlen(html), true, h2, &err));
    CHECK_INT(EVIDENCE_EINVAL, evidence_put(e, "../x.html", js, 2, true, h1, &err));
    CHECK_INT(EVIDENCE_EINVAL, evidence_put(e, "records.jsonl", js, 2, true, h1, &err));
    CHECK_INT(EVIDENCE_EIO, evidence_put(e, "a11y-0001.json", js, 2, true, h1, &err));
    char files[400];
    snprintf(files, sizeof files, "[{\"file\":\"a11y-0001.json\",\"sha256\":\"%s\"},"
             "{\"file\":\"a11y-0001.html\",\"sha256\":\"%s\"}]", h1, h2);
    CHECK_INT(0, evidence_rec_begin(e, "a11y"));
    evidence_rec_json(e, "files", files, strlen(files));
    CHECK_INT(0, evidence_rec_end(e, &err));
    CHECK_INT(0, evidence_close(e, fin, &err));
    evidence_report rep;
    if (!CHECK_INT(0, evidence_verify(dir, &rep, &err)))
        test_fail_detail("%s", err.msg);
    CHECK_INT(2, (long long)rep.files);
    check_dir_lacks(dir, SECRET);
    size_t n = 0;
    char *h = slurp(dir, "a11y-0001.html", &n);
    CHECK_HAS(h, "sid=[secret]");
    if (h) {
        h[1] = 'P';
        put(dir, "a11y-0001.html", h, n);
        check_broken(dir, "a11y-0001.html does not match its sha256", 1);
    }
    free(h);
    char p[700];
    snprintf(p, sizeof p, "%s/a11y-0001.html", dir);
    unlink(p);
    check_broken(dir, "a11y-0001.html is missing", 1);
    /* A bad files item is broken, not skipped. */
    const char bad[] = "{\"n\":1,\"t\":\"x\",\"kind\":\"a11y\",\"files\":[3]";
    size_t ln = 0;
    char zero[EVIDENCE_HEX_LEN + 1];
    memset(zero, '0', EVIDENCE_HEX_LEN);
    zero[EVIDENCE_HEX_LEN] = 0;
    char *line = evidence_line_seal(bad, strlen(bad), zero, &ln);
    if (CHECK(line)) {
        char *buf = malloc(ln + 2);
        memcpy(buf, line, ln);
        buf[ln] = '\n';
        CHECK_INT(EVIDENCE_EBROKEN, evidence_verify_buf(buf, ln + 1, NULL, 0, NULL, NULL, NULL,
                                                        &err));
        CHECK_HAS(err.msg, "a bad files item");
        free(buf);
    }
    free(line);
}

static int count_records(const char *recs, const char *kind, const char *needle);

/* n bytes of needle in hay (h bytes)? */
static bool has_bytes(const char *hay, size_t h, const char *needle, size_t n)
{
    for (size_t i = 0; hay && n && i + n <= h; i++)
        if (memcmp(hay + i, needle, n) == 0)
            return true;
    return false;
}

/* A session value holding characters that text formats escape (a
 * localStorage JSON blob, a cookie with '&') appears escaped in a record's
 * text or a report (JSON text, HTML text, a URL's query): each encoding is
 * scrubbed byte-exact, in records and in files put with scrub ("seen,
 * minor" of the red team's s16 review; before, only the raw and one
 * percent-encoded form were). */
static void t_secret_escaped(void)
{
    static const char V[] = "Tok\"en<9>&'v/a l\\z";
    static const char *const FORMS[] = {
        "Tok\\\"en<9>&'v/a l\\\\z",                    /* JSON */
        "Tok\\\"en<9>&'v\\/a l\\\\z",                 /* JSON, PHP's \/ */
        "Tok&quot;en&lt;9&gt;&amp;&#39;v/a l\\z",           /* HTML */
        "Tok&quot;en&lt;9&gt;&amp;&#x27;v/a l\\z",          /* HTML, Python's */
        "Tok&quot;en<9>&amp;'v/a l\\z",                     /* an attribute's outerHTML */
        "Tok\"en&lt;9&gt;&amp;'v/a l\\z",                   /* a text node's outerHTML */
        "Tok%22en%3C9%3E%26'v%2Fa%20l%5Cz",                 /* encodeURIComponent */
        "Tok%22en%3C9%3E%26%27v%2Fa%20l%5Cz",               /* percent, upper */
        "Tok%22en%3c9%3e%26%27v%2fa%20l%5cz",               /* percent, lower */
        "Tok%22en%3C9%3E%26%27v%2Fa+l%5Cz",                 /* a form's query */
        NULL};
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "escaped");
    evidence_err err = {0};
    evidence *e = evidence_open(dir, "escaped", &err);
    if (!CHECK(e))
        return;
    CHECK_INT(0, evidence_secret_add(e, V, strlen(V)));
    base_buf all = {0};
    for (size_t i = 0; FORMS[i]; i++) {
        char text[200];
        snprintf(text, sizeof text, "kept words %s kept words", FORMS[i]);
        CHECK_INT(0, evidence_rec_begin(e, "console"));
        evidence_rec_str(e, "text", text);
        CHECK_INT(0, evidence_rec_end(e, &err));
        base_buf_printf(&all, "<p title=\"%s\">%s</p>\n", FORMS[i], FORMS[i]);
    }
    char hex[EVIDENCE_HEX_LEN + 1];
    CHECK_INT(0, evidence_put(e, "a11y-0001.html", all.s, all.len, true, hex, &err));
    base_buf_free(&all);
    CHECK_INT(0, evidence_close(e, fin, &err));
    static const char *const FILES[] = {"records.jsonl", "a11y-0001.html", "index.html", NULL};
    for (size_t f = 0; FILES[f]; f++) {
        size_t n = 0;
        char *b = slurp(dir, FILES[f], &n);
        CHECK(b != NULL);
        CHECK(!has_bytes(b, n, V, strlen(V)));
        for (size_t i = 0; FORMS[i]; i++)
            if (!CHECK(!has_bytes(b, n, FORMS[i], strlen(FORMS[i]))))
                test_fail_detail("%s holds the value's form %zu", FILES[f], i);
        free(b);
    }
    size_t n = 0;
    char *r = slurp(dir, "records.jsonl", &n);
    CHECK_INT(10, count_records(r, "console", "\"text\":\"kept words [secret] kept words\""));
    free(r);
}

/* A short session value (4-7 bytes: a cookie "true", "2026", "1234", as
 * consent and preference cookies hold) no longer withholds every record
 * whose structure spells it (a boolean true, the time, a digest): it was
 * found by a11y18 (session 18), every record of a site with such a cookie
 * was {"kind":"withheld"}, evidence without content. It is still scrubbed
 * from strings, and from a number that spells it. */
static void t_secret_short_structure(void)
{
    char dir[600];
    new_dir(dir, sizeof dir, "shortsec");
    evidence_err err = {0};
    evidence *e = evidence_open(dir, NULL, &err);
    if (!CHECK(e))
        return;
    CHECK_INT(0, evidence_secret_add(e, "true", 4));
    CHECK_INT(0, evidence_secret_add(e, "2026", 4));
    CHECK_INT(0, evidence_secret_add(e, "1234", 4));
    CHECK_INT(0, evidence_rec_begin(e, "note"));
    evidence_rec_str(e, "text", "visible words; cookie=true; year 2026");
    evidence_rec_bool(e, "flag", true);
    evidence_rec_int(e, "line", 1234);
    evidence_rec_int(e, "col", 77);
    CHECK_INT(0, evidence_rec_end(e, &err));
    CHECK_INT(0, evidence_close(e, NULL, &err));
    size_t n = 0;
    char *r = slurp(dir, "records.jsonl", &n);
    CHECK_LACKS(r, "\"kind\":\"withheld\"");
    CHECK_HAS(r, "visible words; cookie=[secret]; year [secret]");
    CHECK_HAS(r, "\"flag\":true");
    CHECK_HAS(r, "\"line\":\"[secret]\"");
    CHECK_HAS(r, "\"col\":77");
    CHECK_LACKS(r, "1234");
    free(r);
    CHECK_INT(0, evidence_verify(dir, NULL, &err));
}

/* A secret that equals part of a record's structure withholds the record;
 * a secret shorter than the minimum is not scrubbed. */
static void t_secret_structure(void)
{
    char dir[600];
    new_dir(dir, sizeof dir, "structure");
    evidence_err err = {0};
    evidence *e = evidence_open(dir, NULL, &err);
    if (!CHECK(e))
        return;
    CHECK_INT(0, evidence_secret_add(e, "\"kind\":\"", 8));
    CHECK_INT(0, evidence_secret_add(e, "abc", 3));
    CHECK_INT(0, evidence_rec_begin(e, "note"));
    evidence_rec_str(e, "text", "abc stays");
    CHECK_INT(0, evidence_rec_end(e, &err));
    CHECK_INT(EVIDENCE_EINVAL, evidence_rec_begin(e, "Bad-Kind"));
    CHECK_INT(0, evidence_close(e, NULL, &err));
    size_t n = 0;
    char *r = slurp(dir, "records.jsonl", &n);
    CHECK_HAS(r, "\"kind\":\"withheld\"");
    CHECK_LACKS(r, "abc stays");
    free(r);
    CHECK_INT(0, evidence_verify(dir, NULL, &err));
    /* An existing folder that is not empty is refused. */
    CHECK(!evidence_open(dir, NULL, &err));
    CHECK_HAS(err.msg, "not an empty folder");
}

/* The verifier's limits and odd input (the fuzz target's corpus seeds). */
static void t_verify_limits(void)
{
    evidence_err err = {0};
    evidence_report rep;
    CHECK_INT(EVIDENCE_EBROKEN, evidence_verify_buf("x\n", 2, "{}", 2, NULL, NULL, &rep, &err));
    CHECK_HAS(err.msg, "record 1: no digest");
    CHECK_INT(EVIDENCE_EBROKEN, evidence_verify_buf("", 0, NULL, 0, NULL, NULL, &rep, &err));
    CHECK_HAS(err.msg, "no manifest.json");
    static const char man0[] = "{\"format\":\"cdpgate-evidence/1\",\"records\":0,\"final\":"
        "\"0000000000000000000000000000000000000000000000000000000000000000\"}";
    CHECK_INT(0, evidence_verify_buf("", 0, man0, strlen(man0), NULL, NULL, &rep, &err));
    size_t big = EVIDENCE_LINE_MAX + 10;
    char *b = malloc(big);
    if (CHECK(b)) {
        memset(b, 'a', big);
        b[big - 1] = '\n';
        CHECK_INT(EVIDENCE_ELIMIT, evidence_verify_buf(b, big, man0, strlen(man0), NULL, NULL,
                                                       &rep, &err));
        free(b);
    }
    /* A torn last line. */
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "torn");
    if (!sample(dir, fin))
        return;
    size_t n = 0;
    char *r = slurp(dir, "records.jsonl", &n);
    if (CHECK(r && n > 10)) {
        put(dir, "records.jsonl", r, n - 5);
        check_broken(dir, "record 5", 5);
    }
    free(r);
}


/* The viewer (index.html) works offline from the disk, in a real browser:
 * its script runs under its own CSP (the list is built), stepping to an
 * action shows the screenshot that followed it (the image loads from the
 * folder), and a record's page text is shown as text, not markup. */
static void t_viewer_offline(void)
{
    cdp_browser *b = testlib_world_browser(&world);
    if (!b)
        return;
    char dir[600], fin[EVIDENCE_HEX_LEN + 1];
    new_dir(dir, sizeof dir, "viewer");
    evidence_err err = {0};
    evidence *e = evidence_open(dir, "viewer", &err);
    if (!CHECK(e))
        return;
    CHECK_INT(0, evidence_rec_begin(e, "action"));
    evidence_rec_str(e, "tool", "click");
    evidence_rec_str(e, "name", "<img src=x onerror=document.title='pwned'></script><b>");
    CHECK_INT(0, evidence_rec_end(e, &err));
    CHECK_INT(0, evidence_shot(e, PNG1, sizeof PNG1, "after record 1", &err));
    CHECK_INT(0, evidence_close(e, fin, &err));
    cdp_err ce = {0};
    cdp_page *p = cdp_page_open(b, 10000, &ce);
    if (!CHECK(p))
        return;
    char url[700];
    snprintf(url, sizeof url, "file://%s/index.html", dir);
    CHECK_INT(0, cdp_page_navigate(p, url, 10000, &ce));
    char *out = NULL;
    static const char EXPR[] =
        "new Promise(ok => { const bs = document.querySelectorAll('#list button'); "
        "bs[0].click(); const im = document.querySelector('#rec img'); "
        "const done = () => ok(JSON.stringify({n: bs.length, title: document.title, "
        "img: im ? im.getAttribute('src') : '', w: im ? im.naturalWidth : -1, "
        "name: document.querySelector('#rec dl').textContent.includes('onerror'), "
        "bold: document.querySelectorAll('#rec b').length})); "
        "if (!im || im.complete) done(); else { im.onload = done; im.onerror = done; } })";
    char expr[1200];
    snprintf(expr, sizeof expr, "%s", EXPR);
    if (CHECK_INT(0, cdp_page_eval(p, expr, 10000, &out, &ce))) {
        CHECK_HAS(out, "\\\"n\\\":2");
        CHECK_HAS(out, "\\\"title\\\":\\\"cdpgate evidence\\\"");
        CHECK_HAS(out, "\\\"img\\\":\\\"shot-0001.png\\\"");
        CHECK_HAS(out, "\\\"w\\\":1");
        CHECK_HAS(out, "\\\"name\\\":true");
        CHECK_HAS(out, "\\\"bold\\\":0");
    } else {
        test_fail_detail("%s", ce.msg);
    }
    free(out);
    cdp_page_free(p);
}

/* ==== the browser: cdpgate mcp --evidence ==== */

/* The password the human types during the takeover (joined at run time
 * in the human's script; planted: it must be nowhere in the evidence). */
#define HUMAN_PW_A "pw-evid"
#define HUMAN_PW_B "ence-h4x0r-91"

typedef fixture_child child;

/* The DevTools endpoint of the browser cdpgate launched with --port and
 * TMPDIR=tmp ("" when none). */
static void endpoint_of(const char *tmp, char *out, size_t cap)
{
    out[0] = 0;
    for (int tries = 0; tries < 100 && !*out; tries++) {
        DIR *d = opendir(tmp);
        struct dirent *de;
        while (d && (de = readdir(d)) && !*out) {
            if (strncmp(de->d_name, "cdpgate-", 8) != 0)
                continue;
            char p[1100];
            snprintf(p, sizeof p, "%s/%s/profile/DevToolsActivePort", tmp, de->d_name);
            char *s = test_read_file(p, NULL);
            char *nl = s ? strchr(s, '\n') : NULL;
            if (nl) {
                *nl = 0;
                nl[1 + strcspn(nl + 1, "\n")] = 0;
                snprintf(out, cap, "ws://127.0.0.1:%s%s", s, nl + 1);
            }
            free(s);
        }
        if (d)
            closedir(d);
        if (!*out)
            testlib_sleep_ms(100);
    }
}

/* The human, through a second DevTools client: the password typed into
 * the page's password field (its value set, as a person's typing ends). */
static void human_types_password(const char *endpoint)
{
    cdp_err e = {0};
    cdp_browser *h = cdp_browser_connect(endpoint, NULL, 10000, &e);
    if (!CHECK(h != NULL)) {
        test_fail_detail("second client: %s", e.msg);
        return;
    }
    cdp_conn *c = cdp_browser_conn(h);
    char target[128] = "", session[128] = "";
    cdp_reply rep;
    if (cdp_call(c, NULL, "Target.getTargets", NULL, 5000, &rep, &e) == 0) {
        for (const json_val *ti = json_first(json_get(rep.result, "targetInfos")); ti;
             ti = json_next(ti)) {
            const char *u = json_get_str(ti, "url");
            if (u && strstr(u, "/bank/evidence.html"))
                snprintf(target, sizeof target, "%s", json_get_str(ti, "targetId"));
        }
        cdp_reply_free(&rep);
    }
    char params[400];
    snprintf(params, sizeof params, "{\"targetId\":\"%s\",\"flatten\":true}", target);
    if (CHECK(*target) && cdp_call(c, NULL, "Target.attachToTarget", params, 5000, &rep, &e) == 0) {
        snprintf(session, sizeof session, "%s", json_get_str(rep.result, "sessionId"));
        cdp_reply_free(&rep);
    }
    snprintf(params, sizeof params, "{\"expression\":\"document.getElementById('pw').value = "
             "'%s' + '%s'; document.getElementById('pw').value.length\"}", HUMAN_PW_A,
             HUMAN_PW_B);
    if (CHECK(*session) && CHECK_INT(0, cdp_call(c, session, "Runtime.evaluate", params, 5000,
                                                 &rep, &e))) {
        CHECK_INT((long long)strlen(HUMAN_PW_A HUMAN_PW_B),
                  (long long)json_get_int(json_get(rep.result, "result"), "value", 0));
        cdp_reply_free(&rep);
    }
    cdp_browser_free(h);
}

/* The one folder under dir (the session's), into out. */
static bool session_dir(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.' && ++n == 1)
            snprintf(out, cap, "%.500s/%.200s", dir, de->d_name);
    if (d)
        closedir(d);
    return CHECK_INT(1, n);
}

/* The records of kind (and holding needle when given): how many. */
static int count_records(const char *recs, const char *kind, const char *needle)
{
    char k[64];
    snprintf(k, sizeof k, "\"kind\":\"%s\"", kind);
    int n = 0;
    for (const char *p = recs; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = malloc(len + 1);
        if (line) {
            memcpy(line, p, len);
            line[len] = 0;
            if (strstr(line, k) && (!needle || strstr(line, needle)))
                n++;
            free(line);
        }
        p = nl ? nl + 1 : p + len;
    }
    return n;
}

/* Issue 16, point 3 as a whole: a scripted session on the bank fixture
 * (its session restored from the vault; a page that logs the session
 * cookie to the console and puts the token in URLs), an action the gate
 * confirms, one it refuses (the agent typing into a password field), a
 * takeover during which the human types the password, an action after.
 * Then: no secret byte-exact anywhere in the folder (cookie values, the
 * localStorage token, the password, raw or percent-encoded), the chain
 * verifies and an edit is found, a record for each action with the gate's
 * decision, the takeover's start and end, console, network and navigation
 * records, and the screenshot after the last step masked the password
 * field. */
static void t_mcp_session(void)
{
    if (!testlib_need_browser() || !testlib_need_cdpgate())
        return;
    char data[500], vdir[600], err[300] = "", tmp[500], tmpenv[600], evdir[500];
    snprintf(data, sizeof data, "%s/mcpdata", world.root);
    mkdir(data, 0700);
    snprintf(vdir, sizeof vdir, "%s/cdpgate", data);
    vault *v = vault_open(vdir, NULL, err, sizeof err);
    if (!CHECK(v != NULL)) {
        test_fail_detail("vault_open: %s", err);
        return;
    }
    char origin[128], state[1600];
    testlib_world_origin(&world, origin, sizeof origin, "bank.test");
    if (CHECK(testlib_bank_state(state, sizeof state, origin, FIXTURE_BANK_SESSION, NULL) > 0))
        testlib_vault_plant(v, origin, "alice", state, 0);
    vault_close(v);
    char grant[500];
    snprintf(grant, sizeof grant, "%s/grant.json", world.root);
    FILE *f = fopen(grant, "w");
    if (!CHECK(f != NULL))
        return;
    fprintf(f, "{\"task\":\"evidence-test\",\"principal\":\"test\",\"origins\":[\"%s\"],"
            "\"identities\":{\"%s\":\"alice\"},\"egress\":[\"approved_origin_fetch\"]}\n",
            origin, origin);
    fclose(f);
    snprintf(tmp, sizeof tmp, "%s/mcptmp", world.root);
    mkdir(tmp, 0700);
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmp);
    snprintf(evdir, sizeof evdir, "%s/evidence", world.root);
    char env_data[600], rules[200];
    snprintf(env_data, sizeof env_data, "XDG_DATA_HOME=%s", data);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    const char *env[] = {env_data, tmpenv, "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY",
                         NULL};
    const char *argv[] = {testlib_cdpgate_bin(), "--port", rules, "--grant", grant,
                          "--confirm", "echo '{\"decision\":\"allow\"}'", "--control-fd", "3",
                          "--evidence", evdir, "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, true)))
        return;
    testlib_mcp_init(&c, "evidence");
    char url[300], args[400], nick[16], pw[16], save[16];
    testlib_world_url(&world, url, sizeof url, "bank.test", "/bank/evidence.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    char *r = testlib_mcp_tool(&c, 2, "browser_open", args);
    CHECK_HAS(r, "auth=yes");
    free(r);
    r = testlib_mcp_tool(&c, 3, "browser_snapshot", "{}");
    testlib_mcp_ref(r, "Nickname", nick, sizeof nick);
    testlib_mcp_ref(r, "Password", pw, sizeof pw);
    free(r);
    /* Confirmed (an authenticated page): allowed. */
    snprintf(args, sizeof args, "{\"ref\":\"%s\",\"text\":\"Alice B\"}", nick);
    r = testlib_mcp_tool(&c, 4, "browser_type", args);
    CHECK_LACKS(r, "\"isError\":true");
    free(r);
    /* The agent never types into a password field. */
    snprintf(args, sizeof args, "{\"ref\":\"%s\",\"text\":\"guess-1234\"}", pw);
    r = testlib_mcp_tool(&c, 5, "browser_type", args);
    CHECK_HAS(r, "\"isError\":true");
    free(r);
    /* The human takes over and types the password. */
    char ep[200];
    endpoint_of(tmp, ep, sizeof ep);
    CHECK(write(c.fd3_w, "takeover\n", 9) == 9);
    CHECK(testlib_child_stderr_wait(&c, "control is with the human", 5000));
    if (CHECK(*ep))
        human_types_password(ep);
    CHECK(write(c.fd3_w, "release\n", 8) == 8);
    CHECK(testlib_child_stderr_wait(&c, "control is with the agent", 5000));
    r = testlib_mcp_tool(&c, 6, "browser_snapshot", "{}");
    testlib_mcp_ref(r, "Save settings", save, sizeof save);
    free(r);
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", save);
    r = testlib_mcp_tool(&c, 7, "browser_click", args);
    CHECK_LACKS(r, "\"isError\":true");
    free(r);
    close(c.in);
    c.in = -1;
    CHECK(testlib_child_stderr_wait(&c, "final digest", 20000));
    testlib_child_free(&c);

    char sdir[800];
    if (!session_dir(evdir, sdir, sizeof sdir))
        return;
    evidence_report rep;
    evidence_err ee = {0};
    if (!CHECK_INT(0, evidence_verify(sdir, &rep, &ee)))
        test_fail_detail("%s", ee.msg);
    CHECK(rep.files >= 3);
    static const char *const SECRETS[] = {FIXTURE_BANK_SESSION, FIXTURE_BANK_PREF,
                                          FIXTURE_BANK_TOKEN, HUMAN_PW_A HUMAN_PW_B,
                                          "bank_pref%3D" FIXTURE_BANK_PREF, NULL};
    for (size_t i = 0; SECRETS[i]; i++)
        check_dir_lacks(sdir, SECRETS[i]);
    size_t n = 0;
    char *recs = slurp(sdir, "records.jsonl", &n);
    CHECK(count_records(recs, "action", "\"tool\":\"open\"") == 1);
    CHECK(count_records(recs, "action", "\"tool\":\"type\",\"ref\"") == 2);
    CHECK(count_records(recs, "action", "\"name\":\"Nickname\"") == 1);
    CHECK(count_records(recs, "action", "\"text\":\"Alice B\",\"decision\":\"allow\"") == 1);
    CHECK(count_records(recs, "action", "\"ok\":false") == 1);
    CHECK(count_records(recs, "action", "\"tool\":\"click\"") == 1);
    CHECK(count_records(recs, "action", "\"name\":\"Save settings\"") == 1);
    CHECK(count_records(recs, "takeover", "\"event\":\"start\"") == 1);
    CHECK(count_records(recs, "takeover", "\"event\":\"end\"") == 1);
    CHECK(count_records(recs, "console", "[secret]") >= 1);
    CHECK(count_records(recs, "console", "debug cookie=") == 1);
    CHECK(count_records(recs, "navigation", "evidence.html") >= 1);
    CHECK(count_records(recs, "network", "evidence.html") >= 1);
    CHECK(count_records(recs, "gate", "\"decision\":\"allow\"") >= 3);
    CHECK(count_records(recs, "shot", "(click); secret fields masked: 1") == 1);
    CHECK(count_records(recs, "shot", NULL) >= 4);
    free(recs);
    char *m = slurp(sdir, "manifest.json", &n);
    CHECK_HAS(m, "\"viewport\":");
    CHECK_HAS(m, "\"browser\":");
    CHECK_HAS(m, "\"cdpgate\":");
    free(m);
    /* Tampering is found on the real folder too. */
    char *raw = slurp(sdir, "records.jsonl", &n);
    char *p = raw ? strstr(raw, "Alice B") : NULL;
    if (CHECK(p)) {
        p[0] = 'M';
        put(sdir, "records.jsonl", raw, n);
        check_broken(sdir, "edited", 0);
    }
    free(raw);
}

/* `cdpgate --evidence DIR replay TRAIL`: a trail recorded by a command is
 * played with evidence: the folder verifies and holds the replay's result,
 * the gate's decision on its step, the navigation and a screenshot. */
static void t_cli_replay(void)
{
    if (!testlib_need_browser() || !testlib_need_cdpgate())
        return;
    char trail[600], grant[600], evdir[600], url[300], cmd[3000], origin[128];
    snprintf(trail, sizeof trail, "%s/ev.trail", world.root);
    snprintf(grant, sizeof grant, "%s/grant-replay.json", world.root);
    snprintf(evdir, sizeof evdir, "%s/evidence-replay", world.root);
    testlib_world_url(&world, url, sizeof url, "shop.test", "/replay/record-shop.html");
    testlib_world_origin(&world, origin, sizeof origin, "shop.test");
    FILE *f = fopen(grant, "w");
    if (!CHECK(f != NULL))
        return;
    fprintf(f, "{\"task\":\"replay-evidence\",\"principal\":\"test\",\"origins\":[\"%s\"]}\n",
            origin);
    fclose(f);
    snprintf(cmd, sizeof cmd, "env -u CDPGATE_KEY_CMD -u DISPLAY -u WAYLAND_DISPLAY "
             "XDG_DATA_HOME='%s/replaydata' '%s' '--browser-arg=%s' --record '%s' snapshot '%s' "
             ">/dev/null 2>&1", world.root, testlib_cdpgate_bin(), FIXTURE_HOST_RULES, trail,
             url);
    int st = system(cmd);
    if (!CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        return;
    snprintf(cmd, sizeof cmd, "env -u CDPGATE_KEY_CMD -u DISPLAY -u WAYLAND_DISPLAY "
             "XDG_DATA_HOME='%s/replaydata' '%s' '--browser-arg=%s' --grant '%s' --evidence '%s' "
             "replay '%s' >/dev/null 2>'%s/replay.err'", world.root, testlib_cdpgate_bin(),
             FIXTURE_HOST_RULES, grant, evdir, trail, world.root);
    st = system(cmd);
    if (!CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        char p[700];
        snprintf(p, sizeof p, "%s/replay.err", world.root);
        char *e = test_read_file(p, NULL);
        test_fail_detail("%s", e ? e : "");
        free(e);
    }
    char sdir[800];
    if (!session_dir(evdir, sdir, sizeof sdir))
        return;
    evidence_err ee = {0};
    if (!CHECK_INT(0, evidence_verify(sdir, NULL, &ee)))
        test_fail_detail("%s", ee.msg);
    size_t n = 0;
    char *recs = slurp(sdir, "records.jsonl", &n);
    CHECK(count_records(recs, "session", "\"command\":\"replay\"") == 1);
    CHECK(count_records(recs, "replay", "\"result\":") == 1);
    CHECK(count_records(recs, "gate", "\"action\":\"open\"") >= 1);
    CHECK(count_records(recs, "navigation", "record-shop.html") >= 1);
    CHECK(count_records(recs, "shot", "(replay)") == 1);
    free(recs);
}

/* axe-core as tests/setup.sh installs it (tests/peers), absolute, into
 * out; false after test_skip when it is not there. */
static bool axe_file(char *out, size_t cap)
{
    char cwd[400];
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = 0;
    snprintf(out, cap, "%s/tests/peers/node_modules/axe-core/axe.min.js", cwd);
    if (access(out, R_OK) == 0)
        return true;
    test_skip("axe-core is not installed in tests/peers (sh tests/setup.sh)");
    return false;
}

/* The a11y fixture's password value (tests/fixtures/a11y/index.html):
 * never in the evidence. */
#define A11Y_PLANT "pw-planted-4242"

/* The viewer steps to the a11y record: its rules and links to its reports
 * (JSON text of what the page shows, new). */
static char *viewer_a11y(const char *sdir)
{
    cdp_browser *b = testlib_world_browser(&world);
    if (!b)
        return NULL;
    cdp_err ce = {0};
    cdp_page *p = cdp_page_open(b, 10000, &ce);
    if (!CHECK(p))
        return NULL;
    char url[1000];
    snprintf(url, sizeof url, "file://%s/index.html", sdir);
    char *out = NULL;
    static const char EXPR[] =
        "(() => { const bs = [...document.querySelectorAll('#list button')]; "
        "const b = bs.find(x => x.textContent.startsWith('a11y ')); if (!b) return 'none'; "
        "b.click(); return JSON.stringify({item: b.textContent, "
        "links: [...document.querySelectorAll('#rec a')].map(a => a.getAttribute('href')), "
        "text: document.querySelector('#rec').textContent}); })()";
    if (!CHECK_INT(0, cdp_page_navigate(p, url, 10000, &ce)) ||
        !CHECK_INT(0, cdp_page_eval(p, EXPR, 10000, &out, &ce)))
        test_fail_detail("%s", ce.msg);
    cdp_page_free(p);
    return out;
}

/* `cdpgate --evidence DIR a11y URL -o OUT` (issue 16, point 3's "the axe
 * results"): the scan of the a11y fixture (a frame from b.test) is a
 * record of kind a11y with its summary, its two reports copied into the
 * folder (the same bytes as OUT's: nothing to scrub there) and hashed;
 * the manifest names axe's version; the folder verifies, an edited report
 * is found; the viewer shows the rules and links the reports; the
 * password field's value is in no file. */
static void t_cli_a11y(void)
{
    char axe[600];
    if (!testlib_need_browser() || !testlib_need_cdpgate() || !axe_file(axe, sizeof axe))
        return;
    char evdir[600], out[600], url[300], cmd[4000];
    snprintf(evdir, sizeof evdir, "%s/evidence-a11y", world.root);
    snprintf(out, sizeof out, "%s/a11y-out", world.root);
    testlib_world_url(&world, url, sizeof url, "a.test", "/a11y/index.html");
    snprintf(cmd, sizeof cmd, "env -u CDPGATE_KEY_CMD -u DISPLAY -u WAYLAND_DISPLAY "
             "XDG_DATA_HOME='%s/a11ydata' '%s' '--browser-arg=%s' --browser-arg=--site-per-process "
             "--evidence '%s' a11y '%s' -o '%s' --axe '%s' >'%s/a11y.out' 2>'%s/a11y.err'",
             world.root, testlib_cdpgate_bin(), FIXTURE_HOST_RULES, evdir, url, out, axe,
             world.root, world.root);
    int st = system(cmd);
    if (!CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        char p[700];
        snprintf(p, sizeof p, "%s/a11y.err", world.root);
        char *e = test_read_file(p, NULL);
        test_fail_detail("%s", e ? e : "");
        free(e);
    }
    char sdir[800];
    if (!session_dir(evdir, sdir, sizeof sdir))
        return;
    evidence_report rep;
    evidence_err ee = {0};
    if (!CHECK_INT(0, evidence_verify(sdir, &rep, &ee)))
        test_fail_detail("%s", ee.msg);
    CHECK(rep.files >= 3);  /* the shot after the open, the two reports */
    size_t n = 0;
    char *recs = slurp(sdir, "records.jsonl", &n);
    CHECK(count_records(recs, "session", "\"command\":\"a11y\"") == 1);
    CHECK(count_records(recs, "action", "\"tool\":\"open\"") == 1);
    CHECK(count_records(recs, "a11y", "\"violations\":{\"rules\":4,\"elements\":6") == 1);
    CHECK(count_records(recs, "a11y", "\"axe\":\"4.14.1\"") == 1);
    CHECK(count_records(recs, "a11y", "/a11y/index.html") == 1);
    CHECK(count_records(recs, "a11y", "\"file\":\"a11y-0001.json\",\"sha256\":") == 1);
    CHECK(count_records(recs, "a11y", "\"file\":\"a11y-0001.html\",\"sha256\":") == 1);
    free(recs);
    char *m = slurp(sdir, "manifest.json", &n);
    CHECK_HAS(m, "\"axe\":\"4.14.1\"");
    free(m);
    /* The copies are the reports -o wrote, byte for byte. */
    size_t a = 0, b = 0;
    char *mine = slurp(sdir, "a11y-0001.json", &a), *theirs = slurp(out, "a11y.json", &b);
    CHECK(mine && theirs && a == b && memcmp(mine, theirs, a) == 0);
    CHECK_HAS(mine, "\"target\":[\"#inner\",\"#nameless\"]");
    free(mine);
    free(theirs);
    check_dir_lacks(sdir, A11Y_PLANT);
    char *v = viewer_a11y(sdir);
    CHECK_HAS(v, "rules, 6 elements");
    CHECK_HAS(v, "button-name [critical] WCAG 4.1.2: 1 element(s)");
    CHECK_HAS(v, "a11y-0001.html");
    CHECK_HAS(v, "a11y-0001.json");
    free(v);
    char *h = slurp(sdir, "a11y-0001.html", &n);
    char *at = h ? strstr(h, "button-name") : NULL;
    if (CHECK(at)) {
        at[0] = 'B';
        put(sdir, "a11y-0001.html", h, n);
        check_broken(sdir, "a11y-0001.html does not match its sha256", 0);
    }
    free(h);
}

/* Red team s16, R6-2 (regression, the evidence's half): the evidence
 * folder's copies of an a11y scan's reports held the page's URL as axe
 * read it (location.href), token and fragment included, while the a11y
 * record beside them showed it redacted. The copies now hold it as the
 * record does (cli/evid.c report_url_shown), whatever the report at its
 * source holds (-o's files: a11y/, test_a11y red6_a11y_url_token). */
static void t_red6_evid_a11y_url(void)
{
    char axe[600];
    if (!testlib_need_browser() || !testlib_need_cdpgate() || !axe_file(axe, sizeof axe))
        return;
    char evdir[600], out[600], url[300], cmd[4000];
    snprintf(evdir, sizeof evdir, "%s/evidence-red6", world.root);
    snprintf(out, sizeof out, "%s/red6-out", world.root);
    testlib_world_url(&world, url, sizeof url, "a.test",
                      "/a11y/csp.html?reset_token=TOKLEAK5x9Qm2vB7kP4w#access_token=FRAGLEAK8Jq3Zt6Yw1Rv");
    snprintf(cmd, sizeof cmd, "env -u CDPGATE_KEY_CMD -u DISPLAY -u WAYLAND_DISPLAY "
             "XDG_DATA_HOME='%s/a11ydata' '%s' '--browser-arg=%s' "
             "--evidence '%s' a11y '%s' -o '%s' --axe '%s' >'%s/red6.out' 2>'%s/red6.err'",
             world.root, testlib_cdpgate_bin(), FIXTURE_HOST_RULES, evdir, url, out, axe,
             world.root, world.root);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char sdir[800];
    if (!session_dir(evdir, sdir, sizeof sdir))
        return;
    size_t n = 0;
    char *recs = slurp(sdir, "records.jsonl", &n);
    CHECK(count_records(recs, "a11y", "/a11y/csp.html") == 1);
    CHECK_LACKS(recs, "TOKLEAK5x9Qm2vB7kP4w");     /* the record: redacted */
    free(recs);
    check_dir_lacks(sdir, "TOKLEAK5x9Qm2vB7kP4w");  /* the report copies: raw */
    check_dir_lacks(sdir, "FRAGLEAK8Jq3Zt6Yw1Rv");
    /* The copies name the page as the record does. */
    char *h = slurp(sdir, "a11y-0001.html", &n);
    CHECK_HAS(h, "/a11y/csp.html?reset_token=[redacted]");
    free(h);
}


/* Red team s16, R6-4 (regression): a key pressed into a secret field (a
 * card number entered one browser_press at a time into an
 * autocomplete=cc-number field, which the gate lets the agent fill) was
 * written as the action record's "key"; trails dropped it (R4-2). Now
 * the evidence keeps the trail's rule (snap_step_key_kept): "[not
 * recorded]". */
static void t_red6_evid_keys_secret(void)
{
    if (!testlib_need_browser() || !testlib_need_cdpgate())
        return;
    char evdir[500], rules[200], data[500], env_data[600];
    snprintf(evdir, sizeof evdir, "%s/evidence-red6keys", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    snprintf(data, sizeof data, "%s/red6data", world.root);
    mkdir(data, 0700);
    snprintf(env_data, sizeof env_data, "XDG_DATA_HOME=%s", data);
    const char *env[] = {env_data, "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY", NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--evidence", evdir, "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "evidence");
    char url[300], args[400], cc[16];
    testlib_world_url(&world, url, sizeof url, "a.test", "/a11y/red6-keys.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    free(testlib_mcp_tool(&c, 2, "browser_open", args));
    char *r = testlib_mcp_tool(&c, 3, "browser_snapshot", "{}");
    testlib_mcp_ref(r, "Card number", cc, sizeof cc);
    free(r);
    snprintf(args, sizeof args, "{\"ref\":\"%s\"}", cc);
    free(testlib_mcp_tool(&c, 4, "browser_click", args));
    static const char *const KEYS[] = {"4", "9", "1", "7"};
    for (int i = 0; i < 4; i++) {
        snprintf(args, sizeof args, "{\"key\":\"%s\"}", KEYS[i]);
        r = testlib_mcp_tool(&c, 5 + i, "browser_press", args);
        CHECK_LACKS(r, "\"isError\":true");     /* the gate lets the agent fill it */
        free(r);
    }
    close(c.in);
    c.in = -1;
    CHECK(testlib_child_stderr_wait(&c, "final digest", 20000));
    testlib_child_free(&c);
    char sdir[800];
    if (!session_dir(evdir, sdir, sizeof sdir))
        return;
    size_t n = 0;
    char *recs = slurp(sdir, "records.jsonl", &n);
    CHECK(count_records(recs, "action", "\"tool\":\"press\"") == 4);
    /* No press into the secret field keeps its key. */
    int keyed = count_records(recs, "action", "\"key\":\"9\"") +
                count_records(recs, "action", "\"key\":\"7\"");
    if (!CHECK_INT(0, keyed))
        test_fail_detail("card digits pressed into a cc-number field are in records.jsonl");
    CHECK(count_records(recs, "action", "\"secret_field\":true") >= 4);
    CHECK_INT(4, count_records(recs, "action", "\"key\":\"[not recorded]\""));
    free(recs);
}

/* The human, through a second DevTools client, opens url in the tab whose
 * URL holds needle (a person following a link or a GET form). */
static void human_opens(const char *endpoint, const char *needle, const char *url)
{
    cdp_err e = {0};
    cdp_browser *h = cdp_browser_connect(endpoint, NULL, 10000, &e);
    if (!CHECK(h != NULL)) {
        test_fail_detail("second client: %s", e.msg);
        return;
    }
    cdp_conn *c = cdp_browser_conn(h);
    char target[128] = "", session[128] = "";
    cdp_reply rep;
    if (cdp_call(c, NULL, "Target.getTargets", NULL, 5000, &rep, &e) == 0) {
        for (const json_val *ti = json_first(json_get(rep.result, "targetInfos")); ti;
             ti = json_next(ti)) {
            const char *u = json_get_str(ti, "url");
            if (u && strstr(u, needle))
                snprintf(target, sizeof target, "%s", json_get_str(ti, "targetId"));
        }
        cdp_reply_free(&rep);
    }
    char params[800];
    snprintf(params, sizeof params, "{\"targetId\":\"%s\",\"flatten\":true}", target);
    if (CHECK(*target) && cdp_call(c, NULL, "Target.attachToTarget", params, 5000, &rep, &e) == 0) {
        snprintf(session, sizeof session, "%s", json_get_str(rep.result, "sessionId"));
        cdp_reply_free(&rep);
    }
    snprintf(params, sizeof params, "{\"url\":\"%s\"}", url);
    if (CHECK(*session) && CHECK_INT(0, cdp_call(c, session, "Page.navigate", params, 10000,
                                                 &rep, &e)))
        cdp_reply_free(&rep);
    cdp_browser_free(h);
}

/* Red team s16, R6-6 (regression): while the person held control (a
 * takeover), the evidence recorded the navigations and every response's
 * URL with its path and query, by the agent's URL rule, where the audit
 * log (human mode) withholds path and query ("a person opens what carries
 * a bearer secret there": review F3). A 6-digit code in an email
 * verification link (?code=, a weak key: a value under 8 characters is
 * kept) reached records.jsonl. Now the person's session (until the
 * agent's next call: their navigation's events may come after the
 * release) is recorded by origin ("during_takeover"), and the page they
 * opened is scrubbed from the agent's later records (the audit of its
 * first read names that page's URL). */
static void t_red6_evid_human_urls(void)
{
    if (!testlib_need_browser() || !testlib_need_cdpgate())
        return;
    char tmp[500], tmpenv[600], evdir[500], rules[200], data[500], env_data[600];
    snprintf(tmp, sizeof tmp, "%s/red6tmp", world.root);
    mkdir(tmp, 0700);
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmp);
    snprintf(evdir, sizeof evdir, "%s/evidence-red6human", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    snprintf(data, sizeof data, "%s/red6hdata", world.root);
    mkdir(data, 0700);
    snprintf(env_data, sizeof env_data, "XDG_DATA_HOME=%s", data);
    const char *env[] = {env_data, tmpenv, "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY",
                         NULL};
    char grant[600], origin[128];
    snprintf(grant, sizeof grant, "%s/grant-red6human.json", world.root);
    testlib_world_origin(&world, origin, sizeof origin, "a.test");
    FILE *gf = fopen(grant, "w");
    if (!CHECK(gf != NULL))
        return;
    fprintf(gf, "{\"task\":\"red6-human\",\"origins\":[\"%s\"]}\n", origin);
    fclose(gf);
    const char *argv[] = {testlib_cdpgate_bin(), "--port", rules, "--grant", grant,
                          "--control-fd", "3", "--evidence", evdir, "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, true)))
        return;
    testlib_mcp_init(&c, "evidence");
    char url[300], args[400], verify[300];
    testlib_world_url(&world, url, sizeof url, "a.test", "/a11y/csp.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    free(testlib_mcp_tool(&c, 2, "browser_open", args));
    char ep[200];
    endpoint_of(tmp, ep, sizeof ep);
    CHECK(write(c.fd3_w, "takeover\n", 9) == 9);
    CHECK(testlib_child_stderr_wait(&c, "control is with the human", 5000));
    testlib_world_url(&world, verify, sizeof verify, "a.test",
                      "/a11y/frame.html?email=alice%40example.test&code=482913");
    if (CHECK(*ep))
        human_opens(ep, "/a11y/csp.html", verify);
    CHECK(write(c.fd3_w, "release\n", 8) == 8);
    CHECK(testlib_child_stderr_wait(&c, "control is with the agent", 5000));
    /* The agent reads the tab: every event before it was handled. */
    char *r = testlib_mcp_tool(&c, 3, "browser_snapshot", "{}");
    CHECK_HAS(r, "frame.html");
    free(r);
    close(c.in);
    c.in = -1;
    CHECK(testlib_child_stderr_wait(&c, "final digest", 20000));
    testlib_child_free(&c);
    char sdir[800];
    if (!session_dir(evdir, sdir, sizeof sdir))
        return;
    size_t n = 0;
    char *recs = slurp(sdir, "records.jsonl", &n);
    CHECK(count_records(recs, "takeover", "\"event\":\"start\"") == 1);
    /* The audit's own line for the person's navigation withholds the path. */
    CHECK(count_records(recs, "gate", "path and query withheld") >= 1);
    CHECK_INT(0, count_records(recs, "navigation", "482913"));
    CHECK_INT(0, count_records(recs, "network", "482913"));
    /* The person's navigation is there, by its origin; the agent's own
     * before the takeover keeps its path. */
    CHECK(count_records(recs, "navigation", "(path and query withheld)\",\"during_takeover\""
                        ":true") >= 1);
    CHECK(count_records(recs, "navigation", "/a11y/csp.html") >= 1);
    free(recs);
    check_dir_lacks(sdir, "482913");
    check_dir_lacks(sdir, "frame.html?email");
}

/* browser_a11y_scan under `cdpgate mcp --evidence` (no --a11y-dir): the
 * scan is an a11y record, its reports are in the evidence folder only. */
static void t_mcp_a11y(void)
{
    char axe[600];
    if (!testlib_need_browser() || !testlib_need_cdpgate() || !axe_file(axe, sizeof axe))
        return;
    char grant[600], evdir[600], origin[128], url[300], args[400];
    snprintf(grant, sizeof grant, "%s/grant-a11y.json", world.root);
    snprintf(evdir, sizeof evdir, "%s/evidence-mcp-a11y", world.root);
    testlib_world_origin(&world, origin, sizeof origin, "a.test");
    FILE *f = fopen(grant, "w");
    if (!CHECK(f != NULL))
        return;
    fprintf(f, "{\"task\":\"a11y-mcp\",\"principal\":\"test\",\"tools\":[\"open\",\"snapshot\","
            "\"screenshot\",\"a11y_scan\"],\"origins\":[\"%s\"]}\n", origin);
    fclose(f);
    char env_axe[700], env_data[700], rules[200];
    snprintf(env_axe, sizeof env_axe, "CDPGATE_AXE=%s", axe);
    snprintf(env_data, sizeof env_data, "XDG_DATA_HOME=%s/mcpa11ydata", world.root);
    snprintf(rules, sizeof rules, "--browser-arg=%s", FIXTURE_HOST_RULES);
    const char *env[] = {env_axe, env_data, "CDPGATE_KEY_CMD", "DISPLAY", "WAYLAND_DISPLAY",
                         NULL};
    const char *argv[] = {testlib_cdpgate_bin(), rules, "--grant", grant, "--evidence", evdir,
                          "mcp", NULL};
    child c;
    if (!CHECK_INT(0, testlib_child_spawn(&c, world.root, env, argv, false)))
        return;
    testlib_mcp_init(&c, "evidence-a11y");
    testlib_world_url(&world, url, sizeof url, "a.test", "/a11y/csp.html");
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    free(testlib_mcp_tool(&c, 2, "browser_open", args));
    char *r = testlib_mcp_tool(&c, 3, "browser_a11y_scan", "{}");
    CHECK_HAS(r, "image-alt [critical] WCAG 1.1.1: 1 element");
    CHECK_HAS(r, "No report files");
    free(r);
    close(c.in);
    c.in = -1;
    CHECK(testlib_child_stderr_wait(&c, "final digest", 20000));
    testlib_child_free(&c);
    char sdir[800];
    if (!session_dir(evdir, sdir, sizeof sdir))
        return;
    evidence_report rep;
    evidence_err ee = {0};
    if (!CHECK_INT(0, evidence_verify(sdir, &rep, &ee)))
        test_fail_detail("%s", ee.msg);
    size_t n = 0;
    char *recs = slurp(sdir, "records.jsonl", &n);
    CHECK(count_records(recs, "a11y", "\"violations\":{\"rules\":1,\"elements\":1") == 1);
    CHECK(count_records(recs, "a11y", "csp.html") == 1);
    CHECK(count_records(recs, "gate", "a11y_scan") >= 1);
    free(recs);
    char *j = slurp(sdir, "a11y-0001.json", &n);
    CHECK_HAS(j, "\"id\":\"image-alt\"");
    free(j);
}

/* Run `cdpgate ARGS` (shell words) with --evidence EVDIR before them;
 * its exit status, stdout into out (new). */
static int oneshot(const char *evdir, const char *args, char **out)
{
    char cmd[4000], p[700];
    snprintf(cmd, sizeof cmd, "env -u CDPGATE_KEY_CMD -u DISPLAY -u WAYLAND_DISPLAY "
             "XDG_DATA_HOME='%s/oneshotdata' '%s' '--browser-arg=%s' --evidence '%s' %s "
             ">'%s/oneshot.out' 2>'%s/oneshot.err'", world.root, testlib_cdpgate_bin(),
             FIXTURE_HOST_RULES, evdir, args, world.root, world.root);
    int st = system(cmd);
    snprintf(p, sizeof p, "%s/oneshot.out", world.root);
    *out = test_read_file(p, NULL);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (rc != 0) {
        snprintf(p, sizeof p, "%s/oneshot.err", world.root);
        char *e = test_read_file(p, NULL);
        fprintf(stderr, "cdpgate %s: exit %d: %s\n", args, rc, e ? e : "");
        free(e);
    }
    return rc;
}

/* The session folder under evdir, verified; its records (new) or NULL. */
static char *verified_records(const char *evdir, char *sdir, size_t cap)
{
    if (!session_dir(evdir, sdir, cap))
        return NULL;
    evidence_err ee = {0};
    if (!CHECK_INT(0, evidence_verify(sdir, NULL, &ee)))
        test_fail_detail("%s", ee.msg);
    return slurp(sdir, "records.jsonl", NULL);
}

/* --evidence on the one-shot commands (issue 16, point 3): snapshot,
 * screenshot and eval (under a grant) each record the open (an action,
 * with the gate's decision and a shot) and their own output: the
 * snapshot's text as a file, the screenshot's image (the same bytes as
 * -o's), the eval's expression and value; eval without a grant refuses
 * --evidence. */
static void t_cli_oneshot(void)
{
    if (!testlib_need_browser() || !testlib_need_cdpgate())
        return;
    char url[300], args[1200], evdir[600], sdir[800], origin[128], grant[600], *out = NULL;
    testlib_world_url(&world, url, sizeof url, "shop.test", "/replay/record-shop.html");
    snprintf(evdir, sizeof evdir, "%s/ev-snapshot", world.root);
    snprintf(args, sizeof args, "snapshot '%s'", url);
    CHECK_INT(0, oneshot(evdir, args, &out));
    char *recs = verified_records(evdir, sdir, sizeof sdir);
    CHECK(count_records(recs, "session", "\"command\":\"snapshot\"") == 1);
    CHECK(count_records(recs, "action", "\"tool\":\"open\"") == 1);
    CHECK(count_records(recs, "snapshot", "\"file\":\"snapshot-0001.txt\"") == 1);
    char *txt = slurp(sdir, "snapshot-0001.txt", NULL);
    CHECK(txt && out && strncmp(out, txt, strlen(txt)) == 0);
    free(txt);
    free(recs);
    free(out);

    snprintf(evdir, sizeof evdir, "%s/ev-screenshot", world.root);
    snprintf(args, sizeof args, "screenshot '%s' -o '%s/shot.png'", url, world.root);
    CHECK_INT(0, oneshot(evdir, args, &out));
    free(out);
    recs = verified_records(evdir, sdir, sizeof sdir);
    CHECK(count_records(recs, "shot", "the screenshot command's image") == 1);
    CHECK(count_records(recs, "shot", "(open)") == 1);
    size_t a = 0, b = 0;
    char *img = slurp(sdir, "shot-0002.png", &a), *mine = slurp(world.root, "shot.png", &b);
    CHECK(img && mine && a == b && memcmp(img, mine, a) == 0);
    free(img);
    free(mine);
    free(recs);

    testlib_world_origin(&world, origin, sizeof origin, "shop.test");
    snprintf(grant, sizeof grant, "%s/grant-eval.json", world.root);
    FILE *f = fopen(grant, "w");
    if (!CHECK(f != NULL))
        return;
    fprintf(f, "{\"task\":\"eval-evidence\",\"principal\":\"test\",\"tools\":[\"open\","
            "\"snapshot\",\"screenshot\",\"eval\"],\"origins\":[\"%s\"]}\n", origin);
    fclose(f);
    snprintf(evdir, sizeof evdir, "%s/ev-eval", world.root);
    snprintf(args, sizeof args, "--grant '%s' --confirm \"echo '{\\\"decision\\\":\\\"allow\\\"}'\" "
             "eval '%s' 'document.title + \"!\"'", grant, url);
    CHECK_INT(0, oneshot(evdir, args, &out));
    CHECK_HAS(out, "!");
    free(out);
    recs = verified_records(evdir, sdir, sizeof sdir);
    CHECK(count_records(recs, "action", "\"tool\":\"eval\"") == 1);
    CHECK(count_records(recs, "action", "\"expression\":\"document.title + \\\"!\\\"\"") == 1);
    CHECK(count_records(recs, "action", "\"result\":{") == 1);
    CHECK(count_records(recs, "shot", "(eval)") == 1);
    free(recs);
    /* Without a grant eval is outside the agent: --evidence is refused. */
    snprintf(evdir, sizeof evdir, "%s/ev-eval-nogrant", world.root);
    snprintf(args, sizeof args, "eval '%s' '1+1'", url);
    CHECK_INT(2, oneshot(evdir, args, &out));
    free(out);
}

static const test_case TESTS[] = {
    {"chain_verifies", t_chain_verifies},
    {"tamper_edited", t_tamper_edited},
    {"tamper_removed", t_tamper_removed},
    {"tamper_reordered", t_tamper_reordered},
    {"tamper_tail", t_tamper_tail},
    {"tamper_files", t_tamper_files},
    {"secret_structure", t_secret_structure},
    {"secret_short_structure", t_secret_short_structure},
    {"put_files", t_put_files},
    {"secret_escaped", t_secret_escaped},
    {"verify_limits", t_verify_limits},
    {"viewer_offline", t_viewer_offline},
    {"mcp_session", t_mcp_session},
    {"cli_replay", t_cli_replay},
    {"cli_a11y", t_cli_a11y},
    {"red6_evid_a11y_url", t_red6_evid_a11y_url},
    {"red6_evid_keys_secret", t_red6_evid_keys_secret},
    {"red6_evid_human_urls", t_red6_evid_human_urls},
    {"mcp_a11y", t_mcp_a11y},
    {"cli_oneshot", t_cli_oneshot},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    static const char *const ARGS[] = {FIXTURE_HOST_RULES, NULL};
    if (testlib_world_up(&world, "evidence", ARGS, false) != 0)
        return 1;
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
