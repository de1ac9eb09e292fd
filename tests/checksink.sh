#!/bin/sh
# The one-chokepoint check (issue 5, point 1), run by tests/run.sh.
#
#   1. In snapshot/, cli/ and a11y/, only snapshot/sink.c sends CDP commands
#      (cdp_send, cdp_call, cdp_send_sink, cdp_page_*). Everything else goes
#      through snap_cdp_send/snap_cdp_call, which refuse state-changing
#      methods without a gate permit and page scripts that are not
#      registered. Exception, named: cli/cmd.c's `doctor` and `eval`, the
#      human's own commands (never reachable from MCP or the agent API).
#   2. Every CDP method named in snapshot/ is in sink.c's METHODS table (or
#      is Runtime.evaluate/callFunctionOn, checked script by script), so the
#      table is the complete list of what the agent can send.
#   3. The checker itself fails on a planted violation (a copy of the tree
#      with one extra cdp_send in cli/ and one unknown method in snapshot/).
# Prints "checksink: N passed, N failed" like the test programs.
set -u
cd "$(dirname "$0")/.." || exit 1

check_tree() {
    root=$1
    bad=0
    for f in "$root"/snapshot/*.c "$root"/cli/*.c "$root"/a11y/*.c; do
        [ -f "$f" ] || continue
        case "$f" in */snapshot/sink.c) continue;; esac
        hits=$(grep -nE '(^|[^a-z_])(cdp_send|cdp_call|cdp_send_sink|cdp_send_secret|cdp_call_secret|cdp_page_[a-z_]+)[ ]*\(' "$f" \
            | grep -vE '^\s*[0-9]+:\s*(\*|/\*)')
        case "$f" in
        */cli/cmd.c)
            hits=$(echo "$hits" | grep -vE 'cdp_page_(open|navigate|eval|free|adopted)|"Browser.getVersion"' \
                | grep -v '^$');;
        esac
        if [ -n "$hits" ]; then
            echo "$f: sends CDP commands outside snapshot/sink.c:"
            echo "$hits"
            bad=1
        fi
    done
    table=$(sed -n '/^} METHODS\[\] = {/,/^};/p' "$root"/snapshot/sink.c)
    for m in $(cat "$root"/snapshot/*.c | grep -oE '"[A-Z][A-Za-z]+\.[a-z][A-Za-z]+"' \
               | sort -u | tr -d '"'); do
        case "$m" in
        Runtime.evaluate|Runtime.callFunctionOn) continue;;
        # events the agent listens to, not commands
        *.requestPaused|*.frame*|*.lifecycleEvent|*.javascriptDialog*|*.navigatedWithinDocument|\
        *.requestWillBeSent|*.loadingFinished|*.loadingFailed|*.attachedToTarget|\
        *.detachedFromTarget|*.targetCreated|*.targetDestroyed|*.targetCrashed|\
        *.targetInfoChanged|*.responseReceived|*.webSocketCreated|*.entryAdded|Network.loading|\
        Browser.downloadWillBegin|Browser.downloadProgress|Browser.download|\
        Network.request|Inspector.detached|Page.screencastFrame|Page.loadEventFired|\
        Page.domContentEventFired) continue;;
        # sent by sink.c itself (the interception answers)
        Fetch.continueRequest|Fetch.failRequest) continue;;
        esac
        if ! echo "$table" | grep -q "\"$m\""; then
            echo "snapshot/: method $m is not in sink.c's METHODS table"
            bad=1
        fi
    done
    return $bad
}

passed=0 failed=0
if check_tree .; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

# The check must be able to fail.
tmp=$(mktemp -d)
mkdir -p "$tmp/snapshot" "$tmp/cli"
cp snapshot/*.c "$tmp/snapshot/" && cp cli/*.c "$tmp/cli/"
printf 'static void planted(cdp_conn *c){cdp_send(c, NULL, "Input.dispatchKeyEvent", NULL, NULL, NULL);}\n' \
    >> "$tmp/cli/main.c"
if check_tree "$tmp" >/dev/null; then
    echo "checksink: a cdp_send planted in cli/ was not caught"
    failed=$((failed + 1))
else
    passed=$((passed + 1))
fi
cp cli/main.c "$tmp/cli/main.c"
printf 'static const char *planted = "DOM.setOuterHTML";\n' >> "$tmp/snapshot/act_page.c"
if check_tree "$tmp" >/dev/null; then
    echo "checksink: a method missing from the sink table was not caught"
    failed=$((failed + 1))
else
    passed=$((passed + 1))
fi
rm -rf "$tmp"
echo "checksink: $passed passed, $failed failed"
[ $failed -eq 0 ]
