/*
 * vault.h — the vault: encrypted per-origin browser sessions, and the
 * crypto they need (AES-GCM, SHA-256, HMAC-SHA256, PBKDF2-HMAC-SHA256,
 * random bytes), all without any dependency beyond libc (OpenSSL optional).
 *
 * Layers, bottom up:
 *   1. vault_ct_equal      branch-free comparison (wiping and random
 *                         bytes are base/'s: base_memzero, base_random).
 *   2. vault_sha256_*, vault_hmac_sha256, vault_pbkdf2_sha256
 *                         streaming SHA-256 (FIPS 180-4), HMAC (RFC 2104),
 *                         PBKDF2 (RFC 8018).
 *   3. gcm_*              AES-GCM (NIST SP 800-38D) with 128/192/256-bit
 *                         keys behind a table of backends: "ct64" (built in,
 *                         bitsliced AES and multiply-based GHASH: no table
 *                         indexed by secret data, no secret-dependent
 *                         branch), "aesni" (x86-64 AES-NI + PCLMULQDQ, chosen
 *                         when cpuid says the CPU has them) and "openssl"
 *                         (EVP, only in CDPGATE_OPENSSL builds).
 *   4. vault_seal_passphrase / vault_open_passphrase
 *                         the export format: PBKDF2-HMAC-SHA256 with a random
 *                         salt, then AES-256-GCM.
 *   5. vault              the session store on disk (see "Store" below).
 *
 * Invariants: crypto code never allocates (the OpenSSL backend aside, whose
 * EVP context OpenSSL allocates); every context that held key material is
 * wiped by its *_wipe / *_final function; no function keeps global mutable
 * state (the AES-NI check runs cpuid on each call and caches nothing); key
 * bytes never appear in any message this module writes.
 */
#ifndef CDPGATE_VAULT_H
#define CDPGATE_VAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ================================================================== */
/* 1. small helpers                                                    */

/* 1 when the n bytes at a and b are equal, else 0. Time depends on n only. */
int vault_ct_equal(const void *a, const void *b, size_t n);

/* ================================================================== */
/* 2. SHA-256, HMAC-SHA256, PBKDF2-HMAC-SHA256                         */

#define VAULT_SHA256_LEN 32

/* Caller-allocated; fields are private. */
typedef struct {
    uint32_t h[8];
    uint64_t count;      /* bytes hashed so far */
    uint8_t buf[64];
} vault_sha256_ctx;

void vault_sha256_init(vault_sha256_ctx *c);
void vault_sha256_update(vault_sha256_ctx *c, const void *data, size_t len);
/* Writes the digest and wipes the context (init again to reuse). */
void vault_sha256_final(vault_sha256_ctx *c, uint8_t out[VAULT_SHA256_LEN]);
void vault_sha256(const void *data, size_t len, uint8_t out[VAULT_SHA256_LEN]);

/* HMAC-SHA256 of data under key, any key length (keys over 64 bytes are
 * hashed first, as RFC 2104 says). */
void vault_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
                       uint8_t out[VAULT_SHA256_LEN]);

/* PBKDF2 with HMAC-SHA256 (RFC 8018 §5.2). iterations >= 1, outlen >= 1.
 * Returns 0 or VAULT_EINVAL. */
int vault_pbkdf2_sha256(const void *pass, size_t passlen, const void *salt, size_t saltlen,
                        uint32_t iterations, uint8_t *out, size_t outlen);

/* ================================================================== */
/* 3. AES-GCM                                                          */

