/*
 * vault_bench.c — throughput of each AES-GCM backend side by side (ct64,
 * aesni when the CPU has it, openssl when the library was built with it),
 * sealing and opening 16 KiB messages with AES-256, plus SHA-256 and
 * PBKDF2-HMAC-SHA256. Built and run by bench/run.sh; figures are printed,
 * not asserted.
 *
 * When the library has no OpenSSL backend, bench/run.sh compiles this file
 * with -DVAULT_BENCH_EVP -lcrypto so that raw OpenSSL EVP AES-256-GCM is
 * measured in the same run as a peer.
 *
 *     vault_bench [MiB per measurement, default 64]
 */
#include "vault/vault.h"
#include "bench/benchlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef VAULT_BENCH_EVP
#include <openssl/evp.h>
#endif

#define MSG (16 * 1024)

static double bench_seal(const vault_gcm_backend *be, size_t total, uint8_t *buf, int open)
{
    uint8_t key[32] = {1, 2, 3}, iv[12] = {4}, tag[16];
    size_t n = total / MSG;
    if (open)
        vault_gcm_seal(be, key, 32, iv, 12, NULL, 0, buf, MSG, buf + MSG, tag, 16);
    double t0 = bench_now_s();
    for (size_t i = 0; i < n; i++) {
        int rc = open ? vault_gcm_open(be, key, 32, iv, 12, NULL, 0, buf + MSG, MSG, tag, 16, buf)
                      : vault_gcm_seal(be, key, 32, iv, 12, NULL, 0, buf, MSG, buf + MSG, tag, 16);
        if (rc) {
            fprintf(stderr, "vault_bench: %s failed: %s\n", vault_gcm_backend_name(be),
                    vault_gcm_strerror(rc));
            return 0;
        }
    }
    return (double)(n * MSG) / (bench_now_s() - t0) / 1e6;
}

#ifdef VAULT_BENCH_EVP
static double bench_evp(size_t total, uint8_t *buf)
{
    uint8_t key[32] = {1, 2, 3}, iv[12] = {4}, tag[16];
    size_t n = total / MSG;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    double t0 = bench_now_s();
    for (size_t i = 0; i < n; i++) {
        int outl;
        EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, iv);
        EVP_EncryptUpdate(c, buf + MSG, &outl, buf, MSG);
        EVP_EncryptFinal_ex(c, buf + MSG, &outl);
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag);
    }
    double mbs = (double)(n * MSG) / (bench_now_s() - t0) / 1e6;
    EVP_CIPHER_CTX_free(c);
    return mbs;
}
#endif

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 64;
    if (!mib)
        mib = 64;
    size_t total = mib << 20;
    uint8_t *buf = calloc(2, MSG);
    if (!buf)
        return 1;
    const vault_gcm_backend *bes[4];
    size_t nb = vault_gcm_backends(bes, 4);
    printf("== vault: AES-256-GCM, %d KiB messages, %zu MiB each (MB/s, higher is better)\n",
           MSG / 1024, mib);
    printf("  %-22s %10s %10s\n", "backend", "seal", "open");
    for (size_t i = 0; i < nb; i++) {
        /* ct64 is ~100x slower than the others: give it less data. */
        size_t t = strcmp(vault_gcm_backend_name(bes[i]), "ct64") == 0 ? total / 8 : total;
        double s = bench_seal(bes[i], t, buf, 0), o = bench_seal(bes[i], t, buf, 1);
        printf("  %-22s %10.1f %10.1f\n", vault_gcm_backend_name(bes[i]), s, o);
    }
#ifdef VAULT_BENCH_EVP
    printf("  %-22s %10.1f %10s\n", "openssl EVP (peer)", bench_evp(total, buf), "-");
#else
    if (!vault_gcm_backend_openssl())
        printf("  %-22s %10s %10s   (build with OpenSSL to compare)\n", "openssl", "-", "-");
#endif
    double t0 = bench_now_s();
    uint8_t d[32];
    size_t sn = total / 4 / MSG;
    for (size_t i = 0; i < sn; i++)
        vault_sha256(buf, MSG, d);
    printf("  %-22s %10.1f MB/s\n", "sha256", (double)(sn * MSG) / (bench_now_s() - t0) / 1e6);
    t0 = bench_now_s();
    uint8_t k[32];
    vault_pbkdf2_sha256("passphrase", 10, "salt", 4, 100000, k, 32);
    double pb = bench_now_s() - t0;
    printf("  %-22s %10.0f iterations/s (%u iterations: %.2f s)\n", "pbkdf2-hmac-sha256",
           100000 / pb, VAULT_PBKDF2_ITERATIONS, pb * VAULT_PBKDF2_ITERATIONS / 100000);
    free(buf);
    return 0;
}
