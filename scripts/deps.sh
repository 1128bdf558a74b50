#!/usr/bin/env bash
# deps.sh: installs everything codebox needs on a Debian 12 machine, and
# nothing that is already there (`make deps` runs it; it is idempotent):
#   - Debian packages: build libraries, kernel runtimes, test tools;
#   - the Python kernel packages of pyproject-kernels.txt (pip where an index
#     answers, else Debian's python3-* packages);
#   - the JavaScript kernel: ijavascript from npm, its zeromq binding built
#     against Debian's libzmq, and its kernelspec.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

# Build and run-time libraries, the kernels' runtimes, and test tools.
DEBIAN_PACKAGES=(
    build-essential pkg-config clang
    libzmq3-dev libjansson-dev libssl-dev libmicrohttpd-dev libcurl4-openssl-dev libvips-dev
    unixodbc-dev libsqliteodbc odbc-postgresql sqlite3
    bubblewrap libseccomp-dev check libsubunit-dev
    python3 python3-pytest
)

# Maps a pip requirement name to Debian's package for it.
debian_name() {
    case "$1" in
        pillow) echo python3-pil ;;
        *) echo "python3-$(echo "$1" | tr 'A-Z_' 'a-z-')" ;;
    esac
}

APT_UPDATED=0
apt_install() {
    local missing=()
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "deps: installing ${missing[*]}"
    if [ $APT_UPDATED = 0 ]; then $SUDO apt-get update -qq; APT_UPDATED=1; fi
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

apt_install "${DEBIAN_PACKAGES[@]}"
# ---- SQL (exec_sql) --------------------------------------------------------
# unixODBC, the SQLite and PostgreSQL ODBC drivers and the sqlite3 tool (which
# builds the sample database) are in DEBIAN_PACKAGES above. The PostgreSQL
# server is for the tests, which start their own with initdb and pg_ctl in a
# scratch folder; the cluster Debian's package may make is not used.
apt_install postgresql
# ---- end SQL ---------------------------------------------------------------
# Node.js may come from elsewhere than Debian (it does on these machines):
# install Debian's only when there is none.
command -v node >/dev/null || apt_install nodejs
command -v npm >/dev/null || apt_install npm

# The unprivileged user kernels run as when the gateway runs as root.
if [ "$(id -u)" = 0 ] && ! id codebox-kernel >/dev/null 2>&1; then
    echo "deps: adding the system user codebox-kernel"
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin codebox-kernel
fi

# Python kernel packages: requirement names without version specifiers.
PY=/usr/bin/python3
mapfile -t REQS < <(sed -e 's/#.*//' -e 's/[<>=!~; \[].*//' pyproject-kernels.txt | grep -v '^$')
import_name() { case "$1" in pillow) echo PIL ;; *) echo "$1" ;; esac; }
need=()
for r in "${REQS[@]}"; do
    $PY -c "import $(import_name "$r")" 2>/dev/null || need+=("$r")
done
if [ ${#need[@]} -gt 0 ]; then
    probe=$(mktemp -d)
    if $PY -m pip --version >/dev/null 2>&1 \
        && timeout 20 $PY -m pip download -q --no-deps --timeout 5 --retries 0 -d "$probe" pip >/dev/null 2>&1; then
        echo "deps: pip install ${need[*]}"
        $PY -m pip install -q --break-system-packages -r pyproject-kernels.txt
    else
        debs=()
        for r in "${need[@]}"; do debs+=("$(debian_name "$r")"); done
        apt_install "${debs[@]}"
    fi
    rm -rf "$probe"
fi

# The JavaScript kernel.
IJS_DIR=${CODEBOX_IJAVASCRIPT_DIR:-/opt/codebox/ijavascript}
IJS_VERSION=5.2.1
SPEC_DIR=/usr/local/share/jupyter/kernels/javascript
KERNEL_JS=$IJS_DIR/node_modules/ijavascript/lib/kernel.js
if ! { [ -f "$SPEC_DIR/kernel.json" ] && [ -f "$KERNEL_JS" ] \
       && (cd "$IJS_DIR" && node -e "require('zeromq')") >/dev/null 2>&1; }; then
    echo "deps: installing ijavascript $IJS_VERSION into $IJS_DIR"
    $SUDO mkdir -p "$IJS_DIR"
    cd "$IJS_DIR"
    [ -f package.json ] || echo '{"private": true}' > package.json
    npm_config_zmq_external=true npm install --no-audit --no-fund --silent "ijavascript@$IJS_VERSION"
    # npm here runs no install scripts: build the binding against Debian's libzmq
    NODE_GYP="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
    (cd node_modules/zeromq && npm_config_zmq_external=true \
        node "$NODE_GYP" rebuild --nodedir=/usr --zmq_external=true > ../../node-gyp.log 2>&1) \
        || { cat node-gyp.log; exit 1; }
    node -e "require('zeromq')"
    cd - >/dev/null
    $SUDO mkdir -p "$SPEC_DIR"
    cat > "$SPEC_DIR/kernel.json" <<JSON
{
 "argv": ["node", "$KERNEL_JS", "--hide-undefined", "{connection_file}", "--protocol=5.0"],
 "display_name": "JavaScript (Node.js)",
 "language": "javascript"
}
JSON
fi
# The MCP tests' npm packages (the official SDK, Inspector and conformance
# suite), pinned by tests/mcp/package-lock.json.
if [ -f tests/mcp/package-lock.json ]; then
    if [ ! -d tests/mcp/node_modules ] || [ tests/mcp/package-lock.json -nt tests/mcp/node_modules ]; then
        echo "deps: npm ci in tests/mcp"
        (cd tests/mcp && npm ci --no-audit --no-fund --silent && touch node_modules)
    fi
fi
# Azurite (the official Azure Storage emulator) for the Azure Blob upload
# tests, pinned by tests/azurite/package-lock.json.
if [ -f tests/azurite/package-lock.json ]; then
    if [ ! -d tests/azurite/node_modules ] || [ tests/azurite/package-lock.json -nt tests/azurite/node_modules ]; then
        echo "deps: npm ci in tests/azurite"
        (cd tests/azurite && npm ci --no-audit --no-fund --silent && touch node_modules)
    fi
fi
echo "deps: ready"
