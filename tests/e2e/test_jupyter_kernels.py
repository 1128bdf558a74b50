"""The Jupyter kernel gateway API (issue 17): /api/kernels, their websocket
channels and /api/sessions, driven by Jupyter's own clients from Debian
(jupyter_server's GatewayKernelManager under nbclient, jupyter_server
itself with --gateway-url) and by direct websocket clients
(python3-websocket) for what those do not reach: several clients on one
kernel, stdin, comms, tokens, Origin, the v1 binary subprotocol and
hostile frames."""
import json
import os
import socket
import struct
import subprocess
import time
import uuid

import pytest
import websocket

from conftest import asan, peak_rss_while, rest_run, stream_of, vm_rss_kib, wait_port, wait_until_quiet

ENV = {"CODEBOX_POOL_SIZE": "0"}
PY = "/usr/bin/python3"


def ws_url(s, kid, query=""):
    return "ws://127.0.0.1:%d/api/kernels/%s/channels%s" % (s.port, kid, query)


def start_kernel(s, body=None, **kw):
    r = s.post("/api/kernels", body if body is not None else {"name": "python3"}, **kw)
    assert r.status == 201, r.text
    return r.json()


class Client:
    """A Jupyter websocket client speaking the JSON text protocol."""

    def __init__(self, url, **kw):
        self.ws = websocket.create_connection(url, timeout=60, **kw)
        self.seen = []

    def send(self, msg_type, content, channel="shell"):
        mid = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": mid, "msg_type": msg_type, "session": "test", "username": "t",
                       "version": "5.3", "date": "2026-01-01T00:00:00Z"},
            "parent_header": {}, "metadata": {}, "content": content, "channel": channel}))
        return mid

    def execute(self, code, allow_stdin=False):
        return self.send("execute_request", {"code": code, "silent": False,
                                             "store_history": True, "user_expressions": {},
                                             "allow_stdin": allow_stdin, "stop_on_error": True})

    def recv(self):
        m = json.loads(self.ws.recv())
        self.seen.append(m)
        return m

    def until(self, pred, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.recv()
            if pred(m):
                return m
        raise AssertionError("timed out; seen %s" % [x["msg_type"] for x in self.seen])

    def run(self, code):
        """Executes code; returns (reply, iopub messages of it)."""
        mid = self.execute(code)
        out, reply = [], None
        while True:
            m = self.recv()
            if m["parent_header"].get("msg_id") != mid:
                continue
            if m["channel"] == "shell":
                reply = m
            elif m["channel"] == "iopub":
                out.append(m)
                if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                    if reply is None:
                        reply = self.until(lambda x: x["channel"] == "shell"
                                           and x["parent_header"].get("msg_id") == mid)
                    return reply, out

    def close(self):
        self.ws.close()


def text_of(out, name="stdout"):
    return "".join(m["content"]["text"] for m in out
                   if m["msg_type"] == "stream" and m["content"]["name"] == name)


NOTEBOOK_RUNNER = r"""
import json, sys
import nbformat
from nbclient import NotebookClient
from jupyter_server.gateway.managers import GatewayClient, GatewayKernelManager
GatewayClient.instance(url=sys.argv[1])
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(c) for c in [
    "print('hello from codebox')",
    "import sys; print('to stderr', file=sys.stderr)",
    "21 * 2",
    "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3]); plt.show()",
]]
NotebookClient(nb, kernel_manager_class=GatewayKernelManager, kernel_name="python3",
               timeout=120).execute()
print(json.dumps(nb.cells))
"""


def test_nbclient_runs_a_notebook_through_gateway_kernel_manager(server_factory):
    s = server_factory(env=ENV)
    p = subprocess.run([PY, "-c", NOTEBOOK_RUNNER, "http://127.0.0.1:%d" % s.port],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:] + s.log_tail()
    cells = json.loads(p.stdout.splitlines()[-1])
    outs = [c["outputs"] for c in cells]
    assert [c["execution_count"] for c in cells] == [1, 2, 3, 4]
    assert outs[0] == [{"output_type": "stream", "name": "stdout",
                        "text": "hello from codebox\n"}]
    assert outs[1][0]["name"] == "stderr" and outs[1][0]["text"] == "to stderr\n"
    assert outs[2][0]["output_type"] == "execute_result"
    assert outs[2][0]["data"]["text/plain"] == "42" and outs[2][0]["execution_count"] == 3
    images = [o for o in outs[3] if o["output_type"] == "display_data"
              and "image/png" in o["data"]]
    assert images and len(images[0]["data"]["image/png"]) > 1000, outs[3]
    # the manager shut its kernel down at the end: nothing is left
    assert s.get("/api/kernels").json() == []


def test_list_get_interrupt_restart_delete(server_factory):
    s = server_factory(env=ENV)
    k = start_kernel(s)
    assert set(k) == {"id", "name", "last_activity", "execution_state", "connections"}
    assert k["name"] == "python3" and k["connections"] == 0
    assert k["last_activity"].endswith("Z") and k["last_activity"][:2] == "20"
    assert [x["id"] for x in s.get("/api/kernels").json()] == [k["id"]]
    c = Client(ws_url(s, k["id"]))
    # the switched connection reaches the loop just after the client has its 101
    deadline = time.monotonic() + 5
    while s.get("/api/kernels/" + k["id"]).json()["connections"] != 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)

    # interrupt: a sleeping cell stops with KeyboardInterrupt
    mid = c.execute("import time; print('sleeping', flush=True); time.sleep(60)")
    # (ipykernel ignores SIGINT until the cell runs: wait for its output)
    c.until(lambda m: m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == mid)
    assert s.get("/api/kernels/" + k["id"]).json()["execution_state"] == "busy"
    t = time.monotonic()
    assert s.post("/api/kernels/%s/interrupt" % k["id"]).status == 204
    reply = c.until(lambda m: m["channel"] == "shell" and m["parent_header"]["msg_id"] == mid)
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - t < 30

    # restart: state is lost; the websocket stays and hears "restarting"
    c.run("x = 41")
    r = s.post("/api/kernels/%s/restart" % k["id"])
    assert r.status == 200 and r.json()["id"] == k["id"]
    c.until(lambda m: m["msg_type"] == "status"
            and m["content"]["execution_state"] == "restarting")
    deadline = time.monotonic() + 60
    while s.get("/api/kernels/" + k["id"]).json()["execution_state"] not in ("idle", "busy"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    reply, out = c.run("x")
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "NameError"

    # delete: gone from the list, 404 after, the websocket is closed
    assert s.delete("/api/kernels/" + k["id"]).status == 204
    assert s.get("/api/kernels").json() == []
    assert s.get("/api/kernels/" + k["id"]).status == 404
    assert s.post("/api/kernels/%s/interrupt" % k["id"]).status == 404
    for _ in range(1000):
        op, data = c.ws.recv_data(control_frame=True)
        if op == websocket.ABNF.OPCODE_CLOSE:
            assert struct.unpack("!H", data[:2])[0] == 1001, data
            break
    else:
        raise AssertionError("the websocket was not closed")
    assert s.get("/api/kernels/nope/channels",
                 headers={"Upgrade": "websocket", "Connection": "Upgrade",
                          "Sec-WebSocket-Version": "13",
                          "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}).status == 404
    assert s.post("/api/kernels", {"name": "no-such-kernel"}).status == 404
    assert s.post("/api/kernels", "{not json").status == 400


def test_several_clients_share_a_kernel_with_an_agent(server_factory):
    """iopub to every client; each reply to the client that asked; the
    kernel's id is a session_id for REST; a client that leaves cancels
    nothing."""
    s = server_factory(env=ENV)
    k = start_kernel(s)
    a, b = Client(ws_url(s, k["id"])), Client(ws_url(s, k["id"]))
    reply, out = a.run("shared = 'from a'; print(shared)")
    assert text_of(out) == "from a\n"
    # b saw a's output on iopub but not a's reply
    seen_b = []
    b.ws.settimeout(5)
    while not any(m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                  and m["parent_header"].get("msg_id") == reply["parent_header"]["msg_id"]
                  for m in seen_b):
        seen_b.append(b.recv())
    assert any(m["msg_type"] == "stream" for m in seen_b)
    assert not any(m["channel"] == "shell" for m in seen_b)
    # b's own request is answered to b only
    mid = b.send("kernel_info_request", {})
    info = b.until(lambda m: m["channel"] == "shell" and m["parent_header"]["msg_id"] == mid)
    assert info["msg_type"] == "kernel_info_reply"
    # an agent over REST uses the same kernel (and its state)
    res = rest_run(s, k["id"], "print(shared)")
    assert res["status"] == "completed" and stream_of(res) == "from a\n"
    # ...and the browser clients see the agent's output on iopub
    a.until(lambda m: m["msg_type"] == "stream" and m["content"]["text"] == "from a\n"
            and m["parent_header"]["msg_id"] != reply["parent_header"]["msg_id"])
    # a leaves in the middle of a run: b still gets its end
    mid = a.execute("import time; time.sleep(1); print('done')")
    a.close()
    b.until(lambda m: m["msg_type"] == "stream" and m["content"]["text"] == "done\n"
            and m["parent_header"]["msg_id"] == mid)
    assert s.get("/api/kernels/" + k["id"]).json()["connections"] == 1
    b.close()


def test_stdin_goes_to_the_client_that_allowed_it(server_factory):
    s = server_factory(env=ENV)
    k = start_kernel(s)
    a, b = Client(ws_url(s, k["id"])), Client(ws_url(s, k["id"]))
    mid = a.execute("name = input('who? '); print('hello', name)", allow_stdin=True)
    req = a.until(lambda m: m["channel"] == "stdin")
    assert req["msg_type"] == "input_request" and req["content"]["prompt"] == "who? "
    a.send("input_reply", {"value": "codebox"}, channel="stdin")
    a.until(lambda m: m["msg_type"] == "stream" and m["content"]["text"] == "hello codebox\n")
    b.ws.settimeout(3)
    try:
        while True:
            assert b.recv()["channel"] != "stdin"
    except websocket.WebSocketTimeoutException:
        pass
    assert mid


COMM_TARGET = """
def _echo(comm, open_msg):
    comm.send({'opened': open_msg['content']['data']})
    @comm.on_msg
    def _(msg):
        comm.send({'echo': msg['content']['data']})
get_ipython().kernel.comm_manager.register_target('echo', _echo)
"""


def test_comm_round_trip(server_factory):
    """Comm messages (ipywidgets' transport) both ways."""
    s = server_factory(env=ENV)
    k = start_kernel(s)
    c = Client(ws_url(s, k["id"]))
    reply, _ = c.run(COMM_TARGET)
    assert reply["content"]["status"] == "ok"
    comm_id = uuid.uuid4().hex
    c.send("comm_open", {"comm_id": comm_id, "target_name": "echo", "data": {"x": 1}})
    m = c.until(lambda m: m["msg_type"] == "comm_msg")
    assert m["content"]["comm_id"] == comm_id and m["content"]["data"] == {"opened": {"x": 1}}
    c.send("comm_msg", {"comm_id": comm_id, "data": {"ping": [1, 2, 3]}})
    m = c.until(lambda m: m["msg_type"] == "comm_msg" and "echo" in m["content"]["data"])
    assert m["content"]["data"] == {"echo": {"ping": [1, 2, 3]}}
    c.close()


def test_control_channel_while_a_cell_runs(server_factory):
    """Control requests are answered while a cell runs (codebox's IPython
    kernels handle them on the control thread as they come, without the
    per-request round trip through it that ipykernel 6.17 makes), and an
    interrupt_request on control stops the cell."""
    s = server_factory(env=ENV)
    k = start_kernel(s)
    c = Client(ws_url(s, k["id"]))
    reply, _ = c.run("1 + 1")
    assert reply["content"]["status"] == "ok"
    started = time.monotonic()
    cell = c.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
    c.until(lambda m: m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == cell)
    info = c.send("kernel_info_request", {}, channel="control")
    m = c.until(lambda m: m["channel"] == "control" and m["parent_header"].get("msg_id") == info)
    assert m["msg_type"] == "kernel_info_reply", m
    assert m["content"]["status"] == "ok", m
    stop = c.send("interrupt_request", {}, channel="control")
    m = c.until(lambda m: m["channel"] == "control" and m["parent_header"].get("msg_id") == stop)
    assert m["msg_type"] == "interrupt_reply", m
    # the cell's reply and its idle, in either order: after an error reply
    # ipykernel aborts the execute requests that reach it before it is done
    # with the failed one (stop_on_error, which this client leaves on, as
    # JupyterLab does), so like Jupyter's clients this one waits for the idle
    ended = {}

    def reply_and_idle(m):
        if m["parent_header"].get("msg_id") != cell:
            return False
        if m["channel"] == "shell":
            ended["reply"] = m
        elif m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            ended["idle"] = m
        return len(ended) == 2

    c.until(reply_and_idle)
    m = ended["reply"]
    assert m["content"]["status"] == "error" and m["content"]["ename"] == "KeyboardInterrupt", m
    assert time.monotonic() - started < 30
    reply, out = c.run("print(6 * 7)")
    assert reply["content"]["status"] == "ok" and text_of(out) == "42\n"
    c.close()


def test_a_failed_cell_aborts_what_waited_not_what_follows(server_factory):
    """stop_on_error: the cells sent while a failing cell runs are aborted;
    a cell sent on seeing the failed cell's idle runs (ipykernel ended the
    aborting a loop turn later, and now and then aborted that cell too)."""
    s = server_factory(env=ENV)
    k = start_kernel(s)
    c = Client(ws_url(s, k["id"]))
    for _ in range(5):
        failing = c.execute("import time\ntime.sleep(0.3)\n1 / 0")
        waiting = [c.execute("print('never')") for _ in range(2)]
        replies, idle = {}, set()

        def all_replied(m):
            mid = m["parent_header"].get("msg_id")
            if m["channel"] == "shell" and mid in [failing] + waiting:
                replies[mid] = m
            if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                idle.add(mid)
            return len(replies) == 3 and idle >= {failing} | set(waiting)

        c.until(all_replied)
        assert replies[failing]["content"]["ename"] == "ZeroDivisionError", replies
        assert [replies[w]["content"]["status"] for w in waiting] == ["aborted"] * 2, replies
        reply, out = c.run("print(6 * 7)")
        assert reply["content"]["status"] == "ok" and text_of(out) == "42\n", reply
    c.close()


def test_tokens_origin_and_hostile_frames(server_factory):
    s = server_factory(env=dict(ENV, CODEBOX_API_TOKENS="sekrit"), token="sekrit")
    k = start_kernel(s, headers={"Authorization": "token sekrit"}, token=None)
    with pytest.raises(websocket.WebSocketBadStatusException) as no_token:
        websocket.create_connection(ws_url(s, k["id"]), timeout=10)
    assert no_token.value.status_code == 401
    with pytest.raises(websocket.WebSocketBadStatusException) as wrong:
        websocket.create_connection(ws_url(s, k["id"], "?token=wrong"), timeout=10)
    assert wrong.value.status_code == 401
    # a page of another site cannot open it, token or not
    with pytest.raises(websocket.WebSocketBadStatusException) as evil:
        websocket.create_connection(ws_url(s, k["id"], "?token=sekrit"), timeout=10,
                                    origin="http://evil.example")
    assert evil.value.status_code == 403
    by_header = Client(ws_url(s, k["id"]), header=["Authorization: token sekrit"])
    c = Client(ws_url(s, k["id"], "?token=sekrit"))
    assert "sekrit" not in s.log()
    # garbage is dropped, the connection and the kernel stay
    c.ws.send("{not json")
    c.ws.send(json.dumps({"channel": "shell", "header": {"msg_type": "x"}}))
    c.ws.send(json.dumps({"channel": "nope", "header": {"msg_id": "1", "msg_type": "x"}}))
    c.ws.send_binary(b"\x00\x00\x00\x07garbage")
    reply, out = c.run("print(6 * 7)")
    assert text_of(out) == "42\n"
    # ping gets its pong
    c.ws.ping(b"are you there")
    while True:
        op, data = c.ws.recv_data(control_frame=True)
        if op == websocket.ABNF.OPCODE_PONG:
            assert data == b"are you there"
            break
    # a frame over the limit closes that client (1009), nothing else
    big = Client(ws_url(s, k["id"], "?token=sekrit"))
    with pytest.raises((websocket.WebSocketConnectionClosedException, ConnectionError)):
        big.ws.send("x" * (17 << 20))   # refused from its header: may reset mid-send
        for _ in range(1000):
            big.recv()
    reply, out = by_header.run("print('still here')")
    assert text_of(out) == "still here\n"
    # a plain GET on the channels route is refused clearly
    r = s.get("/api/kernels/%s/channels" % k["id"])
    assert r.status == 400 and "websocket" in r.text
    # another tenant does not see the kernel
    s2 = s  # same server, other token
    assert s2.get("/api/kernels", token="wrong").status == 401


def raw_request(ws, msg_type, content, msg_id=None, channel="shell"):
    mid = msg_id or uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": mid, "msg_type": msg_type, "session": "test", "username": "t",
                   "version": "5.3", "date": "2026-01-01T00:00:00Z"},
        "parent_header": {}, "metadata": {}, "content": content, "channel": channel}))
    return mid


