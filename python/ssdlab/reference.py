"""Published reference figures: the measurements the experiments reproduce.

Data only, so that product code can quote a figure (``ssdlab size`` compares its drive count
with seed 002's) without importing an experiment; :mod:`ssdlab.experiments` compares the
simulation with the same numbers. Each table or constant names the public source it was taken
from (white paper, paper or review) and, where the source gives one, the table or page.
Figures a source does not give (an assumed case temperature, say) are not here: they stay with
the experiment that assumes them.
"""

from __future__ import annotations

from dataclasses import dataclass

# ---- seed 000: "SSD and servers" (technical blog, December 2008) -----------------------------
# Random reads by a growing number of processes on one disk and one SSD under Linux's
# schedulers of the day; the blog gives the process counts and trends, not IOPS: the disk
# peaks between 16 and 32 processes, then stays roughly flat.

SEED000_PROCESSES = (1, 4, 8, 16, 32, 64, 128)
SEED000_HDD_PEAK = (16, 32)


# ---- seed 002: "NVMe SSD write performance" (data-recorder white paper) ------------------
# Each drive written with SPDK (no file system, one thread per drive keeping the queue full):
# fill from empty, then overwrite the whole drive; and the RAID 0 drive count the paper
# recommends for a 100 Gb/s recorder.

SEED002_TARGET = 12.5e9  # B/s: the recorder's 100 Gb/s


@dataclass(frozen=True)
class Rate:
    """A published rate: ``kind`` is "approx" (~low), "range" (low-high) or "atleast" (>= low)."""

    quantity: str  # a SustainedWrite attribute
    kind: str
    low: float  # GB/s
    high: float | None = None

    @property
    def text(self) -> str:
        if self.kind == "range":
            return f"{self.low:g}-{self.high:g} GB/s"
        if self.kind == "atleast":
            return f">= {self.low:g} GB/s"
        return f"~{self.low:g} GB/s"

    def error_pct(self, simulated_gbps: float) -> float:
        """Signed error in % of the published value: ~X against X; a range is 0 inside and
        against the nearer bound outside; ">= X" is 0 at or above X, else the shortfall."""
        if self.kind == "range":
            if self.low <= simulated_gbps <= self.high:
                return 0.0
            bound = self.low if simulated_gbps < self.low else self.high
            return 100.0 * (simulated_gbps / bound - 1.0)
        if self.kind == "atleast":
            return 0.0 if simulated_gbps >= self.low else 100.0 * (simulated_gbps / self.low - 1.0)
        return 100.0 * (simulated_gbps / self.low - 1.0)


@dataclass(frozen=True)
class Drive:
    label: str
    drive_class: str
    datasheet_gbps: float
    rates: tuple[Rate, ...]
    drives_100g: int  # the seed's RAID 0 count for SEED002_TARGET
    block_size: str = "128k"


# The white paper's table, by profile name. "burst" is the rate at the start, "after cache"
# the fill rate once the burst is over (the whole fill on drives without SLC cache),
# "overwrite" the second pass, "worst" the low end a recorder must count on.
SEED002_PUBLISHED: dict[str, Drive] = {
    "samsung-970-evo-plus-1tb": Drive(
        "Samsung 970 EVO Plus 1 TB", "consumer TLC + SLC cache", 3.3,
        (Rate("burst_rate", "range", 2.7, 2.8), Rate("after_cache_rate", "approx", 1.6),
         Rate("overwrite_rate", "approx", 1.6), Rate("worst_sustained_rate", "approx", 1.6)), 8),
    "samsung-970-pro-512": Drive(
        "Samsung 970 PRO 512 GB", "consumer MLC, no SLC cache", 2.3,
        (Rate("burst_rate", "approx", 2.2), Rate("after_cache_rate", "approx", 2.2),
         Rate("overwrite_rate", "approx", 2.2), Rate("worst_sustained_rate", "approx", 2.2)), 6),
    "samsung-pm1725b-1.6tb": Drive(
        "Samsung PM1725b 1.6 TB", "enterprise TLC, no SLC cache", 2.0,
        (Rate("after_cache_rate", "approx", 1.7), Rate("overwrite_rate", "approx", 1.7),
         Rate("worst_sustained_rate", "approx", 1.3)), 10),
    "intel-optane-905p-480": Drive(
        "Intel Optane 480 GB", "3D XPoint", 2.2,
        (Rate("burst_rate", "atleast", 2.2), Rate("after_cache_rate", "atleast", 2.2),
         Rate("overwrite_rate", "atleast", 2.2), Rate("worst_sustained_rate", "atleast", 2.2)), 6),
    "intel-d7-p5510-3.84tb": Drive(
        "Intel D7-P5510 3.84 TB", "enterprise Gen4 TLC", 3.3,
        (Rate("burst_rate", "atleast", 3.2), Rate("after_cache_rate", "atleast", 3.2),
         Rate("overwrite_rate", "atleast", 3.2), Rate("worst_sustained_rate", "atleast", 3.2)), 5,
        block_size="256k"),  # the paper used >= 256 KB buffers on this drive
}

