"""procs.py: the process table and what processes hold in memory, for
tests/bench/first_cell.py (issue 43): every process with its parent, argv
and CPU ticks; a process's pid namespace; RSS, PSS and USS from
/proc/PID/smaps_rollup. And which processes are one session's when the
gateway runs its kernels through its fork server (CODEBOX_FORK_SERVER=on):
bubblewrap, the seat (`codebox kernel-seat`), the kernel-relay and the
forked kernel, which is not below bubblewrap but a child of an
intermediate process, itself a child of the fork server. Run by the
benchmark's main thread; reads /proc only (run as root: another user's
namespaces and smaps are not readable)."""
import os

FORK_MARK = "codebox-fork-server"   # in the server's argv, so in every process it forked


def processes():
    """pid -> (ppid, argv, CPU ticks) of every process now."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/cmdline" % name, "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue    # ended meanwhile
        out[int(name)] = (int(fields[1]), argv, int(fields[11]) + int(fields[12]))
    return out


def descendants(procs, root):
    """The pids below root (not root itself)."""
    children = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def is_kernel(argv):
    """A kernel exec'd from its kernelspec (not forked)."""
    return any(a.endswith("ipykernel_launcher") or a.endswith("ipykernel_launcher.py")
               for a in argv[:3])


def pid_ns(pid):
    """The pid namespace pid lives in ("pid:[4026531836]"), None when
    the process ended."""
    try:
        return os.readlink("/proc/%d/ns/pid" % pid)
    except OSError:
        return None


HOST_NS = pid_ns(os.getpid())


def is_forked_kernel(pid, argv):
    """A kernel the fork server forked: its argv is the server's, and it
    lives in its sandbox's pid namespace, not the server's."""
    return FORK_MARK in argv and pid_ns(pid) not in (None, HOST_NS)


def memory_kb(pids, private=False):
    """Sum of Rss and Pss over pids, in KiB (a process that ended counts
    0); private: also the pages no other process maps (USS)."""
    rss = pss = uss = 0
    for pid in pids:
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
                    elif line.startswith("Private_"):
                        uss += int(line.split()[1])
        except OSError:
            pass
    return (rss, pss, uss) if private else (rss, pss)


def s_ancestors(procs, pid, stop):
    """pid's ancestors, nearest first, up to (not with) stop."""
    out = []
    up = procs[pid][0]
    while up != stop and up in procs:
        out.append(up)
        up = procs[up][0]
    return out


def s_front(procs, below, conn):
    """The process that bubblewrap started for the kernel whose connection
    file is named conn: the seat, or the kernel itself when the seat
    exec'd it (the server refused) or there is no seat."""
    for pid in below:
        argv = procs[pid][1]
        if "-f" not in argv[:-1] or os.path.basename(argv[argv.index("-f") + 1]) != conn:
            continue
        if (len(argv) > 1 and argv[1] == "kernel-seat") or is_kernel(argv):
            return pid
    return None


def fork_groups(procs, gateway, conns):
    """The processes of each session under a fork server, and the fork
    server's own. Returns (groups, kernels, server, shared): groups maps
    each connection file name in conns to its processes (bubblewrap's two,
    the seat, every process in the sandbox's pid namespace (the forked
    kernel and what it started), the kernel-relay); kernels maps it to its
    forked kernel's pid (None: the kernel was exec'd, not forked); server
    is the fork server's pid (None: no kernel was forked); shared is the
    server and the processes below it outside the sandboxes (its
    intermediates, the warm pool's among them)."""
    below = descendants(procs, gateway)
    ns = {pid: pid_ns(pid) for pid in procs}
    groups, kernels, server = {}, {}, None
    for conn in conns:
        front = s_front(procs, below, conn)
        if front is None:
            continue
        inside = [front]    # without the sandbox, no namespace of its own
        if ns[front] != HOST_NS:
            inside = [pid for pid in procs if ns[pid] == ns[front]]
        group = set(s_ancestors(procs, front, gateway) + inside)
        for pid in inside:
            group.update(descendants(procs, pid))
        group.update(r for r in below if "kernel-relay" in procs[r][1]
                     and any(conn in a for a in procs[r][1]))
        groups[conn] = sorted(group)
        forked = [pid for pid in inside if FORK_MARK in procs[pid][1]]
        kernels[conn] = forked[0] if forked else None
        if forked:      # up the chain: the intermediates, then the server
            chain = [p for p in s_ancestors(procs, forked[0], 0) if FORK_MARK in procs[p][1]]
            server = chain[-1] if chain else None
    shared = []
    if server is not None:
        shared = [server] + [pid for pid in descendants(procs, server) if ns[pid] == HOST_NS]
    return groups, kernels, server, shared
