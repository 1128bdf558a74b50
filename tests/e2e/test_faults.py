"""Fault suite (issue 10, item 3): end to end against the real `codebox
serve`, real kernels and a fake kernel written here. Each test provokes one
fault and checks that the gateway neither trusts, crashes, leaks nor hangs:

  1. a kernel that sends unsigned or wrongly-signed messages is ignored and logged
  2. a kernel that never replies: timeout, then a restart
  3. a kernel that floods iopub with 100 000 messages: capped output, bounded RSS
  4. outputs with invalid UTF-8 (raw bytes, lone surrogates)
  5. SIGKILL of the kernel mid-execution: KernelDied, then a working restart
  6. the state dir's disk full (a small tmpfs; skipped where mount is refused)
  7. 500 HTTP connections opened at once
  8. a client that disconnects mid-SSE: the execution is interrupted
  9. `kill -9` of the gateway with 10 live sessions leaves no kernel process

Every server is started with conftest's `server_factory`, so it is stopped
with SIGTERM at the end and must exit 0 leaving no process behind."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid

import pytest

from conftest import (Server, asan, descendants, errors_of, find_by_comm, mcp_session,
                      proc_cmdline, stream_of, vm_rss_kib, wait_gone, wait_until_quiet)

FINAL = {"completed", "error"}


# --------------------------------------------------------------------------
# helpers (REST)

def create_session(srv, body=None, **kw):
    r = srv.post("/sessions", body or {}, **kw)
    assert r.status == 201, "%r\n%s" % (r, srv.log_tail())
    return r.json()["session_id"]


def submit(srv, sid, code, timeout=None):
    body = {"session_id": sid, "code": code}
    if timeout is not None:
        body["timeout"] = timeout
    r = srv.post("/execute", body)
    assert r.status == 202, "%r\n%s" % (r, srv.log_tail())
    return r.json()["request_id"]


def results(srv, rid, wait=120):
    r = srv.get("/execute/%s/results?wait=%d" % (rid, wait), timeout=wait + 30)
    assert r.status == 200, "%r\n%s" % (r, srv.log_tail())
    res = r.json()
    assert res["request_id"] == rid, res
    assert res["status"] in FINAL, res
    return res


def run(srv, sid, code, timeout=None, wait=120):
    return results(srv, submit(srv, sid, code, timeout=timeout), wait=wait)


def all_text(res):
    """Every piece of text of a result (streams, results, displays, errors)."""
    return json.dumps(res["output"], ensure_ascii=False)


def out(srv, sid, code, **kw):
    """Runs code, asserts it completed, returns its stdout."""
    res = run(srv, sid, code, **kw)
    assert res["status"] == "completed", "%s\n--- server log ---\n%s" % (
        json.dumps(res)[:3000], srv.log_tail(40))
    return stream_of(res)


def summary(res):
    return json.dumps({k: v for k, v in res.items() if k != "output"})


def kernel_pid(srv, sid):
    """(pid, starttime) on this host of a Python session's kernel: the
    kernel names its main thread with a unique token (prctl PR_SET_NAME),
    looked up below the gateway (os.getpid() in the sandbox's PID namespace
    is not the host's pid). Remembered so that teardown checks it is gone."""
    token = "cbk" + uuid.uuid4().hex[:12]
    assert out(srv, sid, "import ctypes\n"
                         "print(ctypes.CDLL(None).prctl(15, b'%s', 0, 0, 0))\n" % token) == "0\n"
    found = find_by_comm(srv, token)
    assert len(found) == 1, "kernel of %s not found below the gateway: %s" % (sid, found)
    srv.kernels.add(found[0])
    return found[0]


def wait_until(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.1)


# --------------------------------------------------------------------------
# helpers (MCP over HTTP)

def mcp_call(srv, msid, name, args, rpc_id=2, timeout=120):
    r = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": rpc_id, "method": "tools/call",
                                     "params": {"name": name, "arguments": args}},
                    headers={"Accept": "application/json", "Mcp-Session-Id": msid},
                    timeout=timeout)
    assert r.status == 200, r
    body = r.json()
    assert "result" in body, body
    return body["result"]


# --------------------------------------------------------------------------
# the fake kernel: a small Jupyter kernel over TCP, written with pyzmq, that
# signs its messages correctly or not as the executed code asks. It runs in
# the sandbox (network off: the gateway's kernel-proxy bridges its TCP
# ports) and ignores SIGINT, so an execution it never ends costs a restart.
#   good:TEXT      prints TEXT, correctly signed
#   mixed          forged output, replies and idles (unsigned, wrong key,
#                  tampered content, non-hex signature), then good ones
#   junk           frames that are no Jupyter message, then good output
#   bad            only forged messages, a full execution's worth
#   silent         nothing at all
#   utf8:escaped   a lone surrogate as a JSON escape, correctly signed
#   utf8:raw       raw bytes that are not UTF-8, correctly signed

