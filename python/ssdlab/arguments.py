"""Checks of the Python API's arguments, so that a wrong type or value is named in the error
instead of surfacing as an AttributeError or as the core's deserialiser text."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

SEED_MAX = 2**64 - 1  # the core's seeds are unsigned 64-bit


class InputFileError(ValueError):
    """A file given as input cannot be read as text; the message names it and says why."""


class NotText(InputFileError):
    """A file that should be text is not UTF-8 (its message names the file, byte and offset)."""


class NotToml(ValueError):
    """Text that is not TOML: ``not valid TOML: ...`` (Python's reader, or nesting too deep for it)."""


def toml_loads(text: str) -> dict[str, Any]:
    """``tomllib.loads``, whose every failure is :class:`NotToml` (a deeply nested array makes
    Python's reader recurse past its limit: that is not valid TOML to it either)."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise NotToml(f"not valid TOML: {e}") from None
    except RecursionError:
        raise NotToml("not valid TOML: nested too deeply to read") from None


def read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    """The text of the TOML file at ``path`` and what it holds; a file that cannot be read, is
    not text or is not TOML raises :class:`InputFileError` naming it."""
    text = read_text(path)
    try:
        return text, toml_loads(text)
    except NotToml as e:
        raise InputFileError(f"{path}: {e}") from None


def read_text(path: Path) -> str:
    """The text of the file at ``path``. A file that is not UTF-8 raises :class:`NotText`;
    one that cannot be read, :class:`InputFileError` (``PATH: no such file``, ``is a
    directory``, the system's reason)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{path}: is a directory") from None
    except OSError as e:
        raise InputFileError(f"{path}: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NotText(f"{path}: not text (byte {data[e.start]:#04x} at offset {e.start} is not UTF-8)") from None


def check_seed(seed: Any, name: str = "seed") -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"{name}: expected a whole number, got {type(seed).__name__}")
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"{name} {seed}: expected a whole number from 0 to {SEED_MAX}")
    return seed


def check_mapping(value: Any, name: str, example: Mapping[str, str]) -> Mapping[str, Any] | None:
    """``value`` if it is a mapping (or None); else a TypeError naming ``name``."""
    if value is None or isinstance(value, Mapping):
        return value
    shown = ", ".join(f"{k!r}: {v!r}" for k, v in example.items())
    raise TypeError(f"{name}: expected a mapping of names to values, e.g. {{{shown}}}; "
                    f"got {type(value).__name__}")
