"""A fork server for Python kernels, as a measurement of the mechanism only
(issue 43; not wired into the gateway): one process imports what every
kernel loads (ipykernel's kernelapp, numpy, pandas, matplotlib with pyplot
on Agg), moves those objects out of the garbage collector's reach
(gc.freeze(), so that a collection in a child does not write to the pages
it shares with the server), then forks N children. Each child starts an
IPKernelApp on DIR/kernel-I.json (the kernel binds its ports and writes the
file) and ends when the server ends (PR_SET_PDEATHSIG). The server writes
DIR/server.json ({"server": PID, "children": [PID...]}) once every child
is forked, and on SIGTERM ends its children, then itself.

    /usr/bin/python3 tests/bench/fork_kernels.py DIR N

tests/bench/first_cell.py starts it, checks that each kernel answers, and
measures what the server and its children take together.
"""
import ctypes
import gc
import json
import os
import signal
import sys

os.environ.setdefault("MPLBACKEND", "Agg")

from ipykernel.kernelapp import IPKernelApp    # noqa: E402
import numpy            # noqa: E402,F401
import pandas           # noqa: E402,F401
import matplotlib       # noqa: E402
matplotlib.use("Agg")
import matplotlib.pyplot    # noqa: E402,F401

PR_SET_PDEATHSIG = 1


def child(folder, i, server):
    """One kernel: ends with the server, serves until shut down."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != server:      # the server ended before prctl
        os._exit(1)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    app = IPKernelApp.instance()
    app.initialize(["-f", os.path.join(folder, "kernel-%d.json" % i)])
    app.start()
    os._exit(0)


def main():
    folder, n = sys.argv[1], int(sys.argv[2])
    children = []

    def end(signum, frame):
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(0)
    signal.signal(signal.SIGTERM, end)
    gc.collect()
    gc.freeze()
    server = os.getpid()
    for i in range(n):
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                child(folder, i, server)
            finally:
                os._exit(1)
        children.append(pid)
    tmp = os.path.join(folder, "server.json.tmp")
    with open(tmp, "w") as f:
        json.dump({"server": server, "children": children}, f)
    os.rename(tmp, os.path.join(folder, "server.json"))
    while children:
        try:
            pid, _ = os.wait()
        except ChildProcessError:
            break
        if pid in children:
            children.remove(pid)


if __name__ == "__main__":
    main()
