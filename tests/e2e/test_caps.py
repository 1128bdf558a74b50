"""Every byte a kernel sends counts, and every queue and table a client can
grow has a bound with a clear error: rich displays of any JSON type, huge
exceptions, input() loops, the result store, a session's queue, MCP
sessions, and idle connections."""
import socket
import time

import pytest

from conftest import mcp_client, mcp_session, error_text


def post_exec(s, session, code):
    r = s.post("/execute", {"session_id": session, "code": code})
    return r


def results(s, rid, wait=120):
    return s.get("/execute/%s/results?wait=%d" % (rid, wait), timeout=wait + 30)


@pytest.fixture(scope="module")
def capped():
    from conftest import Server
    s = Server(env={"CODEBOX_POOL_SIZE": "0", "CODEBOX_MAX_QUEUED_EXECUTIONS": "3",
                    "CODEBOX_RESULT_STORE_MB": "8"})
    assert s.post("/sessions", {"session_id": "c"}).status == 201
    yield s
    s.stop()


def test_rich_json_displays_count_every_byte(capped):
    s = capped
    code = ("from IPython.display import display\n"
            "blob = {'k': 'x' * 8_000_000}\n"
            "for i in range(9):\n"
            "    display({'application/json': blob}, raw=True)\n")
    r = post_exec(s, "c", code)
    res = results(s, r.json()["request_id"])
    assert res.status == 200
    body = res.json()
    displays = [o for o in body["output"] if o["type"] == "display"]
    assert len(displays) == 8, len(displays)          # 64 MiB of them, not 72
    assert len(res.body) < 70 << 20
    notes = "".join(o.get("content", "") for o in body["output"] if o["type"] == "stream")
    assert "the rest were dropped" in notes


def test_huge_exception_is_cut(capped):
    s = capped
    r = post_exec(s, "c", "raise ValueError('E' * 30_000_000)")
    res = results(s, r.json()["request_id"])
    body = res.json()
    assert len(res.body) < 4 << 20, len(res.body)
    err = [o for o in body["output"] if o["type"] == "error"][0]
    assert err["ename"] == "ValueError"
    assert 0 < len(err["evalue"]) <= 64 << 10
    assert 0 < sum(len(line) for line in err["traceback"]) <= 1 << 20


def test_input_loop_adds_one_note(capped):
    """input() fails at once (allow_stdin is false), but kernel code holds
    the key and can send input_request notes itself, as many as it likes."""
    s = capped
    code = ("k = get_ipython().kernel\n"
            "for i in range(3000):\n"
            "    k.session.send(k.stdin_socket, 'input_request', {'prompt': 'x' * 1000,\n"
            "                   'password': False}, parent=k.get_parent('shell'),\n"
            "                   ident=k._parent_ident['shell'])\n"
            "print('done')")
    r = post_exec(s, "c", code)
    body = results(s, r.json()["request_id"]).json()
    assert body["status"] == "completed", body
    text = "".join(o.get("content", "") for o in body["output"] if o["type"] == "stream")
    assert text.count("input() is not supported") == 1, text[:500]
    assert "done" in text
    assert len(body["output"]) <= 3


def test_result_store_is_bounded_by_bytes(capped):
    s = capped
    rids = []
    for i in range(14):
        r = post_exec(s, "c", "print('%d' * 1_000_000)" % (i % 10))
        rids.append(r.json()["request_id"])
        assert results(s, rids[-1]).status == 200
    time.sleep(1)       # the store is trimmed four times a second
    assert s.get("/execute/%s/results" % rids[-1]).status == 200
    gone = [rid for rid in rids if s.get("/execute/%s/status" % rid).status == 404]
    assert rids[0] in gone, gone
    kept = len(rids) - len(gone)
    assert 2 <= kept <= 9, kept         # about 8 MiB of 1 MiB results


def test_queue_is_bounded(capped):
    s = capped
    first = post_exec(s, "c", "import time; time.sleep(4)")
    assert first.status == 202
    accepted = [post_exec(s, "c", "1") for _ in range(3)]
    assert all(r.status == 202 for r in accepted), [r.text for r in accepted]
    refused = post_exec(s, "c", "1")
    assert refused.status == 429, refused.text
    assert refused.json()["error"]["code"] == "too_many_queued"
    assert "CODEBOX_MAX_QUEUED_EXECUTIONS" in refused.json()["error"]["message"]
    call = mcp_client(s)
    result = call("exec_code", {"session_id": "c", "code": "2"})
    assert result.get("isError"), result
    assert "waiting" in error_text(result)
    for r in accepted:
        assert results(s, r.json()["request_id"]).json()["status"] == "completed"


def test_mcp_sessions_are_bounded_and_expire(server_factory):
    s = server_factory(env={"CODEBOX_MAX_MCP_SESSIONS": "2",
                            "CODEBOX_MCP_SESSION_IDLE_TIMEOUT": "2", "CODEBOX_POOL_SIZE": "0"})
    a = mcp_session(s)
    mcp_session(s)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "x", "version": "1"}}}
    r = s.request("POST", "/mcp", init, headers={"Accept": "application/json"})
    assert r.status == 429, r.text
    assert "CODEBOX_MAX_MCP_SESSIONS" in r.text
    time.sleep(2.5)
    assert mcp_session(s)                # the idle ones expired
    r = s.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                  headers={"Accept": "application/json", "Mcp-Session-Id": a})
    assert r.status == 404, r.text       # an expired id is unknown: initialize again


def test_idle_connections_from_one_address_do_not_lock_others_out(server_factory):
    s = server_factory(env={"CODEBOX_MAX_CONNECTIONS_PER_ADDRESS": "20",
                            "CODEBOX_HTTP_IDLE_TIMEOUT": "2"})
    idle = []
    for _ in range(60):
        try:
            c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
            idle.append(c)
        except OSError:
            break
    # another client address is served at once
    c = socket.socket()
    c.settimeout(10)
    c.bind(("127.0.0.2", 0))
    c.connect(("127.0.0.1", s.port))
    start = time.monotonic()
    c.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert c.recv(100).startswith(b"HTTP/1.1 200")
    assert time.monotonic() - start < 5
    c.close()
    # past the bound, the flooding address's connections were closed at once
    closed = 0
    for sock in idle:
        sock.settimeout(6)
        try:
            if sock.recv(10) == b"":
                closed += 1
        except OSError:
            closed += 1
    assert closed == len(idle), (closed, len(idle))     # over the bound or idle: all closed
    for sock in idle:
        sock.close()
