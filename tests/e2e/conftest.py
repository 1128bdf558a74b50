"""Shared fixtures for the end-to-end tests: the real codebox binary
(CODEBOX_BIN, set by `make e2e`) and helpers to run it."""
import os
import re
import subprocess
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("CODEBOX_BIN") or os.path.join(HERE, "..", "..", "build", "codebox")
FIXTURE_KERNELS = os.path.join(HERE, "kernels")


def run_codebox(args, stdin=None, cwd=None, env=None, timeout=120):
    """Runs codebox with args; returns the CompletedProcess (text mode)."""
    full_env = dict(os.environ)
    full_env.setdefault("CODEBOX_KERNEL_PATH", FIXTURE_KERNELS)
    if env:
        full_env.update(env)
    return subprocess.run([BIN] + list(args), input=stdin, cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "alone: the test measures time or loads the whole machine; `make e2e` "
        "runs the others in parallel, then these one at a time")


@pytest.fixture
def codebox():
    return run_codebox


_MOUNT_ESCAPE = re.compile(r"\\([0-7]{3})")
SERVER_DIRS = []    # the folders of this process's Server objects


def unmount_below(path):
    """Undoes every mount below path, deepest first, as the gateway does at
    a clean exit: a gateway a test killed could not, and a mounted folder
    cannot be removed."""
    prefix = os.path.realpath(path).rstrip("/") + "/"
    try:
        with open("/proc/self/mountinfo") as f:
            points = [_MOUNT_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), line.split()[4])
                      for line in f]
    except OSError:
        return
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def pytest_sessionfinish(session):
    """What killed gateways left mounted in this process's folders goes
    (an xdist worker's basetemp is its own, so no other worker's live
    mounts are touched)."""
    for path in SERVER_DIRS:
        unmount_below(path)
    factory = getattr(session.config, "_tmp_path_factory", None)
    base = getattr(factory, "_basetemp", None)    # None: no test made one
    if base is not None:
        unmount_below(str(base))


# --------------------------------------------------------------------------
# `codebox serve` under test: start, talk HTTP, stop cleanly, find leftovers.

import http.client
import json
import re
import shutil
import signal
import socket
import tempfile
import threading
import time

BANNER_RE = re.compile(r"codebox: serving http://[^\s/]+:(\d+)")


def _proc_table():
    """{pid: (ppid, starttime, state)} for every process in /proc."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2:].split()
        table[int(name)] = (int(rest[1]), int(rest[19]), rest[0])
    return table


def proc_identity(pid):
    """(pid, starttime) of a live, non-zombie process, or None."""
    entry = _proc_table().get(pid)
    if entry is None or entry[2] in ("Z", "X"):
        return None
    return (pid, entry[1])


def proc_alive(ident):
    """True while the process named by (pid, starttime) still runs (zombies count as gone)."""
    if ident is None:
        return False
    pid, start = ident
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    rest = stat[stat.rfind(")") + 2:].split()
    return int(rest[19]) == start and rest[0] not in ("Z", "X")


def thread_switches(pid):
    """{"tid name": context switches so far} of every thread of a process."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                n = sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                out["%s %s" % (tid, f.read().strip())] = n
        except FileNotFoundError:
            pass    # a thread that ended
    return out


def wait_until_quiet(srv, quiet_s=3, timeout=40):
    """Waits until quiet_s seconds pass in which no thread of the gateway
    runs (what the last calls started has settled: a kernel's last
    heartbeat, the warm pool's refill); fails after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        before = thread_switches(srv.proc.pid)
        time.sleep(quiet_s)
        after = thread_switches(srv.proc.pid)
        woke = {t: after[t] - n for t, n in before.items() if t in after and after[t] != n}
        if not woke:
            return
        assert time.monotonic() < deadline, \
            "threads of an idle gateway kept waking: %r\n%s" % (woke, srv.log_tail())


def descendants(root_pid):
    """[(pid, starttime)] of every live process below root_pid."""
    table = _proc_table()
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root_pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if table[child][2] not in ("Z", "X"):
                out.append((child, table[child][1]))
            todo.append(child)
    return out


def wait_gone(idents, timeout=10.0):
    """Waits until none of idents runs; returns the ones still running."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [i for i in idents if proc_alive(i)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def vm_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


