/*
 * evidence.h — a task's session recording as evidence (issue 16, point 3):
 * an append-only, hash-chained JSON Lines record set in one folder, the
 * files it names (screenshots, reports), a manifest, an offline viewer
 * page, and the verifier. docs/evidence.md has the format.
 *
 * The folder (mode 0700) holds:
 *   records.jsonl   one JSON object per line (mode 0600):
 *                   {"n":1,"t":"2026-12-03T15:00:00.123Z","kind":"...",
 *                    ...the kind's fields...,"prev":"<hex>","digest":"<hex>"}
 *                   prev: SHA-256 of the previous line's bytes (without its
 *                   newline); the first line's is 64 zeros. digest: SHA-256
 *                   of the line's bytes before `,"digest":`.
 *   shot-NNNN.png|jpeg, other files a record names ("file" and "sha256")
 *   manifest.json   written at evidence_close: the record count, the final
 *                   digest (SHA-256 of the last line), the metadata
 *   index.html      the viewer: no network, the records embedded
 *
 * Secrets. The host gives every secret it knows (evidence_secret_add: the
 * session values restored or captured); each string a record holds is
 * scrubbed of them byte-exact before it is written ("[secret]"), and the
 * finished line is checked again. Masking page content (secret fields in
 * screenshots, redacted URLs) is the host's job before it hands data here.
 *
 * The writer does its own file I/O (open, append, small files); the line
 * building, the chain and the verifier's checks are pure
 * (evidence_line_seal, evidence_verify_buf). Single-threaded. No global
 * state.
 */
#ifndef CDPGATE_EVIDENCE_H
#define CDPGATE_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json/json.h"

enum {
    EVIDENCE_OK = 0,
    EVIDENCE_ENOMEM = -1,
    EVIDENCE_EIO = -2,       /* a file could not be created, written or read */
    EVIDENCE_EINVAL = -3,    /* a bad argument (kind, key, file name) */
    EVIDENCE_EBROKEN = -4,   /* verify: the chain, a digest or the manifest disagrees */
    EVIDENCE_ELIMIT = -5,    /* verify: over a size limit */
};
const char *evidence_strerror(int code);

typedef struct {
    int code;
    char msg[256];           /* names what failed and why; never a secret */
    uint64_t line;           /* verify: the record line at fault (1-based), 0 none */
} evidence_err;

/* Limits of the verifier (and of what the writer writes). */
#define EVIDENCE_LINE_MAX (1u << 20)              /* bytes of one record line */
#define EVIDENCE_RECORDS_MAX 1000000u             /* lines */
#define EVIDENCE_FILE_MAX ((size_t)256 << 20)     /* records.jsonl, a named file */
#define EVIDENCE_MANIFEST_MAX 65536u              /* manifest.json */
#define EVIDENCE_SECRET_MIN 4u    /* bytes: a shorter value is not scrubbed (docs) */
/* bytes: a secret this long or longer found in a sealed line's own
 * structure (a key, a number, a digest, the time) withholds the record; a
 * shorter one is scrubbed from strings and numbers only ("true", "2026" in
 * every line's structure would withhold every record: docs/evidence.md) */
#define EVIDENCE_SECRET_STRUCT_MIN 8u
#define EVIDENCE_META_MAX 16u

#define EVIDENCE_HEX_LEN 64

/* ---- the chain (pure) ---- */

/* Seal one record: body is the record's JSON object without its closing
 * brace and without prev/digest ("{\"n\":1,...,\"kind\":\"x\""); prev_hex
 * the previous line's hash (64 hex digits). The line (new, no newline) is
 * body + ",\"prev\":\"P\",\"digest\":\"D\"}"; *len its length. NULL when out
 * of memory. */
char *evidence_line_seal(const char *body, size_t n, const char prev_hex[EVIDENCE_HEX_LEN + 1],
                         size_t *len);
/* SHA-256 of n bytes as 64 lower-case hex digits and a NUL. */
void evidence_hash_hex(const void *data, size_t n, char out[EVIDENCE_HEX_LEN + 1]);

/* ---- writing ---- */

typedef struct evidence evidence;

/* Create the folder dir (mode 0700; its parent must exist; an existing dir
 * must be empty) and records.jsonl in it, for task (the grant's task name,
 * or NULL). NULL with err on failure. */
evidence *evidence_open(const char *dir, const char *task, evidence_err *err);
/* Remember a secret to scrub from every text record and every file put
 * with scrub (copied; wiped at close). Values shorter than
 * EVIDENCE_SECRET_MIN bytes are ignored. Each encoding it may appear in is
 * scrubbed too, byte-exact: percent-encoded (encodeURIComponent's, every
 * byte but the unreserved in upper- or lower-case hex, form-encoded with
 * '+'), inside a JSON string (also with "\/"), and
 * HTML-escaped (all of < > & " ', as &#39; or &#x27;; a browser's
 * attribute form & "; its text form & < >). 0 or EVIDENCE_ENOMEM. */
