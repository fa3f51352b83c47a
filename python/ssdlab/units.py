"""Quantities in profiles and on the command line: sizes, times and rates with units.

Profiles follow the storage industry's own conventions, written out in full: ``KB``/``MB``/
``GB``/``TB`` are powers of 1000 (datasheets), ``KiB``/``MiB``/``GiB``/``TiB`` powers of 1024,
and fio's bare ``k``/``m``/``g``/``t`` are powers of 1024 as in a job file. Rates take ``/s``
and may be in bits (``Gb/s``, ``Gbit/s``). Times take ns, us, ms, s, m (minutes), h, d.
Job files are parsed by :mod:`ssdlab.fio`, which keeps fio's own (different) rules.
"""

from __future__ import annotations

import re
from fractions import Fraction

_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")

_SIZE_UNITS: dict[str, int] = {"": 1, "b": 1, "B": 1}
for _i, _p in enumerate("kmgtp", start=1):
    _SIZE_UNITS[_p] = 1024**_i
    _SIZE_UNITS[_p.upper()] = 1024**_i
    _SIZE_UNITS[_p.upper() + "iB"] = 1024**_i
    _SIZE_UNITS[_p + "iB"] = 1024**_i
    _SIZE_UNITS[_p.upper() + "B"] = 1000**_i
    _SIZE_UNITS[_p + "B"] = 1000**_i

_TIME_UNITS = {
    "ns": 1, "nsec": 1,
    "us": 1_000, "usec": 1_000, "µs": 1_000,
    "ms": 1_000_000, "msec": 1_000_000,
    "s": 1_000_000_000, "sec": 1_000_000_000,
    "m": 60_000_000_000, "min": 60_000_000_000,
    "h": 3_600_000_000_000,
    "d": 86_400_000_000_000,
}


class UnitError(ValueError):
    """A quantity could not be read; the message says what was expected."""


def parse_size(value: int | float | str) -> int:
    """Bytes from ``4096``, ``"16KiB"``, ``"256GB"``, ``"4k"``."""
    if isinstance(value, bool):
        raise UnitError(f"expected a size, got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise UnitError(f"size must not be negative, got {value}")
        return int(value)
    m = _SIZE_RE.match(str(value))
    if not m or m.group(2) not in _SIZE_UNITS:
        raise UnitError(f"expected a size like 4096, 16KiB or 256GB, got {value!r}")
    # Exact arithmetic: '72057594037929KB' must not pick up float rounding.
    return round(Fraction(m.group(1)) * _SIZE_UNITS[m.group(2)])


def parse_time_ns(value: int | float | str, default_unit: str = "ns") -> int:
    """Nanoseconds from ``"45us"``, ``"3.5ms"``, ``"8h"``; bare numbers use ``default_unit``."""
    if isinstance(value, bool):
        raise UnitError(f"expected a time, got {value!r}")
    if isinstance(value, (int, float)):
        number, unit = float(value), default_unit
    else:
        m = _SIZE_RE.match(str(value).replace("µs", "us"))
        if not m:
            raise UnitError(f"expected a time like 45us, 3.5ms or 8h, got {value!r}")
        number, unit = float(m.group(1)), m.group(2) or default_unit
    if unit not in _TIME_UNITS:
        raise UnitError(f"unknown time unit {unit!r} in {value!r} (use ns, us, ms, s, m, h, d)")
    if number < 0:
        raise UnitError(f"time must not be negative, got {value!r}")
    return int(round(number * _TIME_UNITS[unit]))


_RATE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT]?i?)(B|b|bit)\s*/\s*s\s*$")


def parse_rate(value: int | float | str) -> float:
    """Bytes per second from ``"550MB/s"``, ``"100Gb/s"``, ``"400MiB/s"``; bare numbers are B/s."""
    if isinstance(value, bool):
        raise UnitError(f"expected a rate, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    m = _RATE_RE.match(str(value))
    if not m:
        raise UnitError(f"expected a rate like 550MB/s, 12.5GB/s or 100Gb/s, got {value!r}")
    number, prefix, unit = float(m.group(1)), m.group(2), m.group(3)
    power = "kmgt".find(prefix[:1].lower()) + 1 if prefix else 0
    scale = (1024 if prefix.endswith("i") else 1000) ** power
    bits = unit in ("b", "bit")
    return number * scale / (8 if bits else 1)


def format_bytes(n: float, binary: bool = True) -> str:
    """Human form of a byte count: ``1.5GiB`` (binary) or ``1.6GB`` (decimal)."""
    base, units = (1024.0, ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]) if binary else (
        1000.0, ["B", "kB", "MB", "GB", "TB", "PB"])
    x = float(n)
    for unit in units:
        if abs(x) < base or unit == units[-1]:
            return f"{x:.0f}{unit}" if unit == "B" else f"{x:.1f}{unit}"
        x /= base
    raise AssertionError("unreachable")
