"""CODEBOX_CPU_LIMIT: a session's processes together use at most that many
cores at every moment, between executions too: every kernel (and all it
starts) lives in a cpu cgroup with a CFS quota from its start. Measured as
CPU time over wall time of the processes a cell left spinning, never as a
latency."""

import os
import time

import pytest

from conftest import descendants, proc_cmdline, rest_run

SPIN = "while True: pass"

needs_cgroup = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
    reason="CPU quotas need root and a cgroup v1 cpu hierarchy")


def cpu_seconds(pids):
    """utime + stime of pids (the ones still running), in seconds."""
    hz = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / hz


def spinners(server):
    return [pid for pid, _ in descendants(server.proc.pid)
            if SPIN in proc_cmdline(pid) and "subprocess" not in proc_cmdline(pid)]


def cpu_quota_of(pid):
    """The CFS quota (µs per 100 ms period) of pid's cpu cgroup."""
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "cpu" in controllers.split(","):
                with open("/sys/fs/cgroup/cpu%s/cpu.cfs_quota_us" % path) as q:
                    return int(q.read())
    raise AssertionError("pid %d is in no cpu cgroup" % pid)


@needs_cgroup
def test_background_spinners_held_to_the_share_between_executions(server_factory):
    s = server_factory(env={"CODEBOX_CPU_LIMIT": "0.5", "CODEBOX_POOL_SIZE": "0"})
    assert s.post("/sessions", {"session_id": "spin"}).status == 201
    # two processes that spin forever; the cell returns at once
    res = rest_run(s, "spin", "import subprocess, sys\n"
                              "procs = [subprocess.Popen([sys.executable, '-c', %r]) "
                              "for _ in range(2)]\nprint('started')" % SPIN)
    assert res["status"] == "completed", res
    deadline = time.monotonic() + 30
    while len(spinners(s)) < 2:
        assert time.monotonic() < deadline, "the spinners did not start"
        time.sleep(0.1)
    pids = spinners(s)
    for pid in pids:
        assert cpu_quota_of(pid) == 50000           # 0.5 of a 100 ms period
    # no execution runs now: over a few seconds the two spin at most half
    # a core together (unlimited they would take both cores: a rate of ~2)
    c0, t0 = cpu_seconds(pids), time.monotonic()
    time.sleep(4)
    c1, t1 = cpu_seconds(pids), time.monotonic()
    rate = (c1 - c0) / (t1 - t0)
    assert rate <= 0.7, "the session's processes used %.2f cores" % rate
    assert c1 > c0, "the spinners did not run at all"
    assert "cpu_limit=off" not in s.log()


@needs_cgroup
def test_execution_options_cpu_limit_is_clamped_to_the_share(server_factory):
    s = server_factory(env={"CODEBOX_CPU_LIMIT": "0.25", "CODEBOX_POOL_SIZE": "0"})
    r = s.post("/sessions", {"session_id": "asks-more",
                             "execution_options": {"cpu_limit": "2"}})
    assert r.status == 201, r.text
    res = rest_run(s, "asks-more", "import os\nprint(os.getpid())")
    assert res["status"] == "completed", res
    kernels = [pid for pid, _ in descendants(s.proc.pid) if "ipykernel" in proc_cmdline(pid)]
    assert kernels
    assert {cpu_quota_of(pid) for pid in kernels} == {25000}


def test_bad_cpu_limit_is_refused_at_start(codebox, tmp_path):
    r = codebox(["serve", "--port", "0", "--state-dir", str(tmp_path)],
                env={"CODEBOX_CPU_LIMIT": "half"}, timeout=30)
    assert r.returncode != 0
    assert "CODEBOX_CPU_LIMIT must be a positive number of CPU cores" in r.stderr
