#!/bin/sh
# smoke.sh — every benchmark program built and run once, quickly
# (BENCH_QUICK=1, small counts): seconds each on a quiet machine (deadlines
# are minutes: CI shares its machine), figures printed, nothing
# asserted on speed. A benchmark that no longer builds, crashes, exits
# non-zero or records an error fails the smoke (exit 1), so it cannot rot
# unnoticed. Run by .ci/run and `make bench-smoke`; `make bench` is the real
# measurement (needs the bench peers and a quiet machine).
#
#   cdp_bench     50 round trips, 3 driver starts (node's ws client from
#                 tests/peers, as in make bench)
#   json_bench    on the two CDP responses cdp_bench captured, 1 sample
#                 (cJSON and jansson from apt, installed when missing, as
#                 bench/json_bench.sh does)
#   vault_bench   1 MiB per backend
#   gate_bench    BENCH_QUICK: 5 batches of a hundredth of the calls
#   replay_bench  the price-watch task once live through cdpgate mcp, once
#                 by cdpgate replay, once in the library (the fixture server)
#   live_bench    the live view: 3 s of frames, 10 input samples
#   act_bench     3 clicks and types, the generated pages (dense, long)
#   load_bench    one load of the generated dense page, egress rule off/on
#   mcp_bench.mjs `cdpgate mcp` on the generated pages, 1 run each
#   compare.mjs   the tables of the two above
#   a11y_bench.mjs the accessibility scan on the fixture pages, once each
#   sweep_bench.mjs a sweep of 4 targets, --jobs 2 vs one after another
# The third-party pages and the peers' side (pw_bench.mjs: playwright-core
# and @playwright/mcp, bench/peers from npm) are not run here: without
# bench/peers installed, mcp_bench.mjs takes the MCP client from tests/peers
# and estimates tokens (bench/peers/deps.mjs), and compare.mjs shows '-' for
# the peers.
#
#   sh bench/smoke.sh          (BUILD=build; needs make all and tests/setup.sh)
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
cd "$(dirname "$0")/.." || exit 1
export BENCH_QUICK=1
out="$BUILD/bench-smoke"
rm -rf "$out"
mkdir -p "$out"
bad=0
fail() { echo "bench smoke: FAIL: $*"; bad=1; }
BENCH_CFLAGS="-std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -I."
. bench/lib.sh

# build NAME EXTRA...: bench/NAME.c against the library, into $out/NAME.
build() {
    n=$1; shift
    bench_cc "$out/$n" "bench/$n.c" "$@" || { fail "$n does not build"; return 1; }
}
# run NAME SECONDS CMD...: runs it with a deadline, output shown; non-zero fails.
run() {
    n=$1 s=$2; shift 2
    echo "== $n"
    timeout "$s" "$@" || fail "$n exited $?"
}

if build cdp_bench tests/fixture.c; then
    run cdp_bench 300 "$out/cdp_bench" "$BUILD/cdpgate" "$out" 50
fi
if [ -f "$out/axtree.json" ] && [ -f "$out/screenshot.json" ]; then
    echo "== json_bench"
    RUNS=1 BUILD="$BUILD" timeout 300 sh bench/json_bench.sh "$out/axtree.json" \
        "$out/screenshot.json" || fail "json_bench exited $?"
else
    fail "json_bench: cdp_bench captured no input"
fi
build vault_bench && run vault_bench 60 "$out/vault_bench" 1
build gate_bench && run gate_bench 60 "$out/gate_bench" "$out"
if build replay_bench tests/fixture.c; then
    run replay_bench 300 "$out/replay_bench" "$BUILD/cdpgate" "$out" 1
fi
if build live_bench tests/fixture.c; then
    run live_bench 300 "$out/live_bench" "$out" 10
fi

# The generated pages, served on loopback (the server is stopped by its pid).
site="$out/site"
node bench/gen_site.mjs "$site/gen" >/dev/null || fail "gen_site.mjs"
bench_serve "$site" "$out"
trap 'kill $BENCH_SRV 2>/dev/null' EXIT INT TERM
if [ -z "$BENCH_PORT" ]; then
    fail "serve.mjs did not start: $(cat "$out/serve.err")"
else
    base="http://127.0.0.1:$BENCH_PORT"
    R="$out/results"
    mkdir -p "$R"
    if build act_bench; then
        run act_bench 300 "$out/act_bench" "$base" "$R/act.json" 3 dense=/gen/dense.html \
            long=/gen/long.html
        cat "$R/act.json" 2>/dev/null
        grep -q '"error"' "$R/act.json" 2>/dev/null && fail "act_bench recorded an error"
    fi
    if build load_bench; then
        run load_bench 300 "$out/load_bench" "$base" 1 dense=/gen/dense.html \
            >"$out/load.txt"
        cat "$out/load.txt"
        grep -q 'failed\|not auth=' "$out/load.txt" && fail "load_bench: a load failed"
        grep -q 'dense' "$out/load.txt" || fail "load_bench printed no figure"
    fi
    echo "== mcp_bench.mjs"
    BENCH_PAGES=dense,long BENCH_START_N=1 BENCH_MCP_ACT_N=1 BENCH_SNAP_N=1 \
        BENCH_COLD_ALL=1 BENCH_COLD_N=1 \
        CDPGATE_BIN="$BUILD/cdpgate" timeout 240 node bench/mcp_bench.mjs "$base" \
        "$R/cdpgate.json" 2>"$out/mcp_bench.err" || fail "mcp_bench.mjs exited $?"
    node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        const e = r.unavailable ? [r.unavailable] : (r.mcp && r.mcp.errors) || ["no figures"];
        if (e.length) { console.log("mcp_bench errors: " + e.join("; ")); process.exit(1); }' \
        "$R/cdpgate.json" || fail "mcp_bench.mjs recorded an error ($(tail -n 2 "$out/mcp_bench.err"))"
    echo "== compare.mjs (no peers measured: their columns are '-')"
    BENCH_PAGES=dense,long timeout 60 node bench/compare.mjs "$R" || fail "compare.mjs exited $?"
fi
bench_serve_stop
trap - EXIT INT TERM

# The accessibility scan (issue 16, point 5) on the fixture pages, one run
# each; beside @axe-core/playwright only when bench/peers is installed.
mkdir -p "$out/a11y"
if bench_serve tests/fixtures "$out/a11y"; then
    trap 'kill $BENCH_SRV 2>/dev/null' EXIT INT TERM
    a="http://a.test:$BENCH_PORT/a11y"
    echo "== a11y_bench.mjs"
    timeout 300 node bench/a11y_bench.mjs "$BUILD/cdpgate" "$out/a11y/a11y.json" \
        frames="$a/index.html" csp="$a/csp.html" sabotage="$a/sabotage.html" ||
        fail "a11y_bench.mjs exited $?"
    echo "== sweep_bench.mjs"
    timeout 600 node bench/sweep_bench.mjs "$BUILD/cdpgate" "$out/a11y/sweep.json" 4 \
        "$a/csp.html" "$a/sabotage.html" || fail "sweep_bench.mjs exited $?"
    bench_serve_stop
    trap - EXIT INT TERM
else
    fail "a11y_bench: serve.mjs did not start"
fi

if [ $bad -eq 0 ]; then
    echo "bench smoke: every benchmark ran (figures above are rough: BENCH_QUICK)"
fi
exit $bad