FAKE_KERNEL = r'''
import ctypes, datetime, hashlib, hmac, json, os, signal, sys, uuid
import zmq

signal.signal(signal.SIGINT, signal.SIG_IGN)        # swallows interrupts
if len(sys.argv) > 2:
    ctypes.CDLL(None).prctl(15, sys.argv[2].encode()[:15], 0, 0, 0)
with open(sys.argv[1]) as f:
    cfg = json.load(f)
KEY = cfg["key"].encode()
SESSION = uuid.uuid4().hex
ctx = zmq.Context()


def bind(kind, name):
    s = ctx.socket(kind)
    s.setsockopt(zmq.LINGER, 0)
    s.bind("%s://%s:%d" % (cfg.get("transport", "tcp"), cfg["ip"], cfg[name]))
    return s


shell, control, stdin = bind(zmq.ROUTER, "shell_port"), bind(zmq.ROUTER, "control_port"), \
    bind(zmq.ROUTER, "stdin_port")
iopub, hb = bind(zmq.PUB, "iopub_port"), bind(zmq.REP, "hb_port")


def sign(key, parts):
    h = hmac.new(key, digestmod=hashlib.sha256)
    for p in parts:
        h.update(p)
    return h.hexdigest().encode()


def send(sock, ids, msg_type, content, parent, how="good"):
    """how: good | unsigned | wrongkey | tampered | badhex"""
    header = {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "session": SESSION,
              "username": "fake", "version": "5.3",
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    parts = [json.dumps(x).encode() for x in
             (header, parent.get("header", {}), {}, content)]
    if how == "good":
        sig = sign(KEY, parts)
    elif how == "unsigned":
        sig = b""
    elif how == "wrongkey":
        sig = sign(b"not-the-key", parts)
    elif how == "tampered":             # signed, then the content changed
        sig = sign(KEY, parts)
        parts[3] = json.dumps(dict(content, tampered=True)).encode()
    elif how == "badhex":
        sig = b"zz" * 32
    else:
        raise ValueError(how)
    sock.send_multipart(list(ids) + [b"<IDS|MSG>", sig] + parts)


def status(state, parent, how="good"):
    send(iopub, [b"kernel.fake.status"], "status", {"execution_state": state}, parent, how)


def stream(text, parent, how="good"):
    send(iopub, [b"kernel.fake.stream"], "stream", {"name": "stdout", "text": text},
         parent, how)


def parse(frames):
    i = frames.index(b"<IDS|MSG>")
    ids, sig, parts = frames[:i], frames[i + 1], frames[i + 2:i + 6]
    msg = {"header": json.loads(parts[0]), "content": json.loads(parts[3])}
    msg["signed_ok"] = hmac.compare_digest(sig, sign(KEY, parts))
    return ids, msg


count = 0
BAD = ("unsigned", "wrongkey", "tampered", "badhex")


def execute(ids, msg):
    global count
    code = msg["content"].get("code", "")
    if code == "silent":                # never answers, not even busy
        return
    if not msg["signed_ok"]:
        stream("the gateway's request was not signed right\n", msg)
    count += 1
    status("busy", msg)
    reply = {"status": "ok", "execution_count": count, "user_expressions": {}}
    if code == "bad":
        # everything wrongly signed, a full execution's worth of each kind;
        # then nothing: the gateway must not finish the execution on these
        for how in BAD:
            stream("EVIL-%s\n" % how, msg, how)
            send(iopub, [b"kernel.fake.execute_result"], "execute_result",
                 {"execution_count": count, "data": {"text/plain": "EVIL-" + how},
                  "metadata": {}}, msg, how)
            send(shell, ids, "execute_reply", reply, msg, how)
            status("idle", msg, how)
        return
    if code == "mixed":
        for how in BAD:
            stream("EVIL-%s\n" % how, msg, how)
            send(shell, ids, "execute_reply", reply, msg, how)
            status("idle", msg, how)
        stream("GOOD\n", msg)
    elif code == "junk":
        # frames that are not Jupyter messages at all, or signed garbage
        junk_parts = [b"{not json", b"{}", b"{}", b"{}"]
        for frames in ([b"x"], [b"<IDS|MSG>"], [b"<IDS|MSG>", b"ab", b"{}"],
                       [b"kernel.fake.stream", b"<IDS|MSG>", sign(KEY, junk_parts)] + junk_parts,
                       [b"kernel.fake.stream", b"<IDS|MSG>", b"\xff" * 64, b"\xff\xfe",
                        b"{}", b"{}", b"{}"]):
            iopub.send_multipart(frames)
        for frames in ([b"<IDS|MSG>", b"", b"", b"", b"", b""],
                       [b"<IDS|MSG>", sign(KEY, junk_parts)] + junk_parts):
            shell.send_multipart(list(ids) + frames)
        stream("GOOD\n", msg)
    elif code == "utf8:escaped":
        # a lone surrogate as a JSON escape (what json.dumps writes by default)
        stream("esc a\udcffb end\n", msg)
    elif code == "utf8:raw":
        # raw bytes that are not UTF-8 inside a correctly signed frame
        header = {"msg_id": uuid.uuid4().hex, "msg_type": "stream", "session": SESSION,
                  "username": "fake", "version": "5.3"}
        parts = [json.dumps(header).encode(), json.dumps(msg["header"]).encode(), b"{}",
                 b'{"name": "stdout", "text": "raw \xff\xfe\xc3( end\\n"}']
        iopub.send_multipart([b"kernel.fake.stream", b"<IDS|MSG>", sign(KEY, parts)] + parts)
    elif code.startswith("good:"):
        stream(code[5:] + "\n", msg)
    else:
        stream("unknown code\n", msg)
    send(shell, ids, "execute_reply", reply, msg)
    status("idle", msg)


poller = zmq.Poller()
for s in (shell, control, stdin, hb):
    poller.register(s, zmq.POLLIN)
while True:
    for sock, _ in poller.poll():
        frames = sock.recv_multipart()
        if sock is hb:
            hb.send_multipart(frames)
            continue
        if sock is stdin:
            continue
        ids, msg = parse(frames)
        kind = msg["header"]["msg_type"]
        if kind == "kernel_info_request":
            status("busy", msg)
            send(sock, ids, "kernel_info_reply",
                 {"status": "ok", "protocol_version": "5.3", "implementation": "fake",
                  "implementation_version": "1", "banner": "fake kernel",
                  "language_info": {"name": "fake", "version": "1", "mimetype": "text/plain",
                                    "file_extension": ".txt"}}, msg)
            status("idle", msg)
        elif kind == "execute_request":
            execute(ids, msg)
        elif kind == "shutdown_request":
            send(sock, ids, "shutdown_reply", {"status": "ok", "restart": False}, msg)
            sys.exit(0)
        elif kind == "interrupt_request":
            send(sock, ids, "interrupt_reply", {"status": "ok"}, msg)
'''


