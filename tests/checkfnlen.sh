#!/bin/sh
# The size check (issue 12, point 1; docs/style.md), run by `make check`:
#   1. no product .c file (the module folders and cli/) over FILE_MAX lines;
#   2. no function over FN_MAX lines, counted from its `{` at column 0 to its
#      `}` at column 0, unless the comment just above it (within the 20 lines
#      before the `{`) says `fnlen: allow` and why: a parser's state machine
#      or a straight-line circuit, which reads best whole.
# Then the checker checks itself: a planted long function and a planted long
# file must fail. Prints "checkfnlen: N passed, N failed".
# `sh tests/checkfnlen.sh -l` lists every function over the limit, allowed or not.
set -u
cd "$(dirname "$0")/.." || exit 1
FN_MAX=${FN_MAX:-150}
FILE_MAX=${FILE_MAX:-1200}

# Files still over FILE_MAX, each to be split along its sections (issue 12):
# reported, not failed. A file listed here that is under the limit fails
# (take it off the list); any other file over the limit fails. Empty since
# cdp/conn.c and cli/vault_cmd.c were split: keep it so.
FILE_TODO=""

# check FILE...: prints the violations, exits 1 when there is one.
check() {
    awk -v fnmax="$FN_MAX" -v filemax="$FILE_MAX" -v list="${LIST:-0}" '
        FNR == 1 { start = 0; delete prev; n = 0 }
        {
            prev[FNR % 24] = $0
            if ($0 ~ /^\{/ && !start) {
                start = FNR; name = ""; allow = 0
                for (i = FNR - 1; i >= FNR - 20 && i > 0; i--) {
                    l = prev[i % 24]
                    if (name == "" && match(l, /[A-Za-z_][A-Za-z_0-9]*\(/))
                        name = substr(l, RSTART, RLENGTH - 1)
                    if (l ~ /fnlen: allow/) allow = 1
                    if (i < FNR - 1 && (l ~ /^\}/ || l ~ /;[ ]*$/ && l !~ /^[ *\/]/)) break
                }
            } else if ($0 ~ /^\}/ && start) {
                len = FNR - start + 1
                if (len > fnmax && (list || !allow)) {
                    printf "%s:%d: %s is %d lines (limit %d)%s\n", FILENAME, start, name, len,
                        fnmax, allow ? ", allowed" : ""
                    if (!allow) bad = 1
                }
                start = 0
            }
        }
        END { exit bad }' "$@"
    r=$?
    for f in "$@"; do
        n=$(wc -l <"$f")
        case " ${TODO:-} " in
        *" $f "*)
            if [ "$n" -gt "$FILE_MAX" ]; then
                echo "$f: $n lines (limit $FILE_MAX; on the list to split, not failed)"
            else
                echo "$f: $n lines, within the limit: take it off FILE_TODO"
                r=1
            fi ;;
        *)
            if [ "$n" -gt "$FILE_MAX" ]; then
                echo "$f: $n lines (limit $FILE_MAX)"
                r=1
            fi ;;
        esac
    done
    return $r
}

files=$(ls base/*.c url/*.c json/*.c ws/*.c cdp/*.c gate/*.c snapshot/*.c vault/*.c replay/*.c live/*.c cli/*.c 2>/dev/null)
if [ "${1:-}" = -l ]; then
    LIST=1 check $files
    exit 0
fi
passed=0 failed=0
if TODO=$FILE_TODO check $files; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

# The check must be able to fail.
tmp=$(mktemp -d)
{ echo "/* planted */"; echo "static int planted(void)"; echo "{";
  i=0; while [ $i -lt $((FN_MAX + 1)) ]; do echo "    (void)0;"; i=$((i + 1)); done
  echo "    return 0;"; echo "}"; } >"$tmp/long_fn.c"
if check "$tmp/long_fn.c" >/dev/null; then
    echo "checkfnlen: a planted function over $FN_MAX lines was not caught"
    failed=$((failed + 1))
else
    passed=$((passed + 1))
fi
{ echo "/* planted */"; i=0
  while [ $i -lt $((FILE_MAX + 1)) ]; do echo "/* line */"; i=$((i + 1)); done; } >"$tmp/long_file.c"
if check "$tmp/long_file.c" >/dev/null; then
    echo "checkfnlen: a planted file over $FILE_MAX lines was not caught"
    failed=$((failed + 1))
else
    passed=$((passed + 1))
fi
rm -rf "$tmp"
echo "checkfnlen: $passed passed, $failed failed"
[ $failed -eq 0 ]
