/*
 * ghash.c — constant-time GHASH by integer multiplication (the "ctmul64"
 * method of BearSSL src/hash/vault_ghash_ctmul64.c, rewritten here).
 *
 * Implementation notes. A carry-less 64x64 product is built from ordinary
 * multiplications of operands with "holes": each operand is split into
 * four masks keeping every fourth bit, so in each partial product the
 * carries land in the holes and are masked off. Position k of the low 64
 * bits sums at most 15 one-bit terms below bit 60 (fits in the 4-bit
 * spacing) and the term sum at bit 60 carries only past bit 63, so the low
 * half is exact; the high half is obtained as the low half of the product
 * of the bit-reversed operands. A 128x128 product takes three of those
 * (Karatsuba) twice, then the reduction modulo x^128 + x^7 + x^2 + x + 1
 * in GCM's reflected bit order is shifts and XORs. No table, no branch on
 * data: time depends only on the length. Integer multiplication is
 * constant-time on the x86-64 and AArch64 cores this project targets.
 */
#include "vault/vault_int.h"

#include <string.h>

static uint64_t bmul64(uint64_t x, uint64_t y)
{
    uint64_t x0 = x & (uint64_t)0x1111111111111111u;
    uint64_t x1 = x & (uint64_t)0x2222222222222222u;
    uint64_t x2 = x & (uint64_t)0x4444444444444444u;
    uint64_t x3 = x & (uint64_t)0x8888888888888888u;
    uint64_t y0 = y & (uint64_t)0x1111111111111111u;
    uint64_t y1 = y & (uint64_t)0x2222222222222222u;
    uint64_t y2 = y & (uint64_t)0x4444444444444444u;
    uint64_t y3 = y & (uint64_t)0x8888888888888888u;
    uint64_t z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1);
    uint64_t z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2);
    uint64_t z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3);
    uint64_t z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0);
    z0 &= (uint64_t)0x1111111111111111u;
    z1 &= (uint64_t)0x2222222222222222u;
    z2 &= (uint64_t)0x4444444444444444u;
    z3 &= (uint64_t)0x8888888888888888u;
    return z0 | z1 | z2 | z3;
}

static uint64_t rev64(uint64_t x)
{
#define RMS(m, s) x = ((x & (uint64_t)(m)) << (s)) | ((x >> (s)) & (uint64_t)(m))
    RMS(0x5555555555555555u, 1);
    RMS(0x3333333333333333u, 2);
    RMS(0x0F0F0F0F0F0F0F0Fu, 4);
    RMS(0x00FF00FF00FF00FFu, 8);
    RMS(0x0000FFFF0000FFFFu, 16);
#undef RMS
    return (x << 32) | (x >> 32);
}

void vault_ghash_ctmul64(uint8_t y[16], const uint8_t h[16], const uint8_t *data, size_t len)
{
    uint64_t y1 = vault_be64(y), y0 = vault_be64(y + 8);
    uint64_t h1 = vault_be64(h), h0 = vault_be64(h + 8);
    uint64_t h0r = rev64(h0), h1r = rev64(h1);
    uint64_t h2 = h0 ^ h1, h2r = h0r ^ h1r;
    uint8_t tmp[16];
    while (len > 0) {
        const uint8_t *src;
        if (len >= 16) {
            src = data;
            data += 16;
            len -= 16;
        } else {
            memcpy(tmp, data, len);
            memset(tmp + len, 0, sizeof tmp - len);
            src = tmp;
            len = 0;
        }
        y1 ^= vault_be64(src);
        y0 ^= vault_be64(src + 8);

        uint64_t y0r = rev64(y0), y1r = rev64(y1);
        uint64_t y2 = y0 ^ y1, y2r = y0r ^ y1r;
        uint64_t z0 = bmul64(y0, h0);
        uint64_t z1 = bmul64(y1, h1);
        uint64_t z2 = bmul64(y2, h2);
        uint64_t z0h = bmul64(y0r, h0r);
        uint64_t z1h = bmul64(y1r, h1r);
        uint64_t z2h = bmul64(y2r, h2r);
        z2 ^= z0 ^ z1;
        z2h ^= z0h ^ z1h;
        z0h = rev64(z0h) >> 1;
        z1h = rev64(z1h) >> 1;
        z2h = rev64(z2h) >> 1;

        uint64_t v0 = z0, v1 = z0h ^ z2, v2 = z1 ^ z2h, v3 = z1h;
        v3 = (v3 << 1) | (v2 >> 63);
        v2 = (v2 << 1) | (v1 >> 63);
        v1 = (v1 << 1) | (v0 >> 63);
        v0 = (v0 << 1);

        v2 ^= v0 ^ (v0 >> 1) ^ (v0 >> 2) ^ (v0 >> 7);
        v1 ^= (v0 << 63) ^ (v0 << 62) ^ (v0 << 57);
        v3 ^= v1 ^ (v1 >> 1) ^ (v1 >> 2) ^ (v1 >> 7);
        v2 ^= (v1 << 63) ^ (v1 << 62) ^ (v1 << 57);

        y0 = v2;
        y1 = v3;
    }
    vault_put_be64(y, y1);
    vault_put_be64(y + 8, y0);
    base_memzero(tmp, sizeof tmp);
}
