"""The fork server (issue 43, CODEBOX_FORK_SERVER=on) against the real
gateway with real sandboxed kernels: a session's Python kernel is forked
from one root process that has imported ipykernel and the scientific stack,
yet it is confined exactly as an exec'd kernel is (same user, no
capabilities, no_new_privs, seccomp, the sandbox's namespaces, cgroups and
rlimits, no network, its own folder only), sees its own sys.path and fresh
random numbers, is interrupted, dies, runs out of memory and is restarted as
today; kernel code that talks to the fork server's socket gets nothing; and
a gateway whose fork server was killed still runs sessions.

Two gateways are shared by the module: `forked` (on) and `execd` (off, the
control that says what "as today" is). A forked kernel is told from an
exec'd one by its /proc/self/cmdline, which is the fork server's
(`codebox-fork-server`), not ipykernel_launcher's."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import (Server, descendants, errors_of, mcp_client, ok, proc_cmdline,
                      proc_identity, rest_run, stream_of, wait_for, wait_until_quiet)
from test_sandbox import HARDENING_PROBE

FORK = "codebox-fork-server"
SEAT = "kernel-seat"
NAMESPACES = ("mnt", "net", "ipc", "uts", "pid", "cgroup", "user")
SETTINGS = {"CODEBOX_SANDBOX": "bwrap", "CODEBOX_MEMORY_LIMIT_MB": "400"}

# What a kernel says about itself; prints one JSON line. Imports nothing
# that the first-cell checks look for.
PROBE = r"""
import json as _j, os as _o, sys as _s
print(_j.dumps({
    "cmdline": open("/proc/self/cmdline", "rb").read().decode("utf-8", "replace"),
    "pid": _o.getpid(), "ppid": _o.getppid(), "uid": _o.getuid(), "gid": _o.getgid(),
    "groups": _o.getgroups(), "cwd": _o.getcwd(),
    "pandas": "pandas" in _s.modules, "argv": _s.argv, "path": _s.path,
    "pythonpath": _o.environ.get("PYTHONPATH"),
    "ns": {n: _o.readlink("/proc/self/ns/" + n) for n in %r},
    "status": {l.split(":")[0]: l.split(":", 1)[1].strip()
               for l in open("/proc/self/status").read().splitlines()
               if l.startswith(("Cap", "NoNewPrivs", "Seccomp:"))},
    "limits": open("/proc/self/limits").read(),
}))
del _j, _o, _s
""" % (NAMESPACES,)


# --------------------------------------------------------------------------
# helpers


def create(s, sid, **body):
    r = s.post("/sessions", dict({"session_id": sid}, **body))
    assert r.status == 201, r.text
    return r.json()


def cell(s, sid, code, wait=120):
    """Runs code; its results, which must have completed."""
    r = rest_run(s, sid, code, wait=wait)
    assert r["status"] == "completed", (r, s.log_tail())
    return r


def last_json(s, sid, code):
    """The JSON line code printed last."""
    out = stream_of(cell(s, sid, code))
    assert out.strip(), out
    return json.loads(out.strip().splitlines()[-1])


def probe(s, sid):
    return last_json(s, sid, PROBE)


def assert_forked(info):
    cmd = info["cmdline"].replace("\0", " ")
    assert FORK in cmd, "not a forked kernel: " + cmd[:300]
    assert info["ppid"] == 0, info["ppid"]     # its parent is outside the PID namespace
    assert info["argv"][0].endswith("ipykernel_launcher.py") and info["argv"][1] == "-f", \
        info["argv"]


def assert_execd(info):
    cmd = info["cmdline"].split("\0")
    assert FORK not in info["cmdline"], info["cmdline"][:300]
    assert cmd[1:3] == ["-m", "ipykernel_launcher"], cmd[:4]
    assert info["ppid"] != 0


def host_status(pid):
    """/proc/PID/status as {field: value}."""
    with open("/proc/%d/status" % pid) as f:
        return {l.split(":")[0]: l.split(":", 1)[1].strip() for l in f if ":" in l}


def host_read(pid, name):
    try:
        with open("/proc/%d/%s" % (pid, name)) as f:
            return f.read()
    except OSError:
        return None


def host_ns(pid, name):
    try:
        return os.readlink("/proc/%d/ns/%s" % (pid, name))
    except OSError:
        return None


def proc_argv(pid):
    return proc_cmdline(pid).split(" ")


def is_forked(pid):
    """A fork server or a process it forked: codebox-fork-server in its
    command line (bubblewrap's names what it runs: it is none)."""
    return FORK in proc_cmdline(pid) and os.path.basename(proc_argv(pid)[0]) != "bwrap"


def in_pid_ns(link):
    """Host pids of the processes in the PID namespace link names."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and host_ns(int(p), "pid") == link]


def sandbox_members(info):
    """(the kernel's host pid, its seat's host pid), found by the PID
    namespace the kernel said it is in."""
    members = in_pid_ns(info["ns"]["pid"])
    kernels = [p for p in members if is_forked(p)]
    seats = [p for p in members if proc_argv(p)[1:2] == [SEAT]]
    assert len(kernels) == 1 and len(seats) == 1, \
        {p: proc_cmdline(p)[:120] for p in members}
    return kernels[0], seats[0]


def fork_servers(s):
    """Host pids of the gateway's fork servers: root processes named
    codebox-fork-server in the host's PID namespace, below the gateway
    (only there: other gateways on this machine have their own)."""
    mine = host_ns(os.getpid(), "pid")
    return sorted(pid for pid, _ in descendants(s.proc.pid)
                  if is_forked(pid) and host_ns(pid, "pid") == mine
                  and (host_read(pid, "status") or "Uid: -").split("Uid:")[1].split()[0] == "0")


def forked_processes(s):
    """(pid, starttime) of every process named codebox-fork-server that
    belongs to the gateway: below it, or in the PID namespace of one of its
    sandboxes (a forked kernel's parent may be outside the gateway's tree)."""
    mine = host_ns(os.getpid(), "pid")
    below = [pid for pid, _ in descendants(s.proc.pid)]
    spaces = {host_ns(pid, "pid") for pid in below} - {mine, None}
    found = {pid for pid in below if is_forked(pid)}
    for name in os.listdir("/proc"):
        if name.isdigit() and host_ns(int(name), "pid") in spaces and is_forked(int(name)):
            found.add(int(name))
    return {i for i in (proc_identity(pid) for pid in found) if i}


def stop_checked(s):
    """Stops the gateway; its fork server and forked kernels must go too."""
    if s.proc.poll() is None:
        s.kernels |= forked_processes(s)
    s.stop()


@pytest.fixture(scope="module")
def forked():
    # the default preload (numpy, pandas, matplotlib): what the server imports
    s = Server(env=dict(SETTINGS, CODEBOX_FORK_SERVER="on", CODEBOX_POOL_PRELOAD=None))
    yield s
    stop_checked(s)


@pytest.fixture(scope="module")
def execd():
    s = Server(env=dict(SETTINGS, CODEBOX_FORK_SERVER="off"))
    yield s
    s.stop()


# --------------------------------------------------------------------------
# 1. forked, and the control


def test_a_session_kernel_is_forked(forked, execd):
    create(forked, "f1")
    res = cell(forked, "f1", PROBE)
    assert res["execution_count"] == 1, res
    info = json.loads(stream_of(res).strip().splitlines()[-1])
    assert_forked(info)
    assert info["pandas"] is True, "pandas is not imported on the first cell"
    # one fork server for the gateway, which serves every session
    servers = fork_servers(forked)
    assert len(servers) == 1, [(p, proc_cmdline(p)[:100]) for p, _ in descendants(forked.proc.pid)]
    create(forked, "f2")
    assert_forked(probe(forked, "f2"))
    assert fork_servers(forked) == servers
    # over MCP as well, as the model reads it
    call = mcp_client(forked)
    code = ("import sys\n"
            "forked = FORK in open('/proc/self/cmdline', 'rb').read().decode()\n"
            "print('forked=%s pandas=%s' % (forked, 'pandas' in sys.modules))")
    r = call("exec_code", {"session_id": "f-mcp", "code": code.replace("FORK", repr(FORK))})
    ok(r)
    text = "\n".join(c.get("text", "") for c in r["content"])
    assert "forked=True pandas=True" in text, r

    # the control: with the setting off the kernel is ipykernel_launcher's
    create(execd, "e1")
    info = probe(execd, "e1")
    assert_execd(info)
    assert info["pandas"] is False, "CODEBOX_POOL_PRELOAD is empty here"
    assert not fork_servers(execd)


# --------------------------------------------------------------------------
# 2. the same confinement as an exec'd kernel


def test_confined_as_an_execd_kernel(forked, execd):
    create(forked, "c1")
    create(execd, "c1")
    fk, ex = probe(forked, "c1"), probe(execd, "c1")
    assert_forked(fk)
    assert_execd(ex)
    assert fk["uid"] != 0 and fk["gid"] != 0, fk
    assert (fk["uid"], fk["gid"], fk["groups"]) == (ex["uid"], ex["gid"], ex["groups"])
    for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert fk["status"][key] == "0000000000000000", (key, fk["status"])
    assert fk["status"]["NoNewPrivs"] == "1" and fk["status"]["Seccomp"] == "2", fk["status"]
    assert fk["limits"] == ex["limits"], (fk["limits"], ex["limits"])
    assert fk["cwd"] == "/session"

    # what kernel exploits start with is refused as in an exec'd kernel
    # (unshare(CLONE_NEWUSER) among them: EPERM)
    hard_fk = last_json(forked, "c1", HARDENING_PROBE)
    hard_ex = last_json(execd, "c1", HARDENING_PROBE)
    assert hard_fk["unshare_user"] == "EPERM", hard_fk
    assert hard_fk == hard_ex, (hard_fk, hard_ex)

    # on the host: the kernel is in its seat's namespaces and cgroups, as
    # its user, with its rlimits, not in the gateway's cgroups
    kernel, seat = sandbox_members(fk)
    for name in NAMESPACES:
        assert host_ns(kernel, name) == host_ns(seat, name), name
    assert host_read(kernel, "cgroup") == host_read(seat, "cgroup")
    assert host_read(kernel, "cgroup") != host_read(forked.proc.pid, "cgroup")
    assert host_read(kernel, "limits") == host_read(seat, "limits")
    for field in ("Uid", "Gid", "Groups"):
        assert host_status(kernel)[field] == host_status(seat)[field], field

    # only the sandbox's few processes are visible, all in its cgroups
    seen = last_json(forked, "c1", r"""
import json, os
mine = open('/proc/self/cgroup').read()
procs = {}
for p in os.listdir('/proc'):
    if p.isdigit():
        try:
            procs[p] = [open('/proc/%s/cmdline' % p, 'rb').read().replace(b'\0', b' ').decode(),
                        open('/proc/%s/cgroup' % p).read() == mine]
        except OSError as e:
            procs[p] = [repr(e), False]
print(json.dumps({'self': os.getpid(), 'procs': procs}))
""")
    others = {p: v for p, v in seen["procs"].items() if int(p) != seen["self"]}
    assert len(others) <= 2, seen
    for pid, (cmd, same_cgroups) in others.items():
        assert cmd.startswith("bwrap ") or cmd.split(" ")[1:2] == [SEAT], (pid, cmd[:200])
        assert same_cgroups, (pid, cmd[:200])
    assert any(cmd.split(" ")[1:2] == [SEAT] for cmd, _ in others.values()), seen

    # no network beyond loopback, the gateway's port closed
    net = last_json(forked, "c1", r"""
import errno, json, socket
out = {'ifs': [n for _, n in socket.if_nameindex()]}
for name, addr in (('gateway', ('127.0.0.1', %d)), ('outside', ('192.0.2.1', 80))):
    try:
        socket.create_connection(addr, timeout=3).close(); out[name] = 'CONNECTED'
    except OSError as e:
        out[name] = errno.errorcode.get(e.errno, str(e))
print(json.dumps(out))
""" % forked.port)
    assert net["ifs"] == ["lo"], net
    assert net["gateway"] != "CONNECTED" and net["outside"] != "CONNECTED", net

    # its folder is /session, seen through the files API; another
    # session's folder is out of reach
    cell(forked, "c1", "open('written-here.txt', 'w').write('from the forked kernel')")
    r = forked.get("/sessions/c1/files/written-here.txt")
    assert r.status == 200 and r.body == b"from the forked kernel", r
    create(forked, "c2")
    cell(forked, "c2", "open('output/other-secret.txt', 'w').write('of c2')")
    other = os.path.join(forked.state_dir, "c2", "output", "other-secret.txt")
    assert open(other).read() == "of c2"
    out = stream_of(cell(forked, "c1", r"""
import os
found = []
for top in os.listdir('/'):
    if top in ('usr', 'proc', 'sys'):
        continue
    for root, dirs, files in os.walk('/' + top):
        found += [os.path.join(root, f) for f in files if f == 'other-secret.txt']
print('found', found)
for path in [%r, %r]:
    try:
        open(path).read(); print('READ', path)
    except OSError as e:
        print('denied', type(e).__name__)
""" % (other, os.path.join(forked.state_dir, "c2"))))
    assert "found []" in out and "READ" not in out and out.count("denied") == 2, out


# --------------------------------------------------------------------------
# 3. sys.path


def test_sys_path_is_the_sessions(forked, execd):
    create(forked, "p1")
    create(execd, "p1")
    fk, ex = probe(forked, "p1"), probe(execd, "p1")
    assert_forked(fk)
    assert fk["path"][0] == "/session", fk["path"]
    assert fk["pythonpath"] == ex["pythonpath"] and fk["pythonpath"], (fk, ex)
    for entry in fk["pythonpath"].split(":"):
        assert entry in fk["path"], (entry, fk["path"])
    assert fk["path"] == ex["path"], (fk["path"], ex["path"])
    # a module written to /session imports, and so does one in the
    # session's packages folder (PYTHONPATH), made after the kernel started
    out = stream_of(cell(forked, "p1", r"""
import importlib, os
open('/session/mine_in_session.py', 'w').write('WHERE = "session"\n')
os.makedirs('/session/.packages', exist_ok=True)
open('/session/.packages/mine_in_packages.py', 'w').write('WHERE = "packages"\n')
importlib.invalidate_caches()
import mine_in_session, mine_in_packages
print(mine_in_session.WHERE, mine_in_session.__file__)
print(mine_in_packages.WHERE, mine_in_packages.__file__)
"""))
    assert out == ("session /session/mine_in_session.py\n"
                   "packages /session/.packages/mine_in_packages.py\n"), out


# --------------------------------------------------------------------------
# 4. random numbers


DRAW = r"""
import sys
preloaded = 'numpy' in sys.modules
import json, os, random, numpy
print(json.dumps({'random': [random.random() for _ in range(3)],
                  'numpy': numpy.random.rand(3).tolist(), 'preloaded': preloaded,
                  'forked': %r in open('/proc/self/cmdline', 'rb').read().decode()}))
""" % FORK


def test_two_sessions_draw_different_numbers(server_factory):
    """Kernels forked from one server that imported numpy (here by name,
    whatever the server imports by itself) draw different numbers."""
    s = server_factory(env=dict(SETTINGS, CODEBOX_FORK_SERVER="on", CODEBOX_POOL_PRELOAD="numpy"))
    create(s, "r1")
    create(s, "r2")
    one, two = last_json(s, "r1", DRAW), last_json(s, "r2", DRAW)
    s.kernels |= forked_processes(s)
    assert one["forked"] and two["forked"], (one, two)
    assert one["preloaded"] and two["preloaded"], (one, two)
    assert one["random"] != two["random"], (one, two)
    assert one["numpy"] != two["numpy"], (one, two)


# --------------------------------------------------------------------------
# 5. interrupt, kernel death


def test_interrupt_and_kernel_death(forked, execd):
    s = forked
    create(s, "i1")
    before = probe(s, "i1")
    assert_forked(before)
    cell(s, "i1", "keep = 'kept'")
    r = s.post("/execute", {"session_id": "i1", "code":
                            "open('looping', 'w').close()\nwhile True:\n    pass\n"})
    assert r.status == 202, r.text
    rid = r.json()["request_id"]
    wait_for(lambda: os.path.exists(os.path.join(s.state_dir, "i1", "looping")), "the cell")
    time.sleep(0.3)
    assert s.post("/execute/%s/cancel" % rid, {}).status in (200, 202)
    res = s.get("/execute/%s/results?wait=30" % rid).json()
    assert res["status"] == "error" and res["reason"] == "cancelled", res
    assert any(e["ename"] == "KeyboardInterrupt" for e in errors_of(res)), res
    assert not res.get("kernel_restarted"), res
    assert stream_of(cell(s, "i1", "print(keep)")) == "kept\n"
    assert probe(s, "i1")["pid"] == before["pid"]

    # the kernel kills itself: reported as an exec'd kernel's death is
    kill = "import os\nos.kill(os.getpid(), 9)"
    create(execd, "i1")
    cell(execd, "i1", "1")
    ex = rest_run(execd, "i1", kill)
    fk = rest_run(s, "i1", kill)
    for r in (ex, fk):
        assert r["status"] == "error" and r["reason"] == "kernel_died", r
        assert r["kernel_restarted"] is True, r
    assert [e["ename"] for e in errors_of(fk)] == ["KernelDied"], fk
    assert errors_of(fk)[0]["evalue"] == errors_of(ex)[0]["evalue"], (fk, ex)
    # the session goes on in a kernel forked again
    after = probe(s, "i1")
    assert_forked(after)
    assert after["pandas"] is True
    lost = rest_run(s, "i1", "print(keep)")
    assert errors_of(lost) and errors_of(lost)[0]["ename"] == "NameError", lost


# --------------------------------------------------------------------------
# 6. memory limit


def test_memory_limit_ends_the_kernel_as_today(forked, execd):
    grow = "chunks = []\nwhile True:\n    chunks.append(b'\\x01' * (50 << 20))\n"
    ended = {}
    for name, s in (("forked", forked), ("execd", execd)):
        create(s, "m1")
        cell(s, "m1", "keep = 1")
        r = rest_run(s, "m1", grow, wait=120)
        assert r["status"] == "error" and r["kernel_restarted"] is True, (name, r)
        ended[name] = [(e["ename"], e["evalue"]) for e in errors_of(r)]
    assert ended["execd"][0][0] == "KernelDied"
    assert "CODEBOX_MEMORY_LIMIT_MB" in ended["execd"][0][1], ended
    assert ended["forked"] == ended["execd"], ended
    info = probe(forked, "m1")
    assert_forked(info)
    assert stream_of(cell(forked, "m1", "print(6 * 7)")) == "42\n"


# --------------------------------------------------------------------------
# 7. kernel code talks to the fork server


# Talks to the fork server's socket at SOCK: one connection per request of
# MODES (the server may answer before it reads: who asks is known from the
# connection, and a sandbox has one seat). Prints one JSON line: for each
# request, what came back until the server ended the connection, or that
# it did not.
TALK = r"""
import array, json, os, socket, sys, time

def connect():
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(25)
    c.connect(SOCK)
    return c

def answer(c):
    # what the server sent until it ended the connection, or that it did not
    got = b''
    while True:
        try:
            data = c.recv(65536)
        except ConnectionResetError:
            break
        except socket.timeout:
            return {'open': True, 'got': got.decode('utf-8', 'replace')[:300]}
        if not data:
            break
        got += data
    return {'open': False, 'got': got.decode('utf-8', 'replace')[:300]}

def send(c, data, fds=None):
    try:
        if fds:
            c.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))])
        else:
            c.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass        # it ended the connection first
    except socket.timeout:
        return {'open': True, 'got': 'it stopped reading but kept the connection'}
    return answer(c)