def test_a_client_that_asks_many_before_reading_gets_every_answer(server_factory):
    """More requests than the kernel's queue takes and more than the
    gateway remembers ids of, all sent before any answer is read: each gets
    its reply, and only its sender does, even when two clients use the same
    msg_id. The gateway's routing mark never reaches a client."""
    s = server_factory(env=ENV)
    k = start_kernel(s)
    c = Client(ws_url(s, k["id"]))
    d = Client(ws_url(s, k["id"]))
    asked = {raw_request(c.ws, "kernel_info_request", {}) for _ in range(3000)}
    raw_request(c.ws, "kernel_info_request", {}, msg_id="same-id")
    raw_request(d.ws, "comm_info_request", {}, msg_id="same-id")
    asked.add("same-id")
    while asked:
        m = json.loads(c.ws.recv())
        assert "codebox_client" not in m["parent_header"], m["parent_header"]
        if m["channel"] == "shell":
            assert m["parent_header"]["msg_id"] in asked, m["parent_header"]
            assert m["msg_type"] == "kernel_info_reply", m["msg_type"]
            asked.discard(m["parent_header"]["msg_id"])
    m = d.until(lambda x: x["channel"] == "shell")
    assert m["msg_type"] == "comm_info_reply" and m["parent_header"]["msg_id"] == "same-id"
    assert "codebox_client" not in m["parent_header"]
    assert "send-failed" not in s.log()


