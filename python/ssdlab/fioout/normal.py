"""fio's "normal" text output, as fio prints it, followed by what fio does not print:
the queue depth each device saw, iostat -x tables and each device's insides.

The fio part follows fio's own layout line by line (``stat.c``'s show_thread_status_normal,
show_group_stats and show_disk_util, in the release of ``results.FIO_VERSION``), with the
numbers from :mod:`.view`."""

from __future__ import annotations

import os

from .numbers import ctime, is_power_of_2, now, num2str
from .view import (DEPTH_KEYS, DIRS, LAT_KEYS, LAT_MS_KEYS, SUBMIT_KEYS, FioGroup, FioUnit, build_view,
                   dist)
from ..iostat import format_table
from ..powercut import power_cut_lines
from ..results import FIO_VERSION, RunResult
from ..units import format_bytes


def _lat_unit(s) -> tuple[str, int]:
    """fio's unit for a min/max/avg/stdev line: usec only when the minimum is above 2 us, the
    maximum above 99.999 us and the deviation above 1 us; msec likewise a thousand times up."""
    if s.min > 2_000_000 and s.max > 99_999_999 and s.stddev > 1e6:
        return "msec", 1_000_000
    if s.min > 2_000 and s.max > 99_999 and s.stddev > 1e3:
        return "usec", 1_000
    return "nsec", 1


def _lat_line(label: str, s, indent: str = "    ") -> str:
    """fio's display_lat: min and max in at most six digits (num2str), then mean and stdev."""
    unit, div = _lat_unit(s)
    return (f"{indent}{label} ({unit}): min={num2str(int(s.min) // div, 6)}, max={num2str(int(s.max) // div, 6)}, "
            f"avg={s.mean / div:5.2f}, stdev={s.stddev / div:5.2f}")


def _percentile_block(res, plist: list[float], precision: int = 2, pre: str = "clat",
                      of: str = "clat") -> list[str]:
    """fio's percentile rows. The unit follows the smallest and the largest value shown (usec
    once the smallest is above 2 us and the largest above 99.999 us, msec a thousand times
    up), so a fast median never prints as 0; scaled values are rounded up, as fio does. Labels
    have as many decimals as the longest fraction written in ``percentile_list``."""
    pct = [(float(k), v) for k, v in res.percentiles(plist, of).items()]
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
    lines = [f"    {pre} percentiles ({unit}):"]
    for i in range(0, len(cells), per_line):
        lines.append("     |" + ",".join(cells[i:i + per_line]) + ("," if i + per_line < len(cells) else ""))
    return lines


def _ddir_lines(r: RunResult, fu: FioUnit, g: FioGroup, d: str) -> list[str]:
    """fio's show_ddir_status: the IOPS/BW line, latencies, percentiles, bw and iops samples."""
    fd = fu.dirs[d]
    i2p = is_power_of_2(g.kb_base)
    bw = fd.bw_bytes()
    if d == "mixed" and fu.unified == 2:
        # fio 3.33 prints the merged direction beside the others with neither its I/O nor
        # its units (its show_mixed_ddir_status sums neither); JSON and terse have them
        head = f"  mixed: IOPS=0, BW=0 (0)(0B/{fd.runtime_ms}msec)"
    else:
        head = (f"  {d}: IOPS={num2str(fd.iops_int())}, BW={num2str(bw, 4, 1, i2p, 'B/s')} "
                f"({num2str(bw, 4, 1, not i2p, 'B/s')})({num2str(fd.res.bytes, 4, 1, i2p, 'B')}/{fd.runtime_ms}msec)"
                # fio's zbd_write_status: zone resets on the write line (none here: no zoned devices)
                + ("; 0 zone resets" if d == "write" else ""))
    out = [head]
    for label, stat in (("slat", fu.slat(d)), ("clat", fu.clat(d)), (" lat", fu.lat(d))):
        if stat.n:
            out.append(_lat_line(label, stat))
    for kind in fu.percentile_kinds(d):
        out.extend(_percentile_block(fd.res, r.percentiles_list, r.percentile_precision, kind, kind))
    if fd.bw.n:
        s = fd.bw
        lo, hi, mean, dev = int(s.min), int(s.max), s.mean, s.stddev
        per = g.bw_share(fu.agg_dir(d), mean)
        unit = "KiB" if i2p else "kB"
        base = float(g.kb_base)
        if mean > base * base:
            lo, hi, mean, dev, unit = int(lo / base), int(hi / base), mean / base, dev / base, "MiB"
        out.append(f"   bw ({unit:>5s}/s): min={lo:5d}, max={hi:5d}, per={per:3.2f}%, avg={mean:5.2f}, "
                   f"stdev={dev:5.2f}, samples={s.n}")
    if fd.iops.n:
        s = fd.iops
        out.append(f"   iops        : min={int(s.min):5d}, max={int(s.max):5d}, avg={s.mean:5.2f}, "
                   f"stdev={s.stddev:5.2f}, samples={s.n}")
    return out


