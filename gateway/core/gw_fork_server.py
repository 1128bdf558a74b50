"""The fork server of Python kernels (CODEBOX_FORK_SERVER=on; started by
gw_fork_server.c, which embeds this file): one root process imports what
every kernel loads (ipykernel, then CODEBOX_POOL_PRELOAD's modules, a
plot drawn to PNG), moves those objects out of the collector's reach
(gc.freeze(): a collection in a child would write to every shared page),
and forks each kernel from itself, so that its pages are shared by every
kernel until one writes to them.

    PYTHON -c "exec(the source on fd 5)" codebox-fork-server LISTEN_FD SECCOMP_FD UID NAMES

A sandbox is made by bubblewrap as for any kernel; the command inside is
`codebox kernel-seat` (gw_cmd_kernel_seat.c), which connects to the
socket on LISTEN_FD (bound into every sandbox) and sends one JSON line
{"argv", "env", "cwd"} with its descriptors 0, 1 and 2. Who asks is known
from the connection itself (SO_PEERPIDFD, SO_PEERCRED), never from what
it says: its process, user, sandbox (PID namespace) and cgroups.

- The server takes a connection only from a process of the kernels' user
  UID in a PID namespace other than its own, one live kernel per sandbox;
  it reads nothing itself: it forks an intermediate per connection and
  goes back to accepting, so no peer can stall it.
- The intermediate (root) reads the request (at most REQUEST_MAX bytes in
  REQUEST_WAIT_S), checks that argv is this Python running
  ipykernel_launcher, joins the peer's cgroups (so what it and the kernel
  write is charged to the session), takes its rlimits, clears its groups,
  then joins its namespaces (user, cgroup, IPC, UTS, network, PID, mount)
  with setns(2) on the peer's pidfd, and forks the kernel, which is in the
  sandbox's PID namespace. It then waits: the kernel's end is sent to the
  seat ({"exit": wait status}); the seat's end kills the kernel.
- The kernel drops every capability (bounding set, ambient), becomes the
  peer's uid, sets no_new_privs and the sandbox's seccomp filter (read
  from SECCOMP_FD at start: bubblewrap's), takes the seat's stdio,
  environment and folder, reseeds `random` and numpy's global generator,
  and runs ipykernel_launcher as `python -m` would.
- Anything refused is answered {"refused": why}; the seat then starts the
  kernel itself, as without a fork server.

What children still share with each other: the preloaded objects (never
secret: the same imports), the address-space layout and the str hash
seed of the server; see docs/SECURITY.md."""

import ctypes
import gc
import json
import os
import resource
import select
import signal
import socket
import struct
import sys

LIBC = ctypes.CDLL(None, use_errno=True)
SO_PEERPIDFD = 77
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2
SYS_PIDFD_SEND_SIGNAL = 424
# (name in /proc/PID/ns, its CLONE_NEW* flag), the user namespace first
NAMESPACES = (("user", 0x10000000), ("cgroup", 0x02000000), ("ipc", 0x08000000),
              ("uts", 0x04000000), ("net", 0x40000000), ("pid", 0x20000000),
              ("mnt", 0x00020000))
REQUEST_MAX = 256 * 1024
REQUEST_WAIT_S = 10
LIVE_MAX = 512


class Refused(Exception):
    pass


def say(text):
    os.write(2, ("codebox fork server: %s\n" % text).encode())


