"""serve.py: `codebox serve` on a free port with a state folder of its own,
for the benchmarks (bench.py, first_cell.py). Run by their main thread."""

import os
import re
import subprocess
import tempfile
import threading


def start(binary, env=None, prefix="codebox-bench-"):
    """Starts the gateway; returns (process, port, state folder). Its
    stderr is read to the end by a thread of its own once the port is
    known, so a chatty gateway never blocks on a full pipe, and kept in
    STATE/gateway.log."""
    state = tempfile.mkdtemp(prefix=prefix)
    os.chmod(state, 0o755)
    p = subprocess.Popen([binary, "serve", "--port", "0", "--state-dir", state + "/s"],
                         env=dict(os.environ, **(env or {})), stderr=subprocess.PIPE, text=True)
    while True:
        line = p.stderr.readline()
        m = re.search(r"serving http://127\.0\.0\.1:(\d+)", line)
        if m:
            break
        if not line:
            p.kill()
            raise RuntimeError("codebox serve did not start")
    log = open(os.path.join(state, "gateway.log"), "w", buffering=1)
    threading.Thread(target=lambda: [log.write(line) for line in p.stderr], daemon=True).start()
    return p, int(m.group(1)), state
