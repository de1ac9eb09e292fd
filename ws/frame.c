/*
 * frame.c — the RFC 6455 frame codec and message layer, without I/O.
 *
 * ws_decoder_feed() takes any span of bytes (a whole read, one byte, ...)
 * and stops at the first event: a complete message, a control frame, or a
 * protocol error. The caller feeds the unconsumed rest next time.
 *
 * Invariants:
 *   - Events happen only at frame ends, so when feed returns an event the
 *     decoder sits at a frame boundary (hdr_have == 0).
 *   - Everything about a frame that can be checked from its first two bytes
 *     (RSV bits, opcode, control-frame rules, masking, fragmentation order)
 *     is checked as soon as those two bytes arrive; the size limit as soon as
 *     the length is known, before anything is allocated for the payload.
 *   - Text is validated as UTF-8 incrementally as payload arrives, across
 *     fragments and across interleaved control frames; a bad byte fails at
 *     once ("fail fast"), a message that ends inside a sequence fails at its
 *     last frame.
 *   - After WS_EV_ERROR or WS_EV_CLOSE the decoder is finished.
 *
 * Implementation notes:
 *   - An unmasked, unfragmented frame whose whole payload is in the current
 *     input is returned in place (ev->data points into the caller's input) —
 *     no copy for the common CDP case. Everything else is reassembled in
 *     d->msg, whose capacity is reserved from the frame length (so one
 *     allocation per frame at most, growing geometrically across fragments).
 *   - Control payloads (<= 125 bytes) go to d->ctl and never allocate.
 *   - d->msg never grows by realloc, and what it held of the previous
 *     message is zeroed when the next one starts (msg_dirty bounds it), so
 *     payload is not left behind in freed or reused memory.
 */
#include "ws/ws_int.h"

#include <stdlib.h>
#include <string.h>

enum { ST_HDR = 0, ST_PAYLOAD = 1, ST_DEAD = 2 };

static const char *const RESERVED_OP[16] = {
    NULL, NULL, NULL, "reserved opcode 0x3", "reserved opcode 0x4",
    "reserved opcode 0x5", "reserved opcode 0x6", "reserved opcode 0x7", NULL,
    NULL, NULL, "reserved opcode 0xB", "reserved opcode 0xC",
    "reserved opcode 0xD", "reserved opcode 0xE", "reserved opcode 0xF",
};

void ws_decoder_init(ws_decoder *d, size_t max_message, bool expect_masked)
{
    memset(d, 0, sizeof *d);
    d->state = ST_HDR;
    d->hdr_need = 2;
    d->max_message = max_message ? max_message : WS_DEFAULT_MAX_MESSAGE;
    d->expect_masked = expect_masked;
}

void ws_decoder_free(ws_decoder *d)
{
    if (!d)
        return;
    base_memzero(d->msg, d->msg_dirty);
    free(d->msg);
    d->msg = NULL;
    d->msg_len = d->msg_cap = d->msg_dirty = 0;
}

void ws_decoder_wipe_int(ws_decoder *d)
{
    if (d->msg_opcode)
        return;         /* still being reassembled: not handed out yet */
    base_memzero(d->msg, d->msg_dirty);
    d->msg_dirty = 0;
}

static size_t fail(ws_decoder *d, ws_event *ev, size_t consumed, int code,
                   uint16_t close_code, const char *msg)
{
    d->failed = true;
    d->state = ST_DEAD;
    ev->type = WS_EV_ERROR;
    ev->code = code;
    ev->close_code = close_code;
    ev->msg = msg;
    ev->data = NULL;
    ev->len = 0;
    return consumed;
}

/* Close codes a peer may send (RFC 6455 7.4 and the IANA registry). */
static bool close_code_ok(unsigned c)
{
    if (c >= 3000 && c <= 4999)
        return true;
    return (c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1014);
}

/* Make room for need bytes of message; false when out of memory. */
static bool reserve(ws_decoder *d, size_t need)
{
    if (need <= d->msg_cap)
        return true;
    size_t cap = d->msg_cap * 2;
    if (cap < need)
        cap = need;
    if (cap > d->max_message)
        cap = need > d->max_message ? need : d->max_message;
    if (cap < 64)
        cap = 64;
    /* Not realloc: it could leave a copy of the payload in freed memory. */
    uint8_t *nb = malloc(cap);
    if (!nb)
        return false;
    if (d->msg_dirty) {
        memcpy(nb, d->msg, d->msg_dirty);
        base_memzero(d->msg, d->msg_dirty);
    }
    free(d->msg);
    d->msg = nb;
    d->msg_cap = cap;
    return true;
}

