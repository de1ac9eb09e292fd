/*
 * aes_ct.c — constant-time AES: the bitsliced "ct64" design of BearSSL
 * (src/symcipher/aes_ct64*.c), rewritten for this project, and the ct64
 * vault_gcm_core that the generic GCM code in gcm.c drives.
 *
 * Implementation notes. Four blocks are processed at once, spread over
 * eight 64-bit words: after aes_ct64_ortho() word i holds bit i of every
 * byte of the four blocks. The S-box is then a Boolean circuit (Boyar and
 * Peralta's 113-gate one) applied to the eight words, so there is no table
 * and no branch anywhere on secret data: every operation is AND, XOR,
 * shift or rotation, and time depends only on the lengths. The key
 * schedule goes through the same circuit (sub_word). ShiftRows and
 * MixColumns become fixed bit permutations and rotations. Bytes enter as
 * little-endian 32-bit words (interleave_in) as in BearSSL.
 *
 * Only encryption is needed (GCM uses the forward cipher for CTR and H).
 */
#include "vault/vault_int.h"

#include <string.h>

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* The S-box on eight bitsliced words; q[0] is the least significant bit.
 * fnlen: allow: a straight-line Boolean circuit (no branches, no loops),
 * which reads best whole. */
static void bitslice_sbox(uint64_t *q)
{
    uint64_t x0, x1, x2, x3, x4, x5, x6, x7;
    uint64_t y1, y2, y3, y4, y5, y6, y7, y8, y9;
    uint64_t y10, y11, y12, y13, y14, y15, y16, y17, y18, y19;
    uint64_t y20, y21;
    uint64_t z0, z1, z2, z3, z4, z5, z6, z7, z8, z9;
    uint64_t z10, z11, z12, z13, z14, z15, z16, z17;
    uint64_t t0, t1, t2, t3, t4, t5, t6, t7, t8, t9;
    uint64_t t10, t11, t12, t13, t14, t15, t16, t17, t18, t19;
    uint64_t t20, t21, t22, t23, t24, t25, t26, t27, t28, t29;
    uint64_t t30, t31, t32, t33, t34, t35, t36, t37, t38, t39;
    uint64_t t40, t41, t42, t43, t44, t45, t46, t47, t48, t49;
    uint64_t t50, t51, t52, t53, t54, t55, t56, t57, t58, t59;
    uint64_t t60, t61, t62, t63, t64, t65, t66, t67;
    uint64_t s0, s1, s2, s3, s4, s5, s6, s7;

    x0 = q[7];
    x1 = q[6];
    x2 = q[5];
    x3 = q[4];
    x4 = q[3];
    x5 = q[2];
    x6 = q[1];
    x7 = q[0];

    /* Top linear transformation. */
    y14 = x3 ^ x5;
    y13 = x0 ^ x6;
    y9 = x0 ^ x3;
    y8 = x0 ^ x5;
    t0 = x1 ^ x2;
    y1 = t0 ^ x7;
    y4 = y1 ^ x3;
    y12 = y13 ^ y14;
    y2 = y1 ^ x0;
    y5 = y1 ^ x6;
    y3 = y5 ^ y8;
    t1 = x4 ^ y12;
    y15 = t1 ^ x5;
    y20 = t1 ^ x1;
    y6 = y15 ^ x7;
    y10 = y15 ^ t0;
    y11 = y20 ^ y9;
    y7 = x7 ^ y11;
    y17 = y10 ^ y11;
    y19 = y10 ^ y8;
    y16 = t0 ^ y11;
    y21 = y13 ^ y16;
    y18 = x0 ^ y16;

    /* Non-linear section. */
    t2 = y12 & y15;
    t3 = y3 & y6;
    t4 = t3 ^ t2;
    t5 = y4 & x7;
    t6 = t5 ^ t2;
    t7 = y13 & y16;
    t8 = y5 & y1;
    t9 = t8 ^ t7;
    t10 = y2 & y7;
    t11 = t10 ^ t7;
    t12 = y9 & y11;
    t13 = y14 & y17;
    t14 = t13 ^ t12;
    t15 = y8 & y10;
    t16 = t15 ^ t12;
    t17 = t4 ^ t14;
    t18 = t6 ^ t16;
    t19 = t9 ^ t14;
    t20 = t11 ^ t16;
    t21 = t17 ^ y20;
    t22 = t18 ^ y19;
    t23 = t19 ^ y21;
    t24 = t20 ^ y18;

    t25 = t21 ^ t22;
    t26 = t21 & t23;
    t27 = t24 ^ t26;
    t28 = t25 & t27;
    t29 = t28 ^ t22;
    t30 = t23 ^ t24;
    t31 = t22 ^ t26;
    t32 = t31 & t30;
    t33 = t32 ^ t24;
    t34 = t23 ^ t33;
    t35 = t27 ^ t33;
    t36 = t24 & t35;
    t37 = t36 ^ t34;
    t38 = t27 ^ t36;
    t39 = t29 & t38;
    t40 = t25 ^ t39;

    t41 = t40 ^ t37;
    t42 = t29 ^ t33;
    t43 = t29 ^ t40;
    t44 = t33 ^ t37;
    t45 = t42 ^ t41;
    z0 = t44 & y15;
    z1 = t37 & y6;
    z2 = t33 & x7;
    z3 = t43 & y16;
    z4 = t40 & y1;
    z5 = t29 & y7;
    z6 = t42 & y11;
    z7 = t45 & y17;
    z8 = t41 & y10;
    z9 = t44 & y12;
    z10 = t37 & y3;
    z11 = t33 & y4;
    z12 = t43 & y13;
    z13 = t40 & y5;
    z14 = t29 & y2;
    z15 = t42 & y9;
    z16 = t45 & y14;
    z17 = t41 & y8;

    /* Bottom linear transformation. */
    t46 = z15 ^ z16;
    t47 = z10 ^ z11;
    t48 = z5 ^ z13;
    t49 = z9 ^ z10;
    t50 = z2 ^ z12;
    t51 = z2 ^ z5;
    t52 = z7 ^ z8;
    t53 = z0 ^ z3;
    t54 = z6 ^ z7;
    t55 = z16 ^ z17;
    t56 = z12 ^ t48;
    t57 = t50 ^ t53;
    t58 = z4 ^ t46;
    t59 = z3 ^ t54;
    t60 = t46 ^ t57;
    t61 = z14 ^ t57;
    t62 = t52 ^ t58;
    t63 = t49 ^ t58;
    t64 = z4 ^ t59;
    t65 = t61 ^ t62;
    t66 = z1 ^ t63;
    s0 = t59 ^ t63;
    s6 = t56 ^ ~t62;
    s7 = t48 ^ ~t60;
    t67 = t64 ^ t65;
    s3 = t53 ^ t66;
    s4 = t51 ^ t66;
    s5 = t47 ^ t65;
    s1 = t64 ^ ~s3;
    s2 = t55 ^ ~t67;

    q[7] = s0;
    q[6] = s1;
    q[5] = s2;
    q[4] = s3;
    q[3] = s4;
    q[2] = s5;
    q[1] = s6;
    q[0] = s7;
}

