"""Results of a run, in the forms people use: fio's JSON (formatted by :mod:`ssdlab.fioout`),
an iostat -x table, pandas tables.

The core reports per-clone statistics with latency histograms; here clones are merged into
fio's reporting units (one per group with ``group_reporting``, else one per clone) and
percentiles are taken from the merged histograms by fio's rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from .core_output import DeviceResult, SimResult
from .fioout.numbers import Stat
from .iostat import iostat_fields

#: the fio release whose output (normal, JSON, terse) ssdlab prints, line by line and key by
#: key: Debian stable's fio, the one the layout tests compare against (docs/fio-output.md)
FIO_VERSION = "fio-3.33"
_DIRS = ("read", "write", "trim")


#: a latency summary is fio's io_stat, as every other summary of the report
LatSummary = Stat


@dataclass
class DirResult:
    ios: int = 0
    bytes: int = 0
    slat: LatSummary = field(default_factory=LatSummary)
    clat: LatSummary = field(default_factory=LatSummary)
    lat: LatSummary = field(default_factory=LatSummary)
    hist: dict[int, int] = field(default_factory=dict)  # clat: bucket value (ns) -> count
    slat_hist: dict[int, int] = field(default_factory=dict)
    lat_hist: dict[int, int] = field(default_factory=dict)

    @classmethod
    def from_core(cls, d: dict[str, Any]) -> "DirResult":
        def hist(pairs):
            return {int(v): int(c) for v, c in pairs}

        return cls(d["ios"], d["bytes"], LatSummary.from_core(d["slat"]),
                   LatSummary.from_core(d["clat"]), LatSummary.from_core(d["lat"]),
                   hist(d["clat_hist"]), hist(d["slat_hist"]), hist(d["lat_hist"]))

    def merge(self, o: "DirResult") -> "DirResult":
        def add(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
            out = dict(a)
            for v, c in b.items():
                out[v] = out.get(v, 0) + c
            return out

        return DirResult(self.ios + o.ios, self.bytes + o.bytes, self.slat.merge(o.slat),
                         self.clat.merge(o.clat), self.lat.merge(o.lat), add(self.hist, o.hist),
                         add(self.slat_hist, o.slat_hist), add(self.lat_hist, o.lat_hist))

    def percentiles(self, plist: list[float], of: str = "clat") -> dict[str, int]:
        """fio's rule: the first bucket whose running count reaches p % of all samples, in
        the histogram of ``of`` (clat, slat or lat)."""
        hist = {"clat": self.hist, "slat": self.slat_hist, "lat": self.lat_hist}[of]
        total = sum(hist.values())
        out: dict[str, int] = {}
        if total == 0:
            return {f"{p:f}": 0 for p in plist}
        items = sorted(hist.items())
        for p in sorted(plist):
            want = p / 100.0 * total
            running = 0
            value = items[-1][0]
            for v, c in items:
                running += c
                if running >= want:
                    value = v
                    break
            out[f"{p:f}"] = value
        return out


@dataclass
class Unit:
    """One reporting unit: a job clone, or a whole group under group_reporting."""

    name: str
    group_id: int
    members: list[int]
    dirs: dict[str, DirResult]
    sync: DirResult
    runtime_ns: int
    iodepth_level: list[int]
    options: dict[str, str]

    def iops(self, d: str) -> float:
        return self.dirs[d].ios / (self.runtime_ns / 1e9) if self.runtime_ns else 0.0

    def bw_bytes(self, d: str) -> float:
        return self.dirs[d].bytes / (self.runtime_ns / 1e9) if self.runtime_ns else 0.0


def build_units(core: SimResult, group_reporting: dict[int, bool],
                job_options: list[dict[str, str]]) -> list[Unit]:
    units: list[Unit] = []
    by_group: dict[int, Unit] = {}
    for i, j in enumerate(core["jobs"]):
        dirs = {d: DirResult.from_core(j[d]) for d in _DIRS}
        sync = DirResult.from_core(j["sync"])
        runtime = max(0, j["end_ns"] - j["measure_start_ns"])
        opts = job_options[i] if i < len(job_options) else {}
        g = j["group_id"]
        if group_reporting.get(g, False) and g in by_group:
            u = by_group[g]
            u.members.append(i)
            u.dirs = {d: u.dirs[d].merge(dirs[d]) for d in _DIRS}
            u.sync = u.sync.merge(sync)
            u.runtime_ns = max(u.runtime_ns, runtime)
            u.iodepth_level = [a + b for a, b in zip(u.iodepth_level, j["iodepth_level"])]
            continue
        u = Unit(j["name"], g, [i], dirs, sync, runtime, list(j["iodepth_level"]), opts)
        units.append(u)
        if group_reporting.get(g, False):
            by_group[g] = u
    return units


class TargetInfo(BaseModel):
    """What presenting a device's results needs to know of it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    profile: str
    kind: str
    scale: float = 1.0
    endurance: dict[str, Any] = {}
    members: list[TargetInfo] = []
    array: dict[str, Any] = {}


