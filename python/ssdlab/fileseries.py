"""A file workload's time series: what each interval between a run's samples saw — the page
cache's hit ratio, each thread's programs (how many ran, and how long one took) and, for a
server, what its network sent (in all and to each class of clients) — from the running totals
the core keeps at every sample (``sample["files"]``, ``sample["network"]``).

A program's time is the latency of its operations summed, its ``delay`` operations (a client's
think time) left out: a query that opens and reads three posting lists takes the three opens,
reads and closes. An interval counts the programs whose last operation ended in it, and the
operations that ended in it: a program that straddles two intervals puts its early operations
in the first, which evens out over a few programs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .filework import FileWork


@dataclass(frozen=True)
class ThreadInterval:
    #: programs completed in the interval (its last operation's count)
    programs: int
    #: the latency of its operations that ended in the interval, delays left out, ns
    busy_ns: int


@dataclass(frozen=True)
class Interval:
    start_s: float
    end_s: float
    #: pages found in the page cache over pages looked up; None when nothing was looked up
    hit_ratio: float | None
    #: per thread (by its name in the workload)
    threads: dict[str, ThreadInterval]
    #: what the server's network sent in the interval, bytes a second: in all, and per class
    #: of clients the mean of one client (by class name); None and empty without a network
    served_bytes_per_s: float | None = None
    client_bytes_per_s: dict[str, float] = field(default_factory=dict)

    def program_ms(self, names: list[str] | None = None) -> float | None:
        """The mean time of one program of the named threads (all when None), ms; None when
        none completed in the interval."""
        picked = [t for n, t in self.threads.items() if names is None or n in names]
        runs = sum(t.programs for t in picked)
        return sum(t.busy_ns for t in picked) / runs / 1e6 if runs else None

    def programs_per_s(self, names: list[str] | None = None) -> float:
        runs = sum(t.programs for n, t in self.threads.items() if names is None or n in names)
        return runs / (self.end_s - self.start_s) if self.end_s > self.start_s else 0.0


def intervals(work: FileWork, core: dict[str, Any]) -> list[Interval]:
    """The intervals between the run's consecutive samples (none without file counters)."""
    samples = [s for s in core.get("samples", []) if s.get("files")]
    # The core sums each job name's clones, names in the order they first appear.
    names: list[str] = []
    for j in core["jobs"]:
        if j["name"] not in names and any(t.name == j["name"] and t.files.get("program") for t in work.threads):
            names.append(j["name"])
    delay = {t.name: [op.get("op") == "delay" for op in t.files["program"]["ops"]]
             for t in work.threads if t.files.get("program")}
    out = []
    for prev, cur in zip(samples, samples[1:]):
        a, b = prev["files"], cur["files"]
        hits, misses = b["cache_hits"] - a["cache_hits"], b["cache_misses"] - a["cache_misses"]
        threads = {}
        for k, name in enumerate(names):
            now = b["ops"][k] if k < len(b["ops"]) else []
            before = a["ops"][k] if k < len(a["ops"]) else [[0, 0]] * len(now)
            if not now:
                continue
            skip = delay.get(name, [])
            busy = sum(now[i][1] - before[i][1] for i in range(len(now)) if not (i < len(skip) and skip[i]))
            threads[name] = ThreadInterval(programs=now[-1][0] - before[-1][0], busy_ns=busy)
        served, clients = sent_between(prev, cur, core.get("network"))
        out.append(Interval((prev["t_ns"] - core["start_ns"]) / 1e9, (cur["t_ns"] - core["start_ns"]) / 1e9,
                            hits / (hits + misses) if hits + misses else None, threads, served, clients))
    return out


def sent_between(a: dict[str, Any], b: dict[str, Any], report: dict | None) -> tuple[float | None, dict[str, float]]:
    """What the network sent between samples ``a`` and ``b`` (a run's ``samples``), bytes a
    second: in all, and per client of each class of ``report`` (the run's ``network``);
    None and empty when they carry no network."""
    na, nb = a.get("network"), b.get("network")
    span_s = (b["t_ns"] - a["t_ns"]) / 1e9
    if not (na and nb and report) or span_s <= 0:
        return None, {}
    served = (sum(nb["nic_bytes"]) - sum(na["nic_bytes"])) / span_s
    clients = {c["name"]: (y - x) / span_s / c["count"]
               for c, x, y in zip(report["classes"], na["class_bytes"], nb["class_bytes"])}
    return served, clients


def text_lines(work: FileWork, core: dict[str, Any]) -> list[str]:
    """A table of the intervals: the cache's hit ratio, and per thread programs a second and
    the mean time of one (``-`` where none completed)."""
    rows = intervals(work, core)
    if len(rows) < 2:
        return []
    names = list(rows[0].threads) or [t.name for t in work.threads]
    served = rows[0].served_bytes_per_s is not None
    head = (f"  {'from s':>8} {'to s':>8} {'hits %':>7}" + (f" {'sent Mb/s':>10}" if served else "")
            + "".join(f" {n[:14] + ' /s':>17} {'ms':>8}" for n in names))
    out = ["per interval (programs completed a second, and the mean time of one, delays left out"
           + ("; what the network sent" if served else "") + ")", head]
    for r in rows:
        cells = ""
        for n in names:
            ms = r.program_ms([n])
            cells += f" {r.programs_per_s([n]):17.1f} {ms:8.2f}" if ms is not None else f" {r.programs_per_s([n]):17.1f} {'-':>8}"
        hit = f"{100 * r.hit_ratio:7.1f}" if r.hit_ratio is not None else f"{'-':>7}"
        sent = f" {8 * (r.served_bytes_per_s or 0.0) / 1e6:10.1f}" if served else ""
        out.append(f"  {r.start_s:8.1f} {r.end_s:8.1f} {hit}{sent}{cells}")
    return out


def as_json(work: FileWork, core: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in intervals(work, core):
        row: dict[str, Any] = {"start_s": r.start_s, "end_s": r.end_s, "cache_hit_ratio": r.hit_ratio,
                               "threads": {n: {"programs": t.programs, "programs_per_s": r.programs_per_s([n]),
                                               "mean_program_ms": r.program_ms([n])} for n, t in r.threads.items()}}
        if r.served_bytes_per_s is not None:
            row["sent_bytes_per_s"] = r.served_bytes_per_s
            row["client_bytes_per_s"] = r.client_bytes_per_s
        out.append(row)
    return out
