/*
 * gcm.c — AES-GCM (NIST SP 800-38D): the public gcm_* functions, which
 * check the order of calls and the length limits and then go through the
 * context's backend table; the generic GCM mode (counter blocks, GHASH
 * buffering, J0 for any IV length, tag) shared by the backends whose AES
 * and GHASH are ours (ct64, aesni); the backend list.
 *
 * States of a context: KEYED (no message) → set_iv → AAD → ENC or AUTH.
 * ENC ends with vault_gcm_tag; AUTH ends with vault_gcm_check_tag, which moves to DEC
 * only when the tag matches. DEC allows vault_gcm_decrypt for at most the bytes
 * authenticated. Any failure or the end of a message leaves DONE, from
 * which only vault_gcm_set_iv (or vault_gcm_wipe) goes on.
 *
 * Implementation notes. The counter block c->ctr always holds the next
 * counter to use; c->ks holds the unused tail of the last keystream block
 * (c->kpos is the next byte, 16 when empty). c->gbuf collects a partial
 * GHASH block; it is zero-padded when AAD ends and before the length
 * block, as the spec's padding of A and C requires. Decryption's second
 * pass restarts the counter at inc32(J0).
 */
#include "vault/vault_int.h"

#include <string.h>

enum { ST_NONE = 0, ST_KEYED, ST_AAD, ST_ENC, ST_AUTH, ST_DEC, ST_DONE };

/* SP 800-38D limits: plaintext <= 2^39 - 256 bits, AAD < 2^64 bits. */
#define TEXT_MAX (((uint64_t)1 << 36) - 32)
#define AAD_MAX (((uint64_t)1 << 61) - 1)

/* ---- generic mode over a vault_gcm_core ---- */

static void inc32(uint8_t ctr[16])
{
    vault_put_be32(ctr + 12, vault_be32(ctr + 12) + 1);
}

static void gh_absorb(vault_gcm_ctx *c, const uint8_t *p, size_t len)
{
    const vault_gcm_core *core = c->be->core;
    if (c->gfill) {
        size_t n = 16 - c->gfill;
        if (n > len)
            n = len;
        memcpy(c->gbuf + c->gfill, p, n);
        c->gfill += (unsigned)n;
        p += n;
        len -= n;
        if (c->gfill < 16)
            return;
        core->ghash(c, c->y, c->gbuf, 1);
        c->gfill = 0;
    }
    if (len >= 16) {
        core->ghash(c, c->y, p, len / 16);
        p += len & ~(size_t)15;
        len &= 15;
    }
    if (len) {
        memcpy(c->gbuf, p, len);
        c->gfill = (unsigned)len;
    }
}

static void gh_pad(vault_gcm_ctx *c)
{
    if (c->gfill) {
        memset(c->gbuf + c->gfill, 0, 16 - c->gfill);
        c->be->core->ghash(c, c->y, c->gbuf, 1);
        c->gfill = 0;
    }
}

/* XOR len bytes with the keystream starting at c->ctr / c->ks. */
static void ctr_xor(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    const vault_gcm_core *core = c->be->core;
    while (len && c->kpos < 16) {
        *out++ = *in++ ^ c->ks[c->kpos++];
        len--;
    }
    if (len >= 16) {
        size_t nb = len / 16;
        core->ctr(c, c->ctr, in, out, nb);
        in += nb * 16;
        out += nb * 16;
        len &= 15;
    }
    if (len) {
        core->block(c, c->ctr, c->ks);
        inc32(c->ctr);
        c->kpos = 0;
        while (len--)
            *out++ = *in++ ^ c->ks[c->kpos++];
    }
}

int vault_gcm_soft_init(vault_gcm_ctx *c, const uint8_t *key, size_t keylen)
{
    int rc = c->be->core->setkey(c, key, keylen);
    if (rc != VAULT_GCM_OK)
        return rc;
    uint8_t zero[16] = {0};
    c->be->core->block(c, zero, c->h);
    return VAULT_GCM_OK;
}