#: A NAND SSD's report in the flat row, in order, with what a drive without flash shows.
_NAND_FIELDS = (("erase_count", 0), ("gc_runs", 0), ("gc_relocated_bytes", 0), ("rmw_reads", 0),
                ("buffer_read_hits", 0), ("free_blocks", 0), ("total_blocks", 0), ("max_block_erases", 0),
                ("over_provisioning", None), ("slc_used_bytes", 0), ("slc_budget_bytes", 0),
                ("slc_host_bytes", 0), ("folded_bytes", 0), ("mean_block_erases", 0.0), ("wear_level_moves", 0))


def _flat_internal(d: DeviceResult, elapsed_ns: int, info: TargetInfo) -> dict[str, Any]:
    """A device's report as one flat row: what every device reports, then its kind's own."""
    i = d["internal"]
    if i["kind"] == "array":
        return _flat_array(d, elapsed_ns, info)
    if i["kind"] == "remap":
        return _flat_remap(d, info)
    n = i["nand"]  # None for drives without flash: their flash figures are 0
    t = max(elapsed_ns, 1)
    host_w = i["host_bytes_written"]
    th = i["thermal"]
    pe = info.endurance.get("pe_cycles")
    flash = {key: (n[key] if n is not None else zero) for key, zero in _NAND_FIELDS}
    return {
        "name": d["name"],
        "profile": info.profile,
        "kind": i["kind"],
        "internal_utilization": i["die_busy_ns"] / (i["dies"] * t),
        "channel_utilization": [b / t for b in i["channel_busy_ns"]],
        "controller_utilization": i["controller_busy_ns"] / (i["controller_cores"] * t),
        "host_bytes_written": host_w,
        "host_bytes_read": i["host_bytes_read"],
        # The medium's traffic; named for NAND, the usual case (in-place media too).
        "nand_bytes_written": i["media_bytes_written"],
        "nand_bytes_read": i["media_bytes_read"],
        "waf": _waf(i["media_bytes_written"], (n or {}).get("write_buffer_unplaced_bytes", 0), host_w),
        **flash,
        # Thermal model (None for drives without one).
        "temperature_c": th["temperature_c"] if th else None,
        "max_temperature_c": th["max_temperature_c"] if th else None,
        "throttled_s": th["throttled_ns"] / 1e9 if th else None,
        "throttle_events": th["throttle_events"] if th else None,
        # SMART "percentage used": average wear against the rated P/E cycles.
        "percentage_used": 100.0 * flash["mean_block_erases"] / pe if pe else None,
        **_flat_hdd(i.get("hdd")),
    }


def _waf(media_bytes: int, unplaced_bytes: int, host_bytes: int) -> float | None:
    """Flash writes per host write. Host data still waiting in a write buffer unplaced is
    counted as written once (it reaches flash when the buffer drains): left out, a run that ends
    with the buffer full shows a WAF below 1 (0.914 for 256 MiB written to the 61.44 TB drive
    at scale 0.001, its 22 MiB buffer full)."""
    return (media_bytes + unplaced_bytes) / host_bytes if host_bytes else None


def _flat_hdd(h: dict[str, Any] | None) -> dict[str, Any]:
    """A hard disk's head time and cache (None for other devices)."""
    keys = ("media_accesses", "seeks", "mean_seek_ms", "mean_rotation_ms", "mean_transfer_ms",
            "cache_read_hits", "read_ahead_hits", "cached_writes", "destaged_bytes", "dirty_bytes",
            "starved_commands")
    if h is None:
        return dict.fromkeys(keys)
    per = max(h["media_accesses"], 1)
    return dict(zip(keys, (
        h["media_accesses"], h["seeks"], h["seek_ns"] / per / 1e6, h["rotation_ns"] / per / 1e6,
        h["transfer_ns"] / per / 1e6, h["cache_read_hits"], h["read_ahead_hits"], h["cached_writes"],
        h["destaged_bytes"], h["dirty_bytes"], h["starved"])))


