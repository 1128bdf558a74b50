"""codebox-ai's own client code against codebox, request for request
(issue 41): tomconte/codebox-ai's examples/example_openai.py (its
CodeBoxSession class: POST /sessions with "dependencies" and
"execution_options" (the example's mount of the temp folder at /data),
POST /execute, GET /execute/{id}/status once a second until
completed/failed/error, GET the results, DELETE the session; then the
example's printing of each result and the tool message it hands the model),
and the older README's and example's POST /execute without a session_id.
Only the URL differs (CODEBOX_URL = the test server). The `requests`
package is not on this machine: Requests below sends what requests sends
for these calls (the same method, path, JSON body and headers).

Started as the README tells codebox-ai's users: CODEBOX_MOUNT_ROOTS names
the folder the example mounts (tempfile.gettempdir())."""
import base64
import http.client
import json
import os
import shutil
import tempfile
import time
import urllib.parse

from conftest import stream_of

PYTHON_ONLY = {"CODEBOX_POOL_SIZE": "0"}
PNG = b"\x89PNG\r\n\x1a\n"


class HTTPError(Exception):
    """requests.HTTPError: its text and the response it came with."""

    def __init__(self, text, response):
        super().__init__(text)
        self.response = response


class Response:
    def __init__(self, url, status, reason, body):
        self.url, self.status_code, self.reason, self.content = url, status, reason, body

    def json(self):
        return json.loads(self.content)

    def raise_for_status(self):
        kind = ("Client" if 400 <= self.status_code < 500
                else "Server" if self.status_code >= 500 else None)
        if kind:
            raise HTTPError("%d %s Error: %s for url: %s" % (
                self.status_code, kind, self.reason, self.url), self)


class Requests:
    """requests.get/post/delete as the example calls them: a JSON body
    (json=), requests' default headers, one connection per call."""
    HEADERS = {"User-Agent": "python-requests/2.32.3", "Accept-Encoding": "gzip, deflate",
               "Accept": "*/*", "Connection": "keep-alive"}
    sent = []       # (method, path, body) of every call, for the tests

    @classmethod
    def request(cls, method, url, json_body=None):
        u = urllib.parse.urlsplit(url)
        headers = dict(cls.HEADERS)
        body = None
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        if method in ("POST", "DELETE"):
            headers["Content-Length"] = str(len(body or b""))
        cls.sent.append((method, u.path, json_body))
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
        try:
            conn.request(method, u.path, body=body, headers=headers)
            r = conn.getresponse()
            return Response(url, r.status, r.reason, r.read())
        finally:
            conn.close()

    @classmethod
    def get(cls, url):
        return cls.request("GET", url)

    @classmethod
    def post(cls, url, json=None):
        return cls.request("POST", url, json)

    @classmethod
    def delete(cls, url):
        return cls.request("DELETE", url)


requests = Requests


class CodeBoxSession:
    """examples/example_openai.py's class, line for line (CODEBOX_URL is
    an argument here instead of a module constant)."""

    def __init__(self, codebox_url, dependencies=None, execution_options=None):
        self.url = codebox_url
        self.session_id = self._create_session(dependencies, execution_options)

    def _create_session(self, dependencies=None, execution_options=None):
        response = requests.post(
            f"{self.url}/sessions",
            json={"dependencies": dependencies or [], "execution_options": execution_options or {}},
        )
        response.raise_for_status()
        return response.json()["session_id"]

    def execute_code(self, code):
        execution_response = requests.post(f"{self.url}/execute",
                                           json={"code": code, "session_id": self.session_id})
        execution_response.raise_for_status()
        request_id = execution_response.json()["request_id"]
        while True:
            status_response = requests.get(f"{self.url}/execute/{request_id}/status")
            status = status_response.json()
            if status["status"] in ["completed", "failed", "error"]:
                break
            time.sleep(1)
        results = requests.get(f"{self.url}/execute/{request_id}/results")
        return results.json()

    def cleanup(self):
        requests.delete(f"{self.url}/sessions/{self.session_id}")


def tool_call(session, code):
    """The example's handling of one execute_python_code call: run it,
    print the results as it does, save each file as output_N.png in the
    working folder (then shown with kitty's graphics protocol, which takes
    PNG: f=100), and return the tool message's content for the model."""
    print("\n🤖 Assistant is executing code:")
    print("```python")
    print(code)
    print("```\n")
    try:
        result = session.execute_code(code)
    except Exception as exc:
        error_body = exc.response.json()
        result = {"output": [], "error": f"{str(exc)}\n{error_body}", "files": []}
    if result.get("output"):
        print("Output:")
        for output in result["output"]:
            if output["type"] == "stream":
                print(output["content"].strip())
            elif output["type"] == "result":
                print(output["content"])
    if result.get("error"):
        print("Errors:")
        print(result["error"])
    if result.get("files"):
        print(f"\nNumber of files: {len(result['files'])}")
        for i, file_data in enumerate(result["files"], 1):
            file_path = f"output_{i}.png"
            with open(file_path, "wb") as f:
                f.write(base64.b64decode(file_data))
            print(f"File saved: {file_path}")
        result["files"] = []
    return json.dumps(result)


