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
#include "tests/harness.h"
#include "tests/testlib.h"
#include "base/base.h"

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

static const test_case TESTS[] = {
    {"chain_verifies", t_chain_verifies},
    {"tamper_edited", t_tamper_edited},
    {"tamper_removed", t_tamper_removed},
    {"tamper_reordered", t_tamper_reordered},
    {"tamper_tail", t_tamper_tail},
    {"tamper_files", t_tamper_files},
    {"secret_structure", t_secret_structure},
    {"verify_limits", t_verify_limits},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (testlib_world_up(&world, "evidence", NULL, false) != 0)
        return 1;
    int rc = test_main(argc, argv, TESTS);
    testlib_world_down(&world);
    return rc;
}
