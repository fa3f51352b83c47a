"""JSON that every parser accepts: Python's ``json`` writes ``NaN`` and ``Infinity``, which
are not JSON. A value that is not a finite number (an interval's WAF with nothing written,
an infinite rate) becomes ``null``."""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float, at any depth, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kw: Any) -> str:
    """Strict JSON text of ``value`` (non-finite numbers as null)."""
    return json.dumps(finite(value), allow_nan=False, **kw)
