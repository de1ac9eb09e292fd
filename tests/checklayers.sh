#!/bin/sh
# The layering check (issue 12, point 4), run by `make check`.
#
# The allowed module dependencies live in ONE place: the table between the
# "layers:begin" and "layers:end" markers in docs/architecture.md, one row
# per top-level folder, highest layer first:
#     | `cli/` | what it is | `snapshot/` `gate/` ... |
# A module (a top-level folder holding .c or .h files, other than tests/,
# bench/ and docs/) fails the check when
#   1. one of its files includes a header of another folder that its row
#      does not name;
#   2. it includes another module's header other than that module's public
#      one (`m/m.h`): `*_int.h` and the like stay inside their module;
#   3. an include climbs out with `..` (includes are written from the root);
#   4. it has no row in the table (a new folder must be placed on the map);
#   5. its row names a module listed above it or itself (modules depend
#      downward only, so the table order is the layering and the map has
#      no cycle), or a folder that is not a module;
#   6. its row names a module that none of its files includes (the map must
#      not keep a dependency the code has dropped; a module includes the
#      header of every module whose names it uses, not through another's).
# and a test, fuzz target or benchmark (tests/, bench/) fails it when
#   7. it includes a module's header other than the public one (m/m.h)
#      while that header's opening comment does not name the file (a test
#      may include a module's internal header to test its internals; the
#      header says which tests do and why).
# Then the checker checks itself: a copy of the tree with one planted fault
# of each kind must fail, and an untouched copy must pass.
# Prints "checklayers: N passed, N failed" like the test programs.
set -u
cd "$(dirname "$0")/.." || exit 1

# modules ROOT: the module folders of a tree, one a line.
modules() {
    for d in "$1"/*/; do
        d=${d%/}; m=${d##*/}
        case "$m" in tests|bench|docs|build*) continue;; esac
        [ -n "$(find "$d" -name '*.[ch]' | head -n 1)" ] && echo "$m"
    done
}

