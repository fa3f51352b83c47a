"""Sizing a write-recorder array and its lifetime: the arithmetic, as pure functions.

Rates are bytes per second, sizes bytes, durations seconds. The simulation that supplies a
drive's sustained rate and write amplification lives in :mod:`ssdlab.analysis.sustained`; the
``ssdlab size`` and ``ssdlab endurance`` commands combine the two.

Margin policy (``ssdlab size``): each drive is credited with its *worst sustained* rate (the
5th percentile of its interval rates over a fill and an overwrite, see
:mod:`ssdlab.analysis.sustained`) times ``1 − margin``; RAID 0 stripes evenly, so the array needs
``ceil(target / (worst × (1 − margin)))`` drives for the rate, ``ceil(target × duration /
capacity)`` for the retention, and the larger of the two.

Endurance policy (``ssdlab endurance``): a drive's endurance is a budget of *host* bytes,
taken from the first of these the drive states:

1. rated TBW (``rated_tbw``);
2. DWPD × capacity × 365 × warranty years;
3. P/E cycles × flash bytes / WAF (flash bytes: the raw NAND when the profile gives the
   geometry, else the user capacity).

Rated TBW and DWPD already include the vendor's own write-amplification assumption (JEDEC's
client or enterprise workload, usually harder than a sequential stream), so the workload's WAF
is not applied to them again; it is applied only to the P/E-cycle budget, which counts NAND
writes (host writes × WAF = NAND writes). When a rated figure and P/E cycles are both known the
P/E-based lifetime is reported beside the rated one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..reference import SEED002_PUBLISHED, SEED002_TARGET

SECONDS_PER_DAY = 86_400.0
DAYS_PER_YEAR = 365.0
DEFAULT_MARGIN = 0.1
_EPS = 1e-9


def _ceil(x: float) -> int:
    """ceil that ignores float noise (12.5/3.125 must be 4, not 5)."""
    return max(0, math.ceil(x - _EPS * max(1.0, abs(x))))


def drives_for_rate(target_rate: float, drive_rate: float, margin: float = DEFAULT_MARGIN) -> int:
    """Drives a RAID 0 array needs to sustain ``target_rate``:
    ``ceil(target_rate / (drive_rate × (1 − margin)))``."""
    if drive_rate <= 0:
        raise ValueError("drive rate must be positive")
    if not 0 <= margin < 1:
        raise ValueError(f"margin {margin}: expected a fraction in [0, 1)")
    if target_rate < 0:
        raise ValueError("target rate must not be negative")
    return _ceil(target_rate / (drive_rate * (1.0 - margin)))


def drives_for_capacity(target_rate: float, duration_s: float, capacity: float) -> int:
    """Drives a RAID 0 array needs to hold ``duration_s`` of ``target_rate``:
    ``ceil(target_rate × duration_s / capacity)``."""
    if capacity <= 0:
        raise ValueError("capacity must be positive")
    if duration_s < 0:
        raise ValueError("duration must not be negative")
    return _ceil(target_rate * duration_s / capacity)


def retention_s(drives: int, capacity: float, target_rate: float) -> float:
    """Seconds of ``target_rate`` an array of ``drives`` holds: ``drives × capacity / rate``."""
    return drives * capacity / target_rate if target_rate > 0 else math.inf


def bytes_per_drive_per_day(array_rate: float, drives: int, duty: float = 1.0) -> float:
    """Host bytes each drive of a RAID 0 array takes per day:
    ``array_rate × duty × 86,400 / drives``."""
    if drives < 1:
        raise ValueError("drives must be at least 1")
    if not 0 <= duty <= 1:
        raise ValueError(f"duty {duty}: expected a fraction in [0, 1]")
    return array_rate * duty * SECONDS_PER_DAY / drives


def drive_writes_per_day(array_rate: float, drives: int, capacity: float, duty: float = 1.0) -> float:
    """Full drive writes per day the workload asks of each drive:
    ``array_rate × duty × 86,400 / (drives × capacity)``."""
    return bytes_per_drive_per_day(array_rate, drives, duty) / capacity


@dataclass(frozen=True)
class Endurance:
    """A drive's write budget in host bytes, and where it came from."""

    host_bytes: float
    basis: str  # "rated_tbw" | "dwpd" | "pe_cycles"
    formula: str  # the formula with the numbers
    waf_applied: bool


def endurance_from_tbw(tbw_bytes: float) -> Endurance:
    """Rated TBW is already a host-byte budget: ``endurance = TBW``."""
    return Endurance(float(tbw_bytes), "rated_tbw", f"rated TBW {tbw_bytes / 1e12:g} TB", False)


