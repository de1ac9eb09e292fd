/*
 * bytes.c — RFC 4648 base64 (standard alphabet, with padding; decoding is
 * strict: length a multiple of four, padding only at the end, no
 * whitespace, unused bits zero), random bytes from the OS, a wipe the
 * compiler cannot drop, and the value of a hex digit.
 */
#define _GNU_SOURCE /* getrandom */
#include "base/base.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static const char B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base_b64_encode(const uint8_t *in, size_t len, char *out)
{
    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = B64[v >> 18];
        out[o++] = B64[(v >> 12) & 63];
        out[o++] = B64[(v >> 6) & 63];
        out[o++] = B64[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = B64[v >> 18];
        out[o++] = B64[(v >> 12) & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = B64[v >> 18];
        out[o++] = B64[(v >> 12) & 63];
        out[o++] = B64[(v >> 6) & 63];
        out[o++] = '=';
    }
    out[o] = 0;
    return o;
}

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

ssize_t base_b64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
    if (len % 4)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        bool last = i + 4 == len;
        int pad = 0;
        if (last && in[i + 3] == '=')
            pad = in[i + 2] == '=' ? 2 : 1;
        int v[4];
        for (int k = 0; k < 4 - pad; k++) {
            v[k] = b64_val((unsigned char)in[i + k]);
            if (v[k] < 0)
                return -1;
        }
        if (pad == 2 && (v[1] & 15))
            return -1;
        if (pad == 1 && (v[2] & 3))
            return -1;
        size_t n = 3 - (size_t)pad;
        if (o + n > cap)
            return -1;
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12;
        if (pad < 2)
            w |= (uint32_t)v[2] << 6;
        if (pad < 1)
            w |= (uint32_t)v[3];
        out[o++] = (uint8_t)(w >> 16);
        if (n > 1)
            out[o++] = (uint8_t)(w >> 8);
        if (n > 2)
            out[o++] = (uint8_t)w;
    }
    return (ssize_t)o;
}

/* getrandom() first; /dev/urandom when the kernel lacks it (ENOSYS). */
int base_random(void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        p += n;
        len -= (size_t)n;
    }
    if (!len)
        return 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while (len) {
        ssize_t n = read(fd, p, len);
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            if (n < 0 && e == EINTR)
                continue;
            close(fd);
            errno = e;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    close(fd);
    return 0;
}

/* memset, then an empty asm statement that "reads" the memory so the stores
 * cannot be dropped as dead (the explicit_bzero technique); a volatile byte
 * loop where there is no GNU asm. */
void base_memzero(void *p, size_t n)
{
    if (!p || !n)
        return;
#if defined(__GNUC__) || defined(__clang__)
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
#else
    volatile uint8_t *v = p;
    while (n--)
        *v++ = 0;
#endif
}

int base_hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void base_utf8_trim(char *s)
{
    size_t n = strlen(s), k = n;
    while (k > 0 && n - k < 3 && ((unsigned char)s[k - 1] & 0xc0) == 0x80)
        k--;
    if (k > 0 && (unsigned char)s[k - 1] >= 0xc0) {
        unsigned char c = (unsigned char)s[k - 1];
        size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        if (n - (k - 1) < need)
            s[k - 1] = 0;
    }
}

bool base_lower_copy(char *low, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        return false;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)s[i]);
    low[n] = '\0';
    return true;
}