out = {'ns': os.readlink('/proc/self/ns/pid')}
if 'silent' in MODES:
    silent = connect()              # half a request, then nothing
    try:
        silent.sendall(b'{"argv": ')
    except (BrokenPipeError, ConnectionResetError):
        pass
    started = time.monotonic()
if 'valid' in MODES:
    # a request as a seat sends it, for a kernel that would live
    ports = []
    for _ in range(5):
        with socket.socket() as p:
            p.bind(('127.0.0.1', 0)); ports.append(p.getsockname()[1])
    conn = dict(zip(['shell_port', 'iopub_port', 'stdin_port', 'control_port', 'hb_port'],
                    ports), ip='127.0.0.1', transport='tcp', key='k' * 32,
                signature_scheme='hmac-sha256')
    open('/tmp/evil-kernel.json', 'w').write(json.dumps(conn))
    request = {'argv': [sys.executable, '-m', 'ipykernel_launcher', '-f', '/tmp/evil-kernel.json'],
               'env': dict(os.environ), 'cwd': os.getcwd()}
    fds = [os.open('/dev/null', os.O_RDWR) for _ in range(3)]
    out['valid'] = send(connect(), json.dumps(request).encode() + b'\n', fds)
if 'garbage' in MODES:
    out['garbage'] = send(connect(), b'this is no JSON at all\n')
