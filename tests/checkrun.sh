#!/bin/sh
# The test runner fails on every fault (issue 11, point 11), run by
# tests/run.sh. Each case plants one fault in a scratch build directory and
# runs tests/run.sh over it; the run must fail (exit non-zero, a failure in
# its closing line). A clean planted program must pass, so the checker
# cannot pass by failing everything.
#   1. a program that prints "0 failed" and then exits non-zero (what
#      LeakSanitizer or valgrind --error-exitcode do after the summary)
#   2. a program that dies before its summary line
#   3. a program that prints nothing
#   4. a fuzz replay that exits non-zero after its summary
#   5. a harness test case that makes no check ($BUILD/tests/probe_nocheck,
#      built from tests/probe_nocheck.c with the real harness), and one
#      whose checks pass but that prints a failure's detail
#   6. control: a program that passes, and exits 0, must pass
# Prints "checkrun: N passed, N failed" like the test programs.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
tmp=$(mktemp -d)
passed=0 failed=0

# plant NAME KIND SCRIPT: a scratch build dir whose only program is SCRIPT.
plant() {
    rm -rf "$tmp/b"
    mkdir -p "$tmp/b/tests" "$tmp/b/fuzz"
    case "$2" in
    test) f="$tmp/b/tests/$1";;
    fuzz) f="$tmp/b/fuzz/$1";;
    esac
    printf '#!/bin/sh\n%s\n' "$3" >"$f"
    chmod +x "$f"
}
# expect WANT WHAT: runs tests/run.sh over the scratch dir; WANT is fail/pass.
expect() {
    CDPGATE_RUN_INNER=1 TESTS= VALGRIND= BUILD="$tmp/b" sh tests/run.sh >"$tmp/out" 2>&1
    rc=$?
    last=$(tail -n 1 "$tmp/out")
    f=$(echo "$last" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    if [ "$1" = fail ] && [ $rc -ne 0 ] && [ "${f:-0}" -gt 0 ]; then
        passed=$((passed + 1))
    elif [ "$1" = pass ] && [ $rc -eq 0 ] && [ "${f:-1}" -eq 0 ]; then
        passed=$((passed + 1))
    else
        echo "checkrun: FAIL: $2: want $1, run.sh exited $rc with: $last"
        sed 's/^/    /' "$tmp/out" | tail -n 20
        failed=$((failed + 1))
    fi
}

plant test_exit_after test 'echo "test_exit_after: 3 passed, 0 failed"; exit 23'
expect fail "non-zero exit after a clean summary"
plant test_crash test 'echo "test_crash: x"; kill -SEGV $$'
expect fail "crash before the summary"
plant test_silent test 'exit 0'
expect fail "no output at all"
plant test_after test 'echo "test_after: 1 passed, 0 failed"; echo "==1== LEAK SUMMARY"'
expect fail "output after the summary line"
plant replay_fuzz_x fuzz 'echo "replay_fuzz_x: 5 passed, 0 failed"; exit 1'
expect fail "fuzz replay exiting non-zero after its summary"
if [ -x "$BUILD/tests/probe_nocheck" ]; then
    rm -rf "$tmp/b"
    mkdir -p "$tmp/b/tests" "$tmp/b/fuzz"
    cp "$BUILD/tests/probe_nocheck" "$tmp/b/tests/test_nocheck"
    expect fail "a test case that made no check"
    mv "$tmp/b/tests/test_nocheck" "$tmp/b/tests/test_detail"
    expect fail "a test case whose checks pass but that prints a failure's detail"
else
    echo "checkrun: FAIL: $BUILD/tests/probe_nocheck is missing (make tests-build)"
    failed=$((failed + 1))
fi
plant test_clean test 'echo "test_clean: 2 passed, 0 failed"; exit 0'
expect pass "a clean program"

rm -rf "$tmp"
echo "checkrun: $passed passed, $failed failed"
[ $failed -eq 0 ]