/* Checks on the first two header bytes; sets hdr_need. Returns an error
 * message, or NULL when the frame may proceed. */
static const char *check_first(ws_decoder *d)
{
    uint8_t b0 = d->hdr[0], b1 = d->hdr[1];
    d->fin = b0 >> 7;
    d->opcode = b0 & 0x0F;
    d->masked = b1 >> 7;
    unsigned len7 = b1 & 0x7F;
    if (b0 & 0x70)
        return "reserved bits (RSV1-3) set without a negotiated extension";
    if (RESERVED_OP[d->opcode])
        return RESERVED_OP[d->opcode];
    if (d->opcode >= 8) {
        if (!d->fin)
            return "fragmented control frame";
        if (len7 > 125)
            return "control frame payload longer than 125 bytes";
    } else if (d->opcode == WS_OP_CONT) {
        if (!d->msg_opcode)
            return "continuation frame without a message to continue";
    } else if (d->msg_opcode) {
        return "new data frame while a fragmented message is unfinished";
    }
    if (d->masked && !d->expect_masked)
        return "masked frame from server";
    if (!d->masked && d->expect_masked)
        return "unmasked frame from client";
    d->hdr_need = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + (d->masked ? 4 : 0);
    return NULL;
}

/* The control frame in d->ctl is complete: turn it into an event. */
static size_t end_control(ws_decoder *d, ws_event *ev, size_t pos)
{
    ev->data = d->ctl;
    ev->len = d->ctl_len;
    if (d->opcode == WS_OP_PING) {
        ev->type = WS_EV_PING;
        return pos;
    }
    if (d->opcode == WS_OP_PONG) {
        ev->type = WS_EV_PONG;
        return pos;
    }
    if (d->ctl_len == 1)
        return fail(d, ev, pos, WS_EPROTO, 1002, "close frame with a 1-byte payload");
    uint16_t code = 1005;
    if (d->ctl_len >= 2) {
        code = (uint16_t)(d->ctl[0] << 8 | d->ctl[1]);
        if (!close_code_ok(code))
            return fail(d, ev, pos, WS_EPROTO, 1002, "invalid close code");
        uint32_t st = 0;
        if (!ws_utf8_run(&st, d->ctl + 2, d->ctl_len - 2) || st != 0)
            return fail(d, ev, pos, WS_EUTF8, 1007, "close reason is not valid UTF-8");
        ev->data = d->ctl + 2;
        ev->len = d->ctl_len - 2;
    }
    d->closed = true;
    d->state = ST_DEAD;
    ev->type = WS_EV_CLOSE;
    ev->close_code = code;
    return pos;
}

static size_t message_event(ws_decoder *d, ws_event *ev, size_t pos,
                            const uint8_t *data, size_t len)
{
    ev->type = WS_EV_MESSAGE;
    ev->opcode = d->msg_opcode;
    ev->data = data ? data : (const uint8_t *)"";
    ev->len = len;
    d->msg_opcode = 0;
    return pos;
}

void ws_decoder_set_chunked(ws_decoder *d, bool on)
{
    d->chunked = on;
}

#define SCRATCH_MAX ((size_t)64 << 10)

/* Chunked mode, inside a data frame's payload with input at in[pos..len):
 * hand out what is there as one WS_EV_PIECE. */
static size_t piece(ws_decoder *d, ws_event *ev, const uint8_t *in, size_t pos, size_t len)
{
    size_t n = len - pos;
    if (n > d->remaining)
        n = (size_t)d->remaining;
    const uint8_t *src = in + pos;
    if (d->masked) {
        if (n > SCRATCH_MAX)
            n = SCRATCH_MAX;
        if (!reserve(d, n))
            return fail(d, ev, pos, WS_ENOMEM, 1011, "out of memory reading a message");
        ws_mask_copy(d->msg, src, n, d->mask, d->mask_off);
        src = d->msg;
        if (n > d->msg_dirty)
            d->msg_dirty = n;
    }
    pos += n;
    d->remaining -= n;
    d->mask_off += n;
    d->msg_len += n;
    if (d->msg_opcode == WS_OP_TEXT && !ws_utf8_run(&d->utf8_state, src, n))
        return fail(d, ev, pos, WS_EUTF8, 1007, "invalid UTF-8 in a text message");
    bool last = d->fin && d->remaining == 0;
    if (last && d->msg_opcode == WS_OP_TEXT && d->utf8_state)
        return fail(d, ev, pos, WS_EUTF8, 1007, "text message ends inside a UTF-8 sequence");
    if (d->remaining == 0)
        d->state = ST_HDR;
    message_event(d, ev, pos, src, n);
    ev->type = WS_EV_PIECE;
    ev->fin = last;
    if (!last)
        d->msg_opcode = ev->opcode;     /* the message goes on */
    return pos;
}

