"""End-to-end tests of GET /execute/{rid}/events (CONTRACT.md, "REST API"):
an execution's output items as Server-Sent Events while it runs, then its
results as one `end` event. Read with a plain HTTP client, line by line.
No test relies on timing: a cell that must still run when the client reads
waits for a file the test uploads once it has read what it waited for."""
import base64
import http.client
import json
import signal

import pytest

from conftest import Server, rest_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TOKENS = "alice:token-alice,bob:token-bob"

# prints, waits for input/go, prints again, shows two plots, raises
CELL = ("import os, time\n"
        "print('first', flush=True)\n"
        "while not os.path.exists('input/go'):\n"
        "    time.sleep(0.05)\n"
        "print('second')\n"
        "import matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2]); plt.show()\n"
        "plt.plot([2, 1]); plt.show()\n"
        "raise ValueError('boom')\n")

WAIT_FOR_GO = ("import os, time\n"
               "print('waiting', flush=True)\n"
               "while not os.path.exists('input/go'):\n"
               "    time.sleep(0.05)\n"
               "print('done')\n")


class Events:
    """One GET /execute/{rid}/events read as it comes."""

    def __init__(self, srv, rid, token=None):
        self.conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
        self.conn.request("GET", "/execute/%s/events" % rid,
                          headers={"Authorization": "Bearer " + (token or srv.token)})
        self.resp = self.conn.getresponse()
        self.comments = 0

    def next(self, keep_comments=False):
        """The next event as (name, data), ("comment", None) for a comment
        when keep_comments, or None at the end of the stream."""
        name, data = None, []
        while True:
            line = self.resp.readline()
            if not line:
                return None
            line = line.decode().rstrip("\n")
            if line.startswith(":"):
                self.comments += 1
                if keep_comments:
                    return ("comment", None)
                continue
            if line == "":
                if name is None and not data:
                    continue
                return (name or "message", json.loads("\n".join(data)))
            field, _, value = line.partition(": ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)

    def rest(self):
        """Every event left, until the stream ends."""
        events = []
        while True:
            e = self.next()
            if e is None:
                return events
            events.append(e)

    def close(self):
        self.conn.close()


def merged(items):
    """Output items with consecutive stream items of one name joined, as
    the results hold them."""
    out = []
    for item in items:
        if (item["type"] == "stream" and out and out[-1]["type"] == "stream"
                and out[-1]["name"] == item["name"]):
            out[-1] = dict(out[-1], content=out[-1]["content"] + item["content"])
        else:
            out.append(dict(item))
    return out


@pytest.fixture(scope="module")
def srv():
    s = Server(env={"CODEBOX_API_TOKENS": TOKENS, "CODEBOX_POOL_SIZE": "0"},
               token="token-alice")
    yield s
    s.stop()


def new_session(srv):
    r = srv.post("/sessions", {})
    assert r.status == 201, r.text
    return r.json()["session_id"]


def submit(srv, sid, code):
    r = srv.post("/execute", {"session_id": sid, "code": code})
    assert r.status == 202, r.text
    return r.json()["request_id"]


def go(srv, sid):
    r = srv.request("PUT", "/sessions/%s/files/input/go" % sid, body=b"go")
    assert r.status in (200, 201), r.text


def results(srv, rid):
    r = srv.get("/execute/%s/results?wait=120" % rid)
    assert r.status == 200, r.text
    return r.json()


def test_outputs_stream_as_they_come_then_the_results(srv):
    sid = new_session(srv)
    rid = submit(srv, sid, CELL)
    ev = Events(srv, rid)
    assert ev.resp.status == 200
    assert ev.resp.getheader("Content-Type") == "text/event-stream"
    # the first output arrives while the cell still waits for input/go
    first = ev.next()
    assert first == ("output", {"type": "stream", "name": "stdout", "content": "first\n"}), first
    assert srv.get("/execute/%s/status" % rid).json()["status"] == "running"
    go(srv, sid)
    events = [first] + ev.rest()
    ev.close()
    names = [name for name, _ in events]
    assert names == ["output"] * (len(events) - 1) + ["end"], names
    items = [data for name, data in events if name == "output"]
    end = events[-1][1]
    # the end event is the results, which hold the same items
    res = results(srv, rid)
    assert end == res, (end, res)
    assert res["status"] == "error" and res["error"]["ename"] == "ValueError", res
    assert merged(items) == res["output"], (items, res["output"])
    assert [i["type"] for i in merged(items)] == ["stream", "display", "display", "error"], items
    # each plot named by its index in files, its bytes only there
    displays = [i for i in items if i["type"] == "display"]
    assert [d["file"] for d in displays] == [0, 1], displays
    assert all("image/png" not in d["data"] and "text/plain" in d["data"] for d in displays)
    assert len(res["files"]) == 2
    for f in res["files"]:
        assert base64.b64decode(f, validate=True)[:8] == PNG_MAGIC
    # tracebacks without ANSI colours, as in the results
    error = items[-1]
    assert error["ename"] == "ValueError" and error["evalue"] == "boom", error
    assert error["traceback"] and not any("\x1b" in line for line in error["traceback"])


def test_a_finished_execution_replays_at_once(srv):
    sid = new_session(srv)
    rid = submit(srv, sid, "print('a')\nimport matplotlib.pyplot as plt\n"
                           "plt.plot([1, 3]); plt.show()\n6 * 7\n")
    res = results(srv, rid)
    assert res["status"] == "completed", res
    ev = Events(srv, rid)
    events = ev.rest()
    ev.close()
    assert [n for n, _ in events] == ["output"] * len(res["output"]) + ["end"], events
    assert [d for _, d in events[:-1]] == res["output"], events
    assert events[-1][1] == res
    assert [o["type"] for o in res["output"]] == ["stream", "display", "result"], res
    assert res["output"][1]["file"] == 0 and len(res["files"]) == 1, res["output"]
    assert res["output"][2]["content"] == "42", res


def test_unknown_or_another_tenants_execution_is_404(srv):
    r = srv.get("/execute/nope~00000000-0000-0000-0000-000000000000/events")
    assert r.status == 404, r
    assert r.json()["error"]["code"] and r.json()["error"]["message"], r.text
    sid = new_session(srv)
    rid = submit(srv, sid, "1 + 1")
    assert results(srv, rid)["status"] == "completed"
    r = srv.get("/execute/%s/events" % rid, token="token-bob")
    assert r.status == 404, r
    assert r.json()["error"]["code"], r.text
    # POST is not a way to it
    assert srv.post("/execute/%s/events" % rid).status == 405


def test_a_quiet_stream_gets_keepalive_comments(srv):
    sid = new_session(srv)
    rid = submit(srv, sid, WAIT_FOR_GO)
    ev = Events(srv, rid)
    assert ev.next() == ("output", {"type": "stream", "name": "stdout",
                                    "content": "waiting\n"})
    # nothing more comes until input/go exists: the next thing is a comment
    assert ev.next(keep_comments=True) == ("comment", None)
    go(srv, sid)
    events = ev.rest()
    ev.close()
    assert events[-1][0] == "end" and events[-1][1]["status"] == "completed", events
    assert merged([d for n, d in events if n == "output"]) == [
        {"type": "stream", "name": "stdout", "content": "done\n"}], events


def test_a_client_that_leaves_mid_stream_leaves_the_server_healthy(srv):
    sid = new_session(srv)
    rid = submit(srv, sid, WAIT_FOR_GO + "for i in range(200):\n    print(i)\n")
    for _ in range(3):          # several clients, each leaves after the first event
        ev = Events(srv, rid)
        assert ev.next()[0] == "output"
        ev.close()
    go(srv, sid)                # more output goes to the streams that were left
    res = results(srv, rid)
    assert res["status"] == "completed", res
    assert srv.get("/healthz").status == 200
    # the same execution still streams whole to a new client
    ev = Events(srv, rid)
    events = ev.rest()
    ev.close()
    assert events[-1] == ("end", res)
    rid2 = submit(srv, sid, "print('next')")
    assert results(srv, rid2)["output"] == [{"type": "stream", "name": "stdout",
                                             "content": "next\n"}]


def test_shutdown_ends_open_streams(server_factory):
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    assert s.post("/sessions", {"session_id": "sd"}).status == 201
    rid = s.post("/execute", {"session_id": "sd", "code": WAIT_FOR_GO}).json()["request_id"]
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    conn.request("GET", "/execute/%s/events" % rid)
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.readline().startswith(b"event: output")
    s.proc.send_signal(signal.SIGTERM)
    # the stream ends (the server does not wait for the cell)
    try:
        while resp.readline():
            pass
    except http.client.IncompleteRead:
        pass
    conn.close()
    assert s.stop() == 0


def test_a_results_content_is_the_text_a_reader_needs(server_factory):
    """A result whose text/plain is a bare repr (HTML(...)) carries its HTML
    as text in `content`, as codebox-ai's client prints it; a DataFrame's
    text stays its text/plain."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    assert s.post("/sessions", {"session_id": "txt"}).status == 201
    res = rest_run(s, "txt", "from IPython.display import HTML\n"
                   "HTML('<p>total: <b>42</b></p><script>x()</script>')")
    result = [o for o in res["output"] if o["type"] == "result"][0]
    assert result["content"] == "total: 42", result
    assert "text/html" in result["data"], result
    res = rest_run(s, "txt", "import pandas as pd\npd.DataFrame({'a': [1]})")
    result = [o for o in res["output"] if o["type"] == "result"][0]
    assert result["content"] == "   a\n0  1", result