int evidence_secret_add(evidence *e, const char *v, size_t n);
/* Metadata for the manifest (browser, viewport, axe, ...): key and value
 * copied, scrubbed; a key set again is replaced. */
int evidence_meta_set(evidence *e, const char *key, const char *value);
/* The folder's path (borrowed). */
const char *evidence_dir(const evidence *e);
/* How many records were written. */
uint64_t evidence_count(const evidence *e);

/* One record: begin with its kind ([a-z0-9_], at most 32), add fields
 * (keys [a-z0-9_]; not n, t, kind, prev, digest; a string is scrubbed of
 * every secret), end to append it. A record begun and not ended is
 * dropped by the next begin. evidence_rec_end: 0, or a code with err. */
int evidence_rec_begin(evidence *e, const char *kind);
void evidence_rec_str(evidence *e, const char *key, const char *s);
void evidence_rec_strn(evidence *e, const char *key, const char *s, size_t n);
void evidence_rec_int(evidence *e, const char *key, int64_t v);
void evidence_rec_bool(evidence *e, const char *key, bool v);
/* A value the caller built as JSON (every string in it scrubbed here too:
 * it is parsed and written again). */
void evidence_rec_json(evidence *e, const char *key, const char *json, size_t n);
int evidence_rec_end(evidence *e, evidence_err *err);

/* A screenshot (PNG or JPEG by its magic) as the file shot-NNNN.png|jpeg
 * (mode 0600) and a record of kind "shot": file, sha256, bytes, format,
 * and note (what it follows; scrubbed; may be NULL). 0 or a code. */
int evidence_shot(evidence *e, const uint8_t *img, size_t n, const char *note,
                  evidence_err *err);
/* A record of kind naming a file and its SHA-256 (the a11y scan's report:
 * kind "a11y"): name relative to the evidence folder (verified) or an
 * absolute path (recorded, its digest not re-checked by verify). The file
 * is read for its digest. 0 or a code. */
int evidence_file(evidence *e, const char *kind, const char *path, evidence_err *err);

/* A file of the caller's (a report) written into the folder as name (a
 * plain name, [A-Za-z0-9._-], not starting with a dot, not one of the
 * folder's own, and not there yet), mode 0600, all or nothing; with scrub,
 * its bytes are first scrubbed of every secret like a record's strings
 * (text: JSON, HTML). hex gets the SHA-256 of what was written, for the
 * record that names it (as "file" and "sha256", or an item of "files":
 * [{"file","sha256"}]; the verifier checks both). No record is written
 * here. 0 or a code with err. */
int evidence_put(evidence *e, const char *name, const void *data, size_t n, bool scrub,
                 char hex[EVIDENCE_HEX_LEN + 1], evidence_err *err);

/* End the session: manifest.json and index.html written, secrets wiped,
 * e freed (also on failure). final_hex (NULL accepted) gets the final
 * digest. 0 or a code with err. NULL e: 0. */
int evidence_close(evidence *e, char final_hex[EVIDENCE_HEX_LEN + 1], evidence_err *err);

/* ---- verifying ---- */

typedef struct {
    uint64_t records;
    uint64_t files;                      /* named files whose digest was checked */
    uint64_t outside;                    /* named files outside the folder (not checked) */
    char final_hex[EVIDENCE_HEX_LEN + 1];
} evidence_report;

/* The checks on records.jsonl's bytes and manifest.json's (pure; manifest
 * NULL: it is missing, which fails). Each line: at most
 * EVIDENCE_LINE_MAX bytes, JSON, n the line number, prev the previous
 * line's hash, digest its own; the manifest's count and final digest
 * equal the chain's. file_fn (may be NULL) is asked for each record's
 * named file in the folder: it returns 0 with the file's hex digest in
 * hex, 1 when it is missing, -1 on an error. 0, or EVIDENCE_EBROKEN /
 * EVIDENCE_ELIMIT with err naming the line and what disagrees. */
typedef int (*evidence_file_fn)(void *ud, const char *name, char hex[EVIDENCE_HEX_LEN + 1]);
int evidence_verify_buf(const char *records, size_t n, const char *manifest, size_t mn,
                        evidence_file_fn file_fn, void *ud, evidence_report *out,
                        evidence_err *err);
/* The same on a folder (reads the files with the size limits). */
int evidence_verify(const char *dir, evidence_report *out, evidence_err *err);

#endif