int vault_gcm_soft_set_iv(vault_gcm_ctx *c, const uint8_t *iv, size_t ivlen)
{
    memset(c->y, 0, 16);
    c->gfill = 0;
    c->kpos = 16;
    if (ivlen == 12) {
        memcpy(c->j0, iv, 12);
        vault_put_be32(c->j0 + 12, 1);
    } else {
        /* J0 = GHASH(IV || 0^s || 0^64 || [len(IV)]_64). */
        gh_absorb(c, iv, ivlen);
        gh_pad(c);
        uint8_t lb[16] = {0};
        vault_put_be64(lb + 8, (uint64_t)ivlen * 8);
        c->be->core->ghash(c, c->y, lb, 1);
        memcpy(c->j0, c->y, 16);
        memset(c->y, 0, 16);
    }
    memcpy(c->ctr, c->j0, 16);
    inc32(c->ctr);
    return VAULT_GCM_OK;
}

int vault_gcm_soft_aad(vault_gcm_ctx *c, const uint8_t *aad, size_t len)
{
    gh_absorb(c, aad, len);
    return VAULT_GCM_OK;
}

int vault_gcm_soft_encrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    if (c->state == ST_AAD)
        gh_pad(c);
    /* Chunks keep GHASH reading the ciphertext just written, even when
     * in == out. */
    while (len) {
        size_t n = len < 4096 ? len : 4096;
        ctr_xor(c, in, out, n);
        gh_absorb(c, out, n);
        in += n;
        out += n;
        len -= n;
    }
    return VAULT_GCM_OK;
}

int vault_gcm_soft_tag(vault_gcm_ctx *c, uint8_t tag[16])
{
    gh_pad(c);
    uint8_t lb[16], ek[16];
    vault_put_be64(lb, c->aad_len * 8);
    vault_put_be64(lb + 8, c->text_len * 8);
    c->be->core->ghash(c, c->y, lb, 1);
    c->be->core->block(c, c->j0, ek);
    for (int i = 0; i < 16; i++)
        tag[i] = c->y[i] ^ ek[i];
    base_memzero(ek, sizeof ek);
    return VAULT_GCM_OK;
}

int vault_gcm_soft_auth(vault_gcm_ctx *c, const uint8_t *ct, size_t len)
{
    if (c->state == ST_AAD)
        gh_pad(c);
    gh_absorb(c, ct, len);
    return VAULT_GCM_OK;
}

int vault_gcm_soft_check(vault_gcm_ctx *c, const uint8_t *tag, size_t taglen)
{
    uint8_t t[16];
    vault_gcm_soft_tag(c, t);
    int ok = vault_ct_equal(t, tag, taglen);
    base_memzero(t, sizeof t);
    memcpy(c->ctr, c->j0, 16);
    inc32(c->ctr);
    c->kpos = 16;
    return ok ? VAULT_GCM_OK : VAULT_GCM_EAUTH;
}

int vault_gcm_soft_decrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    ctr_xor(c, in, out, len);
    return VAULT_GCM_OK;
}

void vault_gcm_soft_wipe(vault_gcm_ctx *c)
{
    (void)c;
}

static const vault_gcm_backend ct64_backend = {
    "ct64", &vault_gcm_core_ct64, vault_gcm_soft_init, vault_gcm_soft_set_iv, vault_gcm_soft_aad,
    vault_gcm_soft_encrypt, vault_gcm_soft_tag, vault_gcm_soft_auth, vault_gcm_soft_check,
    vault_gcm_soft_decrypt,
    vault_gcm_soft_wipe,
};

/* ---- backends ---- */

const vault_gcm_backend *vault_gcm_backend_ct64(void) { return &ct64_backend; }
const vault_gcm_backend *vault_gcm_backend_aesni(void) { return vault_gcm_backend_aesni_table(); }
const vault_gcm_backend *vault_gcm_backend_openssl(void) { return vault_gcm_backend_ossl_table(); }