@pytest.fixture
def fake_kernels():
    """A kernelspec folder with the fake kernel ("fake"), readable by the
    kernel user. The program is inline (python3 -c): the sandbox has a /tmp
    of its own, so a file next to the spec would not be seen. Yields
    CODEBOX_KERNEL_PATH's value and the process name (comm) that the fake
    kernel gives itself."""
    tmp = tempfile.mkdtemp(prefix="codebox-fake-")
    os.chmod(tmp, 0o755)
    comm = "fk" + uuid.uuid4().hex[:10]
    spec = os.path.join(tmp, "kernels", "fake")
    os.makedirs(spec)
    os.chmod(os.path.dirname(spec), 0o755)
    os.chmod(spec, 0o755)
    with open(os.path.join(spec, "kernel.json"), "w") as f:
        json.dump({"argv": ["/usr/bin/python3", "-c", FAKE_KERNEL, "{connection_file}", comm],
                   "display_name": "Fake kernel (test_faults)", "language": "fake",
                   "metadata": {"codebox": {"transport": "tcp"}}}, f)
    os.chmod(os.path.join(spec, "kernel.json"), 0o644)
    yield os.path.join(tmp, "kernels"), comm
    shutil.rmtree(tmp, ignore_errors=True)


def fake_server(server_factory, fake_kernels, **env):
    path, comm = fake_kernels
    full = {"CODEBOX_KERNEL_PATH": path, "CODEBOX_POOL_SIZE": "0"}
    full.update(env)
    return server_factory(env=full), comm


# --------------------------------------------------------------------------
# 1. unsigned and wrongly-signed messages

def test_wrongly_signed_messages_are_ignored_and_logged(server_factory, fake_kernels):
    s, comm = fake_server(server_factory, fake_kernels)
    sid = create_session(s, {"kernel": "fake"})
    # a correctly signed answer gets through (the test's control)
    res = run(s, sid, "good:hello")
    assert res["status"] == "completed", summary(res) + s.log_tail()
    assert stream_of(res) == "hello\n", res
    # badly signed output and replies among good ones: only the good count
    before = s.log().count("dropped a message")
    res = run(s, sid, "mixed")
    assert res["status"] == "completed", summary(res) + s.log_tail()
    assert stream_of(res) == "GOOD\n", res
    assert "EVIL" not in all_text(res), res
    # frames that are no Jupyter message at all
    res = run(s, sid, "junk")
    assert res["status"] == "completed", summary(res) + s.log_tail()
    assert stream_of(res) == "GOOD\n", res
    # a whole execution's worth of forged messages (output, result, reply,
    # idle): nothing of it is taken, the execution ends with its timeout
    t0 = time.monotonic()
    res = run(s, sid, "bad", timeout=3)
    assert (res["status"], res.get("reason")) == ("error", "timeout"), summary(res) + s.log_tail()
    assert time.monotonic() - t0 >= 2.5
    assert "EVIL" not in all_text(res), res
    log = s.log()
    dropped = log.count("dropped a message") - before
    # mixed: 4 iopub streams + 4 replies + 4 idles; junk: 5 + 2; bad: 4 * 4
    assert dropped >= 12 + 7 + 16, "only %d drops logged:\n%s" % (dropped, s.log_tail(60))
    assert re.search(r"kernel=\S+ channel=iopub dropped a message: .*signature", log), log
    assert re.search(r"kernel=\S+ channel=shell dropped a message", log), log
    # the gateway keeps working: the same session, a new one, /healthz
    assert out(s, sid, "good:after") == "after\n"
    sid2 = create_session(s, {"kernel": "fake"})
    assert out(s, sid2, "good:second") == "second\n"
    assert s.get("/healthz").status == 200
    for pid in find_by_comm(s, comm):
        s.kernels.add(pid)


