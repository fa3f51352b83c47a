"""Where ssdlab keeps what it can compute again but would rather not: sustained-write
summaries (``sustained/``) and preconditioned drive states (``states/``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "state_cache_dir"]


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ssdlab``, else ``~/.cache/ssdlab``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ssdlab"


def state_cache_dir() -> Path:
    """Drives' preconditioned states (see ``StateCache`` in the core): one file per drive
    description, preconditioning, seed and build of the core; at most 8 GiB in all, the least
    recently used removed first."""
    return cache_dir() / "states"
