"""Durable sessions (issue 42): a session idle past CODEBOX_IDLE_PAUSE has
its kernel stopped and is listed as `paused`, its folder and record kept;
its next call (REST, MCP, the Jupyter API) starts a kernel again and the
first answer says so. CODEBOX_MAX_SESSIONS counts live kernels,
CODEBOX_MAX_STORED_SESSIONS all kept ones."""
import os
import signal
import tempfile
import time

import pytest

from conftest import (Server, SERVER_DIRS, descendants, error_text, mcp_client, ok, rest_run,
                      stream_of, wait_for)
from test_jupyter_kernels import Client, text_of, ws_url

NOTICE = "the kernel was restarted (the session was paused)"
ENV = {"CODEBOX_POOL_SIZE": "0", "CODEBOX_IDLE_PAUSE": "2",
       "CODEBOX_CLEANUP_INTERVAL": "1"}


def status_of(s, sid, token=...):
    r = s.get("/sessions", token=token)
    assert r.status == 200, r.text
    for e in r.json()["sessions"]:
        if e["session_id"] == sid:
            return e["status"]
    return None


def kernel_pids(s):
    """The server's descendants (its kernels: the pool is off) but its fork
    server, which stays for the server's life (CODEBOX_FORK_SERVER)."""
    def fork_server(pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                return ppid == s.proc.pid and b"codebox-fork-server" in f.read()
        except OSError:
            return False
    return [(pid, start) for pid, start in descendants(s.proc.pid) if not fork_server(pid)]


def wait_paused(s, sid, token=..., timeout=20):
    wait_for(lambda: status_of(s, sid, token) == "paused", "session %s paused" % sid,
             timeout=timeout)


def make_session(s, sid, token=...):
    r = s.post("/sessions", {"session_id": sid}, token=token)
    assert r.status in (200, 201), r.text


def test_pause_then_resume_by_rest(server_factory):
    s = server_factory(env=ENV)
    make_session(s, "p1")
    res = rest_run(s, "p1", "x = 41\nopen('kept.txt','w').write('hello')\nprint(x + 1)")
    assert stream_of(res) == "42\n", res
    assert NOTICE not in stream_of(res, "stderr")
    assert kernel_pids(s)
    wait_paused(s, "p1")
    wait_for(lambda: not kernel_pids(s), "the paused kernel's processes gone")
    info = s.get("/sessions/p1")
    assert info.status == 200 and info.json()["status"] == "paused", info.text
    assert status_of(s, "p1") == "paused"     # looking does not wake it
    res = rest_run(s, "p1", "print(open('kept.txt').read()); print('x' in dir())")
    assert stream_of(res) == "hello\nFalse\n", res
    assert NOTICE in stream_of(res, "stderr"), res
    assert res["output"][0]["name"] == "stderr"     # the notice comes first
    res = rest_run(s, "p1", "print(1)")
    assert NOTICE not in stream_of(res, "stderr"), res     # the first answer only
    assert status_of(s, "p1") in ("idle", "busy")
    nb = s.get("/sessions/p1/notebook").json()
    codes = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(codes) == 3, nb
    assert any("restart" in "".join(c["source"]).lower()
               for c in nb["cells"] if c["cell_type"] == "markdown"), nb


def test_pause_then_resume_by_mcp(server_factory):
    s = server_factory(env=ENV)
    call = mcp_client(s)
    r = ok(call("exec_code", {"session_id": "m1", "code": "y = 5\nopen('f.txt','w').write('F')"}))
    wait_paused(s, "m1")
    listed = call("list_sessions", {})
    assert "paused" in listed["content"][0]["text"], listed
    r = call("exec_code", {"session_id": "m1",
                           "code": "print(open('f.txt').read(), 'y' in dir())"})
    text = "\n".join(c.get("text", "") for c in r["content"])
    assert NOTICE in text and "F False" in text, r
    r = call("exec_code", {"session_id": "m1", "code": "print(2)"})
    assert NOTICE not in "\n".join(c.get("text", "") for c in r["content"]), r


def test_pause_then_resume_by_jupyter(server_factory):
    s = server_factory(env=ENV)
    r = s.post("/api/kernels", {"name": "python3"})
    assert r.status == 201, r.text
    kid = r.json()["id"]
    c = Client(ws_url(s, kid))
    reply, out = c.run("z = 3\nopen('j.txt','w').write('J')")
    assert reply["content"]["status"] == "ok"
    c.close()
    wait_paused(s, kid)
    model = s.get("/api/kernels/%s" % kid).json()
    assert model["execution_state"] == "idle", model   # what Jupyter clients know
    assert status_of(s, kid) == "paused"
    c = Client(ws_url(s, kid))
    reply, out = c.run("print(open('j.txt').read(), 'z' in dir())")
    assert reply["content"]["status"] == "ok", reply
    assert text_of(out) == "J False\n", out
    # after its first answer the client hears that the kernel it knew
    # restarted (a status "restarting", as a Jupyter server says of a
    # kernel it restarted; JupyterLab tells its user and reconnects), once
    def restarts():
        return [m for m in c.seen if m["msg_type"] == "status"
                and m["content"]["execution_state"] == "restarting"]
    reply, out = c.run("print(2)")     # (it came with or before this answer)
    assert text_of(out) == "2\n"
    assert len(restarts()) == 1 and restarts()[0]["channel"] == "iopub", c.seen
    # and only once its first request is done, reply and idle both
    # (JupyterLab cancels what it still waits for when it hears it)
    first = next(m for m in c.seen if m["channel"] == "shell")["parent_header"]["msg_id"]
    done = [i for i, m in enumerate(c.seen) if m["parent_header"].get("msg_id") == first
            and (m["channel"] == "shell" or m["content"].get("execution_state") == "idle")]
    assert len(done) == 2 and c.seen.index(restarts()[0]) > max(done), c.seen
    c.close()
    c = Client(ws_url(s, kid))      # a live kernel: no such status
    reply, _ = c.run("print(1)")
    assert reply["content"]["status"] == "ok"
    assert not [m for m in c.seen if m["msg_type"] == "status"
                and m["content"]["execution_state"] == "restarting"], c.seen
    c.close()


@pytest.mark.alone     # c and d must stay live (unpaused) through its steps: no load beside it
def test_max_sessions_counts_live_kernels(server_factory):
    s = server_factory(env=dict(ENV, CODEBOX_MAX_SESSIONS="2", CODEBOX_IDLE_PAUSE="4"))
    for sid in ("a", "b"):
        make_session(s, sid)
    r = s.post("/sessions", {"session_id": "c"})
    assert r.status == 429, r.text
    wait_paused(s, "a")
    wait_paused(s, "b")
    make_session(s, "c")    # a and b are paused: they do not count
    make_session(s, "d")
    assert s.post("/sessions", {"session_id": "e"}).status == 429
    # waking a at the bound pauses the least recently used idle one (c)
    res = rest_run(s, "a", "print('a')")
    assert stream_of(res) == "a\n", res
    assert status_of(s, "c") == "paused", s.get("/sessions").text
    assert status_of(s, "d") in ("idle", "busy")
    # when no live one can be paused (d busy, a busy), waking b is 429
    busy = [s.post("/execute", {"session_id": sid, "code": "import time; time.sleep(8)"})
            for sid in ("a", "d")]
    assert all(r.status == 202 for r in busy)
    time.sleep(0.5)
    r = s.post("/execute", {"session_id": "b", "code": "print(1)"})
    assert r.status == 429, r.text
    assert "CODEBOX_MAX_SESSIONS" in r.json()["error"]["message"], r.text


def test_max_stored_sessions(server_factory):
    s = server_factory(env=dict(ENV, CODEBOX_MAX_STORED_SESSIONS="2"))
    make_session(s, "s1")
    make_session(s, "s2")
    wait_paused(s, "s1")
    r = s.post("/sessions", {"session_id": "s3"})
    assert r.status == 429, r.text
    assert "CODEBOX_MAX_STORED_SESSIONS" in r.text
    assert s.delete("/sessions/s1").status == 204
    make_session(s, "s3")


def shared_state():
    """A state folder outside every server's own (each removes its own at
    its stop), for servers that follow one another; removed at the end."""
    tmp = tempfile.mkdtemp(prefix="codebox-e2e-")
    SERVER_DIRS.append(tmp)
    os.chmod(tmp, 0o755)
    os.mkdir(os.path.join(tmp, "state"))
    return ("--state-dir", os.path.join(tmp, "state"))


def restarted(server_factory, old, sig, env, state):
    """Stops old with sig (SIGKILL: no clean exit), then starts a new
    server on the same state folder."""
    if sig == signal.SIGKILL:
        old.expect_dead = True
        old.proc.kill()
        old.proc.wait(20)
    else:
        old.stop(sig)
    return server_factory(env=env, args=state)


TOKENS = {"CODEBOX_API_TOKENS": "alpha:tok-a,beta:tok-b"}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_sessions_survive_a_restart(server_factory, sig):
    env = dict(ENV, CODEBOX_IDLE_PAUSE="0", **TOKENS)
    state = shared_state()
    s = server_factory(env=env, args=state)
    make_session(s, "r1", token="tok-a")
    rest_run(s, "r1", "open('r.txt','w').write('R')\nprint('one')", token="tok-a")
    make_session(s, "r1", token="tok-b")     # the same id, another tenant
    rest_run(s, "r1", "open('r.txt','w').write('B')", token="tok-b")
    call = mcp_client(s, headers={"Authorization": "Bearer tok-a"})
    ok(call("exec_code", {"session_id": "m1", "code": "open('m.txt','w').write('M')"}))
    r = s.post("/api/kernels", {"name": "python3"}, token="tok-a")
    assert r.status == 201, r.text
    kid = r.json()["id"]
    c = Client(ws_url(s, kid), header=["Authorization: Bearer tok-a"])
    c.run("open('j.txt','w').write('J')")
    c.close()
    s2 = restarted(server_factory, s, sig, env, state)
    for sid in ("r1", "m1", kid):
        assert status_of(s2, sid, token="tok-a") == "paused", s2.get("/sessions", token="tok-a").text
    listed = [e["session_id"] for e in s2.get("/sessions", token="tok-b").json()["sessions"]]
    assert listed == ["r1"], listed     # tenants kept apart
    res = rest_run(s2, "r1", "print(open('r.txt').read())", token="tok-a")
    assert stream_of(res) == "R\n" and NOTICE in stream_of(res, "stderr"), res
    res = rest_run(s2, "r1", "print(open('r.txt').read())", token="tok-b")
    assert stream_of(res) == "B\n", res
    call = mcp_client(s2, headers={"Authorization": "Bearer tok-a"})
    r = call("exec_code", {"session_id": "m1", "code": "print(open('m.txt').read())"})
    text = "\n".join(x.get("text", "") for x in r["content"])
    assert "M" in text and NOTICE in text, r
    c = Client(ws_url(s2, kid), header=["Authorization: Bearer tok-a"])
    reply, out = c.run("print(open('j.txt').read())")
    assert text_of(out) == "J\n", out
    c.close()
    nb = s2.get("/sessions/r1/notebook", token="tok-a").json()
    codes = [x for x in nb["cells"] if x["cell_type"] == "code"]
    assert len(codes) == 2, nb      # the earlier cell and the new one
    assert "one" in "".join(codes[0]["outputs"][0]["text"]), codes[0]
    assert any("restart" in "".join(x["source"]).lower()
               for x in nb["cells"] if x["cell_type"] == "markdown"), nb
    # a deleted session does not come back
    assert s2.delete("/sessions/r1", token="tok-b").status == 204
    s3 = restarted(server_factory, s2, signal.SIGTERM, env, state)
    listed = s3.get("/sessions", token="tok-b").json()["sessions"]
    assert listed == [], listed
    assert status_of(s3, "r1", token="tok-a") == "paused"


def test_directory_lists_kept_sessions_as_paused_on_their_node(server_factory, redis_url):
    def env(name):
        return dict(ENV, CODEBOX_DIRECTORY_URL=redis_url, CODEBOX_NODE_NAME=name)

    def seen_from(srv):
        return {e["session_id"]: e for e in srv.get("/sessions").json()["sessions"]}

    state = shared_state()
    a = server_factory(env=env("node-a"), args=state)
    b = server_factory(env=env("node-b"))
    make_session(a, "d1")
    wait_paused(a, "d1")
    e = wait_for(lambda: seen_from(b).get("d1", {}).get("status") == "paused"
                 and seen_from(b)["d1"], "b never saw d1 paused")
    assert e["node"] == "node-a" and e["lost"] is False, e
    a2 = restarted(server_factory, a, signal.SIGKILL, env("node-a"), state)
    assert status_of(a2, "d1") == "paused"
    e = wait_for(lambda: (lambda x: x if x.get("lost") is False and x.get("status") == "paused"
                          else None)(seen_from(b).get("d1", {})),
                 "b never saw d1 back on node-a", timeout=30)
    assert e["node"] == "node-a", e
    # b refuses it (421, its node is a), a wakes it
    assert b.post("/execute", {"session_id": "d1", "code": "1"}).status == 421
    res = rest_run(a2, "d1", "print('back')")
    assert stream_of(res) == "back\n", res
    wait_for(lambda: seen_from(b)["d1"]["status"] == "live", "b never saw d1 live")


def test_a_kept_session_comes_back_with_its_volumes(server_factory):
    env = dict(ENV, CODEBOX_SANDBOX="bwrap", CODEBOX_IDLE_PAUSE="0", **TOKENS)
    state = shared_state()
    s = server_factory(env=env, args=state)
    r = s.post("/volumes", {"name": "vol", "size_mb": 16}, token="tok-a")
    assert r.status == 201, r.text
    r = s.post("/sessions", {"session_id": "v1", "volumes": [{"name": "vol"}]}, token="tok-a")
    assert r.status == 201, r.text
    res = rest_run(s, "v1", "open('/volumes/vol/a.txt','w').write('V')", token="tok-a")
    assert res["status"] == "completed", res
    s2 = restarted(server_factory, s, signal.SIGTERM, env, state)
    assert status_of(s2, "v1", token="tok-a") == "paused"
    # held again: listed with the volume, which cannot be deleted under it
    assert s2.get("/volumes/vol", token="tok-a").json()["sessions"] == ["v1"]
    assert s2.delete("/volumes/vol", token="tok-a").status == 409
    res = rest_run(s2, "v1", "print(open('/volumes/vol/a.txt').read())", token="tok-a")
    assert stream_of(res) == "V\n", res
    assert s2.delete("/sessions/v1", token="tok-a").status == 204
    assert s2.delete("/volumes/vol", token="tok-a").status == 204
