"""Named volumes (issue 42): a tenant's folders that outlive sessions and
restarts, each with its own quota, mounted by sessions at /volumes/NAME
read-write or read-only, under the sandbox, with real kernels. Another
tenant's volume does not exist for a caller."""
import json
import os
import shutil
import socket

import pytest

from conftest import error_text, mcp_client, ok, rest_run, stream_of, unmount_below

TOKENS = "alice:tok-a,bob:tok-b"
ENV = {"CODEBOX_SANDBOX": "bwrap", "CODEBOX_API_TOKENS": TOKENS}


def error_of(r, status):
    assert r.status == status, r
    return r.json()["error"]


def make_volume(s, name, size_mb=16, token=...):
    r = s.post("/volumes", {"name": name, "size_mb": size_mb}, token=token)
    assert r.status == 201, r
    return r.json()


def new_session(s, sid, volumes, token=...):
    return s.post("/sessions", {"session_id": sid, "volumes": volumes}, token=token)


def run_ok(s, sid, code, token=...):
    res = rest_run(s, sid, code, token=token)
    assert res["status"] == "completed", res
    return stream_of(res)


def test_volume_outlives_sessions_and_a_restart(server_factory, monkeypatch):
    s = server_factory(env=ENV, token="tok-a")
    v = make_volume(s, "data", 16)
    assert v["name"] == "data" and v["size_mb"] == 16 and v["path"] == "/volumes/data"
    assert v["sessions"] == []
    r = s.request("PUT", "/volumes/data/files/in/hello.txt", body=b"hello volume")
    assert r.status == 201, r
    assert r.json() == {"path": "/volumes/data/in/hello.txt", "size": 12}

    # a session mounts it read-write: reads the upload, writes beside it
    assert new_session(s, "writer", [{"name": "data"}]).status == 201
    out = run_ok(s, "writer", "print(open('/volumes/data/in/hello.txt').read())\n"
                 "open('/volumes/data/made.txt', 'w').write('made by writer')\n"
                 "import os; print(sorted(os.listdir('/volumes')))\n"
                 "print(sorted(os.listdir('/volumes/data')))")
    assert out.splitlines() == ["hello volume", "['data']", "['in', 'made.txt']"]

    # another mounts it read-only: reads what the first wrote, cannot write
    assert new_session(s, "reader", [{"name": "data", "read_only": True}]).status == 201
    out = run_ok(s, "reader", "import errno\nprint(open('/volumes/data/made.txt').read())\n"
                 "try:\n    open('/volumes/data/nope.txt', 'w')\n"
                 "except OSError as e:\n    print(errno.errorcode[e.errno])\n"
                 "else:\n    print('WROTE')")
    assert out.splitlines() == ["made by writer", "EROFS"]

    # a session without it does not see it
    assert s.post("/sessions", {"session_id": "plain"}).status == 201
    assert run_ok(s, "plain", "import os; print(os.path.exists('/volumes/data'))") == "False\n"

    # in use: listed with its sessions, not deleted
    [listed] = s.get("/volumes").json()["volumes"]
    assert sorted(listed["sessions"]) == ["reader", "writer"]
    assert 0 < listed["used_bytes"] and 0 < listed["free_bytes"] <= 16 << 20
    err = error_of(s.delete("/volumes/data"), 409)
    assert err["code"] == "conflict", err
    assert "reader" in err["message"] or "writer" in err["message"], err

    # the session's kept settings name its volumes (never their host folders)
    with open(os.path.join(s.state_dir, ".kept", "@alice", "reader", "session.json")) as f:
        kept = json.load(f)
    assert kept["execution_options"]["volumes"] == [{"name": "data", "read_only": True}]
    assert ".volumes" not in json.dumps(kept)
    for sid in ("writer", "reader"):
        assert s.delete("/sessions/" + sid).status == 204
    assert s.get("/volumes/data").json()["sessions"] == []
    r = s.get("/volumes/data/files/made.txt")
    assert r.status == 200 and r.body == b"made by writer"

    # a server on the same state folder: the volume and its files are there
    state = s.state_dir
    monkeypatch.setenv("CODEBOX_E2E_KEEP", "1")
    s.stop()
    monkeypatch.delenv("CODEBOX_E2E_KEEP")
    try:
        s2 = server_factory(env=ENV, token="tok-a", args=("--state-dir", state))
        [again] = s2.get("/volumes").json()["volumes"]
        assert again["name"] == "data" and again["size_mb"] == 16
        r = s2.get("/volumes/data/files/made.txt")
        assert r.status == 200 and r.body == b"made by writer"
        assert new_session(s2, "later", [{"name": "data"}]).status == 201
        out = run_ok(s2, "later", "print(open('/volumes/data/made.txt').read())\n"
                     "print(open('/volumes/data/in/hello.txt').read())")
        assert out.splitlines() == ["made by writer", "hello volume"]
        # deleted once no session mounts it: its files and image go
        assert s2.delete("/sessions/later").status == 204
        assert s2.delete("/volumes/data").status == 204
        assert error_of(s2.get("/volumes/data"), 404)["code"] == "not_found"
        assert s2.get("/volumes").json() == {"volumes": []}
        assert error_of(s2.get("/volumes/data/files/made.txt"), 404)
        assert os.listdir(os.path.join(state, ".volumes", "@alice")) == []
        assert error_of(new_session(s2, "gone", [{"name": "data"}]), 404)
        s2.stop()
    finally:
        unmount_below(os.path.dirname(state))
        shutil.rmtree(os.path.dirname(state), ignore_errors=True)