def test_the_kernel_sees_the_routing_mark_clients_do_not(server_factory):
    """The mark that routes a kernel's answers is in the header the kernel
    gets, and in no parent header a client sees."""
    s = server_factory(env=ENV)
    k = start_kernel(s)
    c = Client(ws_url(s, k["id"]))
    reply, out = c.run("print(sorted(get_ipython().kernel.get_parent()['header']))")
    assert "codebox_client" in text_of(out)
    assert all("codebox_client" not in m["parent_header"] for m in c.seen)


def test_a_client_that_never_reads_what_it_asked_for_is_closed_not_kept(server_factory):
    """A client asks for answers of 2 MB and reads none: the gateway stops
    reading it, keeps at most its bound of unsent answers, then closes it
    (1008); its memory stays bounded and another kernel's client is served
    meanwhile."""
    s = server_factory(env=ENV)
    k = start_kernel(s)
    other = start_kernel(s)
    o = Client(ws_url(s, other["id"]))
    hog = websocket.create_connection(ws_url(s, k["id"]), timeout=60,
                                      sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 4096),))
    big = {"code": "", "silent": True, "store_history": False, "allow_stdin": False,
           "user_expressions": {"a": "'x' * 2000000"}}
    rss0 = vm_rss_kib(s.proc.pid)

    def flood():
        hog.settimeout(5)
        try:
            for _ in range(400):     # 800 MB of answers if all were kept
                raw_request(hog, "execute_request", big)
        except (websocket.WebSocketTimeoutException, websocket.WebSocketConnectionClosedException,
                ConnectionError):
            pass    # no longer read: it asks nothing more until it reads
        deadline = time.monotonic() + 90
        while "code=1008" not in s.log() and time.monotonic() < deadline:
            reply, out = o.run("print('served')")
            assert text_of(out) == "served\n"
            time.sleep(0.2)

    _, peak = peak_rss_while(s.proc.pid, flood)
    print("gateway VmRSS %d KiB before, peak %d KiB" % (rss0, peak))
    assert "code=1008" in s.log(), s.log_tail()
    assert "websocket event=slow-client session=%s" % k["id"] in s.log()
    # (AddressSanitizer's quarantine keeps up to 256 MiB of freed memory)
    allowed = (300 + (256 if asan(s.proc.pid) else 0)) * 1024
    assert peak - rss0 < allowed, (rss0, peak)
    reply, out = o.run("print('still served')")
    assert text_of(out) == "still served\n"
    hog.close()


