"""The fork server of Python kernels (CODEBOX_FORK_SERVER=on; started by
gw_fork_server.c, which embeds this file): one root process imports what
every kernel loads (ipykernel, then CODEBOX_POOL_PRELOAD's modules, a
plot drawn to PNG), moves those objects out of the collector's reach
(gc.freeze(): a collection in a child would write to every shared page),
and forks each kernel from itself, so that its pages are shared by every
kernel until one writes to them.

    PYTHON -c "exec(the source on fd 5)" codebox-fork-server LISTEN_FD SECCOMP_FD UID NAMES

A sandbox is made by bubblewrap as for any kernel; the command inside is
`codebox-sidecar kernel-seat` (gw_cmd_kernel_seat.c), which connects to the
socket on LISTEN_FD (bound into every sandbox) and sends one JSON line
{"argv", "env", "cwd"} with its descriptors 0, 1 and 2. Who asks is known
from the connection itself (SO_PEERPIDFD, SO_PEERCRED), never from what
it says: its process, user, sandbox (PID namespace) and cgroups.

- The server takes a connection only from a process of the kernels' user
  UID in a PID namespace other than its own, one kernel per sandbox, at
  most LIVE_MAX; it never blocks on one: a request (at most REQUEST_MAX
  bytes, in REQUEST_WAIT_S) is read as it comes, in one poll loop.
- With the request whole (argv must be this Python running
  ipykernel_launcher), it forks the kernel into the sandbox's PID
  namespace (setns(2) of its own children's, on the peer's pidfd, and
  back). The kernel, root until it drops it, joins the peer's cgroups (what
  it writes is charged to the session), takes its rlimits (those lower
  than ours), clears its groups, joins its other namespaces (user, cgroup,
  IPC, UTS, network, mount), drops every capability, becomes the peer's
  uid, sets no_new_privs and the sandbox's seccomp filter (read from
  SECCOMP_FD at start: bubblewrap's), sends {"pid": its pid in the
  sandbox}, takes the seat's stdio, environment and folder, reseeds `random` and
  numpy's global generator, and runs ipykernel_launcher as `python -m`
  would.
- The server stays the kernel's parent: its end is sent to the seat
  ({"exit": wait status}); the seat's end kills it.
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
import time

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
CLONE_NEWPID = dict(NAMESPACES)["pid"]
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


def lower(a, b):
    """The lower of two rlimit values (RLIM_INFINITY the highest)."""
    if a == resource.RLIM_INFINITY:
        return b
    return a if b == resource.RLIM_INFINITY else min(a, b)


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
        hard = lower(hard, resource.getrlimit(LIMITS[name])[1])
        resource.setrlimit(LIMITS[name], (lower(soft, hard), hard))


def parse_request(data, fds):
    """argv, env and cwd of a whole request line, or Refused."""
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
    return argv, env, cwd


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


class Seat:
    """One connection from a seat: who it is (from the socket), what it
    asked, and its kernel once forked."""

    def __init__(self, conn, pidfd, pid, uid, gid, key, flags):
        self.conn, self.pidfd, self.pid, self.uid, self.gid = conn, pidfd, pid, uid, gid
        self.key, self.flags = key, flags
        self.data, self.fds, self.kernel, self.ended = b"", [], 0, False
        self.deadline = time.monotonic() + REQUEST_WAIT_S

    def close(self):
        for fd in self.fds + [self.pidfd]:
            os.close(fd)
        self.fds, self.pidfd = [], -1
        self.conn.close()


def enter(seat, argv, env, cwd, seccomp):
    """In the forked kernel (already in the sandbox's PID namespace): its
    cgroups, limits, user and namespaces, then the kernel itself."""
    for number in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.set_wakeup_fd(-1)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    join_cgroups(seat.pid)
    take_limits(seat.pid)
    os.setgroups([])
    os.setresgid(seat.gid, seat.gid, seat.gid)
    if not alive(seat.pidfd):
        raise Refused("the seat ended")
    if LIBC.setns(seat.pidfd, seat.flags & ~CLONE_NEWPID) != 0:
        raise OSError(ctypes.get_errno(), "setns")
    os.setsid()
    for i, fd in enumerate(seat.fds):
        os.dup2(fd, i)
    os.chdir(cwd)
    confine(seat.uid, seccomp)
    # only now: a kernel that could not be confined is refused, and its
    # seat starts the kernel itself
    seat.conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
    os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    os.environ.clear()
    os.environ.update(env)
    sys.path[:] = python_path(env, cwd)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None and getattr(pyplot, "_backend_mod", None) is not None:
        # (a preloaded module chose it): chosen again in the kernel
        pyplot._backend_mod = None
        sys.modules.pop("matplotlib_inline.backend_inline", None)
    if "multiprocessing.process" in sys.modules:     # made at its import
        sys.modules["multiprocessing.process"].current_process().authkey = os.urandom(32)
    import random
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    import runpy
    sys.argv = [argv[0]] + argv[3:]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


def fork_kernel(seat, argv, env, cwd, seccomp, own_pid_ns):
    """Forks the kernel into the seat's PID namespace; returns its pid."""
    if LIBC.setns(seat.pidfd, CLONE_NEWPID) != 0:
        raise OSError(ctypes.get_errno(), "setns to its PID namespace")
    try:
        child = os.fork()
    except OSError:
        child = -1
    if child:
        # (our own children's namespace again; the kernel stays where it is)
        if LIBC.setns(own_pid_ns, CLONE_NEWPID) != 0:
            say("cannot return to our PID namespace: ending")
            os._exit(1)
        if child < 0:
            raise Refused("fork failed")
        return child
    code = 1
    try:
        enter(seat, argv, env, cwd, seccomp)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException as e:
        say("a kernel: %s: %s" % (type(e).__name__, e))
        refuse(seat.conn, "%s: %s" % (type(e).__name__, e))
    finally:
        os._exit(code)


class Server:
    def __init__(self, listener, uid, seccomp):
        self.listener, self.uid, self.seccomp = listener, uid, seccomp
        self.own = {name: ns_inode("self", name) for name, _ in NAMESPACES}
        self.own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        self.seats = {}         # connection fd -> Seat
        self.kernels = {}       # kernel pid -> Seat
        self.wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, lambda number, frame: None)
        signal.set_wakeup_fd(wake_w)

    def drop(self, seat, why=None):
        if why:
            refuse(seat.conn, why)
        self.seats.pop(seat.conn.fileno(), None)
        if seat.kernel:
            self.kernels.pop(seat.kernel, None)
        seat.close()

    def accept(self):
        """Checks who connects; keeps a seat, or refuses it at once."""
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        try:
            pidfd = conn.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
        except OSError:
            conn.close()
            return
        try:
            pid, uid, gid = struct.unpack(
                "3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
            theirs = {name: ns_inode(pid, name) for name, _ in NAMESPACES}
            why = None
            if not alive(pidfd):
                why = "gone"
            elif uid != self.uid:
                why = "not the kernels' user"
            elif theirs["pid"] == self.own["pid"] or theirs["mnt"] == self.own["mnt"]:
                why = "not in a sandbox"
            elif any(s.key == theirs["pid"] for s in self.seats.values()):
                why = "this sandbox has its kernel"
            elif len(self.seats) >= LIVE_MAX:
                why = "too many kernels"
        except (OSError, ValueError) as e:
            why = "who: %s" % e
        if why:
            refuse(conn, why)
            os.close(pidfd)
            conn.close()
            return
        flags = 0
        for name, flag in NAMESPACES:
            if theirs[name] != self.own[name]:
                flags |= flag
        conn.setblocking(False)
        self.seats[conn.fileno()] = Seat(conn, pidfd, pid, uid, gid, theirs["pid"], flags)

    def read(self, seat):
        """A request comes in pieces; a kernel's seat only ever ends."""
        try:
            chunk, fds, _, _ = socket.recv_fds(seat.conn, 65536, 3)
        except BlockingIOError:
            return
        except OSError:
            chunk, fds = b"", []
        seat.fds += fds
        if seat.kernel:
            if not chunk:       # the seat ended: so does its kernel
                os.kill(seat.kernel, signal.SIGKILL)
                seat.ended = True   # (no longer polled: it is reaped next)
            for fd in fds:
                os.close(fd)
            seat.fds = []
            return
        if not chunk or len(seat.data) + len(chunk) > REQUEST_MAX or len(seat.fds) > 3:
            return self.drop(seat, "the request is cut, or over %d bytes" % REQUEST_MAX)
        seat.data += chunk
        if b"\n" not in seat.data:
            return
        try:
            argv, env, cwd = parse_request(seat.data, seat.fds)
            seat.kernel = fork_kernel(seat, argv, env, cwd, self.seccomp, self.own_pid_ns)
        except (Refused, OSError, ValueError, RecursionError) as e:
            return self.drop(seat, str(e))
        self.kernels[seat.kernel] = seat
        for fd in seat.fds:
            os.close(fd)
        seat.fds, seat.data = [], b""

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            seat = self.kernels.pop(pid, None)
            if seat:
                try:
                    seat.conn.send(json.dumps({"exit": status}).encode() + b"\n",
                                   socket.MSG_DONTWAIT)
                except OSError:
                    pass
                seat.kernel = 0
                self.drop(seat)

    def run(self):
        """Forever: no request, peer or kernel ends the server (a hostile
        kernel that could would end every other kernel's sharing)."""
        while True:
            now = time.monotonic()
            for seat in list(self.seats.values()):
                if not seat.kernel and seat.deadline < now:
                    self.drop(seat, "no request in %d s" % REQUEST_WAIT_S)
            waits = [s.deadline - now for s in self.seats.values() if not s.kernel]
            poll = select.poll()
            poll.register(self.listener, select.POLLIN)
            poll.register(self.wake_r, select.POLLIN)
            for fd, seat in self.seats.items():
                if not seat.ended:
                    poll.register(fd, select.POLLIN)
            ready = {fd for fd, _ in poll.poll(max(50, int(min(waits) * 1000)) if waits
                                               else None)}
            if self.wake_r in ready:
                try:
                    os.read(self.wake_r, 4096)
                except BlockingIOError:
                    pass
            self.reap()
            for fd in ready:
                seat = self.seats.get(fd)
                if not seat:
                    continue
                try:
                    self.read(seat)
                except Exception as e:      # noqa: BLE001 (the loop goes on)
                    say("a seat: %s: %s" % (type(e).__name__, e))
                    if seat.kernel:
                        seat.ended = True
                    else:
                        self.drop(seat, "unreadable request")
            if self.listener.fileno() in ready:
                try:
                    self.accept()
                except Exception as e:      # noqa: BLE001
                    say("a connection: %s: %s" % (type(e).__name__, e))


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
    # what the imports print (debugpy's notes on frozen modules...) is not
    # the gateway's log: only the server's own lines go there
    log = os.dup(2)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)
    try:
        preload(names)
    finally:
        os.dup2(log, 2)
        os.close(log)
        os.close(quiet)
    listener = socket.socket(fileno=listen_fd)
    listener.setblocking(False)
    server = Server(listener, uid, seccomp)
    gc.collect()
    gc.freeze()
    server.run()


main()
