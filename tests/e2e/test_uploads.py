"""PUT /sessions/{id}/files/{path} streams its body to the session's disk
(issue 39): the gateway holds no upload in memory (four concurrent 100 MiB
uploads move its RSS by little), a body past the session's disk quota
stops there with 413 and leaves no file, a Content-Length past it is
refused before any byte is read, and a client that leaves mid-upload
leaves nothing behind. The body is written beside, in the session's
hidden .codebox/uploads/, and renamed into place when whole."""
import hashlib
import http.client
import os
import socket
import threading

import pytest

from conftest import asan, peak_rss_while, vm_rss_kib, wait_for

MIB = 1 << 20
UPLOADS = os.path.join(".codebox", "uploads")


def blocks(seed, size, block=MIB):
    """size bytes made as they are sent (never held whole): a random block
    of the seed's, each copy numbered. Returns (generator, sha256 object
    that is complete once the generator is exhausted)."""
    rnd = hashlib.sha256(seed.encode()).digest() * (block // 32)
    digest = hashlib.sha256()

    def gen():
        sent, n = 0, 0
        while sent < size:
            chunk = (b"%016d" % n + rnd[16:])[:min(block, size - sent)]
            digest.update(chunk)
            sent += len(chunk)
            n += 1
            yield chunk
    return gen(), digest


def put_stream(s, path, gen, size=None, timeout=300):
    """PUT a body from a generator: with Content-Length size, or chunked
    when size is None. Returns (status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=timeout)
    try:
        if size is None:
            conn.request("PUT", path, body=gen, encode_chunked=True,
                         headers={"Transfer-Encoding": "chunked"})
        else:
            conn.request("PUT", path, body=gen, headers={"Content-Length": str(size)})
        r = conn.getresponse()
        return r.status, r.read()
    except (BrokenPipeError, ConnectionResetError):
        # the server answered and closed before the body was all sent
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def get_digest(s, path):
    """(size, sha256 hex) of a file read back through GET, in pieces."""
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=300)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        assert r.status == 200, (r.status, r.read()[:300])
        digest, size = hashlib.sha256(), 0
        while True:
            chunk = r.read(MIB)
            if not chunk:
                return size, digest.hexdigest()
            size += len(chunk)
            digest.update(chunk)
    finally:
        conn.close()


def left_in(folder):
    """Every entry under folder, hidden ones too (relative paths)."""
    found = []
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            found.append(os.path.relpath(os.path.join(root, name), folder))
    return sorted(found)


def temp_files(s, sid):
    folder = os.path.join(s.state_dir, sid, UPLOADS)
    return os.listdir(folder) if os.path.isdir(folder) else []


def raw_response(sock, timeout=30):
    """What the server sends on sock until it closes or the head and a
    Content-Length body are in."""
    sock.settimeout(timeout)
    got = b""
    while True:
        end = got.find(b"\r\n\r\n")
        if end >= 0:
            head = got[:end].lower()
            i = head.find(b"content-length:")
            if i >= 0:
                n = int(head[i + 15:].split(b"\r\n")[0])
                if len(got) >= end + 4 + n:
                    return got
        try:
            chunk = sock.recv(65536)
        except OSError:
            return got
        if not chunk:
            return got
        got += chunk


def test_four_concurrent_100mib_uploads_are_not_held_in_memory(server_factory):
    """Four 100 MiB PUTs at once (bodies made as they are sent): each file
    arrives whole (size and checksum read back through GET), belongs to the
    kernel user as input/ does, no temporary file is left, and the
    gateway's RSS grows by at most 128 MiB while they run (it grew by 390
    MiB when bodies were read whole into memory)."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    sid = "big"
    assert s.post("/sessions", {"session_id": sid}).status == 201
    assert s.request("PUT", "/sessions/%s/files/input/warm.txt" % sid, body=b"x").status == 201
    pid = s.proc.pid
    base = vm_rss_kib(pid)
    results, digests = {}, {}

    def one(n):
        gen, digest = blocks("upload-%d" % n, 100 * MIB)
        digests[n] = digest
        results[n] = put_stream(s, "/sessions/%s/files/input/up/%d.bin" % (sid, n), gen,
                                100 * MIB)

    def all_four():
        threads = [threading.Thread(target=one, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    _, peak = peak_rss_while(pid, all_four)
    print("4 x 100 MiB PUT: gateway RSS %d KiB before, peak %d KiB (+%d KiB)"
          % (base, peak, peak - base))
    for n in range(4):
        status, body = results[n]
        assert status == 201, (n, status, body[:300], s.log_tail())
    if not asan(pid):
        assert peak - base <= 128 * 1024, (base, peak)
    owner = os.stat(os.path.join(s.state_dir, sid, "input"))
    for n in range(4):
        size, hexdigest = get_digest(s, "/sessions/%s/files/input/up/%d.bin" % (sid, n))
        assert size == 100 * MIB, (n, size)
        assert hexdigest == digests[n].hexdigest(), n
        for part in ("input/up", "input/up/%d.bin" % n):
            st = os.stat(os.path.join(s.state_dir, sid, part))
            assert (st.st_uid, st.st_gid) == (owner.st_uid, owner.st_gid), part
    assert temp_files(s, sid) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="the quota is a file system as root")
def test_a_body_past_the_quota_stops_there(server_factory):
    """CODEBOX_DISK_QUOTA_MB=20 and a 50 MiB body of no declared length:
    413 naming the setting, no file, no temporary file; the session takes
    uploads that fit afterwards."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0", "CODEBOX_DISK_QUOTA_MB": "20"})
    sid = "q"
    assert s.post("/sessions", {"session_id": sid}).status == 201
    folder = os.path.join(s.state_dir, sid)
    before = left_in(folder)
    gen, _ = blocks("past", 50 * MIB)
    status, body = put_stream(s, "/sessions/%s/files/input/big.bin" % sid, gen)
    assert status == 413, (status, body[:300])
    assert b"CODEBOX_DISK_QUOTA_MB" in body, body
    assert not os.path.exists(os.path.join(folder, "input", "big.bin"))
    assert temp_files(s, sid) == []
    assert [p for p in left_in(folder) if p not in before and p not in (".codebox", UPLOADS)] \
        == [], left_in(folder)
    # what fits still goes in
    gen, digest = blocks("fits", 5 * MIB)
    status, body = put_stream(s, "/sessions/%s/files/input/small.bin" % sid, gen, 5 * MIB)
    assert status == 201, body
    assert get_digest(s, "/sessions/%s/files/input/small.bin" % sid) == (5 * MIB,
                                                                        digest.hexdigest())
    assert s.get("/healthz").status == 200


@pytest.mark.skipif(os.geteuid() != 0, reason="the quota is a file system as root")
@pytest.mark.parametrize("expect", [False, True])
def test_a_declared_length_past_the_quota_is_refused_unread(server_factory, expect):
    """A Content-Length past the room the quota leaves is answered 413 from
    the headers alone: no 100 Continue, no byte of body sent, no file."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0", "CODEBOX_DISK_QUOTA_MB": "20"})
    sid = "d"
    assert s.post("/sessions", {"session_id": sid}).status == 201
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    try:
        sock.sendall(("PUT /sessions/%s/files/input/big.bin HTTP/1.1\r\nHost: localhost\r\n"
                      "Content-Length: %d\r\n%s\r\n"
                      % (sid, 50 * MIB, "Expect: 100-continue\r\n" if expect else "")).encode())
        data = raw_response(sock)
    finally:
        sock.close()
    assert data.startswith(b"HTTP/1.1 413"), data[:300]
    assert b"100 Continue" not in data
    assert b"CODEBOX_DISK_QUOTA_MB" in data, data
    assert not os.path.exists(os.path.join(s.state_dir, sid, "input", "big.bin"))
    assert temp_files(s, sid) == []