def printed_after_code(out):
    """What the example printed after the code block of its last call."""
    return out.rsplit("```\n\n", 1)[1]


def mount_folder(where=None):
    """A folder in the temp folder (or in where), readable by the kernels'
    user, with a CSV the model may be asked about."""
    folder = tempfile.mkdtemp(prefix="codeboxai-seed-", dir=where)
    os.chmod(folder, 0o755)
    with open(os.path.join(folder, "points.csv"), "w") as f:
        f.write("x,y\n1,2\n2,4\n3,7\n")
    os.chmod(os.path.join(folder, "points.csv"), 0o644)
    return folder


SCATTER = """import numpy as np
import matplotlib.pyplot as plt
np.random.seed(0)
xs = np.random.rand(100)
ys = 2 * xs + np.random.normal(0, 0.2, 100)
slope, intercept = np.polyfit(xs, ys, 1)
plt.scatter(xs, ys)
plt.plot(xs, slope * xs + intercept, color='red')
plt.title('Scatter with trend line')
plt.show()"""

STATISTICS = """import pandas as pd
df = pd.DataFrame({'x': xs, 'y': ys})
print(f"slope {slope:.1f}")
df.describe().loc[['count']]"""


def test_example_openai_session_with_its_mount(server_factory, tmp_path, monkeypatch, capsys):
    """The example's __main__: a session with numpy, pandas, matplotlib and
    the temp folder mounted read-only at /data, kept for its four example
    queries (and a look at /data), then cleaned up."""
    folder = mount_folder()
    try:
        temp = tempfile.gettempdir()        # the example's DEFAULT_LOCAL_MOUNT_PATH
        s = server_factory(env=dict(PYTHON_ONLY, CODEBOX_MOUNT_ROOTS=temp))
        url = "http://127.0.0.1:%d" % s.port
        monkeypatch.chdir(tmp_path)
        Requests.sent.clear()
        session = CodeBoxSession(url, dependencies=["numpy", "pandas", "matplotlib"],
                                 execution_options={"mount_points": [
                                     {"host_path": temp, "container_path": "/data",
                                      "read_only": True}]})
        assert Requests.sent[0] == ("POST", "/sessions", {
            "dependencies": ["numpy", "pandas", "matplotlib"],
            "execution_options": {"mount_points": [
                {"host_path": temp, "container_path": "/data", "read_only": True}]}})
        # 1. "Create a variable x = 42": nothing to print
        message = tool_call(session, "x = 42")
        assert printed_after_code(capsys.readouterr().out) == "", message
        assert json.loads(message)["status"] == "completed", message
        # 2. "Print the value of x that we just created"
        tool_call(session, "print(x)")
        assert printed_after_code(capsys.readouterr().out) == "Output:\n42\n"
        # 3. the plot: the figure is a display item, which the example's
        # printing passes over; its PNG is in files, saved and shown
        message = tool_call(session, SCATTER)
        out = printed_after_code(capsys.readouterr().out)
        assert out == "Output:\n\nNumber of files: 1\nFile saved: output_1.png\n", out
        assert (tmp_path / "output_1.png").read_bytes()[:8] == PNG
        sent = json.loads(message)
        assert sent["files"] == [] and sent["status"] == "completed", message
        displays = [o for o in sent["output"] if o["type"] == "display"]
        assert len(displays) == 1 and displays[0]["file"] == 0, message
        assert "<Figure size" in displays[0]["data"]["text/plain"], message
        # 4. statistics of the same points: state kept, a result printed
        tool_call(session, STATISTICS)
        out = printed_after_code(capsys.readouterr().out)
        assert out.startswith("Output:\nslope 2.0\n"), out
        assert "count  100.0  100.0" in out, out
        # the mounted temp folder: read at /data, and read-only
        name = os.path.basename(folder)
        tool_call(session, "import pandas as pd\n"
                           "print(pd.read_csv('/data/%s/points.csv')['y'].sum())\n"
                           "open('/data/%s/new.txt', 'w')" % (name, name))
        out = printed_after_code(capsys.readouterr().out)
        assert out.startswith("Output:\n13\nErrors:\n{'ename': 'OSError'"), out
        assert "Read-only file system" in out, out
        assert not os.path.exists(os.path.join(folder, "new.txt"))
        # codebox's own folders in the temp folder (here the state folder,
        # every session's files) are empty inside, and cannot be mounted
        assert s.state_dir.startswith(temp + "/"), s.state_dir
        rel = os.path.relpath(s.state_dir, temp)
        tool_call(session, "import os\nprint(os.listdir('/data/%s'))" % rel)
        assert printed_after_code(capsys.readouterr().out) == "Output:\n[]\n"
        assert os.listdir(s.state_dir), s.state_dir
        r = requests.post(f"{url}/sessions", json={"execution_options": {"mount_points": [
            {"host_path": s.state_dir, "container_path": "/data"}]}})
        assert r.status_code == 403 and "codebox's own folders" in r.json()["error"]["message"]
        sid = session.session_id
        session.cleanup()
        assert Requests.sent[-1] == ("DELETE", "/sessions/%s" % sid, None)
        assert s.get("/sessions/%s" % sid).status == 404
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_example_openai_without_mount_roots_is_told_what_to_set(server_factory):
    """Without CODEBOX_MOUNT_ROOTS the example stops at its first call:
    raise_for_status() on a 403 whose body names the setting and the
    folder to put in it."""
    s = server_factory(env=PYTHON_ONLY)
    temp = tempfile.gettempdir()
    try:
        CodeBoxSession("http://127.0.0.1:%d" % s.port, dependencies=["numpy"],
                       execution_options={"mount_points": [
                           {"host_path": temp, "container_path": "/data", "read_only": True}]})
    except HTTPError as exc:
        assert str(exc).startswith("403 Client Error: Forbidden for url: "), str(exc)
        message = exc.response.json()["error"]["message"]
        assert "CODEBOX_MOUNT_ROOTS" in message and temp in message, message
    else:
        raise AssertionError("the session was made without CODEBOX_MOUNT_ROOTS")
    assert s.get("/sessions").json()["sessions"] == []


