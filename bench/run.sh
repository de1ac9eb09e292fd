#!/bin/sh
# `make bench`: figures printed side by side with peers measured in the same
# run; nothing is asserted (this machine is shared and noisy).
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.." || exit 1
sh tests/setup.sh || exit 1
mkdir -p "$BUILD/bench"
CC=${CC:-cc}
$CC -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -I. -o "$BUILD/bench/cdp_bench" \
    bench/cdp_bench.c tests/fixture.c "$BUILD/libcdpgate.a" || exit 1
echo "== cdpgate $(./$BUILD/cdpgate --version | cut -d' ' -f2), $(nproc) cores, $(date -u +%F)"
"$BUILD/bench/cdp_bench" "$BUILD/cdpgate" "$BUILD/bench" "${BENCH_N:-2000}" || exit 1
echo
if [ -f bench/json_bench.sh ]; then
    BUILD=$BUILD sh bench/json_bench.sh "$BUILD/bench/axtree.json" "$BUILD/bench/screenshot.json"
fi
