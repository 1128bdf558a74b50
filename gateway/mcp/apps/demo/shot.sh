#!/usr/bin/env bash
# shot.sh: builds the demo host around build/mcp-app-outputs.html and opens
# it in Debian's headless Chromium: one sandboxed frame per sample output,
# each fed through the ext-apps AppBridge. Writes build/apps-shots/demo.png
# and demo.log (the browser's console: the host logs each view's
# initialized / tool result sent / size lines). `make apps-demo` runs it.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
command -v chromium >/dev/null || { echo "shot.sh: chromium is missing (apt-get install chromium)" >&2; exit 1; }
nice -n 19 node gateway/mcp/apps/demo/build-demo.mjs
mkdir -p build/apps-shots
# one process for every frame: headless screenshots miss out-of-process frames
timeout 120 nice -n 19 chromium --headless --no-sandbox --disable-gpu \
    --disable-site-isolation-trials --disable-features=IsolateOrigins,site-per-process \
    --enable-logging=stderr --window-size=1200,2000 --virtual-time-budget=20000 \
    --screenshot=build/apps-shots/demo.png "file://$PWD/build/mcp-app-demo-host.html" \
    2> build/apps-shots/chromium.log
grep -o '"view [0-9]*: [^"]*"' build/apps-shots/chromium.log > build/apps-shots/demo.log || true
views=$(grep -c 'tool result sent' build/apps-shots/demo.log || true)
echo "shot.sh: $views views got their tool result; build/apps-shots/demo.png"
