"""The HTTP edge, as a web page and a careless client meet it: cross-origin
requests and DNS rebinding refused on every route (REST and /mcp), CORS for
configured origins, 405 with Allow, HEAD, one 404 wording, bodies over
the limit refused before they are read; and what clients send cannot
forge a log field or a metric line."""
import json
import os
import re
import socket
import time

import pytest


EVIL_ORIGINS = ["http://evil.example", "null", "http://127.0.0.1.evil.example:%(port)d",
                "http://localhost.evil.example:%(port)d", "http://localhost:%(other)d",
                "https://evil.example:%(port)d", "file://", "http://[::1].evil.example"]
EVIL_HOSTS = ["evil.example:%(port)d", "127.0.0.1.evil.example:%(port)d",
              "localhost.evil.example", "evil-localhost:%(port)d", "127.0.0.1:%(port)d.evil",
              "[::1].evil.example", "0x7f000001.evil.example"]


def raw(port, data, read_timeout=10):
    """Sends raw bytes; returns what comes back until the server closes or
    read_timeout passes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    s.sendall(data)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    s.close()
    return out


def fill(text, port):
    return text % {"port": port, "other": port + 1}


@pytest.fixture(scope="module")
def edge():
    from conftest import Server
    s = Server(env={"CODEBOX_ALLOWED_ORIGINS": "https://app.example.com",
                    "CODEBOX_POOL_SIZE": "0"})
    yield s
    s.stop()


def sessions_of(s):
    return {x["session_id"] for x in s.get("/sessions").json()["sessions"]}


@pytest.mark.parametrize("origin", EVIL_ORIGINS)
def test_cross_origin_requests_cannot_run_code(edge, origin):
    s = edge
    origin = fill(origin, s.port)
    before = sessions_of(s)
    # a simple request: text/plain needs no preflight in a browser
    h = {"Origin": origin, "Content-Type": "text/plain"}
    r = s.request("POST", "/sessions", body=json.dumps({"session_id": "web"}).encode(),
                  headers=h)
    assert r.status == 403, r.text
    assert r.json()["error"]["code"] == "forbidden"
    r = s.request("POST", "/execute", body=json.dumps({"session_id": "web",
                                                       "code": "1"}).encode(), headers=h)
    assert r.status == 403
    r = s.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                   "params": {"protocolVersion": "2025-06-18",
                                              "capabilities": {},
                                              "clientInfo": {"name": "x", "version": "1"}}},
                  headers={"Origin": origin, "Accept": "application/json, text/event-stream"})
    assert r.status == 403
    assert "Mcp-Session-Id" not in r.headers
    for path in ("/sessions", "/kernelspecs", "/metrics", "/healthz"):
        assert s.request("GET", path, headers={"Origin": origin}).status == 403, path
    assert sessions_of(s) == before


@pytest.mark.parametrize("host", EVIL_HOSTS)
def test_rebound_hosts_are_refused(edge, host):
    s = edge
    host = fill(host, s.port)
    for method, path in (("GET", "/sessions"), ("POST", "/mcp"), ("GET", "/healthz"),
                         ("GET", "/signed/default/x/1/y/z")):
        body = b"{}" if method == "POST" else b""
        resp = raw(s.port, ("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n"
                            "Connection: close\r\n\r\n" % (method, path, host, len(body))
                            ).encode() + body)
        assert resp.startswith(b"HTTP/1.1 403"), (path, host, resp[:200])


@pytest.mark.parametrize("host", ["localhost", "localhost:%(port)d", "127.0.0.1:%(port)d",
                                  "127.5.6.7", "[::1]:%(port)d", "LocalHost"])
def test_local_hosts_and_no_origin_work(edge, host):
    s = edge
    resp = raw(s.port, ("GET /sessions HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                        % fill(host, s.port)).encode())
    assert resp.startswith(b"HTTP/1.1 200"), resp[:200]


def test_own_origin_works_and_gets_no_cors(edge):
    s = edge
    for origin in ("http://localhost:%d" % s.port, "http://127.0.0.1:%d" % s.port):
        r = s.request("GET", "/sessions", headers={"Origin": origin})
        assert r.status == 200
        assert "Access-Control-Allow-Origin" not in r.headers


def test_allowed_origin_gets_cors(edge):
    s = edge
    pre = s.request("OPTIONS", "/execute", headers={
        "Origin": "https://app.example.com", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, authorization"})
    assert pre.status == 204
    assert pre.headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert "POST" in pre.headers["Access-Control-Allow-Methods"]
    allowed = pre.headers["Access-Control-Allow-Headers"].lower()
    for h in ("content-type", "authorization", "mcp-session-id", "mcp-protocol-version"):
        assert h in allowed
    r = s.request("GET", "/sessions", headers={"Origin": "https://app.example.com"})
    assert r.status == 200
    assert r.headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert "Origin" in r.headers["Vary"]
    assert "Mcp-Session-Id" in r.headers["Access-Control-Expose-Headers"]
    # a preflight from anywhere else is refused
    bad = s.request("OPTIONS", "/execute", headers={"Origin": "https://app.example.com.evil",
                                                     "Access-Control-Request-Method": "POST"})
    assert bad.status == 403


def test_checks_hold_with_tokens(server_factory):
    s = server_factory(env={"CODEBOX_API_TOKENS": "tok"}, token="tok")
    r = s.request("GET", "/sessions", headers={"Origin": "http://evil.example"})
    assert r.status == 403
    resp = raw(s.port, b"GET /sessions HTTP/1.1\r\nHost: evil.example\r\n"
                       b"Authorization: Bearer tok\r\nConnection: close\r\n\r\n")
    assert resp.startswith(b"HTTP/1.1 403"), resp[:200]
    assert s.get("/sessions").status == 200


def test_public_url_host_and_origin(server_factory):
    s = server_factory(env={"CODEBOX_PUBLIC_URL": "https://code.example.com/base"})
    resp = raw(s.port, b"GET /sessions HTTP/1.1\r\nHost: code.example.com\r\n"
                       b"Origin: https://code.example.com\r\nConnection: close\r\n\r\n")
    assert resp.startswith(b"HTTP/1.1 200"), resp[:200]
    resp = raw(s.port, b"GET /sessions HTTP/1.1\r\nHost: code.example.com.evil.example\r\n"
                       b"Connection: close\r\n\r\n")
    assert resp.startswith(b"HTTP/1.1 403"), resp[:200]


def test_bad_allowed_origins_setting_is_refused(tmp_path):
    import subprocess
    from conftest import BIN
    r = subprocess.run([BIN, "serve", "--port", "0", "--state-dir", str(tmp_path / "s")],
                       env=dict(os.environ, CODEBOX_ALLOWED_ORIGINS="app.example.com"),
                       capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert r.returncode == 2 and "CODEBOX_ALLOWED_ORIGINS" in r.stderr, r.stderr


@pytest.mark.parametrize("method, path, allow", [
    ("GET", "/execute", "POST"), ("PATCH", "/sessions/x", "GET, HEAD, DELETE"),
    ("PUT", "/healthz", "GET, HEAD"), ("DELETE", "/healthz", "GET, HEAD"),
    ("POST", "/kernelspecs", "GET, HEAD"), ("DELETE", "/execute/r/status", "GET, HEAD"),
    ("GET", "/sql", "POST"), ("POST", "/sessions/x/artifacts", "GET, HEAD")])
def test_wrong_methods_get_405_with_allow(edge, method, path, allow):
    r = edge.request(method, path)
    assert r.status == 405, r.text
    assert r.headers["Allow"] == allow
    assert r.json()["error"]["code"] == "method_not_allowed"


def test_head_and_one_404_wording(edge):
    s = edge
    for path in ("/healthz", "/sessions", "/kernelspecs", "/metrics"):
        resp = raw(s.port, ("HEAD %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                            % path).encode())
        head, _, body = resp.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), (path, head)
        assert body == b"", (path, body[:100])
        assert b"Content-Length: 0" not in head
    words = set()
    for path in ("/nope", "/sessions/a/b", "/execute/r", "/execute/r/other", "/"):
        r = s.request("GET", path)
        assert r.status == 404
        words.add(r.json()["error"]["message"].split(" ", 1)[0])
    r = s.get("/execute/no-such-id/status")
    assert r.status == 404 and r.json()["error"]["code"] == "request_not_found"
    assert words == {"no"}, words


@pytest.mark.parametrize("expect", [False, True])
def test_too_large_body_refused_before_it_is_read(edge, expect):
    s = edge
    head = ("POST /execute HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n%s\r\n" % (80 << 20, "Expect: 100-continue\r\n"
                                               if expect else "")).encode()
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    sock.sendall(head)
    start = time.monotonic()
    data = sock.recv(4096)
    took = time.monotonic() - start
    sock.close()
    assert data.startswith(b"HTTP/1.1 413"), data[:200]
    assert b"100 Continue" not in data
    assert took < 5, took
    # PUT has its own, larger limit, refused the same way
    sid = "big"
    s.post("/sessions", {"session_id": sid})
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    sock.sendall(("PUT /sessions/%s/files/input/x HTTP/1.1\r\nHost: localhost\r\n"
                  "Content-Length: %d\r\nExpect: 100-continue\r\n\r\n" % (sid, 300 << 20)
                  ).encode())
    data = sock.recv(4096)
    sock.close()
    assert data.startswith(b"HTTP/1.1 413"), data[:200]
    assert not os.path.exists(os.path.join(s.state_dir, sid, "input", "x"))


def test_an_encoded_nul_is_refused_not_a_shorter_name(edge):
    """"%00" in a path must not end the name early: "input/a%00b" is not
    "input/a", and "/sessions/nul%00x" is not session nul."""
    s = edge
    assert s.post("/sessions", {"session_id": "nul"}).status == 201
    folder = os.path.join(s.state_dir, "nul", "input")
    for path in ("input/a%00b", "input/a%00", "input/a%00/../../x"):
        r = s.request("PUT", "/sessions/nul/files/" + path, body=b"x")
        assert r.status == 400, (path, r)
        assert r.json()["error"]["code"] == "invalid_path", r.json()
    assert os.listdir(folder) == []
    assert s.request("PUT", "/sessions/nul/files/input/a", body=b"kept").status == 201
    assert s.get("/sessions/nul/files/input/a%00b").status == 400
    # a session id with an encoded NUL names no session, and DELETE of it
    # ends none
    for method in ("GET", "DELETE"):
        r = s.request(method, "/sessions/nul%00x")
        assert r.status in (400, 404), (method, r)
    assert "nul" in sessions_of(s)
    assert s.get("/sessions/nul/files/input/a").body == b"kept"
    # percent-encoding still works for everything else
    r = s.request("PUT", "/sessions/nul/files/input/%41%20b", body=b"y")
    assert r.status == 201, r
    assert sorted(os.listdir(folder)) == ["A b", "a"]
    assert s.delete("/sessions/nul").status == 204


def test_a_request_cannot_write_a_log_line_of_its_own(edge):
    """An encoded newline or escape sequence in a path is written to the
    log as \\xHH: no request forges a line or drives a terminal."""
    s = edge
    fake = "2020-01-01T00:00:00.000Z info codebox: forged"
    r = s.get("/sessions/a%0a" + fake.replace(" ", "%20") + "%0d%1b%5b31m%7f")
    assert r.status == 400
    line = 'path="/sessions/a\\x0a2020-01-01T00:00:00.000Z info codebox: forged'
    deadline = time.monotonic() + 10     # the line is written after the answer
    while line not in s.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = s.log()
    assert "\n" + fake not in log
    assert "\x1b" not in log and "\r" not in log and "\x7f" not in log
    assert line in log, s.log_tail()
    assert "\\x0d\\x1b[31m\\x7f" in log


# --------------------------------------------------------------------------
# log fields, whatever clients send

def log_fields(text):
    """The key=value fields of a log line's text (after "codebox: "), in
    order, quoted values unquoted (\\" and \\\\ undone); words that are
    not fields are skipped. Fails on a quote that does not close."""
    fields, i, n = [], 0, len(text)
    while i < n:
        if text[i] == " ":
            i += 1
            continue
        j = i
        while j < n and text[j] not in " =":
            j += 1
        if j == n or text[j] == " " or j == i:
            i = j + 1 if j == i else j
            continue
        key, j = text[i:j], j + 1
        if j < n and text[j] == '"':
            k, value = j + 1, ""
            while True:
                assert k < n, "a quote that does not close: %r" % text
                if text[k] == "\\":
                    value += text[k + 1]
                    k += 2
                elif text[k] == '"':
                    k += 1
                    break
                else:
                    value += text[k]
                    k += 1
            assert k == n or text[k] == " ", "text after a quoted value: %r" % text
        else:
            k = j
            while k < n and text[k] != " ":
                k += 1
            value = text[j:k]
        fields.append((key, value))
        i = k
    return fields


def log_line(s, needle, timeout=10):
    """The text after "codebox: " of the first log line holding needle
    (the access line is written after the answer)."""
    deadline = time.monotonic() + timeout
    while True:
        for line in s.log().splitlines():
            if needle in line:
                return line.split("codebox: ", 1)[1]
        assert time.monotonic() < deadline, "no %r in\n%s" % (needle, s.log_tail())
        time.sleep(0.05)


def test_a_request_cannot_forge_log_fields(edge):
    """A path (or an MCP tool's name) with spaces, '=' and quotes stays one
    quoted field: the access line has one status= and one tenant=."""
    from conftest import mcp_session
    s = edge
    cases = [("/a%20status=200%20tenant=bob", "/a status=200 tenant=bob"),
             ("/b%22%20status=201%5c%20tenant=%22x", '/b" status=201\\ tenant="x'),
             ("/c=d", "/c=d")]
    for sent, path in cases:
        assert s.get(sent).status == 404
        quoted = '"%s"' % path.replace("\\", "\\\\").replace('"', '\\"')
        fields = log_fields(log_line(s, "path=" + quoted))
        keys = [k for k, _ in fields]
        assert keys.count("status") == 1 and keys.count("tenant") == 1, fields
        assert keys.count("path") == 1, fields
        got = dict(fields)
        assert got["path"] == path and got["status"] == "404", fields
        assert got["tenant"] == "default", fields
    # MCP: a tool's name is the client's text too
    sid = mcp_session(s)
    name = "x status=500 tenant=bob"
    r = s.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                   "params": {"name": name, "arguments": {}}},
                  headers={"Accept": "application/json", "Mcp-Session-Id": sid})
    assert r.status == 200, r
    fields = log_fields(log_line(s, 'tool="x status=500'))
    keys = [k for k, _ in fields]
    assert keys.count("status") == 1 and keys.count("tenant") == 1, fields
    assert dict(fields)["tool"] == name and dict(fields)["status"] == "200", fields

