"""The pytest summary says why tests were skipped, even under -q: a line for the tests that
need the optional external data (shared_data.py), and one per other reason."""

import os
import subprocess
import sys
from pathlib import Path

from shared_data import REASON, SUMMARY

HERE = Path(__file__).resolve().parent

SAMPLE = f'''
import pytest

def test_runs():
    pass

@pytest.mark.parametrize("i", range(3))
def test_needs_data(i):
    pytest.skip({REASON!r})

@pytest.mark.skipif(True, reason="fio is not installed")
def test_needs_fio():
    pass
'''


def _pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, SSDLAB_SHARED_DATA="none",
               PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_summary_counts_skips_by_reason(tmp_path):
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    p = _pytest("-p", "conftest", "test_sample.py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert f"3 tests skipped: {SUMMARY}" in lines
    assert "1 test skipped: fio is not installed" in lines
    # The external-data line comes first, before pytest's own "1 passed, 4 skipped".
    assert lines.index(f"3 tests skipped: {SUMMARY}") < lines.index("1 test skipped: fio is not installed")


def test_real_tests_without_the_data_say_so():
    # The project's own tests, with the external data switched off.
    p = _pytest("tests/python/test_fio_examples.py", "-k", "seed_jobs or index", cwd=HERE.parents[1])
    assert p.returncode == 0, p.stdout + p.stderr
    assert any(line.endswith(f"tests skipped: {SUMMARY}") for line in p.stdout.splitlines()), p.stdout
