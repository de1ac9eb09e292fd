/*
 * test_ws.c — tests for the ws module.
 *
 *   - SHA-1 against NIST SHAVS (short, long, Monte), base64 against RFC 4648,
 *     the RFC 6455 worked examples (tests/vectors, see its README).
 *   - The decoder on scripted inputs, each fed whole, split at every byte
 *     boundary and byte by byte; every split must give the same events.
 *   - The handshake check, URL and HTTP response parsers.
 *   - An allocation-failure walk over the decoder.
 *   - The client against an independent server (npm `ws`, tests/peers/):
 *     skipped, with the reason, when node or tests/peers/node_modules is
 *     missing (cd tests/peers && npm install --no-audit --no-fund).
 *   - The pipe transport over socketpairs and over pipes to a forked child
 *     on fds 3/4 (as Chromium's --remote-debugging-pipe).
 *   - ws_http_get against node and against an in-test forked server.
 */
#include "tests/harness.h"
#include "ws/ws.h"
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* helpers */

static char *vec_path(const char *rel, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", test_vectors_dir(), rel);
    return buf;
}

static char *read_vec(const char *rel, size_t *len)
{
    char p[1024];
    char *s = test_read_file(vec_path(rel, p, sizeof p), len);
    if (!s)
        test_fail_detail("cannot read %s", p);
    CHECK(s != NULL);
    return s;
}

/* Next line of *p (CR stripped, NUL-terminated in place); NULL at the end. */
static char *next_line(char **p)
{
    if (!*p || !**p)
        return NULL;
    char *s = *p, *nl = strchr(s, '\n');
    if (nl) {
        *nl = 0;
        *p = nl + 1;
    } else {
        *p = s + strlen(s);
    }
    size_t n = strlen(s);
    if (n && s[n - 1] == '\r')
        s[n - 1] = 0;
    return s;
}

/* "Key = value" → value, or NULL if the line is not that key. */
static const char *kv(const char *line, const char *key)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0 || strncmp(line + k, " =", 2) != 0)
        return NULL;
    const char *v = line + k + 2;
    while (*v == ' ')
        v++;
    return v;
}

static long parse_long(const char *s)
{
    return strtol(s, NULL, 10);
}

static uint32_t fnv(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* ------------------------------------------------------------------ */
/* SHA-1, base64, RFC 6455 */

static void sha_msg_file(const char *rel, int want_records)
{
    size_t len;
    char *text = read_vec(rel, &len);
    if (!text)
        return;
    char *p = text, *line;
    long bits = -1;
    uint8_t *msg = NULL;
    long mlen = 0;
    int records = 0, bad = 0;
    while ((line = next_line(&p))) {
        const char *v;
        if ((v = kv(line, "Len"))) {
            bits = parse_long(v);
        } else if ((v = kv(line, "Msg"))) {
            free(msg);
            size_t cap = strlen(v) / 2 + 1;
            msg = malloc(cap);
            mlen = test_unhex(v, msg, cap);
        } else if ((v = kv(line, "MD"))) {
            uint8_t want[20], got[20];
            CHECK_INT(20, test_unhex(v, want, sizeof want));
            CHECK(bits >= 0 && bits % 8 == 0 && mlen >= bits / 8);
            if (bits < 0 || !msg)
                break;
            ws_sha1(msg, (size_t)(bits / 8), got);
            if (!CHECK_MEM(want, 20, got, 20) && ++bad > 3)
                break;
            records++;
        }
    }
    free(msg);
    free(text);
    CHECK_INT(want_records, records);
}

static void t_sha1_short(void) { sha_msg_file("sha/nist-shavs/SHA1ShortMsg.rsp", 65); }
static void t_sha1_long(void) { sha_msg_file("sha/nist-shavs/SHA1LongMsg.rsp", 64); }

/* SHAVS 6.4: MD0 = MD1 = MD2 = seed; MDi = SHA(MDi-3 || MDi-2 || MDi-1)
 * for i = 3..1002; the checkpoint (and next seed) is MD1002. */
static void t_sha1_monte(void)
{
    size_t len;
    char *text = read_vec("sha/nist-shavs/SHA1Monte.rsp", &len);
    if (!text)
        return;
    char *p = text, *line;
    uint8_t seed[20];
    int checks = 0;
    bool have_seed = false;
    while ((line = next_line(&p))) {
        const char *v;
        if ((v = kv(line, "Seed"))) {
            CHECK_INT(20, test_unhex(v, seed, 20));
            have_seed = true;
        } else if ((v = kv(line, "MD")) && have_seed) {
            uint8_t md[3][20], buf[60], want[20];
            memcpy(md[0], seed, 20);
            memcpy(md[1], seed, 20);
            memcpy(md[2], seed, 20);
            for (int i = 3; i < 1003; i++) {
                memcpy(buf, md[0], 20);
                memcpy(buf + 20, md[1], 20);
                memcpy(buf + 40, md[2], 20);
                memmove(md[0], md[1], 40);
                ws_sha1(buf, 60, md[2]);
            }
            memcpy(seed, md[2], 20);
            test_unhex(v, want, 20);
            if (!CHECK_MEM(want, 20, seed, 20))
                break;
            checks++;
        }
    }
    free(text);
    CHECK_INT(100, checks);
}

static void t_base64_rfc4648(void)
{
    size_t len;
    char *text = read_vec("base64/rfc4648.txt", &len);
    if (!text)
        return;
    char *p = text, *line;
    int n = 0;
    while ((line = next_line(&p))) {
        if (strncmp(line, "BASE64(\"", 8) != 0)
            continue;
        char *in = line + 8, *q = strstr(in, "\") = \"");
        CHECK(q != NULL);
        if (!q)
            break;
        *q = 0;
        char *want = q + 6, *e = strchr(want, '"');
        CHECK(e != NULL);
        if (!e)
            break;
        *e = 0;
        char out[64];
        size_t ol = base_b64_encode((const uint8_t *)in, strlen(in), out);
        CHECK_STR(want, out);
        CHECK_INT(strlen(want), ol);
        CHECK_INT(BASE_B64_ENCLEN(strlen(in)), ol);
        uint8_t dec[64];
        ssize_t dl = base_b64_decode(want, strlen(want), dec, sizeof dec);
        CHECK_MEM(in, strlen(in), dec, dl < 0 ? 0 : (size_t)dl);
        CHECK_INT((long)strlen(in), dl);
        n++;
    }
    free(text);
    CHECK_INT(7, n);
}

static void t_base64_strict(void)
{
    uint8_t out[16];
    const char *bad[] = {"Zg=", "Zg", "Z===", "Zh==", "Zm9=", "Zm 9v", "Zm9v\n", "=Zm9",
                         "Zg==Zg==", "Zm9v!A==", NULL};
    for (int i = 0; bad[i]; i++) {
        if (base_b64_decode(bad[i], strlen(bad[i]), out, sizeof out) != -1)
            test_fail_detail("accepted \"%s\"", bad[i]);
        CHECK(base_b64_decode(bad[i], strlen(bad[i]), out, sizeof out) == -1);
    }
    CHECK_INT(-1, base_b64_decode("Zm9vYmFy", 8, out, 5)); /* cap too small */
    CHECK_INT(6, base_b64_decode("Zm9vYmFy", 8, out, 6));
    /* all 256 byte values round-trip */
    uint8_t all[256], back[256];
    char enc[BASE_B64_ENCLEN(256) + 1];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    for (size_t n = 0; n <= 256; n += 37) {
        size_t el = base_b64_encode(all, n, enc);
        ssize_t dl = base_b64_decode(enc, el, back, sizeof back);
        CHECK_MEM(all, n, back, dl < 0 ? 0 : (size_t)dl);
    }
}

/* ---- decoder trace machinery ---- */

typedef struct {
    char s[8192];
    size_t n;
} trace;

static void tr_add(trace *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(t->s + t->n, sizeof t->s - t->n, fmt, ap);
    va_end(ap);
    if (r > 0)
        t->n += (size_t)r < sizeof t->s - t->n ? (size_t)r : sizeof t->s - t->n - 1;
}

static void tr_bytes(trace *t, const uint8_t *p, size_t n)
{
    if (n > 64) {
        tr_add(t, "#%08x", fnv(p, n));
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '\\')
            tr_add(t, "%c", p[i]);
        else
            tr_add(t, "\\x%02x", p[i]);
    }
}

/* Append ev; returns true when the decoder is finished (close or error). */
static bool tr_event(trace *t, const ws_event *ev)
{
    switch (ev->type) {
    case WS_EV_NONE:
        return false;
    case WS_EV_MESSAGE:
        tr_add(t, "M%c%zu:", ev->opcode == WS_OP_TEXT ? 'T' : 'B', ev->len);
        tr_bytes(t, ev->data, ev->len);
        break;
    case WS_EV_PING:
        tr_add(t, "P:");
        tr_bytes(t, ev->data, ev->len);
        break;
    case WS_EV_PONG:
        tr_add(t, "O:");
        tr_bytes(t, ev->data, ev->len);
        break;
    case WS_EV_CLOSE:
        tr_add(t, "C%u:", (unsigned)ev->close_code);
        tr_bytes(t, ev->data, ev->len);
        tr_add(t, ";");
        return true;
    case WS_EV_ERROR:
        tr_add(t, "E%d/%u;", ev->code, (unsigned)ev->close_code);
        return true;
    case WS_EV_PIECE:
        tr_add(t, "UNEXPECTED-PIECE");
        break;
    }
    tr_add(t, ";");
    return false;
}

/* Chunked mode: pieces are gathered here and traced as one message at the
 * last, so chunked and whole decoding must give the same trace. */
typedef struct {
    uint8_t *p;
    size_t n, cap;
    int opcode;
} gather;

static bool tr_piece(trace *t, gather *g, const ws_event *ev)
{
    if (ev->type != WS_EV_PIECE)
        return tr_event(t, ev);
    if (g->n && ev->opcode != g->opcode)
        tr_add(t, "OPCODE-CHANGED;");
    g->opcode = ev->opcode;
    if (!ev->fin && !ev->len)
        tr_add(t, "EMPTY-PIECE;");
    if (g->n + ev->len > g->cap) {
        g->cap = (g->n + ev->len) * 2;
        g->p = realloc(g->p, g->cap);
    }
    if (ev->len)
        memcpy(g->p + g->n, ev->data, ev->len);
    g->n += ev->len;
    if (!ev->fin)
        return false;
    ws_event m = {0};
    m.type = WS_EV_MESSAGE;
    m.opcode = g->opcode;
    m.data = g->p ? g->p : (const uint8_t *)"";
    m.len = g->n;
    g->n = 0;
    return tr_event(t, &m);
}

/* Feed in[0..len) in chunks ending at the given cut points. */
static void run_dec_mode(const uint8_t *in, size_t len, bool masked, size_t max,
                         const size_t *cuts, size_t ncuts, size_t step, trace *t,
                         bool chunked)
{
    ws_decoder d;
    gather g = {0};
    ws_decoder_init(&d, max, masked);
    ws_decoder_set_chunked(&d, chunked);
    t->n = 0;
    t->s[0] = 0;
    size_t pos = 0, ci = 0;
    bool done = false;
    while (pos < len && !done) {
        size_t end = len;
        if (step)
            end = pos + step < len ? pos + step : len;
        else if (ci < ncuts)
            end = cuts[ci++];
        while (pos < end && !done) {
            ws_event ev;
            size_t n = ws_decoder_feed(&d, in + pos, end - pos, &ev);
            if (n > end - pos) {
                tr_add(t, "OVERRUN;");
                done = true;
                break;
            }
            pos += n;
            if (ev.type == WS_EV_NONE && pos < end) {
                tr_add(t, "STUCK;");
                done = true;
                break;
            }
            done = tr_piece(t, &g, &ev);
        }
    }
    ws_decoder_free(&d);
    free(g.p);
}

/* Whole-message decoding, then the same cuts in chunked mode, which must
 * trace the same (the second trace replaces the first only if it differs). */
static void run_dec(const uint8_t *in, size_t len, bool masked, size_t max,
                    const size_t *cuts, size_t ncuts, size_t step, trace *t)
{
    run_dec_mode(in, len, masked, max, cuts, ncuts, step, t, false);
    trace *c = malloc(sizeof *c);
    run_dec_mode(in, len, masked, max, cuts, ncuts, step, c, true);
    if (strcmp(c->s, t->s) != 0) {
        trace *w = malloc(sizeof *w);
        memcpy(w, t, sizeof *w);
        t->n = 0;
        tr_add(t, "CHUNKED-DIFFERS whole=[%.3000s] chunked=[%.3000s]", w->s, c->s);
        free(w);
    }
    free(c);
}