def peak_rss_while(pid, fn):
    """Runs fn() while sampling pid's RSS every 20 ms: (fn's value, the
    peak in KiB)."""
    peak = [vm_rss_kib(pid)]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], vm_rss_kib(pid))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        value = fn()
    finally:
        stop.set()
        watcher.join()
    return value, peak[0]


def asan(pid):
    """True when the process runs with AddressSanitizer (`make test` runs the
    suite again against such a build): its quarantine keeps freed memory
    (up to 256 MiB), so RSS says nothing about leaks there; LeakSanitizer
    checks those at exit instead."""
    with open("/proc/%d/maps" % pid) as f:
        return "libasan" in f.read()


def find_by_comm(srv, token):
    """(pid, starttime) of the processes below the gateway named token."""
    found = []
    for pid, start in descendants(srv.proc.pid):
        try:
            with open("/proc/%d/comm" % pid) as f:
                if f.read().strip() == token:
                    found.append((pid, start))
        except OSError:
            pass
    return found


def proc_cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            raise AssertionError("not JSON (status %d): %r" % (self.status, self.body[:500]))

    @property
    def text(self):
        return self.body.decode("utf-8", errors="replace")

    def __repr__(self):
        return "<Response %d %r>" % (self.status, self.body[:300])


class Server:
    """One `codebox serve --port 0` process with its own state dir and log."""

    def __init__(self, env=None, args=(), token=None, cwd=None, start_timeout=30):
        self.tmp = tempfile.mkdtemp(prefix="codebox-e2e-")
        SERVER_DIRS.append(self.tmp)
        # the sandbox binds session folders as the kernel user, who must be
        # able to pass through this folder
        os.chmod(self.tmp, 0o755)
        self.state_dir = os.path.join(self.tmp, "state")
        os.mkdir(self.state_dir)
        self.log_path = os.path.join(self.tmp, "server.log")
        self.token = token
        self.kernels = set()       # (pid, starttime) of kernels seen by tests
        self.expect_dead = False   # set when a test kills the server itself
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
        # warm kernels preload nothing here unless a test asks (None: the
        # default preload): each preload costs a core for about 1.5 s, and
        # hundreds of servers start in a run (test_pool_preload.py tests it)
        full_env["CODEBOX_POOL_PRELOAD"] = ""
        full_env.update(env or {})
        full_env = {k: v for k, v in full_env.items() if v is not None}
        self._log = open(self.log_path, "wb")
        # cwd is a fresh folder so that no stray .env file is read
        self.proc = subprocess.Popen(
            [BIN, "serve", "--port", "0", "--state-dir", self.state_dir] + list(args),
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            env=full_env, cwd=cwd or self.tmp)
        self.port = None
        deadline = time.monotonic() + start_timeout
        while self.port is None:
            m = BANNER_RE.search(self.log())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                raise AssertionError("codebox serve exited with %s:\n%s"
                                     % (self.proc.returncode, self.log()))
            if time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError("no banner within %ss:\n%s" % (start_timeout, self.log()))
            time.sleep(0.02)
        while True:
            try:
                if self.request("GET", "/healthz", timeout=5).status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("/healthz never answered:\n" + self.log())
            time.sleep(0.05)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def log_tail(self, n=40):
        return "\n".join(self.log().splitlines()[-n:])

    def request(self, method, path, body=None, headers=None, token=..., timeout=120):
        """One HTTP request on a fresh connection. body: dict/list (sent as
        JSON), bytes or str. token: ... uses the server's default token."""
        hdrs = dict(headers or {})
        tok = self.token if token is ... else token
        if tok is not None:
            hdrs.setdefault("Authorization", "Bearer " + tok)
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        elif isinstance(body, str):
            body = body.encode()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=hdrs)
            r = conn.getresponse()
            return Response(r.status, r.headers, r.read())
        finally:
            conn.close()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body=body if body is not None else {}, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def stop(self, sig=signal.SIGTERM, timeout=20):
        """Signals the server, asserts a clean exit (code 0) and that no
        process it started (kernels included) outlives it."""
        if self.proc.poll() is None:
            left = set(descendants(self.proc.pid)) | self.kernels
            self.proc.send_signal(sig)
            try:
                rc = self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self._kill_all(left)
                raise AssertionError("codebox serve did not exit within %ss of signal %d:\n%s"
                                     % (timeout, sig, self.log_tail()))
        else:
            rc = self.proc.returncode
            left = set(self.kernels)
        self._log.close()
        alive = wait_gone(left, timeout=10)
        if alive:
            info = ["%d %s" % (p, proc_cmdline(p)) for p, _ in alive]
            self._kill_all(alive)
            raise AssertionError("processes outlived codebox serve: %s\n%s"
                                 % (info, self.log_tail()))
        if not self.expect_dead and sig in (signal.SIGTERM, signal.SIGINT):
            assert rc == 0, "codebox serve exited %s after signal %d:\n%s" % (
                rc, sig, self.log_tail())
        if not os.environ.get("CODEBOX_E2E_KEEP"):
            unmount_below(self.tmp)
            shutil.rmtree(self.tmp, ignore_errors=True)
        return rc

    @staticmethod
    def _kill_all(idents):
        for pid, _ in idents:
            if proc_alive((pid, _)):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


