"""Quantities with units, all read here: sizes, times and rates, by two sets of rules.

**ssdlab's rules** (profiles, system files, the command line: :func:`parse_size`,
:func:`parse_time_ns`, :func:`parse_rate`, :func:`format_bytes`; they raise
:class:`UnitError`, a ValueError whose message is complete) follow the storage industry's own
conventions, written out in full: ``KB``/``MB``/``GB``/``TB`` are powers of 1000
(datasheets), ``KiB``/``MiB``/``GiB``/``TiB`` powers of 1024, and fio's bare ``k``/``m``/``g``/
``t`` are powers of 1024 as in a job file. Rates take ``/s`` and may be in bits (``Gb/s``,
``Gbit/s``). Times take ns, us, ms, s, m (minutes), h, d; a bare number is in the caller's unit.

**fio's rules** (job files: :func:`parse_fio_size`, :func:`parse_fio_bytes`,
:func:`parse_fio_count`, :func:`parse_fio_time_us`, :func:`evaluate`; they raise
:class:`ValueProblem`, which the job-file parser locates by file, line and option) are read
the way fio reads them (its HOWTO: "Parameter types" and ``kb_base``). fio's own number parser
is lenient (``4q`` is 4, ``1.5g`` is 1 byte, ``size = 4k`` is 4 bytes). ssdlab accepts exactly
the forms fio gives a sensible meaning to and rejects the rest with a message, except for a few
quirks that are common in real job files: those are reproduced and reported through ``notes``
so the caller can turn them into warnings.

Where the two differ (``kb_base`` is the job's, 1024 unless it sets 1000):

=======================  ==========================  =========================================
written                  ssdlab's rules              fio's rules
=======================  ==========================  =========================================
``4k``, ``4K``           4096                        4 x kb_base: 4096
``4KB``, ``4kB``         4000                        4 x kb_base: 4096 (4000 with kb_base=1000)
``4kb``                  rejected                    as ``4KB``
``4KiB``                 4096                        the other base: 4000 (fio's compatibility
                                                     mode), 4096 with kb_base=1000
``4ki``                  rejected                    read as ``4k``, with a note
``1.5MiB``               1572864 (exact)             rejected (fio itself truncates it)
``0x1000``, ``(2*4k)``   rejected                    4096
``30%``, ``8z``          rejected                    a :class:`Percent`, :class:`Zones`, where
                                                     the option takes them
``10`` (a time)          the caller's unit           seconds or microseconds, by option
``10sec``, ``5min``      10 s, 5 minutes             10 us, 5 us, with a note (fio's quirk)
``1m`` (a time)          a minute                    a minute
=======================  ==========================  =========================================
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable


class UnitError(ValueError):
    """A quantity by ssdlab's rules could not be read; the message says what was expected.
    ``reason`` says it without the value, for a caller that quotes the value itself
    (``runtime: 'abc': expected a time like 45us, 3.5ms or 8h``)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


def _got(reason: str, value: object) -> UnitError:
    return UnitError(f"{reason}, got {value!r}", reason)


def unit_reason(e: Exception, expected: str | None = None) -> str:
    """Why a value was refused, for a message that quotes the value before it: a
    :class:`UnitError`'s reason, else the exception's message. A caller's own ``expected``
    (``"expected a time like 10s"``) stands for a reason that is only what was expected, so
    that a message says "expected" once."""
    reason = e.reason if isinstance(e, UnitError) else str(e)
    return expected if expected and reason.startswith("expected") else reason


class ValueProblem(Exception):
    """A job-file value by fio's rules could not be read; the caller adds file, line and
    option (it becomes a :class:`~ssdlab.fio.errors.FioJobError`)."""


# ==== ssdlab's rules: profiles, system files, the command line ===============================

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


def parse_size(value: int | float | str) -> int:
    """Bytes from ``4096``, ``"16KiB"``, ``"256GB"``, ``"4k"``."""
    if isinstance(value, bool):
        raise _got("expected a size", value)
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise UnitError(f"expected a size, got {value}", "expected a size")
        if value < 0:
            raise UnitError(f"size must not be negative, got {value}", "size must not be negative")
        return int(value)
    m = _SIZE_RE.match(str(value))
    if not m or m.group(2) not in _SIZE_UNITS:
        raise _got("expected a size like 4096, 16KiB or 256GB", value)
    # Exact arithmetic: '72057594037929KB' must not pick up float rounding.
    return round(Fraction(m.group(1)) * _SIZE_UNITS[m.group(2)])


