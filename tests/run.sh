#!/bin/sh
# Runs every test program in $BUILD/tests, then replays each fuzz target's
# checked-in corpus, and prints one closing line "N passed, N failed".
# Called by `make test` and `make valgrind`; BUILD is build/ or build-san/.
#
# Any fault fails the run:
#   - a program that exits non-zero, even after printing its summary
#     (LeakSanitizer's report at exit, valgrind's --error-exitcode, a
#     crashing fuzz-corpus replay, a failed check);
#   - a program whose last line is not its summary "prog: N passed, N failed"
#     (it crashed, hung up or printed after the summary);
#   - a test case that made no check (tests/harness.c fails it).
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.." || exit 1
export CDPGATE_BIN="$BUILD/cdpgate"
passed=0 failed=0 skipped=0
# tally FILE NAME RC: adds the summary line of NAME's output; a missing
# summary or a non-zero exit status is one more failure.
tally() {
    line=$(tail -n 1 "$1")
    if ! echo "$line" | grep -qE "^$2: [0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$"; then
        echo "$2: FAIL: no summary line (crashed or exited $3 before it)"
        failed=$((failed + 1))
        return
    fi
    p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
    f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    skipped=$((skipped + ${s:-0}))
    if [ "$3" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
        echo "$2: FAIL: exited $3 after its summary (sanitizer, leak or valgrind report?)"
        failed=$((failed + 1))
    fi
}
out=$(mktemp)
# TESTS="test_json test_ws ...": only these programs (make valgrind in CI).
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.d|*.o) continue;; esac
    if [ -n "${TESTS:-}" ]; then
        case " $TESTS " in *" $(basename "$t") "*) ;; *) continue;; esac
    fi
    t0=$(date +%s)
    ${VALGRIND:-} "$t" >"$out" 2>"$out.err"
    rc=$?
    cat "$out"
    if [ $rc -ne 0 ]; then
        grep -v '^test_[a-z_]*: ' "$out.err" | tail -n 80
    fi
    tally "$out" "$(basename "$t")" $rc
    # Where the suite's time goes (CI has a budget): the program's wall
    # time, and its cases that took 10 s or more (tests/harness.c).
    echo "  time: $(basename "$t") $(($(date +%s) - t0)) s"
    grep '^  slow case: ' "$out.err" | head -n 20
done
# The checks of the tree and of this runner; not when tests/checkrun.sh
# runs this script on its planted faults.
if [ -z "${CDPGATE_RUN_INNER:-}" ]; then
    # One chokepoint for state-changing CDP commands (tests/checksink.sh).
    sh tests/checksink.sh >"$out" 2>&1
    rc=$?
    cat "$out"
    tally "$out" checksink $rc
    # This runner fails on every planted fault (tests/checkrun.sh).
    BUILD="$BUILD" sh tests/checkrun.sh >"$out" 2>&1
    rc=$?
    cat "$out"
    tally "$out" checkrun $rc
fi
for r in "$BUILD"/fuzz/replay_*; do
    [ -x "$r" ] || continue
    case "$r" in *.d) continue;; esac
    name=${r##*/replay_}
    ${VALGRIND:-} "$r" tests/fuzz/corpus/"$name" >"$out" 2>"$out.err"
    rc=$?
    cat "$out"
    [ $rc -ne 0 ] && tail -n 60 "$out.err"
    tally "$out" "replay_$name" $rc
done
rm -f "$out" "$out.err"
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
