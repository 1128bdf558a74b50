#!/usr/bin/env bash
# deps.sh: installs what codebox needs on a Debian 12 machine, and nothing
# that is already there (it is idempotent):
#   `deps.sh run`  (make deps, make run): build libraries, kernel runtimes,
#                  the Python kernel packages of pyproject-kernels.txt (pip
#                  where an index answers, else Debian's python3-* ones), the
#                  JavaScript kernel (ijavascript from npm, its zeromq binding
#                  built against Debian's libzmq, its kernelspec), the kernel
#                  user, the npm packages the MCP Apps view is built from
#                  (gateway/mcp/apps);
#   `deps.sh test` (make test-deps, make test): all that, and what only the
#                  tests use: Check, pytest, clang for the fuzzers, a
#                  PostgreSQL server, the npm packages of tests/mcp (the MCP
#                  SDK, Inspector, conformance suite), tests/azurite and
#                  tests/jupyterlab (JupyterLab's kernel client).
# A step that fails prints its own output and says which step it was.
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-run}
case "$WHAT" in run|test) ;; *) echo "usage: deps.sh run|test" >&2; exit 2 ;; esac
LOG_DIR=$(mktemp -d)
trap 'rm -rf "$LOG_DIR"' EXIT

# Runs a step quietly; on failure prints its output and what it was.
step() {
    local name=$1; shift
    local log="$LOG_DIR/step.log"
    if ! "$@" > "$log" 2>&1; then
        echo "deps: FAILED: $name" >&2
        echo "deps: the command was: $*" >&2
        sed 's/^/    /' "$log" >&2
        exit 1
    fi
}

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

# Build and run-time libraries and the kernels' runtimes.
DEBIAN_PACKAGES=(
    build-essential pkg-config
    libzmq3-dev libczmq-dev libjansson-dev libssl-dev libmicrohttpd-dev libcurl4-openssl-dev libvips-dev
    unixodbc-dev libsqliteodbc odbc-postgresql sqlite3
    bubblewrap libseccomp-dev libwslay-dev libhiredis-dev zlib1g-dev
    python3
)
# What only the tests use (the PostgreSQL server: the SQL tests start their
# own with initdb in a scratch folder; Debian's own kernelspecs, R's IRkernel
# and Octave's, run as Jupyter runs them, with gnuplot, a font and
# Ghostscript so Octave can plot; Jupyter's own clients: jupyter_server's gateway
# client, nbclient, a websocket client; HAProxy in front of several nodes;
# Chromium, the browser that tests/mcp/apps_browser.test.js drives).
TEST_DEBIAN_PACKAGES=(
    clang check libsubunit-dev python3-pytest python3-pytest-xdist postgresql
    r-cran-irkernel python3-octave-kernel octave gnuplot-nox fonts-freefont-otf ghostscript
    python3-jupyter-server python3-nbclient python3-websocket python3-notebook
    xeus-python-dev python3-xeus-python-shell g++ pkg-config haproxy redis-server
    chromium
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
    if [ $APT_UPDATED = 0 ]; then step "apt-get update" $SUDO apt-get update; APT_UPDATED=1; fi
    step "apt-get install ${missing[*]}" \
        $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
}

apt_install "${DEBIAN_PACKAGES[@]}"
if [ "$WHAT" = test ]; then apt_install "${TEST_DEBIAN_PACKAGES[@]}"; fi
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
        step "pip install -r pyproject-kernels.txt" \
            $PY -m pip install --break-system-packages -r pyproject-kernels.txt
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
    step "npm install ijavascript@$IJS_VERSION (in $IJS_DIR)" \
        env npm_config_zmq_external=true npm install --no-audit --no-fund "ijavascript@$IJS_VERSION"
    # npm here runs no install scripts: build the binding against Debian's libzmq
    NODE_GYP="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
    step "node-gyp rebuild of ijavascript's zeromq binding against Debian's libzmq" \
        bash -c "cd node_modules/zeromq && npm_config_zmq_external=true \
                 node '$NODE_GYP' rebuild --nodedir=/usr --zmq_external=true"
    step "loading the zeromq binding" node -e "require('zeromq')"
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
# xeus-python's kernel for the tests' existing kernelspecs: Debian 12 has
# the library but not the xpython program; tests/kernels/xpython_main.cpp
# is that program, built here, with its kernelspec.
if [ "$WHAT" = test ]; then
    XPY_DIR=/usr/local/lib/codebox-tests
    XPY_SPEC=/usr/local/share/jupyter/kernels/xpython
    if [ ! -x "$XPY_DIR/xpython" ] || [ tests/kernels/xpython_main.cpp -nt "$XPY_DIR/xpython" ]; then
        echo "deps: building xpython (xeus-python's kernel) into $XPY_DIR"
        $SUDO mkdir -p "$XPY_DIR"
        step "building xpython" bash -c "g++ -O2 -std=c++17 -o '$LOG_DIR/xpython' \
            tests/kernels/xpython_main.cpp \$(pkg-config --cflags python3-embed) \
            -lxeus-python -lxeus \$(pkg-config --libs python3-embed) -lzmq -lpthread \
            && $SUDO install -m 755 '$LOG_DIR/xpython' '$XPY_DIR/xpython'"
    fi
    if [ ! -f "$XPY_SPEC/kernel.json" ]; then
        $SUDO mkdir -p "$XPY_SPEC"
        $SUDO tee "$XPY_SPEC/kernel.json" > /dev/null <<JSON
{
 "argv": ["$XPY_DIR/xpython", "-f", "{connection_file}"],
 "display_name": "Python 3.11 (XPython)",
 "language": "python",
 "metadata": {"debugger": false}
}
JSON
    fi
fi
# The npm packages, each pinned by its package-lock.json: what the MCP Apps
# view is built from (gateway/mcp/apps, `make apps`); for the tests also the
# MCP SDK, Inspector and conformance suite (tests/mcp), Azurite, the
# official Azure Storage emulator, for the Azure Blob tests (tests/azurite).
NPM_DIRS=(gateway/mcp/apps)
if [ "$WHAT" = test ]; then NPM_DIRS+=(tests/mcp tests/azurite tests/jupyterlab); fi
for dir in "${NPM_DIRS[@]}"; do
    [ -f "$dir/package-lock.json" ] || continue
    if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
        echo "deps: npm ci in $dir"
        step "npm ci in $dir" bash -c "cd '$dir' && npm ci --no-audit --no-fund"
        touch "$dir/node_modules"
    fi
done
echo "deps: ready ($WHAT)"
