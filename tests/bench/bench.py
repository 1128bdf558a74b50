"""make bench: codebox against its peers, measured in one run on one machine.

Rows (exec round trip of `1+1`, p50 and p99 over N):
  - jupyter_client executing directly on its own ipykernel, as users run
    it (store_history=True), N/2 calls before the C client's rounds and
    N/2 after;
  - from one C process (build/bench-paths, tests/bench/paths.c), one call
    of each per round in an order shuffled each round, so that no client's
    own cost and no order counts against a path: the C floor (the
    project's own protocol library straight to a kernel started exactly as
    the gateway starts it), codebox MCP over HTTP (JSON answers), REST with
    ?wait=, MCP over stdio, the three with CODEBOX_SANDBOX=none (no relay
    hop), and an HTTP and a stdio round trip with no kernel (GET /healthz,
    MCP ping): the transports' own share of the overhead;
  - the floor with its kernel started as Jupyter starts it (build/bench-floor).
Then: a new session's first answer (warm pool after 3 s idle, paired with
an existing session's and jupyter_client's answer after the same idle, and
with the machine awake; cold start), 16 sessions x
25 concurrent calls (throughput, p99, every answer checked, the gateway's
CPU per call), 64 idle sessions (once what their creation started has
settled, the gateway's CPU time and context switches over BENCH_IDLE_S
seconds, default 60), gateway RSS
idle / with 16 sessions / halfway through and after 10 000 executions, and a 5 MB stdout and a
2 MB PNG through MCP. Prints one table; `--markdown FILE` also writes it.

Run with Debian's /usr/bin/python3 (it has jupyter_client).
"""
import atexit
import concurrent.futures
import http.client
import json
import os
import platform
import subprocess
import sys
import threading
import time

import serve

BIN = os.environ.get("CODEBOX_BIN") or os.path.join(os.path.dirname(__file__), "..", "..", "build", "codebox")
FLOOR = os.environ.get("CODEBOX_FLOOR")
PATHS = os.environ.get("CODEBOX_PATHS") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                        "build", "bench-paths")
N = int(os.environ.get("BENCH_N", "300"))
LONG = int(os.environ.get("BENCH_LONG", "10000"))
rows = []


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def row(name, values=None, note=""):
    if values:
        rows.append((name, "%.2f ms" % (pct(values, 50) * 1e3), "%.2f ms" % (pct(values, 99) * 1e3), note))
    else:
        rows.append((name, "", "", note))


