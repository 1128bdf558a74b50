"""CODEBOX_NETWORK=on (issue 39): each kernel has a network namespace of
its own, and its way out is the proxy its relay serves, with upload_file's
rules: public addresses only (private ones with
CODEBOX_DOWNLOAD_ALLOW_PRIVATE=1), never loopback, link-local or an address
of the host's own, so never the gateway nor a service of the host's.

The "internet" here is a network namespace the test makes with a veth
pair carrying a public subnet (11.213.N.0/24) and a private one
(10.213.N.0/24): the host's ends (.1) are addresses of the host's own, which
the proxy never reaches; the far end (.2) serves HTTP, at a public address
the proxy reaches and at a private one it reaches only when private
addresses are allowed. The gateway runs as root,
so kernels run as the codebox-kernel user under bubblewrap."""
import http.server
import os
import socketserver
import subprocess
import threading

import pytest

from conftest import Server, descendants, free_port, proc_cmdline, rest_run, stream_of, wait_for

N = os.getpid() % 200 + 20
NET, PUB = "10.213.%d" % N, "11.213.%d" % N
FAR, FAR_PUBLIC = NET + ".2", PUB + ".2"
SECRET = "a secret of a service on the host's loopback"


def ip(*args, ns=None):
    cmd = ["ip", "netns", "exec", ns] if ns else []
    subprocess.run(cmd + ["ip"] + list(args), check=True, capture_output=True)


@pytest.fixture(scope="module")
def far_service(tmp_path_factory):
    """An HTTP server at FAR:port in a namespace of its own, behind a veth
    pair whose host end is NET.1."""
    ns = "cbx-net-%d" % os.getpid()
    root = tmp_path_factory.mktemp("far")
    (root / "hello.txt").write_text("hello from the far side\n")
    (root / "big.bin").write_bytes(bytes(range(256)) * 40960)     # 10 MiB
    ip("netns", "add", ns)
    proc = None
    try:
        ip("link", "add", "cbx%d" % os.getpid(), "type", "veth", "peer", "name", "far0",
           "netns", ns)
        for net in (NET, PUB):
            ip("addr", "add", net + ".1/24", "dev", "cbx%d" % os.getpid())
            ip("addr", "add", net + ".2/24", "dev", "far0", ns=ns)
        ip("link", "set", "cbx%d" % os.getpid(), "up")
        ip("link", "set", "far0", "up", ns=ns)
        ip("link", "set", "lo", "up", ns=ns)
        port = free_port()
        proc = subprocess.Popen(["ip", "netns", "exec", ns, "/usr/bin/python3", "-m",
                                 "http.server", str(port), "--bind", "0.0.0.0"],
                                cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: subprocess.run(["curl", "-sf", "--noproxy", "*",
                                         "http://%s:%d/hello.txt" % (FAR_PUBLIC, port)],
                                        capture_output=True).returncode == 0,
                 "the far service")
        yield port
    finally:
        if proc:
            proc.kill()
            proc.wait()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture(scope="module")
def host_service():
    """An HTTP service on the host's loopback that holds a secret."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(SECRET.encode())

        def log_message(self, *args):
            pass
    srv = socketserver.ThreadingTCPServer(("0.0.0.0", free_port()), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1]
    srv.shutdown()


def host_addresses():
    out = subprocess.run(["ip", "-o", "addr", "show", "scope", "global"], check=True,
                         capture_output=True, text=True).stdout
    addrs = [line.split()[3].split("/")[0] for line in out.splitlines()]
    return [a if ":" not in a else "[%s]" % a for a in addrs]


@pytest.fixture(scope="module")
def public_only(far_service):
    s = Server(env={"CODEBOX_SANDBOX": "bwrap", "CODEBOX_NETWORK": "on",
                    "CODEBOX_POOL_SIZE": "0"})
    yield s
    s.stop()


@pytest.fixture(scope="module")
def private_ok(far_service):
    s = Server(env={"CODEBOX_SANDBOX": "bwrap", "CODEBOX_NETWORK": "on",
                    "CODEBOX_DOWNLOAD_ALLOW_PRIVATE": "1", "CODEBOX_POOL_SIZE": "0"})
    yield s
    s.stop()


def create(s, session, **body):
    r = s.post("/sessions", {"session_id": session, **body})
    assert r.status == 201, r.text
    return r.json()


# Kernel code: fetch each URL through the proxy the environment names (the
# way urllib, requests, pip and curl do), and a CONNECT tunnel by hand.
FETCH = """
import http.client, os, urllib.request
def fetch(url):
    try:
        return 'OK ' + urllib.request.urlopen(url, timeout=20).read().decode().strip()
    except Exception as e:
        return 'ERR %s' % e
