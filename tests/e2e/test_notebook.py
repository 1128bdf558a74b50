"""A session's record of cells (issue 42): every cell run through REST,
MCP and the Jupyter API's websocket lands in GET /sessions/{id}/notebook
in order with its outputs, across kernel restarts, as a notebook that
nbformat's own validator accepts (and the MCP resource
session://{id}/notebook too); GET /sessions/{id}/archive is a tar.gz that
Python's tarfile reads back with the folder, notebook.ipynb and
session.json; POST /sessions/{id}/replay brings variables back after a
restart. The record lives in the state folder where kernel code cannot
reach it, per tenant; another tenant's session is a 404."""
import copy
import io
import json
import os
import stat
import tarfile
import time
import uuid

import nbformat
import nbformat.validator
import pytest
import websocket

from conftest import Server, mcp_client, mcp_session, rest_run, stream_of

TOKENS = "alice:tok-a,bob:tok-b"
ALICE = {"Authorization": "Bearer tok-a"}


@pytest.fixture(scope="module")
def srv():
    s = Server(env={"CODEBOX_API_TOKENS": TOKENS}, token="tok-a")
    yield s
    s.stop()


def create(s, sid, token=...):
    r = s.post("/sessions", {"session_id": sid}, token=token)
    assert r.status == 201, r.text


def valid(nb):
    """nb (a dict) checked by nbformat: its schema for 4.5, strictly (no
    repair), and nbformat.validate itself."""
    assert nb["nbformat"] == 4 and nb["nbformat_minor"] == 5, nb.keys()
    errors = list(nbformat.validator.get_validator(version=4, version_minor=5)
                  .iter_errors(nb))
    assert not errors, [str(e) for e in errors[:3]]
    before = copy.deepcopy(nb)
    nbformat.validate(nb)
    assert nb == before, "nbformat had to repair the notebook"
    ids = [c["id"] for c in nb["cells"]]
    assert len(ids) == len(set(ids)), ids
    return nb


def notebook(s, sid, token=...):
    r = s.get("/sessions/%s/notebook" % sid, token=token)
    assert r.status == 200, r.text
    assert r.headers["Content-Type"] == "application/x-ipynb+json"
    return valid(r.json())


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def text_of(cell):
    return "".join(o["text"] for o in cell["outputs"] if o["output_type"] == "stream")


class Jupyter:
    """A Jupyter websocket client on a session's kernel (JSON text protocol)."""

    def __init__(self, s, kid):
        self.ws = websocket.create_connection(
            "ws://127.0.0.1:%d/api/kernels/%s/channels" % (s.port, kid), timeout=60,
            header=["Authorization: Bearer tok-a"])

    def run(self, code):
        mid = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": mid, "msg_type": "execute_request", "session": "nbtest",
                       "username": "t", "version": "5.3", "date": "2026-01-01T00:00:00Z"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
        reply = idle = None
        deadline = time.monotonic() + 60
        while not (reply and idle):
            assert time.monotonic() < deadline, "no reply and idle"
            m = json.loads(self.ws.recv())
            if m["parent_header"].get("msg_id") != mid:
                continue
            if m["channel"] == "shell" and m["msg_type"] == "execute_reply":
                reply = m
            if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                idle = m
        return reply["content"]

    def close(self):
        self.ws.close()


def mcp_resource(s, uri):
    sid = mcp_session(s, ALICE)
    r = s.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 7, "method": "resources/read",
                                   "params": {"uri": uri}},
                  headers={"Accept": "application/json", "Mcp-Session-Id": sid})
    assert r.status == 200, r.text
    return r.json()


def wait_restarted(s, sid):
    """Waits until the session's new kernel is idle after a restart."""
    deadline = time.monotonic() + 60
    while s.get("/sessions/" + sid).json()["status"] != "idle":
        assert time.monotonic() < deadline, "the kernel did not come back"
        time.sleep(0.1)