#define SWAPN(cl, ch, s, x, y) do { \
        uint64_t a_ = (x), b_ = (y); \
        (x) = (a_ & (uint64_t)(cl)) | ((b_ & (uint64_t)(cl)) << (s)); \
        (y) = ((a_ & (uint64_t)(ch)) >> (s)) | (b_ & (uint64_t)(ch)); \
    } while (0)
#define SWAP2(x, y) SWAPN(0x5555555555555555u, 0xAAAAAAAAAAAAAAAAu, 1, x, y)
#define SWAP4(x, y) SWAPN(0x3333333333333333u, 0xCCCCCCCCCCCCCCCCu, 2, x, y)
#define SWAP8(x, y) SWAPN(0x0F0F0F0F0F0F0F0Fu, 0xF0F0F0F0F0F0F0F0u, 4, x, y)

/* Transpose between "bytes" and "bit planes" (its own inverse). */
static void ortho(uint64_t *q)
{
    SWAP2(q[0], q[1]);
    SWAP2(q[2], q[3]);
    SWAP2(q[4], q[5]);
    SWAP2(q[6], q[7]);

    SWAP4(q[0], q[2]);
    SWAP4(q[1], q[3]);
    SWAP4(q[4], q[6]);
    SWAP4(q[5], q[7]);

    SWAP8(q[0], q[4]);
    SWAP8(q[1], q[5]);
    SWAP8(q[2], q[6]);
    SWAP8(q[3], q[7]);
}

