"""Shared fixtures for the end-to-end tests: the real codebox binary
(CODEBOX_BIN, set by `make e2e`) and helpers to run it."""
import os
import subprocess
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("CODEBOX_BIN") or os.path.join(HERE, "..", "..", "build", "codebox")
FIXTURE_KERNELS = os.path.join(HERE, "kernels")


def run_codebox(args, stdin=None, cwd=None, env=None, timeout=120):
    """Runs codebox with args; returns the CompletedProcess (text mode)."""
    full_env = dict(os.environ)
    full_env.setdefault("CODEBOX_KERNEL_PATH", FIXTURE_KERNELS)
    if env:
        full_env.update(env)
    return subprocess.run([BIN] + list(args), input=stdin, cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def codebox():
    return run_codebox
