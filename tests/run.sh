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
# The programs run JOBS at a time (TEST_JOBS, default 1: one at a time;
# TEST_JOBS=2 runs two at once, which most Chromium programs leave room
# for, being mostly waits on the browser, until it is shown to add no
# flakes to tests with timed windows), the slowest first (SLOW, the
# session-19 figures, longest first) so that the last to start are the
# short ones; each program's output is printed whole when it ends, in the
# order they end.
JOBS=${TEST_JOBS:-1}
case "$JOBS" in ''|*[!0-9]*|0) JOBS=1;; esac
SLOW="test_gate_accept test_replay_change test_snapshot test_mcp test_login test_sweep
test_takeover test_actions test_live test_replay_play test_record test_a11y test_evidence
test_walker test_cdp test_vault test_a11y_scrub test_replay test_replay_match test_ws"
jobs_dir=$(mktemp -d)
all0=$(date +%s)
# The programs to run, slowest first. TESTS="test_json test_ws ...": only
# these programs (make valgrind in CI).
progs=
for t in $(for s in $SLOW; do echo "$BUILD/tests/$s"; done) "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.d|*.o) continue;; esac
    n=$(basename "$t")
    case " $progs " in *" $n "*) continue;; esac
    if [ -n "${TESTS:-}" ]; then
        case " $TESTS " in *" $n "*) ;; *) continue;; esac
    fi
    progs="$progs $n"
done
# start NAME: runs the program in the background; NAME.rc appears (whole,
# by a rename) when it ended, with its exit status, next to its output,
# its stderr and its wall time.
start() {
    (
        t0=$(date +%s)
        ${VALGRIND:-} "$BUILD/tests/$1" >"$jobs_dir/$1.out" 2>"$jobs_dir/$1.err"
        rc=$?
        echo $(($(date +%s) - t0)) >"$jobs_dir/$1.time"
        echo $rc >"$jobs_dir/$1.rc.part"
        mv "$jobs_dir/$1.rc.part" "$jobs_dir/$1.rc"
    ) &
}
# finish NAME: prints the output of the program that ended and counts it.
finish() {
    rc=$(cat "$jobs_dir/$1.rc")
    cat "$jobs_dir/$1.out"
    if [ "$rc" -ne 0 ]; then
        grep -v '^test_[a-z_]*: ' "$jobs_dir/$1.err" | tail -n 80
    fi
    tally "$jobs_dir/$1.out" "$1" "$rc"
    # Where the suite's time goes (CI has a budget): the program's wall
    # time, and its cases that took 10 s or more (tests/harness.c).
    echo "  time: $1 $(cat "$jobs_dir/$1.time") s"
    grep '^  slow case: ' "$jobs_dir/$1.err" | head -n 20
}
# reap: finishes every running program that ended; nrunning is what is left.
running= nrunning=0
reap() {
    left= nrunning=0
    for r_n in $running; do
        if [ -f "$jobs_dir/$r_n.rc" ]; then
            finish "$r_n"
        else
            left="$left $r_n" nrunning=$((nrunning + 1))
        fi
    done
    running=$left
}
nap() { sleep 0.2 2>/dev/null || sleep 1; }
for prog in $progs; do
    reap
    while [ "$nrunning" -ge "$JOBS" ]; do
        nap
        reap
    done
    start "$prog"
    running="$running $prog" nrunning=$((nrunning + 1))
done
while [ "$nrunning" -gt 0 ]; do
    nap
    reap
done
wait
rm -rf "$jobs_dir"
echo "  time: all test programs $(($(date +%s) - all0)) s, $JOBS at a time"
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
