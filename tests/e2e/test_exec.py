"""`codebox exec` against real ipykernel and ijavascript kernels."""
import json
import os
import re
import subprocess
import time

import pytest

from conftest import run_codebox, BIN


def pids_of(pattern):
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def test_print_42(tmp_path):
    r = run_codebox(["exec", "-"], stdin="print(6*7)\n", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "42\n"


def test_code_from_file(tmp_path):
    f = tmp_path / "prog.py"
    f.write_text("x = 20\nprint(x + 1)\n")
    r = run_codebox(["exec", str(f)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "21\n"


def test_stdout_stderr_and_result(tmp_path):
    code = "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\n6*7\n"
    r = run_codebox(["exec", "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "to out\n42\n"
    assert "to err\n" in r.stderr


def test_error_prints_traceback_and_fails(tmp_path):
    r = run_codebox(["exec", "-"], stdin="def f():\n    return 1/0\nf()\n", cwd=tmp_path)
    assert r.returncode == 1
    assert "ZeroDivisionError" in r.stderr
    assert "division by zero" in r.stderr
    assert "\x1b[" not in r.stderr  # ANSI colours stripped when not a terminal


def test_matplotlib_plot_saved_as_png(tmp_path):
    code = ("import matplotlib.pyplot as plt\n"
            "plt.plot([1, 3, 2])\nplt.show()\n")
    r = run_codebox(["exec", "--output-dir", str(tmp_path), "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    m = re.search(r"\[image/png saved to (.+\.png)\]", r.stdout)
    assert m, r.stdout
    data = open(m.group(1), "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 1000


def test_images_never_overwrite(tmp_path):
    (tmp_path / "codebox-exec-1.png").write_bytes(b"keep me")
    code = "from IPython.display import Image, display\n" \
           "import base64\n" \
           "png = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==')\n" \
           "display(Image(data=png))\n"
    r = run_codebox(["exec", "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "codebox-exec-1.png").read_bytes() == b"keep me"
    assert "codebox-exec-2.png" in r.stdout
    assert (tmp_path / "codebox-exec-2.png").read_bytes()[:4] == b"\x89PNG"


def test_input_fails_fast(tmp_path):
    t0 = time.monotonic()
    r = run_codebox(["exec", "-"], stdin="x = input('name? ')\n", cwd=tmp_path, timeout=60)
    assert time.monotonic() - t0 < 30
    assert r.returncode == 1
    assert "StdinNotImplementedError" in r.stderr


def test_state_across_statements_and_display_order(tmp_path):
    code = "print('a')\nfrom IPython.display import display\ndisplay('middle')\nprint('b')\n"
    r = run_codebox(["exec", "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "a\n'middle'\nb\n"


def test_kernel_that_dies_mid_run(tmp_path):
    r = run_codebox(["exec", "-"], stdin="import os\nos._exit(3)\n", cwd=tmp_path)
    assert r.returncode == 3
    assert "exited with status 3" in r.stderr


def test_kernel_killed_by_signal(tmp_path):
    # unsandboxed: the kernel's own death is reported as such (bwrap would
    # report it as its exit status)
    r = run_codebox(["exec", "--no-sandbox", "-"],
                    stdin="import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
                    cwd=tmp_path)
    assert r.returncode == 3
    assert "killed by signal 9" in r.stderr


def test_kernel_never_ready_reports_within_timeout(tmp_path):
    # a never-ready kernel of its own, whose command line no other test's has
    naps = "600.%d" % os.getpid()
    spec = tmp_path / "kernels" / "never-ready"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps(
        {"argv": ["sleep", naps], "display_name": "never ready", "language": "none"}))
    t0 = time.monotonic()
    r = run_codebox(["exec", "--kernel", "never-ready", "-"], stdin="1\n", cwd=tmp_path,
                    env={"CODEBOX_KERNEL_START_TIMEOUT": "2",
                         "CODEBOX_KERNEL_PATH": str(tmp_path / "kernels")})
    elapsed = time.monotonic() - t0
    assert r.returncode == 3, r.stderr
    assert "did not become ready within 2000 ms" in r.stderr
    assert elapsed < 15
    assert not pids_of("^sleep %s$" % re.escape(naps)), "the kernel process outlived codebox"


def test_kernel_program_missing(tmp_path):
    r = run_codebox(["exec", "--no-sandbox", "--kernel", "missing-binary", "-"], stdin="1\n",
                    cwd=tmp_path)
    assert r.returncode == 3
    assert "cannot run '/nonexistent/codebox-kernel'" in r.stderr
    assert "No such file" in r.stderr


def test_unknown_kernel_lists_available(tmp_path):
    r = run_codebox(["exec", "--kernel", "cobol", "-"], stdin="1\n", cwd=tmp_path)
    assert r.returncode == 2
    assert "no kernelspec named 'cobol'" in r.stderr
    assert "python3" in r.stderr


def test_timeout_interrupts(tmp_path):
    code = "import time\nwhile True:\n    time.sleep(0.05)\n"
    t0 = time.monotonic()
    r = run_codebox(["exec", "--timeout", "2", "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 124
    assert "KeyboardInterrupt" in r.stderr
    assert time.monotonic() - t0 < 20


def test_timeout_when_interrupt_is_swallowed(tmp_path):
    code = ("import time\n"
            "while True:\n"
            "    try:\n"
            "        time.sleep(0.05)\n"
            "    except KeyboardInterrupt:\n"
            "        pass\n")
    r = run_codebox(["exec", "--timeout", "1", "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 124
    assert "TimeoutError" in r.stderr


def test_bad_timeout_value(tmp_path):
    r = run_codebox(["exec", "--timeout", "soon", "-"], stdin="1\n", cwd=tmp_path)
    assert r.returncode == 2
    assert "CODEBOX_EXEC_TIMEOUT must be a positive integer" in r.stderr


def test_output_is_capped(tmp_path):
    r = run_codebox(["exec", "-"], stdin="print('x' * 100000)\n", cwd=tmp_path,
                    env={"CODEBOX_MAX_OUTPUT_BYTES": "1000"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == "x" * 1000
    assert "output truncated at 1000 bytes" in r.stdout


def test_sigterm_ends_kernel(tmp_path):
    # unsandboxed, so the pid the kernel prints is the host's
    p = subprocess.Popen([BIN, "exec", "--no-sandbox", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    p.stdin.write("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(600)\n")
    p.stdin.close()
    line = p.stdout.readline()
    kernel_pid = int(line)
    os.kill(kernel_pid, 0)
    p.terminate()
    assert p.wait(timeout=20) == 128 + 15
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(kernel_pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("kernel outlived codebox exec")


def test_javascript_kernel(tmp_path):
    code = "console.log(6*7); console.error('oops'); [1, 2].map(x => x * 2)\n"
    r = run_codebox(["exec", "--kernel", "javascript", "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "42\n[ 2, 4 ]\n"
    assert "oops" in r.stderr


def test_javascript_error(tmp_path):
    r = run_codebox(["exec", "--kernel", "javascript", "-"], stdin="throw new Error('boom')\n",
                    cwd=tmp_path)
    assert r.returncode == 1
    assert "Error: boom" in r.stderr


def test_works_in_the_current_folder(tmp_path):
    # run from the script's folder: data.csv beside it is read, what the
    # code writes stays there, as the folder's owner's (as root the kernel
    # runs as the kernel user; pytest's folders are 0700 above this one)
    (tmp_path / "data.csv").write_text("a,b\n1,2\n3,4\n")
    (tmp_path / "job.py").write_text(
        "import csv, os\n"
        "rows = list(csv.DictReader(open('data.csv')))\n"
        "print(sum(int(r['a']) for r in rows))\n"
        "open('out.txt', 'w').write('written')\n"
        "os.makedirs('results', exist_ok=True)\n"
        "open('results/r.csv', 'w').write('x\\n1\\n')\n"
        "n = open('data.csv', 'a').write('5,6\\n')\n")
    r = run_codebox(["exec", "job.py"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "4\n"
    assert (tmp_path / "out.txt").read_text() == "written"
    assert (tmp_path / "results" / "r.csv").read_text() == "x\n1\n"
    assert (tmp_path / "data.csv").read_text().endswith("5,6\n")
    owner = os.stat(tmp_path).st_uid
    for path in ("out.txt", "results", "results/r.csv", "data.csv"):
        assert os.stat(tmp_path / path).st_uid == owner, path
    # nothing of the run is left: its folder, a mount. Other tests' runs
    # may have a folder of their own now (tests run in parallel): every
    # folder there now must go within a minute (a run's life), and none
    # may hold this folder
    with open("/proc/self/mountinfo") as f:
        assert str(tmp_path) not in f.read()

    def exec_folders():
        return {p for p in os.listdir("/tmp") if p.startswith("codebox-exec-")
                and os.path.exists("/tmp/%s/here" % p)}
    now = exec_folders()
    for p in now:
        try:
            assert not os.path.samefile("/tmp/%s/here" % p, tmp_path), p
        except FileNotFoundError:
            pass    # that run just ended
    deadline = time.monotonic() + 60
    while now & exec_folders():
        assert time.monotonic() < deadline, "left behind: %s" % (now & exec_folders())
        time.sleep(0.5)


def test_sandboxed_in_the_current_folder(tmp_path):
    # the folder is /session inside; the folder above it stays hidden
    (tmp_path / "beside.txt").write_text("seen")
    (tmp_path.parent / "codebox-exec-above.txt").write_text("hidden")
    code = ("import os\nprint(os.getcwd(), open('beside.txt').read())\n"
            "print(os.path.exists(%r))\n" % str(tmp_path.parent / "codebox-exec-above.txt"))
    r = run_codebox(["exec", "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "/session seen\nFalse\n"


def test_isolated_works_in_an_empty_folder(tmp_path):
    (tmp_path / "data.csv").write_text("a\n1\n")
    code = "import os\nprint(os.listdir('.'))\nn = open('gone.txt', 'w').write('x')\n"
    r = run_codebox(["exec", "--isolated", "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[]\n"
    assert not (tmp_path / "gone.txt").exists()
    assert "--isolated: 1 file the code wrote in its empty folder is removed" in r.stderr
    r = run_codebox(["exec", "--isolated", "-"], stdin="open('data.csv')\n", cwd=tmp_path)
    assert r.returncode == 1 and "FileNotFoundError" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the idmapped mount is made as root")
def test_set_id_bits_the_code_sets_are_removed(tmp_path):
    # as root the code writes as the folder's owner: a set-user-ID file it
    # makes would run as root outside the sandbox
    code = ("import os, shutil\nshutil.copy('/bin/true', 't')\nos.chmod('t', 0o6755)\n"
            "print(oct(os.stat('t').st_mode & 0o7000))\n")
    r = run_codebox(["exec", "-"], stdin=code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "0o6000\n"      # inside, as set
    assert os.stat(tmp_path / "t").st_mode & 0o7000 == 0
    assert "set-user-ID or set-group-ID" in r.stderr


def test_help_says_where_files_land():
    r = run_codebox(["exec", "--help"])
    assert r.returncode == 0
    assert "works in the current" in r.stdout and "--isolated" in r.stdout


def test_kernelspecs_lists_fixtures_and_system():
    r = run_codebox(["kernelspecs"])
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert all(len(row) == 4 for row in rows), r.stdout
    names = {row[0]: row for row in rows}
    assert names["python3"][1] == "python"
    assert names["javascript"][1] == "javascript"
    assert names["never-ready"][3].endswith("tests/e2e/kernels/never-ready")


def test_help_and_version():
    for args in (["--help"], ["exec", "--help"], ["kernelspecs", "--help"]):
        r = run_codebox(args)
        assert r.returncode == 0 and "Usage: codebox" in r.stdout, args
    r = run_codebox(["--version"])
    assert r.returncode == 0 and r.stdout.startswith("codebox ")
    r = run_codebox(["frobnicate"])
    assert r.returncode == 2 and "unknown command" in r.stderr
