"""Where a key sits in a TOML file, for error messages that name file:line.

``tomllib`` returns values without positions. The files ssdlab reads (profiles, systems) are
plain: table headers ``[a.b]`` or ``[[array]]`` on lines of their own, then ``key = value``
lines (a value may be an inline table). Scanning the text for the header and the key is
enough to point a user at the right line; when the key is not written (a missing key, a
default) the line of its table is given, and failing that none.
"""

from __future__ import annotations

import datetime
import math
import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\"|'[^']*')\s*=")


def locate(text: str, path: tuple[str | int, ...]) -> int | None:
    """1-based line of the key at ``path`` (e.g. ``("drive", 1, "profile")`` or
    ``("nand", "page_size")``), or of the nearest enclosing table; None if not found."""
    table: list[str | int] = []
    counts: dict[str, int] = {}
    best: tuple[int, int] | None = None  # (matched depth, line)
    for number, line in enumerate(text.splitlines(), start=1):
        h = _HEADER.match(line)
        if h:
            name = h.group(2).replace('"', "").replace("'", "").strip()
            parts: list[str | int] = [p.strip() for p in name.split(".")]
            if h.group(1) == "[[":
                index = counts.get(name, 0)
                counts[name] = index + 1
                parts.append(index)
            table = parts
            depth = _common(table, path)
            if depth == len(table) and (best is None or depth > best[0]):
                best = (depth, number)
            continue
        k = _KEY.match(line)
        if not k:
            continue
        key = k.group(1).strip("\"'")
        full = [*table, key]
        depth = _common(full, path)
        if depth == len(full) and (best is None or depth > best[0]):
            best = (depth, number)
    return best[1] if best else None


def _common(a: list[str | int], b: tuple[str | int, ...]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_text(value: object) -> str:
    """A value read from a TOML file, written back as TOML writes it, for error messages:
    ``true`` and ``false`` (not Python's ``True``), ``[1, true]``, ``{ a = 1 }``, dates in ISO
    form; a text keeps Python's quotes ('abc', a TOML literal string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        keys = (k if _BARE_KEY.match(str(k)) else toml_text(str(k)) for k in value)
        return "{ " + ", ".join(f"{k} = {toml_text(v)}" for k, v in zip(keys, value.values())) + " }"
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return repr(value)
