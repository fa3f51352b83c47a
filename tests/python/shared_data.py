"""Optional test data that is not part of the repository.

A few tests check ssdlab against material it does not ship: the job files of fio's own
``examples/`` directory (github.com/axboe/fio at fio-3.42-135, with an ``INDEX.md`` that tags
each file), the seed job files as first transcribed (with fio's inline comments), and a JSON
report from a real fio run. They look for that material in a ``shared/data`` directory beside
the repository checkout (or inside it), or where ``SSDLAB_SHARED_DATA`` points; without it they
skip with :data:`REASON`, and the pytest summary counts them (see ``conftest.py``).
``SSDLAB_SHARED_DATA=none`` makes the tests behave as if the data were absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]

#: Every skip for missing external data carries this reason, so that the summary can count them.
REASON = "needs optional test data from shared/data beside the checkout (not part of the repository)"

#: The line the summary prints after ``N tests skipped:``.
SUMMARY = ("they need fio's example job files, the seed job files and a real fio JSON report from"
           " shared/data beside the checkout, which is not part of the repository"
           " (see tests/python/shared_data.py)")


def shared_data() -> Path | None:
    """The external data directory, or None when it is not there."""
    env = os.environ.get("SSDLAB_SHARED_DATA")
    if env is not None:
        if env.strip().lower() in ("", "none", "0"):
            return None
        candidates = [Path(env)]
    else:
        candidates = [_ROOT.parent / "shared" / "data", _ROOT / "shared" / "data"]
    for candidate in candidates:
        if (candidate / "fio-examples").is_dir():
            return candidate
    return None


DATA = shared_data()

#: Marks a test that needs :data:`DATA`.
needs_shared_data = pytest.mark.skipif(DATA is None, reason=REASON)


def skip_without_shared_data() -> Path:
    """:data:`DATA`, or skip the calling test with :data:`REASON`."""
    if DATA is None:
        pytest.skip(REASON)
    return DATA
