"""Load suite (issue 10, item 4): 32 sessions (24 Python, 8 JavaScript)
running at once against one `codebox serve`, some over REST and some over
MCP, each with executions whose results carry a token unique to the
session: prints, a matplotlib plot, an error, computed values, queued
executions. Every result must be right and matched to its own request (no
output of another session or another request in it). Before and after (the
sessions deleted and the warm pool settled) the gateway's open file
descriptors and RSS are measured: they must come back near the baseline."""
import base64
import json
import os
import re
import threading
import time
import uuid

import pytest

from conftest import asan, descendants, vm_rss_kib

N_PY, N_JS = 24, 8
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FINAL = {"completed", "error"}
TOKEN_RE = re.compile(r"tk\d\d[0-9a-f]{10}")
FD_MARGIN = 10
RSS_MARGIN_KIB = 30 * 1024


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


# --------------------------------------------------------------------------
# two clients with one result shape: {status, stdout, stderr, result,
# error: (ename, evalue) | None, pngs: [bytes], text: everything}

class RestClient:
    def __init__(self, srv, lang):
        self.srv = srv
        r = srv.post("/sessions", {"language": lang}, timeout=180)
        assert r.status == 201, "create %s: %r" % (lang, r)
        self.sid = r.json()["session_id"]

    def submit(self, code):
        r = self.srv.post("/execute", {"session_id": self.sid, "code": code})
        assert r.status == 202, r
        return r.json()["request_id"]

    def collect(self, rid):
        r = self.srv.get("/execute/%s/results?wait=150" % rid, timeout=180)
        assert r.status == 200, r
        res = r.json()
        assert res["request_id"] == rid, (rid, res["request_id"])
        assert res["status"] in FINAL, res

        def streams(name):
            return "".join(o["content"] for o in res["output"]
                           if o["type"] == "stream" and o["name"] == name)
        results = [o["content"] for o in res["output"] if o["type"] == "result"]
        errors = [(o["ename"], o["evalue"]) for o in res["output"] if o["type"] == "error"]
        return {"status": res["status"], "stdout": streams("stdout"),
                "stderr": streams("stderr"), "result": results[-1] if results else None,
                "n_results": len(results), "error": errors[0] if errors else None,
                "n_errors": len(errors),
                "pngs": [base64.b64decode(f) for f in res.get("files", [])],
                "text": json.dumps(res["output"])}

    def run(self, code):
        return self.collect(self.submit(code))

    def run_queued(self, codes):
        """Submits every code before collecting any result."""
        rids = [self.submit(c) for c in codes]
        return [self.collect(rid) for rid in rids]

    def close(self):
        r = self.srv.delete("/sessions/" + self.sid)
        assert r.status == 204, r


class McpClient:
    """One MCP session (its own Mcp-Session-Id) driving one kernel session."""

    def __init__(self, srv, lang, sid):
        self.srv, self.lang, self.sid, self.first = srv, lang, sid, True
        r = srv.request("POST", "/mcp", {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test_load", "version": "1"}}},
            headers={"Accept": "application/json"})
        assert r.status == 200, r
        self.msid = r.headers["Mcp-Session-Id"]
        self.ids = iter(range(2, 10 ** 6))

    def run(self, code):
        args = {"session_id": self.sid, "code": code}
        if self.first:
            args["language"] = self.lang
            self.first = False
        rpc_id = next(self.ids)
        r = self.srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": rpc_id,
                                              "method": "tools/call",
                                              "params": {"name": "exec_code",
                                                         "arguments": args}},
                             headers={"Accept": "application/json",
                                      "Mcp-Session-Id": self.msid}, timeout=180)
        assert r.status == 200, r
        body = r.json()
        assert body.get("id") == rpc_id, body
        res = body["result"]
        sc = res["structuredContent"]
        err = sc.get("error")
        return {"status": sc["status"], "stdout": sc.get("stdout", ""),
                "stderr": sc.get("stderr", ""), "result": sc.get("result"),
                "n_results": 1 if sc.get("result") is not None else 0,
                "error": (err["ename"], err["evalue"]) if err else None,
                "n_errors": 1 if err else 0,
                "pngs": [base64.b64decode(c["data"]) for c in res["content"]
                         if c["type"] == "image"],
                "text": json.dumps(res)}

    def run_queued(self, codes):
        return [self.run(c) for c in codes]

    def close(self):
        rpc = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call",
               "params": {"name": "destroy_session", "arguments": {"session_id": self.sid}}}
        r = self.srv.request("POST", "/mcp", rpc, headers={"Accept": "application/json",
                                                           "Mcp-Session-Id": self.msid})
        assert r.status == 200 and r.json()["result"]["isError"] is False, r
        self.srv.request("DELETE", "/mcp", headers={"Mcp-Session-Id": self.msid})


