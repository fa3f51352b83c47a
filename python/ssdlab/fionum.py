"""fio's number formatting and running statistics, reimplemented from its documented
behaviour so that ssdlab's report prints numbers as fio does.

* :func:`num2str`: fio's ``num2str``: at most ``maxlen`` digits, divided by 1000 (or 1024)
  with a unit prefix until it fits, the remainder shown as decimals that fill the width
  ("10.3GiB", "2701k", "4096B", "16.0KiB");
* :class:`IoStat`: fio's ``io_stat``: min, max, a running mean and sum of squares (Welford),
  merged for group reporting either as a pooled sample or, for bandwidth and IOPS, summed.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

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
        # fio prints modulo/thousand with that many decimals and keeps what follows "0."
        fraction = f"{modulo / thousand:.{decimals}f}"[2:]
        return f"{num}.{fraction}{prefixes[min(index, len(prefixes) - 1)]}{unit}"
    if modulo is not None and carry:
        num += 1
    if index >= len(prefixes):
        index = 0
    return f"{num}{prefixes[index]}{unit}"


def is_power_of_2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@dataclass
class IoStat:
    """fio's io_stat: samples of one quantity (a latency, a bandwidth sample...)."""

    samples: int = 0
    min: int = 0
    max: int = 0
    mean: float = 0.0
    s: float = 0.0  # sum of squared deviations

    def add(self, value: int) -> None:
        """fio's add_stat_sample."""
        if self.samples == 0 or value < self.min:
            self.min = value
        if value > self.max:
            self.max = value
        delta = value - self.mean
        if delta:
            self.mean += delta / (self.samples + 1.0)
            self.s += delta * (value - self.mean)
        self.samples += 1

    def add_sum(self, o: "IoStat") -> None:
        """fio's sum_stat with pure_sum: bandwidth and IOPS of a group add up."""
        if o.samples == 0:
            return
        if self.samples == 0:
            self.min, self.max, self.samples, self.mean, self.s = o.min, o.max, o.samples, o.mean, o.s
            return
        self.min += o.min
        self.max += o.max
        self.samples += o.samples
        self.mean += o.mean
        self.s += o.s

    @property
    def stddev(self) -> float:
        return math.sqrt(self.s / (self.samples - 1.0)) if self.samples > 1 else 0.0


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
