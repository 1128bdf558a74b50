"""End-to-end tests of the REST API of `codebox serve` against real ipykernel
and ijavascript kernels, following the external contract (CONTRACT.md, "REST API").

Most tests share one server (module fixture `srv`); tests that need special
settings start their own with `server_factory`. Every server is stopped with
SIGTERM at the end and must exit 0 leaving no kernel process behind."""
import base64
import hashlib
import json
import os
import re
import select
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import uuid

import pytest

from conftest import (BIN, FIXTURE_KERNELS, Server, descendants, errors_of, find_by_comm,
                      proc_alive, proc_cmdline, stream_of, wait_gone, wait_until_quiet)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FINAL = {"completed", "error"}
ALL_STATUSES = FINAL | {"queued", "running"}


# --------------------------------------------------------------------------
# helpers

def assert_error(r, status, code=None):
    """r is an error answer with the contract's shape {"error":{"code","message"}}."""
    assert r.status == status, r
    body = r.json()
    assert isinstance(body.get("error"), dict), body
    assert isinstance(body["error"].get("code"), str) and body["error"]["code"], body
    assert isinstance(body["error"].get("message"), str) and body["error"]["message"], body
    if code is not None:
        assert body["error"]["code"] == code, body
    return body


def create_session(srv, body=None, **kw):
    r = srv.post("/sessions", body or {}, **kw)
    assert r.status == 201, "%r\n%s" % (r, srv.log_tail())
    return r.json()


def create_session_short_lived(srv, body=None):
    """create_session on a server with a short idle timeout or TTL. Works
    around a BUG (the idle/TTL clock runs while the kernel starts, so a slow
    start under load ends the session before it is answered: 503): retries
    only that failure. The bug itself is test_kernel_start_does_not_count_as_idle."""
    for _ in range(3):
        r = srv.post("/sessions", body or {})
        if not (r.status == 503 and b"ended before its kernel started" in r.body):
            break
    assert r.status == 201, "%r\n%s" % (r, srv.log_tail())
    return r.json()


def submit(srv, sid, code, timeout=None, headers=None, **kw):
    body = {"session_id": sid, "code": code}
    if timeout is not None:
        body["timeout"] = timeout
    r = srv.post("/execute", body, headers=headers, **kw)
    assert r.status == 202, "%r\n%s" % (r, srv.log_tail())
    j = r.json()
    assert isinstance(j.get("request_id"), str) and j["request_id"], j
    assert j.get("status") in ALL_STATUSES, j
    return j["request_id"]


def results(srv, rid, wait=60, **kw):
    r = srv.get("/execute/%s/results?wait=%s" % (rid, wait), **kw)
    assert r.status == 200, "%r\n%s" % (r, srv.log_tail())
    j = r.json()
    assert j["request_id"] == rid
    assert j["status"] in FINAL, j
    return j


def run(srv, sid, code, timeout=None, headers=None, wait=60, **kw):
    return results(srv, submit(srv, sid, code, timeout=timeout, headers=headers, **kw),
                   wait=wait, **kw)


def out(srv, sid, code, **kw):
    """Runs code, asserts it completed, returns its stdout."""
    res = run(srv, sid, code, **kw)
    assert res["status"] == "completed", "%s\n--- server log ---\n%s" % (
        json.dumps(res)[:3000], srv.log_tail(40))
    return stream_of(res)


def kernel_pid(srv, sid, **kw):
    """(pid, starttime) on this host of the session's kernel process, which
    is remembered so that the server's teardown checks it is gone. The
    kernel names its main thread with a unique token (prctl PR_SET_NAME) and
    the token is looked up below the gateway: os.getpid() inside a sandbox
    with its own PID namespace is not the host's pid."""
    token = "cbk" + uuid.uuid4().hex[:12]
    res = run(srv, sid, "import ctypes\n"
                        "print(ctypes.CDLL(None).prctl(15, b'%s', 0, 0, 0))\n" % token, **kw)
    assert res["status"] == "completed" and stream_of(res) == "0\n", res
    found = find_by_comm(srv, token)
    assert len(found) == 1, "kernel of %s not found below the gateway: %s" % (sid, found)
    srv.kernels.add(found[0])
    return found[0]


def host_dir(srv, sid, *parts):
    """The session folder on this host (the API returns the kernel's view)."""
    return os.path.join(srv.state_dir, sid, *parts)


def kernel_view(srv, sid, code, **kw):
    """stdout of code run in the session, parsed as JSON."""
    return json.loads(out(srv, sid, "import json, os\n" + code, **kw))