# --------------------------------------------------------------------------
# what each session runs, and what it must get back

class Checker:
    def __init__(self, name, tok):
        self.name, self.tok, self.problems = name, tok, []

    def check(self, what, res, status="completed", stdout=None, stderr=None, result=None,
              error=None, pngs=0):
        got = {k: res[k] for k in ("status", "stdout", "stderr", "result", "error")}
        got["pngs"] = len(res["pngs"])
        bad = []
        if res["status"] != status:
            bad.append("status")
        if stdout is not None and res["stdout"] != stdout:
            bad.append("stdout")
        if stderr is not None and res["stderr"] != stderr:
            bad.append("stderr")
        if result is not None and (res["result"] != result or res["n_results"] != 1):
            bad.append("result")
        if error is not None and (res["error"] is None or res["error"][0] != error[0]
                                  or error[1] not in res["error"][1]
                                  or res["n_errors"] != 1):
            bad.append("error")
        if error is None and res["error"] is not None:
            bad.append("unexpected error")
        if len(res["pngs"]) != pngs or not all(p.startswith(PNG_MAGIC) for p in res["pngs"]):
            bad.append("pngs")
        strangers = set(TOKEN_RE.findall(res["text"])) - {self.tok}
        if strangers:
            bad.append("output of other sessions %s" % sorted(strangers))
        if bad:
            self.problems.append("%s %s: %s wrong; got %s" % (
                self.name, what, ", ".join(bad), json.dumps(got)[:600]))


def python_session(client, ck, k):
    tok = ck.tok
    ck.check("print", client.run('tok = "%s"\nK = %d\nprint(tok)' % (tok, k)),
             stdout=tok + "\n")
    ck.check("plot", client.run(
        "import matplotlib.pyplot as plt\n"
        "fig = plt.figure(figsize=(3, 2))\n"
        "plt.plot([0, K], [K, 0])\n"
        "plt.title(tok)\n"
        "plt.show()\n"
        "print(tok + '-plot')"), stdout=tok + "-plot\n", pngs=1)
    queued = client.run_queued([
        "raise ValueError(tok + '-err')",
        "import sys\nprint(tok + '-stderr', file=sys.stderr)\nsum(range(K)) * 7",
        "tok + '-' + str(K)",
        "[tok[-4:]] * 3",
    ])
    ck.check("error", queued[0], status="error", error=("ValueError", tok + "-err"))
    ck.check("value", queued[1], stderr=tok + "-stderr\n", result=str(sum(range(k)) * 7))
    ck.check("string", queued[2], result="'%s-%d'" % (tok, k))
    ck.check("list", queued[3], result=repr([tok[-4:]] * 3))
    for i in range(3):
        ck.check("loop %d" % i, client.run("print(tok, %d)\n%d * K" % (i, i + 1)),
                 stdout="%s %d\n" % (tok, i), result=str((i + 1) * k))


def javascript_session(client, ck, k):
    tok = ck.tok
    ck.check("print", client.run('var tok = "%s"; var K = %d; console.log(tok)' % (tok, k)),
             stdout=tok + "\n")
    queued = client.run_queued([
        "throw new Error(tok + '-err')",
        "console.error(tok + '-stderr'); "
        "Array.from({length: K}, (_, j) => j).reduce((a, b) => a + b, 0) * 7",
        "tok + '-' + K",
    ])
    ck.check("error", queued[0], status="error", error=("Error", tok + "-err"))
    ck.check("value", queued[1], stderr=tok + "-stderr\n", result=str(sum(range(k)) * 7))
    ck.check("string", queued[2], result="'%s-%d'" % (tok, k))
    for i in range(3):
        ck.check("loop %d" % i, client.run("console.log(tok, %d); %d * K" % (i, i + 1)),
                 stdout="%s %d\n" % (tok, i), result=str((i + 1) * k))


