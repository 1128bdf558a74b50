"""The disk quota is a limit, not a report: as root every session folder is
a file system of CODEBOX_DISK_QUOTA_MB, so kernel code (in the folder and
in /tmp), uploads and SQL CSVs all stop at it while they write; the
kernel's runtime folder is a small file system of its own; everything goes
with the session, and a crashed run's mounts are undone at the next start."""
import json
import os
import re
import signal
import socket
import subprocess
import time

import pytest

from conftest import BIN, Server, error_text, mcp_client, ok, rest_run, stream_of, wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="file systems need root")

FILL = """
import errno, os
def fill(path):
    try:
        with open(path, 'wb') as f:
            for i in range(200):
                f.write(b'x' * (1 << 20))
        return 'wrote 200 MiB'
    except OSError as e:
        return errno.errorcode[e.errno]
    finally:
        if os.path.exists(path):
            os.remove(path)
print(fill('big.bin'), fill('/tmp/big.bin'), fill('output/deep.bin'))
"""


def mounts_under(path):
    with open("/proc/self/mountinfo") as f:
        return [l.split()[4] for l in f if l.split()[4].startswith(path)]


@pytest.mark.parametrize("pool", ["0", "1"])
def test_quota_is_enforced_while_code_runs(server_factory, pool):
    s = server_factory(env={"CODEBOX_DISK_QUOTA_MB": "64", "CODEBOX_POOL_SIZE": pool})
    assert s.post("/sessions", {"session_id": "q"}).status == 201
    info = s.get("/sessions/q").json()
    res = rest_run(s, "q", FILL)
    assert res["status"] == "completed", res
    assert stream_of(res).split() == ["ENOSPC"] * 3, (stream_of(res), info)
    # the session works on once the file is gone
    res = rest_run(s, "q", "open('small.txt','w').write('ok'); print(open('small.txt').read())")
    assert stream_of(res).strip() == "ok"


def test_a_taken_warm_folder_goes_with_the_refill(server_factory):
    """Taking a warm kernel moves its folder's file system to the session
    (a mount move) and leaves the emptied folder, removed a second later
    with the refill instead of while the session is created: the state
    folder ends with the sessions and the one refilled pool folder."""
    s = server_factory(env={"CODEBOX_DISK_QUOTA_MB": "64", "CODEBOX_POOL_SIZE": "1"})

    def pool_folders():
        return sorted(f for f in os.listdir(s.state_dir) if f.startswith(".pool-"))

    for n, sid in enumerate(("w1", "w2"), 1):
        # the pool's n-th kernel is ready
        wait_for(lambda: s.log().count(" pool event=ready ") >= n,
                 "pool kernel %d never ready:\n%s" % (n, s.log_tail()), timeout=60)
        assert s.post("/sessions", {"session_id": sid}).status == 201
        assert stream_of(rest_run(s, sid, "print(1)")) == "1\n"
    deadline = time.monotonic() + 30
    while len(pool_folders()) != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(pool_folders()) == 1, os.listdir(s.state_dir)
    for sid in ("w1", "w2"):
        assert "event=warm session=%s " % sid in s.log(), s.log()
        assert os.path.ismount(os.path.join(s.state_dir, sid)), sid


def test_gateway_writes_count_too(server_factory):
    s = server_factory(env={"CODEBOX_DISK_QUOTA_MB": "64", "CODEBOX_POOL_SIZE": "0"})
    assert s.post("/sessions", {"session_id": "g"}).status == 201
    r = s.request("PUT", "/sessions/g/files/input/a.bin", body=b"a" * (40 << 20))
    assert r.status == 201, r.text
    # refused from its Content-Length, before any byte is read (so the
    # client sends none: it asks for a 100 Continue first); no file
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    try:
        sock.sendall(b"PUT /sessions/g/files/input/b.bin HTTP/1.1\r\nHost: localhost\r\n"
                     b"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n" % (40 << 20))
        answer = b""
        while b"CODEBOX_DISK_QUOTA_MB" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert b"CODEBOX_DISK_QUOTA_MB" in answer, answer
    assert not os.path.exists(os.path.join(s.state_dir, "g", "input", "b.bin"))
    # an SQL result whose CSV does not fit fails cleanly
    r = s.post("/sql", {"session_id": "g", "query":
                        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                        "WHERE i < 99000) SELECT i, printf('%0400d', i) FROM n"}, timeout=300)
    body = r.json()
    assert "error" in body or body.get("isError"), body
    assert not [f for f in os.listdir(os.path.join(s.state_dir, "g", "input"))
                if f.endswith(".csv")]