def v1_frame(channel, header, parent, metadata, content, buffers=()):
    parts = [channel.encode()] + [json.dumps(x).encode() for x in
                                  (header, parent, metadata, content)] + list(buffers)
    offsets = [8 * (1 + 1 + len(parts))]
    for p in parts:
        offsets.append(offsets[-1] + len(p))
    return struct.pack("<Q", len(offsets)) + b"".join(struct.pack("<Q", o) for o in offsets) \
        + b"".join(parts)


def v1_parse(data):
    n = struct.unpack_from("<Q", data)[0]
    offs = [struct.unpack_from("<Q", data, 8 * (i + 1))[0] for i in range(n)]
    parts = [data[offs[i]:offs[i + 1]] for i in range(n - 1)]
    channel = parts[0].decode()
    header, parent, metadata, content = [json.loads(p) for p in parts[1:5]]
    return channel, header, parent, content, parts[5:]


def test_v1_binary_subprotocol_with_buffers(server_factory):
    s = server_factory(env=ENV)
    k = start_kernel(s)
    ws = websocket.create_connection(ws_url(s, k["id"]), timeout=60,
                                     subprotocols=["v1.kernel.websocket.jupyter.org"])
    assert ws.getsubprotocol() == "v1.kernel.websocket.jupyter.org"
    # a comm that echoes the buffers it gets
    code = ("def _t(comm, m):\n"
            "    @comm.on_msg\n"
            "    def _(msg):\n"
            "        comm.send({'n': len(msg['buffers'])}, buffers=[bytes(b)[::-1] for b in msg['buffers']])\n"
            "get_ipython().kernel.comm_manager.register_target('rev', _t)\n")

    def send(channel, msg_type, content, buffers=()):
        mid = uuid.uuid4().hex
        header = {"msg_id": mid, "msg_type": msg_type, "session": "v1", "username": "t",
                  "version": "5.3", "date": "2026-01-01T00:00:00Z"}
        ws.send_binary(v1_frame(channel, header, {}, {}, content, buffers))
        return mid

    def until(pred):
        for _ in range(500):
            op, data = ws.recv_data()
            assert op == websocket.ABNF.OPCODE_BINARY
            msg = v1_parse(data)
            if pred(msg):
                return msg
        raise AssertionError("not seen")

    mid = send("shell", "execute_request", {"code": code, "silent": False, "store_history": True,
                                            "user_expressions": {}, "allow_stdin": False})
    ch, header, parent, content, _ = until(lambda m: m[0] == "shell")
    assert header["msg_type"] == "execute_reply" and parent["msg_id"] == mid
    assert content["status"] == "ok"
    cid = uuid.uuid4().hex
    send("shell", "comm_open", {"comm_id": cid, "target_name": "rev", "data": {}})
    send("shell", "comm_msg", {"comm_id": cid, "data": {}}, buffers=[b"abc", b"\x00\x01\x02"])
    ch, header, parent, content, bufs = until(lambda m: m[1]["msg_type"] == "comm_msg")
    assert ch == "iopub" and content["data"] == {"n": 2}
    assert bufs == [b"cba", b"\x02\x01\x00"]
    ws.close()