def tunnel(host, port):
    c = http.client.HTTPConnection('127.0.0.1', 3128, timeout=20)
    c.set_tunnel(host, port)
    try:
        c.request('GET', '/hello.txt')
        r = c.getresponse()
        return 'OK %d %s' % (r.status, r.read().decode().strip())
    except Exception as e:
        return 'ERR %s' % e
"""


def run(s, session, code):
    r = rest_run(s, session, FETCH + code)
    assert r["status"] == "completed", r
    return stream_of(r)


def test_the_kernel_has_only_its_loopback_and_a_proxy(public_only, host_service):
    s = public_only
    create(s, "ns")
    sandbox = s.get("/sessions/ns").json()["sandbox"]
    assert sandbox["network"] == "on" and "proxy" in sandbox["network_by"], sandbox
    out = run(s, "ns", "import socket\n"
                       "print(sorted(n for _, n in socket.if_nameindex()))\n"
                       "print(os.environ['HTTPS_PROXY'], os.environ['NO_PROXY'])\n"
                       "for port in (%d, %d):\n"
                       "    try:\n"
                       "        socket.create_connection(('127.0.0.1', port), timeout=3)\n"
                       "        print('CONNECTED')\n"
                       "    except OSError as e:\n"
                       "        print('refused', type(e).__name__)\n"
                       "print(fetch('http://127.0.0.1:%d/'))\n"
                       % (s.port, host_service, host_service))
    lines = out.splitlines()
    assert lines[0] == "['lo']", out
    assert lines[1] == "http://127.0.0.1:3128 localhost,127.0.0.1,::1", out
    assert lines[2:4] == ["refused ConnectionRefusedError"] * 2, out
    assert SECRET not in out, out


def test_the_proxy_refuses_the_gateway_the_host_and_private_ranges(public_only, far_service,
                                                                    host_service):
    s = public_only
    create(s, "refused")
    own = host_addresses()
    assert NET + ".1" in own and PUB + ".1" in own
    urls = (["http://127.0.0.1:%d/healthz" % s.port,         # the gateway, by loopback
             "http://localhost:%d/" % host_service,          # a name that is loopback
             "http://[::1]:%d/" % host_service,
             "http://169.254.169.254/latest/meta-data/",     # cloud metadata
             "http://%s:%d/hello.txt" % (FAR, far_service)]  # private, not allowed here
            + ["http://%s:%d/" % (a, host_service) for a in own])   # the host's own
    code = "".join("print(%r, '->', fetch('%s'))\n" % (u, u) for u in urls)
    # the proxy by hand: the environment's NO_PROXY sends loopback names direct
    code += ("opener = urllib.request.build_opener(urllib.request.ProxyHandler("
             "{'http': 'http://127.0.0.1:3128'}))\n"
             "urllib.request.getproxies = lambda: {'http': 'http://127.0.0.1:3128'}\n"
             "os.environ.pop('NO_PROXY'); os.environ.pop('no_proxy')\n"
             "for url in ['http://127.0.0.1:%d/sessions', 'http://localhost:%d/']:\n"
             "    print(url, '->', fetch(url))\n"
             "print('tunnel gateway ->', tunnel('127.0.0.1', %d))\n"
             "print('tunnel own ->', tunnel(%r, %d))\n"
             "print('tunnel far ->', tunnel(%r, %d))\n"
             % (s.port, host_service, s.port, PUB + ".1", host_service, FAR, far_service))
    out = run(s, "refused", code)
    assert SECRET not in out and "OK" not in out, out
    assert "hello from the far side" not in out, out
    lines = out.splitlines()
    assert len(lines) == len(urls) + 5, out
    # what the model reads says why
    assert "is a loopback address: kernel code reaches public addresses only" in out, out
    assert "169.254.169.254 is a link-local address" in out, out
    assert "%s is a private network address" % FAR in out, out
    # the host's own addresses: refused as such when public, otherwise for
    # their kind already
    assert "%s is an address of this host: kernel code reaches public addresses only" \
        % (PUB + ".1") in out, out
    for a in own:
        assert ("%s is an address of this host" % a.strip("[]") in out
                or "%s is a" % a.strip("[]") in out), out
    for line in lines[-3:]:
        assert "ERR Tunnel connection failed: 403 codebox:" in line, out


def test_public_addresses_are_reached(public_only, far_service):
    s = public_only
    create(s, "public")
    out = run(s, "public", "print(fetch('http://%s:%d/hello.txt'))\n"
                           "print(tunnel(%r, %d))\n"
                           "big = urllib.request.urlopen('http://%s:%d/big.bin', timeout=60).read()\n"
                           "print(len(big), big == bytes(range(256)) * 40960)\n"
              % (FAR_PUBLIC, far_service, FAR_PUBLIC, far_service, FAR_PUBLIC, far_service))
    assert out.splitlines() == ["OK hello from the far side", "OK 200 hello from the far side",
                                "10485760 True"], out


def test_private_addresses_when_allowed_but_never_the_host(private_ok, far_service, host_service):
    s = private_ok
    create(s, "far")
    out = run(s, "far", "print(fetch('http://%s:%d/hello.txt'))\n"
                        "print(tunnel(%r, %d))\n"
                        "print(fetch('http://%s:%d/'))\n"
                        "os.environ.pop('NO_PROXY'); os.environ.pop('no_proxy')\n"
                        "print(fetch('http://127.0.0.1:%d/healthz'))\n"
              % (FAR, far_service, FAR, far_service, NET + ".1", host_service, s.port))
    lines = out.splitlines()
    assert lines[0] == "OK hello from the far side", out
    assert lines[1] == "OK 200 hello from the far side", out
    assert "is an address of this host: kernel code reaches public and private addresses " \
           "only, never this host" in lines[2], out
    assert "is a loopback address" in lines[3], out
    assert SECRET not in out


def test_bad_requests_get_a_clear_answer(public_only):
    s = public_only
    create(s, "bad")
    out = run(s, "bad", "import socket\n"
                        "for req in [b'HELLO\\r\\n\\r\\n', b'GET /relative HTTP/1.1\\r\\n\\r\\n',\n"
                        "            b'GET https://x.example/ HTTP/1.1\\r\\n\\r\\n',\n"
                        "            b'CONNECT nohost HTTP/1.1\\r\\n\\r\\n',\n"
                        "            b'GET http://no-such-host.invalid/ HTTP/1.1\\r\\n\\r\\n']:\n"
                        "    c = socket.create_connection(('127.0.0.1', 3128), timeout=20)\n"
                        "    c.sendall(req)\n"
                        "    print(c.recv(400).split(b'\\r\\n')[0].decode())\n")
    lines = out.splitlines()
    assert lines[0].startswith("HTTP/1.1 400 codebox: not an HTTP/1.x request line"), out
    assert lines[1].startswith("HTTP/1.1 400 codebox: a proxy request names"), out
    assert lines[2].startswith("HTTP/1.1 501 codebox: https:// goes through CONNECT"), out
    assert lines[3].startswith("HTTP/1.1 400 codebox: CONNECT names host:port"), out
    assert lines[4].startswith("HTTP/1.1 502 codebox: cannot resolve no-such-host.invalid"), out


def test_javascript_and_interrupts_work_behind_the_bridge(public_only):
    s = public_only
    info = create(s, "js", kernel="javascript")
    assert info["kernel"] == "javascript"
    r = rest_run(s, "js", "console.log(process.env.HTTPS_PROXY); 6 * 7")
    assert r["status"] == "completed", r
    assert stream_of(r) == "http://127.0.0.1:3128\n", r
    create(s, "stop")
    rest_run(s, "stop", "keep = 'kept'")
    # the interrupt is sent once the cell runs (it writes a file first)
    r = s.post("/execute", {"session_id": "stop", "code": "import time\n"
                            "open('started', 'w').close()\ntime.sleep(60)"})
    rid = r.json()["request_id"]
    wait_for(lambda: os.path.exists(os.path.join(s.state_dir, "stop", "started")), "the cell")
    assert s.post("/execute/%s/cancel" % rid, {}).status in (200, 202)
    r = s.get("/execute/%s/results?wait=30" % rid).json()
    # the interrupt reached the kernel through the bridge in front of it:
    # KeyboardInterrupt, no restart, the state kept
    assert r["error"]["reason"] == "cancelled" and "KeyboardInterrupt" in str(r), r
    assert not r.get("kernel_restarted"), r
    assert stream_of(rest_run(s, "stop", "print(keep)")) == "kept\n"


def test_the_proxy_goes_with_its_kernel(public_only):
    s = public_only
    create(s, "gone")
    run(s, "gone", "print(fetch('http://169.254.169.254/'))")

    def proxies():
        return [p for p, _ in descendants(s.proc.pid) if "--net" in proc_cmdline(p)]
    before = proxies()
    assert before, "no relay serves a network proxy"
    assert s.delete("/sessions/gone").status in (200, 204)
    wait_for(lambda: len(proxies()) < len(before), "the kernel's proxy to go")
