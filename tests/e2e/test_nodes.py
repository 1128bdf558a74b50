"""Many nodes behind HAProxy (deploy/haproxy.cfg as it is) sharing a
session directory (a Redis on loopback): three codebox
nodes, 60 sessions made over REST, MCP 2026-07-28 (Mcp-Param-Session-Id), MCP
2025-11-25 (Mcp-Session-Id) and the Jupyter API (its websocket included)
spread over them and keep their state on every later call, whichever way the call names its session
(path, request id, header, JSON body); a fourth node joins through
HAProxy's runtime API; a token and a signed link work through the router
(the nodes share their settings); a draining node (SIGUSR1) keeps its sessions while
new ones go to the others; a killed node costs only its own sessions, which
are then reported lost (404, session_lost, naming the node) within
seconds, while the others go on."""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import Server, free_port, wait_for
from test_jupyter_kernels import Client, text_of

HERE = os.path.dirname(os.path.abspath(__file__))
CFG = os.path.join(HERE, "..", "..", "deploy", "haproxy.cfg")
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


TOKEN = "tok-nodes"


def start_node(url, name, front_port):
    """A node that knows the router's address as its public URL (so a
    websocket client's Origin, the router's, is its own), with the settings
    every node shares: the tokens (tenant alice) and the URL secret."""
    return Server(env={"CODEBOX_POOL_SIZE": "0", "CODEBOX_DIRECTORY_URL": url,
                       "CODEBOX_NODE_NAME": name,
                       "CODEBOX_PUBLIC_URL": "http://127.0.0.1:%d" % front_port,
                       "CODEBOX_API_TOKENS": "alice:" + TOKEN,
                       "CODEBOX_URL_SECRET": "shared-by-every-node-0123456789"}, token=TOKEN)

pytestmark = pytest.mark.skipif(not os.path.exists(HAPROXY), reason="haproxy not installed")