def test_kernel_env_only_kernel_variables(server_factory):
    s = server_factory(env=ENV)
    k = start_kernel(s, {"name": "python3", "env": {"KERNEL_GREETING": "hi there",
                                                      "PATH": "/evil", "LD_PRELOAD": "/x.so"}})
    c = Client(ws_url(s, k["id"]))
    reply, out = c.run("import os; print(os.environ.get('KERNEL_GREETING'), "
                       "os.environ.get('LD_PRELOAD'), '/evil' in os.environ['PATH'])")
    assert text_of(out) == "hi there None False\n"


def test_notebook_sessions(server_factory):
    s = server_factory(env=ENV)
    r = s.post("/api/sessions", {"path": "work/a.ipynb", "name": "a.ipynb", "type": "notebook",
                                 "kernel": {"name": "python3"}})
    assert r.status == 201, r.text
    sess = r.json()
    assert sess["path"] == "work/a.ipynb" and sess["kernel"]["name"] == "python3"
    kid = sess["kernel"]["id"]
    assert [x["id"] for x in s.get("/api/kernels").json()] == [kid]
    # the same path gets the same session
    again = s.post("/api/sessions", {"path": "work/a.ipynb", "kernel": {"name": "python3"}})
    assert again.json()["id"] == sess["id"]
    assert [x["id"] for x in s.get("/api/sessions").json()] == [sess["id"]]
    # rename
    r = s.request("PATCH", "/api/sessions/" + sess["id"], {"path": "work/b.ipynb"})
    assert r.status == 200 and r.json()["path"] == "work/b.ipynb"
    assert r.json()["kernel"]["id"] == kid
    assert s.get("/api/sessions/" + sess["id"]).json()["path"] == "work/b.ipynb"
    # a session on an existing kernel
    r = s.post("/api/sessions", {"path": "c.ipynb", "kernel": {"id": kid}})
    assert r.status == 201 and r.json()["kernel"]["id"] == kid
    assert s.post("/api/sessions", {"path": "d.ipynb", "kernel": {"id": "nope"}}).status == 404
    # delete ends the kernel, and with it the other session on it
    assert s.delete("/api/sessions/" + sess["id"]).status == 204
    assert s.get("/api/kernels").json() == []
    assert s.get("/api/sessions").json() == []
    assert s.get("/api/sessions/" + sess["id"]).status == 404


