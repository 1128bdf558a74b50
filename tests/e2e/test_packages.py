"""Packages (issue 8) against the real server with real kernels:
install_package over MCP and "dependencies" on POST /sessions, from a
find-links folder of wheels the test builds (a package and one that depends
on it), importable in the session that installed them and in no other,
still importable after a kernel restart; the package policy end to end
(denied, not allowed, version outside the allow list, a denied dependency,
URLs, paths, VCS links and installer options), each refusal naming its
rule; a clear error within the time bound when no index is reachable;
npm into a JavaScript session from the public registry; and a clean
shutdown while an install runs."""
import base64
import hashlib
import json
import os
import shutil
import socket
import tempfile
import threading
import time
import urllib.request
import zipfile

import pytest

from conftest import (FIXTURE_KERNELS, descendants, errors_of, mcp_client, mcp_session,
                      proc_cmdline, rest_run, stream_of)


# --------------------------------------------------------------------------
# wheels built by hand: a zip with the module, METADATA, WHEEL and RECORD


def make_wheel(folder, name, version, files, requires=()):
    dist = "%s-%s.dist-info" % (name, version)
    meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
    for r in requires:
        meta += "Requires-Dist: %s\n" % r
    entries = dict(files)
    entries[dist + "/METADATA"] = meta
    entries[dist + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: codebox-tests\n"
                                "Root-Is-Purelib: true\nTag: py3-none-any\n")
    record = []
    for path, data in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data.encode()).digest())
        record.append("%s,sha256=%s,%d" % (path, digest.rstrip(b"=").decode(), len(data)))
    record.append(dist + "/RECORD,,")
    entries[dist + "/RECORD"] = "\n".join(record) + "\n"
    path = os.path.join(folder, "%s-%s-py3-none-any.whl" % (name, version))
    with zipfile.ZipFile(path, "w") as z:
        for p, data in entries.items():
            z.writestr(p, data)
    os.chmod(path, 0o644)


@pytest.fixture(scope="module")
def wheels():
    """A find-links folder the kernel user can read (not under a private
    pytest folder)."""
    top = tempfile.mkdtemp(prefix="codebox-wheels-")
    os.chmod(top, 0o755)
    make_wheel(top, "cbx_base", "1.0", {"cbx_base/__init__.py": "VALUE = 41\n"})
    make_wheel(top, "cbx_base", "2.0", {"cbx_base/__init__.py": "VALUE = 1041\n"})
    make_wheel(top, "cbx_app", "2.0",
               {"cbx_app/__init__.py": "import cbx_base\nVALUE = cbx_base.VALUE + 1\n"},
               ["cbx-base>=1.0"])
    make_wheel(top, "cbx_evil", "1.0", {"cbx_evil/__init__.py": "EVIL = True\n"})
    make_wheel(top, "cbx_needs_evil", "1.0", {"cbx_needs_evil/__init__.py": "import cbx_evil\n"},
               ["cbx-evil"])
    yield top
    shutil.rmtree(top, ignore_errors=True)


# --------------------------------------------------------------------------
# REST and MCP helpers


def installed(result):
    return {(p["name"], p["version"], p["requested"])
            for p in result["structuredContent"]["installed"]}


def refused_rules(refused):
    return {r["requirement"]: r["rule"] for r in refused}


# --------------------------------------------------------------------------
# installing and importing


@pytest.fixture(scope="module")
def server(wheels):
    from conftest import Server
    s = Server(env={"CODEBOX_PIP_FIND_LINKS": wheels,
                    "CODEBOX_PACKAGE_DENY": "CBX.Evil, cbx-base>=2, left-pad",
                    "CODEBOX_KERNEL_PATH": FIXTURE_KERNELS})
    yield s
    s.stop()