def parse_time_ns(value: int | float | str, default_unit: str = "ns") -> int:
    """Nanoseconds from ``"45us"``, ``"3.5ms"``, ``"8h"``; bare numbers use ``default_unit``."""
    if isinstance(value, bool):
        raise _got("expected a time", value)
    if isinstance(value, (int, float)):
        number, unit = float(value), default_unit
    else:
        m = _SIZE_RE.match(str(value).replace("µs", "us"))
        if not m:
            raise _got("expected a time like 45us, 3.5ms or 8h", value)
        number, unit = float(m.group(1)), m.group(2) or default_unit
    if unit not in _TIME_UNITS:
        raise UnitError(f"unknown time unit {unit!r} in {value!r} (use ns, us, ms, s, m, h, d)",
                        f"unknown time unit {unit!r} (use ns, us, ms, s, m, h, d)")
    if not math.isfinite(number):
        raise _got("expected a time", value)
    if number < 0:
        raise _got("time must not be negative", value)
    return int(round(number * _TIME_UNITS[unit]))


_RATE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT]?i?)(B|b|bit)\s*/\s*s\s*$")


def parse_rate(value: int | float | str) -> float:
    """Bytes per second from ``"550MB/s"``, ``"100Gb/s"``, ``"400MiB/s"``; bare numbers are B/s."""
    if isinstance(value, bool):
        raise _got("expected a rate", value)
    if isinstance(value, (int, float)):
        return float(value)
    m = _RATE_RE.match(str(value))
    if not m:
        raise _got("expected a rate like 550MB/s, 12.5GB/s or 100Gb/s", value)
    number, prefix, unit = float(m.group(1)), m.group(2), m.group(3)
    power = "kmgt".find(prefix[:1].lower()) + 1 if prefix else 0
    scale = (1024 if prefix.endswith("i") else 1000) ** power
    bits = unit in ("b", "bit")
    return number * scale / (8 if bits else 1)


def format_time(ns: float) -> str:
    """A time in nanoseconds in the largest unit it fills, as the options take it: ``1.5s``,
    ``250us``, ``40ns``."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:g}{unit}"
    return f"{ns:g}ns"


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


# ==== fio's rules: job files ================================================================

SIZE_HINT = "expected a size like 4k"
TIME_HINT = "expected a time like 10s"
INT_HINT = "expected a whole number"

MAX_VALUE = 2**63 - 1
MAX_DIGITS = 30  # longer literals cannot be valid sizes or times
MAX_EXPRESSION = 256  # characters in a parenthesised expression
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
# Words people write after a time that fio does not know as units: fio silently reads the
# number as microseconds (``10sec`` is 10 us). We do the same and say so.
_TIME_WORDS = {
    "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes",
    "hr", "hrs", "hour", "hours", "day", "days",
}
_TIME_EXACT = {"s": 10**6, "m": 60 * 10**6, "h": 3600 * 10**6, "d": 86400 * 10**6}
_DECIMAL = re.compile(r"^([+-]?)(\d+)(\.\d*)?([A-Za-z%]*)$")
_HEX = re.compile(r"^([+-]?)0[xX]([0-9a-fA-F]+)$")


@dataclass(frozen=True)
class Percent:
    """A size given as a percentage (of the device, or of ``size`` for ``io_size``)."""

    value: int


@dataclass(frozen=True)
class Zones:
    """A size given in zones (``8z``), resolved later with ``zonesize``."""

    count: int


FioSize = int | Percent | Zones


# ---- fio's rules: sizes


def fio_size_multiplier(suffix: str, kb_base: int, text: str, notes: list[str] | None) -> int:
    """Bytes per unit for a size suffix, with fio's kb_base rules (``KiB`` inverted at 1024)."""
    s = suffix.lower()
    if s in ("", "b"):
        return 1
    head = s[:1]
    if head in _POWERS:
        power = _POWERS[head]
        if s in (head, head + "b"):
            return kb_base**power
        if s == head + "ib":
            return (1000 if kb_base == 1024 else 1024) ** power
        if s == head + "i":
            if notes is not None:
                notes.append(
                    f"'{text}' is read by fio as '{text[:-1]}' (only '{head}ib' selects the"
                    " other unit base)"
                )
            return kb_base**power
    raise ValueProblem(f"{SIZE_HINT}, got '{text}'")