# --------------------------------------------------------------------------
# 2. a kernel that never replies

def test_kernel_that_never_replies_times_out_then_restarts(server_factory, fake_kernels):
    s, comm = fake_server(server_factory, fake_kernels)
    sid = create_session(s, {"kernel": "fake"})
    assert out(s, sid, "good:up") == "up\n"
    old = find_by_comm(s, comm)
    assert len(old) == 1, old
    s.kernels.update(old)
    t0 = time.monotonic()
    res = run(s, sid, "silent", timeout=2)
    took = time.monotonic() - t0
    assert (res["status"], res.get("reason")) == ("error", "timeout"), summary(res) + s.log_tail()
    assert 1.5 <= took < 40, took
    # the fake kernel ignores SIGINT: the gateway restarts it
    assert res.get("kernel_restarted") is True, summary(res)
    assert not wait_gone(old, timeout=10), "the silent kernel was not ended"
    assert out(s, sid, "good:again") == "again\n"
    new = find_by_comm(s, comm)
    assert len(new) == 1 and new != old, (old, new)
    s.kernels.update(new)
    st = s.get("/sessions/" + sid)
    assert st.status == 200, st


# --------------------------------------------------------------------------
# 3. a flood of 100 000 iopub messages from a real ipykernel

# Sends N stream messages from ipykernel's own IOPub thread (which owns the
# PUB socket), each a separate, correctly signed Jupyter message; print()
# with flush would take a minute for as many. The socket's send high-water
# mark is lifted so that libzmq does not drop any on the kernel's side.
FLOOD = r'''
import json, threading, zmq
k = get_ipython().kernel
s = k.session
parent = s.pack(k.get_parent("shell")["header"])
head = json.dumps({"msg_type": "stream", "session": s.session, "username": "k",
                   "version": "5.3", "date": "2024-01-01T00:00:00.000000Z",
                   "msg_id": "flood-%d"})
done, failed = threading.Event(), []
def flood():
    try:
        k.iopub_thread.socket.setsockopt(zmq.SNDHWM, 0)
        for i in range(N):
            s.send_raw(k.iopub_thread.socket,
                       [(head % i).encode(), parent, b"{}",
                        json.dumps({"name": "stdout", "text": TEXT(i)}).encode()],
                       ident=b"stream")
    except Exception as e:
        failed.append(repr(e))
    finally:
        done.set()
k.iopub_thread.schedule(flood)
assert done.wait(120) and not failed, failed
'''


def test_iopub_flood_is_capped_and_memory_bounded(server_factory):
    cap = 300000
    s = server_factory(env={"CODEBOX_MAX_OUTPUT_BYTES": str(cap), "CODEBOX_POOL_SIZE": "1"})
    sid = create_session(s)
    assert out(s, sid, "print('warm')") == "warm\n"
    rss0 = vm_rss_kib(s.proc.pid)
    # 100 000 messages of one byte each, under the cap: every one arrives
    res = run(s, sid, "N, TEXT = 100000, lambda i: '.'\n" + FLOOD, wait=180)
    assert res["status"] == "completed", summary(res) + s.log_tail()
    got = stream_of(res)
    assert got == "." * 100000, "got %d of 100000 messages' text" % len(got)
    assert not res.get("truncated"), summary(res)
    # 100 000 messages of 5.9 bytes on average: cut at the cap, with a marker
    t0 = time.monotonic()
    r = s.get("/execute/%s/results?wait=180" % submit(s, sid, "N, TEXT = 100000, lambda i: '%d\\n' % i\n" + FLOOD),
              timeout=210)
    took = time.monotonic() - t0
    assert r.status == 200, r
    res = r.json()
    assert res["status"] == "completed", summary(res) + s.log_tail()
    assert res.get("truncated") is True, summary(res)
    text = "".join(o.get("content") or "" for o in res["output"])
    assert cap - 4096 <= len(text.encode()) <= cap + 4096, len(text)
    assert re.search(r"truncat", text[-300:], re.I), text[-300:]
    kept = stream_of(res)
    numbers = [line for line in kept.split("\n") if line.isdigit()]
    assert len(numbers) > 30000, len(numbers)
    # what is kept is the beginning, whole and in order (the last number
    # may be cut short by the cap)
    assert numbers[:-1] == [str(i) for i in range(len(numbers) - 1)], numbers[:20]
    assert len(r.body) < 3 * cap
    # the gateway holds no copy of the flood
    rss1 = vm_rss_kib(s.proc.pid)
    print("flood: gateway VmRSS %d KiB before, %d KiB after; capped flood took %.1fs"
          % (rss0, rss1, took))
    if not asan(s.proc.pid):
        assert rss1 - rss0 < 48 * 1024, (rss0, rss1)
    assert out(s, sid, "print('after')") == "after\n"