JUPYTER_SERVER_CLIENT = r"""
import json, sys, time, uuid, urllib.request
import websocket
base, token, codebox = sys.argv[1], sys.argv[2], sys.argv[3]
H = {"Authorization": "token " + token, "Content-Type": "application/json"}
def call(method, path, body=None):
    r = urllib.request.Request(base + path, method=method, headers=H,
                               data=json.dumps(body).encode() if body is not None else None)
    with urllib.request.urlopen(r, timeout=120) as resp:
        t = resp.read()
        return json.loads(t) if t else None
specs = call("GET", "/api/kernelspecs")
k = call("POST", "/api/kernels", {"name": "python3"})
ws = websocket.create_connection(base.replace("http", "ws") + "/api/kernels/%s/channels?token=%s"
                                 % (k["id"], token), timeout=120)
# jupyter_server 1.23 drops what a client sends before its own websocket to
# the gateway is up (GatewayWebSocketClient.on_message waits on a future
# that _connect replaces): wait until codebox counts that connection
deadline = time.monotonic() + 60
while json.load(urllib.request.urlopen(codebox + "/api/kernels/" + k["id"]))["connections"] < 1:
    assert time.monotonic() < deadline
    time.sleep(0.05)
mid = uuid.uuid4().hex
ws.send(json.dumps({"header": {"msg_id": mid, "msg_type": "execute_request", "session": "s",
                               "username": "u", "version": "5.3", "date": ""},
                    "parent_header": {}, "metadata": {}, "channel": "shell",
                    "content": {"code": "print('via jupyter_server')", "silent": False,
                                "store_history": True, "user_expressions": {},
                                "allow_stdin": False}}))
text = ""
while True:
    m = json.loads(ws.recv())
    if m.get("parent_header", {}).get("msg_id") != mid:
        continue
    if m["msg_type"] == "stream":
        text += m["content"]["text"]
    if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
        break
ws.close()
kernels = call("GET", "/api/kernels")
call("DELETE", "/api/kernels/" + k["id"])
print(json.dumps({"specs": sorted(specs["kernelspecs"]), "id": k["id"], "text": text,
                  "kernels": [x["id"] for x in kernels]}))
"""


