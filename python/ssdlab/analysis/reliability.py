"""Data-loss exposure of a degraded array: mean time to data loss and the chance of a second
failure or an unrecoverable read while a rebuild runs.

Formulas after Chen, Lee, Gibson, Katz and Patterson, "RAID: High-Performance, Reliable
Secondary Storage", ACM Computing Surveys 26(2), 1994, and Patterson, Gibson and Katz, "A
Case for Redundant Arrays of Inexpensive Disks", SIGMOD 1988: independent exponential drive
failures with mean ``mttf`` hours, a rebuild window of ``mttr`` hours, and unrecoverable read
errors at one per ``ure_bits`` bits read.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

#: Defaults: the MTBF enterprise NVMe datasheets give (Solidigm D5-P5336: 2 million hours)
#: and the uncorrectable bit error rate they give (1 sector per 10^17 bits read).
DEFAULT_MTTF_HOURS = 2.0e6
DEFAULT_URE_BITS = 1e17


@dataclass(frozen=True)
class Exposure:
    mttdl_hours: float
    #: Probability that another member fails while the rebuild runs.
    p_second_failure: float
    #: Probability of at least one unrecoverable read error while reading the survivors.
    p_ure: float
    #: Whether either loses data at this level (RAID 6 survives one more of each).
    loses_data: bool

    def to_dict(self) -> dict[str, float | bool]:
        return asdict(self)


def p_ure(bytes_read: float, ure_bits: float = DEFAULT_URE_BITS) -> float:
    """Chance of at least one unrecoverable read error in ``bytes_read``."""
    return 1.0 - math.exp(-bytes_read * 8.0 / ure_bits)


def exposure(level: int, members: int, member_bytes: float, rebuild_hours: float,
             mttf_hours: float = DEFAULT_MTTF_HOURS, ure_bits: float = DEFAULT_URE_BITS) -> Exposure:
    """Exposure of an array of ``members`` drives of ``member_bytes`` while one is rebuilt in
    ``rebuild_hours``."""
    n, t, f = members, rebuild_hours, mttf_hours
    if n < 2 or t < 0 or not f > 0 or not ure_bits > 0 or math.isinf(f) or math.isinf(ure_bits):
        raise ValueError("need at least two members, a rebuild time >= 0, and a positive, finite MTTF and "
                         "bits per unrecoverable read error")
    p_second = 1.0 - math.exp(-(n - 1) * t / f)
    ure = p_ure((n - 1) * member_bytes, ure_bits)
    if level == 5:
        rate = n * (n - 1) * t / f**2 + n * ure / f
        mttdl, loses = 1.0 / rate, True
    elif level == 6:
        mttdl, loses = f**3 / (n * (n - 1) * (n - 2) * max(t, 1e-12) ** 2), False
        # The URE term of a doubly degraded rebuild is left out (it needs a second failure first).
    elif level == 1:
        # n copies, repaired one at a time: data is lost when the other n - 1 fail within the
        # window. A rebuild reads one surviving copy; with two copies an unrecoverable read in
        # it loses data as RAID 5's does (its term as in RAID 5's formula), with more it is
        # read from another copy.
        rate = math.factorial(n) * max(t, 1e-12) ** (n - 1) / f**n
        ure = p_ure(member_bytes, ure_bits)
        if n == 2:
            rate += n * ure / f
        mttdl, loses = 1.0 / rate, n == 2
    elif level == 10:
        # md's near layout, two copies: the lost member's chunks have their other copy on one
        # partner (an even member count: pairs) or on its two neighbours (an odd count), and
        # the rebuild reads a member's worth from them. Losing a partner, or an unrecoverable
        # read in what is read, loses data.
        partners = 1 if n % 2 == 0 else 2
        ure = p_ure(member_bytes, ure_bits)
        rate = n * partners * t / f**2 + n * ure / f
        mttdl, loses = 1.0 / rate, True
        p_second = 1.0 - math.exp(-partners * t / f)
    else:
        raise ValueError(f"RAID level {level}: no redundancy to expose")
    return Exposure(mttdl, p_second, ure, loses)
