"""Fair shares (CODEBOX_TENANT_MAX_SESSIONS): every server-wide table a
tenant fills gives one tenant at most its share, so one tenant at its limit
leaves the others theirs: live sessions (REST and MCP), MCP sessions over
Streamable HTTP and /sse, the kept results, the SQL workers. Two tenants,
alice and bob, by their tokens."""

import http.client
import json
import select
import time

from conftest import mcp_client, wait_for

TOKENS = "alice:tokA,bob:tokB"
A, B = "tokA", "tokB"


def shares_server(server_factory, **env):
    base = {"CODEBOX_API_TOKENS": TOKENS, "CODEBOX_POOL_SIZE": "0"}
    base.update(env)
    return server_factory(env=base)


def create_until_refused(s, token, most=8):
    """POST /sessions until one is refused; returns (ids made, the refusal)."""
    made = []
    for _ in range(most):
        r = s.post("/sessions", {}, token=token)
        if r.status != 201:
            return made, r
        made.append(r.json()["session_id"])
    return made, None


def initialize(s, token):
    return s.request("POST", "/mcp", {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "codebox-e2e", "version": "1"}}},
        headers={"Accept": "application/json"}, token=token)


def test_a_tenant_gets_half_of_the_sessions_by_default(server_factory):
    s = shares_server(server_factory, CODEBOX_MAX_SESSIONS="4")
    mine, refused = create_until_refused(s, A)
    assert len(mine) == 2, mine
    assert refused.status == 429, refused.text
    error = refused.json()["error"]
    assert error["code"] == "too_many_sessions"
    assert "alice" in error["message"] and "share" in error["message"]
    assert "CODEBOX_TENANT_MAX_SESSIONS" in error["message"]
    # over MCP the same refusal is a tool error naming the share
    call = mcp_client(s, headers={"Authorization": "Bearer " + A})
    result = call("exec_code", {"session_id": "one-more", "code": "1"})
    assert result["isError"] is True, result
    assert "share" in result["content"][0]["text"], result
    # bob still creates his two, then he is at his share too
    theirs, refused = create_until_refused(s, B)
    assert len(theirs) == 2, theirs
    assert refused.status == 429 and "bob" in refused.text, refused.text
    # a session that ends gives its place back to its tenant
    assert s.delete("/sessions/" + mine[0], token=A).status == 204
    assert s.post("/sessions", {}, token=A).status == 201


def test_the_share_is_a_setting(server_factory):
    s = shares_server(server_factory, CODEBOX_MAX_SESSIONS="4",
                      CODEBOX_TENANT_MAX_SESSIONS="3")
    mine, refused = create_until_refused(s, A)
    assert len(mine) == 3, mine
    assert refused.status == 429 and "alice" in refused.text, refused.text
    theirs, refused = create_until_refused(s, B)
    assert len(theirs) == 1, theirs
    # the server is full now: the refusal says so
    assert refused.status == 429 and "CODEBOX_MAX_SESSIONS" in refused.text, refused.text


def open_sse(s, token):
    """GET /sse; returns (status, connection) with the stream left open."""
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
    conn.request("GET", "/sse", headers={"Accept": "text/event-stream",
                                         "Authorization": "Bearer " + token})
    r = conn.getresponse()
    if r.status == 200:
        assert r.readline().startswith(b"event: endpoint")
    return r.status, conn


def test_an_initialize_flood_leaves_the_other_tenant_its_mcp_sessions(server_factory):
    # 64 sessions, 32 a tenant: a tenant's share of 8 MCP sessions is 4
    s = shares_server(server_factory, CODEBOX_MAX_MCP_SESSIONS="8")
    statuses = [initialize(s, A).status for _ in range(40)]
    assert statuses.count(200) == 4, statuses
    r = initialize(s, A)
    assert r.status == 429, r.text
    assert "alice" in r.text and "share" in r.text and "CODEBOX_MAX_MCP_SESSIONS" in r.text
    status, conn = open_sse(s, A)
    conn.close()
    assert status == 429
    # bob: the 2024 transport and the 2025 one, up to his own share
    status, stream = open_sse(s, B)
    try:
        assert status == 200
        for _ in range(3):
            r = initialize(s, B)
            assert r.status == 200, r.text
            sid = r.headers["Mcp-Session-Id"]
        r = s.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                      headers={"Accept": "application/json", "Mcp-Session-Id": sid}, token=B)
        assert r.status == 200, r.text
        assert initialize(s, B).status == 429
    finally:
        stream.close()


def run(s, token, session, code):
    r = s.post("/execute", {"session_id": session, "code": code}, token=token)
    assert r.status == 202, r.text
    rid = r.json()["request_id"]
    r = s.get("/execute/%s/results?wait=120" % rid, token=token)
    assert r.status == 200 and r.json()["status"] == "completed", r.text
    return rid


def test_a_flood_of_results_evicts_its_own(server_factory):
    s = shares_server(server_factory, CODEBOX_RESULT_STORE_MB="1")
    assert s.post("/sessions", {"session_id": "b"}, token=B).status == 201
    assert s.post("/sessions", {"session_id": "a"}, token=A).status == 201
    kept = run(s, B, "b", "print('bob was here')")
    # alice's results, 200 kB each: eight of them pass the store's 1 MiB
    first = run(s, A, "a", "print('x' * 200000)")
    for _ in range(7):
        run(s, A, "a", "print('x' * 200000)")
    # the store was over: alice's oldest went, bob's older one stays
    wait_for(lambda: s.get("/execute/%s/results" % first, token=A).status == 404,
             "alice's first result was never evicted")
    r = s.get("/execute/%s/results" % kept, token=B)
    assert r.status == 200, r.text
    assert "bob was here" in json.dumps(r.json()["output"])


RUNAWAY = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
           "WHERE x < 1000000000) SELECT count(*) FROM c")


def test_runaway_queries_leave_the_other_tenant_a_worker(server_factory):
    # 8 sessions, 4 a tenant: half of the four SQL workers
    s = shares_server(server_factory, CODEBOX_MAX_SESSIONS="8")
    for i in range(4):
        assert s.post("/sessions", {"session_id": "a%d" % i}, token=A).status == 201
    assert s.post("/sessions", {"session_id": "b"}, token=B).status == 201
    # alice's four runaway queries, one per session, sent whole
    alice = []
    for i in range(4):
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=120)
        conn.request("POST", "/sql", body=json.dumps({"session_id": "a%d" % i,
                                                      "query": RUNAWAY}),
                     headers={"Authorization": "Bearer " + A,
                              "Content-Type": "application/json",
                              "X-Codebox-Exec-Timeout": "10"})
        alice.append(conn)
    # lets the loop queue them before bob's comes (were they later, the test
    # would prove nothing, but never fail)
    time.sleep(1)
    r = s.post("/sql", {"session_id": "b", "query": "SELECT 1 AS one"}, token=B)
    # bob is answered while every one of alice's still runs or waits
    answered = select.select([c.sock for c in alice], [], [], 0)[0]
    assert r.status == 200 and r.json()["rows"] == [[1]], r.text
    assert answered == [], "alice's queries ended before bob's SELECT 1"
    for conn in alice:
        res = conn.getresponse()
        body = res.read().decode()
        assert res.status == 400 and "10 s" in body, body     # their timeout
        conn.close()