if 'big' in MODES:
    out['big'] = send(connect(), b'{"argv": ["' + b'x' * (1 << 20) + b'"]}\n')
if 'silent' in MODES:
    out['silent'] = answer(silent)
    out['silent_s'] = round(time.monotonic() - started, 1)
time.sleep(1)
def cmdline(p):
    try:
        return open('/proc/%s/cmdline' % p, 'rb').read().replace(b'\0', b' ').decode()[:60]
    except OSError:
        return '(gone)'
out['procs'] = sorted(cmdline(p) for p in os.listdir('/proc')
                      if p.isdigit() and int(p) != os.getpid())
print(json.dumps(out))
"""


def assert_dropped(out, key):
    """The server ended the connection of request key, answering nothing
    or a refusal (never a kernel's pid)."""
    r = out[key]
    assert r["open"] is False, (key, out)
    if r["got"]:
        assert r["got"].startswith('{"refused"'), (key, out)
        assert list(json.loads(r["got"].splitlines()[0])) == ["refused"], (key, out)


def fork_socket(server_pid):
    """The host path of the socket the fork server listens on."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % server_pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (server_pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    with open("/proc/net/unix") as f:
        paths = [line.split()[7] for line in f
                 if len(line.split()) >= 8 and line.split()[6] in inodes]
    assert len(paths) == 1, paths
    return paths[0]


def a_quiet_forked_session(s, sid):
    """Makes session sid (its kernel forked), waits until every kernel is
    quiet; returns what its kernel says of itself (probe), the forked
    processes then and the fork server's identity."""
    create(s, sid)
    info = probe(s, sid)
    assert_forked(info)
    wait_until_quiet(s)
    return info, forked_processes(s), proc_identity(fork_servers(s)[0])


def test_kernel_code_gets_nothing_from_the_fork_server(forked):
    """From inside a forked kernel: a request as the seat makes it is
    refused, garbage, a 1 MiB line and a half request are dropped; nothing
    is started, the server goes on."""
    s = forked
    info, before, server = a_quiet_forked_session(s, "h1")
    out = last_json(s, "h1", "MODES = ['silent', 'valid', 'garbage', 'big']\n"
                             "SOCK = '/run/codebox-fork.sock'\n" + TALK)
    assert out["ns"] == info["ns"]["pid"], out
    assert out["valid"]["open"] is False and out["valid"]["got"].startswith('{"refused"'), out
    assert "refused" in json.loads(out["valid"]["got"].splitlines()[0]), out
    for key in ("garbage", "big", "silent"):
        assert_dropped(out, key)
    assert out["silent_s"] < 25, out
    # nothing was started: in the sandbox, on the host
    assert all(FORK not in p for p in out["procs"]), out
    kernel, seat = sandbox_members(info)
    assert [p for p in in_pid_ns(info["ns"]["pid"]) if is_forked(p)] == [kernel]
    time.sleep(1)
    assert forked_processes(s) == before, (before, forked_processes(s))
    assert fork_servers(s) == [server[0]] and proc_identity(server[0]) == server
    # the kernel that tried goes on, and the server serves new sandboxes
    assert stream_of(cell(s, "h1", "print(6 * 7)")) == "42\n"
    create(s, "h2")
    after = probe(s, "h2")
    assert_forked(after)
    assert after["pandas"] is True


def test_requests_it_cannot_read_are_dropped(forked):
    """What reaches the server's reading (a process of the kernels' user in
    a PID namespace of its own with no kernel yet, made here on the host):
    garbage, a line over the bound and a request that never ends are
    dropped, the server starts nothing and goes on."""
    s = forked
    info, before, server = a_quiet_forked_session(s, "d1")
    path = fork_socket(server[0])
    # each request from a sandbox of its own (a sandbox has one seat: the
    # server refuses its next connections at once); the socket's folder may
    # be closed to the kernels' user: in a mount namespace of its own the
    # socket is bound where that user reaches it
    clients = {}
    for mode in ("garbage", "big", "silent"):
        script = os.path.join(s.tmp, "talk-%s.py" % mode)
        where = os.path.join(s.tmp, "fork-%s.sock" % mode)
        with open(script, "w") as f:
            f.write("MODES = [%r]\nSOCK = %r\n" % (mode, where) + TALK)
        open(where, "w").close()
        os.chmod(script, 0o644)
        inner = ("mount --bind %s %s && exec setpriv --reuid %d --regid %d --clear-groups "
                 "/usr/bin/python3 %s" % (path, where, info["uid"], info["gid"], script))
        clients[mode] = subprocess.Popen(["unshare", "--pid", "--fork", "--mount", "--mount-proc",
                                          "sh", "-c", inner],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for mode, proc in clients.items():
        stdout, stderr = proc.communicate(timeout=90)
        assert proc.returncode == 0, (mode, stdout, stderr)
        out = json.loads(stdout.strip().splitlines()[-1])
        assert_dropped(out, mode)
        if mode == "silent":
            assert 5 < out["silent_s"] < 25, out     # given its 10 s, not refused at once
        assert all(FORK not in p for p in out["procs"]), out     # /proc of its namespace
        assert not in_pid_ns(out["ns"]), "a process was left in the client's namespace"
    time.sleep(1)
    assert forked_processes(s) == before, (before, forked_processes(s))
    assert fork_servers(s) == [server[0]] and proc_identity(server[0]) == server
    assert stream_of(cell(s, "d1", "print(6 * 7)")) == "42\n"
    create(s, "d2")
    assert_forked(probe(s, "d2"))


# --------------------------------------------------------------------------
# 8. the fork server killed (last: it changes the shared gateway)


def test_a_killed_fork_server_leaves_sessions_working(forked):
    s = forked
    create(s, "k1")
    assert_forked(probe(s, "k1"))
    servers = fork_servers(s)
    assert len(servers) == 1, servers
    victim = proc_identity(servers[0])
    assert victim in descendants(s.proc.pid)     # this gateway's, no other's
    os.kill(servers[0], signal.SIGKILL)
    wait_for(lambda: proc_identity(servers[0]) != victim, "the fork server still runs")
    time.sleep(1)   # a user comes a moment later, not in the same millisecond
    create(s, "k2")
    r = rest_run(s, "k2", "print(6 * 7)")
    assert r["status"] == "completed" and stream_of(r) == "42\n", (r, s.log_tail())
    info = probe(s, "k2")
    if FORK in info["cmdline"]:
        assert_forked(info)
        assert fork_servers(s) and fork_servers(s) != servers     # a new one
    else:
        assert_execd(info)

    # a session that was running before works again (a new kernel at most)
    def runs():
        r = rest_run(s, "k1", "print(7 * 6)")
        return r["status"] == "completed" and stream_of(r) == "42\n"
    wait_for(runs, "the older session does not run again: " + s.log_tail(), timeout=60)
    assert s.get("/healthz").status == 200
