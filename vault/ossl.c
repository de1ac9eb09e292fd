/*
 * ossl.c — the OpenSSL EVP backend of vault_gcm_ctx (CDPGATE_OPENSSL builds only;
 * elsewhere vault_gcm_backend_ossl_table() is NULL).
 *
 * Two EVP contexts are keyed at init, one per direction, and both get the
 * IV and the AAD, because EVP fixes the direction before the AAD while
 * this API learns it at the first vault_gcm_encrypt or vault_gcm_auth. Decryption pass
 * 1 runs EVP decryption into a stack scratch buffer that is wiped and the
 * tag is checked by EVP_DecryptFinal_ex (CRYPTO_memcmp inside); pass 2
 * re-starts the encryption context at the same IV and runs it over the
 * ciphertext, which is the CTR keystream XOR, i.e. the plaintext.
 *
 * Long IVs: OpenSSL 3 accepts GCM IVs of at most 128 bytes. A longer IV is
 * mapped to a 16-byte IV with the same pre-counter block J0: with
 * H = AES_K(0) (computed through EVP's ECB), J0 = GHASH_H(IV || pad || len)
 * and, since OpenSSL derives J0' = GHASH_H(IV' || len128) = ((IV'.H) ^ L).H
 * for a 16-byte IV', IV' = (J0.H^-1 ^ L).H^-1 gives J0' = J0. Every
 * AES operation still runs in OpenSSL; the GF(2^128) arithmetic on the IV
 * is the constant-time vault_ghash_ctmul64 with a fixed-length inversion. EVP
 * contexts are allocated by OpenSSL, not by us.
 */
#include "vault/vault_int.h"

#if defined(CDPGATE_OPENSSL) && CDPGATE_OPENSSL

#include <openssl/evp.h>
#include <string.h>

#define ENC(c) ((EVP_CIPHER_CTX *)(c)->u.ossl.enc)
#define DEC(c) ((EVP_CIPHER_CTX *)(c)->u.ossl.dec)

/* c->h = AES_K(0^128) through EVP, for the long-IV mapping. */
static int ossl_hash_key(vault_gcm_ctx *c, const uint8_t *key, size_t keylen)
{
    const EVP_CIPHER *ecb = keylen == 16 ? EVP_aes_128_ecb()
                          : keylen == 24 ? EVP_aes_192_ecb() : EVP_aes_256_ecb();
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t zero[16] = {0};
    int outl = 0;
    int ok = x && EVP_EncryptInit_ex(x, ecb, NULL, key, NULL) == 1 &&
             EVP_CIPHER_CTX_set_padding(x, 0) == 1 &&
             EVP_EncryptUpdate(x, c->h, &outl, zero, 16) == 1 && outl == 16;
    EVP_CIPHER_CTX_free(x);
    return ok ? VAULT_GCM_OK : VAULT_GCM_EBACKEND;
}

static int ossl_init(vault_gcm_ctx *c, const uint8_t *key, size_t keylen)
{
    const EVP_CIPHER *ci = keylen == 16 ? EVP_aes_128_gcm()
                         : keylen == 24 ? EVP_aes_192_gcm() : EVP_aes_256_gcm();
    c->u.ossl.enc = EVP_CIPHER_CTX_new();
    c->u.ossl.dec = EVP_CIPHER_CTX_new();
    if (!ENC(c) || !DEC(c) ||
        EVP_EncryptInit_ex(ENC(c), ci, NULL, key, NULL) != 1 ||
        EVP_DecryptInit_ex(DEC(c), ci, NULL, key, NULL) != 1)
        return VAULT_GCM_EBACKEND;
    return ossl_hash_key(c, key, keylen);
}

/* out = a.b in GCM's field (vault_ghash_ctmul64 computes (y ^ data).h). */
static void gf_mul(uint8_t out[16], const uint8_t a[16], const uint8_t b[16])
{
    uint8_t y[16] = {0};
    vault_ghash_ctmul64(y, b, a, 16);
    memcpy(out, y, 16);
    base_memzero(y, sizeof y);
}

/* out = a^-1 = a^(2^128 - 2) = product of a^(2^i), i = 1..127: a fixed
 * sequence of 254 multiplications, whatever a is. */
static void gf_inv(uint8_t out[16], const uint8_t a[16])
{
    uint8_t r[16] = {0x80}, t[16];      /* 0x80.. is the field's 1 */
    memcpy(t, a, 16);
    for (int i = 1; i < 128; i++) {
        gf_mul(t, t, t);
        gf_mul(r, r, t);
    }
    memcpy(out, r, 16);
    base_memzero(r, sizeof r);
    base_memzero(t, sizeof t);
}

/* The 16-byte IV whose J0 equals that of iv[0..ivlen) (see the top). */
static void ossl_map_iv(vault_gcm_ctx *c, const uint8_t *iv, size_t ivlen, uint8_t out[16])
{
    uint8_t j0[16] = {0}, blk[16] = {0}, hinv[16];
    vault_ghash_ctmul64(j0, c->h, iv, ivlen);
    vault_put_be64(blk + 8, (uint64_t)ivlen * 8);
    vault_ghash_ctmul64(j0, c->h, blk, 16);
    gf_inv(hinv, c->h);
    gf_mul(j0, j0, hinv);
    j0[15] ^= 0x80;                     /* L for a 128-bit IV: 0^64 || 128 */
    gf_mul(out, j0, hinv);
    base_memzero(hinv, sizeof hinv);
    base_memzero(j0, sizeof j0);
}