def parse_fio_size(
    text: str,
    kb_base: int = 1024,
    *,
    percent: bool = False,
    zones: bool = False,
    negative: bool = False,
    hint: str = SIZE_HINT,
    notes: list[str] | None = None,
) -> FioSize:
    """Parse a fio size (``4k``, ``1MiB``, ``0x1000``, ``(2*4k)``, ``30%``, ``8z``)."""
    s = text.strip()
    if not s:
        raise ValueProblem(f"{hint}, got an empty value")
    if s.startswith("("):
        value = evaluate(s, lambda num, suf: float(num) * fio_size_multiplier(suf, kb_base, s, notes))
        return _check_int(math.trunc(value), text, negative)
    m = _HEX.match(s)
    if m:
        if len(m.group(2)) > MAX_DIGITS:
            raise ValueProblem(f"value too large, got '{text}'")
        value = int(m.group(2), 16)
        return _check_int(-value if m.group(1) == "-" else value, text, negative)
    m = _DECIMAL.match(s)
    if not m:
        if any(c in s[1:] for c in "*/+-^"):
            raise ValueProblem(f"{hint}, got '{text}' (arithmetic needs parentheses, e.g. (2*4k))")
        raise ValueProblem(f"{hint}, got '{text}'")
    sign, digits, frac, suffix = m.groups()
    if len(digits) > MAX_DIGITS:
        raise ValueProblem(f"value too large, got '{text}'")
    if frac is not None:
        raise ValueProblem(
            f"fractional value '{text}' is not supported (fio would read it as {int(digits)});"
            " use a smaller unit"
        )
    n = int(digits)
    low = suffix.lower()
    if low == "%":
        if not percent:
            raise ValueProblem(f"a percentage is not allowed here, got '{text}'")
        if sign == "-" or n > 100:
            raise ValueProblem(f"percentage must be between 0% and 100%, got '{text}'")
        return Percent(n)
    if low == "z":
        if not zones:
            raise ValueProblem(f"zone units are not allowed here, got '{text}'")
        return Zones(n)
    value = n * fio_size_multiplier(suffix, kb_base, text, notes)
    return _check_int(-value if sign == "-" else value, text, negative)


def parse_fio_bytes(text: str, kb_base: int = 1024, **kw: object) -> int:
    """Like :func:`parse_fio_size` but only plain byte counts."""
    value = parse_fio_size(text, kb_base, **kw)  # type: ignore[arg-type]
    assert isinstance(value, int)
    return value


def parse_fio_count(text: str, kb_base: int = 1024, *, negative: bool = False) -> int:
    """An integer option; fio reads these with the size parser, so ``1k`` is 1024."""
    return parse_fio_bytes(text, kb_base, negative=negative, hint=INT_HINT)


def _check_int(value: int, text: str, negative: bool) -> int:
    if value < 0 and not negative:
        raise ValueProblem(f"must not be negative, got '{text}'")
    if abs(value) > MAX_VALUE:
        raise ValueProblem(f"value too large, got '{text}'")
    return value


# ---- fio's rules: times


