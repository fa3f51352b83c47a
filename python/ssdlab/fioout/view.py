"""A run's results in fio's own terms: per reporting unit what fio's ``thread_stat`` holds
(runtimes, bandwidth and IOPS samples, CPU, depth distributions) and per group what its
``group_run_stats`` holds. The normal, terse and JSON reports are all printed from this.

Bandwidth and IOPS samples are the core's, taken per job as fio takes them (every
``bwavgtime``/``iopsavgtime`` of the job's own completions, or one per I/O when the job
writes that log per I/O: ``metrics/jobstats.rs``).

Where the simulation has no counterpart of something fio measures on a real machine, it is
estimated, and said so here:

* CPU: the job's thread's busy time is what the core charged it: the host's per-I/O CPU
  time (``io_overhead``, as sampled for each I/O it issued) and the I/O scheduler's CPU time
  for its bios (held under the queue lock). How that time splits between user and system
  time is not simulated: of the per-I/O time, 10 % is counted as user time for synchronous
  engines (the syscall is most of the work) and 30 % for asynchronous ones (fio's own
  reaping and accounting); the scheduler's is all system time. ``ctx`` is one switch per completion for a
  synchronous engine (each I/O blocks the thread) and one per ``iodepth`` completions for an
  asynchronous one; ``majf`` is 0 and ``minf`` the pages of the job's I/O buffers and a few
  more (8), as a fresh fio process touches them;
* submit/complete depths: an asynchronous engine submits ``iodepth_batch`` I/Os per call and
  reaps ``iodepth_batch_complete_min`` at least (both 1 by default), a synchronous one one
  at a time;

What fio records follows the job's options, as fio 3.33 does (checked against it): a latency
that ``disable_slat``/``disable_clat``/``disable_lat`` (or ``gtod_reduce``) turns off has no
samples; without clat fio has no latency buckets and no sync latencies either; a latency's
percentiles are printed when its ``*_percentiles`` option is on and it has samples.
``unified_rw_reporting`` adds the directions merged into one, "mixed" (:func:`_mixed`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..fio.reporting import JobReport
from ..fio.resolve import completes_in_call
from .numbers import Stat

if TYPE_CHECKING:
    from ..results import DirResult, RunResult, Unit

DIRS = ("read", "write", "trim")
USR_SHARE_SYNC = 0.10
USR_SHARE_ASYNC = 0.30
BASE_MINOR_FAULTS = 8
PAGE = 4096

# fio's latency distribution buckets: io_u_lat_n (ns), io_u_lat_u (us), io_u_lat_m (ms)
LAT_KEYS = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000]
LAT_MS_KEYS = LAT_KEYS + [2000]
DEPTH_KEYS = ["1", "2", "4", "8", "16", "32", ">=64"]
SUBMIT_KEYS = ["0", "4", "8", "16", "32", "64", ">=64"]


@dataclass
class FioDir:
    """One direction of a unit: totals and latencies, runtime, bandwidth/IOPS samples."""

    res: "DirResult"
    runtime_ms: int
    bw: Stat = field(default_factory=Stat)
    iops: Stat = field(default_factory=Stat)

    def bw_bytes(self) -> int:
        """fio's ``1000 * io_bytes / runtime`` (bytes/s, integer)."""
        return 1000 * self.res.bytes // self.runtime_ms if self.runtime_ms else 0

    def iops_int(self) -> int:
        return 1000 * self.res.ios // self.runtime_ms if self.runtime_ms else 0

    def iops_float(self) -> float:
        return 1000.0 * self.res.ios / self.runtime_ms if self.runtime_ms else 0.0