def test_jupyter_server_with_gateway_url(server_factory, tmp_path):
    """`jupyter server --gateway-url=...`, JupyterLab's server, runs its
    kernels on codebox: kernelspecs, start, websocket execute, delete."""
    s = server_factory(env=ENV)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "cfg"),
               JUPYTER_DATA_DIR=str(tmp_path / "data"), JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"))
    token = uuid.uuid4().hex
    js = subprocess.Popen(
        [PY, "-m", "jupyter_server", "--no-browser", "--port=%d" % port, "--ip=127.0.0.1",
         "--ServerApp.token=" + token, "--allow-root",
         "--ServerApp.root_dir=" + str(tmp_path),
         "--gateway-url=http://127.0.0.1:%d" % s.port],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        wait_port(port, js, "jupyter_server",
                  log=lambda: js.stdout.read().decode()[-3000:] if js.poll() is not None else "")
        p = subprocess.run([PY, "-c", JUPYTER_SERVER_CLIENT, "http://127.0.0.1:%d" % port, token,
                            "http://127.0.0.1:%d" % s.port],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-3000:] + s.log_tail()
        got = json.loads(p.stdout.splitlines()[-1])
        assert "python3" in got["specs"]
        assert got["text"] == "via jupyter_server\n"
        assert got["id"] in got["kernels"]
        # the kernel lived on codebox, and is gone from it now
        assert "/api/kernels/%s/channels" % got["id"] in s.log()
        assert s.get("/api/kernels").json() == []
    finally:
        js.terminate()
        try:
            js.wait(timeout=20)
        except subprocess.TimeoutExpired:
            js.kill()


def test_connected_or_running_kernels_are_not_idle(server_factory):
    """As Jupyter does not cull connected kernels: a websocket holds its
    kernel open past the idle timeout, and so does code a client started
    and left running; once neither holds, the idle timeout applies."""
    s = server_factory(env=dict(ENV, CODEBOX_IDLE_TIMEOUT="3", CODEBOX_CLEANUP_INTERVAL="1"))
    # each connected as soon as it is started: on a busy machine starting
    # the second can take longer than the idle timeout
    held = start_kernel(s)
    c = Client(ws_url(s, held["id"]))
    running = start_kernel(s)
    r = Client(ws_url(s, running["id"]))
    mid = r.execute("import time; print('go', flush=True); time.sleep(6)")
    r.until(lambda m: m["msg_type"] == "stream" and m["parent_header"]["msg_id"] == mid)
    r.close()
    time.sleep(4.5)

    def listed():   # (the listing touches no kernel; a GET of one would)
        return {k["id"] for k in s.get("/api/kernels").json()}
    assert listed() == {held["id"], running["id"]}, s.log_tail()
    c.close()
    deadline = time.monotonic() + 20
    while listed():
        assert time.monotonic() < deadline, s.log_tail()
        time.sleep(0.2)
    assert "why=idle" in s.log()


def test_a_connected_idle_kernel_does_not_wake_the_gateway(server_factory):
    """A kernel a client holds open is not reaped, but while it idles the
    gateway has nothing to do for it: with a reaper pass due every second,
    the gateway still reaches 3 s in which none of its threads runs (its
    idle end is looked at again when the client goes)."""
    s = server_factory(env=dict(ENV, CODEBOX_CLEANUP_INTERVAL="1"))
    k = start_kernel(s)
    c = Client(ws_url(s, k["id"]))
    mid = c.execute("print('up')")
    c.until(lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
            and m["parent_header"].get("msg_id") == mid)
    wait_until_quiet(s)
    c.close()


def test_tenants_do_not_see_each_others_kernels(server_factory):
    """A kernel belongs to its tenant: another tenant's token lists none of
    it, gets 404 for it on every route and its websocket, and cannot fill
    the notebook-session table for everybody."""
    s = server_factory(env=dict(ENV, CODEBOX_API_TOKENS="a:tok-a,b:tok-b"), token="tok-a")
    k = start_kernel(s)
    b = {"token": "tok-b"}
    assert s.get("/api/kernels", **b).json() == []
    for method, path in (("GET", "/api/kernels/%s"), ("DELETE", "/api/kernels/%s"),
                         ("POST", "/api/kernels/%s/interrupt"),
                         ("POST", "/api/kernels/%s/restart")):
        assert s.request(method, path % k["id"], **b).status == 404, (method, path)
    with pytest.raises(websocket.WebSocketBadStatusException) as other:
        websocket.create_connection(ws_url(s, k["id"], "?token=tok-b"), timeout=10)
    assert other.value.status_code == 404
    assert s.post("/api/sessions", {"path": "x.ipynb", "kernel": {"id": k["id"]}},
                  **b).status == 404
    # a notebook session of a, invisible to b
    r = s.post("/api/sessions", {"path": "a.ipynb", "kernel": {"id": k["id"]}})
    assert r.status == 201
    assert s.get("/api/sessions", **b).json() == []
    assert s.get("/api/sessions/" + r.json()["id"], **b).status == 404
    # the kernel still works for a
    c = Client(ws_url(s, k["id"], "?token=tok-a"))
    reply, out = c.run("print('mine')")
    assert text_of(out) == "mine\n"
    # one tenant's notebook sessions are bounded (512), others still get theirs
    for i in range(511):
        assert s.post("/api/sessions", {"path": "n%d.ipynb" % i,
                                        "kernel": {"id": k["id"]}}).status == 201
    r = s.post("/api/sessions", {"path": "over.ipynb", "kernel": {"id": k["id"]}})
    assert r.status == 429 and "per tenant" in r.text
    kb = start_kernel(s, **b)
    assert s.post("/api/sessions", {"path": "b.ipynb", "kernel": {"id": kb["id"]}},
                  **b).status == 201


def test_a_silent_websocket_is_pinged_then_closed(server_factory):
    """A client silent for CODEBOX_WS_PING_INTERVAL is pinged; one that
    answers (websocket libraries and browsers answer by themselves) stays,
    one that does not is closed (1001) and freed: a peer that vanished
    without a FIN no longer holds a websocket for good."""
    s = server_factory(env=dict(ENV, CODEBOX_WS_PING_INTERVAL="2"))
    k = start_kernel(s)
    # the silent one: a handshake over a raw socket, then nothing
    raw = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    raw.sendall(("GET /api/kernels/%s/channels HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                 "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
                 % (k["id"], s.port)).encode())
    got = b""
    while b"\r\n\r\n" not in got:
        got += raw.recv(4096)
    assert got.startswith(b"HTTP/1.1 101"), got
    frames = got.split(b"\r\n\r\n", 1)[1]
    raw.settimeout(1)   # so the live client below reads (and answers pings) each second
    alive = Client(ws_url(s, k["id"]))
    pings = 0
    for _ in range(60):     # each a read of at most a second; ends at the close
        try:
            chunk = raw.recv(4096)
        except socket.timeout:
            chunk = None
        if chunk == b"":
            break
        frames += chunk or b""
        alive.ws.settimeout(0.2)
        try:            # the live client reads, so its library answers pings
            op, _ = alive.ws.recv_data(control_frame=True)
            pings += op == websocket.ABNF.OPCODE_PING
        except websocket.WebSocketTimeoutException:
            pass
    else:
        raise AssertionError("the silent client was never closed: %r" % frames[:64])
    # the frames it got (kernel messages broadcast on iopub may come too)
    ops, at, close_code = [], 0, None
    while at + 2 <= len(frames):
        op, n = frames[at] & 0x0F, frames[at + 1] & 0x7F
        at += 2
        if n == 126:
            n, at = struct.unpack("!H", frames[at:at + 2])[0], at + 2
        elif n == 127:
            n, at = struct.unpack("!Q", frames[at:at + 8])[0], at + 8
        if op == 0x8 and n >= 2:
            close_code = struct.unpack("!H", frames[at:at + 2])[0]
        ops.append(op)
        at += n
    assert 0x9 in ops, ops                                  # pinged
    assert ops[-1] == 0x8 and close_code == 1001, (ops, close_code)   # then closed
    assert "code=1001" in s.log()
    raw.close()
    # the one that answered is still served
    alive.ws.settimeout(60)
    reply, out = alive.run("print('still here')")
    assert text_of(out) == "still here\n"
    assert pings >= 1, pings
