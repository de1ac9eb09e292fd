/*
 * base64.c — RFC 4648 base64 (standard alphabet, with padding) for the
 * WebSocket key and accept value. Decoding is strict: length a multiple of
 * four, padding only at the end, no whitespace, unused bits zero.
 */
#include "ws/ws_int.h"

static const char B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t ws_b64_encode(const uint8_t *in, size_t len, char *out)
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

ssize_t ws_b64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
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