def _lat_dist_lines(values: list[float], ranges: list[str], unit: str) -> list[str]:
    """fio's show_lat: the non-empty buckets, five to a line."""
    shown = [f"{k}={v:3.2f}%" for k, v in zip(ranges, values) if v > 0]
    return [f"  lat ({unit})   : " + ", ".join(shown[i:i + 5]) for i in range(0, len(shown), 5)]


def _unit_lines(r: RunResult, fu: FioUnit, g: FioGroup, date: str) -> list[str]:
    """fio's show_thread_status_normal for one unit."""
    u = fu.unit
    out = [f"{u.name}: (groupid={u.group_id}, jobs={len(u.members)}): err={fu.error:2d}: pid={fu.pid}: {date}"]
    if fu.report.description:
        out.append(f"  Description  : [{fu.report.description}]")
    for d in fu.shown_dirs():
        if fu.dirs[d].res.bytes:
            out.extend(_ddir_lines(r, fu, g, d))
    lat_n, lat_u, lat_m = fu.latency_dist()
    out.extend(_lat_dist_lines(lat_n, [f"{k}" for k in LAT_KEYS], "nsec"))
    out.extend(_lat_dist_lines(lat_u, [f"{k}" for k in LAT_KEYS], "usec"))
    out.extend(_lat_dist_lines(lat_m, [f"{k}" for k in LAT_MS_KEYS] + [">=2000"], "msec"))
    if fu.sync_lat().n:  # fio prints sync's percentiles whatever the percentile options say
        out.append("  fsync/fdatasync/sync_file_range:")
        out.append(_lat_line("sync", fu.sync_lat()))
        out.extend(_percentile_block(u.sync, r.percentiles_list, r.percentile_precision, "sync"))
    out.append(f"  cpu          : usr={fu.usr_cpu:3.2f}%, sys={fu.sys_cpu:3.2f}%, ctx={fu.ctx}, "
               f"majf={fu.majf}, minf={fu.minf}")
    out.append("  IO depths    : " + ", ".join(f"{k}={v:3.1f}%" for k, v in zip(DEPTH_KEYS, fu.depth_dist())))
    out.append("     submit    : " + ", ".join(f"{k}={v:3.1f}%" for k, v in zip(SUBMIT_KEYS, dist(fu.submit))))
    out.append("     complete  : " + ", ".join(f"{k}={v:3.1f}%" for k, v in zip(SUBMIT_KEYS, dist(fu.complete))))
    t = fu.total_ios()
    if fu.unified == 1:  # fio counts the merged direction's I/Os as reads
        t = [sum(t[:3]), 0, 0, t[3]]
    out.append(f"     issued rwts: total={t[0]},{t[1]},{t[2]},{t[3]} short=0,0,0,0 dropped=0,0,0,0")
    rep = fu.report
    if rep.continue_on_error:
        out.append(f"     errors    : total={fu.total_errors()}, first_error={fu.error}/<{os.strerror(fu.error)}>")
    # fio 3.33 prints the target (ns) and the window (us) as plain integers
    out.append(f"     latency   : target={int(rep.latency_target_ns)}, window={int(rep.latency_window_us)}, "
               f"percentile={rep.latency_percentile:.2f}%, depth={fu.iodepth}")
    ss = r.core.get("steadystate", {}).get(str(u.members[0]))
    if ss is not None:
        out.append(_steadystate_line(ss, is_power_of_2(g.kb_base)))
    return out


def _steadystate_line(ss: dict, i2p: bool) -> str:
    """fio's show_ss_normal: the window's mean bandwidth and IOPS and the criterion."""
    crit, _, limit = ss["ss"].partition(":")
    bw = ss["data"]["bw_mean"]
    what = f"{'iops' if crit.startswith('iops') else 'bw'} {'slope' if crit.endswith('_slope') else 'mean dev'}"
    value = float(ss["criterion"].rstrip("%"))
    pct = "%" if limit.endswith("%") else ""
    return (f"  steadystate  : attained={'yes' if ss['attained'] else 'no'}, "
            f"bw={num2str(bw, 4, 1, i2p, 'B/s')} ({num2str(bw, 4, 1, not i2p, 'B/s')}), "
            f"iops={num2str(ss['data']['iops_mean'], 4, 1, False)}, {what}={value:.3f}{pct}")