def _flat_array(d: dict[str, Any], elapsed_ns: int, info: TargetInfo) -> dict[str, Any]:
    """An array's report as one row: its stripe handling, and its members' flash summed."""
    i = d["internal"]
    a = i["array"]
    t = max(elapsed_ns, 1)
    host_w = i["host_bytes_written"]
    members = d["members"]
    nand_w = sum(m["internal"]["media_bytes_written"] for m in members)
    unplaced = sum((m["internal"]["nand"] or {}).get("write_buffer_unplaced_bytes", 0) for m in members)
    return {
        "name": d["name"],
        "profile": info.profile,
        "kind": "array",
        "level": a["level"],
        "engine": a["engine"],
        "chunk_bytes": a["chunk_bytes"],
        "members": [m["name"] for m in members],
        "failed": list(a["failed"]),
        # The stripe-handling threads (md's raid5d and its group threads).
        "controller_utilization": i["controller_busy_ns"] / (max(i["controller_cores"], 1) * t),
        "host_bytes_written": host_w,
        "host_bytes_read": i["host_bytes_read"],
        "member_bytes_written": i["media_bytes_written"],
        "member_bytes_read": i["media_bytes_read"],
        # Member writes per host write (parity and read-modify-write), and flash writes per
        # host write through the whole stack (the members' own WAF included).
        "raid_write_factor": i["media_bytes_written"] / host_w if host_w else None,
        "nand_bytes_written": nand_w,
        "waf": _waf(nand_w, unplaced, host_w),
        "stripe_heads": a["stripe_heads"],
        "rmw_stripe_heads": a["rmw_stripe_heads"],
        "rcw_stripe_heads": a["rcw_stripe_heads"],
        "full_stripe_heads": a["full_stripe_heads"],
        "parity_bytes": a["parity_bytes"],
        "reconstructed_bytes": a["reconstructed_bytes"],
        "discard_dropped_bytes": a["discard_dropped_bytes"],
        "stripe_waits": a["stripe_waits"],
        # md: stripe heads found whole in the stripe cache (their requests read nothing).
        "stripe_cache_hits": a["stripe_cache_hits"],
        # md: host writes handled with an earlier write of their process that they continue.
        "joined_writes": a["joined_writes"],
        # md: stripe heads added to the stripe cache because requests starved for them.
        "stripe_cache_grown": a["stripe_cache_grown"],
        # md's write-intent bitmap (chunk 0: none).
        "bitmap_chunk_bytes": a["bitmap_chunk_bytes"],
        "bitmap_bits_set": a["bitmap_bits_set"],
        "bitmap_updates": a["bitmap_updates"],
        "bitmap_write_bytes": a["bitmap_write_bytes"],
        "bitmap_waits": a["bitmap_waits"],
        **_flat_rebuild(a.get("rebuild"), elapsed_ns),
        # The other rebuilds of the run, oldest first: finished before that one started, or
        # rebuilt in the same pass (a member that failed during a rebuild).
        "earlier_rebuilds": [_flat_rebuild(rb, elapsed_ns) for rb in a.get("earlier_rebuilds", [])],
        # A hardware controller's write-back cache (zero for the other engines).
        "cache_read_hits": a["cache_read_hits"],
        "cache_write_waits": a["cache_write_waits"],
        "destaged_bytes": a["destaged_bytes"],
        "cache_dirty_bytes": a["cache_dirty_bytes"],
        # A data-verified array: host bytes read back and checked, and what went wrong.
        "verified_bytes": a["verified_bytes"],
        "data_errors": a["data_errors"],
        "first_data_error": a.get("first_data_error"),
    }


