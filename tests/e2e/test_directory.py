"""The session directory many nodes share (CODEBOX_DIRECTORY_URL, a Redis
from Debian on loopback): listings span the nodes (?scope=node for one); a
request for a session another node holds is refused with 421 naming that
node, never answered with a second kernel; a killed node's sessions are
reported lost (404, reason session_lost; MCP says the session is new); a
node drains on SIGUSR1 (no new sessions, /healthz says so) and serves again
on SIGUSR2; a node that stops cleanly leaves the directory."""
import signal

from conftest import Server, wait_for


def node(url, name):
    return Server(env={"CODEBOX_POOL_SIZE": "0", "CODEBOX_DIRECTORY_URL": url,
                       "CODEBOX_NODE_NAME": name})


def sessions(srv, scope=None):
    r = srv.get("/sessions" + ("?scope=" + scope if scope else ""))
    assert r.status == 200
    return {s["session_id"]: s for s in r.json()["sessions"]}


def mcp_tool(srv, name, args):
    headers = {"Accept": "application/json", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": "tools/call", "Mcp-Name": name}
    if "session_id" in args:
        headers["Mcp-Param-Session-Id"] = args["session_id"]
    r = srv.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}, headers=headers)
    assert r.status == 200, r.body
    return r.json()["result"]


def mcp_exec(srv, session, code):
    return mcp_tool(srv, "exec_code", {"session_id": session, "code": code})


def test_directory_spans_nodes_refuses_the_wrong_node_and_reports_lost_sessions(redis_url):
    a, b, c = node(redis_url, "node-a"), node(redis_url, "node-b"), node(redis_url, "node-c")
    try:
        assert a.post("/sessions", {"session_id": "s1"}).status == 201
        assert c.post("/sessions", {"session_id": "s3"}).status == 201
        # listings span the nodes, each entry naming its node
        seen = wait_for(lambda: (lambda s: s if {"s1", "s3"} <= set(s) else None)(sessions(b)),
                        "b never listed the others' sessions")
        assert seen["s1"]["node"] == "node-a" and seen["s3"]["node"] == "node-c"
        assert seen["s1"]["lost"] is False
        assert sessions(b, "node") == {}
        assert sessions(a, "node")["s1"]["node"] == "node-a"
        listed = mcp_tool(b, "list_sessions", {})["structuredContent"]["sessions"]
        assert {s["session_id"]: s["node"] for s in listed}.get("s1") == "node-a"
        assert mcp_tool(b, "list_sessions", {"scope": "node"})["structuredContent"] == {
            "sessions": []}
        kernels = {k["id"]: k for k in b.get("/api/kernels").json()}
        assert kernels["s1"]["node"] == "node-a" and kernels["s1"]["name"] == "python3"
        assert b.get("/api/kernels?scope=node").json() == []

        # the wrong node refuses, naming the owner, and starts no kernel
        r = b.get("/sessions/s1")
        assert r.status == 421, r.body
        assert r.json()["error"]["code"] == "wrong_node"
        assert "node-a" in r.json()["error"]["message"]
        assert b.post("/execute", {"session_id": "s1", "code": "1"}).status == 421
        assert b.get("/api/kernels/s1").status == 421
        assert b.post("/sessions", {"session_id": "s1"}).status == 421
        res = mcp_exec(b, "s1", "1")
        assert res["isError"] and "node-a" in res["content"][0]["text"]
        assert sessions(b, "node") == {}

        # a node that stops cleanly leaves the directory at once
        c.stop()
        wait_for(lambda: "s3" not in sessions(b), "c's session outlived its clean stop")

        # a killed node's sessions are lost, and said to be
        a.expect_dead = True
        a.proc.kill()
        lost = wait_for(lambda: (lambda s: s.get("s1", {}).get("lost") and s)(sessions(b)),
                        "s1 was never reported lost", timeout=30)
        assert lost["s1"]["node"] == "node-a"
        r = b.get("/sessions/s1")
        assert r.status == 404 and r.json()["error"]["code"] == "session_lost"
        assert "node-a" in r.json()["error"]["message"]
        res = mcp_exec(b, "s1", "x = 1")
        assert res["isError"] and "new, empty session" in res["content"][0]["text"]
        res = mcp_exec(b, "s1", "print('here now')")
        assert res["structuredContent"]["stdout"] == "here now\n"
        assert sessions(b, "node")["s1"]["node"] == "node-b"

        # draining: no new sessions, the live ones go on, /healthz says so
        b.proc.send_signal(signal.SIGUSR1)
        wait_for(lambda: b.get("/healthz").json()["status"] == "draining", "never draining")
        r = b.post("/sessions", {"session_id": "s4"})
        assert r.status == 503 and r.json()["error"]["code"] == "draining", r.body
        assert mcp_exec(b, "s1", "print(2)")["structuredContent"]["stdout"] == "2\n"
        b.proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: b.get("/healthz").json()["status"] == "ok", "never serving again")
        assert b.post("/sessions", {"session_id": "s4"}).status == 201
    finally:
        for s in (a, b, c):
            if s.proc.poll() is None:
                s.stop()
            elif s.expect_dead:
                s.stop(sig=signal.SIGKILL)
