/*
 * verify.c — `cdpgate evidence verify DIR`: is the record set the one that
 * was written? Each line is checked against its own digest and its
 * predecessor's hash, its number against its place, the files it names
 * against their digests, and the chain's end against manifest.json. An
 * edited record fails its digest; a removed or reordered one breaks n and
 * prev; a removed tail disagrees with the manifest's count and final
 * digest. (Whoever can rewrite the whole folder can rebuild a chain: the
 * final digest printed at the end of the session, kept elsewhere, is what
 * pins it; docs/evidence.md.)
 *
 * The input is outside data: sizes are capped (EVIDENCE_* limits), each
 * line is parsed strictly, messages name the line and the check, never a
 * value. The checks are pure (evidence_verify_buf); evidence_verify reads
 * the folder.
 */
#include "evidence/evidence_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIGEST_KEY ",\"digest\":\""

static bool hex64(const char *s, size_t n)
{
    if (n != EVIDENCE_HEX_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* A file name in the folder: [A-Za-z0-9._-], not starting with a dot. */
static bool plain_name(const char *s, size_t n)
{
    if (n == 0 || n > 255 || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

typedef struct {
    evidence_file_fn file_fn;
    void *ud;
    evidence_report *out;
    evidence_err *err;
    char prev[EVIDENCE_HEX_LEN + 1];
} vstate;

/* One named file (file, sha256 of item: the record, or an item of its
 * "files"), checked when in the folder. */
static int check_named(vstate *v, const json_val *item, uint64_t ln)
{
    size_t fn = 0, hn = 0;
    const char *f = json_str(json_get(item, "file"), &fn);
    const char *h = json_str(json_get(item, "sha256"), &hn);
    if (!f && !h)
        return 0;
    if (!f || !h || !hex64(h, hn) || memchr(f, 0, fn))
        return evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: a bad file or sha256 "
                             "field", (unsigned long long)ln);
    if (f[0] == '/') {
        v->out->outside++;
        return 0;
    }
    if (!plain_name(f, fn))
        return evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: a file name that is "
                             "neither in the folder nor absolute", (unsigned long long)ln);
    if (!v->file_fn)
        return 0;
    char got[EVIDENCE_HEX_LEN + 1] = "";
    int r = v->file_fn(v->ud, f, got);
    if (r != 0 || memcmp(got, h, EVIDENCE_HEX_LEN) != 0)
        return evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: the file %s %s",
                             (unsigned long long)ln, f,
                             r > 0 ? "is missing" : r < 0 ? "cannot be read"
                                                          : "does not match its sha256");
    v->out->files++;
    return 0;
}

/* The files a record names: its own file/sha256, then each item of its
 * "files" array (an object with file and sha256; at most 64). */
static int check_file(vstate *v, const json_val *root, uint64_t ln)
{
    int rc = check_named(v, root, ln);
    const json_val *fs = json_get(root, "files");
    if (rc || !fs)
        return rc;
    if (!json_is(fs, JSON_ARRAY) || json_len(fs) > 64)
        return evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: a bad files field",
                             (unsigned long long)ln);
    for (const json_val *it = json_first(fs); it && !rc; it = json_next(it))
        rc = !json_is(it, JSON_OBJECT) || !json_get(it, "file")
                 ? evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: a bad files item",
                                 (unsigned long long)ln)
                 : check_named(v, it, ln);
    return rc;
}

/* One line (no newline) at place ln. */
static int check_line(vstate *v, const char *s, size_t n, uint64_t ln)
{
    size_t kl = strlen(DIGEST_KEY), tail = kl + EVIDENCE_HEX_LEN + 2;
    if (n < tail + 2 || s[n - 1] != '}' || s[n - 2] != '"' ||
        memcmp(s + n - tail, DIGEST_KEY, kl) != 0 ||
        !hex64(s + n - EVIDENCE_HEX_LEN - 2, EVIDENCE_HEX_LEN))
        return evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: no digest at its end",
                             (unsigned long long)ln);
    char d[EVIDENCE_HEX_LEN + 1];
    evidence_hash_hex(s, n - tail, d);
    if (memcmp(d, s + n - EVIDENCE_HEX_LEN - 2, EVIDENCE_HEX_LEN) != 0)
        return evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: its digest does not "
                             "match its bytes (edited)", (unsigned long long)ln);
    json_opts o = {.max_size = EVIDENCE_LINE_MAX, .max_depth = 64,
                   .flags = JSON_NO_DUPLICATES};
    json_doc *doc = json_parse(s, n, &o, NULL);
    const json_val *root = json_doc_root(doc);
    int64_t num = 0;
    size_t pn = 0;
    const char *prev = json_str(json_get(root, "prev"), &pn);
    int rc = 0;
    if (!doc || !json_is(root, JSON_OBJECT) || !json_get_str(root, "kind") ||
        !json_get_str(root, "t"))
        rc = evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: not a record object",
                           (unsigned long long)ln);
    else if (!json_int(json_get(root, "n"), &num) || num < 0 || (uint64_t)num != ln)
        rc = evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: its number is not %llu "
                           "(a record was removed, added or moved)", (unsigned long long)ln,
                           (unsigned long long)ln);
    else if (!prev || pn != EVIDENCE_HEX_LEN || memcmp(prev, v->prev, EVIDENCE_HEX_LEN) != 0)
        rc = evidence_fail(v->err, EVIDENCE_EBROKEN, "record %llu: prev is not the hash of "
                           "the record before it (removed, added or moved)",
                           (unsigned long long)ln);
    else
        rc = check_file(v, root, ln);
    json_doc_free(doc);
    evidence_hash_hex(s, n, v->prev);
    return rc;
}