def test_every_interface_lands_in_one_valid_notebook(srv):
    s = srv
    create(s, "nb")
    assert stream_of(rest_run(s, "nb", "x = 41\nprint('hello', x)")) == "hello 41\n"
    assert rest_run(s, "nb", "x + 1")["output"][0]["content"] == "42"
    assert rest_run(s, "nb", "1 / 0")["status"] == "error"
    plot = ("%matplotlib inline\nimport matplotlib.pyplot as plt\n"
            "plt.plot([1, 3, 2]); plt.show()")
    assert rest_run(s, "nb", plot)["files"], "no PNG"
    call = mcp_client(s)
    res = call("exec_code", {"session_id": "nb", "code": "print('from mcp', x)"})
    assert res["isError"] is False and "from mcp 41" in res["content"][0]["text"], res
    j = Jupyter(s, "nb")
    assert j.run("print('from jupyter', x)")["status"] == "ok"
    assert j.run("undefined_name")["status"] == "error"
    j.close()
    r = s.post("/api/kernels/nb/restart")
    assert r.status == 200, r.text
    wait_restarted(s, "nb")
    assert stream_of(rest_run(s, "nb", "print('after restart')")) == "after restart\n"

    nb = notebook(s, "nb")
    spec = nb["metadata"]["kernelspec"]
    assert spec["name"] == "python3" and spec["language"] == "python" and spec["display_name"]
    assert nb["metadata"]["language_info"]["name"] == "python"
    cells = code_cells(nb)
    assert [c["source"] for c in cells] == [
        "x = 41\nprint('hello', x)", "x + 1", "1 / 0", plot, "print('from mcp', x)",
        "print('from jupyter', x)", "undefined_name", "print('after restart')"]
    # one kernel counts on across interfaces; the new kernel starts again
    assert [c["execution_count"] for c in cells] == [1, 2, 3, 4, 5, 6, 7, 1]
    assert text_of(cells[0]) == "hello 41\n"
    result = cells[1]["outputs"][0]
    assert result["output_type"] == "execute_result" and result["data"]["text/plain"] == "42"
    assert result["execution_count"] == 2
    err = cells[2]["outputs"][-1]
    assert err["output_type"] == "error" and err["ename"] == "ZeroDivisionError"
    assert cells[2]["metadata"]["codebox"]["status"] == "error"
    images = [o for o in cells[3]["outputs"] if o["output_type"] == "display_data"]
    assert images and images[0]["data"]["image/png"].startswith("iVBOR"), cells[3]["outputs"]
    assert text_of(cells[4]) == "from mcp 41\n"
    assert text_of(cells[5]) == "from jupyter 41\n"
    assert cells[5]["metadata"]["codebox"]["via"] == "jupyter"
    assert cells[6]["outputs"][-1]["ename"] == "NameError"
    assert [c["metadata"]["codebox"]["run"] for c in cells] == [1] * 7 + [2]
    for c in cells:
        t = c["metadata"]["execution"]
        assert t["iopub.execute_input"] <= t["shell.execute_reply"], t
        assert t["iopub.execute_input"].startswith(time.strftime("%Y-", time.gmtime()))
    # the restart is marked where it happened
    kinds = [c["cell_type"] for c in nb["cells"]]
    assert kinds == ["code"] * 7 + ["markdown", "code"], kinds
    assert "Kernel restarted" in nb["cells"][7]["source"]

    # the same notebook as an MCP resource, and its template listed
    body = mcp_resource(s, "session://nb/notebook")
    content = body["result"]["contents"][0]
    assert content["mimeType"] == "application/x-ipynb+json"
    assert [c["source"] for c in code_cells(valid(json.loads(content["text"])))] == \
        [c["source"] for c in cells]
    assert "error" in mcp_resource(s, "session://no-such/notebook")
    sid = mcp_session(s, ALICE)
    r = s.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 8,
                                   "method": "resources/templates/list"},
                  headers={"Accept": "application/json", "Mcp-Session-Id": sid})
    assert "session://{session_id}/notebook" in r.text


