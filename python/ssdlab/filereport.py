"""A file workload's report: what each thread's operations did (filebench's summary for a
filebench workload), what the page cache and the journal did, the CPUs as sar and uptime
show them, the file systems' free space as e2freefrag bins it and their files' extents as
filefrag counts them, and (with samples) each interval's cache hit ratio and programs."""

from __future__ import annotations

from typing import Any

from . import fileseries
from .filework import FileWork

MIB = 1 << 20


def _free_space(hist: list[tuple[int, int, int]]) -> list[str]:
    """e2freefrag's histogram: extents and free blocks per power-of-two size range."""
    if not hist:
        return []
    total = sum(b for _, _, b in hist) or 1
    lines = ["  free extents (e2freefrag's bins)", f"  {'range':>17} {'extents':>10} {'free blocks':>12} {'share':>7}"]
    for i, (start, extents, blocks) in enumerate(hist):
        if not extents:
            continue
        lines.append(f"  {_size(start):>7} - {_size(2 * start):>7} {extents:10,} {blocks:12,} "
                     f"{100 * blocks / total:6.2f}%")
    return lines


def _extents_per_file(hist: list[tuple[int, int]]) -> list[str]:
    """Files by extents, as filefrag counts them (a physically contiguous run is one extent):
    one row per count up to 8, then per power-of-two range."""
    files = sum(n for _, n in hist)
    if not files:
        return []
    rows: dict[tuple[int, int], int] = {}
    for extents, n in hist:
        top = 1 << (extents - 1).bit_length()  # 9-16, 17-32, ...
        key = (extents, extents) if extents <= 8 else (top // 2 + 1, top)
        rows[key] = rows.get(key, 0) + n
    mean = sum(e * n for e, n in hist) / files
    lines = [f"  extents per file (as filefrag counts them): {files:,} files, mean {mean:.2f}",
             f"  {'extents':>9} {'files':>10} {'share':>7}"]
    for (lo, hi), n in sorted(rows.items()):
        label = str(lo) if lo == hi else f"{lo}-{hi}"
        lines.append(f"  {label:>9} {n:10,} {100 * n / files:6.2f}%")
    return lines


def _size(n: float) -> str:
    for unit in ("", "K", "M", "G", "T"):
        if n < 1024 or unit == "T":
            return f"{n:.0f}{unit}" if n == int(n) else f"{n:.1f}{unit}"
        n /= 1024
    return str(n)


def _groups(ops: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int, int]]:
    """A program's operations as (operation, first index, count): an operation repeated in a
    row (a scenario's ``repeat``) is one group."""
    out: list[tuple[dict[str, Any], int, int]] = []
    for k, op in enumerate(ops):
        if out and out[-1][0] == op:
            out[-1] = (op, out[-1][1], out[-1][2] + 1)
        else:
            out.append((op, k, 1))
    return out


def _sum(jobs: list[dict[str, Any]], first: int, count: int) -> dict[str, int]:
    stats = [j["file_ops"][k] for j in jobs for k in range(first, first + count) if k < len(j.get("file_ops", []))]
    return {"ops": sum(s["ops"] for s in stats), "errors": sum(s["errors"] for s in stats),
            "bytes": sum(s["bytes"] for s in stats), "latency_ns": sum(s["latency_ns"] for s in stats),
            "max_latency_ns": max((s["max_latency_ns"] for s in stats), default=0)}


def _per_core_lines(cores: list[dict]) -> list[str]:
    """Each core's busy / iowait / idle %, as sar -P ALL averages them, four cores a line."""
    if len(cores) < 2:
        return []
    cells = [f"{n}: {100 * c['busy']:.1f} / {100 * c['iowait']:.1f} / {100 * c['idle']:.1f}"
             for n, c in enumerate(cores)]
    lines = ["  per core (busy / iowait / idle %, as sar -P ALL)"]
    lines += ["    " + "; ".join(cells[i:i + 4]) for i in range(0, len(cells), 4)]
    return lines


def _cpu_ranges(samples: list[dict[str, Any]]) -> str | None:
    cpus = [s["cpu"] for s in samples if s.get("cpu") and s["cpu"]["end_ns"] > s["cpu"]["start_ns"]]
    if len(cpus) < 2:
        return None

    def rng(xs: list[float], fmt: str) -> str:
        return f"{format(min(xs), fmt)}-{format(max(xs), fmt)}"

    return (f"  per interval: busy {rng([100 * c['busy'] for c in cpus], '.1f')} %, "
            f"iowait {rng([100 * c['iowait'] for c in cpus], '.1f')} %, "
            f"load (1 min) {rng([c['load'][0] for c in cpus], '.2f')}")


def _stopped_early(workload: Any, jobs: list[dict[str, Any]]) -> list[str]:
    """filebench's warning when a flowop could not obtain a file and so stopped a timed run
    (flowop.c), naming the first such flowop."""
    first = 0
    for t in workload.threads:
        for j in jobs[first:first + t.instances]:
            op = j.get("no_file_op")
            if op is not None:
                name = t.flowops[t.op_flowop[op][0]].name
                return [f"WARNING! Run stopped early: flowop {name} could not obtain a file. Please reduce "
                        "runtime, increase fileset entries ($nfiles), or switch modes."]
        first += t.instances
    return []