def parse_fio_time_us(
    text: str,
    *,
    seconds_default: bool,
    before_range_separator: bool = False,
    notes: list[str] | None = None,
    warn_fraction: bool = True,
) -> float:
    """Parse a fio time into microseconds.

    ``seconds_default`` picks the unit of a bare number (seconds for runtime, ramp_time and
    startdelay; microseconds for thinktime). Fractions are honoured (fio 3.x truncates them,
    which ``notes`` reports when ``warn_fraction``). ``before_range_separator`` reproduces a
    fio quirk: in ``1s-5s`` the first value is read as 1 us.
    """
    default = 10**6 if seconds_default else 1
    unit_name = "s" if seconds_default else "us"
    s = text.strip()
    if not s:
        raise ValueProblem(f"{TIME_HINT}, got an empty value")
    if s.startswith("("):
        value = evaluate(s, lambda num, suf: float(num) * fio_time_multiplier(suf, s))
        if value < 0:
            raise ValueProblem(f"must not be negative, got '{text}'")
        return _check_time(value, text)
    m = _HEX.match(s)
    if m and m.group(1) != "-" and len(m.group(2)) <= MAX_DIGITS:
        return _check_time(float(int(m.group(2), 16) * default), text)
    m = _DECIMAL.match(s)
    if not m or "%" in m.group(4) or len(m.group(2)) > MAX_DIGITS:
        raise ValueProblem(f"{TIME_HINT}, got '{text}'")
    sign, digits, frac, suffix = m.groups()
    if sign == "-":
        raise ValueProblem(f"must not be negative, got '{text}'")
    low = suffix.lower()
    if not low:
        mult = default
    elif low.startswith("us"):
        mult = 1
    elif low.startswith("ms"):
        mult = 1000
    elif low in _TIME_EXACT:
        mult = _TIME_EXACT[low]
        if before_range_separator:
            if notes is not None:
                notes.append(
                    f"fio reads '{text}' before a range separator as {digits} us (the unit is"
                    " lost); ssdlab does the same"
                )
            mult = 1
    elif low in _TIME_WORDS:
        if notes is not None:
            notes.append(
                f"fio reads '{text}' as {digits} us ('{suffix}' is not a unit; use s, m, h,"
                " d, ms or us); ssdlab does the same"
            )
        mult = 1
    else:
        raise ValueProblem(f"{TIME_HINT}, got '{text}'")
    if frac is not None and frac != ".":
        if warn_fraction and notes is not None:
            notes.append(
                f"fio 3.x reads the fractional time '{text}' as {digits} {unit_name};"
                f" ssdlab uses {text}"
            )
        return _check_time(float(digits + frac) * mult, text)
    return _check_time(float(int(digits) * mult), text)


def _check_time(us: float, text: str) -> float:
    if not math.isfinite(us) or us * 1000 > MAX_VALUE:
        raise ValueProblem(f"time too large, got '{text}'")
    return us


_STRTOLL_TIME = {10: re.compile(r"\s*([+-]?)(\d+)"), 16: re.compile(r"\s*([+-]?)(?:0[xX])?([0-9a-fA-F]+)")}


def fio_time_as_read(text: str, *, seconds_default: bool) -> tuple[int, str] | None:
    """A time as fio 3.33's str_to_decimal reads it for a time option (parse.c): strtoll's
    number at the start (base 16 when the text holds 0x), times get_mult_time's unit, which
    is looked up from the first character after the leading digits and signs: none there, or
    one that is not a letter, is the option's default unit (``1.5ms`` is 1 us); a letter
    that starts no unit is microseconds (``1k`` is 1 us). Returns microseconds and, when fio's
    reading differs from what the text says, why; None when no number starts the text."""
    base = 16 if "0x" in text.lower() else 10
    m = _STRTOLL_TIME[base].match(text)
    if not m:
        return None
    n = int(m.group(2), base) * (-1 if m.group(1) == "-" else 1)
    rest = text.lstrip(" \t").lstrip("+-0123456789")
    if not rest[:1].isalpha():
        tail = rest.strip()
        return n * (10**6 if seconds_default else 1), f"it stops at '{tail[0]}'" if tail else ""
    low = rest.lower()
    if low.startswith(("us", "ms")):
        return n * (1 if low.startswith("us") else 1000), ""
    if low in _TIME_EXACT:
        return n * _TIME_EXACT[low], ""
    return n, f"'{rest}' is not a unit of time"


def fio_time_multiplier(suffix: str, text: str) -> int:
    """Microseconds per unit inside an arithmetic expression (a bare number is us)."""
    low = suffix.lower()
    if not low or low.startswith("us"):
        return 1
    if low.startswith("ms"):
        return 1000
    if low in _TIME_EXACT:
        return _TIME_EXACT[low]
    raise ValueProblem(f"{TIME_HINT}, got '{text}'")


def us_to_ns(us: float) -> int:
    return int(round(us * 1000))


# ---- fio's rules: arithmetic in a value: (2*4k), and bc's for $mb_memory and the like

_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)([A-Za-z]*)|(\*\*|[-+*/%^()]))")


