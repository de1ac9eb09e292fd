/*
 * gcm.c — AES-GCM (NIST SP 800-38D): the public gcm_* functions, which
 * check the order of calls and the length limits and then go through the
 * context's backend table; the generic GCM mode (counter blocks, GHASH
 * buffering, J0 for any IV length, tag) shared by the backends whose AES
 * and GHASH are ours (ct64, aesni); the backend list.
 *
 * States of a context: KEYED (no message) → set_iv → AAD → ENC or AUTH.
 * ENC ends with gcm_tag; AUTH ends with gcm_check_tag, which moves to DEC
 * only when the tag matches. DEC allows gcm_decrypt for at most the bytes
 * authenticated. Any failure or the end of a message leaves DONE, from
 * which only gcm_set_iv (or gcm_wipe) goes on.
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

/* ---- generic mode over a gcm_core ---- */

static void inc32(uint8_t ctr[16])
{
    vault_put_be32(ctr + 12, vault_be32(ctr + 12) + 1);
}

static void gh_absorb(gcm_ctx *c, const uint8_t *p, size_t len)
{
    const gcm_core *core = c->be->core;
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

static void gh_pad(gcm_ctx *c)
{
    if (c->gfill) {
        memset(c->gbuf + c->gfill, 0, 16 - c->gfill);
        c->be->core->ghash(c, c->y, c->gbuf, 1);
        c->gfill = 0;
    }
}

/* XOR len bytes with the keystream starting at c->ctr / c->ks. */
static void ctr_xor(gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    const gcm_core *core = c->be->core;
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

int gcm_soft_init(gcm_ctx *c, const uint8_t *key, size_t keylen)
{
    int rc = c->be->core->setkey(c, key, keylen);
    if (rc != GCM_OK)
        return rc;
    uint8_t zero[16] = {0};
    c->be->core->block(c, zero, c->h);
    return GCM_OK;
}

int gcm_soft_set_iv(gcm_ctx *c, const uint8_t *iv, size_t ivlen)
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
    return GCM_OK;
}

int gcm_soft_aad(gcm_ctx *c, const uint8_t *aad, size_t len)
{
    gh_absorb(c, aad, len);
    return GCM_OK;
}

int gcm_soft_encrypt(gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
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
    return GCM_OK;
}

int gcm_soft_tag(gcm_ctx *c, uint8_t tag[16])
{
    gh_pad(c);
    uint8_t lb[16], ek[16];
    vault_put_be64(lb, c->aad_len * 8);
    vault_put_be64(lb + 8, c->text_len * 8);
    c->be->core->ghash(c, c->y, lb, 1);
    c->be->core->block(c, c->j0, ek);
    for (int i = 0; i < 16; i++)
        tag[i] = c->y[i] ^ ek[i];
    vault_memzero(ek, sizeof ek);
    return GCM_OK;
}

int gcm_soft_auth(gcm_ctx *c, const uint8_t *ct, size_t len)
{
    if (c->state == ST_AAD)
        gh_pad(c);
    gh_absorb(c, ct, len);
    return GCM_OK;
}

int gcm_soft_check(gcm_ctx *c, const uint8_t *tag, size_t taglen)
{
    uint8_t t[16];
    gcm_soft_tag(c, t);
    int ok = vault_ct_equal(t, tag, taglen);
    vault_memzero(t, sizeof t);
    memcpy(c->ctr, c->j0, 16);
    inc32(c->ctr);
    c->kpos = 16;
    return ok ? GCM_OK : GCM_EAUTH;
}

int gcm_soft_decrypt(gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    ctr_xor(c, in, out, len);
    return GCM_OK;
}

void gcm_soft_wipe(gcm_ctx *c)
{
    (void)c;
}

static const gcm_backend ct64_backend = {
    "ct64", &gcm_core_ct64, gcm_soft_init, gcm_soft_set_iv, gcm_soft_aad,
    gcm_soft_encrypt, gcm_soft_tag, gcm_soft_auth, gcm_soft_check, gcm_soft_decrypt,
    gcm_soft_wipe,
};

/* ---- backends ---- */

const gcm_backend *gcm_backend_ct64(void) { return &ct64_backend; }
const gcm_backend *gcm_backend_aesni(void) { return gcm_backend_aesni_table(); }
const gcm_backend *gcm_backend_openssl(void) { return gcm_backend_ossl_table(); }

const gcm_backend *gcm_backend_default(void)
{
    const gcm_backend *be = gcm_backend_aesni();
    if (!be)
        be = gcm_backend_openssl();
    return be ? be : &ct64_backend;
}

const char *gcm_backend_name(const gcm_backend *be)
{
    return be ? be->name : "none";
}

size_t gcm_backends(const gcm_backend **out, size_t cap)
{
    const gcm_backend *all[3] = {&ct64_backend, gcm_backend_aesni(), gcm_backend_openssl()};
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        if (all[i] && n < cap)
            out[n++] = all[i];
    return n;
}

/* ---- the public wrappers ---- */

int gcm_init(gcm_ctx *c, const gcm_backend *be, const uint8_t *key, size_t keylen)
{
    memset(c, 0, sizeof *c);
    c->be = be ? be : gcm_backend_default();
    if (keylen != 16 && keylen != 24 && keylen != 32)
        return GCM_EKEY;
    int rc = c->be->init(c, key, keylen);
    if (rc != GCM_OK) {
        gcm_wipe(c);
        return rc;
    }
    c->state = ST_KEYED;
    return GCM_OK;
}

int gcm_set_iv(gcm_ctx *c, const uint8_t *iv, size_t ivlen)
{
    if (c->state == ST_NONE)
        return GCM_ESTATE;
    c->state = ST_DONE;
    if (ivlen == 0)
        return GCM_EIV;
    c->aad_len = c->text_len = c->dec_done = 0;
    int rc = c->be->set_iv(c, iv, ivlen);
    if (rc == GCM_OK)
        c->state = ST_AAD;
    return rc;
}

int gcm_aad(gcm_ctx *c, const uint8_t *aad, size_t len)
{
    if (c->state != ST_AAD)
        return GCM_ESTATE;
    if (len > AAD_MAX - c->aad_len)
        return GCM_ELIMIT;
    c->aad_len += len;
    return len ? c->be->aad(c, aad, len) : GCM_OK;
}

static int text_step(gcm_ctx *c, int want, size_t len)
{
    if (c->state != ST_AAD && c->state != want)
        return GCM_ESTATE;
    if (len > TEXT_MAX - c->text_len)
        return GCM_ELIMIT;
    return GCM_OK;
}

int gcm_encrypt(gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    int rc = text_step(c, ST_ENC, len);
    if (rc != GCM_OK)
        return rc;
    if (!len)
        return GCM_OK;   /* no state change: the AAD stays open */
    rc = c->be->encrypt(c, in, out, len);
    c->text_len += len;
    c->state = rc == GCM_OK ? ST_ENC : ST_DONE;
    return rc;
}

int gcm_tag(gcm_ctx *c, uint8_t *tag, size_t taglen)
{
    if (c->state != ST_AAD && c->state != ST_ENC)
        return GCM_ESTATE;
    c->state = ST_DONE;
    if (taglen < GCM_TAG_MIN || taglen > GCM_TAG_MAX)
        return GCM_ETAGLEN;
    uint8_t t[16];
    int rc = c->be->tag(c, t);
    if (rc == GCM_OK)
        memcpy(tag, t, taglen);
    vault_memzero(t, sizeof t);
    return rc;
}

int gcm_auth(gcm_ctx *c, const uint8_t *ct, size_t len)
{
    int rc = text_step(c, ST_AUTH, len);
    if (rc != GCM_OK)
        return rc;
    if (!len)
        return GCM_OK;
    rc = c->be->auth(c, ct, len);
    c->text_len += len;
    c->state = rc == GCM_OK ? ST_AUTH : ST_DONE;
    return rc;
}

int gcm_check_tag(gcm_ctx *c, const uint8_t *tag, size_t taglen)
{
    if (c->state != ST_AAD && c->state != ST_AUTH)
        return GCM_ESTATE;
    c->state = ST_DONE;
    if (taglen < GCM_TAG_MIN || taglen > GCM_TAG_MAX)
        return GCM_ETAGLEN;
    int rc = c->be->check(c, tag, taglen);
    if (rc == GCM_OK)
        c->state = ST_DEC;
    return rc;
}

int gcm_decrypt(gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
    if (c->state != ST_DEC || len > c->text_len - c->dec_done)
        return GCM_ESTATE;
    int rc = len ? c->be->decrypt(c, in, out, len) : GCM_OK;
    c->dec_done += len;
    if (rc != GCM_OK)
        c->state = ST_DONE;
    return rc;
}

void gcm_wipe(gcm_ctx *c)
{
    if (c->be && c->be->wipe)
        c->be->wipe(c);
    vault_memzero(c, sizeof *c);
}

int gcm_seal(const gcm_backend *be, const uint8_t *key, size_t keylen,
             const uint8_t *iv, size_t ivlen, const uint8_t *aad, size_t aadlen,
             const uint8_t *pt, size_t len, uint8_t *ct, uint8_t *tag, size_t taglen)
{
    gcm_ctx c;
    int rc = gcm_init(&c, be, key, keylen);
    if (rc != GCM_OK)
        return rc;
    if ((rc = gcm_set_iv(&c, iv, ivlen)) == GCM_OK &&
        (rc = gcm_aad(&c, aad, aadlen)) == GCM_OK &&
        (rc = gcm_encrypt(&c, pt, ct, len)) == GCM_OK)
        rc = gcm_tag(&c, tag, taglen);
    gcm_wipe(&c);
    return rc;
}

int gcm_open(const gcm_backend *be, const uint8_t *key, size_t keylen,
             const uint8_t *iv, size_t ivlen, const uint8_t *aad, size_t aadlen,
             const uint8_t *ct, size_t len, const uint8_t *tag, size_t taglen,
             uint8_t *pt)
{
    gcm_ctx c;
    int rc = gcm_init(&c, be, key, keylen);
    if (rc != GCM_OK)
        return rc;
    if ((rc = gcm_set_iv(&c, iv, ivlen)) == GCM_OK &&
        (rc = gcm_aad(&c, aad, aadlen)) == GCM_OK &&
        (rc = gcm_auth(&c, ct, len)) == GCM_OK &&
        (rc = gcm_check_tag(&c, tag, taglen)) == GCM_OK)
        rc = gcm_decrypt(&c, ct, pt, len);
    gcm_wipe(&c);
    return rc;
}