/* fnlen: allow: the frame decoder's state machine (header, payload,
 * message end, byte at a time across calls), which reads best whole. */
size_t ws_decoder_feed(ws_decoder *d, const uint8_t *in, size_t len, ws_event *ev)
{
    memset(ev, 0, sizeof *ev);
    if (d->state == ST_DEAD) {
        if (d->closed)
            return fail(d, ev, 0, WS_ECLOSED, 1002, "data after the close frame");
        return fail(d, ev, 0, WS_EPROTO, 1002, "decoder used after an error");
    }
    size_t pos = 0;
    for (;;) {
        if (d->state == ST_HDR) {
            if (d->hdr_have < 2) {
                size_t take = 2 - d->hdr_have;
                if (take > len - pos)
                    take = len - pos;
                memcpy(d->hdr + d->hdr_have, in + pos, take);
                d->hdr_have += take;
                pos += take;
                if (d->hdr_have < 2)
                    break;
                const char *why = check_first(d);
                if (why)
                    return fail(d, ev, pos, WS_EPROTO, 1002, why);
            }
            if (d->hdr_have < d->hdr_need) {
                size_t take = d->hdr_need - d->hdr_have;
                if (take > len - pos)
                    take = len - pos;
                memcpy(d->hdr + d->hdr_have, in + pos, take);
                d->hdr_have += take;
                pos += take;
                if (d->hdr_have < d->hdr_need)
                    break;
            }
            /* Whole header present. */
            uint64_t plen = d->hdr[1] & 0x7F;
            size_t p = 2;
            if (plen == 126) {
                plen = (uint64_t)d->hdr[2] << 8 | d->hdr[3];
                p = 4;
            } else if (plen == 127) {
                plen = 0;
                for (int i = 0; i < 8; i++)
                    plen = plen << 8 | d->hdr[2 + i];
                p = 10;
                if (plen >> 63)
                    return fail(d, ev, pos, WS_EPROTO, 1002,
                                "64-bit payload length with the high bit set");
            }
            if (d->masked)
                memcpy(d->mask, d->hdr + p, 4);
            d->hdr_have = 0;
            d->hdr_need = 2;
            d->remaining = plen;
            d->mask_off = 0;
            d->state = ST_PAYLOAD;
            if (d->opcode >= 8) {
                d->ctl_len = 0;
            } else {
                uint64_t have = d->opcode == WS_OP_CONT ? d->msg_len : 0;
                if (plen > d->max_message - have)
                    return fail(d, ev, pos, WS_ETOOBIG, 1009,
                                "message larger than the maximum message size");
                if (d->opcode != WS_OP_CONT) {
                    d->msg_opcode = d->opcode;
                    d->msg_len = 0;
                    d->utf8_state = 0;
                    /* The earlier message is done with: zero it before reuse. */
                    base_memzero(d->msg, d->msg_dirty);
                    d->msg_dirty = 0;
                    /* Give back a large buffer left by an earlier message. */
                    if (d->msg_cap > ((size_t)4 << 20) &&
                        (d->chunked || plen < d->msg_cap / 4)) {
                        free(d->msg);
                        d->msg = NULL;
                        d->msg_cap = 0;
                    }
                }
                if (d->chunked)
                    goto payload;
                /* Fast path: the whole unfragmented frame is in the input. */
                if (d->fin && d->opcode != WS_OP_CONT && !d->masked &&
                    plen <= len - pos) {
                    const uint8_t *data = in + pos;
                    size_t n = (size_t)plen;
                    if (d->opcode == WS_OP_TEXT) {
                        uint32_t st = 0;
                        if (!ws_utf8_run(&st, data, n))
                            return fail(d, ev, pos, WS_EUTF8, 1007,
                                        "invalid UTF-8 in a text message");
                        if (st)
                            return fail(d, ev, pos, WS_EUTF8, 1007,
                                        "text message ends inside a UTF-8 sequence");
                    }
                    pos += n;
                    d->state = ST_HDR;
                    d->remaining = 0;
                    return message_event(d, ev, pos, data, n);
                }
                if (!reserve(d, d->msg_len + (size_t)plen))
                    return fail(d, ev, pos, WS_ENOMEM, 1011,
                                "out of memory reassembling a message");
            }
        }
payload:
        /* ST_PAYLOAD */
        if (d->remaining && d->chunked && d->opcode < 8) {
            if (pos == len)
                break;
            return piece(d, ev, in, pos, len);
        }
        if (d->remaining) {
            if (pos == len)
                break;
            size_t n = len - pos;
            if (n > d->remaining)
                n = (size_t)d->remaining;
            uint8_t *dst = d->opcode >= 8 ? d->ctl + d->ctl_len : d->msg + d->msg_len;
            if (d->masked)
                ws_mask_copy(dst, in + pos, n, d->mask, d->mask_off);
            else
                memcpy(dst, in + pos, n);
            pos += n;
            d->remaining -= n;
            d->mask_off += n;
            if (d->opcode >= 8) {
                d->ctl_len += n;
            } else {
                d->msg_len += n;
                if (d->msg_len > d->msg_dirty)
                    d->msg_dirty = d->msg_len;
                if (d->msg_opcode == WS_OP_TEXT &&
                    !ws_utf8_run(&d->utf8_state, dst, n))
                    return fail(d, ev, pos, WS_EUTF8, 1007,
                                "invalid UTF-8 in a text message");
            }
            if (d->remaining)
                break;
        }
        /* Frame complete. */
        d->state = ST_HDR;
        if (d->opcode >= 8)
            return end_control(d, ev, pos);
        if (d->fin) {
            if (d->msg_opcode == WS_OP_TEXT && d->utf8_state)
                return fail(d, ev, pos, WS_EUTF8, 1007,
                            "text message ends inside a UTF-8 sequence");
            if (d->chunked) {
                message_event(d, ev, pos, NULL, 0);
                ev->type = WS_EV_PIECE;
                ev->fin = true;
                return pos;
            }
            return message_event(d, ev, pos, d->msg, d->msg_len);
        }
        if (pos == len)
            break;
    }
    ev->type = WS_EV_NONE;
    return pos;
}