def prctl(option, arg=0):
    if LIBC.prctl(option, ctypes.c_ulong(arg), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl %d" % option)


def preload(names):
    """What every kernel loads, and the first plot's costs, paid once."""
    import importlib
    import ipykernel.kernelapp     # noqa: F401
    import ipykernel.ipkernel      # noqa: F401
    import ipykernel.zmqshell      # noqa: F401
    for name in names + ["IPython.display"]:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    if "matplotlib" not in sys.modules:
        return
    try:
        # drawn on a figure of its own through Agg, never through pyplot
        # or pandas' plotting (which calls pyplot): pyplot's backend is
        # chosen in the kernel, where the inline one hooks into IPython
        import io
        import matplotlib.pyplot    # noqa: F401  (imported, no backend yet)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        figure = Figure()
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        axes.plot([0, 1], [1, 0], label="a")
        axes.legend()
        figure.savefig(io.BytesIO(), format="png", bbox_inches="tight")
    except Exception:
        pass


def ns_inode(pid, name):
    return os.stat("/proc/%s/ns/%s" % (pid, name)).st_ino


def alive(pidfd):
    return LIBC.syscall(SYS_PIDFD_SEND_SIGNAL, pidfd, 0, None, 0) == 0


def refuse(conn, why):
    try:
        conn.send(json.dumps({"refused": why}).encode() + b"\n", socket.MSG_DONTWAIT)
    except OSError:
        pass


def cgroup_mount(controllers):
    """Where the hierarchy of these controllers ("" for cgroup2) is."""
    wanted = set(controllers.split(",")) if controllers else set()
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            kind, options = fields[sep + 1], set(fields[sep + 3].split(","))
            if fields[3] != "/":
                continue
            if (kind == "cgroup2" and not wanted) or (kind == "cgroup" and wanted
                                                      and wanted <= options):
                return fields[4]
    return None


def join_cgroups(pid):
    """Moves this process into every cgroup of pid that is not ours."""
    with open("/proc/self/cgroup") as f:
        ours = set(f.read().splitlines())
    with open("/proc/%d/cgroup" % pid) as f:
        theirs = f.read().splitlines()
    for line in theirs:
        if line in ours:
            continue
        _, controllers, path = line.split(":", 2)
        mount = cgroup_mount(controllers)
        if not mount or ".." in path.split("/"):
            raise Refused("cgroup %s is not mounted here" % controllers)
        with open(os.path.join(mount, path.lstrip("/"), "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))


LIMITS = {"Max cpu time": resource.RLIMIT_CPU, "Max file size": resource.RLIMIT_FSIZE,
          "Max data size": resource.RLIMIT_DATA, "Max stack size": resource.RLIMIT_STACK,
          "Max core file size": resource.RLIMIT_CORE, "Max processes": resource.RLIMIT_NPROC,
          "Max open files": resource.RLIMIT_NOFILE, "Max address space": resource.RLIMIT_AS,
          "Max locked memory": resource.RLIMIT_MEMLOCK,
          "Max pending signals": resource.RLIMIT_SIGPENDING,
          "Max msgqueue size": resource.RLIMIT_MSGQUEUE}


def take_limits(pid):
    """pid's rlimits, or ours where they are lower. Read from /proc: prlimit(2)
    on another user's process needs CAP_SYS_RESOURCE, which containers drop."""
    def number(text):
        return resource.RLIM_INFINITY if text == "unlimited" else int(text)
    with open("/proc/%d/limits" % pid) as f:
        lines = f.read().splitlines()[1:]
    for line in lines:
        name = line[:26].strip()
        if name not in LIMITS:
            continue
        soft, hard = (number(v) for v in line[26:].split()[:2])
        mine = resource.getrlimit(LIMITS[name])

        def low(a, b):
            return b if a == resource.RLIM_INFINITY else a if b == resource.RLIM_INFINITY \
                else min(a, b)
        hard = low(hard, mine[1])
        resource.setrlimit(LIMITS[name], (low(soft, hard), hard))


def read_request(conn):
    conn.settimeout(REQUEST_WAIT_S)
    data, fds = b"", []
    while b"\n" not in data:
        chunk, got, _, _ = socket.recv_fds(conn, 65536, 3)
        fds += got
        if not chunk or len(data) + len(chunk) > REQUEST_MAX:
            raise Refused("the request is cut or over %d bytes" % REQUEST_MAX)
        data += chunk
    request = json.loads(data.split(b"\n", 1)[0])
    argv, env, cwd = request.get("argv"), request.get("env"), request.get("cwd")
    if (len(fds) != 3 or not isinstance(argv, list) or not isinstance(env, dict)
            or not isinstance(cwd, str) or len(argv) < 3 or len(argv) > 256
            or not all(isinstance(a, str) for a in argv)
            or not all(isinstance(k, str) and isinstance(v, str) and "=" not in k and k
                       for k, v in env.items())):
        raise Refused("not a request: argv, env, cwd and three descriptors")
    if (argv[1:3] != ["-m", "ipykernel_launcher"]
            or os.path.realpath(argv[0]) != os.path.realpath(sys.executable)):
        raise Refused("not %s -m ipykernel_launcher" % sys.executable)
    return argv, env, cwd, fds


def confine(uid, seccomp):
    """The kernel's last steps as root of the sandbox's user namespace."""
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    for cap in range(64):
        if LIBC.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break
    os.setresuid(uid, uid, uid)
    # in the sandbox's user namespace our uid was not its root, so
    # becoming uid cleared nothing: the capabilities setns gave go here
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    if LIBC.capset(header, data) != 0:
        raise Refused("capset: %s" % os.strerror(ctypes.get_errno()))
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
    if int(status["CapEff"], 16) or int(status["CapBnd"], 16) or os.getuid() != uid:
        raise Refused("capabilities left after dropping them")
    prctl(PR_SET_DUMPABLE, 1)
    prctl(PR_SET_NO_NEW_PRIVS, 1)

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
    program = Program(len(seccomp) // 8, seccomp)
    if LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise Refused("seccomp: %s" % os.strerror(ctypes.get_errno()))


def python_path(env, cwd):
    """sys.path as `python -m` would make it in the sandbox."""
    import site
    base = [p for p in sys.path[1:] if p]
    extra = [p for p in env.get("PYTHONPATH", "").split(":") if p]
    site.USER_BASE = site.USER_SITE = None
    site.ENABLE_USER_SITE = True
    user = site.getusersitepackages()
    first_site = next((i for i, p in enumerate(base) if p.endswith("-packages")), len(base))
    if os.path.isdir(user):
        base.insert(first_site, user)
    return [cwd] + extra + base


def kernel(conn, argv, env, cwd, fds, uid, seccomp):
    """The forked kernel, in the sandbox's namespaces, still root there."""
    os.setsid()
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
    conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
    conn.close()
    os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    os.chdir(cwd)
    confine(uid, seccomp)
    for number in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.environ.clear()
    os.environ.update(env)
    sys.path[:] = python_path(env, cwd)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None and getattr(pyplot, "_backend_mod", None) is not None:
        # (a preloaded module chose it): chosen again in the kernel
        pyplot._backend_mod = None
        sys.modules.pop("matplotlib_inline.backend_inline", None)
    import random
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    import runpy
    sys.argv = [argv[0]] + argv[3:]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


def intermediate(conn, pidfd, pid, uid, gid, flags, seccomp):
    """Root, one per kernel: joins the sandbox, forks the kernel, waits."""
    for number in (signal.SIGTERM, signal.SIGCHLD, signal.SIGINT):
        signal.signal(number, signal.SIG_DFL)
    step = "the request"
    try:
        argv, env, cwd, fds = read_request(conn)
        step = "its cgroups"
        join_cgroups(pid)
        step = "its limits"
        take_limits(pid)
        step = "its user"
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        if not alive(pidfd):
            raise Refused("the seat ended")
        step = "its namespaces"
        if LIBC.setns(pidfd, flags) != 0:
            raise OSError(ctypes.get_errno(), "setns")
    except (Refused, OSError, ValueError) as e:
        refuse(conn, "%s: %s" % (step, e))
        return 1
    child = os.fork()
    if child == 0:
        try:
            kernel(conn, argv, env, cwd, fds, uid, seccomp)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException as e:
            say("the kernel: %s: %s" % (type(e).__name__, e))
            refuse(conn, "%s: %s" % (type(e).__name__, e))
            code = 1
        os._exit(code)
    for fd in fds + [pidfd]:
        os.close(fd)
    watch = os.pidfd_open(child)
    while True:
        ready, _, _ = select.select([conn, watch], [], [])
        if watch in ready:
            _, status = os.waitpid(child, 0)
            try:
                conn.sendall(json.dumps({"exit": status}).encode() + b"\n")
            except OSError:
                pass
            return 0
        if not conn.recv(4096):
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            return 0


def serve(conn, live, own, uid, seccomp):
    """One connection: checks who asks, then forks its intermediate."""
    pidfd = conn.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
    try:
        pid, peer_uid, peer_gid = struct.unpack(
            "3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        theirs = {name: ns_inode(pid, name) for name, _ in NAMESPACES}
        if not alive(pidfd):
            return
        if peer_uid != uid:
            return refuse(conn, "not the kernels' user")
        if theirs["pid"] == own["pid"] or theirs["mnt"] == own["mnt"]:
            return refuse(conn, "not in a sandbox")
        if theirs["pid"] in live.values():
            return refuse(conn, "this sandbox has its kernel")
        if len(live) >= LIVE_MAX:
            return refuse(conn, "too many kernels")
        flags = 0
        for name, flag in NAMESPACES:
            if theirs[name] != own[name]:
                flags |= flag
        child = os.fork()
        if child == 0:
            code = 1
            try:
                code = intermediate(conn, pidfd, pid, peer_uid, peer_gid, flags, seccomp)
            finally:
                os._exit(code)
        live[child] = theirs["pid"]
    finally:
        os.close(pidfd)


def reap(live):
    while live:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            live.clear()
            return
        if not pid:
            return
        live.pop(pid, None)


def main():
    listen_fd, seccomp_fd, uid = (int(a) for a in sys.argv[2:5])
    names = [n for n in sys.argv[5].split(",") if n] if len(sys.argv) > 5 else []
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:
        return
    seccomp = os.pread(seccomp_fd, 1 << 20, 0)
    os.close(seccomp_fd)
    os.close(5)     # this source
    if not seccomp or len(seccomp) % 8:
        say("no seccomp program")
        return
    preload(names)
    own = {name: ns_inode("self", name) for name, _ in NAMESPACES}
    listener = socket.socket(fileno=listen_fd)
    gc.collect()
    gc.freeze()
    live = {}
    while True:
        reap(live)
        ready, _, _ = select.select([listener], [], [], 1.0)
        if not ready:
            continue
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        with conn:
            try:
                serve(conn, live, own, uid, seccomp)
            except OSError as e:
                say("a connection: %s" % e)


main()
