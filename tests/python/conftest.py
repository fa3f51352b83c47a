import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The ``ssdlab`` command in a fresh process, as a user runs it."""
    import os

    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "ssdlab", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd or REPO, timeout=300)


@pytest.fixture
def cli():
    return run_cli
