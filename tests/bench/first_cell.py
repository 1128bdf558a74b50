"""make bench, issue 43: a new session's first real cell, what a kernel
costs in memory, the gateway's fork server's sharing (and its prototype's),
and the gateway's CPU per call; every ratio against a peer measured in the
same run.

Rows:
  1. The first cell agents run (numpy, pandas, a matplotlib plot shown as
     an image) through MCP over Streamable HTTP (POST /mcp, exec_code):
     timed from the tools/call whose new session_id makes the session to
     its answer, p50 over BENCH_SAMPLES (5) new sessions, and the same
     cell in a session that has run it (warm). Each round, at least
     BENCH_SETTLE_S (8) s pass and every kernel of both gateways is quiet
     (the warm pool refilled and done with its preload), a `1+1` wakes the
     machine (idle CPUs add tens of ms to any first call), then the warm
     sample, then the new session's. Two gateways in the same run,
     sampled in turn: CODEBOX_POOL_PRELOAD as the user has it (default)
     and CODEBOX_POOL_PRELOAD="" (no preload); the fork server as the
     user has it (default on: pool kernels are forked).
  2. Memory (RSS and PSS from /proc/PID/smaps_rollup) of an idle pool
     kernel, of the whole pool, and of BENCH_SESSIONS (10) live sessions
     that ran `import pandas`, with CODEBOX_FORK_SERVER=off (each kernel
     started, as before the fork server): a session's kernel is its
     python process, the two bubblewrap processes above it and its
     kernel-relay. Against
     the same number of stock ipykernels (jupyter_client KernelManager,
     kernelspec python3) that ran `import pandas`. Each set is measured
     alone (PSS shares a page among every process that maps it).
  3. The warm pool of a gateway with CODEBOX_FORK_SERVER=on (its kernels
     forked, and the fork server), then the sessions of (2) through it
     (the default; sandbox on, preload as the user has it): BENCH_FORK_SESSIONS (10,35: 35 fill about 1 GiB)
     live sessions that ran `import pandas`, made one after another, a row
     at each count. A session's processes: bubblewrap, the seat
     (`codebox-sidecar kernel-seat`), its kernel-relay, and every process in its
     sandbox's pid namespace, the forked kernel among them (a child of a
     fork server, not of bubblewrap; tests/bench/procs.py);
     the fork server's PSS is spread over the
     sessions. Fails unless every kernel was forked.
  4. tests/bench/fork_kernels.py: one server that imports ipykernel,
     numpy, pandas and matplotlib, calls gc.freeze() and forks the kernels;
     every kernel answers `import pandas; 1+1` through jupyter_client.
     PSS of the server and its kernels, against (2)'s stock ipykernel;
     the mechanism without a sandbox or a gateway.
  5. The gateway's own CPU (utime + stime of its process, /proc/PID/stat)
     over BENCH_CALLS (10 000) MCP calls of `1+1` on one session, sandbox
     on (CODEBOX_SANDBOX as the user has it), one keep-alive connection;
     with BENCH_CPU_BEFORE=PATH (another codebox binary, say the last
     release's), that gateway too, the two called in turn, and the ratio.
     Then a flood: one cell shows 30 000 displays of 2 KB as fast as
     ipykernel sends them (POST /execute, its results): how many came
     through. ipykernel's iopub PUB drops what its queue (1 000 messages)
     cannot hold while its reader lags, so this is the gateway keeping up
     (iopub rests between small reads, ks_kernel.h; a flood is read as it
     comes).

BENCH_ONLY=SECTION[,SECTION] runs only those: first-cell (1), memory (2),
fork-server (3), fork-prototype (4), cpu (5); the stock ipykernels of (2)
are measured whenever a memory row is. Prints one table; `--markdown FILE`
also writes it. Run with Debian's /usr/bin/python3 (it has jupyter_client
and ipykernel), as root (the gateway sandboxes its kernels as root, and
another user's /proc/PID/smaps is not readable).
"""
import atexit
import http.client
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time

