#!/bin/sh
# json_bench.sh — parse/serialise throughput of cdpgate's json module against
# cJSON and jansson (and yyjson as a ceiling when available).
#
#   sh bench/json_bench.sh [file.json ...]
#
# Without arguments it runs on $BUILD/bench/*.json (real CDP responses
# captured from Chromium, e.g. Accessibility.getFullAXTree and
# Page.captureScreenshot). Figures are printed, never asserted.
#
# Peers: Debian's libcjson-dev and libjansson-dev, installed with apt-get
# when missing. yyjson is not packaged in Debian bookworm: set YYJSON_DIR to
# a directory holding yyjson.c and yyjson.h (or install libyyjson-dev where
# it exists) to add it. The peers are linked into the benchmark only, never
# into the product.
#
# Environment: BUILD (default build), CC (default cc), RUNS (samples per
# figure, default 7), YYJSON_DIR, JSON_BENCH_CLOCK (cpu: thread CPU time
# instead of wall time, for a loaded machine).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CC=${CC:-cc}
RUNS=${RUNS:-7}

have_hdr() { [ -f "/usr/include/$1" ]; }
if ! have_hdr cjson/cJSON.h || ! have_hdr jansson.h; then
    echo "json_bench: installing libcjson-dev and libjansson-dev" >&2
    apt-get install -y libcjson-dev libjansson-dev >/dev/null 2>&1 ||
        { apt-get update >/dev/null && apt-get install -y libcjson-dev libjansson-dev >/dev/null; }
fi

make -s BUILD="$BUILD" "$BUILD/libcdpgate.a"
if ! nm "$BUILD/libcdpgate.a" 2>/dev/null | grep -q ' T json_parse$'; then
    echo "json_bench: $BUILD/libcdpgate.a has no json module" >&2
    exit 1
fi

out="$BUILD/bench"
mkdir -p "$out"
flags="-std=c11 -O2 -D_POSIX_C_SOURCE=200809L -I. -Wall -Wextra"
yy_src=""
yy_flags=""
if [ -n "${YYJSON_DIR:-}" ] && [ -f "$YYJSON_DIR/yyjson.c" ]; then
    yy_src="$YYJSON_DIR/yyjson.c"
    yy_flags="-DHAVE_YYJSON -I$YYJSON_DIR"
elif have_hdr yyjson.h; then
    yy_flags="-DHAVE_YYJSON"
    yy_src="-lyyjson"
fi
# jansson and cdpgate both define json_type: the jansson wrappers are a
# separate translation unit of the same file.
$CC $flags -DJB_JANSSON_UNIT -c -o "$out/json_bench_jansson.o" bench/json_bench.c
# shellcheck disable=SC2086
$CC $flags $yy_flags -o "$out/json_bench" bench/json_bench.c bench/benchlib.c \
    "$out/json_bench_jansson.o" $yy_src "$BUILD/libcdpgate.a" -lcjson -ljansson -lm

if [ $# -eq 0 ]; then
    set -- "$out"/*.json
    if [ ! -f "$1" ]; then
        echo "json_bench: no input files; pass some, or capture CDP responses into $out/" >&2
        exit 1
    fi
fi
"$out/json_bench" -n "$RUNS" "$@"