def test_quota_and_tenant_bounds(server_factory):
    s = server_factory(env=dict(ENV, CODEBOX_VOLUMES_MAX="3", CODEBOX_VOLUME_MAX_MB="40"),
                       token="tok-a")
    make_volume(s, "small", 8)
    # a PUT past its size is refused from its Content-Length, before the
    # body is read (the client asks for a 100 Continue first)
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    try:
        sock.sendall(b"PUT /volumes/small/files/big.bin HTTP/1.1\r\nHost: localhost\r\n"
                     b"Authorization: Bearer tok-a\r\nContent-Length: %d\r\n"
                     b"Expect: 100-continue\r\n\r\n" % (9 << 20))
        answer = b""
        while b"size_mb" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413") and b"size_mb" in answer, answer
    assert error_of(s.get("/volumes/small/files/big.bin"), 404)
    # the kernel's writes past its size fail there and then
    assert new_session(s, "fill", [{"name": "small"}]).status == 201
    out = run_ok(s, "fill", "import errno\n"
                 "try:\n"
                 "    with open('/volumes/small/fill.bin', 'wb') as f:\n"
                 "        for _ in range(12):\n"
                 "            f.write(b'y' * (1 << 20)); f.flush(); import os; os.fsync(f.fileno())\n"
                 "except OSError as e:\n    print(errno.errorcode[e.errno])\n"
                 "else:\n    print('FITS')")
    assert out == "ENOSPC\n"
    # the tenant's bounds: 40 MiB together, 3 volumes
    err = error_of(s.post("/volumes", {"name": "huge", "size_mb": 33}), 413)
    assert "CODEBOX_VOLUME_MAX_MB" in err["message"]
    make_volume(s, "mid", 16)
    make_volume(s, "third", 4)
    err = error_of(s.post("/volumes", {"name": "fourth", "size_mb": 1}), 403)
    assert "CODEBOX_VOLUMES_MAX" in err["message"]
    assert error_of(s.post("/volumes", {"name": "mid", "size_mb": 1}), 409)["code"] == "conflict"
    # bob's share is his own
    make_volume(s, "mid", 16, token="tok-b")
    assert [v["name"] for v in s.get("/volumes").json()["volumes"]] == ["mid", "small", "third"]


def test_another_tenant_sees_nothing(server_factory):
    s = server_factory(env=ENV, token="tok-a")
    make_volume(s, "secret", 8)
    assert s.request("PUT", "/volumes/secret/files/key.txt", body=b"alice's").status == 201
    bob = "tok-b"
    assert s.get("/volumes", token=bob).json() == {"volumes": []}
    for method, path in (("GET", "/volumes/secret"), ("DELETE", "/volumes/secret"),
                         ("GET", "/volumes/secret/files/key.txt")):
        assert error_of(s.request(method, path, token=bob), 404)["code"] == "not_found"
    assert error_of(s.request("PUT", "/volumes/secret/files/x.txt", body=b"bob",
                              token=bob), 404)
    err = error_of(new_session(s, "bobs", [{"name": "secret"}], token=bob), 404)
    assert "no volume 'secret'" in err["message"]
    assert error_of(s.post("/execute", {"code": "1", "volumes": [{"name": "secret"}]},
                           token=bob), 404)
    # bob's volume of the same name is another folder
    make_volume(s, "secret", 8, token=bob)
    assert new_session(s, "bobs", [{"name": "secret"}], token=bob).status == 201
    out = run_ok(s, "bobs", "import os; print(os.listdir('/volumes/secret'))", token=bob)
    assert "key.txt" not in out
    assert s.get("/volumes/secret/files/key.txt").body == b"alice's"
    # no tokens: 401
    assert s.get("/volumes", token=None).status == 401


