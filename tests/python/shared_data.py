"""Where the project's reference data lives: shared/data beside the repository checkout
(CI clones the repo with shared/ next to it). None when it is not there; tests skip then."""

from __future__ import annotations

from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]


def shared_data() -> Path | None:
    for candidate in (_ROOT.parent / "shared" / "data", _ROOT / "shared" / "data"):
        if (candidate / "fio-examples").is_dir():
            return candidate
    return None


DATA = shared_data()
