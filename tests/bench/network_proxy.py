"""What the kernels' network proxy costs (CODEBOX_NETWORK=on, issue 39):
a 200 MB download from a server at a public address (in a network
namespace this script makes, behind a veth pair), by curl and by urllib,
run on the host directly and from kernel code in the sandbox (through
kernel-net-bridge and the relay's proxy); prints the best of three each
and the ratio. Needs root (ip netns).

    make && /usr/bin/python3 tests/bench/network_proxy.py
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = os.environ.get("CODEBOX_BIN") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                    "build", "codebox")
NS, FAR, PORT, SIZE = "cbx-bench-%d" % os.getpid(), "11.98.0.2", 8097, 200_000_000
MEASURE = """
import subprocess, time, urllib.request
url = 'http://%s:%d/big.bin'
best = {}
for i in range(3):
    t = time.monotonic(); n = len(urllib.request.urlopen(url).read())
    assert n == %d
    best['urllib'] = min(best.get('urllib', 99), time.monotonic() - t)
    out = subprocess.run(['curl', '-sf', '-o', '/dev/null', '-w', '%%{time_total}', url],
                         capture_output=True, text=True, check=True).stdout
    best['curl'] = min(best.get('curl', 99), float(out))
print(best)
""" % (FAR, PORT, SIZE)


def sh(*args):
    subprocess.run(args, check=True, capture_output=True)


def host_run():
    env = dict(os.environ, no_proxy="*")
    out = subprocess.run(["/usr/bin/python3", "-c", MEASURE], env=env, check=True,
                         capture_output=True, text=True).stdout
    return eval(out)


def kernel_run():
    state = tempfile.mkdtemp(prefix="codebox-netbench-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
    env.update(CODEBOX_SANDBOX="bwrap", CODEBOX_NETWORK="on", CODEBOX_POOL_SIZE="0")
    proc = subprocess.Popen([BIN, "serve", "--port", "18951", "--state-dir", state], env=env,
                            stderr=subprocess.DEVNULL)
    try:
        def call(method, path, body=None):
            req = urllib.request.Request("http://127.0.0.1:18951" + path, method=method,
                                         data=json.dumps(body).encode() if body else None,
                                         headers={"Content-Type": "application/json"})
            return json.load(urllib.request.urlopen(req, timeout=300))
        for _ in range(100):
            try:
                call("GET", "/healthz")
                break
            except OSError:
                time.sleep(0.1)
        call("POST", "/sessions", {"session_id": "b"})
        rid = call("POST", "/execute", {"session_id": "b", "code": MEASURE})["request_id"]
        res = call("GET", "/execute/%s/results?wait=280" % rid)
        text = "".join(o.get("content", "") for o in res["output"] if o["type"] == "stream")
        return eval(text)
    finally:
        proc.terminate()
        proc.wait()


def main():
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "big.bin"), "wb") as f:
            f.write(os.urandom(SIZE))
        sh("ip", "netns", "add", NS)
        server = None
        try:
            sh("ip", "link", "add", "cbxbench", "type", "veth", "peer", "name", "far0",
               "netns", NS)
            sh("ip", "addr", "add", "11.98.0.1/24", "dev", "cbxbench")
            sh("ip", "link", "set", "cbxbench", "up")
            for args in (["addr", "add", FAR + "/24", "dev", "far0"], ["link", "set", "far0", "up"],
                         ["link", "set", "lo", "up"]):
                sh("ip", "netns", "exec", NS, "ip", *args)
            server = subprocess.Popen(["ip", "netns", "exec", NS, "/usr/bin/python3", "-m",
                                       "http.server", str(PORT), "--bind", FAR], cwd=root,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
            host, kernel = host_run(), kernel_run()
        finally:
            if server:
                server.kill()
            subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    print("network proxy: best of 3 downloads of %d MB" % (SIZE // 1_000_000))
    print("%-8s %10s %12s %7s" % ("client", "host (s)", "kernel (s)", "ratio"))
    for client in ("curl", "urllib"):
        print("%-8s %10.3f %12.3f %7.2f" % (client, host[client], kernel[client],
                                            kernel[client] / host[client]))


if __name__ == "__main__":
    sys.exit(main())