@pytest.fixture
def server_factory():
    """Starts `codebox serve` with given settings; every server is stopped
    with SIGTERM at teardown, which must exit 0 and leave no process behind."""
    servers = []

    def start(env=None, args=(), token=None, **kw):
        s = Server(env=env, args=args, token=token, **kw)
        servers.append(s)
        return s

    yield start
    errors = []
    for s in servers:
        try:
            s.stop()
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, "\n\n".join(errors)


# --------------------------------------------------------------------------
# MCP over HTTP, plain JSON answers


def mcp_session(server, headers=None):
    """initialize (protocol 2025-06-18); returns the Mcp-Session-Id."""
    h = {"Accept": "application/json"}
    h.update(headers or {})
    r = server.request("POST", "/mcp", {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "codebox-e2e", "version": "1"}}}, headers=h)
    assert r.status == 200, r.text
    return r.headers["Mcp-Session-Id"]


def mcp_client(server, headers=None):
    """initialize; returns call(name, args, headers=None, timeout=300) -> the
    CallToolResult (headers: extra ones for that call)."""
    base = {"Accept": "application/json"}
    base.update(headers or {})
    sid = mcp_session(server, base)
    ids = iter(range(2, 100000))

    def call(name, args, headers=None, timeout=300):
        h = dict(base, **{"Mcp-Session-Id": sid})
        h.update(headers or {})
        r = server.request("POST", "/mcp", {"jsonrpc": "2.0", "id": next(ids),
                                            "method": "tools/call",
                                            "params": {"name": name, "arguments": args}},
                           headers=h, timeout=timeout)
        assert r.status == 200, r.text
        body = r.json()
        assert "result" in body, body
        return body["result"]
    return call


def ok(result):
    """The structuredContent of a successful CallToolResult."""
    assert result["isError"] is False, result
    return result["structuredContent"]


def error_text(result):
    """The text of a CallToolResult that is an error."""
    assert result["isError"] is True, result
    return result["content"][0]["text"]


# --------------------------------------------------------------------------
# REST executions


def rest_run(server, session, code, wait=60, token=..., **body):
    """POST /execute (body: extra fields), then GET its results with
    ?wait=; returns the results object, whatever its status."""
    r = server.post("/execute", dict({"session_id": session, "code": code}, **body),
                    token=token)
    assert r.status == 202, r.text
    r = server.get("/execute/%s/results?wait=%d" % (r.json()["request_id"], wait), token=token)
    assert r.status == 200, r.text
    return r.json()


def stream_of(res, name="stdout"):
    """The text of one stream of a results object."""
    return "".join(o["content"] for o in res["output"]
                   if o["type"] == "stream" and o["name"] == name)


def errors_of(res):
    """The error outputs of a results object."""
    return [o for o in res["output"] if o["type"] == "error"]


# --------------------------------------------------------------------------
# Many nodes: a free port, and a Redis of its own for the session directory

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def redis_url():
    """A redis-server on loopback for one test; its URL (database 3)."""
    tmp = tempfile.mkdtemp(prefix="codebox-redis-")
    port = free_port()
    proc = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", tmp],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, proc, "redis-server", timeout=10)
    yield "redis://127.0.0.1:%d/3" % port
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(tmp, ignore_errors=True)




def wait_for(fn, what, timeout=20):
    """fn() once it is true (asked every 0.2 s); fails with what after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def wait_port(port, proc, what, timeout=60, log=lambda: ""):
    """Waits until something listens on port; fails when proc (the process
    that should) exits first or after timeout, with what log() says."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert proc.poll() is None, "%s exited:\n%s" % (what, log())
            assert time.monotonic() < deadline, "%s did not start:\n%s" % (what, log())
            time.sleep(0.1)