def test_a_download_into_a_full_folder_is_refused_first(server_factory):
    """upload_file measures the room left as a PUT does (the folder's own
    file system's free space): a folder that code filled up refuses the
    download with a sentence, before any byte, and keeps what it holds
    (the quota minus the bytes of the folder's files would still see a few
    MiB free there: the file system's own overhead)."""
    from test_files import FileServer
    files = FileServer()
    s = server_factory(env={"CODEBOX_DISK_QUOTA_MB": "64", "CODEBOX_POOL_SIZE": "0",
                            "CODEBOX_DOWNLOAD_ALLOW_PRIVATE": "1"})
    try:
        call = mcp_client(s)
        res = call("exec_code", {"session_id": "full", "code":
                                 "import errno\n"
                                 "try:\n"
                                 "    with open('big.bin', 'wb') as f:\n"
                                 "        for i in range(200): f.write(b'x' * (1 << 20)); f.flush()\n"
                                 "except OSError as e: print(errno.errorcode[e.errno])"})
        assert "ENOSPC" in json.dumps(res), res
        # what is left fits a small file, not 2 MiB
        assert ok(call("upload_file", {"session_id": "full", "url": files.url("/files/a.csv")}))
        text = error_text(call("upload_file", {"session_id": "full",
                                               "url": files.url("/sized/%d" % (2 << 20))}))
        limit = re.search(r"limit of (\d+) bytes", text)
        assert limit and "disk quota" in text, text
        assert int(limit.group(1)) < 1 << 20, "the room is what the file system has left"
        assert not os.path.exists(os.path.join(s.state_dir, "full", "input", "2097152"))
        assert os.path.getsize(os.path.join(s.state_dir, "full", "big.bin")) > 50 << 20
    finally:
        files.close()


def test_everything_goes_with_the_session_and_the_server(server_factory):
    s = server_factory(env={"CODEBOX_DISK_QUOTA_MB": "64", "CODEBOX_POOL_SIZE": "1"})
    assert s.post("/sessions", {"session_id": "d"}).status == 201
    folder = os.path.join(s.state_dir, "d")
    assert folder in mounts_under(s.state_dir)
    with open(os.path.join(s.state_dir, ".kept", "d", "session.json")) as f:
        image = os.path.join(s.state_dir, ".disks", json.load(f)["disk_image"])
    assert os.path.exists(image)    # kept while the session lives (issue 42)
    runtime = [m for m in mounts_under("/tmp/codebox-") if "/tmp/codebox-" in m]
    assert runtime, "the kernel's runtime folder is a file system of its own"
    # kernel code cannot fill the host's /tmp through its runtime folder
    res = rest_run(s, "d", "import glob, errno\n"
                           "run = [p for p in glob.glob('/tmp/codebox-*/*') if not "
                           "p.endswith('codebox') and not p.endswith('session') and not "
                           "p.endswith('work')]\n"
                           "try:\n"
                           "    with open(run[0] + '/fill', 'wb') as f:\n"
                           "        f.write(b'x' * (64 << 20))\n"
                           "    print('wrote')\n"
                           "except (OSError, IndexError) as e:\n"
                           "    print('refused')\n")
    assert stream_of(res).strip() == "refused", res
    assert s.delete("/sessions/d").status == 204
    assert folder not in mounts_under(s.state_dir)
    assert not os.path.exists(folder)
    assert not os.path.exists(image)
    state = s.state_dir
    s.stop()
    assert mounts_under(state) == []


def test_a_crashed_runs_mounts_are_undone(tmp_path):
    state = str(tmp_path / "state")
    first = Server(env={"CODEBOX_DISK_QUOTA_MB": "64", "CODEBOX_POOL_SIZE": "1"})
    try:
        assert first.post("/sessions", {"session_id": "x"}).status == 201
        first.expect_dead = True
        state = first.state_dir
        first.proc.kill()
        first.proc.wait()
        left = mounts_under(state)
        assert left, "a SIGKILLed gateway leaves its mounts"
        before = set(os.listdir(os.path.join(state, ".disks")))   # x's and a warm one's
        assert len(before) == 2, before
        log = str(tmp_path / "second.log")
        with open(log, "wb") as out:
            second = subprocess.Popen([BIN, "serve", "--port", "0", "--state-dir", state],
                                      stdout=out, stderr=subprocess.STDOUT)
        import time
        deadline = time.monotonic() + 30
        while "serving http" not in open(log).read() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "serving http" in open(log).read(), open(log).read()
        # the crashed run's mounts are undone: the kept session x stays, its
        # folder unmounted until its first use mounts its image again (issue
        # 42), and the crashed run's warm kernel's folder and image are gone
        assert os.path.isdir(os.path.join(state, "x"))
        assert os.path.join(state, "x") not in mounts_under(state)
        with open(os.path.join(state, ".kept", "x", "session.json")) as f:
            image = json.load(f)["disk_image"]
        assert set(os.listdir(os.path.join(state, ".disks"))) & before == {image}, before
        assert not [m for m in left if m in mounts_under(state)], (left, mounts_under(state))
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=30) == 0
        assert mounts_under(state) == []
    finally:
        first.stop(sig=signal.SIGKILL)