const vault_gcm_backend *vault_gcm_backend_default(void)
{
    const vault_gcm_backend *be = vault_gcm_backend_aesni();
    if (!be)
        be = vault_gcm_backend_openssl();
    return be ? be : &ct64_backend;
}

const char *vault_gcm_backend_name(const vault_gcm_backend *be)
{
    return be ? be->name : "none";
}

size_t vault_gcm_backends(const vault_gcm_backend **out, size_t cap)
{
    const vault_gcm_backend *all[3] = {&ct64_backend, vault_gcm_backend_aesni(),
                                       vault_gcm_backend_openssl()};
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        if (all[i] && n < cap)
            out[n++] = all[i];
    return n;
}

/* ---- the public wrappers ---- */

int vault_gcm_init(vault_gcm_ctx *c, const vault_gcm_backend *be, const uint8_t *key, size_t keylen)
{
    memset(c, 0, sizeof *c);
    c->be = be ? be : vault_gcm_backend_default();
    if (keylen != 16 && keylen != 24 && keylen != 32)
        return VAULT_GCM_EKEY;
    int rc = c->be->init(c, key, keylen);
    if (rc != VAULT_GCM_OK) {
        vault_gcm_wipe(c);
        return rc;
    }
    c->state = ST_KEYED;
    return VAULT_GCM_OK;
}

int vault_gcm_set_iv(vault_gcm_ctx *c, const uint8_t *iv, size_t ivlen)
{
    if (c->state == ST_NONE)
        return VAULT_GCM_ESTATE;
    c->state = ST_DONE;
    if (ivlen == 0)
        return VAULT_GCM_EIV;
    c->aad_len = c->text_len = c->dec_done = 0;
    int rc = c->be->set_iv(c, iv, ivlen);
    if (rc == VAULT_GCM_OK)
        c->state = ST_AAD;
    return rc;
}

int vault_gcm_aad(vault_gcm_ctx *c, const uint8_t *aad, size_t len)
{
    if (c->state != ST_AAD)
        return VAULT_GCM_ESTATE;
    if (len > AAD_MAX - c->aad_len)
        return VAULT_GCM_ELIMIT;
    c->aad_len += len;
    return len ? c->be->aad(c, aad, len) : VAULT_GCM_OK;
}

static int text_step(vault_gcm_ctx *c, int want, size_t len)
{
    if (c->state != ST_AAD && c->state != want)
        return VAULT_GCM_ESTATE;
    if (len > TEXT_MAX - c->text_len)
        return VAULT_GCM_ELIMIT;
    return VAULT_GCM_OK;
}

int vault_gcm_encrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    int rc = text_step(c, ST_ENC, len);
    if (rc != VAULT_GCM_OK)
        return rc;
    if (!len)
        return VAULT_GCM_OK;   /* no state change: the AAD stays open */
    rc = c->be->encrypt(c, in, out, len);
    c->text_len += len;
    c->state = rc == VAULT_GCM_OK ? ST_ENC : ST_DONE;
    return rc;
}

int vault_gcm_tag(vault_gcm_ctx *c, uint8_t *tag, size_t taglen)
{
    if (c->state != ST_AAD && c->state != ST_ENC)
        return VAULT_GCM_ESTATE;
    c->state = ST_DONE;
    if (taglen < VAULT_GCM_TAG_MIN || taglen > VAULT_GCM_TAG_MAX)
        return VAULT_GCM_ETAGLEN;
    uint8_t t[16];
    int rc = c->be->tag(c, t);
    if (rc == VAULT_GCM_OK)
        memcpy(tag, t, taglen);
    base_memzero(t, sizeof t);
    return rc;
}