# --------------------------------------------------------------------------
# 4. output that is not valid UTF-8
#
# jupyter_client, the reference, decodes every frame with
# errors="replace": a bad byte becomes U+FFFD and the rest of the message
# is kept. ipykernel encodes str with errors="surrogateescape", so a lone
# surrogate such as '\udcff' reaches the wire as the raw byte 0xff.

REPLACED = re.compile(r"\ufffd|\\x[fF][fF]|\\u[dD][cC][fF][fF]|\?")


@pytest.fixture(scope="module")
def py_srv():
    """A server shared by the tests below that need only Python sessions."""
    s = Server(env={"CODEBOX_POOL_SIZE": "1"})
    yield s
    s.stop()




@pytest.mark.parametrize("code", [
    "print('before a\\udcffb after')",
    "from IPython.display import display\n"
    "display({'text/plain': 'before a\\udcffb after'}, raw=True)",
    "class A:\n    def __repr__(self):\n        return 'before a\\udcffb after'\nA()",
], ids=["stream", "display", "result"])
def test_invalid_utf8_output_is_shown(py_srv, code):
    sid = create_session(py_srv)
    try:
        res = run(py_srv, sid, code, timeout=20)
        assert res["status"] == "completed", summary(res)
        text = all_text(res)
        m = re.search(r"before a(.{1,12}?)b after", text)
        assert m, "output lost: %s" % json.dumps(res["output"])
        assert REPLACED.search(m.group(1)), m.group(1)
    finally:
        py_srv.delete("/sessions/" + sid)


def test_invalid_utf8_in_exception_ends_the_execution(py_srv):
    sid = create_session(py_srv)
    try:
        res = run(py_srv, sid, "keep = 1\nraise ValueError('bad \\udcff value')", timeout=6)
        assert res["status"] == "error", summary(res)
        errs = errors_of(res)
        assert errs and errs[0]["ename"] == "ValueError", res
        assert out(py_srv, sid, "print(keep)") == "1\n"
    finally:
        py_srv.delete("/sessions/" + sid)


def test_invalid_utf8_does_not_break_the_gateway(py_srv, server_factory, fake_kernels):
    """Whatever is shown, executions with bad bytes end, the gateway stays
    up, and the session goes on."""
    sid = create_session(py_srv)
    codes = ["print('a\\udcffb')",
             "import os\nos.write(1, b'raw fd \\xff\\xfe\\n')",   # ipykernel's fd capture
             "'\\udcff'",
             "print('x\\ud800y')"]       # ipykernel cannot even encode this one
    for code in codes:
        res = run(py_srv, sid, code, timeout=20)
        assert res["status"] in ("completed", "error"), summary(res) + py_srv.log_tail()
    assert py_srv.proc.poll() is None
    assert out(py_srv, sid, "print('still here')") == "still here\n"
    assert py_srv.get("/healthz").status == 200
    py_srv.delete("/sessions/" + sid)
    # the same over a kernel that sends bad bytes in correctly signed frames
    s, comm = fake_server(server_factory, fake_kernels)
    fid = create_session(s, {"kernel": "fake"})
    for code in ("utf8:escaped", "utf8:raw"):
        res = run(s, fid, code, timeout=10)
        assert res["status"] == "completed", summary(res) + s.log_tail()
    assert out(s, fid, "good:ok") == "ok\n"
    for pid in find_by_comm(s, comm):
        s.kernels.add(pid)


@pytest.mark.parametrize("code,pattern", [("utf8:escaped", r"esc a(.{1,12}?)b end"),
                                          ("utf8:raw", r"raw (.{1,24}?) end")])
def test_invalid_utf8_from_kernel_frames_is_shown(server_factory, fake_kernels, code, pattern):
    s, comm = fake_server(server_factory, fake_kernels)
    fid = create_session(s, {"kernel": "fake"})
    s.kernels.update(find_by_comm(s, comm))
    res = run(s, fid, code, timeout=10)
    assert res["status"] == "completed", summary(res)
    m = re.search(pattern, all_text(res))
    assert m, "output lost: %s" % json.dumps(res["output"])
    assert REPLACED.search(m.group(1)), m.group(1)


# --------------------------------------------------------------------------
# 5. SIGKILL of the kernel in the middle of an execution