def test_hostile_names_and_paths(server_factory):
    s = server_factory(env=ENV, token="tok-a")
    for name in ("../x", "a/b", "a.b", "", ".", "..", "x" * 65, "\u00fcn\u00ef", "a b",
                 "a\nb", "-" * 65):
        err = error_of(s.post("/volumes", {"name": name, "size_mb": 1}), 400)
        assert "A-Z a-z 0-9 _ -" in err["message"], (name, err)
    for body in ({"name": "ok"}, {"name": "ok", "size_mb": 0}, {"name": "ok", "size_mb": "8"},
                 {"name": 5, "size_mb": 8}, {"name": "ok", "size_mb": -1}):
        assert error_of(s.post("/volumes", body), 400)["code"] == "bad_request", body
    assert error_of(s.request("POST", "/volumes", body=b"{not json"), 400)
    assert s.get("/volumes").json() == {"volumes": []}

    make_volume(s, "v", 8)
    assert error_of(s.get("/volumes/a.b"), 400)
    for path in ("/volumes/v/files/../../../etc/passwd", "/volumes/v/files/%2e%2e/x",
                 "/volumes/v/files//etc/passwd", "/volumes/v/files/a/../../x"):
        r = s.get(path)
        assert r.status in (400, 404), (path, r)
        assert b"root:" not in r.body
    assert error_of(s.request("PUT", "/volumes/v/files//etc/evil", body=b"x"), 400)
    # a symlink the kernel plants leads nowhere outside
    assert new_session(s, "k", [{"name": "v"}]).status == 201
    run_ok(s, "k", "import os\nos.symlink('/etc/passwd', '/volumes/v/link')\n"
           "os.symlink('/session', '/volumes/v/sess')")
    err = error_of(s.get("/volumes/v/files/link"), 400)
    assert "outside the volume" in err["message"]
    assert error_of(s.request("PUT", "/volumes/v/files/sess/input/x", body=b"x"), 400)
    # the absolute path codebox returns is taken back
    r = s.request("PUT", "/volumes/v/files//volumes/v/sub/f.txt", body=b"abs")
    assert r.status == 201 and r.json()["path"] == "/volumes/v/sub/f.txt"
    assert s.get("/volumes/v/files/sub/f.txt").body == b"abs"
    # bad "volumes" of a new session
    for volumes, code in (("v", 400), ([{"name": "../v"}], 400), ([{}], 400),
                          ([{"name": "v", "read_only": "yes"}], 400),
                          ([{"name": "v"}, {"name": "v"}], 400),
                          ([{"name": "v%d" % i} for i in range(5)], 400),
                          ([{"name": "missing"}], 404)):
        assert error_of(new_session(s, "bad", volumes), code), volumes
    assert [x["session_id"] for x in s.get("/sessions").json()["sessions"]] == ["k"]


def test_volumes_need_the_sandbox(server_factory):
    s = server_factory(env={"CODEBOX_SANDBOX": "none"})
    make_volume(s, "v", 4, token=None)
    err = error_of(new_session(s, "x", [{"name": "v"}], token=None), 403)
    assert "sandbox" in err["message"]


def test_mcp_create_session_with_volumes(server_factory):
    s = server_factory(env=ENV, token="tok-a")
    make_volume(s, "shared", 8)
    assert s.request("PUT", "/volumes/shared/files/notes.txt", body=b"from REST").status == 201
    call = mcp_client(s, {"Authorization": "Bearer tok-a"})
    res = call("create_session", {"session_id": "m", "volumes": [
        {"name": "shared", "read_only": True}]})
    d = ok(res)
    assert d["session_id"] == "m"
    assert d["volumes"] == [{"name": "shared", "path": "/volumes/shared", "read_only": True}]
    text = res["content"][0]["text"]
    assert "/volumes/shared (read-only)" in text and "'m'" in text
    run = ok(call("exec_code", {"session_id": "m", "code":
                                "print(open('/volumes/shared/notes.txt').read())\n"
                                "import errno\ntry:\n    open('/volumes/shared/w', 'w')\n"
                                "except OSError as e:\n    print(errno.errorcode[e.errno])"}))
    assert run["stdout"].splitlines() == ["from REST", "EROFS"]
    # what a model reads when it goes wrong
    text = error_text(call("create_session", {"session_id": "n", "volumes": [{"name": "nope"}]}))
    assert "no volume 'nope'" in text and "POST /volumes" in text
    text = error_text(call("create_session", {"session_id": "m"}))
    assert "destroy_session" in text
    text = error_text(call("create_session", {"volumes": [{"name": "../etc"}]}))
    assert "A-Z a-z 0-9 _ -" in text
    # bob's MCP session cannot mount alice's volume
    bob = mcp_client(s, {"Authorization": "Bearer tok-b"})
    assert "no volume 'shared'" in error_text(bob("create_session", {"volumes": [
        {"name": "shared"}]}))
    # a session made without an id gets one, and the volume read-write
    d = ok(call("create_session", {"volumes": [{"name": "shared"}]}))
    assert d["session_id"] and d["volumes"][0]["read_only"] is False
    assert s.delete("/volumes/shared").status == 409