def test_a_timeout_restart_is_marked_with_its_reason(srv):
    s = srv
    create(s, "nb-timeout")
    rest_run(s, "nb-timeout", "v = 1")
    # a cell that ignores the interrupt: the kernel is restarted
    res = rest_run(s, "nb-timeout", "import signal, time\nsignal.signal(signal.SIGINT, "
                   "signal.SIG_IGN)\ntime.sleep(30)", timeout=1)
    assert res["status"] == "error" and res["reason"] == "timeout", res
    wait_restarted(s, "nb-timeout")
    rest_run(s, "nb-timeout", "w = 2")
    nb = notebook(s, "nb-timeout")
    kinds = [c["cell_type"] for c in nb["cells"]]
    assert kinds == ["code", "code", "markdown", "code"], kinds
    assert nb["cells"][1]["metadata"]["codebox"]["status"] == "timeout"
    assert "time limit" in nb["cells"][2]["source"]


def test_outputs_past_the_bound_are_left_out_with_a_note(srv):
    s = srv
    create(s, "nb-big")
    big = ("from IPython.display import display\n"
           "display({'text/plain': 'x' * (33 << 20)}, raw=True)\nprint('done')")
    assert stream_of(rest_run(s, "nb-big", big, wait=120)) == "done\n"
    rest_run(s, "nb-big", "print('small')")
    cells = code_cells(notebook(s, "nb-big"))
    assert cells[0]["metadata"]["codebox"]["outputs_left_out"]
    assert "not kept" in text_of(cells[0]) and "MiB" in text_of(cells[0])
    assert text_of(cells[1]) == "small\n"


def test_archive_round_trips_through_tarfile(srv):
    s = srv
    create(s, "arch")
    deep = "output/" + "/".join(["d" * 60] * 3)     # a name past ustar's 100 bytes
    code = ("import os\nos.makedirs(%r, exist_ok=True)\n"
            "open(%r + '/f.txt', 'w').write('deep')\n"
            "open('input/data.csv', 'w').write('a,b\\n1,2\\n')\n"
            "open('output/blob.bin', 'wb').write(bytes(range(256)) * 4000)\n"
            "os.symlink('/etc/passwd', 'output/link')\n"
            "os.symlink('/', 'output/root')\n"
            "os.mkfifo('output/fifo')\n"
            "print('made')" % (deep, deep))
    assert stream_of(rest_run(s, "arch", code)) == "made\n"
    r = s.get("/sessions/arch/archive")
    assert r.status == 200, r.text
    assert r.headers["Content-Type"] == "application/gzip"
    assert 'filename="arch.tar.gz"' in r.headers["Content-Disposition"]
    with tarfile.open(fileobj=io.BytesIO(r.body), mode="r:gz") as t:
        members = {m.name: m for m in t.getmembers()}
        names = list(members)
        assert names[:2] == ["notebook.ipynb", "session.json"], names[:5]
        for m in members.values():
            assert m.isfile() or m.isdir(), (m.name, m.type)
            assert not m.name.startswith("/") and ".." not in m.name.split("/"), m.name
            assert m.name in ("notebook.ipynb", "session.json") or \
                m.name == "session" or m.name.startswith("session/"), m.name
        for gone in ("session/output/link", "session/output/root", "session/output/fifo"):
            assert gone not in members, gone
        assert not any(n.startswith("session/.tmp") for n in names), "the kernel's /tmp"
        assert t.extractfile("session/input/data.csv").read() == b"a,b\n1,2\n"
        assert t.extractfile("session/%s/f.txt" % deep).read() == b"deep"
        assert t.extractfile("session/output/blob.bin").read() == bytes(range(256)) * 4000
        nb = valid(json.loads(t.extractfile("notebook.ipynb").read()))
        assert code_cells(nb)[0]["source"] == code
        info = json.loads(t.extractfile("session.json").read())
    assert info["session_id"] == "arch" and info["tenant"] == "alice"
    assert info["kernel"] == "python3" and info["limits"]["exec_timeout"] > 0
    assert "execution_options" in info and info["created"].endswith("Z")
    assert s.get("/sessions/no-such/archive").status == 404