def test_sigkill_of_kernel_mid_execution(py_srv):
    s = py_srv
    sid = create_session(s)
    try:
        run(s, sid, "keep = 5")
        old = kernel_pid(s, sid)
        rid = submit(s, sid, "import time\nprint('going', flush=True)\ntime.sleep(120)")
        wait_until(lambda: s.get("/execute/%s/status" % rid).json()["status"] == "running",
                   20, "the execution to run")
        time.sleep(1.0)
        os.kill(old[0], signal.SIGKILL)
        t0 = time.monotonic()
        res = results(s, rid, wait=60)
        assert time.monotonic() - t0 < 30
        assert res["status"] == "error", summary(res)
        errs = errors_of(res)
        assert len(errs) == 1 and errs[0]["ename"] == "KernelDied", res
        assert re.search(r"died|dead|exited|killed|signal", errs[0]["evalue"], re.I), errs
        assert res.get("kernel_restarted") is True, summary(res)
        assert not wait_gone([old], timeout=10)
        # the session goes on in a new kernel (whose state is new)
        lost = run(s, sid, "print(keep)")
        assert lost["status"] == "error" and errors_of(lost)[0]["ename"] == "NameError", lost
        assert out(s, sid, "print(6 * 7)") == "42\n"
        new = kernel_pid(s, sid)
        assert new != old
        assert s.get("/healthz").status == 200
    finally:
        s.delete("/sessions/" + sid)


def _ended_by_the_heartbeat(s, sid, code):
    """Runs code on a kernel that is or gets stopped (SIGSTOP: alive, but
    silent, its heartbeat thread too): four missed beats 5 s apart end it
    and the execution says so."""
    t0 = time.monotonic()
    res = run(s, sid, code, wait=90)
    took = time.monotonic() - t0
    assert res["status"] == "error", summary(res)
    errs = errors_of(res)
    assert len(errs) == 1 and re.search(r"heartbeat", errs[0]["evalue"], re.I), errs
    assert res.get("kernel_restarted") is True, summary(res)
    assert 12 < took < 45, took     # four beats 5 s apart, from the request on


def test_kernel_that_stops_answering_heartbeats_mid_execution(py_srv):
    """A kernel that stops while it works is found by the heartbeat, which
    beats every 5 s while the kernel works (not at all while it is idle),
    and the session goes on."""
    s = py_srv
    sid = create_session(s)
    try:
        old = kernel_pid(s, sid)
        _ended_by_the_heartbeat(s, sid, "import os, signal\nprint('stopping', flush=True)\n"
                                        "os.kill(os.getpid(), signal.SIGSTOP)")
        assert not wait_gone([old], timeout=10)
        assert out(s, sid, "print(6 * 7)") == "42\n"
    finally:
        s.delete("/sessions/" + sid)


def test_kernel_stopped_while_idle_is_found_by_the_next_request(py_srv):
    """Idle kernels are not heartbeaten (idle sessions cost the gateway
    nothing). One stopped while idle is found by the beats that start when
    a request is sent to it, though it never says busy, and the session
    goes on."""
    s = py_srv
    sid = create_session(s)
    try:
        pid, _ = kernel_pid(s, sid)
        os.kill(pid, signal.SIGSTOP)
        _ended_by_the_heartbeat(s, sid, "print('never')")
        assert out(s, sid, "print(6 * 7)") == "42\n"
    finally:
        s.delete("/sessions/" + sid)


def test_an_idle_kernel_that_dies_is_seen_at_once(server_factory):
    """Idle sessions' kernels are watched through one epoll set (gw_kernel_epoll)
    instead of being polled each turn. Among idle sessions, one whose
    kernel is killed once the gateway is quiet (no heartbeat left: they
    stop for idle kernels, and would need 20 s) is seen dying at once,
    with no request to it, is restarted, and every session goes on; a
    second kill after the restart (new descriptors, likely the same
    numbers) is seen too."""
    s = server_factory()
    sids = [create_session(s) for _ in range(4)]
    for sid in sids:
        kernel_pid(s, sid)
    victim = sids[2]
    for round in range(2):
        pid, _ = kernel_pid(s, victim)
        seen = s.log().count("kernel event=dead session=%s" % victim)
        wait_until_quiet(s)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while s.log().count("kernel event=dead session=%s" % victim) == seen:
            assert time.monotonic() < deadline, \
                "round %d: the idle kernel's death was not seen\n%s" % (round, s.log_tail())
            time.sleep(0.1)
        assert out(s, victim, "print(%d)" % round) == "%d\n" % round
    for sid in sids:
        assert out(s, sid, "print('up')") == "up\n"



