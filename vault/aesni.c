/*
 * aesni.c — the "aesni" vault_gcm_core: AES with the x86-64 AES-NI instructions
 * and GHASH with PCLMULQDQ, through compiler intrinsics in functions built
 * with __attribute__((target("aes,pclmul,sse4.1"))), so the rest of the
 * binary stays baseline x86-64. vault_gcm_backend_aesni_table() runs cpuid on
 * every call (a few dozen cycles; nothing is cached, so there is no global
 * state) and returns NULL when the CPU lacks any of the three, when the
 * target is not x86-64, or when the compiler is not GCC/clang.
 *
 * Constant time: AESENC/AESENCLAST and PCLMULQDQ have data-independent
 * timing; there is no table and no branch on data. The key schedule is
 * the constant-time one of aes_ct.c (vault_aes_keysched_words), loaded as round
 * keys.
 *
 * Implementation notes. GHASH works on byte-reversed blocks (the Intel
 * carry-less multiplication white paper's representation): a 256-bit
 * carry-less product (Karatsuba-free, four PCLMULQDQ), shifted left one
 * bit for the reflected bit order, then reduced modulo
 * x^128 + x^7 + x^2 + x + 1. Four blocks are aggregated per reduction
 * with H^4..H^1, kept in the context. CTR runs eight blocks at a time.
 */
#include "vault/vault_int.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <cpuid.h>
#include <immintrin.h>
#include <string.h>

#define TGT __attribute__((target("aes,pclmul,sse4.1")))

TGT static __m128i bswap128(__m128i x)
{
    const __m128i m = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm_shuffle_epi8(x, m);
}

/* 256-bit carry-less product of a and b (lo, hi), before the shift. */
TGT static void clmul(__m128i a, __m128i b, __m128i *lo, __m128i *hi)
{
    __m128i t0 = _mm_clmulepi64_si128(a, b, 0x00);
    __m128i t1 = _mm_clmulepi64_si128(a, b, 0x10);
    __m128i t2 = _mm_clmulepi64_si128(a, b, 0x01);
    __m128i t3 = _mm_clmulepi64_si128(a, b, 0x11);
    t1 = _mm_xor_si128(t1, t2);
    *lo = _mm_xor_si128(t0, _mm_slli_si128(t1, 8));
    *hi = _mm_xor_si128(t3, _mm_srli_si128(t1, 8));
}

/* Shift the 256-bit value left by one and reduce it to 128 bits. */
TGT static __m128i reduce(__m128i lo, __m128i hi)
{
    __m128i t7 = _mm_srli_epi32(lo, 31);
    __m128i t8 = _mm_srli_epi32(hi, 31);
    lo = _mm_slli_epi32(lo, 1);
    hi = _mm_slli_epi32(hi, 1);
    __m128i t9 = _mm_srli_si128(t7, 12);
    t8 = _mm_slli_si128(t8, 4);
    t7 = _mm_slli_si128(t7, 4);
    lo = _mm_or_si128(lo, t7);
    hi = _mm_or_si128(hi, t8);
    hi = _mm_or_si128(hi, t9);

    t7 = _mm_slli_epi32(lo, 31);
    t8 = _mm_slli_epi32(lo, 30);
    t9 = _mm_slli_epi32(lo, 25);
    t7 = _mm_xor_si128(t7, t8);
    t7 = _mm_xor_si128(t7, t9);
    t8 = _mm_srli_si128(t7, 4);
    t7 = _mm_slli_si128(t7, 12);
    lo = _mm_xor_si128(lo, t7);
    __m128i t2 = _mm_srli_epi32(lo, 1);
    __m128i t4 = _mm_srli_epi32(lo, 2);
    __m128i t5 = _mm_srli_epi32(lo, 7);
    t2 = _mm_xor_si128(t2, t4);
    t2 = _mm_xor_si128(t2, t5);
    t2 = _mm_xor_si128(t2, t8);
    lo = _mm_xor_si128(lo, t2);
    return _mm_xor_si128(hi, lo);
}

TGT static __m128i gfmul(__m128i a, __m128i b)
{
    __m128i lo, hi;
    clmul(a, b, &lo, &hi);
    return reduce(lo, hi);
}

TGT static __m128i aes_enc(const vault_gcm_ctx *c, __m128i x)
{
    const uint8_t *rk = c->u.ni.rk;
    x = _mm_xor_si128(x, _mm_loadu_si128((const __m128i *)(const void *)rk));
    for (unsigned r = 1; r < c->nr; r++)
        x = _mm_aesenc_si128(x, _mm_loadu_si128((const __m128i *)(const void *)(rk + 16 * r)));
    return _mm_aesenclast_si128(x,
                                _mm_loadu_si128((const __m128i *)(const void *)(rk + 16 * c->nr)));
}

TGT static void ni_block(const vault_gcm_ctx *c, const uint8_t in[16], uint8_t out[16])
{
    __m128i x = aes_enc(c, _mm_loadu_si128((const __m128i *)(const void *)in));
    _mm_storeu_si128((__m128i *)(void *)out, x);
}