static int ossl_restart(EVP_CIPHER_CTX *x, const uint8_t *iv, size_t ivlen, int enc)
{
    if (EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IVLEN, (int)ivlen, NULL) != 1)
        return VAULT_GCM_EIV;
    return EVP_CipherInit_ex(x, NULL, NULL, NULL, iv, enc) == 1 ? VAULT_GCM_OK : VAULT_GCM_EBACKEND;
}

/* The IV is kept (at most 128 bytes) for decryption's second pass. */
static int ossl_set_iv(vault_gcm_ctx *c, const uint8_t *iv, size_t ivlen)
{
    uint8_t mapped[16];
    if (ivlen > sizeof c->u.ossl.iv) {
        if (ivlen > ((uint64_t)1 << 61))
            return VAULT_GCM_EIV;
        ossl_map_iv(c, iv, ivlen, mapped);
        iv = mapped;
        ivlen = sizeof mapped;
    }
    int rc = ossl_restart(ENC(c), iv, ivlen, 1);
    if (rc == VAULT_GCM_OK)
        rc = ossl_restart(DEC(c), iv, ivlen, 0);
    if (rc != VAULT_GCM_OK)
        return rc;
    memcpy(c->u.ossl.iv, iv, ivlen);
    c->u.ossl.ivlen = ivlen;
    return VAULT_GCM_OK;
}

/* EVP takes int lengths: feed in chunks. */
static int ossl_update(EVP_CIPHER_CTX *x, const uint8_t *in, uint8_t *out, size_t len)
{
    while (len) {
        int n = len > (1u << 30) ? (1 << 30) : (int)len, outl = 0;
        if (EVP_CipherUpdate(x, out, &outl, in, n) != 1 || (out && outl != n))
            return VAULT_GCM_EBACKEND;
        in += n;
        if (out)
            out += n;
        len -= (size_t)n;
    }
    return VAULT_GCM_OK;
}

static int ossl_aad(vault_gcm_ctx *c, const uint8_t *aad, size_t len)
{
    int rc = ossl_update(ENC(c), aad, NULL, len);
    return rc == VAULT_GCM_OK ? ossl_update(DEC(c), aad, NULL, len) : rc;
}

static int ossl_encrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    return ossl_update(ENC(c), in, out, len);
}

static int ossl_tag(vault_gcm_ctx *c, uint8_t tag[16])
{
    uint8_t tail[16];
    int outl = 0;
    if (EVP_EncryptFinal_ex(ENC(c), tail, &outl) != 1 ||
        EVP_CIPHER_CTX_ctrl(ENC(c), EVP_CTRL_GCM_GET_TAG, 16, tag) != 1)
        return VAULT_GCM_EBACKEND;
    return VAULT_GCM_OK;
}

static int ossl_auth(vault_gcm_ctx *c, const uint8_t *ct, size_t len)
{
    uint8_t scratch[1024];
    int rc = VAULT_GCM_OK;
    while (len && rc == VAULT_GCM_OK) {
        size_t n = len < sizeof scratch ? len : sizeof scratch;
        rc = ossl_update(DEC(c), ct, scratch, n);
        ct += n;
        len -= n;
    }
    base_memzero(scratch, sizeof scratch);
    return rc;
}

static int ossl_check(vault_gcm_ctx *c, const uint8_t *tag, size_t taglen)
{
    uint8_t t[16], tail[16];
    int outl = 0;
    memcpy(t, tag, taglen);
    if (EVP_CIPHER_CTX_ctrl(DEC(c), EVP_CTRL_GCM_SET_TAG, (int)taglen, t) != 1)
        return VAULT_GCM_EBACKEND;
    int ok = EVP_DecryptFinal_ex(DEC(c), tail, &outl) == 1;
    base_memzero(tail, sizeof tail);
    if (!ok)
        return VAULT_GCM_EAUTH;
    /* Second pass: the encryption context at the same IV is the keystream. */
    return ossl_restart(ENC(c), c->u.ossl.iv, c->u.ossl.ivlen, 1);
}

static int ossl_decrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    return ossl_update(ENC(c), in, out, len);
}

static void ossl_wipe(vault_gcm_ctx *c)
{
    base_memzero(c->h, sizeof c->h);
    EVP_CIPHER_CTX_free(ENC(c));   /* clears key material; NULL is a no-op */
    EVP_CIPHER_CTX_free(DEC(c));
    c->u.ossl.enc = c->u.ossl.dec = NULL;
}

static const vault_gcm_backend ossl_backend = {
    "openssl", NULL, ossl_init, ossl_set_iv, ossl_aad, ossl_encrypt, ossl_tag,
    ossl_auth, ossl_check, ossl_decrypt, ossl_wipe,
};

const vault_gcm_backend *vault_gcm_backend_ossl_table(void) { return &ossl_backend; }

#else

const vault_gcm_backend *vault_gcm_backend_ossl_table(void) { return NULL; }

#endif
