/*
 * fuzz_evidence.c — libFuzzer target for the evidence verifier
 * (evidence_verify_buf; also replayed over the checked-in corpus by
 * tests/fuzz/replay.c in `make test`).
 *
 * The input is records.jsonl's bytes, then optionally a NUL byte and
 * manifest.json's. A file a record names is "present" with the digest of
 * its own name (so a record can match or not). It must never crash; on a
 * failure the code is EBROKEN or ELIMIT with a message that is not empty;
 * on success the report counts the lines of the input.
 */
#include "evidence/evidence.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int file_fn(void *ud, const char *name, char hex[EVIDENCE_HEX_LEN + 1])
{
    (void)ud;
    if (name[0] == 'm')
        return 1;
    evidence_hash_hex(name, strlen(name), hex);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nul = memchr(s, 0, size);
    size_t rn = nul ? (size_t)(nul - s) : size;
    const char *man = nul ? nul + 1 : NULL;
    size_t mn = nul ? size - rn - 1 : 0;
    evidence_report rep;
    evidence_err err = {0};
    int rc = evidence_verify_buf(s, rn, man, mn, file_fn, NULL, &rep, &err);
    if (rc) {
        CHECK(rc == EVIDENCE_EBROKEN || rc == EVIDENCE_ELIMIT);
        CHECK(err.code == rc && err.msg[0]);
        return 0;
    }
    uint64_t lines = 0;
    for (size_t i = 0; i < rn; i++)
        lines += s[i] == '\n';
    CHECK(rep.records == lines);
    CHECK(strlen(rep.final_hex) == EVIDENCE_HEX_LEN);
    return 0;
}
