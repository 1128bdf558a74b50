"""make bench: codebox against its peers, measured in the same run.

1. REST: POST /execute + GET /execute/{id}/results?wait= of `1+1`, p50 and
   p90 over N runs on one keep-alive connection, against jupyter_client
   executing `1+1` directly on its own ipykernel (the floor: the kernel).
2. MCP over stdio: tools/call exec_code `1+1`, same N.
3. Session start: POST /sessions with a warm pool, and with the pool off
   (a cold ipykernel), against jupyter_client's start_new_kernel.
4. Gateway idle CPU over 5 s with one live session.

Run with Debian's /usr/bin/python3 (it has jupyter_client). Prints ratios.
"""
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("CODEBOX_BIN") or os.path.join(os.path.dirname(__file__), "..", "..", "build", "codebox")
N = int(os.environ.get("BENCH_N", "200"))


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def start_server(env_extra):
    state = tempfile.mkdtemp(prefix="codebox-bench-")
    env = dict(os.environ, **env_extra)
    p = subprocess.Popen([BIN, "serve", "--port", "0", "--state-dir", state], env=env,
                         stderr=subprocess.PIPE, text=True)
    while True:
        line = p.stderr.readline()
        m = re.search(r"serving http://127\.0\.0\.1:(\d+)", line)
        if m:
            return p, int(m.group(1))
        if not line:
            raise RuntimeError("codebox serve did not start")


def call(conn, method, path, body=None):
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    return r.status, json.loads(data) if data else None


def bench_rest():
    p, port = start_server({})
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        time.sleep(3)  # let the warm pool fill
        status, _ = call(conn, "POST", "/sessions", {"session_id": "bench"})
        assert status == 201, status
        for _ in range(10):  # warm up
            _, r = call(conn, "POST", "/execute", {"session_id": "bench", "code": "1+1"})
            call(conn, "GET", f"/execute/{r['request_id']}/results?wait=30")
        times = []
        for _ in range(N):
            t = time.perf_counter()
            _, r = call(conn, "POST", "/execute", {"session_id": "bench", "code": "1+1"})
            status, res = call(conn, "GET", f"/execute/{r['request_id']}/results?wait=30")
            times.append(time.perf_counter() - t)
            assert status == 200 and res["output"][0]["content"] == "2", res
        # idle CPU of the gateway with one live session
        def cpu():
            f = open(f"/proc/{p.pid}/stat").read().split(")")[1].split()
            return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        c0 = cpu()
        time.sleep(5)
        idle = (cpu() - c0) / 5 * 100
        return times, idle
    finally:
        p.terminate()
        p.wait(timeout=30)


def bench_session_start(pool_size):
    p, port = start_server({"CODEBOX_POOL_SIZE": str(pool_size)})
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        times = []
        for i in range(5):
            time.sleep(3 if pool_size else 0.2)  # refill
            t = time.perf_counter()
            status, _ = call(conn, "POST", "/sessions", {"session_id": f"s{i}"})
            times.append(time.perf_counter() - t)
            assert status == 201
            call(conn, "DELETE", f"/sessions/s{i}")
        return times
    finally:
        p.terminate()
        p.wait(timeout=30)


def bench_jupyter_client():
    from jupyter_client.manager import start_new_kernel
    t = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="python3")
    start = time.perf_counter() - t
    try:
        for _ in range(10):
            kc.execute_interactive("1+1", output_hook=lambda m: None)
        times = []
        for _ in range(N):
            t = time.perf_counter()
            kc.execute_interactive("1+1", output_hook=lambda m: None)
            times.append(time.perf_counter() - t)
        return times, start
    finally:
        km.shutdown_kernel(now=True)


def bench_mcp_stdio():
    state = tempfile.mkdtemp(prefix="codebox-bench-")
    p = subprocess.Popen([BIN, "mcp", "--state-dir", state], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    def rpc(i, method, params):
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
        p.stdin.flush()
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == i:
                return m
    try:
        rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}})
        args = {"name": "exec_code", "arguments": {"session_id": "b", "code": "1+1"}}
        for i in range(10):
            rpc(1 + i, "tools/call", args)
        times = []
        for i in range(N):
            t = time.perf_counter()
            m = rpc(100 + i, "tools/call", args)
            times.append(time.perf_counter() - t)
            assert m["result"]["structuredContent"]["result"] == "2", m
        return times
    finally:
        p.stdin.close()
        p.wait(timeout=30)


def main():
    jc, jc_start = bench_jupyter_client()
    rest, idle = bench_rest()
    mcp = bench_mcp_stdio()
    warm = bench_session_start(2)
    cold = bench_session_start(0)
    ms = lambda s: f"{s * 1000:.2f} ms"
    print(f"execute 1+1, N={N}            p50          p90")
    print(f"  jupyter_client direct    {ms(pct(jc, 50)):>10}   {ms(pct(jc, 90)):>10}")
    print(f"  codebox REST ?wait=      {ms(pct(rest, 50)):>10}   {ms(pct(rest, 90)):>10}"
          f"   ratio p50 {pct(rest, 50) / pct(jc, 50):.2f}x")
    print(f"  codebox MCP stdio        {ms(pct(mcp, 50)):>10}   {ms(pct(mcp, 90)):>10}"
          f"   ratio p50 {pct(mcp, 50) / pct(jc, 50):.2f}x")
    print("session start (median of 5)")
    print(f"  jupyter_client start_new_kernel  {ms(jc_start)}")
    print(f"  codebox POST /sessions, warm     {ms(statistics.median(warm))}"
          f"   ratio {statistics.median(warm) / jc_start:.3f}x")
    print(f"  codebox POST /sessions, cold     {ms(statistics.median(cold))}"
          f"   ratio {statistics.median(cold) / jc_start:.2f}x")
    print(f"gateway idle CPU with one session: {idle:.2f}%")


if __name__ == "__main__":
    sys.exit(main())