def test_mcp_install_import_and_isolation(server):
    call = mcp_client(server)
    r = call("install_package", {"session_id": "pkg-a", "packages": ["cbx-app"]})
    assert not r["isError"], r
    assert installed(r) == {("cbx_app", "2.0", True), ("cbx_base", "1.0", False)}
    assert r["structuredContent"]["location"] == "/session/.packages"
    assert "cbx_app 2.0" in r["content"][0]["text"]
    # importable at once in the session that installed it
    out = rest_run(server, "pkg-a", "import cbx_app\nprint(cbx_app.VALUE, cbx_app.__file__)")
    assert not errors_of(out), out
    assert stream_of(out) == "42 /session/.packages/cbx_app/__init__.py\n"
    # installing again (an upgrade in place) works too
    r = call("install_package", {"session_id": "pkg-a", "packages": ["cbx-base==1.0"]})
    assert not r["isError"], r
    # another session sees nothing of it
    r = server.post("/sessions", {"session_id": "pkg-b"})
    assert r.status == 201, r.text
    out = rest_run(server, "pkg-b", "import os\nprint(os.path.exists('/session/.packages'))\n"
                               "import cbx_app")
    assert stream_of(out) == "False\n"
    assert errors_of(out) and errors_of(out)[0]["ename"] == "ModuleNotFoundError", out
    assert os.path.isdir(os.path.join(server.state_dir, "pkg-a", ".packages", "cbx_app"))
    assert not os.path.exists(os.path.join(server.state_dir, "pkg-b", ".packages"))
    # nothing of the installs' work folders is left behind
    work = os.path.join(server.state_dir, "pkg-a", ".codebox-install")
    assert not os.path.exists(work) or not os.listdir(work)


def test_packages_survive_a_kernel_restart(server):
    call = mcp_client(server)
    r = call("install_package", {"session_id": "pkg-restart", "packages": ["cbx-app"]})
    assert not r["isError"], r
    out = rest_run(server, "pkg-restart", "import os\nos._exit(1)")
    assert out["kernel_restarted"] or errors_of(out), out
    deadline = time.monotonic() + 60
    while True:
        out = rest_run(server, "pkg-restart", "import cbx_app\nprint(cbx_app.VALUE)")
        if not errors_of(out) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert stream_of(out) == "42\n", out


def test_rest_dependencies(server):
    r = server.post("/sessions", {"session_id": "pkg-rest", "dependencies": ["cbx_app==2.0"]})
    assert r.status == 201, r.text
    body = r.json()
    assert body["session_id"] == "pkg-rest" and body["workdir"] == "/session"
    names = {(p["name"], p["version"]) for p in body["dependencies"]["installed"]}
    assert names == {("cbx_app", "2.0"), ("cbx_base", "1.0")}
    out = rest_run(server, "pkg-rest", "import cbx_app\nprint(cbx_app.VALUE)")
    assert stream_of(out) == "42\n", out
    # an empty list is no dependencies at all
    r = server.post("/sessions", {"session_id": "pkg-rest-none", "dependencies": []})
    assert r.status == 201, r.text
    r = server.post("/sessions", {"session_id": "pkg-rest-bad", "dependencies": "cbx-app"})
    assert r.status == 400, r.text


# --------------------------------------------------------------------------
# the policy, end to end


INJECTIONS = {
    "--index-url=http://evil.example/simple": "option",
    "-e .": "option",
    "-r /etc/passwd": "option",
    "https://evil.example/cbx_app-2.0-py3-none-any.whl": "url",
    "git+https://github.com/user/repo.git": "vcs",
    "cbx-app @ file:///tmp/cbx_app.whl": "url",
    "../wheels/cbx_app-2.0-py3-none-any.whl": "path",
    "/tmp/x": "path",
    "cbx-app; os_name == 'posix'": "marker",
}


def test_rest_refusals_name_the_rule(server):
    r = server.post("/sessions", {"session_id": "pkg-deny", "dependencies": ["cbx_evil"]})
    assert r.status == 403, r.text
    body = r.json()
    assert body["error"]["code"] == "forbidden"
    assert "CODEBOX_PACKAGE_DENY" in body["error"]["message"]
    assert refused_rules(body["dependencies"]["refused"]) == {"cbx_evil": "denied"}
    # nothing was kept: the id is free and no folder stays
    assert server.get("/sessions/pkg-deny").status == 404
    # every injection is refused before anything runs
    r = server.post("/sessions", {"session_id": "pkg-inject",
                                  "dependencies": list(INJECTIONS) + ["cbx-app"]})
    assert r.status == 403, r.text
    assert refused_rules(r.json()["dependencies"]["refused"]) == INJECTIONS
    assert server.get("/sessions/pkg-inject").status == 404
    # a version only the deny list's range holds
    r = server.post("/sessions", {"session_id": "pkg-ver", "dependencies": ["cbx-base==2.0"]})
    assert r.status == 403, r.text
    assert refused_rules(r.json()["dependencies"]["refused"]) == {"cbx-base==2.0":
                                                                   "version_denied"}
    # a dependency the deny list names, found at resolution: nothing installed
    r = server.post("/sessions", {"session_id": "pkg-dep", "dependencies": ["cbx-needs-evil"]})
    assert r.status == 403, r.text
    body = r.json()
    assert body["error"]["reason"] == "refused"
    refused = body["dependencies"]["refused"]
    assert [x["rule"] for x in refused] == ["denied"], refused
    assert "dependency" in refused[0]["reason"] and "cbx_evil" in refused[0]["reason"]
    assert server.get("/sessions/pkg-dep").status == 404
    assert not os.path.exists(os.path.join(server.state_dir, "pkg-dep"))


