/*
 * util.c — the vault's small helpers: constant-time comparison, big-endian
 * loads and stores, hex, error strings and messages.
 */
#include "vault/vault_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

int vault_ct_equal(const void *a, const void *b, size_t n)
{
    const uint8_t *x = a, *y = b;
    uint32_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (uint32_t)(x[i] ^ y[i]);
    /* d in 0..255: (d - 1) >> 31 is 1 exactly when d == 0, without a branch. */
    return (int)((d - 1) >> 31);
}

uint64_t vault_be64(const uint8_t *p)
{
    return (uint64_t)vault_be32(p) << 32 | vault_be32(p + 4);
}

uint32_t vault_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void vault_put_be64(uint8_t *p, uint64_t v)
{
    vault_put_be32(p, (uint32_t)(v >> 32));
    vault_put_be32(p + 4, (uint32_t)v);
}

void vault_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

void vault_hex(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = 0;
}

int vault_seterr(char *err, size_t errlen, int code, const char *fmt, ...)
{
    /* A system call that failed for want of memory (libc allocating for
     * opendir or fdopen, the kernel for open) is out of memory, not I/O:
     * the caller may retry it, as with any other allocation failure. */
    if (code == VAULT_EIO && errno == ENOMEM)
        code = VAULT_ENOMEM;
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *vault_strerror(int code)
{
    switch (code) {
    case VAULT_OK: return "ok";
    case VAULT_ENOMEM: return "out of memory";
    case VAULT_EIO: return "I/O error";
    case VAULT_EPERM: return "unsafe permissions or owner";
    case VAULT_ENOENT: return "no stored session";
    case VAULT_EFORMAT: return "not a valid vault file";
    case VAULT_ETRUNC: return "truncated file";
    case VAULT_EVERSION: return "unsupported vault format version";
    case VAULT_EAUTH: return "authentication failed";
    case VAULT_EWRONGKEY: return "sealed with a different key";
    case VAULT_EORIGIN: return "file belongs to another origin";
    case VAULT_EKEY: return "key provider failed";
    case VAULT_ETOOBIG: return "size limit exceeded";
    case VAULT_EINVAL: return "invalid argument";
    case VAULT_ERANDOM: return "no random bytes";
    case VAULT_EEXPIRED: return "session expired";
    case VAULT_ELOCK: return "could not lock the store";
    case VAULT_EBUSY: return "identity in use by another task";
    }
    return "unknown vault error";
}

const char *vault_gcm_strerror(int code)
{
    switch (code) {
    case VAULT_GCM_OK: return "ok";
    case VAULT_GCM_EAUTH: return "authentication tag mismatch";
    case VAULT_GCM_EKEY: return "bad AES key length";
    case VAULT_GCM_EIV: return "bad IV length";
    case VAULT_GCM_ETAGLEN: return "bad tag length";
    case VAULT_GCM_ESTATE: return "AES-GCM call out of order";
    case VAULT_GCM_ELIMIT: return "AES-GCM length limit exceeded";
    case VAULT_GCM_EBACKEND: return "AES-GCM backend failure";
    }
    return "unknown AES-GCM error";
}