def endurance_from_dwpd(dwpd: float, capacity: float, warranty_years: float) -> Endurance:
    """``endurance = DWPD × capacity × 365 × warranty years`` (host bytes). A 1 DWPD drive
    with a 5-year warranty takes 1,825 full drive writes (seed 002: "~1,800 overwrites")."""
    b = dwpd * capacity * DAYS_PER_YEAR * warranty_years
    return Endurance(b, "dwpd", f"{dwpd:g} DWPD × {capacity / 1e12:g} TB × 365 d × {warranty_years:g} y"
                     f" = {b / 1e15:.3g} PB", False)


def endurance_from_pe(pe_cycles: float, flash_bytes: float, waf: float) -> Endurance:
    """``endurance = P/E cycles × flash bytes / WAF`` (host bytes): every block can be erased
    ``pe_cycles`` times, and each host byte costs ``waf`` NAND bytes."""
    if waf <= 0:
        raise ValueError("WAF must be positive")
    b = pe_cycles * flash_bytes / waf
    return Endurance(b, "pe_cycles", f"{pe_cycles:g} P/E × {flash_bytes / 1e12:.4g} TB flash / WAF {waf:.3g}"
                     f" = {b / 1e15:.3g} PB", True)


def rated_endurance(capacity: float, *, tbw: float | None = None, dwpd: float | None = None,
                    warranty_years: float | None = None, pe_cycles: float | None = None,
                    flash_bytes: float | None = None, waf: float = 1.0) -> Endurance:
    """The first of TBW, DWPD × capacity × 365 × warranty years, P/E × flash bytes / WAF that
    the inputs allow (see the module docstring for why WAF only divides the last)."""
    if tbw:
        return endurance_from_tbw(tbw)
    if dwpd and warranty_years:
        return endurance_from_dwpd(dwpd, capacity, warranty_years)
    if pe_cycles:
        return endurance_from_pe(pe_cycles, flash_bytes or capacity, waf)
    raise ValueError("no endurance rating: give rated TBW, DWPD with warranty years, or P/E cycles")


def lifetime_years(endurance_bytes: float, bytes_per_day: float) -> float:
    """Years until the budget is spent: ``endurance_bytes / (bytes_per_day × 365)``."""
    if bytes_per_day <= 0:
        return math.inf
    return endurance_bytes / (bytes_per_day * DAYS_PER_YEAR)


def size_array(target_rate: float, duration_s: float, drive_rate: float, capacity: float, *,
               margin: float = DEFAULT_MARGIN) -> dict[str, Any]:
    """RAID 0 sizing: drives for the rate, drives for the capacity, and the larger of the two."""
    by_rate = drives_for_rate(target_rate, drive_rate, margin)
    by_capacity = drives_for_capacity(target_rate, duration_s, capacity)
    drives = max(by_rate, by_capacity, 1)
    return {
        "drives": drives,
        "drives_for_rate": by_rate,
        "drives_for_capacity": by_capacity,
        "drives_for_rate_no_margin": drives_for_rate(target_rate, drive_rate, 0.0),
        "limited_by": "rate" if by_rate >= by_capacity else "capacity",
        "usable_drive_rate": drive_rate * (1.0 - margin),
        "array_rate": drives * drive_rate,
        "headroom": drives * drive_rate / target_rate - 1.0 if target_rate > 0 else math.inf,
        "array_capacity_bytes": drives * capacity,
        "retention_s": retention_s(drives, capacity, target_rate),
    }


def margin_policy(margin: float) -> str:
    return (f"each drive credited with its worst sustained rate (p5 of interval rates over fill and"
            f" overwrite) less {margin:.0%}; drives = ceil(target / (worst × (1 − {margin:g})))")


# ---- seed 002's own counts ---------------------------------------------------------------


def seed002_note(profile: str, target_rate: float, drives: int, drives_no_margin: int,
                 drive_rate: float, margin: float) -> str | None:
    """If ``profile`` is a seed 002 drive and the target is its 100 Gb/s, compare ``drives``
    (the count for the rate) with the seed's count and say why they differ (None otherwise)."""
    pub = SEED002_PUBLISHED.get(profile)
    if pub is None or abs(target_rate / SEED002_TARGET - 1.0) > 0.01:
        return None
    seed_n = pub.drives_100g
    if drives == seed_n:
        return (f"the rate needs {drives} drives, matching seed 002's {seed_n} for 100 Gb/s (worst sustained"
                f" {drive_rate / 1e9:.2f} GB/s, margin {margin:.0%})")
    held_back = f"less a {margin:.0%} margin" if margin else "with no margin"
    why = (f"seed 002 recommends {seed_n} drives for 100 Gb/s; the rate needs {drives} here because it"
           f" credits each drive with its worst sustained rate {drive_rate / 1e9:.2f} GB/s"
           f" {held_back} (without the margin: {drives_no_margin})")
    why += (". The seed's counts carry their own margin and rounding, not one rule: 8 × 1.6 GB/s"
            " (970 EVO Plus) leaves 2 % over 12.5 GB/s, 5 × 3.2 GB/s (D7-P5510) leaves 28 %")
    return why