import serve
from procs import (descendants, fork_groups, is_forked_kernel, is_kernel, memory_kb,
                   processes)

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("CODEBOX_BIN") or os.path.join(HERE, "..", "..", "build", "codebox")
SAMPLES = int(os.environ.get("BENCH_SAMPLES", "5"))
SETTLE_S = float(os.environ.get("BENCH_SETTLE_S", "8"))
SESSIONS = int(os.environ.get("BENCH_SESSIONS", "10"))
CALLS = int(os.environ.get("BENCH_CALLS", "10000"))
POOL = int(os.environ.get("CODEBOX_POOL_SIZE", "2"))
CELL = ("import numpy as np; import pandas as pd; import matplotlib; matplotlib.use('Agg'); "
        "import matplotlib.pyplot as plt; df = pd.DataFrame(np.arange(30).reshape(10, 3)); "
        "df.plot(); plt.show()")
# which kernel a session has: its connection file, named on its command line
WHOAMI = ("import pandas, os, sys; "
          "print(os.path.basename(sys.argv[sys.argv.index('-f') + 1]))")
# ... and whether the fork server forked it (its argv is the server's)
FORK_WHOAMI = (WHOAMI + "; print(b'codebox-fork-server' in "
               "open('/proc/self/cmdline', 'rb').read())")
FORK_SESSIONS = sorted(int(n) for n in os.environ.get(
    "BENCH_FORK_SESSIONS", "%d,35" % SESSIONS).split(","))   # 35: about a GiB
SECTIONS = ("first-cell", "memory", "fork-server", "fork-prototype", "cpu")
ONLY = [x for x in os.environ.get("BENCH_ONLY", ",".join(SECTIONS)).split(",") if x]
GIB_KB = 1 << 20
rows = []


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def on_signal(signum, frame):
    sys.exit(128 + signum)      # atexit runs: no gateway or kernel left behind


# --------------------------------------------------------------------------
# a codebox gateway and its MCP client


def mib(kb):
    return "%.1f MiB" % (kb / 1024)