static void interleave_in(uint64_t *q0, uint64_t *q1, const uint32_t *w)
{
    uint64_t x0 = w[0], x1 = w[1], x2 = w[2], x3 = w[3];
    x0 |= (x0 << 16);
    x1 |= (x1 << 16);
    x2 |= (x2 << 16);
    x3 |= (x3 << 16);
    x0 &= (uint64_t)0x0000FFFF0000FFFFu;
    x1 &= (uint64_t)0x0000FFFF0000FFFFu;
    x2 &= (uint64_t)0x0000FFFF0000FFFFu;
    x3 &= (uint64_t)0x0000FFFF0000FFFFu;
    x0 |= (x0 << 8);
    x1 |= (x1 << 8);
    x2 |= (x2 << 8);
    x3 |= (x3 << 8);
    x0 &= (uint64_t)0x00FF00FF00FF00FFu;
    x1 &= (uint64_t)0x00FF00FF00FF00FFu;
    x2 &= (uint64_t)0x00FF00FF00FF00FFu;
    x3 &= (uint64_t)0x00FF00FF00FF00FFu;
    *q0 = x0 | (x2 << 8);
    *q1 = x1 | (x3 << 8);
}

static void interleave_out(uint32_t *w, uint64_t q0, uint64_t q1)
{
    uint64_t x0, x1, x2, x3;
    x0 = q0 & (uint64_t)0x00FF00FF00FF00FFu;
    x1 = q1 & (uint64_t)0x00FF00FF00FF00FFu;
    x2 = (q0 >> 8) & (uint64_t)0x00FF00FF00FF00FFu;
    x3 = (q1 >> 8) & (uint64_t)0x00FF00FF00FF00FFu;
    x0 |= (x0 >> 8);
    x1 |= (x1 >> 8);
    x2 |= (x2 >> 8);
    x3 |= (x3 >> 8);
    x0 &= (uint64_t)0x0000FFFF0000FFFFu;
    x1 &= (uint64_t)0x0000FFFF0000FFFFu;
    x2 &= (uint64_t)0x0000FFFF0000FFFFu;
    x3 &= (uint64_t)0x0000FFFF0000FFFFu;
    w[0] = (uint32_t)x0 | (uint32_t)(x0 >> 16);
    w[1] = (uint32_t)x1 | (uint32_t)(x1 >> 16);
    w[2] = (uint32_t)x2 | (uint32_t)(x2 >> 16);
    w[3] = (uint32_t)x3 | (uint32_t)(x3 >> 16);
}

static uint32_t sub_word(uint32_t x)
{
    uint64_t q[8];
    memset(q, 0, sizeof q);
    q[0] = x;
    ortho(q);
    bitslice_sbox(q);
    ortho(q);
    uint32_t r = (uint32_t)q[0];
    base_memzero(q, sizeof q);
    return r;
}

unsigned vault_aes_keysched_words(uint32_t w[60], const uint8_t *key, size_t keylen)
{
    static const uint8_t rcon[10] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80,
                                     0x1B, 0x36};
    unsigned nr;
    switch (keylen) {
    case 16: nr = 10; break;
    case 24: nr = 12; break;
    case 32: nr = 14; break;
    default: return 0;
    }
    int nk = (int)(keylen >> 2), nkf = (int)((nr + 1) << 2);
    for (int i = 0; i < nk; i++)
        w[i] = le32(key + 4 * i);
    uint32_t tmp = w[nk - 1];
    /* The branches below depend on the word index only, never on key bytes. */
    for (int i = nk, j = 0, k = 0; i < nkf; i++) {
        if (j == 0) {
            tmp = (tmp << 24) | (tmp >> 8);
            tmp = sub_word(tmp) ^ rcon[k];
        } else if (nk > 6 && j == 4) {
            tmp = sub_word(tmp);
        }
        tmp ^= w[i - nk];
        w[i] = tmp;
        if (++j == nk) {
            j = 0;
            k++;
        }
    }
    tmp = 0;
    return nr;
}