/* Decode whole, split once at every boundary (or a sample for big inputs),
 * and byte by byte; each must give want. */
static void check_dec_opts(const uint8_t *in, size_t len, bool masked, size_t max,
                           const char *want, int line)
{
    trace t;
    run_dec(in, len, masked, max, NULL, 0, 0, &t);
    if (!CHECK(strcmp(t.s, want) == 0)) {
        test_fail_detail("line %d whole: want \"%s\" got \"%s\"", line, want, t.s);
        return;
    }
    int split_ok = 1;
    for (size_t i = 1; i < len && split_ok; i++) {
        if (len > 4096 && i > 200 && i < len - 200 && i % 997)
            continue;
        run_dec(in, len, masked, max, &i, 1, 0, &t);
        if (strcmp(t.s, want) != 0) {
            test_fail_detail("line %d split at %zu: want \"%s\" got \"%s\"", line, i, want,
                             t.s);
            split_ok = 0;
        }
    }
    if (!CHECK(split_ok))
        return;
    run_dec(in, len, masked, max, NULL, 0, 1, &t);
    if (!CHECK(strcmp(t.s, want) == 0))
        test_fail_detail("line %d byte by byte: want \"%s\" got \"%s\"", line, want, t.s);
}
#define CHECK_DEC(buf, len, want) check_dec_opts(buf, len, false, 0, want, __LINE__)
#define CHECK_DEC_MAX(buf, len, max, want) check_dec_opts(buf, len, false, max, want, __LINE__)
#define CHECK_DEC_SRV(buf, len, want) check_dec_opts(buf, len, true, 0, want, __LINE__)

/* An independent little frame writer for test inputs: b0 is the whole first
 * byte (FIN, RSV, opcode); key NULL for unmasked. */
typedef struct {
    uint8_t *b;
    size_t n, cap;
} fbuf;

static void fb_raw(fbuf *f, const void *p, size_t n)
{
    if (f->n + n > f->cap) {
        f->cap = (f->n + n) * 2 + 64;
        f->b = realloc(f->b, f->cap);
    }
    memcpy(f->b + f->n, p, n);
    f->n += n;
}

static void fb_frame(fbuf *f, uint8_t b0, const void *payload, size_t len, const uint8_t *key)
{
    uint8_t h[14];
    size_t hn = 0;
    h[hn++] = b0;
    uint8_t m = key ? 0x80 : 0;
    if (len < 126) {
        h[hn++] = (uint8_t)(m | len);
    } else if (len < 65536) {
        h[hn++] = m | 126;
        h[hn++] = (uint8_t)(len >> 8);
        h[hn++] = (uint8_t)len;
    } else {
        h[hn++] = m | 127;
        for (int i = 7; i >= 0; i--)
            h[hn++] = (uint8_t)((uint64_t)len >> (8 * i));
    }
    if (key) {
        memcpy(h + hn, key, 4);
        hn += 4;
    }
    fb_raw(f, h, hn);
    size_t at = f->n;
    fb_raw(f, payload, len);
    if (key)
        for (size_t i = 0; i < len; i++)
            f->b[at + i] ^= key[i % 4];
}

static void fb_s(fbuf *f, uint8_t b0, const char *s) { fb_frame(f, b0, s, strlen(s), NULL); }

static void fb_close(fbuf *f, unsigned code, const char *reason, size_t rlen)
{
    uint8_t pl[130];
    pl[0] = (uint8_t)(code >> 8);
    pl[1] = (uint8_t)code;
    memcpy(pl + 2, reason, rlen);
    fb_frame(f, 0x88, pl, 2 + rlen, NULL);
}

static void fb_reset(fbuf *f) { f->n = 0; }

/* RFC 6455 examples: accept key and every frame. */
static void t_rfc6455_examples(void)
{
    size_t len;
    char *text = read_vec("websocket/rfc6455-examples.txt", &len);
    if (!text)
        return;
    char *p = text, *line, key[64] = "", accept[64] = "";
    int frames = 0;
    while ((line = next_line(&p))) {
        const char *v;
        if (line[0] == '#' || line[0] == '[' || !line[0])
            continue;
        if ((v = kv(line, "Sec-WebSocket-Key"))) {
            snprintf(key, sizeof key, "%s", v);
            continue;
        }
        if ((v = kv(line, "Sec-WebSocket-Accept"))) {
            snprintf(accept, sizeof accept, "%s", v);
            continue;
        }
        char *eq = strstr(line, " = ");
        if (!eq || kv(line, "GUID"))
            continue;
        *eq = 0;
        const char *name = line;
        char *hex = eq + 3, *semi = strchr(hex, ';');
        char payload[64] = "";
        if (semi) {
            *semi = 0;
            /* payload "Hel" + "lo" */
            for (char *q = strchr(semi + 1, '"'); q; q = strchr(q + 1, '"')) {
                char *e = strchr(q + 1, '"');
                if (!e)
                    break;
                size_t pl = strlen(payload), add = (size_t)(e - q - 1);
                if (pl + add < sizeof payload) {
                    memcpy(payload + pl, q + 1, add);
                    payload[pl + add] = 0;
                }
                q = e;
                if (strstr(e + 1, "(mask") == e + 2)
                    break;
            }
        }
        uint8_t fr[128];
        size_t fl = 0;
        for (char *part = hex, *bar; part; part = bar) {
            bar = strchr(part, '|');
            if (bar)
                *bar++ = 0;
            char *b = part;
            while (*b == ' ')
                b++;
            char *e = b + strlen(b);
            while (e > b && e[-1] == ' ')
                *--e = 0;
            long n = test_unhex(b, fr + fl, sizeof fr - fl);
            CHECK(n > 0);
            fl += (size_t)(n > 0 ? n : 0);
        }
        bool masked = strstr(name, "masked_") == name;
        trace t;
        char want[256];
        if (strstr(name, "_header")) {
            /* header only: append the payload it announces */
            size_t plen = fr[1] == 126 ? ((size_t)fr[2] << 8 | fr[3]) : 65536;
            uint8_t *big = malloc(fl + plen);
            memcpy(big, fr, fl);
            for (size_t i = 0; i < plen; i++)
                big[fl + i] = (uint8_t)(i * 7);
            run_dec(big, fl + plen, false, 0, NULL, 0, 0, &t);
            snprintf(want, sizeof want, "MB%zu:#%08x;", plen, fnv(big + fl, plen));
            CHECK_STR(want, t.s);
            /* the encoder writes the same header */
            uint8_t h[14];
            CHECK_MEM(fr, fl, h, ws_frame_header(h, WS_OP_BINARY, true, plen, NULL));
            free(big);
        } else {
            const char *kind = strstr(name, "ping") ? "P:" : strstr(name, "pong") ? "O:" : "MT5:";
            snprintf(want, sizeof want, "%s%s;", kind, payload);
            check_dec_opts(fr, fl, masked, 0, want, __LINE__);
            if (!strstr(name, "fragmented")) {
                /* re-encode header + mask + payload and compare */
                uint8_t h[14], enc[64];
                int op = strstr(name, "ping") ? WS_OP_PING : strstr(name, "pong") ? WS_OP_PONG
                                                                                   : WS_OP_TEXT;
                const uint8_t *mk = masked ? fr + 2 : NULL;
                size_t hl = ws_frame_header(h, op, true, strlen(payload), mk);
                memcpy(enc, h, hl);
                memcpy(enc + hl, payload, strlen(payload));
                if (mk)
                    ws_mask(enc + hl, strlen(payload), mk, 0);
                CHECK_MEM(fr, fl, enc, hl + strlen(payload));
            }
        }
        frames++;
    }
    free(text);
    CHECK_INT(7, frames);
    CHECK_STR("dGhlIHNhbXBsZSBub25jZQ==", key);
    char got[29];
    ws_accept_key(key, got);
    CHECK_STR(accept, got);
    CHECK_STR("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", got);
}

/* ---- decoder unit tests ---- */

static void t_dec_basic(void)
{
    fbuf f = {0};
    fb_s(&f, 0x81, "Hello");
    CHECK_DEC(f.b, f.n, "MT5:Hello;");
    fb_frame(&f, 0x82, "\xff\x00", 2, NULL);
    fb_s(&f, 0x81, "");
    CHECK_DEC(f.b, f.n, "MT5:Hello;MB2:\\xff\\x00;MT0:;");
    fb_reset(&f);
    fb_s(&f, 0x89, "ping!");
    fb_s(&f, 0x8A, "");
    fb_s(&f, 0x81, "x");
    CHECK_DEC(f.b, f.n, "P:ping!;O:;MT1:x;");
    free(f.b);
}

static void t_dec_fragmented(void)
{
    fbuf f = {0};
    fb_s(&f, 0x01, "Hel");
    fb_s(&f, 0x00, "lo ");
    fb_s(&f, 0x00, "");
    fb_s(&f, 0x80, "world");
    fb_s(&f, 0x81, "next");
    CHECK_DEC(f.b, f.n, "MT11:Hello world;MT4:next;");
    /* binary fragments, empty first fragment */
    fb_reset(&f);
    fb_s(&f, 0x02, "");
    fb_s(&f, 0x80, "ab");
    CHECK_DEC(f.b, f.n, "MB2:ab;");
    free(f.b);
}

static void t_dec_interleaved_control(void)
{
    fbuf f = {0};
    fb_s(&f, 0x01, "ab");
    fb_s(&f, 0x89, "p1");
    fb_s(&f, 0x00, "cd");
    fb_s(&f, 0x8A, "p2");
    fb_s(&f, 0x89, "");
    fb_s(&f, 0x80, "ef");
    CHECK_DEC(f.b, f.n, "P:p1;O:p2;P:;MT6:abcdef;");
    /* a close inside a fragmented message ends everything */
    fb_reset(&f);
    fb_s(&f, 0x01, "ab");
    fb_close(&f, 1001, "away", 4);
    fb_s(&f, 0x80, "cd");
    CHECK_DEC(f.b, f.n, "C1001:away;");
    /* UTF-8 sequence split around a ping */
    fb_reset(&f);
    fb_s(&f, 0x01, "\xe2\x82");
    fb_s(&f, 0x89, "x");
    fb_s(&f, 0x80, "\xac");
    CHECK_DEC(f.b, f.n, "P:x;MT3:\\xe2\\x82\\xac;");
    free(f.b);
}

static void t_dec_lengths(void)
{
    fbuf f = {0};
    uint8_t *big = malloc(70000);
    for (size_t i = 0; i < 70000; i++)
        big[i] = (uint8_t)(i * 31 + 7);
    char want[128];
    size_t sizes[] = {125, 126, 127, 300, 65535, 65536, 70000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        fb_reset(&f);
        fb_frame(&f, 0x82, big, sizes[k], NULL);
        snprintf(want, sizeof want, "MB%zu:#%08x;", sizes[k], fnv(big, sizes[k]));
        CHECK_DEC(f.b, f.n, want);
    }
    /* fragmented across a 16-bit and a 64-bit frame */
    fb_reset(&f);
    fb_frame(&f, 0x02, big, 300, NULL);
    fb_frame(&f, 0x80, big + 300, 69700, NULL);
    snprintf(want, sizeof want, "MB70000:#%08x;", fnv(big, 70000));
    CHECK_DEC(f.b, f.n, want);
    /* 64-bit length with the top bit set */
    uint8_t hb[] = {0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 1};
    CHECK_DEC(hb, sizeof hb, "E-5/1002;");
    /* a 64-bit length of 2^40 is refused by size before any allocation */
    uint8_t hh[] = {0x82, 0x7f, 0, 0, 1, 0, 0, 0, 0, 0};
    CHECK_DEC(hh, sizeof hh, "E-6/1009;");
    /* non-minimal length encodings are accepted */
    uint8_t nm[] = {0x81, 0x7e, 0x00, 0x02, 'h', 'i'};
    CHECK_DEC(nm, sizeof nm, "MT2:hi;");
    free(big);
    free(f.b);
}