def _group_lines(g: FioGroup) -> list[str]:
    """fio's show_group_stats."""
    i2p = is_power_of_2(g.kb_base)
    out = [f"Run status group {g.groupid} (all jobs):"]

    def two(n: int, unit: str) -> tuple[str, str]:
        return num2str(n, 4, 1, i2p, unit), num2str(n, 4, 1, not i2p, unit)

    def line(label: str, agg_bw: int, min_bw: int, max_bw: int, iobytes: int, min_run: int, max_run: int) -> str:
        agg, aggalt = two(agg_bw, "B/s")
        lo, loalt = two(min_bw, "B/s")
        hi, hialt = two(max_bw, "B/s")
        io, ioalt = two(iobytes, "B")
        return (f"{label}: bw={agg} ({aggalt}), {lo}-{hi} ({loalt}-{hialt}), io={io} ({ioalt}), "
                f"run={min_run}-{max_run}msec")

    if g.unified == 1:
        rows = [("mixed", "  MIXED")]
    else:
        rows = list(zip(DIRS, ("   READ", "  WRITE", "   TRIM")))
    shown = [d for d, _ in rows if g.max_run.get(d)]
    for d, label in rows:
        if d in shown:
            out.append(line(label, g.agg(d), g.min_bw[d], g.max_bw[d], g.iobytes[d], g.min_run[d], g.max_run[d]))
    if g.unified == 2 and shown:
        # fio's show_mixed_group_stats: the directions' rates added, their extremes
        out.append(line("  MIXED", sum(g.agg(d) for d in shown), min(g.min_bw[d] for d in shown),
                        max(g.max_bw[d] for d in shown), sum(g.iobytes[d] for d in shown),
                        min(g.min_run[d] for d in shown), max(g.max_run[d] for d in shown)))
    return out


def _disk_lines(r: RunResult) -> list[str]:
    """fio's print_disk_util for each device (an array with its members' averages)."""
    out = []
    for u in r.disk_util():
        line = ("    " if "aggr_util" in u else "  ") + (
            f"{u['name']}: ios={u['read_ios']}/{u['write_ios']}, "
            f"merge={u['read_merges']}/{u['write_merges']}, ticks={u['read_ticks']}/{u['write_ticks']}, "
            f"in_queue={u['in_queue']}, util={u['util']:3.2f}%")
        if "aggr_util" in u:
            line += (f", aggrios={u['aggr_read_ios']}/{u['aggr_write_ios']}, "
                     f"aggrmerge={u['aggr_read_merges']}/{u['aggr_write_merge']}, "
                     f"aggrticks={u['aggr_read_ticks']}/{u['aggr_write_ticks']}, "
                     f"aggrin_queue={u['aggr_in_queue']}, aggrutil={u['aggr_util']:3.2f}%")
        out.append(line)
    return out


def header_lines(r: RunResult) -> list[str]:
    """What fio prints before running: a line per job section (``...`` for its other
    clones), its version, and how many processes it starts."""
    out = []
    reports = list(getattr(r.spec, "job_reports", []) or [])
    jobs = r.spec.core["jobs"]
    threads = 0
    for i, job in enumerate(jobs):
        rep = reports[i] if i < len(reports) else None
        threads += bool(rep and rep.thread)
        if job["clone"] != 0:
            if i and jobs[i - 1]["clone"] == 0 and jobs[i - 1]["name"] == job["name"]:
                out.append("...")
            continue
        kb = rep.kb_base if rep else 1024
        i2p = is_power_of_2(kb)
        from .view import _block_sizes

        lengths = _block_sizes(job)
        if rep and rep.header_lengths:  # a replay: its trace's lengths where it sends any
            lengths = [traced if traced != (0, 0) else default for traced, default in zip(rep.header_lengths, lengths)]
        bs = [f"({k}) {num2str(lo, 4, 1, i2p, 'B')}-{num2str(hi, 4, 1, i2p, 'B')}"
              for k, (lo, hi) in zip("RWT", lengths)]
        rw = rep.header_rw if rep and rep.header_rw else job["rw"]
        out.append(f"{job['name']}: (g={job['group_id']}): rw={rw}, bs={', '.join(bs)}, "
                   f"ioengine={rep.ioengine if rep else 'psync'}, iodepth={job['iodepth']}")
    out.append(FIO_VERSION)
    procs = len(jobs) - threads
    parts = []
    if threads:
        parts.append(f"{threads} thread{'s' if threads > 1 else ''}")
    if procs:
        parts.append(f"{procs} process{'es' if procs > 1 else ''}")
    out.append("Starting " + " and ".join(parts))
    return out