def test_readme_mount_path_same_inside_and_out(server_factory, tmp_path, monkeypatch, capsys):
    """The README's CODEBOX_MOUNT_PATH=/Users/username/Downloads: the
    example then mounts that folder at the same path inside (a folder of
    the user's home, or of /home for root, whose home is a system folder
    inside the sandbox). A folder under /tmp cannot be seen at its own
    path inside (the session's /tmp is there): a 400 that says so."""
    home = os.path.expanduser("~")
    folder = mount_folder("/home" if os.geteuid() == 0 or home.startswith("/root") else home)
    try:
        s = server_factory(env=dict(PYTHON_ONLY, CODEBOX_MOUNT_ROOTS=folder))
        monkeypatch.chdir(tmp_path)
        session = CodeBoxSession("http://127.0.0.1:%d" % s.port,
                                 dependencies=["numpy", "pandas", "matplotlib"],
                                 execution_options={"mount_points": [
                                     {"host_path": folder, "container_path": folder,
                                      "read_only": True}]})
        tool_call(session, "import os\nprint(sorted(os.listdir(%r)))" % folder)
        assert printed_after_code(capsys.readouterr().out) == "Output:\n['points.csv']\n"
        session.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    folder = mount_folder()
    try:
        s = server_factory(env=dict(PYTHON_ONLY, CODEBOX_MOUNT_ROOTS=folder))
        r = Requests.post("http://127.0.0.1:%d/sessions" % s.port, json={
            "dependencies": [], "execution_options": {"mount_points": [
                {"host_path": folder, "container_path": folder, "read_only": True}]}})
        assert r.status_code == 400, r.content
        message = r.json()["error"]["message"]
        assert folder in message and "/tmp" in message and "/data/in" in message, message
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_chat_without_a_session_makes_and_cleans_up_its_own(server_factory, tmp_path,
                                                             monkeypatch, capsys):
    """chat_with_code_execution(..., session=None): a CodeBoxSession of its
    own with the three dependencies (no execution_options: {}), used, then
    cleaned up."""
    s = server_factory(env=PYTHON_ONLY)
    monkeypatch.chdir(tmp_path)
    Requests.sent.clear()
    session = CodeBoxSession("http://127.0.0.1:%d" % s.port,
                             dependencies=["numpy", "pandas", "matplotlib"])
    assert Requests.sent[0] == ("POST", "/sessions", {
        "dependencies": ["numpy", "pandas", "matplotlib"], "execution_options": {}})
    tool_call(session, "import numpy as np\nnp.arange(3).sum()")
    assert printed_after_code(capsys.readouterr().out) == "Output:\n3\n"
    # a failing cell: its top-level error, as the dict it is
    tool_call(session, "1/0")
    out = printed_after_code(capsys.readouterr().out)
    assert "Errors:\n{'ename': 'ZeroDivisionError', 'evalue': 'division by zero'" in out, out
    session.cleanup()
    # a call after the cleanup: the example's except branch, with the
    # error body the model then reads
    message = tool_call(session, "print(1)")
    out = printed_after_code(capsys.readouterr().out)
    assert out.startswith("Errors:\n404 Client Error: Not Found for url: "), out
    assert "create it with POST /sessions" in json.loads(message)["error"], message
    assert s.get("/sessions").json()["sessions"] == []