@dataclass
class FioUnit:
    """What fio's thread_stat holds for one reporting unit."""

    unit: "Unit"
    report: JobReport
    jobs: list[dict[str, Any]]  # the members' core input (JobSpec dumps)
    stats: list[dict[str, Any]]  # the members' core output
    dirs: dict[str, FioDir]
    pid: int
    total_run_ms: int = 0
    usr_ms: float = 0.0
    sys_ms: float = 0.0
    ctx: int = 0
    majf: int = 0
    minf: int = 0
    submit: list[int] = field(default_factory=lambda: [0] * 7)
    complete: list[int] = field(default_factory=lambda: [0] * 7)

    @property
    def name(self) -> str:
        return self.unit.name

    @property
    def error(self) -> int:
        """fio's ``error``: the errno that stopped a member (a metadata engine's failed call), 0 if none."""
        return next((s["error"] for s in self.stats if s.get("error")), 0)

    def total_errors(self) -> int:
        """fio's total_err_count: the members' failed calls (a job stops at its first: the
        simulation does not continue past an error, whatever continue_on_error says)."""
        return sum(1 for s in self.stats if s.get("error"))

    @property
    def sync_engine(self) -> bool:
        """fio completes each I/O inside the submitting call: a synchronous engine, or the
        null engine at depth 1 (deeper, it queues)."""
        return completes_in_call(self.report.ioengine, self.iodepth)

    @property
    def iodepth(self) -> int:
        return int(self.jobs[0]["iodepth"]) if self.jobs else 1

    @property
    def usr_cpu(self) -> float:
        return self.usr_ms * 100 / self.total_run_ms if self.total_run_ms else 0.0

    @property
    def sys_cpu(self) -> float:
        return self.sys_ms * 100 / self.total_run_ms if self.total_run_ms else 0.0

    def total_ios(self) -> list[int]:
        """fio's total_io_u: read, write, trim, sync."""
        return [self.unit.dirs[d].ios for d in DIRS] + [self.unit.sync.ios]

    def depth_dist(self) -> list[float]:
        return dist(self.unit.iodepth_level)

    def latency_hist(self) -> dict[int, int]:
        """The clat histogram of all directions, fio's io_u_lat buckets' source (none
        without clat)."""
        if self.report.disable_clat:
            return {}
        return self.unit.dirs["read"].merge(self.unit.dirs["write"]).merge(self.unit.dirs["trim"]).hist

    def latency_dist(self) -> tuple[list[float], list[float], list[float]]:
        return lat_dist(self.latency_hist(), sum(self.unit.dirs[d].ios for d in DIRS))

    def res(self, d: str) -> "DirResult":
        return self.dirs[d].res

    def slat(self, d: str) -> Stat:
        """slat as fio has it: none for synchronous engines (fio does not time their
        submission) or under disable_slat."""
        return Stat() if self.sync_engine or self.report.disable_slat else self.res(d).slat

    def clat(self, d: str) -> Stat:
        return Stat() if self.report.disable_clat else self.res(d).clat

    def lat(self, d: str) -> Stat:
        return Stat() if self.report.disable_lat else self.res(d).lat

    def sync_lat(self) -> Stat:
        """fio times a sync call as it times a completion: not under disable_clat."""
        return Stat() if self.report.disable_clat else self.unit.sync.lat

    def percentile_kinds(self, d: str) -> list[str]:
        """The latencies of direction ``d`` fio prints percentiles of, in its order: each
        whose option is on (clat's by default) and that has samples (a disabled latency's
        option is off in fio)."""
        rep = self.report
        out = []
        for kind, on, stat in (("slat", rep.slat_percentiles, self.slat(d)),
                               ("clat", rep.clat_percentiles, self.clat(d)),
                               ("lat", rep.lat_percentiles, self.lat(d))):
            if on and stat.n:
                out.append(kind)
        return out

    def terse_percentiles_of(self) -> str | None:
        """Which latency terse's 20 percentile fields hold: lat's when lat_percentiles is on
        (and lat recorded), else clat's when clat_percentiles is, else none."""
        rep = self.report
        if rep.lat_percentiles and not rep.disable_lat:
            return "lat"
        if rep.clat_percentiles and not rep.disable_clat:
            return "clat"
        return None

    @property
    def unified(self) -> int:
        """fio's unified_rw_reporting: 0 none, 1 mixed, 2 both."""
        return self.report.unified_rw

    def shown_dirs(self, with_trim: bool = True) -> list[str]:
        """The directions fio reports, in its order: per direction, "mixed" alone (mixed)
        or after them (both)."""
        per_dir = list(DIRS if with_trim else DIRS[:2])
        if self.unified == 1:
            return ["mixed"]
        return per_dir + (["mixed"] if self.unified == 2 else [])

    def agg_dir(self, d: str) -> str:
        """The direction of the group whose bandwidth a unit's share is taken of: fio takes
        a merged direction's from its index 0, read's when the group also has them apart."""
        return "read" if d == "mixed" and self.unified == 2 else d