static void t_dec_close(void)
{
    fbuf f = {0};
    fb_close(&f, 1000, "bye", 3);
    fb_s(&f, 0x81, "after");
    CHECK_DEC(f.b, f.n, "C1000:bye;");
    fb_reset(&f);
    fb_s(&f, 0x88, "");
    CHECK_DEC(f.b, f.n, "C1005:;");
    fb_reset(&f);
    fb_s(&f, 0x88, "\x03");
    CHECK_DEC(f.b, f.n, "E-5/1002;");
    unsigned good[] = {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013,
                       1014, 3000, 3999, 4000, 4999};
    unsigned bad[] = {0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535};
    char want[64];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        fb_reset(&f);
        fb_close(&f, good[i], "", 0);
        snprintf(want, sizeof want, "C%u:;", good[i]);
        CHECK_DEC(f.b, f.n, want);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fb_reset(&f);
        fb_close(&f, bad[i], "", 0);
        CHECK_DEC(f.b, f.n, "E-5/1002;");
    }
    /* the reason must be valid UTF-8 */
    fb_reset(&f);
    fb_close(&f, 1000, "\xce\xba\xe1\xbd\xb9", 5);
    CHECK_DEC(f.b, f.n, "C1000:\\xce\\xba\\xe1\\xbd\\xb9;");
    fb_reset(&f);
    fb_close(&f, 1000, "\xce", 1);
    CHECK_DEC(f.b, f.n, "E-11/1007;");
    fb_reset(&f);
    fb_close(&f, 1000, "\xff ok", 4);
    CHECK_DEC(f.b, f.n, "E-11/1007;");
    /* 123-byte reason: the largest allowed */
    char r[124];
    memset(r, 'r', 123);
    fb_reset(&f);
    fb_close(&f, 4000, r, 123);
    trace t;
    run_dec(f.b, f.n, false, 0, NULL, 0, 0, &t);
    CHECK(strncmp(t.s, "C4000:#", 7) == 0);
    /* the decoder refuses input after the close */
    ws_decoder d;
    ws_event ev;
    ws_decoder_init(&d, 0, false);
    fb_reset(&f);
    fb_close(&f, 1000, "", 0);
    fb_s(&f, 0x81, "x");
    size_t n = ws_decoder_feed(&d, f.b, f.n, &ev);
    CHECK_INT(4, n);
    CHECK_INT(WS_EV_CLOSE, ev.type);
    CHECK_INT(0, ws_decoder_feed(&d, f.b + n, f.n - n, &ev));
    CHECK_INT(WS_EV_ERROR, ev.type);
    CHECK_INT(WS_ECLOSED, ev.code);
    ws_decoder_free(&d);
    free(f.b);
}

static void t_dec_utf8(void)
{
    fbuf f = {0};
    struct {
        const char *s;
        bool ok;
    } cases[] = {
        {"plain ascii", true}, {"\xc2\x80", true}, {"\xdf\xbf", true},
        {"\xe0\xa0\x80", true}, {"\xef\xbf\xbf", true}, {"\xf0\x90\x80\x80", true},
        {"\xf4\x8f\xbf\xbf", true}, {"\xed\x9f\xbf", true},
        {"\xc3\x28", false}, {"\xc0\xaf", false}, {"\xc1\xbf", false},
        {"\xe0\x80\xaf", false}, {"\xed\xa0\x80", false}, {"\xed\xbf\xbf", false},
        {"\xf0\x80\x80\x80", false}, {"\xf4\x90\x80\x80", false}, {"\xf5\x80\x80\x80", false},
        {"\xff", false}, {"\x80", false}, {"\xe2\x82", false}, {"abc\xf0\x9f\x98", false},
        {"12345678\xc3\xa9 then \x80", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fb_reset(&f);
        fb_s(&f, 0x81, cases[i].s);
        if (cases[i].ok) {
            trace t;
            run_dec(f.b, f.n, false, 0, NULL, 0, 0, &t);
            CHECK(t.s[0] == 'M');
            check_dec_opts(f.b, f.n, false, 0, t.s, __LINE__);
        } else {
            CHECK_DEC(f.b, f.n, "E-11/1007;");
        }
        /* binary messages are not checked */
        fb_reset(&f);
        fb_s(&f, 0x82, cases[i].s);
        trace t;
        run_dec(f.b, f.n, false, 0, NULL, 0, 0, &t);
        CHECK(t.s[0] == 'M' && t.s[1] == 'B');
    }
    /* split across fragments */
    fb_reset(&f);
    fb_s(&f, 0x01, "\xf0\x9f");
    fb_s(&f, 0x00, "\x98");
    fb_s(&f, 0x80, "\x80!");
    CHECK_DEC(f.b, f.n, "MT5:\\xf0\\x9f\\x98\\x80!;");
    fb_reset(&f);
    fb_s(&f, 0x01, "\xe2\x82");
    fb_s(&f, 0x80, "(");
    CHECK_DEC(f.b, f.n, "E-11/1007;");
    /* message ends inside a sequence */
    fb_reset(&f);
    fb_s(&f, 0x01, "ok");
    fb_s(&f, 0x80, "\xe2\x82");
    CHECK_DEC(f.b, f.n, "E-11/1007;");
    /* fail fast: the error comes before the message is complete */
    fb_reset(&f);
    fb_s(&f, 0x01, "\xff");
    trace t;
    run_dec(f.b, f.n, false, 0, NULL, 0, 0, &t);
    CHECK_STR("E-11/1007;", t.s);
    free(f.b);
}

static void t_dec_oversize(void)
{
    fbuf f = {0};
    fb_s(&f, 0x81, "0123456789");
    CHECK_DEC_MAX(f.b, f.n, 10, "MT10:0123456789;");
    fb_reset(&f);
    fb_s(&f, 0x81, "0123456789A");
    CHECK_DEC_MAX(f.b, f.n, 10, "E-6/1009;");
    fb_reset(&f);
    fb_s(&f, 0x01, "012345");
    fb_s(&f, 0x80, "67890");
    CHECK_DEC_MAX(f.b, f.n, 10, "E-6/1009;");
    /* control frames do not count against the message */
    fb_reset(&f);
    fb_s(&f, 0x01, "01234");
    fb_s(&f, 0x89, "0123456789abc");
    fb_s(&f, 0x80, "56789");
    CHECK_DEC_MAX(f.b, f.n, 10, "P:0123456789abc;MT10:0123456789;");
    free(f.b);
}

static void t_dec_protocol_errors(void)
{
    fbuf f = {0};
    const uint8_t rsv[] = {0xC1, 0xA1, 0x91};
    for (size_t i = 0; i < sizeof rsv; i++) {
        fb_reset(&f);
        fb_s(&f, rsv[i], "hi");
        CHECK_DEC(f.b, f.n, "E-5/1002;");
    }
    const uint8_t ops[] = {3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF};
    for (size_t i = 0; i < sizeof ops; i++) {
        fb_reset(&f);
        fb_s(&f, (uint8_t)(0x80 | ops[i]), "hi");
        CHECK_DEC(f.b, f.n, "E-5/1002;");
    }
    /* fragmented control frame */
    fb_reset(&f);
    fb_s(&f, 0x09, "p");
    CHECK_DEC(f.b, f.n, "E-5/1002;");
    fb_reset(&f);
    fb_s(&f, 0x08, "");
    CHECK_DEC(f.b, f.n, "E-5/1002;");
    /* control payload > 125 */
    char big[126];
    memset(big, 'x', sizeof big);
    fb_reset(&f);
    fb_frame(&f, 0x89, big, 126, NULL);
    CHECK_DEC(f.b, f.n, "E-5/1002;");
    fb_reset(&f);
    fb_frame(&f, 0x88, big, 126, NULL);
    CHECK_DEC(f.b, f.n, "E-5/1002;");
    /* continuation without a start */
    fb_reset(&f);
    fb_s(&f, 0x80, "x");
    CHECK_DEC(f.b, f.n, "E-5/1002;");
    fb_reset(&f);
    fb_s(&f, 0x81, "done");
    fb_s(&f, 0x00, "x");
    CHECK_DEC(f.b, f.n, "MT4:done;E-5/1002;");
    /* new message during fragmentation */
    fb_reset(&f);
    fb_s(&f, 0x01, "a");
    fb_s(&f, 0x81, "b");
    CHECK_DEC(f.b, f.n, "E-5/1002;");
    fb_reset(&f);
    fb_s(&f, 0x02, "a");
    fb_s(&f, 0x01, "b");
    CHECK_DEC(f.b, f.n, "E-5/1002;");
    /* masked frame from a server */
    static const uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};
    fb_reset(&f);
    fb_frame(&f, 0x81, "Hello", 5, key);
    CHECK_DEC(f.b, f.n, "E-5/1002;");
    CHECK_DEC_SRV(f.b, f.n, "MT5:Hello;");
    /* unmasked frame to a server */
    fb_reset(&f);
    fb_s(&f, 0x81, "Hello");
    CHECK_DEC_SRV(f.b, f.n, "E-5/1002;");
    /* masked fragments + masked ping on the server side */
    fb_reset(&f);
    fb_frame(&f, 0x01, "Hel", 3, key);
    fb_frame(&f, 0x89, "pp", 2, key);
    fb_frame(&f, 0x80, "lo, masked", 10, key);
    CHECK_DEC_SRV(f.b, f.n, "P:pp;MT13:Hello, masked;");
    /* the decoder stays dead after an error */
    ws_decoder d;
    ws_event ev;
    ws_decoder_init(&d, 0, false);
    fb_reset(&f);
    fb_s(&f, 0xC1, "x");
    ws_decoder_feed(&d, f.b, f.n, &ev);
    CHECK_INT(WS_EV_ERROR, ev.type);
    CHECK(ev.msg && strstr(ev.msg, "RSV"));
    CHECK_INT(0, ws_decoder_feed(&d, f.b, f.n, &ev));
    CHECK_INT(WS_EV_ERROR, ev.type);
    ws_decoder_free(&d);
    free(f.b);
}

/* Event data for an in-place message points into the input, for others into
 * the decoder; either stays valid until the next feed. */
static void t_dec_borrowed(void)
{
    fbuf f = {0};
    fb_s(&f, 0x81, "first");
    fb_s(&f, 0x01, "sec");
    fb_s(&f, 0x80, "ond");
    ws_decoder d;
    ws_event ev;
    ws_decoder_init(&d, 0, false);
    size_t n = ws_decoder_feed(&d, f.b, f.n, &ev);
    CHECK_INT(WS_EV_MESSAGE, ev.type);
    CHECK(ev.data == f.b + 2);
    size_t m = ws_decoder_feed(&d, f.b + n, f.n - n, &ev);
    CHECK_INT(f.n - n, m);
    CHECK_MEM("second", 6, ev.data, ev.len);
    ws_decoder_free(&d);
    ws_decoder_free(&d); /* twice is harmless */
    free(f.b);
}

static void t_encoder(void)
{
    uint8_t h[14];
    static const uint8_t k[4] = {1, 2, 3, 4};
    CHECK_MEM("\x81\x00", 2, h, ws_frame_header(h, WS_OP_TEXT, true, 0, NULL));
    CHECK_MEM("\x01\x7d", 2, h, ws_frame_header(h, WS_OP_TEXT, false, 125, NULL));
    CHECK_MEM("\x82\x7e\x00\x7e", 4, h, ws_frame_header(h, WS_OP_BINARY, true, 126, NULL));
    CHECK_MEM("\x82\xfe\xff\xff\x01\x02\x03\x04", 8, h,
              ws_frame_header(h, WS_OP_BINARY, true, 65535, k));
    CHECK_MEM("\x80\x7f\x00\x00\x00\x00\x00\x01\x00\x00", 10, h,
              ws_frame_header(h, WS_OP_CONT, true, 65536, NULL));
    CHECK_MEM("\x88\xff\x00\x00\x01\x00\x00\x00\x00\x00\x01\x02\x03\x04", 14, h,
              ws_frame_header(h, WS_OP_CLOSE, true, (uint64_t)1 << 40, k));
    /* ws_mask at every offset and length equals the byte-wise definition */
    uint8_t a[40], b[40];
    for (size_t off = 0; off < 8; off++) {
        for (size_t len = 0; len <= 33; len++) {
            for (size_t i = 0; i < len; i++)
                a[i] = b[i] = (uint8_t)(i * 13 + off);
            ws_mask(a, len, k, off);
            for (size_t i = 0; i < len; i++)
                b[i] ^= k[(off + i) % 4];
            if (!CHECK_MEM(b, len, a, len))
                return;
        }
    }
    /* masking in pieces at running offsets equals masking at once */
    uint8_t c[37];
    for (size_t i = 0; i < sizeof c; i++)
        a[i] = c[i] = (uint8_t)i;
    ws_mask(a, 37, k, 0);
    ws_mask(c, 5, k, 0);
    ws_mask(c + 5, 19, k, 5);
    ws_mask(c + 24, 13, k, 24);
    CHECK_MEM(a, 37, c, 37);
}