def format_fio_normal(r: RunResult) -> str:
    """Exactly the part of the report fio itself prints."""
    units, groups = build_view(r)
    date = ctime(now())
    out = header_lines(r)
    out.append("")
    for fu in units:
        out.extend(_unit_lines(r, fu, groups[fu.unit.group_id], date))
    for gid in sorted(groups):
        out.append("")
        out.extend(_group_lines(groups[gid]))
    disks = _disk_lines(r)
    if disks:  # fio's show_disk_util prints nothing without a disk (the null engine opens none)
        out += ["", "Disk stats (read/write):", *disks]
    return "\n".join(out) + "\n"


def _device_depth_lines(r: RunResult) -> list[str]:
    """The queue depth each device saw (its mean requests in flight, from the area under its
    in-flight count), next to the depth its jobs asked for: fio's IO depths are the jobs'."""
    out = ["Device-side queue depth (ssdlab; fio's \"IO depths\" above are the jobs' own):"]
    elapsed = max(r.elapsed_ns, 1)
    jobs = r.spec.core["jobs"]
    for path, d, _, _ in r._walk():
        disk = d["disk"]
        mean = disk["in_flight_area_ns"] / elapsed
        asked = [f"{j['name']}.{j['clone']} {j['iodepth']}" for j in jobs
                 if len(path) == 1 and j.get("target", 0) == path[0]]
        out.append(f"  {d['name']}: mean in flight {mean:.2f}, aqu-sz {disk['time_in_queue_ms'] / (elapsed / 1e6):.2f}"
                   + (f"; jobs' iodepth: {', '.join(asked[:8])}{', ...' if len(asked) > 8 else ''}" if asked else ""))
    return out


def format_normal(r: RunResult) -> str:
    out = [format_fio_normal(r).rstrip("\n"), ""]
    out.extend(_device_depth_lines(r))
    out.append("")
    if r.core["samples"] and len(r.core["samples"]) > 1:
        for t0, t1, rows in r.iostat_intervals():
            out.append(f"iostat -x, {t0:.3f}-{t1:.3f} s:")
            out.append(format_table(rows))
            out.append("")
    out.append(f"iostat -x over the run ({r.elapsed_ns / 1e9:.3f} s):")
    out.append(format_table([(n, r.iostat(n)) for n in r.all_device_names]))
    for name in r.all_device_names:
        i = r.internal(name)
        out.append("")
        if i["kind"] == "array":
            out.extend(_array_lines(name, i))
            continue
        if i["kind"] == "remap":
            out.extend(_remap_lines(name, i))
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
    if "power_cut" in r.core:
        out.append("")
        out.extend(power_cut_lines(r.core["power_cut"]))
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


def _remap_lines(name: str, i: dict) -> list[str]:
    """What a remapping layer did: its buffer, its log on the drive, the cleaner, flushes."""
    flushes = (f"{i['flushes_ignored']} cache flushes acknowledged without reaching the drive"
               if not i["honor_flush"] else f"{i['flushes_done']} cache flushes passed on")
    factor = f"{i['remap_write_factor']:.2f}" if i["remap_write_factor"] is not None else "n/a"
    per_read = i["drive_reads"] / i["host_reads_from_drive"] if i["host_reads_from_drive"] else 0.0
    return [
        f"Remapping layer {name} (over {', '.join(i['members'])}; {format_bytes(i['buffer_bytes'])} buffer, "
        f"{format_bytes(i['segment_bytes'])} segments):",
        f"  host written {format_bytes(i['host_bytes_written'])}, absorbed in the buffer "
        f"{format_bytes(i['absorbed_bytes'])}; log writes {i['log_writes']} "
        f"({format_bytes(i['log_write_bytes'])}), drive writes per host write {factor}",
        f"  cleaner: {i['cleaned_segments']} segments, {format_bytes(i['cleaned_bytes'])} moved; "
        f"{i['write_waits']} writes waited for buffer room",
        f"  reads: {format_bytes(i['buffer_read_bytes'])} from the buffer; {i['host_reads_from_drive']} from the drive "
        f"in {per_read:.2f} drive reads each",
        f"  {flushes}; {format_bytes(i['buffered_bytes'])} acknowledged and still only in RAM at the end",
    ]