def test_replay_brings_variables_back_after_a_restart(srv):
    s = srv
    create(s, "rp")
    rest_run(s, "rp", "import json\nx = 41")
    assert rest_run(s, "rp", "1 / 0")["status"] == "error"
    rest_run(s, "rp", "y = x + 1")
    assert s.post("/api/kernels/rp/restart").status == 200
    wait_restarted(s, "rp")
    assert rest_run(s, "rp", "print(y)")["status"] == "error"     # gone with the kernel
    r = s.post("/sessions/rp/replay")
    assert r.status == 202, r.text
    body = r.json()
    rid = body["request_id"]
    assert body["status"] == "queued" and body["session_id"] == "rp"
    assert body["replay"] == {"cells": 2, "skipped": 2}, body
    res = s.get("/execute/%s/results?wait=60" % rid).json()
    assert res["status"] == "completed" and res["replay"] == {"cells": 2, "skipped": 2}, res
    assert s.get("/execute/%s/status" % rid).json()["status"] == "completed"
    events = s.get("/execute/%s/events" % rid)
    assert events.status == 200 and "event: end" in events.text
    assert stream_of(rest_run(s, "rp", "print(y)")) == "42\n"
    # the replay is recorded as one, and a second replay does not run it again
    cells = code_cells(notebook(s, "rp"))
    assert cells[-2]["metadata"]["codebox"].get("replay") is True
    assert cells[-2]["source"] == "import json\nx = 41\ny = x + 1\n"
    r = s.post("/sessions/rp/replay", {"timeout": 30})
    assert r.json()["replay"] == {"cells": 3, "skipped": 2}, r.text
    assert s.post("/sessions/rp/replay", {"timeout": "soon"}).status == 400
    assert s.post("/sessions/no-such/replay").status == 404


def test_another_tenant_sees_nothing(srv):
    s = srv
    create(s, "mine")
    rest_run(s, "mine", "secret = 'alice'")
    bob = "tok-b"
    for path in ("/sessions/mine/notebook", "/sessions/mine/archive"):
        assert s.get(path, token=bob).status == 404, path
    assert s.post("/sessions/mine/replay", token=bob).status == 404
    # bob's session of the same name has a record of its own
    create(s, "mine", token=bob)
    rest_run(s, "mine", "print('bob')", token=bob)
    assert [c["source"] for c in code_cells(notebook(s, "mine", token=bob))] == ["print('bob')"]
    assert [c["source"] for c in code_cells(notebook(s, "mine"))] == ["secret = 'alice'"]


def test_the_record_is_out_of_the_kernels_reach(srv):
    s = srv
    create(s, "rec")
    rest_run(s, "rec", "marker = 'cells-of-rec'")
    kept = os.path.join(s.state_dir, ".kept", "@alice", "rec")
    cells_file = os.path.join(kept, "cells.jsonl")
    with open(cells_file) as f:
        assert "cells-of-rec" in f.read()
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(cells_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.join(kept, "session.json")).st_mode) == 0o600
    workdir = os.path.join(s.state_dir, "@alice", "rec")
    assert not os.path.realpath(kept).startswith(os.path.realpath(workdir) + "/")
    # kernel code can neither read nor write it, by any path it knows
    probe = (
        "import os\n"
        "tries = [%r, '/session/../.kept/@alice/rec/cells.jsonl', '../.kept/@alice/rec/cells.jsonl',"
        " '../../.kept/@alice/rec/cells.jsonl']\n"
        "for p in tries:\n"
        "    for mode in ('r', 'a'):\n"
        "        try:\n"
        "            with open(p, mode) as f:\n"
        "                f.write('{}\\n') if mode == 'a' else f.read()\n"
        "            print('REACHED', p, mode)\n"
        "        except OSError as e:\n"
        "            pass\n"
        "print('done')" % cells_file)
    res = rest_run(s, "rec", probe)
    assert stream_of(res) == "done\n", res
    with open(cells_file) as f:
        lines = f.read().splitlines()
    assert [json.loads(line)["cell"] for line in lines] == [1, 2], lines
    # hostile ids reach no record
    for sid in ("..%2F.kept%2F@alice%2Frec", "%2E%2E", ".kept", "..", "rec%2F..%2F..%2Frec"):
        r = s.get("/sessions/%s/notebook" % sid)
        assert r.status in (400, 404), (sid, r.status, r.text)
        assert "cells-of-rec" not in r.text
    for sid in ("../.kept/x", ".kept", "@alice"):
        assert s.post("/sessions", {"session_id": sid}).status == 400, sid
    # the record goes with the session
    assert s.delete("/sessions/rec").status == 204
    assert not os.path.exists(kept)