/* Allocation-failure walk: every allocation the decoder makes may fail; the
 * failure is reported as WS_ENOMEM/1011 and nothing leaks (ASan counts). */
static void t_dec_alloc_failures(void)
{
    fbuf f = {0};
    char pl[300];
    memset(pl, 'a', sizeof pl);
    fb_frame(&f, 0x01, pl, 100, NULL);
    fb_frame(&f, 0x00, pl, 200, NULL);
    fb_s(&f, 0x89, "ping");
    fb_frame(&f, 0x80, pl, 300, NULL);
    fb_frame(&f, 0x02, pl, 10, NULL);
    fb_frame(&f, 0x80, pl, 10, NULL);
    trace want, got;
    run_dec(f.b, f.n, false, 0, NULL, 0, 0, &want);
    CHECK(strstr(want.s, "MT600:") != NULL);
    int injected = 0;
    for (long n = 0; n < 100; n++) {
        for (int mode = 0; mode < 2; mode++) {
            test_fail_alloc_after(n, 0);
            run_dec_mode(f.b, f.n, false, 0, NULL, 0, mode ? 1 : 0, &got, false);
            long count = test_alloc_count();
            test_fail_alloc_off();
            if (count > n) {
                injected++;
                if (!strstr(got.s, "E-9/1011;")) {
                    test_fail_detail("fail at %ld: \"%s\"", n, got.s);
                    CHECK(!"allocation failure not reported");
                }
            } else {
                CHECK_STR(want.s, got.s);
                if (mode == 1) {
                    CHECK(injected > 0);
                    free(f.b);
                    return;
                }
            }
        }
    }
    CHECK(!"allocation walk did not finish");
    free(f.b);
}

/* ---- handshake, URL, HTTP ---- */

static const char *KEY = "dGhlIHNhbXBsZSBub25jZQ==";

static int hs(const char *resp, size_t *consumed, char *err)
{
    return ws_handshake_check(resp, strlen(resp), KEY, consumed, err, 256);
}

