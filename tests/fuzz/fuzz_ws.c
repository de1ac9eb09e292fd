/*
 * fuzz_ws.c — libFuzzer target for every parser in ws/ that reads outside
 * input. The first byte picks the parser, the rest is its input:
 *
 *   0 mod 6  client-side decoder (unmasked frames), max_message 4096
 *   1        server-side decoder (masked frames), max_message 4096
 *   2        ws_handshake_check
 *   3        ws_http_parse_response (not at EOF, then at EOF)
 *   4        ws_url_parse
 *   5        ws_pipe_find_nul
 *
 * The decoder is fed twice — whole and in pieces whose sizes come from the
 * input — and both must produce the same events (a differential check of
 * the incremental state machine); a mismatch aborts.
 */
#include "ws/ws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A running digest of the events (type, code, length, payload hash). */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t run_decoder(const uint8_t *in, size_t len, bool masked, const uint8_t *steps,
                            size_t nsteps, int *events)
{
    ws_decoder d;
    ws_decoder_init(&d, 4096, masked);
    uint64_t h = 0;
    size_t pos = 0, si = 0;
    bool done = false;
    *events = 0;
    while (pos < len && !done) {
        size_t chunk = len - pos;
        if (nsteps) {
            chunk = (size_t)steps[si++ % nsteps] + 1;
            if (chunk > len - pos)
                chunk = len - pos;
        }
        size_t end = pos + chunk;
        while (pos < end && !done) {
            ws_event ev;
            size_t n = ws_decoder_feed(&d, in + pos, end - pos, &ev);
            if (n > end - pos)
                abort();
            pos += n;
            if (ev.type == WS_EV_NONE) {
                if (pos != end)
                    abort(); /* NONE means everything was consumed */
                continue;
            }
            (*events)++;
            h = mix(h, (uint64_t)ev.type);
            h = mix(h, (uint64_t)ev.len);
            h = mix(h, (uint64_t)(ev.code + 100));
            h = mix(h, ev.close_code);
            for (size_t i = 0; i < ev.len; i++)
                h = mix(h, ev.data[i]);
            if (ev.type == WS_EV_MESSAGE && ev.len > 4096)
                abort(); /* the limit holds */
            if (ev.type == WS_EV_ERROR && (!ev.msg || ev.code >= 0))
                abort();
            done = ev.type == WS_EV_ERROR || ev.type == WS_EV_CLOSE;
        }
    }
    ws_decoder_free(&d);
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int mode = data[0] % 6;
    const uint8_t *in = data + 1;
    size_t len = size - 1;
    char err[256];
    switch (mode) {
    case 0:
    case 1: {
        int e1, e2, e3;
        uint64_t a = run_decoder(in, len, mode == 1, NULL, 0, &e1);
        /* piece sizes from the first bytes of the input itself */
        uint8_t steps[8];
        size_t ns = len < sizeof steps ? len : sizeof steps;
        memcpy(steps, in, ns);
        for (size_t i = 0; i < ns; i++)
            steps[i] &= 0x1F;
        uint64_t b = run_decoder(in, len, mode == 1, steps, ns, &e2);
        static const uint8_t one[1] = {0};
        uint64_t c = run_decoder(in, len, mode == 1, one, 1, &e3);
        if (a != b || a != c || e1 != e2 || e1 != e3)
            abort();
        break;
    }
    case 2: {
        size_t used = 0;
        int rc = ws_handshake_check((const char *)in, len, "dGhlIHNhbXBsZSBub25jZQ==", &used,
                                    err, sizeof err);
        if (rc == WS_OK && (used == 0 || used > len))
            abort();
        if (rc != WS_OK && rc != WS_EAGAIN && rc != WS_EHANDSHAKE)
            abort();
        break;
    }
    case 3: {
        /* the parser decodes chunked bodies in place: give it a copy */
        char *buf = malloc(len + 1);
        if (!buf)
            return 0;
        for (int eof = 0; eof < 2; eof++) {
            memcpy(buf, in, len);
            buf[len] = 0;
            ws_http_response r;
            int rc = ws_http_parse_response(buf, len, eof, 1024, &r, err, sizeof err);
            if (rc == WS_OK) {
                if (r.body < buf || r.body + r.body_len > buf + len || r.body_len > 1024)
                    abort();
                volatile char sink = 0;
                for (size_t i = 0; i < r.body_len; i++)
                    sink ^= r.body[i];
                (void)sink;
            }
        }
        free(buf);
        break;
    }
    case 4: {
        char *s = malloc(len + 1);
        if (!s)
            return 0;
        memcpy(s, in, len);
        s[len] = 0;
        ws_url u;
        if (ws_url_parse(s, &u, err, sizeof err) == WS_OK) {
            if (u.port < 1 || u.port > 65535 || u.path[0] != '/' || !u.host[0])
                abort();
            char req[4096];
            if (ws_handshake_request(req, sizeof req, &u, "dGhlIHNhbXBsZSBub25jZQ==") < 0)
                abort();
            /* the request has exactly one blank line: the URL cannot inject headers */
            char *blank = strstr(req, "\r\n\r\n");
            if (!blank || blank[4] != 0)
                abort();
        }
        free(s);
        break;
    }
    case 5: {
        ssize_t z = ws_pipe_find_nul(in, len);
        if (z >= 0 && ((size_t)z >= len || in[z] != 0))
            abort();
        break;
    }
    }
    return 0;
}
