"""Azure Blob upload of artifacts, end to end: the real codebox against
Azurite (the official Azure Storage emulator, installed from npm into
tests/azurite by `make deps`) on loopback. Artifacts of each execution are
uploaded under <tenant>/<session>/<path>, their read-only SAS URLs download
the same bytes with a plain HTTP client, altered SAS URLs are refused, and
a store that refuses, is down or hangs is reported on the artifact without
losing the file or holding the result for long."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import BIN, free_port, mcp_client, ok, rest_run, wait_port

HERE = os.path.dirname(os.path.abspath(__file__))
AZURITE = os.path.join(HERE, "..", "azurite", "node_modules", ".bin", "azurite-blob")
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
           "K1SZFPTOtr/KBHBeksoGMGw==")
OTHER_KEY = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVowMTIzNDU2Nzg5YWJjZGVmZ2hpamtsbW5vcA=="
BASE = {"CODEBOX_POOL_SIZE": "0"}


class Azurite:
    def __init__(self, tmp):
        assert os.path.exists(AZURITE), "Azurite is missing: run `make deps`"
        self.port = free_port()
        self.log_path = os.path.join(tmp, "azurite.log")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [AZURITE, "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
             "--inMemoryPersistence", "--disableTelemetry",
             "--skipApiVersionCheck", "--loose"],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            cwd=tmp, start_new_session=True)
        wait_port(self.port, self.proc, "Azurite", log=lambda: open(self.log_path).read())
        self.endpoint = "http://127.0.0.1:%d/%s" % (self.port, DEV_ACCOUNT)

    def connection_string(self, key=DEV_KEY):
        return ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s;"
                % (DEV_ACCOUNT, key, self.endpoint))

    def stop(self):
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._log.close()


@pytest.fixture(scope="module")
def azurite(tmp_path_factory):
    a = Azurite(str(tmp_path_factory.mktemp("azurite")))
    yield a
    a.stop()


def fetch(url):
    """(status, body) of a plain GET, no credentials."""
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def host_file(s, session, rel, tenant=None):
    base = s.state_dir if tenant is None else os.path.join(s.state_dir, "@" + tenant)
    with open(os.path.join(base, session, rel), "rb") as f:
        return f.read()


WRITE = """
import os
os.makedirs('output/sub', exist_ok=True)
open('output/report final.txt', 'w').write('quarterly numbers\\n')
open('output/caf\u00e9.txt', 'w').write('cr\u00e8me')
open('output/sub/data.bin', 'wb').write(bytes(range(256)) * 1200)
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
plt.plot([1, 3, 2])
plt.savefig('output/plot.png')
"""


def test_artifacts_uploaded_and_sas_urls_serve_the_same_bytes(server_factory, azurite):
    s = server_factory(env=dict(BASE, CODEBOX_BLOB_CONNECTION_STRING=azurite.connection_string(),
                                CODEBOX_BLOB_CONTAINER="art-one"))
    assert s.post("/sessions", {"session_id": "up"}).status == 201
    res = rest_run(s, "up", WRITE)
    assert res["status"] == "completed", res
    new = {a["filename"]: a for a in res["new_artifacts"]}
    assert set(new) == {"report final.txt", "caf\u00e9.txt", "data.bin", "plot.png"}, new
    listed = {a["filename"]: a for a in s.get("/sessions/up/artifacts").json()["artifacts"]}
    for group in (new, listed):
        for name, a in group.items():
            rel = a["path"][len("/session/"):]
            assert a["blob"]["status"] == "uploaded", a
            assert a["blob"]["name"] == "default/up/" + rel
            assert a["url"].startswith(azurite.endpoint + "/art-one/default/up/output/"), a
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(a["url"]).query)
            assert query["sp"] == ["r"] and query["sr"] == ["b"], query   # read-only, one blob
            status, body = fetch(a["url"])
            assert status == 200, (a, body[:300])
            assert body == host_file(s, "up", rel), name
    assert "uploaded" in s.log() and "data.bin" in s.log()
    # the container is private: the blob without a SAS is not readable
    bare = new["plot.png"]["url"].split("?")[0]
    assert fetch(bare)[0] in (403, 404)


def test_altered_or_misused_sas_is_refused(server_factory, azurite):
    s = server_factory(env=dict(BASE, CODEBOX_BLOB_CONNECTION_STRING=azurite.connection_string()))
    assert s.post("/sessions", {"session_id": "alt"}).status == 201
    res = rest_run(s, "alt", "open('output/a.txt','w').write('aaa')\n"
                        "open('output/b.txt','w').write('bbb')")
    urls = {a["filename"]: a["url"] for a in res["new_artifacts"]}
    good = urls["a.txt"]
    assert fetch(good) == (200, b"aaa")
    base, query = good.split("?")
    params = urllib.parse.parse_qs(query)
    sig = params["sig"][0]

    def with_params(**changes):
        p = {k: v[0] for k, v in params.items()}
        p.update(changes)
        return base + "?" + urllib.parse.urlencode(p)

    flipped = ("A" if sig[0] != "A" else "B") + sig[1:]
    later = params["se"][0].replace(params["se"][0][:4], str(int(params["se"][0][:4]) + 1), 1)
    for bad in (with_params(sig=flipped),             # signature altered
                with_params(se=later),                # expiry pushed out
                with_params(sp="rw"),                 # more rights
                with_params(sr="c"),                  # the whole container
                urls["b.txt"].split("?")[0] + "?" + query):   # another blob, same SAS
        status, body = fetch(bad)
        assert status == 403, (bad, status, body[:200])
    # the SAS does not allow writing either
    req = urllib.request.Request(good, data=b"evil", method="PUT",
                                 headers={"x-ms-blob-type": "BlockBlob"})
    try:
        urllib.request.urlopen(req, timeout=30)
        raise AssertionError("a write with a read-only SAS succeeded")
    except urllib.error.HTTPError as e:
        assert e.code == 403
    assert fetch(good) == (200, b"aaa")


def test_mcp_exec_code_and_list_artifacts_carry_the_urls(server_factory, azurite):
    s = server_factory(env=dict(BASE, CODEBOX_BLOB_CONNECTION_STRING=azurite.connection_string()))
    call = mcp_client(s)
    r = call("exec_code", {"session_id": "m1",
                           "code": "open('output/table.csv','w').write('x,y\\n1,2\\n')"})
    sc = ok(r)
    [art] = sc["new_artifacts"]
    assert art["blob"]["status"] == "uploaded", art
    assert art["url"] in r["content"][0]["text"]        # the agent sees the link
    assert fetch(art["url"]) == (200, b"x,y\n1,2\n")
    listed = ok(call("list_artifacts", {"session_id": "m1"}))["artifacts"]
    assert [a["blob"]["status"] for a in listed] == ["uploaded"]
    assert fetch(listed[0]["url"]) == (200, b"x,y\n1,2\n")
    # a changed artifact is uploaded again and its link serves the new bytes
    sc = ok(call("exec_code", {"session_id": "m1",
                               "code": "open('output/table.csv','w').write('x,y\\n1,2\\n3,4\\n')"}))
    assert fetch(sc["new_artifacts"][0]["url"]) == (200, b"x,y\n1,2\n3,4\n")


def test_tenants_get_separate_blob_names(server_factory, azurite):
    s = server_factory(env=dict(BASE, CODEBOX_BLOB_CONNECTION_STRING=azurite.connection_string(),
                                CODEBOX_API_TOKENS="alice:tok-a,bob:tok-b"), token="tok-a")
    for tenant, token in (("alice", "tok-a"), ("bob", "tok-b")):
        assert s.post("/sessions", {"session_id": "same"}, token=token).status == 201
        res = rest_run(s, "same", "open('output/who.txt','w').write(%r)" % tenant, token=token)
        [art] = res["new_artifacts"]
        assert art["blob"]["name"] == tenant + "/same/output/who.txt"
        assert fetch(art["url"]) == (200, tenant.encode())


def test_url_and_account_key_settings(server_factory, azurite):
    s = server_factory(env=dict(BASE, CODEBOX_BLOB_URL=azurite.endpoint + "/",
                                CODEBOX_BLOB_ACCOUNT_KEY=DEV_KEY,
                                CODEBOX_BLOB_CONTAINER="by-url"))
    assert s.post("/sessions", {"session_id": "u"}).status == 201
    [art] = rest_run(s, "u", "open('output/k.txt','w').write('key')")["new_artifacts"]
    assert art["url"].startswith(azurite.endpoint + "/by-url/default/u/output/k.txt?")
    assert fetch(art["url"]) == (200, b"key")


def test_refused_upload_is_reported_and_the_file_kept(server_factory, azurite):
    public = "https://codebox.example"
    s = server_factory(env=dict(BASE, CODEBOX_PUBLIC_URL=public,
                                CODEBOX_BLOB_CONNECTION_STRING=azurite.connection_string(
                                    key=OTHER_KEY)))
    assert s.post("/sessions", {"session_id": "bad"}).status == 201
    res = rest_run(s, "bad", "open('output/keep.txt','w').write('still here')")
    assert res["status"] == "completed", res
    [art] = res["new_artifacts"]
    assert art["blob"]["status"] == "failed", art
    assert "403" in art["blob"]["error"], art
    assert DEV_KEY not in s.log() and OTHER_KEY not in s.log()
    # the gateway's own signed link is still there, and so is the file
    assert art["url"].startswith(public + "/signed/"), art
    r = s.get("/sessions/bad/files/output/keep.txt")
    assert r.status == 200 and r.body == b"still here"
    assert host_file(s, "bad", "output/keep.txt") == b"still here"
    listed = s.get("/sessions/bad/artifacts").json()["artifacts"]
    assert listed[0]["blob"]["status"] == "failed"


def test_store_down_is_reported(server_factory):
    port = free_port()          # nothing listens there
    cs = ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"
          "BlobEndpoint=http://127.0.0.1:%d/%s;" % (DEV_ACCOUNT, DEV_KEY, port, DEV_ACCOUNT))
    s = server_factory(env=dict(BASE, CODEBOX_BLOB_CONNECTION_STRING=cs))
    assert s.post("/sessions", {"session_id": "down"}).status == 201
    res = rest_run(s, "down", "open('output/x.txt','w').write('x')")
    assert res["status"] == "completed"
    [art] = res["new_artifacts"]
    assert art["blob"]["status"] == "failed" and "cannot reach" in art["blob"]["error"], art
    assert "url" not in art
    assert host_file(s, "down", "output/x.txt") == b"x"


def test_hanging_store_does_not_hold_the_result(server_factory):
    """A store that accepts connections and never answers: the result comes
    once the bounded wait ends, the artifact says it is still uploading,
    the next execution is not held up, and shutdown is not held either."""
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(16)
    accepted = []
    stop = threading.Event()

    def swallow():
        hole.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(hole.accept()[0])
            except OSError:
                pass
    t = threading.Thread(target=swallow, daemon=True)
    t.start()
    try:
        cs = ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"
              "BlobEndpoint=http://127.0.0.1:%d/%s;"
              % (DEV_ACCOUNT, DEV_KEY, hole.getsockname()[1], DEV_ACCOUNT))
        s = server_factory(env=dict(BASE, CODEBOX_BLOB_CONNECTION_STRING=cs))
        assert s.post("/sessions", {"session_id": "slow"}).status == 201
        t0 = time.monotonic()
        res = rest_run(s, "slow", "open('output/s.txt','w').write('s')")
        waited = time.monotonic() - t0
        assert res["status"] == "completed"
        [art] = res["new_artifacts"]
        assert art["blob"]["status"] == "uploading", art
        assert art["url"].startswith("http://127.0.0.1:%d/" % hole.getsockname()[1])
        assert waited < 30, waited      # bounded (about 5 s), not the transfer's own timeout
        assert accepted, "the upload never connected"
        # the session goes on meanwhile
        assert rest_run(s, "slow", "print(6*7)")["status"] == "completed"
        t0 = time.monotonic()
        assert s.stop() == 0
        assert time.monotonic() - t0 < 15
    finally:
        stop.set()
        t.join()
        for c in accepted:
            c.close()
        hole.close()


def test_upload_queue_is_bounded_and_never_blocks(server_factory):
    """The worker's queue (a CZMQ actor's pipe) is bounded: with a store that
    hangs, an execution that writes thousands of files gets its answer after
    the bounded wait, the files past the bound say the queue is full (and
    stay in output/), and shutdown drops what is queued without waiting."""
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(16)
    try:
        cs = ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"
              "BlobEndpoint=http://127.0.0.1:%d/%s;"
              % (DEV_ACCOUNT, DEV_KEY, hole.getsockname()[1], DEV_ACCOUNT))
        s = server_factory(env=dict(BASE, CODEBOX_BLOB_CONNECTION_STRING=cs))
        assert s.post("/sessions", {"session_id": "many"}).status == 201
        n = 2600
        t0 = time.monotonic()
        res = rest_run(s, "many", "for i in range(%d): open('output/f%%04d.txt' %% i, 'w').write('x')" % n)
        assert res["status"] == "completed"
        assert time.monotonic() - t0 < 30
        arts = res["new_artifacts"]
        assert len(arts) == n
        states = [a["blob"]["status"] for a in arts]
        full = [a for a in arts if a["blob"]["status"] == "failed"]
        assert states.count("uploading") >= 1000, states.count("uploading")
        assert full and all("queue is full" in a["blob"]["error"] for a in full), full[:1]
        assert host_file(s, "many", "output/" + full[-1]["path"].split("/")[-1]) == b"x"
        assert rest_run(s, "many", "print(6*7)")["status"] == "completed"
        t0 = time.monotonic()
        assert s.stop() == 0
        assert time.monotonic() - t0 < 15
    finally:
        hole.close()


@pytest.mark.parametrize("env, expected", [
    ({"CODEBOX_BLOB_CONNECTION_STRING": "AccountName=acct;SharedAccessSignature=sv=2020&sig=x"},
     "SharedAccessSignature"),
    ({"CODEBOX_BLOB_CONNECTION_STRING": "AccountName=acct;AccountKey=" + DEV_KEY,
      "CODEBOX_BLOB_CONTAINER": "Bad_Name"}, "CODEBOX_BLOB_CONTAINER"),
    ({"CODEBOX_BLOB_URL": "https://acct.blob.core.windows.net"}, "CODEBOX_BLOB_ACCOUNT_KEY"),
    ({"CODEBOX_BLOB_URL": "https://acct.blob.core.windows.net/?sv=2020&sig=abc",
      "CODEBOX_BLOB_ACCOUNT_KEY": DEV_KEY}, "query"),
    ({"CODEBOX_BLOB_CONNECTION_STRING": "AccountName=acct;AccountKey=not*base64"}, "base64"),
])
def test_wrong_blob_settings_stop_the_start(env, expected):
    full = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
    full.update(env)
    tmp = tempfile.mkdtemp(prefix="codebox-blob-")
    os.chmod(tmp, 0o755)        # the kernel user must reach the state folder
    try:
        p = subprocess.run([BIN, "serve", "--port", "0", "--state-dir", tmp + "/s"],
                           env=full, cwd=tmp, capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert p.returncode != 0
    assert expected in p.stderr, p.stderr
    assert DEV_KEY not in p.stderr
