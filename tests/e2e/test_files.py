"""Files in and out (issue 7) against the real server: upload_file over MCP
(a local HTTP server started by the test serves files, redirects, a huge
endless body and a slow one), the SSRF guard (loopback, private, link-local
and, inside a network namespace where a public address is local, a redirect
from a public address to loopback), name sanitising, collision suffixes, the
size limit and the timeout; and the gateway's signed artifact links."""
import glob
import hashlib
import hmac
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest

from conftest import error_text, mcp_client, mcp_session, ok, rest_run

HERE = os.path.dirname(os.path.abspath(__file__))
ALLOW = {"CODEBOX_DOWNLOAD_ALLOW_PRIVATE": "1", "CODEBOX_POOL_SIZE": "0"}
HUGE = 100 << 20


# --------------------------------------------------------------------------
# the test's own HTTP server


class _Handler(http.server.BaseHTTPRequestHandler):
    """/files/NAME (a small CSV, different each time), /redirect/N (N hops,
    then /files/data.csv), /to?url=U (one redirect to U), /name/... (a
    file under any name), /huge and /huge-declared (100 MB, without and
    with Content-Length), /slow (a byte a second)."""
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def _send(self, status, body, ctype="text/plain", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location):
        self._send(302, b"", headers=[("Location", location)])

    def do_GET(self):
        st = self.server.state
        path, _, query = self.path.partition("?")
        if path.startswith("/files/"):
            with st["lock"]:
                st["hits"] += 1
                n = st["hits"]
            self._send(200, ("col\n%d\n" % n).encode(), "text/csv")
        elif path.startswith("/redirect/"):
            n = int(path.rsplit("/", 1)[1])
            self._redirect("/redirect/%d" % (n - 1) if n > 1 else "/files/data.csv")
        elif path == "/to":
            self._redirect(urllib.parse.parse_qs(query)["url"][0])
        elif path.startswith("/sized/"):
            self._send(200, b"x" * int(path.rsplit("/", 1)[1]), "application/octet-stream")
        elif path.startswith("/name/"):
            self._send(200, b"hostile\n")
        elif path in ("/huge", "/huge-declared"):
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            if path == "/huge-declared":
                self.send_header("Content-Length", str(HUGE))
            self.end_headers()
            chunk, sent = b"x" * 65536, 0
            st["huge_done"].clear()
            try:
                while sent < HUGE:
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    st["huge_sent"] = sent
            except OSError:
                pass
            finally:
                st["huge_done"].set()
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            try:
                for _ in range(60):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
        else:
            self._send(404, b"no such thing\n")