def test_mcp_refusals_and_partial_installs(server):
    call = mcp_client(server)
    r = call("install_package", {"session_id": "pkg-mixed",
                                 "packages": ["cbx-app", "CBX_Evil", "--index-url=http://x"]})
    assert not r["isError"], r
    assert ("cbx_app", "2.0", True) in installed(r)
    assert refused_rules(r["structuredContent"]["refused"]) == {
        "CBX_Evil": "denied", "--index-url=http://x": "option"}
    assert "rule: denied" in r["content"][0]["text"]
    # nothing installable: an error result that still lists the refusals
    r = call("install_package", {"session_id": "pkg-mixed", "packages": list(INJECTIONS)})
    assert r["isError"], r
    assert refused_rules(r["structuredContent"]["refused"]) == INJECTIONS
    r = call("install_package", {"session_id": "pkg-mixed", "packages": ["cbx-needs-evil"]})
    assert r["isError"], r
    assert [x["rule"] for x in r["structuredContent"]["refused"]] == ["denied"]
    out = rest_run(server, "pkg-mixed", "import importlib.util as u\n"
                                   "print(u.find_spec('cbx_needs_evil'), u.find_spec('cbx_evil'))")
    assert stream_of(out) == "None None\n", out
    # bad arguments
    r = call("install_package", {"session_id": "pkg-mixed"})
    assert r["isError"] and "packages is required" in r["content"][0]["text"]
    r = call("install_package", {"session_id": "pkg-mixed", "packages": [1, 2]})
    assert r["isError"] and "list of requirement strings" in r["content"][0]["text"]


def test_other_languages_not_supported(server):
    call = mcp_client(server)
    r = call("install_package", {"session_id": "pkg-other", "kernel": "never-ready",
                                 "packages": ["cbx-app"]})
    assert r["isError"], r
    assert "not supported for this kernel" in r["content"][0]["text"]


@pytest.fixture(scope="module")
def allow_server(wheels):
    from conftest import Server
    s = Server(env={"CODEBOX_PIP_FIND_LINKS": wheels, "CODEBOX_POOL_SIZE": "0",
                    "CODEBOX_PACKAGE_ALLOW": "cbx-app, CBX_Base>=1.0,<2, cbx-needs-evil",
                    "CODEBOX_PACKAGE_DENY": "cbx-evil"})
    yield s
    s.stop()


def test_allow_list(allow_server):
    s = allow_server
    call = mcp_client(s)
    r = call("install_package", {"session_id": "allow-a",
                                 "packages": ["cbx-other", "cbx-base==2.0", "cbx-needs-evil"]})
    assert r["isError"], r
    refused = r["structuredContent"]["refused"]
    assert refused_rules(refused)["cbx-other"] == "not_allowed"
    assert refused_rules(refused)["cbx-base==2.0"] == "version_not_allowed"
    assert refused_rules(refused)["cbx_evil==1.0"] == "denied"      # deny wins
    for x in refused:
        assert "CODEBOX_PACKAGE_" in x["reason"], x
    # allowed, and its dependency kept inside the allow list's range
    r = call("install_package", {"session_id": "allow-a", "packages": ["cbx_app"]})
    assert not r["isError"], r
    assert installed(r) == {("cbx_app", "2.0", True), ("cbx_base", "1.0", False)}
    # what the session already has is satisfied, not installed again
    r = call("install_package", {"session_id": "allow-a", "packages": ["cbx-base>=1"]})
    assert not r["isError"], r
    assert installed(r) == set(), r
    assert [(x["name"], x["version"]) for x in r["structuredContent"]["satisfied"]] == [
        ("cbx_base", "1.0")], r
    # the allow entry's range narrows a wider request
    r = call("install_package", {"session_id": "allow-b", "packages": ["cbx-base>=1"]})
    assert not r["isError"], r
    assert installed(r) == {("cbx_base", "1.0", True)}
    r = s.post("/sessions", {"session_id": "allow-rest", "dependencies": ["cbx-other"]})
    assert r.status == 403, r.text
    assert "CODEBOX_PACKAGE_ALLOW" in r.json()["error"]["message"]