def test_an_idle_pool_kernel_that_dies_is_seen_at_once(server_factory):
    """The warm pool's kernels are watched through an epoll set of their
    own (gw_pool, as the sessions' are: an idle pool kernel costs a turn
    nothing). One killed once the gateway is quiet is seen dying at once,
    with no request, and replaced; a new session then starts warm."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "1", "CODEBOX_FORK_SERVER": "off",
                            "CODEBOX_POOL_PRELOAD": ""})
    wait_until(lambda: "pool event=ready" in s.log(), 60, "a warm kernel")
    wait_until_quiet(s)
    pythons = [(pid, start) for pid, start in descendants(s.proc.pid)
               if os.path.basename(proc_cmdline(pid).split(" ")[0]).startswith("python")
               and "ipykernel" in proc_cmdline(pid)]
    assert len(pythons) == 1, [proc_cmdline(p)[:100] for p, _ in descendants(s.proc.pid)]
    os.kill(pythons[0][0], signal.SIGKILL)
    wait_until(lambda: "pool event=dead" in s.log(), 5, "the pool kernel's death seen")
    wait_until(lambda: s.log().count("pool event=ready") >= 2, 60, "a new warm kernel")
    sid = create_session(s)
    try:
        assert out(s, sid, "print(6 * 7)") == "42\n"
    finally:
        s.delete("/sessions/" + sid)

# --------------------------------------------------------------------------
# 6. the state dir's disk is full

FILL = r'''
import errno
n = 0
try:
    with open("output/fill.bin", "wb") as f:
        while n < 4096:
            f.write(b"x" * 65536)
            f.flush()
            n += 1
    print("NO ERROR", n)
except OSError as e:
    print("ERR", errno.errorcode.get(e.errno), n)
'''


def test_disk_full_for_state_dir(server_factory):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs as the state dir needs root")
    mnt = tempfile.mkdtemp(prefix="codebox-full-")
    os.chmod(mnt, 0o755)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", mnt],
                       capture_output=True, text=True)
    if r.returncode != 0:
        os.rmdir(mnt)
        pytest.skip("cannot mount a tmpfs for the disk-full test: %s" % r.stderr.strip())
    s = None
    try:
        s = server_factory(env={"CODEBOX_POOL_SIZE": "1"}, args=("--state-dir", mnt))
        full = create_session(s)
        other = create_session(s)
        assert out(s, other, "v = 6\nprint(v)") == "6\n"
        # the kernel fills the disk and sees ENOSPC
        res = run(s, full, FILL)
        assert res["status"] == "completed", summary(res) + s.log_tail()
        assert stream_of(res).startswith("ERR ENOSPC"), res["output"]
        assert os.statvfs(mnt).f_bavail == 0
        # the gateway's own writes fail with a clear answer
        r = s.request("PUT", "/sessions/%s/files/input/up.bin" % full, body=b"y" * 200000)
        assert r.status in (413, 500, 507), r
        assert re.search(r"space|full|ENOSPC", r.json()["error"]["message"], re.I), r
        msid = mcp_session(s)
        w = mcp_call(s, msid, "write_file", {"session_id": other, "path": "output/w.txt",
                                            "content": "z" * 200000})
        assert w["isError"] is True, w
        assert re.search(r"space|full|ENOSPC", w["content"][0]["text"], re.I), w
        # ... and it keeps serving: health, other sessions, plots, listings
        # (IPython may add that its history, kept in the session's /tmp,
        # cannot be written while the disk is full)
        assert s.get("/healthz").status == 200
        assert out(s, other, "print(v * 7)").startswith("42")
        assert out(s, full, "print('alive')").startswith("alive")
        res = run(s, other, "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
        assert res["status"] == "completed" and len(res["files"]) == 1, summary(res)
        assert s.get("/sessions").status == 200
        assert s.get("/sessions/%s/artifacts" % full).status == 200
        r = s.post("/sessions", {})
        assert r.status in (201, 503, 507, 500), r
        if r.status != 201:
            assert r.json()["error"]["message"], r
        else:
            s.delete("/sessions/" + r.json()["session_id"])
        # space comes back: everything works again
        assert out(s, full, "import os\nos.remove('output/fill.bin')\nprint('freed')") == "freed\n"
        r = s.request("PUT", "/sessions/%s/files/input/up.bin" % full, body=b"y" * 200000)
        assert r.status in (200, 201), r
        third = create_session(s)
        assert out(s, third, "print('new')") == "new\n"
        s.stop()
    finally:
        try:
            if s is not None and s.proc.poll() is None:
                s.stop()        # the session folders live on the tmpfs
        finally:
            if subprocess.run(["umount", mnt], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", mnt], capture_output=True)
            os.rmdir(mnt)


# --------------------------------------------------------------------------
# 7. 500 HTTP connections at once

def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def test_500_connections_at_once(server_factory):
    import selectors
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    fds0 = fd_count(s.proc.pid)
    n = 500
    socks = [socket.create_connection(("127.0.0.1", s.port), timeout=30) for _ in range(n)]
    try:
        for c in socks:
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        sel = selectors.DefaultSelector()
        bufs = {}
        for c in socks:
            c.setblocking(False)
            sel.register(c, selectors.EVENT_READ)
            bufs[c] = b""
        pending = set(socks)
        deadline = time.monotonic() + 60
        while pending and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=1):
                c = key.fileobj
                try:
                    data = c.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if data:
                    bufs[c] += data
                else:
                    sel.unregister(c)
                    pending.discard(c)
        sel.close()
        statuses = [re.match(rb"HTTP/1\.[01] (\d{3})", b) for b in bufs.values()]
        ok = sum(1 for m in statuses if m and m.group(1) == b"200")
        assert ok == n and not pending, "%d of %d answered 200, %d never closed" % (
            ok, n, len(pending))
        assert all(b.rstrip().endswith(b'{"status":"ok"}') for b in bufs.values())
    finally:
        for c in socks:
            c.close()
    # 500 idle connections held open do not starve other clients
    idle = [socket.create_connection(("127.0.0.1", s.port), timeout=30) for _ in range(n)]
    try:
        for c in idle[:100]:
            c.sendall(b"GET /heal")           # and a hundred half-sent requests
        t0 = time.monotonic()
        assert s.get("/healthz", timeout=30).status == 200
        sid = create_session(s)
        assert out(s, sid, "print('busy gateway')") == "busy gateway\n"
        assert time.monotonic() - t0 < 30
    finally:
        for c in idle:
            c.close()
    s.delete("/sessions/" + sid)
    wait_until(lambda: fd_count(s.proc.pid) <= fds0 + 10, 20,
               "the gateway's fds to come back near %d (now %d)" % (fds0, fd_count(s.proc.pid)))


# --------------------------------------------------------------------------
# 8. a client that goes away in the middle of an SSE stream

def post_mcp_raw(srv, msid, accept, message):
    """Sends one MCP POST on a raw socket (to close it mid-call); returns it."""
    body = json.dumps(message).encode()
    c = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    c.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               "Accept: %s\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n"
               % (accept, msid, len(body))).encode() + body)
    return c


def assert_abandoned_call_interrupted(srv, msid, sid):
    """The gateway saw the client gone and interrupted its execution: the
    session answers the next call within seconds, with its state (x = 41
    set before; no restart)."""
    t0 = time.monotonic()
    r = mcp_call(srv, msid, "exec_code", {"session_id": sid, "code": "print(x + 1)"},
                 rpc_id=10, timeout=100)
    took = time.monotonic() - t0
    assert r["isError"] is False, r
    assert r["structuredContent"]["stdout"] == "42\n", r
    assert took < 20, "the abandoned execution ran on for %.1fs" % took


def test_client_gone_mid_sse_interrupts_execution(server_factory):
    s = server_factory(env={"CODEBOX_POOL_SIZE": "1"})
    msid = mcp_session(s)
    sid = "sse-" + uuid.uuid4().hex[:8]
    r = mcp_call(s, msid, "exec_code", {"session_id": sid, "code": "x = 41"})
    assert r["isError"] is False, r
    c = post_mcp_raw(s, msid, "application/json, text/event-stream", {
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "exec_code", "_meta": {"progressToken": "p9"},
                   "arguments": {"session_id": sid, "code":
                                 "import time\nprint('tick', flush=True)\n"
                                 "time.sleep(120)\nx = 0"}}})
    got = b""
    deadline = time.monotonic() + 30
    while b"tick" not in got and time.monotonic() < deadline:
        data = c.recv(4096)
        if not data:
            break
        got += data
    c.close()
    assert got.startswith(b"HTTP/1.1 200") and b"text/event-stream" in got, got[:500]
    assert b"tick" in got, got[:2000]
    assert_abandoned_call_interrupted(s, msid, sid)
    assert s.get("/healthz").status == 200


def test_client_gone_mid_json_call_interrupts_execution(server_factory):
    """The same with a client that accepts only JSON: no byte can go out
    before the answer, so the gateway looks at the socket instead."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "1"})
    msid = mcp_session(s)
    sid = "json-" + uuid.uuid4().hex[:8]
    r = mcp_call(s, msid, "exec_code", {"session_id": sid, "code": "x = 41"})
    assert r["isError"] is False, r
    c = post_mcp_raw(s, msid, "application/json", {
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "exec_code", "arguments": {
            "session_id": sid, "code": "import time\ntime.sleep(120)\nx = 0"}}})
    deadline = time.monotonic() + 30
    while s.get("/sessions/" + sid).json()["status"] != "busy":
        assert time.monotonic() < deadline, s.log_tail()
        time.sleep(0.1)
    time.sleep(0.5)
    c.close()
    assert_abandoned_call_interrupted(s, msid, sid)
    assert "mcp event=client-gone" in s.log(), s.log_tail()


