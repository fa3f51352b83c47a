"""fio's JSON output (``--output-format=json`` and ``json+``) of a simulated run: each
reporting unit's and group's numbers from :mod:`.view`, keys in fio's order (``stat.c``'s
show_thread_status_json and add_ddir_status_json, in the release of
``results.FIO_VERSION``), and ssdlab's own ``ssdlab`` section: the devices' insides, iostat,
warnings and the time series. json+ adds each latency histogram's bins."""

from __future__ import annotations

import time
from typing import Any

from ..jsonout import finite
from ..results import FIO_VERSION, DirResult, LatSummary, RunResult, _flat_internal
from .numbers import now as wall_now
from .view import DEPTH_KEYS, LAT_KEYS, LAT_MS_KEYS, SUBMIT_KEYS, build_view, dist


def _lat_json(summary: LatSummary, res: DirResult | None, plist: list[float], plus: bool,
              of: str = "clat") -> dict[str, Any]:
    """fio's latency object: min, max, mean, stddev, N; with the percentiles of ``of``'s
    histogram in ``res`` (and, for json+, its bins: fio's bucket value in ns -> count) where
    ``res`` is given (the latency's percentile option is on) and there are samples."""
    out = summary.to_fio()
    if res is not None and summary.n:
        out["percentile"] = res.percentiles(plist, of)
        if plus:
            hist = {"clat": res.hist, "slat": res.slat_hist, "lat": res.lat_hist}[of]
            out["bins"] = {str(v): c for v, c in sorted(hist.items()) if c}
    return out


def _dir_json(fu, g, d: str, plist: list[float], plus: bool) -> dict[str, Any]:
    """One direction as fio's add_ddir_status_json writes it."""
    fd = fu.dirs[d]
    r = fd.res
    bw_bytes = fd.bw_bytes()
    kinds = fu.percentile_kinds(d)
    out: dict[str, Any] = {
        "io_bytes": r.bytes, "io_kbytes": r.bytes >> 10, "bw_bytes": bw_bytes, "bw": bw_bytes // 1024,
        "iops": fd.iops_float(), "runtime": fd.runtime_ms, "total_ios": r.ios, "short_ios": 0, "drop_ios": 0,
        **{f"{kind}_ns": _lat_json(stat, r if kind in kinds else None, plist, plus, kind)
           for kind, stat in (("slat", fu.slat(d)), ("clat", fu.clat(d)), ("lat", fu.lat(d)))},
    }
    bw, iops = fd.bw, fd.iops
    out.update({
        "bw_min": int(bw.min), "bw_max": int(bw.max),
        "bw_agg": g.bw_share(fu.agg_dir(d), bw.mean) if bw.n else 0.0,
        "bw_mean": bw.mean, "bw_dev": bw.stddev, "bw_samples": bw.n,
        "iops_min": int(iops.min), "iops_max": int(iops.max), "iops_mean": iops.mean,
        "iops_stddev": iops.stddev, "iops_samples": iops.n,
    })
    return out


def _sync_json(fu, plist: list[float], plus: bool) -> dict[str, Any]:
    """fio's sync object: percentiles when clat's or lat's percentile option is on."""
    pct = (fu.report.clat_percentiles and not fu.report.disable_clat) or \
        (fu.report.lat_percentiles and not fu.report.disable_lat)
    return {"total_ios": fu.unit.sync.ios, "lat_ns": _lat_json(fu.sync_lat(), fu.unit.sync if pct else None, plist, plus)}


def fio_json(result: RunResult, plus: bool = False) -> dict[str, Any]:
    """fio's JSON output of ``result`` (``plus``: json+); non-finite numbers are null."""
    now = wall_now()
    units, groups = build_view(result)
    plist = result.percentiles_list
    jobs = []
    for fu in units:
        u = fu.unit
        g = groups[u.group_id]
        job: dict[str, Any] = {
            "jobname": u.name, "groupid": u.group_id, "error": fu.error,
            "eta": 0, "elapsed": int(round(result.elapsed_ns / 1e9)),
        }
        if u.options:
            job["job options"] = u.options
        for d in fu.shown_dirs():
            if d == "mixed" and fu.unified == 2:  # after sync, as fio adds it
                job["sync"] = _sync_json(fu, plist, plus)
            job[d] = _dir_json(fu, g, d, plist, plus)
        if fu.unified == 0:  # merged alone, fio writes no sync either
            job["sync"] = _sync_json(fu, plist, plus)
        lat_n, lat_u, lat_m = fu.latency_dist()
        rep = fu.report
        job.update({
            "job_runtime": fu.total_run_ms,
            "usr_cpu": fu.usr_cpu, "sys_cpu": fu.sys_cpu, "ctx": fu.ctx, "majf": fu.majf, "minf": fu.minf,
            "iodepth_level": dict(zip(DEPTH_KEYS, fu.depth_dist())),
            "iodepth_submit": dict(zip(SUBMIT_KEYS, dist(fu.submit))),
            "iodepth_complete": dict(zip(SUBMIT_KEYS, dist(fu.complete))),
            "latency_ns": dict(zip(map(str, LAT_KEYS), lat_n)),
            "latency_us": dict(zip(map(str, LAT_KEYS), lat_u)),
            "latency_ms": dict(zip([*map(str, LAT_MS_KEYS), ">=2000"], lat_m)),
        })
        if rep.continue_on_error:  # fio writes these only then
            job.update({"total_err": fu.total_errors(), "first_error": fu.error})
        job.update({
            "latency_depth": fu.iodepth,
            "latency_target": rep.latency_target_ns,
            "latency_percentile": rep.latency_percentile,
            "latency_window": rep.latency_window_us,
        })
        ss = result.core.get("steadystate", {}).get(str(u.members[0]))
        if ss is not None:
            job["steadystate"] = ss
        if rep.description:
            job["desc"] = rep.description
        jobs.append(job)
    disk_util = result.disk_util()
    ssdlab: dict[str, Any] = {
        "profile": result.profile_name,
        "host": result.host_name,
        "seed": result.core["seed"],
        "scale": result.scale,
        "sim_time_s": result.elapsed_ns / 1e9,
        "events": result.core["events"],
        "devices": [{**_flat_internal(d, result.elapsed_ns, info), "scheduler": d["scheduler"],
                     "scale": info.scale, "capacity_bytes": d["capacity_bytes"],
                     "mean_in_flight": d["disk"]["in_flight_area_ns"] / max(result.elapsed_ns, 1),
                     **({"array": parent} if parent else {})}
                    for _, d, info, parent in result._walk()],
        "iostat": [{"name": n, **result.iostat(n)} for n in result.all_device_names],
        "warnings": result.warnings,
    }
    if result.core["samples"]:
        ssdlab["timeseries"] = result.timeseries()
    if "power_cut" in result.core:
        ssdlab["power_cut"] = result.core["power_cut"]
    out: dict[str, Any] = {
        "fio version": FIO_VERSION,
        "timestamp": int(now),
        "timestamp_ms": int(now * 1000),
        "time": time.ctime(now),
    }
    if result.global_options:
        out["global options"] = result.global_options
    # fio writes "disk_util" only when its jobs opened a disk (a null-engine run opens none).
    out.update({"jobs": jobs, **({"disk_util": disk_util} if disk_util else {}), "ssdlab": ssdlab})
    return finite(out)