def _flat_remap(d: dict[str, Any], info: TargetInfo) -> dict[str, Any]:
    """A remapping layer's report as one row: its buffer, log and cleaner, and its drive's
    flash."""
    i = d["internal"]
    r = i["remap"]
    host_w = i["host_bytes_written"]
    drive = d["members"][0]["internal"]
    nand_w = drive["media_bytes_written"]
    unplaced = (drive["nand"] or {}).get("write_buffer_unplaced_bytes", 0)
    return {
        "name": d["name"],
        "profile": info.profile,
        "kind": "remap",
        "members": [m["name"] for m in d["members"]],
        "host_bytes_written": host_w,
        "host_bytes_read": i["host_bytes_read"],
        "member_bytes_written": i["media_bytes_written"],
        "member_bytes_read": i["media_bytes_read"],
        # Drive writes per host write (the cleaner's copies less what the buffer absorbed),
        # and flash writes per host write through the whole stack.
        "remap_write_factor": i["media_bytes_written"] / host_w if host_w else None,
        "nand_bytes_written": nand_w,
        "waf": _waf(nand_w, unplaced, host_w),
        **{k: r[k] for k in ("buffer_bytes", "segment_bytes", "honor_flush", "absorbed_bytes", "buffer_read_bytes",
                             "drive_reads", "host_reads_from_drive", "log_writes", "log_write_bytes",
                             "cleaned_bytes", "cleaned_segments", "write_waits", "flushes_ignored", "flushes_done",
                             "buffered_bytes")},
    }


def _flat_rebuild(rb: dict[str, Any] | None, now_ns: int) -> dict[str, Any]:
    """A rebuild's progress at ``now_ns`` (None when none started): onto which member, how
    much of it is in sync, and the rate since it started (to its end, if it has ended); how
    often a later failure restarted its pass, and which replacements its last pass rebuilt
    alongside it (md recovers every spare in one pass)."""
    keys = ("rebuild_member", "rebuild_replaces", "rebuild_started_s", "rebuild_finished_s",
            "rebuild_done_bytes", "rebuild_target_bytes", "rebuild_progress", "rebuild_rate_bytes",
            "rebuild_busy_waits", "rebuild_overspeed_sleeps", "rebuild_head_wait_sleeps", "rebuild_restarts",
            "rebuild_with")
    if rb is None:
        return dict.fromkeys(keys)
    end = rb["finished_ns"] if rb["finished_ns"] is not None else now_ns
    took = (end - rb["started_ns"]) / 1e9
    return dict(zip(keys, (
        rb["member"], rb["replaces"], rb["started_ns"] / 1e9,
        rb["finished_ns"] / 1e9 if rb["finished_ns"] is not None else None,
        rb["done_bytes"], rb["target_bytes"], rb["done_bytes"] / rb["target_bytes"] if rb["target_bytes"] else None,
        rb["done_bytes"] / took if took > 0 else None, rb["busy_waits"], rb["overspeed_sleeps"],
        rb["head_wait_sleeps"], rb["restarts"], list(rb["rebuilt_with"]))))


# fio 3.33's disk_util has no sectors (later releases add read_sectors/write_sectors)
_AGGR = (("read_ios", "read_ios"), ("write_ios", "write_ios"), ("read_merges", "read_merges"),
         ("write_merge", "write_merges"),
         ("read_ticks", "read_ticks_ms"), ("write_ticks", "write_ticks_ms"), ("in_queue", "time_in_queue_ms"))


def _disk_util(name: str, disk: dict[str, Any], elapsed_ms: float) -> dict[str, Any]:
    """One fio ``disk_util`` entry from a device's diskstats."""
    return {
        "name": name,
        "read_ios": disk["read_ios"], "write_ios": disk["write_ios"],
        "read_merges": disk["read_merges"], "write_merges": disk["write_merges"],
        "read_ticks": disk["read_ticks_ms"], "write_ticks": disk["write_ticks_ms"],
        "in_queue": disk["time_in_queue_ms"],
        "util": min(100.0, 100.0 * disk["io_ticks_ms"] / elapsed_ms),
    }