# The PM1725b row above in B/s, as the thermal experiment compares it: the paper says it
# wrote "mostly 1.7 GB/s, with dips to 1.3" (and gives no cause).
SEED002_FULL = 1.7e9
SEED002_DIP = 1.3e9

# ---- seed 003: "Limitations of IOSTAT metrics on flash SSDs" (Lee & Lee, KIISE) ----------
# fio 4 KiB random writes at iodepth 1 per job on a Samsung 850 PRO, 300 s per point.

# numjobs -> (IOPS, iostat %util), Table 2 of the paper.
SEED003_PUBLISHED: dict[int, tuple[int, float]] = {
    1: (18842, 75.9),
    2: (35628, 99.96),
    3: (43944, 99.92),
    4: (49095, 99.92),
    8: (48755, 99.9),
    16: (49675, 99.79),
}

# ---- TechPowerUp, Samsung 970 Pro 512 GB review (thermal page) ---------------------------
# Sequential writes in a case without a fan: the drive throttles when SMART reports ~80 C.

TPU_ONSET_S = 150.0       # throttling begins after about 150 s ...
TPU_ONSET_BYTES = 300e9   # ... and 300 GB at 2 GB/s
TPU_LEVEL = 1.5 / 2.0     # writes drop from 2.0 to 1.5 GB/s


# ---- seed 004: "RAID rebuild of high-density QLC SSDs" (Solidigm + Xinnor solution brief) -----
# RAID 5 of 9 Solidigm D5-P5336 61.44 TB (a tenth drive is the replacement), Linux md vs
# xiRAID Classic 4.3; rebuild time from the system log, the rebuilt drive's WAF from its SMART
# host and NAND bytes written. Under load: the brief's fio job (38 sequential 1 MB writers, 90
# sequential 1 MB readers, iodepth 64) on the array. "> 67 days" was extrapolated by the brief.


@dataclass(frozen=True)
class Rebuild:
    engine: str  # the simulator's engine profile standing for it
    label: str
    under_load: bool
    rebuild_time_s: float  # a lower bound when ``time_at_least``
    rate_bytes: float
    waf: float
    time_at_least: bool = False
    host_read_bytes: float | None = None  # upper bounds ("<=") for md, levels for xiRAID
    host_write_bytes: float | None = None
    host_bounds_are_limits: bool = False


SEED004_DRIVE = "solidigm-d5-p5336-61.44tb"
SEED004_MEMBERS = 9
SEED004_PUBLISHED: dict[str, Rebuild] = {
    "md-idle": Rebuild("md", "mdraid, no host I/O", False, 53 * 3600 + 40 * 60, 322e6, 1.2),
    "streaming-idle": Rebuild("streaming", "xiRAID Classic 4.3, no host I/O", False, 5 * 3600 + 22 * 60, 3.18e9, 1.02),
    "md-load": Rebuild("md", "mdraid, under the host job", True, 67 * 86400, 10.5e6, 1.58, time_at_least=True,
                       host_read_bytes=100e6, host_write_bytes=45e6, host_bounds_are_limits=True),
    "streaming-load": Rebuild("streaming", "xiRAID Classic 4.3, under the host job", True, 53 * 3600 + 53 * 60, 316e6,
                              1.21, host_read_bytes=44e9, host_write_bytes=13e9),
}
