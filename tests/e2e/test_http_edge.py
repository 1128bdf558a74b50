"""The HTTP edge, as a web page and a careless client meet it: cross-origin
requests and DNS rebinding refused on every route (REST and /mcp), CORS for
configured origins, 405 with Allow, HEAD, one 404 wording, bodies over
the limit refused before they are read; and what clients send cannot
forge a log field or a metric line."""
import json
import os
import re
import socket
import subprocess
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
# log fields and /metrics, whatever clients send

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


SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)'
                       r'(?:\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
                       r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*)\})?'
                       r' (\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
META_RE = re.compile(r'^# (?:HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* '
                     r'(?:counter|gauge|histogram|summary|untyped))$')


def parse_exposition(text):
    """Checks a /metrics text line by line against the Prometheus text
    format (`name{label="value",...} number`, `# HELP`, `# TYPE`; label
    values escaped; no series twice); returns [(name, {labels}, value)]."""
    assert text.endswith("\n"), text[-200:]
    samples, seen = [], set()
    for line in text[:-1].split("\n"):
        if line.startswith("#"):
            assert META_RE.match(line), "not a HELP or TYPE line: %r" % line
            continue
        m = SAMPLE_RE.match(line)
        assert m, "not a sample: %r" % line
        value = float(m.group(3))
        labels = {k: re.sub(r"\\(.)", lambda e: "\n" if e.group(1) == "n" else e.group(1), v)
                  for k, v in LABEL_RE.findall(m.group(2) or "")}
        key = (m.group(1), tuple(sorted(labels.items())))
        assert key not in seen, "a series twice: %r" % line
        seen.add(key)
        samples.append((m.group(1), labels, value))
    return samples


def test_metrics_valid_whatever_clients_send(server_factory):
    """Hostile paths and methods, with and without a token, and 300 junk
    paths: /metrics still parses strictly, junk counts under one
    route="unmatched", the real routes are still there, and each tenant
    sees the server's totals and its own series only."""
    s = server_factory(env={"CODEBOX_API_TOKENS": "alice:tokA,bob:tokB",
                            "CODEBOX_POOL_SIZE": "0"})
    alice, bob = {"token": "tokA"}, {"token": "tokB"}
    assert s.get("/sessions", **alice).status == 200
    assert s.get("/kernelspecs", **bob).status == 200
    hostile = ["/x%0afake_metric%201", '/y%22%7d%20fake_metric%201%0a', "/z%5c%22%5c",
               "/sessions/a%0afake_metric%201", "/q%0d%0a%23%20TYPE%20x%20counter"]
    for path in hostile:
        for tok in (None, "tokA", "tokB"):
            assert s.get(path, token=tok).status in (400, 401, 404)
    for i in range(300):
        assert s.get("/junk-%d" % i, token="tokA" if i % 2 else None).status in (401, 404)
    for method in (b"BREW", b'G"ET', b"X\\Y", b"PROPFIND"):
        raw(s.port, method + b" /sessions HTTP/1.1\r\nHost: localhost\r\n"
                             b"Authorization: Bearer tokA\r\nConnection: close\r\n\r\n")
    assert s.get("/sessions", **alice).status == 200
    assert s.get("/metrics", token=None).status == 401

    views = {}
    for tenant, tok in (("alice", "tokA"), ("bob", "tokB")):
        r = s.get("/metrics", token=tok)
        assert r.status == 200, r
        assert "fake_metric" not in r.text and "# TYPE x" not in r.text
        samples = parse_exposition(r.text)
        names = {n for n, _, _ in samples}
        for total in ("codebox_sessions_live", "codebox_kernel_starts_total",
                      "codebox_executions_total", "codebox_http_requests_dropped_total"):
            assert total in names, (total, r.text)
        http = [(labels, v) for n, labels, v in samples if n == "codebox_http_requests_total"]
        assert {l.get("tenant") for l, _ in http} <= {tenant, None}, r.text
        routes = {l["route"] for l, _ in http}
        assert all(x == "unmatched" or x.startswith("/") for x in routes), routes
        assert not any("junk" in x or "\n" in x for x in routes), routes
        assert {l["method"] for l, _ in http} <= {"GET", "HEAD", "POST", "PUT", "DELETE",
                                                  "PATCH", "OPTIONS", "other"}, r.text
        views[tenant] = http
    own = {(l["route"], l["code"]): v for l, v in views["alice"] if l.get("tenant") == "alice"}
    assert own[("/sessions", "200")] == 2, views["alice"]
    assert own[("unmatched", "404")] >= 150, views["alice"]     # the junk, one series
    assert ("/kernelspecs", "200") not in own
    bobs = {(l["route"], l["code"]): v for l, v in views["bob"] if l.get("tenant") == "bob"}
    assert bobs[("/kernelspecs", "200")] == 1, views["bob"]
    assert ("/sessions", "200") not in bobs
    # requests refused before a token was checked are no tenant's: both see them
    nobody = {(l["route"], l["code"]) for l, _ in views["bob"] if "tenant" not in l}
    assert ("unmatched", "401") in nobody, views["bob"]