class Server:
    def __init__(self, env=None):
        self.p, self.port, self.state = serve.start(BIN, env)
        atexit.register(self.p.terminate)    # a run that fails leaves no gateway behind
        self.local = threading.local()

    def conn(self):
        if not hasattr(self.local, "c"):
            self.local.c = http.client.HTTPConnection("127.0.0.1", self.port)
        return self.local.c

    def call(self, method, path, body=None, headers=None):
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        c = self.conn()
        data = json.dumps(body) if body is not None else None
        try:
            c.request(method, path, body=data, headers=h)
        except (BrokenPipeError, ConnectionResetError):
            # the gateway ended this keep-alive connection while it was idle
            # (the latency rows run in another process): the request was
            # not sent, send it on a new one
            c.close()
            c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        data = r.read()
        return r.status, dict(r.getheaders()), (json.loads(data) if data else None)

    def execute(self, session, code):
        _, _, r = self.call("POST", "/execute", {"session_id": session, "code": code})
        status, _, res = self.call("GET", "/execute/%s/results?wait=60" % r["request_id"])
        assert status == 200, res
        return res

    def cpu_s(self):
        """The gateway process's own CPU time so far (user + system), in seconds."""
        with open("/proc/%d/stat" % self.p.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def run_ns(self):
        """The gateway's run time so far, every thread, in ns (schedstat: exact, not ticks)."""
        total = 0
        for tid in os.listdir("/proc/%d/task" % self.p.pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (self.p.pid, tid)) as f:
                    total += int(f.read().split()[0])
            except FileNotFoundError:
                pass    # a thread that ended
        return total

    def switches(self):
        """Context switches of every thread of the gateway so far."""
        total = 0
        for tid in os.listdir("/proc/%d/task" % self.p.pid):
            try:
                with open("/proc/%d/task/%s/status" % (self.p.pid, tid)) as f:
                    total += sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
            except FileNotFoundError:
                pass
        return total

    def rss_kib(self):
        for line in open("/proc/%d/status" % self.p.pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=60)


class LeanHttp:
    """A minimal HTTP/1.1 keep-alive client over one socket (TCP_NODELAY,
    Content-Length answers only, as the gateway gives for JSON), for the
    rows after the latency rows (those come from build/bench-paths). Same
    call() and execute() as Server."""

    def __init__(self, server):
        import socket
        self.sock = socket.create_connection(("127.0.0.1", server.port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def call(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else b""
        head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" % (
            method, path)
        for k, v in (headers or {}).items():
            head += "%s: %s\r\n" % (k, v)
        self.sock.sendall(head.encode() + b"Content-Length: %d\r\n\r\n" % len(data) + data)
        while b"\r\n\r\n" not in self.buf:
            self.buf += self._recv()
        top, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = top.decode().split("\r\n")
        hdrs = dict(line.split(": ", 1) for line in lines[1:])
        length = int(next(v for k, v in hdrs.items() if k.lower() == "content-length"))
        while len(self.buf) < length:
            self.buf += self._recv()
        payload, self.buf = self.buf[:length], self.buf[length:]
        return int(lines[0].split()[1]), hdrs, (json.loads(payload) if payload else None)

    def _recv(self):
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        return data

    execute = Server.execute


class McpHttp:
    def __init__(self, server):
        self.s = server
        self.n = 0
        status, headers, r = server.call("POST", "/mcp", {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}}},
            {"Accept": "application/json"})
        self.sid = headers["Mcp-Session-Id"]

    def tool(self, name, args):
        self.n += 1
        status, _, r = self.s.call("POST", "/mcp", {"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                                                    "params": {"name": name, "arguments": args}},
                                   {"Accept": "application/json", "Mcp-Session-Id": self.sid})
        assert status == 200, r
        return r["result"]


def timed(fn, n):
    for _ in range(10):
        fn()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


class JupyterClient:
    """The peer: jupyter_client with its own ipykernel, no gateway."""

    def __init__(self):
        from jupyter_client.manager import start_new_kernel
        t = time.perf_counter()
        self.km, self.kc = start_new_kernel(kernel_name="python3")
        self.start_s = time.perf_counter() - t

    def exec(self):
        self.kc.execute_interactive("1+1", output_hook=lambda m: None)

    def stop(self):
        self.km.shutdown_kernel(now=True)


def floor_samples(n, stock=False):
    """n round trips of the C floor (its own kernel each run), in seconds;
    stock: its kernel started as Jupyter starts it, without codebox's
    arguments."""
    out = subprocess.run([FLOOR, str(n)] + (["python3", "stock"] if stock else []),
                         capture_output=True, text=True, timeout=300)
    return [ms / 1e3 for ms in json.loads(out.stdout)["samples_ms"]]


def main():
    machine = "%s, %d cores, %s" % (platform.platform(), os.cpu_count(), platform.processor() or "?")
    jc = JupyterClient()
    s = Server({"CODEBOX_MAX_SESSIONS": "128"})    # 64 idle ones below, and more
    time.sleep(3)                                   # the warm pool fills
    s.call("POST", "/sessions", {"session_id": "bench"})
    lean = LeanHttp(s)
    mcp = McpHttp(lean)
    mcp.tool("exec_code", {"session_id": "mcp", "code": "1+1"})
    # the same gateway with its kernels outside bubblewrap: no relay hop
    bare = Server({"CODEBOX_SANDBOX": "none", "CODEBOX_POOL_SIZE": "0"})
    # jupyter_client (Python, as its users run it) before and after the C
    # client's rounds; the floor and every codebox path from one C process,
    # one call of each per round in a shuffled order (tests/bench/paths.c)
    jc_samples = timed(jc.exec, N // 2)
    specs = ["floor:floor", "mcp:mcp:%d:mcp" % s.port, "rest:rest:%d:bench" % s.port,
             "stdio:stdio:auto", "mcp:mcp_none:%d:mcp" % bare.port,
             "rest:rest_none:%d:bench" % bare.port, "stdio:stdio_none:none",
             "healthz:healthz:%d" % s.port, "ping:ping:none"]
    out = subprocess.run([PATHS, str(N)] + specs, capture_output=True, text=True, timeout=900,
                         env=dict(os.environ, CODEBOX_BIN=os.path.abspath(BIN)))
    if out.returncode != 0:
        raise RuntimeError("bench-paths: " + out.stderr.strip())
    c = {k: [ms / 1e3 for ms in v] for k, v in json.loads(out.stdout).items()}
    jc_samples += timed(jc.exec, N - N // 2)
    bare.stop()
    mcp.s = s       # http.client from here on: it reconnects after idle stretches

    base = pct(jc_samples, 50)
    floor = pct(c["floor"], 50)
    row("jupyter_client direct (peer)", jc_samples)
    row("C floor: codebox protocol library direct", c["floor"])
    if FLOOR:
        row("C floor, its kernel as Jupyter starts it", floor_samples(N, stock=True),
            "without codebox's kernel arguments (gw_ipykernel), run alone")
    for key, name, transport in (
            ("mcp", "codebox MCP over HTTP", "healthz"),
            ("rest", "codebox REST ?wait= (two requests)", "healthz"),
            ("stdio", "codebox MCP over stdio", "ping"),
            ("mcp_none", "codebox MCP over HTTP, CODEBOX_SANDBOX=none", "healthz"),
            ("rest_none", "codebox REST ?wait=, CODEBOX_SANDBOX=none", "healthz"),
            ("stdio_none", "codebox MCP over stdio, CODEBOX_SANDBOX=none", "ping")):
        p50 = pct(c[key], 50)
        # sample i of every path is from round i: the median of the
        # rounds' differences leaves out what moved the whole round
        paired = pct([a - b for a, b in zip(c[key], c["floor"])], 50)
        # the floor has no transport: the same run's round trip over this
        # one with no kernel (GET /healthz, MCP ping) is the part of the
        # overhead that no gateway of this shape can take out
        row(name, c[key], "%.2fx jupyter_client, %+.0f us over the C floor (paired: %+.0f; "
            "of it the %s round trip alone: %.0f)"
            % (p50 / base, (p50 - floor) * 1e6, paired * 1e6, transport,
               pct(c[transport], 50) * 1e6))
    row("HTTP round trip: GET /healthz", c["healthz"],
        "no kernel: the transport's and the gateway's loop's own cost")
    row("stdio round trip: MCP ping", c["ping"], "no kernel")
    for name, p50, p99, note in rows:     # what the rest of the run cannot lose
        print("%-50s %10s %10s  %s" % (name, p50, p99, note), flush=True)
    jc_start = jc.start_s

    # a new session's first answer: warm pool, then cold
    def first_answer(server, name):
        t = time.perf_counter()
        server.call("POST", "/sessions", {"session_id": name})
        server.execute(name, "1+1")
        return time.perf_counter() - t
    # After seconds of idle this machine adds tens of ms to any execution
    # (its CPUs and the kernel's threads wake; jupyter_client to its own
    # kernel pays it too): each warm-pool sample is paired with an
    # execution on an existing session and one of jupyter_client after the
    # same idle, so the pool's own cost is the difference.
    warm, idle_codebox, idle_jc = [], [], []

    def once(fn):
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    for i in range(5):
        time.sleep(3)
        warm.append(first_answer(s, "warm%d" % i))
        s.call("DELETE", "/sessions/warm%d" % i)
        time.sleep(3)
        idle_codebox.append(once(lambda: s.execute("bench", "1+1")))
        time.sleep(3)
        idle_jc.append(once(jc.exec))
    # and the same with the machine awake: 20 calls on an existing session
    # just before each sample (the pool refilled during the 3 s before)
    warm_awake = []
    for i in range(10):
        time.sleep(3)
        for _ in range(20):
            s.execute("bench", "1+1")
        warm_awake.append(first_answer(s, "awake%d" % i))
        s.call("DELETE", "/sessions/awake%d" % i)
    jc.stop()
    cold_server = Server({"CODEBOX_POOL_SIZE": "0"})
    cold = [first_answer(cold_server, "cold%d" % i) for i in range(3)]
    cold_server.stop()
    row("new session, first answer, warm pool", warm, "p50 of 5, each after 3 s idle")
    row("new session, first answer, warm pool, machine awake", warm_awake,
        "p50 of 10, each right after 20 calls on another session")
    row("existing session, 1+1 after 3 s idle", idle_codebox, "p50 of 5: the idle's own cost")
    row("jupyter_client, 1+1 after 3 s idle", idle_jc, "p50 of 5: the idle's own cost")
    row("new session, first answer, cold start", cold,
        "jupyter_client start_new_kernel %.0f ms" % (jc_start * 1e3))

    # 16 sessions x 25 concurrent calls
    rss_idle = s.rss_kib()
    for i in range(16):
        s.call("POST", "/sessions", {"session_id": "c%d" % i})
    rss_16 = s.rss_kib()

    def worker(i):
        out = []
        for k in range(25):
            t = time.perf_counter()
            r = s.execute("c%d" % i, "print(%d * 1000 + %d)" % (i, k))
            out.append(time.perf_counter() - t)
            got = r["output"][0]["content"]
            assert got == "%d\n" % (i * 1000 + k), (i, k, got)   # nothing lost or crossed
        return out
    t = time.perf_counter()
    cpu = s.cpu_s()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        lat = [x for part in pool.map(worker, range(16)) for x in part]
    wall = time.perf_counter() - t
    cpu = s.cpu_s() - cpu
    row("16 sessions x 25 concurrent calls", lat,
        "%.0f calls/s, all 400 answers right, gateway CPU %.0f us per call"
        % (400 / wall, cpu / 400 * 1e6))

    # idle sessions cost nothing: the gateway's CPU over a quiet stretch
    for i in range(16, 64):
        s.call("POST", "/sessions", {"session_id": "c%d" % i})
    # what the calls started settles first (the warm pool's refill, each
    # kernel's last heartbeat after its last request): until 3 s pass in
    # which no thread of the gateway runs, at most 60 s
    t = time.perf_counter()
    cpu = s.run_ns()
    while time.perf_counter() - t < 60:
        before = s.switches()
        time.sleep(3)
        if s.switches() == before:
            break
    settle, settle_cpu = time.perf_counter() - t, (s.run_ns() - cpu) / 1e9
    idle = float(os.environ.get("BENCH_IDLE_S", "60"))
    # this client's keep-alive connections closed first: the gateway ends
    # an idle connection after a while, which is not the sessions' cost
    lean.sock.close()
    if hasattr(s.local, "c"):
        s.local.c.close()
    s.local = threading.local()
    time.sleep(1)
    cpu, wakes = s.run_ns(), s.switches()
    time.sleep(idle)
    cpu, wakes = (s.run_ns() - cpu) / 1e9, s.switches() - wakes
    rows.append(("64 idle sessions", "", "",
                 "gateway CPU %.1f ms over %.0f s (%.3f%%), %d context switches; before that "
                 "%.0f s to settle (pool refill, last heartbeats), %.0f ms CPU"
                 % (cpu * 1e3, idle, 100 * cpu / idle, wakes, settle, settle_cpu * 1e3)))

    # RSS after many executions: REST keeps the last GW_JOBS_MAX (2000)
    # results by design, so growth must stop once that store is full:
    # compare halfway with the end
    for _ in range(LONG // 2):
        s.execute("bench", "1+1")
    rss_half = s.rss_kib()
    for _ in range(LONG - LONG // 2):
        s.execute("bench", "1+1")
    rss_long = s.rss_kib()
    rows.append(("gateway RSS", "", "", "idle %d KiB, with 16 sessions %d KiB, after %d more "
                 "executions %d KiB, after %d %d KiB (%+d KiB over the second half)"
                 % (rss_idle, rss_16, LONG // 2, rss_half, LONG, rss_long,
                    rss_long - rss_half)))

    # big payloads through MCP
    t = time.perf_counter()
    r = mcp.tool("exec_code", {"session_id": "big", "code": "print('x' * (5 << 20))"})
    big_text = time.perf_counter() - t
    t = time.perf_counter()
    r2 = mcp.tool("exec_code", {"session_id": "big", "code":
                                "import numpy as np, matplotlib.pyplot as plt\n"
                                "plt.figure(figsize=(12, 12), dpi=100)\n"
                                "plt.imshow(np.random.rand(700, 700)); plt.show()"})
    big_png = time.perf_counter() - t
    kinds = [c["type"] for c in r2["content"]]
    rows.append(("5 MB stdout through MCP", "%.0f ms" % (big_text * 1e3), "",
                 "cut to CODEBOX_MAX_OUTPUT_BYTES: %d chars" % len(r["structuredContent"]["stdout"])))
    rows.append(("~2 MB PNG through MCP", "%.0f ms" % (big_png * 1e3), "",
                 "content: " + ", ".join(kinds)))
    s.stop()

    width = max(len(r[0]) for r in rows)
    lines = ["machine: " + machine, "",
             "| %-*s | %10s | %10s | %s" % (width, "path", "p50", "p99", "notes"),
             "|-%s-|-%s-|-%s-|-----" % ("-" * width, "-" * 10, "-" * 10)]
    for name, p50, p99, note in rows:
        lines.append("| %-*s | %10s | %10s | %s" % (width, name, p50, p99, note))
    print("\n".join(lines))
    if "--markdown" in sys.argv:
        with open(sys.argv[sys.argv.index("--markdown") + 1], "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