/* Expanded bitsliced schedule for vault_aes_ct64_encrypt4 ((nr+1)*8 words). */
static unsigned vault_aes_ct64_keysched(uint64_t skey[120], const uint8_t *key,
                                        size_t keylen)
{
    uint32_t w[60];
    unsigned nr = vault_aes_keysched_words(w, key, keylen);
    if (!nr)
        return 0;
    for (unsigned i = 0; i < (nr + 1) * 4; i += 4) {
        uint64_t q[8];
        interleave_in(&q[0], &q[4], w + i);
        q[1] = q[2] = q[3] = q[0];
        q[5] = q[6] = q[7] = q[4];
        ortho(q);
        /* Every block slot gets the same round key: keep one copy of each
         * bit and spread it over the four slots (BearSSL's compressed then
         * expanded form, done in one step). */
        uint64_t comp[2];
        comp[0] = (q[0] & (uint64_t)0x1111111111111111u) |
                  (q[1] & (uint64_t)0x2222222222222222u) |
                  (q[2] & (uint64_t)0x4444444444444444u) |
                  (q[3] & (uint64_t)0x8888888888888888u);
        comp[1] = (q[4] & (uint64_t)0x1111111111111111u) |
                  (q[5] & (uint64_t)0x2222222222222222u) |
                  (q[6] & (uint64_t)0x4444444444444444u) |
                  (q[7] & (uint64_t)0x8888888888888888u);
        for (int h = 0; h < 2; h++) {
            uint64_t x0, x1, x2, x3;
            x0 = x1 = x2 = x3 = comp[h];
            x0 &= (uint64_t)0x1111111111111111u;
            x1 &= (uint64_t)0x2222222222222222u;
            x2 &= (uint64_t)0x4444444444444444u;
            x3 &= (uint64_t)0x8888888888888888u;
            x1 >>= 1;
            x2 >>= 2;
            x3 >>= 3;
            uint64_t *sk = skey + (i >> 2) * 8 + h * 4;
            sk[0] = (x0 << 4) - x0;
            sk[1] = (x1 << 4) - x1;
            sk[2] = (x2 << 4) - x2;
            sk[3] = (x3 << 4) - x3;
        }
        base_memzero(q, sizeof q);
        base_memzero(comp, sizeof comp);
    }
    base_memzero(w, sizeof w);
    return nr;
}

static void add_round_key(uint64_t *q, const uint64_t *sk)
{
    for (int i = 0; i < 8; i++)
        q[i] ^= sk[i];
}

static void shift_rows(uint64_t *q)
{
    for (int i = 0; i < 8; i++) {
        uint64_t x = q[i];
        q[i] = (x & (uint64_t)0x000000000000FFFFu) |
               ((x & (uint64_t)0x00000000FFF00000u) >> 4) |
               ((x & (uint64_t)0x00000000000F0000u) << 12) |
               ((x & (uint64_t)0x0000FF0000000000u) >> 8) |
               ((x & (uint64_t)0x000000FF00000000u) << 8) |
               ((x & (uint64_t)0xF000000000000000u) >> 12) |
               ((x & (uint64_t)0x0FFF000000000000u) << 4);
    }
}

static uint64_t rotr32(uint64_t x)
{
    return (x << 32) | (x >> 32);
}