def test_hostile_tenant_names_are_refused(tmp_path):
    """A tenant name is a label value too: one that is not 1-64 of
    [A-Za-z0-9_.-] stops the server at start (the escaping of any that
    passed is the unit test test_metrics)."""
    from conftest import BIN
    for tokens in ('a"b:tok', "a\\b:tok", "a b:tok", "a}{:tok"):
        r = subprocess.run([BIN, "serve", "--port", "0", "--state-dir", str(tmp_path / "s")],
                           env=dict(os.environ, CODEBOX_API_TOKENS=tokens),
                           capture_output=True, text=True, timeout=30, cwd=tmp_path)
        assert r.returncode != 0 and "bad tenant name" in r.stderr, (tokens, r.stderr)


def _until_closed(sock, limit_s):
    """Reads sock until the server closes it; the seconds that took, or
    None when it stayed open for limit_s (a bound on the loop, not an
    assertion on speed)."""
    start = time.monotonic()
    sock.settimeout(0.5)
    while time.monotonic() - start < limit_s:
        try:
            if sock.recv(4096) == b"":
                return time.monotonic() - start
        except socket.timeout:
            continue
        except ConnectionResetError:
            return time.monotonic() - start
    return None


def test_a_request_must_arrive_whole_in_time(server_factory):
    """A client that trickles its header lines or its body (each line
    resetting any idle timeout) is cut CODEBOX_HTTP_REQUEST_TIMEOUT after
    its connection was ready for a request; what is answered for longer
    (a long poll, an event stream, a websocket) is not."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0", "CODEBOX_HTTP_REQUEST_TIMEOUT": "3",
                            "CODEBOX_HTTP_IDLE_TIMEOUT": "3"})
    assert s.post("/sessions", {"session_id": "t"}).status == 201
    rid = s.post("/execute", {"session_id": "t", "code": "import time; time.sleep(6); print('slept')"}
                 ).json()["request_id"]
    heads = socket.create_connection(("127.0.0.1", s.port))
    heads.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    body = socket.create_connection(("127.0.0.1", s.port))
    body.sendall(b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 1000\r\n\r\n{")
    trickled = 0
    for _ in range(40):         # a line or a byte every 0.25 s: never idle
        try:
            heads.sendall(b"X-Slow-%d: y\r\n" % trickled)
            body.sendall(b" ")
        except (BrokenPipeError, ConnectionResetError):
            break
        trickled += 1
        time.sleep(0.25)
    assert _until_closed(heads, 10) is not None, "the trickling headers were never cut"
    assert _until_closed(body, 10) is not None, "the trickling body was never cut"
    assert trickled < 40, trickled
    # the long poll outlived the deadline and got its answer
    res = s.get("/execute/%s/results?wait=30" % rid).json()
    assert res["status"] == "completed" and res["output"][0]["content"] == "slept\n", res
    # an event stream and a websocket live past it too
    import websocket
    ws = websocket.create_connection("ws://127.0.0.1:%d/api/kernels/t/channels" % s.port,
                                     timeout=30)
    rid = s.post("/execute", {"session_id": "t", "code": "import time; time.sleep(5); print(1)"}
                 ).json()["request_id"]
    events = socket.create_connection(("127.0.0.1", s.port))
    events.sendall(b"GET /execute/%s/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % rid.encode())
    streamed = b""
    events.settimeout(30)
    while b"event: end" not in streamed:
        chunk = events.recv(65536)
        assert chunk, streamed[-200:]
        streamed += chunk
    events.close()
    ws.send(json.dumps({"header": {"msg_id": "k1", "msg_type": "kernel_info_request",
                                   "session": "x", "username": "u", "version": "5.3"},
                        "parent_header": {}, "metadata": {}, "content": {}, "channel": "shell"}))
    while json.loads(ws.recv()).get("msg_type") != "kernel_info_reply":
        pass
    ws.close()
    assert "no whole request in time" in s.log()
    assert s.get("/healthz").status == 200


def test_the_per_address_bound_makes_room_for_clients_that_behave(server_factory):
    """An address at CODEBOX_MAX_CONNECTIONS_PER_ADDRESS: a new connection
    takes the place of its oldest slow one (waiting for its request over a
    second), so clients that behave are not locked out by ones that trickle."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0", "CODEBOX_MAX_CONNECTIONS_PER_ADDRESS": "8"})
    slow = []
    for _ in range(8):
        c = socket.create_connection(("127.0.0.1", s.port))
        c.sendall(b"GET /healthz HTTP/1.1\r\n")     # never finished
        slow.append(c)
    time.sleep(1.5)             # they are now slow ones (waiting over a second)
    for _ in range(3):
        assert s.get("/healthz").status == 200
    closed = sum(_until_closed(c, 0.5) is not None for c in slow)
    assert closed >= 1, closed
    for c in slow:
        c.close()
