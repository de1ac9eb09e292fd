/*
 * util.c — error strings, small formatting helpers and the
 * incremental UTF-8 validator shared by the ws module.
 */
#include "ws/ws_int.h"

#include <stdio.h>
#include <string.h>

const char *ws_strerror(int code)
{
    switch (code) {
    case WS_OK: return "ok";
    case WS_EAGAIN: return "need more input";
    case WS_ETIMEOUT: return "timed out";
    case WS_ECLOSED: return "connection closed by peer";
    case WS_EIO: return "I/O error";
    case WS_EPROTO: return "protocol error";
    case WS_ETOOBIG: return "message too big";
    case WS_EHANDSHAKE: return "handshake failed";
    case WS_EURL: return "bad URL";
    case WS_ENOMEM: return "out of memory";
    case WS_ETLS: return "TLS error";
    case WS_EUTF8: return "invalid UTF-8 in text";
    case WS_ERESOLVE: return "host name lookup failed";
    case WS_ECONNECT: return "connect failed";
    default: return "unknown ws error";
    }
}

void ws_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void ws_hostport(const char *host, int port, char *out, size_t cap)
{
    if (strchr(host, ':'))
        snprintf(out, cap, "[%s]:%d", host, port);
    else
        snprintf(out, cap, "%s:%d", host, port);
}

/*
 * UTF-8 validation as a tiny state machine (RFC 3629 table 3.7 of Unicode):
 * state 0 is "at a character boundary"; otherwise the low byte holds the
 * continuation bytes still due and bits 8..15 / 16..23 the allowed range of
 * the next one (only the first continuation byte has a narrowed range:
 * E0, ED, F0, F4). ASCII runs are skipped eight bytes at a time.
 */
bool ws_utf8_run(uint32_t *state, const uint8_t *p, size_t n)
{
    uint32_t s = *state;
    size_t i = 0;
    while (i < n) {
        if (s == 0) {
            while (i + 8 <= n) {
                uint64_t w;
                memcpy(&w, p + i, 8);
                if (w & 0x8080808080808080ull)
                    break;
                i += 8;
            }
            if (i >= n)
                break;
            uint8_t c = p[i++];
            if (c < 0x80)
                continue;
            if (c < 0xC2)
                return false;
            if (c < 0xE0)
                s = 1u | 0x80u << 8 | 0xBFu << 16;
            else if (c == 0xE0)
                s = 2u | 0xA0u << 8 | 0xBFu << 16;
            else if (c == 0xED)
                s = 2u | 0x80u << 8 | 0x9Fu << 16;
            else if (c < 0xF0)
                s = 2u | 0x80u << 8 | 0xBFu << 16;
            else if (c == 0xF0)
                s = 3u | 0x90u << 8 | 0xBFu << 16;
            else if (c < 0xF4)
                s = 3u | 0x80u << 8 | 0xBFu << 16;
            else if (c == 0xF4)
                s = 3u | 0x80u << 8 | 0x8Fu << 16;
            else
                return false;
        } else {
            uint8_t c = p[i++];
            if (c < ((s >> 8) & 0xFF) || c > (s >> 16))
                return false;
            uint32_t need = (s & 0xFF) - 1;
            s = need ? (need | 0x80u << 8 | 0xBFu << 16) : 0;
        }
    }
    *state = s;
    return true;
}
