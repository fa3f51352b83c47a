"""fio's "normal" text output, followed by an iostat -x table and what iostat cannot see."""

from __future__ import annotations

from .iostat import format_table
from .results import RunResult, Unit
from .units import format_bytes


def _si(x: float) -> str:
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.1f}{unit}"
    return f"{x:.0f}"


def _lat_unit(s) -> tuple[str, int]:
    """fio's unit for a min/max/avg/stdev line: usec only when the minimum is above 2 us, the
    maximum above 99.999 us and the deviation above 1 us; msec likewise a thousand times up."""
    if s.min > 2_000_000 and s.max > 99_999_999 and s.stddev > 1e6:
        return "msec", 1_000_000
    if s.min > 2_000 and s.max > 99_999 and s.stddev > 1e3:
        return "usec", 1_000
    return "nsec", 1


def _lat_line(label: str, s, indent: str = "    ") -> str:
    unit, div = _lat_unit(s)
    return (f"{indent}{label} ({unit}): min={int(s.min) // div}, max={int(s.max) // div}, "
            f"avg={s.mean / div:.2f}, stdev={s.stddev / div:.2f}")


def _percentile_block(u: Unit, d: str, plist: list[float], precision: int = 2) -> list[str]:
    """fio's percentile rows. The unit follows the smallest and the largest value shown (usec
    once the smallest is above 2 us and the largest above 99.999 us, msec a thousand times
    up), so a fast median never prints as 0; scaled values are rounded up, as fio does. Labels
    have as many decimals as the longest fraction written in ``percentile_list``."""
    pct = [(float(k), v) for k, v in u.dirs[d].percentiles(plist).items()]
    if not pct:
        return []
    low, high = min(v for _, v in pct), max(v for _, v in pct)
    if low > 2_000_000 and high > 99_999_999:
        unit, steps = "msec", 2
    elif low > 2_000 and high > 99_999:
        unit, steps = "usec", 1
    else:
        unit, steps = "nsec", 0
    width = max(5, len(str(int(high) // 1000**steps)))
    per_line = (80 - 7) // (precision + 10 + width)
    cells = []
    for p, v in pct:
        v = int(v)
        for _ in range(steps):
            v = -(-v // 1000)
        cells.append(f" {p:{precision + 3}.{precision}f}th=[{v:{width}d}]")
    lines = [f"    clat percentiles ({unit}):"]
    for i in range(0, len(cells), per_line):
        lines.append("     |" + ",".join(cells[i:i + per_line]) + ("," if i + per_line < len(cells) else ""))
    return lines


def format_normal(r: RunResult) -> str:
    out: list[str] = []
    for u in r.units:
        out.append(f"{u.name}: (groupid={u.group_id}, jobs={len(u.members)}): err= 0: pid=0")
        for d in ("read", "write", "trim"):
            res = u.dirs[d]
            if res.ios == 0:
                continue
            bw = u.bw_bytes(d)
            out.append(
                f"  {d}: IOPS={_si(u.iops(d))}, BW={format_bytes(bw)}/s ({format_bytes(bw, False)}/s)"
                f"({format_bytes(res.bytes)}/{u.runtime_ns / 1e6:.0f}msec)")
            out.append(_lat_line("slat", res.slat))
            out.append(_lat_line("clat", res.clat))
            out.append(_lat_line(" lat", res.lat, "    "))
            out.extend(_percentile_block(u, d, r.percentiles_list, r.percentile_precision))
        if u.sync.ios:
            out.append(f"  fsync/fdatasync/sync_file_range: {u.sync.ios} syncs")
            out.append(_lat_line("sync", u.sync.lat))
        depth_total = sum(u.iodepth_level) or 1
        levels = ", ".join(f"{k}={100.0 * v / depth_total:.1f}%" for k, v in
                           zip(["1", "2", "4", "8", "16", "32", ">=64"], u.iodepth_level))
        out.append(f"  IO depths    : {levels}")
        out.append("")
    groups = sorted({u.group_id for u in r.units})
    for g in groups:
        members = [u for u in r.units if u.group_id == g]
        out.append(f"Run status group {g} (all jobs):")
        for d in ("read", "write", "trim"):
            total = sum(u.dirs[d].bytes for u in members)
            if not total:
                continue
            runtime = max(u.runtime_ns for u in members)
            bw = total / (runtime / 1e9) if runtime else 0.0
            out.append(f"  {d.upper():>5}: bw={format_bytes(bw)}/s ({format_bytes(bw, False)}/s), "
                       f"io={format_bytes(total)} ({format_bytes(total, False)}), run={runtime / 1e6:.0f}msec")
    out.append("")
    out.append("Disk stats (read/write):")
    for u in r.to_fio_json()["disk_util"]:
        line = (f"  {u['name']}: ios={u['read_ios']}/{u['write_ios']}, "
                f"merge={u['read_merges']}/{u['write_merges']}, ticks={u['read_ticks']}/{u['write_ticks']}, "
                f"in_queue={u['in_queue']}, util={u['util']:.2f}%")
        if "aggr_util" in u:
            line += (f", aggrios={u['aggr_read_ios']}/{u['aggr_write_ios']}, "
                     f"aggrmerge={u['aggr_read_merges']}/{u['aggr_write_merge']}, "
                     f"aggrticks={u['aggr_read_ticks']}/{u['aggr_write_ticks']}, "
                     f"aggrin_queue={u['aggr_in_queue']}, aggrutil={u['aggr_util']:.2f}%")
        out.append(line)
    out.append("")
    out.append(f"iostat -x over the run ({r.elapsed_ns / 1e9:.3f} s):")
    out.append(format_table([(n, r.iostat(n)) for n in r.all_device_names]))
    for name in r.all_device_names:
        i = r.internal(name)
        out.append("")
        if i["kind"] == "array":
            out.extend(_array_lines(name, i))
            continue
        out.append(f"Inside {name} ({i['profile']}; host {r.host_name}):")
        if i["kind"] == "hdd":
            out.extend(_hdd_lines(i))
            continue
        out.append(f"  internal utilisation (busy dies / dies): {100 * i['internal_utilization']:.1f}%   "
                   f"controller: {100 * i['controller_utilization']:.1f}%")
        chans = " ".join(f"{100 * c:.0f}" for c in i["channel_utilization"])
        out.append(f"  channel utilisation %: {chans}")
        waf = f"{i['waf']:.3f}" if i["waf"] is not None else "n/a"
        medium = "NAND" if i["kind"] == "nand-ssd" else "media"
        line = (f"  host written {format_bytes(i['host_bytes_written'])}, {medium} written "
                f"{format_bytes(i['nand_bytes_written'])}, WAF {waf}")
        if i["kind"] == "nand-ssd":
            line += f", erases {i['erase_count']}, GC runs {i['gc_runs']}"
        out.append(line)
        if i["temperature_c"] is not None:
            out.append(f"  temperature {i['temperature_c']:.1f} C (max {i['max_temperature_c']:.1f} C), "
                       f"throttled {i['throttled_s']:.1f} s in {i['throttle_events']} spell(s)")
    return "\n".join(out) + "\n"


def _hdd_lines(i: dict) -> list[str]:
    """Where a disk's head time went, and what its cache saved it."""
    lines = [f"  head busy {100 * i['internal_utilization']:.1f}%   controller: {100 * i['controller_utilization']:.1f}%"]
    if i["media_accesses"]:
        lines.append(f"  {i['media_accesses']} media accesses ({i['seeks']} with a seek): mean seek "
                     f"{i['mean_seek_ms']:.2f} ms, rotation {i['mean_rotation_ms']:.2f} ms, "
                     f"transfer {i['mean_transfer_ms']:.2f} ms")
    lines.append(f"  cache: {i['cache_read_hits']} read hits, {i['read_ahead_hits']} read-ahead hits; "
                 f"{i['cached_writes']} writes cached, {format_bytes(i['destaged_bytes'])} destaged, "
                 f"{format_bytes(i['dirty_bytes'])} still dirty")
    if i["starved_commands"]:
        lines.append(f"  {i['starved_commands']} commands forced by the NCQ starvation bound")
    return lines


def _array_lines(name: str, i: dict) -> list[str]:
    """What an array did: its level and members, stripe handling, and write amplification."""
    failed = f"; failed: {', '.join(i['failed'])}" if i["failed"] else ""
    lines = [f"Array {name} ({i['level']}, {format_bytes(i['chunk_bytes'])} chunk, {i['engine']}; "
             f"members {', '.join(i['members'])}{failed}):"]
    heads = i["stripe_heads"]
    if heads:
        lines.append(f"  stripe heads {heads}: read-modify-write {i['rmw_stripe_heads']}, "
                     f"reconstruct-write {i['rcw_stripe_heads']}, full stripe {i['full_stripe_heads']}; "
                     f"stripe threads busy {100 * i['controller_utilization']:.1f}%")
    if i["reconstructed_bytes"]:
        lines.append(f"  rebuilt on read from the other members: {format_bytes(i['reconstructed_bytes'])}")
    if i["host_bytes_written"]:
        lines.append(f"  host written {format_bytes(i['host_bytes_written'])}, members written "
                     f"{format_bytes(i['member_bytes_written'])} (x{i['raid_write_factor']:.2f}), "
                     f"NAND written {format_bytes(i['nand_bytes_written'])} (WAF through the stack "
                     f"{i['waf']:.3f})")
    return lines