@dataclass
class RunResult:
    """One simulation: the raw core output plus the run spec it came from (for presenting)."""

    core: dict[str, Any]
    units: list[Unit]
    spec: Any  # api.RunSpec

    # ---- what the run was --------------------------------------------------------------

    @property
    def percentiles_list(self) -> list[float]:
        return list(self.spec.percentiles)

    @property
    def percentile_precision(self) -> int:
        """Decimals of the percentile labels in fio's text report."""
        return getattr(self.spec, "percentile_precision", 2)

    @property
    def host_name(self) -> str:
        return self.spec.host_name

    @property
    def warnings(self) -> list[str]:
        return (list(self.spec.warnings) + self._failures_not_reached() + self._unwritten_reads()
                + self._interval_not_reached())

    def _interval_not_reached(self) -> list[str]:
        """A time series asked for that has no interval: the run ended before the first did."""
        ns = getattr(self.spec, "interval_ns", None)
        if not ns or len(self.core.get("samples") or []) >= 2 or self.elapsed_ns >= ns:
            return []
        from .units import format_time

        return [f"--interval {format_time(ns)}: the run ended at {format_time(self.elapsed_ns)}, before its first interval did: "
                "no time series (give a shorter interval)"]

    def _unwritten_reads(self) -> list[str]:
        """Reads of blocks never written (one line for all the drives that had them): a drive
        answers them with zeros, reading no flash."""
        devices = self.core.get("devices", [])
        counts = [(d["name"], ((d.get("internal") or {}).get("nand") or {}).get("unwritten_read_ius", 0))
                  for d in [*devices, *(m for d in devices for m in d.get("members") or [])]]
        counts = [(name, n) for name, n in counts if n]
        if not counts:
            return []
        return [f"{', '.join(name for name, _ in counts)}: {sum(n for _, n in counts):,} of the mapping units read "
                "were never written: the drive returns zeros for them without reading flash, so its dies idle; "
                "precondition it (--precondition sequential, or random:N) to measure reads of data"]

    def _failures_not_reached(self) -> list[str]:
        """A member failure the run ended before: asked for, and did not happen."""
        out = []
        for t in self.spec.core.get("targets", []):
            dev = t["device"]
            if dev.get("kind") != "array" or not dev.get("failures"):
                continue
            failed = set(self.internal(t["name"]).get("failed") or [])
            for f in dev["failures"]:
                if f["member"] not in failed:
                    out.append(f"array {t['name']}: {f['member']} was to fail at {f['at_ns'] / 1e9:g} s, but the run "
                               f"ended at {self.elapsed_ns / 1e9:g} s: it did not fail")
        return out

    @property
    def sources(self) -> dict[str, str]:
        return dict(self.spec.sources)

    @property
    def global_options(self) -> dict[str, str]:
        return dict(self.spec.global_options)

    @property
    def targets(self) -> list[TargetInfo]:
        return list(self.spec.targets)

    @property
    def profile_name(self) -> str:
        """The first device's profile (the only one in a one-drive run)."""
        return self.spec.targets[0].profile

    @property
    def scale(self) -> float:
        return self.spec.targets[0].scale

    @property
    def endurance(self) -> dict[str, Any]:
        return self.spec.targets[0].endurance

    @property
    def device_core(self) -> dict[str, Any]:
        """The first device's description as the core ran it."""
        return self.spec.core["targets"][0]["device"]

    # ---- device-level views ------------------------------------------------------------

    @property
    def elapsed_ns(self) -> int:
        """Simulated time from the start of the run to the last job's end."""
        return int(self.core["end_ns"])

    @property
    def devices(self) -> list[dict[str, Any]]:
        return self.core["devices"]

    @property
    def device_names(self) -> list[str]:
        """The host's targets (drives and arrays)."""
        return [d["name"] for d in self.core["devices"]]

    def _walk(self):
        """(path, device, info, array) for every device: each target, then its members.
        ``path`` indexes the samples: (target,) or (target, member)."""
        for i, (d, info) in enumerate(zip(self.core["devices"], self.spec.targets)):
            yield (i,), d, info, None
            for j, (m, minfo) in enumerate(zip(d["members"], info.members)):
                yield (i, j), m, minfo, d["name"]

    @property
    def all_device_names(self) -> list[str]:
        """Every device: the targets and, after each array, its members."""
        return [d["name"] for _, d, _, _ in self._walk()]

    def _device(self, name: str | None) -> tuple[tuple[int, ...], dict[str, Any], TargetInfo]:
        if name is None:
            return (0,), self.core["devices"][0], self.spec.targets[0]
        for path, d, info, _ in self._walk():
            if d["name"] == name:
                return path, d, info
        raise KeyError(f"no device '{name}' (devices: {', '.join(self.all_device_names)})")

    @staticmethod
    def _sampled(sample: dict[str, Any], path: tuple[int, ...]) -> dict[str, Any]:
        d = sample["devices"][path[0]]
        return d["members"][path[1]] if len(path) > 1 else d

    @property
    def device(self) -> dict[str, Any]:
        """The first device's results (the only one in a one-drive run)."""
        return self.core["devices"][0]

    def iostat(self, name: str | None = None) -> dict[str, float]:
        """iostat -x of one device (default: the first; an array's members too) over the
        whole run, as one interval."""
        _, d, _ = self._device(name)
        return iostat_fields(None, d["disk"], max(self.elapsed_ns / 1e6, 1e-9))

    def internal(self, name: str | None = None) -> dict[str, Any]:
        """What iostat cannot see of one device (default: the first): die/channel/controller
        utilisation, WAF, erases, SLC state, temperature; for an array, its stripe handling."""
        _, d, info = self._device(name)
        return _flat_internal(d, self.elapsed_ns, info)

    def timeseries(self, name: str | None = None) -> list[dict[str, float]]:
        """Per-interval rates of the whole host, with one device's counters (default: the
        first), from the samples (only with an interval)."""
        path, _, _ = self._device(name)
        rows = []
        samples = self.core["samples"]
        for prev, cur in zip(samples, samples[1:]):
            dt = (cur["t_ns"] - prev["t_ns"]) / 1e9
            if dt <= 0:
                continue
            row = {
                "t_s": cur["t_ns"] / 1e9,
                "read_bw_bytes": (cur["read_bytes"] - prev["read_bytes"]) / dt,
                "write_bw_bytes": (cur["write_bytes"] - prev["write_bytes"]) / dt,
                "read_iops": (cur["read_ios"] - prev["read_ios"]) / dt,
                "write_iops": (cur["write_ios"] - prev["write_ios"]) / dt,
            }
            pd_, cd = self._sampled(prev, path), self._sampled(cur, path)
            pi, ci = pd_["internal"], cd["internal"]
            if ci["dies"]:
                row["internal_utilization"] = (ci["die_busy_ns"] - pi["die_busy_ns"]) / (ci["dies"] * dt * 1e9)
            # Per channel: the share of the interval its bus was busy (the core keeps die busy
            # time summed over dies only, so dies appear as internal_utilization above).
            for k, (a, b) in enumerate(zip(pi["channel_busy_ns"], ci["channel_busy_ns"])):
                row[f"channel_utilization_{k}"] = (b - a) / (dt * 1e9)
            nand = ci["nand"]
            if nand is not None and nand["slc_budget_bytes"]:  # the SLC cache's state at the end of the interval
                row["slc_used_bytes"] = nand["slc_used_bytes"]
                row["slc_budget_bytes"] = nand["slc_budget_bytes"]
            hw = ci["host_bytes_written"] - pi["host_bytes_written"]
            unplaced = [(x["nand"] or {}).get("write_buffer_unplaced_bytes", 0) for x in (pi, ci)]
            row["waf"] = _waf(ci["media_bytes_written"] - pi["media_bytes_written"], unplaced[1] - unplaced[0], hw)
            if row["waf"] is None:
                row["waf"] = float("nan")
            rb0, rb1 = (pi.get("array") or {}).get("rebuild"), (ci.get("array") or {}).get("rebuild")
            if rb1:  # an array's rebuild: in sync at the end of the interval, and its rate in it
                row["rebuild_done_bytes"] = rb1["done_bytes"]
                same = rb0 is not None and rb0["member"] == rb1["member"]  # not a later rebuild
                row["rebuild_rate_bytes"] = (rb1["done_bytes"] - (rb0["done_bytes"] if same else 0)) / dt
            if ci["thermal"] is not None:
                pt, ct = pi["thermal"], ci["thermal"]
                row["temperature_c"] = ct["temperature_c"]
                row["throttled_fraction"] = (ct["throttled_ns"] - pt["throttled_ns"]) / (dt * 1e9)
            row.update(iostat_fields(pd_["disk"], cd["disk"], dt * 1e3))
            rows.append(row)
        return rows

    # ---- fio-compatible JSON -----------------------------------------------------------

    def to_fio_json(self, plus: bool = False) -> dict[str, Any]:
        """fio's JSON output (``plus``: json+, with each latency histogram's bins), keys in
        fio's order, and ssdlab's own section (see :mod:`ssdlab.fioout.json`)."""
        from .fioout.json import fio_json

        return fio_json(self, plus=plus)

    def write_fio_logs(self, directory: str = ".") -> list:
        """The log files the jobs ask for (``write_bw_log``, ``write_iops_log``,
        ``write_lat_log``), as fio names and writes them (see :mod:`ssdlab.fioout.logs`)."""
        from .fioout.logs import write_logs

        return write_logs(self, directory)

    def disk_util(self) -> list[dict[str, Any]]:
        """fio's ``disk_util``: each device's diskstats over the run (an array with its
        members' averages and the busiest member's util, as fio reports md and its slaves),
        then its members. Only the devices some job used: fio lists the disks its jobs opened
        (a null-engine job opens none)."""
        elapsed_ms = max(self.elapsed_ns / 1e6, 1e-9)
        used = {j["target"] for j in self.spec.core["jobs"] if not j.get("null_engine")}
        disk_util = []
        for i, d in enumerate(self.devices):
            if i not in used:
                continue
            entry = _disk_util(d["name"], d["disk"], elapsed_ms)
            members = [_disk_util(m["name"], m["disk"], elapsed_ms) for m in d["members"]]
            if members:
                n = len(members)
                for key, src in _AGGR:
                    entry[f"aggr_{key}"] = sum(m["disk"][src] for m in d["members"]) // n
                entry["aggr_util"] = max(m["util"] for m in members)
            disk_util.append(entry)
            disk_util.extend(members)
        return disk_util

    def iostat_intervals(self) -> list[tuple[float, float, list[tuple[str, dict[str, float]]]]]:
        """``iostat -x INTERVAL``: per interval of the time series (``interval`` given),
        (start s, end s, [(device, iostat fields)]) for every device."""
        samples = self.core["samples"]
        out = []
        for prev, cur in zip(samples, samples[1:]):
            dt_ms = (cur["t_ns"] - prev["t_ns"]) / 1e6
            if dt_ms <= 0:
                continue
            rows = [(d["name"], iostat_fields(self._sampled(prev, path)["disk"], self._sampled(cur, path)["disk"], dt_ms))
                    for path, d, _, _ in self._walk()]
            out.append((prev["t_ns"] / 1e9, cur["t_ns"] / 1e9, rows))
        return out

    # ---- pandas ------------------------------------------------------------------------

    def to_pandas(self):
        """One row per reporting unit and direction that did I/O."""
        import pandas as pd

        rows = []
        for u in self.units:
            for d in _DIRS + ("sync",):
                r = u.sync if d == "sync" else u.dirs[d]
                if r.ios == 0:
                    continue
                pct = r.percentiles([50.0, 99.0, 99.9])
                rows.append({
                    "job": u.name, "group": u.group_id, "clones": len(u.members), "direction": d,
                    "ios": r.ios, "bytes": r.bytes,
                    "iops": r.ios / (u.runtime_ns / 1e9) if u.runtime_ns else 0.0,
                    "bw_bytes": r.bytes / (u.runtime_ns / 1e9) if u.runtime_ns else 0.0,
                    "runtime_s": u.runtime_ns / 1e9,
                    "clat_mean_us": r.clat.mean / 1e3, "clat_stddev_us": r.clat.stddev / 1e3,
                    "clat_p50_us": pct["50.000000"] / 1e3, "clat_p99_us": pct["99.000000"] / 1e3,
                    "clat_p99.9_us": pct["99.900000"] / 1e3,
                    "lat_mean_us": r.lat.mean / 1e3, "slat_mean_us": r.slat.mean / 1e3,
                })
        return pd.DataFrame(rows)

    def iostat_table(self):
        """iostat -x over the run, one row per device (an array's members included)."""
        import pandas as pd

        return pd.DataFrame([{"device": n, **self.iostat(n)} for n in self.all_device_names]).set_index("device")

    def timeseries_table(self, name: str | None = None):
        import pandas as pd

        return pd.DataFrame(self.timeseries(name))

    # ---- convenience -------------------------------------------------------------------

    def total_iops(self, direction: str = "all") -> float:
        """IOPS summed over reporting units (all directions by default)."""
        dirs = _DIRS if direction == "all" else (direction,)
        return sum(u.iops(d) for u in self.units for d in dirs)