class FileServer:
    """The handler above on host:random port, in a thread."""

    def __init__(self, host="127.0.0.1"):
        self.httpd = http.server.ThreadingHTTPServer((host, 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.state = {"lock": threading.Lock(), "hits": 0, "huge_sent": 0,
                            "huge_done": threading.Event()}
        self.host = host
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return "http://%s:%d%s" % (self.host, self.port, path)

    @property
    def state(self):
        return self.httpd.state

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def files():
    s = FileServer()
    yield s
    s.close()


# --------------------------------------------------------------------------
# MCP over HTTP


def input_dir(server, session):
    """The host folder of a session's input/ (whatever the tenant layout)."""
    found = glob.glob(os.path.join(server.state_dir, "**", session, "input"), recursive=True)
    assert len(found) == 1, found
    return found[0]


def upload(call, session, url, **kw):
    return call("upload_file", dict({"session_id": session, "url": url}, **kw))


def upload_in_background(call, session, url):
    """Starts upload_file on a thread; returns (thread, {"r": result} once done)."""
    done = {}
    t = threading.Thread(target=lambda: done.setdefault("r", upload(call, session, url)))
    t.start()
    return t, done


# --------------------------------------------------------------------------
# downloads that work


def test_download_lands_in_input_and_kernel_reads_it(server_factory, files):
    s = server_factory(env=ALLOW)
    call = mcp_client(s)
    out = ok(upload(call, "dl", files.url("/files/data.csv")))
    info = ok(call("session_info", {"session_id": "dl"}))
    assert out["saved_path"] == info["input_dir"] + "/data.csv"
    assert out["content_type"] == "text/csv"
    host = input_dir(s, "dl")
    assert sorted(os.listdir(host)) == ["data.csv"]         # no temporary file left
    with open(os.path.join(host, "data.csv"), "rb") as f:
        content = f.read()
    assert out["size"] == len(content)
    # the kernel (sandboxed, another user) opens it by the returned path
    r = call("exec_code", {"session_id": "dl",
                           "code": "print(open(%r).read(), end='')" % out["saved_path"]})
    assert r["structuredContent"]["stdout"] == content.decode(), r
    # and may change it: the file belongs to the kernel user
    r = call("exec_code", {"session_id": "dl",
                           "code": "open(%r, 'a').write('more\\n'); print('ok')"
                           % out["saved_path"]})
    assert r["structuredContent"]["stdout"] == "ok\n", r


def test_code_box_arguments(server_factory, files):
    """CodeBoxMCP's upload_file takes blob_url and filename (issue 16)."""
    s = server_factory(env=ALLOW)
    call = mcp_client(s)
    out = ok(call("upload_file", {"session_id": "cb", "blob_url": files.url("/files/data.csv"),
                                  "filename": "sales.csv"}))
    assert out["saved_path"].endswith("/input/sales.csv"), out
    assert out["filename"] == "sales.csv"
    assert sorted(os.listdir(input_dir(s, "cb"))) == ["sales.csv"]
    # the same address under both names is fine; two different ones are not
    url = files.url("/files/data.csv")
    assert ok(call("upload_file", {"session_id": "cb", "url": url, "blob_url": url}))
    text = error_text(call("upload_file", {"session_id": "cb", "url": url,
                                           "blob_url": files.url("/files/other.csv")}))
    assert "not two different" in text, text
    assert "blob_url" in error_text(call("upload_file", {"session_id": "cb"}))


def test_redirects_collisions_and_names(server_factory, files):
    s = server_factory(env=ALLOW)
    call = mcp_client(s)
    # a chain of redirects within the limit: named after the final URL
    first = ok(upload(call, "n", files.url("/redirect/4")))
    assert first["saved_path"].endswith("/input/data.csv")
    # collisions get a suffix; nothing is replaced
    second = ok(upload(call, "n", files.url("/files/data.csv")))
    third = ok(upload(call, "n", files.url("/files/data.csv")))
    assert second["saved_path"].endswith("/input/data-1.csv")
    assert third["saved_path"].endswith("/input/data-2.csv")
    host = input_dir(s, "n")
    contents = {n: open(os.path.join(host, n)).read() for n in os.listdir(host)}
    assert len(set(contents.values())) == 3, contents
    # hostile names, from the filename argument or the URL, stay in input/
    cases = [
        ({"filename": "../../etc/passwd"}, "/files/x", "passwd"),
        ({"filename": ".bashrc"}, "/files/x", "bashrc"),
        ({"filename": "a/b\\c.txt"}, "/files/x", "c.txt"),
        ({"filename": "tab\tand\nnewline.txt"}, "/files/x", "tabandnewline.txt"),
        ({"filename": ".."}, "/files/x", "download"),
        ({}, "/name/..%2F..%2Fescaped.txt", "escaped.txt"),
        ({}, "/name/%2e%2e", "download-1"),
        ({}, "/name/.profile", "profile"),
        ({}, "/name/a%00b.txt", "ab.txt"),
        ({}, "/name/", "download-2"),
    ]
    info = ok(call("session_info", {"session_id": "n"}))
    for extra, path, want in cases:
        out = ok(upload(call, "n", files.url(path), **extra))
        assert out["saved_path"] == info["input_dir"] + "/" + want, (extra, path, out)
        assert out["filename"] == want
    # nothing landed anywhere but input/, and no hidden file was made
    for root, _, names in os.walk(s.state_dir):
        for name in names:
            if name in ("passwd", "bashrc", "escaped.txt"):
                assert root == host, os.path.join(root, name)
    assert not [n for n in os.listdir(host) if n.startswith(".")]


def test_bad_urls_and_http_errors(server_factory, files):
    s = server_factory(env=ALLOW)
    call = mcp_client(s)
    for url in ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/",
                "dict://127.0.0.1:11211/stat"]:
        text = error_text(upload(call, "b", url))
        assert "only http and https" in text, (url, text)
    for url in ["not a url", "/etc/passwd", "http://"]:
        text = error_text(upload(call, "b", url))
        assert "URL" in text, (url, text)
    assert "url is required" in error_text(call("upload_file", {"session_id": "b"}))
    # a redirect to a scheme other than http(s)
    text = error_text(upload(call, "b", files.url("/to?url=" + urllib.parse.quote(
        "file:///etc/passwd"))))
    assert "not http or https" in text, text
    # too many redirects
    text = error_text(upload(call, "b", files.url("/redirect/7")))
    assert "more than 5 redirects" in text, text
    text = error_text(upload(call, "b", files.url("/missing")))
    assert "HTTP 404" in text, text
    assert os.listdir(input_dir(s, "b")) == []


# --------------------------------------------------------------------------
# limits


def test_max_size_enforced_while_streaming(server_factory, files):
    s = server_factory(env=ALLOW)
    call = mcp_client(s, headers={"X-Codebox-Max-Download-Size": str(1 << 20)})
    for path in ("/huge", "/huge-declared"):
        files.state["huge_sent"] = 0
        t0 = time.monotonic()
        text = error_text(upload(call, "big", files.url(path)))
        took = time.monotonic() - t0
        assert "larger than the limit of 1048576 bytes" in text, text
        assert took < 15, took
        assert files.state["huge_done"].wait(10), "the server kept sending"
        # stopped early: far less than the 100 MB offered went out
        assert files.state["huge_sent"] < 32 << 20, (path, files.state["huge_sent"])
    assert os.listdir(input_dir(s, "big")) == []         # no partial file


def test_timeout_enforced(server_factory, files):
    s = server_factory(env=dict(ALLOW, CODEBOX_DOWNLOAD_TIMEOUT="2"))
    call = mcp_client(s)
    t0 = time.monotonic()
    text = error_text(upload(call, "slow", files.url("/slow")))
    took = time.monotonic() - t0
    assert "did not finish within 2 seconds" in text, text
    assert 1.5 < took < 10, took
    assert os.listdir(input_dir(s, "slow")) == []
    # the gateway stays responsive during downloads (they run off the loop)
    assert ok(upload(call, "slow", files.url("/files/quick.csv")))["size"] > 0


@pytest.mark.alone
def test_downloads_do_not_block_the_gateway(server_factory, files):
    s = server_factory(env=dict(ALLOW, CODEBOX_DOWNLOAD_TIMEOUT="4"))
    call = mcp_client(s)
    ok(call("session_info", {"session_id": "p"}))
    t, done = upload_in_background(call, "p", files.url("/slow"))
    time.sleep(0.5)
    t0 = time.monotonic()
    assert s.get("/sessions").status == 200
    assert ok(call("list_files", {"session_id": "p"}))
    assert time.monotonic() - t0 < 1.5
    t.join(20)
    assert "did not finish" in error_text(done["r"])


# --------------------------------------------------------------------------
# the SSRF guard


def test_private_addresses_refused(server_factory, files):
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    call = mcp_client(s)
    cases = [
        (files.url("/files/data.csv"), "127.0.0.1", "loopback"),
        ("http://localhost:%d/files/data.csv" % files.port, None, "loopback"),
        ("http://[::1]:%d/files/data.csv" % files.port, "::1", "loopback"),
        ("http://[::ffff:127.0.0.1]:%d/x" % files.port, None, "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "link-local"),
        ("http://10.0.0.1/x", "10.0.0.1", "private"),
        ("http://192.168.1.1/x", "192.168.1.1", "private"),
        ("http://100.64.0.1/x", "100.64.0.1", "carrier-grade NAT"),
        ("http://0.0.0.0:%d/x" % files.port, "0.0.0.0", "unspecified"),
        ("http://[fd00::1]/x", "fd00::1", "private"),
        ("http://[fe80::1]/x", None, "link-local"),
        ("http://2130706433:%d/x" % files.port, "127.0.0.1", "loopback"),   # 127.0.0.1 as a number
    ]
    for url, ip, kind in cases:
        t0 = time.monotonic()
        text = error_text(upload(call, "ssrf", url))
        assert "refused to connect" in text and kind in text, (url, text)
        assert "CODEBOX_DOWNLOAD_ALLOW_PRIVATE=1" in text, text
        if ip:
            assert ip in text, (url, text)
        assert time.monotonic() - t0 < 10
    hits = files.state["hits"]
    # a redirect from the (refused) loopback server never reaches anything
    text = error_text(upload(call, "ssrf", files.url("/redirect/1")))
    assert "refused" in text
    assert files.state["hits"] == hits
    assert os.listdir(input_dir(s, "ssrf")) == []


NETNS_SCRIPT = r"""
import json, os, subprocess, sys, urllib.parse
sys.path.insert(0, sys.argv[1])
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
subprocess.run(["ip", "addr", "add", "11.0.0.1/32", "dev", "lo"], check=True)
import test_files as t
from conftest import Server
public, local = t.FileServer("11.0.0.1"), t.FileServer("127.0.0.1")
s = Server(env={"CODEBOX_POOL_SIZE": "0"})
out = {}
try:
    call = t.mcp_client(s)
    up = lambda url: t.upload(call, "ns", url)
    out["public"] = up(public.url("/files/data.csv"))
    out["public_redirects"] = up(public.url("/redirect/2"))
    out["to_loopback"] = up(public.url("/to?url=" + urllib.parse.quote(
        local.url("/files/data.csv"))))
    out["to_localhost"] = up(public.url("/to?url=" + urllib.parse.quote(
        "http://localhost:%d/files/data.csv" % local.port)))
    out["to_metadata"] = up(public.url("/to?url=" + urllib.parse.quote(
        "http://169.254.169.254/latest/meta-data/")))
    out["to_private"] = up(public.url("/to?url=" + urllib.parse.quote("http://10.0.0.1/x")))
    out["local_hits"] = local.state["hits"]
    out["input"] = sorted(os.listdir(t.input_dir(s, "ns")))
finally:
    s.stop()
    public.close()
    local.close()
print("RESULT " + json.dumps(out))
"""


def test_redirect_from_public_to_private_refused():
    """In a network namespace of its own, 11.0.0.1 (a public address) is
    local, so a public first hop can redirect to loopback: the second hop
    must be refused on the address it connects to."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("needs root, unshare and ip for a network namespace")
    if subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot make a network namespace here")
    p = subprocess.run(["unshare", "--net", sys.executable, "-c", NETNS_SCRIPT, HERE],
                       capture_output=True, text=True, timeout=180, env=dict(os.environ))
    line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    assert p.returncode == 0 and line, p.stdout[-3000:] + p.stderr[-3000:]
    out = json.loads(line[0][len("RESULT "):])
    assert ok(out["public"])["saved_path"].endswith("/input/data.csv")
    assert ok(out["public_redirects"])["saved_path"].endswith("/input/data-1.csv")
    for key, ip in [("to_loopback", "127.0.0.1"), ("to_localhost", None),
                    ("to_metadata", "169.254.169.254"), ("to_private", "10.0.0.1")]:
        text = error_text(out[key])
        assert "refused to connect" in text, (key, text)
        if ip:
            assert ip in text, (key, text)
    assert out["local_hits"] == 0
    assert out["input"] == ["data-1.csv", "data.csv"]


# --------------------------------------------------------------------------
# signed artifact links

SECRET = "e2e-url-secret"


def _sign(tenant, session, path, expires):
    msg = "codebox-signed-url-v1\n%s\n%s\n%s\n%d" % (tenant, session, path, expires)
    return hmac.new(SECRET.encode(), msg.encode(), hashlib.sha256).hexdigest()


def _run(s, session, code, token):
    res = rest_run(s, session, code, token=token)
    assert res["status"] == "completed", res
    return res


def test_signed_urls(server_factory):
    public = "https://codebox.example/base"
    s = server_factory(env={"CODEBOX_API_TOKENS": "alice:tok-a", "CODEBOX_PUBLIC_URL": public,
                            "CODEBOX_URL_SECRET": SECRET, "CODEBOX_POOL_SIZE": "0"},
                       token="tok-a")
    assert s.post("/sessions", {"session_id": "art"}).status == 201
    res = _run(s, "art", "import os\nos.makedirs('output/sub', exist_ok=True)\n"
               "open('output/sub/r\u00e9sult 1.csv','w').write('a,b\\n1,2\\n')\n"
               "open('output/other.txt','w').write('other')", "tok-a")
    new = {a["filename"]: a for a in res["new_artifacts"]}
    assert set(new) == {"r\u00e9sult 1.csv", "other.txt"}, new
    listed = {a["filename"]: a for a in s.get("/sessions/art/artifacts").json()["artifacts"]}
    call = mcp_client(s, headers={"Authorization": "Bearer tok-a"})
    via_mcp = {a["filename"]: a for a in ok(call("list_artifacts",
                                                 {"session_id": "art"}))["artifacts"]}
    for group in (new, listed, via_mcp):
        for a in group.values():
            assert a["url"].startswith(public + "/signed/alice/art/"), a
    url = listed["r\u00e9sult 1.csv"]["url"]
    path = url[len(public):]
    # no token needed
    r = s.get(path, token=None)
    assert r.status == 200, r
    assert r.body == b"a,b\n1,2\n"
    assert r.headers["Content-Type"].startswith("text/csv")
    assert s.get("/sessions/art/files/output/other.txt", token=None).status == 401
    # the documented format: expiry and signature in the path
    parts = path.split("/")
    assert parts[1:4] == ["signed", "alice", "art"]
    expires, sig = int(parts[4]), parts[5]
    assert 23 * 3600 < expires - time.time() <= 24 * 3600 + 60
    rel = "output/sub/r\u00e9sult 1.csv"
    assert sig == _sign("alice", "art", rel, expires)
    assert urllib.parse.unquote("/".join(parts[6:])) == rel
    # altered: signature, path (to another existing file), session, tenant, expiry
    other = "/".join(parts[:6]) + "/output/other.txt"
    flipped = list(path)
    i = path.index(sig) + 7
    flipped[i] = "0" if flipped[i] != "0" else "1"
    altered = ["".join(flipped), other,
               path.replace("/alice/art/", "/alice/art2/"),
               path.replace("/alice/art/", "/bob/art/"),
               path.replace("/%d/" % expires, "/%d/" % (expires + 3600)),
               path.replace(sig, sig.upper()),
               "/".join(parts[:5]) + "/" + parts[6] + "/" + sig,
               "/signed/alice/art"]
    for bad in altered:
        r = s.get(bad, token=None)
        assert r.status == 403, (bad, r)
        assert r.json()["error"]["code"] == "forbidden"
    # expired (correctly signed, in the past)
    past = int(time.time()) - 5
    r = s.get("/signed/alice/art/%d/%s/%s" % (past, _sign("alice", "art", rel, past),
                                               urllib.parse.quote(rel)), token=None)
    assert r.status == 403 and "expired" in r.json()["error"]["message"], r
    # a link we sign ourselves with the shared secret works (the same format)
    later = int(time.time()) + 60
    r = s.get("/signed/alice/art/%d/%s/output/other.txt"
              % (later, _sign("alice", "art", "output/other.txt", later)), token=None)
    assert r.status == 200 and r.body == b"other"
    # a signed path that escapes the session is refused before anything is read
    esc = "output/../../../etc/passwd"
    r = s.get("/signed/alice/art/%d/%s/%s" % (later, _sign("alice", "art", esc, later), esc),
              token=None)
    assert r.status in (403, 404), r
    # read-only
    assert s.request("PUT", path, body=b"x", token=None).status in (403, 405)
    # the link is never logged
    assert sig not in s.log()
    # the session gone: 404
    assert s.delete("/sessions/art").status == 204
    assert s.get(path, token=None).status == 404


def test_no_urls_without_public_url(server_factory):
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    assert s.post("/sessions", {"session_id": "plain"}).status == 201
    res = _run(s, "plain", "open('output/x.txt','w').write('x')", None)
    assert [a.get("url") for a in res["new_artifacts"]] == [None]
    arts = s.get("/sessions/plain/artifacts").json()["artifacts"]
    assert arts and "url" not in arts[0]
    # without a public URL, a /signed/ path is still only a 403
    assert s.get("/signed/default/plain/9999999999/%s/output/x.txt" % ("0" * 64)).status == 403


# --------------------------------------------------------------------------
# downloads and the gateway's lifetime


def test_progress_over_sse(server_factory, files):
    s = server_factory(env=dict(ALLOW, CODEBOX_DOWNLOAD_TIMEOUT="4"))
    call = mcp_client(s)
    ok(call("session_info", {"session_id": "pr"}))
    sid = mcp_session(s)
    r = s.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                   "params": {"name": "upload_file",
                                              "_meta": {"progressToken": "p1"},
                                              "arguments": {"session_id": "pr",
                                                            "url": files.url("/slow")}}},
                  headers={"Accept": "application/json, text/event-stream",
                           "Mcp-Session-Id": sid})
    assert r.status == 200 and r.headers["Content-Type"].startswith("text/event-stream")
    events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: ")]
    progress = [e["params"] for e in events if e.get("method") == "notifications/progress"]
    assert len(progress) >= 2, events
    assert all(p["progressToken"] == "p1" for p in progress)
    values = [p["progress"] for p in progress]
    assert values == sorted(set(values)), values           # strictly growing
    assert "did not finish" in error_text(events[-1]["result"])


def test_shutdown_answers_running_download(server_factory, files):
    s = server_factory(env=dict(ALLOW, CODEBOX_DOWNLOAD_TIMEOUT="60"))
    call = mcp_client(s)
    ok(call("session_info", {"session_id": "sd"}))
    t, done = upload_in_background(call, "sd", files.url("/slow"))
    time.sleep(1.5)
    t0 = time.monotonic()
    assert s.stop() == 0                    # clean exit, nothing left behind
    assert time.monotonic() - t0 < 10
    t.join(10)
    assert "shutting down" in error_text(done["r"])


def test_client_leaving_mid_download(server_factory, files):
    import socket
    s = server_factory(env=dict(ALLOW, CODEBOX_DOWNLOAD_TIMEOUT="20"))
    call = mcp_client(s)
    ok(call("session_info", {"session_id": "gone"}))
    sid = mcp_session(s)
    for accept in ("application/json, text/event-stream", "application/json"):
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                           "params": {"name": "upload_file",
                                      "arguments": {"session_id": "gone",
                                                    "url": files.url("/slow")}}}).encode()
        sock = socket.create_connection(("127.0.0.1", s.port))
        sock.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                      "\r\nAccept: %s\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n"
                      % (accept, sid, len(body))).encode() + body)
        time.sleep(0.5)
        sock.close()
    # both calls are cancelled when their client is seen gone (the streamed
    # one by its keep-alive, the plain JSON one by a look at its socket),
    # well before the download's own timeout
    deadline = time.monotonic() + 10
    while s.log().count("download event=failed session=gone") < 2:
        assert time.monotonic() < deadline, s.log_tail()
        time.sleep(0.2)
    log = s.log()
    assert log.count("session=gone host=127.0.0.1 reason=cancelled") == 2, s.log_tail()
    assert "session=gone host=127.0.0.1 reason=timeout" not in log, s.log_tail()
    assert log.count("mcp event=client-gone") == 2, s.log_tail()
    # the gateway is fine and still downloads
    assert ok(upload(call, "gone", files.url("/files/after.csv")))["size"] > 0


def test_fifo_planted_by_kernel_code_never_hangs_the_gateway(server_factory):
    """Opening a FIFO waits for its other end: kernel code that plants one
    where a file was must get a clear error from every file route, not a
    gateway whose loop thread waits forever."""
    public = "https://codebox.example"
    s = server_factory(env={"CODEBOX_PUBLIC_URL": public, "CODEBOX_POOL_SIZE": "0"})
    call = mcp_client(s)
    sc = ok(call("exec_code", {"session_id": "ff",
                               "code": "open('output/r.txt','w').write('ok')"}))
    link = sc["new_artifacts"][0]["url"][len(public):]
    assert s.get(link, token=None).status == 200
    ok(call("exec_code", {"session_id": "ff", "code":
                          "import os\nos.remove('output/r.txt')\nos.mkfifo('output/r.txt')\n"
                          "os.mkfifo('input/p')"}))
    for path in ("output/r.txt", "input/p"):
        t0 = time.monotonic()
        assert "not a regular file" in error_text(call("read_file", {"session_id": "ff",
                                                                     "path": path}))
        assert "not a regular file" in error_text(call("write_file", {
            "session_id": "ff", "path": path, "content": "x"}))
        r = s.get("/sessions/ff/files/" + path)
        assert r.status == 400 and "not a regular file" in r.text, r.text
        assert time.monotonic() - t0 < 10
    assert s.get(link, token=None).status == 404
    listed = ok(call("list_artifacts", {"session_id": "ff"}))["artifacts"]
    assert listed == []                       # a FIFO is not an artifact
    assert s.get("/healthz").status == 200
    assert ok(call("exec_code", {"session_id": "ff", "code": "print(1+1)"}))["stdout"] == "2\n"