size_t ws_frame_header(uint8_t out[14], int opcode, bool fin, uint64_t len,
                       const uint8_t *mask)
{
    uint8_t mbit = mask ? 0x80 : 0;
    size_t n;
    out[0] = (uint8_t)((fin ? 0x80 : 0) | (opcode & 0x0F));
    if (len < 126) {
        out[1] = (uint8_t)(mbit | len);
        n = 2;
    } else if (len <= 0xFFFF) {
        out[1] = mbit | 126;
        out[2] = (uint8_t)(len >> 8);
        out[3] = (uint8_t)len;
        n = 4;
    } else {
        out[1] = mbit | 127;
        for (int i = 0; i < 8; i++)
            out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
        n = 10;
    }
    if (mask) {
        memcpy(out + n, mask, 4);
        n += 4;
    }
    return n;
}

/* The mask repeated to eight bytes, rotated to start at offset. Because 8 is
 * a multiple of 4, byte i of a run that starts at that offset uses m[i & 7]. */
static uint64_t mask8(const uint8_t mask[4], size_t offset, uint8_t m[8])
{
    for (int k = 0; k < 8; k++)
        m[k] = mask[(offset + (size_t)k) & 3];
    uint64_t m64;
    memcpy(&m64, m, 8);
    return m64;
}

void ws_mask_copy(uint8_t *dst, const uint8_t *src, size_t len,
                  const uint8_t mask[4], size_t offset)
{
    uint8_t m[8];
    uint64_t m64 = mask8(mask, offset, m);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, src + i, 8);
        w ^= m64;
        memcpy(dst + i, &w, 8);
    }
    for (; i < len; i++)
        dst[i] = src[i] ^ m[i & 7];
}

void ws_mask(uint8_t *data, size_t len, const uint8_t mask[4], size_t offset)
{
    ws_mask_copy(data, data, len, mask, offset);   /* in place: each word is read first */
}
