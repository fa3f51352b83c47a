"""Published reference figures: the measurements the experiments reproduce.

Data only, so that product code can quote a figure (``ssdlab size`` compares its drive count
with seed 002's) without importing an experiment; :mod:`ssdlab.experiments` compares the
simulation with the same numbers. Each table or constant names the public source it was taken
from (white paper, paper, blog or review) and, where the source gives one, the table or page.
Figures a source does not give (an assumed case temperature, say) are not here: they stay with
the experiment that assumes them.

"Seed 000" to "seed 004" are the project's labels for the five publications below; the same
list, with what each one measured, is in ``docs/references.md``.

- seed 000: Kim In-sung ("Minix"), "SSD 이야기 7. SSD와 서버" ("SSD story 7: SSDs and
  servers"), blog post, 26 December 2008, http://minix.tistory.com/93 (Korean).
- seed 001: Sang-Su Lee and Dongkun Shin, "SSD로 구성된 RAID 장치의 성능 분석" ("Performance
  Analysis on SSD RAID Device"), Proceedings of the KIISE conference 39(1A), June 2012,
  pp. 367-369, http://www.dbpia.co.kr/Article/NODE01901539 (Korean).
- seed 002: BittWare, "NVMe SSD Write Performance", white paper (undated web page),
  https://www.bittware.com/resources/ssd-write-performance/.
- seed 003: Jae-Hun Lee and Sang-Won Lee (Sungkyunkwan University), "플래시메모리 SSD 상에서
  IOSTAT 지표의 한계점" ("Limitations of IOSTAT Metrics on Flash Memory SSDs"), KIISE
  conference paper (Korean; the paper carries no year, it cites Linux 4.10.13 of 2017).
- seed 004: Sarika Mehta (Solidigm) and Daniel Landau (Xinnor), "Accelerating RAID Rebuild
  and Reducing Write Amplification on High Density Solidigm QLC Drives with xiRAID",
  Solidigm solution brief, 2025,
  https://www.solidigm.com/products/technology/raid-rebuild-with-xiraid-and-qlc-ssds.html.
"""

from __future__ import annotations

from dataclasses import dataclass

# ---- seed 000: Kim, "SSD story 7: SSDs and servers" (blog, December 2008) -----------------
# Random reads by a growing number of processes on one disk and one SSD under Linux's
# schedulers of the day; the blog gives the process counts and trends, not IOPS: the disk
# peaks between 16 and 32 processes, then stays roughly flat.

SEED000_PROCESSES = (1, 4, 8, 16, 32, 64, 128)
SEED000_HDD_PEAK = (16, 32)

# The blog's third test runs Iometer's "File Server" access pattern (reads only, as the blog
# ran it) from 1 to 256 outstanding I/Os. Its transfer-size mix, as fio's bssplit: the
# blog's own table is garbled, so this is the pattern as Iometer defines it, in the form fio
# ships it (examples/iometer-file-access-server.fio in github.com/axboe/fio: 512 B 10 %,
# 1 KiB 5 %, 2 KiB 5 %, 4 KiB 60 %, 8 KiB 2 %, 16 KiB 4 %, 32 KiB 4 %, 64 KiB 10 %).
IOMETER_FILE_SERVER_BSSPLIT = "512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10"


# Item 3, mkfs: "mkfs with 20 million inodes is another small-write test where MLC does
# badly" (no time given).
SEED000_MKFS_INODES = 20_000_000
SEED000_MKFS_CLAIM = "mkfs with 20 million inodes is another small-write test where MLC does badly"


# Item 3, "MFT" (Managed Flash Technology), a host-side driver that buffers small writes in RAM
# and writes them as large sequential runs. The blog's claims, as it words them; no figures.
SEED000_MFT_CLAIMS = {
    "faster": "on MLC SSDs, which do badly at small-file writes, it gives a considerable gain",
    "small blocks": "a 4:1 read/write test: small-block reads and writes gain",
    "disk alike": "applied to a hard disk, the change is almost the same as on the SSD",
    "unsafe": "ignoring the requests to flush its buffer, it loses data at a power cut and can corrupt databases",
}


# Item 5, a mail queue on one disk and on one SSD: ten threads queue 1,000,000 files (eight
# write 10 KB files, two write 100 KB files) while ten processes list and delete them. Run
# times and the ranges sar and uptime showed during each run.
SEED000_MAILQUEUE_FILES = 1_000_000
SEED000_MAILQUEUE = {
    "hdd": {"run_s": 86 * 60 + 57.52, "load": (9.91, 22.89), "iowait_pct": (2.50, 15.88),
            "cpu_pct": (40.14, 96.20), "memory_gb": (1.4, 3.1)},
    "ssd": {"run_s": 34 * 60 + 26.12, "load": (10.30, 22.39), "iowait_pct": (1.56, 9.75),
            "cpu_pct": (23.10, 91.99), "memory_gb": (2.3, 2.5)},
}


