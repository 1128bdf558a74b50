#!/usr/bin/env bash
# shot.sh: builds the demo host around build/mcp-app-outputs.html and opens
# it in Debian's headless Chromium, each view fed through the ext-apps
# AppBridge. Without arguments: demo/sample-result.json, one sandboxed frame
# per output, build/apps-shots/demo.png. With --real: a result that
# build/codebox itself answered (from_codebox.mjs), the whole result in one
# frame as a host shows it, build/apps-shots/real.png. With --hostile:
# demo/hostile-result.json (kernel HTML and Markdown trying to run script)
# in one frame, build/apps-shots/hostile.png; fails if any payload logged
# "XSS-RAN:" (its script ran) or the view did not get its result. Also
# NAME.log: the host's console lines per view (initialized, tool result
# sent, size). `make apps-demo` runs it without arguments.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
command -v chromium >/dev/null || { echo "shot.sh: chromium is missing (apt-get install chromium)" >&2; exit 1; }
mkdir -p build/apps-shots
name=demo query="" size=1200,2000 result=""
if [ "${1:-}" = --real ]; then
    name=real query="?single" size=900,640 result=build/apps-shots/real-result.json
    nice -n 19 node gateway/mcp/apps/demo/from_codebox.mjs "$result"
elif [ "${1:-}" = --hostile ]; then
    name=hostile query="?single" size=900,700 result=gateway/mcp/apps/demo/hostile-result.json
fi
nice -n 19 node gateway/mcp/apps/demo/build-demo.mjs $result
# one process for every frame: headless screenshots miss out-of-process frames
timeout 120 nice -n 19 chromium --headless --no-sandbox --disable-gpu \
    --disable-site-isolation-trials --disable-features=IsolateOrigins,site-per-process \
    --enable-logging=stderr --window-size=$size --virtual-time-budget=20000 \
    --screenshot=build/apps-shots/$name.png "file://$PWD/build/mcp-app-demo-host.html$query" \
    2> build/apps-shots/chromium.log
grep -o '"view [0-9]*: [^"]*"\|"XSS-RAN:[^"]*"' build/apps-shots/chromium.log \
    > build/apps-shots/$name.log || true
views=$(grep -c 'tool result sent' build/apps-shots/$name.log || true)
echo "shot.sh: $views views got their tool result; build/apps-shots/$name.png"
if [ $name = hostile ]; then
    ran=$(grep -c 'XSS-RAN:' build/apps-shots/$name.log || true)
    refused=$(grep -c 'Content Security Policy' build/apps-shots/chromium.log || true)
    echo "shot.sh: $ran payloads ran; $refused CSP refusals in build/apps-shots/chromium.log"
    [ "$ran" = 0 ] && [ "$views" = 1 ] || { grep 'XSS-RAN:' build/apps-shots/$name.log >&2; exit 1; }
fi