static void t_handshake_check(void)
{
    char err[256];
    size_t used = 0;
    const char *ok = "HTTP/1.1 101 Switching Protocols\r\n"
                     "Upgrade: websocket\r\n"
                     "Connection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
                     "\r\n\x81\x02hi";
    CHECK_INT(WS_OK, hs(ok, &used, err));
    CHECK_INT(strlen(ok) - 4, used);
    /* every prefix is "need more" */
    for (size_t i = 0; i < strlen(ok) - 4; i++) {
        int rc = ws_handshake_check(ok, i, KEY, &used, err, sizeof err);
        if (rc != WS_EAGAIN) {
            test_fail_detail("prefix %zu gave %d (%s)", i, rc, err);
            CHECK(rc == WS_EAGAIN);
            break;
        }
    }
    /* case-insensitive names and tokens, LF line ends, token lists */
    CHECK_INT(WS_OK, hs("HTTP/1.1 101 OK\nupgrade: WebSocket\nCONNECTION: keep-alive, upgrade\n"
                        "sec-websocket-accept:   s3pPLMBiTxaQ9kYGzzhZRbK+xOo=  \n\n", &used, err));
    CHECK_INT(WS_EHANDSHAKE, hs("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", &used, err));
    CHECK(strstr(err, "HTTP 404 Not Found") != NULL);
    CHECK_INT(WS_EHANDSHAKE, hs("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                "Connection: Upgrade\r\n\r\n", &used, err));
    CHECK(strstr(err, "missing Sec-WebSocket-Accept") != NULL);
    CHECK_INT(WS_EHANDSHAKE, hs("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                "Connection: Upgrade\r\n"
                                "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo\r\n\r\n",
                                &used, err));
    CHECK(strstr(err, "Sec-WebSocket-Accept mismatch") != NULL);
    CHECK_INT(WS_EHANDSHAKE, hs("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                "Connection: Upgrade\r\n"
                                "Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n",
                                &used, err));
    CHECK(strstr(err, "Sec-WebSocket-Accept mismatch") != NULL);
    CHECK_INT(WS_EHANDSHAKE, hs("HTTP/1.1 101 Switching Protocols\r\n"
                                "Connection: Upgrade\r\n"
                                "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
                                &used, err));
    CHECK(strstr(err, "Upgrade: websocket") != NULL);
    CHECK_INT(WS_EHANDSHAKE, hs("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
                                &used, err));
    CHECK(strstr(err, "Connection: Upgrade") != NULL);
    CHECK_INT(WS_EHANDSHAKE, hs("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                "Connection: Upgrade\r\n"
                                "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
                                "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
                                &used, err));
    CHECK(strstr(err, "permessage-deflate") != NULL);
    CHECK_INT(WS_EHANDSHAKE, hs("SSH-2.0-OpenSSH_9.2\r\n", &used, err));
    CHECK(strstr(err, "not HTTP") != NULL);
    CHECK_INT(WS_EHANDSHAKE, hs("HTTP/1.1 10 X\r\n\r\n", &used, err));
    CHECK_INT(WS_EHANDSHAKE, hs("HTTP/1.1 101 Switching Protocols\r\nno colon here\r\n\r\n",
                                &used, err));
    CHECK(strstr(err, "malformed header") != NULL);
    /* partial */
    CHECK_INT(WS_EAGAIN, hs("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n", &used,
                            err));
    CHECK_INT(WS_EAGAIN, hs("", &used, err));
    /* header larger than 16 KiB */
    size_t bl = 20000;
    char *big = malloc(bl + 1);
    memcpy(big, "HTTP/1.1 101 OK\r\nX: ", 20);
    memset(big + 20, 'a', bl - 20);
    big[bl] = 0;
    CHECK_INT(WS_EHANDSHAKE, hs(big, &used, err));
    CHECK(strstr(err, "16 KiB") != NULL);
    free(big);
    /* the request */
    ws_url u;
    CHECK_INT(WS_OK, ws_url_parse("ws://127.0.0.1:9222/devtools/browser/abc?x=1", &u, err, 256));
    char req[512];
    int n = ws_handshake_request(req, sizeof req, &u, KEY);
    CHECK_STR("GET /devtools/browser/abc?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9222\r\n"
              "Upgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
              req);
    CHECK_INT((int)strlen(req), n);
    CHECK_INT(-1, ws_handshake_request(req, 40, &u, KEY));
    CHECK_INT(WS_OK, ws_url_parse("ws://[::1]/", &u, err, 256));
    ws_handshake_request(req, sizeof req, &u, KEY);
    CHECK(strstr(req, "Host: [::1]\r\n") != NULL);
}

static void t_url_parse(void)
{
    ws_url u;
    char err[256];
    CHECK_INT(WS_OK, ws_url_parse("ws://127.0.0.1:9222/devtools/browser/x", &u, err, sizeof err));
    CHECK_STR("ws", u.scheme);
    CHECK_STR("127.0.0.1", u.host);
    CHECK_INT(9222, u.port);
    CHECK_STR("/devtools/browser/x", u.path);
    CHECK(!u.tls);
    CHECK_INT(WS_OK, ws_url_parse("WSS://Example.COM", &u, err, sizeof err));
    CHECK_STR("wss", u.scheme);
    CHECK_STR("example.com", u.host);       /* as the browser reads it (url/url.h) */
    CHECK_INT(443, u.port);
    CHECK_STR("/", u.path);
    CHECK(u.tls);
    CHECK_INT(WS_OK, ws_url_parse("http://localhost?a=b#frag", &u, err, sizeof err));
    CHECK_INT(80, u.port);
    CHECK_STR("/?a=b", u.path);
    CHECK_INT(WS_OK, ws_url_parse("https://h:8443/p#x", &u, err, sizeof err));
    CHECK_INT(8443, u.port);
    CHECK_STR("/p", u.path);
    CHECK(u.tls);
    CHECK_INT(WS_OK, ws_url_parse("ws://[::1]:9222/x", &u, err, sizeof err));
    CHECK_STR("::1", u.host);
    CHECK_INT(9222, u.port);
    CHECK_INT(WS_OK, ws_url_parse("ws://[fe80::1%25eth0]/", &u, err, sizeof err));
    CHECK_INT(80, u.port);
    CHECK_STR("fe80::1%25eth0", u.host);
    /* Regression (issue 11, point 10): the host and port the browser would
     * connect to, not the text as written. */
    CHECK_INT(WS_OK, ws_url_parse("ws://0x7f.1:9222/devtools/browser/x", &u, err, sizeof err));
    CHECK_STR("127.0.0.1", u.host);
    CHECK_INT(WS_OK, ws_url_parse("ws://[0:0::1]:09222/x", &u, err, sizeof err));
    CHECK_STR("::1", u.host);
    CHECK_INT(9222, u.port);
    CHECK_INT(WS_OK, ws_url_parse("ws://%31%32%37.0.0.1:9222\\devtools\\x?a\\b", &u, err,
                                  sizeof err));
    CHECK_STR("127.0.0.1", u.host);
    CHECK_STR("/devtools/x?a\\b", u.path);
    CHECK_INT(WS_OK, ws_url_parse("ws://h\\@127.0.0.1:9222/", &u, err, sizeof err));
    CHECK_STR("h", u.host);                 /* '\\' ends the authority */
    CHECK_INT(WS_OK, ws_url_parse("ws://h:080/", &u, err, sizeof err));
    CHECK_INT(80, u.port);
    struct {
        const char *url, *needle;
    } bad[] = {
        {"", "empty"},
        {"127.0.0.1:9222", "no scheme"},
        {"ftp://x/", "unsupported URL scheme \"ftp\""},
        {"ws://", "empty host"},
        {"ws:///path", "empty host"},
        {"ws://:80/", "empty host"},
        {"ws://h:0/", "bad port"},
        {"ws://h:65536/", "bad port"},
        {"ws://h:12a/", "bad port"},
        {"ws://h:/", "no port"},
        {"ws://u:p@h/", "user name"},
        {"ws://[::1/", "without ']'"},
        {"ws://[::1]x/", "after ']'"},
        {"ws://[abc]/", "not an IPv6"},
        {"ws://1.2.3.256/", "IPv4"},
        {"ws://h/a b", "space"},
        {"ws://h/a\r\nX: y", "control"},
        {"ws://h/\xc3\xa9", "non-ASCII"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = ws_url_parse(bad[i].url, &u, err, sizeof err);
        if (rc != WS_EURL || !strstr(err, bad[i].needle)) {
            test_fail_detail("\"%s\": rc %d err \"%s\" (want \"%s\")", bad[i].url, rc, err,
                             bad[i].needle);
            CHECK(!"url rejected with a clear error");
        }
    }
    /* limits: host 255, path 2047 */
    char big[3000];
    memcpy(big, "ws://", 5);
    memset(big + 5, 'h', 256);
    big[261] = 0;
    CHECK_INT(WS_EURL, ws_url_parse(big, &u, err, sizeof err));
    big[260] = 0;
    CHECK_INT(WS_OK, ws_url_parse(big, &u, err, sizeof err));
    memcpy(big, "ws://h/", 7);
    memset(big + 7, 'p', 2100);
    big[2107] = 0;
    CHECK_INT(WS_EURL, ws_url_parse(big, &u, err, sizeof err));
    CHECK_INT(WS_EURL, ws_url_parse(NULL, &u, NULL, 0));
}

static int parse_http(const char *s, bool eof, size_t max, ws_http_response *r, char *buf,
                      char *err)
{
    size_t n = strlen(s);
    memcpy(buf, s, n + 1);
    return ws_http_parse_response(buf, n, eof, max, r, err, 256);
}

static void t_http_response(void)
{
    char buf[4096], err[256];
    ws_http_response r;
    const char *cl = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     "Content-Length: 13\r\n\r\n{\"a\":\"hello\"}";
    CHECK_INT(WS_OK, parse_http(cl, false, 0, &r, buf, err));
    CHECK_INT(200, r.status);
    CHECK_MEM("{\"a\":\"hello\"}", 13, r.body, r.body_len);
    /* every prefix needs more; at EOF it is an error */
    for (size_t i = 0; i < strlen(cl); i++) {
        memcpy(buf, cl, i);
        int rc = ws_http_parse_response(buf, i, false, 0, &r, err, sizeof err);
        if (rc != WS_EAGAIN) {
            test_fail_detail("prefix %zu: %d", i, rc);
            CHECK(rc == WS_EAGAIN);
            break;
        }
        rc = ws_http_parse_response(buf, i, true, 0, &r, err, sizeof err);
        CHECK_INT(WS_EPROTO, rc);
    }
    /* chunked, with extensions and trailers; every prefix needs more */
    const char *ch = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
    for (size_t i = 0; i < strlen(ch); i++) {
        memcpy(buf, ch, i);
        int rc = ws_http_parse_response(buf, i, false, 0, &r, err, sizeof err);
        if (rc != WS_EAGAIN) {
            test_fail_detail("chunked prefix %zu: %d (%s)", i, rc, err);
            CHECK(rc == WS_EAGAIN);
            break;
        }
    }
    CHECK_INT(WS_OK, parse_http(ch, false, 0, &r, buf, err));
    CHECK_MEM("hello 0123456789", 16, r.body, r.body_len);
    CHECK_INT(WS_OK, parse_http("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n",
                                false, 0, &r, buf, err));
    CHECK_MEM("abc", 3, r.body, r.body_len);
    CHECK_INT(WS_EPROTO, parse_http("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    "zz\r\n", false, 0, &r, buf, err));
    CHECK_INT(WS_EPROTO, parse_http("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    "3\r\nabcX\r\n", false, 0, &r, buf, err));
    CHECK_INT(WS_EPROTO, parse_http("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    "3\r\nab", true, 0, &r, buf, err));
    CHECK_INT(WS_ETOOBIG, parse_http("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                     "10\r\n", false, 8, &r, buf, err));
    CHECK_INT(WS_ETOOBIG, parse_http("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                     "ffffffffffffffffff\r\n", false, 0, &r, buf, err));
    CHECK_INT(WS_EPROTO, parse_http("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, 0,
                                    &r, buf, err));
    /* read until close */
    CHECK_INT(WS_EAGAIN, parse_http("HTTP/1.0 200 OK\r\n\r\nabc", false, 0, &r, buf, err));
    CHECK_INT(WS_OK, parse_http("HTTP/1.0 200 OK\r\n\r\nabc", true, 0, &r, buf, err));
    CHECK_MEM("abc", 3, r.body, r.body_len);
    CHECK_INT(WS_ETOOBIG, parse_http("HTTP/1.0 200 OK\r\n\r\nabcdef", false, 4, &r, buf, err));
    /* limits and malformed input */
    CHECK_INT(WS_ETOOBIG, parse_http("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", false, 10,
                                     &r, buf, err));
    CHECK_INT(WS_EPROTO, parse_http("HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", false, 0, &r,
                                    buf, err));
    CHECK_INT(WS_EPROTO, parse_http("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
                                    "Content-Length: 2\r\n\r\nab", false, 0, &r, buf, err));
    CHECK_INT(WS_EPROTO, parse_http("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n"
                                    "\r\n", false, 0, &r, buf, err));
    CHECK_INT(WS_EPROTO, parse_http("HTTX/1.1 200 OK\r\n\r\n", false, 0, &r, buf, err));
    CHECK(strstr(err, "malformed status line") != NULL);
    CHECK_INT(WS_EPROTO,
              parse_http("HTTP/1.1 200 OK\r\nbad header\r\n\r\n", false, 0, &r, buf, err));
    CHECK_INT(WS_EPROTO, parse_http("", true, 0, &r, buf, err));
    CHECK(strstr(err, "without a response") != NULL);
    /* 404 parses as a response; 204 has no body; 100 Continue is skipped */
    CHECK_INT(WS_OK, parse_http("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
                                false, 0, &r, buf, err));
    CHECK_INT(404, r.status);
    CHECK_INT(WS_OK, parse_http("HTTP/1.1 204 No Content\r\n\r\n", false, 0, &r, buf, err));
    CHECK_INT(0, r.body_len);
    CHECK_INT(WS_OK, parse_http("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
                                "Content-Length: 2\r\n\r\nok", false, 0, &r, buf, err));
    CHECK_INT(200, r.status);
    CHECK_MEM("ok", 2, r.body, r.body_len);
}

/* ------------------------------------------------------------------ */
/* processes and sockets */

static int closed_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    bind(s, (struct sockaddr *)&a, sizeof a);
    getsockname(s, (struct sockaddr *)&a, &al);
    close(s);
    return ntohs(a.sin_port);
}

/* A listening socket on 127.0.0.1; returns the fd and sets *port. */
static int listen_local(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 8) != 0) {
        close(s);
        return -1;
    }
    getsockname(s, (struct sockaddr *)&a, &al);
    *port = ntohs(a.sin_port);
    return s;
}

static void write_full(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return;
        }
        c += w;
        n -= (size_t)w;
    }
}

/* ---- the node peer ---- */

static pid_t peer_pid = -1;
static int peer_port_no, peer_tls_port;
static int peer_stdin = -1;
static char peer_why[256];

static void peer_kill(void)
{
    if (peer_pid > 0) {
        kill(peer_pid, SIGTERM);
        waitpid(peer_pid, NULL, 0);
        peer_pid = -1;
    }
    if (peer_stdin >= 0) {
        close(peer_stdin);
        peer_stdin = -1;
    }
}

/* Start `node tests/peers/ws_server.js` once; 0 (and a skip) if impossible. */
static int peer_port(void)
{
    if (peer_port_no)
        return peer_port_no;
    if (peer_why[0]) {
        test_skip(peer_why);
        return 0;
    }
    if (access("tests/peers/node_modules/ws/package.json", R_OK) != 0) {
        snprintf(peer_why, sizeof peer_why,
                 "tests/peers/node_modules missing: cd tests/peers && npm install --no-audit "
                 "--no-fund");
        test_skip(peer_why);
        return 0;
    }
    int out[2], in[2];
    if (pipe(out) != 0 || pipe(in) != 0) {
        snprintf(peer_why, sizeof peer_why, "pipe: %s", strerror(errno));
        test_skip(peer_why);
        return 0;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(in[0], 0);
        close(out[0]);
        close(out[1]);
        close(in[0]);
        close(in[1]);
        execlp("node", "node", "tests/peers/ws_server.js", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(in[0]);
    peer_pid = pid;
    peer_stdin = in[1];
    fcntl(peer_stdin, F_SETFD, FD_CLOEXEC);
    char line[32];
    size_t n = 0;
    struct pollfd pfd = {.fd = out[0], .events = POLLIN};
    while (n < sizeof line - 1 && poll(&pfd, 1, 10000) > 0) {
        ssize_t r = read(out[0], line + n, 1);
        if (r <= 0 || line[n] == '\n')
            break;
        n++;
    }
    line[n] = 0;
    close(out[0]);
    char *e;
    long port = strtol(line, &e, 10);
    peer_tls_port = (int)strtol(e, NULL, 10);
    if (port <= 0 || port > 65535) {
        peer_kill();
        snprintf(peer_why, sizeof peer_why, "node peer did not start (is node installed?)");
        test_skip(peer_why);
        return 0;
    }
    peer_port_no = (int)port;
    atexit(peer_kill);
    return peer_port_no;
}

static ws_client *peer_connect(const char *path, char *err, size_t errlen)
{
    char url[128];
    snprintf(url, sizeof url, "ws://127.0.0.1:%d%s", peer_port_no, path);
    ws_opts o = {.max_message = 0, .timeout_ms = 5000};
    ws_client *c = ws_client_connect(url, &o, err, errlen);
    if (!c)
        test_fail_detail("connect %s: %s", url, err);
    CHECK(c != NULL);
    return c;
}

static void expect_msg(ws_client *c, int opcode, const char *text)
{
    ws_event ev;
    int rc = ws_client_recv(c, &ev, 5000);
    if (rc != WS_OK)
        test_fail_detail("recv: %d %s", rc, ws_client_error(c));
    CHECK_INT(WS_OK, rc);
    CHECK_INT(WS_EV_MESSAGE, ev.type);
    CHECK_INT(opcode, ev.opcode);
    CHECK_MEM(text, strlen(text), ev.data, ev.len);
}

/* GET /stats until lastClose is want (the server may see the close late). */
static void expect_last_close(int want)
{
    char url[128], err[256], needle[32];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/stats", peer_port_no);
    snprintf(needle, sizeof needle, "\"lastClose\":%d", want);
    char *body = NULL;
    for (int i = 0; i < 100; i++) {
        free(body);
        body = NULL;
        size_t bl;
        int st;
        CHECK_INT(WS_OK, ws_http_get(url, 2000, 0, &body, &bl, &st, err, sizeof err));
        if (body && strstr(body, needle))
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    if (!body || !strstr(body, needle))
        test_fail_detail("stats: %s (want %s)", body ? body : "(none)", needle);
    CHECK(body && strstr(body, needle));
    free(body);
}

static void t_peer_echo(void)
{
    if (!peer_port())
        return;
    char err[256];
    ws_client *c = peer_connect("/echo", err, sizeof err);
    if (!c)
        return;
    CHECK_STR("", ws_client_error(c));
    CHECK(ws_client_fd(c) >= 0);
    CHECK_INT(WS_OK, ws_client_send(c, WS_OP_TEXT, "hello", 5, 5000));
    expect_msg(c, WS_OP_TEXT, "hello");
    CHECK_INT(WS_OK, ws_client_send(c, WS_OP_BINARY, "\x00\xff\x01", 3, 5000));
    ws_event ev;
    CHECK_INT(WS_OK, ws_client_recv(c, &ev, 5000));
    CHECK_INT(WS_OP_BINARY, ev.opcode);
    CHECK_MEM("\x00\xff\x01", 3, ev.data, ev.len);
    CHECK_INT(WS_OK, ws_client_send(c, WS_OP_TEXT, "", 0, 5000));
    expect_msg(c, WS_OP_TEXT, "");
    const char *fr = "fragmented from the client, \xe2\x82\xac split";
    CHECK_INT(WS_OK, ws_client_send_fragmented(c, WS_OP_TEXT, fr, strlen(fr), 3, 5000));
    expect_msg(c, WS_OP_TEXT, fr);
    /* sizes around the 16-bit and 64-bit length boundaries */
    size_t sizes[] = {125, 126, 65535, 65536, 300000};
    char *buf = malloc(300000);
    for (size_t i = 0; i < 300000; i++)
        buf[i] = (char)('a' + i % 26);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        CHECK_INT(WS_OK, ws_client_send(c, WS_OP_BINARY, buf, sizes[k], 5000));
        CHECK_INT(WS_OK, ws_client_recv(c, &ev, 5000));
        CHECK_MEM(buf, sizes[k], ev.data, ev.len);
    }
    free(buf);
    /* ping: the pong arrives before the next echo */
    CHECK_INT(WS_OK, ws_client_ping(c, "are you there", 13, 5000));
    CHECK_INT(WS_OK, ws_client_send(c, WS_OP_TEXT, "x", 1, 5000));
    expect_msg(c, WS_OP_TEXT, "x");
    CHECK_INT(1, ws_client_pongs(c));
    char big[126] = {0};
    CHECK_INT(WS_EPROTO, ws_client_ping(c, big, 126, 5000));
    /* nothing more is coming: a poll returns at once */
    CHECK_INT(WS_ETIMEOUT, ws_client_recv(c, &ev, 0));
    int64_t t0 = (int64_t)time(NULL);
    CHECK_INT(WS_ETIMEOUT, ws_client_recv(c, &ev, 100));
    CHECK((int64_t)time(NULL) - t0 <= 2);
    /* round trips, for the record */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rounds = 2000;
    const char *m = "{\"id\":1,\"method\":\"Runtime.evaluate\",\"params\":{\"expression\":\"1\"}}";
    for (int i = 0; i < rounds; i++) {
        if (ws_client_send(c, WS_OP_TEXT, m, strlen(m), 5000) != WS_OK ||
            ws_client_recv(c, &ev, 5000) != WS_OK) {
            CHECK(!"round trip");
            break;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3;
    fprintf(stderr, "  websocket echo round trip via node ws: %.1f us\n", us / rounds);
    CHECK_INT(WS_OK, ws_client_close(c, 1000, "done", 5000));
    CHECK_INT(WS_ECLOSED, ws_client_recv(c, &ev, 100));
    CHECK(ws_client_send(c, WS_OP_TEXT, "x", 1, 100) != WS_OK);
    ws_client_free(c);
    expect_last_close(1000);
}

static void t_peer_fragmented(void)
{
    if (!peer_port())
        return;
    char err[256];
    ws_client *c = peer_connect("/fragmented", err, sizeof err);
    if (!c)
        return;
    expect_msg(c, WS_OP_TEXT, "Hello, fragmented world");
    CHECK_INT(WS_OK, ws_client_send(c, WS_OP_TEXT, "still here", 10, 5000));
    expect_msg(c, WS_OP_TEXT, "still here");
    ws_client_close(c, 1000, NULL, 5000);
    ws_client_free(c);
}

static void t_peer_big(void)
{
    if (!peer_port())
        return;
    char err[256];
    ws_client *c = peer_connect("/big", err, sizeof err);
    if (!c)
        return;
    ws_event ev;
    size_t n = ((size_t)16 << 20) + 3;
    CHECK_INT(WS_OK, ws_client_recv(c, &ev, 20000));
    CHECK_INT(n, ev.len);
    CHECK_INT(WS_OP_TEXT, ev.opcode);
    bool same = ev.len == n;
    for (size_t i = 0; same && i < n; i++)
        same = ev.data[i] == (uint8_t)('a' + i % 26);
    CHECK(same);
    /* send 16 MiB + 5 back (binary) and get the echo */
    size_t m = ((size_t)16 << 20) + 5;
    uint8_t *buf = malloc(m);
    for (size_t i = 0; i < m; i++)
        buf[i] = (uint8_t)(i * 2654435761u >> 24);
    CHECK_INT(WS_OK, ws_client_send(c, WS_OP_BINARY, buf, m, 20000));
    CHECK_INT(WS_OK, ws_client_recv(c, &ev, 20000));
    CHECK(ev.len == m && memcmp(ev.data, buf, m) == 0);
    /* and fragmented in 1 MiB pieces */
    CHECK_INT(WS_OK, ws_client_send_fragmented(c, WS_OP_BINARY, buf, m, (size_t)1 << 20, 20000));
    CHECK_INT(WS_OK, ws_client_recv(c, &ev, 20000));
    CHECK(ev.len == m && memcmp(ev.data, buf, m) == 0);
    free(buf);
    ws_client_close(c, 1000, NULL, 5000);
    ws_client_free(c);
    /* a client with a smaller limit refuses the big message with 1009 */
    char url[128];
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/big", peer_port_no);
    ws_opts o = {.max_message = 1 << 20, .timeout_ms = 5000};
    c = ws_client_connect(url, &o, err, sizeof err);
    CHECK(c != NULL);
    if (!c)
        return;
    CHECK_INT(WS_ETOOBIG, ws_client_recv(c, &ev, 20000));
    CHECK(strstr(ws_client_error(c), "maximum message size") != NULL);
    /* closing waits for the server to hang up, so it reads our 1009 */
    CHECK_INT(WS_ETOOBIG, ws_client_close(c, 1000, NULL, 5000));
    ws_client_free(c);
    expect_last_close(1009);
}

static void t_peer_pings(void)
{
    if (!peer_port())
        return;
    char err[256];
    ws_client *c = peer_connect("/pings", err, sizeof err);
    if (!c)
        return;
    expect_msg(c, WS_OP_TEXT, "one");
    expect_msg(c, WS_OP_TEXT, "two");
    expect_msg(c, WS_OP_TEXT, "three");
    CHECK_INT(WS_OK, ws_client_send(c, WS_OP_TEXT, "count", 5, 5000));
    expect_msg(c, WS_OP_TEXT, "pongs=3");
    ws_client_close(c, 1000, NULL, 5000);
    ws_client_free(c);
}

static void t_peer_close(void)
{
    if (!peer_port())
        return;
    char err[256];
    ws_client *c = peer_connect("/close", err, sizeof err);
    if (!c)
        return;
    ws_event ev;
    CHECK_INT(WS_ECLOSED, ws_client_recv(c, &ev, 5000));
    CHECK_INT(WS_EV_CLOSE, ev.type);
    CHECK_INT(4001, ev.close_code);
    CHECK_MEM("bye now", 7, ev.data, ev.len);
    CHECK(strstr(ws_client_error(c), "4001") != NULL);
    CHECK_INT(WS_ECLOSED, ws_client_recv(c, &ev, 100));
    CHECK_INT(WS_OK, ws_client_close(c, 1000, NULL, 1000));
    ws_client_free(c);
    expect_last_close(4001); /* we echoed the code */
}

static void peer_bad(const char *path, int want_rc, const char *needle, int want_close)
{
    if (!peer_port())
        return;
    char err[256];
    ws_client *c = peer_connect(path, err, sizeof err);
    if (!c)
        return;
    ws_event ev;
    CHECK_INT(want_rc, ws_client_recv(c, &ev, 5000));
    if (!strstr(ws_client_error(c), needle))
        test_fail_detail("error \"%s\" lacks \"%s\"", ws_client_error(c), needle);
    CHECK(strstr(ws_client_error(c), needle) != NULL);
    CHECK_INT(want_rc, ws_client_recv(c, &ev, 100)); /* stays dead */
    CHECK_INT(want_rc, ws_client_close(c, 1000, NULL, 2000));
    ws_client_free(c);
    if (want_close)
        expect_last_close(want_close);
}

static void t_peer_midframe(void) { peer_bad("/midframe", WS_EIO, "middle of a frame", 0); }
static void t_peer_badutf8(void) { peer_bad("/badutf8", WS_EUTF8, "UTF-8", 1007); }
static void t_peer_masked(void)
{
    peer_bad("/masked", WS_EPROTO, "masked frame from server", 1002);
}
static void t_peer_rsv(void) { peer_bad("/rsv", WS_EPROTO, "RSV", 1002); }

static void t_peer_handshake_errors(void)
{
    if (!peer_port())
        return;
    char url[128], err[256];
    ws_opts o = {0, 3000};
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/reject", peer_port_no);
    CHECK(ws_client_connect(url, &o, err, sizeof err) == NULL);
    CHECK(strstr(err, "handshake: HTTP 403 Forbidden") != NULL);
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/badaccept", peer_port_no);
    CHECK(ws_client_connect(url, &o, err, sizeof err) == NULL);
    CHECK(strstr(err, "Sec-WebSocket-Accept mismatch") != NULL);
    /* a plain HTTP path answers 404 to an upgrade? node answers the upgrade
     * event for every path; /json/version over ws gets our 1008 close. */
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/unknown", peer_port_no);
    ws_client *c = ws_client_connect(url, &o, err, sizeof err);
    CHECK(c != NULL);
    if (c) {
        ws_event ev;
        CHECK_INT(WS_ECLOSED, ws_client_recv(c, &ev, 5000));
        CHECK_INT(1008, ev.close_code);
        ws_client_free(c);
    }
}

static void t_peer_transport(void)
{
    if (!peer_port())
        return;
    char url[128], err[256];
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/echo", peer_port_no);
    ws_transport *t = ws_transport_connect(url, NULL, err, sizeof err);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_STR("websocket", ws_transport_kind(t));
    CHECK(ws_transport_fd(t) >= 0);
    CHECK(!ws_transport_ready(t));
    CHECK_INT(WS_OK, ws_transport_send(t, "{\"id\":1}", 8, 5000));
    CHECK_INT(WS_OK, ws_transport_send(t, "{\"id\":2}", 8, 5000));
    const char *m;
    size_t n;
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 5000));
    CHECK_MEM("{\"id\":1}", 8, m, n);
    /* the second echo may already be buffered; either way recv gets it */
    for (int i = 0; i < 200 && !ws_transport_ready(t); i++) {
        struct pollfd p = {.fd = ws_transport_fd(t), .events = POLLIN};
        if (poll(&p, 1, 10) > 0)
            break;
    }
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 5000));
    CHECK_MEM("{\"id\":2}", 8, m, n);
    CHECK_INT(WS_ETIMEOUT, ws_transport_recv(t, &m, &n, 20));
    CHECK_STR("", ws_transport_error(t));
    ws_transport_free(t);
    expect_last_close(1000);
    CHECK(ws_transport_connect("ws://127.0.0.1:1/x", NULL, err, sizeof err) == NULL);
    ws_transport_free(NULL);
}

static void t_peer_http_get(void)
{
    if (!peer_port())
        return;
    char url[128], err[256], *body = NULL;
    size_t bl = 0;
    int st = 0;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/json/version", peer_port_no);
    CHECK_INT(WS_OK, ws_http_get(url, 5000, 0, &body, &bl, &st, err, sizeof err));
    CHECK_INT(200, st);
    CHECK(body && strstr(body, "\"webSocketDebuggerUrl\":\"ws://127.0.0.1:") != NULL);
    CHECK(body && strlen(body) == bl);
    free(body);
    body = NULL;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/chunked", peer_port_no);
    CHECK_INT(WS_OK, ws_http_get(url, 5000, 0, &body, &bl, &st, err, sizeof err));
    CHECK_STR("{\"chunked\":true}", body);
    free(body);
    body = NULL;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/nope", peer_port_no);
    CHECK_INT(WS_EHANDSHAKE, ws_http_get(url, 5000, 0, &body, &bl, &st, err, sizeof err));
    CHECK_INT(404, st);
    CHECK(body == NULL);
    if (!strstr(err, "HTTP 404 Not Found"))
        test_fail_detail("err: %s", err);
    CHECK(strstr(err, "HTTP 404 Not Found") != NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/slow", peer_port_no);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CHECK_INT(WS_ETIMEOUT, ws_http_get(url, 300, 0, &body, &bl, &st, err, sizeof err));
    clock_gettime(CLOCK_MONOTONIC, &b);
    CHECK(b.tv_sec - a.tv_sec < 3);
    CHECK(strstr(err, "within 300 ms") != NULL);
    /* too small a body limit */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/json/version", peer_port_no);
    CHECK_INT(WS_ETOOBIG, ws_http_get(url, 5000, 10, &body, &bl, &st, err, sizeof err));
}

static void t_peer_wss(void)
{
    char url[128], err[256];
#if CDPGATE_OPENSSL
    if (!peer_port())
        return;
    /* TLS to a plain server: the handshake fails, with a reason */
    snprintf(url, sizeof url, "wss://127.0.0.1:%d/echo", peer_port_no);
    ws_opts o = {0, 3000};
    CHECK(ws_client_connect(url, &o, err, sizeof err) == NULL);
    if (!strstr(err, "TLS"))
        test_fail_detail("err: %s", err);
    CHECK(strstr(err, "TLS") != NULL);
    /* the test certificate is not trusted by default */
    snprintf(url, sizeof url, "wss://127.0.0.1:%d/echo", peer_tls_port);
    CHECK(ws_client_connect(url, &o, err, sizeof err) == NULL);
    if (!strstr(err, "certificate verify failed"))
        test_fail_detail("err: %s", err);
    CHECK(strstr(err, "certificate verify failed") != NULL);
    /* trusted through SSL_CERT_FILE: a full echo session over TLS */
    setenv("SSL_CERT_FILE", "tests/peers/tls/cert.pem", 1);
    ws_client *c = ws_client_connect(url, &o, err, sizeof err);
    unsetenv("SSL_CERT_FILE");
    if (!c)
        test_fail_detail("err: %s", err);
    CHECK(c != NULL);
    if (!c)
        return;
    CHECK_INT(WS_OK, ws_client_send(c, WS_OP_TEXT, "over tls", 8, 5000));
    expect_msg(c, WS_OP_TEXT, "over tls");
    size_t n = (size_t)3 << 20;
    char *buf = malloc(n);
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('a' + i % 26);
    CHECK_INT(WS_OK, ws_client_send(c, WS_OP_TEXT, buf, n, 10000));
    ws_event ev;
    CHECK_INT(WS_OK, ws_client_recv(c, &ev, 10000));
    CHECK(ev.len == n && memcmp(ev.data, buf, n) == 0);
    free(buf);
    CHECK_INT(WS_OK, ws_client_close(c, 1000, NULL, 5000));
    ws_client_free(c);
#else
    snprintf(url, sizeof url, "wss://127.0.0.1:%d/echo", closed_port());
    CHECK(ws_client_connect(url, NULL, err, sizeof err) == NULL);
    CHECK_STR("wss:// needs a build with OPENSSL=1", err);
#endif
}

static void t_peer_stop(void)
{
    if (peer_pid <= 0) {
        test_skip(peer_why[0] ? peer_why : "node peer not started");
        return;
    }
    peer_kill();
    CHECK(peer_pid == -1);
}

/* ---- connect errors, no peer needed ---- */

static void t_connect_errors(void)
{
    char url[128], err[256];
    int port = closed_port();
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/x", port);
    CHECK(ws_client_connect(url, NULL, err, sizeof err) == NULL);
    char want[128];
    snprintf(want, sizeof want, "connect to 127.0.0.1:%d: Connection refused", port);
    CHECK_STR(want, err);
    CHECK(ws_client_connect("http://127.0.0.1:1/", NULL, err, sizeof err) == NULL);
    CHECK(strstr(err, "ws:// or wss://") != NULL);
    CHECK(ws_client_connect("ws://no-such-host.invalid/", NULL, err, sizeof err) == NULL);
    CHECK(strstr(err, "resolve no-such-host.invalid") != NULL);
    CHECK(ws_client_connect("nonsense", NULL, err, sizeof err) == NULL);
    CHECK(strstr(err, "no scheme") != NULL);
    /* a server that accepts but never answers the upgrade: bounded wait */
    int lp;
    int ls = listen_local(&lp);
    CHECK(ls >= 0);
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/", lp);
    ws_opts o = {0, 300};
    CHECK(ws_client_connect(url, &o, err, sizeof err) == NULL);
    CHECK(strstr(err, "no complete response within 300 ms") != NULL);
    close(ls);
}

/* A forked one-shot HTTP server: accepts one connection, reads the request,
 * writes resp and closes. */
static pid_t serve_once(const char *resp, int *port)
{
    int ls = listen_local(port);
    if (ls < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int c = accept(ls, NULL, NULL);
        char buf[4096];
        size_t n = 0;
        while (c >= 0 && n < sizeof buf - 1) {
            ssize_t r = read(c, buf + n, sizeof buf - 1 - n);
            if (r <= 0)
                break;
            n += (size_t)r;
            buf[n] = 0;
            if (strstr(buf, "\r\n\r\n"))
                break;
        }
        write_full(c, resp, strlen(resp));
        close(c);
        _exit(0);
    }
    close(ls);
    return pid;
}

static void t_http_get_forked(void)
{
    char url[128], err[256], *body = NULL;
    size_t bl;
    int st, port;
    pid_t pid = serve_once("HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n"
                           "{\"until\":\"close\"}", &port);
    CHECK(pid > 0);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/json/version", port);
    CHECK_INT(WS_OK, ws_http_get(url, 5000, 0, &body, &bl, &st, err, sizeof err));
    CHECK_STR("{\"until\":\"close\"}", body);
    free(body);
    waitpid(pid, NULL, 0);
    pid = serve_once("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", &port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/json/version", port);
    CHECK_INT(WS_EHANDSHAKE, ws_http_get(url, 5000, 0, &body, &bl, &st, err, sizeof err));
    CHECK_INT(404, st);
    char want[160];
    snprintf(want, sizeof want, "GET 127.0.0.1:%d/json/version: HTTP 404 Not Found", port);
    CHECK_STR(want, err);
    waitpid(pid, NULL, 0);
    /* truncated body */
    pid = serve_once("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", &port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    CHECK_INT(WS_EPROTO, ws_http_get(url, 5000, 0, &body, &bl, &st, err, sizeof err));
    CHECK(strstr(err, "3 of 10") != NULL);
    waitpid(pid, NULL, 0);
    /* refused port, wrong URLs */
    port = closed_port();
    snprintf(url, sizeof url, "http://127.0.0.1:%d/json/version", port);
    CHECK_INT(WS_ECONNECT, ws_http_get(url, 5000, 0, &body, &bl, &st, err, sizeof err));
    snprintf(want, sizeof want, "connect to 127.0.0.1:%d: Connection refused", port);
    CHECK_STR(want, err);
    CHECK_INT(WS_EURL, ws_http_get("ws://127.0.0.1:1/", 5000, 0, &body, &bl, &st, err,
                                   sizeof err));
    CHECK(strstr(err, "only http://") != NULL);
    CHECK_INT(WS_EURL, ws_http_get("http//127.0.0.1/", 5000, 0, &body, &bl, &st, err,
                                   sizeof err));
    CHECK(strstr(err, "no scheme") != NULL);
    CHECK(body == NULL);
}

/* ---- pipe transport ---- */

static void t_pipe_find_nul(void)
{
    CHECK_INT(-1, ws_pipe_find_nul((const uint8_t *)"abc", 3));
    CHECK_INT(1, ws_pipe_find_nul((const uint8_t *)"a\0c", 3));
    CHECK_INT(-1, ws_pipe_find_nul((const uint8_t *)"", 0));
}

static void t_pipe_socketpair(void)
{
    int sv[2];
    CHECK_INT(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    ws_transport *t = ws_transport_pipe(sv[0], sv[0], 0);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_STR("pipe", ws_transport_kind(t));
    CHECK_INT(sv[0], ws_transport_fd(t));
    const char *m;
    size_t n;
    CHECK(!ws_transport_ready(t));
    CHECK_INT(WS_ETIMEOUT, ws_transport_recv(t, &m, &n, 20));
    write_full(sv[1], "a\0bb\0\0ccc\0dd", 12);
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 1000));
    CHECK_MEM("a", 1, m, n);
    CHECK(m[n] == 0);
    CHECK(ws_transport_ready(t));
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 1000));
    CHECK_MEM("bb", 2, m, n);
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 1000));
    CHECK_INT(0, n);
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 1000));
    CHECK_MEM("ccc", 3, m, n);
    CHECK(!ws_transport_ready(t));
    write_full(sv[1], "d\0", 2);
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 1000));
    CHECK_MEM("ddd", 3, m, n);
    /* sending */
    CHECK_INT(WS_OK, ws_transport_send(t, "{\"id\":1}", 8, 1000));
    char buf[16];
    CHECK_INT(9, read(sv[1], buf, sizeof buf));
    CHECK_MEM("{\"id\":1}\0", 9, buf, 9);
    CHECK_INT(WS_EPROTO, ws_transport_send(t, "a\0b", 3, 1000));
    CHECK(strstr(ws_transport_error(t), "NUL byte at offset 1") != NULL);
    /* EOF at a message boundary */
    close(sv[1]);
    CHECK_INT(WS_ECLOSED, ws_transport_recv(t, &m, &n, 1000));
    CHECK_INT(WS_ECLOSED, ws_transport_recv(t, &m, &n, 1000));
    /* writing to a closed peer: an error, not SIGPIPE */
    CHECK(ws_transport_send(t, "x", 1, 1000) != WS_OK);
    ws_transport_free(t);
}

static void t_pipe_eof_mid_message(void)
{
    int p[2], q[2];
    CHECK_INT(0, pipe(p));
    CHECK_INT(0, pipe(q));
    ws_transport *t = ws_transport_pipe(p[0], q[1], 0);
    write_full(p[1], "{\"partial\":", 11);
    close(p[1]);
    const char *m;
    size_t n;
    CHECK_INT(WS_EIO, ws_transport_recv(t, &m, &n, 1000));
    CHECK(strstr(ws_transport_error(t), "middle of a message (11 bytes)") != NULL);
    /* the reader of our output is gone: EPIPE, no SIGPIPE */
    close(q[0]);
    CHECK_INT(WS_EIO, ws_transport_send(t, "x", 1, 1000));
    ws_transport_free(t);
    /* SIGPIPE must not be left pending either */
    sigset_t pend;
    sigpending(&pend);
    CHECK(!sigismember(&pend, SIGPIPE));
}

static void t_pipe_max_size(void)
{
    int sv[2];
    CHECK_INT(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    ws_transport *t = ws_transport_pipe(sv[0], sv[0], 1000);
    char *buf = malloc(3000);
    memset(buf, 'x', 3000);
    buf[1000] = 0;
    write_full(sv[1], buf, 1001); /* exactly 1000 bytes: fine */
    const char *m;
    size_t n;
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 1000));
    CHECK_INT(1000, n);
    write_full(sv[1], buf + 1001, 1999); /* no NUL: too big */
    CHECK_INT(WS_ETOOBIG, ws_transport_recv(t, &m, &n, 1000));
    CHECK(strstr(ws_transport_error(t), "maximum of 1000 bytes") != NULL);
    CHECK_INT(WS_ETOOBIG, ws_transport_recv(t, &m, &n, 1000));
    ws_transport_free(t);
    close(sv[1]);
    free(buf);
}

/* The peer side of --remote-debugging-pipe in a child: read NUL-terminated
 * messages from fd 3, write each back to fd 4 with "echo:" in front. */
static void child_echo(void)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        ssize_t r = read(3, buf + n, cap - n);
        if (r <= 0)
            break;
        size_t start = 0;
        n += (size_t)r;
        char *z;
        while ((z = memchr(buf + start, 0, n - start))) {
            size_t len = (size_t)(z - (buf + start)) + 1;
            /* one write per reply, as a browser would */
            char *out = malloc(len + 5);
            memcpy(out, "echo:", 5);
            memcpy(out + 5, buf + start, len);
            write_full(4, out, len + 5);
            free(out);
            start += len;
        }
        memmove(buf, buf + start, n - start);
        n -= start;
    }
    _exit(0);
}