def test_a_client_that_leaves_mid_upload_leaves_nothing(server_factory):
    """A client that sends 8 MiB of a declared 50 MiB and leaves: the part
    written so far (seen in .codebox/uploads/ while it comes) goes, no file
    appears, and the server serves on."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    sid = "gone"
    assert s.post("/sessions", {"session_id": sid}).status == 201
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    sock.sendall(("PUT /sessions/%s/files/input/half.bin HTTP/1.1\r\nHost: localhost\r\n"
                  "Content-Length: %d\r\n\r\n" % (sid, 50 * MIB)).encode())
    gen, _ = blocks("half", 8 * MIB)
    for chunk in gen:
        sock.sendall(chunk)
    uploads = os.path.join(s.state_dir, sid, UPLOADS)

    def written():
        names = temp_files(s, sid)
        return names and os.path.getsize(os.path.join(uploads, names[0])) > 0
    wait_for(written, "the body written to .codebox/uploads as it comes: %s"
             % temp_files(s, sid))
    sock.close()
    wait_for(lambda: temp_files(s, sid) == [], "the temporary file removed: %s"
             % temp_files(s, sid))
    assert not os.path.exists(os.path.join(s.state_dir, sid, "input", "half.bin"))
    assert s.get("/healthz").status == 200
    r = s.request("PUT", "/sessions/%s/files/input/after.txt" % sid, body=b"after")
    assert r.status == 201, r
    assert s.get("/sessions/%s/files/input/after.txt" % sid).body == b"after"
    assert "status=" in s.log()


def test_an_upload_replaces_whole_or_not_at_all(server_factory):
    """A second PUT replaces the file; a PUT onto a folder is a 400 that
    leaves the folder and no temporary file."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    sid = "r"
    assert s.post("/sessions", {"session_id": sid}).status == 201
    path = "/sessions/%s/files/input/a/f.txt" % sid
    assert s.request("PUT", path, body=b"first version").status == 201
    r = s.request("PUT", path, body=b"second")
    assert r.status == 201 and r.json()["size"] == 6, r
    assert s.get(path).body == b"second"
    r = s.request("PUT", "/sessions/%s/files/input/a" % sid, body=b"onto a folder")
    assert r.status == 400, r
    assert "folder" in r.json()["error"]["message"], r.json()
    assert os.path.isdir(os.path.join(s.state_dir, sid, "input", "a"))
    assert s.get(path).body == b"second"
    assert temp_files(s, sid) == []
    # an empty body is a file too
    r = s.request("PUT", "/sessions/%s/files/output/empty" % sid, body=b"")
    assert r.status == 201 and r.json()["size"] == 0, r
    assert os.path.getsize(os.path.join(s.state_dir, sid, "output", "empty")) == 0
    # a client that asks first gets its 100 Continue once the upload is
    # accepted, and the connection serves on after the answer
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    try:
        sock.sendall(("PUT /sessions/%s/files/input/asked.txt HTTP/1.1\r\nHost: localhost\r\n"
                      "Content-Length: 5\r\nExpect: 100-continue\r\n\r\n" % sid).encode())
        got = b""
        while b"\r\n\r\n" not in got:
            got += sock.recv(4096)
        assert got.startswith(b"HTTP/1.1 100 Continue"), got
        sock.sendall(b"asked")
        assert raw_response(sock).startswith(b"HTTP/1.1 201"), "no 201"
        sock.sendall(("GET /sessions/%s/files/input/asked.txt HTTP/1.1\r\nHost: localhost\r\n"
                      "\r\n" % sid).encode())
        got = raw_response(sock)
        assert got.startswith(b"HTTP/1.1 200") and got.endswith(b"\r\n\r\nasked"), got
    finally:
        sock.close()
