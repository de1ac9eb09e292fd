/*
 * buf.c — the growing text buffer (base_buf): appends that never fail
 * loudly, one oom flag to check at the end; and the growing array
 * (base_grow).
 */
#include "base/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool base_buf_reserve(base_buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->oom = true;
        return false;
    }
    if (b->s && b->len + extra + 1 <= b->cap)
        return true;
    size_t n = b->cap ? b->cap : 256;
    while (n < b->len + extra + 1)
        n *= 2;
    char *np = realloc(b->s, n);
    if (!np) {
        b->oom = true;
        return false;
    }
    b->s = np;
    b->cap = n;
    b->s[b->len] = 0;
    return true;
}

void base_buf_put(base_buf *b, const char *s, size_t n)
{
    if (!base_buf_reserve(b, n))
        return;
    if (n)
        memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void base_buf_puts(base_buf *b, const char *s) { base_buf_put(b, s, strlen(s)); }

void base_buf_putc(base_buf *b, char c) { base_buf_put(b, &c, 1); }

void base_buf_vprintf(base_buf *b, const char *fmt, va_list ap)
{
    if (b->oom)
        return;
    char tmp[256];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    if (n >= 0 && (size_t)n < sizeof tmp) {
        base_buf_put(b, tmp, (size_t)n);
    } else if (n >= 0 && base_buf_reserve(b, (size_t)n)) {
        vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void base_buf_printf(base_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *base_buf_take(base_buf *b, size_t *len)
{
    char *s = NULL;
    if (!b->oom && base_buf_reserve(b, 0)) {
        s = b->s;
        if (len)
            *len = b->len;
        b->s = NULL;
    }
    base_buf_free(b);
    return s;
}

void *base_grow(void *arr, size_t need, size_t *cap, size_t size, size_t first)
{
    if (arr && need <= *cap)
        return arr;
    size_t n = *cap ? *cap : first ? first : 1;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *na = realloc(arr, n * size);
    if (!na)
        return NULL;
    *cap = n;
    return na;
}

void base_buf_free(base_buf *b)
{
    if (!b)
        return;
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

char *base_strdup(const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void base_buf_put_html(base_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': base_buf_puts(b, "&lt;"); break;
        case '>': base_buf_puts(b, "&gt;"); break;
        case '&': base_buf_puts(b, "&amp;"); break;
        case '"': base_buf_puts(b, "&quot;"); break;
        case '\'': base_buf_puts(b, "&#39;"); break;
        default: base_buf_putc(b, *s);
        }
    }
}
