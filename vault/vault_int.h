/*
 * vault_int.h — what the files of vault/ share and no other module sees:
 * the backend table behind vault_gcm_ctx, the AES cores, GHASH, and the I/O-free
 * readers and writers of the vault's file formats (also used by the tests
 * and the fuzz target).
 *
 * Tests that include it (a test may include a module's internal header to
 * test its internals; product code never does: tests/checklayers.sh checks
 * both, and that every such test is named here):
 *   tests/test_vault.c       the file formats' readers and writers, the key
 *                            id, the backends' cores, the helpers
 *   tests/fuzz/fuzz_vault.c  the readers of the file formats
 */
#ifndef CDPGATE_VAULT_INT_H
#define CDPGATE_VAULT_INT_H

#include "vault/vault.h"
#include "base/base.h"

#include <stdarg.h>

/* ---- AEAD backends ---- */

/* Raw primitives of a backend whose GCM mode is ours (ct64, aesni): the
 * generic code in gcm.c does the buffering, lengths and the state machine.
 * block: one AES block with the context's key. ctr: nblocks of CTR mode,
 * counter block ctr (big-endian 32-bit counter in its last 4 bytes, which
 * wraps mod 2^32 as GCM's inc32), advanced past the blocks used. ghash:
 * y = (y ^ block) * H for each of nblocks 16-byte blocks. */
typedef struct {
    int (*setkey)(vault_gcm_ctx *c, const uint8_t *key, size_t keylen);
    void (*block)(const vault_gcm_ctx *c, const uint8_t in[16], uint8_t out[16]);
    void (*ctr)(const vault_gcm_ctx *c, uint8_t ctr[16], const uint8_t *in, uint8_t *out,
                size_t nblocks);
    void (*ghash)(const vault_gcm_ctx *c, uint8_t y[16], const uint8_t *data, size_t nblocks);
} vault_gcm_core;

/* The table. The wrapper functions in gcm.c check the order of calls and
 * the length limits, then call these; tag writes all 16 bytes; check
 * compares the first taglen bytes and returns VAULT_GCM_OK or VAULT_GCM_EAUTH. */
struct vault_gcm_backend {
    const char *name;
    const vault_gcm_core *core;    /* NULL when the backend does its own mode */
    int (*init)(vault_gcm_ctx *c, const uint8_t *key, size_t keylen);
    int (*set_iv)(vault_gcm_ctx *c, const uint8_t *iv, size_t ivlen);
    int (*aad)(vault_gcm_ctx *c, const uint8_t *aad, size_t len);
    int (*encrypt)(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len);
    int (*tag)(vault_gcm_ctx *c, uint8_t tag[16]);
    int (*auth)(vault_gcm_ctx *c, const uint8_t *ct, size_t len);
    int (*check)(vault_gcm_ctx *c, const uint8_t *tag, size_t taglen);
    int (*decrypt)(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len);
    void (*wipe)(vault_gcm_ctx *c);
};

/* Generic GCM mode over a vault_gcm_core (gcm.c), used by ct64 and aesni. */
int vault_gcm_soft_init(vault_gcm_ctx *c, const uint8_t *key, size_t keylen);
int vault_gcm_soft_set_iv(vault_gcm_ctx *c, const uint8_t *iv, size_t ivlen);
int vault_gcm_soft_aad(vault_gcm_ctx *c, const uint8_t *aad, size_t len);
int vault_gcm_soft_encrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len);
int vault_gcm_soft_tag(vault_gcm_ctx *c, uint8_t tag[16]);
int vault_gcm_soft_auth(vault_gcm_ctx *c, const uint8_t *ct, size_t len);
int vault_gcm_soft_check(vault_gcm_ctx *c, const uint8_t *tag, size_t taglen);
int vault_gcm_soft_decrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len);
void vault_gcm_soft_wipe(vault_gcm_ctx *c);

extern const vault_gcm_core vault_gcm_core_ct64;                /* aes_ct.c + ghash.c */
const vault_gcm_backend *vault_gcm_backend_aesni_table(void);   /* aesni.c; NULL off x86-64 */
const vault_gcm_backend *vault_gcm_backend_ossl_table(void);    /* ossl.c; NULL without OpenSSL */

/* ---- AES, bitsliced (aes_ct.c) ---- */

/* FIPS 197 key expansion into 32-bit words (little-endian loads, as the
 * bitsliced code wants); constant time (the S-box is the bitsliced one).
 * Returns the number of rounds (10/12/14) or 0 for a bad key length. */
unsigned vault_aes_keysched_words(uint32_t w[60], const uint8_t *key, size_t keylen);

/* ---- GHASH, multiply-based (ghash.c) ---- */

/* y = GHASH_H(y, data) over len bytes (a partial last block is zero-padded);
 * h and y are 16-byte big-endian field elements as SP 800-38D writes them. */
void vault_ghash_ctmul64(uint8_t y[16], const uint8_t h[16], const uint8_t *data, size_t len);

