"""make bench, the Jupyter websocket part: one execute round trip (`1+1`,
from execute_request to its `status: idle`) over a kernel's websocket
channels, p50 and p99, measured interleaved in one run. Every peer runs as
users run it: `store_history=True` (what JupyterLab, Notebook and
jupyter_client send), each gateway with its own kernel configuration
(codebox keeps IPython's history in memory by default; the others on
disk). Against:

  - jupyter_client talking to its own ipykernel directly (ZeroMQ);
  - codebox's /api/kernels/{id}/channels (sandboxed kernel, through its relay);
  - Jupyter Kernel Gateway 2.5.2 as shipped, and patched with TCP_NODELAY
    (as shipped it waits for Nagle's algorithm on every reply); its source
    is not on Debian: set KERNEL_GATEWAY_SRC to a checkout of its 2.5.2 tag
    (it runs on Debian's python3-notebook), or those rows say it is absent;
  - the patched kernel_gateway on a kernel started with codebox's kernel
    arguments (gw_ipykernel: history in memory, no reply sleep, the startup
    code of gateway/core/gw_ipykernel_startup.py), so the two gateways are
    also compared on the same kernel.

Run with Debian's /usr/bin/python3."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import websocket

BIN = os.environ.get("CODEBOX_BIN") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                    "build", "codebox")
N = int(os.environ.get("BENCH_N", "300"))
BLOCKS = int(os.environ.get("BENCH_BLOCKS", "6"))
FLOOR = os.environ.get("CODEBOX_FLOOR") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                        "build", "bench-floor")
KG_SRC = os.environ.get("KERNEL_GATEWAY_SRC", "")

# TCP_NODELAY on every connection, kept on (tornado turns it off again
# between requests, which includes the websocket's own handshake)
NODELAY_PATCH = """
import sys, tornado.httpserver, tornado.iostream
_set = tornado.iostream.IOStream.set_nodelay
tornado.iostream.IOStream.set_nodelay = lambda self, value: _set(self, True)
_orig = tornado.httpserver.HTTPServer.handle_stream
def handle_stream(self, stream, address):
    stream.set_nodelay(True)
    return _orig(self, stream, address)
