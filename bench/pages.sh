#!/bin/sh
# pages.sh — installs or locates the benchmark's peers and real third-party
# pages, and lays out the static site that bench/serve.mjs serves:
#
#   build/bench/site/todomvc/     npm `todomvc` (examples/vanillajs works offline)
#   build/bench/site/swagger/     npm `swagger-ui-dist`, its initializer pointed at
#                                 docker-api.yaml: the Docker Engine API spec from
#                                 Debian's golang-github-docker-docker-dev
#   build/bench/site/jsoneditor/  npm `jsoneditor` (examples/03_switch_mode.html)
#   build/bench/site/python/      Debian's python3.11-doc HTML (library/stdtypes.html)
#   build/bench/site/postgres/    Debian's postgresql-doc-15 HTML (sql-select.html)
#   build/bench/site/debref/      Debian's debian-reference-en HTML (the Debian
#                                 Reference manual; a11y_bench.mjs: ch02.en.html)
#                                 with its style and icons (debian-reference-common)
#   build/bench/site/gen/         act.html, dense.html (651 controls), long.html
#
# npm packages go to bench/peers/node_modules (git-ignored). The five Debian
# packages are used where installed; otherwise their .deb files are fetched
# with `apt-get download` and unpacked into build/bench/debroot, which changes
# nothing on the system (installing golang-github-docker-docker-dev would pull
# ~250 Go packages for one YAML file, and the python and postgresql doc packages
# would upgrade the system's python3.11 and postgresql-15). When that is impossible, as root
# it falls back to apt-get install; otherwise it prints the command.
#
#   sh bench/pages.sh [BUILD]      exits non-zero when the site cannot be built
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-${BUILD:-build}}
ROOT=$(pwd)
SITE="$ROOT/$BUILD/bench/site"
DEBROOT="$ROOT/$BUILD/bench/debroot"

command -v node >/dev/null 2>&1 || { echo "pages: node is missing (sh tests/setup.sh installs it)"; exit 1; }
if [ ! -f bench/peers/node_modules/.package-lock.json ] ||
   [ bench/peers/package.json -nt bench/peers/node_modules/.package-lock.json ]; then
    echo "pages: npm install in bench/peers"
    (cd bench/peers && npm install --no-audit --no-fund --silent >/dev/null 2>&1) ||
        { echo "pages: npm install in bench/peers failed"; exit 1; }
fi

PYDOC=usr/share/doc/python3.11/html
PGDOC=usr/share/doc/postgresql-doc-15/html
SPEC=usr/share/gocode/src/github.com/docker/docker/api/swagger.yaml
DEBREF=usr/share/debian-reference

# where PKG's file REL is: installed, or unpacked into DEBROOT
locate() { # PKG REL
    if [ -e "/$2" ]; then echo "/$2"; return 0; fi
    if [ -e "$DEBROOT/$2" ]; then echo "$DEBROOT/$2"; return 0; fi
    return 1
}
fetch_deb() { # PKG
    d="$ROOT/$BUILD/bench/debs"
    mkdir -p "$d" "$DEBROOT"
    (cd "$d" && rm -f "$1"_*.deb && apt-get download "$1" >/dev/null 2>&1) ||
        { [ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null 2>&1 &&
          (cd "$d" && apt-get download "$1" >/dev/null 2>&1); } || return 1
    dpkg-deb -x "$d/$1"_*.deb "$DEBROOT" && rm -f "$d/$1"_*.deb
}
missing=""
for spec in "python3.11-doc $PYDOC/library/stdtypes.html" \
            "postgresql-doc-15 $PGDOC/sql-select.html" \
            "debian-reference-en $DEBREF/ch02.en.html" \
            "debian-reference-common $DEBREF/debian-reference.css" \
            "golang-github-docker-docker-dev $SPEC"; do
    set -- $spec
    locate "$1" "$2" >/dev/null && continue
    echo "pages: fetching $1 (apt-get download, unpacked into $BUILD/bench/debroot)"
    fetch_deb "$1" && locate "$1" "$2" >/dev/null && continue
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "pages: apt-get install $1"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$1" \
            >/dev/null 2>&1 && continue
    fi
    missing="$missing $1"
done
if [ -n "$missing" ]; then
    echo "pages: missing$missing; install with:"
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing"
    exit 1
fi

NM="$ROOT/bench/peers/node_modules"
rm -rf "$SITE"
mkdir -p "$SITE/swagger" "$SITE/gen"
ln -s "$NM/todomvc" "$SITE/todomvc"
ln -s "$NM/jsoneditor" "$SITE/jsoneditor"
ln -s "$(dirname "$(dirname "$(locate python3.11-doc $PYDOC/library/stdtypes.html)")")" "$SITE/python"
ln -s "$(dirname "$(locate postgresql-doc-15 $PGDOC/sql-select.html)")" "$SITE/postgres"
ln -s "$(dirname "$(locate debian-reference-en $DEBREF/ch02.en.html)")" "$SITE/debref"
for f in "$NM"/swagger-ui-dist/*; do
    case "$(basename "$f")" in swagger-initializer.js|*.map|package.json) continue ;; esac
    ln -s "$f" "$SITE/swagger/$(basename "$f")"
done
cp "$(locate golang-github-docker-docker-dev $SPEC)" "$SITE/swagger/docker-api.yaml"
cat > "$SITE/swagger/swagger-initializer.js" <<'EOF'
window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "docker-api.yaml",
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout"
  });
};
EOF
node bench/gen_site.mjs "$SITE/gen" 2>/dev/null || { echo "pages: gen_site.mjs failed"; exit 1; }
exit 0
