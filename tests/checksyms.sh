#!/bin/sh
# `make check`, point 3 of issue 12: every symbol libcdpgate.a exports
# carries the prefix of the module that defines it (m/x.c exports m_*;
# snapshot/ exports snap_* or snapshot_*), so an embedder links it beside
# anything without a clash (STYLE.md: "an embedded library exports nothing
# unprefixed"). Reads the objects the library is built from:
#   sh tests/checksyms.sh [BUILD]      (default build; needs make all)
set -u
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
[ -f "$B/libcdpgate.a" ] || { echo "checksyms: no $B/libcdpgate.a (make all first)"; exit 1; }
bad=0 n=0
for o in "$B"/*/*.o; do
    m=$(basename "$(dirname "$o")")
    case "$m" in cli|tests|fuzz|bench*) continue;; esac
    [ -f "$m/$m.h" ] || continue
    case "$m" in snapshot) re="^(snap|snapshot)_";; *) re="^${m}_";; esac
    for s in $(nm -g --defined-only "$o" | awk 'NF == 3 { print $3 }'); do
        n=$((n + 1))
        if ! echo "$s" | grep -qE "$re"; then
            echo "checksyms: $o exports $s (want the ${m}_ prefix, or static)"
            bad=1
        fi
    done
done
[ $bad -eq 0 ] && echo "checksyms: $n exported symbols, all module-prefixed"
exit $bad
