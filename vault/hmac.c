/*
 * hmac.c — HMAC-SHA256 (RFC 2104) and PBKDF2-HMAC-SHA256 (RFC 8018 §5.2).
 *
 * PBKDF2 keys the two HMAC hash states once and copies them for each
 * iteration, so one iteration costs two SHA-256 compressions. Every
 * intermediate (padded keys, U_i, T_i) is wiped before returning.
 */
#include "vault/vault_int.h"

#include <string.h>

typedef struct {
    vault_sha256_ctx inner, outer;
} hmac_ctx;

static void hmac_init(hmac_ctx *c, const void *key, size_t keylen)
{
    uint8_t k[64], pad[64];
    memset(k, 0, sizeof k);
    if (keylen > 64)
        vault_sha256(key, keylen, k);
    else if (keylen)
        memcpy(k, key, keylen);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    vault_sha256_init(&c->inner);
    vault_sha256_update(&c->inner, pad, 64);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    vault_sha256_init(&c->outer);
    vault_sha256_update(&c->outer, pad, 64);
    base_memzero(k, sizeof k);
    base_memzero(pad, sizeof pad);
}

static void hmac_update(hmac_ctx *c, const void *data, size_t len)
{
    vault_sha256_update(&c->inner, data, len);
}

static void hmac_final(hmac_ctx *c, uint8_t out[VAULT_SHA256_LEN])
{
    uint8_t ih[VAULT_SHA256_LEN];
    vault_sha256_final(&c->inner, ih);
    vault_sha256_update(&c->outer, ih, sizeof ih);
    vault_sha256_final(&c->outer, out);
    base_memzero(ih, sizeof ih);
    base_memzero(c, sizeof *c);
}

void vault_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
                       uint8_t out[VAULT_SHA256_LEN])
{
    hmac_ctx c;
    hmac_init(&c, key, keylen);
    hmac_update(&c, data, len);
    hmac_final(&c, out);
}

int vault_pbkdf2_sha256(const void *pass, size_t passlen, const void *salt, size_t saltlen,
                        uint32_t iterations, uint8_t *out, size_t outlen)
{
    if (iterations < 1 || outlen < 1 || outlen > (size_t)0xffffffffu * 32)
        return VAULT_EINVAL;
    hmac_ctx keyed, c;
    uint8_t u[VAULT_SHA256_LEN], t[VAULT_SHA256_LEN], be[4];
    hmac_init(&keyed, pass, passlen);
    for (uint32_t block = 1; outlen; block++) {
        c = keyed;
        hmac_update(&c, salt, saltlen);
        vault_put_be32(be, block);
        hmac_update(&c, be, 4);
        hmac_final(&c, u);
        memcpy(t, u, sizeof t);
        for (uint32_t i = 1; i < iterations; i++) {
            c = keyed;
            hmac_update(&c, u, sizeof u);
            hmac_final(&c, u);
            for (size_t k = 0; k < sizeof t; k++)
                t[k] ^= u[k];
        }
        size_t n = outlen < sizeof t ? outlen : sizeof t;
        memcpy(out, t, n);
        out += n;
        outlen -= n;
    }
    base_memzero(&keyed, sizeof keyed);
    base_memzero(&c, sizeof c);
    base_memzero(u, sizeof u);
    base_memzero(t, sizeof t);
    return VAULT_OK;
}