@dataclass
class FioGroup:
    """fio's group_run_stats: per direction the units' runtimes and rates, the bytes."""

    groupid: int
    kb_base: int = 1024
    unified: int = 0  # unified_rw_reporting of its units (the largest)
    min_run: dict[str, int] = field(default_factory=dict)
    max_run: dict[str, int] = field(default_factory=dict)
    min_bw: dict[str, int] = field(default_factory=dict)
    max_bw: dict[str, int] = field(default_factory=dict)
    iobytes: dict[str, int] = field(default_factory=dict)

    def agg(self, d: str) -> int:
        """The group's bandwidth: all its bytes over the longest runtime (bytes/s)."""
        run = self.max_run.get(d, 0)
        return self.iobytes.get(d, 0) * 1000 // run if run else 0

    def bw_share(self, d: str, mean_kib: float) -> float:
        """fio's ``per=``: a unit's mean bandwidth sample as a share of the group's."""
        agg = self.agg(d)
        if agg > 1024:
            return min(100.0, mean_kib * 100.0 / (agg / 1024.0))
        return 100.0


def dist(counts: list[int]) -> list[float]:
    """fio's stat_calc_dist: percentages, a non-zero share below 0.1 % shown as 0.1 %."""
    total = sum(counts)
    out = []
    for c in counts:
        v = 100.0 * c / total if total else 0.0
        out.append(0.1 if c and v < 0.1 else v)
    return out


