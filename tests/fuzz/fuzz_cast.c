/*
 * fuzz_cast.c — libFuzzer target for the screencast's one parser of
 * outside input (the browser's frames): snap_cast_jpeg_size, which reads
 * a JPEG's width and height from its SOF marker (also replayed over the
 * checked-in corpus by tests/fuzz/replay.c in `make test`). It must stay
 * within the input and, when it succeeds, give a size above 0 that the
 * input's bytes hold.
 */
#include "snapshot/snapshot.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes: ASan sees any read past them */
    uint8_t *p = malloc(size ? size : 1);
    if (!p)
        return 0;
    for (size_t i = 0; i < size; i++)
        p[i] = data[i];
    int w = -1, h = -1;
    if (snap_cast_jpeg_size(p, size, &w, &h) == 0) {
        CHECK(w > 0 && h > 0 && w <= 65535 && h <= 65535);
        CHECK(size >= 11 && p[0] == 0xff && p[1] == 0xd8);
    }
    free(p);
    return 0;
}
