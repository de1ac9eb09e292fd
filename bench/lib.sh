# lib.sh — what bench/run.sh (make bench) and bench/smoke.sh (make
# bench-smoke) share; sourced by both, from the checkout root, with BUILD
# and CC set.
#
#   bench_cc OUT SRC [EXTRA...]   compile a benchmark program SRC with its
#                                 helpers (bench/benchlib.c) against the
#                                 library into OUT; BENCH_CFLAGS first.
#   bench_serve SITE OUTDIR       serve SITE with bench/serve.mjs on
#                                 127.0.0.1; BENCH_SRV gets its pid and
#                                 BENCH_PORT its port (OUTDIR/serve.port,
#                                 serve.err); 1 when it did not start
#                                 within about 5 s. Stop it by its pid
#                                 (bench_serve_stop).

BENCH_CFLAGS=${BENCH_CFLAGS:-"-std=c11 -O2 -D_POSIX_C_SOURCE=200809L -I."}

bench_cc() {
    bench_out=$1 bench_src=$2
    shift 2
    # shellcheck disable=SC2086
    $CC $BENCH_CFLAGS -o "$bench_out" "$bench_src" bench/benchlib.c "$@" \
        "$BUILD/libcdpgate.a" -lm
}

bench_serve() {
    node bench/serve.mjs "$1" >"$2/serve.port" 2>"$2/serve.err" &
    BENCH_SRV=$!
    BENCH_PORT=""
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        BENCH_PORT=$(head -n 1 "$2/serve.port" 2>/dev/null)
        [ -n "$BENCH_PORT" ] && return 0
        sleep 0.25
    done
    return 1
}

bench_serve_stop() {
    kill "$BENCH_SRV" 2>/dev/null
    wait "$BENCH_SRV" 2>/dev/null
}
