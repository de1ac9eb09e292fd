#!/bin/sh
# `make check`, point 3 of issue 12: libcdpgate.a exports only what is
# used, and under its module's prefix. Reads the objects the library and
# the CLI are built from:
#   sh tests/checksyms.sh [BUILD]      (default build; needs make all)
#
# 1. Every exported symbol carries the prefix of the module that defines it
#    (m/x.c exports m_*; snapshot/ exports snap_* or snapshot_*), so an
#    embedder links it beside anything without a clash (STYLE.md: "an
#    embedded library exports nothing unprefixed").
# 2. A symbol declared in its module's public header (m/m.h) is used outside
#    the module: by another module's object or cli/'s, or named by a test,
#    fuzz target or benchmark (tests/, bench/: tested API) or by docs/ (the
#    embedder API). Else it belongs in the module's internal header, or is
#    static.
# 3. Any other exported symbol (an internal one, declared in m/*_int.h) is
#    used by another object file of the library or the CLI, or by a test.
#    Else it is static.
# Then the checker checks itself: a copy of the objects with a planted
# unprefixed symbol, and one with a planted unused one, must fail.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
[ -f "$B/libcdpgate.a" ] || { echo "checksyms: no $B/libcdpgate.a (make all first)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# words FILE...: the identifiers of the files, one a line, sorted.
words() {
    cat "$@" 2>/dev/null | tr -c 'A-Za-z0-9_' '\n' | grep -E '^[a-z]' | sort -u
}
# decls HEADER: the identifiers of a header outside its comments.
decls() {
    awk '{
        line = $0; out = ""
        while (length(line)) {
            if (inc) {
                i = index(line, "*/")
                if (!i) { line = ""; break }
                line = substr(line, i + 2); inc = 0
            } else {
                i = index(line, "/*")
                if (!i) { out = out line; line = ""; break }
                out = out substr(line, 1, i - 1) " "; line = substr(line, i + 2); inc = 1
            }
        }
        sub(/\/\/.*/, "", out); print out }' "$1" | tr -c 'A-Za-z0-9_' '\n' | grep . | sort -u
}

words tests/*.c tests/*.h tests/fuzz/*.c bench/*.c >"$tmp/tested"
words docs/*.md >"$tmp/documented"

# syms OBJECT...: "U sym object" and "D sym object module" lines (one nm).
syms() {
    nm -A -g "$@" | awk '{
        i = index($0, ":"); f = substr($0, 1, i - 1); n = split(substr($0, i + 1), a, " ")
        m = f; sub(/\/[^\/]*$/, "", m); sub(/.*\//, "", m)
        if (a[n - 1] == "U") print "U", a[n], f
        else if (n == 3 && m !~ /^(cli|tests|fuzz|bench)/) print "D", a[n], f, m }'
}

# check SYMS: checks the objects SYMS (syms' lines) describes; prints each
# fault.
check() {
    awk -v tested="$tmp/tested" -v documented="$tmp/documented" -v nfile="$tmp/n" '
        BEGIN {
            while ((getline w < tested) > 0) T[w] = 1
            while ((getline w < documented) > 0) Doc[w] = 1
        }
        $1 == "P" { P[$3, $2] = 1; next }
        $1 == "U" { nu[$2]++; U[$2, nu[$2]] = $3; next }
        $1 == "D" { nd++; ds[nd] = $2; df[nd] = $3; dm[nd] = $4 }
        END {
            for (i = 1; i <= nd; i++) {
                s = ds[i]; f = df[i]; m = dm[i]
                re = m == "snapshot" ? "^(snap|snapshot)_" : "^" m "_"
                if (s !~ re) {
                    print "checksyms: " f " exports " s " (want the " m "_ prefix, or static)"
                    bad = 1; continue
                }
                other = 0; outside = 0
                for (j = 1; j <= nu[s]; j++) {
                    u = U[s, j]
                    if (u == f) continue
                    other = 1
                    if (index(u, "/" m "/") == 0) outside = 1
                }
                if ((m, s) in P) {
                    if (outside || (s in T) || (s in Doc)) continue
                    print "checksyms: " s " is in " m "/" m ".h, but no other module, cli/," \
                          " test or doc uses it (move it to the internal header, make it" \
                          " static, or remove it)"
                    bad = 1
                } else if (!other && !(s in T)) {
                    print "checksyms: " f " exports " s ", but no other file and no test" \
                          " uses it (make it static, or remove it)"
                    bad = 1
                }
            }
            print nd > nfile
            exit bad
        }' "$tmp/public" "$1"
}

for h in */*.h; do
    m=${h%%/*}
    [ "$h" = "$m/$m.h" ] && decls "$h" | awk -v m="$m" '{ print "P", $1, m }'
done >"$tmp/public"
objs=$(for o in "$B"/*/*.o; do
    m=$(basename "$(dirname "$o")")
    case "$m" in tests|fuzz|bench*) continue;; esac
    [ "$m" = cli ] || [ -f "$m/$m.h" ] && echo "$o"
done)
syms $objs >"$tmp/syms"

passed=0 failed=0
if check "$tmp/syms"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi
cp "$tmp/n" "$tmp/n0"

# The checker checks itself: the same objects with one more, planted.
plant() {   # MODULE SOURCE
    mkdir -p "$tmp/b/$1"
    printf '%s\n' "$2" | ${CC:-cc} -c -x c -o "$tmp/b/$1/zz_planted.o" - ||
        echo "checksyms: cannot compile the planted object"
    { cat "$tmp/syms"; syms "$tmp/b/$1/zz_planted.o"; } >"$tmp/syms_planted"
}
expect_fail() {
    if check "$tmp/syms_planted" >"$tmp/out" 2>&1; then
        echo "checksyms: FAIL: $1: the check passed"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}
plant json 'int zz_planted(void) { return 0; }'
expect_fail "json/ exporting an unprefixed symbol"
plant json 'int json_zz_planted(void) { return 0; }'
expect_fail "json/ exporting a symbol nothing uses"

echo "checksyms: $(cat "$tmp/n0") exported symbols; $passed passed, $failed failed"
[ $failed -eq 0 ]