TGT static int ni_setkey(vault_gcm_ctx *c, const uint8_t *key, size_t keylen)
{
    uint32_t w[60];
    unsigned nr = vault_aes_keysched_words(w, key, keylen);
    if (!nr)
        return VAULT_GCM_EKEY;
    for (unsigned i = 0; i < (nr + 1) * 4; i++) {
        uint8_t *p = c->u.ni.rk + 4 * i;
        p[0] = (uint8_t)w[i];
        p[1] = (uint8_t)(w[i] >> 8);
        p[2] = (uint8_t)(w[i] >> 16);
        p[3] = (uint8_t)(w[i] >> 24);
    }
    base_memzero(w, sizeof w);
    c->nr = nr;
    /* H^1..H^4, byte-reversed, for the aggregated GHASH. */
    __m128i h = bswap128(aes_enc(c, _mm_setzero_si128())), p = h;
    for (int i = 0; i < 4; i++) {
        _mm_storeu_si128((__m128i *)(void *)(c->u.ni.hp + 16 * i), p);
        p = gfmul(p, h);
    }
    return VAULT_GCM_OK;
}

static void inc32(uint8_t ctr[16])
{
    vault_put_be32(ctr + 12, vault_be32(ctr + 12) + 1);
}

TGT static void ni_ctr(const vault_gcm_ctx *c, uint8_t ctr[16], const uint8_t *in, uint8_t *out,
                       size_t nblocks)
{
    const uint8_t *rk = c->u.ni.rk;
    unsigned nr = c->nr;
    uint8_t cb[8 * 16];
    while (nblocks) {
        size_t n = nblocks < 8 ? nblocks : 8;
        __m128i x[8];
        for (size_t i = 0; i < n; i++) {
            memcpy(cb + 16 * i, ctr, 16);
            inc32(ctr);
        }
        __m128i k = _mm_loadu_si128((const __m128i *)(const void *)rk);
        for (size_t i = 0; i < 8; i++)
            x[i] = i < n ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)(void *)(cb + 16 * i)),
                                         k)
                         : _mm_setzero_si128();
        for (unsigned r = 1; r < nr; r++) {
            k = _mm_loadu_si128((const __m128i *)(const void *)(rk + 16 * r));
            for (size_t i = 0; i < 8; i++)
                x[i] = _mm_aesenc_si128(x[i], k);
        }
        k = _mm_loadu_si128((const __m128i *)(const void *)(rk + 16 * nr));
        for (size_t i = 0; i < n; i++) {
            __m128i ks = _mm_aesenclast_si128(x[i], k);
            __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(in + 16 * i));
            _mm_storeu_si128((__m128i *)(void *)(out + 16 * i), _mm_xor_si128(d, ks));
        }
        in += 16 * n;
        out += 16 * n;
        nblocks -= n;
    }
}

TGT static void ni_ghash(const vault_gcm_ctx *c, uint8_t y[16], const uint8_t *data, size_t nblocks)
{
    const uint8_t *hp = c->u.ni.hp;
    __m128i h1 = _mm_loadu_si128((const __m128i *)(const void *)hp);
    __m128i h2 = _mm_loadu_si128((const __m128i *)(const void *)(hp + 16));
    __m128i h3 = _mm_loadu_si128((const __m128i *)(const void *)(hp + 32));
    __m128i h4 = _mm_loadu_si128((const __m128i *)(const void *)(hp + 48));
    __m128i acc = bswap128(_mm_loadu_si128((const __m128i *)(void *)y));
    while (nblocks >= 4) {
        __m128i x1 = bswap128(_mm_loadu_si128((const __m128i *)(const void *)data));
        __m128i x2 = bswap128(_mm_loadu_si128((const __m128i *)(const void *)(data + 16)));
        __m128i x3 = bswap128(_mm_loadu_si128((const __m128i *)(const void *)(data + 32)));
        __m128i x4 = bswap128(_mm_loadu_si128((const __m128i *)(const void *)(data + 48)));
        __m128i lo, hi, l, h;
        clmul(_mm_xor_si128(acc, x1), h4, &lo, &hi);
        clmul(x2, h3, &l, &h);
        lo = _mm_xor_si128(lo, l);
        hi = _mm_xor_si128(hi, h);
        clmul(x3, h2, &l, &h);
        lo = _mm_xor_si128(lo, l);
        hi = _mm_xor_si128(hi, h);
        clmul(x4, h1, &l, &h);
        lo = _mm_xor_si128(lo, l);
        hi = _mm_xor_si128(hi, h);
        acc = reduce(lo, hi);
        data += 64;
        nblocks -= 4;
    }
    while (nblocks--) {
        __m128i x = bswap128(_mm_loadu_si128((const __m128i *)(const void *)data));
        acc = gfmul(_mm_xor_si128(acc, x), h1);
        data += 16;
    }
    _mm_storeu_si128((__m128i *)(void *)y, bswap128(acc));
}

static const vault_gcm_core ni_core = {ni_setkey, ni_block, ni_ctr, ni_ghash};

static const vault_gcm_backend ni_backend = {
    "aesni", &ni_core, vault_gcm_soft_init, vault_gcm_soft_set_iv, vault_gcm_soft_aad,
    vault_gcm_soft_encrypt, vault_gcm_soft_tag, vault_gcm_soft_auth, vault_gcm_soft_check,
    vault_gcm_soft_decrypt,
    vault_gcm_soft_wipe,
};

const vault_gcm_backend *vault_gcm_backend_aesni_table(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return NULL;
    const unsigned need = (1u << 25) /* AES */ | (1u << 1) /* PCLMULQDQ */ |
                          (1u << 19) /* SSE4.1 */ | (1u << 9) /* SSSE3 */;
    return (c & need) == need ? &ni_backend : NULL;
}

#else

const vault_gcm_backend *vault_gcm_backend_aesni_table(void) { return NULL; }

#endif