enum {
    VAULT_GCM_OK = 0,
    VAULT_GCM_EAUTH = -1,      /* tag mismatch: message rejected */
    VAULT_GCM_EKEY = -2,       /* key length is not 16, 24 or 32 bytes */
    VAULT_GCM_EIV = -3,        /* IV length 0, or beyond what the backend accepts */
    VAULT_GCM_ETAGLEN = -4,    /* tag length outside 4..16 */
    VAULT_GCM_ESTATE = -5,     /* call out of order (e.g. AAD after data) */
    VAULT_GCM_ELIMIT = -6,     /* more than 2^36 - 32 bytes of text, 2^61 of AAD */
    VAULT_GCM_EBACKEND = -7,   /* backend failure (OpenSSL error, CPU lacks it) */
};
const char *vault_gcm_strerror(int code);

#define VAULT_GCM_TAG_MAX 16
#define VAULT_GCM_TAG_MIN 4

typedef struct vault_gcm_backend vault_gcm_backend;

/* The backends. vault_gcm_backend_aesni() is NULL unless this is x86-64 built by
 * GCC/clang and cpuid reports AES-NI, PCLMULQDQ and SSE4.1;
 * vault_gcm_backend_openssl() is NULL unless built with CDPGATE_OPENSSL.
 * vault_gcm_backend_default() is the fastest one present (aesni, else openssl,
 * else ct64). All return static tables (never freed). */
const vault_gcm_backend *vault_gcm_backend_ct64(void);
const vault_gcm_backend *vault_gcm_backend_aesni(void);
const vault_gcm_backend *vault_gcm_backend_openssl(void);
const vault_gcm_backend *vault_gcm_backend_default(void);
const char *vault_gcm_backend_name(const vault_gcm_backend *be);
/* Every backend present, ct64 first; returns the count (<= 3). */
size_t vault_gcm_backends(const vault_gcm_backend **out, size_t cap);

/* Caller-allocated context (put it on the stack); fields are private. One
 * key, then any number of messages, each:
 *
 *   encrypt: vault_gcm_set_iv, vault_gcm_aad*, vault_gcm_encrypt*, vault_gcm_tag
 *   decrypt: vault_gcm_set_iv, vault_gcm_aad*, vault_gcm_auth*, vault_gcm_check_tag,
 *            vault_gcm_decrypt*
 *
 * Decryption is two passes on purpose: vault_gcm_auth feeds the ciphertext to
 * GHASH only and produces no plaintext; vault_gcm_decrypt is refused
 * (VAULT_GCM_ESTATE) until vault_gcm_check_tag has accepted the tag, and then
 * decrypts at most the bytes that were authenticated. So no plaintext is
 * ever released for a message whose tag fails. (The OpenSSL backend runs
 * EVP decryption in the first pass into a stack scratch buffer that is
 * wiped, and decrypts again in the second.) vault_gcm_wipe when done: it zeroes
 * the key schedule and frees the OpenSSL context. */
typedef struct {
    const vault_gcm_backend *be;
    int state;
    unsigned nr;                      /* AES rounds */
    uint64_t aad_len, text_len;       /* bytes */
    uint64_t dec_done;                /* second-pass bytes decrypted */
    uint8_t h[16], j0[16], ctr[16], y[16];
    uint8_t gbuf[16];                 /* partial GHASH block */
    unsigned gfill;
    uint8_t ks[16];                   /* unused keystream */
    unsigned kpos;                    /* 16 = none */
    union {
        uint64_t ct64[120];           /* expanded bitsliced key schedule */
        struct {
            uint8_t rk[15 * 16];      /* AES round keys */
            uint8_t hp[4 * 16];       /* H^1..H^4, byte-reversed */
        } ni;
        struct {
            void *enc, *dec;          /* EVP_CIPHER_CTX, one per direction */
            size_t ivlen;
            uint8_t iv[128];
        } ossl;
        uint64_t align_;
    } u;
} vault_gcm_ctx;

/* Set the key. be NULL = vault_gcm_backend_default(). Returns VAULT_GCM_OK,
 * VAULT_GCM_EKEY or VAULT_GCM_EBACKEND (then the context is wiped and needs no
 * vault_gcm_wipe). */
int vault_gcm_init(vault_gcm_ctx *c, const vault_gcm_backend *be, const uint8_t *key,
                   size_t keylen);