class Server:
    """codebox serve on a free port, with its own state folder."""

    def __init__(self, env=None, binary=None):
        self.p, self.port, self.state = serve.start(binary or BIN, env, "codebox-first-cell-")
        atexit.register(self.stop)
        self.c = http.client.HTTPConnection("127.0.0.1", self.port)
        self.live = 0       # sessions this client made and did not end
        self.ids = 0
        status, headers, _ = self.call("POST", "/mcp", {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench-first-cell", "version": "1"}}})
        assert status == 200, status
        self.mcp_sid = headers["Mcp-Session-Id"]
        self.call("POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                  {"Mcp-Session-Id": self.mcp_sid})

    def call(self, method, path, body=None, headers=None):
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        h.update(headers or {})
        data = json.dumps(body) if body is not None else None
        try:
            self.c.request(method, path, body=data, headers=h)
        except (BrokenPipeError, ConnectionResetError):
            self.c.close()      # the gateway ended this keep-alive connection while idle
            self.c.request(method, path, body=data, headers=h)
        r = self.c.getresponse()
        data = r.read()
        return r.status, dict(r.getheaders()), (json.loads(data) if data else None)

    def tool(self, name, args):
        """One MCP tools/call; its CallToolResult."""
        self.ids += 1
        status, _, r = self.call("POST", "/mcp", {"jsonrpc": "2.0", "id": self.ids,
                                                  "method": "tools/call",
                                                  "params": {"name": name, "arguments": args}},
                                 {"Mcp-Session-Id": self.mcp_sid})
        assert status == 200 and "result" in r, (status, r)
        return r["result"]

    def run(self, session, code):
        r = self.tool("exec_code", {"session_id": session, "code": code})
        assert not r.get("isError") and r["structuredContent"]["status"] == "completed", r
        return r

    def end(self, session):
        self.call("DELETE", "/sessions/" + session)
        self.live -= 1

    def kernels(self, procs):
        """Its kernels' pids, exec'd or forked by its fork server."""
        return [pid for pid in descendants(procs, self.p.pid)
                if is_kernel(procs[pid][1]) or is_forked_kernel(pid, procs[pid][1])]

    def kernel_groups(self, procs):
        """connection file name -> the pids of that kernel: its python
        process and what it started, the processes between it and the
        gateway (bubblewrap), and its kernel-relay."""
        groups = {}
        below = descendants(procs, self.p.pid)
        for pid in [k for k in below if is_kernel(procs[k][1])]:
            argv = procs[pid][1]
            conn = os.path.basename(argv[argv.index("-f") + 1])
            group = [pid] + descendants(procs, pid)
            up = procs[pid][0]
            while up != self.p.pid and up in procs:
                group.append(up)
                up = procs[up][0]
            group += [r for r in below if "kernel-relay" in procs[r][1]
                      and any(conn in a for a in procs[r][1])]
            groups[conn] = group
        return groups

    def cpu_ticks(self):
        with open("/proc/%d/stat" % self.p.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.p.kill()


def settle(servers, min_s, max_s=60):
    """Waits at least min_s, until every gateway has its live sessions and
    its full pool of kernels and none of their descendants used CPU over
    the last second (the pool refilled, its preload done). False when
    max_s passed first."""
    t = time.perf_counter()
    time.sleep(max(min_s - 1, 0))
    last = None
    while time.perf_counter() - t < max_s:
        procs = processes()
        below = [pid for s in servers for pid in descendants(procs, s.p.pid)]
        ticks = sum(procs[pid][2] for pid in below)
        full = all(len(s.kernels(procs)) >= s.live + POOL for s in servers)
        if full and last is not None and ticks == last and time.perf_counter() - t >= min_s:
            return True
        last = ticks if full else None
        time.sleep(1)
    return False


# --------------------------------------------------------------------------
# 1. the first cell


def has_image(result):
    return any(c["type"] == "image" and c.get("mimeType") == "image/png"
               for c in result["content"])


def first_cell(servers):
    """{name: (new samples, warm samples)} for each (name, Server). Each
    round, once everything is quiet: `1+1` wakes the machine, then the
    cell in the session that has run it (warm), then in a new session."""
    out = {name: ([], []) for name, _ in servers}
    late = 0
    for name, s in servers:
        s.run("warm", CELL)
        s.live += 1
    for i in range(SAMPLES):
        for name, s in servers:
            late += not settle([x for _, x in servers], SETTLE_S)
            s.run("warm", "1+1")
            t = time.perf_counter()
            warm = s.run("warm", CELL)
            out[name][1].append(time.perf_counter() - t)
            t = time.perf_counter()
            new = s.run("first%d" % i, CELL)
            out[name][0].append(time.perf_counter() - t)
            s.live += 1
            assert has_image(new) and has_image(warm), (new["content"], warm["content"])
    return out, late


def first_cell_rows(servers):
    samples, late = first_cell(servers)
    p50 = {}
    for name, _ in servers:
        new, warm = samples[name]
        p50[name] = pct(new, 50)
        rows.append(("first cell, new session: %s" % name, "%.0f ms" % (pct(new, 50) * 1e3),
                     "%.2fx warm" % (pct(new, 50) / pct(warm, 50)),
                     "p50 of %d new session_ids, timed from the exec_code call that makes the "
                     "session to its answer (with its image); min %.0f, max %.0f ms"
                     % (len(new), min(new) * 1e3, max(new) * 1e3)))
        rows.append(("first cell again, same session (warm): %s" % name,
                     "%.0f ms" % (pct(warm, 50) * 1e3), "",
                     "p50 of %d, in a session that ran it, each just before a new session's; "
                     "min %.0f, max %.0f ms" % (len(warm), min(warm) * 1e3, max(warm) * 1e3)))
    (a, _), (b, _) = servers[0], servers[-1]
    rows.append(("first cell, new session: %s / %s" % (a, b), "",
                 "%.2fx" % (p50[a] / p50[b]),
                 "before each new session: >= %.0f s, every kernel of both gateways quiet for "
                 "1 s (%d waits ran out at 60 s), then `1+1` on the warm session; "
                 "the two gateways sampled in turn" % (SETTLE_S, late)))


# --------------------------------------------------------------------------
# 2. memory


def pool_rows(s, label):
    settle([s], 2)
    procs = processes()
    groups = list(s.kernel_groups(procs).values())
    if not groups:
        rows.append(("idle pool kernel, " + label, "", "", "no pool kernel (CODEBOX_POOL_SIZE=0)"))
        return
    py = [memory_kb([g[0]]) for g in groups]
    whole = [memory_kb(g) for g in groups]
    rows.append(("idle pool kernel, " + label, mib(sum(p for _, p in whole) / len(whole)) + " PSS",
                 "", "mean of %d; python alone RSS %s, PSS %s; with its bubblewrap and relay "
                 "RSS %s" % (len(groups), mib(sum(r for r, _ in py) / len(py)),
                             mib(sum(p for _, p in py) / len(py)),
                             mib(sum(r for r, _ in whole) / len(whole)))))
    rows.append(("warm pool (%d kernels), %s" % (len(groups), label),
                 mib(sum(p for _, p in whole)) + " PSS", "",
                 "RSS %s; gateway itself RSS %s, PSS %s"
                 % ((mib(sum(r for r, _ in whole)),) + tuple(mib(x) for x in
                                                              memory_kb([s.p.pid])))))


def session_rows(s, label, stock_pss=None):
    """SESSIONS sessions, each from a refilled pool, each ran `import
    pandas`; returns the mean PSS per session in KiB."""
    conns = []
    for i in range(SESSIONS):
        settle([s], 0)
        r = s.run("mem%d" % i, WHOAMI)
        s.live += 1
        conns.append(re.search(r"kernel-[0-9a-f]+\.json", r["structuredContent"]["stdout"]).group(0))
    settle([s], 2)
    procs = processes()
    groups = s.kernel_groups(procs)
    assert all(c in groups for c in conns), (conns, list(groups))
    whole = [memory_kb(groups[c]) for c in conns]
    py = [memory_kb([groups[c][0]]) for c in conns]
    per = sum(p for _, p in whole) / len(whole)
    rows.append(("%d live sessions, import pandas, %s" % (SESSIONS, label),
                 "%.0f per GiB" % (GIB_KB / per),
                 "%.2fx stock" % (stock_pss / per) if stock_pss else "",
                 "PSS %s per session (python %s, its bubblewrap and relay the rest), "
                 "%s in all; RSS %s per session"
                 % (mib(per), mib(sum(p for _, p in py) / len(py)),
                    mib(sum(p for _, p in whole)), mib(sum(r for r, _ in whole) / len(whole)))))
    for i in range(SESSIONS):
        s.end("mem%d" % i)
    return per


class Stock:
    """SESSIONS stock ipykernels: jupyter_client's KernelManager with the
    python3 kernelspec, each having run `import pandas`."""

    def __init__(self):
        from jupyter_client.manager import KernelManager
        self.kms, self.kcs = [], []
        atexit.register(self.stop)
        for _ in range(SESSIONS):
            km = KernelManager(kernel_name="python3")
            km.start_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.kms.append(km)
        for km in self.kms:
            kc = km.client()
            kc.start_channels()
            kc.wait_for_ready(timeout=60)
            self.kcs.append(kc)
            reply = kc.execute_interactive("import pandas", timeout=60, output_hook=lambda m: None)
            assert reply["content"]["status"] == "ok", reply["content"]
        self.spec = self.kms[0].kernel_spec.resource_dir

    def pids(self, procs):
        out = []
        for km in self.kms:
            pid = km.provisioner.process.pid
            out.append([pid] + descendants(procs, pid))
        return out

    def stop(self):
        for kc in self.kcs:
            kc.stop_channels()
        for km in self.kms:
            if km.has_kernel:
                km.shutdown_kernel(now=True)
        self.kms, self.kcs = [], []


def stock_row():
    stock = Stock()
    time.sleep(2)
    groups = stock.pids(processes())
    mem = [memory_kb(g) for g in groups]
    per = sum(p for _, p in mem) / len(mem)
    rows.append(("%d stock ipykernels, import pandas (peer)" % SESSIONS,
                 "%.0f per GiB" % (GIB_KB / per), "",
                 "PSS %s per kernel, %s in all; RSS %s per kernel; jupyter_client "
                 "KernelManager, kernelspec %s"
                 % (mib(per), mib(sum(p for _, p in mem)), mib(sum(r for r, _ in mem) / len(mem)),
                    stock.spec)))
    stock.stop()
    return per


# --------------------------------------------------------------------------
# 3. the gateway's fork server


def fork_sessions(s, conns, count):
    """Makes sessions until there are count, each from a refilled pool,
    each having run `import pandas`; appends their connection file names
    to conns. Fails when a kernel was not forked (its seat exec'd it)."""
    while len(conns) < count:
        settle([s], 0)
        name = "fork%d" % len(conns)
        out = s.run(name, FORK_WHOAMI)["structuredContent"]["stdout"]
        s.live += 1
        assert out.split()[-1:] == ["True"], (
            "session %s: its kernel was exec'd by its seat, not forked by the fork server "
            "(is CODEBOX_FORK_SERVER=on in this build, and the sandbox on?): %r" % (name, out))
        conns.append(re.search(r"kernel-[0-9a-f]+\.json", out).group(0))


def fork_row(s, conns, stock_pss, label, made):
    """One row: the mean PSS of a session (its own processes, and the fork
    server's spread over the sessions)."""
    procs = processes()
    groups, kernels, server, shared = fork_groups(procs, s.p.pid, conns)
    lost = ["fork%d" % i for i, c in enumerate(conns) if not kernels.get(c)]
    assert server is not None and not lost, (
        "sessions %s: no forked kernel with the connection file they named (ended, or "
        "restarted as another); see %s/gateway.log" % (", ".join(lost), s.state))
    n = len(conns)

    def mean(pids_of, field):      # 0 RSS, 1 PSS, 2 USS
        return sum(memory_kb(pids_of(c), True)[field] for c in conns) / n
    own = mean(lambda c: groups[c], 1)
    kernel = mean(lambda c: [kernels[c]], 1)
    server_kb = memory_kb([server])[1]
    between = memory_kb(shared[1:])[1]
    per = own + (server_kb + between) / n
    # what one more session adds: the pages its processes keep to themselves
    uss = [mean(lambda c: groups[c], 2), mean(lambda c: [kernels[c]], 2)]
    rows.append(("%d live sessions, import pandas, fork server, %s" % (n, label),
                 "%.0f per GiB" % (GIB_KB / per), "%.2fx stock" % (stock_pss / per),
                 "PSS %s per session: forked kernel %s, its bubblewrap, seat and relay %s, and "
                 "%s spread over the %d sessions (the fork server's %s, and %s of %d other "
                 "processes of its outside the sandboxes); %s in all; RSS %s per session "
                 "without the server; a session's own pages (USS) %s (kernel %s, bubblewrap, "
                 "seat and relay %s): with many sessions, at most %.0f per GiB; "
                 "CODEBOX_FORK_SERVER=on, sandbox on, every kernel forked; %s"
                 % (mib(per), mib(kernel), mib(own - kernel), mib((server_kb + between) / n), n,
                    mib(server_kb), mib(between), len(shared) - 1, mib(per * n),
                    mib(mean(lambda c: groups[c], 0)), mib(uss[0]), mib(uss[1]),
                    mib(uss[0] - uss[1]), GIB_KB / uss[0], made)))


def fork_pool_rows(s, label):
    """What the warm pool costs when its kernels are forked: each idle pool
    kernel with its bubblewrap, seat and relay, and the fork server."""
    settle([s], 2)
    procs = processes()
    conns = [os.path.basename(a[a.index("-f") + 1]) for a in
             (procs[pid][1] for pid in descendants(procs, s.p.pid))
             if len(a) > 1 and a[1] == "kernel-seat" and "-f" in a[:-1]]
    groups, kernels, server, _ = fork_groups(procs, s.p.pid, conns)
    if not conns or server is None or not all(kernels.get(c) for c in conns):
        rows.append(("idle pool kernel, fork server, " + label, "", "",
                     "no forked pool kernel (CODEBOX_POOL_SIZE=0, or a seat exec'd its kernel)"))
        return
    whole = [memory_kb(groups[c], True) for c in conns]
    server_rss, server_pss = memory_kb([server])
    n = len(conns)
    rows.append(("idle pool kernel, fork server, " + label,
                 mib(sum(w[1] for w in whole) / n) + " PSS", "",
                 "mean of %d, with its bubblewrap, seat and relay; its own pages (USS) %s; "
                 "RSS %s" % (n, mib(sum(w[2] for w in whole) / n), mib(sum(w[0] for w in whole) / n))))
    rows.append(("warm pool (%d kernels), fork server, %s" % (n, label),
                 mib(sum(w[1] for w in whole) + server_pss) + " PSS", "",
                 "the kernels %s and the fork server %s (RSS %s); gateway itself RSS %s, PSS %s"
                 % ((mib(sum(w[1] for w in whole)), mib(server_pss), mib(server_rss))
                    + tuple(mib(x) for x in memory_kb([s.p.pid])))))


def fork_server_rows(stock_pss, label):
    """The warm pool, then FORK_SESSIONS (10, then 35) live sessions
    through a gateway with CODEBOX_FORK_SERVER=on, a row for each count."""
    s = Server({"CODEBOX_FORK_SERVER": "on"})
    fork_pool_rows(s, label)
    conns = []
    for count in FORK_SESSIONS:
        first, t = len(conns) + 1, time.perf_counter()
        fork_sessions(s, conns, count)
        made = "sessions %d-%d made in %.0f s" % (first, count, time.perf_counter() - t)
        settle([s], 2)
        fork_row(s, conns, stock_pss, label, made)
    for i in range(len(conns)):
        s.end("fork%d" % i)
    s.stop()


# --------------------------------------------------------------------------
# 4. a fork server prototype


def prototype_row(stock_pss):
    from jupyter_client import BlockingKernelClient
    folder = tempfile.mkdtemp(prefix="codebox-fork-kernels-")
    log = open(os.path.join(folder, "log"), "w")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "fork_kernels.py"), folder,
                          str(SESSIONS)], stdout=log, stderr=log)
    children = []

    def stop():
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if p.poll() is None:
            p.kill()
            p.wait()
    atexit.register(stop)
    t = time.perf_counter()
    while not os.path.exists(os.path.join(folder, "server.json")):
        if p.poll() is not None or time.perf_counter() - t > 120:
            raise RuntimeError("fork_kernels.py did not start: see " + log.name)
        time.sleep(0.1)
    with open(os.path.join(folder, "server.json")) as f:
        children = json.load(f)["children"]
    for i in range(SESSIONS):
        conn = os.path.join(folder, "kernel-%d.json" % i)
        kc = BlockingKernelClient(connection_file=conn)
        while True:     # the kernel writes its file once its ports are bound
            try:
                kc.load_connection_file()
                break
            except (OSError, ValueError):
                if time.perf_counter() - t > 120:
                    raise
                time.sleep(0.1)
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        results = []
        reply = kc.execute_interactive("import pandas; 1+1", timeout=60,
                                       output_hook=lambda m: results.append(m))
        kc.stop_channels()
        got = [m["content"]["data"]["text/plain"] for m in results
               if m["msg_type"] == "execute_result"]
        assert reply["content"]["status"] == "ok" and got == ["2"], (i, reply["content"], got)
    time.sleep(2)
    procs = processes()
    pids = [p.pid] + descendants(procs, p.pid)
    assert all(c in pids for c in children), "a forked kernel ended"
    _, pss = memory_kb(pids)
    server_pss = memory_kb([p.pid])[1]
    uss = sum(memory_kb([pid] + descendants(procs, pid), True)[2] for pid in children)
    uss /= len(children)
    per = pss / len(children)
    rows.append(("fork server prototype, %d kernels, import pandas" % len(children),
                 "%.0f per GiB" % (GIB_KB / per), "%.2fx stock" % (stock_pss / per),
                 "PSS %s per kernel (the server's %s shared out among them), %s in all; "
                 "a kernel's own pages (USS) %s: with many kernels, at most %.0f per GiB; "
                 "tests/bench/fork_kernels.py: the mechanism only, not wired into the gateway, "
                 "no sandbox; every kernel answered `import pandas; 1+1`"
                 % (mib(per), mib(server_pss), mib(pss), mib(uss), GIB_KB / uss)))
    stop()


# --------------------------------------------------------------------------
# 5. the gateway's CPU per call


def cpu_row():
    """The gateway's CPU per call; with BENCH_CPU_BEFORE (another codebox
    binary), that one too, the two called in turn in blocks of a tenth of
    the calls, and the ratio."""
    before = os.environ.get("BENCH_CPU_BEFORE")
    gateways = [(BIN, "")] + ([(before, " (BENCH_CPU_BEFORE)")] if before else [])
    runs = []
    for binary, label in gateways:
        s = Server(binary=binary)
        s.run("cpu", "1+1")
        s.live += 1
        conn = re.search(r"kernel-[0-9a-f]+\.json",
                         s.run("cpu", WHOAMI)["structuredContent"]["stdout"]).group(0)
        runs.append({"s": s, "label": label, "conn": conn, "cpu": 0, "relay": 0, "wall": 0.0})
    settle([r["s"] for r in runs], 2)
    procs = processes()
    for r in runs:
        # (found by its argv: a forked kernel is not below the relay's bubblewrap)
        r["relays"] = [pid for pid in descendants(procs, r["s"].p.pid)
                       if "kernel-relay" in procs[pid][1]
                       and any(r["conn"] in a for a in procs[pid][1])]
    blocks = 10 if before else 1
    for _ in range(blocks):
        for r in runs:
            s = r["s"]
            ticks = s.cpu_ticks()
            relay_ticks = sum(processes()[pid][2] for pid in r["relays"])
            t = time.perf_counter()
            for i in range(CALLS // blocks):
                res = s.tool("exec_code", {"session_id": "cpu", "code": "1+1"})
                assert res["structuredContent"]["result"] == "2", res
            r["wall"] += time.perf_counter() - t
            r["cpu"] += s.cpu_ticks() - ticks
            r["relay"] += sum(processes()[pid][2] for pid in r["relays"]) - relay_ticks
    hz = os.sysconf("SC_CLK_TCK")
    sandbox = os.environ.get("CODEBOX_SANDBOX", "auto (default)")
    calls = CALLS // blocks * blocks
    for r in runs:
        per_call = r["cpu"] / hz / calls
        ratio = ("%.2fx before" % (runs[0]["cpu"] / max(runs[1]["cpu"], 1))
                 if before and r is runs[0] else "")
        rows.append(("gateway CPU per MCP call of 1+1" + r["label"], "%.0f us" % (per_call * 1e6),
                     ratio,
                     "utime+stime of the gateway process over %d tools/call on one session, one "
                     "keep-alive connection, CODEBOX_SANDBOX=%s; its kernel-relay %.0f us per "
                     "call; %.2f ms wall per call%s"
                     % (calls, sandbox, r["relay"] / hz / calls * 1e6, r["wall"] / calls * 1e3,
                        "; in blocks of %d, the gateways in turn" % (calls // blocks)
                        if before else "")))
    for r in runs:
        flood_row(r["s"], r["label"], [x["s"] for x in runs])
    for r in runs:
        r["s"].stop()


FLOOD_N = 30000
FLOOD = ("from IPython.display import display\n"
         "for i in range(%d):\n"
         "    display({'text/plain': '%%05d' %% i + 'x' * 2000}, raw=True)\n" % FLOOD_N)


def flood_row(s, label, servers):
    """How many of FLOOD_N displays of 2 KB, shown as fast as ipykernel
    can, the gateway got (over REST: its results keep every one), once
    the pool refilled after the flood's session took a kernel and every
    kernel is quiet (servers: each gateway of the run)."""
    status, _, r = s.call("POST", "/sessions", {"session_id": "flood"})
    assert status == 201, (status, r)
    s.run("flood", "1+1")
    s.live += 1
    settle(servers, 2)
    status, _, r = s.call("POST", "/execute", {"session_id": "flood", "code": FLOOD})
    assert status == 202, (status, r)
    t = time.perf_counter()
    status, _, res = s.call("GET", "/execute/%s/results?wait=300" % r["request_id"])
    wall = time.perf_counter() - t
    assert status == 200 and res["status"] == "completed", (status, res.get("error"))
    shown = [o["data"]["text/plain"][:5] for o in res["output"] if o["type"] == "display"]
    lost = FLOOD_N - len(shown)
    rows.append(("iopub flood: displays through" + label, "%d" % len(shown), "",
                 "of %d displays of 2 KB in one cell (%.0f MB), %d lost by the kernel's PUB "
                 "while the gateway lagged; the cell took %.1f s"
                 % (FLOOD_N, FLOOD_N * 2005 / 1e6, lost, wall)))


# --------------------------------------------------------------------------


def main():
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    machine = "%s, %d cores, %s" % (platform.platform(), os.cpu_count(), platform.processor() or "?")
    if set(ONLY) - set(SECTIONS):
        sys.exit("BENCH_ONLY: %s: the sections are %s"
                 % (",".join(sorted(set(ONLY) - set(SECTIONS))), ",".join(SECTIONS)))
    user = os.environ.get("CODEBOX_POOL_PRELOAD")
    preload = "preload %s" % ("default" if user is None else "=%r" % user)
    if "first-cell" in ONLY:
        # the defaults (the fork server on, as root with the sandbox) against no preload
        a = Server()
        b = Server({"CODEBOX_POOL_PRELOAD": ""})
        first_cell_rows([(preload, a), ("no preload", b)])
        a.stop()
        b.stop()
    # each set of kernels alone from here on: PSS shares a page among
    # every process that maps it; the stock ipykernels are every memory
    # row's peer
    if {"memory", "fork-server", "fork-prototype"} & set(ONLY):
        stock = stock_row()
    if "memory" in ONLY:
        # each kernel started (the fork server off): what a kernel costs alone
        for env, label in (({}, preload), ({"CODEBOX_POOL_PRELOAD": ""}, "no preload")):
            s = Server(dict(env, CODEBOX_FORK_SERVER="off"))
            label += ", fork server off"
            pool_rows(s, label)
            session_rows(s, label, stock)
            s.stop()
    if "fork-server" in ONLY:
        fork_server_rows(stock, preload)
    if "fork-prototype" in ONLY:
        prototype_row(stock)
    if "cpu" in ONLY:
        cpu_row()

    width = max(len(r[0]) for r in rows)
    lines = ["machine: " + machine, "",
             "| %-*s | %14s | %11s | %s" % (width, "what", "value", "ratio", "notes"),
             "|-%s-|-%s-|-%s-|-----" % ("-" * width, "-" * 14, "-" * 11)]
    for name, value, ratio, note in rows:
        lines.append("| %-*s | %14s | %11s | %s" % (width, name, value, ratio, note))
    lines += ["", "ratio: a new session's first cell against the same cell warm (and the two "
              "gateways against each other); for memory, live sessions per GiB (1 GiB / mean PSS "
              "per session) against the stock ipykernels' in this run"]
    print("\n".join(lines))
    if "--markdown" in sys.argv:
        with open(sys.argv[sys.argv.index("--markdown") + 1], "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