# table ROOT: "module dep dep ..." a line, in the doc's order.
table() {
    sed -n '/<!-- layers:begin/,/<!-- layers:end/p' "$1/docs/architecture.md" |
        awk -F'|' '/^\| *`[a-z0-9_]+\/` *\|/ {
            m = $2; gsub(/[` \/]/, "", m)
            line = m; deps = $4
            while (match(deps, /`[a-z0-9_]+\/`/)) {
                line = line " " substr(deps, RSTART + 1, RLENGTH - 3)
                deps = substr(deps, RSTART + RLENGTH)
            }
            print line }'
}

# includes ROOT: "file:line:target" for each #include (quoted or in angle
# brackets) of a module's file whose target names a folder or climbs out.
includes() {
    for m in $(modules "$1"); do
        find "$1/$m" -name '*.[ch]'
    done | sort | sed "s|^$1/||" | (cd "$1" && xargs awk '
        /^[ \t]*#[ \t]*include[ \t]*["<]/ {
            t = $0; sub(/^[^"<]*["<]/, "", t); sub(/[">].*$/, "", t)
            if (index(t, "/")) print FILENAME ":" FNR ":" t }')
}

# check_tree ROOT: prints each violation; fails when there is one.
check_tree() {
    table "$1" >"$tmp/table"
    includes "$1" | awk -v mods="$(modules "$1" | tr '\n' ' ')" -v tabf="$tmp/table" '
    BEGIN {
        n = split(mods, ml, " ")
        for (i = 1; i <= n; i++) M[ml[i]] = 1
        while ((getline line < tabf) > 0) {
            k = split(line, f, " ")
            rows++; row[rows] = f[1]; ord[f[1]] = rows
            for (j = 2; j <= k; j++) { ndep[f[1]]++; dep[f[1], ndep[f[1]]] = f[j]
                                       allow[f[1], f[j]] = 1 }
        }
        if (!rows) { print "docs/architecture.md: no layers table between the layers markers"
                     bad = 1; exit }
    }
    {
        file = $0; sub(/:.*/, "", file)
        t = $0; sub(/^[^:]*:[^:]*:/, "", t)
        where = substr($0, 1, length($0) - length(t) - 1)
        m = file; sub(/\/.*/, "", m)
        if (t ~ /\.\./) { print where ": include " t " climbs out with .. (write it from the root)"
                          bad = 1; next }
        p = t; sub(/\/.*/, "", p)
        if (p == m || !(p in M)) next
        direct[m, p] = 1
        if (!((m, p) in allow)) { print where ": " m "/ includes " t ", but the layers table" \
            " of docs/architecture.md does not let " m "/ depend on " p "/"; bad = 1 }
        if (t != p "/" p ".h") { print where ": " t " is internal to " p "/ (include " p "/" \
            p ".h)"; bad = 1 }
    }
    END {
        if (!rows) exit 1
        for (m in M) if (!(m in ord)) {
            print m "/: a module folder with no row in the layers table of docs/architecture.md"
            bad = 1 }
        for (r = 1; r <= rows; r++) {
            m = row[r]
            if (!(m in M)) { print "docs/architecture.md: layers row " m "/ is not a module folder"
                             bad = 1 }
            for (j = 1; j <= ndep[m]; j++) {
                d = dep[m, j]
                if (!(d in M)) { print "docs/architecture.md: " m "/ -> " d "/: " d "/ is not" \
                    " a module folder"; bad = 1; continue }
                if (ord[d] <= r) { print "docs/architecture.md: " m "/ -> " d "/ points up or" \
                    " to itself (a row names only modules listed below it)"; bad = 1 }
                if (!((m, d) in direct)) { print "docs/architecture.md: " m "/ -> " d "/ is in" \
                    " the layers table, but no file of " m "/ includes " d "/" d ".h (drop it" \
                    " from the map, or include it where its names are used)"; bad = 1 }
            }
        }
        exit bad
    }'
}

# check_tests ROOT: rule 7; prints each violation, fails when there is one.
check_tests() {
    mods=" $(modules "$1" | tr '\n' ' ')"
    bad=0
    for f in $(cd "$1" && find tests bench -name '*.c' 2>/dev/null | sort); do
        for t in $(awk '/^[ \t]*#[ \t]*include[ \t]*"/ {
                t = $0; sub(/^[^"]*"/, "", t); sub(/".*$/, "", t)
                if (index(t, "/")) print t }' "$1/$f"); do
            p=${t%%/*}
            case "$mods" in *" $p "*) ;; *) continue;; esac
            [ "$t" = "$p/$p.h" ] && continue
            [ -f "$1/$t" ] || continue
            if ! awk 'NR == 1, /\*\// { print } /\*\// { exit }' "$1/$t" | grep -qF "$f"; then
                echo "$f: includes $t, an internal header of $p/, whose opening comment does" \
                     "not name $f (say there which tests include it and why)"
                bad=1
            fi
        done
    done
    [ $bad -eq 0 ]
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
if check_tree .; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
if check_tests .; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

# The checker checks itself on copies of the tree (sources and the map).
mods=$(modules .)
copy() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t/docs"
    cp docs/architecture.md "$tmp/t/docs/"
    cp -R $mods "$tmp/t/"
    find tests bench -name '*.c' | while read -r f; do
        mkdir -p "$tmp/t/$(dirname "$f")" && cp "$f" "$tmp/t/$f"
    done
}
# expect_by CHECK WANT WHAT: CHECK (check_tree or check_tests) on the copy;
# WANT is fail or pass.
expect_by() {
    if "$1" "$tmp/t" >"$tmp/out" 2>&1; then rc=pass; else rc=fail; fi
    if [ "$rc" = "$2" ]; then
        passed=$((passed + 1))
    else
        echo "checklayers: FAIL: $3: want $2, got $rc"
        sed 's/^/    /' "$tmp/out" | tail -n 10
        failed=$((failed + 1))
    fi
}
# expect WANT WHAT: the module map's rules; expect_tests: rule 7 (tests).
expect() { expect_by check_tree "$@"; }
expect_tests() { expect_by check_tests "$@"; }
plant_include() {   # FILE LINE: appends an include to FILE of the copy.
    printf '%s\n' "$2" >>"$tmp/t/$1"
}

copy
expect pass "an untouched copy of the tree"
copy; plant_include json/json.c '#include "gate/gate.h"'
expect fail "json/ including gate/ (not in its row)"
copy; plant_include vault/store.c '#include <snapshot/snapshot.h>'
expect fail "vault/ including snapshot/ in angle brackets (points up)"
copy; plant_include cli/cmd.c '#include "gate/gate_int.h"'
expect fail "cli/ including gate/'s internal header"
copy; plant_include gate/gate.c '#include "../cdp/cdp.h"'
expect fail "an include climbing out with .."
copy; mkdir -p "$tmp/t/newmod"; printf '/* x */\n' >"$tmp/t/newmod/newmod.h"
expect fail "a module folder with no row in the table"
copy; sed 's/^\(| `ws\/` .*|\)\([^|]*\)|$/\1\2`cdp\/` |/' docs/architecture.md \
    >"$tmp/t/docs/architecture.md"
plant_include ws/ws.h '#include "cdp/cdp.h"'
expect fail "a row naming a module above it (a cycle), the include it allows planted"
copy; sed 's/^\(| `vault\/` .*|\)\([^|]*\)|$/\1\2`url\/` |/' docs/architecture.md \
    >"$tmp/t/docs/architecture.md"
expect fail "a row keeping a dependency no include reaches"
copy; sed '/#include "json\/json.h"/d' snapshot/snap_int.h >"$tmp/t/snapshot/snap_int.h"
expect fail "snapshot/ using json/ only through cdp/cdp.h (no include of its own)"
copy
expect_tests pass "an untouched copy of the tests"
copy; plant_include tests/test_gate.c '#include "gate/gate_int.h"'
expect_tests fail "a test including an internal header that does not name it"
copy; grep -v 'tests/fuzz/fuzz_vault.c' vault/vault_int.h >"$tmp/t/vault/vault_int.h"
expect_tests fail "an internal header no longer naming a test that includes it"

echo "checklayers: $passed passed, $failed failed"
[ $failed -eq 0 ]