# --------------------------------------------------------------------------
# an index (PEP 503 simple pages over HTTP), no index, an index that never
# answers, shutdown in the middle


@pytest.fixture(scope="module")
def index(wheels):
    """A simple index of the wheels, served on a local port."""
    import http.server
    import re
    root = tempfile.mkdtemp(prefix="codebox-index-")
    by_project = {}
    for name in sorted(os.listdir(wheels)):
        project = re.sub(r"[-_.]+", "-", name.split("-")[0]).lower()
        by_project.setdefault(project, []).append(name)
    for project, files in by_project.items():
        os.makedirs(os.path.join(root, "simple", project))
        links = []
        for f in files:
            with open(os.path.join(wheels, f), "rb") as w:
                digest = hashlib.sha256(w.read()).hexdigest()
            links.append('<a href="/files/%s#sha256=%s">%s</a>' % (f, digest, f))
        with open(os.path.join(root, "simple", project, "index.html"), "w") as out:
            out.write("<html><body>%s</body></html>" % "".join(links))
    shutil.copytree(wheels, os.path.join(root, "files"))

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=root, **kw)

        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d/simple" % httpd.server_address[1]
    httpd.shutdown()
    shutil.rmtree(root, ignore_errors=True)


def test_index_url(server_factory, index):
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0", "CODEBOX_PIP_INDEX_URL": index})
    call = mcp_client(s)
    r = call("install_package", {"session_id": "idx", "packages": ["cbx-app"]})
    assert not r["isError"], r
    assert installed(r) == {("cbx_app", "2.0", True), ("cbx_base", "2.0", False)}
    out = rest_run(s, "idx", "import cbx_app\nprint(cbx_app.VALUE)")
    assert stream_of(out) == "1042\n", out
    r = call("install_package", {"session_id": "idx", "packages": ["cbx-nonexistent"]})
    assert r["isError"], r
    error = r["structuredContent"]["error"]
    assert error["code"] == "not_found", error
    assert index in error["message"]


def test_no_index_is_a_clear_error_not_a_hang(server_factory):
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    call = mcp_client(s)
    started = time.monotonic()
    r = call("install_package", {"session_id": "noindex", "packages": ["codebox-e2e-absent"]},
             headers={"X-Codebox-Exec-Timeout": "30"})
    took = time.monotonic() - started
    assert r["isError"], r
    error = r["structuredContent"]["error"]
    assert error["code"] in ("index_unreachable", "timeout"), error
    assert "CODEBOX_PIP_INDEX_URL" in error["message"] or "within" in error["message"]
    assert took < 40, took
    r = s.post("/sessions", {"session_id": "noindex-rest", "dependencies": ["codebox-e2e-absent"]},
               headers={"X-Codebox-Exec-Timeout": "30"})
    assert r.status == 400, r.text
    assert r.json()["error"]["reason"] in ("index_unreachable", "timeout")
    assert s.get("/sessions/noindex-rest").status == 404


