"""Settings at start, with the real binary: a template's `<...>` values
(Code Box's .env as shipped) are left unset with one warning each; a
setting that names what does not exist stops `codebox serve` and `codebox
mcp` at once, naming it; `--help` says each default once, and `codebox mcp
--help` only the settings stdio reads."""
import json
import os
import re
import subprocess

import pytest

from conftest import BIN, Server

# Code Box's README .env, adapted only in host and port
CODE_BOX_ENV = """\
# ─── Server ───
MCP_SERVER_NAME=Code Interpreter MCP
MCP_HOST=127.0.0.1
MCP_PORT=0

# ─── Session Lifecycle ───
SESSION_TTL=3600
IDLE_TIMEOUT=1800
EXEC_TIMEOUT=300

# ─── Azure Blob Storage (optional) ───
AZURE_BLOB_CONNECTION_STRING=<your-connection-string>
AZURE_BLOB_CONTAINER_NAME=code-interpreter-artifacts
BLOB_SAS_EXPIRY_HOURS=24

# ─── Azure SQL Database (optional) ───
AZURE_DATABASE_CONNECTION_STRING=<your-odbc-connection-string>
AZURE_DATABASE_PASSWORD=<your-password>
"""


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOX_")}
    env.update(extra)
    return env


def start(args, tmp_path, env=None, stdin=""):
    """Runs a server command that must stop by itself at start."""
    return subprocess.run([BIN] + args, input=stdin, cwd=tmp_path, env=clean_env(**(env or {})),
                          capture_output=True, text=True, timeout=60)


def test_code_box_env_with_placeholders_starts(tmp_path):
    (tmp_path / ".env").write_text(CODE_BOX_ENV)
    s = Server(cwd=str(tmp_path))
    try:
        assert s.get("/healthz").status == 200
        log = s.log()
        warnings = [line for line in log.splitlines() if "event=placeholder" in line]
        assert len(warnings) == 2, log
        assert any("name=AZURE_BLOB_CONNECTION_STRING" in w and ".env line 12" in w
                   and "CODEBOX_BLOB_CONNECTION_STRING left unset" in w for w in warnings)
        assert any("name=AZURE_DATABASE_CONNECTION_STRING" in w
                   and "CODEBOX_SQL_DSN left unset" in w for w in warnings)
        assert "your-connection-string" not in log
        # the rest of the file is read: the container, Code Box's name for ours
        assert "name=AZURE_BLOB_CONTAINER_NAME as=CODEBOX_BLOB_CONTAINER" in log
    finally:
        s.stop()


def test_placeholder_in_the_environment_keeps_the_default(tmp_path):
    r = start(["mcp", "--state-dir", str(tmp_path / "s")], tmp_path,
              env={"CODEBOX_DEFAULT_KERNEL": "<your-kernel>"},
              stdin=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n")
    assert r.returncode == 0, r.stderr
    assert "kernel=python3" in r.stderr
    assert re.search(r"event=placeholder name=CODEBOX_DEFAULT_KERNEL source=\"environment\"",
                     r.stderr), r.stderr
    assert json.loads(r.stdout.splitlines()[0])["id"] == 1


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_a_default_kernel_that_does_not_exist_stops_at_start(tmp_path, command):
    r = start([command, "--state-dir", str(tmp_path / "s")], tmp_path,
              env={"CODEBOX_DEFAULT_KERNEL": "nosuch"})
    assert r.returncode == 2, r.stderr
    assert "CODEBOX_DEFAULT_KERNEL: no kernelspec named 'nosuch'" in r.stderr
    assert "python3" in r.stderr     # what there is
    assert "serving" not in r.stderr and "mcp on stdio" not in r.stderr


@pytest.mark.parametrize("roots, says", [
    ("/nonexistent-codebox-root", "'/nonexistent-codebox-root' is not a folder on this host"),
    ("/tmp:/nonexistent-codebox-root=rw",
     "'/nonexistent-codebox-root' is not a folder on this host"),
    ("data", "'data' is not an absolute path"),
])
def test_a_mount_root_that_does_not_exist_stops_at_start(tmp_path, roots, says):
    r = start(["serve", "--port", "0", "--state-dir", str(tmp_path / "s")], tmp_path,
              env={"CODEBOX_MOUNT_ROOTS": roots})
    assert r.returncode == 2, r.stderr
    assert "CODEBOX_MOUNT_ROOTS: " + says in r.stderr, r.stderr


@pytest.mark.parametrize("name, value, says", [
    ("CODEBOX_POOL_KERNELS", "python3,cobol", "no kernelspec named 'cobol'"),
    ("CODEBOX_KERNEL_PATH", "/nonexistent-codebox-kernels", "is not a folder on this host"),
    ("CODEBOX_PIP_FIND_LINKS", "/nonexistent-codebox-wheels", "is not a folder on this host"),
])
def test_other_settings_naming_what_does_not_exist(tmp_path, name, value, says):
    r = start(["serve", "--port", "0", "--state-dir", str(tmp_path / "s")], tmp_path,
              env={name: value})
    assert r.returncode == 2, r.stderr
    assert name + ": " in r.stderr and says in r.stderr, r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the kernel user matters as root only")
def test_a_named_kernel_user_that_does_not_exist_stops_at_start(tmp_path):
    r = start(["serve", "--port", "0", "--state-dir", str(tmp_path / "s")], tmp_path,
              env={"CODEBOX_KERNEL_USER": "no-such-codebox-user"})
    assert r.returncode == 2, r.stderr
    assert "CODEBOX_KERNEL_USER: no user 'no-such-codebox-user'" in r.stderr


def test_mount_roots_that_exist_start(tmp_path):
    (tmp_path / "data").mkdir()
    s = Server(env={"CODEBOX_MOUNT_ROOTS": "%s:/tmp=rw" % (tmp_path / "data")})
    try:
        assert s.get("/healthz").status == 200
    finally:
        s.stop()


def help_lines(args):
    r = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line.startswith("  ")]


def test_help_says_each_default_once():
    for args in (["serve", "--help"], ["mcp", "--help"], ["settings"]):
        for line in help_lines(args):
            assert line.count("(default") <= 1, (args, line)
    node = [line for line in help_lines(["serve", "--help"]) if "CODEBOX_NODE_NAME" in line]
    assert node and node[0].endswith("(default: the host name)"), node


def test_mcp_help_lists_only_what_stdio_reads():
    names = {line.split()[0] for line in help_lines(["mcp", "--help"])
             if line.startswith("  CODEBOX_")}
    assert {"CODEBOX_DEFAULT_KERNEL", "CODEBOX_STATE_DIR", "CODEBOX_EXEC_TIMEOUT",
            "CODEBOX_SANDBOX", "CODEBOX_MOUNT_ROOTS", "CODEBOX_BLOB_CONNECTION_STRING"} <= names
    for http_only in ("CODEBOX_HOST", "CODEBOX_PORT", "CODEBOX_API_TOKENS",
                      "CODEBOX_ALLOWED_ORIGINS", "CODEBOX_HTTP_IDLE_TIMEOUT",
                      "CODEBOX_MAX_CONNECTIONS_PER_ADDRESS", "CODEBOX_WS_PING_INTERVAL",
                      "CODEBOX_MAX_MCP_SESSIONS", "CODEBOX_PUBLIC_URL"):
        assert http_only not in names, http_only
    serve = {line.split()[0] for line in help_lines(["serve", "--help"])
             if line.startswith("  CODEBOX_")}
    assert names < serve and "CODEBOX_PORT" in serve