static void mix_columns(uint64_t *q)
{
    uint64_t q0 = q[0], q1 = q[1], q2 = q[2], q3 = q[3];
    uint64_t q4 = q[4], q5 = q[5], q6 = q[6], q7 = q[7];
    uint64_t r0 = (q0 >> 16) | (q0 << 48);
    uint64_t r1 = (q1 >> 16) | (q1 << 48);
    uint64_t r2 = (q2 >> 16) | (q2 << 48);
    uint64_t r3 = (q3 >> 16) | (q3 << 48);
    uint64_t r4 = (q4 >> 16) | (q4 << 48);
    uint64_t r5 = (q5 >> 16) | (q5 << 48);
    uint64_t r6 = (q6 >> 16) | (q6 << 48);
    uint64_t r7 = (q7 >> 16) | (q7 << 48);

    q[0] = q7 ^ r7 ^ r0 ^ rotr32(q0 ^ r0);
    q[1] = q0 ^ r0 ^ q7 ^ r7 ^ r1 ^ rotr32(q1 ^ r1);
    q[2] = q1 ^ r1 ^ r2 ^ rotr32(q2 ^ r2);
    q[3] = q2 ^ r2 ^ q7 ^ r7 ^ r3 ^ rotr32(q3 ^ r3);
    q[4] = q3 ^ r3 ^ q7 ^ r7 ^ r4 ^ rotr32(q4 ^ r4);
    q[5] = q4 ^ r4 ^ r5 ^ rotr32(q5 ^ r5);
    q[6] = q5 ^ r5 ^ r6 ^ rotr32(q6 ^ r6);
    q[7] = q6 ^ r6 ^ r7 ^ rotr32(q7 ^ r7);
}

/* Encrypt four 16-byte blocks (64 bytes) in and out (may alias). */
static void vault_aes_ct64_encrypt4(const uint64_t *skey, unsigned nr, const uint8_t in[64],
                                    uint8_t out[64])
{
    uint32_t w[16];
    uint64_t q[8];
    for (int i = 0; i < 16; i++)
        w[i] = le32(in + 4 * i);
    for (int i = 0; i < 4; i++)
        interleave_in(&q[i], &q[i + 4], w + (i << 2));
    ortho(q);
    add_round_key(q, skey);
    for (unsigned u = 1; u < nr; u++) {
        bitslice_sbox(q);
        shift_rows(q);
        mix_columns(q);
        add_round_key(q, skey + (u << 3));
    }
    bitslice_sbox(q);
    shift_rows(q);
    add_round_key(q, skey + (nr << 3));
    ortho(q);
    for (int i = 0; i < 4; i++)
        interleave_out(w + (i << 2), q[i], q[i + 4]);
    for (int i = 0; i < 16; i++)
        put_le32(out + 4 * i, w[i]);
    base_memzero(q, sizeof q);
    base_memzero(w, sizeof w);
}

/* ---- the ct64 vault_gcm_core ---- */

static int ct64_setkey(vault_gcm_ctx *c, const uint8_t *key, size_t keylen)
{
    c->nr = vault_aes_ct64_keysched(c->u.ct64, key, keylen);
    return c->nr ? VAULT_GCM_OK : VAULT_GCM_EKEY;
}

static void ct64_block(const vault_gcm_ctx *c, const uint8_t in[16], uint8_t out[16])
{
    uint8_t buf[64];
    memset(buf, 0, sizeof buf);
    memcpy(buf, in, 16);
    vault_aes_ct64_encrypt4(c->u.ct64, c->nr, buf, buf);
    memcpy(out, buf, 16);
    base_memzero(buf, sizeof buf);
}

static void inc32(uint8_t ctr[16])
{
    uint32_t v = vault_be32(ctr + 12) + 1;
    vault_put_be32(ctr + 12, v);
}

static void ct64_ctr(const vault_gcm_ctx *c, uint8_t ctr[16], const uint8_t *in, uint8_t *out,
                     size_t nblocks)
{
    uint8_t ks[64];
    while (nblocks) {
        size_t n = nblocks < 4 ? nblocks : 4;
        for (size_t i = 0; i < 4; i++) {
            memcpy(ks + 16 * i, ctr, 16);
            if (i < n)
                inc32(ctr);
        }
        vault_aes_ct64_encrypt4(c->u.ct64, c->nr, ks, ks);
        for (size_t i = 0; i < n * 16; i++)
            out[i] = in[i] ^ ks[i];
        in += n * 16;
        out += n * 16;
        nblocks -= n;
    }
    base_memzero(ks, sizeof ks);
}

static void ct64_ghash(const vault_gcm_ctx *c, uint8_t y[16], const uint8_t *data, size_t nblocks)
{
    vault_ghash_ctmul64(y, c->h, data, nblocks * 16);
}

const vault_gcm_core vault_gcm_core_ct64 = {ct64_setkey, ct64_block, ct64_ctr, ct64_ghash};
