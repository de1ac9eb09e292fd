#!/bin/sh
# Installs what `make test` needs: Chromium (Debian's package), clang and its
# sanitizer runtime, libssl-dev for the OPENSSL=1 build, Node's test peers,
# Xvfb (the headed login test), axe-core (test_a11y, from npm).
# As root it installs with apt-get; otherwise it prints the exact command.
set -u
need=""
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need="$need chromium"
command -v clang >/dev/null 2>&1 || need="$need clang"
[ -d /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux ] && \
    ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 \
    || need="$need libclang-rt-14-dev"
[ -f /usr/include/openssl/ssl.h ] || need="$need libssl-dev"
command -v node >/dev/null 2>&1 || need="$need nodejs npm"
# Xvfb: the headed login handoff is tested in a virtual display.
command -v Xvfb >/dev/null 2>&1 || [ -x /usr/bin/Xvfb ] || need="$need xvfb"
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing$need"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need \
            >/dev/null || { echo "setup: apt-get install$need failed"; exit 1; }
    else
        echo "setup: missing$need; install with:"
        echo "  sudo apt-get update && sudo apt-get install -y$need"
        exit 1
    fi
fi
# axe-core: the accessibility scan's tests (test_a11y) use the user-installed
# file, as a user would (never part of cdpgate).
if [ ! -d tests/peers/node_modules/ws ] || \
   [ ! -d tests/peers/node_modules/@modelcontextprotocol/sdk ] || \
   [ ! -f tests/peers/node_modules/axe-core/axe.min.js ]; then
    (cd tests/peers && npm install --no-audit --no-fund --silent >/dev/null 2>&1) || {
        echo "setup: npm install in tests/peers failed"; exit 1; }
fi
exit 0