class Front:
    """HAProxy on deploy/haproxy.cfg in front of the nodes."""

    def __init__(self, nodes, port):
        self.tmp = tempfile.mkdtemp(prefix="codebox-haproxy-")
        self.port = port
        self.sock = os.path.join(self.tmp, "admin.sock")
        env = dict(os.environ, HAPROXY_SOCKET=self.sock,
                   CODEBOX_FRONT="127.0.0.1:%d" % self.port,
                   NODE4="127.0.0.1:%d" % free_port())
        for i, n in enumerate(nodes, 1):
            env["NODE%d" % i] = "127.0.0.1:%d" % n.port
        self.log = open(os.path.join(self.tmp, "haproxy.log"), "wb")
        self.proc = subprocess.Popen([HAPROXY, "-db", "-f", CFG], env=env, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while not self.all_up(len(nodes)):
            assert self.proc.poll() is None, open(self.log.name).read()
            assert time.monotonic() < deadline, self.admin("show servers state")
            time.sleep(0.1)

    def admin(self, command):
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(self.sock)
            s.sendall(command.encode() + b"\n")
            out = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return out.decode()
                out += chunk

    def all_up(self, n):
        try:
            state = self.admin("show stat")
        except OSError:
            return False
        up = [line for line in state.splitlines() if line.startswith("nodes,node")
              and ",UP," in line]
        return len(up) >= n

    def request(self, method, path, body=None, headers=None, token=TOKEN):
        hdrs = dict(headers or {})
        if token:
            hdrs["Authorization"] = "Bearer " + token
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.request(method, path, body=body, headers=hdrs)
            r = conn.getresponse()
            data = r.read()
            ctype = r.headers.get("Content-Type", "")
            if "text/event-stream" in ctype:
                msgs = [json.loads(l[6:]) for l in data.decode().splitlines() if l.startswith("data: ")]
                doc = msgs[-1] if msgs else None
            else:
                try:
                    doc = json.loads(data) if data else None
                except ValueError:
                    doc = data.decode(errors="replace")   # HAProxy's own page
            return r.status, r.headers, doc
        finally:
            conn.close()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def rest_exec(front, session, code):
    status, headers, r = front.request("POST", "/execute", {"session_id": session, "code": code})
    assert status == 202, (status, r)
    assert r["request_id"].startswith(session + "~")
    assert headers["X-Codebox-Session"] == session
    status, headers, res = front.request("GET", "/execute/%s/results?wait=60" % r["request_id"])
    assert status == 200, (status, res)
    assert headers["X-Codebox-Session"] == session
    return res


def stdout_of(res):
    return "".join(o.get("content", "") for o in res["output"] if o.get("type") == "stream")


def mcp26(front, session, code):
    status, headers, r = front.request("POST", "/mcp", {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "exec_code", "arguments": {"session_id": session, "code": code},
            "_meta": META}}, headers={
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call", "Mcp-Name": "exec_code", "Mcp-Param-Session-Id": session})
    assert status == 200, (status, r)
    assert headers["X-Codebox-Session"] == session
    return r["result"]["structuredContent"]


class Mcp25:
    """A 2025-11-25 client: an MCP session, sticky by Mcp-Session-Id."""

    def __init__(self, front):
        self.front = front
        status, headers, r = front.request("POST", "/mcp", {
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "nodes", "version": "1"}}},
            headers={"Accept": "application/json"})
        assert status == 200, r
        self.sid = headers["Mcp-Session-Id"]

    def exec(self, session, code):
        status, _, r = self.front.request("POST", "/mcp", {
            "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "exec_code", "arguments": {"session_id": session, "code": code}}},
            headers={"Accept": "application/json", "Mcp-Session-Id": self.sid,
                     "MCP-Protocol-Version": "2025-11-25"})
        assert status == 200, (status, r)
        return r["result"]["structuredContent"]


def holders(nodes, session):
    """The nodes that hold session (asked directly)."""
    return [i for i, n in enumerate(nodes) if n.get("/sessions/%s" % session).status == 200]


def test_sessions_stick_to_their_node_through_haproxy(redis_url):
    front_port = free_port()
    nodes = [start_node(redis_url, "node%d" % i, front_port) for i in range(1, 4)]
    front = Front(nodes, front_port)
    extra = None
    try:
        rest = ["r%d" % i for i in range(5)]
        for i, s in enumerate(rest):
            status, headers, r = front.request("POST", "/sessions", {"session_id": s})
            assert status == 201, (status, r)
            assert headers["X-Codebox-Session"] == s
            assert stdout_of(rest_exec(front, s, "x = %d\nprint('set')" % i)) == "set\n"
        mcp = ["m%d" % i for i in range(3)]
        for i, s in enumerate(mcp):
            assert mcp26(front, s, "y = %d" % (i * 10))["status"] == "completed"
        old = [Mcp25(front) for _ in range(2)]
        for i, c in enumerate(old):
            assert c.exec("o%d" % i, "z = %d" % (i * 100))["status"] == "completed"
        kernels = []
        for _ in range(3):
            status, headers, k = front.request("POST", "/api/kernels", {"name": "python3"})
            assert status == 201, (status, k)
            assert headers["X-Codebox-Session"] == k["id"]
            kernels.append(k["id"])
        for i, k in enumerate(kernels):
            ws = Client("ws://127.0.0.1:%d/api/kernels/%s/channels" % (front.port, k),
                        header=["Authorization: Bearer " + TOKEN])
            reply, _ = ws.run("k = %d" % i)
            assert reply["content"]["status"] == "ok"
            ws.close()

        # spread over the nodes, each session on exactly one
        where = {s: holders(nodes, s) for s in rest + mcp + ["o%d" % i for i in range(len(old))] + kernels}
        for s, h in where.items():
            assert len(h) == 1, (s, h)
        assert len({h[0] for h in where.values()}) == 3, where

        # every later call finds its state, whichever way it names the session
        for _ in range(2):
            for i, s in enumerate(rest):
                assert stdout_of(rest_exec(front, s, "print(x)")) == "%d\n" % i
                status, headers, _ = front.request("GET", "/sessions/%s" % s)
                assert status == 200 and headers["X-Codebox-Session"] == s
            for i, s in enumerate(mcp):
                assert mcp26(front, s, "print(y)")["stdout"] == "%d\n" % (i * 10)
            for i, c in enumerate(old):
                assert c.exec("o%d" % i, "print(z)")["stdout"] == "%d\n" % (i * 100)
            for i, k in enumerate(kernels):
                status, headers, r = front.request("GET", "/api/kernels/%s" % k)
                assert status == 200 and r["id"] == k
                ws = Client("ws://127.0.0.1:%d/api/kernels/%s/channels" % (front.port, k),
                            header=["Authorization: Bearer " + TOKEN])
                _, out = ws.run("print(k)")
                assert text_of(out) == "%d\n" % i
                ws.close()

        # the shared settings: a token and a signed link work through the
        # router whichever node answers
        assert front.request("GET", "/sessions/r1", token=None)[0] == 401
        rest_exec(front, "r1", "open('output/note.txt', 'w').write('from r1')")
        status, _, listed = front.request("GET", "/sessions/r1/artifacts")
        assert status == 200, listed
        url = {a["filename"]: a for a in listed["artifacts"]}["note.txt"]["url"]
        prefix = "http://127.0.0.1:%d" % front.port
        assert url.startswith(prefix + "/signed/alice/r1/"), url
        conn = http.client.HTTPConnection("127.0.0.1", front.port, timeout=60)
        conn.request("GET", url[len(prefix):])
        r = conn.getresponse()
        assert (r.status, r.read()) == (200, b"from r1")
        conn.close()

        # a fourth node joins through the runtime API and takes new sessions
        extra = start_node(redis_url, "node4", front_port)
        out = front.admin("set server nodes/node4 addr 127.0.0.1 port %d" % extra.port)
        assert "not found" not in out.lower(), out
        front.admin("set server nodes/node4 state ready")
        deadline = time.monotonic() + 15
        while not front.all_up(4):
            assert time.monotonic() < deadline, front.admin("show stat")
            time.sleep(0.1)
        nodes.append(extra)
        late = ["n%d" % i for i in range(4)]
        for i, s in enumerate(late):
            assert mcp26(front, s, "w = %d" % i)["status"] == "completed"
        assert any(holders(nodes, s) == [3] for s in late), {s: holders(nodes, s) for s in late}
        for i, s in enumerate(rest):
            assert stdout_of(rest_exec(front, s, "print(x)")) == "%d\n" % i

        # a node drains (SIGUSR1): new sessions go elsewhere, its own go on
        drained = where["r0"][0]
        nodes[drained].proc.send_signal(signal.SIGUSR1)
        wait_for(lambda: nodes[drained].get("/healthz").json()["status"] == "draining",
                 "never draining")
        fresh = ["d%d" % i for i in range(3)]
        for s in fresh:
            status, headers, r = front.request("POST", "/sessions", {"session_id": s})
            assert status == 201, (status, r)
        for s in fresh:
            assert drained not in holders(nodes, s), (s, holders(nodes, s))
            assert stdout_of(rest_exec(front, s, "print('fresh')")) == "fresh\n"
        assert stdout_of(rest_exec(front, "r0", "print(x)")) == "0\n"
        nodes[drained].proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: nodes[drained].get("/healthz").json()["status"] == "ok", "still draining")

        # every node lists every session (the directory)
        everywhere = set(rest + mcp + late)
        for n in nodes:
            listed = wait_for(lambda: (lambda got: got if everywhere <= got else None)(
                {s["session_id"] for s in n.get("/sessions").json()["sessions"]}),
                "a node never listed every session")
            assert everywhere <= listed

        # a node dies: its sessions are reported lost within seconds, the
        # others go on
        victim = where["r0"][0]
        lost = [s for s, h in where.items() if h == [victim] and s in rest]
        kept = [s for s, h in where.items() if h != [victim] and s in rest]
        assert lost and kept
        nodes[victim].expect_dead = True
        nodes[victim].proc.kill()
        t0 = time.monotonic()
        while True:
            status, _, r = front.request("GET", "/sessions/%s" % lost[0])
            if status == 404 and r["error"]["code"] == "session_lost":
                break
            # meanwhile: the owner is named (421) until the directory sees
            # it gone; never a new kernel
            assert status in (421, 502, 503), (status, r)
            assert time.monotonic() - t0 < 30, (status, r)
            time.sleep(0.2)
        assert "node%d" % (victim + 1) in r["error"]["message"]
        # each node sees it within its next look at the directory; until
        # then it names the dead owner (421)
        for s in lost:
            answer = wait_for(lambda: (lambda a: a if a[0] == 404 else None)(
                front.request("POST", "/execute", {"session_id": s, "code": "1"})), s, timeout=10)
            assert answer[2]["error"]["code"] == "session_lost", (s, answer)
        for s in kept:
            i = rest.index(s)
            assert stdout_of(rest_exec(front, s, "print(x)")) == "%d\n" % i
    finally:
        front.stop()
        for n in nodes + ([extra] if extra and extra not in nodes else []):
            if n.proc.poll() is None:
                n.stop()
            else:
                n.stop(sig=signal.SIGKILL)