def _array_lines(name: str, i: dict) -> list[str]:
    """What an array did: its level and members, stripe handling, and write amplification."""
    failed = f"; failed: {', '.join(i['failed'])}" if i["failed"] else ""
    lines = [f"Array {name} ({i['level']}, {format_bytes(i['chunk_bytes'])} chunk, {i['engine']}; "
             f"members {', '.join(i['members'])}{failed}):"]
    heads = i["stripe_heads"]
    if heads:
        # Only md has a stripe cache; a hardware controller's stripes are handled by its processor.
        cached = (f"found whole in the stripe cache {i['stripe_cache_hits']}; "
                  f"writes joined to the one before {i['joined_writes']}; ") if i["engine"] == "md" else ""
        busy = "controller processor" if i["engine"] == "hwraid" else "stripe threads"
        lines.append(f"  stripe heads {heads}: read-modify-write {i['rmw_stripe_heads']}, "
                     f"reconstruct-write {i['rcw_stripe_heads']}, full stripe {i['full_stripe_heads']}; "
                     f"{cached}{busy} busy {100 * i['controller_utilization']:.1f}%")
    if i["bitmap_chunk_bytes"]:
        lines.append(f"  write-intent bitmap ({format_bytes(i['bitmap_chunk_bytes'])} chunks): "
                     f"{i['bitmap_bits_set']} bits set in {i['bitmap_updates']} updates "
                     f"({format_bytes(i['bitmap_write_bytes'])} written to the members), "
                     f"{i['bitmap_waits']} host writes held for one")
    if i["reconstructed_bytes"]:
        lines.append(f"  rebuilt on read from the other members: {format_bytes(i['reconstructed_bytes'])}")
    for rb in [*i.get("earlier_rebuilds", []), i] if i["rebuild_member"] is not None else []:
        state = (f"done at {rb['rebuild_finished_s']:.3f} s" if rb["rebuild_finished_s"] is not None
                 else f"{100 * rb['rebuild_progress']:.2f} % in sync at the end of the run")
        rate = f", {format_bytes(rb['rebuild_rate_bytes'])}/s" if rb["rebuild_rate_bytes"] is not None else ""
        if rb["rebuild_with"]:
            state += f", in one pass with {', '.join(rb['rebuild_with'])}"
        if rb["rebuild_restarts"]:
            times = "once" if rb["rebuild_restarts"] == 1 else f"{rb['rebuild_restarts']} times"
            state += f" (restarted {times} by a later failure)"
        lines.append(f"  rebuild onto {rb['rebuild_member']} (replacing {rb['rebuild_replaces']}) from "
                     f"{rb['rebuild_started_s']:.3f} s: {format_bytes(rb['rebuild_done_bytes'])} of "
                     f"{format_bytes(rb['rebuild_target_bytes'])}{rate}, {state}; yielded to other I/O "
                     f"{rb['rebuild_busy_waits']} times, slept over its speed limit {rb['rebuild_overspeed_sleeps']}"
                     + (f", slept a jiffy after waiting for stripe heads {rb['rebuild_head_wait_sleeps']}"
                        if rb["rebuild_head_wait_sleeps"] else ""))
    if i["destaged_bytes"] or i["cache_read_hits"] or i["cache_dirty_bytes"]:
        lines.append(f"  controller cache: {i['cache_read_hits']} read hits, {format_bytes(i['destaged_bytes'])} "
                     f"destaged, {format_bytes(i['cache_dirty_bytes'])} still dirty, {i['cache_write_waits']} "
                     f"host writes waited for space")
    if i["verified_bytes"] or i["data_errors"]:
        first = f" (first: {i['first_data_error']})" if i["first_data_error"] else ""
        lines.append(f"  data verified: {format_bytes(i['verified_bytes'])} read back, "
                     f"{i['data_errors']} errors{first}")
    if i["host_bytes_written"]:
        lines.append(f"  host written {format_bytes(i['host_bytes_written'])}, members written "
                     f"{format_bytes(i['member_bytes_written'])} (x{i['raid_write_factor']:.2f}), "
                     f"NAND written {format_bytes(i['nand_bytes_written'])} (WAF through the stack "
                     f"{i['waf']:.3f})")
    return lines
