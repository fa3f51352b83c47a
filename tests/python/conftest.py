import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# The tests (and the commands they start) keep their caches (sustained-write summaries,
# preconditioned drive states) apart from the user's, and leave none behind.
_CACHE_HOME = tempfile.mkdtemp(prefix="ssdlab-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE_HOME, ignore_errors=True)


def run_cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The ``ssdlab`` command in a fresh process, as a user runs it."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "ssdlab", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd or REPO, timeout=300)


@pytest.fixture
def cli():
    return run_cli


def _skip_reason(report) -> str:
    """The reason of a skipped test report (``longrepr`` is (path, line, "Skipped: why"))."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say why tests were skipped, one line per reason, even under ``-q`` (which hides skip
    reasons): first those that need the optional external data (they cover fio compatibility
    and are easy to miss), then any other reason (fio not installed, say)."""
    from collections import Counter

    from shared_data import REASON, SUMMARY

    reasons = Counter(_skip_reason(r).removeprefix("Skipped: ")
                      for r in terminalreporter.stats.get("skipped", []))
    n = sum(count for reason, count in reasons.items() if REASON in reason)
    lines = [(n, SUMMARY)] if n else []
    lines += [(count, reason) for reason, count in reasons.most_common() if REASON not in reason]
    for count, why in lines:
        terminalreporter.write_line(f"{count} test{'s' if count != 1 else ''} skipped: {why}", yellow=True)
