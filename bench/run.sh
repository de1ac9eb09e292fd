#!/bin/sh
# `make bench`: figures printed side by side with peers measured in the same
# run; nothing is asserted (this machine is shared and noisy).
# BENCH=load (`make bench BENCH=load`): only the page loads with a
# privileged context's egress rule off and on (load_bench), nothing else.
set -u
BUILD=${BUILD:-build}
BENCH=${BENCH:-all}
case $BENCH in
all|load) ;;
*) echo "bench: BENCH=$BENCH: want all or load" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.." || exit 1
sh tests/setup.sh || exit 1
mkdir -p "$BUILD/bench"
CC=${CC:-cc}
. bench/lib.sh
if [ "$BENCH" = load ]; then
    echo "== cdpgate $(./$BUILD/cdpgate --version | cut -d' ' -f2), $(nproc) cores," \
        "$(date -u +%F), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
else
bench_cc "$BUILD/bench/cdp_bench" bench/cdp_bench.c tests/fixture.c || exit 1
echo "== cdpgate $(./$BUILD/cdpgate --version | cut -d' ' -f2), $(nproc) cores, $(date -u +%F)"
"$BUILD/bench/cdp_bench" "$BUILD/cdpgate" "$BUILD/bench" "${BENCH_N:-2000}" || exit 1
echo
if [ -f bench/json_bench.sh ]; then
    BUILD=$BUILD sh bench/json_bench.sh "$BUILD/bench/axtree.json" "$BUILD/bench/screenshot.json"
fi
echo
# vault: AES-GCM backends side by side; raw OpenSSL EVP as a peer when libcrypto links.
bench_cc "$BUILD/bench/vault_bench" bench/vault_bench.c -DVAULT_BENCH_EVP -lcrypto 2>/dev/null ||
    bench_cc "$BUILD/bench/vault_bench" bench/vault_bench.c || exit 1
"$BUILD/bench/vault_bench" "${BENCH_VAULT_MIB:-64}" || exit 1
echo; bench_cc "$BUILD/bench/gate_bench" bench/gate_bench.c &&
    "$BUILD/bench/gate_bench" "$BUILD/bench" || exit 1
# Record and replay (issue 14, point 7): the price-watch task live through
# `cdpgate mcp` (tool calls counted) beside `cdpgate replay` (zero calls),
# and replay_run against the same actions' own times.
echo; if bench_cc "$BUILD/bench/replay_bench" bench/replay_bench.c tests/fixture.c; then
    timeout 900 "$BUILD/bench/replay_bench" "$BUILD/cdpgate" "$BUILD/bench" \
        "${BENCH_REPLAY_N:-5}" || echo "replay_bench failed (its stderr above)"
else
    echo "replay_bench does not build"
fi
# The live view (issue 15, point 6): input latency, frames per second and
# frame latency on an animated 1280x720 page, bytes per frame against
# base64 in JSON, resident size streaming against idle.
echo; if bench_cc "$BUILD/bench/live_bench" bench/live_bench.c tests/fixture.c; then
    timeout 300 "$BUILD/bench/live_bench" "$BUILD/bench" "${BENCH_LIVE_N:-100}" ||
        echo "live_bench failed (its stderr above)"
else
    echo "live_bench does not build"
fi
fi

# ---- Agent-facing figures (issue 3 part 6): cdpgate beside playwright-core
# and @playwright/mcp on real third-party pages, in this same run. Pages and
# peers: bench/pages.sh; served by bench/serve.mjs on 127.0.0.1 (stopped by
# pid below); tables: bench/compare.mjs. BENCH_AGENT=0 skips this part.
[ "${BENCH_AGENT:-1}" = 0 ] && [ "$BENCH" = all ] && exit 0
echo
echo "== Agent benchmarks: setting up pages and peers"
sh bench/pages.sh "$BUILD" || { echo "bench: pages not ready, agent benchmarks skipped"; exit 0; }
R="$BUILD/bench/results"
rm -rf "$R"
mkdir -p "$R/snap"
bench_serve "$BUILD/bench/site" "$R"
trap 'kill $BENCH_SRV 2>/dev/null' EXIT INT TERM
[ -n "$BENCH_PORT" ] || { echo "bench: static server did not start: $(cat "$R/serve.err")"; exit 0; }
BASE="http://127.0.0.1:$BENCH_PORT"

