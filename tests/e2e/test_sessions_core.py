"""One session core under every transport: what REST and MCP list, create
and end is the same, and a session one transport makes, the other sees."""
import threading
import time

from conftest import mcp_client, ok, rest_run, stream_of


def test_one_listing_for_rest_and_mcp(server_factory):
    """A one-shot run's session (run_python_code) is listed by neither REST
    nor MCP while it runs; a named session made by MCP is listed by both."""
    s = server_factory()
    call = mcp_client(s)
    ok(call("exec_code", {"session_id": "named", "code": "x = 1"}))
    done = []
    runner = threading.Thread(target=lambda: done.append(
        call("run_python_code", {"code": "import time; time.sleep(4); print('ran')"})))
    runner.start()
    try:
        deadline = time.monotonic() + 20
        seen_rest = seen_mcp = None
        while time.monotonic() < deadline:
            seen_rest = [x["session_id"] for x in s.get("/sessions").json()["sessions"]]
            seen_mcp = [x["session_id"] for x in ok(call("list_sessions", {}))["sessions"]]
            time.sleep(0.3)
            if done:
                break
            assert seen_rest == seen_mcp == ["named"], (seen_rest, seen_mcp)
    finally:
        runner.join()
    assert done and "ran" in done[0]["content"][0]["text"], done


def test_a_session_made_by_one_transport_is_used_and_ended_by_the_other(server_factory):
    s = server_factory()
    call = mcp_client(s)
    assert s.post("/sessions", {"session_id": "shared"}).status == 201
    assert rest_run(s, "shared", "y = 41")["status"] == "completed"
    out = ok(call("exec_code", {"session_id": "shared", "code": "print(y + 1)"}))
    assert "42" in str(out), out
    # the same id rules and errors' meaning for both
    assert s.post("/sessions", {"session_id": "shared"}).status == 409
    assert s.post("/sessions", {"session_id": ".bad"}).status == 400
    assert call("exec_code", {"session_id": ".bad", "code": "1"})["isError"] is True
    ok(call("destroy_session", {"session_id": "shared"}))
    assert s.get("/sessions/shared").status == 404
    assert s.post("/sessions", {"session_id": "shared"}).status == 201
    assert stream_of(rest_run(s, "shared", "print('fresh')")) == "fresh\n"