static void t_pipe_child_large(void)
{
    int to_child[2], from_child[2];
    CHECK_INT(0, pipe(to_child));
    CHECK_INT(0, pipe(from_child));
    pid_t pid = fork();
    if (pid == 0) {
        /* move both ends above 4 first: pipe() may have returned 3 or 4 */
        int rd = fcntl(to_child[0], F_DUPFD, 10), wr = fcntl(from_child[1], F_DUPFD, 10);
        dup2(rd, 3);
        dup2(wr, 4);
        for (int fd = 5; fd < 64; fd++)
            close(fd);
        child_echo();
    }
    close(to_child[0]);
    close(from_child[1]);
    ws_transport *t = ws_transport_pipe(from_child[0], to_child[1], 0);
    CHECK(t != NULL);
    const char *m;
    size_t n;
    CHECK_INT(WS_OK, ws_transport_send(t, "{\"id\":1}", 8, 5000));
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 5000));
    CHECK_STR("echo:{\"id\":1}", m);
    size_t big = (size_t)20 << 20;
    char *msg = malloc(big);
    for (size_t i = 0; i < big; i++)
        msg[i] = (char)('A' + i % 23);
    CHECK_INT(WS_OK, ws_transport_send(t, msg, big, 20000));
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 20000));
    CHECK_INT(big + 5, n);
    CHECK(n == big + 5 && memcmp(m + 5, msg, big) == 0 && m[n] == 0);
    /* a burst of small messages after the big one */
    for (int i = 0; i < 100; i++)
        CHECK_INT(WS_OK, ws_transport_send(t, "{}", 2, 5000));
    for (int i = 0; i < 100; i++) {
        CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 5000));
        CHECK_STR("echo:{}", m);
    }
    /* round trips, for the record */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rounds = 2000;
    for (int i = 0; i < rounds; i++) {
        if (ws_transport_send(t, msg, 64, 5000) != WS_OK ||
            ws_transport_recv(t, &m, &n, 5000) != WS_OK) {
            CHECK(!"round trip");
            break;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3;
    fprintf(stderr, "  pipe echo round trip to a child: %.1f us\n", us / rounds);
    free(msg);
    ws_transport_free(t); /* closes both fds: the child sees EOF and exits */
    int status = -1;
    CHECK_INT(pid, waitpid(pid, &status, 0));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}


/* ---- chunked receive on the transports ---- */

/* Drain messages from t with recv_chunk (or whole recv for every message
 * whose index has its bit set in `whole`), appending "msg;" to out, until
 * WS_ETIMEOUT. *idx counts messages; *mid says a message is unfinished. */
static int drain(ws_transport *t, char *out, size_t cap, unsigned whole, int *idx,
                 bool *mid)
{
    for (;;) {
        const char *p;
        size_t n;
        bool end = false;
        int rc;
        if (!*mid && (whole >> (*idx & 31) & 1)) {
            rc = ws_transport_recv(t, &p, &n, 0);
            end = true;
        } else {
            rc = ws_transport_recv_chunk(t, &p, &n, &end, 0);
        }
        if (rc != WS_OK)
            return rc;
        size_t len = strlen(out);
        if (len + n + 2 < cap) {
            memcpy(out + len, p, n);
            out[len + n] = 0;
        }
        *mid = !end;
        if (end) {
            len = strlen(out);
            if (len + 2 < cap) {
                out[len] = ';';
                out[len + 1] = 0;
            }
            (*idx)++;
        }
    }
}

/* Pipe: the byte stream split once at every boundary, each message read in
 * pieces or whole by a pattern, must give the same messages. */
static void t_pipe_chunk_splits(void)
{
    static const char in[] = "{\"id\":1}\0\0abc\0{\"method\":\"x\",\"p\":[1,2]}\0z\0";
    size_t len = sizeof in - 1;
    const char *want = "{\"id\":1};;abc;{\"method\":\"x\",\"p\":[1,2]};z;";
    for (unsigned whole = 0; whole < 32; whole += 5) {
        for (size_t k = 0; k <= len; k++) {
            int sv[2];
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
                CHECK(!"socketpair");
                return;
            }
            ws_transport *t = ws_transport_pipe(sv[0], sv[0], 0);
            char out[256] = "";
            int idx = 0;
            bool mid = false;
            write_full(sv[1], in, k);
            int rc = drain(t, out, sizeof out, whole, &idx, &mid);
            bool ok = rc == WS_ETIMEOUT;
            write_full(sv[1], in + k, len - k);
            rc = drain(t, out, sizeof out, whole, &idx, &mid);
            ok = ok && rc == WS_ETIMEOUT && strcmp(out, want) == 0;
            close(sv[1]);
            const char *p;
            size_t n;
            bool end;
            ok = ok && ws_transport_recv_chunk(t, &p, &n, &end, 1000) == WS_ECLOSED;
            ws_transport_free(t);
            if (!ok) {
                test_fail_detail("whole=%u split %zu: rc %d got \"%s\"", whole, k, rc, out);
                CHECK(!"pipe chunks");
                return;
            }
        }
    }
    /* a message begun in pieces cannot be finished whole, but can go on */
    int sv[2];
    CHECK_INT(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    ws_transport *t = ws_transport_pipe(sv[0], sv[0], 10);
    const char *p;
    size_t n;
    bool end;
    write_full(sv[1], "abc", 3);
    CHECK_INT(WS_OK, ws_transport_recv_chunk(t, &p, &n, &end, 1000));
    CHECK(!end);
    CHECK_MEM("abc", 3, p, n);
    CHECK_INT(WS_EPROTO, ws_transport_recv(t, &p, &n, 0));
    CHECK_INT(WS_ETIMEOUT, ws_transport_recv_chunk(t, &p, &n, &end, 0));
    /* the size limit holds across pieces: 3 + 8 > 10 */
    write_full(sv[1], "defghijk", 8);
    CHECK_INT(WS_ETOOBIG, ws_transport_recv_chunk(t, &p, &n, &end, 1000));
    CHECK(strstr(ws_transport_error(t), "maximum of 10 bytes") != NULL);
    ws_transport_free(t);
    close(sv[1]);
    /* EOF inside a message read in pieces */
    CHECK_INT(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    t = ws_transport_pipe(sv[0], sv[0], 0);
    write_full(sv[1], "{\"partial\":", 11);
    CHECK_INT(WS_OK, ws_transport_recv_chunk(t, &p, &n, &end, 1000));
    close(sv[1]);
    CHECK_INT(WS_EIO, ws_transport_recv_chunk(t, &p, &n, &end, 1000));
    CHECK(strstr(ws_transport_error(t), "middle of a message (11 bytes)") != NULL);
    ws_transport_free(t);
}

/* Receive one message in pieces; check its bytes against gen(i) as they
 * come and count allocations made meanwhile. */
static char gen_byte(size_t i)
{
    return (char)('a' + (i * 7 + i / 1000) % 26);
}

static int recv_big(ws_transport *t, size_t want, long *allocs, size_t *pieces)
{
    size_t got = 0;
    long before = test_alloc_count();
    *pieces = 0;
    for (;;) {
        const char *p;
        size_t n;
        bool end;
        int rc = ws_transport_recv_chunk(t, &p, &n, &end, 20000);
        if (rc != WS_OK)
            return rc;
        for (size_t i = 0; i < n; i++)
            if (p[i] != gen_byte(got + i))
                return -100;
        got += n;
        (*pieces)++;
        if (end)
            break;
    }
    *allocs = test_alloc_count() - before;
    return got == want ? 0 : -101;
}

static void write_big(int fd, size_t n)
{
    char buf[65536];
    for (size_t off = 0; off < n;) {
        size_t k = n - off < sizeof buf ? n - off : sizeof buf;
        for (size_t i = 0; i < k; i++)
            buf[i] = gen_byte(off + i);
        write_full(fd, buf, k);
        off += k;
    }
}

/* 20 MB through the pipe in pieces: nothing is allocated for it (the
 * 64 KiB read buffer is reused), and a whole recv still works after it. */
static void t_pipe_chunk_big(void)
{
    int to[2];
    CHECK_INT(0, socketpair(AF_UNIX, SOCK_STREAM, 0, to));
    size_t big = (size_t)20 << 20;
    pid_t pid = fork();
    if (pid == 0) {
        close(to[0]);
        write_full(to[1], "{}", 3);
        write_big(to[1], big);
        write_full(to[1], "\0tail", 6);
        _exit(0);
    }
    close(to[1]);
    ws_transport *t = ws_transport_pipe(to[0], to[0], (size_t)32 << 20);
    const char *p;
    size_t n;
    CHECK_INT(WS_OK, ws_transport_recv(t, &p, &n, 5000));
    CHECK_STR("{}", p);
    long allocs = -1;
    size_t pieces = 0;
    CHECK_INT(0, recv_big(t, big, &allocs, &pieces));
    CHECK_INT(0, allocs);
    CHECK(pieces > 20);
    CHECK_INT(WS_OK, ws_transport_recv(t, &p, &n, 5000));
    CHECK_STR("tail", p);
    ws_transport_free(t);
    int st;
    waitpid(pid, &st, 0);
}

/* A minimal WebSocket server in a child: accept one client, answer the
 * upgrade, then send: "small1", a 20 MB text message in 1 MB fragments with
 * a ping between two of them, "small2" as two fragments, "small3", close. */
static void ws_script_server(int ls, size_t big)
{
    int c = accept(ls, NULL, NULL);
    char req[4096];
    size_t n = 0;
    while (n < sizeof req - 1) {
        ssize_t r = read(c, req + n, sizeof req - 1 - n);
        if (r <= 0)
            _exit(1);
        n += (size_t)r;
        req[n] = 0;
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    const char *k = strstr(req, "Sec-WebSocket-Key: ");
    if (!k)
        _exit(2);
    k += 19;
    char key[128];
    size_t kl = (size_t)(strchr(k, '\r') - k);
    snprintf(key, sizeof key, "%.*s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", (int)kl, k);
    uint8_t dg[20];
    ws_sha1(key, strlen(key), dg);
    char acc[64], resp[256];
    base_b64_encode(dg, 20, acc);
    int rl = snprintf(resp, sizeof resp, "HTTP/1.1 101 Switching Protocols\r\n"
                      "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Accept: %s\r\n\r\n", acc);
    write_full(c, resp, (size_t)rl);
    fbuf f = {0};
    fb_s(&f, 0x81, "small1");
    size_t frag = (size_t)1 << 20;
    char *chunk = malloc(frag);
    for (size_t off = 0; off < big; off += frag) {
        size_t m = big - off < frag ? big - off : frag;
        for (size_t i = 0; i < m; i++)
            chunk[i] = gen_byte(off + i);
        uint8_t b0 = (uint8_t)((off + m == big ? 0x80 : 0) | (off ? 0 : WS_OP_TEXT));
        fb_frame(&f, b0, chunk, m, NULL);
        if (off == frag)
            fb_s(&f, 0x89, "are you there");
        write_full(c, f.b, f.n);
        fb_reset(&f);
    }
    fb_s(&f, 0x01, "sma");
    fb_s(&f, 0x80, "ll2");
    fb_s(&f, 0x81, "small3");
    fb_close(&f, 1000, "bye", 3);
    write_full(c, f.b, f.n);
    /* let the client read everything and answer before we go */
    char sink[4096];
    while (read(c, sink, sizeof sink) > 0) {
    }
    _exit(0);
}

static void t_ws_chunk_big(void)
{
    int port;
    int ls = listen_local(&port);
    CHECK(ls >= 0);
    size_t big = (size_t)20 << 20;
    pid_t pid = fork();
    if (pid == 0)
        ws_script_server(ls, big);
    close(ls);
    char url[64], err[256];
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/", port);
    ws_opts o = {(size_t)32 << 20, 5000};
    ws_transport *t = ws_transport_connect(url, &o, err, sizeof err);
    if (!CHECK(t != NULL)) {
        test_fail_detail("%s", err);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return;
    }
    const char *p;
    size_t n;
    bool end;
    CHECK_INT(WS_OK, ws_transport_recv(t, &p, &n, 5000));
    CHECK_MEM("small1", 6, p, n);
    long allocs = -1;
    size_t pieces = 0;
    CHECK_INT(0, recv_big(t, big, &allocs, &pieces));
    CHECK(allocs <= 1);     /* at most the send scratch for the pong */
    CHECK(pieces >= 20);
    /* a fragmented small message in pieces */
    char got[16] = "";
    do {
        CHECK_INT(WS_OK, ws_transport_recv_chunk(t, &p, &n, &end, 5000));
        size_t gl = strlen(got);
        if (gl + n < sizeof got) {
            memcpy(got + gl, p, n);
            got[gl + n] = 0;
        }
    } while (!end);
    CHECK_STR("small2", got);
    CHECK_INT(WS_OK, ws_transport_recv(t, &p, &n, 5000));
    CHECK_MEM("small3", 6, p, n);
    CHECK_INT(WS_ECLOSED, ws_transport_recv_chunk(t, &p, &n, &end, 5000));
    ws_transport_free(t);
    int st = -1;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ws_transport_wipe zeroes what the pipe handed out (the last message
 * too: its bytes are still in the live buffer) and keeps what it did not. */
static void t_pipe_wipe(void)
{
    int sv[2];
    CHECK_INT(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    ws_transport *t = ws_transport_pipe(sv[0], sv[0], 0);
    static const char two[] = "{\"a\":\"secret-1\"}\0{\"b\":\"kept-2\"}";
    CHECK(write(sv[1], two, sizeof two) == (ssize_t)sizeof two);
    const char *m = NULL;
    size_t n = 0;
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 2000));
    CHECK_MEM("{\"a\":\"secret-1\"}", 16, m, n);
    const char *first = m;
    ws_transport_wipe(t);
    size_t nz = 0;
    for (size_t i = 0; first && i < 16; i++)
        nz += first[i] != 0;
    CHECK_INT(0, nz);
    CHECK_INT(WS_OK, ws_transport_recv(t, &m, &n, 2000));
    CHECK_MEM("{\"b\":\"kept-2\"}", 14, m, n);
    ws_transport_wipe(t);
    ws_transport_wipe(t);           /* nothing new: a no-op */
    ws_transport_free(t);
    close(sv[1]);
}

static const test_case TESTS[] = {
    {"pipe_wipe", t_pipe_wipe},
    {"sha1_short", t_sha1_short},
    {"sha1_long", t_sha1_long},
    {"sha1_monte", t_sha1_monte},
    {"base64_rfc4648", t_base64_rfc4648},
    {"base64_strict", t_base64_strict},
    {"rfc6455_examples", t_rfc6455_examples},
    {"dec_basic", t_dec_basic},
    {"dec_fragmented", t_dec_fragmented},
    {"dec_interleaved_control", t_dec_interleaved_control},
    {"dec_lengths", t_dec_lengths},
    {"dec_close", t_dec_close},
    {"dec_utf8", t_dec_utf8},
    {"dec_oversize", t_dec_oversize},
    {"dec_protocol_errors", t_dec_protocol_errors},
    {"dec_borrowed", t_dec_borrowed},
    {"dec_alloc_failures", t_dec_alloc_failures},
    {"encoder", t_encoder},
    {"handshake_check", t_handshake_check},
    {"url_parse", t_url_parse},
    {"http_response", t_http_response},
    {"connect_errors", t_connect_errors},
    {"http_get_forked", t_http_get_forked},
    {"pipe_find_nul", t_pipe_find_nul},
    {"pipe_socketpair", t_pipe_socketpair},
    {"pipe_eof_mid_message", t_pipe_eof_mid_message},
    {"pipe_max_size", t_pipe_max_size},
    {"pipe_child_large", t_pipe_child_large},
    {"pipe_chunk_splits", t_pipe_chunk_splits},
    {"pipe_chunk_big", t_pipe_chunk_big},
    {"ws_chunk_big", t_ws_chunk_big},
    {"peer_echo", t_peer_echo},
    {"peer_fragmented", t_peer_fragmented},
    {"peer_big", t_peer_big},
    {"peer_pings", t_peer_pings},
    {"peer_close", t_peer_close},
    {"peer_midframe", t_peer_midframe},
    {"peer_badutf8", t_peer_badutf8},
    {"peer_masked", t_peer_masked},
    {"peer_rsv", t_peer_rsv},
    {"peer_handshake_errors", t_peer_handshake_errors},
    {"peer_transport", t_peer_transport},
    {"peer_http_get", t_peer_http_get},
    {"peer_wss", t_peer_wss},
    {"peer_stop", t_peer_stop},
    {0, 0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, TESTS);
}