# --------------------------------------------------------------------------
# 9. kill -9 of the gateway with 10 live sessions

def test_kill_9_of_gateway_leaves_no_kernel(server_factory):
    s = server_factory(env={"CODEBOX_POOL_SIZE": "2"})
    langs = ["python"] * 8 + ["javascript"] * 2
    sids, errors = [], []

    def make(lang):
        try:
            sids.append(create_session(s, {"language": lang}))
        except AssertionError as e:
            errors.append(str(e))
    threads = [threading.Thread(target=make, args=(lang,)) for lang in langs]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors[0]
    assert len(sids) == 10
    assert len(s.get("/sessions").json()["sessions"]) == 10
    # one of them is busy when the gateway dies
    submit(s, sids[0], "import time\ntime.sleep(120)")
    procs = descendants(s.proc.pid)
    kernels = [p for p in procs if re.search(r"ipykernel|ijavascript|kernel", proc_cmdline(p[0]))]
    assert len(kernels) >= 10, [proc_cmdline(p) for p, _ in procs]
    s.kernels.update(procs)
    s.expect_dead = True
    s.proc.kill()
    s.proc.wait(timeout=10)
    alive = wait_gone(procs, timeout=10)
    assert not alive, "still running 10s after kill -9 of the gateway: %s" % [
        "%d %s" % (p, proc_cmdline(p)) for p, _ in alive]
