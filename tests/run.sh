#!/bin/sh
# Runs every test program in $BUILD/tests, then replays each fuzz target's
# checked-in corpus, and prints one closing line "N passed, N failed".
# Called by `make test`; BUILD is build/ or build-san/.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.." || exit 1
export CDPGATE_BIN="$BUILD/cdpgate"
passed=0 failed=0 skipped=0
tally() {
    # The last line of each program is "prog: N passed, N failed[, N skipped]".
    line=$(tail -n 1 "$1")
    p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
    f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    skipped=$((skipped + ${s:-0}))
}
out=$(mktemp)
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.d|*.o) continue;; esac
    ${VALGRIND:-} "$t" >"$out" 2>"$out.err"
    rc=$?
    cat "$out"
    if [ $rc -ne 0 ]; then
        cat "$out.err" | grep -v '^test_[a-z_]*: ' | tail -n 60
        if ! grep -q 'passed' "$out"; then
            echo "$(basename "$t"): crashed or exited $rc before its summary"
            failed=$((failed + 1))
        fi
    fi
    tally "$out"
done
# One chokepoint for state-changing CDP commands (tests/checksink.sh).
sh tests/checksink.sh >"$out" 2>&1
cat "$out"
tally "$out"
for r in "$BUILD"/fuzz/replay_*; do
    [ -x "$r" ] || continue
    case "$r" in *.d) continue;; esac
    name=${r##*/replay_}
    ${VALGRIND:-} "$r" tests/fuzz/corpus/"$name" >"$out" 2>"$out.err"
    rc=$?
    cat "$out"
    [ $rc -ne 0 ] && tail -n 40 "$out.err"
    tally "$out"
done
rm -f "$out" "$out.err"
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
