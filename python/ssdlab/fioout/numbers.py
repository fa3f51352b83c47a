"""fio's number formatting and running statistics, reimplemented from its documented
behaviour so that ssdlab's report prints numbers as fio does.

* :func:`num2str`: fio's ``num2str``: at most ``maxlen`` digits, divided by 1000 (or 1024)
  with a unit prefix until it fits, the remainder shown as decimals that fill the width
  ("10.3GiB", "2701k", "4096B", "16.0KiB");
* :class:`Stat`: fio's ``io_stat``: min, max, a running mean and sum of squares (Welford),
  merged for group reporting either as a pooled sample or, for bandwidth and IOPS, summed.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any

_SI = ("", "k", "M", "G", "T", "P")
_IEC = ("", "Ki", "Mi", "Gi", "Ti", "Pi")


def num2str(num: int, maxlen: int = 4, base: int = 1, pow2: bool = False, unit: str = "") -> str:
    """``num`` as fio's num2str prints it, followed by ``unit`` ("B", "B/s" or "")."""
    num = int(num)
    thousand = 1024 if pow2 else 1000
    prefixes = _IEC if pow2 else _SI
    index = 0
    while base > 1:
        base //= thousand
        index += 1
    modulo = None
    carry = False
    while index < len(prefixes):
        if len(str(num)) <= maxlen:
            break
        modulo = num % thousand
        num //= thousand
        carry = modulo >= thousand // 2
        index += 1
    if modulo is not None and maxlen - len(str(num)) > 1:
        decimals = maxlen - len(str(num)) - 1
        # fio prints modulo/thousand with that many decimals and keeps what follows "0." or,
        # when it rounds up to "1.0…", carries one into the whole part (lib/num2str.c).
        printed = f"{modulo / thousand:.{decimals}f}"
        if printed[0] == "1":
            num += 1
        return f"{num}.{printed[2:]}{prefixes[min(index, len(prefixes) - 1)]}{unit}"
    if modulo is not None and carry:
        num += 1
    if index >= len(prefixes):
        index = 0
    return f"{num}{prefixes[index]}{unit}"


def is_power_of_2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@dataclass
class Stat:
    """fio's io_stat, for every summary the report prints: a latency (ns), a bandwidth or an
    IOPS sample. ``n`` samples, their min and max, mean and sum of squared deviations
    (``m2``, Welford's running form, as fio keeps it)."""

    n: int = 0
    min: float = 0
    max: float = 0
    mean: float = 0.0
    m2: float = 0.0

    @classmethod
    def from_core(cls, d: dict[str, Any]) -> "Stat":
        """The core's summary (n, min, max, mean, sample stddev)."""
        n = d["n"]
        return cls(n, d["min"], d["max"], d["mean"], d["stddev"] ** 2 * (n - 1) if n > 1 else 0.0)

    def add(self, value: float) -> None:
        """fio's add_stat_sample: one more sample."""
        if self.n == 0 or value < self.min:
            self.min = value
        if value > self.max:
            self.max = value
        delta = value - self.mean
        if delta:
            self.mean += delta / (self.n + 1.0)
            self.m2 += delta * (value - self.mean)
        self.n += 1

    def merge(self, o: "Stat") -> "Stat":
        """The pooled summary of both sets of samples (fio's sum_stat for latencies)."""
        if o.n == 0:
            return self
        if self.n == 0:
            return o
        n = self.n + o.n
        delta = o.mean - self.mean
        mean = self.mean + delta * o.n / n
        m2 = self.m2 + o.m2 + delta * delta * self.n * o.n / n
        return Stat(n, min(self.min, o.min), max(self.max, o.max), mean, m2)

    def add_sum(self, o: "Stat") -> None:
        """fio's sum_stat with pure_sum: the bandwidth and IOPS of a group's jobs add up."""
        if o.n == 0:
            return
        if self.n == 0:
            self.n, self.min, self.max, self.mean, self.m2 = o.n, o.min, o.max, o.mean, o.m2
            return
        self.min += o.min
        self.max += o.max
        self.n += o.n
        self.mean += o.mean
        self.m2 += o.m2

    @property
    def stddev(self) -> float:
        return math.sqrt(self.m2 / (self.n - 1.0)) if self.n > 1 else 0.0

    def to_fio(self) -> dict[str, Any]:
        return {"min": int(self.min), "max": int(self.max), "mean": self.mean, "stddev": self.stddev, "N": self.n}


def now() -> float:
    """The wall-clock time fio would stamp on its report; ``SOURCE_DATE_EPOCH`` fixes it
    (reproducible reports and tests)."""
    fixed = os.environ.get("SOURCE_DATE_EPOCH")
    if fixed and fixed.strip().isdigit():
        return float(fixed)
    return time.time()


def ctime(t: float) -> str:
    """``ctime(3)`` of ``t`` without the newline, as fio's report shows the date."""
    return time.ctime(t)