def old_execute_code(url, code, dependencies=None):
    """The example's execute_code before sessions: POST /execute with no
    session_id, then the same polling."""
    response = requests.post(f"{url}/execute", json={"code": code,
                                                      "dependencies": dependencies or []})
    response.raise_for_status()
    return poll(url, response.json())


def poll(url, accepted):
    request_id = accepted["request_id"]
    while True:
        status = requests.get(f"{url}/execute/{request_id}/status").json()
        if status["status"] in ["completed", "failed", "error"]:
            break
        time.sleep(1)
    return accepted, requests.get(f"{url}/execute/{request_id}/results").json()


def test_execute_without_a_session_id_makes_one(server_factory):
    """The first README's "Execute Code" call and the first example's
    execute_code(code, dependencies): the session codebox makes is named
    in the 202 and gets the body's dependencies (installed before the code
    runs) and execution_options, as codebox-ai's own did."""
    from test_packages import make_wheel
    wheels = tempfile.mkdtemp(prefix="codeboxai-wheels-")
    os.chmod(wheels, 0o755)
    make_wheel(wheels, "cbx_dep", "1.0", {"cbx_dep/__init__.py": "VALUE = 41\n"})
    make_wheel(wheels, "cbx_evil", "1.0", {"cbx_evil/__init__.py": "EVIL = True\n"})
    try:
        s = server_factory(env=dict(PYTHON_ONLY, CODEBOX_PIP_FIND_LINKS=wheels,
                                    CODEBOX_PACKAGE_DENY="cbx-evil"))
        url = "http://127.0.0.1:%d" % s.port
        # the README's curl, as it is
        r = requests.post(f"{url}/execute", json={
            "code": "print(\"Hello from CodeBox-AI!\")",
            "dependencies": ["numpy", "pandas"],
            "execution_options": {"timeout": 300, "memory_limit": "2G"}})
        assert r.status_code == 202, r.content
        accepted, res = poll(url, r.json())
        sid = accepted["session_id"]
        assert accepted["status"] == "queued" and sid, accepted
        assert [d["name"] for d in accepted["dependencies"]["satisfied"]] == ["numpy", "pandas"]
        assert res["status"] == "completed", res
        assert stream_of(res) == "Hello from CodeBox-AI!\n", res
        # an ordinary session, listed, that later calls may name
        assert [x["session_id"] for x in s.get("/sessions").json()["sessions"]] == [sid]
        r = s.post("/execute", {"session_id": sid, "code": "import pandas\nprint('again')"})
        assert r.status == 202, r.text
        res = s.get("/execute/%s/results?wait=30" % r.json()["request_id"]).json()
        assert stream_of(res) == "again\n", res
        # a dependency the kernel lacks is installed before the code runs
        accepted, res = old_execute_code(url, "import cbx_dep\nprint(cbx_dep.VALUE + 1)",
                                         ["cbx_dep"])
        assert accepted["session_id"] != sid, accepted
        assert [d["name"] for d in accepted["dependencies"]["installed"]] == ["cbx_dep"]
        assert stream_of(res) == "42\n", res
        # execution_options reach the kernel
        r = requests.post(f"{url}/execute", json={
            "code": "import os\nprint(os.environ['GREETING'])",
            "execution_options": {"environment_variables": {"GREETING": "hi there"}}})
        assert r.status_code == 202, r.content
        assert stream_of(poll(url, r.json())[1]) == "hi there\n"
        assert len(s.get("/sessions").json()["sessions"]) == 3
        # refused: the reason, and no session left behind
        r = requests.post(f"{url}/execute", json={"code": "1", "dependencies": ["cbx_evil"]})
        assert r.status_code == 403, r.content
        assert "CODEBOX_PACKAGE_DENY" in r.json()["error"]["message"], r.content
        r = requests.post(f"{url}/execute", json={"code": "1", "execution_options": {
            "mount_points": [{"host_path": "/etc", "container_path": "/data"}]}})
        assert r.status_code == 403 and "CODEBOX_MOUNT_ROOTS" in r.json()["error"]["message"]
        assert len(s.get("/sessions").json()["sessions"]) == 3
    finally:
        shutil.rmtree(wheels, ignore_errors=True)