def run_session(srv, index, lang, via, problems, clients):
    tok = "tk%02d%s" % (index, uuid.uuid4().hex[:10])
    ck = Checker("session %d (%s over %s)" % (index, lang, via), tok)
    try:
        if via == "rest":
            client = RestClient(srv, lang)
        else:
            client = McpClient(srv, lang, "load-%02d-%s" % (index, tok[-6:]))
        clients.append(client)
        k = 1000 + 37 * index
        (python_session if lang == "python" else javascript_session)(client, ck, k)
    except Exception as e:          # noqa: BLE001 - reported with the others
        ck.problems.append("%s: %s: %s" % (ck.name, type(e).__name__, str(e)[:800]))
    problems.extend(ck.problems)


def settle(srv, fds0=None, n_procs=None, timeout=60):
    """Waits until no session is left, the number of processes below the
    gateway (the warm pool refilling) has stayed the same for two seconds
    (and is n_procs, when given) and, when fds0 is given, the gateway's fd
    count is back within the margin. Returns (n_procs, fds, rss_kib)."""
    pid = srv.proc.pid
    deadline = time.monotonic() + timeout
    seen, since = None, time.monotonic()
    while time.monotonic() < deadline:
        n = len(descendants(pid))
        if n != seen:
            seen, since = n, time.monotonic()
        if (time.monotonic() - since >= 2 and (n_procs is None or n == n_procs)
                and (fds0 is None or fd_count(pid) <= fds0 + FD_MARGIN)
                and not srv.get("/sessions").json()["sessions"]):
            break
        time.sleep(0.25)
    return seen, fd_count(pid), vm_rss_kib(pid)


# --------------------------------------------------------------------------

@pytest.mark.alone
def test_32_sessions_at_once(server_factory):
    s = server_factory(env={"CODEBOX_MAX_SESSIONS": "64", "CODEBOX_POOL_SIZE": "2"})
    pid = s.proc.pid
    # a warm-up round that uses every path once (libraries' first-use
    # allocations are not growth), then the baseline
    warm = []
    run_session(s, 98, "python", "rest", warm, [])
    run_session(s, 99, "javascript", "mcp", warm, [])
    assert not warm, "\n".join(warm)
    for r in s.get("/sessions").json()["sessions"]:
        s.delete("/sessions/" + r["session_id"])
    n_procs, fds0, rss0 = settle(s)

    plan = [("python", "rest" if i % 3 else "mcp") for i in range(N_PY)]
    plan += [("javascript", "rest" if i % 2 else "mcp") for i in range(N_JS)]
    problems, clients = [], []
    threads = [threading.Thread(target=run_session, args=(s, i, lang, via, problems, clients))
               for i, (lang, via) in enumerate(plan)]
    t0 = time.monotonic()
    for th in threads:
        th.start()
    peak_fds = fd_count(pid)
    while any(th.is_alive() for th in threads) and time.monotonic() - t0 < 240:
        peak_fds = max(peak_fds, fd_count(pid))
        time.sleep(0.5)
    for th in threads:
        th.join(10)
    took = time.monotonic() - t0
    live = len(s.get("/sessions").json()["sessions"])
    peak_rss = vm_rss_kib(pid)
    assert not any(th.is_alive() for th in threads), "sessions still running after %.0fs" % took
    assert not problems, "%d problems:\n%s\n--- server log ---\n%s" % (
        len(problems), "\n".join(problems), s.log_tail(30))
    assert live == N_PY + N_JS, live

    for c in clients:
        c.close()
    _, fds1, rss1 = settle(s, fds0, n_procs)
    report = ("load: %d sessions (%d python, %d javascript) in %.1fs; gateway fds %d before, "
              "%d at peak, %d after; VmRSS %d KiB before, %d KiB at the end of the load, "
              "%d KiB after" % (N_PY + N_JS, N_PY, N_JS, took, fds0, peak_fds, fds1, rss0,
                                peak_rss, rss1))
    print(report)
    assert took < 150, report
    assert fds1 <= fds0 + FD_MARGIN, report
    if not asan(pid):
        assert rss1 <= rss0 + RSS_MARGIN_KIB, report
    assert s.get("/healthz").status == 200
