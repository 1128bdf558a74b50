"""A newcomer's first hour: codebox run from a clone in a private (mode
700) home folder, one server per state folder, folders of an earlier run
never handed out, clear errors for ports and hosts, `codebox exec` that
picks the kernel from the extension and runs sandboxed, honest logs.

Each test starts the real binary; the private-folder tests copy it into a
fresh mode-700 folder under the home folder, as a clone under /root is."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import BIN, rest_run, stream_of

ROOT = os.geteuid() == 0
TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (debug|info|warn|error) codebox: ")


@pytest.fixture
def private_home():
    """A mode-700 folder under the home folder holding a copy of the
    binary, as a clone under /root has it."""
    top = tempfile.mkdtemp(prefix="codebox-private-", dir=os.path.expanduser("~"))
    os.chmod(top, 0o700)
    binary = os.path.join(top, "codebox")
    shutil.copy2(BIN, binary)
    yield top, binary
    shutil.rmtree(top, ignore_errors=True)


def start_private(binary, state_dir, env=None, cwd=None, args=()):
    """Starts `binary serve` on a free port with state_dir; returns
    (proc, port, log_path)."""
    log_path = os.path.join(os.path.dirname(state_dir), "serve-%d.log" % time.monotonic_ns())
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
    full_env.update(env or {})
    log = open(log_path, "wb")
    proc = subprocess.Popen([binary, "serve", "--port", "0", "--state-dir", state_dir]
                            + list(args),
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=full_env, cwd=cwd or os.path.dirname(state_dir))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = open(log_path, errors="replace").read()
        m = re.search(r"serving http://[^\s/]+:(\d+)", text)
        if m:
            return proc, int(m.group(1)), log_path
        if proc.poll() is not None:
            raise AssertionError("serve exited %s:\n%s" % (proc.returncode, text))
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("no banner:\n" + open(log_path).read())


def http(port, method, path, body=None, headers=None, timeout=120):
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    data = json.dumps(body).encode() if body is not None else None
    c.request(method, path, body=data, headers=headers or {})
    r = c.getresponse()
    raw = r.read()
    c.close()
    try:
        return r.status, json.loads(raw) if raw else None, dict(r.getheaders())
    except ValueError:
        return r.status, raw.decode(errors="replace"), dict(r.getheaders())


def run_code(port, session, code, wait=90):
    status, body, _ = http(port, "POST", "/execute", {"session_id": session, "code": code})
    assert status == 202, body
    status, res, _ = http(port, "GET", "/execute/%s/results?wait=%d" % (body["request_id"], wait))
    assert status == 200, res
    return res


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


@pytest.mark.skipif(not ROOT, reason="the kernel user exists only when the gateway is root")
@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_serve_from_a_private_home(private_home, sandbox):
    top, binary = private_home
    state = os.path.join(top, "state")
    proc, port, log_path = start_private(binary, state, env={"CODEBOX_SANDBOX": sandbox,
                                                            "CODEBOX_POOL_SIZE": "0"})
    try:
        status, body, _ = http(port, "POST", "/sessions", {"session_id": "py"})
        assert status == 201, body
        res = run_code(port, "py", "import os\nopen('made.txt','w').write('x')\n"
                                   "print(os.getuid(), sorted(os.listdir('.')))")
        assert res["status"] == "completed", res
        uid, listing = stream_of(res).split(" ", 1)
        assert int(uid) != 0
        assert "made.txt" in listing
        assert os.path.exists(os.path.join(state, "py", "made.txt"))
        if sandbox == "auto":
            status, body, _ = http(port, "POST", "/sessions",
                                   {"session_id": "js", "language": "javascript"})
            assert status == 201, body
            res = run_code(port, "js", "console.log(6*7)")
            assert res["status"] == "completed", res
            assert stream_of(res).strip() == "42"
    finally:
        stop(proc)


@pytest.mark.skipif(not ROOT, reason="the kernel user exists only when the gateway is root")
def test_mcp_over_stdio_started_from_a_private_folder(private_home):
    top, binary = private_home
    cwd = os.path.join(top, "project")
    os.mkdir(cwd)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
    env["CODEBOX_STATE_DIR"] = os.path.join(top, "state")
    env["CODEBOX_POOL_SIZE"] = "0"
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "exec_code", "arguments": {"session_id": "s", "code": "print(6*7)"}}},
    ]
    proc = subprocess.Popen([binary, "mcp"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for m in msgs:
        proc.stdin.write(json.dumps(m) + "\n")
    proc.stdin.flush()
    answers = {}
    deadline = time.monotonic() + 120
    while 2 not in answers and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        msg = json.loads(line)
        if "id" in msg:
            answers[msg["id"]] = msg
    proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 0, err
    assert 2 in answers, err
    result = answers[2]["result"]
    assert not result.get("isError"), result
    assert result["structuredContent"]["stdout"].strip() == "42"
    # every log line on stderr is timestamped
    lines = [l for l in err.splitlines() if l.strip()]
    assert lines and all(TS_RE.match(l) for l in lines), err
    assert "mcp transport=stdio rpc=tools/call tool=exec_code is_error=false" in err, err
    assert "print(6*7)" not in err      # never the code


def test_one_server_per_state_folder(server_factory):
    first = server_factory()
    second = subprocess.run([BIN, "serve", "--port", "0", "--state-dir", first.state_dir],
                            capture_output=True, text=True, timeout=30, cwd=first.tmp)
    assert second.returncode != 0
    assert "pid %d" % first.proc.pid in second.stderr, second.stderr
    env = dict(os.environ, CODEBOX_STATE_DIR=first.state_dir)
    mcp = subprocess.run([BIN, "mcp"], input="", capture_output=True, text=True, timeout=30,
                         cwd=first.tmp, env=env)
    assert mcp.returncode != 0
    assert "pid %d" % first.proc.pid in mcp.stderr, mcp.stderr
    # the first one still serves
    assert first.get("/healthz").status == 200


def test_folders_of_an_earlier_run_are_not_handed_out(server_factory):
    first = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    state = first.state_dir
    assert first.post("/sessions", {"session_id": "main"}).status == 201
    res = rest_run(first, "main", "open('input/old.txt','w').write('secret')")
    assert res["status"] == "completed", res
    # the server dies without cleaning up; its folders stay
    first.expect_dead = True
    first.proc.kill()
    first.proc.wait()
    os.makedirs(os.path.join(state, "@acme", "x", "input"), exist_ok=True)
    assert os.path.exists(os.path.join(state, "main", "input", "old.txt"))
    # start a server on the old state folder itself
    log_path = os.path.join(tempfile.mkdtemp(), "serve.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([BIN, "serve", "--port", "0", "--state-dir", state],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            m = re.search(r"serving http://[^\s/]+:(\d+)", open(log_path).read())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        assert port, open(log_path).read()
        # a folder without a record goes; "main" is kept (issue 42): the
        # same session again, paused, with its files, never a new one's
        assert not os.path.exists(os.path.join(state, "@acme"))
        status, body, _ = http(port, "GET", "/sessions/main")
        assert status == 200 and body["status"] == "paused", body
        status, body, _ = http(port, "POST", "/sessions", {"session_id": "main"})
        assert status == 409, body
        res = run_code(port, "main", "import os; print(sorted(os.listdir('input')))")
        assert stream_of(res).strip() == "['old.txt']", res
        # once it ends, its id makes a new session with an empty folder
        status, body, _ = http(port, "DELETE", "/sessions/main")
        assert status == 204, body
        status, body, _ = http(port, "POST", "/sessions", {"session_id": "main"})
        assert status == 201, body
        res = run_code(port, "main", "import os; print(sorted(os.listdir('input')))")
        assert stream_of(res).strip() == "[]", res
        log = open(log_path).read()
        assert "event=swept entry=x" in log, log
    finally:
        stop(proc)


def _runtime_dir(server):
    m = re.search(r"runtime dir=(\S+)", server.log())
    assert m, server.log()
    return m.group(1)


def _mounts_below(path):
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if line.split()[4].startswith(path + "/")]


# alone: any server that starts sweeps every dead server's folder, so with
# tests beside it another test's server could be the one that swept this one's
@pytest.mark.alone
def test_runtime_folder_of_a_killed_server_is_swept(server_factory):
    first = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    runtime = _runtime_dir(first)
    assert first.post("/sessions", {"session_id": "main"}).status == 201
    assert rest_run(first, "main", "print(1)")["status"] == "completed"
    sandboxed = os.geteuid() == 0
    if sandboxed:   # a sandboxed kernel's runtime folder is a file system of its own
        assert _mounts_below(runtime), first.log_tail()
    # the server dies without cleaning up: its folder and mounts stay
    first.expect_dead = True
    first.proc.kill()
    first.proc.wait()
    assert os.path.isdir(runtime)
    second = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    assert not os.path.exists(runtime), os.listdir(runtime)
    assert _mounts_below(runtime) == []
    assert "runtime event=swept folder=%s" % runtime in second.log(), second.log_tail()
    # a live server's folder is never taken: a third start leaves the
    # second's alone, and its session goes on working
    live = _runtime_dir(second)
    assert second.post("/sessions", {"session_id": "b"}).status == 201
    third = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    assert "folder=%s" % live not in third.log()
    assert os.path.isdir(live)
    assert stream_of(rest_run(second, "b", "print(6*7)")).strip() == "42"
    second.stop()
    assert not os.path.exists(live)


@pytest.mark.parametrize("port", ["99999", "65536", "-1", "80x"])
def test_bad_ports_are_refused(port, tmp_path):
    r = subprocess.run([BIN, "serve", "--port", port, "--state-dir", str(tmp_path / "s")],
                       capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "CODEBOX_PORT" in r.stderr, r.stderr
    env = dict(os.environ, CODEBOX_PORT=port)
    r = subprocess.run([BIN, "serve", "--state-dir", str(tmp_path / "s")], env=env,
                       capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert r.returncode == 2, r.stderr


def test_a_busy_port_is_a_clear_error(server_factory, tmp_path):
    first = server_factory()
    r = subprocess.run([BIN, "serve", "--port", str(first.port), "--state-dir",
                        str(tmp_path / "other")], capture_output=True, text=True, timeout=30,
                       cwd=tmp_path)
    assert r.returncode == 2
    assert "Address already in use" in r.stderr and str(first.port) in r.stderr, r.stderr
    # every request still reaches the first server
    for _ in range(5):
        assert first.get("/healthz").status == 200


@pytest.mark.parametrize("host, connect", [("localhost", ("127.0.0.1", socket.AF_INET)),
                                           ("::1", ("::1", socket.AF_INET6)),
                                           ("[::1]", ("::1", socket.AF_INET6)),
                                           ("127.0.0.2", ("127.0.0.2", socket.AF_INET))])
def test_loopback_hosts_serve(tmp_path, host, connect):
    proc, port, _ = start_private(BIN, str(tmp_path / "state"), args=("--host", host))
    try:
        s_check_healthz(port, *connect)
    finally:
        stop(proc)


def s_check_healthz(port, addr, family):
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect((addr, port))
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    sock.close()
    assert data.startswith(b"HTTP/1.1 200"), data


def test_non_loopback_names_are_refused_without_tokens(tmp_path):
    r = subprocess.run([BIN, "serve", "--host", "0.0.0.0", "--port", "0", "--state-dir",
                        str(tmp_path / "s")], capture_output=True, text=True, timeout=30,
                       cwd=tmp_path)
    assert r.returncode == 2 and "not loopback" in r.stderr, r.stderr
    r = subprocess.run([BIN, "serve", "--host", "no-such-host.invalid", "--port", "0",
                        "--state-dir", str(tmp_path / "s")], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and "cannot be resolved" in r.stderr, r.stderr


def test_exec_picks_the_kernel_by_extension_and_runs_sandboxed(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
    (tmp_path / "app.js").write_text("console.log('js', typeof process.version)")
    (tmp_path / "app.py").write_text("import os, sys; print('py', os.getuid(), os.getcwd())")
    r = subprocess.run([BIN, "exec", "app.js"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "js string"
    r = subprocess.run([BIN, "exec", "app.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    word, uid, cwd = r.stdout.split()
    assert word == "py"
    if ROOT:
        assert int(uid) != 0
    assert cwd != str(tmp_path)
    # --kernel wins over the extension
    r = subprocess.run([BIN, "exec", "--kernel", "python3", "app.js"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "SyntaxError" in r.stderr, (r.stdout, r.stderr)
    # --no-sandbox runs as the caller in the current folder
    r = subprocess.run([BIN, "exec", "--no-sandbox", "app.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    word, uid, cwd = r.stdout.split()
    assert int(uid) == os.geteuid() and cwd == str(tmp_path)
    # a host file outside is out of reach in the sandbox
    (tmp_path / "secret.py").write_text(
        "import os\ntry:\n    open(%r).read(); print('read')\nexcept OSError as e:\n"
        "    print('refused')\n" % str(tmp_path / "app.py"))
    r = subprocess.run([BIN, "exec", "secret.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.stdout.strip() == "refused", (r.stdout, r.stderr)
    assert "--no-sandbox" in subprocess.run([BIN, "exec", "--help"], capture_output=True,
                                            text=True).stdout


def test_log_lines_are_timestamped(server_factory):
    s = server_factory()
    assert s.get("/healthz").status == 200
    deadline = time.monotonic() + 10
    while "path=/healthz" not in s.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = [l for l in s.log().splitlines() if l.strip()]
    assert lines
    bad = [l for l in lines if not TS_RE.match(l)]
    assert not bad, bad


def test_log_level_setting(server_factory):
    s = server_factory(env={"CODEBOX_LOG_LEVEL": "warn"})
    assert s.get("/sessions").status == 200
    time.sleep(0.5)     # an access line, if one were written, would be there
    log = s.log()
    assert "serving http://" in log       # the banner is always written
    assert "http method=GET" not in log
    r = subprocess.run([BIN, "serve", "--port", "0"], env=dict(os.environ,
                       CODEBOX_LOG_LEVEL="loud"), capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "CODEBOX_LOG_LEVEL" in r.stderr, r.stderr


def test_mcp_log_lines_name_the_rpc_and_tool(server_factory):
    from conftest import mcp_client
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    call = mcp_client(s)
    call("exec_code", {"session_id": "logs", "code": "secret_value = 42"})
    call("read_file", {"session_id": "logs", "path": "no/such/file"})
    # the access line is written once the answer has gone out
    deadline = time.monotonic() + 10
    while "tool=read_file" not in s.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = s.log()
    assert re.search(r"http method=POST path=/mcp status=200 ms=\d+ rpc=initialize", log), log
    assert "rpc=tools/call tool=exec_code is_error=false" in log, log
    assert "rpc=tools/call tool=read_file is_error=true" in log, log
    assert "secret_value" not in log


def test_stdio_servers_each_get_their_own_default_state_folder(tmp_path):
    """MCP clients start one `codebox mcp` per conversation: with the
    default state folder they must not lock each other out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
    env["HOME"] = str(tmp_path)             # for a gateway that is not root
    procs = [subprocess.Popen([BIN, "mcp"], cwd=tmp_path, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    states = []
    for p in procs:
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n")
        p.stdin.flush()
        assert json.loads(p.stdout.readline())["result"] == {}
    for p in procs:
        p.stdin.close()
        err = p.stderr.read()
        assert p.wait(timeout=30) == 0, err
        states.append(re.search(r"mcp on stdio state=(\S+)", err).group(1))
    assert states[0] != states[1]
    for state in states:
        assert "/stdio/" in state
        assert not os.path.exists(state)    # removed when its server ended


class StdioServer:
    """A `codebox mcp` process spoken to line by line."""

    def __init__(self, state_dir, tmp_path):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
        env["CODEBOX_POOL_SIZE"] = "0"
        self.err = open(os.path.join(tmp_path, "mcp-%d.log" % time.monotonic_ns()), "wb")
        self.proc = subprocess.Popen([BIN, "mcp", "--state-dir", state_dir], cwd=tmp_path,
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True)
        self.next_id = 1
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "1"}})

    def rpc(self, method, params):
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id,
                                          "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            assert line, "codebox mcp ended"
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                return msg["result"]

    def call(self, tool, args):
        result = self.rpc("tools/call", {"name": tool, "arguments": args})
        assert not result.get("isError"), result
        return result