def text(work: FileWork, core: dict[str, Any], host: str, targets: list[str],
         filesystems: list[str] | None = None) -> str:
    """The report as text; ``filesystems``: each target's file system and where it came from."""
    run_s = (core["end_ns"] - core["start_ns"]) / 1e9
    f = core["files"]
    out = [f"{work.name}: {sum(t.instances for t in work.threads)} threads on {', '.join(targets)}, "
           f"host {host}, seed {core['seed']}",
           *(f"file system on {f}" for f in filesystems or []), f"run time: {run_s:.3f} s (simulated)", ""]
    if work.kind == "filebench":
        from .filebench.summary import summary

        per = [j.get("file_ops", []) for j in core["jobs"]]
        if work.source.quit == "timeout":
            out += _stopped_early(work.source, core["jobs"])
        out.append(summary(work.source, per, max(run_s, 1e-9)).rstrip("\n"))
    else:
        out.append(f"  {'thread':16} {'operation':12} {'ops':>10} {'errors':>8} {'ops/s':>10} {'MiB/s':>8} "
                   f"{'mean ms':>9} {'max ms':>9}")
        first = 0
        for t in work.threads:
            jobs = core["jobs"][first:first + t.instances]
            first += t.instances
            ops = t.files["program"]["ops"] if t.files.get("program") else []
            for g, (op, k, count) in enumerate(_groups(ops)):
                st = _sum(jobs, k, count)
                n = st["ops"]
                name = f"{t.name}" + (f" x{t.instances}" if t.instances > 1 else "")
                label = op["op"] + (f" x{count}" if count > 1 else "")
                out.append(f"  {name if g == 0 else '':16} {label:12} {n:10,} {st['errors']:8,} "
                           f"{n / run_s if run_s else 0:10.1f} {st['bytes'] / MIB / run_s if run_s else 0:8.2f} "
                           f"{st['latency_ns'] / n / 1e6 if n else 0:9.3f} {st['max_latency_ns'] / 1e6:9.3f}")
    out += ["", "page cache and journal",
            f"  file operations {f['ops']:,} ({f['failed_ops']:,} failed); cache hits {f['cache_hits']:,}, "
            f"misses {f['cache_misses']:,}, read-ahead {f['readahead_pages']:,} pages, metadata read "
            f"{f['metadata_read_pages']:,} pages",
            f"  pages dirtied {f['dirtied_pages']:,}: written back {f['written_back_pages']:,}, deleted before "
            f"writeback {f['dropped_dirty_pages']:,}, dirty at the end {f['dirty_pages_at_end']:,}",
            f"  writers throttled {f['throttled_ns'] / 1e9:.3f} s in all; pages evicted {f['evicted_pages']:,}",
            f"  commits {f['commits']:,}, journal blocks {f['journal_blocks']:,}, checkpointed "
            f"{f['checkpoint_blocks']:,}; bios: data {f['data_bios']:,}, metadata {f['metadata_bios']:,}"]
    if f.get("mkfs_bytes"):
        out.append(f"  mkfs wrote {f['mkfs_bytes'] / 2**20:,.1f} MiB")
    if f.get("nonda_writes"):
        out.append(f"  writes that allocated at once, free space short for delayed allocation: "
                   f"{f['nonda_writes']:,}")
    c = f["cpu"]
    out += ["", "CPUs (as sar -u and uptime)",
            f"  busy {100 * c['busy']:.1f} %, iowait {100 * c['iowait']:.1f} %, idle {100 * c['idle']:.1f} %; "
            f"load average at the end {c['load'][0]:.2f}, {c['load'][1]:.2f}, {c['load'][2]:.2f}"]
    out += _per_core_lines(f.get("cpu_cores", []))
    ranges = _cpu_ranges(core.get("samples", []))
    if ranges:
        out.append(ranges)
    series = fileseries.text_lines(work, core)
    if series:
        out += ["", *series]
    per_file = f.get("extents_per_file", [])
    for i, hist in enumerate(f.get("free_extents", [])):
        lines = _free_space(hist) + (_extents_per_file(per_file[i]) if i < len(per_file) else [])
        if lines:
            out += ["", f"file system {i}"] + lines
    if core.get("network"):
        from .serverreport import text_lines

        out += ["", *text_lines(core)]
    if "power_cut" in core:
        from .powercut import power_cut_lines

        out += ["", *power_cut_lines(core["power_cut"])]
    return "\n".join(out) + "\n"


def as_json(work: FileWork, core: dict[str, Any], host: str, targets: list[str],
            filesystems: list[str] | None = None) -> dict[str, Any]:
    """The report as data: the core's file report and each thread's operations by name."""
    threads = []
    first = 0
    for t in work.threads:
        jobs = core["jobs"][first:first + t.instances]
        first += t.instances
        ops = t.files["program"]["ops"] if t.files.get("program") else []
        threads.append({"name": t.name, "instances": t.instances,
                        "ops": [{**op, "repeat": count, **_sum(jobs, k, count)} for op, k, count in _groups(ops)]})
    return {"name": work.name, "host": host, "targets": targets, **({"filesystems": filesystems} if filesystems else {}),
            "seed": core["seed"],
            "run_s": (core["end_ns"] - core["start_ns"]) / 1e9, "files": core["files"], "threads": threads,
            "samples": [s["cpu"] for s in core.get("samples", []) if s.get("cpu")],
            "intervals": fileseries.as_json(work, core),
            **({"power_cut": core["power_cut"]} if "power_cut" in core else {}),
            **({"network": core["network"], "server": _server_json(core)} if core.get("network") else {})}


def _server_json(core: dict[str, Any]) -> dict[str, Any] | None:
    from .serverreport import as_json

    return as_json(core)
