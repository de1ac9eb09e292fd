/*
 * fuzz_json_stream.c — libFuzzer target for the push tokenizer (also
 * replayed over the checked-in corpus by tests/fuzz/replay.c in `make test`).
 *
 * The first two bytes choose how the rest is fed: byte 0 the size of the
 * first piece, byte 1 the size of the following ones (low nibble, 0 = all
 * at once) and max_string (high nibble, 0 = the default). The stream must
 * agree with json_parse on the rest: same outcome, same error code and
 * offset, and the same values (tests/json_canon.h). The whole input is also
 * compared fed at once and a byte at a time, and with a skipping callback
 * (JSON_STREAM_SKIP on every KEY/BEGIN, or on every second or third one,
 * chosen by the last byte): skipping must not change what is accepted or
 * rejected, nor any error code or offset.
 */
#include "json/json.h"
#include "tests/json_canon.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (canon_compare(data, size, 0, 0, 64, 0) != 0)
        abort();
    if (size) {
        unsigned period = 1 + data[size - 1] % 3, phase = (data[size - 1] >> 2) % period;
        if (canon_compare_skip(data, size, 0, 0, 64, 0, period, phase) != 0 ||
            (size <= 4096 && canon_compare_skip(data, size, 0, 1, 64, 0, period, phase) != 0))
            abort();
    }
    if (size > 4096)
        return 0;
    if (canon_compare(data, size, 0, 1, 64, 3) != 0)
        abort();
    if (size < 2)
        return 0;
    size_t first = data[0], piece = data[1] & 15, ms = data[1] >> 4;
    if (canon_compare(data + 2, size - 2, first, piece, 64, ms) != 0)
        abort();
    return 0;
}