/* Start a message. Any IV length >= 1 byte (12 is the one to use; other
 * lengths go through GHASH as SP 800-38D says). The OpenSSL backend
 * accepts at most 128 bytes (VAULT_GCM_EIV beyond). */
int vault_gcm_set_iv(vault_gcm_ctx *c, const uint8_t *iv, size_t ivlen);
/* Additional data, any number of calls, before any text. */
int vault_gcm_aad(vault_gcm_ctx *c, const uint8_t *aad, size_t len);
/* Encrypt len bytes; any chunking; in and out may be equal. */
int vault_gcm_encrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len);
/* Finish an encryption: write the first taglen (4..16) bytes of the tag. */
int vault_gcm_tag(vault_gcm_ctx *c, uint8_t *tag, size_t taglen);
/* Decryption pass 1: authenticate len bytes of ciphertext (no output). */
int vault_gcm_auth(vault_gcm_ctx *c, const uint8_t *ct, size_t len);
/* Compare the tag in constant time. VAULT_GCM_OK unlocks vault_gcm_decrypt for this
 * message; VAULT_GCM_EAUTH ends the message (set a new IV to go on). */
int vault_gcm_check_tag(vault_gcm_ctx *c, const uint8_t *tag, size_t taglen);
/* Decryption pass 2: decrypt the authenticated ciphertext again, in the
 * same order, any chunking; in and out may be equal. */
int vault_gcm_decrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len);
/* Zero the context and release backend resources. */
void vault_gcm_wipe(vault_gcm_ctx *c);

/* One-shot forms. vault_gcm_open writes pt only after the tag has verified; on
 * VAULT_GCM_EAUTH pt is left untouched. pt may equal ct in both. */
int vault_gcm_seal(const vault_gcm_backend *be, const uint8_t *key, size_t keylen,
             const uint8_t *iv, size_t ivlen, const uint8_t *aad, size_t aadlen,
             const uint8_t *pt, size_t len, uint8_t *ct, uint8_t *tag, size_t taglen);
int vault_gcm_open(const vault_gcm_backend *be, const uint8_t *key, size_t keylen,
             const uint8_t *iv, size_t ivlen, const uint8_t *aad, size_t aadlen,
             const uint8_t *ct, size_t len, const uint8_t *tag, size_t taglen,
             uint8_t *pt);

/* ================================================================== */
/* Errors of the store, the key provider and the export format         */

enum {
    VAULT_OK = 0,
    VAULT_ENOMEM = -1,
    VAULT_EIO = -2,        /* a system call failed (errno in the message) */
    VAULT_EPERM = -3,      /* file or directory with group/world bits, or
                              owned by another user, or not a regular file */
    VAULT_ENOENT = -4,     /* no session stored for that origin */
    VAULT_EFORMAT = -5,    /* not a vault file, bad header or metadata */
    VAULT_ETRUNC = -6,     /* file shorter (or longer) than its header says */
    VAULT_EVERSION = -7,   /* format version this build does not read */
    VAULT_EAUTH = -8,      /* authentication failed: tampered, or a wrong
                              passphrase for an export */
    VAULT_EWRONGKEY = -9,  /* sealed with a different vault key */
    VAULT_EORIGIN = -10,   /* file belongs to another origin (renamed) */
    VAULT_EKEY = -11,      /* key provider failed */
    VAULT_ETOOBIG = -12,   /* a size limit was exceeded */
    VAULT_EINVAL = -13,    /* bad argument (empty origin, NUL inside, ...) */
    VAULT_ERANDOM = -14,   /* no random bytes */
    VAULT_EEXPIRED = -15,  /* the session's expiry has passed; not returned */
    VAULT_ELOCK = -16,     /* could not take the store lock */
    VAULT_EBUSY = -17,     /* the identity is leased to another task */
};
const char *vault_strerror(int code);