/* ---- helpers (util.c) ---- */

/* snprintf into err (if err && errlen) and return code. */
int vault_seterr(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void vault_hex(const uint8_t *in, size_t n, char *out);   /* out: 2n+1 */
/* key.c: a file (or, with dir, a directory) must be that type, owned by
 * the effective user, with no group/world bits; VAULT_EPERM otherwise. */
struct stat;
int vault_check_mode(const struct stat *st, const char *path, int dir, char *err,
                     size_t errlen);
/* key.c: the 32-byte key file at path (vault_key_file: its checks), made
 * when missing and create; VAULT_ENOENT when missing and not. */
int vault_key_file_at(const char *path, bool create, uint8_t key[32], char *err, size_t errlen);
uint64_t vault_be64(const uint8_t *p);
uint32_t vault_be32(const uint8_t *p);
void vault_put_be64(uint8_t *p, uint64_t v);
void vault_put_be32(uint8_t *p, uint32_t v);

/* ---- file formats (blob.c; I/O-free) ---- */

#define VAULT_MAGIC_SESSION "CDPGSESS"
#define VAULT_MAGIC_EXPORT  "CDPGEXPT"
#define VAULT_FORMAT_VERSION 1
#define VAULT_NONCE_LEN 12
#define VAULT_TAG_LEN 16
#define VAULT_KEYID_LEN 8
#define VAULT_SESSION_HDR 72        /* bytes before the ciphertext */
#define VAULT_EXPORT_HDR 52
#define VAULT_SALT_LEN 16
/* Envelope inside a session blob: identity_len u32, identity, captured
 * i64, expiry i64, then the session bytes. */
#define VAULT_ENV_FIXED 20
#define VAULT_SESSION_FILE_MAX \
    ((size_t)VAULT_SESSION_HDR + VAULT_ENV_FIXED + VAULT_IDENTITY_MAX + VAULT_BLOB_MAX + \
     VAULT_TAG_LEN)
#define VAULT_EXPORT_FILE_MAX ((size_t)VAULT_EXPORT_HDR + VAULT_EXPORT_MAX + VAULT_TAG_LEN)

/* Parsed session file header; pointers borrow the input. */
typedef struct {
    uint8_t key_id[VAULT_KEYID_LEN];
    uint8_t origin_hash[32];
    uint64_t ct_len;
    const uint8_t *nonce, *ct, *tag;
} vault_blob_hdr;

/* Check magic, version, reserved bytes and that len matches the header
 * exactly. VAULT_EFORMAT, VAULT_EVERSION, VAULT_ETRUNC, VAULT_ETOOBIG. */
int vault_blob_parse(const uint8_t *buf, size_t len, vault_blob_hdr *h, char *err,
                     size_t errlen);
/* The key's identifier: HMAC-SHA256(key, "cdpgate vault key id v1")[0..8). */
void vault_key_id(const uint8_t key[32], uint8_t id[VAULT_KEYID_LEN]);
/* Seal pt for origin (new buffer in *out, free()). */
int vault_blob_seal(const vault_gcm_backend *be, const uint8_t key[32], const char *origin,
                    const uint8_t *pt, size_t len, uint8_t **out, size_t *outlen,
                    char *err, size_t errlen);
/* Open a session file for origin: *pt is new (free() after wiping), only
 * on success. Adds VAULT_EWRONGKEY, VAULT_EORIGIN, VAULT_EAUTH. */
int vault_blob_open(const vault_gcm_backend *be, const uint8_t key[32], const char *origin,
                    const uint8_t *buf, size_t len, uint8_t **pt, size_t *ptlen,
                    char *err, size_t errlen);

typedef struct {
    const char *identity;     /* borrowed from the plaintext, not NUL-ended */
    size_t identity_len;
    int64_t captured, expiry;
    const uint8_t *blob;
    size_t blob_len;
} vault_env;

int vault_env_build(const char *identity, int64_t captured, int64_t expiry,
                    const uint8_t *blob, size_t len, uint8_t **out, size_t *outlen);
int vault_env_parse(const uint8_t *pt, size_t len, vault_env *e, char *err, size_t errlen);

/* Metadata JSON: {"version":1,"origin":..,"identity":..,"captured":..,
 * "last_used":..,"expiry":..}. write: new NUL-terminated text (free()).
 * parse: fills m with new strings (vault_meta_free) or returns
 * VAULT_EFORMAT/VAULT_ETOOBIG/VAULT_ENOMEM with nothing allocated. */
int vault_meta_write(const vault_meta *m, char **out, size_t *len);
int vault_meta_parse(const char *buf, size_t len, vault_meta *m, char *err, size_t errlen);

typedef struct {
    uint32_t iterations;
    const uint8_t *salt, *nonce, *ct, *tag;
    uint64_t ct_len;
} vault_export_hdr;

int vault_export_parse(const uint8_t *buf, size_t len, vault_export_hdr *h, char *err,
                       size_t errlen);

#endif
