/*
 * fuzz_cookies.c — libFuzzer target for the hand-back account's count of
 * the cookies set during a takeover (snap_human_cookies_new, red team s17,
 * R7-4): "domain name" lines the browser gives (a name is any text a page
 * sets) before and after, counted by site. The input is the two lists, cut
 * at its first NUL byte. The count must stay within its buffer, be NUL
 * terminated, and hold no character a site, a count or cdpgate's own words
 * do not: never a byte of a cookie's name. (Also replayed over the
 * checked-in corpus by tests/fuzz/replay.c in `make test`.)
 */
#include "snapshot/snapshot.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void run(const char *before, const char *now, size_t cap)
{
    char *out = malloc(cap + 1);
    if (!out)
        return;
    out[cap] = 0x5a;                /* a guard byte past the buffer */
    snap_human_cookies_new(before, now, out, cap);
    CHECK(out[cap] == 0x5a);
    size_t n = strnlen(out, cap);
    CHECK(n < cap);
    for (size_t i = 0; i < n; i++) {
        char c = out[i];
        CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '_' || c == ':' || c == ' ' || c == ',' || c == '[' || c == ']');
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *p = malloc(size + 1);
    if (!p)
        return 0;
    memcpy(p, data, size);
    p[size] = 0;
    const char *before = p, *now = p + strlen(p) + (strlen(p) < size ? 1 : 0);
    run(before, now, 1200);
    run(before, now, 24);
    run(NULL, now, 200);
    free(p);
    return 0;
}
