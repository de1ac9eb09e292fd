/*
 * evidence_int.h — what the files of evidence/ share: the writer's state
 * (chain.c builds records, writer.c the files and the manifest,
 * viewer.c the offline page). Internal to evidence/; no test includes it.
 */
#ifndef CDPGATE_EVIDENCE_INT_H
#define CDPGATE_EVIDENCE_INT_H

#include "evidence/evidence.h"
#include "base/base.h"

#define EVIDENCE_STR_MAX 8192u    /* bytes of one string field (scrubbed, then cut) */
#define EVIDENCE_SECRETS_MAX 32768u  /* forms, about 10 a value */

struct evidence {
    char *dir;
    int dirfd;
    int fd;                         /* records.jsonl, O_APPEND */
    char *task;
    char prev[EVIDENCE_HEX_LEN + 1];
    uint64_t n;                     /* records written */
    uint64_t shots;
    /* the secrets, each raw and in each encoding searched (chain.c;
     * wiped at close); first: the bytes one starts with */
    char **sec;
    size_t *seclen;
    size_t nsec, capsec;
    bool first[256];
    char *mkey[EVIDENCE_META_MAX], *mval[EVIDENCE_META_MAX];
    size_t nmeta;
    json_w w;                       /* the record being built */
    bool building;
    char started[32];
};

/* chain.c: s (n bytes) with every secret replaced by "[secret]" (new,
 * NUL-terminated, *outlen its length; NULL when out of memory). */
char *evidence_scrub(const evidence *e, const char *s, size_t n, size_t *outlen);
/* chain.c: the UTC time now as 2026-12-03T15:00:00.123Z. */
void evidence_time_now(char out[32]);
/* chain.c: a record's or meta's key: [a-z0-9_], 1-32 bytes. */
bool evidence_key_ok(const char *k);
/* viewer.c: index.html for the lines of records.jsonl (n bytes). */
int evidence_viewer_write(evidence *e, const char *records, size_t n, evidence_err *err);
/* writer.c: read a whole regular file (at most max bytes; a symbolic
 * link is refused) at dirfd/name (AT_FDCWD: a path). New buffer with a
 * NUL after it, or NULL with errno (EFBIG over max). */
char *evidence_read_file(int dirfd, const char *name, size_t max, size_t *len);
/* writer.c: fill err (code, message) and return code. */
int evidence_fail(evidence_err *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
