"""The kernel-proxy (`codebox-sidecar kernel-proxy FRONT KERNEL -- ARGV`)
with a stand-in kernel of the test's: it listens on the gateway's Unix
sockets, holds a connection made before the kernel listens, passes the
bytes both ways unchanged, ignores SIGINT and exits as the kernel did.
Real kernels through it: the JavaScript sessions of test_sandbox.py and
others."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

SIDECAR = os.path.join(os.path.dirname(os.environ.get("CODEBOX_BIN", "build/codebox")),
                       "codebox-sidecar")
CHANNELS = ("shell", "iopub", "stdin", "control", "hb")

# listens late (after 0.5 s) on the five ports, echoes what each
# connection sends, and exits 5 once one sends b"quit"
KERNEL = r"""
import os, selectors, socket, sys, time
time.sleep(0.5)
sel = selectors.DefaultSelector()
for port in sys.argv[1:]:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(port))); s.listen(8); sel.register(s, selectors.EVENT_READ, None)
while True:
    for key, _ in sel.select():
        if key.data is None:
            c, _ = key.fileobj.accept(); sel.register(c, selectors.EVENT_READ, "c")
            continue
        data = key.fileobj.recv(65536)
        if not data:
            sel.unregister(key.fileobj); key.fileobj.close(); continue
        if data == b"quit":
            os._exit(5)
        key.fileobj.sendall(data)
"""


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def connection_file(path, transport, ip, ports):
    info = {"transport": transport, "ip": ip, "key": "k" * 64, "signature_scheme": "hmac-sha256"}
    info.update({"%s_port" % ch: port for ch, port in zip(CHANNELS, ports)})
    with open(path, "w") as f:
        json.dump(info, f)


@pytest.fixture
def proxy():
    with tempfile.TemporaryDirectory() as tmp:
        ports = free_ports(5)
        connection_file(os.path.join(tmp, "front.json"), "ipc", os.path.join(tmp, "k"),
                        [1, 2, 3, 4, 5])
        connection_file(os.path.join(tmp, "back.json"), "tcp", "127.0.0.1", ports)
        kernel = os.path.join(tmp, "kernel.py")
        with open(kernel, "w") as f:
            f.write(KERNEL)
        p = subprocess.Popen([SIDECAR, "kernel-proxy", os.path.join(tmp, "front.json"),
                              os.path.join(tmp, "back.json"), "--", sys.executable, kernel]
                             + [str(x) for x in ports], stderr=subprocess.PIPE, text=True)
        paths = [os.path.join(tmp, "k-%d" % i) for i in range(1, 6)]
        deadline = time.time() + 10
        while not all(os.path.exists(x) for x in paths) and time.time() < deadline:
            time.sleep(0.01)
        yield p, paths
        if p.poll() is None:
            p.kill()
            p.wait()


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    return s


def test_bytes_pass_both_ways_also_for_a_connection_made_before_the_kernel_listens(proxy):
    p, paths = proxy
    early = connect(paths[0])       # the kernel sleeps 0.5 s before it listens
    early.sendall(b"\xff\x00greeting")
    assert early.recv(100) == b"\xff\x00greeting"
    others = [connect(x) for x in paths[1:]]
    big = os.urandom(300_000)       # more than one buffer's worth each way
    for s in others:
        s.sendall(big)
        got = b""
        while len(got) < len(big):
            got += s.recv(1 << 20)
        assert got == big
    two = connect(paths[1])         # a second connection on a channel
    two.sendall(b"again")
    assert two.recv(100) == b"again"
    assert p.poll() is None


def test_it_ignores_sigint_and_exits_as_the_kernel_did(proxy):
    p, paths = proxy
    s = connect(paths[4])
    s.sendall(b"ping")
    assert s.recv(100) == b"ping"
    p.send_signal(signal.SIGINT)    # the kernel is signalled directly, not through it
    time.sleep(0.3)
    assert p.poll() is None
    s.sendall(b"quit")
    assert p.wait(10) == 5, p.stderr.read()


def test_a_kernel_side_that_is_not_tcp_is_refused():
    with tempfile.TemporaryDirectory() as tmp:
        front, back = os.path.join(tmp, "front.json"), os.path.join(tmp, "back.json")
        connection_file(front, "ipc", os.path.join(tmp, "k"), [1, 2, 3, 4, 5])
        connection_file(back, "ipc", os.path.join(tmp, "j"), [1, 2, 3, 4, 5])
        r = subprocess.run([SIDECAR, "kernel-proxy", front, back, "--", "true"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode != 0 and "must be tcp" in r.stderr, r
