"""filebench's summary at the end of a run, from the core's per-operation statistics.

The layout is filebench 1.5-alpha3's (``stats_snap()`` in its stats.c; the run's end as in
filebench's issue #96)::

    60.000: Run took 60 seconds...
    60.000: Per-Operation Breakdown
    statfile1            69711ops     1162ops/s   0.0mb/s      0.3ms/op [0.00ms - 128.46ms]
    ...
    60.000: IO Summary: 1013025 ops 16883.025 ops/s 1536/3070 rd/wr 402.2mb/s   3.5ms/op

One line per flowop *definition*, in the reverse of their order in the file (filebench puts
each new flowop at the head of its list), each adding up every instance of its thread; a
flowop the core did not run (ignored, say ``semblock``) shows 0 ops. ``mb/s`` is MiB/s.
The IO Summary counts the flowops filebench classes as I/O (file operations, reads and
writes) and asynchronous I/O; its ``rd/wr`` are reads and writes per second, and its
``ms/op`` is, as 1.5-alpha3 computes it, the time of all I/O flowops divided by the number of
reads and writes alone. ``[min - max]``: the core reports ``max_latency_ns``; the minimum is
``min_latency_ns`` where the core gives it, else 0.00 (what filebench also prints when an
instance of the thread never ran the flowop).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .build import Workload

MB = 1024.0 * 1024.0
NS_PER_MS = 1_000_000.0

_KEYS = ("ops", "bytes", "errors", "latency_ns", "max_latency_ns")


@dataclass
class FlowopStats:
    name: str
    stat_class: str
    rw: str | None
    ops: int = 0
    bytes: int = 0
    errors: int = 0
    latency_ns: int = 0
    max_latency_ns: int = 0
    min_latency_ns: int | None = None


def _per_thread(workload: Workload, per_thread) -> list[list[list[Mapping]]]:
    """Each thread definition's list of per-instance summaries (each a list aligned with its
    program's ops). Accepts one entry per thread definition (a list of op summaries, or a
    list of such lists, one per instance) or one entry per instance, threads in order."""
    threads = workload.threads
    per_thread = list(per_thread)

    def is_ops(x) -> bool:
        return isinstance(x, Sequence) and all(isinstance(o, Mapping) for o in x)

    if len(per_thread) == len(threads):
        out = []
        for t, entry in zip(threads, per_thread):
            if is_ops(entry) and entry:
                out.append([list(entry)])
            elif isinstance(entry, Sequence) and all(is_ops(x) for x in entry):
                out.append([list(x) for x in entry])
            else:
                raise ValueError(f"summary of thread {t.full_name}: expected a list of per-op summaries")
        return out
    total = sum(t.instances for t in threads)
    if len(per_thread) == total and all(is_ops(x) for x in per_thread):
        out, k = [], 0
        for t in threads:
            out.append([list(x) for x in per_thread[k:k + t.instances]])
            k += t.instances
        return out
    raise ValueError(f"expected {len(threads)} thread summaries (or {total}, one per instance), "
                     f"got {len(per_thread)}")


def flowop_stats(workload: Workload, per_thread_summaries) -> list[FlowopStats]:
    """Per flowop definition, in the file's order: its operations, bytes and latency added up
    over its thread's instances. Flowops of one name count together in the last one defined
    (filebench rolls each instance up into the first master of that name on its list, which
    is the last defined); the others show 0."""
    instances_of = _per_thread(workload, per_thread_summaries)
    out: list[FlowopStats] = []
    for t in workload.threads:
        out.extend(FlowopStats(f.name, f.stat_class, f.rw) for f in t.flowops)
    last = {fs.name: fs for fs in out}
    for t, instances in zip(workload.threads, instances_of):
        for inst in instances:
            if len(inst) != len(t.ops):
                raise ValueError(f"summary of thread {t.full_name}: {len(inst)} op summaries for its "
                                 f"{len(t.ops)} ops")
            acc = [[0, 0, 0, 0, 0, None] for _ in t.flowops]  # ops, bytes, errors, lat, max, min
            for s, (fi, counts) in zip(inst, t.op_flowop):
                vals = {}
                for k in _KEYS:
                    v = s.get(k, 0)
                    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                        raise ValueError(f"summary of thread {t.full_name}: {k} must be a whole number >= 0")
                    vals[k] = v
                a = acc[fi]
                if counts:
                    a[0] += vals["ops"]
                    a[2] += vals["errors"]
                    a[4] = max(a[4], vals["max_latency_ns"])
                    if vals["ops"]:
                        mn = s.get("min_latency_ns") or 0
                        a[5] = mn if a[5] is None else min(a[5], mn)
                a[1] += vals["bytes"]
                a[3] += vals["latency_ns"]
            for f, a in zip(t.flowops, acc):
                fs = last[f.name]
                fs.ops += a[0]
                fs.bytes += a[1]
                fs.errors += a[2]
                fs.latency_ns += a[3]
                fs.max_latency_ns = max(fs.max_latency_ns, a[4])
                inst_min = a[5] if a[0] else 0  # an instance that never ran it: filebench's 0
                fs.min_latency_ns = inst_min if fs.min_latency_ns is None else min(fs.min_latency_ns, inst_min)
    return out


def summary(workload: Workload, per_thread_summaries, elapsed_s: float, clock_s: float | None = None) -> str:
    """What filebench prints when its run ends (see the module's text); ``elapsed_s`` is the
    run's length, ``clock_s`` the time stamps (filebench's count from its start; default
    ``elapsed_s``)."""
    if not elapsed_s or elapsed_s <= 0:
        raise ValueError(f"elapsed_s must be positive, got {elapsed_s!r}")
    t = float(elapsed_s)
    stamp = f"{(clock_s if clock_s is not None else t):.3f}: "
    stats = flowop_stats(workload, per_thread_summaries)
    lines = [f"{stamp}Run took {int(t)} seconds...", f"{stamp}Per-Operation Breakdown"]
    for fs in reversed(stats):
        ms = fs.latency_ns / (fs.ops * NS_PER_MS) if fs.ops else 0.0
        mn = (fs.min_latency_ns or 0) / NS_PER_MS
        lines.append(f"{fs.name:<20} {fs.ops}ops {fs.ops / t:8.0f}ops/s {fs.bytes / MB / t:5.1f}mb/s "
                     f"{ms:8.1f}ms/op [{mn:.2f}ms - {fs.max_latency_ns / NS_PER_MS:5.2f}ms]")
    io = [s for s in stats if s.stat_class in ("io", "aio")]
    ops = sum(s.ops for s in io)
    reads = sum(s.ops for s in io if s.rw == "read")
    writes = sum(s.ops for s in io if s.rw == "write")
    nbytes = sum(s.bytes for s in io)
    io_only = [s for s in stats if s.stat_class == "io"]
    rw_io = sum(s.ops for s in io_only if s.rw is not None)
    ms_op = sum(s.latency_ns for s in io_only) / (rw_io * NS_PER_MS) if rw_io else 0.0
    lines.append(f"{stamp}IO Summary: {ops:5d} ops {ops / t:5.3f} ops/s {reads / t:.0f}/{writes / t:.0f} rd/wr "
                 f"{nbytes / MB / t:5.1f}mb/s {ms_op:5.1f}ms/op")
    return "\n".join(lines) + "\n"
