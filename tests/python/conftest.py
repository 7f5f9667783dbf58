"""Shared fixtures of the Python package's tests (docs/python.md). ctest runs
them with /usr/bin/python3 -m pytest, PYTHONPATH set to build/python and
SPYRE_BIN to the `spyre` executable, whose answers they are compared with."""

import os
import subprocess

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def example(*parts):
    return os.path.join(ROOT, "examples", "models", *parts)


@pytest.fixture(scope="session")
def spyre_bin():
    path = os.environ.get("SPYRE_BIN")
    if not path:
        pytest.skip("SPYRE_BIN is not set (ctest sets it to the spyre executable)")
    return path


@pytest.fixture(scope="session")
def run_cli(spyre_bin):
    """Runs `spyre ARGS...`; returns (exit code, stdout, stderr)."""
    def run(*args):
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        p = subprocess.run([spyre_bin, *args], capture_output=True, text=True,
                           env=env, cwd=ROOT)
        return p.returncode, p.stdout, p.stderr
    return run