int vault_gcm_auth(vault_gcm_ctx *c, const uint8_t *ct, size_t len)
{
    int rc = text_step(c, ST_AUTH, len);
    if (rc != VAULT_GCM_OK)
        return rc;
    if (!len)
        return VAULT_GCM_OK;
    rc = c->be->auth(c, ct, len);
    c->text_len += len;
    c->state = rc == VAULT_GCM_OK ? ST_AUTH : ST_DONE;
    return rc;
}

int vault_gcm_check_tag(vault_gcm_ctx *c, const uint8_t *tag, size_t taglen)
{
    if (c->state != ST_AAD && c->state != ST_AUTH)
        return VAULT_GCM_ESTATE;
    c->state = ST_DONE;
    if (taglen < VAULT_GCM_TAG_MIN || taglen > VAULT_GCM_TAG_MAX)
        return VAULT_GCM_ETAGLEN;
    int rc = c->be->check(c, tag, taglen);
    if (rc == VAULT_GCM_OK)
        c->state = ST_DEC;
    return rc;
}

int vault_gcm_decrypt(vault_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    if (c->state != ST_DEC || len > c->text_len - c->dec_done)
        return VAULT_GCM_ESTATE;
    int rc = len ? c->be->decrypt(c, in, out, len) : VAULT_GCM_OK;
    c->dec_done += len;
    if (rc != VAULT_GCM_OK)
        c->state = ST_DONE;
    return rc;
}

void vault_gcm_wipe(vault_gcm_ctx *c)
{
    if (c->be && c->be->wipe)
        c->be->wipe(c);
    base_memzero(c, sizeof *c);
}

/* The start of a one-shot seal or open: key, IV, AAD. On failure c needs
 * no wipe (it was wiped here, or init never set it up). */
static int one_shot_begin(vault_gcm_ctx *c, const vault_gcm_backend *be, const uint8_t *key,
                          size_t keylen, const uint8_t *iv, size_t ivlen, const uint8_t *aad,
                          size_t aadlen)
{
    int rc = vault_gcm_init(c, be, key, keylen);
    if (rc != VAULT_GCM_OK)
        return rc;
    if ((rc = vault_gcm_set_iv(c, iv, ivlen)) != VAULT_GCM_OK ||
        (rc = vault_gcm_aad(c, aad, aadlen)) != VAULT_GCM_OK)
        vault_gcm_wipe(c);
    return rc;
}

int vault_gcm_seal(const vault_gcm_backend *be, const uint8_t *key, size_t keylen,
             const uint8_t *iv, size_t ivlen, const uint8_t *aad, size_t aadlen,
             const uint8_t *pt, size_t len, uint8_t *ct, uint8_t *tag, size_t taglen)
{
    vault_gcm_ctx c;
    int rc = one_shot_begin(&c, be, key, keylen, iv, ivlen, aad, aadlen);
    if (rc != VAULT_GCM_OK)
        return rc;
    if ((rc = vault_gcm_encrypt(&c, pt, ct, len)) == VAULT_GCM_OK)
        rc = vault_gcm_tag(&c, tag, taglen);
    vault_gcm_wipe(&c);
    return rc;
}

int vault_gcm_open(const vault_gcm_backend *be, const uint8_t *key, size_t keylen,
             const uint8_t *iv, size_t ivlen, const uint8_t *aad, size_t aadlen,
             const uint8_t *ct, size_t len, const uint8_t *tag, size_t taglen,
             uint8_t *pt)
{
    vault_gcm_ctx c;
    int rc = one_shot_begin(&c, be, key, keylen, iv, ivlen, aad, aadlen);
    if (rc != VAULT_GCM_OK)
        return rc;
    if ((rc = vault_gcm_auth(&c, ct, len)) == VAULT_GCM_OK &&
        (rc = vault_gcm_check_tag(&c, tag, taglen)) == VAULT_GCM_OK)
        rc = vault_gcm_decrypt(&c, ct, pt, len);
    vault_gcm_wipe(&c);
    return rc;
}