def test_serve_leaves_a_running_stdio_servers_folder(tmp_path):
    """`make run` beside Claude Desktop's `codebox mcp` on the default state
    folder: serve's start and stop must not take the stdio server's
    folder (or the mounts of its sessions); a dead stdio server's goes."""
    state = str(tmp_path / "state")
    live = os.path.join(state, "stdio", "live")
    mcp = StdioServer(live, tmp_path)
    dead = StdioServer(os.path.join(state, "stdio", "dead"), tmp_path)
    try:
        mcp.call("write_file", {"session_id": "kept", "path": "note.txt", "content": "hello"})
        mcp.call("exec_code", {"session_id": "kept", "code": "open('made.txt','w').write('x')"})
        dead.call("write_file", {"session_id": "gone", "path": "a.txt", "content": "a"})
        dead.proc.kill()
        dead.proc.wait(timeout=30)
        os.makedirs(os.path.join(state, "left-by-a-crash"))
        for _ in range(2):      # start and stop twice: the second finds serve's own leftovers
            proc, port, log_path = start_private(BIN, state, env={"CODEBOX_POOL_SIZE": "0"})
            stop(proc)
        log = open(log_path).read()
        assert not os.path.exists(os.path.join(state, "left-by-a-crash"))
        assert not os.path.exists(os.path.join(state, "stdio", "dead")), log
        assert os.path.isdir(live)
        # the stdio server's session is whole: its files and its kernel
        text = mcp.call("read_file", {"session_id": "kept", "path": "note.txt"})
        assert text["content"][0]["text"] == "hello", text
        out = mcp.call("exec_code", {"session_id": "kept",
                                     "code": "print(open('note.txt').read(), open('made.txt').read())"})
        assert out["structuredContent"]["stdout"].strip() == "hello x", out
    finally:
        for s in (mcp, dead):
            if s.proc.poll() is None:
                s.proc.stdin.close()
                s.proc.wait(timeout=30)