/* ================================================================== */
/* 4. passphrase-sealed export                                         */

#define VAULT_PBKDF2_ITERATIONS 600000u   /* default for new exports */
#define VAULT_PBKDF2_MIN_ITER   1000u     /* refused below (on seal and open) */
#define VAULT_PBKDF2_MAX_ITER   10000000u /* refused above (bounds the work) */
#define VAULT_EXPORT_MAX        (64u << 20) /* plaintext bytes */

/* Seal len bytes with a passphrase: PBKDF2-HMAC-SHA256(passphrase, 16-byte
 * random salt, iterations; 0 = VAULT_PBKDF2_ITERATIONS) gives an AES-256
 * key; AES-256-GCM with a random 96-bit nonce, the header as AAD. Layout
 * in docs/vault.md. *out is new (free with free()). err (may be NULL) gets a
 * message. Returns 0 or VAULT_E*. */
int vault_seal_passphrase(const char *pass, size_t passlen, const uint8_t *pt, size_t len,
                          uint32_t iterations, uint8_t **out, size_t *outlen,
                          char *err, size_t errlen);
/* Open an export. *out is new (free with free(); NUL-terminated for
 * convenience, the terminator not counted); nothing is returned unless
 * the tag verifies (VAULT_EAUTH: wrong passphrase or tampered). */
int vault_open_passphrase(const char *pass, size_t passlen, const uint8_t *in, size_t inlen,
                          uint8_t **out, size_t *outlen, char *err, size_t errlen);

/* ================================================================== */
/* 5. the session store                                                */

/* Key provider: fills key[32] or returns a VAULT_E* with a message in err
 * (which must never contain key bytes). */
typedef int (*vault_key_fn)(void *arg, const char *dir, uint8_t key[32],
                            char *err, size_t errlen);
typedef struct {
    vault_key_fn fn;
    void *arg;
} vault_keyprov;

/* The default provider: when $CDPGATE_KEY_CMD is set and not empty, run it
 * through /bin/sh -c; it must print the key on stdout as 64 hex digits
 * (surrounding white space allowed) or as exactly 32 raw bytes, exit 0,
 * and finish within VAULT_KEY_CMD_TIMEOUT_MS. Otherwise the key file
 * <dir>/key: 32 raw bytes, created on first use (O_CREAT|O_EXCL, 0600) from
 * getrandom, refused when group/world bits are set or another user owns it. */
#define VAULT_KEY_CMD_TIMEOUT_MS 10000
int vault_key_default(void *arg, const char *dir, uint8_t key[32], char *err, size_t errlen);
/* The command half, for callers that want it explicitly (tested through
 * these; the key file half is internal to key.c). */
int vault_key_from_cmd(const char *cmd, uint8_t key[32], char *err, size_t errlen);
int vault_key_from_cmd_timeout(const char *cmd, int timeout_ms, uint8_t key[32], char *err,
                               size_t errlen);

/* A key of 32 random bytes in a file of its own (the trail key:
 * docs/replay.md), read with the vault key file's checks (a regular file
 * of this user, no symlink, mode 0600, 32 bytes) and, when missing and
 * create, made as it is (O_CREAT|O_EXCL 0600 from getrandom, linked into
 * place: never replaced). path: that file; NULL: the file name in the
 * vault's directory (vault_open's: $XDG_DATA_HOME/cdpgate, else
 * ~/.local/share/cdpgate; made 0700 when create). VAULT_OK, VAULT_ENOENT
 * (missing, not create), VAULT_EPERM, VAULT_EKEY, ...; the key never
 * reaches err. */
int vault_key_file(const char *path, const char *name, bool create, uint8_t key[32], char *err,
                   size_t errlen);

/* Limits on what the store writes and reads. */
#define VAULT_ORIGIN_MAX   2048u          /* bytes of an origin */
#define VAULT_IDENTITY_MAX 1024u          /* bytes of an identity label */
#define VAULT_BLOB_MAX     (64u << 20)    /* session bytes */
#define VAULT_META_MAX     (16u << 10)    /* bytes of a .json metadata file */