def lat_dist(hist: dict[int, int], total: int) -> tuple[list[float], list[float], list[float]]:
    """fio's io_u_lat_n/u/m as percentages of all I/Os (a non-zero share below 0.01 % shown
    as 0.01 %). A latency of ``v`` ns falls in the ns buckets below 1 us, the us buckets
    below 1 ms, else the ms buckets; within them, in the first bucket whose key exceeds it
    ("10" holds 4..9)."""
    counts_n, counts_u, counts_m = [0] * 10, [0] * 10, [0] * 12
    for v, c in hist.items():
        if v < 1000:
            counts_n[_bucket(v, LAT_KEYS)] += c
        elif v < 1_000_000:
            counts_u[_bucket(v // 1000, LAT_KEYS)] += c
        else:
            counts_m[_bucket(v // 1_000_000, LAT_MS_KEYS)] += c

    def pct(counts: list[int]) -> list[float]:
        out = []
        for c in counts:
            v = 100.0 * c / total if total else 0.0
            out.append(0.01 if c and v < 0.01 else v)
        return out

    return pct(counts_n), pct(counts_u), pct(counts_m)


def _bucket(value: int, keys: list[int]) -> int:
    for i, k in enumerate(keys):
        if value < k:
            return i
    return len(keys)


def _submit_bucket(n: int) -> int:
    """fio's io_u_submit/io_u_complete index for a call of ``n`` I/Os."""
    for i, top in enumerate((0, 4, 8, 16, 32, 64)):
        if n <= top:
            return i
    return 6


def _block_sizes(job: dict[str, Any]) -> list[tuple[int, int]]:
    out = []
    for b in job["block_sizes"]:
        if b.get("range_min") is not None:
            out.append((int(b["range_min"]), int(b["range_max"])))
        else:
            sizes = [int(s) for s, _ in b["split"]] or [4096]
            out.append((min(sizes), max(sizes)))
    return out


def build_view(r: "RunResult") -> tuple[list[FioUnit], dict[int, FioGroup]]:
    core_jobs = r.spec.core["jobs"]
    reports = list(getattr(r.spec, "job_reports", []) or [])
    base_pid = os.getpid()
    units: list[FioUnit] = []
    for u in r.units:
        first = u.members[0]
        report = reports[first] if first < len(reports) else JobReport()
        jobs = [core_jobs[i] for i in u.members]
        stats = [r.core["jobs"][i] for i in u.members]
        dirs = {}
        for d in DIRS:
            res = u.dirs[d]
            runtime = int(round(u.runtime_ns / 1e6)) if res.ios else 0
            dirs[d] = FioDir(res, max(runtime, 1) if res.ios else 0)
        for j in stats:
            # each job's own samples; a group's add up, as fio sums them
            for k, d in enumerate(DIRS):
                dirs[d].bw.add_sum(Stat.from_core(j["bw_samples"][k]))
                dirs[d].iops.add_sum(Stat.from_core(j["iops_samples"][k]))
        if report.unified_rw:
            dirs["mixed"] = _mixed(dirs)
        fu = FioUnit(u, report, jobs, stats, dirs, pid=base_pid + 1 + first)
        _cpu(fu)
        units.append(fu)
    groups: dict[int, FioGroup] = {}
    for fu in units:
        g = groups.setdefault(fu.unit.group_id, FioGroup(fu.unit.group_id, fu.report.kb_base))
        g.unified = max(g.unified, fu.unified)
        for d in fu.dirs:
            fd = fu.dirs[d]
            if not fd.runtime_ms:
                continue
            g.min_run[d] = min(g.min_run.get(d, fd.runtime_ms), fd.runtime_ms)
            g.max_run[d] = max(g.max_run.get(d, 0), fd.runtime_ms)
            bw = fd.bw_bytes()
            g.min_bw[d] = min(g.min_bw.get(d, bw), bw)
            g.max_bw[d] = max(g.max_bw.get(d, 0), bw)
            g.iobytes[d] = g.iobytes.get(d, 0) + fd.res.bytes
    return units, groups


def _mixed(dirs: dict[str, FioDir]) -> FioDir:
    """fio's unified_rw_reporting: the directions as one (sum_thread_stats into index 0):
    their I/O and latencies pooled, the longest runtime, their bandwidth and IOPS samples
    summed (as a group's jobs' are)."""
    res = dirs["read"].res.merge(dirs["write"].res).merge(dirs["trim"].res)
    out = FioDir(res, max(dirs[d].runtime_ms for d in DIRS))
    for d in DIRS:
        out.bw.add_sum(dirs[d].bw)
        out.iops.add_sum(dirs[d].iops)
    return out


def _cpu(fu: FioUnit) -> None:
    """CPU time (the core's, split as the module's docstring says), context switches, page
    faults and submit/complete depths (estimates: see the module's docstring)."""
    sync = fu.sync_engine
    share = USR_SHARE_SYNC if sync else USR_SHARE_ASYNC
    for job, st in zip(fu.jobs, fu.stats):
        submit_ms = st["cpu_ns"] / 1e6
        fu.usr_ms += submit_ms * share
        fu.sys_ms += submit_ms * (1 - share) + st["sched_cpu_ns"] / 1e6
        fu.total_run_ms += max(0, st["end_ns"] - st["start_ns"]) // 1_000_000
        depth = max(1, int(job["iodepth"]))
        done = int(st["completed"])
        fu.ctx += done if sync else -(-done // depth)
        max_bs = max(hi for _, hi in _block_sizes(job))
        fu.minf += BASE_MINOR_FAULTS + -(-depth * max_bs // PAGE)
        issued = int(st["issued"])
        if sync:
            fu.submit[_submit_bucket(1)] += issued
            fu.complete[_submit_bucket(1)] += done
        else:
            batch = int(job.get("iodepth_batch_submit", 1))
            batch = depth if batch == 0 else batch
            reap = max(1, fu.report.iodepth_batch_complete_min)
            fu.submit[_submit_bucket(min(batch, depth))] += -(-issued // min(batch, depth))
            fu.complete[_submit_bucket(min(reap, depth))] += -(-done // min(reap, depth))


def block_size_ranges(fu: FioUnit) -> list[tuple[int, int]]:
    """(min, max) block size per direction (read, write, trim) of the unit's first job."""
    return _block_sizes(fu.jobs[0])
