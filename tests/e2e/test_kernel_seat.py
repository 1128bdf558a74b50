"""The seat (`codebox-sidecar kernel-seat SOCKET -- ARGV`) against a fork
server played by the test, on a Unix socket: what it sends, and each way
it can go. The real server's side is test_fork_server.py; here the server
refuses, is missing, hands over a kernel (a process of the test's), sends
its status, or ends first: the branches a real server seldom takes."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

SIDECAR = os.path.join(os.path.dirname(os.environ.get("CODEBOX_BIN", "build/codebox")),
                       "codebox-sidecar")
RAN = ["sh", "-c", "echo ran; exit 3"]     # what the seat runs when it starts the kernel itself


def seat(sock, argv, **kw):
    env = dict(os.environ, SEAT_TEST_VAR="seat-value")
    return subprocess.Popen([SIDECAR, "kernel-seat", sock, "--"] + argv, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


class FakeServer:
    """Accepts one seat and plays the server as `answer` says."""

    def __init__(self, tmp, answer):
        self.path = os.path.join(tmp, "fork.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(1)
        self.request, self.fds, self.answer = None, [], answer
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        conn, _ = self.listener.accept()
        data = b""
        while not data.endswith(b"\n"):
            msg, anc, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(3 * 4))
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    got = [int.from_bytes(payload[i:i + 4], "little")
                                 for i in range(0, len(payload), 4)]
                    self.fds += got
                    for fd in got:      # (the seat's stdout and stderr: held, they
                        os.close(fd)    # would keep the test's pipes open)
            if not msg:
                break
            data += msg
        self.request = json.loads(data)
        self.answer(conn)

    def close(self):
        self.thread.join(10)
        self.listener.close()


@pytest.fixture
def tmp():
    with tempfile.TemporaryDirectory() as d:
        yield d


def send_exit_of(conn, kernel):
    """Waits for the test's stand-in kernel to end and sends its status."""
    kernel.wait(30)
    conn.sendall(json.dumps({"exit": kernel.returncode and -kernel.returncode}).encode() + b"\n")


def sigterm_once_asked(server, p, pause=0.0, then=None):
    """Once the seat has sent its request (and pause seconds), SIGTERM to
    it, then `then` set; returns its stdout and stderr at its end."""
    deadline = time.time() + 30
    while server.request is None and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(pause)
    p.send_signal(signal.SIGTERM)
    if then:
        then.set()
    out, err = p.communicate(timeout=30)
    server.close()
    return out, err


def test_without_a_server_the_seat_starts_the_kernel_itself(tmp):
    p = seat(os.path.join(tmp, "none.sock"), RAN)
    out, err = p.communicate(timeout=30)
    assert (p.returncode, out) == (3, "ran\n"), err
    assert "no fork server" in err and "starting the kernel itself" in err, err


def test_the_request_carries_argv_env_cwd_and_three_descriptors_and_a_refusal_runs_argv(tmp):
    def refuse(conn):
        conn.sendall(json.dumps({"refused": "the test says no"}).encode() + b"\n")
        conn.close()
    server = FakeServer(tmp, refuse)
    p = seat(server.path, RAN, cwd=tmp)
    out, err = p.communicate(timeout=30)
    server.close()
    assert (p.returncode, out) == (3, "ran\n"), err
    assert "refused: the test says no" in err, err
    r = server.request
    assert r["argv"] == RAN and r["cwd"] == tmp, r
    assert r["env"]["SEAT_TEST_VAR"] == "seat-value", r["env"]
    assert len(server.fds) == 3, server.fds


def test_a_kernel_handed_over_gets_the_seats_signals_and_the_seat_exits_as_it_did(tmp):
    kernel = subprocess.Popen(["sleep", "60"])
    done = threading.Event()

    def hand_over(conn):
        conn.sendall(json.dumps({"pid": kernel.pid}).encode() + b"\n")
        send_exit_of(conn, kernel)           # the SIGTERM the seat passes on ends it
        done.wait(30)
        conn.close()
    server = FakeServer(tmp, hand_over)
    p = seat(server.path, RAN)
    out, err = sigterm_once_asked(server, p, pause=0.3, then=done)  # (the seat reads the pid)
    assert kernel.returncode == -signal.SIGTERM     # passed on to the kernel
    assert p.returncode == -signal.SIGTERM, err     # and told as the kernel's end
    assert out == "", out                           # argv was not run


def test_a_signal_before_the_kernel_is_known_reaches_it_once_it_is(tmp):
    kernel = subprocess.Popen(["sleep", "60"])
    signalled = threading.Event()

    def late_hand_over(conn):
        signalled.wait(30)                   # the seat got SIGTERM before any pid
        time.sleep(0.2)
        conn.sendall(json.dumps({"pid": kernel.pid}).encode() + b"\n")
        send_exit_of(conn, kernel)
        conn.close()
    server = FakeServer(tmp, late_hand_over)
    p = seat(server.path, RAN)
    out, err = sigterm_once_asked(server, p, then=signalled)
    if kernel.poll() is None:
        kernel.kill()
    assert kernel.wait(5) == -signal.SIGTERM, "the signal was lost"
    assert (p.returncode, out) == (-signal.SIGTERM, ""), err


def test_a_signal_before_a_refusal_ends_the_seat_without_starting_the_kernel(tmp):
    signalled = threading.Event()

    def late_refusal(conn):
        signalled.wait(30)
        time.sleep(0.2)
        conn.sendall(json.dumps({"refused": "too late"}).encode() + b"\n")
        conn.close()
    server = FakeServer(tmp, late_refusal)
    p = seat(server.path, RAN)
    out, err = sigterm_once_asked(server, p, then=signalled)
    assert (p.returncode, out) == (-signal.SIGTERM, ""), err


def test_a_status_of_exit_is_the_seats_exit_code(tmp):
    def exits(conn):
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        conn.sendall(json.dumps({"exit": 7 << 8}).encode() + b"\n")
        conn.close()
    server = FakeServer(tmp, exits)
    p = seat(server.path, RAN)
    out, err = p.communicate(timeout=30)
    server.close()
    assert (p.returncode, out) == (7, ""), err


def test_when_the_server_ends_first_the_seat_waits_for_the_kernel(tmp):
    kernel = subprocess.Popen(["sleep", "2"])

    def leave(conn):
        conn.sendall(json.dumps({"pid": kernel.pid}).encode() + b"\n")
        conn.close()
    server = FakeServer(tmp, leave)
    p = seat(server.path, RAN)
    out, err = p.communicate(timeout=30)
    server.close()
    assert kernel.poll() is not None, "the seat ended before its kernel"
    assert (p.returncode, out) == (1, ""), err
    assert "the fork server ended; the kernel goes on" in err, err