tornado.httpserver.HTTPServer.handle_stream = handle_stream
from kernel_gateway import launch_instance
sys.exit(launch_instance())
"""


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None):
    r = urllib.request.Request(url, method=method, data=json.dumps(body).encode()
                               if body is not None else None,
                               headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(r, timeout=120) as resp:
        t = resp.read()
        return json.loads(t) if t else None


def wait_port(port, proc, what):
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("%s did not start" % what)
            time.sleep(0.1)


class WsPeer:
    """A gateway's kernel over its websocket (JSON text frames)."""

    def __init__(self, base, kernel_name="python3"):
        self.kernel = http("POST", base + "/api/kernels", {"name": kernel_name})
        self.ws = websocket.create_connection(
            base.replace("http", "ws") + "/api/kernels/%s/channels" % self.kernel["id"],
            timeout=60)
        self.ws.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def round_trip(self):
        mid = uuid.uuid4().hex
        t = time.perf_counter()
        self.ws.send(json.dumps({
            "header": {"msg_id": mid, "msg_type": "execute_request", "session": "bench",
                       "username": "b", "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": "1+1", "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False}}))
        while True:
            m = json.loads(self.ws.recv())
            if (m.get("msg_type") == "status" and m["parent_header"].get("msg_id") == mid
                    and m["content"]["execution_state"] == "idle"):
                return time.perf_counter() - t


class DirectPeer:
    """jupyter_client on its own ipykernel."""

    def __init__(self):
        from jupyter_client import KernelManager
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel()
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def round_trip(self):
        t = time.perf_counter()
        mid = self.kc.execute("1+1", store_history=True)
        while True:
            m = self.kc.get_iopub_msg(timeout=60)
            if (m["msg_type"] == "status" and m["parent_header"].get("msg_id") == mid
                    and m["content"]["execution_state"] == "idle"):
                return time.perf_counter() - t

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def start_codebox(env=None):
    state = tempfile.mkdtemp(prefix="codebox-bench-ws-")
    os.chmod(state, 0o755)
    p = subprocess.Popen([BIN, "serve", "--port", "0", "--state-dir", state + "/s"],
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ, **(env or {})))
    while True:
        line = p.stderr.readline()
        m = re.search(r"serving http://127\.0\.0\.1:(\d+)", line)
        if m:
            subprocess.Popen(["cat"], stdin=p.stderr, stdout=subprocess.DEVNULL)
            return p, "http://127.0.0.1:%s" % m.group(1)
        if not line and p.poll() is not None:
            raise SystemExit("codebox serve did not start")


def codebox_kernelspec_path():
    """A JUPYTER_PATH folder with the kernelspec `codebox-python3`: Debian's
    ipykernel with the arguments codebox gives it (`bench-floor
    --kernel-args` prints them, from gw_ipykernel.c by the default
    settings)."""
    out = subprocess.run([FLOOR, "--kernel-args"], capture_output=True, text=True,
                         timeout=60, check=True)
    folder = tempfile.mkdtemp(prefix="codebox-bench-spec-")
    os.makedirs(os.path.join(folder, "kernels", "codebox-python3"))
    spec = {"display_name": "Python 3 (codebox's arguments)", "language": "python",
            "argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
            + json.loads(out.stdout)}
    with open(os.path.join(folder, "kernels", "codebox-python3", "kernel.json"), "w") as f:
        json.dump(spec, f)
    return folder


def start_kernel_gateway(patched, jupyter_path=None):
    port = free_port()
    args = ["--KernelGatewayApp.port=%d" % port, "--KernelGatewayApp.ip=127.0.0.1"]
    env = dict(os.environ, PYTHONPATH=KG_SRC, JUPYTER_RUNTIME_DIR=tempfile.mkdtemp())
    if jupyter_path:
        env["JUPYTER_PATH"] = jupyter_path
    cmd = ([sys.executable, "-c", NODELAY_PATCH] if patched
           else [sys.executable, "-m", "kernel_gateway"]) + args
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, p, "kernel_gateway")
    return p, "http://127.0.0.1:%d" % port


def main():
    procs, peers = [], []
    try:
        cb, cb_url = start_codebox()
        procs.append(cb)
        peers.append(("codebox websocket", WsPeer(cb_url)))
        cb2, cb2_url = start_codebox({"CODEBOX_KERNEL_HISTORY": "disk"})
        procs.append(cb2)
        peers.append(("codebox websocket, history on disk", WsPeer(cb2_url)))
        peers.append(("jupyter_client direct", DirectPeer()))
        if KG_SRC and os.path.isdir(os.path.join(KG_SRC, "kernel_gateway")):
            for patched in (False, True):
                p, url = start_kernel_gateway(patched)
                procs.append(p)
                peers.append(("kernel_gateway 2.5.2" + (" + TCP_NODELAY" if patched else ""),
                              WsPeer(url)))
            p, url = start_kernel_gateway(True, codebox_kernelspec_path())
            procs.append(p)
            peers.append(("kernel_gateway + TCP_NODELAY, codebox's kernel",
                          WsPeer(url, "codebox-python3")))
        samples = {name: [] for name, _ in peers}
        for peer_name, peer in peers:
            for _ in range(20):
                peer.round_trip()     # warm up
        per_block = max(1, N // BLOCKS)
        for _ in range(BLOCKS):
            for peer_name, peer in peers:
                n = per_block if "TCP_NODELAY" in peer_name or "kernel_gateway" not in peer_name \
                    else max(1, per_block // 10)    # shipped: ~40 ms each
                samples[peer_name] += [peer.round_trip() for _ in range(n)]
        base = pct(samples["jupyter_client direct"], 50)
        print("\nJupyter websocket exec round trip (1+1 to its idle), %d rounds interleaved in "
              "%d blocks" % (N, BLOCKS))
        print("%-48s %10s %10s %8s" % ("", "p50", "p99", "x direct"))
        for name, _ in peers:
            v = samples[name]
            print("%-48s %8.2f ms %8.2f ms %7.2fx" % (name, pct(v, 50) * 1e3, pct(v, 99) * 1e3,
                                                     pct(v, 50) / base))
        if "kernel_gateway 2.5.2 + TCP_NODELAY" in samples:
            kg = pct(samples["kernel_gateway 2.5.2 + TCP_NODELAY"], 50)
            print("codebox / patched kernel_gateway (p50): %.2fx"
                  % (pct(samples["codebox websocket"], 50) / kg))
            same = pct(samples["kernel_gateway + TCP_NODELAY, codebox's kernel"], 50)
            print("codebox / patched kernel_gateway on the same kernel (p50): %.2fx"
                  % (pct(samples["codebox websocket"], 50) / same))
        else:
            print("kernel_gateway rows: set KERNEL_GATEWAY_SRC to a checkout of "
                  "jupyter-server/kernel_gateway at tag 2.5.2 (needs python3-notebook)")
    finally:
        for name, peer in peers:
            if isinstance(peer, DirectPeer):
                peer.close()
        for p in procs:
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