static int check_manifest(vstate *v, const char *m, size_t mn, uint64_t count)
{
    if (!m)
        return evidence_fail(v->err, EVIDENCE_EBROKEN, "no manifest.json: the session did not "
                             "end, or the manifest was removed (%llu records chain)",
                             (unsigned long long)count);
    if (mn > EVIDENCE_MANIFEST_MAX)
        return evidence_fail(v->err, EVIDENCE_ELIMIT, "manifest.json: over %u bytes",
                             EVIDENCE_MANIFEST_MAX);
    json_opts o = {.max_size = EVIDENCE_MANIFEST_MAX, .max_depth = 8,
                   .flags = JSON_NO_DUPLICATES};
    json_doc *doc = json_parse(m, mn, &o, NULL);
    const json_val *root = json_doc_root(doc);
    const char *fmt = json_get_str(root, "format"), *fin = json_get_str(root, "final");
    int64_t recs = -1;
    int rc = 0;
    if (!doc || !fmt || strcmp(fmt, "cdpgate-evidence/1") != 0)
        rc = evidence_fail(v->err, EVIDENCE_EBROKEN, "manifest.json: not a cdpgate-evidence/1 "
                           "manifest");
    else if (!json_int(json_get(root, "records"), &recs) || recs < 0 ||
             (uint64_t)recs != count)
        rc = evidence_fail(v->err, EVIDENCE_EBROKEN, "manifest.json: it counts %lld records, "
                           "records.jsonl has %llu", (long long)recs, (unsigned long long)count);
    else if (!fin || strcmp(fin, v->prev) != 0)
        rc = evidence_fail(v->err, EVIDENCE_EBROKEN, "manifest.json: its final digest is not "
                           "the hash of the last record");
    json_doc_free(doc);
    return rc;
}

int evidence_verify_buf(const char *records, size_t n, const char *manifest, size_t mn,
                        evidence_file_fn file_fn, void *ud, evidence_report *out,
                        evidence_err *err)
{
    evidence_report dummy;
    out = out ? out : &dummy;
    memset(out, 0, sizeof *out);
    if (err)
        err->line = 0;
    vstate v = {file_fn, ud, out, err, {0}};
    memset(v.prev, '0', EVIDENCE_HEX_LEN);
    if (n > EVIDENCE_FILE_MAX)
        return evidence_fail(err, EVIDENCE_ELIMIT, "records.jsonl: over %zu bytes",
                             EVIDENCE_FILE_MAX);
    uint64_t ln = 0;
    for (size_t b = 0; b < n;) {
        const char *nl = memchr(records + b, '\n', n - b);
        size_t len = nl ? (size_t)(nl - (records + b)) : n - b;
        ln++;
        int rc = 0;
        if (ln > EVIDENCE_RECORDS_MAX)
            rc = evidence_fail(err, EVIDENCE_ELIMIT, "records.jsonl: over %u records",
                               EVIDENCE_RECORDS_MAX);
        else if (len > EVIDENCE_LINE_MAX)
            rc = evidence_fail(err, EVIDENCE_ELIMIT, "record %llu: over %u bytes",
                               (unsigned long long)ln, EVIDENCE_LINE_MAX);
        else if (!nl)
            rc = evidence_fail(err, EVIDENCE_EBROKEN, "record %llu: not terminated (torn)",
                               (unsigned long long)ln);
        else
            rc = check_line(&v, records + b, len, ln);
        if (rc) {
            if (err)
                err->line = ln;
            return rc;
        }
        b += len + 1;
    }
    out->records = ln;
    memcpy(out->final_hex, v.prev, sizeof out->final_hex);
    return check_manifest(&v, manifest, mn, ln);
}

/* The digest of a file of the folder (evidence_file_fn). */
static int folder_file(void *ud, const char *name, char hex[EVIDENCE_HEX_LEN + 1])
{
    size_t n = 0;
    char *buf = evidence_read_file(*(int *)ud, name, EVIDENCE_FILE_MAX, &n);
    if (!buf)
        return errno == ENOENT ? 1 : -1;
    evidence_hash_hex(buf, n, hex);
    free(buf);
    return 0;
}

int evidence_verify(const char *dir, evidence_report *out, evidence_err *err)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return evidence_fail(err, EVIDENCE_EIO, "%s: %s", dir, strerror(errno));
    size_t n = 0, mn = 0;
    char *rec = evidence_read_file(dfd, "records.jsonl", EVIDENCE_FILE_MAX, &n);
    int rc = 0;
    if (!rec)
        rc = evidence_fail(err, errno == EFBIG ? EVIDENCE_ELIMIT : EVIDENCE_EIO,
                           "%s/records.jsonl: %s", dir, strerror(errno));
    char *man = rc ? NULL : evidence_read_file(dfd, "manifest.json", EVIDENCE_MANIFEST_MAX, &mn);
    if (!rc && !man && errno != ENOENT)
        rc = evidence_fail(err, errno == EFBIG ? EVIDENCE_ELIMIT : EVIDENCE_EIO,
                           "%s/manifest.json: %s", dir, strerror(errno));
    if (!rc)
        rc = evidence_verify_buf(rec, n, man, mn, folder_file, &dfd, out, err);
    free(rec);
    free(man);
    close(dfd);
    return rc;
}