def wait_status(srv, rid, wanted, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        r = srv.get("/execute/%s/status" % rid)
        assert r.status == 200, r
        st = r.json()["status"]
        if st in wanted:
            return st
        assert time.monotonic() < deadline, "status stayed %s, wanted %s" % (st, wanted)
        time.sleep(0.05)


def raw_http(port, data, read_timeout=10):
    """Sends raw bytes on a fresh socket and returns everything read back."""
    s = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    try:
        s.sendall(data)
        chunks = []
        while True:
            try:
                c = s.recv(65536)
            except socket.timeout:
                break
            if not c:
                break
            chunks.append(c)
        return b"".join(chunks)
    finally:
        s.close()


def status_of_raw(resp):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", resp)
    return int(m.group(1)) if m else None


# --------------------------------------------------------------------------
# fixtures

@pytest.fixture(scope="module")
def srv():
    s = Server()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def shared(srv):
    """One Python session shared by the tests that leave its kernel usable."""
    return create_session(srv)


@pytest.fixture
def fresh(srv):
    """A Python session of its own, deleted afterwards."""
    sess = create_session(srv)
    yield sess
    srv.delete("/sessions/" + sess["session_id"])


# --------------------------------------------------------------------------
# the full flow

def test_create_session_fields(srv, shared):
    sid = shared["session_id"]
    for key in ("session_id", "kernel", "workdir", "input_dir", "output_dir"):
        assert isinstance(shared.get(key), str) and shared[key], shared
    assert shared["kernel"] == "python3"
    assert re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", sid) and not sid.startswith(".")
    assert os.path.isabs(shared["workdir"]), shared
    assert shared["input_dir"] == os.path.join(shared["workdir"], "input")
    assert shared["output_dir"] == os.path.join(shared["workdir"], "output")
    # one folder per session under the state dir, with input/ and output/
    assert os.path.isdir(host_dir(srv, sid, "input")) and os.path.isdir(host_dir(srv, sid, "output"))
    # the paths are the ones kernel code can open; the kernel runs in workdir
    seen = kernel_view(srv, sid, "print(json.dumps([os.path.samefile(os.getcwd(), %r), "
                                 "os.path.isdir(%r), os.path.isdir(%r)]))"
                       % (shared["workdir"], shared["input_dir"], shared["output_dir"]))
    assert seen == [True, True, True], shared
    # listed, and GET /sessions/{id} answers the same session
    listed = srv.get("/sessions").json()["sessions"]
    mine = [s for s in listed if s["session_id"] == sid]
    assert len(mine) == 1, listed
    for key in ("session_id", "kernel", "age_seconds", "idle_seconds", "workdir", "status"):
        assert key in mine[0], mine[0]
    one = srv.get("/sessions/" + sid)
    assert one.status == 200, one
    assert one.json()["session_id"] == sid and one.json()["workdir"] == shared["workdir"]


def test_create_session_with_chosen_id(srv):
    sid = "my-Session_1.x"
    sess = create_session(srv, {"session_id": sid})
    assert sess["session_id"] == sid
    assert os.path.isdir(host_dir(srv, sid, "output"))
    # the same id again is refused, the first one stays usable
    r = srv.post("/sessions", {"session_id": sid})
    assert 400 <= r.status < 500, r
    assert_error(r, r.status)
    assert run(srv, sid, "print('ok')")["status"] == "completed"
    assert srv.delete("/sessions/" + sid).status == 204


def test_execute_print_status_and_results(srv, shared):
    sid = shared["session_id"]
    r = srv.post("/execute", {"session_id": sid, "code": "x = 42; print(x)"})
    assert r.status == 202, r
    j = r.json()
    rid = j["request_id"]
    assert isinstance(rid, str) and rid
    assert j["status"] in ("queued", "running"), j
    st = srv.get("/execute/%s/status" % rid)
    assert st.status == 200, st
    assert st.json()["request_id"] == rid and st.json()["status"] in ALL_STATUSES, st
    res = results(srv, rid, wait=30)
    assert res["status"] == "completed", res
    assert res["output"] == [{"type": "stream", "name": "stdout", "content": "42\n"}], res
    assert res["files"] == [] and res["new_artifacts"] == [], res
    assert isinstance(res["execution_count"], int) and res["execution_count"] >= 1, res
    assert isinstance(res["duration_ms"], int) and res["duration_ms"] >= 0, res
    st = srv.get("/execute/%s/status" % rid).json()
    assert st["request_id"] == rid and st["status"] == "completed", st
    # results stay available after they were fetched
    again = srv.get("/execute/%s/results" % rid)
    assert again.status == 200 and again.json()["output"] == res["output"], again


def test_state_persists_and_execute_result(srv, shared):
    sid = shared["session_id"]
    first = run(srv, sid, "y_state = 40 + 2")
    assert first["status"] == "completed" and first["output"] == [], first
    res = run(srv, sid, "y_state")
    assert res["status"] == "completed", res
    assert res["output"] == [{"type": "result", "content": "42",
                              "data": {"text/plain": "42"}}], res
    assert res["execution_count"] == first["execution_count"] + 1, (first, res)


def test_matplotlib_plot_gives_png(srv, shared):
    code = ("import matplotlib.pyplot as plt\n"
            "plt.plot([1, 3, 2])\nplt.show()\n")
    res = run(srv, shared["session_id"], code)
    assert res["status"] == "completed", res
    assert len(res["files"]) == 1, res
    assert isinstance(res["files"][0], str), res["files"]
    png = base64.b64decode(res["files"][0].strip(), validate=True)
    assert png[:8] == PNG_MAGIC and len(png) > 1000
    # the bytes are sent once: the display names the image by its index
    displays = [o for o in res["output"] if o["type"] == "display"]
    assert len(displays) == 1, res["output"]
    assert set(displays[0]) == {"type", "data", "file"}, displays[0]
    assert displays[0]["file"] == 0 and "image/png" not in displays[0]["data"], displays[0]
    assert isinstance(displays[0]["data"]["text/plain"], str), displays[0]


def test_exception_is_error(srv, shared):
    res = run(srv, shared["session_id"], "print('before')\n1/0\n")
    assert res["status"] == "error", res
    assert res["output"][0] == {"type": "stream", "name": "stdout", "content": "before\n"}
    errs = errors_of(res)
    assert len(errs) == 1, res
    assert errs[0]["ename"] == "ZeroDivisionError", errs
    assert "division by zero" in errs[0]["evalue"]
    assert isinstance(errs[0]["traceback"], list) and errs[0]["traceback"], errs
    # the session goes on
    assert out(srv, shared["session_id"], "print('still here')") == "still here\n"


def test_results_409_while_running(srv, shared):
    rid = submit(srv, shared["session_id"], "import time; time.sleep(3)")
    wait_status(srv, rid, {"running"})
    r = srv.get("/execute/%s/results" % rid)
    assert_error(r, 409)
    assert r.json().get("status") == "running", r
    assert srv.get("/execute/%s/status" % rid).json()["status"] == "running"
    assert results(srv, rid, wait=30)["status"] == "completed"


@pytest.mark.alone
def test_long_poll_returns_when_finished(srv, shared):
    rid = submit(srv, shared["session_id"], "import time; time.sleep(1.5); print('done')")
    t0 = time.monotonic()
    res = results(srv, rid, wait=30)
    elapsed = time.monotonic() - t0
    assert res["status"] == "completed" and stream_of(res) == "done\n", res
    assert elapsed < 4, "the long poll took %.1fs for a 1.5s execution" % elapsed


@pytest.mark.alone
def test_long_poll_that_ends_first_is_409(srv, shared):
    rid = submit(srv, shared["session_id"], "import time; time.sleep(3)")
    t0 = time.monotonic()
    r = srv.get("/execute/%s/results?wait=1" % rid)
    elapsed = time.monotonic() - t0
    assert_error(r, 409)
    assert r.json()["status"] in ("queued", "running"), r
    assert 0.8 < elapsed < 2.5, elapsed
    assert results(srv, rid, wait=30)["status"] == "completed"


def test_cancel_running(srv, fresh):
    sid = fresh["session_id"]
    run(srv, sid, "keep = 'kept'")
    rid = submit(srv, sid, "import time\nfor i in range(300):\n    time.sleep(0.1)\n")
    wait_status(srv, rid, {"running"})
    time.sleep(0.3)
    t0 = time.monotonic()
    r = srv.post("/execute/%s/cancel" % rid)
    assert r.status in (200, 202), r
    res = results(srv, rid, wait=30)
    assert (res["status"], res["reason"]) == ("error", "cancelled"), res
    assert res["error"]["reason"] == "cancelled", res
    assert time.monotonic() - t0 < 10
    assert srv.get("/execute/%s/status" % rid).json() == {"request_id": rid, "status": "error", "reason": "cancelled"}
    assert out(srv, sid, "print(keep)") == "kept\n"


def test_cancel_queued(srv, fresh):
    sid = fresh["session_id"]
    first = submit(srv, sid, "import time; time.sleep(2); print('first')")
    second = submit(srv, sid, "import time; time.sleep(2); print('second ran')")
    third = submit(srv, sid, "print('third')")
    wait_status(srv, first, {"running"})
    assert srv.get("/execute/%s/status" % second).json()["status"] == "queued"
    r = srv.post("/execute/%s/cancel" % second)
    assert r.status in (200, 202), r
    assert wait_status(srv, second, FINAL, timeout=5) == "error"
    res1 = results(srv, first)
    assert res1["status"] == "completed" and stream_of(res1) == "first\n", res1
    res2 = results(srv, second)
    assert (res2["status"], res2["reason"]) == ("error", "cancelled") and "second ran" not in stream_of(res2), res2
    res3 = results(srv, third)
    assert res3["status"] == "completed" and stream_of(res3) == "third\n", res3


def test_delete_session(srv):
    sess = create_session(srv)
    sid = sess["session_id"]
    pid = kernel_pid(srv, sid)
    r = srv.delete("/sessions/" + sid)
    assert r.status == 204, r
    assert r.body == b""
    assert not os.path.exists(host_dir(srv, sid))
    assert_error(srv.get("/sessions/" + sid), 404)
    assert_error(srv.post("/execute", {"session_id": sid, "code": "1"}), 404)
    assert_error(srv.delete("/sessions/" + sid), 404)
    assert sid not in [s["session_id"] for s in srv.get("/sessions").json()["sessions"]]
    assert not wait_gone([pid], timeout=10), "the kernel outlived DELETE"


def test_delete_while_running_releases_waiters(srv):
    sess = create_session(srv)
    sid = sess["session_id"]
    pid = kernel_pid(srv, sid)
    rid = submit(srv, sid, "import time; time.sleep(60)")
    queued = submit(srv, sid, "print('never')")
    wait_status(srv, rid, {"running"})
    answers = {}

    def long_poll(name, r):
        answers[name] = srv.get("/execute/%s/results?wait=60" % r, timeout=90)

    threads = [threading.Thread(target=long_poll, args=(n, r))
               for n, r in (("running", rid), ("queued", queued))]
    for t in threads:
        t.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    assert srv.delete("/sessions/" + sid).status == 204
    for t in threads:
        t.join(timeout=15)
        assert not t.is_alive(), "a long poll was not released by DELETE"
    assert time.monotonic() - t0 < 15
    for name in ("running", "queued"):
        r = answers[name]
        assert r.status in (200, 404), (name, r)
        if r.status == 200:
            assert r.json()["status"] == "error", (name, r.json())
            assert "never" not in stream_of(r.json())
    assert not wait_gone([pid], timeout=10)


@pytest.mark.alone
def test_sessions_run_in_parallel(srv, shared, fresh):
    slow = submit(srv, fresh["session_id"], "import time; time.sleep(3)")
    wait_status(srv, slow, {"running"})
    t0 = time.monotonic()
    assert out(srv, shared["session_id"], "print('quick')") == "quick\n"
    assert time.monotonic() - t0 < 2, "one session's execution waited for another's"
    assert results(srv, slow)["status"] == "completed"


def test_output_order_streams_and_unicode(srv, shared):
    code = ("import sys\n"
            "from IPython.display import display\n"
            "print('a h\u00e9llo \u2713')\n"
            "sys.stdout.flush()\n"
            "display({'text/plain': 'mid'}, raw=True)\n"
            "print('to err', file=sys.stderr)\n"
            "sys.stderr.flush()\n"
            "print('b')\n")
    res = run(srv, shared["session_id"], code)
    assert res["status"] == "completed", res
    assert res["output"] == [
        {"type": "stream", "name": "stdout", "content": "a h\u00e9llo \u2713\n"},
        {"type": "display", "data": {"text/plain": "mid"}},
        {"type": "stream", "name": "stderr", "content": "to err\n"},
        {"type": "stream", "name": "stdout", "content": "b\n"}], res["output"]


def _limit_values(session_json):
    """Every number in GET /sessions/{id} beyond the listing's fields."""
    nums = []

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            nums.append(v)
    walk({k: v for k, v in session_json.items() if k not in ("age_seconds", "idle_seconds")})
    return nums


def test_session_limits_and_override_headers(srv):
    # the shared server runs with the defaults (ttl 604800, idle 86400, exec 300)
    sess = create_session(srv, headers={"X-Codebox-Session-Ttl": "1234",
                                        "X-Codebox-Idle-Timeout": "567"})
    sid = sess["session_id"]
    try:
        one = srv.get("/sessions/" + sid).json()
        nums = _limit_values(one)
        assert 1234 in nums and 567 in nums and 300 in nums, one
        assert 604800 not in nums and 86400 not in nums, one
    finally:
        srv.delete("/sessions/" + sid)
    # a larger value than the server's is clamped to the server's
    sess = create_session(srv, headers={"X-Codebox-Session-Ttl": "999999"})
    try:
        nums = _limit_values(srv.get("/sessions/" + sess["session_id"]).json())
        assert 604800 in nums and 999999 not in nums, nums
    finally:
        srv.delete("/sessions/" + sess["session_id"])
    for name in ("X-Codebox-Session-Ttl", "X-Codebox-Idle-Timeout"):
        assert_error(srv.post("/sessions", {}, headers={name: "soon"}), 400)


def test_queue_in_order(srv, shared):
    sid = shared["session_id"]
    run(srv, sid, "order = []")
    code = "import time; time.sleep(0.3); order.append(%d); print(%d)"
    rids = [submit(srv, sid, code % (i, i)) for i in range(3)]
    res = [results(srv, rid) for rid in rids]
    for i, r in enumerate(res):
        assert r["status"] == "completed" and stream_of(r) == "%d\n" % i, r
    counts = [r["execution_count"] for r in res]
    assert counts == sorted(counts) and len(set(counts)) == 3, counts
    assert out(srv, sid, "print(order)") == "[0, 1, 2]\n"


def test_execution_right_after_an_error_runs(srv, fresh):
    """An execution after a failed one runs (ipykernel must not abort it as
    with stop_on_error: the gateway queues by itself). The failing cell keeps the
    kernel's event loop busy for 0.5 s after its reply (as a slow kernel or
    a loaded machine does), which makes the race deterministic."""
    sid = fresh["session_id"]
    failing = ("import asyncio, time\n"
               "asyncio.get_event_loop().call_soon(time.sleep, 0.5)\n"
               "1/0\n")
    for _ in range(2):
        first = submit(srv, sid, failing)
        second = submit(srv, sid, "print('second ran')")     # queued behind it
        assert results(srv, first)["status"] == "error"
        res = results(srv, second)
        assert res["status"] == "completed" and stream_of(res) == "second ran\n", res
        assert results(srv, submit(srv, sid, failing))["status"] == "error"
        assert out(srv, sid, "print('next ran')") == "next ran\n"    # sent after it


# --------------------------------------------------------------------------
# artifacts

def test_artifacts(srv, fresh):
    sid, out_dir = fresh["session_id"], fresh["output_dir"]
    host_out = host_dir(srv, sid, "output")
    code = ("import os, base64\n"
            "os.makedirs('output/sub', exist_ok=True)\n"
            "open('output/a.txt', 'w').write('hello')\n"
            "png = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==')\n"
            "open('output/sub/plot.png', 'wb').write(png)\n")
    res = run(srv, sid, code)
    assert res["status"] == "completed", res
    arts = sorted(res["new_artifacts"], key=lambda a: a["path"])
    assert len(arts) == 2, res["new_artifacts"]
    txt, png = arts
    png_size = os.path.getsize(os.path.join(host_out, "sub", "plot.png"))
    assert txt["path"] == os.path.join(out_dir, "a.txt"), txt
    assert png["path"] == os.path.join(out_dir, "sub", "plot.png"), png
    for a in arts:
        assert os.path.isabs(a["path"]) and a["path"].startswith(out_dir + os.sep), a
    assert txt["filename"] == "a.txt", txt
    assert png["filename"] in ("plot.png", "sub/plot.png"), png
    assert txt["extension"].lstrip(".") == "txt" and png["extension"].lstrip(".") == "png"
    assert txt["size"] == 5 and png["size"] == png_size, arts
    assert txt["mime"].startswith("text/plain") and png["mime"] == "image/png", arts
    # the paths are the kernel's view of the files
    assert kernel_view(srv, sid, "print(json.dumps([open(%r).read(), os.path.getsize(%r)]))"
                       % (txt["path"], png["path"])) == ["hello", png_size]

    listed = srv.get("/sessions/%s/artifacts" % sid)
    assert listed.status == 200, listed
    listed = sorted(listed.json()["artifacts"], key=lambda a: a["path"])
    assert [a["path"] for a in listed] == [txt["path"], png["path"]], listed
    for a in listed:
        for key in ("filename", "path", "extension", "size", "mime"):
            assert key in a, a

    nothing = run(srv, sid, "print('no files')")
    assert nothing["status"] == "completed" and nothing["new_artifacts"] == [], nothing

    again = run(srv, sid, "open('output/a.txt', 'w').write('changed!')")
    assert again["status"] == "completed", again
    assert [(a["path"], a["size"]) for a in again["new_artifacts"]] == [(txt["path"], 8)], again


def test_new_artifacts_are_what_changed_during_the_execution(srv, fresh):
    """An execution's new artifacts are the files that appeared or changed
    during it (the contract's words): not a file uploaded before it, nor
    one kernel code wrote between two executions (a thread)."""
    sid = fresh["session_id"]
    vis = fresh["output_dir"]
    first = run(srv, sid, "open('output/first.txt', 'w').write('1')")
    assert [a["path"] for a in first["new_artifacts"]] == [vis + "/first.txt"], first
    # a file uploaded between two executions is nobody's new artifact
    r = srv.request("PUT", "/sessions/%s/files/output/uploaded.txt" % sid, body=b"from the user")
    assert r.status == 201, r
    quiet = run(srv, sid, "print('quiet')")
    assert quiet["status"] == "completed" and quiet["new_artifacts"] == [], quiet
    # a file the code changes is new again
    again = run(srv, sid, "open('output/first.txt', 'w').write('22')")
    assert [(a["path"], a["size"]) for a in again["new_artifacts"]] == [(vis + "/first.txt", 2)]
    # what kernel code writes after its cell ended (a thread that waits for
    # a file the test uploads once the cell's answer is in) appeared during
    # no execution
    late = run(srv, sid, "import os, threading, time\n"
                         "def later():\n"
                         "    while not os.path.exists('input/go'):\n"
                         "        time.sleep(0.02)\n"
                         "    open('output/late.txt', 'w').write('late')\n"
                         "threading.Thread(target=later, daemon=True).start()")
    assert late["new_artifacts"] == [], late
    r = srv.request("PUT", "/sessions/%s/files/input/go" % sid, body=b"go")
    assert r.status == 201, r
    deadline = time.time() + 20
    while time.time() < deadline and not os.path.exists(
            os.path.join(host_dir(srv, sid, "output"), "late.txt")):
        time.sleep(0.1)
    after = run(srv, sid, "print('after')")
    assert after["status"] == "completed" and after["new_artifacts"] == [], after


def test_new_artifacts_seen_without_a_walk_of_every_execution(srv, fresh):
    """The gateway walks a session folder again only when inotify says
    something in it changed (gw_changes): every kind of change during an
    execution is still its new artifact, and what the walk skips is not."""
    sid = fresh["session_id"]
    vis = fresh["workdir"]

    def new(code):
        return new_artifacts_of(srv, sid, vis, code)

    assert new("f = open('output/kept.txt', 'w')") == [("output/kept.txt", 0)]
    assert new("x = 1") == []
    # a write through a file opened by an earlier execution
    assert new("f.write('abc'); f.flush()") == [("output/kept.txt", 3)]
    # a new folder, and a file three levels under it
    assert new("import os\nos.makedirs('output/a/b/c')\n"
               "open('output/a/b/c/deep.txt', 'w').write('d')") == [("output/a/b/c/deep.txt", 1)]
    assert new("open('output/a/b/c/deep.txt', 'a').write('e')") == [("output/a/b/c/deep.txt", 2)]
    # only the modification time
    assert new("os.utime('output/kept.txt', (1, 1))") == [("output/kept.txt", 3)]
    # a rename
    assert new("os.rename('output/kept.txt', 'output/moved.txt')") == [("output/moved.txt", 3)]
    # hidden folders and input/ are not walked; the session folder is
    assert new("os.makedirs('.stage/d', exist_ok=True)\n"
               "open('.stage/d/f.txt', 'w').write('ff')\n"
               "open('input/in.txt', 'w').write('i')") == []
    assert new("open('top.txt', 'w').write('t')") == [("top.txt", 1)]
    # a folder moved in from a hidden one brings its files with it
    assert new("os.rename('.stage/d', 'output/d')") == [("output/d/f.txt", 2)]
    # a deleted file is no artifact, and the next change is still seen
    assert new("os.remove('top.txt')") == []
    assert new("open('output/moved.txt', 'w').write('12345')") == [("output/moved.txt", 5)]


def new_artifacts_of(srv, sid, vis, code):
    """(path under the session folder, size) of each new artifact of code."""
    res = run(srv, sid, code)
    assert res["status"] == "completed", res
    return sorted((a["path"][len(vis) + 1:], a["size"]) for a in res["new_artifacts"])


@pytest.mark.alone      # walks of hundreds of folders: under ASan on a loaded
                        # machine one can pass its 200 ms budget and be cut
def test_new_artifacts_past_the_watch_bound(srv, fresh):
    """Past the folders one session's tracker watches at once (256) the
    folder is walked every time, as before gw_changes: still right."""
    sid, vis = fresh["session_id"], fresh["workdir"]
    assert new_artifacts_of(srv, sid, vis, "import os\nfor i in range(257): "
                                          "os.makedirs('output/many/%d' % i)") == []
    assert new_artifacts_of(srv, sid, vis, "x = 2") == []
    assert new_artifacts_of(srv, sid, vis, "open('output/many/256/last.txt', 'w').write('L')") \
        == [("output/many/256/last.txt", 1)], srv.log_tail(20)
    assert new_artifacts_of(srv, sid, vis, "x = 3") == []


# --------------------------------------------------------------------------
# files

def test_upload_read_download(srv, fresh):
    sid = fresh["session_id"]
    data = b"a,b\n1,2\n" + bytes(range(256)) + os.urandom(70000)
    r = srv.request("PUT", "/sessions/%s/files/input/data.csv" % sid, body=data,
                    headers={"Content-Type": "application/octet-stream"})
    assert r.status == 201, r
    res = run(srv, sid, "import hashlib, os\n"
                        "print(os.getcwd())\n"
                        "print(hashlib.sha256(open('input/data.csv','rb').read()).hexdigest())\n")
    assert res["status"] == "completed", res
    assert stream_of(res) == "%s\n%s\n" % (fresh["workdir"], hashlib.sha256(data).hexdigest())
    got = srv.get("/sessions/%s/files/input/data.csv" % sid)
    assert got.status == 200, got
    assert got.body == data
    # output/ takes uploads too; subfolders are made
    r = srv.request("PUT", "/sessions/%s/files/output/deep/er/b.bin" % sid, body=b"\x00\x01")
    assert r.status == 201, r
    assert srv.get("/sessions/%s/files/output/deep/er/b.bin" % sid).body == b"\x00\x01"
    # a missing file is 404
    assert_error(srv.get("/sessions/%s/files/input/nope.csv" % sid), 404)


@pytest.mark.parametrize("path", ["data.csv", "other/data.csv", "inputx/a", "outputs/a",
                                  "input", "input/", ".env"])
def test_upload_outside_input_output_is_400(srv, shared, path):
    sid = shared["session_id"]
    r = srv.request("PUT", "/sessions/%s/files/%s" % (sid, path), body=b"x")
    assert_error(r, 400)
    target = host_dir(srv, sid, path)
    assert not os.path.isfile(target), target


# (name as sent in the URL, as an MCP client would send it or None when JSON
# cannot carry it, the rule the answer names)
BAD_NAMES = [
    ("input/caf%E9.txt", None, "UTF-8"),                      # Latin-1
    ("input/%FF%FE", None, "UTF-8"),
    ("input/a%C0%AFb", None, "UTF-8"),                        # an overlong '/'
    ("input/a%01b", "input/a\x01b", "control"),
    ("input/a%C2%85b", "input/a\x85b", "control"),           # NEL, a C1 control
    ("input/" + "n" * 300, "input/" + "n" * 300, "255 bytes"),
    ("input/" + "%C3%A9" * 128, "input/" + "\u00e9" * 128, "255 bytes"),     # 256 bytes
    ("input/" + "/".join(["d" * 200] * 6), "input/" + "/".join(["d" * 200] * 6), "1024 bytes"),
]


@pytest.mark.parametrize("sent, mcp_name, rule", BAD_NAMES,
                         ids=["latin1", "ff-fe", "overlong", "c0", "c1", "long-name",
                              "long-utf8-name", "long-path"])
def test_bad_upload_names_are_400_naming_the_rule(srv, shared, sent, mcp_name, rule):
    """A name that is not UTF-8, holds a control character, or is longer
    than a file system takes is a 400 that says which rule; MCP's
    write_file refuses it with the same sentence, and nothing is written."""
    from conftest import error_text, mcp_client
    sid = shared["session_id"]
    before = sorted(os.listdir(host_dir(srv, sid, "input")))
    body = assert_error(srv.request("PUT", "/sessions/%s/files/%s" % (sid, sent), body=b"x"),
                        400, "invalid_path")
    assert rule in body["error"]["message"], body
    assert_error(srv.get("/sessions/%s/files/%s" % (sid, sent)), 400, "invalid_path")
    if mcp_name is not None:
        call = mcp_client(srv)
        text = error_text(call("write_file", {"session_id": sid, "path": mcp_name,
                                              "content": "x"}))
        assert rule in text, text
    assert sorted(os.listdir(host_dir(srv, sid, "input"))) == before
    # the longest names that are allowed still are
    if rule == "255 bytes":
        ok = "input/" + ("n" * 255 if "n" in sent else "\u00e9" * 127)
        r = srv.request("PUT", "/sessions/%s/files/%s" % (sid, urllib.parse.quote(ok)),
                        body=b"y")
        assert r.status == 201, r
        assert r.json()["path"].endswith(ok), r.json()


def test_folders_an_upload_makes_are_the_kernels(srv, fresh):
    """The folders a PUT (or MCP write_file) makes, and the file, belong to
    the user kernels run as, as input/ does: kernel code writes beside an
    upload."""
    from conftest import mcp_client, ok as tool_ok
    sid = fresh["session_id"]
    r = srv.request("PUT", "/sessions/%s/files/input/deep/er/f.txt" % sid, body=b"uploaded")
    assert r.status == 201, r
    tool_ok(mcp_client(srv)("write_file", {"session_id": sid, "path": "output/m/n/w.txt",
                                           "content": "written"}))
    got = out(srv, sid, "import os\n"
                        "open('input/deep/er/new.txt', 'w').write('k')\n"
                        "os.mkdir('input/deep/er/sub')\n"
                        "open('input/deep/f2.txt', 'w').write('k')\n"
                        "open('input/deep/er/f.txt', 'a').write('+k')\n"
                        "open('output/m/n/new.txt', 'w').write('k')\n"
                        "print(open('input/deep/er/f.txt').read())\n"
                        "print(sorted(os.listdir('input/deep/er')))\n")
    assert got == "uploaded+k\n['f.txt', 'new.txt', 'sub']\n", got
    owner = os.stat(host_dir(srv, sid, "input"))
    for part in ("input/deep", "input/deep/er", "input/deep/er/f.txt", "output/m",
                 "output/m/n", "output/m/n/w.txt"):
        st = os.stat(host_dir(srv, sid, part))
        assert (st.st_uid, st.st_gid) == (owner.st_uid, owner.st_gid), part


TRAVERSALS = ["../x", "input/../../x", "input/../../../x", "%2e%2e/x", "input/%2e%2e/%2e%2e/x",
              "input%2f..%2f..%2fx", "input/..%2f..%2fx", "%2fx", "/x", "//x",
              "input/%2e%2e%2f%2e%2e%2fx"]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_never_escapes(srv, shared, path):
    sid = shared["session_id"]
    # a secret next to the session folders and one above the state dir
    secret = "secret-" + uuid.uuid4().hex
    for where in (srv.state_dir, srv.tmp):
        with open(os.path.join(where, "x"), "w") as f:
            f.write(secret)
    try:
        got = srv.get("/sessions/%s/files/%s" % (sid, path))
        assert got.status in (400, 404), got
        assert secret.encode() not in got.body
        put = srv.request("PUT", "/sessions/%s/files/%s" % (sid, path), body=b"PWNED")
        assert put.status in (400, 404), put
        for where in (srv.state_dir, srv.tmp, "/x"):
            p = os.path.join(where, "x")
            if os.path.exists(p):
                assert open(p, "rb").read() != b"PWNED", p
    finally:
        for where in (srv.state_dir, srv.tmp):
            os.unlink(os.path.join(where, "x"))


def test_traversal_raw_request_line(srv, shared):
    """Paths sent exactly as written (no client-side normalisation)."""
    sid = shared["session_id"]
    for path in ("/sessions/%s/files/input/../../../../etc/passwd" % sid,
                 "/sessions/%s/files/..%%2f..%%2f..%%2f..%%2fetc%%2fpasswd" % sid,
                 "/sessions/%s/files//etc/passwd" % sid,
                 "/sessions/%s/files/%%2fetc%%2fpasswd" % sid,
                 "/sessions/../../etc/passwd",
                 "/sessions/..%2f..%2fetc/files/passwd"):
        resp = raw_http(srv.port, ("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                                   % path).encode())
        st = status_of_raw(resp)
        assert st in (400, 404), (path, resp[:300])
        assert b"root:" not in resp, path


def test_symlinks_are_not_followed(srv, fresh):
    sid = fresh["session_id"]
    outside = os.path.join(srv.tmp, "outside-" + uuid.uuid4().hex)
    os.mkdir(outside)
    res = run(srv, sid, "import os\n"
                        "os.symlink('/etc/passwd', 'output/link')\n"
                        "os.symlink('/etc/passwd', 'input/link')\n"
                        "os.symlink('/etc', 'input/etcdir')\n"
                        "os.symlink(%r, 'output/dir')\n" % outside)
    assert res["status"] == "completed", res
    for path in ("output/link", "input/link", "input/etcdir/passwd"):
        got = srv.get("/sessions/%s/files/%s" % (sid, path))
        assert got.status in (400, 404), (path, got)
        assert b"root:" not in got.body, path
    put = srv.request("PUT", "/sessions/%s/files/output/dir/evil" % sid, body=b"PWNED")
    assert put.status in (400, 404), put
    assert os.listdir(outside) == []
    put = srv.request("PUT", "/sessions/%s/files/output/link" % sid, body=b"PWNED")
    assert put.status in (400, 404, 201), put
    assert b"PWNED" not in open("/etc/passwd", "rb").read()
    # the artifact list does not leak the link's target either
    arts = srv.get("/sessions/%s/artifacts" % sid).json()["artifacts"]
    assert all(a["path"].startswith(fresh["output_dir"] + os.sep) for a in arts), arts


# --------------------------------------------------------------------------
# faults

def test_timeout_interrupts_and_keeps_state(srv, fresh):
    sid = fresh["session_id"]
    run(srv, sid, "keep = 7")
    t0 = time.monotonic()
    res = run(srv, sid, "while True:\n    pass\n", timeout=2)
    elapsed = time.monotonic() - t0
    assert (res["status"], res["reason"]) == ("error", "timeout"), res
    assert res["error"]["ename"] == "TimeoutError", res
    assert 1.5 < elapsed < 15, elapsed
    assert res.get("kernel_restarted") in (False, None), res
    assert out(srv, sid, "print(keep)") == "7\n"


def test_timeout_with_swallowed_interrupt_restarts_kernel(srv, fresh):
    sid = fresh["session_id"]
    run(srv, sid, "keep = 7")
    code = ("import time\n"
            "while True:\n"
            "    try:\n"
            "        time.sleep(0.05)\n"
            "    except KeyboardInterrupt:\n"
            "        pass\n")
    t0 = time.monotonic()
    res = run(srv, sid, code, timeout=2)
    assert (res["status"], res["reason"]) == ("error", "timeout"), res
    assert res["error"]["ename"] == "TimeoutError", res
    assert res["kernel_restarted"] is True, res
    assert time.monotonic() - t0 < 30
    lost = run(srv, sid, "print(keep)")
    assert lost["status"] == "error", lost
    assert errors_of(lost)[0]["ename"] == "NameError", lost
    assert out(srv, sid, "print(6*7)") == "42\n"


def test_kernel_death_is_error_then_restart(srv, fresh):
    sid = fresh["session_id"]
    old = kernel_pid(srv, sid)
    res = run(srv, sid, "import os; os._exit(3)")
    assert res["status"] == "error", res
    errs = errors_of(res)
    assert len(errs) == 1, res
    text = (errs[0]["ename"] + " " + errs[0]["evalue"] + " " + " ".join(errs[0]["traceback"]))
    assert re.search(r"died|dead|exited", text, re.I), errs
    assert res.get("kernel_restarted") is True, res
    assert out(srv, sid, "print('alive')") == "alive\n"
    new = kernel_pid(srv, sid)
    assert new != old
    assert not proc_alive(old)


def test_huge_output_is_capped(srv, fresh):
    code = ("import sys\n"
            "chunk = 'x' * (1024 * 1024)\n"
            "for i in range(20):\n"
            "    sys.stdout.write(chunk)\n"
            "    sys.stdout.flush()\n"
            "print('END')\n")
    t0 = time.monotonic()
    r = srv.get("/execute/%s/results?wait=120" % submit(srv, fresh["session_id"], code))
    assert r.status == 200, r
    res = r.json()
    assert res["status"] == "completed", {k: v for k, v in res.items() if k != "output"}
    assert res.get("truncated") is True, {k: v for k, v in res.items() if k != "output"}
    text = "".join(o.get("content", "") for o in res["output"])
    assert len(text.encode()) <= 1048576 + 4096, len(text)
    assert len(text) >= 1048576 - 4096, len(text)
    assert re.search(r"truncat", text, re.I), text[-300:]
    assert len(r.body) < 3 * 1048576
    assert time.monotonic() - t0 < 60
    # the session goes on
    assert out(srv, fresh["session_id"], "print('after')") == "after\n"


@pytest.mark.parametrize("route", ["/sessions", "/execute"])
@pytest.mark.parametrize("body", [b"{not json", b'{"session_id": "a",', b"\xff\xfe", b"[1, 2"])
def test_invalid_json_is_400(srv, route, body):
    r = srv.request("POST", route, body=body, headers={"Content-Type": "application/json"})
    assert_error(r, 400)


@pytest.mark.parametrize("body", [b"[]", b"42", b'"str"', b'{"session_id": 5, "code": "1"}',
                                  b'{"session_id": "x"}', b'{"code": "1", "timeout": 0}'])
def test_wrong_execute_body_is_400(srv, body):
    assert_error(srv.request("POST", "/execute", body=body), 400)


def test_execute_without_a_session_makes_one(srv):
    """codebox-ai's client posts code without a session_id: a new session
    runs it, and the answer names the session for the calls that follow."""
    r = srv.post("/execute", {"code": "x = 6 * 7\nprint(x)"})
    assert r.status == 202, r.text
    body = r.json()
    sid = body["session_id"]
    assert sid and body["status"] == "queued"
    res = srv.get("/execute/%s/results?wait=60" % body["request_id"]).json()
    assert res["status"] == "completed" and stream_of(res) == "42\n", res
    assert out(srv, sid, "print(x + 1)") == "43\n"
    assert any(x["session_id"] == sid for x in srv.get("/sessions").json()["sessions"])
    # the language asked for picks the kernel
    r = srv.post("/execute", {"code": "console.log(1 + 1)", "language": "javascript"})
    assert r.status == 202, r.text
    res = srv.get("/execute/%s/results?wait=60" % r.json()["request_id"]).json()
    assert stream_of(res) == "2\n", res
    # an unknown kernel is a clear error, and no session is left behind
    before = len(srv.get("/sessions").json()["sessions"])
    r = srv.post("/execute", {"code": "1", "kernel": "nosuch"})
    assert r.status in (400, 404), r.text
    assert len(srv.get("/sessions").json()["sessions"]) == before


@pytest.mark.parametrize("sid", ["../x", "..%2fx", "%2e%2e%2fx", "a/b", "x" * 65, ".x", "..",
                                 ".", "", "a b", "a\x00b", "é", "a\\b"])
def test_bad_session_ids_are_400(srv, sid):
    def entries():
        return ({e for e in os.listdir(srv.state_dir) if not e.startswith(".pool")},
                set(os.listdir(srv.tmp)))
    before = entries()
    r = srv.post("/sessions", {"session_id": sid})
    assert_error(r, 400)
    assert entries() == before


def test_session_id_of_64_chars_is_fine(srv):
    sid = "a" * 64
    sess = create_session(srv, {"session_id": sid})
    assert sess["session_id"] == sid
    assert srv.delete("/sessions/" + sid).status == 204


def read_response(s, timeout=10):
    """Reads one HTTP response from socket s: the head and, when it names
    one, Content-Length bytes of body (or until the server closes)."""
    s.settimeout(timeout)
    got = b""
    while True:
        head_end = got.find(b"\r\n\r\n")
        if head_end >= 0:
            m = re.search(rb"(?im)^content-length:\s*(\d+)", got[:head_end])
            if m and len(got) >= head_end + 4 + int(m.group(1)):
                return got
        try:
            c = s.recv(65536)
        except OSError:
            return got
        if not c:
            return got
        got += c


def send_big(port, head, body_chunks):
    """Sends head, then the body chunk by chunk, stopping as soon as the
    server answers or closes; returns the response read (b"" if none)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(head)
        for chunk in body_chunks:
            if select.select([s], [], [], 0)[0]:
                break       # answered (or closed) early
            try:
                s.sendall(chunk)
            except OSError:
                break       # the server stopped reading: its answer may be waiting
        return read_response(s)
    finally:
        s.close()


def test_body_of_80mb_is_413(srv):
    total = 80 * 1024 * 1024
    head = ("POST /execute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % total).encode()
    block = b"a" * (1 << 20)
    resp = send_big(srv.port, head, (block for _ in range(total >> 20)))
    assert status_of_raw(resp) == 413, resp[:300]
    body = resp[resp.find(b"\r\n\r\n") + 4:]
    if body:
        assert b'"error"' in body, body[:300]
    assert srv.get("/healthz").status == 200


def test_chunked_body_of_80mb_is_413(srv):
    head = (b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"100000\r\n" + b" " * 0x100000 + b"\r\n"
    chunks = [chunk] * 80 + [b"2\r\n{}\r\n0\r\n\r\n"]
    resp = send_big(srv.port, head, chunks)
    assert status_of_raw(resp) == 413, resp[:300]
    assert srv.get("/healthz").status == 200


def test_unknown_session_is_404(srv):
    for method, path, body in (("GET", "/sessions/nope-nope", None),
                               ("DELETE", "/sessions/nope-nope", None),
                               ("GET", "/sessions/nope-nope/artifacts", None),
                               ("GET", "/sessions/nope-nope/files/input/a", None),
                               ("PUT", "/sessions/nope-nope/files/input/a", b"x"),
                               ("POST", "/execute", {"session_id": "nope-nope", "code": "1"})):
        assert_error(srv.request(method, path, body=body), 404)


def test_unknown_request_is_404(srv):
    rid = str(uuid.uuid4())
    assert_error(srv.get("/execute/%s/status" % rid), 404)
    assert_error(srv.get("/execute/%s/results" % rid), 404)
    assert_error(srv.get("/execute/%s/results?wait=5" % rid), 404)
    assert_error(srv.post("/execute/%s/cancel" % rid), 404)


def test_unknown_route_is_404(srv):
    assert_error(srv.get("/nope"), 404)


def test_slow_client_does_not_block(srv, shared):
    socks = []
    try:
        for part in (b"POST /execute HTTP/1.1\r\nHost: localhost\r\nContent-Length: 200\r\n\r\n{\"ses",
                     b"GET /heal",
                     b"PUT /sessions/%s/files/input/slow HTTP/1.1\r\nHost: localhost\r\n"
                     b"Content-Length: 1000000\r\n\r\nabc" % shared["session_id"].encode()):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
            s.sendall(part)
            socks.append(s)
        time.sleep(0.2)
        t0 = time.monotonic()
        assert srv.get("/healthz", timeout=5).status == 200
        res = run(srv, shared["session_id"], "print('not blocked')", timeout=10)
        assert stream_of(res) == "not blocked\n", res
        assert time.monotonic() - t0 < 5
    finally:
        for s in socks:
            s.close()


# --------------------------------------------------------------------------
# per-request overrides

def test_exec_timeout_header_clamps(srv, fresh):
    sid = fresh["session_id"]
    t0 = time.monotonic()
    res = run(srv, sid, "while True:\n    pass\n", timeout=100,
              headers={"X-Codebox-Exec-Timeout": "1"})
    elapsed = time.monotonic() - t0
    assert (res["status"], res["reason"]) == ("error", "timeout"), res
    assert res["error"]["ename"] == "TimeoutError", res
    assert elapsed < 8, elapsed
    assert out(srv, sid, "print(1)") == "1\n"


@pytest.mark.parametrize("value", ["abc", "-1", "0", "1.5", "10abc", "99999999999999999999999"])
def test_malformed_exec_timeout_header_is_400(srv, shared, value):
    r = srv.post("/execute", {"session_id": shared["session_id"], "code": "print('ran')"},
                 headers={"X-Codebox-Exec-Timeout": value})
    assert_error(r, 400)


# --------------------------------------------------------------------------
# kernelspecs, health, metrics

def test_kernelspecs(srv):
    r = srv.get("/kernelspecs")
    assert r.status == 200, r
    j = r.json()
    assert j["default"] == "python3"
    specs = j["kernelspecs"]
    for name, lang in (("python3", "python"), ("javascript", "javascript")):
        ks = specs[name]
        assert ks["name"] == name, ks
        # resources are URLs of files in the spec's folder (logos, kernel.js)
        for key, url in ks["resources"].items():
            assert url.startswith("/kernelspecs/%s/" % name), ks
        assert isinstance(ks["spec"]["argv"], list) and ks["spec"]["argv"], ks
        assert isinstance(ks["spec"]["display_name"], str), ks
        assert ks["spec"]["language"] == lang, ks


def test_healthz(srv):
    r = srv.get("/healthz")
    assert r.status == 200 and r.json() == {"status": "ok"}, r
    assert r.headers.get("Content-Type", "").startswith("application/json")


def test_metrics(srv, shared):
    assert run(srv, shared["session_id"], "1")["status"] == "completed"
    r = srv.get("/metrics")
    assert r.status == 200, r
    assert r.headers.get("Content-Type", "").startswith("text/plain"), r.headers
    text = r.text

    def value(pattern):
        m = re.search(r"^%s (\S+)$" % pattern, text, re.M)
        assert m, "no %s in\n%s" % (pattern, text)
        return float(m.group(1))

    assert value(r"codebox_sessions_live") >= 1
    assert value(r'codebox_executions_total\{status="completed"\}') >= 1
    assert value(r'codebox_execution_seconds_bucket\{(?:[^}]*,)?le="\+Inf"[^}]*\}') >= 1
    assert value(r"codebox_execution_seconds_count(?:\{[^}]*\})?") >= 1
    assert value(r"codebox_kernel_starts_total(?:\{[^}]*\})?") >= 1
    assert re.search(r"^codebox_http_requests_total\{[^}]*\} \d", text, re.M), text
    assert "# TYPE codebox_http_requests_total counter" in text


# --------------------------------------------------------------------------
# JavaScript and kernel selection

def test_javascript_session(srv):
    sess = create_session(srv, {"language": "javascript"})
    sid = sess["session_id"]
    try:
        assert sess["kernel"] == "javascript"
        res = run(srv, sid, "console.log(6*7)")
        assert res["status"] == "completed", res
        assert res["output"] == [{"type": "stream", "name": "stdout", "content": "42\n"}], res
        assert run(srv, sid, "var kept = 5;")["status"] == "completed"
        assert out(srv, sid, "console.log(kept + 1)") == "6\n"
        err = run(srv, sid, "throw new Error('boom')")
        assert err["status"] == "error", err
        errs = errors_of(err)
        assert errs and "boom" in (errs[0]["evalue"] + "".join(errs[0]["traceback"])), err
        assert out(srv, sid, "console.log(kept)") == "5\n"
    finally:
        srv.delete("/sessions/" + sid)


def test_unknown_kernel_is_400(srv):
    assert_error(srv.post("/sessions", {"kernel": "nope"}), 400, "kernel_not_found")
    assert_error(srv.post("/sessions", {"language": "cobol"}), 400, "kernel_not_found")


def test_kernel_that_never_gets_ready_is_503(server_factory):
    s = server_factory(env={"CODEBOX_KERNEL_PATH": FIXTURE_KERNELS,
                            "CODEBOX_KERNEL_START_TIMEOUT": "2"})
    t0 = time.monotonic()
    r = s.post("/sessions", {"kernel": "never-ready", "session_id": "nr"})
    assert time.monotonic() - t0 < 10
    assert_error(r, 503, "kernel_start_failed")
    assert s.get("/sessions").json()["sessions"] == []
    assert_error(s.get("/sessions/nr"), 404)
    assert not os.path.exists(os.path.join(s.state_dir, "nr"))
    # the never-ready program (`sleep 600`) is gone
    deadline = time.monotonic() + 5
    while any("sleep 600" in proc_cmdline(p) for p, _ in descendants(s.proc.pid)):
        assert time.monotonic() < deadline, "the never-ready kernel process stayed"
        time.sleep(0.1)
    assert_error(s.post("/sessions", {"kernel": "missing-binary"}), 503, "kernel_start_failed")
    # the server still works, and the failed id is free again (not a 409)
    assert s.get("/healthz").status == 200
    assert_error(s.post("/sessions", {"kernel": "never-ready", "session_id": "nr"}), 503,
                 "kernel_start_failed")


# --------------------------------------------------------------------------
# lifecycle

def test_idle_sessions_are_reaped(server_factory):
    s = server_factory(env={"CODEBOX_IDLE_TIMEOUT": "2", "CODEBOX_CLEANUP_INTERVAL": "1"})
    idle = create_session_short_lived(s)
    idle_pid = kernel_pid(s, idle["session_id"])
    busy = create_session_short_lived(s)
    busy_pid = kernel_pid(s, busy["session_id"])
    t_end = time.monotonic() + 5
    while time.monotonic() < t_end:      # keep one session in use
        assert run(s, busy["session_id"], "1")["status"] == "completed"
        time.sleep(0.5)
    assert_error(s.get("/sessions/" + idle["session_id"]), 404)
    assert not os.path.exists(host_dir(s, idle["session_id"]))
    assert not wait_gone([idle_pid], timeout=5), "the reaped session's kernel stayed"
    assert s.get("/sessions/" + busy["session_id"]).status == 200
    assert proc_alive(busy_pid)


def test_idle_sessions_do_not_wake_the_gateway(server_factory):
    # a reaper pass each second, but no session can expire for 30 minutes:
    # the gateway has no reason to wake
    s = server_factory(env={"CODEBOX_CLEANUP_INTERVAL": "1"})
    for _ in range(2):
        sid = create_session_short_lived(s)["session_id"]
        assert out(s, sid, "print(1)") == "1\n"
    # what follows the calls settles (a kernel beats once more after its
    # last request, every 5 s; the warm pool refills), then 3 s pass in
    # which no thread of the gateway runs; the old reaper woke each second
    wait_until_quiet(s)


def test_kernel_start_does_not_count_as_idle(server_factory, tmp_path):
    spec = tmp_path / "kernels" / "slow-python"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": ["/bin/sh", "-c",
                 'sleep 2.5; exec /usr/bin/python3 -m ipykernel_launcher -f "$0"',
                 "{connection_file}"],
        "display_name": "Python that starts slowly", "language": "python"}))
    s = server_factory(env={"CODEBOX_KERNEL_PATH": str(tmp_path / "kernels"),
                            "CODEBOX_IDLE_TIMEOUT": "1", "CODEBOX_CLEANUP_INTERVAL": "1"})
    r = s.post("/sessions", {"kernel": "slow-python"})
    assert r.status == 201, "%r\n%s" % (r, s.log_tail())
    sid = r.json()["session_id"]
    assert out(s, sid, "print('up')") == "up\n"


def test_session_ttl_reaps_even_while_used(server_factory):
    # a TTL longer than a busy machine's kernel start (4.2 s was seen under
    # ASan with other tests running), or the session is gone before its
    # first use; no warm pool starting kernels beside it
    s = server_factory(env={"CODEBOX_SESSION_TTL": "8", "CODEBOX_CLEANUP_INTERVAL": "1",
                            "CODEBOX_POOL_SIZE": "0"})
    sess = create_session_short_lived(s)
    sid = sess["session_id"]
    pid = kernel_pid(s, sid)
    deadline = time.monotonic() + 20
    while True:
        r = s.post("/execute", {"session_id": sid, "code": "1"})
        if r.status == 404:
            break
        assert r.status == 202, r
        assert time.monotonic() < deadline, "the session outlived its TTL"
        time.sleep(0.3)
    assert_error(s.get("/sessions/" + sid), 404)
    assert not os.path.exists(host_dir(s, sid))
    assert not wait_gone([pid], timeout=5), "the expired session's kernel stayed"


def test_max_sessions_is_429(server_factory):
    s = server_factory(env={"CODEBOX_MAX_SESSIONS": "2"})
    a = create_session(s)
    create_session(s)
    assert_error(s.post("/sessions", {}), 429)
    assert len(s.get("/sessions").json()["sessions"]) == 2
    assert s.delete("/sessions/" + a["session_id"]).status == 204
    create_session(s)


def test_sigterm_ends_every_kernel(server_factory):
    s = server_factory()
    a = create_session(s)
    b = create_session(s)
    pids = [kernel_pid(s, a["session_id"]), kernel_pid(s, b["session_id"])]
    pids += [d for d in descendants(s.proc.pid) if d not in pids]     # warm pool too
    rid = submit(s, a["session_id"], "import time; time.sleep(60)")
    wait_status(s, rid, {"running"})
    answer = {}

    def long_poll():
        try:
            answer["r"] = s.get("/execute/%s/results?wait=60" % rid, timeout=60)
        except OSError as e:
            answer["r"] = e
    waiter = threading.Thread(target=long_poll)
    waiter.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=20) == 0, s.log_tail()
    assert time.monotonic() - t0 < 15
    waiter.join(timeout=5)
    assert not waiter.is_alive(), "a long poll was left hanging by the shutdown"
    assert not wait_gone(pids, timeout=5), "kernels outlived SIGTERM"


def test_sigkill_of_gateway_kills_kernels(server_factory):
    s = server_factory()
    a = create_session(s)
    b = create_session(s)
    pids = [kernel_pid(s, a["session_id"]), kernel_pid(s, b["session_id"])]
    pids += [d for d in descendants(s.proc.pid) if d not in pids]
    submit(s, a["session_id"], "import time; time.sleep(60)")
    time.sleep(0.3)
    s.expect_dead = True
    s.proc.kill()
    s.proc.wait(timeout=10)
    alive = wait_gone(pids, timeout=5)
    assert not alive, "still running after SIGKILL of the gateway: %s" % [
        proc_cmdline(p) for p, _ in alive]


# --------------------------------------------------------------------------
# tokens and tenants

def test_tokens_and_tenants(server_factory):
    s = server_factory(env={"CODEBOX_API_TOKENS": "alice:tok-a,bob:tok-b"})
    assert s.get("/healthz", token=None).status == 200
    for path in ("/sessions", "/kernelspecs", "/metrics", "/execute/x/status"):
        assert_error(s.get(path, token=None), 401)
        assert_error(s.get(path, token="tok-c"), 401)
        assert_error(s.get(path, headers={"Authorization": "tok-a"}, token=None), 401)
        assert_error(s.get(path, headers={"Authorization": "Basic dG9rLWE="}, token=None), 401)
    assert_error(s.post("/sessions", {}, token=None), 401)
    assert_error(s.post("/sessions", {}, token="alice"), 401)
    assert s.get("/sessions", token=None).status == 401

    sess = create_session(s, token="tok-a")
    sid = sess["session_id"]
    rid = submit(s, sid, "secret = 1; print('alice')", token="tok-a")
    assert stream_of(results(s, rid, token="tok-a")) == "alice\n"

    assert [x["session_id"] for x in s.get("/sessions", token="tok-a").json()["sessions"]] == [sid]
    assert s.get("/sessions", token="tok-b").json() == {"sessions": []}
    assert_error(s.get("/sessions/" + sid, token="tok-b"), 404)
    assert_error(s.get("/sessions/%s/artifacts" % sid, token="tok-b"), 404)
    assert_error(s.get("/sessions/%s/files/input/x" % sid, token="tok-b"), 404)
    assert_error(s.request("PUT", "/sessions/%s/files/input/x" % sid, body=b"x",
                           token="tok-b"), 404)
    assert_error(s.post("/execute", {"session_id": sid, "code": "print(secret)"},
                        token="tok-b"), 404)
    assert_error(s.get("/execute/%s/status" % rid, token="tok-b"), 404)
    assert_error(s.get("/execute/%s/results" % rid, token="tok-b"), 404)
    assert_error(s.post("/execute/%s/cancel" % rid, token="tok-b"), 404)
    assert_error(s.delete("/sessions/" + sid, token="tok-b"), 404)
    # the same id in bob's namespace does not reach alice's session
    r = s.post("/sessions", {"session_id": sid}, token="tok-b")
    assert r.status in (201, 409), r
    if r.status == 201:
        assert "NameError" in str(run(s, sid, "print(secret)", token="tok-b")["output"])
        assert s.delete("/sessions/" + sid, token="tok-b").status == 204
    assert s.get("/sessions/" + sid, token="tok-a").status == 200
    assert out(s, sid, "print(secret)", token="tok-a") == "1\n"


def test_non_loopback_without_tokens_refused(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
    try:
        p = subprocess.run([BIN, "serve", "--host", "0.0.0.0", "--port", "0", "--state-dir",
                            str(tmp_path / "st")], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        raise AssertionError("codebox serve --host 0.0.0.0 without tokens kept running")
    assert p.returncode != 0
    assert "CODEBOX_API_TOKENS" in p.stderr, p.stderr


def test_non_loopback_with_tokens_starts(server_factory):
    s = server_factory(env={"CODEBOX_API_TOKENS": "tok"}, args=["--host", "0.0.0.0"])
    assert s.get("/sessions", token="tok").status == 200
    assert s.get("/sessions", token=None).status == 401
