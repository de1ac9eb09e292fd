#!/bin/sh
# `make check`: what a machine can see of docs/style.md. Lines over 100
# columns, banned calls (sprintf, strcpy, strcat, gets, atoi, strtok),
# tabs, trailing whitespace, and a missing top-of-file comment.
set -u
cd "$(dirname "$0")/.." || exit 1
bad=0
files=$(ls base/*.[ch] url/*.[ch] json/*.[ch] ws/*.[ch] cdp/*.[ch] gate/*.[ch] snapshot/*.[ch] vault/*.[ch] replay/*.[ch] live/*.[ch] cli/*.[ch] 2>/dev/null)
for f in $files; do
    awk -v f="$f" 'length($0) > 100 { printf "%s:%d: line longer than 100 columns\n", f, NR; b=1 }
        /\t/ { printf "%s:%d: tab\n", f, NR; b=1 }
        /[ \t]+$/ { printf "%s:%d: trailing whitespace\n", f, NR; b=1 }
        END { exit b }' "$f" || bad=1
    if grep -nE '(^|[^a-z_])(sprintf|vsprintf|strcpy|strcat|gets|atoi|atol|strtok)[ ]*\(' "$f" \
        | grep -vE 'snprintf|vsnprintf|fgets'; then
        echo "$f: banned call (see docs/style.md)"
        bad=1
    fi
    head -3 "$f" | grep -q '^/\*' || { echo "$f: no comment block at the top"; bad=1; }
done
[ $bad -eq 0 ] && echo "check: $(echo "$files" | wc -w) files clean"
exit $bad