# Item 7: a web download server ("web-hard"), 127 clients in three classes. Peak served, Mb/s;
# per-class download rates, KB/s (the blog's "KB": 1000 bytes assumed); sar's and uptime's
# ranges over the day. The blog's "CPU" figures track its iowait (39.98 vs 36.32, 82.06 vs
# 79.51): we read them as 100 - %idle, busy and iowait together.
SEED000_WEBSERVER_HDD = {"mbps": 571.5, "class_kBps": {"adsl": 182.0, "light": 746.0, "fibre": 2539.0},
                         "clients": {"adsl": 70, "light": 30, "fibre": 27},
                         "load": (69.81, 112.87), "iowait_pct": (36.32, 79.51), "cpu_pct": (39.98, 82.06)}
SEED000_WEBSERVER_SSD = {"bond2": "capped by the 2 Gb/s bond", "bond4_cfq_mbps": 2551.0, "bond4_noop_mbps": 2784.0,
                         "tengig_toe_noop_mbps": 6942.9, "tengig_load": (28.43, 36.78),
                         "tengig_iowait_pct": (13.85, 14.29), "tengig_cpu_pct": (78.06, 98.60),
                         "x_at_4g": 4.5, "x_at_10g": 12.0}

# Item 8, search-index servers: "HDD response time 20 ms warming to 6-8 ms"; on SSDs the
# response "stays fast" through an index swap (no figure).
# Item 8, the cache tier: "two cache servers each kept under 50 % load (or one hot standby) so
# that a failure does not push the hot traffic onto the file servers"; ">= 8 SSDs in RAID per
# server; >= 12 SSDs for > 10 Gb/s".
SEED000_CACHETIER = {"ssds_min": 8, "ssds_over_10g": 12, "over_mbps": 10_000.0, "safe_load": 0.5}
SEED000_SEARCHINDEX = {"hdd_cold_ms": 20.0, "hdd_warm_ms": (6.0, 8.0), "ssd_after_swap": "stays fast"}


# ---- seed 001: Lee & Shin, "Performance Analysis on SSD RAID Device" (KIISE 2012) ---------
# Hardware RAID 5 (Adaptec 6805, 512 MB cache) of Samsung SSD 830 64 GB, Iometer. The paper
# shows trends in figures without numbers in its text; the one quantitative claim: random
# writes are slowest when the request is about half the stripe (chunk) size.

SEED001_WORST_WRITE_SHARE = 0.5  # request size / stripe size at the worst random write


# ---- seed 002: BittWare, "NVMe SSD Write Performance" (data-recorder white paper) ----------
# Each drive written with SPDK (no file system, one thread per drive keeping the queue full):
# fill from empty, then overwrite the whole drive; and the RAID 0 drive count the paper
# recommends for a 100 Gb/s recorder.

SEED002_TARGET = 12.5e9  # B/s: the recorder's 100 Gb/s

# The paper's endurance example ("Drive lifetime"): a 1 DWPD drive takes about 1,800 full
# overwrites over its warranty; 12 enterprise SSDs of 30 TB hold about 8 hours of saturated
# 100 GbE, and at 1 DWPD such an array wears out in a little over 1.5 years.
SEED002_DWPD_OVERWRITES = 1800      # "~1,800" for 1 DWPD
SEED002_EXAMPLE_DRIVES = 12
SEED002_EXAMPLE_CAPACITY = 30e12    # B per drive
SEED002_EXAMPLE_RETENTION_S = 8 * 3600.0
SEED002_EXAMPLE_LIFETIME_YEARS = 1.5  # "a little over" this


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

# ---- seed 003: Lee & Lee, "Limitations of IOSTAT Metrics on Flash Memory SSDs" (KIISE) ----
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

# ---- TechPowerUp, "Samsung 970 Pro 512 GB Review", thermal throttling page -----------------
# https://www.techpowerup.com/review/samsung-970-pro-ssd-512-gb/7.html
# Sequential writes in a case without a fan: the drive throttles when SMART reports ~80 C.

TPU_ONSET_S = 150.0       # throttling begins after about 150 s ...
TPU_ONSET_BYTES = 300e9   # ... and 300 GB at 2 GB/s
TPU_LEVEL = 1.5 / 2.0     # writes drop from 2.0 to 1.5 GB/s


# ---- seed 004: Mehta & Landau, Solidigm/Xinnor xiRAID rebuild solution brief (2025) -------
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


# ---- makers' ratings: 4 KiB random read ---------------------------------------------------------

#: Rated 4 KiB random-read IOPS at QD32 of drives with a profile, and where the figure is from:
#: the datasheet cross-check (``ssdlab.experiments.datasheet_reads``) runs each profile as the
#: rating is measured and compares.
DATASHEET_RANDOM_READ_IOPS = {
    "samsung-970-pro-512": (370_000, "Samsung 970 PRO specifications as listed by ssdwiki and Puget Systems: "
                                     "370K IOPS 4 KB random read, QD32"),
    "samsung-970-evo-plus-1tb": (600_000, "digit.in 970 EVO Plus spec table: 600K IOPS 4 KB random read, QD32 (1 TB)"),
    "samsung-850-pro": (100_000, "Samsung 850 PRO specifications: 100K IOPS 4K random read, QD32"),
}