class Blackhole:
    """A TCP server that accepts connections and never answers."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def test_silent_index_is_bounded(server_factory):
    hole = Blackhole()
    try:
        s = server_factory(env={"CODEBOX_POOL_SIZE": "0",
                                "CODEBOX_PIP_INDEX_URL": "http://127.0.0.1:%d/simple" % hole.port})
        call = mcp_client(s)
        started = time.monotonic()
        r = call("install_package", {"session_id": "silent", "packages": ["codebox-e2e-absent"]},
                 headers={"X-Codebox-Exec-Timeout": "6"})
        took = time.monotonic() - started
        assert r["isError"], r
        error = r["structuredContent"]["error"]
        assert error["code"] in ("index_unreachable", "timeout"), error
        assert "127.0.0.1:%d" % hole.port in error["message"] or "6 s" in error["message"]
        assert took < 15, took
    finally:
        hole.close()


def test_cancelled_install_stops_pip(server_factory):
    """notifications/cancelled for install_package kills pip at once rather
    than letting it run to the execution timeout; the session goes on."""
    hole = Blackhole()
    try:
        s = server_factory(env={"CODEBOX_POOL_SIZE": "0",
                                "CODEBOX_PIP_INDEX_URL": "http://127.0.0.1:%d/simple" % hole.port})
        h = {"Accept": "application/json, text/event-stream", "Mcp-Session-Id": mcp_session(s)}
        answers = []

        def install():
            answers.append(s.post("/mcp", {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                           "params": {"name": "install_package", "arguments": {
                                               "session_id": "cx", "packages": ["codebox-e2e-absent"]}}},
                                  headers=h, timeout=120))
        t = threading.Thread(target=install)
        t.start()

        def pips():
            return [p for p, _ in descendants(s.proc.pid) if "pip" in proc_cmdline(p)]
        deadline = time.monotonic() + 30
        while not pips() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pips(), s.log_tail()
        r = s.post("/mcp", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 7, "reason": "user stopped it"}}, headers=h)
        assert r.status == 202, r.text
        deadline = time.monotonic() + 10           # the install's own bound is 300 s
        while pips() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not pips(), s.log_tail()
        t.join(30)
        assert not t.is_alive()
        assert "packages event=cancel session=cx" in s.log()
        call = mcp_client(s)
        r = call("exec_code", {"session_id": "cx", "code": "print(40 + 2)"})
        assert r["structuredContent"]["stdout"] == "42\n", r
    finally:
        hole.close()


def test_shutdown_during_an_install(server_factory):
    hole = Blackhole()
    try:
        s = server_factory(env={"CODEBOX_POOL_SIZE": "0",
                                "CODEBOX_PIP_INDEX_URL": "http://127.0.0.1:%d/simple" % hole.port})
        call = mcp_client(s)
        answers = []

        def install():
            try:
                answers.append(call("install_package", {"session_id": "stop", "packages": ["x"]},
                                    timeout=60))
            except (OSError, AssertionError) as e:
                answers.append(e)
        t = threading.Thread(target=install)
        t.start()
        deadline = time.monotonic() + 30
        while "packages event=start" not in s.log() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "packages event=start" in s.log(), s.log_tail()
        time.sleep(1)
        s.stop()        # exit 0, no process left behind (pip included)
        t.join(30)
        assert not t.is_alive()
    finally:
        hole.close()


# --------------------------------------------------------------------------
# JavaScript: npm from the public registry


def registry_reachable():
    try:
        with urllib.request.urlopen("https://registry.npmjs.org/is-number/7.0.0", timeout=10) as r:
            return r.status == 200
    except Exception:
        return False


def test_javascript_npm_install(server):
    if not registry_reachable():
        pytest.skip("the npm registry (https://registry.npmjs.org) is not reachable from here")
    call = mcp_client(server)
    r = call("install_package", {"session_id": "pkg-js", "language": "javascript",
                                 "packages": ["is-number@7.0.0", "user/repo", "left-pad"]})
    assert not r["isError"], r
    assert installed(r) == {("is-number", "7.0.0", True)}
    # a host path here: this server runs unconfined (its log says why)
    assert r["structuredContent"]["location"] == "/session/node_modules", server.log_tail(80)
    assert refused_rules(r["structuredContent"]["refused"]) == {"user/repo": "shorthand",
                                                                "left-pad": "denied"}
    out = rest_run(server, "pkg-js", "const isNumber = require('is-number');\n"
                                "console.log(isNumber(5), isNumber('x'), "
                                "require.resolve('is-number'))")
    assert not errors_of(out), out
    assert stream_of(out) == "true false /session/node_modules/is-number/index.js\n"
    # what node_modules already holds in the asked range is satisfied, not installed
    r = call("install_package", {"session_id": "pkg-js", "packages": ["is-number@^7"]})
    assert not r["isError"], r
    assert installed(r) == set(), r
    assert [(x["name"], x["version"]) for x in r["structuredContent"]["satisfied"]] == [
        ("is-number", "7.0.0")], r
    # a second install keeps the first (re-judged by the policy)
    r = call("install_package", {"session_id": "pkg-js", "packages": ["is-odd@3.0.1"]})
    assert not r["isError"], r
    out = rest_run(server, "pkg-js", "console.log(require('is-odd')(3), require('is-number')(1))")
    assert stream_of(out) == "true true\n", out
    with open(os.path.join(server.state_dir, "pkg-js", "package.json")) as f:
        deps = json.load(f)["dependencies"]
    assert deps == {"is-number": "7.0.0", "is-odd": "3.0.1"}
    # another JavaScript session sees none of it
    r = server.post("/sessions", {"session_id": "pkg-js-b", "language": "javascript"})
    assert r.status == 201, r.text
    out = rest_run(server, "pkg-js-b", "try { require('is-number'); console.log('found') } "
                                  "catch (e) { console.log(e.code) }")
    assert stream_of(out) == "MODULE_NOT_FOUND\n", out
