#!/usr/bin/python3
"""Durable sessions at scale (issue 42), not part of `make test`: a server
restarted on a state folder that keeps N sessions (default 1000), of which
LIVE (default 8) are then woken. It measures the start (the log's
`state event=loaded ... ms=`, and the time to /healthz), the gateway's RSS,
the state folder's disk use, and the time to wake one paused session (an
execution's round trip, the kernel's start included).

The N kept sessions are made from one real session: its record and folder
(as root, its file system image, copied sparse) cloned N-1 times while no
server runs, as a server would have kept them.

    CODEBOX_BIN=build/codebox /usr/bin/python3 tests/bench/durable.py [N] [LIVE]
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = os.environ.get("CODEBOX_BIN", "build/codebox")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
LIVE = int(sys.argv[2]) if len(sys.argv) > 2 else 8
PORT = 18790
ENV = dict({k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")},
           CODEBOX_POOL_SIZE="0", CODEBOX_IDLE_PAUSE="0", CODEBOX_DISK_QUOTA_MB="64",
           CODEBOX_MAX_SESSIONS=str(LIVE), CODEBOX_MAX_STORED_SESSIONS=str(max(N, 1024)))


def req(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request("http://127.0.0.1:%d%s" % (PORT, path), data=data, method=method,
                               headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(r, timeout=300) as f:
        return json.loads(f.read() or b"null")


def run(sid, code):
    rid = req("POST", "/execute", {"session_id": sid, "code": code})["request_id"]
    return req("GET", "/execute/%s/results?wait=120" % rid)


def start(state, log):
    t0 = time.monotonic()
    p = subprocess.Popen([BIN, "serve", "--port", str(PORT), "--state-dir", state],
                         stdout=open(log, "wb"), stderr=subprocess.STDOUT, env=ENV)
    while True:
        try:
            req("GET", "/healthz")
            return p, time.monotonic() - t0
        except OSError:
            time.sleep(0.02)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def du(path):
    out = subprocess.run(["du", "-sk", path], capture_output=True, text=True).stdout
    return int(out.split()[0])


def clone(state, n):
    """n-1 copies of the kept session 's0' (record, folder, image)."""
    kept = os.path.join(state, ".kept")
    info = json.load(open(os.path.join(kept, "s0", "session.json")))
    image = info.get("disk_image")
    for i in range(1, n):
        sid = "s%d" % i
        shutil.copytree(os.path.join(kept, "s0"), os.path.join(kept, sid))
        info2 = dict(info, session_id=sid)
        if image:
            info2["disk_image"] = "clone-%d.img" % i
            subprocess.run(["cp", "--sparse=always", os.path.join(state, ".disks", image),
                            os.path.join(state, ".disks", info2["disk_image"])], check=True)
            os.mkdir(os.path.join(state, sid))
        else:
            shutil.copytree(os.path.join(state, "s0"), os.path.join(state, sid), symlinks=True)
        with open(os.path.join(kept, sid, "session.json"), "w") as f:
            json.dump(info2, f)


def main():
    tmp = tempfile.mkdtemp(prefix="codebox-durable-")
    os.chmod(tmp, 0o755)
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    p = None
    try:
        p, _ = start(state, os.path.join(tmp, "log0"))
        req("POST", "/sessions", {"session_id": "s0"})
        run("s0", "open('data.txt','w').write('x' * 1000)\nprint('seeded')")
        p.send_signal(signal.SIGTERM)
        p.wait(60)
        # the image is copied once its loop device let go (its last writes in)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and subprocess.run(
                "cat /sys/block/loop*/loop/backing_file 2>/dev/null | grep -q %s" % state,
                shell=True).returncode == 0:
            time.sleep(0.2)
        os.sync()
        t0 = time.monotonic()
        clone(state, N)
        print("cloned %d kept sessions in %.1f s" % (N, time.monotonic() - t0))
        log = os.path.join(tmp, "log1")
        p, up = start(state, log)
        loaded = re.search(r"state event=loaded sessions=(\d+) ms=(\d+)", open(log).read())
        listed = req("GET", "/sessions")["sessions"]
        print("start: %s sessions loaded in %s ms; /healthz after %.2f s; %d listed, %d paused"
              % (loaded.group(1), loaded.group(2), up, len(listed),
                 sum(1 for s in listed if s["status"] == "paused")))
        print("gateway RSS with %d paused: %d KiB" % (N, rss_kib(p.pid)))
        times = []
        for i in range(LIVE):
            t0 = time.monotonic()
            res = run("s%d" % i, "print(len(open('data.txt').read()))")
            times.append(time.monotonic() - t0)
            assert "1000" in json.dumps(res), res
        print("wake one paused session (execution round trip): first %.2f s, median %.2f s"
              % (times[0], sorted(times)[len(times) // 2]))
        print("gateway RSS with %d live, %d paused: %d KiB" % (LIVE, N - LIVE, rss_kib(p.pid)))
        print("state folder on disk: %.1f MiB" % (du(state) / 1024.0))
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        p.wait(120)
        print("clean stop: %.2f s" % (time.monotonic() - t0))
    finally:
        if p and p.poll() is None:
            p.kill()
            p.wait()
        subprocess.run("grep -o ' %s[^ ]*' /proc/self/mountinfo | sort -r | xargs -r -n1 "
                       "umount -l" % tmp, shell=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