typedef struct vault vault;

/* Metadata of one session: what the sibling .json holds and vault_list
 * returns. Times are Unix seconds; expiry 0 = none. */
typedef struct {
    char *origin;        /* NUL-terminated */
    char *identity;      /* NUL-terminated, "" when none */
    int64_t captured;
    int64_t last_used;
    int64_t expiry;
} vault_meta;

/* Open the store rooted at dir (NULL = $XDG_DATA_HOME/cdpgate, else
 * $HOME/.local/share/cdpgate). Creates dir and dir/sessions with mode 0700
 * when missing; refuses existing ones with group/world bits or another
 * owner. kp NULL = vault_key_default. The key is fetched here, once, and
 * held until vault_close (which wipes it). New; free with vault_close.
 * NULL on error with a message in err. */
vault *vault_open(const char *dir, const vault_keyprov *kp, char *err, size_t errlen);
void vault_close(vault *v);
/* The store directory (borrowed). */
const char *vault_dir(const vault *v);

/* Store blob for origin, replacing any earlier one: both files are written
 * atomically (temp file, fsync, rename, fsync of the directory), .enc
 * before .json, under the store lock. captured is now; expiry 0 = none. */
int vault_put(vault *v, const char *origin, const char *identity, const uint8_t *blob,
              size_t len, int64_t expiry, char *err, size_t errlen);
/* vault_put with an explicit capture time (Unix seconds, >= 0), for imports
 * that keep the time a session was captured on another machine. */
int vault_put_at(vault *v, const char *origin, const char *identity, const uint8_t *blob,
                 size_t len, int64_t captured, int64_t expiry, char *err, size_t errlen);
/* Decrypt the session for origin. *blob is new (free with vault_free_blob,
 * which wipes it); meta (may be NULL) gets the authenticated metadata
 * (free with vault_meta_free). Refuses, returning nothing: no session
 * (ENOENT), loose permissions (EPERM), short/long file (ETRUNC), bad header
 * (EFORMAT), another key (EWRONGKEY), another origin (EORIGIN), tag
 * mismatch (EAUTH), expiry passed (EEXPIRED). Updates last_used in the
 * .json (best effort). */
int vault_get(vault *v, const char *origin, uint8_t **blob, size_t *len, vault_meta *meta,
              char *err, size_t errlen);
void vault_free_blob(uint8_t *blob, size_t len);
/* Metadata of every session, sorted by origin; reads .json files only and
 * never decrypts. *out is new (free with vault_list_free). A .json whose
 * .enc is gone is skipped; an unreadable one is an error. */
int vault_list(vault *v, vault_meta **out, size_t *n, char *err, size_t errlen);
void vault_list_free(vault_meta *list, size_t n);
void vault_meta_free(vault_meta *m);
/* Remove the session for origin (.enc first, then .json). ENOENT when
 * neither existed. */
int vault_rm(vault *v, const char *origin, char *err, size_t errlen);
/* Identity leases: one task at a time uses a vault identity for a service.
 * vault_identity_acquire takes an exclusive lease on (origin, identity)
 * without waiting: VAULT_EBUSY, with the holder's description in err, when
 * another task (another process, or another agent of this one) holds it.
 * holder (e.g. "task T (pid N)") is recorded for that message. The lease
 * lasts until vault_identity_release(*fd_out) or the process ends (the
 * kernel drops it: a killed driver never leaves a stale lease). */
int vault_identity_acquire(vault *v, const char *origin, const char *identity,
                           const char *holder, int *fd_out, char *err, size_t errlen);
void vault_identity_release(int fd);
/* File name stem for origin: 64 hex digits of SHA-256(origin) + NUL. */
void vault_origin_name(const char *origin, char out[65]);

#endif