def evaluate(
    text: str,
    number: Callable[[str, str], float] | None = None,
    *,
    integer: bool = False,
) -> float:
    """Evaluate ``+ - * / % ^`` and parentheses.

    ``number(digits, suffix)`` converts each literal (so ``(2*4k)`` works); with
    ``integer=True`` the arithmetic is bc's: whole numbers and truncating division, as fio
    uses after replacing ``$mb_memory``, ``$pagesize`` or ``$ncpus``.
    """
    tokens: list[tuple[str, object]] = []
    pos = 0
    s = text.strip()
    if len(s) > MAX_EXPRESSION:
        raise ValueProblem(f"expression too long: '{text[:40]}...'")
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m or m.end() == pos:
            raise ValueProblem(f"cannot evaluate '{text}'")
        pos = m.end()
        if m.group(1) is not None:
            digits, suffix = m.group(1), m.group(2)
            if integer:
                if suffix or "." in digits:
                    raise ValueProblem(
                        f"cannot evaluate '{text}': fio computes this with bc, which knows"
                        " no units or fractions"
                    )
                tokens.append(("num", int(digits)))
            else:
                conv = number or (lambda d, suf: _plain(d, suf, text))
                tokens.append(("num", conv(digits, suffix)))
        else:
            op = m.group(3)
            tokens.append(("op", "^" if op == "**" else op))
    if not tokens:
        raise ValueProblem(f"cannot evaluate '{text}'")
    parser = _ExprParser(tokens, text, integer)
    value = parser.expr()
    if parser.i != len(tokens):
        raise ValueProblem(f"cannot evaluate '{text}'")
    if not isinstance(value, int) and not math.isfinite(value):
        raise ValueProblem(f"cannot evaluate '{text}'")
    return value


def _plain(digits: str, suffix: str, text: str) -> float:
    if suffix:
        raise ValueProblem(f"cannot evaluate '{text}'")
    return float(digits)


class _ExprParser:
    def __init__(self, tokens: list[tuple[str, object]], text: str, integer: bool) -> None:
        self.tokens, self.text, self.integer, self.i = tokens, text, integer, 0

    def _peek(self) -> object:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def _fail(self) -> ValueProblem:
        return ValueProblem(f"cannot evaluate '{self.text}'")

    def _bounded(self, value):
        if isinstance(value, complex) or abs(value) > 2**200:
            raise ValueProblem(f"value too large in '{self.text}'")
        return value

    def expr(self):
        value = self.term()
        while self._peek() in ("+", "-"):
            op = self.tokens[self.i][1]
            self.i += 1
            rhs = self.term()
            value = self._bounded(value + rhs if op == "+" else value - rhs)
        return value

    def term(self):
        value = self.power()
        while self._peek() in ("*", "/", "%"):
            op = self.tokens[self.i][1]
            self.i += 1
            rhs = self.power()
            if op == "*":
                value = self._bounded(value * rhs)
            elif rhs == 0:
                raise ValueProblem(f"division by zero in '{self.text}'")
            elif self.integer:
                quotient = abs(value) // abs(rhs) * (1 if (value >= 0) == (rhs >= 0) else -1)
                value = quotient if op == "/" else value - quotient * rhs
            else:
                value = value / rhs if op == "/" else math.fmod(value, rhs)
        return value

    def power(self):
        base = self.unary()
        if self._peek() == "^":
            self.i += 1
            exponent = self.power()
            if self.integer and exponent < 0:
                return 0
            if abs(exponent) > 256 and abs(base) > 1:
                raise ValueProblem(f"value too large in '{self.text}'")
            try:
                result = base**exponent if self.integer else float(base) ** float(exponent)
            except (OverflowError, ZeroDivisionError):
                raise self._fail() from None
            return self._bounded(result)
        return base

    def unary(self):
        if self._peek() in ("+", "-"):
            op = self.tokens[self.i][1]
            self.i += 1
            value = self.unary()
            return -value if op == "-" else value
        return self.primary()

    def primary(self):
        if self.i >= len(self.tokens):
            raise self._fail()
        kind, value = self.tokens[self.i]
        self.i += 1
        if kind == "num":
            return value
        if value == "(":
            self.depth = getattr(self, "depth", 0) + 1
            if self.depth > 32:
                raise ValueProblem(f"expression nested too deeply: '{self.text[:40]}'")
            inner = self.expr()
            self.depth -= 1
            if self._peek() != ")":
                raise self._fail()
            self.i += 1
            return inner
        raise self._fail()