# cdpgate's library (snap_click / snap_type / snap_observe), linked like cdp_bench.
set --
while IFS= read -r spec; do [ -n "$spec" ] && set -- "$@" "$spec"; done <<PAGES
$(node --input-type=module -e "import { PAGES } from './bench/common.mjs';
console.log(PAGES.map((p) => p.id + '=' + p.path + (p.ready ? '=' + p.ready : '')).join('\n'));")
PAGES
if [ "$BENCH" = load ]; then
    :
elif bench_cc "$BUILD/bench/act_bench" bench/act_bench.c 2>"$R/act_bench.build.txt"; then
    echo "  cdpgate library (act_bench)"
    BENCH_SNAP_DIR="$R/snap" timeout 240 "$BUILD/bench/act_bench" "$BASE" "$R/act.json" \
        "${BENCH_ACT_N:-50}" "$@" 2>"$R/act_bench.err.txt" ||
        echo "  act_bench failed: $(tail -n 2 "$R/act_bench.err.txt")"
else
    echo "  cdpgate library: act_bench does not build yet ($(grep -m1 -E 'error|undefined' \
        "$R/act_bench.build.txt" | cut -c1-120))"
fi
# Page loads with a privileged context's egress rule off and on (issue 11,
# point 17): printed after the tables below.
if bench_cc "$BUILD/bench/load_bench" bench/load_bench.c 2>"$R/load_bench.build.txt"; then
    echo "  cdpgate library, privileged context's egress rule (load_bench)"
    timeout 400 "$BUILD/bench/load_bench" "$BASE" "${BENCH_LOAD_N:-7}" "$@" \
        >"$R/load.txt" 2>"$R/load_bench.err.txt" ||
        echo "load_bench failed: $(tail -n 2 "$R/load_bench.err.txt")" >>"$R/load.txt"
else
    echo "load_bench does not build ($(grep -m1 -E 'error|undefined' \
        "$R/load_bench.build.txt" | cut -c1-120))" >"$R/load.txt"
fi
if [ "$BENCH" = load ]; then
    echo
    cat "$R/load.txt"
    bench_serve_stop
    trap - EXIT INT TERM
    exit 0
fi
echo "  playwright-core and @playwright/mcp (pw_bench.mjs)"
BENCH_ACT_N=${BENCH_ACT_N:-50} timeout 900 node bench/pw_bench.mjs "$BASE" "$R/pw.json" \
    "$R/snap" 2>"$R/pw_bench.err.txt" ||
    echo "  pw_bench failed: $(tail -n 3 "$R/pw_bench.err.txt")"
echo "  cdpgate mcp (mcp_bench.mjs)"
CDPGATE_BIN="$BUILD/cdpgate" timeout 900 node bench/mcp_bench.mjs "$BASE" "$R/cdpgate.json" \
    "$R/snap" 2>"$R/mcp_bench.err.txt" ||
    echo "  mcp_bench failed: $(tail -n 3 "$R/mcp_bench.err.txt")"
# The static build (make STATIC=1, musl) measured the same way: what a
# one-file deployment costs. musl-gcc comes from Debian's musl-tools.
if ! command -v musl-gcc >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y musl-tools >"$R/musl-install.txt" 2>&1 || true
fi
if make -j2 STATIC=1 BUILD=build-static all >"$R/static-build.txt" 2>&1; then
    echo "  cdpgate mcp, static build (mcp_bench.mjs)"
    CDPGATE_BIN=build-static/cdpgate BENCH_COLD_N=0 timeout 600 node bench/mcp_bench.mjs "$BASE" \
        "$R/cdpgate-static.json" 2>"$R/mcp_bench_static.err.txt" ||
        echo "  mcp_bench (static) failed: $(tail -n 3 "$R/mcp_bench_static.err.txt")"
else
    printf '{"unavailable":"make STATIC=1 failed: %s"}\n' \
        "$(grep -m1 -iE 'error|not found' "$R/static-build.txt" | tr -d '"\\' | cut -c1-120)" \
        >"$R/cdpgate-static.json"
fi
node bench/compare.mjs "$R"
echo
cat "$R/load.txt"
# Accessibility scans (issue 16, point 5): cdpgate beside @axe-core/playwright,
# same axe-core file and tags: the real pages here, the fixture pages (a
# cross-origin frame, a strict CSP, a sabotaged page) from a second server.
echo
A11Y_SRV=$BENCH_SRV
mkdir -p "$R/a11y"
if bench_serve tests/fixtures "$R/a11y"; then
    a="http://a.test:$BENCH_PORT/a11y"
    BASE_A=$(echo "$BASE" | sed 's/127.0.0.1/a.test/')
    timeout 1800 node bench/a11y_bench.mjs "$BUILD/cdpgate" "$R/a11y.json" \
        frames="$a/index.html" csp="$a/csp.html" sabotage="$a/sabotage.html" \
        todomvc="$BASE_A/todomvc/examples/vanillajs/index.html" \
        swagger="$BASE_A/swagger/index.html" postgres="$BASE_A/postgres/sql-select.html" \
        python="$BASE_A/python/library/stdtypes.html" \
        debref="$BASE_A/debref/ch02.en.html" || echo "  a11y_bench failed"
    # The sweep (issue 16, point 4): 10 targets, --jobs 2 vs one after another.
    timeout 1800 node bench/sweep_bench.mjs "$BUILD/cdpgate" "$R/sweep.json" 10 \
        "$a/index.html" "$a/csp.html" "$a/sabotage.html" || echo "  sweep_bench failed"
    # ... and over the five real pages twice (the work of a real sweep: one
    # target's axe run keeps a renderer busy, not the browser's fixed costs).
    echo "  the same over the real pages:"
    timeout 1800 node bench/sweep_bench.mjs "$BUILD/cdpgate" "$R/sweep-real.json" 10 \
        "$BASE_A/todomvc/examples/vanillajs/index.html" "$BASE_A/swagger/index.html" \
        "$BASE_A/postgres/sql-select.html" "$BASE_A/debref/ch02.en.html" \
        "$BASE_A/python/library/stdtypes.html" || echo "  sweep_bench (real pages) failed"
    bench_serve_stop
fi
BENCH_SRV=$A11Y_SRV
bench_serve_stop
trap - EXIT INT TERM
echo "(raw figures: $R/*.json; snapshot texts: $R/snap/)"
exit 0
