#!/bin/sh
# `make demo`: make sure a browser is there, then run cdpgate's doctor and
# the demo against the embedded local site.
set -u
bin=${1:-build/cdpgate}
have=""
[ -n "${CDPGATE_BROWSER:-}" ] && have=1
for b in chromium chromium-browser google-chrome google-chrome-stable microsoft-edge; do
    command -v "$b" >/dev/null 2>&1 && have=1
done
if [ -z "$have" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "demo: installing Chromium (apt-get install -y chromium)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
            >/dev/null || { echo "demo: apt-get install chromium failed"; exit 1; }
    else
        echo "demo: no browser found; install one with:"
        echo "  sudo apt-get update && sudo apt-get install -y chromium"
        exit 1
    fi
fi
"$bin" doctor || exit $?
echo
exec "$bin" demo
